# SPDX-License-Identifier: Apache-2.0
# fuzz_gw_http — box-gateway's HTTP heads, chunked decoder, targets and host spellings
# (box-gateway/http.c, addr.c, linked from libgateway.a).
FUZZ_DEPS_gw_http := $(LIBGATEWAY)
FUZZ_LIBS_gw_http := $(GATEWAY_LIBS)
