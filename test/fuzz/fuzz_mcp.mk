# SPDX-License-Identifier: Apache-2.0
# fuzz_mcp — box-mcpd's pure library (libmcpd.a: jsonrpc, toolschema, pins);
# type expressions checked against libboxpolicy, inputs against proto's validator.
FUZZ_DEPS_mcp := $(BUILD)/box-mcpd/libmcpd.a $(LIBBOXPOLICY) $(LIBPROTO)
FUZZ_LIBS_mcp := $(call pkg_libs,libprotobuf-c jansson) -lpthread -lm
