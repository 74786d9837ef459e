# SPDX-License-Identifier: Apache-2.0
# bench/gateway/ — box-gateway against direct and mitmdump (bench/gateway/run.sh), driven by
# one C load generator that speaks CONNECT (loadgen.c, BoringSSL).
LOADGEN_OBJS := $(BUILD)/bench/gateway/loadgen.o
ALL_OBJS     += $(LOADGEN_OBJS)

$(LOADGEN_OBJS): private MODULE_CPPFLAGS := $(BORINGSSL_CFLAGS)

$(BUILD)/bench/gateway/loadgen: $(LOADGEN_OBJS)
	$(link_program)
$(BUILD)/bench/gateway/loadgen: private MODULE_LDLIBS := $(BORINGSSL_LIBS)

bench: $(BUILD)/bench/gateway/loadgen
BENCH_SCRIPTS += bench/gateway/run.sh
# box-gateway runs under the standalone harness (test/gateway/, built there).
ifneq ($(wildcard test/gateway/gw-harness.c),)
bench: $(BUILD)/test/gateway/gw-harness
endif

# make check runs the smoke mode (run.sh --smoke), which needs the load generator built.
CHECK_DEPS    += $(BUILD)/bench/gateway/loadgen
CHECK_SCRIPTS += bench/gateway/smoke.sh
