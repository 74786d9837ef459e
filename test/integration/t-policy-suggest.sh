#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-policy-suggest.sh — `boxctl policy suggest` on real
# decision logs: box-sh (--decisions) for shell:exec and fs:read, and a real
# box with box-gateway (boxctl run, embedded boxd, as root) for http:request
# and net:connect. For each: the exact rules proposed (paths of one
# directory as `like "DIR/*"`, a single path exactly, a program, a host and
# port), each with @id("suggest_N_…") and its count; the file loads with
# `boxctl policy check`; the old policy plus the suggestion, evaluated with
# `boxctl policy eval` on the log's own requests, permits exactly the no_match
# denials and changes no other decision, and so does `boxctl policy replay`
# of the log (exit 3, only those changes); re-running the same commands under
# it, they are permitted for real and the forbidden ones are still refused.
# Forbid denials are never proposed: a comment and a stderr line say so.
# --action and --since filter; a box is found by name (through `boxctl log`);
# a line that is not JSON is skipped with a warning naming file and line.
# Trusts: nothing; test code. Packets only to 127.0.0.1.
. test/lib.sh
. test/integration/lib-run.sh
. test/servers/lib-servers.sh
set -u
trap "stop_all; [ -n \"${KEEP:-}\" ] || run_cleanup" EXIT
boxctl=$RB/boxctl
boxsh=$(cd "$BOX_BIN" && pwd)/box-sh

# to_requests LOG: the log's decision and outcome lines as `policy eval` input
# (`at` from time_ns, exact, else `time`), one request per decision line, in order.
to_requests() {
	python3 - "$1" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if "seal" in o:  # a run's seal line (docs/boxctl.1.md "The chain"): no event
        continue
    if "time_ns" in o:
        ns = o["time_ns"]
        at = "%d.%09d" % (ns // 10**9, ns % 10**9)
    else:  # an older line: its RFC 3339 time (milliseconds)
        at = json.dumps(o["time"])
    r = {"action": o["action"], "input": o["input"]}
    if "record" in o:
        r = {"record": o["record"], "action": o["action"], "input": o["input"],
             "output": o["output"]}
    print(json.dumps(r, separators=(",", ":"))[:-1] + ',"at":' + at + "}")
EOF
}
# verdicts LOG: "verdict cause" of each decision line of LOG.
verdicts() {
	python3 -c 'import json,sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if "record" not in o and "seal" not in o: print(o["verdict"], o["cause"])' "$1"
}
# expected_after LOG: what the candidate must give: no_match denials permitted, the rest as they were.
expected_after() {
	verdicts "$1" | sed 's/^deny no_match$/permit permitted/'
}
evaluated() {
	python3 -c 'import json,sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    print(o.get("verdict"), o.get("cause"))' "$1"
}

# replay_check NAME CANDIDATE LOG|BOX NO_MATCH_LOG [--home H]: `policy replay --json` of the
# log under the candidate: exit 3, every changed decision was a no_match denial and is now a
# permit, as many as the log has, nothing now denied.
replay_check() {
	local name=$1 cand=$2 what=$3 log=$4
	shift 4
	"$boxctl" policy replay "$@" --json "$cand" "$what" >"$W/replay.out" 2>"$W/replay.err"
	local rc=$?
	python3 - "$W/replay.out" "$log" "$rc" >"$W/replay.check" 2>&1 <<'EOF'
import json, sys
out = [json.loads(l) for l in open(sys.argv[1])]
log = [o for o in map(json.loads, open(sys.argv[2])) if "seal" not in o]
rc = int(sys.argv[3])
want = sum(1 for o in log if "record" not in o and o["verdict"] == "deny" and o["cause"] == "no_match")
summary, changed = out[-1], out[:-1]
assert rc == 3, "exit %d" % rc
assert want > 0
assert len(changed) == want, (len(changed), want)
for c in changed:
    assert (c["old"]["verdict"], c["old"]["cause"]) == ("deny", "no_match"), c
    assert (c["new"]["verdict"], c["new"]["cause"]) == ("permit", "permitted"), c
    assert all(r.startswith("suggest_") for r in c["new"]["rules"]), c
assert summary["now_permitted"] == want and summary["now_denied"] == 0, summary
assert summary["refused_lines"] == 0 and summary["schema_gone"] == 0, summary
decisions = sum(1 for o in log if "record" not in o)
assert summary["decisions"] == decisions and summary["unchanged"] == decisions - want, summary
print("fine")
EOF
	if grep -qx fine "$W/replay.check"; then ok "$name"; else
		not_ok "$name"
		sed 's/^/#   /' "$W/replay.check" "$W/replay.err" | head -20
	fi
}

# ---- box-sh: shell:exec and fs:read ----
h=$W/sh-home
mkdir -p "$h/w/d" "$h/w/one"
home=$(cd "$h" && pwd -P)
echo a >"$home/w/a.txt"; echo x >"$home/w/d/x.txt"; echo y >"$home/w/d/y.txt"
echo z >"$home/w/one/z.txt"; echo s >"$home/w/secret.txt"
cat >"$W/sh.dw" <<'EOF'
@id("sh_ok")
permit (principal, action == Box::Action::"shell:exec", resource)
when { ["echo", "cat", "rm"].contains(context.input.program) };
@id("read_top")
permit (principal, action == Box::Action::"fs:read", resource)
when { context.input.path == "~/w/a.txt" };
@id("no_rm") @description("rm is not for agents")
forbid (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "rm" };
@id("no_secret")
forbid (principal, action == Box::Action::"fs:read", resource)
when { context.input.path like "~/w/secret*" };
EOF
script='cat a.txt; cat d/x.txt d/y.txt; cat d/x.txt; cat one/z.txt; wc -l a.txt; rm a.txt; cat secret.txt; echo done'
(cd "$home/w" && "$boxsh" --policy "$W/sh.dw" --home "$home" --decisions "$W/sh.jsonl" -c "$script" \
	>"$W/sh.out" 2>"$W/sh.err")
check "box-sh wrote its decisions (no_match and forbidden denials among them)" \
	bash -c "grep -q '\"cause\":\"no_match\"' '$W/sh.jsonl' && grep -q '\"cause\":\"forbidden\"' '$W/sh.jsonl'"

"$boxctl" policy suggest "$W/sh.jsonl" >"$W/sh-sug.dw" 2>"$W/sh-sug.err"
rc=$?
check "suggest LOG exits 0 (rc $rc)" test "$rc" = 0
cat >"$W/sh-want.dw" <<EOF
// boxctl policy suggest: permits for the denials no permit matched (cause no_match) of $W/sh.jsonl
// 5 denied requests, 3 rules
// not proposed: 2 requests were denied by a forbid (no_rm, no_secret): a forbid overrides any permit; suggest never undoes one

// covers 3 denied requests (2 distinct): fs:read ~/w/d/x.txt, ~/w/d/y.txt
@id("suggest_1_fs_read_w_d")
permit (principal, action == Box::Action::"fs:read", resource)
when { context.input.path like "~/w/d/*" && context.input.operation == Box::FsReadOperation::"read_content" };

// covers 1 denied request: fs:read ~/w/one/z.txt
@id("suggest_2_fs_read_w_one")
permit (principal, action == Box::Action::"fs:read", resource)
when { context.input.path == "~/w/one/z.txt" && context.input.operation == Box::FsReadOperation::"read_content" };

// covers 1 denied request: shell:exec wc
@id("suggest_3_shell_exec_wc")
permit (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "wc" };
EOF
if cmp -s "$W/sh-want.dw" "$W/sh-sug.dw"; then ok "suggest: the exact rules (a directory's paths by like, one path exactly, a program)"; else
	not_ok "suggest: the exact rules (a directory's paths by like, one path exactly, a program)"
	diff "$W/sh-want.dw" "$W/sh-sug.dw" | sed 's/^/#   /'
fi
check "suggest: stderr says the forbid denials are not proposed" \
	grep -qx "boxctl: policy suggest: 2 denied requests came from a forbid (no_rm, no_secret); no permit is proposed for them: a forbid overrides any permit" "$W/sh-sug.err"
check "the suggestion loads with policy check" \
	bash -c "'$boxctl' policy check --home '$home' '$W/sh-sug.dw' 2>&1 | grep -qx '3 rules loaded'"
cat "$W/sh.dw" "$W/sh-sug.dw" >"$W/sh-cand.dw"
check "policy + suggestion loads" \
	bash -c "'$boxctl' policy check --home '$home' '$W/sh-cand.dw' 2>&1 | grep -qx '7 rules loaded'"
to_requests "$W/sh.jsonl" >"$W/sh-req.jsonl"
"$boxctl" policy eval --home "$home" "$W/sh.dw" "$W/sh-req.jsonl" >"$W/sh-old.out"
check "eval under the old policy: the log's own decisions (the conversion is faithful)" \
	cmp -s <(verdicts "$W/sh.jsonl") <(evaluated "$W/sh-old.out")
"$boxctl" policy eval --home "$home" "$W/sh-cand.dw" "$W/sh-req.jsonl" >"$W/sh-new.out"
if cmp -s <(expected_after "$W/sh.jsonl") <(evaluated "$W/sh-new.out"); then
	ok "eval under policy + suggestion: exactly the no_match denials now permitted, nothing else changed"
else
	not_ok "eval under policy + suggestion: exactly the no_match denials now permitted, nothing else changed"
	diff <(expected_after "$W/sh.jsonl") <(evaluated "$W/sh-new.out") | sed 's/^/#   /'
fi
replay_check "replay of the log under policy + suggestion: exactly the no_match denials turn into permits, nothing else (exit 3)" \
	"$W/sh-cand.dw" "$W/sh.jsonl" "$W/sh.jsonl" --home "$home"
"$boxctl" policy replay --home "$home" "$W/sh.dw" "$W/sh.jsonl" >"$W/replay0.out" 2>&1
rc=$?
check "… and under the old policy: nothing changes (exit 0, rc $rc)" test "$rc" = 0
(cd "$home/w" && "$boxsh" --policy "$W/sh-cand.dw" --home "$home" --decisions "$W/sh2.jsonl" \
	-c "$script" >"$W/sh2.out" 2>"$W/sh2.err")
check "re-run under it: no no_match denial left" \
	test "$(grep -c '"cause":"no_match"' "$W/sh2.jsonl")" = 0
check "… the commands did read the files (x, y, z, and wc's count)" \
	test "$(tr '\n' ' ' <"$W/sh2.out")" = "a x y x z 1 a.txt done "
check "… rm and the secret still refused by their forbids" \
	test "$(grep -c '"cause":"forbidden"' "$W/sh2.jsonl")" = 2
"$boxctl" policy suggest "$W/sh2.jsonl" >"$W/sh2-sug.dw" 2>/dev/null
check "… and suggest on that log proposes nothing" \
	bash -c "grep -qx '// 0 denied requests, 0 rules' '$W/sh2-sug.dw' && ! grep -q '^permit' '$W/sh2-sug.dw'"

# filters
"$boxctl" policy suggest "$W/sh.jsonl" --action shell:exec >"$W/f1.dw" 2>/dev/null
check "--action shell:exec: only the wc rule" \
	test "$(grep '^@id' "$W/f1.dw" | tr '\n' ' ')" = '@id("suggest_1_shell_exec_wc") '
"$boxctl" policy suggest --since 2099-01-01T00:00:00Z "$W/sh.jsonl" >"$W/f2.dw" 2>"$W/f2.err"
check "--since in the future: nothing proposed, and stderr says so" \
	bash -c "! grep -q '^permit' '$W/f2.dw' && grep -q 'no denial with cause no_match' '$W/f2.err'"
"$boxctl" policy suggest --since 1h "$W/sh.jsonl" >"$W/f3.dw" 2>/dev/null
check "--since 1h: everything of this run" test "$(grep -c '^permit' "$W/f3.dw")" = 3
"$boxctl" policy suggest --since yesterday "$W/sh.jsonl" >/dev/null 2>"$W/f4.err"
rc=$?
check "--since with a bad time: exit 2 (rc $rc) and a message naming it" \
	bash -c "test $rc = 2 && grep -q \"^boxctl: error: --since 'yesterday'\" '$W/f4.err'"
{ echo 'not json'; cat "$W/sh.jsonl"; } >"$W/bad.jsonl"
"$boxctl" policy suggest "$W/bad.jsonl" >"$W/bad.dw" 2>"$W/bad.err"
check "a line that is not JSON: a warning naming the file and line, the rest used" \
	bash -c "grep -q '^boxctl: warning: $W/bad.jsonl:1: not a decision line' '$W/bad.err' && test \$(grep -c '^permit' '$W/bad.dw') = 3"

# ---- a real box with the gateway: http:request and net:connect, found by name ----
cd "$W"
if ! make_ca ok.sgw.test no.sgw.test || ! start_httpd --tls; then
	not_ok "the loopback HTTPS upstream starts"
	tap_done
	exit 1
fi
chmod 644 "$SRV_CA"
port=$HTTPD_PORT
printf '127.0.0.1 ok.sgw.test no.sgw.test\n' >hosts
cp "$SRV_CA" upstream-ca.pem
cat >gw.dw <<'EOF'
@id("ok_connect")
permit (principal, action == Box::Action::"net:connect", resource)
when { context.input.host == "ok.sgw.test" };
@id("ok_get")
permit (principal, action == Box::Action::"http:request", resource)
when { context.input.host == "ok.sgw.test" && context.input.method == "GET" };
@id("no_delete")
forbid (principal, action == Box::Action::"http:request", resource)
when { context.input.method == "DELETE" };
EOF
cat >agent.py <<'EOF'
#!/usr/bin/python3
# one curl per METHOD URL pair: "METHOD URL HTTP-CODE"
import subprocess, sys
a = sys.argv[1:]
for m, u in zip(a[0::2], a[1::2]):
    r = subprocess.run(["/usr/bin/curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}",
                        "--max-time", "20", "-X", m, u], capture_output=True, text=True)
    print(m, u, r.stdout.strip() or "000", flush=True)
EOF
chmod 755 agent.py
chmod 644 hosts upstream-ca.pem gw.dw
mkini() {
	cat >"$1" <<EOF
[box]
name = sg-gw
policy = $2

[agent]
command = $W/agent.py
workspace = $W

[agent.filesystem]
exec = /usr/bin/curl

[gateway]
hosts_file = $W/hosts
upstream_ca = $W/upstream-ca.pem
allow_host_loopback = true
EOF
	chmod 644 "$1"
}
mkini sg-gw.ini gw.dw
u=https://ok.sgw.test:$port
reqs="GET $u/echo POST $u/status/201 POST $u/status/202 PUT $u/status/201 DELETE $u/status/201 GET https://no.sgw.test:$port/x"
"$boxctl" run -q -c sg-gw.ini -- $reqs >gw1.out 2>gw1.err
check "the box ran (GET permitted: 200, the others refused: 403)" \
	test "$(awk '{print $3}' gw1.out | tr '\n' ' ')" = "200 403 403 403 403 000 "
state=$XDG_STATE_HOME/box/sg-gw
"$boxctl" policy suggest sg-gw >gw-sug.dw 2>gw-sug.err
rc=$?
check "suggest NAME (the box's log through boxctl log) exits 0 (rc $rc)" test "$rc" = 0
cat >gw-want.dw <<EOF
// boxctl policy suggest: permits for the denials no permit matched (cause no_match) of sg-gw
// 4 denied requests, 2 rules
// not proposed: 1 request was denied by a forbid (no_delete): a forbid overrides any permit; suggest never undoes one

// covers 3 denied requests (2 distinct): http:request ok.sgw.test:$port/status/201, ok.sgw.test:$port/status/202
@id("suggest_1_http_request_ok_sgw_test_$port")
permit (principal, action == Box::Action::"http:request", resource)
when { context.input.host == "ok.sgw.test" && context.input.port == $port && context.input.path like "/status/*" && ["POST", "PUT"].contains(context.input.method) };

// covers 1 denied request: net:connect no.sgw.test:$port
@id("suggest_2_net_connect_no_sgw_test_$port")
permit (principal, action == Box::Action::"net:connect", resource)
when { context.input.host == "no.sgw.test" && context.input.port == $port };
EOF
if cmp -s gw-want.dw gw-sug.dw; then ok "suggest: host and port exactly, the paths' directory, the methods seen"; else
	not_ok "suggest: host and port exactly, the paths' directory, the methods seen"
	diff gw-want.dw gw-sug.dw | sed 's/^/#   /'
fi
cat gw.dw gw-sug.dw >gw-cand.dw
chmod 644 gw-cand.dw
check "policy + suggestion loads" \
	bash -c "'$boxctl' policy check gw-cand.dw 2>&1 | grep -qx '5 rules loaded'"
to_requests "$state/decisions.jsonl" >gw-req.jsonl
check "the box's log has decisions" test -s gw-req.jsonl
"$boxctl" policy eval gw-cand.dw gw-req.jsonl >gw-new.out
if cmp -s <(expected_after "$state/decisions.jsonl") <(evaluated gw-new.out); then
	ok "eval of the box's requests under it: exactly the no_match denials now permitted"
else
	not_ok "eval of the box's requests under it: exactly the no_match denials now permitted"
	diff <(expected_after "$state/decisions.jsonl") <(evaluated gw-new.out) | sed 's/^/#   /'
fi
replay_check "replay of box sg-gw (by name) under it: exactly the no_match denials turn into permits (exit 3)" \
	gw-cand.dw sg-gw "$state/decisions.jsonl"
mkini sg-gw.ini gw-cand.dw
"$boxctl" run -q -c sg-gw.ini -- $reqs >gw2.out 2>gw2.err
check "the box again under it: POST and PUT reach the upstream (its 201, 202), DELETE still 403" \
	test "$(awk '{print $3}' gw2.out | head -5 | tr '\n' ' ')" = "200 201 202 201 403 "
check "… no.sgw.test now connects (its GET is a new denial: 403, no longer a refused CONNECT)" \
	test "$(awk '{print $3}' gw2.out | tail -1)" = 403
tap_done
