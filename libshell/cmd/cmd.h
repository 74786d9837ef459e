/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd.h — the interface between box-shell's interpreter and its own
 * commands: `cat grep sed ls find …` run in process, on
 * the fds the interpreter gives them, and touch files only through
 * fsops.h, so every file operation is decided.
 *
 * A command is `int fn(struct sh_cmd *c, int argc, char **argv)`: argv[0] is
 * the name as invoked; it returns the exit status (GNU's for the same
 * failure: 1 for most, 2 for grep/diff trouble, …) and never calls exit(),
 * never writes to fds other than c->in/out/err, never changes the process's
 * cwd, umask or signal state (a pipeline stage may run in the shell's own
 * process). Output goes through c->out_buf (buffered; flushed by the caller
 * and by sh_out_flush); a write error EPIPE ends the command quietly with
 * status 141 unless the command handles it (as GNU tools die of SIGPIPE).
 * An unsupported flag fails as GNU does for an unknown one ("grep: invalid
 * option -- 'P'" / "not supported" where the issue says so), status 2 for
 * grep/diff/sed-like tools, 1 otherwise; `--help` names the supported flags.
 * Trusts: nothing in argv or the files.
 */
#ifndef BOX_SHELL_CMD_H
#define BOX_SHELL_CMD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fsops.h"

/* A buffered output on an fd (the command's stdout or stderr). */
struct sh_out {
	int fd;
	char *buf;
	size_t len, cap;
	int error;            /* first write error (-errno), sticky */
};
int sh_out_write(struct sh_out *o, const void *p, size_t n);
int sh_out_printf(struct sh_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sh_out_flush(struct sh_out *o);

struct sh_shell;        /* the interpreter (opaque to commands) */

struct sh_cmd {
	int in, out, err;               /* the command's fds 0-2 */
	struct sh_out *out_buf;         /* on `out` */
	struct sh_out *err_buf;         /* on `err` */
	struct sh_fs *fs;               /* cwd, decider, denial messages */
	struct sh_shell *sh;
	/* The shell's exported environment, NULL-terminated "NAME=value". */
	char *const *envp;
	volatile sig_atomic_t *interrupted; /* set on SIGINT/SIGTERM/timeout: stop soon */
};

typedef int (*sh_cmd_fn)(struct sh_cmd *c, int argc, char **argv);

struct sh_cmd_def {
	const char *name;
	sh_cmd_fn fn;
};

/* The command tables, each NULL-name terminated (cmd_text.c, cmd_file.c),
 * and the list of both (commands.c) a program puts in its host table
 * (host.h): the interpreter looks a word up in them after functions and
 * builtins. */
extern const struct sh_cmd_def sh_text_commands[];
extern const struct sh_cmd_def sh_file_commands[];
extern const struct sh_cmd_def *const sh_own_commands[];

/*
 * Run argv as a simple command of its own (xargs, find -exec, env, timeout,
 * nice, nohup, time, stdbuf): looked up as the shell would (builtin, own
 * command, host program), decided as its own shell:exec (or shell:spawn),
 * on the given fds. Returns its exit status (127 not found, 126 refused).
 */
int sh_run_child(struct sh_cmd *c, int argc, char **argv, int in, int out, int err);

/* The value of an exported variable, or NULL. */
const char *sh_cmd_getenv(const struct sh_cmd *c, const char *name);

/* "NAME: message" on stderr in GNU's style (name = argv[0]); returns status. */
int sh_cmd_error(struct sh_cmd *c, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
