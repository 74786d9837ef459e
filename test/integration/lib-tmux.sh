# SPDX-License-Identifier: Apache-2.0
# lib-tmux.sh — a tmux driver for tests of programs at a real terminal (t-shell-tty.sh): one
# private tmux server (its own socket under $W, no config of the user's), one session whose
# single pane runs the command; keys are typed into it and its screen is read back, so a test
# sees what a person at the terminal would (prompts, echo, Ctrl-C, window-size changes).
# Source after lib-run.sh (uses $W). Every wait is bounded.
#
#   tmux_start ROWS COLS CMD   start CMD (a shell command line) in a ROWSxCOLS pane; CMD's
#                              exit status is written to $TMUX_RC when it ends
#   tmux_type TEXT             type TEXT literally, then Enter
#   tmux_keys KEY...           send tmux key names (C-c, Enter, …)
#   tmux_screen                the pane's text (with its scrollback)
#   tmux_wait TEXT [SECS]      until TEXT (fixed string) is on the screen (default 15 s)
#   tmux_count TEXT            how many screen lines contain TEXT
#   tmux_resize ROWS COLS      resize the window (the pane's program gets SIGWINCH)
#   tmux_wait_exit [SECS]      until CMD ended; prints its exit status ("timeout" if not)
#   tmux_stop                  kill the server (an EXIT trap should call it)
#   require_tmux               tmux is installed, or the script fails and ends
# Trusts: nothing; test code.

TMUX_SOCK=$W/tmux.sock
TMUX_RC=$W/tmux.rc
TMUX_SESSION=e2e
_tmux() { env -u TMUX tmux -S "$TMUX_SOCK" "$@"; }

# require_tmux: tmux is installed (make deps installs it), or the script fails there.
require_tmux() {
	command -v tmux >/dev/null && return 0
	not_ok "tmux is installed (make deps)"
	tap_done
	exit 1
}

tmux_start() {
	local rows=$1 cols=$2 cmd=$3
	rm -f "$TMUX_RC"
	printf 'set -g remain-on-exit on\nset -g history-limit 5000\nset -g status off\n' >"$W/tmux.conf"
	_tmux -f "$W/tmux.conf" new-session -d -s "$TMUX_SESSION" -x "$cols" -y "$rows" \
		"$cmd; echo \$? >'$TMUX_RC'"
}

tmux_type() {
	_tmux send-keys -t "$TMUX_SESSION" -l -- "$1"
	_tmux send-keys -t "$TMUX_SESSION" Enter
}

tmux_keys() { _tmux send-keys -t "$TMUX_SESSION" "$@"; }

tmux_screen() { _tmux capture-pane -p -J -S -5000 -t "$TMUX_SESSION" 2>/dev/null; }

tmux_wait() {
	local n=$((${2:-15} * 10))
	for _ in $(seq "$n"); do
		tmux_screen | grep -qF -- "$1" && return 0
		sleep 0.1
	done
	return 1
}

tmux_count() { tmux_screen | grep -cF -- "$1"; }

tmux_resize() { _tmux resize-window -t "$TMUX_SESSION" -x "$2" -y "$1"; }

tmux_wait_exit() {
	local n=$((${1:-15} * 10))
	for _ in $(seq "$n"); do
		[ -s "$TMUX_RC" ] && { cat "$TMUX_RC"; return 0; }
		sleep 0.1
	done
	echo timeout
	return 1
}

tmux_stop() { _tmux kill-server 2>/dev/null; rm -f "$TMUX_SOCK"; return 0; }
