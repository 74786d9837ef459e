#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# links.sh — the project documents itself: README.md, HACKING.md, docs/*.md and
# every */README.md may link only inside the repository, and every link must
# resolve. Checked per file: no mention of ../shared (a clone has none); each
# Markdown link [text](target) outside fenced code blocks that is not a URL
# (http:, https:, mailto:) names a file or directory that exists under the
# repository root, and its #anchor (or a bare #anchor) names a heading of the
# target Markdown file (GitHub's slugs: lowercase, punctuation dropped,
# spaces to hyphens). The checker is first run on a small fixture tree with
# known dead links, so a checker that finds nothing fails too.
# Trusts: nothing; it is test code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
root=$(cd "$here/../.." && pwd)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# slugs FILE: GitHub-style anchors of FILE's headings, one per line.
slugs() {
	awk '/^```/ { fence = !fence; next } !fence && /^#+ / { sub(/^#+ +/, ""); print }' "$1" |
		tr '[:upper:]' '[:lower:]' | sed -e 's/[^a-z0-9 _-]//g' -e 's/ /-/g'
}

# links FILE: "LINE TARGET" for each Markdown link outside fenced code blocks.
links() {
	awk '/^```/ { fence = !fence; next }
	     !fence {
		line = $0
		# drop inline code spans: a link inside backticks is an example, not a link
		gsub(/`[^`]*`/, "", line)
		while (match(line, /\]\([^) ]+\)/)) {
			print NR, substr(line, RSTART + 2, RLENGTH - 3)
			line = substr(line, RSTART + RLENGTH)
		}
	     }' "$1"
}

# check_file ROOT REL: prints one "DEAD: …" line per problem; returns 1 when there is one.
check_file() {
	local top=$1 rel=$2 file=$1/$2 dir bad=0 n target path anchor abs relt
	dir=$(dirname "$file")
	if grep -n '\.\./shared' "$file" >"$tmp/shared"; then
		while IFS=: read -r n _; do
			echo "DEAD: $rel:$n: names ../shared, which a clone does not have"
		done <"$tmp/shared"
		bad=1
	fi
	while read -r n target; do
		case $target in http://* | https://* | mailto:*) continue ;; esac
		path=${target%%#*}
		anchor=
		[ "$path" != "$target" ] && anchor=${target#*#}
		if [ -z "$path" ]; then
			abs=$file
		else
			case $path in /*) abs=$top$path ;; *) abs=$dir/$path ;; esac
			abs=$(realpath -m "$abs")
			relt=${abs#"$top"/}
			if [ "$abs" = "$relt" ] && [ "$abs" != "$top" ]; then
				echo "DEAD: $rel:$n: ($target) leaves the repository"
				bad=1
				continue
			fi
			if [ ! -e "$abs" ]; then
				echo "DEAD: $rel:$n: ($target) does not exist"
				bad=1
				continue
			fi
		fi
		if [ -n "$anchor" ] && [ -f "$abs" ] && [ "${abs%.md}" != "$abs" ] &&
			! slugs "$abs" | grep -qxF -- "$anchor"; then
			echo "DEAD: $rel:$n: ($target) has no heading #$anchor"
			bad=1
		fi
	done < <(links "$file")
	return $bad
}

# check_tree ROOT: every documentation file of ROOT; prints the problems.
check_tree() {
	local top=$1 f bad=0
	for f in "$top"/README.md "$top"/HACKING.md "$top"/docs/*.md "$top"/*/README.md; do
		[ -f "$f" ] || continue
		check_file "$top" "${f#"$top"/}" || bad=1
	done
	return $bad
}

# ---- the checker finds what it must find (fixture tree) ----
fx=$tmp/fx
mkdir -p "$fx/docs" "$fx/sub"
printf '# Top\n## A section\n[ok](docs/a.md) [ok dir](sub) [anchor](#a-section) [url](https://example.com/x)\n' >"$fx/README.md"
printf '# A\n[up](../README.md#top) [gone](missing.md)\n[shared](../../shared/DESIGN.md)\n' >"$fx/docs/a.md"
printf '[bad anchor](../README.md#nowhere) [out](../../etc/passwd)\n```\n[in code](nothing.md)\n```\n`[inline](nothing.md)` see ../shared/spec\n' >"$fx/docs/b.md"
check_tree "$fx" >"$tmp/fx.out"
rc=$?
want="DEAD: docs/a.md:3: names ../shared, which a clone does not have
DEAD: docs/a.md:2: (missing.md) does not exist
DEAD: docs/a.md:3: (../../shared/DESIGN.md) leaves the repository
DEAD: docs/b.md:5: names ../shared, which a clone does not have
DEAD: docs/b.md:1: (../README.md#nowhere) has no heading #nowhere
DEAD: docs/b.md:1: (../../etc/passwd) leaves the repository"
if [ $rc -ne 0 ] && [ "$(cat "$tmp/fx.out")" = "$want" ]; then
	ok "the link checker reports dead links, ../shared, foreign paths and missing anchors"
else
	not_ok "the link checker reports dead links, ../shared, foreign paths and missing anchors"
	diff <(echo "$want") "$tmp/fx.out" | sed 's/^/#   /'
fi

# ---- the repository ----
for f in "$root"/README.md "$root"/HACKING.md "$root"/docs/*.md "$root"/*/README.md; do
	[ -f "$f" ] || continue
	rel=${f#"$root"/}
	check_file "$root" "$rel" >"$tmp/out"
	rc=$?
	if [ $rc -ne 0 ]; then
		not_ok "$rel: every link resolves inside the repository"
		grep '^DEAD' "$tmp/out" | sed 's/^/#   /'
	else
		ok "$rel: every link resolves inside the repository"
	fi
done
for d in box.ini.5.md box-policy.5.md boxctl.1.md boxd.8.md design.md sandbox.md; do
	check "docs/$d exists and README.md links to it" \
		grep -q "](docs/$d)" "$root/README.md"
done
tap_done
