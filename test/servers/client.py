#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""client.py — small test clients for the loopback servers, directly or through an HTTP proxy.

Subcommands (common options: --proxy HOST:PORT tunnels with CONNECT HOST:PORT first and fails
with exit 3 printing the proxy's status line when it is not 200; --tls wraps the connection in
TLS trusting --cacert CA with SNI --sni NAME (default HOST); --timeout S, default 10):
  raw HOST PORT             sends stdin's bytes as they are, prints every byte received until the
                            peer closes or --timeout passes without data (smuggling tests)
  pipeline HOST PORT PATH.. writes one GET per PATH in a single write on one connection, then
                            reads the responses in order; prints "STATUS BODYLEN" per response
  ws HOST PORT PATH MSG...  WebSocket handshake (--header 'Name: value' repeatable), sends each
                            MSG as a text frame and prints each echoed message on its own line,
                            then closes; exit 4 when the upgrade is not answered with 101
  dns PORT NAME TYPE        asks 127.0.0.1:PORT (UDP, or --tcp) for NAME's A or AAAA records;
                            prints the addresses space-separated, or NXDOMAIN
  echo HOST PORT TEXT       sends TEXT, prints what comes back (same length), then closes
  tunnel HOST PORT          relays stdin to the connection and the connection to stdout, both
                            ways at once, until both ends close: an ssh ProxyCommand
                            (`ProxyCommand client.py --proxy 127.0.0.1:GW tunnel %h %p`)
Python 3 standard library only. Trusts: nothing; it is test code.
"""

import argparse
import base64
import os
import socket
import ssl
import struct
import sys


def connect(args, host, port):
    if args.proxy:
        ph, _, pp = args.proxy.rpartition(":")
        sock = socket.create_connection((ph.strip("[]"), int(pp)), timeout=args.timeout)
        hostport = "[%s]:%s" % (host, port) if ":" in host else "%s:%s" % (host, port)
        sock.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (hostport, hostport)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            piece = sock.recv(1)
            if not piece:
                break
            head += piece
        status = head.split(b"\r\n", 1)[0].decode("latin-1")
        if status.split(" ")[1:2] != ["200"]:
            print(status)
            sys.exit(3)
    else:
        sock = socket.create_connection((host, int(port)), timeout=args.timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if args.tls:
        ctx = ssl.create_default_context(cafile=args.cacert)
        ctx.set_alpn_protocols(["http/1.1"])
        sock = ctx.wrap_socket(sock, server_hostname=args.sni or host)
    return sock


class Reader:
    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def fill(self):
        piece = self.sock.recv(65536)
        if not piece:
            raise EOFError("connection closed")
        self.buf += piece

    def line(self):
        while b"\r\n" not in self.buf:
            self.fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def exact(self, n):
        while len(self.buf) < n:
            self.fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out


def read_response(r):
    status = r.line().decode("latin-1")
    headers = {}
    while True:
        line = r.line()
        if not line:
            break
        k, _, v = line.decode("latin-1").partition(":")
        headers[k.strip().lower()] = v.strip()
    body = b""
    if headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            size = int(r.line().split(b";")[0], 16)
            if size == 0:
                while r.line():
                    pass
                break
            body += r.exact(size)
            r.exact(2)
    elif "content-length" in headers:
        body = r.exact(int(headers["content-length"]))
    return int(status.split(" ")[1]), headers, body


def cmd_raw(args):
    sock = connect(args, args.host, args.port)
    data = sys.stdin.buffer.read()
    sock.sendall(data)
    out = sys.stdout.buffer
    try:
        while True:
            piece = sock.recv(65536)
            if not piece:
                break
            out.write(piece)
            out.flush()
    except (socket.timeout, ConnectionResetError):
        pass


def cmd_pipeline(args):
    sock = connect(args, args.host, args.port)
    host = args.sni or args.host
    reqs = b"".join(("GET %s HTTP/1.1\r\nHost: %s:%s\r\n\r\n" % (p, host, args.port)).encode()
                    for p in args.paths)
    sock.sendall(reqs)
    r = Reader(sock)
    for _ in args.paths:
        status, _h, body = read_response(r)
        print(status, len(body))


def ws_send(sock, opcode, payload):
    mask = os.urandom(4)
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
    elif n < 65536:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
    sock.sendall(head + mask + bytes(b ^ mask[i & 3] for i, b in enumerate(payload)))


def ws_recv(r):
    b0, b1 = r.exact(2)
    n = b1 & 0x7F
    if n == 126:
        n = struct.unpack("!H", r.exact(2))[0]
    elif n == 127:
        n = struct.unpack("!Q", r.exact(8))[0]
    return b0 & 0x0F, r.exact(n)


def cmd_ws(args):
    sock = connect(args, args.host, args.port)
    key = base64.b64encode(os.urandom(16)).decode()
    host = args.sni or args.host
    extra = "".join(h + "\r\n" for h in args.header)
    sock.sendall(("GET %s HTTP/1.1\r\nHost: %s:%s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n%s\r\n"
                  % (args.path, host, args.port, key, extra)).encode())
    r = Reader(sock)
    status = r.line().decode("latin-1")
    while r.line():
        pass
    if status.split(" ")[1:2] != ["101"]:
        print(status)
        sys.exit(4)
    for msg in args.messages:
        ws_send(sock, 0x1, msg.encode())
        opcode, payload = ws_recv(r)
        print(payload.decode("utf-8", "replace"))
    ws_send(sock, 0x8, struct.pack("!H", 1000))
    opcode, _ = ws_recv(r)
    if opcode != 0x8:
        sys.exit("client.py: no close frame back")


def cmd_dns(args):
    qtype = {"A": 1, "AAAA": 28}[args.type.upper()]
    qid = struct.unpack("!H", os.urandom(2))[0]
    q = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in args.name.rstrip(".").split("."):
        q += bytes([len(label)]) + label.encode()
    q += b"\0" + struct.pack("!HH", qtype, 1)
    if args.tcp:
        s = socket.create_connection(("127.0.0.1", int(args.port)), timeout=args.timeout)
        s.sendall(struct.pack("!H", len(q)) + q)
        r = Reader(s)
        data = r.exact(struct.unpack("!H", r.exact(2))[0])
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(args.timeout)
        s.sendto(q, ("127.0.0.1", int(args.port)))
        data = s.recv(4096)
    rid, flags, _qd, an = struct.unpack("!HHHH", data[:8])
    if rid != qid:
        sys.exit("client.py: reply id mismatch")
    if flags & 0xF == 3:
        print("NXDOMAIN")
        return
    i = 12 + len(q) - 12
    addrs = []
    for _ in range(an):
        _ptr, rtype, _cls, _ttl, rdlen = struct.unpack("!HHHIH", data[i : i + 12])
        rdata = data[i + 12 : i + 12 + rdlen]
        i += 12 + rdlen
        fam = socket.AF_INET if rtype == 1 else socket.AF_INET6
        addrs.append(socket.inet_ntop(fam, rdata))
    print(" ".join(addrs))


def cmd_echo(args):
    sock = connect(args, args.host, args.port)
    data = args.text.encode()
    sock.sendall(data)
    r = Reader(sock)
    print(r.exact(len(data)).decode("utf-8", "replace"))


def cmd_tunnel(args):
    import threading
    sock = connect(args, args.host, args.port)
    sock.settimeout(None)

    def up():
        try:
            while True:
                data = os.read(0, 65536)
                if not data:
                    break
                sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
    threading.Thread(target=up, daemon=True).start()
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                break
            os.write(1, data)
    except OSError:
        pass


def main():
    ap = argparse.ArgumentParser(description="test clients for test/servers")
    ap.add_argument("--proxy")
    ap.add_argument("--tls", action="store_true")
    ap.add_argument("--cacert")
    ap.add_argument("--sni")
    ap.add_argument("--timeout", type=float, default=10)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("raw")
    p.add_argument("host")
    p.add_argument("port")
    p = sub.add_parser("pipeline")
    p.add_argument("host")
    p.add_argument("port")
    p.add_argument("paths", nargs="+")
    p = sub.add_parser("ws")
    p.add_argument("--header", action="append", default=[])
    p.add_argument("host")
    p.add_argument("port")
    p.add_argument("path")
    p.add_argument("messages", nargs="*")
    p = sub.add_parser("dns")
    p.add_argument("--tcp", action="store_true")
    p.add_argument("port")
    p.add_argument("name")
    p.add_argument("type")
    p = sub.add_parser("echo")
    p.add_argument("host")
    p.add_argument("port")
    p.add_argument("text")
    p = sub.add_parser("tunnel")
    p.add_argument("host")
    p.add_argument("port")
    args = ap.parse_args()
    {"tunnel": cmd_tunnel, "raw": cmd_raw, "pipeline": cmd_pipeline, "ws": cmd_ws, "dns": cmd_dns,
     "echo": cmd_echo}[args.cmd](args)


if __name__ == "__main__":
    main()
