#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-first-box.sh — README.md's "Your first box" walk-through, run as it is written
# (the fenced block after the `first-box` marker), as root and as boxtest, with
# the built boxctl first on PATH. It checks what the prose around it promises:
# init writes both files, check passes, the agent's shell prints its greeting,
# git runs as a tool, `rm -r .git` is refused by no_recursive_rm and .git
# survives, the log shows both, and suggest proposes a permit for tac.
# Trusts: nothing; test code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
. "$here/lib-run.sh"

readme="$here/../../README.md"
block=$(awk '/<!-- first-box/ { on = 1; next } on && /^```sh/ { inside = 1; next }
	inside && /^```/ { exit } inside { print }' "$readme")
if [ -z "$block" ]; then
	not_ok "README.md has the first-box block"
	tap_done
	exit 1
fi
ok "README.md has the first-box block ($(printf '%s\n' "$block" | wc -l) lines)"
printf '%s\n' "$block" >"$W/first-box.sh"
chmod 644 "$W/first-box.sh"

users=root
have_boxtest && users="root boxtest"
for u in $users; do
	d="$W/$u"
	mkdir -p "$d"
	[ "$u" = root ] || chown boxtest: "$d"
	# A PATH as a new user has it: the built boxctl, then the system's (no pyenv shims).
	AS_USER_DIR=$d as_user "$u" "PATH='$RB':/usr/local/bin:/usr/bin:/bin bash -e '$W/first-box.sh'" \
		>"$W/$u.out" 2>"$W/$u.err"
	rc=$?
	check "$u: the walk-through runs to its end (status 0)" test "$rc" -eq 0
	[ "$rc" -eq 0 ] || diag "$(tail -n 20 "$W/$u.err")"
	out="$W/$u.out"
	check "$u: init wrote box.ini and policy.cedar" \
		test -f "$d/hello-box/box.ini" -a -f "$d/hello-box/policy.cedar"
	check "$u: the agent's shell greets" grep -qx 'hello from the box' "$out"
	check "$u: rm -r .git was refused and .git survives" test -d "$d/hello-box/.git"
	check "$u: the refusal names the rule" grep -q 'no_recursive_rm' "$W/$u.err"
	check "$u: log: git ran as a tool (a shell:spawn permit)" \
		grep -qE 'permit shell:spawn /usr/bin/git' "$out"
	check "$u: log: rm was denied by no_recursive_rm" \
		grep -qE 'deny shell:exec rm no_recursive_rm' "$out"
	check "$u: suggest proposes a permit naming tac" \
		grep -q '^permit' "$out"
	check "$u: … and it names tac" grep -q '"tac"' "$out"
done
tap_done
