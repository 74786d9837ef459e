/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup.c — box-wide pids_max and memory_max (docs/sandbox.md).
 *
 * In order: the cgroup v2 controller when the unified tree offers it (root
 * boxd: MOUNT/box/ID with the controller enabled down the path); else the
 * v1 hierarchy when boxd is root (mounting a v1 pids hierarchy at
 * /sys/fs/cgroup/pids when none is mounted and /sys/fs/cgroup is a
 * writable tmpfs); else, for pids_max only and an owner that is not root,
 * RLIMIT_NPROC inside the box's user namespace; else the box is refused.
 * The trampoline joins the directories made here before it changes
 * credentials and checks that each limit reads back. When the box ends,
 * its cgroups are removed from boxd's loop: one still busy has what is left
 * in it SIGKILLed and is tried again on a timer, never in a sleep.
 * Race: none by the box owner. boxd never delegates: MOUNT/box and
 * MOUNT/box/ID are created by boxd (root) and stay root's, 0755, and the
 * trampoline joins them before it changes credentials. MOUNT/box must be
 * boxd's and not writable by others (a cgroup tree delegated to some user
 * is refused, since that user could swap entries under us); files are
 * opened relative to directory fds with O_NOFOLLOW.
 * Trusts: /proc/self/mountinfo and the cgroup file systems (kernel data).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boxd.h"
#include "cleanup.h"
#include "hostprobe.h"
#include "log.h"
#include "parse.h"
#include "path.h"

struct cg_mounts {
	char v1_pids[256], v1_memory[256], v2[256];
	bool v2_pids, v2_memory;
};

/* Write `text` to dfd/name, which must not be a symlink. */
static int
write_file_at(int dfd, const char *name, const char *text)
{
	int fd = openat(dfd, name, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, text, strlen(text));
	int e = errno;
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -(n < 0 ? e : EIO);
}

/* One cgroup mount from mountinfo: keep the first of each kind under /sys/fs/cgroup. */
static int
mount_seen(void *user, const struct mountinfo_entry *e)
{
	struct cg_mounts *m = user;
	const char *mp = e->mountpoint;

	/* An escaped mount point is not one the kernel or an init system made for cgroups. */
	if (!path_is_under(mp, "/sys/fs/cgroup") || strchr(mp, '\\'))
		return 0;
	if (strcmp(e->fstype, "cgroup2") == 0 && !m->v2[0])
		snprintf(m->v2, sizeof(m->v2), "%s", mp);
	else if (strcmp(e->fstype, "cgroup") == 0) {
		if (list_has_word(e->super_options, "pids") && !m->v1_pids[0])
			snprintf(m->v1_pids, sizeof(m->v1_pids), "%s", mp);
		if (list_has_word(e->super_options, "memory") && !m->v1_memory[0])
			snprintf(m->v1_memory, sizeof(m->v1_memory), "%s", mp);
	}
	return 0;
}

static int
mounts_probe(struct cg_mounts *m)
{
	memset(m, 0, sizeof(*m));
	int r = hostprobe_cgroup_mounts(NULL, mount_seen, m);
	if (r < 0)
		return r;
	if (m->v2[0]) {
		struct hostprobe_controllers ctl;
		if (hostprobe_cgroup2_controllers(m->v2, &ctl) == 0) {
			m->v2_pids = ctl.pids;
			m->v2_memory = ctl.memory;
		}
	}
	return 0;
}

/*
 * No v1 pids hierarchy anywhere: mount one next to the others (root only).
 * Race: /sys/fs/cgroup is the kernel's or a root-owned tmpfs; no box owner
 * can write there.
 */
static int
mount_v1_pids(struct cg_mounts *m)
{
	const char *mp = "/sys/fs/cgroup/pids";
	if (mkdir(mp, 0755) < 0 && errno != EEXIST)
		return -errno;
	if (mount("cgroup", mp, "cgroup", MS_NOSUID | MS_NODEV | MS_NOEXEC, "pids") < 0)
		return -errno;
	snprintf(m->v1_pids, sizeof(m->v1_pids), "%s", mp);
	log_notice("mounted a cgroup v1 pids hierarchy at %s", mp);
	return 0;
}

/*
 * MOUNT/box/ID, with `file` = value. Race: see the top; MOUNT/box is checked
 * (ours, not writable by others) on its fd before anything is made in it.
 */
static int
make_group(struct box *b, const char *mount_point, bool v2, const char *file, uint64_t value,
	   const char *file2, uint64_t value2)
{
	_cleanup_free_ char *parent = path_join(mount_point, "box");
	_cleanup_free_ char *dir = parent ? path_join(parent, b->id) : NULL;
	_cleanup_close_ int mfd = -1, pfd = -1, gfd = -1;
	const char *ctl = file2 ? "+pids +memory" : strncmp(file, "pids", 4) == 0 ? "+pids" :
										  "+memory";
	struct stat st;
	char v[32];
	int r;

	if (!dir)
		return -ENOMEM;
	mfd = open(mount_point, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return log_err_errno(errno, "%s", mount_point);
	if (mkdirat(mfd, "box", 0755) < 0 && errno != EEXIST)
		return log_err_errno(errno, "%s", parent);
	pfd = openat(mfd, "box", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0 || fstat(pfd, &st) < 0)
		return log_err_errno(errno, "%s", parent);
	if (st.st_uid != geteuid() || (st.st_mode & 022))
		return log_err_errno(EPERM, "%s is owned by uid %u, mode %04o: not boxd's alone",
				     parent, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	if (v2) {
		/* Enable the controllers for box/ and box/ID. */
		(void)write_file_at(mfd, "cgroup.subtree_control", ctl);
		(void)write_file_at(pfd, "cgroup.subtree_control", ctl);
	}
	if (mkdirat(pfd, b->id, 0755) < 0)
		return log_err_errno(errno, "%s", dir);
	b->cgroups[b->n_cgroups++] = TAKE_PTR(dir);
	const char *d = b->cgroups[b->n_cgroups - 1];
	gfd = openat(pfd, b->id, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (gfd < 0)
		return log_err_errno(errno, "%s", d);
	snprintf(v, sizeof(v), "%llu", (unsigned long long)value);
	r = write_file_at(gfd, file, v);
	if (r < 0)
		return log_err_errno(r, "%s/%s", d, file);
	if (file2) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)value2);
		r = write_file_at(gfd, file2, v);
		if (r < 0)
			return log_err_errno(r, "%s/%s", d, file2);
	}
	return 0;
}

int
cgroup_setup(struct boxd *d, struct box *b, bool has_pids, uint64_t pids_max, bool has_mem,
	     uint64_t memory_max, const char **why)
{
	struct cg_mounts m;
	int r;

	if (!has_pids && !has_mem)
		return 0;
	r = mounts_probe(&m);
	if (r < 0) {
		*why = "cannot read /proc/self/mountinfo";
		return r;
	}
	/* cgroup v2 (root boxd: it may create and delegate below the mount). */
	bool v2_ok = d->root && m.v2[0] && (!has_pids || m.v2_pids) && (!has_mem || m.v2_memory);
	if (v2_ok)
		return make_group(b, m.v2, true, has_pids ? "pids.max" : "memory.max",
				  has_pids ? pids_max : memory_max,
				  has_pids && has_mem ? "memory.max" : NULL, memory_max);
	if (d->root) {
		if (has_pids && !m.v1_pids[0])
			(void)mount_v1_pids(&m);
		if (has_pids && m.v1_pids[0]) {
			r = make_group(b, m.v1_pids, false, "pids.max", pids_max, NULL, 0);
			if (r < 0) {
				*why = "cannot create the box's pids cgroup";
				return r;
			}
			has_pids = false;
		}
		if (has_mem && m.v1_memory[0]) {
			r = make_group(b, m.v1_memory, false, "memory.limit_in_bytes", memory_max,
				       NULL, 0);
			if (r < 0) {
				*why = "cannot create the box's memory cgroup";
				return r;
			}
			has_mem = false;
		}
	}
	if (has_mem) {
		*why = "memory_max: this host offers no mechanism for it (no cgroup v2 memory controller, and the v1 hierarchy needs a root boxd)";
		return -EOPNOTSUPP;
	}
	if (has_pids) {
		if (b->owner.uid == 0) {
			*why = "pids_max: no cgroup pids controller this boxd can use, and RLIMIT_NPROC does not bind root";
			return -EOPNOTSUPP;
		}
		b->nproc_fallback = true;
	}
	return 0;
}

/* Race: none; the box's cgroup directories are root's (see the top). */
static void
kill_members(const char *dir)
{
	_cleanup_free_ char *p = path_join(dir, "cgroup.procs");
	_cleanup_fclose_ FILE *f = p ? fopen(p, "re") : NULL;
	long pid;

	if (!f)
		return;
	while (fscanf(f, "%ld", &pid) == 1)
		if (pid > 1)
			kill((pid_t)pid, SIGKILL);
}

/*
 * One round: rmdir each cgroup left (its members SIGKILLed when it is still
 * busy). Returns true when one is still busy and another round is due.
 */
static bool
remove_round(struct box *b, bool last)
{
	size_t kept = 0;

	for (size_t i = 0; i < b->n_cgroups; i++) {
		char *dir = b->cgroups[i];
		if (rmdir(dir) == 0 || errno == ENOENT) {
			free(dir);
			continue;
		}
		if (errno != EBUSY) {
			log_warn_errno(errno, "cannot remove %s", dir);
			free(dir);
			continue;
		}
		if (last) {
			log_warn("cannot remove %s: still busy after %d ms; left behind", dir,
				 BOXD_CGROUP_RMDIR_EVERY_MS * BOXD_CGROUP_RMDIR_TRIES);
			free(dir);
			continue;
		}
		kill_members(dir);
		b->cgroups[kept++] = dir;
	}
	for (size_t i = kept; i < b->n_cgroups; i++)
		b->cgroups[i] = NULL;
	b->n_cgroups = kept;
	return kept > 0;
}

/* The next round, from the timer; the last one ends the wait either way. */
static void
on_rmdir_timer(evutil_socket_t fd, short what, void *arg)
{
	struct box *b = arg;
	struct timeval tv = { 0, BOXD_CGROUP_RMDIR_EVERY_MS * 1000 };

	if (remove_round(b, ++b->cgroup_tries >= BOXD_CGROUP_RMDIR_TRIES)) {
		if (evtimer_add(b->cgroup_timer, &tv) == 0)
			return;
		(void)remove_round(b, true);
	}
	event_free(b->cgroup_timer);
	b->cgroup_timer = NULL;
	box_cgroups_removed(b);
}

bool
cgroup_cleanup(struct box *b)
{
	struct timeval tv = { 0, BOXD_CGROUP_RMDIR_EVERY_MS * 1000 };

	if (b->cgroup_timer || !remove_round(b, false))
		return b->cgroup_timer != NULL;
	/* The box's processes are dying (SIGKILLed above): look again soon, from the loop. */
	b->cgroup_tries = 0;
	b->cgroup_timer = evtimer_new(b->d->base, on_rmdir_timer, b);
	if (b->cgroup_timer && evtimer_add(b->cgroup_timer, &tv) == 0)
		return true;
	if (b->cgroup_timer)
		event_free(b->cgroup_timer);
	b->cgroup_timer = NULL;
	(void)remove_round(b, true);
	return false;
}

/* The "oom_kill N" counter of a memory cgroup file (v2 memory.events, v1 memory.oom_control). */
static uint64_t
oom_kill_count(const char *dir, const char *name)
{
	_cleanup_free_ char *p = path_join(dir, name);
	_cleanup_fclose_ FILE *f = p ? fopen(p, "re") : NULL;
	char key[64];
	unsigned long long n;

	if (!f)
		return 0;
	while (fscanf(f, "%63s %llu", key, &n) == 2)
		if (strcmp(key, "oom_kill") == 0)
			return n;
	return 0;
}

bool
cgroup_oom_killed(const struct box *b)
{
	for (size_t i = 0; i < b->n_cgroups; i++)
		if (oom_kill_count(b->cgroups[i], "memory.events") > 0 ||
		    oom_kill_count(b->cgroups[i], "memory.oom_control") > 0)
			return true;
	return false;
}
