#!/usr/bin/env bash
# run-tests.sh — run every test program and script, count TAP-like lines.
#
# Each test prints lines "ok - NAME", "not ok - NAME" or "ok - NAME # skip REASON"
# (a leading number is allowed). A test that exits non-zero without reporting a
# failure counts as one failure, and so does one that reports nothing at all:
# a test that asserts nothing is a broken test. The last line is the summary
# "N passed, N failed[, N skipped]" and the exit status is 1 on any failure.
# Each test gets BOX_TEST_TIMEOUT seconds (default 900).
set -u

# Tests may change directory: hand them absolute paths.
build_prefix=${BOX_BUILD:-build}
mkdir -p "$build_prefix"
BOX_BUILD=$(cd "$build_prefix" && pwd)
BOX_BIN=$(cd "${BOX_BIN:-$build_prefix/bin}" 2>/dev/null && pwd || echo "$BOX_BUILD/bin")
export BOX_BUILD BOX_BIN

passed=0 failed=0 skipped=0
failures=()
log_dir="$BOX_BUILD/test-logs"
mkdir -p "$log_dir"

for t in "$@"; do
	name=${t#"$build_prefix/"}
	log="$log_dir/$(echo "$name" | tr '/' '_').log"
	start=$(date +%s.%N)
	# A hung test fails on its own instead of hanging the run.
	timeout -k 10 "${BOX_TEST_TIMEOUT:-900}" "$t" >"$log" 2>&1
	rc=$?
	[ "$rc" -eq 124 ] && echo "not ok - $name timed out after ${BOX_TEST_TIMEOUT:-900}s" >>"$log"
	end=$(date +%s.%N)
	p=$(grep -cE '^ok( [0-9]+)?( -|$)' "$log" | head -1)
	s=$(grep -cE '^ok( [0-9]+)?( - .*)?# *(skip|SKIP)' "$log" | head -1)
	f=$(grep -cE '^not ok' "$log" | head -1)
	p=$((p - s))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - $name exited with status $rc" >>"$log"
	fi
	if [ $((p + s + f)) -eq 0 ]; then
		f=1
		echo "not ok - $name reported no test" >>"$log"
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	printf '%-48s %4d passed %3d failed %3d skipped  (%.1fs)\n' "$name" "$p" "$f" "$s" \
		"$(awk -v a="$start" -v b="$end" 'BEGIN{print b-a}')"
	if [ "$f" -ne 0 ]; then
		failures+=("$name")
		grep -E '^not ok' -A8 "$log" | sed 's/^/    /' | head -60
	fi
	grep -E '^ok.*# *(skip|SKIP)' "$log" | sed 's/^/    /'
done

if [ ${#failures[@]} -ne 0 ]; then
	echo "failed: ${failures[*]} (logs in $log_dir)"
fi
if [ "$skipped" -ne 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
