/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rlimit.c — step 6, limits: RLIMIT_CORE 0, nofile and nproc from the plan.
 *
 * RLIMIT_NPROC is set inside the box's user namespace, where it counts the
 * owner's processes of this box only; it does not bind uid 0, so a
 * root-owned box's pids_max goes through a cgroup (ns.c checked that).
 * Trusts: the validated plan.
 */
#include <errno.h>
#include <sys/resource.h>

#include "trampoline.h"

static void
set_limit(struct tramp *t, int resource, const char *name, rlim_t v)
{
	struct rlimit rl = {.rlim_cur = v, .rlim_max = v};
	if (setrlimit(resource, &rl) < 0)
		tramp_fail(t, STEP_LIMITS, errno, "%s = %llu", name, (unsigned long long)v);
	struct rlimit back;
	if (getrlimit(resource, &back) < 0 || back.rlim_cur != v || back.rlim_max != v)
		tramp_fail(t, STEP_LIMITS, 0, "%s did not read back", name);
}

void
limits_apply(struct tramp *t)
{
	const Box__Limits *l = t->plan->limits;

	set_limit(t, RLIMIT_CORE, "RLIMIT_CORE", 0);
	if (!l)
		return;
	if (l->has_nofile)
		set_limit(t, RLIMIT_NOFILE, "RLIMIT_NOFILE", (rlim_t)l->nofile);
	if (l->has_nproc)
		set_limit(t, RLIMIT_NPROC, "RLIMIT_NPROC", (rlim_t)l->nproc);
}
