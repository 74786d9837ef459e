/* SPDX-License-Identifier: Apache-2.0 */
/*
 * clientd.c — a root boxd parses no byte a client wrote: every client
 * connection of a service boxd is handed to its own box-clientd
 * (box-clientd/main.c), exec'd as box-daemon (else nobody) under its own
 * seccomp filter, which decodes and validates each request and passes on a
 * canonical re-encoding. boxd's channel for the client is then its end of a
 * SOCK_SEQPACKET socketpair with that child; the rest of boxd's client
 * handling is unchanged (and still validates: privileged code re-checks).
 *
 * What root keeps for itself: SO_PEERCRED and the PID-namespace check are
 * taken on the accepted socket before the handover (boxd.c client_add), so
 * the child cannot lie about who the client is; root holds no copy of the
 * client's socket afterwards, so when the child dies (a crash in the
 * decoder, the seccomp filter) the client's connection closes with it and
 * the client sees an error, while boxd sees its channel close, drops that
 * client as for any disconnect, logs the death once (its reap, child.c)
 * and serves everyone else.
 * An embedded boxd runs as its caller and serves only that caller: it keeps
 * decoding its clients itself and starts no box-clientd.
 *
 * Started from its entry in daemon_table (daemon.c) like every daemon of
 * boxd: as box-daemon (else nobody), switched in the child before execve,
 * fd 3 = boxd's end of the channel, fd 4 = the client (common/daemon_fds.h),
 * stderr boxd's.
 * The spare: one box-clientd spawned ahead (from boxd's start, and again
 * CLIENTD_SPARE_AFTER_MS after a client took it or found none), its ids
 * switched, its privileges dropped and its filter on, waiting on fd 4 — one
 * end of a socketpair whose other end boxd keeps — for a connection: the
 * client's pid (4 bytes, for its log lines) with the connection's fd
 * (box-clientd/main.c client_take), and boxd keeps no copy, as for a fresh
 * one. So a client does not wait for box-clientd's exec. It knows nothing of
 * any client before the handover and serves exactly one. A spare that exited,
 * or whose channel or handover socket shows anything (it said something, or
 * closed), or whose handover cannot be sent, is not used: the client gets a
 * fresh one. None while BOX_TEST_DAEMON_SPARES_ABSENT is set.
 * Trusts: its own executable's directory (spawn_find_helper), the password
 * database for box-daemon's ids.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boxd.h"
#include "cleanup.h"
#include "fdutil.h"
#include "ipc.h"
#include "log.h"
#include "spawn.h"

#define CLIENTD_NAME "box-clientd"
#define CLIENTD_EXIT_REFUSED 3
/* Children outlive their client for a moment (they exit when boxd closes its end). */
#define CLIENTD_CHILDREN_MAX (2 * BOXD_CLIENTS_MAX)
#define CLIENTD_SPARE_AFTER_MS 50 /* after a client took it: that client's CPU is not shared */

/* A live child, tracked (child.h) for the one log line about its death. */
struct clientd_child {
	struct child child;
	pid_t client_pid;
	uid_t client_uid;
};
static unsigned n_children; /* one boxd per process */

static struct {
	struct clientd_child *c; /* the waiting spare, or NULL */
	int ctl;                 /* boxd's end of its fd 3 */
	int handover;            /* boxd's end of its fd 4 */
	struct spare_timer later;
} spare = { .ctl = -1, .handover = -1 };

static void
spare_drop(void)
{
	if (spare.c) {
		child_stop(&spare.c->child); /* killed and forgotten: no reap comes back here */
		n_children--;
		free(spare.c);
		spare.c = NULL;
	}
	spare.ctl = safe_close(spare.ctl);
	spare.handover = safe_close(spare.handover);
}

/* Reaped (child.c): its death logged once, unless it exited cleanly or refused. */
static void
on_reaped(struct child *ch, int status)
{
	struct clientd_child *c = ch->arg;
	pid_t pid = ch->pid;

	n_children--;
	if (c == spare.c) {
		/* The spare died while it waited: the next client spawns its own. */
		log_warn("the spare %s pid %d exited while it waited (status 0x%x)", CLIENTD_NAME,
			 (int)pid, (unsigned)status);
		spare.c = NULL;
		spare_drop();
		free(c);
		return;
	}
	if (WIFSIGNALED(status))
		log_warn("%s pid %d (client pid %d uid %u) was killed by signal %d (%s); "
			 "that client was disconnected",
			 CLIENTD_NAME, (int)pid, (int)c->client_pid, (unsigned)c->client_uid,
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else if (WIFEXITED(status) && WEXITSTATUS(status) != 0 &&
		 WEXITSTATUS(status) != CLIENTD_EXIT_REFUSED)
		log_warn("%s pid %d (client pid %d uid %u) exited with status %d", CLIENTD_NAME,
			 (int)pid, (int)c->client_pid, (unsigned)c->client_uid, WEXITSTATUS(status));
	free(c);
}

int
client_child_check(const struct boxd *d)
{
	_cleanup_free_ char *exe = NULL;
	uid_t uid;
	gid_t gid;
	int r = spawn_find_helper(d, CLIENTD_NAME, &exe);
	if (r < 0) {
		char where[2 * PATH_MAX];
		return log_err_errno(r, "cannot find %s (%s; it decodes every client's requests)",
				     CLIENTD_NAME,
				     spawn_helper_places(d, CLIENTD_NAME, where, sizeof(where)));
	}
	r = daemon_ids(d, DAEMON_CLIENTD, &uid, &gid);
	if (r < 0)
		return log_err_errno(r, "no user to run %s as (box-daemon or nobody)", CLIENTD_NAME);
	return 0;
}

static void
spare_spawn(struct boxd *d)
{
	static const char *const spare_args[] = { "-w", NULL };
	struct daemon_spawn_args args = { .fds = { -1, -1, -1, -1, -1, -1, -1 },
					  .args = spare_args };
	_cleanup_free_ char *err = NULL;
	struct clientd_child *c;
	int hv[2] = { -1, -1 }, ctl = -1;
	pid_t pid = 0;

	if (spare.c || d->embedded || d->quitting || n_children >= CLIENTD_CHILDREN_MAX ||
	    getenv("BOX_TEST_DAEMON_SPARES_ABSENT"))
		return;
	if (box_ipc_socketpair(hv, false) < 0)
		return; /* no spare: each client gets a fresh one, as without spares */
	args.fds[DAEMON_FD_CLIENT] = hv[1];
	if (!(c = calloc(1, sizeof(*c))) ||
	    daemon_spawn(d, NULL, DAEMON_CLIENTD, &args, &pid, &ctl, NULL, &err) < 0) {
		free(c);
		close(hv[0]);
		close(hv[1]);
		return;
	}
	close(hv[1]);
	c->client_pid = -1;
	child_init(&c->child, CHILD_CLIENTD, NULL, on_reaped, c);
	child_track(d, &c->child, pid);
	n_children++;
	spare.c = c;
	spare.ctl = ctl;
	spare.handover = hv[0];
}

static void
spare_later(struct boxd *d)
{
	spare_timer_arm(&spare.later, d, spare_spawn, CLIENTD_SPARE_AFTER_MS);
}

void
client_spare_start(struct boxd *d)
{
	spare_spawn(d);
}

void
client_spare_stop(void)
{
	spare_timer_stop(&spare.later);
	spare_drop();
}

/* The spare for the client CRED on *fd, when one waits and is fit: *fd is its channel then. */
static bool
spare_take(struct boxd *d, const struct ucred *cred, int *fd)
{
	struct pollfd p[2] = { { .fd = spare.ctl, .events = POLLIN },
			       { .fd = spare.handover, .events = POLLIN } };
	int32_t client_pid = (int32_t)cred->pid;

	spare_later(d); /* the next one, after this client's start */
	if (!spare.c)
		return false;
	/* Alive, and silent on both sockets (it said nothing, closed nothing). */
	if (!child_running(&spare.c->child) || poll(p, 2, 0) != 0 ||
	    box_ipc_send_packet(spare.handover, (const uint8_t *)&client_pid, sizeof(client_pid),
				fd, 1, 0) < 0) {
		spare_drop();
		return false;
	}
	struct clientd_child *c = spare.c;
	c->client_pid = cred->pid;
	c->client_uid = cred->uid;
	log_debug("client pid %d uid %u: served by the spare %s pid %d", (int)cred->pid,
		  (unsigned)cred->uid, CLIENTD_NAME, (int)c->child.pid);
	/* Root keeps no copy of the client's socket: the child's death closes it. */
	close(*fd);
	*fd = TAKE_FD(spare.ctl);
	spare.handover = safe_close(spare.handover);
	spare.c = NULL;
	return true;
}

int
client_child_start(struct boxd *d, const struct ucred *cred, int *fd)
{
	_cleanup_free_ char *err = NULL;
	struct daemon_spawn_args args = { .fds = { -1, -1, -1, -1, -1, -1, -1 } };
	char pid_s[16];
	pid_t pid = 0;
	int ctl = -1;
	struct clientd_child *c;

	if (d->embedded)
		return 0; /* the caller's own boxd: it decodes for itself */
	if (spare_take(d, cred, fd))
		return 0;
	if (n_children >= CLIENTD_CHILDREN_MAX)
		return log_warn_errno(EAGAIN, "too many %s children; refusing client pid %d",
				      CLIENTD_NAME, (int)cred->pid);
	snprintf(pid_s, sizeof(pid_s), "%d", (int)cred->pid);
	const char *const extra[] = { "-p", pid_s, NULL };
	args.fds[DAEMON_FD_CLIENT] = *fd;
	args.args = extra;
	if (!(c = calloc(1, sizeof(*c))))
		return log_err_errno(ENOMEM, "cannot start " CLIENTD_NAME);
	int r = daemon_spawn(d, NULL, DAEMON_CLIENTD, &args, &pid, &ctl, NULL, &err);
	if (r < 0) {
		free(c);
		return log_err_errno(r, "%s", err ? err : "cannot start " CLIENTD_NAME);
	}
	/* Root keeps no copy of the client's socket: the child's death closes it. */
	close(*fd);
	*fd = ctl;
	c->client_pid = cred->pid;
	c->client_uid = cred->uid;
	child_init(&c->child, CHILD_CLIENTD, NULL, on_reaped, c);
	child_track(d, &c->child, pid);
	n_children++;
	log_debug("client pid %d uid %u: served by %s pid %d", (int)cred->pid,
		  (unsigned)cred->uid, CLIENTD_NAME, (int)pid);
	return 0;
}
