#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# escape.sh — the escape suite: every case of docs/sandbox.md "Expected outcomes".
#
# Each case runs the static probe as the agent in a real box (box-sandbox-run
# plays boxd, box-trampoline builds the sandbox); the probe runs a positive
# control, then one escape attempt, and exits 0 only when the attempt fails
# with the specified errno (2 when the control failed: an error, not a pass).
# As root the suite runs twice: as root, then as the ordinary user `boxtest`
# (created with a home when missing), from copies of the binaries in a 0755
# directory under /tmp. Fork bomb: pids_max through the cgroup v1 pids
# controller as root, RLIMIT_NPROC as an ordinary user (docs/sandbox.md).
# Trusts: nothing; it is test code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
BOX_BIN=$(cd "$BOX_BIN" && pwd) # the cases run in other directories
export BOX_BIN

PY=/usr/bin/python3

# same NAME WANT GOT: ok when a whole program printed exactly WANT; else show what it said.
same() {
	if [ "$3" = "$2" ]; then
		ok "$1"
	else
		not_ok "$1"
		printf '%s\n' "$3" | sed 's/^/#   /'
	fi
}

# --- one run of the suite as the current user --------------------------------
suite() {
	local label=$1 bin=$2
	local run=$bin/box-sandbox-run
	export BOX_BIN=$bin # box-sandbox-run runs $BOX_BIN/box-trampoline
	local T
	T=$(mktemp -d /tmp/boxesc.XXXXXX) || { not_ok "$label: mktemp"; return; }
	chmod 755 "$T"
	export BOX_SANDBOX_RUN_BASE=$T # runtime dirs, also of boxes killed on purpose
	mkdir -p "$T/bin" "$T/ro" "$T/ws/denydir" "$T/ws/sub/deep" "$T/ws/sub2"
	cp "$bin/box-escape-probe" "$T/bin/probe"
	cp "$bin/box-escape-probe" "$T/ro/probe-copy"
	echo data >"$T/ro/file"
	echo secret >"$T/secret"
	echo plain >"$T/ws/plain"
	echo denied >"$T/ws/denied"
	echo denied2 >"$T/ws/sub/deep/denied2"
	echo "[box]" >"$T/ws/box.ini"
	echo "permit(principal, action, resource);" >"$T/ws/policy.cedar"
	local suid=""
	if [ -e "$bin/probe-suid" ]; then
		suid=$bin/probe-suid
	fi

	# Host-side listeners the box must not reach.
	local abstract="boxesc-$$-$label"
	$PY - "$T/host.sock" "$abstract" "$T/port" <<'EOF' &
import socket, sys, time, os
tcp = socket.socket(); tcp.bind(("127.0.0.1", 0)); tcp.listen(8)
ab = socket.socket(socket.AF_UNIX); ab.bind("\0" + sys.argv[2]); ab.listen(8)
pa = socket.socket(socket.AF_UNIX); pa.bind(sys.argv[1]); pa.listen(8)
open(sys.argv[3] + ".tmp", "w").write(str(tcp.getsockname()[1]))
os.rename(sys.argv[3] + ".tmp", sys.argv[3])
time.sleep(600)
EOF
	local lpid=$!
	for _ in $(seq 100); do [ -e "$T/port" ] && break; sleep 0.05; done
	local port
	port=$(cat "$T/port" 2>/dev/null)

	local base=(--exec "$T/bin" --read "$T/ro" --write "$T/ws" --workspace "$T/ws"
		--deny "$T/ws/denied" --deny "$T/ws/denydir" --deny "$T/ws/sub/deep/denied2"
		--deny "$T/ws/box.ini" --deny "$T/ws/policy.cedar")
	local P=$T/bin/probe

	# case NAME [box-sandbox-run options] -- ARGV
	case_() {
		local name=$1
		shift
		local out rc
		out=$(cd "$T/ws" && timeout 60 "$run" "$@" </dev/null 2>&1)
		rc=$?
		if [ $rc -eq 0 ]; then
			ok "$label: $name"
		else
			not_ok "$label: $name (exit $rc)"
			diag "$out"
		fi
	}

	case_ "read outside grants: ENOENT" "${base[@]}" -- "$P" read-outside "$T/ro/file" "$T/secret"
	case_ "write inside a read grant: EROFS" "${base[@]}" -- "$P" write-ro "$T/ws" "$T/ro/file"
	case_ "deny in a writable tree: EACCES, rename/unlink EBUSY, link EXDEV" "${base[@]}" -- \
		"$P" deny "$T/ws/plain" "$T/ws/denied" "$T/ws/denydir"
	case_ "directories above a mask: EBUSY" "${base[@]}" -- "$P" deny-parent "$T/ws/sub" "$T/ws/sub2"
	case_ "box.ini masked" "${base[@]}" -- "$P" deny "$T/ws/plain" "$T/ws/box.ini"
	case_ "policy file masked" "${base[@]}" -- "$P" deny "$T/ws/plain" "$T/ws/policy.cedar"
	case_ "symlink and hard link to a secret outside: ENOENT" "${base[@]}" -- \
		"$P" symlink-secret "$T/ws" "$T/secret"
	case_ "exec outside exec grants and of a copy in the workspace: EACCES" "${base[@]}" -- \
		"$P" exec "$P" "$T/ro/probe-copy" "$T/ws"
	case_ "ld.so on a copy in the noexec workspace fails" "${base[@]}" -- "$P" ldso "$T/ws"
	case_ "fexecve of a memfd: EPERM" "${base[@]}" -- "$P" memfd "$P"
	# exec_system = false: EXECUTE on the exec entries only (a dynamic one with its loader,
	# as boxd lists it); shared libraries still map.
	local loader
	loader=$(readlink -f /lib64/ld-linux-x86-64.so.2)
	case_ "execve outside the exec list (exec_system = false): EACCES" --no-exec-system \
		--exec /usr/bin/id --exec "$loader" "${base[@]}" -- "$P" execlist "$P" /usr/bin/id
	if [ ! -e /proc/sys/vm/memfd_noexec ]; then
		skip "$label: a memfd run through /proc/self/fd/N: EACCES" \
			"this kernel ($(uname -r)) has no vm.memfd_noexec (Linux 6.3)"
	elif [ "$(id -u)" -eq 0 ]; then
		case_ "a memfd run through /proc/self/fd/N: EACCES (vm.memfd_noexec = 2)" \
			--no-exec-system "${base[@]}" -- "$P" memfd-proc "$P"
	else
		skip "$label: a memfd run through /proc/self/fd/N: EACCES" \
			"vm.memfd_noexec is set only for a box owned by root"
	fi
	case_ "/proc shows only the box, /proc/sys read-only" "${base[@]}" -- "$P" proc "$$"
	case_ "kill/ptrace a host process" "${base[@]}" -- "$P" kill "$$"
	case_ "mount, unshare, setns, pivot_root, clone3" "${base[@]}" -- "$P" namespaces
	case_ "io_uring, keyctl, bpf, perf_event_open" "${base[@]}" -- "$P" syscalls
	case_ "TIOCSTI (high bits too), TIOCLINUX" "${base[@]}" -- "$P" tty
	case_ "setuid/setgid modes (chmod g+s DIR too): EPERM in the workspace" "${base[@]}" -- \
		"$P" setid "$T/ws"
	case_ "setuid/setgid modes: EPERM in /tmp" "${base[@]}" -- "$P" setid /tmp
	case_ "openat2: ENOSYS" "${base[@]}" -- "$P" openat2 "$T/ws"
	case_ "TIOCSETD: EPERM (TIOCGETD works)" "${base[@]}" -- "$P" ldisc
	case_ "memfd_secret: EPERM" "${base[@]}" -- "$P" memfd-secret
	case_ "UDP-Lite and MPTCP sockets: EPERM (UDP, TCP work)" "${base[@]}" -- "$P" inet-protocols
	if [ -e /proc/config.gz ]; then
		case_ "/proc/kallsyms and /proc/config.gz masked" "${base[@]}" -- "$P" proc-kernel config
	else
		case_ "/proc/kallsyms masked" "${base[@]}" -- "$P" proc-kernel noconfig
		skip "$label: /proc/config.gz masked" "this kernel has no /proc/config.gz"
	fi
	case_ "/proc/1/{fd,fdinfo,environ,map_files} masked" "${base[@]}" -- "$P" proc-pid1
	# Some kernels refuse int 0x80 from 64-bit code themselves (SIGSEGV, seen
	# outside any box); seccomp's KILL_PROCESS (SIGSYS) is then never reached.
	local i80=sigsys
	case $("$P" int80-host) in Seg*) i80=segv ;; esac
	case_ "i386 int 0x80 ($i80) and x32 killed" "${base[@]}" -- "$P" int80 "$i80"
	case_ "capability sets all zero" "${base[@]}" -- "$P" caps
	if [ -n "$suid" ]; then
		case_ "a setuid binary gives nothing" --exec "$bin" "${base[@]}" -- "$P" setuid "$P" "$suid"
	else
		skip "$label: a setuid binary gives nothing" "needs root to prepare a setuid file"
	fi
	case_ "public TCP/UDP: ENETUNREACH; host loopback: ECONNREFUSED" "${base[@]}" -- \
		"$P" net "$port"
	case_ "AF_PACKET, AF_VSOCK, non-route netlink: EPERM" "${base[@]}" -- "$P" sockets
	case_ "host abstract and pathname sockets unreachable" "${base[@]}" -- \
		"$P" unix "$abstract" "$T/host.sock"
	case_ "a leaked fd is closed" --leak-fd 9 "${base[@]}" -- "$P" fds 9
	case_ "only the composed environment" --env A=1 --env "B=two words" \
		--env HOME=/nonexistent --env PATH=/usr/bin "${base[@]}" -- \
		"$P" env A=1 "B=two words" HOME=/nonexistent PATH=/usr/bin
	case_ "only the minimal device set" "${base[@]}" -- "$P" dev
	case_ "Landlock: device ioctl refused" "${base[@]}" -- "$P" landlock-ioctl
	case_ "rename across directories (REFER)" "${base[@]}" -- "$P" rename-xdir "$T/ws" ok
	case_ "the box's own pty" --pty "${base[@]}" -- "$P" pty
	cp "$bin/box-escape-probe" "$T/alias"
	local sh
	for sh in /bin/sh /usr/bin/bash /usr/bin/dash /bin/rbash; do
		[ -e "$sh" ] || continue
		# The alias is the probe: `SHELL true` exits 0 only when it runs instead.
		case_ "$sh reaches the shell alias" --shell-alias "$T/alias" "${base[@]}" -- "$sh" true
	done
	case_ "fork bomb contained by pids_max" --pids-max 24 "${base[@]}" -- "$P" forkbomb 24

	# Lifecycle: nothing outlives the box (double-fork + setsid daemons included).
	leftovers() { # processes still running the probe binary of this suite
		local p n=0
		for p in /proc/[0-9]*; do
			[ "$(readlink "$p/exe" 2>/dev/null)" = "$P" ] && n=$((n + 1))
		done
		echo $n
	}
	local rc
	(cd "$T/ws" && timeout 30 "$run" "${base[@]}" -- "$P" daemon "$T/ws/ready1" exit) </dev/null
	rc=$?
	sleep 0.2
	check "$label: workload exits: the box and its daemon are gone (exit $rc)" \
		[ $rc -eq 0 ] && [ "$(leftovers)" -eq 0 ]
	(cd "$T/ws" && exec "$run" "${base[@]}" -- "$P" daemon "$T/ws/ready2" wait) </dev/null &
	local dpid=$!
	for _ in $(seq 200); do [ -e "$T/ws/ready2" ] && break; sleep 0.05; done
	kill -TERM "$dpid"
	wait "$dpid"
	rc=$?
	sleep 0.2
	check "$label: SIGTERM is forwarded, status 128+15, nothing left (exit $rc)" \
		[ $rc -eq 143 ] && [ "$(leftovers)" -eq 0 ]
	(cd "$T/ws" && exec "$run" "${base[@]}" -- "$P" daemon "$T/ws/ready3" wait) </dev/null &
	dpid=$!
	for _ in $(seq 200); do [ -e "$T/ws/ready3" ] && break; sleep 0.05; done
	check "$label: the box runs until its boxd dies" [ "$(leftovers)" -ge 2 ]
	kill -KILL "$dpid"
	wait "$dpid" 2>/dev/null
	for _ in $(seq 40); do [ "$(leftovers)" -eq 0 ] && break; sleep 0.05; done
	check "$label: boxd killed (SIGKILL): the whole box dies" [ "$(leftovers)" -eq 0 ]

	# A tool sandbox: exec-capable grants and private tmpfs; without
	# contain_egress it shares the host network (docs/box.ini.5.md [tool.NAME]).
	cp "$bin/box-escape-probe" "$T/ws/tool-probe"
	case_ "tool: a program in its write grant runs" --tool --write "$T/ws" \
		--workspace "$T/ws" -- "$T/ws/tool-probe" true
	case_ "tool: setuid/setgid modes EPERM too" --tool --write "$T/ws" \
		--workspace "$T/ws" -- "$T/ws/tool-probe" setid "$T/ws"
	case_ "tool: PID 1's fds and environ masked too" --tool --write "$T/ws" \
		--workspace "$T/ws" -- "$T/ws/tool-probe" proc-pid1
	local out
	out=$(cd "$T/ws" && timeout 30 "$run" --tool --no-contain-egress --workspace "$T/ws" -- \
		$PY -c "import socket; socket.create_connection(('127.0.0.1', $port)); print('reached')" 2>&1)
	same "$label: tool without contain_egress reaches the host loopback" reached "$out"

	# Positive controls that are whole programs.
	out=$(cd "$T/ws" && timeout 60 "$run" "${base[@]}" -- /usr/bin/python3 -c '
import threading, socket
res = []
def work(i): res.append(i * i)
ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
c = socket.create_connection(s.getsockname()); a, _ = s.accept(); c.send(b"hi")
assert a.recv(2) == b"hi"
print("threads", len(res))' 2>&1)
	same "$label: control: threaded python3 with an in-box server" "threads 8" "$out"
	# git and coreutils under the filter: ordinary modes work, setuid/setgid ones are refused.
	out=$(cd "$T/ws" && timeout 60 "$run" "${base[@]}" --env HOME=/tmp --env PATH=/usr/bin:/bin \
		-- /usr/bin/python3 -c '
import os, stat, subprocess as sp
def run(*a): return sp.run(list(a), capture_output=True, text=True)
os.makedirs("repo", exist_ok=True); os.chdir("repo")
for a in (["git", "init", "-q"], ["git", "config", "user.email", "b@x"],
          ["git", "config", "user.name", "b"]):
    assert run(*a).returncode == 0, a
open("run.sh", "w").write("echo hi\n"); os.chmod("run.sh", 0o755)
assert run("git", "add", "run.sh").returncode == 0
assert run("git", "commit", "-qm", "one").returncode == 0
assert run("git", "log", "--oneline").stdout.count("one") == 1
assert run("cp", "-a", "run.sh", "copy.sh").returncode == 0
assert os.stat("copy.sh").st_mode & 0o777 == 0o755
assert run("install", "-m", "0755", "run.sh", "inst.sh").returncode == 0
assert run("chmod", "u+s", "copy.sh").returncode != 0
os.mkdir("d")
r = run("chmod", "g+s", "d")
assert r.returncode != 0 and "not permitted" in r.stderr, r.stderr
assert run("install", "-m", "4755", "run.sh", "suid.sh").returncode != 0
for f in ("copy.sh", "d", "inst.sh"):
    assert not os.stat(f).st_mode & (stat.S_ISUID | stat.S_ISGID), f
print("git ok")' 2>&1)
	same "$label: control: git, cp -a, install under the filter; chmod u+s, g+s refused" \
		"git ok" "$out"
	if [ -x /usr/bin/node ]; then
		out=$(cd "$T/ws" && timeout 60 "$run" "${base[@]}" -- /usr/bin/node -e '
const net = require("net");
const s = net.createServer(c => { c.end("pong"); }).listen(0, "127.0.0.1", () => {
  const c = net.connect(s.address().port, "127.0.0.1");
  c.on("data", d => { console.log("node " + d); s.close(); });
});' 2>&1)
		same "$label: control: node -e with an in-box server" "node pong" "$out"
	else
		skip "$label: control: node -e" "node is not installed"
	fi

	kill "$lpid" 2>/dev/null
	wait "$lpid" 2>/dev/null
	rm -rf "$T"
}

if [ "${1:-}" = "--inner" ]; then
	suite "$2" "$3"
	tap_done
	exit
fi

if [ "$(id -u)" -eq 0 ]; then
	# Binaries in a place every user reaches; a setuid copy owned by nobody.
	B=$(mktemp -d /tmp/boxesc-bin.XXXXXX)
	chmod 755 "$B"
	for f in box-trampoline box-sandbox-run box-escape-probe; do
		cp "$BOX_BIN/$f" "$B/$f"
	done
	cp "$BOX_BIN/box-escape-probe" "$B/probe-suid"
	chown 65534:65534 "$B/probe-suid" && chmod 4755 "$B/probe-suid"
	suite root "$B"
	if ! id boxtest >/dev/null 2>&1; then
		useradd --create-home --shell /bin/bash boxtest >/dev/null 2>&1 ||
			not_ok "create the user boxtest"
	fi
	if id boxtest >/dev/null 2>&1; then
		runuser -u boxtest -- env -i PATH=/usr/bin:/bin BOX_BIN="$B" \
			bash "$here/escape.sh" --inner boxtest "$B"
	fi
	rm -rf "$B"
else
	suite "$(id -un)" "$BOX_BIN"
fi
tap_done
