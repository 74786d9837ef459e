# SPDX-License-Identifier: Apache-2.0
# test_spec: boxctl/spec.c — a loaded box.ini becomes a BoxSpec boxd's validator accepts.
UNIT_DEPS_spec := $(BUILD)/boxctl/spec.o $(BUILD)/boxctl/config_parse.o $(BUILD)/boxctl/config_rules.o $(BUILD)/boxctl/config_host.o $(BUILD)/boxctl/owner.o $(BUILD)/boxctl/config_print.o $(BUILD)/boxctl/cmdline.o
UNIT_LIBS_spec := $(call pkg_libs,inih libcap)
