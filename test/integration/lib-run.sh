# SPDX-License-Identifier: Apache-2.0
# lib-run.sh — shared setup for the t-run*.sh tests: real boxes started with
# `boxctl run`. Source after test/lib.sh.
#
# Copies boxctl, boxd and its helpers (box-trampoline, box-policyd, box-gateway,
# box-clientd, box-recheck, box-alias, box-shell) into a 0755 directory an ordinary user can reach ($RB), makes a 0755 work dir ($W), points BOX_SOCKET at a
# socket nobody listens on (so `run` starts an embedded boxd), and creates
# the ordinary user `boxtest` (with a home) when it is missing and we are
# root. Everything made here is removed by run_cleanup (an EXIT trap).
# Trusts: nothing; test code.

W=$(mktemp -d /tmp/box-t-run.XXXXXX)
chmod 755 "$W"
RB="$W/bin"
mkdir -p "$RB"
for p in boxctl boxd box-trampoline box-policyd box-gateway box-clientd box-recheck box-alias; do
	cp "$BOX_BIN/$p" "$RB/$p" || { echo "not ok - $p is built"; exit 1; }
done
# box-shell: boxd starts one per box (a test of boxd alone installs a stand-in instead).
[ -e "$BOX_BIN/box-shell" ] && cp "$BOX_BIN/box-shell" "$RB/box-shell"
# box-mcpd: boxd starts one per box with a stdio [mcp] server.
[ -e "$BOX_BIN/box-mcpd" ] && cp "$BOX_BIN/box-mcpd" "$RB/box-mcpd"
chmod 755 "$RB" "$RB"/*
export BOX_SOCKET="$W/no-service.sock"
export XDG_STATE_HOME="$W/state" # embedded boxes keep their state in the work dir
unset BOX_TEST_ABSENT BOX_TEST_LANDLOCK_ABI
_run_pids=()

# kill_tree PID: SIGKILL to PID and every process below it, children first named (a wrapper
# such as as_user's runuser leaves its shell and boxctl behind when it alone is killed).
kill_tree() {
	local c
	for c in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$c"; done
	kill -9 "$1" 2>/dev/null
	return 0
}

run_cleanup() {
	for p in "${_run_pids[@]}"; do kill_tree "$p"; done
	rm -rf "$W"
}
trap run_cleanup EXIT

# have_boxtest: create the ordinary user when missing (root only).
# The user a root service boxd runs daemon OWN's process as: its own system user (box-policy,
# box-gateway, box-mcp), else the shared box-daemon, else nobody (boxd/daemon.c daemon_ids).
daemon_user() {
	local u
	for u in "$1" box-daemon nobody; do
		id "$u" >/dev/null 2>&1 && { echo "$u"; return 0; }
	done
	return 1
}

have_boxtest() {
	if ! id boxtest >/dev/null 2>&1; then
		[ "$(id -u)" -eq 0 ] || return 1
		useradd -m -s /bin/sh boxtest >/dev/null 2>&1 || return 1
	fi
	[ -d "$(getent passwd boxtest | cut -d: -f6)" ] || return 1
	return 0
}

# boxtest_or_skip WHAT: true when root can run WHAT as the user boxtest (have_boxtest); else
# WHAT is said skipped, with the reason, and false.
boxtest_or_skip() {
	[ "$(id -u)" -eq 0 ] && have_boxtest && return 0
	skip "$1" "needs root to create and become the user boxtest"
	return 1
}

# root_or_end WHAT [WHY]: a test that needs root (its own service boxd) goes on as root; else
# WHAT is said skipped (WHY, default "needs root") and the test ends there.
root_or_end() {
	[ "$(id -u)" -eq 0 ] && return 0
	skip "$1" "${2:-needs root}"
	tap_done
	exit 0
}

# as_boxtest CMD: run a shell command line as boxtest in $W (no XDG dirs).
as_boxtest() {
	su -s /bin/sh boxtest -c "cd '$W' && env -u XDG_RUNTIME_DIR -u XDG_STATE_HOME BOX_SOCKET='$BOX_SOCKET' $*"
}

# as_user U CMD: a shell command line as U in $AS_USER_DIR (default $W) — the caller's own
# shell, or su to another user with no XDG dirs and the caller's BOX_SOCKET and ASAN_OPTIONS.
as_user() {
	local u=$1 d=${AS_USER_DIR:-$W}
	shift
	if [ "$u" = "$(id -un)" ]; then
		(cd "$d" && sh -c "$*")
	else
		su -s /bin/sh "$u" -c "cd '$d' && unset XDG_RUNTIME_DIR XDG_STATE_HOME && export BOX_SOCKET='$BOX_SOCKET' ASAN_OPTIONS='${ASAN_OPTIONS:-detect_leaks=0}' && $*"
	fi
}

# is_spare PID NAME: PID is a service boxd's spare NAME still waiting (its command line
# holds -w until a box or a client takes it: docs/boxd.8.md, "Spares").
is_spare() { [ "$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null)" = "$2 -w " ]; }
# waiting_spare BOXD NAME: BOXD's child NAME that waits as a spare, when one does.
waiting_spare() {
	local p
	for p in $(pgrep -P "$1" -x "$2"); do
		is_spare "$p" "$2" && { echo "$p"; return 0; }
	done
	return 1
}
# daemon_pids NAME: the NAME processes (box-policyd, box-gateway, …) of this test's
# binaries ($RB), without a service boxd's spares waiting.
daemon_pids() {
	local p
	for p in $(pgrep -x "$1"); do
		[ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$RB/$1" ] || continue
		is_spare "$p" "$1" || echo "$p"
	done
}

# wait_for FILE PATTERN: until PATTERN shows up in FILE (up to 60 s: only a hang takes that
# long, not a loaded machine running other tests beside this one).
wait_for() {
	for _ in $(seq 600); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# wait_for_cmd CMD...: until CMD succeeds (up to 60 s, as wait_for).
wait_for_cmd() {
	for _ in $(seq 600); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# no_process PATTERN: nothing matching PATTERN runs (after a grace of up to 30 s, which only
# a process that stays reaches). PATTERN must be this test's own: other tests and the
# user's boxes run beside it.
no_process() {
	for _ in $(seq 300); do
		pgrep -f "$1" >/dev/null || return 0
		sleep 0.1
	done
	return 1
}

# descendants PID: PID's processes, all generations below it, outermost first (one snapshot
# of the process table: "PID COMM" lines).
descendants() {
	ps -eo pid=,ppid=,comm= | awk -v top="$1" '
		{ pid[NR] = $1; ppid[NR] = $2; comm[NR] = $3 }
		END {
			want[top] = 1
			do {
				more = 0
				for (i = 1; i <= NR; i++)
					if ((ppid[i] in want) && !(pid[i] in want)) {
						want[pid[i]] = 1; more = 1; print pid[i], comm[i]
					}
			} while (more)
		}'
}

# find_below PID COMM: the first process named COMM below PID (outermost first).
find_below() {
	descendants "$1" | awk -v c="$2" '$2 == c { print $1; found = 1; exit } END { exit !found }'
}

# wait_below PID COMM: find_below, waiting up to 60 s (only a hang takes that long).
wait_below() {
	for _ in $(seq 600); do
		find_below "$1" "$2" && return 0
		sleep 0.1
	done
	return 1
}
