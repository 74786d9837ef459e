/* SPDX-License-Identifier: Apache-2.0 */
/*
 * landlock.c — step 5: Landlock on the finished view (docs/sandbox.md).
 *
 * box-shell (SANDBOX_SHELL) gets the agent's rights and READ_FILE|EXECUTE on
 * its own binary; only a tool gets EXECUTE on its grants. EXECUTE on the
 * system runtime (/usr /lib* /bin /sbin) only with plan.exec_system (tools;
 * an agent with [agent] exec_system = true): otherwise the sandbox may
 * execve exactly its VIEW_EXEC entries (the program, its #! interpreters,
 * exec entries, the ELF loaders boxd listed), /run/box/bin and the shell
 * alias (one rule on its inode covers every name it is mounted at) —
 * hardening, not a boundary: LANDLOCK_ACCESS_FS_EXECUTE is checked when a
 * file is opened for execve (the program, a #! interpreter, PT_INTERP), not
 * on mmap(PROT_EXEC), so shared libraries need only READ_FILE, `ld.so
 * PROGRAM` still runs PROGRAM, and a memfd (an internal mount Landlock does
 * not restrict) runs unless vm.memfd_noexec forbids it (mount.c).
 * Handled: every filesystem right of the running ABI (capped at 7); ABI >= 6
 * also scopes abstract unix sockets and signals to the sandbox. No network
 * rules: the box has its own network namespace. Rights per path are the
 * table of docs/sandbox.md; `deny` entries get none (their masks do the work).
 * Paths are opened in the view after pivot_root, without following
 * symlinks; a path the view lacks (an optional runtime file) is skipped.
 * A rule on a read-only mount also grants TRUNCATE, which no file there can
 * use (ineffective_truncate below): Landlock checks TRUNCATE at every open,
 * and a rule without it sent each open's walk up to the real root.
 * Trusts: the validated plan and the view mount.c built.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cleanup.h"
#include "compat/landlock.h"
#include "path.h"
#include "trampoline.h"

#define R_READ (BOX_LL_FS_READ_FILE | BOX_LL_FS_READ_DIR)
#define R_FILE_ONLY                                                                       \
	(BOX_LL_FS_EXECUTE | BOX_LL_FS_WRITE_FILE | BOX_LL_FS_READ_FILE | BOX_LL_FS_TRUNCATE | \
	 BOX_LL_FS_IOCTL_DEV)
#define R_WRITE_SET                                                                        \
	(BOX_LL_FS_READ_FILE | BOX_LL_FS_READ_DIR | BOX_LL_FS_WRITE_FILE | BOX_LL_FS_TRUNCATE | \
	 BOX_LL_FS_REMOVE_FILE | BOX_LL_FS_REMOVE_DIR | BOX_LL_FS_MAKE_REG |                   \
	 BOX_LL_FS_MAKE_DIR | BOX_LL_FS_MAKE_SYM | BOX_LL_FS_MAKE_FIFO | BOX_LL_FS_MAKE_SOCK | \
	 BOX_LL_FS_REFER)

struct ll {
	struct tramp *t;
	int fd;
	uint64_t handled;
};

/*
 * Whether a rule at PATH (in the view, after pivot_root) on a mount with
 * statvfs flags MNT_FLAGS may also grant TRUNCATE without granting anything.
 *
 * Landlock asks for TRUNCATE at every open (to fix the opened file's rights
 * for a later ftruncate), and its walk up from the file ends only at a rule
 * that grants everything asked; a rule on a read-only grant without it sent
 * every open there (each library, each file of a grep -r) up through every
 * mount to the real root. Where the mount is read-only, TRUNCATE cannot be
 * used: truncate(2) fails EROFS before Landlock is asked (mnt_want_write comes
 * first), an O_TRUNC open or an ftruncate needs a file opened for writing,
 * which a read-only mount refuses (EROFS), and nothing in the sandbox can
 * remount it (no capabilities; seccomp refuses the mount calls). The rule also
 * covers mounts below it: each of those is a grant (a write grant has TRUNCATE
 * in its own rule), a mask or the box's /tmp, /var/tmp, /dev/shm (rights of
 * their own, TRUNCATE included) — except what is below "/" , /dev and /proc
 * (devices and proc files without TRUNCATE in their rules), so a rule at or
 * above either never gets it.
 */
bool
landlock_ineffective_truncate(const char *path, unsigned long mnt_flags)
{
	if (!(mnt_flags & ST_RDONLY) || !path || path[0] != '/' || strcmp(path, "/") == 0)
		return false;
	return !path_is_under("/dev", path) && !path_is_under("/proc", path);
}

/* Add one rule on the object open at `fd` (O_PATH), named `path` in messages. */
static void
rule_fd(struct ll *ll, int fd, const char *path, uint64_t rights)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		tramp_fail(ll->t, STEP_LANDLOCK, errno, "%s", path);
	if (S_ISLNK(st.st_mode))
		return; /* a copied symlink: its target has its own rule */
	if (!S_ISDIR(st.st_mode))
		rights &= R_FILE_ONLY;
	/* (the mount as the kernel has it now, not as the plan meant it: fstatvfs of this fd) */
	struct statvfs sv;
	if ((rights & BOX_LL_FS_READ_FILE) && fstatvfs(fd, &sv) == 0 &&
	    landlock_ineffective_truncate(path, sv.f_flag))
		rights |= BOX_LL_FS_TRUNCATE;
	rights &= ll->handled;
	if (!rights)
		return;
	struct box_landlock_path_beneath_attr pb = {.allowed_access = rights, .parent_fd = fd};
	if (box_landlock_add_rule(ll->fd, BOX_LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
		tramp_fail(ll->t, STEP_LANDLOCK, errno, "rule for %s", path);
}

/*
 * Add one rule. `must_exist`: a path the plan named (a grant) must be there;
 * runtime extras the host may lack are skipped.
 */
static void
rule(struct ll *ll, const char *path, uint64_t rights, bool must_exist)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (!must_exist && (errno == ENOENT || errno == ELOOP))
			return;
		tramp_fail(ll->t, STEP_LANDLOCK, errno, "%s", path);
	}
	rule_fd(ll, fd, path, rights);
}

void
landlock_apply(struct tramp *t)
{
	const Box__Plan *p = t->plan;
	const Box__RuntimeDirs *rt = p->runtime;
	bool tool = p->kind == BOX__SANDBOX_KIND__SANDBOX_TOOL;
	uint64_t x = tool ? BOX_LL_FS_EXECUTE : 0;

	if (t->landlock_abi == 0)
		return; /* not required (layers_probe refused otherwise); boxd disclosed it */

	struct box_landlock_ruleset_attr attr = {
		.handled_access_fs = box_landlock_fs_rights(t->landlock_abi),
		.scoped = box_landlock_scopes(t->landlock_abi),
	};
	int fd = box_landlock_create_ruleset(&attr, box_landlock_attr_size(t->landlock_abi), 0);
	if (fd < 0)
		tramp_fail(t, STEP_LANDLOCK, errno, "landlock_create_ruleset (ABI %d)",
			   t->landlock_abi);
	struct ll ll = {.t = t, .fd = fd, .handled = attr.handled_access_fs};

	rule(&ll, "/", BOX_LL_FS_READ_DIR, true);
	const uint64_t sys_x = tool || p->exec_system ? BOX_LL_FS_EXECUTE : 0;
	for (size_t i = 0; i < ELEMENTSOF(path_system_runtime); i++)
		rule(&ll, path_system_runtime[i], R_READ | sys_x, false);
	static const char *const etc[] = {
		"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/nsswitch.conf",
		"/etc/hosts",	    "/etc/host.conf",  "/etc/gai.conf",	    "/etc/services",
		"/etc/protocols",   "/etc/localtime",  "/etc/ssl",	    "/etc/ca-certificates",
		"/etc/alternatives", "/etc/mime.types", "/etc/passwd",	    "/etc/group",
	};
	for (size_t i = 0; i < ELEMENTSOF(etc); i++)
		rule(&ll, etc[i], R_READ, false);

	static const char *const devs[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
					   "/dev/urandom"};
	for (size_t i = 0; i < ELEMENTSOF(devs); i++)
		rule(&ll, devs[i], BOX_LL_FS_READ_FILE | BOX_LL_FS_WRITE_FILE, true);
	const uint64_t tty = BOX_LL_FS_READ_FILE | BOX_LL_FS_WRITE_FILE | BOX_LL_FS_IOCTL_DEV;
	rule(&ll, "/dev/tty", tty, true);
	rule(&ll, "/dev/pts", tty, true);

	const uint64_t scratch = R_WRITE_SET | x;
	rule(&ll, "/tmp", scratch, true);
	rule(&ll, "/var/tmp", scratch, true);
	rule(&ll, "/dev/shm", scratch, true);
	bool home_granted = false;
	for (size_t i = 0; i < p->n_view; i++)
		if (p->view[i]->kind != BOX__VIEW_KIND__VIEW_DENY &&
		    path_is_under(p->owner->home, p->view[i]->path))
			home_granted = true;
	if (!home_granted && (rt->home || tool) && strcmp(p->owner->home, "/") != 0)
		rule(&ll, p->owner->home, scratch, true);

	if (rt->run_box_bin)
		rule(&ll, "/run/box/bin", BOX_LL_FS_READ_FILE | BOX_LL_FS_EXECUTE, true);
	/* The alias mounted over sh bash zsh dash rbash: one rule on its inode covers each name. */
	if (t->shell_alias_fd >= 0) {
		rule_fd(&ll, t->shell_alias_fd, rt->shell_alias, BOX_LL_FS_READ_FILE | BOX_LL_FS_EXECUTE);
		t->shell_alias_fd = safe_close(t->shell_alias_fd);
	}
	if (rt->ca_pem)
		rule(&ll, "/run/box/ca.pem", BOX_LL_FS_READ_FILE, true);
	rule(&ll, "/proc", R_READ, true);
	/* box-shell: the agent's rights, plus its own binary (mount.c bound it read-only). */
	if (p->workload_bin)
		rule(&ll, p->workload_bin, BOX_LL_FS_READ_FILE | BOX_LL_FS_EXECUTE, true);

	for (size_t i = 0; i < p->n_view; i++) {
		const Box__ViewEntry *e = p->view[i];
		uint64_t r;
		switch (e->kind) {
		case BOX__VIEW_KIND__VIEW_READ:
			r = R_READ | x;
			break;
		case BOX__VIEW_KIND__VIEW_READ_FILE:
			r = BOX_LL_FS_READ_FILE | x;
			break;
		case BOX__VIEW_KIND__VIEW_WRITE:
			r = R_WRITE_SET | x;
			break;
		case BOX__VIEW_KIND__VIEW_WRITE_FILE:
			r = BOX_LL_FS_READ_FILE | BOX_LL_FS_WRITE_FILE | BOX_LL_FS_TRUNCATE | x;
			break;
		case BOX__VIEW_KIND__VIEW_EXEC:
			r = BOX_LL_FS_EXECUTE | R_READ; /* READ_DIR is dropped for a file */
			break;
		case BOX__VIEW_KIND__VIEW_DENY:
			continue; /* Landlock can only add rights; the mask denies */
		case BOX__VIEW_KIND__VIEW_INVALID:
		case _BOX__VIEW_KIND_IS_INT_SIZE:
		default:
			tramp_fail(t, STEP_LANDLOCK, EINVAL, "%s: bad kind", e->path);
		}
		rule(&ll, e->path, r, true);
	}

	/* no_new_privs is already set: PID 1 set it when it was forked (pid1.c). */
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		tramp_fail(t, STEP_LANDLOCK, 0, "no_new_privs is not set");
	if (box_landlock_restrict_self(fd, 0) < 0)
		tramp_fail(t, STEP_LANDLOCK, errno, "landlock_restrict_self");
	close(fd);
}
