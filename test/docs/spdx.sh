#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# spdx.sh — every source file names its licence (LICENSE: Apache-2.0) in an SPDX line within
# its first three lines, so a file copied out of the tree still says under what terms.
# The source files are what git tracks as *.c *.h *.proto *.sh *.bash *.mk *.py *.js *.mjs
# *.cjs, Makefile, .ci/run and packaging/completion/boxctl — but not the corpora, data a
# test feeds a program as it is (test/shell/diff/'s scripts, every */corpus/ tree). The
# checker first runs on a fixture tree (one file tagged, one not, one corpus file), so a
# checker that finds nothing fails too.
# Trusts: nothing; it is test code reading the sources.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
root=$(cd "$here/../.." && pwd)
TAG='SPDX-License-Identifier: Apache-2.0'

# sources: the tracked source files under the current directory, one per line.
sources() {
	git ls-files -- '*.c' '*.h' '*.proto' '*.sh' '*.bash' '*.mk' '*.py' '*.js' '*.mjs' '*.cjs' \
		Makefile .ci/run packaging/completion/boxctl |
		grep -vE '^test/shell/diff/.*\.sh$|(^|/)corpus/'
}

# untagged: the sources without the tag in their first three lines.
untagged() {
	local f
	sources | while IFS= read -r f; do
		[ -f "$f" ] || continue
		head -n 3 -- "$f" | grep -qF "$TAG" || printf '%s\n' "$f"
	done
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(
	cd "$tmp" && git init -q . && mkdir -p a test/shell/diff/x test/fuzz/corpus/y &&
		printf '/* %s */\nint x;\n' "$TAG" >a/good.c &&
		printf '#!/bin/sh\necho no licence\n' >a/bad.sh &&
		printf 'echo data\n' >test/shell/diff/x/data.sh &&
		printf 'junk\n' >test/fuzz/corpus/y/in.c &&
		git add -A
) >/dev/null 2>&1
got=$(cd "$tmp" && untagged | tr '\n' ' ')
if [ "$got" = "a/bad.sh " ]; then
	ok "the checker finds the fixture's one untagged source and skips its corpora"
else
	not_ok "the checker finds the fixture's one untagged source and skips its corpora (got: $got)"
fi

cd "$root" || exit 1
n=$(sources | wc -l)
if [ "$n" -gt 100 ]; then
	ok "the tree has $n source files to check"
else
	not_ok "the tree has source files to check (found $n: not a git checkout?)"
fi
bad=$(untagged)
if [ -z "$bad" ]; then
	ok "every source file carries '$TAG' in its first three lines"
else
	not_ok "every source file carries '$TAG' in its first three lines"
	printf '%s\n' "$bad" | head -20 | sed 's/^/#   untagged: /'
fi
tap_done
