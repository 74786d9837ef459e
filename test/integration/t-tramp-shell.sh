#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-tramp-shell.sh — box-trampoline's SANDBOX_SHELL (box-shell's sandbox, docs/design.md) and a
# tool sandbox's stdio, run for real: box-sandbox-run plays boxd (builds the plan, hands it to
# box-trampoline on fd 3, reads fd 4), test/tramp/probe.c is the workload.
#
# box-shell's sandbox: the passed fds (trampoline fds 5.. -> workload fds 3..) arrive and nothing
# else is open; its binary (workload_bin) runs from outside every grant, read-only and alone in
# its directory; the agent's Landlock rights (a file outside the grants is unreachable, Landlock
# refuses what the agent may not do); only lo, no route, no listener; its own PID namespace; the
# box seccomp filter; no /run/box; /tmp, /var/tmp, /dev/shm and HOME shared with an agent run on
# the same runtime dir; the peer of a passed fd sees EOF when box-shell closes it; bad plans
# refused with the field named. A tool and box-shell: stdio as pipes streams, stdio on a terminal
# of another devpts instance (the host's) works; a contained tool's /run/box holds only ca.pem. As root, then as the ordinary user boxtest (binaries copied to a 0755 dir).
# Trusts: nothing; test code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
BOX_BIN=$(cd "$BOX_BIN" && pwd)
PY=/usr/bin/python3

suite() {
	local label=$1 bin=$2
	local run=$bin/box-sandbox-run
	export BOX_BIN=$bin
	local T
	T=$(mktemp -d /tmp/boxtr.XXXXXX) || { not_ok "$label: mktemp"; return; }
	chmod 755 "$T"
	export BOX_SANDBOX_RUN_BASE=$T
	mkdir -p "$T/bin" "$T/ws" "$T/ro" "$T/outside" "$T/rt"
	chmod 700 "$T/rt"
	cp "$bin/box-test-tramp-probe" "$T/bin/probe"
	echo beside >"$T/bin/beside"
	echo secret >"$T/outside/secret"
	echo ro >"$T/ro/file"
	cp "$bin/box-test-tramp-probe" "$T/ws/copy"
	cp "$bin/box-test-tramp-probe" "$T/ws/tool-probe"
	printf zero >"$T/tok0"
	printf one >"$T/tok1"
	printf two >"$T/tok2"
	echo "not a key" >"$T/ca.pem"
	ln -s "$T/bin/probe" "$T/probe-link"
	ln -s "$T/bin" "$T/bin-link"
	local P=$T/bin/probe
	local S=(--shell --write "$T/ws" --read "$T/ro" --workspace "$T/ws" --workload-bin "$P")

	# case_ NAME [box-sandbox-run options] -- ARGV: the probe's property holds.
	case_() {
		local name=$1 out rc
		shift
		out=$(cd "$T/ws" && timeout 60 "$run" "$@" </dev/null 2>&1)
		rc=$?
		if [ $rc -eq 0 ]; then
			ok "$label: $name"
		else
			not_ok "$label: $name (exit $rc)"
			diag "$out"
		fi
	}
	# refused NAME TEXT [options] -- ARGV: the start fails, naming TEXT.
	refused() {
		local name=$1 text=$2 out rc
		shift 2
		out=$(cd "$T/ws" && timeout 60 "$run" "$@" </dev/null 2>&1)
		rc=$?
		if [ $rc -eq 1 ] && printf '%s\n' "$out" | grep -qF -- "$text"; then
			ok "$label: refused: $name"
		else
			not_ok "$label: refused: $name (exit $rc)"
			diag "$out"
		fi
	}

	# --- box-shell's sandbox -------------------------------------------------------------------
	exec 7<"$T/tok0" 8<"$T/tok1" 9<"$T/tok2"
	case_ "shell: three passed fds arrive as 3, 4, 5 and nothing else is open" \
		"${S[@]}" --pass-fd 7 --pass-fd 8 --pass-fd 9 -- "$P" fds 3 zero one two
	case_ "shell: passed in another order" \
		"${S[@]}" --pass-fd 9 --pass-fd 7 -- "$P" fds 2 two zero
	case_ "shell: one passed fd; the driver's other open fds are closed" \
		"${S[@]}" --pass-fd 8 -- "$P" fds 1 one
	case_ "shell: no passed fd: only 0, 1, 2" "${S[@]}" -- "$P" fds 0
	refused "a passed fd that is not open (file descriptors)" \
		"sandbox setup failed at file descriptors: fd 6 is not open" \
		"${S[@]}" --pass-fd 7 --pass-fds 2 -- "$P" true
	exec 7<&- 8<&- 9<&-
	local out
	out=$(cd "$T/ws" && timeout 60 $PY - "$run" "${S[@]}" -- "$P" drop3 <<'EOF' 2>&1
import os, select, subprocess, sys
r, w = os.pipe()
p = subprocess.Popen(sys.argv[1:2] + ["--pass-fd", str(w)] + sys.argv[2:], pass_fds=(w,),
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
os.close(w)
line = p.stdout.readline()
# The workload closed its fd 3 and still runs: EOF now means nobody else (the
# outer trampoline, PID 1) kept a copy of the passed end.
ready, _, _ = select.select([r], [], [], 10)
eof = bool(ready) and os.read(r, 1) == b""
running = p.poll() is None
p.stdin.close()
print(line.decode().strip(), "eof" if eof else "no-eof", "running" if running else "exited", p.wait())
EOF
	)
	same "$label: shell: a passed fd's peer sees EOF when box-shell closes it (no other copy)" \
		"closed eof running 0" "$out"
	case_ "shell: its binary runs from outside the grants, read-only, alone in its directory" \
		"${S[@]}" -- "$P" self "$P"
	case_ "shell: files outside the grants (beside its binary too) are not in the view" \
		"${S[@]}" -- "$P" enoent "$T/outside/secret" "$T/bin/beside" "$T/tok0" "$T/probe-link"
	case_ "shell: the agent's Landlock rights (grant writable; /proc write, /dev/null ioctl refused)" \
		"${S[@]}" -- "$P" landlock "$T/ws"
	case_ "shell: a copy of a program in its grants does not execute (agent view: noexec)" \
		"${S[@]}" -- "$P" noexec "$T/ws/copy"
	case_ "shell: only lo, no route, nothing listening (no gateway listener)" "${S[@]}" -- "$P" net
	case_ "shell: its own PID namespace" "${S[@]}" -- "$P" pidns
	case_ "shell: the box seccomp filter" "${S[@]}" -- "$P" seccomp
	case_ "shell: no /run/box" "${S[@]}" -- "$P" ls /run/box -
	mkdir -p "$T/wbin"
	cp "$bin/box-test-tramp-probe" "$T/wbin/probe"
	case_ "shell: its binary inside a write grant stays read-only" \
		--shell --write "$T/wbin" --workspace "$T/wbin" --workload-bin "$T/wbin/probe" -- \
		"$T/wbin/probe" self "$T/wbin/probe" granted-rw
	case_ "shell: its binary inside a read grant runs" \
		--shell --read "$T/wbin" --workspace "$T/wbin" --workload-bin "$T/wbin/probe" -- \
		"$T/wbin/probe" self "$T/wbin/probe" granted
	local realbin
	realbin=$(readlink -f "$bin/box-test-tramp-probe")
	case_ "shell: a binary from the build tree (outside /tmp) runs too" \
		--shell --write "$T/ws" --workspace "$T/ws" --workload-bin "$realbin" -- "$realbin" self "$realbin"

	# The agent's /tmp, /var/tmp, /dev/shm and HOME are box-shell's (one runtime dir).
	local home
	home=$(getent passwd "$(id -un)" | cut -d: -f6)
	local A=(--exec "$T/bin" --write "$T/ws" --workspace "$T/ws" --runtime-dir "$T/rt")
	local ok_share=1 d
	for d in /tmp /var/tmp /dev/shm "$home"; do
		(cd "$T/ws" && "$run" "${A[@]}" -- "$P" write "$d/from-agent" "agent:$d") </dev/null ||
			ok_share=0
	done
	case_ "shell: reads what the agent wrote to /tmp" --runtime-dir "$T/rt" "${S[@]}" -- \
		"$P" read /tmp/from-agent "agent:/tmp"
	case_ "shell: reads what the agent wrote to /var/tmp" --runtime-dir "$T/rt" "${S[@]}" -- \
		"$P" read /var/tmp/from-agent "agent:/var/tmp"
	case_ "shell: reads what the agent wrote to /dev/shm" --runtime-dir "$T/rt" "${S[@]}" -- \
		"$P" read /dev/shm/from-agent "agent:/dev/shm"
	case_ "shell: reads what the agent wrote to its ungranted HOME" --runtime-dir "$T/rt" \
		"${S[@]}" -- "$P" read "$home/from-agent" "agent:$home"
	case_ "shell: writes to /tmp" --runtime-dir "$T/rt" "${S[@]}" -- "$P" write /tmp/from-shell shell
	case_ "agent: reads what the shell wrote to /tmp" "${A[@]}" -- "$P" read /tmp/from-shell shell
	check "$label: the agent's writes landed in the runtime dir" \
		[ $ok_share -eq 1 ] && [ -f "$T/rt/tmp/from-agent" ] && [ -f "$T/rt/home/from-agent" ]

	# Bad plans: the trampoline refuses them itself (--no-validate skips the driver's check).
	local N=(--no-validate)
	refused "shell without workload_bin" "at plan: workload_bin: a box-shell plan needs it" \
		"${N[@]}" --shell --write "$T/ws" --workspace "$T/ws" -- "$P" true
	refused "shell whose argv[0] is not workload_bin" "at plan: argv[0] is not workload_bin" \
		"${N[@]}" "${S[@]}" -- "$T/ws/copy" true
	refused "shell with ca.pem" "at plan: runtime.ca_pem: box-shell has no /run/box" \
		"${N[@]}" "${S[@]}" --ca-pem "$T/ca.pem" -- "$P" true
	refused "shell with /run/box/bin" "at plan: runtime: /run/box/bin and sockets are for the agent" \
		"${N[@]}" "${S[@]}" --run-box-bin "$T/bin" -- "$P" true
	refused "shell with the shell alias" "at plan: runtime: /run/box/bin and sockets are for the agent" \
		"${N[@]}" "${S[@]}" --shell-alias "$T/ws/copy" -- "$P" true
	refused "shell with a gateway port" "at plan: gateway_port: box-shell has no gateway listener" \
		"${N[@]}" "${S[@]}" --gateway-port 8080 -- "$P" true
	refused "shell with a pty" "at plan: pty_fds: box-shell gets no terminal" \
		"${N[@]}" "${S[@]}" --pty -- "$P" true
	refused "shell on the host network" "at plan: contain_egress = false is for tools only" \
		"${N[@]}" "${S[@]}" --no-contain-egress -- "$P" true
	exec 7<"$T/tok0"
	refused "four passed fds" "at plan: pass_fds: 4 (max 3)" \
		"${N[@]}" "${S[@]}" --pass-fd 7 --pass-fd 7 --pass-fd 7 --pass-fd 7 -- "$P" true
	refused "passed fds for a tool" "at plan: pass_fds: for a box-shell plan only" \
		"${N[@]}" --tool --write "$T/ws" --workspace "$T/ws" --pass-fd 7 -- "$T/ws/tool-probe" true
	refused "passed fds for the agent" "at plan: pass_fds: for a box-shell plan only" \
		"${N[@]}" --write "$T/ws" --workspace "$T/ws" --pass-fd 7 -- "$P" true
	exec 7<&-
	refused "workload_bin for a tool" "at plan: workload_bin: for a box-shell plan only" \
		"${N[@]}" --tool --write "$T/ws" --workspace "$T/ws" --workload-bin "$T/ws/tool-probe" -- \
		"$T/ws/tool-probe" true
	refused "a masked workload_bin" "at plan: workload_bin: $T/ws/copy is masked" \
		"${N[@]}" --shell --write "$T/ws" --deny "$T/ws/copy" --workspace "$T/ws" \
		--workload-bin "$T/ws/copy" -- "$T/ws/copy" true
	refused "workload_bin is a directory" "at mount view: workload_bin $T/bin: not a regular file" \
		--shell --write "$T/ws" --workspace "$T/ws" --workload-bin "$T/bin" -- "$T/bin" true
	refused "workload_bin is a symbolic link (not followed)" \
		"at mount view: workload_bin $T/probe-link: not a regular file" \
		--shell --write "$T/ws" --workspace "$T/ws" --workload-bin "$T/probe-link" -- "$T/probe-link" true
	refused "a symbolic link on workload_bin's path (not followed)" \
		"at mount view: $T/bin-link/probe: cannot open (a symbolic link in the path)" \
		--shell --write "$T/ws" --workspace "$T/ws" --workload-bin "$T/bin-link/probe" -- \
		"$T/bin-link/probe" true

	# --- stdio of a tool (box-shell hands it the alias's fds 0-2) and of box-shell -------------
	cat >"$T/drive-pipe.py" <<'EOF'
import subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE)
# Streaming: the workload's first line arrives while its stdin is still open.
first = p.stdout.readline()
p.stdin.write(b"abc\n"); p.stdin.flush()
second = p.stdout.readline()
p.stdin.write(b"def\n"); p.stdin.close()
rest = p.stdout.read()
err = p.stderr.read()
rc = p.wait()
print(repr(first), repr(second), repr(rest), repr(err), rc)
EOF
	cat >"$T/drive-pty.py" <<'EOF'
import fcntl, os, pty, struct, subprocess, sys, termios, time
master, slave = pty.openpty()          # the host's devpts: not the sandbox's own instance
fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 99, 0, 0))
p = subprocess.Popen(sys.argv[1:], stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
os.close(slave)
buf = b""
deadline = time.time() + 20
def until(word):
    global buf
    while word not in buf and time.time() < deadline:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        buf += chunk
until(b"tty ok")
os.write(master, b"hello\n")
until(b"got hello")
rc = p.wait(timeout=20)
print("tty ok" in buf.decode(errors="replace"), "got hello" in buf.decode(errors="replace"), rc)
if rc:
    print(buf.decode(errors="replace"))
EOF
	local TOOL=(--tool --write "$T/ws" --workspace "$T/ws")
	local who
	for who in tool shell; do
		local W=("${TOOL[@]}" -- "$T/ws/tool-probe")
		[ $who = shell ] && W=("${S[@]}" -- "$P")
		out=$(cd "$T/ws" && timeout 60 $PY "$T/drive-pipe.py" "$run" "${W[@]}" pipe 2>&1)
		same "$label: $who: stdio pipes stream both ways, stderr apart" \
			"b'ready\n' b'ABC\n' b'DEF\n' b'err:abc\nerr:def\n' 0" "$out"
		out=$(cd "$T/ws" && timeout 60 $PY "$T/drive-pty.py" "$run" "${W[@]}" tty 33 99 2>&1)
		same "$label: $who: stdio on a terminal of another devpts instance (size, termios, I/O)" \
			"True True 0" "$out"
	done
	# The alias's case: the agent, at the pty of its own devpts, hands that terminal to
	# box-shell over a socket in the shared /tmp (SCM_RIGHTS); box-shell uses it.
	mkdir -p "$T/rt2"
	chmod 700 "$T/rt2"
	(cd "$T/ws" && exec timeout 60 "$run" --runtime-dir "$T/rt2" "${S[@]}" -- \
		"$P" recvtty /tmp/tty.sock) </dev/null >"$T/recv.out" 2>&1 &
	local rpid=$!
	out=$(cd "$T/ws" && timeout 60 "$run" --pty --runtime-dir "$T/rt2" --exec "$T/bin" \
		--write "$T/ws" --workspace "$T/ws" -- "$P" sendtty /tmp/tty.sock </dev/null 2>&1)
	local src=$?
	wait $rpid
	local rrc=$?
	if [ $src -eq 0 ] && [ $rrc -eq 0 ] && printf '%s' "$out" | grep -q shell-wrote; then
		ok "$label: shell: uses the agent's own pty handed over SCM_RIGHTS (size, termios, write)"
	else
		not_ok "$label: shell: uses the agent's own pty handed over SCM_RIGHTS (exits $src $rrc)"
		diag "$out" "$(cat "$T/recv.out")"
	fi
	case_ "tool: contained, /run/box holds only ca.pem" "${TOOL[@]}" --ca-pem "$T/ca.pem" -- \
		"$T/ws/tool-probe" ls /run/box ca.pem
	case_ "tool: without ca.pem no /run/box" "${TOOL[@]}" -- "$T/ws/tool-probe" ls /run/box -
	case_ "tool: on the host network no /run/box" "${TOOL[@]}" --no-contain-egress -- \
		"$T/ws/tool-probe" ls /run/box -
	refused "tool with the aliases" "at plan: runtime: /run/box/bin and sockets are for the agent" \
		"${N[@]}" "${TOOL[@]}" --run-box-bin "$T/bin" -- "$T/ws/tool-probe" true

	rm -rf "$T"
}

# same NAME WANT GOT: ok when GOT is exactly WANT.
same() {
	if [ "$3" = "$2" ]; then
		ok "$1"
	else
		not_ok "$1"
		printf '%s\n' "$3" | sed 's/^/#   /'
	fi
}

if [ "${1:-}" = "--inner" ]; then
	suite "$2" "$3"
	tap_done
	exit
fi

if [ "$(id -u)" -eq 0 ]; then
	B=$(mktemp -d /tmp/boxtr-bin.XXXXXX)
	chmod 755 "$B"
	for p in box-sandbox-run box-trampoline box-test-tramp-probe; do
		cp "$BOX_BIN/$p" "$B/$p" || { not_ok "$p is built"; tap_done; exit; }
	done
	chmod 755 "$B"/*
	suite root "$BOX_BIN"
	if ! id boxtest >/dev/null 2>&1; then
		useradd --create-home --shell /bin/bash boxtest >/dev/null 2>&1 ||
			not_ok "create the user boxtest"
	fi
	if id boxtest >/dev/null 2>&1; then
		runuser -u boxtest -- env -i PATH=/usr/bin:/bin BOX_BIN="$B" \
			ASAN_OPTIONS="${ASAN_OPTIONS:-}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}" \
			bash "$here/t-tramp-shell.sh" --inner boxtest "$B"
	fi
	rm -rf "$B"
else
	suite "$(id -un)" "$BOX_BIN"
fi
tap_done
