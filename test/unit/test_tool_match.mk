# SPDX-License-Identifier: Apache-2.0
# test_tool_match: boxd/toolmatch.c (a SpawnRequest re-checked against the box's own tables) alone.
UNIT_DEPS_tool_match := $(BUILD)/boxd/toolmatch.o
