/*
 * hostprobe.h — what the host kernel offers, asked in one place: the Landlock
 * ABI, which cgroup hierarchy a directory is on, and /proc/self/mountinfo
 * lines split into their fields. Used by the trampoline; boxctl's and boxd's
 * own copies (boxctl/config.c, boxd/cgroup.c) are to move here.
 * Library rules: negative errno, no logging, nothing cached.
 * Trusts: the kernel's answers; a mountinfo line is parsed defensively
 * (a malformed one is -EINVAL, never a partial answer).
 */
#ifndef BOX_HOSTPROBE_H
#define BOX_HOSTPROBE_H

/*
 * The Landlock ABI version (>= 1), or -EOPNOTSUPP (built, disabled at boot),
 * -ENOSYS (not built), or another negative errno.
 */
int hostprobe_landlock_abi(void);

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

#endif
