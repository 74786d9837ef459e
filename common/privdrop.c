/*
 * privdrop.c — the ordered privilege drop (see privdrop.h for the order).
 *
 * Trusts: the target ids come from boxd's plan; this function re-verifies the
 * result (getresuid/getresgid, setuid(0) must fail) instead of trusting the
 * return codes alone, as OpenSSH's permanently_set_uid does.
 */
#include <errno.h>
#include <grp.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "privdrop.h"

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

int
caps_drop_all(void)
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
privdrop_apply(const struct privdrop *pd)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	/* The bounding set while we still hold CAP_SETPCAP. */
	int r = caps_drop_bounding();
	if (r < 0)
		return r;
	if (geteuid() == 0 || getuid() == 0) {
		if (setgroups(pd->n_groups, pd->groups) < 0)
			return -errno;
	}
	if (setresgid(pd->gid, pd->gid, pd->gid) < 0)
		return -errno;
	if (setresuid(pd->uid, pd->uid, pd->uid) < 0)
		return -errno;
	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
		return -errno;
	if (ru != pd->uid || eu != pd->uid || su != pd->uid || rg != pd->gid ||
	    eg != pd->gid || sg != pd->gid)
		return -EPERM;
	/* Must not be able to regain root. */
	if (pd->uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
		return -EPERM;
	r = caps_drop_all();
	if (r < 0)
		return r;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (!pd->keep_dumpable && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return -errno;
	return 0;
}
