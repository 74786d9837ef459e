/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fsops.h — every file operation the shell and its own commands make, each
 * decided before it happens (docs/box-policy.5.md).
 *
 * A path is canonicalized (symlinks resolved; for an operation on a
 * directory entry itself every component but the last), decided, then
 * opened with openat2(root, rel, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS) from the root — so a symlink swapped in between
 * the decision and the open cannot redirect it: on ELOOP/EXDEV the path is
 * canonicalized and decided again, at most 8 times, then EACCES. Directory
 * walks decide entries in batches (sh_decide_fs_batch) before opening them.
 *
 * The retries: a symlink swapped into a decided path makes openat2 fail
 * with ELOOP (or EXDEV); that attempt's decisions are recorded as error
 * outcomes and the path is canonicalized and decided again — so a history
 * can hold such a failed attempt followed by the decision on where the path
 * leads now. A canonicalization that fails (a missing middle component, a
 * symlink loop) decides nothing: the call fails as the system call would.
 *
 * Errors: negative errno, as the system call would fail (-EACCES for a
 * denial, after the policy message was written to the command's stderr as
 * "box-shell: <cmd>: <message>"), so a command reports "cat: x: Permission
 * denied" the way GNU's does. Outcomes are recorded here.
 * Trusts: nothing in the paths (they come from the agent's command line).
 */
#ifndef BOX_SHELL_FSOPS_H
#define BOX_SHELL_FSOPS_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "decide.h"

/*
 * The fds a script may name (>&N, <&N, /dev/fd/N, read -u N, ...): 0-2 and
 * those its own redirections opened, tracked per shell (sh.h: subshells and
 * functions share it, closing forgets, a command's temporary redirections
 * are undone with it). Every other fd of the process is the shell's own —
 * in box-shell its box-policyd channel, its control socket, its host
 * channel (box-shell/daemon.h) — and no spelling reaches it. A redirection
 * opens fds below SH_FD_SCRIPT_MAX; the shell keeps its own at or above.
 */
#define SH_FD_SCRIPT_MAX 100
struct sh_fdset {
	uint64_t bits[(SH_FD_SCRIPT_MAX + 63) / 64];
};

static inline bool
sh_fdset_has(const struct sh_fdset *s, int fd)
{
	return s && fd >= 0 && fd < SH_FD_SCRIPT_MAX && ((s->bits[fd / 64] >> (fd % 64)) & 1);
}

static inline void
sh_fdset_put(struct sh_fdset *s, int fd, bool on)
{
	if (fd < 0 || fd >= SH_FD_SCRIPT_MAX)
		return;
	if (on)
		s->bits[fd / 64] |= 1ULL << (fd % 64);
	else
		s->bits[fd / 64] &= ~(1ULL << (fd % 64));
}

/* The context of one command's file operations. */
struct sh_fs {
	struct sh_decider *decider;
	int root_fd;             /* O_PATH of "/" */
	const char *cwd;         /* canonical absolute cwd of the command */
	int err_fd;              /* where denial messages go */
	const char *cmd_name;    /* for "box-shell: <cmd>: <message>" */
	const struct sh_fdset *script_fds; /* the script's fds; NULL: 0-2 only */
};

/* Canonical absolute path of p (relative to fs->cwd); entry: leave the last
 * component unresolved (lstat, unlink, rename legs, readlink, symlink). A
 * missing final component is allowed (creation); a missing middle one is
 * -ENOENT. */
int sh_fs_canon(const struct sh_fs *fs, const char *p, bool entry, char **out);

/* open(2)-like: flags as open(2); the decision from the flags (O_RDONLY:
 * read_content; write/creat/trunc/append: write_content; O_RDWR: both;
 * O_DIRECTORY read for enumerate: use sh_fs_opendir). Returns the fd
 * (O_CLOEXEC) or -errno. /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N
 * and /proc/self/fd/N (exactly so spelled) are a duplicate of that fd of
 * the process (the command's own stream), not decided: they are magic
 * links, which the openat2 refuses. Only a script's own fd (script_fds) is
 * so duplicated: any other is -EBADF, after a message. Other spellings
 * (/proc/PID/fd/N, /dev//fd/N, a symlink to one) are paths like any: their
 * links resolve to what the fd is (a file is decided as that file; a
 * socket or pipe is no path there, ENOENT). */
int sh_fs_open(struct sh_fs *fs, const char *path, int flags, mode_t mode);
/* Decided as enumerate; returns a DIR* (closedir frees it) or NULL + errno. */
DIR *sh_fs_opendir(struct sh_fs *fs, const char *path);
/*
 * Entries of an open directory, decided in batches as `op` (e.g. read_metadata
 * for ls -l, read_content for grep -r) — names are relative to dir_path;
 * permitted[i] says whether entry i may be used. Up to SH_DECIDE_BATCH_MAX
 * requests go to one sh_decide_fs_batch (one round trip in a box). Each entry
 * is decided on its canonical path (a link's entry as what it points to,
 * except for the operations on an entry itself and read_metadata, which is
 * decided as lstat, as ls -l and find use it); the verdict is kept, and the
 * next operation of the same action and operation on that path (the command
 * passes "dir_path/name") uses it once instead of deciding again. Call the
 * operation for a denied entry too: it fails with -EACCES and prints the
 * policy message then, as a single refused operation does.
 *
 * A command that stops early (grep -q, -m, a closed pipe, an error) may thus
 * have been decided on entries it never opened: those decisions are request
 * events without an outcome in the history and the decision log, exactly as
 * a denied request is. Temporal rules count them as requests (attempts),
 * never as responses.
 */
int sh_fs_decide_entries(struct sh_fs *fs, const char *dir_path, char *const *names, size_t n,
			 enum sh_fs_action action, enum sh_fs_op op, bool *permitted);
/* The same, with each entry's d_type from readdir (DT_UNKNOWN where unknown): an entry
 * readdir says is no symlink is not lstat'ed again before its decision. */
int sh_fs_decide_entries_typed(struct sh_fs *fs, const char *dir_path, char *const *names,
			       const unsigned char *types, size_t n, enum sh_fs_action action,
			       enum sh_fs_op op, bool *permitted);
/*
 * The read opens (O_RDONLY, as sh_fs_open) of N entries of directory DIR_PATH
 * that sh_fs_decide_entries(_typed) found permitted as read_content, in one go:
 * fds[i] is then the open file, a negative errno (the open failed: the outcome
 * is recorded, say it as for sh_fs_open), or SH_FS_OPEN_ALONE — open that one
 * with sh_fs_open(DIR_PATH/name) yourself (no verdict kept for it, a symlink
 * swapped in, the directory moved meanwhile, no held directory). The same
 * decisions, the same objects opened and the same outcomes as N sh_fs_open
 * calls; the held directory's check is made once before and once after them
 * all, not before each. Returns 0, or -E2BIG above SH_FS_OPEN_ENTRIES_MAX.
 */
#define SH_FS_OPEN_ENTRIES_MAX 64
#define SH_FS_OPEN_ALONE (-100000)
int sh_fs_open_read_entries(struct sh_fs *fs, const char *dir_path, char *const *names,
			    size_t n, int *fds);
/* Test hook (box-shell reads BOX_TEST_SHELL_OPEN_ENTRIES_DELAY_MS, at most 10 s): how long
 * sh_fs_open_read_entries waits between its first check and its opens; it only slows. */
extern unsigned sh_fs_test_open_entries_delay_ms;
/* Drop every verdict batches left unused (a command ended; they also expire after 2 s, so
 * a later command decides again). */
void sh_fs_batch_forget(void);

int sh_fs_stat(struct sh_fs *fs, const char *path, struct stat *st, bool follow);  /* read_metadata */
/* sh_fs_stat (follow false) of PATH, the entry NAME (one component) of a directory
 * already open as DIRFD (from sh_fs_opendir): the same decision on PATH's canonical
 * path, then fstatat(DIRFD, NAME, AT_SYMLINK_NOFOLLOW) when that path ends in NAME. */
int sh_fs_stat_at(struct sh_fs *fs, int dirfd, const char *path, const char *name,
		  struct stat *st);
/* sh_fs_stat_at for a caller that needs only the entry's file type, which readdir gave
 * (D_TYPE, not DT_UNKNOWN: else as sh_fs_stat_at): the same decision and outcome, then
 * ST holds only st_mode's type bits (from D_TYPE, read from the decided directory) and no
 * stat call is made (find -name over a tree). */
int sh_fs_stat_at_type(struct sh_fs *fs, int dirfd, const char *path, const char *name,
		       unsigned char d_type, struct stat *st);
int sh_fs_readlink(struct sh_fs *fs, const char *path, char **target);           /* read_link */
int sh_fs_chdir_check(struct sh_fs *fs, const char *path, char **canon);         /* change_dir */
int sh_fs_mkdir(struct sh_fs *fs, const char *path, mode_t mode);                /* create_dir */
int sh_fs_unlink(struct sh_fs *fs, const char *path);                            /* remove_file */
int sh_fs_rmdir(struct sh_fs *fs, const char *path);                             /* remove_dir */
/* rename: fs:read (source, read_content), fs:move source, fs:move destination,
 * fs:delete destination when it exists — all must permit (docs/box-policy.5.md). */
int sh_fs_rename(struct sh_fs *fs, const char *from, const char *to);
/* hard link: fs:read source read_content + fs:write destination write_content. */
int sh_fs_link(struct sh_fs *fs, const char *from, const char *to);
/* symlink: fs:read target read_content + fs:write linkpath symlink. */
int sh_fs_symlink(struct sh_fs *fs, const char *target, const char *linkpath);
/* chmod (never setuid/setgid: -EPERM, the caller says why); follow=false: chmod -h. */
int sh_fs_chmod(struct sh_fs *fs, const char *path, mode_t mode, bool follow);
/* touch of an existing file: write_content (docs/box-policy.5.md). times NULL = now. */
int sh_fs_utimens(struct sh_fs *fs, const char *path, const struct timespec times[2], bool follow);
int sh_fs_truncate(struct sh_fs *fs, const char *path, off_t len);               /* write_content */

#endif
