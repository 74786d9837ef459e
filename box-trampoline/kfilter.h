/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kfilter.h — the workload's seccomp program as data (kfilter.c): programs
 * chained (each RET ALLOW jumps to the next program), the listener's copy with
 * its refusals turned into USER_NOTIF, and a classic-BPF interpreter PID 1
 * runs over a notification's seccomp_data to learn which answer the refusing
 * program gives. Pure: no system call, no logging.
 * Trusts: nothing; a program it did not build is checked as it runs.
 */
#ifndef BOX_TRAMPOLINE_KFILTER_H
#define BOX_TRAMPOLINE_KFILTER_H

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>

#define KFILTER_INSNS_MAX 4096 /* BPF_MAXINSNS: the kernel's own cap */

struct kprog {
	struct sock_filter f[KFILTER_INSNS_MAX];
	size_t n;
};

/* Append N instructions of P to OUT; OUT's RET ALLOWs jump to P's first one. -E2BIG. */
int kfilter_append(struct kprog *out, const struct sock_filter *p, size_t n);
/*
 * The listener's program: every RET ERRNO(e) with e other than ENOSYS (the
 * compatibility answers, clone3 and openat2) becomes RET USER_NOTIF. Returns
 * how many it rewrote.
 */
size_t kfilter_notify(struct kprog *p);
/*
 * Run P over D as the kernel would: 0 with *RET the action and *RET_PC the
 * index of the RET that gave it; -EINVAL for an instruction it does not know,
 * a jump or load out of range (classic BPF jumps only forward: it ends).
 */
int kfilter_run(const struct sock_filter *p, size_t n, const struct seccomp_data *d,
		uint32_t *ret, size_t *ret_pc);
/* A refusal: RET ERRNO(e) other than ENOSYS; *ERR = e. */
static inline int
kfilter_refusal(uint32_t action, int *err)
{
	if ((action & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ERRNO)
		return 0;
	*err = (int)(action & SECCOMP_RET_DATA);
	return *err != ENOSYS;
}

#endif
