# SPDX-License-Identifier: Apache-2.0
# test_gw_ca — box-gateway/ca.c (the per-box CA, its leaf cache, the server
# and upstream TLS contexts) with BoringSSL; it also runs the openssl CLI.
UNIT_DEPS_gw_ca := $(LIBGATEWAY)
UNIT_LIBS_gw_ca := $(GATEWAY_LIBS)
# test/unit/module.mk sets the objects' MODULE_CPPFLAGS after this file is
# included, so the BoringSSL include path rides on MODULE_CFLAGS.
$(BUILD)/test/unit/test_gw_ca.o: private MODULE_CFLAGS := $(GATEWAY_CPPFLAGS)
