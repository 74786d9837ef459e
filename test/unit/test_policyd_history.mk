# SPDX-License-Identifier: Apache-2.0
# test_policyd_history — box-policyd/history.c alone (framing, recovery, compaction).
UNIT_DEPS_policyd_history := $(BUILD)/box-policyd/history.o
UNIT_LIBS_policyd_history :=
