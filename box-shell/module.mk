# SPDX-License-Identifier: Apache-2.0
# box-shell/ — the in-box box-shell daemon (docs/box-shell.8.md): its main process
# and sessions (main.c, invocation.c, zygote.c, attach.c), its filter
# (daemon_seccomp.c), what it asks the main process for a host program
# (host_boxd.c), its decision back end (decide_policyd.c: box-policyd over
# libpolicyclient, and in process through libboxpolicy for the actions box-policyd
# says need no history) and the interactive line editor (lineedit.c, libedit). The
# interpreter is libshell.a's.
SHD_SRCS := $(wildcard box-shell/*.c)
SHD_OBJS := $(SHD_SRCS:%.c=$(BUILD)/%.o)
ALL_OBJS += $(SHD_OBJS)

$(SHD_OBJS): private MODULE_CPPFLAGS := -Iproto -Ibox-shell $(LIBSHELL_INCLUDES) \
	$(call pkg_cflags,libprotobuf-c libevent jansson libseccomp libedit)

LIBEXEC_PROGRAMS += $(BIN)/box-shell
$(BIN)/box-shell: $(SHD_OBJS) $(LIBSHELL) $(LIBPOLICYCLIENT) $(LIBBOXPOLICY) $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BIN)/box-shell: private MODULE_LDLIBS := \
	$(call pkg_libs,libprotobuf-c libevent jansson libseccomp libcap libedit) -lm -lpthread
