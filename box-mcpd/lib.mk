# SPDX-License-Identifier: Apache-2.0
# box-mcpd/lib.mk — libmcpd.a: box-mcpd's pure modules (jsonrpc: one frame
# parsed and classified, error replies; toolschema: tool catalog, canonical
# definitions, docs/box-policy.5.md typing of schemas and arguments; pins: the pins
# file's state and lines). No I/O, no logging; jansson + the generated
# policy.pb-c structs. boxctl links it too (pins.c for `boxctl mcp`).
#
# For box-mcpd/module.mk (helper B): this file is included before it (the
# top Makefile includes */lib.mk with the module.mk files, sorted). Filter
# $(MCPD_LIB_SRCS) out of a wildcard over box-mcpd/*.c and link
# $(LIBMCPD) before $(LIBPROTO) (it uses policy.pb-c.o and proto/text.o),
# with jansson and -lm in MODULE_LDLIBS.
MCPD_LIB_SRCS := box-mcpd/jsonrpc.c box-mcpd/toolschema.c box-mcpd/pins.c
MCPD_LIB_OBJS := $(MCPD_LIB_SRCS:%.c=$(BUILD)/%.o)
LIBMCPD       := $(BUILD)/box-mcpd/libmcpd.a
ALL_OBJS      += $(MCPD_LIB_OBJS)

$(MCPD_LIB_OBJS): private MODULE_CPPFLAGS := -Iproto $(call pkg_cflags,libprotobuf-c jansson)

$(LIBMCPD): $(MCPD_LIB_OBJS)
	$(archive)
