# SPDX-License-Identifier: Apache-2.0
# test/temporal/ — temporal conformance: box-temporal-trace decides
# the traces in test/conformance/temporal/ through the incremental monitor and
# checks the load-time refusals; run.sh compares with the expected files.
TEMPORAL_TRACE_OBJS := $(BUILD)/test/temporal/trace.o
ALL_OBJS            += $(TEMPORAL_TRACE_OBJS)

$(TEMPORAL_TRACE_OBJS): private MODULE_CPPFLAGS := $(call pkg_cflags,jansson)

$(BUILD)/test/temporal/box-temporal-trace: $(TEMPORAL_TRACE_OBJS) $(LIBBOXPOLICY) $(LIBCOMMON)
	$(link_program)
$(BUILD)/test/temporal/box-temporal-trace: private MODULE_LDLIBS := $(call pkg_libs,jansson) -lm

CHECK_DEPS += $(BUILD)/test/temporal/box-temporal-trace
CHECK_SCRIPTS += test/temporal/run.sh
