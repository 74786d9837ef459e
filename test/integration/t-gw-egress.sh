#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-gw-egress.sh — what boxd hands box-gateway, end to end in real boxes
# (embedded boxd as root; a service boxd for root's and boxtest's boxes):
# an [egress] binding's secret replaces the placeholder the agent sends
# (the upstream sees the secret, the agent sees [REDACTED] where the
# upstream echoed it, never the secret); a binding whose `sandboxes` leave
# out the agent refuses the agent's request carrying the placeholder (403,
# nothing reaches the upstream); a `[gateway] passthrough` entry is a plain
# TCP tunnel to a loopback echo server after net:connect (no http:request);
# a service boxd runs the gateway as its daemon user (box-gateway, else box-daemon, else
# nobody), not as root, and its boxes reach the upstream the same way.
# Trusts: nothing; test code. Packets only to 127.0.0.1.
. test/lib.sh
. test/integration/lib-run.sh
. test/servers/lib-servers.sh
set -u
trap 'stop_all; run_cleanup' EXIT

cd "$W"
make_ca ok.gwb.test || { not_ok "test CA (mkca.sh)"; tap_done; exit 1; }
chmod 644 "$SRV_CA"
cp "$SRV_CA" upstream-ca.pem
start_httpd --tls || { not_ok "httpd.py --tls starts"; tap_done; exit 1; }
hport=$HTTPD_PORT
start_echod || { not_ok "echod.py starts"; tap_done; exit 1; }
eport=$ECHOD_PORT
printf '127.0.0.1 ok.gwb.test echo.gwb.test\n' >hosts
cat >gw.cedar <<'EOF'
@id("connect")
permit (principal, action == Box::Action::"net:connect", resource)
when { context.input.host == "ok.gwb.test" || context.input.host == "echo.gwb.test" };

@id("requests")
permit (principal, action == Box::Action::"http:request", resource)
when { context.input.host == "ok.gwb.test" };
EOF
cat >agent.py <<'EOF'
#!/usr/bin/python3
import os, socket, subprocess, sys
what, args = sys.argv[1], sys.argv[2:]
if what == "curl":
    # args: URL VARIABLE: sends the variable's value (the placeholder) as x-api-key
    r = subprocess.run(["/usr/bin/curl", "-sS", "-i", "--max-time", "20", "-H",
                        "x-api-key: " + os.environ.get(args[1], ""), args[0]],
                       capture_output=True, text=True)
    sys.stdout.write(r.stdout.replace("\r", ""))
    print("curl-rc=%d" % r.returncode)
elif what == "tunnel":
    s = socket.create_connection(("127.0.0.1", 3128), timeout=20)
    s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (args[0], args[0])).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        b = s.recv(1)
        if not b:
            break
        head += b
    print("head=" + head.decode(errors="replace").split("\r\n")[0])
    s.sendall(b"ping through the tunnel\n")
    got = b""
    while not got.endswith(b"\n"):
        b = s.recv(4096)
        if not b:
            break
        got += b
    print("echo=" + got.decode(errors="replace").strip(), flush=True)
    if len(args) > 1:
        import time
        time.sleep(float(args[1]))
EOF
chmod 755 agent.py
chmod 644 hosts upstream-ca.pem gw.cedar

# mkini FILE NAME SANDBOXES-LINE
mkini() {
	cat >"$1" <<EOF
[box]
name = $2
policy = gw.cedar

[agent]
command = $W/agent.py
workspace = $W

[agent.filesystem]
exec = /usr/bin/curl

[tool.git]
command = /usr/bin/git

[egress.ok]
destinations = ok.gwb.test:$hport
secret = env://GWB_E_SECRET
header = x-api-key
$3

[gateway]
hosts_file = $W/hosts
upstream_ca = $W/upstream-ca.pem
allow_host_loopback = true
passthrough = echo.gwb.test:$eport
EOF
	chmod 644 "$1"
}
secret=s3cr3t-gwb-egress-value
export GWB_E_SECRET=$secret

# --- the secret replaces the placeholder; the agent never sees it ---
mkini cred.ini gwb-cred ""
"$RB/boxctl" run -q -c cred.ini -- curl "https://ok.gwb.test:$hport/echo" GWB_E_SECRET \
	>cred.out 2>cred.err
check "credential: the request goes through (200)" grep -q '^HTTP/1.1 200 OK' cred.out
check "credential: the upstream received the secret in x-api-key" \
	grep -q "\"x-api-key\": \"$secret\"" "$HTTPD_LOG"
check "credential: the upstream never saw a placeholder" \
	test "$(grep -c '"x-api-key": "box_' "$HTTPD_LOG")" = 0
check "credential: the agent sees [REDACTED] where the upstream echoed it" \
	grep -q '"x-api-key": "\[REDACTED\]"' cred.out
check "credential: the agent never sees the secret" test "$(grep -c "$secret" cred.out)" = 0
check "credential: nor does the disclosure, nor the decision log" \
	test "$(cat cred.err "$XDG_STATE_HOME/box/gwb-cred/decisions.jsonl" | grep -c "$secret")" = 0

# --- sandboxes without the agent: its placeholder is refused ---
seen=$(grep -c '"path": "/echo"' "$HTTPD_LOG")
mkini scoped.ini gwb-scoped "sandboxes = tool.git"
"$RB/boxctl" run -q -c scoped.ini -- curl "https://ok.gwb.test:$hport/echo" GWB_E_SECRET \
	>scoped.out 2>scoped.err
check "sandboxes = tool.git: the agent's request with the placeholder is refused (403)" \
	bash -c "grep -q '^HTTP/1.1 403' scoped.out && grep -qi '^x-box-egress: refused' scoped.out"
check "sandboxes = tool.git: nothing reached the upstream" \
	test "$(grep -c '"path": "/echo"' "$HTTPD_LOG")" = "$seen"
check "sandboxes = tool.git: the disclosure names the sandbox" \
	grep -q "^box:   egress      ok.gwb.test:$hport: header x-api-key, for tool.git (\[egress.ok\]" \
	<(BOX_SOCKET=$BOX_SOCKET "$RB/boxctl" run -c scoped.ini -- tunnel x 2>&1 >/dev/null)

# --- passthrough: a plain TCP tunnel to the echo server ---
"$RB/boxctl" run -q -c cred.ini -- tunnel "echo.gwb.test:$eport" >pt.out 2>pt.err
check "passthrough: CONNECT answered 200" grep -q '^head=HTTP/1.1 200' pt.out
check "passthrough: the bytes come back from the echo server" \
	grep -qx 'echo=ping through the tunnel' pt.out
check "passthrough: decided by net:connect" \
	grep -q "\"action\":\"net:connect\",\"resource\":\"echo.gwb.test:$eport\",\"verdict\":\"permit\"" \
	"$XDG_STATE_HOME/box/gwb-cred/decisions.jsonl"
check "passthrough: no http:request for it" \
	test "$(grep -c "\"action\":\"http:request\",\"resource\":\"echo.gwb.test" \
		"$XDG_STATE_HOME/box/gwb-cred/decisions.jsonl")" = 0

# --- a service boxd: the gateway as the daemon user ---
if [ "$(id -u)" -ne 0 ]; then
	skip "service boxd's gateway" "needs root"
	tap_done
	exit
fi
export BOX_SOCKET="$W/boxd.sock"
GWB_E_SECRET= "$RB/boxd" --listen "$BOX_SOCKET" 2>boxd.log &
sp=$!
_run_pids+=("$sp")
for _ in $(seq 50); do [ -S "$BOX_SOCKET" ] && break; sleep 0.1; done
chmod 666 "$BOX_SOCKET"
daemon_user=$(daemon_user box-gateway)
users=root
have_boxtest && users="root boxtest"
for u in $users; do
	# a name of this run only: the service keeps each box's state in /var/lib/box/UID/NAME
	mkini "svc-$u.ini" "gwb-svc-$u-$$" ""
	if [ "$u" = root ]; then
		"$RB/boxctl" run -q -c "svc-$u.ini" -- tunnel "echo.gwb.test:$eport" 3 >"svc-$u.out" 2>&1 &
	else
		as_boxtest "GWB_E_SECRET=$secret '$RB/boxctl' run -q -c svc-$u.ini -- tunnel echo.gwb.test:$eport 3" \
			>"svc-$u.out" 2>&1 &
	fi
	bp=$!
	gp=
	for _ in $(seq 100); do
		for p in $(daemon_pids box-gateway); do
			[ "$(readlink "/proc/$(ps -o ppid= -p "$p" | tr -d ' ')/exe")" = "$RB/boxd" ] && gp=$p
		done
		[ -n "$gp" ] && break
		sleep 0.05
	done
	check "service, $u's box: box-gateway runs as $daemon_user" \
		test -n "$gp" -a "$(ps -o user= -p "${gp:-1}" 2>/dev/null | tr -d ' ')" = "$daemon_user"
	wait "$bp"
	check "service, $u's box: the tunnel through the gateway works" \
		grep -qx 'echo=ping through the tunnel' "svc-$u.out"
	if ! grep -qx 'echo=ping through the tunnel' "svc-$u.out"; then
		diag "$u's box said:" "$(head -c 2000 "svc-$u.out")" "boxd said:" "$(tail -c 2000 boxd.log)"
	fi
done
for u in 0 "$(id -u boxtest 2>/dev/null)"; do
	[ -n "$u" ] && rm -rf "/var/lib/box/$u/gwb-svc-root-$$" "/var/lib/box/$u/gwb-svc-boxtest-$$"
done
tap_done
