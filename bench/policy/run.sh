#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh — policy benchmark: libboxpolicy in-process against cedar-wasm in
# node, the same policies and the same 1000 requests, in the same run; prints
# decisions/s, p50/p99 latency and the ratios. Three policies (gen.py): 5
# rules, 500 rules (targets >= 5,000,000 and >= 1,000,000 decisions/s on one
# core), and 500 `like`/`||` rules without a target (shown, no target).
# The inputs are frozen: their SHA-256 sums are in inputs.sha256, and when
# gen.py writes anything else no ratio is printed (figures of other inputs
# do not compare with earlier runs) and the run fails.
# Before timing, bench_policy --compare checks every request is decided the
# same with the rule index and without it.
# BENCH_SECONDS sets each measurement's length (default 2).
# --smoke (make check, through smoke.sh): the sums, the comparison and a
# short run of libboxpolicy alone, as TAP lines; no figure is gated.
# Trusts: nothing; it is benchmark code.
set -eu
BENCH_NAME=policy
# shellcheck source=bench/lib-smoke.sh
. "$(dirname "$0")/../lib-smoke.sh"
here=$(cd "$(dirname "$0")" && pwd)
build=$BOX_BUILD
secs=${BENCH_SECONDS:-2}
$smoke && secs=0.2
work=$build/bench-policy
bench=$build/bench/policy/bench_policy
mkdir -p "$work"
rm -f "$work"/*.dw "$work/requests.jsonl"
python3 "$here/gen.py" "$work"

frozen=true
if sums=$(cd "$work" && sha256sum -c "$here/inputs.sha256" 2>&1); then
	$smoke && ok "inputs match inputs.sha256"
else
	frozen=false
	bad "gen.py's output differs from inputs.sha256: no ratios (frozen inputs changed)"
	printf '%s\n' "$sums" | grep -v ': OK$' | sed 's/^/# /'
fi
for n in 5 500 like; do
	if out=$("$bench" --compare "$work/p$n.dw" "$work/requests.jsonl" 2>&1); then
		if $smoke; then ok "p$n: $out"; else say "p$n: $out"; fi
	else
		bad "p$n: the rule index changes decisions: $out"
		frozen=false
	fi
done

if $smoke; then
	for n in 5 500 like; do
		if read -r dps p50 p99 < <("$bench" "$work/p$n.dw" "$work/requests.jsonl" "$secs" 2>/dev/null) &&
			[ -n "${dps:-}" ]; then
			ok "p$n: libboxpolicy ran (${dps} decisions/s, p50 ${p50}ns, p99 ${p99}ns; not gated)"
		else
			not_ok "p$n: bench_policy failed"
		fi
	done
	finish
fi

prefix=$build/cedar-wasm
module=$prefix/node_modules/@cedar-policy/cedar-wasm/nodejs/cedar_wasm.js
if [ ! -f "$module" ]; then
	npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
		@cedar-policy/cedar-wasm@4.13.0 >/dev/null
fi
echo "policy benchmark: one core, ${secs}s per measurement"
echo "(per CPU-s: decisions per second of the engine's own CPU time, which other programs on a"
echo " shared core do not take from; on an idle core it equals decisions/s)"
printf '%-9s %-13s %12s %12s %10s %10s\n' rules engine "decisions/s" "per CPU-s" "p50" "p99"
for n in 5 500 like; do
	label=$n
	[ "$n" = like ] && label="500like"
	read -r ours_dps ours_p50 ours_p99 ours_cps < <(taskset -c 0 "$bench" \
		"$work/p$n.dw" "$work/requests.jsonl" "$secs" 2>/dev/null)
	read -r ced_dps ced_p50 ced_p99 ced_cps < <(taskset -c 0 node "$here/bench_cedar.mjs" "$module" \
		"$work/p$n.dw" "$work/requests.jsonl" "$secs")
	printf '%-9s %-13s %12s %12s %8sns %8sns\n' "$label" libboxpolicy "$ours_dps" "$ours_cps" "$ours_p50" "$ours_p99"
	printf '%-9s %-13s %12s %12s %8sns %8sns\n' "$label" cedar-wasm "$ced_dps" "$ced_cps" "$ced_p50" "$ced_p99"
	if ! $frozen; then
		echo "$label      ratio         refused: the inputs are not the frozen ones"
		continue
	fi
	awk -v a="$ours_dps" -v b="$ced_dps" -v c="$ours_cps" -v d="$ced_cps" -v p="$ced_p50" -v q="$ours_p50" -v n="$label" \
		'BEGIN { printf "%-9s ratio         %11.1fx %11.1fx %9.1fx (libboxpolicy vs cedar-wasm)\n", n, a / b, c / d, p / q }'
	case $n in
	5) want=5000000 ;;
	500) want=1000000 ;;
	*) want= ;;
	esac
	if [ -n "$want" ]; then
		awk -v a="$ours_dps" -v c="$ours_cps" -v w="$want" -v n="$n" 'BEGIN {
			printf "target >= %d decisions/s with %s rules: %s (per CPU-s: %s)\n", w, n,
				(a >= w) ? "met" : "NOT met", (c >= w) ? "met" : "NOT met" }'
	fi
done
$frozen || exit 1
