#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run-tests.sh — run every test program and script, count TAP-like lines.
#
# Each test prints lines "ok - NAME", "not ok - NAME" or "ok - NAME # skip REASON"
# (a leading number is allowed). A test that exits non-zero without reporting a
# failure counts as one failure, and so does one that reports nothing at all:
# a test that asserts nothing is a broken test. The last line is the summary
# "N passed, N failed[, N skipped]" and the exit status is 1 on any failure.
# Each test gets BOX_TEST_TIMEOUT seconds (default 900).
#
# Tests run BOX_TEST_JOBS at a time (default: the number of CPUs; 1 runs them one by one).
# A script that cannot run beside others — it changes state of the whole host, or must
# see an idle machine — says so with a line "# box-test: serial" among its first 30
# lines; those run alone, one by one, after the others have finished. The per-test lines
# come in a fixed order whatever the timing: the parallel tests in the order given, then
# the serial ones in the order given. Each test's output is in build/test-logs/NAME.log.
# The parallel ones start longest first, by their times in the last run
# (build/test-logs/durations; a test without one counts as long), so that a long test
# does not start last.
# Trusts: the test list it is given (paths from the Makefile).
set -u

# Tests may change directory: hand them absolute paths.
build_prefix=${BOX_BUILD:-build}
mkdir -p "$build_prefix"
BOX_BUILD=$(cd "$build_prefix" && pwd)
BOX_BIN=$(cd "${BOX_BIN:-$build_prefix/bin}" 2>/dev/null && pwd || echo "$BOX_BUILD/bin")
export BOX_BUILD BOX_BIN

jobs=${BOX_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
case $jobs in
'' | *[!0-9]* | 0)
	echo "run-tests.sh: BOX_TEST_JOBS must be a positive number, not '$jobs'" >&2
	exit 2
	;;
esac
timeout_s=${BOX_TEST_TIMEOUT:-900}

log_dir="$BOX_BUILD/test-logs"
mkdir -p "$log_dir"
res_dir=$(mktemp -d "$log_dir/.results.XXXXXX") || exit 2
trap 'rm -rf "$res_dir"' EXIT
# Stopped: stop the running tests too (each run_one stops its own), then exit.
trap 'trap - INT TERM; kill -TERM $(jobs -p) 2>/dev/null; wait; exit 130' INT TERM

tests=("$@")
names=() logs=()
parallel=() serial=()
for i in "${!tests[@]}"; do
	t=${tests[$i]}
	names[i]=${t#"$build_prefix/"}
	logs[i]="$log_dir/$(echo "${names[i]}" | tr '/' '_').log"
	# Only scripts carry the tag (a program's first bytes are ELF).
	if head -c2 "$t" 2>/dev/null | grep -q '^#!' &&
		head -n30 "$t" | grep -qE '^# box-test: *serial\b'; then
		serial+=("$i")
	else
		parallel+=("$i")
	fi
done

# Start longest first, by the last run's times (unknown: first, as if long); print in order.
durations="$log_dir/durations"
order=("${parallel[@]}")
if [ -s "$durations" ] && [ "${#parallel[@]}" -gt 1 ]; then
	mapfile -t order < <(for i in "${parallel[@]}"; do
		d=$(awk -v n="${names[i]}" '$1 == n { d = $2 } END { print d == "" ? 1e9 : d }' "$durations")
		echo "$d $i"
	done | sort -s -k1,1gr | cut -d' ' -f2)
fi

# run_one I: run test I, count its lines, write "P F S SECONDS" to its result file.
run_one() {
	local i=$1 t=${tests[$1]} log=${logs[$1]} rc p s f start end
	start=$(date +%s.%N)
	# A hung test fails on its own instead of hanging the run. timeout puts the test in its
	# own process group: a stopped run (SIGINT, SIGTERM) stops it through timeout.
	timeout -k 10 "$timeout_s" "$t" >"$log" 2>&1 </dev/null &
	local tp=$!
	trap 'kill -TERM "$tp" 2>/dev/null; wait "$tp"; exit 143' TERM INT
	wait "$tp"
	rc=$?
	trap - TERM INT
	[ "$rc" -eq 124 ] && echo "not ok - ${names[i]} timed out after ${timeout_s}s" >>"$log"
	end=$(date +%s.%N)
	p=$(grep -cE '^ok( [0-9]+)?( -|$)' "$log" | head -1)
	s=$(grep -cE '^ok( [0-9]+)?( - .*)?# *(skip|SKIP)' "$log" | head -1)
	f=$(grep -cE '^not ok' "$log" | head -1)
	p=$((p - s))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - ${names[i]} exited with status $rc" >>"$log"
	fi
	if [ $((p + s + f)) -eq 0 ]; then
		f=1
		echo "not ok - ${names[i]} reported no test" >>"$log"
	fi
	# Written whole, then renamed: the reader never sees half a line.
	echo "$p $f $s $(awk -v a="$start" -v b="$end" 'BEGIN{print b-a}')" >"$res_dir/$i.tmp"
	mv "$res_dir/$i.tmp" "$res_dir/$i"
}

passed=0 failed=0 skipped=0
failures=()
# report I: the line of test I (its result file exists), its failures and skips.
report() {
	local i=$1 p f s secs
	read -r p f s secs <"$res_dir/$i"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	printf '%-48s %4d passed %3d failed %3d skipped  (%.1fs)\n' "${names[i]}" "$p" "$f" "$s" "$secs"
	if [ "$f" -ne 0 ]; then
		failures+=("${names[i]}")
		grep -E '^not ok' -B8 -A8 "${logs[i]}" | sed 's/^/    /' | head -80
	fi
	grep -E '^ok.*# *(skip|SKIP)' "${logs[i]}" | sed 's/^/    /'
}

# The parallel part: at most $jobs tests at once; each line is printed as soon as
# every test before it in the list has been printed.
next=0 # index into parallel[] of the next line to print
flush() {
	while [ "$next" -lt "${#parallel[@]}" ] && [ -e "$res_dir/${parallel[next]}" ]; do
		report "${parallel[next]}"
		next=$((next + 1))
	done
}
running=0
for i in "${order[@]}"; do
	while [ "$running" -ge "$jobs" ]; do
		wait -n
		running=$(jobs -rp | wc -l)
		flush
	done
	run_one "$i" &
	running=$((running + 1))
done
wait
flush

# The serial part: alone, one by one.
for i in "${serial[@]}"; do
	run_one "$i"
	report "$i"
done

# This run's times for the next one's order (kept for tests it did not run).
{
	for i in "${!tests[@]}"; do
		[ -e "$res_dir/$i" ] && echo "${names[i]} $(cut -d' ' -f4 "$res_dir/$i")"
	done
	[ -e "$durations" ] && cat "$durations"
} | awk '!seen[$1]++' >"$durations.tmp" && mv "$durations.tmp" "$durations"

# Tests over BOX_TEST_SLOW_OVER seconds (make check sets 30): named, so that the next change
# that slows one down sees it belongs in make check-slow (HACKING.md). Only a notice: a loaded
# machine makes every test slower.
if [ -n "${BOX_TEST_SLOW_OVER:-}" ]; then
	for i in "${!tests[@]}"; do
		[ -e "$res_dir/$i" ] || continue
		secs=$(cut -d' ' -f4 "$res_dir/$i")
		awk -v s="$secs" -v o="$BOX_TEST_SLOW_OVER" 'BEGIN { exit !(s > o) }' &&
			printf '# over %s s (HACKING.md: make check-slow): %s (%.0f s)\n' \
				"$BOX_TEST_SLOW_OVER" "${names[i]}" "$secs"
	done
fi

if [ ${#failures[@]} -ne 0 ]; then
	echo "failed: ${failures[*]} (logs in $log_dir)"
fi
if [ "$skipped" -ne 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
