# SPDX-License-Identifier: Apache-2.0
# test_gw_redact — box-gateway/encode.c and redact.c: encodings, spellings, the streaming redactor.
UNIT_DEPS_gw_redact := $(LIBGATEWAY)
UNIT_LIBS_gw_redact := $(GATEWAY_LIBS)
# test/unit/module.mk sets every test object's MODULE_CPPFLAGS after this file is read, so
# the gateway's include flags go through MODULE_CFLAGS.
$(BUILD)/test/unit/test_gw_redact.o: private MODULE_CFLAGS := $(GATEWAY_CPPFLAGS)
