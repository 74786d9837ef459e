/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kernel_report.h — one kernel refusal report: PID 1 of a sandbox
 * (box-trampoline/kernel.c) to boxd (boxd/kernel.c) on the plan socket,
 * the trampoline's fd 3, which PID 1 keeps after the plan (docs/sandbox.md,
 * "Kernel refusals"). One SOCK_SEQPACKET packet of exactly this size, no fds;
 * fixed layout, host byte order (both ends are one machine's programs).
 * Trusts: nothing — boxd checks every field (box_kernel_report_check).
 */
#ifndef BOX_COMMON_KERNEL_REPORT_H
#define BOX_COMMON_KERNEL_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define BOX_KERNEL_REPORT_VERSION 1u
#define BOX_KERNEL_KINDS_MAX 256u     /* kinds a sandbox reports one by one; then "other" */
#define BOX_KERNEL_WINDOW_S 10        /* repeats are counted and sent every 10 s */
#define BOX_KERNEL_NAME_MAX 32        /* a system call's name, NUL included */

struct box_kernel_report {
	uint32_t version; /* BOX_KERNEL_REPORT_VERSION */
	int32_t nr;       /* x86_64 system call number; -1: a kind past BOX_KERNEL_KINDS_MAX */
	uint32_t err;     /* the errno the call got, 1..4095 */
	uint32_t count;   /* calls refused (the first: 1; then those of the last window) */
	uint32_t first;   /* 1: the first of its kind, sent at once */
	char name[BOX_KERNEL_NAME_MAX]; /* [a-z0-9_]+, NUL-terminated ("other" for nr -1) */
};

/* Whether R (a packet of exactly sizeof(*r) bytes) holds what PID 1 may say. */
static inline bool
box_kernel_report_check(const struct box_kernel_report *r)
{
	if (r->version != BOX_KERNEL_REPORT_VERSION || r->nr < -1 || r->nr > 4095 || !r->err ||
	    r->err > 4095 || !r->count || r->first > 1)
		return false;
	size_t n = strnlen(r->name, sizeof(r->name));
	if (n == 0 || n == sizeof(r->name))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = r->name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return true;
}

#endif
