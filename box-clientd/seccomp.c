/* SPDX-License-Identifier: Apache-2.0 */
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

#include "seccomp_allow.h"

#include "clientd.h"

static const int allowed[] = {
	SCMP_SYS(recvmsg), SCMP_SYS(sendmsg), SCMP_SYS(poll), SCMP_SYS(ppoll),
	SCMP_SYS(close), SCMP_SYS(fcntl), SCMP_SYS(write), SCMP_SYS(writev),
	SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(mmap), SCMP_SYS(munmap),
	SCMP_SYS(mremap), SCMP_SYS(brk), SCMP_SYS(madvise), SCMP_SYS(futex),
	SCMP_SYS(getpid), SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday),
	SCMP_SYS(rt_sigreturn), SCMP_SYS(restart_syscall), SCMP_SYS(exit),
	SCMP_SYS(exit_group),
};


int
clientd_seccomp(void)
{
	scmp_filter_ctx ctx;
	int r = seccomp_allow_new(allowed, sizeof(allowed) / sizeof(allowed[0]), &ctx);
	return r < 0 ? r : seccomp_allow_load(ctx);
}
