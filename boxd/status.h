/* SPDX-License-Identifier: Apache-2.0 */
/*
 * status.h — the one reader of a sandbox's status fd: box-trampoline's fd 4
 * (docs/sandbox.md), which says TrampolineStatus messages (plan.proto: a
 * listener, a pty, a setup error), each with at most one fd, then ends at
 * EOF when the trampoline exec'd its program. boxd watches one per sandbox it
 * starts: the agent's (box.c), box-shell's (shell.c), each tool's and MCP
 * server's (workload.c); they differ only in what a message means to them.
 *
 * The watch reads on the loop (and all that is there at once with
 * status_watch_drain, as a reap does), one packet a message, capped at
 * BOX_PLAN_BYTES_MAX (a larger one, or one whose fds were cut, is an error),
 * decoded and validated (proto/plan_validate.c's box_status_decode), extra
 * fds past the first closed. Each message goes to on_msg; the end to on_end,
 * once, after the watch is closed: 0 at a clean EOF, else the negative errno
 * with a line naming what came.
 * Trusts: nothing the trampoline sends (it runs the sandbox's set-up, and a
 * program that exec'd may hold nothing of fd 4).
 */
#ifndef BOXD_STATUS_H
#define BOXD_STATUS_H

#include <stdbool.h>

#include <event2/event.h>

#include "plan.pb-c.h"

/*
 * One message (valid during the call): *FD is -1 or the fd it carried (the
 * callback takes it with TAKE_FD, else it is closed after). Returns true to
 * stop reading at once (the owner decided something final and the watch may
 * be gone with it), false to read on.
 */
typedef bool (*status_msg_fn)(void *arg, const Box__TrampolineStatus *s, int *fd);
/*
 * The fd ended (the watch is closed already): ERROR 0 at EOF, else negative
 * errno and WHY. Returns what status_watch_drain returns (true: stopped, as
 * on_msg's).
 */
typedef bool (*status_end_fn)(void *arg, int error, const char *why);

/* Messages read per wakeup or drain (a trampoline says at most three). */
#define STATUS_DRAIN_MAX 64

struct status_watch {
	int fd;          /* the trampoline's fd 4 until the end; -1 after */
	struct event *ev;
	status_msg_fn on_msg;
	status_end_fn on_end;
	void *arg;
};

/* No fd yet (status_watch_close is a no-op). */
void status_watch_init(struct status_watch *w);
/*
 * Watch FD (taken: closed by status_watch_close or at the end) on BASE, made
 * non-blocking. Negative errno when the event could not be made: the fd is
 * kept (status_watch_drain still reads it; the caller ends the sandbox).
 */
int status_watch_start(struct status_watch *w, struct event_base *base, int fd,
		       status_msg_fn on_msg, status_end_fn on_end, void *arg);
/*
 * Read what the fd holds now (at most STATUS_DRAIN_MAX messages; the event
 * fires again for more), the callbacks called as on the loop. True when a
 * callback returned true.
 */
bool status_watch_drain(struct status_watch *w);
/* Stop watching and close the fd; no callback. */
void status_watch_close(struct status_watch *w);

#endif
