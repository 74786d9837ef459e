# SPDX-License-Identifier: Apache-2.0
# test_alias_parse: box-alias/alias.c's argument grammar (alias_parse, alias_dialect).
UNIT_DEPS_alias_parse := $(BUILD)/box-alias/alias.o
UNIT_LIBS_alias_parse :=
