# SPDX-License-Identifier: Apache-2.0
# test_gw_http — box-gateway/http.c: heads, the smuggling refusals, chunked bodies, targets.
# (The object includes "box-gateway/http.h" by path: module.mk sets the unit objects' flags
# after this file is read.)
UNIT_DEPS_gw_http := $(LIBGATEWAY)
UNIT_LIBS_gw_http := $(GATEWAY_LIBS)
