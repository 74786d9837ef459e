#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# seq.py — a decisions.jsonl file (docs/boxctl.1.md) as one compact line per entry,
# for exact comparison in test/shell/decide/scripts.sh:
#   D ACTION RESOURCE [OPERATION] VERDICT      a decision
#   R ACTION RESOURCE RESULT|STATUS|error      a recorded outcome
# RESOURCE of an outcome: input.path (fs), program_path (spawn) or program.
# Every line must be JSON with "source":"box-shell", and time_ns must increase.
# Trusts: nothing; it is test code.
import json
import sys

last = None
for n, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    o = json.loads(line)
    if o.get("source") != "box-shell":
        print("BAD source on line %d" % n)
    t = o.get("time_ns")
    if not isinstance(t, int) or (last is not None and t <= last):
        print("BAD time_ns on line %d" % n)
    last = t
    inp = o.get("input", {})
    if "record" in o:
        res = inp.get("path") or inp.get("program_path") or inp.get("program")
        out = o.get("output", {})
        if o["record"] == "error":
            what = "error"
        elif "result" in out:
            what = out["result"]
        else:
            what = "status=%s" % out.get("status")
        print("R %s %s %s" % (o["action"], res, what))
    else:
        op = inp.get("operation")
        print("D %s %s%s %s" % (o["action"], o["resource"], " " + op if op else "", o["verdict"]))
