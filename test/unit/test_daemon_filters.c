/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_daemon_filters.c — each daemon's own seccomp allow-list, the very
 * function the daemon calls (linked from its object, not a copy and not a
 * hook in an installed binary), installed in a child of this test: a call on
 * the list runs, a call off it kills the child with SIGSYS. The calls off
 * every list are the ones a daemon must never make once confined: mount,
 * unshare, setns, chroot, bpf; each daemon adds its own (box-policyd and
 * box-mcpd no socket, box-recheck and box-clientd none either; no daemon
 * execs or traces once confined, outside a sanitizer build whose runtime
 * needs both).
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <linux/filter.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "seccomp_allow.h"
#include "tap.h"

/* The daemons' own filter functions (each daemon's seccomp.c; box-shell's daemon_seccomp.c). */
int policyd_seccomp(int dirfd);
int recheck_seccomp(void);
int gw_seccomp(void);
int shd_seccomp(void);
int shd_seccomp_build(scmp_filter_ctx *ret);
const struct sock_filter *shd_seccomp_baked(unsigned short *n);
int clientd_seccomp(void);
int mcpd_seccomp(void);

static int dirfd_for_policyd = -1;

static int
install(const char *daemon)
{
	if (strcmp(daemon, "box-policyd") == 0)
		return policyd_seccomp(dirfd_for_policyd);
	if (strcmp(daemon, "box-recheck") == 0)
		return recheck_seccomp();
	if (strcmp(daemon, "box-gateway") == 0)
		return gw_seccomp();
	if (strcmp(daemon, "box-shell") == 0)
		return shd_seccomp();
	if (strcmp(daemon, "box-clientd") == 0)
		return clientd_seccomp();
	if (strcmp(daemon, "box-mcpd") == 0)
		return mcpd_seccomp();
	return -EINVAL;
}

enum call { CALL_GETPID, CALL_MOUNT, CALL_UNSHARE, CALL_SETNS, CALL_CHROOT, CALL_BPF,
	    CALL_SOCKET_INET, CALL_EXECVE, CALL_PTRACE };

static const char *const call_names[] = { "getpid", "mount", "unshare", "setns", "chroot",
					  "bpf", "socket(AF_INET)", "execve", "ptrace" };

/* Only raw system calls after the filter: nothing of libc's that could make another first. */
static long
make_call(enum call c)
{
	switch (c) {
	case CALL_GETPID:
		return syscall(SYS_getpid);
	case CALL_MOUNT:
		return syscall(SYS_mount, "none", "/", "tmpfs", 0UL, NULL);
	case CALL_UNSHARE:
		return syscall(SYS_unshare, CLONE_NEWUSER);
	case CALL_SETNS:
		return syscall(SYS_setns, -1, 0);
	case CALL_CHROOT:
		return syscall(SYS_chroot, "/");
	case CALL_BPF:
		return syscall(SYS_bpf, 0, NULL, 0);
	case CALL_SOCKET_INET:
		return syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
	case CALL_EXECVE:
		return syscall(SYS_execve, "/bin/true", NULL, NULL);
	case CALL_PTRACE:
		return syscall(SYS_ptrace, PTRACE_TRACEME, 0, NULL, NULL);
	default:
		return -1;
	}
}

/*
 * The wait status of a child that installed DAEMON's filter and made call C:
 * it exits 0 after the call returned, 100 if the filter could not be installed.
 */
static int
run_child(const char *daemon, enum call c)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* As the privilege drop (common/privdrop.c) leaves a daemon: no new privileges. */
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || install(daemon) < 0)
			_exit(100);
		(void)make_call(c);
		syscall(SYS_exit_group, 0);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return st;
}

static bool
killed(int st)
{
	return st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS;
}

static void
check_daemon(const char *daemon, const enum call *off, size_t n_off)
{
	int st = run_child(daemon, CALL_GETPID);
	if (!(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0))
		printf("#   %s: getpid: wait status %d\n", daemon, st);
	CHECK(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	static const enum call everyone[] = { CALL_MOUNT, CALL_UNSHARE, CALL_SETNS, CALL_CHROOT,
					      CALL_BPF };
	for (size_t i = 0; i < sizeof(everyone) / sizeof(*everyone) + n_off; i++) {
		enum call c = i < sizeof(everyone) / sizeof(*everyone)
				      ? everyone[i]
				      : off[i - sizeof(everyone) / sizeof(*everyone)];
		st = run_child(daemon, c);
		if (!killed(st))
			printf("#   %s: %s did not kill it (wait status %#x)\n", daemon,
			       call_names[c], (unsigned)st);
		CHECK(killed(st));
	}
}

static void
test_policyd(void)
{
	static const enum call off[] = { CALL_SOCKET_INET, CALL_EXECVE, CALL_PTRACE };
	check_daemon("box-policyd", off, seccomp_allow_sanitized() ? 1 : 3);
}

static void
test_recheck(void)
{
	static const enum call off[] = { CALL_SOCKET_INET, CALL_EXECVE, CALL_PTRACE };
	check_daemon("box-recheck", off, seccomp_allow_sanitized() ? 1 : 3);
}

static void
test_gateway(void)
{
	/* It connects upstream (socket, connect are its job): never execs nor traces. */
	static const enum call off[] = { CALL_EXECVE, CALL_PTRACE };
	check_daemon("box-gateway", off, seccomp_allow_sanitized() ? 0 : 2);
}

static void
test_shell(void)
{
	/* Main of box-shell: socket() is EACCES there (NSS's fallback), not a kill. */
	static const enum call off[] = { CALL_EXECVE, CALL_PTRACE };
	check_daemon("box-shell", off, seccomp_allow_sanitized() ? 0 : 2);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || shd_seccomp() < 0)
			_exit(100);
		long r = make_call(CALL_SOCKET_INET);
		syscall(SYS_exit_group, r < 0 && errno == EACCES ? 0 : 1);
	}
	int st = -1;
	(void)waitpid(pid, &st, 0);
	CHECK(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void
test_clientd(void)
{
	static const enum call off[] = { CALL_SOCKET_INET, CALL_EXECVE, CALL_PTRACE };
	check_daemon("box-clientd", off, seccomp_allow_sanitized() ? 1 : 3);
}

static void
test_mcpd(void)
{
	static const enum call off[] = { CALL_SOCKET_INET, CALL_EXECVE, CALL_PTRACE };
	check_daemon("box-mcpd", off, seccomp_allow_sanitized() ? 1 : 3);
}

/*
 * box-shell loads the program compiled at build time (daemon_seccomp_baked.c): it is
 * the one libseccomp builds now from daemon_seccomp.c, every instruction.
 */
static void
test_shell_baked(void)
{
	static struct sock_filter now[BPF_MAXINSNS];
	scmp_filter_ctx ctx;
	unsigned short n = 0;
	const struct sock_filter *baked = shd_seccomp_baked(&n);
	size_t got = 0;
	int p[2];

	CHECK_INT(shd_seccomp_build(&ctx), 0);
	CHECK_INT(pipe(p), 0);
	CHECK_INT(seccomp_export_bpf(ctx, p[1]), 0);
	close(p[1]);
	seccomp_release(ctx);
	for (ssize_t k; (k = read(p[0], (char *)now + got, sizeof(now) - got)) > 0;)
		got += (size_t)k;
	close(p[0]);
	CHECK_INT((int)(got / sizeof(now[0])), (int)n);
	CHECK(n > 0 && got == n * sizeof(now[0]) && memcmp(now, baked, got) == 0);
}

int
main(void)
{
	dirfd_for_policyd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	RUN(test_policyd);
	RUN(test_recheck);
	RUN(test_gateway);
	RUN(test_shell);
	RUN(test_shell_baked);
	RUN(test_clientd);
	RUN(test_mcpd);
	return tap_done();
}
