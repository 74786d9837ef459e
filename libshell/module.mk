# SPDX-License-Identifier: Apache-2.0
# libshell/ — the shell interpreter (docs/design.md §2, §5): parse, expand, exec,
# vars, builtins, redirections, arithmetic, patterns, jobs and the file
# operations (fsops.c), and in libshell/cmd/ its own commands (cat grep sed ls
# find …, cmd.h). One archive, libshell.a, linked by box-sh (box-sh/: in-process
# decisions with libboxpolicy) and by the box-shell daemon (box-shell/: box-policyd
# decides). It holds no decision back end (decide.h is each program's) and no
# daemon code; test/layering/shell.sh checks both.
LIBSHELL_SRCS := $(wildcard libshell/*.c libshell/cmd/*.c)
LIBSHELL_OBJS := $(LIBSHELL_SRCS:%.c=$(BUILD)/%.o)
ALL_OBJS      += $(LIBSHELL_OBJS)

# What a program or test linking libshell.a compiles and links with.
SHELL_CPPFLAGS := -Iproto $(LIBSHELL_INCLUDES) $(call pkg_cflags,libprotobuf-c libevent jansson)
SHELL_LIBS     := $(call pkg_libs,libprotobuf-c libevent jansson) -lm

$(LIBSHELL_OBJS): private MODULE_CPPFLAGS := $(SHELL_CPPFLAGS)

$(LIBSHELL): $(LIBSHELL_OBJS)
	$(archive)
