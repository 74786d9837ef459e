#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-shell-inproc.sh — decisions without a round trip in real boxes (docs/box-policy.5.md):
# a loop of `[` run by the agent through box's shell makes one decision line and one outcome
# line per `[`, with the same content, in the same order, as a run where box-policyd decides
# every one (a temporal rule over shell:exec keeps shell:exec going through box-policyd: its
# log has the same lines, and box-policyd says it lets box-shell decide one action fewer);
# `boxctl policy replay` of the in-process run agrees with every decision; the lines of a
# command are all in the log when its exit reaches the agent.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
. test/integration/lib-shell.sh
set -u
cd "$W"

require_shell_built

u=$(id -un)
D=$(user_dir "$u")
P=$D/proj
mkdir -p "$P"
N=150
# The agent: one command through the alias, then (while the box still runs) how many
# decision lines of `[` the log holds at that moment.
cat >"$D/agent.py" <<EOF
import json, os, subprocess, sys
rc = subprocess.call(["/run/box/bin/bash", "-c",
                      "i=0; while [ \$i -lt $N ]; do i=\$((i+1)); done; echo \$i"])
print("rc %d" % rc, flush=True)
EOF
chmod 755 "$D/agent.py"

# A: no temporal rule (every action of box-shell's decided in process). B: the same permit
# and a temporal forbid of shell:exec that never matches a program run here, which keeps
# shell:exec going through box-policyd.
printf 'permit (principal, action, resource);\n' >"$D/a.cedar"
cat >"$D/b.cedar" <<'EOF'
permit (principal, action, resource);
@id("never") @description("never")
forbid (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "never-run-this" &&
       temporal { formerly within 1m Box::Action::"shell:exec"::request{} } };
EOF
for b in a b; do
	cat >"$D/$b.ini" <<EOF
[box]
name = e2e-ip$b-$$
state_dir = $D/state/$b
policy = $b.cedar
timeout = 300s

[agent]
command = /usr/bin/python3 $D/agent.py
workspace = $P

[agent.env]
$(agent_env)

[agent.filesystem]
read = $D
EOF
	# BOXD_DEBUG: the daemons log their info lines (box-policyd's "decides in process").
	as_user "$u" "BOXD_DEBUG=1 timeout -k 5 ${SHELL_BOX_TIMEOUT:-240} '$RB/boxctl' run -c '$D/$b.ini'" \
		>"$D/$b.out" 2>"$D/$b.err"
	rc=$?
	if [ "$rc" = 0 ] && grep -qx "rc 0" "$D/$b.out" && grep -qx "$N" "$D/$b.out"; then
		ok "box $b ran the loop through box's shell ($N iterations)"
	else
		not_ok "box $b ran the loop (boxctl $rc)"
		sed 's/^/#   /' "$D/$b.out" "$D/$b.err" | head -20
	fi
done

# The lines of box-shell without what differs between two runs (time, box name and id, the
# chain's seq and prev).
norm() {
	python3 - "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("source") != "box-shell":
        continue
    for k in ("time", "time_ns", "box", "id", "seq", "prev"):
        o.pop(k, None)
    print(json.dumps(o, sort_keys=True))
PY
}
norm "$D/state/a/decisions.jsonl" >"$D/a.lines"
norm "$D/state/b/decisions.jsonl" >"$D/b.lines"
n_test=$(grep -c '"program": "\["' "$D/a.lines")
n_dec=$(grep '"program": "\["' "$D/a.lines" | grep -vc '"record"')
if [ "$n_dec" = $((N + 1)) ] && [ "$n_test" = $((2 * (N + 1))) ]; then
	ok "one decision line and one outcome line per \`[\` ($((N + 1)) each)"
else
	not_ok "one decision and one outcome line per \`[\`: $n_dec decisions, $n_test lines in all"
fi
if [ -s "$D/a.lines" ] && cmp -s "$D/a.lines" "$D/b.lines"; then
	ok "the in-process run logs the same lines, in the same order, as the box-policyd run"
else
	not_ok "the in-process run's lines differ from the box-policyd run's"
	diff "$D/a.lines" "$D/b.lines" | head -10 | sed 's/^/#   /'
fi
# box-policyd said what box-shell decides in process.
if grep -q "box-shell decides in process: 6 of its 6 actions" "$D/a.err" &&
	grep -q "box-shell decides in process: 5 of its 6 actions" "$D/b.err"; then
	ok "a temporal rule over shell:exec keeps shell:exec with box-policyd (6 of 6, then 5 of 6)"
else
	not_ok "box-policyd's qualifying actions"
	grep -h "decides in process" "$D/a.err" "$D/b.err" | sed 's/^/#   /'
fi
# replay: the in-process run's decisions, decided again offline with the same policy.
if as_user "$u" "'$BOX_BIN/boxctl' policy replay '$D/a.cedar' '$D/state/a/decisions.jsonl'" \
	>"$D/replay.out" 2>"$D/replay.err"; then
	all=$(grep -v '"record"' "$D/state/a/decisions.jsonl" | grep -vc '"seal":"end"')
	if grep -q "^$all decisions, 0 now denied, 0 now permitted, $all unchanged" "$D/replay.out"; then
		ok "boxctl policy replay of the in-process run agrees"
	else
		not_ok "boxctl policy replay of the in-process run: $(head -3 "$D/replay.out")"
	fi
else
	not_ok "boxctl policy replay failed: $(head -3 "$D/replay.err")"
fi

# C: lines a kill cannot take out of the log. A script that reads and deletes, then kills
# itself with SIGKILL (the kill built-in sends what waits first), and a background job killed
# with SIGKILL by its parent after a read (a file operation's permit leaves before its effect).
echo one >"$P/f1"
echo two >"$P/f2"
echo three >"$P/f3"
cat >"$D/killer.py" <<EOF
import subprocess
subprocess.call(["/run/box/bin/bash", "-c", "cat f1 >/dev/null; rm -f f2; kill -9 \$\$"])
subprocess.call(["/run/box/bin/bash", "-c",
                 "( cat f3 >/dev/null; sleep 30 ) & sleep 1; kill -9 \$!; wait; echo reaped"])
print("done", flush=True)
EOF
chmod 755 "$D/killer.py"
sed -e "s/e2e-ipa-/e2e-ipc-/; s|state/a|state/c|; s|agent.py|killer.py|; s|^read = $D\$|read = $D\nwrite = $P|" \
	"$D/a.ini" >"$D/c.ini"
as_user "$u" "timeout -k 5 ${SHELL_BOX_TIMEOUT:-240} '$RB/boxctl' run -c '$D/c.ini'" >"$D/c.out" 2>"$D/c.err"
rc=$?
check "box c ran both scripts (boxctl $rc)" grep -qx done "$D/c.out"
norm "$D/state/c/decisions.jsonl" >"$D/c.lines"
# has_line ACTION TEXT: a decision line (not an outcome) of ACTION holding TEXT.
has_line() { grep -F "\"$1\"" "$D/c.lines" | grep -v '"record"' | grep -qF "$2"; }
check "kill -9 \$\$: the read before it is in the log" has_line fs:read "$P/f1"
check "kill -9 \$\$: the delete before it is in the log" has_line fs:delete "$P/f2"
check "kill -9 \$\$: f2 was deleted" test ! -e "$P/f2"
check "a job killed by its parent: its read is in the log" has_line fs:read "$P/f3"
tap_done
