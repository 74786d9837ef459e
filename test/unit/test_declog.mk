# SPDX-License-Identifier: Apache-2.0
# test_declog — box-policyd's decision-line writer, checked against jansson.
UNIT_DEPS_declog := $(BUILD)/box-policyd/declog.o
UNIT_LIBS_declog := $(call pkg_libs,jansson)
