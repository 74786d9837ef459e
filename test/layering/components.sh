#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# components.sh — every test `make check` runs belongs to a component, so that
# `make check-COMPONENT` (test/components.mk) runs it for the part it tests: a test no
# component names would run only in the whole `make check`. Every component
# test/components.mk declares has at least one test, and HACKING.md names its target.
# Trusts: nothing; it is test code reading the Makefile's own lists.
. "$(dirname "$0")/../lib.sh"

cd "$(dirname "$0")/../.." || exit 1
map=$(make -s --no-print-directory print-test-components 2>&1)
check "make print-test-components lists the tests" test "$(wc -l <<<"$map")" -gt 50
orphans=$(awk 'NF == 1 { print $1 }' <<<"$map")
check "every test belongs to a component${orphans:+ (none: $(echo $orphans))}" test -z "$orphans"
comps=$(make -s --no-print-directory print-components | tr ' ' '\n' | grep .)
check "test/components.mk declares components" test "$(wc -l <<<"$comps")" -gt 10
for c in $comps; do
	n=$(awk -v c="$c" '{ for (i = 2; i <= NF; i++) if ($i == c) { n++; break } } END { print n + 0 }' <<<"$map")
	check "check-$c: $n tests" test "$n" -gt 0
	check "HACKING.md names make check-$c" grep -q "check-$c\b" HACKING.md
done
tap_done
