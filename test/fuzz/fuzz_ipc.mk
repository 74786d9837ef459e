# SPDX-License-Identifier: Apache-2.0
# fuzz_ipc — the IPC receive path: libboxproto + libboxcommon.
FUZZ_DEPS_ipc := $(LIBPROTO)
FUZZ_LIBS_ipc := $(call pkg_libs,libprotobuf-c libevent)
