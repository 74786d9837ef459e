#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# refs.sh — what the tree cites is in the tree. Every file git tracks (code, comments,
# tests, docs) may name a Markdown file only if it exists in the repository: under the
# root, beside the file that names it, or in docs/ (a section of a specification kept
# elsewhere is no reference a reader of a clone can follow: point at docs/ instead). And no
# file cites a tracker ("issue 12 item 3"): the tracker is not in a clone either; a comment
# says why in words, or points at docs/. Links inside Markdown are links.sh's. The checker
# is first run on a small fixture tree with known bad references, so a checker that finds
# nothing fails too.
# Trusts: nothing; it is test code reading the sources.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
root=$(cd "$here/../.." && pwd)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

declare -A known=() # none left; a file listed here may keep that many

# refs TOP FILE...: "FILE:LINE: what" for each reference that leaves the tree, in order.
refs() {
	local top=$1 f n tok
	shift
	(
		cd "$top" || exit 1
		grep -nIE '[Ii]ssues? [0-9]+' -- "$@" | sed -E 's#^([^:]+):([0-9]+):.*#\1:\2: cites a tracker issue#'
		grep -nIoE '[A-Za-z0-9_./:${}-]*[A-Za-z0-9_-]\.md\b' -- "$@" |
			while IFS=: read -r f n tok; do
				# not a file of the tree: a URI, a host path, a path made of variables
				case $tok in *:* | /* | *'$'* | *'{'* | *'}'*) continue ;; esac
				tok=${tok#./}
				[ -e "$tok" ] || [ -e "${f%/*}/$tok" ] || [ -e "docs/$tok" ] ||
					echo "$f:$n: names $tok, which is not in the repository"
			done
	) | sort -t: -k1,1 -k2,2n
}

# ---- the checker finds what it must find (fixture tree) ----
fx=$tmp/fx
mkdir -p "$fx/docs" "$fx/src"
printf '# x\n' >"$fx/docs/design.md"
printf '# r\n' >"$fx/src/README.md"
printf '/* see docs/design.md, README.md and design.md */\n/* DESIGN.md §2 */\n' >"$fx/src/a.c"
printf '# (issue 12 item 3)\n# https://example.com/NOTES.md is a page, $root/x.md a variable, /usr/y.md the host\n# spec/SANDBOX.md\n' >"$fx/src/b.sh"
refs "$fx" src/a.c src/b.sh >"$tmp/fx.out"
want="src/a.c:2: names DESIGN.md, which is not in the repository
src/b.sh:1: cites a tracker issue
src/b.sh:3: names spec/SANDBOX.md, which is not in the repository"
if [ "$(cat "$tmp/fx.out")" = "$want" ]; then
	ok "the reference checker reports foreign files and tracker issues, and only those"
else
	not_ok "the reference checker reports foreign files and tracker issues, and only those"
	diff <(echo "$want") "$tmp/fx.out" | sed 's/^/#   /'
fi

# ---- the repository ----
cd "$root" || exit 1
# Data is not cited: fuzz seeds stay as found, lock files name what their packages ship.
files=$(git ls-files 2>/dev/null |
	grep -vE '^test/docs/(refs|links)\.sh$|^test/fuzz/corpus/|\.json$')
if [ -z "$files" ]; then
	skip "references in the tree" "not a git checkout"
	tap_done
	exit 0
fi
# shellcheck disable=SC2086
refs "$root" $files >"$tmp/out"
bad=0
for f in $(cut -d: -f1 "$tmp/out" | sort -u); do
	n=$(grep -c "^$f:" "$tmp/out")
	if [ "$n" -gt "${known[$f]:-0}" ]; then
		grep "^$f:" "$tmp/out" | sed 's/^/#   /'
		bad=1
	fi
done
if [ $bad -eq 0 ]; then
	ok "no file names a file outside the repository or cites a tracker issue (known: ${!known[*]})"
else
	not_ok "no file names a file outside the repository or cites a tracker issue"
fi
tap_done
