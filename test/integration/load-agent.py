#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# load-agent.py — the agent of t-load.sh and bench/load: WORKERS threads, each in turn running
# a command through box's shell (`bash -c …`, the alias -> box-shell: a file written, read and
# removed in the workspace, every step decided) and an HTTPS request through box-gateway
# (urllib, the box's proxy and CA from the environment): a permitted GET of OK_URL (200 and
# its body) and, every fourth request, a GET of DENIED_URL the policy forbids (403 from the
# gateway). Two phases of SECONDS/2 each, a quiet pause after each (nothing in flight), so the
# test can read every daemon's fds and RSS at the same point of two equal phases.
#
#   load-agent.py SECONDS WORKERS OK_URL DENIED_URL WORKSPACE
#
# LOAD_ONLY=shell or http in the environment: only that half (to tell which daemon grows).
# Prints "quiet 1" / "quiet 2" at the pauses (the caller acknowledges by creating
# WORKSPACE/go.1 / go.2; up to 60 s), then one line per kind of result:
#   result shell ok=N failed=N timeout=N
#   result http ok=N denied=N failed=N timeout=N
# and the first few failures as "failure: …" lines.
# Trusts: nothing; it is test code.
import os, socket, subprocess, sys, threading, time, urllib.error, urllib.request

seconds, workers = float(sys.argv[1]), int(sys.argv[2])
ok_url, denied_url, ws = sys.argv[3], sys.argv[4], sys.argv[5]
lock = threading.Lock()
counts = {k: 0 for k in ("shell_ok", "shell_failed", "shell_timeout",
                         "http_ok", "http_denied", "http_failed", "http_timeout")}
failures = []


def count(kind, what=None):
    with lock:
        counts[kind] += 1
        if what is not None and len(failures) < 8:
            failures.append(what)


def shell_step(w, n):
    tok = "w%d-n%d" % (w, n)
    cmd = "cd %s && echo %s > t.%d && cat t.%d && rm t.%d" % (ws, tok, w, w, w)
    try:
        r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        count("shell_timeout")
        return
    if r.returncode == 0 and r.stdout == tok + "\n":
        count("shell_ok")
    else:
        count("shell_failed", "shell %r: rc %d out %r err %r" % (cmd, r.returncode, r.stdout,
                                                                 r.stderr[-300:]))


def http_step(n):
    deny = n % 4 == 3
    url = denied_url if deny else ok_url
    try:
        with urllib.request.urlopen(url, timeout=60) as f:
            body = f.read()
            if not deny and f.status == 200 and body:
                count("http_ok")
            else:
                count("http_failed", "GET %s: %d (%d bytes)" % (url, f.status, len(body)))
    except urllib.error.HTTPError as e:
        if deny and e.code == 403:
            count("http_denied")
        else:
            count("http_failed", "GET %s: HTTP %d" % (url, e.code))
    except (socket.timeout, TimeoutError):
        count("http_timeout")
    except urllib.error.URLError as e:
        if isinstance(e.reason, (socket.timeout, TimeoutError)):
            count("http_timeout")
        else:
            count("http_failed", "GET %s: %r" % (url, e.reason))
    except Exception as e:  # a reset, a bad status line: a failure, named
        count("http_failed", "GET %s: %r" % (url, e))


ONLY = os.environ.get("LOAD_ONLY", "")


def worker(w, until):
    n = w
    while time.monotonic() < until:
        if ONLY != "http":
            shell_step(w, n)
        if time.monotonic() >= until:
            break
        if ONLY != "shell":
            http_step(n)
        n += 1


def phase(k):
    until = time.monotonic() + seconds / 2
    ts = [threading.Thread(target=worker, args=(w, until)) for w in range(workers)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print("quiet %d" % k, flush=True)
    go = os.path.join(ws, "go.%d" % k)
    for _ in range(600):
        if os.path.exists(go):
            break
        time.sleep(0.1)


phase(1)
phase(2)
print("result shell ok=%d failed=%d timeout=%d" % (counts["shell_ok"], counts["shell_failed"],
                                                    counts["shell_timeout"]))
print("result http ok=%d denied=%d failed=%d timeout=%d" % (
    counts["http_ok"], counts["http_denied"], counts["http_failed"], counts["http_timeout"]))
for f in failures:
    print("failure: " + f)
sys.stdout.flush()
