# SPDX-License-Identifier: Apache-2.0
# fuzz_gw_redact — box-gateway's reply redaction (box-gateway/redact.c, from libgateway.a).
FUZZ_DEPS_gw_redact := $(LIBGATEWAY)
FUZZ_LIBS_gw_redact := $(GATEWAY_LIBS)
$(BUILD)/test/fuzz/fuzz_gw_redact.o: private MODULE_CPPFLAGS := $(GATEWAY_CPPFLAGS)
