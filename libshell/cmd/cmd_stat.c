/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_stat.c — box-shell's own `stat` (default format, -c/--format,
 * --printf, -L), `du` (-s -h -a -c -k -b -d/--max-depth) and `df` (-h -k -P,
 * FILE...), with GNU coreutils' output in the C locale.
 * Decisions: stat = read_metadata (an O_PATH open, then statx on it; + read_link
 * for %N of a symlink); du = the
 * operand read_metadata, each directory enumerate and its entries
 * read_metadata in one batch; df FILE = read_metadata of FILE (an O_PATH open;
 * fstatfs on it), df alone = read_metadata of each real mount point.
 * df names the mount from /proc/self/mountinfo (the system's table, not a
 * file of the agent).
 * Trusts: nothing in argv or the file system; /proc/self/mountinfo's format.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "cmd_fileutil.h"
#include "cmdutil.h"

/* ---- stat ---- */

static const char *
file_type(const struct stat *st)
{
	switch (st->st_mode & S_IFMT) {
	case S_IFREG: return st->st_size == 0 ? "regular empty file" : "regular file";
	case S_IFDIR: return "directory";
	case S_IFLNK: return "symbolic link";
	case S_IFIFO: return "fifo";
	case S_IFSOCK: return "socket";
	case S_IFCHR: return "character special file";
	case S_IFBLK: return "block special file";
	default: return "weird file";
	}
}

static void
fmt_time(const struct timespec *ts, char *out, size_t cap)
{
	struct tm tm;
	char a[64], z[16];
	time_t t = ts->tv_sec;
	localtime_r(&t, &tm);
	strftime(a, sizeof(a), "%Y-%m-%d %H:%M:%S", &tm);
	strftime(z, sizeof(z), "%z", &tm);
	snprintf(out, cap, "%s.%09ld %s", a, ts->tv_nsec, z);
}

struct stat_ctx {
	struct sh_cmd *c;
	struct timespec btime;    /* the file's birth time, tv_sec -1 if unknown */
	bool follow;
	const char *format;
	bool printf_mode;
	bool default_fmt;         /* GNU's default format quotes %N only when needed */
	int status;
};

/* The spec is '%' + flags [-#0 +'] + width + precision, parsed from the
 * format by stat_format; only the conversion is added here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static void
stat_out_str(struct sh_out *o, const char *spec, const char *s)
{
	char f[64];
	snprintf(f, sizeof(f), "%ss", spec);
	sh_out_printf(o, f, s);
}

static void
stat_out_num(struct sh_out *o, const char *spec, unsigned long long v, int base)
{
	char f[64];
	snprintf(f, sizeof(f), "%sll%c", spec, base == 16 ? 'x' : base == 8 ? 'o' : 'u');
	sh_out_printf(o, f, v);
}

static void
stat_out_snum(struct sh_out *o, const char *spec, long long v)
{
	char f[64];
	snprintf(f, sizeof(f), "%slld", spec);
	sh_out_printf(o, f, v);
}

#pragma GCC diagnostic pop

static int
stat_escape(const char *p, char *ch)
{
	/* --printf escapes; returns the characters consumed after '\' */
	switch (*p) {
	case 'n': *ch = '\n'; return 1;
	case 't': *ch = '\t'; return 1;
	case 'a': *ch = '\a'; return 1;
	case 'b': *ch = '\b'; return 1;
	case 'f': *ch = '\f'; return 1;
	case 'r': *ch = '\r'; return 1;
	case 'v': *ch = '\v'; return 1;
	case 'e': *ch = 27; return 1;
	case '\\': *ch = '\\'; return 1;
	case '"': *ch = '"'; return 1;
	case '\'': *ch = '\''; return 1;
	default: break;
	}
	if (*p >= '0' && *p <= '7') {
		int v = 0, k = 0;
		while (k < 3 && p[k] >= '0' && p[k] <= '7')
			v = v * 8 + (p[k++] - '0');
		*ch = (char)v;
		return k;
	}
	*ch = '\\';
	return 0;
}

static void
stat_format(struct stat_ctx *x, const char *fmt, const char *path, const struct stat *st)
{
	struct sh_out *o = x->c->out_buf;
	char buf[512], qb[FU_QBUF], qb2[FU_QBUF];
	for (const char *p = fmt; *p; p++) {
		if (*p == '\\' && x->printf_mode) {
			char ch;
			int k = stat_escape(p + 1, &ch);
			sh_out_write(o, &ch, 1);
			p += k;
			continue;
		}
		if (*p != '%') {
			sh_out_write(o, p, 1);
			continue;
		}
		char spec[48];
		size_t sl = 0;
		spec[sl++] = '%';
		p++;
		while (*p && strchr("-#0 +'", *p) && sl < 20)
			spec[sl++] = *p++;
		while (*p >= '0' && *p <= '9' && sl < 30)
			spec[sl++] = *p++;
		if (*p == '.') {
			spec[sl++] = *p++;
			while (*p >= '0' && *p <= '9' && sl < 40)
				spec[sl++] = *p++;
		}
		spec[sl] = 0;
		char conv = *p;
		if (!conv) {
			sh_out_write(o, "%", 1);
			break;
		}
		char mode[11];
		fu_mode_string(st->st_mode, mode);
		bool hl = false;
		if ((conv == 'H' || conv == 'L') && (p[1] == 'd' || p[1] == 'r')) {
			hl = true;
			p++;
		}
		if (hl) {
			dev_t dv = *p == 'd' ? st->st_dev : st->st_rdev;
			stat_out_num(o, spec, conv == 'H' ? major(dv) : minor(dv), 10);
			continue;
		}
		switch (conv) {
		case '%': sh_out_write(o, "%", 1); break;
		case 'n': stat_out_str(o, spec, path); break;
		case 'N':
			if (S_ISLNK(st->st_mode)) {
				char *t = NULL;
				if (sh_fs_readlink(x->c->fs, path, &t) == 0) {
					if (x->default_fmt)
						snprintf(buf, sizeof(buf), "%s -> %s",
							 sh_qname(path, false), sh_qname(t, false));
					else
						snprintf(buf, sizeof(buf), "%s -> %s",
							 fu_q(qb, sizeof(qb), path),
							 fu_q(qb2, sizeof(qb2), t));
					free(t);
					stat_out_str(o, spec, buf);
					break;
				}
			}
			stat_out_str(o, spec,
				     x->default_fmt ? sh_qname(path, false) : fu_q(qb, sizeof(qb), path));
			break;
		case 's': stat_out_snum(o, spec, (long long)st->st_size); break;
		case 'b': stat_out_num(o, spec, (unsigned long long)st->st_blocks, 10); break;
		case 'B': stat_out_num(o, spec, 512, 10); break;
		case 'o': stat_out_num(o, spec, (unsigned long long)st->st_blksize, 10); break;
		case 'f': stat_out_num(o, spec, st->st_mode, 16); break;
		case 'F': stat_out_str(o, spec, file_type(st)); break;
		case 'a': stat_out_num(o, spec, st->st_mode & 07777, 8); break;
		case 'A': stat_out_str(o, spec, mode); break;
		case 'u': stat_out_num(o, spec, st->st_uid, 10); break;
		case 'g': stat_out_num(o, spec, st->st_gid, 10); break;
		case 'U':
		case 'G': {
			char nb[4096];
			const char *name = NULL;
			if (conv == 'U') {
				struct passwd pw, *res = NULL;
				if (getpwuid_r(st->st_uid, &pw, nb, sizeof(nb), &res) == 0 && res)
					name = res->pw_name;
			} else {
				struct group gr, *res = NULL;
				if (getgrgid_r(st->st_gid, &gr, nb, sizeof(nb), &res) == 0 && res)
					name = res->gr_name;
			}
			stat_out_str(o, spec, name ? name : "UNKNOWN");
			break;
		}
		case 'h': stat_out_num(o, spec, (unsigned long long)st->st_nlink, 10); break;
		case 'i': stat_out_num(o, spec, (unsigned long long)st->st_ino, 10); break;
		case 'd': stat_out_num(o, spec, (unsigned long long)st->st_dev, 10); break;
		case 'D': stat_out_num(o, spec, (unsigned long long)st->st_dev, 16); break;
		case 't': stat_out_num(o, spec, major(st->st_rdev), 16); break;
		case 'T': stat_out_num(o, spec, minor(st->st_rdev), 16); break;
		case 'x':
		case 'y':
		case 'z': {
			const struct timespec *ts = conv == 'x'   ? &st->st_atim
						    : conv == 'y' ? &st->st_mtim
								  : &st->st_ctim;
			fmt_time(ts, buf, sizeof(buf));
			stat_out_str(o, spec, buf);
			break;
		}
		case 'X': stat_out_snum(o, spec, (long long)st->st_atim.tv_sec); break;
		case 'Y': stat_out_snum(o, spec, (long long)st->st_mtim.tv_sec); break;
		case 'Z': stat_out_snum(o, spec, (long long)st->st_ctim.tv_sec); break;
		case 'w':
			if (x->btime.tv_sec < 0)
				stat_out_str(o, spec, "-");
			else {
				fmt_time(&x->btime, buf, sizeof(buf));
				stat_out_str(o, spec, buf);
			}
			break;
		case 'W': stat_out_snum(o, spec, x->btime.tv_sec < 0 ? 0 : x->btime.tv_sec); break;
		default:
			sh_out_write(o, "?", 1);
			break;
		}
	}
}

static const char stat_default[] =
	"  File: %N\n"
	"  Size: %-10s\tBlocks: %-10b IO Block: %-6o %F\n"
	"Device: %Hd,%Ld\tInode: %-11i Links: %h\n"
	"Access: (%04a/%10.10A)  Uid: (%5u/%8U)   Gid: (%5g/%8G)\n"
	"Access: %x\nModify: %y\nChange: %z\n Birth: %w\n";
static const char stat_default_dev[] =
	"  File: %N\n"
	"  Size: %-10s\tBlocks: %-10b IO Block: %-6o %F\n"
	"Device: %Hd,%Ld\tInode: %-11i Links: %-5h Device type: %Hr,%Lr\n"
	"Access: (%04a/%10.10A)  Uid: (%5u/%8U)   Gid: (%5g/%8G)\n"
	"Access: %x\nModify: %y\nChange: %z\n Birth: %w\n";

static int
stat_on(void *ctx, int id, const char *arg)
{
	struct stat_ctx *x = ctx;
	switch (id) {
	case 'L': x->follow = true; break;
	case 'c': x->format = arg; x->printf_mode = false; break;
	case 256: x->format = arg; x->printf_mode = true; break;
	default: break;
	}
	return 0;
}

static const struct fu_opt stat_table[] = {
	{'L', "dereference", FU_NOARG}, {'c', "format", FU_ARG}, {256, "printf", FU_ARG},
	{0, NULL, 0},
};

static const char stat_usage[] =
	"Usage: stat [OPTION]... FILE...\n"
	"Display file status. Supported options (box-shell's own stat):\n"
	"  -L, --dereference     follow links\n"
	"  -c  --format=FORMAT   use the specified FORMAT instead of the default;\n"
	"                          output a newline after each use of FORMAT\n"
	"      --printf=FORMAT   like --format, but interpret backslash escapes,\n"
	"                          and do not output a mandatory trailing newline\n"
	"      --help            display this help and exit\n"
	"FORMAT sequences: %a %A %b %B %d %D %f %F %g %G %h %i %n %N %o %s %t %T %u %U\n"
	"  %w %W %x %X %y %Y %z %Z %Hd %Ld %Hr %Lr %%\n";

/*
 * The file's status with its birth time: opened O_PATH through fsops (one
 * read_metadata decision; O_NOFOLLOW opens a symlink itself), then statx on
 * that descriptor, so what is shown is the decided file.
 */
static int
stat_file(struct stat_ctx *x, const char *path, struct stat *st)
{
	int fd = sh_fs_open(x->c->fs, path, O_PATH | (x->follow ? 0 : O_NOFOLLOW), 0);
	if (fd < 0)
		return fd;
	struct statx sx;
	int r = statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_BTIME, &sx) < 0 ? -errno : 0;
	if (r == 0) {
		memset(st, 0, sizeof(*st));
		st->st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
		st->st_rdev = makedev(sx.stx_rdev_major, sx.stx_rdev_minor);
		st->st_ino = sx.stx_ino;
		st->st_mode = sx.stx_mode;
		st->st_nlink = sx.stx_nlink;
		st->st_uid = sx.stx_uid;
		st->st_gid = sx.stx_gid;
		st->st_size = (off_t)sx.stx_size;
		st->st_blksize = sx.stx_blksize;
		st->st_blocks = (blkcnt_t)sx.stx_blocks;
		st->st_atim = (struct timespec){sx.stx_atime.tv_sec, sx.stx_atime.tv_nsec};
		st->st_mtim = (struct timespec){sx.stx_mtime.tv_sec, sx.stx_mtime.tv_nsec};
		st->st_ctim = (struct timespec){sx.stx_ctime.tv_sec, sx.stx_ctime.tv_nsec};
		if (sx.stx_mask & STATX_BTIME)
			x->btime = (struct timespec){sx.stx_btime.tv_sec, sx.stx_btime.tv_nsec};
		else
			x->btime = (struct timespec){-1, 0};
	}
	close(fd);
	return r;
}

int sh_cmd_stat(struct sh_cmd *c, int argc, char **argv);
int
sh_cmd_stat(struct sh_cmd *c, int argc, char **argv)
{
	struct stat_ctx x = {.c = c};
	struct fu_parse p = {"stat", stat_table, true, 1, stat_usage, stat_on, &x};
	char **ops, qb[FU_QBUF];
	int n;
	int r = fu_getopt(c, &p, argc, argv, &ops, &n);
	if (r == FU_HELP)
		return 0;
	if (r)
		return r;
	if (n == 0) {
		free(ops);
		return fu_usage_error(c, "stat", 1, "missing operand");
	}
	for (int i = 0; i < n; i++) {
		struct stat st;
		r = stat_file(&x, ops[i], &st);
		if (r < 0) {
			x.status = fu_err(c, 1, "stat", "cannot statx %s: %s",
					  fu_q(qb, sizeof(qb), ops[i]), strerror(-r));
			continue;
		}
		if (x.format) {
			stat_format(&x, x.format, ops[i], &st);
			if (!x.printf_mode)
				sh_out_write(c->out_buf, "\n", 1);
		} else {
			x.default_fmt = true;
			stat_format(&x, S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? stat_default_dev
										   : stat_default,
				    ops[i], &st);
		}
	}
	free(ops);
	return sh_cmd_finish(c, x.status);
}

/* ---- du ---- */

struct du_ctx {
	struct sh_cmd *c;
	bool all, human, total;
	bool apparent;            /* sizes, not blocks */
	bool bytes;               /* block size 1 (-b) */
	long maxdepth;
	int status;
	struct { dev_t dev; ino_t ino; } *seen;
	size_t nseen, capseen;
};

static bool
du_seen(struct du_ctx *x, const struct stat *st)
{
	/* a file with several links counts once, as GNU du does */
	if (S_ISDIR(st->st_mode) || st->st_nlink < 2)
		return false;
	for (size_t i = 0; i < x->nseen; i++)
		if (x->seen[i].dev == st->st_dev && x->seen[i].ino == st->st_ino)
			return true;
	if (x->nseen == x->capseen) {
		size_t nc = x->capseen ? x->capseen * 2 : 64;
		void *ns = realloc(x->seen, nc * sizeof(*x->seen));
		if (!ns)
			return false;
		x->seen = ns;
		x->capseen = nc;
	}
	x->seen[x->nseen].dev = st->st_dev;
	x->seen[x->nseen].ino = st->st_ino;
	x->nseen++;
	return false;
}

static void
du_print(struct du_ctx *x, uint64_t v, const char *path)
{
	char s[64];
	uint64_t bytes = x->apparent ? v : v * 512;
	if (x->human)
		fu_human(bytes, s, sizeof(s));
	else if (x->bytes)
		snprintf(s, sizeof(s), "%llu", (unsigned long long)bytes);
	else
		snprintf(s, sizeof(s), "%llu", (unsigned long long)((bytes + 1023) / 1024));
	sh_out_printf(x->c->out_buf, "%s\t%s\n", s, path);
}

static uint64_t
du_walk(struct du_ctx *x, const char *path, const struct stat *st, long depth)
{
	char qb[FU_QBUF];
	if (du_seen(x, st))
		return 0;
	uint64_t total = x->apparent ? (uint64_t)st->st_size : (uint64_t)st->st_blocks;
	if (S_ISDIR(st->st_mode) && depth < 100000) {
		struct fu_dir d;
		int r = fu_dir_read(x->c->fs, path, &d);
		if (r < 0) {
			x->status = fu_err(x->c, 1, "du", "cannot read directory %s: %s",
					   fu_q(qb, sizeof(qb), path), strerror(-r));
		} else {
			fu_dir_stat_all(x->c->fs, path, &d);
			for (size_t i = 0; i < d.n && !fu_interrupted(x->c); i++) {
				char *child = fu_join(path, d.e[i].name);
				struct stat cst = d.e[i].st;
				if (!child)
					break;
				r = d.e[i].st_err;
				if (r < 0)
					x->status = fu_err(x->c, 1, "du", "cannot access %s: %s",
							   fu_q(qb, sizeof(qb), child),
							   strerror(-r));
				else
					total += du_walk(x, child, &cst, depth + 1);
				free(child);
			}
			fu_dir_free(&d);
		}
	}
	if (depth == 0 || (depth <= x->maxdepth && (S_ISDIR(st->st_mode) || x->all)))
		du_print(x, total, path);
	return total;
}

static int
du_on(void *ctx, int id, const char *arg)
{
	struct du_ctx *x = ctx;
	char *end;
	switch (id) {
	case 's': x->maxdepth = 0; break;
	case 'h': x->human = true; break;
	case 'a': x->all = true; break;
	case 'c': x->total = true; break;
	case 'k': x->human = false; x->bytes = false; break;
	case 'b': x->bytes = x->apparent = true; break;
	case 256: x->apparent = true; break;
	case 'd':
		x->maxdepth = strtol(arg, &end, 10);
		if (*end || !*arg || x->maxdepth < 0)
			return fu_usage_error(x->c, "du", 1, "invalid maximum depth '%s'", arg);
		break;
	default: break;
	}
	return 0;
}

static const struct fu_opt du_table[] = {
	{'s', "summarize", FU_NOARG}, {'h', "human-readable", FU_NOARG}, {'a', "all", FU_NOARG},
	{'c', "total", FU_NOARG},     {'k', NULL, FU_NOARG},             {'b', "bytes", FU_NOARG},
	{256, "apparent-size", FU_NOARG}, {'d', "max-depth", FU_ARG},    {0, NULL, 0},
};

static const char du_usage[] =
	"Usage: du [OPTION]... [FILE]...\n"
	"Summarize disk usage of each FILE, recursively for directories (1K blocks).\n"
	"Supported options (box-shell's own du; symlinks are never followed):\n"
	"  -a, --all             write counts for all files, not just directories\n"
	"      --apparent-size   print apparent sizes rather than disk usage\n"
	"  -b, --bytes           apparent sizes in bytes\n"
	"  -c, --total           produce a grand total\n"
	"  -d, --max-depth=N     print the total for a directory only if N or fewer levels below\n"
	"  -h, --human-readable  print sizes in human readable format (e.g., 1K 234M 2G)\n"
	"  -k                    like --block-size=1K\n"
	"  -s, --summarize       display only a total for each argument\n"
	"      --help            display this help and exit\n";

int sh_cmd_du(struct sh_cmd *c, int argc, char **argv);
int
sh_cmd_du(struct sh_cmd *c, int argc, char **argv)
{
	struct du_ctx x = {.c = c, .maxdepth = 1L << 40};
	struct fu_parse p = {"du", du_table, true, 1, du_usage, du_on, &x};
	char **ops, qb[FU_QBUF];
	int n;
	int r = fu_getopt(c, &p, argc, argv, &ops, &n);
	if (r == FU_HELP)
		return 0;
	if (r)
		return r;
	static char dot[] = ".";
	if (n == 0)
		ops[n++] = dot;
	uint64_t grand = 0;
	for (int i = 0; i < n && !fu_interrupted(c); i++) {
		struct stat st;
		r = sh_fs_stat(c->fs, ops[i], &st, false);
		if (r < 0) {
			x.status = fu_err(c, 1, "du", "cannot access %s: %s",
					  fu_q(qb, sizeof(qb), ops[i]), strerror(-r));
			continue;
		}
		grand += du_walk(&x, ops[i], &st, 0);
	}
	if (x.total)
		du_print(&x, grand, "total");
	free(x.seen);
	free(ops);
	return sh_cmd_finish(c, x.status);
}

/* ---- df ---- */

struct df_ctx {
	struct sh_cmd *c;
	bool human, posix;
	int status;
};

struct df_row {
	char *src, *target;
	char size[32], used[32], avail[32], pcent[8];
};

static void
df_unescape(char *s)
{
	/* mountinfo escapes space, tab, newline and backslash as \ooo */
	char *o = s;
	for (char *p = s; *p; p++) {
		if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] && p[3]) {
			*o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
			p += 3;
		} else
			*o++ = *p;
	}
	*o = 0;
}

/* The mount holding a file of device dev and canonical path canon. */
static int
df_find_mount(dev_t dev, const char *canon, char **src, char **target)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	size_t best = 0;
	if (!f)
		return -errno;
	*src = *target = NULL;
	while (getline(&line, &cap, f) > 0) {
		unsigned maj, mnr;
		char mp[4096], fstype[256], source[4096];
		int off = 0;
		if (sscanf(line, "%*u %*u %u:%u %*s %4095s%n", &maj, &mnr, mp, &off) != 3)
			continue;
		char *dash = strstr(line + off, " - ");
		if (!dash || sscanf(dash + 3, "%255s %4095s", fstype, source) != 2)
			continue;
		if (makedev(maj, mnr) != dev)
			continue;
		df_unescape(mp);
		df_unescape(source);
		size_t l = strlen(mp);
		bool prefix = strcmp(mp, "/") == 0 ||
			      (strncmp(canon, mp, l) == 0 && (canon[l] == '/' || canon[l] == 0));
		if (!prefix || (*target && l < best))
			continue;
		free(*src);
		free(*target);
		*src = strdup(source);
		*target = strdup(mp);
		best = l;
	}
	free(line);
	fclose(f);
	return *target ? 0 : -ENOENT;
}

int sh_cmd_df(struct sh_cmd *c, int argc, char **argv);

static void
df_fill(const struct df_ctx *x, struct df_row *w, const struct statfs *sf)
{
	uint64_t bs = sf->f_frsize ? sf->f_frsize : sf->f_bsize;
	uint64_t total = sf->f_blocks * bs, used = (sf->f_blocks - sf->f_bfree) * bs,
		 avail = sf->f_bavail * bs;
	if (x->human) {
		fu_human(total, w->size, sizeof(w->size));
		fu_human(used, w->used, sizeof(w->used));
		fu_human(avail, w->avail, sizeof(w->avail));
	} else {
		snprintf(w->size, sizeof(w->size), "%llu", (unsigned long long)((total + 1023) / 1024));
		snprintf(w->used, sizeof(w->used), "%llu", (unsigned long long)((used + 1023) / 1024));
		snprintf(w->avail, sizeof(w->avail), "%llu", (unsigned long long)(avail / 1024));
	}
	uint64_t u = sf->f_blocks - sf->f_bfree, denom = u + sf->f_bavail;
	if (denom == 0)
		snprintf(w->pcent, sizeof(w->pcent), "-");
	else
		snprintf(w->pcent, sizeof(w->pcent), "%llu%%",
			 (unsigned long long)((u * 100 + denom - 1) / denom));
}

/* GNU's "dummy" file systems, never listed without -a (nor those of 0 blocks). */
static bool
df_dummy(const char *type)
{
	static const char *const dummies[] = {
		"autofs", "proc", "subfs", "debugfs", "devpts", "fusectl", "mqueue", "rpc_pipefs",
		"sysfs", "devfs", "kernfs", "ignore", "none", "rootfs", "cgroup", "cgroup2",
		"securityfs", "pstore", "bpf", "tracefs", "configfs", "hugetlbfs", "binfmt_misc",
		"efivarfs", "nsfs", "selinuxfs", NULL,
	};
	for (size_t i = 0; dummies[i]; i++)
		if (strcmp(type, dummies[i]) == 0)
			return true;
	return false;
}

/*
 * df without operands: every real mount of /proc/self/mountinfo, in its
 * order, one row per device (the first mount of it), as GNU's df lists them.
 * Each mount point is one read_metadata (its O_PATH open).
 */
static int
df_all(struct df_ctx *x, struct df_row **rows_out, size_t *nr_out)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0, nr = 0, rcap = 0;
	struct df_row *rows = NULL;
	dev_t *devs = NULL;
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		unsigned maj, mnr;
		char mp[4096], fstype[256], source[4096];
		int off = 0;
		if (sscanf(line, "%*u %*u %u:%u %*s %4095s%n", &maj, &mnr, mp, &off) != 3)
			continue;
		char *dash = strstr(line + off, " - ");
		if (!dash || sscanf(dash + 3, "%255s %4095s", fstype, source) != 2)
			continue;
		(void)maj;
		(void)mnr;
		if (df_dummy(fstype))
			continue;
		df_unescape(mp);
		df_unescape(source);
		int fd = sh_fs_open(x->c->fs, mp, O_PATH, 0);
		struct statfs sf;
		struct stat st;
		if (fd < 0)
			continue;
		int r = fstatfs(fd, &sf) < 0 || fstat(fd, &st) < 0 ? -1 : 0;
		close(fd);
		if (r < 0 || sf.f_blocks == 0)
			continue;
		/* one row per device as the mount point shows it now (an over-mounted
		 * point names the top mount's device, as GNU's df dedupes) */
		dev_t dev = st.st_dev;
		bool seen = false;
		for (size_t i = 0; i < nr; i++)
			if (devs[i] == dev)
				seen = true;
		if (seen)
			continue;
		if (nr == rcap) {
			size_t nc = rcap ? rcap * 2 : 16;
			struct df_row *nrw = realloc(rows, nc * sizeof(*rows));
			dev_t *nd = nrw ? realloc(devs, nc * sizeof(*devs)) : NULL;
			if (nrw)
				rows = nrw;
			if (!nrw || !nd)
				break;
			devs = nd;
			rcap = nc;
		}
		memset(&rows[nr], 0, sizeof(rows[nr]));
		rows[nr].src = strdup(source);
		rows[nr].target = strdup(mp);
		if (!rows[nr].src || !rows[nr].target) {
			free(rows[nr].src);
			free(rows[nr].target);
			break;
		}
		devs[nr] = dev;
		df_fill(x, &rows[nr], &sf);
		nr++;
	}
	free(line);
	free(devs);
	fclose(f);
	*rows_out = rows;
	*nr_out = nr;
	return 0;
}

static int
df_on(void *ctx, int id, const char *arg)
{
	struct df_ctx *x = ctx;
	if (id == 'h')
		x->human = true;
	else if (id == 'k')
		x->human = false;
	else if (id == 'P')
		x->posix = true;
	return 0;
}

static const struct fu_opt df_table[] = {
	{'h', "human-readable", FU_NOARG}, {'k', NULL, FU_NOARG}, {'P', "portability", FU_NOARG},
	{0, NULL, 0},
};

static const char df_usage[] =
	"Usage: df [OPTION]... [FILE]...\n"
	"Show information about the file system on which each FILE resides, or all file\n"
	"systems by default (box-shell's own df). Supported options:\n"
	"  -h, --human-readable  print sizes in powers of 1024 (e.g., 1023M)\n"
	"  -k                    like --block-size=1K\n"
	"  -P, --portability     use the POSIX output format\n"
	"      --help            display this help and exit\n";

int
sh_cmd_df(struct sh_cmd *c, int argc, char **argv)
{
	struct df_ctx x = {.c = c};
	struct fu_parse p = {"df", df_table, true, 1, df_usage, df_on, &x};
	char **ops;
	int n;
	int r = fu_getopt(c, &p, argc, argv, &ops, &n);
	if (r == FU_HELP)
		return 0;
	if (r)
		return r;
	struct df_row *rows = NULL;
	size_t nr = 0;
	if (n == 0) {
		r = df_all(&x, &rows, &nr);
		if (r < 0) {
			free(ops);
			return fu_err(c, 1, "df", "cannot read table of mounted file systems: %s",
				      strerror(-r));
		}
	} else
		rows = calloc((size_t)n, sizeof(*rows));
	if (!rows && n) {
		free(ops);
		return fu_err(c, 1, "df", "memory exhausted");
	}
	for (int i = 0; i < n; i++) {
		struct stat st;
		struct statfs sf;
		char *canon = NULL;
		/* one read_metadata (O_PATH); the numbers come from that descriptor */
		int fd = sh_fs_open(c->fs, ops[i], O_PATH, 0);
		r = fd < 0 ? fd : 0;
		if (r == 0 && (fstat(fd, &st) < 0 || fstatfs(fd, &sf) < 0))
			r = -errno;
		if (fd >= 0)
			close(fd);
		if (r == 0)
			r = sh_fs_canon(c->fs, ops[i], false, &canon);
		struct df_row *w = &rows[nr];
		if (r == 0)
			r = df_find_mount(st.st_dev, canon, &w->src, &w->target);
		free(canon);
		if (r < 0) {
			free(w->src);
			free(w->target);
			w->src = w->target = NULL;
			x.status = fu_err(c, 1, "df", "%s: %s", sh_qname(ops[i], false),
					  strerror(-r));
			continue;
		}
		df_fill(&x, w, &sf);
		nr++;
	}
	const char *h_size = x.human ? "Size" : x.posix ? "1024-blocks" : "1K-blocks";
	const char *h_avail = x.human ? "Avail" : "Available";
	const char *h_pcent = x.posix ? "Capacity" : "Use%";
	int ws = 14, wz = (int)strlen(h_size), wu = 4, wa = (int)strlen(h_avail),
	    wp = (int)strlen(h_pcent);
	if (wz < 5)
		wz = 5;
	if (wu < 5)
		wu = 5;
	if (wa < 5)
		wa = 5;
	for (size_t i = 0; i < nr; i++) {
		int l;
		if ((l = (int)strlen(rows[i].src)) > ws)
			ws = l;
		if ((l = (int)strlen(rows[i].size)) > wz)
			wz = l;
		if ((l = (int)strlen(rows[i].used)) > wu)
			wu = l;
		if ((l = (int)strlen(rows[i].avail)) > wa)
			wa = l;
		if ((l = (int)strlen(rows[i].pcent)) > wp)
			wp = l;
	}
	if (nr) {
		sh_out_printf(c->out_buf, "%-*s %*s %*s %*s %*s %s\n", ws, "Filesystem", wz, h_size,
			      wu, "Used", wa, h_avail, wp, h_pcent, "Mounted on");
		for (size_t i = 0; i < nr; i++)
			sh_out_printf(c->out_buf, "%-*s %*s %*s %*s %*s %s\n", ws, rows[i].src, wz,
				      rows[i].size, wu, rows[i].used, wa, rows[i].avail, wp,
				      rows[i].pcent, rows[i].target);
	}
	for (size_t i = 0; i < nr; i++) {
		free(rows[i].src);
		free(rows[i].target);
	}
	free(rows);
	free(ops);
	return sh_cmd_finish(c, x.status);
}
