#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-shell-signal.sh — signals and failures through box's shell in real boxes (as the caller
# and as boxtest): SIGINT to the alias stops a pipeline of own commands and one with a tool
# in it (status 130, within seconds, the tool's process gone); SIGTERM likewise (143);
# [box] command_timeout ends a command line (124) and its tool; then box-shell SIGKILLed
# while a command runs: boxctl exits 1 naming box-shell, the alias in flight does not hang,
# nothing of the box is left — every wait bounded.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
. test/integration/lib-shell.sh
set -u
cd "$W"

require_shell_built
boxtest_or_skip "signals as boxtest" || :

for u in $(shell_users); do
	D=$(user_dir "$u")
	P=$D/proj
	mkdir -p "$P" "$D/steps"
	printf 'permit (principal, action, resource);\n' >"$D/allow.cedar"
	# Each tool process carries a unique string in its argv, so the test can look for it.
	cat >"$D/steps/sig.py" <<EOF
[
 ("int_own", ["bash", "-c", "echo ready; sleep 30 | cat; echo not-reached"],
  {"kind": "sigint", "ready": "ready", "after": 15}),
 ("int_tool", ["bash", "-c", "echo ready; python3 -c 'import time; time.sleep(31.5)  # e2e-int-$u' | cat; echo not-reached"],
  {"kind": "sigint", "ready": "ready", "after": 15}),
 ("timeout", ["bash", "-c", "python3 -c 'import time; time.sleep(32.5)  # e2e-tmo-$u'; echo not-reached"],
  {"timeout": 30}),
 ("timeout_own", ["bash", "-c", "sleep 30; echo not-reached"], {"timeout": 30}),
 ("after", ["bash", "-c", "echo still-serving"]),
]
EOF
	cat >"$D/steps/hold.py" <<'EOF'
[
 ("hold", ["bash", "-c", "echo started; sleep 60; echo not-reached"],
  {"kind": "hold", "ready": "HOLDING", "timeout": 30, "ignore_term": True}),
]
EOF
	cat >"$D/sig.ini" <<EOF
[box]
name = e2e-sg-$u-$$
state_dir = $D/state/e2e-sg-$u-$$
policy = allow.cedar
timeout = 150s
command_timeout = 3s

[agent]
command = $W/agent.py $D/steps/sig.py
workspace = $P

[agent.env]
$(agent_env)

[agent.filesystem]
write = $P
read = $D/steps

[tool.python3]
command = /usr/bin/python3
EOF
	cat >"$D/hold.ini" <<EOF
[box]
name = e2e-sh-$u-$$
state_dir = $D/state/e2e-sh-$u-$$
policy = allow.cedar
timeout = 100s

[agent]
command = $W/agent.py $D/steps/hold.py
workspace = $P

[agent.env]
$(agent_env)

[agent.filesystem]
write = $P
read = $D/steps
EOF
	chown -R "$u:" "$D"
	chmod 644 "$D"/*.ini "$D/allow.cedar"

	out=$D/sig.out err=$D/sig.err
	box_run "$u" "$out" "$err" -q -c "$D/sig.ini"
	rc=$?
	check "$u: the box runs to its end (rc $rc)" test "$rc" = 0
	check "$u: the agent ran every step" grep -qx "@@ agent done" "$out"
	if [ "$rc" != 0 ]; then head -20 "$err" | sed 's/^/#   /'; fi
	for s in int_own int_tool; do
		t=$(step_kv "$out" "$s" sigint_elapsed)
		check_step "$u: $s: SIGINT to the alias: status 130" "$out" "$s" rc_is "$out" "$s" 130
		check_step "$u: $s: … within 5 s (${t:-?} s)" "$out" "$s" awk -v t="${t:-99}" 'BEGIN { exit !(t < 5) }'
		check_step "$u: $s: … the rest of the command line did not run" "$out" "$s" \
			bash -c "! grep -q not-reached <<<\"\$1\"" _ "$(step_out "$out" "$s")"
	done
	check "$u: SIGINT: the tool of the pipeline is gone" no_process "e2e-int-$u"
	check_step "$u: command_timeout: a tool's command line ends with 124" "$out" timeout \
		rc_is "$out" timeout 124
	check "$u: … and the tool is gone" no_process "e2e-tmo-$u"
	check_step "$u: command_timeout: an own command's line ends with 124" "$out" timeout_own \
		rc_is "$out" timeout_own 124
	e=$(step_err "$out" timeout_own)
	check_step "$u: … saying it timed out" "$out" timeout_own grep -q "timed out" <<<"$e"
	check_step "$u: box-shell still serves afterwards" "$out" after out_is "$out" after still-serving

	# box-shell SIGKILLed mid-command: the box stops with the message, never a hang.
	out=$D/hold.out err=$D/hold.err
	SHELL_BOX_TIMEOUT=60 box_run "$u" "$out" "$err" -q -c "$D/hold.ini" &
	bp=$!
	_run_pids+=("$bp")
	if wait_for "$out" HOLDING; then
		sp=$(shell_main_pids | head -1)
		check "$u: box-shell runs for the box (pid ${sp:-none})" test -n "$sp"
		if [ -n "$sp" ]; then
			check "$u: box-shell runs as $u" test "$(ps -o user= -p "$sp" | tr -d ' ')" = "$u"
			check "$u: box-shell: no_new_privs" grep -qP '^NoNewPrivs:\t1$' "/proc/$sp/status"
			check "$u: box-shell: seccomp filter" grep -qP '^Seccomp:\t2$' "/proc/$sp/status"
			kill -KILL "$sp"
		fi
	else
		not_ok "$u: the agent's command started (HOLDING)"
		diag "$(head -c 600 "$out" "$err")"
	fi
	t0=$(date +%s)
	for _ in $(seq 300); do kill -0 "$bp" 2>/dev/null || break; sleep 0.1; done
	wait "$bp"
	rc=$?
	check "$u: box-shell killed: boxctl exits 1 (rc $rc) within 30 s ($(($(date +%s) - t0)) s)" \
		test "$rc" = 1
	check "$u: … 'boxctl: error: … box-shell exited (…): the box was stopped …'" \
		grep -qE "^boxctl: error: .*box-shell (exited|died) \(.*\): the box was stopped" "$err"
	sed 's/^/#   /' "$err" | head -5
	check "$u: … the command never finished" test "$(grep -c not-reached "$out")" = 0
	# The stopping box SIGKILLs the agent too, so the agent may not live to report: when it
	# does, the alias it waited for exited 125 saying box-shell cannot serve.
	hrc=$(step_rc "$out" hold)
	check "$u: … the alias in flight: 125 or killed with the box, never another status (${hrc:-killed})" \
		test "${hrc:-killed}" = 125 -o "${hrc:-killed}" = killed
	if [ -n "$hrc" ]; then
		e=$(step_err "$out" hold)
		check "$u: … its message: 'box-shell: cannot serve …'" grep -q "^box-shell: cannot serve" <<<"$e"
	fi
	check "$u: … the agent is gone" no_process "agent.py $D/steps/hold.py"
	check "$u: … no box-shell is left" no_shell_left
	check "$u: … the box is gone from ps" \
		bash -c "! grep -q '^e2e-sh-$u-$$	' <<<\"\$1\"" _ "$(as_user "$u" "timeout 10 '$RB/boxctl' ps" 2>/dev/null)"
done
tap_done
