/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doctor.c — `boxctl doctor`: each layer box uses, asked of this host's kernel as the
 * caller (docs/boxctl.1.md): user namespaces and what restricts them
 * (user.max_user_namespaces, Debian's kernel.unprivileged_userns_clone, AppArmor's
 * kernel.apparmor_restrict_unprivileged_userns and the box-trampoline profile), the
 * Landlock ABI, seccomp user notification, cgroup v2 and its delegation, pidfd, and the
 * service socket and its group. One line per layer: "ok", "missing" (a box cannot get
 * it) or "note" (works, with a caveat), what was found and, when something is missing,
 * the one command or setting that fixes it. Exit 0 when nothing is missing, else 1.
 * Nothing is changed: every probe is a read or a call in a child that exits.
 * Trusts: the kernel's answers.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/seccomp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.h"
#include "commands.h"
#include "hostprobe.h"
#include "parse.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

static int n_missing;

static void __attribute__((format(printf, 3, 4)))
say(const char *state, const char *layer, const char *fmt, ...)
{
	va_list ap;

	if (strcmp(state, "missing") == 0)
		n_missing++;
	printf("%-8s %-22s ", state, layer);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* The integer in /proc/sys/NAME; -1 when the file is absent, -2 when unreadable. */
static long
sysctl_read(const char *name)
{
	char path[128], buf[32];
	snprintf(path, sizeof(path), "/proc/sys/%s", name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -1 : -2;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -2;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	int64_t v;
	return parse_i64(buf, &v) < 0 || v < 0 || v > INT32_MAX ? -2 : (long)v;
}

static int
write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, text, strlen(text));
	int r = n == (ssize_t)strlen(text) ? 0 : -errno;
	close(fd);
	return r;
}

/*
 * In a child: a user namespace, our uid mapped, then a mount namespace and a mount in it
 * (what the trampoline does first). Returns 0, or the step's errno in the low byte and
 * the step (1 unshare user, 2 uid_map, 3 unshare mount, 4 mount) above it.
 */
static int
userns_probe(void)
{
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char map[64];
		uid_t uid = geteuid();
		gid_t gid = getegid();
		if (unshare(CLONE_NEWUSER) < 0)
			_exit(1 << 5 | (errno & 31));
		snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
		(void)write_file("/proc/self/setgroups", "deny");
		int r = write_file("/proc/self/uid_map", map);
		snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
		if (r == 0)
			r = write_file("/proc/self/gid_map", map);
		if (r < 0)
			_exit(2 << 5 | (-r & 31));
		if (unshare(CLONE_NEWNS) < 0)
			_exit(3 << 5 | (errno & 31));
		if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("box-doctor", "/tmp", "tmpfs", 0, "size=4k") < 0)
			_exit(4 << 5 | (errno & 31));
		_exit(0);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -ECHILD;
}

static void
check_userns(void)
{
	static const char *const steps[] = { "", "unshare(CLONE_NEWUSER)", "writing uid_map",
					     "unshare(CLONE_NEWNS) in it", "mounting in it" };
	long max = sysctl_read("user/max_user_namespaces");
	long clone = sysctl_read("kernel/unprivileged_userns_clone");
	long aa = sysctl_read("kernel/apparmor_restrict_unprivileged_userns");
	int r = userns_probe();

	if (r == 0) {
		say("ok", "user namespaces", "a user namespace with a mount in it works as uid %u "
		    "(user.max_user_namespaces = %ld)", (unsigned)geteuid(), max);
		return;
	}
	if (r < 0) {
		say("missing", "user namespaces", "cannot probe: %s", strerror(-r));
		return;
	}
	int step = (r >> 5) & 7, err = r & 31;
	char what[160];
	snprintf(what, sizeof(what), "%s fails as uid %u: %s", step < 5 ? steps[step] : "?",
		 (unsigned)geteuid(), strerror(err));
	if (max == 0)
		say("missing", "user namespaces", "%s; user.max_user_namespaces = 0 — fix: "
		    "sysctl -w user.max_user_namespaces=15000", what);
	else if (clone == 0)
		say("missing", "user namespaces", "%s; kernel.unprivileged_userns_clone = 0 — fix: "
		    "sysctl -w kernel.unprivileged_userns_clone=1", what);
	else if (aa == 1)
		say("missing", "user namespaces", "%s; AppArmor restricts them "
		    "(kernel.apparmor_restrict_unprivileged_userns = 1) — fix: "
		    "apparmor_parser -r /etc/apparmor.d/box-trampoline (AppArmor 4), "
		    "or use the service (boxd.socket)", what);
	else
		say("missing", "user namespaces", "%s — fix: use the service boxd "
		    "(systemctl enable --now boxd.socket), which runs as root", what);
}

/*
 * Are both profiles of /etc/apparmor.d/box-trampoline loaded — box-trampoline's and boxd's
 * (its confined daemons' user namespaces) — (AppArmor lists its profiles to root only)?
 */
static int
apparmor_profile_loaded(void)
{
	FILE *f = fopen("/sys/kernel/security/apparmor/profiles", "re");
	char line[512];
	int tramp = 0, boxd = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "box-trampoline ", 15) == 0)
			tramp = 1;
		if (strncmp(line, "boxd ", 5) == 0)
			boxd = 1;
	}
	fclose(f);
	return tramp && boxd;
}

static void
check_apparmor(void)
{
	long aa = sysctl_read("kernel/apparmor_restrict_unprivileged_userns");

	if (aa == -1) {
		say("ok", "AppArmor userns", "kernel.apparmor_restrict_unprivileged_userns is not "
		    "present: this kernel does not restrict user namespaces through AppArmor");
		return;
	}
	if (aa == 0) {
		say("ok", "AppArmor userns", "kernel.apparmor_restrict_unprivileged_userns = 0");
		return;
	}
	int loaded = apparmor_profile_loaded();
	if (loaded == 1)
		say("ok", "AppArmor userns", "kernel.apparmor_restrict_unprivileged_userns = %ld; "
		    "the box-trampoline and boxd profiles (userns) are loaded", aa);
	else if (loaded == 0)
		say("missing", "AppArmor userns", "kernel.apparmor_restrict_unprivileged_userns = %ld "
		    "and the box-trampoline or boxd profile is not loaded — fix: "
		    "apparmor_parser -r /etc/apparmor.d/box-trampoline", aa);
	else
		say("note", "AppArmor userns", "kernel.apparmor_restrict_unprivileged_userns = %ld; "
		    "whether the box-trampoline and boxd profiles are loaded is root's to see "
		    "(sudo boxctl doctor)", aa);
}

static void
check_landlock(void)
{
	int abi = hostprobe_landlock_abi();

	if (abi >= 1)
		say("ok", "Landlock", "ABI %d", abi);
	else if (abi == -EOPNOTSUPP)
		say("missing", "Landlock", "built but disabled at boot — fix: add landlock to the "
		    "kernel's lsm= boot parameter (e.g. lsm=landlock,lockdown,yama,apparmor,bpf)");
	else if (abi == -ENOSYS)
		say("missing", "Landlock", "not in this kernel — fix: a kernel >= 5.13 with "
		    "CONFIG_SECURITY_LANDLOCK=y");
	else
		say("missing", "Landlock", "cannot ask the kernel: %s", strerror(-abi));
}

static void
check_seccomp(void)
{
	unsigned int action = SECCOMP_RET_USER_NOTIF;

	if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0)
		say("ok", "seccomp user notif", "SECCOMP_RET_USER_NOTIF is available");
	else if (errno == EOPNOTSUPP)
		say("missing", "seccomp user notif", "the kernel has seccomp filters but not user "
		    "notification — fix: a kernel >= 5.0");
	else
		say("missing", "seccomp user notif", "seccomp: %s — fix: a kernel with "
		    "CONFIG_SECCOMP_FILTER=y (>= 5.0)", strerror(errno));
}

static void
check_pidfd(void)
{
	long fd = syscall(SYS_pidfd_open, getpid(), 0);

	if (fd >= 0) {
		close((int)fd);
		say("ok", "pidfd", "pidfd_open works");
	} else {
		say("missing", "pidfd", "pidfd_open: %s — fix: a kernel >= 5.3", strerror(errno));
	}
}

/* The cgroup2 mount (unified or hybrid) and what it offers; then our own cgroup. */
static int
find_cgroup2(void *user, const struct mountinfo_entry *e)
{
	char *dst = user;
	if (strcmp(e->fstype, "cgroup2") != 0 || dst[0])
		return 0;
	snprintf(dst, 512, "%s", e->mountpoint);
	mountinfo_unescape(dst);
	return 0;
}

static void
check_cgroup(void)
{
	char mnt[512] = "";
	int r = hostprobe_cgroup_mounts(NULL, find_cgroup2, mnt);
	if (r < 0 || !mnt[0]) {
		say("missing", "cgroup v2", "no cgroup2 hierarchy is mounted — fix: boot with "
		    "systemd.unified_cgroup_hierarchy=1");
		return;
	}
	struct hostprobe_controllers c;
	r = hostprobe_cgroup2_controllers(mnt, &c);
	if (r < 0 || (!c.memory && !c.pids)) {
		say("missing", "cgroup v2", "mounted at %s with neither the memory nor the pids "
		    "controller (they are on cgroup v1 here) — fix: boot with "
		    "systemd.unified_cgroup_hierarchy=1", mnt);
		return;
	}
	/* Our own cgroup: "0::/PATH" in /proc/self/cgroup. */
	char line[600], own[600] = "";
	FILE *f = fopen("/proc/self/cgroup", "re");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			/* A path that does not fit is no path: say nothing of it. */
			if ((size_t)snprintf(own, sizeof(own), "%s%s", mnt, line + 3) >= sizeof(own))
				own[0] = '\0';
		}
	if (f)
		fclose(f);
	bool writable = own[0] && access(own, W_OK) == 0;
	if (geteuid() == 0 || writable)
		say("ok", "cgroup v2", "%s (memory %s, pids %s); %s is %s", mnt,
		    c.memory ? "yes" : "no", c.pids ? "yes" : "no", own[0] ? own : "our cgroup",
		    writable ? "delegated to us" : "root's");
	else
		say("note", "cgroup v2", "%s (memory %s, pids %s); our cgroup %s is not delegated "
		    "to uid %u: an embedded box gets no limits of its own — fix: systemd-run --user "
		    "--scope -p Delegate=yes boxctl run, or use the service (Delegate= in "
		    "boxd.service)", mnt, c.memory ? "yes" : "no", c.pids ? "yes" : "no",
		    own[0] ? own : "(unknown)", (unsigned)geteuid());
}

static void
check_service(void)
{
	const char *path = client_service_path();
	struct stat st;
	struct group *g = getgrnam("box-clients");
	const struct passwd *pw = getpwuid(getuid());
	const char *user = pw ? pw->pw_name : "USER";

	if (!g)
		say("missing", "box-clients group", "no group box-clients — fix: systemd-sysusers "
		    "(the package's /usr/lib/sysusers.d/box.conf)");
	else {
		bool member = getegid() == g->gr_gid || geteuid() == 0;
		gid_t groups[256];
		int n = getgroups(256, groups);
		for (int i = 0; i < n; i++)
			if (groups[i] == g->gr_gid)
				member = true;
		if (member)
			say("ok", "box-clients group", "%s may use the service socket", user);
		else
			say("missing", "box-clients group", "%s is not in box-clients — fix: usermod "
			    "-aG box-clients %s (as root; then log in again)", user, user);
	}
	if (lstat(path, &st) < 0) {
		say("missing", "service socket", "%s: %s — fix: systemctl enable --now boxd.socket "
		    "(or boxctl run starts an embedded boxd)", path, strerror(errno));
		return;
	}
	if (!S_ISSOCK(st.st_mode)) {
		say("missing", "service socket", "%s is not a socket — fix: remove it, then "
		    "systemctl restart boxd.socket", path);
		return;
	}
	int fd = client_connect(path);
	if (fd >= 0) {
		close(fd);
		say("ok", "service socket", "%s answers (mode %o)", path, st.st_mode & 07777);
	} else if (fd == -EACCES || fd == -EPERM) {
		say("missing", "service socket", "%s refuses %s (%s) — fix: usermod -aG box-clients "
		    "%s (as root; then log in again)", path, user, strerror(-fd), user);
	} else {
		say("missing", "service socket", "%s: %s — fix: systemctl restart boxd.socket", path,
		    strerror(-fd));
	}
}

int
cmd_doctor(int argc, char **argv)
{
	if (argc > 1) {
		if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
			printf("usage: boxctl doctor\n");
			return BOXCTL_EXIT_OK;
		}
		fprintf(stderr, "usage: boxctl doctor\n");
		return BOXCTL_EXIT_USAGE;
	}
	fflush(stdout);
	check_userns();
	check_apparmor();
	check_landlock();
	check_seccomp();
	check_cgroup();
	check_pidfd();
	check_service();
	printf("%d missing\n", n_missing);
	return n_missing ? BOXCTL_EXIT_FAILURE : BOXCTL_EXIT_OK;
}
