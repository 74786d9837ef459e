/* SPDX-License-Identifier: Apache-2.0 */
/*
 * status.c — fd 4: status messages from the trampoline to boxd.
 *
 * One packed TrampolineStatus per SOCK_SEQPACKET packet, an fd attached by
 * SCM_RIGHTS for the listener and the pty master. A setup failure is the last
 * message: `sandbox setup failed at <step>: <reason>` is what boxctl prints.
 * Trusts: nothing it receives (it only sends).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "plan_validate.h"
#include "trampoline.h"

int
status_send_fd(int sock, const void *msg, size_t len, int fd)
{
	struct iovec iov = {.iov_base = (void *)msg, .iov_len = len};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (fd >= 0) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	for (;;) {
		ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL);
		if (n >= 0)
			return (size_t)n == len ? 0 : -EMSGSIZE;
		if (errno != EINTR)
			return -errno;
	}
}

void
tramp_fail(struct tramp *t, const char *step, int err, const char *fmt, ...)
{
	char reason[BOX_PLAN_REASON_MAX / 2];
	char full[BOX_PLAN_REASON_MAX];
	va_list ap;

	/* The workload's execve failing exits like a shell would (126/127). */
	int code = strcmp(step, STEP_EXEC) == 0 ? (err == ENOENT ? 127 : 126) : 1;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (err > 0)
		snprintf(full, sizeof(full), "%s: %s", reason, strerror(err));
	else
		snprintf(full, sizeof(full), "%s", reason);

	Box__SetupError e = BOX__SETUP_ERROR__INIT;
	e.step = (char *)step;
	e.reason = full;
	if (err > 0) {
		e.has_errno_value = 1;
		e.errno_value = err;
	}
	Box__TrampolineStatus s = BOX__TRAMPOLINE_STATUS__INIT;
	s.msg_case = BOX__TRAMPOLINE_STATUS__MSG_ERROR;
	s.error = &e;
	uint8_t buf[BOX_PLAN_REASON_MAX + 256];
	size_t len = box__trampoline_status__get_packed_size(&s);
	if (t && t->status_fd >= 0 && len <= sizeof(buf)) {
		box__trampoline_status__pack(&s, buf);
		if (status_send_fd(t->status_fd, buf, len, -1) == 0)
			_exit(code);
	}
	/* fd 4 is gone: stderr is the only witness left. */
	dprintf(2, "box-trampoline: sandbox setup failed at %s: %s\n", step, full);
	_exit(code);
}
