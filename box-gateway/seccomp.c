/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seccomp.c — box-gateway's own allow-list, installed after the privilege
 * drop, the CA, the TLS contexts and the resolver configuration, and before
 * GatewayReady (so every connection it ever serves runs under it).
 *
 * The gateway moves bytes between TCP sockets and talks to two
 * SOCK_SEQPACKET channels it inherited: socket() only for AF_INET and
 * AF_INET6 (dialing upstream, evdns' UDP), connect, accept4 on the
 * listeners boxd passes; no open, exec, ptrace, mount, namespace or AF_UNIX
 * socket call. Everything else kills the process. The sanitizer runtime's
 * own calls are added by common/seccomp_allow.c in sanitizer builds only.
 * Trusts: nothing.
 */
#include <errno.h>
#include <stddef.h>
#include <sys/socket.h>

#include <seccomp.h>

#include "gateway.h"
#include "seccomp_allow.h"

static const int allowed[] = {
    SCMP_SYS(read),
    SCMP_SYS(write),
    SCMP_SYS(writev),
    SCMP_SYS(readv),
    SCMP_SYS(sendmsg),
    SCMP_SYS(recvmsg),
    SCMP_SYS(sendto),
    SCMP_SYS(recvfrom),
    SCMP_SYS(sendmmsg),
    SCMP_SYS(recvmmsg),
    SCMP_SYS(connect),
    SCMP_SYS(accept4),
    SCMP_SYS(shutdown),
    SCMP_SYS(getsockopt),
    SCMP_SYS(setsockopt),
    SCMP_SYS(getsockname),
    SCMP_SYS(getpeername),
    SCMP_SYS(poll),
    SCMP_SYS(ppoll),
    SCMP_SYS(epoll_wait),
    SCMP_SYS(epoll_pwait),
    SCMP_SYS(epoll_ctl),
    SCMP_SYS(close),
    SCMP_SYS(fstat),
    SCMP_SYS(newfstatat),
    SCMP_SYS(fcntl),
    SCMP_SYS(mmap),
    SCMP_SYS(munmap),
    SCMP_SYS(mremap),
    SCMP_SYS(brk),
    SCMP_SYS(madvise),
    SCMP_SYS(mprotect),
    SCMP_SYS(clock_gettime),
    SCMP_SYS(gettimeofday),
    SCMP_SYS(getpid),
    SCMP_SYS(gettid),
    SCMP_SYS(exit),
    SCMP_SYS(exit_group),
    SCMP_SYS(rt_sigreturn),
    SCMP_SYS(rt_sigprocmask),
    SCMP_SYS(futex),
    SCMP_SYS(getrandom),
    SCMP_SYS(restart_syscall),
    SCMP_SYS(clock_nanosleep),
    SCMP_SYS(nanosleep),
    /* libevent puts SIGTERM/SIGINT's old handlers back when the loop ends. */
    SCMP_SYS(rt_sigaction),
    /*
     * glibc's qsort reads the machine's memory size once (sysconf _SC_PHYS_PAGES)
     * when it sorts the X509 store: the system roots are parsed under the filter,
     * at the first upstream TLS verification (ca.c). It says nothing of any box.
     */
    SCMP_SYS(sysinfo),
};

int
gw_seccomp(void)
{
	scmp_filter_ctx ctx;
	int r = seccomp_allow_new(allowed, sizeof(allowed) / sizeof(allowed[0]), &ctx);
	if (r < 0)
		return r;
	/* Spelled out: libseccomp's SCMP_A0() leaves datum_b to clang's -Wextra. */
	static const int families[] = {AF_INET, AF_INET6};
	for (size_t i = 0; i < 2 && r == 0; i++) {
		const struct scmp_arg_cmp a0 = {.arg = 0,
						.op = SCMP_CMP_EQ,
						.datum_a = (scmp_datum_t)families[i],
						.datum_b = 0};
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1, &a0);
	}
	if (r < 0) {
		seccomp_release(ctx);
		return r;
	}
	return seccomp_allow_load(ctx);
}
