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

#include "compat/syscalls.h"
#include "recheck.h"

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
#define RECHECK_ASAN 1
#else
#define RECHECK_ASAN 0
#endif

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

#if RECHECK_ASAN
static const int allowed_asan[] = {
	SCMP_SYS(sigaltstack), SCMP_SYS(prctl), SCMP_SYS(sched_yield),
	SCMP_SYS(sched_getaffinity), SCMP_SYS(tgkill), SCMP_SYS(kill), SCMP_SYS(getppid),
	SCMP_SYS(getrlimit), SCMP_SYS(prlimit64), SCMP_SYS(uname), SCMP_SYS(ioctl),
	SCMP_SYS(getuid), SCMP_SYS(geteuid), SCMP_SYS(rt_sigaction), SCMP_SYS(getdents),
	SCMP_SYS(munlock), SCMP_SYS(personality),
};
#endif

int
recheck_seccomp(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int r = 0;

	if (!ctx)
		return -ENOMEM;
	for (size_t i = 0; r == 0 && i < sizeof(allowed) / sizeof(allowed[0]); i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
	/* faccessat2 (glibc's access() on newer kernels): by number, libseccomp 2.5.4 may not name it. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, BOX_NR_faccessat2, 0);
#if RECHECK_ASAN
	for (size_t i = 0; r == 0 && i < sizeof(allowed_asan) / sizeof(allowed_asan[0]); i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed_asan[i], 0);
#endif
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r < 0 ? r : 0;
}
