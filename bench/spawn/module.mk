# SPDX-License-Identifier: Apache-2.0
# bench/spawn/ — sandbox spawn cost against bwrap (bench/spawn/spawn.sh).
BENCH_SCRIPTS += bench/spawn/spawn.sh
bench: $(BIN)/box-sandbox-run $(BIN)/box-trampoline
