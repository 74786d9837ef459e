/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mount.c — step 4, the mount view (docs/sandbox.md), built by PID 1.
 *
 * A tmpfs becomes the root first (old root at /oldroot, as bubblewrap does),
 * a second tmpfs at /newroot receives the view: the system runtime, /etc
 * files, box-managed /tmp /var/tmp /dev/shm HOME, the grants and their masks
 * in depth order (so the innermost entry decides the flags), /dev, a new
 * /proc (mounted before the old root goes), /run/box, box-shell's binary
 * (at its host path, among the depth-ordered entries), the workspace. Every
 * bind comes from an O_PATH fd opened here, inside the new mount namespace,
 * with RESOLVE_NO_SYMLINKS (a symlink planted after boxd's check fails, it
 * is never followed); targets are created and opened without following
 * symlinks; flags are set with mount_setattr(2), never MS_REMOUNT. Then
 * pivot_root and the old root is detached.
 * Trusts: the validated plan; nothing in the host tree (paths are opened
 * as the owner, without following symlinks).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "parse.h"
#include "path.h"
#include "trampoline.h"
#include "view.h"

#define BASE_OLDROOT "oldroot"
#define BASE_NEWROOT "newroot"


static int
sys_openat2(int dfd, const char *path, uint64_t flags, uint64_t resolve)
{
	struct open_how how = {.flags = flags, .resolve = resolve};
	return (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
}

/*
 * Open a host path through the old root: O_PATH, no symlink anywhere
 * (grants are canonical), never above /oldroot.
 */
static int
open_host(struct view *vw, const char *path)
{
	const char *root = vw->t->plan->snapshot_root;
	if (root && vw->t->snapshot_fd >= 0 && path_is_under(path, root)) {
		/* The snapshot (docs/snapshot.md): the same path in the box's overlay. */
		const char *srel = path + strlen(root);
		while (*srel == '/')
			srel++;
		int sfd = sys_openat2(vw->t->snapshot_fd, *srel ? srel : ".",
				      O_PATH | O_CLOEXEC | O_NOFOLLOW,
				      RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH);
		return sfd < 0 ? -errno : sfd;
	}
	const char *rel = path[1] ? path + 1 : ".";
	int fd = sys_openat2(vw->oldroot, rel, O_PATH | O_CLOEXEC | O_NOFOLLOW,
			     RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH);
	return fd < 0 ? -errno : fd;
}

/* Open a path of the view under construction, no symlinks, beneath /newroot. */
static int
open_view(struct view *vw, const char *path, int extra)
{
	const char *rel = path[1] ? path + 1 : ".";
	int fd = sys_openat2(vw->newroot, rel, (uint64_t)(O_PATH | O_CLOEXEC | O_NOFOLLOW | extra),
			     RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH);
	return fd < 0 ? -errno : fd;
}

/*
 * Create (when missing) every component of `path` under /newroot without
 * following symlinks; the last one a directory or an empty file. Returns an
 * O_PATH fd of the last component. Skeleton directories are 0755.
 */
static int
make_target(struct view *vw, const char *path, bool dir, mode_t mode)
{
	_cleanup_free_ char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	int fd = fcntl(vw->newroot, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	char *save = NULL;
	char *comp = strtok_r(copy, "/", &save);
	if (!comp) {
		return fd;
	}
	while (comp) {
		char *next = strtok_r(NULL, "/", &save);
		bool last = next == NULL;
		bool want_dir = !last || dir;
		int nfd = openat(fd, comp, O_PATH | O_CLOEXEC | O_NOFOLLOW | (want_dir ? O_DIRECTORY : 0));
		if (nfd < 0 && errno == ENOENT) {
			if (want_dir) {
				if (mkdirat(fd, comp, last ? mode : 0755) < 0 && errno != EEXIST) {
					int e = -errno;
					close(fd);
					return e;
				}
			} else {
				int cfd = openat(fd, comp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
						 mode);
				if (cfd < 0 && errno != EEXIST) {
					int e = -errno;
					close(fd);
					return e;
				}
				safe_close(cfd);
			}
			nfd = openat(fd, comp, O_PATH | O_CLOEXEC | O_NOFOLLOW | (want_dir ? O_DIRECTORY : 0));
		}
		int e = -errno;
		close(fd);
		if (nfd < 0)
			return e;
		if (!want_dir) {
			struct stat st;
			if (fstat(nfd, &st) < 0 || S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode)) {
				close(nfd);
				return -EEXIST;
			}
		}
		fd = nfd;
		comp = next;
	}
	return fd;
}

/* Clone the tree at src_fd, set attributes on the clone, attach it on target_fd. */
static int
bind_fd(int src_fd, int target_fd, uint64_t attr)
{
	_cleanup_close_ int tree = open_tree(src_fd, "",
					     OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
						     AT_RECURSIVE);
	if (tree < 0)
		return -errno;
	if (attr) {
		struct mount_attr ma = {.attr_set = attr};
		if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &ma, sizeof(ma)) < 0)
			return -errno;
	}
	if (move_mount(tree, "", target_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return -errno;
	return 0;
}

/* A fresh filesystem instance (tmpfs, devpts, proc) attached on target_fd. */
static int
mount_new_fs(const char *type, const char *const *opts, int target_fd, uint64_t attr)
{
	_cleanup_close_ int fs = fsopen(type, FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	for (size_t i = 0; opts && opts[i]; i += 2) {
		if (opts[i + 1] ? fsconfig(fs, FSCONFIG_SET_STRING, opts[i], opts[i + 1], 0) < 0
				: fsconfig(fs, FSCONFIG_SET_FLAG, opts[i], NULL, 0) < 0)
			return -errno;
	}
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return -errno;
	_cleanup_close_ int mnt = fsmount(fs, FSMOUNT_CLOEXEC, (unsigned)attr);
	if (mnt < 0)
		return -errno;
	if (move_mount(mnt, "", target_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return -errno;
	return 0;
}

static int
setattr_fd(int fd, uint64_t attr)
{
	struct mount_attr ma = {.attr_set = attr};
	return mount_setattr(fd, "", AT_EMPTY_PATH, &ma, sizeof(ma)) < 0 ? -errno : 0;
}

/* Recreate a host symlink (merged /usr, /etc/localtime) in the view. */
static int
copy_symlink(struct view *vw, const char *path)
{
	char target[BOX_PATH_MAX];
	ssize_t n = readlinkat(vw->oldroot, path + 1, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	_cleanup_free_ char *dir = NULL;
	if (path_dirname(path, &dir) < 0)
		return -ENOMEM;
	_cleanup_close_ int dfd = make_target(vw, dir, true, 0755);
	if (dfd < 0)
		return dfd;
	_cleanup_close_ int real = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (real < 0)
		return -errno;
	if (symlinkat(target, real, path_basename(path)) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static void
mount_one(struct view *vw, const struct vent *e)
{
	struct tramp *t = vw->t;
	int r;

	if (e->kind == VK_TMPFS) {
		_cleanup_close_ int target = make_target(vw, e->path, true, 0755);
		if (target < 0)
			tramp_fail(t, STEP_MOUNT, -target, "%s: cannot create the mount point", e->path);
		const char *mode = path_is_under(e->path, "/tmp") || path_is_under(e->path, "/var/tmp")
					   ? "1777"
					   : "0700";
		const char *const opts[] = {"mode", mode, "size", "50%", NULL, NULL};
		r = mount_new_fs("tmpfs", opts, target, e->attr);
		if (r < 0)
			tramp_fail(t, STEP_MOUNT, -r, "%s: tmpfs", e->path);
		return;
	}

	const char *src_path = e->src ? e->src : e->path;
	_cleanup_close_ int src = open_host(vw, src_path);
	if (src < 0) {
		/* Optional runtime pieces the host lacks are skipped. */
		if ((e->kind == VK_SYSTEM || e->kind == VK_ETC) && src == -ENOENT)
			return;
		if ((e->kind == VK_SYSTEM || e->kind == VK_ETC) && src == -ELOOP) {
			r = copy_symlink(vw, e->path);
			if (r < 0)
				tramp_fail(t, STEP_MOUNT, -r, "%s: cannot copy the symlink", e->path);
			return;
		}
		tramp_fail(t, STEP_MOUNT, -src, "%s: cannot open%s", src_path,
			   src == -ELOOP ? " (a symbolic link in the path)" : "");
	}
	struct stat st;
	if (fstat(src, &st) < 0)
		tramp_fail(t, STEP_MOUNT, errno, "%s: stat", src_path);
	bool dir = S_ISDIR(st.st_mode);
	if (!dir && (e->kind == VK_MANAGED || e->kind == VK_SELF))
		tramp_fail(t, STEP_MOUNT, ENOTDIR, "%s: not a directory", src_path);
	if (e->kind == VK_WORKLOAD && !S_ISREG(st.st_mode))
		tramp_fail(t, STEP_MOUNT, EINVAL, "workload_bin %s: not a regular file", src_path);
	if (dir && (e->kind == BOX__VIEW_KIND__VIEW_READ_FILE ||
		    e->kind == BOX__VIEW_KIND__VIEW_WRITE_FILE))
		tramp_fail(t, STEP_MOUNT, EISDIR, "%s: a file grant names a directory", e->path);
	if (e->kind == BOX__VIEW_KIND__VIEW_DENY && (st.st_mode & 07777) != 0)
		tramp_fail(t, STEP_MOUNT, EPERM, "%s: the mask %s is not mode 0000", e->path, e->src);

	_cleanup_close_ int target = make_target(vw, e->path, dir, dir ? 0755 : 0444);
	if (target < 0)
		tramp_fail(t, STEP_MOUNT, -target, "%s: cannot create the mount point", e->path);
	r = bind_fd(src, target, e->attr);
	if (r < 0)
		tramp_fail(t, STEP_MOUNT, -r, "%s: bind", e->path);
}

/* /dev: tmpfs, the minimal nodes bound from the host, a new devpts. */
static void
build_dev(struct view *vw)
{
	struct tramp *t = vw->t;
	const Box__RuntimeDirs *rt = t->plan->runtime;
	static const char *const nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
	int r;

	_cleanup_close_ int dev = make_target(vw, "/dev", true, 0755);
	if (dev < 0)
		tramp_fail(t, STEP_MOUNT, -dev, "/dev: mount point");
	const char *const tmpfs_opts[] = {"mode", "0755", "size", "64k", NULL, NULL};
	r = mount_new_fs("tmpfs", tmpfs_opts, dev, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	if (r < 0)
		tramp_fail(t, STEP_MOUNT, -r, "/dev: tmpfs");
	safe_close(dev);
	dev = open_view(vw, "/dev", O_DIRECTORY);
	if (dev < 0)
		tramp_fail(t, STEP_MOUNT, -dev, "/dev: open");

	for (size_t i = 0; i < ELEMENTSOF(nodes); i++) {
		char host[64], view_path[64];
		snprintf(host, sizeof(host), "/dev/%s", nodes[i]);
		snprintf(view_path, sizeof(view_path), "/dev/%s", nodes[i]);
		_cleanup_close_ int src = open_host(vw, host);
		if (src < 0)
			tramp_fail(t, STEP_MOUNT, -src, "%s: cannot open on the host", host);
		_cleanup_close_ int target = make_target(vw, view_path, false, 0666);
		if (target < 0)
			tramp_fail(t, STEP_MOUNT, -target, "%s: mount point", view_path);
		r = bind_fd(src, target, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
		if (r < 0)
			tramp_fail(t, STEP_MOUNT, -r, "%s: bind", view_path);
	}

	_cleanup_close_ int pts = make_target(vw, "/dev/pts", true, 0755);
	if (pts < 0)
		tramp_fail(t, STEP_MOUNT, -pts, "/dev/pts: mount point");
	const char *const pts_opts[] = {"newinstance", NULL, "ptmxmode", "0666", "mode", "0620",
					NULL,	       NULL};
	r = mount_new_fs("devpts", pts_opts, pts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	if (r < 0)
		tramp_fail(t, STEP_MOUNT, -r, "/dev/pts: devpts");

	_cleanup_close_ int real = openat(vw->newroot, "dev", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (real < 0)
		tramp_fail(t, STEP_MOUNT, errno, "/dev: open");
	static const char *const links[][2] = {
		{"ptmx", "pts/ptmx"},	      {"fd", "/proc/self/fd"},
		{"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"},
		{"stderr", "/proc/self/fd/2"},
	};
	for (size_t i = 0; i < ELEMENTSOF(links); i++)
		if (symlinkat(links[i][1], real, links[i][0]) < 0)
			tramp_fail(t, STEP_MOUNT, errno, "/dev/%s: symlink", links[i][0]);

	_cleanup_close_ int shm = make_target(vw, "/dev/shm", true, 0755);
	if (shm < 0)
		tramp_fail(t, STEP_MOUNT, -shm, "/dev/shm: mount point");
	uint64_t shm_attr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (vw->agent ? MOUNT_ATTR_NOEXEC : 0);
	if (rt->dev_shm) {
		_cleanup_close_ int src = open_host(vw, rt->dev_shm);
		if (src < 0)
			tramp_fail(t, STEP_MOUNT, -src, "%s: cannot open", rt->dev_shm);
		r = bind_fd(src, shm, shm_attr);
	} else {
		const char *const shm_opts[] = {"mode", "1777", "size", "50%", NULL, NULL};
		r = mount_new_fs("tmpfs", shm_opts, shm, shm_attr);
	}
	if (r < 0)
		tramp_fail(t, STEP_MOUNT, -r, "/dev/shm");

	r = setattr_fd(dev, MOUNT_ATTR_RDONLY);
	if (r < 0)
		tramp_fail(t, STEP_MOUNT, -r, "/dev: read-only");
}

/*
 * Masks inside /proc. The kernel's symbol table and build config help an
 * exploit aim. The fd tables and environment of PID 1 (the trampoline, which
 * in a root-owned box has the agent's uid: a capless process may list a
 * same-uid fd directory) are masked under every spelling: /proc/TID/ and
 * /proc/1/task/TID/ for each of its threads (one, unless a sanitizer runtime
 * started more); /proc/thread-self is always the caller's own. The agent
 * cannot remove a mask: it has no CAP_SYS_ADMIN in its user namespace, and
 * seccomp refuses every mount call.
 */
static const char *const proc_masked[] = {
	"kcore", "keys", "timer_list", "sched_debug", "latency_stats",
	"acpi",	 "scsi", "asound",     "kallsyms",    "config.gz",
};
static const char *const pid1_masked[] = {"fd", "fdinfo", "environ", "map_files"};

/* Cover proc/rel with the empty mode-0000 object of its type; skipped when absent. */
static void
mask_proc_path(struct view *vw, int proc, const char *rel)
{
	struct tramp *t = vw->t;
	_cleanup_close_ int fd = openat(proc, rel, O_PATH | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return; /* this kernel lacks it */
		tramp_fail(t, STEP_MOUNT, errno, "/proc/%s: open", rel);
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		tramp_fail(t, STEP_MOUNT, errno, "/proc/%s: stat", rel);
	_cleanup_close_ int mask = openat(vw->masks, S_ISDIR(st.st_mode) ? "dir" : "file",
					  O_PATH | O_CLOEXEC | O_NOFOLLOW);
	if (mask < 0)
		tramp_fail(t, STEP_MOUNT, errno, "mask object");
	int r = bind_fd(mask, fd, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
					  MOUNT_ATTR_NOEXEC);
	if (r < 0)
		tramp_fail(t, STEP_MOUNT, -r, "/proc/%s: mask", rel);
}

/* PID 1's own entries, for each of its threads (we are PID 1). */
static void
mask_pid1(struct view *vw, int proc)
{
	struct tramp *t = vw->t;
	if (getpid() != 1)
		tramp_fail(t, STEP_MOUNT, 0, "/proc is built by PID 1 only");
	int tfd = openat(proc, "1/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (tfd < 0)
		tramp_fail(t, STEP_MOUNT, errno, "/proc/1/task: open");
	DIR *d = fdopendir(tfd);
	if (!d) {
		int e = errno;
		close(tfd);
		tramp_fail(t, STEP_MOUNT, e, "/proc/1/task: open");
	}
	struct dirent *de;
	errno = 0;
	while ((de = readdir(d))) {
		uint64_t v;
		if (parse_u64(de->d_name, UINT32_MAX, &v) < 0 || v == 0)
			continue; /* . and .. */
		unsigned long tid = (unsigned long)v;
		for (size_t i = 0; i < ELEMENTSOF(pid1_masked); i++) {
			char rel[64];
			snprintf(rel, sizeof(rel), "%lu/%s", tid, pid1_masked[i]);
			mask_proc_path(vw, proc, rel);
			snprintf(rel, sizeof(rel), "1/task/%lu/%s", tid, pid1_masked[i]);
			mask_proc_path(vw, proc, rel);
		}
		errno = 0;
	}
	int e = errno;
	closedir(d);
	if (e)
		tramp_fail(t, STEP_MOUNT, e, "/proc/1/task: read");
}

/* /proc: a new instance, read-only binds and masks over the dangerous parts. */
static void
build_proc(struct view *vw)
{
	struct tramp *t = vw->t;
	static const char *const ro_paths[] = {"sys", "sysrq-trigger", "bus", "fs", "irq"};
	int r;

	_cleanup_close_ int target = make_target(vw, "/proc", true, 0555);
	if (target < 0)
		tramp_fail(t, STEP_MOUNT, -target, "/proc: mount point");
	r = mount_new_fs("proc", NULL, target,
			 MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	if (r < 0)
		tramp_fail(t, STEP_MOUNT, -r, "/proc: mount");
	_cleanup_close_ int proc = openat(vw->newroot, "proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (proc < 0)
		tramp_fail(t, STEP_MOUNT, errno, "/proc: open");

	/* Root-owned box: memfds may not be executed (kernel >= 6.3). */
	if (t->owner_is_root) {
		int fd = openat(proc, "sys/vm/memfd_noexec", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 && errno != ENOENT)
			tramp_fail(t, STEP_MOUNT, errno, "/proc/sys/vm/memfd_noexec");
		if (fd >= 0) {
			ssize_t n = write(fd, "2", 1);
			int e = errno;
			close(fd);
			if (n != 1)
				tramp_fail(t, STEP_MOUNT, e, "vm.memfd_noexec = 2");
		}
	}

	for (size_t i = 0; i < ELEMENTSOF(ro_paths); i++) {
		_cleanup_close_ int fd = openat(proc, ro_paths[i], O_PATH | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0) {
			if (errno == ENOENT)
				continue; /* this kernel lacks it */
			tramp_fail(t, STEP_MOUNT, errno, "/proc/%s: open", ro_paths[i]);
		}
		r = bind_fd(fd, fd, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
					     MOUNT_ATTR_NOEXEC);
		if (r < 0)
			tramp_fail(t, STEP_MOUNT, -r, "/proc/%s: read-only bind", ro_paths[i]);
	}
	for (size_t i = 0; i < ELEMENTSOF(proc_masked); i++)
		mask_proc_path(vw, proc, proc_masked[i]);
	mask_pid1(vw, proc);
}

static void
bind_runtime(struct view *vw, const char *src_path, const char *view_path, uint64_t attr)
{
	struct tramp *t = vw->t;
	_cleanup_close_ int src = open_host(vw, src_path);
	if (src < 0)
		tramp_fail(t, STEP_MOUNT, -src, "%s: cannot open", src_path);
	struct stat st;
	if (fstat(src, &st) < 0)
		tramp_fail(t, STEP_MOUNT, errno, "%s: stat", src_path);
	_cleanup_close_ int target = make_target(vw, view_path, S_ISDIR(st.st_mode), 0444);
	if (target < 0)
		tramp_fail(t, STEP_MOUNT, -target, "%s: mount point", view_path);
	int r = bind_fd(src, target, attr);
	if (r < 0)
		tramp_fail(t, STEP_MOUNT, -r, "%s: bind", view_path);
}

/* /run/box: aliases, sockets, the CA certificate (docs/sandbox.md). */
static void
build_run_box(struct view *vw)
{
	const Box__RuntimeDirs *rt = vw->t->plan->runtime;
	const uint64_t base = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;

	if (!rt->run_box_bin && !rt->shell_sock && !rt->mcp_sock && !rt->ca_pem)
		return;
	_cleanup_close_ int dir = make_target(vw, "/run/box", true, 0755);
	if (dir < 0)
		tramp_fail(vw->t, STEP_MOUNT, -dir, "/run/box");
	if (rt->run_box_bin)
		bind_runtime(vw, rt->run_box_bin, "/run/box/bin", base);
	if (rt->shell_sock)
		bind_runtime(vw, rt->shell_sock, "/run/box/shell.sock", base | MOUNT_ATTR_NOEXEC);
	if (rt->mcp_sock)
		bind_runtime(vw, rt->mcp_sock, "/run/box/mcp.sock", base | MOUNT_ATTR_NOEXEC);
	if (rt->ca_pem)
		bind_runtime(vw, rt->ca_pem, "/run/box/ca.pem", base | MOUNT_ATTR_NOEXEC);
}

/*
 * Agent only: the shell alias over every name of sh bash zsh dash rbash in
 * /usr/bin and /bin — the name itself (a symlink is covered without being
 * followed) and, for a symlink, its target in the same directory tree.
 */
static void
cover_shells(struct view *vw)
{
	struct tramp *t = vw->t;
	const char *alias = t->plan->runtime->shell_alias;
	static const char *const shells[] = {"sh", "bash", "zsh", "dash", "rbash"};
	static const char *const dirs[] = {"/usr/bin", "/bin"};
	const uint64_t attr = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;

	if (!alias)
		return;
	_cleanup_close_ int src = open_host(vw, alias);
	if (src < 0)
		tramp_fail(t, STEP_MOUNT, -src, "%s: the shell alias", alias);
	for (size_t d = 0; d < ELEMENTSOF(dirs); d++) {
		_cleanup_close_ int dfd = open_view(vw, dirs[d], O_DIRECTORY);
		if (dfd < 0)
			continue; /* /bin is a symlink to usr/bin on merged hosts */
		for (size_t s = 0; s < ELEMENTSOF(shells); s++) {
			struct stat st;
			if (fstatat(dfd, shells[s], &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			if (S_ISLNK(st.st_mode)) {
				char target[BOX_PATH_MAX];
				ssize_t n = readlinkat(dfd, shells[s], target, sizeof(target) - 1);
				if (n > 0) {
					target[n] = '\0';
					_cleanup_free_ char *abs = target[0] == '/'
									   ? strdup(target)
									   : path_join(dirs[d], target);
					if (!abs)
						tramp_fail(t, STEP_MOUNT, ENOMEM, "out of memory");
					_cleanup_close_ int tfd = open_view(vw, abs, 0);
					struct stat tst;
					if (tfd >= 0 && fstat(tfd, &tst) == 0 && S_ISREG(tst.st_mode)) {
						int r = bind_fd(src, tfd, attr);
						if (r < 0)
							tramp_fail(t, STEP_MOUNT, -r, "%s: alias", abs);
					}
				}
			} else if (!S_ISREG(st.st_mode)) {
				continue;
			}
			_cleanup_close_ int fd = openat(dfd, shells[s], O_PATH | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				tramp_fail(t, STEP_MOUNT, errno, "%s/%s: open", dirs[d], shells[s]);
			int r = bind_fd(src, fd, attr);
			if (r < 0)
				tramp_fail(t, STEP_MOUNT, -r, "%s/%s: alias", dirs[d], shells[s]);
		}
	}
	/* landlock.c gives this inode EXECUTE: one rule for every name it covers. */
	t->shell_alias_fd = TAKE_FD(src);
}

/* /etc/passwd and /etc/group: root, the owner and nobody. */
static void
write_identity(struct view *vw)
{
	struct tramp *t = vw->t;
	const Box__Owner *o = t->plan->owner;
	char buf[8192];
	int n;

	_cleanup_close_ int etc = make_target(vw, "/etc", true, 0755);
	if (etc < 0)
		tramp_fail(t, STEP_MOUNT, -etc, "/etc");
	_cleanup_close_ int etcdir = openat(vw->newroot, "etc", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (etcdir < 0)
		tramp_fail(t, STEP_MOUNT, errno, "/etc");

	if (o->uid == 0)
		n = snprintf(buf, sizeof(buf),
			     "root:x:0:%u:root:%s:%s\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
			     o->gid, o->home, o->shell);
	else
		n = snprintf(buf, sizeof(buf),
			     "root:x:0:0:root:/root:/bin/sh\n%s:x:%u:%u::%s:%s\n"
			     "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
			     o->name, o->uid, o->gid, o->home, o->shell);
	if (n < 0 || (size_t)n >= sizeof(buf))
		tramp_fail(t, STEP_MOUNT, E2BIG, "/etc/passwd");
	int fd = openat(etcdir, "passwd", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 || write(fd, buf, (size_t)n) != n)
		tramp_fail(t, STEP_MOUNT, errno, "/etc/passwd");
	close(fd);

	if (o->gid == 0)
		n = snprintf(buf, sizeof(buf), "root:x:0:\nnogroup:x:65534:\n");
	else
		n = snprintf(buf, sizeof(buf), "root:x:0:\n%s:x:%u:\nnogroup:x:65534:\n", o->name,
			     o->gid);
	fd = openat(etcdir, "group", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 || n < 0 || write(fd, buf, (size_t)n) != n)
		tramp_fail(t, STEP_MOUNT, errno, "/etc/group");
	close(fd);
}

/* An ungranted workspace is an empty mode-0111 directory so chdir works. */
static void
ensure_workspace(struct view *vw)
{
	struct tramp *t = vw->t;
	const char *ws = t->plan->workspace;
	_cleanup_close_ int fd = open_view(vw, ws, O_DIRECTORY);
	if (fd >= 0)
		return;
	if (fd != -ENOENT)
		tramp_fail(t, STEP_MOUNT, -fd, "workspace %s", ws);
	fd = make_target(vw, ws, true, 0111);
	if (fd < 0)
		tramp_fail(t, STEP_MOUNT, -fd, "workspace %s: cannot create", ws);
}

void
mount_view_build(struct tramp *t)
{
	struct view vw = {.t = t, .oldroot = -1, .newroot = -1, .masks = -1};
	const Box__Plan *p = t->plan;
	int r;

	/* Nothing propagates back to the host. */
	struct mount_attr priv = {.propagation = MS_PRIVATE};
	if (mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &priv, sizeof(priv)) < 0)
		tramp_fail(t, STEP_MOUNT, errno, "make / private");

	/* The base tmpfs becomes the root, the old root stays at /oldroot. */
	_cleanup_close_ int at = open(p->runtime->dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (at < 0)
		tramp_fail(t, STEP_MOUNT, errno, "%s: open", p->runtime->dir);
	const char *const base_opts[] = {"mode", "0700", "size", "1m", NULL, NULL};
	r = mount_new_fs("tmpfs", base_opts, at, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (r < 0)
		tramp_fail(t, STEP_MOUNT, -r, "base tmpfs");
	if (chdir(p->runtime->dir) < 0)
		tramp_fail(t, STEP_MOUNT, errno, "chdir to the base tmpfs");
	if (mkdir(BASE_OLDROOT, 0700) < 0 || mkdir(BASE_NEWROOT, 0755) < 0 || mkdir("masks", 0700) < 0)
		tramp_fail(t, STEP_MOUNT, errno, "base tmpfs: mkdir");
	if (mkdir("masks/dir", 0) < 0)
		tramp_fail(t, STEP_MOUNT, errno, "mask dir");
	int mfd = open("masks/file", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
	if (mfd < 0)
		tramp_fail(t, STEP_MOUNT, errno, "mask file");
	close(mfd);
	if (syscall(SYS_pivot_root, ".", BASE_OLDROOT) < 0)
		tramp_fail(t, STEP_MOUNT, errno, "pivot_root to the base tmpfs");
	if (chdir("/") < 0)
		tramp_fail(t, STEP_MOUNT, errno, "chdir /");
	vw.oldroot = open("/" BASE_OLDROOT, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	vw.masks = open("/masks", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int nr = open("/" BASE_NEWROOT, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (vw.oldroot < 0 || vw.masks < 0 || nr < 0)
		tramp_fail(t, STEP_MOUNT, errno, "base tmpfs: open");
	const char *const root_opts[] = {"mode", "0755", "size", "1m", NULL, NULL};
	r = mount_new_fs("tmpfs", root_opts, nr, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (r < 0)
		tramp_fail(t, STEP_MOUNT, -r, "root tmpfs");
	vw.newroot = open("/" BASE_NEWROOT, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (vw.newroot < 0)
		tramp_fail(t, STEP_MOUNT, errno, "root tmpfs: open");

	write_identity(&vw);
	view_collect(&vw);
	for (size_t i = 0; i < vw.n; i++)
		mount_one(&vw, &vw.v[i]);
	build_dev(&vw);
	build_proc(&vw); /* before the old root is detached */
	build_run_box(&vw);
	if (p->kind == BOX__SANDBOX_KIND__SANDBOX_AGENT)
		cover_shells(&vw); /* box-shell and tools keep the real shells */
	ensure_workspace(&vw);

	r = setattr_fd(vw.newroot, MOUNT_ATTR_RDONLY);
	if (r < 0)
		tramp_fail(t, STEP_MOUNT, -r, "root read-only");

	/* pivot_root into the view; the old root is stacked on top, then detached. */
	if (fchdir(vw.newroot) < 0)
		tramp_fail(t, STEP_MOUNT, errno, "chdir to the view");
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		tramp_fail(t, STEP_MOUNT, errno, "pivot_root");
	if (umount2(".", MNT_DETACH) < 0)
		tramp_fail(t, STEP_MOUNT, errno, "detach the old root");
	if (chdir("/") < 0)
		tramp_fail(t, STEP_MOUNT, errno, "chdir /");
	if (chdir(p->workspace) < 0)
		tramp_fail(t, STEP_MOUNT, errno, "chdir to the workspace %s", p->workspace);

	safe_close(vw.oldroot);
	safe_close(vw.newroot);
	safe_close(vw.masks);
	t->snapshot_fd = safe_close(t->snapshot_fd);
	view_entries_free(&vw);
}
