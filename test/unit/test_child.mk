# SPDX-License-Identifier: Apache-2.0
# test_child — boxd/child.c, the one tracker, reaper and kill path of boxd's processes.
UNIT_DEPS_child := $(BUILD)/boxd/child.o
UNIT_LIBS_child :=
