/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spawn.c — fork + execve with channels at fixed fds and exec errors
 * reported to the parent (spawn.h).
 *
 * The error pipe is created O_CLOEXEC: a successful execve closes it and
 * the parent reads EOF; any failure before that writes the errno (an int)
 * and the child _exits. The caller waits for that (spawn_process), or
 * takes the pipe's read end and asks later (exec_fd, spawn_exec_result), so
 * that a child's setup runs beside the caller's next steps. Between fork and execve the child only uses calls
 * that are safe there in a single-threaded process (boxd and boxctl are).
 * Trusts: its caller.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdutil.h"
#include "spawn.h"

/* Every disposition to default (SIG_IGN survives execve), then nothing blocked. */
static void
child_reset_signals(void)
{
	sigset_t none;

	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)signal(sig, SIG_DFL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
}

/* req->fds at 0..n-1, the error pipe kept (CLOEXEC) above them, all else closed. */
static int
child_place_fds(const struct spawn_req *req, int *errfd)
{
	int from[SPAWN_FDS_MAX], to[SPAWN_FDS_MAX];
	unsigned n = 0;
	int r;

	/* Lift the error pipe above every target first: a dup2 must not land on it. */
	int e = fd_dup_cloexec(*errfd, (int)req->n_fds > 3 ? (int)req->n_fds : 3);
	if (e < 0)
		return e;
	*errfd = e;
	for (unsigned i = 0; i < req->n_fds; i++)
		if (req->fds[i] >= 0) {
			from[n] = req->fds[i];
			to[n++] = (int)i;
		}
	if ((r = fd_move_to(from, to, n)) < 0)
		return r;
	for (unsigned i = 0; i < req->n_fds; i++)
		if (req->fds[i] < 0)
			(void)close((int)i);
	return fd_close_all_except((int)req->n_fds, errfd, 1);
}

static _Noreturn void
child_run(const struct spawn_req *req, int errfd)
{
	int r;

	child_reset_signals();
	r = child_place_fds(req, &errfd);
	if (r >= 0 && req->setup)
		r = req->setup(req->userdata);
	if (r >= 0) {
		execve(req->path, req->argv, req->envp);
		r = -errno;
	}
	int e = -r;
	(void)!write(errfd, &e, sizeof(e));
	_exit(127);
}

/*
 * The plain case (no namespaces, no setup hook, the caller waits for the exec):
 * the child shares our memory and we sleep until its execve (CLONE_VM |
 * CLONE_VFORK, as posix_spawn does), so no page table is copied and none of
 * our pages turns copy-on-write — each later write of ours would fault once.
 * It runs on a stack of its own, with every signal blocked across the clone
 * (no handler of ours may run in it); child_run then resets them. It only
 * makes system calls and a calloc/free pair (fd_close_all_except), which
 * leave our heap as it was; we are single-threaded (spawn.h's callers).
 */
#ifndef __has_feature
#define __has_feature(x) 0
#endif
/* AddressSanitizer cannot follow a child on a stack of its own: sanitizer builds fork. */
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
#define SPAWN_VFORK 0
#else
#define SPAWN_VFORK 1
#endif

struct vfork_args {
	const struct spawn_req *req;
	int errfd;
};

static int
vfork_child(void *arg)
{
	struct vfork_args *a = arg;
	child_run(a->req, a->errfd);
}

static pid_t
spawn_vfork(const struct spawn_req *req, int pipefd[2])
{
	static char stack[64 * 1024] __attribute__((aligned(64)));
	struct vfork_args a = { .req = req, .errfd = pipefd[1] };
	sigset_t all, old;

	sigfillset(&all);
	if (sigprocmask(SIG_SETMASK, &all, &old) < 0)
		return -1;
	pid_t pid = clone(vfork_child, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
	int e = errno;
	(void)sigprocmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return pid;
}

int
spawn_process(const struct spawn_req *req, pid_t *ret_pid)
{
	int pipefd[2];

	if (!req->path || req->path[0] != '/' || !req->argv || !req->envp ||
	    req->n_fds > SPAWN_FDS_MAX)
		return -EINVAL;
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	pid_t pid;
	if (SPAWN_VFORK && !req->clone_flags && !req->setup && !req->exec_fd) {
		pid = spawn_vfork(req, pipefd);
	} else {
		/* A raw clone: the child only makes system calls until execve (glibc's fork
		 * bookkeeping is not needed there). The arguments after the flags are all 0. */
		pid = req->clone_flags ? (pid_t)syscall(SYS_clone, req->clone_flags | SIGCHLD, 0,
							0, 0, 0)
				       : fork();
	}
	if (pid < 0) {
		int r = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return r;
	}
	if (pid == 0) {
		close(pipefd[0]);
		child_run(req, pipefd[1]);
	}
	close(pipefd[1]);
	if (req->exec_fd) {
		if (fcntl(pipefd[0], F_SETFL, O_NONBLOCK) < 0) {
			/* Cannot leave it pending: wait for the exec here, as without exec_fd. */
			*req->exec_fd = -1;
		} else {
			*req->exec_fd = pipefd[0];
			*ret_pid = pid;
			return 0;
		}
	}
	int e = 0;
	ssize_t n;
	do
		n = read(pipefd[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	if (n == 0) {
		*ret_pid = pid;
		return 0;
	}
	/* The child failed before or in execve: reap it here, the caller never saw it. */
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return n == (ssize_t)sizeof(e) && e > 0 ? -e : -EIO;
}

int
spawn_exec_result(int exec_fd)
{
	int e = 0;
	ssize_t n;

	do
		n = read(exec_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	if (n == 0)
		return 0;
	if (n < 0)
		return errno == EAGAIN ? -EAGAIN : -errno;
	return n == (ssize_t)sizeof(e) && e > 0 ? -e : -EIO;
}
