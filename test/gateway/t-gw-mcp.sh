#!/usr/bin/env bash
# t-gw-mcp.sh — remote MCP servers (http [mcp.NAME], issue 14 item 7) through box-gateway:
# a POST to the server's url is decided http:request, then its JSON-RPC message mcp:call
# (initialize too; notifications and ping pass), tools/call refined per tool with the
# arguments typed from the tools/list schema (registered with the policy engine from a JSON
# or an SSE reply); a denial is HTTP 200 with a -32001 JSON-RPC error body and nothing goes
# upstream; the [mcp] secret is injected; a message over max_frame is 413; batches and
# garbage are refused; a server->client request's reply is decided on its method; a tool
# whose description changed is refused (-32003); outcomes are recorded.
# The server is test/gateway/mcp-server.py on 127.0.0.1 (TLS, test CA).
# Trusts: nothing; it is test code.
set -u
cd "$(dirname "$0")/../.."
. test/lib.sh
. test/gateway/lib-gw.sh

make_ca api.box.test '*.box.test' localhost >/dev/null || { not_ok "test CA"; tap_done; exit; }
_srv_start mcpd python3 test/gateway/mcp-server.py --tls "$SRV_CERT" "$SRV_KEY" --path /mcp \
	--path /fail ||
	{ not_ok "mcp-server.py"; tap_done; exit; }
MP=$_srv_port MLOG=$_srv_log
echo '{}' >"$SRV_DIR/zone.json"
start_dnsd "$SRV_DIR/zone.json" || { not_ok "dnsd"; tap_done; exit; }
gw_hosts mcp.box.test
PH=box_$(printf 'd%.0s' $(seq 64))
export GWM_SECRET="mcp-SECRET-7f3e9a1c55"
cat >"$SRV_DIR/init.json" <<EOF
{"upstream_ca_pem_file": "$SRV_CA", "hosts_file_path": "$SRV_DIR/hosts",
 "resolver": "127.0.0.1:$DNSD_PORT", "allow_host_loopback": true,
 "credentials": [
  {"name": "mcp.f-mcpt", "destinations": [{"host": "mcp.box.test", "port": $MP, "path_prefix": "/mcp"}],
   "secret": {"secret_env": "GWM_SECRET"}, "placeholder": "$PH", "placement": "header",
   "inject": "always"}],
 "mcp_servers": [
  {"name": "f-mcpt", "host": "mcp.box.test", "port": $MP, "path": "/mcp", "max_frame": 4096,
   "call_timeout_ms": 1500},
  {"name": "f-closed", "host": "mcp.box.test", "port": $MP, "path": "/closed"},
  {"name": "f-fail", "host": "mcp.box.test", "port": $MP, "path": "/fail"}]}
EOF
cat >"$SRV_DIR/policy.dw" <<'EOF'
@id("net")
permit (principal, action == Box::Action::"net:connect", resource);
@id("req")
permit (principal, action == Box::Action::"http:request", resource);
@id("mcp")
permit (principal, action == Box::Action::"mcp:call", resource)
  when { context.input.server == "f-mcpt" || context.input.server == "f-fail" };
@id("typo")
forbid (principal, action == f_fail::Action::"echo", resource) when { context.input.text > 3 };
@id("no_read")
@description("resources stay closed")
forbid (principal, action == Box::Action::"mcp:call", resource)
  when { context.input.method == "resources/read" };
@id("big")
@description("no big sums")
forbid (principal, action == f_mcpt::Action::"add", resource) when { context.input.a > 100 };
@id("deep")
forbid (principal, action == f_mcpt::Action::"nested", resource)
  when { context.input.cfg.depth > 3 };
EOF
gw_start "$SRV_DIR/init.json" "$SRV_DIR/policy.dw" || { not_ok "gateway starts"; tap_done; exit; }

# post BODY [PATH] [CURL ARGS...]: the JSON-RPC body POSTed; the response body on stdout,
# the heads in $SRV_DIR/h (the CONNECT's, then the response's).
post() {
	local body=$1 path=${2:-/mcp}
	shift 2 2>/dev/null || shift $#
	printf '%s' "$body" | gw_curl -D "$SRV_DIR/h" -X POST -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' --path-as-is "$@" --data-binary @- \
		"https://mcp.box.test:$MP$path"
}
status() { awk '/^HTTP\// { s = $2 } END { print s }' "$SRV_DIR/h"; }
ctype() { tr -d '\r' <"$SRV_DIR/h" | awk -F': ' 'tolower($1) == "content-type" { print $2 }'; }
# jget JSON PYEXPR: PYEXPR evaluated on j (the parsed JSON)
jget() { python3 -c "import json,sys; j=json.loads(sys.argv[1]); print($2)" "$1" 2>/dev/null; }
# server_saw PYEXPR: messages the server logged for which PYEXPR (on m) holds
server_saw() {
	python3 - "$MLOG" "$1" <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1]):
    m = json.loads(line)
    if eval(sys.argv[2]):
        n += 1
print(n)
PY
}
# sse_msgs TEXT: the JSON-RPC messages of an event stream, one compact JSON a line
sse_msgs() {
	python3 -c '
import json, sys
ev = []
for line in sys.argv[1].split("\n") + [""]:
    line = line.rstrip("\r")
    if line == "":
        if ev:
            print(json.dumps(json.loads("\n".join(ev))))
        ev = []
    elif line.startswith("data:"):
        ev.append(line[5:][1:] if line[5:].startswith(" ") else line[5:])' "$1"
}

# --- initialize is decided too (over HTTP), and recorded
out=$(post '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}')
check "initialize is answered by the server ($(status))" \
	test "$(jget "$out" 'j["result"]["serverInfo"]["name"]')" = gw-mcp-test
check "initialize was decided as mcp:call {server, method}" test "$(gw_dec_count \
	'd["kind"]=="decide" and d["action"]=="mcp:call" and i=={"server":"f-mcpt","method":"initialize"} and d["verdict"]=="permit"')" = 1
check "http:request was decided before it" python3 - "$GW_DEC" <<'PY'
import json, sys
acts = [json.loads(l)["action"] for l in open(sys.argv[1]) if json.loads(l)["kind"] == "decide"]
sys.exit(0 if acts.index("http:request") < acts.index("mcp:call") else 1)
PY
check "its outcome is recorded (mcp:call response)" test "$(gw_dec_count \
	'd["kind"]=="record" and d["action"]=="mcp:call" and d["event"]=="response" and i["method"]=="initialize"')" = 1
check "the [mcp] secret is injected (inject always: the client sent none)" \
	test "$(server_saw 'm.get("method")=="initialize" and m["authorization"]=="Bearer '"$GWM_SECRET"'"')" = 1
post '{"jsonrpc":"2.0","method":"notifications/initialized"}' >/dev/null
check "a notification passes undecided (202 from the server)" \
	sh -c "test '$(status)' = 202 && test '$(gw_dec_count 'd.get("action")=="mcp:call" and i.get("method")=="notifications/initialized"')' = 0 && test '$(server_saw 'm.get("method")=="notifications/initialized"')' = 1"
post '{"jsonrpc":"2.0","id":"p","method":"ping"}' >/dev/null
post '{"jsonrpc":"2.0","id":"d","method":"server/discover"}' >/dev/null
check "ping and server/discover pass undecided (and reach the server)" \
	sh -c "test '$(gw_dec_count 'd.get("action")=="mcp:call" and i.get("method") in ("ping","server/discover")')' = 0 && test '$(server_saw 'm.get("id") in ("p","d")')' = 2"


# --- a denied initialize: -32001, HTTP 200, JSON, nothing upstream
out=$(post '{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}' /closed)
check "initialize denied: HTTP 200, application/json ($(status), $(ctype))" \
	sh -c "test '$(status)' = 200 && test '$(ctype)' = application/json"
check "initialize denied: the -32001 error body with its id and the policy message" \
	test "$(jget "$out" 'j["jsonrpc"]+" "+str(j["id"])+" "+str(j["error"]["code"])+" "+str("default-deny" in j["error"]["message"])')" = "2.0 7 -32001 True"
check "initialize denied: the server never saw it" test "$(server_saw 'm.get("id")==7')" = 0

# --- tools/call before any tools/list: the schema is pending (policyd denies)
out=$(post '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}')
check "tools/call before tools/list: -32001 (the pending schema) ($(jget "$out" 'j["error"]["message"]'))" \
	test "$(jget "$out" 'j["error"]["code"]')" = -32001
check "and it never reached the server" test "$(server_saw 'm.get("id")==2')" = 0

# --- tools/list over SSE registers the schema
out=$(post '{"jsonrpc":"2.0","id":3,"method":"tools/list"}' /mcp -H 'x-test-reply: sse')
sse_msgs "$out" >"$SRV_DIR/list.txt"
check "tools/list over SSE: the client gets the events as sent ($(ctype))" \
	sh -c "grep -q notifications/progress '$SRV_DIR/list.txt' && test \"\$(tail -1 '$SRV_DIR/list.txt' | python3 -c 'import json,sys; print(len(json.load(sys.stdin)[\"result\"][\"tools\"]))')\" = 4"
schema=$(python3 -c "import json,sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d['kind'] == 'schema': print(json.dumps(d, sort_keys=True))" "$GW_DEC" | tail -1)
check "the schema went to the policy engine (ok)" test "$(jget "$schema" 'j["ok"] and j["ns"]=="f_mcpt" and j["server"]=="f-mcpt"')" = True
check "typed: add {a: Long, b: Long}" test "$(jget "$schema" 'j["tools"]["add"]=={"a":"Long","b":"Long"}')" = True
check "typed: nested record, optional set, number as String; untyped and bad names left out" \
	test "$(jget "$schema" 'j["tools"]["nested"]=={"cfg":"{depth: Long, name?: String}","tags":"Set<String>?","ratio":"String?"}')" = True

# --- the allowed call, refined (not_refined), recorded
out=$(post '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}')
check "allowed tools/call: the server's answer" test "$(jget "$out" 'j["result"]["content"][0]["text"]')" = 5
check "mcp:call {server, method, tool} permitted" test "$(gw_dec_count \
	'd["kind"]=="decide" and d["action"]=="mcp:call" and i=={"server":"f-mcpt","method":"tools/call","tool":"add"} and d["verdict"]=="permit"')" -ge 1
check "then the refinement f_mcpt::Action::\"add\" {a: 2, b: 3}: permit, not_refined" test "$(gw_dec_count \
	'd.get("action")=="f_mcpt::Action::\"add\"" and i=={"a":2,"b":3} and d["verdict"]=="permit" and d["cause"]==4')" = 1
check "the call's outcome is recorded" test "$(gw_dec_count \
	'd["kind"]=="record" and d["action"]=="mcp:call" and i.get("tool")=="add" and d["event"]=="response"')" = 1

# --- the argument rule denies: a > 100
out=$(post '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add","arguments":{"a":200,"b":1}}}')
check "a > 100: HTTP 200 application/json ($(status) $(ctype))" \
	sh -c "test '$(status)' = 200 && test '$(ctype)' = application/json"
check "a > 100: -32001 with the rule's message" \
	test "$(jget "$out" 'str(j["id"])+" "+str(j["error"]["code"])+" "+str("[policy: big]: no big sums" in j["error"]["message"])')" = "5 -32001 True"
check "a > 100: the server never saw it" test "$(server_saw 'm.get("id")==5')" = 0
out=$(post '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"add","arguments":{"a":"200","b":1}}}')
check "type confusion (\"200\" for a Long): -32001, not sent" \
	sh -c "test '$(jget "$out" 'j["error"]["code"]')' = -32001 && test '$(server_saw 'm.get("id")==6')' = 0"

# --- nested arguments typed from the schema
out=$(post '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"nested","arguments":{"cfg":{"depth":2,"name":"x","extra":1},"tags":["a","b"],"ratio":0.5,"untyped":3}}}')
check "nested: allowed ($(jget "$out" 'j.get("result",j.get("error"))'))" test "$(jget "$out" 'j["result"]["content"][0]["text"]')" = ok
check "nested: the record keeps its schema's fields, the number is its text, the untyped is not passed" \
	test "$(gw_dec_count 'd.get("action")=="f_mcpt::Action::\"nested\"" and i=={"cfg":{"depth":2,"name":"x"},"tags":["a","b"],"ratio":"0.5"}')" = 1
out=$(post '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"nested","arguments":{"cfg":{"depth":5}}}}')
check "nested: cfg.depth > 3 denied (-32001), not sent" \
	sh -c "test '$(jget "$out" 'j["error"]["code"]')' = -32001 && test '$(server_saw 'm.get("id")==9')' = 0"

# --- mcp:call itself denied (resources/read), and the catalog
out=$(post '{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":"file:///etc/passwd"}}')
check "resources/read: mcp:call {uri} denied -32001 [policy: no_read], not sent" \
	sh -c "test '$(jget "$out" 'str(j["error"]["code"])+" "+str("no_read" in j["error"]["message"])')' = '-32001 True' && test '$(server_saw 'm.get("id")==10')' = 0"
check "its mcp:call carried the uri" test "$(gw_dec_count 'd["kind"]=="decide" and i.get("uri")=="file:///etc/passwd"')" = 1
out=$(post '{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"nosuch","arguments":{}}}')
check "a tool not in the last tools/list: -32003, not sent" \
	sh -c "test '$(jget "$out" 'j["error"]["code"]')' = -32003 && test '$(server_saw 'm.get("id")==11')' = 0"

# --- malformed messages and max_frame
out=$(post '[{"jsonrpc":"2.0","id":12,"method":"ping"}]')
check "a batch: 400, -32600, not sent" \
	sh -c "test '$(status)' = 400 && test '$(jget "$out" 'j["error"]["code"]')' = -32600 && test '$(server_saw 'm.get("id")==12')' = 0"
out=$(post '{"jsonrpc":"2.0","id":13,"method":')
check "invalid JSON: 400, -32700 (id null)" \
	sh -c "test '$(status)' = 400 && test '$(jget "$out" 'str(j["error"]["code"])+" "+str(j["id"])')' = '-32700 None'"
out=$(post '{"jsonrpc":"1.0","id":14,"method":"tools/list"}')
check "jsonrpc 1.0: 400, -32600" test "$(jget "$out" 'j["error"]["code"]')" = -32600
big=$(python3 -c 'import json; print(json.dumps({"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"*5000}}}))')
out=$(post "$big")
check "a message over max_frame (4096): 413 with a -32600 JSON-RPC body ($(status))" \
	sh -c "test '$(status)' = 413 && test '$(jget "$out" 'str(j["error"]["code"])+" "+str("max_frame" in j["error"]["message"])')' = '-32600 True'"
check "and it was neither decided as mcp:call nor sent" \
	sh -c "test '$(gw_dec_count 'd["kind"]=="decide" and i.get("tool")=="echo"')' = 0 && test '$(server_saw 'm.get("id")==15')' = 0"

# --- a server->client request over SSE: the client's reply is decided on its method
out=$(post '{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"ask","arguments":{}}}' /mcp -H 'x-test-reply: sse')
sse_msgs "$out" >"$SRV_DIR/ask.txt"
check "the server's sampling/createMessage reaches the client in the stream" \
	grep -q '"method": "sampling/createMessage"' "$SRV_DIR/ask.txt"
post '{"jsonrpc":"2.0","id":"srv-1","result":{"role":"assistant","content":{"type":"text","text":"hi"}}}' >/dev/null
check "the client's reply: decided mcp:call {method: sampling/createMessage}, delivered" \
	sh -c "test '$(gw_dec_count 'd["kind"]=="decide" and i=={"server":"f-mcpt","method":"sampling/createMessage"}')' = 1 && test '$(server_saw 'm["kind"]=="reply" and m["id"]=="srv-1"')' = 1"
out=$(post '{"jsonrpc":"2.0","id":"never","result":{}}')
check "a reply to no request the server made: 400, -32600, not sent" \
	sh -c "test '$(status)' = 400 && test '$(jget "$out" 'j["error"]["code"]')' = -32600 && test '$(server_saw 'm.get("id")=="never"')' = 0"

# --- a tool whose description changed (rug pull within the run) is refused
out=$(post '{"jsonrpc":"2.0","id":17,"method":"tools/list"}' /mcp -H 'x-test-variant: 2')
check "tools/list as JSON (changed add) relayed" test "$(jget "$out" 'len(j["result"]["tools"])')" = 4
out=$(post '{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":1}}}')
check "the changed tool: -32003 naming what changed, not sent" \
	sh -c "test '$(jget "$out" 'str(j["error"]["code"])+" "+str("description" in j["error"]["message"])')' = '-32003 True' && test '$(server_saw 'm.get("id")==18')' = 0"
out=$(post '{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}')
check "an unchanged tool still works" test "$(jget "$out" 'j["result"]["content"][0]["text"]')" = hi

# --- a server whose tools the policy does not type-check against: -32002
out=$(post '{"jsonrpc":"2.0","id":23,"method":"tools/list"}' /fail)
check "tools/list of f-fail relayed" test "$(jget "$out" 'len(j["result"]["tools"])')" = 4
check "its schema was refused by the engine, naming the rule" test "$(gw_dec_count \
	'd["kind"]=="schema" and d["ns"]=="f_fail" and not d["ok"] and "typo" in d.get("error","")')" = 1
out=$(post '{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":1}}}' /fail)
check "a call to the failed server: -32002 naming the rule, not sent ($(jget "$out" 'j["error"]["message"]'))" \
	sh -c "test '$(jget "$out" 'str(j["error"]["code"])+" "+str("typo" in j["error"]["message"])')' = '-32002 True' && test '$(server_saw 'm.get("id")==24')' = 0"

# --- another spelling of the url's path is the server's too
out=$(post '{"jsonrpc":"2.0","id":21,"method":"resources/read","params":{"uri":"file:///x"}}' '/mcp/?q=1')
check "a POST to /mcp/?q=1 is decided as the server's (-32001), not sent" \
	sh -c "test '$(jget "$out" 'j["error"]["code"]')' = -32001 && test '$(server_saw 'm.get("id")==21')' = 0"
out=$(post '{"jsonrpc":"2.0","id":22,"method":"resources/read","params":{"uri":"file:///x"}}' '/a/../mcp')
check "a POST to /a/../mcp too" \
	sh -c "test '$(jget "$out" 'j["error"]["code"]')' = -32001 && test '$(server_saw 'm.get("id")==22')' = 0"

# --- call_timeout: the server answers too late
out=$(post '{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"echo","arguments":{"text":"late"}}}' /mcp -H 'x-test-delay-ms: 4000')
check "no answer within call_timeout (1500 ms): -32001 timed out ($(jget "$out" 'j["error"]["message"]'))" \
	test "$(jget "$out" 'str(j["id"])+" "+str(j["error"]["code"])+" "+str("timed out after 1500 ms" in j["error"]["message"])')" = "20 -32001 True"
check "and its mcp:call is recorded as an error" test "$(gw_dec_count \
	'd["kind"]=="record" and d["action"]=="mcp:call" and d["event"]=="error" and i.get("tool")=="echo"')" = 1

# --- other requests to the same host are untouched by MCP handling
code=$(gw_curl -o /dev/null -w '%{http_code}' "https://mcp.box.test:$MP/mcp")
check "a GET to the url is relayed as HTTP (the server's 405)" test "$code" = 405
check "no mcp:call for it" test "$(gw_dec_count 'd["kind"]=="decide" and d["action"]=="mcp:call" and i.get("method") is None')" = 0

gw_stop
check "the gateway exits 0" test "$GW_STATUS" -eq 0
check "the secret is in no decision record and not in the gateway's log" \
	sh -c "! grep -q 'mcp-SECRET' '$GW_DEC' && ! grep -q 'mcp-SECRET' '$GW_ERR'"

# --- GatewayInit's servers are validated (proto/gateway_validate.c, on both ends: the
# harness's send refuses what the gateway's receive would)
for bad in 's|"name": "f-closed",|"name": "f-closed", "ns": "other",|' \
	's|"path": "/closed"|"path": "closed"|' \
	's|"name": "f-closed",|"name": "f-closed", "max_frame": 0,|' \
	's|"name": "f-closed",|"name": "f-closed", "max_frame": 67108865,|' \
	's|"path": "/closed"|"path": "/c?x"|' \
	's|"name": "f-closed",|"name": "f-mcpt",|'; do
	sed "$bad" "$SRV_DIR/init.json" >"$SRV_DIR/bad.json"
	if gw_start "$SRV_DIR/bad.json" "$SRV_DIR/policy.dw" 2>/dev/null; then
		not_ok "GatewayInit with a server edited by $bad is refused (it started)"
		gw_stop
	else
		check "GatewayInit with a server edited by $bad is refused" \
			grep -q 'cannot send GatewayInit: \|No valid GatewayInit' "$GW_ERR"
	fi
done
tap_done
