#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# gen.py — writes the benchmark inputs: a 5-rule policy, a 500-rule policy,
# 1000 requests over every fixed action, and a 500-rule policy of `like` and
# `||` rules without a target (deterministic). Frozen: run.sh refuses to
# compare figures when the files it writes change (their SHA-256 sums are in
# inputs.sha256); a new input is a new file with a new sum. Trusts: nothing.
import json, random, sys

out = sys.argv[1]
rnd = random.Random(42)
five = '''@id("anthropic_connect")
permit (principal, action == Box::Action::"net:connect", resource) when { context.input.port == 443 };
@id("anthropic_request")
permit (principal, action == Box::Action::"http:request", resource) when { context.input.host == "api.anthropic.com" };
@id("shell_commands")
permit (principal, action == Box::Action::"shell:exec", resource);
@id("project_read")
permit (principal, action == Box::Action::"fs:read", resource)
when { context.input.path == "~/project" || context.input.path like "~/project/*" };
@id("no_rm_rf")
forbid (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "rm" && context.input has arg1 && context.input.arg1 == "-rf" };
'''
open(f"{out}/p5.dw", "w").write(five)

acts = ["fs:read", "fs:write", "fs:delete", "net:connect", "http:request", "shell:exec", "shell:spawn", "mcp:call"]
rules = []
for i in range(500):
    a = acts[i % len(acts)]
    eff = "forbid" if i % 7 == 0 else "permit"
    if a.startswith("fs:"):
        c = f'context.input.path == "~/p{i}" || context.input.path like "~/p{i}/*"'
    elif a == "net:connect":
        c = f'context.input.host == "h{i}.example" && context.input.port == {443 if i % 2 else 80}'
    elif a == "http:request":
        c = f'context.input.host == "h{i}.example" && ["GET", "HEAD"].contains(context.input.method) && context.input.path like "/v{i}/*"'
    elif a == "shell:exec":
        c = f'context.input.program == "tool{i}" && context.input.arg_count < {i % 5 + 1}'
    elif a == "shell:spawn":
        c = f'context.input.program_path == "/usr/bin/t{i}" && !(context.input has arg1 && context.input.arg1 == "--force")'
    else:
        c = f'context.input.server == "s{i}" && (context.input has tool && context.input.tool like "read*")'
    rules.append(f'@id("r{i}")\n{eff} (principal, action == Box::Action::"{a}", resource)\nwhen {{ {c} }};')
open(f"{out}/p500.dw", "w").write("\n".join(rules) + "\n")

ops = {"fs:read": "read_content", "fs:write": "write_content", "fs:delete": "remove_file"}
with open(f"{out}/requests.jsonl", "w") as f:
    for k in range(1000):
        a = rnd.choice(acts)
        i = rnd.randrange(520)
        if a.startswith("fs:"):
            inp = {"path": rnd.choice([f"~/p{i}", f"~/p{i}/x.txt", "~/project/a", "/etc/passwd"]), "operation": ops[a]}
        elif a == "net:connect":
            inp = {"host": rnd.choice([f"h{i}.example", "api.anthropic.com"]), "port": rnd.choice([80, 443])}
            if rnd.random() < 0.5: inp["ip"] = "1.2.3.4"
        elif a == "http:request":
            inp = {"host": rnd.choice([f"h{i}.example", "api.anthropic.com"]), "port": 443, "method": rnd.choice(["GET", "POST"]),
                   "path": f"/v{i}/items", "body_bytes": 10, "intercepted": True}
        elif a == "shell:exec":
            inp = {"command": "x", "program": rnd.choice([f"tool{i}", "rm"]), "arg_count": rnd.randrange(3), "cwd": "~/w"}
            if rnd.random() < 0.5: inp["arg1"] = rnd.choice(["-rf", "x"])
        elif a == "shell:spawn":
            inp = {"command": "x", "program": "t", "program_path": f"/usr/bin/t{i}", "arg_count": 1, "cwd": "~/w"}
            if rnd.random() < 0.5: inp["arg1"] = rnd.choice(["--force", "x"])
        else:
            inp = {"server": f"s{i}", "method": "tools/call"}
            if rnd.random() < 0.7: inp["tool"] = rnd.choice(["read_file", "write_file"])
        f.write(json.dumps({"action": a, "input": inp}) + "\n")

# 500 rules without a target: `like` patterns with a leading `*` and `||`
# across fields, which no literal key of the rule index reads.
like = []
for i in range(500):
    eff = "forbid" if i % 9 == 0 else "permit"
    k = i % 5
    if k == 0:
        c = f'context.input has path && (context.input.path like "*/p{i}/*" || context.input.path like "*p{i}.txt")'
    elif k == 1:
        c = (f'context.input has host && context.input.host like "*h{i}.example" || '
             f'context.input has program && context.input.program like "*ool{i}"')
    elif k == 2:
        c = (f'context.input has server && context.input.server like "*{i}" && '
             f'(context.input has tool && context.input.tool like "*read*" || context.input has method && context.input.method like "*s/c*")')
    elif k == 3:
        c = (f'context.input has program_path && context.input.program_path like "*/t{i}" || '
             f'context.input has path && context.input.path like "*/p{i}"')
    else:
        c = (f'context.input has path && context.input.path like "*p{i}*" }} '
             f'unless {{ context.input has path && context.input.path like "*.secret*"')
    like.append(f'@id("l{i}")\n{eff} (principal, action, resource)\nwhen {{ {c} }};')
open(f"{out}/plike.dw", "w").write("\n".join(like) + "\n")
