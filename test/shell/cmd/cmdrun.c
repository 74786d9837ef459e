/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmdrun.c — runs one of box-shell's own text commands directly, for the
 * differential tests: `cmdrun NAME ARGS...` on fds 0-2, with an allow-all
 * decider (this file's implementation of decide.h) that appends each
 * decision to $CMDRUN_LOG when set ("fs read read_content /abs/path", one
 * per line; a batch is logged request by request). root_fd is "/" (O_PATH),
 * cwd is getcwd(). Exit status = the command's.
 * Trusts: its arguments (test code).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "cmdutil.h"
#include "decide.h"

struct sh_decider {
	FILE *log;
};

static const char *const action_names[] = { "read", "write", "delete", "move" };
static const char *const op_names[] = {
	"read_content", "read_metadata", "enumerate", "read_link", "change_dir", "exec",
	"write_content", "create_dir", "set_permissions", "symlink",
	"remove_file", "remove_dir", "rename",
};

void
sh_verdict_clear(struct sh_verdict *v)
{
	free(v->message);
	v->message = NULL;
}

int
sh_decide_exec(struct sh_decider *d, const struct sh_exec_request *r, struct sh_verdict *out)
{
	if (d->log) {
		fprintf(d->log, "exec %s", r->program);
		for (size_t i = 0; i < r->n_args; i++)
			fprintf(d->log, " %s", r->args[i]);
		fputc('\n', d->log);
		fflush(d->log);
	}
	*out = (struct sh_verdict){ .permit = true };
	return 0;
}

int
sh_decide_fs(struct sh_decider *d, const struct sh_fs_request *r, struct sh_verdict *out)
{
	if (d->log) {
		fprintf(d->log, "fs %s %s %s\n", action_names[r->action], op_names[r->op], r->path);
		fflush(d->log);
	}
	*out = (struct sh_verdict){ .permit = true };
	return 0;
}

int
sh_decide_fs_batch(struct sh_decider *d, const struct sh_fs_request *r, size_t n,
		   struct sh_verdict *out)
{
	if (n > SH_DECIDE_BATCH_MAX)
		return -E2BIG;
	if (d->log && n > 0) {
		fprintf(d->log, "batch %zu\n", n);
		fflush(d->log);
	}
	for (size_t i = 0; i < n; i++)
		(void)sh_decide_fs(d, &r[i], &out[i]);
	return 0;
}

int
sh_record_exec(struct sh_decider *d, const struct sh_exec_request *r, int status)
{
	return 0;
}

int
sh_record_fs(struct sh_decider *d, const struct sh_fs_request *r, bool failed,
	     enum sh_fs_result result, uint64_t decide_id)
{
	(void)decide_id;
	return 0;
}

const char *
sh_decider_home(const struct sh_decider *d)
{
	const char *h = getenv("HOME");
	return h ? h : "/";
}

/* The text commands never start children; a wrapper would (shcore's). */
int
sh_run_child(struct sh_cmd *c, int argc, char **argv, int in, int out, int err)
{
	return 127;
}

static volatile sig_atomic_t interrupted;

static void
on_signal(int sig)
{
	interrupted = 1;
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: cmdrun NAME [ARG...]\n");
		return 2;
	}
	const struct sh_cmd_def *def = NULL;
	for (const struct sh_cmd_def *t = sh_text_commands; t->name; t++)
		if (strcmp(t->name, argv[1]) == 0)
			def = t;
	if (!def) {
		fprintf(stderr, "cmdrun: %s: not an own text command\n", argv[1]);
		return 127;
	}
	/* As a shell would: a closed pipe is EPIPE to the command, not a signal. */
	signal(SIGPIPE, SIG_IGN);
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	struct sh_decider d = { 0 };
	const char *logp = getenv("CMDRUN_LOG");
	if (logp && *logp)
		d.log = fopen(logp, "ae");
	char *cwd = getcwd(NULL, 0);
	int root = open("/", O_PATH | O_CLOEXEC);
	if (!cwd || root < 0) {
		perror("cmdrun");
		return 2;
	}
	struct sh_fs fs = { .decider = &d, .root_fd = root, .cwd = cwd, .err_fd = 2,
			    .cmd_name = def->name };
	struct sh_out out, err;
	sh_out_init(&out, 1);
	sh_out_init(&err, 2);
	extern char **environ;
	struct sh_cmd c = { .in = 0, .out = 1, .err = 2, .out_buf = &out, .err_buf = &err,
			    .fs = &fs, .envp = environ, .interrupted = &interrupted };
	int status = def->fn(&c, argc - 1, argv + 1);
	(void)sh_out_release(&out);
	(void)sh_out_release(&err);
	if (d.log)
		fclose(d.log);
	close(root);
	free(cwd);
	return status;
}
