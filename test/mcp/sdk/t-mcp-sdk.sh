#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-mcp-sdk.sh — the official MCP TypeScript SDK (@modelcontextprotocol/sdk, pinned in
# test/mcp/sdk/package-lock.json, installed by `make deps`) as both client and server through
# box-mcpd, in real boxes (boxctl run, embedded boxd), as the caller and as boxtest.
# One box per user with two stdio servers: [mcp.sdk] = node server.mjs (an SDK
# McpServer) and [mcp.py-files] = test/mcp/daemon/fake_server.py (a plain Python server). Its
# agent runs, one after the other:
#   (a) client.mjs (an SDK Client over StdioClientTransport) spawning /run/box/bin/sdk as a
#       harness would: initialize; tools/list filtered (wipe, forbidden through mcp:call, is
#       hidden); allowed calls with the right results; a denied call -32001 with the policy's
#       message; the per-tool refinement sdk::Action::"add" (a > 100 denied, a = 2 permitted
#       and logged not_refined), a type confusion ("200" for an integer) denied, an optional
#       argument absent / present / forbidden by value; a tool not in the last tools/list
#       (-32003); a server→client request (roots/list) answered by the SDK client; prompts and
#       resources listed and read, a prompt and a uri the policy forbids (-32001); ping;
#   (b) client.mjs against the Python server (the SDK client interoperating with a server that
#       is not the SDK's: its namespace py_files normalized from py-files, its over-64-KiB tool
#       hidden and refused -32003, its roots/list request denied by the policy; the SDK
#       client's notification() of tools/call — a frame without an id, which the Python
#       server runs as it runs any method it reads — decided as a call: secret and add(a=300)
#       never run, echo runs) and a plain scripted Python client against the SDK server (the
#       SDK server interoperating with a client that is not the SDK's);
#   (c) `boxctl log BOX --source box-mcpd` of the ended box shows the decisions: shell:spawn of
#       both servers, the permits and denies above with their rules, the refinements; the
#       probes of the filtered tools/list wrote no line.
# node absent from the host: skipped. node present but the SDK not installed (or another
# version than the lock's): a failure saying to run `make deps`.
# Trusts: nothing; test code.
. test/lib.sh
set -u
SDK=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$SDK/../../.." && pwd)

if ! command -v node >/dev/null 2>&1; then
	skip "the MCP TypeScript SDK through box-mcpd" "no node on this host (make deps installs nodejs)"
	tap_done
	exit 0
fi
NODE=$(command -v node)
NODE=$(readlink -f "$NODE")
pinned=$(node -e 'const l=require(process.argv[1]);console.log(l.packages["node_modules/@modelcontextprotocol/sdk"].version)' \
	"$SDK/package-lock.json" 2>/dev/null)
have=$(node -e 'console.log(require(process.argv[1]).version)' \
	"$SDK/node_modules/@modelcontextprotocol/sdk/package.json" 2>/dev/null)
if [ -z "$pinned" ] || [ "$have" != "$pinned" ]; then
	not_ok "the MCP TypeScript SDK is installed in $SDK/node_modules (pinned @modelcontextprotocol/sdk ${pinned:-?}, found ${have:-none}): run 'make deps' (npm ci there)"
	tap_done
	exit 1
fi
ok "the pinned MCP TypeScript SDK is installed (@modelcontextprotocol/sdk $have, node $(node --version))"

. test/integration/lib-run.sh
cd "$W" || exit 1
for p in box-mcpd box-shell; do
	if [ ! -x "$BOX_BIN/$p" ]; then
		not_ok "$p is built ($BOX_BIN/$p)"
		tap_done
		exit 1
	fi
	cp "$BOX_BIN/$p" "$RB/$p" && chmod 755 "$RB/$p"
done
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}

users=$(id -un)
boxtest_or_skip "the SDK through box-mcpd as boxtest" && users="$users boxtest"

# The SDK directory is granted read-only to the agent and to [mcp.sdk] in place (node resolves
# @modelcontextprotocol/sdk from the scripts' directory upwards); when boxtest cannot read it
# where the checkout is, a copy in the 0755 work dir is granted instead.
if [ "$users" != "$(id -un)" ] &&
	! su -s /bin/sh boxtest -c "test -r '$SDK/node_modules/@modelcontextprotocol/sdk/package.json'"; then
	cp -a "$SDK" "$W/sdk" && chmod -R a+rX "$W/sdk"
	SDK=$W/sdk
	diag "boxtest cannot read the checkout: the SDK is granted from a copy in $SDK"
fi
cp "$REPO/test/mcp/daemon/fake_server.py" "$W/fake_server.py"

# The agent: the three clients, one after the other, each line of theirs prefixed.
cat >"$W/agent.py" <<'EOF'
import json, os, select, subprocess, sys, time
node, sdk = sys.argv[1], sys.argv[2]

def client(tag, alias, *ops):
    try:
        r = subprocess.run([node, sdk + "/client.mjs", "/run/box/bin/" + alias] + list(ops),
                           capture_output=True, timeout=120)
        out, err, rc = r.stdout, r.stderr, r.returncode
    except subprocess.TimeoutExpired as e:
        out, err, rc = e.stdout or b"", e.stderr or b"", "timeout"
    for l in out.decode(errors="replace").splitlines():
        print(tag + ": " + l)
    for l in err.decode(errors="replace").splitlines():
        print(tag + "-err: " + l)
    print(tag + "-rc=%s" % rc, flush=True)

client("sdk", "sdk", "list",
       'call add {"a":2,"b":3}',
       'call add {"a":200,"b":1}',
       'call add {"a":"200","b":1}',
       'call echo {"text":"hi there"}',
       'call greet {"name":"ann"}',
       'call greet {"name":"ann","greeting":"hey"}',
       'call greet {"name":"ann","greeting":"boo"}',
       'call wipe {}',
       'call nosuch {}',
       'call roots {}',
       "prompts",
       'prompt review {"code":"x = 1"}',
       'prompt leak {}',
       "resources",
       "read note://readme",
       "read secret://keys",
       "ping")
client("py", "pyfiles", "list",
       'call echo {"text":"hi"}',
       'call add {"a":2}',
       'call add {"a":200}',
       'call secret {}',
       'call huge {}',
       'call ask {}',
       'notify tools/call {"name":"secret","arguments":{}}',
       'notify tools/call {"name":"add","arguments":{"a":300}}',
       'notify tools/call {"name":"echo","arguments":{"text":"no id"}}',
       'call ran {}')

# A plain scripted client (no SDK) against the SDK server: one request at a time, each reply
# awaited (bounded), printed compact with sorted keys.
p = subprocess.Popen(["/run/box/bin/sdk"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE)
buf = b""
def rpc(obj):
    global buf
    p.stdin.write(json.dumps(obj).encode() + b"\n")
    p.stdin.flush()
    if "id" not in obj:
        return
    end = time.monotonic() + 30
    while time.monotonic() < end:
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            msg = json.loads(line)
            if msg.get("id") == obj["id"]:
                print("raw: " + json.dumps(msg, sort_keys=True, separators=(",", ":")), flush=True)
                return
        r, _, _ = select.select([p.stdout], [], [], 1)
        if r:
            chunk = os.read(p.stdout.fileno(), 65536)
            if not chunk:
                break
            buf += chunk
    print("raw: no reply to id %s" % obj["id"], flush=True)
rpc({"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"}}})
rpc({"jsonrpc": "2.0", "method": "notifications/initialized"})
rpc({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
rpc({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 7, "b": 8}}})
rpc({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 101, "b": 0}}})
rpc({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "wipe", "arguments": {}}})
rpc({"jsonrpc": "2.0", "id": 6, "method": "resources/read", "params": {"uri": "note://readme"}})
p.stdin.close()
try:
    rc = p.wait(timeout=30)
except subprocess.TimeoutExpired:
    p.kill()
    rc = "timeout"
for l in p.stderr.read().decode(errors="replace").splitlines():
    print("raw-err: " + l)
print("raw-rc=%s" % rc, flush=True)
EOF
chmod 644 "$W/agent.py" "$W/fake_server.py"

# The policy: the servers' starts and every MCP request are permitted but what the forbids
# name; no rule permits a tool action, so a refinement no forbid matches is not_refined.
cat >"$W/pol.cedar" <<'EOF'
@id("mcp")
permit (principal, action in [Box::Action::"shell:spawn", Box::Action::"mcp:call"], resource);

@id("no-wipe")
@description("wiping is not for agents")
forbid (principal, action == Box::Action::"mcp:call", resource)
when { context.input has tool && context.input.tool == "wipe" };

@id("no-secret")
forbid (principal, action == Box::Action::"mcp:call", resource)
when { context.input.server == "py-files" && context.input has tool && context.input.tool == "secret" };

@id("no-leak")
@description("that prompt leaks")
forbid (principal, action == Box::Action::"mcp:call", resource)
when { context.input has prompt && context.input.prompt == "leak" };

@id("no-secret-uris")
forbid (principal, action == Box::Action::"mcp:call", resource)
when { context.input has uri && context.input.uri like "secret://*" };

@id("no-py-roots")
@description("py-files may not see the roots")
forbid (principal, action == Box::Action::"mcp:call", resource)
when { context.input.server == "py-files" && context.input.method == "roots/list" };

@id("small-adds")
@description("add takes small numbers only")
forbid (principal, action == sdk::Action::"add", resource)
when { context.input.a > 100 };

@id("no-boo")
forbid (principal, action == sdk::Action::"greet", resource)
when { context.input has greeting && context.input.greeting == "boo" };

@id("py-small-adds")
forbid (principal, action == py_files::Action::"add", resource)
when { context.input.a > 100 };
EOF

# mkbox U NAME: $D/box.ini for box NAME.
mkbox() {
	local u=$1 name=$2
	{
		printf '[box]\nname = %s\npolicy = %s/pol.cedar\nstate_dir = %s/state/%s\n\n' \
			"$name" "$D" "$D" "$name"
		printf '[agent]\ncommand = /usr/bin/python3 %s/agent.py %s %s\nworkspace = %s/proj\n\n' \
			"$W" "$NODE" "$SDK" "$D"
		# The agent starts node itself (the SDK client): an exec entry (box.ini(5) exec_system).
		printf '[agent.filesystem]\nread_file = %s/agent.py\nread = %s\nwrite = %s/proj\nexec = %s\n\n' \
			"$W" "$SDK" "$D" "$NODE"
		printf '[mcp.sdk]\ntype = stdio\nalias = sdk\ncommand = %s %s/server.mjs\n\n' "$NODE" "$SDK"
		printf '[mcp.sdk.filesystem]\nread = %s\n\n' "$SDK"
		printf '[mcp.py-files]\ntype = stdio\nalias = pyfiles\ncommand = /usr/bin/python3 %s/fake_server.py noid\n\n' "$W"
		printf '[mcp.py-files.filesystem]\nread_file = %s/fake_server.py\n' "$W"
	} >"$D/box.ini"
	chown "$u:" "$D/box.ini"
}

# line DESC LINE: the agent printed exactly LINE.
line() { check "$u: $1" grep -qxF -- "$2" "$D/out"; }
# judge WHAT: checks in one python process (on a loaded machine one start, not one a check),
# on the plain client's replies in $D/out (WHAT = raw) or on the box's --json log in
# $D/log.json and the text of --source box-mcpd in $D/log (WHAT = log); prints TAP lines,
# counted here.
judge() {
	local res
	res=$(python3 - "$1" "$u" "$D/out" "$D/log.json" "$D/log" <<'PY'
import json, sys
what, u, out, logf, textf = sys.argv[1:6]
P = "policy denied this operation on"
def check(desc, cond):
    print(("ok - " if cond else "not ok - ") + u + ": " + desc)
if what == "raw":
    replies = {}
    for l in open(out):
        if l.startswith("raw: {"):
            m = json.loads(l[5:])
            replies[m.get("id")] = m
    r = lambda i: replies.get(i, {})
    res = lambda i: r(i).get("result", {})
    check("plain client → SDK server: initialize answered by the SDK server (2025-06-18)",
          res(1).get("serverInfo", {}).get("name") == "box-sdk-test"
          and res(1).get("protocolVersion") == "2025-06-18")
    tools = res(2).get("tools", [])
    check("… tools/list filtered (wipe hidden), the SDK's input schemas passed as they are",
          [t["name"] for t in tools] == ["add", "echo", "greet", "roots"]
          and tools[0]["inputSchema"]["properties"]["a"]["type"] == "integer")
    check("… add(7, 8) answered by the SDK server: 7+8=15",
          res(3).get("content") == [{"type": "text", "text": "7+8=15"}])
    check("… add(a=101) denied by the refinement: -32001 with the message",
          r(4).get("error") == {"code": -32001,
                                "message": P + " 'sdk/add' [policy: small-adds]: add takes small numbers only."})
    check("… wipe denied by mcp:call: -32001 with the message",
          r(5).get("error") == {"code": -32001,
                                "message": P + " 'sdk/wipe' [policy: no-wipe]: wiping is not for agents."})
    check("… resources/read answered",
          [c.get("text") for c in res(6).get("contents", [])] == ["box sdk note"])
else:
    lines = [json.loads(l) for l in open(logf)]
    dec = [d for d in lines if "verdict" in d]
    n = lambda f: sum(1 for d in dec if f(d))
    shown = sum(1 for _ in open(textf))
    check("log: --source box-mcpd shows every decision (%d), each box-mcpd's" % shown,
          shown == len(dec) == n(lambda d: d.get("source") == "box-mcpd") and shown > 30)
    check("log: add(a=2) was refined by no rule: permit, cause not_refined",
          n(lambda d: d["action"] == 'sdk::Action::"add"' and d.get("input") == {"a": 2, "b": 3}
            and d["verdict"] == "permit" and d["cause"] == "not_refined") == 1)
    check("log: the denies carry the message the harness got (wipe: both calls)",
          n(lambda d: d.get("resource") == "sdk/wipe" and d["verdict"] == "deny"
            and d["message"] == P + " 'sdk/wipe' [policy: no-wipe]: wiping is not for agents.") == 2)
    check("log: the filtering probes wrote no decision (tools only listed: none; wipe: its 2 calls)",
          n(lambda d: d.get("input", {}).get("tool") in ("slow", "nested", "bogus")) == 0
          and n(lambda d: d["action"] == "mcp:call" and d["input"].get("tool") == "wipe") == 2)
    check("log: the outcomes are recorded too (the servers' exits: shell:spawn responses, status 0)",
          sum(1 for d in lines if d.get("record") == "response" and d["action"] == "shell:spawn"
              and d.get("output") == {"status": 0} and d.get("source") == "box-mcpd") == 3)
PY
)
	echo "$res"
	_tap_pass=$((_tap_pass + $(grep -c '^ok' <<<"$res")))
	_tap_fail=$((_tap_fail + $(grep -c '^not ok' <<<"$res")))
}
proto=$(cd "$SDK" && node --input-type=module \
	-e 'import { LATEST_PROTOCOL_VERSION as v } from "@modelcontextprotocol/sdk/types.js"; console.log(v)')
P="policy denied this operation on"

for u in $users; do
	D=$W/$u
	AS_USER_DIR=$D # lib-run.sh's as_user runs there
	mkdir -p "$D/proj" "$D/state"
	cp "$W/pol.cedar" "$D/pol.cedar"
	chown -R "$u:" "$D"
	chmod 755 "$D"
	name=c-sdk-$u-$$
	fails=$_tap_fail
	mkbox "$u" "$name"
	as_user "$u" "timeout -k 5 300 '$RB/boxctl' run -c box.ini" >"$D/out" 2>"$D/err"
	rc=$?
	check "$u: the box with [mcp.sdk] (an SDK server) and [mcp.py-files] ran (rc $rc)" test "$rc" = 0
	if [ "$rc" != 0 ]; then sed 's/^/#   /' "$D/err" | tail -20; fi
	check "$u: … box-mcpd logged its sessions on the box's stderr, no sanitizer report there" \
		bash -c "grep -q 'box-mcpd' '$D/err' && ! grep -qE 'ERROR: AddressSanitizer|runtime error:' '$D/err'"

	# (a) the SDK client as the harness → /run/box/bin/sdk → box-mcpd → the SDK server
	line "SDK client → SDK server: initialize through the alias and box-mcpd (protocol $proto)" \
		"sdk: init ok server=box-sdk-test/1.0.0 protocol=$proto"
	line "… tools/list filtered: wipe (mcp:call forbids it) is hidden, the rest seen" \
		"sdk: list tools=add,echo,greet,roots"
	line "… add(2, 3) through the refinement sdk::Action::\"add\": 2+3=5" "sdk: call add ok text=2+3=5"
	line "… add(a=200) denied by the refinement (a > 100): -32001 with the policy's message" \
		"sdk: call add error code=-32001 message=$P 'sdk/add' [policy: small-adds]: add takes small numbers only."
	line "… add(a=\"200\") (type confusion) denied, never coerced: -32001" \
		"sdk: call add error code=-32001 message=$P 'sdk/add' because the request could not be evaluated."
	line "… echo(\"hi there\")" "sdk: call echo ok text=hi there"
	line "… greet without its optional argument" "sdk: call greet ok text=hello, ann!"
	line "… greet with its optional argument" "sdk: call greet ok text=hey, ann!"
	line "… greet(greeting=\"boo\") denied by a rule on the optional argument (string equality)" \
		"sdk: call greet error code=-32001 message=$P 'sdk/greet' [policy: no-boo]."
	line "… the hidden wipe called anyway: -32001 with the policy's message" \
		"sdk: call wipe error code=-32001 message=$P 'sdk/wipe' [policy: no-wipe]: wiping is not for agents."
	line "… a tool not in the server's last tools/list: -32003" \
		"sdk: call nosuch error code=-32003 message=box-mcpd: sdk: tool 'nosuch' is not in the server's last tools/list"
	line "… a server→client request (roots/list) reaches the SDK client and its reply the server" \
		"sdk: call roots ok text=roots: file:///sdk-root"
	line "… prompts/list" "sdk: prompts names=review"
	line "… prompts/get review" "sdk: prompt review ok text=Review this code: x = 1"
	line "… prompts/get of a prompt the policy forbids: -32001" \
		"sdk: prompt leak error code=-32001 message=$P 'sdk/leak' [policy: no-leak]: that prompt leaks."
	line "… resources/list" "sdk: resources uris=note://readme"
	line "… resources/read note://readme" "sdk: read note://readme ok text=box sdk note"
	line "… resources/read of a uri the policy forbids: -32001" \
		"sdk: read secret://keys error code=-32001 message=$P 'sdk/secret://keys' [policy: no-secret-uris]."
	line "… ping" "sdk: ping ok"
	line "… the SDK client ran every step and closed (exit 0)" "sdk-rc=0"

	# (b) the SDK client against a server that is not the SDK's …
	line "SDK client → Python server: initialize (the server's protocol 2025-06-18 negotiated)" \
		"py: init ok server=fake/1 protocol=2025-06-18"
	line "… tools/list filtered: secret (mcp:call forbids it) and huge (over 64 KiB, not pinnable) hidden" \
		"py: list tools=add,ask,bogus,echo,nested,ran,s2c,slow"
	line "… echo" 'py: call echo ok text={"text": "hi"}'
	line "… add(a=2) permitted by the refinement py_files::Action::\"add\" (namespace of py-files)" \
		'py: call add ok text={"a": 2}'
	line "… add(a=200) denied by it: -32001" \
		"py: call add error code=-32001 message=$P 'py_files/add' [policy: py-small-adds]."
	line "… secret denied by mcp:call: -32001" \
		"py: call secret error code=-32001 message=$P 'py-files/secret' [policy: no-secret]."
	line "… huge refused by its pin: -32003" \
		"py: call huge error code=-32003 message=box-mcpd: py-files: tool 'huge' is refused: definition over 64 KiB"
	check "$u: … the SDK client's reply to the server's roots/list denied: the server got -32001" \
		grep -qF "py: call ask ok text={\"jsonrpc\": \"2.0\", \"id\": \"srv-1\", \"error\": {\"code\": -32001, \"message\": \"$P 'py-files/roots/list' [policy: no-py-roots]: py-files may not see the roots.\"}}" "$D/out"
	line "… the SDK client's notification() of tools/call (no id) is sent" "py: notify tools/call sent"
	check "$u: … the server (which runs a method with or without an id) ran the permitted echo, never secret nor add(a=300)" \
		bash -c "grep -q '^py: call ran ok text=.*tools/call|echo|None' '$D/out' && ! grep -q '^py: call ran ok text=.*\(secret\|tools/call|add|None\)' '$D/out'"
	line "… the SDK client closed (exit 0)" "py-rc=0"
	# … and the SDK server against a plain scripted client
	judge raw
	line "… the session ended with the server's exit (the alias exits 0)" "raw-rc=0"
	# What the agent printed, when something above failed.
	[ "$_tap_fail" -gt "$fails" ] && sed 's/^/#   /' "$D/out" | head -80

	# (c) the decisions in the box's log, source box-mcpd
	as_user "$u" "'$RB/boxctl' log $name --source box-mcpd" >"$D/log" 2>"$D/log.err"
	rc=$?
	as_user "$u" "'$RB/boxctl' log $name --json" >"$D/log.json" 2>>"$D/log.err"
	check "$u: boxctl log $name --source box-mcpd (the ended box's state dir): exit 0 (rc $rc)" \
		test "$rc" = 0 -a -s "$D/log"
	logline() { check "$u: log: $1" grep -qE -- "^20[0-9-]+T[0-9:.]+Z $2\$" "$D/log"; }
	logline "the SDK server's start permitted (shell:spawn)" "permit shell:spawn $NODE mcp"
	logline "the Python server's start permitted" "permit shell:spawn /usr/bin/python3[.0-9]* mcp"
	logline "the refinement's deny of add(a=200)" "deny sdk::Action::\"add\" sdk/add small-adds"
	logline "the type confusion's deny (no rule: an error)" "deny sdk::Action::\"add\" sdk/add -"
	logline "the deny of wipe (mcp:call)" "deny mcp:call sdk/wipe no-wipe"
	logline "the deny of greet(boo)" "deny sdk::Action::\"greet\" sdk/greet no-boo"
	logline "the deny of the prompt leak" "deny mcp:call sdk/leak no-leak"
	logline "the deny of secret://keys" "deny mcp:call sdk/secret://keys no-secret-uris"
	logline "the permit of the server's roots/list (the SDK client's reply)" "permit mcp:call sdk/roots/list mcp"
	logline "the deny of py-files' roots/list" "deny mcp:call py-files/roots/list no-py-roots"
	logline "the refinement's deny in namespace py_files" "deny py_files::Action::\"add\" py_files/add py-small-adds"
	check "$u: log: the id-less secret and add(a=300) denied as the calls with an id were" \
		test "$(grep -cE ' deny (mcp:call py-files/secret no-secret|py_files::Action::"add" py_files/add py-small-adds)$' "$D/log")" = 4
	judge log
	[ "$_tap_fail" -gt "$fails" ] && sed 's/^/#   log: /' "$D/log" "$D/log.err" | head -80
done
tap_done
