# SPDX-License-Identifier: Apache-2.0
# lib-smoke.sh — sourced by the bench run.sh scripts that make check also runs short
# (`run.sh --smoke`, through their smoke.sh): the mode, the build's paths, and how a result is
# told — TAP lines counted in smoke mode, plain report lines under `make bench`.
#   BENCH_NAME   set before sourcing: the prefix of every line ("mcp", "shell-box")
#   "$@"         the script's arguments: --smoke first selects smoke mode
# Defines: smoke (true/false), BOX_BUILD, BOX_BIN (absolute), ok, not_ok, say, bad, finish.
# Trusts: nothing; it is benchmark code.
smoke=false
[ "${1:-}" = --smoke ] && smoke=true
BOX_BUILD=${BOX_BUILD:-build}
BOX_BIN=${BOX_BIN:-$BOX_BUILD/bin}
BOX_BUILD=$(cd "$BOX_BUILD" && pwd)
BOX_BIN=$(cd "$BOX_BIN" && pwd)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}

pass=0 fail=0
ok() { echo "ok - $BENCH_NAME: $*"; pass=$((pass + 1)); }
not_ok() { echo "not ok - $BENCH_NAME: $*"; fail=$((fail + 1)); }
say() { if $smoke; then echo "# $*"; else echo "$*"; fi; }
# bad MSG: a failure — a TAP line in smoke mode, a report line otherwise.
bad() { if $smoke; then not_ok "$*"; else echo "$BENCH_NAME: $*"; fi; }
# The end: smoke mode's summary and status; a benchmark reports, it does not gate (exit 0).
finish() {
	if $smoke; then
		echo "# $pass passed, $fail failed"
		[ "$fail" -eq 0 ]
		exit
	fi
	exit 0
}
