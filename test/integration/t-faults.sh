#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-faults.sh — fail closed when a part of a running box dies (docs/boxd.8.md, docs/design.md):
# each per-box daemon (box-policyd, box-gateway, box-shell, box-mcpd) killed with SIGKILL in a
# running box ends the box — boxctl exits 1 with "DAEMON exited (…): the box was stopped", and
# nothing of the box is left: no process, no mount namespace of the box's, no cgroup of its own —
# while its state dir (decisions.jsonl) stays; an embedded boxd killed takes its box with it. As
# root and as the ordinary user boxtest.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
set -u
cd "$W"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}

for p in box-mcpd box-shell; do
	if [ ! -x "$RB/$p" ]; then
		not_ok "$p is built ($BOX_BIN/$p)"
		tap_done
		exit 1
	fi
done

users=$(id -un)
boxtest_or_skip "faults in boxes of boxtest" && users="$users boxtest"

# A stdio MCP server for box-mcpd (it reads requests until its stdin closes).
cat >"$W/srv.py" <<'EOF'
import sys
for line in sys.stdin:
    pass
EOF
chmod 644 "$W/srv.py"

# mkini FILE NAME WITH-MCP: a box whose agent sleeps; box-policyd, box-gateway and box-shell
# run for every box, box-mcpd for one with a stdio [mcp] server.
mkini() {
	{
		printf '[box]\nname = %s\n\n[agent]\ncommand = /bin/sleep 120\nworkspace = %s\npids_max = 256\n' "$2" "$W"
		if [ "$3" = mcp ]; then
			printf '\n[mcp.srv]\ntype = stdio\nalias = srv\ncommand = /usr/bin/python3 %s/srv.py\n' "$W"
			printf '\n[mcp.srv.filesystem]\nread_file = %s/srv.py\n' "$W"
		fi
	} >"$1"
	chmod 644 "$1"
}

# gone PIDS...: none of PIDS is alive any more (after a grace of up to 30 s).
gone() {
	local p alive
	for _ in $(seq 300); do
		alive=0
		for p in "$@"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ "$alive" = 0 ] && return 0
		sleep 0.1
	done
	return 1
}

# no_mntns INODE-LINK: no process is in that mount namespace any more (one stat of every
# process's link, not a readlink each).
no_mntns() {
	for _ in $(seq 300); do
		stat -c '%N' /proc/[0-9]*/ns/mnt 2>/dev/null | grep -qF "'$1'" || return 0
		sleep 0.1
	done
	return 1
}

# state_dir U NAME: where an embedded box of U keeps its state.
state_dir() {
	if [ "$1" = "$(id -un)" ]; then
		echo "$XDG_STATE_HOME/box/$2"
	else
		echo "$(getent passwd "$1" | cut -d: -f6)/.local/state/box/$2"
	fi
}

# fault U VICTIM: a box of U; VICTIM (a daemon's name, or boxd) is killed with SIGKILL once
# the agent runs; then what is left of the box is checked.
fault() {
	local u=$1 victim=$2 name="flt-$$-${2#box-}" with=none bp boxd agent vp rc cg mnt pids
	[ "$victim" = box-mcpd ] && with=mcp
	mkini "$W/$name.ini" "$name" "$with"
	as_user "$u" "'$RB/boxctl' run -q -c '$W/$name.ini'" >"$W/$name.out" 2>"$W/$name.err" &
	bp=$!
	_run_pids+=("$bp")
	boxd=$(wait_below "$bp" boxd)
	agent=$([ -n "$boxd" ] && wait_below "$boxd" sleep)
	if [ -z "$agent" ]; then
		not_ok "$u: $victim: the box runs (its agent sleeps)"
		kill -9 "$bp" 2>/dev/null
		wait "$bp" 2>/dev/null
		return
	fi
	if [ "$victim" = boxd ]; then
		vp=$boxd
	else
		vp=$(wait_below "$boxd" "$victim")
	fi
	check "$u: $victim: runs for the box" test -n "$vp"
	pids=$(descendants "$boxd" | cut -d' ' -f1)
	# The box's own cgroup (pids_max): the v2 one, or the v1 pids hierarchy's where pids is there.
	cg=$(sed -n 's/^[0-9]*:pids:\(.*\)/pids\1/p' "/proc/$agent/cgroup")
	[ -n "$cg" ] || cg=$(sed -n 's/^0:://p' "/proc/$agent/cgroup")
	mnt=$(readlink "/proc/$agent/ns/mnt")
	[ -n "$vp" ] && kill -KILL "$vp"
	# boxctl ends by itself; a hang is killed after 60 s and fails the checks below.
	for _ in $(seq 600); do kill -0 "$bp" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$bp" 2>/dev/null
	wait "$bp"
	rc=$?
	check "$u: $victim killed: boxctl exits 1 (rc $rc)" test "$rc" = 1
	if [ "$victim" = boxd ]; then
		check "$u: boxd killed: boxctl says the box's boxd is gone" grep -q "^boxctl: error: " "$W/$name.err"
	else
		check "$u: $victim killed: \"$victim exited (…): the box was stopped\"" \
			grep -q "^boxctl: error: $victim exited (.*): the box was stopped" "$W/$name.err"
	fi
	# shellcheck disable=SC2086
	check "$u: $victim killed: no process of the box is left" gone $boxd $pids
	check "$u: $victim killed: no process is in the box's mount namespace" no_mntns "$mnt"
	# The agent's cgroup, when it is one of the box's own (below the owner's, never the root).
	case $victim/$cg in
	boxd/*)
		# Nobody is left to remove it: an empty cgroup of a box whose boxd was killed stays
		# until the host's cgroup tree is cleaned (docs/boxd.8.md); the processes are gone.
		;;
	*/ | */pids/ | */)
		# An ordinary user's box where the owner has no delegated cgroup: RLIMIT_NPROC instead.
		skip "$u: $victim killed: the box's cgroup is removed" "the box ran without a cgroup of its own here (${cg:-none})"
		;;
	*)
		check "$u: $victim killed: the box's cgroup is removed (/sys/fs/cgroup/${cg#/})" \
			sh -c "for i in \$(seq 300); do [ ! -d '/sys/fs/cgroup/${cg#/}' ] && exit 0; sleep 0.1; done; exit 1"
		;;
	esac
	if [ "$victim" = boxd ]; then
		# boxd had no time to finish: nothing may claim the box still runs.
		as_user "$u" "'$RB/boxctl' ps" >"$W/$name.ps" 2>&1
		check "$u: boxd killed: ps lists no box of this name" \
			test "$(grep -c "^$name[[:space:]]" "$W/$name.ps")" = 0
	fi
	check "$u: $victim killed: the state dir is intact (decisions.jsonl)" \
		test -f "$(state_dir "$u" "$name")/decisions.jsonl"
}

for u in $users; do
	for victim in box-policyd box-gateway box-shell box-mcpd boxd; do
		fault "$u" "$victim"
	done
done
tap_done
