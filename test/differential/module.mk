# SPDX-License-Identifier: Apache-2.0
# test/differential/ — libboxpolicy against cedar-wasm (random policies and requests).
CHECK_SCRIPTS += test/differential/run.sh

# A longer run; `make fuzz` includes it.
diff-long: $(BIN)/boxctl
	@BOX_BUILD=$(BUILD) BOX_BIN=$(BIN) DIFF_COUNT=$${DIFF_COUNT:-5000} test/differential/run.sh

fuzz: diff-long
.PHONY: diff-long
