/* SPDX-License-Identifier: Apache-2.0 */
/*
 * privdrop.c — the ordered privilege drop (see privdrop.h for the order):
 * the id switch, and the capabilities-and-no_new_privs lock-down.
 *
 * Trusts: the target ids come from the caller (boxd's plan, or the process's
 * own ids); the result is re-verified (getresuid/getresgid, getgroups,
 * setuid(0) must fail) instead of trusting the return codes alone, as
 * OpenSSH's permanently_set_uid does.
 */
#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "privdrop.h"

static int
fail(const char **failed, const char *what, int r)
{
	if (failed)
		*failed = what;
	return r;
}

/*
 * Empty the bounding set. Needs CAP_SETPCAP: a process without it (an
 * ordinary user) cannot drop, and then must not hold any bounding capability
 * it could use anyway — NNP keeps it from gaining them through exec.
 */
static int
caps_drop_bounding(void)
{
	int have_setpcap = prctl(PR_CAPBSET_READ, CAP_SETPCAP, 0, 0, 0) == 1;
	cap_t cur = cap_get_proc();
	cap_flag_value_t eff = CAP_CLEAR;
	if (cur) {
		(void)cap_get_flag(cur, CAP_SETPCAP, CAP_EFFECTIVE, &eff);
		cap_free(cur);
	}
	if (!have_setpcap || eff != CAP_SET)
		return 0;
	for (int c = 0; c <= CAP_LAST_CAP + 8; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			return -errno;
	return 0;
}

/* The supplementary groups are exactly want[0..n) (order does not matter). */
static int
groups_verify(const gid_t *want, size_t n)
{
	gid_t have[PRIVDROP_GROUPS_MAX];
	int got = getgroups(PRIVDROP_GROUPS_MAX, have);
	if (got < 0)
		return -errno;
	if ((size_t)got != n)
		return -EPERM;
	for (size_t i = 0; i < n; i++) {
		bool found = false;
		for (int j = 0; j < got && !found; j++)
			found = have[j] == want[i];
		if (!found)
			return -EPERM;
	}
	return 0;
}

/* Is CAP_SETGID effective (setgroups needs it)? */
static bool
has_cap_setgid(void)
{
	cap_t cur = cap_get_proc();
	cap_flag_value_t eff = CAP_CLEAR;
	if (cur) {
		(void)cap_get_flag(cur, CAP_SETGID, CAP_EFFECTIVE, &eff);
		cap_free(cur);
	}
	return eff == CAP_SET;
}

int
privdrop_switch_ids(const struct privdrop *pd, const char **failed)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	/*
	 * A uid 0 without CAP_SETGID (box-shell, started as a root owner in its
	 * sandbox's user namespace with every capability gone) cannot change its
	 * groups at all, and setgroups would fail: its list stays as it is.
	 */
	bool set_groups = (geteuid() == 0 || getuid() == 0) && has_cap_setgid();

	if (pd->n_groups > PRIVDROP_GROUPS_MAX)
		return fail(failed, "setgroups", -E2BIG);
	if (set_groups && setgroups(pd->n_groups, pd->groups) < 0)
		return fail(failed, "setgroups", -errno);
	if (geteuid() == 0 && setresgid(pd->gid, pd->gid, pd->gid) < 0)
		return fail(failed, "setresgid", -errno);
	if (geteuid() == 0 && setresuid(pd->uid, pd->uid, pd->uid) < 0)
		return fail(failed, "setresuid", -errno);
	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
		return fail(failed, "getresuid", -errno);
	if (ru != pd->uid || eu != pd->uid || su != pd->uid || rg != pd->gid ||
	    eg != pd->gid || sg != pd->gid)
		return fail(failed, "verify ids", -EPERM);
	if (set_groups) {
		int r = groups_verify(pd->groups, pd->n_groups);
		if (r < 0)
			return fail(failed, "verify groups", r);
	}
	/* Must not be able to regain root. */
	if (pd->uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
		return fail(failed, "uid 0 could be regained", -EPERM);
	/* (Root keeps every right to change its gid: only a non-root target is checked.) */
	if (pd->uid != 0 && pd->gid != 0 && (setgid(0) == 0 || setegid(0) == 0))
		return fail(failed, "gid 0 could be regained", -EPERM);
	return 0;
}

int
privdrop_caps_clear(void)
{
	int r = caps_drop_bounding();
	if (r < 0)
		return r;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	cap_t caps = cap_init();
	if (!caps)
		return -ENOMEM;
	r = cap_set_proc(caps);
	int saved = errno;
	cap_free(caps);
	if (r < 0)
		return -saved;
	/* Verify: every set empty. */
	caps = cap_get_proc();
	if (!caps)
		return -errno;
	cap_t empty = cap_init();
	int same = empty && cap_compare(caps, empty) == 0;
	cap_free(caps);
	cap_free(empty);
	return same ? 0 : -EPERM;
}

int
privdrop_no_new_privs(void)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return -EPERM;
	return 0;
}

int
privdrop_lock_down(bool not_dumpable, const char **failed)
{
	int r = privdrop_caps_clear();
	if (r < 0)
		return fail(failed, "dropping every capability", r);
	r = privdrop_no_new_privs();
	if (r < 0)
		return fail(failed, "PR_SET_NO_NEW_PRIVS", r);
	if (not_dumpable && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return fail(failed, "PR_SET_DUMPABLE 0", -errno);
	return 0;
}

int
privdrop_apply(const struct privdrop *pd, const char **failed)
{
	/* The bounding set while we still hold CAP_SETPCAP. */
	int r = caps_drop_bounding();
	if (r < 0)
		return fail(failed, "PR_CAPBSET_DROP", r);
	r = privdrop_switch_ids(pd, failed);
	if (r < 0)
		return r;
	return privdrop_lock_down(!pd->keep_dumpable, failed);
}
