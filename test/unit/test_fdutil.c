/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_fdutil.c — fd helpers: CLOEXEC, fixed-number moves, close-all, closing a list,
 * file reads, socket kinds (a daemon's channel, a listener).
 */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cleanup.h"
#include "fdutil.h"
#include "tap.h"

static void
test_cloexec(void)
{
	int p[2];
	CHECK_INT(pipe2(p, O_CLOEXEC), 0);
	CHECK_INT(fd_set_cloexec(p[0], false), 0);
	CHECK_INT(fcntl(p[0], F_GETFD) & FD_CLOEXEC, 0);
	CHECK_INT(fd_set_cloexec(p[0], true), 0);
	CHECK(fcntl(p[0], F_GETFD) & FD_CLOEXEC);
	int d = fd_dup_cloexec(p[1], 50);
	CHECK(d >= 50);
	CHECK(fcntl(d, F_GETFD) & FD_CLOEXEC);
	close(d);
	close(p[0]);
	close(p[1]);
	CHECK_INT(fd_set_cloexec(p[0], true), -EBADF);
}

static void
test_move_and_close(void)
{
	/* Swap two pipes' ends into 3 and 4 (overlapping sources and targets). */
	int a[2], b[2];
	CHECK_INT(pipe2(a, O_CLOEXEC), 0);
	CHECK_INT(pipe2(b, O_CLOEXEC), 0);
	int src[2] = { b[1], a[1] }, dst[2] = { 60, 61 };
	CHECK_INT(fd_move_to(src, dst, 2), 0);
	CHECK_INT(fcntl(60, F_GETFD) & FD_CLOEXEC, 0);
	CHECK_INT(write(60, "b", 1), 1);
	CHECK_INT(write(61, "a", 1), 1);
	char c = 0;
	CHECK_INT(read(b[0], &c, 1), 1);
	CHECK_INT(c, 'b');
	CHECK_INT(read(a[0], &c, 1), 1);
	CHECK_INT(c, 'a');

	int keep[2] = { 61, a[0] };
	CHECK_INT(fd_close_all_except(a[0], keep, 2), 0);
	CHECK(fd_is_open(a[0]));
	CHECK(fd_is_open(61));
	CHECK(!fd_is_open(60));
	CHECK(!fd_is_open(b[0]) || b[0] < a[0]);
	close(61);
	close(a[0]);
}

static void
test_read_file(void)
{
	char tmpl[] = "/tmp/box-test-fdutil-XXXXXX";
	int fd = mkostemp(tmpl, O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_INT(fd_write_full(fd, "hello world", 11), 0);
	close(fd);
	char *s = NULL;
	unsigned long n = 0;
	CHECK_INT(fd_read_file(AT_FDCWD, tmpl, 100, &s, &n), 0);
	CHECK_INT(n, 11);
	CHECK_STR(s, "hello world");
	free(s);
	s = NULL;
	CHECK_INT(fd_read_file(AT_FDCWD, tmpl, 10, &s, &n), -EFBIG);
	CHECK(s == NULL);
	CHECK_INT(fd_read_file(AT_FDCWD, "/tmp", 10, &s, &n), -EISDIR);
	unlink(tmpl);
}

/* fd_chmod_opath changes the inode of an O_PATH fd, and never what a symlink names. */
static void
test_chmod_opath(void)
{
	char dir[] = "/tmp/box-test-fdutil.XXXXXX";
	char d[64], f[64], l[64];
	struct stat st;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(d, sizeof(d), "%s/d", dir);
	snprintf(f, sizeof(f), "%s/f", dir);
	snprintf(l, sizeof(l), "%s/l", dir);
	CHECK_INT(mkdir(d, 0), 0);
	int ffd = open(f, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHECK(ffd >= 0);
	close(ffd);
	CHECK_INT(symlink(f, l), 0);

	int fd = open(d, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_INT(fchmod(fd, 0700), -1); /* what fchmodat2 is for: */
	CHECK_INT(errno, EBADF);
	CHECK_INT(fd_chmod_opath(fd, 0700), 0);
	CHECK_INT(stat(d, &st), 0);
	CHECK_INT(st.st_mode & 07777, 0700);
	close(fd);

	/* An O_PATH|O_NOFOLLOW fd of a symlink: the link (no mode to change), never its target. */
	fd = open(l, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(fd_chmod_opath(fd, 0755) < 0);
	CHECK_INT(stat(f, &st), 0);
	CHECK_INT(st.st_mode & 07777, 0600);
	close(fd);

	unlink(l);
	unlink(f);
	rmdir(d);
	rmdir(dir);
}

/* A listening SOCK_SEQPACKET socket is a listener; a channel, a pipe, a bound socket are not. */
static void
test_socket_kinds(void)
{
	int sv[2], p[2];
	CHECK_INT(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	CHECK_INT(pipe2(p, O_CLOEXEC), 0);
	CHECK(fd_is_seqpacket(sv[0]));
	CHECK(!fd_is_seqpacket(p[0]));
	CHECK(!fd_is_listening(sv[0]));
	CHECK(!fd_is_listening(p[0]));
	CHECK(!fd_is_listening(-1));
	int l = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	/* An abstract name: nothing on disk to clean up. */
	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "box-test-fdutil-%d", (int)getpid());
	CHECK_INT(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	CHECK(!fd_is_listening(l));
	CHECK_INT(listen(l, 1), 0);
	CHECK(fd_is_listening(l));
	CHECK(fd_is_seqpacket(l));
	close(l);
	close(sv[0]);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
}

/* fd_close_list closes exactly the fds listed, in runs or alone, whatever their order. */
static void
test_close_list(void)
{
	int fds[12], keep[3];
	for (int i = 0; i < 12; i++)
		CHECK((fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0);
	/* 3 fds not in the list, one inside a run (so the run is two) */
	keep[0] = fds[2], keep[1] = fds[7], keep[2] = fds[11];
	int list[11];
	unsigned n = 0;
	for (int i = 11; i >= 0; i--) /* backwards: the sort makes the runs */
		if (i != 2 && i != 7 && i != 11)
			list[n++] = fds[i];
	list[n++] = -1; /* (skipped) */
	list[n++] = -EBADF;
	fd_close_list(list, n);
	for (int i = 0; i < 12; i++) {
		bool kept = i == 2 || i == 7 || i == 11;
		CHECK_INT(fd_is_open(fds[i]), kept); /* (listed: closed; not listed: open) */
	}
	for (int i = 0; i < 3; i++)
		close(keep[i]);
	fd_close_list(list, 0);
}

int
main(void)
{
	RUN(test_cloexec);
	RUN(test_move_and_close);
	RUN(test_close_list);
	RUN(test_read_file);
	RUN(test_chmod_opath);
	RUN(test_socket_kinds);
	return tap_done();
}
