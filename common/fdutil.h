/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fdutil.h — file descriptor helpers: CLOEXEC from birth, fixed-number layout.
 *
 * Every fd box opens is O_CLOEXEC / SOCK_CLOEXEC; these helpers exist for the
 * few places that must move an fd to a fixed number for exec or close all the
 * others. Negative errno on failure.
 * Trusts: the caller owns the fds it names.
 */
#ifndef BOX_FDUTIL_H
#define BOX_FDUTIL_H

#include <dirent.h>
#include <stdbool.h>
#include <sys/types.h>

/* Set or clear FD_CLOEXEC. */
int fd_set_cloexec(int fd, bool on);
int fd_set_nonblock(int fd, bool on);
/* Duplicate at >= minfd with CLOEXEC set. Returns the new fd. */
int fd_dup_cloexec(int fd, int minfd);
/* Close every fd >= lowfd except those listed (sorted or not). */
int fd_close_all_except(int lowfd, const int *keep, unsigned n_keep);
/*
 * Close the N fds listed (each one the caller's; negative entries are skipped):
 * one close_range per run of consecutive numbers, so a batch opened together
 * (lowest free numbers, hence mostly one run) costs one system call. FDS is
 * sorted in place. Errors of close are not reported (the fds are gone either way).
 */
void fd_close_list(int *fds, unsigned n);
/*
 * Arrange fds for exec: fds[i] ends up at number target[i] without CLOEXEC,
 * for i < n, even if sources and targets overlap. All other fds are left
 * alone (callers then close the rest with fd_close_all_except).
 */
int fd_move_to(const int *fds, const int *targets, unsigned n);
/* Is fd open? */
bool fd_is_open(int fd);
/* Is fd a SOCK_SEQPACKET socket (a daemon's channel)? */
bool fd_is_seqpacket(int fd);
/* Is fd a socket that listens (a daemon's listener, e.g. shell.sock, mcp.sock)? */
bool fd_is_listening(int fd);
/* Read/write the whole buffer, retrying on EINTR and short counts. */
int fd_read_full(int fd, void *buf, unsigned long len);
int fd_write_full(int fd, const void *buf, unsigned long len);
/*
 * chmod the inode an O_PATH fd (or any fd) refers to, never a name: fchmodat2
 * with AT_EMPTY_PATH, or /proc/self/fd/N on a kernel without it (< 6.6).
 */
int fd_chmod_opath(int fd, mode_t mode);
/*
 * openat2(2) of PATH at DFD with FLAGS | O_CLOEXEC, MODE (for a create) and RESOLVE (the
 * RESOLVE_* restrictions): the fd, or negative errno (-ENOSYS before Linux 5.6).
 */
int fd_openat2(int dfd, const char *path, int flags, mode_t mode, unsigned long long resolve);
/*
 * The directory NAME at DFD for readdir, never through a symbolic link (O_NOFOLLOW,
 * CLOEXEC): 0 with *RET (closedir frees it and its fd), or negative errno.
 */
int fd_opendir_at(int dfd, const char *name, DIR **ret);
/* Read a whole file up to max bytes (NUL-terminated). -EFBIG if larger. */
int fd_read_file(int dirfd, const char *path, unsigned long max, char **ret, unsigned long *ret_len);

#endif
