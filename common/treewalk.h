/* SPDX-License-Identifier: Apache-2.0 */
/*
 * treewalk.h — a bounded walk of a directory tree, for the load checks that
 * look inside grants and deny entries (docs/box.ini.5.md: hard links under a deny,
 * Unix sockets reachable in a grant).
 *
 * The walk never follows a symbolic link (every open is O_NOFOLLOW and
 * relative to its parent's fd), visits each non-directory entry once per
 * name, and stops — without an error — when its budget of entries or time
 * is spent: the caller learns that from budget->cut. Negative errno.
 * Trusts: nothing in the tree; it may change while it is walked.
 */
#ifndef BOX_TREEWALK_H
#define BOX_TREEWALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* docs/box.ini.5.md: 100,000 entries or 2 s per start, whichever first. */
#define BOX_WALK_ENTRIES_MAX 100000
#define BOX_WALK_TIME_MS 2000
#define BOX_WALK_DEPTH_MAX 128

struct box_walk_budget {
	size_t entries_left;
	uint64_t deadline_ns;    /* CLOCK_MONOTONIC */
	size_t entries_seen;
	bool cut;                /* a limit stopped a walk: what lay beyond was not seen */
	bool cut_by_time;
};

/* A fresh budget of `entries` and `ms` from now. */
void box_walk_budget_init(struct box_walk_budget *b, size_t entries, unsigned ms);

/*
 * Walk `root` (a file or a directory). `skip(user, path, st)` (st from lstat,
 * every entry, directories too) true: neither visit nor descend into `path`
 * (masked or denied trees). `visit(user, path, st)`
 * is called for every entry that is not a directory (st from lstat); a
 * negative return stops the walk and is returned. Unreadable directories are
 * passed over (the walker has only its caller's rights). Returns 0 or a
 * negative errno (-ENOMEM, -ENAMETOOLONG only for the root).
 */
int box_walk_tree(const char *root, struct box_walk_budget *b,
		  bool (*skip)(void *user, const char *path, const struct stat *st),
		  int (*visit)(void *user, const char *path, const struct stat *st), void *user);

#endif
