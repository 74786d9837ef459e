#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-policy-ask-always.sh — `[box] ask = default` ([box.ini(5)](docs/box.ini.5.md)) and the
# answer "always", `boxctl approve NAME N --always` (docs/boxctl.1.md), on real boxes, as the
# caller and, under root, as the ordinary user boxtest:
#   - ask = default: a command no permit matches (wc) is held and listed as such; a command a
#     forbid without @ask forbids (tail) is denied at once, not held;
#   - --always on that default deny adds a permit for exactly that request to the policy file
#     (printed as a unified diff), reloads the box and permits the held one; the same command
#     later is permitted by the policy without asking (no one answers: a hold would time out);
#   - --always on an @ask forbid (head) adds an `unless { … }` to it: the same holds;
#   - a request whose fields hold `"`, `\` and a line break (a file name) is written escaped:
#     the same command is then permitted, another one (wc -c) still held — nothing injected;
#   - a file that cannot be edited — changed since the box loaded it, a symlink, (as an
#     ordinary user) a directory it cannot write — changes nothing, says why, and the
#     decision stays held (then denied);
#   - the file on disk holds the new text; the decision log has each person's answer and a
#     policy.reload control line per edit, and `boxctl log` shows both.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
. test/integration/lib-shell.sh
set -u
cd "$W"

require_shell_built

# listed U NAME: the lines of the decisions that wait.
listed_lines() {
	as_user "$1" "'$RB/boxctl' approve '$2'" 2>/dev/null
}
listed() {
	listed_lines "$1" "$2" | sed -n 's/^\([0-9][0-9]*\)  waiting .*/\1/p'
}

# diff_applies OUT BEFORE AFTER: the unified diff boxctl printed in OUT, applied by patch(1)
# to a copy of BEFORE, gives AFTER.
diff_applies() {
	cp "$2" "$2.patched"
	sed -n '/^---/,$p' "$1" | sed '/^box \|^decision /d' | patch -s "$2.patched" 2>/dev/null &&
		cmp -s "$2.patched" "$3"
}

# wait_new U NAME NOT: the first waiting decision other than NOT (empty after the cap).
wait_new() {
	local id
	for _ in $(seq 1 600); do
		id=$(listed "$1" "$2" | grep -vx "${3:-0}" | head -1)
		[ -n "$id" ] && { echo "$id"; return; }
		sleep 0.1
	done
}

for u in $(shell_users); do
	D=$(user_dir "$u")
	P=$D/proj
	mkdir -p "$P" "$D/pol"
	# Root's box runs a policy file (and directory) boxtest owns: root's --always writes it
	# as boxtest, never as root (a directory boxtest cannot write stops it, below).
	fowner=$u
	[ "$u" = root ] && have_boxtest && fowner=boxtest
	chown -R "$u" "$P"
	chown "$fowner" "$D/pol"
	uid=$(id -u "$u")
	name=e2e-always-$u-$$
	POL=$D/pol/p.cedar
	# Two @ask forbids hold head (each gets its unless, in its own hunk); the file ends
	# without a line break (the appended permit starts one).
	cat >"$POL" <<'EOF'
@id("fs")
permit (principal, action in [Box::Action::"fs:read", Box::Action::"fs:write",
                              Box::Action::"fs:delete", Box::Action::"fs:move"], resource);
@id("spawn")
permit (principal, action == Box::Action::"shell:spawn", resource);
@id("exec")
permit (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program != "wc" };
@id("ask_head") @ask @description("head needs a person")
forbid (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "head" };
@id("no_tail")
forbid (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "tail" };
// (six lines apart)
// .
// .
// .
// .
// .
// .
@id("ask_head2") @ask
forbid (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program like "hea*" };
EOF
	printf '%s' "$(cat "$POL")" >"$POL.n" && mv "$POL.n" "$POL"
	chown "$fowner" "$POL"
	chmod 644 "$POL"
	cp "$POL" "$D/p.orig"
	cat >"$D/agent.py" <<'EOF'
import shlex, subprocess
def run(tag, cmd):
    rc = subprocess.call(["/run/box/bin/bash", "-c", cmd + " >/dev/null 2>&1"])
    print("%s-%s" % (tag, "permit" if rc == 0 else "deny"), flush=True)
# A file name no rule text may hold raw: a quote, a backslash, a line break.
odd = 'q"b\\c\nd }; permit (principal, action, resource); '
open(odd, "w").close()
run("W1", "echo x | wc -l")
run("W2", "echo x | wc -l")
run("T", "echo x | tail -1")
run("H1", "echo x | head -1")
run("H2", "echo x | head -1")
run("Q1", "wc -l " + shlex.quote(odd))
run("Q2", "wc -l " + shlex.quote(odd))
run("Q3", "echo x | wc -c")
print("done", flush=True)
EOF
	chmod 644 "$D/agent.py"
	python_agent_ini "$D/box.ini" "$name" "$D/state/a" "pol/p.cedar" "timeout = 300s" "ask = default" "ask_timeout = 60s"
	chown "$u" "$D/box.ini"
	if as_user "$u" "'$RB/boxctl' check -c '$D/box.ini'" 2>&1 | grep -qx "ask = default"; then
		ok "$u: boxctl check prints ask = default"
	else
		not_ok "$u: boxctl check does not print ask = default"
	fi
	sed 's/^ask = default$/ask = sometimes/' "$D/box.ini" >"$D/bad.ini"
	chmod 644 "$D/bad.ini"
	as_user "$u" "'$RB/boxctl' check -c '$D/bad.ini'" >"$D/bad.out" 2>&1
	rc=$?
	if [ "$rc" = 2 ] && grep -q "bad.ini:6: \[box\] ask: \"sometimes\" is not accepted; accepted: none, default" "$D/bad.out"; then
		ok "$u: boxctl check refuses ask = sometimes with its line (exit 2)"
	else
		not_ok "$u: ask = sometimes (exit $rc): $(head -2 "$D/bad.out")"
	fi

	as_user "$u" "timeout -k 5 ${SHELL_BOX_TIMEOUT:-240} '$RB/boxctl' run -c '$D/box.ini'" \
		>"$D/run.out" 2>"$D/run.err" &
	runpid=$!

	# W1: no permit matched: held (ask = default), listed as such.
	w1=$(wait_new "$u" "$name")
	if [ -n "$w1" ] && listed_lines "$u" "$name" | grep -q "shell:exec wc .*(no permit matched: ask = default)"; then
		ok "$u: ask = default holds a command no permit matches, listed as such"
	else
		not_ok "$u: nothing listed for wc: $(listed_lines "$u" "$name" | head -2)"
	fi
	as_user "$u" "'$RB/boxctl' approve '$name' $w1 --always" >"$D/w1.out" 2>"$D/w1.err"
	rc=$?
	if [ "$rc" = 0 ] && grep -q '^+@id("always_shell_exec_' "$D/w1.out" &&
		grep -q '^+permit (principal, action == Box::Action::"shell:exec", resource)' "$D/w1.out" &&
		grep -q "^--- $POL" "$D/w1.out" && grep -q '^@@ -[0-9]*,[0-9]* +[0-9]*,[0-9]* @@' "$D/w1.out" &&
		grep -q "policy generation 2 in force" "$D/w1.out" &&
		grep -q "decision $w1 of box $name permitted" "$D/w1.out"; then
		ok "$u: approve --always on a default deny: a diff adding a permit, generation 2, permitted"
	else
		not_ok "$u: approve --always $w1 (exit $rc)"
		sed 's/^/#   /' "$D/w1.out" "$D/w1.err" | head -30
	fi
	check "$u: the printed diff applied to the old file gives the file on disk" \
		diff_applies "$D/w1.out" "$D/p.orig" "$POL"
	cp "$POL" "$D/p.g2"
	check "$u: the policy file still belongs to $fowner" test "$(stat -c %U "$POL")" = "$fowner"

	# H1: an @ask forbid: held; --always adds an unless to it.
	h1=$(wait_new "$u" "$name" "$w1")
	check "$u: head is held (@ask)" test -n "$h1"
	as_user "$u" "'$RB/boxctl' approve '$name' $h1 --always" >"$D/h1.out" 2>"$D/h1.err"
	rc=$?
	if [ "$rc" = 0 ] && grep -q '^+unless { context.input.command == "head -1" &&$' "$D/h1.out" &&
		grep -q "^-when { context.input.program == \"head\" };" "$D/h1.out" &&
		grep -q "^+when { context.input.program == \"head\" }$" "$D/h1.out" &&
		grep -q "policy generation 3 in force" "$D/h1.out" &&
		[ "$(grep -c '^+unless {' "$D/h1.out")" = 2 ] && [ "$(grep -c '^@@ ' "$D/h1.out")" = 2 ]; then
		ok "$u: approve --always on @ask forbids adds an unless to each, one hunk each (generation 3)"
	else
		not_ok "$u: approve --always $h1 (exit $rc)"
		sed 's/^/#   /' "$D/h1.out" "$D/h1.err" | head -30
	fi

	check "$u: the two-hunk diff applied to the file before gives the file on disk" \
		diff_applies "$D/h1.out" "$D/p.g2" "$POL"
	cp "$POL" "$D/p.g3"

	# Q1: the odd file name, escaped.
	q1=$(wait_new "$u" "$name" "$h1")
	check "$u: wc of the odd name is held" test -n "$q1"
	as_user "$u" "'$RB/boxctl' approve '$name' $q1 --always" >"$D/q1.out" 2>"$D/q1.err"
	rc=$?
	if [ "$rc" = 0 ] && grep -qF 'context.input.arg2 == "q\"b\\c\nd }; permit (principal, action, resource); " &&' "$POL"; then
		ok "$u: a quote, a backslash and a line break are written escaped (generation 4)"
	else
		not_ok "$u: approve --always $q1 (exit $rc)"
		sed 's/^/#   /' "$D/q1.out" "$D/q1.err" | head -30
	fi

	check "$u: the diff of the escaped rule applied to the file before gives the file on disk" \
		diff_applies "$D/q1.out" "$D/p.g3" "$POL"

	# Q3: another wc is still held: nothing was injected. Edits that cannot be made.
	q3=$(wait_new "$u" "$name" "$q1")
	check "$u: another wc command is still held (no permit-all injected)" test -n "$q3"
	cp "$POL" "$D/p.g4"
	echo "// edited by hand" >>"$POL"
	as_user "$u" "'$RB/boxctl' approve '$name' $q3 --always" >"$D/c.out" 2>"$D/c.err"
	rc=$?
	if [ "$rc" = 1 ] && grep -q "changed since the box loaded it" "$D/c.err" &&
		grep -q "decision $q3 still waits" "$D/c.err" && [ "$(listed "$u" "$name")" = "$q3" ]; then
		ok "$u: a file changed since the box loaded it: refused, the decision still waits"
	else
		not_ok "$u: changed file (exit $rc): $(cat "$D/c.err")"
	fi
	cp "$D/p.g4" "$D/pol/real.cedar"
	chown "$fowner" "$D/pol/real.cedar"
	ln -sf real.cedar "$POL"
	as_user "$u" "'$RB/boxctl' approve '$name' $q3 --always" >"$D/l.out" 2>"$D/l.err"
	rc=$?
	if [ "$rc" = 1 ] && grep -q "symbolic link" "$D/l.err" && [ "$(listed "$u" "$name")" = "$q3" ] &&
		cmp -s "$D/pol/real.cedar" "$D/p.g4"; then
		ok "$u: a symlinked policy file: refused, nothing written, the decision still waits"
	else
		not_ok "$u: symlink (exit $rc): $(cat "$D/l.err")"
	fi
	rm -f "$POL" "$D/pol/real.cedar"
	cp "$D/p.g4" "$POL"
	chown "$fowner" "$POL"
	if [ "$fowner" != root ]; then
		chmod 555 "$D/pol"
		as_user "$u" "'$RB/boxctl' approve '$name' $q3 --always" >"$D/w.out" 2>"$D/w.err"
		rc=$?
		chmod 755 "$D/pol"
		if [ "$rc" = 1 ] && grep -q "cannot be edited: Permission denied" "$D/w.err" &&
			[ "$(listed "$u" "$name")" = "$q3" ] && cmp -s "$POL" "$D/p.g4" &&
			[ -z "$(ls -A "$D/pol" | grep -v '^p.cedar$')" ]; then
			ok "$u: a directory $fowner cannot write: refused, nothing left behind, the decision still waits"
		else
			not_ok "$u: unwritable dir (exit $rc): $(cat "$D/w.err")"
		fi
	fi
	# While it runs: `boxctl log` shows the reloads, and (--json) the person's answers.
	as_user "$u" "'$RB/boxctl' log '$name'" >"$D/log.out" 2>&1
	as_user "$u" "'$RB/boxctl' log '$name' --json" >"$D/logp.out" 2>&1
	if grep -q "policy.reload generation 2 in force" "$D/log.out" &&
		grep -q "policy.reload generation 4 in force" "$D/log.out" &&
		[ "$(grep -c '"verdict":"permit".*"source":"person"' "$D/logp.out")" = 3 ]; then
		ok "$u: boxctl log shows the reloads and the person's answers"
	else
		not_ok "$u: boxctl log: $(grep -E 'policy.reload' "$D/log.out" | head -5) / $(head -5 "$D/logp.out")"
	fi
	check "$u: boxctl deny NAME $q3" as_user "$u" "'$RB/boxctl' deny '$name' $q3 >/dev/null"

	wait "$runpid"
	rc=$?
	check "$u: the box ran to its end (boxctl $rc)" grep -qx done "$D/run.out"
	grep -qx done "$D/run.out" || sed 's/^/#   /' "$D/run.out" "$D/run.err" | tail -15
	for l in W1-permit W2-permit T-deny H1-permit H2-permit Q1-permit Q2-permit Q3-deny; do
		check "$u: $l" grep -qx "$l" "$D/run.out"
	done
	check "$u: the file on disk holds the generation in force" cmp -s "$POL" "$D/p.g4"
	check "$u: no temporary file left beside it" test -z "$(ls -A "$D/pol" | grep -v '^p.cedar$')"

	L=$D/state/a/decisions.jsonl
	python3 - "$L" >"$D/lines" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if "control" in o:
        if o["control"] == "policy.reload":
            print("reload", o["ok"], o["generation"], o.get("uid"))
        continue
    if "record" in o or o.get("action") != "shell:exec":
        continue
    prog = o.get("input", {}).get("program")
    if prog not in ("wc", "head", "tail"):
        continue
    print(prog, o["verdict"], o["source"], ",".join(o.get("rules", [])).split("_")[0],
          "no one answered" in o["message"], o.get("uid", "-"))
PY
	# (the reload comes first: the held request is permitted once the policy is in force)
	want="reload True 2 $uid
wc permit person  False $uid
wc permit box-shell always False -
tail deny box-shell no False -
reload True 3 $uid
head permit person ask False $uid
head permit box-shell exec False -
reload True 4 $uid
wc permit person  False $uid
wc permit box-shell always False -
wc deny person  False $uid"
	if [ "$(cat "$D/lines")" = "$want" ]; then
		ok "$u: the log: each person's answer, a reload per edit, later equal commands permitted by the policy"
	else
		not_ok "$u: the log lines"
		diff <(echo "$want") "$D/lines" | sed 's/^/#   /'
	fi
done
tap_done
