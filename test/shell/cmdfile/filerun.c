/* SPDX-License-Identifier: Apache-2.0 */
/*
 * filerun.c — runs one of box-shell's own file commands (sh_file_commands[])
 * directly, for the differential tests in t-file.sh: `filerun CMD ARGS...`.
 * It is the whole interpreter the command sees: fds 0-2, an allow-all
 * decider that logs every decision as a line "action op path" (and
 * "shell:exec command" for find -exec children) to $FILERUN_LOG, the root
 * fd and the cwd, and a trivial sh_run_child that fork+execs host programs.
 * $FILERUN_DENY="action op path" denies exactly that one request (the
 * denial tests).
 * Trusts: its own command line (a test tool).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "cmdutil.h"
#include "decide.h"

extern char **environ;

struct sh_decider {
	FILE *log;
	const char *deny;
};

static const char *const action_names[] = {"fs:read", "fs:write", "fs:delete", "fs:move"};
static const char *const op_names[] = {
	"read_content", "read_metadata", "enumerate", "read_link", "change_dir", "exec",
	"write_content", "create_dir", "set_permissions", "symlink", "remove_file", "remove_dir",
	"rename",
};

void
sh_verdict_clear(struct sh_verdict *v)
{
	free(v->message);
	v->message = NULL;
}

int
sh_decide_fs(struct sh_decider *d, const struct sh_fs_request *r, struct sh_verdict *out)
{
	char line[8192];
	snprintf(line, sizeof(line), "%s %s %s", action_names[r->action], op_names[r->op], r->path);
	if (d->log) {
		fprintf(d->log, "%s\n", line);
		fflush(d->log);
	}
	out->permit = !(d->deny && strcmp(d->deny, line) == 0);
	out->message = out->permit ? NULL : strdup("filerun denies this request (FILERUN_DENY)");
	return 0;
}

int
sh_decide_fs_batch(struct sh_decider *d, const struct sh_fs_request *r, size_t n,
		   struct sh_verdict *out)
{
	for (size_t i = 0; i < n; i++)
		sh_decide_fs(d, &r[i], &out[i]);
	return 0;
}

int
sh_record_fs(struct sh_decider *d, const struct sh_fs_request *r, bool failed,
	     enum sh_fs_result result, uint64_t decide_id)
{
	(void)decide_id;
	return 0;
}

int
sh_decide_exec(struct sh_decider *d, const struct sh_exec_request *r, struct sh_verdict *out)
{
	if (d->log) {
		fprintf(d->log, "shell:exec %s", r->program);
		for (size_t i = 0; i < r->n_args; i++)
			fprintf(d->log, " %s", r->args[i]);
		fprintf(d->log, "\n");
		fflush(d->log);
	}
	out->permit = true;
	out->message = NULL;
	return 0;
}

int
sh_decide_spawn(struct sh_decider *d, const struct sh_exec_request *r, const char *pp,
		struct sh_verdict *out)
{
	return sh_decide_exec(d, r, out);
}

int
sh_record_exec(struct sh_decider *d, const struct sh_exec_request *r, int status)
{
	return 0;
}

int
sh_record_spawn(struct sh_decider *d, const struct sh_exec_request *r, const char *pp, int status)
{
	return 0;
}
bool
sh_decider_wants_outcomes(const struct sh_decider *d)
{
	(void)d;
	return false;
}


int
sh_decider_flush(struct sh_decider *d)
{
	if (d->log)
		fflush(d->log);
	return 0;
}

const char *
sh_decider_home(const struct sh_decider *d)
{
	return "/nonexistent-filerun-home";
}

/* find -exec's children: decided (logged), then fork+exec'd on the given fds. */
int
sh_run_child(struct sh_cmd *c, int argc, char **argv, int in, int out, int err)
{
	struct sh_exec_request rq = {argv[0], argv + 1, (size_t)argc - 1, c->fs->cwd};
	struct sh_verdict v = {0};
	sh_decide_exec(c->fs->decider, &rq, &v);
	sh_verdict_clear(&v);
	pid_t pid = fork();
	if (pid < 0)
		return 126;
	if (pid == 0) {
		if ((in != 0 && dup2(in, 0) < 0) || (out != 1 && dup2(out, 1) < 0) ||
		    (err != 2 && dup2(err, 2) < 0))
			_exit(126);
		execvp(argv[0], argv);
		_exit(errno == ENOENT ? 127 : 126);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 126;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static volatile sig_atomic_t interrupted;

static void
on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: filerun COMMAND [ARG]...\n");
		return 2;
	}
	const struct sh_cmd_def *def = NULL;
	for (const struct sh_cmd_def *d = sh_file_commands; d->name; d++)
		if (strcmp(d->name, argv[1]) == 0)
			def = d;
	if (!def) {
		fprintf(stderr, "filerun: %s: not one of box-shell's file commands\n", argv[1]);
		return 127;
	}
	struct sh_decider dec = {NULL, getenv("FILERUN_DENY")};
	const char *log = getenv("FILERUN_LOG");
	if (log && !(dec.log = fopen(log, "ae"))) {
		fprintf(stderr, "filerun: %s: %s\n", log, strerror(errno));
		return 2;
	}
	char cwd[4096];
	if (!getcwd(cwd, sizeof(cwd))) {
		fprintf(stderr, "filerun: getcwd: %s\n", strerror(errno));
		return 2;
	}
	int root = open("/", O_PATH | O_CLOEXEC | O_DIRECTORY);
	if (root < 0) {
		fprintf(stderr, "filerun: /: %s\n", strerror(errno));
		return 2;
	}
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	struct sh_fs fs = {&dec, root, cwd, 2, argv[1], NULL}; /* NULL: fds 0-2 */
	struct sh_out out, err;
	sh_out_init(&out, 1);
	sh_out_init(&err, 2);
	struct sh_cmd c = {0, 1, 2, &out, &err, &fs, NULL, environ, &interrupted};
	int status = def->fn(&c, argc - 1, argv + 1);
	sh_out_release(&out);
	sh_out_release(&err);
	if (dec.log)
		fclose(dec.log);
	close(root);
	return status;
}
