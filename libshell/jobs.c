/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jobs.c — the shell's own jobs, by number: `jobs`, `fg`, `bg` and the
 * `%N` / `%%` / `%+` / `%-` job specifications `kill` and `wait` take
 * (docs/box-sh.1.md "Jobs"). A job is a background command (`cmd &`), one
 * entry of the interpreter's job list (sh->jobs, exec.c); this file gives
 * each a number, the first free one, and the text of the line that started
 * it (the interactive loop says which line runs: jobs_line), in a table of
 * its own keyed by pid, so the job list itself stays exec.c's.
 *
 * There is no terminal job control: box-shell is not in the terminal's
 * foreground process group (docs/box-shell.8.md), so no job is ever stopped
 * by Ctrl-Z. `fg` waits for a job as for a foreground command (Ctrl-C, which
 * reaches this process as the SIGINT the alias forwards, is passed on to the
 * job's process group); `bg` continues a job stopped by a signal (SIGCONT).
 *
 * Trusts: the interpreter's job list; the arguments are checked.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sh.h"

#define JOBS_MAX 1024 /* numbered at once; more are run, not numbered */

struct jobinfo {
	pid_t pid;
	int num;
	char *text;
	bool stopped;
};

static struct jobinfo table[JOBS_MAX];
static size_t n_table;
static char *line_text;
static int current, previous; /* %+ and %- */

static void jobs_sync(struct sh_shell *sh);

void
jobs_line(struct sh_shell *sh, const char *text, size_t len)
{
	if (!text) {
		jobs_sync(sh);
		return;
	}
	while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	free(line_text);
	line_text = xmalloc(len + 1);
	memcpy(line_text, text, len);
	line_text[len] = '\0';
}

static struct bgjob *
job_of(struct sh_shell *sh, pid_t pid)
{
	for (struct bgjob *j = sh->jobs; j; j = j->next)
		if (j->pid == pid)
			return j;
	return NULL;
}

/* Forget the jobs the list no longer holds; number the new ones, oldest first. */
static void
jobs_sync(struct sh_shell *sh)
{
	size_t o = 0;
	for (size_t i = 0; i < n_table; i++) {
		if (job_of(sh, table[i].pid))
			table[o++] = table[i];
		else
			free(table[i].text);
	}
	n_table = o;
	/* The list is newest first: number from its end. */
	size_t n = 0;
	for (struct bgjob *j = sh->jobs; j; j = j->next)
		n++;
	struct bgjob **v = xmalloc((n ? n : 1) * sizeof(*v));
	size_t k = 0;
	for (struct bgjob *j = sh->jobs; j; j = j->next)
		v[k++] = j;
	for (size_t i = n; i-- > 0;) {
		bool known = false;
		for (size_t t = 0; t < n_table && !known; t++)
			known = table[t].pid == v[i]->pid;
		if (known || n_table >= JOBS_MAX)
			continue;
		int num = 1;
		for (bool taken = true; taken;) {
			taken = false;
			for (size_t t = 0; t < n_table; t++)
				if (table[t].num == num) {
					taken = true;
					num++;
				}
		}
		table[n_table++] = (struct jobinfo){ .pid = v[i]->pid, .num = num,
						     .text = xstrdup(line_text ? line_text : "") };
		previous = current;
		current = num;
	}
	free(v);
	/* Ended jobs are seen now (not reaped by anyone else: exec.c waits by pid). */
	for (size_t i = 0; i < n_table; i++) {
		struct bgjob *j = job_of(sh, table[i].pid);
		int st;
		if (!j->done) {
			pid_t r = waitpid(j->pid, &st, WNOHANG | WUNTRACED | WCONTINUED);
			if (r == j->pid && WIFSTOPPED(st))
				table[i].stopped = true;
			else if (r == j->pid && WIFCONTINUED(st))
				table[i].stopped = false;
			else if (r == j->pid) {
				j->done = true;
				j->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			}
		}
	}
}

static struct jobinfo *
by_num(int num)
{
	for (size_t i = 0; i < n_table; i++)
		if (table[i].num == num)
			return &table[i];
	return NULL;
}

/* SPEC (%N, %%, %+, %-, %) to its job; NULL after a message naming WHO. */
static struct jobinfo *
job_spec(struct sh_shell *sh, const char *who, const char *spec)
{
	jobs_sync(sh);
	struct jobinfo *ji = NULL;
	if (!spec || !strcmp(spec, "%") || !strcmp(spec, "%%") || !strcmp(spec, "%+"))
		ji = by_num(current);
	else if (!strcmp(spec, "%-"))
		ji = by_num(previous);
	else if (spec[0] == '%' && spec[1] >= '0' && spec[1] <= '9') {
		char *e;
		long n = strtol(spec + 1, &e, 10);
		if (!*e && n > 0 && n <= JOBS_MAX)
			ji = by_num((int)n);
	} else if (spec[0] != '%') {
		char *e;
		long pid = strtol(spec, &e, 10);
		for (size_t i = 0; !*e && i < n_table && !ji; i++)
			if (table[i].pid == pid)
				ji = &table[i];
	}
	if (!ji && (!spec || spec[0] == '%'))
		ji = NULL, sh_err(sh, "%s: %s: no such job", who, spec ? spec : "current");
	else if (!ji)
		sh_err(sh, "%s: %s: no such job", who, spec);
	return ji;
}

pid_t
jobs_pid(struct sh_shell *sh, const char *who, const char *spec)
{
	struct jobinfo *ji = job_spec(sh, who, spec);
	return ji ? ji->pid : -1;
}

static const char *
state_of(struct sh_shell *sh, struct jobinfo *ji, char *buf, size_t len)
{
	struct bgjob *j = job_of(sh, ji->pid);
	if (j->done && j->status == 0)
		return "Done";
	if (j->done && j->status > 128)
		snprintf(buf, len, "Killed by signal %d", j->status - 128);
	else if (j->done)
		snprintf(buf, len, "Exit %d", j->status);
	else
		return ji->stopped ? "Stopped" : "Running";
	return buf;
}

/* jobs [-l|-p]: the jobs, oldest first; a finished one is shown once, then forgotten. */
int
b_jobs(struct sh_shell *sh, int argc, char **argv)
{
	bool pids = false, longf = false;
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "-p"))
			pids = true;
		else if (!strcmp(argv[i], "-l"))
			longf = true;
		else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else {
			sh_err(sh, "jobs: %s: invalid option\njobs: usage: jobs [-lp] [jobspec ...]",
			       argv[i]);
			return 2;
		}
	}
	jobs_sync(sh);
	int st = 0;
	for (int num = 1; num <= JOBS_MAX; num++) {
		struct jobinfo *ji = by_num(num);
		if (!ji)
			continue;
		if (i < argc) {
			bool want = false;
			for (int k = i; k < argc && !want; k++)
				want = job_spec(sh, "jobs", argv[k]) == ji;
			if (!want)
				continue;
		}
		char buf[160], sb[40];
		if (pids)
			snprintf(buf, sizeof buf, "%d\n", (int)ji->pid);
		else if (longf)
			snprintf(buf, sizeof buf, "[%d]%c %d %-22s", num,
				 num == current ? '+' : num == previous ? '-' : ' ', (int)ji->pid,
				 state_of(sh, ji, sb, sizeof sb));
		else
			snprintf(buf, sizeof buf, "[%d]%c  %-24s", num,
				 num == current ? '+' : num == previous ? '-' : ' ',
				 state_of(sh, ji, sb, sizeof sb));
		bi_outs(1, buf);
		if (!pids) {
			bi_outs(1, ji->text);
			bi_outs(1, "\n");
		}
	}
	/* A finished job is reported once: drop it from the list (its status was shown). */
	for (struct bgjob **pp = &sh->jobs; *pp;) {
		struct bgjob *j = *pp;
		if (j->done && !pids) {
			*pp = j->next;
			free(j);
		} else
			pp = &j->next;
	}
	jobs_sync(sh);
	return st;
}

/* fg [JOB]: wait for it in the foreground; its status is fg's. */
int
b_fg(struct sh_shell *sh, int argc, char **argv)
{
	struct jobinfo *ji = job_spec(sh, "fg", argc > 1 ? argv[1] : NULL);
	if (!ji)
		return 1;
	pid_t pid = ji->pid;
	bi_outs(2, ji->text);
	bi_outs(2, "\n");
	bi_flush();
	struct bgjob *j = job_of(sh, pid);
	if (ji->stopped) {
		(void)kill(-pid, SIGCONT);
		(void)kill(pid, SIGCONT);
	}
	int st = j->done ? j->status : -1;
	bool sent = false;
	while (st < 0) {
		int ws;
		pid_t r = waitpid(pid, &ws, 0);
		if (r == pid) {
			st = WIFEXITED(ws) ? WEXITSTATUS(ws) : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : 1;
			break;
		}
		if (r < 0 && errno == EINTR) {
			/* Ctrl-C: the job is in the foreground now; pass it on (once). */
			if (sh->interrupted && !sent) {
				(void)kill(-pid, SIGINT);
				(void)kill(pid, SIGINT);
				sent = true;
			}
			sh_check_traps(sh);
			continue;
		}
		st = 127;
		break;
	}
	for (struct bgjob **pp = &sh->jobs; *pp; pp = &(*pp)->next)
		if ((*pp)->pid == pid) {
			struct bgjob *dead = *pp;
			*pp = dead->next;
			free(dead);
			break;
		}
	jobs_sync(sh);
	return st;
}

/* bg [JOB...]: continue a stopped job in the background. */
int
b_bg(struct sh_shell *sh, int argc, char **argv)
{
	int st = 0;
	for (int i = 1; i < argc || i == 1; i++) {
		struct jobinfo *ji = job_spec(sh, "bg", i < argc ? argv[i] : NULL);
		if (!ji) {
			st = 1;
			if (i >= argc)
				break;
			continue;
		}
		(void)kill(-ji->pid, SIGCONT);
		(void)kill(ji->pid, SIGCONT);
		ji->stopped = false;
		char buf[32];
		snprintf(buf, sizeof buf, "[%d]%c ", ji->num, ji->num == current ? '+' : ' ');
		bi_outs(1, buf);
		bi_outs(1, ji->text);
		bi_outs(1, "\n");
		if (i >= argc)
			break;
	}
	return st;
}

/*
 * disown [-a] [-r] [-h] [JOB…]: the shell forgets the jobs — `jobs` no longer lists them and
 * `wait` no longer waits for them; they run on. -a: every job; -r: only running ones; -h:
 * keep them (box-shell sends no SIGHUP to its jobs at exit, so there is nothing to spare).
 */
int
b_disown(struct sh_shell *sh, int argc, char **argv)
{
	bool all = false, running = false, keep = false;
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		for (const char *o = argv[i] + 1; *o; o++) {
			if (*o == 'a')
				all = true;
			else if (*o == 'r')
				running = true;
			else if (*o == 'h')
				keep = true;
			else {
				sh_err(sh, "disown: -%c: invalid option\ndisown: usage: disown [-h] [-ar] "
					   "[jobspec ... | pid ...]", *o);
				return 2;
			}
		}
	}
	jobs_sync(sh);
	int st = 0;
	pid_t want[JOBS_MAX];
	size_t n_want = 0;
	if (all || (i == argc && running)) {
		for (size_t t = 0; t < n_table && n_want < JOBS_MAX; t++)
			want[n_want++] = table[t].pid;
	} else if (i == argc) {
		struct jobinfo *ji = job_spec(sh, "disown", NULL);
		if (!ji)
			return 1;
		want[n_want++] = ji->pid;
	} else {
		for (; i < argc && n_want < JOBS_MAX; i++) {
			struct jobinfo *ji = job_spec(sh, "disown", argv[i]);
			if (ji)
				want[n_want++] = ji->pid;
			else
				st = 1;
		}
	}
	if (keep)
		return st;
	for (size_t w = 0; w < n_want; w++) {
		for (struct bgjob **pp = &sh->jobs; *pp; pp = &(*pp)->next) {
			struct bgjob *j = *pp;
			if (j->pid != want[w] || (running && j->done))
				continue;
			*pp = j->next;
			free(j);
			break;
		}
	}
	jobs_sync(sh);
	return st;
}
