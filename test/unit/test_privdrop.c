/*
 * test_privdrop.c — the ordered privilege drop, checked from the outside.
 *
 * As root: a child drops to nobody and must end with every capability set
 * empty, no_new_privs, not dumpable, and no way back to uid 0. As an ordinary
 * user the same drop to its own ids must also leave no capabilities.
 */
#include <errno.h>
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
	if (privdrop_apply(&pd) < 0)
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

static int
run_child(uid_t uid, gid_t gid)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(child_checks(uid, gid));
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
			int r = run_child(pw->pw_uid, pw->pw_gid);
			if (r != 0)
				printf("#   child result bits %d\n", r);
			CHECK_INT(r, 0);
		}
	} else {
		int r = run_child(getuid(), getgid());
		CHECK_INT(r, 0);
	}
}

int
main(void)
{
	RUN(test_drop);
	return tap_done();
}
