# SPDX-License-Identifier: Apache-2.0
# test_cmdline: boxctl's command-line splitting and quoting.
UNIT_DEPS_cmdline := $(BUILD)/boxctl/cmdline.o
