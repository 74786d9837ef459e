/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hostprobe.c — host kernel probes (see hostprobe.h).
 *
 * Trusts: the kernel; mountinfo text is split without assuming it is well
 * formed (every field is checked for, the separator must be there).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "compat/landlock.h"
#include "hostprobe.h"
#include "parse.h"

#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

int
hostprobe_landlock_abi(void)
{
	long r = syscall(BOX_NR_landlock_create_ruleset, NULL, 0,
			 BOX_LANDLOCK_CREATE_RULESET_VERSION);
	if (r < 0)
		return -errno;
	if (r == 0)
		return -EOPNOTSUPP; /* not an ABI version: treat as absent */
	return (int)r;
}

int
hostprobe_cgroup_version(int fd)
{
	struct statfs sfs;

	if (fstatfs(fd, &sfs) < 0)
		return -errno;
	if (sfs.f_type == CGROUP_SUPER_MAGIC)
		return 1;
	if (sfs.f_type == CGROUP2_SUPER_MAGIC)
		return 2;
	return -EMEDIUMTYPE;
}

int
mountinfo_parse_line(char *line, struct mountinfo_entry *ret)
{
	/* id parent maj:min root mountpoint options [optional...] - fstype source superopts */
	char *f[6] = {0};
	char *save = NULL, *w = strtok_r(line, " \n", &save);
	int n = 0;

	for (; w && n < 6; w = strtok_r(NULL, " \n", &save))
		f[n++] = w;
	while (w && strcmp(w, "-") != 0)
		w = strtok_r(NULL, " \n", &save);
	if (n < 6 || !w)
		return -EINVAL;
	char *fstype = strtok_r(NULL, " \n", &save);
	char *source = fstype ? strtok_r(NULL, " \n", &save) : NULL;
	char *super = source ? strtok_r(NULL, " \n", &save) : NULL;
	if (!super)
		return -EINVAL;
	*ret = (struct mountinfo_entry){
		.root = f[3],
		.mountpoint = f[4],
		.options = f[5],
		.fstype = fstype,
		.source = source,
		.super_options = super,
	};
	return 0;
}

void
mountinfo_unescape(char *s)
{
	char *o = s;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

int
hostprobe_cgroup_mounts(const char *path, hostprobe_mount_fn fn, void *user)
{
	_cleanup_fclose_ FILE *f = fopen(path ? path : "/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		struct mountinfo_entry e;
		if (mountinfo_parse_line(line, &e) < 0)
			continue;
		if (strcmp(e.fstype, "cgroup") != 0 && strcmp(e.fstype, "cgroup2") != 0)
			continue;
		int r = fn(user, &e);
		if (r != 0)
			return r;
	}
	return ferror(f) ? -EIO : 0;
}

int
hostprobe_cgroup2_controllers(const char *dir, struct hostprobe_controllers *ret)
{
	char buf[512] = {0};
	_cleanup_free_ char *p = NULL;

	*ret = (struct hostprobe_controllers){0};
	if (asprintf(&p, "%s/cgroup.controllers", dir) < 0)
		return -ENOMEM;
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	int e = errno;
	close(fd);
	if (n < 0)
		return -e;
	/* One line of blank-separated names. */
	for (char *save = NULL, *w = strtok_r(buf, " \n", &save); w; w = strtok_r(NULL, " \n", &save)) {
		if (strcmp(w, "memory") == 0)
			ret->memory = true;
		if (strcmp(w, "pids") == 0)
			ret->pids = true;
	}
	return 0;
}

int
hostprobe_parent_of(int pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "PID (COMM) STATE PPID ...": after the last ')', a state letter, then the ppid. */
	const char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
		return -1;
	char num[16];
	size_t k = strspn(p + 4, "0123456789");
	if (k == 0 || k >= sizeof(num))
		return -1;
	memcpy(num, p + 4, k);
	num[k] = '\0';
	uint64_t v;
	return parse_u64(num, INT32_MAX, &v) == 0 ? (int)v : -1;
}

bool
hostprobe_memfd_noexec(void)
{
	return access("/proc/sys/vm/memfd_noexec", F_OK) == 0;
}
