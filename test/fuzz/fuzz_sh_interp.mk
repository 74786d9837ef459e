# SPDX-License-Identifier: Apache-2.0
# fuzz_sh_interp — box-shell's interpreter (parse, expand, arith, pattern,
# vars, builtins, exec, redir, wrappers, jobs; cmdutil for its buffers; host.o with
# no host table installed) over sh_host_stub.c's: no fsops.o, no decision back end, no
# own commands. The harness wraps the process calls it contains (see its header).
FUZZ_SH_INTERP_OBJS := $(addprefix $(BUILD)/libshell/,parse.o expand.o arith.o pattern.o \
	vars.o builtins.o exec.o redir.o wrappers.o jobs.o cmd/cmdutil.o host.o)
FUZZ_DEPS_sh_interp := $(BUILD)/test/fuzz/sh_host_stub.o $(FUZZ_SH_INTERP_OBJS)
FUZZ_LIBS_sh_interp := -lm $(foreach f,fork waitpid execve kill sigaction signal chdir close dup2,-Wl,--wrap=$(f))
FUZZ_ARGS_sh_interp := -close_fd_mask=3 -timeout=20 -dict=test/fuzz/sh_interp.dict
# more seeds, read only: the differential corpus (box-sh against bash and dash), the parser's
FUZZ_SEEDS_sh_interp := $(wildcard test/shell/diff/*/) test/fuzz/corpus/sh_parse
ALL_OBJS += $(BUILD)/test/fuzz/sh_host_stub.o
$(BUILD)/test/fuzz/fuzz_sh_interp.o $(BUILD)/test/fuzz/sh_host_stub.o: private MODULE_CPPFLAGS := $(LIBSHELL_INCLUDES)
