#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# notes_server.py — the demo's MCP server ([mcp.notes] in box.ini.in): a stdio server
# (newline-delimited JSON-RPC 2.0 on stdin/stdout) holding a few notes in memory, with two
# tools: read_note {name} and delete_note {name}. Inside the demo box the agent reaches it only
# through its alias /run/box/bin/notes and box-mcpd, which decides every request; the server
# runs in a sandbox of its own that can read this script and nothing of the agent's.
# Trusts: nothing it reads (its peer is the harness, through box-mcpd).
import json
import sys

NOTES = {
    "todo": "ship the MCP demo",
    "ideas": "a budget on tool calls",
    "secret": "the launch date",
}

TOOLS = [
    {"name": "read_note", "description": "Read a note by name.",
     "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}},
                     "required": ["name"]}},
    {"name": "delete_note", "description": "Delete a note by name.",
     "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}},
                     "required": ["name"]}},
]


def send(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def text(s, error=False):
    return {"content": [{"type": "text", "text": s}], "isError": error}


def call(params):
    name = params.get("name")
    args = params.get("arguments") or {}
    note = args.get("name") if isinstance(args, dict) else None
    if name == "read_note":
        if note in NOTES:
            return text(NOTES[note])
        return text("no note named %r" % (note,), True)
    if name == "delete_note":
        if NOTES.pop(note, None) is None:
            return text("no note named %r" % (note,), True)
        return text("deleted %s" % note)
    return text("no tool named %r" % (name,), True)


for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
        continue
    if not isinstance(msg, dict) or "id" not in msg or "method" not in msg:
        continue  # a notification or a reply: nothing to answer
    method, params = msg["method"], msg.get("params") or {}
    if method == "initialize":
        result = {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                  "capabilities": {"tools": {}},
                  "serverInfo": {"name": "notes-demo", "version": "1"}}
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call" and isinstance(params, dict):
        result = call(params)
    else:
        send({"jsonrpc": "2.0", "id": msg["id"],
              "error": {"code": -32601, "message": "method not found"}})
        continue
    send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
