#!/usr/bin/env bash
# run.sh — the differential corpus (issue 12 item 8): each script under
# test/shell/diff/sh-*/ runs in box-sh (allow-all policy) and in dash, each
# under bash-*/ in box-sh and in bash; stdout and the exit status must be the
# same, and stderr byte for byte after mapping the reference's prefix
# ("SCRIPT: line N:" for bash, "SCRIPT: N:" for dash) to "box-shell: line N:".
# A script NAME.sh may come with NAME.in (its standard input, else /dev/null).
# Each runs in a fresh empty directory with a fixed environment (LC_ALL=C).
# Usage: run.sh [SCRIPT...]   (default: the whole corpus)
# Trusts: nothing; it is test code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../lib.sh"
BOX_SH=${BOX_BIN:-build/bin}/box-sh
case $BOX_SH in /*) ;; *) BOX_SH=$PWD/$BOX_SH ;; esac
if [ ! -x "$BOX_SH" ]; then
	not_ok "box-sh is built ($BOX_SH)"
	tap_done
	exit 1
fi
tmp=$(mktemp -d /tmp/shcore-diff.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
echo 'permit(principal, action, resource);' >"$tmp/allow.cedar"

if [ $# -eq 0 ]; then
	set -- "$here"/sh-*/*.sh "$here"/bash-*/*.sh
fi

run_one() { # which-shell script workdir -> files out err rc in $tmp
	local shell=$1 script=$2 w=$3 in=/dev/null
	[ -f "${script%.sh}.in" ] && in=${script%.sh}.in
	rm -rf "$w" && mkdir -p "$w/w" "$w/s" "$w/h"
	cp "$script" "$w/s/t.sh"
	(
		cd "$w/w" || exit 99
		if [ "$shell" = box ]; then
			exec env -i PATH=/usr/bin:/bin HOME="$w/h" LC_ALL=C TZ=UTC \
				timeout -k 2 20 "$BOX_SH" --policy "$tmp/allow.cedar" ../s/t.sh a1 'a 2'
		else
			exec env -i PATH=/usr/bin:/bin HOME="$w/h" LC_ALL=C TZ=UTC \
				timeout -k 2 20 "$shell" ../s/t.sh a1 'a 2'
		fi
	) <"$in" >"$w.out" 2>"$w.err"
	echo $? >"$w.rc"
}

for script in "$@"; do
	group=$(basename "$(dirname "$script")")
	name=$group/$(basename "$script" .sh)
	case $group in
	sh-*) ref=dash ;;
	bash-*) ref=bash ;;
	*) not_ok "diff/$name: unknown group (sh-* or bash-*)"; continue ;;
	esac
	run_one "$ref" "$script" "$tmp/ref"
	run_one box "$script" "$tmp/box"
	if [ "$ref" = bash ]; then
		sed -i 's#^\.\./s/t\.sh: line \([0-9]*\):#box-shell: line \1:#' "$tmp/ref.err"
	else
		sed -i 's#^\.\./s/t\.sh: \([0-9]*\): #box-shell: line \1: #' "$tmp/ref.err"
	fi
	why=
	cmp -s "$tmp/ref.out" "$tmp/box.out" || why="stdout differs"
	cmp -s "$tmp/ref.err" "$tmp/box.err" || why="${why:+$why, }stderr differs"
	[ "$(cat "$tmp/ref.rc")" = "$(cat "$tmp/box.rc")" ] ||
		why="${why:+$why, }status $(cat "$tmp/box.rc") (against $ref $(cat "$tmp/ref.rc"))"
	if [ -z "$why" ]; then
		ok "diff/$name"
	else
		not_ok "diff/$name: $why"
		diff -u "$tmp/ref.out" "$tmp/box.out" | head -20 | sed 's/^/#   out /'
		diff -u "$tmp/ref.err" "$tmp/box.err" | head -10 | sed 's/^/#   err /'
	fi
done
tap_done
