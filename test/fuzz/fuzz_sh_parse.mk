# SPDX-License-Identifier: Apache-2.0
# fuzz_sh_parse — box-shell's lexer and parser (parse.c, with vars.c and arith.c;
# no execution: the target provides the two message functions of exec.c).
FUZZ_DEPS_sh_parse := $(BUILD)/libshell/parse.o $(BUILD)/libshell/vars.o \
	$(BUILD)/libshell/arith.o
FUZZ_LIBS_sh_parse :=
$(BUILD)/test/fuzz/fuzz_sh_parse.o: private MODULE_CPPFLAGS := $(LIBSHELL_INCLUDES)
