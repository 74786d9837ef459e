/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wrappers.c — command wrappers and nested shells:
 * env timeout nice nohup time stdbuf xargs, each decided as a simple
 * command by the caller, whose child command is run through exec_argv and
 * so decided as its own simple command; and `sh bash dash -c|-s|FILE`,
 * interpreted in process (a fork with a fresh shell state) so that every
 * command inside is judged on its own — a real shell started as a tool
 * would escape every decision.
 *
 * Trusts: nothing in the arguments or in xargs' input (items are capped at
 * SH_MAX_VALUE bytes, a command line at SH_MAX_EXPANSION).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sh.h"

int sh_set_options(struct sh_shell *sh, int argc, char **argv, int *consumed);
int read_script(struct sh_shell *sh, const char *path, char **out, size_t *len, int *err);

/* GNU-style duration: N[.N][smhd] in ms; -1 on error. */
long sh_parse_duration(const char *s);
long
sh_parse_duration(const char *s)
{
	char *e;
	errno = 0;
	double v = strtod(s, &e);
	if (e == s || errno || v < 0)
		return -1;
	double mult = 1000;
	if (*e == 's')
		e++;
	else if (*e == 'm') {
		mult = 60000;
		e++;
	} else if (*e == 'h') {
		mult = 3600000;
		e++;
	} else if (*e == 'd') {
		mult = 86400000;
		e++;
	}
	if (*e)
		return -1;
	double ms = v * mult;
	if (ms > 1e12)
		ms = 1e12;
	return (long)ms;
}

/* ---- nested shells ---- */

int
run_nested_shell(struct sh_shell *sh, int argc, char **argv)
{
	const char *cmd = NULL;
	bool from_stdin = false;
	int i = 1;
	/* a forked copy's last command (exec.c): the nested shell is this copy */
	bool in_place = sh->exec_in_place && sh->is_child;
	bool login = false, noprofile = false;
	sh->exec_in_place = false;
	struct sh_shell *child_opts = sh_new(NULL, NULL, argv[0], 0, NULL);
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if ((a[0] != '-' && a[0] != '+') || !a[1])
			break;
		if (strcmp(a, "-l") == 0 || strcmp(a, "--login") == 0) {
			login = true;
			continue;
		}
		if (strcmp(a, "--noprofile") == 0) {
			noprofile = true;
			continue;
		}
		if (strcmp(a, "--norc") == 0 || strcmp(a, "--posix") == 0)
			continue;
		if (a[1] == '-') {
			sh_err(sh, "%s: %s: invalid option", argv[0], a);
			sh_free(child_opts);
			return 2;
		}
		/* c and s among the letters */
		char letters[64];
		size_t k = 0;
		letters[k++] = a[0];
		bool has_o = false;
		for (const char *p = a + 1; *p && k < 60; p++) {
			if (*p == 'c')
				cmd = "";
			else if (*p == 's')
				from_stdin = true;
			else if (*p == 'l')
				login = true;
			else if (*p == 'i') {
			} else {
				if (*p == 'o')
					has_o = true;
				letters[k++] = *p;
			}
		}
		letters[k] = 0;
		if (k > 1) {
			char *v[3] = {letters, NULL, NULL};
			int n = 1;
			if (has_o && i + 1 < argc)
				v[n++] = argv[++i];
			int used;
			if (sh_set_options(child_opts, n, v, &used) < 0) {
				sh_free(child_opts);
				return 2;
			}
		}
	}
	if (cmd) {
		if (i >= argc) {
			sh_err(sh, "%s: -c: option requires an argument", argv[0]);
			sh_free(child_opts);
			return 2;
		}
		cmd = argv[i++];
	}
	char *text = NULL;
	size_t len = 0;
	const char *arg0 = argv[0];
	if (!cmd && !from_stdin && i < argc) {
		int err;
		if (read_script(sh, argv[i], &text, &len, &err) < 0) {
			sh_err(sh, "%s: %s", argv[i], strerror(err));
			sh_free(child_opts);
			return err == ENOENT ? 127 : 126;
		}
		arg0 = argv[i++];
	} else if (cmd) {
		if (i < argc)
			arg0 = argv[i++];
	} else {
		from_stdin = true;
	}
	pid_t pid = 0;
	if (in_place) {
		bi_flush();
		if (sh->decider)
			sh_decider_flush(sh->decider);
	} else {
		pid = sh_fork(sh);
	}
	if (pid < 0) {
		free(text);
		sh_free(child_opts);
		return 126;
	}
	if (pid == 0) {
		bool stdin_script = from_stdin && !cmd && !text;
		if (stdin_script) {
			/* (this child's copy of the outer shell notes fd 0 for n) */
			sh->stdin_ino = 0;
			sh_stdin_note(sh);
			int r = sh_read_script_fd(0, &text, &len);
			if (r == -EFBIG) {
				sh_err(sh, "%s: script too large (max %u bytes)", argv[0], SH_MAX_SCRIPT);
				_exit(2);
			}
			if (r < 0) {
				text = xstrdup("");
				len = 0;
			}
		}
		struct sh_shell *n = sh_new(sh->decider, sh_environ(sh), arg0, argc - i, argv + i);
		n->script_fds = sh->script_fds; /* the fds it inherits, as a real sh's */
		n->cwd = xstrdup(sh->cwd);
		n->root_fd = sh->root_fd;
		n->home = sh->home ? xstrdup(sh->home) : NULL;
		/* host programs the way the outer shell runs them (the daemon: through boxd) */
		n->host_run = sh->host_run;
		n->host_check = sh->host_check;
		n->host_ctx = sh->host_ctx;
		n->is_child = true;
		n->login_shell = login;
		n->opt_e = child_opts->opt_e;
		n->opt_u = child_opts->opt_u;
		n->opt_x = child_opts->opt_x;
		n->opt_f = child_opts->opt_f;
		n->opt_C = child_opts->opt_C;
		n->opt_n = child_opts->opt_n;
		n->opt_pipefail = child_opts->opt_pipefail;
		n->opt_a = child_opts->opt_a;
		/* sh and dash expand aliases in scripts; bash does not */
		const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
		n->expand_aliases = strcmp(base, "bash") != 0;
		n->dash_errors = strcmp(base, "bash") != 0;
		n->command_string = cmd != NULL;
		n->rootpid = getpid();
		var_set(n, "PWD", n->cwd, V_EXPORT);
		for (int s = 1; s < 65; s++)
			if (sh->traps[s] && sh->traps[s][0])
				signal(s, SIG_DFL);
		sh_current = n;
		sh_startup(n, login && !noprofile);
		if (n->jump == J_EXIT) /* the profile's own `exit` */
			sh_exit(n, n->jump_n);
		int st;
		if (stdin_script) {
			n->stdin_off = sh->stdin_off;
			n->stdin_dev = sh->stdin_dev;
			n->stdin_ino = sh->stdin_ino;
			st = exec_stdin_script(n, &text, len);
		} else {
			const char *t = cmd ? cmd : text;
			size_t tl = cmd ? strlen(cmd) : len;
			st = exec_text(n, t, tl, 1, NULL);
		}
		if (st == -2)
			st = 2;
		if (n->jump == J_EXIT)
			st = n->jump_n;
		sh_exit(n, st);
	}
	free(text);
	sh_free(child_opts);
	return sh_wait_pid(sh, pid);
}

/* ---- env ---- */

static int
w_env(struct sh_shell *sh, int argc, char **argv)
{
	int i = 1;
	bool clear = false, nul = false;
	struct strv unsets = {0};
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-i") == 0 || strcmp(a, "-") == 0 || strcmp(a, "--ignore-environment") == 0)
			clear = true;
		else if (strcmp(a, "-0") == 0 || strcmp(a, "--null") == 0)
			nul = true; /* GNU env: each NAME=VALUE ends with a NUL (values may hold newlines) */
		else if (strcmp(a, "-u") == 0 && i + 1 < argc)
			strv_add(&unsets, xstrdup(argv[++i]));
		else if (strncmp(a, "-u", 2) == 0 && a[2])
			strv_add(&unsets, xstrdup(a + 2));
		else if (strncmp(a, "--unset=", 8) == 0)
			strv_add(&unsets, xstrdup(a + 8));
		else if (strcmp(a, "--") == 0) {
			i++;
			break;
		} else if (a[0] == '-' && a[1]) {
			sh_errline(sh, 0, "env: invalid option -- '%c'", a[1]);
			strv_free(&unsets);
			return 125;
		} else
			break;
	}
	int first_assign = i;
	while (i < argc && strchr(argv[i], '=') && argv[i][0] != '=')
		i++;
	if (nul && i < argc) {
		sh_errline(sh, 0, "env: cannot specify --null (-0) with command");
		strv_free(&unsets);
		return 125;
	}
	pid_t pid = sh_fork(sh);
	if (pid < 0) {
		strv_free(&unsets);
		return 125;
	}
	if (pid == 0) {
		if (clear)
			for (int h = 0; h < 256; h++)
				for (struct var *v = sh->vars[h]; v; v = v->next)
					v->flags &= ~V_EXPORT;
		for (size_t k = 0; k < unsets.n; k++) {
			struct var *v = var_get(sh, unsets.v[k]);
			if (v)
				v->flags &= ~V_EXPORT;
		}
		for (int k = first_assign; k < i; k++) {
			char *eq = strchr(argv[k], '=');
			char *nm = xstrndup(argv[k], (size_t)(eq - argv[k]));
			if (is_name(nm, strlen(nm))) {
				struct var *v = var_get(sh, nm);
				if (v)
					v->flags &= ~V_READONLY;
				var_set(sh, nm, eq + 1, V_EXPORT);
			} else {
				/* not a shell name: still in the environment */
				var_set(sh, nm, eq + 1, V_EXPORT);
			}
			free(nm);
		}
		sh->env_dirty = true;
		int st;
		if (i >= argc) {
			char **e = sh_environ(sh);
			for (; *e; e++) {
				bi_outs(1, *e);
				bi_out(1, nul ? "" : "\n", 1);
			}
			st = 0;
		} else {
			st = exec_argv(sh, argc - i, argv + i, true, -1, -1, -1);
		}
		sh_child_exit(sh, st);
	}
	strv_free(&unsets);
	return sh_wait_pid(sh, pid);
}

/* ---- timeout ---- */

static int
sig_by_name(const char *s)
{
	static const struct {
		const char *n;
		int s;
	} t[] = {{"TERM", SIGTERM}, {"KILL", SIGKILL}, {"INT", SIGINT}, {"HUP", SIGHUP},
		 {"QUIT", SIGQUIT}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"ALRM", SIGALRM}};
	if (isdigit((unsigned char)s[0]))
		return atoi(s);
	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (strcasecmp(t[i].n, s) == 0)
			return t[i].s;
	return -1;
}

static int
pidfd_open_(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* Wait for pid up to ms (-1: forever). 1: exited (status in *st), 0: timeout. */
int sh_wait_timeout(pid_t pid, long ms, int *st);
int
sh_wait_timeout(pid_t pid, long ms, int *st)
{
	int pfd = pidfd_open_(pid);
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		int ws;
		pid_t r = waitpid(pid, &ws, WNOHANG);
		if (r == pid) {
			*st = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
			if (pfd >= 0)
				close(pfd);
			return 1;
		}
		long left = -1;
		if (ms >= 0) {
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			long el = (now.tv_sec - start.tv_sec) * 1000 +
				  (now.tv_nsec - start.tv_nsec) / 1000000;
			if (el >= ms) {
				if (pfd >= 0)
					close(pfd);
				return 0;
			}
			left = ms - el;
		}
		if (pfd >= 0) {
			struct pollfd p = {.fd = pfd, .events = POLLIN};
			poll(&p, 1, left < 0 ? -1 : (int)(left > 1000000 ? 1000000 : left));
		} else {
			struct timespec ts = {0, 10 * 1000000};
			nanosleep(&ts, NULL);
		}
	}
}

/*
 * Up to MS for every process of group PGID to end (they were sent SIGTERM:
 * box-sh's pipeline stages write their buffered decision lines as they
 * die), reaping whatever child of ours ends meanwhile. 1: the group is gone.
 */
int sh_wait_group(pid_t pgid, long ms);
int
sh_wait_group(pid_t pgid, long ms)
{
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (kill(-pgid, 0) < 0 && errno == ESRCH)
			return 1;
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long el = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
		if (el >= ms)
			return 0;
		struct timespec ts = {0, 5 * 1000000};
		nanosleep(&ts, NULL);
	}
}

static int
w_timeout(struct sh_shell *sh, int argc, char **argv)
{
	int i = 1;
	int sig = SIGTERM;
	long kill_after = -1;
	bool preserve = false;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (strcmp(a, "-s") == 0 && i + 1 < argc)
			sig = sig_by_name(argv[++i]);
		else if (strncmp(a, "--signal=", 9) == 0)
			sig = sig_by_name(a + 9);
		else if (strcmp(a, "-k") == 0 && i + 1 < argc)
			kill_after = sh_parse_duration(argv[++i]);
		else if (strncmp(a, "--kill-after=", 13) == 0)
			kill_after = sh_parse_duration(a + 13);
		else if (strcmp(a, "--preserve-status") == 0)
			preserve = true;
		else if (strcmp(a, "--foreground") == 0 || strcmp(a, "-v") == 0 ||
			 strcmp(a, "--verbose") == 0) {
		} else {
			sh_errline(sh, 0, "timeout: invalid option -- '%s'", a + 1);
			return 125;
		}
		if (sig < 0) {
			sh_errline(sh, 0, "timeout: invalid signal");
			return 125;
		}
	}
	if (i + 1 >= argc) {
		sh_errline(sh, 0, "timeout: missing operand");
		return 125;
	}
	long ms = sh_parse_duration(argv[i]);
	if (ms < 0) {
		sh_errline(sh, 0, "timeout: invalid time interval '%s'", argv[i]);
		return 125;
	}
	i++;
	pid_t pid = sh_fork(sh);
	if (pid < 0)
		return 125;
	if (pid == 0) {
		setpgid(0, 0);
		/* SIGKILL gives no process of this tree the chance to write its
		 * buffered decision lines: write them at once */
		if (sig == SIGKILL)
			sh_decider_write_through = 1;
		int st = exec_argv(sh, argc - i, argv + i, true, -1, -1, -1);
		sh_child_exit(sh, st);
	}
	setpgid(pid, pid);
	int st;
	if (sh_wait_timeout(pid, ms == 0 ? -1 : ms, &st))
		return st;
	kill(-pid, sig);
	kill(pid, sig);
	if (kill_after >= 0) {
		if (!sh_wait_timeout(pid, kill_after, &st)) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			sh_wait_timeout(pid, -1, &st);
			return preserve ? 128 + SIGKILL : 137;
		}
	} else
		sh_wait_timeout(pid, -1, &st);
	return preserve ? st : 124;
}

/* ---- nice nohup stdbuf time ---- */

static int
w_nice(struct sh_shell *sh, int argc, char **argv)
{
	int i = 1;
	long adj = 10;
	if (i < argc && strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
		adj = atol(argv[i + 1]);
		i += 2;
	} else if (i < argc && strncmp(argv[i], "--adjustment=", 13) == 0) {
		adj = atol(argv[i] + 13);
		i++;
	} else if (i < argc && argv[i][0] == '-' && isdigit((unsigned char)argv[i][1])) {
		adj = atol(argv[i] + 1);
		i++;
	}
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (i >= argc) {
		errno = 0;
		int p = getpriority(PRIO_PROCESS, 0);
		char b[32];
		snprintf(b, sizeof b, "%d\n", p);
		bi_outs(1, b);
		return 0;
	}
	pid_t pid = sh_fork(sh);
	if (pid < 0)
		return 125;
	if (pid == 0) {
		errno = 0;
		int cur = getpriority(PRIO_PROCESS, 0);
		if (setpriority(PRIO_PROCESS, 0, cur + (int)adj) < 0)
			sh_errline(sh, 0, "nice: cannot set niceness: %s", strerror(errno));
		int st = exec_argv(sh, argc - i, argv + i, true, -1, -1, -1);
		sh_child_exit(sh, st);
	}
	return sh_wait_pid(sh, pid);
}

static int
w_nohup(struct sh_shell *sh, int argc, char **argv)
{
	int i = 1;
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (i >= argc) {
		sh_errline(sh, 0, "nohup: missing operand");
		return 125;
	}
	pid_t pid = sh_fork(sh);
	if (pid < 0)
		return 125;
	if (pid == 0) {
		signal(SIGHUP, SIG_IGN);
		if (isatty(1)) {
			sh_update_fs(sh, "nohup");
			int fd = sh_fs_open(&sh->fs, "nohup.out", O_WRONLY | O_CREAT | O_APPEND, 0600);
			if (fd >= 0) {
				sh_errline(sh, 0, "nohup: ignoring input and appending output to 'nohup.out'");
				dup2(fd, 1);
				close(fd);
			}
		}
		if (isatty(2))
			dup2(1, 2);
		int st = exec_argv(sh, argc - i, argv + i, true, -1, -1, -1);
		sh_child_exit(sh, st);
	}
	return sh_wait_pid(sh, pid);
}

static int
w_stdbuf(struct sh_shell *sh, int argc, char **argv)
{
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if ((a[1] == 'i' || a[1] == 'o' || a[1] == 'e')) {
			if (!a[2])
				i++;
			continue;
		}
		if (strncmp(a, "--input=", 8) == 0 || strncmp(a, "--output=", 9) == 0 ||
		    strncmp(a, "--error=", 8) == 0)
			continue;
		sh_errline(sh, 0, "stdbuf: invalid option -- '%c'", a[1]);
		return 125;
	}
	if (i >= argc) {
		sh_errline(sh, 0, "stdbuf: missing operand");
		return 125;
	}
	/* builtins and own commands flush per command: nothing to change */
	return exec_argv(sh, argc - i, argv + i, true, -1, -1, -1);
}

static double
tv_sec(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static void
fmt_time(char *b, size_t n, const char *label, double s)
{
	long m = (long)(s / 60);
	snprintf(b, n, "%s\t%ldm%.3fs\n", label, m, s - (double)m * 60);
}

static double
cpu_now(bool user)
{
	struct rusage s, c;
	getrusage(RUSAGE_SELF, &s);
	getrusage(RUSAGE_CHILDREN, &c);
	return user ? tv_sec(s.ru_utime) + tv_sec(c.ru_utime) : tv_sec(s.ru_stime) + tv_sec(c.ru_stime);
}

void
time_start(struct time_mark *m)
{
	clock_gettime(CLOCK_MONOTONIC, &m->wall);
	m->user = cpu_now(true);
	m->sys = cpu_now(false);
}

/* One TIMEFORMAT number (bash's mkfmt): SEC seconds with PREC (0-3) digits of the fraction,
 * truncated, not rounded; LNG: as MmS.FFFs. */
static void
time_fmt_one(struct sbuf *o, double sec, int prec, bool lng)
{
	if (sec < 0)
		sec = 0;
	long ms = (long)(sec * 1000.0);
	long whole = ms / 1000, frac = ms % 1000;
	char num[48];
	if (lng) {
		snprintf(num, sizeof num, "%ldm", whole / 60);
		sb_adds(o, num);
		whole %= 60;
	}
	snprintf(num, sizeof num, "%ld", whole);
	sb_adds(o, num);
	if (prec > 0) {
		sb_addc(o, '.');
		for (int base = 100, k = 0; k < prec; k++, base /= 10) {
			sb_addc(o, (char)('0' + frac / base));
			frac %= base;
		}
	}
	if (lng)
		sb_addc(o, 's');
}

/* The `time` keyword's report on fd 2 in bash's format: -p's POSIX one, else $TIMEFORMAT
 * (set and empty: nothing), else bash's default; %[p][l]R|U|S, %P, %% (execute_cmd.c's
 * print_formatted_time); an unknown % letter is an error and no report. */
void
time_report(struct sh_shell *sh, const struct time_mark *m, bool posix)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	double real = (double)(b.tv_sec - m->wall.tv_sec) + (double)(b.tv_nsec - m->wall.tv_nsec) / 1e9;
	double user = cpu_now(true) - m->user, sys = cpu_now(false) - m->sys;
	const char *fmt = posix ? NULL : var_value(sh, "TIMEFORMAT");
	if (posix)
		fmt = "real %2R\nuser %2U\nsys %2S";
	else if (!fmt)
		fmt = "\nreal\t%3lR\nuser\t%3lU\nsys\t%3lS";
	if (!*fmt)
		return;
	struct sbuf o = {0};
	for (const char *f = fmt; *f; f++) {
		if (*f != '%' || !f[1]) {
			sb_addc(&o, *f);
			continue;
		}
		f++;
		if (*f == '%') {
			sb_addc(&o, '%');
			continue;
		}
		if (*f == 'P') {
			double pct = real > 0 ? (user + sys) * 100.0 / real : 0;
			char num[48];
			snprintf(num, sizeof num, "%.2f", pct);
			sb_adds(&o, num);
			continue;
		}
		int prec = 3;
		bool lng = false;
		if (*f >= '0' && *f <= '9') {
			prec = *f - '0' > 3 ? 3 : *f - '0';
			f++;
		}
		if (*f == 'l') {
			lng = true;
			f++;
		}
		if (*f == 'R' || *f == 'U' || *f == 'S') {
			time_fmt_one(&o, *f == 'R' ? real : *f == 'U' ? user : sys, prec, lng);
			continue;
		}
		sb_free(&o);
		if (*f)
			sh_err(sh, "TIMEFORMAT: `%c': invalid format character", *f);
		else
			sh_err(sh, "TIMEFORMAT: `%%': invalid format character");
		return;
	}
	sb_addc(&o, '\n');
	bi_outs(2, o.s);
	bi_flush();
	sb_free(&o);
}

static int
w_time(struct sh_shell *sh, int argc, char **argv)
{
	int i = 1;
	bool posix = false;
	if (i < argc && strcmp(argv[i], "-p") == 0) {
		posix = true;
		i++;
	}
	struct timespec a, b;
	struct rusage r0s, r0c, r1s, r1c;
	clock_gettime(CLOCK_MONOTONIC, &a);
	getrusage(RUSAGE_SELF, &r0s);
	getrusage(RUSAGE_CHILDREN, &r0c);
	int st = i < argc ? exec_argv(sh, argc - i, argv + i, false, -1, -1, -1) : 0;
	clock_gettime(CLOCK_MONOTONIC, &b);
	getrusage(RUSAGE_SELF, &r1s);
	getrusage(RUSAGE_CHILDREN, &r1c);
	double real = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	double user = tv_sec(r1s.ru_utime) - tv_sec(r0s.ru_utime) + tv_sec(r1c.ru_utime) -
		      tv_sec(r0c.ru_utime);
	double sys = tv_sec(r1s.ru_stime) - tv_sec(r0s.ru_stime) + tv_sec(r1c.ru_stime) -
		     tv_sec(r0c.ru_stime);
	char l1[64], l2[64], l3[64];
	if (posix) {
		snprintf(l1, sizeof l1, "real %.2f\n", real);
		snprintf(l2, sizeof l2, "user %.2f\n", user);
		snprintf(l3, sizeof l3, "sys %.2f\n", sys);
		bi_outs(2, l1);
	} else {
		fmt_time(l1, sizeof l1, "real", real);
		fmt_time(l2, sizeof l2, "user", user);
		fmt_time(l3, sizeof l3, "sys", sys);
		bi_outs(2, "\n");
		bi_outs(2, l1);
	}
	bi_outs(2, l2);
	bi_outs(2, l3);
	bi_flush();
	return st;
}

/* ---- xargs ---- */

static int
xargs_read_item(int fd, bool nul, int delim, struct sbuf *item, bool *eof, bool *toolong,
		char *rbuf, size_t *rpos, size_t *rlen)
{
	/* returns 1 with an item, 0 at EOF */
	bool have = false;
	char quote = 0;
	for (;;) {
		if (*rpos >= *rlen) {
			ssize_t r = read(fd, rbuf, 65536);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				*eof = true;
				if (quote)
					return -2;
				return have ? 1 : 0;
			}
			*rlen = (size_t)r;
			*rpos = 0;
		}
		char c = rbuf[(*rpos)++];
		if (item->len > SH_MAX_VALUE) {
			*toolong = true;
			return -1;
		}
		if (nul || delim >= 0) {
			if ((nul && c == 0) || (!nul && c == (char)delim))
				return 1;
			sb_addc(item, c);
			have = true;
			continue;
		}
		if (quote) {
			if (c == quote)
				quote = 0;
			else if (c == '\n')
				return -2;
			else
				sb_addc(item, c);
			continue;
		}
		if (c == '\'' || c == '"') {
			quote = c;
			have = true;
			continue;
		}
		if (c == '\\') {
			if (*rpos >= *rlen) {
				ssize_t r = read(fd, rbuf, 65536);
				if (r <= 0) {
					*eof = true;
					return have ? 1 : 0;
				}
				*rlen = (size_t)r;
				*rpos = 0;
			}
			sb_addc(item, rbuf[(*rpos)++]);
			have = true;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\n') {
			if (have)
				return 1;
			continue;
		}
		sb_addc(item, c);
		have = true;
	}
}

static char *
replace_all(const char *s, const char *what, const char *with)
{
	struct sbuf b = {0};
	size_t wl = strlen(what);
	if (!wl)
		return xstrdup(s);
	while (*s) {
		const char *f = strstr(s, what);
		if (!f) {
			sb_adds(&b, s);
			break;
		}
		sb_addn(&b, s, (size_t)(f - s));
		sb_adds(&b, with);
		s = f + wl;
	}
	return sb_take(&b);
}

static int
xargs_run(struct sh_shell *sh, struct strv *cmd, bool *stop)
{
	int st = exec_argv(sh, (int)cmd->n, cmd->v, true, -1, -1, -1);
	if (st == 255) {
		sh_errline(sh, 0, "xargs: %s: exited with status 255; aborting", cmd->v[0]);
		*stop = true;
		return 124;
	}
	if (st == 127 || st == 126) {
		*stop = true;
		return st;
	}
	if (st > 128) {
		*stop = true;
		return 125;
	}
	return st ? 123 : 0;
}

static int
w_xargs(struct sh_shell *sh, int argc, char **argv)
{
	bool nul = false, norun_empty = false, trace = false;
	long maxn = -1;
	const char *repl = NULL;
	int delim = -1;
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (strcmp(a, "-0") == 0 || strcmp(a, "--null") == 0)
			nul = true;
		else if (strcmp(a, "-r") == 0 || strcmp(a, "--no-run-if-empty") == 0)
			norun_empty = true;
		else if (strcmp(a, "-t") == 0 || strcmp(a, "--verbose") == 0)
			trace = true;
		else if (strcmp(a, "-n") == 0 && i + 1 < argc)
			maxn = atol(argv[++i]);
		else if (strncmp(a, "-n", 2) == 0 && a[2])
			maxn = atol(a + 2);
		else if (strncmp(a, "--max-args=", 11) == 0)
			maxn = atol(a + 11);
		else if (strcmp(a, "-I") == 0 && i + 1 < argc)
			repl = argv[++i];
		else if (strncmp(a, "-I", 2) == 0 && a[2])
			repl = a + 2;
		else if (strncmp(a, "--replace=", 10) == 0)
			repl = a + 10;
		else if (strcmp(a, "-i") == 0)
			repl = "{}";
		else if (strcmp(a, "-d") == 0 && i + 1 < argc) {
			const char *d = argv[++i];
			delim = d[0] == '\\' && d[1] == 'n' ? '\n' : d[0] == '\\' && d[1] == 't' ? '\t'
											  : (unsigned char)d[0];
		} else if (strcmp(a, "-P") == 0 && i + 1 < argc) {
			if (atol(argv[++i]) != 1) {
				sh_errline(sh, 0, "xargs: -P: only 1 is supported");
				return 1;
			}
		} else if (strcmp(a, "-P1") == 0) {
		} else if (strcmp(a, "--help") == 0) {
			bi_outs(1, "Usage: xargs [-0] [-r] [-t] [-n MAX-ARGS] [-I REPLACE] [-d DELIM] "
				   "[-P 1] [COMMAND [INITIAL-ARGS]...]\n");
			return 0;
		} else {
			sh_errline(sh, 0, "xargs: invalid option -- '%s'", a + 1);
			bi_outs(2, "Usage: xargs [OPTION]... COMMAND [INITIAL-ARGS]...\n");
			return 1;
		}
	}
	struct strv base = {0};
	if (i >= argc)
		strv_add(&base, xstrdup("echo"));
	for (; i < argc; i++)
		strv_add(&base, xstrdup(argv[i]));
	if (repl && delim < 0 && !nul)
		delim = '\n';
	char *rbuf = xmalloc(65536);
	size_t rpos = 0, rlen = 0;
	bool eof = false, toolong = false, stop = false;
	int status = 0;
	struct strv items = {0};
	bool ran = false;
	size_t total = 0;
	for (;;) {
		struct sbuf item = {0};
		int r = xargs_read_item(0, nul, delim, &item, &eof, &toolong, rbuf, &rpos, &rlen);
		if (r == -2) {
			sh_errline(sh, 0, "xargs: unmatched quote; by default quotes are special to "
					  "xargs unless you use the -0 option");
			sb_free(&item);
			status = 1;
			break;
		}
		if (r < 0) {
			sh_errline(sh, 0, "xargs: argument line too long");
			sb_free(&item);
			status = 1;
			break;
		}
		if (r == 1) {
			if (repl) {
				/* -I: one command per line, leading blanks dropped */
				char *it = sb_take(&item);
				char *s = it;
				while (*s == ' ' || *s == '\t')
					s++;
				struct strv cmd = {0};
				for (size_t k = 0; k < base.n; k++)
					strv_add(&cmd, replace_all(base.v[k], repl, s));
				free(it);
				if (trace) {
					for (size_t k = 0; k < cmd.n; k++) {
						bi_outs(2, cmd.v[k]);
						bi_outs(2, k + 1 < cmd.n ? " " : "\n");
					}
					bi_flush();
				}
				int st = xargs_run(sh, &cmd, &stop);
				strv_free(&cmd);
				ran = true;
				if (st > status)
					status = st;
				if (stop)
					break;
				continue;
			}
			total += item.len + 1;
			strv_add(&items, sb_take(&item));
		} else
			sb_free(&item);
		bool flush = (maxn > 0 && (long)items.n >= maxn) || (r == 0 && items.n > 0) ||
			     total > (128u << 10);
		if (flush) {
			struct strv cmd = {0};
			for (size_t k = 0; k < base.n; k++)
				strv_add(&cmd, xstrdup(base.v[k]));
			for (size_t k = 0; k < items.n; k++)
				strv_add(&cmd, xstrdup(items.v[k]));
			strv_free(&items);
			total = 0;
			if (trace) {
				for (size_t k = 0; k < cmd.n; k++) {
					bi_outs(2, cmd.v[k]);
					bi_outs(2, k + 1 < cmd.n ? " " : "\n");
				}
				bi_flush();
			}
			int st = xargs_run(sh, &cmd, &stop);
			strv_free(&cmd);
			ran = true;
			if (st > status)
				status = st;
			if (stop)
				break;
		}
		if (r == 0)
			break;
	}
	if (!ran && !norun_empty && !repl && !stop && status == 0) {
		struct strv cmd = {0};
		for (size_t k = 0; k < base.n; k++)
			strv_add(&cmd, xstrdup(base.v[k]));
		status = xargs_run(sh, &cmd, &stop);
		strv_free(&cmd);
	}
	strv_free(&items);
	strv_free(&base);
	free(rbuf);
	return status;
}

int wrappers_find(const char *name, sh_builtin_fn *fn);
int
wrappers_find(const char *name, sh_builtin_fn *fn)
{
	static const struct {
		const char *n;
		sh_builtin_fn f;
	} w[] = {{"env", w_env},       {"timeout", w_timeout}, {"nice", w_nice},
		 {"nohup", w_nohup},   {"stdbuf", w_stdbuf},   {"time", w_time},
		 {"xargs", w_xargs}};
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
		if (strcmp(w[i].n, name) == 0) {
			*fn = w[i].f;
			return 1;
		}
	return 0;
}
