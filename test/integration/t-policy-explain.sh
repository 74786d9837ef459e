#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-policy-explain.sh — `boxctl policy eval --explain` on
# each kind of rule: permit and forbid, when and unless, `like`, `has`, `in`,
# a rule with no condition, an erroring rule (overflow), a temporal count
# over a window (the events it counted) and a `::response` condition (the
# outcome event that satisfied it, the request events that did not); the
# text form (lines "# explain: …" after each decision line, exact text) and
# --json (a field "explain" with rules, clauses, notes and events); the
# decisions themselves are byte-identical with and without --explain; bad
# usage exits 2. (A request that does not fit the schema is refused by eval
# before deciding; test_explain covers bp_explain_problem.)
# Trusts: nothing; test code.
. test/lib.sh
set -u
boxctl=$BOX_BIN/boxctl
t=$(mktemp -d /tmp/box-t-explain.XXXXXX)
trap 'rm -rf "$t"' EXIT

cat >"$t/p.dw" <<'EOF'
// every kind of rule --explain describes
@id("read_p")
permit (principal, action == Box::Action::"fs:read", resource)
when { context.input.path like "~/p/*" };

@id("no_secret") @description("secrets stay")
forbid (principal, action == Box::Action::"fs:read", resource)
when { context.input.path like "~/p/secret*" }
unless { context.input.operation in [Box::FsReadOperation::"read_metadata", Box::FsReadOperation::"enumerate"] };

@id("git_status")
permit (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "git" && context.input has arg1 && context.input.arg1 == "status" };

@id("big_args")
forbid (principal, action == Box::Action::"shell:exec", resource)
when { context.input.arg_count * 4611686018427387904 > 8 };

@id("w")
permit (principal, action == Box::Action::"fs:write", resource);

@id("budget") @description("at most 2 files a minute")
forbid (principal, action == Box::Action::"fs:write", resource)
when temporal { count for (p: String). where formerly within 60s (Box::Action::"fs:write"::request{ input.path: p }) > 2 };

@id("post_after_get")
permit (principal, action == Box::Action::"http:request", resource)
when { context.input.host == "api.test" && context.input.method == "POST" }
when temporal { formerly within 5m (Box::Action::"http:request"::response{ input.host: "api.test", output.status: 200 }) };
EOF
cat >"$t/r.jsonl" <<'EOF'
{"action":"fs:read","input":{"path":"~/q/a","operation":"read_content"},"at":100}
{"action":"fs:read","input":{"path":"~/p/secret.txt","operation":"read_content"},"at":101}
{"action":"shell:exec","input":{"command":"git","program":"git","arg_count":0,"cwd":"~/p"},"at":102}
{"action":"shell:exec","input":{"command":"ls a b","program":"ls","arg1":"a","arg2":"b","arg_count":2,"cwd":"~/p"},"at":103}
{"action":"fs:write","input":{"path":"~/p/1","operation":"write_content"},"at":110}
{"action":"fs:write","input":{"path":"~/p/2","operation":"write_content"},"at":111}
{"action":"fs:write","input":{"path":"~/p/3","operation":"write_content"},"at":112}
{"action":"http:request","input":{"host":"api.test","port":443,"method":"POST","path":"/v1","body_bytes":3,"intercepted":true},"at":120}
{"record":"response","action":"http:request","input":{"host":"api.test","port":443,"method":"GET","path":"/v1","body_bytes":0,"intercepted":true},"output":{"status":200},"at":122}
{"action":"http:request","input":{"host":"api.test","port":443,"method":"POST","path":"/v1","body_bytes":3,"intercepted":true},"at":123}
EOF

"$boxctl" policy eval --home /home/dev "$t/p.dw" "$t/r.jsonl" >"$t/plain.out" 2>"$t/plain.err"
check "eval without --explain: no explanation" \
	test "$(grep -c 'explain' "$t/plain.out")" = 0
"$boxctl" policy eval --home /home/dev --explain "$t/p.dw" "$t/r.jsonl" >"$t/x.out" 2>"$t/x.err"
rc=$?
check "eval --explain exits 0 (rc $rc)" test "$rc" = 0
check "--explain: the decision lines are unchanged (the others start with '# ')" \
	cmp -s "$t/plain.out" <(grep -v '^# ' "$t/x.out")

# expect NAME LINE: LINE is one of the explanation's lines, exactly.
expect() {
	if grep -qxF -- "$2" "$t/x.out"; then ok "$1"; else
		not_ok "$1"
		diag "wanted: $2"
		grep -F -- "${2:0:40}" "$t/x.out" | head -3 | sed 's/^/#   got: /'
	fi
}
expect "like, false: the clause, the sub-expression as written, the value it read" \
	'# explain: permit read_p (line 3) did not match: when clause 1 was false at `context.input.path like "~/p/*"` (context.input.path is "~/q/a")'
expect "a forbid's when false" \
	'# explain: forbid no_secret (line 7) did not match: when clause 1 was false at `context.input.path like "~/p/secret*"` (context.input.path is "~/q/a")'
expect "like, true" \
	'# explain: permit read_p (line 3) matched: when clause 1 was true at `context.input.path like "~/p/*"` (context.input.path is "~/p/secret.txt")'
expect "forbid with unless + in: matched, the unless clause false at the in" \
	'# explain: forbid no_secret (line 7) matched: all 2 clauses held; the last, unless clause 2 was false at `context.input.operation in [Box::FsReadOperation::"read_metadata", Box::FsReadOperation::"enumerate"]` (context.input.operation is Box::FsReadOperation::"read_content")'
expect "… each clause with its line" \
	'#   unless clause 2 (line 9): false at `context.input.operation in [Box::FsReadOperation::"read_metadata", Box::FsReadOperation::"enumerate"]`'
expect "has: false at the has (the request has no arg1)" \
	'# explain: permit git_status (line 12) did not match: when clause 1 was false at `context.input has arg1` (context.input is {command: "git", program: "git", arg_count: 0, cwd: "~/p"})'
expect "an erroring rule: where it failed and why" \
	'# explain: forbid big_args (line 16) could not be evaluated: when clause 1 failed at `context.input.arg_count * 4611686018427387904` (integer overflow)'
expect "a rule without a condition" \
	'# explain: permit w (line 20) matched: it has no condition (its scope names the action)'
expect "temporal count, under the budget" \
	'# explain: forbid budget (line 23) did not match: when clause 1 was false at `temporal { count for (p: String). where formerly within 60s (Box::Action::"fs:write"::request{ input.path: p }) > 2 }`'
expect "… the count and the comparison" '#   comparison count(…) = 2 > 2: false'
expect "temporal count, over the budget" \
	'# explain: forbid budget (line 23) matched: when clause 1 was true at `temporal { count for (p: String). where formerly within 60s (Box::Action::"fs:write"::request{ input.path: p }) > 2 }`'
expect "… the window's events it counted" \
	'#   counted: formerly within 60s: held at 3 of the 3 events in the window'
expect "… each counted event (time, kind, action, fields)" \
	'#   event 1970-01-01T00:01:50.000000000Z request fs:write path="~/p/1" operation=Box::FsWriteOperation::"write_content": counted: formerly within 60s: held'
expect "::response, no response yet: the clause and the window" \
	'#   formerly within 5m: held at 0 of the 1 event in the window'
expect "… the request event that did not satisfy it" \
	'#   event 1970-01-01T00:02:00.000000000Z request http:request host="api.test" port=443 method="POST" path="/v1" body_bytes=3 intercepted=true: formerly within 5m: did not hold'
expect "::response satisfied by the outcome event" \
	'#   event 1970-01-01T00:02:02.000000000Z response http:request host="api.test" port=443 method="GET" path="/v1" body_bytes=0 intercepted=true output.status=200: formerly within 5m: held'
expect "… and the rule matched on its temporal clause" \
	'# explain: permit post_after_get (line 27) matched: all 2 clauses held; the last, when clause 2 was true at `temporal { formerly within 5m (Box::Action::"http:request"::response{ input.host: "api.test", output.status: 200 }) }`'

# --json: the field "explain"
"$boxctl" policy eval --home /home/dev --explain --json "$t/p.dw" "$t/r.jsonl" >"$t/j.out" 2>/dev/null
check "--explain --json: one JSON line per request, no '#' lines" \
	test "$(grep -c '^{' "$t/j.out"):$(grep -c '^#' "$t/j.out")" = "$(wc -l <"$t/plain.out"):0"
python3 - "$t/j.out" >"$t/j.check" 2>&1 <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
def rule(i, name):
    return [r for r in lines[i]["explain"]["rules"] if r["rule"] == name][0]
r = rule(0, "read_p")
c = r["clauses"][0]
assert (r["effect"], r["line"], r["outcome"]) == ("permit", 3, "not_matched"), r
assert (c["clause"], c["kind"], c["value"], c["at"], c["line"], c["col"]) == \
    (1, "when", "false", 'context.input.path like "~/p/*"', 4, 8), c
assert c["detail"] == 'context.input.path is "~/q/a"', c
assert r["text"].startswith("permit read_p (line 3) did not match"), r
r = rule(3, "big_args")
assert r["outcome"] == "error" and r["clauses"][0]["value"] == "error", r
assert r["clauses"][0]["detail"] == "integer overflow", r
r = rule(6, "budget")
c = r["clauses"][0]
assert r["outcome"] == "matched" and c["temporal"] is True, r
assert [e["fields"].split()[0] for e in c["events"]] == ['path="~/p/3"', 'path="~/p/2"', 'path="~/p/1"'], c
e = c["events"][2]
assert (e["time"], e["time_ns"], e["kind"], e["action"]) == \
    ("1970-01-01T00:01:50.000000000Z", 110000000000, "request", "fs:write"), e
r = rule(8, "post_after_get")
c = r["clauses"][1]
assert r["outcome"] == "matched" and c["value"] == "true", r
assert any(e["kind"] == "response" and e["role"].endswith(": held") for e in c["events"]), c
assert lines[0]["explain"]["problem"] is None
print("fine")
EOF
check "--json: rules, clauses (at, line, col, value, detail), events, problem" grep -qx fine "$t/j.check" ||
	sed 's/^/#   /' "$t/j.check"

"$boxctl" policy eval --explain --bogus "$t/p.dw" </dev/null >/dev/null 2>"$t/u.err"
check "an unknown option: usage, exit 2" test "$?" = 2
check "… the usage names --explain" grep -q -- '--explain' "$t/u.err"
tap_done
