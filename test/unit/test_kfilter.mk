# SPDX-License-Identifier: Apache-2.0
# test_kfilter — box-trampoline's seccomp program as data (kfilter.c, seccomp.c's program).
UNIT_DEPS_kfilter := $(BUILD)/box-trampoline/kfilter.o $(BUILD)/box-trampoline/seccomp.o \
	$(BUILD)/box-trampoline/refuse_baked.o
UNIT_LIBS_kfilter := $(call pkg_libs,libseccomp)
