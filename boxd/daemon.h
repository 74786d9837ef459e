/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon.h — the daemons boxd starts (box-policyd, box-gateway, box-shell,
 * box-mcpd per box; box-clientd per client of a service boxd), declared
 * once in daemon_table[]: program, user, log, environment, fds by name
 * (common/daemon_fds.h, the numbers both sides include), start order,
 * readiness message and what losing it does. daemon_spawn() starts any of
 * them from its entry; the daemon's own module (policyd.c, gateway.c,
 * shell.c, mcpd.c, clientd.c) adds only what is its own (the fds it made,
 * its init message, what its messages mean). Then the lifecycle the per-box
 * ones share:
 *
 *   daemon_spawn      fork+exec (or the trampoline, for box-shell; a confined
 *                     one: clone into its own namespaces and minimal root,
 *                     confine.c) as the table says: ids switched in the child
 *                     before execve and
 *                     read back, stderr and log level by one rule, an
 *                     environment of the test hooks boxd's own has and the
 *                     sanitizer's setting; our end of fd 3 returned
 *   daemon_watch      the spawned daemon's pid and channel (ours, taken);
 *                     arms the ready timer (ops->ready_timeout_ms)
 *   daemon_ready      the start's outcome (ok, or why not) → ops->ready, once;
 *                     a failure once the agent has started is a loss instead
 *   daemon_lost       it went away while the box runs: ops->error_fmt's
 *                     message kept for RunExit, the box killed (fail closed)
 *   (reaped)          its process exited (child.c's reaper): the start
 *                     failed, or it was lost, or its exit wait ends
 *   daemon_finish     the box ends: close the channel (half_close: shut down
 *                     our sending side, still reading what it says; it exits), wait for
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

#include "child.h"
#include "daemon_fds.h"
#include "plan.pb-c.h"

struct box;
struct boxd;
struct box_daemon;

enum daemon_id {
	DAEMON_POLICYD,
	DAEMON_GATEWAY,
	DAEMON_SHELL,
	DAEMON_MCPD,
	DAEMON_CLIENTD,
	DAEMON__N,
};

/* Who runs it. */
enum daemon_user {
	/* A root service boxd's daemon user (box-daemon, else nobody; never root); boxd's own
	 * ids when embedded or unprivileged. */
	DAEMON_USER_SERVICE,
	/* The box's owner, through its sandbox (box-trampoline switches). */
	DAEMON_USER_OWNER,
};

/* Where it logs. */
enum daemon_log {
	DAEMON_LOG_BOX,  /* daemon_stderr(): the box's rule, with the level argument */
	DAEMON_LOG_BOXD, /* boxd's stderr (or /dev/null), no level argument */
};

/* A test hook of boxd's own environment a daemon gets (NAME, or a NAME_ prefix). */
struct daemon_env_hook {
	const char *name;
	bool prefix;             /* every variable starting with name */
	size_t entry_max;        /* "NAME=value" shorter than this, else left out */
	const char *only_box;    /* when set in boxd's environment: only for the box it names */
};

#define DAEMON_ENV_HOOKS_MAX 8

/* One daemon, declared once. */
struct daemon_desc {
	const char *name;            /* program, beside boxd (else BOX_LIBEXECDIR): "box-mcpd" */
	bool trampoline;             /* started in its sandbox through box-trampoline */
	enum daemon_user user;
	/* DAEMON_USER_SERVICE: its own system user ("box-policy"), tried before the shared
	 * box-daemon and nobody (packaging/sysusers.d/box.conf); NULL: the shared one first. */
	const char *service_user;
	enum daemon_log log;
	/*
	 * Confined (boxd/confine.c): its own mount, PID and IPC namespaces (and user
	 * namespace when boxd is not root) with a minimal root; net_files adds what
	 * box-gateway reads at start (resolver, trust roots). Never for a trampoline's.
	 */
	bool confined, net_files;
	/* Its fds beyond 0-2, by number (common/daemon_fds.h): required ones, optional ones. */
	unsigned fds, fds_optional;  /* bit N: fd N */
	const struct daemon_env_hook *env; /* NULL-named end; NULL: none */
	bool gates_agent;            /* the agent starts only once it is ready (box.c) */
	const char *ready_name;      /* "McpReady": what the start waits for */
	const char *lost_suffix;     /* after "…: the box was stopped" (" (no shell, no box)"), or NULL */
	const struct box_ipc_protocol *proto;
	unsigned peer_role;          /* the daemon's role in proto */
	unsigned ready_timeout_ms;   /* spawned → ready */
	unsigned exit_wait_ms;       /* channel closed → exited, else SIGKILL */
	/*
	 * The end half-closes its channel (shutdown SHUT_WR): the daemon reads its
	 * end as a close and may still send (box-policyd: its sealed log head) until
	 * it exits; boxd goes on reading until then.
	 */
	bool half_close;
	/* --timings: the step when the box ended before it was ready (daemon_finish killed it) */
	const char *unready_step;
};

#define DAEMON_FD(n) (1u << (n))

extern const struct daemon_desc daemon_table[DAEMON__N];

/* What one spawn adds to its table entry. */
struct daemon_spawn_args {
	/* fds[N]: what goes to its fd N (3 is made here: leave it -1); -1 elsewhere. Borrowed. */
	int fds[DAEMON_FDS_MAX];
	const char *const *args;     /* more arguments after the level argument, or NULL */
	uint64_t nofile;             /* RLIMIT_NOFILE soft and hard, set in the child; 0: boxd's */
	/*
	 * A confined daemon's exec pipe (spawn.c: its setup's or exec's outcome) goes
	 * here when not NULL (a spare: spares.c), else to its box's daemon entry.
	 */
	int *exec_fd;
	/* A trampoline's daemon: its plan from the program and the level argument (*err on failure). */
	int (*plan)(const struct box *b, const char *exe, const char *level_arg, Box__Plan **ret,
		    char **err);
};

/*
 * Start daemon ID for box B (NULL: not a box's, box-clientd) as its entry
 * says, with ARGS's fds in place: *pid, *ctl our end of its fd 3 and, for a
 * trampoline's, *status_fd (its fd 4). <0 with *err (nothing left running).
 */
int daemon_spawn(struct boxd *d, const struct box *b, enum daemon_id id,
		 const struct daemon_spawn_args *args, pid_t *pid, int *ctl, int *status_fd,
		 char **err);
/*
 * Would daemon ID get the same environment for box B as for no box (no hook of
 * boxd's environment that names a box applies to B)? A spare (spares.c) is
 * spawned for no box.
 */
bool daemon_env_boxless(const struct box *b, enum daemon_id id);
/* The ids daemon ID runs as (DAEMON_USER_SERVICE's rule); -ESRCH: no such user. */
int daemon_ids(const struct boxd *d, enum daemon_id id, uid_t *uid, gid_t *gid);
/* UID is the daemon's now, or the shared box-daemon's it ran as before it had its own. */
bool daemon_uid_earlier(const struct boxd *d, enum daemon_id id, uid_t uid);

struct box_daemon_ops {
	enum daemon_id id;           /* its entry in daemon_table */
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
	const struct daemon_desc *desc; /* daemon_table[ops->id] */
	struct box *b;
	struct child child;          /* its process (child.h's tracker; box-shell: its trampoline) */
	struct box_ipc_event *ev;    /* the control channel, or NULL */
	struct event *ready_timer;
	struct event *ready_delay;   /* BOX_TEST_READY_DELAY_MS: its ready message held (daemon.c) */
	struct event *exit_timer;
	bool starting;               /* the ready answer is awaited */
	bool closing;                /* we closed its channel: its exit is expected */
	bool lost;                   /* it went away while the box ran */
	bool lost_starting;          /* … before it was ready, the agent already started */
	char *error;                 /* why the box was stopped (RunExit), or NULL */
	int exec_fd;                 /* a confined daemon's spawn result, pending (-1: known) */
};

/* A daemon not started yet, listed in b->daemons[ops->id] (daemon_stop unlists it). */
void daemon_init(struct box_daemon *dm, const struct box_daemon_ops *ops, struct box *b);
/*
 * Why a daemon of B stopped the box (its message for RunExit), the first in
 * daemon_table's order: of one lost while the box ran (LOST_ONLY), or of any
 * that failed; NULL: none did.
 */
const char *daemons_error(const struct box *b, bool lost_only);
/*
 * A start that fails while confined daemons' spawns are pending may have failed
 * because of one (its init could not be sent: it is gone): the first of them,
 * in table order, whose child's setup or exec failed — its message in BUF —,
 * each pending one waited for up to SPAWN_RESULT_WAIT_MS; NULL: none did.
 */
#define SPAWN_RESULT_WAIT_MS 1000 /* a child's setup takes milliseconds: boxd's loop waits */
const char *daemons_spawn_failure(struct box *b, char *buf, size_t len);
/* Is a daemon of B still on its way out (its exit wait armed)? */
bool daemons_exiting(const struct box *b);
/* PID is its process, tracked (child.h) from now on: the end kills it. */
void daemon_track(struct box_daemon *dm, pid_t pid);
/* Track PID and watch its channel FD (taken, even on failure); arm the ready timer. */
int daemon_watch(struct box_daemon *dm, pid_t pid, int fd, char **err);
/*
 * Send on its channel; -ENOTCONN without one. While it starts, a send that
 * finds it gone returns 0: its channel's close, read next, tells why.
 */
int daemon_send(struct box_daemon *dm, uint32_t type, const ProtobufCMessage *m, const int *fds,
		unsigned n_fds);
/* BOX_TEST_DAEMON_INIT_DELAY_MS: the pause before each init message (test hook). */
void daemon_init_delay(void);
/* The same with a request id (an init message's). */
int daemon_send_request(struct box_daemon *dm, uint32_t type, uint64_t request_id,
			const ProtobufCMessage *m, const int *fds, unsigned n_fds);
/* The start's outcome: r 0 with fmt NULL (ready), or r < 0 and the message. */
void daemon_ready(struct box_daemon *dm, int r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void daemon_lost(struct box_daemon *dm, const char *why);
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
