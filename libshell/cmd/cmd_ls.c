/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_ls.c — box-shell's own `ls` (-l -a -A -1 -R -d -t -S -r -h -F), with
 * GNU ls's output when stdout is not a terminal and LC_ALL=C: one name per
 * line, C-order sorting, the -l columns and time format of GNU.
 * Decisions: each operand read_metadata (sh_fs_stat), each listed directory
 * enumerate (sh_fs_opendir), its entries read_metadata in batches (only when
 * their metadata is needed: -l -t -S -F or -R without d_type), each symlink
 * shown by -l read_link.
 * Trusts: nothing in argv or the file system.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "cmd_fileutil.h"
#include "cmdutil.h"

struct ls_opts {
	bool l, a, A, R, d, t, S, r, h, F;
	struct sh_cmd *c;
	int status;
	bool printed;
	time_t now;
};

struct ls_ent {
	char *name;       /* as shown */
	char *path;       /* to operate on */
	struct stat st;
	bool have_st;
	char *link;       /* -l: symlink target */
	struct stat tst;  /* -F -l: target's stat */
	bool have_tst;
};

static const char ls_usage[] =
	"Usage: ls [OPTION]... [FILE]...\n"
	"List information about the FILEs (the current directory by default), sorted by name.\n"
	"Supported options (box-shell's own ls):\n"
	"  -a, --all              do not ignore entries starting with .\n"
	"  -A, --almost-all       do not list implied . and ..\n"
	"  -d, --directory        list directories themselves, not their contents\n"
	"  -F, --classify         append indicator (one of */=@|) to entries\n"
	"  -h, --human-readable   with -l, print sizes like 1K 234M 2G\n"
	"  -l                     use a long listing format\n"
	"  -r, --reverse          reverse order while sorting\n"
	"  -R, --recursive        list subdirectories recursively\n"
	"  -S                     sort by file size, largest first\n"
	"  -t                     sort by modification time, newest first\n"
	"  -1                     list one file per line\n"
	"      --help             display this help and exit\n";

static int
ls_on(void *ctx, int id, const char *arg)
{
	struct ls_opts *o = ctx;
	switch (id) {
	case 'l': o->l = true; break;
	case 'a': o->a = true; o->A = false; break;
	case 'A': o->A = true; o->a = false; break;
	case 'R': o->R = true; break;
	case 'd': o->d = true; break;
	case 't': o->t = true; o->S = false; break;
	case 'S': o->S = true; o->t = false; break;
	case 'r': o->r = true; break;
	case 'h': o->h = true; break;
	case 'F': o->F = true; break;
	case '1': break;
	default: break;
	}
	return 0;
}

static const struct fu_opt ls_opts_table[] = {
	{'l', NULL, FU_NOARG}, {'a', "all", FU_NOARG}, {'A', "almost-all", FU_NOARG},
	{'R', "recursive", FU_NOARG}, {'d', "directory", FU_NOARG}, {'t', NULL, FU_NOARG},
	{'S', NULL, FU_NOARG}, {'r', "reverse", FU_NOARG}, {'h', "human-readable", FU_NOARG},
	{'F', "classify", FU_NOARG}, {'1', NULL, FU_NOARG}, {0, NULL, 0},
};

static int
ls_cmp_with(const struct ls_opts *o, const struct ls_ent *x, const struct ls_ent *y)
{
	int r = 0;
	if (o->t) {
		if (x->st.st_mtim.tv_sec != y->st.st_mtim.tv_sec)
			r = x->st.st_mtim.tv_sec < y->st.st_mtim.tv_sec ? 1 : -1;
		else if (x->st.st_mtim.tv_nsec != y->st.st_mtim.tv_nsec)
			r = x->st.st_mtim.tv_nsec < y->st.st_mtim.tv_nsec ? 1 : -1;
	} else if (o->S) {
		if (x->st.st_size != y->st.st_size)
			r = x->st.st_size < y->st.st_size ? 1 : -1;
	}
	if (!r)
		r = strcmp(x->name, y->name);
	return o->r ? -r : r;
}

/* qsort_r keeps the sort reentrant */
static int
ls_cmp(const void *a, const void *b, void *ctx)
{
	return ls_cmp_with(ctx, a, b);
}

static void
ls_ent_free(struct ls_ent *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].name);
		free(e[i].path);
		free(e[i].link);
	}
	free(e);
}

static char
ls_indicator(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFDIR: return '/';
	case S_IFLNK: return '@';
	case S_IFIFO: return '|';
	case S_IFSOCK: return '=';
	case S_IFREG: return m & 0111 ? '*' : 0;
	default: return 0;
	}
}

static int
num_width(unsigned long long v)
{
	char b[32];
	return snprintf(b, sizeof(b), "%llu", v);
}

static void
ls_owner(uid_t u, char *out, size_t cap)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	if (getpwuid_r(u, &pw, buf, sizeof(buf), &res) == 0 && res)
		snprintf(out, cap, "%s", res->pw_name);
	else
		snprintf(out, cap, "%u", (unsigned)u);
}

static void
ls_group(gid_t g, char *out, size_t cap)
{
	struct group gr, *res = NULL;
	char buf[4096];
	if (getgrgid_r(g, &gr, buf, sizeof(buf), &res) == 0 && res)
		snprintf(out, cap, "%s", res->gr_name);
	else
		snprintf(out, cap, "%u", (unsigned)g);
}

static void
ls_size_str(const struct ls_opts *o, const struct stat *st, char *out, size_t cap)
{
	if (o->h)
		fu_human((uint64_t)st->st_size, out, cap);
	else
		snprintf(out, cap, "%lld", (long long)st->st_size);
}

/* Prints a block of entries (a directory's contents or the file operands). */
static void
ls_print(struct ls_opts *o, struct ls_ent *e, size_t n, bool total)
{
	struct sh_out *out = o->c->out_buf;
	if (!o->l) {
		for (size_t i = 0; i < n; i++) {
			sh_out_printf(out, "%s", e[i].name);
			if (o->F && e[i].have_st) {
				char ind = ls_indicator(e[i].st.st_mode);
				if (ind)
					sh_out_write(out, &ind, 1);
			}
			sh_out_write(out, "\n", 1);
		}
		return;
	}
	int wl = 0, wu = 0, wg = 0, ws = 0, wmaj = 0, wmin = 0;
	unsigned long long blocks = 0;
	char s[64];
	for (size_t i = 0; i < n; i++) {
		if (!e[i].have_st)
			continue;
		const struct stat *st = &e[i].st;
		blocks += (unsigned long long)st->st_blocks;
		int w = num_width(st->st_nlink);
		if (w > wl)
			wl = w;
		ls_owner(st->st_uid, s, sizeof(s));
		if ((w = (int)strlen(s)) > wu)
			wu = w;
		ls_group(st->st_gid, s, sizeof(s));
		if ((w = (int)strlen(s)) > wg)
			wg = w;
		if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) {
			if ((w = num_width(major(st->st_rdev))) > wmaj)
				wmaj = w;
			if ((w = num_width(minor(st->st_rdev))) > wmin)
				wmin = w;
		} else {
			ls_size_str(o, st, s, sizeof(s));
			if ((w = (int)strlen(s)) > ws)
				ws = w;
		}
	}
	if (wmaj && wmaj + 2 + wmin > ws)
		ws = wmaj + 2 + wmin;
	if (wmaj && ws > wmaj + 2 + wmin)
		wmaj = ws - 2 - wmin;
	if (total) {
		if (o->h)
			fu_human(blocks * 512, s, sizeof(s));
		else
			snprintf(s, sizeof(s), "%llu", (blocks + 1) / 2);
		sh_out_printf(out, "total %s\n", s);
	}
	for (size_t i = 0; i < n; i++) {
		if (!e[i].have_st) {
			/* GNU prints what it has for an entry it could not stat */
			sh_out_printf(out, "?????????? ? %-*s %-*s %*s %12s %s\n", wu, "?", wg,
				      "?", ws, "?", "?", e[i].name);
			continue;
		}
		const struct stat *st = &e[i].st;
		char mode[11], user[64], grp[64], when[64];
		fu_mode_string(st->st_mode, mode);
		ls_owner(st->st_uid, user, sizeof(user));
		ls_group(st->st_gid, grp, sizeof(grp));
		struct tm tm;
		time_t t = st->st_mtim.tv_sec;
		localtime_r(&t, &tm);
		bool recent = t > o->now - 15778476 && t <= o->now;
		strftime(when, sizeof(when), recent ? "%b %e %H:%M" : "%b %e  %Y", &tm);
		sh_out_printf(out, "%s %*llu %-*s %-*s ", mode, wl, (unsigned long long)st->st_nlink,
			      wu, user, wg, grp);
		if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
			sh_out_printf(out, "%*u, %*u", wmaj, major(st->st_rdev), wmin,
				      minor(st->st_rdev));
		else {
			ls_size_str(o, st, s, sizeof(s));
			sh_out_printf(out, "%*s", ws, s);
		}
		sh_out_printf(out, " %s %s", when, e[i].name);
		if (S_ISLNK(st->st_mode) && e[i].link) {
			sh_out_printf(out, " -> %s", e[i].link);
			if (o->F && e[i].have_tst) {
				char ind = ls_indicator(e[i].tst.st_mode);
				if (ind)
					sh_out_write(out, &ind, 1);
			}
		} else if (o->F) {
			char ind = ls_indicator(st->st_mode);
			if (ind)
				sh_out_write(out, &ind, 1);
		}
		sh_out_write(out, "\n", 1);
	}
}

static bool
ls_need_stat(const struct ls_opts *o)
{
	return o->l || o->t || o->S || o->F;
}

static void
ls_link_info(struct ls_opts *o, struct ls_ent *e)
{
	if (!o->l || !e->have_st || !S_ISLNK(e->st.st_mode))
		return;
	if (sh_fs_readlink(o->c->fs, e->path, &e->link) < 0)
		e->link = NULL;
	if (o->F && sh_fs_stat(o->c->fs, e->path, &e->tst, true) == 0)
		e->have_tst = true;
}

static int ls_dir(struct ls_opts *o, const char *path, const char *shown, bool cmdline,
		  bool header, int depth);

static void
ls_recurse(struct ls_opts *o, struct ls_ent *e, size_t n, int depth)
{
	for (size_t i = 0; i < n && !fu_interrupted(o->c); i++) {
		if (strcmp(e[i].name, ".") == 0 || strcmp(e[i].name, "..") == 0)
			continue;
		if (!e[i].have_st || !S_ISDIR(e[i].st.st_mode))
			continue;
		ls_dir(o, e[i].path, e[i].path, false, true, depth + 1);
	}
}

static int
ls_dir(struct ls_opts *o, const char *path, const char *shown, bool cmdline, bool header,
       int depth)
{
	struct sh_cmd *c = o->c;
	char qb[FU_QBUF];
	struct fu_dir d;
	int r = fu_dir_read(c->fs, path, &d);
	if (header && o->printed)
		sh_out_write(c->out_buf, "\n", 1);
	if (r < 0) {
		fu_err(c, 0, "ls", "cannot open directory %s: %s", fu_q(qb, sizeof(qb), shown),
		       strerror(-r));
		o->status = cmdline ? 2 : (o->status ? o->status : 1);
		return 0;
	}
	if (header)
		sh_out_printf(c->out_buf, "%s:\n", shown);
	o->printed = true;
	size_t n = 0, cap = d.n + 2;
	struct ls_ent *e = calloc(cap, sizeof(*e));
	if (!e) {
		fu_dir_free(&d);
		o->status = 2;
		return fu_err(c, 2, "ls", "memory exhausted");
	}
	if (o->a) {
		static const char *const dots[] = {".", ".."};
		for (int k = 0; k < 2; k++) {
			e[n].name = strdup(dots[k]);
			e[n].path = fu_join(path, dots[k]);
			if (ls_need_stat(o) && sh_fs_stat(c->fs, e[n].path, &e[n].st, true) == 0)
				e[n].have_st = true;
			n++;
		}
	}
	/* Hidden entries are dropped before anything is decided about them. */
	size_t keep = 0;
	for (size_t i = 0; i < d.n; i++) {
		if (d.e[i].name[0] == '.' && !o->a && !o->A) {
			free(d.e[i].name);
			continue;
		}
		d.e[keep++] = d.e[i];
	}
	d.n = keep;
	bool need_stat = ls_need_stat(o);
	if (o->R && !need_stat)
		for (size_t i = 0; i < d.n; i++)
			if (d.e[i].d_type == DT_UNKNOWN)
				need_stat = true;
	if (need_stat)
		fu_dir_stat_all(c->fs, path, &d);
	for (size_t i = 0; i < d.n; i++) {
		struct ls_ent *x = &e[n++];
		x->name = d.e[i].name;
		d.e[i].name = NULL;
		x->path = fu_join(path, x->name);
		if (need_stat) {
			int sr = d.e[i].st_err;
			x->st = d.e[i].st;
			if (sr == 0)
				x->have_st = true;
			else {
				fu_err(c, 0, "ls", "cannot access %s: %s",
				       fu_q(qb, sizeof(qb), x->path), strerror(-sr));
				if (!o->status)
					o->status = 1;
			}
		} else if (d.e[i].d_type == DT_DIR) {
			x->st.st_mode = S_IFDIR;
			x->have_st = true;
		} else if (d.e[i].d_type != DT_UNKNOWN) {
			x->st.st_mode = DTTOIF(d.e[i].d_type);
			x->have_st = true;
		}
		ls_link_info(o, x);
	}
	fu_dir_free(&d);
	if (o->t || o->S || o->r || n > 1)
		qsort_r(e, n, sizeof(*e), ls_cmp, o);
	ls_print(o, e, n, true);
	if (o->R && depth < 4096)
		ls_recurse(o, e, n, depth);
	ls_ent_free(e, n);
	return 0;
}

int sh_cmd_ls(struct sh_cmd *c, int argc, char **argv);
int
sh_cmd_ls(struct sh_cmd *c, int argc, char **argv)
{
	struct ls_opts o = {.c = c};
	struct fu_parse p = {"ls", ls_opts_table, true, 2, ls_usage, ls_on, &o};
	char **ops;
	int n;
	int r = fu_getopt(c, &p, argc, argv, &ops, &n);
	if (r == FU_HELP)
		return 0;
	if (r)
		return r;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	o.now = now.tv_sec;
	static char dot[] = ".";
	char *def[] = {dot};
	if (n == 0) {
		ops[0] = def[0];
		n = 1;
	}
	struct ls_ent *files = calloc((size_t)n, sizeof(*files));
	struct ls_ent *dirs = calloc((size_t)n, sizeof(*dirs));
	size_t nf = 0, nd = 0;
	char qb[FU_QBUF];
	if (!files || !dirs) {
		free(files);
		free(dirs);
		free(ops);
		return fu_err(c, 2, "ls", "memory exhausted");
	}
	bool nofollow = o.l || o.d || o.F;
	for (int i = 0; i < n; i++) {
		struct stat st;
		int sr = sh_fs_stat(c->fs, ops[i], &st, !nofollow);
		if (sr < 0 && !nofollow)
			sr = sh_fs_stat(c->fs, ops[i], &st, false);
		if (sr < 0) {
			fu_err(c, 0, "ls", "cannot access %s: %s", fu_q(qb, sizeof(qb), ops[i]),
			       strerror(-sr));
			o.status = 2;
			continue;
		}
		struct ls_ent *x = S_ISDIR(st.st_mode) && !o.d ? &dirs[nd++] : &files[nf++];
		x->name = strdup(ops[i]);
		x->path = strdup(ops[i]);
		x->st = st;
		x->have_st = true;
		ls_link_info(&o, x);
	}
	if (nf) {
		qsort_r(files, nf, sizeof(*files), ls_cmp, &o);
		ls_print(&o, files, nf, false);
		o.printed = true;
	}
	if (nd > 1 || o.t || o.S || o.r)
		qsort_r(dirs, nd, sizeof(*dirs), ls_cmp, &o);
	bool headers = n > 1 || o.R || nf > 0;
	for (size_t i = 0; i < nd && !fu_interrupted(c); i++)
		ls_dir(&o, dirs[i].path, dirs[i].name, true, headers, 0);
	ls_ent_free(files, nf);
	ls_ent_free(dirs, nd);
	free(ops);
	return sh_cmd_finish(c, o.status);
}
