#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-log-filters.sh — `boxctl log NAME|ID` filters: --verdict, --action
# (exact, or a prefix ending in '*'), --since (RFC 3339, inclusive, or a duration back from
# now: 10m, 1h30m), --source, each alone and combined, in text and --json (outcome lines
# shown by --json unless --verdict asks for a verdict; never a "not a decision" warning
# for them), lines without time_ns judged by `time`; on a running box (its boxd hands
# over the files) and an ended one (its state dir); --follow with filters, across a
# rotation (decisions.jsonl renamed to .1, a new file); "no decision matches" on stderr
# (exit 0); bad filter values are usage errors (exit 2) that say what is expected.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
set -u

cd "$W"
B=$RB/boxctl
name=lf-box
mkdir proj
chmod 755 proj
echo 'permit (principal, action, resource);' >all.dw
{
	printf '[box]\nname = %s\npolicy = all.dw\n' "$name"
	printf '\n[agent]\ncommand = /bin/sleep 60\nworkspace = %s/proj\n' "$W"
} >"$name.ini"
chmod 644 all.dw "$name.ini"
id=$("$B" run -q -c "$name.ini" --detach 2>run.err)
if ! grep -qxE '[0-9a-f]{12}' <<<"$id"; then
	not_ok "the box starts"
	sed 's/^/# /' run.err
	tap_done
	exit 1
fi
S=$W/state/box/$name
for _ in $(seq 50); do [ -f "$S/decisions.jsonl" ] && break; sleep 0.1; done

now=$(date +%s)
# Relative windows (--since 50m, 100m, 12h30m, 15h, 30h) sit at least 40 minutes away from the
# lines' ages, so a loaded machine (a sanitizer build took 11 minutes for this test) running
# it for many minutes still sees the same lines in them.
# stamp SECONDS_AGO: the "time" and "time_ns" of a line that long ago.
stamp() {
	local t=$((now - $1))
	printf '"time":"%s","time_ns":%d%09d' "$(date -u -d "@$t" +%Y-%m-%dT%H:%M:%S.000Z)" "$t" 0
}
iso() { date -u -d "@$((now - $1))" +%Y-%m-%dT%H:%M:%S.000Z; }
# dline SECONDS_AGO VERDICT ACTION RESOURCE SOURCE RULE: a decision line as policyd writes it.
dline() {
	local rules='[]' cause=no_match
	[ -n "$6" ] && rules="[\"$6\"]"
	[ "$2" = permit ] && cause=permitted
	[ "$2" = deny ] && [ -n "$6" ] && cause=forbidden
	printf '{%s,"box":"%s","id":"%s","action":"%s","resource":"%s","verdict":"%s","cause":"%s","rules":%s,"message":"m","source":"%s","input":{}}\n' \
		"$(stamp "$1")" "$name" "$id" "$3" "$4" "$2" "$cause" "$rules" "$5"
}
{
	dline 72000 permit fs:read "~/a" box-shell fs_ok            # L1
	dline 36000 deny fs:write "~/b" box-shell ""                # L2
	dline 3000 deny net:connect "evil.test:443" box-gateway ""  # L3
	dline 600 permit http:request "ok.test:443/x" box-gateway ok # L4
	printf '{%s,"box":"%s","id":"%s","record":"response","action":"http:request","input":{"host":"ok.test"},"output":{"status":200},"source":"box-gateway"}\n' \
		"$(stamp 599)" "$name" "$id"                            # L5, an outcome
	dline 300 deny shell:exec rm box-shell no_rm                # L6
	# L7: an older line, no time_ns
	printf '{"time":"%s","box":"%s","id":"%s","action":"fs:read","resource":"~/c","verdict":"permit","cause":"permitted","rules":["fs_ok"],"message":"m","source":"supervisor","input":{}}\n' \
		"$(iso 200)" "$name" "$id"
} >lines.jsonl
cat lines.jsonl >>"$S/decisions.jsonl"
# L N...: the text lines of those log lines, as `boxctl log` prints them.
L() {
	local k
	for k in "$@"; do
		sed -n "${k}p" lines.jsonl | python3 -c '
import json, sys
o = json.loads(sys.stdin.read())
r = o["rules"]
print(o["time"], o["verdict"], o["action"], o["resource"] or "-", (r[0] if r else "-") + ("+%d" % (len(r) - 1) if len(r) > 1 else ""))'
	done
}
J() { local k; for k in "$@"; do sed -n "${k}p" lines.jsonl; done; }

# expect NAME WANT ARGS...: `boxctl log ARGS...` prints exactly WANT, exit 0, no warning.
expect() {
	local name=$1 want=$2
	shift 2
	"$B" log "$@" >got.out 2>got.err
	local rc=$?
	if [ "$rc" = 0 ] && [ "$(cat got.out)" = "$want" ] && ! grep -q 'not decisions' got.err; then
		ok "$name"
	else
		not_ok "$name"
		diag "exit $rc" "got:" "$(cat got.out got.err)" "want:" "$want"
	fi
}

for phase in running ended; do
	if [ "$phase" = ended ]; then
		"$B" stop "$id" >/dev/null 2>&1
		for _ in $(seq 50); do "$B" ps 2>/dev/null | grep -q "$id" || break; sleep 0.1; done
	fi
	p="$phase:"
	expect "$p no filter: every decision (the outcome line is not one: no warning)" \
		"$(L 1 2 3 4 6 7)" "$name"
	expect "$p --verdict deny" "$(L 2 3 6)" "$name" --verdict deny
	expect "$p --verdict permit" "$(L 1 4 7)" "$name" --verdict permit
	expect "$p --action fs:read (exact)" "$(L 1 7)" "$name" --action fs:read --since 30h
	expect "$p --action 'fs:*' (a prefix)" "$(L 1 2 7)" "$name" --action 'fs:*' --since 30h
	expect "$p --action shell:exec" "$(L 6)" "$name" --action shell:exec
	expect "$p --source box-gateway" "$(L 3 4)" "$name" --source box-gateway
	expect "$p --source supervisor (an older line without time_ns)" "$(L 7)" "$name" --source supervisor --since 50m
	expect "$p --since 100m (a duration)" "$(L 3 4 6 7)" "$name" --since 100m
	expect "$p --since 12h30m" "$(L 2 3 4 6 7)" "$name" --since 12h30m
	expect "$p --since RFC 3339 (inclusive: L4's own time)" "$(L 4 6 7)" "$name" --since "$(iso 600)"
	expect "$p --since with an offset (+02:00)" "$(L 4 6 7)" "$name" \
		--since "$(date -u -d "@$((now - 600 + 7200))" +%Y-%m-%dT%H:%M:%S+02:00)"
	expect "$p combined: --verdict deny --source box-shell --since 15h" "$(L 2 6)" \
		"$name" --verdict deny --source box-shell --since 15h
	expect "$p combined: --verdict permit --action 'http:*' --source box-gateway" "$(L 4)" \
		"$name" --verdict permit --action 'http:*' --source box-gateway
	expect "$p --json --verdict deny: the raw lines" "$(J 2 3 6)" "$name" --json --verdict deny
	expect "$p --json --source box-gateway: the outcome line too" "$(J 3 4 5)" \
		"$name" --json --source box-gateway
	expect "$p --json --action http:request --since 50m" "$(J 4 5)" "$name" --json --action http:request --since 50m
	expect "$p by run ID with a filter" "$(L 3)" "$id" --verdict deny --source box-gateway
	"$B" log "$name" --verdict deny --action mcp:call >none.out 2>none.err
	rc=$?
	check "$p nothing matches: exit 0 (rc $rc), nothing on stdout" bash -c "[ $rc = 0 ] && [ ! -s none.out ]"
	check "$p … 'no decision of box $name matches the filters' on stderr" \
		grep -qx "boxctl: no decision of box $name matches the filters" none.err
done

# --- bad filter values ---
"$B" log "$name" --verdict maybe >/dev/null 2>bad.err
rc=$?
check "--verdict maybe: exit 2 (rc $rc), 'expected permit or deny'" \
	bash -c "[ $rc = 2 ] && grep -q \"^boxctl: error: --verdict: expected permit or deny, got 'maybe'\" bad.err"
"$B" log "$name" --since 10x >/dev/null 2>bad.err
rc=$?
check "--since 10x: exit 2 (rc $rc), says what it takes" \
	bash -c "[ $rc = 2 ] && grep -q \"^boxctl: error: --since: expected an RFC 3339 time .* or a duration such as 10m, 2h or 1h30m, got '10x'\" bad.err"
"$B" log "$name" --since 2026-13-01T00:00:00Z >/dev/null 2>bad.err
rc=$?
check "--since with month 13: exit 2 (rc $rc)" test "$rc" = 2
"$B" log "$name" --source gateway >/dev/null 2>bad.err
rc=$?
check "--source gateway: exit 2 (rc $rc), names the four sources" \
	bash -c "[ $rc = 2 ] && grep -q 'expected box-shell, box-gateway, box-mcpd or supervisor' bad.err"
"$B" log "$name" --action >/dev/null 2>bad.err
rc=$?
check "--action without its value: usage (exit 2, rc $rc)" \
	bash -c "[ $rc = 2 ] && grep -q '^usage: boxctl log NAME|ID .*--verdict' bad.err"
out=$("$B" log --help 2>&1)
check "log --help names every filter" \
	grep -q -- '--verdict permit|deny\] \[--action A\] \[--since T\] \[--source D\]' <<<"$out"

# --- --follow with filters, across a rotation (the ended box: its state dir by name) ---
"$B" log -f "$name" --verdict deny --source box-shell >follow.out 2>follow.err &
fp=$!
sleep 0.6
dline 5 deny fs:delete "~/before" box-shell "" >>"$S/decisions.jsonl"
dline 5 permit fs:read "~/skipped" box-shell fs_ok >>"$S/decisions.jsonl"
sleep 0.6
mv "$S/decisions.jsonl" "$S/decisions.jsonl.1"
: >"$S/decisions.jsonl"
dline 1 deny shell:exec "curl" box-shell "" >>"$S/decisions.jsonl"
dline 1 deny net:connect "x.test:80" box-gateway "" >>"$S/decisions.jsonl"
sleep 0.8
kill -INT "$fp" 2>/dev/null
wait "$fp"
check "--follow --verdict deny --source box-shell: the old lines, then new ones across the rotation" \
	test "$(cut -d' ' -f4 follow.out | tr '\n' ' ')" = "~/b rm ~/before curl "
[ "$(cut -d' ' -f4 follow.out | tr '\n' ' ')" = "~/b rm ~/before curl " ] || diag "$(cat follow.out follow.err)"

tap_done
