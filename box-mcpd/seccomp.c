/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seccomp.c — box-mcpd's own allow-list (HACKING.md convention 3), installed
 * after the privilege drop, McpInit and the pins file's first read, before
 * McpReady, so no frame a harness or a server wrote is ever parsed without
 * it.
 *
 * box-mcpd only moves bytes between fds it was given or made: packets on its
 * SOCK_SEQPACKET channels (with fd passing), accept on mcp.sock, pipes for
 * a server's stdio, reads and appends on the pins file, the event loop and
 * the clock. Never: open (the pins file is boxd's fd; docs/design.md), socket
 * or connect (no network), exec, fork/clone, ptrace, mount, namespaces,
 * ioctl. Anything else kills the process (SIGSYS). The sanitizer runtime's
 * own calls are added by common/seccomp_allow.c in sanitizer builds only.
 * Trusts: nothing.
 */
#include <errno.h>
#include <stddef.h>

#include <seccomp.h>

#include "mcpd.h"
#include "seccomp_allow.h"

static const int allowed[] = {
	/* bytes on the fds it holds */
	SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev), SCMP_SYS(pread64),
	SCMP_SYS(close), SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(statx), SCMP_SYS(fcntl),
	SCMP_SYS(pipe2),
	/* the channels and mcp.sock */
	SCMP_SYS(sendmsg), SCMP_SYS(recvmsg), SCMP_SYS(sendto), SCMP_SYS(recvfrom),
	SCMP_SYS(accept4), SCMP_SYS(getsockopt), SCMP_SYS(shutdown),
	/* the loop */
	SCMP_SYS(epoll_wait), SCMP_SYS(epoll_pwait), SCMP_SYS(epoll_ctl), SCMP_SYS(poll),
	SCMP_SYS(ppoll),
	/* memory, time, signals, the end */
	SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(brk), SCMP_SYS(madvise),
	SCMP_SYS(mprotect), SCMP_SYS(futex), SCMP_SYS(getrandom), SCMP_SYS(clock_gettime),
	SCMP_SYS(gettimeofday), SCMP_SYS(nanosleep), SCMP_SYS(clock_nanosleep),
	SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigprocmask),
	/*
	 * glibc's qsort asks sysinfo(2) for the memory size the first time it
	 * sorts more than 1 KiB (jansson's JSON_SORT_KEYS of a canonical tool
	 * definition with many properties); it only reads counters.
	 */
	SCMP_SYS(sysinfo),
	/* libevent puts SIGTERM/SIGINT's old handlers back when the loop ends. */
	SCMP_SYS(rt_sigaction), SCMP_SYS(restart_syscall), SCMP_SYS(exit), SCMP_SYS(exit_group),
};

int
mcpd_seccomp(void)
{
	scmp_filter_ctx ctx;
	int r = seccomp_allow_new(allowed, sizeof(allowed) / sizeof(allowed[0]), &ctx);
	if (r < 0)
		return r;
	return seccomp_allow_load(ctx);
}
