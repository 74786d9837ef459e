# SPDX-License-Identifier: Apache-2.0
# test/alias/ — the shell alias (box-alias) against a fake box-shell
# (fake_shell.c: the session protocol's box-shell side) in a private mount
# namespace where the fake's socket is /run/box/shell.sock (t-alias.sh); its MCP
# mode against a fake box-mcpd (fake_mcpd.c) on /run/box/mcp.sock (t-alias-mcp.sh).
# alias_inproc.c runs the alias in-process for a -c text longer than execve allows.
ALIASTEST_DIR  := $(BUILD)/test/alias
ALIASTEST_OBJS := $(ALIASTEST_DIR)/fake_shell.o $(ALIASTEST_DIR)/alias_inproc.o \
	$(ALIASTEST_DIR)/fake_mcpd.o
ALL_OBJS       += $(ALIASTEST_OBJS)

$(ALIASTEST_OBJS): private MODULE_CPPFLAGS := -Iproto -Ibox-alias $(call pkg_cflags,libprotobuf-c)

$(ALIASTEST_DIR)/box-test-fakeshell: $(ALIASTEST_DIR)/fake_shell.o $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(ALIASTEST_DIR)/box-test-alias-inproc: $(ALIASTEST_DIR)/alias_inproc.o $(BUILD)/box-alias/alias.o \
		$(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(ALIASTEST_DIR)/box-test-fakemcpd: $(ALIASTEST_DIR)/fake_mcpd.o $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(ALIASTEST_DIR)/box-test-fakeshell $(ALIASTEST_DIR)/box-test-alias-inproc \
	$(ALIASTEST_DIR)/box-test-fakemcpd: private MODULE_LDLIBS := $(call pkg_libs,libprotobuf-c)

CHECK_DEPS    += $(ALIASTEST_DIR)/box-test-fakeshell $(ALIASTEST_DIR)/box-test-alias-inproc \
	$(ALIASTEST_DIR)/box-test-fakemcpd $(BIN)/box-alias
CHECK_SCRIPTS += test/alias/t-alias.sh test/alias/t-alias-mcp.sh
