# SPDX-License-Identifier: Apache-2.0
# test_logchain — the decision log chain: common/logchain.c and box-policyd's declog_chain.
UNIT_DEPS_logchain := $(BUILD)/box-policyd/declog.o
UNIT_LIBS_logchain := $(call pkg_libs,jansson)
