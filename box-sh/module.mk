# SPDX-License-Identifier: Apache-2.0
# box-sh/ — the standalone shell (docs/box-sh.1.md): libshell's interpreter with
# an in-process decision back end (decide_local.c: libboxpolicy, the decisions
# log). It links no daemon code and no box-policyd client.
BOXSH_SRCS := $(wildcard box-sh/*.c)
BOXSH_OBJS := $(BOXSH_SRCS:%.c=$(BUILD)/%.o)
# box-sh's decision back end without its main (tests link it)
BOXSH_DECIDE_OBJS := $(filter-out $(BUILD)/box-sh/main.o,$(BOXSH_OBJS))
ALL_OBJS   += $(BOXSH_OBJS)

$(BOXSH_OBJS): private MODULE_CPPFLAGS := -Iproto -Ibox-sh $(LIBSHELL_INCLUDES) \
	$(call pkg_cflags,libprotobuf-c libevent jansson)

PROGRAMS += $(BIN)/box-sh
$(BIN)/box-sh: $(BOXSH_OBJS) $(LIBSHELL) $(LIBBOXPOLICY) $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BIN)/box-sh: private MODULE_LDLIBS := $(call pkg_libs,libprotobuf-c libevent jansson) -lm
