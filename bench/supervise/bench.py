#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# bench.py N OUT — bench/supervise's workload, run by a [tool] sandbox (supervised or not, the
# same code): N open/close of a project file (decided when supervised: in process, since
# run.sh's policy has no temporal rule about fs:read), N open/close of the same file for
# writing (decided by box-policyd when supervised: run.sh's policy has a temporal rule about
# fs:write, so each is a Decide round trip), N open/close of a system runtime file (never
# decided), N stat of a project file (decided), N stat of a runtime
# file, N open/close of a project file by 8 threads at once (wall time per open: calls that
# arrive together are decided in one batch when supervised);
# writes "KEY MICROSECONDS" lines to OUT.
# bench.py startup K OUT — K start-ups of `python3 -c 'import json, email, http.client'`, each
# appended to OUT as "startup MICROSECONDS" (run.sh alternates the two sides' rounds).
# Trusts: nothing; it is a benchmark.
import os, subprocess, sys, threading, time


def startups(k, out):
    with open(out, "a") as f:
        for _ in range(k):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", "import json, email, http.client"], check=True)
            f.write("startup %.2f\n" % ((time.perf_counter() - t) * 1e6))


if sys.argv[1] == "startup":
    startups(int(sys.argv[2]), sys.argv[3])
    sys.exit(0)

n, out = int(sys.argv[1]), sys.argv[2]
proj = os.path.join(os.path.dirname(os.path.abspath(out)), "data.txt")
runtime = os.__file__  # /usr/lib/python3.X/os.py


def per_op(fn, path):
    fn(path)
    t = time.perf_counter()
    for _ in range(n):
        fn(path)
    return (time.perf_counter() - t) / n * 1e6


def openclose(p):
    os.close(os.open(p, os.O_RDONLY))


def openwrite(p):
    os.close(os.open(p, os.O_WRONLY))


def threaded(fn, path, k=8):
    go = threading.Barrier(k + 1)

    def run():
        go.wait()
        for _ in range(n // k):
            fn(path)

    ts = [threading.Thread(target=run) for _ in range(k)]
    for t in ts:
        t.start()
    go.wait()
    t0 = time.perf_counter()
    for t in ts:
        t.join()
    return (time.perf_counter() - t0) / (n // k * k) * 1e6


r = {
    "open_decided": per_op(openclose, proj),
    "open_asked": per_op(openwrite, proj),
    "open_runtime": per_op(openclose, runtime),
    "stat_decided": per_op(os.stat, proj),
    "stat_runtime": per_op(os.stat, runtime),
    "open_threads8": threaded(openclose, proj),
}
with open(out, "w") as f:
    for k, v in r.items():
        f.write("%s %.2f\n" % (k, v))
