/*
 * daemon.c — one per-box daemon's lifecycle (daemon.h): channel, ready
 * wait, loss, exit wait. Every step is an event of boxd's loop; nothing
 * here blocks.
 * Trusts: the channel's messages only after box_ipc_decode() and the
 * protocol table (ipc_event.c); the daemon's module checks their meaning.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boxd.h"
#include "daemon.h"
#include "fdutil.h"
#include "log.h"

void
daemon_init(struct box_daemon *dm, const struct box_daemon_ops *ops, struct box *b)
{
	memset(dm, 0, sizeof(*dm));
	dm->ops = ops;
	dm->b = b;
}

void
seterr(char **err, const char *fmt, ...)
{
	va_list ap;

	if (!err || *err)
		return;
	va_start(ap, fmt);
	if (vasprintf(err, fmt, ap) < 0)
		*err = NULL;
	va_end(ap);
}

bool
daemon_running(const struct box_daemon *dm)
{
	return dm->pid > 0;
}

int
daemon_stderr(const struct box *b, int nullfd, const char **level_arg)
{
	*level_arg = !b->d->embedded || getenv("BOXD_DEBUG") ? NULL : b->quiet ? "-q" : "-n";
	if (b->d->embedded && b->detach && b->rc.log_fd >= 0)
		return b->rc.log_fd;
	return fd_is_open(STDERR_FILENO) ? STDERR_FILENO : nullfd;
}

static void
ready_wait_end(struct box_daemon *dm)
{
	dm->starting = false;
	if (dm->ready_timer) {
		event_free(dm->ready_timer);
		dm->ready_timer = NULL;
	}
}

void
daemon_ready(struct box_daemon *dm, int r, const char *fmt, ...)
{
	char msg[1200] = "";

	if (!dm->starting)
		return;
	ready_wait_end(dm);
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
	}
	if (r >= 0)
		log_info("box %s (%s): %s (pid %d) ready", dm->b->name, dm->b->id, dm->ops->name,
			 (int)dm->pid);
	dm->ops->ready(dm->b, r < 0 ? r : 0, r < 0 ? msg : NULL);
}

static void
set_error(struct box_daemon *dm, const char *why)
{
	free(dm->error);
	if (asprintf(&dm->error, "%s exited (%s): the box was stopped%s", dm->ops->name, why,
		     dm->ops->lost_suffix ? dm->ops->lost_suffix : "") < 0)
		dm->error = NULL;
}

void
daemon_lost(struct box_daemon *dm, const char *why)
{
	struct box *b = dm->b;

	if (dm->closing || dm->lost)
		return;
	/* A daemon that lost its policyd exits: report the cause, not the echo. */
	if (dm != &b->policyd && policyd_check_gone(b))
		return;
	dm->lost = true;
	log_err("box %s (%s): %s exited (%s); stopping the box", b->name, b->id, dm->ops->name,
		why);
	set_error(dm, why);
	if (b->state == BOX_STARTING && !b->setup_error && dm->error)
		b->setup_error = strdup(dm->error);
	box_kill(b);
}

static void
on_msg(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata)
{
	struct box_daemon *dm = userdata;
	dm->ops->on_msg(dm, m);
}

static void
on_close(struct box_ipc_event *e, int error, void *userdata)
{
	struct box_daemon *dm = userdata;
	char why[160];

	dm->ev = box_ipc_event_free(dm->ev);
	if (dm->ops->closing)
		dm->ops->closing(dm);
	if (dm->starting) {
		/* Its sandbox's setup may have said why before the channel went. */
		if (dm->ops->start_failed && dm->ops->start_failed(dm))
			return;
		if (error == -ECONNRESET || error == -EPROTO)
			return daemon_ready(dm, error, "%s exited before it was ready (see its "
						       "messages above)", dm->ops->name);
		return daemon_ready(dm, error, "%s sent garbage instead of %s: %s", dm->ops->name,
				    dm->ops->ready_name, strerror(-error));
	}
	if (error == -ECONNRESET)
		snprintf(why, sizeof(why), "its channel closed");
	else
		snprintf(why, sizeof(why), "after it sent garbage: %s", strerror(-error));
	daemon_lost(dm, why);
}

static void
on_ready_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct box_daemon *dm = arg;
	daemon_ready(dm, -ETIMEDOUT, "%s did not get ready within %u s", dm->ops->name,
		     dm->ops->ready_timeout_ms / 1000);
}

int
daemon_watch(struct box_daemon *dm, pid_t pid, int fd, char **err)
{
	struct timeval tv = { dm->ops->ready_timeout_ms / 1000,
			      (dm->ops->ready_timeout_ms % 1000) * 1000 };

	dm->pid = pid;
	dm->ev = box_ipc_event_new(dm->b->d->base, fd, dm->ops->proto, dm->ops->peer_role, on_msg,
				   on_close, dm);
	if (!dm->ev) {
		close(fd);
		if (asprintf(err, "cannot watch %s's channel", dm->ops->name) < 0)
			*err = NULL;
		return -ENOMEM;
	}
	dm->ready_timer = evtimer_new(dm->b->d->base, on_ready_timeout, dm);
	if (!dm->ready_timer || evtimer_add(dm->ready_timer, &tv) < 0) {
		if (asprintf(err, "cannot arm %s's ready timer", dm->ops->name) < 0)
			*err = NULL;
		return -ENOMEM;
	}
	dm->starting = true;
	return 0;
}

int
daemon_send(struct box_daemon *dm, uint32_t type, const ProtobufCMessage *m, const int *fds,
	    unsigned n_fds)
{
	if (!dm->ev)
		return -ENOTCONN;
	return box_ipc_event_send(dm->ev, type, 0, m, fds, n_fds);
}

static void
exit_wait_end(struct box_daemon *dm)
{
	if (!dm->exit_timer)
		return;
	event_free(dm->exit_timer);
	dm->exit_timer = NULL;
	dm->ops->finished(dm->b);
}

bool
daemon_reaped(struct box_daemon *dm, pid_t pid, int status)
{
	struct box *b = dm->b;
	char why[96];

	if (dm->pid <= 0 || pid != dm->pid)
		return false;
	dm->pid = 0;
	workload_status_text(status, why, sizeof(why));
	if (dm->starting) {
		if (!(dm->ops->start_failed && dm->ops->start_failed(dm)))
			daemon_ready(dm, -ECHILD, "%s exited before it was ready (%s)", dm->ops->name,
				     why);
	} else if (!dm->closing && !b->reaped) {
		if (dm->lost)
			set_error(dm, why); /* the channel went first: now we know how */
		else
			daemon_lost(dm, why);
	} else if (dm->lost && dm->error && strstr(dm->error, "(its channel closed)")) {
		set_error(dm, why); /* lost, then torn down: the reap says how it ended */
	}
	exit_wait_end(dm);
	return true;
}

static void
channel_close(struct box_daemon *dm)
{
	bool had = dm->ev != NULL;

	dm->closing = true;
	ready_wait_end(dm);
	dm->ev = box_ipc_event_free(dm->ev);
	if (had && dm->ops->closing)
		dm->ops->closing(dm);
}

static void
on_exit_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct box_daemon *dm = arg;

	log_warn("box %s (%s): %s (pid %d) did not exit within %u s; killing it", dm->b->name,
		 dm->b->id, dm->ops->name, (int)dm->pid, dm->ops->exit_wait_ms / 1000);
	if (dm->pid > 0)
		kill(dm->pid, SIGKILL);
	dm->pid = 0;
	exit_wait_end(dm);
}

bool
daemon_finish(struct box_daemon *dm)
{
	struct timeval tv = { dm->ops->exit_wait_ms / 1000, (dm->ops->exit_wait_ms % 1000) * 1000 };

	if (!dm->ops)
		return false;
	channel_close(dm);
	if (dm->pid <= 0 || dm->exit_timer)
		return dm->exit_timer != NULL;
	dm->exit_timer = evtimer_new(dm->b->d->base, on_exit_timeout, dm);
	if (!dm->exit_timer || evtimer_add(dm->exit_timer, &tv) < 0) {
		if (dm->exit_timer)
			event_free(dm->exit_timer);
		dm->exit_timer = NULL;
		kill(dm->pid, SIGKILL);
		dm->pid = 0;
		return false;
	}
	return true;
}

void
daemon_stop(struct box_daemon *dm)
{
	if (!dm->ops)
		return;
	channel_close(dm);
	if (dm->exit_timer) {
		event_free(dm->exit_timer);
		dm->exit_timer = NULL;
	}
	if (dm->pid > 0)
		kill(dm->pid, SIGKILL);
	dm->pid = 0;
	free(dm->error);
	dm->error = NULL;
}
