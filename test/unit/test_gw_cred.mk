# SPDX-License-Identifier: Apache-2.0
# test_gw_cred — box-gateway/cred.c: destinations, the request rewrite, the streaming redactor.
UNIT_DEPS_gw_cred := $(LIBGATEWAY)
UNIT_LIBS_gw_cred := $(GATEWAY_LIBS)
# test/unit/module.mk sets every test object's MODULE_CPPFLAGS after this file is read, so
# the gateway's include flags go through MODULE_CFLAGS.
$(BUILD)/test/unit/test_gw_cred.o: private MODULE_CFLAGS := $(GATEWAY_CPPFLAGS)
