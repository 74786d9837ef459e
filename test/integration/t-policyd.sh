#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-policyd.sh — boxd starts box-policyd for every box (docs/design.md):
# a child of boxd with the expected uid (boxd's own embedded; the daemon
# user, box-policy else box-daemon else nobody, in service mode), STATE/policy/ 0700 owned
# by that uid, decisions.jsonl made; a temporal policy starts (its history
# appears under policy/); a corrupt history refuses the next run (exit 1,
# policyd's message); policyd SIGKILLed while the agent runs stops the box
# (exit 1, an error); no policyd outlives its box; decisions.jsonl rotates
# at 64 MiB; `boxctl log` of a running box gets its log from boxd (a custom
# state_dir, -f, a symlink refused).
. test/lib.sh
. test/integration/lib-run.sh
set -u

cd "$W"
mkdir proj
chmod 755 proj

# policyd_pids: the box-policyd processes of this test's binaries.
policyd_pids() { daemon_pids box-policyd; }
# wait_policyd: up to 10 s for one to show up; prints its pid.
wait_policyd() {
	local p
	for _ in $(seq 100); do
		p=$(policyd_pids | head -1)
		[ -n "$p" ] && { echo "$p"; return 0; }
		sleep 0.1
	done
	return 1
}
no_policyd() {
	for _ in $(seq 50); do
		[ -z "$(policyd_pids)" ] && return 0
		sleep 0.1
	done
	return 1
}
parent_is_boxd() { [ "$(readlink "/proc/$(ps -o ppid= -p "$1" | tr -d ' ')/exe")" = "$RB/boxd" ]; }
uid_of() { ps -o uid= -p "$1" | tr -d ' '; }

# mkini NAME COMMAND [POLICYFILE]
mkini() {
	{
		printf '[box]\nname = %s\n' "$1"
		[ -n "${3:-}" ] && printf 'policy = %s\n' "$3"
		printf '\n[agent]\ncommand = %s\nworkspace = %s/proj\n' "$2" "$W"
	} >"$1.ini"
	chmod 644 "$1.ini"
}

echo 'permit (principal, action, resource);' >plain.cedar
cat >temporal.cedar <<'EOF'
@id("fs_ok")
permit (principal, action in [Box::Action::"fs:write", Box::Action::"fs:read"], resource);
@id("write_budget")
forbid (principal, action == Box::Action::"fs:write", resource)
when temporal {
    exists (total: Long). (
        (count for (t: Timepoint). where (
            formerly within 60s (
                Box::Action::"fs:write"::response{ input.path: _ } && tp(t)
            )
        )) == total
        && total >= 6
    )
};
EOF
chmod 644 plain.cedar temporal.cedar

# --- a running box (embedded, as root) ---------------------------------------
mkini pa "/bin/sleep 60" plain.cedar
id=$("$RB/boxctl" run -q -c pa.ini --detach 2>err)
check "detach: the box starts" grep -qxE "[0-9a-f]{12}" <<<"$id"
pd=$(wait_policyd)
check "a box-policyd runs for the box" test -n "$pd"
if [ -n "$pd" ]; then
	check "box-policyd's parent is boxd" parent_is_boxd "$pd"
	check "box-policyd runs as boxd's uid (embedded: $(id -u))" test "$(uid_of "$pd")" = "$(id -u)"
	check "box-policyd's stdin and stdout are /dev/null" \
		test "$(readlink "/proc/$pd/fd/0")$(readlink "/proc/$pd/fd/1")" = /dev/null/dev/null
	check "box-policyd's stderr: agent.log (a detached embedded box)" \
		test "$(readlink "/proc/$pd/fd/2")" = "$W/state/box/pa/agent.log"
	# fd 3 is boxd's channel (and its copy: the sealed log head goes out on it after
	# boxd half-closed fd 3), fd 4 box-gateway's, fd 6 box-shell's, and one channel
	# box-shell's spare (the next invocation's child, forked ahead) attached (no command
	# runs, so box-shell has attached no more); no other socket of boxd's (clients, other
	# boxes) leaks in
	nsock() { for f in /proc/$pd/fd/*; do readlink "$f"; done | grep -c '^socket:'; }
	for _ in $(seq 50); do [ "$(nsock)" -ge 5 ] && break; sleep 0.1; done
	check "box-policyd holds five sockets: fd 3 (boxd) and its copy, fd 4 (box-gateway), fd 6 (box-shell), box-shell's spare's" \
		test "$(nsock)" = 5 -a \
		"$(readlink "/proc/$pd/fd/3" | cut -c1-7)" = socket: -a \
		"$(readlink "/proc/$pd/fd/4" | cut -c1-7)" = socket: -a \
		"$(readlink "/proc/$pd/fd/6" | cut -c1-7)" = socket:
	check "box-policyd's environment holds nothing of ours" \
		test "$(tr '\0' '\n' <"/proc/$pd/environ" | grep -cvE '^(ASAN_OPTIONS|BOX_TEST_CLOCK)=')" = 0
fi
S="$W/state/box/pa"
check "STATE/policy/ is a directory, mode 700" test "$(stat -c %F:%a "$S/policy")" = "directory:700"
check "STATE/policy/ is owned by policyd's uid" test "$(stat -c %u "$S/policy")" = "$(id -u)"
check "STATE/decisions.jsonl exists" test -f "$S/decisions.jsonl"
# rotation at 64 MiB: a sparse 64 MiB file stands in for a full log
truncate -s 64M "$S/decisions.jsonl"
for _ in $(seq 50); do [ -e "$S/decisions.jsonl.1" ] && break; sleep 0.1; done
check "rotation: decisions.jsonl.1 is the 64 MiB file" test "$(stat -c %s "$S/decisions.jsonl.1" 2>/dev/null)" = 67108864
check "rotation: a new, empty decisions.jsonl, the owner's, 600" \
	test "$(stat -c %s:%u:%a "$S/decisions.jsonl")" = "0:$(id -u):600"
# policyd_fds_to FILE: how many of policyd's fds are FILE
policyd_fds_to() { for f in /proc/"${pd:-1}"/fd/*; do readlink "$f"; done 2>/dev/null | grep -cx "$1"; }
for _ in $(seq 30); do [ "$(policyd_fds_to "$S/decisions.jsonl.1")" = 0 ] && break; sleep 0.1; done
check "rotation: policyd writes the new file, not the old one" \
	test "$(policyd_fds_to "$S/decisions.jsonl")" = 1 -a "$(policyd_fds_to "$S/decisions.jsonl.1")" = 0
check "rotation: policyd runs on" kill -0 "${pd:-1}"
"$RB/boxctl" stop "$id" >/dev/null 2>&1
check "stop: no box-policyd remains" no_policyd

# --- boxctl log asks the boxd that runs the box: a custom state_dir is found by name --
mkdir -m 700 "$W/custom"
{
	printf '[box]\nname = lg\npolicy = plain.cedar\nstate_dir = %s/custom/lg\n' "$W"
	printf '\n[agent]\ncommand = /bin/sleep 60\nworkspace = %s/proj\n' "$W"
} >lg.ini
lid=$("$RB/boxctl" run -q -c lg.ini --detach 2>lerr)
check "log: the box with a custom state_dir starts" grep -qxE "[0-9a-f]{12}" <<<"$lid"
LS="$W/custom/lg"
for _ in $(seq 50); do [ -f "$LS/decisions.jsonl" ] && break; sleep 0.1; done
line() { # line SECOND RESOURCE
	printf '{"time":"2026-01-02T03:04:%s.000Z","box":"lg","id":"%s","action":"fs:read","resource":"%s","verdict":"permit","cause":"permitted","rules":["r"],"message":"m","source":"box-shell","input":{}}\n' "$1" "$lid" "$2"
}
line 05 "~/one" >>"$LS/decisions.jsonl"
out=$("$RB/boxctl" log lg 2>&1)
check "log NAME of a running box: boxd hands over its custom state dir's log" \
	test "$out" = "2026-01-02T03:04:05.000Z permit fs:read ~/one r"
out=$("$RB/boxctl" log "$lid" 2>&1)
check "log ID of a running box: that run's lines" \
	test "$out" = "2026-01-02T03:04:05.000Z permit fs:read ~/one r"
"$RB/boxctl" log -f lg >follow.out 2>&1 &
fp=$!
sleep 0.5
line 06 "~/two" >>"$LS/decisions.jsonl"
sleep 0.6
kill -INT "$fp" 2>/dev/null
wait "$fp"
check "log -f of a running box: what is there, then what comes" \
	test "$(cut -d' ' -f4 follow.out | tr '\n' ' ')" = "~/one ~/two "
# A name swapped for a symlink is not followed by boxd (it may be root).
mv "$LS/decisions.jsonl" "$LS/saved.jsonl"
ln -s /etc/shadow "$LS/decisions.jsonl"
"$RB/boxctl" log lg >/dev/null 2>lerr
rc=$?
check "log: a symlinked decisions.jsonl is refused (exit 1)" test "$rc" = 1
check "log: … with boxd's reason" grep -q "^boxctl: error: log lg: cannot open the decision log" lerr
rm -f "$LS/decisions.jsonl"
mv "$LS/saved.jsonl" "$LS/decisions.jsonl"
"$RB/boxctl" stop "$lid" >/dev/null 2>&1
check "log: the box stops" no_policyd
# Ended: no boxd knows it; ./box.ini (what run reads without -c) says where its state is.
"$RB/boxctl" log lg >/dev/null 2>lerr
rc=$?
check "log of an ended box with a custom state_dir, no box.ini here: exit 1" test "$rc" = 1
cp lg.ini box.ini
out=$("$RB/boxctl" log lg 2>&1)
check "log of an ended box with a custom state_dir: found through ./box.ini" \
	test "$(cut -d' ' -f4 <<<"$out" | tr '\n' ' ')" = "~/one ~/two "
rm -f box.ini

# --- a temporal policy ----------------------------------------------------------
mkini tp "/bin/true" temporal.cedar
"$RB/boxctl" run -q -c tp.ini >/dev/null 2>err
rc=$?
if grep -q "temporal monitor" err; then
	skip "temporal policy: the box starts" "box-policyd has no temporal monitor"
else
	check "temporal policy: the box starts and exits 0" test "$rc" = 0
	check "temporal policy: the history is in STATE/policy/" test -f "$W/state/box/tp/policy/history"
	check "after the box: no box-policyd remains" no_policyd
	# a corrupt history refuses the next start with policyd's message
	printf 'this is not a box history file, it is garbage\n%.0s' 1 2 3 4 5 6 7 8 \
		>"$W/state/box/tp/policy/history"
	"$RB/boxctl" run -q -c tp.ini >/dev/null 2>err
	rc=$?
	check "corrupt history: exit 1" test "$rc" = 1
	check "corrupt history: boxctl: error: <policyd's message>" \
		grep -q "^boxctl: error: .*history 'policy/history' cannot be used" err
	grep -q "^boxctl: error: .*history 'policy/history' cannot be used" err ||
		sed 's/^/#   boxctl said: /' err
	check "corrupt history: no box-policyd remains" no_policyd
fi

# --- policyd dies while the agent runs: fail closed --------------------------------
mkini pk "/bin/sleep 30.$$" plain.cedar
"$RB/boxctl" run -q -c pk.ini >/dev/null 2>kerr &
bp=$!
_run_pids+=("$bp")
pd=$(wait_policyd)
check "kill: policyd runs" test -n "$pd"
# While the agent runs (not while policyd still starts: that is a refused start).
for _ in $(seq 100); do
	"$RB/boxctl" ps 2>/dev/null | grep -qP '^pk\t[0-9a-f]+\trunning\t' && break
	sleep 0.1
done
check "kill: the box runs" bash -c "'$RB/boxctl' ps | grep -qP '^pk\t[0-9a-f]+\trunning\t'"
[ -n "$pd" ] && kill -KILL "$pd"
for _ in $(seq 600); do kill -0 "$bp" 2>/dev/null || break; sleep 0.1; done
check "kill: the box stops (within 60 s: only a hang takes that long)" bash -c "! kill -0 $bp 2>/dev/null"
wait "$bp"
rc=$?
check "kill: boxctl exits 1" test "$rc" = 1
check "kill: boxctl: error: box-policyd …" grep -q "^boxctl: error: box-policyd .*stopped" kerr
grep -q "^boxctl: error: box-policyd .*stopped" kerr || diag "boxctl said:" "$(cat kerr)"
check "kill: the agent is gone" no_process "/bin/sleep 30.$$"
check "kill: no box-policyd remains" no_policyd

# --- an ordinary user's embedded box ---------------------------------------------------
if have_boxtest; then
	bt_uid=$(id -u boxtest)
	out=$(as_boxtest "'$RB/boxctl' run -q -c pa.ini --detach" 2>uerr)
	check "boxtest: the box starts" grep -qxE "[0-9a-f]{12}" <<<"$out"
	pd=$(wait_policyd)
	check "boxtest: box-policyd runs as boxtest" test -n "$pd" -a "$(uid_of "${pd:-1}")" = "$bt_uid"
	bh=$(getent passwd boxtest | cut -d: -f6)
	check "boxtest: STATE/policy/ is boxtest's, 700" \
		test "$(stat -c %u:%a "$bh/.local/state/box/pa/policy")" = "$bt_uid:700"
	as_boxtest "'$RB/boxctl' stop '$out'" >/dev/null 2>&1
	check "boxtest: no box-policyd remains" no_policyd
	rm -rf "$bh/.local/state/box/pa"
else
	skip "boxtest: embedded box" "no boxtest user"
fi

# --- service mode (root): policyd runs as the daemon user ------------------------------
if [ "$(id -u)" -ne 0 ]; then
	skip "service: policyd as the daemon user" "needs root"
	tap_done
	exit $?
fi
du=$(daemon_user box-policy)
duid=$(id -u "$du")
export BOX_SOCKET="$W/boxd.sock"
"$RB/boxd" --listen "$BOX_SOCKET" 2>boxd.log &
sp=$!
_run_pids+=("$sp")
for _ in $(seq 50); do [ -S "$BOX_SOCKET" ] && break; sleep 0.1; done
mkini svc-pd "/bin/sleep 60" plain.cedar
rm -rf /var/lib/box/0/svc-pd
for round in 1 2; do
	sid=$("$RB/boxctl" run -q -c svc-pd.ini --detach 2>serr)
	check "service (run $round): the box starts" grep -qxE "[0-9a-f]{12}" <<<"$sid"
	pd=$(wait_policyd)
	check "service (run $round): box-policyd runs as $du ($duid)" \
		test -n "$pd" -a "$(uid_of "${pd:-1}")" = "$duid"
	[ -n "$pd" ] && check "service (run $round): its parent is the service boxd" \
		test "$(ps -o ppid= -p "$pd" | tr -d ' ')" = "$sp"
	check "service (run $round): STATE/policy/ is $du's, 700" \
		test "$(stat -c %u:%a /var/lib/box/0/svc-pd/policy)" = "$duid:700"
	check "service (run $round): decisions.jsonl is the owner's" \
		test "$(stat -c %u /var/lib/box/0/svc-pd/decisions.jsonl)" = 0
	"$RB/boxctl" stop "$sid" >/dev/null 2>&1
	check "service (run $round): no box-policyd remains after stop" no_policyd
done
# A policy dir kept by the shared box-daemon (before box-policyd had a user of its own): taken
# over with the files that user made in it, so the history goes on.
if [ "$du" != box-daemon ] && id box-daemon >/dev/null 2>&1; then
	# (a policy with no temporal rule keeps no history: a file stands for one)
	echo earlier >/var/lib/box/0/svc-pd/policy/earlier-file
	chown -R box-daemon:box-daemon /var/lib/box/0/svc-pd/policy
	nfiles=$(find /var/lib/box/0/svc-pd/policy -type f | wc -l)
	sid=$("$RB/boxctl" run -q -c svc-pd.ini --detach 2>serr)
	check "service: a policy dir of box-daemon's: the box starts" grep -qxE "[0-9a-f]{12}" <<<"$sid"
	pd=$(wait_policyd)
	check "service: … box-policyd runs as $du ($duid)" \
		test -n "$pd" -a "$(uid_of "${pd:-1}")" = "$duid"
	check "service: … STATE/policy/ and its $nfiles files are $du's now" \
		test -z "$(find /var/lib/box/0/svc-pd/policy ! -uid "$duid")" -a "$nfiles" -gt 0
	"$RB/boxctl" stop "$sid" >/dev/null 2>&1
fi
kill -TERM "$sp"
wait "$sp"
rm -rf /var/lib/box/0/svc-pd
tap_done
