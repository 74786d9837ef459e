#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-telemetry-file.sh — [telemetry.NAME] kind = file (docs/box.ini.5.md): a real box whose
# agent runs one permitted and one denied shell command writes OTLP-JSON lines to each
# target — every line one ExportLogsServiceRequest with the box.name / box.id resource,
# the control records policy.loaded, box.log.sealed and box.stopped, a box.policy.decision record of
# each verdict with its action, resource, rules and input fields — and a target with
# include = deny gets the deny alone. The file is opened as the box owner: as boxtest, a
# destination the owner cannot write (a root-only directory, a symlink to a root-only
# file) refuses the start naming box.ini's line and nothing of root's is touched;
# a directory or a FIFO as destination is refused; check takes an otlp target.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
set -u

cd "$W"
B=$RB/boxctl
mkdir proj
chmod 755 proj
cat >policy.cedar <<'EOF'
@id("builtins")
permit (principal, action == Box::Action::"shell:exec", resource)
when { ["echo", "true"].contains(context.input.program) };
@id("no_rm")
@description("rm is refused in this box")
forbid (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "rm" };
EOF
cat >proj/agent.py <<'EOF'
import subprocess
subprocess.run(["sh", "-c", "echo telemetry-agent-ran; rm -f nothing-here; true"])
EOF
chmod 644 policy.cedar proj/agent.py

# ini NAME TELEMETRY-SECTIONS: a box.ini for box NAME (the sections' text appended).
ini() {
	printf '[box]\nname = %s\npolicy = %s/policy.cedar\n\n[agent]\ncommand = /usr/bin/python3 agent.py\nworkspace = %s/proj\n\n[agent.filesystem]\nread = %s/proj\n\n%s\n' \
		"$1" "$W" "$W" "$W" "$2" >"$W/$1.ini"
	chmod 644 "$W/$1.ini"
}

name=tel-file-$$
ini "$name" "$(printf '[telemetry.all]\nkind = file\ndestination = %s/all.jsonl\n\n[telemetry.denies]\nkind = file\ndestination = %s/deny.jsonl\ninclude = deny\n' "$W" "$W")"
"$B" run -c "$W/$name.ini" >run.out 2>run.err
rc=$?
check "the box runs to its end (rc $rc)" test "$rc" -eq 0
[ "$rc" -eq 0 ] || diag "$(tail -n 15 run.err)"
check "the agent ran" grep -qx telemetry-agent-ran run.out
check "the disclosure names the file target" \
	grep -q "telemetry   all: OTLP-JSON lines to $W/all.jsonl (deny permit control kernel agent" run.err
check "the disclosure names the include = deny target" \
	grep -q "telemetry   denies: OTLP-JSON lines to $W/deny.jsonl (deny;" run.err
id=$(sed -n 's/.*"id":"\([0-9a-f]\{12\}\)".*/\1/p' "$W/state/box/$name/decisions.jsonl" | head -n 1)
check "the box's id is known from its decision log ($id)" test -n "$id"
check "the target is mode 0600" test "$(stat -c %a all.jsonl 2>/dev/null)" = 600

# summary FILE: one line per record: EVENT VERDICT-or-CONTROL-EVENT RESOURCE, after checking
# every line is one ExportLogsServiceRequest of this box (else "BAD ...").
summary() {
	python3 - "$1" "$name" "$id" <<'EOF'
import json, sys
path, name, bid = sys.argv[1:4]
for n, line in enumerate(open(path), 1):
    req = json.loads(line)
    rl = req["resourceLogs"]
    if len(rl) != 1:
        print("BAD resourceLogs", n); continue
    attrs = {a["key"]: a["value"] for a in rl[0]["resource"]["attributes"]}
    if attrs.get("box.name") != {"stringValue": name} or attrs.get("box.id") != {"stringValue": bid}:
        print("BAD resource", n, attrs); continue
    for sl in rl[0]["scopeLogs"]:
        if sl["scope"]["name"] != "box":
            print("BAD scope", n)
        for r in sl["logRecords"]:
            a = {x["key"]: x["value"] for x in r["attributes"]}
            int(r["timeUnixNano"])
            if r["eventName"] == "box.policy.decision":
                sev = "WARN" if a["box.verdict"]["stringValue"] == "deny" else "INFO"
                ok = r["severityText"] == sev and a["box.source"] == {"stringValue": "box-shell"}
                print("decision", a["box.verdict"]["stringValue"], a["box.action"]["stringValue"],
                      a["box.resource"]["stringValue"],
                      a.get("box.rules", {}).get("stringValue", "-"),
                      a.get("box.input.program", {}).get("stringValue", "-"),
                      "ok" if ok else "BAD-severity-or-source")
            else:
                print(r["eventName"], a["box.control.event"]["stringValue"])
EOF
}
summary all.jsonl >all.sum 2>all.py-err
check "every line of the target is an OTLP-JSON export request of this box" \
	sh -c '! grep -q BAD all.sum && test ! -s all.py-err && test -s all.sum'
diag "$(cat all.sum all.py-err)"
check "control: policy.loaded" grep -qx 'box.control policy.loaded' all.sum
check "a permit decision with its rule and input" \
	grep -qx 'decision permit shell:exec echo builtins echo ok' all.sum
check "a deny decision with its rule and input" grep -qx 'decision deny shell:exec rm no_rm rm ok' all.sum
check "control: box.stopped, the last record" test "$(tail -n 1 all.sum)" = 'box.control box.stopped'
# The decision log's sealed head (docs/boxctl.1.md "The chain"): the seal line's SHA-256.
seal_head=$(tail -n 1 "$W/state/box/$name/decisions.jsonl" | tr -d '\n' | sha256sum | cut -d' ' -f1)
check "control: box.log.sealed, before box.stopped" \
	test "$(tail -n 2 all.sum | head -n 1)" = 'box.control box.log.sealed'
check "control: box.log.sealed carries the head of decisions.jsonl (its seal line's SHA-256)" \
	grep -q "\"key\":\"box.log.head\",\"value\":{\"stringValue\":\"$seal_head\"}" all.jsonl
summary deny.jsonl >deny.sum 2>&1
check "include = deny: the deny decision alone" \
	test "$(cat deny.sum)" = 'decision deny shell:exec rm no_rm rm ok'
check "the deny's message is the record's body" \
	grep -q '"body":{"stringValue":"policy denied this operation on '"'"'rm'"'"' \[policy: no_rm\]: rm is refused in this box."}' deny.jsonl

# A second run appends (the file is the owner's log, never truncated).
lines=$(wc -l <all.jsonl)
"$B" run -q -c "$W/$name.ini" >/dev/null 2>run2.err
check "a second run appends to the target" test "$(wc -l <all.jsonl)" -gt "$lines"

# Refusals. bad NAME DEST-SECTION-TEXT PATTERN WHAT [USER]
bad() {
	ini "$1" "$2"
	local u=${5:-$(id -un)}
	AS_USER_DIR=$W as_user "$u" "'$B' run -q -c '$W/$1.ini'" >"$1.out" 2>"$1.err"
	local r=$?
	check "$4: refused (rc $r)" test "$r" -ne 0
	check "$4: the refusal names the destination" grep -q "$3" "$1.err"
	grep -q "$3" "$1.err" || diag "$(cat "$1.err")"
}
mkdir adir
mkfifo afifo
bad "tel-dir-$$" "$(printf '[telemetry.d]\nkind = file\ndestination = %s/adir\n' "$W")" \
	"$W/tel-dir-$$.ini:14: \[telemetry.d\] destination: $W/adir: Is a directory" "a directory"
bad "tel-fifo-$$" "$(printf '[telemetry.f]\nkind = file\ndestination = %s/afifo\n' "$W")" \
	"\[telemetry.f\] destination: $W/afifo: No such device or address" "a FIFO nobody reads"
printf '[box]\nname = tel-otlp-%s\n\n[agent]\ncommand = /bin/true\n\n[telemetry.c]\nkind = otlp\ndestination = http://127.0.0.1:4318\n' "$$" >"$W/tel-otlp-$$.ini"
"$B" check -c "$W/tel-otlp-$$.ini" >otlp-check.out 2>&1
check "check takes an otlp target (t-telemetry-otlp.sh exports to one)" \
	sh -c "! grep -q 'not served yet' otlp-check.out"

if [ "$(id -u)" -eq 0 ] && have_boxtest; then
	mkdir rootonly
	chmod 700 rootonly
	echo root-data >rootonly/secret
	chmod 600 rootonly/secret
	ln -s "$W/rootonly/secret" link-to-root
	chown boxtest: proj proj/agent.py
	bad "tel-perm-$$" "$(printf '[telemetry.p]\nkind = file\ndestination = %s/rootonly/x.jsonl\n' "$W")" \
		"\[telemetry.p\] destination: $W/rootonly/x.jsonl: Permission denied" \
		"boxtest: a destination in a root-only directory" boxtest
	check "boxtest: nothing was created there" test ! -e rootonly/x.jsonl
	bad "tel-link-$$" "$(printf '[telemetry.l]\nkind = file\ndestination = %s/link-to-root\n' "$W")" \
		"\[telemetry.l\] destination: $W/link-to-root: Permission denied" \
		"boxtest: a symlink to a root-only file" boxtest
	check "boxtest: the root-only file is untouched" test "$(cat rootonly/secret)" = root-data
else
	skip "as boxtest" "needs root and the boxtest user"
fi
tap_done
