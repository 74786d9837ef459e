/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_privdrop.c — the ordered privilege drop, checked from the outside.
 *
 * As root: a child drops to nobody and must end with every capability set
 * empty, no_new_privs, not dumpable, and no way back to uid 0. As an ordinary
 * user the same drop to its own ids must also leave no capabilities.
 * The two steps apart: privdrop_switch_ids() sets the ids and the group list
 * and verifies them but leaves no_new_privs alone; it refuses ids it cannot
 * reach (names "verify ids"); privdrop_lock_down() alone empties every set and
 * sets no_new_privs; privdrop_no_new_privs() reads its result back.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "privdrop.h"
#include "tap.h"

/* Runs in the child: returns a bitmask of failed expectations. */
static int
child_checks(uid_t uid, gid_t gid)
{
	struct privdrop pd = { .uid = uid, .gid = gid };
	int bad = 0;
	if (privdrop_apply(&pd, NULL) < 0)
		return 1;
	if (getuid() != uid || geteuid() != uid || getgid() != gid)
		bad |= 2;
	if (uid != 0 && setuid(0) == 0)
		bad |= 4;
	cap_t caps = cap_get_proc(), empty = cap_init();
	if (!caps || !empty || cap_compare(caps, empty) != 0)
		bad |= 8;
	cap_free(caps);
	cap_free(empty);
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		bad |= 16;
	if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0)
		bad |= 32;
	if (uid != 0 && prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) != 0)
		bad |= 64;
	gid_t groups[4];
	if (getuid() != 0 && getgroups(4, groups) != 0 && geteuid() == 0)
		bad |= 128;
	return bad;
}

/* Run FN(uid, gid) in a child; its exit status, or -1. */
static int
run_fn(int (*fn)(uid_t, gid_t), uid_t uid, gid_t gid)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(fn(uid, gid));
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static void
test_drop(void)
{
	if (geteuid() == 0) {
		struct passwd *pw = getpwnam("nobody");
		CHECK(pw != NULL);
		if (pw) {
			int r = run_fn(child_checks, pw->pw_uid, pw->pw_gid);
			if (r != 0)
				printf("#   child result bits %d\n", r);
			CHECK_INT(r, 0);
		}
	} else {
		int r = run_fn(child_checks, getuid(), getgid());
		CHECK_INT(r, 0);
	}
}

/* Child: the id switch alone, with a group list. Bitmask of failures. */
static int
child_switch(uid_t uid, gid_t gid)
{
	gid_t want[2] = { gid, (gid_t)(gid == 12345 ? 12346 : 12345) };
	size_t n = geteuid() == 0 ? 2 : 0;
	struct privdrop pd = { .uid = uid, .gid = gid, .groups = want, .n_groups = n };
	const char *failed = NULL;
	int bad = 0;

	if (privdrop_switch_ids(&pd, &failed) < 0)
		return 1;
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0 || ru != uid ||
	    eu != uid || su != uid || rg != gid || eg != gid || sg != gid)
		bad |= 2;
	gid_t have[8];
	if (n && getgroups(8, have) != 2)
		bad |= 4;
	/* The id switch is not the lock-down: no_new_privs is the second step's. */
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 0)
		bad |= 8;
	if (uid != 0 && setuid(0) == 0)
		bad |= 16;
	const char *f2 = NULL;
	if (privdrop_lock_down(false, &f2) < 0)
		bad |= 32;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		bad |= 64;
	cap_t caps = cap_get_proc(), empty = cap_init();
	if (!caps || !empty || cap_compare(caps, empty) != 0)
		bad |= 128;
	cap_free(caps);
	cap_free(empty);
	return bad;
}

/* Child: ids this process cannot reach are refused, and the failure is named. */
static int
child_unreachable(void)
{
	/* An ordinary process: give up root first if we have it. */
	if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
			       setresuid(65534, 65534, 65534) < 0))
		return 1;
	struct privdrop pd = { .uid = 0, .gid = 0 };
	const char *failed = NULL;
	int r = privdrop_switch_ids(&pd, &failed);
	if (r != -EPERM)
		return 2;
	if (!failed || strcmp(failed, "verify ids") != 0)
		return 4;
	return 0;
}

static void
test_switch_then_lock_down(void)
{
	uid_t uid = getuid();
	gid_t gid = getgid();
	if (geteuid() == 0) {
		struct passwd *pw = getpwnam("nobody");
		CHECK(pw != NULL);
		if (!pw)
			return;
		uid = pw->pw_uid;
		gid = pw->pw_gid;
	}
	int r = run_fn(child_switch, uid, gid);
	if (r != 0)
		printf("#   child result bits %d\n", r);
	CHECK_INT(r, 0);
}

static int
unreachable_adapter(uid_t uid, gid_t gid)
{
	(void)uid;
	(void)gid;
	return child_unreachable();
}

static void
test_unreachable_ids_refused(void)
{
	int r = run_fn(unreachable_adapter, 0, 0);
	if (r != 0)
		printf("#   child result bits %d\n", r);
	CHECK_INT(r, 0);
}

static void
test_no_new_privs_read_back(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(privdrop_no_new_privs() == 0 && prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ?
			      0 : 1);
	int st;
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int
main(void)
{
	RUN(test_drop);
	RUN(test_switch_then_lock_down);
	RUN(test_unreachable_ids_refused);
	RUN(test_no_new_privs_read_back);
	return tap_done();
}
