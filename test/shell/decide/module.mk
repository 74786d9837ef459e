# SPDX-License-Identifier: Apache-2.0
# test/shell/decide/ — box-shell's decisions:
# test_fsops (fsops.c against a recording decider: each operation's
# decisions and outcomes, batches, the openat2 guarantee and the symlink
# race), test_decide_local (box-sh's in-process back end: libboxpolicy,
# temporal history, spellings, decisions.jsonl lines).
SHDECIDE_TEST_DIR := $(BUILD)/test/shell/decide
SHDECIDE_FSOPS_OBJS := $(SHDECIDE_TEST_DIR)/test_fsops.o
SHDECIDE_LOCAL_OBJS := $(SHDECIDE_TEST_DIR)/test_decide_local.o
ALL_OBJS += $(SHDECIDE_FSOPS_OBJS) $(SHDECIDE_LOCAL_OBJS)

$(SHDECIDE_FSOPS_OBJS) $(SHDECIDE_LOCAL_OBJS): private MODULE_CPPFLAGS := -Itest/unit -Ibox-sh $(LIBSHELL_INCLUDES) $(call pkg_cflags,jansson)

$(SHDECIDE_TEST_DIR)/test_fsops: $(SHDECIDE_FSOPS_OBJS) $(LIBSHELL)
	$(link_program)
$(SHDECIDE_TEST_DIR)/test_fsops: private MODULE_LDLIBS := -lpthread

$(SHDECIDE_TEST_DIR)/test_decide_local: $(SHDECIDE_LOCAL_OBJS) $(BOXSH_DECIDE_OBJS) \
		$(LIBSHELL) $(LIBBOXPOLICY) $(LIBCOMMON)
	$(link_program)
$(SHDECIDE_TEST_DIR)/test_decide_local: private MODULE_LDLIBS := $(call pkg_libs,jansson) -lpthread -lm

CHECK_PROGRAMS += $(SHDECIDE_TEST_DIR)/test_fsops $(SHDECIDE_TEST_DIR)/test_decide_local

# Whole scripts through box-sh.
CHECK_SCRIPTS += test/shell/decide/scripts.sh
# decisions.jsonl batching loses no line (bench/shell's item 9 work; strace optional)
CHECK_SCRIPTS += test/shell/decide/logbuf.sh
# find -name decides every entry without a stat call each (strace optional)
CHECK_SCRIPTS += test/shell/decide/findstat.sh
CHECK_DEPS    += $(BIN)/box-sh
