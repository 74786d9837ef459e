#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-load.sh — a service boxd under load: LOAD_BOXES boxes (default 10; half of them root's,
# half boxtest's) at once, each agent (test/integration/load-agent.py) driving LOAD_WORKERS
# (default 20) concurrent workers, each in turn a command through box's shell (a file written,
# read and removed: shell:exec and fs:* decided) and an HTTPS request through box-gateway (a
# permitted GET, and every fourth a GET the policy forbids: 403), for LOAD_SECONDS (default
# 20 s here; bench/load runs 120 s) in two equal phases with a quiet pause after each. Checks:
# every box exits 0; 0 failed shell commands, 0 failed requests, every forbidden one refused
# (timeouts are reported apart: a loaded machine may be slow, never wrong); each daemon
# process alive at both pauses (boxd, box-policyd, box-gateway, box-shell and its zygote) holds
# no more fds at the second than at the first (a small slack for a keep-alive pool) and an RSS
# within LOAD_RSS_PCT percent (default 10); nothing of the boxes outlives them. LOAD_ONLY=shell
# or http runs only that half (load-agent.py).
# It loads the whole machine, so it runs alone (a test beside it would see its timing):
# box-test: serial
# Trusts: nothing; test code. Packets only to 127.0.0.1.
. test/lib.sh
. test/integration/lib-run.sh
. test/integration/lib-shell.sh
. test/servers/lib-servers.sh
set -u
trap 'stop_all; [ -n "${bd:-}" ] && kill "$bd" 2>/dev/null; run_cleanup' EXIT
SRC=$PWD
cd "$W"

SECS=${LOAD_SECONDS:-20}
BOXES=${LOAD_BOXES:-10}
WORKERS=${LOAD_WORKERS:-20}
RSS_PCT=${LOAD_RSS_PCT:-10}
FD_SLACK=8

if [ "$(id -u)" -ne 0 ]; then
	skip "load: a service boxd with boxes of two users" "needs root to run a service boxd"
	tap_done
	exit 0
fi
shell_built || { tap_done; exit 1; }
users=(root)
have_boxtest && users+=(boxtest)

make_ca ok.load.test no.load.test || { not_ok "test CA (mkca.sh)"; tap_done; exit 1; }
start_httpd --tls || { not_ok "httpd.py --tls starts"; tap_done; exit 1; }
cp "$SRV_CA" upstream-ca.pem
printf '127.0.0.1 ok.load.test no.load.test\n' >hosts
cat >load.cedar <<'EOF'
@id("all")
permit (principal, action, resource);

@id("no_host")
forbid (principal, action == Box::Action::"http:request", resource)
when { context.input.host == "no.load.test" };
EOF
cp "$SRC/test/integration/load-agent.py" load-agent.py
chmod 644 hosts upstream-ca.pem load.cedar
chmod 755 load-agent.py

export BOX_SOCKET="$W/boxd.sock"
"$RB/boxd" --listen "$BOX_SOCKET" 2>boxd.log &
bd=$!
for _ in $(seq 100); do [ -S "$BOX_SOCKET" ] && break; sleep 0.1; done
chmod 666 "$BOX_SOCKET"
check "load: the service boxd listens" test -S "$BOX_SOCKET"

tag=ld$$
pids=()
for i in $(seq "$BOXES"); do
	u=${users[$((i % ${#users[@]}))]}
	d=$W/b$i
	mkdir -p "$d/ws" "$d/state"
	cat >"$d/box.ini" <<EOF
[box]
name = $tag-$i
policy = $W/load.cedar
state_dir = $d/state/box

[agent]
command = $W/load-agent.py $SECS $WORKERS https://ok.load.test:$HTTPD_PORT/echo https://no.load.test:$HTTPD_PORT/echo $d/ws
workspace = $d/ws

[agent.filesystem]
write = $d/ws

[agent.env]
$(agent_env)
LOAD_ONLY = ${LOAD_ONLY:-}

[gateway]
hosts_file = $W/hosts
upstream_ca = $W/upstream-ca.pem
allow_host_loopback = true
EOF
	chown -R "$u:" "$d"
	chmod 755 "$d"
	AS_USER_DIR=$d as_user "$u" "timeout -k 5 $((SECS + 300)) '$RB/boxctl' run -q -c box.ini" \
		>"$d/out" 2>"$d/err" &
	pids+=($!)
	_run_pids+=($!)
done

# sample N: each daemon process of these boxes: "PID NAME FDS RSS_KB" into sample.N
sample() {
	local d name
	for d in /proc/[0-9]*; do
		name=$(readlink "$d/exe" 2>/dev/null) || continue
		case $name in "$RB"/boxd | "$RB"/box-policyd | "$RB"/box-gateway | "$RB"/box-shell) ;;
		*) continue ;;
		esac
		echo "${d#/proc/} ${name##*/} $(ls "$d/fd" 2>/dev/null | wc -l) $(awk '/^VmRSS:/ {print $2}' "$d/status" 2>/dev/null)"
	done >"sample.$1"
}

# pause K: every agent said "quiet K" (or ended), then a sample, then they go on.
pause() {
	local i all
	for _ in $(seq $(((SECS / 2 + 240) * 10))); do
		all=1
		for i in $(seq "$BOXES"); do
			grep -q "^quiet $1\$" "$W/b$i/out" 2>/dev/null && continue
			kill -0 "${pids[$((i - 1))]}" 2>/dev/null && all=0
		done
		[ "$all" = 1 ] && break
		sleep 0.1
	done
	sleep 1 # what the last worker started is answered and freed
	sample "$1"
	for i in $(seq "$BOXES"); do
		touch "$W/b$i/ws/go.$1"
	done
}
pause 1
pause 2

st=0
for i in $(seq "$BOXES"); do
	wait "${pids[$((i - 1))]}" || st=$?
done
check "load: all $BOXES boxes exit 0" test "$st" = 0

for i in $(seq "$BOXES"); do
	grep -q '^result shell' "$W/b$i/out" || {
		echo "# box $i said no result: out"
		sed 's/^/#   /' "$W/b$i/out" | tail -5
		sed 's/^/#   err: /' "$W/b$i/err" | tail -10
	}
done
s_ok=$(grep -ho '^result shell ok=[0-9]*' "$W"/b*/out | cut -d= -f2 | awk '{s+=$1} END {print s+0}')
s_fail=$(grep -ho '^result shell .*failed=[0-9]*' "$W"/b*/out | sed 's/.*failed=//' | awk '{s+=$1} END {print s+0}')
s_to=$(grep -ho '^result shell .*timeout=[0-9]*' "$W"/b*/out | sed 's/.*timeout=//' | awk '{s+=$1} END {print s+0}')
h_ok=$(grep -ho '^result http ok=[0-9]*' "$W"/b*/out | cut -d= -f2 | awk '{s+=$1} END {print s+0}')
h_den=$(grep -ho '^result http .*denied=[0-9]*' "$W"/b*/out | sed 's/.*denied=//; s/ .*//' | awk '{s+=$1} END {print s+0}')
h_fail=$(grep -ho '^result http .*failed=[0-9]*' "$W"/b*/out | sed 's/.*failed=//; s/ .*//' | awk '{s+=$1} END {print s+0}')
h_to=$(grep -ho '^result http .*timeout=[0-9]*' "$W"/b*/out | sed 's/.*timeout=//' | awk '{s+=$1} END {print s+0}')
echo "# $BOXES boxes x $WORKERS workers, $SECS s: shell $s_ok ok, $s_fail failed, $s_to timed out;" \
	"https $h_ok ok, $h_den refused by policy, $h_fail failed, $h_to timed out"
grep -h '^failure: ' "$W"/b*/out | head -8 | sed 's/^/#   /'
[ "${LOAD_ONLY:-}" = http ] || check "load: shell commands ran in every box" test "$(grep -hc '^result shell ok=[1-9]' "$W"/b*/out | awk '{s+=$1} END {print s+0}')" = "$BOXES"
check "load: 0 shell commands failed" test "$s_fail" = 0
[ "${LOAD_ONLY:-}" = shell ] || check "load: permitted requests were served in every box" test "$(grep -hc '^result http ok=[1-9]' "$W"/b*/out | awk '{s+=$1} END {print s+0}')" = "$BOXES"
[ "${LOAD_ONLY:-}" = shell ] || check "load: forbidden requests were refused (403)" test "$h_den" -gt 0
check "load: 0 requests failed" test "$h_fail" = 0

# The daemons at the two pauses: the same processes, no more fds, RSS within RSS_PCT %.
check "load: the daemons were sampled at both pauses" test -s sample.1 -a -s sample.2
while read -r p name fd1 rss1; do
	line=$(awk -v p="$p" '$1 == p' sample.2)
	[ -n "$line" ] || continue
	read -r _ _ fd2 rss2 <<<"$line"
	echo "# $name ($p): fds $fd1 -> $fd2, RSS $rss1 -> $rss2 kB"
	check "load: $name: no fd leaked ($fd1 -> $fd2)" test "$fd2" -le $((fd1 + FD_SLACK))
	# A sanitizer build's RSS is mostly its quarantine of freed memory (it grows until its
	# cap whatever the daemon keeps): there only the fds are compared.
	[ -n "${SAN:-}" ] ||
		check "load: $name: RSS within $RSS_PCT% ($rss1 -> $rss2 kB)" \
			test $((rss2 * 100)) -le $((rss1 * (100 + RSS_PCT)))
done < <(sort -k2,2 -k1,1n sample.1)
check "load: boxd, box-policyd, box-gateway and box-shell were all seen" \
	test "$(cut -d' ' -f2 sample.1 | sort -u | tr '\n' ' ')" = "box-gateway box-policyd box-shell boxd "

# Nothing of the boxes outlives them; then boxd stops.
left() { for p in $(pgrep -f "$RB/"); do [ "$p" != "$bd" ] && echo "$p"; done; }
for _ in $(seq 300); do [ -z "$(left)" ] && break; sleep 0.1; done
check "load: no process of the boxes is left" test -z "$(left)"
kill "$bd"
wait "$bd"
check "load: boxd stops (status 0)" test $? = 0
bd=
tap_done
