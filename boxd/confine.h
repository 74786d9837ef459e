/* SPDX-License-Identifier: Apache-2.0 */
/*
 * confine.h — box-policyd, box-gateway and box-mcpd each in its own mount,
 * PID and IPC namespaces with a minimal root (confine.c; docs/boxd.8.md).
 * Trusts: its caller, in the child daemon_spawn() cloned.
 */
#ifndef BOXD_CONFINE_H
#define BOXD_CONFINE_H

#include <stdbool.h>
#include <sched.h>
#include <sys/types.h>

struct confine_req {
	const char *exe;   /* the daemon's executable: bound at its host path */
	bool net_files;    /* box-gateway: /etc/resolv.conf, /etc/hosts, the system trust roots */
	bool userns;       /* cloned with CLONE_NEWUSER (boxd not root): map uid, gid to themselves */
	uid_t uid;
	gid_t gid;
	bool refuse;       /* BOX_TEST_DAEMON_NS_ABSENT: fail with EPERM, as a kernel without them */
};

/* The clone flags of a confined daemon's spawn: a user namespace too when boxd is not root. */
#define CONFINE_CLONE_FLAGS(userns) \
	(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | ((userns) ? CLONE_NEWUSER : 0))

/*
 * In the cloned child, before the id switch and execve: the user namespace's
 * maps, the minimal root built and pivoted to, the bounding set emptied in a
 * user namespace. Negative errno (the spawn fails: the daemon never runs
 * unconfined).
 */
int confine_enter(const struct confine_req *c);

#endif
