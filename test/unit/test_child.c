/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_child — boxd/child.c, the one tracker, reaper and kill path of the processes
 * boxd starts, against real forked children: each reap reaches its own owner with its
 * wait status, a forgotten child is reaped and dropped, a signal reaches only a child
 * still tracked, child_stop_box ends one box's children and no other's, and
 * child_signal_program reaches the program two levels down (outer → PID 1 → program),
 * as a sandbox's tool is found.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boxd/boxd.h"
#include "boxd/child.h"
#include "tap.h"

struct seen {
	int calls;
	int status;
	pid_t pid;
};

static void
on_reaped(struct child *c, int status)
{
	struct seen *s = c->arg;
	s->calls++;
	s->status = status;
	s->pid = c->pid;
}

/* A child that exits with CODE at once, or waits for a signal when CODE < 0. */
static pid_t
fork_child(int code)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (code >= 0)
			_exit(code);
		for (;;)
			pause();
	}
	return pid;
}

/* Block until some child has exited (not reaped: the tracker reaps), then reap them all. */
static void
wait_and_reap(struct boxd *d)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	(void)waitid(P_ALL, 0, &si, WEXITED | WNOWAIT);
	child_reap_all(d);
}

static void
test_reap_reaches_owner(void)
{
	struct boxd d = { .children = NULL };
	struct child a, b;
	struct seen sa = { 0 }, sb = { 0 };

	child_init(&a, CHILD_TOOL, NULL, on_reaped, &sa);
	child_init(&b, CHILD_DAEMON, NULL, on_reaped, &sb);
	CHECK(!child_running(&a));
	CHECK_INT(child_kill(&a, SIGKILL), -ESRCH);
	pid_t pa = fork_child(3), pb = fork_child(7), pc = fork_child(9);
	CHECK(pa > 0 && pb > 0 && pc > 0);
	child_track(&d, &a, pa);
	child_track(&d, &b, pb);
	CHECK(child_running(&a) && child_running(&b));
	/* pc is nobody's: reaped and dropped. */
	while (sa.calls + sb.calls < 2 || waitpid(pc, NULL, WNOHANG) == 0)
		wait_and_reap(&d);
	CHECK_INT(sa.calls, 1);
	CHECK_INT(sb.calls, 1);
	CHECK(WIFEXITED(sa.status) && WEXITSTATUS(sa.status) == 3);
	CHECK(WIFEXITED(sb.status) && WEXITSTATUS(sb.status) == 7);
	CHECK_INT(sa.pid, pa);
	CHECK(!child_running(&a) && !child_running(&b));
	CHECK_INT(a.pid, pa); /* kept for ps and RunReply */
	CHECK(d.children == NULL);
	CHECK_INT(child_kill(&a, SIGTERM), -ESRCH); /* reaped: its pid may be anyone's now */
}

static void
test_kill_and_forget(void)
{
	struct boxd d = { .children = NULL };
	struct child a, b;
	struct seen sa = { 0 }, sb = { 0 };

	child_init(&a, CHILD_AGENT, NULL, on_reaped, &sa);
	child_init(&b, CHILD_MCP_SERVER, NULL, on_reaped, &sb);
	child_track(&d, &a, fork_child(-1));
	child_track(&d, &b, fork_child(-1));
	CHECK_INT(child_kill(&a, SIGTERM), 0);
	while (!sa.calls)
		wait_and_reap(&d);
	CHECK(WIFSIGNALED(sa.status) && WTERMSIG(sa.status) == SIGTERM);
	/* Stopped: SIGKILLed and forgotten; its reap calls nobody. */
	pid_t pb = b.pid;
	child_stop(&b);
	CHECK(!child_running(&b));
	CHECK(d.children == NULL);
	int st = 0;
	CHECK_INT(waitpid(pb, &st, 0), pb); /* (the test reaps it: the tracker let it go) */
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	child_reap_all(&d);
	CHECK_INT(sb.calls, 0);
}

static void
test_stop_box(void)
{
	struct boxd d = { .children = NULL };
	struct box *one = (struct box *)(void *)&d, *two = (struct box *)(void *)&one;
	struct child c[3];
	struct seen s[3] = { { 0 }, { 0 }, { 0 } };

	child_init(&c[0], CHILD_AGENT, one, on_reaped, &s[0]);
	child_init(&c[1], CHILD_TOOL, one, on_reaped, &s[1]);
	child_init(&c[2], CHILD_AGENT, two, on_reaped, &s[2]);
	for (int i = 0; i < 3; i++)
		child_track(&d, &c[i], fork_child(-1));
	pid_t p0 = c[0].pid, p1 = c[1].pid;
	child_stop_box(&d, one);
	CHECK(!child_running(&c[0]) && !child_running(&c[1]));
	CHECK(child_running(&c[2]));
	CHECK(d.children == &c[2] && c[2].next == NULL);
	int st = 0;
	CHECK_INT(waitpid(p0, &st, 0), p0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	CHECK_INT(waitpid(p1, &st, 0), p1);
	CHECK_INT(child_kill(&c[2], SIGKILL), 0);
	while (!s[2].calls)
		wait_and_reap(&d);
	CHECK_INT(s[0].calls + s[1].calls, 0);
	CHECK(WIFSIGNALED(s[2].status) && WTERMSIG(s[2].status) == SIGKILL);
}

static volatile sig_atomic_t got_usr1;
static void
on_usr1(int sig)
{
	got_usr1 = 1;
}

/* outer → "PID 1" → program; the program exits 42 on SIGUSR1, the others pass its status on. */
static pid_t
fork_sandbox(int ready_fd)
{
	pid_t outer = fork();
	if (outer != 0)
		return outer;
	pid_t pid1 = fork();
	if (pid1 == 0) {
		pid_t work = fork();
		if (work == 0) {
			struct sigaction sa = { .sa_handler = on_usr1 };
			sigaction(SIGUSR1, &sa, NULL);
			(void)!write(ready_fd, "r", 1);
			while (!got_usr1)
				pause();
			_exit(42);
		}
		int st = 0;
		while (waitpid(work, &st, 0) < 0 && errno == EINTR)
			;
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
	}
	int st = 0;
	while (waitpid(pid1, &st, 0) < 0 && errno == EINTR)
		;
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
}

static void
test_signal_program(void)
{
	struct boxd d = { .children = NULL };
	struct child c;
	struct seen s = { 0 };
	int p[2];
	char x;

	CHECK_INT(pipe(p), 0);
	child_init(&c, CHILD_TOOL, NULL, on_reaped, &s);
	CHECK_INT(child_signal_program(&c, SIGUSR1), -ESRCH); /* not tracked */
	child_track(&d, &c, fork_sandbox(p[1]));
	CHECK_INT(read(p[0], &x, 1), 1); /* the program runs, two levels down */
	int r = child_signal_program(&c, SIGUSR1);
	if (r == -ENOSYS) {
		SKIP("no pidfd_open on this kernel");
		child_kill(&c, SIGKILL);
	} else {
		CHECK_INT(r, 0);
	}
	while (!s.calls)
		wait_and_reap(&d);
	if (r == 0)
		CHECK(WIFEXITED(s.status) && WEXITSTATUS(s.status) == 42);
	close(p[0]);
	close(p[1]);
}

int
main(void)
{
	RUN(test_reap_reaches_owner);
	RUN(test_kill_and_forget);
	RUN(test_stop_box);
	RUN(test_signal_program);
	return tap_done();
}
