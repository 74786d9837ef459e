# SPDX-License-Identifier: Apache-2.0
# test/policyd/ — box-policyd end to end: harness.c plays boxd (socketpairs at
# fds 3-6, PolicyInit with the state fds) and test_policyd.c runs the cases.
# The benchmark (bench/policyd/) shares the harness.
POLICYD_TEST_OBJS := $(BUILD)/test/policyd/harness.o $(BUILD)/test/policyd/test_policyd.o
ALL_OBJS          += $(POLICYD_TEST_OBJS)

$(POLICYD_TEST_OBJS): private MODULE_CPPFLAGS := -Itest/unit -Itest/policyd -Itest/playboxd \
	$(call pkg_cflags,libprotobuf-c jansson)

$(BUILD)/test/policyd/test_policyd: $(POLICYD_TEST_OBJS) $(BUILD)/test/playboxd/playboxd.o \
		$(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BUILD)/test/policyd/test_policyd: private MODULE_LDLIBS := \
	$(call pkg_libs,libprotobuf-c jansson) $(BORINGSSL_CRYPTO_LIBS)

CHECK_PROGRAMS += $(BUILD)/test/policyd/test_policyd

CHECK_SCRIPTS += test/policyd/log.sh

# Attached box-shell channels (PolicyChannelAttach).
POLICYD_ATTACH_OBJS := $(BUILD)/test/policyd/test_attach.o
ALL_OBJS            += $(POLICYD_ATTACH_OBJS)
$(POLICYD_ATTACH_OBJS): private MODULE_CPPFLAGS := -Itest/unit -Itest/policyd -Itest/playboxd \
	$(call pkg_cflags,libprotobuf-c jansson)
$(BUILD)/test/policyd/test_attach: $(POLICYD_ATTACH_OBJS) $(BUILD)/test/policyd/harness.o $(BUILD)/test/playboxd/playboxd.o \
		$(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BUILD)/test/policyd/test_attach: private MODULE_LDLIBS := $(call pkg_libs,libprotobuf-c jansson) \
	$(BORINGSSL_CRYPTO_LIBS)
CHECK_PROGRAMS += $(BUILD)/test/policyd/test_attach

# MCP tool schemas and probes (PolicyToolSchema, PolicyProbeRequest).
POLICYD_MCP_OBJS := $(BUILD)/test/policyd/test_mcp.o
ALL_OBJS         += $(POLICYD_MCP_OBJS)
$(POLICYD_MCP_OBJS): private MODULE_CPPFLAGS := -Itest/unit -Itest/policyd -Itest/playboxd \
	$(call pkg_cflags,libprotobuf-c jansson)
$(BUILD)/test/policyd/test_mcp: $(POLICYD_MCP_OBJS) $(BUILD)/test/policyd/harness.o $(BUILD)/test/playboxd/playboxd.o \
		$(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BUILD)/test/policyd/test_mcp: private MODULE_LDLIBS := $(call pkg_libs,libprotobuf-c jansson) \
	$(BORINGSSL_CRYPTO_LIBS)
CHECK_PROGRAMS += $(BUILD)/test/policyd/test_mcp

# Decisions without a round trip (PolicyLocalRequest, PolicyShip).
POLICYD_SHIP_OBJS := $(BUILD)/test/policyd/test_ship.o
ALL_OBJS          += $(POLICYD_SHIP_OBJS)
$(POLICYD_SHIP_OBJS): private MODULE_CPPFLAGS := -Itest/unit -Itest/policyd -Itest/playboxd \
	$(call pkg_cflags,libprotobuf-c jansson)
$(BUILD)/test/policyd/test_ship: $(POLICYD_SHIP_OBJS) $(BUILD)/test/policyd/harness.o $(BUILD)/test/playboxd/playboxd.o \
		$(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BUILD)/test/policyd/test_ship: private MODULE_LDLIBS := $(call pkg_libs,libprotobuf-c jansson) \
	$(BORINGSSL_CRYPTO_LIBS)
CHECK_PROGRAMS += $(BUILD)/test/policyd/test_ship

# Decisions held for a person (@ask: PolicyAskList, PolicyAskAnswer).
POLICYD_ASK_OBJS := $(BUILD)/test/policyd/test_ask.o
ALL_OBJS         += $(POLICYD_ASK_OBJS)
$(POLICYD_ASK_OBJS): private MODULE_CPPFLAGS := -Itest/unit -Itest/policyd -Itest/playboxd \
	$(call pkg_cflags,libprotobuf-c jansson)
$(BUILD)/test/policyd/test_ask: $(POLICYD_ASK_OBJS) $(BUILD)/test/policyd/harness.o $(BUILD)/test/playboxd/playboxd.o \
		$(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BUILD)/test/policyd/test_ask: private MODULE_LDLIBS := $(call pkg_libs,libprotobuf-c jansson) \
	$(BORINGSSL_CRYPTO_LIBS)
CHECK_PROGRAMS += $(BUILD)/test/policyd/test_ask
