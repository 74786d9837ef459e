# SPDX-License-Identifier: Apache-2.0
# test_view — box-trampoline's mount view from a plan (view.c alone, no privileges).
UNIT_DEPS_view := $(BUILD)/box-trampoline/view.o
UNIT_LIBS_view := $(call pkg_libs,libprotobuf-c)
