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
 * Trusts: its own executable's directory (spawn_find_helper), the password
 * database for box-daemon's ids.
 */
#include <errno.h>
#include <fcntl.h>
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

/* A live child, tracked (child.h) for the one log line about its death. */
struct clientd_child {
	struct child child;
	pid_t client_pid;
	uid_t client_uid;
};
static unsigned n_children; /* one boxd per process */

/* Reaped (child.c): its death logged once, unless it exited cleanly or refused. */
static void
on_reaped(struct child *ch, int status)
{
	struct clientd_child *c = ch->arg;
	pid_t pid = ch->pid;

	n_children--;
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
