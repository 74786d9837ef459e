/* SPDX-License-Identifier: Apache-2.0 */
/*
 * telemetry_bench.c — what a [telemetry.NAME] kind = otlp target costs box-policyd
 * (docs/box.ini.5.md): Decide throughput through box-policyd (test/policyd/harness.c
 * plays boxd and the gateway's policy channel) without a telemetry target and
 * with one otlp target taking deny, permit and control, whose telemetry channel
 * is read by a sink that discards (a thread here, in box-gateway's place: the
 * gateway's own export runs in another process and is not counted). Each
 * decision of the mix is a permit or a deny, 16 in flight on one channel;
 * N decisions a run, 3 runs of each, alternating; the medians and their ratio
 * are printed, with the target: export costs at most 10% (ratio >= 0.90); and
 * box-policyd's own CPU time per decision (/proc/PID/stat), which a loaded
 * machine moves less than the throughput.
 * Usage: telemetry_bench [quick]   (quick: 10x fewer decisions, for smoke tests)
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

#define RUNS 3
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

/* box-policyd's CPU time so far (user + system, clock ticks), from /proc/PID/stat; -1 unknown. */
static long
cpu_ticks(pid_t pid)
{
	char path[64], buf[1024];
	(void)snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
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
	return (long)(ut + st);
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
	long c0 = cpu_ticks(pd.pid);
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
	long c1 = cpu_ticks(pd.pid);
	*cpu_us = c0 >= 0 && c1 >= 0 ? (double)(c1 - c0) * 1e6 / (double)sysconf(_SC_CLK_TCK) / (double)n
				     : -1;
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

int
main(int argc, char **argv)
{
	bool quick = argc > 1 && strcmp(argv[1], "quick") == 0;
	size_t n = quick ? 5000 : 50000;
	double plain[RUNS], otlp[RUNS], plain_cpu[RUNS], otlp_cpu[RUNS];
	uint64_t bytes = 0, none = 0;

	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	Box__DecideRequest *permit = make_req("api.example.com");
	Box__DecideRequest *deny = make_req("evil.example.com");
	for (int i = 0; i < RUNS; i++) {
		plain[i] = run(n, false, permit, deny, &none, &plain_cpu[i]);
		otlp[i] = run(n, true, permit, deny, &bytes, &otlp_cpu[i]);
		if (plain[i] < 0 || otlp[i] < 0)
			return 1;
		printf("telemetry run %d: %.0f decisions/s without a target, %.0f with an otlp "
		       "target (%llu bytes of records to the sink); box-policyd CPU per decision "
		       "%.1f us, %.1f us\n",
		       i + 1, plain[i], otlp[i], (unsigned long long)bytes, plain_cpu[i],
		       otlp_cpu[i]);
		if (bytes == 0) {
			fprintf(stderr, "telemetry_bench: the sink received nothing\n");
			return 1;
		}
	}
	qsort(plain, RUNS, sizeof(double), cmpd);
	qsort(otlp, RUNS, sizeof(double), cmpd);
	qsort(plain_cpu, RUNS, sizeof(double), cmpd);
	qsort(otlp_cpu, RUNS, sizeof(double), cmpd);
	double ratio = otlp[RUNS / 2] / plain[RUNS / 2];
	printf("telemetry: median %.0f decisions/s without a target, %.0f with an otlp target: "
	       "ratio %.3f (export costs %.1f%%; target <= 10%%: %s)\n",
	       plain[RUNS / 2], otlp[RUNS / 2], ratio, (1 - ratio) * 100,
	       ratio >= 0.90 ? "met" : "NOT met");
	printf("telemetry: median box-policyd CPU per decision %.1f us without a target, %.1f us "
	       "with an otlp target (x%.2f)\n",
	       plain_cpu[RUNS / 2], otlp_cpu[RUNS / 2],
	       plain_cpu[RUNS / 2] > 0 ? otlp_cpu[RUNS / 2] / plain_cpu[RUNS / 2] : 0.0);
	return 0;
}
