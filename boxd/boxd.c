/* SPDX-License-Identifier: Apache-2.0 */
/*
 * boxd.c — the box daemon: builds sandboxes, spawns, reaps; nothing else.
 *
 *   boxd --listen PATH   service mode: many boxes, clients on a
 *                        SOCK_SEQPACKET socket at PATH (0660, group
 *                        box-clients when it exists), or on fd 3 when
 *                        socket-activated (LISTEN_PID/LISTEN_FDS); READY=1
 *                        to $NOTIFY_SOCKET when it is set
 *   boxd --embedded      one box for the boxctl that started it: the client
 *                        channel is fd 3; also listens on BASE/ID/boxd.sock
 *                        (ps, stop, log); exits when the box has ended
 *
 * Clients (accept, requests, replies) are client.c's; one box's life is
 * box.c's, which reports back through the hooks set here (struct
 * box_hooks). main() is one straight line of named steps.
 * Trusts: its own executable's directory (helpers), its own environment
 * and command line.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boxd.h"
#include "cleanup.h"
#include "fdutil.h"
#include "ipc.h"
#include "log.h"
#include "parse.h"
#include "path.h"
#include "peer.h"
#include "testhook.h"
#include "validate.h"

/* Give queued replies (RunExit…) a moment to leave, then leave the loop. */
static void
loop_exit_soon(struct boxd *d, bool replies_queued)
{
	struct timeval tv = { 0, replies_queued ? 100 * 1000 : 0 };

	d->quitting = true;
	event_base_loopexit(d->base, &tv);
}

/*
 * A box reached its end: an embedded boxd exits when it has no box left, a
 * service boxd that was told to stop when its last box is gone.
 */
static void
boxd_box_gone(struct boxd *d)
{
	if (d->embedded)
		boxd_maybe_exit_embedded(d);
	else if (d->quitting && !d->boxes)
		loop_exit_soon(d, true);
}

void
boxd_maybe_exit_embedded(struct boxd *d)
{
	if (!d->embedded || d->n_boxes)
		return;
	bool channel = false;
	for (struct client *c = d->clients; c; c = c->next)
		channel |= c->embedded_channel;
	loop_exit_soon(d, channel);
}


/* ------------------------------------------------------------------ */
/* listening                                                           */

static int
listen_add(struct boxd *d, int fd)
{
	struct event *ev = event_new(d->base, fd, EV_READ | EV_PERSIST, on_accept, d);
	if (!ev || event_add(ev, NULL) < 0)
		return -ENOMEM;
	if (d->listen_ev) {
		/* An embedded boxd has one listener: its box's socket. */
		event_free(ev);
		return -EBUSY;
	}
	d->listen_ev = ev;
	d->listen_fd = fd;
	return 0;
}

/*
 * A listening SOCK_SEQPACKET socket at `path`, mode `mode`.
 * Race: the service socket's directory is the administrator's (--listen,
 * /run/box: root's), so the stale-socket probe, unlink and chmod there
 * follow nothing the owner of a box controls. An embedded boxd's
 * BASE/ID/boxd.sock (`owner_dir`) is in the box owner's directory, and in a
 * root boxd that runs a box for another user the owner could swap the name
 * between calls: there only bind() touches the name (it never follows a
 * symlink and fails on any existing entry), and the umask alone gives the
 * mode. BASE/ID itself cannot be replaced: BASE is boxd's.
 */
static int
listen_path(const char *path, mode_t mode, bool owner_dir)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (!owner_dir && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		/* A stale socket: remove it unless something answers there. */
		int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		bool alive = probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0;
		safe_close(probe);
		if (alive) {
			close(fd);
			return -EADDRINUSE;
		}
		(void)unlink(path);
	}
	mode_t old = umask(0777 & ~mode);
	int r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0 || (!owner_dir && chmod(path, mode) < 0) || listen(fd, 64) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

static int
boxd_listen_embedded(struct boxd *d, const char *path)
{
	int fd = listen_path(path, 0600, true);
	if (fd < 0)
		return log_warn_errno(fd, "cannot listen on %s", path);
	int r = listen_add(d, fd);
	if (r < 0)
		close(fd);
	return r;
}

/* fd 3 from systemd socket activation, when LISTEN_PID is us. */
static int
socket_activated(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	uint64_t listen_pid, n_fds;
	if (!pid || !fds || parse_u64(pid, INT_MAX, &listen_pid) < 0 ||
	    listen_pid != (uint64_t)getpid() || parse_count(fds, INT_MAX, &n_fds) < 0)
		return -1;
	int type = 0, acc = 0;
	socklen_t l = sizeof(type);
	if (getsockopt(3, SOL_SOCKET, SO_TYPE, &type, &l) < 0 || type != SOCK_SEQPACKET)
		return -1;
	l = sizeof(acc);
	if (getsockopt(3, SOL_SOCKET, SO_ACCEPTCONN, &acc, &l) < 0 || !acc)
		return -1;
	(void)fd_set_cloexec(3, true);
	(void)fd_set_nonblock(3, true);
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return 3;
}

static void
sd_notify_ready(void)
{
	const char *p = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (!p || !*p || strlen(p) >= sizeof(sa.sun_path))
		return;
	strcpy(sa.sun_path, p);
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(p));
	if (p[0] == '@')
		sa.sun_path[0] = '\0';
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	(void)sendto(fd, "READY=1", 7, MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
	close(fd);
}

/* ------------------------------------------------------------------ */
/* signals                                                             */

/*
 * The signals boxd acts on are blocked from main()'s first step on and read from a signalfd
 * in the loop: a SIGTERM that arrives while boxd starts, or between two turns of the loop,
 * waits pending until the loop reads it — it is never lost, and never ends boxd by the
 * default action before its boxes are stopped. Every child starts with nothing blocked
 * (common/spawn.c). Embedded, SIGINT and SIGHUP are ignored instead (the client forwards
 * what the user meant).
 */
static void
boxd_signals(sigset_t *set, bool embedded)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGTERM);
	if (!embedded) {
		sigaddset(set, SIGINT);
		sigaddset(set, SIGHUP);
	}
}

static void
block_signals(bool embedded)
{
	sigset_t set;

	boxd_signals(&set, embedded);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		fatal(errno, "cannot block the signals boxd reads");
	if (embedded) {
		signal(SIGINT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
	}
}

static void
on_sigterm(struct boxd *d, int sig)
{
	log_notice("signal %d: stopping every box", sig);
	d->quitting = true;
	if (!d->boxes) {
		event_base_loopexit(d->base, NULL);
		return;
	}
	/*
	 * Each box goes to its end through the loop (SIGTERM, SIGKILL after the
	 * grace period, then finishing); the last one's box_gone leaves the loop.
	 * box_stop may end a box still starting at once: the next is taken first.
	 */
	static char why[48];
	(void)snprintf(why, sizeof(why), "boxd is stopping (signal %d)", sig);
	unsigned n = 0;
	for (struct box *b = d->boxes; b; b = b->next)
		n++;
	log_notice("stopping %u box%s", n, n == 1 ? "" : "es");
	for (struct box *b = d->boxes, *next; b; b = next) {
		next = b->next;
		/* Each by name, owner and client: the operator's record of what a restart ended. */
		log_notice("stopping box %s (%s) of uid %u%s", b->name, b->id, (unsigned)b->owner.uid,
			   b->detach ? ", detached" : b->client ? ", its client attached" : "");
		if (!b->stopped)
			b->stopped = why;
		box_stop(b);
	}
}

static void
on_reap(evutil_socket_t fd, short what, void *arg)
{
	child_reap_all(arg); /* the one reaper (child.c) */
}

/*
 * Every pending signal, in the order they came. SIGCHLD reaps once for all of them, after
 * the events this turn of the loop already has: a daemon that wrote why it stops, then
 * exited, is read before it is reaped (its PolicyReady refusal, not "exited before it was
 * ready").
 */
static void
on_signals(evutil_socket_t fd, short what, void *arg)
{
	struct boxd *d = arg;
	struct signalfd_siginfo si[16];
	bool reap = false;
	ssize_t n;

	while ((n = read(fd, si, sizeof(si))) > 0) {
		for (size_t i = 0; i < (size_t)n / sizeof(si[0]); i++) {
			if (si[i].ssi_signo == SIGCHLD)
				reap = true;
			else
				on_sigterm(d, (int)si[i].ssi_signo);
		}
	}
	if (n < 0 && errno != EAGAIN && errno != EINTR)
		log_warn_errno(errno, "reading the signalfd");
	if (reap)
		event_active(d->reap_ev, EV_TIMEOUT, 0);
}

/* ------------------------------------------------------------------ */

static char *
self_dir(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	char *dir = NULL;
	return path_dirname(buf, &dir) < 0 ? NULL : dir;
}

static int
usage(FILE *f)
{
	fprintf(f, "usage: boxd --listen PATH     (service: boxes of many users)\n"
		   "       boxd --embedded        (one box; client channel on fd 3)\n");
	return f == stdout ? 0 : 2;
}

static int
box_client_send_hook(struct client *c, uint32_t type, uint64_t rid, const ProtobufCMessage *m,
		     const int *fds, unsigned n_fds)
{
	return client_send(c, type, rid, m, fds, n_fds);
}

static const struct box_hooks boxd_hooks = {
	.client_send = box_client_send_hook,
	.box_gone = boxd_box_gone,
	.listen_embedded = boxd_listen_embedded,
};

/* --listen PATH or --embedded; exits 2 (usage) on anything else. */
static const char *
parse_args(struct boxd *d, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "embedded", no_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *listen_at = NULL;
	int ch;

	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'l':
			listen_at = optarg;
			break;
		case 'e':
			d->embedded = true;
			break;
		case 'h':
			exit(usage(stdout));
		default:
			exit(usage(stderr));
		}
	}
	if (optind != argc || (!listen_at && !d->embedded) || (listen_at && d->embedded))
		exit(usage(stderr));
	if (listen_at && !path_is_clean_absolute(listen_at))
		fatalx("--listen needs an absolute path");
	return listen_at;
}

/* Who we are: root or not, our PID namespace, our directory, the runtime base. */
static void
setup_identity(struct boxd *d)
{
	if (d->embedded && !getenv("BOXD_DEBUG"))
		log_set_max_level(LOG_LEVEL_WARNING); /* boxctl shows what the user needs */
	d->root = geteuid() == 0;
	if (!d->embedded && !d->root)
		fatalx("service mode needs root (an ordinary user runs boxes with boxctl run)");
	signal(SIGPIPE, SIG_IGN);
	umask(022);
	d->self_pidns_fd = peer_pidns_open_self();
	if (d->self_pidns_fd < 0)
		fatal(d->self_pidns_fd, "cannot open /proc/self/ns/pid (needed to refuse sandboxed clients)");
	/* A test hook that only makes SO_PEERPIDFD look absent: the fallback still refuses. */
	d->peer_proc_only = getenv("BOX_TEST_NO_PEERPIDFD") != NULL;
	d->self_dir = self_dir();
	if (!d->self_dir)
		fatal(errno, "cannot find my own executable");
	if (runtime_base_prepare(!d->embedded, &d->runtime_base) < 0)
		exit(1);
}

/*
 * A test hook that only slows a step: BOX_TEST_BOXD_START_DELAY_MS (at most 10 s) holds
 * boxd before its loop exists, so that a test can send SIGTERM into that window.
 */
static void
test_start_delay(void)
{
	uint64_t ms;

	if (box_test_ms("BOX_TEST_BOXD_START_DELAY_MS", 10000, &ms) == 0 && ms > 0)
		box_sleep_ms(ms);
}

static void
setup_loop(struct boxd *d)
{
	sigset_t set;

	d->base = event_base_new();
	if (!d->base)
		fatalx("event_base_new failed");
	boxd_signals(&set, d->embedded);
	d->sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->sig_fd < 0)
		fatal(errno, "signalfd");
	d->sig_ev = event_new(d->base, d->sig_fd, EV_READ | EV_PERSIST, on_signals, d);
	d->reap_ev = event_new(d->base, -1, 0, on_reap, d);
	if (!d->sig_ev || !d->reap_ev || event_add(d->sig_ev, NULL) < 0)
		fatalx("cannot watch the signalfd");
}

/* Embedded: the client channel on fd 3 (moved above the fixed numbers). */
static void
setup_embedded_channel(struct boxd *d)
{
	int type = 0;
	socklen_t l = sizeof(type);

	if (getsockopt(3, SOL_SOCKET, SO_TYPE, &type, &l) < 0 || type != SOCK_SEQPACKET)
		fatalx("--embedded: fd 3 is not a SOCK_SEQPACKET socket (boxctl run starts me)");
	(void)fd_set_cloexec(3, true);
	int fd = fcntl(3, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		fatal(errno, "fd 3");
	close(3);
	if (!client_add(d, fd, true))
		fatalx("cannot set up the client channel");
}

/* Service: the socket from systemd, or PATH (0660, group box-clients when it exists). */
static void
setup_service_socket(struct boxd *d, const char *listen_at)
{
	/* Root reads no client byte: without box-clientd (or a user for it) no service. */
	if (client_child_check(d) < 0)
		fatalx("cannot serve clients without box-clientd");
	int fd = socket_activated();

	if (fd < 0) {
		fd = listen_path(listen_at, 0660, false);
		if (fd < 0)
			fatal(fd, "cannot listen on %s", listen_at);
		d->service_path = strdup(listen_at);
		struct group *gr = getgrnam("box-clients");
		if (gr && chown(listen_at, 0, gr->gr_gid) < 0)
			log_warn_errno(errno, "chown %s", listen_at);
	}
	if (listen_add(d, fd) < 0)
		fatalx("cannot watch the listening socket");
	log_info("listening on %s", d->service_path ? d->service_path : "a socket from systemd");
	sd_notify_ready();
}

/*
 * Whatever is left: kill it (nothing outlives boxd's boxes) and let each box
 * finish through the loop (its end is a chain of events, each bounded by a
 * timer), then free everything.
 */
static void
shutdown_all(struct boxd *d)
{
	d->quitting = true;
	for (struct box *b = d->boxes, *next; b; b = next) {
		next = b->next;
		if (b->state == BOX_CHECKING || b->state == BOX_DAEMONS)
			box_stop(b); /* the start ends (finishing, or gone at once) */
		else
			box_kill(b);
	}
	if (d->boxes)
		event_base_dispatch(d->base);
	while (d->boxes)
		box_free(d->boxes);
	while (d->clients)
		client_close(d->clients);
	recheck_spare_stop();
	spares_stop();
	client_spare_stop();
	if (d->listen_ev)
		event_free(d->listen_ev);
	safe_close(d->listen_fd);
	if (d->service_path)
		(void)unlink(d->service_path);
	if (d->sig_ev)
		event_free(d->sig_ev);
	if (d->reap_ev)
		event_free(d->reap_ev);
	safe_close(d->sig_fd);
	event_base_free(d->base);
	safe_close(d->self_pidns_fd);
	free(d->service_path);
	free(d->runtime_base);
	free(d->self_dir);
}

int
main(int argc, char **argv)
{
	struct boxd d = { .hooks = &boxd_hooks, .listen_fd = -1, .self_pidns_fd = -1, .sig_fd = -1 };

	log_init("boxd", 0);
	const char *listen_at = parse_args(&d, argc, argv);
	block_signals(d.embedded);
	setup_identity(&d);
	test_start_delay();
	setup_loop(&d);
	recheck_spare_start(&d); /* its exec beside the wait for the first request */
	spares_start(&d);        /* a service boxd's: box-policyd and box-gateway, likewise */
	client_spare_start(&d);  /* and box-clientd, ahead of the first client */
	if (d.embedded)
		setup_embedded_channel(&d);
	else
		setup_service_socket(&d, listen_at);
	event_base_dispatch(d.base);
	shutdown_all(&d);
	return 0;
}
