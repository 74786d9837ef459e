#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""boxini.py BOX.INI command|env — what a box.ini tells its agent, for running the same
harness outside the box: `command` prints [agent] command's words (continuation lines
included, quotes and backslashes as box.ini(5) reads them), `env` the [agent.env] lines as
NAME=VALUE; each item ends in a NUL byte.
Trusts: nothing; test code, reading a file the test wrote.
"""
import sys

path, what = sys.argv[1], sys.argv[2]
section, key, values = None, None, {}
for line in open(path, encoding="utf-8"):
    line = line.rstrip("\r\n")
    if not line or line[0] in ";#":
        continue
    if line.startswith("["):
        section, key = line.strip("[]"), None
        continue
    if line[0] in " \t":
        if key:
            values[(section, key)] += " " + line.strip()
        continue
    key, _, val = line.partition("=")
    key = key.strip()
    values[(section, key)] = val.strip()


def words(s):
    out, cur, q, have, i = [], "", None, False, 0
    while i < len(s):
        c = s[i]
        if q == "'":
            if c == "'":
                q = None
            else:
                cur += c
        elif q == '"':
            if c == "\\" and i + 1 < len(s):
                i += 1
                cur += s[i]
            elif c == '"':
                q = None
            else:
                cur += c
        elif c in " \t":
            if have:
                out.append(cur)
            cur, have = "", False
        elif c in "'\"":
            q, have = c, True
        elif c == "\\" and i + 1 < len(s):
            i += 1
            cur += s[i]
            have = True
        else:
            cur += c
            have = True
        i += 1
    if have:
        out.append(cur)
    return out


if what == "command":
    items = words(values[("agent", "command")])
else:
    items = ["%s=%s" % (k, v) for (sec, k), v in values.items() if sec == "agent.env"]
sys.stdout.write("".join(i + "\0" for i in items))
