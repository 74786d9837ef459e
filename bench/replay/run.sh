#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh — `boxctl policy replay` against `boxctl policy eval` of the same requests, in the
# same run: a generated decision log of BENCH_REPLAY_LINES lines (default
# 1,000,000: requests over every fixed action, an outcome line after every 10th fs request;
# ~400 bytes a line, as box-policyd writes them) and bench/policy's 500-rule policy as the
# candidate with every 25th rule's effect flipped. Prints each one's rate (lines/s, wall
# and CPU), the ratio replay / eval and the target (>= 0.6x: MET or MISSED, judged on CPU
# time, which other work on a shared machine disturbs least), and replay's peak RSS for
# 100,000 lines against the whole log (memory flat: streamed, never loaded).
#   run.sh            the benchmark (make bench)
#   run.sh --smoke    make check's short form (20,000 lines), TAP lines: replaying the log
#                     under the policy that made it changes nothing (exit 0); under the
#                     candidate exactly the decisions eval decides differently change, as
#                     now denied / now permitted (exit 3); memory does not grow with the
#                     log (2,000 vs 20,000 lines); the ratio is printed, not gated.
# Trusts: nothing; it is benchmark code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
BOX_BUILD=${BOX_BUILD:-build}
BOX_BIN=${BOX_BIN:-$BOX_BUILD/bin}
boxctl=$(cd "$BOX_BIN" && pwd)/boxctl
smoke=0
[ "${1:-}" = "--smoke" ] && smoke=1
. "$here/../../test/lib.sh"
lines=${BENCH_REPLAY_LINES:-1000000}
small=100000
if [ "$smoke" -eq 1 ]; then
	lines=20000
	small=2000
fi
# The sanitizer build's allocator keeps freed memory in quarantine, which grows RSS with
# every allocation made: measure what is live.
if [ -n "${SAN:-}" ]; then
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/replay-bench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

say() { if [ "$smoke" -eq 1 ]; then diag "$*"; else echo "$*"; fi; }
die() {
	if [ "$smoke" -eq 1 ]; then not_ok "$*"; tap_done; exit 1; fi
	echo "bench/replay: $*" >&2
	exit 1
}

say "== bench/replay: boxctl policy replay vs boxctl policy eval, $lines lines, 500 rules"
python3 "$here/gen.py" requests "$work" "$lines" || die "gen.py requests"
# The log's verdicts: what the old policy decided (eval is the engine box-policyd runs).
"$boxctl" policy eval "$work/old.dw" "$work/eval.jsonl" >"$work/old.out" || die "eval old.dw"
python3 "$here/gen.py" log "$work" || die "gen.py log"
head -n "$small" "$work/log.jsonl" >"$work/log-small.jsonl"
say "log: $(wc -l <"$work/log.jsonl") lines, $(( $(wc -c <"$work/log.jsonl") / $(wc -l <"$work/log.jsonl") )) bytes a line"

# measure NAME OUT CMD...: best of RUNS; sets m_wall m_cpu (seconds) m_rss (KiB) m_rc.
runs=${BENCH_REPLAY_RUNS:-3}
[ "$smoke" -eq 1 ] && runs=1
measure() {
	local out=$1 best_w= best_c= w c
	shift
	for _ in $(seq "$runs"); do
		/usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" >"$out" 2>"$work/stderr"
		m_rc=$?
		# (a non-zero exit adds a line before the numbers)
		read -r w u s m_rss < <(tail -1 "$work/time")
		c=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
		if [ -z "$best_w" ] || awk -v a="$c" -v b="$best_c" 'BEGIN { exit !(a < b) }'; then
			best_w=$w best_c=$c
		fi
	done
	m_wall=$best_w m_cpu=$best_c
}

requests=$(grep -c '"verdict"' "$work/log.jsonl")
measure "$work/cand.out" "$boxctl" policy eval "$work/cand.dw" "$work/eval.jsonl"
e_wall=$m_wall e_cpu=$m_cpu e_rss=$m_rss
[ "$m_rc" = 0 ] || die "eval cand.dw exited $m_rc"
measure "$work/replay.out" "$boxctl" policy replay "$work/cand.dw" "$work/log.jsonl"
r_wall=$m_wall r_cpu=$m_cpu r_rss=$m_rss r_rc=$m_rc
measure "$work/replay-small.out" "$boxctl" policy replay "$work/cand.dw" "$work/log-small.jsonl"
s_rss=$m_rss
rate() { awk -v n="$1" -v t="$2" 'BEGIN { if (t <= 0) t = 0.01; printf "%.0f", n / t }'; }
printf -v t1 '%-8s %12s %12s %10s' engine "lines/s wall" "lines/s cpu" "peak RSS"
say "$t1"
printf -v t1 '%-8s %12s %12s %8sKB' eval "$(rate "$requests" "$e_wall")" "$(rate "$requests" "$e_cpu")" "$e_rss"
say "$t1"
printf -v t1 '%-8s %12s %12s %8sKB' replay "$(rate "$requests" "$r_wall")" "$(rate "$requests" "$r_cpu")" "$r_rss"
say "$t1"
ratio_c=$(awk -v e="$e_cpu" -v r="$r_cpu" 'BEGIN { if (r <= 0) r = 0.01; printf "%.2f", e / r }')
ratio_w=$(awk -v e="$e_wall" -v r="$r_wall" 'BEGIN { if (r <= 0) r = 0.01; printf "%.2f", e / r }')
verdict=$(awk -v x="$ratio_c" 'BEGIN { print (x >= 0.6) ? "MET" : "MISSED" }')
say "ratio replay/eval: ${ratio_c}x (CPU), ${ratio_w}x (wall); target >= 0.6x: $verdict"
say "replay peak RSS: $s_rss KB for $small lines, $r_rss KB for $lines lines"
say "replay: $(tail -1 "$work/replay.out")"

if [ "$smoke" -eq 0 ]; then
	exit 0
fi
# ---- make check: what the numbers rest on ----
n_old=$(wc -l <"$work/old.out")
"$boxctl" policy replay "$work/old.dw" "$work/log.jsonl" >"$work/same.out" 2>&1
rc=$?
check "replay under the policy that made the log: nothing changes (exit 0, rc $rc)" test "$rc" = 0
check "… '$n_old decisions, 0 now denied, 0 now permitted, $n_old unchanged'" \
	grep -qx "$n_old decisions, 0 now denied, 0 now permitted, $n_old unchanged" "$work/same.out"
read -r denied permitted < <(paste -d' ' "$work/old.out" "$work/cand.out" | awk '
	{ o = ($0 ~ /^\{"verdict":"permit"/); n = ($0 ~ /\} \{"verdict":"permit"/)
	  if (o && !n) d++; if (!o && n) p++ } END { print d + 0, p + 0 }')
check "the candidate changes some decisions ($denied now denied, $permitted now permitted by eval)" \
	test "$((denied + permitted))" -gt 0
check "replay under the candidate: exit 3 (rc $r_rc)" test "$r_rc" = 3
check "… exactly eval's differences: $denied now denied, $permitted now permitted" \
	grep -qx "$n_old decisions, $denied now denied, $permitted now permitted, $((n_old - denied - permitted)) unchanged" "$work/replay.out"
check "… one line per changed decision" \
	test "$(grep -c ' → ' "$work/replay.out")" = "$((denied + permitted))"
check "memory flat: peak RSS for $lines lines ($r_rss KB) within 2 MB of $small lines ($s_rss KB)" \
	test "$r_rss" -le "$((s_rss + 2048))"
tap_done
