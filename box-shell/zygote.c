/* SPDX-License-Identifier: Apache-2.0 */
/*
 * zygote.c — the box-shell daemon's zygote (daemon.h): the process that
 * forks the spare invocation children, so that the main process never forks
 * one (docs/box-shell.8.md "daemon").
 *
 * main forks it once, right after start-up (ShellInit taken, the seccomp
 * allow-list on, no session yet), so every spare is a copy of that state and
 * none of main's later pages. A fork write-protects every page of the process
 * that forks; were main that process, each session's fork would cost main a
 * copy-on-write fault on each page it then writes (its heap, libevent's
 * structures, its stack) while it serves the next session. The zygote writes
 * almost nothing between forks.
 *
 * On its socket with main (a SOCK_SEQPACKET socketpair, fd SHD_FD_PRIVATE_MIN
 * or above; nothing else open but 0-2 and the door, shell.sock's listening
 * socket at DAEMON_FD_LISTEN, which it never answers: its spares do):
 *   main -> zygote  "F" + one fd (SCM_RIGHTS): fork a spare whose control
 *                   socket is that fd (main holds the other end; the spare's
 *                   first packet there, its policyd channel, carries its pid)
 *   zygote -> main  "E" + pid (int32) + wait status (int32): a child of the
 *                   zygote (a spare, or the session it became) was reaped
 * main closing the socket ends the zygote (exit 0). Anything else from main
 * is a bug of main's: the zygote exits 1 (main then stops: no shell without
 * its zygote).
 * Trusts: main, its parent, for the requests (nothing else can reach the
 * socket: it is opened before any session and held by main and the zygote
 * only).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon.h"

static void
on_chld(int sig)
{
	(void)sig; /* ppoll returns EINTR: the loop reaps */
}

/* Every child that ended, to main. */
static void
reap(int fd)
{
	for (;;) {
		int st;
		pid_t pid = waitpid(-1, &st, WNOHANG);
		if (pid <= 0)
			return;
		char pkt[1 + 2 * sizeof(int32_t)];
		int32_t v[2] = { (int32_t)pid, (int32_t)st };
		pkt[0] = SHD_ZYG_EXITED;
		memcpy(pkt + 1, v, sizeof(v));
		while (send(fd, pkt, sizeof(pkt), MSG_NOSIGNAL) < 0 && errno == EINTR)
			;
	}
}

/* One request from main: 1 and *ctl (the spare's control socket); 0 nothing; -1 main is gone. */
static int
request(int fd, int *ctl)
{
	char tag = 0;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * 2)];
	} u;
	struct iovec iov = { &tag, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	ssize_t n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		return -1;
	int fds[2], nfd = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			for (size_t k = 0; k < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int) && nfd < 2;
			     k++)
				memcpy(&fds[nfd++], CMSG_DATA(c) + k * sizeof(int), sizeof(int));
	if (n != 1 || tag != SHD_ZYG_FORK || nfd != 1 || (mh.msg_flags & MSG_CTRUNC))
		_exit(1); /* main's bug: main sees the zygote die and stops */
	*ctl = fds[0];
	return 1;
}

_Noreturn void
shd_zygote_run(int fd)
{
	/* SIGCHLD only interrupts ppoll; the loop reaps. */
	sigset_t chld, during;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	sigemptyset(&during);
	struct sigaction sa = { .sa_handler = on_chld };
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGCHLD, &sa, NULL);

	for (;;) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		int n = ppoll(&pf, 1, NULL, &during);
		reap(fd);
		if (n <= 0 || !pf.revents)
			continue;
		int ctl = -1;
		int r = request(fd, &ctl);
		if (r < 0)
			_exit(0); /* main is gone: so is the box-shell */
		if (r == 0)
			continue;
		pid_t pid = fork();
		if (pid == 0) {
			/* The spare: the zygote's mask and handler are not its own. */
			(void)signal(SIGCHLD, SIG_DFL);
			sigprocmask(SIG_UNBLOCK, &chld, NULL);
			shd_spare_run(shd_child_begin(ctl, DAEMON_FD_LISTEN));
		}
		/* A failed fork: main's spare socket sees the end of file and main forks itself. */
		close(ctl);
	}
}
