# SPDX-License-Identifier: Apache-2.0
# test_sh_parse: box-shell's parser, arithmetic and variable caps (no execution: the test
# provides exec.c's two message functions).
UNIT_DEPS_sh_parse := $(BUILD)/libshell/parse.o $(BUILD)/libshell/vars.o $(BUILD)/libshell/arith.o
UNIT_LIBS_sh_parse :=
UNIT_CPPFLAGS_sh_parse := $(LIBSHELL_INCLUDES)
