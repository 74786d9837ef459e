# SPDX-License-Identifier: Apache-2.0
# fuzz_shell — box-shell's session and control protocols: libboxproto + libboxcommon.
FUZZ_DEPS_shell := $(LIBPROTO)
FUZZ_LIBS_shell := $(call pkg_libs,libprotobuf-c)
