/* SPDX-License-Identifier: Apache-2.0 */
/*
 * notif_floor.c — bench/supervise's floor: what the kernel alone costs a supervised call on
 * this machine, measured beside the supervisor in the same run. A child traps getppid(2)
 * with a SECCOMP_RET_USER_NOTIF filter; the parent answers each notification as PID 1's
 * supervisor does (box-trampoline/supervise.c, pid1.c): the listener asks for synchronous
 * wake-ups, the parent polls it, receives, checks the id, and answers either
 *   continue  SECCOMP_USER_NOTIF_FLAG_CONTINUE (a decided-then-continued call: stat), or
 *   addfd     SECCOMP_IOCTL_NOTIF_ADDFD with SECCOMP_ADDFD_FLAG_SEND of an fd it holds
 *             (a performed open: the fd injected and the answer sent in one call).
 * Usage: notif_floor N — prints "notif_continue US" and "notif_addfd US" (µs per call, the
 * mean over N calls) and "plain_syscall US" (getppid without the filter). With two CPUs
 * allowed, then the placement's share, each over N/10 calls: answered continue with both
 * processes pinned to one CPU ("notif_continue_1cpu") and to two different ones
 * ("notif_continue_2cpu": every wake-up crosses CPUs, as one to an idle CPU does), and
 * answered with an injected fd on one CPU ("notif_addfd_1cpu": its wake of the tracee
 * is an ordinary one, which the scheduler may send to another, idle, CPU).
 * Trusts: nothing; it is a benchmark.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

/* The first two CPUs this process may run on (false: fewer than two). */
static bool
two_cpus(int cpu[2])
{
	cpu_set_t set;
	int k = 0;
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return false;
	for (int i = 0; i < CPU_SETSIZE && k < 2; i++)
		if (CPU_ISSET(i, &set))
			cpu[k++] = i;
	return k == 2;
}

static void
pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
}

/* The placement phases after the first two: the child on cpu[CPU], the parent on cpu[0]. */
static const struct {
	const char *name;
	int cpu;
	bool addfd;
} placed[] = {
	{ "notif_continue_1cpu", 0, false },
	{ "notif_continue_2cpu", 1, false },
	{ "notif_addfd_1cpu", 0, true },
};
#define PLACED ((long)(sizeof(placed) / sizeof(placed[0])))

/* Calls of each placement phase: N/10, at least 1. */
static long
placement_calls(long n)
{
	return n / 10 > 0 ? n / 10 : 1;
}

static double
now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int
fd_send(int sock, int fd)
{
	char byte = 0, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec io = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int
fd_recv(int sock)
{
	char byte, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec io = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	int fd;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* The child: the filter, its listener to the parent, then the timed calls. */
static int
traced(int sock, long n)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	double t0 = now_us();
	for (long i = 0; i < n; i++)
		(void)syscall(__NR_getppid);
	double plain = (now_us() - t0) / (double)n;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return 1;
	long lfd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			   &prog);
	if (lfd < 0 || fd_send(sock, (int)lfd) < 0)
		return 1;
	close((int)lfd);
	static const char *const names[] = { "notif_continue", "notif_addfd" };
	for (int k = 0; k < 2; k++) {
		t0 = now_us();
		for (long i = 0; i < n; i++) {
			long r = syscall(__NR_getppid);
			if (k == 1 && r > 2)
				close((int)r); /* the injected fd */
		}
		printf("%s %.2f\n", names[k], (now_us() - t0) / (double)n);
	}
	/* the placement's share: the parent sits on cpu[0] from its 2N-th notification on */
	int cpu[2];
	long m = placement_calls(n);
	bool two = two_cpus(cpu);
	for (int k = 0; k < PLACED && two; k++) {
		pin(cpu[placed[k].cpu]);
		t0 = now_us();
		for (long i = 0; i < m; i++) {
			long r = syscall(__NR_getppid);
			if (placed[k].addfd && r > 2)
				close((int)r);
		}
		printf("%s %.2f\n", placed[k].name, (now_us() - t0) / (double)m);
	}
	printf("plain_syscall %.3f\n", plain);
	return fflush(stdout) == 0 ? 0 : 1; /* the child ends with _exit */
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 20000;
	int sv[2];
	if (n <= 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return 2;
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0)
		_exit(traced(sv[0], n));
	int lfd = fd_recv(sv[1]);
	if (lfd < 0)
		return 2;
	(void)ioctl(lfd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	int inject = open("/dev/null", O_RDONLY | O_CLOEXEC);
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	int cpu[2];
	long m = placement_calls(n);
	long total = 2 * n + (two_cpus(cpu) ? PLACED * m : 0);
	for (long i = 0; i < total; i++) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };
		if (i == 2 * n)
			pin(cpu[0]); /* (the child pins itself to cpu[0], then to cpu[1]) */
		if (poll(&p, 1, 10000) <= 0)
			break;
		memset(&req, 0, sizeof(req));
		if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
			break;
		(void)ioctl(lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req.id);
		if (i < n || (i >= 2 * n && !placed[(i - 2 * n) / m].addfd)) {
			memset(&resp, 0, sizeof(resp));
			resp.id = req.id;
			resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
			(void)ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
		} else {
			struct seccomp_notif_addfd a = { .id = req.id, .flags = SECCOMP_ADDFD_FLAG_SEND,
							 .srcfd = (unsigned)inject };
			(void)ioctl(lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
		}
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
