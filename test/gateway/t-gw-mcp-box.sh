#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-gw-mcp-box.sh — a remote MCP server (http [mcp.NAME]) in real boxes (embedded boxd, as root
# and, when it can be made, as the ordinary user boxtest): boxd hands the server to
# box-gateway (GatewayInit), the disclosure names it as served (not inactive), the agent's
# JSON-RPC POSTs through the gateway are decided by box-policyd (initialize and tools/call as
# mcp:call, the tools/list schema registered, add refined with `a > 100` denied -32001), the
# [mcp] secret is injected (the agent holds no placeholder) and never reaches the agent; a
# forbidden add sent without an id (403, the same -32001), with id null or inside a batch
# (-32600) never runs on the server, which runs tools/call with or without an id.
# The server is test/gateway/mcp-server.py on 127.0.0.1 (TLS, test CA).
# Trusts: nothing; test code. Packets only to 127.0.0.1.
. test/lib.sh
. test/integration/lib-run.sh
. test/servers/lib-servers.sh
set -u
trap 'stop_all; run_cleanup' EXIT
SRC=$(pwd)

cd "$W"
make_ca mcp.gwm.test || { not_ok "test CA (mkca.sh)"; tap_done; exit 1; }
chmod 644 "$SRV_CA"
cp "$SRV_CA" upstream-ca.pem
_srv_start mcpd python3 "$SRC/test/gateway/mcp-server.py" --tls "$SRV_CERT" "$SRV_KEY" ||
	{ not_ok "mcp-server.py starts"; tap_done; exit 1; }
MP=$_srv_port MLOG=$_srv_log
printf '127.0.0.1 mcp.gwm.test\n' >hosts
cat >mcp.cedar <<'EOF'
@id("connect")
permit (principal, action == Box::Action::"net:connect", resource)
when { context.input.host == "mcp.gwm.test" };
@id("requests")
permit (principal, action == Box::Action::"http:request", resource);
@id("mcp")
permit (principal, action == Box::Action::"mcp:call", resource)
when { context.input.server == "f-remote" };
@id("big")
@description("no big sums")
forbid (principal, action == f_remote::Action::"add", resource) when { context.input.a > 100 };
EOF
cat >agent.py <<'EOF'
#!/usr/bin/python3
# agent.py URL BODY...: POSTs each JSON-RPC body in turn (curl through the box's proxy),
# prints "resp=<body>" for each; also prints the [mcp] placeholder-looking variables it has.
import os, subprocess, sys
url = sys.argv[1]
for body in sys.argv[2:]:
    r = subprocess.run(["/usr/bin/curl", "-sS", "--max-time", "20", "-X", "POST",
                        "-H", "Content-Type: application/json",
                        "-H", "Accept: application/json, text/event-stream",
                        "--data-binary", body, url], capture_output=True, text=True)
    print("resp=" + r.stdout.replace("\n", " "), flush=True)
    if r.returncode:
        print("curl-rc=%d %s" % (r.returncode, r.stderr.strip()), flush=True)
EOF
chmod 755 agent.py
chmod 644 hosts upstream-ca.pem mcp.cedar
secret=f-remote-SECRET-9d2c41
export GWM_B_SECRET=$secret

# mkini FILE NAME
mkini() {
	cat >"$1" <<EOF
[box]
name = $2
policy = mcp.cedar

[agent]
command = $W/agent.py
workspace = $W

[agent.filesystem]
exec = /usr/bin/curl

[mcp.f-remote]
type = http
url = https://mcp.gwm.test:$MP/mcp
secret = env://GWM_B_SECRET

[gateway]
hosts_file = $W/hosts
upstream_ca = $W/upstream-ca.pem
allow_host_loopback = true
EOF
	chmod 644 "$1"
}

INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
LIST='{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
ADD='{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}'
BIG='{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add","arguments":{"a":200,"b":1}}}'
NOID='{"jsonrpc":"2.0","method":"tools/call","params":{"name":"add","arguments":{"a":300,"b":1}}}'
NULLID='{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"add","arguments":{"a":400,"b":1}}}'
BATCH='[{"jsonrpc":"2.0","method":"tools/call","params":{"name":"add","arguments":{"a":500,"b":1}}}]'
# resp N FILE: the N-th response body (1-based)
resp() { grep '^resp=' "$2" | sed -n "$1p" | sed 's/^resp=//'; }
jget() { python3 -c "import json,sys; j=json.loads(sys.argv[1]); print($2)" "$1" 2>/dev/null; }

users=root
have_boxtest && users="root boxtest"
for u in $users; do
	name=f-gwmcp-$u
	mkini "$u.ini" "$name"
	before=$(grep -c '"method": "tools/call"' "$MLOG")
	if [ "$u" = root ]; then
		"$RB/boxctl" run -c "$u.ini" -- "https://mcp.gwm.test:$MP/mcp" "$INIT" "$LIST" "$ADD" \
			"$BIG" "$NOID" "$NULLID" "$BATCH" >"$u.out" 2>"$u.err"
		dec=$XDG_STATE_HOME/box/$name/decisions.jsonl
	else
		as_boxtest "GWM_B_SECRET=$secret '$RB/boxctl' run -c $u.ini -- https://mcp.gwm.test:$MP/mcp '$INIT' '$LIST' '$ADD' '$BIG' '$NOID' '$NULLID' '$BATCH'" \
			>"$u.out" 2>"$u.err"
		dec=$(getent passwd boxtest | cut -d: -f6)/.local/state/box/$name/decisions.jsonl
	fi
	rc=$?
	check "$u: the box runs (rc $rc)" test "$rc" = 0
	check "$u: the disclosure names the remote server as served by box-gateway" \
		grep -qx "box: mcp f-remote: https://mcp.gwm.test:$MP/mcp (remote, through box-gateway: http:request, then mcp:call on every JSON-RPC request, initialize included, and the per-tool rules on tools/call)" "$u.err"
	check "$u: and not as inactive" sh -c "! grep -q 'inactive: \[mcp.f-remote\]' '$u.err'"
	check "$u: initialize answered" test "$(jget "$(resp 1 "$u.out")" 'j["result"]["serverInfo"]["name"]')" = gw-mcp-test
	check "$u: tools/list answered" test "$(jget "$(resp 2 "$u.out")" 'len(j["result"]["tools"])')" = 4
	check "$u: tools/call add 2+3 answered 5 ($(resp 3 "$u.out"))" \
		test "$(jget "$(resp 3 "$u.out")" 'j["result"]["content"][0]["text"]')" = 5
	check "$u: add a=200: -32001 [policy: big] ($(resp 4 "$u.out"))" \
		test "$(jget "$(resp 4 "$u.out")" 'str(j["error"]["code"])+" "+str("[policy: big]: no big sums" in j["error"]["message"])')" = "-32001 True"
	check "$u: add a=300 without an id: -32001 [policy: big], id null ($(resp 5 "$u.out"))" \
		test "$(jget "$(resp 5 "$u.out")" 'str(j["id"])+" "+str(j["error"]["code"])+" "+str("[policy: big]: no big sums" in j["error"]["message"])')" = "None -32001 True"
	check "$u: add a=400 with id null, a=500 in a batch: -32600 each" \
		test "$(jget "$(resp 6 "$u.out")" 'j["error"]["code"]') $(jget "$(resp 7 "$u.out")" 'j["error"]["code"]')" = "-32600 -32600"
	check "$u: the server, which runs tools/call with or without an id, never ran add with a > 100" \
		test "$(grep '"event": "ran"' "$MLOG" | grep -cE '"a": (200|300|400|500)')" = 0
	check "$u: the server saw one tools/call (not the denied ones)" \
		test "$(grep -c '"method": "tools/call"' "$MLOG")" = "$((before + 1))"
	check "$u: the server got the secret on every message" \
		test "$(grep '"event": "message"' "$MLOG" | tail -3 | grep -c "\"authorization\": \"Bearer $secret\"")" = 3
	check "$u: box-policyd decided initialize as mcp:call" \
		grep -q '"action":"mcp:call","resource":"f-remote/initialize","verdict":"permit"' "$dec"
	check "$u: and the refinement of add (not_refined, then forbidden)" \
		sh -c "grep -q 'f_remote::Action::.*\"cause\":\"not_refined\"' '$dec' && grep -q 'f_remote::Action::.*\"cause\":\"forbidden\"' '$dec'"
	check "$u: the secret reaches neither the agent, the disclosure nor the decision log" \
		test "$(cat "$u.out" "$u.err" "$dec" | grep -c "$secret")" = 0
done
tap_done
