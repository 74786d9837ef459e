/*
 * cmd_find.c — box-shell's own `find`: starting points, then an expression of
 * -name -iname -path -ipath -wholename -type -maxdepth -mindepth -depth
 * -newer -size -mtime -mmin -empty -prune -not ! -a -and -o -or ( ) , -true
 * -false -print -print0 -quit -exec … {} ; / + and -delete, evaluated as GNU
 * findutils does (-P: symlinks never followed; readdir order).
 * Decisions: each starting point read_metadata, each directory walked
 * enumerate, its entries read_metadata in one batch before any is used,
 * -empty on a directory enumerate, -delete remove_file/remove_dir per entry,
 * each -exec child its own shell:exec (sh_run_child).
 * Trusts: nothing in argv or the file system.
 */
#include <errno.h>
#include <fnmatch.h>
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
	F_EXECPLUS, F_DELETE,
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
	int status;
	struct timespec now;
	struct fnode *nodes[512];   /* every node, for freeing */
	size_t nnodes;
	struct fnode *root;
};

struct fent {
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
	"  actions: -print -print0 -prune -quit -delete -exec CMD {} ; -exec CMD {} +\n"
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

static void
walk(struct find *f, const char *path, const struct stat *st, int depth)
{
	struct sh_cmd *c = f->c;
	char qb[FU_QBUF];
	struct fent e = {.path = path, .st = *st, .depth = depth};
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
			fu_dir_stat_all(c->fs, path, &d);
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
