/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seccomp.c — box-recheck's own allow-list, its last start-up step (after
 * the switch to the owner, before the first path of the request).
 *
 * What is left to do then is looking at files and answering: stat, open,
 * read a #! line, list directories, readlink (canonical paths), access(),
 * mkdir (the state dir and policy/), sendmsg on the channel, memory, time,
 * sleep (the test hooks) and exit. Everything else — socket, connect,
 * exec, ptrace, mount, namespaces, setuid and friends, chmod, chown,
 * unlink, rename, write to anything but an fd already open — kills the
 * process. The sanitizer runtimes need more (they read /proc/self/maps,
 * install signal handlers): those calls are added only in sanitizer builds.
 * Trusts: nothing; a fixed list.
 */
#include <errno.h>
#include <stddef.h>

#include <seccomp.h>

#include "seccomp_allow.h"

#include "compat/syscalls.h"
#include "recheck.h"

static const int allowed[] = {
	/* files, as the owner */
	SCMP_SYS(openat), SCMP_SYS(open), SCMP_SYS(close), SCMP_SYS(read), SCMP_SYS(pread64),
	SCMP_SYS(lseek), SCMP_SYS(newfstatat), SCMP_SYS(fstat), SCMP_SYS(lstat), SCMP_SYS(stat),
	SCMP_SYS(statx), SCMP_SYS(getdents64), SCMP_SYS(readlink), SCMP_SYS(readlinkat),
	SCMP_SYS(access), SCMP_SYS(faccessat), SCMP_SYS(mkdir), SCMP_SYS(mkdirat),
	SCMP_SYS(fcntl), SCMP_SYS(getcwd),
	/* the channel and stderr */
	SCMP_SYS(sendmsg), SCMP_SYS(write), SCMP_SYS(writev), SCMP_SYS(poll), SCMP_SYS(ppoll),
	/* memory, time, signals, exit */
	SCMP_SYS(brk), SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(madvise),
	SCMP_SYS(mprotect), SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday),
	SCMP_SYS(nanosleep), SCMP_SYS(clock_nanosleep), SCMP_SYS(rt_sigreturn),
	SCMP_SYS(rt_sigprocmask), SCMP_SYS(restart_syscall), SCMP_SYS(futex), SCMP_SYS(getpid),
	SCMP_SYS(gettid), SCMP_SYS(exit), SCMP_SYS(exit_group),
};


int
recheck_seccomp(void)
{
	scmp_filter_ctx ctx;
	int r = seccomp_allow_new(allowed, sizeof(allowed) / sizeof(allowed[0]), &ctx);
	if (r < 0)
		return r;
	/* faccessat2 (glibc's access() on newer kernels): by number, libseccomp 2.5.4 may not name it. */
	r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, BOX_NR_faccessat2, 0);
	if (r < 0) {
		seccomp_release(ctx);
		return r;
	}
	return seccomp_allow_load(ctx);
}
