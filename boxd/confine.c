/* SPDX-License-Identifier: Apache-2.0 */
/*
 * confine.c — a confined daemon's own namespaces and minimal root
 * (confine.h; docs/boxd.8.md, "Daemons"). Runs in the child daemon_spawn()
 * made with clone(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC, and
 * CLONE_NEWUSER when boxd is not root), so the daemon is PID 1 of its own
 * PID namespace and boxd's pid of it is its process. Between the clone and
 * execve: only system calls, nothing allocated.
 *
 * The root: a fresh tmpfs (read-only once built) holding the system's
 * programs and libraries (/usr, and /lib* as the host has them: symlinks
 * copied, directories bound), the loader's cache and /etc/localtime, the
 * daemon's own executable at its host path, /dev/null, zero, random and
 * urandom, a new /proc of its PID namespace alone, and for box-gateway the
 * resolver's configuration and the system trust roots. Every bind is
 * read-only, nosuid (and nodev but the device nodes). No home, no state
 * directory, no /run, no /tmp: what a daemon writes it got as an fd.
 * The host paths are opened before the tmpfs covers /tmp and cloned as
 * detached trees (open_tree), so nothing is looked up twice.
 * Trusts: the host's system directories (root-owned; the daemon reads them
 * through read-only binds) and the executable path boxd found for itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "confine.h"
#include "idmap.h"

enum {
	E_DIR = 1 << 0,      /* a directory (else a file) */
	E_OPTIONAL = 1 << 1, /* absent on this host: left out */
	E_LINK = 1 << 2,     /* a symlink on the host is copied as one (else followed) */
	E_DEV = 1 << 3,      /* a device node: not nodev */
};

struct entry {
	const char *path;
	unsigned flags;
};

static const struct entry base_entries[] = {
	{ "/usr", E_DIR },
	{ "/lib", E_DIR | E_OPTIONAL | E_LINK },
	{ "/lib64", E_DIR | E_OPTIONAL | E_LINK },
	{ "/lib32", E_DIR | E_OPTIONAL | E_LINK },
	{ "/libx32", E_DIR | E_OPTIONAL | E_LINK },
	{ "/etc/ld.so.cache", E_OPTIONAL },
	{ "/etc/localtime", E_OPTIONAL | E_LINK },
	{ "/dev/null", E_DEV },
	{ "/dev/zero", E_DEV },
	{ "/dev/urandom", E_DEV },
	{ "/dev/random", E_DEV },
};

/* box-gateway's: what evdns and its trust store read at start (docs/box-gateway.8.md). */
static const struct entry net_entries[] = {
	{ "/etc/resolv.conf", E_OPTIONAL },
	{ "/etc/hosts", E_OPTIONAL },
	{ "/etc/ssl/certs/ca-certificates.crt", E_OPTIONAL },
};

#define CONFINE_ENTRIES_MAX 16

/* One entry, prepared before the tmpfs: a detached read-only tree, or a symlink's text. */
struct prepared {
	const char *path;
	bool dir;
	int tree;               /* -1 for a symlink */
	char link[PATH_MAX];
};

/* Its ids map to themselves, nothing else (as box-trampoline's sandboxes, common/idmap.c). */
static int
idmap_self(uid_t uid, gid_t gid)
{
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
		return -errno;
	return idmap_write_self(uid, gid);
}

static int
prepare(const struct entry *e, const char *path, struct prepared *p, bool *skip)
{
	struct stat st;

	*skip = false;
	p->path = path;
	p->tree = -1;
	if (lstat(path, &st) < 0) {
		if (errno == ENOENT && (e->flags & E_OPTIONAL)) {
			*skip = true;
			return 0;
		}
		return -errno;
	}
	if (S_ISLNK(st.st_mode) && (e->flags & E_LINK)) {
		ssize_t n = readlink(path, p->link, sizeof(p->link) - 1);
		if (n < 0)
			return -errno;
		p->link[n] = '\0';
		return 0;
	}
	if (stat(path, &st) < 0) {
		if (errno == ENOENT && (e->flags & E_OPTIONAL)) {
			*skip = true; /* a dangling symlink */
			return 0;
		}
		return -errno;
	}
	p->dir = S_ISDIR(st.st_mode);
	if (p->dir != !!(e->flags & E_DIR) && !(e->flags & E_LINK))
		return -ENOTDIR;
	p->tree = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (p->tree < 0)
		return -errno;
	struct mount_attr attr = {
		.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
			    ((e->flags & E_DEV) ? MOUNT_ATTR_NOEXEC : MOUNT_ATTR_NODEV),
	};
	if (mount_setattr(p->tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0)
		return -errno;
	return 0;
}

/*
 * The directory of PATH under ROOT, made as needed (0755, never following a
 * symlink); *NAME: its last component. An fd, or negative errno.
 */
static int
parent_of(int root, const char *path, char *buf, size_t buflen, const char **name)
{
	if (strlen(path) >= buflen)
		return -ENAMETOOLONG;
	strcpy(buf, path);
	char *last = strrchr(buf, '/');
	*name = last + 1;
	*last = '\0';
	int fd = fcntl(root, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	char *comp = buf;
	while (comp) {
		while (*comp == '/')
			comp++;
		if (*comp == '\0')
			break;
		char *slash = strchr(comp, '/');
		if (slash)
			*slash = '\0';
		if (mkdirat(fd, comp, 0755) < 0 && errno != EEXIST) {
			int e = -errno;
			close(fd);
			return e;
		}
		int nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = -errno;
		close(fd);
		if (nfd < 0)
			return e;
		fd = nfd;
		comp = slash ? slash + 1 : NULL;
	}
	return fd;
}

static int
place(int root, const struct prepared *p)
{
	char buf[PATH_MAX];
	const char *name;
	int r = 0;

	int dir = parent_of(root, p->path, buf, sizeof(buf), &name);
	if (dir < 0)
		return dir;
	if (p->tree < 0) {
		if (symlinkat(p->link, dir, name) < 0)
			r = -errno;
	} else {
		if (p->dir) {
			if (mkdirat(dir, name, 0755) < 0 && errno != EEXIST)
				r = -errno;
		} else {
			int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
					0644);
			if (fd < 0)
				r = -errno;
			else
				close(fd);
		}
		if (r == 0 && move_mount(p->tree, "", dir, name, MOVE_MOUNT_F_EMPTY_PATH) < 0)
			r = -errno;
	}
	close(dir);
	return r;
}

/* A new filesystem of TYPE with OPTS (name, value pairs; NULL-ended), detached. */
static int
new_fs(const char *type, const char *const *opts, unsigned attr)
{
	int fs = fsopen(type, FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	int r = 0;
	for (size_t i = 0; opts && opts[i] && r == 0; i += 2)
		if (fsconfig(fs, FSCONFIG_SET_STRING, opts[i], opts[i + 1], 0) < 0)
			r = -errno;
	if (r == 0 && fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		r = -errno;
	int m = r == 0 ? fsmount(fs, FSMOUNT_CLOEXEC, attr) : -1;
	if (r == 0 && m < 0)
		r = -errno;
	close(fs);
	return r < 0 ? r : m;
}

int
confine_enter(const struct confine_req *c)
{
	struct prepared ents[CONFINE_ENTRIES_MAX];
	size_t n = 0;
	int r;

	if (c->refuse)
		return -EPERM;
	if (c->userns && (r = idmap_self(c->uid, c->gid)) < 0)
		return r;
	/* Nothing propagates back to the host. */
	struct mount_attr priv = { .propagation = MS_PRIVATE };
	if (mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &priv, sizeof(priv)) < 0)
		return -errno;

	/* What goes in, taken from the host while it is still reachable. */
	const struct entry exe = { c->exe, 0 };
	const struct entry *lists[3] = { base_entries, net_entries, &exe };
	size_t lens[3] = { sizeof(base_entries) / sizeof(*base_entries),
			   c->net_files ? sizeof(net_entries) / sizeof(*net_entries) : 0,
			   strncmp(c->exe, "/usr/", 5) == 0 ? 0 : 1 };
	r = 0;
	for (size_t l = 0; l < 3 && r == 0; l++)
		for (size_t i = 0; i < lens[l] && r == 0; i++) {
			bool skip;
			if (n == CONFINE_ENTRIES_MAX)
				r = -E2BIG;
			else if ((r = prepare(&lists[l][i], lists[l][i].path, &ents[n], &skip)) == 0 &&
				 !skip)
				n++;
		}

	/* The root: a tmpfs over /tmp (this mount namespace's alone), then pivoted to. */
	static const char *const root_opts[] = { "mode", "0755", "size", "1m", NULL, NULL };
	int root = r < 0 ? r : new_fs("tmpfs", root_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (root < 0)
		return root;
	int at = open("/tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (at < 0 ||
	    move_mount(root, "", at, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return -errno;
	close(at);
	for (size_t i = 0; i < n && r == 0; i++)
		r = place(root, &ents[i]);
	for (size_t i = 0; i < n; i++)
		if (ents[i].tree >= 0)
			close(ents[i].tree);
	if (r < 0)
		return r;

	/* /proc of its own PID namespace: only its processes (subset=pid where the kernel can). */
	static const char *const proc_subset[] = { "subset", "pid", NULL, NULL };
	unsigned pattr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	int proc = new_fs("proc", proc_subset, pattr);
	if (proc == -EINVAL)
		proc = new_fs("proc", NULL, pattr);
	if (proc < 0)
		return proc;
	if (mkdirat(root, "proc", 0555) < 0 ||
	    move_mount(proc, "", root, "proc", MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return -errno;
	close(proc);

	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
	if (mount_setattr(root, "", AT_EMPTY_PATH, &ro, sizeof(ro)) < 0)
		return -errno;
	if (fchdir(root) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
	    umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		return -errno;
	close(root);

	/* In its user namespace it holds every capability until execve: none it could keep. */
	for (int cap = 0; c->userns && cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return -errno;
	return 0;
}
