# SPDX-License-Identifier: Apache-2.0
# test_init_template: boxctl/init_template.c (the language of `boxctl init`'s templates) on
# templates of its own; the test defines the init_templates table the renderer looks in.
UNIT_DEPS_init_template := $(BUILD)/boxctl/init_template.o
