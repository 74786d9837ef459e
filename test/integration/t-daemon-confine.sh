#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-daemon-confine.sh — box-policyd, box-gateway and box-mcpd each run in mount, PID and IPC
# namespaces of their own (and a user namespace of its own when boxd is not root) with a
# minimal read-only root (docs/boxd.8.md, step 4; boxd/confine.c): for each daemon of a running
# box, its namespaces differ from boxd's, it is PID 1 of its PID namespace, its root holds only
# the system's libraries, four /dev nodes, its own /proc and its executable — no home, no state
# directory, nothing writable — and the box still works: the agent's HTTPS request through the
# gateway is decided by policyd (denied, as the box has no policy, and logged), and the box ends
# as its agent does. As root (boxd root: no user namespace) and as the ordinary user boxtest
# (boxd unprivileged: a user namespace mapping only its own ids). Fail closed: with the
# namespaces refused (BOX_TEST_DAEMON_NS_ABSENT) the box does not start, saying why.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
set -u
cd "$W"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}

if [ ! -x "$RB/box-mcpd" ]; then
	not_ok "box-mcpd is built ($BOX_BIN/box-mcpd)"
	tap_done
	exit 1
fi
users=$(id -un)
if [ "$(id -u)" -eq 0 ] && have_boxtest; then
	users="$users boxtest"
else
	skip "confined daemons of boxtest's box" "needs root to create and become the user boxtest"
fi
[ "$(id -u)" -eq 0 ] || skip "a root boxd's daemons" "needs root"

# A stdio MCP server for box-mcpd (it reads requests until its stdin closes).
cat >"$W/srv.py" <<'EOF'
import sys
for line in sys.stdin:
    pass
EOF
# The agent: waits for the go file, then asks the gateway for an HTTPS connection (denied: no
# policy), then exits 7.
cat >"$W/agent.py" <<'EOF'
import os, socket, sys, time
go = sys.argv[1]
while not os.path.exists(go):
    time.sleep(0.1)
host, port = os.environ["HTTPS_PROXY"].split("//")[1].rstrip("/").split(":")
s = socket.create_connection((host, int(port)))
s.sendall(b"CONNECT example.invalid:443 HTTP/1.1\r\nHost: example.invalid:443\r\n\r\n")
print("proxy:", s.recv(200).split(b"\r\n")[0].decode(), flush=True)
sys.exit(7)
EOF
chmod 644 "$W/srv.py" "$W/agent.py"

# The top-level names a confined daemon's root may hold: the system's, and the first component
# of its executable's path ($RB: where lib-run.sh copied the programs).
top=${RB#/}
top=${top%%/*}
allowed=" dev etc lib lib32 lib64 libx32 proc usr $top "

# confined U NAME DAEMON BOXD: the checks of one daemon of a running box of U.
confined() {
	local u=$1 name=$2 d=$3 boxd=$4 p ns entries e bad
	p=$(wait_below "$boxd" "$d")
	if [ -z "$p" ]; then
		not_ok "$u: $d runs for the box"
		return
	fi
	for ns in mnt pid ipc; do
		check "$u: $d: its own $ns namespace" \
			test "$(readlink "/proc/$p/ns/$ns")" != "$(readlink "/proc/$boxd/ns/$ns")"
	done
	if [ "$u" = root ]; then
		check "$u: $d: boxd's user namespace (boxd is root)" \
			test "$(readlink "/proc/$p/ns/user")" = "$(readlink "/proc/$boxd/ns/user")"
	else
		check "$u: $d: its own user namespace (boxd is not root)" \
			test "$(readlink "/proc/$p/ns/user")" != "$(readlink "/proc/$boxd/ns/user")"
		check "$u: $d: its user namespace maps only its own uid" \
			test "$(awk '{ print $1, $2, $3 }' "/proc/$p/uid_map")" = "$(id -u "$u") $(id -u "$u") 1"
	fi
	check "$u: $d: PID 1 of its PID namespace" \
		test "$(awk '/^NSpid:/ { print $NF }' "/proc/$p/status")" = 1
	check "$u: $d: no capability, an empty bounding set" \
		sh -c "grep -q '^CapEff:[[:space:]]*0*\$' /proc/$p/status && grep -q '^CapBnd:[[:space:]]*0*\$' /proc/$p/status"
	entries=$(ls -A "/proc/$p/root/" 2>/dev/null | tr '\n' ' ')
	bad=
	for e in $entries; do
		case $allowed in *" $e "*) ;; *) bad="$bad $e" ;; esac
	done
	check "$u: $d: its root holds only the system's, /dev, /proc and its program ($entries)" \
		test -n "$entries" -a -z "$bad"
	[ -z "$bad" ] || diag "unexpected in $d's root:$bad"
	check "$u: $d: the owner's home is not in its root" \
		test ! -e "/proc/$p/root$(getent passwd "$u" | cut -d: -f6)" -a ! -e "/proc/$p/root/home"
	check "$u: $d: of the test's directory only its program's is there" \
		test "$(ls -A "/proc/$p/root$W" | tr '\n' ' ')" = "bin "
	check "$u: $d: its program at its host path" test -f "/proc/$p/root$RB/$d"
	check "$u: $d: /dev holds null, random, urandom, zero" \
		test "$(ls -A "/proc/$p/root/dev" | tr '\n' ' ')" = "null random urandom zero "
	check "$u: $d: its /proc shows its own PID namespace only (pid 1)" \
		test "$(ls "/proc/$p/root/proc" | grep -E '^[0-9]+$' | tr '\n' ' ')" = "1 "
	check "$u: $d: its root is read-only" sh -c "! touch '/proc/$p/root/x' 2>/dev/null"
	if [ "$d" = box-gateway ]; then
		check "$u: $d: the system trust roots are there" \
			test -s "/proc/$p/root/etc/ssl/certs/ca-certificates.crt"
	else
		check "$u: $d: no resolver or trust roots of the gateway's" \
			test ! -e "/proc/$p/root/etc/ssl" -a ! -e "/proc/$p/root/etc/resolv.conf"
	fi
}

for u in $users; do
	name="cnf-$$-$u"
	dir=$W/$name
	mkdir -p "$dir"
	cp "$W/agent.py" "$dir/agent.py"
	chmod 777 "$dir"
	{
		printf '[box]\nname = %s\n\n[agent]\ncommand = /usr/bin/python3 %s/agent.py %s/go\n' \
			"$name" "$dir" "$dir"
		printf 'workspace = %s\n\n[agent.filesystem]\nread = %s\n' "$dir" "$dir"
		printf '\n[mcp.srv]\ntype = stdio\nalias = srv\ncommand = /usr/bin/python3 %s/srv.py\n' "$W"
		printf '\n[mcp.srv.filesystem]\nread_file = %s/srv.py\n' "$W"
	} >"$W/$name.ini"
	chmod 644 "$W/$name.ini"
	as_user "$u" "'$RB/boxctl' run -q -c '$W/$name.ini'" >"$W/$name.out" 2>"$W/$name.err" &
	bp=$!
	_run_pids+=("$bp")
	boxd=$(wait_below "$bp" boxd)
	agent=$([ -n "$boxd" ] && wait_below "$boxd" python3)
	if [ -z "$agent" ]; then
		not_ok "$u: the box runs (its agent waits)"
		cat "$W/$name.err" >&2
		kill_tree "$bp"
		continue
	fi
	for d in box-policyd box-gateway box-mcpd; do
		confined "$u" "$name" "$d" "$boxd"
	done
	touch "$dir/go"
	# boxctl ends with its agent; a hang is killed after 60 s and fails the checks below.
	for _ in $(seq 600); do kill -0 "$bp" 2>/dev/null || break; sleep 0.1; done
	kill_tree "$bp"
	wait "$bp"
	rc=$?
	check "$u: the box ends as its agent does (exit 7, rc $rc)" test "$rc" = 7
	check "$u: the gateway refused the agent's CONNECT (policyd decided: no policy)" \
		grep -q '^proxy: HTTP/1.1 403' "$W/$name.out"
	[ "$rc" = 7 ] || cat "$W/$name.err" "$W/$name.out" >&2
	if [ "$u" = "$(id -un)" ]; then
		log="$XDG_STATE_HOME/box/$name/decisions.jsonl"
	else
		log="$(getent passwd "$u" | cut -d: -f6)/.local/state/box/$name/decisions.jsonl"
	fi
	check "$u: policyd logged the denied net:connect" \
		grep -q '"example.invalid"' "$log"
done

# Fail closed: namespaces the kernel refuses (BOX_TEST_DAEMON_NS_ABSENT makes them look so) mean
# no box — box-policyd, the first daemon, is never started unconfined.
u=$(id -un)
name="cnf-$$-absent"
dir=$W/$name
mkdir -p "$dir"
cp "$W/agent.py" "$dir/agent.py"
touch "$dir/go"
printf '[box]\nname = %s\n\n[agent]\ncommand = /usr/bin/python3 %s/agent.py %s/go\nworkspace = %s\n\n[agent.filesystem]\nread = %s\n' \
	"$name" "$dir" "$dir" "$dir" "$dir" >"$W/$name.ini"
BOX_TEST_DAEMON_NS_ABSENT=1 timeout -k 5 120 "$RB/boxctl" run -q -c "$W/$name.ini" >"$W/$name.out" 2>"$W/$name.err"
rc=$?
check "no namespaces for the daemons: the box does not start (rc $rc)" test "$rc" != 0 -a "$rc" != 7
check "… boxctl says box-policyd cannot start without them" \
	grep -q "^boxctl: error: .*cannot start .*box-policyd in its own mount, PID and IPC namespaces with a minimal root (the box does not start without them): Operation not permitted" "$W/$name.err"
check "… and the agent never ran" test ! -s "$W/$name.out"
tap_done
