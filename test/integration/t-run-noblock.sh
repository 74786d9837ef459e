#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-run-noblock.sh — a service boxd never blocks on one box's start: while
# box-recheck of root's box "i2-stall-PID" sleeps 15 s (BOX_TEST_RECHECK_STALL_MS in
# boxd's own environment, passed to that box's box-recheck only: it slows the step, it
# checks the same), `boxctl ps` answers and boxtest's box gets its RunReply, both while
# the stalled box is still starting (no clock bound: a loaded machine only makes them
# slower, while a blocked boxd would answer them only after the stall); the stalled box
# then starts normally. Before boxd drove a start from its event loop, both waited for
# the stalled recheck. Box names carry this run's PID: `ps` as root sees every box of the
# host, and the service keeps state per name in /var/lib/box.
# Trusts: nothing; test code (a private service socket under its work dir).
. test/lib.sh
. test/integration/lib-run.sh
set -u

root_or_end "no-blocking boxd"
if ! have_boxtest; then
	skip "no-blocking boxd" "no boxtest user"
	tap_done
	exit 0
fi
cd "$W"
stall_ms=15000 # under boxd's 20 s recheck timeout (BOXD_RECHECK_TIMEOUT_MS, boxd/boxd.h)
stall=i2-stall-$$ quick=i2-quick-$$
export BOX_SOCKET="$W/boxd.sock"
BOX_TEST_RECHECK_STALL_MS=$stall_ms BOX_TEST_RECHECK_STALL_NAME=$stall \
	"$RB/boxd" --listen "$BOX_SOCKET" 2>boxd.log &
sp=$!
_run_pids+=("$sp")
for _ in $(seq 50); do [ -S "$BOX_SOCKET" ] && break; sleep 0.1; done
check "boxd listens on its socket" test -S "$BOX_SOCKET"
chmod 666 "$BOX_SOCKET" # the test's stand-in for group box-clients

for n in "$stall" "$quick"; do
	cat >"$n.ini" <<INI
[box]
name = $n

[agent]
command = /bin/sleep 60
workspace = $W
INI
	chmod 644 "$n.ini"
done
# boxtest's run, timed from inside its own shell (su's own start-up is not boxd's).
mkdir bt && chown boxtest bt
cat >quick.sh <<SH
#!/bin/sh
t0=\$(date +%s%N)
'$RB/boxctl' run -q -c '$W/$quick.ini' --detach >'$W/bt/quick.out' 2>'$W/bt/quick.err'
rc=\$?
t1=\$(date +%s%N)
echo "\$rc \$(( (t1 - t0) / 1000000 ))"
SH
chmod 755 quick.sh

now_ms() { echo $(($(date +%s%N) / 1000000)); }
# stall_starting: the stalled box's `run --detach` has not returned (nor printed its id).
stall_starting() { [ ! -s stall.out ] && kill -0 "$stall_pid" 2>/dev/null; }

t_stall=$(now_ms)
"$RB/boxctl" run -q -c "$stall.ini" --detach >stall.out 2>stall.err &
stall_pid=$!
_run_pids+=("$stall_pid")
# The recheck is its own exec'd helper, started up to its seccomp filter before it stalls:
# wait (up to 60 s, only a hang takes that long) until this test's recheck has its filter.
rp=
for _ in $(seq 600); do
	for p in $(pgrep -x box-recheck); do
		[ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$RB/box-recheck" ] && rp=$p
	done
	[ -n "$rp" ] && grep -qP '^Seccomp:\t2$' "/proc/$rp/status" 2>/dev/null && break
	sleep 0.1
done
check "the stalled box is still starting while its recheck sleeps" kill -0 "$stall_pid"
check "box-recheck runs (its own binary, not a fork of boxd)" test -n "$rp"
if [ -n "$rp" ]; then
	check "box-recheck's parent is boxd" test "$(awk '/^PPid:/ {print $2}' "/proc/$rp/status")" = "$sp"
	check "box-recheck: seccomp filter installed" grep -qP '^Seccomp:\t2$' "/proc/$rp/status"
	check "box-recheck: no_new_privs" grep -qP '^NoNewPrivs:\t1$' "/proc/$rp/status"
	check "box-recheck holds fds 0-3 only" test "$(ls "/proc/$rp/fd" | sort -n | tr '\n' ' ')" = "0 1 2 3 "
	check "box-recheck's environment: the test hook only" \
		test "$(tr '\0' '\n' <"/proc/$rp/environ" | grep -v '^ASAN_OPTIONS=' | tr '\n' ' ')" = "BOX_TEST_RECHECK_STALL_MS=$stall_ms "
fi

t0=$(now_ms)
"$RB/boxctl" ps >ps.out 2>ps.err
ps_rc=$?
t1=$(now_ms)
ps_ms=$((t1 - t0))
check "ps during the stall: answered (exit 0)" test "$ps_rc" = 0
check "ps during the stall: answered before the stalled box started (took $ps_ms ms)" \
	stall_starting

read -r q_rc q_ms < <(as_boxtest "$W/quick.sh")
check "boxtest's run during the stall: RunReply OK (exit ${q_rc:-?})" test "${q_rc:-1}" = 0
check "boxtest's run during the stall: answered before the stalled box started (took ${q_ms:-?} ms)" \
	stall_starting
check "boxtest's run printed its box id" grep -qxE "[0-9a-f]{12}" bt/quick.out ||
	diag "$(cat bt/quick.err)"
check "the stalled box is still starting meanwhile" kill -0 "$stall_pid"

wait "$stall_pid"
stall_rc=$?
t_done=$(now_ms)
check "the stalled box starts after its recheck (exit $stall_rc)" test "$stall_rc" = 0
check "the stalled box's recheck took the stall ($((t_done - t_stall)) ms >= $stall_ms)" \
	test $((t_done - t_stall)) -ge "$stall_ms"
check "the stalled box printed its box id" grep -qxE "[0-9a-f]{12}" stall.out
"$RB/boxctl" ps >ps2.out
check "ps: both boxes run" test "$(grep -cP "^($stall|$quick)\t" ps2.out)" = 2

"$RB/boxctl" stop "$(cat stall.out)" >/dev/null 2>&1
"$RB/boxctl" stop "$(cat bt/quick.out)" >/dev/null 2>&1
mine() { grep -cP "^($stall|$quick)\t" ps2.out; }
for _ in $(seq 300); do [ "$(mine)" = 0 ] && break; sleep 0.1; "$RB/boxctl" ps >ps2.out; done
check "stop: none of this test's boxes left" test "$(mine)" = 0
kill -TERM "$sp"
wait "$sp"
check "boxd exits on SIGTERM" test $? = 0
for u in 0 "$(id -u boxtest)"; do
	rm -rf "/var/lib/box/$u/$stall" "/var/lib/box/$u/$quick"
done
tap_done
