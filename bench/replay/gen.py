#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# gen.py — the inputs of bench/replay: OUT/old.dw (bench/policy's 500-rule policy),
# OUT/cand.dw (the same with every 25th rule's effect flipped: a candidate that changes a
# few decisions), OUT/eval.jsonl (N lines in `boxctl policy eval`'s format: requests and,
# after every 10th, an outcome line, `at` 1 ms apart) and, from eval.jsonl and the
# verdicts `boxctl policy eval old.dw` gave for it (OUT/old.out), OUT/log.jsonl: the same
# lines as box-policyd writes them (decisions.jsonl: time, time_ns, box, id, action,
# resource, verdict, cause, rules, message, source, input; outcome lines with record and
# output). Deterministic.
#   gen.py requests OUT N     writes old.dw cand.dw eval.jsonl
#   gen.py log OUT            writes log.jsonl (needs old.out)
# Trusts: nothing; it is benchmark code.
import json, os, random, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))
mode, out = sys.argv[1], sys.argv[2]
T0 = 1764547200 * 10**9  # 2025-12-01T00:00:00Z

def label(a, inp):
    if a.startswith("fs:"):
        return inp["path"]
    if a == "net:connect":
        return "%s:%d" % (inp["host"], inp["port"])
    if a == "http:request":
        return "%s:%d%s" % (inp["host"], inp["port"], inp["path"])
    if a == "shell:exec":
        return inp["program"]
    if a == "shell:spawn":
        return inp["program_path"]
    return "%s/%s" % (inp["server"], inp.get("tool", inp["method"]))

SOURCE = {"fs": "box-shell", "shell": "box-shell", "net": "box-gateway", "http": "box-gateway",
          "mcp": "box-mcpd"}

if mode == "requests":
    n = int(sys.argv[3])
    subprocess.run([sys.executable, os.path.join(here, "..", "policy", "gen.py"), out], check=True)
    old = open(os.path.join(out, "p500.dw")).read()
    open(os.path.join(out, "old.dw"), "w").write(old)
    rules = old.split("\n@id(")
    flipped = []
    for i, r in enumerate(rules):
        if i % 25 == 3:
            r = r.replace("\npermit (", "\nforbid (", 1) if "\npermit (" in r else r.replace("\nforbid (", "\npermit (", 1)
        flipped.append(r)
    open(os.path.join(out, "cand.dw"), "w").write("\n@id(".join(flipped))
    base = [json.loads(l) for l in open(os.path.join(out, "requests.jsonl"))]
    rnd = random.Random(7)
    t = T0
    with open(os.path.join(out, "eval.jsonl"), "w") as f:
        k = 0
        while k < n:
            r = base[rnd.randrange(len(base))]
            t += 1000000
            f.write('{"action":%s,"input":%s,"at":%d.%09d}\n' % (json.dumps(r["action"]),
                    json.dumps(r["input"], separators=(",", ":")), t // 10**9, t % 10**9))
            k += 1
            if k % 10 == 0 and k < n and r["action"].startswith("fs:"):
                t += 1000000
                f.write('{"record":"response","action":%s,"input":%s,"output":{"result":"completed"},'
                        '"at":%d.%09d}\n' % (json.dumps(r["action"]),
                        json.dumps(r["input"], separators=(",", ":")), t // 10**9, t % 10**9))
                k += 1
elif mode == "log":
    import datetime
    verdicts = open(os.path.join(out, "old.out"))
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    last_s, last_text = None, None
    with open(os.path.join(out, "eval.jsonl")) as f, open(os.path.join(out, "log.jsonl"), "w") as o:
        for line in f:
            r = json.loads(line)
            at = line[line.rindex('"at":') + 5:].rstrip("}\n")
            s, frac = at.split(".")
            tns = int(s) * 10**9 + int(frac)
            if s != last_s:
                tm = datetime.datetime.fromtimestamp(int(s), datetime.timezone.utc)
                last_s, last_text = s, tm.strftime("%Y-%m-%dT%H:%M:%S")
            stamp = last_text + ".%03dZ" % (tns % 10**9 // 10**6)
            a = r["action"]
            src = SOURCE[a.split(":")[0]]
            if "record" in r:
                rec = {"time": stamp, "time_ns": tns, "box": "bench", "id": "0123456789ab",
                       "record": r["record"], "action": a, "input": r["input"],
                       "output": r["output"], "source": src}
            else:
                d = json.loads(verdicts.readline())
                rec = {"time": stamp, "time_ns": tns, "box": "bench", "id": "0123456789ab",
                       "action": a, "resource": label(a, r["input"]), "verdict": d["verdict"],
                       "cause": d["cause"], "rules": d["rules"], "message": d["message"],
                       "source": src, "input": r["input"]}
            o.write(dumps(rec) + "\n")
