#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-gw-run.sh — box-gateway in real boxes (boxctl run, embedded boxd; as root
# and as the ordinary user boxtest): the agent's view (proxy, NO_PROXY,
# NODE_USE_ENV_PROXY, the CA in the six trust variables, the placeholder;
# no SSL_CERT_DIR), /run/box/ca.pem inside = STATE/ca.pem = a certificate
# without a key; curl through the proxy to a loopback HTTPS server (the
# test CA as [gateway] upstream_ca, its names in hosts_file,
# allow_host_loopback) permitted by the policy, a denied host 403 with
# x-box-egress and the decision's message, python3 urllib the same, both
# decisions in `boxctl log`; a client that ignores the proxy has no
# network; the disclosure's network, egress and passthrough lines (never
# the secret or the placeholder); the gateway is boxd's child with the
# expected uid, its fds 3-4 channels, an empty environment and RLIMIT_NOFILE
# 2 x max_connections + 256; killing it stops the box (exit 1, "box-gateway exited (…): the box was stopped");
# a gateway that cannot serve (a broken upstream_ca) refuses the box with
# its message; an unprivileged boxd refuses a max_connections whose file
# limit exceeds its hard limit, a root one raises it; nothing outlives the box.
# Trusts: nothing; test code. Packets only to 127.0.0.1.
. test/lib.sh
. test/integration/lib-run.sh
. test/servers/lib-servers.sh
set -u
trap 'stop_all; run_cleanup' EXIT

cd "$W"
cp "$BOX_BIN/box-gateway" "$RB/box-gateway" 2>/dev/null
chmod 755 "$RB/box-gateway"

# gateway_pids: the box-gateway processes of this test's binaries.
gateway_pids() { daemon_pids box-gateway; }
wait_gateway() {
	local p
	for _ in $(seq 100); do
		p=$(gateway_pids | head -1)
		[ -n "$p" ] && { echo "$p"; return 0; }
		sleep 0.1
	done
	return 1
}
no_gateway() {
	for _ in $(seq 50); do
		[ -z "$(gateway_pids)" ] && return 0
		sleep 0.1
	done
	return 1
}

# The loopback HTTPS upstream: ok.gwb.test and no.gwb.test name it.
make_ca ok.gwb.test no.gwb.test || { not_ok "test CA (mkca.sh)"; tap_done; exit 1; }
chmod 644 "$SRV_CA"
start_httpd --tls || { not_ok "httpd.py --tls starts"; tap_done; exit 1; }
port=$HTTPD_PORT
printf '127.0.0.1 ok.gwb.test no.gwb.test\n' >hosts
cp "$SRV_CA" upstream-ca.pem
printf -- '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n' >bad-ca.pem
cat >gw.cedar <<'EOF'
@id("ok_connect")
permit (principal, action == Box::Action::"net:connect", resource)
when { context.input.host == "ok.gwb.test" };

@id("ok_get")
permit (principal, action == Box::Action::"http:request", resource)
when { context.input.host == "ok.gwb.test" && context.input.method == "GET" };
EOF

# The agent: one action per run, its results on stdout.
cat >agent.py <<'EOF'
#!/usr/bin/python3
import os, subprocess, sys, time, urllib.request, urllib.error
what, args = sys.argv[1], sys.argv[2:]
if what == "env":
    for k in sorted(os.environ):
        print("%s=%s" % (k, os.environ[k]))
elif what == "ca":
    sys.stdout.write(open("/run/box/ca.pem").read())
elif what == "curl":
    r = subprocess.run(["/usr/bin/curl", "-sS", "-i", "--max-time", "20"] + args,
                       capture_output=True, text=True)
    sys.stdout.write(r.stdout.replace("\r", ""))
    print("curl-rc=%d" % r.returncode)
    sys.stdout.write("curl-err=" + r.stderr)
elif what == "urllib":
    try:
        with urllib.request.urlopen(args[0], timeout=20) as f:
            print("urllib-status=%d" % f.status)
            sys.stdout.write(f.read().decode())
    except urllib.error.HTTPError as e:
        print("urllib-status=%d" % e.code)
    except Exception as e:
        print("urllib-error=%r" % e)
elif what == "connect":
    import socket
    s = socket.create_connection(("127.0.0.1", 3128), timeout=20)
    s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (args[0], args[0])).encode())
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    sys.stdout.write(data.decode(errors="replace").replace("\r", ""))
elif what == "sleep":
    print("sleeping", flush=True)
    time.sleep(float(args[0]))
elif what == "reload":
    # GETs of URL: one, then (after the test's reload: the file GO appears) two more.
    def get(tag):
        r = subprocess.run(["/usr/bin/curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}",
                            "--max-time", "20", args[0]], capture_output=True, text=True)
        print("%s=%s" % (tag, r.stdout), flush=True)
    get("before")
    print("waiting", flush=True)
    for _ in range(600):
        if os.path.exists(args[1]):
            break
        time.sleep(0.1)
    get("after1")
    get("after2")
EOF
chmod 755 agent.py
chmod 644 hosts upstream-ca.pem bad-ca.pem gw.cedar

# mkini FILE NAME [EXTRA-GATEWAY-LINES]: the box of this test.
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

[egress.api]
destinations = api.gwb.test
secret = env://GWB_TEST_SECRET
header = x-api-key
placeholder_prefix = sk-gwb-

[gateway]
hosts_file = $W/hosts
upstream_ca = $W/${4:-upstream-ca.pem}
allow_host_loopback = true
passthrough = ssh.gwb.test:22
$3
EOF
	chmod 644 "$1"
}

# runas USER CMD: CMD (a shell line) in $W as USER.
runas() {
	if [ "$1" = root ]; then
		(cd "$W" && env BOX_SOCKET="$BOX_SOCKET" GWB_TEST_SECRET=s3cr3t-gwb-value sh -c "$2")
	else
		as_boxtest "GWB_TEST_SECRET=s3cr3t-gwb-value $2"
	fi
}

users=root
boxtest_or_skip "gateway boxes as boxtest" && users="root boxtest"

for u in $users; do
	p=gwb-$u
	uhome=$(getent passwd "$u" | cut -d: -f6)
	state=$uhome/.local/state/box/$p
	[ "$u" = root ] && state=$XDG_STATE_HOME/box/$p
	mkini "$p.ini" "$p" ""

	# --- the agent's view ---
	runas "$u" "'$RB/boxctl' run -c $p.ini -- env" >"$p.env" 2>"$p.err"
	rc=$?
	check "$u: a box with a gateway runs (rc $rc)" test "$rc" = 0
	for v in HTTP_PROXY HTTPS_PROXY http_proxy https_proxy; do
		check "$u: env: $v=http://127.0.0.1:3128" grep -qx "$v=http://127.0.0.1:3128" "$p.env"
	done
	check "$u: env: NO_PROXY and no_proxy = localhost,127.0.0.1,::1" \
		test "$(grep -cx '[Nn][Oo]_[Pp][Rr][Oo][Xx][Yy]=localhost,127.0.0.1,::1' "$p.env")" = 2
	check "$u: env: NODE_USE_ENV_PROXY=1" grep -qx "NODE_USE_ENV_PROXY=1" "$p.env"
	for v in SSL_CERT_FILE REQUESTS_CA_BUNDLE CURL_CA_BUNDLE NODE_EXTRA_CA_CERTS AWS_CA_BUNDLE \
		GIT_SSL_CAINFO; do
		check "$u: env: $v=/run/box/ca.pem" grep -qx "$v=/run/box/ca.pem" "$p.env"
	done
	check "$u: env: no SSL_CERT_DIR" test "$(grep -c '^SSL_CERT_DIR=' "$p.env")" = 0
	check "$u: env: the placeholder (prefix + 64 lowercase hex) in the binding's variable" \
		grep -qxE "GWB_TEST_SECRET=sk-gwb-[0-9a-f]{64}" "$p.env"
	check "$u: env: never the secret" test "$(grep -c s3cr3t-gwb-value "$p.env")" = 0
	ph=$(sed -n 's/^GWB_TEST_SECRET=//p' "$p.env")

	# --- the disclosure ---
	check "$u: disclosure: the network line" grep -qx "box:   network     proxy 127.0.0.1:3128 (box-gateway; HTTP/1.1 only — HTTP/2 and gRPC clients fall back through the proxy); no other route out" "$p.err"
	check "$u: disclosure: the egress binding (destination, placement, sandboxes)" \
		grep -qx "box:   egress      api.gwb.test: header x-api-key, for every sandbox (\[egress.api\], in \$GWB_TEST_SECRET)" "$p.err"
	check "$u: disclosure: WebSocket frames to a credentialed destination are unredacted" \
		grep -qx "box:   egress      WebSocket (Upgrade) frames to a credentialed destination are relayed unredacted" "$p.err"
	check "$u: disclosure: the passthrough entry" \
		grep -qx "box:   passthrough ssh.gwb.test:22 (plain TCP after net:connect: no interception, no http:request, no credentials)" "$p.err"
	check "$u: disclosure: no 'no gateway' line, no inactive [egress]" \
		test "$(grep -c 'no gateway\|inactive: \[egress' "$p.err")" = 0
	check "$u: disclosure: never the secret or the placeholder" \
		test "$(grep -c "s3cr3t-gwb-value\|${ph:-no-placeholder}" "$p.err")" = 0

	# --- the CA ---
	runas "$u" "'$RB/boxctl' run -q -c $p.ini -- ca" >"$p.ca" 2>"$p.caerr"
	check "$u: /run/box/ca.pem inside is a certificate" \
		grep -q -- '-----BEGIN CERTIFICATE-----' "$p.ca"
	check "$u: … and no private key" test "$(grep -c 'PRIVATE' "$p.ca")" = 0
	check "$u: … and equals STATE/ca.pem" cmp -s "$p.ca" "$state/ca.pem"
	check "$u: STATE/ca.pem is the owner's, mode 0644" \
		test "$(stat -c '%U %a' "$state/ca.pem")" = "$u 644"
	check "$u: … a CA certificate (openssl: CA:TRUE)" \
		bash -c "openssl x509 -in '$state/ca.pem' -noout -text | grep -q 'CA:TRUE'"
	cp "$p.ca" "$p.ca.first"
	runas "$u" "'$RB/boxctl' run -q -c $p.ini -- ca" >"$p.ca" 2>/dev/null
	check "$u: a fresh CA at every start" bash -c "! cmp -s '$p.ca' '$p.ca.first'"

	# --- allowed and denied HTTPS through the gateway ---
	runas "$u" "'$RB/boxctl' run -q -c $p.ini -- curl https://ok.gwb.test:$port/echo" \
		>"$p.ok" 2>"$p.okerr"
	check "$u: curl to a permitted host: 200 from the upstream" grep -q '^HTTP/1.1 200 OK' "$p.ok"
	check "$u: … the upstream's body (it saw the request)" grep -q '"path": "/echo"' "$p.ok"
	check "$u: … curl exits 0" grep -qx 'curl-rc=0' "$p.ok"
	check "$u: … the request reached httpd.py" grep -q '"host": "ok.gwb.test:'"$port" "$HTTPD_LOG"
	runas "$u" "'$RB/boxctl' run -q -c $p.ini -- curl https://no.gwb.test:$port/echo" \
		>"$p.no" 2>"$p.noerr"
	check "$u: curl to a denied host: 403" grep -q '^HTTP/1.1 403' "$p.no"
	check "$u: … x-box-egress: refused" grep -qi '^x-box-egress: refused' "$p.no"
	runas "$u" "'$RB/boxctl' run -q -c $p.ini -- connect no.gwb.test:$port" >"$p.raw" 2>/dev/null
	check "$u: a refused CONNECT: 403, x-box-egress, text/plain" \
		bash -c "grep -q '^HTTP/1.1 403' '$p.raw' && grep -qi '^x-box-egress: refused' '$p.raw' && grep -qi '^content-type: text/plain' '$p.raw'"
	check "$u: … its body is the decision's message" \
		grep -q "policy denied this operation on 'no.gwb.test:$port'" "$p.raw"
	check "$u: … no request reached the upstream for it" \
		test "$(grep -c '"host": "no.gwb.test' "$HTTPD_LOG")" = 0
	runas "$u" "'$RB/boxctl' run -q -c $p.ini -- curl -X POST https://ok.gwb.test:$port/echo" \
		>"$p.post" 2>/dev/null
	check "$u: a denied request inside an allowed tunnel: 403 with x-box-egress" \
		bash -c "grep -q '^HTTP/1.1 403' '$p.post' && grep -qi '^x-box-egress: refused' '$p.post'"
	runas "$u" "'$RB/boxctl' run -q -c $p.ini -- urllib https://ok.gwb.test:$port/echo" \
		>"$p.py" 2>/dev/null
	check "$u: python3 urllib (HTTPS_PROXY, SSL_CERT_FILE): 200" grep -qx 'urllib-status=200' "$p.py"
	runas "$u" "'$RB/boxctl' run -q -c $p.ini -- urllib https://no.gwb.test:$port/echo" \
		>"$p.py2" 2>/dev/null
	check "$u: python3 urllib to a denied host: refused (403 at CONNECT)" \
		grep -q '403' "$p.py2"
	runas "$u" "'$RB/boxctl' log $p" >"$p.log" 2>&1
	check "$u: boxctl log: the permitted request" \
		grep -qE "permit +http:request +ok.gwb.test:$port/echo +ok_get" "$p.log"
	check "$u: boxctl log: the denied connection" \
		grep -qE "deny +net:connect +no.gwb.test:$port" "$p.log"
	check "$u: decisions.jsonl: the gateway is the source" \
		grep -q '"source":"box-gateway"' "$state/decisions.jsonl"
	check "$u: decisions.jsonl: never the secret or the placeholder" \
		test "$(grep -c "s3cr3t-gwb-value\|sk-gwb-" "$state/decisions.jsonl")" = 0

	# --- a client that ignores the proxy has no network ---
	seen=$(grep -c '"host": "ok.gwb.test:'"$port" "$HTTPD_LOG")
	runas "$u" "'$RB/boxctl' run -q -c $p.ini -- curl --noproxy '*' https://ok.gwb.test:$port/echo" \
		>"$p.np" 2>/dev/null
	check "$u: curl --noproxy '*': no network (fails)" bash -c "! grep -qx 'curl-rc=0' '$p.np'"
	check "$u: … nothing reached the upstream directly" \
		test "$(grep -c '"host": "ok.gwb.test:'"$port" "$HTTPD_LOG")" = "$seen"

	# --- the gateway process, then losing it ---
	runas "$u" "'$RB/boxctl' run -q -c $p.ini -- sleep 30" >"$p.kill" 2>"$p.killerr" &
	bp=$!
	gp=$(wait_gateway)
	check "$u: box-gateway runs for the box" test -n "$gp"
	if [ -n "$gp" ]; then
		check "$u: box-gateway's parent is boxd" \
			test "$(readlink "/proc/$(ps -o ppid= -p "$gp" | tr -d ' ')/exe")" = "$RB/boxd"
		check "$u: box-gateway runs as boxd's ids (embedded: $u)" \
			test "$(ps -o user= -p "$gp" | tr -d ' ')" = "$u"
		check "$u: box-gateway: RLIMIT_NOFILE soft = hard = 2 x 1024 + 256" \
			grep -qE '^Max open files +2304 +2304 ' "/proc/$gp/limits"
		check "$u: box-gateway: fds 3 and 4 are its channels (sockets)" \
			bash -c "readlink /proc/$gp/fd/3 | grep -q socket && readlink /proc/$gp/fd/4 | grep -q socket"
		check "$u: box-gateway: no_new_privs" grep -qP '^NoNewPrivs:\t1$' "/proc/$gp/status"
		check "$u: box-gateway's environment: nothing of boxctl's or boxd's (the secret neither)" \
			test "$(tr '\0' '\n' <"/proc/$gp/environ" | grep -cvE '^(ASAN_OPTIONS|BOX_TEST_GATEWAY_[A-Z_]*)=')" = 0
		check "$u: box-gateway: stdin and stdout /dev/null" \
			test "$(readlink "/proc/$gp/fd/0")$(readlink "/proc/$gp/fd/1")" = /dev/null/dev/null
		wait_for "$p.kill" sleeping
		kill -KILL "$gp"
	fi
	for _ in $(seq 100); do kill -0 "$bp" 2>/dev/null || break; sleep 0.1; done
	wait "$bp"
	rc=$?
	check "$u: gateway killed: boxctl exits 1 (rc $rc)" test "$rc" = 1
	check "$u: … boxctl: error: box-gateway exited (…): the box was stopped" \
		grep -q "^boxctl: error: box-gateway exited (.*): the box was stopped" "$p.killerr"
	check "$u: … the agent is gone" no_process "$W/agent.py sleep 30"
	check "$u: no box-gateway outlives its boxes" no_gateway

	# --- a gateway that cannot serve refuses the box ---
	mkini "$p-bad.ini" "$p-bad" "" bad-ca.pem
	runas "$u" "'$RB/boxctl' run -q -c $p-bad.ini -- env" >"$p.bad" 2>"$p.baderr"
	rc=$?
	check "$u: broken upstream_ca: the box does not start (exit 1, rc $rc)" test "$rc" = 1
	check "$u: … boxctl: error: box-gateway cannot serve the box: …" \
		grep -q "^boxctl: error: box-gateway cannot serve the box: " "$p.baderr"
	check "$u: … the agent never ran" test ! -s "$p.bad"
done

# --- a reload while the box runs: the gateway's decisions made in process follow it ---
# (box-gateway decides GETs to ok.gwb.test in process: no temporal rule. After the reload
# the page has moved: the next request is asked, the one after decided with the new policy.)
cat >gw-post-only.cedar <<'EOF'
@id("ok_connect")
permit (principal, action == Box::Action::"net:connect", resource)
when { context.input.host == "ok.gwb.test" };

@id("ok_post")
permit (principal, action == Box::Action::"http:request", resource)
when { context.input.host == "ok.gwb.test" && context.input.method == "POST" };
EOF
chmod 644 gw-post-only.cedar
rm -f reload-go
mkini reload.ini gwb-reload-$$ ""
runas root "'$RB/boxctl' run -q -c reload.ini -- reload https://ok.gwb.test:$port/echo $W/reload-go" \
	>reload.out 2>reload.err &
bp=$!
wait_for reload.out waiting
check "reload: the GET is permitted under the first policy" grep -qx before=200 reload.out
runas root "'$RB/boxctl' policy reload gwb-reload-$$ gw-post-only.cedar" >reload.rl 2>&1
check "reload: generation 2 in force" grep -q "policy generation 2 in force" reload.rl
touch reload-go
wait "$bp"
check "reload: the next GET is refused (403) under generation 2" grep -qx after1=403 reload.out
check "reload: and the one after it (decided in process with generation 2's policy)" \
	grep -qx after2=403 reload.out
grep -qx after2=403 reload.out || sed 's/^/#   /' reload.out reload.err reload.rl | tail -20
python3 - "$XDG_STATE_HOME/box/gwb-reload-$$/decisions.jsonl" >reload.lines <<'PY'
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d.get("action") == "http:request" and "verdict" in d:
        print(d["verdict"], ",".join(d.get("rules", [])))
PY
check "reload: decisions.jsonl: the three GETs, permitted by ok_get then denied twice" \
	test "$(tr '\n' ' ' <reload.lines)" = "permit ok_get deny  deny  "
grep -q "^permit ok_get" reload.lines || sed 's/^/#   /' reload.lines

# --- RLIMIT_NOFILE: 2 x max_connections + 256; 10000 connections need 20256 fds ---
mkini big.ini gwb-big "max_connections = 10000"
if [ "$(id -u)" -eq 0 ] && [ "$(ulimit -Hn)" -lt 20256 ]; then
	cap=$(awk '/^CapEff/ {print $2}' /proc/self/status)
	if [ $((0x$cap >> 24 & 1)) = 1 ]; then # CAP_SYS_RESOURCE
		GWB_TEST_SECRET=x "$RB/boxctl" run -q -c big.ini -- sleep 30 >big.out 2>big.err &
		bp=$!
		gp=$(wait_gateway)
		check "root: max_connections 10000: box-gateway's limit raised to 20256 (soft = hard)" \
			grep -qE '^Max open files +20256 +20256 ' "/proc/${gp:-0}/limits"
		wait_for big.out sleeping
		"$RB/boxctl" stop gwb-big >/dev/null 2>&1
		wait "$bp"
	else
		# This host's root lacks CAP_SYS_RESOURCE: boxd says so instead of failing the spawn.
		GWB_TEST_SECRET=x "$RB/boxctl" run -q -c big.ini -- env >big.out 2>big.err
		rc=$?
		check "root without CAP_SYS_RESOURCE: max_connections 10000 refused (exit 2, rc $rc)" \
			test "$rc" = 2
		check "… the error names max_connections, the limit and the missing capability" \
			grep -q "^boxctl: big.ini:[0-9]*: \[gateway\] max_connections: box-gateway needs RLIMIT_NOFILE 20256 (2 x max_connections + 256), above this boxd's hard limit $(ulimit -Hn), and this root boxd lacks CAP_SYS_RESOURCE to raise it" big.err
		check "… no agent ran" test ! -s big.out
	fi
else
	skip "root and the gateway's hard limit" "needs root and a hard limit below 20256"
fi
if [ "$(id -u)" -eq 0 ] && have_boxtest; then
	chmod 644 big.ini
	su -s /bin/sh boxtest -c "cd '$W' && ulimit -Hn 20000 && env -u XDG_RUNTIME_DIR -u XDG_STATE_HOME BOX_SOCKET='$BOX_SOCKET' GWB_TEST_SECRET=x '$RB/boxctl' run -q -c big.ini -- env" \
		>big.u.out 2>big.u.err
	rc=$?
	check "boxtest: max_connections 10000 above its hard limit 20000: refused (exit 2, rc $rc)" \
		test "$rc" = 2
	check "… the error names [gateway] max_connections and the limits" \
		grep -q "^boxctl: big.ini:[0-9]*: \[gateway\] max_connections: box-gateway needs RLIMIT_NOFILE 20256 (2 x max_connections + 256), above this unprivileged boxd's hard limit 20000" big.u.err
	check "… no agent ran" test ! -s big.u.out
else
	skip "an unprivileged boxd refuses the gateway's limit" "needs root to become boxtest"
fi
check "no box-gateway is left" no_gateway

tap_done
