/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_file.c — box-shell's own file commands' table (sh_file_commands[]) and
 * the small ones: touch, ln, realpath, readlink, mktemp, date, sleep,
 * truncate, which. The big ones live in cmd_ls.c, cmd_find.c, cmd_cp.c (cp,
 * mv), cmd_rm.c (rm, rmdir), cmd_chmod.c (chmod, mkdir, install) and
 * cmd_stat.c (stat, du, df).
 * Decisions (docs/box-policy.5.md): touch = write_content (opening the file,
 * created if missing; a directory: write_content of its times); ln = the
 * destination's read_metadata (is it a directory?), then a hard link's
 * read_content + write_content or a symlink's read_content (target) +
 * symlink; realpath/readlink -f = read_metadata, readlink = read_link;
 * mktemp = write_content (O_EXCL) or create_dir; truncate = write_content;
 * which = read_metadata per candidate; date -r = read_metadata.
 * Trusts: nothing in argv or the file system.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cmd_fileutil.h"
#include "cmdutil.h"
#include "host.h"

int sh_cmd_ls(struct sh_cmd *c, int argc, char **argv);
int sh_cmd_find(struct sh_cmd *c, int argc, char **argv);
int sh_cmd_cp(struct sh_cmd *c, int argc, char **argv);
int sh_cmd_mv(struct sh_cmd *c, int argc, char **argv);
int sh_cmd_rm(struct sh_cmd *c, int argc, char **argv);
int sh_cmd_rmdir(struct sh_cmd *c, int argc, char **argv);
int sh_cmd_chmod(struct sh_cmd *c, int argc, char **argv);
int sh_cmd_mkdir(struct sh_cmd *c, int argc, char **argv);
int sh_cmd_install(struct sh_cmd *c, int argc, char **argv);
int sh_cmd_stat(struct sh_cmd *c, int argc, char **argv);
int sh_cmd_du(struct sh_cmd *c, int argc, char **argv);
int sh_cmd_df(struct sh_cmd *c, int argc, char **argv);
static int sh_cmd_touch(struct sh_cmd *c, int argc, char **argv);
static int sh_cmd_ln(struct sh_cmd *c, int argc, char **argv);
static int sh_cmd_realpath(struct sh_cmd *c, int argc, char **argv);
static int sh_cmd_readlink(struct sh_cmd *c, int argc, char **argv);
static int sh_cmd_mktemp(struct sh_cmd *c, int argc, char **argv);
static int sh_cmd_date(struct sh_cmd *c, int argc, char **argv);
static int sh_cmd_sleep(struct sh_cmd *c, int argc, char **argv);
static int sh_cmd_truncate(struct sh_cmd *c, int argc, char **argv);
static int sh_cmd_which(struct sh_cmd *c, int argc, char **argv);
static int sh_cmd_id(struct sh_cmd *c, int argc, char **argv);

const struct sh_cmd_def sh_file_commands[] = {
	{"ls", sh_cmd_ls},         {"find", sh_cmd_find},     {"mkdir", sh_cmd_mkdir},
	{"rm", sh_cmd_rm},         {"rmdir", sh_cmd_rmdir},   {"cp", sh_cmd_cp},
	{"mv", sh_cmd_mv},         {"touch", sh_cmd_touch},   {"ln", sh_cmd_ln},
	{"chmod", sh_cmd_chmod},   {"install", sh_cmd_install}, {"realpath", sh_cmd_realpath},
	{"readlink", sh_cmd_readlink}, {"stat", sh_cmd_stat}, {"du", sh_cmd_du},
	{"df", sh_cmd_df},         {"mktemp", sh_cmd_mktemp}, {"date", sh_cmd_date},
	{"sleep", sh_cmd_sleep},   {"truncate", sh_cmd_truncate}, {"which", sh_cmd_which},
	{"id", sh_cmd_id},
	{NULL, NULL},
};

/* ---- touch ---- */

struct touch_opts {
	bool a, m, no_create, no_deref;
	const char *date, *stamp, *ref;
};

static int
touch_on(void *ctx, int id, const char *arg)
{
	struct touch_opts *o = ctx;
	switch (id) {
	case 'a': o->a = true; break;
	case 'm': o->m = true; break;
	case 'c': o->no_create = true; break;
	case 'h': o->no_deref = true; break;
	case 'd': o->date = arg; break;
	case 't': o->stamp = arg; break;
	case 'r': o->ref = arg; break;
	case 'f': break;
	default: break;
	}
	return 0;
}

static const struct fu_opt touch_table[] = {
	{'a', NULL, FU_NOARG}, {'m', NULL, FU_NOARG}, {'c', "no-create", FU_NOARG},
	{'h', "no-dereference", FU_NOARG}, {'d', "date", FU_ARG}, {'t', NULL, FU_ARG},
	{'r', "reference", FU_ARG}, {'f', NULL, FU_NOARG}, {0, NULL, 0},
};

static const char touch_usage[] =
	"Usage: touch [OPTION]... FILE...\n"
	"Update the access and modification times of each FILE to the current time;\n"
	"a FILE that does not exist is created empty. Supported options (box-shell's own):\n"
	"  -a                     change only the access time\n"
	"  -c, --no-create        do not create any files\n"
	"  -d, --date=STRING      parse STRING and use it instead of current time\n"
	"                         (@SECONDS, YYYY-MM-DD[ HH:MM[:SS[.frac]]][ UTC|+hhmm], now,\n"
	"                         today, yesterday, tomorrow)\n"
	"  -f                     (ignored)\n"
	"  -h, --no-dereference   affect each symbolic link instead of any referenced file\n"
	"  -m                     change only the modification time\n"
	"  -r, --reference=FILE   use this file's times instead of current time\n"
	"  -t STAMP               use [[CC]YY]MMDDhhmm[.ss] instead of current time\n"
	"      --help             display this help and exit\n";

static int
parse_stamp(const char *s, struct timespec *out)
{
	/* [[CC]YY]MMDDhhmm[.ss] in local time */
	const char *dot = strchr(s, '.');
	size_t n = dot ? (size_t)(dot - s) : strlen(s);
	int sec = 0;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return -EINVAL;
	if (dot) {
		if (strlen(dot + 1) != 2 || !isdigit((unsigned char)dot[1]) ||
		    !isdigit((unsigned char)dot[2]))
			return -EINVAL;
		sec = atoi(dot + 1);
	}
	if (n != 8 && n != 10 && n != 12)
		return -EINVAL;
	struct tm tm = {0};
	time_t now = time(NULL);
	localtime_r(&now, &tm);
	int v[6], k = 0;
	for (size_t i = 0; i < n; i += 2)
		v[k++] = (s[i] - '0') * 10 + (s[i + 1] - '0');
	int i = 0;
	if (n == 12)
		tm.tm_year = v[0] * 100 + v[1] - 1900, i = 2;
	else if (n == 10)
		tm.tm_year = (v[0] < 69 ? 2000 : 1900) + v[0] - 1900, i = 1;
	tm.tm_mon = v[i] - 1;
	tm.tm_mday = v[i + 1];
	tm.tm_hour = v[i + 2];
	tm.tm_min = v[i + 3];
	tm.tm_sec = sec;
	tm.tm_isdst = -1;
	if (tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
	    tm.tm_min > 59 || sec > 60)
		return -EINVAL;
	out->tv_sec = mktime(&tm);
	out->tv_nsec = 0;
	return 0;
}

static int
sh_cmd_touch(struct sh_cmd *c, int argc, char **argv)
{
	struct touch_opts o = {0};
	struct fu_parse p = {"touch", touch_table, true, 1, touch_usage, touch_on, &o};
	char **ops, qb[FU_QBUF];
	int n, status = 0;
	int r = fu_getopt(c, &p, argc, argv, &ops, &n);
	if (r == FU_HELP)
		return 0;
	if (r)
		return r;
	struct timespec ts[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}};
	bool explicit_time = false;
	if (o.ref) {
		struct stat st;
		r = sh_fs_stat(c->fs, o.ref, &st, !o.no_deref);
		if (r < 0) {
			free(ops);
			return fu_err(c, 1, "touch", "failed to get attributes of %s: %s",
				      fu_q(qb, sizeof(qb), o.ref), strerror(-r));
		}
		ts[0] = st.st_atim;
		ts[1] = st.st_mtim;
		explicit_time = true;
	}
	if (o.date) {
		if (fu_parse_date(o.date, false, &ts[0]) < 0) {
			free(ops);
			return fu_err(c, 1, "touch", "invalid date format %s",
				      fu_ql(qb, sizeof(qb), o.date));
		}
		ts[1] = ts[0];
		explicit_time = true;
	}
	if (o.stamp) {
		if (parse_stamp(o.stamp, &ts[0]) < 0) {
			free(ops);
			return fu_err(c, 1, "touch", "invalid date format %s",
				      fu_ql(qb, sizeof(qb), o.stamp));
		}
		ts[1] = ts[0];
		explicit_time = true;
	}
	(void)explicit_time;
	if (o.a && !o.m)
		ts[1].tv_nsec = UTIME_OMIT;
	if (o.m && !o.a)
		ts[0].tv_nsec = UTIME_OMIT;
	if (n == 0) {
		free(ops);
		return fu_usage_error(c, "touch", 1, "missing file operand");
	}
	for (int i = 0; i < n; i++) {
		const char *f = ops[i];
		if (!o.no_create && !o.no_deref) {
			/* one write_content: open (creating it if missing), then its times */
			int fd = sh_fs_open(c->fs, f, O_WRONLY | O_CREAT | O_NOCTTY | O_NONBLOCK, 0666);
			if (fd >= 0) {
				r = futimens(fd, ts) < 0 ? -errno : 0;
				close(fd);
				if (r < 0)
					status = fu_err(c, 1, "touch", "setting times of %s: %s",
							fu_q(qb, sizeof(qb), f), strerror(-r));
				continue;
			}
			if (fd != -EISDIR && fd != -ETXTBSY && fd != -ENXIO) {
				status = fu_err(c, 1, "touch", "cannot touch %s: %s",
						fu_q(qb, sizeof(qb), f), strerror(-fd));
				continue;
			}
		}
		r = sh_fs_utimens(c->fs, f, ts, !o.no_deref);
		if (r == -ENOENT && o.no_create)
			continue;
		if (r < 0)
			status = fu_err(c, 1, "touch",
					r == -ENOENT ? "cannot touch %s: %s" : "setting times of %s: %s",
					fu_q(qb, sizeof(qb), f), strerror(-r));
	}
	free(ops);
	return sh_cmd_finish(c, status);
}

/* ---- ln ---- */

struct ln_opts {
	bool s, f, n, v, T;
	const char *target_dir;
};

static int
ln_on(void *ctx, int id, const char *arg)
{
	struct ln_opts *o = ctx;
	switch (id) {
	case 's': o->s = true; break;
	case 'f': o->f = true; break;
	case 'n': o->n = true; break;
	case 'v': o->v = true; break;
	case 'T': o->T = true; break;
	case 't': o->target_dir = arg; break;
	default: break;
	}
	return 0;
}

static const struct fu_opt ln_table[] = {
	{'s', "symbolic", FU_NOARG}, {'f', "force", FU_NOARG},
	{'n', "no-dereference", FU_NOARG}, {'v', "verbose", FU_NOARG},
	{'T', "no-target-directory", FU_NOARG}, {'t', "target-directory", FU_ARG},
	{0, NULL, 0},
};

static const char ln_usage[] =
	"Usage: ln [OPTION]... [-T] TARGET LINK_NAME\n"
	"  or:  ln [OPTION]... TARGET\n"
	"  or:  ln [OPTION]... TARGET... DIRECTORY\n"
	"  or:  ln [OPTION]... -t DIRECTORY TARGET...\n"
	"Create hard links by default, symbolic links with --symbolic. Supported options:\n"
	"  -f, --force                 remove existing destination files\n"
	"  -n, --no-dereference        treat LINK_NAME as a normal file if it is a symbolic\n"
	"                                link to a directory\n"
	"  -s, --symbolic              make symbolic links instead of hard links\n"
	"  -t, --target-directory=DIRECTORY  specify the DIRECTORY in which to create the links\n"
	"  -T, --no-target-directory   treat LINK_NAME as a normal file always\n"
	"  -v, --verbose               print name of each linked file\n"
	"      --help                  display this help and exit\n";

static int
ln_one(struct sh_cmd *c, const struct ln_opts *o, const char *target, const char *link)
{
	char qb[FU_QBUF], qb2[FU_QBUF];
	int r;
	if (!o->s) {
		struct stat st;
		r = sh_fs_stat(c->fs, target, &st, false);
		if (r < 0)
			return fu_err(c, 1, "ln", "failed to access %s: %s",
				      fu_q(qb, sizeof(qb), target), strerror(-r));
		if (S_ISDIR(st.st_mode))
			return fu_err(c, 1, "ln", "%s: hard link not allowed for directory",
				      sh_qname(target, false));
	}
	r = o->s ? sh_fs_symlink(c->fs, target, link) : sh_fs_link(c->fs, target, link);
	if (r == -EEXIST && o->f) {
		struct stat st;
		if (sh_fs_stat(c->fs, link, &st, false) == 0 && S_ISDIR(st.st_mode))
			return fu_err(c, 1, "ln", "%s: cannot overwrite directory",
				      fu_q(qb, sizeof(qb), link));
		r = sh_fs_unlink(c->fs, link);
		if (r == 0)
			r = o->s ? sh_fs_symlink(c->fs, target, link) : sh_fs_link(c->fs, target, link);
	}
	if (r < 0) {
		if (!o->s && r == -ENOENT) {
			struct stat st;
			if (sh_fs_stat(c->fs, target, &st, false) == -ENOENT)
				return fu_err(c, 1, "ln", "failed to access %s: %s",
					      fu_q(qb, sizeof(qb), target), strerror(-r));
		}
		return fu_err(c, 1, "ln", "failed to create %s link %s: %s",
			      o->s ? "symbolic" : "hard", fu_q(qb, sizeof(qb), link), strerror(-r));
	}
	if (o->v)
		sh_out_printf(c->out_buf, "%s %s %s\n", fu_q(qb, sizeof(qb), link), o->s ? "->" : "=>",
			      fu_q(qb2, sizeof(qb2), target));
	return 0;
}

static int
sh_cmd_ln(struct sh_cmd *c, int argc, char **argv)
{
	struct ln_opts o = {0};
	struct fu_parse p = {"ln", ln_table, true, 1, ln_usage, ln_on, &o};
	char **ops, qb[FU_QBUF];
	int n, status = 0;
	int r = fu_getopt(c, &p, argc, argv, &ops, &n);
	if (r == FU_HELP)
		return 0;
	if (r)
		return r;
	if (n == 0) {
		free(ops);
		return fu_usage_error(c, "ln", 1, "missing file operand");
	}
	const char *dir = o.target_dir;
	int ntargets = n;
	bool into_dir = dir != NULL;
	static char dot[] = ".";
	if (!dir) {
		if (n == 1) {
			dir = dot;
			into_dir = true;
		} else {
			dir = ops[n - 1];
			ntargets = n - 1;
			int terr = 0;
			if (!o.T) {
				struct stat st;
				terr = sh_fs_stat(c->fs, dir, &st, !o.n);
				if (terr == 0 && S_ISDIR(st.st_mode))
					into_dir = true;
			}
			if (o.T && n > 2) {
				const char *extra = ops[2];
				free(ops);
				return fu_usage_error(c, "ln", 1, "extra operand %s",
						      fu_q(qb, sizeof(qb), extra));
			}
			if (!into_dir && n > 2) {
				free(ops);
				return fu_err(c, 1, "ln", "target %s: %s", fu_q(qb, sizeof(qb), dir),
					      strerror(terr < 0 ? -terr : ENOTDIR));
			}
		}
	}
	for (int i = 0; i < ntargets; i++) {
		char *link;
		if (into_dir) {
			char *base = fu_basename(ops[i]);
			link = base ? fu_join(dir, base) : NULL;
			free(base);
		} else
			link = strdup(dir);
		if (!link || ln_one(c, &o, ops[i], link))
			status = 1;
		free(link);
	}
	free(ops);
	return sh_cmd_finish(c, status);
}

/* ---- realpath, readlink ---- */

/* Lexically absolute and normalized (realpath -s, and the missing tail of -m). */
static char *
lexical_abs(const char *base, const char *p)
{
	size_t cap = strlen(base) + strlen(p) + 3;
	char *out = malloc(cap);
	size_t len = 0;
	if (!out)
		return NULL;
	if (p[0] != '/') {
		len = strlen(base);
		memcpy(out, base, len);
	}
	out[len] = 0;
	for (const char *q = p; *q;) {
		while (*q == '/')
			q++;
		const char *e = q;
		while (*e && *e != '/')
			e++;
		size_t n = (size_t)(e - q);
		if (n == 2 && q[0] == '.' && q[1] == '.') {
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--;
		} else if (n && !(n == 1 && q[0] == '.')) {
			if (!(len == 1 && out[0] == '/'))
				out[len++] = '/';
			memcpy(out + len, q, n);
			len += n;
		}
		out[len] = 0;
		q = e;
	}
	if (len == 0) {
		out[0] = '/';
		out[1] = 0;
	}
	return out;
}

enum canon_mode { CANON_DEFAULT, CANON_EXISTING, CANON_MISSING };

static int
canon_path(struct sh_cmd *c, const char *p, enum canon_mode m, char **out)
{
	*out = NULL;
	if (!*p)
		return -ENOENT;
	int r = sh_fs_canon(c->fs, p, false, out);
	if (r == 0) {
		struct stat st;
		int sr = sh_fs_stat(c->fs, p, &st, true);
		if (sr == -EACCES || (m == CANON_EXISTING && sr < 0)) {
			free(*out);
			*out = NULL;
			return sr;
		}
		return 0;
	}
	if (m != CANON_MISSING || (r != -ENOENT && r != -ENOTDIR))
		return r;
	/* -m: canonicalize the longest prefix that exists, the rest lexically */
	char *abs = lexical_abs(c->fs->cwd, p);
	if (!abs)
		return -ENOMEM;
	size_t len = strlen(abs);
	for (size_t cut = len; cut > 0; cut--) {
		if (abs[cut] != '/' && cut != len)
			continue;
		char save = abs[cut];
		abs[cut] = 0;
		char *pre = NULL;
		int pr = sh_fs_canon(c->fs, *abs ? abs : "/", false, &pre);
		abs[cut] = save;
		if (pr == 0) {
			*out = lexical_abs(pre, abs + cut + (abs[cut] == '/'));
			if (*out && abs[cut] == 0) {
				free(*out);
				*out = pre;
				pre = NULL;
			}
			free(pre);
			free(abs);
			return *out ? 0 : -ENOMEM;
		}
	}
	free(abs);
	return r;
}

struct rp_opts {
	enum canon_mode mode;
	bool strip, quiet, zero, no_newline, verbose, canon;
	const char *relative_to;
	struct sh_cmd *c;
};

/* PATH relative to BASE, both canonical and absolute ("." when equal). */
static char *
relative_path(const char *path, const char *base)
{
	size_t i = 0, last = 0;
	while (path[i] && path[i] == base[i]) {
		if (path[i] == '/')
			last = i;
		i++;
	}
	if ((!path[i] || path[i] == '/') && (!base[i] || base[i] == '/'))
		last = i;
	if (strcmp(base, "/") == 0)
		last = 0;
	size_t ups = 0;
	for (const char *b = base + last; *b; b++)
		if (*b == '/' && b[1])
			ups++;
	if (strcmp(base, "/") == 0)
		ups = 0;
	const char *rest = path + last;
	while (*rest == '/')
		rest++;
	char *out = malloc(ups * 3 + strlen(rest) + 2);
	if (!out)
		return NULL;
	char *o = out;
	for (size_t k = 0; k < ups; k++)
		o = stpcpy(o, k + 1 < ups || *rest ? "../" : "..");
	o = stpcpy(o, rest);
	if (o == out)
		strcpy(out, ".");
	return out;
}

static int
rp_on(void *ctx, int id, const char *arg)
{
	struct rp_opts *o = ctx;
	switch (id) {
	case 'e': o->mode = CANON_EXISTING; o->canon = true; break;
	case 'm': o->mode = CANON_MISSING; o->canon = true; break;
	case 'f': o->mode = CANON_DEFAULT; o->canon = true; break;
	case 's': o->strip = true; o->quiet = true; break;
	case 'q': o->quiet = true; break;
	case 'z': o->zero = true; break;
	case 'n': o->no_newline = true; break;
	case 'v': o->verbose = true; o->quiet = false; break;
	case 256: o->relative_to = arg; break;
	default: break;
	}
	return 0;
}

static const struct fu_opt realpath_table[] = {
	{'e', "canonicalize-existing", FU_NOARG}, {'m', "canonicalize-missing", FU_NOARG},
	{'s', "strip", FU_NOARG}, {'s', "no-symlinks", FU_NOARG}, {'q', "quiet", FU_NOARG},
	{'z', "zero", FU_NOARG}, {256, "relative-to", FU_ARG}, {0, NULL, 0},
};

static const struct fu_opt readlink_table[] = {
	{'f', "canonicalize", FU_NOARG}, {'e', "canonicalize-existing", FU_NOARG},
	{'m', "canonicalize-missing", FU_NOARG}, {'n', "no-newline", FU_NOARG},
	{'q', "quiet", FU_NOARG}, {'s', "silent", FU_NOARG}, {'v', "verbose", FU_NOARG},
	{'z', "zero", FU_NOARG}, {0, NULL, 0},
};

static const char realpath_usage[] =
	"Usage: realpath [OPTION]... FILE...\n"
	"Print the resolved absolute file name; all but the last component must exist.\n"
	"Supported options (box-shell's own realpath):\n"
	"  -e, --canonicalize-existing  all components of the path must exist\n"
	"  -m, --canonicalize-missing   no path components need exist or be a directory\n"
	"  -q, --quiet                  suppress most error messages\n"
	"  -s, --strip, --no-symlinks   don't expand symlinks\n"
	"  -z, --zero                   end each output line with NUL, not newline\n"
	"      --relative-to=DIR        print the resolved path relative to DIR\n"
	"      --help                   display this help and exit\n";

static const char readlink_usage[] =
	"Usage: readlink [OPTION]... FILE...\n"
	"Print the value of a symbolic link or canonical file name. Supported options:\n"
	"  -f, --canonicalize            all but the last component must exist\n"
	"  -e, --canonicalize-existing   all components must exist\n"
	"  -m, --canonicalize-missing    no components need exist\n"
	"  -n, --no-newline              do not output the trailing delimiter\n"
	"  -q, --quiet, -s, --silent     suppress most error messages (the default)\n"
	"  -v, --verbose                 report error messages\n"
	"  -z, --zero                    end each output line with NUL, not newline\n"
	"      --help                    display this help and exit\n";

static int
realpath_main(struct sh_cmd *c, int argc, char **argv, bool is_readlink)
{
	const char *name = is_readlink ? "readlink" : "realpath";
	struct rp_opts o = {.c = c, .quiet = is_readlink};
	struct fu_parse p = {name,
			     is_readlink ? readlink_table : realpath_table,
			     true,
			     1,
			     is_readlink ? readlink_usage : realpath_usage,
			     rp_on,
			     &o};
	char **ops;
	int n, status = 0;
	int r = fu_getopt(c, &p, argc, argv, &ops, &n);
	if (r == FU_HELP)
		return 0;
	if (r)
		return r;
	if (is_readlink && o.strip) /* -s is --silent for readlink */
		o.strip = false;
	if (!is_readlink)
		o.canon = true;
	if (n == 0) {
		free(ops);
		return fu_usage_error(c, name, 1, "missing operand");
	}
	if (is_readlink && n > 1 && o.no_newline && !o.quiet)
		fu_err(c, 0, name, "ignoring --no-newline with multiple arguments");
	char delim = o.zero ? 0 : '\n';
	char *base = NULL;
	if (o.relative_to) {
		r = o.strip ? ((base = lexical_abs(c->fs->cwd, o.relative_to)) ? 0 : -ENOMEM)
			    : canon_path(c, o.relative_to, o.mode, &base);
		if (r < 0) {
			fu_err(c, 1, name, "%s: %s", sh_qname(o.relative_to, false), strerror(-r));
			free(ops);
			return sh_cmd_finish(c, 1);
		}
	}
	for (int i = 0; i < n; i++) {
		char *res = NULL;
		if (!o.canon)
			r = sh_fs_readlink(c->fs, ops[i], &res);
		else if (o.strip)
			r = (res = lexical_abs(c->fs->cwd, ops[i])) ? 0 : -ENOMEM;
		else
			r = canon_path(c, ops[i], o.mode, &res);
		if (r < 0) {
			if (!o.quiet || o.verbose)
				fu_err(c, 1, name, "%s: %s", sh_qname(ops[i], false), strerror(-r));
			status = 1;
			continue;
		}
		if (base) {
			char *rel = relative_path(res, base);
			free(res);
			res = rel;
			if (!res)
				continue;
		}
		sh_out_printf(c->out_buf, "%s", res);
		if (!(is_readlink && o.no_newline && n == 1))
			sh_out_write(c->out_buf, &delim, 1);
		free(res);
	}
	free(base);
	free(ops);
	return sh_cmd_finish(c, status);
}

static int
sh_cmd_realpath(struct sh_cmd *c, int argc, char **argv)
{
	return realpath_main(c, argc, argv, false);
}

static int
sh_cmd_readlink(struct sh_cmd *c, int argc, char **argv)
{
	return realpath_main(c, argc, argv, true);
}

/* ---- mktemp ---- */

struct mktemp_opts {
	bool d, u, q, t, tmpdir;
	const char *dir, *suffix;
};

static int
mktemp_on(void *ctx, int id, const char *arg)
{
	struct mktemp_opts *o = ctx;
	switch (id) {
	case 'd': o->d = true; break;
	case 'u': o->u = true; break;
	case 'q': o->q = true; break;
	case 't': o->t = true; break;
	case 'p': o->dir = arg; o->tmpdir = true; break;
	case 256: o->tmpdir = true; if (arg) o->dir = arg; break;
	case 257: o->suffix = arg; break;
	default: break;
	}
	return 0;
}

static const struct fu_opt mktemp_table[] = {
	{'d', "directory", FU_NOARG}, {'u', "dry-run", FU_NOARG}, {'q', "quiet", FU_NOARG},
	{'t', NULL, FU_NOARG},        {'p', NULL, FU_ARG},        {256, "tmpdir", FU_OPTARG},
	{257, "suffix", FU_ARG},      {0, NULL, 0},
};

static const char mktemp_usage[] =
	"Usage: mktemp [OPTION]... [TEMPLATE]\n"
	"Create a temporary file or directory, safely, and print its name.\n"
	"TEMPLATE must contain at least 3 consecutive 'X's in last component; the default is\n"
	"tmp.XXXXXXXXXX in $TMPDIR or /tmp. Supported options (box-shell's own mktemp):\n"
	"  -d, --directory     create a directory, not a file\n"
	"  -u, --dry-run       do not create anything; merely print a name (unsafe)\n"
	"  -q, --quiet         suppress diagnostics about file/dir-creation failure\n"
	"      --suffix=SUFF   append SUFF to TEMPLATE\n"
	"  -p DIR, --tmpdir[=DIR]  interpret TEMPLATE relative to DIR ($TMPDIR or /tmp)\n"
	"  -t                  interpret TEMPLATE as a single file name component,\n"
	"                        relative to $TMPDIR, -p DIR or /tmp\n"
	"      --help          display this help and exit\n";

static int
sh_cmd_mktemp(struct sh_cmd *c, int argc, char **argv)
{
	struct mktemp_opts o = {0};
	struct fu_parse p = {"mktemp", mktemp_table, true, 1, mktemp_usage, mktemp_on, &o};
	char **ops, qb[FU_QBUF];
	int n;
	int r = fu_getopt(c, &p, argc, argv, &ops, &n);
	if (r == FU_HELP)
		return 0;
	if (r)
		return r;
	if (n > 1) {
		free(ops);
		return fu_usage_error(c, "mktemp", 1, "too many templates");
	}
	const char *tmpl = n ? ops[0] : "tmp.XXXXXXXXXX";
	bool use_dir = o.tmpdir || o.t || n == 0;
	const char *env_tmp = sh_cmd_getenv(c, "TMPDIR");
	const char *dir = NULL;
	if (use_dir) {
		if (o.t && env_tmp && *env_tmp)
			dir = env_tmp;
		else if (o.dir && *o.dir)
			dir = o.dir;
		else if (env_tmp && *env_tmp)
			dir = env_tmp;
		else
			dir = "/tmp";
		if (strchr(tmpl, '/')) {
			free(ops);
			return fu_err(c, 1, "mktemp", "invalid template, %s, contains directory separator",
				      fu_q(qb, sizeof(qb), tmpl));
		}
	}
	size_t tl = strlen(tmpl), sl = o.suffix ? strlen(o.suffix) : 0;
	char *full = malloc((dir ? strlen(dir) + 1 : 0) + tl + sl + 1);
	if (!full) {
		free(ops);
		return fu_err(c, 1, "mktemp", "memory exhausted");
	}
	size_t pre = 0;
	if (dir) {
		strcpy(full, dir);
		pre = strlen(dir);
		if (pre && full[pre - 1] != '/')
			full[pre++] = '/';
	}
	memcpy(full + pre, tmpl, tl);
	memcpy(full + pre + tl, o.suffix ? o.suffix : "", sl);
	full[pre + tl + sl] = 0;
	/* the X's: the run at the end of the template (before any suffix) */
	size_t end = pre + tl, xs = 0;
	if (!o.suffix) {
		/* GNU: a template whose last component has no trailing X's but ends in
		 * e.g. "XXX.txt" is an error without --suffix */
	}
	while (xs < tl && full[end - 1 - xs] == 'X')
		xs++;
	if (xs < 3) {
		free(ops);
		int st = fu_err(c, 1, "mktemp", "too few X's in template %s",
				fu_q(qb, sizeof(qb), tmpl));
		free(full);
		return st;
	}
	static const char chars[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	int status = 1;
	for (int attempt = 0; attempt < 1000; attempt++) {
		unsigned char rnd[64];
		if (getrandom(rnd, xs < sizeof(rnd) ? xs : sizeof(rnd), 0) < 0)
			for (size_t k = 0; k < sizeof(rnd); k++)
				rnd[k] = (unsigned char)(rand() & 0xff);
		for (size_t k = 0; k < xs; k++)
			full[end - xs + k] = chars[rnd[k % sizeof(rnd)] % 62];
		if (o.u) {
			struct stat st;
			if (sh_fs_stat(c->fs, full, &st, false) == 0)
				continue;
			r = 0;
		} else if (o.d)
			r = sh_fs_mkdir(c->fs, full, 0700);
		else {
			int fd = sh_fs_open(c->fs, full, O_RDWR | O_CREAT | O_EXCL, 0600);
			if (fd >= 0)
				close(fd);
			r = fd < 0 ? fd : 0;
		}
		if (r == -EEXIST)
			continue;
		if (r < 0) {
			memcpy(full + end - xs, "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
			       xs < 48 ? xs : 48);
			if (!o.q)
				fu_err(c, 1, "mktemp", "failed to create %s via template %s: %s",
				       o.d ? "directory" : "file", fu_q(qb, sizeof(qb), full),
				       strerror(-r));
			break;
		}
		sh_out_printf(c->out_buf, "%s\n", full);
		status = 0;
		break;
	}
	free(full);
	free(ops);
	return sh_cmd_finish(c, status);
}

/* ---- date ---- */

struct date_opts {
	bool utc;
	const char *date, *ref, *iso, *rfc3339;
	bool iso_set, rfc_email;
	struct sh_cmd *c;
};

static int
date_on(void *ctx, int id, const char *arg)
{
	struct date_opts *o = ctx;
	switch (id) {
	case 'u': o->utc = true; break;
	case 'd': o->date = arg; break;
	case 'r': o->ref = arg; break;
	case 'R': o->rfc_email = true; break;
	case 'I': o->iso_set = true; o->iso = arg; break;
	case 256: o->rfc3339 = arg; break;
	default: break;
	}
	return 0;
}

static const struct fu_opt date_table[] = {
	{'u', "utc", FU_NOARG}, {'u', "universal", FU_NOARG}, {'d', "date", FU_ARG},
	{'r', "reference", FU_ARG}, {'R', "rfc-email", FU_NOARG}, {'I', "iso-8601", FU_OPTARG},
	{256, "rfc-3339", FU_ARG}, {0, NULL, 0},
};

static const char date_usage[] =
	"Usage: date [OPTION]... [+FORMAT]\n"
	"Display the date and time in the given FORMAT (box-shell's own date: it never sets\n"
	"the clock). Supported options:\n"
	"  -d, --date=STRING     display time described by STRING (@SECONDS,\n"
	"                        YYYY-MM-DD[ HH:MM[:SS[.frac]]][ UTC|+hhmm], now, today,\n"
	"                        yesterday, tomorrow), not 'now'\n"
	"  -I[FMT], --iso-8601[=FMT]  ISO 8601 (FMT: date, hours, minutes, seconds, ns)\n"
	"  -R, --rfc-email       RFC 5322 format, e.g. Mon, 14 Aug 2006 02:34:56 -0600\n"
	"      --rfc-3339=FMT    FMT: date, seconds, ns\n"
	"  -r, --reference=FILE  display the last modification time of FILE\n"
	"  -u, --utc, --universal  print Coordinated Universal Time (UTC)\n"
	"      --help            display this help and exit\n"
	"FORMAT: strftime(3) sequences, plus %N (nanoseconds, %3N ...), %:z, %::z.\n";

static void
date_render(struct sh_out *out, const char *fmt, const struct tm *tm, long nsec)
{
	for (const char *p = fmt; *p; p++) {
		if (*p != '%') {
			sh_out_write(out, p, 1);
			continue;
		}
		const char *start = p++;
		char flags[8] = "";
		size_t fl = 0;
		while (*p && strchr("_-0^#", *p) && fl < 6)
			flags[fl++] = *p++;
		flags[fl] = 0;
		int width = -1;
		if (isdigit((unsigned char)*p)) {
			width = 0;
			while (isdigit((unsigned char)*p))
				width = width * 10 + (*p++ - '0');
		}
		int colons = 0;
		while (*p == ':' && colons < 3)
			colons++, p++;
		if (*p == 'E' || *p == 'O')
			p++;
		if (!*p) {
			sh_out_printf(out, "%.*s", (int)(p - start), start);
			break;
		}
		if (*p == 'N') {
			char ns[16];
			snprintf(ns, sizeof(ns), "%09ld", nsec);
			int w = width < 0 ? 9 : width;
			if (w <= 9)
				sh_out_printf(out, "%.*s", w, ns);
			else
				sh_out_printf(out, "%s%0*d", ns, w - 9, 0);
			continue;
		}
		if (*p == 'z' && colons) {
			long off = tm->tm_gmtoff;
			char sign = off < 0 ? '-' : '+';
			if (off < 0)
				off = -off;
			if (colons == 1)
				sh_out_printf(out, "%c%02ld:%02ld", sign, off / 3600, off / 60 % 60);
			else
				sh_out_printf(out, "%c%02ld:%02ld:%02ld", sign, off / 3600,
					      off / 60 % 60, off % 60);
			continue;
		}
		char one[48], res[512];
		if (width >= 0)
			snprintf(one, sizeof(one), "%%%s%d%c", flags, width, *p);
		else
			snprintf(one, sizeof(one), "%%%s%c", flags, *p);
		/* one conversion, built above from checked flag/width characters */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		size_t k = strftime(res, sizeof(res), one, tm);
#pragma GCC diagnostic pop
		sh_out_write(out, res, k);
	}
}

static int
sh_cmd_date(struct sh_cmd *c, int argc, char **argv)
{
	struct date_opts o = {.c = c};
	struct fu_parse p = {"date", date_table, true, 1, date_usage, date_on, &o};
	char **ops, qb[FU_QBUF];
	int n;
	int r = fu_getopt(c, &p, argc, argv, &ops, &n);
	if (r == FU_HELP)
		return 0;
	if (r)
		return r;
	const char *fmt = "%a %b %e %H:%M:%S %Z %Y";
	if (n >= 1) {
		if (ops[0][0] != '+') {
			int st = o.date || o.ref
					 ? fu_usage_error(c, "date", 1,
							  "the argument %s lacks a leading '+';\n"
							  "when using an option to specify date(s), any "
							  "non-option\nargument must be a format string "
							  "beginning with '+'",
							  fu_q(qb, sizeof(qb), ops[0]))
					 : fu_err(c, 1, "date", "invalid date %s",
						  fu_ql(qb, sizeof(qb), ops[0]));
			free(ops);
			return st;
		}
		if (n > 1) {
			int st = fu_usage_error(c, "date", 1, "extra operand %s",
						fu_q(qb, sizeof(qb), ops[1]));
			free(ops);
			return st;
		}
		fmt = ops[0] + 1;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (o.date && fu_parse_date(o.date, o.utc, &ts) < 0) {
		free(ops);
		return fu_err(c, 1, "date", "invalid date %s", fu_ql(qb, sizeof(qb), o.date));
	}
	if (o.ref) {
		struct stat st;
		r = sh_fs_stat(c->fs, o.ref, &st, true);
		if (r < 0) {
			free(ops);
			return fu_err(c, 1, "date", "%s: %s", sh_qname(o.ref, false), strerror(-r));
		}
		ts = st.st_mtim;
	}
	if (o.iso_set) {
		const char *k = o.iso ? o.iso : "date";
		if (strcmp(k, "date") == 0)
			fmt = "%Y-%m-%d";
		else if (strcmp(k, "hours") == 0)
			fmt = "%Y-%m-%dT%H%:z";
		else if (strcmp(k, "minutes") == 0)
			fmt = "%Y-%m-%dT%H:%M%:z";
		else if (strcmp(k, "seconds") == 0)
			fmt = "%Y-%m-%dT%H:%M:%S%:z";
		else if (strcmp(k, "ns") == 0)
			fmt = "%Y-%m-%dT%H:%M:%S,%N%:z";
		else {
			free(ops);
			return fu_usage_error(c, "date", 1, "invalid argument %s for '--iso-8601'",
					      fu_q(qb, sizeof(qb), k));
		}
	} else if (o.rfc3339) {
		if (strcmp(o.rfc3339, "date") == 0)
			fmt = "%Y-%m-%d";
		else if (strcmp(o.rfc3339, "seconds") == 0)
			fmt = "%Y-%m-%d %H:%M:%S%:z";
		else if (strcmp(o.rfc3339, "ns") == 0)
			fmt = "%Y-%m-%d %H:%M:%S.%N%:z";
		else {
			free(ops);
			return fu_usage_error(c, "date", 1, "invalid argument %s for '--rfc-3339'",
					      fu_q(qb, sizeof(qb), o.rfc3339));
		}
	} else if (o.rfc_email)
		fmt = "%a, %d %b %Y %H:%M:%S %z";
	struct tm tm;
	time_t t = ts.tv_sec;
	if (o.utc) {
		gmtime_r(&t, &tm);
		tm.tm_zone = "UTC";
		date_render(c->out_buf, fmt, &tm, ts.tv_nsec);
	} else {
		/* `TZ=X date`: the command's TZ, not the shell process's (box-sh runs
		 * a command in one thread; the process's TZ is put back at once) */
		const char *want = sh_cmd_getenv(c, "TZ"), *have = getenv("TZ");
		bool swap = (want == NULL) != (have == NULL) || (want && strcmp(want, have) != 0);
		char *saved = swap && have ? strdup(have) : NULL;
		if (swap) {
			if (want)
				setenv("TZ", want, 1);
			else
				unsetenv("TZ");
			tzset();
		}
		localtime_r(&t, &tm);
		date_render(c->out_buf, fmt, &tm, ts.tv_nsec);
		if (swap) {
			if (saved)
				setenv("TZ", saved, 1);
			else
				unsetenv("TZ");
			tzset();
			free(saved);
		}
	}
	sh_out_write(c->out_buf, "\n", 1);
	free(ops);
	return sh_cmd_finish(c, 0);
}

/* ---- sleep ---- */

static const char sleep_usage[] =
	"Usage: sleep NUMBER[SUFFIX]...\n"
	"Pause for NUMBER seconds (s), minutes (m), hours (h) or days (d); NUMBER may be a\n"
	"floating point number; several are added. box-shell's own sleep.\n"
	"      --help     display this help and exit\n";

static int
sleep_on(void *ctx, int id, const char *arg)
{
	return 0;
}

static const struct fu_opt sleep_table[] = {{0, NULL, 0}};

static int
sh_cmd_sleep(struct sh_cmd *c, int argc, char **argv)
{
	struct fu_parse p = {"sleep", sleep_table, true, 1, sleep_usage, sleep_on, NULL};
	char **ops, qb[FU_QBUF];
	int n;
	/* "sleep -1" is an invalid option to GNU too; numbers never start with '-' */
	int r = fu_getopt(c, &p, argc, argv, &ops, &n);
	if (r == FU_HELP)
		return 0;
	if (r)
		return r;
	if (n == 0) {
		free(ops);
		return fu_usage_error(c, "sleep", 1, "missing operand");
	}
	double total = 0;
	for (int i = 0; i < n; i++) {
		char *end;
		errno = 0;
		double v = strtod(ops[i], &end);
		double mul = 1;
		if (end == ops[i] || v < 0 || isnan(v)) {
			int st = fu_usage_error(c, "sleep", 1, "invalid time interval %s",
						fu_q(qb, sizeof(qb), ops[i]));
			free(ops);
			return st;
		}
		if (*end) {
			switch (*end) {
			case 's': mul = 1; break;
			case 'm': mul = 60; break;
			case 'h': mul = 3600; break;
			case 'd': mul = 86400; break;
			default: mul = -1; break;
			}
			if (mul < 0 || end[1]) {
				int st = fu_usage_error(c, "sleep", 1, "invalid time interval %s",
							fu_q(qb, sizeof(qb), ops[i]));
				free(ops);
				return st;
			}
		}
		total += v * mul;
	}
	free(ops);
	sh_out_flush(c->out_buf);
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		if (fu_interrupted(c))
			return sh_cmd_finish(c, 130);
		clock_gettime(CLOCK_MONOTONIC, &now);
		double el = (double)(now.tv_sec - start.tv_sec) +
			    (double)(now.tv_nsec - start.tv_nsec) / 1e9;
		double left = total - el;
		if (left <= 0)
			break;
		/* short naps: an interrupt or a timeout ends the command soon */
		double nap = left < 0.05 ? left : 0.05;
		struct timespec ns = {(time_t)nap, (long)((nap - (double)(time_t)nap) * 1e9)};
		nanosleep(&ns, NULL);
	}
	return 0;
}

/* ---- truncate ---- */

struct truncate_opts {
	bool no_create;
	const char *size, *ref;
};

static int
truncate_on(void *ctx, int id, const char *arg)
{
	struct truncate_opts *o = ctx;
	if (id == 'c')
		o->no_create = true;
	else if (id == 's')
		o->size = arg;
	else if (id == 'r')
		o->ref = arg;
	return 0;
}

static const struct fu_opt truncate_table[] = {
	{'c', "no-create", FU_NOARG}, {'s', "size", FU_ARG}, {'r', "reference", FU_ARG},
	{0, NULL, 0},
};

static const char truncate_usage[] =
	"Usage: truncate OPTION... FILE...\n"
	"Shrink or extend the size of each FILE to the specified size; a FILE that does not\n"
	"exist is created. Supported options (box-shell's own truncate):\n"
	"  -c, --no-create        do not create any files\n"
	"  -r, --reference=RFILE  base size on RFILE\n"
	"  -s, --size=SIZE        set or adjust the file size by SIZE bytes\n"
	"      --help             display this help and exit\n"
	"SIZE: N[K|M|G|T|P|E (1024) or KB|MB|... (1000)], prefixed by + (extend by),\n"
	"- (reduce by), < (at most), > (at least), / (round down to a multiple), % (round up).\n";

static int
sh_cmd_truncate(struct sh_cmd *c, int argc, char **argv)
{
	struct truncate_opts o = {0};
	struct fu_parse p = {"truncate", truncate_table, true, 1, truncate_usage, truncate_on, &o};
	char **ops, qb[FU_QBUF];
	int n, status = 0;
	int r = fu_getopt(c, &p, argc, argv, &ops, &n);
	if (r == FU_HELP)
		return 0;
	if (r)
		return r;
	if (!o.size && !o.ref) {
		free(ops);
		return fu_usage_error(c, "truncate",
				      1, "you must specify either '--size' or '--reference'");
	}
	char rel = 0;
	int64_t size = 0;
	if (o.size) {
		const char *s = o.size;
		while (isspace((unsigned char)*s))
			s++;
		if (*s && strchr("+-<>/%", *s))
			rel = *s++;
		if (fu_parse_size(s, &size) < 0 || size < 0 || (s[0] == '-' || s[0] == '+')) {
			free(ops);
			return fu_err(c, 1, "truncate", "Invalid number: %s",
				      fu_ql(qb, sizeof(qb), o.size));
		}
		if ((rel == '/' || rel == '%') && size == 0) {
			free(ops);
			return fu_err(c, 1, "truncate", "division by zero");
		}
	}
	int64_t ref_size = -1;
	if (o.ref) {
		struct stat st;
		r = sh_fs_stat(c->fs, o.ref, &st, true);
		if (r < 0) {
			free(ops);
			return fu_err(c, 1, "truncate", "cannot stat %s: %s",
				      fu_q(qb, sizeof(qb), o.ref), strerror(-r));
		}
		ref_size = st.st_size;
		if (!o.size)
			size = ref_size;
	}
	if (n == 0) {
		free(ops);
		return fu_usage_error(c, "truncate", 1, "missing file operand");
	}
	for (int i = 0; i < n; i++) {
		int fd = sh_fs_open(c->fs, ops[i],
				    O_WRONLY | O_NONBLOCK | O_NOCTTY | (o.no_create ? 0 : O_CREAT),
				    0666);
		if (fd < 0) {
			if (!(o.no_create && fd == -ENOENT))
				status = fu_err(c, 1, "truncate", "cannot open %s for writing: %s",
						fu_q(qb, sizeof(qb), ops[i]), strerror(-fd));
			continue;
		}
		struct stat st;
		int64_t cur = 0, want = size;
		if (fstat(fd, &st) == 0)
			cur = st.st_size;
		if (rel && ref_size >= 0)
			cur = ref_size;
		switch (rel) {
		case '+': want = cur + size; break;
		case '-': want = cur - size < 0 ? 0 : cur - size; break;
		case '<': want = cur < size ? cur : size; break;
		case '>': want = cur > size ? cur : size; break;
		case '/': want = cur / size * size; break;
		case '%': want = (cur + size - 1) / size * size; break;
		default: break;
		}
		if (ftruncate(fd, want) < 0)
			status = fu_err(c, 1, "truncate", "failed to truncate %s at %lld bytes: %s",
					fu_q(qb, sizeof(qb), ops[i]), (long long)want, strerror(errno));
		close(fd);
	}
	free(ops);
	return sh_cmd_finish(c, status);
}

/* ---- which ---- */

static bool
is_executable(const struct stat *st)
{
	if (!S_ISREG(st->st_mode))
		return false;
	uid_t u = geteuid();
	if (u == 0)
		return st->st_mode & 0111;
	if (st->st_uid == u)
		return st->st_mode & S_IXUSR;
	if (st->st_gid == getegid())
		return st->st_mode & S_IXGRP;
	gid_t groups[256];
	int ng = getgroups(256, groups);
	for (int i = 0; i < ng; i++)
		if (groups[i] == st->st_gid)
			return st->st_mode & S_IXGRP;
	return st->st_mode & S_IXOTH;
}

static int
sh_cmd_which(struct sh_cmd *c, int argc, char **argv)
{
	bool all = false;
	int i = 1;
	/* debianutils' which: -a only, its own messages and status 2 */
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (strcmp(argv[i], "--help") == 0) {
			sh_out_printf(c->out_buf,
				      "Usage: which [-a] args\n"
				      "Print the full path of each command found in $PATH (box-shell's "
				      "own which).\n"
				      "  -a   print all matching executables in PATH, not just the "
				      "first\n");
			return 0;
		}
		for (const char *q = argv[i] + 1; *q; q++) {
			if (*q != 'a') {
				/* debianutils: the message on stderr, the usage on stdout */
				sh_out_printf(c->err_buf, "Illegal option -%c\n", *q);
				sh_out_printf(c->out_buf, "Usage: which [-a] args\n");
				return sh_cmd_finish(c, 2);
			}
			all = true;
		}
	}
	const char *path = sh_cmd_getenv(c, "PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	int status = i < argc ? 0 : 1;
	/* in the box-shell daemon, only a host program box runs (host.h); box-sh: any */
	int (*runnable)(const char *, const char *) = sh_host_get()->host_runnable;
	for (; i < argc; i++) {
		const char *name = argv[i];
		bool found = false;
		struct stat st;
		if (strchr(name, '/')) {
			if (sh_fs_stat(c->fs, name, &st, true) == 0 && is_executable(&st)) {
				sh_out_printf(c->out_buf, "%s\n", name);
				found = true;
			}
		} else if (*name) {
			for (const char *d = path;;) {
				const char *e = strchr(d, ':');
				size_t dl = e ? (size_t)(e - d) : strlen(d);
				char *cand = malloc(dl + strlen(name) + 3);
				if (!cand)
					break;
				if (dl == 0)
					sprintf(cand, "./%s", name);
				else
					sprintf(cand, "%.*s/%s", (int)dl, d, name);
				if (sh_fs_stat(c->fs, cand, &st, true) == 0 && is_executable(&st) &&
				    (!runnable || runnable(name, cand))) {
					sh_out_printf(c->out_buf, "%s\n", cand);
					found = true;
				}
				free(cand);
				if ((found && !all) || !e)
					break;
				d = e + 1;
			}
		}
		if (!found)
			status = 1;
	}
	return sh_cmd_finish(c, status);
}

/* ---- id ---- */

/*
 * GNU id, box-shell's own (a login shell's /etc/profile asks `id -u`): the ids of the
 * shell's process, or of USER; names from /etc/passwd and /etc/group as the shell's view
 * has them, each read a decided file operation (no NSS: nothing is loaded or connected).
 */
#define ID_DB_MAX (4u << 20) /* a passwd or group file larger than this is not read */

static char *
id_read_db(struct sh_cmd *c, const char *path)
{
	int fd = sh_fs_open(c->fs, path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	size_t cap = 8192, len = 0;
	char *b = malloc(cap + 1);
	ssize_t n;
	while (b && (n = read(fd, b + len, cap - len)) > 0) {
		len += (size_t)n;
		if (len == cap) {
			char *nb = cap >= ID_DB_MAX ? NULL : realloc(b, 2 * cap + 1);
			if (!nb) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
			cap *= 2;
		}
	}
	close(fd);
	if (b)
		b[len] = 0;
	return b;
}

/* Field F (0-based) of the line of DB whose field KEYF is KEY; copied into OUT. */
static bool
id_db_field(const char *db, int keyf, const char *key, int f, char *out, size_t cap)
{
	for (const char *l = db; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *e = strchr(l, '\n');
		size_t ll = e ? (size_t)(e - l) : strlen(l);
		const char *fs[8];
		size_t fl[8];
		int nf = 0;
		const char *p = l;
		while (nf < 8) {
			const char *q = memchr(p, ':', ll - (size_t)(p - l));
			fs[nf] = p;
			fl[nf] = q ? (size_t)(q - p) : ll - (size_t)(p - l);
			nf++;
			if (!q)
				break;
			p = q + 1;
		}
		if (keyf < nf && f < nf && strlen(key) == fl[keyf] &&
		    memcmp(fs[keyf], key, fl[keyf]) == 0 && fl[f] < cap) {
			memcpy(out, fs[f], fl[f]);
			out[fl[f]] = 0;
			return true;
		}
	}
	return false;
}

static const char *
id_name(const char *db, unsigned long id, char *out, size_t cap)
{
	char key[24];
	(void)snprintf(key, sizeof key, "%lu", id);
	return id_db_field(db, 2, key, 0, out, cap) ? out : NULL;
}

static void
id_put(struct sh_cmd *c, const char *db, unsigned long id, bool name)
{
	char nb[256];
	const char *n = name ? id_name(db, id, nb, sizeof nb) : NULL;
	if (n)
		sh_out_printf(c->out_buf, "%s", n);
	else
		sh_out_printf(c->out_buf, "%lu", id);
}

static int
sh_cmd_id(struct sh_cmd *c, int argc, char **argv)
{
	bool u = false, g = false, G = false, n = false, zero = false;
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (strcmp(a, "--help") == 0) {
			sh_out_printf(c->out_buf,
				      "Usage: id [OPTION]... [USER]\n"
				      "Print user and group information for USER, or the current user "
				      "(box-shell's own id).\n"
				      "  -g, --group    print only the effective group ID\n"
				      "  -G, --groups   print all group IDs\n"
				      "  -n, --name     print a name instead of a number, with -u, -g or -G\n"
				      "  -r, --real     print the real ID instead of the effective ID\n"
				      "  -u, --user     print only the effective user ID\n"
				      "  -z, --zero     delimit entries with NUL characters\n");
			return 0;
		}
		if (a[1] == '-') {
			const char *l = a + 2;
			if (strcmp(l, "user") == 0)
				u = true;
			else if (strcmp(l, "group") == 0)
				g = true;
			else if (strcmp(l, "groups") == 0)
				G = true;
			else if (strcmp(l, "name") == 0)
				n = true;
			else if (strcmp(l, "real") == 0)
				;
			else if (strcmp(l, "zero") == 0)
				zero = true;
			else
				return fu_usage_error(c, "id", 1, "unrecognized option '%s'", a);
			continue;
		}
		for (const char *q = a + 1; *q; q++) {
			switch (*q) {
			case 'u': u = true; break;
			case 'g': g = true; break;
			case 'G': G = true; break;
			case 'n': n = true; break;
			case 'r': break;
			case 'z': zero = true; break;
			case 'a': break; /* ignored, as GNU does */
			default:
				return fu_usage_error(c, "id", 1, "invalid option -- '%c'", *q);
			}
		}
	}
	if (u + g + G > 1)
		return fu_err(c, 1, "id", "cannot print \"only\" of more than one choice");
	if (n && !(u || g || G))
		return fu_err(c, 1, "id", "cannot print only names or real IDs in default format");
	if (zero && !(u || g || G))
		return fu_err(c, 1, "id", "option --zero not permitted in default format");
	if (argc - i > 1)
		return fu_usage_error(c, "id", 1, "extra operand '%s'", argv[i + 1]);
	char *pw = id_read_db(c, "/etc/passwd"), *gr = id_read_db(c, "/etc/group");
	unsigned long uid = geteuid(), gid = getegid();
	unsigned long groups[256];
	size_t ng = 0;
	const char *user = i < argc ? argv[i] : NULL;
	int st = 0;
	if (user) {
		char f[64], name[256];
		const char *nm = user;
		if (id_db_field(pw ? pw : "", 0, user, 2, f, sizeof f) ||
		    (id_db_field(pw ? pw : "", 2, user, 2, f, sizeof f) &&
		     id_db_field(pw ? pw : "", 2, user, 0, name, sizeof name) && (nm = name))) {
			uid = strtoul(f, NULL, 10);
			(void)id_db_field(pw, 2, f, 3, f, sizeof f);
			gid = strtoul(f, NULL, 10);
			groups[ng++] = gid;
			/* the groups that list the user as a member (field 3) */
			for (const char *l = gr; l && *l && ng < 256;
			     l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
				const char *e = strchr(l, '\n');
				size_t ll = e ? (size_t)(e - l) : strlen(l);
				const char *c2 = memchr(l, ':', ll), *c3 = NULL, *c4 = NULL;
				if (c2)
					c3 = memchr(c2 + 1, ':', ll - (size_t)(c2 + 1 - l));
				if (c3)
					c4 = memchr(c3 + 1, ':', ll - (size_t)(c3 + 1 - l));
				if (!c4)
					continue;
				const char *m = c4 + 1, *end = l + ll;
				while (m < end) {
					const char *comma = memchr(m, ',', (size_t)(end - m));
					size_t ml = comma ? (size_t)(comma - m) : (size_t)(end - m);
					if (ml == strlen(nm) && memcmp(m, nm, ml) == 0) {
						unsigned long gg = strtoul(c3 + 1, NULL, 10);
						bool dup = false;
						for (size_t k = 0; k < ng; k++)
							dup |= groups[k] == gg;
						if (!dup)
							groups[ng++] = gg;
						break;
					}
					m = comma ? comma + 1 : end;
				}
			}
		} else {
			st = fu_err(c, 1, "id", "'%s': no such user", user);
			goto out;
		}
	} else {
		gid_t gl[256];
		int k = getgroups(256, gl);
		groups[ng++] = gid;
		for (int j = 0; j < k && ng < 256; j++) {
			bool dup = false;
			for (size_t q = 0; q < ng; q++)
				dup |= groups[q] == gl[j];
			if (!dup)
				groups[ng++] = gl[j];
		}
	}
	const char *pdb = pw ? pw : "", *gdb = gr ? gr : "";
	char end = zero ? '\0' : '\n';
	if (u || g) {
		id_put(c, u ? pdb : gdb, u ? uid : gid, n);
		sh_out_write(c->out_buf, &end, 1);
	} else if (G) {
		for (size_t k = 0; k < ng; k++) {
			if (k)
				sh_out_write(c->out_buf, zero ? "\0" : " ", 1);
			id_put(c, gdb, groups[k], n);
		}
		sh_out_write(c->out_buf, &end, 1);
	} else {
		char nb[256];
		const char *nm = id_name(pdb, uid, nb, sizeof nb);
		sh_out_printf(c->out_buf, nm ? "uid=%lu(%s)" : "uid=%lu", uid, nm);
		nm = id_name(gdb, gid, nb, sizeof nb);
		sh_out_printf(c->out_buf, nm ? " gid=%lu(%s)" : " gid=%lu", gid, nm);
		for (size_t k = 0; k < ng; k++) {
			nm = id_name(gdb, groups[k], nb, sizeof nb);
			sh_out_printf(c->out_buf, "%s", k ? "," : " groups=");
			sh_out_printf(c->out_buf, nm ? "%lu(%s)" : "%lu", groups[k], nm);
		}
		sh_out_printf(c->out_buf, "\n");
	}
out:
	free(pw);
	free(gr);
	return st;
}
