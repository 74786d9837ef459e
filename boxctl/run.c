/* SPDX-License-Identifier: Apache-2.0 */
/*
 * run.c — `boxctl run [-c box.ini] [-q] [--timings] [--embedded] [--detach | --dry-run] [-- ARGS...]`
 * (docs/boxctl.1.md).
 *
 * Loads box.ini and the policy as the caller, exactly as `check` does (a
 * refusal exits 2 before any boxd is contacted), sends it as a BoxSpec to
 * the service boxd or to an embedded boxd it starts (saying so in one line
 * on stderr, and why when the service socket refused the caller), with its
 * stdin, stdout and stderr, and exits with the agent's status (128+N for
 * signal N); 1 with `boxctl: error: …` when the box cannot start (including
 * `sandbox setup failed at <step>: <reason>`), 2 for a load refusal, 124
 * when [box] timeout stopped it; an OOM kill in the box's memory cgroup is
 * named with memory_max (`box: the agent was killed: out of memory …`).
 * SIGINT, SIGTERM and SIGHUP are forwarded to the agent (RunControl). If
 * boxctl dies, boxd sees the channel close and
 * kills the whole box. --detach prints the box ID once the agent has
 * exec'd and exits 0; the agent's output goes to STATE_DIR/agent.log.
 * --dry-run sends no stdio: boxd builds the box up to the agent's start
 * (daemons, plan, disclosure), tears it down, and replies with the
 * disclosure, which boxctl prints before exiting 0.
 *
 * stdio (docs/sandbox.md): no fd of boxctl's own enters the box. Each of
 * fds 0-2 that is a terminal becomes, in the agent, the slave of the box's
 * own pty; boxd hands boxctl the master with RunReply and boxctl relays it
 * to the terminal (raw mode on fd 0 when fd 0 is the terminal: Ctrl-C
 * arrives as a byte; window-size changes set on the master). Each other
 * fd becomes a pipe that boxctl relays (relay.c): stdin until its EOF (then
 * the agent sees EOF), stdout and stderr until EOF after RunExit, so no
 * output is lost. A terminal that goes away without a SIGHUP (read EOF or
 * EIO, POLLHUP: `tmux kill-session`) is a hang-up: SIGHUP is forwarded and,
 * if the agent has not ended 2 s later, boxctl leaves; boxd then kills the
 * box and its name is free again. With stdin and stdout the terminal, a
 * decision the box holds for a person (@ask) is asked at it too (prompt.c:
 * the relay paused, boxctl's own screen, the answer read from fd 0).
 * Trusts: nothing in box.ini (box_config_load checks it); boxd's replies
 * only after box_ipc_decode() validated them; nothing in the relayed bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "boxpolicy.h"
#include "cleanup.h"
#include "client.h"
#include "commands.h"
#include "config.h"
#include "prompt.h"
#include "relay.h"
#include "spec.h"
#include "validate.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define HANGUP_GRACE_MS 2000 /* a hung-up terminal: SIGHUP, then leave (boxd kills the box) */
#define EMBEDDED_EXIT_WAIT_MS 3000 /* after RunExit: the embedded boxd's own exit */
#define DRAIN_IDLE_MS 2000   /* after RunExit: a pipe that stays silent this long is given up */

static int
usage(void)
{
	fprintf(stderr, "usage: boxctl run [-c box.ini] [-q] [--timings] [--embedded] [--detach | --dry-run] "
			"[-- ARGS...]\n");
	return BOXCTL_EXIT_USAGE;
}

/* "2s", "1500ms", "5m", "1h": the timeout as a person would write it. */
static void
format_duration(uint64_t ms, char *buf, size_t len)
{
	if (ms % 3600000 == 0)
		snprintf(buf, len, "%lluh", (unsigned long long)(ms / 3600000));
	else if (ms % 60000 == 0)
		snprintf(buf, len, "%llum", (unsigned long long)(ms / 60000));
	else if (ms % 1000 == 0)
		snprintf(buf, len, "%llus", (unsigned long long)(ms / 1000));
	else
		snprintf(buf, len, "%llums", (unsigned long long)ms);
}

/* memory_max as a person writes it: the largest unit that divides it (100M, not 104857600). */
static void
format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "GMK";
	for (int i = 0; i < 3; i++) {
		uint64_t u = 1ULL << (10 * (3 - i));
		if (bytes && bytes % u == 0) {
			snprintf(buf, len, "%llu%c", (unsigned long long)(bytes / u), units[i]);
			return;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)bytes);
}

/* The box's memory cgroup OOM-killed a process: say so, with the limit it hit. */
static void
print_oom(const struct box_config *cfg, const Box__RunExit *x)
{
	char lim[32] = "?";
	if (cfg->agent.memory_max.set)
		format_size(cfg->agent.memory_max.value, lim, sizeof(lim));
	/* The box's pid 1 reports a SIGKILLed agent as 128 + 9. */
	if ((x->has_signal && x->signal == SIGKILL) ||
	    (x->has_exit_status && x->exit_status == 128 + SIGKILL))
		fprintf(stderr, "box: the agent was killed: out of memory (memory_max = %s)\n", lim);
	else
		fprintf(stderr, "box: a process of the agent was killed: out of memory "
			"(memory_max = %s)\n", lim);
}

static int
send_control(int fd, const char *box_id, int sig)
{
	Box__RunControl m = BOX__RUN_CONTROL__INIT;
	m.box_id = (char *)box_id;
	m.signal = sig;
	return box_ipc_send(fd, &box_proto_client, BOX__MSG_TYPE__MSG_RUN_CONTROL, 0, &m.base,
			    NULL, 0);
}

enum { S_STDIN, S_STDOUT, S_STDERR, S_KEYS, S_SCREEN, S_N };

struct run {
	struct box_config *cfg;
	Box__BoxSpec *spec;
	int fd;
	int sfd;              /* signalfd */
	bool detach, quiet;
	bool dry_run; /* --dry-run: check, disclosure, no agent */
	bool embedded; /* --embedded: a private boxd, the service not even asked */
	bool timings; /* --timings: print the start's timeline */
	/* boxctl's own steps, CLOCK_MONOTONIC µs (boxd's come in RunReply.timeline) */
	uint64_t t_started, t_checked, t_connected, t_sent, t_reply;
	unsigned tty_mask;    /* bit N: fd N is a terminal */
	int ws_fd;            /* the terminal fd the window size is read from, or -1 */
	int term_fd;          /* where the pty's output goes (a terminal fd), or -1 */
	int master;           /* the box's pty master (from RunReply), or -1 */
	int box_end[3];       /* the pipe ends for the box, until sent */
	struct stream st[S_N];
	struct term_modes modes; /* what the agent set on the terminal (the screen stream's) */
	struct prompt *prompt; /* at a terminal: boxctl's own question (prompt.c), or NULL */
	bool relaying;        /* streams started (after RunReply OK) */
	bool hup_sent;        /* SIGHUP forwarded (signal or hang-up) */
	bool hung_up;         /* the caller's terminal went away */
	struct timespec hup_at;
	char box_id[16];
	int pending_sig;      /* a signal that came before the box id */
	pid_t embedded_pid;   /* the embedded boxd we started, or -1 */
	const char *service;  /* the service socket's path */
	int service_err;      /* why it did not answer (errno), or 0 */
	char **extra_args;    /* after --, for the agent */
	size_t n_extra_args;
};

static uint64_t
usec_now(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
}

/*
 * --timings: boxctl's steps and boxd's (RunReply.timeline), merged in time
 * order, in ms since boxctl started, each with the time it took after the
 * step before. Both read CLOCK_MONOTONIC on the same host; a boxd step from
 * before boxctl started (another clock) is printed relative to boxd's first.
 */
static void
print_timings(const struct run *r, const Box__RunReply *rep)
{
	struct { const char *who, *step; uint64_t usec; } t[BOX_TIMELINE_MAX + 5];
	size_t n = 0;
	const struct { const char *step; uint64_t usec; } own[] = {
		{ "config and policy checked", r->t_checked },
		{ r->embedded_pid > 0 ? "embedded boxd started" : "boxd service connected",
		  r->t_connected },
		{ "request sent", r->t_sent },
	};
	for (size_t i = 0; i < ELEMENTSOF(own); i++)
		if (own[i].usec)
			t[n++] = (__typeof__(t[0])){ "boxctl", own[i].step, own[i].usec };
	uint64_t shift = 0;
	if (rep->n_timeline && rep->timeline[0]->usec < r->t_sent)
		shift = r->t_sent - rep->timeline[0]->usec; /* another clock: line it up */
	for (size_t i = 0; i < rep->n_timeline && n < ELEMENTSOF(t) - 1; i++)
		t[n++] = (__typeof__(t[0])){ "boxd", rep->timeline[i]->step,
					     rep->timeline[i]->usec + shift };
	t[n++] = (__typeof__(t[0])){ "boxctl", "reply received", r->t_reply };
	/* insertion sort: a handful of steps, boxd's already in order */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && t[j].usec < t[j - 1].usec; j--) {
			__typeof__(t[0]) x = t[j];
			t[j] = t[j - 1];
			t[j - 1] = x;
		}
	fprintf(stderr, "box: timings (ms since boxctl started, +ms since the step before):\n");
	uint64_t prev = r->t_started;
	for (size_t i = 0; i < n; i++) {
		uint64_t at = t[i].usec > r->t_started ? t[i].usec - r->t_started : 0;
		uint64_t d = t[i].usec > prev ? t[i].usec - prev : 0;
		fprintf(stderr, "box: %8.1f  +%6.1f  %-6s  %s\n", (double)at / 1000.0,
			(double)d / 1000.0, t[i].who, t[i].step);
		prev = t[i].usec > prev ? t[i].usec : prev;
	}
}

static int64_t
ms_since(const struct timespec *t)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)(now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}

/*
 * The pipes for each of fds 0-2 that is not a terminal (O_CLOEXEC): the
 * box's end goes to boxd, boxctl keeps the other and relays it.
 */
static int
stdio_pipes(struct run *r)
{
	for (int i = 0; i < 3; i++) {
		r->box_end[i] = -1;
		if (r->tty_mask & (1u << i))
			continue;
		int p[2];
		if (pipe2(p, O_CLOEXEC) < 0)
			return -errno;
		int ours = i == 0 ? p[1] : p[0];
		r->box_end[i] = i == 0 ? p[0] : p[1];
		/* Our end is ours alone: non-blocking is safe on it (never on fds 0-2). */
		(void)fcntl(ours, F_SETFL, fcntl(ours, F_GETFL) | O_NONBLOCK);
		struct stream *s = &r->st[i];
		if (i == 0) {
			stream_init(s, "stdin", 0, ours);
			s->own_to = s->close_to_at_eof = true;
		} else {
			stream_init(s, i == 1 ? "stdout" : "stderr", ours, i);
			s->own_from = true;
		}
		/*
		 * splice(2) moves the bytes without a copy, but into a regular file it writes at
		 * the file's offset without the lock write(2) takes on a shared one: the box's
		 * daemons write to the same file (boxctl's stderr, often the same open file as
		 * its stdout: `>out 2>&1`), and a splice racing their write lands at the same
		 * offset, one overwriting the other. Into a regular file, copy.
		 */
		struct stat st;
		s->splice = i == 0 || fstat(i, &st) < 0 || !S_ISREG(st.st_mode);
	}
	return 0;
}

/* RunReply OK: start every stream (the pty ones when the master came). */
static void
relay_start(struct run *r)
{
	r->relaying = true;
	if (r->master < 0)
		return;
	relay_pty_start(&r->st[S_KEYS], &r->st[S_SCREEN], (r->tty_mask & 1) ? 0 : -1,
			r->master, r->term_fd, r->ws_fd);
	/* stdin and stdout the terminal: a decision held for a person is asked here too. */
	if ((r->tty_mask & 3) == 3 && r->term_fd == 1) {
		r->st[S_SCREEN].modes = &r->modes;
		r->prompt = prompt_new(r->fd, r->box_id, r->cfg->box.name.value, 0, 1, r->master,
				       r->ws_fd, &r->st[S_KEYS], &r->st[S_SCREEN], &r->modes,
				       r->cfg->box.ask_timeout_ms.set ?
					       r->cfg->box.ask_timeout_ms.value : 0);
	}
}

/* The caller's terminal went away: a hang-up (forwarded once), then a grace period. */
static void
hang_up(struct run *r)
{
	if (r->hung_up)
		return;
	r->hung_up = true;
	clock_gettime(CLOCK_MONOTONIC, &r->hup_at);
	if (r->prompt)
		prompt_abandon(r->prompt);
	relay_tty_restore();
	/* Nothing goes to or comes from it any more. */
	stream_stop(&r->st[S_KEYS]);
	r->st[S_SCREEN].to = -1;
	r->term_fd = -1;
	if (r->box_id[0] && !r->hup_sent) {
		r->hup_sent = true;
		(void)send_control(r->fd, r->box_id, SIGHUP);
	}
}

/* The relay's pollfds after `base`; returns the count. idx[k] = stream of entry base+k. */
static unsigned
relay_poll(struct run *r, struct pollfd *p, int *idx)
{
	unsigned n = 0;
	if (!r->relaying)
		return 0;
	for (int i = 0; i < S_N; i++)
		if (stream_poll(&r->st[i], &p[n])) {
			idx[n] = i;
			n++;
		}
	/* Watch the terminal for a hang-up even when nothing is to be written to it. */
	if (r->term_fd >= 0 && !r->hung_up) {
		p[n] = (struct pollfd){ .fd = r->term_fd, .events = 0 };
		idx[n] = -1;
		n++;
	}
	return n;
}

static void
relay_ready(struct run *r, const struct pollfd *p, const int *idx, unsigned n)
{
	for (unsigned k = 0; k < n; k++) {
		if (idx[k] < 0) {
			if (p[k].revents & (POLLHUP | POLLERR | POLLNVAL))
				hang_up(r);
			continue;
		}
		struct stream *s = &r->st[idx[k]];
		stream_ready(s, p[k].revents);
		if (s->hangup)
			hang_up(r);
	}
}

/*
 * Wait for one message from boxd while handling signals and relaying. -EINTR:
 * a signal before the box existed; -ETIMEDOUT: the terminal hung up and the
 * agent did not end within the grace period.
 */
static int
wait_message(struct run *r, struct box_ipc_chan *chan, struct box_ipc_msg *m)
{
	for (;;) {
		int k = box_ipc_recv(chan, m);
		if (k == 1 && r->prompt && prompt_msg(r->prompt, m)) {
			box_ipc_msg_done(m);
			continue;
		}
		if (k == 1)
			return 1;
		if (k == 0 || k == -EINTR)
			continue;
		if (k != -EAGAIN)
			return k;
		struct pollfd p[2 + S_N + 1 + PROMPT_POLLFDS] = { { .fd = r->fd, .events = POLLIN },
								  { .fd = r->sfd, .events = POLLIN } };
		int idx[S_N + 1];
		unsigned n = relay_poll(r, p + 2, idx), np = 0;
		int timeout = -1;
		if (r->prompt) {
			np = prompt_poll(r->prompt, p + 2 + n);
			timeout = prompt_timeout(r->prompt);
		}
		if (r->hung_up) {
			int64_t left = HANGUP_GRACE_MS - ms_since(&r->hup_at);
			if (left <= 0)
				return -ETIMEDOUT;
			if (timeout < 0 || left < timeout)
				timeout = (int)left;
		}
		if (poll(p, 2 + n + np, timeout) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		relay_ready(r, p + 2, idx, n);
		if (r->prompt) {
			prompt_ready(r->prompt, p + 2 + n, np);
			if (prompt_hung_up(r->prompt))
				hang_up(r);
		}
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(r->sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			int sig = (int)si.ssi_signo;
			if (sig == SIGWINCH) {
				relay_winsize(r->ws_fd, r->master);
				if (r->prompt)
					prompt_winch(r->prompt);
			} else if (r->box_id[0]) {
				/* At a terminal Ctrl-C is a byte; SIGINT from kill is still forwarded. */
				if (sig == SIGHUP)
					r->hup_sent = true;
				(void)send_control(r->fd, r->box_id, sig);
			} else {
				/* Before the box exists: give up; boxd sees us go and cleans up. */
				r->pending_sig = sig;
				return -EINTR;
			}
		}
	}
}

/*
 * After RunExit everything in the box is dead: move what the pipes and the
 * master still hold to their ends, to EOF. stdin is not read any more. A
 * source that stays silent DRAIN_IDLE_MS (only something outside the box
 * could still hold a pipe's other end) is given up; a slow reader of ours
 * is waited for, as `cat` would.
 */
static void
relay_drain(struct run *r)
{
	stream_stop(&r->st[S_STDIN]);
	stream_stop(&r->st[S_KEYS]);
	if (!r->relaying)
		return;
	for (;;) {
		struct pollfd p[S_N + 1];
		int idx[S_N + 1];
		unsigned n = 0;
		bool reading = false;
		for (int i = 0; i < S_N; i++)
			if (stream_poll(&r->st[i], &p[n])) {
				reading |= !r->st[i].polled_out;
				idx[n++] = i;
			}
		if (n == 0)
			return;
		int k = poll(p, n, reading ? DRAIN_IDLE_MS : -1);
		if (k < 0 && errno != EINTR)
			return;
		if (k == 0) {
			for (unsigned j = 0; j < n; j++)
				if (!r->st[idx[j]].polled_out)
					stream_stop(&r->st[idx[j]]);
			continue;
		}
		for (unsigned j = 0; j < n; j++) {
			stream_ready(&r->st[idx[j]], p[j].revents);
			if (r->st[idx[j]].hangup && !r->hung_up) {
				r->hung_up = true;
				relay_tty_restore();
				r->st[S_SCREEN].to = -1;
			}
		}
	}
}

static void
relay_free(struct run *r)
{
	for (int i = 0; i < S_N; i++)
		stream_stop(&r->st[i]);
	for (int i = 0; i < 3; i++)
		r->box_end[i] = safe_close(r->box_end[i]);
	r->master = safe_close(r->master);
}

/* cmd_run's steps return an exit code, or RUN_GO_ON to take the next step. */
#define RUN_GO_ON (-1)

static int
run_parse_args(struct run *r, int argc, char **argv, const char **path)
{
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "detach", no_argument, NULL, 'd' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "timings", no_argument, NULL, 't' },
		{ "embedded", no_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "+c:qh", lo, NULL)) != -1) {
		switch (ch) {
		case 'c':
			*path = optarg;
			break;
		case 'q':
			r->quiet = true;
			break;
		case 'd':
			r->detach = true;
			break;
		case 'n':
			r->dry_run = true;
			break;
		case 't':
			r->timings = true;
			break;
		case 'e':
			r->embedded = true;
			break;
		case 'h':
			printf("usage: boxctl run [-c box.ini] [-q] [--timings] [--embedded] [--detach | --dry-run] "
			       "[-- ARGS...]\n");
			return BOXCTL_EXIT_OK;
		default:
			return usage();
		}
	}
	if (r->detach && r->dry_run) {
		fprintf(stderr, "boxctl: error: run: --detach and --dry-run exclude each other\n");
		return BOXCTL_EXIT_USAGE;
	}
	r->extra_args = argv + optind;
	r->n_extra_args = (size_t)(argc - optind);
	return RUN_GO_ON;
}

/* Signals go through a signalfd from here on (and are unblocked in children). */
static int
run_signals(struct run *r)
{
	r->sfd = relay_signalfd();
	if (r->sfd < 0) {
		fprintf(stderr, "boxctl: error: signalfd: %s\n", strerror(-r->sfd));
		return BOXCTL_EXIT_FAILURE;
	}
	signal(SIGPIPE, SIG_IGN);
	return RUN_GO_ON;
}

/* The service (tried first: the config's checks depend on it), the config, its policy, the spec. */
static int
run_load(struct run *r, const char *path)
{
	r->service = client_service_path();
	r->fd = r->embedded ? -ENOENT : client_connect(r->service);
	r->service_err = r->fd < 0 ? -r->fd : 0;
	if (r->service_err == EACCES || r->service_err == EPERM) {
		/* The socket's mode refuses us (packaging/systemd/boxd.socket.in: 0660, box-clients). */
		const struct passwd *pw = getpwuid(getuid());
		fprintf(stderr,
			"boxctl: error: the boxd service at %s refuses you (%s): its socket is for the "
			"group box-clients. Join it (as root: usermod -aG box-clients %s; then log in "
			"again), or run a private boxd for this box with `boxctl run --embedded`\n",
			r->service, strerror(r->service_err), pw ? pw->pw_name : "USER");
		return BOXCTL_EXIT_FAILURE;
	}

	/* Loaded exactly as `boxctl check` loads it, or nothing starts (exit 2). */
	long n_rules = 0;
	struct bp_diags *warnings = NULL;
	int k = box_load(path, r->fd >= 0, &r->cfg, &r->spec, &n_rules, &warnings);
	if (k != BOXCTL_EXIT_OK)
		return k;
	check_print_policy_warnings(r->cfg, warnings);
	bp_diags_free(warnings);
	r->t_checked = usec_now();
	return RUN_GO_ON;
}

/* No service answered: an embedded boxd for this box. */
static int
run_embedded(struct run *r)
{
	if (r->fd >= 0) {
		r->t_connected = r->t_checked; /* connected before the check (run_load) */
		return RUN_GO_ON;
	}
	char where[3 * PATH_MAX];
	int k = client_start_embedded(&r->fd, &r->embedded_pid, where, sizeof(where));
	r->t_connected = usec_now();
	if (k < 0) {
		fprintf(stderr, "boxctl: error: no boxd answers at %s and an embedded boxd cannot "
			"start (%s): %s\n", r->service, where, strerror(-k));
		return BOXCTL_EXIT_FAILURE;
	}
	if (r->embedded) {
		if (!r->quiet)
			fprintf(stderr, "box: --embedded: starting an embedded boxd for this box\n");
	} else if (r->service_err != ENOENT && r->service_err != ECONNREFUSED)
		/* A socket there that fails otherwise (EACCES/EPERM ended above): say why we do not use it. */
		fprintf(stderr, "box: cannot use the boxd service at %s: %s; starting an "
			"embedded boxd for this box\n",
			r->service, strerror(r->service_err));
	else if (!r->quiet)
		fprintf(stderr, "box: no boxd service at %s; starting an embedded boxd for this box\n",
			r->service);
	return RUN_GO_ON;
}

/* Not detached: which fds are terminals, the pipes for the others, the window size. */
static int
run_stdio(struct run *r, Box__RunRequest *req, int stdio[3], unsigned *n_stdio)
{
	for (int i = 0; i < 3; i++)
		if (isatty(i) == 1)
			r->tty_mask |= 1u << i;
	int k = stdio_pipes(r);
	if (k < 0) {
		fprintf(stderr, "boxctl: error: pipe: %s\n", strerror(-k));
		return BOXCTL_EXIT_FAILURE;
	}
	for (int i = 0; i < 3; i++)
		if (r->box_end[i] >= 0)
			stdio[(*n_stdio)++] = r->box_end[i];
	req->has_n_stdio_fds = 1;
	req->n_stdio_fds = *n_stdio;
	req->has_stdio_tty = 1;
	req->stdio_tty = r->tty_mask;
	unsigned rows, cols;
	if (relay_term_fds(r->tty_mask, &r->term_fd, &r->ws_fd, &rows, &cols)) {
		req->has_rows = req->has_cols = 1;
		req->rows = rows;
		req->cols = cols;
	}
	return RUN_GO_ON;
}

static int
run_send_request(struct run *r)
{
	Box__RunRequest req = BOX__RUN_REQUEST__INIT;
	int stdio[3];
	unsigned n_stdio = 0;
	int k;

	req.spec = r->spec;
	req.extra_args = r->extra_args;
	req.n_extra_args = r->n_extra_args;
	req.has_detach = req.has_quiet = 1;
	req.detach = r->detach;
	req.quiet = r->quiet;
	req.has_dry_run = r->dry_run;
	req.dry_run = r->dry_run;
	req.has_timings = r->timings;
	req.timings = r->timings;
	for (int i = 0; i < S_N; i++)
		stream_init(&r->st[i], "", -1, -1);
	/* A dry run starts no agent: no streams, no terminal. */
	if (!r->detach && !r->dry_run && (k = run_stdio(r, &req, stdio, &n_stdio)) != RUN_GO_ON)
		return k;
	/*
	 * Stamped as the send starts: boxd may receive it and stamp its own first step
	 * before this process runs again, and --timings takes a first step of boxd's
	 * earlier than this for another clock's and shifts boxd's steps (print_timings).
	 */
	uint64_t t_send = usec_now();
	k = box_ipc_send(r->fd, &box_proto_client, BOX__MSG_TYPE__MSG_RUN_REQUEST, 1, &req.base,
			 stdio, n_stdio);
	/* boxd has its own copies now: the box's ends must not stay open here (EOF). */
	for (int i = 0; i < 3; i++)
		r->box_end[i] = safe_close(r->box_end[i]);
	if (k < 0) {
		fprintf(stderr, "boxctl: error: sending the request to boxd: %s\n", strerror(-k));
		return BOXCTL_EXIT_FAILURE;
	}
	r->t_sent = t_send;
	return RUN_GO_ON;
}

/* RunReply not OK: the problems and why; exit 2 for a refusal. */
static int
run_refused(const struct run *r, const Box__RunReply *rep)
{
	print_problems(r->cfg, r->spec, rep->problems, rep->n_problems);
	if (rep->status != BOX__REPLY_STATUS__REPLY_REFUSED) {
		fprintf(stderr, "boxctl: error: %s\n", rep->error ? rep->error : "the box could not start");
		return BOXCTL_EXIT_FAILURE;
	}
	if (rep->error)
		fprintf(stderr, "boxctl: error: %s\n", rep->error);
	if (!rep->n_problems && !rep->error)
		fprintf(stderr, "boxctl: error: boxd refused the box\n");
	return BOXCTL_EXIT_USAGE;
}

/* The start-up disclosure (RunStarting) until the first other message, in *m. */
static int
run_wait_started(struct run *r, struct box_ipc_chan *chan, struct box_ipc_msg *m)
{
	int k;

	for (;;) {
		k = wait_message(r, chan, m);
		if (k < 0 || m->type != BOX__MSG_TYPE__MSG_RUN_STARTING)
			break;
		const Box__RunStarting *st = (const Box__RunStarting *)m->msg;
		for (size_t i = 0; i < st->n_disclosure; i++)
			fprintf(stderr, "box: %s\n", st->disclosure[i]);
		fflush(stderr);
		box_ipc_msg_done(m);
	}
	if (k == -EINTR)
		return 128 + r->pending_sig;
	if (k < 0) {
		fprintf(stderr, "boxctl: error: boxd: %s\n",
			k == -ECONNRESET ? "the connection closed before the box started" :
					   strerror(-k));
		return BOXCTL_EXIT_FAILURE;
	}
	if (m->type == BOX__MSG_TYPE__MSG_ERROR_REPLY) {
		fprintf(stderr, "boxctl: error: boxd: %s\n", ((Box__ErrorReply *)m->msg)->message);
		return BOXCTL_EXIT_FAILURE;
	}
	if (m->type != BOX__MSG_TYPE__MSG_RUN_REPLY) {
		fprintf(stderr, "boxctl: error: boxd sent %s before RunReply\n",
			box_ipc_type_name(&box_proto_client, m->type));
		return BOXCTL_EXIT_FAILURE;
	}
	return RUN_GO_ON;
}

/* 1. RunReply: started, refused, busy or failed (after the disclosure, RunStarting). */
static int
run_wait_reply(struct run *r, struct box_ipc_chan *chan)
{
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	int code = run_wait_started(r, chan, &m);

	if (code != RUN_GO_ON)
		goto out;
	const Box__RunReply *rep = (const Box__RunReply *)m.msg;
	if (rep->status != BOX__REPLY_STATUS__REPLY_OK) {
		code = run_refused(r, rep);
		goto out;
	}
	if (rep->dry_run != r->dry_run) {
		/* A box that started when only a dry run was asked for (or the reverse). */
		fprintf(stderr, "boxctl: error: boxd answered a %s with a %s\n",
			r->dry_run ? "dry run" : "run", rep->dry_run ? "dry run" : "started box");
		code = BOXCTL_EXIT_FAILURE;
		goto out;
	}
	r->t_reply = usec_now();
	snprintf(r->box_id, sizeof(r->box_id), "%s", rep->box_id);
	if (r->timings)
		print_timings(r, rep);
	if (rep->pty && m.n_fds == 1)
		r->master = TAKE_FD(m.fds[0]);
	if (r->detach || r->dry_run) {
		for (size_t i = 0; i < rep->n_disclosure; i++)
			fprintf(stderr, "box: %s\n", rep->disclosure[i]);
		if (r->dry_run)
			fprintf(stderr, "box: dry run: the agent was not started; box %s (%s) is "
				"torn down\n", r->cfg->box.name.value, r->box_id);
		else
			printf("%s\n", r->box_id);
		code = fflush(stdout) == 0 ? BOXCTL_EXIT_OK : BOXCTL_EXIT_FAILURE;
	}
out:
	box_ipc_msg_done(&m);
	return code;
}

/* RunExit → boxctl's exit status (the agent's, 128+N, 124 for a timeout). */
static int
run_exit_code(const struct run *r, const Box__RunExit *x)
{
	int code;

	if (x->error)
		fprintf(stderr, "boxctl: error: %s\n", x->error);
	if (x->stopped)
		fprintf(stderr, "boxctl: box %s was stopped: %s\n", r->cfg->box.name.value,
			x->stopped);
	if (x->timed_out) {
		char t[32];
		format_duration(r->cfg->box.timeout_ms.value, t, sizeof(t));
		fprintf(stderr, "boxctl: error: box %s timed out after %s\n", r->cfg->box.name.value, t);
		code = 124;
	} else if (x->has_exit_status)
		code = x->exit_status & 0xff;
	else if (x->has_signal)
		code = 128 + x->signal;
	else
		code = BOXCTL_EXIT_FAILURE;
	if (x->oom_killed)
		print_oom(r->cfg, x);
	return code;
}

/* 2. Running: relay stdio, the terminal and signals until RunExit. */
static int
run_relay_until_exit(struct run *r, struct box_ipc_chan *chan)
{
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	int code = BOXCTL_EXIT_FAILURE;

	relay_start(r);
	int k = wait_message(r, chan, &m);
	if (k == -ETIMEDOUT) {
		/* Hung up and still running: leaving makes boxd kill the box. */
		relay_tty_restore();
		return 128 + SIGHUP;
	}
	if (k < 0) {
		relay_tty_restore();
		fprintf(stderr, "boxctl: error: boxd: %s\n",
			k == -ECONNRESET ? "the connection closed while the box ran" : strerror(-k));
		return BOXCTL_EXIT_FAILURE;
	}
	/* Everything the agent wrote, before boxctl's own last words. */
	if (r->prompt)
		prompt_finish(r->prompt);
	if (m.type == BOX__MSG_TYPE__MSG_RUN_EXIT)
		relay_drain(r);
	relay_tty_restore();
	if (m.type != BOX__MSG_TYPE__MSG_RUN_EXIT)
		fprintf(stderr, "boxctl: error: boxd sent %s instead of RunExit\n",
			box_ipc_type_name(&box_proto_client, m.type));
	else
		code = run_exit_code(r, (const Box__RunExit *)m.msg);
	box_ipc_msg_done(&m);
	return code;
}

/* The request, the reply, and (not detached) the run itself. */
static int
run_box(struct run *r)
{
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *chan = NULL;
	uint32_t allowed[] = { BOX__MSG_TYPE__MSG_RUN_STARTING, BOX__MSG_TYPE__MSG_RUN_REPLY,
			       BOX__MSG_TYPE__MSG_RUN_EXIT, BOX__MSG_TYPE__MSG_ERROR_REPLY,
			       BOX__MSG_TYPE__MSG_ASK_REPLY };
	int code = run_send_request(r);

	if (code != RUN_GO_ON)
		return code;
	chan = box_ipc_chan_new(r->fd, &box_proto_client, BOX_CLIENT_ROLE_BOXD);
	if (!chan || box_ipc_chan_allow(chan, allowed, ELEMENTSOF(allowed)) < 0) {
		fprintf(stderr, "boxctl: error: out of memory\n");
		return BOXCTL_EXIT_FAILURE;
	}
	code = run_wait_reply(r, chan);
	if (code != RUN_GO_ON)
		return code;
	return run_relay_until_exit(r, chan);
}

/*
 * The embedded boxd exits once its box is gone (it told us the end first):
 * reap it, waiting at most EMBEDDED_EXIT_WAIT_MS, so no zombie is left behind.
 * Its pidfd wakes us the moment it exits (a sleep-and-retry loop cost every
 * `boxctl run` a 10 ms sleep: boxd is still tidying up when RunExit arrives).
 */
static void
embedded_reap(pid_t pid)
{
	int st;
	pid_t p;

	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd >= 0) {
		struct pollfd w = { .fd = pfd, .events = POLLIN };
		int k;
		do
			k = poll(&w, 1, EMBEDDED_EXIT_WAIT_MS);
		while (k < 0 && errno == EINTR);
		close(pfd);
		do
			p = waitpid(pid, &st, WNOHANG);
		while (p < 0 && errno == EINTR);
		return;
	}
	/* No pidfd (a kernel before 5.3): poll its exit, 1 ms apart. */
	for (int i = 0; i < EMBEDDED_EXIT_WAIT_MS; i++) {
		p = waitpid(pid, &st, WNOHANG);
		if (p == pid || (p < 0 && errno != EINTR))
			return;
		struct timespec ts = { 0, 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

static void
run_finish(struct run *r)
{
	relay_tty_restore();
	prompt_free(r->prompt);
	r->prompt = NULL;
	relay_free(r);
	if (r->fd >= 0)
		close(r->fd);
	if (r->embedded_pid > 0 && !r->detach)
		embedded_reap(r->embedded_pid);
	box_spec_free(r->spec);
	box_config_free(r->cfg);
	safe_close(r->sfd);
}

int
cmd_run(int argc, char **argv)
{
	struct run r = { .fd = -1, .sfd = -1, .ws_fd = -1, .term_fd = -1, .master = -1,
			 .box_end = { -1, -1, -1 }, .embedded_pid = -1, .t_started = usec_now() };
	const char *path = "box.ini";
	int code = run_parse_args(&r, argc, argv, &path);

	if (code != RUN_GO_ON)
		return code;
	if ((code = run_signals(&r)) != RUN_GO_ON)
		return code;
	if ((code = run_load(&r, path)) == RUN_GO_ON && (code = run_embedded(&r)) == RUN_GO_ON)
		code = run_box(&r);
	run_finish(&r);
	return code;
}
