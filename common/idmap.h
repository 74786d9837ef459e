/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idmap.h — write this process's own uid_map, setgroups (deny) and gid_map,
 * each id mapped to itself: the one mapping a process may write for the
 * user namespace it just made without privilege over its parent.
 * Library code: negative errno, never logs.
 * Trusts: its caller.
 */
#ifndef BOX_IDMAP_H
#define BOX_IDMAP_H

#include <sys/types.h>

/* The process must be dumpable (after a uid change it is not: the kernel then refuses). */
int idmap_write_self(uid_t uid, gid_t gid);

#endif
