# SPDX-License-Identifier: Apache-2.0
# bench/replay/ — `boxctl policy replay` against `boxctl policy eval` of the same requests
# (bench/replay/run.sh: a 1,000,000-line log, 500 rules; the ratio, MET/MISSED, peak RSS).
bench: $(BIN)/boxctl
BENCH_SCRIPTS += bench/replay/run.sh
# make check runs the smoke mode (run.sh --smoke): 20,000 lines, TAP lines.
CHECK_SCRIPTS += bench/replay/smoke.sh
