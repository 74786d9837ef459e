/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_text.c — box-shell's own text commands, the table
 * sh_text_commands[] and the small ones: cat head tail wc tee tac basename
 * dirname seq. The bigger ones live in cmd_grep.c, cmd_sed.c, cmd_sort.c,
 * cmd_diff.c, cmd_cols.c (cut paste tr comm join uniq nl split) and
 * cmd_bin.c (od base64 sha256sum md5sum).
 *
 * Every file is opened through fsops.h (decided, then opened beneath the
 * root), stdin is c->in, output goes through c->out_buf; each command stops
 * once c->interrupted is set or its output hit EPIPE. Messages and statuses
 * follow GNU coreutils 9 in the C locale.
 * Trusts: nothing in argv or in the files' contents.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
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

const struct sh_cmd_def sh_text_commands[] = {
	{ "cat", sh_cmd_cat },
	{ "head", sh_cmd_head },
	{ "tail", sh_cmd_tail },
	{ "wc", sh_cmd_wc },
	{ "grep", sh_cmd_grep },
	{ "sed", sh_cmd_sed },
	{ "sort", sh_cmd_sort },
	{ "uniq", sh_cmd_uniq },
	{ "cut", sh_cmd_cut },
	{ "tr", sh_cmd_tr },
	{ "nl", sh_cmd_nl },
	{ "paste", sh_cmd_paste },
	{ "comm", sh_cmd_comm },
	{ "join", sh_cmd_join },
	{ "split", sh_cmd_split },
	{ "od", sh_cmd_od },
	{ "base64", sh_cmd_base64 },
	{ "sha256sum", sh_cmd_sha256sum },
	{ "md5sum", sh_cmd_md5sum },
	{ "tee", sh_cmd_tee },
	{ "tac", sh_cmd_tac },
	{ "seq", sh_cmd_seq },
	{ "diff", sh_cmd_diff },
	{ "basename", sh_cmd_basename },
	{ "dirname", sh_cmd_dirname },
	{ NULL, NULL },
};

int
sh_text_file_error(struct sh_cmd *c, const char *file, int err)
{
	return sh_cmd_error(c, 1, "%s: %s", sh_qname(file, false), strerror(err));
}

static int
help(struct sh_cmd *c, const char *usage, const char *flags)
{
	sh_out_printf(c->out_buf, "Usage: %s %s\nbox-shell's own %s; supported options: %s\n",
		      sh_cmd_name(c), usage, sh_cmd_name(c), flags);
	return sh_cmd_finish(c, 0);
}

/* ---- cat ---- */

struct cat_opts {
	bool number, number_nonblank, squeeze, show_ends, show_tabs, show_nonprinting;
	uint64_t line;      /* the next line's number */
	bool at_bol;        /* the previous file ended a line */
	int blank_run;
};

static void
cat_vis(struct sh_out *o, const struct cat_opts *f, unsigned char ch)
{
	if (f->show_nonprinting) {
		if (ch >= 128) {
			sh_out_write(o, "M-", 2);
			ch -= 128;
		}
		if (ch < 32 && ch != '\t' && ch != '\n') {
			char s[2] = { '^', (char)(ch + 64) };
			sh_out_write(o, s, 2);
			return;
		}
		if (ch == 127) {
			sh_out_write(o, "^?", 2);
			return;
		}
	}
	if (ch == '\t' && f->show_tabs) {
		sh_out_write(o, "^I", 2);
		return;
	}
	sh_out_write(o, &ch, 1);
}

static int
cat_fd(struct sh_cmd *c, int fd, const char *name, struct cat_opts *f, bool plain)
{
	struct sh_in in;
	sh_in_init(&in, fd, c->interrupted);
	int status = 0;
	if (plain) {
		/* Like GNU's cat, data from a pipe or terminal goes on at once. */
		struct stat st;
		bool stream = fstat(fd, &st) == 0 && !S_ISREG(st.st_mode);
		char *d;
		ssize_t n;
		while ((n = sh_in_read(&in, &d)) > 0 && !sh_cmd_stopped(c)) {
			sh_out_write(c->out_buf, d, (size_t)n);
			if (stream)
				sh_out_flush(c->out_buf);
		}
		if (n < 0 && n != -EINTR)
			status = sh_text_file_error(c, name, (int)-n);
		sh_in_release(&in);
		return status;
	}
	char *line;
	ssize_t n;
	while ((n = sh_in_getline(&in, &line)) > 0 && !sh_cmd_stopped(c)) {
		bool blank = f->at_bol && line[0] == '\n';
		if (blank) {
			f->blank_run++;
			if (f->squeeze && f->blank_run > 1)
				continue;
		} else if (f->at_bol) {
			f->blank_run = 0;
		}
		if (f->at_bol && (f->number_nonblank ? !blank : f->number))
			sh_out_printf(c->out_buf, "%6" PRIu64 "\t", f->line++);
		bool has_nl = line[n - 1] == '\n';
		size_t body = (size_t)n - has_nl;
		/* GNU's -E shows the '\r' of a CRLF ending as ^M. */
		bool cr_end = f->show_ends && has_nl && body > 0 && line[body - 1] == '\r' &&
			      !f->show_nonprinting;
		if (cr_end)
			body--;
		if (f->show_tabs || f->show_nonprinting) {
			for (size_t i = 0; i < body; i++)
				cat_vis(c->out_buf, f, (unsigned char)line[i]);
		} else {
			sh_out_write(c->out_buf, line, body);
		}
		if (cr_end)
			sh_out_write(c->out_buf, "^M", 2);
		if (has_nl) {
			if (f->show_ends)
				sh_out_write(c->out_buf, "$", 1);
			sh_out_write(c->out_buf, "\n", 1);
		}
		f->at_bol = has_nl;
	}
	if (n < 0 && n != -EINTR)
		status = sh_text_file_error(c, name, (int)-n);
	sh_in_release(&in);
	return status;
}

int
sh_cmd_cat(struct sh_cmd *c, int argc, char **argv)
{
	static const struct sh_longopt lo[] = {
		{ "show-all", SH_NO_ARG, 'A' }, { "number-nonblank", SH_NO_ARG, 'b' },
		{ "show-ends", SH_NO_ARG, 'E' }, { "number", SH_NO_ARG, 'n' },
		{ "squeeze-blank", SH_NO_ARG, 's' }, { "show-tabs", SH_NO_ARG, 'T' },
		{ "show-nonprinting", SH_NO_ARG, 'v' }, { "help", SH_NO_ARG, 'H' }, { 0 },
	};
	struct cat_opts f = { .line = 1, .at_bol = true };
	struct sh_opt g;
	sh_opt_init(&g, c, argc, argv, "AbeEnstTuv", lo);
	int o;
	while ((o = sh_opt_next(&g)) != -1) {
		switch (o) {
		case 'A': f.show_nonprinting = f.show_ends = f.show_tabs = true; break;
		case 'b': f.number = f.number_nonblank = true; break;
		case 'e': f.show_nonprinting = f.show_ends = true; break;
		case 'E': f.show_ends = true; break;
		case 'n': f.number = true; break;
		case 's': f.squeeze = true; break;
		case 't': f.show_nonprinting = f.show_tabs = true; break;
		case 'T': f.show_tabs = true; break;
		case 'u': break;
		case 'v': f.show_nonprinting = true; break;
		case 'H':
			sh_opt_done(&g);
			return help(c, "[OPTION]... [FILE]...", "-A -b -e -E -n -s -t -T -u -v");
		default:
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
	}
	bool plain = !(f.number || f.squeeze || f.show_ends || f.show_tabs || f.show_nonprinting);
	char *dash[] = { "-" };
	char **files = g.n_operands ? g.operands : dash;
	int nfiles = g.n_operands ? g.n_operands : 1;
	int status = 0;
	for (int i = 0; i < nfiles && !sh_cmd_stopped(c); i++) {
		int fd;
		int r = sh_cmd_open_input(c, files[i], &fd);
		if (r < 0) {
			status = sh_text_file_error(c, files[i], -r);
			continue;
		}
		if (cat_fd(c, fd, files[i], &f, plain))
			status = 1;
		if (r)
			close(fd);
	}
	sh_opt_done(&g);
	return sh_cmd_finish(c, status);
}

/* ---- head / tail ---- */

static void
print_header(struct sh_cmd *c, const char *name, bool *first)
{
	sh_out_printf(c->out_buf, "%s==> %s <==\n", *first ? "" : "\n",
		      strcmp(name, "-") ? name : "standard input");
	*first = false;
}

/* "-5" or "-5n"/"-5c" as the first argument: the obsolete count form. */
static bool
obsolete_count(char *arg, char *num, size_t cap, bool *bytes)
{
	if (arg[0] != '-' || arg[1] < '0' || arg[1] > '9')
		return false;
	size_t i = 1;
	while (arg[i] >= '0' && arg[i] <= '9')
		i++;
	*bytes = false;
	if (arg[i] == 'c')
		*bytes = true;
	else if (arg[i] == 'l' || arg[i] == 'n')
		;
	else if (arg[i] != '\0')
		return false;
	if (arg[i] && arg[i + 1])
		return false;
	if (i >= cap)
		return false;
	memcpy(num, arg + 1, i - 1);
	num[i - 1] = '\0';
	return true;
}

static int
head_fd(struct sh_cmd *c, int fd, const char *name, bool bytes, bool all_but, uint64_t n)
{
	if (all_but) {
		char *d;
		size_t len;
		int r = sh_read_fd_all(fd, c->interrupted, &d, &len);
		if (r < 0) {
			if (r == -EINTR)
				return 0;
			return sh_cmd_error(c, 1, "error reading %s: %s", sh_qname(name, true),
					    strerror(-r));
		}
		size_t keep;
		if (bytes) {
			keep = n >= len ? 0 : len - (size_t)n;
		} else {
			/* Drop the last n lines (a last line without '\n' counts). */
			size_t end = len;
			uint64_t k = 0;
			if (end > 0 && d[end - 1] != '\n' && n > 0) {
				while (end > 0 && d[end - 1] != '\n')
					end--;
				k = 1;
			}
			while (k < n && end > 0) {
				end--;
				while (end > 0 && d[end - 1] != '\n')
					end--;
				k++;
			}
			keep = end;
		}
		sh_out_write(c->out_buf, d, keep);
		free(d);
		return 0;
	}
	struct sh_in in;
	sh_in_init(&in, fd, c->interrupted);
	char *d;
	ssize_t got;
	uint64_t left = n;
	int status = 0;
	while (left > 0 && !sh_cmd_stopped(c) && (got = sh_in_read(&in, &d)) != 0) {
		if (got < 0) {
			if (got != -EINTR)
				status = sh_cmd_error(c, 1, "error reading %s: %s",
						      sh_qname(name, true), strerror((int)-got));
			break;
		}
		size_t take = (size_t)got;
		if (bytes) {
			if (take > left)
				take = (size_t)left;
			left -= take;
		} else {
			char *p = d, *e = d + got;
			while (left > 0 && p < e) {
				char *nl = memchr(p, '\n', (size_t)(e - p));
				if (!nl) {
					p = e;
					break;
				}
				p = nl + 1;
				left--;
			}
			take = (size_t)(p - d);
		}
		sh_out_write(c->out_buf, d, take);
	}
	/* A pipe's remaining bytes are left to the writer; a seekable stdin is
	 * repositioned after what was consumed, as GNU's head does. */
	if (fd == c->in && in.start < in.end)
		(void)lseek(fd, -(off_t)(in.end - in.start), SEEK_CUR);
	sh_in_release(&in);
	return status;
}

static int
bad_count(struct sh_cmd *c, bool bytes, const char *arg, int r)
{
	return sh_cmd_error(c, 1, "invalid number of %s: %s%s", bytes ? "bytes" : "lines",
			    sh_qname(arg, true), r == -ERANGE ? ": Value too large for defined data type" : "");
}

int
sh_cmd_head(struct sh_cmd *c, int argc, char **argv)
{
	static const struct sh_longopt lo[] = {
		{ "bytes", SH_REQ_ARG, 'c' }, { "lines", SH_REQ_ARG, 'n' },
		{ "quiet", SH_NO_ARG, 'q' }, { "silent", SH_NO_ARG, 'q' },
		{ "verbose", SH_NO_ARG, 'v' }, { "zero-terminated", SH_NO_ARG, 'z' },
		{ "help", SH_NO_ARG, 'H' }, { 0 },
	};
	bool bytes = false, all_but = false;
	uint64_t n = 10;
	int headers = 0; /* -1 never, 1 always */
	char num[32];
	bool ob;
	char **av = argv;
	int ac = argc;
	_cleanup_free_ char **shifted = calloc((size_t)argc + 1, sizeof(char *));
	if (!shifted)
		return sh_cmd_error(c, 1, "%s", strerror(ENOMEM));
	int status = 0;
	const char *count_arg = NULL;
	if (argc > 1 && obsolete_count(argv[1], num, sizeof(num), &ob)) {
		bytes = ob;
		count_arg = num;
		av = shifted;
		ac = argc - 1;
		av[0] = argv[0];
		for (int i = 2; i <= argc; i++)
			av[i - 1] = argv[i];
	}
	struct sh_opt g;
	sh_opt_init(&g, c, ac, av, "c:n:qvz", lo);
	int o;
	while ((o = sh_opt_next(&g)) != -1) {
		switch (o) {
		case 'c': bytes = true; count_arg = g.arg; break;
		case 'n': bytes = false; count_arg = g.arg; break;
		case 'q': headers = -1; break;
		case 'v': headers = 1; break;
		case 'z':
			sh_opt_done(&g);
			return sh_cmd_error(c, 1, "-z is not supported");
		case 'H':
			sh_opt_done(&g);
			return help(c, "[OPTION]... [FILE]...", "-c [-]N -n [-]N -q -v -NUM");
		default:
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
	}
	if (count_arg) {
		const char *s = count_arg;
		all_but = *s == '-';
		if (*s == '-' || *s == '+')
			s++;
		int r = sh_parse_count(s, &n);
		if (r == -EINVAL) {
			sh_opt_done(&g);
			return bad_count(c, bytes, count_arg, r);
		}
	}
	char *dash[] = { "-" };
	char **files = g.n_operands ? g.operands : dash;
	int nfiles = g.n_operands ? g.n_operands : 1;
	bool show = headers == 1 || (headers == 0 && nfiles > 1), first = true;
	for (int i = 0; i < nfiles && !sh_cmd_stopped(c); i++) {
		int fd;
		int r = sh_cmd_open_input(c, files[i], &fd);
		if (r < 0) {
			status = sh_cmd_error(c, 1, "cannot open %s for reading: %s",
					      sh_qname(files[i], true), strerror(-r));
			continue;
		}
		if (show)
			print_header(c, files[i], &first);
		if (head_fd(c, fd, files[i], bytes, all_but, n))
			status = 1;
		if (r)
			close(fd);
	}
	sh_opt_done(&g);
	return sh_cmd_finish(c, status);
}

/* tail of a whole buffer: the offset its output starts at. */
static size_t
tail_start(const char *d, size_t len, bool bytes, bool from_start, uint64_t n)
{
	if (bytes) {
		if (from_start)
			return n == 0 ? 0 : (n - 1 >= len ? len : (size_t)(n - 1));
		return n >= len ? 0 : len - (size_t)n;
	}
	if (from_start) {
		size_t p = 0;
		for (uint64_t k = 1; k < n && p < len; k++) {
			const char *nl = memchr(d + p, '\n', len - p);
			if (!nl)
				return len;
			p = (size_t)(nl - d) + 1;
		}
		return p;
	}
	if (n == 0)
		return len;
	size_t end = len;
	if (end > 0 && d[end - 1] == '\n')
		end--;
	uint64_t k = 0;
	while (end > 0) {
		if (d[end - 1] == '\n' && ++k == n)
			return end;
		end--;
	}
	return 0;
}

/* Output a regular file's tail by reading backwards from its end. */
static int
tail_seekable(struct sh_cmd *c, int fd, off_t size, bool bytes, uint64_t n, off_t *pos_out)
{
	off_t start;
	if (bytes) {
		start = (uint64_t)size <= n ? 0 : size - (off_t)n;
	} else if (n == 0) {
		start = size;
	} else {
		char buf[65536];
		off_t p = size;
		uint64_t k = 0;
		bool skip_last = true;
		start = 0;
		while (p > 0) {
			size_t want = p > (off_t)sizeof(buf) ? sizeof(buf) : (size_t)p;
			ssize_t r = pread(fd, buf, want, p - (off_t)want);
			if (r != (ssize_t)want)
				return r < 0 ? -errno : -EIO;
			for (size_t i = want; i > 0; i--) {
				if (buf[i - 1] != '\n')
					continue;
				if (skip_last && p - (off_t)want + (off_t)i == size) {
					skip_last = false;
					continue;
				}
				if (++k == n) {
					start = p - (off_t)want + (off_t)i;
					goto found;
				}
			}
			skip_last = false;
			p -= (off_t)want;
		}
	}
found:;
	char buf[65536];
	off_t p = start;
	while (p < size && !sh_cmd_stopped(c)) {
		size_t want = size - p > (off_t)sizeof(buf) ? sizeof(buf) : (size_t)(size - p);
		ssize_t r = pread(fd, buf, want, p);
		if (r <= 0)
			return r < 0 ? -errno : 0;
		sh_out_write(c->out_buf, buf, (size_t)r);
		p += r;
	}
	*pos_out = p;
	return 0;
}

struct tail_file {
	const char *name;
	int fd;
	bool close_it, follow;
	off_t pos;
};

int
sh_cmd_tail(struct sh_cmd *c, int argc, char **argv)
{
	static const struct sh_longopt lo[] = {
		{ "bytes", SH_REQ_ARG, 'c' }, { "lines", SH_REQ_ARG, 'n' },
		{ "follow", SH_OPT_ARG, 'f' }, { "quiet", SH_NO_ARG, 'q' },
		{ "silent", SH_NO_ARG, 'q' }, { "verbose", SH_NO_ARG, 'v' },
		{ "sleep-interval", SH_REQ_ARG, 's' }, { "help", SH_NO_ARG, 'H' }, { 0 },
	};
	bool bytes = false, from_start = false, follow = false;
	uint64_t n = 10;
	int headers = 0;
	double interval = 1.0;
	char num[32];
	bool ob;
	char **av = argv;
	int ac = argc;
	_cleanup_free_ char **shifted = calloc((size_t)argc + 1, sizeof(char *));
	if (!shifted)
		return sh_cmd_error(c, 1, "%s", strerror(ENOMEM));
	const char *count_arg = NULL;
	if (argc > 1 && obsolete_count(argv[1], num, sizeof(num), &ob)) {
		bytes = ob;
		count_arg = num;
		av = shifted;
		ac = argc - 1;
		av[0] = argv[0];
		for (int i = 2; i <= argc; i++)
			av[i - 1] = argv[i];
	}
	struct sh_opt g;
	sh_opt_init(&g, c, ac, av, "c:n:fqvs:F", lo);
	int o;
	while ((o = sh_opt_next(&g)) != -1) {
		switch (o) {
		case 'c': bytes = true; count_arg = g.arg; break;
		case 'n': bytes = false; count_arg = g.arg; break;
		case 'f': follow = true; break;
		case 'F': follow = true; break;
		case 'q': headers = -1; break;
		case 'v': headers = 1; break;
		case 's': interval = strtod(g.arg, NULL); break;
		case 'H':
			sh_opt_done(&g);
			return help(c, "[OPTION]... [FILE]...",
				    "-c [+]N -n [+]N -f -F -s SECS -q -v -NUM");
		default:
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
	}
	if (count_arg) {
		const char *s = count_arg;
		from_start = *s == '+';
		if (*s == '-' || *s == '+')
			s++;
		if (sh_parse_count(s, &n) == -EINVAL) {
			sh_opt_done(&g);
			return bad_count(c, bytes, count_arg, -EINVAL);
		}
	}
	if (interval <= 0 || interval > 3600)
		interval = 1.0;
	char *dash[] = { "-" };
	char **files = g.n_operands ? g.operands : dash;
	int nfiles = g.n_operands ? g.n_operands : 1;
	bool show = headers == 1 || (headers == 0 && nfiles > 1), first = true;
	struct tail_file *tf = calloc((size_t)nfiles, sizeof(*tf));
	int status = 0;
	if (!tf) {
		sh_opt_done(&g);
		return sh_cmd_error(c, 1, "%s", strerror(ENOMEM));
	}
	for (int i = 0; i < nfiles && !sh_cmd_stopped(c); i++) {
		tf[i] = (struct tail_file){ .name = files[i], .fd = -1 };
		int fd;
		int r = sh_cmd_open_input(c, files[i], &fd);
		if (r < 0) {
			status = sh_cmd_error(c, 1, "cannot open %s for reading: %s",
					      sh_qname(files[i], true), strerror(-r));
			continue;
		}
		tf[i].fd = fd;
		tf[i].close_it = r;
		if (show)
			print_header(c, files[i], &first);
		struct stat st;
		int e = 0;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && !from_start) {
			e = tail_seekable(c, fd, st.st_size, bytes, n, &tf[i].pos);
			tf[i].follow = follow;
		} else {
			char *d;
			size_t len;
			e = sh_read_fd_all(fd, c->interrupted, &d, &len);
			if (e == 0) {
				size_t s = tail_start(d, len, bytes, from_start, n);
				sh_out_write(c->out_buf, d + s, len - s);
				free(d);
				tf[i].pos = (off_t)len;
				tf[i].follow = follow && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
			}
		}
		if (e < 0 && e != -EINTR)
			status = sh_cmd_error(c, 1, "error reading %s: %s", sh_qname(files[i], true),
					      strerror(-e));
	}
	/* -f: poll the regular files for growth until interrupted or EPIPE. */
	int last = nfiles - 1;
	bool any = false;
	for (int i = 0; i < nfiles; i++)
		any |= tf[i].follow;
	while (any && !sh_cmd_stopped(c)) {
		sh_out_flush(c->out_buf);
		bool grew = false;
		for (int i = 0; i < nfiles && !sh_cmd_stopped(c); i++) {
			if (!tf[i].follow)
				continue;
			struct stat st;
			if (fstat(tf[i].fd, &st) < 0)
				continue;
			if (st.st_size < tf[i].pos) {
				sh_cmd_error(c, 0, "%s: file truncated", sh_qname(tf[i].name, false));
				tf[i].pos = 0;
			}
			char buf[65536];
			ssize_t r;
			while ((r = pread(tf[i].fd, buf, sizeof(buf), tf[i].pos)) > 0) {
				if (show && last != i) {
					print_header(c, tf[i].name, &first);
					last = i;
				}
				sh_out_write(c->out_buf, buf, (size_t)r);
				tf[i].pos += r;
				grew = true;
			}
		}
		if (!grew) {
			/* Sleep in short slices so an interrupt is seen promptly. */
			struct timespec ts = { .tv_sec = 0, .tv_nsec = 50 * 1000 * 1000 };
			for (double slept = 0; slept < interval && !(c->interrupted && *c->interrupted);
			     slept += 0.05)
				nanosleep(&ts, NULL);
		}
	}
	for (int i = 0; i < nfiles; i++)
		if (tf[i].close_it)
			close(tf[i].fd);
	free(tf);
	sh_opt_done(&g);
	return sh_cmd_finish(c, status);
}

/* ---- wc ---- */

struct wc_counts {
	uint64_t lines, words, chars, bytes, maxlen;
};

static bool
env_utf8(const struct sh_cmd *c)
{
	const char *v = sh_cmd_getenv(c, "LC_ALL");
	if (!v || !*v)
		v = sh_cmd_getenv(c, "LC_CTYPE");
	if (!v || !*v)
		v = sh_cmd_getenv(c, "LANG");
	return v && (strcasestr(v, "utf-8") || strcasestr(v, "utf8"));
}

static int
wc_fd(struct sh_cmd *c, int fd, struct wc_counts *w, bool need_words, bool utf8)
{
	struct sh_in in;
	sh_in_init(&in, fd, c->interrupted);
	char *d;
	ssize_t n;
	bool in_word = false;
	uint64_t linepos = 0;
	while ((n = sh_in_read(&in, &d)) > 0) {
		w->bytes += (uint64_t)n;
		if (!need_words) {
			w->lines += sh_count_newlines(d, (size_t)n);
			if (utf8)
				for (ssize_t i = 0; i < n; i++)
					w->chars += ((unsigned char)d[i] & 0xc0) != 0x80;
			continue;
		}
		for (ssize_t i = 0; i < n; i++) {
			unsigned char ch = (unsigned char)d[i];
			if (utf8)
				w->chars += (ch & 0xc0) != 0x80;
			switch (ch) {
			case '\n':
				w->lines++;
				/* fallthrough */
			case '\r':
			case '\f':
				if (linepos > w->maxlen)
					w->maxlen = linepos;
				linepos = 0;
				w->words += in_word;
				in_word = false;
				break;
			case '\t':
				linepos += 8 - linepos % 8;
				w->words += in_word;
				in_word = false;
				break;
			case ' ':
				linepos++;
				/* fallthrough */
			case '\v':
				w->words += in_word;
				in_word = false;
				break;
			default:
				if (utf8 && ch >= 0x80) {
					/* Count a UTF-8 character once, as printable. */
					if ((ch & 0xc0) != 0x80)
						linepos++;
					in_word = true;
				} else if (ch >= 0x20 && ch < 0x7f) {
					linepos++;
					in_word = true;
				}
				break;
			}
		}
	}
	w->words += in_word;
	if (linepos > w->maxlen)
		w->maxlen = linepos;
	if (!utf8)
		w->chars = w->bytes;
	sh_in_release(&in);
	return n < 0 ? (int)n : 0;
}

int
sh_cmd_wc(struct sh_cmd *c, int argc, char **argv)
{
	static const struct sh_longopt lo[] = {
		{ "bytes", SH_NO_ARG, 'c' }, { "chars", SH_NO_ARG, 'm' },
		{ "lines", SH_NO_ARG, 'l' }, { "words", SH_NO_ARG, 'w' },
		{ "max-line-length", SH_NO_ARG, 'L' },
		{ "help", SH_NO_ARG, 'H' }, { 0 },
	};
	bool pl = false, pw = false, pc = false, pb = false, pL = false;
	int total_mode = 0; /* 0 auto, 1 always, 2 only, 3 never */
	struct sh_opt g;
	sh_opt_init(&g, c, argc, argv, "cmlwL", lo);
	int o;
	while ((o = sh_opt_next(&g)) != -1) {
		switch (o) {
		case 'c': pb = true; break;
		case 'm': pc = true; break;
		case 'l': pl = true; break;
		case 'w': pw = true; break;
		case 'L': pL = true; break;
		case 'H':
			sh_opt_done(&g);
			return help(c, "[OPTION]... [FILE]...",
				    "-c -m -l -w -L");
		default:
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
	}
	if (!pl && !pw && !pc && !pb && !pL)
		pl = pw = pb = true;
	bool utf8 = pc && env_utf8(c);
	char *dash[] = { "-" };
	bool no_names = g.n_operands == 0;
	char **files = g.n_operands ? g.operands : dash;
	int nfiles = g.n_operands ? g.n_operands : 1;
	int ncounts = pl + pw + pc + pb + pL;
	/* GNU's width: digits of the regular files' total size, at least 7 when
	 * one input is not a regular file; 1 for a single count of one file. */
	int width = 1;
	if (!(nfiles == 1 && ncounts == 1)) {
		uint64_t total = 0;
		int minw = 1;
		for (int i = 0; i < nfiles; i++) {
			struct stat st;
			int r = strcmp(files[i], "-") == 0 ? fstat(c->in, &st)
							   : sh_fs_stat(c->fs, files[i], &st, true);
			if (r < 0)
				continue;
			if (S_ISREG(st.st_mode))
				total += (uint64_t)st.st_size;
			else
				minw = 7;
		}
		for (; total >= 10; total /= 10)
			width++;
		if (width < minw)
			width = minw;
	}
	struct wc_counts tot = { 0 };
	int status = 0;
	for (int i = 0; i < nfiles && !sh_cmd_stopped(c); i++) {
		int fd;
		int r = sh_cmd_open_input(c, files[i], &fd);
		if (r < 0) {
			status = sh_text_file_error(c, files[i], -r);
			continue;
		}
		struct wc_counts w = { 0 };
		int e = wc_fd(c, fd, &w, pw || pL, utf8);
		if (r)
			close(fd);
		if (e < 0) {
			if (e == -EINTR)
				break;
			status = sh_text_file_error(c, files[i], -e);
		}
		tot.lines += w.lines;
		tot.words += w.words;
		tot.chars += w.chars;
		tot.bytes += w.bytes;
		if (w.maxlen > tot.maxlen)
			tot.maxlen = w.maxlen;
		if (total_mode == 2)
			continue;
		const char *sep = "";
		if (pl) { sh_out_printf(c->out_buf, "%s%*" PRIu64, sep, width, w.lines); sep = " "; }
		if (pw) { sh_out_printf(c->out_buf, "%s%*" PRIu64, sep, width, w.words); sep = " "; }
		if (pc) { sh_out_printf(c->out_buf, "%s%*" PRIu64, sep, width, w.chars); sep = " "; }
		if (pb) { sh_out_printf(c->out_buf, "%s%*" PRIu64, sep, width, w.bytes); sep = " "; }
		if (pL) { sh_out_printf(c->out_buf, "%s%*" PRIu64, sep, width, w.maxlen); }
		if (no_names)
			sh_out_write(c->out_buf, "\n", 1);
		else
			sh_out_printf(c->out_buf, " %s\n", files[i]);
	}
	if (total_mode == 1 || total_mode == 2 || (total_mode == 0 && nfiles > 1)) {
		if (total_mode == 2)
			width = 1;
		const char *sep = "";
		if (pl) { sh_out_printf(c->out_buf, "%s%*" PRIu64, sep, width, tot.lines); sep = " "; }
		if (pw) { sh_out_printf(c->out_buf, "%s%*" PRIu64, sep, width, tot.words); sep = " "; }
		if (pc) { sh_out_printf(c->out_buf, "%s%*" PRIu64, sep, width, tot.chars); sep = " "; }
		if (pb) { sh_out_printf(c->out_buf, "%s%*" PRIu64, sep, width, tot.bytes); sep = " "; }
		if (pL) { sh_out_printf(c->out_buf, "%s%*" PRIu64, sep, width, tot.maxlen); }
		sh_out_printf(c->out_buf, "%s\n", total_mode == 2 ? "" : " total");
	}
	sh_opt_done(&g);
	return sh_cmd_finish(c, status);
}

/* ---- tee ---- */

int
sh_cmd_tee(struct sh_cmd *c, int argc, char **argv)
{
	static const struct sh_longopt lo[] = {
		{ "append", SH_NO_ARG, 'a' }, { "ignore-interrupts", SH_NO_ARG, 'i' },
		{ "output-error", SH_OPT_ARG, 'p' }, { "help", SH_NO_ARG, 'H' }, { 0 },
	};
	bool append = false;
	struct sh_opt g;
	sh_opt_init(&g, c, argc, argv, "aip", lo);
	int o;
	while ((o = sh_opt_next(&g)) != -1) {
		switch (o) {
		case 'a': append = true; break;
		case 'i': break;
		case 'p': break;
		case 'H':
			sh_opt_done(&g);
			return help(c, "[OPTION]... [FILE]...", "-a -i -p");
		default:
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
	}
	int status = 0;
	int *fds = calloc((size_t)g.n_operands + 1, sizeof(int));
	if (!fds) {
		sh_opt_done(&g);
		return sh_cmd_error(c, 1, "%s", strerror(ENOMEM));
	}
	for (int i = 0; i < g.n_operands; i++) {
		int fl = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
		/* "-" is a file named "-", as in GNU's tee. */
		fds[i] = sh_fs_open(c->fs, g.operands[i], fl, 0666);
		if (fds[i] < 0) {
			status = sh_text_file_error(c, g.operands[i], -fds[i]);
			fds[i] = -1;
		}
	}
	struct sh_in in;
	sh_in_init(&in, c->in, c->interrupted);
	char *d;
	ssize_t n;
	while ((n = sh_in_read(&in, &d)) > 0) {
		if (!c->out_buf->error) {
			sh_out_write(c->out_buf, d, (size_t)n);
			sh_out_flush(c->out_buf);
		}
		bool alive = !c->out_buf->error;
		for (int i = 0; i < g.n_operands; i++) {
			if (fds[i] < 0)
				continue;
			alive = true;
			size_t off = 0;
			while (off < (size_t)n) {
				ssize_t w = write(fds[i], d + off, (size_t)n - off);
				if (w < 0 && errno == EINTR)
					continue;
				if (w < 0) {
					status = sh_text_file_error(c, g.operands[i], errno);
					close(fds[i]);
					fds[i] = -1;
					break;
				}
				off += (size_t)w;
			}
		}
		if (!alive || (c->out_buf->error == -EPIPE))
			break;
	}
	if (n < 0 && n != -EINTR)
		status = sh_cmd_error(c, 1, "read error: %s", strerror((int)-n));
	sh_in_release(&in);
	for (int i = 0; i < g.n_operands; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	sh_opt_done(&g);
	return sh_cmd_finish(c, status);
}

/* ---- tac ---- */

static void
tac_buf(struct sh_cmd *c, const char *d, size_t len, const char *sep, size_t seplen, bool before)
{
	/* Split forwards into records (ending with the separator, or starting
	 * with it for -b), then write them last first. */
	size_t n = 0, cap = 64;
	size_t *starts = malloc(cap * sizeof(size_t));
	if (!starts)
		return;
	starts[n++] = 0;
	const char *p = d, *e = d + len;
	while (p < e) {
		const char *m = seplen == 1 ? memchr(p, sep[0], (size_t)(e - p))
					    : memmem(p, (size_t)(e - p), sep, seplen);
		if (!m)
			break;
		size_t at = before ? (size_t)(m - d) : (size_t)(m - d) + seplen;
		if (n == cap) {
			size_t *ns = realloc(starts, cap * 2 * sizeof(size_t));
			if (!ns)
				break;
			starts = ns;
			cap *= 2;
		}
		if (at > starts[n - 1] || (before && at == 0 && false))
			starts[n++] = at;
		p = m + seplen;
	}
	size_t end = len;
	for (size_t i = n; i-- > 0 && !sh_cmd_stopped(c);) {
		if (end > starts[i])
			sh_out_write(c->out_buf, d + starts[i], end - starts[i]);
		end = starts[i];
	}
	free(starts);
}

int
sh_cmd_tac(struct sh_cmd *c, int argc, char **argv)
{
	static const struct sh_longopt lo[] = {
		{ "before", SH_NO_ARG, 'b' }, { "separator", SH_REQ_ARG, 's' },
		{ "help", SH_NO_ARG, 'H' }, { 0 },
	};
	bool before = false;
	const char *sep = "\n";
	struct sh_opt g;
	sh_opt_init(&g, c, argc, argv, "bs:", lo);
	int o;
	while ((o = sh_opt_next(&g)) != -1) {
		switch (o) {
		case 'b': before = true; break;
		case 's':
			sep = g.arg;
			if (!*sep) {
				sh_opt_done(&g);
				return sh_cmd_error(c, 1, "separator cannot be empty");
			}
			break;
		case 'H':
			sh_opt_done(&g);
			return help(c, "[OPTION]... [FILE]...", "-b -s SEP");
		default:
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
	}
	char *dash[] = { "-" };
	char **files = g.n_operands ? g.operands : dash;
	int nfiles = g.n_operands ? g.n_operands : 1;
	int status = 0;
	for (int i = 0; i < nfiles && !sh_cmd_stopped(c); i++) {
		int fd;
		int r = sh_cmd_open_input(c, files[i], &fd);
		if (r < 0) {
			status = sh_cmd_error(c, 1, "failed to open %s for reading: %s",
					      sh_qname(files[i], true), strerror(-r));
			continue;
		}
		char *d;
		size_t len;
		int e = sh_read_fd_all(fd, c->interrupted, &d, &len);
		if (r)
			close(fd);
		if (e < 0) {
			if (e != -EINTR)
				status = sh_cmd_error(c, 1, "%s: read error: %s",
						      sh_qname(files[i], false), strerror(-e));
			continue;
		}
		tac_buf(c, d, len, sep, strlen(sep), before);
		free(d);
	}
	sh_opt_done(&g);
	return sh_cmd_finish(c, status);
}

/* ---- basename / dirname ---- */

static void
base_of(const char *p, const char *suffix, struct sh_out *o, char term)
{
	size_t len = strlen(p);
	while (len > 1 && p[len - 1] == '/')
		len--;
	size_t start = len;
	while (start > 0 && p[start - 1] != '/')
		start--;
	if (len == 1 && p[0] == '/')
		start = 0;
	size_t n = len - start;
	if (suffix && *suffix) {
		size_t sl = strlen(suffix);
		if (n > sl && memcmp(p + start + n - sl, suffix, sl) == 0)
			n -= sl;
	}
	sh_out_write(o, p + start, n);
	sh_out_write(o, &term, 1);
}

int
sh_cmd_basename(struct sh_cmd *c, int argc, char **argv)
{
	static const struct sh_longopt lo[] = {
		{ "multiple", SH_NO_ARG, 'a' }, { "suffix", SH_REQ_ARG, 's' },
		{ "zero", SH_NO_ARG, 'z' }, { "help", SH_NO_ARG, 'H' }, { 0 },
	};
	bool multiple = false;
	char term = '\n';
	const char *suffix = NULL;
	struct sh_opt g;
	sh_opt_init(&g, c, argc, argv, "+as:z", lo);
	int o;
	while ((o = sh_opt_next(&g)) != -1) {
		switch (o) {
		case 'a': multiple = true; break;
		case 's': suffix = g.arg; multiple = true; break;
		case 'z': term = '\0'; break;
		case 'H':
			sh_opt_done(&g);
			return help(c, "NAME [SUFFIX] | OPTION... NAME...", "-a -s SUFFIX -z");
		default:
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
	}
	int status = 0;
	if (g.n_operands == 0) {
		sh_cmd_error(c, 1, "missing operand");
		status = sh_cmd_usage_error(c, 1, NULL);
	} else if (!multiple && g.n_operands > 2) {
		sh_cmd_error(c, 1, "extra operand %s", sh_qname(g.operands[2], true));
		status = sh_cmd_usage_error(c, 1, NULL);
	} else if (!multiple) {
		base_of(g.operands[0], g.n_operands == 2 ? g.operands[1] : NULL, c->out_buf, term);
	} else {
		for (int i = 0; i < g.n_operands; i++)
			base_of(g.operands[i], suffix, c->out_buf, term);
	}
	sh_opt_done(&g);
	return sh_cmd_finish(c, status);
}

int
sh_cmd_dirname(struct sh_cmd *c, int argc, char **argv)
{
	static const struct sh_longopt lo[] = {
		{ "zero", SH_NO_ARG, 'z' }, { "help", SH_NO_ARG, 'H' }, { 0 },
	};
	char term = '\n';
	struct sh_opt g;
	sh_opt_init(&g, c, argc, argv, "z", lo);
	int o;
	while ((o = sh_opt_next(&g)) != -1) {
		switch (o) {
		case 'z': term = '\0'; break;
		case 'H':
			sh_opt_done(&g);
			return help(c, "[OPTION] NAME...", "-z");
		default:
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
	}
	int status = 0;
	if (g.n_operands == 0) {
		sh_cmd_error(c, 1, "missing operand");
		status = sh_cmd_usage_error(c, 1, NULL);
	}
	for (int i = 0; i < g.n_operands; i++) {
		const char *p = g.operands[i];
		size_t len = strlen(p);
		while (len > 1 && p[len - 1] == '/')
			len--;
		while (len > 0 && p[len - 1] != '/')
			len--;
		while (len > 1 && p[len - 1] == '/')
			len--;
		if (len == 0)
			sh_out_write(c->out_buf, ".", 1);
		else
			sh_out_write(c->out_buf, p, len);
		sh_out_write(c->out_buf, &term, 1);
	}
	sh_opt_done(&g);
	return sh_cmd_finish(c, status);
}

/* ---- seq ---- */

/* Digits after the decimal point in a number as written (for the precision). */
static int
frac_digits(const char *s)
{
	const char *dot = strchr(s, '.');
	if (!dot || strpbrk(s, "eExX"))
		return 0;
	return (int)strspn(dot + 1, "0123456789");
}

static bool
parse_ld(const char *s, long double *v)
{
	char *end;
	if (!*s)
		return false;
	errno = 0;
	*v = strtold(s, &end);
	return *end == '\0' && !isnan(*v);
}

int
sh_cmd_seq(struct sh_cmd *c, int argc, char **argv)
{
	static const struct sh_longopt lo[] = {
		{ "format", SH_REQ_ARG, 'f' }, { "separator", SH_REQ_ARG, 's' },
		{ "equal-width", SH_NO_ARG, 'w' }, { "help", SH_NO_ARG, 'H' }, { 0 },
	};
	const char *fmt = NULL, *sep = "\n";
	bool equal = false;
	/* A negative number ends the options (GNU's seq does the same). */
	int nopt = argc;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] == '-' && ((a[1] >= '0' && a[1] <= '9') || a[1] == '.')) {
			nopt = i;
			break;
		}
	}
	struct sh_opt g;
	sh_opt_init(&g, c, nopt, argv, "+f:s:w", lo);
	int o;
	while ((o = sh_opt_next(&g)) != -1) {
		switch (o) {
		case 'f': fmt = g.arg; break;
		case 's': sep = g.arg; break;
		case 'w': equal = true; break;
		case 'H':
			sh_opt_done(&g);
			return help(c, "[OPTION]... [FIRST [INCREMENT]] LAST", "-f FORMAT -s SEP -w");
		default:
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
	}
	char *nums[3];
	int nn = 0;
	for (int i = 0; i < g.n_operands; i++) {
		if (nn == 3) {
			sh_cmd_error(c, 1, "extra operand %s", sh_qname(g.operands[i], true));
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
		nums[nn++] = g.operands[i];
	}
	for (int i = nopt; i < argc; i++) {
		if (nn == 3) {
			sh_cmd_error(c, 1, "extra operand %s", sh_qname(argv[i], true));
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
		nums[nn++] = argv[i];
	}
	sh_opt_done(&g);
	if (nn == 0) {
		sh_cmd_error(c, 1, "missing operand");
		return sh_cmd_usage_error(c, 1, NULL);
	}
	long double v[3];
	for (int i = 0; i < nn; i++) {
		if (!parse_ld(nums[i], &v[i])) {
			sh_cmd_error(c, 1, "invalid floating point argument: %s",
				     sh_qname(nums[i], true));
			return sh_cmd_usage_error(c, 1, NULL);
		}
	}
	long double first = 1, step = 1, last;
	const char *sfirst = "1", *sstep = "1";
	if (nn == 1) {
		last = v[0];
	} else if (nn == 2) {
		first = v[0], last = v[1], sfirst = nums[0];
	} else {
		first = v[0], step = v[1], last = v[2], sfirst = nums[0], sstep = nums[1];
		if (step == 0) {
			sh_cmd_error(c, 1, "invalid Zero increment value: %s", sh_qname(nums[1], true));
			return sh_cmd_usage_error(c, 1, NULL);
		}
	}
	int prec = frac_digits(sfirst) > frac_digits(sstep) ? frac_digits(sfirst) : frac_digits(sstep);
	char lfmt[256];
	if (fmt) {
		/* One %[flags][width][.prec](e|f|g|a|E|F|G|A) conversion: add 'L'. */
		const char *p = fmt;
		int convs = 0;
		size_t w = 0;
		char built[256];
		for (; *p && w < sizeof(built) - 3; p++) {
			built[w++] = *p;
			if (*p != '%')
				continue;
			if (p[1] == '%') {
				built[w++] = *++p;
				continue;
			}
			p++;
			while (*p && strchr("-+ #0'123456789.", *p) && w < sizeof(built) - 3)
				built[w++] = *p++;
			if (!*p || !strchr("efgaEFGA", *p)) {
				sh_cmd_error(c, 1, "format %s has unknown %%%c directive",
					     sh_qname(fmt, true), *p ? *p : ' ');
				return 1;
			}
			built[w++] = 'L';
			built[w++] = *p;
			convs++;
		}
		built[w] = '\0';
		if (convs != 1) {
			return sh_cmd_error(c, 1, convs ? "format %s has too many %% directives"
							: "format %s has no %% directive",
					    sh_qname(fmt, true));
		}
		snprintf(lfmt, sizeof(lfmt), "%s", built);
	}
	int width = 0;
	if (equal && !fmt) {
		char a[128], b[128];
		snprintf(a, sizeof(a), "%.*Lf", prec, first);
		snprintf(b, sizeof(b), "%.*Lf", prec, last);
		width = (int)(strlen(a) > strlen(b) ? strlen(a) : strlen(b));
	}
	bool all_int = prec == 0 && !fmt && fabsl(first) < 1e18L && fabsl(last) < 1e18L &&
		       fabsl(step) < 1e18L && first == floorl(first) && step == floorl(step);
	for (uint64_t i = 0; !sh_cmd_stopped(c); i++) {
		long double x = first + (long double)i * step;
		if (step > 0 ? x > last : x < last)
			break;
		if (i > 0)
			sh_out_write(c->out_buf, sep, strlen(sep));
		if (fmt) {
			char tmp[512];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
			snprintf(tmp, sizeof(tmp), lfmt, x);
#pragma GCC diagnostic pop
			sh_out_write(c->out_buf, tmp, strlen(tmp));
		} else if (all_int) {
			sh_out_printf(c->out_buf, "%0*lld", width, (long long)x);
		} else {
			sh_out_printf(c->out_buf, "%0*.*Lf", width, prec, x);
		}
		if (i == UINT64_MAX - 1)
			break;
	}
	bool any = step > 0 ? first <= last : first >= last;
	if (any)
		sh_out_write(c->out_buf, "\n", 1);
	return sh_cmd_finish(c, 0);
}
