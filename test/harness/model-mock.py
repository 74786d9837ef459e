#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""model-mock.py — a loopback mock of a coding agent's model API that drives a scripted session.

One HTTPS server (one thread per connection, HTTP/1.1 keep-alive) speaking one of three APIs:

  anthropic  POST /v1/messages (stream: server-sent events; else one JSON message)
  openai     POST /v1/responses (the Responses API; stream: server-sent events)
  gemini     POST /v1beta/models/MODEL:streamGenerateContent?alt=sse (and :generateContent)

The session is a script (--script, JSON): {"steps": [STEP, ...], "final": TEXT}, each STEP one
tool call in the harness-neutral form

  {"tool": "shell", "command": CMD}
  {"tool": "read", "path": ABS}
  {"tool": "write", "path": ABS, "content": TEXT}
  {"tool": "mcp", "server": NAME, "name": TOOL, "args": {...}}

which the mock spells in the harness's own vocabulary (its tools are named in each request:
Claude Code's Bash/Read/Write/mcp__S__T, Codex's exec_command or shell and mcp__S__T,
Gemini CLI's run_shell_command/read_file/write_file and its MCP tool names). A request for the
agent's main loop (one that carries the harness's shell tool) is answered with the step whose
number is how many tool calls the conversation already holds; once every step is taken, with
the final text. Any other request (a title, a summary, a quota probe) gets a short text.

The key: every request must carry --key where the API puts it (x-api-key; Authorization:
Bearer; x-goog-api-key or ?key=). A request with another key (the box's placeholder, say) is
answered 401 and logged with "key_ok": false, so a test sees that the gateway did not inject.

--log gets one JSON line per request: {"api","method","path","key_ok","main","step",
"tool_results":[TEXT...]} — tool_results are the outputs the harness sent back for the steps
taken so far (the last request's are the whole session's), so a test can check what each step
returned. Only 127.0.0.0/8 is served (--listen must be a loopback address).
Trusts: nothing from peers (bodies capped at 64 MiB); it is test code.
"""

import argparse
import json
import os
import socket
import ssl
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BODY_MAX = 64 << 20
log_lock = threading.Lock()
ARGS = None
SCRIPT = None


def log(obj):
    if not ARGS.log:
        return
    with log_lock, open(ARGS.log, "a") as f:
        f.write(json.dumps(obj, sort_keys=True) + "\n")


def sse(event, data):
    head = ("event: %s\n" % event) if event else ""
    return (head + "data: " + json.dumps(data, separators=(",", ":")) + "\n\n").encode()


def text_of(content):
    """The text of a tool result's content, whatever shape the API gave it."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_of(c) for c in content)
    if isinstance(content, dict):
        for k in ("text", "output", "content", "result", "response", "llmContent"):
            if k in content:
                return text_of(content[k])
        return json.dumps(content, sort_keys=True)
    return json.dumps(content)


# --- Anthropic Messages API -------------------------------------------------------------------

def anthropic_tool_results(body):
    out = []
    for m in body.get("messages", []):
        if m.get("role") != "user" or not isinstance(m.get("content"), list):
            continue
        for c in m["content"]:
            if isinstance(c, dict) and c.get("type") == "tool_result":
                out.append(text_of(c.get("content", "")))
    return out


def anthropic_calls_taken(body):
    n = 0
    for m in body.get("messages", []):
        if m.get("role") == "assistant" and isinstance(m.get("content"), list):
            n += sum(1 for c in m["content"] if isinstance(c, dict) and c.get("type") == "tool_use")
    return n


def anthropic_call(step, tools):
    t = step["tool"]
    if t == "shell":
        return "Bash", {"command": step["command"], "description": "scripted step"}
    if t == "read":
        return "Read", {"file_path": step["path"]}
    if t == "write":
        return "Write", {"file_path": step["path"], "content": step["content"]}
    if t == "mcp":
        return "mcp__%s__%s" % (step["server"], step["name"]), step["args"]
    raise ValueError("unknown step %r" % t)


def anthropic_reply(body, n):
    """SSE events of one assistant message: step n's tool_use, or the final text."""
    model = body.get("model", "claude-mock")
    ev = [sse("message_start", {"type": "message_start", "message": {
        "id": "msg_mock_%d" % n, "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1}}})]
    if n is not None and n < len(SCRIPT["steps"]):
        name, inp = anthropic_call(SCRIPT["steps"][n], body.get("tools", []))
        ev.append(sse("content_block_start", {"type": "content_block_start", "index": 0,
                                              "content_block": {"type": "tool_use",
                                                                "id": "toolu_mock_%d" % n,
                                                                "name": name, "input": {}}}))
        ev.append(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                              "delta": {"type": "input_json_delta",
                                                        "partial_json": json.dumps(inp)}}))
        stop = "tool_use"
    else:
        text = SCRIPT.get("final", "done") if n is not None else "ok"
        ev.append(sse("content_block_start", {"type": "content_block_start", "index": 0,
                                              "content_block": {"type": "text", "text": ""}}))
        ev.append(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                              "delta": {"type": "text_delta", "text": text}}))
        stop = "end_turn"
    ev.append(sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
    ev.append(sse("message_delta", {"type": "message_delta",
                                    "delta": {"stop_reason": stop, "stop_sequence": None},
                                    "usage": {"output_tokens": 20}}))
    ev.append(sse("message_stop", {"type": "message_stop"}))
    return ev


def anthropic_json(body, n):
    """The same message as one JSON body (a request without stream)."""
    content, stop = [{"type": "text", "text": "ok"}], "end_turn"
    if n is not None and n < len(SCRIPT["steps"]):
        name, inp = anthropic_call(SCRIPT["steps"][n], body.get("tools", []))
        content, stop = [{"type": "tool_use", "id": "toolu_mock_%d" % n, "name": name,
                          "input": inp}], "tool_use"
    elif n is not None:
        content = [{"type": "text", "text": SCRIPT.get("final", "done")}]
    return {"id": "msg_mock", "type": "message", "role": "assistant",
            "model": body.get("model", "claude-mock"), "content": content,
            "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 20}}


def handle_anthropic(h, body):
    key_ok = h.headers.get("x-api-key") == ARGS.key
    tools = [t.get("name") for t in body.get("tools", []) if isinstance(t, dict)]
    main = "Bash" in tools
    n = anthropic_calls_taken(body) if main else None
    entry = {"api": "anthropic", "method": h.command, "path": h.path, "key_ok": key_ok,
             "main": main, "step": n, "tool_results": anthropic_tool_results(body) if main else [],
             "tools": tools if main and n == 0 else None}
    log(entry)
    if not key_ok:
        return h.reply_json(401, {"type": "error", "error": {"type": "authentication_error",
                                                             "message": "invalid x-api-key"}})
    if not h.path.startswith("/v1/messages") or "count_tokens" in h.path:
        if "count_tokens" in h.path:
            return h.reply_json(200, {"input_tokens": 10})
        return h.reply_json(404, {"type": "error", "error": {"type": "not_found_error",
                                                             "message": "not here"}})
    if body.get("stream"):
        return h.reply_sse(anthropic_reply(body, n))
    return h.reply_json(200, anthropic_json(body, n))


# --- OpenAI Responses API ---------------------------------------------------------------------

def openai_tool_list(body):
    """Every tool the request offers: body.tools and Codex's additional_tools input items,
    namespaces flattened."""
    out = []

    def walk(ts):
        for t in ts or []:
            if not isinstance(t, dict):
                continue
            if t.get("type") == "namespace":
                walk(t.get("tools"))
            else:
                out.append(t)
    walk(body.get("tools"))
    for i in openai_items(body):
        if isinstance(i, dict) and i.get("type") == "additional_tools":
            walk(i.get("tools"))
    return out


def openai_tool_names(body):
    return [t.get("name") or t.get("type") for t in openai_tool_list(body)]


def openai_items(body):
    inp = body.get("input", [])
    return inp if isinstance(inp, list) else []


def openai_calls_taken(body):
    return sum(1 for i in openai_items(body) if isinstance(i, dict) and
               i.get("type") in ("function_call", "custom_tool_call", "local_shell_call"))


def openai_tool_results(body):
    return [text_of(i.get("output", "")) for i in openai_items(body) if isinstance(i, dict) and
            i.get("type") in ("function_call_output", "custom_tool_call_output",
                              "local_shell_call_output")]


def openai_tools(body):
    return {t.get("name") or t.get("type"): t for t in openai_tool_list(body)}


def js(s):
    return json.dumps(s)


def codex_code_mode(step):
    """Step as JavaScript for Codex's code-mode tool `exec` (its nested tools on `tools`)."""
    t = step["tool"]
    if t == "read":
        step, t = {"tool": "shell", "command": "cat " + shq(step["path"])}, "shell"
    if t == "shell":
        return ("const r = await tools.exec_command({cmd: %s});\n"
                "text(r.output);\ntext('exit=' + r.exit_code);\n" % js(step["command"]))
    if t == "write":
        lines = step["content"].splitlines()
        patch = "*** Begin Patch\n*** Add File: %s\n%s\n*** End Patch\n" % (
            step["path"], "\n".join("+" + l for l in lines))
        return "const r = await tools.apply_patch(%s);\ntext(r);\n" % js(patch)
    if t == "mcp":
        return ("const r = await tools.mcp__%s__%s(%s);\ntext(r);\n"
                % (step["server"].replace("-", "_"), step["name"], json.dumps(step["args"])))
    raise ValueError("unknown step %r" % t)


def openai_call(step, body):
    """(item type, name, arguments) of step in Codex's vocabulary."""
    tools = openai_tools(body)
    if tools.get("exec", {}).get("type") == "custom":
        return "custom_tool_call", "exec", codex_code_mode(step)
    t = step["tool"]
    if t == "read":
        step = {"tool": "shell", "command": "cat " + shq(step["path"])}
        t = "shell"
    if t == "write":
        if "apply_patch" in tools and tools["apply_patch"].get("type") == "custom":
            lines = step["content"].splitlines()
            patch = "*** Begin Patch\n*** Add File: %s\n%s\n*** End Patch\n" % (
                step["path"], "\n".join("+" + l for l in lines))
            return "custom_tool_call", "apply_patch", patch
        step = {"tool": "shell", "command": "printf %%s %s > %s" % (shq(step["content"]),
                                                                   shq(step["path"]))}
        t = "shell"
    if t == "shell":
        if "exec_command" in tools:
            return "function_call", "exec_command", json.dumps({"cmd": step["command"]})
        return "function_call", "shell", json.dumps({"command": ["bash", "-lc", step["command"]]})
    if t == "mcp":
        for name in ("mcp__%s__%s" % (step["server"], step["name"]),
                     "%s__%s" % (step["server"], step["name"])):
            if name in tools:
                return "function_call", name, json.dumps(step["args"])
        return "function_call", "mcp__%s__%s" % (step["server"], step["name"]), json.dumps(step["args"])
    raise ValueError("unknown step %r" % t)


def shq(s):
    return "'" + s.replace("'", "'\\''") + "'"


def openai_reply(body, n):
    rid = "resp_mock_%s" % n
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 30}
    base = {"id": rid, "object": "response", "created_at": 1700000000, "model": body.get("model", "gpt-mock")}
    if n is not None and n < len(SCRIPT["steps"]):
        kind, name, args = openai_call(SCRIPT["steps"][n], body)
        item = {"type": kind, "id": "fc_mock_%d" % n, "call_id": "call_mock_%d" % n,
                "name": name, "status": "completed"}
        item["input" if kind == "custom_tool_call" else "arguments"] = args
    else:
        text = SCRIPT.get("final", "done") if n is not None else "ok"
        item = {"type": "message", "id": "msg_mock_%s" % n, "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}
    ev = [sse("response.created", {"type": "response.created", "sequence_number": 0,
                                   "response": dict(base, status="in_progress", output=[])}),
          sse("response.output_item.added", {"type": "response.output_item.added",
                                             "sequence_number": 1, "output_index": 0,
                                             "item": item}),
          sse("response.output_item.done", {"type": "response.output_item.done",
                                            "sequence_number": 2, "output_index": 0,
                                            "item": item}),
          sse("response.completed", {"type": "response.completed", "sequence_number": 3,
                                     "response": dict(base, status="completed", output=[item],
                                                      usage=usage)})]
    return ev


def handle_openai(h, body):
    key_ok = h.headers.get("authorization") == "Bearer " + ARGS.key
    tools = openai_tool_names(body)
    main = h.path.rstrip("/").endswith("/responses") and bool(tools)
    n = openai_calls_taken(body) if main else None
    log({"api": "openai", "method": h.command, "path": h.path, "key_ok": key_ok, "main": main,
         "step": n, "tool_results": openai_tool_results(body) if main else [],
         "tools": tools if main and n == 0 else None})
    if not key_ok:
        return h.reply_json(401, {"error": {"message": "Incorrect API key provided",
                                            "type": "invalid_request_error",
                                            "code": "invalid_api_key"}})
    if h.path.rstrip("/").endswith("/models") or "/models?" in h.path:
        return h.reply_json(200, {"object": "list", "data": [], "models": []})
    if not h.path.split("?")[0].endswith("/responses"):
        return h.reply_json(404, {"error": {"message": "not here", "type": "invalid_request_error"}})
    return h.reply_sse(openai_reply(body, n))


# --- Gemini API ----------------------------------------------------------------------------------

def gemini_tool_names(body):
    return [f.get("name") for t in body.get("tools", []) if isinstance(t, dict)
            for f in t.get("functionDeclarations", []) if isinstance(f, dict)]


def gemini_parts(body, role):
    for c in body.get("contents", []):
        if isinstance(c, dict) and c.get("role") == role:
            for p in c.get("parts", []):
                if isinstance(p, dict):
                    yield p


def gemini_call(step, names):
    t = step["tool"]
    if t == "shell":
        return "run_shell_command", {"command": step["command"], "description": "scripted step"}
    if t == "read":
        return "read_file", {"absolute_path": step["path"], "file_path": step["path"]}
    if t == "write":
        return "write_file", {"file_path": step["path"], "content": step["content"]}
    if t == "mcp":
        for name in ("mcp_%s_%s" % (step["server"], step["name"]),
                     "%s__%s" % (step["server"], step["name"]), step["name"]):
            if name in names:
                return name, step["args"]
        return step["name"], step["args"]
    raise ValueError("unknown step %r" % t)


def from_schema(sch, depth=0):
    """A plain value that fits a JSON schema (the first enum value, 1, false, "user")."""
    if not isinstance(sch, dict) or depth > 8:
        return None
    if sch.get("enum"):
        return sch["enum"][0]
    t = str(sch.get("type", "object")).lower()
    if t == "object":
        return {k: from_schema(v, depth + 1) for k, v in (sch.get("properties") or {}).items()}
    if t == "array":
        return []
    if t in ("number", "integer"):
        return 1
    if t == "boolean":
        return False
    return "user"


def gemini_reply(body, n, names):
    if n is not None and n < len(SCRIPT["steps"]):
        name, args = gemini_call(SCRIPT["steps"][n], names)
        parts = [{"functionCall": {"name": name, "args": args}}]
    elif n is not None:
        parts = [{"text": SCRIPT.get("final", "done")}]
    elif "responseSchema" in body.get("generationConfig", {}) or \
            "responseJsonSchema" in body.get("generationConfig", {}):
        # a side question that wants JSON (which model, who speaks next): a value of its schema
        gc = body["generationConfig"]
        parts = [{"text": json.dumps(from_schema(gc.get("responseJsonSchema") or
                                                 gc.get("responseSchema")))}]
    else:
        parts = [{"text": "ok"}]
    return {"candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 20,
                              "totalTokenCount": 30},
            "modelVersion": "gemini-mock"}


def handle_gemini(h, body):
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(h.path).query)
    key = h.headers.get("x-goog-api-key") or (q.get("key") or [None])[0]
    key_ok = key == ARGS.key
    names = gemini_tool_names(body)
    main = "run_shell_command" in names
    n = sum(1 for p in gemini_parts(body, "model") if "functionCall" in p) if main else None
    results = [text_of(p["functionResponse"].get("response", {}))
               for p in gemini_parts(body, "user") if "functionResponse" in p] if main else []
    log({"api": "gemini", "method": h.command, "path": h.path, "key_ok": key_ok, "main": main,
         "step": n, "tool_results": results, "tools": names if main and n == 0 else None})
    if not key_ok:
        return h.reply_json(400, {"error": {"code": 400, "message": "API key not valid.",
                                            "status": "INVALID_ARGUMENT"}})
    path = urllib.parse.urlsplit(h.path).path
    if path.endswith(":countTokens"):
        return h.reply_json(200, {"totalTokens": 10})
    if path.endswith(":streamGenerateContent"):
        return h.reply_sse([sse(None, gemini_reply(body, n, names))])
    if path.endswith(":generateContent"):
        return h.reply_json(200, gemini_reply(body, n, names))
    return h.reply_json(404, {"error": {"code": 404, "message": "not here", "status": "NOT_FOUND"}})


# --- the HTTP server --------------------------------------------------------------------------

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "model-mock/1"

    def log_message(self, fmt, *a):
        pass

    def reply_json(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def reply_sse(self, events):
        """Server-sent events, chunked, one chunk per event (flushed as they go)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for e in events:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(e), e))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n > BODY_MAX:
            raise ValueError("body too large")
        data = self.rfile.read(n) if n else b""
        if self.headers.get("Content-Encoding", "").lower() == "gzip":
            import gzip
            data = gzip.decompress(data)
        elif self.headers.get("Content-Encoding", "").lower() == "zstd":
            raise ValueError("zstd bodies are not understood")
        return json.loads(data) if data else {}

    def dispatch(self):
        try:
            body = self.read_body() if self.command == "POST" else {}
            if ARGS.dump:
                with log_lock, open(ARGS.dump, "a") as f:
                    f.write(json.dumps({"path": self.path, "headers": dict(self.headers),
                                        "body": body}) + "\n")
        except ValueError as e:
            log({"api": ARGS.api, "method": self.command, "path": self.path, "error": str(e)})
            return self.reply_json(400, {"error": str(e)})
        return API[ARGS.api](self, body)

    do_POST = dispatch
    do_GET = dispatch


API = {"anthropic": handle_anthropic, "openai": handle_openai, "gemini": handle_gemini}


class Server(ThreadingHTTPServer):
    daemon_threads = True


def main():
    global ARGS, SCRIPT
    ap = argparse.ArgumentParser(description="loopback mock of a model API")
    ap.add_argument("--api", required=True, choices=sorted(API))
    ap.add_argument("--script", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--listen", default="127.0.0.1:0")
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"), required=True)
    ap.add_argument("--port-file")
    ap.add_argument("--log")
    ap.add_argument("--dump", help="every request's head and body, one JSON line each (debugging)")
    ARGS = ap.parse_args()
    with open(ARGS.script) as f:
        SCRIPT = json.load(f)
    host, port = ARGS.listen.rsplit(":", 1)
    if not host.startswith("127."):
        sys.exit("model-mock: --listen must be on 127.0.0.0/8")
    srv = Server((host, int(port)), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(*ARGS.tls)
    ctx.set_alpn_protocols(["http/1.1"])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True, do_handshake_on_connect=False)
    if ARGS.port_file:
        tmp = ARGS.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % srv.server_address[1])
        os.rename(tmp, ARGS.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
