/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runtime.c — the runtime base and a box's runtime dir BASE/ID (docs/boxctl.1.md,
 * docs/sandbox.md), its mask objects, and the state dir's run lock.
 *
 * BASE is $XDG_RUNTIME_DIR/box, else /run/box for root, else /tmp/box-UID;
 * it must be a directory owned by boxd's euid that nobody else can write
 * (else an error). BASE/ID is created root-owned (or owner-owned in an
 * unprivileged boxd), filled with *at() calls relative to its fd, and only
 * then handed to the owner: tmp, var_tmp, dev_shm and home are the owner's
 * (0700), masks/ and its mode-0000 objects stay boxd's, and so does ca.pem
 * (0644, empty until box-gateway's certificate is written through the fd
 * kept in b->ca_runtime_fd: boxd never opens a name there again), bin/
 * (0755, boxd's: box-alias, a hard link to boxd's own helper or else a copy,
 * and the relative symlinks sh bash zsh
 * python3 python -> box-alias, the agent's /run/box/bin) and shell.sock
 * (box-shell's listening SEQPACKET socket, bound by boxd through
 * /proc/self/fd/N of the still boxd-owned directory, then the owner's, 0600;
 * boxd keeps the listening fd for box-shell). Once BASE/ID is the owner's,
 * the owner can rename bin/ or shell.sock and put its own there: that only
 * changes what its own agent's aliases are or connect to (its own sandbox,
 * no privilege), and the trampoline binds them as the owner without
 * following links. Removal walks the
 * tree by fds with O_NOFOLLOW (a symlink the agent planted is unlinked, never
 * followed).
 * Trusts: nothing in BASE/ID (the owner can write there); the lock file is
 * opened by box-recheck as the owner and read here with a 12-byte cap.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "boxd.h"
#include "cleanup.h"
#include "fdutil.h"
#include "log.h"
#include "parse.h"
#include "path.h"
#include "proto_mcp.h"
#include "testhook.h"

static const char *const managed[] = { "tmp", "var_tmp", "dev_shm", "home" };

int
runtime_new_id(char id[BOXD_ID_LEN + 1])
{
	uint8_t raw[BOXD_ID_LEN / 2];
	static const char hex[] = "0123456789abcdef";

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return -errno;
	for (size_t i = 0; i < sizeof(raw); i++) {
		id[2 * i] = hex[raw[i] >> 4];
		id[2 * i + 1] = hex[raw[i] & 15];
	}
	id[BOXD_ID_LEN] = '\0';
	return 0;
}

/* Create `path` (mode) if missing, then verify: a directory, ours, not writable by others. */
static int
base_verify(const char *path, mode_t mode, mode_t forbidden)
{
	struct stat st;

	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return log_err_errno(errno, "cannot create the runtime base %s", path);
	if (lstat(path, &st) < 0)
		return log_err_errno(errno, "%s", path);
	if (!S_ISDIR(st.st_mode))
		return log_err_errno(ENOTDIR, "the runtime base %s is not a directory", path);
	if (st.st_uid != geteuid())
		return log_err_errno(EPERM, "the runtime base %s is owned by uid %u, not %u", path,
				     (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & forbidden)
		return log_err_errno(EPERM, "the runtime base %s has mode %04o (must not be %s)",
				     path, (unsigned)(st.st_mode & 07777),
				     forbidden == 022 ? "group- or world-writable" :
							"accessible to others");
	return 0;
}

int
runtime_base_prepare(bool service, char **ret)
{
	_cleanup_free_ char *p = NULL;
	const char *x = service ? NULL : getenv("XDG_RUNTIME_DIR");
	bool run_box = false;

	if (x && path_is_clean_absolute(x) && strlen(x) < 200)
		p = path_join(x, "box");
	else if (service || geteuid() == 0) {
		p = strdup("/run/box");
		run_box = true;
	} else if (asprintf(&p, "/tmp/box-%u", (unsigned)geteuid()) < 0)
		p = NULL;
	if (!p)
		return -ENOMEM;
	/* /run/box also holds the service socket: 0755 (packaging/tmpfiles.d). */
	int r = base_verify(p, run_box ? 0755 : 0700, run_box ? 022 : 077);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(p);
	return 0;
}

static const char *const alias_names[] = { "sh", "bash", "zsh", "python3", "python" };

/* SRC (boxd's own helper, a trusted path) copied to a new file NAME in DFD, 0755. */
static int
copy_new_file(const char *src, int dfd, const char *name)
{
	_cleanup_close_ int in = open(src, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	_cleanup_close_ int out = -1;
	char buf[65536];
	struct stat st;

	if (in < 0 || fstat(in, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
		     0755);
	if (out < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		int r = fd_write_full(out, buf, (unsigned long)n);
		if (r < 0)
			return r;
	}
	return fchmod(out, 0755) < 0 ? -errno : 0;
}

/*
 * A listening SOCK_SEQPACKET socket BASE/ID/NAME, bound through
 * /proc/self/fd/DIR/NAME (the directory's fd, never a path the owner can
 * change), then given to the owner (0600): the agent connects as the owner.
 */
static int
listen_socket_at(struct box *b, int dir, const char *name, bool chown_owner, int *ret)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dir, name);
	_cleanup_close_ int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return log_err_errno(errno, "socket");
	if (bind(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return log_err_errno(errno, "binding %s/%s", b->runtime_dir, name);
	if (fchmodat(dir, name, 0600, 0) < 0 ||
	    (chown_owner && fchownat(dir, name, b->owner.uid, b->owner.gid, AT_SYMLINK_NOFOLLOW) < 0))
		return log_err_errno(errno, "%s/%s", b->runtime_dir, name);
	if (listen(sock, SOMAXCONN) < 0)
		return log_err_errno(errno, "listen on %s/%s", b->runtime_dir, name);
	*ret = TAKE_FD(sock);
	return 0;
}

/*
 * bin/ with the alias (and one link to it per stdio [mcp.NAME] alias),
 * shell.sock, and mcp.sock when the box has a stdio [mcp], in BASE/ID (dir,
 * still boxd's: nobody else can write there yet, so no name can be planted
 * or swapped).
 */
int
runtime_shell_files(struct box *b, int dir, bool chown_owner)
{
	_cleanup_close_ int bin = -1, sock = -1;
	int r;

	if (mkdirat(dir, "bin", 0755) < 0)
		return log_err_errno(errno, "%s/bin", b->runtime_dir);
	bin = openat(dir, "bin", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (bin < 0 || fchmod(bin, 0755) < 0)
		return log_err_errno(errno, "%s/bin", b->runtime_dir);
	/*
	 * A hard link to boxd's own helper where the kernel allows it (the same file
	 * system, and boxd may link it: root, or its owner): the 1.2 MB copy, written
	 * at every start and freed at every end, was a measurable part of both
	 * (bench/spawn). bin/ is boxd's, so the owner can neither write nor replace it;
	 * the file itself is boxd's (or root's) read-only executable either way.
	 */
	if (linkat(AT_FDCWD, b->alias_exe, bin, "box-alias", 0) < 0 &&
	    (r = copy_new_file(b->alias_exe, bin, "box-alias")) < 0)
		return log_err_errno(r, "copying %s to %s/bin/box-alias", b->alias_exe,
				     b->runtime_dir);
	for (size_t i = 0; i < ELEMENTSOF(alias_names); i++)
		if (symlinkat("box-alias", bin, alias_names[i]) < 0)
			return log_err_errno(errno, "%s/bin/%s", b->runtime_dir, alias_names[i]);

	/* One link per stdio [mcp.NAME] alias: box-alias in MCP mode (its argv[0]). */
	for (size_t i = 0; i < b->spec->n_mcp; i++) {
		const Box__CfgMcp *m = b->spec->mcp[i];
		if (m->type != BOX__MCP_TYPE__MCP_TYPE_STDIO)
			continue;
		const char *alias = m->alias ? m->alias->value : path_basename(m->command->argv[0]);
		if (strcmp(alias, "box-alias") == 0 || !box_valid_mcp_alias(alias))
			return log_err_errno(EINVAL, "[mcp.%s]: alias %s cannot be a link in "
					     "%s/bin", m->name, alias, b->runtime_dir);
		if (symlinkat("box-alias", bin, alias) < 0)
			return log_err_errno(errno, "%s/bin/%s ([mcp.%s]'s alias)", b->runtime_dir,
					     alias, m->name);
	}

	if ((r = listen_socket_at(b, dir, "shell.sock", chown_owner, &sock)) < 0)
		return r;
	safe_close(b->shell_listen_fd);
	b->shell_listen_fd = TAKE_FD(sock);
	if (mcpd_wanted(b->spec)) {
		if ((r = listen_socket_at(b, dir, "mcp.sock", chown_owner, &sock)) < 0)
			return r;
		safe_close(b->mcp_listen_fd);
		b->mcp_listen_fd = TAKE_FD(sock);
	}
	return 0;
}

/*
 * BASE/ID and what is in it. Race: none while we fill it. BASE is boxd's
 * (base_verify: owned by our euid, not writable by others), so nobody else
 * can create, rename or replace BASE/ID; ID is fresh and random and mkdirat
 * fails on an existing entry; until the final fchown the directory is ours
 * (root's in a root boxd), so the owner cannot write in it. Every entry is
 * still made and changed through an fd opened with O_NOFOLLOW, so the code
 * stays right if that order ever changes. An unprivileged boxd's BASE/ID is
 * the owner's from the start (same uid): nothing there is more privileged
 * than the owner, and nothing here follows a name.
 */
int
runtime_dir_create(const struct boxd *d, struct box *b)
{
	_cleanup_close_ int base = open(d->runtime_base, O_PATH | O_DIRECTORY | O_NOFOLLOW |
							 O_CLOEXEC);
	_cleanup_close_ int dir = -1, masks = -1;
	bool chown_owner = d->root && b->owner.uid != 0;

	if (base < 0)
		return log_err_errno(errno, "%s", d->runtime_base);
	if (mkdirat(base, b->id, 0700) < 0)
		return log_err_errno(errno, "%s/%s", d->runtime_base, b->id);
	if (asprintf(&b->runtime_dir, "%s/%s", d->runtime_base, b->id) < 0) {
		b->runtime_dir = NULL;
		return -ENOMEM;
	}
	dir = openat(base, b->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0)
		return log_err_errno(errno, "%s", b->runtime_dir);
	for (size_t i = 0; i < ELEMENTSOF(managed); i++) {
		if (mkdirat(dir, managed[i], 0700) < 0)
			return log_err_errno(errno, "%s/%s", b->runtime_dir, managed[i]);
		_cleanup_close_ int sub = openat(dir, managed[i],
						 O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0 || (chown_owner && fchownat(sub, "", b->owner.uid, b->owner.gid,
							AT_EMPTY_PATH) < 0))
			return log_err_errno(errno, "%s/%s", b->runtime_dir, managed[i]);
	}
	if (mkdirat(dir, "masks", 0711) < 0)
		return log_err_errno(errno, "%s/masks", b->runtime_dir);
	masks = openat(dir, "masks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (masks < 0 || fchmod(masks, 0711) < 0) /* whatever the umask */
		return log_err_errno(errno, "%s/masks", b->runtime_dir);
	/* The CA certificate's file, boxd's: written later through this fd (gateway.c). */
	b->ca_runtime_fd = openat(dir, "ca.pem",
				  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
	if (b->ca_runtime_fd < 0 || fchmod(b->ca_runtime_fd, 0644) < 0)
		return log_err_errno(errno, "%s/ca.pem", b->runtime_dir);
	if (b->alias_exe) {
		int r = runtime_shell_files(b, dir, chown_owner);
		if (r < 0)
			return r;
	}
	/* Last: the owner gets the directory once everything in it is in place. */
	if (chown_owner && fchown(dir, b->owner.uid, b->owner.gid) < 0)
		return log_err_errno(errno, "%s", b->runtime_dir);
	return 0;
}

/*
 * A mask object BASE/ID/masks/mN (mode 0000, boxd's). Race: BASE/ID is the
 * owner's by now, so the owner can rename masks/ away and put a directory
 * or symlink of its own there. O_NOFOLLOW refuses a symlink; a directory
 * that is not boxd's, or not 0711, is refused too (in a root boxd the
 * owner's replacement is the owner's). The object is created with O_EXCL /
 * mkdirat (never an existing entry), and its mode set through its own fd.
 * What the owner can still do, rename the object after we made it, only
 * swaps one 0000 object for another of its own; the trampoline opens the
 * source without following links and insists on mode 0000.
 */
int
runtime_mask_create(const struct boxd *d, struct box *b, unsigned idx, bool is_dir, char **ret)
{
	char name[32];
	_cleanup_free_ char *masks = path_join(b->runtime_dir, "masks");
	_cleanup_close_ int mfd = -1;
	struct stat st;

	if (!masks)
		return -ENOMEM;
	mfd = open(masks, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (mfd < 0)
		return log_err_errno(errno, "%s", masks);
	if (fstat(mfd, &st) < 0)
		return log_err_errno(errno, "%s", masks);
	if (st.st_uid != geteuid() || (st.st_mode & 07777) != 0711)
		return log_err_errno(EPERM, "%s was replaced (uid %u, mode %04o): not boxd's",
				     masks, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	snprintf(name, sizeof(name), "m%u", idx);
	if (is_dir) {
		if (mkdirat(mfd, name, 0) < 0)
			return log_err_errno(errno, "mask %s/%s", masks, name);
		_cleanup_close_ int fd = openat(mfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW |
								   O_CLOEXEC);
		int r = fd < 0 ? -errno : fd_chmod_opath(fd, 0);
		if (r < 0)
			return log_err_errno(r, "mask %s/%s", masks, name);
	} else {
		int fd = openat(mfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0);
		if (fd < 0)
			return log_err_errno(errno, "mask %s/%s", masks, name);
		int r = fchmod(fd, 0);
		close(fd);
		if (r < 0)
			return log_err_errno(errno, "mask %s/%s", masks, name);
	}
	(void)d;
	*ret = path_join(masks, name);
	return *ret ? 0 : -ENOMEM;
}

/*
 * BOX_TEST_TEARDOWN_DELAY_MS (boxd's own environment; capped): sleep this
 * long after each directory entry the teardown walk found, so that a test's
 * racing owner can swap it. Only slows teardown down.
 */
static void
teardown_test_delay(void)
{
	uint64_t ms;
	/* Capped at 5 s; anything but digits is no delay. */
	if (box_test_ms("BOX_TEST_TEARDOWN_DELAY_MS", UINT64_MAX, &ms) < 0 || ms == 0)
		return;
	box_sleep_ms(ms > 5000 ? 5000 : ms);
}

/*
 * Remove everything inside the directory `dfd` (consumed), never following
 * a link. Race: the owner (or the agent, while it lives; its processes are
 * gone by now, but any other process of the owner is not) can write in
 * every directory here and swap any entry at any moment, e.g. a directory
 * for a symlink with renameat2(RENAME_EXCHANGE) between our unlinkat and the
 * next step. So a name is only ever given to calls that do not follow it
 * (unlinkat, and openat with O_NOFOLLOW); an entry is changed only through
 * an O_PATH|O_NOFOLLOW fd of it, after fstat on that fd says it is a
 * directory; and the walk descends through that fd ("."), not the name.
 * A root boxd needs no chmod at all (CAP_DAC_OVERRIDE reads and empties a
 * mode-0000 directory); an unprivileged one makes a directory of its own
 * uid (a mask, or one the agent made 0000 or 0500) 0700 through that fd.
 * Whatever the owner swaps in is at worst left behind or unlinked as an
 * entry of its own directory: boxd never reads, writes or chmods through it.
 */
static void
rm_contents(int dfd, unsigned depth, bool privileged)
{
	DIR *dir = fdopendir(dfd);
	struct dirent *de;

	if (!dir) {
		close(dfd);
		return;
	}
	while ((de = readdir(dir))) {
		const char *name = de->d_name;
		struct stat st;

		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		if (unlinkat(dirfd(dir), name, 0) == 0 || errno == ENOENT)
			continue;
		if (errno != EISDIR && errno != EPERM)
			continue;
		teardown_test_delay();
		_cleanup_close_ int entry = openat(dirfd(dir), name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (entry < 0 || fstat(entry, &st) < 0)
			continue;
		if (!S_ISDIR(st.st_mode)) {
			/* Swapped since: unlink what is there now (never followed). */
			(void)unlinkat(dirfd(dir), name, 0);
			continue;
		}
		if (depth < 256) {
			if (!privileged && st.st_uid == geteuid() && (st.st_mode & 0700) != 0700)
				(void)fd_chmod_opath(entry, 0700);
			int sub = openat(entry, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (sub >= 0)
				rm_contents(sub, depth + 1, privileged);
		}
		(void)unlinkat(dirfd(dir), name, AT_REMOVEDIR);
	}
	closedir(dir);
}

/*
 * Race: BASE is boxd's, so BASE/ID is the directory we made (the owner
 * cannot rename or replace it); everything inside it is the owner's to
 * change, see rm_contents.
 */
void
runtime_dir_remove(const struct boxd *d, struct box *b)
{
	if (!b->runtime_dir)
		return;
	_cleanup_close_ int base = open(d->runtime_base, O_PATH | O_DIRECTORY | O_NOFOLLOW |
							 O_CLOEXEC);
	if (base < 0)
		return;
	int dir = openat(base, b->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0)
		return;
	rm_contents(dir, 0, d->root);
	if (unlinkat(base, b->id, AT_REMOVEDIR) < 0 && errno != ENOENT)
		log_warn_errno(errno, "cannot remove %s", b->runtime_dir);
}

int
runtime_lock(struct box *b, char running_id[BOXD_ID_LEN + 1])
{
	int fd = b->rc.lock_fd;

	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK)
			return -errno;
		char buf[BOXD_ID_LEN + 1] = { 0 };
		ssize_t n = pread(fd, buf, BOXD_ID_LEN, 0);
		bool hex = n == BOXD_ID_LEN;
		for (ssize_t i = 0; hex && i < n; i++)
			hex = (buf[i] >= '0' && buf[i] <= '9') || (buf[i] >= 'a' && buf[i] <= 'f');
		snprintf(running_id, BOXD_ID_LEN + 1, "%s", hex ? buf : "unknown");
		return -EBUSY;
	}
	char line[BOXD_ID_LEN + 2];
	snprintf(line, sizeof(line), "%s\n", b->id);
	if (ftruncate(fd, 0) < 0 || pwrite(fd, line, BOXD_ID_LEN + 1, 0) != BOXD_ID_LEN + 1)
		log_warn_errno(errno, "cannot record the box id in the lock file");
	b->locked = true;
	return 0;
}

void
runtime_unlock(struct box *b)
{
	/* Only our own lock: a busy one's file holds the running box's id. */
	if (!b->locked || b->rc.lock_fd < 0)
		return;
	b->locked = false;
	if (ftruncate(b->rc.lock_fd, 0) < 0)
		log_debug_errno(errno, "truncating the lock file");
	b->rc.lock_fd = safe_close(b->rc.lock_fd);
}
