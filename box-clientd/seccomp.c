/*
 * seccomp.c — box-clientd's own allow-list, installed after the privilege
 * drop and before the first byte of the client is read.
 *
 * box-clientd only moves packets between two sockets it was given, decodes
 * and packs in memory, and writes log lines to stderr: recvmsg/sendmsg,
 * poll, close, fcntl (duplicating received fds, CLOEXEC), memory for
 * malloc, write for the log, exit. No open, no socket or connect, no exec,
 * no mprotect, no ptrace, mount or namespace call, no signal sending.
 * Anything else kills the process (SCMP_ACT_KILL_PROCESS): boxd sees the
 * channel close and the client's connection closes with it.
 * The sanitizer runtimes need more (they read /proc/self/maps, install
 * signal handlers, set up their shadow memory): those calls are added only
 * in sanitizer builds.
 * Trusts: nothing.
 */
#include <errno.h>
#include <stddef.h>

#include <seccomp.h>

#include "clientd.h"

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
#define CLIENTD_ASAN 1
#else
#define CLIENTD_ASAN 0
#endif

static const int allowed[] = {
	SCMP_SYS(recvmsg), SCMP_SYS(sendmsg), SCMP_SYS(poll), SCMP_SYS(ppoll),
	SCMP_SYS(close), SCMP_SYS(fcntl), SCMP_SYS(write), SCMP_SYS(writev),
	SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(mmap), SCMP_SYS(munmap),
	SCMP_SYS(mremap), SCMP_SYS(brk), SCMP_SYS(madvise), SCMP_SYS(futex),
	SCMP_SYS(getpid), SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday),
	SCMP_SYS(rt_sigreturn), SCMP_SYS(restart_syscall), SCMP_SYS(exit),
	SCMP_SYS(exit_group),
};

#if CLIENTD_ASAN
static const int allowed_asan[] = {
	SCMP_SYS(openat), SCMP_SYS(open), SCMP_SYS(read), SCMP_SYS(readlink),
	SCMP_SYS(readlinkat), SCMP_SYS(mprotect), SCMP_SYS(sigaltstack), SCMP_SYS(prctl),
	SCMP_SYS(rt_sigaction), SCMP_SYS(rt_sigprocmask), SCMP_SYS(sched_yield),
	SCMP_SYS(sched_getaffinity), SCMP_SYS(getdents64), SCMP_SYS(tgkill), SCMP_SYS(kill),
	SCMP_SYS(gettid), SCMP_SYS(getppid), SCMP_SYS(pipe2), SCMP_SYS(wait4), SCMP_SYS(clone),
	SCMP_SYS(execve), SCMP_SYS(dup2), SCMP_SYS(dup3), SCMP_SYS(getrlimit),
	SCMP_SYS(prlimit64), SCMP_SYS(setrlimit), SCMP_SYS(uname), SCMP_SYS(ioctl),
	SCMP_SYS(access), SCMP_SYS(faccessat), SCMP_SYS(stat), SCMP_SYS(lstat),
	SCMP_SYS(getuid), SCMP_SYS(geteuid), SCMP_SYS(personality), SCMP_SYS(lseek),
	SCMP_SYS(ptrace), SCMP_SYS(getdents), SCMP_SYS(waitid), SCMP_SYS(set_robust_list),
	SCMP_SYS(rt_sigtimedwait), SCMP_SYS(process_vm_readv), SCMP_SYS(munlock),
	SCMP_SYS(nanosleep), SCMP_SYS(clock_nanosleep), SCMP_SYS(getrandom),
};
#endif

int
clientd_seccomp(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int r = 0;

	if (!ctx)
		return -ENOMEM;
	for (size_t i = 0; r == 0 && i < sizeof(allowed) / sizeof(allowed[0]); i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
#if CLIENTD_ASAN
	for (size_t i = 0; r == 0 && i < sizeof(allowed_asan) / sizeof(allowed_asan[0]); i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed_asan[i], 0);
#endif
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r < 0 ? r : 0;
}
