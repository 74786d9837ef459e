# SPDX-License-Identifier: Apache-2.0
# bench/telemetry/ — what an otlp [telemetry.NAME] target costs box-policyd's Decide
# throughput (telemetry_bench.c); it shares test/policyd/harness.c with the tests.

TELEMETRY_BENCH_OBJS := $(BUILD)/bench/telemetry/telemetry_bench.o
ALL_OBJS             += $(TELEMETRY_BENCH_OBJS)

$(TELEMETRY_BENCH_OBJS): private MODULE_CPPFLAGS := -Itest/policyd -Itest/playboxd -Ilibpolicyclient $(call pkg_cflags,libprotobuf-c jansson)

$(BUILD)/bench/telemetry/telemetry_bench: $(TELEMETRY_BENCH_OBJS) $(BUILD)/test/policyd/harness.o \
		$(BUILD)/test/playboxd/playboxd.o $(LIBPOLICYCLIENT) $(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BUILD)/bench/telemetry/telemetry_bench: private MODULE_LDLIBS := \
	$(call pkg_libs,libprotobuf-c libevent jansson) -lpthread $(BORINGSSL_CRYPTO_LIBS)

bench: $(BUILD)/bench/telemetry/telemetry_bench
BENCH_SCRIPTS += bench/telemetry/run.sh
