/*
 * privdrop.h — the one audited privilege drop every daemon runs before its loop.
 *
 * Order (OpenSSH/OpenBSD): setgroups → setresgid → setresuid → verify the old
 * ids cannot be regained → drop every capability (all sets, bounding, ambient)
 * → PR_SET_NO_NEW_PRIVS → PR_SET_DUMPABLE 0. Seccomp is the caller's last step
 * (each daemon has its own allow-list). Negative errno; a failure must be fatal.
 * Trusts: the uid/gid given by its caller (boxd's plan).
 */
#ifndef BOX_PRIVDROP_H
#define BOX_PRIVDROP_H

#include <sys/types.h>

struct privdrop {
	uid_t uid;
	gid_t gid;
	/* Supplementary groups: none unless given. */
	const gid_t *groups;
	size_t n_groups;
	/* Keep PR_SET_DUMPABLE as is (the trampoline needs it for its id maps). */
	int keep_dumpable;
};

int privdrop_apply(const struct privdrop *pd);
/* Drop every capability from every set, the bounding set and ambient. */
int caps_drop_all(void);

#endif
