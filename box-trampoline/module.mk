# SPDX-License-Identifier: Apache-2.0
# box-trampoline/ — builds every sandbox from boxd's plan (docs/sandbox.md).
# Links only common/, proto/ (+ libprotobuf-c), libpolicyclient/ (a supervised
# program's PID 1 asks box-policyd: supervise.c), libboxpolicy/ (the decisions that
# PID 1 makes in process and ships), libseccomp and libcap.
TRAMPOLINE_SRCS := $(wildcard box-trampoline/*.c)
TRAMPOLINE_OBJS := $(TRAMPOLINE_SRCS:%.c=$(BUILD)/%.o)
ALL_OBJS        += $(TRAMPOLINE_OBJS)
LIBEXEC_PROGRAMS += $(BIN)/box-trampoline

$(TRAMPOLINE_OBJS): private MODULE_CPPFLAGS := -Iproto -Ilibpolicyclient -I$(BUILD)/box-trampoline \
	$(call pkg_cflags,libprotobuf-c libseccomp libcap libevent)

# The refusing seccomp program, compiled by libseccomp once at build time
# (gen/refuse_gen.c prints it; refuse_baked.c compiles it in; test_kfilter
# checks it against libseccomp's build at test time).
REFUSE_GEN := $(BUILD)/box-trampoline/gen/refuse_gen
ALL_OBJS   += $(REFUSE_GEN).o
$(REFUSE_GEN).o: private MODULE_CPPFLAGS := -Ibox-trampoline $(call pkg_cflags,libseccomp)
$(REFUSE_GEN): $(REFUSE_GEN).o $(BUILD)/box-trampoline/seccomp.o $(BUILD)/box-trampoline/kfilter.o
	$(link_program)
$(REFUSE_GEN): private MODULE_LDLIBS := $(call pkg_libs,libseccomp)
$(BUILD)/box-trampoline/refuse_prog.h: $(REFUSE_GEN)
	ASAN_OPTIONS=detect_leaks=0 $(REFUSE_GEN) >$@.tmp && mv $@.tmp $@
$(BUILD)/box-trampoline/refuse_baked.o: $(BUILD)/box-trampoline/refuse_prog.h

# seccomp.c is the build tool's (gen/refuse_gen.c): no sandbox compiles the program.
$(BIN)/box-trampoline: $(filter-out $(BUILD)/box-trampoline/seccomp.o,$(TRAMPOLINE_OBJS)) \
	$(LIBPOLICYCLIENT) $(LIBBOXPOLICY) $(LIBPROTO) $(LIBCOMMON)
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
