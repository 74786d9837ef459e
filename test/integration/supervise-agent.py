#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# supervise-agent.py — the agent of test/integration/t-supervise-agent.sh, run supervised
# ([agent] supervise = fs) in the project directory: the harness's own Read/Write/Edit done
# in process, each line KEY=VALUE one file system operation and what came of it ("ok…" or
# "error-ERRNO"); then one command through box's shell alias (the shell still works for a
# supervised agent).
# Trusts: nothing; test code.
import errno, os, subprocess


def attempt(key, fn):
    try:
        v = fn()
        print("%s=ok%s" % (key, "" if v is None else ":" + str(v)), flush=True)
    except OSError as e:
        print("%s=error-%s" % (key, errno.errorcode.get(e.errno, str(e.errno))), flush=True)


def read(p):
    with open(p) as f:
        return f.read().strip()


def write(p, text):
    with open(p, "w") as f:
        f.write(text)


def edit(p):
    # an Edit: read, change, write back in place
    text = read(p)
    write(p, text.replace("old", "new"))
    return read(p)


attempt("read_permitted", lambda: read("p.txt"))
attempt("read_env", lambda: read(".env"))
attempt("stat_env", lambda: os.stat(".env").st_size)
attempt("write_permitted", lambda: write("w/agent-out.txt", "written"))
attempt("read_back", lambda: read("w/agent-out.txt"))
attempt("edit", lambda: edit("w/edit.txt"))
attempt("write_refused", lambda: write("ro/x.txt", "nope"))
attempt("write_refused_exists", lambda: os.path.exists("ro/x.txt"))
attempt("listdir", lambda: ",".join(sorted(os.listdir("ls"))))
attempt("rename", lambda: os.rename("w/agent-out.txt", "w/agent-moved.txt"))
attempt("unlink_refused", lambda: os.unlink("w/keep.txt"))
attempt("keep_still_there", lambda: read("w/keep.txt"))
r = subprocess.run(["bash", "-c", "cat p.txt"], capture_output=True, timeout=120)
print("shell=rc%d:%s" % (r.returncode, r.stdout.decode(errors="replace").strip()), flush=True)
