/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_status_watch — boxd/status.c, the one reader of a sandbox's status fd, against a
 * socketpair end that plays box-trampoline's fd 4: messages with and without an fd, a
 * message with two fds (the second closed), a setup error, EOF, garbage, a listener
 * the validator refuses, an oversize packet, and a callback that stops the reading.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "boxd/status.h"
#include "proto/plan_validate.h"
#include "tap.h"

struct seen {
	int msgs, listeners, errors, fds_taken, ended, error;
	char why[256];
	int taken_fd;
	bool stop_at_first;
};

static bool
on_msg(void *arg, const Box__TrampolineStatus *s, int *fd)
{
	struct seen *n = arg;
	n->msgs++;
	if (s->msg_case == BOX__TRAMPOLINE_STATUS__MSG_LISTENER) {
		n->listeners++;
		if (*fd >= 0) {
			n->fds_taken++;
			n->taken_fd = *fd;
			*fd = -1;
		}
	} else if (s->msg_case == BOX__TRAMPOLINE_STATUS__MSG_ERROR) {
		n->errors++;
	}
	return n->stop_at_first;
}

static bool
on_end(void *arg, int error, const char *why)
{
	struct seen *n = arg;
	n->ended++;
	n->error = error;
	snprintf(n->why, sizeof(n->why), "%s", why);
	return error < 0;
}

/* Send packed S with N_FDS fds (FDS) on FD. */
static int
send_status(int fd, const Box__TrampolineStatus *s, const int *fds, unsigned n_fds)
{
	uint8_t buf[512];
	size_t len = box__trampoline_status__pack(s, buf);
	union {
		char c[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr a;
	} u;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (n_fds) {
		mh.msg_control = u.c;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
	}
	return sendmsg(fd, &mh, 0) == (ssize_t)len ? 0 : -errno;
}

static bool
fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static int
pair(int sv[2])
{
	return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv);
}

static void
test_messages_fds_and_eof(void)
{
	struct event_base *base = event_base_new();
	int sv[2], extra[2];
	struct seen n = { .taken_fd = -1 };
	struct status_watch w;
	CHECK_INT(pair(sv), 0);
	CHECK_INT(pipe2(extra, O_CLOEXEC), 0);
	status_watch_init(&w);
	CHECK_INT(status_watch_start(&w, base, sv[0], on_msg, on_end, &n), 0);

	Box__ListenerFd l = BOX__LISTENER_FD__INIT;
	l.port = 8080;
	Box__TrampolineStatus s = BOX__TRAMPOLINE_STATUS__INIT;
	s.msg_case = BOX__TRAMPOLINE_STATUS__MSG_LISTENER;
	s.listener = &l;
	/* Two fds where one may come: the first is the message's, the second closed. */
	CHECK_INT(send_status(sv[1], &s, extra, 2), 0);
	Box__SetupError e = BOX__SETUP_ERROR__INIT;
	e.step = "exec";
	e.reason = "No such file or directory";
	Box__TrampolineStatus se = BOX__TRAMPOLINE_STATUS__INIT;
	se.msg_case = BOX__TRAMPOLINE_STATUS__MSG_ERROR;
	se.error = &e;
	CHECK_INT(send_status(sv[1], &se, NULL, 0), 0);
	close(sv[1]);
	for (int i = 0; i < 100 && !n.ended; i++)
		event_base_loop(base, EVLOOP_ONCE);
	CHECK_INT(n.msgs, 2);
	CHECK_INT(n.listeners, 1);
	CHECK_INT(n.errors, 1);
	CHECK_INT(n.fds_taken, 1);
	CHECK_INT(n.ended, 1);
	CHECK_INT(n.error, 0);
	CHECK_INT(w.fd, -1);
	/* The fd that came is a copy of the first one sent; the second never reached anyone. */
	CHECK(n.taken_fd >= 0 && fd_open(n.taken_fd));
	CHECK(n.taken_fd != extra[0] && n.taken_fd != extra[1]);
	CHECK(fcntl(n.taken_fd, F_GETFD) & FD_CLOEXEC);
	if (n.taken_fd >= 0)
		close(n.taken_fd);
	close(extra[0]);
	close(extra[1]);
	status_watch_close(&w); /* (a no-op now) */
	event_base_free(base);
}

/* Garbage, a refused listener, an oversize packet: each ends the watch with a reason. */
static void
test_bad_input(void)
{
	for (int k = 0; k < 3; k++) {
		int sv[2];
		struct seen n = { .taken_fd = -1 };
		struct status_watch w;
		struct event_base *base = event_base_new();
		CHECK_INT(pair(sv), 0);
		status_watch_init(&w);
		CHECK_INT(status_watch_start(&w, base, sv[0], on_msg, on_end, &n), 0);
		int want;
		if (k == 0) {
			static const uint8_t junk[] = { 0xff, 0xff, 0xff, 0x01 };
			CHECK(send(sv[1], junk, sizeof(junk), 0) == (ssize_t)sizeof(junk));
			want = -EBADMSG;
		} else if (k == 1) {
			/* (An empty status packs to nothing: on SOCK_SEQPACKET that reads as EOF.) */
			Box__ListenerFd l = BOX__LISTENER_FD__INIT;
			l.port = 0;
			Box__TrampolineStatus s = BOX__TRAMPOLINE_STATUS__INIT;
			s.msg_case = BOX__TRAMPOLINE_STATUS__MSG_LISTENER;
			s.listener = &l;
			CHECK_INT(send_status(sv[1], &s, NULL, 0), 0);
			want = -EBADMSG;
		} else {
			size_t len = BOX_PLAN_BYTES_MAX + 10;
			char *big = calloc(1, len);
			CHECK(big && send(sv[1], big, len, 0) == (ssize_t)len);
			free(big);
			want = -EMSGSIZE;
		}
		/* Read at once (as a reap does): the drain reports the end. */
		CHECK(status_watch_drain(&w));
		CHECK_INT(n.ended, 1);
		CHECK_INT(n.error, want);
		CHECK(n.why[0] != '\0');
		CHECK_INT(n.msgs, 0);
		CHECK_INT(w.fd, -1);
		CHECK(!status_watch_drain(&w)); /* closed: nothing more, no second end */
		CHECK_INT(n.ended, 1);
		close(sv[1]);
		event_base_free(base);
	}
}

/* A callback that stops: nothing more is read, the fd stays the watch's. */
static void
test_stop(void)
{
	int sv[2];
	struct seen n = { .taken_fd = -1, .stop_at_first = true };
	struct status_watch w;
	struct event_base *base = event_base_new();
	CHECK_INT(pair(sv), 0);
	status_watch_init(&w);
	CHECK_INT(status_watch_start(&w, base, sv[0], on_msg, on_end, &n), 0);
	Box__PtyMaster p = BOX__PTY_MASTER__INIT;
	p.pts = 3;
	Box__TrampolineStatus s = BOX__TRAMPOLINE_STATUS__INIT;
	s.msg_case = BOX__TRAMPOLINE_STATUS__MSG_PTY;
	s.pty = &p;
	CHECK_INT(send_status(sv[1], &s, NULL, 0), 0);
	CHECK_INT(send_status(sv[1], &s, NULL, 0), 0);
	CHECK(status_watch_drain(&w));
	CHECK_INT(n.msgs, 1);
	CHECK(status_watch_drain(&w)); /* (the next one, read when asked again) */
	CHECK_INT(n.msgs, 2);
	CHECK_INT(n.ended, 0);
	CHECK(w.fd >= 0);
	status_watch_close(&w);
	CHECK_INT(w.fd, -1);
	CHECK_INT(n.ended, 0);
	close(sv[1]);
	event_base_free(base);
}

int
main(void)
{
	RUN(test_messages_fds_and_eof);
	RUN(test_bad_input);
	RUN(test_stop);
	return tap_done();
}
