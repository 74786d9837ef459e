/* SPDX-License-Identifier: Apache-2.0 */
/*
 * host.h — the host-operations table: what the interpreter asks of the
 * program that runs it, beyond deciding (decide.h) and touching files
 * (fsops.h). box-sh (box-sh/main.c) and the box-shell daemon
 * (box-shell/host_boxd.c) each fill one in and install it before the first
 * shell; the interpreter and the commands call through it and never name a
 * program's function. A process that installs none (a test program, the
 * fuzzer) runs with no own commands and every host program as PATH finds it.
 * Trusts: the program's table.
 */
#ifndef LIBSHELL_HOST_H
#define LIBSHELL_HOST_H

struct sh_cmd_def;

struct sh_host_ops {
	/* The own-command tables (cmd.h), each NULL-name terminated, the list
	 * NULL-terminated; looked up after functions and builtins. NULL: none. */
	const struct sh_cmd_def *const *commands;
	/* For `command -v` and `which`: 1 a host program the host runs, 0 one it
	 * would refuse (126). NULL: every program runs (box-sh). */
	int (*host_runnable)(const char *name, const char *path);
	/* `type` and `command -V`'s line for a host program (malloc'd, no
	 * newline), or NULL for the plain "NAME is PATH". NULL: always plain. */
	char *(*describe_host)(const char *name, const char *path);
};

/* Install OPS (kept, not copied) for this process and its forks; NULL: none. */
void sh_host_set(const struct sh_host_ops *ops);
/* The installed table; never NULL. */
const struct sh_host_ops *sh_host_get(void);

#endif
