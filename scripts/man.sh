#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# man.sh SRC OUT — one man page from one page of docs/ (named NAME.N plus .md, whose first line
# is "# NAME(N) — what it is"). The converter is lowdown (ISC licence, Debian's `lowdown`
# package; docs/boxd.8.md says why): a build tool, nothing of it is linked or installed.
# Before converting: the title line becomes the NAME section, every heading moves up one
# level (## is a man section, ### a subsection; fenced code is left alone), links to other
# pages keep their text (a man page has no links), and each line
# "<!-- syscalls: DIR/FILE.c -->" becomes the list of system calls that file's allow-list
# names (scripts/syscalls.sh), so a daemon's page says what its filter says.
# Trusts: the tree's own files.
set -euo pipefail
src=$1 out=$2
base=$(basename "$src" .md)
name=${base%.*} section=${base##*.}
case $section in [1-8]) ;; *) echo "man.sh: $src: no man section in the name (NAME.N plus .md)" >&2; exit 2 ;; esac
command -v lowdown >/dev/null ||
	{ echo "man.sh: lowdown is not installed (make deps installs it)" >&2; exit 2; }
first=$(head -n 1 "$src")
case $first in
"# $name($section) — "*) what=${first#"# $name($section) — "} ;;
*) echo "man.sh: $src:1: the first line must be '# $name($section) — WHAT' (got: $first)" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp)
trap 'rm -f "$tmp" "$out.tmp"' EXIT
{
	printf '# NAME\n\n%s \\- %s\n\n' "$name" "$what"
	tail -n +2 "$src" | while IFS= read -r line; do
		case $line in
		'<!-- syscalls: '*' -->')
			f=${line#'<!-- syscalls: '}
			f=${f%' -->'}
			"$here/syscalls.sh" "$(dirname "$here")/$f" || exit 1
			;;
		*) printf '%s\n' "$line" ;;
		esac
	done | perl -ne '
		if (/^```/) { $fence = !$fence; print; next }
		unless ($fence) { s/^#(#+ )/$1/; s/\[([^]]+)\]\([^)]+\)/$1/g }
		print'
} >"$tmp"
lowdown -s -Tman -M "title=$(echo "$name" | tr a-z A-Z)" -M "section=$section" \
	-M "source=box" -M "volume=box manual" -o "$out.tmp" "$tmp"
mv -f "$out.tmp" "$out"
