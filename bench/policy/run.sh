#!/usr/bin/env bash
# run.sh — policy benchmark: libboxpolicy in-process against cedar-wasm in
# node, same policies (5 and 500 rules) and the same 1000 requests, in the
# same run; prints decisions/s, p50/p99 latency and the ratios.
# Targets: >= 1,000,000 decisions/s with 5 rules on one core, and
# >= 50x cedar-wasm. BENCH_SECONDS sets each measurement's length (default 2).
# Trusts: nothing; it is benchmark code.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${BOX_BUILD:-build}" && pwd)
secs=${BENCH_SECONDS:-2}
work=$build/bench-policy
mkdir -p "$work"
python3 "$here/gen.py" "$work"
prefix=$build/cedar-wasm
module=$prefix/node_modules/@cedar-policy/cedar-wasm/nodejs/cedar_wasm.js
if [ ! -f "$module" ]; then
	npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
		@cedar-policy/cedar-wasm@4.13.0 >/dev/null
fi
echo "policy benchmark: one core, ${secs}s per measurement"
printf '%-9s %-11s %14s %10s %10s\n' rules engine "decisions/s" "p50" "p99"
for n in 5 500; do
	read -r ours_dps ours_p50 ours_p99 < <(taskset -c 0 "$build/bench/policy/bench_policy" \
		"$work/p$n.dw" "$work/requests.jsonl" "$secs" 2>/dev/null)
	read -r ced_dps ced_p50 ced_p99 < <(taskset -c 0 node "$here/bench_cedar.mjs" "$module" \
		"$work/p$n.dw" "$work/requests.jsonl" "$secs")
	printf '%-9s %-11s %14s %8sns %8sns\n' "$n" libboxpolicy "$ours_dps" "$ours_p50" "$ours_p99"
	printf '%-9s %-11s %14s %8sns %8sns\n' "$n" cedar-wasm "$ced_dps" "$ced_p50" "$ced_p99"
	awk -v a="$ours_dps" -v b="$ced_dps" -v p="$ced_p50" -v q="$ours_p50" -v n="$n" \
		'BEGIN { printf "%-9s ratio       %13.1fx %9.1fx (throughput and p50 latency, libboxpolicy vs cedar-wasm)\n", n, a / b, p / q }'
	if [ "$n" = 5 ]; then
		awk -v a="$ours_dps" -v b="$ced_dps" 'BEGIN {
			printf "target >= 1,000,000 decisions/s with 5 rules: %s\n", (a >= 1000000) ? "met" : "NOT met"
			printf "target >= 50x cedar-wasm with 5 rules: %s\n", (a / b >= 50) ? "met" : "NOT met" }'
	fi
done
