/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_spawn.c — common/spawn.c from the outside: the child gets exactly the
 * fds it was given at 0..n-1 (an open inheritable fd of the parent is not
 * there), no blocked and no ignored signal, the setup hook runs before exec
 * and its error comes back, an exec error comes back as its errno and leaves
 * no zombie, and a relative path is refused (the plain case runs the child
 * in our memory until its exec: CLONE_VM | CLONE_VFORK); with exec_fd the spawn returns
 * before the child's setup and exec, and the fd tells how they went.
 * Trusts: nothing; test code (runs /bin/sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spawn.h"
#include "tap.h"

/*
 * Run PATH ARGV with fds 0-2 = /dev/null, stdout's pipe, /dev/null and fd 3 =
 * sock (when >= 0); collect its stdout.
 */
static int
run_prog(const char *path, char **argv, int sock, char *out, size_t outsz,
	 int (*setup)(void *), int *status)
{
	int p[2];
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	char *envp[] = { (char *)"PATH=/usr/bin:/bin", NULL };
	pid_t pid;

	if (null < 0 || pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	int fds[4] = { null, p[1], null, sock };
	struct spawn_req req = { .path = path, .argv = argv, .envp = envp, .fds = fds,
				 .n_fds = sock >= 0 ? 4 : 3, .setup = setup };
	int r = spawn_process(&req, &pid);
	close(p[1]);
	close(null);
	if (r < 0) {
		close(p[0]);
		return r;
	}
	size_t n = 0;
	ssize_t k;
	while (n + 1 < outsz && (k = read(p[0], out + n, outsz - 1 - n)) > 0)
		n += (size_t)k;
	out[n] = '\0';
	close(p[0]);
	waitpid(pid, status, 0);
	return 0;
}

static int
run_sh(const char *script, int sock, char *out, size_t outsz, int (*setup)(void *), int *status)
{
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)script, NULL };
	return run_prog("/bin/sh", argv, sock, out, outsz, setup, status);
}

static void
test_fds(void)
{
	int sv[2];
	char out[4096];
	int st = -1;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	/* An inheritable fd of ours (no CLOEXEC) must not reach the child. */
	int leak = fcntl(sv[0], F_DUPFD, 20);
	CHECK(leak >= 20);
	int r = run_sh("for f in 0 1 2 3 4 5 20; do [ -e /proc/$$/fd/$f ] && printf '%s ' $f; done; "
		       "echo; echo via3 >&3",
		       sv[1], out, sizeof(out), NULL, &st);
	CHECK_INT(r, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_STR(out, "0 1 2 3 \n");
	char buf[16] = "";
	CHECK(read(sv[0], buf, sizeof(buf) - 1) == 5);
	CHECK(strncmp(buf, "via3\n", 5) == 0);
	close(leak);
	close(sv[0]);
	close(sv[1]);
}

/* A blocked and an ignored signal of ours: neither in the new program (grep, not a shell). */
static void
test_signals(void)
{
	char *argv[] = { (char *)"grep", (char *)"-E", (char *)"^Sig(Blk|Ign):",
			 (char *)"/proc/self/status", NULL };
	char out[512];
	int st = -1;
	sigset_t set, old;
	struct sigaction ign = { .sa_handler = SIG_IGN }, prev;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);
	sigaction(SIGUSR2, &ign, &prev);
	int r = run_prog("/bin/grep", argv, -1, out, sizeof(out), NULL, &st);
	sigprocmask(SIG_SETMASK, &old, NULL);
	sigaction(SIGUSR2, &prev, NULL);
	CHECK_INT(r, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	unsigned long long blk = ~0ull, ign_mask = ~0ull;
	const char *b = strstr(out, "SigBlk:\t"), *i = strstr(out, "SigIgn:\t");
	CHECK(b && i);
	if (b && i) {
		blk = strtoull(b + 8, NULL, 16);
		ign_mask = strtoull(i + 8, NULL, 16);
	}
	CHECK(!(blk & (1ull << (SIGUSR1 - 1))));
	CHECK(!(ign_mask & (1ull << (SIGUSR2 - 1))));
	CHECK(blk == 0);
}

static void
test_exec_error(void)
{
	char *argv[] = { (char *)"x", NULL };
	char *envp[] = { NULL };
	int fds[1] = { 2 };
	struct spawn_req req = { .path = "/nonexistent/box-helper", .argv = argv, .envp = envp,
				 .fds = fds, .n_fds = 1 };
	pid_t pid = 0;

	CHECK_INT(spawn_process(&req, &pid), -ENOENT);
	CHECK_INT(pid, 0);
	/* The failed child was reaped by spawn_process. */
	CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
	req.path = "relative/helper";
	CHECK_INT(spawn_process(&req, &pid), -EINVAL);
}

static int
setup_refuses(void *userdata)
{
	return -EPERM;
}

static int
setup_marks(void *userdata)
{
	/* Runs in the child with the fds in place: fd 1 is the test's pipe. */
	return write(1, "setup\n", 6) == 6 ? 0 : -EIO;
}

static void
test_setup_hook(void)
{
	char out[256];
	int st = -1;

	CHECK_INT(run_sh("echo ran", -1, out, sizeof(out), setup_refuses, &st), -EPERM);
	CHECK_INT(run_sh("echo ran", -1, out, sizeof(out), setup_marks, &st), 0);
	CHECK_STR(out, "setup\nran\n");
}

/*
 * exec_fd: spawn_process returns before the child's setup and exec; the fd
 * then says how they went. A failing setup's errno comes back and the child
 * is left for the caller to reap (status 127); a successful exec reads as 0.
 */
static int
setup_slow_refuses(void *userdata)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	return -EACCES;
}

static int
exec_result_wait(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	(void)poll(&p, 1, 10000);
	return spawn_exec_result(fd);
}

static void
test_exec_fd(void)
{
	char *argv[] = { (char *)"true", NULL };
	char *envp[] = { NULL };
	int fds[1] = { 2 };
	int efd = -1, st = -1;
	pid_t pid = 0;
	struct spawn_req req = { .path = "/bin/true", .argv = argv, .envp = envp, .fds = fds,
				 .n_fds = 1, .setup = setup_slow_refuses, .exec_fd = &efd };

	CHECK_INT(spawn_process(&req, &pid), 0);
	CHECK(pid > 0);
	CHECK(efd >= 0 && (fcntl(efd, F_GETFD) & FD_CLOEXEC));
	/* Still in its 50 ms setup: not known yet (a loaded machine can only make it later). */
	CHECK_INT(spawn_exec_result(efd), -EAGAIN);
	CHECK_INT(exec_result_wait(efd), -EACCES);
	close(efd);
	CHECK_INT(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 127);

	efd = -1;
	req.setup = NULL;
	CHECK_INT(spawn_process(&req, &pid), 0);
	CHECK_INT(exec_result_wait(efd), 0);
	close(efd);
	CHECK_INT(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	efd = -1;
	req.path = "/nonexistent/box-helper";
	CHECK_INT(spawn_process(&req, &pid), 0);
	CHECK_INT(exec_result_wait(efd), -ENOENT);
	close(efd);
	CHECK_INT(waitpid(pid, &st, 0), pid);
}

int
main(void)
{
	RUN(test_fds);
	RUN(test_signals);
	RUN(test_exec_error);
	RUN(test_setup_hook);
	RUN(test_exec_fd);
	return tap_done();
}
