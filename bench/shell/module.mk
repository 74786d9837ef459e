# SPDX-License-Identifier: Apache-2.0
# bench/shell/ — box-sh (allow-all policy, every decision made and logged)
# against bash with GNU tools: grep -rn literal/regex over a
# 10,000-file tree, find | xargs wc -l, sed -n over 50 MB, a 100,000-iteration
# while loop, `-c true` start-up. A workload box-sh cannot run yet prints n/a.
bench: $(BIN)/box-sh
BENCH_SCRIPTS += bench/shell/run.sh
