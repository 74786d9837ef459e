#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-gw-mcp.sh — remote MCP servers (http [mcp.NAME]) through box-gateway:
# a POST to the server's url is decided http:request, then its JSON-RPC message mcp:call
# (initialize too; notifications and ping pass), tools/call refined per tool with the
# arguments typed from the tools/list schema (registered with the policy engine from a JSON
# or an SSE reply); a denial is HTTP 200 with a -32001 JSON-RPC error body and nothing goes
# upstream; the [mcp] secret is injected; a message over max_frame is 413; batches and
# garbage are refused; a server->client request's reply is decided on its method; a tool
# whose description changed is refused (-32003); outcomes are recorded.
# A call without an id is decided as one with an id (the test server runs tools/call either
# way): denied, HTTP 403 and nothing sent; every other spelling of "no id" or of a member (a
# null id, a batch, case variants, duplicate keys) is refused. What the server sends is read
# as a client reads it (CR line ends, any Content-Type, compression refused): a call without
# an id, or a message read another way, cuts the response before the client has it.
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
    try:
        n += bool(eval(sys.argv[2]))
    except (KeyError, TypeError):
        pass
print(n)
PY
}
# eventually EXPR WANT: gw_dec_count EXPR reaches WANT within 5 s (a record is sent when the
# exchange ends, which may be after curl returned); prints the last count.
eventually() {
	local n
	for _ in $(seq 50); do
		n=$(gw_dec_count "$1")
		[ "$n" = "$2" ] && break
		sleep 0.1
	done
	echo "$n"
}
# sse_events FILE: the data of each complete event of the stream in FILE, one a line (JSON
# re-dumped compact when it is JSON), read as the event stream format says: lines end at
# CRLF, LF or CR; an event ends at an empty line, and one the stream ends inside is dropped.
sse_events() {
	python3 - "$1" <<'PY'
import json, re, sys
t = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
t = t[1:] if t.startswith("\ufeff") else t
data = []
for line in re.split(r"\r\n|\r|\n", t)[:-1]:
    if line == "":
        if data:
            d = "\n".join(data)
            try:
                print(json.dumps(json.loads(d), separators=(",", ":")))
            except ValueError:
                print(repr(d))
        data = []
    elif not line.startswith(":"):
        name, _, val = line.partition(":")
        if name == "data":
            data.append(val[1:] if val.startswith(" ") else val)
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

# --- a call without an id is decided as one with an id; the server runs tools/call either way
out=$(post '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"nested","arguments":{"cfg":{"depth":30}}}}')
check "an id-less tools/call the refinement denies: HTTP 403, -32001, id null ($(status))" \
	test "$(status) $(jget "$out" 'str(j["id"])+" "+str(j["error"]["code"])+" "+str("[policy: deep]" in j["error"]["message"])')" = "403 None -32001 True"
check "… the server never had it (it would have run it)" \
	test "$(server_saw 'm.get("event")=="ran" and "30" in json.dumps(m.get("arguments"))')" = 0
check "… and the gateway logged the refusal (no JSON-RPC reply can name it)" \
	grep -q '\[mcp.f-mcpt\]: tools/call without an id refused (-32001): HTTP 403' "$GW_ERR"
check "… decided as the same call with an id: mcp:call {tool}, then the refinement" \
	sh -c "test '$(gw_dec_count 'd["kind"]=="decide" and d["action"]=="mcp:call" and i=={"server":"f-mcpt","method":"tools/call","tool":"nested"}')' -ge 3 && test '$(gw_dec_count 'd["kind"]=="decide" and d.get("action")=="f_mcpt::Action::\"nested\"" and i=={"cfg":{"depth":30}} and d["verdict"]=="deny"')' = 1"
out=$(post '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"nested","arguments":{"cfg":{"depth":1}}}}')
check "an id-less tools/call permitted: forwarded (the server's 202) and run once ($(status))" \
	test "$(status) $(server_saw 'm.get("event")=="ran" and m["id"] is None and m.get("tool")=="nested"')" = "202 1"
check "… its outcome recorded as an error (no reply can come)" test "$(eventually \
	'd["kind"]=="record" and d["action"]=="mcp:call" and d["event"]=="error" and i.get("tool")=="nested"' 1)" = 1
out=$(post '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"nosuch","arguments":{}}}')
check "an id-less call of a tool not in the last tools/list: 403, -32003, not sent" \
	test "$(status) $(jget "$out" 'j["error"]["code"]') $(server_saw 'm.get("event")=="ran" and m.get("tool")=="nosuch"')" = "403 -32003 0"
out=$(post '{"jsonrpc":"2.0","method":"resources/read","params":{"uri":"file:///etc/passwd"}}')
check "an id-less resources/read that mcp:call denies: 403, -32001 [policy: no_read], not sent" \
	test "$(status) $(jget "$out" 'str(j["error"]["code"])+" "+str("no_read" in j["error"]["message"])') $(server_saw 'm.get("method")=="resources/read" and m.get("id") is None')" = "403 -32001 True 0"
out=$(post '{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"nested","arguments":{"cfg":{"depth":40}}}}')
check "\"id\": null: 400, -32600 (neither a request nor a notification), not sent" \
	test "$(status) $(jget "$out" 'str(j["error"]["code"])+" "+str("null is neither" in j["error"]["message"])') $(server_saw 'm.get("event")=="ran" and "40" in json.dumps(m.get("arguments"))')" = "400 -32600 True 0"
# Other spellings: each refused, none reaches the server (which lowers and trims methods and
# reads the last of duplicate keys).
i=0
for body in \
	'{"jsonrpc":"2.0","id":41,"method":"Tools/Call","params":{"name":"nested","arguments":{"cfg":{"depth":50}}}}' \
	'{"jsonrpc":"2.0","id":42,"method":" tools/call","params":{"name":"nested","arguments":{"cfg":{"depth":50}}}}' \
	'{"jsonrpc":"2.0","id":43,"method":"ping","method":"tools/call","params":{"name":"nested","arguments":{"cfg":{"depth":50}}}}' \
	'{"jsonrpc":"2.0","id":44,"method":"ping","Method":"tools/call","params":{"name":"nested","arguments":{"cfg":{"depth":50}}}}' \
	'{"jsonrpc":"2.0","ID":45,"method":"tools/call","params":{"name":"nested","arguments":{"cfg":{"depth":50}}}}' \
	'{"jsonrpc":"2.0","id":46,"id":true,"method":"tools/call","params":{"name":"nested","arguments":{"cfg":{"depth":50}}}}' \
	'{"jsonrpc":"2.0","id":[47],"method":"tools/call","params":{"name":"nested","arguments":{"cfg":{"depth":50}}}}' \
	'{"method":"tools/call","params":{"name":"nested","arguments":{"cfg":{"depth":50}}}}' \
	'[{"jsonrpc":"2.0","id":48,"method":"ping"},{"jsonrpc":"2.0","method":"tools/call","params":{"name":"nested","arguments":{"cfg":{"depth":50}}}}]'; do
	i=$((i + 1))
	out=$(post "$body")
	check "spelling $i of a call the policy forbids is refused: 400 ($(status), $(jget "$out" 'j["error"]["code"]') $(jget "$out" 'j["error"]["message"]'))" \
		test "$(status)" = 400
done
out=$(post '{"jsonrpc":"2.0","id":49,"method":"tools/call","params":{"name":"nested","arguments":{"cfg":{"depth":1},"CFG":{"depth":50}}}}')
check "arguments equal but for case: 400, -32600" test "$(status) $(jget "$out" 'j["error"]["code"]')" = "400 -32600"
out=$(post '{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"nested","arguments":{"CFG":{"depth":50}}}}')
check "an argument spelled like a property but for case: 200, -32602 naming it" \
	test "$(status) $(jget "$out" 'str(j["error"]["code"])+" "+str("argument '"'CFG'"'" in j["error"]["message"])')" = "200 -32602 True"
out=$(post '{"jsonrpc":"2.0","id":52,"method":"tools/call","params":{"name":"nested","arguments":{"cfg":{"DEPTH":50}}}}')
check "… at any depth" test "$(status) $(jget "$out" 'j["error"]["code"]')" = "200 -32602"
out=$(post '{"jsonrpc":"2.0","id":51,"method":"tools/call","params":{"name":"echo","Name":"nested","arguments":{"cfg":{"depth":50}}}}')
check "params.name and params.Name: 400, -32600" test "$(status)" = 400
check "none of these reached the server: it never ran nested with a depth over 3" \
	test "$(server_saw 'm.get("event")=="ran" and m.get("tool")=="nested" and "depth\": 50" in json.dumps(m.get("arguments"))')" = 0

# --- what the server sends is read as a client reads it: a server's call without an id, or a
# message a client could read another way, cuts the response before the client has it
for k in noid idnull dupkey casekey casemethod bignum batch; do
	post "{\"jsonrpc\":\"2.0\",\"id\":\"s2c-$k\",\"method\":\"tools/call\",\"params\":{\"name\":\"nested\",\"arguments\":{\"cfg\":{\"depth\":1}}}}" \
		/mcp -H 'x-test-reply: sse' -H "x-test-s2c: $k" >"$SRV_DIR/s2c.out" 2>/dev/null
	check "a server's $k message in its event stream: cut before the event ends (no event but the progress one reached the client)" \
		test "$(sse_events "$SRV_DIR/s2c.out" | grep -vc notifications/progress)" = 0
done
check "… each cut logged" test "$(grep -c 'the server sent a message the gateway refuses' "$GW_ERR")" = 7
check "… and the server was asked each time (the requests were permitted)" \
	test "$(server_saw 'm.get("event")=="ran" and str(m.get("id")).startswith("s2c-")')" = 7
post '{"jsonrpc":"2.0","id":"s2c-ok","method":"tools/call","params":{"name":"nested","arguments":{"cfg":{"depth":1}}}}' \
	/mcp -H 'x-test-reply: sse' -H 'x-test-s2c: ok' >"$SRV_DIR/s2c.out" 2>/dev/null
check "a server's notification in the stream passes: progress, the notification, the reply" \
	test "$(sse_events "$SRV_DIR/s2c.out" | python3 -c 'import json,sys; print(",".join(json.loads(l).get("method") or str(json.loads(l).get("id")) for l in sys.stdin))')" = "notifications/progress,notifications/message,s2c-ok"
post '{"jsonrpc":"2.0","id":"s2c-cr","method":"tools/call","params":{"name":"nested","arguments":{"cfg":{"depth":1}}}}' \
	/mcp -H 'x-test-reply: sse' -H 'x-test-s2c: noid' -H 'x-test-s2c-cr: 1' >"$SRV_DIR/s2c.out" 2>/dev/null
check "… an id-less call in an event whose lines end with CR alone: cut too" \
	test "$(sse_events "$SRV_DIR/s2c.out" | grep -vc notifications/progress)" = 0
post '{"jsonrpc":"2.0","id":"s2c-plain","method":"tools/call","params":{"name":"nested","arguments":{"cfg":{"depth":1}}}}' \
	/mcp -H 'x-test-reply: sse' -H 'x-test-s2c: noid' -H 'x-test-ctype: text/plain' >"$SRV_DIR/s2c.out" 2>/dev/null
check "… a stream sent as text/plain is read as a stream all the same: cut" \
	test "$(sse_events "$SRV_DIR/s2c.out" | grep -vc notifications/progress)" = 0
post '{"jsonrpc":"2.0","id":"s2c-both","method":"tools/call","params":{"name":"nested","arguments":{"cfg":{"depth":1}}}}' \
	/mcp -H 'x-test-reply: sse' -H 'x-test-ctype: application/json; x=text/event-stream' >"$SRV_DIR/s2c.out" 2>/dev/null
check "… a Content-Type naming both JSON and a stream: cut before the first byte" \
	test ! -s "$SRV_DIR/s2c.out"
out=$(post '{"jsonrpc":"2.0","id":"j-noid","method":"tools/call","params":{"name":"nested","arguments":{"cfg":{"depth":1}}}}' \
	/mcp -H 'x-test-s2c: noid' 2>/dev/null)
check "a JSON batch reply holding a server's call without an id: cut before its last byte (not JSON)" \
	sh -c "! printf '%s' '$out' | python3 -c 'import json,sys; json.load(sys.stdin)' 2>/dev/null"
out=$(post '{"jsonrpc":"2.0","id":"j-ok","method":"tools/call","params":{"name":"nested","arguments":{"cfg":{"depth":1}}}}' \
	/mcp -H 'x-test-s2c: ok')
check "… a JSON batch of a notification and the reply passes whole" \
	test "$(jget "$out" 'j[0]["method"]+" "+j[1]["result"]["content"][0]["text"]')" = "notifications/message ok"
# (/fail's server has no secret: a compressed reply to a credentialed request is blocked
# already, 502.)
out=$(post '{"jsonrpc":"2.0","id":"j-gz","method":"ping"}' /fail -H 'x-test-gzip: 1' \
	-H 'Accept-Encoding: gzip' 2>/dev/null)
check "a compressed reply (which the gateway cannot read): cut before the client has a byte" \
	sh -c "test -z '$out' && grep -q 'response is a compressed body (Content-Encoding)' '$GW_ERR'"
check "… the gateway had asked for an uncompressed one (Accept-Encoding: identity, the client's gzip dropped)" \
	test "$(server_saw 'm.get("id")=="j-gz" and m.get("accept_encoding")=="identity"')" = 1

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
