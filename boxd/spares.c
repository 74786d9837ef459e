/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spares.c — a service boxd's spare box-policyd and box-gateway
 * (docs/boxd.8.md, "Daemons"; boxd.h).
 *
 * A box's start waited for its two confined daemons to be cloned into their
 * own namespaces, given their minimal root (confine.c), exec'd and linked,
 * before either could read its init message: the longest steps of a service
 * boxd's start. So a service boxd keeps one pair spawned ahead — at its
 * start, and again SPARES_AFTER_MS after a box took it or found none (one
 * died while it waited), once that start's CPU is not shared — each daemon
 * confined, exec'd, its privileges dropped,
 * waiting for its init message without a time limit (its `-w`), and a box
 * takes the pair instead of spawning its own (policyd.c, gateway.c).
 *
 * The pair is spawned as policyd_start() spawns a box's: box-policyd with
 * one channel per peer, box-gateway with the other end of box-policyd's
 * gateway channel at its fd 4, boxd holding the other ends of the box-shell
 * and box-mcpd channels (a box without a stdio [mcp] closes the latter:
 * box-policyd reads the close, as of a peer gone). A spare knows nothing of
 * any box until its init message: it runs as its daemon's service user (one
 * for every box, never the owner), with boxd's stderr and the environment a
 * daemon spawned for no box gets. So a box takes the pair only where a
 * spawn for it would have been the same: a service boxd (an embedded one
 * gives its daemons the box's log level and, detached, its log file), the
 * same ids as now, no hook of boxd's environment naming the box, box-gateway's
 * file limit of the default max_connections. Otherwise the box spawns its
 * own, and the pair waits for the next box.
 * A spare that said anything, or whose channel closed, or whose setup or
 * exec failed, or that exited, is not one to give a box: the pair is killed
 * and the box spawns its own (whose failure, if any, is then reported as a
 * fresh spawn's). BOX_TEST_DAEMON_SPARES_ABSENT: no spares (each box spawns
 * its own, as an embedded boxd does).
 * One boxd per process: the pair is this file's.
 * Trusts: nothing the spares sent (they have not said anything yet).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include "boxd.h"
#include "cleanup.h"
#include "ipc.h"
#include "spawn.h"

#define SPARES_AFTER_MS 50 /* after a box took the pair: that start's CPU is not shared */

enum { SPARE_POLICYD, SPARE_GATEWAY, SPARE__N };

static const enum daemon_id spare_ids[SPARE__N] = { DAEMON_POLICYD, DAEMON_GATEWAY };

static struct {
	struct child child[SPARE__N];
	int ctl[SPARE__N];           /* boxd's end of each one's fd 3 */
	int exec_fd[SPARE__N];       /* its exec pipe (spawn.c), until its outcome is known */
	uid_t uid[SPARE__N];
	gid_t gid[SPARE__N];
	int peer_fd[DAEMON__N];      /* boxd's ends of box-policyd's box-shell and box-mcpd channels */
	uint64_t gateway_nofile;
	struct box *reserved;        /* took box-policyd: box-gateway is its, in this loop turn */
	struct spare_timer later;
} S = {
	.ctl = { -1, -1 },
	.exec_fd = { -1, -1 },
	.peer_fd = { -1, -1, -1, -1, -1 },
};

static void
pair_drop(void)
{
	for (int i = 0; i < SPARE__N; i++) {
		child_stop(&S.child[i]);
		S.ctl[i] = safe_close(S.ctl[i]);
		S.exec_fd[i] = safe_close(S.exec_fd[i]);
	}
	for (int i = 0; i < DAEMON__N; i++)
		S.peer_fd[i] = safe_close(S.peer_fd[i]);
	S.reserved = NULL;
}

/* One of the pair exited while it waited: the other is no use alone. */
static void
on_spare_reaped(struct child *c, int status)
{
	pair_drop();
}

/* The pair, spawned as a box's are; nothing on any failure (each box spawns its own). */
static void
pair_spawn(struct boxd *d)
{
	static const char *const spare_args[] = { "-w", NULL };
	int gw[2] = { -1, -1 }, sh[2] = { -1, -1 }, mc[2] = { -1, -1 };
	char *err = NULL;
	pid_t pid;

	if (S.ctl[SPARE_POLICYD] >= 0 || d->embedded || d->quitting ||
	    getenv("BOX_TEST_DAEMON_SPARES_ABSENT"))
		return;
	for (int i = 0; i < SPARE__N; i++)
		if (daemon_ids(d, spare_ids[i], &S.uid[i], &S.gid[i]) < 0)
			return;
	if (box_ipc_socketpair(gw, false) < 0 || box_ipc_socketpair(sh, false) < 0 ||
	    box_ipc_socketpair(mc, false) < 0)
		goto out;
	struct daemon_spawn_args pa = { .fds = { -1, -1, -1, -1, -1, -1, -1 },
					.args = spare_args,
					.exec_fd = &S.exec_fd[SPARE_POLICYD] };
	pa.fds[POLICYD_FD_GATEWAY] = gw[1];
	pa.fds[POLICYD_FD_MCPD] = mc[1];
	pa.fds[POLICYD_FD_SHELL] = sh[1];
	if (daemon_spawn(d, NULL, DAEMON_POLICYD, &pa, &pid, &S.ctl[SPARE_POLICYD], NULL, &err) < 0)
		goto out;
	child_init(&S.child[SPARE_POLICYD], CHILD_DAEMON, NULL, on_spare_reaped, NULL);
	child_track(d, &S.child[SPARE_POLICYD], pid);

	S.gateway_nofile = gateway_nofile_default();
	struct daemon_spawn_args ga = { .fds = { -1, -1, -1, -1, -1, -1, -1 },
					.args = spare_args,
					.nofile = S.gateway_nofile,
					.exec_fd = &S.exec_fd[SPARE_GATEWAY] };
	ga.fds[DAEMON_FD_POLICYD] = gw[0];
	if (daemon_spawn(d, NULL, DAEMON_GATEWAY, &ga, &pid, &S.ctl[SPARE_GATEWAY], NULL, &err) < 0) {
		pair_drop();
		goto out;
	}
	child_init(&S.child[SPARE_GATEWAY], CHILD_DAEMON, NULL, on_spare_reaped, NULL);
	child_track(d, &S.child[SPARE_GATEWAY], pid);
	S.peer_fd[DAEMON_SHELL] = TAKE_FD(sh[0]);
	S.peer_fd[DAEMON_MCPD] = TAKE_FD(mc[0]);
out:
	free(err);
	for (int i = 0; i < 2; i++) {
		safe_close(gw[i]);
		safe_close(sh[i]);
		safe_close(mc[i]);
	}
}

static void
on_spare_timer(evutil_socket_t fd, short what, void *arg)
{
	struct spare_timer *t = arg;
	t->spawn(t->d);
}

void
spare_timer_arm(struct spare_timer *t, struct boxd *d, void (*spawn)(struct boxd *d), unsigned ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)((ms % 1000) * 1000) };

	if (d->embedded)
		return;
	t->d = d;
	t->spawn = spawn;
	if (!t->ev)
		t->ev = evtimer_new(d->base, on_spare_timer, t);
	if (t->ev)
		evtimer_add(t->ev, &tv);
}

void
spare_timer_stop(struct spare_timer *t)
{
	if (t->ev) {
		event_free(t->ev);
		t->ev = NULL;
	}
}

void
spares_start(struct boxd *d)
{
	pair_spawn(d);
}

void
spares_stop(void)
{
	spare_timer_stop(&S.later);
	pair_drop();
}

static void
pair_later(struct boxd *d)
{
	spare_timer_arm(&S.later, d, pair_spawn, SPARES_AFTER_MS);
}

/* Spare I is alive, has said nothing, and its setup and exec did not fail (so far). */
static bool
spare_fit(int i)
{
	struct pollfd p = { .fd = S.ctl[i], .events = POLLIN };

	if (S.ctl[i] < 0 || !child_running(&S.child[i]) || poll(&p, 1, 0) != 0)
		return false;
	if (S.exec_fd[i] >= 0) {
		int r = spawn_exec_result(S.exec_fd[i]);
		if (r == -EAGAIN)
			return true; /* still in its exec: the box's start learns how it went */
		S.exec_fd[i] = safe_close(S.exec_fd[i]);
		if (r < 0)
			return false;
	}
	return true;
}

/* Would a spawn for box B be the pair's own? */
static bool
pair_fits_box(const struct box *b)
{
	for (int i = 0; i < SPARE__N; i++) {
		uid_t uid;
		gid_t gid;
		if (daemon_ids(b->d, spare_ids[i], &uid, &gid) < 0 || uid != S.uid[i] ||
		    gid != S.gid[i] || !daemon_env_boxless(b, spare_ids[i]))
			return false;
	}
	return !b->d->embedded && gateway_nofile(b) == S.gateway_nofile;
}

static void
spare_give(int i, struct box *b, struct spare_taken *t)
{
	t->pid = S.child[i].pid;
	child_forget(&S.child[i]); /* not reaped: the pid stays its own, now B's */
	t->ctl = TAKE_FD(S.ctl[i]);
	t->exec_fd = TAKE_FD(S.exec_fd[i]);
}

bool
spares_take_policyd(struct box *b, struct spare_taken *t, int peer_fd[DAEMON__N])
{
	if (S.reserved)
		return false;
	if (S.ctl[SPARE_POLICYD] < 0) {
		/* None (one died while it waited, or its spawn failed): the next, after this start. */
		pair_later(b->d);
		return false;
	}
	if (!pair_fits_box(b))
		return false; /* the pair waits for the next box */
	if (!spare_fit(SPARE_POLICYD) || !spare_fit(SPARE_GATEWAY)) {
		pair_drop();
		pair_later(b->d);
		return false;
	}
	spare_give(SPARE_POLICYD, b, t);
	for (int i = 0; i < DAEMON__N; i++)
		peer_fd[i] = TAKE_FD(S.peer_fd[i]);
	S.reserved = b;
	return true;
}

bool
spares_take_gateway(struct box *b, struct spare_taken *t)
{
	if (!b || S.reserved != b)
		return false;
	spare_give(SPARE_GATEWAY, b, t);
	S.reserved = NULL;
	pair_later(b->d);
	return true;
}

void
spares_box_gone(struct box *b)
{
	if (!b || S.reserved != b)
		return;
	/* B took box-policyd but never its gateway (its start failed between): no pair left. */
	pair_drop();
	pair_later(b->d);
}
