/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe.c — the workload of test/integration/t-tramp-shell.sh: runs inside a
 * box-shell (SANDBOX_SHELL), agent or tool sandbox built by box-trampoline
 * and checks one property per run. Exit 0: the property holds; 1: it does
 * not (the reason on stderr); 2: a positive control failed or bad usage.
 * Static (when this host has a static libc) so that it needs nothing from
 * the view.
 *
 *   fds N TOKEN...     exactly fds 0..2+N are open; fd 3+i reads TOKEN i
 *   enoent PATH...     each PATH is not in the view (ENOENT)
 *   self PATH [granted|granted-rw]
 *                      PATH (this binary) is on a read-only, exec-capable mount of
 *                      its own and alone in its directory ("granted": its
 *                      directory is a grant; "granted-rw": a writable one)
 *   landlock DIR       DIR (a write grant) is writable, but Landlock refuses
 *                      writing /proc/self/comm and device ioctls on /dev/null
 *   noexec FILE        execve of FILE (a copy in a grant) fails with EACCES
 *   net                only lo, no route, no socket in /proc/net/tcp{,6}
 *   pidns              own PID namespace: PID 1 and this process only
 *   seccomp            the box filter: Seccomp 2, unshare and mount EPERM
 *   write FILE TEXT    write TEXT to FILE;  read FILE TEXT: FILE holds TEXT
 *   ls DIR NAME...     DIR lists exactly NAME... (sorted); "-": DIR is ENOENT
 *   pipe               print "ready", then each stdin line upper-cased on
 *                      stdout and as "err:LINE" on stderr, until EOF
 *   tty ROWS COLS      fds 0-2 are one terminal of ROWS x COLS, not the controlling
 *                      one (/dev/tty: ENXIO), without a name in this view
 *                      (ttyname); echo off, print "tty ok", read a line,
 *                      print "got LINE"
 *   drop3              close fd 3, print "closed", wait for EOF on stdin
 *   sendtty SOCK       (agent at its pty) connect to SOCK, send fd 0 (SCM_RIGHTS),
 *                      exit 0 when the answer is "ok" — as the alias hands
 *                      box-shell its terminal
 *   recvtty SOCK       (box-shell) listen on SOCK, receive one fd: a terminal it can
 *                      use (TIOCSWINSZ/TIOCGWINSZ, termios, write) but not take
 *                      as its foreground (tcsetpgrp: ENOTTY); answer "ok"
 *   true               exit 0
 * Trusts: its command line; it is test code.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

static int
fail(const char *fmt, const char *a, int e)
{
	fprintf(stderr, "probe: ");
	fprintf(stderr, fmt, a);
	if (e)
		fprintf(stderr, ": %s", strerror(e));
	fprintf(stderr, "\n");
	return 1;
}

static int
control(const char *what, const char *a)
{
	fprintf(stderr, "probe: control failed: %s %s: %s\n", what, a, strerror(errno));
	return 2;
}

/* The open fds of this process, from /proc/self/fd (its own dir fd left out). */
static int
open_fds(int *out, int max)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	int n = 0, self = dirfd(d);
	struct dirent *de;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && atoi(de->d_name) != self && n < max)
			out[n++] = atoi(de->d_name);
	closedir(d);
	return n;
}

static int
cmd_fds(int argc, char **argv)
{
	int want = atoi(argv[0]);
	if (argc != 1 + want)
		return 2;
	int fds[64];
	int n = open_fds(fds, 64);
	if (n < 0)
		return control("opendir", "/proc/self/fd");
	for (int i = 0; i < n; i++)
		if (fds[i] > 2 + want) {
			char b[16];
			snprintf(b, sizeof(b), "%d", fds[i]);
			return fail("fd %s is open and was not passed", b, 0);
		}
	if (n != 3 + want) {
		char b[16];
		snprintf(b, sizeof(b), "%d", n);
		return fail("%s fds open", b, 0);
	}
	for (int i = 0; i < want; i++) {
		int fd = 3 + i;
		int fl = fcntl(fd, F_GETFD);
		if (fl < 0 || (fl & FD_CLOEXEC))
			return fail("fd %s is not open without FD_CLOEXEC", argv[1 + i], 0);
		char buf[256];
		ssize_t r = pread(fd, buf, sizeof(buf) - 1, 0);
		if (r < 0)
			return fail("reading the fd that should carry %s", argv[1 + i], errno);
		buf[r] = '\0';
		if (strcmp(buf, argv[1 + i]) != 0)
			return fail("fd carries '%s', not the expected token", buf, 0);
	}
	return 0;
}

static int
cmd_enoent(int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			return fail("%s is in the view", argv[i], 0);
		if (errno != ENOENT)
			return fail("%s: not ENOENT", argv[i], errno);
	}
	return 0;
}

static int
cmd_self(const char *path, const char *granted)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return control("open", path);
	close(fd);
	/* Its own mount: read-only, nosuid, nodev, but exec-capable (writing it gives
	 * ETXTBSY first, whatever the mount, so the mount flags tell). */
	struct statvfs sv;
	if (statvfs(path, &sv) < 0)
		return control("statvfs", path);
	if (!(sv.f_flag & ST_RDONLY) || !(sv.f_flag & ST_NOSUID) || !(sv.f_flag & ST_NODEV) ||
	    (sv.f_flag & ST_NOEXEC))
		return fail("%s: not on a read-only, nosuid, nodev, exec mount", path, 0);
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 2;
	*slash = '\0';
	if (granted && !strcmp(granted, "granted-rw")) {
		/* The control: the write grant around it is writable. */
		char f[4200];
		snprintf(f, sizeof(f), "%s/rw-ok", dir);
		fd = open(f, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			return control("create", f);
		close(fd);
	}
	if (granted)
		return 0;
	DIR *d = opendir(dir);
	if (!d)
		return control("opendir", dir);
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, slash + 1)) {
			closedir(d);
			return fail("%s is beside the binary in the view", de->d_name, 0);
		}
	closedir(d);
	return 0;
}

static int
cmd_landlock(const char *dir)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/landlock-ok", dir);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "x", 1) != 1)
		return control("write", p);
	close(fd);
	fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return control("open", "/proc/self/comm");
	close(fd);
	/* The owner may rename itself; only Landlock (READ on /proc) says no. */
	fd = open("/proc/self/comm", O_WRONLY | O_CLOEXEC);
	if (fd >= 0)
		return fail("%s opens for writing (no Landlock)", "/proc/self/comm", 0);
	if (errno != EACCES)
		return fail("%s: not EACCES", "/proc/self/comm", errno);
	/* /dev/null: READ_FILE|WRITE_FILE, no IOCTL_DEV (ABI >= 5): EACCES, not ENOTTY. */
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, 1u /* VERSION */);
	if (abi >= 5) {
		fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return control("open", "/dev/null");
		struct termios tio;
		int r = ioctl(fd, TCGETS, &tio);
		int e = errno;
		close(fd);
		if (r == 0 || e != EACCES)
			return fail("%s: TCGETS not refused with EACCES", "/dev/null", r == 0 ? 0 : e);
	}
	return 0;
}

static int
cmd_noexec(const char *file)
{
	char *av[] = {(char *)file, "true", NULL};
	char *ev[] = {NULL};
	execve(file, av, ev);
	if (errno != EACCES)
		return fail("execve %s: not EACCES", file, errno);
	return 0;
}

static int
proc_net_empty(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : control("fopen", path);
	char line[512];
	int lines = 0;
	while (fgets(line, sizeof(line), f))
		lines++;
	fclose(f);
	if (lines > 1)
		return fail("%s lists sockets", path, 0);
	return 0;
}

static int
cmd_net(void)
{
	struct if_nameindex *ifs = if_nameindex();
	if (!ifs)
		return control("if_nameindex", "");
	int n = 0, r = 0;
	for (struct if_nameindex *i = ifs; i->if_index; i++, n++)
		if (strcmp(i->if_name, "lo") != 0)
			r = fail("interface %s", i->if_name, 0);
	if_freenameindex(ifs);
	if (r)
		return r;
	if (n != 1)
		return fail("%s: not exactly one interface", "lo", 0);
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr = {0};
	strcpy(ifr.ifr_name, "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		return control("SIOCGIFFLAGS", "lo");
	close(s);
	if (!(ifr.ifr_flags & IFF_UP))
		return fail("%s is down", "lo", 0);
	/* TEST-NET-1: never routed; inside the box there is no route at all. */
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(80)};
	inet_pton(AF_INET, "192.0.2.1", &sin.sin_addr);
	if (s < 0)
		return control("socket", "");
	if (connect(s, (struct sockaddr *)&sin, sizeof(sin)) == 0 || errno != ENETUNREACH)
		return fail("connect %s: not ENETUNREACH", "192.0.2.1:80", errno);
	close(s);
	/* Loopback works inside (a positive control), and nothing listens there. */
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in lo = {.sin_family = AF_INET};
	lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof(lo);
	if (s < 0 || bind(s, (struct sockaddr *)&lo, sizeof(lo)) < 0 || listen(s, 1) < 0 ||
	    getsockname(s, (struct sockaddr *)&lo, &len) < 0)
		return control("listen", "127.0.0.1:0");
	close(s);
	r = proc_net_empty("/proc/net/tcp");
	return r ? r : proc_net_empty("/proc/net/tcp6");
}

static int
cmd_pidns(void)
{
	if (getppid() != 1)
		return fail("%s: the parent is not PID 1", "getppid", 0);
	DIR *d = opendir("/proc");
	if (!d)
		return control("opendir", "/proc");
	struct dirent *de;
	int self = getpid();
	while ((de = readdir(d))) {
		int pid = atoi(de->d_name);
		if (pid > 0 && pid != 1 && pid != self) {
			closedir(d);
			return fail("process %s is visible", de->d_name, 0);
		}
	}
	closedir(d);
	return 0;
}

static int
cmd_seccomp(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return control("fopen", "/proc/self/status");
	char line[256];
	bool filtered = false;
	while (fgets(line, sizeof(line), f))
		if (strcmp(line, "Seccomp:\t2\n") == 0)
			filtered = true;
	fclose(f);
	if (!filtered)
		return fail("%s: no seccomp filter", "/proc/self/status", 0);
	if (unshare(CLONE_NEWUSER) == 0 || errno != EPERM)
		return fail("%s: not EPERM", "unshare(CLONE_NEWUSER)", errno);
	if (mount("none", "/tmp", "tmpfs", 0, NULL) == 0 || errno != EPERM)
		return fail("%s: not EPERM", "mount", errno);
	return 0;
}

static int
cmd_write(const char *file, const char *text)
{
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return fail("write %s", file, errno);
	close(fd);
	return 0;
}

static int
cmd_read(const char *file, const char *text)
{
	char buf[4096];
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail("open %s", file, errno);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return fail("read %s", file, errno);
	buf[n] = '\0';
	if (strcmp(buf, text) != 0)
		return fail("%s holds something else", file, 0);
	return 0;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
cmd_ls(int argc, char **argv)
{
	DIR *d = opendir(argv[0]);
	if (!d) {
		if (errno == ENOENT && argc == 2 && strcmp(argv[1], "-") == 0)
			return 0;
		return fail("opendir %s", argv[0], errno);
	}
	if (argc == 2 && strcmp(argv[1], "-") == 0) {
		closedir(d);
		return fail("%s exists", argv[0], 0);
	}
	char *names[256];
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)) && n < 256)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			names[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names, (size_t)n, sizeof(char *), name_cmp);
	int r = 0;
	if (n != argc - 1)
		r = 1;
	for (int i = 0; !r && i < n; i++)
		if (strcmp(names[i], argv[1 + i]) != 0)
			r = 1;
	if (r) {
		fprintf(stderr, "probe: %s lists:", argv[0]);
		for (int i = 0; i < n; i++)
			fprintf(stderr, " %s", names[i]);
		fprintf(stderr, "\n");
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	return r;
}

static int
write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read one line from fd 0 without stdio buffering (the peer waits for our answer). */
static ssize_t
read_line(char *buf, size_t cap)
{
	size_t n = 0;
	while (n + 1 < cap) {
		ssize_t r = read(0, buf + n, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (buf[n] == '\n' || buf[n] == '\r')
			break;
		n++;
	}
	buf[n] = '\0';
	return n ? (ssize_t)n : -1;
}

static int
cmd_pipe(void)
{
	if (write_all(1, "ready\n", 6) < 0)
		return 1;
	char line[1024], out[1100];
	for (;;) {
		ssize_t n = read_line(line, sizeof(line));
		if (n < 0)
			return 0;
		for (ssize_t i = 0; i < n; i++)
			line[i] = (char)toupper((unsigned char)line[i]);
		int len = snprintf(out, sizeof(out), "%s\n", line);
		if (write_all(1, out, (size_t)len) < 0)
			return 1;
		for (ssize_t i = 0; i < n; i++)
			line[i] = (char)tolower((unsigned char)line[i]);
		len = snprintf(out, sizeof(out), "err:%s\n", line);
		if (write_all(2, out, (size_t)len) < 0)
			return 1;
	}
}

static int
cmd_tty(const char *rows, const char *cols)
{
	struct stat st0, st;
	if (fstat(0, &st0) < 0)
		return control("fstat", "0");
	for (int fd = 0; fd < 3; fd++) {
		if (!isatty(fd))
			return fail("fd %s is not a terminal", fd == 0 ? "0" : fd == 1 ? "1" : "2", 0);
		if (fstat(fd, &st) < 0 || st.st_rdev != st0.st_rdev)
			return fail("%s: fds 0-2 are not one terminal", "fstat", 0);
	}
	struct winsize ws;
	if (ioctl(0, TIOCGWINSZ, &ws) < 0)
		return fail("%s", "TIOCGWINSZ", errno);
	if (ws.ws_row != atoi(rows) || ws.ws_col != atoi(cols))
		return fail("%s: another window size", "TIOCGWINSZ", 0);
	/* No controlling terminal (the workload is a session leader without one). */
	int ctty = open("/dev/tty", O_RDWR | O_CLOEXEC);
	if (ctty >= 0 || errno != ENXIO)
		return fail("%s: not ENXIO", "/dev/tty", ctty >= 0 ? 0 : errno);
	/* The pts belongs to another devpts instance: no name for it in this view. */
	if (ttyname(0) != NULL)
		return fail("ttyname: %s", ttyname(0), 0);
	struct termios tio;
	if (tcgetattr(0, &tio) < 0)
		return fail("%s", "tcgetattr", errno);
	tio.c_lflag &= ~(tcflag_t)ECHO;
	if (tcsetattr(0, TCSANOW, &tio) < 0)
		return fail("%s", "tcsetattr", errno);
	if (write_all(1, "tty ok\n", 7) < 0)
		return fail("%s", "write", errno);
	char line[256], out[300];
	if (read_line(line, sizeof(line)) < 0)
		return fail("%s", "read", errno);
	int len = snprintf(out, sizeof(out), "got %s\n", line);
	return write_all(1, out, (size_t)len) < 0 ? 1 : 0;
}

/* The peer of a passed fd must see EOF once the workload closes it: no other copy is left. */
static int
cmd_drop3(void)
{
	if (close(3) < 0)
		return fail("%s", "close 3", errno);
	if (write_all(1, "closed\n", 7) < 0)
		return 1;
	char c;
	while (read(0, &c, 1) > 0)
		;
	return 0;
}

static int
unix_addr(const char *path, struct sockaddr_un *sun)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun->sun_path))
		return -1;
	strcpy(sun->sun_path, path);
	return 0;
}

static int
cmd_sendtty(const char *path)
{
	struct sockaddr_un sun;
	if (unix_addr(path, &sun) < 0)
		return 2;
	int s = -1;
	for (int i = 0; i < 200; i++) { /* the listener may not be there yet */
		s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (s < 0)
			return control("socket", path);
		if (connect(s, (struct sockaddr *)&sun, sizeof(sun)) == 0)
			break;
		close(s);
		s = -1;
		usleep(50 * 1000);
	}
	if (s < 0)
		return control("connect", path);
	if (!isatty(0))
		return control("isatty", "0");
	char byte = 't';
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	int zero = 0;
	memcpy(CMSG_DATA(c), &zero, sizeof(int));
	if (sendmsg(s, &mh, 0) != 1)
		return control("sendmsg", path);
	char reply[64] = {0};
	ssize_t n = read(s, reply, sizeof(reply) - 1);
	close(s);
	if (n < 2 || strncmp(reply, "ok", 2) != 0)
		return fail("box-shell's side said: %s", n > 0 ? reply : "nothing", 0);
	return 0;
}

static int
cmd_recvtty(const char *path)
{
	struct sockaddr_un sun;
	if (unix_addr(path, &sun) < 0)
		return 2;
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&sun, sizeof(sun)) < 0 || listen(l, 1) < 0)
		return control("listen", path);
	int s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (s < 0)
		return control("accept", path);
	char byte;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	if (recvmsg(s, &mh, MSG_CMSG_CLOEXEC) != 1)
		return control("recvmsg", path);
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return fail("%s: no fd came", path, 0);
	int tty;
	memcpy(&tty, CMSG_DATA(c), sizeof(int));
	const char *bad = NULL;
	int e = 0;
	struct winsize ws = {.ws_row = 40, .ws_col = 120}, got = {0};
	struct termios tio;
	if (!isatty(tty))
		bad = "isatty", e = errno;
	else if (ioctl(tty, TIOCSWINSZ, &ws) < 0)
		bad = "TIOCSWINSZ", e = errno;
	else if (ioctl(tty, TIOCGWINSZ, &got) < 0 || got.ws_row != 40 || got.ws_col != 120)
		bad = "TIOCGWINSZ", e = errno;
	else if (tcgetattr(tty, &tio) < 0 || tcsetattr(tty, TCSANOW, &tio) < 0)
		bad = "termios", e = errno;
	else if (write_all(tty, "shell-wrote\r\n", 13) < 0)
		bad = "write", e = errno;
	else if (tcsetpgrp(tty, getpgrp()) == 0 || errno != ENOTTY)
		bad = "tcsetpgrp is not ENOTTY (not our controlling terminal)", e = errno;
	char reply[128];
	snprintf(reply, sizeof(reply), "%s %s", bad ? bad : "ok", e ? strerror(e) : "");
	write_all(s, reply, strlen(reply));
	close(s);
	if (bad)
		return fail("the agent's terminal: %s", bad, e);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const char *m = argv[1];
	int n = argc - 2;
	char **a = argv + 2;
	if (!strcmp(m, "fds") && n >= 1)
		return cmd_fds(n, a);
	if (!strcmp(m, "enoent"))
		return cmd_enoent(n, a);
	if (!strcmp(m, "self") && (n == 1 || (n == 2 && !strncmp(a[1], "granted", 7))))
		return cmd_self(a[0], n == 2 ? a[1] : NULL);
	if (!strcmp(m, "landlock") && n == 1)
		return cmd_landlock(a[0]);
	if (!strcmp(m, "noexec") && n == 1)
		return cmd_noexec(a[0]);
	if (!strcmp(m, "net"))
		return cmd_net();
	if (!strcmp(m, "pidns"))
		return cmd_pidns();
	if (!strcmp(m, "seccomp"))
		return cmd_seccomp();
	if (!strcmp(m, "write") && n == 2)
		return cmd_write(a[0], a[1]);
	if (!strcmp(m, "read") && n == 2)
		return cmd_read(a[0], a[1]);
	if (!strcmp(m, "ls") && n >= 1)
		return cmd_ls(n, a);
	if (!strcmp(m, "pipe"))
		return cmd_pipe();
	if (!strcmp(m, "tty") && n == 2)
		return cmd_tty(a[0], a[1]);
	if (!strcmp(m, "sendtty") && n == 1)
		return cmd_sendtty(a[0]);
	if (!strcmp(m, "recvtty") && n == 1)
		return cmd_recvtty(a[0]);
	if (!strcmp(m, "drop3"))
		return cmd_drop3();
	if (!strcmp(m, "true"))
		return 0;
	fprintf(stderr, "probe: bad usage\n");
	return 2;
}
