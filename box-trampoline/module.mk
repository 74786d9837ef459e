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
$(BIN)/box-trampoline: private MODULE_LDLIBS := \
	$(call pkg_libs,libprotobuf-c libseccomp libcap libevent)
