#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# capture-shell.py — stands in for a shell during a harness test's run outside the box:
# mounted (in a private mount namespace) over /usr/bin/bash and /usr/bin/dash (/bin/sh), it
# records what the harness sent its shell — argv, cwd, environment, the harness's shell
# snapshot files as they were — and then runs the real shell (a copy elsewhere) with exactly
# that argv. replay.py runs each recording again in that shell and in box-sh and compares.
# lib-harness.sh writes one copy per shell with CONFIG filled in: where recordings go, the
# real shell, and the harness's snapshot directory ("" for none).
# Trusts: nothing; test code.
import json
import os
import re
import shutil
import sys
import tempfile
import time

CONFIG = {"capture": "@CAPTURE@", "real": "@REAL@", "snap": "@SNAP@"}

d = tempfile.mkdtemp(prefix="inv.%d." % time.monotonic_ns(), dir=CONFIG["capture"])
# The scratch directories under /tmp the command names that exist now (a harness makes one
# per command, Gemini CLI's /tmp/gemini-shell-*, and removes it after): made again for a replay.
dirs = sorted({os.path.dirname(m) for a in sys.argv[1:]
               for m in re.findall(r"/tmp/[A-Za-z0-9._-]+/[A-Za-z0-9._-]+", a)
               if os.path.isdir(os.path.dirname(m))})
with open(os.path.join(d, "invocation.json"), "w") as f:
    json.dump({"argv": [os.fsdecode(a) for a in sys.argv], "cwd": os.getcwd(),
               "env": dict(os.environ), "dirs": dirs,
               "shell": os.path.basename(CONFIG["real"])}, f)
snap = CONFIG["snap"]
if snap and os.path.isdir(snap):
    shutil.copytree(snap, os.path.join(d, "snap"), symlinks=True)
os.execv(CONFIG["real"], sys.argv)
