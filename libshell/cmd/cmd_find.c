/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_find.c — box-shell's own `find`: starting points, then an expression of
 * -name -iname -path -ipath -wholename -type -maxdepth -mindepth -depth
 * -newer -size -mtime -mmin -empty -prune -not ! -a -and -o -or ( ) , -true
 * -false -print -print0 -quit -exec … {} ; / + and -delete, evaluated as GNU
 * findutils does (-P: symlinks never followed; readdir order).
 * Decisions: each starting point read_metadata, each directory walked
 * enumerate, its entries read_metadata in one batch before any is used (an
 * expression that reads only names and types takes the type readdir gave,
 * without a stat call per entry),
 * -empty on a directory enumerate, -delete remove_file/remove_dir per entry,
 * each -exec child its own shell:exec (sh_run_child).
 * Trusts: nothing in argv or the file system.
 */
#include <errno.h>
#include <fnmatch.h>
#include <grp.h>
#include <pwd.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd_fileutil.h"
#include "cmdutil.h"

enum fk {
	F_AND, F_OR, F_NOT, F_COMMA, F_TRUE, F_FALSE, F_NAME, F_INAME, F_PATH, F_IPATH, F_TYPE,
	F_NEWER, F_SIZE, F_MTIME, F_MMIN, F_EMPTY, F_PRUNE, F_PRINT, F_PRINT0, F_QUIT, F_EXEC,
	F_EXECPLUS, F_DELETE, F_PRINTF,
};

enum cmpk { CMP_EQ, CMP_LT, CMP_GT };

struct fnode {
	enum fk k;
	struct fnode *l, *r;
	const char *pat;
	unsigned types;          /* F_TYPE: bit per S_IFMT >> 12 */
	enum cmpk cmp;
	int64_t num;             /* size units / days / minutes */
	int64_t unit;            /* size unit */
	struct timespec ref;     /* F_NEWER */
	char **argv;             /* F_EXEC: template (NULL-terminated) */
	int argc;
	char **pend;             /* F_EXECPLUS: collected paths */
	size_t npend, cappend, pendbytes;
	int status;              /* F_EXECPLUS: a failed batch makes find exit 1 */
};

struct find {
	struct sh_cmd *c;
	char **av;
	int ac, pos;
	int maxdepth, mindepth;
	bool depth_first;
	bool quit;
	bool has_action;          /* then no implicit -print */
	bool printf_stop;         /* -printf's \\c: no more output from -printf */
	bool need_stat;           /* a test or action reads more than an entry's type */
	const char *start;        /* the starting point being walked */
	int status;
	struct timespec now;
	struct fnode *nodes[512];   /* every node, for freeing */
	size_t nnodes;
	struct fnode *root;
};

struct fent {
	const char *start;       /* its starting point (for %P) */
	const char *path;
	const char *name;
	struct stat st;
	int depth;
	bool prune;
};

static const char find_usage[] =
	"Usage: find [starting-point...] [expression]\n"
	"Supported (box-shell's own find; symlinks are never followed):\n"
	"  tests:   -name PAT -iname PAT -path PAT -ipath PAT -wholename PAT -type [fdlpsbc]\n"
	"           -newer FILE -size [+-]N[cwbkMG] -mtime [+-]N -mmin [+-]N -empty -true -false\n"
	"  options: -maxdepth N -mindepth N -depth\n"
	"  actions: -print -print0 -printf FORMAT -prune -quit -delete -exec CMD {} ;\n"
	"           -exec CMD {} +\n"
	"  -printf: %p %P %f %h %s %k %b %m %M %y %Y %l %d %i %n %u %g %U %G %t %a %c\n"
	"           %T@ %T+ %Tk (k a strftime letter; %A %C alike) %%, \\n \\t \\0 \\c ...\n"
	"  operators: ( EXPR ) ! EXPR -not EXPR EXPR -a EXPR EXPR -and EXPR EXPR -o EXPR\n"
	"             EXPR -or EXPR EXPR , EXPR\n";

static struct fnode *
fnew(struct find *f, enum fk k)
{
	if (f->nnodes >= sizeof(f->nodes) / sizeof(f->nodes[0]))
		return NULL;
	struct fnode *n = calloc(1, sizeof(*n));
	if (n)
		f->nodes[f->nnodes++] = n;
	if (n)
		n->k = k;
	return n;
}

static int ferr(struct find *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int
ferr(struct find *f, const char *fmt, ...)
{
	char msg[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sh_out_printf(f->c->err_buf, "find: %s\n", msg);
	return -1;
}

static struct fnode *parse_or(struct find *f);

static const char *
need_arg(struct find *f, const char *prim)
{
	if (f->pos >= f->ac) {
		ferr(f, "missing argument to `%s'", prim);
		return NULL;
	}
	return f->av[f->pos++];
}

static int
parse_num(struct find *f, const char *prim, const char *s, enum cmpk *cmp, int64_t *num,
	  char **rest)
{
	*cmp = CMP_EQ;
	if (*s == '+')
		*cmp = CMP_GT, s++;
	else if (*s == '-')
		*cmp = CMP_LT, s++;
	char *end;
	errno = 0;
	if (*s < '0' || *s > '9') {
		sh_out_printf(f->c->err_buf, "find: invalid argument `%s' to `%s'\n", s, prim);
		return -1;
	}
	long long v = strtoll(s, &end, 10);
	if (errno) {
		sh_out_printf(f->c->err_buf, "find: invalid argument `%s' to `%s'\n", s, prim);
		return -1;
	}
	*num = v;
	*rest = end;
	return 0;
}

static struct fnode *
parse_primary(struct find *f)
{
	if (f->pos >= f->ac) {
		ferr(f, "%s", "invalid expression");
		return NULL;
	}
	const char *a = f->av[f->pos++];
	struct fnode *n;
	if (strcmp(a, "(") == 0) {
		n = parse_or(f);
		if (!n)
			return NULL;
		if (f->pos >= f->ac || strcmp(f->av[f->pos], ")") != 0) {
			ferr(f, "%s", "invalid expression; I was expecting to find a ')' somewhere "
				      "but did not see one.");
			return NULL;
		}
		f->pos++;
		return n;
	}
	if (strcmp(a, "!") == 0 || strcmp(a, "-not") == 0) {
		struct fnode *x = parse_primary(f);
		if (!x)
			return NULL;
		if (!(n = fnew(f, F_NOT)))
			return NULL;
		n->l = x;
		return n;
	}
	if (strcmp(a, "-maxdepth") == 0 || strcmp(a, "-mindepth") == 0) {
		const char *v = need_arg(f, a);
		char *end;
		if (!v)
			return NULL;
		long d = strtol(v, &end, 10);
		if (*v < '0' || *v > '9' || *end || d > INT_MAX) {
			sh_out_printf(f->c->err_buf,
				      "find: Expected a positive decimal integer argument to %s, "
				      "but got '%s'\n",
				      a, v);
			return NULL;
		}
		if (a[2] == 'a')
			f->maxdepth = (int)d;
		else
			f->mindepth = (int)d;
		return fnew(f, F_TRUE);
	}
	if (strcmp(a, "-depth") == 0) {
		f->depth_first = true;
		return fnew(f, F_TRUE);
	}
	if (strcmp(a, "-true") == 0)
		return fnew(f, F_TRUE);
	if (strcmp(a, "-false") == 0)
		return fnew(f, F_FALSE);
	struct {
		const char *name;
		enum fk k;
	} pats[] = {{"-name", F_NAME},   {"-iname", F_INAME},    {"-path", F_PATH},
		    {"-ipath", F_IPATH}, {"-wholename", F_PATH}, {"-iwholename", F_IPATH}};
	for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]); i++)
		if (strcmp(a, pats[i].name) == 0) {
			const char *v = need_arg(f, a);
			if (!v || !(n = fnew(f, pats[i].k)))
				return NULL;
			n->pat = v;
			return n;
		}
	if (strcmp(a, "-type") == 0) {
		const char *v = need_arg(f, a);
		if (!v || !(n = fnew(f, F_TYPE)))
			return NULL;
		for (const char *p = v; *p; p++) {
			mode_t m;
			switch (*p) {
			case 'f': m = S_IFREG; break;
			case 'd': m = S_IFDIR; break;
			case 'l': m = S_IFLNK; break;
			case 'p': m = S_IFIFO; break;
			case 's': m = S_IFSOCK; break;
			case 'b': m = S_IFBLK; break;
			case 'c': m = S_IFCHR; break;
			default:
				sh_out_printf(f->c->err_buf, "find: Unknown argument to -type: %c\n",
					      *p);
				return NULL;
			}
			n->types |= 1u << (m >> 12);
			if (p[1] == ',' && p[2])
				p++;
			else if (p[1]) {
				sh_out_printf(f->c->err_buf,
					      "find: Must separate multiple arguments to -type using: "
					      "','\n");
				return NULL;
			}
		}
		return n;
	}
	if (strcmp(a, "-newer") == 0) {
		const char *v = need_arg(f, a);
		struct stat st;
		if (!v || !(n = fnew(f, F_NEWER)))
			return NULL;
		/* -P: a symlink's own time, as GNU's find without -H/-L */
		int r = sh_fs_stat(f->c->fs, v, &st, false);
		if (r < 0) {
			char qb[FU_QBUF];
			sh_out_printf(f->c->err_buf, "find: %s: %s\n", fu_q(qb, sizeof(qb), v),
				      strerror(-r));
			return NULL;
		}
		n->ref = st.st_mtim;
		return n;
	}
	if (strcmp(a, "-size") == 0) {
		const char *v = need_arg(f, a);
		char *rest;
		if (!v || !(n = fnew(f, F_SIZE)) || parse_num(f, a, v, &n->cmp, &n->num, &rest) < 0)
			return NULL;
		n->unit = 512;
		if (*rest) {
			switch (*rest) {
			case 'c': n->unit = 1; break;
			case 'w': n->unit = 2; break;
			case 'b': n->unit = 512; break;
			case 'k': n->unit = 1024; break;
			case 'M': n->unit = 1024 * 1024; break;
			case 'G': n->unit = 1024LL * 1024 * 1024; break;
			default: n->unit = 0; break;
			}
			if (!n->unit || rest[1]) {
				sh_out_printf(f->c->err_buf, "find: invalid -size type `%c'\n",
					      *rest);
				return NULL;
			}
		}
		return n;
	}
	if (strcmp(a, "-mtime") == 0 || strcmp(a, "-mmin") == 0) {
		const char *v = need_arg(f, a);
		char *rest;
		if (!v || !(n = fnew(f, a[2] == 't' ? F_MTIME : F_MMIN)) ||
		    parse_num(f, a, v, &n->cmp, &n->num, &rest) < 0)
			return NULL;
		if (*rest) {
			sh_out_printf(f->c->err_buf, "find: invalid argument `%s' to `%s'\n", v, a);
			return NULL;
		}
		return n;
	}
	if (strcmp(a, "-empty") == 0)
		return fnew(f, F_EMPTY);
	if (strcmp(a, "-prune") == 0)
		return fnew(f, F_PRUNE);
	if (strcmp(a, "-print") == 0 || strcmp(a, "-print0") == 0 || strcmp(a, "-quit") == 0 ||
	    strcmp(a, "-delete") == 0) {
		enum fk k = a[1] == 'q' ? F_QUIT : a[1] == 'd' ? F_DELETE
						  : a[6] == '0' ? F_PRINT0 : F_PRINT;
		if (k == F_DELETE)
			f->depth_first = true;
		if (k != F_QUIT)
			f->has_action = true;
		return fnew(f, k);
	}
	if (strcmp(a, "-printf") == 0) {
		const char *v = need_arg(f, a);
		if (!v || !(n = fnew(f, F_PRINTF)))
			return NULL;
		for (const char *q = v; *q; q++) {
			if (*q == '%' && !q[1]) {
				ferr(f, "%s", "error: % at end of format string");
				return NULL;
			}
			if (*q == '%') {
				q++;
				while (*q && strchr("-+ #0123456789.", *q))
					q++;
				if (!*q)
					break;
				if (!strchr("%pPfhskbmMyYldinUGugtacTAC", *q))
					ferr(f, "warning: unrecognized format directive `%%%c'", *q);
			} else if (*q == '\\' && q[1] && !strchr("abcfnrtv0123456789\\", q[1]))
				ferr(f, "warning: unrecognized escape `\\%c'", q[1]);
			else if (*q == '\\' && q[1])
				q++;
		}
		n->pat = v;
		f->has_action = true;
		return n;
	}
	if (strcmp(a, "-exec") == 0) {
		int start = f->pos, end = -1;
		bool plus = false;
		for (int i = start; i < f->ac; i++) {
			if (strcmp(f->av[i], ";") == 0) {
				end = i;
				break;
			}
			if (strcmp(f->av[i], "+") == 0 && i > start &&
			    strcmp(f->av[i - 1], "{}") == 0) {
				end = i;
				plus = true;
				break;
			}
		}
		if (end < 0 || end == start) {
			ferr(f, "missing argument to `%s'", a);
			return NULL;
		}
		if (!(n = fnew(f, plus ? F_EXECPLUS : F_EXEC)))
			return NULL;
		n->argv = f->av + start;
		n->argc = end - start;
		f->pos = end + 1;
		if (plus)
			for (int i = 0; i < n->argc - 1; i++)
				if (strstr(n->argv[i], "{}")) {
					ferr(f, "%s", "Only one instance of {} is supported with -exec"
						      " ... +");
					return NULL;
				}
		f->has_action = true;
		return n;
	}
	if (a[0] == '-')
		ferr(f, "unknown predicate `%s'", a);
	else
		ferr(f, "paths must precede expression: `%s'", a);
	return NULL;
}

static bool
at_binary_end(struct find *f)
{
	return f->pos >= f->ac || strcmp(f->av[f->pos], ")") == 0 ||
	       strcmp(f->av[f->pos], "-o") == 0 || strcmp(f->av[f->pos], "-or") == 0 ||
	       strcmp(f->av[f->pos], ",") == 0;
}

static struct fnode *
parse_and(struct find *f)
{
	struct fnode *l = parse_primary(f);
	while (l && !at_binary_end(f)) {
		if (strcmp(f->av[f->pos], "-a") == 0 || strcmp(f->av[f->pos], "-and") == 0) {
			f->pos++;
			if (at_binary_end(f)) {
				ferr(f, "%s", "invalid expression");
				return NULL;
			}
		}
		struct fnode *r = parse_primary(f), *n;
		if (!r || !(n = fnew(f, F_AND)))
			return NULL;
		n->l = l;
		n->r = r;
		l = n;
	}
	return l;
}

static struct fnode *
parse_or1(struct find *f)
{
	struct fnode *l = parse_and(f);
	while (l && f->pos < f->ac &&
	       (strcmp(f->av[f->pos], "-o") == 0 || strcmp(f->av[f->pos], "-or") == 0)) {
		f->pos++;
		struct fnode *r = parse_and(f), *n;
		if (!r || !(n = fnew(f, F_OR)))
			return NULL;
		n->l = l;
		n->r = r;
		l = n;
	}
	return l;
}

static struct fnode *
parse_or(struct find *f)
{
	struct fnode *l = parse_or1(f);
	while (l && f->pos < f->ac && strcmp(f->av[f->pos], ",") == 0) {
		f->pos++;
		struct fnode *r = parse_or1(f), *n;
		if (!r || !(n = fnew(f, F_COMMA)))
			return NULL;
		n->l = l;
		n->r = r;
		l = n;
	}
	return l;
}

static bool
cmp_num(enum cmpk k, int64_t v, int64_t n)
{
	return k == CMP_EQ ? v == n : k == CMP_LT ? v < n : v > n;
}

static int
run_exec(struct find *f, struct fnode *n, char **paths, size_t np)
{
	struct sh_cmd *c = f->c;
	size_t cap = (size_t)n->argc + np + 1;
	char **argv = calloc(cap, sizeof(*argv));
	char **owned = calloc(cap, sizeof(*owned));
	int ac = 0, st;
	if (!argv || !owned) {
		free(argv);
		free(owned);
		return 1;
	}
	if (n->k == F_EXECPLUS) {
		for (int i = 0; i < n->argc - 1; i++)
			argv[ac++] = n->argv[i];
		for (size_t i = 0; i < np; i++)
			argv[ac++] = paths[i];
	} else {
		const char *p = paths[0];
		for (int i = 0; i < n->argc; i++) {
			const char *t = n->argv[i], *hit = strstr(t, "{}");
			if (!hit) {
				argv[ac++] = n->argv[i];
				continue;
			}
			/* GNU replaces every {} inside an argument of -exec … ; */
			size_t len = 0;
			for (const char *q = t; *q;)
				if (q[0] == '{' && q[1] == '}')
					len += strlen(p), q += 2;
				else
					len++, q++;
			char *s = malloc(len + 1), *o = s;
			if (!s)
				break;
			for (const char *q = t; *q;)
				if (q[0] == '{' && q[1] == '}') {
					o = stpcpy(o, p);
					q += 2;
				} else
					*o++ = *q++;
			*o = 0;
			owned[ac] = s;
			argv[ac++] = s;
		}
	}
	argv[ac] = NULL;
	sh_out_flush(c->out_buf);
	sh_out_flush(c->err_buf);
	st = sh_run_child(c, ac, argv, c->in, c->out, c->err);
	for (int i = 0; i < ac; i++)
		free(owned[i]);
	free(owned);
	free(argv);
	return st;
}

static int
flush_plus(struct find *f, struct fnode *n)
{
	if (!n->npend)
		return 0;
	int st = run_exec(f, n, n->pend, n->npend);
	for (size_t i = 0; i < n->npend; i++)
		free(n->pend[i]);
	n->npend = 0;
	n->pendbytes = 0;
	if (st != 0)
		n->status = 1;
	return st;
}

static bool
dir_is_empty(struct find *f, const char *path)
{
	struct fu_dir d;
	if (fu_dir_read(f->c->fs, path, &d) < 0)
		return false;
	bool empty = d.n == 0;
	fu_dir_free(&d);
	return empty;
}

/* A time of -printf: %t %a %c, %T@ %T+ %TS %TT with GNU's 10 fraction digits. */
static void
printf_time(struct sh_out *o, char k, const struct timespec *ts, const char *spec)
{
	char buf[128], tmp[64];
	struct tm tm;
	time_t t = ts->tv_sec;
	localtime_r(&t, &tm);
	switch (k) {
	case 't':
		strftime(tmp, sizeof(tmp), "%a %b %e %H:%M:%S", &tm);
		snprintf(buf, sizeof(buf), "%s.%09ld0 %d", tmp, ts->tv_nsec, tm.tm_year + 1900);
		break;
	case '@':
		snprintf(buf, sizeof(buf), "%lld.%09ld0", (long long)ts->tv_sec, ts->tv_nsec);
		break;
	case '+':
	case 'S':
	case 'T':
		strftime(tmp, sizeof(tmp), k == '+' ? "%Y-%m-%d+%H:%M:%S" : k == 'T' ? "%H:%M:%S" : "%S",
			 &tm);
		snprintf(buf, sizeof(buf), "%s.%09ld0", tmp, ts->tv_nsec);
		break;
	default: {
		char one[3] = {'%', k, 0};
		/* one strftime letter, checked by the caller */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		if (!strftime(buf, sizeof(buf), one, &tm))
			buf[0] = 0;
#pragma GCC diagnostic pop
		break;
	}
	}
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	sh_out_printf(o, spec, buf);
#pragma GCC diagnostic pop
}

static char
printf_type(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG: return 'f';
	case S_IFDIR: return 'd';
	case S_IFLNK: return 'l';
	case S_IFIFO: return 'p';
	case S_IFSOCK: return 's';
	case S_IFBLK: return 'b';
	case S_IFCHR: return 'c';
	default: return 'U';
	}
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
/* -printf FORMAT for one file; the spec is '%' + flags and width from the format. */
static void
do_printf(struct find *f, const char *fmt, struct fent *e)
{
	struct sh_out *o = f->c->out_buf;
	char num[64];
	for (const char *p = fmt; *p; p++) {
		if (*p == '\\' && p[1]) {
			char ch = 0;
			p++;
			switch (*p) {
			case 'a': ch = '\a'; break;
			case 'b': ch = '\b'; break;
			case 'f': ch = '\f'; break;
			case 'n': ch = '\n'; break;
			case 'r': ch = '\r'; break;
			case 't': ch = '\t'; break;
			case 'v': ch = '\v'; break;
			case '\\': ch = '\\'; break;
			case 'c': f->printf_stop = true; return;
			default:
				if (*p >= '0' && *p <= '7') {
					int v = 0, k = 0;
					while (k < 3 && p[k] >= '0' && p[k] <= '7')
						v = v * 8 + (p[k++] - '0');
					p += k - 1;
					ch = (char)v;
				} else {
					sh_out_write(o, p - 1, 2);
					continue;
				}
			}
			sh_out_write(o, &ch, 1);
			continue;
		}
		if (*p != '%' || !p[1]) {
			sh_out_write(o, p, 1);
			continue;
		}
		char spec[32] = "%";
		size_t sl = 1;
		p++;
		while (*p && strchr("-+ #0", *p) && sl < 8)
			spec[sl++] = *p++;
		while (*p >= '0' && *p <= '9' && sl < 16)
			spec[sl++] = *p++;
		if (*p == '.') {
			spec[sl++] = *p++;
			while (*p >= '0' && *p <= '9' && sl < 24)
				spec[sl++] = *p++;
		}
		spec[sl++] = 's';
		spec[sl] = 0;
		const struct stat *st = &e->st;
		const char *slash = strrchr(e->path, '/');
		switch (*p) {
		case 0: return;
		case '%': sh_out_write(o, "%", 1); break;
		case 'p': sh_out_printf(o, spec, e->path); break;
		case 'P': {
			size_t l = strlen(e->start);
			const char *r = strncmp(e->path, e->start, l) == 0 ? e->path + l : e->path;
			while (*r == '/')
				r++;
			sh_out_printf(o, spec, r);
			break;
		}
		case 'f':
			sh_out_printf(o, spec, slash && slash[1] ? slash + 1 : e->path);
			break;
		case 'h':
			if (!slash)
				sh_out_printf(o, spec, ".");
			else {
				size_t l = (size_t)(slash - e->path);
				char *h = strndup(e->path, l ? l : 1);
				sh_out_printf(o, spec, h ? h : "");
				free(h);
			}
			break;
		case 's':
			snprintf(num, sizeof(num), "%lld", (long long)st->st_size);
			sh_out_printf(o, spec, num);
			break;
		case 'k':
			snprintf(num, sizeof(num), "%lld", ((long long)st->st_blocks * 512 + 1023) / 1024);
			sh_out_printf(o, spec, num);
			break;
		case 'b':
			snprintf(num, sizeof(num), "%lld", (long long)st->st_blocks);
			sh_out_printf(o, spec, num);
			break;
		case 'm':
			snprintf(num, sizeof(num), "%o", st->st_mode & 07777);
			sh_out_printf(o, spec, num);
			break;
		case 'M':
			fu_mode_string(st->st_mode, num);
			sh_out_printf(o, spec, num);
			break;
		case 'y':
		case 'Y': {
			char t = printf_type(st->st_mode);
			if (*p == 'Y' && S_ISLNK(st->st_mode)) {
				struct stat ts;
				int r = sh_fs_stat(f->c->fs, e->path, &ts, true);
				t = r == 0 ? printf_type(ts.st_mode) : r == -ELOOP ? 'L' : 'N';
			}
			num[0] = t;
			num[1] = 0;
			sh_out_printf(o, spec, num);
			break;
		}
		case 'l': {
			char *target = NULL;
			if (S_ISLNK(st->st_mode) && sh_fs_readlink(f->c->fs, e->path, &target) == 0) {
				sh_out_printf(o, spec, target);
				free(target);
			} else
				sh_out_printf(o, spec, "");
			break;
		}
		case 'd':
			snprintf(num, sizeof(num), "%d", e->depth);
			sh_out_printf(o, spec, num);
			break;
		case 'i':
			snprintf(num, sizeof(num), "%llu", (unsigned long long)st->st_ino);
			sh_out_printf(o, spec, num);
			break;
		case 'n':
			snprintf(num, sizeof(num), "%llu", (unsigned long long)st->st_nlink);
			sh_out_printf(o, spec, num);
			break;
		case 'U':
		case 'G':
			snprintf(num, sizeof(num), "%u", *p == 'U' ? (unsigned)st->st_uid : (unsigned)st->st_gid);
			sh_out_printf(o, spec, num);
			break;
		case 'u':
		case 'g': {
			char nb[4096];
			const char *name = NULL;
			if (*p == 'u') {
				struct passwd pw, *res = NULL;
				if (getpwuid_r(st->st_uid, &pw, nb, sizeof(nb), &res) == 0 && res)
					name = res->pw_name;
			} else {
				struct group gr, *res = NULL;
				if (getgrgid_r(st->st_gid, &gr, nb, sizeof(nb), &res) == 0 && res)
					name = res->gr_name;
			}
			if (!name) {
				snprintf(num, sizeof(num), "%u",
					 *p == 'u' ? (unsigned)st->st_uid : (unsigned)st->st_gid);
				name = num;
			}
			sh_out_printf(o, spec, name);
			break;
		}
		case 't': printf_time(o, 't', &st->st_mtim, spec); break;
		case 'a': printf_time(o, 't', &st->st_atim, spec); break;
		case 'c': printf_time(o, 't', &st->st_ctim, spec); break;
		case 'T':
		case 'A':
		case 'C': {
			const struct timespec *ts = *p == 'T' ? &st->st_mtim : *p == 'A' ? &st->st_atim
										: &st->st_ctim;
			if (p[1] && (strchr("@+", p[1]) || strchr("aAbBcCdDeFgGhHIjklmMnprRsStTuUVwWxXyYzZ", p[1]))) {
				p++;
				printf_time(o, *p, ts, spec);
			} else
				sh_out_write(o, p - 1, 2);
			break;
		}
		default:
			/* GNU prints an unknown directive as it is */
			sh_out_write(o, "%", 1);
			sh_out_write(o, p, 1);
			break;
		}
	}
}
#pragma GCC diagnostic pop

static bool
eval(struct find *f, struct fnode *n, struct fent *e)
{
	char qb[FU_QBUF];
	switch (n->k) {
	case F_AND: return eval(f, n->l, e) && !f->quit && eval(f, n->r, e);
	case F_OR: return eval(f, n->l, e) || (!f->quit && eval(f, n->r, e));
	case F_COMMA: eval(f, n->l, e); return !f->quit && eval(f, n->r, e);
	case F_NOT: return !eval(f, n->l, e);
	case F_TRUE: return true;
	case F_FALSE: return false;
	case F_NAME:
	case F_INAME: {
		/* the name of a starting point "dir/" is "dir" */
		char *b = fu_basename(e->path);
		bool m = b && fnmatch(n->pat, b, n->k == F_INAME ? FNM_CASEFOLD : 0) == 0;
		free(b);
		return m;
	}
	case F_PATH: return fnmatch(n->pat, e->path, 0) == 0;
	case F_IPATH: return fnmatch(n->pat, e->path, FNM_CASEFOLD) == 0;
	case F_TYPE: return n->types & (1u << ((e->st.st_mode & S_IFMT) >> 12));
	case F_NEWER:
		return e->st.st_mtim.tv_sec > n->ref.tv_sec ||
		       (e->st.st_mtim.tv_sec == n->ref.tv_sec &&
			e->st.st_mtim.tv_nsec > n->ref.tv_nsec);
	case F_SIZE: {
		int64_t sz = e->st.st_size;
		int64_t units = (sz + n->unit - 1) / n->unit;
		return cmp_num(n->cmp, units, n->num);
	}
	case F_MTIME: {
		int64_t diff = f->now.tv_sec - e->st.st_mtim.tv_sec;
		int64_t days = diff >= 0 ? diff / 86400 : -((-diff + 86399) / 86400);
		return cmp_num(n->cmp, days, n->num);
	}
	case F_MMIN: {
		/* GNU's window: -mmin N is (N-1, N] minutes ago */
		double diff = (double)(f->now.tv_sec - e->st.st_mtim.tv_sec) +
			      (double)(f->now.tv_nsec - e->st.st_mtim.tv_nsec) / 1e9;
		double lim = (double)n->num * 60;
		if (n->cmp == CMP_GT)
			return diff > lim;
		if (n->cmp == CMP_LT)
			return diff < lim;
		return diff > lim - 60 && diff <= lim;
	}
	case F_EMPTY:
		if (S_ISREG(e->st.st_mode))
			return e->st.st_size == 0;
		if (S_ISDIR(e->st.st_mode))
			return dir_is_empty(f, e->path);
		return false;
	case F_PRUNE:
		if (!f->depth_first)
			e->prune = true;
		return true;
	case F_PRINT: sh_out_printf(f->c->out_buf, "%s\n", e->path); return true;
	case F_PRINT0: sh_out_write(f->c->out_buf, e->path, strlen(e->path) + 1); return true;
	case F_PRINTF:
		if (!f->printf_stop)
			do_printf(f, n->pat, e);
		return true;
	case F_QUIT: f->quit = true; return true;
	case F_DELETE: {
		if (strcmp(e->path, ".") == 0)
			return true;
		int r = S_ISDIR(e->st.st_mode) ? sh_fs_rmdir(f->c->fs, e->path)
					       : sh_fs_unlink(f->c->fs, e->path);
		if (r < 0) {
			sh_out_printf(f->c->err_buf, "find: cannot delete %s: %s\n",
				      fu_q(qb, sizeof(qb), e->path), strerror(-r));
			f->status |= 1;
			return false;
		}
		return true;
	}
	case F_EXEC: {
		char *p = (char *)e->path;
		return run_exec(f, n, &p, 1) == 0;
	}
	case F_EXECPLUS: {
		if (n->npend == n->cappend) {
			size_t nc = n->cappend ? n->cappend * 2 : 64;
			char **np = realloc(n->pend, nc * sizeof(*np));
			if (!np)
				return false;
			n->pend = np;
			n->cappend = nc;
		}
		n->pend[n->npend] = strdup(e->path);
		if (!n->pend[n->npend])
			return false;
		n->pendbytes += strlen(e->path) + 1;
		n->npend++;
		/* keep each child's command line well under ARG_MAX, as GNU does */
		if (n->pendbytes > 120 * 1024 || n->npend >= 4096)
			flush_plus(f, n);
		return true;
	}
	default: return false;
	}
}

static void
visit(struct find *f, struct fent *e)
{
	if (e->depth >= f->mindepth)
		eval(f, f->root, e);
}

/*
 * The entries' read_metadata decisions and outcomes, as fu_dir_stat_all makes
 * them; when the expression reads nothing of an entry but its name and type
 * (-name, -type, -print, -exec...), the type readdir gave stands for the
 * lstat (no stat call per entry, as GNU find with d_type).
 */
static void
stat_entries(struct find *f, const char *path, struct fu_dir *d)
{
	struct sh_fs *fs = f->c->fs;
	if (f->need_stat) {
		fu_dir_stat_all(fs, path, d);
		return;
	}
	for (size_t base = 0; base < d->n; base += SH_DECIDE_BATCH_MAX) {
		size_t k = d->n - base < SH_DECIDE_BATCH_MAX ? d->n - base : SH_DECIDE_BATCH_MAX;
		char *names[SH_DECIDE_BATCH_MAX];
		bool perm[SH_DECIDE_BATCH_MAX];
		for (size_t j = 0; j < k; j++)
			names[j] = d->e[base + j].name;
		int r = sh_fs_decide_entries(fs, path, names, k, SH_FS_READ, SH_OP_READ_METADATA,
					     perm);
		for (size_t j = 0; j < k; j++) {
			struct fu_dirent *e = &d->e[base + j];
			char *child = fu_join(path, e->name);
			e->permitted = r == 0 && perm[j];
			if (!child)
				e->st_err = -ENOMEM;
			else
				e->st_err = sh_fs_stat_at_type(fs, d->dir ? dirfd(d->dir) : -1, child,
							       e->name, e->d_type, &e->st);
			free(child);
		}
	}
}

static void
walk(struct find *f, const char *path, const struct stat *st, int depth)
{
	struct sh_cmd *c = f->c;
	char qb[FU_QBUF];
	struct fent e = {.start = f->start, .path = path, .st = *st, .depth = depth};
	if (fu_interrupted(c))
		f->quit = true;
	if (f->quit)
		return;
	if (!f->depth_first)
		visit(f, &e);
	if (f->quit)
		return;
	if (S_ISDIR(st->st_mode) && !e.prune && depth < f->maxdepth && depth < 100000) {
		struct fu_dir d;
		int r = fu_dir_read(c->fs, path, &d);
		if (r < 0) {
			sh_out_printf(c->err_buf, "find: %s: %s\n", fu_q(qb, sizeof(qb), path),
				      strerror(-r));
			f->status |= 1;
		} else {
			stat_entries(f, path, &d);
			for (size_t i = 0; i < d.n && !f->quit; i++) {
				char *child = fu_join(path, d.e[i].name);
				struct stat cst = d.e[i].st;
				int sr;
				if (!child)
					break;
				sr = d.e[i].st_err;
				if (sr < 0) {
					sh_out_printf(c->err_buf, "find: %s: %s\n",
						      fu_q(qb, sizeof(qb), child), strerror(-sr));
					f->status |= 1;
				} else
					walk(f, child, &cst, depth + 1);
				free(child);
			}
			fu_dir_free(&d);
		}
	}
	if (f->depth_first && !f->quit)
		visit(f, &e);
}

int sh_cmd_find(struct sh_cmd *c, int argc, char **argv);
int
sh_cmd_find(struct sh_cmd *c, int argc, char **argv)
{
	struct find *f = calloc(1, sizeof(*f));
	if (!f)
		return fu_err(c, 1, "find", "memory exhausted");
	f->c = c;
	f->av = argv;
	f->ac = argc;
	f->maxdepth = INT_MAX;
	clock_gettime(CLOCK_REALTIME, &f->now);
	int first = 1;
	if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		sh_out_printf(c->out_buf, "%s", find_usage);
		free(f);
		return 0;
	}
	/* -H -L -P: only -P (the default) is supported: find never follows symlinks */
	while (first < argc && argv[first][0] == '-' && argv[first][1] && !argv[first][2] &&
	       strchr("HLPO", argv[first][1])) {
		if (argv[first][1] != 'P') {
			sh_out_printf(c->err_buf,
				      "find: -%c is not supported (box-shell's find never follows "
				      "symlinks)\n",
				      argv[first][1]);
			free(f);
			return 1;
		}
		first++;
	}
	int npaths_end = first;
	while (npaths_end < argc) {
		const char *a = argv[npaths_end];
		if ((a[0] == '-' && a[1]) || strcmp(a, "(") == 0 || strcmp(a, "!") == 0)
			break;
		npaths_end++;
	}
	f->pos = npaths_end;
	struct fnode *expr = NULL;
	if (f->pos < argc) {
		expr = parse_or(f);
		if (expr && f->pos < argc) {
			if (strcmp(argv[f->pos], ")") == 0)
				ferr(f, "%s", "you have too many ')'");
			else
				ferr(f, "paths must precede expression: `%s'", argv[f->pos]);
			expr = NULL;
		}
		if (!expr) {
			for (size_t i = 0; i < f->nnodes; i++)
				free(f->nodes[i]);
			free(f);
			return 1;
		}
	}
	bool action = f->has_action;
	struct fnode *pr = fnew(f, F_PRINT);
	if (!expr)
		f->root = pr;
	else if (!action) {
		struct fnode *a = fnew(f, F_AND);
		if (a) {
			a->l = expr;
			a->r = pr;
		}
		f->root = a;
	} else
		f->root = expr;
	if (!f->root) {
		free(f);
		return fu_err(c, 1, "find", "expression too large");
	}
	for (size_t i = 0; i < f->nnodes; i++)
		switch (f->nodes[i]->k) {
		case F_NEWER: case F_SIZE: case F_MTIME: case F_MMIN: case F_EMPTY: case F_PRINTF:
			f->need_stat = true;
			break;
		default: break;
		}
	static char dot[] = ".";
	char *defpath[] = {dot};
	char **paths = argv + first;
	int np = npaths_end - first;
	if (np == 0) {
		paths = defpath;
		np = 1;
	}
	char qb[FU_QBUF];
	for (int i = 0; i < np && !f->quit; i++) {
		struct stat st;
		if (!*paths[i]) {
			sh_out_printf(c->err_buf, "find: '': No such file or directory\n");
			f->status |= 1;
			continue;
		}
		int r = sh_fs_stat(c->fs, paths[i], &st, false);
		if (r < 0) {
			sh_out_printf(c->err_buf, "find: %s: %s\n", fu_q(qb, sizeof(qb), paths[i]),
				      strerror(-r));
			f->status |= 1;
			continue;
		}
		f->start = paths[i];
		walk(f, paths[i], &st, 0);
	}
	for (size_t i = 0; i < f->nnodes; i++)
		if (f->nodes[i]->k == F_EXECPLUS) {
			flush_plus(f, f->nodes[i]);
			f->status |= f->nodes[i]->status;
			free(f->nodes[i]->pend);
		}
	int status = f->status & 1;
	for (size_t i = 0; i < f->nnodes; i++)
		free(f->nodes[i]);
	free(f);
	return sh_cmd_finish(c, status);
}
