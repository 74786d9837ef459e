/* SPDX-License-Identifier: Apache-2.0 */
/*
 * view.h — the mount view as a list of entries, computed from the plan alone
 * (no system call): box-trampoline/view.c builds it, mount.c mounts it. Kept
 * apart so a test can compute a view from any validated plan without
 * privileges (test/fuzz/fuzz_view.c).
 * Trusts: the validated plan.
 */
#ifndef BOX_TRAMPOLINE_VIEW_H
#define BOX_TRAMPOLINE_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trampoline.h"

/* Extra kinds of the internal entry list, beside plan.proto's ViewKind. */
enum {
	VK_SYSTEM = 100, /* /usr /lib* /bin /sbin: read-only, exec */
	VK_ETC,		 /* runtime /etc files: read-only, noexec */
	VK_MANAGED,	 /* a box-managed runtime dir bound at /tmp, /var/tmp, HOME */
	VK_TMPFS,	 /* a private tmpfs (tools) */
	VK_SELF,	 /* a directory between a grant and a mask, bound onto itself */
	VK_WORKLOAD,	 /* box-shell's binary (plan.workload_bin): read-only, exec */
	VK_DROPPED,	 /* internal to view_collect: a mask that hides nothing in the view */
};

struct vent {
	const char *path; /* in the view (and on the host, except VK_MANAGED) */
	const char *src;  /* host source (mask, runtime dir); NULL: same as path */
	int kind;
	unsigned depth;
	int rank;
	uint64_t attr;
};

struct view {
	struct tramp *t;
	int oldroot; /* O_PATH of /oldroot */
	int newroot; /* O_PATH of /newroot */
	int masks;   /* O_PATH of the base tmpfs dir holding /proc masks */
	bool agent; /* the agent's view (agent and box-shell): grants and scratch dirs noexec */
	struct vent *v;
	size_t n, cap;
};

/*
 * Collect every mount of the view into vw->v with its flags, sorted by depth
 * (outer first), then rank, then path: the innermost entry is mounted last
 * and decides the flags. Needs vw->t (its plan); sets vw->agent; fails only
 * through tramp_fail (out of memory, a kind the validator would refuse).
 */
void view_collect(struct view *vw);
/* Free vw->v and the paths view_collect allocated (the /etc entries, self binds). */
void view_entries_free(struct view *vw);

#endif
