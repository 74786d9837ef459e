#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-clientd.sh — a root (service) boxd parses no client bytes: every client
# connection is served by its own box-clientd (box-clientd/main.c), a child
# of boxd running as box-daemon (else nobody) under its own seccomp filter,
# with no capability and nothing open but the client's socket and boxd's
# channel. ps/run/stop work through it as root and as boxtest; a valid
# request in a non-canonical encoding is served, garbage ends only that
# connection (no reply, logged by box-clientd). A box-clientd killed
# (SIGKILL, SIGSEGV) while its client is attached ends that client's
# connection with an error and its attached box, boxd logs the death once,
# and boxd, the other clients and their boxes go on.
# The test runs a private service boxd on a socket in its work dir.
# Trusts: nothing; it is test code.
. test/lib.sh
. test/integration/lib-run.sh
set -u

root_or_end "box-clientd" "needs root (a service boxd)"
seeds=$PWD/test/fuzz/corpus/clientd
cd "$W"
mkdir -m 755 ws
export BOX_SOCKET="$W/i4-clientd.sock"
"$RB/boxd" --listen "$BOX_SOCKET" 2>boxd.log &
sp=$!
_run_pids+=("$sp")
for _ in $(seq 50); do [ -S "$BOX_SOCKET" ] && break; sleep 0.1; done
check "boxd listens on its socket" test -S "$BOX_SOCKET"
chmod 666 "$BOX_SOCKET" # the test's stand-in for group box-clients
du=box-daemon
id box-daemon >/dev/null 2>&1 || du=nobody
duid=$(id -u "$du")

# children: the box-clientd processes of this boxd serving a client (not the spare waiting).
children() {
	local p
	for p in $(pgrep -P "$sp" -x box-clientd); do
		is_spare "$p" box-clientd || echo "$p"
	done
}
# wait_children N: up to 5 s for exactly N of them.
wait_children() {
	for _ in $(seq 50); do
		[ "$(children | wc -l)" -eq "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
# status_field PID NAME: the value of NAME: in /proc/PID/status (tabs squeezed).
status_field() { awk -v k="$2:" '$1 == k { $1 = ""; sub(/^ /, ""); print }' "/proc/$1/status"; }
# running NAME: boxctl ps shows a running box NAME (up to 10 s).
running() {
	for _ in $(seq 100); do
		"$RB/boxctl" ps 2>/dev/null | grep -qP "^$1\t[0-9a-f]{12}\trunning\t" && return 0
		sleep 0.1
	done
	return 1
}
# gone NAME: no box NAME in boxctl ps (up to 10 s).
gone() {
	for _ in $(seq 100); do
		"$RB/boxctl" ps 2>/dev/null | grep -qP "^$1\t" || return 0
		sleep 0.1
	done
	return 1
}
# new_child BEFORE: the one box-clientd not in the list BEFORE (up to 5 s).
new_child() {
	local p
	for _ in $(seq 50); do
		for p in $(children); do
			grep -qx "$p" <<<"$1" || { echo "$p"; return 0; }
		done
		sleep 0.1
	done
	return 1
}
# box_ini FILE NAME COMMAND
box_ini() {
	cat >"$1" <<EOF
[box]
name = $2

[agent]
command = $3
workspace = $W/ws

[agent.filesystem]
read = $W/ws
EOF
	chmod 644 "$1"
}

check "no client: no box-clientd serves" wait_children 0
# The spare (boxd/clientd.c): one waits before any client, as box-daemon, its filter on.
check "a spare box-clientd waits before the first client" wait_for_cmd waiting_spare "$sp" box-clientd
s1=$(waiting_spare "$sp" box-clientd)
check "… as $du, under its seccomp filter already, holding fds 0-4 only" \
	test -n "$s1" -a "$(stat -c %U "/proc/${s1:-1}" 2>/dev/null)" = "$du" \
	-a "$(status_field "${s1:-1}" Seccomp 2>/dev/null)" = 2 \
	-a "$(ls "/proc/${s1:-1}/fd" 2>/dev/null | sort -n | tr '\n' ' ')" = "0 1 2 3 4 "
"$RB/boxctl" ps >ps.out 2>ps.err
check "ps as root is served (through a box-clientd)" test $? = 0 -a "$(head -1 ps.out | cut -f1)" = NAME
# new_spare OLD: a spare waits, not OLD.
new_spare() { local p; p=$(waiting_spare "$sp" box-clientd) && [ "$p" != "$1" ]; }
check "… by the spare: it served that client and ended with it; a new spare waits" \
	eval 'wait_for_cmd test ! -e "/proc/$s1" && wait_for_cmd new_spare "$s1"'
s2=$(waiting_spare "$sp" box-clientd)

# A: attached until the test creates $W/ws/i4-go, then exit 7.
box_ini a.ini i4-cd-a "/usr/bin/python3 -c \"import os, sys, time; [time.sleep(0.1) for _ in iter(lambda: os.path.exists('$W/ws/i4-go'), True)]; sys.exit(7)\""
"$RB/boxctl" run -q -c a.ini >a.out 2>a.err &
ap=$!
_run_pids+=("$ap")
# Its connection, the only one yet, takes the spare that waits.
taken() { [ -e "/proc/$1" ] && ! is_spare "$1" box-clientd; }
wait_for_cmd taken "$s2"
if running i4-cd-a; then
	ok "an attached run through box-clientd starts"
else
	not_ok "an attached run through box-clientd starts"
	sed 's/^/#   /' a.err boxd.log
fi
check "one connection open: one box-clientd" wait_children 1
ac=$(children | head -1)
check "… the spare that waited, now serving: -w left its command line" \
	test -n "$ac" -a "$ac" = "$s2" -a "$(tr -d '\0' <"/proc/${ac:-1}/cmdline" 2>/dev/null)" = box-clientd
if [ -n "$ac" ]; then
	check "box-clientd's parent is boxd" test "$(status_field "$ac" PPid)" = "$sp"
	check "box-clientd runs as $du ($duid): real, effective, saved, fs uid" \
		test "$(status_field "$ac" Uid)" = "$duid $duid $duid $duid"
	check "box-clientd's gid is $du's" \
		test "$(status_field "$ac" Gid)" = "$(printf '%s ' $(id -g "$du") $(id -g "$du") $(id -g "$du") $(id -g "$du") | sed 's/ $//')"
	check "box-clientd has no supplementary group" test -z "$(status_field "$ac" Groups)"
	check "box-clientd is under a seccomp filter (mode 2)" test "$(status_field "$ac" Seccomp)" = 2
	check "box-clientd has no_new_privs and no capability" \
		test "$(status_field "$ac" NoNewPrivs)" = 1 -a \
		"$(status_field "$ac" CapEff)" = 0000000000000000 -a \
		"$(status_field "$ac" CapBnd)" = 0000000000000000
	check "box-clientd is the helper beside boxd" test "$(readlink "/proc/$ac/exe")" = "$RB/box-clientd"
	fds=$(ls "/proc/$ac/fd" | sort -n | tr '\n' ' ')
	check "box-clientd holds fds 0-4 only ($fds)" test "$fds" = "0 1 2 3 4 "
	check "box-clientd's fds 3 and 4 are sockets" \
		test "$(readlink "/proc/$ac/fd/3" | cut -d: -f1)" = socket -a \
		"$(readlink "/proc/$ac/fd/4" | cut -d: -f1)" = socket
	env_left=$(tr '\0' '\n' <"/proc/$ac/environ" | grep -v '^ASAN_OPTIONS=')
	check "box-clientd's environment holds nothing of boxd's" test -z "$env_left"
else
	not_ok "box-clientd found for the attached run"
fi

if have_boxtest; then
	uout=$(as_boxtest "'$RB/boxctl' run -q -c a.ini --detach" 2>uerr)
	check "boxtest: run --detach through box-clientd" grep -qxE "[0-9a-f]{12}" <<<"$uout"
	as_boxtest "'$RB/boxctl' ps" >ups 2>&1
	check "boxtest: ps shows its own box" grep -qP "^i4-cd-a\t$uout\trunning\t" ups
	as_boxtest "'$RB/boxctl' stop $uout" >/dev/null 2>&1
	check "boxtest: stop its own box (exit 0)" test $? = 0
else
	skip "box-clientd: boxtest" "no boxtest user"
fi

# A request boxctl never sends in that form (envelope fields reordered) is served.
python3 - "$BOX_SOCKET" "$seeds/ok-ps-request-fields-reordered" >raw.out 2>&1 <<'PY'
import socket, sys
data = open(sys.argv[2], "rb").read()[3:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1]); s.settimeout(10)
s.send(data)
r = s.recv(70000)
print("reply-type", r[3] if len(r) > 3 else "none")
# garbage on a second connection: no reply, the connection ends
g = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
g.connect(sys.argv[1]); g.settimeout(10)
g.send(b"\xff\xfe\xfd\xfc garbage")
print("garbage", "closed" if g.recv(70000) == b"" else "reply")
PY
check "a non-canonical PsRequest gets a PsReply" grep -qx "reply-type 6" raw.out
check "garbage: no reply, the connection ends" grep -qx "garbage closed" raw.out
check "garbage: box-clientd logs the refusal" \
	grep -qE "^box-clientd\[[0-9]+\]: client_end: client pid [0-9]+: Bad message" boxd.log
check "garbage: A's box still runs" running i4-cd-a

# kill_case SIGNAL NAME: an attached box whose box-clientd gets SIGNAL.
kill_case() {
	local sig=$1 name=$2 before c bp rc
	box_ini "$name.ini" "$name" "/bin/sleep 60"
	before=$(children)
	"$RB/boxctl" run -q -c "$name.ini" >"$name.out" 2>"$name.err" &
	bp=$!
	_run_pids+=("$bp")
	if ! running "$name" || ! c=$(new_child "$before"); then
		not_ok "$sig: the attached run $name has its box-clientd"
		return
	fi
	kill "-$sig" "$c"
	for _ in $(seq 100); do kill -0 "$bp" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$bp" 2>/dev/null # a test that fails here must not hang
	wait "$bp"
	rc=$?
	check "$sig: the killed box-clientd's client exits with an error ($rc)" test "$rc" -ne 0
	check "$sig: it says the connection to boxd closed" grep -q "boxd: the connection closed" \
		"$name.err"
	check "$sig: that client's attached box is stopped" gone "$name"
	check "$sig: boxd is still up" kill -0 "$sp"
	# A sanitizer build's runtime catches SIGSEGV, reports, and exits 1 instead.
	death="was killed by signal $(kill -l "$sig")"
	[ -n "${SAN:-}" ] && [ "$sig" = SEGV ] && death="exited with status 1"
	check "$sig: boxd logs the death once ($death)" \
		test "$(grep -c "box-clientd pid $c (client pid [0-9]* uid 0) $death" boxd.log)" = 1
	check "$sig: A's box still runs" running i4-cd-a
	"$RB/boxctl" ps >ps.out 2>&1
	check "$sig: a new client is served" test $? = 0 -a "$(head -1 ps.out | cut -f1)" = NAME
}
# The spare killed while it waits: boxd says so once, the next client gets a fresh one,
# and a spare waits again after it.
wait_for_cmd waiting_spare "$sp" box-clientd
s3=$(waiting_spare "$sp" box-clientd)
kill -9 "$s3"
check "the spare killed while it waits: boxd says so" \
	wait_for boxd.log "the spare box-clientd pid $s3 exited while it waited"
"$RB/boxctl" ps >ps.out 2>&1
check "… the next client is served" test $? = 0 -a "$(head -1 ps.out | cut -f1)" = NAME
check "… and a new spare waits" wait_for_cmd new_spare "$s3"
kill_case KILL i4-cd-k
kill_case SEGV i4-cd-s

touch "$W/ws/i4-go"
for _ in $(seq 100); do kill -0 "$ap" 2>/dev/null || break; sleep 0.1; done
kill -9 "$ap" 2>/dev/null # a test that fails here must not hang
wait "$ap"
check "A's client was not affected: its box's status comes back (7)" test $? = 7
check "every client gone: no box-clientd left" wait_children 0
check "boxd logged no other box-clientd death" \
	test "$(grep -v "the spare box-clientd" boxd.log |
		grep -c "box-clientd pid .* was killed\|box-clientd pid .* exited")" = 2
kill -TERM "$sp"
wait "$sp"
check "boxd exits on SIGTERM" test $? = 0
for u in 0 "$(id -u boxtest 2>/dev/null)"; do
	[ -n "$u" ] && rm -rf "/var/lib/box/$u/i4-cd-a" "/var/lib/box/$u/i4-cd-k" "/var/lib/box/$u/i4-cd-s"
done
tap_done
