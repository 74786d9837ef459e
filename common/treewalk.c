/* SPDX-License-Identifier: Apache-2.0 */
/*
 * treewalk.c — a bounded, fd-relative walk of a directory tree (treewalk.h).
 *
 * Each directory is opened O_NOFOLLOW|O_DIRECTORY relative to its parent's
 * fd, so a symlink swapped in during the walk is never followed; entries are
 * typed with fstatat(AT_SYMLINK_NOFOLLOW). Depth is capped (BOX_WALK_DEPTH_MAX)
 * so the fds held stay bounded; deeper directories count as cut.
 * Trusts: nothing in the tree.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "path.h"
#include "treewalk.h"

static uint64_t
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void
box_walk_budget_init(struct box_walk_budget *b, size_t entries, unsigned ms)
{
	memset(b, 0, sizeof(*b));
	b->entries_left = entries;
	b->deadline_ns = now_ns() + (uint64_t)ms * 1000000u;
}

/* Take one entry from the budget; false (and cut) once it is spent. */
static bool
budget_take(struct box_walk_budget *b)
{
	if (b->cut)
		return false;
	if (b->entries_left == 0) {
		b->cut = true;
		return false;
	}
	/* The clock every 64 entries: cheap, and 2 s is coarse. */
	if ((b->entries_seen & 63) == 0 && now_ns() >= b->deadline_ns) {
		b->cut = b->cut_by_time = true;
		return false;
	}
	b->entries_left--;
	b->entries_seen++;
	return true;
}

struct walk {
	struct box_walk_budget *b;
	bool (*skip)(void *, const char *, const struct stat *);
	int (*visit)(void *, const char *, const struct stat *);
	void *user;
	char path[BOX_PATH_MAX];
};

/* Walk the directory open at `dfd` whose path is w->path (length len). Takes dfd. */
static int
walk_dir(struct walk *w, int dfd, size_t len, unsigned depth)
{
	DIR *d = fdopendir(dfd);
	int r = 0;

	if (!d) {
		close(dfd);
		return errno == ENOMEM ? -ENOMEM : 0;
	}
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(d);
		if (!de)
			break;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (!budget_take(w->b))
			break;
		size_t nl = strlen(de->d_name);
		bool at_root = len == 1; /* "/" */
		if (len + !at_root + nl >= sizeof(w->path))
			continue; /* a name the kernel could not resolve from "/" either */
		if (!at_root)
			w->path[len] = '/';
		memcpy(w->path + len + !at_root, de->d_name, nl + 1);
		size_t clen = len + !at_root + nl;
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			goto next;
		if (w->skip && w->skip(w->user, w->path, &st))
			goto next;
		if (S_ISDIR(st.st_mode)) {
			if (depth + 1 >= BOX_WALK_DEPTH_MAX) {
				w->b->cut = true;
				goto next;
			}
			int cfd = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
			if (cfd >= 0)
				r = walk_dir(w, cfd, clen, depth + 1);
		} else if (w->visit)
			r = w->visit(w->user, w->path, &st);
next:
		w->path[len] = '\0';
		if (r < 0 || w->b->cut)
			break;
	}
	closedir(d);
	return r;
}

int
box_walk_tree(const char *root, struct box_walk_budget *b,
	      bool (*skip)(void *user, const char *path, const struct stat *st),
	      int (*visit)(void *user, const char *path, const struct stat *st), void *user)
{
	struct walk w = { .b = b, .skip = skip, .visit = visit, .user = user };
	size_t len = strlen(root);
	struct stat st;

	if (len == 0 || len >= sizeof(w.path))
		return -ENAMETOOLONG;
	memcpy(w.path, root, len + 1);
	if (!budget_take(b))
		return 0;
	if (lstat(root, &st) < 0)
		return 0;
	if (skip && skip(user, root, &st))
		return 0;
	if (!S_ISDIR(st.st_mode))
		return visit ? visit(user, root, &st) : 0;
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	return walk_dir(&w, fd, len, 0);
}
