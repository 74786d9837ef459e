#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""gitd.py — a loopback HTTPS git smart-HTTP server for t-gw-clients.sh: every request
is handed to `git http-backend` (CGI) for the repositories under --root.

Usage: gitd.py --root DIR --tls CERT KEY [--port-file F] [--log F]
  --log: one JSON line per request {"method", "path", "status"}
Python 3 standard library only. Trusts: nothing from peers (heads capped by http.server,
bodies by Content-Length, at most 64 MiB); it is test code.
"""

import argparse
import http.server
import json
import os
import ssl
import subprocess
import sys
import threading

BODY_MAX = 64 << 20
log_lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def _log(self, status):
        if self.server.log:
            with log_lock:
                self.server.log.write(json.dumps({"method": self.command, "path": self.path,
                                                  "status": status}) + "\n")
                self.server.log.flush()

    def _cgi(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length < 0 or length > BODY_MAX:
            self.send_error(413)
            return
        body = self.rfile.read(length) if length else b""
        path, _, query = self.path.partition("?")
        env = {
            "GIT_PROJECT_ROOT": self.server.root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "REQUEST_METHOD": self.command,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": self.client_address[0],
            "PATH": "/usr/bin:/bin",
        }
        if self.headers.get("Git-Protocol"):
            env["HTTP_GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        r = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True)
        head, _, out = r.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, out = r.stdout.partition(b"\n\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name.strip(), value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)
        self._log(status)

    do_GET = _cgi
    do_POST = _cgi


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--tls", nargs=2, required=True)
    ap.add_argument("--port-file")
    ap.add_argument("--log")
    a = ap.parse_args()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.root = os.path.abspath(a.root)
    srv.log = open(a.log, "a") if a.log else None
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.tls[0], a.tls[1])
    ctx.set_alpn_protocols(["http/1.1"])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % srv.server_address[1])
        os.rename(tmp, a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
