#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-run-late-daemon.sh — fail closed with the parallel start (boxd/box.c, docs/boxd.8.md): the
# agent starts once box-policyd and box-gateway are ready, box-shell may finish starting after
# it; a box-shell that dies before it is ready, after the agent started, still stops the box:
# boxctl run exits 1 with the message of a failed start, "box-shell exited before it was
# ready (…)", the agent is killed (it never writes its second mark) and nothing of the
# box outlives it. BOX_TEST_READY_DELAY_MS only slows a step: boxd acts on box-shell's
# ShellReady that much later (for this test's box alone), which holds the window open in
# which the test kills box-shell (its ready deadline is off while the hook holds an answer
# that came in time). With --timings the same box's reply still comes (the
# RunReply that waited for box-shell), then the error. Also: with box-shell's ready held
# and not killed, the agent runs to its end before box-shell is ready; the box ends 0. And a
# box-shell slow to start (its own hook) is killed, not waited for, when the agent ends first.
# As root (the embedded boxd inherits the hook from boxctl's environment).
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
set -u

cd "$W"
mkdir proj
chmod 777 proj

# shell_pids: the box-shell processes of this test's binaries (never anyone else's).
shell_pids() {
	local p
	for p in $(pgrep -x box-shell); do
		[ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$RB/box-shell" ] && echo "$p"
	done
}

# wait_file F: F exists (a cap only a hang reaches).
wait_file() {
	for _ in $(seq 600); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# box_ini NAME AGENT...: a box whose agent is AGENT (no shell: box-shell is not ready yet).
box_ini() {
	local n=$1
	shift
	printf 'permit (principal, action, resource);\n' >"$n.cedar"
	printf '[box]\nname = %s\npolicy = %s/%s.cedar\n\n[agent]\ncommand = %s\nworkspace = %s/proj\n\n[agent.filesystem]\nwrite = %s/proj\n' \
		"$n" "$W" "$n" "$*" "$W" "$W" >"$n.ini"
}

# The agent: mark 1, a pause, mark 2 (a box stopped in the pause never writes it).
cat >agent.py <<'EOF'
#!/usr/bin/python3
import sys, time
open(sys.argv[1] + ".1", "w").close()
time.sleep(float(sys.argv[2]))
open(sys.argv[1] + ".2", "w").close()
EOF
chmod 755 agent.py

for timings in "" "--timings"; do
	n=late-$$-${timings:+t}x
	mark=$W/proj/$n
	box_ini "$n" "$W/agent.py $mark 30"
	BOX_TEST_READY_DELAY_MS=60000 BOX_TEST_READY_DELAY_DAEMON=box-shell \
		BOX_TEST_READY_DELAY_NAME=$n "$RB/boxctl" run -q $timings -c "$n.ini" \
		>"$n.out" 2>"$n.err" &
	bp=$!
	_run_pids+=("$bp")
	wait_file "$mark.1"
	check "${timings:-plain}: the agent started while box-shell's ready was held" test -e "$mark.1"
	sp=
	for _ in $(seq 600); do # box-shell's own sandbox may still be being built
		sp=$(shell_pids)
		[ -n "$sp" ] && break
		sleep 0.1
	done
	check "${timings:-plain}: box-shell runs, not ready yet ($(echo $sp))" test -n "$sp"
	[ -n "$sp" ] && kill -KILL $sp
	for _ in $(seq 600); do kill -0 "$bp" 2>/dev/null || break; sleep 0.1; done
	wait "$bp"
	rc=$?
	sed 's/^/#   /' "$n.err"
	check "${timings:-plain}: boxctl run exits 1 (rc $rc)" test "$rc" = 1
	check "${timings:-plain}: … saying box-shell died before it was ready" \
		grep -qx "boxctl: error: box-shell exited before it was ready (.*)" "$n.err"
	check "${timings:-plain}: … the agent was killed (no second mark)" test ! -e "$mark.2"
	check "${timings:-plain}: … no box-shell of ours is left" test -z "$(shell_pids)"
	check "${timings:-plain}: … no agent of ours is left" \
		test -z "$(pgrep -f "$W/agent.py $mark")"
	if [ -n "$timings" ]; then
		check "timings: … the reply came before the error, with the timeline" \
			grep -q "boxd    agent started" "$n.err"
	fi
done

# Held, not killed: the agent (no shell) runs to its end before box-shell is ready.
n=held-$$
mark=$W/proj/$n
box_ini "$n" "$W/agent.py $mark 0"
BOX_TEST_READY_DELAY_MS=3000 BOX_TEST_READY_DELAY_DAEMON=box-shell BOX_TEST_READY_DELAY_NAME=$n \
	"$RB/boxctl" run -q -c "$n.ini" >"$n.out" 2>"$n.err"
rc=$?
sed 's/^/#   /' "$n.err"
check "held: the box ends 0 (rc $rc)" test "$rc" = 0
check "held: … its agent ran to its end" test -e "$mark.2"

# Slow, and never needed: box-shell takes 8 s to say it is ready (its own hook
# BOX_TEST_SHELL_READY_DELAY_MS); the agent ends at once. A box-shell not ready has served
# nothing: boxd kills it rather than wait for it (before, the box waited out box-shell's
# 3 s exit wait), and the box ends 0 with nothing of it left (BOXD_DEBUG: boxd says so).
n=slow-$$
mark=$W/proj/$n
box_ini "$n" "$W/agent.py $mark 0"
t0=$(date +%s%N)
BOXD_DEBUG=1 BOX_TEST_SHELL_READY_DELAY_MS=8000 "$RB/boxctl" run -c "$n.ini" >"$n.out" 2>"$n.err"
rc=$?
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
sed 's/^/#   /' "$n.err"
check "slow shell: the box ends 0 (rc $rc)" test "$rc" = 0
check "slow shell: … its agent ran to its end" test -e "$mark.2"
check "slow shell: … box-shell was killed, not waited for" \
	grep -q "box-shell (pid [0-9]*) was not ready yet: killed, not waited for" "$n.err"
check "slow shell: … boxctl returned before box-shell's 3 s exit wait ($ms ms)" test "$ms" -lt 3000
check "slow shell: … no box-shell of ours is left" test -z "$(shell_pids)"
# --timings: the reply waits for box-shell's step, which says it was killed
BOX_TEST_SHELL_READY_DELAY_MS=8000 "$RB/boxctl" run -q --timings -c "$n.ini" >"$n.out" 2>"$n.err"
rc=$?
sed 's/^/#   /' "$n.err"
check "slow shell, timings: the box ends 0 (rc $rc)" test "$rc" = 0
check "slow shell, timings: … its step says box-shell was killed before it was ready" \
	grep -q "boxd    box-shell not ready when the box ended (killed)" "$n.err"
check "slow shell, timings: … no box-shell of ours is left" test -z "$(shell_pids)"

tap_done
