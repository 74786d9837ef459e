# SPDX-License-Identifier: Apache-2.0
# box-trampoline/ — builds every sandbox from boxd's plan (docs/sandbox.md).
# Links only common/, proto/ (+ libprotobuf-c), libpolicyclient/ (a supervised
# program's PID 1 asks box-policyd: supervise.c), libseccomp and libcap.
TRAMPOLINE_SRCS := $(wildcard box-trampoline/*.c)
TRAMPOLINE_OBJS := $(TRAMPOLINE_SRCS:%.c=$(BUILD)/%.o)
ALL_OBJS        += $(TRAMPOLINE_OBJS)
LIBEXEC_PROGRAMS += $(BIN)/box-trampoline

$(TRAMPOLINE_OBJS): private MODULE_CPPFLAGS := -Iproto -Ilibpolicyclient \
	$(call pkg_cflags,libprotobuf-c libseccomp libcap libevent)

$(BIN)/box-trampoline: $(TRAMPOLINE_OBJS) $(LIBPOLICYCLIENT) $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
# Static (static-pie: still randomized) outside sanitizer builds: it is exec'd for
# every sandbox (the agent's, box-shell's, each tool's, each MCP server's), and the
# dynamic loader's mapping and binding of its libraries cost each exec about 0.5 ms
# of CPU here (nonames.c says why no resolver is linked in).
ifeq ($(SAN),)
$(BIN)/box-trampoline: private MODULE_LDLIBS := -static-pie \
	$(call pkg_libs,libprotobuf-c libseccomp libcap libevent)
else
$(BIN)/box-trampoline: private MODULE_LDLIBS := \
	$(call pkg_libs,libprotobuf-c libseccomp libcap libevent)
endif
