/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_hostprobe.c — common/hostprobe.c: the Landlock ABI as the kernel
 * reports it, the cgroup version of a directory, mountinfo lines split and
 * unescaped (real lines of this host, and malformed ones refused), the
 * cgroup mounts of a fixture mountinfo and a cgroup2 directory's controllers.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compat/landlock.h"
#include "hostprobe.h"
#include "tap.h"

static void
test_landlock_abi(void)
{
	long want = syscall(BOX_NR_landlock_create_ruleset, NULL, 0,
			    BOX_LANDLOCK_CREATE_RULESET_VERSION);
	int e = errno;
	int got = hostprobe_landlock_abi();
	if (want > 0)
		CHECK_INT(got, want);
	else
		CHECK(got < 0 && (want < 0 ? got == -e : got == -EOPNOTSUPP));
}

static void
test_cgroup_version(void)
{
	int fd = open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_INT(hostprobe_cgroup_version(fd), -EMEDIUMTYPE);
	close(fd);
	CHECK_INT(hostprobe_cgroup_version(-1), -EBADF);
	fd = open("/sys/fs/cgroup", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		printf("ok - /sys/fs/cgroup # skip not mounted\n");
		return;
	}
	int v = hostprobe_cgroup_version(fd);
	/* A tmpfs of v1 hierarchies is not itself a cgroup; v2 is. */
	CHECK(v == 2 || v == -EMEDIUMTYPE || v == 1);
	close(fd);
}

static void
test_mountinfo_lines(void)
{
	char l1[] = "36 35 98:0 /mnt1 /mnt/with\\040blank rw,noatime master:1 - ext3 /dev/root "
		    "rw,errors=continue\n";
	struct mountinfo_entry e;
	CHECK_INT(mountinfo_parse_line(l1, &e), 0);
	CHECK_STR(e.root, "/mnt1");
	CHECK_STR(e.mountpoint, "/mnt/with\\040blank");
	CHECK_STR(e.options, "rw,noatime");
	CHECK_STR(e.fstype, "ext3");
	CHECK_STR(e.source, "/dev/root");
	CHECK_STR(e.super_options, "rw,errors=continue");
	char mp[64];
	snprintf(mp, sizeof(mp), "%s", e.mountpoint);
	mountinfo_unescape(mp);
	CHECK_STR(mp, "/mnt/with blank");

	/* No optional fields at all. */
	char l2[] = "30 1 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate";
	CHECK_INT(mountinfo_parse_line(l2, &e), 0);
	CHECK_STR(e.fstype, "cgroup2");
	CHECK_STR(e.mountpoint, "/sys/fs/cgroup");

	/* Malformed: no separator, a field short, nothing after the separator. */
	static const char *const bad[] = {
		"36 35 98:0 /mnt1 /mnt2 rw ext3 /dev/root rw",
		"36 35 98:0 /mnt1 - ext3 /dev/root rw",
		"36 35 98:0 /mnt1 /mnt2 rw -",
		"36 35 98:0 /mnt1 /mnt2 rw - ext3 /dev/root",
		"",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char buf[128];
		snprintf(buf, sizeof(buf), "%s", bad[i]);
		e.fstype = "untouched";
		CHECK_INT(mountinfo_parse_line(buf, &e), -EINVAL);
		CHECK_STR(e.fstype, "untouched");
	}
	char esc[] = "a\\134b\\011c\\012d\\9xy\\";
	mountinfo_unescape(esc);
	CHECK_STR(esc, "a\\b\tc\nd\\9xy\\");
}

static void
test_mountinfo_of_this_host(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	CHECK(f != NULL);
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0;
	unsigned n = 0, parsed = 0, root = 0;
	while (getline(&line, &cap, f) > 0) {
		struct mountinfo_entry e;
		n++;
		if (mountinfo_parse_line(line, &e) == 0) {
			parsed++;
			if (strcmp(e.mountpoint, "/") == 0)
				root++;
		}
	}
	free(line);
	fclose(f);
	CHECK(n > 0);
	CHECK_INT(parsed, n);
	CHECK(root >= 1);
}

static char tmpdir[64];

static void
write_text(const char *name, const char *text)
{
	char p[128];
	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	FILE *f = fopen(p, "we");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

struct seen {
	char lines[8][160];
	int n;
	int stop_at; /* return 1 from this call (1-based); 0: never */
};

static int
record_mount(void *user, const struct mountinfo_entry *e)
{
	struct seen *s = user;
	if (s->n < 8)
		snprintf(s->lines[s->n], sizeof(s->lines[0]), "%s %s %s", e->fstype, e->mountpoint,
			 e->super_options);
	s->n++;
	return s->n == s->stop_at ? 7 : 0;
}

/* Only cgroup and cgroup2 mounts, in file order, escaped; malformed lines skipped. */
static void
test_cgroup_mounts(void)
{
	char mi[128];
	snprintf(mi, sizeof(mi), "%s/mountinfo", tmpdir);
	write_text("mountinfo",
		   "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
		   "30 25 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
		   "bad line without separator cgroup\n"
		   "31 25 0:27 / /sys/fs/cgroup/pids rw,nosuid shared:9 - cgroup cgroup rw,pids\n"
		   "32 25 0:28 / /sys/fs/cgroup/uni\\040fied rw - cgroup2 cgroup2 rw,nsdelegate\n"
		   "33 25 0:29 / /mnt/x rw - cgroup2\n");
	struct seen s = { .n = 0 };
	CHECK_INT(hostprobe_cgroup_mounts(mi, record_mount, &s), 0);
	CHECK_INT(s.n, 3);
	CHECK_STR(s.lines[0], "cgroup /sys/fs/cgroup/memory rw,memory");
	CHECK_STR(s.lines[1], "cgroup /sys/fs/cgroup/pids rw,pids");
	CHECK_STR(s.lines[2], "cgroup2 /sys/fs/cgroup/uni\\040fied rw,nsdelegate");

	struct seen stop = { .stop_at = 2 };
	CHECK_INT(hostprobe_cgroup_mounts(mi, record_mount, &stop), 7);
	CHECK_INT(stop.n, 2);

	snprintf(mi, sizeof(mi), "%s/absent", tmpdir);
	CHECK_INT(hostprobe_cgroup_mounts(mi, record_mount, &s), -ENOENT);

	/* This host's: every cgroup mount is seen, none of another type. */
	struct seen here = { .n = 0 };
	CHECK_INT(hostprobe_cgroup_mounts(NULL, record_mount, &here), 0);
	for (int i = 0; i < here.n && i < 8; i++)
		CHECK(strncmp(here.lines[i], "cgroup ", 7) == 0 ||
		      strncmp(here.lines[i], "cgroup2 ", 8) == 0);
}

static void
test_cgroup2_controllers(void)
{
	struct hostprobe_controllers ctl = { true, true };
	CHECK_INT(hostprobe_cgroup2_controllers(tmpdir, &ctl), -ENOENT);
	CHECK(!ctl.memory && !ctl.pids);

	write_text("cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n");
	CHECK_INT(hostprobe_cgroup2_controllers(tmpdir, &ctl), 0);
	CHECK(ctl.memory && ctl.pids);

	write_text("cgroup.controllers", "memoryx pidsy cpu\n");
	CHECK_INT(hostprobe_cgroup2_controllers(tmpdir, &ctl), 0);
	CHECK(!ctl.memory && !ctl.pids);

	write_text("cgroup.controllers", "pids");
	CHECK_INT(hostprobe_cgroup2_controllers(tmpdir, &ctl), 0);
	CHECK(!ctl.memory && ctl.pids);

	write_text("cgroup.controllers", "");
	CHECK_INT(hostprobe_cgroup2_controllers(tmpdir, &ctl), 0);
	CHECK(!ctl.memory && !ctl.pids);
}

int
main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/box-test-hostprobe-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		printf("not ok - mkdtemp\n");
		return 1;
	}
	RUN(test_landlock_abi);
	RUN(test_cgroup_version);
	RUN(test_mountinfo_lines);
	RUN(test_mountinfo_of_this_host);
	RUN(test_cgroup_mounts);
	RUN(test_cgroup2_controllers);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		printf("not ok - cleanup %s\n", tmpdir);
	return tap_done();
}
