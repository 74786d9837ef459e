# SPDX-License-Identifier: Apache-2.0
# box-gateway/ — the per-box HTTP(S) egress proxy (docs/design.md;
# box-gateway/README.md). Every file but main.c goes into libgateway.a, which
# the unit tests and fuzz targets link; main.c is the daemon's start-up.
# Links common/, proto/ (gateway + policy tables), libpolicyclient/ (its box-policyd
# channel), libboxpolicy/ (the decisions it makes in process), libevent (core, extra for
# evdns), BoringSSL, jansson (remote MCP) and libseccomp — never
# OpenSSL or libevent_openssl — and box-mcpd's libmcpd.a for jsonrpc.o alone:
# the one JSON-RPC classifier (what is a request, a notification, an id-less
# call), so the gateway and the broker cannot disagree.
GATEWAY_LIB_SRCS := $(filter-out box-gateway/main.c,$(wildcard box-gateway/*.c))
GATEWAY_LIB_OBJS := $(GATEWAY_LIB_SRCS:%.c=$(BUILD)/%.o)
GATEWAY_MAIN_OBJ := $(BUILD)/box-gateway/main.o
LIBGATEWAY       := $(BUILD)/box-gateway/libgateway.a
ALL_OBJS         += $(GATEWAY_LIB_OBJS) $(GATEWAY_MAIN_OBJ)
ifneq ($(wildcard box-gateway/main.c),)
LIBEXEC_PROGRAMS += $(BIN)/box-gateway
endif

GATEWAY_CPPFLAGS := -Iproto -Ibox-gateway $(BORINGSSL_CFLAGS) \
	$(call pkg_cflags,libprotobuf-c libevent jansson libseccomp)
GATEWAY_LIBS     := $(BORINGSSL_LIBS) \
	$(call pkg_libs,libprotobuf-c libevent jansson libseccomp libcap)

$(GATEWAY_LIB_OBJS) $(GATEWAY_MAIN_OBJ): private MODULE_CPPFLAGS := $(GATEWAY_CPPFLAGS)

$(LIBGATEWAY): $(GATEWAY_LIB_OBJS)
	$(archive)

# (libmcpd.a by its path: box-mcpd/lib.mk, which names it, is read after this file.)
$(BIN)/box-gateway: $(GATEWAY_MAIN_OBJ) $(LIBGATEWAY) $(BUILD)/box-mcpd/libmcpd.a \
		$(LIBPOLICYCLIENT) $(LIBBOXPOLICY) $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BIN)/box-gateway: private MODULE_LDLIBS := $(GATEWAY_LIBS)
