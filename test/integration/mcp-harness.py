#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# mcp-harness.py STEPS — the test client of t-mcp-agent.sh: it runs as a box's agent and acts
# as the agent's harness would, running /run/box/bin/ALIAS (an MCP alias) as a subprocess and
# speaking MCP (newline-delimited JSON-RPC 2.0) to it over its stdin and stdout. It runs the
# steps of the file STEPS, one per line, and prints one machine-checkable line per result,
# "TAG JSON", for the shell test to assert. Python 3 standard library only.
#
# Steps (S names a session; JSON is the rest of the line; blank lines and # comments skipped):
#   open S ALIAS              start /run/box/bin/ALIAS as session S
#   init S TAG                initialize (then notifications/initialized): prints the reply
#   req S TAG METHOD [JSON]   a request (next id; params JSON), waits for its reply:
#                             prints TAG {"reply": …, "ms": elapsed, "srvreqs": [methods],
#                             "srvnoid": [methods of the server's frames without an id]}
#   reqid S TAG ID METHOD [JSON]  the same with the id ID (JSON)
#   send S TAG ID METHOD [JSON]   a request with id ID, not waited for (see waitreply)
#   waitreply S TAG           waits for the reply to what `send` TAG sent, prints as req
#   raw S TAG WAITID LITERAL  writes the Python bytes/str literal LITERAL and "\n"; WAITID
#                             (JSON) is the id of the reply to wait for (null: the next reply
#                             with id null), `-` for none
#   rawpad S TAG N            writes a ping request padded to a line of N bytes (no wait)
#   list S TAG N              tools/list N times: prints TAG {"names": [[…], …]}
#   pause S / resume S        stop / go on reading the session's stdout (`wait` resumes
#                             once the alias exited)
#   eof S                     close the session's stdin
#   wait S TAG                wait for the alias to exit: TAG {"rc", "stderr": [lines],
#                             "eof": its stdout ended, "notifications": count, "bad": count}
#   sleep SECONDS
#   say TEXT                  print TEXT (a rendezvous point for the shell test)
#   waitfile PATH             wait until PATH exists (a rendezvous: the test made it)
# Server->client requests are answered at once: roots/list with one root
# file:///harness-root, sampling/createMessage with a text "sampled by the harness"; each is
# added to the srvreqs of the request being waited for. Every wait has a timeout (TIMEOUT
# seconds, 20 by default): a step that times out prints TAG {"timeout": true}.
# Trusts: nothing; it is test code.
import ast
import json
import os
import subprocess
import sys
import threading
import time

TIMEOUT = float(os.environ.get("HARNESS_TIMEOUT", "20"))


def emit(tag, obj):
    sys.stdout.write("%s %s\n" % (tag, json.dumps(obj, sort_keys=True, separators=(",", ":"))))
    sys.stdout.flush()


class Session:
    def __init__(self, alias):
        self.p = subprocess.Popen(["/run/box/bin/" + alias], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.cv = threading.Condition()
        self.replies = {}      # json id -> reply
        self.nulls = []        # replies with id null, in order
        self.srvreqs = []      # methods of the server's requests, in order
        self.srvnoid = []      # methods of the server's frames without an id, in order
        self.notifications = 0
        self.bad = 0
        self.eof = False
        self.reading = threading.Event()
        self.reading.set()
        self.wlock = threading.Lock()
        self.next_id = 1
        self.stderr = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def write(self, data):
        with self.wlock:
            try:
                self.p.stdin.write(data)
                self.p.stdin.flush()
                return True
            except (BrokenPipeError, ValueError):
                return False

    def _read_err(self):
        for line in self.p.stderr:
            with self.cv:
                self.stderr.append(line.decode(errors="replace").rstrip("\n"))
                self.cv.notify_all()

    def _read(self):
        while True:
            self.reading.wait()
            line = self.p.stdout.readline()
            if not line:
                break
            try:
                msg = json.loads(line)
            except ValueError:
                with self.cv:
                    self.bad += 1
                continue
            if not isinstance(msg, dict):
                with self.cv:
                    self.bad += 1
                continue
            if "method" in msg and "id" in msg:
                self._answer(msg)
            elif "method" in msg:
                with self.cv:
                    self.notifications += 1
                    self.srvnoid.append(msg["method"])
            else:
                with self.cv:
                    if msg.get("id") is None:
                        self.nulls.append(msg)
                    else:
                        self.replies[json.dumps(msg["id"])] = msg
                    self.cv.notify_all()
        with self.cv:
            self.eof = True
            self.cv.notify_all()

    def _answer(self, msg):
        with self.cv:
            self.srvreqs.append(msg["method"])
        if msg["method"] == "roots/list":
            res = {"roots": [{"uri": "file:///harness-root", "name": "harness"}]}
        elif msg["method"] == "sampling/createMessage":
            res = {"role": "assistant", "model": "harness",
                   "content": {"type": "text", "text": "sampled by the harness"}}
        else:
            res = {}
        self.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": res}).encode()
                   + b"\n")

    def request(self, mid, method, params):
        m = {"jsonrpc": "2.0", "id": mid, "method": method}
        if params is not None:
            m["params"] = params
        with self.cv:
            self.replies.pop(json.dumps(mid), None)
            mark = (len(self.srvreqs), len(self.srvnoid))
        self.write(json.dumps(m).encode() + b"\n")
        return (json.dumps(mid), mark, time.monotonic())

    def wait_reply(self, pending):
        key, (mark, nmark), t0 = pending
        end = t0 + TIMEOUT
        with self.cv:
            while key not in self.replies and not self.eof and time.monotonic() < end:
                self.cv.wait(end - time.monotonic())
            r = self.replies.pop(key, None)
            res = {"reply": r, "ms": int((time.monotonic() - t0) * 1000),
                   "srvreqs": self.srvreqs[mark:], "srvnoid": self.srvnoid[nmark:]}
            if r is None:
                res["timeout" if not self.eof else "eof"] = True
            return res

    def auto_id(self):
        self.next_id += 1
        return self.next_id


def jarg(words, i):
    return json.loads(" ".join(words[i:])) if len(words) > i else None


def main():
    sessions = {}
    sent = {}
    with open(sys.argv[1]) as f:
        steps = [l.rstrip("\n") for l in f]
    for line in steps:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        w = line.split()
        op = w[0]
        if op == "open":
            sessions[w[1]] = Session(w[2])
        elif op == "init":
            s = sessions[w[1]]
            p = s.request(s.auto_id(), "initialize", {
                "protocolVersion": "2025-06-18",
                "capabilities": {"roots": {"listChanged": False}, "sampling": {}},
                "clientInfo": {"name": "mcp-harness", "version": "1"}})
            emit(w[2], s.wait_reply(p))
            s.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        elif op == "req":
            s = sessions[w[1]]
            emit(w[2], s.wait_reply(s.request(s.auto_id(), w[3], jarg(w, 4))))
        elif op == "reqid":
            s = sessions[w[1]]
            emit(w[2], s.wait_reply(s.request(json.loads(w[3]), w[4], jarg(w, 5))))
        elif op == "send":
            s = sessions[w[1]]
            sent[w[2]] = (s, s.request(json.loads(w[3]), w[4], jarg(w, 5)))
        elif op == "waitreply":
            s, p = sent.pop(w[2])
            emit(w[2], s.wait_reply(p))
        elif op == "raw":
            s = sessions[w[1]]
            lit = ast.literal_eval(line.split(None, 4)[4])
            data = lit.encode() if isinstance(lit, str) else lit
            with s.cv:
                n_nulls = len(s.nulls)
            t0 = time.monotonic()
            ok = s.write(data + b"\n")
            if w[3] == "-":
                continue
            wid = json.loads(w[3])
            end = t0 + TIMEOUT
            with s.cv:
                if wid is None:
                    while len(s.nulls) == n_nulls and not s.eof and time.monotonic() < end:
                        s.cv.wait(end - time.monotonic())
                    r = s.nulls[n_nulls] if len(s.nulls) > n_nulls else None
                else:
                    key = json.dumps(wid)
                    while key not in s.replies and not s.eof and time.monotonic() < end:
                        s.cv.wait(end - time.monotonic())
                    r = s.replies.pop(key, None)
            res = {"reply": r, "written": ok}
            if r is None:
                res["timeout"] = True
            emit(w[2], res)
        elif op == "rawpad":
            s = sessions[w[1]]
            head = b'{"jsonrpc":"2.0","id":"pad","method":"ping","params":{"pad":"'
            n = int(w[3]) - len(head) - 3
            emit(w[2], {"written": s.write(head + b"p" * n + b'"}}' + b"\n")})
        elif op == "list":
            s = sessions[w[1]]
            names = []
            for _ in range(int(w[3])):
                r = s.wait_reply(s.request(s.auto_id(), "tools/list", None))["reply"]
                names.append([t["name"] for t in r["result"]["tools"]]
                             if r and "result" in r else r)
            emit(w[2], {"names": names})
        elif op == "pause":
            sessions[w[1]].reading.clear()
        elif op == "resume":
            sessions[w[1]].reading.set()
        elif op == "eof":
            s = sessions[w[1]]
            with s.wlock:
                s.p.stdin.close()
        elif op == "wait":
            s = sessions[w[1]]
            # A paused session stays paused until the alias exits (a flood is only a flood
            # while the harness does not read), then what is left is read to its end.
            try:
                rc = s.p.wait(TIMEOUT)
            except subprocess.TimeoutExpired:
                emit(w[2], {"timeout": True})
                s.p.kill()
                continue
            s.reading.set()
            end = time.monotonic() + TIMEOUT
            with s.cv:
                while not s.eof and time.monotonic() < end:
                    s.cv.wait(end - time.monotonic())
            time.sleep(0.05)  # the stderr reader's last lines
            with s.cv:
                emit(w[2], {"rc": rc, "stderr": list(s.stderr), "eof": s.eof,
                            "notifications": s.notifications, "bad": s.bad})
        elif op == "sleep":
            time.sleep(float(w[1]))
        elif op == "say":
            print(line.split(None, 1)[1], flush=True)
        elif op == "waitfile":
            end = time.monotonic() + TIMEOUT * 3
            while not os.path.exists(w[1]) and time.monotonic() < end:
                time.sleep(0.05)
        else:
            print("harness: unknown step: " + line, flush=True)
            sys.exit(2)
    for s in sessions.values():
        if s.p.poll() is None:
            try:
                s.p.stdin.close()
            except (BrokenPipeError, ValueError):
                pass
            try:
                s.p.wait(TIMEOUT)
            except subprocess.TimeoutExpired:
                s.p.kill()
    print("harness: done", flush=True)


if __name__ == "__main__":
    main()
