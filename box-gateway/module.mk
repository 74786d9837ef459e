# box-gateway/ — the per-box HTTP(S) egress proxy (DESIGN.md §2-§4;
# box-gateway/README.md). Every file but main.c goes into libgateway.a, which
# the unit tests and fuzz targets link; main.c is the daemon's start-up.
# Links common/, proto/ (gateway + policy tables), libevent (core, extra for
# evdns), BoringSSL, jansson (remote MCP, issue 14) and libseccomp — never
# OpenSSL or libevent_openssl.
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

$(BIN)/box-gateway: $(GATEWAY_MAIN_OBJ) $(LIBGATEWAY) $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BIN)/box-gateway: private MODULE_LDLIBS := $(GATEWAY_LIBS)
