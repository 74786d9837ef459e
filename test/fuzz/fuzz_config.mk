# SPDX-License-Identifier: Apache-2.0
# fuzz_config: box.ini parsing without the host (no config_host.o) and command re-quoting.
FUZZ_DEPS_config := $(BUILD)/boxctl/config_parse.o $(BUILD)/boxctl/config_rules.o \
	$(BUILD)/boxctl/config_print.o $(BUILD)/boxctl/cmdline.o
FUZZ_LIBS_config := $(call pkg_libs,inih)
