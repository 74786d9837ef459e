/* SPDX-License-Identifier: Apache-2.0 */
/*
 * memfd.c — vm.memfd_noexec = 2 for a box its owner cannot set it for
 * (docs/sandbox.md; box.ini(5) exec_system).
 *
 * The sysctl is per PID namespace and is written by a process of that
 * namespace that is uid 0 of the initial user namespace: PID 1 of a box
 * owned by root does it itself (mount.c, /proc/sys of the box). For another
 * owner only a root trampoline (a root boxd's) can: before it becomes the
 * owner it forks a helper that stays root and holds nothing but one socket;
 * once PID 1 exists the outer trampoline sends the helper PID 1's pid, the
 * helper checks that pid is a child of the trampoline, enters its PID
 * namespace (setns on a pidfd: only its children land there), forks a child
 * there that writes "2", and answers with the errno. PID 1 waits at a gate
 * (a pipe from the outer trampoline) before it starts the workload, so no
 * memfd of the box is ever created under the old value. A helper that fails
 * fails the start; the helper exits after one answer or when the trampoline
 * dies (PR_SET_PDEATHSIG).
 * Trusts: the pid the outer trampoline sends only after checking its parent
 * (the outer trampoline runs as the owner, who could steer it; the worst it
 * could name is a namespace of its own children, which this only restricts).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "fdutil.h"
#include "hostprobe.h"
#include "trampoline.h"

#define MEMFD_HELPER_WAIT_MS 10000

/* In the helper's child, inside the box's PID namespace: the sysctl, 0 or an errno. */
static int
write_sysctl(void)
{
	int fd = open("/proc/sys/vm/memfd_noexec", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno;
	int r = write(fd, "2", 1) == 1 ? 0 : errno;
	close(fd);
	return r;
}

/* The helper: root, one socket, one request. Never returns. */
static noreturn void
helper_run(int sock, pid_t trampoline)
{
	int keep[1] = { sock };
	int err = 0;
	pid_t pid1 = 0;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != trampoline)
		_exit(1);
	(void)fd_close_all_except(3, keep, 1);
	if (fd_read_full(sock, &pid1, sizeof(pid1)) < 0)
		_exit(1);
	if (pid1 <= 1 || hostprobe_parent_of(pid1) != trampoline) {
		err = ESRCH;
	} else {
		int pfd = (int)syscall(SYS_pidfd_open, pid1, 0);
		if (pfd < 0 || setns(pfd, CLONE_NEWPID) < 0) {
			err = errno;
		} else {
			pid_t w = fork();
			if (w == 0)
				_exit(write_sysctl());
			int st = 0;
			if (w < 0 || waitpid(w, &st, 0) != w)
				err = w < 0 ? errno : ECHILD;
			else if (!WIFEXITED(st) || WEXITSTATUS(st))
				err = WIFEXITED(st) ? WEXITSTATUS(st) : EINTR;
		}
	}
	(void)fd_write_full(sock, &err, sizeof(err));
	_exit(0);
}

void
memfd_noexec_prepare(struct tramp *t)
{
	int sv[2];

	t->memfd_sock = t->memfd_gate[0] = t->memfd_gate[1] = -1;
	if (t->owner_is_root || geteuid() != 0 || !hostprobe_memfd_noexec())
		return; /* PID 1 does it (root owner), nobody can, or the kernel lacks it */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
	    pipe2(t->memfd_gate, O_CLOEXEC) < 0)
		tramp_fail(t, STEP_CREDENTIALS, errno, "vm.memfd_noexec helper: socketpair");
	pid_t trampoline = getpid();
	pid_t h = fork();
	if (h < 0)
		tramp_fail(t, STEP_CREDENTIALS, errno, "vm.memfd_noexec helper: fork");
	if (h == 0)
		helper_run(sv[1], trampoline);
	close(sv[1]);
	t->memfd_sock = sv[0];
	t->memfd_helper = h;
}

void
memfd_noexec_handoff(struct tramp *t, pid_t pid1)
{
	int err = EPROTO;

	if (t->memfd_sock < 0)
		return;
	close(t->memfd_gate[0]);
	t->memfd_gate[0] = -1;
	struct pollfd pfd = { .fd = t->memfd_sock, .events = POLLIN };
	if (fd_write_full(t->memfd_sock, &pid1, sizeof(pid1)) < 0 ||
	    poll(&pfd, 1, MEMFD_HELPER_WAIT_MS) != 1 ||
	    fd_read_full(t->memfd_sock, &err, sizeof(err)) < 0)
		err = err == EPROTO ? ETIMEDOUT : err;
	t->memfd_sock = safe_close(t->memfd_sock);
	(void)waitpid(t->memfd_helper, NULL, 0);
	if (err) {
		kill(pid1, SIGKILL);
		tramp_fail(t, STEP_PID1, err, "vm.memfd_noexec = 2 for the box's PID namespace");
	}
	/* PID 1 may start the workload now. */
	if (write(t->memfd_gate[1], "1", 1) != 1) {
		kill(pid1, SIGKILL);
		tramp_fail(t, STEP_PID1, errno, "vm.memfd_noexec gate");
	}
	t->memfd_gate[1] = safe_close(t->memfd_gate[1]);
}

void
memfd_noexec_child(struct tramp *t)
{
	t->memfd_sock = safe_close(t->memfd_sock);
	t->memfd_gate[1] = safe_close(t->memfd_gate[1]);
}

void
memfd_noexec_gate(struct tramp *t)
{
	char c;

	if (t->memfd_gate[0] < 0)
		return;
	ssize_t n;
	do
		n = read(t->memfd_gate[0], &c, 1);
	while (n < 0 && errno == EINTR);
	t->memfd_gate[0] = safe_close(t->memfd_gate[0]);
	if (n != 1)
		tramp_fail(t, STEP_PID1, 0, "vm.memfd_noexec was not set for the box");
}
