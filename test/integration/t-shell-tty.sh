#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-shell-tty.sh — the interactive shell at a real terminal (tmux, lib-tmux.sh), in a real
# box, as the caller and as boxtest: the agent execs /bin/bash with no operand at the box's
# pty, so the alias asks box-shell for an interactive shell on that terminal: its prompt
# (PS1), COLUMNS/LINES of the terminal and after a window-size change, stdin and stdout a
# terminal (for a tool too), Ctrl-C ends the running command (an own command and a tool)
# and the shell goes on, and `exit 3` ends it with status 3, which boxctl returns.
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
boxtest_or_skip "the interactive shell as boxtest" || :

for u in $(shell_users); do
	D=$(user_dir "$u")
	P=$D/proj
	name=e2e-ty-$u
	mkdir -p "$P"
	printf 'permit (principal, action, resource);\n' >"$D/allow.cedar"
	cat >"$D/tty.ini" <<EOF
[box]
name = $name
state_dir = $D/state/$name
policy = allow.cedar
timeout = 120s

[agent]
command = $W/agent.py interactive
workspace = $P

[agent.env]
$(agent_env)
PS1 = e2e-prompt>
PS2 = e2e-cont>

[agent.filesystem]
write = $P

[tool.python3]
command = /usr/bin/python3
EOF
	chown -R "$u:" "$D"
	chmod 644 "$D/tty.ini" "$D/allow.cedar"
	if [ "$u" = "$(id -un)" ]; then
		run="cd '$W' && exec '$RB/boxctl' run -q -c '$D/tty.ini'"
	else
		run="cd '$W' && exec setpriv --reuid '$u' --regid '$(id -g "$u")' --init-groups env -u XDG_RUNTIME_DIR -u XDG_STATE_HOME HOME='$(getent passwd "$u" | cut -d: -f6)' BOX_SOCKET='$BOX_SOCKET' ASAN_OPTIONS='$ASAN_OPTIONS' '$RB/boxctl' run -q -c '$D/tty.ini'"
	fi
	tmux_start 24 80 "timeout --foreground -k 5 150 sh -c \"$run\""

	# No prompt at all: the checks below fail at once instead of each waiting its time out.
	alive=true
	twait() { $alive && tmux_wait "$@"; }
	last_line() { # the screen's last line that is not blank is $1 (5 s at most)
		local i
		$alive || return 1
		for i in $(seq 50); do
			[ "$(tmux_screen | sed 's/ *$//' | grep -v '^$' | tail -1)" = "$1" ] && return 0
			sleep 0.1
		done
		return 1
	}
	twait_line() { # a whole screen line, for output that the typed text also contains
		local i
		$alive || return 1
		for i in $(seq $((${2:-15} * 10))); do
			tmux_screen | grep -qx -- "$1" && return 0
			sleep 0.1
		done
		return 1
	}
	tmux_wait "e2e-prompt>" 20 || alive=false
	check "$u: the interactive shell shows its prompt (PS1)" $alive
	tmux_type 'echo size=$COLUMNS:$LINES'
	check "$u: COLUMNS and LINES are the terminal's (80x24)" twait "size=80:24"
	tmux_type 'test -t 0 && test -t 1 && echo tty-$((3+4))-yes'
	check "$u: stdin and stdout are a terminal" twait "tty-7-yes"
	tmux_type "python3 -c 'import os; print(\"tool-tty=%d%d\" % (os.isatty(0), os.isatty(1)))'"
	check "$u: a tool at the terminal: its stdin and stdout are the terminal" twait "tool-tty=11"
	tmux_resize 30 100
	sleep 0.5
	tmux_type 'echo size=$COLUMNS:$LINES'
	check "$u: a window-size change reaches the shell (100x30)" twait "size=100:30"
	tmux_type "python3 -c 'import shutil; print(\"tool-size=%d:%d\" % tuple(shutil.get_terminal_size()))'"
	check "$u: … and a tool sees the new size" twait "tool-size=100:30"

	# A compound command over several lines: PS2 for each continuation, then it runs as one.
	tmux_type 'for i in 1 2; do'
	check "$u: an open compound command asks for more at PS2" twait "e2e-cont>" 5
	tmux_type '  echo multi-$((i*10))'
	tmux_type 'done; echo "quote-'
	tmux_type 'end"'
	check "$u: … and runs as one when complete (multi-10, multi-20)" twait "multi-20" 10
	check "$u: … an open quote continues it too (a line 'end' alone)" twait_line "end" 5
	# (each key only once the shell waits at the prompt it is meant for: a Ctrl-C that
	# comes while the line before it is still being read interrupts that, not PS2)
	tmux_type 'if true; then'
	check "$u: an unfinished if waits at PS2" last_line "e2e-cont>"
	tmux_keys C-c
	check "$u: Ctrl-C there brings back PS1" last_line "e2e-prompt>"
	tmux_type 'echo after-$((60+1))-drop'
	check "$u: Ctrl-C at PS2 drops the unfinished command" twait "after-61-drop" 10

	tmux_type 'sleep 90; echo sleep-not-interrupted'
	sleep 1
	t0=$(date +%s)
	tmux_keys C-c
	tmux_type 'echo after-$((40+2))-int'
	check "$u: Ctrl-C ends the running command; the shell goes on" twait "after-42-int" 60
	check "$u: … not after the sleep's 90 s ($(($(date +%s) - t0)) s)" test $(($(date +%s) - t0)) -lt 60
	check "$u: … the rest of that line did not run" test "$(tmux_count 'sleep-not-interrupted')" -le 1
	tmux_type "python3 -c 'import time; time.sleep(61.25)  # e2e-tty-$u'"
	sleep 1.5
	tmux_keys C-c
	tmux_type 'echo after-$((50+1))-tool'
	check "$u: Ctrl-C ends a tool at the terminal; the shell goes on" twait "after-51-tool" 10
	check "$u: … the tool is gone" no_process "e2e-tty-$u"

	tmux_type 'exit 3'
	rc=$($alive && tmux_wait_exit 20 || echo "no shell")
	check "$u: exit 3 ends the shell, and boxctl returns 3 (rc $rc)" test "$rc" = 3
	if [ "$rc" != 3 ]; then
		tmux_screen | tail -15 | sed 's/^/#   screen: /'
	fi
	tmux_stop
	check "$u: nothing of the box is left (box-shell)" no_shell_left
done
tap_done
