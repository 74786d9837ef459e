#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-servers.sh — the test fixtures of test/servers/ work: the CA and leaf from mkca.sh verify,
# httpd.py answers each endpoint over HTTP and HTTPS (keep-alive, pipelining, HTTP/1.0,
# chunk boundaries, SSE, WebSocket) and logs what it received, dnsd.py answers and records
# queries (plain, sequence, NXDOMAIN, TCP), echod.py echoes, and sshd.sh runs a login.
# Trusts: nothing; it is test code.
set -u
cd "$(dirname "$0")/../.."
. test/lib.sh
. test/servers/lib-servers.sh
CL="python3 test/servers/client.py"

# --- mkca.sh
if make_ca api.box.test '*.box.test' localhost &&
	openssl verify -CAfile "$SRV_CA" "$SRV_CERT" >/dev/null 2>&1; then
	ok "mkca.sh: the leaf verifies against the test CA"
else
	not_ok "mkca.sh: the leaf verifies against the test CA"
fi
san=$(openssl x509 -in "$SRV_CERT" -noout -ext subjectAltName 2>/dev/null | tail -1)
check "mkca.sh: SANs are the names plus 127.0.0.1 and ::1" \
	test "$san" = "    DNS:api.box.test, DNS:*.box.test, DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1"
check "mkca.sh: EC P-256 keys" \
	sh -c "openssl pkey -in '$SRV_KEY' -noout -text 2>/dev/null | grep -q 'NIST CURVE: P-256'"
check "mkca.sh: refuses a bad name" sh -c "! test/servers/mkca.sh '$SRV_DIR/bad' 'a b' 2>/dev/null"

# --- httpd.py over TLS
if start_httpd --tls; then ok "httpd.py --tls starts"; else not_ok "httpd.py --tls starts"; tap_done; exit; fi
P=$HTTPD_PORT
C=(curl -sS --max-time 10 --cacert "$SRV_CA" --resolve "api.box.test:$P:127.0.0.1")
U="https://api.box.test:$P"
out=$("${C[@]}" -d hello "$U/echo?x=1")
check "httpd /echo returns method, query and body" \
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(not (d["method"]=="POST" and d["query"]=="x=1" and d["body"]=="hello" and d["headers"]["host"].startswith("api.box.test")))' "$out"
line=$(grep '"/echo"' "$HTTPD_LOG" | head -1)
check "httpd --log records the request with SNI and body length" \
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(not (d["event"]=="request" and d["sni"]=="api.box.test" and d["tls"] and d["body_length"]==5 and d["method"]=="POST"))' "$line"
check "httpd /bytes/N sends N bytes" test "$("${C[@]}" "$U/bytes/100000" | wc -c)" -eq 100000
check "httpd /chunked sends K chunks of S bytes" \
	test "$("${C[@]}" "$U/chunked?n=5&size=1000" | wc -c)" -eq 5000
check "httpd /status/N" test "$("${C[@]}" -o /dev/null -w '%{http_code}' "$U/status/503")" = 503
check "httpd /redirect is a 302 to /echo" \
	test "$("${C[@]}" -o /dev/null -w '%{http_code} %{redirect_url}' "$U/redirect")" = "302 $U/echo"
gzh=$("${C[@]}" -D - -o /dev/null "$U/gzip" | tr -d '\r' | grep -i '^content-encoding:')
check "httpd /gzip is gzip-encoded" test "$gzh" = "Content-Encoding: gzip"
gz=$("${C[@]}" --compressed "$U/gzip" | head -1)
check "httpd /gzip decodes" test "$gz" = "hello gzip"
head=$(printf 'x' | "${C[@]}" -D - -o /dev/null -H 'Authorization: Bearer SECRET42' "$U/reflect-auth?split=3,9")
check "httpd /reflect-auth sets X-Reflect" sh -c "printf '%s' '$head' | grep -q '^X-Reflect: Bearer SECRET42'"
raw=$(printf 'GET /reflect-auth?split=3,9 HTTP/1.1\r\nHost: api.box.test\r\nAuthorization: Bearer SECRET42\r\nConnection: close\r\n\r\n' |
	$CL --tls --cacert "$SRV_CA" --sni api.box.test raw 127.0.0.1 "$P" | tr -d '\r')
check "httpd /reflect-auth cuts the body at the split offsets" \
	sh -c "printf '%s' \"\$1\" | sed -n '/^\$/,\$p' | tr '\n' '|' | grep -qF '|3|Bea|6|rer SE|1a|CRET42
split=3,9
|0||'" _ "$raw"
# spellings of the credential: "Basic dTpzM2NyM3Qvcw==" is u:s3cr3t/s
out=$("${C[@]}" -D "$SRV_DIR/rh" -H 'Authorization: Basic dTpzM2NyM3Qvcw==' \
	"$U/reflect-auth?as=raw,b64-1,b64url-2,pct,pctlower,jsonslash&framing=length&split=5" | tail -6 | tr '\n' '|')
check "httpd /reflect-auth?as= spells the decoded Basic credential ($out)" \
	test "$out" = 'u:s3cr3t/s|eHU6czNjcjN0L3MhIQ==|eHh1OnMzY3IzdC9zISE|u%3As3cr3t%2Fs|u%3as3cr3t%2fs|u:s3cr3t\/s|'
check "httpd /reflect-auth framing=length: a Content-Length reply" \
	grep -qi '^content-length: ' "$SRV_DIR/rh"
out=$("${C[@]}" "$U/reflect-auth?key=a%2Bb%20c&param=key&as=raw,json" | tail -2 | tr '\n' '|')
check "httpd /reflect-auth param= takes the query parameter, decoded ($out)" test "$out" = 'a+b c|a+b c|'
up=$(head -c 300000 /dev/urandom | tee "$SRV_DIR/up.bin" | "${C[@]}" -H 'Transfer-Encoding: chunked' --data-binary @- "$U/upload")
want=$(sha256sum "$SRV_DIR/up.bin" | cut -d' ' -f1)
check "httpd /upload hashes a chunked body" test "$up" = "{\"length\": 300000, \"sha256\": \"$want\"}"
check "httpd unknown path is 404" test "$("${C[@]}" -o /dev/null -w '%{http_code}' "$U/nope")" = 404
check "httpd /slow waits" sh -c "s=\$(date +%s%N); '${C[0]}' -sS --cacert '$SRV_CA' --resolve 'api.box.test:$P:127.0.0.1' -o /dev/null '$U/slow?delay_ms=300'; e=\$(date +%s%N); [ \$(( (e - s) / 1000000 )) -ge 300 ]"

# keep-alive: two URLs in one curl run share the connection
"${C[@]}" -o /dev/null -o /dev/null "$U/echo?k=1" "$U/echo?k=2"
c1=$(grep '"k=1"' "$HTTPD_LOG" | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["conn"])')
c2=$(grep '"k=2"' "$HTTPD_LOG" | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["conn"])')
check "httpd keeps the connection alive (same conn id in the log)" test "$c1" = "$c2"
pl=$($CL --tls --cacert "$SRV_CA" --sni api.box.test pipeline 127.0.0.1 "$P" /bytes/10 /status/404 /bytes/3000 /echo | tr '\n' ' ')
check "httpd answers pipelined requests in order" sh -c "case '$pl' in '200 10 404 11 200 3000 200 '*) exit 0 ;; esac; exit 1"

# SSE: the first event comes long before the second (a buffered stream would bring both at once).
# The reader starts curl itself, so a reader slow to start (a loaded machine) cannot find
# both events already waiting in the pipe; 3 s apart, "apart" from 1 s.
sse=$(python3 -c '
import subprocess, sys, time
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, text=True)
times = []
for line in p.stdout:
    if line.startswith("data:"): times.append((line.strip(), time.monotonic()))
p.wait()
gap = times[-1][1] - times[0][1] if len(times) == 2 else 0
print(len(times), times[0][0] if times else "-", "apart" if gap > 1.0 else "together %.3f" % gap)' \
	"${C[@]}" -N "$U/sse?events=2&interval_ms=3000")
check "httpd /sse flushes each event as it is made ($sse)" test "$sse" = "2 data: event 0 apart"

ws=$($CL --tls --cacert "$SRV_CA" --sni api.box.test ws 127.0.0.1 "$P" /ws hello "second message" | tr '\n' '|')
check "httpd /ws echoes WebSocket messages" test "$ws" = "hello|second message|"

# --- plain HTTP, HTTP/1.0
if start_httpd; then ok "httpd.py (plain) starts"; else not_ok "httpd.py (plain) starts"; fi
r10=$(printf 'GET /chunked?n=2&size=5 HTTP/1.0\r\n\r\n' | $CL raw 127.0.0.1 "$HTTPD_PORT" | tr -d '\r' | tr '\n' '|')
check "httpd HTTP/1.0 gets a close-delimited body" sh -c "case '$r10' in 'HTTP/1.1 200 OK|'*'Connection: close|'*'|abcdeabcde') exit 0 ;; esac; exit 1"
bad=$(printf 'NONSENSE\r\n\r\n' | $CL raw 127.0.0.1 "$HTTPD_PORT" | head -1 | tr -d '\r')
check "httpd answers a malformed request with 400" test "$bad" = "HTTP/1.1 400 Bad Request"
check "httpd --log records the malformed head" grep -q '"event": "bad_request".*"head": "NONSENSE' "$HTTPD_LOG"

# --- dnsd.py
cat >"$SRV_DIR/zone.json" <<'ZONE'
{"api.box.test": ["127.0.0.1", "::1"], "multi.box.test": ["127.0.0.2", "127.0.0.3"],
 "rebind.box.test": {"seq": [["127.0.0.1"], ["169.254.169.254"]]}}
ZONE
if start_dnsd "$SRV_DIR/zone.json"; then ok "dnsd.py starts"; else not_ok "dnsd.py starts"; fi
check "dnsd answers A" test "$($CL dns "$DNSD_PORT" api.box.test A)" = "127.0.0.1"
check "dnsd answers AAAA" test "$($CL dns "$DNSD_PORT" API.box.test. AAAA)" = "::1"
check "dnsd answers every address" test "$($CL dns "$DNSD_PORT" multi.box.test A)" = "127.0.0.2 127.0.0.3"
check "dnsd: empty answer for a family without records" test "$($CL dns "$DNSD_PORT" multi.box.test AAAA)" = ""
check "dnsd: NXDOMAIN for an unknown name" test "$($CL dns "$DNSD_PORT" nope.box.test A)" = "NXDOMAIN"
s1=$($CL dns "$DNSD_PORT" rebind.box.test A)
s2=$($CL dns "$DNSD_PORT" rebind.box.test A)
s3=$($CL --timeout 5 dns --tcp "$DNSD_PORT" rebind.box.test A)
check "dnsd: a sequence answers the Nth query with the Nth entry (TCP too)" \
	test "$s1 $s2 $s3" = "127.0.0.1 169.254.169.254 169.254.169.254"
check "dnsd --log records each query" \
	test "$(grep -c '"name": "rebind.box.test"' "$DNSD_LOG") $(grep -c '"name": "nope.box.test", "proto": "udp", "rcode": 3, "type": "A"' "$DNSD_LOG")" = "3 1"

# --- echod.py
if start_echod; then ok "echod.py starts"; else not_ok "echod.py starts"; fi
check "echod echoes" test "$($CL echo 127.0.0.1 "$ECHOD_PORT" 'ping through')" = "ping through"

# --- sshd.sh
if [ "$(id -u)" -ne 0 ]; then
	skip "sshd.sh runs a login" "not root"
elif [ ! -x /usr/sbin/sshd ]; then
	skip "sshd.sh runs a login" "openssh-server is not installed (make deps)"
elif start_sshd; then
	out=$(ssh -F "$SSHD_DIR/ssh_config" -p "$SSHD_PORT" root@127.0.0.1 echo ok 2>&1)
	check "sshd.sh: ssh with the test key runs a command" test "$out" = ok
	out=$(ssh -F "$SSHD_DIR/ssh_config" -o "ProxyCommand=python3 test/servers/client.py tunnel 127.0.0.1 $SSHD_PORT" \
		-p 22 root@github.com echo via-proxy-command 2>&1)
	check "sshd.sh: ssh through a ProxyCommand reaches it under another name" test "$out" = via-proxy-command
else
	not_ok "sshd.sh starts"
fi

tap_done
