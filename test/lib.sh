# SPDX-License-Identifier: Apache-2.0
# lib.sh — helpers for shell tests: TAP-like lines that test/run-tests.sh counts.
# Source it; call ok/not_ok/skip, or check "name" cmd...; end with tap_done.
# Trusts: nothing; it is test code.

BOX_BUILD=${BOX_BUILD:-build}
BOX_BIN=${BOX_BIN:-$BOX_BUILD/bin}
_tap_pass=0 _tap_fail=0 _tap_skip=0

ok() { echo "ok - $*"; _tap_pass=$((_tap_pass + 1)); }
not_ok() { echo "not ok - $*"; _tap_fail=$((_tap_fail + 1)); }
skip() { echo "ok - $1 # skip $2"; _tap_skip=$((_tap_skip + 1)); }
diag() { printf '#   %s\n' "$@"; }

# check NAME CMD...: ok when CMD exits 0.
check() {
	local name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}

tap_done() {
	echo "# $_tap_pass passed, $_tap_fail failed, $_tap_skip skipped"
	[ "$_tap_fail" -eq 0 ]
}
