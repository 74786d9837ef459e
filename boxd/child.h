/* SPDX-License-Identifier: Apache-2.0 */
/*
 * child.h — the one tracker of every process boxd starts: a box's agent
 * (its outer trampoline), its tools and MCP servers (workload.c), its
 * daemons (daemon.c), its box-recheck (recheck.c), and each client's
 * box-clientd (clientd.c). Each owner embeds a struct child and tracks it
 * once spawned; then
 *
 *   child_reap_all  the one reaper (boxd's SIGCHLD event): waitpid(-1) until
 *                   none is left, each reaped child untracked, then its
 *                   owner's reaped callback with the wait status; a child
 *                   nobody tracks any more (forgotten after a SIGKILL) is
 *                   reaped and dropped
 *   child_kill      the one kill path for a process of boxd's (stop,
 *                   timeout, a daemon lost, the end of a box, boxd's
 *                   shutdown all come here): a signal only to a child still
 *                   tracked, so never to a pid that was reaped and reused
 *   child_signal_program  a signal to the program a sandbox child runs (its
 *                   PID 1's child), through a pidfd checked against its
 *                   parents
 *   child_stop      SIGKILL and forget (the owner is done with it; the
 *                   reaper drops its exit)
 *   child_stop_box  every child of one box killed and forgotten (a box
 *                   freed with something still tracked)
 *
 *   child_wait_sync  a helper fork waited for at once, never tracked
 *
 * The pid of a tracked child cannot be reused: only child_reap_all reaps,
 * and it untracks the child in the same step.
 * Trusts: the kernel's wait status; /proc only through the pidfd check.
 */
#ifndef BOXD_CHILD_H
#define BOXD_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

struct boxd;
struct box;
struct child;

enum child_kind {
	CHILD_AGENT,      /* a box's agent: its outer trampoline */
	CHILD_TOOL,       /* a tool sandbox box-shell asked for */
	CHILD_MCP_SERVER, /* an MCP server sandbox box-mcpd asked for */
	CHILD_DAEMON,     /* a per-box daemon (box-shell: its outer trampoline) */
	CHILD_RECHECK,    /* a box's box-recheck */
	CHILD_CLIENTD,    /* a service boxd's box-clientd for one client */
};

/* It exited (untracked already: child_running is false); STATUS as waitpid says. */
typedef void (*child_reaped_fn)(struct child *c, int status);

struct child {
	struct child *next, **pprev; /* in boxd's list while tracked */
	struct boxd *d;
	struct box *b;                 /* the box it belongs to, or NULL (box-clientd) */
	enum child_kind kind;
	pid_t pid;                     /* as spawned; kept after the reap (ps, RunReply) */
	bool tracked;                  /* spawned and neither reaped nor forgotten */
	child_reaped_fn reaped;
	void *arg;                     /* the owner's, for the callback */
};

/* Not spawned yet (child_running false; child_kill and child_stop are no-ops). */
void child_init(struct child *c, enum child_kind kind, struct box *b, child_reaped_fn fn,
		void *arg);
/* PID was spawned for C: tracked until reaped or forgotten. */
void child_track(struct boxd *d, struct child *c, pid_t pid);
/* Spawned and not yet reaped nor forgotten. */
static inline bool
child_running(const struct child *c)
{
	return c->tracked;
}
/* Signal SIG to a tracked child: 0, -ESRCH when it is not (any more), else -errno. */
int child_kill(struct child *c, int sig);
/*
 * SIG to the program inside a sandbox child: PID 1's first child (PID 1 is
 * the outer trampoline's child); a pidfd taken on it, then both parents
 * checked again, so a recycled pid is never signalled.
 */
int child_signal_program(struct child *c, int sig);
/* Untrack without a signal (its exit, when reaped, is dropped). */
void child_forget(struct child *c);
/* SIGKILL, then forget. */
void child_stop(struct child *c);
/* child_stop on every child of box B still tracked. */
void child_stop_box(struct boxd *d, struct box *b);
/* The reaper: every exited child reaped and handed to its owner. */
void child_reap_all(struct boxd *d);
/*
 * A short-lived fork of boxd's own (snapshot.c: a step as the owner, an
 * overlay made in a user namespace), never tracked: wait for exactly that pid
 * before returning to the loop, so child_reap_all never sees it. Its exit
 * status (0-255), 128+N for signal N, or negative errno.
 */
int child_wait_sync(pid_t pid);

#endif
