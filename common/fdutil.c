/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fdutil.c — CLOEXEC helpers, fixed-number fd layout for exec, full I/O.
 *
 * Trusts: the caller owns the fds it names.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/socket.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "compat/syscalls.h"
#include "fdutil.h"
#include "parse.h"

int
fd_set_cloexec(int fd, bool on)
{
	int flags = fcntl(fd, F_GETFD);
	if (flags < 0)
		return -errno;
	flags = on ? flags | FD_CLOEXEC : flags & ~FD_CLOEXEC;
	if (fcntl(fd, F_SETFD, flags) < 0)
		return -errno;
	return 0;
}

int
fd_set_nonblock(int fd, bool on)
{
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0)
		return -errno;
	flags = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK;
	if (fcntl(fd, F_SETFL, flags) < 0)
		return -errno;
	return 0;
}

int
fd_dup_cloexec(int fd, int minfd)
{
	int r = fcntl(fd, F_DUPFD_CLOEXEC, minfd);
	return r < 0 ? -errno : r;
}

bool
fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0 || errno != EBADF;
}

bool
fd_is_seqpacket(int fd)
{
	int type = 0;
	socklen_t len = sizeof(type);
	return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_SEQPACKET;
}

bool
fd_is_listening(int fd)
{
	int v = 0;
	socklen_t len = sizeof(v);
	return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == 0 && v;
}

static int
fd_in(int fd, const int *list, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (list[i] == fd)
			return 1;
	return 0;
}

void
fd_close_list(int *fds, unsigned n)
{
	/* insertion sort: a batch is at most a few dozen fds, mostly in order already */
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			int t = fds[j];
			fds[j] = fds[j - 1];
			fds[j - 1] = t;
		}
	for (unsigned i = 0; i < n;) {
		if (fds[i] < 0) {
			i++;
			continue;
		}
		unsigned j = i + 1;
		while (j < n && fds[j] == fds[j - 1] + 1)
			j++;
		if (j - i == 1 || syscall(SYS_close_range, (unsigned)fds[i], (unsigned)fds[j - 1], 0) < 0)
			for (unsigned k = i; k < j; k++)
				(void)close(fds[k]); /* (one fd, or no close_range: each alone) */
		i = j;
	}
}

int
fd_close_all_except(int lowfd, const int *keep, unsigned n_keep)
{
	/* close_range between the kept fds when available; fall back to /proc. */
	int *sorted = NULL;
	unsigned n = 0;

	if (n_keep) {
		sorted = calloc(n_keep, sizeof(int));
		if (!sorted)
			return -ENOMEM;
		for (unsigned i = 0; i < n_keep; i++)
			if (keep[i] >= lowfd)
				sorted[n++] = keep[i];
		/* insertion sort: n is tiny */
		for (unsigned i = 1; i < n; i++)
			for (unsigned j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
				int t = sorted[j];
				sorted[j] = sorted[j - 1];
				sorted[j - 1] = t;
			}
	}
	unsigned from = (unsigned)lowfd;
	int r = 0;
	for (unsigned i = 0; i <= n; i++) {
		unsigned to = i < n ? (unsigned)sorted[i] - 1 : ~0U;
		if (i < n && (unsigned)sorted[i] < from) {
			continue;
		}
		if (to >= from && syscall(SYS_close_range, from, to, 0) < 0) {
			if (errno != ENOSYS) {
				r = -errno;
				break;
			}
			/* Old kernel: walk /proc/self/fd. */
			DIR *d = opendir("/proc/self/fd");
			if (!d) {
				r = -errno;
				break;
			}
			struct dirent *de;
			int dfd = dirfd(d);
			while ((de = readdir(d))) {
				if (de->d_name[0] == '.')
					continue;
				uint64_t v;
				if (parse_u64(de->d_name, INT_MAX, &v) < 0)
					continue;
				int fd = (int)v;
				if (fd >= lowfd && fd != dfd && !fd_in(fd, sorted, n))
					(void)close(fd);
			}
			closedir(d);
			break;
		}
		if (i < n)
			from = (unsigned)sorted[i] + 1;
	}
	free(sorted);
	return r;
}

int
fd_move_to(const int *fds, const int *targets, unsigned n)
{
	/*
	 * First lift every source above all targets (so no dup2 clobbers a
	 * source still needed), then place each at its target.
	 */
	int maxt = 0;
	int *tmp = calloc(n ? n : 1, sizeof(int));
	if (!tmp)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++)
		if (targets[i] > maxt)
			maxt = targets[i];
	for (unsigned i = 0; i < n; i++) {
		tmp[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, maxt + 1);
		if (tmp[i] < 0) {
			int r = -errno;
			for (unsigned j = 0; j < i; j++)
				close(tmp[j]);
			free(tmp);
			return r;
		}
	}
	int r = 0;
	for (unsigned i = 0; i < n; i++) {
		/* dup2 clears FD_CLOEXEC on the new fd: that is the point. */
		if (dup2(tmp[i], targets[i]) < 0 && r == 0)
			r = -errno;
		close(tmp[i]);
	}
	free(tmp);
	return r;
}

int
fd_read_full(int fd, void *buf, unsigned long len)
{
	char *p = buf;
	while (len > 0) {
		ssize_t n = read(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EPIPE;
		p += n;
		len -= (unsigned long)n;
	}
	return 0;
}

int
fd_write_full(int fd, const void *buf, unsigned long len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (unsigned long)n;
	}
	return 0;
}

int
fd_read_file(int dirfd, const char *path, unsigned long max, char **ret, unsigned long *ret_len)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;

	unsigned long cap = 4096, len = 0;
	_cleanup_free_ char *buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			if (cap > max)
				return -EFBIG;
			unsigned long ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			if (ncap <= cap)
				return -EFBIG;
			char *nb = realloc(buf, ncap + 1);
			if (!nb)
				return -ENOMEM;
			buf = nb;
			cap = ncap;
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (unsigned long)n;
		if (len > max)
			return -EFBIG;
	}
	buf[len] = '\0';
	*ret = TAKE_PTR(buf);
	if (ret_len)
		*ret_len = len;
	return 0;
}

int
fd_chmod_opath(int fd, mode_t mode)
{
	/* fchmod(2) on an O_PATH fd fails with EBADF: fchmodat2 takes AT_EMPTY_PATH. */
	if (syscall(BOX_NR_fchmodat2, fd, "", mode, AT_EMPTY_PATH) == 0)
		return 0;
	if (errno != ENOSYS)
		return -errno;
	/* Before Linux 6.6: the magic link resolves to this fd's inode, never to a name. */
	char p[32];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	return chmod(p, mode) < 0 ? -errno : 0;
}

int
fd_openat2(int dfd, const char *path, int flags, mode_t mode, unsigned long long resolve)
{
	struct open_how how = { .flags = (unsigned long long)(flags | O_CLOEXEC),
				.mode = (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? mode : 0,
				.resolve = resolve };
	long fd = syscall(SYS_openat2, dfd, path, &how, sizeof(how));
	return fd < 0 ? -errno : (int)fd;
}

int
fd_opendir_at(int dfd, const char *name, DIR **ret)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		int r = -errno;
		close(fd);
		return r;
	}
	*ret = d;
	return 0;
}
