/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_kfilter.c — the workload's seccomp program as data (box-trampoline/kfilter.c):
 * box's refusing program (seccomp.c, libseccomp's then the personality filter)
 * run by the userspace interpreter gives EPERM for mount, unshare of a namespace,
 * a refused socket family and personality, ENOSYS (not a refusal) for clone3 and
 * openat2, ALLOW for ordinary calls and KILL for a foreign architecture; the
 * listener's copy returns USER_NOTIF exactly where the program refuses, keeps the
 * ENOSYS answers, and chains a supervision program after it; the interpreter agrees
 * with the kernel (a child under the program makes the same calls); malformed
 * programs are refused, never run past their end.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <linux/audit.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "box-trampoline/kfilter.h"
#include "box-trampoline/trampoline.h"
#include "tap.h"

#define ERRNO(e) (SECCOMP_RET_ERRNO | (e))

static struct kprog refuse, listen_prog;

static struct seccomp_data
call(int nr, unsigned long long a0, unsigned long long a1, unsigned long long a2)
{
	struct seccomp_data d = { .nr = nr, .arch = AUDIT_ARCH_X86_64 };
	d.args[0] = a0;
	d.args[1] = a1;
	d.args[2] = a2;
	return d;
}

static uint32_t
run(const struct kprog *p, struct seccomp_data d)
{
	uint32_t ret = 0xdead;
	size_t pc;
	int r = kfilter_run(p->f, p->n, &d, &ret, &pc);
	CHECK_INT(r, 0);
	return ret;
}

static void
build(void)
{
	char why[256] = "";
	if (refuse.n)
		return;
	int r = seccomp_programs_build(&refuse, why, sizeof(why));
	if (r < 0)
		printf("#   seccomp_programs_build: %s: %s\n", why, strerror(-r));
	CHECK_INT(r, 0);
	listen_prog = refuse;
}

/*
 * The program a sandbox's PID 1 uses was compiled at build time
 * (refuse_baked.c): it is the one libseccomp builds now, every instruction.
 */
static void
test_baked_is_libseccomps(void)
{
	static struct kprog baked;
	build();
	CHECK_INT(seccomp_programs_baked(&baked), 0);
	CHECK_INT((int)baked.n, (int)refuse.n);
	CHECK(baked.n == refuse.n &&
	      memcmp(baked.f, refuse.f, refuse.n * sizeof(refuse.f[0])) == 0);
}

static void
test_refusing_program(void)
{
	build();
	CHECK_INT(run(&refuse, call(__NR_mount, 0, 0, 0)), ERRNO(EPERM));
	CHECK_INT(run(&refuse, call(__NR_unshare, CLONE_NEWUSER, 0, 0)), ERRNO(EPERM));
	CHECK_INT(run(&refuse, call(__NR_unshare, CLONE_NEWNS, 0, 0)), ERRNO(EPERM));
	CHECK_INT(run(&refuse, call(__NR_unshare, CLONE_FILES, 0, 0)), SECCOMP_RET_ALLOW);
	CHECK_INT(run(&refuse, call(__NR_socket, AF_PACKET, SOCK_RAW, 0)), ERRNO(EPERM));
	CHECK_INT(run(&refuse, call(__NR_socket, AF_INET, SOCK_STREAM, 0)), SECCOMP_RET_ALLOW);
	CHECK_INT(run(&refuse, call(__NR_personality, 0x0400000, 0, 0)), ERRNO(EPERM));
	CHECK_INT(run(&refuse, call(__NR_personality, 0, 0, 0)), SECCOMP_RET_ALLOW);
	CHECK_INT(run(&refuse, call(435 /* clone3 */, 0, 0, 0)), ERRNO(ENOSYS));
	CHECK_INT(run(&refuse, call(437 /* openat2 */, 0, 0, 0)), ERRNO(ENOSYS));
	CHECK_INT(run(&refuse, call(__NR_read, 0, 0, 0)), SECCOMP_RET_ALLOW);
	struct seccomp_data foreign = call(__NR_read, 0, 0, 0);
	foreign.arch = AUDIT_ARCH_I386;
	CHECK_INT(run(&refuse, foreign) & SECCOMP_RET_ACTION_FULL, SECCOMP_RET_KILL_PROCESS);
	int e = 0;
	CHECK(kfilter_refusal(ERRNO(EPERM), &e) && e == EPERM);
	CHECK(!kfilter_refusal(ERRNO(ENOSYS), &e));
	CHECK(!kfilter_refusal(SECCOMP_RET_ALLOW, &e));
}

static void
test_listener_program(void)
{
	build();
	struct kprog *l = &listen_prog;
	CHECK(kfilter_notify(l) > 0);
	CHECK_INT(run(l, call(__NR_mount, 0, 0, 0)), SECCOMP_RET_USER_NOTIF);
	CHECK_INT(run(l, call(__NR_unshare, CLONE_NEWUSER, 0, 0)), SECCOMP_RET_USER_NOTIF);
	CHECK_INT(run(l, call(__NR_personality, 0x0400000, 0, 0)), SECCOMP_RET_USER_NOTIF);
	CHECK_INT(run(l, call(435, 0, 0, 0)), ERRNO(ENOSYS));
	CHECK_INT(run(l, call(__NR_read, 0, 0, 0)), SECCOMP_RET_ALLOW);
	/* a supervision program after it: its own answers for what the first allows */
	struct sock_filter sup[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct kprog chained = *l;
	CHECK_INT(kfilter_append(&chained, sup, 4), 0);
	CHECK_INT(chained.n, l->n + 4);
	CHECK_INT(run(&chained, call(__NR_openat, 0, 0, 0)), SECCOMP_RET_USER_NOTIF);
	CHECK_INT(run(&chained, call(__NR_read, 0, 0, 0)), SECCOMP_RET_ALLOW);
	CHECK_INT(run(&chained, call(__NR_mount, 0, 0, 0)), SECCOMP_RET_USER_NOTIF);
	CHECK_INT(run(&chained, call(435, 0, 0, 0)), ERRNO(ENOSYS));
	/* too long for the kernel: refused */
	static struct kprog big;
	big.n = KFILTER_INSNS_MAX - 2;
	CHECK_INT(kfilter_append(&big, sup, 4), -E2BIG);
}

/* The kernel's answers under the program equal the interpreter's. */
static void
test_kernel_agrees(void)
{
	build();
	struct {
		int nr;
		unsigned long long a0, a1;
	} calls[] = {
		{ __NR_mount, 0, 0 },
		{ __NR_unshare, CLONE_NEWUSER, 0 },
		{ __NR_unshare, CLONE_NEWNS, 0 },
		{ __NR_socket, AF_PACKET, SOCK_RAW },
		{ __NR_personality, 0x0400000, 0 },
		{ 435, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		uint32_t want = run(&refuse, call(calls[i].nr, calls[i].a0, calls[i].a1, 0));
		pid_t pid = fork();
		if (pid == 0) {
			struct sock_fprog prog = { .len = (unsigned short)refuse.n, .filter = refuse.f };
			if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
			    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
				_exit(255);
			long r = syscall(calls[i].nr, calls[i].a0, calls[i].a1, 0, 0, 0);
			_exit(r < 0 ? errno : 0);
		}
		int st = 0;
		CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
		CHECK_INT(WEXITSTATUS(st), want & SECCOMP_RET_DATA);
	}
}

static void
test_malformed(void)
{
	struct seccomp_data d = call(__NR_read, 0, 0, 0);
	uint32_t ret;
	size_t pc;
	struct sock_filter past_end[] = {
		BPF_JUMP(BPF_JMP | BPF_JA, 5, 0, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	CHECK_INT(kfilter_run(past_end, 2, &d, &ret, &pc), -EINVAL);
	struct sock_filter far_load[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, sizeof(struct seccomp_data)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	CHECK_INT(kfilter_run(far_load, 2, &d, &ret, &pc), -EINVAL);
	struct sock_filter no_ret[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
	};
	CHECK_INT(kfilter_run(no_ret, 1, &d, &ret, &pc), -EINVAL);
	struct sock_filter unknown[] = {
		{ .code = 0xff },
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	CHECK_INT(kfilter_run(unknown, 2, &d, &ret, &pc), -EINVAL);
	struct sock_filter cond_past[] = {
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	CHECK_INT(kfilter_run(cond_past, 2, &d, &ret, &pc), -EINVAL);
	struct sock_filter div0[] = {
		BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	CHECK_INT(kfilter_run(div0, 2, &d, &ret, &pc), -EINVAL);
	struct sock_filter fine[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_STMT(BPF_ST, 3),
		BPF_STMT(BPF_LDX | BPF_MEM, 3),
		BPF_STMT(BPF_MISC | BPF_TXA, 0),
		BPF_STMT(BPF_ALU | BPF_OR | BPF_K, SECCOMP_RET_ERRNO),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	CHECK_INT(kfilter_run(fine, 6, &d, &ret, &pc), 0);
	CHECK_INT(ret, SECCOMP_RET_ERRNO | __NR_read);
	CHECK_INT(pc, 5);
}

int
main(void)
{
	RUN(test_baked_is_libseccomps);
	RUN(test_refusing_program);
	RUN(test_listener_program);
	RUN(test_kernel_agrees);
	RUN(test_malformed);
	return tap_done();
}
