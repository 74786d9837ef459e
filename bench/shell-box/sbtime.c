/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sbtime.c — the timer of bench/shell-box: runs commands N times each with fork+execve and
 * prints the wall time of every run's round trip (fork to reaped), so the same program measures
 * `bash -c true` inside a box (where bash is box's shell alias) and outside one (real bash),
 * with no interpreter's start-up in between. Inside a box it is the agent itself.
 *
 *   sbtime --plan FILE     FILE: one workload per line, fields separated by tabs:
 *                          NAME  N  OUT  ARGV0  ARGV1 ...
 *                          OUT: "-" (stdout to /dev/null) or a file that gets the stdout of
 *                          the last run (stderr always goes to sbtime's stderr)
 *                          ARGV0 "@alias": no process is started; the alias's own code
 *                          (box-alias/alias.c, alias_main) runs in sbtime with ARGV1...,
 *                          on sbtime's fds 0-2 (0 and 1 from /dev/null or OUT), and only its
 *                          call is timed: the alias's round trip (connect, ShellOpen with
 *                          the fds, box-shell runs the command, ShellExit) without the launch
 *                          of a process, which no shell can avoid and the machine prices.
 *                          "@alias:US": the same with US microseconds between calls (not
 *                          timed): each call finds the box at rest, as an agent's commands do,
 *                          instead of sharing the CPUs with the last session's teardown
 *   sbtime NAME N CMD...   one workload from the command line (stdout to /dev/null)
 *
 * For each workload it prints one line:
 *   NAME n=N fails=F min_us=… p50_us=… p90_us=… max_us=… status=S
 * (S: the last run's exit status; F: runs whose status differs from the first run's).
 * Trusts: nothing; it is a benchmark tool. Its inputs are the benchmark's own files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alias.h"

#define SBTIME_RUNS_MAX 100000
#define SBTIME_ARGS_MAX 64
#define SBTIME_LINE_MAX 8192

extern char **environ;

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One run, its wall time in *us: the status (0-255, 128+signal), or -1 when it could not start. */
static int
run_once(char *const argv[], const char *out, uint64_t *us)
{
	uint64_t a = now_us();
	pid_t pid;
	int st;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
			     : open("/dev/null", O_WRONLY | O_CLOEXEC);
		int in = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (fd < 0 || in < 0 || dup2(fd, 1) < 0 || dup2(in, 0) < 0)
			_exit(125);
		execve(argv[0], argv, environ);
		fprintf(stderr, "sbtime: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	*us = now_us() - a;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * One in-process run of the alias (ARGV0 "@alias"): fds 0 and 1 are /dev/null (1: OUT) for
 * the call and sbtime's own again after it; only alias_main is timed. Its status, or -1.
 */
static int
run_alias(char *const argv[], const char *out, uint64_t *us)
{
	int argc = 0;
	int saved[2] = { fcntl(0, F_DUPFD_CLOEXEC, 3), fcntl(1, F_DUPFD_CLOEXEC, 3) };
	int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int fd = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
		     : open("/dev/null", O_WRONLY | O_CLOEXEC);
	int status = -1;

	while (argv[argc + 1])
		argc++;
	fflush(stdout);
	if (saved[0] >= 0 && saved[1] >= 0 && in >= 0 && fd >= 0 && dup2(in, 0) == 0 &&
	    dup2(fd, 1) == 1) {
		uint64_t a = now_us();

		status = alias_main(argc, (char **)argv + 1, environ);
		*us = now_us() - a;
	}
	if ((saved[0] >= 0 && dup2(saved[0], 0) < 0) || (saved[1] >= 0 && dup2(saved[1], 1) < 0))
		status = -1;
	int fds[4] = { saved[0], saved[1], in, fd };
	for (int k = 0; k < 4; k++)
		if (fds[k] >= 0)
			close(fds[k]);
	return status;
}

static int
workload(const char *name, long n, const char *out, char *const argv[])
{
	uint64_t *t;
	int first = 0, last = 0;
	long fails = 0;

	if (n < 1 || n > SBTIME_RUNS_MAX) {
		fprintf(stderr, "sbtime: %s: N must be 1-%d\n", name, SBTIME_RUNS_MAX);
		return -1;
	}
	t = calloc((size_t)n, sizeof(*t));
	if (!t)
		return -1;
	bool in_process = strncmp(argv[0], "@alias", 6) == 0;
	long pace_us = 0;
	if (in_process && argv[0][6]) {
		char *end = NULL;
		if (argv[0][6] == ':')
			pace_us = strtol(argv[0] + 7, &end, 10);
		if (!end || end == argv[0] + 7 || *end || pace_us < 0 || pace_us > 1000000) {
			fprintf(stderr, "sbtime: %s: %s: want @alias or @alias:US (US 0-1000000)\n",
				name, argv[0]);
			free(t);
			return -1;
		}
	}
	for (long i = 0; i < n; i++) {
		/* Only the last run's stdout is kept: the others go to /dev/null. */
		const char *o = i == n - 1 ? out : NULL;
		t[i] = 0;
		if (pace_us > 0) {
			struct timespec gap = { pace_us / 1000000, (pace_us % 1000000) * 1000 };
			while (nanosleep(&gap, &gap) < 0 && errno == EINTR)
				;
		}
		last = in_process ? run_alias(argv, o, &t[i]) : run_once(argv, o, &t[i]);
		if (i == 0)
			first = last;
		else if (last != first)
			fails++;
	}
	qsort(t, (size_t)n, sizeof(*t), cmp_u64);
	printf("%s n=%ld fails=%ld min_us=%llu p50_us=%llu p90_us=%llu max_us=%llu status=%d\n", name,
	       n, fails, (unsigned long long)t[0], (unsigned long long)t[n / 2],
	       (unsigned long long)t[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1],
	       (unsigned long long)t[n - 1], last);
	fflush(stdout);
	free(t);
	return 0;
}

static int
run_plan(const char *path)
{
	char line[SBTIME_LINE_MAX];
	FILE *f = fopen(path, "re");
	int rc = 0;

	if (!f) {
		fprintf(stderr, "sbtime: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *fields[SBTIME_ARGS_MAX + 4];
		int nf = 0;
		char *save = NULL;

		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		for (char *p = strtok_r(line, "\t", &save); p && nf < SBTIME_ARGS_MAX + 3;
		     p = strtok_r(NULL, "\t", &save))
			fields[nf++] = p;
		if (nf < 4) {
			fprintf(stderr, "sbtime: %s: a line needs NAME N OUT ARGV0...\n", path);
			rc = 1;
			continue;
		}
		fields[nf] = NULL;
		if (workload(fields[0], strtol(fields[1], NULL, 10),
			     strcmp(fields[2], "-") == 0 ? NULL : fields[2], fields + 3) < 0)
			rc = 1;
	}
	fclose(f);
	return rc;
}

int
main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--plan") == 0)
		return run_plan(argv[2]);
	if (argc >= 4)
		return workload(argv[1], strtol(argv[2], NULL, 10), NULL, argv + 3) < 0;
	fprintf(stderr, "usage: sbtime --plan FILE | sbtime NAME N CMD...\n");
	return 2;
}
