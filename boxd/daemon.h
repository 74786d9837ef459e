/*
 * daemon.h — the life of one per-box daemon that boxd starts and watches
 * (box-policyd, box-gateway, box-shell, box-mcpd): its control channel, the
 * ready wait, losing it while the box runs, the exit wait at the end. The
 * daemon's own module (policyd.c, gateway.c, shell.c, mcpd.c) spawns it,
 * says what its messages mean and what "ready" is; this code holds the
 * lifecycle they share:
 *
 *   daemon_watch      the spawned daemon's pid and channel (ours, taken);
 *                     arms the ready timer (ops->ready_timeout_ms)
 *   daemon_ready      the start's outcome (ok, or why not) → ops->ready, once
 *   daemon_lost       it went away while the box runs: ops->error_fmt's
 *                     message kept for RunExit, the box killed (fail closed)
 *   daemon_reaped     a child exited: true when it was this daemon
 *   daemon_finish     the box ends: close the channel (it exits), wait for
 *                     the reap or ops->exit_wait_ms then SIGKILL; true while
 *                     waiting (ops->finished follows)
 *   daemon_stop       now: channel closed, SIGKILL, nothing waited for
 *
 * Trusts: what the channel delivers has passed box_ipc_decode()'s validation
 * and the protocol table; the module re-checks meaning.
 */
#ifndef BOXD_DAEMON_H
#define BOXD_DAEMON_H

#include <stdbool.h>
#include <sys/types.h>

#include <event2/event.h>

#include "ipc_event.h"

struct box;
struct box_daemon;

struct box_daemon_ops {
	const char *name;            /* "box-mcpd": in every message */
	const char *ready_name;      /* "McpReady": what the start waits for */
	const char *lost_suffix;     /* after "…: the box was stopped" (" (no shell, no box)"), or NULL */
	const struct box_ipc_protocol *proto;
	unsigned peer_role;          /* the daemon's role in proto */
	unsigned ready_timeout_ms;   /* spawned → ready */
	unsigned exit_wait_ms;       /* channel closed → exited, else SIGKILL */
	/* A message on its channel (fds: the module may TAKE_FD them). */
	void (*on_msg)(struct box_daemon *dm, struct box_ipc_msg *m);
	/* The start's outcome: r 0 ready, else err says why (once). */
	void (*ready)(struct box *b, int r, const char *err);
	/* Finishing: it exited or was killed (after daemon_finish returned true). */
	void (*finished)(struct box *b);
	/* The channel goes (lost, finish, stop): end what it asked for. May be NULL. */
	void (*closing)(struct box_daemon *dm);
	/*
	 * It went away while starting: can the module say why (a trampoline's
	 * SetupError)? True when it failed the start itself (daemon_ready). May be NULL.
	 */
	bool (*start_failed)(struct box_daemon *dm);
};

struct box_daemon {
	const struct box_daemon_ops *ops;
	struct box *b;
	pid_t pid;                   /* 0: not running (or reaped) */
	struct box_ipc_event *ev;    /* the control channel, or NULL */
	struct event *ready_timer;
	struct event *exit_timer;
	bool starting;               /* the ready answer is awaited */
	bool closing;                /* we closed its channel: its exit is expected */
	bool lost;                   /* it went away while the box ran */
	char *error;                 /* why the box was stopped (RunExit), or NULL */
};

/* A daemon not started yet. */
void daemon_init(struct box_daemon *dm, const struct box_daemon_ops *ops, struct box *b);
/* Watch PID and its channel FD (taken, even on failure); arm the ready timer. */
int daemon_watch(struct box_daemon *dm, pid_t pid, int fd, char **err);
/* Send on its channel; -ENOTCONN without one. */
int daemon_send(struct box_daemon *dm, uint32_t type, const ProtobufCMessage *m, const int *fds,
		unsigned n_fds);
/* The start's outcome: r 0 with fmt NULL (ready), or r < 0 and the message. */
void daemon_ready(struct box_daemon *dm, int r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void daemon_lost(struct box_daemon *dm, const char *why);
bool daemon_reaped(struct box_daemon *dm, pid_t pid, int status);
bool daemon_finish(struct box_daemon *dm);
void daemon_stop(struct box_daemon *dm);
/*
 * A start's error message: *ERR = the message, unless ERR is NULL or holds
 * one already (the first reason stands; left NULL when out of memory).
 */
void seterr(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Running (spawned and not yet gone)? */
bool daemon_running(const struct box_daemon *dm);
/*
 * Where and how much a box's daemon logs, one rule for box-policyd,
 * box-gateway, box-mcpd and box-shell: a detached embedded box's agent.log,
 * else boxd's stderr (or NULLFD when boxd has none); *LEVEL_ARG, its
 * argument: in an embedded box (the user's terminal) "-n" (notices: what
 * the box did with the agent's requests, such as box-mcpd's), or "-q" for
 * `boxctl run -q` (warnings and errors only); NULL (info) for a service box
 * (the journal) or with BOXD_DEBUG.
 */
int daemon_stderr(const struct box *b, int nullfd, const char **level_arg);

#endif
