# SPDX-License-Identifier: Apache-2.0
# test/mcp/daemon/ — box-mcpd alone: test_mcpd plays
# boxd (McpInit, McpServerStart answered by running fake_server.py on the
# passed fds) and box-policyd (a rule table answers every Decide, Probe and
# ToolSchema and logs what it was asked) and the alias + harness (McpOpen
# with pipes, JSON-RPC lines). t-mcpd.sh runs it as root and as boxtest.
# Included by box-mcpd/module.mk (the top Makefile includes test/*/module.mk
# only); guarded so that an include from test/mcp/module.mk is harmless.
ifndef MCPD_TEST_MK
MCPD_TEST_MK   := 1
MCPD_TEST_DIR  := $(BUILD)/test/mcp/daemon
MCPD_TEST_OBJS := $(MCPD_TEST_DIR)/test_mcpd.o
ALL_OBJS       += $(MCPD_TEST_OBJS)

$(MCPD_TEST_OBJS): private MODULE_CPPFLAGS := -Itest/unit -Ibox-mcpd -Itest/playboxd \
	$(call pkg_cflags,libprotobuf-c jansson)

$(MCPD_TEST_DIR)/test_mcpd: $(MCPD_TEST_OBJS) $(BUILD)/test/playboxd/playboxd.o $(LIBMCPD) \
		$(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(MCPD_TEST_DIR)/test_mcpd: private MODULE_LDLIBS := $(call pkg_libs,libprotobuf-c jansson) -lm

ifneq ($(wildcard box-mcpd/main.c),)
CHECK_SCRIPTS += test/mcp/daemon/t-mcpd.sh
CHECK_DEPS    += $(MCPD_TEST_DIR)/test_mcpd $(BIN)/box-mcpd
endif
endif
