#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-shell-edit.sh — a shell a person can use, at a real terminal (tmux, lib-tmux.sh), in a
# real box, as the caller and as boxtest. The box has no [agent] command, so `boxctl run`
# opens the interactive box shell itself. Checked: a command runs and prints; up-arrow
# recalls the previous line (no `^[[A` command); Tab completes a file name, a directory and a
# command name, and lists the candidates when there are several; Ctrl-C at the prompt and
# during `sleep 100` brings the prompt back on a line of its own and the shell goes on;
# `sleep 100 &` then `jobs`, `kill %1`, `fg %1`; a command the policy refuses is refused as
# for an agent and `boxctl log` shows it as a person's session; `exit 4` is boxctl's status;
# without a terminal the shell runs the script on stdin, or the file after `--`.
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
boxtest_or_skip "the person's shell as boxtest" || :

for u in $(shell_users); do
	D=$(user_dir "$u")
	P=$D/proj
	name=e2e-ed-$u
	mkdir -p "$P/subdir-zq"
	echo data >"$P/unique-file-qx.txt"
	cat >"$D/allow.cedar" <<'EOF'
permit (principal, action, resource);
@id("no_rmdir")
forbid (principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "rmdir" };
EOF
	cat >"$D/ed.ini" <<EOF
[box]
name = $name
state_dir = $D/state/$name
policy = allow.cedar
timeout = 300s

[agent]
workspace = $P

[agent.env]
$(agent_env)
PS1 = ed-prompt>
TERM = xterm

[agent.filesystem]
write = $P
EOF
	chown -R "$u:" "$D"
	chmod 644 "$D/ed.ini" "$D/allow.cedar"
	if [ "$u" = "$(id -un)" ]; then
		run="cd '$P' && exec '$RB/boxctl' run -q -c '$D/ed.ini'"
	else
		run="cd '$P' && exec setpriv --reuid '$u' --regid '$(id -g "$u")' --init-groups env -u XDG_RUNTIME_DIR -u XDG_STATE_HOME HOME='$(getent passwd "$u" | cut -d: -f6)' BOX_SOCKET='$BOX_SOCKET' ASAN_OPTIONS='$ASAN_OPTIONS' '$RB/boxctl' run -q -c '$D/ed.ini'"
	fi
	tmux_start 24 100 "timeout --foreground -k 5 330 sh -c \"$run\""

	alive=true
	twait() { $alive && tmux_wait "$@"; }
	twait_line() { # a whole screen line
		local i
		$alive || return 1
		for i in $(seq $((${2:-15} * 10))); do
			tmux_screen | grep -qx -- "$1" && return 0
			sleep 0.1
		done
		return 1
	}
	tmux_wait "ed-prompt>" 20 || alive=false
	check "$u: boxctl run without [agent] command opens the box shell (its prompt)" $alive
	if ! $alive; then
		tmux_screen | tail -15 | sed 's/^/#   screen: /'
	fi
	tmux_type 'echo first-$((20+3))'
	check "$u: a command runs and prints" twait_line "first-23"

	# Up-arrow: the last line again; Enter runs it (no `^[[A` command).
	tmux_keys Up
	tmux_keys Enter
	check "$u: up-arrow recalls the previous line, Enter runs it again" \
		test "$($alive && sleep 1; tmux_count 'first-23')" -ge 2
	check "$u: … and no escape sequence was run as a command" \
		test "$(tmux_screen | grep -cE '\^\[\[A|\[A: (command )?not found')" -eq 0
	# Line editing: type, move left, insert.
	tmux_keys 'echo edit-A' Left 'X'
	tmux_keys Enter
	check "$u: a line is edited (left-arrow, insert)" twait_line "edit-XA"
	# UTF-8 typed at the terminal, edited as characters: one Left goes over the é.
	tmux_keys 'echo caf-é' Left 'X'
	tmux_keys Enter
	check "$u: UTF-8 is typed and edited by character (caf-Xé)" twait_line "caf-Xé"

	# Tab: a file name, a directory, a command name.
	tmux_keys 'cat uniq' Tab
	tmux_keys Enter
	check "$u: Tab completes a file name (cat unique-file-qx.txt prints its data)" twait_line "data"
	tmux_keys 'cd subd' Tab
	tmux_keys Enter
	tmux_type 'pwd'
	check "$u: Tab completes a directory with its /" twait_line "$P/subdir-zq"
	tmux_type 'cd ..'
	tmux_keys 'mkdi' Tab
	tmux_keys 'newdir-kq && ls -d newdir-kq' Enter
	check "$u: Tab completes a command name (mkdir)" twait_line "newdir-kq"
	tmux_keys 'ech' Tab
	tmux_keys ' tabcmd-$((5*5))' Enter
	check "$u: … a builtin (echo)" twait_line "tabcmd-25"
	tmux_keys 'ls ./' Tab Tab
	check "$u: Tab twice lists the candidates" twait "subdir-zq/"
	tmux_keys C-u Enter

	# Ctrl-C at the prompt abandons the line; the prompt comes back on a fresh line. The next
	# line is typed once that prompt shows: the terminal flushes its input at ^C (ISIG without
	# NOFLSH), so keys that reach it in the same burst are lost, for a person too.
	bare=$(tmux_screen | grep -cx 'ed-prompt>')
	tmux_keys 'echo abandoned-line' C-c
	for _ in $(seq 150); do
		[ "$(tmux_screen | grep -cx 'ed-prompt>')" -gt "$bare" ] && break
		sleep 0.1
	done
	tmux_type 'echo after-$((30+3))-prompt'
	check "$u: Ctrl-C at the prompt abandons the line" twait_line "after-33-prompt"
	check "$u: … which never ran" test "$(tmux_count 'abandoned-line')" -le 1
	tmux_type 'sleep 100; echo not-after-sleep'
	sleep 1
	tmux_keys C-c
	check "$u: Ctrl-C interrupts sleep 100: the prompt on a line of its own" \
		twait_line "ed-prompt>" 10
	tmux_type 'echo after-$((40+4))-int'
	check "$u: … and the shell still works" twait_line "after-44-int" 10
	check "$u: … the rest of that line did not run" test "$(tmux_count 'not-after-sleep')" -le 1

	# Jobs of the shell's own.
	tmux_type 'sleep 100 &'
	tmux_type 'jobs'
	check "$u: sleep 100 & then jobs lists it" twait "[1]+  Running                 sleep 100 &"
	tmux_type 'kill %1; wait; jobs; echo killed-$((6*7))'
	check "$u: kill %1 ends it" twait_line "killed-42"
	tmux_type '(sleep 1; echo bg-done) &'
	tmux_type 'fg %1; echo fg-status-$?'
	check "$u: fg %1 waits for the job in the foreground" twait_line "fg-status-0" 10
	check "$u: … whose output came first" twait_line "bg-done" 2

	# A refused command: refused as for an agent, logged as a person's session.
	tmux_type 'rmdir subdir-zq; echo rmdir-rc-$?'
	check "$u: a command the policy refuses is refused (126)" twait_line "rmdir-rc-126"
	check "$u: … with box-shell's message" twait "box-shell: rmdir subdir-zq: policy denied" 2

	tmux_type 'exit 4'
	rc=$($alive && tmux_wait_exit 20 || echo "no shell")
	check "$u: exit 4 ends the shell, and boxctl returns 4 (rc $rc)" test "$rc" = 4
	if [ "$rc" != 4 ]; then
		tmux_screen | tail -25 | sed 's/^/#   screen: /'
	fi
	tmux_stop
	log=$W/log-$u
	cp "$D/ed.ini" "$D/box.ini"
	chown "$u:" "$D/box.ini"
	as_user "$u" "cd '$D' && '$RB/boxctl' log $name --json" >"$log" 2>&1 || true
	check "$u: boxctl log: the refusal, from a person's session" \
		grep -q '"session":"person".*rmdir\|rmdir.*"session":"person"' "$log"
	check "$u: … and its refusal line says so too" \
		grep -q '"verdict":"deny".*"session":"person"' "$log"
	# No terminal: the person's shell reads a script from stdin; `-- FILE` runs a file.
	printf 'echo piped-$((2+3))\nexit 6\n' >"$P/script-zq.sh"
	chown "$u:" "$P/script-zq.sh"
	as_user "$u" "cd '$P' && timeout -k 5 120 '$RB/boxctl' run -q -c '$D/ed.ini' <'$P/script-zq.sh'" \
		>"$W/piped-$u" 2>"$W/piped-$u.err"
	rc=$?
	check "$u: with stdin no terminal, the shell runs the script it reads (rc $rc)" \
		sh -c "[ $rc = 6 ] && grep -qx piped-5 '$W/piped-$u'"
	as_user "$u" "cd '$P' && timeout -k 5 120 '$RB/boxctl' run -c '$D/ed.ini' </dev/null" \
		>/dev/null 2>"$W/disclose-$u.err"
	check "$u: the disclosure says the agent is a person's box shell" \
		grep -q "^box: agent: a person's interactive box shell (/usr/bin/bash: box's shell alias" \
		"$W/disclose-$u.err"
	as_user "$u" "'$RB/boxctl' check -c '$D/ed.ini'" >"$W/check-$u.out" 2>&1
	check "$u: boxctl check shows no command, and why" \
		grep -q "^; command: none: a person's interactive box shell" "$W/check-$u.out"
	as_user "$u" "cd '$P' && timeout -k 5 120 '$RB/boxctl' run -q -c '$D/ed.ini' -- script-zq.sh </dev/null" \
		>"$W/file-$u" 2>"$W/file-$u.err"
	rc=$?
	check "$u: boxctl run -- FILE runs that file in the box's shell (rc $rc)" \
		sh -c "[ $rc = 6 ] && grep -qx piped-5 '$W/file-$u'"
	check "$u: nothing of the box is left (box-shell)" no_shell_left
done
tap_done
