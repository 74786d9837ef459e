# SPDX-License-Identifier: Apache-2.0
# test/shell/cmdfile/ — box-shell's own file commands:
# filerun runs one command directly (an allow-all decider logging each
# decision; a trivial fork+exec sh_run_child), t-file.sh compares each
# command and flag with GNU coreutils/findutils and checks the decision
# sequences of mv, rm -r, ln, touch, cp and friends; t-boxsh.sh runs scripts
# of them through box-sh against bash with GNU tools, with --decisions.
SHFILE_TEST_DIR  := $(BUILD)/test/shell
SHFILE_RUN_OBJS  := $(BUILD)/test/shell/cmdfile/filerun.o
ALL_OBJS         += $(SHFILE_RUN_OBJS)

$(SHFILE_RUN_OBJS): private MODULE_CPPFLAGS := $(LIBSHELL_INCLUDES)

$(SHFILE_TEST_DIR)/filerun: $(SHFILE_RUN_OBJS) $(LIBSHELL) $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(SHFILE_TEST_DIR)/filerun: private MODULE_LDLIBS := -lm

CHECK_DEPS    += $(SHFILE_TEST_DIR)/filerun
# Every command and flag against GNU: over 30 s, make check-slow.
SLOW_SCRIPTS  += test/shell/cmdfile/t-file.sh

# through the interpreter: box-sh runs the same commands (t-boxsh.sh)
CHECK_DEPS    += $(BIN)/box-sh
CHECK_SCRIPTS += test/shell/cmdfile/t-boxsh.sh
