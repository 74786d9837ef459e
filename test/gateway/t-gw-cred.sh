#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-gw-cred.sh — [egress.NAME] credentials in box-gateway: the placeholder becomes the secret
# on an intercepted request to the bound destination (the server sees the secret, the agent
# sees [REDACTED] in reflected headers and bodies, also when the secret straddles chunk
# boundaries), a request without the placeholder is refused (inject = placeholder),
# Accept-Encoding: identity is asked and a compressed reply refused, plaintext to a bound
# destination refused, a credential scoped to one sandbox (listener) refused from another,
# WebSocket upgrades get the secret injected. The secret never appears in a decision record
# or the gateway's log.
# Trusts: nothing; it is test code.
set -u
cd "$(dirname "$0")/../.."
. test/lib.sh
. test/gateway/lib-gw.sh
CL="python3 test/servers/client.py"

make_ca api.box.test '*.box.test' localhost >/dev/null || { not_ok "test CA"; tap_done; exit; }
start_httpd --tls || { not_ok "httpd --tls"; tap_done; exit; }
TP=$HTTPD_PORT TLOG=$HTTPD_LOG
echo '{}' >"$SRV_DIR/zone.json"
start_dnsd "$SRV_DIR/zone.json" || { not_ok "dnsd"; tap_done; exit; }
gw_hosts api.box.test tool.box.test q.box.test
PH=box_$(printf 'a%.0s' $(seq 64))
TPH=box_$(printf 'b%.0s' $(seq 64))
QPH=box_$(printf 'c%.0s' $(seq 64))
export GWC_SECRET="sk-SECRET-0123456789abcdef"
cat >"$SRV_DIR/init.json" <<EOF
{"upstream_ca_pem_file": "$SRV_CA", "hosts_file_path": "$SRV_DIR/hosts",
 "resolver": "127.0.0.1:$DNSD_PORT", "allow_host_loopback": true,
 "credentials": [
  {"name": "egress.api", "destinations": [{"host": "api.box.test", "port": $TP}],
   "secret": {"secret_env": "GWC_SECRET"}, "placeholder": "$PH", "placement": "header"},
  {"name": "egress.tool", "destinations": [{"host": "tool.box.test", "port": $TP}],
   "secret": "tool-secret-fedcba9876", "placeholder": "$TPH", "placement": "header",
   "sandboxes": ["tool.x"]},
  {"name": "egress.q", "destinations": [{"host": "q.box.test", "port": $TP}],
   "secret": "q-secret-value", "placeholder": "$QPH", "placement": "query_param",
   "param": "key"}]}
EOF
cat >"$SRV_DIR/policy.dw" <<'EOF'
@id("all")
permit (principal, action == Box::Action::"net:connect", resource);
@id("req")
permit (principal, action == Box::Action::"http:request", resource);
EOF
gw_start "$SRV_DIR/init.json" "$SRV_DIR/policy.dw" --listen agent --listen tool.x ||
	{ not_ok "gateway starts"; tap_done; exit; }
TOOL_PORT=$(gw_port tool.x)
lastreq() { python3 -c "import json
r=[json.loads(l) for l in open('$TLOG') if json.loads(l).get('event')=='request']
print(json.dumps(r[-1]) if r else '{}')"; }
header_of() { python3 -c "import json,sys; print(json.loads(sys.argv[1])['headers'].get('$1',''))" "$2"; }

# --- the swap
out=$(gw_curl -D "$SRV_DIR/h" -H "Authorization: Bearer $PH" -H 'Accept-Encoding: gzip, br' \
	"https://api.box.test:$TP/reflect-auth")
req=$(lastreq)
check "the server receives the secret in place of the placeholder" \
	test "$(header_of authorization "$req")" = "Bearer $GWC_SECRET"
check "upstream is asked for identity encoding" test "$(header_of accept-encoding "$req")" = identity
check "a reflected secret is redacted from the body" sh -c "echo '$out' | grep -q 'Bearer \[REDACTED\]'"
check "and from the response headers" grep -qi '^x-reflect: Bearer \[REDACTED\]' "$SRV_DIR/h"
check "the agent never sees the secret" sh -c "! grep -q '$GWC_SECRET' '$SRV_DIR/h' && ! echo '$out' | grep -q '$GWC_SECRET'"
out=$(gw_curl -H "Authorization: Bearer $PH" "https://api.box.test:$TP/reflect-auth?split=3,8,10,12,20,25,30&delay_ms=50")
check "redaction across chunk boundaries (the secret cut in 7 places)" \
	sh -c "echo '$out' | head -1 | grep -qx 'Bearer \[REDACTED\]'"
out=$(gw_curl -D "$SRV_DIR/h2" -H "Authorization: Bearer $PH" "https://api.box.test:$TP/echo")
check "a Content-Length reply carrying the secret is redacted too" \
	sh -c "echo '$out' | grep -q 'Bearer \[REDACTED\]' && ! echo '$out' | grep -q '$GWC_SECRET'"
check "and re-framed as chunked (its length changed)" grep -qi '^transfer-encoding: chunked' "$SRV_DIR/h2"
hdr=$(gw_curl -D - -o /dev/null "https://api.box.test:$TP/echo" | tr -d '\r')
check "a request to the bound destination without the placeholder: 403 refused" \
	sh -c "echo \"\$1\" | grep -q '^HTTP/1.1 403' && echo \"\$1\" | grep -qi '^x-box-egress: refused'" _ "$hdr"
code=$(gw_curl -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $PH" "https://api.box.test:$TP/gzip")
check "a compressed reply to a credentialed request is refused ($code)" test "$code" = 502
code=$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' --proxy "http://127.0.0.1:$GW_PORT" \
	-H "Authorization: Bearer $PH" "http://api.box.test:$TP/echo")
check "a plaintext request to a bound destination: 403 ($code)" test "$code" = 403
out=$(gw_curl "https://q.box.test:$TP/reflect-auth?key=$QPH&x=1")
req=$(lastreq)
check "query_param placement: the server gets the secret" \
	python3 -c "import json,sys; sys.exit(0 if json.loads(sys.argv[1])['query']=='key=q-secret-value&x=1' else 1)" "$req"
check "query_param placement: reflected back redacted" sh -c "echo '$out' | grep -q 'key=\[REDACTED\]&x=1'"

# --- sandboxes: the tool's credential from the agent's listener
code=$(gw_curl -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TPH" "https://tool.box.test:$TP/echo")
check "a placeholder scoped to tool.x, sent from the agent's listener: 403 ($code)" test "$code" = 403
out=$(curl -sS --max-time 10 --proxy "http://127.0.0.1:$TOOL_PORT" --cacert "$GW_CA" \
	-H "Authorization: Bearer $TPH" "https://tool.box.test:$TP/echo")
req=$(lastreq)
check "the same request from tool.x's listener gets the secret" \
	test "$(header_of authorization "$req")" = "Bearer tool-secret-fedcba9876"
out=$(gw_curl "https://tool.box.test:$TP/echo")
req=$(lastreq)
check "a request from another sandbox without the placeholder goes out untouched" \
	test -z "$(header_of authorization "$req")"

# --- WebSocket with the credential injected
out=$($CL --proxy "127.0.0.1:$GW_PORT" --tls --cacert "$GW_CA" --timeout 5 ws \
	--header "Authorization: Bearer $PH" api.box.test "$TP" /ws hello 2>&1 | tr '\n' '|')
check "WebSocket to a credentialed destination: echo relayed ($out)" test "$out" = "hello|"
req=$(lastreq)
check "the secret was injected into the upgrade request" \
	test "$(header_of authorization "$req")" = "Bearer $GWC_SECRET"

gw_stop
check "the gateway exits 0" test "$GW_STATUS" -eq 0
check "the secret is in no decision record" sh -c "! grep -q 'sk-SECRET\|tool-secret\|q-secret' '$GW_DEC'"
check "the secret is not in the gateway's log" sh -c "! grep -q 'sk-SECRET\|tool-secret\|q-secret' '$GW_ERR'"
tap_done
