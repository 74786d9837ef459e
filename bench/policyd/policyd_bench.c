/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policyd_bench.c — box-policyd over its socket:
 *   1. Decide round trips/s, p50, p99 with 1 and 4 concurrent peers (each
 *      asking about an action of its own kind: fs:read, net:connect,
 *      mcp:call), history_sync = always but no temporal rule (nothing
 *      written), beside a bare SOCK_SEQPACKET echo between two processes as
 *      the peer to compare with (ratio); then 1 peer again with the client
 *      and box-policyd pinned to one CPU, beside the echo pinned the same
 *      way; each with box-policyd's CPU per Decide and Decides per
 *      CPU-second (/proc/PID/schedstat, ns, around the measured window)
 *      (BENCH_POLICYD_ROUND_TRIPS_ONLY=1 stops after this part);
 *   2. the temporal write budget with history_sync = off, always, batch, each
 *      with 1 and with 64 Decides in flight on one channel, 10,000 decisions
 *      per run: Decides/s, p50 and p99 of each, and the group commit's
 *      targets (batch at 64 in flight >= 5x always at 64; batch's p50 at 1 in
 *      flight <= 1.2x always's). The history is kept on a file system where
 *      fsync costs what it costs on disk, never tmpfs (BENCH_POLICYD_DIR, else
 *      /var/tmp, $TMPDIR, /tmp: the first that is not tmpfs or ramfs);
 *   3. the write budget over 1,000,000 events 1 ms apart in engine time
 *      (BOX_TEST_CLOCK), printing policyd's RSS along the way: it must stay
 *      flat once the 60 s window is full (BENCH_POLICYD_EVENTS,
 *      BENCH_POLICYD_MAX_S bound the run).
 * Usage: policyd_bench [quick]   (quick: 10x fewer iterations, for smoke tests)
 * Exit status 1 when a run fails or RSS grows by more than 50% after warm-up.
 * Trusts: nothing; it is benchmark code.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "policy_client.h"

static const char *policy_plain =
	"permit (principal, action in [Box::Action::\"fs:read\", Box::Action::\"fs:write\"], "
	"resource);\n"
	"permit (principal, action in [Box::Action::\"net:connect\", Box::Action::\"mcp:call\"], "
	"resource);\n"
	"forbid (principal, action == Box::Action::\"fs:read\", resource)\n"
	"when { context.input.path like \"~/secret*\" };\n";

static const char *policy_budget =
	"permit (principal, action == Box::Action::\"fs:write\", resource);\n"
	"@id(\"write_budget\")\n"
	"forbid (principal, action == Box::Action::\"fs:write\", resource)\n"
	"when temporal {\n"
	"    exists (total: Long). (\n"
	"        (count for (t: Timepoint). where (\n"
	"            formerly within 60s (\n"
	"                Box::Action::\"fs:write\"::response{ input.path: _, input.operation: "
	"Box::FsWriteOperation::\"write_content\" } && tp(t)\n"
	"            )\n"
	"        )) == total\n"
	"        && total >= 100000\n"
	"    )\n"
	"};\n";

static int64_t
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int
cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

struct stats {
	double per_sec, p50_us, p99_us;
};

static void
summarize(int64_t *lat, size_t n, int64_t elapsed, struct stats *st)
{
	qsort(lat, n, sizeof(*lat), cmp64);
	st->per_sec = (double)n * 1e9 / (double)elapsed;
	st->p50_us = (double)lat[n / 2] / 1000.0;
	st->p99_us = (double)lat[(n * 99) / 100] / 1000.0;
}

/* ---- the peer to compare with: a bare seqpacket echo ----------------------------- */

/*
 * The echo runs in a child process, not a thread: box-policyd is a process,
 * and on this kind of VM a switch between address spaces costs several
 * microseconds more than one between threads. The floor must pay it too.
 */
static int
bench_echo(size_t n, struct stats *st)
{
	int sv[2];
	char msg[96] = "fs:read ~/p/a.txt read_content", buf[512];
	int64_t *lat = calloc(n, sizeof(*lat));

	if (!lat || box_ipc_socketpair(sv, false) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(sv[0]);
		for (;;) {
			ssize_t k = recv(sv[1], buf, sizeof(buf), 0);
			if (k <= 0 || send(sv[1], buf, (size_t)k, MSG_NOSIGNAL) < 0)
				_exit(0);
		}
	}
	close(sv[1]);
	int64_t t0 = now_ns();
	int r = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t a = now_ns();
		if (send(sv[0], msg, sizeof(msg), 0) < 0 || recv(sv[0], buf, sizeof(buf), 0) <= 0) {
			r = -1;
			break;
		}
		lat[i] = now_ns() - a;
	}
	if (r == 0)
		summarize(lat, n, now_ns() - t0, st);
	close(sv[0]);
	(void)waitpid(pid, NULL, 0);
	free(lat);
	return r;
}

/* ---- Decide round trips ------------------------------------------------------------ */

struct worker {
	struct policy_client *pc;
	size_t n;
	int64_t *lat;
	int err;
	const Box__DecideRequest *req;
};

/* What each peer asks (box-policyd refuses an action a peer does not raise). */
static const Box__DecideRequest *peer_req[PD_N];

/*
 * The round trips go through libpolicyclient's blocking mode, the client a
 * real peer (box-shell) asks with: numbering, a reply matched by id and type,
 * the permit kept. One client per peer channel, over a dup of the harness's
 * end (the harness sends nothing on these channels meanwhile). The fourth
 * peer is not boxd's channel, which also carries box-policyd's PolicyLogHead
 * after each write of the log (a Decide client takes no such message): it is
 * a channel box-shell attached, as each of its forked processes asks on one.
 */
static struct policy_client *peer_client[PD_N];

static int
clients_open(struct pd *pd)
{
	static const uint32_t types[] = { BOX__MSG_TYPE__MSG_DECIDE_REPLY };
	for (int i = 0; i < PD_N; i++) {
		int fd = i == PD_BOXD ? pd_attach_new(pd->fd[PD_SHELL], false)
				      : fcntl(pd->fd[i], F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return i == PD_BOXD ? -EIO : -errno;
		int r = policy_client_new_sync(fd, types, 1, &peer_client[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

static void
clients_close(void)
{
	for (int i = 0; i < PD_N; i++)
		peer_client[i] = (policy_client_free(peer_client[i]), NULL);
}

static void *
worker_run(void *arg)
{
	struct worker *w = arg;
	for (size_t i = 0; i < w->n; i++) {
		struct box_ipc_msg m = BOX_IPC_MSG_INIT;
		int64_t a = now_ns();
		int r = policy_client_call(w->pc, BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &w->req->base,
					   &m);
		if (r < 0) {
			w->err = r;
			return NULL;
		}
		w->lat[i] = now_ns() - a;
		box_ipc_msg_done(&m);
	}
	return NULL;
}

static int
round_trips(int peers, size_t n_each, struct stats *st)
{
	struct worker w[PD_N];
	pthread_t th[PD_N];
	int64_t *lat = calloc(n_each * (size_t)peers, sizeof(*lat));
	static const int order[PD_N] = { PD_SHELL, PD_GATEWAY, PD_MCPD, PD_BOXD };

	if (!lat)
		return -ENOMEM;
	int64_t t0 = now_ns();
	for (int i = 0; i < peers; i++) {
		w[i] = (struct worker){ peer_client[order[i]], n_each, lat + n_each * (size_t)i, 0,
					peer_req[order[i]] };
		pthread_create(&th[i], NULL, worker_run, &w[i]);
	}
	int err = 0;
	for (int i = 0; i < peers; i++) {
		pthread_join(th[i], NULL);
		if (w[i].err) {
			err = w[i].err;
			fprintf(stderr, "policyd_bench: peer %d of %d: a Decide failed: %s\n", i + 1,
				peers, strerror(-err));
		}
	}
	if (err == 0)
		summarize(lat, n_each * (size_t)peers, now_ns() - t0, st);
	free(lat);
	return err;
}

/* Pipelined on one channel: keep WINDOW decisions in flight, every reply's id checked. */
static int
pipelined(struct pd *pd, size_t n, size_t window, const Box__DecideRequest *req,
	  struct stats *st)
{
	int64_t *sent = calloc(n, sizeof(*sent)), *lat = calloc(n, sizeof(*lat));
	uint64_t *ids = calloc(n, sizeof(*ids));
	size_t s = 0, d = 0;

	if (!sent || !lat || !ids)
		return -ENOMEM;
	int64_t t0 = now_ns();
	while (d < n) {
		while (s < n && s - d < window) {
			sent[s] = now_ns();
			if (pd_send_decide(pd, PD_SHELL, req, &ids[s]) < 0)
				return -EIO;
			s++;
		}
		Box__DecideReply *rep = NULL;
		uint64_t id = 0;
		if (pd_wait_reply(pd, PD_SHELL, &rep, &id, 30000) < 0)
			return -EIO;
		box_msg_free(&rep->base);
		if (id != ids[d]) {
			fprintf(stderr, "policyd_bench: reply %zu has id %llu, expected %llu\n", d,
				(unsigned long long)id, (unsigned long long)ids[d]);
			return -EBADMSG;
		}
		lat[d] = now_ns() - sent[d];
		d++;
	}
	summarize(lat, n, now_ns() - t0, st);
	free(sent);
	free(lat);
	free(ids);
	return 0;
}

static const char *
fs_name(long type)
{
	switch ((unsigned long)type) {
	case EXT4_SUPER_MAGIC: return "ext2/3/4";
	case XFS_SUPER_MAGIC: return "xfs";
	case BTRFS_SUPER_MAGIC: return "btrfs";
	case OVERLAYFS_SUPER_MAGIC: return "overlay";
	case TMPFS_MAGIC: return "tmpfs";
	case RAMFS_MAGIC: return "ramfs";
	default: return "other";
	}
}

/*
 * A temporary directory for the history where fsync reaches a disk: the
 * first of BENCH_POLICYD_DIR, /var/tmp, $TMPDIR, /tmp that is not tmpfs or
 * ramfs (else the last one tried, said as such).
 */
static char *
disk_tmpdir(const char **fs)
{
	const char *cands[] = { getenv("BENCH_POLICYD_DIR"), "/var/tmp", getenv("TMPDIR"),
				"/tmp" };
	const char *pick = NULL;
	struct statfs sf;

	*fs = "unknown";
	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
		if (!cands[i] || !*cands[i] || statfs(cands[i], &sf) < 0)
			continue;
		pick = cands[i];
		*fs = fs_name((long)sf.f_type);
		unsigned long type = (unsigned long)sf.f_type;
		if (type != TMPFS_MAGIC && type != RAMFS_MAGIC)
			break;
	}
	char *p = NULL;
	if (!pick || asprintf(&p, "%s/box-policyd-bench-XXXXXX", pick) < 0)
		return NULL;
	if (!mkdtemp(p)) {
		free(p);
		return NULL;
	}
	return p;
}

static long
rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	(void)snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* User and system CPU time of PID in microseconds (clock ticks, so coarse). */
static int
cpu_us(pid_t pid, double *user, double *sys)
{
	char path[64], buf[1024];
	(void)snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
	unsigned long ut, st;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
			 &st) != 2)
		return -1;
	double tick = (double)sysconf(_SC_CLK_TCK);
	*user = (double)ut * 1e6 / tick;
	*sys = (double)st * 1e6 / tick;
	return 0;
}

/* CPU time PID ran, in ns (/proc/PID/schedstat: user and system together, not in ticks). */
static int64_t
cpu_ns(pid_t pid)
{
	char path[64];
	long long ns = -1;
	(void)snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &ns) != 1)
		ns = -1;
	fclose(f);
	return ns;
}

static Box__DecideRequest *
make_req(const char *action, const char *input)
{
	Box__DecideRequest *r = calloc(1, sizeof(*r));
	box__decide_request__init(r);
	r->action = strdup(action);
	if (pd_fields_from_json(input, &r->input, &r->n_input) < 0)
		abort();
	return r;
}

static int
start(struct pd *pd, const char *dir, const char *policy, const char *sync, const char *clock)
{
	struct pd_opts o = { .binary = pd_binary(), .state_dir = dir, .policy = policy,
			     .history_sync = sync, .test_clock = clock };
	Box__PolicyReady *ready = NULL;
	int r = pd_start(&o, pd, &ready);
	if (r < 0 || !ready || !ready->ok) {
		fprintf(stderr, "policyd_bench: box-policyd did not start: %s\n",
			ready && ready->message ? ready->message : strerror(-r));
		return -1;
	}
	box_msg_free(&ready->base);
	return 0;
}

int
main(int argc, char **argv)
{
	bool quick = argc > 1 && strcmp(argv[1], "quick") == 0;
	size_t n_rt = quick ? 2000 : 20000, n_hist = quick ? 1000 : 10000;
	size_t n_events = quick ? 100000 : 1000000;
	struct stats st, echo;
	struct pd pd;
	int fail = 0;

	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	Box__DecideRequest *read_req =
		make_req("fs:read", "{\"path\":\"~/p/a.txt\",\"operation\":\"read_content\"}");
	Box__DecideRequest *write_req =
		make_req("fs:write", "{\"path\":\"~/p/a.txt\",\"operation\":\"write_content\"}");
	Box__DecideRequest *connect_req =
		make_req("net:connect", "{\"host\":\"api.example.com\",\"port\":443}");
	Box__DecideRequest *mcp_req =
		make_req("mcp:call", "{\"server\":\"files\",\"method\":\"tools/list\"}");
	peer_req[PD_SHELL] = read_req;
	peer_req[PD_BOXD] = read_req;
	peer_req[PD_GATEWAY] = connect_req;
	peer_req[PD_MCPD] = mcp_req;

	/*
	 * 1. Non-temporal decisions, 1 and 4 peers, where the scheduler puts
	 * them; then 1 peer with the client and box-policyd on one CPU, which
	 * is the placement a real peer gets when it waits on every answer and
	 * the other CPUs are busy. Each beside its own echo floor. The box says
	 * history_sync = always; without a temporal rule nothing is written.
	 */
	char *dir = pd_tmpdir("policyd-bench");
	if (!dir || start(&pd, dir, policy_plain, "always", NULL) < 0 || clients_open(&pd) < 0)
		return 1;
	cpu_set_t all, one;
	(void)sched_getaffinity(0, sizeof(all), &all);
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all)) {
			CPU_SET(c, &one);
			break;
		}
	for (int pass = 0; pass < 3 && !fail; pass++) {
		bool pinned = pass == 2;
		int peers = pass == 1 ? 4 : 1;
		const char *where = pinned ? "one CPU" : "any CPU";
		if (pinned && (sched_setaffinity(0, sizeof(one), &one) < 0 ||
			       sched_setaffinity(pd.pid, sizeof(one), &one) < 0)) {
			printf("policyd: cannot pin to one CPU (%s): skipped that pass\n",
			       strerror(errno));
			break;
		}
		if (pass != 1) {
			if (bench_echo(n_rt, &echo) < 0)
				return 1;
			printf("policyd: bare seqpacket echo between two processes, %s (the floor): "
			       "%.0f round trips/s, p50 %.1f us, p99 %.1f us\n",
			       where, echo.per_sec, echo.p50_us, echo.p99_us);
		}
		double u0 = 0, s0 = 0, u1 = 0, s1 = 0;
		(void)cpu_us(pd.pid, &u0, &s0);
		int64_t c0 = cpu_ns(pd.pid);
		if (round_trips(peers, n_rt / (size_t)peers, &st) < 0) {
			fail = 1;
			break;
		}
		int64_t c1 = cpu_ns(pd.pid);
		(void)cpu_us(pd.pid, &u1, &s1);
		printf("policyd: Decide, %d peer%s, %s, history_sync=always, no temporal rule: "
		       "%.0f round trips/s, p50 %.1f us, p99 %.1f us (p50 %.2fx the echo)%s\n",
		       peers, peers > 1 ? "s" : "", where, st.per_sec, st.p50_us, st.p99_us,
		       st.p50_us / echo.p50_us,
		       peers > 1 ? ""
		       : st.p50_us <= 20.0 ? "  [20 us target: met]"
		       : echo.p50_us > 20.0 ? "  [20 us target: over; so is the bare echo]"
					    : "  [20 us target: OVER]");
		printf("policyd:   box-policyd CPU per Decide: %.1f us (%.1f us user, %.1f us system): "
		       "%.0f Decides per CPU-second\n",
		       c0 >= 0 && c1 > c0 ? (double)(c1 - c0) / 1e3 / (double)n_rt : 0.0,
		       (u1 - u0) / (double)n_rt, (s1 - s0) / (double)n_rt,
		       c0 >= 0 && c1 > c0 ? (double)n_rt * 1e9 / (double)(c1 - c0) : 0.0);
	}
	(void)sched_setaffinity(0, sizeof(all), &all);
	clients_close();
	pd_stop(&pd);
	pd_rmtree(dir);
	free(dir);
	if (getenv("BENCH_POLICYD_ROUND_TRIPS_ONLY"))
		return fail;

	/*
	 * 2. The temporal budget, each history_sync with 1 and 64 Decides in
	 * flight on one channel: box-shell's, whose fs:write the budget counts
	 * (box-policyd refuses an action a peer does not raise; box-gateway and
	 * box-mcpd keep several of their own in flight the same way).
	 */
	static const char *modes[] = { "off", "always", "batch" };
	static const size_t depths[] = { 1, 64 };
	struct stats hist[2][3];
	const char *fs = "unknown";
	for (size_t d = 0; d < 2 && !fail; d++)
		for (size_t m = 0; m < 3 && !fail; m++) {
			dir = disk_tmpdir(&fs);
			if (!dir || start(&pd, dir, policy_budget, modes[m], NULL) < 0) {
				fail = 1;
				break;
			}
			if (d == 0 && m == 0)
				printf("policyd: the history is kept under %s (%s)\n", dir, fs);
			if (pipelined(&pd, n_hist, depths[d], write_req, &hist[d][m]) < 0)
				fail = 1;
			else
				printf("policyd: Decide, temporal, history_sync=%s, %zu in flight: "
				       "%.0f Decides/s, p50 %.1f us, p99 %.1f us\n",
				       modes[m], depths[d], hist[d][m].per_sec, hist[d][m].p50_us,
				       hist[d][m].p99_us);
			pd_stop(&pd);
			pd_rmtree(dir);
			free(dir);
		}
	if (!fail) {
		double tput = hist[1][2].per_sec / hist[1][1].per_sec;
		double p50 = hist[0][2].p50_us / hist[0][1].p50_us;
		printf("policyd: group commit: batch at 64 in flight = %.1fx always at 64 "
		       "[target >= 5x: %s]\n",
		       tput, tput >= 5.0 ? "met" : "MISSED");
		printf("policyd: group commit: batch p50 at 1 in flight = %.2fx always's "
		       "[target <= 1.2x: %s]%s\n",
		       p50, p50 <= 1.2 ? "met" : "MISSED",
		       strcmp(fs, "tmpfs") == 0 || strcmp(fs, "ramfs") == 0
			       ? " (history on tmpfs: fsync costs nothing here, so these mean little)"
			       : "");
	}

	/*
	 * 3. A million events 1 ms apart in engine time: RSS must stay flat once
	 * the 60 s window is full (70,000 events). BENCH_POLICYD_EVENTS and
	 * BENCH_POLICYD_MAX_S (default 600) bound the run; a run cut short by
	 * the time cap prints how far it got.
	 */
	if (!fail) {
		const char *ev_env = getenv("BENCH_POLICYD_EVENTS");
		const char *max_env = getenv("BENCH_POLICYD_MAX_S");
		if (ev_env && atol(ev_env) > 0)
			n_events = (size_t)atol(ev_env);
		double max_s = max_env && atof(max_env) > 0 ? atof(max_env) : 600.0;
		size_t every = n_events / 20 < 10000 ? 10000 : n_events / 20;
		dir = pd_tmpdir("policyd-bench");
		if (!dir || start(&pd, dir, policy_budget, "off", "1700000000000000000,1000000") < 0)
			return 1;
		long base = -1, peak = 0;
		size_t ev = 0;
		int64_t t0 = now_ns(), tl = t0;
		const char *done = "{\"record\":\"response\",\"action\":\"fs:write\",\"input\":{"
				   "\"path\":\"~/p/a.txt\",\"operation\":\"write_content\"},"
				   "\"output\":{\"result\":\"completed\"}}";
		bool capped = false;
		while (ev < n_events) {
			Box__DecideReply *rep = NULL;
			if (pd_send_decide(&pd, PD_SHELL, write_req, NULL) < 0 ||
			    pd_wait_reply(&pd, PD_SHELL, &rep, NULL, 60000) < 0 ||
			    pd_send_line(&pd, PD_SHELL, done, NULL) < 0) {
				fail = 1;
				break;
			}
			box_msg_free(&rep->base);
			ev += 2;
			if (ev % every == 0 || ev >= n_events) {
				long kb = rss_kb(pd.pid);
				int64_t t = now_ns();
				if (ev >= 70000 && base < 0)
					base = kb;
				if (base > 0 && kb > peak)
					peak = kb;
				printf("policyd: %zu events (%.0f s of engine time): RSS %ld kB, "
				       "%.0f events/s lately\n",
				       ev, (double)ev / 1000.0, kb, (double)every * 1e9 / (double)(t - tl));
				tl = t;
				if ((double)(t - t0) / 1e9 > max_s && ev < n_events) {
					capped = true;
					break;
				}
			}
		}
		double secs = (double)(now_ns() - t0) / 1e9;
		bool flat = base > 0 && peak <= base * 3 / 2;
		printf("policyd: %zu of %zu events in %.1f s%s; RSS once the window is full %ld kB, "
		       "peak %ld kB: %s\n",
		       ev, n_events, secs,
		       capped ? " (stopped by BENCH_POLICYD_MAX_S: deciding got slow)" : "", base,
		       peak, base < 0 ? "window never filled" : flat ? "flat" : "GROWING");
		if (base > 0 && !flat)
			fail = 1;
		pd_stop(&pd);
		pd_rmtree(dir);
		free(dir);
	}
	box__decide_request__free_unpacked(read_req, NULL);
	box__decide_request__free_unpacked(write_req, NULL);
	box__decide_request__free_unpacked(connect_req, NULL);
	box__decide_request__free_unpacked(mcp_req, NULL);
	return fail;
}
