/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_chmod.c — box-shell's own `chmod` (octal and symbolic modes, -R -c -f
 * -v), `mkdir` (-p -m -v) and `install` (-d -D -m -p -t -T -v), and the
 * mode arithmetic they share (GNU's: a who-less clause spares the umask's
 * bits; an octal mode of fewer than 5 digits keeps a directory's
 * setuid/setgid bits).
 * None of them ever sets a setuid or setgid bit: a mode asking for one is
 * refused with an error saying why (box-shell never sets them), and
 * sh_fs_chmod refuses them too.
 * Decisions: chmod = read_metadata then set_permissions per file (-R: a
 * directory's entries read_metadata in one batch); mkdir = create_dir per
 * directory made (+ set_permissions with -m); install = read_content source,
 * write_content destination, set_permissions.
 * Trusts: nothing in argv or the file system; /proc/self/status for the
 * umask (the process's own).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_fileutil.h"
#include "cmdutil.h"

#define SETID (S_ISUID | S_ISGID)

mode_t
fu_umask(void)
{
	/* umask(2) cannot be read without being set, and the shell's process
	 * must not change it under a thread that is creating files. */
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	mode_t m = 022;
	if (!f)
		return m;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "Umask:", 6) == 0) {
			m = (mode_t)strtoul(line + 6, NULL, 8) & 0777;
			break;
		}
	fclose(f);
	return m;
}

int
fu_mode_apply(const char *spec, mode_t old, bool is_dir, mode_t umask_v, mode_t *out)
{
	mode_t cur = old & 07777;
	if (!*spec)
		return -EINVAL;
	if (isdigit((unsigned char)*spec)) {
		size_t digits = 0;
		unsigned long v = 0;
		for (const char *p = spec; *p; p++, digits++) {
			if (*p < '0' || *p > '7')
				return -EINVAL;
			v = v * 8 + (unsigned long)(*p - '0');
			if (v > 07777)
				return -EINVAL;
		}
		mode_t m = (mode_t)v;
		if (is_dir && digits < 5)
			m |= cur & SETID;
		*out = m;
		return 0;
	}
	const char *p = spec;
	for (;;) {
		mode_t who = 0;
		bool who_given = false;
		for (; *p && strchr("ugoa", *p); p++) {
			who_given = true;
			switch (*p) {
			case 'u': who |= S_ISUID | S_IRWXU; break;
			case 'g': who |= S_ISGID | S_IRWXG; break;
			case 'o': who |= S_ISVTX | S_IRWXO; break;
			default: who |= 07777; break;
			}
		}
		if (!who_given)
			who = 07777;
		if (!*p || !strchr("+-=", *p))
			return -EINVAL;
		while (*p && strchr("+-=", *p)) {
			char op = *p++;
			mode_t val = 0;
			if (*p && strchr("ugo", *p)) {
				mode_t src = 0;
				switch (*p) {
				case 'u': src = (cur & S_IRWXU) >> 6; break;
				case 'g': src = (cur & S_IRWXG) >> 3; break;
				default: src = cur & S_IRWXO; break;
				}
				val = src << 6 | src << 3 | src;
				p++;
			} else {
				for (; *p && strchr("rwxXst", *p); p++) {
					switch (*p) {
					case 'r': val |= 0444; break;
					case 'w': val |= 0222; break;
					case 'x': val |= 0111; break;
					case 'X':
						if (is_dir || (cur & 0111))
							val |= 0111;
						break;
					case 's': val |= SETID; break;
					default: val |= S_ISVTX; break;
					}
				}
			}
			val &= who;
			if (!who_given)
				val &= ~umask_v;
			switch (op) {
			case '+': cur |= val; break;
			case '-': cur &= ~val; break;
			default: {
				mode_t clear = who;
				if (!who_given)
					clear = 07777 & ~umask_v;
				/* like GNU: '=' keeps a directory's setuid/setgid unless named */
				if (is_dir)
					clear &= ~(mode_t)SETID | (val & SETID);
				cur = (cur & ~clear) | val;
				break;
			}
			}
		}
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p)
			return -EINVAL;
		break;
	}
	*out = cur;
	return 0;
}

static const char never_setid[] = "box-shell never sets setuid or setgid bits";

/* ---- chmod ---- */

struct chmod_ctx {
	struct sh_cmd *c;
	bool R, changes, quiet, verbose;
	const char *mode;
	mode_t umask_v;
	int status;
};

static void
chmod_report(struct chmod_ctx *x, const char *path, mode_t old, mode_t new_mode, bool ok)
{
	char qb[FU_QBUF], a[11], b[11];
	bool changed = (old & 07777) != (new_mode & 07777);
	if (!x->verbose && !(x->changes && changed))
		return;
	fu_mode_string(old, a);
	fu_mode_string(new_mode, b);
	if (!ok)
		sh_out_printf(x->c->out_buf, "failed to change mode of %s from %04o (%s) to %04o (%s)\n",
			      fu_q(qb, sizeof(qb), path), old & 07777, a + 1, new_mode & 07777,
			      b + 1);
	else if (changed)
		sh_out_printf(x->c->out_buf, "mode of %s changed from %04o (%s) to %04o (%s)\n",
			      fu_q(qb, sizeof(qb), path), old & 07777, a + 1, new_mode & 07777,
			      b + 1);
	else
		sh_out_printf(x->c->out_buf, "mode of %s retained as %04o (%s)\n",
			      fu_q(qb, sizeof(qb), path), old & 07777, a + 1);
}

static void chmod_file(struct chmod_ctx *x, const char *path, const struct stat *st, int depth);

static void
chmod_dir_entries(struct chmod_ctx *x, const char *path, int depth)
{
	char qb[FU_QBUF];
	struct fu_dir d;
	int r = fu_dir_read(x->c->fs, path, &d);
	if (r < 0) {
		if (!x->quiet)
			fu_err(x->c, 1, "chmod", "cannot read directory %s: %s",
			       fu_q(qb, sizeof(qb), path), strerror(-r));
		x->status = 1;
		return;
	}
	fu_dir_stat_all(x->c->fs, path, &d);
	for (size_t i = 0; i < d.n && !fu_interrupted(x->c); i++) {
		char *child = fu_join(path, d.e[i].name);
		struct stat st = d.e[i].st;
		if (!child)
			break;
		r = d.e[i].st_err;
		if (r < 0) {
			if (!x->quiet)
				fu_err(x->c, 1, "chmod", "cannot access %s: %s",
				       fu_q(qb, sizeof(qb), child), strerror(-r));
			x->status = 1;
		} else if (!S_ISLNK(st.st_mode))
			chmod_file(x, child, &st, depth + 1);
		free(child);
	}
	fu_dir_free(&d);
}

static void
chmod_file(struct chmod_ctx *x, const char *path, const struct stat *st, int depth)
{
	char qb[FU_QBUF];
	mode_t nm;
	if (fu_mode_apply(x->mode, st->st_mode, S_ISDIR(st->st_mode), x->umask_v, &nm) < 0) {
		x->status = fu_usage_error(x->c, "chmod", 1, "invalid mode: %s",
					   fu_q(qb, sizeof(qb), x->mode));
		return;
	}
	if (nm & SETID) {
		if (!x->quiet)
			fu_err(x->c, 1, "chmod",
			       (nm & SETID & ~st->st_mode)
				       ? "cannot set the setuid/setgid bits of %s: %s"
				       : "cannot change the mode of %s, which keeps setuid/setgid "
					 "bits (clear them with u-s,g-s): %s",
			       fu_q(qb, sizeof(qb), path), never_setid);
		x->status = 1;
	} else {
		int r = sh_fs_chmod(x->c->fs, path, nm, true);
		if (r < 0) {
			if (!x->quiet)
				fu_err(x->c, 1, "chmod", "changing permissions of %s: %s",
				       fu_q(qb, sizeof(qb), path), strerror(-r));
			x->status = 1;
			chmod_report(x, path, st->st_mode, nm, false);
		} else
			chmod_report(x, path, st->st_mode, nm, true);
	}
	if (x->R && S_ISDIR(st->st_mode) && depth < 4096)
		chmod_dir_entries(x, path, depth);
}

static const char chmod_usage[] =
	"Usage: chmod [OPTION]... MODE[,MODE]... FILE...\n"
	"Change the mode of each FILE to MODE (octal, or [ugoa]*([-+=]([rwxXt]*|[ugo]))+).\n"
	"box-shell's own chmod never sets setuid or setgid bits. Supported options:\n"
	"  -c, --changes          like verbose but report only when a change is made\n"
	"  -f, --silent, --quiet  suppress most error messages\n"
	"  -v, --verbose          output a diagnostic for every file processed\n"
	"  -R, --recursive        change files and directories recursively\n"
	"      --help             display this help and exit\n";

int sh_cmd_chmod(struct sh_cmd *c, int argc, char **argv);
int
sh_cmd_chmod(struct sh_cmd *c, int argc, char **argv)
{
	struct chmod_ctx x = {.c = c};
	char **ops = calloc((size_t)argc + 1, sizeof(*ops)), qb[FU_QBUF];
	int n = 0;
	bool dashdash = false;
	if (!ops)
		return fu_err(c, 1, "chmod", "memory exhausted");
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		if (dashdash || a[0] != '-' || !a[1]) {
			ops[n++] = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			dashdash = true;
			continue;
		}
		if (a[1] == '-') {
			const char *l = a + 2;
			size_t len = strlen(l);
			if (len >= 3 && strncmp("help", l, len) == 0) {
				sh_out_printf(c->out_buf, "%s", chmod_usage);
				free(ops);
				return 0;
			} else if (len >= 3 && strncmp("recursive", l, len) == 0)
				x.R = true;
			else if (len >= 1 && strncmp("changes", l, len) == 0)
				x.changes = true;
			else if (len >= 1 && (strncmp("silent", l, len) == 0 ||
					      strncmp("quiet", l, len) == 0))
				x.quiet = true;
			else if (len >= 1 && strncmp("verbose", l, len) == 0)
				x.verbose = true;
			else {
				free(ops);
				return fu_usage_error(c, "chmod", 1, "unrecognized option '%s'", a);
			}
			continue;
		}
		/* "-w", "-x,g+r": a mode, as GNU's chmod takes it */
		if (!x.mode && strspn(a + 1, "rwxXst") > 0 &&
		    strspn(a + 1, "rwxXstugoa,+-=") == strlen(a + 1)) {
			ops[n++] = a;
			continue;
		}
		for (const char *q = a + 1; *q; q++) {
			switch (*q) {
			case 'R': x.R = true; break;
			case 'c': x.changes = true; break;
			case 'f': x.quiet = true; break;
			case 'v': x.verbose = true; break;
			default:
				free(ops);
				return fu_usage_error(c, "chmod", 1, "invalid option -- '%c'", *q);
			}
		}
	}
	if (n == 0) {
		free(ops);
		return fu_usage_error(c, "chmod", 1, "missing operand");
	}
	x.mode = ops[0];
	if (n == 1) {
		free(ops);
		return fu_usage_error(c, "chmod", 1, "missing operand after %s",
				      fu_q(qb, sizeof(qb), x.mode));
	}
	x.umask_v = fu_umask();
	mode_t probe;
	if (fu_mode_apply(x.mode, 0, false, x.umask_v, &probe) < 0) {
		free(ops);
		return fu_usage_error(c, "chmod", 1, "invalid mode: %s", fu_q(qb, sizeof(qb), x.mode));
	}
	for (int i = 1; i < n && !fu_interrupted(c); i++) {
		struct stat st;
		int r = sh_fs_stat(c->fs, ops[i], &st, true);
		if (r < 0) {
			if (!x.quiet)
				fu_err(c, 1, "chmod", "cannot access %s: %s",
				       fu_q(qb, sizeof(qb), ops[i]), strerror(-r));
			x.status = 1;
			continue;
		}
		chmod_file(&x, ops[i], &st, 0);
	}
	free(ops);
	return sh_cmd_finish(c, x.status);
}

/* ---- mkdir ---- */

struct mkdir_opts {
	bool p, v;
	const char *mode;
};

static int
mkdir_on(void *ctx, int id, const char *arg)
{
	struct mkdir_opts *o = ctx;
	if (id == 'p')
		o->p = true;
	else if (id == 'v')
		o->v = true;
	else if (id == 'm')
		o->mode = arg;
	return 0;
}

static const struct fu_opt mkdir_table[] = {
	{'p', "parents", FU_NOARG}, {'v', "verbose", FU_NOARG}, {'m', "mode", FU_ARG}, {0, NULL, 0},
};

static const char mkdir_usage[] =
	"Usage: mkdir [OPTION]... DIRECTORY...\n"
	"Create the DIRECTORY(ies), if they do not already exist. Supported options:\n"
	"  -m, --mode=MODE   set file mode (as in chmod; never setuid/setgid), not a=rwx - umask\n"
	"  -p, --parents     no error if existing, make parent directories as needed\n"
	"  -v, --verbose     print a message for each created directory\n"
	"      --help        display this help and exit\n";

/* mkdir -p: try the directory; on ENOENT make its parent first. */
static int
mkdir_parents(struct sh_cmd *c, const char *name, const char *path, mode_t mode, bool verbose,
	      int depth)
{
	char qb[FU_QBUF];
	int r = sh_fs_mkdir(c->fs, path, mode);
	if (r == -ENOENT && depth < 4096) {
		char *parent = strdup(path);
		if (!parent)
			return -ENOMEM;
		size_t len = strlen(parent);
		while (len > 1 && parent[len - 1] == '/')
			parent[--len] = 0;
		char *slash = strrchr(parent, '/');
		if (slash && slash != parent) {
			*slash = 0;
			mode_t pm = (0777 & ~fu_umask()) | S_IWUSR | S_IXUSR;
			r = mkdir_parents(c, name, parent, pm, verbose, depth + 1);
			if (r == 0 || r == -EEXIST)
				r = sh_fs_mkdir(c->fs, path, mode);
		} else
			r = -ENOENT;
		free(parent);
		if (r == 1)
			return 1;
	}
	if (r == 0 && verbose)
		sh_out_printf(c->out_buf, "%s: created directory %s\n", name,
			      fu_q(qb, sizeof(qb), path));
	return r;
}

static int
mkdir_is_dir(struct sh_cmd *c, const char *path)
{
	struct stat st;
	return sh_fs_stat(c->fs, path, &st, true) == 0 && S_ISDIR(st.st_mode);
}

int sh_cmd_mkdir(struct sh_cmd *c, int argc, char **argv);
int
sh_cmd_mkdir(struct sh_cmd *c, int argc, char **argv)
{
	struct mkdir_opts o = {0};
	struct fu_parse p = {"mkdir", mkdir_table, true, 1, mkdir_usage, mkdir_on, &o};
	char **ops, qb[FU_QBUF];
	int n, status = 0;
	int r = fu_getopt(c, &p, argc, argv, &ops, &n);
	if (r == FU_HELP)
		return 0;
	if (r)
		return r;
	mode_t um = fu_umask(), mode = 0777 & ~um;
	if (o.mode) {
		if (fu_mode_apply(o.mode, 0777, true, um, &mode) < 0) {
			free(ops);
			return fu_err(c, 1, "mkdir", "invalid mode %s", fu_q(qb, sizeof(qb), o.mode));
		}
		if (mode & SETID) {
			free(ops);
			return fu_err(c, 1, "mkdir", "cannot set the setuid/setgid bits of mode %s: %s",
				      fu_q(qb, sizeof(qb), o.mode), never_setid);
		}
	}
	if (n == 0) {
		free(ops);
		return fu_usage_error(c, "mkdir", 1, "missing operand");
	}
	for (int i = 0; i < n && !fu_interrupted(c); i++) {
		if (o.p) {
			r = mkdir_parents(c, "mkdir", ops[i], o.mode ? mode : 0777, o.v, 0);
			if (r == -EEXIST && mkdir_is_dir(c, ops[i]))
				continue;
		} else {
			r = sh_fs_mkdir(c->fs, ops[i], o.mode ? mode : 0777);
			if (r == 0 && o.v)
				sh_out_printf(c->out_buf, "mkdir: created directory %s\n",
					      fu_q(qb, sizeof(qb), ops[i]));
		}
		if (r < 0) {
			status = fu_err(c, 1, "mkdir", "cannot create directory %s: %s",
					fu_q(qb, sizeof(qb), ops[i]), strerror(-r));
			continue;
		}
		/* -m is exact: the umask does not apply to it */
		if (o.mode && (mode & ~(0777 & ~um)) && (r = sh_fs_chmod(c->fs, ops[i], mode, true)) < 0)
			status = fu_err(c, 1, "mkdir", "cannot set permissions of %s: %s",
					fu_q(qb, sizeof(qb), ops[i]), strerror(-r));
	}
	free(ops);
	return sh_cmd_finish(c, status);
}

/* ---- install ---- */

struct install_opts {
	bool d, D, p, v, T;
	const char *mode, *target_dir;
	struct sh_cmd *c;
};

static int
install_on(void *ctx, int id, const char *arg)
{
	struct install_opts *o = ctx;
	switch (id) {
	case 'd': o->d = true; break;
	case 'D': o->D = true; break;
	case 'p': o->p = true; break;
	case 'v': o->v = true; break;
	case 'T': o->T = true; break;
	case 'c': break;
	case 'm': o->mode = arg; break;
	case 't': o->target_dir = arg; break;
	case 'o':
	case 'g':
		return fu_err(o->c, 1, "install", "-%c is not supported by box-shell's install",
			      id);
	default: break;
	}
	return 0;
}

static const struct fu_opt install_table[] = {
	{'d', "directory", FU_NOARG}, {'D', NULL, FU_NOARG},
	{'p', "preserve-timestamps", FU_NOARG}, {'v', "verbose", FU_NOARG},
	{'T', "no-target-directory", FU_NOARG}, {'c', NULL, FU_NOARG},
	{'m', "mode", FU_ARG}, {'t', "target-directory", FU_ARG},
	{'o', "owner", FU_ARG}, {'g', "group", FU_ARG}, {0, NULL, 0},
};

static const char install_usage[] =
	"Usage: install [OPTION]... [-T] SOURCE DEST\n"
	"  or:  install [OPTION]... SOURCE... DIRECTORY\n"
	"  or:  install [OPTION]... -t DIRECTORY SOURCE...\n"
	"  or:  install [OPTION]... -d DIRECTORY...\n"
	"Supported options (box-shell's own install; never setuid/setgid, no -o/-g):\n"
	"  -c                  (ignored)\n"
	"  -d, --directory     treat all arguments as directory names; create them\n"
	"  -D                  create all leading components of DEST\n"
	"  -m, --mode=MODE     set permission mode (as in chmod), instead of rwxr-xr-x\n"
	"  -p, --preserve-timestamps  apply the access/modification times of SOURCE\n"
	"  -t, --target-directory=DIRECTORY  copy all SOURCE arguments into DIRECTORY\n"
	"  -T, --no-target-directory  treat DEST as a normal file\n"
	"  -v, --verbose       print the name of each created file or directory\n"
	"      --help          display this help and exit\n";

static int
install_file(struct sh_cmd *c, const struct install_opts *o, const char *src, const char *dst,
	     mode_t mode)
{
	char qb[FU_QBUF], qb2[FU_QBUF];
	struct stat st, dst_st;
	int r = sh_fs_stat(c->fs, src, &st, true);
	if (r < 0)
		return fu_err(c, 1, "install", "cannot stat %s: %s", fu_q(qb, sizeof(qb), src),
			      strerror(-r));
	if (S_ISDIR(st.st_mode))
		return fu_err(c, 1, "install", "omitting directory %s", fu_q(qb, sizeof(qb), src));
	if (sh_fs_stat(c->fs, dst, &dst_st, false) == 0) {
		if (S_ISDIR(dst_st.st_mode))
			return fu_err(c, 1, "install", "cannot overwrite directory %s with non-directory",
				      fu_q(qb, sizeof(qb), dst));
		if (dst_st.st_dev == st.st_dev && dst_st.st_ino == st.st_ino)
			return fu_err(c, 1, "install", "%s and %s are the same file",
				      fu_q(qb, sizeof(qb), src), fu_q(qb2, sizeof(qb2), dst));
		/* GNU's install replaces the file (a running binary stays intact) */
		if (!S_ISDIR(dst_st.st_mode))
			(void)sh_fs_unlink(c->fs, dst);
	}
	int in = sh_fs_open(c->fs, src, O_RDONLY | O_NOCTTY, 0);
	if (in < 0)
		return fu_err(c, 1, "install", "cannot open %s for reading: %s",
			      fu_q(qb, sizeof(qb), src), strerror(-in));
	int out = sh_fs_open(c->fs, dst, O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY, 0600);
	if (out < 0) {
		close(in);
		return fu_err(c, 1, "install", "cannot create regular file %s: %s",
			      fu_q(qb, sizeof(qb), dst), strerror(-out));
	}
	int status = 0;
	char *buf = malloc(128 * 1024);
	ssize_t k = 0;
	while (buf && (k = read(in, buf, 128 * 1024)) > 0) {
		for (ssize_t off = 0; off < k;) {
			ssize_t w = write(out, buf + off, (size_t)(k - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				k = -1;
				break;
			}
			off += w;
		}
		if (k < 0)
			break;
	}
	if (!buf || k < 0)
		status = fu_err(c, 1, "install", "error copying %s to %s: %s",
				fu_q(qb, sizeof(qb), src), fu_q(qb2, sizeof(qb2), dst),
				strerror(buf ? errno : ENOMEM));
	free(buf);
	close(in);
	close(out);
	if (status)
		return status;
	if ((r = sh_fs_chmod(c->fs, dst, mode, true)) < 0)
		return fu_err(c, 1, "install", "cannot change permissions of %s: %s",
			      fu_q(qb, sizeof(qb), dst), strerror(-r));
	if (o->p) {
		struct timespec ts[2] = {st.st_atim, st.st_mtim};
		if ((r = sh_fs_utimens(c->fs, dst, ts, true)) < 0)
			return fu_err(c, 1, "install", "cannot set timestamps for %s: %s",
				      fu_q(qb, sizeof(qb), dst), strerror(-r));
	}
	if (o->v)
		sh_out_printf(c->out_buf, "%s -> %s\n", fu_q(qb, sizeof(qb), src),
			      fu_q(qb2, sizeof(qb2), dst));
	return 0;
}

static int
install_mkdir_p(struct sh_cmd *c, const char *path, bool verbose)
{
	int r = mkdir_parents(c, "install", path, 0777 & ~fu_umask(), false, 0);
	if (r == -EEXIST && mkdir_is_dir(c, path))
		return 0;
	if (r == 0 && verbose) {
		char qb[FU_QBUF];
		sh_out_printf(c->out_buf, "install: creating directory %s\n",
			      fu_q(qb, sizeof(qb), path));
	}
	return r;
}

int sh_cmd_install(struct sh_cmd *c, int argc, char **argv);
int
sh_cmd_install(struct sh_cmd *c, int argc, char **argv)
{
	struct install_opts o = {.c = c};
	struct fu_parse p = {"install", install_table, true, 1, install_usage, install_on, &o};
	char **ops, qb[FU_QBUF];
	int n, status = 0;
	int r = fu_getopt(c, &p, argc, argv, &ops, &n);
	if (r == FU_HELP)
		return 0;
	if (r)
		return r;
	mode_t mode = 0755;
	if (o.mode && fu_mode_apply(o.mode, 0, false, 0, &mode) < 0) {
		free(ops);
		return fu_err(c, 1, "install", "invalid mode %s", fu_q(qb, sizeof(qb), o.mode));
	}
	if (mode & SETID) {
		free(ops);
		return fu_err(c, 1, "install", "cannot set the setuid/setgid bits of mode %s: %s",
			      fu_q(qb, sizeof(qb), o.mode), never_setid);
	}
	if (o.d) {
		if (n == 0) {
			free(ops);
			return fu_usage_error(c, "install", 1, "missing file operand");
		}
		for (int i = 0; i < n; i++) {
			r = install_mkdir_p(c, ops[i], o.v);
			if (r < 0) {
				status = fu_err(c, 1, "install", "cannot create directory %s: %s",
						fu_q(qb, sizeof(qb), ops[i]), strerror(-r));
				continue;
			}
			if ((r = sh_fs_chmod(c->fs, ops[i], mode, true)) < 0)
				status = fu_err(c, 1, "install", "cannot change permissions of %s: %s",
						fu_q(qb, sizeof(qb), ops[i]), strerror(-r));
		}
		free(ops);
		return sh_cmd_finish(c, status);
	}
	const char *target = o.target_dir;
	int nsrc = n;
	if (!target) {
		if (n < 2) {
			const char *first = n ? ops[0] : "";
			free(ops);
			if (n == 0)
				return fu_usage_error(c, "install", 1, "missing file operand");
			return fu_usage_error(c, "install", 1,
					      "missing destination file operand after %s",
					      fu_q(qb, sizeof(qb), first));
		}
		target = ops[n - 1];
		nsrc = n - 1;
	}
	if (o.D) {
		char *parent = strdup(o.target_dir ? o.target_dir : target);
		if (parent && !o.target_dir) {
			char *slash = strrchr(parent, '/');
			if (slash)
				*slash = 0;
			else
				parent[0] = 0;
		}
		if (parent && *parent && (r = install_mkdir_p(c, parent, o.v)) < 0) {
			status = fu_err(c, 1, "install", "cannot create directory %s: %s",
					fu_q(qb, sizeof(qb), parent), strerror(-r));
			free(parent);
			free(ops);
			return sh_cmd_finish(c, status);
		}
		free(parent);
	}
	bool into_dir = o.target_dir != NULL;
	int terr = 0;
	if (!into_dir && !o.T) {
		struct stat st;
		terr = sh_fs_stat(c->fs, target, &st, true);
		if (terr == 0 && S_ISDIR(st.st_mode))
			into_dir = true;
	}
	if (!into_dir && nsrc > 1) {
		free(ops);
		return fu_err(c, 1, "install", "target %s: %s", fu_q(qb, sizeof(qb), target),
			      strerror(terr < 0 ? -terr : ENOTDIR));
	}
	for (int i = 0; i < nsrc; i++) {
		char *dst;
		if (into_dir) {
			char *base = fu_basename(ops[i]);
			dst = base ? fu_join(target, base) : NULL;
			free(base);
		} else
			dst = strdup(target);
		if (!dst || install_file(c, &o, ops[i], dst, mode))
			status = 1;
		free(dst);
	}
	free(ops);
	return sh_cmd_finish(c, status);
}
