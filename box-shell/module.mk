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

$(SHD_OBJS): private MODULE_CPPFLAGS := -Iproto -Ibox-shell -I$(BUILD)/box-shell $(LIBSHELL_INCLUDES) \
	$(call pkg_cflags,libprotobuf-c libevent jansson libseccomp libedit)

# The allow-list, compiled by libseccomp once at build time (gen/shd_seccomp_gen.c
# prints it; daemon_seccomp_baked.c loads it; test_daemon_filters checks the two agree).
SHD_SECCOMP_GEN := $(BUILD)/box-shell/gen/shd_seccomp_gen
ALL_OBJS        += $(SHD_SECCOMP_GEN).o
$(SHD_SECCOMP_GEN).o: private MODULE_CPPFLAGS := $(call pkg_cflags,libseccomp)
$(SHD_SECCOMP_GEN): $(SHD_SECCOMP_GEN).o $(BUILD)/box-shell/daemon_seccomp.o $(LIBCOMMON)
	$(link_program)
$(SHD_SECCOMP_GEN): private MODULE_LDLIBS := $(call pkg_libs,libseccomp)
$(BUILD)/box-shell/shd_seccomp_prog.h: $(SHD_SECCOMP_GEN)
	ASAN_OPTIONS=detect_leaks=0 $(SHD_SECCOMP_GEN) >$@.tmp && mv $@.tmp $@
$(BUILD)/box-shell/daemon_seccomp_baked.o: $(BUILD)/box-shell/shd_seccomp_prog.h

LIBEXEC_PROGRAMS += $(BIN)/box-shell
$(BIN)/box-shell: $(SHD_OBJS) $(LIBSHELL) $(LIBPOLICYCLIENT) $(LIBBOXPOLICY) $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BIN)/box-shell: private MODULE_LDLIBS := \
	$(call pkg_libs,libprotobuf-c libevent jansson libseccomp libcap libedit) -lm -lpthread
