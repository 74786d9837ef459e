# SPDX-License-Identifier: Apache-2.0
# test/mcp/sdk/ — the official MCP TypeScript SDK (@modelcontextprotocol/sdk, pinned in
# package-lock.json, installed by `make deps` with npm ci) as both client and server
# through box-mcpd in real boxes: t-mcp-sdk.sh, as root and as boxtest.
# Included by box-mcpd/module.mk (the top Makefile includes test/*/module.mk only);
# guarded so that an include from test/mcp/module.mk is harmless.
ifndef MCP_SDK_TEST_MK
MCP_SDK_TEST_MK := 1
ifneq ($(wildcard box-mcpd/main.c),)
CHECK_SCRIPTS += test/mcp/sdk/t-mcp-sdk.sh
CHECK_DEPS    += $(BIN)/box-mcpd
endif
endif
