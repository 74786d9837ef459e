/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_cp.c — box-shell's own `cp` (-r -R -p -a -d -P -f -n -v -T -t) and `mv`
 * (-f -n -v -T -t; a rename is its legs, docs/box-policy.5.md; across file systems
 * a copy with -a's semantics, then a recursive removal).
 * Never sets setuid/setgid: cp -p/-a of a setuid/setgid file copies it
 * without those bits and says why (status 1), as box-shell's chmod refuses
 * them (sh_fs_chmod would too).
 * Decisions: cp a b = read_metadata a, read_metadata b, read_content a,
 * write_content b (+ set_permissions and write_content for the times with
 * -p); a directory's entries read_metadata in one batch, then each copied
 * alone. mv a b = read_metadata b (is it a directory?), then the rename's
 * legs (sh_fs_rename); from another directory also read_metadata of a (and of
 * b's directory unless b is the target directory), to tell a move across
 * file systems (a copy with -a's semantics, then a recursive removal).
 * Trusts: nothing in argv or the file system.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_fileutil.h"
#include "cmdutil.h"

static int
copy_data(struct sh_cmd *c, int in, int out)
{
	char *buf = malloc(128 * 1024);
	int r = 0;
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (fu_interrupted(c)) {
			r = -EINTR;
			break;
		}
		ssize_t n = read(in, buf, 128 * 1024);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				r = -errno;
				goto out;
			}
			off += w;
		}
	}
out:
	free(buf);
	return r;
}

/* -p: mode (without setuid/setgid) and times; ownership on the open fd. */
static int
preserve(struct sh_cmd *c, const struct fu_copy_opts *o, const char *src, const char *dst,
	 const struct stat *st, int fd)
{
	char qb[FU_QBUF];
	int status = 0, r;
	/*
	 * As GNU cp without privileges: EPERM (not ours to give) and EINVAL (an
	 * id this user namespace does not map, e.g. a file of the host's root
	 * seen as nobody) are not errors; the group alone is tried next.
	 */
	if (fd >= 0 && fchown(fd, st->st_uid, st->st_gid) < 0) {
		if (errno != EPERM && errno != EINVAL)
			status = fu_err(c, 1, o->name, "failed to preserve ownership for %s: %s",
					fu_q(qb, sizeof(qb), dst), strerror(errno));
		else
			(void)(fchown(fd, (uid_t)-1, st->st_gid) == 0);
	}
	mode_t mode = st->st_mode & 07777;
	if (mode & (S_ISUID | S_ISGID)) {
		status = fu_err(c, 1, o->name,
				"not preserving the setuid/setgid bits of %s: box-shell never sets "
				"setuid or setgid bits",
				fu_q(qb, sizeof(qb), src));
		mode &= ~(mode_t)(S_ISUID | S_ISGID);
	}
	if ((r = sh_fs_chmod(c->fs, dst, mode, true)) < 0)
		status = fu_err(c, 1, o->name, "preserving permissions for %s: %s",
				fu_q(qb, sizeof(qb), dst), strerror(-r));
	struct timespec ts[2] = {st->st_atim, st->st_mtim};
	if ((r = sh_fs_utimens(c->fs, dst, ts, !S_ISLNK(st->st_mode))) < 0)
		status = fu_err(c, 1, o->name, "preserving times for %s: %s",
				fu_q(qb, sizeof(qb), dst), strerror(-r));
	return status;
}

static int copy_any(struct sh_cmd *c, const struct fu_copy_opts *o, const char *src,
		    const char *dst, const struct stat *known, int dst_known, const struct stat *dst_st_in,
		    int depth);

static int
copy_dir(struct sh_cmd *c, const struct fu_copy_opts *o, const char *src, const char *dst,
	 const struct stat *st, int dst_known, const struct stat *dst_st_in, int depth)
{
	char qb[FU_QBUF], qb2[FU_QBUF];
	struct stat dst_st;
	int status = 0;
	int r;
	if (dst_known == 1)
		r = sh_fs_stat(c->fs, dst, &dst_st, true);
	else if (dst_known == 0) {
		dst_st = *dst_st_in;
		r = 0;
	} else
		r = dst_known;
	bool created = false;
	if (r == 0 && !S_ISDIR(dst_st.st_mode))
		return fu_err(c, 1, o->name, "cannot overwrite non-directory %s with directory %s",
			      fu_q(qb, sizeof(qb), dst), fu_q(qb2, sizeof(qb2), src));
	if (r < 0) {
		r = sh_fs_mkdir(c->fs, dst, (st->st_mode & 0777) | S_IRWXU);
		if (r < 0)
			return fu_err(c, 1, o->name, "cannot create directory %s: %s",
				      fu_q(qb, sizeof(qb), dst), strerror(-r));
		created = true;
		if (o->verbose)
			sh_out_printf(c->out_buf, "%s -> %s\n", fu_q(qb, sizeof(qb), src),
				      fu_q(qb2, sizeof(qb2), dst));
	}
	struct fu_dir d;
	r = fu_dir_read(c->fs, src, &d);
	if (r < 0)
		return fu_err(c, 1, o->name, "cannot access %s: %s", fu_q(qb, sizeof(qb), src),
			      strerror(-r));
	/* GNU's cp reads a directory in inode order (savedir's SORT_FASTREAD) */
	fu_dir_sort_ino(&d);
	fu_dir_stat_all(c->fs, src, &d);
	for (size_t i = 0; i < d.n && !fu_interrupted(c); i++) {
		char *s = fu_join(src, d.e[i].name), *t = fu_join(dst, d.e[i].name);
		struct stat cst = d.e[i].st;
		if (!s || !t) {
			free(s);
			free(t);
			status = 1;
			break;
		}
		r = d.e[i].st_err;
		if (r < 0)
			status = fu_err(c, 1, o->name, "cannot stat %s: %s",
					fu_q(qb, sizeof(qb), s), strerror(-r));
		else if (depth > 4096)
			status = fu_err(c, 1, o->name, "%s: %s", fu_q(qb, sizeof(qb), s),
					strerror(ELOOP));
		else if (copy_any(c, o, s, t, &cst, created ? -ENOENT : 1, NULL, depth + 1))
			status = 1;
		free(s);
		free(t);
	}
	fu_dir_free(&d);
	if (o->preserve) {
		if (preserve(c, o, src, dst, st, -1))
			status = 1;
	} else if (created && (st->st_mode & S_IRWXU) != S_IRWXU) {
		/* made writable to fill it; back to the source's mode (umask applied) */
		mode_t um = fu_umask();
		if ((r = sh_fs_chmod(c->fs, dst, st->st_mode & 0777 & ~um, true)) < 0)
			status = fu_err(c, 1, o->name, "setting permissions for %s: %s",
					fu_q(qb, sizeof(qb), dst), strerror(-r));
	}
	return status;
}

static int copy_any(struct sh_cmd *c, const struct fu_copy_opts *o, const char *src,
		    const char *dst, const struct stat *known, int dst_known, const struct stat *dst_st_in,
		    int depth);

int
fu_copy(struct sh_cmd *c, const struct fu_copy_opts *o, const char *src, const char *dst,
	const struct stat *known, int depth)
{
	return copy_any(c, o, src, dst, known, 1, NULL, depth);
}

/*
 * dst_known: 1 = nothing known about dst (stat it); 0 = it exists, *dst_st_in
 * is its lstat; negative = it is known not to exist (its errno), e.g. inside a
 * directory this copy just created — no read_metadata is asked then.
 */
static int
copy_any(struct sh_cmd *c, const struct fu_copy_opts *o, const char *src, const char *dst,
	 const struct stat *known, int dst_known, const struct stat *dst_st_in, int depth)
{
	char qb[FU_QBUF], qb2[FU_QBUF];
	struct stat st;
	int r;
	if (known)
		st = *known;
	else {
		bool follow = !o->no_deref && !o->recursive;
		r = sh_fs_stat(c->fs, src, &st, follow);
		if (r < 0)
			return fu_err(c, 1, o->name, "cannot stat %s: %s",
				      fu_q(qb, sizeof(qb), src), strerror(-r));
	}
	if (S_ISDIR(st.st_mode)) {
		if (!o->recursive)
			return fu_err(c, 1, o->name, "-r not specified; omitting directory %s",
				      fu_q(qb, sizeof(qb), src));
		if (depth == 0) {
			char *cs = NULL, *cd = NULL;
			bool inside = false;
			if (sh_fs_canon(c->fs, src, false, &cs) == 0 &&
			    sh_fs_canon(c->fs, dst, false, &cd) == 0) {
				size_t l = strlen(cs);
				inside = strncmp(cs, cd, l) == 0 &&
					 (cd[l] == '/' || cd[l] == 0 || strcmp(cs, "/") == 0);
			}
			free(cs);
			free(cd);
			if (inside)
				return fu_err(c, 1, o->name,
					      "cannot copy a directory, %s, into itself, %s",
					      fu_q(qb, sizeof(qb), src), fu_q(qb2, sizeof(qb2), dst));
		}
		return copy_dir(c, o, src, dst, &st, dst_known, dst_st_in, depth);
	}
	struct stat dst_st;
	bool dst_exists;
	if (dst_known == 1)
		dst_exists = sh_fs_stat(c->fs, dst, &dst_st, false) == 0;
	else if (dst_known == 0) {
		dst_st = *dst_st_in;
		dst_exists = true;
	} else
		dst_exists = false;
	if (dst_exists && dst_st.st_dev == st.st_dev && dst_st.st_ino == st.st_ino)
		return fu_err(c, 1, o->name, "%s and %s are the same file",
			      fu_q(qb, sizeof(qb), src), fu_q(qb2, sizeof(qb2), dst));
	if (dst_exists && o->no_clobber)
		return 0;
	if (dst_exists && S_ISDIR(dst_st.st_mode))
		return fu_err(c, 1, o->name, "cannot overwrite directory %s with non-directory",
			      fu_q(qb, sizeof(qb), dst));
	if (S_ISLNK(st.st_mode)) {
		char *target = NULL;
		r = sh_fs_readlink(c->fs, src, &target);
		if (r < 0)
			return fu_err(c, 1, o->name, "cannot read symbolic link %s: %s",
				      fu_q(qb, sizeof(qb), src), strerror(-r));
		if (dst_exists)
			(void)sh_fs_unlink(c->fs, dst);
		r = sh_fs_symlink(c->fs, target, dst);
		free(target);
		if (r < 0)
			return fu_err(c, 1, o->name, "cannot create symbolic link %s: %s",
				      fu_q(qb, sizeof(qb), dst), strerror(-r));
		if (o->preserve) {
			/* a link's own times (its mode is always 0777) */
			struct timespec ts[2] = {st.st_atim, st.st_mtim};
			if ((r = sh_fs_utimens(c->fs, dst, ts, false)) < 0)
				return fu_err(c, 1, o->name, "preserving times for %s: %s",
					      fu_q(qb, sizeof(qb), dst), strerror(-r));
		}
		if (o->verbose)
			sh_out_printf(c->out_buf, "%s -> %s\n", fu_q(qb, sizeof(qb), src),
				      fu_q(qb2, sizeof(qb2), dst));
		return 0;
	}
	if (!S_ISREG(st.st_mode))
		return fu_err(c, 1, o->name,
			      "cannot copy special file %s: not supported by box-shell's %s",
			      fu_q(qb, sizeof(qb), src), o->name);
	int in = sh_fs_open(c->fs, src, O_RDONLY | O_NOCTTY, 0);
	if (in < 0)
		return fu_err(c, 1, o->name, "cannot open %s for reading: %s",
			      fu_q(qb, sizeof(qb), src), strerror(-in));
	int out = sh_fs_open(c->fs, dst, O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY, st.st_mode & 0777);
	if (out < 0 && o->force && dst_exists && out != -ENOENT) {
		if (sh_fs_unlink(c->fs, dst) == 0)
			out = sh_fs_open(c->fs, dst, O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY,
					 st.st_mode & 0777);
	}
	if (out < 0) {
		close(in);
		return fu_err(c, 1, o->name, "cannot create regular file %s: %s",
			      fu_q(qb, sizeof(qb), dst), strerror(-out));
	}
	int status = 0;
	r = copy_data(c, in, out);
	if (r < 0)
		status = fu_err(c, 1, o->name, "error copying %s to %s: %s",
				fu_q(qb, sizeof(qb), src), fu_q(qb2, sizeof(qb2), dst), strerror(-r));
	if (!status && o->verbose)
		sh_out_printf(c->out_buf, "%s -> %s\n", fu_q(qb, sizeof(qb), src),
			      fu_q(qb2, sizeof(qb2), dst));
	if (!status && o->preserve && preserve(c, o, src, dst, &st, out))
		status = 1;
	close(in);
	if (close(out) < 0 && !status)
		status = fu_err(c, 1, o->name, "failed to close %s: %s", fu_q(qb, sizeof(qb), dst),
				strerror(errno));
	return status;
}

struct cp_opts {
	struct fu_copy_opts co;
	bool no_target_dir;
	const char *target_dir;
	int bad;
	struct sh_cmd *c;
	bool is_mv;
};

static int
cp_on(void *ctx, int id, const char *arg)
{
	struct cp_opts *o = ctx;
	switch (id) {
	case 'r':
	case 'R': o->co.recursive = true; break;
	case 'p': o->co.preserve = true; break;
	case 'a': o->co.recursive = o->co.preserve = o->co.no_deref = true; break;
	case 'd':
	case 'P': o->co.no_deref = true; break;
	case 'f': o->co.force = true; o->co.no_clobber = false; break;
	case 'n': o->co.no_clobber = true; o->co.force = false; break;
	case 'v': o->co.verbose = true; break;
	case 'T': o->no_target_dir = true; break;
	case 't': o->target_dir = arg; break;
	case 256:
		/* --preserve[=mode,ownership,timestamps,all]: all of them, as -p */
		if (arg && *arg) {
			char tmp[256];
			snprintf(tmp, sizeof(tmp), "%s", arg);
			for (char *save = NULL, *w = strtok_r(tmp, ",", &save); w;
			     w = strtok_r(NULL, ",", &save))
				if (strcmp(w, "mode") && strcmp(w, "ownership") &&
				    strcmp(w, "timestamps") && strcmp(w, "all") &&
				    strcmp(w, "links")) {
					return fu_usage_error(o->c, "cp", 1,
							      "invalid argument '%s' for "
							      "'--preserve' (supported: mode, "
							      "ownership, timestamps, links, all)",
							      w);
				}
		}
		o->co.preserve = true;
		break;
	default: break;
	}
	return 0;
}

static const struct fu_opt cp_table[] = {
	{'r', "recursive", FU_NOARG}, {'R', NULL, FU_NOARG},
	{'p', NULL, FU_NOARG},        {'a', "archive", FU_NOARG},
	{'d', NULL, FU_NOARG},        {'P', "no-dereference", FU_NOARG},
	{'f', "force", FU_NOARG},     {'n', "no-clobber", FU_NOARG},
	{'v', "verbose", FU_NOARG},   {'T', "no-target-directory", FU_NOARG},
	{'t', "target-directory", FU_ARG}, {256, "preserve", FU_OPTARG},
	{0, NULL, 0},
};

static const struct fu_opt mv_table[] = {
	{'f', "force", FU_NOARG},   {'n', "no-clobber", FU_NOARG},
	{'v', "verbose", FU_NOARG}, {'T', "no-target-directory", FU_NOARG},
	{'t', "target-directory", FU_ARG}, {0, NULL, 0},
};

static const char cp_usage[] =
	"Usage: cp [OPTION]... SOURCE DEST\n"
	"  or:  cp [OPTION]... SOURCE... DIRECTORY\n"
	"  or:  cp [OPTION]... -t DIRECTORY SOURCE...\n"
	"Supported options (box-shell's own cp; setuid/setgid bits are never set):\n"
	"  -a, --archive            same as -dR --preserve=all\n"
	"  -d, -P, --no-dereference never follow symbolic links in SOURCE\n"
	"  -f, --force              remove a destination that cannot be opened, and retry\n"
	"  -n, --no-clobber         do not overwrite an existing file\n"
	"  -p, --preserve[=LIST]    preserve mode, ownership, timestamps\n"
	"  -r, -R, --recursive      copy directories recursively\n"
	"  -t, --target-directory=DIRECTORY  copy all SOURCE arguments into DIRECTORY\n"
	"  -T, --no-target-directory  treat DEST as a normal file\n"
	"  -v, --verbose            explain what is being done\n"
	"      --help               display this help and exit\n";

static const char mv_usage[] =
	"Usage: mv [OPTION]... SOURCE DEST\n"
	"  or:  mv [OPTION]... SOURCE... DIRECTORY\n"
	"  or:  mv [OPTION]... -t DIRECTORY SOURCE...\n"
	"Supported options (box-shell's own mv):\n"
	"  -f, --force              do not prompt before overwriting (default)\n"
	"  -n, --no-clobber         do not overwrite an existing file\n"
	"  -t, --target-directory=DIRECTORY  move all SOURCE arguments into DIRECTORY\n"
	"  -T, --no-target-directory  treat DEST as a normal file\n"
	"  -v, --verbose            explain what is being done\n"
	"      --help               display this help and exit\n";

/* The directory part of p ("." when none), malloc'd. */
static char *
dir_of(const char *p)
{
	size_t len = strlen(p);
	while (len > 1 && p[len - 1] == '/')
		len--;
	while (len > 0 && p[len - 1] != '/')
		len--;
	while (len > 1 && p[len - 1] == '/')
		len--;
	return len ? strndup(p, len) : strdup(".");
}

/*
 * Whether src and dst are on different file systems: rename(2) would fail
 * with EXDEV, which fsops cannot tell from a symlink swapped into the path,
 * so mv asks first. Same directory: no question (no decision) asked; else
 * src's lstat and (unless the caller knows it: the target directory's) the
 * destination directory's stat, each a read_metadata.
 */
static bool
mv_cross_device(struct sh_cmd *c, const char *src, const char *dst, bool dst_dev_known,
		dev_t dst_dev, struct stat *src_st, bool *have_src_st)
{
	char *sd = dir_of(src), *dd = dir_of(dst);
	bool same_dir = sd && dd && strcmp(sd, dd) == 0;
	struct stat dst_st;
	struct stat *st = src_st;
	bool cross = false;
	*have_src_st = false;
	if (!same_dir && sh_fs_stat(c->fs, src, st, false) == 0) {
		*have_src_st = true;
		if (!dst_dev_known && dd && sh_fs_stat(c->fs, dd, &dst_st, true) == 0) {
			dst_dev = dst_st.st_dev;
			dst_dev_known = true;
		}
		cross = dst_dev_known && st->st_dev != dst_dev;
	}
	free(sd);
	free(dd);
	return cross;
}

static int
mv_one(struct sh_cmd *c, const struct cp_opts *o, const char *src, const char *dst,
       bool dst_dev_known, dev_t dst_dev)
{
	char qb[FU_QBUF], qb2[FU_QBUF];
	struct stat st;
	if (o->co.no_clobber && sh_fs_stat(c->fs, dst, &st, false) == 0)
		return 0;
	bool have_st = false;
	int r = mv_cross_device(c, src, dst, dst_dev_known, dst_dev, &st, &have_st)
			? -EXDEV
			: sh_fs_rename(c->fs, src, dst);
	if (r == -EXDEV) {
		struct fu_copy_opts co = {.recursive = true, .preserve = true, .no_deref = true,
					  .force = true, .mv = true, .name = "mv"};
		r = have_st ? 0 : sh_fs_stat(c->fs, src, &st, false);
		if (r < 0)
			return fu_err(c, 1, "mv", "cannot stat %s: %s", fu_q(qb, sizeof(qb), src),
				      strerror(-r));
		struct stat dst_st;
		int dst_r = sh_fs_stat(c->fs, dst, &dst_st, false);
		if (dst_r == 0 && S_ISDIR(dst_st.st_mode) != S_ISDIR(st.st_mode))
			return fu_err(c, 1, "mv",
				      S_ISDIR(st.st_mode)
					      ? "cannot overwrite non-directory %s with directory %s"
					      : "cannot overwrite directory %s with non-directory%s",
				      fu_q(qb, sizeof(qb), dst),
				      S_ISDIR(st.st_mode) ? fu_q(qb2, sizeof(qb2), src) : "");
		if (copy_any(c, &co, src, dst, &st, dst_r, dst_r == 0 ? &dst_st : NULL, 0))
			return 1;
		if (fu_remove_tree(c, "mv", src, S_ISDIR(st.st_mode), false, 0))
			return 1;
	} else if (r < 0) {
		switch (-r) {
		case ENOENT:
			if (sh_fs_stat(c->fs, src, &st, false) == -ENOENT)
				return fu_err(c, 1, "mv", "cannot stat %s: %s",
					      fu_q(qb, sizeof(qb), src), strerror(ENOENT));
			break;
		case EINVAL:
			return fu_err(c, 1, "mv", "cannot move %s to a subdirectory of itself, %s",
				      fu_q(qb, sizeof(qb), src), fu_q(qb2, sizeof(qb2), dst));
		case ENOTDIR:
			return fu_err(c, 1, "mv", "cannot overwrite non-directory %s with directory %s",
				      fu_q(qb, sizeof(qb), dst), fu_q(qb2, sizeof(qb2), src));
		case EISDIR:
			return fu_err(c, 1, "mv", "cannot overwrite directory %s with non-directory",
				      fu_q(qb, sizeof(qb), dst));
		default: break;
		}
		return fu_err(c, 1, "mv", "cannot move %s to %s: %s", fu_q(qb, sizeof(qb), src),
			      fu_q(qb2, sizeof(qb2), dst), strerror(-r));
	}
	if (o->co.verbose)
		sh_out_printf(c->out_buf, "renamed %s -> %s\n", fu_q(qb, sizeof(qb), src),
			      fu_q(qb2, sizeof(qb2), dst));
	return 0;
}

static int
cp_mv_main(struct sh_cmd *c, int argc, char **argv, bool is_mv)
{
	const char *name = is_mv ? "mv" : "cp";
	struct cp_opts o = {.c = c, .is_mv = is_mv};
	o.co.name = name;
	o.co.mv = is_mv;
	struct fu_parse p = {name,	    is_mv ? mv_table : cp_table, true, 1,
			     is_mv ? mv_usage : cp_usage, cp_on, &o};
	char **ops, qb[FU_QBUF];
	int n, status = 0;
	int r = fu_getopt(c, &p, argc, argv, &ops, &n);
	if (r == FU_HELP)
		return 0;
	if (r)
		return r;
	const char *target = o.target_dir;
	int nsrc = n;
	if (!target) {
		if (n == 0) {
			free(ops);
			return fu_usage_error(c, name, 1, "missing file operand");
		}
		if (n == 1) {
			int st = fu_usage_error(c, name, 1, "missing destination file operand after %s",
						fu_q(qb, sizeof(qb), ops[0]));
			free(ops);
			return st;
		}
		target = ops[n - 1];
		nsrc = n - 1;
	} else if (n == 0) {
		free(ops);
		return fu_usage_error(c, name, 1, "missing file operand");
	}
	bool into_dir = o.target_dir != NULL;
	int target_err = 0;
	bool target_dev_known = false;
	dev_t target_dev = 0;
	if (!into_dir && !o.no_target_dir) {
		struct stat st;
		target_err = sh_fs_stat(c->fs, target, &st, true);
		if (target_err == 0 && S_ISDIR(st.st_mode)) {
			into_dir = true;
			target_dev_known = true;
			target_dev = st.st_dev;
		}
	}
	if (o.no_target_dir && nsrc > 1) {
		int st = fu_usage_error(c, name, 1, "extra operand %s", fu_q(qb, sizeof(qb), ops[2]));
		free(ops);
		return st;
	}
	if (!into_dir && nsrc > 1) {
		int st = fu_err(c, 1, name, "target %s: %s", fu_q(qb, sizeof(qb), target),
				strerror(target_err < 0 ? -target_err : ENOTDIR));
		free(ops);
		return st;
	}
	for (int i = 0; i < nsrc && !fu_interrupted(c); i++) {
		char *dst = NULL;
		if (into_dir) {
			char *base = fu_basename(ops[i]);
			dst = base ? fu_join(target, base) : NULL;
			free(base);
		} else
			dst = strdup(target);
		if (!dst) {
			status = fu_err(c, 1, name, "memory exhausted");
			break;
		}
		if (is_mv)
			r = mv_one(c, &o, ops[i], dst, target_dev_known, target_dev);
		else if (!into_dir && !o.no_target_dir)
			/* the target was stat'ed (followed) above: known missing or not a dir */
			r = copy_any(c, &o.co, ops[i], dst, NULL, target_err < 0 ? target_err : 1,
				     NULL, 0);
		else
			r = fu_copy(c, &o.co, ops[i], dst, NULL, 0);
		if (r)
			status = 1;
		free(dst);
	}
	free(ops);
	return sh_cmd_finish(c, status);
}

int sh_cmd_cp(struct sh_cmd *c, int argc, char **argv);
int
sh_cmd_cp(struct sh_cmd *c, int argc, char **argv)
{
	return cp_mv_main(c, argc, argv, false);
}

int sh_cmd_mv(struct sh_cmd *c, int argc, char **argv);
int
sh_cmd_mv(struct sh_cmd *c, int argc, char **argv)
{
	return cp_mv_main(c, argc, argv, true);
}
