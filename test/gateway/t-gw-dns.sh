#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-gw-dns.sh — the order of docs/box-policy.5.md against a resolver that records every query
# (test/servers/dnsd.py): net:connect {host, port} is decided before any DNS query (a denied
# host is never looked up), a permitted host is resolved once and pinned (no second lookup
# on a keep-alive tunnel), each address is decided with its ip before it is dialed (a
# forbidden first address falls through to the next), rebinding (the second answer of a
# name is forbidden: the second connection is refused), and a name that does not resolve.
# Trusts: nothing; it is test code.
set -u
cd "$(dirname "$0")/../.."
. test/lib.sh
. test/gateway/lib-gw.sh

make_ca api.box.test '*.box.test' localhost >/dev/null || { not_ok "test CA"; tap_done; exit; }
start_httpd --tls || { not_ok "httpd --tls"; tap_done; exit; }
TP=$HTTPD_PORT
cat >"$SRV_DIR/zone.json" <<'EOF'
{"api.box.test": ["127.0.0.1"], "denied.box.test": ["127.0.0.1"], "evil.test": ["127.0.0.1"],
 "once.box.test": ["127.0.0.1"], "multi.box.test": ["127.0.0.3", "127.0.0.1"],
 "onlybad.box.test": ["127.0.0.3"],
 "rebind.box.test": {"seq": [["127.0.0.1"], ["169.254.169.254"]]}}
EOF
start_dnsd "$SRV_DIR/zone.json" || { not_ok "dnsd"; tap_done; exit; }
cat >"$SRV_DIR/init.json" <<EOF
{"upstream_ca_pem_file": "$SRV_CA", "resolver": "127.0.0.1:$DNSD_PORT",
 "allow_host_loopback": true}
EOF
cat >"$SRV_DIR/policy.dw" <<'EOF'
@id("conn")
permit (principal, action == Box::Action::"net:connect", resource)
when { context.input.host != "denied.box.test" };

@id("bad_ips")
@description("not that address")
forbid (principal, action == Box::Action::"net:connect", resource)
when { context.input has ip && (context.input.ip == "127.0.0.3" || context.input.ip like "169.254.*") };

@id("req")
permit (principal, action == Box::Action::"http:request", resource);
EOF
gw_start "$SRV_DIR/init.json" "$SRV_DIR/policy.dw" || { not_ok "gateway starts"; tap_done; exit; }

queries() { python3 -c "import json,sys
print(sum(1 for l in open('$DNSD_LOG') if json.loads(l)['name'].lower()=='$1' and json.loads(l)['type']=='${2:-A}'))"; }

code=$(gw_curl -o /dev/null -w '%{http_code}' "https://denied.box.test:$TP/echo" 2>/dev/null)
check "a host denied by net:connect: the CONNECT is refused ($code)" test "$code" = 403 -o "$code" = 000
check "a denied host is never looked up (no DNS query for it)" test "$(queries denied.box.test)" -eq 0
check "nor its AAAA" test "$(queries denied.box.test AAAA)" -eq 0

code=$(gw_curl -o /dev/null -w '%{http_code}' "https://api.box.test:$TP/echo")
check "a permitted host resolves through [gateway] resolver ($code)" test "$code" = 200
check "the resolver was asked for it" test "$(queries api.box.test)" -ge 1

codes=$(gw_curl -o /dev/null -o /dev/null -o /dev/null -w '%{http_code} ' \
	"https://once.box.test:$TP/echo" "https://once.box.test:$TP/echo?2" "https://once.box.test:$TP/echo?3")
check "three requests on one tunnel ($codes)" test "$codes" = "200 200 200 "
check "resolved once and pinned: one A query for the tunnel" test "$(queries once.box.test)" -eq 1

code=$(gw_curl -o /dev/null -w '%{http_code}' "https://multi.box.test:$TP/echo")
check "two addresses, the first forbidden by an ip rule: the second is used ($code)" test "$code" = 200
check "the first address was decided and denied" \
	test "$(gw_dec_count "d['kind']=='decide' and i.get('ip')=='127.0.0.3' and d['verdict']=='deny'")" -ge 1
check "the second address was decided and permitted" \
	test "$(gw_dec_count "d['kind']=='decide' and i.get('host')=='multi.box.test' and i.get('ip')=='127.0.0.1' and d['verdict']=='permit'")" -ge 1

resp=$(printf 'CONNECT onlybad.box.test:%s HTTP/1.1\r\nHost: x\r\n\r\n' "$TP" |
	python3 test/servers/client.py --timeout 3 raw 127.0.0.1 "$GW_PORT" | tr -d '\r')
check "every address forbidden: 403 refused, never 200" \
	sh -c "echo \"\$1\" | head -1 | grep -q ' 403 ' && echo \"\$1\" | grep -qi 'x-box-egress: refused'" _ "$resp"
check "its body is the per-address decision's message" \
	sh -c "echo \"\$1\" | grep -q '\[policy: bad_ips\]: not that address.'" _ "$resp"

code=$(gw_curl -o /dev/null -w '%{http_code}' "https://rebind.box.test:$TP/echo")
check "rebinding: the first answer (127.0.0.1) is permitted ($code)" test "$code" = 200
resp=$(printf 'CONNECT rebind.box.test:%s HTTP/1.1\r\nHost: x\r\n\r\n' "$TP" |
	python3 test/servers/client.py --timeout 3 raw 127.0.0.1 "$GW_PORT" | tr -d '\r')
check "rebinding: the second answer (169.254.169.254) is decided and refused" \
	sh -c "echo \"\$1\" | head -1 | grep -q ' 403 '" _ "$resp"
check "rebinding: the forbidden address was decided with its ip" \
	test "$(gw_dec_count "d['kind']=='decide' and i.get('ip')=='169.254.169.254' and d['verdict']=='deny'")" -eq 1

resp=$(printf 'CONNECT nowhere.box.test:%s HTTP/1.1\r\nHost: x\r\n\r\n' "$TP" |
	python3 test/servers/client.py --timeout 5 raw 127.0.0.1 "$GW_PORT" | tr -d '\r')
check "a name that does not resolve: 502 with a short reason" \
	sh -c "echo \"\$1\" | head -1 | grep -q ' 502 ' && echo \"\$1\" | grep -q 'cannot resolve nowhere.box.test'" _ "$resp"
out=$(gw_curl -D "$SRV_DIR/evil.h" "https://evil.test:$TP/echo")
check "upstream certificate not valid for the host: 502 with the reason" \
	sh -c "grep -q '^HTTP/1.1 502 ' '$SRV_DIR/evil.h' && echo \"\$1\" | grep -q 'upstream certificate not trusted'" _ "$out"
check "and nothing was forwarded (no http:request outcome with a status)" \
	test "$(gw_dec_count "d['kind']=='record' and d['action']=='http:request' and i['host']=='evil.test' and d['event']=='response'")" -eq 0
gw_stop
check "the gateway exits 0 ($GW_STATUS)" test "$GW_STATUS" -eq 0
tap_done
