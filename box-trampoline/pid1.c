/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pid1.c — step 2: PID 1 of the box's PID namespace, and the outer
 * trampoline that waits for it.
 *
 * The outer trampoline drops every capability, sets no_new_privs and
 * non-dumpable, closes fd 3/4, forwards SIGINT/SIGTERM/SIGHUP to PID 1 and
 * exits with PID 1's status. PID 1 reaps every zombie, forwards those
 * signals to the workload, exits with the workload's status (128+N for
 * signal N) — and when PID 1 exits the kernel kills everything left in the
 * namespace. PR_SET_PDEATHSIG(SIGKILL) is set after the last credential
 * change, followed by a parent check; PID 1 also watches a pipe from the
 * outer trampoline (EOF: it died). With seccomp, PID 1 serves the workload's
 * one notifying filter (kernel.c: box's refusals answered and reported to boxd
 * on fd 3; supervise.c: a supervised program's calls), built here before the
 * workload is forked.
 * Trusts: the validated plan.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/seccomp.h>
#include <sys/syscall.h>

#include "cleanup.h"
#include "kernel.h"
#include "privdrop.h"
#include "supervise.h"
#include "trampoline.h"

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP};

static int
exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

static void
noop_handler(int sig)
{
	(void)sig;
}

/* Block the forwarded signals and SIGCHLD; return a signalfd for them. */
static int
signals_take(sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < ELEMENTSOF(forwarded); i++)
		sigaddset(&set, forwarded[i]);
	sigaddset(&set, SIGCHLD);
	/*
	 * A real handler, so that the init of a PID namespace is not immune to
	 * them (signals with SIG_DFL are dropped for it); they stay blocked
	 * and are read from the signalfd.
	 */
	struct sigaction sa = {.sa_handler = noop_handler};
	for (size_t i = 0; i < ELEMENTSOF(forwarded); i++)
		sigaction(forwarded[i], &sa, NULL);
	if (sigprocmask(SIG_BLOCK, &set, old) < 0)
		return -errno;
	int fd = signalfd(-1, &set, SFD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static void
signals_restore(const sigset_t *old)
{
	struct sigaction sa = {.sa_handler = SIG_DFL};
	for (size_t i = 0; i < ELEMENTSOF(forwarded); i++)
		sigaction(forwarded[i], &sa, NULL);
	sigprocmask(SIG_SETMASK, old, NULL);
}

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

/* PID 1's: box's refusing program as built, and the listener's (built before the fork). */
static struct kprog refuse_prog, listen_prog;
static bool programs_built; /* pid1_prepare, before the start gate */

/*
 * The listener's program: the refusing one with its refusals made USER_NOTIF,
 * then, for a supervised program, the supervised calls' (kfilter_append).
 */
static void
programs_build(struct tramp *t)
{
	if (programs_built)
		return;
	programs_built = true;
	/* Compiled at build time (refuse_baked.c): no libseccomp compile per sandbox. */
	int r = seccomp_programs_baked(&refuse_prog);
	if (r < 0)
		tramp_fail(t, STEP_SECCOMP, -r, "the filter is longer than %d instructions",
			   KFILTER_INSNS_MAX);
	listen_prog = refuse_prog;
	if (!kfilter_notify(&listen_prog))
		tramp_fail(t, STEP_SECCOMP, EINVAL, "the filter has no refusal to report");
	if (t->supervise_fd >= 0) {
		struct sock_filter sup[SUPERVISE_INSNS_MAX];
		size_t n = supervise_program(sup);
		if ((r = kfilter_append(&listen_prog, sup, n)) < 0)
			tramp_fail(t, STEP_SUPERVISE, -r, "the filter is longer than %d instructions",
				   KFILTER_INSNS_MAX);
	}
}

/* Workload child: the listener's filter; its listener fd (CLOEXEC) or negative errno. */
static int
listener_filter_install(bool supervised)
{
	struct sock_fprog prog = { .len = (unsigned short)listen_prog.n, .filter = listen_prog.f };
	/* a supervised call PID 1 performs must not be restarted by a signal */
	unsigned long flags = SECCOMP_FILTER_FLAG_NEW_LISTENER |
			      (supervised ? SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV : 0);
	long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
	return fd < 0 ? -errno : (int)fd;
}

/*
 * The workload child's notifying filter, its listener handed to PID 1 over
 * SOCK (an SCM_RIGHTS sendmsg). A supervised program's filter traps sendmsg
 * too, and its listener is not PID 1's yet: so a thread started before the filter (which binds only
 * the thread installing it: no TSYNC) sends it, and is joined before anything
 * else runs. On failure the listener is closed first, so that a trapped call
 * after it (tramp_fail's report) gets ENOSYS instead of waiting for a listener
 * no one has. 0, -EPIPE (the hand-off), or the install's negative errno.
 */
struct handoff {
	int sock, pipe_r, err;
};

static void *
handoff_thread(void *arg)
{
	struct handoff *h = arg;
	int lfd;
	ssize_t n;
	do
		n = read(h->pipe_r, &lfd, sizeof(lfd));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(lfd)) {
		h->err = EPIPE; /* no filter (the main thread's failure) */
		return NULL;
	}
	int r = status_send_fd(h->sock, "L", 1, lfd);
	h->err = r < 0 ? EPIPE : 0;
	return NULL;
}

static int
listener_hand_off(int sock, bool supervised)
{
	int hp[2];
	if (pipe2(hp, O_CLOEXEC) < 0)
		return -EPIPE;
	struct handoff h = {.sock = sock, .pipe_r = hp[0], .err = 0};
	pthread_t th;
	int e = pthread_create(&th, NULL, handoff_thread, &h);
	if (e) {
		close(hp[0]);
		close(hp[1]);
		return -EPIPE;
	}
	int lfd = listener_filter_install(supervised);
	ssize_t n = -1;
	if (lfd >= 0)
		do
			n = write(hp[1], &lfd, sizeof(lfd));
		while (n < 0 && errno == EINTR);
	close(hp[1]); /* EOF: the thread ends if nothing was written */
	pthread_join(th, NULL);
	close(hp[0]);
	if (lfd < 0)
		return lfd;
	close(lfd);
	return n == (ssize_t)sizeof(lfd) && h.err == 0 ? 0 : -EPIPE;
}

static noreturn void
outer_wait(struct tramp *t, pid_t pid1, int sfd)
{
	for (;;) {
		struct signalfd_siginfo si;
		ssize_t n = read(sfd, &si, sizeof(si));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(si)) {
			kill(pid1, SIGKILL);
			_exit(1);
		}
		if (si.ssi_signo == SIGCHLD) {
			int status;
			pid_t r = waitpid(pid1, &status, WNOHANG);
			if (r == pid1)
				_exit(exit_code(status));
			continue;
		}
		kill(pid1, (int)si.ssi_signo);
	}
	(void)t;
}

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

/*
 * A trapped call waits for PID 1's answer: the kernel is asked to wake PID 1 on the
 * caller's CPU and to run it at once (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, Linux 6.6), as
 * the caller only sleeps meanwhile. A notification's round trip between two CPUs of a
 * virtual machine costs some 45 µs (90-460 µs on the 2-vCPU test VM), on one some 6-9 µs
 * (bench/supervise, notif_floor's "placed" line). The flag covers the notification and
 * SECCOMP_IOCTL_NOTIF_SEND; the kernel wakes the caller of an injected fd (ADDFD) the
 * ordinary way, which sends it to an idle CPU when there is one. Speed alone: a kernel
 * without it says EINVAL or ENOTTY and nothing else changes.
 */
static void
listener_sync_wakeup(int listener)
{
	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
}

/* The workload's listener, one fd on SOCK (SCM_RIGHTS), or -1. */
static int
listener_receive(int sock)
{
	char c;
	union {
		char buf[CMSG_SPACE(sizeof(int) * 2)];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = &c, .iov_len = 1};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	ssize_t n;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	int fd = -1;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < nfd; i++) {
			int k;
			memcpy(&k, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (fd < 0 && nfd == 1)
				fd = k;
			else
				close(k);
		}
	}
	return fd;
}

void
pid1_parent_check(struct tramp *t, const char *step)
{
	struct pollfd pfd = {.fd = t->parent_pipe, .events = POLLIN};
	int r = poll(&pfd, 1, 0);
	if (r != 0)
		tramp_fail(t, step, 0, "the outer trampoline went away");
}

void
pid1_fork(struct tramp *t)
{
	int pp[2];
	sigset_t old;

	if (pipe2(pp, O_CLOEXEC) < 0)
		tramp_fail(t, STEP_PID1, errno, "pipe");
	/* Signals are taken before the fork so none is lost in between. */
	int sfd = signals_take(&old);
	if (sfd < 0)
		tramp_fail(t, STEP_PID1, -sfd, "signalfd");
	pid_t pid = fork();
	if (pid < 0)
		tramp_fail(t, STEP_PID1, errno, "fork");
	if (pid == 0) {
		close(pp[1]);
		close(sfd);
		memfd_noexec_child(t);
		signals_restore(&old);
		t->parent_pipe = pp[0];
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
			tramp_fail(t, STEP_PID1, errno, "PR_SET_PDEATHSIG");
		pid1_parent_check(t, STEP_PID1);
		if (getpid() != 1)
			tramp_fail(t, STEP_PID1, 0, "not PID 1 of the new PID namespace");
		/*
		 * PID 1's one no_new_privs: Landlock (step 5) needs it before
		 * landlock_restrict_self, the capabilities step (7) checks it, and
		 * the workload inherits it.
		 */
		int r = privdrop_no_new_privs();
		if (r < 0)
			tramp_fail(t, STEP_PID1, -r, "PR_SET_NO_NEW_PRIVS");
		return;
	}

	/* Outer trampoline. */
	close(pp[0]);
	memfd_noexec_handoff(t, pid); /* before the lock-down: fails the start with a status */
	/* The outer trampoline's one lock-down: no capability, no_new_privs, not dumpable. */
	const char *failed = NULL;
	int r = privdrop_lock_down(true, &failed);
	if (r < 0) {
		kill(pid, SIGKILL);
		tramp_fail(t, STEP_PID1, -r, "outer trampoline: %s", failed);
	}
	close(t->status_fd);
	t->status_fd = -1;
	/* fd 3 (the start gate, then the reports) is PID 1's alone */
	t->start_gate = -1;
	if (t->report_fd >= 0)
		t->report_fd = safe_close(t->report_fd);
	/* The passed channels are box-shell's alone: their peers see its end as the only one. */
	passed_fds_close(t);
	if (t->supervise_fd >= 0)
		t->supervise_fd = safe_close(t->supervise_fd); /* PID 1's alone */
	/* pp[1] stays open (CLOEXEC): its EOF tells PID 1 we are gone. */
	outer_wait(t, pid, sfd);
}

void
pid1_prepare(struct tramp *t)
{
	if (t->supervise_fd >= 0 && !t->seccomp_ok)
		tramp_fail(t, STEP_SUPERVISE, ENOSYS,
			   "the program is supervised (supervise = fs) and the kernel "
			   "offers no seccomp filter");
	if (t->seccomp_ok)
		programs_build(t);
}

noreturn void
pid1_run(struct tramp *t, char **envp)
{
	const Box__Plan *p = t->plan;
	sigset_t old;

	/* protobuf-c arrays are counted, execve wants NULL-terminated. */
	char **argv = calloc(p->n_argv + 1, sizeof(char *));
	if (!argv)
		tramp_fail(t, STEP_PID1, ENOMEM, "out of memory");
	memcpy(argv, p->argv, p->n_argv * sizeof(char *));

	int sfd = signals_take(&old);
	if (sfd < 0)
		tramp_fail(t, STEP_PID1, -sfd, "signalfd");
	/* the workload hands its listener to PID 1 on this pair */
	int lsock[2] = {-1, -1};
	bool supervised = t->supervise_fd >= 0;
	pid1_prepare(t);
	if (t->seccomp_ok) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, lsock) < 0)
			tramp_fail(t, STEP_SECCOMP, errno, "socketpair");
	}
	pid1_parent_check(t, STEP_PID1);
	pid_t w = fork();
	if (w < 0)
		tramp_fail(t, STEP_PID1, errno, "fork the workload");
	if (w == 0) {
		close(sfd);
		close(t->parent_pipe);
		if (t->report_fd >= 0)
			t->report_fd = safe_close(t->report_fd);
		signals_restore(&old);
		if (t->pty_slave >= 0) {
			int r = terminal_attach(t->pty_slave, p->pty_fds);
			if (r < 0)
				tramp_fail(t, STEP_TERMINAL, -r, "controlling terminal");
		} else if (setsid() < 0) {
			tramp_fail(t, STEP_TERMINAL, errno, "setsid");
		}
		/*
		 * box-shell's channels: fds 5.. become 3.. In ascending order no
		 * target (3+i) is a source still to come (5+i and up); the new fds
		 * have no FD_CLOEXEC, the sources left over keep theirs and close
		 * at the exec.
		 */
		for (unsigned i = 0; i < t->n_pass; i++)
			if (dup2(TRAMP_PASS_FD_FIRST + (int)i, TRAMP_PASS_FD_TARGET + (int)i) < 0)
				tramp_fail(t, STEP_FDS, errno, "fd %d to fd %d",
					   TRAMP_PASS_FD_FIRST + (int)i, TRAMP_PASS_FD_TARGET + (int)i);
		/* Parent death: SIGKILL; and PID 1 must still be our parent. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
			tramp_fail(t, STEP_PID1, errno, "PR_SET_PDEATHSIG");
		if (getppid() != 1)
			tramp_fail(t, STEP_PID1, 0, "PID 1 went away");
		if (t->seccomp_ok) {
			/* the one filter: box's refusals to PID 1, and the supervised calls */
			if (supervised)
				close(t->supervise_fd);
			close(lsock[0]);
			/*
			 * PID 1 reads a supervised process's memory for the calls it
			 * makes until the exec (the exec itself is one); the exec would
			 * make it dumpable anyway, and it holds nothing the
			 * program will not.
			 */
			if (supervised && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
				tramp_fail(t, STEP_SUPERVISE, errno, "PR_SET_DUMPABLE 1");
			int r = listener_hand_off(lsock[1], supervised);
			if (r < 0)
				tramp_fail(t, STEP_SECCOMP, -r, "%s",
					   r == -EPIPE ? "handing the listener to PID 1" :
							 "installing the notifying filter");
			close(lsock[1]);
		}
		/* the file is argv[0]'s path; the workload may see another name (plan.argv0) */
		if (p->argv0)
			argv[0] = p->argv0;
		execve(p->argv[0], argv, envp);
		int e = errno;
		tramp_fail(t, STEP_EXEC, e, "%s", p->argv[0]);
	}

	/* PID 1: fd 4 is the workload's now (until its exec); so are the passed fds. */
	close(t->status_fd);
	t->status_fd = -1;
	passed_fds_close(t);
	if (t->pty_slave >= 0)
		t->pty_slave = safe_close(t->pty_slave);
	int listener = -1;
	if (t->seccomp_ok) {
		close(lsock[1]);
		listener = listener_receive(lsock[0]);
		close(lsock[0]);
		if (listener >= 0)
			listener_sync_wakeup(listener);
		/* no listener: the workload failed before its exec (its SIGCHLD ends us) */
		if (listener >= 0 && supervised &&
		    supervise_start(listener, t->supervise_fd, p->owner->home) < 0)
			_exit(1); /* the workload is killed with us: fail closed */
		if (listener >= 0 && kernel_start(listener, t->report_fd, &refuse_prog, supervised) < 0)
			_exit(1);
		t->supervise_fd = -1; /* taken by the supervisor */
	}

	for (;;) {
		struct pollfd pfd[3] = {
			{.fd = sfd, .events = POLLIN},
			{.fd = t->parent_pipe, .events = POLLIN},
			{.fd = listener, .events = POLLIN},
		};
		kernel_flush(false);
		if (supervised)
			supervise_flush(false);
		int timeout = kernel_timeout_ms(), ship = supervised ? supervise_timeout_ms() : -1;
		if (ship >= 0 && (timeout < 0 || ship < timeout))
			timeout = ship;
		if (poll(pfd, 3, timeout) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (pfd[1].revents)
			_exit(128 + SIGKILL); /* the outer trampoline died: the box dies */
		if (pfd[2].revents & POLLIN) {
			if (kernel_one() < 0)
				_exit(1); /* a listener that cannot go on: the program dies */
			continue;
		}
		if (pfd[2].revents & (POLLHUP | POLLERR))
			listener = safe_close(listener); /* no supervised task is left */
		if (!pfd[0].revents)
			continue;
		struct signalfd_siginfo si;
		ssize_t n = read(sfd, &si, sizeof(si));
		if (n != (ssize_t)sizeof(si))
			continue;
		if (si.ssi_signo != SIGCHLD) {
			kill(w, (int)si.ssi_signo);
			continue;
		}
		for (;;) {
			int status;
			pid_t r = waitpid(-1, &status, WNOHANG);
			if (r <= 0)
				break;
			if (r == w) {
				kernel_flush(true);
				if (supervised)
					supervise_flush(true);
				_exit(exit_code(status)); /* everything else dies with us */
			}
		}
	}
}
