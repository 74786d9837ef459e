#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-gw-basic.sh — box-gateway alone under gw-harness: start-up (GatewayReady, the CA, the
# process locked down under its seccomp filter), CONNECT decided by net:connect before the
# tunnel, requests decided by http:request (host, port, method, path and its canonical
# forms), denials as docs/box-policy.5.md shows them (body and x-box-reason header, plain HTTP, CONNECT
# and intercepted HTTPS, curl as the client), plain absolute-form requests, the targets the
# proxy refuses (400), outcome records, keep-alive with mixed verdicts, listener close, and
# the ends (boxd leaving: exit 0; policyd lost: exit 1).
# Trusts: nothing; it is test code.
set -u
cd "$(dirname "$0")/../.."
. test/lib.sh
. test/gateway/lib-gw.sh
CL="python3 test/servers/client.py"

gw_servers
cat >"$SRV_DIR/policy.dw" <<'EOF'
@id("conn")
permit (principal, action == Box::Action::"net:connect", resource)
when { context.input.host == "api.box.test" || context.input.host == "plain.box.test" };

@id("get_echo")
permit (principal, action == Box::Action::"http:request", resource)
when { ["GET", "HEAD"].contains(context.input.method) && context.input.path like "/echo*" };

@id("post_upload")
permit (principal, action == Box::Action::"http:request", resource)
when { context.input.method == "POST" && context.input.path == "/upload" };

@id("no_secret")
@description("no secrets here")
forbid (principal, action == Box::Action::"http:request", resource)
when { context.input.path like "/echo/secret*" };

@id("no_cafe")
@description("pas de café ☕")
forbid (principal, action == Box::Action::"http:request", resource)
when { context.input.path like "/echo/cafe*" };
EOF

if gw_start "$SRV_DIR/init.json" "$SRV_DIR/policy.dw"; then
	ok "the gateway starts and answers GatewayReady (harness ready file)"
else
	not_ok "the gateway starts"
	tap_done
	exit
fi

# --- start-up
openssl x509 -in "$GW_CA" -noout -text >"$SRV_DIR/ca.txt" 2>&1
check "GatewayReady carries an ECDSA P-256 CA certificate" grep -q 'prime256v1\|P-256' "$SRV_DIR/ca.txt"
check "the CA is a CA (basicConstraints CA:TRUE)" grep -q 'CA:TRUE' "$SRV_DIR/ca.txt"
check "the CA file holds no private key" sh -c "! grep -q 'PRIVATE' '$GW_CA'"
check "the CA names the box (OU=gwtest)" grep -q 'OU *= *gwtest\|OU=gwtest' "$SRV_DIR/ca.txt"
st=/proc/$GW_PID/status
check "the gateway runs under its seccomp filter (Seccomp: 2)" grep -q '^Seccomp:[[:space:]]*2' "$st"
check "the gateway has no_new_privs" grep -q '^NoNewPrivs:[[:space:]]*1' "$st"
check "the gateway has no effective capabilities" grep -q '^CapEff:[[:space:]]*0*$' "$st"
check "the gateway has no bounding capabilities" grep -q '^CapBnd:[[:space:]]*0*$' "$st"
fds=$(ls /proc/$GW_PID/fd | wc -l)
check "the gateway holds only its fds (0-4, listener, epoll, signal pair, resolver): $fds" \
	test "$fds" -le 12

# --- an allowed request through CONNECT, intercepted
out=$(gw_curl "https://api.box.test:$TP/echo?q=1" 2>&1)
check "an allowed GET through CONNECT reaches the server" sh -c "echo '$out' | grep -q '\"method\": \"GET\"'"
check "net:connect {host, port} decided before DNS" \
	test "$(gw_dec_count "d['kind']=='decide' and d['action']=='net:connect' and i=={'host':'api.box.test','port':$TP}")" -ge 1
check "net:connect {host, port, ip} decided for the pinned address" \
	test "$(gw_dec_count "d['kind']=='decide' and d['action']=='net:connect' and i.get('ip')=='127.0.0.1'")" -ge 1
check "http:request has host, port, method, path (no query), body_bytes, intercepted" \
	test "$(gw_dec_count "d['kind']=='decide' and d['action']=='http:request' and i=={'host':'api.box.test','port':$TP,'method':'GET','path':'/echo','body_bytes':0,'intercepted':True}")" -ge 1
check "net:connect outcome recorded (response, host and port only)" \
	test "$(gw_dec_count "d['kind']=='record' and d['action']=='net:connect' and d['event']=='response' and i=={'host':'api.box.test','port':$TP}")" -ge 1
check "http:request outcome recorded with its status and the input it was decided with" \
	test "$(gw_dec_count "d['kind']=='record' and d['action']=='http:request' and d['output']=={'status':200} and i=={'host':'api.box.test','port':$TP,'method':'GET','path':'/echo','body_bytes':0,'intercepted':True}")" -ge 1
check "every record names a permitted Decide not recorded before (decide_id)" \
	test "$(gw_dec_count "d['kind']=='bad_record'")" -eq 0

# --- a denied host: 403 before the tunnel, the decision's message as body
resp=$(printf 'CONNECT other.box.test:%s HTTP/1.1\r\nHost: other.box.test\r\n\r\n' "$TP" |
	$CL --timeout 3 raw 127.0.0.1 "$GW_PORT" | tr -d '\r')
msg=$(python3 -c "import json,sys
for l in open('$GW_DEC'):
    d=json.loads(l)
    if d['kind']=='decide' and d['input'].get('host')=='other.box.test': print(d['message']); break")
check "a denied CONNECT gets 403, never 200" sh -c "echo '$resp' | head -1 | grep -q '^HTTP/1.1 403'"
check "the refusal carries x-box-egress: refused" sh -c "echo \"\$1\" | grep -qi '^x-box-egress: refused'" _ "$resp"
check "the refusal is text/plain" sh -c "echo \"\$1\" | grep -qi '^content-type: text/plain'" _ "$resp"
check "the refusal's body is the decision message" sh -c "test \"\$(echo \"\$1\" | tail -1)\" = \"\$2\"" _ "$resp" "$msg"
check "and so is its x-box-reason header" sh -c "echo \"\$1\" | grep -qxF \"x-box-reason: \$2\"" _ "$resp" "$msg"
check "the message names the resource host:port" sh -c "echo \"\$1\" | grep -q \"policy denied this operation on 'other.box.test:$TP'\"" _ "$msg"
check "a host denied by net:connect is never resolved again per address" \
	test "$(gw_dec_count "d['kind']=='decide' and i.get('host')=='other.box.test'")" -eq 1

# --- denied path, method; keep-alive with mixed verdicts on one connection
codes=$(gw_curl -o /dev/null -o /dev/null -o /dev/null -o /dev/null \
	-w '%{http_code} %{num_connects}\n' \
	"https://api.box.test:$TP/echo" "https://api.box.test:$TP/nope" \
	"https://api.box.test:$TP/echo/secret/x" "https://api.box.test:$TP/echo?again" | tr '\n' ' ')
check "keep-alive: permit, deny, forbid, permit on one connection ($codes)" \
	test "$codes" = "200 1 403 0 403 0 200 0 "
body=$(gw_curl "https://api.box.test:$TP/echo/secret/x")
check "a forbid's message names its rule and description" \
	sh -c "echo \"\$1\" | grep -q '\[policy: no_secret\]: no secrets here.'" _ "$body"
hdr=$(gw_curl -D - -o /dev/null "https://api.box.test:$TP/nope" | tr -d '\r')
check "a request refused inside the tunnel: 403 + x-box-egress: refused" \
	sh -c "echo \"\$1\" | grep -q '^HTTP/1.1 403' && echo \"\$1\" | grep -qi '^x-box-egress: refused'" _ "$hdr"
check "the refusal has Content-Length" sh -c "echo \"\$1\" | grep -qi '^content-length: '" _ "$hdr"
code=$(gw_curl -o /dev/null -w '%{http_code}' -X DELETE "https://api.box.test:$TP/echo")
check "a method the policy does not permit: 403 ($code)" test "$code" = 403
code=$(gw_curl -o /dev/null -w '%{http_code}' -d 'abc' "https://api.box.test:$TP/upload")
check "POST with a body permitted by method + path: 200 ($code)" test "$code" = 200
check "body_bytes = Content-Length" \
	test "$(gw_dec_count "d['kind']=='decide' and d['action']=='http:request' and i['method']=='POST' and i['body_bytes']==3")" -ge 1
n=$(grep -c '"path": "/nope"\|"path":"/nope"' "$TLOG")
check "a refused request never reaches the server" test "$n" -eq 0

# --- canonical paths (docs/box-policy.5.md): what the policy sees
for t in "/a/../echo:/echo" "/./echo/./x:/echo/x" "/%65cho:/echo" "/echo%2fx:/echo%2Fx" \
	"/echo/a%2Fb/../c:/echo/c" "/echo?x=/../secret:/echo" "/echo/%7euser:/echo/~user"; do
	raw=${t%%:*} want=${t#*:}
	: >"$GW_DEC.tmp"
	gw_curl --path-as-is -o /dev/null "https://api.box.test:$TP$raw"
	check "canonical path: $raw is decided as $want" \
		test "$(gw_dec_count "d['kind']=='decide' and d['action']=='http:request' and i['path']=='$want'")" -ge 1
done
code=$(gw_curl --path-as-is -o /dev/null -w '%{http_code}' "https://api.box.test:$TP/echo/x/../secret/y")
check "dot segments cannot reach a forbidden path: /echo/x/../secret/y -> 403 ($code)" test "$code" = 403

# --- plain proxy requests (absolute-form http://)
out=$(curl -sS --max-time 10 --proxy "http://127.0.0.1:$GW_PORT" "http://plain.box.test:$PP/echo")
check "an absolute-form http:// request is forwarded" sh -c "echo '$out' | grep -q '\"path\": \"/echo\"'"
check "http:request for a plain request has intercepted = false" \
	test "$(gw_dec_count "d['kind']=='decide' and d['action']=='http:request' and i['host']=='plain.box.test' and i['intercepted']==False")" -ge 1
check "Proxy-Authorization is never forwarded" sh -c "
	curl -sS --max-time 10 --proxy http://u:p@127.0.0.1:$GW_PORT http://plain.box.test:$PP/echo |
	grep -qv 'proxy-authorization'"
out=$(curl -sS --max-time 10 --proxy "http://127.0.0.1:$GW_PORT" -H 'Connection: keep-alive, X-Hop' \
	-H 'X-Hop: 1' -H 'Keep-Alive: timeout=5' -H 'TE: trailers' -H 'Proxy-Connection: keep-alive' \
	-H 'X-End: kept' "http://plain.box.test:$PP/echo")
check "hop-by-hop fields (Connection and what it names, Keep-Alive, TE, Proxy-Connection) are stripped" \
	python3 -c "import json,sys
h=json.loads(sys.argv[1])['headers']
sys.exit(0 if not ({'x-hop','keep-alive','te','proxy-connection','connection'} & set(h)) and h.get('x-end')=='kept' else 1)" "$out"
code=$(printf 'GET /echo HTTP/1.1\r\nHost: plain.box.test\r\n\r\n' |
	$CL --timeout 3 raw 127.0.0.1 "$GW_PORT" | head -1 | tr -d '\r')
check "origin-form to the proxy: 400 ($code)" sh -c "echo '$code' | grep -q ' 400 '"
code=$(printf 'GET https://api.box.test:%s/echo HTTP/1.1\r\nHost: api.box.test\r\n\r\n' "$TP" |
	$CL --timeout 3 raw 127.0.0.1 "$GW_PORT" | head -1 | tr -d '\r')
check "https:// absolute-form: 400 ($code)" sh -c "echo '$code' | grep -q ' 400 '"
code=$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' --proxy "http://127.0.0.1:$GW_PORT" \
	"http://other.box.test:$PP/echo")
check "a plain request to a denied host: 403 ($code)" test "$code" = 403

# --- x-box-reason: the refusal's rule and description in a header (printable ASCII only)
# header_of FILE NAME: the value of NAME in a curl -D dump (the last response in it)
header_of() { tr -d '\r' <"$1" | awk -v n="$2" 'tolower($0) ~ "^" n ":" { v = substr($0, length(n) + 3) } END { print v }'; }
last_message() { python3 -c "import json,sys
m=''
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d['kind']=='decide' and d['verdict']=='deny': m=d['message']
print(m)" "$GW_DEC"; }
curl -sS --max-time 10 -D "$SRV_DIR/rh" -o "$SRV_DIR/rb" --proxy "http://127.0.0.1:$GW_PORT" \
	"http://plain.box.test:$PP/echo/secret/x"
msg=$(last_message)
check "plain HTTP refused by a forbid: x-box-reason names the rule and its description" \
	test "$(header_of "$SRV_DIR/rh" x-box-reason)" = "policy denied this operation on 'plain.box.test:$PP/echo/secret/x' [policy: no_secret]: no secrets here."
check "plain HTTP: x-box-reason and the body are the decision's message" \
	sh -c 'test "$(cat "$1")" = "$2" && test "$3" = "$2"' _ "$SRV_DIR/rb" "$msg" "$(header_of "$SRV_DIR/rh" x-box-reason)"
gw_curl -D "$SRV_DIR/rh" -o "$SRV_DIR/rb" "https://api.box.test:$TP/echo/secret/y"
check "intercepted HTTPS refused: x-box-reason names the rule and its description" \
	test "$(header_of "$SRV_DIR/rh" x-box-reason)" = "policy denied this operation on 'api.box.test:$TP/echo/secret/y' [policy: no_secret]: no secrets here."
check "intercepted HTTPS: the body is the same message" \
	test "$(cat "$SRV_DIR/rb")" = "policy denied this operation on 'api.box.test:$TP/echo/secret/y' [policy: no_secret]: no secrets here."
gw_curl -D "$SRV_DIR/rh" -o /dev/null "https://other.box.test:$TP/echo" 2>/dev/null
check "CONNECT refused (curl sees the proxy's 403): x-box-reason names the default deny" \
	test "$(header_of "$SRV_DIR/rh" x-box-reason)" = "policy denied this operation on 'other.box.test:$TP' [default-deny]: No permit policy matched this request."
gw_curl -D "$SRV_DIR/rh" -o "$SRV_DIR/rb" "https://api.box.test:$TP/echo/cafe"
v=$(header_of "$SRV_DIR/rh" x-box-reason)
check "non-ASCII in a description is escaped in the header ($v)" \
	test "$v" = "policy denied this operation on 'api.box.test:$TP/echo/cafe' [policy: no_cafe]: pas de caf\\u{e9} \\u{2615}."
check "and kept as it is in the body" grep -q 'pas de café ☕' "$SRV_DIR/rb"
check "the refusal's head is printable ASCII throughout" \
	sh -c "! tr -d '\r\n' <'$SRV_DIR/rh' | LC_ALL=C grep -q '[^ -~]'"

# --- upstream failures
code=$(gw_curl -o /dev/null -w '%{http_code}' "https://api.box.test:1/echo" 2>/dev/null)
check "nothing listening upstream: CONNECT gets 502 ($code)" test "$code" = 502 -o "$code" = 000
resp=$(printf 'CONNECT api.box.test:1 HTTP/1.1\r\nHost: api.box.test\r\n\r\n' |
	$CL --timeout 3 raw 127.0.0.1 "$GW_PORT" | tr -d '\r')
check "connection refused upstream: 502 with a short reason" \
	sh -c "echo \"\$1\" | head -1 | grep -q ' 502 ' && echo \"\$1\" | grep -q 'cannot connect to api.box.test:1'" _ "$resp"
check "a failed connection is recorded as a net:connect error" \
	test "$(gw_dec_count "d['kind']=='record' and d['action']=='net:connect' and d['event']=='error' and i['port']==1")" -ge 1
owed=$(gw_owed)
check "every permit got its Record: each address dialled or not, each request answered, refused or failed ($owed owed)" \
	test "$owed" = 0

# --- listener close: no new connections, open ones closed
exec 5<>/dev/tcp/127.0.0.1/$GW_PORT
gw_cmd "close agent"
sleep 0.3
if printf 'x' >&5 2>/dev/null && read -r -t 2 line <&5; then closed=no; else closed=yes; fi
exec 5<&-
check "GatewayListenerClosed closes the listener's open connections" test "$closed" = yes
check "GatewayListenerClosed stops accepting" sh -c "! curl -s --max-time 3 --proxy http://127.0.0.1:$GW_PORT http://plain.box.test:$PP/echo"

gw_stop
check "boxd closing its channel ends the gateway with status 0 ($GW_STATUS)" test "$GW_STATUS" -eq 0

# --- policyd lost: exit 1
gw_start "$SRV_DIR/init.json" "$SRV_DIR/policy.dw" || not_ok "second start"
gw_cmd drop-policyd
for _ in $(seq 40); do kill -0 "$GW_PID" 2>/dev/null || break; sleep 0.05; done
gw_stop
check "losing box-policyd ends the gateway with status 1 ($GW_STATUS)" test "$GW_STATUS" -eq 1
check "it says why in one line" grep -q 'box-policyd closed its channel' "$GW_ERR"

# --- SIGTERM: exit 0
gw_start "$SRV_DIR/init.json" "$SRV_DIR/policy.dw" || not_ok "third start"
kill -TERM "$GW_PID"
for _ in $(seq 40); do kill -0 "$GW_PID" 2>/dev/null || break; sleep 0.05; done
gw_stop
check "SIGTERM ends the gateway with status 0 ($GW_STATUS)" test "$GW_STATUS" -eq 0

# --- a start refused: ok=false with the reason, exit 1
cat >"$SRV_DIR/badinit.json" <<EOF
{"upstream_ca_pem_file": "$SRV_DIR/zone.json", "resolver": "127.0.0.1:$DNSD_PORT"}
EOF
if gw_start "$SRV_DIR/badinit.json" "$SRV_DIR/policy.dw" 2>/dev/null; then
	not_ok "an upstream_ca without a certificate refuses the start"
	gw_stop
else
	check "an upstream_ca without a certificate refuses the start (status $GW_STATUS)" test "$GW_STATUS" -eq 1
	check "GatewayReady says why (ok=false)" grep -q 'not ready: upstream TLS' "$GW_ERR"
fi
tap_done
