# SPDX-License-Identifier: Apache-2.0
# test_mcp_toolschema — box-mcpd/toolschema.c; its type expressions are fed to
# libboxpolicy's bp_schema_add_field and its inputs to proto's validator.
UNIT_DEPS_mcp_toolschema := $(BUILD)/box-mcpd/libmcpd.a $(BUILD)/libboxpolicy/libboxpolicy.a
UNIT_LIBS_mcp_toolschema := $(call pkg_libs,jansson) -lpthread -lm
