# SPDX-License-Identifier: Apache-2.0
# bench/policyd/ — box-policyd Decide round trips and the temporal history;
# it shares test/policyd/harness.c with the tests.

POLICYD_BENCH_OBJS := $(BUILD)/bench/policyd/policyd_bench.o
ALL_OBJS           += $(POLICYD_BENCH_OBJS)

$(POLICYD_BENCH_OBJS): private MODULE_CPPFLAGS := -Itest/policyd -Itest/playboxd -Ilibpolicyclient $(call pkg_cflags,libprotobuf-c jansson)

$(BUILD)/bench/policyd/policyd_bench: $(POLICYD_BENCH_OBJS) $(BUILD)/test/policyd/harness.o $(BUILD)/test/playboxd/playboxd.o \
		$(LIBPOLICYCLIENT) $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BUILD)/bench/policyd/policyd_bench: private MODULE_LDLIBS := \
	$(call pkg_libs,libprotobuf-c libevent jansson) -lpthread $(BORINGSSL_CRYPTO_LIBS)

bench: $(BUILD)/bench/policyd/policyd_bench
BENCH_SCRIPTS += bench/policyd/run.sh

# make check runs the smoke mode (run.sh --smoke), which needs the benchmark built.
CHECK_DEPS    += $(BUILD)/bench/policyd/policyd_bench
CHECK_SCRIPTS += bench/policyd/smoke.sh
