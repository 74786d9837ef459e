#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# parsers.sh — numbers from the environment, the kernel or a peer are parsed
# by common/parse (whole string, overflow refused), never by strtol/atoi/sscanf,
# which accept blanks, signs and trailing junk and wrap or saturate in silence.
# Program and library sources only (tests and benchmarks may use libc).
# Known and left, each with the number of calls it still has: none.
# Trusts: nothing; it is test code reading the sources.
. "$(dirname "$0")/../lib.sh"

cd "$(dirname "$0")/../.." || exit 1
declare -A known=()
pattern='\b(strto(l|ul|ll|ull|imax|umax)|atoi|atol|atoll|sscanf)[[:space:]]*\('
bad=0
dirs="common proto libboxpolicy boxd boxctl box-policyd box-clientd box-recheck box-trampoline box-gateway"
files=$(git ls-files -- $dirs 2>/dev/null) || files=$(find $dirs -type f)
for f in $(printf '%s\n' $files | grep -E '\.(c|h)$'); do
	n=$(grep -cE "$pattern" "$f")
	want=${known[$f]:-0}
	if [ "$n" -gt "$want" ]; then
		not_ok "$f: $n raw strtol/atoi/sscanf call(s); use common/parse.h"
		grep -nE "$pattern" "$f" | sed 's/^/#   /'
		bad=1
	fi
done
[ $bad -eq 0 ] && ok "no raw strtol/atoi/sscanf in program or library sources (known: ${!known[*]:-none})"
tap_done
