#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-gw-limits.sh — box-gateway's limits and concurrency: a slowloris client (a head byte at a
# time) is closed by the head timeout (min(30 s, idle_timeout)), a silent connection and an
# idle keep-alive tunnel by idle_timeout, max_connections (beyond it: accepted and closed at
# once), a slow decision does not stall other connections (several Decides in flight), the
# memory an idle intercepted keep-alive connection costs (<= 40 KiB, both TLS legs), and
# 4,000 concurrent proxied connections (passthrough to echod) all served at once.
# Serial: its windows are the gateway's own sub-second timeouts and a decision delay under
# idle_timeout, and it measures memory; it runs alone, after the parallel tests.
# box-test: serial
# Trusts: nothing; it is test code.
set -u
cd "$(dirname "$0")/../.."
. test/lib.sh
. test/gateway/lib-gw.sh
CL="python3 test/servers/client.py"

make_ca api.box.test '*.box.test' localhost >/dev/null || { not_ok "test CA"; tap_done; exit; }
start_httpd --tls || { not_ok "httpd --tls"; tap_done; exit; }
TP=$HTTPD_PORT
echo '{}' >"$SRV_DIR/zone.json"
start_dnsd "$SRV_DIR/zone.json" || { not_ok "dnsd"; tap_done; exit; }
gw_hosts api.box.test slow.box.test echo.box.test
cat >"$SRV_DIR/policy.dw" <<'EOF'
@id("conn")
permit (principal, action == Box::Action::"net:connect", resource);
@id("req")
permit (principal, action == Box::Action::"http:request", resource);
EOF
cat >"$SRV_DIR/init.json" <<EOF
{"upstream_ca_pem_file": "$SRV_CA", "hosts_file_path": "$SRV_DIR/hosts",
 "resolver": "127.0.0.1:$DNSD_PORT", "allow_host_loopback": true,
 "idle_timeout_ms": 1500, "max_connections": 5}
EOF
gw_start "$SRV_DIR/init.json" "$SRV_DIR/policy.dw" --listen agent --decide-delay slow.box.test=600 ||
	{ not_ok "gateway starts"; tap_done; exit; }

out=$(python3 - "$GW_PORT" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
t0 = time.monotonic()
head = b"GET http://api.box.test/echo HTTP/1.1\r\nHost: api.box.test\r\nX-Slow: " + b"a" * 100
try:
    for b in head:
        s.send(bytes([b]))
        time.sleep(0.3)
        s.setblocking(False)
        try:
            if s.recv(1) == b"":
                break
        except BlockingIOError:
            pass
        s.setblocking(True)
except (BrokenPipeError, ConnectionResetError):
    pass
print("%.1f" % (time.monotonic() - t0))
PY
)
check "slowloris: a head sent a byte at a time is closed by the head timeout (${out} s)" \
	python3 -c "import sys; sys.exit(0 if 1.2 <= $out <= 4.5 else 1)"
out=$(python3 - "$GW_PORT" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
t0 = time.monotonic()
print("%.1f %r" % (time.monotonic() - t0 if s.recv(10) == b"" else -1, True))
PY
)
check "a silent connection is closed after idle_timeout (${out%% *} s)" \
	python3 -c "import sys; sys.exit(0 if 1.2 <= ${out%% *} <= 4 else 1)"

# max_connections = 5: five held open, the sixth is closed at once.
out=$(python3 - "$GW_PORT" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
held = [socket.create_connection(("127.0.0.1", port)) for _ in range(5)]
time.sleep(0.3)
s = socket.create_connection(("127.0.0.1", port), timeout=3)
t0 = time.monotonic()
r = s.recv(10)
print("closed" if r == b"" and time.monotonic() - t0 < 1 else "open")
PY
)
check "over max_connections: the connection is accepted and closed at once ($out)" test "$out" = closed
sleep 0.5
code=$(gw_curl -o /dev/null -w '%{http_code}' "https://api.box.test:$TP/echo")
check "below max_connections again: served ($code)" test "$code" = 200

# A slow decision (0.6 s for each of slow.box.test's, under idle_timeout) does not stall another connection.
( gw_curl -o /dev/null "https://slow.box.test:$TP/echo" ) &
slow=$!
sleep 0.3
t0=$(date +%s.%N)
code=$(gw_curl -o /dev/null -w '%{http_code}' "https://api.box.test:$TP/echo")
t1=$(date +%s.%N)
check "while a decision is held 0.6 s, another connection is served ($code) in $(printf '%.2f' "$(echo "$t1 - $t0" | bc)") s" \
	sh -c "[ $code = 200 ] && [ \$(echo '$t1 - $t0 < 0.45' | bc) = 1 ]"
wait $slow
check "the held decision is answered too" \
	test "$(gw_dec_count "d['kind']=='record' and d['action']=='http:request' and i['host']=='slow.box.test'")" -eq 1
# An idle keep-alive tunnel is closed after idle_timeout.
out=$(python3 - "$GW_PORT" "$GW_CA" "$TP" <<'PY'
import socket, ssl, sys, time
gw, ca, port = int(sys.argv[1]), sys.argv[2], sys.argv[3]
s = socket.create_connection(("127.0.0.1", gw), timeout=10)
s.sendall(("CONNECT api.box.test:%s HTTP/1.1\r\nHost: x\r\n\r\n" % port).encode())
h = b""
while b"\r\n\r\n" not in h:
    h += s.recv(1)
t = ssl.create_default_context(cafile=ca).wrap_socket(s, server_hostname="api.box.test")
t.sendall(("GET /echo HTTP/1.1\r\nHost: api.box.test:%s\r\n\r\n" % port).encode())
buf = b""
while b"}" not in buf:
    buf += t.recv(4096)
t0 = time.monotonic()
try:
    while t.recv(4096):
        pass
except (ssl.SSLError, ConnectionResetError):
    pass
print("%.1f" % (time.monotonic() - t0))
PY
)
check "an idle keep-alive tunnel is closed after idle_timeout (${out} s)" \
	python3 -c "import sys; sys.exit(0 if 1.2 <= $out <= 4 else 1)"
gw_stop
check "the gateway exits 0" test "$GW_STATUS" -eq 0

# --- memory per idle intercepted keep-alive connection (both TLS legs)
cat >"$SRV_DIR/init3.json" <<EOF
{"upstream_ca_pem_file": "$SRV_CA", "hosts_file_path": "$SRV_DIR/hosts",
 "resolver": "127.0.0.1:$DNSD_PORT", "allow_host_loopback": true, "max_connections": 1000}
EOF
gw_start "$SRV_DIR/init3.json" "$SRV_DIR/policy.dw" || { not_ok "gateway starts (idle)"; tap_done; exit; }
out=$(python3 - "$GW_PORT" "$GW_CA" "$TP" "$GW_PID" 300 <<'PY'
import socket, ssl, sys, time
gw, ca, port, pid, n = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
def rss():
    for l in open("/proc/%s/status" % pid):
        if l.startswith("VmRSS:"):
            return int(l.split()[1])
ctx = ssl.create_default_context(cafile=ca)
def one():
    s = socket.create_connection(("127.0.0.1", gw), timeout=10)
    s.sendall(("CONNECT api.box.test:%s HTTP/1.1\r\nHost: x\r\n\r\n" % port).encode())
    h = b""
    while b"\r\n\r\n" not in h:
        h += s.recv(1)
    t = ctx.wrap_socket(s, server_hostname="api.box.test")
    t.sendall(("GET /bytes/10 HTTP/1.1\r\nHost: api.box.test:%s\r\n\r\n" % port).encode())
    buf = b""
    while b"\r\n\r\n" not in buf or len(buf.split(b"\r\n\r\n", 1)[1]) < 10:
        buf += t.recv(4096)
    return t
warm = [one() for _ in range(20)]
time.sleep(0.5)
r0 = rss()
held = [one() for _ in range(n)]
time.sleep(1)
r1 = rss()
print(r0, r1, "%.1f" % ((r1 - r0) / n))
PY
)
read -r r0 r1 per <<<"$out"
lim=40
[ -n "${SAN:-}" ] && lim=600 # ASan: redzones and quarantine
check "RSS per idle intercepted keep-alive connection <= $lim KiB (${per:-?} KiB each over 300: $r0 -> $r1 KiB)" \
	python3 -c "import sys; sys.exit(0 if ${per:-999} <= $lim else 1)"
gw_stop

# --- 4,000 concurrent proxied connections (passthrough to echod)
N=4000
if ! ulimit -n 16384 2>/dev/null; then
	skip "$N concurrent connections" "cannot raise RLIMIT_NOFILE to 16384 (hard limit $(ulimit -Hn))"
	tap_done
	exit
fi
start_echod || { not_ok "echod"; tap_done; exit; }
EP=$ECHOD_PORT
cat >"$SRV_DIR/init2.json" <<EOF
{"hosts_file_path": "$SRV_DIR/hosts", "resolver": "127.0.0.1:$DNSD_PORT", "allow_host_loopback": true,
 "max_connections": 4100, "passthrough": [{"host": "echo.box.test", "port": $EP}]}
EOF
gw_start "$SRV_DIR/init2.json" "$SRV_DIR/policy.dw" || { not_ok "gateway starts (4100)"; tap_done; exit; }
out=$(timeout 120 python3 - "$GW_PORT" "$EP" "$N" <<'PY'
import asyncio, sys
gw, ep, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
opened = asyncio.Event()
count = 0
async def one(i, sem, all_open):
    global count
    async with sem:
        r, w = await asyncio.open_connection("127.0.0.1", gw)
        w.write(("CONNECT echo.box.test:%s HTTP/1.1\r\nHost: x\r\n\r\n" % ep).encode())
        head = await r.readuntil(b"\r\n\r\n")
        if b" 200 " not in head.split(b"\r\n")[0]:
            return False
    count += 1
    if count == n:
        all_open.set()
    await all_open.wait()
    msg = ("ping-%d\n" % i).encode()
    w.write(msg)
    back = await r.readexactly(len(msg))
    w.close()
    return back == msg
async def main():
    sem = asyncio.Semaphore(200)
    all_open = asyncio.Event()
    res = await asyncio.gather(*(one(i, sem, all_open) for i in range(n)), return_exceptions=True)
    print(sum(1 for x in res if x is True))
asyncio.run(main())
PY
)
check "$N concurrent proxied connections, all open at once, all echo ($out)" test "${out:-0}" -eq "$N"
gw_stop
check "the gateway exits 0 after $N connections" test "$GW_STATUS" -eq 0
tap_done
