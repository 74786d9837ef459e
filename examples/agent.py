#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# The demo agent: one allowed and one refused file access, then one HTTPS
# request per URL given (through box-gateway: HTTPS_PROXY, the box CA in
# SSL_CERT_FILE), printing what came back; then three commands through the
# box's shell, as coding agents run them (`bash -c …` is box's shell alias,
# served by box-shell): a shell command, one the policy refuses, and git,
# a host program box-shell starts in its [tool.git] sandbox. Last, the MCP
# server [mcp.notes], driven as a harness drives one: it runs the alias
# /run/box/bin/notes (served by box-mcpd) and speaks JSON-RPC on its stdin and
# stdout: initialize, tools/list, then a permitted tools/call and two the
# policy denies (a forbidden tool, a rule on a tool's argument).
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

# Line by line, so what the agent prints interleaves with box's own messages.
sys.stdout.reconfigure(line_buffering=True)

print("agent: reading README.txt:", open("README.txt").read().strip())
try:
    open(".env").read()
    print("agent: read .env (this must not happen)")
except OSError as e:
    print("agent: reading .env refused:", os.strerror(e.errno))

for url in sys.argv[1:]:
    try:
        with urllib.request.urlopen(url, timeout=20) as r:
            print("agent: GET %s -> %d %s" % (url, r.status, r.read(200).decode().strip()))
    except urllib.error.HTTPError as e:
        # A refused request (inside the tunnel) comes back as 403 with the decision.
        print("agent: GET %s -> %d x-box-egress: %s, %s" % (
            url, e.code, e.headers.get("x-box-egress"), e.read(300).decode().strip()))
    except OSError as e:
        # A refused CONNECT: urllib reports the proxy's status line.
        print("agent: GET %s -> refused: %s" % (url, e))

for cmd in ("grep -c project README.txt | wc -l", "rm -rf out", "git --version"):
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=60)
    print("agent: bash -c %r -> exit %d" % (cmd, r.returncode))
    for line in (r.stdout + r.stderr).splitlines():
        print("agent:     " + line)
print("agent: out/ is still there after the refused rm -rf:", os.path.isdir("out"))

# The MCP part: one alias invocation is one server process, as a harness expects.
mcp = subprocess.Popen(["/run/box/bin/notes"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                       text=True)
next_id = 0


def rpc(method, params=None):
    global next_id
    next_id += 1
    req = {"jsonrpc": "2.0", "id": next_id, "method": method}
    if params is not None:
        req["params"] = params
    mcp.stdin.write(json.dumps(req) + "\n")
    mcp.stdin.flush()
    while True:
        line = mcp.stdout.readline()
        if not line:
            raise SystemExit("agent: MCP notes: the alias closed its stdout")
        msg = json.loads(line)
        if msg.get("id") == next_id and "method" not in msg:
            return msg


r = rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "demo-agent", "version": "1"}})
print("agent: MCP notes: initialize -> server %s" % r["result"]["serverInfo"]["name"])
mcp.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
r = rpc("tools/list")
print("agent: MCP notes: tools/list -> %s" % ", ".join(t["name"] for t in r["result"]["tools"]))
for tool, note in (("read_note", "todo"), ("delete_note", "todo"), ("read_note", "secret")):
    r = rpc("tools/call", {"name": tool, "arguments": {"name": note}})
    if "error" in r:
        what = "error %d: %s" % (r["error"]["code"], r["error"]["message"])
    else:
        what = " ".join(c.get("text", "") for c in r["result"]["content"])
    print("agent: MCP notes: tools/call %s %s -> %s" % (tool, json.dumps({"name": note}), what))
mcp.stdin.close()
print("agent: MCP notes: the server exited with status %d" % mcp.wait(timeout=30))
