/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_cols.c — box-shell's own line and column commands:
 * uniq cut tr nl paste comm join split, GNU coreutils 9 in the C locale
 * (bytes are characters). split creates its pieces through fsops
 * (write_content each).
 * Trusts: nothing in the input or the arguments.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "cmd.h"
#include "cmd_text.h"
#include "cmdutil.h"

static int
help_text(struct sh_cmd *c, const char *usage, const char *flags)
{
	sh_out_printf(c->out_buf, "Usage: %s %s\nbox-shell's own %s; supported options: %s\n",
		      sh_cmd_name(c), usage, sh_cmd_name(c), flags);
	return sh_cmd_finish(c, 0);
}

/* A whole input file ("-" = stdin) in memory; prints GNU's plain message. */
static int
slurp(struct sh_cmd *c, const char *name, char **data, size_t *len)
{
	int fd;
	int r = sh_cmd_open_input(c, name, &fd);
	if (r < 0)
		return sh_text_file_error(c, name, -r), -1;
	int e = sh_read_fd_all(fd, c->interrupted, data, len);
	if (r)
		close(fd);
	if (e < 0) {
		if (e != -EINTR)
			sh_text_file_error(c, name, -e);
		return -1;
	}
	return 0;
}

struct lines {
	const char **p;
	size_t *len;
	size_t n;
};

static int
split_lines(const char *d, size_t n, char sep, struct lines *l)
{
	size_t cap = 64;
	l->p = malloc(cap * sizeof(char *));
	l->len = malloc(cap * sizeof(size_t));
	l->n = 0;
	if (!l->p || !l->len)
		return -ENOMEM;
	const char *p = d, *e = d + n;
	while (p < e) {
		const char *q = memchr(p, sep, (size_t)(e - p));
		if (l->n == cap) {
			cap *= 2;
			const char **np = realloc(l->p, cap * sizeof(char *));
			if (!np)
				return -ENOMEM;
			l->p = np;
			size_t *nl = realloc(l->len, cap * sizeof(size_t));
			if (!nl)
				return -ENOMEM;
			l->len = nl;
		}
		l->p[l->n] = p;
		l->len[l->n++] = q ? (size_t)(q - p) : (size_t)(e - p);
		p = q ? q + 1 : e;
	}
	return 0;
}

static void
lines_free(struct lines *l)
{
	free(l->p);
	free(l->len);
}

/* ---- uniq ---- */

struct uniq_opts {
	uint64_t skip_fields, skip_chars, max_chars;
	bool has_max, icase;
};

static void
uniq_key(const struct uniq_opts *u, const char *p, size_t n, const char **kp, size_t *kn)
{
	size_t i = 0;
	for (uint64_t f = 0; f < u->skip_fields; f++) {
		while (i < n && (p[i] == ' ' || p[i] == '\t'))
			i++;
		while (i < n && !(p[i] == ' ' || p[i] == '\t'))
			i++;
	}
	i = u->skip_chars >= n - i ? n : i + u->skip_chars;
	size_t len = n - i;
	if (u->has_max && len > u->max_chars)
		len = (size_t)u->max_chars;
	*kp = p + i;
	*kn = len;
}

static bool
uniq_equal(const struct uniq_opts *u, const char *a, size_t an, const char *b, size_t bn)
{
	const char *ka, *kb;
	size_t kan, kbn;
	uniq_key(u, a, an, &ka, &kan);
	uniq_key(u, b, bn, &kb, &kbn);
	if (kan != kbn)
		return false;
	return u->icase ? strncasecmp(ka, kb, kan) == 0 : memcmp(ka, kb, kan) == 0;
}

static bool
parse_u64(const char *s, uint64_t *v)
{
	char *e;
	if (!*s || *s == '-')
		return false;
	errno = 0;
	unsigned long long x = strtoull(s, &e, 10);
	if (*e || errno)
		return false;
	*v = x;
	return true;
}

int
sh_cmd_uniq(struct sh_cmd *c, int argc, char **argv)
{
	static const struct sh_longopt lo[] = {
		{ "count", SH_NO_ARG, 'c' }, { "repeated", SH_NO_ARG, 'd' },
		{ "all-repeated", SH_OPT_ARG, 'D' }, { "unique", SH_NO_ARG, 'u' },
		{ "ignore-case", SH_NO_ARG, 'i' }, { "skip-fields", SH_REQ_ARG, 'f' },
		{ "skip-chars", SH_REQ_ARG, 's' }, { "check-chars", SH_REQ_ARG, 'w' },
		{ "zero-terminated", SH_NO_ARG, 'z' }, { "help", SH_NO_ARG, 'H' }, { 0 },
	};
	struct uniq_opts u = { 0 };
	bool count = false, repeated = false, unique = false, all_rep = false;
	char sep = '\n';
	struct sh_opt g;
	sh_opt_init(&g, c, argc, argv, "cdDuif:s:w:z", lo);
	int o, status = 0;
	while ((o = sh_opt_next(&g)) != -1) {
		switch (o) {
		case 'c': count = true; break;
		case 'd': repeated = true; break;
		case 'D': all_rep = true; break;
		case 'u': unique = true; break;
		case 'i': u.icase = true; break;
		case 'f':
		case 's':
		case 'w': {
			uint64_t v;
			if (!parse_u64(g.arg, &v)) {
				sh_cmd_error(c, 1, "%s: invalid number of %s to skip", sh_qname(g.arg, false),
					     o == 'f' ? "fields" : o == 's' ? "bytes" : "bytes");
				sh_opt_done(&g);
				return 1;
			}
			if (o == 'f')
				u.skip_fields = v;
			else if (o == 's')
				u.skip_chars = v;
			else
				u.max_chars = v, u.has_max = true;
			break;
		}
		case 'z':
			sh_opt_done(&g);
			return sh_cmd_error(c, 1, "-z is not supported");
		case 'H':
			sh_opt_done(&g);
			return help_text(c, "[OPTION]... [INPUT [OUTPUT]]",
					 "-c -d -D -u -i -f N -s N -w N -z");
		default:
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
	}
	if (all_rep && count) {
		sh_cmd_error(c, 1, "printing all duplicated lines and repeat counts is meaningless");
		sh_opt_done(&g);
		return sh_cmd_usage_error(c, 1, NULL);
	}
	if (g.n_operands > 2) {
		sh_cmd_error(c, 1, "extra operand %s", sh_qname(g.operands[2], true));
		sh_opt_done(&g);
		return sh_cmd_usage_error(c, 1, NULL);
	}
	const char *in = g.n_operands >= 1 ? g.operands[0] : "-";
	struct sh_out fout, *out = c->out_buf;
	int ofd = -1;
	if (g.n_operands == 2 && strcmp(g.operands[1], "-")) {
		ofd = sh_fs_open(c->fs, g.operands[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (ofd < 0) {
			sh_text_file_error(c, g.operands[1], -ofd);
			sh_opt_done(&g);
			return 1;
		}
		sh_out_init(&fout, ofd);
		out = &fout;
	}
	int fd;
	int r = sh_cmd_open_input(c, in, &fd);
	if (r < 0) {
		status = sh_text_file_error(c, in, -r);
		goto out;
	}
	struct sh_in rd;
	sh_in_init(&rd, fd, c->interrupted);
	char *prev = NULL;
	size_t prev_len = 0, prev_cap = 0;
	uint64_t n_same = 0;
	bool have = false, group_printed = false;
	for (;;) {
		char *line;
		ssize_t n = sep == '\n' ? sh_in_getline(&rd, &line) : 0;
		if (n < 0) {
			if (n != -EINTR)
				status = sh_cmd_error(c, 1, "error reading %s", sh_qname(in, true));
			break;
		}
		size_t ln = (size_t)n;
		if (n > 0 && line[n - 1] == sep)
			ln--;
		if (n > 0 && have && uniq_equal(&u, prev, prev_len, line, ln)) {
			n_same++;
			if (all_rep) {
				if (!group_printed) {
					sh_out_write(out, prev, prev_len);
					sh_out_write(out, &sep, 1);
					group_printed = true;
				}
				sh_out_write(out, line, ln);
				sh_out_write(out, &sep, 1);
			}
			continue;
		}
		if (have && !all_rep) {
			bool show = (!repeated && !unique) || (repeated && n_same > 1) ||
				    (unique && n_same == 1);
			if (repeated && unique)
				show = false;
			if (show) {
				if (count)
					sh_out_printf(out, "%7" PRIu64 " ", n_same);
				sh_out_write(out, prev, prev_len);
				sh_out_write(out, &sep, 1);
			}
		}
		if (n == 0 || sh_cmd_stopped(c))
			break;
		if (prev_cap < ln + 1) {
			char *np = realloc(prev, ln + 1);
			if (!np)
				break;
			prev = np;
			prev_cap = ln + 1;
		}
		memcpy(prev, line, ln);
		prev_len = ln;
		n_same = 1;
		have = true;
		group_printed = false;
	}
	free(prev);
	sh_in_release(&rd);
	if (r)
		close(fd);
out:
	if (ofd >= 0) {
		sh_out_release(&fout);
		close(ofd);
	}
	sh_opt_done(&g);
	return sh_cmd_finish(c, status);
}

/* ---- cut ---- */

struct range {
	uint64_t lo, hi; /* 1-based, inclusive; hi UINT64_MAX = to the end */
};

static int
parse_list(struct sh_cmd *c, const char *s, struct range **out, size_t *n, bool fields)
{
	struct range *v = NULL;
	size_t k = 0;
	const char *p = s;
	while (*p) {
		uint64_t lo = 1, hi;
		char *e;
		bool have_lo = false;
		if (*p >= '0' && *p <= '9') {
			lo = strtoull(p, &e, 10);
			p = e;
			have_lo = true;
			if (lo == 0) {
				free(v);
				sh_cmd_error(c, 1, fields ? "fields are numbered from 1"
							  : "byte/character positions are numbered from 1");
				return sh_cmd_usage_error(c, -1, NULL);
			}
		}
		if (*p == '-') {
			p++;
			if (*p >= '0' && *p <= '9') {
				hi = strtoull(p, &e, 10);
				p = e;
				if (hi < lo) {
					free(v);
					sh_cmd_error(c, 1, "invalid decreasing range");
					return sh_cmd_usage_error(c, -1, NULL);
				}
			} else {
				if (!have_lo) {
					free(v);
					sh_cmd_error(c, 1, "invalid range with no endpoint: -");
					return sh_cmd_usage_error(c, -1, NULL);
				}
				hi = UINT64_MAX;
			}
		} else {
			if (!have_lo)
				goto bad;
			hi = lo;
		}
		if (*p && *p != ',' && *p != ' ')
			goto bad;
		if (*p)
			p++;
		struct range *nv = realloc(v, (k + 1) * sizeof(*nv));
		if (!nv) {
			free(v);
			return -ENOMEM;
		}
		v = nv;
		v[k++] = (struct range){ lo, hi };
	}
	if (k == 0)
		goto bad;
	*out = v;
	*n = k;
	return 0;
bad:
	free(v);
	sh_cmd_error(c, 1, fields ? "invalid field value %s" : "invalid byte or character range",
		     sh_qname(s, true));
	return sh_cmd_usage_error(c, -1, NULL);
}

static bool
in_list(const struct range *v, size_t n, uint64_t i, bool complement)
{
	for (size_t k = 0; k < n; k++)
		if (i >= v[k].lo && i <= v[k].hi)
			return !complement;
	return complement;
}

int
sh_cmd_cut(struct sh_cmd *c, int argc, char **argv)
{
	enum { OPT_COMPLEMENT = 256, OPT_OUTDELIM };
	static const struct sh_longopt lo[] = {
		{ "bytes", SH_REQ_ARG, 'b' }, { "characters", SH_REQ_ARG, 'c' },
		{ "fields", SH_REQ_ARG, 'f' }, { "delimiter", SH_REQ_ARG, 'd' },
		{ "only-delimited", SH_NO_ARG, 's' }, { "complement", SH_NO_ARG, OPT_COMPLEMENT },
		{ "output-delimiter", SH_REQ_ARG, OPT_OUTDELIM },
		{ "zero-terminated", SH_NO_ARG, 'z' }, { "help", SH_NO_ARG, 'H' }, { 0 },
	};
	int mode = 0; /* 'b' or 'f' */
	const char *list = NULL, *outdelim = NULL;
	char delim = '\t', sep = '\n';
	bool only_delim = false, complement = false, have_delim = false;
	struct sh_opt g;
	sh_opt_init(&g, c, argc, argv, "b:c:f:d:snz", lo);
	int o, status = 0;
	while ((o = sh_opt_next(&g)) != -1) {
		switch (o) {
		case 'b': case 'c': case 'f':
			if (mode) {
				sh_cmd_error(c, 1, "only one list may be specified");
				sh_opt_done(&g);
				return sh_cmd_usage_error(c, 1, NULL);
			}
			mode = o == 'f' ? 'f' : 'b';
			list = g.arg;
			break;
		case 'd':
			if (strlen(g.arg) > 1) {
				sh_cmd_error(c, 1, "the delimiter must be a single character");
				sh_opt_done(&g);
				return sh_cmd_usage_error(c, 1, NULL);
			}
			delim = g.arg[0];
			have_delim = true;
			break;
		case 's': only_delim = true; break;
		case 'n': break;
		case 'z':
			sh_opt_done(&g);
			return sh_cmd_error(c, 1, "-z is not supported");
		case OPT_COMPLEMENT: complement = true; break;
		case OPT_OUTDELIM: outdelim = g.arg; break;
		case 'H':
			sh_opt_done(&g);
			return help_text(c, "OPTION... [FILE]...",
					 "-b LIST -c LIST -f LIST -d DELIM -s -n -z --complement "
					 "--output-delimiter=STR");
		default:
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
	}
	if (!mode) {
		sh_cmd_error(c, 1, "you must specify a list of bytes, characters, or fields");
		sh_opt_done(&g);
		return sh_cmd_usage_error(c, 1, NULL);
	}
	if (mode == 'b' && (have_delim || only_delim)) {
		sh_cmd_error(c, 1, have_delim ? "an input delimiter may be specified only when "
						"operating on fields"
					      : "suppressing non-delimited lines makes sense\n\tonly "
						"when operating on fields");
		sh_opt_done(&g);
		return sh_cmd_usage_error(c, 1, NULL);
	}
	struct range *ranges = NULL;
	size_t nr = 0;
	if (parse_list(c, list, &ranges, &nr, mode == 'f') < 0) {
		sh_opt_done(&g);
		return 1;
	}
	char dstr[2] = { delim, 0 };
	const char *od = outdelim ? outdelim : mode == 'f' ? dstr : NULL;
	size_t odl = od ? (outdelim ? strlen(outdelim) : 1) : 0;
	char *dash[] = { "-" };
	char **files = g.n_operands ? g.operands : dash;
	int nfiles = g.n_operands ? g.n_operands : 1;
	for (int i = 0; i < nfiles && !sh_cmd_stopped(c); i++) {
		int fd;
		int r = sh_cmd_open_input(c, files[i], &fd);
		if (r < 0) {
			status = sh_text_file_error(c, files[i], -r);
			continue;
		}
		struct sh_in in;
		sh_in_init(&in, fd, c->interrupted);
		char *line;
		ssize_t n;
		while ((n = sh_in_getline(&in, &line)) > 0 && !sh_cmd_stopped(c)) {
			size_t len = (size_t)n;
			if (line[len - 1] == sep)
				len--;
			if (mode == 'b') {
				bool prev_sel = false, any = false;
				for (size_t k = 0; k < len; k++) {
					bool sel = in_list(ranges, nr, k + 1, complement);
					if (sel) {
						if (outdelim && any && !prev_sel)
							sh_out_write(c->out_buf, outdelim, odl);
						sh_out_write(c->out_buf, line + k, 1);
						any = true;
					}
					prev_sel = sel;
				}
				sh_out_write(c->out_buf, &sep, 1);
				continue;
			}
			if (!memchr(line, delim, len)) {
				if (!only_delim) {
					sh_out_write(c->out_buf, line, len);
					sh_out_write(c->out_buf, &sep, 1);
				}
				continue;
			}
			uint64_t field = 1;
			size_t st = 0;
			bool first = true;
			for (size_t k = 0; k <= len; k++) {
				if (k < len && line[k] != delim)
					continue;
				if (in_list(ranges, nr, field, complement)) {
					if (!first)
						sh_out_write(c->out_buf, od, odl);
					sh_out_write(c->out_buf, line + st, k - st);
					first = false;
				}
				field++;
				st = k + 1;
			}
			sh_out_write(c->out_buf, &sep, 1);
		}
		if (n < 0 && n != -EINTR)
			status = sh_text_file_error(c, files[i], (int)-n);
		sh_in_release(&in);
		if (r)
			close(fd);
	}
	free(ranges);
	sh_opt_done(&g);
	return sh_cmd_finish(c, status);
}

/* ---- tr ---- */

/* One character of a tr SET at s[*i], with its backslash escape. */
static unsigned char
tr_char(const char *s, size_t len, size_t *i)
{
	if (s[*i] != '\\' || *i + 1 >= len)
		return (unsigned char)s[(*i)++];
	char nx = s[*i + 1];
	*i += 2;
	switch (nx) {
	case 'n': return '\n';
	case 't': return '\t';
	case 'r': return '\r';
	case 'a': return '\a';
	case 'b': return '\b';
	case 'f': return '\f';
	case 'v': return '\v';
	case '\\': return '\\';
	default:
		if (nx >= '0' && nx <= '7') {
			int v = nx - '0', k = 1;
			while (k < 3 && *i < len && s[*i] >= '0' && s[*i] <= '7') {
				v = v * 8 + (s[(*i)++] - '0');
				k++;
			}
			return (unsigned char)v;
		}
		return (unsigned char)nx;
	}
}

/* Expand a tr SET into bytes (classes, ranges, escapes, [c*n], [=c=]). For
 * SET2, [c*] fills up to target. Returns length or -1 (message printed). */
static long
tr_expand(struct sh_cmd *c, const char *s, unsigned char *out, size_t cap, bool set2,
	  size_t target)
{
	size_t n = 0;
	long fill_at = -1;
	unsigned char fill_ch = 0;
	size_t i = 0, len = strlen(s);
	while (i < len) {
		unsigned char ch;
		/* [:class:] */
		if (s[i] == '[' && s[i + 1] == ':') {
			const char *e = strstr(s + i + 2, ":]");
			if (e) {
				size_t cl = (size_t)(e - (s + i + 2));
				char name[16] = { 0 };
				if (cl < sizeof(name))
					memcpy(name, s + i + 2, cl);
				int (*fn)(int) = NULL;
				if (!strcmp(name, "alpha")) fn = isalpha;
				else if (!strcmp(name, "digit")) fn = isdigit;
				else if (!strcmp(name, "alnum")) fn = isalnum;
				else if (!strcmp(name, "upper")) fn = isupper;
				else if (!strcmp(name, "lower")) fn = islower;
				else if (!strcmp(name, "space")) fn = isspace;
				else if (!strcmp(name, "blank")) fn = isblank;
				else if (!strcmp(name, "punct")) fn = ispunct;
				else if (!strcmp(name, "print")) fn = isprint;
				else if (!strcmp(name, "graph")) fn = isgraph;
				else if (!strcmp(name, "cntrl")) fn = iscntrl;
				else if (!strcmp(name, "xdigit")) fn = isxdigit;
				if (!fn) {
					sh_cmd_error(c, 1, "invalid character class %s",
						     sh_qname(name, true));
					return -1;
				}
				for (int x = 0; x < 256 && n < cap; x++)
					if (fn(x))
						out[n++] = (unsigned char)x;
				i = (size_t)(e - s) + 2;
				continue;
			}
		}
		/* [=c=] */
		if (s[i] == '[' && s[i + 1] == '=' && i + 4 < len + 1 && s[i + 3] == '=' &&
		    s[i + 4] == ']') {
			if (n < cap)
				out[n++] = (unsigned char)s[i + 2];
			i += 5;
			continue;
		}
		/* [c*n] / [c*] */
		if (s[i] == '[' && i + 2 < len && s[i + 2] == '*' && strchr(s + i + 3, ']')) {
			unsigned char rc = (unsigned char)s[i + 1];
			const char *e = strchr(s + i + 3, ']');
			size_t digits = (size_t)(e - (s + i + 3));
			if (digits == 0) {
				if (set2) {
					fill_at = (long)n;
					fill_ch = rc;
				}
			} else {
				unsigned long cnt = strtoul(s + i + 3, NULL, s[i + 3] == '0' ? 8 : 10);
				for (unsigned long k = 0; k < cnt && n < cap; k++)
					out[n++] = rc;
			}
			i = (size_t)(e - s) + 1;
			continue;
		}
		ch = tr_char(s, len, &i);
		/* a range c-d */
		if (i + 1 < len + 1 && s[i] == '-' && i + 1 < len) {
			size_t j = i + 1;
			unsigned char hi = tr_char(s, len, &j);
			if (hi < ch) {
				char a[8], b[8];
				snprintf(a, sizeof(a), ch < 32 || ch > 126 ? "\\%03o" : "%c", ch);
				snprintf(b, sizeof(b), hi < 32 || hi > 126 ? "\\%03o" : "%c", hi);
				sh_cmd_error(c, 1, "range-endpoints of '%s-%s' are in reverse collating "
					     "sequence order", a, b);
				return -1;
			}
			for (int x = ch; x <= hi && n < cap; x++)
				out[n++] = (unsigned char)x;
			i = j;
			continue;
		}
		if (n < cap)
			out[n++] = ch;
	}
	if (fill_at >= 0 && target > n) {
		size_t add = target - n;
		memmove(out + fill_at + add, out + fill_at, n - (size_t)fill_at);
		memset(out + fill_at, fill_ch, add);
		n += add;
	}
	return (long)n;
}

int
sh_cmd_tr(struct sh_cmd *c, int argc, char **argv)
{
	static const struct sh_longopt lo[] = {
		{ "complement", SH_NO_ARG, 'c' }, { "delete", SH_NO_ARG, 'd' },
		{ "squeeze-repeats", SH_NO_ARG, 's' }, { "truncate-set1", SH_NO_ARG, 't' },
		{ "help", SH_NO_ARG, 'H' }, { 0 },
	};
	bool comp = false, del = false, squeeze = false, trunc = false;
	struct sh_opt g;
	sh_opt_init(&g, c, argc, argv, "cCdst", lo);
	int o;
	while ((o = sh_opt_next(&g)) != -1) {
		switch (o) {
		case 'c': case 'C': comp = true; break;
		case 'd': del = true; break;
		case 's': squeeze = true; break;
		case 't': trunc = true; break;
		case 'H':
			sh_opt_done(&g);
			return help_text(c, "[OPTION]... STRING1 [STRING2]", "-c -C -d -s -t");
		default:
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
	}
	int nops = g.n_operands;
	bool need2 = !del && !squeeze;
	int max_ops = (del && !squeeze) ? 1 : 2;
	if (nops == 0) {
		sh_cmd_error(c, 1, "missing operand");
		sh_opt_done(&g);
		return sh_cmd_usage_error(c, 1, NULL);
	}
	if (need2 && nops < 2) {
		sh_cmd_error(c, 1, "missing operand after %s", sh_qname(g.operands[0], true));
		sh_out_printf(c->err_buf, "Two strings must be given when translating.\n");
		sh_opt_done(&g);
		return sh_cmd_usage_error(c, 1, NULL);
	}
	if (del && squeeze && nops < 2) {
		sh_cmd_error(c, 1, "missing operand after %s", sh_qname(g.operands[0], true));
		sh_out_printf(c->err_buf, "Two strings must be given when both deleting and "
			      "squeezing repeats.\n");
		sh_opt_done(&g);
		return sh_cmd_usage_error(c, 1, NULL);
	}
	if (nops > max_ops) {
		sh_cmd_error(c, 1, "extra operand %s", sh_qname(g.operands[max_ops], true));
		if (del && !squeeze)
			sh_out_printf(c->err_buf, "Only one string may be given when deleting "
				      "without squeezing repeats.\n");
		sh_opt_done(&g);
		return sh_cmd_usage_error(c, 1, NULL);
	}
	static __thread unsigned char s1[65536], s2[65536];
	long n1 = tr_expand(c, g.operands[0], s1, sizeof(s1) / 2, false, 0);
	if (n1 < 0) {
		sh_opt_done(&g);
		return 1;
	}
	bool in1[256] = { false };
	for (long i = 0; i < n1; i++)
		in1[s1[i]] = true;
	if (comp) {
		n1 = 0;
		for (int x = 0; x < 256; x++)
			if (!in1[x])
				s1[n1++] = (unsigned char)x;
		for (int x = 0; x < 256; x++)
			in1[x] = !in1[x];
	}
	long n2 = 0;
	if (nops == 2) {
		n2 = tr_expand(c, g.operands[1], s2, sizeof(s2) / 2, true, (size_t)n1);
		if (n2 < 0) {
			sh_opt_done(&g);
			return 1;
		}
	}
	unsigned char map[256];
	for (int x = 0; x < 256; x++)
		map[x] = (unsigned char)x;
	bool squeeze_set[256] = { false };
	if (!del && nops == 2) {
		if (n2 == 0 && n1 > 0) {
			sh_cmd_error(c, 1, "when not truncating set1, string2 must be non-empty");
			sh_opt_done(&g);
			return 1;
		}
		if (trunc && n1 > n2)
			n1 = n2;
		for (long i = 0; i < n1; i++)
			map[s1[i]] = s2[i < n2 ? i : n2 - 1];
		for (long i = 0; i < n2; i++)
			squeeze_set[s2[i]] = true;
	} else if (squeeze) {
		if (del)
			for (long i = 0; i < n2; i++)
				squeeze_set[s2[i]] = true;
		else
			for (long i = 0; i < n1; i++)
				squeeze_set[s1[i]] = true;
	}
	struct sh_in in;
	sh_in_init(&in, c->in, c->interrupted);
	char *d;
	ssize_t n;
	int last = -1;
	char obuf[65536];
	while ((n = sh_in_read(&in, &d)) > 0 && !sh_cmd_stopped(c)) {
		size_t w = 0;
		for (ssize_t i = 0; i < n; i++) {
			unsigned char ch = (unsigned char)d[i];
			if (del && in1[ch])
				continue;
			ch = map[ch];
			if (squeeze && squeeze_set[ch] && last == ch)
				continue;
			last = ch;
			obuf[w++] = (char)ch;
			if (w == sizeof(obuf)) {
				sh_out_write(c->out_buf, obuf, w);
				w = 0;
			}
		}
		sh_out_write(c->out_buf, obuf, w);
	}
	int status = 0;
	if (n < 0 && n != -EINTR)
		status = sh_cmd_error(c, 1, "read error: %s", strerror((int)-n));
	sh_in_release(&in);
	sh_opt_done(&g);
	return sh_cmd_finish(c, status);
}

/* ---- nl ---- */

int
sh_cmd_nl(struct sh_cmd *c, int argc, char **argv)
{
	static const struct sh_longopt lo[] = {
		{ "body-numbering", SH_REQ_ARG, 'b' }, { "number-format", SH_REQ_ARG, 'n' },
		{ "number-width", SH_REQ_ARG, 'w' }, { "number-separator", SH_REQ_ARG, 's' },
		{ "starting-line-number", SH_REQ_ARG, 'v' }, { "line-increment", SH_REQ_ARG, 'i' },
		{ "help", SH_NO_ARG, 'H' }, { 0 },
	};
	char style = 't';
	const char *fmt = "rn", *sep = "\t";
	long width = 6;
	long long start = 1, incr = 1;
	struct sh_opt g;
	sh_opt_init(&g, c, argc, argv, "b:n:w:s:v:i:", lo);
	int o, status = 0;
	while ((o = sh_opt_next(&g)) != -1) {
		switch (o) {
		case 'b':
			if (strcmp(g.arg, "a") && strcmp(g.arg, "t") && strcmp(g.arg, "n")) {
				sh_cmd_error(c, 1, "invalid body numbering style: %s",
					     sh_qname(g.arg, true));
				sh_opt_done(&g);
				return sh_cmd_usage_error(c, 1, NULL);
			}
			style = g.arg[0];
			break;
		case 'n':
			if (strcmp(g.arg, "ln") && strcmp(g.arg, "rn") && strcmp(g.arg, "rz")) {
				sh_cmd_error(c, 1, "invalid line numbering format: %s",
					     sh_qname(g.arg, true));
				sh_opt_done(&g);
				return sh_cmd_usage_error(c, 1, NULL);
			}
			fmt = g.arg;
			break;
		case 'w': {
			char *e;
			width = strtol(g.arg, &e, 10);
			if (*e || width <= 0) {
				sh_cmd_error(c, 1, "invalid line number field width: %s%s",
					     sh_qname(g.arg, true),
					     *e ? "" : ": Numerical result out of range");
				sh_opt_done(&g);
				return 1;
			}
			break;
		}
		case 's': sep = g.arg; break;
		case 'v': start = strtoll(g.arg, NULL, 10); break;
		case 'i': incr = strtoll(g.arg, NULL, 10); break;
		case 'H':
			sh_opt_done(&g);
			return help_text(c, "[OPTION]... [FILE]...",
					 "-b a|t|n -n ln|rn|rz -w N -s SEP -v N -i N");
		default:
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
	}
	long long num = start;
	char *dash[] = { "-" };
	char **files = g.n_operands ? g.operands : dash;
	int nfiles = g.n_operands ? g.n_operands : 1;
	size_t seplen = strlen(sep);
	for (int i = 0; i < nfiles && !sh_cmd_stopped(c); i++) {
		int fd;
		int r = sh_cmd_open_input(c, files[i], &fd);
		if (r < 0) {
			status = sh_text_file_error(c, files[i], -r);
			continue;
		}
		struct sh_in in;
		sh_in_init(&in, fd, c->interrupted);
		char *line;
		ssize_t n;
		while ((n = sh_in_getline(&in, &line)) > 0 && !sh_cmd_stopped(c)) {
			size_t len = (size_t)n - (line[n - 1] == '\n');
			bool number = style == 'a' || (style == 't' && len > 0);
			if (number) {
				if (!strcmp(fmt, "ln"))
					sh_out_printf(c->out_buf, "%-*lld", (int)width, num);
				else if (!strcmp(fmt, "rz"))
					sh_out_printf(c->out_buf, "%0*lld", (int)width, num);
				else
					sh_out_printf(c->out_buf, "%*lld", (int)width, num);
				sh_out_write(c->out_buf, sep, seplen);
				num += incr;
			} else {
				sh_out_printf(c->out_buf, "%*s", (int)(width + (long)seplen), "");
			}
			sh_out_write(c->out_buf, line, len);
			sh_out_write(c->out_buf, "\n", 1);
		}
		if (n < 0 && n != -EINTR)
			status = sh_text_file_error(c, files[i], (int)-n);
		sh_in_release(&in);
		if (r)
			close(fd);
	}
	sh_opt_done(&g);
	return sh_cmd_finish(c, status);
}

/* ---- paste ---- */

/* Delimiter list with \n \t \\ \0 (empty). */
static size_t
paste_delims(const char *s, char *out, bool *empty)
{
	size_t n = 0;
	for (size_t i = 0; s[i]; i++) {
		if (s[i] == '\\' && s[i + 1]) {
			i++;
			char ch = s[i] == 'n' ? '\n' : s[i] == 't' ? '\t' : s[i] == '0' ? '\0' : s[i];
			empty[n] = s[i] == '0';
			out[n++] = ch;
		} else {
			empty[n] = false;
			out[n++] = s[i];
		}
	}
	return n;
}

int
sh_cmd_paste(struct sh_cmd *c, int argc, char **argv)
{
	static const struct sh_longopt lo[] = {
		{ "delimiters", SH_REQ_ARG, 'd' }, { "serial", SH_NO_ARG, 's' },
		{ "zero-terminated", SH_NO_ARG, 'z' }, { "help", SH_NO_ARG, 'H' }, { 0 },
	};
	const char *dl = "\t";
	bool serial = false;
	struct sh_opt g;
	sh_opt_init(&g, c, argc, argv, "d:sz", lo);
	int o, status = 0;
	while ((o = sh_opt_next(&g)) != -1) {
		switch (o) {
		case 'd': dl = g.arg; break;
		case 's': serial = true; break;
		case 'z':
			sh_opt_done(&g);
			return sh_cmd_error(c, 1, "-z is not supported");
		case 'H':
			sh_opt_done(&g);
			return help_text(c, "[OPTION]... [FILE]...", "-d LIST -s");
		default:
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
	}
	size_t dlen = strlen(dl) + 1;
	_cleanup_free_ char *delims = malloc(dlen);
	_cleanup_free_ bool *empty = calloc(dlen, sizeof(bool));
	if (!delims || !empty) {
		sh_opt_done(&g);
		return 1;
	}
	size_t nd = paste_delims(dl, delims, empty);
	char *dash[] = { "-" };
	char **files = g.n_operands ? g.operands : dash;
	int nfiles = g.n_operands ? g.n_operands : 1;
	struct sh_in *ins = calloc((size_t)nfiles, sizeof(*ins));
	int *fds = calloc((size_t)nfiles, sizeof(int));
	bool *close_it = calloc((size_t)nfiles, sizeof(bool));
	bool *done = calloc((size_t)nfiles, sizeof(bool));
	if (!ins || !fds || !close_it || !done)
		goto out;
	for (int i = 0; i < nfiles; i++) {
		int r = sh_cmd_open_input(c, files[i], &fds[i]);
		if (r < 0) {
			status = sh_text_file_error(c, files[i], -r);
			for (int k = 0; k < i; k++)
				if (close_it[k])
					close(fds[k]);
			goto out;
		}
		close_it[i] = r;
		sh_in_init(&ins[i], fds[i], c->interrupted);
	}
	/* stdin named several times shares one reader */
	if (serial) {
		for (int i = 0; i < nfiles && !sh_cmd_stopped(c); i++) {
			char *line;
			ssize_t n;
			size_t k = 0;
			bool any = false;
			while ((n = sh_in_getline(&ins[i], &line)) > 0) {
				if (any && nd && !empty[k % nd])
					sh_out_write(c->out_buf, &delims[k % nd], 1);
				if (any)
					k++;
				sh_out_write(c->out_buf, line, (size_t)n - (line[n - 1] == '\n'));
				any = true;
			}
			sh_out_write(c->out_buf, "\n", 1);
		}
	} else {
		/* A row is built first: the row after every file ended is not printed. */
		char *row = NULL;
		size_t rlen = 0, rcap = 0;
		for (;;) {
			bool any = false;
			rlen = 0;
			for (int i = 0; i < nfiles; i++) {
				char *line = NULL;
				ssize_t n = 0;
				if (!done[i]) {
					/* stdin named twice: both read the first reader */
					int src = i;
					for (int k = 0; k < i; k++)
						if (fds[k] == fds[i])
							src = k;
					n = sh_in_getline(&ins[src], &line);
					if (n <= 0)
						done[i] = true;
					else
						any = true;
				}
				size_t need = rlen + (n > 0 ? (size_t)n : 0) + 2;
				if (need > rcap) {
					size_t nc = rcap ? rcap : 256;
					while (nc < need)
						nc *= 2;
					char *nr = realloc(row, nc);
					if (!nr)
						break;
					row = nr;
					rcap = nc;
				}
				if (i > 0 && nd && !empty[(size_t)(i - 1) % nd])
					row[rlen++] = delims[(size_t)(i - 1) % nd];
				if (n > 0) {
					size_t l = (size_t)n - (line[n - 1] == '\n');
					memcpy(row + rlen, line, l);
					rlen += l;
				}
			}
			if (!any)
				break;
			sh_out_write(c->out_buf, row, rlen);
			sh_out_write(c->out_buf, "\n", 1);
			if (sh_cmd_stopped(c))
				break;
		}
		free(row);
	}
	for (int i = 0; i < nfiles; i++) {
		sh_in_release(&ins[i]);
		if (close_it[i])
			close(fds[i]);
	}
out:
	free(ins);
	free(fds);
	free(close_it);
	free(done);
	sh_opt_done(&g);
	return sh_cmd_finish(c, status);
}

/* ---- comm ---- */

int
sh_cmd_comm(struct sh_cmd *c, int argc, char **argv)
{
	enum { OPT_CHECK = 256, OPT_NOCHECK, OPT_OUTDELIM, OPT_TOTAL };
	static const struct sh_longopt lo[] = {
		{ "check-order", SH_NO_ARG, OPT_CHECK }, { "nocheck-order", SH_NO_ARG, OPT_NOCHECK },
		{ "output-delimiter", SH_REQ_ARG, OPT_OUTDELIM }, { "total", SH_NO_ARG, OPT_TOTAL },
		{ "zero-terminated", SH_NO_ARG, 'z' }, { "help", SH_NO_ARG, 'H' }, { 0 },
	};
	bool hide[4] = { false }, total = false;
	int check = 0; /* 0 default, 1 strict, -1 off */
	const char *od = "\t";
	struct sh_opt g;
	sh_opt_init(&g, c, argc, argv, "123z", lo);
	int o, status = 0;
	while ((o = sh_opt_next(&g)) != -1) {
		switch (o) {
		case '1': case '2': case '3': hide[o - '0'] = true; break;
		case 'z':
			sh_opt_done(&g);
			return sh_cmd_error(c, 1, "-z is not supported");
		case OPT_CHECK: check = 1; break;
		case OPT_NOCHECK: check = -1; break;
		case OPT_OUTDELIM: od = g.arg; break;
		case OPT_TOTAL: total = true; break;
		case 'H':
			sh_opt_done(&g);
			return help_text(c, "[OPTION]... FILE1 FILE2",
					 "-1 -2 -3 --check-order --nocheck-order "
					 "--output-delimiter=STR --total");
		default:
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
	}
	if (g.n_operands < 2) {
		if (g.n_operands == 0)
			sh_cmd_error(c, 1, "missing operand");
		else
			sh_cmd_error(c, 1, "missing operand after %s", sh_qname(g.operands[0], true));
		sh_opt_done(&g);
		return sh_cmd_usage_error(c, 1, NULL);
	}
	if (g.n_operands > 2) {
		sh_cmd_error(c, 1, "extra operand %s", sh_qname(g.operands[2], true));
		sh_opt_done(&g);
		return sh_cmd_usage_error(c, 1, NULL);
	}
	char *d[2] = { NULL, NULL };
	size_t dn[2];
	struct lines l[2] = { { 0 }, { 0 } };
	for (int i = 0; i < 2; i++) {
		if (slurp(c, g.operands[i], &d[i], &dn[i]) < 0) {
			status = 1;
			goto out;
		}
		split_lines(d[i], dn[i], '\n', &l[i]);
	}
	size_t odl = strlen(od);
	size_t i = 0, j = 0;
	uint64_t cnt[4] = { 0 };
	bool disorder[2] = { false, false }, reported = false;
	while (i < l[0].n || j < l[1].n) {
		int which;
		if (i >= l[0].n) {
			which = 2;
		} else if (j >= l[1].n) {
			which = 1;
		} else {
			size_t n = l[0].len[i] < l[1].len[j] ? l[0].len[i] : l[1].len[j];
			int r = memcmp(l[0].p[i], l[1].p[j], n);
			if (!r)
				r = l[0].len[i] < l[1].len[j] ? -1 : l[0].len[i] > l[1].len[j];
			which = r < 0 ? 1 : r > 0 ? 2 : 3;
		}
		/* order check of the line about to be consumed */
		for (int f = 0; f < 2; f++) {
			size_t k = f ? j : i;
			if (!((which == 3) || (which == f + 1)) || k == 0 || k >= l[f].n)
				continue;
			size_t n = l[f].len[k - 1] < l[f].len[k] ? l[f].len[k - 1] : l[f].len[k];
			int r = memcmp(l[f].p[k - 1], l[f].p[k], n);
			if (!r)
				r = l[f].len[k - 1] > l[f].len[k];
			if (r > 0 && check >= 0 && !disorder[f]) {
				disorder[f] = true;
				sh_out_flush(c->out_buf);
				sh_cmd_error(c, 1, "file %d is not in sorted order", f + 1);
				reported = true;
				if (check == 1) {
					status = 1;
					goto out;
				}
			}
		}
		const char *p = which == 2 ? l[1].p[j] : l[0].p[i];
		size_t n = which == 2 ? l[1].len[j] : l[0].len[i];
		cnt[which]++;
		if (!hide[which]) {
			for (int col = 1; col < which; col++)
				if (!hide[col])
					sh_out_write(c->out_buf, od, odl);
			sh_out_write(c->out_buf, p, n);
			sh_out_write(c->out_buf, "\n", 1);
		}
		if (which != 2)
			i++;
		if (which != 1)
			j++;
	}
	if (total)
		sh_out_printf(c->out_buf, "%" PRIu64 "%s%" PRIu64 "%s%" PRIu64 "%stotal\n", cnt[1], od,
			      cnt[2], od, cnt[3], od);
	if (reported) {
		sh_out_flush(c->out_buf);
		sh_cmd_error(c, 1, "input is not in sorted order");
		status = 1;
	}
out:
	for (int k = 0; k < 2; k++) {
		free(d[k]);
		lines_free(&l[k]);
	}
	sh_opt_done(&g);
	return sh_cmd_finish(c, status);
}

/* ---- join ---- */

struct jfield {
	const char *p;
	size_t n;
};

static size_t
join_fields(const char *p, size_t n, int tab, struct jfield *out, size_t cap)
{
	size_t k = 0, i = 0;
	if (tab >= 0) {
		size_t st = 0;
		for (i = 0; i <= n; i++) {
			if (i < n && p[i] != tab)
				continue;
			if (k < cap)
				out[k] = (struct jfield){ p + st, i - st };
			k++;
			st = i + 1;
		}
		return k < cap ? k : cap;
	}
	while (i < n) {
		while (i < n && (p[i] == ' ' || p[i] == '\t'))
			i++;
		if (i >= n)
			break;
		size_t st = i;
		while (i < n && !(p[i] == ' ' || p[i] == '\t'))
			i++;
		if (k < cap)
			out[k] = (struct jfield){ p + st, i - st };
		k++;
	}
	return k < cap ? k : cap;
}

#define JOIN_MAX_FIELDS 256

struct join_spec {
	int file;   /* 0: the join field, 1 or 2 */
	size_t field;
};

int
sh_cmd_join(struct sh_cmd *c, int argc, char **argv)
{
	enum { OPT_CHECK = 256, OPT_NOCHECK, OPT_HEADER };
	static const struct sh_longopt lo[] = {
		{ "ignore-case", SH_NO_ARG, 'i' }, { "check-order", SH_NO_ARG, OPT_CHECK },
		{ "nocheck-order", SH_NO_ARG, OPT_NOCHECK }, { "header", SH_NO_ARG, OPT_HEADER },
		{ "zero-terminated", SH_NO_ARG, 'z' }, { "help", SH_NO_ARG, 'H' }, { 0 },
	};
	size_t f1 = 1, f2 = 1;
	int tab = -1;
	bool unpaired[3] = { false }, only_unpaired = false, icase = false, header = false;
	const char *empty = NULL, *format = NULL;
	struct sh_opt g;
	sh_opt_init(&g, c, argc, argv, "1:2:j:t:a:v:e:o:iz", lo);
	int o, status = 0;
	while ((o = sh_opt_next(&g)) != -1) {
		switch (o) {
		case '1': case '2': case 'j': {
			char *e;
			long v = strtol(g.arg, &e, 10);
			if (*e || v < 1) {
				sh_cmd_error(c, 1, "invalid field number: %s", sh_qname(g.arg, true));
				sh_opt_done(&g);
				return 1;
			}
			if (o != '2')
				f1 = (size_t)v;
			if (o != '1')
				f2 = (size_t)v;
			break;
		}
		case 't':
			if (strlen(g.arg) > 1) {
				sh_cmd_error(c, 1, "multi-character tab %s", sh_qname(g.arg, true));
				sh_opt_done(&g);
				return 1;
			}
			tab = (unsigned char)g.arg[0];
			break;
		case 'a': case 'v':
			if (strcmp(g.arg, "1") && strcmp(g.arg, "2")) {
				sh_cmd_error(c, 1, "invalid field number: %s", sh_qname(g.arg, true));
				sh_opt_done(&g);
				return 1;
			}
			unpaired[g.arg[0] - '0'] = true;
			if (o == 'v')
				only_unpaired = true;
			break;
		case 'e': empty = g.arg; break;
		case 'o': format = g.arg; break;
		case 'i': icase = true; break;
		case 'z':
			sh_opt_done(&g);
			return sh_cmd_error(c, 1, "-z is not supported");
		case OPT_CHECK: case OPT_NOCHECK: break;
		case OPT_HEADER: header = true; break;
		case 'H':
			sh_opt_done(&g);
			return help_text(c, "[OPTION]... FILE1 FILE2",
					 "-1 F -2 F -j F -t C -a N -v N -e STR -o FORMAT -i --header");
		default:
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
	}
	if (g.n_operands != 2) {
		if (g.n_operands < 2)
			sh_cmd_error(c, 1, g.n_operands ? "missing operand after %s" : "missing operand",
				     g.n_operands ? sh_qname(g.operands[0], true) : "");
		else
			sh_cmd_error(c, 1, "extra operand %s", sh_qname(g.operands[2], true));
		sh_opt_done(&g);
		return sh_cmd_usage_error(c, 1, NULL);
	}
	struct join_spec spec[64];
	size_t nspec = 0;
	bool fmt_auto = format && !strcmp(format, "auto");
	if (format && !fmt_auto) {
		const char *p = format;
		while (*p && nspec < 64) {
			if (*p == '0') {
				spec[nspec++] = (struct join_spec){ 0, 0 };
				p++;
			} else if ((*p == '1' || *p == '2') && p[1] == '.') {
				char *e;
				long v = strtol(p + 2, &e, 10);
				if (e == p + 2 || v < 1) {
					sh_cmd_error(c, 1, "invalid field specifier: %s", sh_qname(p, true));
					sh_opt_done(&g);
					return 1;
				}
				spec[nspec++] = (struct join_spec){ *p - '0', (size_t)v };
				p = e;
			} else {
				sh_cmd_error(c, 1, "invalid field specifier: %s", sh_qname(p, true));
				sh_opt_done(&g);
				return 1;
			}
			while (*p == ',' || *p == ' ')
				p++;
		}
	}
	char *d[2] = { NULL, NULL };
	size_t dn[2];
	struct lines l[2] = { { 0 }, { 0 } };
	for (int i = 0; i < 2; i++) {
		if (slurp(c, g.operands[i], &d[i], &dn[i]) < 0) {
			status = 1;
			goto out;
		}
		split_lines(d[i], dn[i], '\n', &l[i]);
	}
	char sepc = tab >= 0 ? (char)tab : ' ';
	static __thread struct jfield fa[JOIN_MAX_FIELDS], fb[JOIN_MAX_FIELDS];
	/* Output one joined line (a or b may be absent). */
#define JOIN_EMIT_FIELD(first, p, n)                                          \
	do {                                                                  \
		if (!(first))                                                 \
			sh_out_write(c->out_buf, &sepc, 1);                   \
		first = false;                                                \
		sh_out_write(c->out_buf, p, n);                               \
	} while (0)
	size_t i = 0, j = 0;
	if (header && (l[0].n || l[1].n)) {
		/* The first lines are headers, joined whatever their keys. */
		size_t ha = l[0].n ? join_fields(l[0].p[0], l[0].len[0], tab, fa, JOIN_MAX_FIELDS) : 0;
		size_t hb = l[1].n ? join_fields(l[1].p[0], l[1].len[0], tab, fb, JOIN_MAX_FIELDS) : 0;
		bool first = true;
		struct jfield key = f1 <= ha ? fa[f1 - 1] : f2 <= hb ? fb[f2 - 1] : (struct jfield){ "", 0 };
		JOIN_EMIT_FIELD(first, key.p, key.n);
		for (size_t k = 0; k < ha; k++)
			if (k + 1 != f1)
				JOIN_EMIT_FIELD(first, fa[k].p, fa[k].n);
		for (size_t k = 0; k < hb; k++)
			if (k + 1 != f2)
				JOIN_EMIT_FIELD(first, fb[k].p, fb[k].n);
		sh_out_write(c->out_buf, "\n", 1);
		i = l[0].n ? 1 : 0;
		j = l[1].n ? 1 : 0;
	}
	for (;;) {
		if (sh_cmd_stopped(c))
			break;
		int cmp;
		size_t na = 0, nb = 0;
		struct jfield ka = { "", 0 }, kb = { "", 0 };
		if (i < l[0].n) {
			na = join_fields(l[0].p[i], l[0].len[i], tab, fa, JOIN_MAX_FIELDS);
			if (f1 <= na)
				ka = fa[f1 - 1];
		}
		if (j < l[1].n) {
			nb = join_fields(l[1].p[j], l[1].len[j], tab, fb, JOIN_MAX_FIELDS);
			if (f2 <= nb)
				kb = fb[f2 - 1];
		}
		if (i >= l[0].n && j >= l[1].n)
			break;
		if (i >= l[0].n)
			cmp = 1;
		else if (j >= l[1].n)
			cmp = -1;
		else {
			size_t n = ka.n < kb.n ? ka.n : kb.n;
			cmp = icase ? strncasecmp(ka.p, kb.p, n) : memcmp(ka.p, kb.p, n);
			if (!cmp)
				cmp = ka.n < kb.n ? -1 : ka.n > kb.n;
		}
		if (cmp != 0) {
			int f = cmp < 0 ? 1 : 2;
			if (unpaired[f]) {
				struct jfield *fs = f == 1 ? fa : fb;
				size_t nf = f == 1 ? na : nb, jf = f == 1 ? f1 : f2;
				struct jfield key = f == 1 ? ka : kb;
				bool first = true;
				if (format && !fmt_auto) {
					for (size_t s = 0; s < nspec; s++) {
						struct jfield v = { empty ? empty : "", empty ? strlen(empty) : 0 };
						if (spec[s].file == 0)
							v = key;
						else if (spec[s].file == f && spec[s].field <= nf)
							v = fs[spec[s].field - 1];
						JOIN_EMIT_FIELD(first, v.p, v.n);
					}
				} else {
					JOIN_EMIT_FIELD(first, key.p, key.n);
					for (size_t k = 0; k < nf; k++)
						if (k + 1 != jf)
							JOIN_EMIT_FIELD(first, fs[k].p, fs[k].n);
				}
				sh_out_write(c->out_buf, "\n", 1);
			}
			if (cmp < 0)
				i++;
			else
				j++;
			continue;
		}
		/* equal keys: every pair of the two groups */
		size_t ie = i, je = j;
		while (ie < l[0].n) {
			size_t n2 = join_fields(l[0].p[ie], l[0].len[ie], tab, fa, JOIN_MAX_FIELDS);
			struct jfield k2 = f1 <= n2 ? fa[f1 - 1] : (struct jfield){ "", 0 };
			if (k2.n != ka.n || (icase ? strncasecmp(k2.p, ka.p, ka.n) : memcmp(k2.p, ka.p, ka.n)))
				break;
			ie++;
		}
		while (je < l[1].n) {
			size_t n2 = join_fields(l[1].p[je], l[1].len[je], tab, fb, JOIN_MAX_FIELDS);
			struct jfield k2 = f2 <= n2 ? fb[f2 - 1] : (struct jfield){ "", 0 };
			if (k2.n != kb.n || (icase ? strncasecmp(k2.p, kb.p, kb.n) : memcmp(k2.p, kb.p, kb.n)))
				break;
			je++;
		}
		if (!only_unpaired) {
			for (size_t x = i; x < ie; x++) {
				for (size_t y = j; y < je; y++) {
					na = join_fields(l[0].p[x], l[0].len[x], tab, fa, JOIN_MAX_FIELDS);
					nb = join_fields(l[1].p[y], l[1].len[y], tab, fb, JOIN_MAX_FIELDS);
					struct jfield key = f1 <= na ? fa[f1 - 1] : (struct jfield){ "", 0 };
					bool first = true;
					if (format && !fmt_auto) {
						for (size_t s = 0; s < nspec; s++) {
							struct jfield v = { empty ? empty : "",
									    empty ? strlen(empty) : 0 };
							if (spec[s].file == 0)
								v = key;
							else if (spec[s].file == 1 && spec[s].field <= na)
								v = fa[spec[s].field - 1];
							else if (spec[s].file == 2 && spec[s].field <= nb)
								v = fb[spec[s].field - 1];
							JOIN_EMIT_FIELD(first, v.p, v.n);
						}
					} else {
						JOIN_EMIT_FIELD(first, key.p, key.n);
						for (size_t k = 0; k < na; k++)
							if (k + 1 != f1)
								JOIN_EMIT_FIELD(first, fa[k].p, fa[k].n);
						for (size_t k = 0; k < nb; k++)
							if (k + 1 != f2)
								JOIN_EMIT_FIELD(first, fb[k].p, fb[k].n);
					}
					sh_out_write(c->out_buf, "\n", 1);
				}
			}
		}
		i = ie;
		j = je;
	}
#undef JOIN_EMIT_FIELD
out:
	for (int k = 0; k < 2; k++) {
		free(d[k]);
		lines_free(&l[k]);
	}
	sh_opt_done(&g);
	return sh_cmd_finish(c, status);
}

/* ---- split ---- */

static bool
next_suffix(char *suf, size_t len, bool numeric)
{
	for (size_t i = len; i-- > 0;) {
		char last = numeric ? '9' : 'z';
		if (suf[i] != last) {
			suf[i]++;
			return true;
		}
		suf[i] = numeric ? '0' : 'a';
	}
	return false;
}

int
sh_cmd_split(struct sh_cmd *c, int argc, char **argv)
{
	enum { OPT_ADDSUF = 256 };
	static const struct sh_longopt lo[] = {
		{ "lines", SH_REQ_ARG, 'l' }, { "bytes", SH_REQ_ARG, 'b' },
		{ "suffix-length", SH_REQ_ARG, 'a' }, { "numeric-suffixes", SH_OPT_ARG, 'd' },
		{ "additional-suffix", SH_REQ_ARG, OPT_ADDSUF }, { "verbose", SH_NO_ARG, 'v' },
		{ "help", SH_NO_ARG, 'H' }, { 0 },
	};
	uint64_t lines = 1000, bytes = 0;
	size_t suflen = 2;
	bool numeric = false, verbose = false;
	const char *addsuf = "";
	struct sh_opt g;
	sh_opt_init(&g, c, argc, argv, "l:b:a:dv", lo);
	int o, status = 0;
	while ((o = sh_opt_next(&g)) != -1) {
		switch (o) {
		case 'l':
		case 'b': {
			uint64_t v;
			int pr = sh_parse_count(g.arg, &v);
			if (pr < 0 || v == 0) {
				sh_cmd_error(c, 1, "invalid number of %s: %s%s", o == 'l' ? "lines" : "bytes",
					     sh_qname(g.arg, true),
					     pr == 0 || pr == -ERANGE ? ": Numerical result out of range" : "");
				sh_opt_done(&g);
				return 1;
			}
			if (o == 'l')
				lines = v, bytes = 0;
			else
				bytes = v;
			break;
		}
		case 'a': {
			char *e;
			long v = strtol(g.arg, &e, 10);
			if (v == 0 && !*e)
				v = 2; /* GNU: 0 = the default */
			if (*e || v < 1 || v > 64) {
				sh_cmd_error(c, 1, "invalid suffix length: %s", sh_qname(g.arg, true));
				sh_opt_done(&g);
				return 1;
			}
			suflen = (size_t)v;
			break;
		}
		case 'd': numeric = true; break;
		case 'v': verbose = true; break;
		case OPT_ADDSUF: addsuf = g.arg; break;
		case 'H':
			sh_opt_done(&g);
			return help_text(c, "[OPTION]... [FILE [PREFIX]]",
					 "-l N -b SIZE -a N -d --additional-suffix=S --verbose");
		default:
			sh_opt_done(&g);
			return sh_cmd_usage_error(c, 1, NULL);
		}
	}
	if (g.n_operands > 2) {
		sh_cmd_error(c, 1, "extra operand %s", sh_qname(g.operands[2], true));
		sh_opt_done(&g);
		return sh_cmd_usage_error(c, 1, NULL);
	}
	const char *in = g.n_operands ? g.operands[0] : "-";
	const char *prefix = g.n_operands > 1 ? g.operands[1] : "x";
	int fd;
	int r = sh_cmd_open_input(c, in, &fd);
	if (r < 0) {
		sh_cmd_error(c, 1, "cannot open %s for reading: %s", sh_qname(in, true), strerror(-r));
		sh_opt_done(&g);
		return 1;
	}
	char suf[65];
	memset(suf, numeric ? '0' : 'a', suflen);
	suf[suflen] = '\0';
	struct sh_in rd;
	sh_in_init(&rd, fd, c->interrupted);
	int ofd = -1;
	uint64_t used = 0;
	bool first = true;
	char *data;
	ssize_t n;
	while ((n = bytes ? sh_in_read(&rd, &data) : sh_in_getline(&rd, &data)) > 0 &&
	       !sh_cmd_stopped(c)) {
		size_t off = 0;
		while (off < (size_t)n) {
			if (ofd < 0 || used >= (bytes ? bytes : lines)) {
				if (ofd >= 0)
					close(ofd);
				if (!first && !next_suffix(suf, suflen, numeric)) {
					status = sh_cmd_error(c, 1, "output file suffixes exhausted");
					goto done;
				}
				first = false;
				_cleanup_free_ char *name = NULL;
				if (asprintf(&name, "%s%s%s", prefix, suf, addsuf) < 0) {
					status = 1;
					goto done;
				}
				ofd = sh_fs_open(c->fs, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
				if (ofd < 0) {
					status = sh_text_file_error(c, name, -ofd);
					goto done;
				}
				if (verbose)
					sh_out_printf(c->out_buf, "creating file %s\n", sh_qname(name, true));
				used = 0;
			}
			size_t take = (size_t)n - off;
			if (bytes && take > bytes - used)
				take = (size_t)(bytes - used);
			size_t w = 0;
			while (w < take) {
				ssize_t k = write(ofd, data + off + w, take - w);
				if (k < 0 && errno == EINTR)
					continue;
				if (k < 0) {
					status = sh_cmd_error(c, 1, "write error: %s", strerror(errno));
					goto done;
				}
				w += (size_t)k;
			}
			off += take;
			used += bytes ? take : 1;
		}
	}
	if (n < 0 && n != -EINTR)
		status = sh_cmd_error(c, 1, "read error: %s", strerror((int)-n));
done:
	if (ofd >= 0)
		close(ofd);
	sh_in_release(&rd);
	if (r)
		close(fd);
	sh_opt_done(&g);
	return sh_cmd_finish(c, status);
}
