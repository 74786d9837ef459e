#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-policy-ask.sh — a forbid annotated @ask on real boxes (docs/box-policy.5.md, "Asking a
# person"), as the caller and, under root, as the ordinary user boxtest, answered from
# another process with `boxctl approve|deny` (docs/boxctl.1.md):
#   - a shell command the rule forbids waits, listed, while another command of the agent
#     goes on; `boxctl approve NAME N` lets it run (once: the same command later is held
#     again), `boxctl deny NAME N` refuses it;
#   - no answer within [box] ask_timeout (3 s here) is a deny;
#   - `--box` answers the same command later at once, without holding it;
#   - each answer is a decision line with source person and the answering uid.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
. test/integration/lib-shell.sh
set -u
cd "$W"

require_shell_built

# listed U NAME: the numbers of the decisions that wait, one a line.
listed() {
	as_user "$1" "'$RB/boxctl' approve '$2'" 2>/dev/null | sed -n 's/^\([0-9][0-9]*\)  waiting .*/\1/p'
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
	mkdir -p "$P"
	chown -R "$u" "$P"
	uid=$(id -u "$u")
	name=e2e-ask-$u-$$
	cat >"$D/p.cedar" <<'EOF'
permit (principal, action, resource);
@id("ask_head") @ask @description("head needs a person")
forbid (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "head" };
EOF
	cat >"$D/agent.py" <<'EOF'
import subprocess, threading
def run(tag):
    rc = subprocess.call(["/run/box/bin/bash", "-c", "echo x | head -1 >/dev/null"])
    print("%s-%s" % (tag, "permit" if rc == 0 else "deny"), flush=True)
a = threading.Thread(target=run, args=("A",))
a.start()
# While A waits for a person: another command goes on.
rc = subprocess.call(["/run/box/bin/bash", "-c", "echo y | wc -l >/dev/null"])
open("b-done", "w").write("%d\n" % rc)
a.join()
for tag in ("C", "D", "E", "F"):
    run(tag)
print("done", flush=True)
EOF
	chmod 644 "$D/p.cedar" "$D/agent.py"
	python_agent_ini "$D/box.ini" "$name" "$D/state/a" "p.cedar" "timeout = 300s" "ask_timeout = 3s"
	chown "$u" "$D/box.ini"
	as_user "$u" "timeout -k 5 ${SHELL_BOX_TIMEOUT:-240} '$RB/boxctl' run -c '$D/box.ini'" \
		>"$D/run.out" 2>"$D/run.err" &
	runpid=$!

	a=$(wait_new "$u" "$name")
	lst=$(as_user "$u" "'$RB/boxctl' deny '$name'")
	if [ -n "$a" ] && printf '%s\n' "$lst" | grep -q "shell:exec head.*ask_head"; then
		ok "$u: the command waits, listed with its action and rule"
	else
		not_ok "$u: nothing listed as waiting"
	fi
	if printf '%s\n' "$lst" | grep -qx "    field command = head -1" &&
		printf '%s\n' "$lst" | grep -qx "    field program = head"; then
		ok "$u: … with its input fields"
	else
		not_ok "$u: … with its input fields"
		printf '%s\n' "$lst" | sed 's/^/#   /'
	fi
	for _ in $(seq 1 600); do
		[ -e "$P/b-done" ] && break
		sleep 0.1
	done
	check "$u: another command of the agent went on while it waited" test -e "$P/b-done"
	check "$u: boxctl approve NAME $a" as_user "$u" "'$RB/boxctl' approve '$name' $a"
	c=$(wait_new "$u" "$name" "$a")
	check "$u: approved once: the same command later is held again" test -n "$c"
	check "$u: boxctl deny NAME $c" as_user "$u" "'$RB/boxctl' deny '$name' $c"
	# D: no answer; the next one held after it is E.
	d=$(wait_new "$u" "$name" "$c")
	e=$(wait_new "$u" "$name" "$d")
	check "$u: after ask_timeout the next command is held (D timed out)" test -n "$e"
	check "$u: boxctl approve NAME $e --box" as_user "$u" "'$RB/boxctl' approve '$name' $e --box"
	wait "$runpid"
	rc=$?
	check "$u: the box ran to its end (boxctl $rc)" grep -qx done "$D/run.out"
	for l in A-permit C-deny D-deny E-permit F-permit; do
		check "$u: $l" grep -qx "$l" "$D/run.out"
	done
	grep -qx done "$D/run.out" || sed 's/^/#   /' "$D/run.out" "$D/run.err" | tail -15
	L=$D/state/a/decisions.jsonl
	python3 - "$L" "$uid" >"$D/person" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if "record" in o or o.get("action") != "shell:exec" or o.get("input", {}).get("program") != "head":
        continue
    print(o["verdict"], o["source"], o.get("uid", "-") == int(sys.argv[2]),
          "no one answered" in o["message"])
PY
	want="permit person True False
deny person True False
deny box-shell False True
permit person True False
permit person True False"
	if [ "$(cat "$D/person")" = "$want" ]; then
		ok "$u: each answer is a decision line with source person and the uid; the timeout's is box-shell's"
	else
		not_ok "$u: the head lines: $(tr '\n' ';' <"$D/person")"
	fi
done
tap_done
