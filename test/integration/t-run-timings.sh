#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-run-timings.sh — `boxctl run --timings` (docs/boxctl.1.md), as root and as the ordinary
# user boxtest: the start's timeline is printed after the disclosure, boxctl's steps and
# boxd's merged in time order (each step's ms since boxctl started never goes back), every
# step of boxd's start once: its spawns in the order boxd makes them (box-policyd, then
# box-gateway, the agent's plan, box-shell and the agent's trampoline at once), each daemon's
# ready after its spawn in whatever order they come, box-policyd's and box-gateway's before
# the agent's start gate opens, box-shell's anywhere after its spawn (it may come after the
# agent started: the reply waits for it); the last line the reply; a dry run's timeline
# ends at the disclosure, without the agent; without --timings nothing of it is printed.
# Only names and order are checked: how long a step takes is make bench's (bench/spawn).
. test/lib.sh
. test/integration/lib-run.sh
set -u

cd "$W"
mkdir proj
chmod 777 proj

users=(root)
[ "$(id -u)" -eq 0 ] || users=()
if have_boxtest; then
	users+=(boxtest)
else
	skip "as the ordinary user boxtest" "cannot create it (not root)"
fi

runas() {
	local who=$1
	shift
	if [ "$who" = root ]; then
		(eval "$*")
	else
		as_boxtest "$*"
	fi
}

# steps FILE: the timeline's step names, "who step", in printed order.
steps() {
	sed -nE 's/^box: +[0-9]+\.[0-9]  \+ *[0-9]+\.[0-9]  (boxctl|boxd) +(.*)$/\1 \2/p' "$1"
}

# not_in FILE TEXT: FILE has no line holding TEXT.
not_in() {
	! grep -qF -- "$2" "$1"
}

# in_order FILE: the ms column never goes back.
in_order() {
	sed -nE 's/^box: +([0-9]+\.[0-9])  \+.*/\1/p' "$1" | sort -c -g
}

# boxd's spawns, in the order it makes them, and the release of the agent after them.
boxd_spawns="boxd request received
boxd runtime dir made (beside the re-check)
boxd re-checked as the owner
boxd run lock, stdio and limits
boxd box-policyd spawned
boxd box-gateway spawned
boxd agent's plan built
boxd box-trampoline spawned
boxd box-shell spawned
boxd agent released (its start gate opened)
boxd agent started"
boxd_ready="boxd box-policyd ready
boxd box-gateway ready
boxd box-shell ready"

# line_of STEPS STEP: STEP's line number in STEPS (empty: absent).
line_of() {
	grep -nxF -- "$2" <<<"$1" | cut -d: -f1
}

# before STEPS A B: A and B are in STEPS, each once, A first.
before() {
	local a b
	a=$(line_of "$1" "$2")
	b=$(line_of "$1" "$3")
	[ -n "$a" ] && [ -n "$b" ] && [ "$(wc -w <<<"$a")" = 1 ] && [ "$(wc -w <<<"$b")" = 1 ] &&
		[ "$a" -lt "$b" ]
}

for u in "${users[@]}"; do
	p=timings-$u-$$ # this test's box names, distinct from other tests' and other runs'
	marker=$W/proj/ran-$u
	printf 'permit (principal, action, resource);\n' >"$p.cedar"
	# The agent runs one command through the shell alias (env finds sh in /run/box/bin first):
	# box-shell is ready before the agent ends.
	printf '[box]\nname = %s\npolicy = %s/%s.cedar\n\n[agent]\ncommand = /usr/bin/env\nworkspace = %s/proj\n\n[agent.filesystem]\nwrite = %s/proj\n' \
		"$p" "$W" "$p" "$W" "$W" >"$p.ini"
	chmod 644 "$p.ini" "$p.cedar"

	runas "$u" "'$RB/boxctl' run --timings -c $p.ini -- sh -c 'echo ran >$marker'" >"$p.out" 2>"$p.err"
	rc=$?
	grep -A22 '^box: timings' "$p.err" | sed 's/^/#   /'
	check "$u: run --timings exits 0 (rc $rc)" test "$rc" = 0
	check "$u: … the agent ran" test -e "$marker"
	check "$u: … a header says what the columns are" \
		grep -qxF 'box: timings (ms since boxctl started, +ms since the step before):' "$p.err"
	s=$(steps "$p.err")
	bs=$(grep '^boxd ' <<<"$s")
	check "$u: … boxd's steps are its spawns and the daemons' ready messages, each once" \
		test "$(sort <<<"$bs")" = "$(sort <<<"$boxd_spawns"$'\n'"$boxd_ready")"
	check "$u: … boxd's spawns in the order boxd makes them" \
		test "$(grep -vxF -f <(printf '%s\n' "$boxd_ready") <<<"$bs")" = "$boxd_spawns"
	for d in box-policyd box-gateway box-shell; do
		check "$u: … $d ready after its spawn" before "$bs" "boxd $d spawned" "boxd $d ready"
	done
	for d in box-policyd box-gateway; do
		check "$u: … the agent released only once $d is ready" \
			before "$bs" "boxd $d ready" "boxd agent released (its start gate opened)"
	done
	check "$u: … boxctl's own steps: checked, connected, sent, then the reply" \
		test "$(grep -c '^boxctl ' <<<"$s")" = 4
	n_checked=$(grep -n 'config and policy checked' <<<"$s" | cut -d: -f1)
	n_sent=$(grep -n 'request sent' <<<"$s" | cut -d: -f1)
	check "$u: … boxctl checked the config before it sent the request" \
		test "${n_checked:-9}" -lt "${n_sent:-0}"
	check "$u: … the ms column never goes back" in_order "$p.err"
	check "$u: … the last line is the reply" test "$(tail -n1 <<<"$s")" = "boxctl reply received"
	n_disclosed=$(grep -n -m1 "^box: agent: /usr/bin/env sh -c " "$p.err" | cut -d: -f1)
	n_timings=$(grep -n -m1 '^box: timings' "$p.err" | cut -d: -f1)
	check "$u: … the timeline comes after the disclosure" \
		test "${n_disclosed:-9999}" -lt "${n_timings:-0}"
	rm -f "$marker"
	runas "$u" "'$RB/boxctl' run --dry-run --timings -c $p.ini -- sh -c 'echo ran >$marker'" >/dev/null 2>"$p.dry"
	rc=$?
	check "$u: run --dry-run --timings exits 0 (rc $rc)" test "$rc" = 0
	s=$(steps "$p.dry")
	check "$u: … the dry run's timeline ends at the disclosure, without an agent" \
		test "$(grep '^boxd ' <<<"$s" | tail -n1)" = "boxd disclosure written (dry run)"
	check "$u: … no agent started in it" not_in "$p.dry" 'agent started'
	check "$u: … and the agent did not run" test ! -e "$marker"

	runas "$u" "'$RB/boxctl' run -c $p.ini -- sh -c :" >/dev/null 2>"$p.plain"
	rc=$?
	check "$u: a run without --timings exits 0 (rc $rc)" test "$rc" = 0
	check "$u: … and prints no timeline" not_in "$p.plain" 'box: timings'
done

tap_done
