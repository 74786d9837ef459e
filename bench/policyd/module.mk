# bench/policyd/ — box-policyd Decide round trips and the temporal history
# (issue 5 item 6). Included once, from test/policyd/module.mk (the top-level
# Makefile includes only bench/module.mk) or by a bench/*/module.mk wildcard.
ifndef BENCH_POLICYD_MK
BENCH_POLICYD_MK := 1

POLICYD_BENCH_OBJS := $(BUILD)/bench/policyd/policyd_bench.o
ALL_OBJS           += $(POLICYD_BENCH_OBJS)

$(POLICYD_BENCH_OBJS): private MODULE_CPPFLAGS := -Itest/policyd $(call pkg_cflags,libprotobuf-c jansson)

$(BUILD)/bench/policyd/policyd_bench: $(POLICYD_BENCH_OBJS) $(BUILD)/test/policyd/harness.o \
		$(LIBPROTO) $(LIBCOMMON)
	$(link_program)
$(BUILD)/bench/policyd/policyd_bench: private MODULE_LDLIBS := $(LIBPROTO) $(LIBCOMMON) \
	$(call pkg_libs,libprotobuf-c jansson) -lpthread

bench: $(BUILD)/bench/policyd/policyd_bench
BENCH_SCRIPTS += bench/policyd/run.sh
endif
