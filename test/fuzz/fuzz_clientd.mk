# SPDX-License-Identifier: Apache-2.0
# fuzz_clientd — box-clientd's decode → validate → re-encode (box-clientd/forward.c).
FUZZ_DEPS_clientd := $(BUILD)/box-clientd/forward.o $(LIBPROTO)
FUZZ_LIBS_clientd := $(call pkg_libs,libprotobuf-c)
