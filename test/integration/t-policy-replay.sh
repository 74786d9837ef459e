#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-policy-replay.sh — `boxctl policy replay` on the decision log of a real box:
# a box whose gateway decides net:connect and http:request (curl through
# box-gateway to a loopback HTTPS server) and records each response with its status,
# plus a box-sh session (shell:exec, fs:*), replayed against the policy that made them
# (nothing changes, exit 0), a stricter and a looser policy (the exact changed lines,
# the summary, exit 3), temporal rules over the same timeline (a `::response` condition
# that holds only after the recorded response, a write budget the old policy did not
# have), both rotated files (.1 first, one timeline), a running box (its boxd hands the
# files over) and an ended one (its state dir), a run ID, --json, older lines without
# time_ns, an MCP tool whose schema is gone, and bad input (a line that is not JSON, a
# truncated last line, a line of another box) reported with file and line, exit 2.
# Item 1: every line of the box's log carries time_ns, each recorded outcome is a line
# with record and output, and no line holds the secret or a body.
# Trusts: nothing; test code. Packets only to 127.0.0.1.
. test/lib.sh
. test/integration/lib-run.sh
. test/servers/lib-servers.sh
set -u
trap 'stop_all; run_cleanup' EXIT
boxsh=$(cd "$BOX_BIN" && pwd)/box-sh

cd "$W"
B=$RB/boxctl
# strip_time FILE: FILE without the TIME column of the changed lines (the summary kept).
strip_time() { sed -E 's/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z //' "$1"; }
# expect NAME WANT_RC RC OUT WANT: ok when RC is WANT_RC and OUT (times stripped) is WANT.
expect() {
	strip_time "$4" >"$4.cut"
	if [ "$3" = "$2" ] && cmp -s "$4.cut" "$5"; then
		ok "$1"
	else
		not_ok "$1"
		diag "exit $3, output:" "$(cat "$4")"
	fi
}
name=rpl-gw
state=$XDG_STATE_HOME/box/$name

make_ca ok.rpl.test no.rpl.test || { not_ok "test CA (mkca.sh)"; tap_done; exit 1; }
chmod 644 "$SRV_CA"
start_httpd --tls || { not_ok "httpd.py --tls starts"; tap_done; exit 1; }
port=$HTTPD_PORT
printf '127.0.0.1 ok.rpl.test no.rpl.test\n' >hosts
cp "$SRV_CA" upstream-ca.pem

# The policy the box runs: connections to ok.rpl.test, GET requests to it.
cat >old.dw <<'EOF'
@id("ok_connect")
permit (principal, action == Box::Action::"net:connect", resource)
when { context.input.host == "ok.rpl.test" };

@id("ok_get")
permit (principal, action == Box::Action::"http:request", resource)
when { context.input.host == "ok.rpl.test" && context.input.method == "GET" };
EOF
# Stricter: only GET /echo.
cat >strict.dw <<'EOF'
@id("ok_connect")
permit (principal, action == Box::Action::"net:connect", resource)
when { context.input.host == "ok.rpl.test" };

@id("echo_only")
permit (principal, action == Box::Action::"http:request", resource)
when { context.input.host == "ok.rpl.test" && context.input.method == "GET" && context.input.path == "/echo" };
EOF
# Looser: any host, any method.
cat >loose.dw <<'EOF'
@id("any_connect")
permit (principal, action == Box::Action::"net:connect", resource);

@id("any_request")
permit (principal, action == Box::Action::"http:request", resource);
EOF
# Temporal: /gzip only after a 200 response of /echo (an outcome the gateway recorded).
cat >resp.dw <<'EOF'
@id("ok_connect")
permit (principal, action == Box::Action::"net:connect", resource)
when { context.input.host == "ok.rpl.test" };

@id("ok_get")
permit (principal, action == Box::Action::"http:request", resource)
when { context.input.host == "ok.rpl.test" && context.input.method == "GET" };

@id("gzip_after_echo")
forbid (principal, action == Box::Action::"http:request", resource)
when { context.input.path == "/gzip" }
unless temporal {
    formerly within 1h Box::Action::"http:request"::response{ input.path: "/echo", output.status: 200 }
};
EOF

# The agent: the requests of the session, in order, then it sleeps until stopped.
cat >agent.py <<EOF
#!/usr/bin/python3
import subprocess, sys, time
def c(*args):
    r = subprocess.run(["/usr/bin/curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}",
                        "--max-time", "20"] + list(args), capture_output=True, text=True)
    print(r.stdout.strip() or "000", flush=True)
base = "https://ok.rpl.test:$port"
c(base + "/gzip")
c(base + "/echo")
c(base + "/gzip")
c("-X", "POST", base + "/echo")
c("https://no.rpl.test:$port/echo")
print("sleeping", flush=True)
time.sleep(60)
EOF
chmod 755 agent.py
cat >box.ini <<EOF
[box]
name = $name
policy = old.dw

[agent]
command = $W/agent.py
workspace = $W

[agent.filesystem]
exec = /usr/bin/curl

[egress.api]
destinations = api.rpl.test
secret = env://RPL_TEST_SECRET
header = x-api-key
placeholder_prefix = sk-rpl-

[gateway]
hosts_file = $W/hosts
upstream_ca = $W/upstream-ca.pem
allow_host_loopback = true
EOF
chmod 644 hosts upstream-ca.pem old.dw box.ini

RPL_TEST_SECRET=s3cr3t-rpl-value "$B" run -q -c box.ini >agent.out 2>agent.err &
bp=$!
if ! wait_for agent.out sleeping; then
	not_ok "the box runs its session"
	sed 's/^/# /' agent.err
	kill "$bp" 2>/dev/null
	tap_done
	exit 1
fi
check "the session: /gzip 200, /echo 200, /gzip 200, POST 403, no.rpl.test refused" \
	test "$(head -5 agent.out | tr '\n' ' ')" = "200 200 200 403 000 "
# Give box-policyd's log flush (10 ms) a moment, then replay the running box.
for _ in $(seq 50); do
	[ "$(grep -c '"verdict"' "$state/decisions.jsonl" 2>/dev/null)" -ge 6 ] && break
	sleep 0.1
done
"$B" policy replay strict.dw "$name" >running.out 2>running.err
running_rc=$?
"$B" stop "$name" >/dev/null 2>&1
wait "$bp"

log=$state/decisions.jsonl
n=$(grep -c '"verdict"' "$log")
diag "the box's log: $n decisions, $(grep -c '"record"' "$log") outcome lines"

# --- item 1: what the log carries ---
check "every line has time_ns (an integer)" \
	test "$(grep -c '"time_ns":[0-9]\{19\},' "$log")" = "$(wc -l <"$log")"
check "time_ns never goes back" \
	awk -F'"time_ns":' '{ split($2, a, ","); if (a[1] + 0 < last) exit 1; last = a[1] + 0 }' "$log"
check "the three 200 responses: recorded http:request lines with their status" \
	test "$(grep -c '"record":"response","action":"http:request","input":{[^}]*},"output":{"status":200},"source":"box-gateway"' "$log")" = 3
check "… and the net:connect outcomes" grep -q '"record":"response","action":"net:connect"' "$log"
check "an outcome line has no verdict, a decision line no record" \
	test "$(grep -c '"record".*"verdict"\|"verdict".*"record"' "$log")" = 0
check "no line holds the secret, the placeholder or a body" \
	test "$(grep -c 's3cr3t-rpl-value\|sk-rpl-\|"body"' "$log")" = 0

# --- the running box: its boxd hands the files over ---
check "replay of the running box by name (exit 3, rc $running_rc)" test "$running_rc" = 3

# --- the same policy: nothing changes ---
"$B" policy replay old.dw "$name" >same.out 2>same.err
rc=$?
check "replay under the box's own policy: exit 0 (rc $rc)" test "$rc" = 0
check "… '$n decisions, 0 now denied, 0 now permitted, $n unchanged' and nothing else" \
	test "$(cat same.out)" = "$n decisions, 0 now denied, 0 now permitted, $n unchanged"
check "… nothing on stderr" test ! -s same.err

# --- stricter ---
"$B" policy replay strict.dw "$name" >strict.out 2>strict.err
rc=$?
check "stricter policy: exit 3 (rc $rc)" test "$rc" = 3
strip_time strict.out >strict.cut
printf '%s\n' "http:request ok.rpl.test:$port/gzip permit → deny -" \
	"http:request ok.rpl.test:$port/gzip permit → deny -" \
	"$n decisions, 2 now denied, 0 now permitted, $((n - 2)) unchanged" >strict.want
check "… exactly the two /gzip requests, permit → deny, then the summary" cmp -s strict.cut strict.want
[ -f strict.want ] && ! cmp -s strict.cut strict.want && diag "$(cat strict.out)"
check "… each line starts with its time (RFC 3339 UTC, milliseconds)" \
	test "$(grep -cE '^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z ' strict.out)" = 2
check "… the running box's replay said the same" cmp -s running.out strict.out

# --- looser ---
"$B" policy replay loose.dw "$name" >loose.out 2>loose.err
rc=$?
check "looser policy: exit 3 (rc $rc)" test "$rc" = 3
strip_time loose.out >loose.cut
printf '%s\n' "http:request ok.rpl.test:$port/echo deny → permit any_request" \
	"net:connect no.rpl.test:$port deny → permit any_connect" \
	"$n decisions, 0 now denied, 2 now permitted, $((n - 2)) unchanged" >loose.want
check "… exactly the POST and the connection to no.rpl.test, deny → permit" cmp -s loose.cut loose.want
! cmp -s loose.cut loose.want && diag "$(cat loose.out)"

# --- temporal: a ::response condition over the recorded outcomes ---
"$B" policy replay resp.dw "$name" >resp.out 2>resp.err
rc=$?
check "::response condition: exit 3 (rc $rc)" test "$rc" = 3
strip_time resp.out >resp.cut
printf '%s\n' "http:request ok.rpl.test:$port/gzip permit → deny gzip_after_echo" \
	"$n decisions, 1 now denied, 0 now permitted, $((n - 1)) unchanged" >resp.want
check "… only the /gzip before /echo's 200 response is now denied (the outcome was replayed)" \
	cmp -s resp.cut resp.want
! cmp -s resp.cut resp.want && diag "$(cat resp.out)"

# --- both rotated files: .1 first, one timeline ---
mkdir -p "$XDG_STATE_HOME/box/rpl-rot"
# Split between /echo's response and the second /gzip, as a rotation would.
cut_at=$(grep -n '"record":"response","action":"http:request","input":{[^}]*"path":"/echo"' "$log" | head -1 | cut -d: -f1)
head -n "$cut_at" "$log" | sed 's/"box":"rpl-gw"/"box":"rpl-rot"/' >"$XDG_STATE_HOME/box/rpl-rot/decisions.jsonl.1"
tail -n +"$((cut_at + 1))" "$log" | sed 's/"box":"rpl-gw"/"box":"rpl-rot"/' >"$XDG_STATE_HOME/box/rpl-rot/decisions.jsonl"
"$B" policy replay resp.dw rpl-rot >rot.out 2>rot.err
rc=$?
check "rotated log (.1 then current): the same lines as from one file (rc $rc)" \
	bash -c "[ $rc = 3 ] && cmp -s rot.out resp.out"
"$B" policy replay resp.dw "$XDG_STATE_HOME/box/rpl-rot/decisions.jsonl" >cur-only.out 2>&1
check "… the current file alone lacks /echo's response: there the second /gzip is denied" \
	bash -c "grep -q '/gzip permit → deny gzip_after_echo' cur-only.out && [ \"\$(head -1 cur-only.out | cut -d' ' -f1)\" != \"\$(head -1 resp.out | cut -d' ' -f1)\" ]"

# --- a run ID ---
id=$(sed -n 's/.*"id":"\([0-9a-f]\{12\}\)".*/\1/p' "$log" | head -1)
"$B" policy replay strict.dw "$id" >id.out 2>id.err
rc=$?
check "replay by run ID $id: the same lines (rc $rc)" bash -c "[ $rc = 3 ] && cmp -s id.out strict.out"

# --- --json ---
"$B" policy replay --json strict.dw "$name" >json.out 2>json.err
rc=$?
check "--json: exit 3 (rc $rc)" test "$rc" = 3
check "--json: one object per changed decision with old and new, then the summary" python3 - json.out "$n" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
n = int(sys.argv[2])
*changes, summary = rows
assert len(changes) == 2, rows
for c in changes:
    assert c["action"] == "http:request" and c["resource"].endswith("/gzip"), c
    assert c["old"] == {"verdict": "permit", "cause": "permitted", "rules": ["ok_get"]}, c
    assert c["new"]["verdict"] == "deny" and c["new"]["cause"] == "no_match", c
    assert c["new"]["message"].startswith("policy denied this operation on 'ok.rpl.test:"), c
    assert isinstance(c["time_ns"], int) and c["line"] > 0 and c["file"].endswith("decisions.jsonl"), c
assert summary == {"decisions": n, "now_denied": 2, "now_permitted": 0, "unchanged": n - 2,
                   "schema_gone": 0, "refused_lines": 0}, summary
EOF

# --- older lines: no time_ns, `time` (milliseconds) is used ---
sed 's/"time_ns":[0-9]*,//' "$log" >old-format.jsonl
"$B" policy replay resp.dw old-format.jsonl >oldfmt.out 2>&1
check "lines without time_ns replay from \"time\": the same lines" \
	test "$(strip_time oldfmt.out)" = "$(cat resp.want)"

# --- box-sh: shell commands and file operations ---
mkdir -p shhome/p
chmod -R 755 shhome
cat >sh-old.dw <<'EOF'
@id("exec_ok")
permit (principal, action == Box::Action::"shell:exec", resource);

@id("project")
permit (principal, action in [Box::Action::"fs:read", Box::Action::"fs:write", Box::Action::"fs:delete"], resource)
when { context.input.path == "~/p" || context.input.path like "~/p/*" };
EOF
cat >sh-strict.dw <<'EOF'
@id("exec_ok")
permit (principal, action == Box::Action::"shell:exec", resource);

@id("project")
permit (principal, action in [Box::Action::"fs:read", Box::Action::"fs:write", Box::Action::"fs:delete"], resource)
when { context.input.path == "~/p" || context.input.path like "~/p/*" };

@id("no_rm")
forbid (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "rm" };
EOF
cat >sh-loose.dw <<'EOF'
@id("exec_ok")
permit (principal, action == Box::Action::"shell:exec", resource);

@id("read_all")
permit (principal, action == Box::Action::"fs:read", resource);

@id("project")
permit (principal, action in [Box::Action::"fs:write", Box::Action::"fs:delete"], resource)
when { context.input.path == "~/p" || context.input.path like "~/p/*" };
EOF
# A write budget the old policy did not have: two completed writes a minute.
cat >sh-budget.dw <<'EOF'
@id("exec_ok")
permit (principal, action == Box::Action::"shell:exec", resource);

@id("project")
permit (principal, action in [Box::Action::"fs:read", Box::Action::"fs:write", Box::Action::"fs:delete"], resource)
when { context.input.path == "~/p" || context.input.path like "~/p/*" };

@id("write_budget")
forbid (principal, action == Box::Action::"fs:write", resource)
when temporal {
    exists (total: Long). (
        (count for (t: Timepoint). where (
            formerly within 60s (Box::Action::"fs:write"::response{ input.path: _ } && tp(t))
        )) == total
        && total >= 2
    )
};
EOF
HOME=$W/shhome "$boxsh" --policy sh-old.dw --home "$W/shhome" --decisions sh.jsonl \
	-c 'cd ~/p; echo 1 > a; echo 2 > b; echo 3 > c; cat a; rm c; cat /etc/hostname' >sh.out 2>sh.err
sn=$(grep -c '"verdict"' sh.jsonl)
check "box-sh: the session ran ($sn decisions; /etc/hostname refused)" \
	bash -c "[ $sn -gt 10 ] && grep -q 'box-shell: cat' sh.err"
check "box-sh's log: time_ns on every line, its outcomes as record lines" \
	bash -c "[ \$(grep -c '\"time_ns\":' sh.jsonl) = \$(wc -l <sh.jsonl) ] && grep -q '\"record\":\"response\",\"action\":\"fs:write\"' sh.jsonl"
"$B" policy replay --home "$W/shhome" sh-old.dw sh.jsonl >sh-same.out 2>&1
rc=$?
check "box-sh log, its own policy: nothing changes (rc $rc)" \
	bash -c "[ $rc = 0 ] && [ \"\$(cat sh-same.out)\" = '$sn decisions, 0 now denied, 0 now permitted, $sn unchanged' ]"
"$B" policy replay --home "$W/shhome" sh-strict.dw sh.jsonl >sh-strict.out 2>&1
rc=$?
printf '%s\n' "shell:exec rm permit → deny no_rm" \
	"$sn decisions, 1 now denied, 0 now permitted, $((sn - 1)) unchanged" >sh-strict.want
expect "box-sh log, stricter (no rm): exactly rm, permit → deny, exit 3" 3 "$rc" sh-strict.out sh-strict.want
"$B" policy replay --home "$W/shhome" sh-loose.dw sh.jsonl >sh-loose.out 2>&1
rc=$?
printf '%s\n' "fs:read /etc/hostname deny → permit read_all" \
	"$sn decisions, 0 now denied, 1 now permitted, $((sn - 1)) unchanged" >sh-loose.want
expect "box-sh log, looser (read anything): exactly /etc/hostname, deny → permit, exit 3" 3 "$rc" sh-loose.out sh-loose.want
"$B" policy replay --home "$W/shhome" sh-budget.dw sh.jsonl >sh-budget.out 2>&1
rc=$?
printf '%s\n' "fs:write ~/p/c permit → deny write_budget" \
	"$sn decisions, 1 now denied, 0 now permitted, $((sn - 1)) unchanged" >sh-budget.want
expect "a write budget the old policy lacked: the third write now denied, from an empty history" 3 "$rc" sh-budget.out sh-budget.want
grep -v '"record"' sh.jsonl >sh-norecord.jsonl
"$B" policy replay --home "$W/shhome" sh-budget.dw sh-norecord.jsonl >sh-norec.out 2>&1
check "… without the outcome lines the budget never fills (the responses are what it counts)" \
	grep -q "0 now denied" sh-norec.out

# --- a box log and a box-sh log in one replay (box-sh's lines belong to no box) ---
cat old.dw sh-strict.dw >both.dw
"$B" policy replay both.dw "$name" sh.jsonl >both.out 2>&1
rc=$?
check "box log + box-sh log: one replay, rm now denied (rc $rc)" \
	bash -c "[ $rc = 3 ] && grep -q 'shell:exec rm permit → deny no_rm' both.out && grep -q '^$((n + sn)) decisions, 1 now denied' both.out"

# --- an MCP tool whose schema is gone ---
tool='{"time":"2030-03-17T17:46:40.000Z","time_ns":1900000000000000000,"box":"rpl-gw","id":"'$id'","action":"github::Action::\"create_issue\"","resource":"github/create_issue","verdict":"permit","cause":"permitted","rules":["gh"],"message":"m","source":"box-mcpd","input":{"title":"x"}}'
{ cat "$log"; echo "$tool"; } >mcp.jsonl
"$B" policy replay old.dw mcp.jsonl >mcp.out 2>&1
rc=$?
printf '%s\n' 'github::Action::"create_issue" github/create_issue permit → schema gone (no schema line declares this tool)' \
	"$((n + 1)) decisions, 0 now denied, 0 now permitted, $n unchanged, 1 whose schema is gone" >mcp.want
expect "an MCP tool no schema line declares: 'schema gone', counted apart, exit 3" 3 "$rc" mcp.out mcp.want
schema='{"schema":"github","actions":{"create_issue":{"title":"String"}}}'
printf '%s\n' '@id("gh")' 'permit (principal, action == github::Action::"create_issue", resource);' >gh.dw
cat old.dw gh.dw >mcp.dw
{ echo "$schema"; cat mcp.jsonl; } >mcp2.jsonl
"$B" policy replay mcp.dw mcp2.jsonl >mcp2.out 2>&1
rc=$?
check "… with the tool declared by a schema line it is re-decided (unchanged, rc $rc)" \
	bash -c "[ $rc = 0 ] && grep -q '^$((n + 1)) decisions, 0 now denied, 0 now permitted, $((n + 1)) unchanged$' mcp2.out"

# --- bad input: clear messages naming the file and line, exit 2 ---
{ head -3 "$log"; echo 'this is not JSON'; tail -n +4 "$log"; } >bad1.jsonl
"$B" policy replay old.dw bad1.jsonl >bad1.out 2>bad1.err
rc=$?
check "a line that is not JSON: exit 2 (rc $rc)" test "$rc" = 2
check "… 'boxctl: bad1.jsonl:4: not JSON: …'" grep -q '^boxctl: bad1.jsonl:4: not JSON: expected an object at column 1$' bad1.err
check "… the other lines are still replayed and counted" grep -q "^$n decisions, 0 now denied" bad1.out
check "… and the replay says it is incomplete" grep -q '1 line refused' bad1.err
{ cat "$log"; head -1 "$log" | head -c 150; } >bad2.jsonl
last=$(($(wc -l <"$log") + 1))
"$B" policy replay old.dw bad2.jsonl >bad2.out 2>bad2.err
rc=$?
check "a truncated last line: exit 2, 'bad2.jsonl:$last: truncated last line …' (rc $rc)" \
	bash -c "[ $rc = 2 ] && grep -q '^boxctl: bad2.jsonl:$last: truncated last line (the file ends without its newline): not JSON: ' bad2.err"
other=$(head -1 "$log" | sed 's/"box":"rpl-gw","id":"[0-9a-f]*"/"box":"other-box","id":"abcdefabcdef"/')
{ head -2 "$log"; echo "$other"; tail -n +3 "$log"; } >bad3.jsonl
"$B" policy replay old.dw bad3.jsonl >bad3.out 2>bad3.err
rc=$?
check "a line of another box mixed in: exit 2 (rc $rc)" test "$rc" = 2
check "… 'bad3.jsonl:3: a line of box 'other-box' (run abcdefabcdef) in a log of box 'rpl-gw''" \
	grep -q "^boxctl: bad3.jsonl:3: a line of box 'other-box' (run abcdefabcdef) in a log of box 'rpl-gw' (one box per replay)$" bad3.err
check "… the box's own lines are all replayed" grep -q "^$n decisions, 0 now denied" bad3.out
"$B" policy replay old.dw "$name" bad3.jsonl >bad4.out 2>bad4.err
check "… also when the box is named and its log comes first" \
	grep -q "^boxctl: bad3.jsonl:3: a line of box 'other-box'" bad4.err
printf '{"action":"fs:read","verdict":"permit","time_ns":1,"input":{"path":"~/x","operation":"read_content"},"input":{}}\n{"action":"fs:frob","verdict":"permit","time_ns":2}\n{"action":"fs:read","verdict":"maybe","time_ns":3}\n{"action":"fs:read","verdict":"deny"}\n' >bad5.jsonl
"$B" policy replay old.dw bad5.jsonl >bad5.out 2>bad5.err
check "a repeated key, an unknown action, a bad verdict, no time: each named with its line" \
	test "$(cat bad5.err | head -4)" = "boxctl: bad5.jsonl:1: \"input\" appears twice
boxctl: bad5.jsonl:2: unknown action \"fs:frob\"
boxctl: bad5.jsonl:3: \"verdict\" must be \"permit\" or \"deny\"
boxctl: bad5.jsonl:4: no \"time_ns\" or \"time\""
"$B" policy replay old.dw no-such-box >nb.out 2>nb.err
rc=$?
check "a box with no log: exit 1 with a message" \
	bash -c "[ $rc = 1 ] && grep -q \"^boxctl: error: no decisions of a box 'no-such-box'\" nb.err"
"$B" policy replay old.dw 'bad name!' >/dev/null 2>bn.err
rc=$?
check "neither a name, an id nor a path: usage error (rc $rc)" test "$rc" = 2
printf 'permit (principal, action == Box::Action::"fs:nope", resource);\n' >broken.dw
"$B" policy replay broken.dw "$name" >/dev/null 2>broken.err
rc=$?
check "a candidate that does not load: exit 2 with its error (rc $rc)" \
	bash -c "[ $rc = 2 ] && grep -q '^boxctl: broken.dw:1:' broken.err"
: >empty.jsonl
"$B" policy replay old.dw empty.jsonl >empty.out 2>&1
rc=$?
check "an empty log: '0 decisions, …', exit 0 (rc $rc)" \
	bash -c "[ $rc = 0 ] && [ \"\$(cat empty.out)\" = '0 decisions, 0 now denied, 0 now permitted, 0 unchanged' ]"

# --- the lean reader: JSON escapes decode to jansson's values, malformed text is named ---
cat >esc.dw <<'EOF'
@id("odd_name")
permit (principal, action == Box::Action::"fs:read", resource)
when { context.input.path == "~/é q😀/x" };
EOF
pre='{"time_ns":1,"box":"rpl-esc","id":"0123456789ab","action":"fs:read","resource":"r","verdict":"deny","input":{"operation":"read_content","path":'
{
	printf '%s"~/\\u00e9 q\\ud83d\\ude00/x"}}\n' "$pre"    # \u escapes, a surrogate pair
	printf '%s"~/é q😀/x"}}\n' "$pre"                      # raw UTF-8
	printf '%s"~\\/\\u00E9 q\\uD83D\\uDE00\\/x"}}\n' "$pre" # \/ and upper-case hex
	printf '%s"~/\\u00e9 q\\ud83d/x"}}\n' "$pre"           # 4: a lone surrogate
	printf '%s"~/\t"}}\n' "$pre"                            # 5: a raw tab
	printf '%s"~/\xff"}}\n' "$pre"                          # 6: not UTF-8
	printf '{"time_ns":99999999999999999999,"action":"fs:read","verdict":"deny"}\n'
	printf '{"time_ns":01,"action":"fs:read","verdict":"deny"}\n'
	printf '%s"~/a"}} x\n' "$pre"                           # 9
	printf '%s"~/a\\q"}}\n' "$pre"                          # 10
	printf '{"sch\\u0065ma":"x","actions":{}}\n'            # 11
	printf '%s"~/a","n":1.5}}\n' "$pre"                     # 12
} >esc.jsonl
"$B" policy replay esc.dw esc.jsonl >esc.out 2>esc.err
rc=$?
printf '%s\n' "fs:read r deny → permit odd_name" "fs:read r deny → permit odd_name" \
	"fs:read r deny → permit odd_name" "3 decisions, 0 now denied, 3 now permitted, 0 unchanged" >esc.want
expect "escapes, surrogate pairs, raw UTF-8: the path the policy names (3 now permitted; exit 2 for the rest)" \
	2 "$rc" esc.out esc.want
printf '%s\n' 'boxctl: esc.jsonl:4: not JSON: a lone surrogate in a \u escape at column 161' \
	'boxctl: esc.jsonl:5: not JSON: a control character in a string at column 147' \
	'boxctl: esc.jsonl:6: not JSON: a string that is not UTF-8 at column 148' \
	'boxctl: esc.jsonl:7: "time_ns" is out of range' \
	'boxctl: esc.jsonl:8: not JSON: a number with a leading zero at column 12' \
	'boxctl: esc.jsonl:9: not JSON: text after the object at column 152' \
	'boxctl: esc.jsonl:10: not JSON: an unknown escape at column 149' \
	"boxctl: esc.jsonl:11: a schema line's \"schema\" key must be written plainly" \
	'boxctl: esc.jsonl:12: field "n": numbers must be integers' \
	'boxctl: error: 9 lines refused (see above); the replay is incomplete' >esc.errwant
check "… each malformed line named with its line and column" cmp -s esc.err esc.errwant
cmp -s esc.err esc.errwant || diag "$(cat esc.err)"

tap_done
