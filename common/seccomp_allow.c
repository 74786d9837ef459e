/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seccomp_allow.c — one way for a daemon to build its allow-list filter
 * (seccomp_allow.h): default SCMP_ACT_KILL_PROCESS, the daemon's list, and
 * in an AddressSanitizer build the runtime's own calls (reading
 * /proc/self/maps, LeakSanitizer's ptrace-based stop-the-world from a cloned
 * tracer, its signal stack, its reports) so a sanitizer run exercises the
 * same filter instead of a weaker one.
 * Trusts: its caller.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp_allow.h"

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
#define SECCOMP_ALLOW_ASAN 1
#else
#define SECCOMP_ALLOW_ASAN 0
#endif

#if SECCOMP_ALLOW_ASAN
static const int sanitizer_calls[] = {
	SCMP_SYS(openat), SCMP_SYS(open), SCMP_SYS(read), SCMP_SYS(readlink),
	SCMP_SYS(readlinkat), SCMP_SYS(mprotect), SCMP_SYS(sigaltstack), SCMP_SYS(prctl),
	SCMP_SYS(rt_sigaction), SCMP_SYS(rt_sigprocmask), SCMP_SYS(sched_yield),
	SCMP_SYS(sched_getaffinity), SCMP_SYS(getdents64), SCMP_SYS(getdents), SCMP_SYS(tgkill),
	SCMP_SYS(kill), SCMP_SYS(gettid), SCMP_SYS(getppid), SCMP_SYS(pipe2), SCMP_SYS(wait4),
	SCMP_SYS(waitid), SCMP_SYS(clone), SCMP_SYS(execve), SCMP_SYS(dup2), SCMP_SYS(dup3),
	SCMP_SYS(getrlimit), SCMP_SYS(prlimit64), SCMP_SYS(setrlimit), SCMP_SYS(uname),
	SCMP_SYS(ioctl), SCMP_SYS(access), SCMP_SYS(faccessat), SCMP_SYS(stat), SCMP_SYS(lstat),
	SCMP_SYS(getuid), SCMP_SYS(geteuid), SCMP_SYS(personality), SCMP_SYS(lseek),
	SCMP_SYS(ptrace), SCMP_SYS(set_robust_list), SCMP_SYS(rt_sigtimedwait),
	SCMP_SYS(process_vm_readv), SCMP_SYS(munlock), SCMP_SYS(nanosleep),
	SCMP_SYS(clock_nanosleep), SCMP_SYS(getrandom),
};
#endif

int
seccomp_allow_sanitized(void)
{
	return SECCOMP_ALLOW_ASAN;
}

static int
allow_all(scmp_filter_ctx ctx, const int *calls, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, calls[i], 0);
		if (r < 0)
			return r;
	}
	return 0;
}

int
seccomp_allow_new(const int *allowed, size_t n, scmp_filter_ctx *ret)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (!ctx)
		return -ENOMEM;
	/*
	 * The kill is logged (an audit record, type SECCOMP, naming the call and the process;
	 * the kernel's log when no audit daemon runs): SECCOMP_FILTER_FLAG_LOG, where a kernel
	 * has it. The kernel logs kill actions by default (kernel.seccomp.actions_logged); the
	 * flag says so in the filter itself. Nothing but a kill is logged: the rest is allowed.
	 */
	int r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_LOG, 1);
	if (r == -EOPNOTSUPP || r == -EINVAL)
		r = 0; /* a kernel or libseccomp without the flag: the default logging stays */
	if (r == 0)
		r = allow_all(ctx, allowed, n);
#if SECCOMP_ALLOW_ASAN
	if (r == 0)
		r = allow_all(ctx, sanitizer_calls, sizeof(sanitizer_calls) / sizeof(*sanitizer_calls));
#endif
	if (r < 0) {
		seccomp_release(ctx);
		return r;
	}
	*ret = ctx;
	return 0;
}

int
seccomp_allow_load_prog(const struct sock_filter *prog, unsigned short n)
{
	struct sock_fprog fp = { .len = n, .filter = (struct sock_filter *)prog };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_LOG, &fp) == 0)
		return 0;
	if (errno != EINVAL)
		return -errno;
	/* A kernel without the flag (before 4.14): the default logging stays, as libseccomp does. */
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) == 0 ? 0 : -errno;
}

int
seccomp_allow_print_c(FILE *out, scmp_filter_ctx ctx, const char *name, const char *origin)
{
	struct sock_filter f[BPF_MAXINSNS];
	int p[2];
	size_t got = 0;

	if (pipe(p) < 0)
		return -errno;
	int r = seccomp_export_bpf(ctx, p[1]);
	close(p[1]);
	while (r >= 0) {
		ssize_t k = read(p[0], (char *)f + got, sizeof(f) - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			r = -errno;
		if (k <= 0)
			break;
		got += (size_t)k;
		if (got == sizeof(f))
			r = -E2BIG;
	}
	close(p[0]);
	if (r < 0)
		return r;
	if (!got || got % sizeof(f[0]))
		return -EINVAL;
	fprintf(out, "/* Generated at build time by %s: do not edit. */\n", origin);
	fprintf(out, "static const struct sock_filter %s[] = {\n", name);
	for (size_t i = 0; i < got / sizeof(f[0]); i++)
		fprintf(out, "\t{ 0x%04x, %u, %u, 0x%08xu },\n", (unsigned)f[i].code, (unsigned)f[i].jt,
		       (unsigned)f[i].jf, (unsigned)f[i].k);
	fprintf(out, "};\n");
	return fflush(out) == 0 && !ferror(out) ? 0 : -EIO;
}

int
seccomp_allow_load(scmp_filter_ctx ctx)
{
	int r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r < 0 ? r : 0;
}
