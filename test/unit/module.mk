# SPDX-License-Identifier: Apache-2.0
# test/unit/ — one program per module: test/unit/test_NAME.c (see tap.h).
# Every test links libboxcommon, libboxproto and libcrypto (common/logchain.c); a sidecar test/unit/test_NAME.mk
# may add UNIT_DEPS_NAME (objects/static libs), UNIT_LIBS_NAME (linker flags) and
# UNIT_CPPFLAGS_NAME (include paths).
include $(wildcard test/unit/test_*.mk)

UNIT_NAMES := $(patsubst test/unit/test_%.c,%,$(wildcard test/unit/test_*.c))
UNIT_BASE_LIBS := $(call pkg_libs,libprotobuf-c libevent) $(BORINGSSL_CRYPTO_LIBS)
ALL_OBJS += $(UNIT_NAMES:%=$(BUILD)/test/unit/test_%.o)

define unit_test_rule
$(BUILD)/test/unit/test_$(1).o: private MODULE_CPPFLAGS := -Itest/unit \
	$(call pkg_cflags,libprotobuf-c libevent) $(UNIT_CPPFLAGS_$(1))
$(BUILD)/test/unit/test_$(1): $(BUILD)/test/unit/test_$(1).o $(UNIT_DEPS_$(1)) $(LIBPROTO) $(LIBCOMMON)
	$$(link_program)
$(BUILD)/test/unit/test_$(1): private MODULE_LDLIBS := $(UNIT_LIBS_$(1)) $(UNIT_BASE_LIBS)
CHECK_PROGRAMS += $(BUILD)/test/unit/test_$(1)
endef
$(foreach n,$(UNIT_NAMES),$(eval $(call unit_test_rule,$(n))))
