# SPDX-License-Identifier: Apache-2.0
# test/gateway/ — box-gateway alone: gw-harness plays boxd (fd 3) and box-policyd (fd 4,
# the policy evaluated by box-policyd's engine over libboxpolicy, or the real box-policyd
# started by test/policyd/harness.c with --policyd); the t-*.sh scripts drive
# it with the loopback servers of test/servers/. The harness links box-policyd's engine;
# the gateway links only libboxpolicy's evaluator, for the decisions it makes in process
# (test/layering/symbols.sh).
GW_HARNESS     := $(BUILD)/test/gateway/gw-harness
GW_HARNESS_OBJ := $(BUILD)/test/gateway/gw-harness.o
ALL_OBJS       += $(GW_HARNESS_OBJ)

$(GW_HARNESS_OBJ): private MODULE_CPPFLAGS := -Iproto -Ibox-policyd -Itest/playboxd -Itest/policyd \
	$(call pkg_cflags,libprotobuf-c jansson)

$(GW_HARNESS): $(GW_HARNESS_OBJ) $(BUILD)/test/playboxd/playboxd.o $(BUILD)/test/policyd/harness.o \
		$(BUILD)/box-policyd/engine.o \
		$(BUILD)/box-policyd/history.o \
		$(LIBBOXPOLICY) $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(GW_HARNESS): private MODULE_LDLIBS := $(call pkg_libs,libprotobuf-c jansson) $(BORINGSSL_CRYPTO_LIBS)

CHECK_DEPS    += $(GW_HARNESS) $(BIN)/box-gateway
# Over 30 s each (MCP through the gateway in every transport; the limits, run alone):
# make check-slow.
GATEWAY_SLOW  := test/gateway/t-gw-mcp.sh test/gateway/t-gw-limits.sh
CHECK_SCRIPTS += $(filter-out $(GATEWAY_SLOW),$(sort $(wildcard test/gateway/t-*.sh)))
SLOW_SCRIPTS  += $(GATEWAY_SLOW)
