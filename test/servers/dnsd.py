#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""dnsd.py — a recording DNS server on loopback for the gateway tests (pre-DNS denial, rebinding).

Answers A and AAAA queries over UDP and TCP (same port) from a JSON zone file and appends every
query it receives to a log, so a test can prove a name was (or was never) resolved.
Python 3 standard library only.

Usage: dnsd.py --zone ZONE.json [--listen 127.0.0.1:0] [--port-file F] [--log F] [--ttl S]
  zone: {"name": ["1.2.3.4", "::1", ...],              every query of a family gets all of
                                                          that family's addresses
         "rebind.box.test": {"seq": [["127.0.0.1"], ["169.254.169.254"]]}}
                                                          the Nth query of a type (A, AAAA)
                                                          for that name gets the Nth entry's
                                                          addresses; the last entry repeats
  Names match case-insensitively, without the trailing dot. A listed name with no address of
  the asked family (or another type) gets an empty NOERROR answer; an unlisted name NXDOMAIN.
  SIGHUP re-reads the zone (and restarts the sequences).
  --log: one JSON line per query: {"name": "api.box.test", "type": "A", "proto": "udp",
         "answer": ["1.2.3.4"], "rcode": 0}; --ttl: answer TTL (default 0, no caching).
Trusts: nothing from peers (malformed queries are dropped); it is test code.
"""

import argparse
import ipaddress
import json
import os
import signal
import socket
import struct
import sys
import threading

TYPES = {1: "A", 28: "AAAA"}

state_lock = threading.Lock()
zone = {}
counters = {}
log_file = None
ttl = 0


def load_zone(path):
    with open(path) as f:
        raw = json.load(f)
    if not isinstance(raw, dict):
        sys.exit("dnsd.py: %s: the zone must be a JSON object" % path)
    out = {}
    for name, value in raw.items():
        if isinstance(value, list):
            seq = [value]
        elif isinstance(value, dict) and isinstance(value.get("seq"), list) and value["seq"]:
            seq = value["seq"]
        else:
            sys.exit("dnsd.py: %s: %r wants a list of addresses or {\"seq\": [[...], ...]}"
                     % (path, name))
        entries = []
        for entry in seq:
            if not isinstance(entry, list):
                sys.exit("dnsd.py: %s: %r: each seq entry is a list of addresses" % (path, name))
            try:
                entries.append([ipaddress.ip_address(a) for a in entry])
            except ValueError as e:
                sys.exit("dnsd.py: %s: %r: %s" % (path, name, e))
        out[name.lower().rstrip(".")] = entries
    return out


def parse_query(data):
    """(id, flags, qname, qtype, question bytes) or None."""
    if len(data) < 12:
        return None
    qid, flags, qdcount = struct.unpack("!HHH", data[:6])
    if flags & 0x8000 or qdcount != 1:
        return None
    labels = []
    i = 12
    while True:
        if i >= len(data):
            return None
        n = data[i]
        i += 1
        if n == 0:
            break
        if n & 0xC0 or i + n > len(data):
            return None
        labels.append(data[i : i + n].decode("latin-1"))
        i += n
    if i + 4 > len(data):
        return None
    qtype, _qclass = struct.unpack("!HH", data[i : i + 4])
    return qid, flags, ".".join(labels).lower(), qtype, data[12 : i + 4]


def answer(data, proto):
    q = parse_query(data)
    if q is None:
        return None
    qid, flags, name, qtype, question = q
    rcode = 0
    addrs = []
    with state_lock:
        entries = zone.get(name)
        if entries is None:
            rcode = 3
        elif qtype in TYPES:
            key = (name, qtype)
            n = counters.get(key, 0)
            counters[key] = n + 1
            version = 4 if qtype == 1 else 6
            addrs = [a for a in entries[min(n, len(entries) - 1)] if a.version == version]
    if log_file is not None:
        line = json.dumps({"name": name, "type": TYPES.get(qtype, str(qtype)), "proto": proto,
                           "answer": [str(a) for a in addrs], "rcode": rcode}, sort_keys=True)
        with state_lock:
            log_file.write(line + "\n")
            log_file.flush()
    rflags = 0x8000 | 0x0400 | (flags & 0x0100) | 0x0080 | rcode  # QR AA RD(copied) RA
    out = struct.pack("!HHHHHH", qid, rflags, 1, len(addrs), 0, 0) + question
    for a in addrs:
        rtype = 1 if a.version == 4 else 28
        out += struct.pack("!HHHIH", 0xC00C, rtype, 1, ttl, len(a.packed)) + a.packed
    return out


def serve_udp(sock):
    while True:
        data, peer = sock.recvfrom(4096)
        out = answer(data, "udp")
        if out is not None:
            sock.sendto(out, peer)


def serve_tcp_conn(conn):
    with conn:
        try:
            while True:
                head = recv_exact(conn, 2)
                if head is None:
                    return
                n = struct.unpack("!H", head)[0]
                data = recv_exact(conn, n)
                if data is None:
                    return
                out = answer(data, "tcp")
                if out is None:
                    return
                conn.sendall(struct.pack("!H", len(out)) + out)
        except OSError:
            return


def recv_exact(conn, n):
    buf = b""
    while len(buf) < n:
        piece = conn.recv(n - len(buf))
        if not piece:
            return None
        buf += piece
    return buf


def serve_tcp(sock):
    while True:
        conn, _ = sock.accept()
        conn.settimeout(30)
        threading.Thread(target=serve_tcp_conn, args=(conn,), daemon=True).start()


def bind_pair(host, port):
    """A UDP and a TCP socket on the same port (retrying ephemeral picks that collide)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    for _ in range(50):
        udp = socket.socket(family, socket.SOCK_DGRAM)
        udp.bind((host, port))
        tcp = socket.socket(family, socket.SOCK_STREAM)
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            tcp.bind((host, udp.getsockname()[1]))
        except OSError:
            udp.close()
            tcp.close()
            if port:
                raise
            continue
        tcp.listen(64)
        return udp, tcp
    sys.exit("dnsd.py: could not bind UDP and TCP on one port")


def main():
    global zone, log_file, ttl
    ap = argparse.ArgumentParser(description="recording loopback DNS server")
    ap.add_argument("--zone", required=True)
    ap.add_argument("--listen", default="127.0.0.1:0")
    ap.add_argument("--port-file")
    ap.add_argument("--log")
    ap.add_argument("--ttl", type=int, default=0)
    args = ap.parse_args()
    ttl = args.ttl
    zone = load_zone(args.zone)
    if args.log:
        log_file = open(args.log, "a", buffering=1)
    host, _, port = args.listen.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        sys.exit("dnsd.py: --listen wants HOST:PORT, got %r" % args.listen)

    def reload(_sig, _frame):
        global zone
        new = load_zone(args.zone)
        with state_lock:
            zone = new
            counters.clear()
    signal.signal(signal.SIGHUP, reload)

    udp, tcp = bind_pair(host, int(port))
    threading.Thread(target=serve_tcp, args=(tcp,), daemon=True).start()
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % udp.getsockname()[1])
        os.rename(tmp, args.port_file)
    serve_udp(udp)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
