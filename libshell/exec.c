/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exec.c — running the syntax tree: simple commands
 * (lookup: function, builtin, own command, host program), pipelines,
 * lists, compound commands, subshells, command substitution, background
 * jobs, traps, set -e/-x, and the shell:exec decision of every simple
 * command the shell runs itself (shell:spawn + fs:read exec for a host
 * program), judged after expansion, before the redirections.
 *
 * Builtins and own commands run in the shell's process (no fork); a
 * pipeline's stages, ( ), $( ) and & fork, as in bash.
 *
 * Trusts: nothing in the script. Function, eval and source nesting is capped
 * (SH_MAX_CALL_DEPTH); a refused command prints
 * "box-shell: <command>: <message>" and has status 126, and the script goes
 * on. The decider (decide.h) is trusted to answer.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmdutil.h"
#include "host.h"
#include "sh.h"

static int exec_simple(struct sh_shell *sh, struct node *n);

/*
 * A forked copy's last command (a subshell's, a background job's, a pipeline
 * stage's; through lists and && || to their last operand) when that is a simple command: a host program it names runs in
 * this process (execve without another fork), as bash does, so that `$!` is
 * the program's pid and a signal sent to the job reaches the program.
 */
static void
mark_final(struct sh_shell *sh, struct node *n)
{
	for (;;) {
		if (!n || n->redirs)
			break;
		if ((n->type == N_LIST && n->u.p.n > 0) ||
		    (n->type == N_PIPE && n->u.p.n == 1 && !n->u.p.bang && !n->u.p.timed))
			n = n->u.p.v[n->u.p.n - 1];
		else if (n->type == N_AND || n->type == N_OR)
			n = n->u.b.b;
		else
			break;
	}
	sh->exec_final = n && n->type == N_SIMPLE ? n : NULL;
}

/*
 * The last simple command of a -c string (N, the string's last command, with nothing but
 * blanks after it), when bash would run it without a fork: through lists and && / ||
 * to their last operand, never inside a compound command, never one with redirections.
 */
static const struct node *
oneshot_of(const struct node *n)
{
	while (n && !n->redirs) {
		if (n->type == N_SIMPLE)
			return n;
		if (n->type == N_LIST && n->u.p.n > 0)
			n = n->u.p.v[n->u.p.n - 1];
		else if (n->type == N_AND || n->type == N_OR)
			n = n->u.b.b;
		else if (n->type == N_PIPE && n->u.p.n == 1 && !n->u.p.bang && !n->u.p.timed)
			n = n->u.p.v[0];
		else
			return NULL;
	}
	return NULL;
}

/* A subshell or a background job: the traps set (not ignored) are reset, as
 * bash does; an ignored signal stays ignored, the ERR trap is kept. */
static void
reset_traps(struct sh_shell *sh)
{
	for (int s = 0; s < SH_NTRAP; s++)
		if (sh->traps[s] && sh->traps[s][0] && s != TRAP_ERR) {
			free(sh->traps[s]);
			sh->traps[s] = NULL;
		}
}

/* Whether that last command may replace the copy: nothing of the copy runs
 * after it (no trap) and no outcome is to be recorded after it ends. */
static bool
can_replace(const struct sh_shell *sh)
{
	return !sh->traps[TRAP_EXIT] && !sh->traps[TRAP_ERR] &&
	       !sh_decider_wants_outcomes(sh->decider);
}
static void errexit_check(struct sh_shell *sh, int st);

/* ---- messages ---- */

static void __attribute__((format(printf, 4, 0)))
vmsg(struct sh_shell *sh, const char *in, int line, const char *fmt, va_list ap)
{
	char buf[4096];
	int k;
	bi_flush();
	if (line > 0) {
		/* bash's prefix: the file being read (a script, a `.` file), else $0 */
		const char *name = sh->script_name ? sh->script_name : sh->arg0;
		if (!name || !*name)
			name = "box-shell";
		k = snprintf(buf, sizeof buf, "%.1024s: %s%sline %d: ", name, in ? in : "",
			     in ? ": " : "", line);
	} else
		k = snprintf(buf, sizeof buf, "box-shell: ");
	if (k < 0)
		return;
	int m = vsnprintf(buf + k, sizeof buf - (size_t)k - 1, fmt, ap);
	if (m < 0)
		return;
	size_t len = (size_t)k + (size_t)m;
	if (len > sizeof buf - 2)
		len = sizeof buf - 2;
	buf[len++] = '\n';
	if (sh_decide_before_output)
		sh_decide_before_output();
	(void)!write(2, buf, len);
}

void
sh_err(struct sh_shell *sh, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(sh, NULL, sh->lineno > 0 ? sh->lineno : 1, fmt, ap);
	va_end(ap);
}

void
sh_errline(struct sh_shell *sh, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(sh, NULL, line, fmt, ap);
	va_end(ap);
}

void
sh_errline_in(struct sh_shell *sh, const char *in, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(sh, in, line, fmt, ap);
	va_end(ap);
}

/* ---- processes ---- */

pid_t
sh_fork(struct sh_shell *sh)
{
	bi_flush();
	/* the decision log's buffer must not be inherited (written twice) */
	if (sh->decider)
		sh_decider_flush(sh->decider);
	pid_t pid = fork();
	if (pid < 0) {
		sh_err(sh, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		sh->is_child = true;
		sh->in_subshell = true;
		if (sh->decider && sh_decider_forked(sh->decider) < 0) {
			sh_err(sh, "fork: cannot reach the policy daemon");
			_exit(125);
		}
		/* caught signals go back to their defaults in a child */
		for (int s = 1; s < 65; s++)
			if (sh->traps[s] && sh->traps[s][0])
				signal(s, SIG_DFL);
		while (sh->jobs) {
			struct bgjob *j = sh->jobs;
			sh->jobs = j->next;
			free(j);
		}
	}
	return pid;
}

static int
status_of(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

/* pid's wait status into *st; -1 if it cannot be waited for. */
static int
wait_raw(pid_t pid, int *st)
{
	for (;;) {
		pid_t r = waitpid(pid, st, 0);
		if (r == pid)
			return 0;
		if (r < 0 && errno == EINTR)
			continue; /* a trap runs once the command ended (exec_node), as bash */
		return -1;
	}
}

int
sh_wait_pid(struct sh_shell *sh, pid_t pid)
{
	int st;
	if (wait_raw(pid, &st) < 0)
		return 127;
	return status_of(st);
}

/*
 * A foreground program killed by a signal, as bash reports it on stderr (its jobs.c,
 * notify_of_job_status): nothing for SIGINT and SIGPIPE; the signal's description alone
 * when the shell traps the signal (an ignoring trap too), for SIGTERM, and in an
 * interactive shell; else "NAME: line N: PID DESCRIPTION  COMMAND", the description
 * padded to 24 columns and the command its assignments and words as written.
 */
static void
report_killed(struct sh_shell *sh, pid_t pid, int ws, const struct node *n)
{
	int sig = WTERMSIG(ws);
	if (sig == SIGINT || sig == SIGPIPE)
		return;
	const char *d = strsignal(sig);
	char desc[96];
	snprintf(desc, sizeof desc, "%s%s", d ? d : "Unknown signal",
		 WCOREDUMP(ws) ? " (core dumped)" : "");
	if ((sig < SH_NTRAP && sh->traps[sig]) || sig == SIGTERM || sh->interactive) {
		char line[128];
		int k = snprintf(line, sizeof line, "%s\n", desc);
		if (k > 0) {
			if (sh_decide_before_output)
				sh_decide_before_output();
			(void)!write(2, line, (size_t)k < sizeof line ? (size_t)k : sizeof line - 1);
		}
		return;
	}
	struct sbuf t = {0};
	for (const struct word *w = n->u.s.assigns; w; w = w->next) {
		sb_adds(&t, w->s);
		sb_addc(&t, ' ');
	}
	for (const struct word *w = n->u.s.words; w; w = w->next) {
		sb_adds(&t, w->s);
		sb_addc(&t, ' ');
	}
	if (t.len)
		t.s[--t.len] = 0;
	int pad = 24 - (int)strlen(desc);
	sh_err(sh, "%5ld %s%*s%s", (long)pid, desc, pad > 0 ? pad : 0, "", t.s ? t.s : "");
	sb_free(&t);
}

_Noreturn void
sh_exit(struct sh_shell *sh, int status)
{
	sh->status = status;
	/* a trapped signal that came during the last command: its trap first */
	enum jump was = sh->jump;
	sh_check_traps(sh);
	if (was != J_EXIT && sh->jump == J_EXIT)
		sh->status = sh->jump_n;
	sh_run_exit_trap(sh);
	bi_flush();
	if (sh->is_child || sh->exit_quick) {
		if (sh->decider)
			sh_decider_flush(sh->decider);
		if (sh->exit_quick) {
			(void)fflush(NULL);
			if (!sh->is_child && sh->exiting)
				sh->exiting(sh, sh->status & 255);
		}
		_exit(sh->status & 255);
	}
	exit(sh->status & 255);
}

void
sh_run_exit_trap(struct sh_shell *sh)
{
	char *t = sh->traps[TRAP_EXIT];
	if (!t || sh->in_trap)
		return;
	sh->traps[TRAP_EXIT] = NULL;
	int save = sh->status;
	sh->trap_status = save;
	sh->trap_func_depth = sh->func_depth;
	sh->in_trap = true;
	sh->jump = J_NONE;
	exec_text(sh, t, strlen(t), sh->lineno, NULL);
	sh->in_trap = false;
	if (sh->jump != J_EXIT)
		sh->status = save;
	free(t);
}

void
sh_check_traps(struct sh_shell *sh)
{
	if (sh->in_trap)
		return;
	for (int s = 1; s < 65; s++) {
		if (!sh->pending[s])
			continue;
		sh->pending[s] = 0;
		char *t = sh->traps[s];
		if (!t || !*t)
			continue;
		t = xstrdup(t);
		int save = sh->status;
		sh->trap_status = save;
		sh->trap_func_depth = sh->func_depth;
		sh->in_trap = true;
		enum jump j = sh->jump;
		sh->jump = J_NONE;
		exec_text(sh, t, strlen(t), sh->lineno, NULL);
		sh->in_trap = false;
		if (sh->jump == J_NONE) {
			sh->jump = j;
			sh->status = save;
		}
		free(t);
	}
}

static void
run_err_trap(struct sh_shell *sh)
{
	char *t = sh->traps[TRAP_ERR];
	if (!t || !*t || sh->in_trap)
		return;
	t = xstrdup(t);
	int save = sh->status;
	sh->in_trap = true;
	exec_text(sh, t, strlen(t), sh->lineno, NULL);
	sh->in_trap = false;
	if (sh->jump == J_NONE)
		sh->status = save;
	free(t);
}

static void xtrace_text(struct sh_shell *sh, const char *text);

/* for (( ; ; ))'s part E under set -x: "+ (( E ))", E's leading blanks dropped (bash) */
static void
xtrace_afor(struct sh_shell *sh, const char *e)
{
	if (!sh->opt_x)
		return;
	while (*e == ' ' || *e == '\t' || *e == '\n')
		e++;
	struct sbuf t = {0};
	sb_adds(&t, "(( ");
	sb_adds(&t, e);
	sb_adds(&t, " ))");
	xtrace_text(sh, t.s);
	sb_free(&t);
}

/* (( )) and for (( ; ; )): their messages say "((: " (bash) */
static int
arith_cmd(struct sh_shell *sh, const char *e, intmax_t *v)
{
	sh->arith_who = "((";
	int r = arith_eval(sh, e, v);
	sh->arith_who = NULL;
	return r;
}

static void
errexit_check(struct sh_shell *sh, int st)
{
	if (st == 0 || sh->errexit_off > 0 || sh->jump != J_NONE)
		return;
	run_err_trap(sh);
	if (sh->opt_e) {
		sh->jump = J_EXIT;
		sh->jump_n = st;
	}
}

/* ---- lookup and decisions ---- */

/*
 * May PATH be run as a host program: executable for this process by the
 * kernel, or, on a noexec mount (every grant of the agent's, where
 * access(X_OK) answers EACCES for every file), by its mode bits as the
 * kernel would read them elsewhere. Whether such a file runs is then the
 * back end's business: a [tool.NAME] whose command is that file runs it in
 * its own sandbox (exec-capable); any other gets its 126 saying what to
 * add, and fork+execve (box-sh) the kernel's EACCES.
 */
bool
sh_runnable_file(const char *path, const struct stat *st)
{
	if (access(path, X_OK) == 0)
		return true;
	struct statvfs vfs;
	if (errno != EACCES || !S_ISREG(st->st_mode) || statvfs(path, &vfs) < 0 ||
	    !(vfs.f_flag & ST_NOEXEC))
		return false;
	uid_t uid = geteuid();
	if (uid == 0)
		return (st->st_mode & 0111) != 0;
	if (st->st_uid == uid)
		return (st->st_mode & S_IXUSR) != 0;
	bool member = st->st_gid == getegid();
	gid_t groups[256];
	int n = member ? 0 : getgroups(256, groups);
	for (int i = 0; i < n && !member; i++)
		member = groups[i] == st->st_gid;
	return (st->st_mode & (member ? S_IXGRP : S_IXOTH)) != 0;
}

static char *
path_search(struct sh_shell *sh, const char *name, bool readable)
{
	if (strchr(name, '/')) {
		struct stat st;
		if (stat(name, &st) < 0)
			return NULL; /* errno: ENOENT, EACCES … */
		if (S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			return NULL;
		}
		if (sh_runnable_file(name, &st))
			return xstrdup(name);
		errno = EACCES;
		return NULL;
	}
	const char *path = var_value(sh, "PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	const char *p = path;
	for (;;) {
		const char *e = strchr(p, ':');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		char buf[PATH_MAX];
		if (l == 0)
			snprintf(buf, sizeof buf, "%s", name);
		else
			snprintf(buf, sizeof buf, "%.*s/%s", (int)l, p, name);
		struct stat st;
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) &&
		    (readable ? access(buf, R_OK) == 0 : sh_runnable_file(buf, &st)))
			return xstrdup(buf);
		if (!e)
			break;
		p = e + 1;
	}
	return NULL;
}

char *
find_in_path(struct sh_shell *sh, const char *name)
{
	return path_search(sh, name, false);
}

/* `.` and `source`: a readable file in PATH, as bash (no execute bit needed) */
char *
find_source_in_path(struct sh_shell *sh, const char *name)
{
	return path_search(sh, name, true);
}

void
sh_update_fs(struct sh_shell *sh, const char *cmdname)
{
	sh->fs.decider = sh->decider;
	sh->fs.root_fd = sh->root_fd;
	sh->fs.cwd = sh->cwd;
	sh->fs.err_fd = 2;
	sh->fs.cmd_name = cmdname;
}

static char *
join_command(const char *program, int argc, char **argv)
{
	struct sbuf b = {0};
	sb_adds(&b, program);
	for (int i = 1; i < argc; i++) {
		sb_addc(&b, ' ');
		sb_adds(&b, argv[i]);
	}
	return sb_take(&b);
}

/* 0 permitted; 126 refused (message printed). path: a host program's
 * canonical path (shell:spawn after fs:read exec). */
int
sh_decide_cmd(struct sh_shell *sh, const char *program, int argc, char **argv, const char *path)
{
	if (!sh->decider)
		return 0;
	struct sh_exec_request r = {
		.program = program,
		.args = argc > 1 ? argv + 1 : NULL,
		.n_args = argc > 1 ? (size_t)(argc - 1) : 0,
		.cwd = sh->cwd,
	};
	struct sh_verdict v = {0};
	int rc;
	if (path) {
		struct sh_fs_request fr = {.action = SH_FS_READ, .op = SH_OP_EXEC, .path = path};
		rc = sh_decide_fs(sh->decider, &fr, &v);
		if (rc == 0 && v.permit) {
			sh_verdict_clear(&v);
			memset(&v, 0, sizeof v);
			rc = sh_decide_spawn(sh->decider, &r, path, &v);
		}
	} else
		rc = sh_decide_exec(sh->decider, &r, &v);
	if (rc == 0 && v.permit) {
		sh_verdict_clear(&v);
		return 0;
	}
	char *cmd = join_command(program, argc, argv);
	bi_flush();
	if (rc < 0)
		sh_errline(sh, 0, "%s: cannot decide: %s", cmd, strerror(-rc));
	else
		sh_errline(sh, 0, "%s: %s", cmd, v.message ? v.message : "denied by policy");
	free(cmd);
	if (rc == 0)
		sh_verdict_clear(&v);
	return 126;
}

/* A host program the back end cannot run whatever policy says: its status
 * (126, the message printed) before any decision; 0: decide it. */
static int
host_check(struct sh_shell *sh, const char *name, const char *program_path, int argc,
	   char **argv)
{
	if (!sh->host_check)
		return 0;
	bi_flush();
	return sh->host_check(name, program_path, argc, argv);
}

void
sh_child_exit(struct sh_shell *sh, int st)
{
	bi_flush();
	if (sh->decider)
		sh_decider_flush(sh->decider);
	_exit(st);
}

void
sh_record_cmd(struct sh_shell *sh, const char *program, int argc, char **argv, int st)
{
	sh_fs_batch_forget();
	if (!sh->decider)
		return;
	struct sh_exec_request r = {
		.program = program,
		.args = argc > 1 ? argv + 1 : NULL,
		.n_args = argc > 1 ? (size_t)(argc - 1) : 0,
		.cwd = sh->cwd,
	};
	sh_record_exec(sh->decider, &r, st);
}

static void
record_host(struct sh_shell *sh, const char *program, int argc, char **argv, const char *path,
	    int st)
{
	sh_fs_batch_forget();
	if (!sh->decider)
		return;
	struct sh_exec_request r = {
		.program = program,
		.args = argc > 1 ? argv + 1 : NULL,
		.n_args = argc > 1 ? (size_t)(argc - 1) : 0,
		.cwd = sh->cwd,
	};
	char *canon = realpath(path, NULL);
	sh_record_spawn(sh->decider, &r, canon ? canon : path, st);
	free(canon);
}

sh_cmd_fn
own_command_find(const char *name)
{
	const struct sh_cmd_def *const *tabs = sh_host_get()->commands;
	for (size_t t = 0; tabs && tabs[t]; t++)
		for (const struct sh_cmd_def *d = tabs[t]; d->name; d++)
			if (strcmp(d->name, name) == 0)
				return d->fn;
	return NULL;
}

/*
 * Where set -x writes: BASH_XTRACEFD when it names a fd the script opened (or
 * 1, 2), else fd 2, as bash.
 */
static void
xtrace_write(struct sh_shell *sh, const char *s, size_t n)
{
	int fd = 2;
	const char *xf = var_value(sh, "BASH_XTRACEFD");
	if (xf && *xf) {
		char *end;
		long v = strtol(xf, &end, 10);
		if (!*end && v >= 0 && v < SH_FD_SCRIPT_MAX &&
		    (v == 1 || v == 2 || sh_fdset_has(&sh->script_fds, (int)v)))
			fd = (int)v;
	}
	bi_flush();
	(void)!write(fd, s, n);
}

/* set -x's line for a compound command: PS4 and TEXT, a newline */
static void
xtrace_text(struct sh_shell *sh, const char *text)
{
	struct sbuf b = {0};
	const char *ps4 = var_value(sh, "PS4");
	sb_adds(&b, ps4 ? ps4 : "+ ");
	sb_adds(&b, text);
	sb_addc(&b, '\n');
	xtrace_write(sh, b.s, b.len);
	sb_free(&b);
}

static void
xtrace(struct sh_shell *sh, struct word *assigns_done, int argc, char **argv)
{
	struct sbuf b = {0};
	const char *ps4 = var_value(sh, "PS4");
	sb_adds(&b, ps4 ? ps4 : "+ ");
	for (int i = 0; i < argc; i++) {
		if (i)
			sb_addc(&b, ' ');
		char *q = shell_quote(argv[i]);
		sb_adds(&b, q);
		free(q);
	}
	sb_addc(&b, '\n');
	xtrace_write(sh, b.s, b.len);
	sb_free(&b);
}

static int
run_own(struct sh_shell *sh, sh_cmd_fn fn, int argc, char **argv)
{
	struct sh_out ob = {.fd = 1}, eb = {.fd = 2};
	sh_update_fs(sh, argv[0]);
	struct sh_cmd c = {
		.in = 0, .out = 1, .err = 2,
		.out_buf = &ob, .err_buf = &eb,
		.fs = &sh->fs, .sh = sh,
		.envp = sh_environ(sh),
		.interrupted = &sh->interrupted,
	};
	bi_flush();
	int st = fn(&c, argc, argv);
	sh_out_flush(&ob);
	sh_out_flush(&eb);
	free(ob.buf);
	free(eb.buf);
	return st;
}

/* A permitted host program on fds 0-2: the back end's, or fork+execve.
 * argv0: the name it sees (exec -a/-l), NULL for argv[0]; clear_env: exec -c. */
static int
run_host(struct sh_shell *sh, const char *name, const char *path, int argc, char **argv,
	 const char *argv0, bool clear_env)
{
	if (sh->host_run) {
		char *canon = realpath(path, NULL);
		struct sh_host_request r = {
			.name = name, .path = path, .program_path = canon ? canon : path,
			.argc = argc, .argv = argv, .envp = sh_environ(sh),
			.assigned = sh_assigned_environ(sh), .cwd = sh->cwd,
			.argv0 = argv0, .clear_env = clear_env,
		};
		bi_flush();
		int st = sh->host_run(sh, &r);
		strv_free_array(r.assigned);
		free(canon);
		return st;
	}
	pid_t pid = sh_fork(sh);
	if (pid < 0)
		return 126;
	if (pid == 0) {
		static char *const no_env[] = {NULL};
		signal(SIGPIPE, SIG_DFL);
		if (argv0)
			argv[0] = (char *)argv0; /* this copy of the shell ends here */
		execve(path, argv, clear_env ? no_env : sh_environ(sh));
		int e = errno;
		if (e == ENOEXEC) {
			/* a script without #!: run it in a fresh shell */
			char *nargv[3] = {(char *)"sh", (char *)path, NULL};
			_exit(run_nested_shell(sh, 2, nargv));
		}
		sh_err(sh, "%s: %s", name, strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}
	return sh_wait_pid(sh, pid);
}

void
funcname_sync(struct sh_shell *sh)
{
	var_unbind(sh, "FUNCNAME");
	if (sh->nfunc_names == 0)
		return;
	for (int i = 0; i < sh->nfunc_names; i++)
		(void)var_set_elem(sh, "FUNCNAME", (size_t)i,
				   sh->func_names[sh->nfunc_names - 1 - i]);
	(void)var_set_elem(sh, "FUNCNAME", (size_t)sh->nfunc_names, "main");
}

/* The DEBUG trap before a simple command at LINE (bash: with $LINENO that line and $? the
 * last status, not in a function unless shopt extdebug; its own commands run none).
 * Whether the command is to run: under extdebug a failing trap skips it. */
static bool
run_debug_trap(struct sh_shell *sh, int line)
{
	char *t = sh->traps[TRAP_DEBUG];
	if (!t || !*t || sh->in_trap || sh->in_debug_trap || (sh->func_depth > 0 && !sh->extdebug))
		return true;
	t = xstrdup(t);
	int save = sh->status;
	sh->lineno = line;
	sh->in_debug_trap = true;
	int st = exec_text(sh, t, strlen(t), line, NULL);
	sh->in_debug_trap = false;
	sh->lineno = line;
	free(t);
	if (sh->jump != J_NONE)
		return false;
	sh->status = save;
	return !(sh->extdebug && st != 0);
}

static int
call_function(struct sh_shell *sh, struct func *f, int argc, char **argv)
{
	if (sh->func_depth >= SH_MAX_CALL_DEPTH) {
		sh_err(sh, "%s: maximum function nesting level exceeded (%d)", argv[0],
		       SH_MAX_CALL_DEPTH);
		return 1;
	}
	char **oldv = sh->argv;
	int oldc = sh->argc;
	sh->argv = NULL;
	sh->argc = 0;
	set_positional(sh, argc - 1, argv + 1);
	frame_push(sh);
	sh->func_depth++;
	if (sh->nfunc_names == sh->func_names_cap) {
		sh->func_names_cap = sh->func_names_cap ? 2 * sh->func_names_cap : 16;
		sh->func_names = xrealloc(sh->func_names, (size_t)sh->func_names_cap * sizeof(char *));
	}
	sh->func_names[sh->nfunc_names++] = xstrdup(argv[0]);
	struct node *body = f->body;
	if (sh->traps[TRAP_DEBUG] && sh->extdebug)
		(void)run_debug_trap(sh, body->line); /* bash: once as the function begins */
	body->refs++;
	int st = exec_node(sh, body);
	node_release(body);
	sh->func_depth--;
	free(sh->func_names[--sh->nfunc_names]);
	frame_pop(sh);
	for (int i = 0; i < sh->argc; i++)
		free(sh->argv[i]);
	free(sh->argv);
	sh->argv = oldv;
	sh->argc = oldc;
	if (sh->jump == J_RETURN) {
		sh->jump = J_NONE;
		st = sh->status;
	}
	return st;
}

/* Lookup and run argv as a simple command (after expansion): the common
 * path of simple commands, wrappers' children and sh_run_child. */
int
exec_argv(struct sh_shell *sh, int argc, char **argv, bool nofunc, int in, int out, int err)
{
	if (argc == 0)
		return 0;
	int saved[3] = {-1, -1, -1};
	int want[3] = {in, out, err};
	for (int i = 0; i < 3; i++) {
		if (want[i] == i || want[i] < 0)
			continue;
		bi_flush();
		saved[i] = fcntl(i, F_DUPFD_CLOEXEC, 10);
		dup2(want[i], i);
	}
	int st;
	const char *name = argv[0];
	/* exec's -a/-l/-c: for this command only, never one it runs in turn */
	const char *argv0 = sh->exec_argv0;
	bool clear_env = sh->exec_clear_env;
	sh->exec_argv0 = NULL;
	sh->exec_clear_env = false;
	struct func *f = nofunc ? NULL : func_get(sh, name);
	const struct sh_builtin *b;
	sh_cmd_fn fn;
	if (f) {
		st = call_function(sh, f, argc, argv);
	} else if ((b = builtin_find(name))) {
		/* b->name: `/bin/sh` is decided and logged as the shell it is, `sh` */
		st = sh_decide_cmd(sh, b->name, argc, argv, NULL);
		if (st == 0) {
			bi_take_error();
			st = b->fn(sh, argc, argv);
			int we = bi_take_error();
			if (we && we != EPIPE) {
				sh_err(sh, "%s: write error: %s", name, strerror(we));
				st = 1;
			}
			sh_record_cmd(sh, b->name, argc, argv, st);
		}
	} else if ((fn = own_command_find(name))) {
		st = sh_decide_cmd(sh, name, argc, argv, NULL);
		if (st == 0) {
			st = run_own(sh, fn, argc, argv);
			sh_record_cmd(sh, name, argc, argv, st);
		}
	} else {
		char *path = find_in_path(sh, name);
		if (!path) {
			if (strchr(name, '/'))
				sh_err(sh, "%s: %s", name, strerror(errno ? errno : ENOENT));
			else
				sh_err(sh, "%s: command not found", name);
			st = strchr(name, '/') && errno == EACCES ? 126 : 127;
		} else {
			char *canon = realpath(path, NULL);
			st = host_check(sh, name, canon ? canon : path, argc, argv);
			if (st == 0)
				st = sh_decide_cmd(sh, name, argc, argv, canon ? canon : path);
			if (st == 0) {
				st = run_host(sh, name, path, argc, argv, argv0, clear_env);
				record_host(sh, name, argc, argv, path, st);
			}
			free(canon);
			free(path);
		}
	}
	for (int i = 0; i < 3; i++)
		if (saved[i] >= 0) {
			bi_flush();
			dup2(saved[i], i);
			close(saved[i]);
		}
	return st;
}

int
sh_run_child(struct sh_cmd *c, int argc, char **argv, int in, int out, int err)
{
	struct sh_shell *sh = c->sh ? c->sh : sh_current;
	if (c->out_buf)
		sh_out_flush(c->out_buf);
	if (c->err_buf)
		sh_out_flush(c->err_buf);
	enum jump save = sh->jump;
	/* looked up as `command` would: builtins, own commands, host programs */
	int st = exec_argv(sh, argc, argv, true, in, out, err);
	if (sh->jump == J_RETURN || sh->jump == J_BREAK || sh->jump == J_CONTINUE)
		sh->jump = save;
	return st;
}

/* ---- simple commands ---- */

struct tmpvar {
	char *name;
	char *old;
	int oldflags;
	bool existed;
};

/* NAME=(…) or NAME+=(…) on the associative array V: items "[key]=value"
 * ("[key]+=value" appends) or, bash 5.1's form, key value pairs. */
static int
assign_assoc_items(struct sh_shell *sh, const char *name, struct var *v, struct strv *items,
		   bool append)
{
	if (!append) {
		if (v->flags & V_READONLY) {
			sh_err(sh, "%s: readonly variable", name);
			return -1;
		}
		if (var_set_empty_assoc(sh, name, true) < 0)
			return -1;
	}
	for (size_t i = 0; i < items->n; i++) {
		const char *it = items->v[i];
		char *key;
		const char *val;
		bool add = false;
		const char *cb = it[0] == '[' ? strstr(it, "]=") : NULL;
		const char *cbp = it[0] == '[' ? strstr(it, "]+=") : NULL;
		if (cbp && (!cb || cbp < cb)) {
			key = xstrndup(it + 1, (size_t)(cbp - it - 1));
			val = cbp + 3;
			add = true;
		} else if (cb) {
			key = xstrndup(it + 1, (size_t)(cb - it - 1));
			val = cb + 2;
		} else {
			key = xstrdup(it);
			val = i + 1 < items->n ? items->v[++i] : "";
		}
		if (!*key) {
			sh_err(sh, "%s: %s: bad array subscript", name, it);
			free(key);
			continue;
		}
		int r;
		const char *old = add ? assoc_get(var_get(sh, name), key) : NULL;
		if (old) {
			char *nv = xmalloc(strlen(old) + strlen(val) + 1);
			strcpy(nv, old);
			strcat(nv, val);
			r = assoc_set(sh, name, key, nv);
			free(nv);
		} else
			r = assoc_set(sh, name, key, val);
		free(key);
		if (r < 0)
			return -1;
	}
	return 0;
}

static int
do_assign(struct sh_shell *sh, const char *w, int flags)
{
	const char *eq = strchr(w, '=');
	size_t nl = (size_t)(eq - w);
	bool append = nl > 0 && w[nl - 1] == '+';
	if (append)
		nl--;
	char name[256];
	const char *br = memchr(w, '[', nl);
	size_t base = br ? (size_t)(br - w) : nl;
	if (base >= sizeof name)
		base = sizeof name - 1;
	memcpy(name, w, base);
	name[base] = 0;
	const char *val = eq + 1;
	/* array compound assignment */
	if (val[0] == '(' && !br) {
		size_t vl = strlen(val);
		if (vl >= 2 && val[vl - 1] == ')') {
			char *inner = xstrndup(val + 1, vl - 2);
			struct node *tmp;
			/* parse the inner words as a command's words */
			struct parser *p = parser_new(sh, inner, strlen(inner), sh->lineno);
			struct strv items = {0};
			int r = parse_next(p, &tmp);
			int rc = 0;
			if (r > 0 && tmp && tmp->type == N_SIMPLE) {
				struct word *all = tmp->u.s.assigns;
				/* assignments-looking words are plain words here */
				if (all) {
					struct word *last = all;
					while (last->next)
						last = last->next;
					last->next = tmp->u.s.words;
					tmp->u.s.words = all;
					tmp->u.s.assigns = NULL;
				}
				rc = expand_words(sh, tmp->u.s.words, &items);
			}
			node_free(tmp);
			parser_free(p);
			free(inner);
			if (rc < 0) {
				strv_free(&items);
				return -1;
			}
			struct var *v = var_get(sh, name);
			if (v && (v->flags & V_ASSOC)) {
				rc = assign_assoc_items(sh, name, v, &items, append);
				strv_free(&items);
				return rc;
			}
			size_t start = 0;
			if (append && v) {
				start = (v->flags & V_ARRAY) ? v->narr : (v->val ? 1 : 0);
			} else {
				if (v && (v->flags & V_READONLY)) {
					sh_err(sh, "%s: readonly variable", name);
					strv_free(&items);
					return -1;
				}
				int keep = v ? v->flags & (V_EXPORT | V_INTEGER | V_CASE) : 0;
				if (flags & V_CASE) /* declare -u a=(…) */
					keep = (keep & ~V_CASE) | (flags & V_CASE);
				keep |= flags & V_INTEGER; /* declare -ia a=(…) */
				var_unset(sh, name);
				var_set_empty_array(sh, name);
				v = var_get(sh, name);
				v->flags |= keep;
			}
			size_t idx = start;
			for (size_t i = 0; i < items.n; i++) {
				const char *it = items.v[i];
				bool add = false; /* [k]+=v: appended to the element (bash) */
				if (it[0] == '[') {
					const char *cb = strstr(it, "]=");
					const char *cp = strstr(it, "]+=");
					if (cp && (!cb || cp < cb)) {
						cb = cp;
						add = true;
					}
					if (cb) {
						char *ie = xstrndup(it + 1, (size_t)(cb - it - 1));
						intmax_t k;
						if (arith_eval(sh, ie, &k) == 0 && k >= 0)
							idx = (size_t)k;
						free(ie);
						it = cb + (add ? 3 : 2);
					}
				}
				char *joined = NULL;
				if (add) {
					struct var *cv = var_get(sh, name);
					const char *old = cv && (cv->flags & V_ARRAY) && idx < cv->narr
								  ? cv->arr[idx]
								  : NULL;
					if (old) {
						/* an integer array adds: (old)+(new), evaluated */
						bool num = cv->flags & V_INTEGER;
						joined = xmalloc(strlen(old) + strlen(it) + 6);
						sprintf(joined, num ? "(%s)+(%s)" : "%s%s", old, it);
						it = joined;
					}
				}
				int er = var_set_elem(sh, name, idx++, it);
				free(joined);
				if (er < 0) {
					strv_free(&items);
					return -1;
				}
			}
			strv_free(&items);
			return 0;
		}
	}
	char *v = expand_str(sh, val, true);
	if (!v)
		return -1;
	int r;
	struct var *av = br ? var_get(sh, name) : NULL;
	if (av && (av->flags & V_ASSOC)) {
		/* a[key]=v: the key is a string, not arithmetic */
		char *sub = xstrndup(br + 1, nl - base - 2);
		char *key = expand_str(sh, sub, false);
		free(sub);
		if (!key) {
			free(v);
			return -1;
		}
		if (!*key) {
			sh_err(sh, "%s[]: bad array subscript", name);
			free(key);
			free(v);
			return -1;
		}
		if (append) {
			const char *old = assoc_get(av, key);
			char *nv = xmalloc(strlen(old ? old : "") + strlen(v) + 1);
			strcpy(nv, old ? old : "");
			strcat(nv, v);
			free(v);
			v = nv;
		}
		r = assoc_set(sh, name, key, v);
		free(key);
		free(v);
		return r;
	}
	if (br) {
		char *sub = xstrndup(br + 1, nl - base - 2);
		char *se = expand_str(sh, sub, false);
		free(sub);
		intmax_t idx = 0;
		if (!se || arith_eval(sh, se, &idx) < 0) {
			free(se);
			free(v);
			return -1;
		}
		free(se);
		struct var *var = var_get(sh, name);
		if (idx < 0 && var && (var->flags & V_ARRAY))
			idx += (intmax_t)var->narr;
		if (idx < 0) {
			sh_err(sh, "%s[%jd]: bad array subscript", name, idx);
			free(v);
			return -1;
		}
		if (append) {
			const char *old = NULL;
			if (var && (var->flags & V_ARRAY) && (size_t)idx < var->narr)
				old = var->arr[idx];
			else if (var && !(var->flags & V_ARRAY) && idx == 0)
				old = var->val;
			char *nv = xmalloc(strlen(old ? old : "") + strlen(v) + 6);
			if (old && (var->flags & V_INTEGER)) /* a[i]+=e adds (bash) */
				sprintf(nv, "(%s)+(%s)", old, v);
			else {
				strcpy(nv, old ? old : "");
				strcat(nv, v);
			}
			free(v);
			v = nv;
		}
		r = var_set_elem(sh, name, (size_t)idx, v);
	} else {
		if (append) {
			struct var *var = var_get(sh, name);
			if (var && (var->flags & V_INTEGER)) {
				const char *old = var_value(sh, name); /* an array's: element 0 */
				if (!old || !*old)
					old = "0";
				char *e = xmalloc(strlen(old) + strlen(v) + 8);
				sprintf(e, "(%s)+(%s)", old, v);
				free(v);
				v = e;
			} else {
				const char *old = var_value(sh, name);
				char *nv = xmalloc(strlen(old ? old : "") + strlen(v) + 1);
				strcpy(nv, old ? old : "");
				strcat(nv, v);
				free(v);
				v = nv;
			}
		}
		r = var_set(sh, name, v, flags);
	}
	free(v);
	return r;
}

static bool
is_special_builtin(const char *name)
{
	static const char *const sp[] = {":", ".", "break", "continue", "eval", "exec", "exit",
					 "export", "readonly", "return", "set", "shift", "trap",
					 "unset", NULL};
	for (int i = 0; sp[i]; i++)
		if (strcmp(sp[i], name) == 0)
			return true;
	return false;
}

static int last_cmdsub_status = -1;

/* Length of W's "NAME=", "NAME+=", "NAME[…]=" prefix as written (no quoting
 * in it), 0 when W is no assignment. */
static size_t
assign_prefix(const char *w)
{
	size_t i = 0;
	while (isalnum((unsigned char)w[i]) || w[i] == '_')
		i++;
	if (i == 0 || isdigit((unsigned char)w[0]))
		return 0;
	if (w[i] == '[') {
		int depth = 0;
		for (; w[i]; i++) {
			if (w[i] == '[')
				depth++;
			else if (w[i] == ']' && --depth == 0)
				break;
		}
		if (w[i] != ']')
			return 0;
		i++;
	}
	if (w[i] == '+')
		i++;
	return w[i] == '=' ? i + 1 : 0;
}

/*
 * The words of a simple command. After declare, typeset, local, export and
 * readonly (bash's declaration builtins) an argument that is an assignment is
 * expanded as one (no field splitting nor globbing, ~ after = and :), and a
 * compound one NAME=(…) goes as written, for the assignment to expand.
 */
static int
expand_cmd_words(struct sh_shell *sh, struct word *words, struct strv *av, struct strv *raw)
{
	static const char *const decl[] = {"declare", "typeset", "local", "export", "readonly",
					   NULL};
	bool is_decl = false;
	for (int i = words ? 0 : -1; i >= 0 && decl[i]; i++)
		if (strcmp(words->s, decl[i]) == 0)
			is_decl = true;
	if (!is_decl)
		return expand_words(sh, words, av);
	for (struct word *w = words; w; w = w->next) {
		size_t pl = w == words ? 0 : assign_prefix(w->s);
		if (pl == 0) {
			struct word *nx = w->next;
			w->next = NULL;
			int r = expand_words(sh, w, av);
			w->next = nx;
			if (r < 0)
				return -1;
			continue;
		}
		const char *val = w->s + pl;
		size_t vl = strlen(val);
		if (val[0] == '(' && vl >= 2 && val[vl - 1] == ')') {
			char *c = xstrdup(w->s);
			strv_add(av, c);
			strv_add(raw, c); /* borrowed: av owns it */
			continue;
		}
		char *e = expand_str(sh, val, true);
		if (!e)
			return -1;
		char *a = xmalloc(pl + strlen(e) + 1);
		memcpy(a, w->s, pl);
		strcpy(a + pl, e);
		free(e);
		strv_add(av, a);
	}
	return 0;
}

static int
exec_simple(struct sh_shell *sh, struct node *n)
{
	/* the forked copy's last command (mark_final), not one a trap runs first */
	bool final = sh->exec_final == n && sh->is_child;
	if (final || !sh->is_child)
		sh->exec_final = NULL; /* the earlier commands of its list leave it marked */
	/* bash would exec it without a fork: a host program sees SHLVL as after `exec` */
	bool nofork = ((final && !sh->pipe_stage) || sh->exec_oneshot == n) && can_replace(sh);
	if (sh->exec_oneshot == n)
		sh->exec_oneshot = NULL;
	sh->lineno = n->line;
	if (!sh->in_trap) {
		/* BASH_COMMAND: its assignments and words as written (bash prints
		 * them from its parse; one space apart here), at most a value's cap */
		struct sbuf bc = {0};
		for (int pass = 0; pass < 2; pass++)
			for (struct word *w = pass ? n->u.s.words : n->u.s.assigns; w; w = w->next) {
				if (bc.len + strlen(w->s) + 1 > SH_MAX_VALUE)
					break;
				if (bc.len)
					sb_addc(&bc, ' ');
				sb_adds(&bc, w->s);
			}
		free(sh->bash_command);
		sh->bash_command = sb_take(&bc);
	}
	struct strv av = {0}, raw = {0};
	last_cmdsub_status = -1;
	if (expand_cmd_words(sh, n->u.s.words, &av, &raw) < 0) {
		free(raw.v);
		strv_free(&av);
		/* the error's own status when it set one (sh_fatal) */
		if (sh->jump == J_NONE)
			sh_fatal(sh, SH_FATAL_ERROR);
		return 1;
	}
	if (av.n == 0) {
		int st = 0;
		for (struct word *w = n->u.s.assigns; w; w = w->next) {
			if (do_assign(sh, w->s, 0) < 0) {
				st = 1;
				if (sh->jump == J_NONE && !sh->interactive) {
					/* bash: a failed assignment ends a script; a readonly
					 * variable's (outside posix mode) only the top-level
					 * command it is part of */
					size_t nl = strcspn(w->s, "[+=");
					char *nm = xstrndup(w->s, nl);
					struct var *rv = var_get(sh, nm);
					free(nm);
					if (!sh->opt_posix && rv && (rv->flags & V_READONLY)) {
						sh->status = 1;
						sh->jump = J_TOP;
					} else
						sh_fatal(sh, SH_FATAL_ERROR);
				}
				break;
			}
			if (sh->opt_x) {
				char *v = expand_str(sh, strchr(w->s, '=') + 1, true);
				struct sbuf b = {0};
				const char *ps4 = var_value(sh, "PS4");
				sb_adds(&b, ps4 ? ps4 : "+ ");
				sb_addn(&b, w->s, (size_t)(strchr(w->s, '=') - w->s) + 1);
				char *q = shell_quote(v ? v : "");
				sb_adds(&b, v && *v ? q : "");
				sb_addc(&b, '\n');
				xtrace_write(sh, b.s, b.len);
				free(q);
				free(v);
				sb_free(&b);
			}
		}
		if (st == 0 && last_cmdsub_status >= 0)
			st = last_cmdsub_status;
		if (n->redirs && sh->jump == J_NONE) {
			struct redir_state rs = {0};
			if (redir_apply(sh, n->redirs, &rs) < 0)
				st = 1;
			redir_restore(&rs);
		}
		free(raw.v);
		strv_free(&av);
		return st;
	}
	const char *name = av.v[0];
	struct func *f = func_get(sh, name);
	const struct sh_builtin *b = f ? NULL : builtin_find(name);
	sh_cmd_fn own = (f || b) ? NULL : own_command_find(name);
	char *path = NULL;
	if (!f && !b && !own)
		path = find_in_path(sh, name);
	if (sh->opt_x)
		xtrace(sh, NULL, (int)av.n, av.v);
	int st;
	/* temporary assignments */
	/* as many as the command has (a fixed 64 dropped the rest silently) */
	struct tmpvar *tv = NULL;
	size_t ntv = 0;
	/* a host program run by a back end (no fork here) takes them like a builtin */
	if (n->u.s.assigns && (f || b || own || (path && sh->host_run))) {
		size_t na = 0;
		for (struct word *w = n->u.s.assigns; w; w = w->next)
			na++;
		tv = xmalloc(na * sizeof *tv);
		for (struct word *w = n->u.s.assigns; w; w = w->next) {
			const char *eq = strchr(w->s, '=');
			char *nm = xstrndup(w->s, (size_t)(eq - w->s));
			if (nm[0] && nm[strlen(nm) - 1] == '+')
				nm[strlen(nm) - 1] = 0;
			struct var *v = var_get(sh, nm);
			/* POSIX mode: an assignment before a special builtin stays */
			bool keep = b && sh->opt_posix && is_special_builtin(name);
			if (keep) {
				free(nm);
			} else {
				tv[ntv].name = nm;
				tv[ntv].existed = v != NULL;
				tv[ntv].old = v && v->val ? xstrdup(v->val) : NULL;
				tv[ntv].oldflags = v ? v->flags : 0;
				ntv++;
			}
			if (do_assign(sh, w->s, keep ? 0 : V_EXPORT) < 0) {
				st = 1;
				goto restore;
			}
		}
	} else if (n->u.s.assigns && path) {
		/* for a host program: in its environment only (the child) */
	}
	/* decision */
	if (b || own || path) {
		char *canon = path ? realpath(path, NULL) : NULL;
		st = path ? host_check(sh, name, canon ? canon : path, (int)av.n, av.v) : 0;
		if (st == 0)
			st = sh_decide_cmd(sh, b ? b->name : name, (int)av.n, av.v,
					   path ? (canon ? canon : path) : NULL);
		free(canon);
		if (st != 0)
			goto restore;
	}
	struct redir_state rs = {0};
	struct sh_exec_opts xo;
	bool permanent = b && strcmp(name, "exec") == 0 &&
			 sh_exec_parse(NULL, (int)av.n, av.v, &xo) == (int)av.n;
	if (redir_apply(sh, n->redirs, permanent ? NULL : &rs) < 0) {
		redir_restore(&rs);
		st = 1;
		goto restore;
	}
	if (f) {
		st = call_function(sh, f, (int)av.n, av.v);
	} else if (b) {
		bi_take_error();
		/* a nested shell as the copy's last command: the copy runs it */
		bool shell = !strcmp(b->name, "sh") || !strcmp(b->name, "bash") ||
			     !strcmp(b->name, "dash");
		sh->exec_in_place = final && can_replace(sh) && shell;
		/* a nested shell is a host program to bash: the same SHLVL */
		char *level = nofork && shell ? sh_shlvl_nofork(sh) : NULL;
		char **raw0 = sh->decl_raw;
		size_t nraw0 = sh->ndecl_raw;
		sh->decl_raw = raw.v;
		sh->ndecl_raw = raw.n;
		st = b->fn(sh, (int)av.n, av.v);
		sh->decl_raw = raw0;
		sh->ndecl_raw = nraw0;
		sh_shlvl_restore(sh, level);
		sh->exec_in_place = false;
		int we = bi_take_error();
		if (we && we != EPIPE) {
			sh_err(sh, "%s: write error: %s", name, strerror(we));
			st = 1;
		}
		sh_record_cmd(sh, b->name, (int)av.n, av.v, st);
	} else if (own) {
		st = run_own(sh, own, (int)av.n, av.v);
		sh_record_cmd(sh, name, (int)av.n, av.v, st);
	} else if (path && sh->host_run) {
		char *level = nofork ? sh_shlvl_nofork(sh) : NULL;
		st = run_host(sh, name, path, (int)av.n, av.v, NULL, false);
		sh_shlvl_restore(sh, level);
		record_host(sh, name, (int)av.n, av.v, path, st);
	} else if (path) {
		/* in place: nothing of this copy runs after it (no trap; no outcome
		 * to record: with --decisions the status is written after it ends) */
		bool in_place = final && can_replace(sh);
		char *level = nofork ? sh_shlvl_nofork(sh) : NULL;
		pid_t pid;
		if (in_place) {
			bi_flush();
			if (sh->decider)
				sh_decider_flush(sh->decider);
			pid = 0;
		} else {
			pid = sh_fork(sh);
		}
		if (pid == 0) {
			for (struct word *w = n->u.s.assigns; w; w = w->next)
				do_assign(sh, w->s, V_EXPORT);
			signal(SIGPIPE, SIG_DFL);
			execve(path, av.v, sh_environ(sh));
			int e = errno;
			if (e == ENOEXEC) {
				/* a script without #!: run it in a fresh shell */
				char *nargv[3] = {(char *)"sh", path, NULL};
				_exit(run_nested_shell(sh, 2, nargv));
			}
			sh_err(sh, "%s: %s", name, strerror(e));
			_exit(e == ENOENT ? 127 : 126);
		}
		int ws;
		if (pid < 0)
			st = 126;
		else if (wait_raw(pid, &ws) < 0)
			st = 127;
		else {
			st = status_of(ws);
			if (WIFSIGNALED(ws))
				report_killed(sh, pid, ws, n);
		}
		record_host(sh, name, (int)av.n, av.v, path, st);
		sh_shlvl_restore(sh, level);
	} else {
		if (strchr(name, '/')) {
			int e = errno;
			struct stat sst;
			if (stat(name, &sst) == 0 && S_ISDIR(sst.st_mode)) {
				sh_err(sh, "%s: Is a directory", name);
				st = 126;
			} else {
				sh_err(sh, "%s: %s", name, strerror(e ? e : ENOENT));
				st = e == EACCES ? 126 : 127;
			}
		} else {
			sh_err(sh, "%s: command not found", name);
			st = 127;
		}
	}
	redir_restore(&rs);
restore:
	for (size_t i = ntv; i-- > 0;) {
		struct var *v = var_get(sh, tv[i].name);
		if (v && !(v->flags & V_READONLY)) {
			if (tv[i].existed) {
				var_set(sh, tv[i].name, tv[i].old ? tv[i].old : "", 0);
				v = var_get(sh, tv[i].name);
				v->flags = tv[i].oldflags;
				if (!tv[i].old) {
					free(v->val);
					v->val = NULL;
				}
			} else
				var_unset(sh, tv[i].name);
			sh->env_dirty = true;
		}
		free(tv[i].name);
		free(tv[i].old);
	}
	free(tv);
	free(path);
	free(raw.v);
	strv_free(&av);
	return st;
}

/* ---- command substitution ---- */

char *
cmdsub_run(struct sh_shell *sh, const char *text, size_t len)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		sh_err(sh, "pipe: %s", strerror(errno));
		return NULL;
	}
	pid_t pid = sh_fork(sh);
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return NULL;
	}
	if (pid == 0) {
		close(p[0]);
		dup2(p[1], 1);
		close(p[1]);
		sh_fdset_put(&sh->script_fds, 1, true); /* its stdout: the script's (fsops.h) */
		/* traps are not inherited by $( ) except the ignored ones */
		for (int s = 0; s < SH_NTRAP; s++)
			if (sh->traps[s] && sh->traps[s][0]) {
				free(sh->traps[s]);
				sh->traps[s] = NULL;
			}
		sh->errexit_off = 0;
		/* bash clears -e in $( ) outside posix mode (shopt inherit_errexit keeps it) */
		if (!sh->opt_posix && !sh->inherit_errexit)
			sh->opt_e = false;
		sh->oneshot_depth = sh->call_depth + 1; /* its last command: bash's, no fork */
		/* bash's line numbers inside: its first command's line is the line the
		 * substitution ends on (the command's plus the newlines in the text), the
		 * blank lines it starts with not counted */
		int line = sh->lineno;
		for (size_t k = 0; k < len; k++)
			line += text[k] == '\n';
		while (len && (*text == ' ' || *text == '\t' || *text == '\n')) {
			text++;
			len--;
		}
		sh->parse_cmdsub = true; /* taken by exec_text's parser (its here-documents) */
		int st = exec_text(sh, text, len, line, NULL);
		if (sh->jump == J_EXIT)
			st = sh->jump_n;
		sh_exit(sh, st);
	}
	close(p[1]);
	struct sbuf b = {0};
	char buf[65536];
	bool toolong = false;
	for (;;) {
		ssize_t r = read(p[0], buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (b.len + (size_t)r > SH_MAX_EXPANSION) {
			toolong = true;
			kill(pid, SIGKILL);
			break;
		}
		sb_addn(&b, buf, (size_t)r);
	}
	close(p[0]);
	int st = sh_wait_pid(sh, pid);
	sh->status = st;
	last_cmdsub_status = st;
	if (toolong) {
		sh_err(sh, "command substitution: output too large (max %u bytes)",
		       SH_MAX_EXPANSION);
		sb_free(&b);
		return NULL;
	}
	/* NUL bytes are dropped, as bash does (with a warning) */
	size_t w = 0;
	bool nul = false;
	for (size_t i = 0; i < b.len; i++) {
		if (b.s[i] == 0) {
			nul = true;
			continue;
		}
		b.s[w++] = b.s[i];
	}
	if (nul)
		sh_err(sh, "warning: command substitution: ignored null byte in input");
	while (w > 0 && b.s[w - 1] == '\n')
		w--;
	if (!b.s)
		return xstrdup("");
	b.s[w] = 0;
	return b.s;
}

int
procsub_open(struct sh_shell *sh, const char *text, size_t len, bool out)
{
	if (sh->nprocsub >= SH_FD_SCRIPT_MAX) {
		sh_err(sh, "process substitution: too many (max %d)", SH_FD_SCRIPT_MAX);
		return -1;
	}
	/* a free fd the script does not hold, from 63 down (bash's choice) */
	int target = -1;
	for (int fd = 63; fd >= 10 && target < 0; fd--)
		if (!sh_fdset_has(&sh->script_fds, fd) && fcntl(fd, F_GETFD) < 0 && errno == EBADF)
			target = fd;
	if (target < 0) {
		sh_err(sh, "process substitution: no free file descriptor");
		return -1;
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		sh_err(sh, "pipe: %s", strerror(errno));
		return -1;
	}
	pid_t pid = sh_fork(sh);
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		int std = out ? 0 : 1;
		dup2(out ? p[0] : p[1], std);
		close(p[0]);
		close(p[1]);
		sh_fdset_put(&sh->script_fds, std, true); /* the script's (fsops.h) */
		for (int t = 0; t < SH_NTRAP; t++)
			if (sh->traps[t] && sh->traps[t][0]) {
				free(sh->traps[t]);
				sh->traps[t] = NULL;
			}
		sh->nprocsub = 0;
		sh->errexit_off = 0;
		sh->oneshot_depth = sh->call_depth + 1; /* its last command: bash's, no fork */
		sh->parse_cmdsub = true; /* taken by exec_text's parser (its here-documents) */
		int st = exec_text(sh, text, len, sh->lineno, NULL);
		if (sh->jump == J_EXIT)
			st = sh->jump_n;
		sh_exit(sh, st);
	}
	int keep = out ? p[1] : p[0];
	close(out ? p[0] : p[1]);
	/* the script's fd as a redirection's: inherited by what it runs */
	if (dup2(keep, target) < 0) {
		sh_err(sh, "process substitution: %s", strerror(errno));
		close(keep);
		return -1;
	}
	close(keep);
	sh_fdset_put(&sh->script_fds, target, true);
	sh->procsub_fds[sh->nprocsub++] = target;
	return target;
}

/* Closes the process substitutions opened since MARK. */
static void
procsub_close(struct sh_shell *sh, size_t mark)
{
	while (sh->nprocsub > mark) {
		int fd = sh->procsub_fds[--sh->nprocsub];
		close(fd);
		sh_fdset_put(&sh->script_fds, fd, false);
	}
}

/* ---- compound commands ---- */

static int
exec_pipeline(struct sh_shell *sh, struct node *n)
{
	size_t k = n->u.p.n;
	if (k == 1) {
		sh->errexit_off++;
		int st = exec_node(sh, n->u.p.v[0]);
		sh->errexit_off--;
		return n->u.p.bang ? !st : st;
	}
	pid_t *pids = xmalloc(k * sizeof(pid_t));
	int prev = -1;
	int last_st = -1; /* shopt lastpipe: the last command's status, run here */
	for (size_t i = 0; i < k; i++) {
		if (i + 1 == k && sh->lastpipe && prev >= 0) {
			/* bash (no job control here): the last command runs in this shell,
			 * its standard input the pipe; the shell's own comes back after */
			int saved = fcntl(0, F_DUPFD_CLOEXEC, 10);
			if (prev != 0) { /* with fd 0 closed, the pipe's read end may be 0 */
				dup2(prev, 0);
				close(prev);
			} else
				fcntl(0, F_SETFD, 0);
			prev = -1;
			if (n->u.p.bang)
				sh->errexit_off++;
			last_st = exec_node(sh, n->u.p.v[i]);
			if (n->u.p.bang)
				sh->errexit_off--;
			if (saved >= 0) {
				dup2(saved, 0);
				close(saved);
			} else
				close(0);
			pids[i] = 0;
			break;
		}
		int p[2] = {-1, -1};
		if (i + 1 < k && pipe2(p, O_CLOEXEC) < 0) {
			sh_err(sh, "pipe: %s", strerror(errno));
			k = i;
			break;
		}
		pid_t pid = sh_fork(sh);
		if (pid == 0) {
			sh_decider_stage_buffered = 1; /* box-sh: this stage's decision lines are buffered */
			if (prev >= 0) {
				if (prev != 0) { /* with fd 0 closed, a pipe's read end may be 0 */
					dup2(prev, 0);
					close(prev);
				} else
					fcntl(0, F_SETFD, 0);
				sh_fdset_put(&sh->script_fds, 0, true); /* the stage's (fsops.h) */
			}
			if (p[1] >= 0) {
				dup2(p[1], 1);
				close(p[1]);
				close(p[0]);
				sh_fdset_put(&sh->script_fds, 1, true);
			}
			sh->pipe_stage = n->u.p.n > 1;
			mark_final(sh, n->u.p.v[i]);
			if (n->u.p.bang) /* bash: `! a | b` runs its stages with -e ignored */
				sh->errexit_off++;
			int st = exec_node(sh, n->u.p.v[i]);
			if (sh->jump == J_EXIT)
				st = sh->jump_n;
			sh_exit(sh, st);
		}
		pids[i] = pid;
		if (prev >= 0)
			close(prev);
		if (p[1] >= 0)
			close(p[1]);
		prev = p[0];
	}
	if (prev >= 0)
		close(prev);
	free(sh->pipestatus);
	sh->pipestatus = xmalloc(k * sizeof(int));
	sh->npipestatus = k;
	int st = 0, fail = 0;
	for (size_t i = 0; i < k; i++) {
		int s = pids[i] > 0 ? sh_wait_pid(sh, pids[i]) : (i + 1 == k && last_st >= 0 ? last_st : 1);
		sh->pipestatus[i] = s;
		st = s;
		if (s != 0)
			fail = s;
	}
	free(pids);
	if (sh->opt_pipefail)
		st = fail;
	/* PIPESTATUS */
	var_unset(sh, "PIPESTATUS");
	for (size_t i = 0; i < k; i++) {
		char b[16];
		snprintf(b, sizeof b, "%d", sh->pipestatus[i]);
		var_set_elem(sh, "PIPESTATUS", i, b);
	}
	if (n->u.p.bang)
		return !st;
	return st;
}

static void
set_pipestatus1(struct sh_shell *sh, int st)
{
	char b[16], *o = b + sizeof b;
	unsigned u = st < 0 ? 0u - (unsigned)st : (unsigned)st;
	*--o = 0;
	do
		*--o = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (st < 0)
		*--o = '-';
	memmove(b, o, (size_t)(b + sizeof b - o));
	struct var *v = var_get(sh, "PIPESTATUS");
	if (v && (v->flags & V_ARRAY) && v->narr == 1 && v->arr[0]) {
		if (strcmp(v->arr[0], b) != 0) { /* the same status (most often): nothing to do */
			free(v->arr[0]);
			v->arr[0] = xstrdup(b);
		}
		return;
	}
	var_unset(sh, "PIPESTATUS");
	var_set_elem(sh, "PIPESTATUS", 0, b);
}

static bool
case_match(struct sh_shell *sh, const char *word, struct word *pats, bool *err)
{
	for (struct word *p = pats; p; p = p->next) {
		char *pat = expand_pat(sh, p->s);
		if (!pat) {
			*err = true;
			return false;
		}
		bool m = pat_match(pat, word);
		free(pat);
		if (m)
			return true;
	}
	return false;
}

static int dbrack_eval(struct sh_shell *sh, struct word **tp, int prec, bool *err);
static bool db_noeval; /* the untaken side of && ||: parsed, not evaluated */
static unsigned db_depth; /* ( ) nesting being evaluated */

static int exec_loop_body(struct sh_shell *sh, struct node *body, bool *stop);

static int exec_node_body(struct sh_shell *sh, struct node *n);

int
exec_node(struct sh_shell *sh, struct node *n)
{
	size_t mark = sh->nprocsub;
	int st = exec_node_body(sh, n);
	procsub_close(sh, mark);
	return st;
}

static int
exec_node_body(struct sh_shell *sh, struct node *n)
{
	if (!n)
		return sh->status;
	if (sh->jump != J_NONE)
		return sh->status;
	if (sh_stack_exhausted(sh))
		return sh->status = 1;
	if (sh->step_limit && ++sh->steps > sh->step_limit) {
		if (sh->steps == sh->step_limit + 1)
			sh_err(sh, "step budget exhausted (%lu)", sh->step_limit);
		sh->jump = J_EXIT;
		sh->jump_n = 124;
		return sh->status = 124;
	}
	if (sh->interactive && sh->interrupted) {
		/*
		 * Ctrl-C at an interactive shell (the box-shell daemon) abandons the
		 * command line: a break out of every loop and list; the prompt clears it.
		 */
		sh->jump = J_BREAK;
		sh->jump_n = INT_MAX;
		return sh->status = 130;
	}
	if (sh->opt_n && !sh->interactive)
		return sh->status; /* set -n: read, no longer run (bash, POSIX) */
	if (sh->pending[SIGINT] || sh->pending[SIGTERM] || sh->pending[SIGHUP] ||
	    sh->pending[SIGUSR1] || sh->pending[SIGUSR2] || sh->pending[SIGALRM]) {
		sh_check_traps(sh);
		/* A trap that ran `exit` or `return`: this command does not run (else a
		 * `continue` here would replace the exit and `while continue; do …` never end). */
		if (sh->jump != J_NONE)
			return sh->status; /* the trap's exit or return */
	}
	struct redir_state rs = {0};
	bool redirected = false;
	if (n->redirs && n->type != N_SIMPLE) {
		if (redir_apply(sh, n->redirs, &rs) < 0) {
			redir_restore(&rs);
			return sh->status = 1;
		}
		redirected = true;
	}
	int st = 0;
	switch (n->type) {
	case N_SIMPLE:
		if (sh->traps[TRAP_DEBUG] && !run_debug_trap(sh, n->line)) {
			st = sh->status;
			break;
		}
		st = exec_simple(sh, n);
		sh->status = st;
		if (sh->jump == J_NONE)
			set_pipestatus1(sh, st);
		errexit_check(sh, st);
		break;
	case N_PIPE: {
		struct time_mark tm;
		if (n->u.p.timed)
			time_start(&tm);
		if (n->u.p.n == 0) {
			st = n->u.p.bang; /* `!` alone is false, `! !` true */
		} else if (n->u.p.n == 1 && n->u.p.bang) {
			sh->errexit_off++;
			st = !exec_node(sh, n->u.p.v[0]);
			sh->errexit_off--;
		} else if (n->u.p.n == 1) {
			st = exec_node(sh, n->u.p.v[0]);
		} else {
			st = exec_pipeline(sh, n);
			if (!n->u.p.bang) {
				sh->status = st;
				errexit_check(sh, st);
			}
		}
		sh->status = st;
		if (n->u.p.timed)
			time_report(sh, &tm, n->u.p.time_posix);
		break;
	}
	case N_LIST:
		for (size_t i = 0; i < n->u.p.n && sh->jump == J_NONE; i++)
			st = exec_node(sh, n->u.p.v[i]);
		if (n->u.p.n == 0)
			st = sh->status;
		else
			st = sh->status;
		break;
	case N_ASYNC: {
		pid_t pid = sh_fork(sh);
		if (pid == 0) {
			/* Interactive: a job of its own group, which Ctrl-C does not reach (jobs.c). */
			if (sh->interactive)
				(void)setpgid(0, 0);
			int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				dup2(fd, 0);
				close(fd);
				sh_fdset_put(&sh->script_fds, 0, true); /* the job's stdin (fsops.h) */
			}
			reset_traps(sh);
			mark_final(sh, n->u.b.a);
			int s = exec_node(sh, n->u.b.a);
			if (sh->jump == J_EXIT)
				s = sh->jump_n;
			sh_exit(sh, s);
		}
		if (pid > 0) {
			sh->lastbg = pid;
			struct bgjob *j = xmalloc(sizeof *j);
			j->pid = pid;
			j->status = 0;
			j->done = false;
			j->next = sh->jobs;
			sh->jobs = j;
		}
		st = 0;
		sh->status = 0;
		break;
	}
	case N_AND:
	case N_OR: {
		/*
		 * a && b || c … is a left-deep tree, one level per operator: its
		 * spine runs in a loop (a list of 100000 operators overflowed the
		 * stack). Every left operand runs with errexit off, as does the
		 * right one of an inner node (it is its parent's left operand).
		 */
		size_t k = 0, cap = 16;
		struct node *small[16], **spine = small;
		for (struct node *m = n; m->type == N_AND || m->type == N_OR; m = m->u.b.a) {
			if (k == cap) {
				struct node **big = xmalloc(2 * cap * sizeof *big);
				memcpy(big, spine, k * sizeof *big);
				if (spine != small)
					free(spine);
				spine = big;
				cap *= 2;
			}
			spine[k++] = m;
		}
		sh->errexit_off++;
		st = exec_node(sh, spine[k - 1]->u.b.a);
		sh->errexit_off--;
		for (size_t i = k; i-- > 0 && sh->jump == J_NONE;) {
			struct node *m = spine[i];
			if ((m->type == N_AND) == (st == 0)) {
				sh->errexit_off += i > 0;
				st = exec_node(sh, m->u.b.b);
				sh->errexit_off -= i > 0;
			}
			if (i > 0)
				sh->status = st;
		}
		if (spine != small)
			free(spine);
		if (sh->jump != J_NONE)
			break;
		sh->status = st;
		break;
	}
	case N_NOT:
		sh->errexit_off++;
		st = !exec_node(sh, n->u.b.a);
		sh->errexit_off--;
		sh->status = st;
		break;
	case N_SUBSHELL: {
		pid_t pid = sh_fork(sh);
		if (pid == 0) {
			reset_traps(sh);
			mark_final(sh, n->u.b.a);
			int s = exec_node(sh, n->u.b.a);
			if (sh->jump == J_EXIT)
				s = sh->jump_n;
			sh_exit(sh, s);
		}
		st = pid < 0 ? 1 : sh_wait_pid(sh, pid);
		sh->status = st;
		errexit_check(sh, st);
		break;
	}
	case N_GROUP:
		st = exec_node(sh, n->u.b.a);
		break;
	case N_IF: {
		/* elif is an if in the else branch: the chain runs in a loop */
		struct node *m = n;
		for (;;) {
			sh->errexit_off++;
			st = exec_node(sh, m->u.b.a);
			sh->errexit_off--;
			if (sh->jump != J_NONE)
				break;
			if (st == 0) {
				st = exec_node(sh, m->u.b.b);
			} else if (m->u.b.c && m->u.b.c->type == N_IF && !m->u.b.c->redirs) {
				m = m->u.b.c;
				continue;
			} else if (m->u.b.c) {
				st = exec_node(sh, m->u.b.c);
			} else {
				st = 0;
			}
			break;
		}
		if (sh->jump != J_NONE)
			break;
		sh->status = st;
		break;
	}
	case N_WHILE:
	case N_UNTIL: {
		st = 0;
		sh->loop_depth++;
		for (;;) {
			sh->errexit_off++;
			int c = exec_node(sh, n->u.b.a);
			sh->errexit_off--;
			if (sh->jump == J_BREAK || sh->jump == J_CONTINUE) {
				bool stop;
				exec_loop_body(sh, NULL, &stop);
				if (stop)
					break;
				continue;
			}
			if (sh->jump != J_NONE)
				break;
			if ((n->type == N_WHILE) != (c == 0))
				break;
			bool stop;
			st = exec_loop_body(sh, n->u.b.b, &stop);
			if (stop)
				break;
		}
		sh->loop_depth--;
		if (sh->jump == J_RETURN)
			st = sh->status; /* return's status, not the loop's */
		sh->status = st;
		break;
	}
	case N_FOR: {
		struct strv items = {0};
		if (n->u.f.has_in) {
			if (expand_words(sh, n->u.f.words, &items) < 0) {
				strv_free(&items);
				if (sh->jump == J_NONE)
					sh_fatal(sh, SH_FATAL_ERROR);
				st = 1;
				break;
			}
		} else {
			for (int i = 0; i < sh->argc; i++)
				strv_add(&items, xstrdup(sh->argv[i]));
		}
		st = 0;
		sh->loop_depth++;
		for (size_t i = 0; i < items.n; i++) {
			if (sh->opt_x) {
				/* bash: "+ for NAME in WORDS" before each pass */
				struct sbuf t = {0};
				sb_adds(&t, "for ");
				sb_adds(&t, n->u.f.var);
				sb_adds(&t, " in");
				for (size_t k = 0; k < items.n && t.len < SH_MAX_VALUE; k++) {
					char *q = shell_quote(items.v[k]);
					sb_addc(&t, ' ');
					sb_adds(&t, q);
					free(q);
				}
				xtrace_text(sh, t.s);
				sb_free(&t);
			}
			if (var_set(sh, n->u.f.var, items.v[i], 0) < 0) {
				st = 1;
				break;
			}
			bool stop;
			st = exec_loop_body(sh, n->u.f.body, &stop);
			if (stop)
				break;
		}
		sh->loop_depth--;
		strv_free(&items);
		if (sh->jump == J_RETURN)
			st = sh->status; /* return's status, not the loop's */
		sh->status = st;
		break;
	}
	case N_AFOR: {
		intmax_t v;
		st = 0;
		sh->lineno = n->line;
		if (*n->u.af.init) {
			char *e = expand_str(sh, n->u.af.init, false);
			if (e)
				xtrace_afor(sh, e);
			if (!e || arith_cmd(sh, e, &v) < 0) {
				free(e);
				st = sh->status = 1;
				break;
			}
			free(e);
		}
		sh->loop_depth++;
		for (;;) {
			if (*n->u.af.cond) {
				char *e = expand_str(sh, n->u.af.cond, false);
				if (e)
					xtrace_afor(sh, e);
				if (!e || arith_cmd(sh, e, &v) < 0) {
					free(e);
					st = 1;
					break;
				}
				free(e);
				if (!v)
					break;
			}
			bool stop;
			st = exec_loop_body(sh, n->u.af.body, &stop);
			if (stop)
				break;
			if (*n->u.af.step) {
				char *e = expand_str(sh, n->u.af.step, false);
				if (e)
					xtrace_afor(sh, e);
				if (!e || arith_cmd(sh, e, &v) < 0) {
					free(e);
					st = 1;
					break;
				}
				free(e);
			}
		}
		sh->loop_depth--;
		if (sh->jump == J_RETURN)
			st = sh->status; /* return's status, not the loop's */
		sh->status = st;
		break;
	}
	case N_CASE: {
		sh->lineno = n->line;
		char *w = expand_str(sh, n->u.c.word, false);
		if (!w) {
			st = 1;
			break;
		}
		if (sh->opt_x) {
			struct sbuf t = {0};
			sb_adds(&t, "case ");
			sb_adds(&t, n->u.c.word); /* as written (bash) */
			sb_adds(&t, " in");
			xtrace_text(sh, t.s);
			sb_free(&t);
		}
		st = 0;
		bool fall = false;
		for (struct case_item *ci = n->u.c.items; ci; ci = ci->next) {
			bool err = false;
			if (fall || case_match(sh, w, ci->pats, &err)) {
				st = ci->body ? exec_node(sh, ci->body) : 0;
				if (sh->jump != J_NONE)
					break;
				if (ci->term == 1) {
					fall = true;
					continue;
				}
				fall = false;
				if (ci->term == 2)
					continue;
				break;
			}
			if (err) {
				st = 1;
				break;
			}
		}
		free(w);
		sh->status = st;
		break;
	}
	case N_FUNC:
		n->u.fn.body->refs++;
		func_set(sh, n->u.fn.name, n->u.fn.body);
		st = 0;
		sh->status = 0;
		break;
	case N_DBRACK: {
		sh->lineno = n->line;
		struct word *t = n->u.db.toks;
		bool err = false;
		if (sh->opt_x) {
			struct sbuf b = {0};
			sb_adds(&b, var_value(sh, "PS4") ? var_value(sh, "PS4") : "+ ");
			sb_adds(&b, "[[");
			for (struct word *w = t; w; w = w->next) {
				sb_addc(&b, ' ');
				const char *s = w->s[0] == '\001' ? w->s + 1 : w->s;
				char *e = w->s[0] == '\001' ? xstrdup(s) : expand_str(sh, s, false);
				sb_adds(&b, e ? e : "");
				free(e);
			}
			sb_adds(&b, " ]]\n");
			xtrace_write(sh, b.s, b.len);
			sb_free(&b);
		}
		sh->in_dbrack++;
		int r = dbrack_eval(sh, &t, 0, &err);
		sh->in_dbrack--;
		if (!err && t) {
			sh_err(sh, "syntax error in conditional expression");
			err = true;
		}
		st = err ? 2 : (r ? 0 : 1);
		sh->status = st;
		errexit_check(sh, st);
		break;
	}
	case N_ARITH: {
		sh->lineno = n->line;
		char *e = expand_str(sh, n->u.ar.expr, false);
		intmax_t v = 0;
		if (!e || arith_cmd(sh, e, &v) < 0)
			st = 1;
		else
			st = v ? 0 : 1;
		if (sh->opt_x && e) {
			struct sbuf b = {0};
			sb_adds(&b, var_value(sh, "PS4") ? var_value(sh, "PS4") : "+ ");
			sb_adds(&b, "(( ");
			sb_adds(&b, e);
			sb_adds(&b, " ))\n");
			xtrace_write(sh, b.s, b.len);
			sb_free(&b);
		}
		free(e);
		sh->status = st;
		errexit_check(sh, st);
		break;
	}
	default:
		break;
	}
	if (redirected)
		redir_restore(&rs);
	return st;
}

/*
 * Collects the background jobs that have ended (their status kept for `wait`), as bash does
 * on SIGCHLD: after each complete command and after each loop iteration, so that a loop
 * polling a job (`while kill -0 $pid; do …; done`) sees it gone instead of a zombie forever.
 */
void
sh_jobs_reap(struct sh_shell *sh)
{
	for (struct bgjob *j = sh->jobs; j; j = j->next)
		if (!j->done) {
			int ws;
			if (waitpid(j->pid, &ws, WNOHANG) == j->pid) {
				j->done = true;
				j->status = status_of(ws);
			}
		}
}

/* Runs one loop body; handles break/continue N. */
static int
exec_loop_body(struct sh_shell *sh, struct node *body, bool *stop)
{
	int st = body ? exec_node(sh, body) : sh->status;
	sh_jobs_reap(sh);
	*stop = false;
	if (sh->interactive && sh->interrupted) {
		/* Ctrl-C at an interactive shell: see exec_node. */
		*stop = true;
		sh->jump = J_BREAK;
		sh->jump_n = INT_MAX;
		return sh->status = 130;
	}
	if (sh->jump == J_BREAK) {
		if (--sh->jump_n <= 0)
			sh->jump = J_NONE;
		*stop = true;
	} else if (sh->jump == J_CONTINUE) {
		if (--sh->jump_n <= 0)
			sh->jump = J_NONE;
		else
			*stop = true;
	} else if (sh->jump != J_NONE) {
		*stop = true;
	}
	return st;
}

/* ---- [[ ]] ---- */

static bool
is_op(struct word *w, const char *op)
{
	return w && w->s[0] == '\001' && strcmp(w->s + 1, op) == 0;
}

static char *
db_word(struct sh_shell *sh, struct word *w)
{
	if (w->s[0] == '\001')
		return xstrdup(w->s + 1);
	if (db_noeval)
		return xstrdup("");
	return expand_str(sh, w->s, false);
}

int test_unary(struct sh_shell *sh, const char *op, const char *arg, int *res);
int test_binary(struct sh_shell *sh, const char *a, const char *op, const char *b, int *res);

static int
db_regex(struct sh_shell *sh, const char *s, struct word *rw, bool *err)
{
	/* quoted parts of the regex match literally */
	struct sbuf re = {0};
	char *pat = expand_re(sh, rw->s);
	if (!pat) {
		*err = true;
		return 0;
	}
	sb_adds(&re, pat);
	free(pat);
	regex_t rx;
	int rc = sh_regcomp(&rx, re.s ? re.s : "", REG_EXTENDED);
	sb_free(&re);
	if (rc != 0) {
		*err = true;
		return 0;
	}
	regmatch_t m[64];
	int r = regexec(&rx, s, 64, m, 0);
	var_unset(sh, "BASH_REMATCH");
	if (r == 0) {
		size_t nsub = rx.re_nsub + 1;
		for (size_t i = 0; i < nsub && i < 64; i++) {
			if (m[i].rm_so < 0) {
				var_set_elem(sh, "BASH_REMATCH", i, "");
				continue;
			}
			char *sub = xstrndup(s + m[i].rm_so, (size_t)(m[i].rm_eo - m[i].rm_so));
			var_set_elem(sh, "BASH_REMATCH", i, sub);
			free(sub);
		}
	}
	regfree(&rx);
	return r == 0;
}

static int
db_primary(struct sh_shell *sh, struct word **tp, bool *err)
{
	struct word *t = *tp;
	if (!t) {
		*err = true;
		sh_err(sh, "syntax error in conditional expression");
		return 0;
	}
	if (is_op(t, "!")) {
		/* a run of them in a loop: the script may write 100000 */
		bool neg = false;
		while (t && is_op(t, "!")) {
			neg = !neg;
			t = t->next;
		}
		*tp = t;
		int r = db_primary(sh, tp, err);
		return neg ? !r : r;
	}
	if (is_op(t, "(")) {
		if (db_depth >= SH_MAX_PARSE_DEPTH) {
			sh_err(sh, "syntax error in conditional expression: nesting too deep");
			*err = true;
			return 0;
		}
		*tp = t->next;
		db_depth++;
		int r = dbrack_eval(sh, tp, 0, err);
		db_depth--;
		if (!is_op(*tp, ")")) {
			if (!*err)
				sh_err(sh, "syntax error in conditional expression");
			*err = true;
			return 0;
		}
		*tp = (*tp)->next;
		return r;
	}
	/* unary operator? */
	if (t->s[0] == '-' && t->s[1] && !t->s[2] && t->next && !is_op(t->next, "&&") &&
	    !is_op(t->next, "||") && !is_op(t->next, ")")) {
		struct word *nx = t->next;
		bool nx_is_binop = nx->next && (nx->s[0] == '=' || nx->s[0] == '!' || nx->s[0] == '-' ||
						is_op(nx, "<") || is_op(nx, ">"));
		(void)nx_is_binop;
		char *arg = db_word(sh, nx);
		if (!arg) {
			*err = true;
			return 0;
		}
		int res = 0;
		int rc = db_noeval ? (strchr("abcdefghkLnoprsStuvwxzGNO", t->s[1]) ? 0 : -1)
				   : test_unary(sh, t->s, arg, &res);
		free(arg);
		if (rc == 0) {
			*tp = nx->next;
			return res;
		}
	}
	char *a = db_word(sh, t);
	if (!a) {
		*err = true;
		return 0;
	}
	struct word *op = t->next;
	if (op && !is_op(op, "&&") && !is_op(op, "||") && !is_op(op, ")")) {
		const char *o = op->s[0] == '\001' ? op->s + 1 : op->s;
		struct word *bw = op->next;
		if (!bw) {
			sh_err(sh, "unexpected argument to conditional binary operator");
			*err = true;
			free(a);
			return 0;
		}
		int res = 0;
		if (db_noeval) {
			free(a);
			*tp = bw->next;
			return 0;
		}
		if (strcmp(o, "==") == 0 || strcmp(o, "=") == 0 || strcmp(o, "!=") == 0) {
			char *pat = expand_pat(sh, bw->s);
			if (!pat) {
				*err = true;
				free(a);
				return 0;
			}
			res = pat_match(pat, a);
			if (o[0] == '!')
				res = !res;
			free(pat);
		} else if (strcmp(o, "=~") == 0) {
			res = db_regex(sh, a, bw, err);
			if (*err) {
				free(a);
				return 0;
			}
		} else if (strcmp(o, "<") == 0 || strcmp(o, ">") == 0) {
			char *b = db_word(sh, bw);
			int c = strcmp(a, b ? b : "");
			res = o[0] == '<' ? c < 0 : c > 0;
			free(b);
		} else {
			char *b = db_word(sh, bw);
			if (!b) {
				*err = true;
				free(a);
				return 0;
			}
			if (o[0] == '-' && strcmp(o, "-nt") && strcmp(o, "-ot") && strcmp(o, "-ef")) {
				/* arithmetic comparisons evaluate expressions */
				intmax_t x, y;
				sh->arith_who = "[[";
				int r = arith_eval(sh, a, &x) < 0 || arith_eval(sh, b, &y) < 0 ? -1 : 0;
				sh->arith_who = NULL;
				if (r < 0) {
					/* bash: the test is false (1), not an error (2) */
					free(a);
					free(b);
					*tp = bw->next;
					return 0;
				}
				char xs[32], ys[32];
				snprintf(xs, sizeof xs, "%jd", x);
				snprintf(ys, sizeof ys, "%jd", y);
				if (test_binary(sh, xs, o, ys, &res) != 0) {
					sh_err(sh, "conditional binary operator expected");
					*err = true;
				}
			} else if (test_binary(sh, a, o, b, &res) != 0) {
				sh_err(sh, "conditional binary operator expected");
				*err = true;
			}
			free(b);
		}
		free(a);
		*tp = bw->next;
		return res;
	}
	*tp = t->next;
	int r = a[0] != 0;
	free(a);
	return r;
}

static int
dbrack_eval(struct sh_shell *sh, struct word **tp, int prec, bool *err)
{
	int r = db_primary(sh, tp, err);
	while (!*err && *tp) {
		if (is_op(*tp, "&&") || is_op(*tp, "||")) {
			bool and = is_op(*tp, "&&");
			if (!and && prec >= 1)
				break;
			*tp = (*tp)->next;
			bool save = db_noeval;
			if (and ? !r : r)
				db_noeval = true; /* bash short-circuits: parse only */
			int rr = dbrack_eval(sh, tp, 1, err);
			db_noeval = save;
			r = and ? r && rr : r || rr;
			continue;
		}
		break;
	}
	return r;
}

/* ---- running text ---- */

int
exec_text(struct sh_shell *sh, const char *text, size_t len, int line, const char *name)
{
	if (sh->call_depth >= SH_MAX_CALL_DEPTH) {
		sh_err(sh, "maximum nesting level exceeded (%d)", SH_MAX_CALL_DEPTH);
		return 1;
	}
	if (memchr(text, 0, len)) {
		/* the line of the first NUL */
		int ln = line;
		const char *z = memchr(text, 0, len);
		for (const char *p = text; p < z; p++)
			if (*p == '\n')
				ln++;
		const char *outer = sh->script_name;
		if (name)
			sh->script_name = name;
		sh_errline(sh, ln, "NUL byte in the script: refused");
		sh->script_name = outer;
		return 2;
	}
	sh->call_depth++;
	const char *saved_name = sh->script_name;
	if (name)
		sh->script_name = name;
	struct parser *p = parser_new(sh, text, len, line);
	struct node *n;
	int r, st = 0;
	bool ran = false;
	while (sh->jump == J_NONE && (r = parse_next(p, &n)) != 0) {
		if (r < 0) {
			st = 2;
			sh->status = 2;
			sh->call_depth--;
			sh->script_name = saved_name;
			parser_free(p);
			return -2;
		}
		if (!n)
			continue;
		if (sh->opt_n) {
			node_free(n);
			continue;
		}
		ran = true;
		sh->exec_oneshot = NULL;
		if (((sh->command_string && sh->call_depth == 1) ||
		     sh->call_depth == sh->oneshot_depth) &&
		    !sh->interactive) {
			int l;
			size_t used = parser_consumed(p, &l);
			while (used < len && strchr(" \t\n;", text[used]))
				used++;
			if (used >= len)
				sh->exec_oneshot = oneshot_of(n);
		}
		off_t want = -1;
		int sline = 0;
		struct stat sst;
		if (text == sh->stdin_text && fstat(0, &sst) == 0 &&
		    (unsigned long long)sst.st_dev == sh->stdin_dev &&
		    (unsigned long long)sst.st_ino == sh->stdin_ino) {
			want = (off_t)sh->stdin_off + (off_t)parser_consumed(p, &sline);
			if (lseek(0, want, SEEK_SET) != want)
				want = -1;
		}
		st = exec_node(sh, n);
		node_free(n);
		sh_jobs_reap(sh);
		if (sh->jump == J_TOP && sh->call_depth == 1) {
			/* the top level: on with the next command */
			sh->jump = J_NONE;
			st = sh->status = 1;
		}
		if (want >= 0 && sh->jump == J_NONE && fstat(0, &sst) == 0 &&
		    (unsigned long long)sst.st_dev == sh->stdin_dev &&
		    (unsigned long long)sst.st_ino == sh->stdin_ino) {
			off_t now = lseek(0, 0, SEEK_CUR);
			if (now >= 0 && now != want) {
				/* a command read on from the script's input: go on from there */
				sh->stdin_moved = true;
				sh->stdin_off = now;
				sh->stdin_line = sline;
				break;
			}
		}
	}
	if (!ran)
		st = sh->jump == J_NONE ? 0 : sh->status;
	parser_free(p);
	sh->call_depth--;
	sh->script_name = saved_name;
	return st;
}

int
sh_read_script_fd(int fd, char **out, size_t *len)
{
	struct sbuf b = {0};
	char buf[65536];
	for (;;) {
		ssize_t r = read(fd, buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			sb_free(&b);
			return -errno;
		}
		if (r == 0)
			break;
		if (b.len + (size_t)r > SH_MAX_SCRIPT) {
			sb_free(&b);
			return -EFBIG;
		}
		sb_addn(&b, buf, (size_t)r);
	}
	*len = b.len;
	*out = sb_take(&b);
	return 0;
}

void
sh_stdin_note(struct sh_shell *sh)
{
	struct stat sst;
	off_t off0 = lseek(0, 0, SEEK_CUR);
	if (off0 >= 0 && fstat(0, &sst) == 0 && S_ISREG(sst.st_mode)) {
		sh->stdin_off = off0;
		sh->stdin_dev = (unsigned long long)sst.st_dev;
		sh->stdin_ino = (unsigned long long)sst.st_ino;
	}
}

int
exec_stdin_script(struct sh_shell *sh, char **text, size_t len)
{
	if (sh->stdin_ino)
		sh->stdin_text = *text;
	int st = exec_text(sh, *text, len, 1, NULL);
	while (sh->stdin_moved && st != -2 && sh->jump == J_NONE) {
		/* a command moved fd 0's offset: the script goes on from there */
		sh->stdin_moved = false;
		free(*text);
		*text = NULL;
		len = 0;
		int prev = sh->status;
		if (lseek(0, (off_t)sh->stdin_off, SEEK_SET) < 0 ||
		    sh_read_script_fd(0, text, &len) < 0 || !*text || len == 0) {
			st = prev; /* nothing left: the last command's status */
			break;
		}
		sh->stdin_text = *text;
		st = exec_text(sh, *text, len, sh->stdin_line, NULL);
	}
	sh->stdin_text = NULL;
	return st;
}

bool
sh_decl_raw(struct sh_shell *sh, const char *a)
{
	for (size_t i = 0; i < sh->ndecl_raw; i++)
		if (sh->decl_raw[i] == a)
			return true;
	return false;
}

int
sh_assign_word(struct sh_shell *sh, const char *w, int flags)
{
	return do_assign(sh, w, flags);
}
