# SPDX-License-Identifier: Apache-2.0
# fuzz_view — box-trampoline's plan decoding and validation, then its mount view
# computation (view.c), all without privileges.
FUZZ_DEPS_view := $(BUILD)/box-trampoline/view.o $(LIBPROTO)
FUZZ_LIBS_view := $(call pkg_libs,libprotobuf-c)
