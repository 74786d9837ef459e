/* SPDX-License-Identifier: Apache-2.0 */
/*
 * owner.h — a question about a path answered by the kernel as the box owner.
 */
#ifndef BOXCTL_OWNER_H
#define BOXCTL_OWNER_H

#include <sys/types.h>

/*
 * access(PATH, MODE) as the user UID (GID, NAME's groups): 0 or the errno.
 * The caller itself asks directly; root asks in a child switched to the
 * owner's ids (common/privdrop.c).
 */
int owner_access(const char *path, int mode, uid_t uid, gid_t gid, const char *name);

#endif
