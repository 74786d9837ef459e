/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workload.c — a sandbox a per-box daemon asked for, from the trampoline's
 * spawn to its reap (workload.h): box-shell's tools (shell.c) and
 * box-mcpd's MCP servers (mcpd.c). Every step is an event of boxd's loop;
 * nothing here blocks.
 * Trusts: the trampoline's fd 4 only through status.h's reader; whatever a
 * sandbox sends beyond its one listener on the gateway's port is a reason to
 * kill it, never to act.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "boxd.h"
#include "cleanup.h"
#include "fdutil.h"
#include "ipc.h"
#include "log.h"
#include "workload.h"

void
workload_status_text(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
		/* Only a seccomp filter's kill action ends a process by SIGSYS here; the kernel
		 * logs the call (audit type 1326, syscall=N) when kill_process is logged. */
		snprintf(buf, len, "killed by signal %d: a system call off its seccomp allow-list",
			 SIGSYS);
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d", WTERMSIG(status));
	else if (WIFEXITED(status) && WEXITSTATUS(status) > 128)
		snprintf(buf, len, "killed by signal %d", WEXITSTATUS(status) - 128);
	else
		snprintf(buf, len, "status %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

static void on_reaped(struct child *c, int status);

void
workload_init(struct workload *w, const struct workload_ops *ops, struct box *b, uint64_t id,
	      char *tag)
{
	memset(w, 0, sizeof(*w));
	w->ops = ops;
	w->b = b;
	w->id = id;
	child_init(&w->child, ops->kind, b, on_reaped, w);
	status_watch_init(&w->status);
	w->gateway_tag = tag;
}

/* The start's answer, once. */
static void
answer(struct workload *w, bool ok, const char *error)
{
	if (w->replied)
		return;
	w->replied = true;
	w->started = ok;
	w->ops->started(w, ok, error);
}

/* Why the start failed (the first reason only). */
static void set_error(struct workload *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void
set_error(struct workload *w, const char *fmt, ...)
{
	va_list ap;

	if (w->setup_error)
		return;
	va_start(ap, fmt);
	if (vasprintf(&w->setup_error, fmt, ap) < 0)
		w->setup_error = NULL;
	va_end(ap);
}

/* fd 4 ended: cleanly (the program exec'd: the start succeeded) or not (kill it). */
static bool
on_status_end(void *arg, int error, const char *why)
{
	struct workload *w = arg;
	if (error < 0) {
		if (!w->replied)
			set_error(w, "box-trampoline sent a bad status message: %s", why);
		workload_kill(w, SIGKILL);
	} else if (!w->setup_error) {
		answer(w, true, NULL);
	}
	return false;
}

/* What the trampoline says before the exec: one listener, or a setup error. */
static bool
on_status(void *arg, const Box__TrampolineStatus *s, int *fd)
{
	struct workload *w = arg;
	struct box *b = w->b;

	switch (s->msg_case) {
	case BOX__TRAMPOLINE_STATUS__MSG_LISTENER:
		/* A contained sandbox's one listener, on the gateway's port. */
		if (*fd >= 0 && !w->listener_id && s->listener->port == gateway_port(b)) {
			int k = gateway_listener_add(b, w->gateway_tag, TAKE_FD(*fd),
						     &w->listener_id);
			if (k < 0) {
				set_error(w, "cannot hand the %s's listener to box-gateway: %s",
					  w->ops->what, strerror(-k));
				workload_kill(w, SIGKILL);
			}
		} else {
			workload_kill(w, SIGKILL);
		}
		break;
	case BOX__TRAMPOLINE_STATUS__MSG_ERROR:
		if (strcmp(s->error->step, "exec") == 0) {
			set_error(w, "cannot execute the %s: %s", w->ops->what, s->error->reason);
		} else {
			set_error(w, "sandbox setup failed at %s: %s", s->error->step,
				  s->error->reason);
		}
		answer(w, false, w->setup_error ? w->setup_error : "sandbox setup failed");
		break;
	case BOX__TRAMPOLINE_STATUS__MSG_PTY:
	case BOX__TRAMPOLINE_STATUS__MSG__NOT_SET:
	default:
		workload_kill(w, SIGKILL); /* a tool or a server gets no pty of its own */
		break;
	}
	return false;
}

int
workload_start(struct workload *w, const Box__Plan *plan, const int fds[3])
{
	struct box *b = w->b;

	if (!w->gateway_tag)
		return -ENOMEM;
	int sfd = -1;
	pid_t pid = 0;
	/*
	 * A supervised program (plan.supervise): PID 1 asks box-policyd on a
	 * channel of its own, attached before the trampoline exists so that its
	 * first question finds it; the trampoline's fd 5.
	 */
	int sv[2] = { -1, -1 };
	if (plan->supervise) {
		int k = box_ipc_socketpair(sv, false);
		if (k < 0)
			return k;
		if ((k = policyd_attach_supervisor(b, sv[0])) < 0) {
			close(sv[0]);
			close(sv[1]);
			return k;
		}
		sv[0] = safe_close(sv[0]);
	}
	int r = spawn_trampoline_fds(b->d, plan, fds, plan->supervise ? &sv[1] : NULL,
				     plan->supervise ? 1 : 0, &pid, &sfd, b, w->gateway_tag,
				     b->snapshot_fd);
	safe_close(sv[1]);
	if (r < 0)
		return r;
	child_track(b->d, &w->child, pid);
	if (status_watch_start(&w->status, b->d->base, sfd, on_status, on_status_end, w) < 0)
		workload_kill(w, SIGKILL); /* unwatched it cannot be answered: the reap answers */
	return 0;
}

/* The outer trampoline was reaped (child.c): the answer if none yet, the exit, then gone. */
static void
on_reaped(struct child *c, int status)
{
	struct workload *w = c->arg;

	(void)status_watch_drain(&w->status);
	if (!w->replied) {
		if (w->setup_error) {
			answer(w, false, w->setup_error);
		} else if (w->status.fd < 0) {
			answer(w, true, NULL); /* fd 4 ended cleanly: it exec'd */
		} else {
			char st[64], msg[160];
			workload_status_text(status, st, sizeof(st));
			snprintf(msg, sizeof(msg), "box-trampoline ended (%s) before the %s started",
				 st, w->ops->what);
			answer(w, false, msg);
		}
	}
	if (w->started)
		w->ops->exited(w, WIFEXITED(status)   ? WEXITSTATUS(status) :
				  WIFSIGNALED(status) ? 128 + WTERMSIG(status) :
							126);
	w->ops->gone(w);
}

void
workload_kill(struct workload *w, int sig)
{
	(void)child_kill(&w->child, sig);
}

void
workload_stop(struct workload *w)
{
	child_stop(&w->child);
}

void
workload_release(struct workload *w)
{
	child_stop(&w->child);
	status_watch_close(&w->status);
	gateway_listener_closed(w->b, w->listener_id);
	w->listener_id = 0;
	free(w->gateway_tag);
	w->gateway_tag = NULL;
	free(w->setup_error);
	w->setup_error = NULL;
}
