/* SPDX-License-Identifier: Apache-2.0 */
/*
 * privdrop.h — the audited privilege drop, in two steps every process runs in
 * the same order.
 *
 * Order (OpenSSH/OpenBSD): privdrop_switch_ids() — setgroups → setresgid →
 * setresuid → verify every real/effective/saved id and the group list, and
 * that uid 0 (gid 0) cannot be regained — then privdrop_lock_down() — every
 * capability set and the bounding set emptied, ambient cleared, verified →
 * PR_SET_NO_NEW_PRIVS → optionally PR_SET_DUMPABLE 0. Seccomp is the caller's
 * last step (each daemon has its own allow-list). no_new_privs is set in one
 * place per process: privdrop_lock_down() or, where a process needs it earlier
 * than its capability drop (the trampoline's PID 1, for Landlock),
 * privdrop_no_new_privs() and then privdrop_caps_clear().
 * Negative errno; a failure must be fatal. Where the error alone does not say
 * which call failed, *failed (when given) names it.
 * Trusts: the uid/gid/groups given by its caller (boxd's plan, or the process's
 * own ids).
 */
#ifndef BOX_PRIVDROP_H
#define BOX_PRIVDROP_H

#include <stdbool.h>
#include <sys/types.h>

struct privdrop {
	uid_t uid;
	gid_t gid;
	/* Supplementary groups: none unless given. Set only when started privileged. */
	const gid_t *groups;
	size_t n_groups;
	/* Keep PR_SET_DUMPABLE as is (the trampoline needs it for its id maps). */
	int keep_dumpable;
};

/* The most supplementary groups privdrop_switch_ids() verifies (NGROUPS_MAX is larger). */
#define PRIVDROP_GROUPS_MAX 1024

/*
 * Become pd's uid/gid/groups. Started with effective uid 0: setgroups(pd's list),
 * setresgid, setresuid. Either way, verify: real = effective = saved = the
 * target for uid and gid, the group list equals pd's (when it was set), and
 * setuid(0)/seteuid(0) (and setgid(0)/setegid(0)) fail when the target uid
 * (and gid) is not 0. -EPERM with *failed = "verify ids" when the ids are not the target.
 */
int privdrop_switch_ids(const struct privdrop *pd, const char **failed);
/* Empty every capability set and the bounding set, clear ambient; read back. */
int privdrop_caps_clear(void);
/* PR_SET_NO_NEW_PRIVS, read back. */
int privdrop_no_new_privs(void);
/* privdrop_caps_clear(), privdrop_no_new_privs(), then PR_SET_DUMPABLE 0 if not_dumpable. */
int privdrop_lock_down(bool not_dumpable, const char **failed);
/*
 * Both steps for a daemon: the bounding set first (while CAP_SETPCAP is still
 * held), privdrop_switch_ids(), privdrop_lock_down(!pd->keep_dumpable).
 */
int privdrop_apply(const struct privdrop *pd, const char **failed);

#endif
