/* SPDX-License-Identifier: Apache-2.0 */
/*
 * snapshot.c — `boxctl diff|apply|discard NAME` (docs/snapshot.md): what a
 * box with [box] snapshot = workspace wrote, kept in STATE/snapshot/upper
 * (an overlayfs upper dir, userxattr: whiteouts are 0/0 character devices,
 * an opaque directory has user.overlay.opaque), shown, carried onto the host
 * or dropped.
 *
 * apply runs as the box owner (root applying another owner's box switches to
 * the state dir's owner in a child first), opens every host parent with
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) below the workspace, writes
 * each file as a new file in that parent and renames it over (a planted
 * symlink is replaced, never followed), copies symlinks as links, drops
 * setuid and setgid, and refuses an entry whose host file changed (ctime)
 * since the snapshot began (STATE/snapshot/since) unless --force. apply and
 * discard never change a running box's upper dir (it is mounted): apply then
 * carries only files no process holds open for writing and records each in
 * STATE/snapshot/applied (its new ctime, so a later apply does not take it
 * for a host change); discard refuses.
 * Trusts: nothing in the upper dir or the host tree (both the owner's).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "boxlog.h"
#include "cleanup.h"
#include "commands.h"
#include "fdutil.h"
#include "parse.h"
#include "privdrop.h"

#define DEPTH_MAX 256

struct snap {
	const char *name;
	char *state;	 /* the state dir */
	char *root;	 /* the workspace the snapshot covers (host path) */
	long long since; /* ns: host files changed after this are conflicts */
	int upper;	 /* O_RDONLY|O_DIRECTORY of STATE/snapshot/upper */
	int host;	 /* O_PATH of root, opened without following symlinks */
	char **paths;	 /* apply: the selected paths, relative to root (none: all) */
	size_t n_paths;
	bool force, apply, diff_text;
	bool running;  /* apply on a running box: the upper dir is left as it is */
	char *applied; /* STATE/snapshot/applied: "CTIME_NS PATH\n" lines, or NULL */
	int snapd;     /* O_PATH of STATE/snapshot */
	unsigned n_applied, n_refused, n_listed;
};

/* PATH beneath DFD, no symbolic link anywhere on it (nor a magic link): the fd, or -errno. */
static int
openat2_nofollow(int dfd, const char *path, int flags)
{
	return fd_openat2(dfd, path, flags | O_NOFOLLOW, 0,
			  RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

static bool
is_whiteout(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == 0;
}

static bool
is_opaque(int dirfd_)
{
	char v[4];
	ssize_t n = fgetxattr(dirfd_, "user.overlay.opaque", v, sizeof(v));
	return n == 1 && v[0] == 'y';
}

/* Is REL selected (at or under a given path), or an ancestor of one (*anc)? */
static bool
selected(const struct snap *s, const char *rel, bool *anc)
{
	*anc = false;
	if (!s->n_paths)
		return true;
	size_t rl = strlen(rel);
	for (size_t i = 0; i < s->n_paths; i++) {
		const char *p = s->paths[i];
		size_t pl = strlen(p);
		if (!pl || (strncmp(rel, p, pl) == 0 && (rel[pl] == '\0' || rel[pl] == '/')))
			return true;
		if (strncmp(p, rel, rl) == 0 && p[rl] == '/')
			*anc = true;
	}
	return false;
}

/* Remove NAME in DFD and everything under it, never following a link. */
static int
remove_tree(int dfd, const char *name, unsigned depth)
{
	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	if (depth > DEPTH_MAX)
		return -ELOOP;
	DIR *d = NULL;
	int r = fd_opendir_at(dfd, name, &d);
	if (r < 0)
		return r;
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			int k = remove_tree(dirfd(d), de->d_name, depth + 1);
			if (k < 0)
				r = k;
		}
	closedir(d);
	if (r < 0)
		return r;
	return unlinkat(dfd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

/* The host parent of REL, opened beneath the workspace without a symlink. */
static int
host_parent(const struct snap *s, const char *rel, const char **base)
{
	const char *slash = strrchr(rel, '/');
	*base = slash ? slash + 1 : rel;
	if (!slash) {
		int fd = fcntl(s->host, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : fd;
	}
	_cleanup_free_ char *dir = strndup(rel, (size_t)(slash - rel));
	if (!dir)
		return -ENOMEM;
	return openat2_nofollow(s->host, dir, O_PATH | O_DIRECTORY);
}

static long long
ctime_ns(const struct stat *st)
{
	return (long long)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;
}

/*
 * `diff -u` of the host file and the upper one, labelled a/REL and b/REL:
 * both opened here without following a link (the host one through its
 * parent's fd, PFD; -1: none, /dev/null), and given to diff as /dev/fd/N.
 */
static void
show_diff(const struct snap *s, int pfd, const char *base, int udir, const char *name,
	  const char *rel)
{
	char la[4200], lb[4200], fa[32], fb[32];
	_cleanup_close_ int a = pfd < 0 ? open("/dev/null", O_RDONLY | O_CLOEXEC)
					: openat(pfd, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int b = openat(udir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (a < 0 || b < 0)
		return;
	snprintf(la, sizeof(la), "a/%s", rel);
	snprintf(lb, sizeof(lb), "b/%s", rel);
	snprintf(fa, sizeof(fa), "/dev/fd/%d", a);
	snprintf(fb, sizeof(fb), "/dev/fd/%d", b);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (fd_set_cloexec(a, false) < 0 || fd_set_cloexec(b, false) < 0)
			_exit(127);
		execl("/usr/bin/diff", "diff", "-u", "--label", la, "--label", lb, fa, fb,
		      (char *)NULL);
		_exit(127);
	}
	int ws;
	if (pid > 0)
		while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
			;
}

static void
say(struct snap *s, const char *what, const char *rel, const char *why)
{
	printf("%-8s %s%s%s\n", what, rel, why ? "  " : "", why ? why : "");
	s->n_listed++;
}

/* Copy the upper file UFD's content into a new host file NAME in PFD (mode without s-bits). */
static int
put_file(int pfd, const char *name, int ufd, mode_t mode)
{
	char tmp[300];
	snprintf(tmp, sizeof(tmp), ".box-apply.%d.%s", (int)getpid(), name);
	if (strlen(tmp) > 255)
		snprintf(tmp, sizeof(tmp), ".box-apply.%d", (int)getpid());
	_cleanup_close_ int real = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (real < 0)
		return -errno;
	_cleanup_close_ int out =
	    openat(real, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return -errno;
	char buf[65536];
	ssize_t n;
	while ((n = read(ufd, buf, sizeof(buf))) > 0)
		if (fd_write_full(out, buf, (size_t)n) < 0) {
			int e = -errno;
			unlinkat(real, tmp, 0);
			return e;
		}
	if (n < 0 || fchmod(out, mode & 0777) < 0 || renameat(real, tmp, real, name) < 0) {
		int e = -errno;
		unlinkat(real, tmp, 0);
		return e;
	}
	return 0;
}

static int
put_link(int pfd, const char *name, const char *target)
{
	char tmp[300];
	snprintf(tmp, sizeof(tmp), ".box-apply.%d.link", (int)getpid());
	_cleanup_close_ int real = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (real < 0)
		return -errno;
	if (symlinkat(target, real, tmp) < 0)
		return -errno;
	if (renameat(real, tmp, real, name) < 0) {
		int e = -errno;
		unlinkat(real, tmp, 0);
		return e;
	}
	return 0;
}

static void walk(struct snap *s, int ufd, const char *prefix, unsigned depth);

/* Did an apply on the running box write REL, leaving it with this ctime? */
static bool
applied_at(const struct snap *s, const char *rel, long long ct)
{
	char want[4300];
	snprintf(want, sizeof(want), "%lld %s\n", ct, rel);
	for (const char *p = s->applied; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
		if (len == strlen(want) && memcmp(p, want, len) == 0)
			return true;
		p += len;
	}
	return false;
}

/* Record REL as applied to the running box's host tree, with its ctime now. */
static void
applied_add(struct snap *s, int pfd, const char *base, const char *rel)
{
	struct stat st;
	if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	_cleanup_close_ int fd = openat(
	    s->snapd, "applied", O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	char line[4300];
	int n = snprintf(line, sizeof(line), "%lld %s\n", ctime_ns(&st), rel);
	if (n > 0 && (size_t)n < sizeof(line))
		(void)fd_write_full(fd, line, (size_t)n);
}

/*
 * Is PATH open for writing by any process we can see (the box's run as the
 * owner; a sandbox's view shows the workspace at its host path, so its fds
 * read as the host path)? Unreadable processes are not ours.
 */
static bool
open_for_writing(const char *path)
{
	DIR *proc = opendir("/proc");
	if (!proc)
		return false;
	bool busy = false;
	struct dirent *pe;
	while (!busy && (pe = readdir(proc))) {
		if (pe->d_name[0] < '1' || pe->d_name[0] > '9')
			continue;
		char dir[300];
		snprintf(dir, sizeof(dir), "/proc/%s/fd", pe->d_name);
		DIR *fds = opendir(dir);
		if (!fds)
			continue;
		struct dirent *fe;
		while (!busy && (fe = readdir(fds))) {
			if (fe->d_name[0] < '0' || fe->d_name[0] > '9')
				continue;
			char lp[600], target[4200];
			snprintf(lp, sizeof(lp), "/proc/%s/fd/%s", pe->d_name, fe->d_name);
			ssize_t n = readlink(lp, target, sizeof(target) - 1);
			if (n < 0)
				continue;
			target[n] = '\0';
			if (strcmp(target, path) != 0)
				continue;
			snprintf(lp, sizeof(lp), "/proc/%s/fdinfo/%s", pe->d_name, fe->d_name);
			FILE *f = fopen(lp, "re");
			char line[128];
			while (f && fgets(line, sizeof(line), f))
				if (strncmp(line, "flags:", 6) == 0) {
					/* octal; the access mode is its last digit's low bits */
					size_t e = strcspn(line, "\n");
					int last = e > 6 ? line[e - 1] - '0' : 0;
					if ((last & O_ACCMODE) != O_RDONLY)
						busy = true;
				}
			if (f)
				fclose(f);
		}
		closedir(fds);
	}
	closedir(proc);
	return busy;
}

/* One entry NAME of the upper dir UDIR at REL. Returns true when it was applied (and may go). */
static bool
entry(struct snap *s, int udir, const char *name, const char *rel, unsigned depth)
{
	struct stat ust, hst;
	if (fstatat(udir, name, &ust, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	bool anc;
	bool sel = selected(s, rel, &anc);
	if (!sel && !(anc && S_ISDIR(ust.st_mode)))
		return false;

	const char *base;
	_cleanup_close_ int pfd = host_parent(s, rel, &base);
	bool host_exists = false, conflict = false;
	const char *why = NULL;
	if (pfd >= 0 && fstatat(pfd, base, &hst, AT_SYMLINK_NOFOLLOW) == 0) {
		host_exists = true;
		if (ctime_ns(&hst) > s->since && !S_ISDIR(hst.st_mode) &&
		    !applied_at(s, rel, ctime_ns(&hst)))
			conflict = true;
	} else if (pfd < 0 && pfd != -ENOENT) {
		why = pfd == -ELOOP || pfd == -EXDEV || pfd == -ENOTDIR
			  ? "a symbolic link or another tree on the host path"
			  : strerror(-pfd);
		conflict = true;
	}

	if (S_ISDIR(ust.st_mode)) {
		_cleanup_close_ int sub =
		    openat(udir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			return false;
		bool opaque = is_opaque(sub);
		bool not_dir = host_exists && !S_ISDIR(hst.st_mode);
		if (not_dir) {
			conflict = true;
			why = S_ISLNK(hst.st_mode) ? "a symbolic link on the host (never followed)"
						   : "not a directory on the host";
		}
		if (!s->apply) {
			if (!host_exists)
				say(s, "added", rel, "(directory)");
			else if (opaque)
				say(s, "replaced", rel,
				    "(directory: what the host has beside it goes)");
		} else if (sel || anc) {
			if (not_dir || (conflict && !s->force)) {
				say(s, "refused", rel, why ? why : "changed on the host");
				s->n_refused++;
				return false;
			}
			if (pfd < 0) {
				say(s, "refused", rel, "its parent is missing on the host");
				s->n_refused++;
				return false;
			}
			_cleanup_close_ int real =
			    openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (!host_exists &&
			    (real < 0 || mkdirat(real, base, ust.st_mode & 0777) < 0)) {
				say(s, "failed", rel, strerror(errno));
				return false;
			}
			if (opaque && sel && host_exists) {
				/* The box removed the directory and made it again: drop what it
				 * lacks. */
				_cleanup_close_ int hd =
				    openat2_nofollow(s->host, rel, O_RDONLY | O_DIRECTORY);
				DIR *d = hd >= 0 ? fdopendir(hd) : NULL;
				if (d) {
					hd = -1;
					struct dirent *de;
					while ((de = readdir(d)))
						if (strcmp(de->d_name, ".") &&
						    strcmp(de->d_name, "..") &&
						    faccessat(sub, de->d_name, F_OK,
							      AT_SYMLINK_NOFOLLOW) < 0)
							(void)remove_tree(dirfd(d), de->d_name, 0);
					closedir(d);
				}
			}
		}
		walk(s, sub, rel, depth + 1);
		if (s->apply && sel && !s->running) {
			if (opaque)
				(void)fremovexattr(sub, "user.overlay.opaque");
			return true; /* removed from upper if empty */
		}
		return false;
	}

	/* A whiteout: deleted in the box. */
	if (is_whiteout(&ust)) {
		if (!host_exists)
			return s->apply; /* nothing left to delete */
		if (!s->apply) {
			say(s, "deleted", rel, conflict ? "(changed on the host since)" : NULL);
			return false;
		}
		if (conflict && !s->force) {
			say(s, "refused", rel,
			    why ? why : "changed on the host since the snapshot began");
			s->n_refused++;
			return false;
		}
		int r = remove_tree(pfd, base, 0);
		if (r < 0) {
			say(s, "failed", rel, strerror(-r));
			return false;
		}
		say(s, "deleted", rel, NULL);
		s->n_applied++;
		return true;
	}

	/* A regular file or a symbolic link (anything else is not carried). */
	if (!S_ISREG(ust.st_mode) && !S_ISLNK(ust.st_mode)) {
		say(s, "skipped", rel, "(not a file, directory or symbolic link)");
		return false;
	}
	if (!s->apply) {
		if (!host_exists) {
			say(s, "added", rel, S_ISLNK(ust.st_mode) ? "(symbolic link)" : NULL);
			if (s->diff_text && S_ISREG(ust.st_mode))
				show_diff(s, -1, NULL, udir, name, rel);
			return false;
		}
		if (S_ISREG(ust.st_mode) && S_ISREG(hst.st_mode)) {
			/* Same content and mode: a copy-up without a change. */
			_cleanup_close_ int a =
			    openat(pfd, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			_cleanup_close_ int b =
			    openat(udir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			bool same = a >= 0 && b >= 0 && hst.st_size == ust.st_size &&
				    (hst.st_mode & 07777) == (ust.st_mode & 07777);
			char x[65536], y[65536];
			while (same) {
				ssize_t n = read(a, x, sizeof(x)), m = read(b, y, sizeof(y));
				if (n != m || n < 0 || memcmp(x, y, (size_t)n))
					same = false;
				if (n <= 0)
					break;
			}
			if (same)
				return false;
		}
		say(s, "changed", rel,
		    conflict ? "(changed on the host since: apply refuses it)" : NULL);
		if (s->diff_text && S_ISREG(ust.st_mode) && S_ISREG(hst.st_mode))
			show_diff(s, pfd, base, udir, name, rel);
		return false;
	}
	if (!sel)
		return false;
	if (pfd < 0) {
		say(s, "refused", rel, why ? why : "its parent is missing on the host");
		s->n_refused++;
		return false;
	}
	if (conflict && !s->force) {
		say(s, "refused", rel,
		    "changed on the host since the snapshot began (--force applies it)");
		s->n_refused++;
		return false;
	}
	if (s->running && S_ISREG(ust.st_mode)) {
		char hp[4300];
		snprintf(hp, sizeof(hp), "%s/%s", s->root, rel);
		if (open_for_writing(hp)) {
			say(s, "refused", rel,
			    "open for writing in the running box (apply it later)");
			s->n_refused++;
			return false;
		}
	}
	int r;
	if (S_ISLNK(ust.st_mode)) {
		char target[4097];
		ssize_t n = readlinkat(udir, name, target, sizeof(target) - 1);
		if (n < 0)
			return false;
		target[n] = '\0';
		r = put_link(pfd, base, target);
	} else {
		_cleanup_close_ int ufd = openat(udir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		r = ufd < 0 ? -errno
			    : put_file(pfd, base, ufd, ust.st_mode & ~(mode_t)(S_ISUID | S_ISGID));
	}
	if (r < 0) {
		say(s, "failed", rel, strerror(-r));
		return false;
	}
	say(s, host_exists ? "changed" : "added", rel, NULL);
	s->n_applied++;
	if (s->running)
		applied_add(s, pfd, base, rel);
	return true;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
walk(struct snap *s, int ufd, const char *prefix, unsigned depth)
{
	if (depth > DEPTH_MAX)
		return;
	DIR *d = NULL;
	if (fd_opendir_at(ufd, ".", &d) < 0)
		return;
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char **nn = realloc(names, (n + 1) * sizeof(*names));
		if (!nn)
			break;
		names = nn;
		if (!(names[n] = strdup(de->d_name)))
			break;
		n++;
	}
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n; i++) {
		char rel[4200];
		snprintf(rel, sizeof(rel), "%s%s%s", prefix, *prefix ? "/" : "", names[i]);
		if (entry(s, ufd, names[i], rel, depth) && s->apply && !s->running) {
			struct stat st;
			if (fstatat(ufd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISDIR(st.st_mode))
				(void)unlinkat(ufd, names[i], AT_REMOVEDIR); /* when empty */
			else
				(void)unlinkat(ufd, names[i], 0);
		}
		free(names[i]);
	}
	free(names);
	closedir(d);
}

/* The box's snapshot: its state dir, root, since, upper dir. 0 or an exit code (printed). */
static int
snap_open(struct snap *s, const char *name)
{
	s->name = name;
	s->upper = s->host = s->snapd = -1;
	s->state = boxlog_state_dir(name);
	if (!s->state) {
		fprintf(stderr, "boxctl: error: no state dir of a box %s\n", name);
		return 1;
	}
	_cleanup_close_ int sd = open(s->state, O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int snapd =
	    sd < 0 ? -errno : openat2_nofollow(sd, "snapshot", O_PATH | O_DIRECTORY);
	if (snapd < 0) {
		fprintf(stderr, "boxctl: error: box %s has no snapshot (%s/snapshot: %s)\n", name,
			s->state, strerror(-snapd));
		return 1;
	}
	char *txt = NULL;
	unsigned long len = 0;
	if (fd_read_file(snapd, "root", 4096, &txt, &len) < 0 || len < 2 || txt[0] != '/') {
		free(txt);
		fprintf(stderr, "boxctl: error: %s/snapshot/root is missing or damaged\n",
			s->state);
		return 1;
	}
	txt[strcspn(txt, "\n")] = '\0';
	s->root = txt;
	txt = NULL;
	int64_t since = 0;
	if (fd_read_file(snapd, "since", 64, &txt, &len) == 0) {
		txt[strcspn(txt, "\n")] = '\0';
		if (parse_i64(txt, &since) == 0)
			s->since = since;
	}
	free(txt);
	(void)fd_read_file(snapd, "applied", 16 << 20, &s->applied, &len);
	s->snapd = fcntl(snapd, F_DUPFD_CLOEXEC, 3);
	s->upper = openat2_nofollow(snapd, "upper", O_RDONLY | O_DIRECTORY);
	if (s->upper < 0) {
		fprintf(stderr, "boxctl: error: %s/snapshot/upper: %s\n", s->state,
			strerror(-s->upper));
		return 1;
	}
	return 0;
}

static void
snap_close(struct snap *s)
{
	free(s->state);
	free(s->root);
	safe_close(s->upper);
	safe_close(s->host);
	safe_close(s->snapd);
	free(s->applied);
}

/* Is the box running (its run lock held)? */
static bool
snap_running(const struct snap *s)
{
	_cleanup_close_ int sd = open(s->state, O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int fd =
	    sd < 0 ? -1 : openat(sd, "lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (flock(fd, LOCK_SH | LOCK_NB) < 0)
		return errno == EWOULDBLOCK;
	flock(fd, LOCK_UN);
	return false;
}

/* Root acting on another owner's box: become the state dir's owner first. */
static int
become_owner(const struct snap *s)
{
	struct stat st;
	if (stat(s->state, &st) < 0)
		return -errno;
	if (st.st_uid == getuid())
		return 0;
	if (getuid() != 0)
		return -EPERM;
	struct passwd *pw = getpwuid(st.st_uid);
	if (!pw)
		return -ENOENT;
	gid_t groups[PRIVDROP_GROUPS_MAX];
	int n = PRIVDROP_GROUPS_MAX;
	if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) < 0)
		n = 0;
	struct privdrop pd = {
	    .uid = pw->pw_uid, .gid = pw->pw_gid, .groups = groups, .n_groups = (size_t)n};
	return privdrop_switch_ids(&pd, NULL);
}

static int
usage(const char *what)
{
	fprintf(stderr, "usage: boxctl %s\n", what);
	return 2;
}

int
cmd_diff(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-')
		return usage("diff NAME");
	struct snap s = {0};
	int r = snap_open(&s, argv[1]);
	if (r) {
		snap_close(&s);
		return r;
	}
	_cleanup_close_ int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	s.host = openat2_nofollow(rootfd, s.root + 1, O_PATH | O_DIRECTORY);
	s.diff_text = true;
	walk(&s, s.upper, "", 0);
	snap_close(&s);
	return 0;
}

int
cmd_discard(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-')
		return usage("discard NAME");
	struct snap s = {0};
	int r = snap_open(&s, argv[1]);
	if (r) {
		snap_close(&s);
		return r;
	}
	if (snap_running(&s)) {
		fprintf(stderr,
			"boxctl: error: box %s is running: its snapshot is mounted; stop it "
			"first\n",
			s.name);
		snap_close(&s);
		return 1;
	}
	int rc = 0;
	if ((r = become_owner(&s)) < 0) {
		fprintf(stderr, "boxctl: error: cannot act as the owner of %s: %s\n", s.state,
			strerror(-r));
		rc = 1;
	} else {
		DIR *d = NULL;
		if ((r = fd_opendir_at(s.upper, ".", &d)) < 0) {
			fprintf(stderr, "boxctl: error: %s/snapshot/upper: %s\n", s.state,
				strerror(-r));
			rc = 1;
		}
		struct dirent *de;
		while (d && (de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
			    (r = remove_tree(dirfd(d), de->d_name, 0)) < 0) {
				fprintf(stderr, "boxctl: error: %s/snapshot/upper/%s: %s\n",
					s.state, de->d_name, strerror(-r));
				rc = 1;
			}
		if (d)
			closedir(d);
		if (!rc)
			printf("discarded the snapshot of %s\n", s.name);
	}
	snap_close(&s);
	return rc;
}

int
cmd_apply(int argc, char **argv)
{
	struct snap s = {0};
	const char *name = NULL;
	char **paths = calloc((size_t)argc, sizeof(char *));
	size_t np = 0;
	if (!paths)
		return 1;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--force") == 0)
			s.force = true;
		else if (argv[i][0] == '-') {
			free(paths);
			return usage("apply NAME [--force] [PATH...]");
		} else if (!name)
			name = argv[i];
		else
			paths[np++] = argv[i];
	}
	if (!name) {
		free(paths);
		return usage("apply NAME [--force] [PATH...]");
	}
	int r = snap_open(&s, name);
	if (r) {
		free(paths);
		snap_close(&s);
		return r;
	}
	int rc = 0;
	/* Each PATH: relative to the workspace, or absolute inside it. */
	for (size_t i = 0; i < np; i++) {
		char *p = paths[i];
		size_t rl = strlen(s.root);
		if (p[0] == '/') {
			if (strncmp(p, s.root, rl) != 0 || (p[rl] != '/' && p[rl] != '\0')) {
				fprintf(stderr,
					"boxctl: error: %s is not inside the snapshot's %s\n", p,
					s.root);
				rc = 2;
			}
			p += rl;
		}
		while (*p == '/')
			p++;
		size_t l = strlen(p);
		while (l && p[l - 1] == '/')
			p[--l] = '\0';
		bool dotdot = false;
		for (const char *c = p; *c;) {
			size_t cl = strcspn(c, "/");
			if (cl == 2 && c[0] == '.' && c[1] == '.')
				dotdot = true;
			c += cl;
			while (*c == '/')
				c++;
		}
		if (dotdot) {
			fprintf(stderr, "boxctl: error: %s: a path with `..`\n", paths[i]);
			rc = 2;
		}
		paths[i] = p;
	}
	if (rc) {
		free(paths);
		snap_close(&s);
		return rc;
	}
	s.paths = paths;
	s.n_paths = np;
	s.apply = true;
	s.running = snap_running(&s);
	if ((r = become_owner(&s)) < 0) {
		fprintf(stderr, "boxctl: error: cannot act as the owner of %s: %s\n", s.state,
			strerror(-r));
		free(paths);
		snap_close(&s);
		return 1;
	}
	_cleanup_close_ int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	s.host = openat2_nofollow(rootfd, s.root + 1, O_PATH | O_DIRECTORY);
	if (s.host < 0) {
		fprintf(stderr,
			"boxctl: error: cannot open %s without following a symbolic link: %s\n",
			s.root, strerror(-s.host));
		free(paths);
		snap_close(&s);
		return 1;
	}
	walk(&s, s.upper, "", 0);
	printf("applied %u, refused %u\n", s.n_applied, s.n_refused);
	rc = s.n_refused ? 1 : 0;
	free(paths);
	snap_close(&s);
	return rc;
}
