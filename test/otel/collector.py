#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# collector.py — a loopback OTLP/HTTP collector for the telemetry tests
# (test/integration/t-telemetry-otlp.sh) and bench/telemetry: listens on
# 127.0.0.1 only (PORT, or 0 for any; the port chosen is written to PORTFILE),
# takes POST /.../v1/logs, /v1/traces, /v1/metrics and appends one JSON line per
# request to OUT: {"path", "type", "headers" (X-Token and Authorization), "body"
# (the parsed JSON for application/json; for application/x-protobuf the bytes
# as latin-1 text, enough to look for strings in)}. A JSON body that does not
# parse gets 400, another path 404. With --discard nothing is written (a sink);
# with --tls CERT KEY it serves HTTPS.
# Trusts: nothing it receives; test code.
import argparse
import http.server
import json
import os
import sys
import threading

ap = argparse.ArgumentParser()
ap.add_argument("port", type=int)
ap.add_argument("portfile")
ap.add_argument("out")
ap.add_argument("--discard", action="store_true")
ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"), help="serve HTTPS with this pair")
args = ap.parse_args()
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def answer(self, code, body=b""):
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                if len(body) + size > 64 << 20:
                    return self.answer(413)
                body += self.rfile.read(size)
                self.rfile.readline()
        else:
            n = int(self.headers.get("Content-Length", "0"))
            if n < 0 or n > 64 << 20:
                return self.answer(413)
            body = self.rfile.read(n)
        sig = self.path.rsplit("/", 2)[-2:]
        if len(sig) != 2 or sig[0] != "v1" or sig[1] not in ("logs", "traces", "metrics"):
            return self.answer(404)
        ctype = self.headers.get("Content-Type", "")
        if ctype.startswith("application/json"):
            try:
                parsed = json.loads(body)
            except ValueError:
                return self.answer(400, b"malformed")
        else:
            parsed = body.decode("latin-1")
        if not args.discard:
            rec = {"path": self.path, "type": ctype, "body": parsed,
                   "headers": {k: self.headers.get(k) for k in ("X-Token", "Authorization")
                               if self.headers.get(k) is not None}}
            with lock, open(args.out, "a") as f:
                f.write(json.dumps(rec) + "\n")
        self.answer(200, b"{}" if ctype.startswith("application/json") else b"")


http.server.ThreadingHTTPServer.allow_reuse_address = True
srv = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
if args.tls:
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.tls[0], args.tls[1])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(args.portfile + ".tmp", "w") as f:
    f.write("%d\n" % srv.server_address[1])
os.rename(args.portfile + ".tmp", args.portfile)
sys.stdout.flush()
srv.serve_forever()
