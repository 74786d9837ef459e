#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-gw-tunnel.sh — [gateway] passthrough: a CONNECT to a passthrough destination is relayed
# as plain TCP once net:connect permits it (no TLS interception, no http:request): an echo
# server through it (bytes both ways, the server speaking first), a refused passthrough
# CONNECT, and ssh with a ProxyCommand to the test's own sshd (skipped only when
# openssh-server is not installed).
# Trusts: nothing; it is test code.
set -u
cd "$(dirname "$0")/../.."
. test/lib.sh
. test/gateway/lib-gw.sh
CL="python3 test/servers/client.py"

start_echod --banner "hello-from-echod" || { not_ok "echod"; tap_done; exit; }
EP=$ECHOD_PORT
have_sshd=yes
start_sshd || have_sshd=no
echo '{}' >"$SRV_DIR/zone.json"
start_dnsd "$SRV_DIR/zone.json" || { not_ok "dnsd"; tap_done; exit; }
gw_hosts echo.box.test ssh.box.test denied.box.test
cat >"$SRV_DIR/init.json" <<EOF
{"hosts_file_path": "$SRV_DIR/hosts", "resolver": "127.0.0.1:$DNSD_PORT", "allow_host_loopback": true,
 "passthrough": [{"host": "echo.box.test", "port": $EP}, {"host": "denied.box.test", "port": $EP},
                 {"host": "ssh.box.test", "port": ${SSHD_PORT:-22}}]}
EOF
cat >"$SRV_DIR/policy.dw" <<'EOF'
@id("conn")
permit (principal, action == Box::Action::"net:connect", resource)
when { context.input.host != "denied.box.test" };
EOF
gw_start "$SRV_DIR/init.json" "$SRV_DIR/policy.dw" || { not_ok "gateway starts"; tap_done; exit; }

out=$(python3 - "$GW_PORT" "$EP" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(("CONNECT echo.box.test:%s HTTP/1.1\r\nHost: x\r\n\r\n" % sys.argv[2]).encode())
h = b""
while b"\r\n\r\n" not in h:
    h += s.recv(1)
status = h.split(b"\r\n")[0].decode()
banner = b""
while len(banner) < len("hello-from-echod"):
    banner += s.recv(100)
payload = bytes(range(256)) * 400
s.sendall(payload)
back = b""
while len(back) < len(payload):
    d = s.recv(65536)
    if not d:
        break
    back += d
print(status, banner.decode().strip(), "same" if back == payload else "differ %d" % len(back))
PY
)
check "passthrough: 200, the server's banner, 100 KiB echoed intact ($out)" \
	test "$out" = "HTTP/1.1 200 Connection Established hello-from-echod same"
check "passthrough is decided by net:connect" \
	test "$(gw_dec_count "d['kind']=='decide' and d['action']=='net:connect' and i.get('host')=='echo.box.test'")" -ge 2
check "passthrough raises no http:request" \
	test "$(gw_dec_count "d['action']=='http:request'")" -eq 0
resp=$(printf 'CONNECT denied.box.test:%s HTTP/1.1\r\nHost: x\r\n\r\n' "$EP" |
	$CL --timeout 3 raw 127.0.0.1 "$GW_PORT" | head -1 | tr -d '\r')
check "a passthrough destination net:connect denies: 403 ($resp)" sh -c "echo '$resp' | grep -q ' 403 '"

if [ "$have_sshd" = yes ]; then
	out=$(ssh -F "$SSHD_DIR/ssh_config" -p "$SSHD_PORT" -o ConnectTimeout=10 \
		-o "ProxyCommand=python3 test/servers/client.py --proxy 127.0.0.1:$GW_PORT --timeout 20 tunnel %h %p" \
		root@ssh.box.test echo ssh-through-gateway 2>"$SRV_DIR/ssh.err")
	check "ssh -o ProxyCommand through a passthrough entry ($out)" test "$out" = ssh-through-gateway
	[ "$out" = ssh-through-gateway ] || sed 's/^/# /' "$SRV_DIR/ssh.err"
else
	skip "ssh -o ProxyCommand through a passthrough entry" "openssh-server is not installed (make deps)"
fi
gw_stop
check "the gateway exits 0" test "$GW_STATUS" -eq 0
tap_done
