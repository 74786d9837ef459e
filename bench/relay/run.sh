#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh — the cost of boxctl's stdio relay (docs/sandbox.md): an agent
# writes RELAY_MIB (1024) MiB to its stdout, which `boxctl run` relays
# through its pipe (splice) to a consumer (`wc -c`), against the same agent
# run directly into the same consumer, alternately, RELAY_RUNS (3) times in
# one run. Prints each median, the ratio, and boxctl's peak RSS (bounded
# buffers: it must not grow with the output). The box's start-up is part of
# the boxed time; `boxctl run -- small` is timed too so it can be told apart.
# Trusts: nothing; it is a benchmark.
set -eu
BOX_BIN=$(cd "${BOX_BIN:-build/bin}" && pwd)
MIB=${RELAY_MIB:-1024}
N=${RELAY_RUNS:-3}
ws=$(mktemp -d /tmp/box-bench-relay.XXXXXX)
chmod 755 "$ws"
trap 'rm -rf "$ws"' EXIT
cat >"$ws/writer.py" <<'PY'
import os, sys
b = b"x" * (1 << 20)
for _ in range(int(sys.argv[1])):
    os.write(1, b)
PY
cat >"$ws/box.ini" <<INI
[box]
name = bench-relay

[agent]
command = /usr/bin/python3 writer.py
workspace = $ws

[agent.filesystem]
read = $ws
INI
# An embedded boxd, like a user without the service (the socket path lies outside the
# grant: a grant holding boxd's socket is refused).
export BOX_SOCKET="$ws.no-service.sock"

/usr/bin/python3 - "$BOX_BIN/boxctl" "$ws" "$MIB" "$N" <<'PY'
import os, statistics, subprocess, sys, time
boxctl, ws, mib, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
want = mib << 20
writer = ["/usr/bin/python3", os.path.join(ws, "writer.py")]
boxed = [boxctl, "run", "-q", "-c", os.path.join(ws, "box.ini"), "--"]

def timed(cmd):
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, cwd=ws)
    c = subprocess.run(["wc", "-c"], stdin=p.stdout, capture_output=True, text=True)
    p.stdout.close()
    _, st, ru = os.wait4(p.pid, 0)
    rc = os.waitstatus_to_exitcode(st)
    rss.append(ru.ru_maxrss)
    dt = time.perf_counter() - t
    got = int(c.stdout.split()[0])
    if rc != 0 or got != int(cmd[-1]) << 20:
        sys.exit("relay bench: %s: status %d, %d bytes" % (cmd[0], rc, got))
    return dt

direct, box, start, rss = [], [], [], []
for _ in range(n):
    direct.append(timed(writer + [str(mib)]))
    box.append(timed(boxed + [str(mib)]))
    boxctl_rss = rss[-1]
    start.append(timed(boxed + ["1"]))
    small_rss = rss[-1]
d, b, s = statistics.median(direct), statistics.median(box), statistics.median(start)
print("relay: %d MiB to stdout, median of %d" % (mib, n))
print("  direct (writer | wc -c)      %.3f s  %.0f MiB/s" % (d, mib / d))
print("  boxctl run (writer | wc -c)  %.3f s  %.0f MiB/s" % (b, mib / b))
print("  boxctl run, 1 MiB (start-up) %.3f s" % s)
print("  ratio boxed/direct           %.2fx (%.2fx without the start-up)" % (b / d, (b - s) / d))
print("  boxctl's peak RSS            %d KiB (%d KiB for 1 MiB)" % (boxctl_rss, small_rss))
PY
