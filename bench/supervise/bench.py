#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# bench.py N OUT — bench/supervise's workload, run by a [tool] sandbox (supervised or not, the
# same code): N open/close of a project file (decided when supervised), N open/close of a
# system runtime file (never decided), N stat of a project file (decided), N stat of a runtime
# file, and the start-up of `python3 -c 'import json, email, http.client'` (median of 5);
# writes "KEY MICROSECONDS" lines to OUT. Trusts: nothing; it is a benchmark.
import os, statistics, subprocess, sys, time

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


r = {
    "open_decided": per_op(openclose, proj),
    "open_runtime": per_op(openclose, runtime),
    "stat_decided": per_op(os.stat, proj),
    "stat_runtime": per_op(os.stat, runtime),
}
starts = []
for _ in range(5):
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import json, email, http.client"], check=True)
    starts.append((time.perf_counter() - t) * 1e6)
r["startup"] = statistics.median(starts)
with open(out, "w") as f:
    for k, v in r.items():
        f.write("%s %.2f\n" % (k, v))
