/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seccomp.c — box-policyd's own allow-list, installed after the privilege
 * drop and before it reads the history or any peer message.
 *
 * policyd only moves packets, does arithmetic and appends to two files it
 * was given. Files: openat, renameat(2) and unlinkat are allowed only
 * relative to the STATE/policy/ directory fd (never AT_FDCWD, so no
 * absolute or cwd-relative path works); no socket, connect, exec, ptrace,
 * mount or namespace call. Everything else kills the process.
 * The sanitizer runtimes need more (they read /proc/self/maps, install
 * signal handlers, spawn nothing): those calls are added only in sanitizer
 * builds.
 * Trusts: the directory fd number it is given.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>

#include <seccomp.h>

#include "seccomp_allow.h"

#include "policyd.h"

static const int allowed[] = {
	SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(writev), SCMP_SYS(readv),
	SCMP_SYS(pread64), SCMP_SYS(pwrite64), SCMP_SYS(lseek),
	SCMP_SYS(sendmsg), SCMP_SYS(recvmsg), SCMP_SYS(sendto), SCMP_SYS(recvfrom),
	SCMP_SYS(poll), SCMP_SYS(ppoll), SCMP_SYS(epoll_wait), SCMP_SYS(epoll_pwait),
	SCMP_SYS(epoll_ctl), SCMP_SYS(close), SCMP_SYS(fstat), SCMP_SYS(newfstatat),
	SCMP_SYS(statx), SCMP_SYS(fcntl), SCMP_SYS(ftruncate), SCMP_SYS(fsync),
	SCMP_SYS(fdatasync), SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap),
	SCMP_SYS(brk), SCMP_SYS(madvise), SCMP_SYS(mprotect), SCMP_SYS(clock_gettime),
	SCMP_SYS(gettimeofday), SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(exit),
	SCMP_SYS(exit_group), SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigprocmask),
	SCMP_SYS(futex), SCMP_SYS(getrandom), SCMP_SYS(restart_syscall),
	SCMP_SYS(clock_nanosleep), SCMP_SYS(nanosleep), SCMP_SYS(getsockopt),
	/* libevent puts SIGTERM/SIGINT's old handlers back when the loop ends. */
	SCMP_SYS(rt_sigaction),
};


int
policyd_seccomp(int dirfd)
{
	scmp_filter_ctx ctx;
	int r = seccomp_allow_new(allowed, sizeof(allowed) / sizeof(allowed[0]), &ctx);
	if (r < 0)
		return r;
	/* Spelled out: libseccomp's SCMP_A0() leaves datum_b to clang's -Wextra. */
	const struct scmp_arg_cmp a0 = { .arg = 0, .op = SCMP_CMP_EQ,
					 .datum_a = (scmp_datum_t)dirfd, .datum_b = 0 };
	const struct scmp_arg_cmp a02[2] = {
		a0, { .arg = 2, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)dirfd, .datum_b = 0 }
	};
	/* The history and its compaction: only under the state directory fd (a sanitizer
	 * build already allows every openat for its runtime). */
	if (!seccomp_allow_sanitized())
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1, &a0);
	if (r == 0)
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(unlinkat), 1, &a0);
	if (r == 0)
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(renameat), 2, a02);
	if (r == 0)
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(renameat2), 2, a02);
	if (r < 0) {
		seccomp_release(ctx);
		return r;
	}
	return seccomp_allow_load(ctx);
}
