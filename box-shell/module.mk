# SPDX-License-Identifier: Apache-2.0
# box-shell/ — the shell interpreter and its own commands (docs/design.md
# §2, §5). Everything but the programs' mains goes into libshell.a: box-sh
# (standalone, decides in process with libboxpolicy: main_sh.c) links it with
# libboxpolicy; the in-box box-shell daemon (main.c and the files of
# daemon.h) links it without the engine (decide_policyd.c asks box-policyd).
# decide_local.c is box-sh's back end of decide.h and is not part of
# libshell.a; neither are the daemon's files.
SHD_SRCS         := box-shell/main.c box-shell/invocation.c box-shell/decide_policyd.c \
		    box-shell/host_boxd.c box-shell/daemon_seccomp.c box-shell/zygote.c \
		    box-shell/lineedit.c box-shell/attach.c
SHD_OBJS         := $(patsubst %.c,$(BUILD)/%.o,$(wildcard $(SHD_SRCS)))
SHELL_MAIN_SRCS  := box-shell/main_sh.c box-shell/decide_local.c $(SHD_SRCS)
SHELL_LIB_SRCS   := $(filter-out $(SHELL_MAIN_SRCS),$(wildcard box-shell/*.c))
SHELL_LIB_OBJS   := $(SHELL_LIB_SRCS:%.c=$(BUILD)/%.o)
BOXSH_OBJS       := $(patsubst %.c,$(BUILD)/%.o,$(wildcard box-shell/main_sh.c box-shell/decide_local.c))
LIBSHELL         := $(BUILD)/box-shell/libshell.a
ALL_OBJS         += $(SHELL_LIB_OBJS) $(BOXSH_OBJS) $(SHD_OBJS)

SHELL_CPPFLAGS := -Iproto -Ibox-shell $(call pkg_cflags,libprotobuf-c libevent jansson)
SHELL_LIBS     := $(call pkg_libs,libprotobuf-c libevent jansson) -lm

$(SHELL_LIB_OBJS) $(BOXSH_OBJS) $(SHD_OBJS): private MODULE_CPPFLAGS := $(SHELL_CPPFLAGS)
$(SHD_OBJS): private MODULE_CPPFLAGS := $(SHELL_CPPFLAGS) $(call pkg_cflags,libseccomp libedit)

$(LIBSHELL): $(SHELL_LIB_OBJS)
	$(archive)

ifneq ($(wildcard box-shell/main_sh.c),)
PROGRAMS += $(BIN)/box-sh
$(BIN)/box-sh: $(BOXSH_OBJS) $(LIBSHELL) $(LIBBOXPOLICY) $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BIN)/box-sh: private MODULE_LDLIBS := $(SHELL_LIBS)
endif

# The in-box daemon: libshell + libpolicyclient (decide_policyd.c's channel) + proto +
# common, never libboxpolicy.
ifneq ($(wildcard box-shell/main.c),)
LIBEXEC_PROGRAMS += $(BIN)/box-shell
$(BIN)/box-shell: $(SHD_OBJS) $(LIBSHELL) $(LIBPOLICYCLIENT) $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BIN)/box-shell: private MODULE_LDLIBS := \
	$(call pkg_libs,libprotobuf-c libevent jansson libseccomp libcap libedit) -lm -lpthread
endif
