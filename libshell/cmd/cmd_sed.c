/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_sed.c — box-shell's own sed, GNU sed 4.9's language
 * for what agents use: addresses (N, $, /re/ and \%re% with I/M, first~step,
 * 0,/re/, addr,+N, addr,~N, !), ranges, blocks, s (flags g p N i I m M w),
 * p d D n N P q Q a i c y = l h H g G x b t T : r w and comments; options
 * -n -e -f -E -r -s -i[SUFFIX] -u -z. Regexes are POSIX regcomp (glibc's,
 * with GNU's \| \+ \?), with \n and \t turned into the characters.
 *
 * sed -i reads the whole file through fsops (read_content), runs the
 * script, then writes the result back into the same file (write_content) —
 * no temporary file and no rename legs, as the issue says; with a SUFFIX
 * the original content is first written to FILE+SUFFIX.
 * Trusts: nothing in the script or the input.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "cmd.h"
#include "cmd_text.h"
#include "cmdutil.h"

struct buf {
	char *p;
	size_t len, cap;
};

static int
buf_reserve(struct buf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return 0;
	size_t nc = b->cap ? b->cap : 256;
	while (nc < b->len + extra + 1)
		nc *= 2;
	char *np = realloc(b->p, nc);
	if (!np)
		return -ENOMEM;
	b->p = np;
	b->cap = nc;
	return 0;
}

static int
buf_add(struct buf *b, const void *p, size_t n)
{
	if (buf_reserve(b, n) < 0)
		return -ENOMEM;
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

enum addr_type { A_NONE, A_LINE, A_LAST, A_RE, A_STEP, A_ZERO, A_PLUS, A_TILDE };

struct sed_re {
	regex_t re;
	bool compiled;
	int nsub;
	char *lit;            /* a literal every match contains (prefilter), or NULL */
	size_t lit_len;
};

struct addr {
	enum addr_type type;
	uint64_t n, step;
	struct sed_re *re;    /* NULL with A_RE: the last regex used */
};

struct wfile {
	char *name;
	int fd;               /* -1 stdout/closed */
	bool to_stdout, to_stderr;
};

struct scmd {
	struct addr a1, a2;
	bool negate;
	char cmd;
	/* range state */
	bool in_range;
	uint64_t range_end;
	/* s */
	struct sed_re *re;
	char *repl;
	size_t repl_len;
	bool global, print, eval;
	uint64_t nth;
	int wfile;            /* index or -1 */
	/* a i c: text; b t T: label; r w: file name */
	char *text;
	size_t text_len;
	size_t jump;          /* b t T: target index; {: index of its } */
	int exit_code;
	unsigned char ymap[256];
};

struct sed {
	struct sh_cmd *c;
	bool quiet, ere, separate, inplace, null_data, unbuffered, posix_dummy;
	const char *suffix;
	struct scmd *cmds;
	size_t n, cap;
	struct sed_re **res;
	size_t nres;
	struct wfile *wfiles;
	size_t nw;
	/* parse position for messages */
	int expr_no;
	const char *file_name;
	int script_line;
	/* run */
	struct buf ps, hs, append;
	bool ps_chomped;      /* the line had its '\n' (or the data separator) */
	struct sed_re *last_re;
	bool subst_flag;
	uint64_t lineno;
	bool quit;
	int exit_status;
	/* input */
	char **files;
	int nfiles, fi;
	struct sh_in in;
	int in_fd;
	bool in_open, in_close;
	char *ahead;
	size_t ahead_len, ahead_cap;
	bool ahead_valid, ahead_nl;
	struct buf out;       /* -i: the new content */
	bool missing_nl, append_pending;
	bool to_buf;
	int status;
	char sep;
};

/* ---- output ---- */

static void
emit_raw(struct sed *s, const char *p, size_t n)
{
	if (s->to_buf)
		buf_add(&s->out, p, n);
	else
		sh_out_write(s->c->out_buf, p, n);
}

/* Any output after a last line that lacked its newline gets it first (as
 * GNU's output_missing_newline). */
static void
emit(struct sed *s, const char *p, size_t n)
{
	if (s->missing_nl) {
		emit_raw(s, "\n", 1);
		s->missing_nl = false;
	}
	emit_raw(s, p, n);
}

static void
emit_ps(struct sed *s, const char *p, size_t n, bool nl)
{
	emit(s, p ? p : "", n);
	if (nl)
		emit_raw(s, "\n", 1);
	else
		s->missing_nl = true;
	if (s->unbuffered && !s->to_buf)
		sh_out_flush(s->c->out_buf);
}

/* ---- script parsing ---- */

static int
perr(struct sed *s, size_t pos, const char *msg, char arg)
{
	if (s->file_name)
		sh_out_printf(s->c->err_buf, "%s: file %s line %d: ", sh_cmd_name(s->c),
			      s->file_name, s->script_line);
	else
		sh_out_printf(s->c->err_buf, "%s: -e expression #%d, char %zu: ",
			      sh_cmd_name(s->c), s->expr_no, pos);
	/* msg has at most one %c (arg), or %s / none */
	for (const char *m = msg; *m; m++) {
		if (m[0] == '%' && m[1] == 'c') {
			sh_out_write(s->c->err_buf, &arg, 1);
			m++;
		} else {
			sh_out_write(s->c->err_buf, m, 1);
		}
	}
	sh_out_write(s->c->err_buf, "\n", 1);
	sh_out_flush(s->c->err_buf);
	return -EINVAL;
}

/* GNU sed's character escapes after a backslash (p points after it):
 * \a \f \n \r \t \v \cX \dNNN \oNNN \xHH. Returns the bytes used (0: none). */
static size_t
char_escape(const char *p, size_t n, char *out)
{
	if (n == 0)
		return 0;
	switch (p[0]) {
	case 'a': *out = '\a'; return 1;
	case 'f': *out = '\f'; return 1;
	case 'n': *out = '\n'; return 1;
	case 'r': *out = '\r'; return 1;
	case 't': *out = '\t'; return 1;
	case 'v': *out = '\v'; return 1;
	case 'c':
		if (n < 2)
			return 0;
		*out = (char)((p[1] >= 'a' && p[1] <= 'z' ? p[1] - 32 : p[1]) ^ 0x40);
		return 2;
	case 'd': case 'o': case 'x': {
		int base = p[0] == 'd' ? 10 : p[0] == 'o' ? 8 : 16;
		size_t maxd = p[0] == 'x' ? 2 : 3, k = 1;
		int v = 0;
		while (k < n && k <= maxd) {
			char ch = p[k];
			int d = ch >= '0' && ch <= '9' ? ch - '0'
				: ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
				: ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : 99;
			if (d >= base)
				break;
			v = v * base + d;
			k++;
		}
		if (k == 1)
			return 0;
		*out = (char)v;
		return k;
	}
	default:
		return 0;
	}
}

/* Turn sed's regex escapes into what regcomp knows: \n \t and the
 * delimiter (\%); the rest is left for regcomp. */
static char *
regex_source(const char *p, size_t n, char delim)
{
	char *out = malloc(n + 1), *w = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\\' && i + 1 < n) {
			char nx = p[i + 1];
			char ch;
			size_t used = char_escape(p + i + 1, n - i - 1, &ch);
			if (used) {
				*w++ = ch;
				i += used;
				continue;
			}
			if (nx == delim && delim != '\n' && !strchr(".*[]^$\\+?(){}|", delim)) {
				*w++ = delim;
				i++;
				continue;
			}
			*w++ = p[i++];
			*w++ = p[i];
			continue;
		}
		*w++ = p[i];
	}
	*w = '\0';
	return out;
}

static int
compile_re(struct sed *s, const char *p, size_t n, char delim, int flags, struct sed_re **out,
	   size_t pos)
{
	if (n == 0) {
		*out = NULL; /* the last regex */
		return 0;
	}
	_cleanup_free_ char *src = regex_source(p, n, delim);
	if (!src)
		return -ENOMEM;
	struct sed_re *r = calloc(1, sizeof(*r));
	struct sed_re **nr = realloc(s->res, (s->nres + 1) * sizeof(*nr));
	if (!r || !nr) {
		free(r);
		return -ENOMEM;
	}
	s->res = nr;
	int e = sh_regcomp(&r->re, src, flags | (s->ere ? REG_EXTENDED : 0));
	if (e) {
		char msg[200];
		regerror(e, &r->re, msg, sizeof(msg));
		free(r);
		if (e == REG_EPAREN)
			snprintf(msg, sizeof(msg), "Unmatched ( or \\(");
		else if (e == REG_EBRACE)
			snprintf(msg, sizeof(msg), "Unmatched \\{");
		else if (e == REG_EBRACK)
			snprintf(msg, sizeof(msg), "unterminated address regex");
		return perr(s, pos, msg, 0);
	}
	r->compiled = true;
	r->nsub = (int)r->re.re_nsub;
	if (!(flags & REG_ICASE)) {
		r->lit = sh_regex_required_literal(src, s->ere);
		r->lit_len = r->lit ? strlen(r->lit) : 0;
	}
	s->res[s->nres++] = r;
	*out = r;
	return 0;
}

/* Find the end of a delimited part starting at p[i]; returns its index or -1.
 * A backslash-newline and brackets are part of it. */
static long
find_delim(const char *p, size_t len, size_t i, char delim, bool is_regex)
{
	while (i < len) {
		if (p[i] == '\\' && i + 1 < len) {
			i += 2;
			continue;
		}
		if (is_regex && p[i] == '[') {
			size_t j = i + 1;
			if (j < len && p[j] == '^')
				j++;
			if (j < len && p[j] == ']')
				j++;
			while (j < len && p[j] != ']') {
				if (p[j] == '[' && j + 1 < len && strchr(":.=", p[j + 1])) {
					char cl = p[j + 1];
					size_t k = j + 2;
					while (k + 1 < len && !(p[k] == cl && p[k + 1] == ']'))
						k++;
					j = k + 2;
					continue;
				}
				if (p[j] == '\n')
					break;
				j++;
			}
			if (j < len && p[j] == ']') {
				i = j + 1;
				continue;
			}
		}
		if (p[i] == delim)
			return (long)i;
		if (p[i] == '\n' && delim != '\n')
			return -1;
		i++;
	}
	return -1;
}

static void
skip_ws(const char *p, size_t len, size_t *i)
{
	while (*i < len && (p[*i] == ' ' || p[*i] == '\t'))
		(*i)++;
}

static int
parse_addr(struct sed *s, const char *p, size_t len, size_t *i, struct addr *a)
{
	size_t k = *i;
	if (k < len && p[k] >= '0' && p[k] <= '9') {
		uint64_t v = 0;
		while (k < len && p[k] >= '0' && p[k] <= '9')
			v = v * 10 + (uint64_t)(p[k++] - '0');
		if (k < len && p[k] == '~') {
			k++;
			uint64_t st = 0;
			while (k < len && p[k] >= '0' && p[k] <= '9')
				st = st * 10 + (uint64_t)(p[k++] - '0');
			a->type = A_STEP;
			a->n = v;
			a->step = st;
		} else {
			a->type = v == 0 ? A_ZERO : A_LINE;
			a->n = v;
		}
		*i = k;
		return 1;
	}
	if (k < len && p[k] == '$') {
		a->type = A_LAST;
		*i = k + 1;
		return 1;
	}
	if (k < len && (p[k] == '/' || p[k] == '\\')) {
		char delim = '/';
		if (p[k] == '\\') {
			if (k + 1 >= len)
				return perr(s, k + 1, "unexpected `,'", 0);
			delim = p[++k];
		}
		long e = find_delim(p, len, k + 1, delim, true);
		if (e < 0)
			return perr(s, len, "unterminated address regex", 0);
		int flags = 0;
		size_t f = (size_t)e + 1;
		while (f < len && (p[f] == 'I' || p[f] == 'M')) {
			flags |= p[f] == 'I' ? REG_ICASE : REG_NEWLINE;
			f++;
		}
		a->type = A_RE;
		int r = compile_re(s, p + k + 1, (size_t)e - k - 1, delim, flags, &a->re, f);
		if (r < 0)
			return r;
		*i = f;
		return 1;
	}
	return 0;
}

/* Text of a i c: GNU's one-liner form or "a\" + lines; backslashes removed,
 * a trailing backslash continues the text on the next line. */
static int
parse_text(struct sed *s, const char *p, size_t len, size_t *i, struct scmd *cmd)
{
	size_t k = *i;
	skip_ws(p, len, &k);
	if (k < len && p[k] == '\\') {
		k++;
		skip_ws(p, len, &k);
		if (k < len && p[k] == '\n')
			k++;
	}
	struct buf t = { 0 };
	bool had_text = false;
	while (k < len) {
		had_text = true;
		if (p[k] == '\\') {
			if (k + 1 < len) {
				buf_add(&t, p + k + 1, 1);
				k += 2;
				continue;
			}
			k++;
			continue;
		}
		if (p[k] == '\n') {
			k++;
			break;
		}
		buf_add(&t, p + k, 1);
		k++;
	}
	/* "a\" with nothing after it at the end of the script adds nothing. */
	if (t.len > 0 || k < len || had_text)
		buf_add(&t, "\n", 1);
	else
		buf_add(&t, "", 0);
	cmd->text = t.p;
	cmd->text_len = t.len;
	*i = k;
	return 0;
}

static int
add_wfile(struct sed *s, const char *name)
{
	for (size_t i = 0; i < s->nw; i++)
		if (!strcmp(s->wfiles[i].name, name))
			return (int)i;
	struct wfile *nw = realloc(s->wfiles, (s->nw + 1) * sizeof(*nw));
	if (!nw)
		return -ENOMEM;
	s->wfiles = nw;
	struct wfile *w = &s->wfiles[s->nw];
	*w = (struct wfile){ .name = strdup(name), .fd = -1 };
	if (!w->name)
		return -ENOMEM;
	if (!strcmp(name, "/dev/stdout")) {
		w->to_stdout = true;
	} else if (!strcmp(name, "/dev/stderr")) {
		w->to_stderr = true;
	} else {
		int fd = sh_fs_open(s->c->fs, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (fd < 0) {
			sh_cmd_error(s->c, 4, "couldn't open file %s: %s", name, strerror(-fd));
			free(w->name);
			return -EIO;
		}
		w->fd = fd;
	}
	return (int)s->nw++;
}

/* A file name argument (r w, s///w): the rest of the line. */
static char *
read_filename(const char *p, size_t len, size_t *i)
{
	size_t k = *i;
	skip_ws(p, len, &k);
	size_t st = k;
	while (k < len && p[k] != '\n')
		k++;
	*i = k;
	return strndup(p + st, k - st);
}

static int
parse_s(struct sed *s, const char *p, size_t len, size_t *i, struct scmd *cmd)
{
	size_t k = *i;
	if (k >= len || p[k] == '\n' || p[k] == '\\')
		return perr(s, k + 1, "unterminated `s' command", 0);
	char delim = p[k];
	long e1 = find_delim(p, len, k + 1, delim, true);
	if (e1 < 0)
		return perr(s, len, "unterminated `s' command", 0);
	long e2 = find_delim(p, len, (size_t)e1 + 1, delim, false);
	if (e2 < 0)
		return perr(s, len, "unterminated `s' command", 0);
	/* the replacement: kept raw, \delim unescaped */
	struct buf r = { 0 };
	for (long j = e1 + 1; j < e2; j++) {
		if (p[j] == '\\' && j + 1 < e2 && p[j + 1] == delim && !strchr("&\\n0123456789", delim)) {
			buf_add(&r, &delim, 1);
			j++;
			continue;
		}
		if (p[j] == '\\' && j + 1 < e2 && p[j + 1] == '\n') {
			buf_add(&r, "\n", 1);
			j++;
			continue;
		}
		buf_add(&r, p + j, 1);
		if (p[j] == '\\' && j + 1 < e2) {
			buf_add(&r, p + j + 1, 1);
			j++;
		}
	}
	if (!r.p)
		buf_add(&r, "", 0);
	cmd->repl = r.p;
	cmd->repl_len = r.len;
	size_t f = (size_t)e2 + 1;
	int flags = 0;
	cmd->wfile = -1;
	for (;;) {
		if (f >= len)
			break;
		char ch = p[f];
		if (ch == 'g') {
			cmd->global = true;
		} else if (ch == 'p') {
			cmd->print = true;
		} else if (ch == 'i' || ch == 'I') {
			flags |= REG_ICASE;
		} else if (ch == 'm' || ch == 'M') {
			flags |= REG_NEWLINE;
		} else if (ch == 'e') {
			return perr(s, f + 1, "the `e' flag is not supported", 0);
		} else if (ch >= '0' && ch <= '9') {
			uint64_t v = 0;
			while (f < len && p[f] >= '0' && p[f] <= '9')
				v = v * 10 + (uint64_t)(p[f++] - '0');
			if (v == 0)
				return perr(s, f, "number option to `s' command may not be zero", 0);
			cmd->nth = v;
			continue;
		} else if (ch == 'w') {
			f++;
			_cleanup_free_ char *name = read_filename(p, len, &f);
			if (!name)
				return -ENOMEM;
			if (!*name)
				return perr(s, f, "missing filename in r/R/w/W commands", 0);
			int w = add_wfile(s, name);
			if (w < 0)
				return w;
			cmd->wfile = w;
			break;
		} else if (ch == ' ' || ch == '\t' || ch == '\n' || ch == ';' || ch == '}' ||
			   ch == '#') {
			break;
		} else {
			return perr(s, f + 1, "unknown option to `s'", 0);
		}
		f++;
	}
	int r2 = compile_re(s, p + k + 1, (size_t)e1 - k - 1, delim, flags, &cmd->re, f);
	if (r2 < 0)
		return r2;
	if (cmd->re) {
		/* \N must name a group of the regex */
		for (size_t j = 0; j + 1 < cmd->repl_len; j++) {
			if (cmd->repl[j] == '\\') {
				char d = cmd->repl[j + 1];
				if (d >= '1' && d <= '9' && d - '0' > cmd->re->nsub)
					return perr(s, f, "invalid reference \\%c on `s' command's RHS", d);
				j++;
			}
		}
	}
	*i = f;
	return 0;
}

static int
parse_y(struct sed *s, const char *p, size_t len, size_t *i, struct scmd *cmd)
{
	size_t k = *i;
	if (k >= len)
		return perr(s, k, "unterminated `y' command", 0);
	char delim = p[k];
	struct buf a = { 0 }, b = { 0 };
	struct buf *cur = &a;
	size_t j = k + 1;
	int part = 0;
	for (; j < len; j++) {
		if (p[j] == delim) {
			if (++part == 2)
				break;
			cur = &b;
			continue;
		}
		if (p[j] == '\\' && j + 1 < len) {
			char nx = p[j + 1];
			char v = nx == 'n' ? '\n' : nx == 't' ? '\t' : nx;
			if (nx != delim && nx != '\\' && nx != 'n' && nx != 't') {
				free(a.p);
				free(b.p);
				return perr(s, j + 2, "unknown option to `y'", 0);
			}
			buf_add(cur, &v, 1);
			j++;
			continue;
		}
		buf_add(cur, p + j, 1);
	}
	if (part < 2) {
		free(a.p);
		free(b.p);
		return perr(s, j, "unterminated `y' command", 0);
	}
	if (a.len != b.len) {
		free(a.p);
		free(b.p);
		return perr(s, j + 1, "strings for `y' command are different lengths", 0);
	}
	for (int x = 0; x < 256; x++)
		cmd->ymap[x] = (unsigned char)x;
	for (size_t x = 0; x < a.len; x++)
		cmd->ymap[(unsigned char)a.p[x]] = (unsigned char)b.p[x];
	free(a.p);
	free(b.p);
	*i = j + 1;
	return 0;
}

static struct scmd *
new_cmd(struct sed *s)
{
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 16;
		struct scmd *n = realloc(s->cmds, nc * sizeof(*n));
		if (!n)
			return NULL;
		s->cmds = n;
		s->cap = nc;
	}
	struct scmd *c = &s->cmds[s->n++];
	*c = (struct scmd){ .wfile = -1 };
	return c;
}

/* After a command: spaces, then ';', '\n', '}' or '#' (or the end). */
static int
end_of_cmd(struct sed *s, const char *p, size_t len, size_t *i)
{
	skip_ws(p, len, i);
	if (*i >= len || p[*i] == '\n' || p[*i] == ';') {
		if (*i < len)
			(*i)++;
		return 0;
	}
	if (p[*i] == '}' || p[*i] == '#')
		return 0;
	return perr(s, *i + 1, "extra characters after command", 0);
}

static int
parse_script(struct sed *s, const char *p, size_t len, size_t *stack, size_t *depth)
{
	size_t i = 0;
	s->script_line = 1;
	while (i < len) {
		while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == ';'))
			i++;
		if (i >= len)
			break;
		if (p[i] == '#') {
			while (i < len && p[i] != '\n')
				i++;
			continue;
		}
		struct scmd *cmd = new_cmd(s);
		if (!cmd)
			return -ENOMEM;
		int r = parse_addr(s, p, len, &i, &cmd->a1);
		if (r < 0)
			return r;
		if (r > 0 && i < len && p[i] == ',') {
			i++;
			skip_ws(p, len, &i);
			if (i < len && (p[i] == '+' || p[i] == '~')) {
				char kind = p[i++];
				uint64_t v = 0;
				while (i < len && p[i] >= '0' && p[i] <= '9')
					v = v * 10 + (uint64_t)(p[i++] - '0');
				cmd->a2.type = kind == '+' ? A_PLUS : A_TILDE;
				cmd->a2.n = v;
			} else {
				r = parse_addr(s, p, len, &i, &cmd->a2);
				if (r < 0)
					return r;
				if (r == 0)
					return perr(s, i, "unexpected `,'", 0);
				if (cmd->a2.type == A_ZERO)
					return perr(s, i, "invalid usage of line address 0", 0);
			}
		}
		if (cmd->a1.type == A_ZERO && !(cmd->a2.type == A_RE))
			return perr(s, i, "invalid usage of line address 0", 0);
		skip_ws(p, len, &i);
		while (i < len && p[i] == '!') {
			cmd->negate = true;
			i++;
			skip_ws(p, len, &i);
		}
		if (i >= len)
			return perr(s, i, "missing command", 0);
		char ch = p[i++];
		cmd->cmd = ch;
		switch (ch) {
		case '{':
			if (*depth >= 256)
				return perr(s, i, "too many nested blocks", 0);
			stack[(*depth)++] = s->n - 1;
			break;
		case '}':
			if (*depth == 0)
				return perr(s, i, "unexpected `}'", 0);
			if (cmd->a1.type != A_NONE)
				return perr(s, i, "} doesn't want any addresses", 0);
			s->cmds[stack[--(*depth)]].jump = s->n - 1;
			r = end_of_cmd(s, p, len, &i);
			if (r < 0)
				return r;
			break;
		case '=': case 'd': case 'D': case 'g': case 'G': case 'h': case 'H':
		case 'n': case 'N': case 'p': case 'P': case 'x': case 'l': case 'z':
			r = end_of_cmd(s, p, len, &i);
			if (r < 0)
				return r;
			break;
		case 'q': case 'Q': {
			if (cmd->a2.type != A_NONE)
				return perr(s, i, "command only uses one address", 0);
			skip_ws(p, len, &i);
			int v = 0;
			while (i < len && p[i] >= '0' && p[i] <= '9')
				v = v * 10 + (p[i++] - '0');
			cmd->exit_code = v;
			r = end_of_cmd(s, p, len, &i);
			if (r < 0)
				return r;
			break;
		}
		case 'a': case 'i': case 'c':
			if (i >= len) {
				return perr(s, i, "expected \\ after `a', `c' or `i'", 0);
			}
			r = parse_text(s, p, len, &i, cmd);
			if (r < 0)
				return r;
			break;
		case ':': {
			if (cmd->a1.type != A_NONE)
				return perr(s, i, ": doesn't want any addresses", 0);
			skip_ws(p, len, &i);
			size_t st = i;
			while (i < len && p[i] != '\n' && p[i] != ';')
				i++;
			if (i == st)
				return perr(s, i, "\":\" lacks a label", 0);
			cmd->text = strndup(p + st, i - st);
			break;
		}
		case 'b': case 't': case 'T': {
			skip_ws(p, len, &i);
			size_t st = i;
			while (i < len && p[i] != '\n' && p[i] != ';' && p[i] != '}')
				i++;
			size_t e = i;
			while (e > st && (p[e - 1] == ' ' || p[e - 1] == '\t'))
				e--;
			cmd->text = e > st ? strndup(p + st, e - st) : NULL;
			r = end_of_cmd(s, p, len, &i);
			if (r < 0)
				return r;
			break;
		}
		case 'r': case 'w': {
			cmd->text = read_filename(p, len, &i);
			if (!cmd->text)
				return -ENOMEM;
			if (!*cmd->text)
				return perr(s, i, "missing filename in r/R/w/W commands", 0);
			if (ch == 'w') {
				int w = add_wfile(s, cmd->text);
				if (w < 0)
					return w;
				cmd->wfile = w;
			}
			break;
		}
		case 's':
			r = parse_s(s, p, len, &i, cmd);
			if (r < 0)
				return r;
			r = end_of_cmd(s, p, len, &i);
			if (r < 0)
				return r;
			break;
		case 'y':
			r = parse_y(s, p, len, &i, cmd);
			if (r < 0)
				return r;
			r = end_of_cmd(s, p, len, &i);
			if (r < 0)
				return r;
			break;
		default:
			return perr(s, i, "unknown command: `%c'", ch);
		}
	}
	return 0;
}

static int
resolve_labels(struct sed *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct scmd *c = &s->cmds[i];
		if (c->cmd != 'b' && c->cmd != 't' && c->cmd != 'T')
			continue;
		if (!c->text) {
			c->jump = s->n;
			continue;
		}
		size_t j;
		for (j = 0; j < s->n; j++)
			if (s->cmds[j].cmd == ':' && !strcmp(s->cmds[j].text, c->text))
				break;
		if (j == s->n) {
			sh_cmd_error(s->c, 4, "can't find label for jump to `%s'", c->text);
			s->status = 4;
			return -EINVAL;
		}
		c->jump = j;
	}
	return 0;
}

/* ---- input ---- */

static bool
open_next_file(struct sed *s)
{
	while (s->fi < s->nfiles) {
		const char *name = s->files[s->fi++];
		int fd;
		int r = sh_cmd_open_input(s->c, name, &fd);
		if (r < 0) {
			sh_cmd_error(s->c, 2, "can't read %s: %s", name, strerror(-r));
			s->status = 2;
			continue;
		}
		s->in_fd = fd;
		s->in_close = r;
		s->in_open = true;
		sh_in_init(&s->in, fd, s->c->interrupted);
		return true;
	}
	return false;
}

static void
close_file(struct sed *s)
{
	if (!s->in_open)
		return;
	sh_in_release(&s->in);
	if (s->in_close)
		close(s->in_fd);
	s->in_open = false;
}

/* Read one raw line (not yet the current one) into ahead. With -s/-i, the
 * end of each file ends the stream (the caller moves on). */
static bool
fetch_ahead(struct sed *s)
{
	for (;;) {
		if (!s->in_open) {
			if (s->separate)
				return false;
			if (!open_next_file(s))
				return false;
		}
		char *line;
		ssize_t n;
		n = sh_in_getline(&s->in, &line);
		if (n < 0) {
			/* GNU: a read error ends sed (status 4). */
			if (n != -EINTR) {
				sh_cmd_error(s->c, 4, "read error on %s: %s", s->files[s->fi - 1],
					     strerror((int)-n));
				s->status = 4;
			}
			close_file(s);
			s->quit = true;
			s->exit_status = 0;
			return false;
		}
		if (n == 0) {
			close_file(s);
			if (s->separate)
				return false;
			continue;
		}
		bool nl = line[n - 1] == s->sep;
		if (s->ahead_cap < (size_t)n + 1) {
			/* one buffer for every line read ahead */
			size_t nc = s->ahead_cap ? s->ahead_cap : 256;
			while (nc < (size_t)n + 1)
				nc *= 2;
			char *na = realloc(s->ahead, nc);
			if (!na)
				return false;
			s->ahead = na;
			s->ahead_cap = nc;
		}
		memcpy(s->ahead, line, (size_t)n - nl);
		s->ahead_len = (size_t)n - nl;
		s->ahead_nl = nl;
		s->ahead_valid = true;
		return true;
	}
}

/* Move the next line into the pattern space (replace or append after '\n').
 * false at the end of input. */
static bool
next_line(struct sed *s, bool append)
{
	if (!s->ahead_valid && !fetch_ahead(s))
		return false;
	if (append) {
		buf_add(&s->ps, "\n", 1);
		buf_add(&s->ps, s->ahead, s->ahead_len);
	} else {
		s->ps.len = 0;
		buf_add(&s->ps, s->ahead, s->ahead_len);
	}
	s->ps_chomped = s->ahead_nl;
	s->ahead_valid = false;
	s->lineno++;
	return true;
}

static bool
is_last_line(struct sed *s)
{
	if (s->ahead_valid)
		return false;
	return !fetch_ahead(s);
}

/* ---- execution ---- */

static struct sed_re *
use_re(struct sed *s, struct sed_re *r)
{
	if (r)
		s->last_re = r;
	return s->last_re;
}

static bool
sed_re_match(struct sed *s, struct sed_re *r, const char *p, size_t n, size_t from, regmatch_t *m,
	 size_t nm, bool notbol)
{
	r = use_re(s, r);
	if (!r)
		return false;
	if (r->lit && !memmem(p + from, n - from, r->lit, r->lit_len))
		return false;
	m[0].rm_so = (regoff_t)from;
	m[0].rm_eo = (regoff_t)n;
	return regexec(&r->re, p, nm, m, REG_STARTEND | (notbol ? REG_NOTBOL : 0)) == 0;
}

static bool
addr_match(struct sed *s, struct addr *a)
{
	regmatch_t m[1];
	switch (a->type) {
	case A_LINE: return s->lineno == a->n;
	case A_LAST: return is_last_line(s);
	case A_RE: return sed_re_match(s, a->re, s->ps.p ? s->ps.p : "", s->ps.len, 0, m, 1, false);
	case A_STEP:
		if (a->step == 0)
			return s->lineno == a->n;
		return s->lineno >= a->n && (s->lineno - a->n) % a->step == 0;
	case A_ZERO: return false;
	case A_NONE: return true;
	case A_PLUS: case A_TILDE: return false;
	default: return false;
	}
}

static bool
selected(struct sed *s, struct scmd *c)
{
	bool r;
	if (c->a1.type == A_NONE) {
		r = true;
	} else if (c->a2.type == A_NONE) {
		r = addr_match(s, &c->a1);
	} else if (c->in_range) {
		r = true;
		switch (c->a2.type) {
		case A_LINE:
		case A_PLUS:
		case A_TILDE:
			if (s->lineno >= c->range_end)
				c->in_range = false;
			if (s->lineno > c->range_end) /* already past: this line is out */
				r = false;
			break;
		case A_LAST:
			if (is_last_line(s))
				c->in_range = false;
			break;
		default:
			if (addr_match(s, &c->a2))
				c->in_range = false;
			break;
		}
	} else {
		bool start = c->a1.type == A_ZERO ? false : addr_match(s, &c->a1);
		if (c->a1.type == A_ZERO && s->lineno == 1 && !c->range_end) {
			/* 0,/re/: the regex may end the range on line 1 */
			c->range_end = 1;
			if (addr_match(s, &c->a2))
				return !c->negate;
			c->in_range = true;
			return !c->negate;
		}
		r = start;
		if (start) {
			c->in_range = true;
			switch (c->a2.type) {
			case A_LINE:
				c->range_end = c->a2.n;
				if (c->a2.n <= s->lineno)
					c->in_range = false;
				break;
			case A_PLUS:
				c->range_end = s->lineno + c->a2.n;
				if (c->a2.n == 0)
					c->in_range = false;
				break;
			case A_TILDE:
				if (c->a2.n == 0 || s->lineno % c->a2.n == 0) {
					c->in_range = false;
				} else {
					c->range_end = (s->lineno / c->a2.n + 1) * c->a2.n;
				}
				break;
			case A_LAST:
				if (is_last_line(s))
					c->in_range = false;
				break;
			default:
				break;
			}
		}
	}
	return r != c->negate;
}

static void
wfile_write(struct sed *s, int idx, const char *p, size_t n)
{
	struct wfile *w = &s->wfiles[idx];
	if (w->to_stdout) {
		sh_out_write(s->c->out_buf, p, n);
		sh_out_write(s->c->out_buf, "\n", 1);
		return;
	}
	if (w->to_stderr) {
		sh_out_write(s->c->err_buf, p, n);
		sh_out_write(s->c->err_buf, "\n", 1);
		sh_out_flush(s->c->err_buf);
		return;
	}
	if (w->fd < 0)
		return;
	struct buf t = { 0 };
	buf_add(&t, p, n);
	buf_add(&t, "\n", 1);
	size_t off = 0;
	while (off < t.len) {
		ssize_t r = write(w->fd, t.p + off, t.len - off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		off += (size_t)r;
	}
	free(t.p);
}

/* Append a replacement for match m to out (& \N \n \L \U \l \u \E). */
static void
add_replacement(struct buf *out, const char *repl, size_t rl, const char *src, regmatch_t *m)
{
	int mode = 0;  /* 0 none, 'L', 'U' */
	int once = 0;  /* 'l' 'u' for the next char */
	for (size_t i = 0; i < rl; i++) {
		const char *piece = NULL;
		size_t plen = 0;
		char ch = repl[i];
		char tmp;
		if (ch == '\\' && i + 1 < rl) {
			char nx = repl[++i];
			if (nx >= '0' && nx <= '9') {
				regmatch_t *g = &m[nx - '0'];
				if (g->rm_so >= 0) {
					piece = src + g->rm_so;
					plen = (size_t)(g->rm_eo - g->rm_so);
				}
			} else if (nx == '&') {
				tmp = '&';
				piece = &tmp, plen = 1;
			} else if (char_escape(repl + i, rl - i, &tmp)) {
				i += char_escape(repl + i, rl - i, &tmp) - 1;
				piece = &tmp, plen = 1;
			} else if (nx == 'L' || nx == 'U') {
				mode = nx;
				once = 0;
				continue;
			} else if (nx == 'E') {
				mode = 0;
				once = 0;
				continue;
			} else if (nx == 'l' || nx == 'u') {
				once = nx;
				continue;
			} else {
				tmp = nx;
				piece = &tmp, plen = 1;
			}
		} else if (ch == '&') {
			piece = src + m[0].rm_so;
			plen = (size_t)(m[0].rm_eo - m[0].rm_so);
		} else {
			tmp = ch;
			piece = &tmp, plen = 1;
		}
		for (size_t k = 0; k < plen; k++) {
			char x = piece[k];
			if (mode == 'L' && x >= 'A' && x <= 'Z')
				x += 32;
			if (mode == 'U' && x >= 'a' && x <= 'z')
				x -= 32;
			if (once == 'l' && x >= 'A' && x <= 'Z')
				x += 32;
			if (once == 'u' && x >= 'a' && x <= 'z')
				x -= 32;
			once = 0;
			buf_add(out, &x, 1);
		}
	}
}

static bool
do_subst(struct sed *s, struct scmd *c)
{
	struct sed_re *r = use_re(s, c->re);
	if (!r) {
		sh_cmd_error(s->c, 4, "no previous regular expression");
		s->quit = true;
		s->exit_status = 4;
		return false;
	}
	regmatch_t m[10];
	size_t pos = 0, count = 0;
	bool did = false;
	struct buf out = { 0 };
	const char *src = s->ps.p ? s->ps.p : "";
	size_t len = s->ps.len;
	size_t copied = 0;
	if (r->lit && !memmem(src, len, r->lit, r->lit_len))
		return false;
	while (pos <= len) {
		m[0].rm_so = (regoff_t)pos;
		m[0].rm_eo = (regoff_t)len;
		if (regexec(&r->re, src, 10, m, REG_STARTEND | (pos > 0 ? REG_NOTBOL : 0)) != 0)
			break;
		size_t so = (size_t)m[0].rm_so, eo = (size_t)m[0].rm_eo;
		count++;
		bool take = c->nth ? (c->global ? count >= c->nth : count == c->nth) : true;
		if (take) {
			buf_add(&out, src + copied, so - copied);
			add_replacement(&out, c->repl, c->repl_len, src, m);
			copied = eo;
			did = true;
			if (!c->global)
				break;
		}
		if (eo == so) {
			if (so >= len)
				break;
			pos = so + 1;
		} else {
			pos = eo;
		}
	}
	if (!did) {
		free(out.p);
		return false;
	}
	buf_add(&out, src + copied, len - copied);
	free(s->ps.p);
	s->ps = out;
	return true;
}

static void
flush_append(struct sed *s)
{
	if (s->append.len || s->append_pending) {
		emit(s, s->append.p ? s->append.p : "", s->append.len);
		s->append.len = 0;
	}
	s->append_pending = false;
}

static void
queue_file(struct sed *s, const char *name)
{
	int fd = sh_fs_open(s->c->fs, name, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return; /* GNU: a missing r file is silently ignored */
	char *d;
	size_t n;
	if (sh_read_fd_all(fd, s->c->interrupted, &d, &n) == 0) {
		buf_add(&s->append, d, n);
		free(d);
	}
	close(fd);
}

static void
list_ps(struct sed *s)
{
	struct buf o = { 0 };
	size_t col = 0;
	for (size_t i = 0; i < s->ps.len; i++) {
		unsigned char ch = (unsigned char)s->ps.p[i];
		char t[8];
		size_t tl;
		switch (ch) {
		case '\\': tl = 2, memcpy(t, "\\\\", 2); break;
		case '\a': tl = 2, memcpy(t, "\\a", 2); break;
		case '\b': tl = 2, memcpy(t, "\\b", 2); break;
		case '\f': tl = 2, memcpy(t, "\\f", 2); break;
		case '\n': tl = 2, memcpy(t, "\\n", 2); break;
		case '\r': tl = 2, memcpy(t, "\\r", 2); break;
		case '\t': tl = 2, memcpy(t, "\\t", 2); break;
		case '\v': tl = 2, memcpy(t, "\\v", 2); break;
		default:
			if (ch < 32 || ch >= 127)
				tl = (size_t)snprintf(t, sizeof(t), "\\%03o", ch);
			else
				t[0] = (char)ch, tl = 1;
		}
		if (col + tl > 69) {
			buf_add(&o, "\\\n", 2);
			col = 0;
		}
		buf_add(&o, t, tl);
		col += tl;
	}
	buf_add(&o, "$\n", 2);
	emit(s, o.p, o.len);
	free(o.p);
}

/* Run the script over the current stream; returns when input ends or q. */
static void
run(struct sed *s)
{
	bool restart = false;
	while (!s->quit && !sh_cmd_stopped(s->c)) {
		if (!restart) {
			if (!next_line(s, false))
				break;
			s->subst_flag = false;
		}
		restart = false;
		bool autoprint = !s->quiet;
		for (size_t pc = 0; pc < s->n && !s->quit;) {
			struct scmd *c = &s->cmds[pc];
			if (c->cmd == '}' || c->cmd == ':') {
				pc++;
				continue;
			}
			if (!selected(s, c)) {
				pc = c->cmd == '{' ? c->jump + 1 : pc + 1;
				continue;
			}
			switch (c->cmd) {
			case '{': break;
			case '=': {
				char t[32];
				int k = snprintf(t, sizeof(t), "%" PRIu64 "\n", s->lineno);
				emit(s, t, (size_t)k);
				break;
			}
			case 'a':
				buf_add(&s->append, c->text, c->text_len);
				s->append_pending = true;
				break;
			case 'i': emit(s, c->text, c->text_len); break;
			case 'c':
				/* In a range, the text comes once, at its end. */
				if (c->a2.type == A_NONE || !c->in_range || c->negate)
					emit(s, c->text, c->text_len);
				s->ps.len = 0;
				autoprint = false;
				goto end_cycle;
			case 'd':
				autoprint = false;
				goto end_cycle;
			case 'D': {
				char *nl = s->ps.len ? memchr(s->ps.p, '\n', s->ps.len) : NULL;
				if (!nl) {
					autoprint = false;
					goto end_cycle;
				}
				size_t cut = (size_t)(nl - s->ps.p) + 1;
				memmove(s->ps.p, s->ps.p + cut, s->ps.len - cut);
				s->ps.len -= cut;
				restart = true;
				autoprint = false;
				goto end_cycle;
			}
			case 'g':
				s->ps.len = 0;
				buf_add(&s->ps, s->hs.p, s->hs.len);
				break;
			case 'G':
				buf_add(&s->ps, "\n", 1);
				buf_add(&s->ps, s->hs.p, s->hs.len);
				break;
			case 'h':
				s->hs.len = 0;
				buf_add(&s->hs, s->ps.p, s->ps.len);
				break;
			case 'H':
				buf_add(&s->hs, "\n", 1);
				buf_add(&s->hs, s->ps.p, s->ps.len);
				break;
			case 'x': {
				struct buf t = s->ps;
				s->ps = s->hs;
				s->hs = t;
				if (!s->ps.p)
					buf_add(&s->ps, "", 0);
				break;
			}
			case 'l': list_ps(s); break;
			case 'n':
				if (is_last_line(s)) {
					/* GNU: no next line ends the script (autoprint stays) */
					s->quit = true;
					goto end_cycle;
				}
				if (!s->quiet)
					emit_ps(s, s->ps.p, s->ps.len, s->ps_chomped);
				flush_append(s);
				next_line(s, false);
				break;
			case 'N':
				if (is_last_line(s)) {
					s->quit = true;
					goto end_cycle;
				}
				flush_append(s);
				next_line(s, true);
				break;
			case 'p': emit_ps(s, s->ps.p, s->ps.len, s->ps_chomped); break;
			case 'P': {
				char *nl = s->ps.len ? memchr(s->ps.p, '\n', s->ps.len) : NULL;
				emit_ps(s, s->ps.p, nl ? (size_t)(nl - s->ps.p) : s->ps.len,
					nl ? true : s->ps_chomped);
				break;
			}
			case 'q':
				s->exit_status = c->exit_code;
				s->quit = true;
				goto end_cycle;
			case 'Q':
				s->exit_status = c->exit_code;
				s->quit = true;
				autoprint = false;
				s->append.len = 0;
				goto end_cycle;
			case 'r': queue_file(s, c->text); break;
			case 'w': wfile_write(s, c->wfile, s->ps.p, s->ps.len); break;
			case 's':
				if (do_subst(s, c)) {
					s->subst_flag = true;
					if (c->print)
						emit_ps(s, s->ps.p, s->ps.len, s->ps_chomped);
					if (c->wfile >= 0)
						wfile_write(s, c->wfile, s->ps.p, s->ps.len);
				}
				break;
			case 'y':
				for (size_t k = 0; k < s->ps.len; k++)
					s->ps.p[k] = (char)c->ymap[(unsigned char)s->ps.p[k]];
				break;
			case 'z': s->ps.len = 0; break;
			case 'b':
				pc = c->jump;
				continue;
			case 't':
			case 'T': {
				bool jump = c->cmd == 't' ? s->subst_flag : !s->subst_flag;
				s->subst_flag = false;
				if (jump) {
					pc = c->jump;
					continue;
				}
				break;
			}
			default: break;
			}
			pc++;
		}
	end_cycle:
		if (autoprint)
			emit_ps(s, s->ps.p, s->ps.len, s->ps_chomped);
		flush_append(s);
	}
	flush_append(s);
}

/* ---- the command ---- */

static void
sed_free(struct sed *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->cmds[i].repl);
		free(s->cmds[i].text);
	}
	free(s->cmds);
	for (size_t i = 0; i < s->nres; i++) {
		regfree(&s->res[i]->re);
		free(s->res[i]->lit);
		free(s->res[i]);
	}
	free(s->res);
	for (size_t i = 0; i < s->nw; i++) {
		if (s->wfiles[i].fd >= 0)
			close(s->wfiles[i].fd);
		free(s->wfiles[i].name);
	}
	free(s->wfiles);
	free(s->ps.p);
	free(s->hs.p);
	free(s->append.p);
	free(s->out.p);
	free(s->ahead);
	close_file(s);
}

static int
write_whole(struct sed *s, const char *name, const char *p, size_t n)
{
	int fd = sh_fs_open(s->c->fs, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		return fd;
	size_t off = 0;
	while (off < n) {
		ssize_t w = write(fd, p + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			int e = -errno;
			close(fd);
			return e;
		}
		off += (size_t)w;
	}
	return close(fd) < 0 ? -errno : 0;
}

/* sed -i on one file: read it all (read_content), run, write it back
 * (write_content on the file itself). */
static void
edit_in_place(struct sed *s, const char *name)
{
	if (!strcmp(name, "-")) {
		sh_cmd_error(s->c, 4, "couldn't edit %s: not a regular file", name);
		s->status = 4;
		return;
	}
	int fd = sh_fs_open(s->c->fs, name, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0) {
		sh_cmd_error(s->c, 2, "can't read %s: %s", name, strerror(-fd));
		s->status = 2;
		return;
	}
	struct stat st;
	if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
		close(fd);
		sh_cmd_error(s->c, 4, "couldn't edit %s: not a regular file", name);
		s->status = 4;
		return;
	}
	char *data;
	size_t len;
	int r = sh_read_fd_all(fd, s->c->interrupted, &data, &len);
	close(fd);
	if (r < 0) {
		sh_cmd_error(s->c, 4, "read error on %s: %s", name, strerror(-r));
		s->status = 4;
		return;
	}
	/* The backup (FILE+SUFFIX, or the suffix's '*' replaced by the name) is
	 * written before the script runs, from the content read. */
	if (s->suffix && *s->suffix) {
		_cleanup_free_ char *bak = NULL;
		const char *star = strchr(s->suffix, '*');
		if (star) {
			const char *base = strrchr(name, '/');
			base = base ? base + 1 : name;
			if (asprintf(&bak, "%.*s%.*s%s%s", (int)(base - name), name,
				     (int)(star - s->suffix), s->suffix, base, star + 1) < 0)
				bak = NULL;
		} else if (asprintf(&bak, "%s%s", name, s->suffix) < 0) {
			bak = NULL;
		}
		r = bak ? write_whole(s, bak, data, len) : -ENOMEM;
		if (r < 0) {
			sh_cmd_error(s->c, 4, "couldn't open file %s: %s", bak ? bak : name,
				     strerror(-r));
			s->status = 4;
			free(data);
			return;
		}
	}
	/* The stream is the content in memory. */
	sh_in_init(&s->in, -1, s->c->interrupted);
	s->in.buf = data;
	s->in.cap = len + 1;
	s->in.end = len;
	s->in.eof = true;
	s->in_open = true;
	s->in_close = false;
	s->ahead_valid = false;
	s->lineno = 0;
	s->out.len = 0;
	s->missing_nl = false;
	s->to_buf = true;
	run(s);
	s->to_buf = false;
	close_file(s);
	if (sh_cmd_stopped(s->c))
		return;
	r = write_whole(s, name, s->out.p ? s->out.p : "", s->out.len);
	if (r < 0) {
		sh_cmd_error(s->c, 4, "couldn't edit %s: %s", name, strerror(-r));
		s->status = 4;
	}
}

int
sh_cmd_sed(struct sh_cmd *c, int argc, char **argv)
{
	static const struct sh_longopt lo[] = {
		{ "quiet", SH_NO_ARG, 'n' }, { "silent", SH_NO_ARG, 'n' },
		{ "expression", SH_REQ_ARG, 'e' }, { "file", SH_REQ_ARG, 'f' },
		{ "in-place", SH_OPT_ARG, 'i' }, { "regexp-extended", SH_NO_ARG, 'E' },
		{ "separate", SH_NO_ARG, 's' }, { "unbuffered", SH_NO_ARG, 'u' },
		{ "null-data", SH_NO_ARG, 'z' }, { "posix", SH_NO_ARG, 'P' },
		{ "debug", SH_NO_ARG, 'D' }, { "sandbox", SH_NO_ARG, 'S' },
		{ "follow-symlinks", SH_NO_ARG, 'F' }, { "help", SH_NO_ARG, 'H' },
		{ "version", SH_NO_ARG, 'V' }, { 0 },
	};
	struct sed s = { .c = c, .sep = '\n' };
	struct buf script = { 0 };
	struct sh_opt g;
	int status = 0;
	bool have_script = false;
	/* Each -e is its own expression for messages; parse them in order. */
	struct { char *text; size_t len; bool file; const char *name; } parts[64];
	int nparts = 0;
	sh_opt_init(&g, c, argc, argv, "ne:f:i::ErsuzlV", lo);
	int o;
	while ((o = sh_opt_next(&g)) != -1) {
		switch (o) {
		case 'n': s.quiet = true; break;
		case 'e':
		case 'f': {
			if (nparts == 64) {
				sh_cmd_error(c, 1, "too many script parts");
				goto fail;
			}
			if (o == 'e') {
				parts[nparts].text = strdup(g.arg);
				parts[nparts].len = strlen(g.arg);
				parts[nparts].file = false;
			} else {
				int fd;
				int r = sh_cmd_open_input(c, g.arg, &fd);
				if (r < 0) {
					sh_cmd_error(c, 1, "couldn't open file %s: %s", g.arg,
						     strerror(-r));
					status = 4;
					goto fail;
				}
				char *d;
				size_t len;
				int e = sh_read_fd_all(fd, c->interrupted, &d, &len);
				if (r)
					close(fd);
				if (e < 0) {
					sh_cmd_error(c, 1, "couldn't read %s: %s", g.arg, strerror(-e));
					goto fail;
				}
				if (len && d[len - 1] == '\n')
					d[--len] = '\0';
				parts[nparts].text = d;
				parts[nparts].len = len;
				parts[nparts].file = true;
				parts[nparts].name = g.arg;
			}
			if (!parts[nparts].text)
				goto fail;
			nparts++;
			have_script = true;
			break;
		}
		case 'i':
			s.inplace = s.separate = true;
			s.suffix = g.arg;
			break;
		case 'E': case 'r': s.ere = true; break;
		case 's': s.separate = true; break;
		case 'u': s.unbuffered = true; break;
		case 'z':
			sh_cmd_error(c, 1, "-z is not supported");
			goto fail;
		case 'l': case 'P': case 'D': case 'S': case 'F': break;
		case 'V':
			sh_out_printf(c->out_buf, "sed (box-shell)\n");
			goto done;
		case 'H':
			sh_out_printf(c->out_buf,
				      "Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...\n"
				      "box-shell's own sed; supported options: -n -e SCRIPT -f FILE "
				      "-i[SUFFIX] -E -r -s -u --posix --debug; commands: s (flags g p N "
				      "i I m M w) p d D n N P q Q a i c y = l h H g G x b t T : r w { } !; "
				      "-z and s///e are not supported.\n");
			goto done;
		default:
			sh_cmd_usage_error(c, 1, "[OPTION]... {script-only-if-no-other-script} [input-file]...");
			goto fail;
		}
	}
	int first_file = 0;
	if (!have_script) {
		if (g.n_operands == 0) {
			sh_out_printf(c->err_buf,
				      "Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...\n\n");
			sh_out_flush(c->err_buf);
			status = 1;
			goto out;
		}
		parts[0].text = strdup(g.operands[0]);
		parts[0].len = strlen(g.operands[0]);
		parts[0].file = false;
		if (!parts[0].text)
			goto fail;
		nparts = 1;
		first_file = 1;
	}
	/* GNU joins -e pieces with newlines ("a\" -e "text" works); messages
	 * count each -e. Parse each part, keeping blocks open across them. */
	{
		size_t stack[256], depth = 0;
		if (nparts > 0 && parts[0].len >= 2 && parts[0].text[0] == '#' &&
		    parts[0].text[1] == 'n' && (parts[0].len == 2 || parts[0].text[2] == '\n'))
			s.quiet = true;
		for (int i = 0; i < nparts; i++) {
			/* a/i/c ending with a backslash continue into the next part */
			if (i + 1 < nparts && parts[i].len && parts[i].text[parts[i].len - 1] == '\\') {
				char *j = NULL;
				if (asprintf(&j, "%s\n%s", parts[i].text, parts[i + 1].text) < 0)
					goto fail;
				free(parts[i + 1].text);
				parts[i + 1].text = j;
				parts[i + 1].len = strlen(j);
				free(parts[i].text);
				parts[i].text = NULL;
				parts[i].len = 0;
				s.expr_no++;
				continue;
			}
			s.expr_no++;
			s.file_name = parts[i].file ? parts[i].name : NULL;
			if (parse_script(&s, parts[i].text, parts[i].len, stack, &depth) < 0) {
				status = 1;
				goto out;
			}
		}
		if (depth > 0) {
			s.file_name = NULL;
			perr(&s, 0, "unmatched `{'", 0);
			status = 1;
			goto out;
		}
		if (resolve_labels(&s) < 0) {
			status = 4;
			goto out;
		}
	}
	char *dash[] = { "-" };
	s.files = g.n_operands > first_file ? g.operands + first_file : dash;
	s.nfiles = g.n_operands > first_file ? g.n_operands - first_file : 1;
	if (s.inplace) {
		if (g.n_operands <= first_file) {
			sh_cmd_error(c, 1, "no input files");
			status = 1; /* GNU: 1? 4 */
			goto out;
		}
		for (int i = 0; i < s.nfiles && !s.quit && !sh_cmd_stopped(c); i++)
			edit_in_place(&s, s.files[i]);
	} else if (s.separate) {
		while (!s.quit && !sh_cmd_stopped(c) && s.fi < s.nfiles) {
			if (!open_next_file(&s))
				break;
			s.lineno = 0;
			s.ahead_valid = false;
			run(&s);
			close_file(&s);
		}
	} else {
		run(&s);
	}
	status = s.status;
	if (s.quit && s.exit_status)
		status = s.exit_status;
	goto out;
done:
	status = 0;
	goto out;
fail:
	status = status ? status : 1;
out:
	for (int i = 0; i < nparts; i++)
		free(parts[i].text);
	free(script.p);
	sed_free(&s);
	sh_opt_done(&g);
	return sh_cmd_finish(c, status);
}
