/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seccomp.c — step 11: box's refusing seccomp program, built by libseccomp
 * at build time (gen/refuse_gen.c; refuse_baked.c holds the result PID 1 takes
 * before the workload exists; docs/sandbox.md). It is not loaded as it is: the
 * workload installs the listener's copy, its refusals turned into USER_NOTIF
 * (pid1.c, kfilter.c), and PID 1 answers each with the errno this program
 * gives and reports it (kernel.c, "Kernel refusals").
 *
 * libseccomp, default allow, foreign architectures killed. libseccomp 2.5.4
 * refuses allow rules in a default-allow filter and two comparisons on one
 * argument, so the socket allow-list is one EPERM rule per disallowed family
 * (and family >= AF_MAX), and the personality allow-list is a small
 * hand-written BPF program chained after the libseccomp one. Every test on an
 * integer argument compares the low 32 bits (SCMP_CMP_MASKED_EQ with mask
 * 0xffffffff, or a mask within the low word), so high bits cannot slip past.
 * Syscalls libseccomp 2.5.4 cannot name come from common/compat/syscalls.h.
 *
 * No setuid or setgid file may come out of a box: uid 0 of a root-owned box
 * is host uid 0, and `nosuid` holds only inside the view, so every call that
 * sets a file mode refuses S_ISUID and S_ISGID (one rule per bit: a rule
 * matches when all its comparisons hold). For open/openat the mode counts
 * only with O_CREAT or O_TMPFILE in the flags (a rule may compare two
 * different arguments); openat2's mode is in memory the filter cannot read,
 * so openat2 answers ENOSYS, as clone3 does.
 * Trusts: nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <unistd.h>

#include "cleanup.h"
#include "compat/syscalls.h"
#include "kfilter.h"
#include "trampoline.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

#define LOW32 0xffffffffULL

static void
ctx_releasep(scmp_filter_ctx *c)
{
	if (*c)
		seccomp_release(*c);
}

#define ADD(ctx, action, nr, ...)                                                          \
	do {                                                                               \
		int r_ = seccomp_rule_add((ctx), (action), (nr), __VA_ARGS__);             \
		if (r_ < 0) {                                                              \
			snprintf(why, why_len, "rule for syscall %d", (int)(nr));          \
			return r_;                                                         \
		}                                                                          \
	} while (0)

static const int denied_syscalls[] = {
	SCMP_SYS(mount),
	SCMP_SYS(umount2),
	SCMP_SYS(pivot_root),
	BOX_NR_fsopen,
	BOX_NR_fsconfig,
	BOX_NR_fsmount,
	BOX_NR_fspick,
	BOX_NR_move_mount,
	BOX_NR_open_tree,
	BOX_NR_open_tree_attr,
	BOX_NR_mount_setattr,
	SCMP_SYS(setns),
	SCMP_SYS(ptrace),
	SCMP_SYS(process_vm_readv),
	SCMP_SYS(process_vm_writev),
	SCMP_SYS(keyctl),
	SCMP_SYS(add_key),
	SCMP_SYS(request_key),
	SCMP_SYS(bpf),
	SCMP_SYS(perf_event_open),
	SCMP_SYS(userfaultfd),
	BOX_NR_io_uring_setup,
	BOX_NR_io_uring_enter,
	BOX_NR_io_uring_register,
	SCMP_SYS(init_module),
	SCMP_SYS(finit_module),
	SCMP_SYS(delete_module),
	SCMP_SYS(kexec_load),
	SCMP_SYS(kexec_file_load),
	SCMP_SYS(open_by_handle_at),
	SCMP_SYS(name_to_handle_at),
	BOX_NR_pidfd_getfd,
	SCMP_SYS(acct),
	SCMP_SYS(swapon),
	SCMP_SYS(swapoff),
	SCMP_SYS(reboot),
	SCMP_SYS(syslog),
	SCMP_SYS(settimeofday),
	SCMP_SYS(clock_settime),
	SCMP_SYS(clock_adjtime),
	SCMP_SYS(adjtimex),
	BOX_NR_memfd_secret, /* no use in a box; its own rarely exercised memory-management code */
};

/* Calls that set a file mode, and which argument holds it. */
static const struct {
	int nr;
	unsigned arg;
} mode_setters[] = {
	{SCMP_SYS(chmod), 1},	 {SCMP_SYS(fchmod), 1},	 {SCMP_SYS(creat), 1},
	{SCMP_SYS(mknod), 1},	 {SCMP_SYS(fchmodat), 2}, {BOX_NR_fchmodat2, 2},
	{SCMP_SYS(mknodat), 2},
};

/* open/openat: the flags that make the mode count (O_TMPFILE is two bits,
 * __O_TMPFILE|O_DIRECTORY; the kernel refuses one without the other), and
 * where flags and mode are. */
static const unsigned long creating_flags[] = {O_CREAT, O_TMPFILE};
static const struct {
	int nr;
	unsigned flags_arg, mode_arg;
} openers[] = {
	{SCMP_SYS(open), 1, 2},
	{SCMP_SYS(openat), 2, 3},
};
static const unsigned long privileged_mode_bits[] = {S_ISUID, S_ISGID};

/* IPPROTO_* of AF_INET/AF_INET6 sockets refused beside SOCK_RAW: protocols a
 * box has no use for, each a separate stack of kernel code. */
static const int refused_inet_protocols[] = {IPPROTO_UDPLITE, IPPROTO_MPTCP};

static const unsigned long ns_flags[] = {
	CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
	CLONE_NEWNET,
};

static int
build_main(scmp_filter_ctx ctx, char *why, size_t why_len)
{
	const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	int r;

	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (r < 0) {
		snprintf(why, why_len, "SCMP_FLTATR_ACT_BADARCH");
		return r;
	}

	for (size_t i = 0; i < ELEMENTSOF(denied_syscalls); i++)
		ADD(ctx, eperm, denied_syscalls[i], 0);

	/* clone3's flags are in memory seccomp cannot read: ENOSYS, glibc falls back. */
	ADD(ctx, SCMP_ACT_ERRNO(ENOSYS), BOX_NR_clone3, 0);
	for (size_t i = 0; i < ELEMENTSOF(ns_flags); i++) {
		ADD(ctx, eperm, SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]));
		ADD(ctx, eperm, SCMP_SYS(unshare), 1,
		    SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]));
	}
	ADD(ctx, eperm, SCMP_SYS(unshare), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWTIME, CLONE_NEWTIME));

	ADD(ctx, eperm, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, LOW32, TIOCSTI));
	ADD(ctx, eperm, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, LOW32, TIOCLINUX));
	/* A line discipline loads kernel code (and may autoload a module). */
	ADD(ctx, eperm, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, LOW32, TIOCSETD));

	/* No setuid/setgid mode, whichever call would set it (the mode is a
	 * umode_t: only the low bits count, and the mask tests exactly those). */
	for (size_t b = 0; b < ELEMENTSOF(privileged_mode_bits); b++) {
		const unsigned long bit = privileged_mode_bits[b];
		for (size_t i = 0; i < ELEMENTSOF(mode_setters); i++)
			ADD(ctx, eperm, mode_setters[i].nr, 1,
			    SCMP_CMP(mode_setters[i].arg, SCMP_CMP_MASKED_EQ, bit, bit));
		for (size_t i = 0; i < ELEMENTSOF(openers); i++)
			for (size_t f = 0; f < ELEMENTSOF(creating_flags); f++)
				ADD(ctx, eperm, openers[i].nr, 2,
				    SCMP_CMP(openers[i].flags_arg, SCMP_CMP_MASKED_EQ,
					     creating_flags[f], creating_flags[f]),
				    SCMP_CMP(openers[i].mode_arg, SCMP_CMP_MASKED_EQ, bit, bit));
	}
	/* openat2's flags and mode are in memory seccomp cannot read. ENOSYS:
	 * callers fall back to openat (measured with strace: glibc 2.36, python3,
	 * node 20, git, cp -a, install and tar never call it). */
	ADD(ctx, SCMP_ACT_ERRNO(ENOSYS), BOX_NR_openat2, 0);

	/* socket: AF_UNIX, AF_INET/AF_INET6 without SOCK_RAW, AF_NETLINK route only. */
	for (int fam = 0; fam < AF_MAX; fam++) {
		if (fam == AF_UNIX || fam == AF_INET || fam == AF_INET6 || fam == AF_NETLINK)
			continue;
		ADD(ctx, eperm, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, fam));
	}
	ADD(ctx, eperm, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_GE, AF_MAX));
	ADD(ctx, eperm, SCMP_SYS(socket), 2, SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, AF_INET),
	    SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_RAW));
	ADD(ctx, eperm, SCMP_SYS(socket), 2, SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, AF_INET6),
	    SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_RAW));
	for (size_t i = 0; i < ELEMENTSOF(refused_inet_protocols); i++) {
		ADD(ctx, eperm, SCMP_SYS(socket), 2, SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, AF_INET),
		    SCMP_A2(SCMP_CMP_MASKED_EQ, LOW32, refused_inet_protocols[i]));
		ADD(ctx, eperm, SCMP_SYS(socket), 2, SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, AF_INET6),
		    SCMP_A2(SCMP_CMP_MASKED_EQ, LOW32, refused_inet_protocols[i]));
	}
	for (int proto = 1; proto < 32; proto++)
		ADD(ctx, eperm, SCMP_SYS(socket), 2, SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, AF_NETLINK),
		    SCMP_A2(SCMP_CMP_MASKED_EQ, LOW32, proto));
	ADD(ctx, eperm, SCMP_SYS(socket), 2, SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, AF_NETLINK),
	    SCMP_A2(SCMP_CMP_GE, 32));

	/* fexecve of a memfd. */
	ADD(ctx, eperm, SCMP_SYS(execveat), 1,
	    SCMP_A4(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH));
	/* No seccomp user notifier inside the box. */
	ADD(ctx, eperm, SCMP_SYS(seccomp), 1,
	    SCMP_A1(SCMP_CMP_MASKED_EQ, SECCOMP_FILTER_FLAG_NEW_LISTENER,
		    SECCOMP_FILTER_FLAG_NEW_LISTENER));
	return 0;
}

/*
 * personality(2): allowed for 0, PER_LINUX|0x8 (UNAME26), ADDR_NO_RANDOMIZE
 * (0x20000), both, and 0xffffffff (query); else EPERM. Compares the low 32
 * bits of args[0] (little-endian: offset 16). Chained after libseccomp's
 * program (its RET ALLOW jumps here: kfilter_append).
 */
static const struct sock_filter personality_filter[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 9),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_personality, 0, 7),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 5, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x8, 4, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x20000, 3, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x20008, 2, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffff, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

/* libseccomp's program for CTX into OUT, through a pipe (32 KiB at most: within its buffer). */
static int
export_bpf(scmp_filter_ctx ctx, struct kprog *out)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	int r = seccomp_export_bpf(ctx, p[1]);
	close(p[1]);
	size_t got = 0;
	while (r >= 0) {
		ssize_t n = read(p[0], (char *)out->f + got, sizeof(out->f) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		got += (size_t)n;
		if (got == sizeof(out->f)) {
			r = -E2BIG;
			break;
		}
	}
	close(p[0]);
	if (r < 0)
		return r;
	if (got % sizeof(struct sock_filter) || !got)
		return -EINVAL;
	out->n = got / sizeof(struct sock_filter);
	return 0;
}

int
seccomp_programs_build(struct kprog *refuse, char *why, size_t why_len)
{
	static struct kprog lib;
	_cleanup_(ctx_releasep) scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		snprintf(why, why_len, "seccomp_init");
		return -ENOMEM;
	}
	int r = build_main(ctx, why, why_len);
	if (r < 0)
		return r;
	r = export_bpf(ctx, &lib);
	if (r < 0) {
		snprintf(why, why_len, "exporting the filter");
		return r;
	}
	refuse->n = 0;
	if ((r = kfilter_append(refuse, lib.f, lib.n)) < 0 ||
	    (r = kfilter_append(refuse, personality_filter, ELEMENTSOF(personality_filter))) < 0) {
		snprintf(why, why_len, "the filter is longer than %d instructions",
			 KFILTER_INSNS_MAX);
		return r;
	}
	return 0;
}
