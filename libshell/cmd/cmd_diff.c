/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_diff.c — box-shell's own diff: normal and unified
 * (-u, -U N) output, -q, -s, -r (directories walked through fsops: an
 * enumerate per directory, read_content per file), -N, -a, -i, -b, -w,
 * --label; GNU diffutils 3.8's messages and statuses (0 same, 1 different,
 * 2 trouble). The edit script is Myers' greedy O((N+M)D) one over line
 * hashes; when its trace would exceed SH_DIFF_TRACE_MAX entries the rest
 * is reported as one replaced block (a correct, not minimal, diff).
 * Timestamps in unified headers are in the process's time zone.
 * Trusts: nothing in the files or the arguments.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "cmd.h"
#include "cmd_text.h"
#include "cmdutil.h"

#define SH_DIFF_TRACE_MAX (16u * 1024 * 1024)

struct dopts {
	bool unified, brief, same, recursive, new_file, text, icase, space_change, all_space;
	long context;
	const char *label[2];
	const char *switches;   /* the options as given, for "diff -r ..." lines */
	bool any_diff, trouble;
};

struct dfile {
	const char *name;
	char *data;
	size_t len;
	struct stat st;
	bool missing;
	/* lines */
	const char **lp;
	size_t *ll;
	uint64_t *hash;
	size_t n;
	bool last_nl;           /* the last line ends with '\n' */
};

static void
dfile_free(struct dfile *f)
{
	free(f->data);
	free(f->lp);
	free(f->ll);
	free(f->hash);
}

static uint64_t
line_hash(const struct dopts *o, const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	bool in_space = false;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)p[i];
		if (o->all_space && (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f'))
			continue;
		if (o->space_change && (ch == ' ' || ch == '\t')) {
			in_space = true;
			continue;
		}
		if (in_space) {
			h = (h ^ ' ') * 1099511628211ull;
			in_space = false;
		}
		if (o->icase)
			ch = (unsigned char)tolower(ch);
		h = (h ^ ch) * 1099511628211ull;
	}
	return h;
}

static bool
lines_equal(const struct dopts *o, const struct dfile *a, size_t i, const struct dfile *b, size_t j)
{
	if (a->hash[i] != b->hash[j])
		return false;
	if (!o->icase && !o->space_change && !o->all_space)
		return a->ll[i] == b->ll[j] && memcmp(a->lp[i], b->lp[j], a->ll[i]) == 0;
	return true; /* hashes of the normalized lines match */
}

static int
split_file(const struct dopts *o, struct dfile *f)
{
	size_t cap = 64;
	f->lp = malloc(cap * sizeof(char *));
	f->ll = malloc(cap * sizeof(size_t));
	if (!f->lp || !f->ll)
		return -ENOMEM;
	f->n = 0;
	f->last_nl = true;
	const char *p = f->data, *e = f->data + f->len;
	while (p < e) {
		const char *q = memchr(p, '\n', (size_t)(e - p));
		if (f->n == cap) {
			cap *= 2;
			const char **np = realloc(f->lp, cap * sizeof(char *));
			size_t *nl = np ? realloc(f->ll, cap * sizeof(size_t)) : NULL;
			if (np)
				f->lp = np;
			if (!np || !nl)
				return -ENOMEM;
			f->ll = nl;
		}
		f->lp[f->n] = p;
		f->ll[f->n++] = q ? (size_t)(q - p) : (size_t)(e - p);
		if (!q)
			f->last_nl = false;
		p = q ? q + 1 : e;
	}
	f->hash = malloc((f->n + 1) * sizeof(uint64_t));
	if (!f->hash)
		return -ENOMEM;
	for (size_t i = 0; i < f->n; i++)
		f->hash[i] = line_hash(o, f->lp[i], f->ll[i]);
	return 0;
}

/* An edit script: for each line of A, deleted?; for each of B, inserted? */
static int
myers(const struct dopts *o, const struct dfile *a, const struct dfile *b, bool *del, bool *ins)
{
	size_t n = a->n, m = b->n;
	size_t pre = 0;
	while (pre < n && pre < m && lines_equal(o, a, pre, b, pre))
		pre++;
	size_t suf = 0;
	while (suf < n - pre && suf < m - pre && lines_equal(o, a, n - 1 - suf, b, m - 1 - suf))
		suf++;
	size_t N = n - pre - suf, M = m - pre - suf;
	if (N == 0 || M == 0) {
		for (size_t i = 0; i < N; i++)
			del[pre + i] = true;
		for (size_t j = 0; j < M; j++)
			ins[pre + j] = true;
		return 0;
	}
	size_t max = N + M;
	long off = (long)max;
	long *v = calloc(2 * max + 2, sizeof(long));
	long **trace = calloc(max + 1, sizeof(long *));
	size_t used = 0;
	if (!v || !trace) {
		free(v);
		free(trace);
		return -ENOMEM;
	}
	long dfound = -1;
	for (long d = 0; d <= (long)max; d++) {
		used += (size_t)(2 * d + 1);
		if (used > SH_DIFF_TRACE_MAX)
			break;
		trace[d] = malloc((size_t)(2 * d + 1) * sizeof(long));
		if (!trace[d])
			break;
		for (long k = -d; k <= d; k += 2) {
			long x;
			if (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
				x = v[off + k + 1];
			else
				x = v[off + k - 1] + 1;
			long y = x - k;
			while (x < (long)N && y < (long)M &&
			       lines_equal(o, a, pre + (size_t)x, b, pre + (size_t)y))
				x++, y++;
			v[off + k] = x;
			if (x >= (long)N && y >= (long)M) {
				dfound = d;
				break;
			}
		}
		memcpy(trace[d], v + off - d, (size_t)(2 * d + 1) * sizeof(long));
		if (dfound >= 0)
			break;
	}
	if (dfound < 0) {
		/* too big: the middle is one replaced block */
		for (size_t i = 0; i < N; i++)
			del[pre + i] = true;
		for (size_t j = 0; j < M; j++)
			ins[pre + j] = true;
	} else {
		long x = (long)N, y = (long)M;
		for (long d = dfound; d > 0; d--) {
			long *pv = trace[d - 1];
			long k = x - y;
			long pk;
			/* pv is indexed by k + (d - 1) */
			if (k == -d || (k != d && pv[k - 1 + (d - 1)] < pv[k + 1 + (d - 1)]))
				pk = k + 1;
			else
				pk = k - 1;
			long px = pv[pk + (d - 1)], py = px - pk;
			while (x > px && y > py)
				x--, y--;
			if (pk == k + 1)
				ins[pre + (size_t)(y - 1)] = true; /* down: an insertion */
			else
				del[pre + (size_t)(x - 1)] = true; /* right: a deletion */
			x = px;
			y = py;
		}
	}
	for (size_t d = 0; d <= max && trace[d]; d++)
		free(trace[d]);
	free(trace);
	free(v);
	return 0;
}

static void
put_line(struct sh_cmd *c, const char *prefix, const struct dfile *f, size_t i)
{
	sh_out_write(c->out_buf, prefix, strlen(prefix));
	sh_out_write(c->out_buf, f->lp[i], f->ll[i]);
	sh_out_write(c->out_buf, "\n", 1);
	if (i + 1 == f->n && !f->last_nl)
		sh_out_write(c->out_buf, "\\ No newline at end of file\n", 28);
}

static void
range_normal(struct sh_cmd *c, size_t from, size_t count)
{
	/* lines from+1 .. from+count (1-based); count 0: the line before */
	if (count == 0)
		sh_out_printf(c->out_buf, "%zu", from);
	else if (count == 1)
		sh_out_printf(c->out_buf, "%zu", from + 1);
	else
		sh_out_printf(c->out_buf, "%zu,%zu", from + 1, from + count);
}

static void
output_normal(struct sh_cmd *c, const struct dfile *a, const struct dfile *b, const bool *del,
	      const bool *ins)
{
	size_t i = 0, j = 0;
	while (i < a->n || j < b->n) {
		if ((i < a->n && del[i]) || (j < b->n && ins[j])) {
			size_t i0 = i, j0 = j;
			while (i < a->n && del[i])
				i++;
			while (j < b->n && ins[j])
				j++;
			size_t nd = i - i0, ni = j - j0;
			char cmd = nd && ni ? 'c' : nd ? 'd' : 'a';
			range_normal(c, i0, nd);
			sh_out_write(c->out_buf, &cmd, 1);
			range_normal(c, j0, ni);
			sh_out_write(c->out_buf, "\n", 1);
			for (size_t k = i0; k < i; k++)
				put_line(c, "< ", a, k);
			if (nd && ni)
				sh_out_write(c->out_buf, "---\n", 4);
			for (size_t k = j0; k < j; k++)
				put_line(c, "> ", b, k);
			continue;
		}
		i++;
		j++;
	}
}

static void
time_label(char *buf, size_t cap, const struct stat *st)
{
	struct tm tm;
	localtime_r(&st->st_mtim.tv_sec, &tm);
	char t[64], z[16];
	strftime(t, sizeof(t), "%Y-%m-%d %H:%M:%S", &tm);
	strftime(z, sizeof(z), "%z", &tm);
	snprintf(buf, cap, "%s.%09ld %s", t, st->st_mtim.tv_nsec, z);
}

static void
range_unified(struct sh_cmd *c, size_t start, size_t count)
{
	if (count == 1)
		sh_out_printf(c->out_buf, "%zu", start + 1);
	else
		sh_out_printf(c->out_buf, "%zu,%zu", count ? start + 1 : start, count);
}

static void
output_unified(struct sh_cmd *c, const struct dopts *o, const struct dfile *a,
	       const struct dfile *b, const bool *del, const bool *ins)
{
	char ta[96], tb[96];
	time_label(ta, sizeof(ta), &a->st);
	time_label(tb, sizeof(tb), &b->st);
	if (o->label[0])
		sh_out_printf(c->out_buf, "--- %s\n", o->label[0]);
	else
		sh_out_printf(c->out_buf, "--- %s\t%s\n", a->name, ta);
	if (o->label[1])
		sh_out_printf(c->out_buf, "+++ %s\n", o->label[1]);
	else
		sh_out_printf(c->out_buf, "+++ %s\t%s\n", b->name, tb);
	/* Walk the alignment as (i, j) pairs; gather changes into hunks. */
	size_t ctx = (size_t)o->context;
	size_t i = 0, j = 0;
	while (i < a->n || j < b->n) {
		/* find the next change */
		size_t si = i, sj = j;
		while ((si < a->n || sj < b->n) && !(si < a->n && del[si]) && !(sj < b->n && ins[sj]))
			si++, sj++;
		if (si >= a->n && sj >= b->n)
			break;
		/* hunk start: ctx lines before */
		size_t back = si - i < ctx ? si - i : ctx;
		if (back > si)
			back = si;
		size_t hi = si - (si >= back ? back : si), hj = sj - (sj >= back ? back : sj);
		if (hi < i) {
			size_t dlt = i - hi;
			hi += dlt;
			hj += dlt;
		}
		/* extend: changes separated by at most 2*ctx common lines join */
		size_t ei = si, ej = sj;
		for (;;) {
			while ((ei < a->n && del[ei]) || (ej < b->n && ins[ej])) {
				if (ei < a->n && del[ei])
					ei++;
				else
					ej++;
			}
			size_t k = 0;
			size_t ti = ei, tj = ej;
			while ((ti < a->n || tj < b->n) && !(ti < a->n && del[ti]) &&
			       !(tj < b->n && ins[tj]) && k <= 2 * ctx) {
				if (ti >= a->n || tj >= b->n)
					break;
				ti++, tj++, k++;
			}
			bool more = (ti < a->n && del[ti]) || (tj < b->n && ins[tj]);
			if (more && k <= 2 * ctx) {
				ei = ti;
				ej = tj;
				continue;
			}
			break;
		}
		size_t tail_i = ei, tail_j = ej, k = 0;
		while (k < ctx && tail_i < a->n && tail_j < b->n && !del[tail_i] && !ins[tail_j])
			tail_i++, tail_j++, k++;
		sh_out_write(c->out_buf, "@@ -", 4);
		range_unified(c, hi, tail_i - hi);
		sh_out_write(c->out_buf, " +", 2);
		range_unified(c, hj, tail_j - hj);
		sh_out_write(c->out_buf, " @@\n", 4);
		size_t x = hi, y = hj;
		while (x < tail_i || y < tail_j) {
			if (x < tail_i && del[x]) {
				put_line(c, "-", a, x++);
			} else if (y < tail_j && ins[y]) {
				/* deletions of this block first, then insertions */
				put_line(c, "+", b, y++);
			} else {
				put_line(c, " ", a, x);
				x++;
				y++;
			}
		}
		i = tail_i;
		j = tail_j;
	}
}

static int
load(struct sh_cmd *c, struct dopts *o, struct dfile *f, const char *name, bool allow_missing)
{
	f->name = name;
	if (allow_missing) {
		f->missing = true;
		f->data = malloc(1);
		f->len = 0;
		memset(&f->st, 0, sizeof(f->st));
		return f->data ? 0 : -ENOMEM;
	}
	int fd;
	int r = sh_cmd_open_input(c, name, &fd);
	if (r < 0) {
		sh_cmd_error(c, 2, "%s: %s", name, strerror(-r));
		o->trouble = true;
		return r;
	}
	if (fstat(fd, &f->st) < 0)
		memset(&f->st, 0, sizeof(f->st));
	if (r == 0) /* stdin: GNU labels it with the current time */
		clock_gettime(CLOCK_REALTIME, &f->st.st_mtim);
	int e = sh_read_fd_all(fd, c->interrupted, &f->data, &f->len);
	if (r)
		close(fd);
	if (e < 0) {
		sh_cmd_error(c, 2, "%s: %s", name, strerror(-e));
		o->trouble = true;
		return e;
	}
	return 0;
}

/* Compare two regular files (or stdin); header: the "diff -r a b" line. */
static void
diff_files(struct sh_cmd *c, struct dopts *o, const char *an, const char *bn, bool amiss,
	   bool bmiss, bool header)
{
	struct dfile a = { 0 }, b = { 0 };
	if (load(c, o, &a, an, amiss) < 0 || load(c, o, &b, bn, bmiss) < 0)
		goto out;
	if (amiss)
		a.st.st_mtim.tv_sec = 0;
	if (bmiss)
		b.st.st_mtim.tv_sec = 0;
	bool same_bytes = a.len == b.len && memcmp(a.data, b.data, a.len) == 0;
	if (same_bytes) {
		if (o->same)
			sh_out_printf(c->out_buf, "Files %s and %s are identical\n", an, bn);
		goto out;
	}
	bool binary = !o->text && (memchr(a.data, '\0', a.len < 32768 ? a.len : 32768) ||
				   memchr(b.data, '\0', b.len < 32768 ? b.len : 32768));
	if (o->brief || binary) {
		if (split_file(o, &a) < 0 || split_file(o, &b) < 0)
			goto out;
		if (!binary && (o->icase || o->space_change || o->all_space)) {
			bool eq = a.n == b.n;
			for (size_t i = 0; eq && i < a.n; i++)
				eq = lines_equal(o, &a, i, &b, i);
			if (eq)
				goto out;
		}
		o->any_diff = true;
		sh_out_printf(c->out_buf, binary && !o->brief ? "Binary files %s and %s differ\n"
							      : "Files %s and %s differ\n",
			      an, bn);
		goto out;
	}
	if (split_file(o, &a) < 0 || split_file(o, &b) < 0)
		goto out;
	bool *del = calloc(a.n + 1, sizeof(bool)), *ins = calloc(b.n + 1, sizeof(bool));
	if (!del || !ins || myers(o, &a, &b, del, ins) < 0) {
		free(del);
		free(ins);
		sh_cmd_error(c, 2, "%s", strerror(ENOMEM));
		o->trouble = true;
		goto out;
	}
	/* With -b/-w/-i, only whitespace/case differences: no output. */
	bool any = false;
	for (size_t i = 0; i < a.n && !any; i++)
		any = del[i];
	for (size_t j = 0; j < b.n && !any; j++)
		any = ins[j];
	if (!any && a.last_nl != b.last_nl && a.n && b.n) {
		/* the same lines but one lacks the final newline: the last line differs */
		del[a.n - 1] = ins[b.n - 1] = true;
		any = true;
	}
	if (any) {
		o->any_diff = true;
		if (header)
			sh_out_printf(c->out_buf, "diff%s%s %s %s\n", o->switches[0] ? " " : "",
				      o->switches, an, bn);
		if (o->unified)
			output_unified(c, o, &a, &b, del, ins);
		else
			output_normal(c, &a, &b, del, ins);
	}
	free(del);
	free(ins);
out:
	dfile_free(&a);
	dfile_free(&b);
}

static int
cmp_names(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static int
list_dir(struct sh_cmd *c, struct dopts *o, const char *path, char ***out, size_t *n)
{
	DIR *d = sh_fs_opendir(c->fs, path);
	if (!d) {
		sh_cmd_error(c, 2, "%s: %s", path, strerror(errno));
		o->trouble = true;
		return -1;
	}
	size_t cap = 16;
	char **v = malloc(cap * sizeof(char *));
	*n = 0;
	struct dirent *de;
	while (v && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (*n == cap) {
			cap *= 2;
			char **nv = realloc(v, cap * sizeof(char *));
			if (!nv)
				break;
			v = nv;
		}
		v[(*n)++] = strdup(de->d_name);
	}
	closedir(d);
	if (!v)
		return -1;
	qsort(v, *n, sizeof(char *), cmp_names);
	*out = v;
	return 0;
}

static char *
join2(const char *a, const char *b)
{
	char *s = NULL;
	size_t al = strlen(a);
	if (asprintf(&s, "%s%s%s", a, al && a[al - 1] == '/' ? "" : "/", b) < 0)
		return NULL;
	return s;
}

static void diff_paths(struct sh_cmd *c, struct dopts *o, const char *a, const char *b,
		       bool top, int depth);

static void
diff_dirs(struct sh_cmd *c, struct dopts *o, const char *a, const char *b, int depth)
{
	char **la = NULL, **lb = NULL;
	size_t na = 0, nb = 0;
	if (depth > 128)
		return;
	if (list_dir(c, o, a, &la, &na) < 0)
		return;
	if (list_dir(c, o, b, &lb, &nb) < 0) {
		for (size_t i = 0; i < na; i++)
			free(la[i]);
		free(la);
		return;
	}
	size_t i = 0, j = 0;
	while ((i < na || j < nb) && !sh_cmd_stopped(c)) {
		int r = i >= na ? 1 : j >= nb ? -1 : strcmp(la[i], lb[j]);
		_cleanup_free_ char *pa = join2(a, r <= 0 ? la[i] : lb[j]);
		_cleanup_free_ char *pb = join2(b, r <= 0 ? la[i] : lb[j]);
		if (!pa || !pb)
			break;
		if (r == 0) {
			diff_paths(c, o, pa, pb, false, depth + 1);
			i++, j++;
		} else if (o->new_file) {
			struct stat st;
			const char *have = r < 0 ? pa : pb;
			if (sh_fs_stat(c->fs, have, &st, true) == 0 && S_ISDIR(st.st_mode)) {
				o->any_diff = true;
				sh_out_printf(c->out_buf, "Only in %s: %s\n", r < 0 ? a : b,
					      r < 0 ? la[i] : lb[j]);
			} else {
				diff_files(c, o, pa, pb, r > 0, r < 0, true);
			}
			if (r < 0)
				i++;
			else
				j++;
		} else {
			o->any_diff = true;
			sh_out_printf(c->out_buf, "Only in %s: %s\n", r < 0 ? a : b,
				      r < 0 ? la[i] : lb[j]);
			if (r < 0)
				i++;
			else
				j++;
		}
	}
	for (size_t k = 0; k < na; k++)
		free(la[k]);
	for (size_t k = 0; k < nb; k++)
		free(lb[k]);
	free(la);
	free(lb);
}

static void
diff_paths(struct sh_cmd *c, struct dopts *o, const char *a, const char *b, bool top, int depth)
{
	struct stat sa, sb;
	bool a_std = !strcmp(a, "-"), b_std = !strcmp(b, "-");
	int ra = a_std ? fstat(c->in, &sa) : sh_fs_stat(c->fs, a, &sa, true);
	int rb = b_std ? fstat(c->in, &sb) : sh_fs_stat(c->fs, b, &sb, true);
	if (ra < 0 && a_std)
		ra = -errno;
	if (rb < 0 && b_std)
		rb = -errno;
	if (ra < 0 || rb < 0) {
		bool amiss = ra == -ENOENT && o->new_file && rb == 0 && S_ISREG(sb.st_mode);
		bool bmiss = rb == -ENOENT && o->new_file && ra == 0 && S_ISREG(sa.st_mode);
		if (amiss || bmiss) {
			diff_files(c, o, a, b, amiss, bmiss, !top);
			return;
		}
		if (ra < 0)
			sh_cmd_error(c, 2, "%s: %s", a, strerror(-ra));
		if (rb < 0)
			sh_cmd_error(c, 2, "%s: %s", b, strerror(-rb));
		o->trouble = true;
		return;
	}
	bool da = S_ISDIR(sa.st_mode), db = S_ISDIR(sb.st_mode);
	if (da && db) {
		if (top || o->recursive)
			diff_dirs(c, o, a, b, depth);
		else {
			sh_out_printf(c->out_buf, "Common subdirectories: %s and %s\n", a, b);
		}
		return;
	}
	if (da != db) {
		if (top) {
			/* FILE vs DIR: compare with DIR/basename(FILE) */
			const char *file = da ? b : a, *dir = da ? a : b;
			if (!strcmp(file, "-")) {
				sh_cmd_error(c, 2, "cannot compare '-' to a directory");
				o->trouble = true;
				return;
			}
			const char *base = strrchr(file, '/');
			base = base ? base + 1 : file;
			_cleanup_free_ char *in_dir = join2(dir, base);
			if (!in_dir)
				return;
			if (da)
				diff_files(c, o, in_dir, b, false, false, false);
			else
				diff_files(c, o, a, in_dir, false, false, false);
			return;
		}
		o->any_diff = true;
		sh_out_printf(c->out_buf, "File %s is a %s while file %s is a %s\n", a,
			      da ? "directory" : "regular file", b, db ? "directory" : "regular file");
		return;
	}
	diff_files(c, o, a, b, false, false, !top);
}

/* diffutils prefixes its "Try" line with the program name. */
static void
diff_try(struct sh_cmd *c)
{
	sh_out_printf(c->err_buf, "%s: Try '%s --help' for more information.\n", sh_cmd_name(c),
		      sh_cmd_name(c));
	sh_out_flush(c->err_buf);
}

int
sh_cmd_diff(struct sh_cmd *c, int argc, char **argv)
{
	enum { OPT_LABEL = 256, OPT_NORMAL, OPT_STRIP, OPT_NO_DEREF, OPT_COLOR };
	static const struct sh_longopt lo[] = {
		{ "unified", SH_OPT_ARG, 'U' }, { "brief", SH_NO_ARG, 'q' },
		{ "report-identical-files", SH_NO_ARG, 's' }, { "recursive", SH_NO_ARG, 'r' },
		{ "new-file", SH_NO_ARG, 'N' }, { "text", SH_NO_ARG, 'a' },
		{ "ignore-case", SH_NO_ARG, 'i' }, { "ignore-space-change", SH_NO_ARG, 'b' },
		{ "ignore-all-space", SH_NO_ARG, 'w' }, { "label", SH_REQ_ARG, OPT_LABEL },
		{ "normal", SH_NO_ARG, OPT_NORMAL }, { "color", SH_OPT_ARG, OPT_COLOR },
		{ "help", SH_NO_ARG, 'H' }, { 0 },
	};
	struct dopts o = { .context = 3 };
	int nlabels = 0;
	/* The options as given, for the "diff -r ..." lines of recursion. */
	size_t swcap = 1;
	for (int i = 1; i < argc; i++)
		swcap += strlen(argv[i]) + 1;
	_cleanup_free_ char *sw = calloc(swcap, 1);
	if (!sw)
		return 2;
	struct sh_opt g;
	sh_opt_init(&g, c, argc, argv, "uU:qsrNaibwc0123456789", lo);
	int ch, last_ind = 1;
	while ((ch = sh_opt_next(&g)) != -1) {
		switch (ch) {
		case 'u':
			o.unified = true;
			break;
		case 'U': {
			char *e;
			long v = g.arg ? strtol(g.arg, &e, 10) : 3;
			if (g.arg && (*e || v < 0)) {
				sh_cmd_error(c, 2, "invalid context length %s", sh_qname(g.arg, true));
				diff_try(c);
				goto fail;
			}
			o.unified = true;
			o.context = v;
			break;
		}
		case '0': case '1': case '2': case '3': case '4':
		case '5': case '6': case '7': case '8': case '9':
			o.context = ch - '0';
			break;
		case 'q': o.brief = true; break;
		case 's': o.same = true; break;
		case 'r': o.recursive = true; break;
		case 'N': o.new_file = true; break;
		case 'a': o.text = true; break;
		case 'i': o.icase = true; break;
		case 'b': o.space_change = true; break;
		case 'w': o.all_space = true; break;
		case 'c':
			sh_cmd_error(c, 2, "-c (context format) is not supported; use -u");
			goto fail;
		case OPT_LABEL:
			if (nlabels < 2)
				o.label[nlabels++] = g.arg;
			break;
		case OPT_NORMAL: o.unified = false; break;
		case OPT_COLOR: break;
		case 'H':
			sh_out_printf(c->out_buf, "Usage: diff [OPTION]... FILES\nbox-shell's own diff; "
				      "supported options: -u -U N -q -s -r -N -a -i -b -w --label "
				      "--normal --color=never\n");
			sh_opt_done(&g);
			return sh_cmd_finish(c, 0);
		default:
			diff_try(c);
			goto fail;
		}
		/* remember the option words consumed so far */
		for (; last_ind < g.ind; last_ind++) {
			const char *w = argv[last_ind];
			if (w[0] != '-' || !w[1])
				continue;
			if (*sw)
				strcat(sw, " ");
			strcat(sw, w);
		}
	}
	o.switches = sw;
	if (g.n_operands < 2) {
		if (g.n_operands == 0)
			sh_cmd_error(c, 2, "missing operand after 'diff'");
		else
			sh_cmd_error(c, 2, "missing operand after %s", sh_qname(g.operands[0], true));
		diff_try(c);
		goto fail;
	}
	if (g.n_operands > 2) {
		sh_cmd_error(c, 2, "extra operand %s", sh_qname(g.operands[2], true));
		diff_try(c);
		goto fail;
	}
	diff_paths(c, &o, g.operands[0], g.operands[1], true, 0);
	sh_opt_done(&g);
	return sh_cmd_finish(c, o.trouble ? 2 : o.any_diff ? 1 : 0);
fail:
	sh_opt_done(&g);
	return sh_cmd_finish(c, 2);
}
