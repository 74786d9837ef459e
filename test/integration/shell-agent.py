#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# shell-agent.py — the agent of the t-shell-*.sh tests: a stand-in for a coding agent that
# drives the box's shell the way agents do, by running `bash -c …` (which inside a box is
# box's shell alias: /run/box/bin first on PATH, and the same alias over /bin/sh, /bin/bash …).
# It is python3 from /usr/bin, not a shell: docs/box.ini.5.md refuses an [agent] command that is one.
#
#   shell-agent.py STEPS.py      run each step of STEPS.py (a Python literal: a list of
#                                (NAME, ARGV) or (NAME, ARGV, OPTIONS) tuples) in order
#   shell-agent.py interactive   exec /bin/bash with no operand (the tty test)
#
# For every step it prints
#   @@ NAME rc=N          N: the exit status (128+SIG on a signal, "timeout" after OPTIONS
#   ...stdout...             timeout, default 60 s: the child is killed)
#   @@ NAME stderr
#   ...stderr...
#   @@ NAME end
# OPTIONS: stdin (text fed to fd 0, then closed), cwd, env (added to the environment),
# unset (names removed from it), timeout, and one "kind" for steps that are more than a run:
#   kind=stream     time the first stdout line against the end: prints first_before_end=S
#   kind=echo       write each line of OPTIONS["lines"] and read its answer before the next,
#                   stdin still open (streaming both ways): prints echo_ok=N
#   kind=sigint     wait for OPTIONS["ready"] on stdout, SIGINT the alias, print
#                   sigint_elapsed=S (from the signal to the alias's exit)
#   kind=concurrent OPTIONS["n"] copies of ARGV at once, each with its index appended; prints
#                   concurrent_ok=K of N (stdout == OPTIONS["expect"] % index, status 0)
#   kind=hold       print OPTIONS["ready"] once the child printed it, then wait for it
#                   (the test kills a daemon meanwhile); OPTIONS["ignore_term"]: ignore
#                   SIGTERM meanwhile (a stopping box's SIGKILL still ends it)
# Trusts: nothing; it is test code.
import ast, os, signal, subprocess, sys, time


def status(rc):
    return 128 - rc if rc < 0 else rc


def report(name, rc, out, err, extra=()):
    sys.stdout.write("@@ %s rc=%s\n" % (name, rc))
    for line in extra:
        sys.stdout.write(line + "\n")
    sys.stdout.write(out.decode(errors="replace"))
    if out and not out.endswith(b"\n"):
        sys.stdout.write("\n")
    sys.stdout.write("@@ %s stderr\n" % name)
    sys.stdout.write(err.decode(errors="replace"))
    if err and not err.endswith(b"\n"):
        sys.stdout.write("\n")
    sys.stdout.write("@@ %s end\n" % name)
    sys.stdout.flush()


def child_env(opt):
    env = dict(os.environ)
    env.update(opt.get("env", {}))
    for n in opt.get("unset", []):
        env.pop(n, None)
    return env


def run_plain(name, argv, opt):
    data = opt.get("stdin")
    try:
        r = subprocess.run(argv, input=None if data is None else data.encode(),
                           stdin=None if data is not None else subprocess.DEVNULL,
                           capture_output=True, cwd=opt.get("cwd"), env=child_env(opt),
                           timeout=opt.get("timeout", 60))
        report(name, status(r.returncode), r.stdout, r.stderr)
    except subprocess.TimeoutExpired as e:
        report(name, "timeout", e.stdout or b"", e.stderr or b"")


def popen(argv, opt, stdin=subprocess.DEVNULL):
    return subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=opt.get("cwd"), env=child_env(opt))


def finish(p, timeout):
    try:
        out, err = p.communicate(timeout=timeout)
        return status(p.returncode), out, err
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        return "timeout", out, err


def run_stream(name, argv, opt):
    t0 = time.monotonic()
    p = popen(argv, opt)
    first = p.stdout.readline()
    t1 = time.monotonic()
    rc, out, err = finish(p, opt.get("timeout", 60))
    t2 = time.monotonic()
    report(name, rc, first + out, err,
           ["first_after=%.2f" % (t1 - t0), "first_before_end=%.2f" % (t2 - t1)])


def run_echo(name, argv, opt):
    p = popen(argv, opt, stdin=subprocess.PIPE)
    good = 0
    got = b""
    for line in opt["lines"]:
        p.stdin.write((line + "\n").encode())
        p.stdin.flush()
        # The answer must come while stdin is still open: nothing waits for EOF.
        ans = p.stdout.readline()
        got += ans
        if ans.decode().strip() == opt["answer"] % line:
            good += 1
    p.stdin.close()
    p.stdin = None
    rc, out, err = finish(p, opt.get("timeout", 60))
    report(name, rc, got + out, err, ["echo_ok=%d" % good])


def run_sigint(name, argv, opt):
    p = popen(argv, opt)
    ready = opt["ready"].encode()
    seen = b""
    deadline = time.monotonic() + opt.get("timeout", 60)
    while ready not in seen and time.monotonic() < deadline:
        b = p.stdout.readline()
        if not b:
            break
        seen += b
    time.sleep(opt.get("settle", 0.5))
    t = time.monotonic()
    p.send_signal(signal.SIGINT)
    rc, out, err = finish(p, opt.get("after", 20))
    report(name, rc, seen + out, err, ["sigint_elapsed=%.2f" % (time.monotonic() - t)])


def run_concurrent(name, argv, opt):
    n = opt["n"]
    t = time.monotonic()
    procs = [popen(argv + [str(i)], opt) for i in range(n)]
    good = 0
    bad = []
    deadline = t + opt.get("timeout", 120)
    for i, p in enumerate(procs):
        rc, out, err = finish(p, max(1, deadline - time.monotonic()))
        if rc == 0 and out.decode() == opt["expect"] % i:
            good += 1
        elif len(bad) < 5:
            bad.append("bad[%d] rc=%s out=%r err=%r" % (i, rc, out[:80], err[:200]))
    report(name, 0, b"", b"", ["concurrent_ok=%d of %d" % (good, n),
                               "concurrent_elapsed=%.2f" % (time.monotonic() - t)] + bad)


def run_hold(name, argv, opt):
    if opt.get("ignore_term"):
        # Outlive a SIGTERM of the box's stop long enough to report the alias's status.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    p = popen(argv, opt)
    seen = p.stdout.readline()
    print(opt["ready"], flush=True)
    rc, out, err = finish(p, opt.get("timeout", 60))
    report(name, rc, seen + out, err)


KINDS = {None: run_plain, "stream": run_stream, "echo": run_echo, "sigint": run_sigint,
         "concurrent": run_concurrent, "hold": run_hold}


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "interactive":
        os.execv("/bin/bash", ["bash"] + sys.argv[2:])
    with open(sys.argv[1]) as f:
        steps = ast.literal_eval(f.read())
    for st in steps:
        name, argv = st[0], st[1]
        opt = st[2] if len(st) > 2 else {}
        try:
            KINDS[opt.get("kind")](name, argv, opt)
        except OSError as e:
            report(name, "exec-error", b"", str(e).encode())
    print("@@ agent done", flush=True)


main()
