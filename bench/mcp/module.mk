# SPDX-License-Identifier: Apache-2.0
# bench/mcp/ — box-mcpd's tools/call round trip: a C MCP client (the harness;
# inside a box it is the agent and runs the alias) and a C stdio MCP server, measured through
# box-mcpd in a real box and directly, in one run. make check runs its smoke mode (smoke.sh).
MCPBENCH_CLIENT_OBJS := $(BUILD)/bench/mcp/mcpclient.o
MCPBENCH_SERVER_OBJS := $(BUILD)/bench/mcp/mcpserver.o
ALL_OBJS += $(MCPBENCH_CLIENT_OBJS) $(MCPBENCH_SERVER_OBJS)

$(MCPBENCH_CLIENT_OBJS) $(MCPBENCH_SERVER_OBJS): private MODULE_CPPFLAGS := \
	$(call pkg_cflags,jansson)

$(BUILD)/bench/mcp/mcpclient: $(MCPBENCH_CLIENT_OBJS)
	$(link_program)
$(BUILD)/bench/mcp/mcpserver: $(MCPBENCH_SERVER_OBJS)
	$(link_program)
$(BUILD)/bench/mcp/mcpclient $(BUILD)/bench/mcp/mcpserver: private MODULE_LDLIBS := \
	$(call pkg_libs,jansson)

bench: $(BUILD)/bench/mcp/mcpclient $(BUILD)/bench/mcp/mcpserver
BENCH_SCRIPTS += bench/mcp/run.sh
CHECK_DEPS    += $(BUILD)/bench/mcp/mcpclient $(BUILD)/bench/mcp/mcpserver
CHECK_SCRIPTS += bench/mcp/smoke.sh
