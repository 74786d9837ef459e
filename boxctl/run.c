/*
 * run.c — `boxctl run [-c box.ini] [-q] [--detach] [-- ARGS...]` (CLI.md).
 *
 * Loads box.ini and the policy as the caller, exactly as `check` does (a
 * refusal exits 2 before any boxd is contacted), sends it as a BoxSpec to
 * the service boxd or to an embedded boxd it starts (saying so in one line
 * on stderr, and why when the service socket refused the caller), with its
 * stdin, stdout and stderr, and exits with the agent's status (128+N for
 * signal N); 1 with `boxctl: error: …` when the box cannot start (including
 * `sandbox setup failed at <step>: <reason>`), 2 for a load refusal, 124
 * when [box] timeout stopped it; an OOM kill in the box's memory cgroup is
 * named with memory_max (`box: the agent was killed: out of memory …`). SIGINT, SIGTERM and SIGHUP are forwarded to
 * the agent (RunControl); at a terminal the terminal is put in raw mode
 * (boxd relays the box's pty), Ctrl-C arrives as a byte, and window-size
 * changes are forwarded. If boxctl dies, boxd sees the channel close and
 * kills the whole box. --detach prints the box ID once the agent has
 * exec'd and exits 0; the agent's output goes to STATE_DIR/agent.log.
 * Trusts: nothing in box.ini (box_config_load checks it); boxd's replies
 * only after box_ipc_decode() validated them.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "boxpolicy.h"
#include "cleanup.h"
#include "client.h"
#include "commands.h"
#include "config.h"
#include "spec.h"

static struct termios saved_tio;
static bool raw_mode;

static void
tty_restore(void)
{
	if (raw_mode) {
		(void)tcsetattr(0, TCSADRAIN, &saved_tio);
		raw_mode = false;
	}
}

static void
tty_raw(void)
{
	struct termios t;
	if (tcgetattr(0, &saved_tio) < 0)
		return;
	t = saved_tio;
	cfmakeraw(&t);
	if (tcsetattr(0, TCSADRAIN, &t) == 0) {
		raw_mode = true;
		atexit(tty_restore);
	}
}

static int
usage(void)
{
	fprintf(stderr, "usage: boxctl run [-c box.ini] [-q] [--detach] [-- ARGS...]\n");
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

static void
print_problems(const struct box_config *cfg, const Box__BoxSpec *spec, Box__Problem **p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const Box__Problem *x = p[i];
		const char *file = NULL;
		if (x->has_file && x->file == 0)
			file = cfg->path;
		else if (x->has_file && x->file < spec->n_files)
			file = spec->files[x->file];
		const char *sev =
			x->severity == BOX__PROBLEM__SEVERITY__SEVERITY_WARNING ? "warning" : "error";
		fputs("boxctl: ", stderr);
		if (file && x->has_line && x->has_column)
			fprintf(stderr, "%s:%u:%u: %s: ", file, x->line, x->column, sev);
		else if (file && x->has_line && x->line)
			fprintf(stderr, "%s:%u: ", file, x->line);
		else if (file)
			fprintf(stderr, "%s: ", file);
		if (x->section && x->key)
			fprintf(stderr, "[%s] %s: ", x->section, x->key);
		else if (x->section)
			fprintf(stderr, "[%s]: ", x->section);
		fprintf(stderr, "%s\n", x->message);
	}
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
send_control(int fd, const char *box_id, int sig, bool winsize)
{
	Box__RunControl m = BOX__RUN_CONTROL__INIT;
	m.box_id = (char *)box_id;
	if (sig) {
		m.has_signal = 1;
		m.signal = sig;
	}
	struct winsize ws;
	if (winsize && ioctl(0, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
		m.has_rows = m.has_cols = 1;
		m.rows = ws.ws_row;
		m.cols = ws.ws_col;
	}
	if (!m.has_signal && !m.has_rows)
		return 0;
	return box_ipc_send(fd, BOX__MSG_TYPE__MSG_RUN_CONTROL, 0, &m.base, NULL, 0);
}

struct run {
	struct box_config *cfg;
	Box__BoxSpec *spec;
	int fd;
	int sfd;              /* signalfd */
	bool tty, detach, quiet;
	char box_id[16];
	int pending_sig;      /* a signal that came before the box id */
};

/* Wait for one message from boxd while handling signals. */
static int
wait_message(struct run *r, struct box_ipc_chan *chan, struct box_ipc_msg *m)
{
	for (;;) {
		int k = box_ipc_recv(chan, m);
		if (k == 1)
			return 1;
		if (k == 0 || k == -EINTR)
			continue;
		if (k != -EAGAIN)
			return k;
		struct pollfd p[2] = { { .fd = r->fd, .events = POLLIN },
				       { .fd = r->sfd, .events = POLLIN } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(r->sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			int sig = (int)si.ssi_signo;
			if (sig == SIGWINCH) {
				if (r->box_id[0] && r->tty)
					(void)send_control(r->fd, r->box_id, 0, true);
			} else if (r->box_id[0]) {
				/* At a terminal Ctrl-C is a byte; SIGINT from kill is still forwarded. */
				(void)send_control(r->fd, r->box_id, sig, false);
			} else {
				/* Before the box exists: give up; boxd sees us go and cleans up. */
				r->pending_sig = sig;
				return -EINTR;
			}
		}
	}
}

int
cmd_run(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "detach", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = "box.ini";
	struct run r = { .fd = -1, .sfd = -1 };
	int ch, k, code = BOXCTL_EXIT_FAILURE;
	pid_t embedded_pid = -1;
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *chan = NULL;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "+c:qh", lo, NULL)) != -1) {
		switch (ch) {
		case 'c':
			path = optarg;
			break;
		case 'q':
			r.quiet = true;
			break;
		case 'd':
			r.detach = true;
			break;
		case 'h':
			printf("usage: boxctl run [-c box.ini] [-q] [--detach] [-- ARGS...]\n");
			return BOXCTL_EXIT_OK;
		default:
			return usage();
		}
	}

	/* Signals go through a signalfd from here on (and are unblocked in children). */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGWINCH);
	sigprocmask(SIG_BLOCK, &set, NULL);
	r.sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (r.sfd < 0) {
		fprintf(stderr, "boxctl: error: signalfd: %s\n", strerror(errno));
		return BOXCTL_EXIT_FAILURE;
	}
	signal(SIGPIPE, SIG_IGN);

	/* The service, or an embedded boxd (after the config loaded). */
	const char *service = client_service_path();
	r.fd = client_connect(service);
	int service_err = r.fd < 0 ? -r.fd : 0;

	struct box_config_options opts = { .service = r.fd >= 0 };
	struct box_config_errors errs = { 0 };
	k = box_config_load(path, &opts, &r.cfg, &errs);
	if (k == -EINVAL) {
		box_config_errors_print(stderr, &errs);
		box_config_errors_clear(&errs);
		code = BOXCTL_EXIT_USAGE;
		goto out;
	}
	if (k < 0) {
		fprintf(stderr, "boxctl: error: %s: %s\n", path, strerror(-k));
		goto out;
	}
	/* The policy loads exactly as `boxctl check` loads it, or nothing starts (exit 2). */
	long n_rules = 0;
	struct bp_diags *warnings = NULL;
	k = check_policy(r.cfg, &n_rules, &warnings);
	check_print_policy_warnings(r.cfg, warnings);
	bp_diags_free(warnings);
	if (k != BOXCTL_EXIT_OK) {
		code = k;
		goto out;
	}
	char cwd[4096];
	if (!getcwd(cwd, sizeof(cwd))) {
		fprintf(stderr, "boxctl: error: getcwd: %s\n", strerror(errno));
		goto out;
	}
	box_spec_from_config(r.cfg, cwd, &r.spec);

	if (r.fd < 0) {
		k = client_start_embedded(&r.fd, &embedded_pid);
		if (k < 0) {
			fprintf(stderr, "boxctl: error: no boxd answers at %s and an embedded boxd cannot start: %s\n",
				service, strerror(-k));
			goto out;
		}
		if (service_err != ENOENT && service_err != ECONNREFUSED)
			/* A socket that is there but refuses us (EACCES…): say why we do not use it. */
			fprintf(stderr, "box: cannot use the boxd service at %s: %s; starting an "
				"embedded boxd for this box\n",
				service, strerror(service_err));
		else if (!r.quiet)
			fprintf(stderr, "box: no boxd service at %s; starting an embedded boxd for this box\n",
				service);
	}

	Box__RunRequest req = BOX__RUN_REQUEST__INIT;
	req.spec = r.spec;
	req.extra_args = argv + optind;
	req.n_extra_args = (size_t)(argc - optind);
	req.has_detach = req.has_quiet = 1;
	req.detach = r.detach;
	req.quiet = r.quiet;
	int stdio[3] = { 0, 1, 2 };
	if (!r.detach) {
		req.has_n_stdio_fds = 1;
		req.n_stdio_fds = 3;
		r.tty = isatty(0) == 1;
		req.has_tty = 1;
		req.tty = r.tty;
		struct winsize ws;
		if (r.tty && ioctl(0, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
			req.has_rows = req.has_cols = 1;
			req.rows = ws.ws_row;
			req.cols = ws.ws_col;
		}
	}
	k = box_ipc_send(r.fd, BOX__MSG_TYPE__MSG_RUN_REQUEST, 1, &req.base, stdio,
			 r.detach ? 0 : 3);
	if (k < 0) {
		fprintf(stderr, "boxctl: error: sending the request to boxd: %s\n", strerror(-k));
		goto out;
	}

	chan = box_ipc_chan_new(r.fd);
	uint32_t allowed[] = { BOX__MSG_TYPE__MSG_RUN_REPLY, BOX__MSG_TYPE__MSG_RUN_EXIT,
			       BOX__MSG_TYPE__MSG_ERROR_REPLY };
	if (!chan || box_ipc_chan_allow(chan, allowed, ELEMENTSOF(allowed)) < 0) {
		fprintf(stderr, "boxctl: error: out of memory\n");
		goto out;
	}

	/* 1. RunReply: started, refused, busy or failed. */
	k = wait_message(&r, chan, &m);
	if (k < 0) {
		if (k == -EINTR)
			code = 128 + r.pending_sig;
		else
			fprintf(stderr, "boxctl: error: boxd: %s\n",
				k == -ECONNRESET ? "the connection closed before the box started" :
						   strerror(-k));
		goto out;
	}
	if (m.type == BOX__MSG_TYPE__MSG_ERROR_REPLY) {
		fprintf(stderr, "boxctl: error: boxd: %s\n", ((Box__ErrorReply *)m.msg)->message);
		box_ipc_msg_done(&m);
		goto out;
	}
	if (m.type != BOX__MSG_TYPE__MSG_RUN_REPLY) {
		fprintf(stderr, "boxctl: error: boxd sent %s before RunReply\n",
			box_ipc_type_name(m.type));
		box_ipc_msg_done(&m);
		goto out;
	}
	const Box__RunReply *rep = (const Box__RunReply *)m.msg;
	switch (rep->status) {
	case BOX__REPLY_STATUS__REPLY_OK:
		break;
	case BOX__REPLY_STATUS__REPLY_REFUSED:
		print_problems(r.cfg, r.spec, rep->problems, rep->n_problems);
		if (rep->error)
			fprintf(stderr, "boxctl: error: %s\n", rep->error);
		if (!rep->n_problems && !rep->error)
			fprintf(stderr, "boxctl: error: boxd refused the box\n");
		code = BOXCTL_EXIT_USAGE;
		box_ipc_msg_done(&m);
		goto out;
	case BOX__REPLY_STATUS__REPLY_BUSY:
	case BOX__REPLY_STATUS__REPLY_FAILED:
	case BOX__REPLY_STATUS__REPLY_NOT_FOUND:
	case BOX__REPLY_STATUS__REPLY_DENIED:
	case _BOX__REPLY_STATUS_IS_INT_SIZE:
	default:
		print_problems(r.cfg, r.spec, rep->problems, rep->n_problems);
		fprintf(stderr, "boxctl: error: %s\n", rep->error ? rep->error : "the box could not start");
		box_ipc_msg_done(&m);
		goto out;
	}
	snprintf(r.box_id, sizeof(r.box_id), "%s", rep->box_id);
	if (r.detach) {
		for (size_t i = 0; i < rep->n_disclosure; i++)
			fprintf(stderr, "box: %s\n", rep->disclosure[i]);
		printf("%s\n", r.box_id);
		box_ipc_msg_done(&m);
		code = fflush(stdout) == 0 ? BOXCTL_EXIT_OK : BOXCTL_EXIT_FAILURE;
		goto out;
	}
	box_ipc_msg_done(&m);

	/* 2. Running: relay signals (and the terminal, through boxd) until RunExit. */
	if (r.tty) {
		tty_raw();
		(void)send_control(r.fd, r.box_id, 0, true);
	}
	k = wait_message(&r, chan, &m);
	tty_restore();
	if (k < 0) {
		fprintf(stderr, "boxctl: error: boxd: %s\n",
			k == -ECONNRESET ? "the connection closed while the box ran" : strerror(-k));
		goto out;
	}
	if (m.type != BOX__MSG_TYPE__MSG_RUN_EXIT) {
		fprintf(stderr, "boxctl: error: boxd sent %s instead of RunExit\n",
			box_ipc_type_name(m.type));
		box_ipc_msg_done(&m);
		goto out;
	}
	const Box__RunExit *x = (const Box__RunExit *)m.msg;
	if (x->error)
		fprintf(stderr, "boxctl: error: %s\n", x->error);
	if (x->timed_out) {
		char t[32];
		format_duration(r.cfg->box.timeout_ms.value, t, sizeof(t));
		fprintf(stderr, "boxctl: error: box %s timed out after %s\n", r.cfg->box.name.value, t);
		code = 124;
	} else if (x->has_exit_status)
		code = x->exit_status & 0xff;
	else if (x->has_signal)
		code = 128 + x->signal;
	else
		code = BOXCTL_EXIT_FAILURE;
	if (x->oom_killed)
		print_oom(r.cfg, x);
	box_ipc_msg_done(&m);
out:
	tty_restore();
	if (r.fd >= 0)
		close(r.fd);
	if (embedded_pid > 0 && !r.detach) {
		/* The embedded boxd exits once its box is gone; do not leave a zombie behind. */
		for (int i = 0; i < 300; i++) {
			int st;
			pid_t p = waitpid(embedded_pid, &st, WNOHANG);
			if (p == embedded_pid || (p < 0 && errno != EINTR))
				break;
			struct timespec ts = { 0, 10 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
	}
	box_spec_free(r.spec);
	box_config_free(r.cfg);
	safe_close(r.sfd);
	return code;
}
