# SPDX-License-Identifier: Apache-2.0
# test_mcp_pins — box-mcpd/pins.c (libmcpd.a, box-mcpd/lib.mk).
UNIT_DEPS_mcp_pins := $(BUILD)/box-mcpd/libmcpd.a
UNIT_LIBS_mcp_pins := $(call pkg_libs,jansson)
