/* SPDX-License-Identifier: Apache-2.0 */
/*
 * peer.c — is a Unix socket's peer in our own PID namespace?
 *
 * The way that cannot be raced: SO_PEERPIDFD gives a pidfd of the process
 * that connected (pinned by the socket since connect(), so it cannot be a
 * recycled pid), PIDFD_GET_PID_NAMESPACE an nsfs fd of that process's PID
 * namespace, and two nsfs fds name the same namespace exactly when their
 * (st_dev, st_ino) agree.
 *
 * The fallback, for a kernel without one of them (ENOPROTOOPT: no
 * SO_PEERPIDFD before 6.5; ENOTTY: no pidfs ioctl before 6.11; EINVAL: the
 * peer's task is gone): SO_PEERCRED's pid, which the kernel translates into
 * our namespace (0 when the peer's namespace is not ours or below it: then
 * it is foreign), and /proc/PID/ns/pid. Its race: the peer may exit and its
 * pid be reused between connect() and the stat, so a process of our own
 * namespace could be judged in place of a foreign one that exited. The
 * foreign peer is then gone, so what it sent reaches nobody it controls —
 * but the fallback is weaker and only used when the kernel offers nothing
 * better.
 *
 * Any other error (the peer vanished, /proc unreadable, EACCES) is returned:
 * the caller refuses what it cannot classify. Library code: negative errno,
 * never logs.
 * Trusts: the kernel (socket credentials, pidfs, nsfs, /proc of our own
 * PID namespace: the caller's mount namespace must have one).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "compat/pidfd.h"
#include "peer.h"

int
peer_pidns_open_self(void)
{
	int fd = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC | O_NOCTTY);
	return fd < 0 ? -errno : fd;
}

static int
same_ns(int ns_fd, int self_ns_fd)
{
	struct stat a, b;
	if (fstat(ns_fd, &a) < 0 || fstat(self_ns_fd, &b) < 0)
		return -errno;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* 1/0 as peer_pidns_same; -ENOSYS when this kernel cannot answer this way. */
static int
by_pidfd(int sockfd, int self_ns_fd)
{
	/* A pidfd is always created close-on-exec (pidfd_prepare). */
	_cleanup_close_ int pidfd = -1;
	socklen_t len = sizeof(pidfd);
	if (getsockopt(sockfd, SOL_SOCKET, BOX_SO_PEERPIDFD, &pidfd, &len) < 0)
		return errno == ENOPROTOOPT || errno == EINVAL ? -ENOSYS : -errno;
	if (len != sizeof(pidfd) || pidfd < 0)
		return -EIO;
	_cleanup_close_ int ns = ioctl(pidfd, BOX_PIDFD_GET_PID_NAMESPACE, 0);
	if (ns < 0)
		return errno == ENOTTY || errno == EINVAL ? -ENOSYS : -errno;
	return same_ns(ns, self_ns_fd);
}

static int
by_proc(int sockfd, int self_ns_fd)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);
	char path[64];

	if (getsockopt(sockfd, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0)
		return -errno;
	if (len != sizeof(uc))
		return -EIO;
	if (uc.pid <= 0)
		return 0; /* not visible from our namespace: an outer or unrelated one */
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)uc.pid);
	_cleanup_close_ int ns = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (ns < 0)
		return -errno;
	return same_ns(ns, self_ns_fd);
}

int
peer_pidns_same(int sockfd, int self_ns_fd, bool force_proc, enum peer_method *method)
{
	if (self_ns_fd < 0)
		return -EBADF;
	if (!force_proc) {
		int r = by_pidfd(sockfd, self_ns_fd);
		if (r != -ENOSYS) {
			if (method)
				*method = PEER_METHOD_PIDFD;
			return r;
		}
	}
	if (method)
		*method = PEER_METHOD_PROC;
	return by_proc(sockfd, self_ns_fd);
}
