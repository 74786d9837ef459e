#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-run-service.sh — the service boxd (`boxd --listen PATH`): boxctl run
# through $BOX_SOCKET (no embedded boxd), SO_PEERCRED: an ordinary user sees
# and stops only its own boxes, root all; stop tears a box down. The test
# installs a private service socket under its work dir, points BOX_SOCKET at
# it, and removes both at the end.
. test/lib.sh
. test/integration/lib-run.sh
set -u

root_or_end "service boxd"
cd "$W"
# Box names of this run only: the service keeps state per name in /var/lib/box, and
# `boxctl ps` as root also lists every other box of the host (other tests', the user's).
n=$$
export BOX_SOCKET="$W/boxd.sock"
"$RB/boxd" --listen "$BOX_SOCKET" 2>boxd.log &
sp=$!
_run_pids+=("$sp")
for _ in $(seq 50); do [ -S "$BOX_SOCKET" ] && break; sleep 0.1; done
check "service: boxd listens on its socket" test -S "$BOX_SOCKET"
chmod 666 "$BOX_SOCKET" # the test's stand-in for group box-clients
# The spare box-recheck (boxd/recheck.c): one waits, a child of boxd, before any box.
spare_of() { pgrep -P "$sp" -x box-recheck; }
check "spare: a box-recheck waits before the first start" wait_for_cmd spare_of
spare1=$(spare_of)

cat >a.ini <<EOF
[box]
name = svc-a-$n

[agent]
command = /bin/sleep 60
workspace = $W
EOF
chmod 644 a.ini
out=$("$RB/boxctl" run -c a.ini --detach 2>err)
check "service: run --detach through the socket" grep -qxE "[0-9a-f]{12}" <<<"$out"
check "service: no embedded boxd was started" test "$(grep -c embedded err)" = 0
rid=$out
check "spare: the first start took it (its pid is not boxd's child any more, or is the box's)" \
	test "$(spare_of)" != "$spare1"
check "spare: another waits soon after" wait_for_cmd spare_of
# A spare that died while waiting is not handed to a box: the next start spawns its own.
kill -9 "$(spare_of)"
cat >spare.ini <<EOF
[box]
name = svc-spare-$n

[agent]
command = /bin/echo spare-gone-ok
workspace = $W
EOF
chmod 644 spare.ini
check "spare: a start after the spare was killed runs" \
	grep -qx spare-gone-ok <("$RB/boxctl" run -q -c spare.ini 2>&1)
check "spare: and a new one waits after it" wait_for_cmd spare_of
# A service box's daemons: each as its own user, in mount, PID and IPC namespaces of its own
# (PID 1 there), boxd's user namespace (boxd is root), a root without /home or /var
# (docs/boxd.8.md, step 4; t-daemon-confine.sh checks the rest for embedded boxes).
for d in box-policyd:box-policy box-gateway:box-gateway; do
	p=$(wait_below "$sp" "${d%%:*}")
	ns_own=1
	for ns in mnt pid ipc; do
		[ -n "$p" ] && [ "$(readlink "/proc/$p/ns/$ns")" != "$(readlink "/proc/$sp/ns/$ns")" ] || ns_own=0
	done
	check "service: ${d%%:*} in mount, PID and IPC namespaces of its own" test -n "$p" -a "$ns_own" = 1
	check "service: … PID 1 there, boxd's user namespace" \
		test -n "$p" -a "$(awk '/^NSpid:/ { print $NF }' "/proc/$p/status" 2>/dev/null)" = 1 \
		-a "$(readlink "/proc/$p/ns/user")" = "$(readlink "/proc/$sp/ns/user")"
	check "service: … as $(daemon_user "${d#*:}")" \
		test -n "$p" -a "$(stat -c %U "/proc/$p" 2>/dev/null)" = "$(daemon_user "${d#*:}")"
	check "service: … its root holds no /home, no /var" \
		test -n "$p" -a -d "/proc/$p/root/usr" -a ! -e "/proc/$p/root/home" -a ! -e "/proc/$p/root/var"
done

cat >echo.ini <<EOF
[box]
name = svc-echo-$n

[agent]
command = /usr/bin/python3 -c "import sys; sys.exit(5)"
workspace = $W
EOF
chmod 644 echo.ini
"$RB/boxctl" run -q -c echo.ini 2>/dev/null
check "service: the agent's status comes back (5)" test $? = 5

if have_boxtest; then
	uout=$(as_boxtest "'$RB/boxctl' run -q -c a.ini --detach" 2>uerr)
	# same name, other owner: its own state dir, so no lock conflict
	check "service: boxtest runs its own box" grep -qxE "[0-9a-f]{12}" <<<"$uout"
	[ -n "$uout" ] || sed "s/^/#   uerr: /" uerr
	as_boxtest "'$RB/boxctl' ps" >ups
	check "ps as boxtest: its own box" grep -qP "^svc-a-$n\t$uout\trunning\t" ups
	check "ps as boxtest: not root's box" test "$(grep -c "$rid" ups)" = 0
	as_boxtest "'$RB/boxctl' stop $rid" 2>uerr
	check "stop as boxtest: root's box is not found (exit 1)" test $? = 1
	"$RB/boxctl" ps >rps
	check "ps as root: every box" test "$(grep -cP "^svc-a-$n\t" rps)" = 2
	as_boxtest "'$RB/boxctl' stop $uout"
	check "stop as boxtest: its own box (exit 0)" test $? = 0
	# A root boxd sets vm.memfd_noexec = 2 for boxtest's box too (box-trampoline/memfd.c).
	cat >memfd.py <<'PY'
import os, subprocess
print("noexec=" + open("/proc/sys/vm/memfd_noexec").read().strip())
try:
    fd = os.memfd_create("x", 0)
    os.write(fd, open("/usr/bin/true", "rb").read())
    r = subprocess.run(["/proc/self/fd/%d" % fd], pass_fds=(fd,))
    print("run=%d" % r.returncode)
except OSError as e:
    print("run=error-%d" % e.errno)
PY
	cat >memfd.ini <<EOF
[box]
name = svc-memfd-$n

[agent]
command = /usr/bin/python3 $W/memfd.py
workspace = $W

[agent.filesystem]
read_file = $W/memfd.py
EOF
	chmod 644 memfd.ini memfd.py
	if [ -e /proc/sys/vm/memfd_noexec ]; then
		mout=$(as_boxtest "'$RB/boxctl' run -c memfd.ini" 2>merr)
		check "service: boxtest's box has vm.memfd_noexec = 2 ($(tr '\n' ' ' <<<"$mout"))" \
			grep -qx "noexec=2" <<<"$mout"
		check "service: … a memfd does not run through /proc/self/fd/N" \
			bash -c "grep -q '^run=' <<<\"\$1\" && ! grep -qx 'run=0' <<<\"\$1\"" _ "$mout"
		check "service: … and the disclosure does not say it could not be set" \
			test "$(grep -c 'memfd_noexec' merr)" = 0
	else
		skip "service: vm.memfd_noexec for boxtest's box" \
			"this kernel ($(uname -r)) has no vm.memfd_noexec (Linux 6.3)"
	fi
else
	skip "service: boxes of an ordinary user" "no boxtest user"
fi
"$RB/boxctl" stop "$rid"
check "stop as root: exit 0" test $? = 0
"$RB/boxctl" ps >rps
check "ps: a header line" grep -qxP "NAME\tID\tSTATE\tPID\tUPTIME" rps
check "ps: none of this test's boxes left" test "$(grep -cP "^svc-(a|echo|memfd)-$n\t" rps)" = 0
# A stop of the service (a restart) with boxes running: each is stopped and named in boxd's
# log, with its owner and whether a client was attached; an attached client is told why.
for k in att det; do
	sed "s/svc-a-$n/svc-$k-$n/" a.ini >"$k.ini"
	chmod 644 "$k.ini"
done
"$RB/boxctl" run -q -c att.ini >att.out 2>att.err &
ap_att=$!
det=$("$RB/boxctl" run -q -c det.ini --detach 2>det.err)
check "restart: a detached box runs" grep -qxE "[0-9a-f]{12}" <<<"$det"
uatt=
if have_boxtest; then
	as_boxtest "'$RB/boxctl' run -q -c att.ini" >uatt.out 2>uatt.err &
	uatt=$!
fi
for _ in $(seq 100); do
	"$RB/boxctl" ps >rps2
	want=2
	[ -n "$uatt" ] && want=3
	[ "$(grep -cP "^svc-(att|det)-$n\t[0-9a-f]{12}\trunning\t" rps2)" = "$want" ] && break
	sleep 0.2
done
check "restart: every box of the test runs before the stop" \
	test "$(grep -cP "^svc-(att|det)-$n\t[0-9a-f]{12}\trunning\t" rps2)" = "$want"
kill -TERM "$sp"
wait "$sp"
check "service: boxd exits on SIGTERM" test $? = 0
check "service: the socket is removed" test ! -e "$BOX_SOCKET"
wait "$ap_att"
rc=$?
check "restart: the attached client ends with the agent's signal (143, got $rc)" test "$rc" = 143
check "restart: the attached client is told why" \
	grep -qF "boxctl: box svc-att-$n was stopped: boxd is stopping (signal 15)" att.err
check "restart: boxd names how many boxes it stops" grep -qE "stopping $want boxes" boxd.log
check "restart: boxd names the attached box" \
	grep -qE "stopping box svc-att-$n \([0-9a-f]{12}\) of uid 0, its client attached" boxd.log
check "restart: boxd names the detached box" \
	grep -qF "stopping box svc-det-$n ($det) of uid 0, detached" boxd.log
check "restart: each box's end says why" \
	test "$(grep -cE "box svc-(att|det)-$n \([0-9a-f]{12}\) ended: .*: boxd is stopping \(signal 15\)" boxd.log)" = "$want"
if [ -n "$uatt" ]; then
	wait "$uatt"
	check "restart: boxtest's attached client is told why" \
		grep -qF "was stopped: boxd is stopping (signal 15)" uatt.err
	check "restart: boxd names boxtest's box with its uid" \
		grep -qE "stopping box svc-att-$n \([0-9a-f]{12}\) of uid $(id -u boxtest), its client attached" boxd.log
fi
left=0
for pid in $(grep -P "^svc-(att|det)-$n\t" rps2 | cut -f4); do
	kill -0 "$pid" 2>/dev/null && left=$((left + 1))
done
check "restart: no trampoline of the stopped boxes is left ($(grep -cP "^svc-(att|det)-$n\t" rps2) looked at)" \
	test "$left" = 0
# the service keeps state in /var/lib/box/UID/NAME: remove this test's boxes'
for u in 0 "$(id -u boxtest 2>/dev/null)"; do
	[ -n "$u" ] && rm -rf "/var/lib/box/$u/svc-a-$n" "/var/lib/box/$u/svc-echo-$n" "/var/lib/box/$u/svc-memfd-$n" \
		"/var/lib/box/$u/svc-att-$n" "/var/lib/box/$u/svc-det-$n"
done

# A SIGTERM while boxd starts (BOX_TEST_BOXD_START_DELAY_MS holds it before its loop) is
# not lost and does not end boxd by the default action: it waits pending, and boxd stops
# as asked — status 0, "stopping every box", the socket removed (boxd/boxd.c).
early="$W/early.sock"
BOX_TEST_BOXD_START_DELAY_MS=1500 "$RB/boxd" --listen "$early" 2>early.log &
ep=$!
_run_pids+=("$ep")
sleep 0.3
kill -TERM "$ep"
wait "$ep"
check "service: a SIGTERM while boxd starts ends it with status 0" test $? = 0
check "service: a SIGTERM while boxd starts stops every box" grep -q "stopping every box" early.log
check "service: a SIGTERM while boxd starts: the socket is removed" test ! -e "$early"

# socket activation (packaging/systemd/boxd.socket): the listener arrives as fd 3
act="$W/act.sock"
python3 - "$RB/boxd" "$act" <<'PY' 2>act.log &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[2]); s.listen(8)
os.chmod(sys.argv[2], 0o666)
pid = os.fork()
if pid == 0:
    os.dup2(s.fileno(), 3)
    os.environ["LISTEN_PID"] = str(os.getpid())
    os.environ["LISTEN_FDS"] = "1"
    os.execv(sys.argv[1], ["boxd", "--listen", "/nonexistent/unused.sock"])
s.close()
with open(sys.argv[2] + ".pid", "w") as f:
    f.write(str(pid))
os.waitpid(pid, 0)
PY
ap=$!
_run_pids+=("$ap")
for _ in $(seq 50); do BOX_SOCKET="$act" "$RB/boxctl" ps >/dev/null 2>&1 && break; sleep 0.1; done
BOX_SOCKET="$act" "$RB/boxctl" run -q -c echo.ini 2>act.err
check "socket activation: boxd serves the fd it was given (status 5)" test $? = 5
check "socket activation: no embedded boxd" test "$(grep -c embedded act.err)" = 0
[ -s "$act.pid" ] && kill -TERM "$(cat "$act.pid")"
wait "$ap"
tap_done
