# SPDX-License-Identifier: Apache-2.0
# test_gw_addr — box-gateway/addr.c: host and ip spellings, refused-before-policy addresses.
UNIT_DEPS_gw_addr := $(LIBGATEWAY)
UNIT_LIBS_gw_addr := $(GATEWAY_LIBS)
