# SPDX-License-Identifier: Apache-2.0
# bench/policy/ — libboxpolicy against cedar-wasm (decisions/s, p50/p99); make check runs
# its smoke mode (smoke.sh).
BENCH_POLICY_OBJS := $(BUILD)/bench/policy/bench_policy.o
ALL_OBJS += $(BENCH_POLICY_OBJS)
$(BENCH_POLICY_OBJS): private MODULE_CPPFLAGS := $(call pkg_cflags,jansson)
$(BUILD)/bench/policy/bench_policy: $(BENCH_POLICY_OBJS) $(LIBBOXPOLICY)
	$(link_program)
$(BUILD)/bench/policy/bench_policy: private MODULE_LDLIBS := $(call pkg_libs,jansson)
bench: $(BUILD)/bench/policy/bench_policy
BENCH_SCRIPTS += bench/policy/run.sh
CHECK_DEPS    += $(BUILD)/bench/policy/bench_policy
CHECK_SCRIPTS += bench/policy/smoke.sh
