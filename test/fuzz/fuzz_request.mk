# SPDX-License-Identifier: Apache-2.0
# fuzz_request: a RunRequest decoded and validated as boxd does, then boxd's plan building.
FUZZ_DEPS_request := $(BUILD)/boxd/plan.o $(BUILD)/boxd/ownpaths.o $(BUILD)/boxd/runtime.o \
	$(BUILD)/boxd/recheck_result.o $(LIBPROTO)
FUZZ_LIBS_request := $(call pkg_libs,libprotobuf-c libevent)
