# SPDX-License-Identifier: Apache-2.0
# test/shell/daemon/ — the box-shell daemon end to end:
# test_shelld plays boxd (the real box-policyd through test/policyd's
# harness, a listening shell.sock, ShellInit, a fake boxd answering
# SpawnRequests by fork+exec) and the alias (ShellOpen with pipes or a pty);
# t-shelld.sh runs it as root and as the ordinary user boxtest.
SHD_TEST_DIR  := $(BUILD)/test/shell/daemon
SHD_TEST_OBJS := $(SHD_TEST_DIR)/test_shelld.o
ALL_OBJS      += $(SHD_TEST_OBJS)

$(SHD_TEST_OBJS): private MODULE_CPPFLAGS := -Itest/unit -Itest/policyd -Itest/playboxd \
	$(call pkg_cflags,libprotobuf-c jansson libseccomp)

$(SHD_TEST_DIR)/test_shelld: $(SHD_TEST_OBJS) $(BUILD)/test/policyd/harness.o $(BUILD)/test/playboxd/playboxd.o $(LIBPROTO) \
		$(LIBCOMMON)
	$(link_program)
$(SHD_TEST_DIR)/test_shelld: private MODULE_LDLIBS := \
	$(call pkg_libs,libprotobuf-c jansson libseccomp) -lutil $(BORINGSSL_CRYPTO_LIBS)

ifneq ($(wildcard box-shell/main.c),)
# Over 30 s (it fills the 512-session cap, as root and as boxtest): make check-slow.
SLOW_SCRIPTS  += test/shell/daemon/t-shelld.sh
CHECK_DEPS    += $(SHD_TEST_DIR)/test_shelld $(BIN)/box-shell $(BIN)/box-policyd
endif
