/* SPDX-License-Identifier: Apache-2.0 */
/*
 * status.c — the one reader of a sandbox's status fd (status.h).
 * Trusts: nothing that arrives on the fd: the packet is capped before it is
 * decoded, fds beyond the one a message may carry are closed, and the decoder
 * validates the message (proto/plan_validate.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cleanup.h"
#include "fdutil.h"
#include "plan_validate.h"
#include "status.h"

/*
 * One message from FD (non-blocking): 1 with *s (free with
 * box__trampoline_status__free_unpacked) and *fdp (-1 or the one fd it
 * carried), 0 at EOF, -EAGAIN for nothing now, else -errno / -EMSGSIZE /
 * -EBADMSG (WHY set for the last two).
 */
static int
status_read(int status_fd, Box__TrampolineStatus **s, int *fdp, char *why, size_t why_len)
{
	_cleanup_free_ uint8_t *buf = malloc(BOX_PLAN_BYTES_MAX + 1);
	union {
		char c[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr a;
	} u;

	*s = NULL;
	*fdp = -1;
	if (!buf)
		return -ENOMEM;
	struct iovec iov = { .iov_base = buf, .iov_len = BOX_PLAN_BYTES_MAX + 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.c,
			     .msg_controllen = sizeof(u.c) };
	ssize_t n = recvmsg(status_fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? -EAGAIN : -errno;
	int fd = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int x;
			memcpy(&x, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (fd < 0)
				fd = x;
			else
				close(x); /* one fd per message at most */
		}
	}
	if (n == 0) {
		safe_close(fd);
		return 0;
	}
	if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || (size_t)n > BOX_PLAN_BYTES_MAX) {
		safe_close(fd);
		snprintf(why, why_len, "a status message too large");
		return -EMSGSIZE;
	}
	if (box_status_decode(buf, (size_t)n, s, why, why_len) < 0) {
		safe_close(fd);
		return -EBADMSG;
	}
	*fdp = fd;
	return 1;
}

void
status_watch_init(struct status_watch *w)
{
	*w = (struct status_watch){ .fd = -1 };
}

void
status_watch_close(struct status_watch *w)
{
	if (w->ev) {
		event_free(w->ev);
		w->ev = NULL;
	}
	w->fd = safe_close(w->fd);
}

bool
status_watch_drain(struct status_watch *w)
{
	for (int i = 0; i < STATUS_DRAIN_MAX && w->fd >= 0; i++) {
		Box__TrampolineStatus *s = NULL;
		char why[256] = "";
		int fd = -1;
		int r = status_read(w->fd, &s, &fd, why, sizeof(why));
		if (r == -EAGAIN)
			return false;
		if (r <= 0) {
			status_watch_close(w);
			if (r < 0 && !why[0])
				snprintf(why, sizeof(why), "%s", strerror(-r));
			return w->on_end(w->arg, r, why);
		}
		bool stop = w->on_msg(w->arg, s, &fd);
		safe_close(fd);
		box__trampoline_status__free_unpacked(s, NULL);
		if (stop)
			return true;
	}
	return false;
}

static void
on_event(evutil_socket_t fd, short what, void *arg)
{
	(void)status_watch_drain(arg);
}

int
status_watch_start(struct status_watch *w, struct event_base *base, int fd,
		   status_msg_fn on_msg, status_end_fn on_end, void *arg)
{
	w->fd = fd;
	w->on_msg = on_msg;
	w->on_end = on_end;
	w->arg = arg;
	(void)fd_set_nonblock(fd, true);
	w->ev = event_new(base, fd, EV_READ | EV_PERSIST, on_event, w);
	if (!w->ev || event_add(w->ev, NULL) < 0)
		return -ENOMEM;
	return 0;
}
