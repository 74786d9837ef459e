#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-run-noblock-end.sh — a service boxd never blocks on one box's end:
# root's box "j2-fin" ends (its agent exits 7) while its box-policyd
# delays its exit by 2 s after the final flush (BOX_TEST_POLICYD_EXIT_DELAY_MS
# in boxd's own environment, passed to that box's box-policyd only: it slows
# the step, it writes the same). Meanwhile `boxctl ps` answers (the box shown
# "stopping") and boxtest's box gets its RunReply; j2-fin's boxctl gets exit status 7 only after the
# delay, when its policyd is gone (RunExit follows policyd's final flush).
# SIGTERM to boxd while a box finishes: boxd waits for that box's end, its
# boxctl still gets its status, then boxd exits 0. A policyd that does not
# exit within 3 s is SIGKILLed and the end goes on (exit status kept). A
# pids_max box's cgroup (its agent leaves 20 children) is gone by its end.
# Before boxd's teardown was a chain of events, ps and the other run waited
# for the whole policyd exit. No clock bound on ps and the other run: each must be
# answered while j2-fin still finishes (its boxctl still waits), which a loaded machine
# only makes slower. Serial: that window is policyd's delay, which must stay under
# boxd's fixed 3 s exit wait. Box names carry this run's PID (j2-fin-PID, ...): `ps` as
# root sees every box of the host, and the service keeps state per name in /var/lib/box.
# box-test: serial
# Trusts: nothing; test code (private service sockets under its work dir).
. test/lib.sh
. test/integration/lib-run.sh
set -u

root_or_end "no-blocking boxd end"
if ! have_boxtest; then
	skip "no-blocking boxd end" "no boxtest user"
	tap_done
	exit 0
fi
cd "$W"
# policyd's delay must stay under boxd's 3 s exit wait.
delay_ms=2000
fin=j2-fin-$$ other=j2-other-$$ cg=j2-cg-$$
# mine FILE: the lines of a `boxctl ps` output that are this test's boxes.
mine() { grep -P "^($fin|$other|$cg)\t" "$1"; }
export BOX_SOCKET="$W/boxd.sock"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# start_boxd DELAY_MS: a service boxd whose j2-fin boxes' policyd delays its exit.
start_boxd() {
	rm -f "$BOX_SOCKET"
	BOX_TEST_POLICYD_EXIT_DELAY_MS=$1 BOX_TEST_POLICYD_EXIT_DELAY_NAME=$fin \
		"$RB/boxd" --listen "$BOX_SOCKET" 2>>boxd.log &
	sp=$!
	_run_pids+=("$sp")
	for _ in $(seq 50); do [ -S "$BOX_SOCKET" ] && break; sleep 0.1; done
	chmod 666 "$BOX_SOCKET" 2>/dev/null # the test's stand-in for group box-clients
}
# policyds: the box-policyd processes of this test's binaries (alive, not zombies).
policyds() { daemon_pids box-policyd; }

cat >j2-fin.ini <<INI
[box]
name = $fin

[agent]
command = /usr/bin/python3 -c "import sys, time; time.sleep(0.3); sys.exit(7)"
workspace = $W
INI
cat >j2-other.ini <<INI
[box]
name = $other

[agent]
command = /bin/sleep 60
workspace = $W
INI
chmod 644 j2-fin.ini j2-other.ini
mkdir bt && chown boxtest bt
cat >other.sh <<SH
#!/bin/sh
t0=\$(date +%s%N)
'$RB/boxctl' run -q -c '$W/j2-other.ini' --detach >'$W/bt/other.out' 2>'$W/bt/other.err'
rc=\$?
t1=\$(date +%s%N)
echo "\$rc \$(( (t1 - t0) / 1000000 ))"
SH
chmod 755 other.sh
FS=/var/lib/box/0/$fin
rm -rf "$FS" "/var/lib/box/0/$cg" "/var/lib/box/$(id -u boxtest)/$other"

# --- one box finishes slowly; boxd answers everyone else meanwhile --------------------
start_boxd "$delay_ms"
check "boxd listens on its socket" test -S "$BOX_SOCKET"
t_fin=$(now_ms)
"$RB/boxctl" run -q -c j2-fin.ini >fin.out 2>fin.err &
fin_pid=$!
_run_pids+=("$fin_pid")
# The agent exits after 0.3 s; then the box is finishing for 2 s.
for _ in $(seq 100); do grep -q "exiting in $delay_ms ms" boxd.log && break; sleep 0.05; done
check "j2-fin's policyd flushed and delays its exit (the hook)" \
	grep -q "box-policyd.*flushed; exiting in $delay_ms ms" boxd.log
check "j2-fin's boxctl is still waiting for RunExit" kill -0 "$fin_pid"
fin_pd=$(policyds)
check "j2-fin's policyd is still there (its exit delayed): the only one" \
	test -n "$fin_pd" -a "$(wc -w <<<"$fin_pd")" = 1

t0=$(now_ms)
"$RB/boxctl" ps >ps.out 2>ps.err
ps_rc=$?
t1=$(now_ms)
ps_ms=$((t1 - t0))
check "ps while j2-fin finishes: answered (exit 0)" test "$ps_rc" = 0
check "ps while j2-fin finishes: answered while it still finishes (took $ps_ms ms)" \
	kill -0 "$fin_pid"
check "ps while j2-fin finishes: j2-fin is stopping" \
	grep -qE "^$fin"$'\t'"[0-9a-f]{12}"$'\t'"stopping"$'\t' ps.out

read -r o_rc o_ms < <(as_boxtest "$W/other.sh")
check "boxtest's run while j2-fin finishes: RunReply OK (exit ${o_rc:-?})" test "${o_rc:-1}" = 0
check "boxtest's run while j2-fin finishes: answered while it still finishes (took ${o_ms:-?} ms)" \
	kill -0 "$fin_pid"
check "boxtest's run printed its box id" grep -qxE "[0-9a-f]{12}" bt/other.out
check "j2-fin's boxctl is still waiting meanwhile" kill -0 "$fin_pid"

wait "$fin_pid"
fin_rc=$?
t_done=$(now_ms)
check "j2-fin's boxctl gets the agent's exit status 7 (got $fin_rc)" test "$fin_rc" = 7
check "… after policyd's delayed exit ($((t_done - t_fin)) ms >= $((delay_ms + 300)))" \
	test $((t_done - t_fin)) -ge $((delay_ms + 300))
check "… when j2-fin's policyd is gone (RunExit after its exit)" \
	test ! -d "/proc/${fin_pd:-999999999}" -o -z "$fin_pd"
check "… with its decisions.jsonl there, the owner's" test "$(stat -c %u "$FS/decisions.jsonl")" = 0
check "… and boxd logged the end after policyd's flush" \
	awk -v fin="$fin" '/flushed; exiting in/ { f = NR } $0 ~ "box " fin " .* ended: status 7"  { e = NR } END { exit !(f && e > f) }' boxd.log
"$RB/boxctl" ps >ps2.out
if [ "$(mine ps2.out | cut -f1 | tr '\n' ' ')" = "$other " ]; then
	ok "ps: j2-fin is gone, boxtest's box runs"
else
	not_ok "ps: j2-fin is gone, boxtest's box runs"
	diag "ps: $(cat ps2.out)" "boxtest's run: $(cat bt/other.err 2>/dev/null)"
fi
# The name is free again at once: the run lock went before RunExit.
"$RB/boxctl" run -q -c j2-fin.ini --detach >fin2.out 2>fin2.err
check "j2-fin runs again right after (its run lock was released before RunExit)" \
	grep -qxE "[0-9a-f]{12}" fin2.out || diag "$(cat fin2.err)"

# --- the cgroups go from the loop too: a box with pids_max whose agent leaves 20 children
cat >j2-cg.ini <<INI
[box]
name = $cg

[agent]
command = /usr/bin/python3 -c "import os, sys, time; [os.fork() or time.sleep(60) for _ in range(20)]; time.sleep(1); sys.exit(3)"
workspace = $W
pids_max = 64
INI
chmod 644 j2-cg.ini
cg_id=$("$RB/boxctl" run -q -c j2-cg.ini --detach 2>cg.err)
check "pids_max box: starts" grep -qxE "[0-9a-f]{12}" <<<"$cg_id"
cg_dirs() { find /sys/fs/cgroup -maxdepth 4 -type d -path "*/box/$cg_id" 2>/dev/null; }
cg_seen=$(cg_dirs)
check "pids_max box: its cgroup exists while it runs" test -n "$cg_seen"
for _ in $(seq 100); do "$RB/boxctl" ps | grep -qP "^$cg\t" || break; sleep 0.1; done
check "pids_max box: ended (status 3)" grep -q "box $cg ($cg_id) ended: status 3" boxd.log
check "pids_max box: its cgroup is gone when the box is ($cg_seen)" test -z "$(cg_dirs)"
check "pids_max box: no cgroup left behind" bash -c "! grep -q 'cannot remove .*$cg_id' boxd.log"

# --- SIGTERM to boxd while a box finishes: boxd waits for its end ----------------------
for _ in $(seq 100); do "$RB/boxctl" ps | grep -qP "^$fin\t" || break; sleep 0.1; done
check "the detached j2-fin ended (status 7)" test "$(grep -c "box $fin .* ended: status 7" boxd.log)" = 2
as_boxtest "'$RB/boxctl' stop '$(cat bt/other.out)'" >/dev/null 2>&1
for _ in $(seq 100); do "$RB/boxctl" ps >ps3.out; [ -z "$(mine ps3.out)" ] && break; sleep 0.1; done
"$RB/boxctl" run -q -c j2-fin.ini >fin3.out 2>fin3.err &
fin_pid=$!
_run_pids+=("$fin_pid")
n0=$(grep -c "exiting in $delay_ms ms" boxd.log)
for _ in $(seq 100); do [ "$(grep -c "exiting in $delay_ms ms" boxd.log)" -gt "$n0" ] && break; sleep 0.05; done
t0=$(now_ms)
kill -TERM "$sp"
check "SIGTERM while j2-fin finishes: its boxctl still waits" kill -0 "$fin_pid"
wait "$fin_pid"
fin_rc=$?
wait "$sp"
sp_rc=$?
t1=$(now_ms)
check "SIGTERM while j2-fin finishes: its boxctl gets exit status 7 (got $fin_rc)" test "$fin_rc" = 7 ||
	diag "$(cat fin3.err)"
check "SIGTERM while j2-fin finishes: then boxd exits 0 (got $sp_rc, after $((t1 - t0)) ms)" \
	test "$sp_rc" = 0
check "SIGTERM: no box-policyd is left" test -z "$(policyds)"

# --- a policyd that does not exit in its 7 s (4 s for its peers + 3): SIGKILL, the end goes on
start_boxd 30000
t0=$(now_ms)
"$RB/boxctl" run -q -c j2-fin.ini >fin4.out 2>fin4.err
fin_rc=$?
t1=$(now_ms)
check "policyd stuck: boxctl gets exit status 7 (got $fin_rc)" test "$fin_rc" = 7 ||
	diag "$(cat fin4.err)"
check "policyd stuck: after the 7 s wait, not its 30 s ($((t1 - t0)) ms)" \
	test $((t1 - t0)) -ge 7000 -a $((t1 - t0)) -lt 30000
check "policyd stuck: boxd says it killed it" grep -q "box-policyd (pid [0-9]*) did not exit within 7 s; killing it" boxd.log
check "policyd stuck: it is gone (SIGKILLed, reaped)" test -z "$(policyds)"
kill -TERM "$sp"
wait "$sp"
check "boxd exits on SIGTERM" test $? = 0
rm -rf "$FS" "/var/lib/box/0/$cg" "/var/lib/box/$(id -u boxtest)/$other"
tap_done
