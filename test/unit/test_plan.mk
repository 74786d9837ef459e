# SPDX-License-Identifier: Apache-2.0
# test_plan: boxd/plan.c (plan_build, plan_disclosure) on requests built by boxctl and
# decoded as boxd does; links the boxd objects plan.c needs (ownpaths, runtime; problem_new is
# in proto/recheck_shared.c) and boxctl's loader and spec builder for the input.
UNIT_DEPS_plan := $(BUILD)/boxd/plan.o $(BUILD)/boxd/ownpaths.o $(BUILD)/boxd/runtime.o \
	$(BUILD)/boxd/recheck_result.o $(BUILD)/boxctl/spec.o $(BUILD)/boxctl/config_parse.o \
	$(BUILD)/boxctl/config_rules.o $(BUILD)/boxctl/config_host.o $(BUILD)/boxctl/owner.o \
	$(BUILD)/boxctl/config_print.o $(BUILD)/boxctl/cmdline.o
UNIT_LIBS_plan := $(call pkg_libs,inih libcap)
