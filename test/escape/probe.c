/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe.c — the escape suite's agent: one static program, one case per run.
 *
 *   probe CASE [ARGS...]
 *
 * Each case first runs a positive control that must succeed in this same
 * box, then attempts one escape and checks the errno docs/sandbox.md gives.
 * Exit 0: contained as specified; 1: the escape did not fail as specified;
 * 2: the control failed (an error, never a pass). One line on stdout says
 * what happened. Test code: it trusts its arguments (the runner's).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdnoreturn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef RNDGETENTCNT
#define RNDGETENTCNT _IOR('R', 0x00, int)
#endif
#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
/* Raw x86-64 numbers (the static libc's headers may not name them). */
#define NR_openat2 437
#define NR_memfd_secret 447
#define NR_fchmodat2 452

extern char **environ;
static const char *case_name = "?";

static noreturn void
result(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static noreturn void
result(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("probe %s: %s: ", case_name,
	       code == 0 ? "contained" : code == 1 ? "ESCAPED" : "CONTROL FAILED");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
	exit(code);
}

#define CONTROL(cond, what)                                                                \
	do {                                                                               \
		errno = 0;                                                                 \
		if (!(cond))                                                               \
			result(2, "%s: %s", what, strerror(errno));                        \
	} while (0)

/* The attempt must fail with `want`. Evaluates `expr` once (returns < 0 on failure). */
#define EXPECT_ERRNO(expr, want, what)                                                     \
	do {                                                                               \
		errno = 0;                                                                 \
		long r_ = (long)(expr);                                                    \
		int e_ = errno;                                                            \
		if (r_ >= 0)                                                               \
			result(1, "%s succeeded", what);                                   \
		if (e_ != (want))                                                          \
			result(1, "%s: %s (expected %s)", what, strerror(e_), strerror(want)); \
	} while (0)

static bool
read_ok(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	char b[16];
	bool ok = read(fd, b, sizeof(b)) >= 0;
	close(fd);
	return ok;
}

static bool
create_ok(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return false;
	bool ok = write(fd, "x", 1) == 1;
	close(fd);
	return ok;
}

/* fork+exec, return the wait status (or -errno of execve via exit code 200+). */
static int
run(char *const argv[], int *exec_errno)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, 1);
		dup2(devnull, 2);
		execve(argv[0], argv, environ);
		int e = errno;
		if (write(p[1], &e, sizeof(e)) < 0)
			_exit(99);
		_exit(99);
	}
	close(p[1]);
	int e = 0;
	if (read(p[0], &e, sizeof(e)) != sizeof(e))
		e = 0;
	close(p[0]);
	if (exec_errno)
		*exec_errno = e;
	int st;
	waitpid(pid, &st, 0);
	return st;
}

static int
tcp_server(uint16_t *port)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t l = sizeof(a);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 4) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &l) < 0)
		return -1;
	*port = ntohs(a.sin_port);
	return s;
}

static int
tcp_connect(const char *ip, uint16_t port)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	inet_pton(AF_INET, ip, &a.sin_addr);
	int r = connect(s, (struct sockaddr *)&a, sizeof(a));
	int e = errno;
	if (r < 0) {
		close(s);
		errno = e;
		return -1;
	}
	return s;
}

/* A TCP server on 127.0.0.1 inside the box, reached from inside. */
static void
control_loopback(void)
{
	uint16_t port;
	int srv = tcp_server(&port);
	CONTROL(srv >= 0, "in-box server on 127.0.0.1");
	int c = tcp_connect("127.0.0.1", port);
	CONTROL(c >= 0, "connect to the in-box server");
	int a = accept4(srv, NULL, NULL, SOCK_CLOEXEC);
	CONTROL(a >= 0 && write(c, "x", 1) == 1, "accept/write");
	char b;
	CONTROL(read(a, &b, 1) == 1 && b == 'x', "in-box loopback read");
	close(a), close(c), close(srv);
}

static int
unix_connect(const char *path, bool abstract)
{
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	socklen_t len;
	if (abstract) {
		a.sun_path[0] = 0;
		strncpy(a.sun_path + 1, path, sizeof(a.sun_path) - 2);
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(path));
	} else {
		strncpy(a.sun_path, path, sizeof(a.sun_path) - 1);
		len = sizeof(a);
	}
	int r = connect(s, (struct sockaddr *)&a, len);
	int e = errno;
	close(s);
	errno = e;
	return r;
}

static int
unix_listen(const char *path, bool abstract)
{
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	socklen_t len;
	if (abstract) {
		strncpy(a.sun_path + 1, path, sizeof(a.sun_path) - 2);
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(path));
	} else {
		strncpy(a.sun_path, path, sizeof(a.sun_path) - 1);
		len = sizeof(a);
	}
	if (bind(s, (struct sockaddr *)&a, len) < 0 || listen(s, 4) < 0)
		return -1;
	return s;
}

static bool
status_field_zero(const char *field)
{
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return false;
	char line[256];
	bool ok = false;
	size_t fl = strlen(field);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, fl) == 0 && line[fl] == ':')
			ok = strtoull(line + fl + 1, NULL, 16) == 0;
	fclose(f);
	return ok;
}

static long
status_field(const char *field)
{
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return -1;
	char line[256];
	long v = -1;
	size_t fl = strlen(field);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, fl) == 0 && line[fl] == ':')
			v = strtol(line + fl + 1, NULL, 10);
	fclose(f);
	return v;
}

/* The mode of `path` has neither S_ISUID nor S_ISGID (or the path is gone). */
static bool
no_id_bits(const char *path)
{
	struct stat sb;
	return stat(path, &sb) < 0 || !(sb.st_mode & (S_ISUID | S_ISGID));
}

/*
 * Every call that sets a mode refuses S_ISUID and S_ISGID with EPERM; the
 * same call with 0755 works. dir: a writable directory.
 */
static void
setid_case(const char *dir)
{
	static const unsigned long bits[] = {04755, 02755, 06755};
	char f[4096], g[4096];
	snprintf(f, sizeof(f), "%s/setid-file", dir);
	snprintf(g, sizeof(g), "%s/setid-new", dir);
	unlink(f), unlink(g);
	CONTROL(create_ok(f), "create a file");

	CONTROL(syscall(SYS_chmod, f, 0755) == 0, "chmod 0755");
	CONTROL(syscall(SYS_fchmodat, AT_FDCWD, f, 0750) == 0, "fchmodat 0750");
	CONTROL(syscall(NR_fchmodat2, AT_FDCWD, f, 0755, 0) == 0, "fchmodat2 0755");
	int fd = open(f, O_RDONLY | O_CLOEXEC);
	CONTROL(fd >= 0 && syscall(SYS_fchmod, fd, 0755) == 0, "fchmod 0755");
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		unsigned long m = bits[i];
		char what[64];
		snprintf(what, sizeof(what), "chmod %04lo", m);
		EXPECT_ERRNO(syscall(SYS_chmod, f, m), EPERM, what);
		snprintf(what, sizeof(what), "fchmod %04lo", m);
		EXPECT_ERRNO(syscall(SYS_fchmod, fd, m), EPERM, what);
		snprintf(what, sizeof(what), "fchmodat %04lo", m);
		EXPECT_ERRNO(syscall(SYS_fchmodat, AT_FDCWD, f, m), EPERM, what);
		snprintf(what, sizeof(what), "fchmodat2 %04lo", m);
		EXPECT_ERRNO(syscall(NR_fchmodat2, AT_FDCWD, f, m, 0), EPERM, what);
	}
	/* The mode is a umode_t: high bits must not carry the setuid bit past. */
	EXPECT_ERRNO(syscall(SYS_chmod, f, (1UL << 32) | 04755), EPERM, "chmod 04755 with high bits");
	close(fd);
	if (!no_id_bits(f))
		result(1, "%s has a setuid/setgid bit", f);

	/* Creating calls. */
	fd = (int)syscall(SYS_creat, g, 0755);
	CONTROL(fd >= 0 && close(fd) == 0 && unlink(g) == 0, "creat 0755");
	EXPECT_ERRNO(syscall(SYS_creat, g, 04755), EPERM, "creat 04755");
	EXPECT_ERRNO(syscall(SYS_creat, g, 02755), EPERM, "creat 02755");
	CONTROL(syscall(SYS_mknod, g, S_IFREG | 0755, 0) == 0 && unlink(g) == 0, "mknod 0755");
	EXPECT_ERRNO(syscall(SYS_mknod, g, S_IFREG | 04755, 0), EPERM, "mknod 04755");
	EXPECT_ERRNO(syscall(SYS_mknod, g, S_IFREG | 02755, 0), EPERM, "mknod 02755");
	CONTROL(syscall(SYS_mknodat, AT_FDCWD, g, S_IFREG | 0755, 0) == 0 && unlink(g) == 0,
		"mknodat 0755");
	EXPECT_ERRNO(syscall(SYS_mknodat, AT_FDCWD, g, S_IFREG | 04755, 0), EPERM, "mknodat 04755");
	EXPECT_ERRNO(syscall(SYS_mknodat, AT_FDCWD, g, S_IFREG | 02755, 0), EPERM, "mknodat 02755");
	fd = (int)syscall(SYS_open, g, O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
	CONTROL(fd >= 0 && close(fd) == 0 && unlink(g) == 0, "open(O_CREAT) 0755");
	EXPECT_ERRNO(syscall(SYS_open, g, O_WRONLY | O_CREAT | O_CLOEXEC, 04755), EPERM,
		     "open(O_CREAT) 04755");
	EXPECT_ERRNO(syscall(SYS_open, g, O_WRONLY | O_CREAT | O_CLOEXEC, 02755), EPERM,
		     "open(O_CREAT) 02755");
	fd = (int)syscall(SYS_openat, AT_FDCWD, g, O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
	CONTROL(fd >= 0 && close(fd) == 0 && unlink(g) == 0, "openat(O_CREAT) 0755");
	EXPECT_ERRNO(syscall(SYS_openat, AT_FDCWD, g, O_WRONLY | O_CREAT | O_CLOEXEC, 04755), EPERM,
		     "openat(O_CREAT) 04755");
	EXPECT_ERRNO(syscall(SYS_openat, AT_FDCWD, g, O_WRONLY | O_CREAT | O_CLOEXEC, 02755), EPERM,
		     "openat(O_CREAT) 02755");
	/* O_TMPFILE creates with a mode too (linkat then names the file). */
	fd = (int)syscall(SYS_openat, AT_FDCWD, dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0755);
	CONTROL(fd >= 0 && close(fd) == 0, "openat(O_TMPFILE) 0755");
	EXPECT_ERRNO(syscall(SYS_openat, AT_FDCWD, dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 04755),
		     EPERM, "openat(O_TMPFILE) 04755");
	EXPECT_ERRNO(syscall(SYS_open, dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 02755), EPERM,
		     "open(O_TMPFILE) 02755");
	if (!no_id_bits(g))
		result(1, "%s has a setuid/setgid bit", g);

	/* Without O_CREAT the mode argument is junk and counts for nothing; O_NONBLOCK
	 * (04000, the value of S_ISUID) in openat's flags is not a mode. */
	fd = (int)syscall(SYS_open, f, O_RDONLY | O_CLOEXEC, 06755);
	CONTROL(fd >= 0 && close(fd) == 0, "open without O_CREAT, a junk mode 06755");
	fd = (int)syscall(SYS_openat, AT_FDCWD, f, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 06755);
	CONTROL(fd >= 0 && close(fd) == 0, "openat(O_NONBLOCK) without O_CREAT, a junk mode");
	fd = (int)syscall(SYS_openat, AT_FDCWD, g, O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644);
	CONTROL(fd >= 0 && close(fd) == 0 && unlink(g) == 0, "openat(O_CREAT|O_NONBLOCK) 0644");

	/* chmod g+s on a directory: refused as well. */
	char d[4096];
	snprintf(d, sizeof(d), "%s/setid-dir", dir);
	rmdir(d);
	CONTROL(mkdir(d, 0755) == 0 && chmod(d, 0750) == 0, "mkdir, chmod 0750 of a directory");
	EXPECT_ERRNO(syscall(SYS_fchmodat, AT_FDCWD, d, 02755), EPERM, "chmod g+s of a directory");
	if (!no_id_bits(d))
		result(1, "%s is setgid", d);
	rmdir(d), unlink(f);

	result(0, "setuid/setgid modes: EPERM (chmod fchmod fchmodat fchmodat2 creat mknod mknodat "
		  "open openat, O_TMPFILE, g+s on a directory)");
}

/* openat2: its mode is in memory the filter cannot read; ENOSYS, callers fall
 * back to openat. dir: a writable directory. */
static void
openat2_case(const char *dir)
{
	char g[4096];
	snprintf(g, sizeof(g), "%s/openat2-new", dir);
	unlink(g);
	int fd = (int)syscall(SYS_openat, AT_FDCWD, g, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	CONTROL(fd >= 0 && close(fd) == 0 && unlink(g) == 0, "openat(O_CREAT) 0644");
	struct {
		uint64_t flags, mode, resolve;
	} how = {.flags = O_WRONLY | O_CREAT | O_CLOEXEC, .mode = 04755};
	EXPECT_ERRNO(syscall(NR_openat2, AT_FDCWD, g, &how, sizeof(how)), ENOSYS, "openat2 04755");
	how.mode = 0644;
	EXPECT_ERRNO(syscall(NR_openat2, AT_FDCWD, g, &how, sizeof(how)), ENOSYS, "openat2 0644");
	if (!no_id_bits(g))
		result(1, "%s has a setuid/setgid bit", g);
	unlink(g);
	result(0, "openat2: ENOSYS");
}

/* TIOCSETD: EPERM (TIOCGETD works). */
static void
ldisc_case(void)
{
	int m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	CONTROL(m >= 0, "open /dev/ptmx");
	int unlock = 0;
	CONTROL(ioctl(m, TIOCSPTLCK, &unlock) == 0, "unlockpt");
	int s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	CONTROL(s >= 0, "open the pty slave");
	int ldisc = -1;
	CONTROL(ioctl(s, TIOCGETD, &ldisc) == 0 && ldisc == 0, "TIOCGETD (N_TTY)");
	int ntty = 0; /* N_TTY: no privilege needed, so only the filter can refuse it */
	EXPECT_ERRNO(ioctl(s, TIOCSETD, &ntty), EPERM, "TIOCSETD");
	EXPECT_ERRNO(syscall(SYS_ioctl, s, (1UL << 32) | TIOCSETD, &ntty), EPERM,
		     "TIOCSETD with high bits");
	result(0, "TIOCSETD (also with high bits): EPERM; TIOCGETD works");
}

/* memfd_secret: EPERM (memfd_create works). */
static void
memfd_secret_case(void)
{
	int mfd = (int)syscall(SYS_memfd_create, "ctl", MFD_CLOEXEC);
	CONTROL(mfd >= 0 && close(mfd) == 0, "memfd_create");
	EXPECT_ERRNO(syscall(NR_memfd_secret, 0), EPERM, "memfd_secret");
	result(0, "memfd_secret: EPERM");
}

/* UDP-Lite and MPTCP sockets: EPERM (UDP and TCP work), AF_INET and AF_INET6. */
static void
inet_protocols_case(void)
{
	static const int fams[] = {AF_INET, AF_INET6};
	for (size_t i = 0; i < 2; i++) {
		const char *fam = fams[i] == AF_INET ? "AF_INET" : "AF_INET6";
		char what[64];
		int u = socket(fams[i], SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
		snprintf(what, sizeof(what), "%s UDP socket", fam);
		CONTROL(u >= 0 && close(u) == 0, what);
		int t = socket(fams[i], SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
		snprintf(what, sizeof(what), "%s TCP socket", fam);
		CONTROL(t >= 0 && close(t) == 0, what);
		snprintf(what, sizeof(what), "%s IPPROTO_UDPLITE", fam);
		EXPECT_ERRNO(socket(fams[i], SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDPLITE), EPERM, what);
		snprintf(what, sizeof(what), "%s IPPROTO_MPTCP", fam);
		EXPECT_ERRNO(socket(fams[i], SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_MPTCP), EPERM, what);
		snprintf(what, sizeof(what), "%s IPPROTO_UDPLITE with high bits", fam);
		EXPECT_ERRNO(syscall(SYS_socket, fams[i], SOCK_DGRAM, (1UL << 32) | IPPROTO_UDPLITE),
			     EPERM, what);
	}
	result(0, "UDP-Lite and MPTCP sockets (AF_INET, AF_INET6): EPERM; UDP and TCP work");
}

/* opendir must fail with `want`. */
static void
expect_opendir_errno(const char *path, int want)
{
	errno = 0;
	DIR *d = opendir(path);
	if (d)
		result(1, "opendir %s succeeded", path);
	if (errno != want)
		result(1, "opendir %s: %s (expected %s)", path, strerror(errno), strerror(want));
}

/* /proc/kallsyms and /proc/config.gz (when `config` is "config": the host
 * kernel has it) are masked: EACCES. */
static void
proc_kernel_case(const char *config)
{
	CONTROL(read_ok("/proc/version") && read_ok("/proc/self/status"), "read /proc/version");
	EXPECT_ERRNO(open("/proc/kallsyms", O_RDONLY | O_CLOEXEC), EACCES, "/proc/kallsyms");
	if (!strcmp(config, "config"))
		EXPECT_ERRNO(open("/proc/config.gz", O_RDONLY | O_CLOEXEC), EACCES, "/proc/config.gz");
	result(0, "/proc/kallsyms%s: EACCES", !strcmp(config, "config") ? ", /proc/config.gz" : "");
}

/* PID 1's fd tables, environment and map_files, under both spellings: EACCES;
 * our own stay readable. */
static void
proc_pid1_case(void)
{
	DIR *d = opendir("/proc/self/fd");
	CONTROL(d != NULL && readdir(d) != NULL, "list /proc/self/fd");
	closedir(d);
	CONTROL(read_ok("/proc/self/environ"), "read /proc/self/environ");
	CONTROL(read_ok("/proc/thread-self/environ"), "read /proc/thread-self/environ");
	CONTROL(read_ok("/proc/1/status"), "read /proc/1/status");
	expect_opendir_errno("/proc/1/fd", EACCES);
	expect_opendir_errno("/proc/1/fdinfo", EACCES);
	expect_opendir_errno("/proc/1/map_files", EACCES);
	expect_opendir_errno("/proc/1/task/1/fd", EACCES);
	expect_opendir_errno("/proc/1/task/1/fdinfo", EACCES);
	EXPECT_ERRNO(open("/proc/1/environ", O_RDONLY | O_CLOEXEC), EACCES, "/proc/1/environ");
	EXPECT_ERRNO(open("/proc/1/task/1/environ", O_RDONLY | O_CLOEXEC), EACCES,
		     "/proc/1/task/1/environ");
	EXPECT_ERRNO(open("/proc/1/fd/0", O_RDONLY | O_CLOEXEC), EACCES, "/proc/1/fd/0");
	/* The masks stay: no chmod of them (read-only), no unmount (seccomp). */
	EXPECT_ERRNO(chmod("/proc/1/fd", 0755), EROFS, "chmod of the /proc/1/fd mask");
	EXPECT_ERRNO(umount2("/proc/1/fd", MNT_DETACH), EPERM, "umount2 of the /proc/1/fd mask");
	result(0, "/proc/1/{fd,fdinfo,environ,map_files} and task/1: EACCES");
}

int
main(int argc, char **argv)
{
	if (argc < 2)
		result(2, "usage: probe CASE [ARGS]");
	case_name = argv[1];
	const char *c = argv[1];
	const char *a2 = argc > 2 ? argv[2] : "";
	const char *a3 = argc > 3 ? argv[3] : "";
	const char *a4 = argc > 4 ? argv[4] : "";
	int e;

	if (!strcmp(c, "true")) {
		return 0;
	} else if (!strcmp(c, "euid")) {
		printf("%u\n", (unsigned)geteuid());
		return 0;
	} else if (!strcmp(c, "daemon")) { /* a2: ready file; a3: "exit" or "wait" */
		pid_t p = fork();
		if (p == 0) {
			setsid();
			if (fork() == 0) {
				for (;;)
					pause(); /* a double-forked setsid daemon */
			}
			_exit(0);
		}
		waitpid(p, NULL, 0);
		CONTROL(create_ok(a2), "ready file");
		if (!strcmp(a3, "exit"))
			return 0;
		for (;;)
			pause(); /* until a signal ends us */
	} else if (!strcmp(c, "read-outside")) { /* a2: granted file, a3: secret outside */
		CONTROL(read_ok(a2), a2);
		EXPECT_ERRNO(open(a3, O_RDONLY), ENOENT, a3);
		result(0, "open of a path outside every grant: ENOENT");
	} else if (!strcmp(c, "write-ro")) { /* a2: writable dir, a3: file in a read grant */
		char p[4096];
		snprintf(p, sizeof(p), "%s/probe-new", a2);
		CONTROL(create_ok(p), p);
		EXPECT_ERRNO(open(a3, O_WRONLY), EROFS, a3);
		snprintf(p, sizeof(p), "%s.new", a3);
		EXPECT_ERRNO(open(p, O_WRONLY | O_CREAT, 0644), EROFS, p);
		/*
		 * Landlock grants TRUNCATE on a read-only mount (box-trampoline/landlock.c):
		 * it must buy nothing — no truncate(2), no O_TRUNC, no ftruncate of a
		 * descriptor opened for reading — here or in the system runtime.
		 */
		EXPECT_ERRNO(truncate(a3, 0), EROFS, "truncate of a file in a read grant");
		EXPECT_ERRNO(open(a3, O_RDONLY | O_TRUNC), EROFS, "O_TRUNC of a file in a read grant");
		int rfd = open(a3, O_RDONLY | O_CLOEXEC);
		CONTROL(rfd >= 0, "open for reading of a file in a read grant");
		errno = 0;
		if (ftruncate(rfd, 0) == 0)
			result(1, "ftruncate of a descriptor opened for reading succeeded");
		if (errno != EINVAL && errno != EBADF)
			result(1, "ftruncate of a descriptor opened for reading: %s", strerror(errno));
		close(rfd);
		/* (root's file: an owner other than root may be refused by its mode first) */
		errno = 0;
		if (truncate("/usr/bin/env", 0) == 0)
			result(1, "truncate in the system runtime succeeded");
		if (errno != EROFS && !(errno == EACCES && geteuid() != 0))
			result(1, "truncate in the system runtime: %s", strerror(errno));
		struct stat st;
		CONTROL(stat(a3, &st) == 0 && st.st_size > 0, "the read grant's file kept its bytes");
		result(0, "write into a read grant: EROFS");
	} else if (!strcmp(c, "deny")) { /* a2: plain file, a3: masked file, a4: masked dir */
		char tmp[4096], tmp2[4096];
		CONTROL(read_ok(a2), a2);
		snprintf(tmp, sizeof(tmp), "%s.moved", a2);
		CONTROL(rename(a2, tmp) == 0 && rename(tmp, a2) == 0, "rename of a plain file");
		snprintf(tmp2, sizeof(tmp2), "%s.link", a2);
		CONTROL(link(a2, tmp2) == 0 && unlink(tmp2) == 0, "link of a plain file");
		EXPECT_ERRNO(open(a3, O_RDONLY), EACCES, "open of the mask");
		EXPECT_ERRNO(open(a3, O_WRONLY), EACCES, "open for writing of the mask");
		if (*a4) {
			DIR *d = opendir(a4);
			if (d)
				result(1, "opendir of the masked directory succeeded");
			if (errno != EACCES)
				result(1, "opendir of the masked directory: %s", strerror(errno));
			EXPECT_ERRNO(rmdir(a4), EBUSY, "rmdir of the masked directory");
		}
		snprintf(tmp, sizeof(tmp), "%s.away", a3);
		EXPECT_ERRNO(rename(a3, tmp), EBUSY, "rename of the mask");
		EXPECT_ERRNO(rename(a2, a3), EBUSY, "rename onto the mask");
		EXPECT_ERRNO(unlink(a3), EBUSY, "unlink of the mask");
		EXPECT_ERRNO(link(a3, tmp), EXDEV, "link to the mask");
		result(0, "mask: EACCES / EBUSY / EXDEV");
	} else if (!strcmp(c, "deny-parent")) { /* a2: dir containing a mask, a3: plain dir */
		char tmp[4096];
		snprintf(tmp, sizeof(tmp), "%s.moved", a3);
		CONTROL(rename(a3, tmp) == 0 && rename(tmp, a3) == 0, "rename of a plain dir");
		snprintf(tmp, sizeof(tmp), "%s.moved", a2);
		EXPECT_ERRNO(rename(a2, tmp), EBUSY, "rename of a directory holding a mask");
		result(0, "directories above a mask cannot be renamed: EBUSY");
	} else if (!strcmp(c, "symlink-secret")) { /* a2: workspace, a3: secret outside */
		char l[4096], ok[4096];
		snprintf(ok, sizeof(ok), "%s/plain", a2);
		CONTROL(create_ok(ok), ok);
		snprintf(l, sizeof(l), "%s/link-ok", a2);
		unlink(l);
		CONTROL(symlink(ok, l) == 0 && read_ok(l), "symlink inside the workspace");
		snprintf(l, sizeof(l), "%s/link-secret", a2);
		unlink(l);
		CONTROL(symlink(a3, l) == 0, "creating a symlink");
		EXPECT_ERRNO(open(l, O_RDONLY), ENOENT, "open through a symlink to the secret");
		snprintf(l, sizeof(l), "%s/hard-secret", a2);
		EXPECT_ERRNO(link(a3, l), ENOENT, "hard link to the secret");
		result(0, "symlink and hard link to a secret outside: ENOENT");
	} else if (!strcmp(c, "exec")) { /* a2: self (exec grant), a3: copy in a read grant, a4: workspace */
		char *ok[] = {(char *)a2, "true", NULL};
		int st = run(ok, &e);
		CONTROL(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exec of the probe in an exec grant");
		char *ro[] = {(char *)a3, "true", NULL};
		st = run(ro, &e);
		if (e != EACCES)
			result(1, "exec of a binary in a read grant: %s", e ? strerror(e) : "ran");
		/* A copy of ourselves in the writable workspace. */
		char copy[4096];
		snprintf(copy, sizeof(copy), "%s/copied-probe", a4);
		int in = open(a2, O_RDONLY | O_CLOEXEC);
		int out = open(copy, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
		CONTROL(in >= 0 && out >= 0, "copying the probe");
		char buf[65536];
		ssize_t n;
		while ((n = read(in, buf, sizeof(buf))) > 0)
			CONTROL(write(out, buf, (size_t)n) == n, "write");
		close(in), close(out);
		char *wv[] = {copy, "true", NULL};
		run(wv, &e);
		if (e != EACCES)
			result(1, "exec of a copy in the workspace: %s", e ? strerror(e) : "ran");
		result(0, "execve outside exec grants: EACCES");
	} else if (!strcmp(c, "execlist")) { /* a2: self (exec entry), a3: a dynamic exec entry */
		/* exec_system = false: execve reaches the exec entries (and the loader) only. */
		char *ok[] = {(char *)a2, "true", NULL};
		int st = run(ok, &e);
		CONTROL(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exec of the probe, an exec entry");
		/* Its shared libraries map without EXECUTE (Landlock checks execve, not mmap). */
		char *dyn[] = {(char *)a3, NULL};
		st = run(dyn, &e);
		CONTROL(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exec of a dynamic exec entry");
		char *sys[] = {"/usr/bin/true", NULL};
		run(sys, &e);
		if (e != EACCES)
			result(1, "execve of /usr/bin/true: %s", e ? strerror(e) : "ran");
		result(0, "execve of a system program outside the exec list: EACCES");
	} else if (!strcmp(c, "memfd-proc")) { /* a2: self */
		/* A memfd run through /proc/self/fd/N: Landlock cannot see it; vm.memfd_noexec = 2 can. */
		char *ok[] = {(char *)a2, "true", NULL};
		int st = run(ok, &e);
		CONTROL(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exec of the probe");
		int in = open(a2, O_RDONLY | O_CLOEXEC);
		int m = (int)syscall(SYS_memfd_create, "x", 0);
		if (m < 0 && (errno == EACCES || errno == EINVAL))
			result(0, "memfd_create without MFD_NOEXEC_SEAL refused (vm.memfd_noexec = 2)");
		CONTROL(in >= 0 && m >= 0, "memfd_create");
		char buf[65536];
		ssize_t n;
		while ((n = read(in, buf, sizeof(buf))) > 0)
			CONTROL(write(m, buf, (size_t)n) == n, "write");
		close(in);
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/fd/%d", m);
		char *mv[] = {path, "true", NULL};
		st = run(mv, &e);
		if (!e)
			result(1, "a memfd ran through %s", path);
		if (e != EACCES)
			result(1, "a memfd through /proc/self/fd: %s (want EACCES)", strerror(e));
		result(0, "a memfd run through /proc/self/fd/N: EACCES");
	} else if (!strcmp(c, "ldso")) { /* a2: workspace */
		const char *ld = "/lib64/ld-linux-x86-64.so.2";
		char *ok[] = {(char *)ld, "/bin/true", NULL};
		int st = run(ok, &e);
		CONTROL(WIFEXITED(st) && WEXITSTATUS(st) == 0, "ld.so /bin/true");
		char copy[4096];
		snprintf(copy, sizeof(copy), "%s/copied-true", a2);
		int in = open("/bin/true", O_RDONLY | O_CLOEXEC);
		int out = open(copy, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
		CONTROL(in >= 0 && out >= 0, "copying /bin/true");
		char buf[65536];
		ssize_t n;
		while ((n = read(in, buf, sizeof(buf))) > 0)
			CONTROL(write(out, buf, (size_t)n) == n, "write");
		close(in), close(out);
		char *bad[] = {(char *)ld, copy, NULL};
		st = run(bad, &e);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			result(1, "ld.so ran a copy in the noexec workspace");
		result(0, "ld.so on a copy in the workspace: the loader fails to map it");
	} else if (!strcmp(c, "proc")) { /* a2: a host pid */
		DIR *d = opendir("/proc");
		CONTROL(d != NULL, "opendir /proc");
		int n = 0, max = 0;
		struct dirent *de;
		while ((de = readdir(d))) {
			int pid = atoi(de->d_name);
			if (pid > 0) {
				n++;
				max = pid > max ? pid : max;
			}
		}
		closedir(d);
		CONTROL(n >= 2, "/proc lists PID 1 and the probe");
		if (n > 4 || max > 64)
			result(1, "/proc shows %d processes (max pid %d)", n, max);
		char p[64];
		snprintf(p, sizeof(p), "/proc/%s/status", a2);
		if (atoi(a2) > 64)
			EXPECT_ERRNO(open(p, O_RDONLY), ENOENT, p);
		CONTROL(read_ok("/proc/sys/kernel/core_pattern"), "read core_pattern");
		/* As root EROFS (the bind is read-only); as another owner DAC answers first. */
		int want = geteuid() == 0 ? EROFS : EACCES;
		EXPECT_ERRNO(open("/proc/sys/kernel/core_pattern", O_WRONLY), want, "core_pattern");
		EXPECT_ERRNO(open("/proc/sys/kernel/hostname", O_WRONLY), want, "kernel.hostname");
		EXPECT_ERRNO(open("/proc/sys/vm/memfd_noexec", O_WRONLY), want, "vm.memfd_noexec");
		result(0, "/proc: only the box's processes, /proc/sys read-only (EROFS)");
	} else if (!strcmp(c, "kill")) { /* a2: a host pid */
		pid_t host = atoi(a2);
		CONTROL(kill(getpid(), 0) == 0, "kill(self, 0)");
		EXPECT_ERRNO(kill(host, SIGKILL), ESRCH, "kill of a host pid");
		EXPECT_ERRNO(syscall(SYS_pidfd_open, host, 0), ESRCH, "pidfd_open of a host pid");
		EXPECT_ERRNO(ptrace(PTRACE_ATTACH, host, 0, 0), EPERM, "ptrace of a host pid");
		result(0, "kill/pidfd_open a host pid: ESRCH; ptrace: EPERM");
	} else if (!strcmp(c, "namespaces")) {
		CONTROL(unshare(CLONE_FILES) == 0, "unshare(CLONE_FILES)");
		int nsfd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
		CONTROL(nsfd >= 0, "open /proc/self/ns/user");
		EXPECT_ERRNO(unshare(CLONE_NEWUSER), EPERM, "unshare(CLONE_NEWUSER)");
		EXPECT_ERRNO(syscall(SYS_unshare, (1UL << 32) | CLONE_NEWUSER), EPERM,
			     "unshare(CLONE_NEWUSER with high bits)");
		EXPECT_ERRNO(unshare(CLONE_NEWNS), EPERM, "unshare(CLONE_NEWNS)");
		EXPECT_ERRNO(unshare(CLONE_NEWNET), EPERM, "unshare(CLONE_NEWNET)");
		EXPECT_ERRNO(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0), EPERM,
			     "clone(CLONE_NEWUSER)");
		EXPECT_ERRNO(syscall(435, NULL, 0), ENOSYS, "clone3");
		EXPECT_ERRNO(setns(nsfd, 0), EPERM, "setns");
		EXPECT_ERRNO(mount("none", "/tmp", "tmpfs", 0, NULL), EPERM, "mount");
		EXPECT_ERRNO(umount2("/tmp", MNT_DETACH), EPERM, "umount2");
		EXPECT_ERRNO(syscall(SYS_pivot_root, "/tmp", "/tmp"), EPERM, "pivot_root");
		EXPECT_ERRNO(syscall(428, AT_FDCWD, "/tmp", 1), EPERM, "open_tree");
		EXPECT_ERRNO(syscall(430, "tmpfs", 0), EPERM, "fsopen");
		result(0, "mount, unshare, clone, setns, pivot_root: EPERM; clone3: ENOSYS");
	} else if (!strcmp(c, "syscalls")) {
		CONTROL(getpid() > 0, "getpid");
		struct {
			uint32_t sq_entries, cq_entries, flags, sq_thread_cpu, sq_thread_idle,
				features, wq_fd, resv[3];
			uint64_t off[10];
		} params;
		memset(&params, 0, sizeof(params));
		EXPECT_ERRNO(syscall(425, 8, &params), EPERM, "io_uring_setup");
		EXPECT_ERRNO(syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0), EPERM, "keyctl");
		EXPECT_ERRNO(syscall(SYS_add_key, "user", "box", "x", 1, -3), EPERM, "add_key");
		union bpf_attr attr;
		memset(&attr, 0, sizeof(attr));
		EXPECT_ERRNO(syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr)), EPERM, "bpf");
		struct perf_event_attr pe;
		memset(&pe, 0, sizeof(pe));
		pe.size = sizeof(pe);
		pe.type = PERF_TYPE_SOFTWARE;
		pe.config = PERF_COUNT_SW_CPU_CLOCK;
		EXPECT_ERRNO(syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0), EPERM, "perf_event_open");
		EXPECT_ERRNO(syscall(SYS_userfaultfd, 0), EPERM, "userfaultfd");
		EXPECT_ERRNO(syscall(SYS_process_vm_readv, 1, NULL, 0, NULL, 0, 0), EPERM,
			     "process_vm_readv");
		EXPECT_ERRNO(syscall(SYS_personality, 0x0040000 /* READ_IMPLIES_EXEC */), EPERM,
			     "personality(READ_IMPLIES_EXEC)");
		CONTROL(syscall(SYS_personality, 0xffffffff) >= 0, "personality query");
		result(0, "io_uring, keyctl, add_key, bpf, perf_event_open, userfaultfd: EPERM");
	} else if (!strcmp(c, "tty")) {
		int m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
		CONTROL(m >= 0, "open /dev/ptmx");
		int unlock = 0;
		CONTROL(ioctl(m, TIOCSPTLCK, &unlock) == 0, "unlockpt");
		int s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
		CONTROL(s >= 0, "open the pty slave");
		struct winsize ws;
		CONTROL(ioctl(s, TIOCGWINSZ, &ws) == 0, "TIOCGWINSZ");
		char ch = 'x';
		EXPECT_ERRNO(ioctl(s, TIOCSTI, &ch), EPERM, "TIOCSTI");
		EXPECT_ERRNO(syscall(SYS_ioctl, s, (1UL << 32) | TIOCSTI, &ch), EPERM,
			     "TIOCSTI with high bits");
		char sub = 12;
		EXPECT_ERRNO(ioctl(s, TIOCLINUX, &sub), EPERM, "TIOCLINUX");
		result(0, "TIOCSTI (also with high bits), TIOCLINUX: EPERM");
	} else if (!strcmp(c, "pty")) {
		CONTROL(isatty(0) && isatty(1), "stdin/stdout are a terminal");
		const char *n = ttyname(0);
		CONTROL(n && strncmp(n, "/dev/pts/", 9) == 0, "ttyname is the box's devpts");
		CONTROL(tcgetpgrp(0) == getpgrp(), "the controlling terminal's foreground group");
		char ch = 'x';
		EXPECT_ERRNO(ioctl(0, TIOCSTI, &ch), EPERM, "TIOCSTI on the box's terminal");
		result(0, "the box's own pty: TIOCSTI EPERM");
	} else if (!strcmp(c, "int80-host")) {
		/* Run outside any box: what does this kernel do with int 0x80 at all? */
		pid_t pid = fork();
		if (pid == 0) {
			long ret;
			__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
			_exit(ret > 0 ? 0 : 4);
		}
		int st;
		waitpid(pid, &st, 0);
		printf("%s\n", WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "ran");
		return 0;
	} else if (!strcmp(c, "int80")) { /* a2: "segv" when the kernel itself refuses int 0x80 */
		pid_t pid = fork();
		if (pid == 0)
			_exit(syscall(SYS_getpid) > 0 ? 0 : 3);
		int st;
		waitpid(pid, &st, 0);
		CONTROL(WIFEXITED(st) && WEXITSTATUS(st) == 0, "native getpid in a child");
		pid = fork();
		if (pid == 0) {
			long ret;
			__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
			_exit(ret > 0 ? 0 : 4);
		}
		waitpid(pid, &st, 0);
		int want = !strcmp(a2, "segv") ? SIGSEGV : SIGSYS;
		if (!WIFSIGNALED(st) || WTERMSIG(st) != want)
			result(1, "i386 int 0x80: status 0x%x, expected %s", st, strsignal(want));
		pid = fork();
		if (pid == 0) {
			syscall(0x40000000 | SYS_getpid);
			_exit(0);
		}
		waitpid(pid, &st, 0);
		if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGSYS)
			result(1, "an x32 syscall was not killed (status 0x%x)", st);
		result(0, "i386 int 0x80 (%s) and x32 (seccomp): killed", strsignal(want));
	} else if (!strcmp(c, "caps")) {
		CONTROL(status_field("NoNewPrivs") >= 0, "read /proc/self/status");
		static const char *const f[] = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"};
		for (size_t i = 0; i < 5; i++)
			if (!status_field_zero(f[i]))
				result(1, "%s is not zero", f[i]);
		if (status_field("NoNewPrivs") != 1)
			result(1, "no_new_privs is not set");
		if (status_field("Seccomp") != 2 && strcmp(a2, "no-seccomp") != 0)
			result(1, "seccomp filter mode is not on");
		result(0, "capability sets all zero, no_new_privs 1, seccomp 2");
	} else if (!strcmp(c, "setuid")) { /* a2: self, a3: setuid copy owned by another user */
		char *ok[] = {(char *)a2, "true", NULL};
		int st = run(ok, &e);
		CONTROL(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exec of the probe");
		struct stat sb;
		CONTROL(stat(a3, &sb) == 0 && (sb.st_mode & S_ISUID), "the setuid copy is there");
		int p[2];
		CONTROL(pipe(p) == 0, "pipe");
		pid_t pid = fork();
		if (pid == 0) {
			dup2(p[1], 1);
			char *v[] = {(char *)a3, "euid", NULL};
			execve(a3, v, environ);
			_exit(127);
		}
		close(p[1]);
		char buf[32] = {0};
		ssize_t n = read(p[0], buf, sizeof(buf) - 1);
		waitpid(pid, &st, 0);
		CONTROL(n > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "exec of the setuid copy");
		if ((uid_t)atoi(buf) != geteuid())
			result(1, "the setuid binary ran with euid %s", buf);
		result(0, "a setuid binary gives nothing (euid unchanged)");
	} else if (!strcmp(c, "net")) { /* a2: a host loopback port with a listener */
		control_loopback();
		EXPECT_ERRNO(tcp_connect("1.1.1.1", 443), ENETUNREACH, "TCP connect to 1.1.1.1:443");
		int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		CONTROL(u >= 0, "UDP socket");
		struct sockaddr_in dns = {.sin_family = AF_INET, .sin_port = htons(53)};
		inet_pton(AF_INET, "8.8.8.8", &dns.sin_addr);
		EXPECT_ERRNO(sendto(u, "x", 1, 0, (struct sockaddr *)&dns, sizeof(dns)), ENETUNREACH,
			     "UDP to 8.8.8.8:53");
		if (*a2)
			EXPECT_ERRNO(tcp_connect("127.0.0.1", (uint16_t)atoi(a2)), ECONNREFUSED,
				     "TCP to a host loopback port");
		result(0, "public TCP/UDP: ENETUNREACH; host loopback: ECONNREFUSED");
	} else if (!strcmp(c, "sockets")) {
		int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
		CONTROL(s >= 0, "AF_NETLINK NETLINK_ROUTE");
		close(s);
		s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		CONTROL(s >= 0, "AF_UNIX");
		close(s);
		s = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		CONTROL(s >= 0, "AF_INET6 datagram");
		close(s);
		EXPECT_ERRNO(socket(AF_PACKET, SOCK_RAW, 0), EPERM, "AF_PACKET");
		EXPECT_ERRNO(socket(AF_VSOCK, SOCK_STREAM, 0), EPERM, "AF_VSOCK");
		EXPECT_ERRNO(socket(AF_NETLINK, SOCK_RAW, 9 /* NETLINK_AUDIT */), EPERM,
			     "AF_NETLINK audit");
		EXPECT_ERRNO(socket(AF_NETLINK, SOCK_RAW, 4 /* NETLINK_SOCK_DIAG */), EPERM,
			     "AF_NETLINK sock_diag");
		EXPECT_ERRNO(socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, 1), EPERM, "AF_INET SOCK_RAW");
		EXPECT_ERRNO(syscall(SYS_socket, (1UL << 32) | AF_PACKET, SOCK_RAW, 0), EPERM,
			     "AF_PACKET with high bits");
		EXPECT_ERRNO(syscall(SYS_socket, AF_NETLINK, SOCK_RAW, (1UL << 32) | 9), EPERM,
			     "NETLINK_AUDIT with high bits");
		EXPECT_ERRNO(socket(200, SOCK_STREAM, 0), EPERM, "family >= AF_MAX");
		result(0, "AF_PACKET, AF_VSOCK, non-route netlink, SOCK_RAW: EPERM");
	} else if (!strcmp(c, "unix")) { /* a2: host abstract name, a3: host pathname socket */
		char path[108];
		snprintf(path, sizeof(path), "/tmp/probe-%d.sock", getpid());
		int l = unix_listen(path, false);
		CONTROL(l >= 0 && unix_connect(path, false) == 0, "in-box pathname socket");
		close(l);
		unlink(path);
		char abs[64];
		snprintf(abs, sizeof(abs), "probe-%d", getpid());
		l = unix_listen(abs, true);
		CONTROL(l >= 0 && unix_connect(abs, true) == 0, "in-box abstract socket");
		close(l);
		EXPECT_ERRNO(unix_connect(a2, true), ECONNREFUSED, "host abstract socket");
		EXPECT_ERRNO(unix_connect(a3, false), ENOENT, "host pathname socket");
		EXPECT_ERRNO(unix_connect("/run/dbus/system_bus_socket", false), ENOENT,
			     "/run/dbus/system_bus_socket");
		result(0, "host abstract socket: ECONNREFUSED; host pathname sockets: ENOENT");
	} else if (!strcmp(c, "fds")) { /* a2: the leaked fd number */
		CONTROL(fcntl(0, F_GETFD) >= 0 && fcntl(1, F_GETFD) >= 0 && fcntl(2, F_GETFD) >= 0,
			"fds 0, 1, 2");
		EXPECT_ERRNO(fcntl(atoi(a2), F_GETFD), EBADF, "the leaked fd");
		for (int fd = 3; fd < 1024; fd++)
			if (fcntl(fd, F_GETFD) >= 0)
				result(1, "fd %d is open", fd);
		result(0, "only fds 0, 1, 2 (the leaked fd is closed)");
	} else if (!strcmp(c, "env")) { /* args: the exact expected environment */
		CONTROL(getenv("PATH") != NULL, "PATH is set");
		int n = 0;
		for (char **ep = environ; *ep; ep++) {
			bool found = false;
			for (int i = 2; i < argc; i++)
				if (!strcmp(*ep, argv[i]))
					found = true;
			if (!found)
				result(1, "unexpected variable %s", *ep);
			n++;
		}
		if (n != argc - 2)
			result(1, "%d variables, expected %d", n, argc - 2);
		result(0, "exactly the composed environment (%d variables)", n);
	} else if (!strcmp(c, "dev")) {
		static const char *const allowed[] = {".",	"..",	   "null",   "zero",  "full",
						      "random", "urandom", "tty",    "pts",   "ptmx",
						      "shm",	"fd",	   "stdin",  "stdout", "stderr"};
		int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		CONTROL(fd >= 0 && write(fd, "x", 1) == 1, "write /dev/null");
		close(fd);
		CONTROL(read_ok("/dev/urandom"), "read /dev/urandom");
		DIR *d = opendir("/dev");
		CONTROL(d != NULL, "opendir /dev");
		struct dirent *de;
		while ((de = readdir(d))) {
			bool ok = false;
			for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
				if (!strcmp(de->d_name, allowed[i]))
					ok = true;
			if (!ok)
				result(1, "/dev/%s exists", de->d_name);
		}
		closedir(d);
		EXPECT_ERRNO(open("/dev/mem", O_RDONLY), ENOENT, "/dev/mem");
		EXPECT_ERRNO(open("/dev/vda", O_RDONLY), ENOENT, "/dev/vda");
		/* Landlock never grants MAKE_CHAR (EACCES); without it, no CAP_MKNOD (EPERM). */
		errno = 0;
		if (mknod("/tmp/probe-null", S_IFCHR | 0666, makedev(1, 3)) == 0)
			result(1, "mknod of a device succeeded");
		if (errno != EACCES && errno != EPERM)
			result(1, "mknod of a device: %s", strerror(errno));
		result(0, "only the minimal device set");
	} else if (!strcmp(c, "landlock-ioctl")) {
		int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
		CONTROL(fd >= 0, "open /dev/urandom");
		int cnt;
		CONTROL(ioctl(fd, FIOCLEX) == 0, "FIOCLEX (always allowed)");
		int m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
		int unlock = 0;
		CONTROL(m >= 0 && ioctl(m, TIOCSPTLCK, &unlock) == 0, "unlockpt on /dev/ptmx");
		int sl = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
		struct winsize wsz;
		CONTROL(sl >= 0 && ioctl(sl, TIOCGWINSZ, &wsz) == 0, "TIOCGWINSZ on /dev/pts");
		EXPECT_ERRNO(ioctl(fd, RNDGETENTCNT, &cnt), EACCES,
			     "RNDGETENTCNT without LANDLOCK_ACCESS_FS_IOCTL_DEV");
		result(0, "Landlock: device ioctl outside /dev/tty and /dev/pts: EACCES");
	} else if (!strcmp(c, "rename-xdir")) { /* a2: workspace; a3: expected errno or "ok" */
		char d1[4096], d2[4096], f1[4096], f2[4096];
		snprintf(d1, sizeof(d1), "%s/xd1", a2);
		snprintf(d2, sizeof(d2), "%s/xd2", a2);
		mkdir(d1, 0755), mkdir(d2, 0755);
		snprintf(f1, sizeof(f1), "%s/f", d1);
		snprintf(f2, sizeof(f2), "%s/g", d1);
		CONTROL(create_ok(f1) && rename(f1, f2) == 0, "rename inside one directory");
		snprintf(f1, sizeof(f1), "%s/f", d2);
		if (!strcmp(a3, "EXDEV")) {
			EXPECT_ERRNO(rename(f2, f1), EXDEV, "rename across directories (ABI 1)");
			result(0, "Landlock ABI 1: rename across directories EXDEV");
		}
		CONTROL(rename(f2, f1) == 0, "rename across directories (REFER)");
		result(0, "rename across directories works with REFER");
	} else if (!strcmp(c, "forkbomb")) { /* a2: pids_max */
		int max = atoi(a2);
		pid_t kids[4096];
		int n = 0;
		for (int i = 0; i < 3; i++) {
			pid_t p = fork();
			if (p == 0) {
				pause();
				_exit(0);
			}
			CONTROL(p > 0, "fork of 3 children");
			kids[n++] = p;
		}
		int err = 0;
		while (n < 4096) {
			pid_t p = fork();
			if (p == 0) {
				pause();
				_exit(0);
			}
			if (p < 0) {
				err = errno;
				break;
			}
			kids[n++] = p;
		}
		for (int i = 0; i < n; i++)
			kill(kids[i], SIGKILL);
		while (wait(NULL) > 0)
			;
		if (err != EAGAIN)
			result(1, "fork stopped with %s after %d children", strerror(err), n);
		if (n > max)
			result(1, "%d children with pids_max %d", n, max);
		result(0, "fork past pids_max: EAGAIN after %d children", n);
	} else if (!strcmp(c, "setid")) { /* a2: a writable directory */
		setid_case(a2);
	} else if (!strcmp(c, "openat2")) { /* a2: a writable directory */
		openat2_case(a2);
	} else if (!strcmp(c, "ldisc")) {
		ldisc_case();
	} else if (!strcmp(c, "memfd-secret")) {
		memfd_secret_case();
	} else if (!strcmp(c, "inet-protocols")) {
		inet_protocols_case();
	} else if (!strcmp(c, "proc-kernel")) { /* a2: "config" when the host has /proc/config.gz */
		proc_kernel_case(a2);
	} else if (!strcmp(c, "proc-pid1")) {
		proc_pid1_case();
	} else if (!strcmp(c, "memfd")) { /* a2: self */
		char *ok[] = {(char *)a2, "true", NULL};
		int st = run(ok, &e);
		CONTROL(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exec of the probe");
		int m = (int)syscall(SYS_memfd_create, "x", 0);
		CONTROL(m >= 0, "memfd_create");
		if (geteuid() == 0) { /* a root-owned box sets vm.memfd_noexec = 2 for itself */
			char v[8] = {0};
			int fd = open("/proc/sys/vm/memfd_noexec", O_RDONLY | O_CLOEXEC);
			if (fd < 0 || read(fd, v, sizeof(v) - 1) < 1 || v[0] != '2')
				result(1, "vm.memfd_noexec is not 2 in a root-owned box");
			close(fd);
		}
		char *v[] = {"x", "true", NULL};
		EXPECT_ERRNO(syscall(SYS_execveat, m, "", v, environ, AT_EMPTY_PATH), EPERM,
			     "execveat(memfd, AT_EMPTY_PATH)");
		result(0, "fexecve of a memfd: EPERM");
	}
	(void)a4;
	result(2, "unknown case");
}
