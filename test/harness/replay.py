#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""replay.py CAPTURE_DIR REAL_SHELLS BOX_SH POLICY WORKDIR BASE_PROJECT TAG — run every shell
invocation capture-shell.py recorded again, once in the shell the harness ran (bash, or dash
for sh; copies in REAL_SHELLS) and once in box-sh, and compare.

Each recording (a harness's shell snapshot being made, its command wrapper around one command)
runs twice from the same start: a fresh copy of BASE_PROJECT as the recording's cwd (paths in
the argv and environment under the recorded cwd are moved to the copy) and the harness's
snapshot files put back where they were. box-sh runs with POLICY (which permits everything:
what is compared here is the shell language, not the policy) and reads its argv as bash does.
Compared: the exit status, stdout (for the harness's `bash -c env` probe as a set of lines
without bash's SHLVL and _), stderr (the shell's own name in a message normalized), the
files of the copy afterwards (content and mode, .git's internals left out) and the snapshot
files afterwards. One TAP line per recording; a difference prints both sides. Run it where no
network is (lib-harness.sh runs it in the outside run's network namespace).
Trusts: nothing; test code.
"""
import difflib
import hashlib
import json
import os
import shutil
import subprocess
import sys

cap, reals, boxsh, policy, work, base, tag = sys.argv[1:8]


def tree(root, skip_git=True):
    out = {}
    if not os.path.isdir(root):
        return out
    for dp, dns, fns in os.walk(root):
        if skip_git and ".git" in dns:
            dns.remove(".git")
        for fn in fns:
            p = os.path.join(dp, fn)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                out[rel] = "link " + os.readlink(p)
                continue
            with open(p, "rb") as f:
                out[rel] = "%o %s" % (os.stat(p).st_mode & 0o777,
                                      hashlib.sha256(f.read()).hexdigest()[:16])
    return out


def run(which, inv, snap_src, snap_dst, n):
    # Both shells run in the same directory (moved aside afterwards), so that what they print
    # of it or store in it is the same text.
    cwd = os.path.join(work, "run-%d" % n)
    shutil.copytree(base, cwd, symlinks=True)
    if snap_dst:
        shutil.rmtree(snap_dst, ignore_errors=True)
        if os.path.isdir(snap_src):
            shutil.copytree(snap_src, snap_dst, symlinks=True)
    for t in inv.get("dirs", []):
        os.makedirs(t, exist_ok=True)
    old = inv["cwd"]
    move = lambda s: s.replace(old, cwd)
    argv = [move(a) for a in inv["argv"]]
    env = {k: move(v) for k, v in inv["env"].items()}
    env["PWD"] = cwd
    if which != "box-sh":
        cmd = argv  # $0 as the harness gave it
        exe = os.path.join(reals, inv["shell"])
    else:
        # argv[0] the shell's name (bash or dash): box-sh takes its dialect from it
        cmd = [inv["shell"], "--policy", policy, "--home", env.get("HOME", "/")] + argv[1:]
        exe = boxsh
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=120, executable=exe)
        status, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        status, out, err = "timeout", b"", b""
    # The shell's name in its own messages: bash prints $0 (the path it was run as),
    # box-sh "box-shell"; the rest of the line must agree.
    for name in (argv[0].encode(), b"box-shell", b"bash"):
        err = err.replace(name + b": ", b"SHELL: ")
    out = out.decode(errors="replace")
    if argv[1:] == ["-c", "env"]:
        # The harness's probe of its environment: the order a shell hands its environment to
        # a command is its own (bash's is its variable table's), and SHLVL and _ are bash's
        # bookkeeping, which box-shell does not keep (docs/box-sh.1.md).
        out = "\n".join(sorted(l for l in out.splitlines()
                               if not l.startswith(("SHLVL=", "_="))))
    res = {"status": status, "stdout": out,
           "stderr": err.decode(errors="replace"), "files": tree(cwd),
           "snapshot": tree(snap_dst, False) if snap_dst else {},
           "scratch": {t: tree(t, False) for t in inv.get("dirs", [])}}
    for t in inv.get("dirs", []):
        shutil.rmtree(t, ignore_errors=True)
    os.rename(cwd, os.path.join(work, "%s-%d" % (which, n)))
    return res


def known_divergences(agent):
    """The differences written down in known-divergences (next to this file) for AGENT."""
    out = []
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "known-divergences")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                a, shell, match, reason = line.rstrip("\n").split("|", 3)
                if a == agent:
                    out.append((shell, match, reason))
    return out


def print_differences(a, b, shell):
    """Each part of two runs that differs, as a unified diff in TAP comments."""
    for k in a:
        if a[k] == b[k]:
            continue
        print("#   %s differs:" % k)
        x = a[k].splitlines() if isinstance(a[k], str) else json.dumps(a[k], indent=0, sort_keys=True).splitlines()
        y = b[k].splitlines() if isinstance(b[k], str) else json.dumps(b[k], indent=0, sort_keys=True).splitlines()
        for l in list(difflib.unified_diff(x, y, shell, "box-sh", lineterm=""))[:40]:
            print("#     " + l)


def main():
    known = known_divergences(tag.split()[0])
    invs = []
    for d in sorted(os.listdir(cap)):
        f = os.path.join(cap, d, "invocation.json")
        if os.path.exists(f):
            with open(f) as fh:
                invs.append((os.path.join(cap, d), json.load(fh)))
    fails = 0
    print("ok - %s: the harness sent its shell %d invocations, each recorded" % (tag, len(invs))
          if invs else "not ok - %s: the harness sent its shell nothing that was recorded" % tag)
    fails += not invs
    snap_dst = os.environ.get("REPLAY_SNAP_DIR", "")
    for n, (d, inv) in enumerate(invs):
        a = run(inv["shell"], inv, os.path.join(d, "snap"), snap_dst, n)
        b = run("box-sh", inv, os.path.join(d, "snap"), snap_dst, n)
        first = " ".join(inv["argv"][1:])[:70].replace("\n", " ")
        same = a == b
        why = [r for shell, m, r in known if shell == inv["shell"] and m in " ".join(inv["argv"])]
        if why:
            # Written down: it must still differ (else the line is stale and must go).
            print("%s - %s: recording %d (%s %s…) %s (known-divergences: %s)" %
                  ("not ok" if same else "ok", tag, n, inv["shell"], first,
                   "runs alike now: remove its line from known-divergences" if same else
                   "differs as written down", why[0]))
            fails += same
            if not same:
                # What still differs, so the line can be worked off.
                print_differences(a, b, inv["shell"])
            continue
        print("%s - %s: recording %d (%s %s…) runs alike in %s and box-sh (status %s)" %
              ("ok" if same else "not ok", tag, n, inv["shell"], first, inv["shell"],
               a["status"]))
        if not same:
            fails += 1
            print_differences(a, b, inv["shell"])
    return 1 if fails else 0


sys.exit(main())
