#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-run-spares.sh — a service boxd's spare box-policyd and box-gateway (docs/boxd.8.md,
# "Spares"; boxd/spares.c): a connected pair waits before any box, confined, as its
# daemons' users, started with -w; a box takes it (its --timings says so) and works through
# it — the gateway decides a proxied request with the spare policyd, box-shell decides with
# it — as root and as the ordinary user boxtest; a new pair waits after each take; a spare
# killed while it waits is never handed a box (the next box spawns its own); a box whose
# spawns would differ (its own max_connections, a test hook naming it) spawns its own and
# leaves the pair; BOX_TEST_DAEMON_SPARES_ABSENT keeps none; a pair whose confinement fails
# fails the box with the confinement's message, as a fresh spawn does.
# Each service boxd here is the test's own, on its own socket under the work dir.
. test/lib.sh
. test/integration/lib-run.sh
. test/servers/lib-servers.sh
set -u

root_or_end "service boxd spares"
cd "$W"
n=$$

# service NAME [VAR=VALUE...]: a service boxd of this test on $W/NAME.sock, its pid in $sp.
service() {
	local name=$1
	shift
	env "$@" "$RB/boxd" --listen "$W/$name.sock" 2>"$name.log" &
	sp=$!
	_run_pids+=("$sp")
	for _ in $(seq 100); do [ -S "$W/$name.sock" ] && break; sleep 0.1; done
	chmod 666 "$W/$name.sock"
	export BOX_SOCKET="$W/$name.sock"
}

# spare_pid NAME: boxd $sp's spare NAME, when one waits.
spare_pid() { waiting_spare "$sp" "$1"; }
pair_waits() { spare_pid box-policyd >/dev/null && spare_pid box-gateway >/dev/null; }
no_spare() { ! spare_pid box-policyd >/dev/null && ! spare_pid box-gateway >/dev/null; }
wait_no_spare() {
	for _ in $(seq 300); do no_spare && return 0; sleep 0.1; done
	return 1
}
# gone PID PID: neither runs (any more).
gone() { [ -n "$1" ] && [ ! -e "/proc/$1" ] && [ -n "$2" ] && [ ! -e "/proc/$2" ]; }
# new_pair OLD_POLICYD OLD_GATEWAY: a pair waits and neither is the old one.
new_pair() {
	pair_waits && [ "$(spare_pid box-policyd)" != "$1" ] && [ "$(spare_pid box-gateway)" != "$2" ]
}
# taken FILE: the timeline in FILE says the box took both spares.
taken() {
	grep -qE '^box: .* boxd +box-policyd taken \(spawned ahead\)$' "$1" &&
		grep -qE '^box: .* boxd +box-gateway taken \(spawned ahead\)$' "$1"
}
# spawned FILE: … that it spawned both of its own.
spawned() {
	grep -qE '^box: .* boxd +box-policyd spawned$' "$1" &&
		grep -qE '^box: .* boxd +box-gateway spawned$' "$1" && ! grep -q 'taken (spawned ahead)' "$1"
}

# The loopback upstream, named in a hosts file; a permit-all policy.
start_httpd || { not_ok "httpd.py starts"; tap_done; exit 1; }
printf '127.0.0.1 spare.test\n' >hosts
printf 'permit (principal, action, resource);\n' >permit.cedar
mkdir -m 777 ws
chmod 644 hosts permit.cedar
# mkini FILE NAME COMMAND [GATEWAY-LINE]: a box of this test.
mkini() {
	printf '[box]\nname = %s\npolicy = %s/permit.cedar\n\n[agent]\ncommand = %s\nworkspace = %s/ws\n\n[gateway]\nhosts_file = %s/hosts\nallow_host_loopback = true\n%s\n' \
		"$2" "$W" "$3" "$W" "$W" "${4:-}" >"$1"
	chmod 644 "$1"
}
curl_cmd="/usr/bin/curl -s -o /dev/null -w %{http_code} http://spare.test:$HTTPD_PORT/echo"

service svc
check "a spare box-policyd and box-gateway wait before the first box" wait_for_cmd pair_waits
pol=$(spare_pid box-policyd)
gw=$(spare_pid box-gateway)
for d in box-policyd:box-policy:"$pol" box-gateway:box-gateway:"$gw"; do
	name=${d%%:*} user=${d#*:} p=${d##*:}
	user=${user%%:*}
	check "$name's spare: PID 1 of its own PID namespace, in its own mount namespace" \
		test -n "$p" -a "$(awk '/^NSpid:/ { print $NF }' "/proc/$p/status" 2>/dev/null)" = 1 \
		-a "$(readlink "/proc/$p/ns/mnt")" != "$(readlink "/proc/$sp/ns/mnt")"
	check "$name's spare: as $(daemon_user "$user")" \
		test -n "$p" -a "$(stat -c %U "/proc/$p" 2>/dev/null)" = "$(daemon_user "$user")"
done
# The pair is connected: the gateway's fd 4 is the other end of the policyd's fd 4.
peer_inode() { # PID FD: the inode of the socket at the other end of PID's FD
	local ino
	ino=$(readlink "/proc/$1/fd/$2" | sed -nE 's/^socket:\[([0-9]+)\]$/\1/p')
	[ -n "$ino" ] && ss -xa | awk -v i="$ino" '$6 == i { print $8; exit }'
}
check "the spare gateway's fd 4 is the spare policyd's gateway channel" \
	test -n "$(peer_inode "$gw" 4)" -a "$(peer_inode "$gw" 4)" = \
	"$(readlink "/proc/$pol/fd/4" | sed -nE 's/^socket:\[([0-9]+)\]$/\1/p')"

# As root: a proxied request, decided by the spare gateway with the spare policyd.
mkini root.ini "spare-root-$n" "$curl_cmd"
out=$("$RB/boxctl" run --timings -c root.ini 2>root.err)
rc=$?
check "root: the box runs (rc $rc) and its request went through the gateway (${out:-nothing})" \
	test "$rc" = 0 -a "$out" = 200
check "root: … it took the spares (--timings)" taken root.err
"$RB/boxctl" log "spare-root-$n" >root.log 2>&1
check "root: … the spare policyd decided the request (boxctl log)" \
	grep -qE "permit +http:request +spare.test:$HTTPD_PORT/echo" root.log
check "root: … the taken spares are gone with the box" wait_for_cmd gone "$pol" "$gw"
check "root: a new pair waits after the take" wait_for_cmd new_pair "$pol" "$gw"

# A running box's daemons that were spares: -w left their command line (ps tells them apart).
pol=$(spare_pid box-policyd)
gw=$(spare_pid box-gateway)
mkini long.ini "spare-long-$n" "/bin/sleep 60"
lid=$("$RB/boxctl" run -q -c long.ini --detach 2>long.err)
serving() { [ -e "/proc/$1" ] && ! tr '\0' ' ' <"/proc/$1/cmdline" | grep -q -- -w; }
check "a detached box took the pair; its daemons run without -w in their command line" \
	eval 'wait_for_cmd serving "$pol" && wait_for_cmd serving "$gw"'
"$RB/boxctl" stop "$lid" >/dev/null 2>&1
wait_for_cmd new_pair "$pol" "$gw"

# As boxtest: the same pair kind (the daemons' users, never the owner's); box-shell decides
# with the spare policyd too.
if have_boxtest; then
	pol=$(spare_pid box-policyd)
	gw=$(spare_pid box-gateway)
	mkini user.ini "spare-user-$n" "/usr/bin/env sh -c 'echo via-shell'"
	out=$(as_boxtest "'$RB/boxctl' run --timings -c '$W/user.ini'" 2>user.err)
	rc=$?
	check "boxtest: the box runs (rc $rc) and its shell command ran (${out:-nothing})" \
		test "$rc" = 0 -a "$out" = via-shell
	check "boxtest: … it took the spares" taken user.err
	as_boxtest "'$RB/boxctl' log spare-user-$n" >user.log 2>&1
	check "boxtest: … the spare policyd decided its shell command" \
		grep -qE "permit +shell:exec +echo" user.log
	check "boxtest: a new pair waits after the take" wait_for_cmd new_pair "$pol" "$gw"
else
	skip "boxtest takes the spares" "cannot create the user boxtest"
fi

# A spare killed while it waits: the pair goes, the next box spawns its own, then a pair waits.
wait_for_cmd pair_waits
kill -9 "$(spare_pid box-gateway)"
check "a killed spare gateway takes its policyd with it" wait_no_spare
mkini dead.ini "spare-dead-$n" "$curl_cmd"
out=$("$RB/boxctl" run --timings -c dead.ini 2>dead.err)
check "after a spare died: the next box runs on its own spawns (${out:-nothing})" \
	test "$out" = 200
check "… its timeline says spawned, not taken" spawned dead.err
check "… and a pair waits again after it" wait_for_cmd pair_waits

# A box whose gateway file limit differs spawns its own; the pair stays for the next box.
pol=$(spare_pid box-policyd)
gw=$(spare_pid box-gateway)
mkini max.ini "spare-max-$n" "$curl_cmd" "max_connections = 100"
out=$("$RB/boxctl" run --timings -c max.ini 2>max.err)
check "max_connections = 100: the box runs on its own spawns (${out:-nothing})" \
	eval 'test "$out" = 200 && spawned max.err'
check "… the pair still waits, the same processes" \
	test -n "$pol" -a "$(spare_pid box-policyd)" = "$pol" -a "$(spare_pid box-gateway)" = "$gw"
kill "$sp"
wait "$sp" 2>/dev/null
check "boxd's end kills the waiting pair" wait_for_cmd gone "$pol" "$gw"

# A test hook that names a box: that box spawns its own, another takes the pair.
service hook BOX_TEST_POLICYD_EXIT_DELAY_MS=1 BOX_TEST_POLICYD_EXIT_DELAY_NAME="spare-hook-$n"
wait_for_cmd pair_waits
mkini hook.ini "spare-hook-$n" /bin/true
"$RB/boxctl" run --timings -c hook.ini 2>hook.err
check "a hook naming the box: it spawns its own" spawned hook.err
mkini other.ini "spare-other-$n" /bin/true
"$RB/boxctl" run --timings -c other.ini 2>other.err
check "… another box takes the pair" taken other.err
kill "$sp"
wait "$sp" 2>/dev/null

# BOX_TEST_DAEMON_SPARES_ABSENT: none.
service absent BOX_TEST_DAEMON_SPARES_ABSENT=1
"$RB/boxctl" run --timings -c other.ini 2>absent.err
check "BOX_TEST_DAEMON_SPARES_ABSENT: no spare, the box spawns its own" \
	eval 'no_spare && spawned absent.err'
check "… and no spare box-clientd either" eval '! waiting_spare "$sp" box-clientd'
kill "$sp"
wait "$sp" 2>/dev/null

# Confinement refused: the spares fail; the box fails with the confinement's message.
service ns BOX_TEST_DAEMON_NS_ABSENT=1
"$RB/boxctl" run -c other.ini >/dev/null 2>ns.err
rc=$?
check "confinement refused: the box does not start (rc $rc)" test "$rc" = 1
check "… the message names the confinement" \
	grep -q "cannot start .*box-policyd in its own mount, PID and IPC namespaces" ns.err
kill "$sp"
wait "$sp" 2>/dev/null
unset BOX_SOCKET
tap_done
