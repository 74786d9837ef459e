# SPDX-License-Identifier: Apache-2.0
# bench/relay/ — the cost of boxctl's stdio relay on 1 GiB of stdout (bench/relay/run.sh).
BENCH_SCRIPTS += bench/relay/run.sh
bench: $(BIN)/boxctl $(BIN)/boxd $(BIN)/box-trampoline $(BIN)/box-policyd $(BIN)/box-recheck
