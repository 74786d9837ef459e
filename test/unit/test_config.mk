# SPDX-License-Identifier: Apache-2.0
# test_config: box.ini loading through boxctl's config API.
UNIT_DEPS_config := $(BUILD)/boxctl/config_parse.o $(BUILD)/boxctl/config_rules.o $(BUILD)/boxctl/config_host.o $(BUILD)/boxctl/owner.o $(BUILD)/boxctl/config_print.o $(BUILD)/boxctl/cmdline.o
UNIT_LIBS_config := $(call pkg_libs,inih libcap)
