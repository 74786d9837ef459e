# SPDX-License-Identifier: Apache-2.0
# test_policy_history — boxctl/policy_history.c (`policy eval --history`) with
# the real engine and temporal monitor.
UNIT_DEPS_policy_history := $(BUILD)/boxctl/policy_history.o $(LIBBOXPOLICY)
UNIT_LIBS_policy_history := $(call pkg_libs,jansson)
