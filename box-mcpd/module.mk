# SPDX-License-Identifier: Apache-2.0
# box-mcpd/ — the MCP broker (docs/box-mcpd.8.md): one daemon per box
# with a stdio [mcp.NAME], started by boxd with fds 3 (control), 4 (its
# box-policyd channel), 5 (the listening mcp.sock). Links common/, proto/
# (+ libprotobuf-c), libpolicyclient/ (its box-policyd channel), libevent,
# jansson and libseccomp; no network code, never libboxpolicy. jsonrpc.c, toolschema.c and pins.c are the pure
# library (box-mcpd/lib.mk: libmcpd.a, linked here, by the unit tests and
# boxctl).
MCPD_SRCS := $(filter-out $(MCPD_LIB_SRCS),$(wildcard box-mcpd/*.c))
MCPD_OBJS := $(MCPD_SRCS:%.c=$(BUILD)/%.o)
ALL_OBJS  += $(MCPD_OBJS)

$(MCPD_OBJS): private MODULE_CPPFLAGS := -Iproto -Ibox-mcpd \
	$(call pkg_cflags,libprotobuf-c libevent jansson libseccomp)

ifneq ($(wildcard box-mcpd/main.c),)
LIBEXEC_PROGRAMS += $(BIN)/box-mcpd
$(BIN)/box-mcpd: $(MCPD_OBJS) $(LIBMCPD) $(LIBPOLICYCLIENT) $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BIN)/box-mcpd: private MODULE_LDLIBS := \
	$(call pkg_libs,libprotobuf-c libevent jansson libseccomp libcap) -lm
endif

# The broker alone under a harness playing boxd and box-policyd.
include $(wildcard test/mcp/daemon/module.mk)
# The official MCP TypeScript SDK as client and server through the broker, in real boxes.
include $(wildcard test/mcp/sdk/module.mk)
