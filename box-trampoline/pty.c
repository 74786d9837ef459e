/*
 * pty.c — step 10: the box's own terminal.
 *
 * When boxctl runs at a terminal, PID 1 opens /dev/ptmx of the sandbox's
 * own devpts, sends the master to boxd on fd 4 and keeps the slave for the
 * workload, which makes it its controlling terminal (setsid + TIOCSCTTY)
 * and its fds 0, 1, 2. No fd of boxctl's terminal ever enters the box.
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
	if (!t->plan->pty)
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
terminal_attach(int slave)
{
	if (setsid() < 0)
		return -errno;
	if (ioctl(slave, TIOCSCTTY, 0) < 0)
		return -errno;
	for (int fd = 0; fd < 3; fd++)
		if (dup2(slave, fd) < 0)
			return -errno;
	if (slave > 2)
		close(slave);
	return 0;
}
