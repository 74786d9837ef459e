# SPDX-License-Identifier: Apache-2.0
# fuzz_plan — box-trampoline's plan decoder/validator and the fd 4 status decoder.
FUZZ_DEPS_plan := $(LIBPROTO)
FUZZ_LIBS_plan := $(call pkg_libs,libprotobuf-c)
