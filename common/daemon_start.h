/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon_start.h — the start-up steps every daemon boxd starts shares
 * (box-policyd, box-gateway, box-mcpd, box-shell, box-clientd), after the
 * manner of OpenBSD's proc_run(): each daemon's main() is one straight line
 * of named steps,
 *
 *   fds checked (daemon_fds_take) → privilege drop (daemon_lock_down,
 *   common/privdrop.c) → the init message (daemon_init_receive) → what it
 *   reads before its filter → its own seccomp allow-list → ready → loop,
 *
 * and the steps that are the same in all of them are these. The fd numbers
 * are common/daemon_fds.h's, which boxd's spawn table uses too.
 * Library code: negative errno, never logs (the daemon says what failed).
 * Trusts: nothing at the fds until checked here; the ids it runs as (boxd
 * chose them before execve).
 */
#ifndef BOX_DAEMON_START_H
#define BOX_DAEMON_START_H

#include <stdbool.h>
#include <stddef.h>

#include "daemon_fds.h"
#include "ipc.h"

/* What a daemon expects at one of its fds. */
enum daemon_fd_kind {
	DAEMON_FD_CHANNEL,          /* a SOCK_SEQPACKET socket */
	DAEMON_FD_CHANNEL_OPTIONAL, /* the same, or closed (a peer the box does not have) */
	DAEMON_FD_LISTENER,         /* a listening SOCK_SEQPACKET socket */
};

struct daemon_fd_want {
	int fd;
	enum daemon_fd_kind kind;
	const char *what; /* for the caller's message: "boxd's channel" */
};

/*
 * Step 1: each fd of WANT is of its kind, then CLOEXEC (never passed on by
 * accident); SIGPIPE ignored (a write to a peer gone is -EPIPE). present[i]
 * (when given): whether want[i] is open. -EBADF with *bad = the index of the
 * first fd that is not what it should be; other negative errno likewise.
 */
int daemon_fds_take(const struct daemon_fd_want *want, size_t n, bool *present, size_t *bad);

/*
 * Step 2: the ids it runs as — boxd switched to them before execve, or
 * UID:GID when the daemon was told others — then no capabilities,
 * no_new_privs, not dumpable (privdrop_apply). Negative errno, *failed names
 * the call.
 */
int daemon_lock_down(uid_t uid, gid_t gid, const char **failed);

/*
 * Step 0: the command line boxd gives box-gateway, box-mcpd and the like:
 * -n or -q (an embedded box's log level, common/log.c), and -w (spawned
 * ahead as a service boxd's spare, boxd/spares.c: its init message may
 * come at any time). 0, or -EINVAL for anything else.
 */
int daemon_args(int argc, char **argv, bool *spare);

/*
 * A spare's init message came: -w leaves its command line (/proc/PID/cmdline
 * reads it from our memory), so that ps tells a waiting spare from a box's daemon.
 */
void daemon_spare_taken(int argc, char **argv);

/*
 * Step 3: the first message on CHAN (its protocol table's init state)
 * within TIMEOUT_MS (negative: no limit, a spare's wait): 1 with *m, 0
 * when boxd gave up first (its channel closed before anything came),
 * negative errno (nothing valid in time).
 */
int daemon_init_receive(struct box_ipc_chan *chan, struct box_ipc_msg *m, int timeout_ms);

#endif
