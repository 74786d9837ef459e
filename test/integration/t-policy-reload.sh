#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-policy-reload.sh — `boxctl policy reload NAME [FILE]` on real running boxes
# (docs/boxctl.1.md), as the caller and, under root, as the ordinary user boxtest:
#   - a file that does not load is refused with its file, line and what; the policy in
#     force stays (the agent's next decision still follows it);
#   - a reload puts the next generation in force while the agent runs: a temporal rule
#     whose text is unchanged keeps its history (it still remembers a `seq` run under
#     generation 1), an edited one starts empty;
#   - box-shell's decisions made in process follow it within one running shell process
#     (a read denied under generation 1 is permitted under generation 2, and the reverse);
#   - each reload is a control line of decisions.jsonl, and `boxctl log` shows them.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
. test/integration/lib-shell.sh
set -u
cd "$W"

require_shell_built

# POLICY NAME EDITED SECRET: a permit, a forbid of reads of SECRET, and two temporal rules
# over `seq`: "kept" (the same text in both generations) and "edited" (its window differs).
policy() {
	cat <<EOF
permit (principal, action, resource);
@id("secret")
forbid (principal, action == Box::Action::"fs:read", resource)
when { context.input.path like "*/$3" };
@id("kept")
forbid (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "head" &&
       temporal { formerly within 1h Box::Action::"shell:exec"::request{ input.program: "seq" } } };
@id("edited")
forbid (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "wc" &&
       temporal { formerly within $2 Box::Action::"shell:exec"::request{ input.program: "seq" } } };
EOF
}

for u in $(shell_users); do
	D=$(user_dir "$u")
	P=$D/proj
	mkdir -p "$P"
	echo one >"$P/s1"
	echo two >"$P/s2"
	chown -R "$u" "$P"
	policy g1 1h s1 >"$D/g1.cedar"
	policy g2 2h s2 >"$D/g2.cedar"
	printf 'permit (principal, action, resource);\nforbid (principal, action, resource)\nwhen { context.input.nope == };\n' >"$D/bad.cedar"
	# Loads here (an MCP namespace boxctl cannot know), not in the box (no such server).
	printf 'permit (principal, action, resource);\nforbid (principal, action == Ghost::Action::"x", resource);\n' >"$D/ghost.cedar"
	chmod 644 "$D"/*.cedar
	name=e2e-reload-$u-$$
	# The agent: one shell process that reads both files, waits for the test's reload,
	# reads both again; then a new process runs head and wc (the temporal rules).
	cat >"$D/agent.py" <<EOF
import subprocess
script = '''
seq 1 2 >/dev/null
cat s1 >/dev/null 2>&1 && echo g1-s1-permit || echo g1-s1-deny
cat s2 >/dev/null 2>&1 && echo g1-s2-permit || echo g1-s2-deny
echo ready >ready
while [ ! -e go ]; do sleep 0.1; done
cat s1 >/dev/null 2>&1 && echo g2-s1-permit || echo g2-s1-deny
cat s2 >/dev/null 2>&1 && echo g2-s2-permit || echo g2-s2-deny
'''
subprocess.call(["/run/box/bin/bash", "-c", script])
subprocess.call(["/run/box/bin/bash", "-c",
                 "echo x | head -1 >/dev/null && echo head-permit || echo head-deny; "
                 "echo x | wc -l >/dev/null && echo wc-permit || echo wc-deny"])
print("done", flush=True)
EOF
	chmod 755 "$D/agent.py"
	python_agent_ini "$D/box.ini" "$name" "$D/state/r" "g1.cedar" "timeout = 300s"
	chown "$u" "$D/box.ini"
	as_user "$u" "timeout -k 5 ${SHELL_BOX_TIMEOUT:-240} '$RB/boxctl' run -c '$D/box.ini'" \
		>"$D/run.out" 2>"$D/run.err" &
	runpid=$!
	for _ in $(seq 1 1200); do
		[ -e "$P/ready" ] && break
		kill -0 "$runpid" 2>/dev/null || break
		sleep 0.1
	done
	check "$u: the agent's shell ran under generation 1" test -e "$P/ready"

	# A file that does not load: refused here (as the caller), with its line.
	as_user "$u" "'$RB/boxctl' policy reload '$name' '$D/bad.cedar'" >"$D/bad.out" 2>"$D/bad.err"
	rc=$?
	if [ "$rc" = 2 ] && grep -q "bad.cedar:3:" "$D/bad.err" && grep -q "stays in force" "$D/bad.err"; then
		ok "$u: a file that does not load is refused with its line (exit 2)"
	else
		not_ok "$u: a bad file refused (exit $rc)"
		sed 's/^/#   /' "$D/bad.err" | head -5
	fi
	# One that only box-policyd can refuse: the box has no [mcp.Ghost].
	as_user "$u" "'$RB/boxctl' policy reload '$name' '$D/ghost.cedar'" >"$D/ghost.out" 2>"$D/ghost.err"
	rc=$?
	if [ "$rc" = 2 ] && grep -q "ghost.cedar: line 2:" "$D/ghost.err"; then
		ok "$u: box-policyd refuses a file the box's schema does not allow, with its line (exit 2)"
	else
		not_ok "$u: ghost.cedar refused by box-policyd (exit $rc)"
		sed 's/^/#   /' "$D/ghost.err" | head -5
	fi
	# One that loads: generation 2, one of the two temporal rules kept its history.
	as_user "$u" "'$RB/boxctl' policy reload '$name' '$D/g2.cedar'" >"$D/g2.out" 2>"$D/g2.err"
	rc=$?
	if [ "$rc" = 0 ] && grep -q "policy generation 2 in force" "$D/g2.out" &&
		grep -q "1 of 2 temporal rules kept their history" "$D/g2.out"; then
		ok "$u: the reload put generation 2 in force; the unchanged temporal rule kept its history"
	else
		not_ok "$u: reload of g2.cedar (exit $rc): $(cat "$D/g2.out" "$D/g2.err" | head -3)"
	fi
	# While it runs: `boxctl log NAME` shows both reloads (the line is written within 10 ms).
	for _ in $(seq 1 300); do
		as_user "$u" "'$RB/boxctl' log '$name'" >"$D/log.out" 2>"$D/log.err"
		grep -q "policy.reload generation 2 in force" "$D/log.out" && break
		sleep 0.1
	done
	if grep -q "policy.reload generation 1 refused: .*ghost.cedar: line 2:" "$D/log.out" &&
		grep -q "policy.reload generation 2 in force" "$D/log.out"; then
		ok "$u: boxctl log shows the refused reload and the one in force"
	else
		not_ok "$u: boxctl log: $(grep policy.reload "$D/log.out" | head -3) $(head -3 "$D/log.err")"
	fi
	touch "$P/go"
	wait "$runpid"
	rc=$?
	check "$u: the box ran to its end (boxctl $rc)" grep -qx done "$D/run.out"
	grep -q "g2-s1-permit" "$D/run.out" || sed 's/^/#   /' "$D/run.out" "$D/run.err" | tail -30
	for l in g1-s1-deny g1-s2-permit g2-s1-permit g2-s2-deny; do
		check "$u: one shell process: $l" grep -qx "$l" "$D/run.out"
	done
	check "$u: the unchanged temporal rule still remembers generation 1's seq (head denied)" \
		grep -qx head-deny "$D/run.out"
	check "$u: the edited temporal rule started empty (wc permitted)" \
		grep -qx wc-permit "$D/run.out"
	L=$D/state/r/decisions.jsonl
	python3 - "$L" >"$D/controls" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if "control" in o:
        print(o["control"], o["ok"], o["generation"], o.get("rules_kept"),
              o.get("file", "").rsplit("/", 1)[-1], "error" in o)
PY
	if [ "$(sed -n 1p "$D/controls")" = "policy.reload False 1 0 ghost.cedar True" ] &&
		[ "$(sed -n 2p "$D/controls")" = "policy.reload True 2 1 g2.cedar False" ]; then
		ok "$u: each reload is a control line of decisions.jsonl (refused, then in force)"
	else
		not_ok "$u: the control lines: $(tr '\n' ';' <"$D/controls")"
	fi
	# The decisions of generation 2 in the log: the read of s2 denied by "secret".
	if grep -F '"fs:read"' "$L" | grep -F "$P/s2" | grep -F '"deny"' | grep -qF '"secret"'; then
		ok "$u: the log holds generation 2's denial of s2"
	else
		not_ok "$u: generation 2's denial of s2 is not in the log"
	fi
done
tap_done
