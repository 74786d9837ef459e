#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# coverage.sh — the manual pages in docs/ cover what the programs accept, asked
# of the programs themselves (so a new key, action or command without its
# documentation fails here):
#   - docs/box.ini.5.md: every key boxctl accepts in each section (from the
#     "unknown key; accepted: …" refusal), in that section's part of the page;
#   - docs/box-policy.5.md: every action, every input field of each action,
#     every entity type and every enum value (from the "valid …:" lists of the
#     policy loader's refusals);
#   - docs/boxctl.1.md: every command of `boxctl --help` has its own heading;
#   - docs/boxd.8.md: every option of `boxd --help`.
# A name counts as documented when it appears inside a `code span` (alone or
# among space- or comma-separated words).
# Trusts: nothing; it is test code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
root=$(cd "$here/../.." && pwd)
bin=$(cd "$(dirname "$BOX_BIN")" && pwd)/$(basename "$BOX_BIN")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

# in_code FILE NAME: NAME appears in a code span of FILE.
in_code() {
	grep -qE '`([^`]*[ ,(|=])?'"$(printf '%s' "$2" | sed 's/[.[\*^$|?+(){}]/\\&/g')"'([ ,)|=:][^`]*)?`' "$1"
}

# part FILE HEADING-PREFIX: the lines of FILE from the "## PREFIX" heading to the next "## ".
part() {
	awk -v h="## $2" 'index($0, h) == 1 { on = 1; print; next } on && /^## / { exit } on' "$1"
}

# ---- box.ini(5) ----
page=$root/docs/box.ini.5.md
if [ ! -f "$page" ]; then
	not_ok "docs/box.ini.5.md exists"
else
	cat >cov.ini <<'EOF'
[box]
name = g-cov
zz = 1
[agent]
command = /usr/bin/true
zz = 1
[agent.filesystem]
zz = /tmp
[tool.t]
command = /usr/bin/true
zz = 1
[tool.t.network]
zz = 1
[tool.t.filesystem]
zz = /tmp
[egress.e]
zz = 1
[mcp.m]
type = stdio
zz = 1
[gateway]
zz = 1
EOF
	"$bin/boxctl" check -c cov.ini 2>err >/dev/null
	n=0
	while read -r section keys; do
		case $section in
		agent.filesystem) heading="[agent]" ;;
		tool.*) heading="[tool.NAME]" ;;
		egress.*) heading="[egress.NAME]" ;;
		mcp.*) heading="[mcp.NAME]" ;;
		*) heading="[$section]" ;;
		esac
		part "$page" "$heading" >sect
		missing=
		for k in $keys; do
			n=$((n + 1))
			in_code sect "$k" || missing="$missing $k"
		done
		if [ -z "$missing" ] && [ -s sect ]; then
			ok "box.ini.5.md documents every key of [$section] under $heading"
		else
			not_ok "box.ini.5.md documents every key of [$section] under $heading (missing:${missing:- the section})"
		fi
	done < <(sed -n 's/^boxctl: cov.ini:[0-9]*: \[\([^]]*\)\] zz: unknown key; accepted: /\1 /p' err)
	check "box.ini: the keys of 9 sections were asked (got $n keys)" test "$n" -ge 50
fi

# ---- box-policy(5) ----
page=$root/docs/box-policy.5.md
# valid LIST-KIND POLICY-TEXT: the names after "valid LIST-KIND: " in the refusal of TEXT
valid() {
	printf '%s\n' "$2" >p.dw
	"$bin/boxctl" policy check --home /home/dev p.dw 2>&1 |
		sed -n "s/.*valid $1: //p" | head -1 | tr -d ',' | tr ' ' '\n'
}
if [ ! -f "$page" ]; then
	not_ok "docs/box-policy.5.md exists"
else
	actions=$(valid actions 'permit (principal, action == Box::Action::"zz", resource);')
	types=$(valid 'entity types' 'permit (principal is Box::Zz, action, resource);')
	check "policy: the loader lists 10 actions" test "$(echo "$actions" | wc -w)" -eq 10
	check "policy: the loader lists the entity types" test "$(echo "$types" | wc -w)" -ge 9
	missing=
	for a in $actions; do
		in_code "$page" "$a" || missing="$missing $a"
		fields=$(valid "fields of Box::Action::\"$a\"" \
			"permit (principal, action == Box::Action::\"$a\", resource) when { context.input.zz == 1 };")
		[ -n "$fields" ] || missing="$missing (fields of $a: none listed)"
		for f in $fields; do
			part "$page" "Actions" | grep -F -- "| \`$a\`" | grep -qF "\`$f\`" ||
				missing="$missing $a.$f"
		done
	done
	for t in $types; do
		in_code "$page" "$t" || missing="$missing $t"
		case $t in Box::Agent | Box::Resource | Box::Action) continue ;; esac
		values=$(valid "values of $t" \
			"permit (principal, action, resource) when { principal == $t::\"zz\" };")
		[ -n "$values" ] || missing="$missing (values of $t: none listed)"
		for v in $values; do
			part "$page" "Actions" | grep -F -- "| \`$t\`" | grep -qE "[\` ]$v[\` ]" ||
				missing="$missing $t::$v"
		done
	done
	if [ -z "$missing" ]; then
		ok "box-policy.5.md documents every action, field, entity type and enum value"
	else
		not_ok "box-policy.5.md documents every action, field, entity type and enum value (missing:$missing)"
	fi
fi

# ---- boxctl(1), boxd(8) ----
page=$root/docs/boxctl.1.md
cmds=$("$bin/boxctl" --help | sed -n 's/^  boxctl \([a-z]*\).*/\1/p')
check "boxctl --help lists its commands" test "$(echo "$cmds" | wc -w)" -ge 6
missing=
for c in $cmds; do
	[ -f "$page" ] && grep -q "^### boxctl $c" "$page" || missing="$missing $c"
done
for sub in check eval; do
	[ -f "$page" ] && grep -q "^### boxctl policy $sub" "$page" || missing="$missing policy-$sub"
done
if [ -z "$missing" ]; then
	ok "boxctl.1.md has a section for every command"
else
	not_ok "boxctl.1.md has a section for every command (missing:$missing)"
fi
page=$root/docs/boxd.8.md
opts=$("$bin/boxd" --help 2>&1 | grep -o -- '--[a-z]*' | sort -u)
missing=
for o in $opts; do
	[ -f "$page" ] && grep -q -- "boxd $o" "$page" || missing="$missing $o"
done
if [ -n "$opts" ] && [ -z "$missing" ]; then
	ok "boxd.8.md documents every option of boxd --help"
else
	not_ok "boxd.8.md documents every option of boxd --help (missing:${missing:- none found})"
fi
tap_done
