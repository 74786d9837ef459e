#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-run-dry.sh — `boxctl run --dry-run` (docs/boxctl.1.md), as root and as the ordinary user
# boxtest:
#  - the agent never runs (its marker file stays absent), exit 0;
#  - the disclosure is the one a real start prints (the same lines, but for the box's id), and a
#    last line says the agent was not started;
#  - the box is gone when run returns: a real run of the same name then starts at once;
#  - -q keeps only warnings; a policy that does not load refuses as check does (exit 2, no boxd);
#    --detach with --dry-run is a usage error.
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

for u in "${users[@]}"; do
	p=dry-$u-$$ # this test's box names, distinct from other tests' and other runs'
	marker=$W/proj/ran-$u
	printf 'permit (principal, action, resource);\n' >"$p.cedar"
	printf '[box]\nname = %s\npolicy = %s/%s.cedar\n\n[agent]\ncommand = /usr/bin/touch %s\nworkspace = %s/proj\n\n[agent.filesystem]\nwrite = %s/proj\n' \
		"$p" "$W" "$p" "$marker" "$W" "$W" >"$p.ini"
	chmod 644 "$p.ini" "$p.cedar"

	runas "$u" "'$RB/boxctl' run --dry-run -c $p.ini" >"$p.out" 2>"$p.dry"
	rc=$?
	sed 's/^/#   /' "$p.dry" | grep -v '^#   box:   ' | head -8
	check "$u: --dry-run exits 0 (rc $rc)" test "$rc" = 0
	check "$u: … the agent did not run" test ! -e "$marker"
	check "$u: … nothing on stdout" test ! -s "$p.out"
	check "$u: … the disclosure names the agent's program" \
		grep -qxF "box: agent: /usr/bin/touch $marker" "$p.dry"
	check "$u: … its last line says no agent started and the box is torn down" \
		bash -c "tail -n1 '$p.dry' | grep -qE '^box: dry run: the agent was not started; box $p \([0-9a-f]{12}\) is torn down$'"

	runas "$u" "'$RB/boxctl' run -c $p.ini" >/dev/null 2>"$p.real"
	rc=$?
	# A box still running under this name would refuse this run (exit 1, "already running").
	check "$u: the name is free: a real run of the same box starts right after (rc $rc)" test "$rc" = 0
	check "$u: … and its agent ran" test -e "$marker"
	# The same disclosure but for the box's id and the dry run's own last line.
	strip() { grep '^box: ' "$1" | grep -v '^box: dry run: ' | sed -E 's/[0-9a-f]{12}/ID/g'; }
	check "$u: the dry run's disclosure is the real start's" \
		bash -c "diff <($(declare -f strip); strip '$p.dry') <($(declare -f strip); strip '$p.real')"

	rm -f "$marker"
	runas "$u" "'$RB/boxctl' run -q --dry-run -c $p.ini" >/dev/null 2>"$p.q"
	rc=$?
	check "$u: -q --dry-run: exit 0, no agent (rc $rc)" test "$rc" = 0 -a ! -e "$marker"
	check "$u: … and no grant lines" bash -c "! grep -q '^box: agent: ' '$p.q'"

	runas "$u" "'$RB/boxctl' run --dry-run --detach -c $p.ini" >/dev/null 2>"$p.both"
	rc=$?
	check "$u: --dry-run --detach: usage error, exit 2 (rc $rc)" test "$rc" = 2
	check "$u: … saying they exclude each other" grep -q 'exclude each other' "$p.both"

	printf 'permit (principal, action, resource)\n' >"$p.cedar" # no ';'
	runas "$u" "'$RB/boxctl' run --dry-run -c $p.ini" >/dev/null 2>"$p.bad"
	rc=$?
	check "$u: --dry-run with a policy that does not load: exit 2 (rc $rc)" test "$rc" = 2
	check "$u: … with check's error, before any boxd" \
		bash -c "grep -qE ': error: ' '$p.bad' && ! grep -q boxd '$p.bad'"
done
tap_done
