#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""echod.py — a loopback TCP echo server: the far end of the gateway's passthrough tests.

Every accepted connection gets back exactly the bytes it sends, until it closes (then the
server closes its side too). Optionally writes a banner first (--banner TEXT), so a test can
see bytes from the server before it sends any. Python 3 standard library only.

Usage: echod.py [--listen 127.0.0.1:0] [--port-file F] [--log F] [--banner TEXT]
  --log: one JSON line per connection when it ends: {"conn": N, "peer": "ip:port",
         "bytes": echoed byte count}
Trusts: nothing; it is test code.
"""

import argparse
import json
import os
import socket
import sys
import threading

log_lock = threading.Lock()
log_file = None
banner = b""


def serve(conn, peer, cid):
    total = 0
    try:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if banner:
            conn.sendall(banner)
        while True:
            data = conn.recv(65536)
            if not data:
                break
            conn.sendall(data)
            total += len(data)
    except OSError:
        pass
    finally:
        try:
            conn.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        conn.close()
    if log_file is not None:
        with log_lock:
            log_file.write(json.dumps({"conn": cid, "peer": "%s:%d" % peer[:2],
                                       "bytes": total}, sort_keys=True) + "\n")
            log_file.flush()


def main():
    global log_file, banner
    ap = argparse.ArgumentParser(description="loopback TCP echo server")
    ap.add_argument("--listen", default="127.0.0.1:0")
    ap.add_argument("--port-file")
    ap.add_argument("--log")
    ap.add_argument("--banner", default="")
    args = ap.parse_args()
    banner = args.banner.encode()
    if args.log:
        log_file = open(args.log, "a", buffering=1)
    host, _, port = args.listen.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        sys.exit("echod.py: --listen wants HOST:PORT, got %r" % args.listen)
    srv = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((host, int(port)))
    srv.listen(1024)
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % srv.getsockname()[1])
        os.rename(tmp, args.port_file)
    cid = 0
    while True:
        conn, peer = srv.accept()
        cid += 1
        threading.Thread(target=serve, args=(conn, peer, cid), daemon=True).start()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
