/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_rm.c — box-shell's own `rm` (-r -R -f -d -v, --preserve-root) and
 * `rmdir` (-p -v --ignore-fail-on-non-empty), and the recursive removal mv
 * uses after a copy across file systems.
 * Decisions: `rm FILE` one remove_file (no stat first); `rm -r X` read_metadata
 * on X, then for a directory enumerate, each entry its own remove_file or
 * remove_dir (a recursive delete is one decision per entry, docs/box-policy.5.md;
 * the files' removals decided in batches of up to 256 before any is removed;
 * entry types come from readdir, or a read_metadata each where the file
 * system gives none), the directory's remove_dir last.
 * Trusts: nothing in argv or the file system.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_fileutil.h"
#include "cmdutil.h"

int
fu_remove_tree(struct sh_cmd *c, const char *name, const char *path, bool is_dir, bool verbose,
	       int depth)
{
	char qb[FU_QBUF];
	int status = 0, r;
	if (fu_interrupted(c))
		return 1;
	if (!is_dir) {
		r = sh_fs_unlink(c->fs, path);
		if (r < 0)
			return fu_err(c, 1, name, "cannot remove %s: %s", fu_q(qb, sizeof(qb), path),
				      strerror(-r));
		if (verbose)
			sh_out_printf(c->out_buf, "removed %s\n", fu_q(qb, sizeof(qb), path));
		return 0;
	}
	struct fu_dir d;
	r = fu_dir_read(c->fs, path, &d);
	if (r < 0)
		return fu_err(c, 1, name, "cannot remove %s: %s", fu_q(qb, sizeof(qb), path),
			      strerror(-r));
	/* the removals of each run of files (up to the next directory, at most
	 * 256) in one batch, just before they are removed; a directory's own at
	 * its rmdir — so the order is readdir's, as GNU's rm goes */
	char **files = calloc(d.n + 1, sizeof(*files));
	bool *ent_is_dir = calloc(d.n + 1, sizeof(*ent_is_dir));
	size_t nfiles = 0;
	if (!files || !ent_is_dir) {
		free(files);
		free(ent_is_dir);
		fu_dir_free(&d);
		return fu_err(c, 1, name, "memory exhausted");
	}
	for (size_t i = 0; i < d.n; i++) {
		ent_is_dir[i] = d.e[i].d_type == DT_DIR;
		if (d.e[i].d_type == DT_UNKNOWN) {
			struct stat st;
			char *child = fu_join(path, d.e[i].name);
			ent_is_dir[i] = child && sh_fs_stat(c->fs, child, &st, false) == 0 &&
				    S_ISDIR(st.st_mode);
			free(child);
		}
	}
	for (size_t i = 0; i < d.n; i++) {
		if (!ent_is_dir[i] && nfiles == 0) {
			size_t run = 0;
			for (size_t j = i; j < d.n && !ent_is_dir[j] && run < SH_DECIDE_BATCH_MAX; j++)
				files[run++] = d.e[j].name;
			(void)fu_decide_names(c->fs, path, files, run, SH_FS_DELETE,
					      SH_OP_REMOVE_FILE);
			nfiles = run;
		}
		if (!ent_is_dir[i])
			nfiles--;
		char *child = fu_join(path, d.e[i].name);
		bool child_dir = ent_is_dir[i];
		if (!child) {
			status = 1;
			break;
		}
		if (depth > 4096)
			status = fu_err(c, 1, name, "cannot remove %s: %s",
					fu_q(qb, sizeof(qb), child), strerror(ELOOP));
		else if (fu_remove_tree(c, name, child, child_dir, verbose, depth + 1))
			status = 1;
		free(child);
		if (fu_interrupted(c))
			break;
	}
	free(ent_is_dir);
	free(files);
	fu_dir_free(&d);
	r = sh_fs_rmdir(c->fs, path);
	if (r < 0) {
		/* a child that could not go leaves its parent: GNU reports only the child */
		if (status && r == -ENOTEMPTY)
			return 1;
		return fu_err(c, 1, name, "cannot remove %s: %s", fu_q(qb, sizeof(qb), path),
			      strerror(-r));
	}
	if (verbose)
		sh_out_printf(c->out_buf, "removed directory %s\n", fu_q(qb, sizeof(qb), path));
	return status;
}

struct rm_opts {
	bool r, f, d, v, no_preserve_root;
};

static int
rm_on(void *ctx, int id, const char *arg)
{
	struct rm_opts *o = ctx;
	switch (id) {
	case 'r':
	case 'R': o->r = true; break;
	case 'f': o->f = true; break;
	case 'd': o->d = true; break;
	case 'v': o->v = true; break;
	case 256: o->no_preserve_root = true; break;
	case 257: o->no_preserve_root = false; break;
	default: break;
	}
	return 0;
}

static const struct fu_opt rm_table[] = {
	{'r', "recursive", FU_NOARG}, {'R', NULL, FU_NOARG},       {'f', "force", FU_NOARG},
	{'d', "dir", FU_NOARG},       {'v', "verbose", FU_NOARG},  {256, "no-preserve-root", FU_NOARG},
	{257, "preserve-root", FU_OPTARG}, {0, NULL, 0},
};

static const char rm_usage[] =
	"Usage: rm [OPTION]... [FILE]...\n"
	"Remove (unlink) the FILE(s). Supported options (box-shell's own rm):\n"
	"  -f, --force           ignore nonexistent files and arguments, never prompt\n"
	"  -r, -R, --recursive   remove directories and their contents recursively\n"
	"  -d, --dir             remove empty directories\n"
	"  -v, --verbose         explain what is being done\n"
	"      --no-preserve-root  do not treat '/' specially\n"
	"      --preserve-root   do not remove '/' (default)\n"
	"      --help            display this help and exit\n";

int sh_cmd_rm(struct sh_cmd *c, int argc, char **argv);
int
sh_cmd_rm(struct sh_cmd *c, int argc, char **argv)
{
	struct rm_opts o = {0};
	struct fu_parse p = {"rm", rm_table, true, 1, rm_usage, rm_on, &o};
	char **ops, qb[FU_QBUF];
	int n, status = 0;
	int r = fu_getopt(c, &p, argc, argv, &ops, &n);
	if (r == FU_HELP)
		return 0;
	if (r)
		return r;
	if (n == 0 && !o.f) {
		free(ops);
		return fu_usage_error(c, "rm", 1, "missing operand");
	}
	for (int i = 0; i < n && !fu_interrupted(c); i++) {
		const char *path = ops[i];
		char *base = fu_basename(path);
		if (o.r && base && (strcmp(base, ".") == 0 || strcmp(base, "..") == 0)) {
			status = fu_err(c, 1, "rm",
					"refusing to remove '.' or '..' directory: skipping %s",
					fu_q(qb, sizeof(qb), path));
			free(base);
			continue;
		}
		free(base);
		if (!o.r) {
			r = sh_fs_unlink(c->fs, path);
			if (r == -EISDIR || r == -EPERM) {
				struct stat st;
				if (sh_fs_stat(c->fs, path, &st, false) == 0 && S_ISDIR(st.st_mode)) {
					if (o.d)
						r = sh_fs_rmdir(c->fs, path);
					else
						r = -EISDIR;
				}
				if (r == 0 && o.v)
					sh_out_printf(c->out_buf, "removed directory %s\n",
						      fu_q(qb, sizeof(qb), path));
			} else if (r == 0 && o.v)
				sh_out_printf(c->out_buf, "removed %s\n", fu_q(qb, sizeof(qb), path));
			if (r < 0 && !(o.f && r == -ENOENT))
				status = fu_err(c, 1, "rm", "cannot remove %s: %s",
						fu_q(qb, sizeof(qb), path), strerror(-r));
			continue;
		}
		struct stat st;
		r = sh_fs_stat(c->fs, path, &st, false);
		if (r < 0) {
			if (!(o.f && r == -ENOENT))
				status = fu_err(c, 1, "rm", "cannot remove %s: %s",
						fu_q(qb, sizeof(qb), path), strerror(-r));
			continue;
		}
		if (S_ISDIR(st.st_mode) && !o.no_preserve_root) {
			char *canon = NULL;
			if (sh_fs_canon(c->fs, path, false, &canon) == 0 && strcmp(canon, "/") == 0) {
				fu_err(c, 1, "rm", "it is dangerous to operate recursively on %s",
				       fu_q(qb, sizeof(qb), path));
				status = fu_err(c, 1, "rm",
						"use --no-preserve-root to override this failsafe");
				free(canon);
				continue;
			}
			free(canon);
		}
		if (fu_remove_tree(c, "rm", path, S_ISDIR(st.st_mode), o.v, 0))
			status = 1;
	}
	free(ops);
	return sh_cmd_finish(c, status);
}

struct rmdir_opts {
	bool p, v, ignore;
};

static int
rmdir_on(void *ctx, int id, const char *arg)
{
	struct rmdir_opts *o = ctx;
	if (id == 'p')
		o->p = true;
	else if (id == 'v')
		o->v = true;
	else if (id == 256)
		o->ignore = true;
	return 0;
}

static const struct fu_opt rmdir_table[] = {
	{'p', "parents", FU_NOARG}, {'v', "verbose", FU_NOARG},
	{256, "ignore-fail-on-non-empty", FU_NOARG}, {0, NULL, 0},
};

static const char rmdir_usage[] =
	"Usage: rmdir [OPTION]... DIRECTORY...\n"
	"Remove the DIRECTORY(ies), if they are empty. Supported options:\n"
	"      --ignore-fail-on-non-empty  ignore each failure caused by a non-empty directory\n"
	"  -p, --parents   remove DIRECTORY and its ancestors\n"
	"  -v, --verbose   output a diagnostic for every directory processed\n"
	"      --help      display this help and exit\n";

static int
rmdir_one(struct sh_cmd *c, const struct rmdir_opts *o, const char *path, bool ancestor)
{
	char qb[FU_QBUF];
	if (o->v)
		sh_out_printf(c->out_buf, "rmdir: removing directory, %s\n",
			      fu_q(qb, sizeof(qb), path));
	int r = sh_fs_rmdir(c->fs, path);
	if (r == 0)
		return 0;
	if (o->ignore && (r == -ENOTEMPTY || r == -EEXIST))
		return 2;
	fu_err(c, 1, "rmdir", "failed to remove %s%s: %s", ancestor ? "directory " : "",
	       fu_q(qb, sizeof(qb), path), strerror(-r));
	return 1;
}

int sh_cmd_rmdir(struct sh_cmd *c, int argc, char **argv);
int
sh_cmd_rmdir(struct sh_cmd *c, int argc, char **argv)
{
	struct rmdir_opts o = {0};
	struct fu_parse p = {"rmdir", rmdir_table, true, 1, rmdir_usage, rmdir_on, &o};
	char **ops;
	int n, status = 0;
	int r = fu_getopt(c, &p, argc, argv, &ops, &n);
	if (r == FU_HELP)
		return 0;
	if (r)
		return r;
	if (n == 0) {
		free(ops);
		return fu_usage_error(c, "rmdir", 1, "missing operand");
	}
	for (int i = 0; i < n; i++) {
		r = rmdir_one(c, &o, ops[i], false);
		if (r == 1)
			status = 1;
		if (r || !o.p)
			continue;
		char *path = strdup(ops[i]);
		if (!path)
			break;
		for (;;) {
			size_t len = strlen(path);
			while (len > 1 && path[len - 1] == '/')
				path[--len] = 0;
			char *slash = strrchr(path, '/');
			if (!slash || slash == path)
				break;
			*slash = 0;
			while (slash > path && slash[-1] == '/')
				*--slash = 0;
			r = rmdir_one(c, &o, path, true);
			if (r) {
				if (r == 1)
					status = 1;
				break;
			}
		}
		free(path);
	}
	free(ops);
	return sh_cmd_finish(c, status);
}
