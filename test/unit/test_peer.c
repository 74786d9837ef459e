/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_peer.c — peer_pidns_same(): a peer in our PID namespace is ours, one in
 * a new PID namespace (a sandbox's) is not, both through SO_PEERPIDFD and
 * through the /proc fallback.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "peer.h"
#include "tap.h"

static void
test_same_namespace(void)
{
	int self = peer_pidns_open_self();
	int sv[2];
	enum peer_method m = PEER_METHOD_PROC;

	CHECK(self >= 0);
	CHECK(fcntl(self, F_GETFD) & FD_CLOEXEC);
	CHECK_INT(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	CHECK_INT(peer_pidns_same(sv[0], self, false, &m), 1);
	if (m != PEER_METHOD_PIDFD)
		SKIP("no SO_PEERPIDFD or PIDFD_GET_PID_NAMESPACE: only the /proc fallback ran");
	CHECK_INT(peer_pidns_same(sv[0], self, true, &m), 1);
	CHECK_INT(m, PEER_METHOD_PROC);
	CHECK_INT(peer_pidns_same(sv[0], -1, false, NULL), -EBADF);
	close(sv[0]);
	close(sv[1]);
	close(self);
}

/*
 * A grandchild in a new PID namespace (a new user namespace too when we are
 * not root) connects to `path` and waits for the parent to close the pipe.
 * Returns the child's pid, or -1 (then *why says what the host lacks).
 */
static pid_t
foreign_connector(const char *path, int hold_fd, int hold_w, const char **why)
{
	int ready[2];
	if (pipe2(ready, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(ready[0]);
		close(hold_w);
		int flags = CLONE_NEWPID | (geteuid() == 0 ? 0 : CLONE_NEWUSER);
		char st = 'u';
		if (unshare(flags) < 0) {
			(void)!write(ready[1], &st, 1);
			_exit(1);
		}
		pid_t g = fork();
		if (g < 0)
			_exit(1);
		if (g == 0) {
			struct sockaddr_un sa = { .sun_family = AF_UNIX };
			snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
			int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
			st = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ? 'c' :
												 'x';
			(void)!write(ready[1], &st, 1);
			char c;
			(void)!read(hold_fd, &c, 1); /* until the parent is done */
			_exit(0);
		}
		int s;
		waitpid(g, &s, 0);
		_exit(0);
	}
	close(ready[1]);
	char st = 0;
	if (read(ready[0], &st, 1) != 1 || st != 'c') {
		*why = st == 'u' ? "unshare(CLONE_NEWPID) is not permitted here" :
				   "the helper could not connect";
		close(ready[0]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	close(ready[0]);
	return pid;
}

static void
test_other_namespace(void)
{
	char dir[] = "/tmp/box-test-peer.XXXXXX";
	char path[64];
	const char *why = NULL;
	int hold[2];

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/s", dir);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	CHECK(lfd >= 0);
	CHECK_INT(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	CHECK_INT(listen(lfd, 4), 0);
	CHECK_INT(pipe2(hold, O_CLOEXEC), 0);
	pid_t pid = foreign_connector(path, hold[0], hold[1], &why);
	close(hold[0]);
	if (pid < 0) {
		SKIP(why ? why : "fork failed");
	} else {
		int self = peer_pidns_open_self();
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		enum peer_method m = PEER_METHOD_PROC;
		CHECK(fd >= 0);
		CHECK_INT(peer_pidns_same(fd, self, false, &m), 0);
		CHECK_INT(peer_pidns_same(fd, self, true, &m), 0);
		CHECK_INT(m, PEER_METHOD_PROC);
		close(fd);
		close(self);
		close(hold[1]);
		waitpid(pid, NULL, 0);
	}
	if (pid < 0)
		close(hold[1]);
	close(lfd);
	unlink(path);
	rmdir(dir);
}

int
main(void)
{
	RUN(test_same_namespace);
	RUN(test_other_namespace);
	return tap_done();
}
