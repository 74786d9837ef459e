#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# policy-cli.sh — what `boxctl policy check` and `boxctl check` say about a
# policy (docs/boxctl.1.md output rules): "N rules loaded" on stdout for a policy that
# loads (nothing there for one that does not), the permit-everything warning
# in the `boxctl: FILE:LINE:COL: warning: …` format from both commands (they
# share libboxpolicy's loader), and a misspelt action's suggestion from both.
# Trusts: nothing; it is test code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
boxctl=$(cd "$(dirname "$BOX_BIN")" && pwd)/$(basename "$BOX_BIN")/boxctl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

# expect NAME WANT_RC WANT_STDOUT_FILE WANT_STDERR_FILE CMD...
expect() {
	local name=$1 want_rc=$2 want_out=$3 want_err=$4
	shift 4
	"$@" >out 2>err
	local rc=$?
	if [ $rc -ne "$want_rc" ]; then
		not_ok "$name: exit $rc, expected $want_rc"
		sed 's/^/#   /' err
	elif ! cmp -s out "$want_out"; then
		not_ok "$name: stdout"
		diff "$want_out" out | sed 's/^/#   /'
	elif ! cmp -s err "$want_err"; then
		not_ok "$name: stderr"
		diff "$want_err" err | sed 's/^/#   /'
	else
		ok "$name"
	fi
}

warning='permits every action on every resource; only a forbid can deny anything, so name the actions it should permit'

printf '%s\n' '@id("reads") permit (principal, action == Box::Action::"fs:read", resource);' \
	'forbid (principal, action == Box::Action::"fs:delete", resource);' \
	'permit (principal, action == Box::Action::"fs:write", resource) when { context.input.path like "~/p/*" };' >three.dw
printf '3 rules loaded\n' >three.out
: >empty
expect "policy check: a clean policy says how many rules loaded" 0 three.out empty \
	"$boxctl" policy check --home /home/dev three.dw

printf 'permit (principal, action == Box::Action::"fs:read", resource);\n' >one.dw
printf '1 rule loaded\n' >one.out
expect "policy check: one rule is \"1 rule loaded\"" 0 one.out empty \
	"$boxctl" policy check --home /home/dev one.dw

: >zero.dw
printf '0 rules loaded\n' >zero.out
expect "policy check: an empty policy loads 0 rules" 0 zero.out empty \
	"$boxctl" policy check --home /home/dev zero.dw

printf '%s\n' '// everything' '  permit(principal, action, resource);' >all.dw
printf '1 rule loaded\n' >all.out
printf 'boxctl: all.dw:2:3: warning: rule 1 %s\n' "$warning" >all.err
expect "policy check: a permit-everything rule is a warning, and the policy loads" 0 all.out \
	all.err "$boxctl" policy check --home /home/dev all.dw

printf '%s\n' 'permit (principal, action == Box::Action::"fs:raed", resource);' >typo.dw
printf 'boxctl: typo.dw:1:30: error: rule 1: unknown action `Box::Action::"fs:raed"`; did you mean `fs:read`? valid actions: fs:read, fs:write, fs:delete, fs:move, fs:other, net:connect, http:request, shell:exec, shell:spawn, mcp:call\n' >typo.err
expect "policy check: a refused policy prints nothing on stdout, the suggestion on stderr" 2 \
	empty typo.err "$boxctl" policy check --home /home/dev typo.dw

# boxctl check: the same loader, so the same warning after "; policy: N rules"
mkdir -p ws
cat >box.ini <<INI
[box]
name = g-policy-cli
policy = all.dw
state_dir = $tmp/state

[agent]
command = /usr/bin/true
workspace = $tmp/ws
INI
"$boxctl" check -c box.ini >out 2>err
rc=$?
if [ $rc -eq 0 ] && grep -qx '; policy: 1 rule' out &&
	[ "$(cat err)" = "boxctl: $tmp/all.dw:2:3: warning: rule 1 $warning" ]; then
	ok "check: the permit-everything warning follows '; policy: 1 rule'"
else
	not_ok "check: the permit-everything warning follows '; policy: 1 rule' (rc $rc)"
	sed 's/^/#   out: /' out | tail -3
	sed 's/^/#   err: /' err
fi
sed -i 's/^policy = all.dw/policy = typo.dw/' box.ini
"$boxctl" check -c box.ini >out 2>err
rc=$?
if [ $rc -eq 2 ] && grep -q 'unknown action `Box::Action::"fs:raed"`; did you mean `fs:read`? valid actions: fs:read,' err; then
	ok "check: a misspelt action is refused with its suggestion"
else
	not_ok "check: a misspelt action is refused with its suggestion (rc $rc)"
	sed 's/^/#   err: /' err
fi
tap_done
