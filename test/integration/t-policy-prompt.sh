#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-policy-prompt.sh — `boxctl run` asks at its own terminal (docs/boxctl.1.md, "A decision
# at the terminal") on real boxes, as the caller and, under root, as the ordinary user
# boxtest, driven in a private tmux server (lib-tmux.sh) as a person would:
#   - the agent's shell command that a forbid annotated @ask holds brings up boxctl's
#     prompt with the action, its fields, the rule and its message; the shown code + `o`
#     lets it run, and the agent's program gets SIGWINCH afterwards (to redraw);
#   - a wrong code answers nothing (the decision still waits) and draws a new code;
#   - three decisions waiting at once are answered one by one (o, d, b) while an unrelated
#     permitted command of the agent goes on; the agent's output meanwhile is held and
#     written once the prompt is gone;
#   - keys typed ahead with an answer are not read as the next decision's answer;
#   - the answer "always" (code + a) shows the policy file's change, writes and reloads it
#     and permits the command; the same command later is permitted by the policy itself;
#   - a fake prompt the agent draws gets the keys typed into it (the agent reads them):
#     nothing is approved; typing its code into the real prompt answers nothing either,
#     and the held command is denied when [box] ask_timeout runs out;
#   - every answer is a decision line with source person and the answering uid.
# Every wait is bounded and generous (a loaded machine is slow, not wrong).
# It reads a terminal through bounded waits, so it runs alone, away from the heavy tests:
# box-test: serial
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
. test/integration/lib-shell.sh
. test/integration/lib-tmux.sh
set -u
trap 'tmux_stop; run_cleanup' EXIT
cd "$W"

require_shell_built
require_tmux
boxtest_or_skip "the prompt as boxtest" || :

cat >"$W/agent.py.in" <<'EOF'
import os, signal, subprocess, sys, threading, time
signal.signal(signal.SIGWINCH, lambda *a: open("winch", "a").write("w\n"))
def wait_file(name):
    while not os.path.exists(name):
        time.sleep(0.1)
lock = threading.Lock()
def head(tag, n=1):
    rc = subprocess.call(["/run/box/bin/bash", "-c", "echo x | head -%d >/dev/null" % n])
    line = "%s-%s" % (tag, "permit" if rc == 0 else "deny")
    with lock:
        open("results", "a").write(line + "\n")
    print(line, flush=True)
FAKE = ("\033[2J\033[Hbox: a decision waits for you (boxctl run, box fake)\r\n\r\n"
        "  To answer, type the code 1234, then one letter, then Enter:\r\n    o  permit it once\r\n"
        "answer> ")
print("agent-up", flush=True)
head("one")
wait_file("go-two")
head("two")
ts = [threading.Thread(target=head, args=("three%d" % i, i)) for i in (1, 2, 3)]
for t in ts:
    t.start()
wait_file("go-other")
rc = subprocess.call(["/run/box/bin/bash", "-c", "echo y | wc -l >/dev/null"])
open("other-done", "w").write("%d\n" % rc)
print("other-printed-while-held", flush=True)
for t in ts:
    t.join()
wait_file("go-always")
head("always", 5)
head("again", 5)
print(FAKE, end="", flush=True)
print("fake-read=%s" % sys.stdin.readline().strip(), flush=True)
# head -4: equal to none of the three, one of which is answered for the box (whichever
# thread's decision comes third), so an approval for the box never covers this one
t = threading.Thread(target=head, args=("fake", 4))
t.start()
time.sleep(1)
print(FAKE, end="", flush=True)
t.join()
print("agent-done", flush=True)
EOF

# listed U NAME: the numbers of the decisions that wait (boxctl approve NAME, from outside).
listed() {
	as_user "$1" "'$RB/boxctl' approve '$2'" 2>/dev/null | sed -n 's/^\([0-9][0-9]*\)  waiting .*/\1/p'
}

# visible: the pane's screen as it is now (no scrollback: a screen of boxctl's drawn before
# may be in the history).
visible() { _tmux capture-pane -p -J -t "$TMUX_SESSION" 2>/dev/null; }

# shown: "N CODE" of boxctl's prompt for this box on the screen now, or nothing.
shown() {
	visible | awk -v b="(boxctl run, box $bname)" '
		index($0, "a decision waits for you") && index($0, b) { up = 1 }
		up && match($0, /^  decision  [0-9]+/) { split(substr($0, RSTART, RLENGTH), a, " "); n = a[2] }
		up && match($0, /type the code [0-9]+,/) { c = substr($0, RSTART + 14, RLENGTH - 15) }
		END { if (n && c) print n, c }'
}

# wait_shown OLD: until the prompt shows something other than OLD ("N CODE"), 60 s at most.
wait_shown() {
	local s end=$((SECONDS + 60))
	while [ "$SECONDS" -lt "$end" ]; do
		s=$(shown)
		[ -n "$s" ] && [ "$s" != "${1:-}" ] && { echo "$s"; return 0; }
		sleep 0.1
	done
	return 1
}

# wait_gone: until no prompt of boxctl's is on the screen (60 s at most).
wait_gone() {
	local end=$((SECONDS + 60))
	while [ "$SECONDS" -lt "$end" ]; do
		[ -z "$(shown)" ] && return 0
		sleep 0.1
	done
	return 1
}

# wait_result TAG: its line in the agent's results file (60 s at most).
wait_result() { wait_for "$P/results" "^$1-"; }

for u in $(shell_users); do
	D=$(user_dir "$u")
	P=$D/proj
	mkdir -p "$P"
	uid=$(id -u "$u")
	bname=e2e-pr-$u-$$
	cat >"$D/p.cedar" <<'EOF'
permit (principal, action, resource);
@id("ask_head") @ask @description("head needs a person")
forbid (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "head" };
EOF
	python_agent_ini "$D/box.ini" "$bname" "$D/state/$bname" "p.cedar" "timeout = 400s" "ask_timeout = 15s"
	cp "$W/agent.py.in" "$D/agent.py"
	chown -R "$u:" "$D"
	chmod 644 "$D/box.ini" "$D/p.cedar" "$D/agent.py"
	if [ "$u" = "$(id -un)" ]; then
		run="cd '$W' && exec '$RB/boxctl' run -q -c '$D/box.ini'"
	else
		run="cd '$W' && exec setpriv --reuid '$u' --regid '$(id -g "$u")' --init-groups env -u XDG_RUNTIME_DIR -u XDG_STATE_HOME HOME='$(getent passwd "$u" | cut -d: -f6)' BOX_SOCKET='$BOX_SOCKET' ASAN_OPTIONS='$ASAN_OPTIONS' '$RB/boxctl' run -q -c '$D/box.ini'"
	fi
	tmux_start 40 110 "timeout --foreground -k 5 380 sh -c \"$run\""

	# 1. The prompt, and the code + o.
	s1=$(wait_shown)
	if [ -z "$s1" ]; then
		not_ok "$u: a held command brings up boxctl's prompt"
		tmux_screen | grep -v '^$' | tail -15 | sed 's/^/#   /'
		tmux_stop
		continue
	fi
	ok "$u: a held command brings up boxctl's prompt"
	scr=$(tmux_screen)
	check "$u: … with the action, its fields, the rule and its message" \
		sh -c 'printf "%s\n" "$1" | grep -q "action    shell:exec" &&
			printf "%s\n" "$1" | grep -q "field     command = head -1" &&
			printf "%s\n" "$1" | grep -q "rule      ask_head" &&
			printf "%s\n" "$1" | grep -q "head needs a person"' _ "$scr"
	check "$u: … and no SIGWINCH reached the agent before" test ! -e "$P/winch"
	tmux_type "${s1#* } o"
	check "$u: the code and o: the command ran" wait_result one
	check "$u: … permitted" grep -qx one-permit "$P/results"
	check "$u: … the prompt is gone" wait_gone
	check "$u: … and the agent got SIGWINCH to redraw" wait_for "$P/winch" w
	check "$u: … its output is back on the terminal" tmux_wait one-permit 30
	touch "$P/go-two"

	# 2. A wrong code answers nothing; a new code comes.
	s2=$(wait_shown)
	[ -n "$s2" ] || { diag "no second prompt; the screen:"; tmux_screen | grep -v '^$' | tail -30 | sed 's/^/#   /'; }
	c2=${s2#* }
	wrong=$(printf '%04d' $(((10#$c2 + 1) % 10000)))
	tmux_type "$wrong o"
	s2b=$(wait_shown "$s2")
	check "$u: a wrong code: a new code is drawn" test -n "$s2b" -a "${s2b% *}" = "${s2% *}"
	if visible | grep -q 'nothing was answered'; then ok "$u: … saying nothing was answered"; else
		not_ok "$u: … saying nothing was answered"; fi
	if listed "$u" "$bname" | grep -qx "${s2% *}"; then
		ok "$u: … listed as waiting by boxctl approve"
	else
		not_ok "$u: … listed as waiting by boxctl approve"
	fi
	check "$u: … the command has not run" test "$(grep -c '^two-' "$P/results")" -eq 0
	tmux_type "${s2b#* } d"
	check "$u: … then the code and d: denied" wait_result two
	check "$u: … two-deny" grep -qx two-deny "$P/results"

	# 3. Three at once, one by one, while another command goes on; typeahead.
	s3=
	end=$((SECONDS + 60))
	while [ "$SECONDS" -lt "$end" ]; do
		s3=$(shown)
		visible | grep -q "(1 of 3 waiting)" && s3=$(shown) && [ -n "$s3" ] && break
		sleep 0.1
	done
	check "$u: three held at once: 1 of 3 waiting" tmux_wait "(1 of 3 waiting)" 5
	touch "$P/go-other"
	check "$u: an unrelated permitted command went on meanwhile" wait_for "$P/other-done" 0
	check "$u: … its output is held while the prompt is up" \
		test "$(tmux_count other-printed-while-held)" -eq 0
	# The answer and, typed ahead in the same keystrokes, a wrong one for the next prompt.
	tmux_keys -l "${s3#* } o"$'\r'"9999o"$'\r'
	s4=$(wait_shown "$s3")
	check "$u: the next decision comes with a new code" test -n "$s4" -a "${s4% *}" != "${s3% *}"
	sleep 1
	if ! visible | grep -q 'nothing was answered'; then
		ok "$u: keys typed ahead did not answer it (no wrong-code note)"
	else
		not_ok "$u: keys typed ahead did not answer it (no wrong-code note)"
		visible | grep -v '^$' | sed 's/^/#   /'
	fi
	if visible | grep -qE "^answer> ?$"; then ok "$u: … the answer line is empty"; else
		not_ok "$u: … the answer line is empty"; fi
	tmux_type "${s4#* } d"
	s5=$(wait_shown "$s4")
	check "$u: the third decision" test -n "$s5" -a "${s5% *}" != "${s4% *}"
	tmux_type "${s5#* } b"
	check "$u: all three answered" wait_gone
	end=$((SECONDS + 60))
	while [ "$SECONDS" -lt "$end" ]; do
		[ "$(grep -c '^three' "$P/results")" -ge 3 ] && break
		sleep 0.1
	done
	check "$u: … two permitted, one denied" \
		test "$(grep -c '^three.-permit' "$P/results"):$(grep -c '^three.-deny' "$P/results")" = 2:1
	check "$u: … the output held meanwhile is written afterwards" \
		tmux_wait other-printed-while-held 30

	# 4. Always: the policy file gains an exception, shown on the prompt's screen.
	touch "$P/go-always"
	s7=$(wait_shown)
	check "$u: always: the prompt for head -5" test -n "$s7"
	if visible | grep -qF "field     command = head -5"; then
		ok "$u: … showing its command"
	else
		not_ok "$u: … showing its command"
	fi
	tmux_type "${s7#* } a"
	check "$u: … the code and a: the outcome is shown until Enter" tmux_wait "Press Enter to go on" 60
	if visible | grep -qE '^  \+.*unless' && visible | grep -qF 'Decision '"${s7% *}"': permitted always.'; then
		ok "$u: … as a diff adding an unless clause, and the decision permitted always"
	else
		not_ok "$u: … as a diff adding an unless clause, and the decision permitted always"
		visible | grep -v '^$' | sed 's/^/#   /'
	fi
	check "$u: … the policy file holds the exception" grep -q "boxctl approve --always: decision ${s7% *}" "$D/p.cedar"
	check "$u: … still owned by its owner" test "$(stat -c %U "$D/p.cedar")" = "$u"
	check "$u: … the agent's output stays held until Enter" test "$(tmux_count always-permit)" -eq 0
	tmux_keys Enter
	check "$u: … after Enter the command ran" wait_result always
	check "$u: … always-permit" grep -qx always-permit "$P/results"
	check "$u: the same command again: permitted by the policy, with no prompt" wait_result again
	check "$u: … again-permit" grep -qx again-permit "$P/results"

	# 5. The agent's fake prompt: typed into, nothing is approved.
	check "$u: the agent draws a fake prompt" tmux_wait "(boxctl run, box fake)" 60
	tmux_type "1234o"
	check "$u: … the keys typed into it went to the agent" tmux_wait "fake-read=1234o" 30
	s6=$(wait_shown)
	check "$u: the real prompt for the held command" test -n "$s6"
	if visible | grep -q 'box fake'; then not_ok "$u: … the agent's fake is not drawn over it"; else
		ok "$u: … the agent's fake is not drawn over it"; fi
	if [ "${s6#* }" != 1234 ]; then
		tmux_type "1234 o"
		end=$((SECONDS + 10))
		while [ "$SECONDS" -lt "$end" ] && ! visible | grep -q 'nothing was answered'; do sleep 0.1; done
		if visible | grep -q 'nothing was answered'; then
			ok "$u: … the fake's code typed into it answers nothing"
		else
			not_ok "$u: … the fake's code typed into it answers nothing"
		fi
	fi
	check "$u: … no answer: it times out as a deny" wait_result fake
	check "$u: … fake-deny" grep -qx fake-deny "$P/results"
	check "$u: the agent ran to its end" tmux_wait agent-done 60
	rc=$(tmux_wait_exit 60)
	check "$u: boxctl run exited 0 ($rc)" test "$rc" = 0
	tmux_stop

	python3 - "$D/state/$bname/decisions.jsonl" "$uid" >"$D/person" <<'PY'
import json, sys
n = {}
for line in open(sys.argv[1]):
    o = json.loads(line)
    if "record" in o or o.get("action") != "shell:exec" or o.get("input", {}).get("program") != "head":
        continue
    k = "%s %s %s %s" % (o["verdict"], o["source"], o.get("uid", "-") == int(sys.argv[2]),
                         "no one answered" in o["message"])
    n[k] = n.get(k, 0) + 1
for k in sorted(n):
    print(k, n[k])
PY
	want="deny box-shell False True 1
deny person True False 2
permit box-shell False False 1
permit person True False 4"
	if [ "$(cat "$D/person")" = "$want" ]; then
		ok "$u: each answer is a decision line with source person and the uid; the timeout's is box-shell's"
	else
		not_ok "$u: the head lines: $(tr '\n' ';' <"$D/person")"
	fi
done
tap_done
