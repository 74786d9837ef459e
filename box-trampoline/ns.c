/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ns.c — layer probes, cgroup membership, step 1 (credentials and
 * namespaces).
 *
 * Layers: Landlock (best ABI, capped at BOX_LANDLOCK_ABI_MAX; common/hostprobe.c)
 * and seccomp are probed once; a layer the plan requires and the kernel lacks refuses
 * the start. BOX_TEST_ABSENT=landlock,seccomp,cgroup-v1 and
 * BOX_TEST_LANDLOCK_ABI=N, read from the trampoline's own environment, can
 * only make a layer look absent (or older), never weaken a present one.
 * Credentials: as root (service mode) switch to the owner — setgroups,
 * setresgid, setresuid, verified (common/privdrop.c) — then, as every owner does, unshare every
 * namespace and write the id maps as that owner.
 * Trusts: the validated plan.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "compat/landlock.h"
#include "fdutil.h"
#include "hostprobe.h"
#include "parse.h"
#include "path.h"
#include "plan_validate.h"
#include "privdrop.h"
#include "trampoline.h"

void
layers_probe(struct tramp *t)
{
	const char *absent = getenv("BOX_TEST_ABSENT");
	const char *abi_s = getenv("BOX_TEST_LANDLOCK_ABI");
	static const char *const known[] = {"landlock", "seccomp", "cgroup-v1"};

	/* Every word must be a known layer: a typo must not pass a test. */
	const char *w;
	size_t l;
	for (const char *p = absent; list_next_word(&p, &w, &l);) {
		bool ok = false;
		for (size_t i = 0; i < ELEMENTSOF(known); i++)
			if (strlen(known[i]) == l && strncmp(w, known[i], l) == 0)
				ok = true;
		if (!ok)
			tramp_fail(t, STEP_PLAN, 0, "BOX_TEST_ABSENT: unknown layer '%.*s'", (int)l, w);
	}

	long abi = hostprobe_landlock_abi();
	if (abi < 0)
		abi = 0;
	if (abi > BOX_LANDLOCK_ABI_MAX)
		abi = BOX_LANDLOCK_ABI_MAX;
	if (abi_s && *abi_s) {
		uint64_t n;
		if (parse_u64(abi_s, BOX_LANDLOCK_ABI_MAX, &n) < 0)
			tramp_fail(t, STEP_PLAN, 0, "BOX_TEST_LANDLOCK_ABI: not 0..%d",
				   BOX_LANDLOCK_ABI_MAX);
		if ((long)n < abi)
			abi = (long)n; /* only ever lower */
	}
	if (list_has_word(absent, "landlock"))
		abi = 0;
	t->landlock_abi = (int)abi;

	/* seccomp filters: SECCOMP_GET_ACTION_AVAIL answers only with CONFIG_SECCOMP_FILTER. */
	uint32_t action = SECCOMP_RET_KILL_PROCESS;
	t->seccomp_ok = syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
	if (list_has_word(absent, "seccomp"))
		t->seccomp_ok = false;
	t->absent_cgroup_v1 = list_has_word(absent, "cgroup-v1");

	if (t->plan->require_landlock && t->landlock_abi == 0)
		tramp_fail(t, STEP_LANDLOCK, 0,
			   "Landlock is not available on this kernel and [box] require lists it");
	if (t->plan->require_seccomp && !t->seccomp_ok)
		tramp_fail(t, STEP_SECCOMP, 0,
			   "seccomp filters are not available on this kernel and [box] require lists them");
}

/* Read a small cgroup file into buf (trimmed). */
static int
read_small(int dfd, const char *name, char *buf, size_t len)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, len - 1);
	int e = errno;
	close(fd);
	if (n < 0)
		return -e;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

static bool
limit_matches(const char *text, uint64_t want)
{
	uint64_t v;
	return parse_u64(text, UINT64_MAX, &v) == 0 && v == want;
}

/*
 * Join every cgroup boxd prepared (before the credentials change: joining
 * needs boxd's rights) and check that each limit reads back.
 */
void
cgroups_join(struct tramp *t)
{
	const Box__Limits *l = t->plan->limits;
	bool pids_done = false, mem_done = false;

	if (!l)
		return;
	for (size_t i = 0; i < l->n_cgroups; i++) {
		const char *dir = l->cgroups[i];
		_cleanup_close_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			tramp_fail(t, STEP_LIMITS, errno, "cgroup %s", dir);
		int version = hostprobe_cgroup_version(dfd);
		if (version == -EMEDIUMTYPE)
			tramp_fail(t, STEP_LIMITS, 0, "%s is not a cgroup directory", dir);
		if (version < 0)
			tramp_fail(t, STEP_LIMITS, -version, "cgroup %s", dir);
		bool v1 = version == 1;
		if (v1 && t->absent_cgroup_v1)
			tramp_fail(t, STEP_LIMITS, 0,
				   "the cgroup v1 hierarchy is not available (pids_max/memory_max need it)");

		int fd = openat(dfd, "cgroup.procs", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 || write(fd, "0", 1) != 1)
			tramp_fail(t, STEP_LIMITS, errno, "cannot join cgroup %s", dir);
		close(fd);

		char buf[64];
		if (l->has_pids_max && read_small(dfd, "pids.max", buf, sizeof(buf)) == 0) {
			if (!limit_matches(buf, l->pids_max))
				tramp_fail(t, STEP_LIMITS, 0, "%s/pids.max is %s, the plan says %llu", dir,
					   buf, (unsigned long long)l->pids_max);
			pids_done = true;
		}
		if (l->has_memory_max &&
		    (read_small(dfd, v1 ? "memory.limit_in_bytes" : "memory.max", buf, sizeof(buf)) ==
		     0)) {
			if (!limit_matches(buf, l->memory_max))
				tramp_fail(t, STEP_LIMITS, 0, "%s: memory limit is %s, the plan says %llu",
					   dir, buf, (unsigned long long)l->memory_max);
			mem_done = true;
		}
	}
	if (l->has_pids_max && !pids_done && !(l->has_nproc && !t->owner_is_root))
		tramp_fail(t, STEP_LIMITS, 0, "pids_max: no pids cgroup and no RLIMIT_NPROC fallback");
	if (l->has_memory_max && !mem_done)
		tramp_fail(t, STEP_LIMITS, 0, "memory_max: no memory cgroup");
}

void
credentials_switch(struct tramp *t)
{
	const Box__Owner *o = t->plan->owner;
	gid_t groups[BOX_PLAN_GROUPS_MAX];
	size_t n = o->n_groups < BOX_PLAN_GROUPS_MAX ? o->n_groups : BOX_PLAN_GROUPS_MAX;
	const char *failed = NULL;

	t->owner_is_root = o->uid == 0;
	/* Service mode (root): become the owner, initgroups as boxd resolved it. */
	for (size_t i = 0; i < n; i++)
		groups[i] = o->groups[i];
	struct privdrop pd = {.uid = o->uid, .gid = o->gid, .groups = groups, .n_groups = n};
	int r = privdrop_switch_ids(&pd, &failed);
	if (r < 0 && failed && strcmp(failed, "verify ids") == 0) {
		uid_t ru, eu, su;
		gid_t rg, eg, sg;
		if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
			tramp_fail(t, STEP_CREDENTIALS, errno, "getresuid");
		tramp_fail(t, STEP_CREDENTIALS, 0,
			   "running as uid %u gid %u, the box owner is uid %u gid %u", (unsigned)eu,
			   (unsigned)eg, o->uid, o->gid);
	}
	if (r < 0)
		tramp_fail(t, STEP_CREDENTIALS, -r, "%s (uid %u gid %u)", failed ? failed : "switching ids",
			   o->uid, o->gid);
	/* A uid change made us non-dumpable; our own id maps need dumpable. */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
		tramp_fail(t, STEP_CREDENTIALS, errno, "PR_SET_DUMPABLE");
}

void
namespaces_enter(struct tramp *t)
{
	const Box__Plan *p = t->plan;
	int flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP |
		    CLONE_NEWPID;

	if (p->contain_egress)
		flags |= CLONE_NEWNET;
	if (unshare(flags) < 0)
		tramp_fail(t, STEP_CREDENTIALS, errno,
			   "unshare(user, mount, %sipc, uts, cgroup, pid namespaces)",
			   p->contain_egress ? "network, " : "");
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
		tramp_fail(t, STEP_CREDENTIALS, errno, "PR_SET_DUMPABLE");
	int r = idmap_write_self(p->owner->uid, p->owner->gid);
	if (r < 0)
		tramp_fail(t, STEP_CREDENTIALS, -r, "writing the user namespace id maps");
	const char *host = p->hostname ? p->hostname : "box";
	if (sethostname(host, strlen(host)) < 0)
		tramp_fail(t, STEP_CREDENTIALS, errno, "sethostname");
}
