/* SPDX-License-Identifier: Apache-2.0 */
/*
 * snapshot.c — [box] snapshot = workspace (docs/snapshot.md): the box's one
 * overlay instance over the agent's workspace, made at start as a detached
 * mount (fsopen/fsconfig/fsmount) whose fd boxd keeps and hands, with the
 * plan, to every sandbox's trampoline, which attaches a clone of it where the
 * workspace is (box-trampoline/mount.c). A second mount of the same upper
 * dir would be undefined; clones of one mount are one instance.
 *
 * STATE/snapshot/{upper,work} and the files `root` and `since` are made by a
 * child that switched to the owner's ids, through the state dir's fd
 * box-recheck opened as the owner: root makes nothing there itself. The
 * layers are then opened with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)
 * (the workspace from /, canonical) and given to overlayfs as fds
 * (FSCONFIG_SET_FD), so no path the owner can change is followed by root.
 * A root boxd mounts in its own namespace; an unprivileged one in a child
 * that made a user and mount namespace of its own (owner mapped to itself),
 * which sends the mount back. `userxattr` either way: boxctl diff, run by the
 * owner, reads the overlay's own marks (user.overlay.*).
 * Trusts: the validated spec, box-recheck's state dir fd and workspace.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <grp.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "boxd.h"
#include "child.h"
#include "cleanup.h"
#include "fdutil.h"
#include "log.h"

#define SNAP_DIR "snapshot"
/* snapshot_max: the upper dir is summed every SIZE_CHECK_S, at most this many entries a walk */
#define USAGE_ENTRIES_MAX 200000
#define SIZE_CHECK_S 1

/* PATH beneath DFD, no symbolic link anywhere on it (nor a magic link): the fd, or -errno. */
static int
openat2_beneath(int dfd, const char *path, int flags)
{
	return fd_openat2(dfd, path, flags | O_NOFOLLOW, 0,
			  RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

/* Write NAME in DFD anew (O_EXCL, then renamed over): never through a planted link. */
static int
write_new(int dfd, const char *name, const char *text)
{
	char tmp[64];
	snprintf(tmp, sizeof(tmp), ".%s.new", name);
	(void)unlinkat(dfd, tmp, 0);
	_cleanup_close_ int fd =
	    openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int r = fd_write_full(fd, text, strlen(text));
	if (r < 0)
		return r;
	return renameat(dfd, tmp, dfd, name) < 0 ? -errno : 0;
}

/* Is the directory DFD empty? 1 yes, 0 no, negative errno. */
static int
dir_empty(int dfd)
{
	DIR *d = NULL;
	int r = fd_opendir_at(dfd, ".", &d);
	if (r < 0)
		return r;
	struct dirent *de;
	int empty = 1;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = 0;
	closedir(d);
	return empty;
}

/* Bytes the upper dir holds (blocks), walked through fds; at most *budget entries. */
static uint64_t
dir_usage(int dfd, unsigned depth, unsigned *budget)
{
	if (depth > 256 || !*budget)
		return 0;
	DIR *d = NULL;
	if (fd_opendir_at(dfd, ".", &d) < 0)
		return 0;
	uint64_t sum = 0;
	struct dirent *de;
	while ((de = readdir(d)) && *budget) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		(*budget)--;
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		sum += (uint64_t)st.st_blocks * 512;
		if (S_ISDIR(st.st_mode)) {
			_cleanup_close_ int sub = openat(
			    dirfd(d), de->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				sum += dir_usage(sub, depth + 1, budget);
		}
	}
	closedir(d);
	return sum;
}

/*
 * As the owner (a child that switched ids when boxd is root): STATE/snapshot,
 * its upper and work dirs, `root` (the workspace) and, while upper is empty,
 * `since` (the time host files are compared with at apply). Exit status:
 * 0, or an errno; 200 the snapshot holds changes of another root; 201 over
 * snapshot_max.
 */
static int
prepare_as_owner(int state_dirfd, const char *root, uint64_t max)
{
	if (mkdirat(state_dirfd, SNAP_DIR, 0700) < 0 && errno != EEXIST)
		return errno;
	_cleanup_close_ int sd = openat2_beneath(state_dirfd, SNAP_DIR, O_RDONLY | O_DIRECTORY);
	if (sd < 0)
		return -sd;
	struct stat st;
	if (fstat(sd, &st) < 0 || st.st_uid != getuid())
		return EPERM;
	if ((mkdirat(sd, "upper", 0755) < 0 && errno != EEXIST) ||
	    (mkdirat(sd, "work", 0700) < 0 && errno != EEXIST))
		return errno;
	_cleanup_close_ int up = openat2_beneath(sd, "upper", O_RDONLY | O_DIRECTORY);
	if (up < 0)
		return -up;
	int empty = dir_empty(up);
	if (empty < 0)
		return -empty;
	char *old = NULL;
	unsigned long len = 0;
	if (!empty && fd_read_file(sd, "root", 4096, &old, &len) == 0) {
		bool same =
		    strlen(old) == strlen(root) + 1 && strncmp(old, root, strlen(root)) == 0;
		free(old);
		if (!same)
			return 200;
	}
	unsigned budget = USAGE_ENTRIES_MAX;
	if (max && dir_usage(up, 0, &budget) > max)
		return 201;
	char buf[4200];
	snprintf(buf, sizeof(buf), "%s\n", root);
	int r = write_new(sd, "root", buf);
	if (r < 0)
		return -r;
	if (empty)
		(void)unlinkat(sd, "applied", 0); /* boxctl apply's records of the last snapshot */
	if (empty || faccessat(sd, "since", F_OK, AT_SYMLINK_NOFOLLOW) < 0) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(buf, sizeof(buf), "%lld\n",
			 (long long)ts.tv_sec * 1000000000LL + (long long)ts.tv_nsec);
		if ((r = write_new(sd, "since", buf)) < 0)
			return -r;
	}
	return 0;
}

static int
write_map(const char *file, const char *text)
{
	_cleanup_close_ int fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return fd_write_full(fd, text, strlen(text));
}

/*
 * The overlay: the detached mount's fd, or negative errno. Layers as fds
 * (root), or as paths (PATHS, the unprivileged child: it is the owner, and
 * overlayfs refuses fds of a mount namespace it left — measured, EINVAL).
 */
static int
overlay_make(int lower, int upper, int work, const char *const *paths)
{
	_cleanup_close_ int fs = fsopen("overlay", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	if ((paths ? (fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir+", paths[0], 0) < 0 ||
		      fsconfig(fs, FSCONFIG_SET_STRING, "upperdir", paths[1], 0) < 0 ||
		      fsconfig(fs, FSCONFIG_SET_STRING, "workdir", paths[2], 0) < 0)
		   : (fsconfig(fs, FSCONFIG_SET_FD, "lowerdir+", NULL, lower) < 0 ||
		      fsconfig(fs, FSCONFIG_SET_FD, "upperdir", NULL, upper) < 0 ||
		      fsconfig(fs, FSCONFIG_SET_FD, "workdir", NULL, work) < 0)) ||
	    fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return -errno;
	int m = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	return m < 0 ? -errno : m;
}

static int
send_fd(int sock, int fd)
{
	char c = 0;
	struct iovec iov = {.iov_base = &c, .iov_len = 1};
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

static int
recv_fd(int sock)
{
	char c;
	struct iovec iov = {.iov_base = &c, .iov_len = 1};
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b)};
	ssize_t n;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	if (n != 1 || !cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int)))
		return n == 1 && c ? -(int)(unsigned char)c : -EPROTO;
	int fd;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/*
 * snapshot_max while the box runs: the upper dir's blocks summed every
 * SIZE_CHECK_S (through an O_PATH fd, nothing followed); over the cap, boxd
 * stops the box as [box] timeout does, saying why.
 */
static void
on_size_check(evutil_socket_t fd, short what, void *arg)
{
	struct box *b = arg;
	uint64_t max = b->spec->box->snapshot_max->value;
	unsigned budget = USAGE_ENTRIES_MAX;
	if (dir_usage(b->snapshot_upper_fd, 0, &budget) > max) {
		log_notice("box %s (%s): its snapshot outgrew snapshot_max (%llu bytes)", b->name,
			   b->id, (unsigned long long)max);
		if (!b->stopped)
			b->stopped = "its snapshot outgrew [box] snapshot_max";
		box_stop(b);
		return;
	}
	struct timeval tv = {SIZE_CHECK_S, 0};
	evtimer_add(b->snapshot_ev, &tv);
}

int
snapshot_start(struct box *b, char **err)
{
	const Box__CfgBox *cb = b->spec->box;
	if (!cb->snapshot || !cb->snapshot->value)
		return 0;
	const char *root = b->rc.workspace;
	uint64_t max = cb->snapshot_max ? cb->snapshot_max->value : 0;
	bool am_root = geteuid() == 0;
	int r;

	if (!root || root[0] != '/' || b->rc.state_dirfd < 0)
		return asprintf(err, "snapshot: no workspace or state dir") < 0 ? -ENOMEM : -EINVAL;

	/* 1. The directories and files, as the owner. */
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (am_root) {
			/* The owner's groups, gid and uid (boxd links no libcap: ids only). */
			uid_t ru, eu, su;
			if (setgroups(b->owner.n_groups, b->owner.groups) < 0 ||
			    setresgid(b->owner.gid, b->owner.gid, b->owner.gid) < 0 ||
			    setresuid(b->owner.uid, b->owner.uid, b->owner.uid) < 0 ||
			    getresuid(&ru, &eu, &su) < 0 || ru != b->owner.uid ||
			    eu != b->owner.uid || su != b->owner.uid)
				_exit(EPERM);
		}
		_exit(prepare_as_owner(b->rc.state_dirfd, root, max));
	}
	r = child_wait_sync(pid);
	if (r < 0)
		return r;
	if (r == 200)
		return asprintf(err,
				"%s/%s holds changes made over another workspace; "
				"boxctl apply or discard them first",
				b->rc.state_dir, SNAP_DIR) < 0
			   ? -ENOMEM
			   : -EEXIST;
	if (r == 201)
		return asprintf(err,
				"%s/%s/upper holds more than snapshot_max (%llu bytes); "
				"boxctl apply or discard first",
				b->rc.state_dir, SNAP_DIR, (unsigned long long)max) < 0
			   ? -ENOMEM
			   : -EFBIG;
	if (r)
		return asprintf(err, "cannot prepare %s/%s as %s: %s", b->rc.state_dir, SNAP_DIR,
				b->owner.name, strerror(r)) < 0
			   ? -ENOMEM
			   : -r;

	/* 2. The layers, opened without following a symlink. */
	_cleanup_close_ int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int lower =
	    rootfd < 0 ? -errno : openat2_beneath(rootfd, root + 1, O_PATH | O_DIRECTORY);
	_cleanup_close_ int upper =
	    openat2_beneath(b->rc.state_dirfd, SNAP_DIR "/upper", O_PATH | O_DIRECTORY);
	_cleanup_close_ int work =
	    openat2_beneath(b->rc.state_dirfd, SNAP_DIR "/work", O_PATH | O_DIRECTORY);
	if (lower < 0 || upper < 0 || work < 0) {
		r = lower < 0 ? lower : upper < 0 ? upper : work;
		return asprintf(err, "snapshot: cannot open %s: %s",
				lower < 0   ? root
				: upper < 0 ? "snapshot/upper"
					    : "snapshot/work",
				strerror(-r)) < 0
			   ? -ENOMEM
			   : r;
	}

	/* 3. The one overlay instance. */
	int m;
	if (am_root) {
		m = overlay_make(lower, upper, work, NULL);
	} else {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
			return -errno;
		uid_t uid = getuid();
		gid_t gid = getgid();
		pid = fork();
		if (pid < 0) {
			r = -errno;
			close(sv[0]);
			close(sv[1]);
			return r;
		}
		if (pid == 0) {
			char map[64];
			int e = 0;
			if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
				e = errno;
			snprintf(map, sizeof(map), "%u %u 1\n", uid, uid);
			if (!e && (write_map("/proc/self/setgroups", "deny") < 0 ||
				   write_map("/proc/self/uid_map", map) < 0))
				e = errno;
			snprintf(map, sizeof(map), "%u %u 1\n", gid, gid);
			if (!e && write_map("/proc/self/gid_map", map) < 0)
				e = errno;
			char up[PATH_MAX], wk[PATH_MAX];
			snprintf(up, sizeof(up), "%s/%s/upper", b->rc.state_dir, SNAP_DIR);
			snprintf(wk, sizeof(wk), "%s/%s/work", b->rc.state_dir, SNAP_DIR);
			const char *const paths[] = {root, up, wk};
			int mfd = e ? -e : overlay_make(lower, upper, work, paths);
			if (mfd < 0) {
				char c = (char)(-mfd & 0x7f);
				(void)send(sv[1], &c, 1, MSG_NOSIGNAL);
				_exit(1);
			}
			_exit(send_fd(sv[1], mfd) < 0 ? 1 : 0);
		}
		close(sv[1]);
		m = recv_fd(sv[0]);
		close(sv[0]);
		(void)child_wait_sync(pid);
	}
	if (m < 0)
		return asprintf(err,
				"snapshot: cannot mount the overlay over %s: %s (overlayfs "
				"with fd layers and userxattr needs Linux 6.13)",
				root, strerror(-m)) < 0
			   ? -ENOMEM
			   : m;
	b->snapshot_fd = m;
	if (!(b->snapshot_root = strdup(root)))
		return -ENOMEM;
	if (max) {
		b->snapshot_upper_fd = TAKE_FD(upper);
		b->snapshot_ev = evtimer_new(b->d->base, on_size_check, b);
		if (!b->snapshot_ev)
			return -ENOMEM;
		struct timeval tv = {SIZE_CHECK_S, 0};
		evtimer_add(b->snapshot_ev, &tv);
	}
	return 0;
}
