#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-kernel-refusals.sh — kernel refusals (docs/sandbox.md "Kernel refusals"): a real box
# whose agent calls mount(2) three times, unshare(CLONE_NEWUSER) and
# unshare(CLONE_NEWNS) still gets EPERM for each, exactly as before; its PID 1
# reports them to boxd, which writes STATE/kernel.jsonl: `boxctl log --kernel NAME`
# lists the mount and unshare refusals, the first of each kind at once and the two
# mount repeats counted in one line; `--json` gives the raw lines; a telemetry file
# target with include = kernel gets box.kernel.refusal records for both, one with
# include = deny none. The compatibility answers (clone3, openat2: ENOSYS) are not
# reported, nor libseccomp's probe of the listener flag. A running agent's repeats are
# counted within the 10 s window, not only at its exit. As boxtest (root only) the same
# box writes a kernel.jsonl of the owner's.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
set -u

cd "$W"
B=$RB/boxctl
mkdir proj
chmod 755 proj
printf '@id("all")\npermit (principal, action, resource);\n' >policy.cedar
cat >proj/agent.py <<'EOF'
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
def res(r):
    return "ok" if r == 0 else errno.errorcode.get(ctypes.get_errno(), "?")
for i in range(3):
    print("mount", res(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)))
print("unshare-U", res(libc.unshare(0x10000000)))
print("unshare-m", res(libc.unshare(0x00020000)))
print("clone3", res(libc.syscall(435, None, 0)))
print("openat2", res(libc.syscall(437, -100, b"/", None, 0)))
EOF
chmod 644 policy.cedar proj/agent.py

# ini NAME: a box.ini for box NAME with two telemetry file targets.
ini() {
	printf '[box]\nname = %s\npolicy = %s/policy.cedar\n\n[agent]\ncommand = /usr/bin/python3 agent.py\nworkspace = %s/proj\n\n[agent.filesystem]\nread = %s/proj\n\n[telemetry.k]\nkind = file\ndestination = %s/%s-k.jsonl\ninclude = kernel\n\n[telemetry.d]\nkind = file\ndestination = %s/%s-d.jsonl\ninclude = deny\n' \
		"$1" "$W" "$W" "$W" "$W" "$1" "$W" "$1" >"$W/$1.ini"
	chmod 644 "$W/$1.ini"
}

# wait_line FILE PATTERN: until FILE has a line matching PATTERN (boxd writes the last
# reports as the sandbox ends), at most 30 s — only a hang reaches that.
wait_line() {
	local i
	for i in $(seq 1 300); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

name=kref-$$
ini "$name"
"$B" run -c "$W/$name.ini" >run.out 2>run.err
rc=$?
check "the box runs to its end (rc $rc)" test "$rc" -eq 0
[ "$rc" -eq 0 ] || diag "$(tail -n 15 run.err)"
check "the agent's three mounts get EPERM, as before" test "$(grep -c '^mount EPERM$' run.out)" -eq 3
check "unshare(CLONE_NEWUSER) gets EPERM" grep -qx 'unshare-U EPERM' run.out
check "unshare(CLONE_NEWNS) gets EPERM" grep -qx 'unshare-m EPERM' run.out
check "clone3 gets ENOSYS (glibc falls back)" grep -qx 'clone3 ENOSYS' run.out
check "openat2 gets ENOSYS" grep -qx 'openat2 ENOSYS' run.out

kj=$W/state/box/$name/kernel.jsonl
check "boxd wrote kernel.jsonl" wait_line "$kj" '"syscall":"mount".*"count":2'
"$B" log --kernel "$name" >klog.out 2>klog.err
check "log --kernel exits 0" test $? -eq 0
check "log --kernel: the first mount refusal at once" \
	grep -Eq '^[0-9TZ:.-]+ agent mount EPERM 1 \(first\)$' klog.out
check "log --kernel: the two repeated mounts counted in one line" \
	grep -Eq '^[0-9TZ:.-]+ agent mount EPERM 2$' klog.out
check "log --kernel: the unshare refusal" grep -Eq '^[0-9TZ:.-]+ agent unshare EPERM 1 \(first\)$' klog.out
check "log --kernel: clone3 and openat2 (compatibility answers) are not reported" \
	sh -c "! grep -Eq ' (clone3|openat2) ' klog.out"
check "log --kernel: libseccomp's probe of the listener flag (box-shell's) is not reported" \
	sh -c "! grep -q ' seccomp ' klog.out"
check "log --kernel: no more than one first line per kind" \
	test "$(grep -c ' agent mount EPERM 1 (first)$' klog.out)" -eq 1
cat klog.out
"$B" log --kernel "$name" --json >kjson.out 2>&1
check "log --kernel --json: raw lines with the box's name and the count" \
	grep -q "\"box\":\"$name\".*\"kernel\":\"refusal\",\"sandbox\":\"agent\",\"syscall\":\"mount\",\"nr\":165,\"errno\":\"EPERM\",\"count\":1,\"first\":true" kjson.out
check "the unshare repeat (CLONE_NEWNS after CLONE_NEWUSER) is counted" \
	wait_line "$kj" '"syscall":"unshare".*"count":1}'
check "kernel.jsonl is mode 0600" test "$(stat -c %a "$kj")" = 600

# telemetry: the kernel target's records (OTLP-JSON), the deny target none.
records() {
	python3 - "$1" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    for rl in json.loads(line)["resourceLogs"]:
        for sl in rl["scopeLogs"]:
            for r in sl["logRecords"]:
                a = {x["key"]: x["value"].get("stringValue") for x in r["attributes"]}
                if r["eventName"] == "box.kernel.refusal":
                    print(r["eventName"], r["severityText"], a["box.kernel.sandbox"],
                          a["box.kernel.syscall"], a["box.kernel.errno"], a["box.kernel.count"],
                          a["box.kernel.first"])
                else:
                    print(r["eventName"])
EOF
}
records "$W/$name-k.jsonl" >tel-k.out 2>&1
check "telemetry include = kernel: the mount refusal" \
	grep -qx 'box.kernel.refusal WARN agent mount EPERM 1 true' tel-k.out
check "telemetry include = kernel: the unshare refusal" \
	grep -qx 'box.kernel.refusal WARN agent unshare EPERM 1 true' tel-k.out
check "telemetry include = kernel: nothing but kernel records" \
	sh -c "! grep -v '^box.kernel.refusal ' tel-k.out"
records "$W/$name-d.jsonl" >tel-d.out 2>&1
check "telemetry include = deny: no kernel record" sh -c "! grep -q kernel tel-d.out"

# The window: an agent that refuses mount three times and then waits (for the file
# the test makes once it saw the count) gets its repeats reported while it runs.
cat >proj/window.py <<'EOF'
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
for i in range(3):
    libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)
for i in range(600):
    if os.path.exists("go"):
        break
    time.sleep(0.1)
print("window-agent-done")
EOF
chmod 644 proj/window.py
wname=kwin-$$
ini "$wname"
sed -i 's/agent.py/window.py/' "$W/$wname.ini"
"$B" run -c "$W/$wname.ini" >wrun.out 2>wrun.err &
wpid=$!
_run_pids+=("$wpid")
wkj=$W/state/box/$wname/kernel.jsonl
check "window: the first mount at once" wait_line "$wkj" '"syscall":"mount".*"first":true'
check "window: the two repeats counted within the window, while the agent runs" \
	wait_line "$wkj" '"syscall":"mount".*"count":2}'
check "window: the agent was still running then" sh -c "! grep -q window-agent-done wrun.out"
touch proj/go
wait "$wpid"
check "window: the agent ended (rc $?)" grep -q window-agent-done wrun.out

if [ "$(id -u)" -eq 0 ] && have_boxtest; then
	bname=krefu-$$
	ini "$bname"
	mkdir bstate
	touch "$bname-k.jsonl" "$bname-d.jsonl"
	chmod 600 "$bname-k.jsonl" "$bname-d.jsonl"
	chown boxtest: proj proj/agent.py bstate "$bname-k.jsonl" "$bname-d.jsonl"
	as_boxtest "XDG_STATE_HOME='$W/bstate' '$B' run -c '$W/$bname.ini'" >brun.out 2>brun.err
	rc=$?
	check "boxtest: the box runs to its end (rc $rc)" test "$rc" -eq 0
	[ "$rc" -eq 0 ] || diag "$(tail -n 15 brun.err)"
	check "boxtest: mount gets EPERM" test "$(grep -c '^mount EPERM$' brun.out)" -eq 3
	bkj=$W/bstate/box/$bname/kernel.jsonl
	check "boxtest: kernel.jsonl holds the mount refusal" wait_line "$bkj" '"syscall":"mount"'
	check "boxtest: kernel.jsonl is the owner's" test "$(stat -c %U "$bkj")" = boxtest
	as_boxtest "XDG_STATE_HOME='$W/bstate' '$B' log --kernel '$bname'" >blog.out 2>&1
	check "boxtest: log --kernel lists the unshare refusal" grep -q ' agent unshare EPERM 1 (first)$' blog.out
else
	skip "as boxtest" "needs root and the boxtest user"
fi
tap_done
