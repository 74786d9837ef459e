# SPDX-License-Identifier: Apache-2.0
# fuzz_gw_hosts — box-gateway's hosts(5) parser (box-gateway/hosts.c, from libgateway.a).
FUZZ_DEPS_gw_hosts := $(LIBGATEWAY)
FUZZ_LIBS_gw_hosts := $(GATEWAY_LIBS)
$(BUILD)/test/fuzz/fuzz_gw_hosts.o: private MODULE_CPPFLAGS := $(GATEWAY_CPPFLAGS)
