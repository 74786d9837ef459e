# SPDX-License-Identifier: Apache-2.0
# test_recheck: the real box-recheck (BOX_BIN) on hand-built RecheckRequests, its replies
# parsed by boxd's recheck_parse.c; the helper is built first (order-only, not linked).
UNIT_DEPS_recheck := $(BUILD)/boxd/recheck_parse.o $(BUILD)/boxd/recheck_result.o
$(BUILD)/test/unit/test_recheck: | $(BIN)/box-recheck
