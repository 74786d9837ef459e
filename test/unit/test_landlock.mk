# SPDX-License-Identifier: Apache-2.0
# test_landlock — box-trampoline's Landlock rights that grant nothing (landlock.c alone).
UNIT_DEPS_landlock := $(BUILD)/box-trampoline/landlock.o
UNIT_CPPFLAGS_landlock := -Ilibpolicyclient
