/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fsops_stub.c — test-only stand-in for box-shell/fsops.c while it does not
 * exist (module.mk drops this file once it does): the fsops.h calls the text
 * commands make, each decided through decide.h, then done with plain
 * syscalls relative to fs->cwd. Not a security boundary.
 * Trusts: its callers (test code).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsops.h"

static char *
abs_path(const struct sh_fs *fs, const char *p)
{
	char *s = NULL;
	if (p[0] == '/')
		return strdup(p);
	if (asprintf(&s, "%s/%s", strcmp(fs->cwd, "/") ? fs->cwd : "", p) < 0)
		return NULL;
	return s;
}

static int
decide(struct sh_fs *fs, enum sh_fs_action a, enum sh_fs_op op, const char *path)
{
	char *abs = abs_path(fs, path);
	if (!abs)
		return -ENOMEM;
	struct sh_fs_request r = { .action = a, .op = op, .path = abs };
	struct sh_verdict v;
	int e = sh_decide_fs(fs->decider, &r, &v);
	free(abs);
	if (e < 0)
		return e;
	bool permit = v.permit;
	sh_verdict_clear(&v);
	return permit ? 0 : -EACCES;
}

int
sh_fs_open(struct sh_fs *fs, const char *path, int flags, mode_t mode)
{
	bool w = (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC | O_APPEND));
	int e = decide(fs, w ? SH_FS_WRITE : SH_FS_READ, w ? SH_OP_WRITE_CONTENT : SH_OP_READ_CONTENT,
		       path);
	if (e < 0)
		return e;
	int fd = open(path, flags | O_CLOEXEC, mode);
	return fd < 0 ? -errno : fd;
}

DIR *
sh_fs_opendir(struct sh_fs *fs, const char *path)
{
	int e = decide(fs, SH_FS_READ, SH_OP_ENUMERATE, path);
	if (e < 0) {
		errno = -e;
		return NULL;
	}
	return opendir(path);
}

int
sh_fs_decide_entries(struct sh_fs *fs, const char *dir_path, char *const *names, size_t n,
		     enum sh_fs_action action, enum sh_fs_op op, bool *permitted)
{
	for (size_t i = 0; i < n; i += SH_DECIDE_BATCH_MAX) {
		size_t k = n - i < SH_DECIDE_BATCH_MAX ? n - i : SH_DECIDE_BATCH_MAX;
		struct sh_fs_request r[SH_DECIDE_BATCH_MAX];
		struct sh_verdict v[SH_DECIDE_BATCH_MAX];
		char *paths[SH_DECIDE_BATCH_MAX];
		for (size_t j = 0; j < k; j++) {
			char *full = NULL;
			if (asprintf(&full, "%s/%s", dir_path, names[i + j]) < 0)
				return -ENOMEM;
			paths[j] = abs_path(fs, full);
			free(full);
			r[j] = (struct sh_fs_request){ .action = action, .op = op, .path = paths[j] };
		}
		int e = sh_decide_fs_batch(fs->decider, r, k, v);
		for (size_t j = 0; j < k; j++) {
			permitted[i + j] = e >= 0 && v[j].permit;
			if (e >= 0)
				sh_verdict_clear(&v[j]);
			free(paths[j]);
		}
		if (e < 0)
			return e;
	}
	return 0;
}

int
sh_fs_stat(struct sh_fs *fs, const char *path, struct stat *st, bool follow)
{
	int e = decide(fs, SH_FS_READ, SH_OP_READ_METADATA, path);
	if (e < 0)
		return e;
	return (follow ? stat(path, st) : lstat(path, st)) < 0 ? -errno : 0;
}
