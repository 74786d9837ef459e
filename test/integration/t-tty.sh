#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-tty.sh — boxctl's stdio relay (docs/sandbox.md): no fd of boxctl's own
# enters a box. A terminal on any of fds 0-2 becomes the box's own pty
# slave (stdin /dev/null and stdout a terminal included), every other fd a
# pipe boxctl relays (stdout to a host file: the agent sees a pipe, cannot
# truncate the file, and the output arrives); keystrokes reach the agent and
# the terminal's modes come back; a root-owned 0600 terminal works for
# boxtest (the relay uses the inherited fd, nothing reopens it); a terminal
# that goes away without a SIGHUP ends the box and frees its name; 20 MB of
# stdout arrive whole; all of it with an embedded boxd and, as root, through
# a service boxd.
# Terminals come from tty-drive.py (python3's pty module), which does not
# make them the controlling terminal, so no SIGHUP ever arrives from them.
. test/lib.sh
. test/integration/lib-run.sh
set -u

DRIVE="$W/tty-drive.py"
cp test/integration/tty-drive.py "$DRIVE"
chmod 755 "$DRIVE"
cd "$W"
mkdir proj
chmod 755 proj
cat >proj/probe.py <<'PY'
import errno, os, sys, time
mode = sys.argv[1] if len(sys.argv) > 1 else ""
def info(i):
    try:
        link = os.readlink("/proc/self/fd/%d" % i)
    except OSError:
        link = "?"
    st = os.fstat(i)
    own = int(os.isatty(i) and st.st_dev == os.stat("/dev/pts/ptmx").st_dev)
    return "fd%d=%s dev=%d:%d tty=%d ownpts=%d" % (i, link, st.st_dev, st.st_ino, os.isatty(i), own)
if mode == "fds":
    for i in range(3):
        print(info(i))
elif mode == "trunc":
    print("line1", flush=True)
    try:
        os.ftruncate(1, 0)
        r = "ok"
    except OSError as e:
        r = errno.errorcode[e.errno]
    print("ftruncate=" + r)
    print(info(1))
elif mode == "keys":
    print("ready", flush=True)
    print("got=" + sys.stdin.readline().strip(), flush=True)
elif mode == "size":
    sz = os.get_terminal_size(1)
    print("size=%dx%d" % (sz.lines, sz.columns))
elif mode == "resize":
    import signal
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGWINCH])  # no race with "ready"
    print("ready", flush=True)
    signal.sigwait([signal.SIGWINCH])
    sz = os.get_terminal_size(1)
    print("resized=%dx%d" % (sz.lines, sz.columns), flush=True)
elif mode == "sleep":
    print("ready", flush=True)
    time.sleep(60)
elif mode == "big":
    b = b"x" * 65536
    for _ in range(int(sys.argv[2]) * 16):
        sys.stdout.buffer.write(b)
elif mode == "stdin":
    print("stdin-bytes=%d" % len(sys.stdin.buffer.read()))
else:
    print("quick-ok")
PY
chmod 644 proj/probe.py
# The box name carries this file's prefix (tests run side by side).
cat >tty.ini <<INI
[box]
name = at-tty-$$

[agent]
command = /usr/bin/python3 probe.py
workspace = $W/proj

[agent.filesystem]
read = $W/proj
INI
chmod 644 tty.ini

# field NAME FILE: the value of NAME=... (first match) in FILE.
field() { grep -o "$1=[^ ]*" "$2" | head -n1 | cut -d= -f2-; }

# run_checks LABEL: the checks, with whatever boxd BOX_SOCKET leads to.
run_checks() {
	local L=$1

	# 1. stdin /dev/null, stdout and stderr the terminal: the box's own pty, not the host's.
	"$DRIVE" --stdin null --out "$L.fds.out" -- "$RB/boxctl" run -q -c tty.ini -- fds >"$L.fds.drv"
	check "$L: stdin /dev/null, stdout a terminal: boxctl exits 0" grep -qx "rc=0" "$L.fds.drv"
	check "$L: the agent's fd 1 is a pts of the box's own devpts" \
		grep -qE "^fd1=/dev/pts/[0-9]+ .* tty=1 ownpts=1" "$L.fds.out"
	local host agent
	host=$(field host_pts "$L.fds.drv")
	agent=$(grep -o "^fd1=[^ ]* dev=[0-9:]*" "$L.fds.out" | sed 's/.*dev=//')
	check "$L: the agent's fd 1 is not the host terminal (host $host, agent $agent)" \
		test -n "$host" -a -n "$agent" -a "$host" != "$agent"
	check "$L: the agent's fd 2 is the box's pty too" grep -qE "^fd2=/dev/pts/[0-9]+ .* ownpts=1" "$L.fds.out"
	check "$L: the agent's fd 0 is a pipe (boxctl's stdin was /dev/null)" grep -qE "^fd0=pipe:\[" "$L.fds.out"

	# No host file either: stdout to a file is a pipe in the box.
	echo keep >"$L.host-file"
	"$RB/boxctl" run -q -c tty.ini -- fds >"$L.host-file" 2>"$L.err" </dev/null
	check "$L: stdout a host file: exit 0" test $? = 0
	check "$L: the agent's fds 0-2 are pipes, no host file" \
		test "$(grep -cE '^fd[012]=pipe:\[' "$L.host-file")" = 3
	check "$L: the host file's path is not visible inside" test "$(grep -c "$W" "$L.host-file")" = 0
	"$RB/boxctl" run -q -c tty.ini -- trunc >"$L.host-file" 2>"$L.err" </dev/null
	check "$L: the agent cannot ftruncate boxctl's stdout file (EINVAL on its pipe)" \
		grep -qx "ftruncate=EINVAL" "$L.host-file"
	check "$L: output written before the ftruncate arrived in the file" grep -qx "line1" "$L.host-file"

	# An O_APPEND stdout (splice refuses it: boxctl copies instead).
	echo first >"$L.append"
	"$RB/boxctl" run -q -c tty.ini -- quick >>"$L.append" 2>"$L.err" </dev/null
	check "$L: stdout opened for append: the output is appended" \
		test "$(cat "$L.append")" = "$(printf 'first\nquick-ok')"

	# stdin a pipe: the agent reads it to EOF.
	out=$(head -c 100000 /dev/zero | "$RB/boxctl" run -q -c tty.ini -- stdin 2>"$L.err")
	check "$L: stdin a pipe: relayed to EOF (100000 bytes)" test "$out" = "stdin-bytes=100000"

	# 20 MB of stdout through the relay, whole.
	n=$("$RB/boxctl" run -q -c tty.ini -- big 20 2>"$L.err" </dev/null | wc -c)
	check "$L: 20 MiB of stdout arrive whole ($n bytes)" test "$n" = 20971520

	# Backpressure: a reader that stops stalls the agent; boxctl does not buffer it all.
	rm -f "$L.fifo"
	mkfifo "$L.fifo"
	"$RB/boxctl" run -q -c tty.ini -- big 40 >"$L.fifo" 2>"$L.err" </dev/null &
	local bp=$!
	exec 7<"$L.fifo"
	# The agent first has to start (a loaded machine: seconds); then, unread, it must stay
	# blocked in its writes rather than finish.
	for _ in $(seq 600); do pgrep -f "probe.py big 40" >/dev/null && break; sleep 0.1; done
	sleep 2
	check "$L: a stalled reader stalls the agent (it is still writing)" pgrep -f "probe.py big 40"
	n=$(wc -c <&7)
	exec 7<&-
	wait "$bp"
	check "$L: then all 40 MiB arrive ($n bytes) and boxctl exits 0" test "$n" = 41943040 -a $? = 0

	# The start-up disclosure still comes first, on stderr.
	"$RB/boxctl" run -c tty.ini -- quick >"$L.q.out" 2>"$L.q.err" </dev/null
	check "$L: the disclosure is printed (box name and id)" \
		grep -qE "^box: box at-tty-$$, id [0-9a-f]{12}" "$L.q.err"
	check "$L: the agent's output after it" grep -qx "quick-ok" "$L.q.out"

	# The window size is the terminal's from the agent's first instruction.
	"$DRIVE" --winsize 33x101 --out "$L.size.out" -- "$RB/boxctl" run -q -c tty.ini -- size >/dev/null
	check "$L: the agent's terminal has the caller's size (33x101)" grep -q "size=33x101" "$L.size.out"

	"$DRIVE" --winsize 33x101 --wait ready --resize 40x120 --out "$L.resize.out" -- \
		"$RB/boxctl" run -q -c tty.ini -- resize >/dev/null
	check "$L: a window-size change reaches the agent (SIGWINCH, 40x120)" \
		grep -q "resized=40x120" "$L.resize.out"

	# 2. Keystrokes reach the agent; the terminal's modes are restored.
	"$DRIVE" --wait ready --type 'typed-at-terminal\r' --out "$L.keys.out" -- \
		"$RB/boxctl" run -q -c tty.ini -- keys >"$L.keys.drv"
	check "$L: stdin a terminal: keystrokes reach the agent" grep -q "got=typed-at-terminal" "$L.keys.out"
	check "$L: boxctl exits 0" grep -qx "rc=0" "$L.keys.drv"
	check "$L: the terminal's modes are restored after raw mode" grep -qx "modes=same" "$L.keys.drv"

	# 10. The terminal goes away (no SIGHUP): the box ends and its name is free.
	"$DRIVE" --wait ready --hangup --timeout 20 -- "$RB/boxctl" run -q -c tty.ini -- sleep >"$L.hup.drv"
	check "$L: hang-up without SIGHUP: boxctl exits (129)" grep -qx "rc=129" "$L.hup.drv"
	check "$L: hang-up: no trampoline of the box is left" no_process "python3 probe.py sleep"
	for _ in $(seq 30); do
		"$RB/boxctl" ps 2>/dev/null | grep -q "^at-tty-$$	" || break
		sleep 0.1
	done
	"$RB/boxctl" ps >"$L.ps" 2>&1
	check "$L: hang-up: ps no longer lists the box" test "$(grep -c "^at-tty-$$	" "$L.ps")" = 0
	out=$("$RB/boxctl" run -q -c tty.ini -- quick 2>"$L.err" </dev/null)
	check "$L: hang-up: a second run of the same box starts" test "$out" = quick-ok
}

run_checks embedded

if [ "$(id -u)" -eq 0 ] && have_boxtest; then
	# 9. A terminal boxtest cannot reopen (root-owned 0600): keys still arrive.
	"$DRIVE" --slave-mode 0600 --wait ready --type 'typed-by-user\r' --out u.keys.out -- \
		setpriv --reuid boxtest --regid "$(id -g boxtest)" --init-groups \
		env -u XDG_RUNTIME_DIR -u XDG_STATE_HOME HOME="$(getent passwd boxtest | cut -d: -f6)" \
		BOX_SOCKET="$BOX_SOCKET" "$RB/boxctl" run -q -c tty.ini -- keys >u.keys.drv
	check "boxtest: the terminal is root's, mode 0600" grep -q "host_pts_path=/dev/pts/" u.keys.drv
	check "boxtest at a root-owned 0600 terminal: the typed line reaches the agent" \
		grep -q "got=typed-by-user" u.keys.out
	check "boxtest at a root-owned 0600 terminal: boxctl exits 0" grep -qx "rc=0" u.keys.drv
	"$DRIVE" --stdin null --out u.fds.out -- setpriv --reuid boxtest --regid "$(id -g boxtest)" \
		--init-groups env -u XDG_RUNTIME_DIR -u XDG_STATE_HOME \
		HOME="$(getent passwd boxtest | cut -d: -f6)" BOX_SOCKET="$BOX_SOCKET" \
		"$RB/boxctl" run -q -c tty.ini -- fds >u.fds.drv
	check "boxtest: stdin /dev/null, stdout a terminal: the box's own pty" \
		grep -qE "^fd1=/dev/pts/[0-9]+ .* ownpts=1" u.fds.out
	mkdir u && chown boxtest u
	as_boxtest "'$RB/boxctl' run -q -c tty.ini -- trunc </dev/null >u/file 2>u/err"
	check "boxtest: stdout a host file: a pipe inside, not truncatable" \
		grep -qx "ftruncate=EINVAL" u/file
	check "boxtest: the output arrived in the file" grep -qx "line1" u/file
	"$DRIVE" --wait ready --hangup --timeout 20 -- setpriv --reuid boxtest \
		--regid "$(id -g boxtest)" --init-groups env -u XDG_RUNTIME_DIR -u XDG_STATE_HOME \
		HOME="$(getent passwd boxtest | cut -d: -f6)" BOX_SOCKET="$BOX_SOCKET" \
		"$RB/boxctl" run -q -c tty.ini -- sleep >u.hup.drv
	check "boxtest: hang-up without SIGHUP: boxctl exits (129)" grep -qx "rc=129" u.hup.drv
	check "boxtest: hang-up: no trampoline of the box is left" no_process "python3 probe.py sleep"
	out=$(as_boxtest "'$RB/boxctl' run -q -c tty.ini -- quick </dev/null" 2>u.err)
	check "boxtest: hang-up: a second run of the same box starts" test "$out" = quick-ok
else
	skip "boxtest at a root-owned 0600 terminal" "needs root and the boxtest user"
fi

if [ "$(id -u)" -eq 0 ]; then
	export BOX_SOCKET="$W/boxd.sock"
	"$RB/boxd" --listen "$BOX_SOCKET" 2>boxd.log &
	sp=$!
	_run_pids+=("$sp")
	for _ in $(seq 50); do [ -S "$BOX_SOCKET" ] && break; sleep 0.1; done
	check "service: boxd listens" test -S "$BOX_SOCKET"
	run_checks service
	kill "$sp" 2>/dev/null
	wait "$sp" 2>/dev/null
else
	skip "service boxd" "needs root"
fi
tap_done
