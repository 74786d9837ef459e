/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hostprobe.h — what the host kernel offers, asked in one place: the Landlock
 * ABI, which cgroup hierarchy a directory is on, and /proc/self/mountinfo
 * lines split into their fields, the cgroup mounts listed there and the
 * controllers a cgroup2 directory offers. Used by the trampoline, boxctl
 * (config_host.c: what box.ini may ask for) and boxd (cgroup.c: where to
 * make a box's cgroups).
 * Library rules: negative errno, no logging, nothing cached.
 * Trusts: the kernel's answers; a mountinfo line is parsed defensively
 * (a malformed one is -EINVAL, never a partial answer).
 */
#ifndef BOX_HOSTPROBE_H
#define BOX_HOSTPROBE_H

#include <stdbool.h>

/*
 * The Landlock ABI version (>= 1), or -EOPNOTSUPP (built, disabled at boot),
 * -ENOSYS (not built), or another negative errno.
 */
int hostprobe_landlock_abi(void);

/*
 * The parent of process PID as /proc/PID/stat names it (a pid of the caller's
 * PID namespace), or -1 when it cannot be read (gone, not ours to see).
 */
int hostprobe_parent_of(int pid);

/* Does this kernel have vm.memfd_noexec (Linux 6.3, per PID namespace)? */
bool hostprobe_memfd_noexec(void);

/* The cgroup hierarchy FD is on: 1 (v1) or 2 (v2); -EMEDIUMTYPE for another fs; -errno. */
int hostprobe_cgroup_version(int fd);

/* One mountinfo line's fields, pointing into the line (proc_pid_mountinfo(5)). */
struct mountinfo_entry {
	const char *root;	/* field 4 */
	const char *mountpoint; /* field 5, still \ooo-escaped */
	const char *options;	/* field 6: per-mount options */
	const char *fstype;	/* after the "-" separator */
	const char *source;
	const char *super_options;
};

/*
 * Split LINE (one line, with or without its newline) in place. -EINVAL when
 * a field is missing or there is no "-" separator; *ret is then untouched.
 */
int mountinfo_parse_line(char *line, struct mountinfo_entry *ret);
/* Decode mountinfo's \ooo escapes (blank, tab, newline, backslash) in place. */
void mountinfo_unescape(char *s);

/*
 * Call FN for every cgroup (v1) and cgroup2 mount listed in the mountinfo file
 * PATH (NULL: /proc/self/mountinfo), in file order. The entry points into a
 * line buffer that is reused after FN returns; its mountpoint is still
 * escaped. Malformed lines are skipped. Returns 0, FN's first nonzero return
 * (iteration stops there), or -errno when the file cannot be read.
 */
typedef int (*hostprobe_mount_fn)(void *user, const struct mountinfo_entry *e);
int hostprobe_cgroup_mounts(const char *path, hostprobe_mount_fn fn, void *user);

/* The controllers a cgroup2 directory lists in its cgroup.controllers. */
struct hostprobe_controllers {
	bool memory;
	bool pids;
};
/* Read DIR/cgroup.controllers (first 511 bytes). 0, or -errno (*ret all false). */
int hostprobe_cgroup2_controllers(const char *dir, struct hostprobe_controllers *ret);

#endif
