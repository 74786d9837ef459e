# SPDX-License-Identifier: Apache-2.0
# test_mcp_jsonrpc — box-mcpd/jsonrpc.c (libmcpd.a, box-mcpd/lib.mk).
UNIT_DEPS_mcp_jsonrpc := $(BUILD)/box-mcpd/libmcpd.a
UNIT_LIBS_mcp_jsonrpc := $(call pkg_libs,jansson)
