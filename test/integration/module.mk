# SPDX-License-Identifier: Apache-2.0
# test/integration/ — shell tests against the built binaries (t-*.sh, TAP-like).
# Over 30 s each: make check-slow.
INTEGRATION_SLOW := test/integration/t-teardown-race.sh test/integration/t-log-filters.sh \
	test/integration/t-log-verify.sh \
	test/integration/t-shell-agent.sh test/integration/t-faults.sh \
	test/integration/t-supervise-agent.sh test/integration/t-supervise-python.sh \
	test/integration/t-supervise-budget.sh test/integration/t-supervise-tools.sh \
	test/integration/t-load.sh test/integration/t-policy-prompt.sh
CHECK_SCRIPTS += $(filter-out $(INTEGRATION_SLOW),$(sort $(wildcard test/integration/t-*.sh)))
SLOW_SCRIPTS  += $(INTEGRATION_SLOW)

# The racing owner of t-teardown-race.sh.
$(BIN)/box-test-swap: test/integration/swap-race.c
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-format-truncation -o $@ $<
CHECK_DEPS += $(BIN)/box-test-swap

# The stand-in gateway of t-gw-boxd.sh: boxd's side of the gateway protocol alone.
$(BUILD)/test/integration/gw-fake.o: private MODULE_CPPFLAGS := -Iproto \
	$(call pkg_cflags,libprotobuf-c)
$(BIN)/box-test-gwfake: $(BUILD)/test/integration/gw-fake.o $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BIN)/box-test-gwfake: private MODULE_LDLIBS := $(call pkg_libs,libprotobuf-c)
CHECK_DEPS += $(BIN)/box-test-gwfake

# The stand-in box-shell of t-shell-boxd.sh: boxd's side of the control protocol alone.
$(BUILD)/test/integration/shell-fake.o: private MODULE_CPPFLAGS := -Iproto \
	$(call pkg_cflags,libprotobuf-c)
$(BIN)/box-test-shellfake: $(BUILD)/test/integration/shell-fake.o $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BIN)/box-test-shellfake: private MODULE_LDLIBS := $(call pkg_libs,libprotobuf-c)
CHECK_DEPS += $(BIN)/box-test-shellfake

# The stand-in box-mcpd of t-mcp-boxd-ctl.sh: boxd's side of the MCP control protocol alone.
$(BUILD)/test/integration/mcpd-fake.o: private MODULE_CPPFLAGS := -Iproto \
	$(call pkg_cflags,libprotobuf-c)
$(BIN)/box-test-mcpdfake: $(BUILD)/test/integration/mcpd-fake.o $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BIN)/box-test-mcpdfake: private MODULE_LDLIBS := $(call pkg_libs,libprotobuf-c)
CHECK_DEPS += $(BIN)/box-test-mcpdfake

# The forger of t-shell-fds.sh: the bytes of a box-policyd message a script would write.
$(BUILD)/test/integration/forge.o: private MODULE_CPPFLAGS := -Iproto \
	$(call pkg_cflags,libprotobuf-c)
$(BIN)/box-test-forge: $(BUILD)/test/integration/forge.o $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BIN)/box-test-forge: private MODULE_LDLIBS := $(call pkg_libs,libprotobuf-c)
CHECK_DEPS += $(BIN)/box-test-forge
