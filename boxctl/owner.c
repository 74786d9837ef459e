/* SPDX-License-Identifier: Apache-2.0 */
/*
 * owner.c — access() as the box owner (owner.h), for `boxctl check`'s view of
 * what box-recheck will do as the owner. Root naming another user ([agent]
 * user) asks in a forked child that switched to the owner's uid, gid and
 * groups, which only answers with an exit status.
 * Trusts: the passwd database for the owner's groups; nothing else.
 */
#include <errno.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include "owner.h"
#include "privdrop.h"

int
owner_access(const char *path, int mode, uid_t uid, gid_t gid, const char *name)
{
	if (uid == getuid())
		return access(path, mode) == 0 ? 0 : errno;
	pid_t pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0) {
		gid_t groups[PRIVDROP_GROUPS_MAX];
		int n = PRIVDROP_GROUPS_MAX;
		if (getgrouplist(name, gid, groups, &n) < 0)
			n = 0;
		struct privdrop pd = { .uid = uid, .gid = gid, .groups = groups,
				       .n_groups = (size_t)n };
		if (privdrop_switch_ids(&pd, NULL) < 0)
			_exit(EPERM);
		_exit(access(path, mode) == 0 ? 0 : errno & 0xff);
	}
	int ws;
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR)
			return errno;
	return WIFEXITED(ws) && WEXITSTATUS(ws) != 0xff ? WEXITSTATUS(ws) : EPERM;
}
