/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fsops.c — every file operation of the shell and its commands, decided
 * before it happens (fsops.h; docs/box-policy.5.md).
 *
 * Each operation: canonicalize (sh_fs_canon), decide the legs docs/box-policy.5.md
 * names in order (all must permit; the first deny stops), then act on
 * exactly the decided path: the file, or the parent directory of an entry,
 * is opened with openat2(root, rel, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS), so no symlink can be followed between the
 * decision and the act; entries are then touched with the *at() calls
 * relative to that parent and never follow their last component (a
 * canonical last component is no symlink, so "no follow" is the same file;
 * if one was swapped in meanwhile, the call hits the link itself or is
 * treated as the race below). ELOOP/EXDEV from that open (a symlink appeared
 * on the decided path) records the attempt as an error, forgets the
 * directory cache, canonicalizes and decides again: at most
 * SH_FS_MAX_TRIES times, then EACCES.
 *
 * Canonicalization resolves symlinks with lstat/readlink component by
 * component, from the command's canonical cwd. Directories found canonical
 * recently are cached (a 10,000-file walk must not lstat every component of
 * every path): a stale entry can only make the decided path contain a
 * symlink, which the openat2 above refuses (then the slow path decides
 * again). Paths with ".." after the cwd are resolved without the cache.
 *
 * Batches (sh_fs_decide_entries) decide up to SH_DECIDE_BATCH_MAX entries
 * with one sh_decide_fs_batch and remember each verdict; the next operation
 * on that exact path with that action and operation uses it (once) instead
 * of deciding again, so a walk asks once per file and still decides each
 * file before it is opened.
 *
 * Outcomes: descriptor_issued for an open, completed for the rest, an
 * error event when the call definitely failed, indeterminate for EIO/EINTR.
 * Not thread-safe (the caches are per process; box-sh runs commands in one
 * thread per process).
 * Trusts: nothing in the paths (the agent's command line) nor in the file
 * system (it may change at any moment); the root fd and cwd the interpreter
 * passes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "fsops.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

#define SH_FS_MAX_TRIES 8
#define SH_FS_MAX_SYMLINKS 40
#define RESOLVE_FLAGS (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

/* ---- small strings --------------------------------------------------------- */

struct str {
	char *s;
	size_t len, cap;
	bool oom;
};

static bool
str_room(struct str *b, size_t n)
{
	if (b->oom)
		return false;
	if (n + 1 <= b->cap - b->len)
		return true;
	size_t cap = b->cap ? b->cap : 128;
	while (n + 1 > cap - b->len) {
		if (cap > SIZE_MAX / 4) {
			b->oom = true;
			return false;
		}
		cap *= 2;
	}
	char *s = realloc(b->s, cap);
	if (!s) {
		b->oom = true;
		return false;
	}
	b->s = s;
	b->cap = cap;
	return true;
}

static void
str_add(struct str *b, const char *s, size_t n)
{
	if (!str_room(b, n))
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

/* NAME is one component of a path: not empty, no '/', neither "." nor "..". */
static bool
one_component(const char *name)
{
	return name && name[0] && !strchr(name, '/') && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0;
}

/* Canonical directory DIR (LEN bytes) and one component NAME: "DIR/NAME" ("/NAME" under
 * the root), malloc'd; NULL when out of memory. */
static char *
entry_path(const char *dir, size_t len, const char *name)
{
	struct str b = { 0 };
	str_add(&b, dir, len);
	if (len > 1)
		str_add(&b, "/", 1);
	str_add(&b, name, strlen(name));
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

static uint64_t
hash_bytes(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* "/a/b" -> "a/b"; "/" -> "." (relative to the root fd). */
static const char *
rel_of(const char *canon)
{
	return canon[1] ? canon + 1 : ".";
}

/*
 * Directories the walk below holds open (O_PATH), so that a directory's
 * entries do not each cost a walk from the root: at most WALKCACHE_N, the
 * least recently used one closed first. One is used only after the kernel
 * said, just then, that it is still the directory at exactly that canonical
 * path: readlink("/proc/self/fd/N") is the fd's path as the kernel resolves
 * it from the process's root (d_path: no symlink can be in it), which is
 * what the walk checks one component at a time (each component a directory
 * and no link, at the moment it is passed). Anything else — the directory
 * renamed or removed, a link swapped in anywhere on the path, the fd number
 * reused by a redirection (`exec 105<file`), no /proc — fails the check, and
 * the walk runs as before. Used only when the root fd is the process's root
 * (the paths compared are the same then); a fd is closed on eviction only if
 * it is still the directory it was (a script's redirection may have taken
 * the number). The fds sit at WALKCACHE_FD_MIN and above, away from the
 * fds scripts redirect, and are CLOEXEC; a forked child inherits them.
 *
 * The check without a readlink per entry (walkcache_watch): when a directory
 * is held, an inotify instance of the process watches it and every directory
 * above it up to the root — each found through "..", the fd's own parent,
 * never through a name — for IN_MOVE_SELF and IN_DELETE_SELF, and only then is
 * its path checked once as above. From then on its path can change only by a
 * rename of one of those directories, which the kernel queues as an event
 * before the rename returns, or by the removal of the held one itself (the
 * others are not empty), which an fd we hold keeps from being an event but
 * leaves with no link; so at each use an empty queue (FIONREAD 0) and the fd
 * still being that directory with a link (fstat) say what the readlink said.
 * (A mount or unmount on the path is not seen this way; nothing in a box may
 * mount, and the box's own mounts stay while it runs.) Any event, a full queue or an error stops every watch at
 * once (the instance is closed; the held directories go back to the readlink
 * check until held again). A walk up stops early at a directory an earlier
 * complete walk watched (its own walk covered everything above it, and no
 * event came since: else the instance would be gone). Events are never read,
 * only counted, so a forked child that shares the instance sees what its
 * parent sees. Where inotify cannot be had (its limits, a directory that may
 * not be watched), the readlink check stays. A watch pins its directory's
 * inode: an instance that added WALKCACHE_WATCHES_MAX of them is closed and
 * a new one made, so a walk of a large tree holds no more than that.
 */
#define WALKCACHE_N 8
#define WALKCACHE_FD_MIN 100
#define WALKCACHE_SEEN_MAX 64
/* Watches one instance may add (each pins its inode in the kernel): then it starts afresh. */
#define WALKCACHE_WATCHES_MAX 4096
#define WALKCACHE_WATCH_MASK (IN_MOVE_SELF | IN_DELETE_SELF | IN_ONLYDIR)

struct dev_ino {
	dev_t dev;
	ino_t ino;
};

static struct {
	char *path[WALKCACHE_N]; /* canonical absolute; NULL: a free slot */
	size_t len[WALKCACHE_N];
	int fd[WALKCACHE_N];
	dev_t dev[WALKCACHE_N];
	ino_t ino[WALKCACHE_N];
	uint64_t used[WALKCACHE_N]; /* LRU clock */
	uint64_t clock;
	int root_fd;   /* the root fd found to be the process's root; -1: none yet */
	bool off;      /* /proc/self/fd cannot be read: walk every time */
	bool watched[WALKCACHE_N]; /* its path is watched: no readlink at each use */
	bool watch_tried[WALKCACHE_N]; /* since it was held, or since the watches stopped */
	int watch_fd;  /* the inotify instance (at WALKCACHE_FD_MIN and above); -1: none */
	dev_t watch_dev; /* its fstat, for watch_stop's close */
	ino_t watch_ino;
	bool watch_off; /* inotify is refused here (ENOSYS, EPERM): the readlink check only */
	struct dev_ino seen[WALKCACHE_SEEN_MAX]; /* watched with everything above them */
	size_t n_seen;
	size_t n_watches; /* inotify_add_watch calls on this instance */
} walkcache = { .root_fd = -1, .watch_fd = -1 };

/* LINK = "/proc/self/fd/FD" (no snprintf: this runs once per file of a walk). */
static void
fd_link(int fd, char link[32])
{
	char digits[12];
	size_t nd = 0, at = 14;
	memcpy(link, "/proc/self/fd/", 14);
	for (unsigned v = (unsigned)fd; nd == 0 || v; v /= 10)
		digits[nd++] = (char)('0' + v % 10);
	while (nd)
		link[at++] = digits[--nd];
	link[at] = '\0';
}

/* FD's path as the kernel has it now equals PATH (LEN bytes). */
static bool
fd_path_is(int fd, const char *path, size_t len)
{
	char link[32], buf[PATH_MAX];
	fd_link(fd, link);
	ssize_t n = readlink(link, buf, sizeof(buf));
	return n >= 0 && (size_t)n == len && memcmp(buf, path, len) == 0;
}

/* Every watch stops: the instance is closed, and no held directory counts as watched. */
static void
watch_stop(void)
{
	for (size_t k = 0; k < WALKCACHE_N; k++)
		walkcache.watched[k] = walkcache.watch_tried[k] = false;
	walkcache.n_seen = 0;
	walkcache.n_watches = 0;
	if (walkcache.watch_fd >= 0) {
		struct stat st;
		/* Still the instance's anonymous inode (not a file a redirection put there)? */
		if (fstat(walkcache.watch_fd, &st) == 0 && (st.st_mode & S_IFMT) == 0 &&
		    st.st_dev == walkcache.watch_dev && st.st_ino == walkcache.watch_ino)
			close(walkcache.watch_fd);
		walkcache.watch_fd = -1;
	}
}

/* No watched directory moved or went since it was watched (else every watch stops). */
static bool
watch_quiet(void)
{
	int queued = -1;
	if (walkcache.watch_fd < 0)
		return false;
	if (ioctl(walkcache.watch_fd, FIONREAD, &queued) == 0 && queued == 0)
		return true;
	watch_stop(); /* an event, an overflow, or the fd is not the instance any more */
	return false;
}

static bool
seen_has(dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < walkcache.n_seen; i++)
		if (walkcache.seen[i].dev == dev && walkcache.seen[i].ino == ino)
			return true;
	return false;
}

/*
 * Watch directory FD, held at canonical PATH (LEN bytes), and every directory
 * above it (see the comment above the cache); true when its path is then
 * what the kernel says it is. False leaves it to the readlink check.
 */
static bool
walkcache_watch(int fd, const char *path, size_t len)
{
	if (walkcache.watch_off)
		return false;
	if (walkcache.watch_fd >= 0)
		(void)watch_quiet(); /* an event since: start again, with a new instance */
	if (walkcache.watch_fd >= 0 && walkcache.n_watches >= WALKCACHE_WATCHES_MAX)
		watch_stop(); /* a long walk: its watches go, what is held now is watched anew */
	if (walkcache.watch_fd < 0) {
		int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (in < 0) {
			if (errno == ENOSYS || errno == EPERM)
				walkcache.watch_off = true;
			return false;
		}
		int hi = in >= WALKCACHE_FD_MIN ? in : fcntl(in, F_DUPFD_CLOEXEC, WALKCACHE_FD_MIN);
		if (hi != in)
			close(in);
		struct stat st;
		if (hi >= 0 && fstat(hi, &st) < 0) {
			close(hi);
			hi = -1;
		}
		if (hi < 0)
			return false;
		walkcache.watch_fd = hi;
		walkcache.watch_dev = st.st_dev;
		walkcache.watch_ino = st.st_ino;
		walkcache.n_seen = 0;
	}
	/* Up from FD through "..": each directory watched, until a seen one or the root. */
	struct dev_ino walked[WALKCACHE_SEEN_MAX];
	size_t n_walked = 0;
	bool complete = false;
	int cur = fd;
	for (unsigned depth = 0; depth < PATH_MAX / 2; depth++) {
		struct stat st, up_st;
		char link[32];
		if (fstat(cur, &st) < 0 || !S_ISDIR(st.st_mode))
			break;
		if (seen_has(st.st_dev, st.st_ino)) {
			complete = true;
			break;
		}
		fd_link(cur, link);
		if (inotify_add_watch(walkcache.watch_fd, link, WALKCACHE_WATCH_MASK) < 0)
			break;
		walkcache.n_watches++;
		if (n_walked < WALKCACHE_SEEN_MAX)
			walked[n_walked++] = (struct dev_ino){ st.st_dev, st.st_ino };
		int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (up < 0)
			break;
		if (fstat(up, &up_st) < 0) {
			close(up);
			break;
		}
		if (cur != fd)
			close(cur);
		cur = up;
		if (up_st.st_dev == st.st_dev && up_st.st_ino == st.st_ino) {
			complete = true; /* ".." of the root is the root */
			break;
		}
	}
	if (cur != fd)
		close(cur);
	if (!complete || !fd_path_is(fd, path, len))
		return false;
	for (size_t i = 0; i < n_walked && walkcache.n_seen < WALKCACHE_SEEN_MAX; i++)
		walkcache.seen[walkcache.n_seen++] = walked[i];
	return true;
}

static bool
walkcache_usable(int root_fd)
{
	if (walkcache.off)
		return false;
	if (walkcache.root_fd == root_fd)
		return true;
	if (!fd_path_is(root_fd, "/", 1)) {
		char link[32], buf[8];
		(void)snprintf(link, sizeof(link), "/proc/self/fd/%d", root_fd);
		if (readlink(link, buf, sizeof(buf)) < 0)
			walkcache.off = true; /* no /proc/self/fd: it will not appear */
		return false;
	}
	walkcache.root_fd = root_fd;
	return true;
}

static void
walkcache_drop(size_t k)
{
	struct stat st;
	/* Still ours (a redirection may have put a file of the script's on the number)? */
	if (fstat(walkcache.fd[k], &st) == 0 && st.st_dev == walkcache.dev[k] &&
	    st.st_ino == walkcache.ino[k])
		close(walkcache.fd[k]);
	free(walkcache.path[k]);
	walkcache.path[k] = NULL;
	walkcache.watched[k] = false;
}

/* The slot holding canonical PATH (LEN bytes), unchecked; -1: none. */
static int
walkcache_find(const char *path, size_t len)
{
	for (size_t k = 0; k < WALKCACHE_N; k++)
		if (walkcache.path[k] && walkcache.len[k] == len &&
		    memcmp(walkcache.path[k], path, len) == 0)
			return (int)k;
	return -1;
}

/* Slot K is watched and nothing moved or went since its path was checked: the two cheap
 * calls of the comment above the cache. */
static bool
walkcache_quiet(size_t k)
{
	struct stat st;
	/* (fstat(2) itself: glibc's fstat is an fstatat of "", a path lookup more) */
	return walkcache.watched[k] && watch_quiet() &&
	       syscall(SYS_fstat, walkcache.fd[k], &st) == 0 && st.st_dev == walkcache.dev[k] &&
	       st.st_ino == walkcache.ino[k] && st.st_nlink > 0;
}

/* Slot K's fd is still the directory at its canonical path, as the comment above the cache
 * says; a slot that fails the check is dropped. */
static bool
walkcache_still(size_t k)
{
	if (walkcache_quiet(k) || fd_path_is(walkcache.fd[k], walkcache.path[k], walkcache.len[k]))
		return true;
	walkcache_drop(k);
	return false;
}

/*
 * The held directory at canonical PATH (LEN bytes), checked as above; -1:
 * none (a slot that fails the check is dropped).
 */
static int
walkcache_get(const char *path, size_t len)
{
	int k = walkcache_find(path, len);
	if (k < 0 || !walkcache_still((size_t)k))
		return -1;
	walkcache.used[k] = ++walkcache.clock;
	return walkcache.fd[k];
}

/* Hold FD (a directory at canonical PATH, LEN bytes): taken over, or closed. */
static void
walkcache_put(const char *path, size_t len, int fd)
{
	struct stat st;
	/* " (deleted)" is how d_path marks a removed directory: never compare with it. */
	bool deleted_like = len >= 10 && memcmp(path + len - 10, " (deleted)", 10) == 0;
	if (len >= PATH_MAX || deleted_like || fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		close(fd);
		return;
	}
	/* The slot: the same path again (the newer fd replaces it), a free one, the LRU one. */
	size_t k = WALKCACHE_N;
	for (size_t i = 0; i < WALKCACHE_N && k == WALKCACHE_N; i++)
		if (walkcache.path[i] && walkcache.len[i] == len &&
		    memcmp(walkcache.path[i], path, len) == 0)
			k = i;
	if (k < WALKCACHE_N && walkcache.dev[k] == st.st_dev && walkcache.ino[k] == st.st_ino) {
		/*
		 * The directory held already (a stat's walk to a file's parent, once per
		 * file): the held entry stays, with its watches; watched again only if an
		 * event stopped them since, and then once.
		 */
		close(fd);
		walkcache.used[k] = ++walkcache.clock;
		if (!walkcache.watched[k] && !walkcache.watch_tried[k]) {
			walkcache.watched[k] = walkcache_watch(walkcache.fd[k], path, len);
			walkcache.watch_tried[k] = true;
		}
		return;
	}
	for (size_t i = 0; i < WALKCACHE_N && k == WALKCACHE_N; i++)
		if (!walkcache.path[i])
			k = i;
	if (k == WALKCACHE_N) {
		k = 0;
		for (size_t i = 1; i < WALKCACHE_N; i++)
			if (walkcache.used[i] < walkcache.used[k])
				k = i;
	}
	char *c = malloc(len + 1);
	int hi = fd >= WALKCACHE_FD_MIN ? fd : fcntl(fd, F_DUPFD_CLOEXEC, WALKCACHE_FD_MIN);
	if (hi != fd)
		close(fd);
	if (!c || hi < 0) {
		free(c);
		if (hi >= 0)
			close(hi);
		return;
	}
	if (walkcache.path[k])
		walkcache_drop(k);
	memcpy(c, path, len);
	c[len] = '\0';
	walkcache.path[k] = c;
	walkcache.len[k] = len;
	walkcache.fd[k] = hi;
	walkcache.dev[k] = st.st_dev;
	walkcache.ino[k] = st.st_ino;
	walkcache.used[k] = ++walkcache.clock;
	walkcache.watched[k] = walkcache_watch(hi, c, len);
	walkcache.watch_tried[k] = true;
}

/*
 * openat2's guarantee where the kernel call is refused (the box's seccomp
 * filter answers ENOSYS: it cannot read openat2's flags and mode): one
 * component at a time from the root fd, each opened O_NOFOLLOW and checked
 * to be no symlink, "." and ".." refused. The same errors: ELOOP for a
 * symlink anywhere (the last component too), ENOTDIR for a non-directory on
 * the way. The last component's directory comes from the held directories
 * above when one passes the check (then only the last component is opened),
 * and the directory a walk reached is held for the next call.
 */
static int
open_walk_beneath(int root_fd, const char *canon, int flags, mode_t mode)
{
	const char *p = rel_of(canon);
	int dfd = root_fd;
	bool held = false; /* dfd is a held directory (never closed here) */
	const char *last = strrchr(canon, '/');
	size_t parent_len = last ? (size_t)(last - canon) : 0;
	bool cache = walkcache_usable(root_fd);
	if (cache && parent_len > 0) {
		int fd = walkcache_get(canon, parent_len);
		if (fd >= 0) {
			dfd = fd;
			held = true;
			p = last + 1;
		}
	}
	for (;;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		char comp[NAME_MAX + 1];
		if (n == 0 || n > NAME_MAX) {
			if (dfd != root_fd && !held)
				close(dfd);
			return n ? -ENAMETOOLONG : -EINVAL;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		int fd;
		struct stat st;
		if (strcmp(comp, "..") == 0)
			fd = -EXDEV; /* RESOLVE_BENEATH: never above the root */
		else if (slash) {
			/* O_DIRECTORY: a link or a file fails (ENOTDIR); which one, only then. */
			fd = openat(dfd, comp, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
			fd = fd < 0 ? -errno : fd;
			if (fd == -ENOTDIR && fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(st.st_mode))
				fd = -ELOOP;
		} else {
			do
				fd = openat(dfd, comp, flags | O_NOFOLLOW | O_CLOEXEC, mode & 07777);
			while (fd < 0 && errno == EINTR);
			fd = fd < 0 ? -errno : fd;
			/* O_PATH|O_NOFOLLOW opens a symlink itself: RESOLVE_NO_SYMLINKS refuses it. */
			if (fd >= 0 && (flags & O_PATH) && !(flags & O_DIRECTORY) &&
			    fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
				close(fd);
				fd = -ELOOP;
			}
			/* O_DIRECTORY|O_NOFOLLOW on a link is ENOTDIR; openat2 says ELOOP. */
			if (fd == -ENOTDIR && (flags & O_DIRECTORY) &&
			    fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(st.st_mode))
				fd = -ELOOP;
			/* A directory opened: held too, its entries come next (grep -r, find). */
			if (fd >= 0 && (flags & O_DIRECTORY) && cache) {
				int dup = fcntl(fd, F_DUPFD_CLOEXEC, WALKCACHE_FD_MIN);
				if (dup >= 0)
					walkcache_put(canon, strlen(canon), dup);
			}
		}
		if (!slash && cache && !held && dfd != root_fd)
			walkcache_put(canon, parent_len, dfd); /* the directory the walk reached */
		else if (dfd != root_fd && !held)
			close(dfd);
		held = false;
		if (fd < 0 || !slash)
			return fd;
		dfd = fd;
		p = slash + 1;
	}
}

static int
openat2_beneath(int root_fd, const char *canon, int flags, mode_t mode)
{
	static bool no_openat2; /* ENOSYS once: the box's filter; it will not change */
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.mode = (flags & (O_CREAT | O_TMPFILE)) ? (uint64_t)(mode & 07777) : 0,
		.resolve = RESOLVE_FLAGS,
	};
	long fd = -1;
	if (!no_openat2) {
		do
			fd = syscall(SYS_openat2, root_fd, rel_of(canon), &how, sizeof(how));
		while (fd < 0 && errno == EINTR);
		if (fd >= 0 || errno != ENOSYS)
			return fd < 0 ? -errno : (int)fd;
		no_openat2 = true;
	}
	return open_walk_beneath(root_fd, canon, flags, (flags & (O_CREAT | O_TMPFILE)) ? mode : 0);
}

/* ---- the cache of canonical directories ------------------------------------ */

#define DIRCACHE_N 64

static struct {
	char *path[DIRCACHE_N];
	size_t len[DIRCACHE_N];
	uint64_t hash[DIRCACHE_N];
	unsigned next;
} dircache;

static void
dircache_clear(void)
{
	for (size_t i = 0; i < DIRCACHE_N; i++) {
		free(dircache.path[i]);
		dircache.path[i] = NULL;
		dircache.len[i] = 0;
	}
	dircache.next = 0;
}

static bool
dircache_has(const char *p, size_t n, uint64_t h)
{
	for (size_t i = 0; i < DIRCACHE_N; i++)
		if (dircache.path[i] && dircache.hash[i] == h && dircache.len[i] == n &&
		    memcmp(dircache.path[i], p, n) == 0)
			return true;
	return false;
}

static void
dircache_add(const char *p, size_t n, uint64_t h)
{
	if (dircache_has(p, n, h))
		return;
	char *c = malloc(n + 1);
	if (!c)
		return;
	memcpy(c, p, n);
	c[n] = '\0';
	unsigned k = dircache.next++ % DIRCACHE_N;
	free(dircache.path[k]);
	dircache.path[k] = c;
	dircache.len[k] = n;
	dircache.hash[k] = h;
}

/* ---- canonicalization ----------------------------------------------------------- */

static int
readlink_rel(int root_fd, const char *canon, struct str *out)
{
	size_t cap = 256;
	for (;;) {
		char *buf = malloc(cap);
		if (!buf)
			return -ENOMEM;
		ssize_t n = readlinkat(root_fd, rel_of(canon), buf, cap);
		if (n < 0) {
			int r = -errno;
			free(buf);
			return r;
		}
		if ((size_t)n < cap) {
			out->len = 0;
			str_add(out, buf, (size_t)n);
			free(buf);
			return out->oom ? -ENOMEM : 0;
		}
		free(buf);
		if (cap >= PATH_MAX * 4)
			return -ENAMETOOLONG;
		cap *= 2;
	}
}

/*
 * The canonical form of P. USE_CACHE: trust the directory cache (never
 * after a race was seen). MUST_DIR (may be NULL): P ended in '/'.
 */
static int
canon_full(const struct sh_fs *fs, const char *p, bool entry, bool use_cache, char **out)
{
	struct str res = { 0 }, work = { 0 }, link = { 0 };
	unsigned links = 0;
	int r = 0;

	*out = NULL;
	if (!p || !p[0])
		return -ENOENT;
	size_t plen = strlen(p);
	bool trailing = plen > 1 && p[plen - 1] == '/';
	if (trailing)
		entry = false; /* "link/" names what the link points to */
	if (p[0] != '/') {
		if (!fs->cwd || fs->cwd[0] != '/')
			return -EINVAL;
		str_add(&res, fs->cwd, strlen(fs->cwd));
		while (res.len > 0 && res.s[res.len - 1] == '/')
			res.s[--res.len] = '\0';
	}
	str_add(&res, "", 0);
	str_add(&work, p, plen);
	if (res.oom || work.oom) {
		r = -ENOMEM;
		goto out;
	}
	bool dotdot_seen = false;
	size_t pos = 0;
	for (;;) {
		while (pos < work.len && work.s[pos] == '/')
			pos++;
		if (pos >= work.len)
			break;
		size_t start = pos;
		while (pos < work.len && work.s[pos] != '/')
			pos++;
		size_t clen = pos - start;
		const char *c = work.s + start;
		size_t after = pos;
		while (after < work.len && work.s[after] == '/')
			after++;
		bool last = after >= work.len;
		if (clen == 1 && c[0] == '.')
			continue;
		if (clen == 2 && c[0] == '.' && c[1] == '.') {
			dotdot_seen = true;
			while (res.len > 0 && res.s[res.len - 1] != '/')
				res.len--;
			if (res.len > 0)
				res.len--; /* the slash */
			res.s[res.len] = '\0';
			continue;
		}
		if (clen > NAME_MAX) {
			r = -ENAMETOOLONG;
			goto out;
		}
		size_t base = res.len;
		str_add(&res, "/", 1);
		str_add(&res, c, clen);
		if (res.oom) {
			r = -ENOMEM;
			goto out;
		}
		if (res.len >= PATH_MAX * 4) {
			r = -ENAMETOOLONG;
			goto out;
		}
		if (last && entry)
			break;
		uint64_t h = hash_bytes(res.s, res.len);
		if (!last && use_cache && !dotdot_seen && dircache_has(res.s, res.len, h))
			continue;
		struct stat st;
		if (fstatat(fs->root_fd, rel_of(res.s), &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = -errno;
			if (r == -ENOENT && last) {
				r = 0;
				break; /* creating it */
			}
			goto out;
		}
		if (S_ISLNK(st.st_mode)) {
			if (++links > SH_FS_MAX_SYMLINKS) {
				r = -ELOOP;
				goto out;
			}
			r = readlink_rel(fs->root_fd, res.s, &link);
			if (r < 0)
				goto out;
			/* work = target + "/" + rest; the link's directory is the base again. */
			struct str nw = { 0 };
			str_add(&nw, link.s, link.len);
			if (after < work.len || trailing) {
				str_add(&nw, "/", 1);
				str_add(&nw, work.s + after, work.len - after);
			}
			if (nw.oom) {
				free(nw.s);
				r = -ENOMEM;
				goto out;
			}
			free(work.s);
			work = nw;
			pos = 0;
			res.len = link.len > 0 && link.s[0] == '/' ? 0 : base;
			res.s[res.len] = '\0';
			dotdot_seen = true; /* what follows is not the caller's lexical path */
			continue;
		}
		if (!last) {
			if (!S_ISDIR(st.st_mode)) {
				r = -ENOTDIR;
				goto out;
			}
			if (!dotdot_seen)
				dircache_add(res.s, res.len, h);
		} else if (trailing && !S_ISDIR(st.st_mode)) {
			r = -ENOTDIR;
			goto out;
		}
	}
	if (res.len == 0)
		str_add(&res, "/", 1);
	if (res.oom) {
		r = -ENOMEM;
		goto out;
	}
	*out = res.s;
	res.s = NULL;
out:
	free(res.s);
	free(work.s);
	free(link.s);
	return r;
}

int
sh_fs_canon(const struct sh_fs *fs, const char *p, bool entry, char **out)
{
	return canon_full(fs, p, entry, true, out);
}

/*
 * The lexical absolute form of P when it has no ".." (NULL otherwise): the
 * key under which a batch stored its verdict for it.
 */
static char *
lexical(const struct sh_fs *fs, const char *p)
{
	struct str b = { 0 };
	if (p[0] != '/') {
		if (!fs->cwd || fs->cwd[0] != '/')
			return NULL;
		str_add(&b, fs->cwd, strlen(fs->cwd));
		while (b.len > 0 && b.s[b.len - 1] == '/')
			b.s[--b.len] = '\0';
	}
	for (const char *c = p; *c;) {
		while (*c == '/')
			c++;
		const char *e = c;
		while (*e && *e != '/')
			e++;
		size_t n = (size_t)(e - c);
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			free(b.s);
			return NULL;
		}
		if (n && !(n == 1 && c[0] == '.')) {
			str_add(&b, "/", 1);
			str_add(&b, c, n);
		}
		c = e;
	}
	if (b.len == 0)
		str_add(&b, "/", 1);
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

/* ---- verdicts a batch decided ahead ------------------------------------------ */

#define PRE_N 4096
/* A batch's verdict is used only this soon after it was made (a temporal rule may answer
 * differently later): the command that asked for it is still walking that directory. */
#define PRE_TTL_NS (2LL * 1000000000LL)

struct pre {
	uint64_t hash;
	char *path;      /* NULL: a free slot */
	const struct sh_decider *d;
	enum sh_fs_action action;
	enum sh_fs_op op;
	bool permit;
	bool no_symlink; /* the last component was no symlink when decided */
	char *message;
	uint64_t decide_id; /* the verdict's (sh_verdict), named by the outcome */
	int64_t at_ns;   /* CLOCK_MONOTONIC when decided */
	int next;        /* the next slot in its hash bucket, -1 at the end */
};

#define PRE_BUCKETS 8192 /* a power of two */

/*
 * A ring of slots (the oldest at head; a verdict used leaves a free slot
 * that the ring skips) and a hash index over it, so that a lookup (one per
 * file operation while any verdict is held) costs a few compares.
 */
static struct {
	struct pre e[PRE_N];
	size_t head, n;
	int bucket[PRE_BUCKETS]; /* slot + 1; 0: empty */
} pre;

static void
pre_unlink(size_t k)
{
	int *link = &pre.bucket[pre.e[k].hash & (PRE_BUCKETS - 1)];
	while (*link && (size_t)(*link - 1) != k)
		link = &pre.e[*link - 1].next;
	if (*link)
		*link = pre.e[k].next;
}

static void
pre_drop(size_t k)
{
	struct pre *p = &pre.e[k];
	if (p->path)
		pre_unlink(k);
	free(p->path);
	free(p->message);
	*p = (struct pre){ 0 };
}

/* The oldest slot leaves the ring. */
static void
pre_pop(void)
{
	pre_drop(pre.head);
	pre.head = (pre.head + 1) % PRE_N;
	pre.n--;
}

/* PATH and MESSAGE (malloc'd) are the table's from here on. */
static void
pre_add(const struct sh_decider *d, char *path, enum sh_fs_action a, enum sh_fs_op op,
	bool permit, char *message, bool no_symlink, uint64_t decide_id, int64_t at_ns)
{
	if (pre.n == PRE_N)
		pre_pop();
	size_t k = (pre.head + pre.n) % PRE_N;
	struct pre *p = &pre.e[k];
	p->path = path;
	p->hash = hash_bytes(path, strlen(path));
	p->d = d;
	p->action = a;
	p->op = op;
	p->permit = permit;
	p->message = message;
	p->no_symlink = no_symlink;
	p->decide_id = decide_id;
	p->at_ns = at_ns;
	int *b = &pre.bucket[p->hash & (PRE_BUCKETS - 1)];
	p->next = *b;
	*b = (int)k + 1;
	pre.n++;
}

/* The stored verdict for exactly this request, removed from the table; false if none.
 * NOW: CLOCK_MONOTONIC (mono_ns), read once by a caller that takes many. */
static bool
pre_take(const struct sh_decider *d, const char *path, enum sh_fs_action a, enum sh_fs_op op,
	 bool need_no_symlink, struct pre *ret, int64_t now)
{
	if (pre.n == 0)
		return false;
	/* Used and expired verdicts leave from the oldest end. */
	while (pre.n > 0 && (!pre.e[pre.head].path || now - pre.e[pre.head].at_ns > PRE_TTL_NS))
		pre_pop();
	uint64_t h = hash_bytes(path, strlen(path));
	for (int i = pre.bucket[h & (PRE_BUCKETS - 1)]; i; i = pre.e[i - 1].next) {
		size_t k = (size_t)(i - 1);
		struct pre *p = &pre.e[k];
		if (p->hash != h || p->d != d || p->action != a || p->op != op ||
		    strcmp(p->path, path) != 0 || (need_no_symlink && !p->no_symlink))
			continue;
		if (now - p->at_ns > PRE_TTL_NS)
			return false; /* too old: decide again */
		pre_unlink(k);
		*ret = *p;
		*p = (struct pre){ 0 }; /* a free slot; the ring skips it */
		return true;
	}
	return false;
}

/* ---- deciding and recording ------------------------------------------------- */

struct leg {
	enum sh_fs_action action;
	enum sh_fs_op op;
	const char *path;
};

static void
print_denial(struct sh_fs *fs, const char *message)
{
	if (fs->err_fd < 0)
		return;
	struct str b = { 0 };
	str_add(&b, "box-shell: ", 11);
	if (fs->cmd_name) {
		str_add(&b, fs->cmd_name, strlen(fs->cmd_name));
		str_add(&b, ": ", 2);
	}
	str_add(&b, message, strlen(message));
	str_add(&b, "\n", 1);
	if (!b.oom) {
		ssize_t n;
		if (sh_decide_before_output)
			sh_decide_before_output();
		do
			n = write(fs->err_fd, b.s, b.len);
		while (n < 0 && errno == EINTR);
	}
	free(b.s);
}

/*
 * Decide LEGS in order; *n_permitted gets how many permitted before the
 * first deny. A deny prints its message and returns -EACCES. PRE: a verdict
 * a batch stored for the single leg, used instead of asking.
 */
static int
decide_legs(struct sh_fs *fs, const struct leg *legs, size_t n, struct pre *pre_v,
	    size_t *n_permitted)
{
	*n_permitted = 0;
	for (size_t i = 0; i < n; i++) {
		struct sh_verdict v = { 0 };
		if (i == 0 && pre_v) {
			v.permit = pre_v->permit;
			v.message = pre_v->message;
			pre_v->message = NULL;
		} else {
			struct sh_fs_request rq = { legs[i].action, legs[i].op, legs[i].path };
			int r = sh_decide_fs(fs->decider, &rq, &v);
			if (r < 0)
				return r;
		}
		if (!v.permit) {
			print_denial(fs, v.message ? v.message : "policy denied this operation.");
			sh_verdict_clear(&v);
			return -EACCES;
		}
		sh_verdict_clear(&v);
		(*n_permitted)++;
	}
	return 0;
}

/* PRE_ID: the decide_id of a batch's verdict used for the single leg (0: none). */
static void
record_legs(struct sh_fs *fs, const struct leg *legs, size_t n, int r, enum sh_fs_result ok,
	    uint64_t pre_id)
{
	bool failed = r < 0 && r != -EIO && r != -EINTR;
	enum sh_fs_result res = r < 0 ? SH_FS_INDETERMINATE : ok;
	for (size_t i = 0; i < n; i++) {
		struct sh_fs_request rq = { legs[i].action, legs[i].op, legs[i].path };
		(void)sh_record_fs(fs->decider, &rq, failed, res, n == 1 ? pre_id : 0);
	}
}

static int
race_refused(struct sh_fs *fs, const char *path)
{
	struct str b = { 0 };
	str_add(&b, path, strlen(path));
	str_add(&b, ": the path kept changing while it was being opened (a symlink race?); refused",
		77);
	print_denial(fs, b.oom ? "the path kept changing while it was being opened" : b.s);
	free(b.s);
	return -EACCES;
}

/* ---- the generic operation -------------------------------------------------- */

enum op_kind {
	OP_OPEN, OP_OPENDIR, OP_STAT, OP_READLINK, OP_CHDIR, OP_MKDIR, OP_UNLINK, OP_RMDIR,
	OP_RENAME, OP_LINK, OP_SYMLINK, OP_CHMOD, OP_UTIMENS, OP_TRUNCATE,
};

struct op {
	enum op_kind kind;
	const char *path, *path2; /* path2: rename/link destination, symlink linkpath */
	bool entry, entry2;
	int flags;
	mode_t mode;
	bool follow;
	bool have_at;     /* OP_STAT of a directory entry: at_fd holds its directory */
	int at_fd;
	const char *at_name;
	unsigned char at_type; /* not DT_UNKNOWN: the entry's type is all the caller needs */
	off_t len;
	const struct timespec *times;
	struct stat *st;
	char **text_out;          /* readlink target / chdir canonical path */
	DIR **dir_out;
	/* per attempt */
	char *c1, *c2, *target_canon;
	bool dest_exists, dest_is_dir;
	bool cross_device;   /* rename/link failed with the kernel's own EXDEV */
};

/* The parent directory of canonical C (an O_PATH fd, or the root fd) and C's last name. */
static int
open_parent(struct sh_fs *fs, const char *c, int *pfd, const char **name)
{
	const char *slash = strrchr(c, '/');
	if (!slash || c[1] == '\0') {
		*pfd = fs->root_fd;
		*name = ".";
		return 0;
	}
	*name = slash + 1;
	if (slash == c) {
		*pfd = fs->root_fd;
		return 0;
	}
	size_t n = (size_t)(slash - c);
	char *parent = malloc(n + 1);
	if (!parent)
		return -ENOMEM;
	memcpy(parent, c, n);
	parent[n] = '\0';
	int fd = openat2_beneath(fs->root_fd, parent, O_PATH | O_DIRECTORY, 0);
	free(parent);
	if (fd < 0)
		return fd;
	*pfd = fd;
	return 0;
}

static void
close_parent(struct sh_fs *fs, int pfd)
{
	if (pfd >= 0 && pfd != fs->root_fd)
		close(pfd);
}

static int
do_readlinkat(int pfd, const char *name, char **out)
{
	size_t cap = 256;
	for (;;) {
		char *buf = malloc(cap);
		if (!buf)
			return -ENOMEM;
		ssize_t n = readlinkat(pfd, name, buf, cap);
		if (n < 0) {
			int r = -errno;
			free(buf);
			return r;
		}
		if ((size_t)n < cap) {
			buf[n] = '\0';
			*out = buf;
			return 0;
		}
		free(buf);
		if (cap >= PATH_MAX * 4)
			return -ENAMETOOLONG;
		cap *= 2;
	}
}

/* The act on the decided path(s). Returns an fd (open), 0, or -errno. */
static int
act(struct sh_fs *fs, struct op *o)
{
	int pfd = -1, pfd2 = -1, r = 0;
	const char *name, *name2;

	switch (o->kind) {
	case OP_OPEN:
		r = openat2_beneath(fs->root_fd, o->c1, o->flags, o->mode);
		if (r == -ELOOP && (o->flags & O_NOFOLLOW)) {
			/* A symlink as the last component, with O_NOFOLLOW: the call's own ELOOP. */
			struct stat st;
			if (open_parent(fs, o->c1, &pfd, &name) == 0 &&
			    fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
				r = -ENOTRECOVERABLE;
			close_parent(fs, pfd);
		}
		return r;
	case OP_OPENDIR: {
		int fd = openat2_beneath(fs->root_fd, o->c1, O_RDONLY | O_DIRECTORY, 0);
		if (fd < 0)
			return fd;
		DIR *d = fdopendir(fd);
		if (!d) {
			r = -errno;
			close(fd);
			return r;
		}
		*o->dir_out = d;
		return 0;
	}
	case OP_CHDIR: {
		int fd = openat2_beneath(fs->root_fd, o->c1, O_PATH | O_DIRECTORY, 0);
		if (fd < 0)
			return fd;
		close(fd);
		return 0;
	}
	case OP_TRUNCATE: {
		int fd = openat2_beneath(fs->root_fd, o->c1, O_WRONLY | O_NONBLOCK, 0);
		if (fd < 0)
			return fd;
		r = ftruncate(fd, o->len) < 0 ? -errno : 0;
		close(fd);
		return r;
	}
	default: break;
	}

	if (o->kind == OP_STAT && o->have_at && !o->follow) {
		/* The entry's directory is already open (opened beneath the root on its
		 * decided canonical path, no symlink in it) and the decided canonical path
		 * ends in this very name (one component): stat it there, no re-open. */
		const char *slash = strrchr(o->c1, '/');
		if (slash && slash != o->c1 && strcmp(slash + 1, o->at_name) == 0) {
			if (o->at_type != DT_UNKNOWN) {
				/* the type readdir read in that directory: nothing to ask again */
				memset(o->st, 0, sizeof(*o->st));
				o->st->st_mode = DTTOIF(o->at_type);
				return 0;
			}
			return fstatat(o->at_fd, o->at_name, o->st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno
											: 0;
		}
	}
	r = open_parent(fs, o->c1, &pfd, &name);
	if (r < 0)
		return r;
	switch (o->kind) {
	case OP_STAT:
		r = fstatat(pfd, name, o->st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
		if (r == 0 && o->follow && S_ISLNK(o->st->st_mode))
			r = -ELOOP; /* a link swapped in after canonicalization: the race */
		break;
	case OP_READLINK: r = do_readlinkat(pfd, name, o->text_out); break;
	case OP_MKDIR: r = mkdirat(pfd, name, o->mode) < 0 ? -errno : 0; break;
	case OP_UNLINK: r = unlinkat(pfd, name, 0) < 0 ? -errno : 0; break;
	case OP_RMDIR: r = unlinkat(pfd, name, AT_REMOVEDIR) < 0 ? -errno : 0; break;
	case OP_CHMOD:
		/* No follow: canonical (follow) names no link; chmod -h never follows. */
		r = syscall(SYS_fchmodat2, pfd, name, (unsigned)o->mode, AT_SYMLINK_NOFOLLOW) < 0
			    ? -errno
			    : 0;
		break;
	case OP_UTIMENS:
		r = utimensat(pfd, name, o->times, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
		break;
	case OP_SYMLINK: r = symlinkat(o->path, pfd, name) < 0 ? -errno : 0; break;
	case OP_RENAME:
	case OP_LINK:
		r = open_parent(fs, o->c2, &pfd2, &name2);
		if (r < 0)
			break;
		if (o->kind == OP_LINK)
			r = linkat(pfd, name, pfd2, name2, 0) < 0 ? -errno : 0;
		else
			r = renameat2(pfd, name, pfd2, name2, o->dest_exists ? 0 : RENAME_NOREPLACE) < 0
				    ? -errno
				    : 0;
		/* The kernel's EXDEV is two file systems, not a race: say so, do not retry. */
		o->cross_device = (r == -EXDEV);
		if (r == -EEXIST && o->kind == OP_RENAME && !o->dest_exists)
			r = -EXDEV; /* the destination appeared: decide again, with its delete */
		close_parent(fs, pfd2);
		break;
	default: r = -EINVAL; break;
	}
	close_parent(fs, pfd);
	return r;
}

/* Fill LEGS from the canonical paths (may look at the destination). */
static int
make_legs(struct sh_fs *fs, struct op *o, struct leg *legs, size_t *n)
{
	*n = 0;
#define LEG(a, p_, path_) legs[(*n)++] = (struct leg){ (a), (p_), (path_) }
	switch (o->kind) {
	case OP_OPEN: {
		int acc = o->flags & O_ACCMODE;
		if (o->flags & O_PATH)
			LEG(SH_FS_READ, SH_OP_READ_METADATA, o->c1);
		else if (o->flags & O_DIRECTORY)
			LEG(SH_FS_READ, SH_OP_ENUMERATE, o->c1);
		else {
			bool w = acc != O_RDONLY || (o->flags & (O_CREAT | O_TRUNC | O_APPEND));
			if (acc == O_RDONLY || acc == O_RDWR)
				LEG(SH_FS_READ, SH_OP_READ_CONTENT, o->c1);
			if (w)
				LEG(SH_FS_WRITE, SH_OP_WRITE_CONTENT, o->c1);
		}
		break;
	}
	case OP_OPENDIR: LEG(SH_FS_READ, SH_OP_ENUMERATE, o->c1); break;
	case OP_STAT: LEG(SH_FS_READ, SH_OP_READ_METADATA, o->c1); break;
	case OP_READLINK: LEG(SH_FS_READ, SH_OP_READ_LINK, o->c1); break;
	case OP_CHDIR: LEG(SH_FS_READ, SH_OP_CHANGE_DIR, o->c1); break;
	case OP_MKDIR: LEG(SH_FS_WRITE, SH_OP_CREATE_DIR, o->c1); break;
	case OP_UNLINK: LEG(SH_FS_DELETE, SH_OP_REMOVE_FILE, o->c1); break;
	case OP_RMDIR: LEG(SH_FS_DELETE, SH_OP_REMOVE_DIR, o->c1); break;
	case OP_CHMOD: LEG(SH_FS_WRITE, SH_OP_SET_PERMISSIONS, o->c1); break;
	case OP_UTIMENS:
	case OP_TRUNCATE: LEG(SH_FS_WRITE, SH_OP_WRITE_CONTENT, o->c1); break;
	case OP_LINK:
		LEG(SH_FS_READ, SH_OP_READ_CONTENT, o->c1);
		LEG(SH_FS_WRITE, SH_OP_WRITE_CONTENT, o->c2);
		break;
	case OP_SYMLINK:
		LEG(SH_FS_READ, SH_OP_READ_CONTENT, o->target_canon);
		LEG(SH_FS_WRITE, SH_OP_SYMLINK, o->c1);
		break;
	case OP_RENAME: {
		int pfd;
		const char *name;
		struct stat st;
		int r = open_parent(fs, o->c2, &pfd, &name);
		if (r < 0 && r != -ENOENT && r != -ENOTDIR)
			return r;
		o->dest_exists = r == 0 && fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
		o->dest_is_dir = o->dest_exists && S_ISDIR(st.st_mode);
		if (r == 0)
			close_parent(fs, pfd);
		LEG(SH_FS_READ, SH_OP_READ_CONTENT, o->c1);
		LEG(SH_FS_MOVE, SH_OP_RENAME, o->c1);
		LEG(SH_FS_MOVE, SH_OP_RENAME, o->c2);
		if (o->dest_exists)
			LEG(SH_FS_DELETE, o->dest_is_dir ? SH_OP_REMOVE_DIR : SH_OP_REMOVE_FILE,
			    o->c2);
		break;
	}
	default: return -EINVAL;
	}
#undef LEG
	return 0;
}

/* The canonical target a symlink's creation reads (lexical when it cannot be resolved). */
static int
symlink_target(struct sh_fs *fs, struct op *o, bool use_cache)
{
	const char *t = o->path;
	char *dir = NULL;
	struct sh_fs sub = *fs;
	if (t[0] != '/') {
		const char *slash = strrchr(o->c1, '/');
		size_t n = slash && slash != o->c1 ? (size_t)(slash - o->c1) : 1;
		dir = malloc(n + 1);
		if (!dir)
			return -ENOMEM;
		memcpy(dir, o->c1, n);
		dir[n] = '\0';
		sub.cwd = dir;
	}
	int r = canon_full(&sub, t, false, use_cache, &o->target_canon);
	if (r == -ENOENT || r == -ENOTDIR || r == -ELOOP || r == -EACCES) {
		/* A dangling link: decide on its text, made absolute and normalized. */
		struct str b = { 0 };
		if (t[0] != '/')
			str_add(&b, sub.cwd, strlen(sub.cwd));
		str_add(&b, "", 0);
		for (const char *c = t; *c;) {
			while (*c == '/')
				c++;
			const char *e = c;
			while (*e && *e != '/')
				e++;
			size_t n = (size_t)(e - c);
			if (n == 2 && c[0] == '.' && c[1] == '.') {
				while (b.len > 0 && b.s[b.len - 1] != '/')
					b.len--;
				if (b.len > 0)
					b.len--;
				b.s[b.len] = '\0';
			} else if (n && !(n == 1 && c[0] == '.')) {
				if (!(b.len == 1 && b.s[0] == '/'))
					str_add(&b, "/", 1);
				str_add(&b, c, n);
			}
			c = e;
		}
		if (b.len == 0)
			str_add(&b, "/", 1);
		r = b.oom ? -ENOMEM : 0;
		o->target_canon = b.oom ? NULL : b.s;
		if (b.oom)
			free(b.s);
	}
	free(dir);
	return r;
}

static void
op_reset(struct op *o)
{
	free(o->c1);
	free(o->c2);
	free(o->target_canon);
	o->c1 = o->c2 = o->target_canon = NULL;
}

static bool
mutates_dirs(enum op_kind k)
{
	return k == OP_RENAME || k == OP_RMDIR || k == OP_UNLINK || k == OP_SYMLINK ||
	       k == OP_MKDIR;
}

/*
 * Canonicalize, decide, act; on ELOOP/EXDEV from the act (a symlink on the
 * decided path), again — at most SH_FS_MAX_TRIES times.
 */
static int
run_op(struct sh_fs *fs, struct op *o)
{
	bool use_cache = true;
	for (int attempt = 0; attempt < SH_FS_MAX_TRIES; attempt++) {
		struct leg legs[4];
		size_t n = 0, n_ok = 0;
		struct pre pv = { 0 };
		bool have_pre = false;
		int r;

		op_reset(o);
		/* A batch may have decided this path already: its lexical form is the key. */
		if (attempt == 0 && pre.n > 0 && o->kind != OP_RENAME && o->kind != OP_LINK &&
		    o->kind != OP_SYMLINK) {
			char *lex = lexical(fs, o->path);
			if (lex) {
				struct op probe = *o;
				probe.c1 = lex;
				struct leg pl[4];
				size_t pn = 0;
				if (make_legs(fs, &probe, pl, &pn) == 0 && pn == 1)
					have_pre = pre_take(fs->decider, lex, pl[0].action, pl[0].op,
							    true, &pv, box_now_ns());
				if (have_pre)
					o->c1 = lex;
				else
					free(lex);
			}
		}
		if (!o->c1 && o->kind != OP_SYMLINK) {
			r = canon_full(fs, o->path, o->entry, use_cache, &o->c1);
			if (r < 0)
				return r;
			if (attempt == 0 && pre.n > 0 && o->kind != OP_RENAME && o->kind != OP_LINK) {
				struct leg pl[4];
				size_t pn = 0;
				if (make_legs(fs, o, pl, &pn) == 0 && pn == 1)
					have_pre = pre_take(fs->decider, o->c1, pl[0].action,
							    pl[0].op, false, &pv, box_now_ns());
			}
		}
		if (o->path2) {
			r = canon_full(fs, o->path2, o->entry2, use_cache, &o->c2);
			if (r < 0) {
				op_reset(o);
				return r;
			}
		}
		if (o->kind == OP_SYMLINK) {
			/* path is the link's text, path2 the link: c1 = the link, for act(). */
			o->c1 = o->c2;
			o->c2 = NULL;
			r = symlink_target(fs, o, use_cache);
			if (r < 0) {
				op_reset(o);
				return r;
			}
		}
		r = make_legs(fs, o, legs, &n);
		if (r == -ELOOP || r == -EXDEV) {
			use_cache = false;
			dircache_clear();
			continue;
		}
		if (r < 0) {
			free(pv.path);
			free(pv.message);
			op_reset(o);
			return r;
		}
		r = decide_legs(fs, legs, n, have_pre ? &pv : NULL, &n_ok);
		uint64_t pre_id = have_pre ? pv.decide_id : 0;
		free(pv.path);
		free(pv.message);
		if (r < 0) {
			op_reset(o);
			return r;
		}
		r = act(fs, o);
		if (r == -ENOTRECOVERABLE)
			r = -ELOOP; /* O_NOFOLLOW on a link: the call's own answer */
		else if (r == -EXDEV && o->cross_device)
			o->cross_device = false; /* a real failure: recorded and returned below */
		else if (r == -ELOOP || r == -EXDEV) {
			record_legs(fs, legs, n, r, SH_FS_COMPLETED, pre_id);
			use_cache = false;
			dircache_clear();
			continue;
		}
		if (mutates_dirs(o->kind))
			dircache_clear();
		record_legs(fs, legs, n, r >= 0 ? 0 : r,
			    o->kind == OP_OPEN || o->kind == OP_OPENDIR ? SH_FS_DESCRIPTOR_ISSUED
									 : SH_FS_COMPLETED,
			    pre_id);
		if (r >= 0 && o->kind == OP_CHDIR && o->text_out) {
			*o->text_out = o->c1;
			o->c1 = NULL;
		}
		op_reset(o);
		return r;
	}
	op_reset(o);
	return race_refused(fs, o->kind == OP_SYMLINK ? o->path2 : o->path);
}

/* ---- the operations ------------------------------------------------------------ */

/*
 * /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N name
 * the command's own streams through magic links, which the openat2 above
 * refuses: they are a duplicate of that fd (as bash makes them in its
 * redirections), no file operation and no decision — of a script's own fd
 * only (fsops.h, script_fds): the process's other fds are the shell's (its
 * box-policyd channel among them). This assumes what exec.c does: a
 * command's fds are put at 0-2 of the process while it runs.
 * -1: not such a name.
 */
static int
own_stream_fd(const char *path)
{
	const char *n = NULL;
	if (strcmp(path, "/dev/stdin") == 0)
		return 0;
	if (strcmp(path, "/dev/stdout") == 0)
		return 1;
	if (strcmp(path, "/dev/stderr") == 0)
		return 2;
	if (strncmp(path, "/dev/fd/", 8) == 0)
		n = path + 8;
	else if (strncmp(path, "/proc/self/fd/", 14) == 0)
		n = path + 14;
	if (!n || !*n || strlen(n) > 6 || strspn(n, "0123456789") != strlen(n))
		return -1;
	return atoi(n);
}

/* FD is no fd of the script's: the message (the caller says the path), then -EBADF. */
static int
not_a_script_fd(struct sh_fs *fs, int fd)
{
	char msg[160];
	(void)snprintf(msg, sizeof(msg),
		       "fd %d is not open in this script (a script reaches fds 0-2 and those its "
		       "own redirections opened)",
		       fd);
	print_denial(fs, msg);
	return -EBADF;
}

int
sh_fs_open(struct sh_fs *fs, const char *path, int flags, mode_t mode)
{
	int own = path ? own_stream_fd(path) : -1;
	if (own >= 0) {
		bool ours = fs->script_fds ? sh_fdset_has(fs->script_fds, own) : own <= 2;
		if (!ours)
			return not_a_script_fd(fs, own);
		int fd = fcntl(own, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : fd;
	}
	struct op o = { .kind = OP_OPEN, .path = path, .flags = flags, .mode = mode };
	/* O_EXCL creation and O_NOFOLLOW act on the entry itself. */
	o.entry = (flags & O_NOFOLLOW) || ((flags & O_CREAT) && (flags & O_EXCL));
	return run_op(fs, &o);
}

DIR *
sh_fs_opendir(struct sh_fs *fs, const char *path)
{
	DIR *d = NULL;
	struct op o = { .kind = OP_OPENDIR, .path = path, .dir_out = &d };
	int r = run_op(fs, &o);
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	return d;
}

int
sh_fs_stat(struct sh_fs *fs, const char *path, struct stat *st, bool follow)
{
	/* a script's own stream (a process substitution's /dev/fd/N): what that
	 * fd is, as sh_fs_open duplicates it; any other fd goes the path's way */
	int own = path && follow ? own_stream_fd(path) : -1;
	if (own >= 0 && (fs->script_fds ? sh_fdset_has(fs->script_fds, own) : own <= 2))
		return fstat(own, st) < 0 ? -errno : 0;
	struct op o = { .kind = OP_STAT, .path = path, .st = st, .follow = follow,
			.entry = !follow };
	return run_op(fs, &o);
}

int
sh_fs_stat_at(struct sh_fs *fs, int dirfd, const char *path, const char *name, struct stat *st)
{
	return sh_fs_stat_at_type(fs, dirfd, path, name, DT_UNKNOWN, st);
}

int
sh_fs_stat_at_type(struct sh_fs *fs, int dirfd, const char *path, const char *name,
		   unsigned char d_type, struct stat *st)
{
	struct op o = { .kind = OP_STAT, .path = path, .st = st, .follow = false, .entry = true };
	if (dirfd >= 0 && one_component(name)) {
		o.have_at = true;
		o.at_fd = dirfd;
		o.at_name = name;
		o.at_type = d_type;
	}
	return run_op(fs, &o);
}

int
sh_fs_readlink(struct sh_fs *fs, const char *path, char **target)
{
	struct op o = { .kind = OP_READLINK, .path = path, .entry = true, .text_out = target };
	return run_op(fs, &o);
}

int
sh_fs_chdir_check(struct sh_fs *fs, const char *path, char **canon)
{
	char *c = NULL;
	struct op o = { .kind = OP_CHDIR, .path = path, .text_out = &c };
	int r = run_op(fs, &o);
	if (r < 0)
		return r;
	if (canon)
		*canon = c;
	else
		free(c);
	return 0;
}

int
sh_fs_mkdir(struct sh_fs *fs, const char *path, mode_t mode)
{
	struct op o = { .kind = OP_MKDIR, .path = path, .entry = true, .mode = mode };
	return run_op(fs, &o);
}

int
sh_fs_unlink(struct sh_fs *fs, const char *path)
{
	struct op o = { .kind = OP_UNLINK, .path = path, .entry = true };
	return run_op(fs, &o);
}

int
sh_fs_rmdir(struct sh_fs *fs, const char *path)
{
	struct op o = { .kind = OP_RMDIR, .path = path, .entry = true };
	return run_op(fs, &o);
}

int
sh_fs_rename(struct sh_fs *fs, const char *from, const char *to)
{
	struct op o = { .kind = OP_RENAME, .path = from, .entry = true, .path2 = to,
			.entry2 = true };
	return run_op(fs, &o);
}

int
sh_fs_link(struct sh_fs *fs, const char *from, const char *to)
{
	struct op o = { .kind = OP_LINK, .path = from, .entry = true, .path2 = to,
			.entry2 = true };
	return run_op(fs, &o);
}

int
sh_fs_symlink(struct sh_fs *fs, const char *target, const char *linkpath)
{
	if (!target || !target[0])
		return -ENOENT;
	/* path is the link's text (never canonicalized itself); path2 the link. */
	struct op o = { .kind = OP_SYMLINK, .path = target, .path2 = linkpath, .entry2 = true };
	return run_op(fs, &o);
}

int
sh_fs_chmod(struct sh_fs *fs, const char *path, mode_t mode, bool follow)
{
	if (mode & (S_ISUID | S_ISGID))
		return -EPERM; /* never setuid/setgid: the caller says why */
	struct op o = { .kind = OP_CHMOD, .path = path, .mode = mode & 07777, .follow = follow,
			.entry = !follow };
	return run_op(fs, &o);
}

int
sh_fs_utimens(struct sh_fs *fs, const char *path, const struct timespec times[2], bool follow)
{
	struct op o = { .kind = OP_UTIMENS, .path = path, .times = times, .follow = follow,
			.entry = !follow };
	return run_op(fs, &o);
}

int
sh_fs_truncate(struct sh_fs *fs, const char *path, off_t len)
{
	if (len < 0)
		return -EINVAL;
	struct op o = { .kind = OP_TRUNCATE, .path = path, .len = len };
	return run_op(fs, &o);
}

/* ---- batches ---------------------------------------------------------------- */

void
sh_fs_batch_forget(void)
{
	while (pre.n > 0)
		pre_pop();
	if (pre.head)
		pre.head = 0; /* not written when already 0: a page untouched stays shared */
}

static bool
entry_op(enum sh_fs_op op)
{
	/* Operations on the entry itself (docs/box-policy.5.md); read_metadata as lstat (ls -l, find). */
	return op == SH_OP_REMOVE_FILE || op == SH_OP_REMOVE_DIR || op == SH_OP_RENAME ||
	       op == SH_OP_READ_LINK || op == SH_OP_SYMLINK || op == SH_OP_READ_METADATA;
}

int
sh_fs_decide_entries(struct sh_fs *fs, const char *dir_path, char *const *names, size_t n,
		     enum sh_fs_action action, enum sh_fs_op op, bool *permitted)
{
	return sh_fs_decide_entries_typed(fs, dir_path, names, NULL, n, action, op, permitted);
}

int
sh_fs_decide_entries_typed(struct sh_fs *fs, const char *dir_path, char *const *names,
			   const unsigned char *types, size_t n, enum sh_fs_action action,
			   enum sh_fs_op op, bool *permitted)
{
	char *cdir = NULL;
	int r = canon_full(fs, dir_path, false, true, &cdir);
	if (r < 0)
		return r;
	struct sh_fs sub = *fs;
	sub.cwd = cdir;
	bool is_entry = entry_op(op);
	struct sh_fs_request *rq = calloc(SH_DECIDE_BATCH_MAX, sizeof(*rq));
	char **paths = calloc(SH_DECIDE_BATCH_MAX, sizeof(*paths));
	bool *nolink = calloc(SH_DECIDE_BATCH_MAX, sizeof(*nolink));
	struct sh_verdict *v = calloc(SH_DECIDE_BATCH_MAX, sizeof(*v));
	if (!rq || !paths || !v || !nolink) {
		r = -ENOMEM;
		goto out;
	}
	size_t cdir_len = strlen(cdir);
	for (size_t base = 0; base < n; base += SH_DECIDE_BATCH_MAX) {
		size_t m = n - base < SH_DECIDE_BATCH_MAX ? n - base : SH_DECIDE_BATCH_MAX;
		for (size_t i = 0; i < m; i++) {
			const char *name = names[base + i];
			char *p = NULL;
			nolink[i] = false;
			if (one_component(name)) {
				if (!(p = entry_path(cdir, cdir_len, name))) {
					r = -ENOMEM;
					goto out;
				}
				struct stat st;
				unsigned char t = types ? types[base + i] : DT_UNKNOWN;
				if (is_entry || (t != DT_UNKNOWN && t != DT_LNK))
					nolink[i] = true; /* readdir said: no link (a swap: openat2 sees it) */
				else if (fstatat(fs->root_fd, rel_of(p), &st, AT_SYMLINK_NOFOLLOW) ==
						 0 &&
					 !S_ISLNK(st.st_mode))
					nolink[i] = true;
			}
			if (!nolink[i]) {
				/* A link (or an odd name): decide on what it resolves to. */
				char *c = NULL;
				if (canon_full(&sub, name, is_entry, true, &c) == 0) {
					free(p);
					p = c;
				} else if (!p) {
					p = lexical(&sub, name);
					if (!p)
						p = strdup(cdir);
					if (!p) {
						r = -ENOMEM;
						goto out;
					}
				}
			}
			paths[i] = p;
			rq[i] = (struct sh_fs_request){ action, op, p };
		}
		r = sh_decide_fs_batch(fs->decider, rq, m, v);
		if (r < 0) {
			for (size_t i = 0; i < m; i++) {
				free(paths[i]);
				paths[i] = NULL;
			}
			goto out;
		}
		int64_t at = box_now_ns();
		for (size_t i = 0; i < m; i++) {
			permitted[base + i] = v[i].permit;
			/*
			 * Keyed by the decided path: for a name that held no link it is
			 * also the lexical dir/name the command passes next (no_symlink).
			 */
			pre_add(fs->decider, paths[i], action, op, v[i].permit, v[i].message,
				nolink[i], v[i].decide_id, at);
			v[i].message = NULL;
			paths[i] = NULL; /* (the table's now) */
		}
	}
	r = 0;
out:
	free(cdir);
	free(rq);
	free(paths);
	free(nolink);
	free(v);
	return r;
}

/*
 * sh_fs_open_read_entries (fsops.h): the opens of a walk's files in one go,
 * from the held directory, checked once before and once after them all.
 *
 * Each file is what sh_fs_open(dir/name, O_RDONLY) would open from the same
 * held directory (open_walk_beneath's last step): the batch's verdict for
 * exactly dir/name decided as no link, then openat(held, name, O_NOFOLLOW).
 * What sh_fs_open checks before each open — the held directory is still at
 * its canonical path (no move or removal queued on the watches, the fd still
 * that directory and linked) — is checked here before the first and again
 * after the last, and nothing is recorded nor returned before the second
 * check: a move during the opens makes each an attempt that failed (-EXDEV,
 * recorded as run_op records a race) and each is opened alone, decided
 * again. Anything else this cannot take as sh_fs_open would — no verdict
 * kept, a symlink swapped in (ELOOP: recorded, then alone), a name that is
 * not one component, no held and watched directory — is left to sh_fs_open.
 */
unsigned sh_fs_test_open_entries_delay_ms;

int
sh_fs_open_read_entries(struct sh_fs *fs, const char *dir_path, char *const *names, size_t n,
			int *fds)
{
	for (size_t i = 0; i < n; i++)
		fds[i] = SH_FS_OPEN_ALONE;
	if (n > SH_FS_OPEN_ENTRIES_MAX)
		return -E2BIG;
	if (n == 0 || pre.n == 0 || !walkcache_usable(fs->root_fd))
		return 0;
	char *cdir = NULL;
	if (canon_full(fs, dir_path, false, true, &cdir) < 0)
		return 0; /* each alone: they fail there as the system call would */
	size_t cdir_len = strlen(cdir);
	/*
	 * Watched only: the check after the opens must see any move since the first one, a
	 * move and a move back included (a readlink then would not: each file opens alone).
	 */
	int k = walkcache_find(cdir, cdir_len);
	if (k < 0 || !walkcache.watched[k] || !walkcache_quiet((size_t)k)) {
		free(cdir);
		return 0;
	}
	walkcache.used[k] = ++walkcache.clock;
	int dfd = walkcache.fd[k];
	char *paths[SH_FS_OPEN_ENTRIES_MAX] = { 0 };
	int got[SH_FS_OPEN_ENTRIES_MAX];
	bool denied[SH_FS_OPEN_ENTRIES_MAX] = { 0 };
	uint64_t ids[SH_FS_OPEN_ENTRIES_MAX] = { 0 };
	/* The verdicts first (each kept one is taken: never asked for again)... */
	int64_t now = box_now_ns();
	for (size_t i = 0; i < n; i++) {
		const char *name = names[i];
		got[i] = SH_FS_OPEN_ALONE;
		char *p = one_component(name) ? entry_path(cdir, cdir_len, name) : NULL;
		struct pre pv;
		if (!p || own_stream_fd(p) >= 0 ||
		    !pre_take(fs->decider, p, SH_FS_READ, SH_OP_READ_CONTENT, true, &pv, now)) {
			free(p);
			continue;
		}
		paths[i] = p;
		ids[i] = pv.decide_id;
		if (!pv.permit) {
			/* (the caller passes permitted entries; a verdict taken is never asked again) */
			print_denial(fs, pv.message ? pv.message : "policy denied this operation.");
			denied[i] = true;
		}
		free(pv.path);
		free(pv.message);
	}
	if (sh_fs_test_open_entries_delay_ms) {
		struct timespec ts = { sh_fs_test_open_entries_delay_ms / 1000,
				       (long)(sh_fs_test_open_entries_delay_ms % 1000) * 1000000L };
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	/* ...then the opens, from the held directory, as open_walk_beneath's last step. */
	for (size_t i = 0; i < n; i++) {
		if (!paths[i] || denied[i])
			continue;
		int fd;
		do
			fd = openat(dfd, names[i], O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		while (fd < 0 && errno == EINTR);
		got[i] = fd < 0 ? -errno : fd;
	}
	bool still = walkcache_quiet((size_t)k);
	if (!still)
		walkcache_drop((size_t)k); /* (the next use checks its path from the root again) */
	for (size_t i = 0; i < n; i++) {
		if (!paths[i])
			continue;
		const struct leg leg = { SH_FS_READ, SH_OP_READ_CONTENT, paths[i] };
		if (denied[i]) {
			fds[i] = -EACCES; /* a denial: no outcome, as run_op */
		} else if (!still) {
			if (got[i] >= 0)
				close(got[i]);
			record_legs(fs, &leg, 1, -EXDEV, SH_FS_COMPLETED, ids[i]);
		} else if (got[i] == -ELOOP) {
			record_legs(fs, &leg, 1, -ELOOP, SH_FS_COMPLETED, ids[i]);
		} else {
			record_legs(fs, &leg, 1, got[i] < 0 ? got[i] : 0, SH_FS_DESCRIPTOR_ISSUED,
				    ids[i]);
			fds[i] = got[i];
		}
		free(paths[i]);
	}
	if (!still)
		dircache_clear();
	free(cdir);
	return 0;
}
