# SPDX-License-Identifier: Apache-2.0
# test/shell/cmd/ — box-shell's own text commands run directly by cmdrun (an
# allow-all decider, optionally logging to $CMDRUN_LOG) and compared with GNU
# coreutils, grep, sed and diffutils (t-text.sh).
CMDRUN_SRCS := test/shell/cmd/cmdrun.c
CMDRUN_OBJS := $(CMDRUN_SRCS:%.c=$(BUILD)/%.o)
ALL_OBJS    += $(CMDRUN_OBJS)

$(CMDRUN_OBJS): private MODULE_CPPFLAGS := $(SHELL_CPPFLAGS)

$(BUILD)/test/shell/cmdrun: $(CMDRUN_OBJS) $(LIBSHELL) $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BUILD)/test/shell/cmdrun: private MODULE_LDLIBS := $(SHELL_LIBS)

CHECK_DEPS    += $(BUILD)/test/shell/cmdrun
# Every text command and flag against GNU: over 30 s, make check-slow.
SLOW_SCRIPTS  += test/shell/cmd/t-text.sh
