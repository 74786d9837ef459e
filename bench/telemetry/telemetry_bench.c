/* SPDX-License-Identifier: Apache-2.0 */
/*
 * telemetry_bench.c — what a [telemetry.NAME] kind = otlp target costs box-policyd
 * (docs/box.ini.5.md): Decide throughput through box-policyd (test/policyd/harness.c
 * plays boxd and the gateway's policy channel) without a telemetry target and
 * with one otlp target taking deny, permit and control, whose telemetry channel
 * is read by a sink that discards (a thread here, in box-gateway's place: the
 * gateway's own export runs in another process and is not counted). Each
 * decision of the mix is a permit or a deny, 16 in flight on one channel;
 * N decisions a run, RUNS runs of each kind in pairs whose order alternates
 * (plain first, then otlp first: a machine whose load drifts favours neither);
 * the medians and their ratio are printed, with the target: export costs at
 * most 10% (ratio >= 0.90), and the median of the pairs' own ratios beside it;
 * and box-policyd's own CPU time per decision (/proc/PID/schedstat, nanoseconds
 * on a CPU; /proc/PID/stat's ticks where that is missing), which a loaded
 * machine moves far less than the throughput: the figure to judge a change by,
 * best as the median of the pairs' own ratios (the two runs of a pair see the
 * same load).
 * Usage: telemetry_bench [quick] [runs=N] [only=plain|otlp]
 *   quick: 10x fewer decisions, for smoke tests; runs: pairs (default 7, quick 3);
 *   only: one kind alone, N runs (to profile it: perf record -g -- telemetry_bench only=otlp)
 * Exit status 1 when a run fails (never for the ratio: a loaded machine moves it).
 * Trusts: nothing; it is benchmark code.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define RUNS_MAX 31
#define WINDOW 16

static const char *policy =
	"permit (principal, action == Box::Action::\"net:connect\", resource);\n"
	"@id(\"no_evil\")\n"
	"forbid (principal, action == Box::Action::\"net:connect\", resource)\n"
	"when { context.input.host == \"evil.example.com\" };\n";

static int64_t
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * box-policyd's CPU time so far in nanoseconds: /proc/PID/schedstat's time on a
 * CPU (exact; box-policyd is one thread), else /proc/PID/stat's user + system
 * ticks. -1: unknown.
 */
static int64_t
cpu_ns(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long run;
	(void)snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	FILE *f = fopen(path, "re");
	if (f) {
		int k = fscanf(f, "%llu", &run);
		fclose(f);
		if (k == 1)
			return (int64_t)run;
	}
	(void)snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	unsigned long ut, st;
	/* after "pid (comm)": state, then fields 4..13, then utime (14) and stime (15) */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (int64_t)(ut + st) * (1000000000LL / sysconf(_SC_CLK_TCK));
}

struct sink {
	int fd;
	uint64_t packets, bytes;
};

/* The discarding sink: every packet read and dropped until box-policyd closes its end. */
static void *
sink_run(void *arg)
{
	struct sink *s = arg;
	static char buf[70000];
	for (;;) {
		ssize_t n = recv(s->fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		s->packets++;
		s->bytes += (uint64_t)n;
	}
	close(s->fd);
	return NULL;
}

static Box__DecideRequest *
make_req(const char *host)
{
	Box__DecideRequest *r = calloc(1, sizeof(*r));
	char input[128];
	if (!r)
		abort();
	box__decide_request__init(r);
	r->action = strdup("net:connect");
	(void)snprintf(input, sizeof(input), "{\"host\":\"%s\",\"port\":443}", host);
	if (!r->action || pd_fields_from_json(input, &r->input, &r->n_input) < 0)
		abort();
	return r;
}

/* One run: N decisions (every 4th a deny), WINDOW in flight; decisions/s, or < 0. */
static double
run(size_t n, bool otlp, const Box__DecideRequest *permit, const Box__DecideRequest *deny,
    uint64_t *sink_bytes, double *cpu_us)
{
	char *dir = pd_tmpdir("telemetry-bench");
	struct pd_opts o = { .binary = pd_binary(), .state_dir = dir, .policy = policy,
			     .history_sync = "off", .otlp_target = otlp };
	Box__PolicyReady *ready = NULL;
	struct pd pd;
	struct sink sink = { .fd = -1 };
	pthread_t th;
	bool have_th = false;
	double rate = -1;

	if (!dir)
		return -1;
	int r = pd_start(&o, &pd, &ready);
	if (r < 0 || !ready || !ready->ok) {
		fprintf(stderr, "telemetry_bench: box-policyd did not start: %s\n",
			ready && ready->message ? ready->message : strerror(-r));
		goto out;
	}
	if (otlp) {
		sink.fd = fcntl(pd.tel_fd, F_DUPFD_CLOEXEC, 3);
		if (sink.fd < 0 || pthread_create(&th, NULL, sink_run, &sink) != 0)
			goto out;
		have_th = true;
	}
	uint64_t *ids = calloc(n, sizeof(*ids));
	if (!ids)
		goto out;
	size_t s = 0, d = 0;
	int64_t t0 = now_ns();
	int64_t c0 = cpu_ns(pd.pid);
	while (d < n) {
		while (s < n && s - d < WINDOW) {
			if (pd_send_decide(&pd, PD_GATEWAY, s % 4 == 3 ? deny : permit, &ids[s]) < 0)
				goto done;
			s++;
		}
		Box__DecideReply *rep = NULL;
		uint64_t id = 0;
		if (pd_wait_reply(&pd, PD_GATEWAY, &rep, &id, 30000) < 0)
			goto done;
		box_msg_free(&rep->base);
		if (id != ids[d]) {
			fprintf(stderr, "telemetry_bench: reply %zu has id %llu\n", d,
				(unsigned long long)id);
			goto done;
		}
		d++;
	}
	rate = (double)n / ((double)(now_ns() - t0) / 1e9);
	int64_t c1 = cpu_ns(pd.pid);
	*cpu_us = c0 >= 0 && c1 >= 0 ? (double)(c1 - c0) / 1e3 / (double)n : -1;
done:
	free(ids);
out:
	if (ready)
		box_msg_free(&ready->base);
	int st = pd_stop(&pd);
	if (have_th)
		pthread_join(th, NULL);
	else if (sink.fd >= 0)
		close(sink.fd);
	if (st != 0 && rate >= 0) {
		fprintf(stderr, "telemetry_bench: box-policyd exited %d\n", st);
		rate = -1;
	}
	*sink_bytes = sink.bytes;
	pd_rmtree(dir);
	free(dir);
	return rate;
}

static int
cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The median of V (N values; V is sorted). */
static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmpd);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int
main(int argc, char **argv)
{
	bool quick = false;
	int runs = 0, only = -1; /* only: 0 plain, 1 otlp */
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "quick") == 0)
			quick = true;
		else if (strncmp(argv[i], "runs=", 5) == 0 && atoi(argv[i] + 5) >= 1 &&
			 atoi(argv[i] + 5) <= RUNS_MAX)
			runs = atoi(argv[i] + 5);
		else if (strcmp(argv[i], "only=plain") == 0)
			only = 0;
		else if (strcmp(argv[i], "only=otlp") == 0)
			only = 1;
		else {
			fprintf(stderr, "usage: telemetry_bench [quick] [runs=1..%d] "
					"[only=plain|otlp]\n", RUNS_MAX);
			return 2;
		}
	}
	if (!runs)
		runs = quick ? 3 : 7;
	size_t n = quick ? 5000 : 50000;
	double rate[2][RUNS_MAX], cpu[2][RUNS_MAX], pair[RUNS_MAX], cpu_pair[RUNS_MAX];
	uint64_t bytes[2] = { 0, 0 };

	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	Box__DecideRequest *permit = make_req("api.example.com");
	Box__DecideRequest *deny = make_req("evil.example.com");
	for (int i = 0; i < runs; i++) {
		for (int k = 0; k < 2; k++) {
			int kind = (k + i) % 2; /* plain first in even pairs, otlp first in odd */
			if (only >= 0 && kind != only)
				continue;
			rate[kind][i] = run(n, kind == 1, permit, deny, &bytes[kind], &cpu[kind][i]);
			if (rate[kind][i] < 0)
				return 1;
		}
		if (only >= 0) {
			printf("telemetry run %d (%s alone): %.0f decisions/s; box-policyd CPU per "
			       "decision %.2f us\n",
			       i + 1, only ? "otlp" : "plain", rate[only][i], cpu[only][i]);
			continue;
		}
		pair[i] = rate[1][i] / rate[0][i];
		cpu_pair[i] = cpu[0][i] > 0 ? cpu[1][i] / cpu[0][i] : 0;
		printf("telemetry run %d: %.0f decisions/s without a target, %.0f with an otlp "
		       "target (ratio %.3f; %llu bytes of records to the sink); box-policyd CPU per "
		       "decision %.2f us, %.2f us\n",
		       i + 1, rate[0][i], rate[1][i], pair[i], (unsigned long long)bytes[1],
		       cpu[0][i], cpu[1][i]);
	}
	if (only < 0 || only == 1) {
		if (bytes[1] == 0) {
			fprintf(stderr, "telemetry_bench: the sink received nothing\n");
			return 1;
		}
	}
	if (only >= 0)
		return 0;
	double plain = median(rate[0], runs), otlp = median(rate[1], runs);
	double plain_cpu = median(cpu[0], runs), otlp_cpu = median(cpu[1], runs);
	double ratio = otlp / plain;
	printf("telemetry: median of %d runs: %.0f decisions/s without a target, %.0f with an "
	       "otlp target: ratio %.3f (export costs %.1f%%; target <= 10%%: %s); median of the "
	       "pairs' ratios %.3f\n",
	       runs, plain, otlp, ratio, (1 - ratio) * 100, ratio >= 0.90 ? "met" : "NOT met",
	       median(pair, runs));
	printf("telemetry: median box-policyd CPU per decision %.2f us without a target, %.2f us "
	       "with an otlp target (x%.2f; median of the pairs' own x%.2f; %.0f bytes of records a "
	       "decision)\n",
	       plain_cpu, otlp_cpu, plain_cpu > 0 ? otlp_cpu / plain_cpu : 0.0,
	       median(cpu_pair, runs), (double)bytes[1] / (double)n);
	return 0;
}
