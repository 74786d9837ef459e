/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pty.c — step 10: the box's own terminal.
 *
 * When any of boxctl's fds 0-2 is a terminal (plan.pty_fds says which),
 * PID 1 opens /dev/ptmx of the sandbox's own devpts, sets the initial
 * window size on it, sends the master to boxd on fd 4 (boxd hands it to
 * boxctl, which relays it to its terminal) and keeps the slave for the
 * workload, which makes it its controlling terminal (setsid + TIOCSCTTY)
 * and those of its fds 0, 1, 2; the others are the pipes boxd passed.
 * No fd of boxctl's terminal ever enters the box.
 * Trusts: nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cleanup.h"
#include "trampoline.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

void
terminal_setup(struct tramp *t)
{
	const Box__Plan *p = t->plan;
	if (!p->pty_fds)
		return;
	_cleanup_close_ int master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0)
		tramp_fail(t, STEP_TERMINAL, errno, "/dev/ptmx");
	int unlock = 0;
	if (ioctl(master, TIOCSPTLCK, &unlock) < 0)
		tramp_fail(t, STEP_TERMINAL, errno, "unlockpt");
	unsigned n = 0;
	if (ioctl(master, TIOCGPTN, &n) < 0)
		tramp_fail(t, STEP_TERMINAL, errno, "TIOCGPTN");
	/* Before the workload can ask: it sees the caller's size from its first instruction. */
	if (p->has_pty_rows && p->has_pty_cols) {
		struct winsize ws = {.ws_row = (unsigned short)p->pty_rows,
				     .ws_col = (unsigned short)p->pty_cols};
		if (ioctl(master, TIOCSWINSZ, &ws) < 0)
			tramp_fail(t, STEP_TERMINAL, errno, "TIOCSWINSZ");
	}
	int slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0)
		tramp_fail(t, STEP_TERMINAL, errno, "opening the pty slave");
	t->pty_slave = slave;

	Box__PtyMaster pm = BOX__PTY_MASTER__INIT;
	pm.pts = n;
	Box__TrampolineStatus s = BOX__TRAMPOLINE_STATUS__INIT;
	s.msg_case = BOX__TRAMPOLINE_STATUS__MSG_PTY;
	s.pty = &pm;
	uint8_t buf[64];
	size_t len = box__trampoline_status__get_packed_size(&s);
	if (len > sizeof(buf))
		tramp_fail(t, STEP_TERMINAL, EMSGSIZE, "pty message");
	box__trampoline_status__pack(&s, buf);
	int r = status_send_fd(t->status_fd, buf, len, master);
	if (r < 0)
		tramp_fail(t, STEP_TERMINAL, -r, "sending the pty master on fd 4");
}

int
terminal_attach(int slave, uint32_t fds)
{
	if (setsid() < 0)
		return -errno;
	if (ioctl(slave, TIOCSCTTY, 0) < 0)
		return -errno;
	for (int fd = 0; fd < 3; fd++)
		if ((fds & (1u << fd)) && dup2(slave, fd) < 0)
			return -errno;
	if (slave > 2)
		close(slave);
	return 0;
}
