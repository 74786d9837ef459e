#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh — `make bench` entry for box-sh: each workload run
# by `box-sh --policy ALLOW --decisions FILE -c …` (an allow-all policy: every
# decision is made and logged as a decisions.jsonl line) and by `bash -c …`
# with GNU tools, best of BENCH_SHELL_RUNS (default 3; BENCH_QUICK=1: 1) wall
# times (bash and box-sh run back to back each round, so a passing load on a
# shared machine weighs on both), the ratio box-sh / bash and the issue's
# target for it:
#   grep -rn literal  <= 2x     grep -rn regex (-E)  <= 3x
#   find . -name '*.c' | xargs wc -l  <= 2x     sed -n over 50 MB  <= 1.5x
#   while [ $i -lt 100000 ] loop  < 1x (faster than bash)
#   -c true start-up (100 runs)   < 1x
# Outputs are compared (a different output is reported, not timed as a
# pass). A workload box-sh cannot run yet (no box-sh, an unknown command:
# exit 127) prints n/a. The tree (10,000 files) and the 50 MB file go to
# BENCH_SHELL_DIR, else /var/tmp. Always exits 0: it reports, it does not gate.
set -u
BOX_BUILD=${BOX_BUILD:-build}
BOX_BIN=${BOX_BIN:-$BOX_BUILD/bin}
boxsh=$(cd "$BOX_BIN" 2>/dev/null && pwd)/box-sh
runs=${BENCH_SHELL_RUNS:-3}
[ -n "${BENCH_QUICK:-}" ] && runs=1
base=${BENCH_SHELL_DIR:-/var/tmp}
work=$(mktemp -d "$base/shdecide-bench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

echo "== bench/shell: box-sh (allow-all, decisions logged) vs bash + GNU tools"
if [ ! -x "$boxsh" ]; then
	echo "box-sh: not built ($boxsh); every box-sh ratio is n/a"
fi

# The tree: 100 directories x 100 files, C-like text, a literal in 1 % of files.
gen_tree() {
	python3 - "$work/tree" <<'PY'
import os, random, sys
root = sys.argv[1]
random.seed(12)
words = ["int", "char", "return", "static", "void", "struct", "if", "else", "for", "while",
         "size_t", "buf", "len", "ptr", "count", "value", "node", "next", "state", "error"]
for d in range(100):
    dd = os.path.join(root, "d%02d" % (d // 10), "s%02d" % d)
    os.makedirs(dd, exist_ok=True)
    for f in range(100):
        ext = ".c" if f % 2 == 0 else (".h" if f % 4 == 1 else ".txt")
        lines = []
        for l in range(40):
            lines.append(" ".join(random.choice(words) for _ in range(8)) + ";")
        if (d * 100 + f) % 100 == 7:
            lines[20] = "needle_literal_marker found here;"
        if (d * 100 + f) % 50 == 3:
            lines[10] = "foo_42x regex target;"
        with open(os.path.join(dd, "f%03d%s" % (f, ext)), "w") as fh:
            fh.write("\n".join(lines) + "\n")
PY
}

gen_big() {
	python3 - "$work/big.txt" <<'PY'
import sys, random
random.seed(7)
target = 50 * 1024 * 1024
words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
with open(sys.argv[1], "w") as fh:
    n = 0
    i = 0
    while n < target:
        line = " ".join(random.choice(words) for _ in range(10))
        if i % 1000 == 999:
            line += " needle"
        line += "\n"
        fh.write(line)
        n += len(line)
        i += 1
PY
}

gen_tree
gen_big
printf 'permit (principal, action, resource);\n' > "$work/allow.dw"

now() { date +%s.%N; }

# best TIME_VAR OUT_FILE CMD...: the best wall time of $runs runs, stdout of the last run.
best() {
	local out=$1; shift
	local bestt="" t0 t1 t st
	for _ in $(seq 1 "$runs"); do
		t0=$(now)
		"$@" > "$out" 2> "$out.err"
		st=$?
		t1=$(now)
		t=$(echo "$t1 - $t0" | bc -l)
		if [ -z "$bestt" ] || [ "$(echo "$t < $bestt" | bc -l)" = 1 ]; then bestt=$t; fi
	done
	BEST=$bestt
	STATUS=$st
}

boxsh_run() {
	rm -f "$work/decisions.jsonl"
	"$boxsh" --policy "$work/allow.dw" --home "$work" --decisions "$work/decisions.jsonl" -c "$1"
}

# pair SCRIPT: bash and box-sh run back to back, $runs times (a load that comes and
# goes on a shared machine weighs on both alike); the best of each:
# BASH_T BASH_ST BOX_T BOX_ST, outputs in $work/bash.out and $work/boxsh.out.
pair() {
	local script=$1 bt="" xt="" t0 t1 t
	for _ in $(seq 1 "$runs"); do
		t0=$(now)
		bash -c "$script" > "$work/bash.out" 2> "$work/bash.out.err"
		BASH_ST=$?
		t1=$(now)
		t=$(echo "$t1 - $t0" | bc -l)
		if [ -z "$bt" ] || [ "$(echo "$t < $bt" | bc -l)" = 1 ]; then bt=$t; fi
		t0=$(now)
		boxsh_run "$script" > "$work/boxsh.out" 2> "$work/boxsh.out.err"
		BOX_ST=$?
		t1=$(now)
		t=$(echo "$t1 - $t0" | bc -l)
		if [ -z "$xt" ] || [ "$(echo "$t < $xt" | bc -l)" = 1 ]; then xt=$t; fi
	done
	BASH_T=$bt
	BOX_T=$xt
}

# workload NAME TARGET_RATIO SCRIPT
workload() {
	local name=$1 target=$2 script=$3
	cd "$work/tree" || return
	local line
	if [ ! -x "$boxsh" ]; then
		best "$work/bash.out" bash -c "$script"
		printf '%-34s bash %7.3f s  box-sh      n/a  ratio   n/a  (target %s)\n' "$name" "$BEST" "$target"
		return
	fi
	pair "$script"
	local bash_t=$BASH_T bash_st=$BASH_ST box_t=$BOX_T box_st=$BOX_ST
	local decisions=0
	[ -f "$work/decisions.jsonl" ] && decisions=$(wc -l < "$work/decisions.jsonl")
	local missing=false
	if [ "$box_st" = 127 ]; then
		missing=true
	elif [ "$box_st" != "$bash_st" ] &&
		grep -q "not supported\|not found\|unknown command" "$work/boxsh.out.err" 2>/dev/null; then
		missing=true
	fi
	if $missing; then
		printf '%-34s bash %7.3f s  box-sh      n/a  ratio   n/a  (target %s; box-sh: %s)\n' "$name" "$bash_t" "$target" "$(head -c 120 "$work/boxsh.out.err" | tr '\n' ' ')"
		return
	fi
	local ratio verdict
	ratio=$(echo "$box_t / $bash_t" | bc -l)
	if cmp -s "$work/bash.out" "$work/boxsh.out" && [ "$box_st" = "$bash_st" ]; then
		if [ "$(echo "$ratio <= ${target%x}" | bc -l)" = 1 ]; then verdict=met; else verdict=MISSED; fi
	else
		verdict="OUTPUT DIFFERS (status bash $bash_st, box-sh $box_st)"
	fi
	printf '%-34s bash %7.3f s  box-sh %7.3f s  ratio %5.2f  (target <= %s: %s; %s decision log lines)\n' \
		"$name" "$bash_t" "$box_t" "$ratio" "$target" "$verdict" "$decisions"
}

workload "grep -rn literal (10,000 files)" 2x 'grep -rn needle_literal_marker .'
workload "grep -rnE regex (10,000 files)" 3x "grep -rnE 'fo[o0]_[0-9]+x' ."
workload "find -name '*.c' | xargs wc -l" 2x "find . -name '*.c' | xargs wc -l"
workload "sed -n over 50 MB" 1.5x "sed -n '/needle/p' ../big.txt"
workload "while loop, 100,000 [ ]" 1x 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; echo $i'
# start-up: 100 runs of SHELL -c true, from bash in both cases
cd "$work" || exit 0
best "$work/bash.out" bash -c 'for k in $(seq 1 100); do bash -c true; done'
bash_t=$BEST
if [ -x "$boxsh" ]; then
	export BOXSH="$boxsh" WORK="$work"
	best "$work/boxsh.out" bash -c 'for k in $(seq 1 100); do "$BOXSH" --policy "$WORK/allow.dw" --home "$WORK" --decisions "$WORK/decisions.jsonl" -c true; done'
	box_t=$BEST
	ratio=$(echo "$box_t / $bash_t" | bc -l)
	if [ "$(echo "$ratio < 1" | bc -l)" = 1 ]; then v=met; else v=MISSED; fi
	printf '%-34s bash %7.3f s  box-sh %7.3f s  ratio %5.2f  (target < 1x: %s)\n' "-c true start-up (100 runs)" "$bash_t" "$box_t" "$ratio" "$v"
else
	printf '%-34s bash %7.3f s  box-sh      n/a  ratio   n/a  (target < 1x)\n' "-c true start-up (100 runs)" "$bash_t"
fi
exit 0
