#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""httpd.py — the loopback HTTP/1.1 (and HTTPS) upstream server of the gateway tests and bench.

Serves one thread per connection, keep-alive, and answers pipelined requests in order (a
connection's requests are read and answered one after the other). Every request received is
logged as one JSON line (--log) before it is answered, so a test can assert what reached the
upstream and what never did. Python 3 standard library only.

Usage: httpd.py [--listen HOST:PORT] [--port-file F] [--log F] [--tls CERT KEY] [--log-connections]
  --listen      address to bind (default 127.0.0.1:0; IPv6 as [::1]:0)
  --port-file   written (atomically) with the bound port once listening
  --log         JSON lines: {"event":"request","conn":N,"tls":bool,"sni":S|null,"method":M,
                "target":T,"path":P,"query":Q,"version":V,"headers":{lowercased name: value,
                repeated names joined with ", "},"body_length":N}; a head it cannot parse
                (answered 400, connection closed) logs {"event":"bad_request","conn":N,
                "error":E,"head":first 512 bytes as text}; with --log-connections also
                {"event":"connection","conn":N,"peer":"ip:port"} when a connection is accepted
                and {"event":"tls_error","conn":N,"error":E} when its handshake fails
  --tls         serve HTTPS with this certificate chain and key (ALPN http/1.1)
  --root DIR    a GET or HEAD of a path no endpoint below takes serves DIR/PATH: a file as
                it is (Content-Type by extension: .json .html .tgz .whl), a directory as its
                index.json (application/json) or index.html — enough for a loopback npm
                registry (packument and tarball) or a PEP 503 package index

Endpoints (any method unless said; unknown paths 404):
  /echo                          200 JSON {method, path, query, version, headers, body_length,
                                 body (text, first 1 MiB, undecodable bytes replaced)}
  /bytes/N                       N bytes ('a'..'z' repeated) with Content-Length
  /chunked?n=K&size=S&delay_ms=D K chunks of S bytes, D ms apart (Transfer-Encoding: chunked)
  /sse?events=K&interval_ms=D    text/event-stream, "data: event I\\n\\n" for I in 0..K-1, each
                                 written as its own chunk D ms apart (first one at once)
  /status/N                      status N, body "status N\\n" (none for 1xx/204/304)
  /redirect                      302, Location: /echo
  /gzip                          Content-Encoding: gzip body of "hello gzip\\n" * 100
  /reflect-auth?split=A,B,..&header=NAME&delay_ms=D&type=CT&as=S1,S2,..&param=P&framing=F
                                 body = value of header NAME (default authorization) + "\\n" +
                                 the whole query string + "\\n", then one line per spelling Si
                                 of the credential (below); sent chunked and cut at the byte
                                 offsets A, B, ... (so a secret can straddle chunk boundaries),
                                 D ms between chunks; framing=length: with Content-Length, each
                                 piece its own write. Response headers X-Reflect = the header's
                                 value, X-Reflect-Query = the query string, X-Reflect-As = the
                                 first spelling; Content-Type CT (default text/plain).
                                 The credential: the percent-decoded value of query parameter P,
                                 else header NAME's value after "Bearer " or base64-decoded after
                                 "Basic ". Spellings: raw; b64-K / b64url-K (K = 0, 1, 2):
                                 base64 of K bytes "x", the credential and "!!" (unpadded for
                                 b64url); pct / pctlower (every byte outside unreserved as %XX);
                                 json (Python's json.dumps, non-ASCII as \\u), jsonslash ('/' as
                                 \\/ too), jsonhtml (< > & as \\u003c \\u003e \\u0026)
  /ws                            WebSocket (RFC 6455) echo of text and binary messages; answers
                                 ping with pong and close with close
  /slow?delay_ms=D               waits D ms, then 200 "slow\\n"
  /upload                        reads the body (Content-Length or chunked), 200 JSON
                                 {"length": N, "sha256": hex}
HEAD gets the headers only. HTTP/1.0 clients get close-delimited bodies where chunked is used
and keep-alive only when they ask for it. Expect: 100-continue is answered with 100 Continue.
Trusts: nothing from peers (heads capped at 64 KiB and 200 headers); it is test code.
"""

import argparse
import base64
import gzip
import hashlib
import json
import os
import re
import resource
import socket
import ssl
import struct
import sys
import threading
import time
import urllib.parse

MAX_HEAD = 64 * 1024
MAX_HEADERS = 200
ECHO_BODY_CAP = 1 << 20
re_pct = re.compile(r"%[0-9A-F]{2}")
WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

log_lock = threading.Lock()
log_file = None
log_connections = False
conn_counter = 0
conn_counter_lock = threading.Lock()


def log_line(obj):
    if log_file is None:
        return
    line = json.dumps(obj, sort_keys=True) + "\n"
    with log_lock:
        log_file.write(line)
        log_file.flush()


class BadRequest(Exception):
    pass


class Conn:
    """One accepted connection: a buffered reader over the socket and a writer."""

    def __init__(self, sock, cid, tls, sni):
        self.sock = sock
        self.cid = cid
        self.tls = tls
        self.sni = sni
        self.buf = b""

    def fill(self):
        data = self.sock.recv(65536)
        if not data:
            return False
        self.buf += data
        return True

    def read_head(self):
        """Bytes up to and including the blank line, or None at a clean EOF."""
        while True:
            i = self.buf.find(b"\r\n\r\n")
            j = self.buf.find(b"\n\n")
            ends = [x + 4 for x in (i,) if x >= 0] + [x + 2 for x in (j,) if x >= 0]
            if ends:
                end = min(ends)
                head, self.buf = self.buf[:end], self.buf[end:]
                return head
            if len(self.buf) > MAX_HEAD:
                raise BadRequest("head too large")
            if not self.fill():
                if self.buf:
                    raise BadRequest("connection closed inside a head")
                return None

    def read_exact(self, n):
        while len(self.buf) < n:
            if not self.fill():
                raise BadRequest("connection closed inside a body")
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def read_some(self, limit):
        if not self.buf and not self.fill():
            raise BadRequest("connection closed inside a body")
        out, self.buf = self.buf[:limit], self.buf[limit:]
        return out

    def read_line(self):
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                line, self.buf = self.buf[: i + 1], self.buf[i + 1 :]
                return line
            if len(self.buf) > MAX_HEAD:
                raise BadRequest("line too long")
            if not self.fill():
                raise BadRequest("connection closed inside a chunk line")

    def send(self, data):
        self.sock.sendall(data)


class Request:
    pass


def parse_head(head):
    lines = head.decode("latin-1").replace("\r\n", "\n").split("\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest("bad request line")
    req = Request()
    req.method, req.target, req.version = parts
    req.header_list = []
    for line in lines[1:]:
        if not line:
            continue
        if ":" not in line:
            raise BadRequest("bad header line")
        name, value = line.split(":", 1)
        req.header_list.append((name.strip().lower(), value.strip()))
    if len(req.header_list) > MAX_HEADERS:
        raise BadRequest("too many headers")
    req.headers = {}
    for name, value in req.header_list:
        req.headers[name] = req.headers[name] + ", " + value if name in req.headers else value
    split = urllib.parse.urlsplit(req.target)
    req.path = split.path if split.path else req.target
    req.query = split.query
    req.params = dict(urllib.parse.parse_qsl(split.query, keep_blank_values=True))
    return req


def body_chunks(conn, req):
    """Yields the request body's pieces (Content-Length or chunked)."""
    te = req.headers.get("transfer-encoding", "").lower()
    if te:
        if te != "chunked":
            raise BadRequest("unsupported transfer-encoding")
        while True:
            line = conn.read_line().strip()
            size_text = line.split(b";", 1)[0]
            try:
                size = int(size_text, 16)
            except ValueError:
                raise BadRequest("bad chunk size")
            if size == 0:
                while conn.read_line().strip():
                    pass  # trailers
                return
            left = size
            while left:
                piece = conn.read_some(min(left, 65536))
                left -= len(piece)
                yield piece
            if conn.read_exact(2) != b"\r\n":
                raise BadRequest("bad chunk end")
    cl = req.headers.get("content-length")
    if cl is None:
        return
    try:
        left = int(cl)
    except ValueError:
        raise BadRequest("bad content-length")
    if left < 0:
        raise BadRequest("bad content-length")
    while left:
        piece = conn.read_some(min(left, 65536))
        left -= len(piece)
        yield piece


def int_param(req, name, default, lo=0, hi=1 << 40):
    try:
        v = int(req.params.get(name, default))
    except ValueError:
        raise BadRequest("bad parameter " + name)
    return max(lo, min(hi, v))


REASONS = {100: "Continue", 101: "Switching Protocols", 200: "OK", 204: "No Content",
           302: "Found", 304: "Not Modified", 400: "Bad Request", 404: "Not Found",
           500: "Internal Server Error"}


class Responder:
    """Writes one response; chunked for HTTP/1.1, close-delimited for HTTP/1.0."""

    def __init__(self, conn, req, keep_alive):
        self.conn = conn
        self.req = req
        self.keep_alive = keep_alive
        self.head_only = req.method == "HEAD"
        self.http10 = req.version == "HTTP/1.0"
        self.chunked = False

    def start(self, status, headers, length=None):
        out = ["HTTP/1.1 %d %s" % (status, REASONS.get(status, "Status"))]
        hdrs = list(headers)
        no_body = status < 200 or status in (204, 304)
        if length is not None:
            hdrs.append(("Content-Length", str(length)))
        elif not no_body:
            if self.http10:
                self.keep_alive = False
            else:
                self.chunked = True
                hdrs.append(("Transfer-Encoding", "chunked"))
        if not self.keep_alive:
            hdrs.append(("Connection", "close"))
        elif self.http10:
            hdrs.append(("Connection", "keep-alive"))
        for k, v in hdrs:
            out.append("%s: %s" % (k, v))
        self.conn.send(("\r\n".join(out) + "\r\n\r\n").encode("latin-1"))

    def write(self, data):
        if self.head_only or not data:
            return
        if self.chunked:
            self.conn.send(b"%x\r\n" % len(data) + data + b"\r\n")
        else:
            self.conn.send(data)

    def end(self):
        if self.chunked and not self.head_only:
            self.conn.send(b"0\r\n\r\n")

    def simple(self, status, body, ctype="text/plain", extra=()):
        self.start(status, [("Content-Type", ctype)] + list(extra), len(body))
        self.write(body)


def pattern_bytes(n):
    block = (b"abcdefghijklmnopqrstuvwxyz" * 2521)[:65536]
    while n > 0:
        piece = block[: min(n, len(block))]
        n -= len(piece)
        yield piece


def handle_ws(conn, req):
    key = req.headers.get("sec-websocket-key")
    if "websocket" not in req.headers.get("upgrade", "").lower() or not key:
        r = Responder(conn, req, True)
        r.simple(400, b"not a websocket upgrade\n")
        return True
    accept = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
    conn.send(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Accept: %s\r\n\r\n" % accept).encode())
    while True:
        b0, b1 = conn.read_exact(2)
        fin_op = b0 & 0x8F
        opcode = b0 & 0x0F
        masked = b1 & 0x80
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", conn.read_exact(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", conn.read_exact(8))[0]
        if n > 16 << 20:
            return False
        mask = conn.read_exact(4) if masked else b"\0\0\0\0"
        payload = bytearray(conn.read_exact(n))
        for i in range(n):
            payload[i] ^= mask[i & 3]
        if opcode == 0x8:
            conn.send(ws_frame(0x88, bytes(payload[:125])))
            return False
        if opcode == 0x9:
            conn.send(ws_frame(0x8A, bytes(payload)))
            continue
        if opcode == 0xA:
            continue
        conn.send(ws_frame(fin_op, bytes(payload)))


def ws_frame(b0, payload):
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", b0, n)
    elif n < 65536:
        head = struct.pack("!BBH", b0, 126, n)
    else:
        head = struct.pack("!BBQ", b0, 127, n)
    return head + payload


def credential(req, name):
    """The credential a /reflect-auth request carries (bytes), as the docstring says."""
    param = req.params.get("param")
    if param is not None:
        for k, v in urllib.parse.parse_qsl(req.query, keep_blank_values=True, encoding="latin-1"):
            if k == param:
                return v.encode("latin-1")
        return b""
    value = req.headers.get(name, "")
    if value[:7].lower() == "bearer ":
        return value[7:].encode("latin-1")
    if value[:6].lower() == "basic ":
        try:
            return base64.b64decode(value[6:].strip(), validate=True)
        except ValueError:
            raise BadRequest("bad basic credential")
    return value.encode("latin-1")


def spelling(cred, how):
    """One spelling of the credential (bytes) for /reflect-auth?as=."""
    if how == "raw":
        return cred
    if how[:4] == "b64-" or how[:7] == "b64url-":
        k = int(how.rsplit("-", 1)[1])
        text = b"x" * k + cred + b"!!"
        if how[:4] == "b64-":
            return base64.b64encode(text)
        return base64.urlsafe_b64encode(text).rstrip(b"=")
    if how in ("pct", "pctlower"):
        q = urllib.parse.quote_from_bytes(cred, safe="-._~")
        return (q if how == "pct" else re_pct.sub(lambda m: m.group(0).lower(), q)).encode()
    if how in ("json", "jsonslash", "jsonhtml"):
        j = json.dumps(cred.decode("utf-8", "surrogateescape"))[1:-1]
        if how == "jsonslash":
            j = j.replace("/", "\\/")
        if how == "jsonhtml":
            j = j.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        return j.encode()
    raise BadRequest("bad spelling " + how)


def handle(conn, req):
    """Answers one request; returns whether the connection stays open."""
    conn_hdr = req.headers.get("connection", "").lower()
    if req.version == "HTTP/1.0":
        keep_alive = "keep-alive" in conn_hdr
    else:
        keep_alive = "close" not in conn_hdr
    if req.headers.get("expect", "").lower() == "100-continue":
        conn.send(b"HTTP/1.1 100 Continue\r\n\r\n")

    path = req.path
    if path == "/ws":
        # The upgrade request carries no body.
        log_request(conn, req, 0)
        return handle_ws(conn, req)

    length = 0
    digest = hashlib.sha256()
    kept = bytearray()
    for piece in body_chunks(conn, req):
        length += len(piece)
        digest.update(piece)
        if len(kept) < ECHO_BODY_CAP:
            kept += piece[: ECHO_BODY_CAP - len(kept)]
    log_request(conn, req, length)

    r = Responder(conn, req, keep_alive)
    if path == "/echo":
        body = json.dumps({"method": req.method, "path": req.path, "query": req.query,
                           "version": req.version, "headers": req.headers,
                           "body_length": length,
                           "body": bytes(kept).decode("utf-8", "replace")}, sort_keys=True)
        r.simple(200, body.encode() + b"\n", "application/json")
    elif path.startswith("/bytes/"):
        try:
            n = int(path[len("/bytes/"):])
        except ValueError:
            raise BadRequest("bad byte count")
        r.start(200, [("Content-Type", "application/octet-stream")], n)
        for piece in pattern_bytes(n):
            r.write(piece)
    elif path == "/chunked":
        k = int_param(req, "n", 3, 0, 1 << 20)
        size = int_param(req, "size", 16, 1, 1 << 24)
        delay = int_param(req, "delay_ms", 0, 0, 600000) / 1000.0
        r.start(200, [("Content-Type", "application/octet-stream")])
        for i in range(k):
            if i and delay:
                time.sleep(delay)
            r.write(next(pattern_bytes(size)) if size <= 65536 else b"".join(pattern_bytes(size)))
        r.end()
    elif path == "/sse":
        k = int_param(req, "events", 3, 0, 1 << 20)
        delay = int_param(req, "interval_ms", 100, 0, 600000) / 1000.0
        r.start(200, [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
        for i in range(k):
            if i and delay:
                time.sleep(delay)
            r.write(b"data: event %d\n\n" % i)
        r.end()
    elif path.startswith("/status/"):
        try:
            code = int(path[len("/status/"):])
        except ValueError:
            raise BadRequest("bad status")
        if not 100 <= code <= 599 or code == 101:
            raise BadRequest("bad status")
        if code < 200 or code in (204, 304):
            r.start(code, [])
            return keep_alive and code >= 200
        r.simple(code, b"status %d\n" % code)
    elif path == "/redirect":
        r.simple(302, b"redirect\n", extra=[("Location", "/echo")])
    elif path == "/gzip":
        body = gzip.compress(b"hello gzip\n" * 100)
        r.simple(200, body, extra=[("Content-Encoding", "gzip")])
    elif path == "/reflect-auth":
        name = req.params.get("header", "authorization").lower()
        value = req.headers.get(name, "")
        body = (value + "\n" + req.query + "\n").encode("latin-1", "replace")
        spellings = [spelling(credential(req, name), how)
                     for how in req.params.get("as", "").split(",") if how]
        body += b"".join(x + b"\n" for x in spellings)
        try:
            cuts = sorted({int(x) for x in req.params.get("split", "").split(",") if x})
        except ValueError:
            raise BadRequest("bad split")
        delay = int_param(req, "delay_ms", 0, 0, 600000) / 1000.0
        ctype = req.params.get("type", "text/plain")
        headers = [("Content-Type", ctype), ("X-Reflect", value), ("X-Reflect-Query", req.query)]
        if spellings:
            headers.append(("X-Reflect-As", spellings[0].decode("latin-1")))
        length = len(body) if req.params.get("framing") == "length" else None
        r.start(200, headers, length)
        prev = 0
        for cut in [c for c in cuts if 0 < c < len(body)] + [len(body)]:
            if prev and delay:
                time.sleep(delay)
            r.write(body[prev:cut])
            prev = cut
        r.end()
    elif path == "/slow":
        time.sleep(int_param(req, "delay_ms", 1000, 0, 600000) / 1000.0)
        r.simple(200, b"slow\n")
    elif path == "/upload":
        body = json.dumps({"length": length, "sha256": digest.hexdigest()})
        r.simple(200, body.encode() + b"\n", "application/json")
    elif static_root and req.method in ("GET", "HEAD") and static_file(path):
        f = static_file(path)
        ext = os.path.splitext(f)[1]
        with open(f, "rb") as fh:
            r.simple(200, fh.read(), STATIC_TYPES.get(ext, "application/octet-stream"))
    else:
        r.simple(404, b"not found\n")
    return r.keep_alive


STATIC_TYPES = {".json": "application/json", ".html": "text/html", ".tgz": "application/gzip",
                ".whl": "application/zip"}
static_root = None


def static_file(path):
    """The file --root serves for PATH, or None (nothing outside the root, no dot segments)."""
    parts = [p for p in urllib.parse.unquote(path).split("/") if p]
    if any(p in (".", "..") or "\0" in p for p in parts):
        return None
    f = os.path.join(static_root, *parts)
    if os.path.isdir(f):
        for index in ("index.json", "index.html"):
            if os.path.isfile(os.path.join(f, index)):
                return os.path.join(f, index)
        return None
    return f if os.path.isfile(f) else None


def log_request(conn, req, body_length):
    log_line({"event": "request", "conn": conn.cid, "tls": conn.tls, "sni": conn.sni,
              "method": req.method, "target": req.target, "path": req.path, "query": req.query,
              "version": req.version, "headers": req.headers, "body_length": body_length})


def serve_connection(sock, peer, cid, tls_ctx):
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if log_connections:
            log_line({"event": "connection", "conn": cid, "peer": "%s:%d" % peer[:2]})
        if tls_ctx is not None:
            sock.settimeout(30)
            try:
                sock = tls_ctx.wrap_socket(sock, server_side=True)
            except (OSError, ssl.SSLError) as e:
                if log_connections:
                    log_line({"event": "tls_error", "conn": cid, "error": str(e)})
                raise
            sock.settimeout(None)
        conn = Conn(sock, cid, tls_ctx is not None, getattr(sock, "box_sni", None))
        while True:
            head = conn.read_head()
            if head is None:
                return
            try:
                req = parse_head(head)
            except BadRequest as e:
                log_line({"event": "bad_request", "conn": cid, "error": str(e),
                          "head": head[:512].decode("latin-1")})
                conn.send(b"HTTP/1.1 400 Bad Request\r\nContent-Length: %d\r\nConnection: close"
                          b"\r\n\r\n%s\n" % (len(str(e)) + 1, str(e).encode()))
                return
            if not handle(conn, req):
                return
    except (OSError, BadRequest, ssl.SSLError, ValueError):
        return
    finally:
        try:
            sock.close()
        except OSError:
            pass


def main():
    global log_file, log_connections, conn_counter, static_root
    ap = argparse.ArgumentParser(description="loopback HTTP/1.1 test server")
    ap.add_argument("--listen", default="127.0.0.1:0")
    ap.add_argument("--port-file")
    ap.add_argument("--log")
    ap.add_argument("--log-connections", action="store_true")
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    ap.add_argument("--root")
    args = ap.parse_args()
    static_root = args.root

    host, _, port = args.listen.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        sys.exit("httpd.py: --listen wants HOST:PORT, got %r" % args.listen)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    threading.stack_size(256 * 1024)

    tls_ctx = None
    if args.tls:
        tls_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls_ctx.load_cert_chain(args.tls[0], args.tls[1])
        tls_ctx.set_alpn_protocols(["http/1.1"])

        # Runs during the handshake with the SSLSocket wrap_socket is about to return.
        def on_sni(sslsock, name, _ctx):
            sslsock.box_sni = name
        tls_ctx.sni_callback = on_sni
    if args.log:
        log_file = open(args.log, "a", buffering=1)
    log_connections = args.log_connections

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    srv = socket.socket(family, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((host, int(port)))
    srv.listen(4096)
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % srv.getsockname()[1])
        os.rename(tmp, args.port_file)
    while True:
        sock, peer = srv.accept()
        with conn_counter_lock:
            conn_counter += 1
            cid = conn_counter
        threading.Thread(target=serve_connection, args=(sock, peer, cid, tls_ctx),
                         daemon=True).start()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
