/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_grep.c — box-shell's own grep: BRE/ERE through
 * POSIX regcomp (glibc's, with its GNU extensions \| \+ \? \w \b \< \>),
 * fixed strings (-F), recursion (-r/-R) deciding each directory's entries
 * in batches (sh_fs_decide_entries_typed, read_content) before opening them, and
 * GNU grep 3.8's output, messages and statuses (0 selected, 1 none, 2
 * trouble). -P is refused ("not supported"), as the issue says.
 *
 * Speed: without context or -v, a buffer of whole lines is searched at once
 * — memmem for fixed strings and for the longest literal a regex must
 * contain (the prefilter), regexec(REG_STARTEND) over the buffer otherwise —
 * so only candidate lines are looked at one by one.
 * Case folding (-i) of fixed strings is ASCII only; a regex's -i is glibc's.
 * Trusts: nothing in the patterns, the files or their names.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
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
#include "fdutil.h"

enum grep_mode { MODE_BRE, MODE_ERE, MODE_FIXED };
enum binary_mode { BIN_BINARY, BIN_TEXT, BIN_WITHOUT_MATCH };

struct strv {
	char **v;
	size_t n, cap;
};

static int
strv_push(struct strv *s, char *str)
{
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 8;
		char **nv = realloc(s->v, nc * sizeof(char *));
		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = nc;
	}
	s->v[s->n++] = str;
	return 0;
}

static void
strv_free(struct strv *s, bool owned)
{
	if (owned)
		for (size_t i = 0; i < s->n; i++)
			free(s->v[i]);
	free(s->v);
	*s = (struct strv){ 0 };
}

/* A line kept for -B context. */
struct ctx_line {
	char *text;
	size_t len;
	uint64_t lineno, offset;
};

struct grep {
	struct sh_cmd *c;
	enum grep_mode mode;
	enum binary_mode binary;
	bool icase, invert, word, whole_line, count, list, list_non, only, quiet, silent;
	bool number, byte_offset, null_name, line_buffered, context_given;
	int with_name;          /* -1 default, 0 -h, 1 -H */
	long long max_count;    /* -1: unlimited */
	long before, after;
	const char *label;
	const char *group_sep;
	struct strv include, exclude, exclude_dir;
	struct strv pats;       /* owned */
	/* compiled */
	regex_t *res;
	size_t nres;
	char **fixed;           /* -F patterns (lowercased with -i) */
	size_t *fixed_len;
	const char *prefilter;  /* a literal every match contains, or NULL */
	size_t prefilter_len;
	/* with a prefilter: every literal run a match contains, in order (required_runs) */
	char *runs;
	size_t *run_off, *run_len, n_runs;
	bool utf8;
	/* per run */
	char *buf, *lower;
	size_t cap, lower_cap;
	bool short_read_eof; /* the file being read: a short read is its end (grep_file_run) */
	char *shown;         /* a walk's file as its lines name it (shown_name), reused */
	size_t shown_cap;
	bool any_selected, error, stop_all;
	bool recursive, deref;
	/* per file */
	const char *name;
	bool show_name;
	uint64_t selected;
	bool is_binary, binary_reported;
	uint64_t last_out_lineno; /* last line printed (0 none) */
	long pending_after;
	struct ctx_line *ring;
	size_t ring_n, ring_head;
};

static bool
is_word_char(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_' || ch >= 0x80;
}

static unsigned char
lower_ascii(unsigned char ch)
{
	return ch >= 'A' && ch <= 'Z' ? ch + 32 : ch;
}

/* ---- matching ---- */

static bool
word_ok(const char *line, size_t len, size_t so, size_t eo)
{
	if (so > 0 && is_word_char((unsigned char)line[so - 1]))
		return false;
	if (eo < len && is_word_char((unsigned char)line[eo]))
		return false;
	return true;
}

/* The first match in line[from..len) satisfying -w/-x: true and [*so,*eo). */
static bool
match_in_line(struct grep *g, const char *line, size_t len, size_t from, size_t *so,
	      size_t *eo)
{
	if (g->mode == MODE_FIXED) {
		const char *hay = line;
		if (g->icase) {
			if (g->lower_cap < len + 1) {
				char *nl = realloc(g->lower, len + 1);
				if (!nl)
					return false;
				g->lower = nl;
				g->lower_cap = len + 1;
			}
			for (size_t i = 0; i < len; i++)
				g->lower[i] = (char)lower_ascii((unsigned char)line[i]);
			hay = g->lower;
		}
		bool found = false;
		size_t best_so = 0, best_eo = 0;
		for (size_t k = 0; k < g->nres; k++) {
			const char *p = g->fixed[k];
			size_t pl = g->fixed_len[k];
			if (g->whole_line) {
				if (from == 0 && pl == len && memcmp(hay, p, pl) == 0) {
					*so = 0;
					*eo = len;
					return true;
				}
				continue;
			}
			size_t start = from;
			while (start <= len) {
				const char *m = pl ? memmem(hay + start, len - start, p, pl)
						   : hay + start;
				if (!m)
					break;
				size_t s = (size_t)(m - hay);
				if (!g->word || word_ok(line, len, s, s + pl)) {
					if (!found || s < best_so || (s == best_so && s + pl > best_eo)) {
						found = true;
						best_so = s;
						best_eo = s + pl;
					}
					break;
				}
				start = s + 1;
			}
		}
		if (found) {
			*so = best_so;
			*eo = best_eo;
		}
		return found;
	}
	bool found = false;
	size_t best_so = 0, best_eo = 0;
	for (size_t k = 0; k < g->nres; k++) {
		size_t start = from;
		while (start <= len) {
			regmatch_t m = { .rm_so = (regoff_t)start, .rm_eo = (regoff_t)len };
			int fl = REG_STARTEND | (start > 0 ? REG_NOTBOL : 0);
			if (regexec(&g->res[k], line, 1, &m, fl) != 0)
				break;
			size_t s = (size_t)m.rm_so, e = (size_t)m.rm_eo;
			bool ok = true;
			if (g->whole_line)
				ok = s == 0 && e == len;
			else if (g->word)
				ok = word_ok(line, len, s, e);
			if (ok) {
				if (!found || s < best_so || (s == best_so && e > best_eo)) {
					found = true;
					best_so = s;
					best_eo = e;
				}
				break;
			}
			if (g->whole_line)
				break;
			start = s + 1;
		}
	}
	if (found) {
		*so = best_so;
		*eo = best_eo;
	}
	return found;
}

static bool
line_matches(struct grep *g, const char *line, size_t len)
{
	size_t so, eo;
	return match_in_line(g, line, len, 0, &so, &eo);
}

/* Whether LINE holds the regex's literal runs in their order (a match needs that). */
static bool
runs_in_order(const struct grep *g, const char *line, size_t len)
{
	size_t at = 0;
	for (size_t k = 0; k < g->n_runs; k++) {
		const char *m = memmem(line + at, len - at, g->runs + g->run_off[k], g->run_len[k]);
		if (!m)
			return false;
		at = (size_t)(m - line) + g->run_len[k];
	}
	return true;
}

/*
 * The first line in buf[p..end) that matches (the fast path): its start and
 * end (after its '\n', or end). Candidates come from memmem (fixed strings,
 * the prefilter) or from one regexec over the rest of the buffer.
 */
static bool
find_matching_line(struct grep *g, const char *buf, size_t p, size_t end, size_t *ls, size_t *le)
{
	while (p < end) {
		size_t cand;
		if (g->mode == MODE_FIXED && !g->icase && g->nres == 1 && g->fixed_len[0] > 0) {
			const char *m = memmem(buf + p, end - p, g->fixed[0], g->fixed_len[0]);
			if (!m)
				return false;
			cand = (size_t)(m - buf);
		} else if (g->prefilter) {
			const char *m = memmem(buf + p, end - p, g->prefilter, g->prefilter_len);
			if (!m)
				return false;
			cand = (size_t)(m - buf);
		} else if (g->mode != MODE_FIXED && g->nres == 1 && !g->icase) {
			regmatch_t m = { .rm_so = (regoff_t)p, .rm_eo = (regoff_t)end };
			if (regexec(&g->res[0], buf, 1, &m, REG_STARTEND) != 0)
				return false;
			cand = (size_t)m.rm_so;
		} else {
			cand = p;
		}
		size_t s = p;
		if (cand > p) {
			const char *nlb = memrchr(buf + p, '\n', cand - p);
			if (nlb)
				s = (size_t)(nlb - buf) + 1;
		}
		if (s >= end)
			return false;
		const char *nle = cand < end ? memchr(buf + cand, '\n', end - cand) : NULL;
		size_t e = nle ? (size_t)(nle - buf) + 1 : end;
		size_t body = e - s - (nle ? 1 : 0);
		if ((!g->prefilter || runs_in_order(g, buf + s, body)) && line_matches(g, buf + s, body)) {
			*ls = s;
			*le = e;
			return true;
		}
		p = e;
	}
	return false;
}

/* ---- output ---- */

static void
out_prefix(struct grep *g, uint64_t lineno, uint64_t offset, char sep)
{
	struct sh_out *o = g->c->out_buf;
	if (g->show_name) {
		sh_out_write(o, g->name, strlen(g->name));
		if (g->null_name)
			sh_out_write(o, "", 1);
		else
			sh_out_write(o, &sep, 1);
	}
	if (g->number)
		sh_out_printf(o, "%" PRIu64 "%c", lineno, sep);
	if (g->byte_offset)
		sh_out_printf(o, "%" PRIu64 "%c", offset, sep);
}

static bool
valid_utf8(const unsigned char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned char ch = s[i];
		if (ch < 0x80) {
			i++;
			continue;
		}
		size_t k;
		uint32_t cp;
		if (ch >= 0xc2 && ch <= 0xdf)
			k = 1, cp = ch & 0x1f;
		else if (ch >= 0xe0 && ch <= 0xef)
			k = 2, cp = ch & 0x0f;
		else if (ch >= 0xf0 && ch <= 0xf4)
			k = 3, cp = ch & 0x07;
		else
			return false;
		for (size_t j = 1; j <= k; j++) {
			if (i + j >= n || (s[i + j] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + j] & 0x3f);
		}
		if ((k == 2 && cp < 0x800) || (k == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += k + 1;
	}
	return true;
}

/* Binary data is not printed: the first line that would be ends the file's
 * output with GNU's message (on stderr, status unaffected). */
static bool
binary_suppressed(struct grep *g, const char *line, size_t len)
{
	if (g->binary == BIN_TEXT)
		return false;
	if (!g->is_binary && !memchr(line, '\0', len) &&
	    !(g->utf8 && !valid_utf8((const unsigned char *)line, len)))
		return false;
	if (!g->binary_reported) {
		sh_out_flush(g->c->out_buf);
		sh_out_printf(g->c->err_buf, "%s: %s: binary file matches\n", sh_cmd_name(g->c),
			      g->name);
		sh_out_flush(g->c->err_buf);
		g->binary_reported = true;
	}
	return true;
}

static void
out_line(struct grep *g, const char *line, size_t len, uint64_t lineno, uint64_t offset, char sep)
{
	struct sh_out *o = g->c->out_buf;
	if (g->group_sep && g->context_given && g->last_out_lineno &&
	    lineno > g->last_out_lineno + 1) {
		sh_out_write(o, g->group_sep, strlen(g->group_sep));
		sh_out_write(o, "\n", 1);
	}
	out_prefix(g, lineno, offset, sep);
	sh_out_write(o, line, len);
	sh_out_write(o, "\n", 1);
	g->last_out_lineno = lineno;
	if (g->line_buffered)
		sh_out_flush(o);
}

static void
out_only(struct grep *g, const char *line, size_t len, uint64_t lineno, uint64_t offset)
{
	size_t from = 0, so, eo;
	while (from <= len && match_in_line(g, line, len, from, &so, &eo)) {
		if (eo == so) {
			from = so + 1;
			continue;
		}
		out_prefix(g, lineno, offset + so, ':');
		sh_out_write(g->c->out_buf, line + so, eo - so);
		sh_out_write(g->c->out_buf, "\n", 1);
		from = eo;
	}
	if (g->line_buffered)
		sh_out_flush(g->c->out_buf);
}

/* Whether the output of lines (not just counts or names) is wanted. */
static bool
prints_lines(const struct grep *g)
{
	return !g->count && !g->list && !g->list_non && !g->quiet;
}

static void
ring_push(struct grep *g, const char *line, size_t len, uint64_t lineno, uint64_t offset)
{
	if (!g->before)
		return;
	size_t idx;
	if (g->ring_n < (size_t)g->before) {
		idx = (g->ring_head + g->ring_n) % (size_t)g->before;
		g->ring_n++;
	} else {
		idx = g->ring_head;
		g->ring_head = (g->ring_head + 1) % (size_t)g->before;
	}
	struct ctx_line *r = &g->ring[idx];
	char *t = realloc(r->text, len ? len : 1);
	if (!t)
		return;
	memcpy(t, line, len);
	r->text = t;
	r->len = len;
	r->lineno = lineno;
	r->offset = offset;
}

/* A selected line: output (with its context) and the bookkeeping.
 * Returns false when the file (or the whole run) is done. */
static bool
selected_line(struct grep *g, const char *line, size_t len, uint64_t lineno, uint64_t offset)
{
	g->selected++;
	g->any_selected = true;
	if (g->quiet) {
		g->stop_all = true;
		return false;
	}
	if (g->list || g->list_non)
		return false;
	if (!g->count) {
		if (binary_suppressed(g, line, len))
			return false;
		/* -B context: the kept lines after the last output one. */
		for (size_t i = 0; i < g->ring_n; i++) {
			struct ctx_line *r = &g->ring[(g->ring_head + i) % (size_t)g->before];
			if (r->lineno > g->last_out_lineno || !g->last_out_lineno)
				out_line(g, r->text, r->len, r->lineno, r->offset, '-');
		}
		g->ring_n = 0;
		if (g->only) {
			if (g->group_sep && g->context_given && g->last_out_lineno &&
			    lineno > g->last_out_lineno + 1) {
				sh_out_write(g->c->out_buf, g->group_sep, strlen(g->group_sep));
				sh_out_write(g->c->out_buf, "\n", 1);
			}
			out_only(g, line, len, lineno, offset);
			g->last_out_lineno = lineno;
		} else {
			out_line(g, line, len, lineno, offset, ':');
		}
		g->pending_after = g->after;
	}
	if (g->max_count >= 0 && g->selected >= (uint64_t)g->max_count)
		return false;
	return !sh_cmd_stopped(g->c);
}

/* A line that is not selected: -A context, or kept for -B. */
static void
other_line(struct grep *g, const char *line, size_t len, uint64_t lineno, uint64_t offset)
{
	if (!prints_lines(g))
		return;
	if (g->pending_after > 0) {
		g->pending_after--;
		if (!g->only && !binary_suppressed(g, line, len))
			out_line(g, line, len, lineno, offset, '-');
		else
			g->last_out_lineno = lineno;
		return;
	}
	ring_push(g, line, len, lineno, offset);
}

/* ---- one file ---- */

/* Process buf[0..end) (whole lines, the last maybe without '\n' at EOF).
 * lineno/offset: of buf[0]. Returns false to stop reading the file. */
static bool
process_lines(struct grep *g, const char *buf, size_t end, uint64_t *lineno, uint64_t *offset)
{
	bool fast = !g->invert && !g->context_given;
	size_t p = 0;
	if (fast) {
		while (p < end) {
			size_t ls, le;
			if (!find_matching_line(g, buf, p, end, &ls, &le)) {
				if (g->number)
					*lineno += sh_count_newlines(buf + p, end - p);
				*offset += end - p;
				return true;
			}
			if (g->number)
				*lineno += sh_count_newlines(buf + p, ls - p);
			*offset += ls - p;
			size_t body = le - ls - (buf[le - 1] == '\n');
			(*lineno)++;
			bool go = selected_line(g, buf + ls, body, *lineno, *offset);
			*offset += le - ls;
			p = le;
			if (!go)
				return false;
		}
		return true;
	}
	while (p < end) {
		const char *nl = memchr(buf + p, '\n', end - p);
		size_t le = nl ? (size_t)(nl - buf) + 1 : end;
		size_t body = le - p - (nl ? 1 : 0);
		(*lineno)++;
		bool m = line_matches(g, buf + p, body) != g->invert;
		bool go = true;
		if (m)
			go = selected_line(g, buf + p, body, *lineno, *offset);
		else
			other_line(g, buf + p, body, *lineno, *offset);
		*offset += le - p;
		p = le;
		if (!go) {
			/* -m: the trailing context still comes. */
			if (!g->stop_all && prints_lines(g) && g->max_count >= 0 && g->after > 0 &&
			    g->selected >= (uint64_t)g->max_count) {
				while (p < end && g->pending_after > 0) {
					nl = memchr(buf + p, '\n', end - p);
					le = nl ? (size_t)(nl - buf) + 1 : end;
					body = le - p - (nl ? 1 : 0);
					(*lineno)++;
					if (line_matches(g, buf + p, body) != g->invert)
						break;
					other_line(g, buf + p, body, *lineno, *offset);
					*offset += le - p;
					p = le;
				}
			}
			return false;
		}
	}
	return true;
}

static int
grep_fd(struct grep *g, int fd)
{
	g->selected = 0;
	g->is_binary = g->binary_reported = false;
	g->last_out_lineno = 0;
	g->pending_after = 0;
	g->ring_n = g->ring_head = 0;
	if (g->max_count == 0)
		return 0;
	size_t len = 0;
	uint64_t lineno = 0, offset = 0;
	bool first = true, eof = false;
	for (;;) {
		if (sh_cmd_stopped(g->c))
			return 0;
		if (g->cap - len < 32 * 1024) {
			size_t nc = g->cap ? g->cap * 2 : 256 * 1024;
			char *nb = realloc(g->buf, nc);
			if (!nb)
				return -ENOMEM;
			g->buf = nb;
			g->cap = nc;
		}
		/* (one byte kept for a NUL after the data: regexec's REG_STARTEND bounds
		 * it, but a sanitizer's interceptor of it reads to a NUL) */
		size_t want = g->cap - len - 1;
		ssize_t r = read(fd, g->buf + len, want);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		size_t old = len;
		/* (a walk's file on a local file system: a short read is its end, and the
		 * read that would say 0 is not made; sh_fd_short_read_is_eof) */
		if (r == 0 || (g->short_read_eof && (size_t)r < want))
			eof = true;
		len += (size_t)r;
		g->buf[len] = 0;
		if (r > 0 && g->binary != BIN_TEXT && memchr(g->buf + old, '\0', (size_t)r)) {
			if (first && g->binary == BIN_WITHOUT_MATCH)
				return 0;
			g->is_binary = true;
		}
		if (first && eof && g->binary == BIN_WITHOUT_MATCH && g->is_binary)
			return 0;
		first = false;
		size_t proc;
		if (eof) {
			proc = len;
		} else {
			const char *nl = memrchr(g->buf + old, '\n', (size_t)r);
			if (!nl)
				continue;
			proc = (size_t)(nl - g->buf) + 1;
		}
		if (proc > 0 && !process_lines(g, g->buf, proc, &lineno, &offset))
			return 0;
		if (eof)
			return 0;
		memmove(g->buf, g->buf + proc, len - proc);
		len -= proc;
	}
}

/* Report the file's result for -c/-l/-L. */
static void
file_done(struct grep *g)
{
	struct sh_out *o = g->c->out_buf;
	if (g->quiet)
		return;
	if (g->count) {
		if (g->show_name) {
			sh_out_write(o, g->name, strlen(g->name));
			sh_out_write(o, g->null_name ? "" : ":", 1);
		}
		sh_out_printf(o, "%" PRIu64 "\n", g->selected);
	}
	if ((g->list && g->selected) || (g->list_non && !g->selected)) {
		sh_out_write(o, g->name, strlen(g->name));
		sh_out_write(o, g->null_name ? "" : "\n", 1);
	}
}

static void
file_error(struct grep *g, const char *name, int err)
{
	g->error = true;
	if (!g->silent)
		sh_cmd_error(g->c, 2, "%s: %s", name, strerror(err));
}

static bool
glob_list_match(const struct strv *l, const char *name)
{
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	for (size_t i = 0; i < l->n; i++)
		if (fnmatch(l->v[i], base, 0) == 0 || fnmatch(l->v[i], name, 0) == 0)
			return true;
	return false;
}

static bool
file_excluded(const struct grep *g, const char *name)
{
	if (g->exclude.n && glob_list_match(&g->exclude, name))
		return true;
	if (g->include.n && !glob_list_match(&g->include, name))
		return true;
	return false;
}

/* Grep FD, opened as DISPLAY (closed after when OWNED). */
static void
grep_opened(struct grep *g, int fd, bool owned, const char *display)
{
	g->name = display;
	int e = grep_fd(g, fd);
	if (owned)
		close(fd);
	if (e < 0) {
		file_error(g, display, -e);
		return;
	}
	file_done(g);
}

static void
grep_open_file(struct grep *g, const char *path, const char *display)
{
	int fd;
	int r = sh_cmd_open_input(g->c, path, &fd);
	if (r < 0) {
		file_error(g, display, -r);
		return;
	}
	grep_opened(g, fd, r != 0, display);
}

static char *
join_path(const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	if (dl == 0)
		return strdup(name);
	bool slash = dir[dl - 1] != '/';
	char *s = malloc(dl + slash + nl + 1); /* (no asprintf: twice per file of a walk) */
	if (!s)
		return NULL;
	memcpy(s, dir, dl);
	if (slash)
		s[dl] = '/';
	memcpy(s + dl + slash, name, nl + 1);
	return s;
}

/* DIR/NAME (NAME alone when DIR is "") in g->shown, valid until the next call; NULL: no memory. */
static const char *
shown_name(struct grep *g, const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	bool slash = dl > 0 && dir[dl - 1] != '/';
	size_t need = dl + slash + nl + 1;
	if (need > g->shown_cap) {
		char *b = realloc(g->shown, need * 2);
		if (!b)
			return NULL;
		g->shown = b;
		g->shown_cap = need * 2;
	}
	memcpy(g->shown, dir, dl);
	if (slash)
		g->shown[dl] = '/';
	memcpy(g->shown + dl + slash, name, nl + 1);
	return g->shown;
}

/*
 * The run of permitted files of a walk's directory from entry I on (up to the
 * next subdirectory or refused file), opened together (sh_fs_open_read_entries:
 * the same decisions, opens and outcomes as one sh_fs_open each) and grepped
 * in order; returns the entry after the run.
 */
static size_t
grep_file_run(struct grep *g, const char *path, const char *display, const struct strv *names,
	      const bool *want, const bool *is_dir, const bool *permitted, size_t i)
{
	char *run[SH_FS_OPEN_ENTRIES_MAX];
	int fds[SH_FS_OPEN_ENTRIES_MAX];
	size_t m = 0, j = i;
	for (; j < names->n && m < SH_FS_OPEN_ENTRIES_MAX; j++) {
		if (!want[j] && !is_dir[j])
			continue;
		if (is_dir[j] || !permitted[j])
			break;
		run[m++] = names->v[j];
	}
	if (sh_fs_open_read_entries(g->c->fs, path, run, m, fds) < 0)
		for (size_t t = 0; t < m; t++)
			fds[t] = SH_FS_OPEN_ALONE;
	/* The run's files are regular ones on one file system (each opened O_NOFOLLOW
	 * from its directory, whose entry said so): one fstatfs for all of them. A
	 * file swapped for a FIFO since is read as far as one read goes. */
	bool local_fs = false;
	for (size_t t = 0; t < m; t++)
		if (fds[t] >= 0) {
			local_fs = sh_fd_short_read_is_eof(fds[t]);
			break;
		}
	for (size_t t = 0; t < m; t++) {
		const char *shown = NULL; /* (one buffer for every file of the walk: no malloc each) */
		if (g->stop_all || sh_cmd_stopped(g->c) || !(shown = shown_name(g, display, run[t])))
			continue; /* (an opened one is closed below unread: as a stopped walk's) */
		if (fds[t] >= 0) {
			g->short_read_eof = local_fs;
			grep_opened(g, fds[t], false, shown);
			g->short_read_eof = false;
		} else if (fds[t] != SH_FS_OPEN_ALONE) {
			file_error(g, shown, -fds[t]);
		} else {
			_cleanup_free_ char *full = join_path(path, run[t]);
			if (full)
				grep_open_file(g, full, shown);
		}
	}
	fd_close_list(fds, (unsigned)m); /* (one close_range for the run, mostly) */
	return j;
}

/* Walk a directory: its entries decided in batches (read_content for the
 * files, enumerate when a subdirectory is opened), in readdir order. */
static void
grep_dir(struct grep *g, const char *path, const char *display, int depth)
{
	if (depth > 256) {
		file_error(g, display, ELOOP);
		return;
	}
	DIR *d = sh_fs_opendir(g->c->fs, path);
	if (!d) {
		file_error(g, display, errno);
		return;
	}
	struct strv names = { 0 };
	size_t cap_types = 0;
	unsigned char *types = NULL;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *n = strdup(de->d_name);
		if (!n || strv_push(&names, n) < 0) {
			free(n);
			break;
		}
		if (names.n > cap_types) {
			cap_types = names.cap;
			unsigned char *nt = realloc(types, cap_types);
			if (!nt)
				break;
			types = nt;
		}
		types[names.n - 1] = de->d_type;
	}
	closedir(d);
	/* Classify; files to read are decided in one batch per 256. */
	bool *is_dir = calloc(names.n + 1, sizeof(bool));
	bool *want = calloc(names.n + 1, sizeof(bool));
	bool *permitted = calloc(names.n + 1, sizeof(bool));
	char **files = calloc(names.n + 1, sizeof(char *));
	size_t *file_idx = calloc(names.n + 1, sizeof(size_t));
	size_t nfiles = 0;
	if (!is_dir || !want || !permitted || !files || !file_idx)
		goto out;
	for (size_t i = 0; i < names.n; i++) {
		unsigned char t = types ? types[i] : DT_UNKNOWN;
		if (t == DT_UNKNOWN || (t == DT_LNK && g->deref)) {
			_cleanup_free_ char *full = join_path(path, names.v[i]);
			struct stat st;
			if (full && sh_fs_stat(g->c->fs, full, &st, g->deref) == 0)
				t = S_ISDIR(st.st_mode) ? DT_DIR
				    : S_ISREG(st.st_mode) ? DT_REG
				    : S_ISLNK(st.st_mode) ? DT_LNK : DT_UNKNOWN;
		}
		if (t == DT_DIR) {
			is_dir[i] = !(g->exclude_dir.n && glob_list_match(&g->exclude_dir, names.v[i]));
		} else if (t == DT_REG) {
			if (!file_excluded(g, names.v[i])) {
				want[i] = true;
				file_idx[nfiles] = i;
				files[nfiles++] = names.v[i];
			}
		}
	}
	if (nfiles) {
		/*
		 * readdir's own types (never what a stat of a link resolved): an entry it
		 * saw as no link is decided on dir/name with no lstat of its own (one
		 * swapped in since is caught by the O_NOFOLLOW open, which decides again).
		 */
		bool *perm_f = calloc(nfiles, sizeof(bool));
		unsigned char *ftypes = calloc(nfiles, 1);
		for (size_t k = 0; ftypes && k < nfiles; k++)
			ftypes[k] = types ? types[file_idx[k]] : DT_UNKNOWN;
		if (perm_f && ftypes &&
		    sh_fs_decide_entries_typed(g->c->fs, path, files, ftypes, nfiles, SH_FS_READ,
					       SH_OP_READ_CONTENT, perm_f) == 0)
			for (size_t k = 0; k < nfiles; k++)
				permitted[file_idx[k]] = perm_f[k];
		free(perm_f);
		free(ftypes);
	}
	for (size_t i = 0; i < names.n && !g->stop_all && !sh_cmd_stopped(g->c);) {
		if (!want[i] && !is_dir[i]) {
			i++;
			continue;
		}
		if (want[i] && permitted[i]) {
			i = grep_file_run(g, path, display, &names, want, is_dir, permitted, i);
			continue;
		}
		_cleanup_free_ char *full = join_path(path, names.v[i]);
		_cleanup_free_ char *shown = join_path(display, names.v[i]);
		if (!full || !shown)
			break;
		if (is_dir[i]) {
			grep_dir(g, full, shown, depth + 1);
			i++;
			continue;
		}
		/* A denied entry (!permitted[i]) is opened too: fsops fails it with
		 * EACCES and prints the policy message, as for a single refused open. */
		grep_open_file(g, full, shown);
		i++;
	}
out:
	free(is_dir);
	free(want);
	free(permitted);
	free(files);
	free(file_idx);
	free(types);
	strv_free(&names, true);
}

static void
grep_operand(struct grep *g, const char *arg, bool implicit_dot)
{
	if (strcmp(arg, "-") == 0) {
		g->name = g->label;
		int e = grep_fd(g, g->c->in);
		if (e < 0)
			file_error(g, g->label, -e);
		else
			file_done(g);
		return;
	}
	if (g->recursive) {
		struct stat st;
		int r = sh_fs_stat(g->c->fs, arg, &st, true);
		if (r == 0 && S_ISDIR(st.st_mode)) {
			if (g->exclude_dir.n && !implicit_dot && glob_list_match(&g->exclude_dir, arg))
				return;
			if (g->with_name == -1)
				g->show_name = true;
			grep_dir(g, arg, implicit_dot ? "" : arg, 0);
			return;
		}
	}
	if ((g->include.n || g->exclude.n) && file_excluded(g, arg))
		return;
	grep_open_file(g, arg, arg);
}

/* ---- patterns ---- */

static int
add_patterns(struct grep *g, const char *text, size_t len)
{
	/* Each line of text is a pattern (a trailing newline adds none). */
	size_t p = 0;
	for (;;) {
		const char *nl = memchr(text + p, '\n', len - p);
		size_t e = nl ? (size_t)(nl - text) : len;
		char *str = strndup(text + p, e - p);
		if (!str || strv_push(&g->pats, str) < 0) {
			free(str);
			return -ENOMEM;
		}
		if (!nl)
			break;
		p = e + 1;
		if (p == len)
			break;
	}
	return 0;
}

/*
 * The runs of characters every match of an ERE/BRE must contain, in the order
 * they appear in every match (no alternation, not in a group or bracket, not
 * under a quantifier): packed into one malloc'd buffer, run k being
 * buf[off[k]..off[k]+len[k]). Returns the buffer (*N runs, at most strlen(PAT)),
 * or NULL (alternation, no memory).
 */
static char *
required_runs(const char *pat, bool ere, size_t *off, size_t *len, size_t *nruns)
{
	size_t n = strlen(pat);
	char *cur = malloc(n + 1);
	size_t cur_len = 0, start = 0;
	*nruns = 0;
	if (!cur)
		return NULL;
	int depth = 0;
	for (size_t i = 0; i < n; i++) {
		char ch = pat[i];
		char lit = 0;
		bool is_lit = false;
		if (ch == '\\') {
			char nx = pat[i + 1];
			if (!nx)
				break;
			i++;
			if (!ere && nx == '{') {
				const char *e = strstr(pat + i, "\\}");
				i = e ? (size_t)(e - pat) + 1 : n;
			} else if (!ere && (nx == '(' || nx == ')')) {
				depth += nx == '(' ? 1 : -1;
			} else if (nx == '|') {
				free(cur);
				return NULL;
			} else if (strchr(".[]*^$\\/-", nx) || (ere && strchr("+?{}()|", nx))) {
				lit = nx;
				is_lit = true;
			}
		} else if (ere && ch == '|') {
			free(cur);
			return NULL;
		} else if (ere && (ch == '(' || ch == ')')) {
			depth += ch == '(' ? 1 : -1;
		} else if (ch == '[') {
			/* Skip the bracket expression. */
			size_t j = i + 1;
			if (pat[j] == '^')
				j++;
			if (pat[j] == ']')
				j++;
			while (j < n && pat[j] != ']') {
				if (pat[j] == '[' && (pat[j + 1] == ':' || pat[j + 1] == '.' ||
						      pat[j + 1] == '=')) {
					char close = pat[j + 1];
					const char *e = strstr(pat + j + 2, close == ':' ? ":]"
									 : close == '.' ? ".]" : "=]");
					j = e ? (size_t)(e - pat) + 2 : n;
					continue;
				}
				j++;
			}
			i = j;
		} else if (ere && ch == '{') {
			const char *e = strchr(pat + i, '}');
			i = e ? (size_t)(e - pat) : n;
		} else if (strchr(".*^$", ch) || (ere && strchr("+?", ch))) {
			;
		} else {
			lit = ch;
			is_lit = true;
		}
		/* A quantifier after this character makes it optional. */
		const char *q = pat + i + 1;
		bool quant = *q == '*' || (ere && (*q == '+' || *q == '?' || *q == '{')) ||
			     (!ere && q[0] == '\\' && (q[1] == '{' || q[1] == '?' || q[1] == '+'));
		if (is_lit && depth == 0 && !quant && (unsigned char)lit < 0x80) {
			cur[cur_len++] = lit;
			continue;
		}
		if (cur_len > start) {
			off[*nruns] = start;
			len[(*nruns)++] = cur_len - start;
			start = cur_len;
		}
	}
	if (cur_len > start) {
		off[*nruns] = start;
		len[(*nruns)++] = cur_len - start;
	}
	return cur;
}

/* The longest of N runs (the first of equals), when of 2 bytes or more: a copy, or NULL. */
static char *
longest_run(const char *runs, const size_t *off, const size_t *len, size_t n)
{
	size_t best = SIZE_MAX;
	for (size_t k = 0; runs && k < n; k++)
		if (len[k] >= 2 && (best == SIZE_MAX || len[k] > len[best]))
			best = k;
	return best != SIZE_MAX ? strndup(runs + off[best], len[best]) : NULL;
}

/* The longest of required_runs's runs, when of 2 bytes or more (cmd_text.h). */
char *
sh_regex_required_literal(const char *pat, bool ere)
{
	size_t n = strlen(pat), nruns = 0;
	size_t *off = calloc(n + 1, sizeof(size_t)), *len = calloc(n + 1, sizeof(size_t));
	char *runs = off && len ? required_runs(pat, ere, off, len, &nruns) : NULL;
	char *lit = longest_run(runs, off, len, nruns);
	free(runs);
	free(off);
	free(len);
	return lit;
}

/* GNU's ERE leniency that glibc's regcomp lacks: a '*' at the start of the
 * expression (or of a group or branch) is dropped, a '{' that does not start
 * a valid interval is an ordinary character. */
static char *
fixup_ere(const char *pat, bool *star)
{
	size_t n = strlen(pat);
	char *out = malloc(2 * n + 1), *w = out;
	if (!out)
		return NULL;
	bool at_start = true;
	for (size_t i = 0; i < n; i++) {
		char ch = pat[i];
		if (ch == '\\' && i + 1 < n) {
			*w++ = ch;
			*w++ = pat[++i];
			at_start = false;
			continue;
		}
		if (ch == '[') {
			size_t j = i + 1;
			if (pat[j] == '^')
				j++;
			if (pat[j] == ']')
				j++;
			while (j < n && pat[j] != ']') {
				if (pat[j] == '[' && strchr(":.=", pat[j + 1]) && pat[j + 1]) {
					const char *e = strchr(pat + j + 2, ']');
					j = e ? (size_t)(e - pat) + 1 : n;
					continue;
				}
				j++;
			}
			size_t end = j < n ? j + 1 : n;
			memcpy(w, pat + i, end - i);
			w += end - i;
			i = end - 1;
			at_start = false;
			continue;
		}
		if (ch == '*' && at_start) {
			*star = true;
			continue;
		}
		if (ch == '{') {
			size_t j = i + 1;
			size_t digits = strspn(pat + j, "0123456789");
			j += digits;
			bool valid = false;
			if (pat[j] == ',') {
				j++;
				j += strspn(pat + j, "0123456789");
				valid = pat[j] == '}';
			} else {
				valid = digits > 0 && pat[j] == '}';
			}
			if (!valid || at_start) {
				*w++ = '\\';
				*w++ = '{';
				at_start = false;
				continue;
			}
		}
		*w++ = ch;
		at_start = ch == '(' || ch == '|';
	}
	*w = '\0';
	return out;
}

static int
compile(struct grep *g)
{
	size_t n = g->pats.n;
	if (g->mode == MODE_FIXED) {
		g->fixed = calloc(n + 1, sizeof(char *));
		g->fixed_len = calloc(n + 1, sizeof(size_t));
		if (!g->fixed || !g->fixed_len)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			g->fixed[i] = g->pats.v[i];
			g->fixed_len[i] = strlen(g->pats.v[i]);
			if (g->icase)
				for (char *p = g->fixed[i]; *p; p++)
					*p = (char)lower_ascii((unsigned char)*p);
		}
		g->nres = n;
		return 0;
	}
	bool ere = g->mode == MODE_ERE;
	if (ere) {
		bool star = false;
		for (size_t i = 0; i < n; i++) {
			char *f = fixup_ere(g->pats.v[i], &star);
			if (!f)
				return -ENOMEM;
			free(g->pats.v[i]);
			g->pats.v[i] = f;
		}
		if (star) {
			sh_out_printf(g->c->err_buf, "%s: warning: * at start of expression\n",
				      sh_cmd_name(g->c));
			sh_out_flush(g->c->err_buf);
		}
	}
	/* Several patterns become one alternation unless one has a back-reference
	 * (its numbering would shift). */
	bool backref = false;
	for (size_t i = 0; i < n; i++)
		for (const char *p = g->pats.v[i]; *p; p++)
			if (p[0] == '\\' && p[1]) {
				if (p[1] >= '1' && p[1] <= '9')
					backref = true;
				p++;
			}
	int cflags = (ere ? REG_EXTENDED : 0) | (g->icase ? REG_ICASE : 0) | REG_NEWLINE;
	char **srcs = g->pats.v;
	size_t nsrc = n;
	_cleanup_free_ char *joined = NULL;
	if (n > 1 && !backref) {
		size_t total = 0;
		for (size_t i = 0; i < n; i++)
			total += strlen(g->pats.v[i]) + 6;
		joined = malloc(total + 1);
		if (!joined)
			return -ENOMEM;
		char *w = joined;
		for (size_t i = 0; i < n; i++) {
			if (i)
				w = stpcpy(w, ere ? "|" : "\\|");
			w = stpcpy(w, ere ? "(" : "\\(");
			w = stpcpy(w, g->pats.v[i]);
			w = stpcpy(w, ere ? ")" : "\\)");
		}
		srcs = &joined;
		nsrc = 1;
	}
	g->res = calloc(nsrc + 1, sizeof(regex_t));
	if (!g->res)
		return -ENOMEM;
	for (size_t i = 0; i < nsrc; i++) {
		int r = sh_regcomp(&g->res[i], srcs[i], cflags);
		if (r != 0) {
			char msg[256];
			regerror(r, &g->res[i], msg, sizeof(msg));
			if (r == REG_EBRACK)
				snprintf(msg, sizeof(msg), "%s",
					 "Unmatched [, [^, [:, [., or [=");
			if (r == REG_EPAREN)
				snprintf(msg, sizeof(msg), "Unmatched ( or \\(");
			if (r == REG_EBRACE)
				snprintf(msg, sizeof(msg), "Unmatched \\{");
			g->nres = i;
			return sh_cmd_error(g->c, -EINVAL, "%s", msg);
		}
		g->nres = i + 1;
	}
	if (n == 1 && !g->icase) {
		/* The runs once: the longest is the prefilter, all of them the line's check. */
		size_t pl = strlen(g->pats.v[0]) + 1;
		g->run_off = calloc(pl, sizeof(size_t));
		g->run_len = calloc(pl, sizeof(size_t));
		if (g->run_off && g->run_len)
			g->runs = required_runs(g->pats.v[0], ere, g->run_off, g->run_len, &g->n_runs);
		g->prefilter = longest_run(g->runs, g->run_off, g->run_len, g->n_runs);
	}
	if (g->prefilter)
		g->prefilter_len = strlen(g->prefilter);
	if (!g->prefilter || g->n_runs < 2)
		g->n_runs = 0; /* (the prefilter's memmem has found the only run, or none is checked) */
	return 0;
}

/* ---- options ---- */

enum {
	OPT_INCLUDE = 256, OPT_EXCLUDE, OPT_EXCLUDE_DIR, OPT_COLOR, OPT_LABEL, OPT_LINE_BUF,
	OPT_BINFILES, OPT_NO_GROUP_SEP, OPT_GROUP_SEP, OPT_HELP, OPT_NO_ICASE, OPT_NULL_DATA,
	OPT_NO_MESSAGES_DUMMY, OPT_VERSION,
};

static const struct sh_longopt grep_longopts[] = {
	{ "extended-regexp", SH_NO_ARG, 'E' }, { "fixed-strings", SH_NO_ARG, 'F' },
	{ "basic-regexp", SH_NO_ARG, 'G' }, { "perl-regexp", SH_NO_ARG, 'P' },
	{ "regexp", SH_REQ_ARG, 'e' }, { "file", SH_REQ_ARG, 'f' },
	{ "ignore-case", SH_NO_ARG, 'i' }, { "no-ignore-case", SH_NO_ARG, OPT_NO_ICASE },
	{ "word-regexp", SH_NO_ARG, 'w' }, { "line-regexp", SH_NO_ARG, 'x' },
	{ "invert-match", SH_NO_ARG, 'v' }, { "count", SH_NO_ARG, 'c' },
	{ "color", SH_OPT_ARG, OPT_COLOR }, { "colour", SH_OPT_ARG, OPT_COLOR },
	{ "files-without-match", SH_NO_ARG, 'L' }, { "files-with-matches", SH_NO_ARG, 'l' },
	{ "max-count", SH_REQ_ARG, 'm' }, { "only-matching", SH_NO_ARG, 'o' },
	{ "quiet", SH_NO_ARG, 'q' }, { "silent", SH_NO_ARG, 'q' },
	{ "no-messages", SH_NO_ARG, 's' }, { "byte-offset", SH_NO_ARG, 'b' },
	{ "with-filename", SH_NO_ARG, 'H' }, { "no-filename", SH_NO_ARG, 'h' },
	{ "label", SH_REQ_ARG, OPT_LABEL }, { "line-number", SH_NO_ARG, 'n' },
	{ "line-buffered", SH_NO_ARG, OPT_LINE_BUF }, { "null", SH_NO_ARG, 'Z' },
	{ "after-context", SH_REQ_ARG, 'A' }, { "before-context", SH_REQ_ARG, 'B' },
	{ "context", SH_REQ_ARG, 'C' }, { "text", SH_NO_ARG, 'a' },
	{ "binary-files", SH_REQ_ARG, OPT_BINFILES }, { "recursive", SH_NO_ARG, 'r' },
	{ "dereference-recursive", SH_NO_ARG, 'R' }, { "include", SH_REQ_ARG, OPT_INCLUDE },
	{ "exclude", SH_REQ_ARG, OPT_EXCLUDE }, { "exclude-dir", SH_REQ_ARG, OPT_EXCLUDE_DIR },
	{ "no-group-separator", SH_NO_ARG, OPT_NO_GROUP_SEP },
	{ "group-separator", SH_REQ_ARG, OPT_GROUP_SEP }, { "binary", SH_NO_ARG, 'U' },
	{ "null-data", SH_NO_ARG, 'z' }, { "help", SH_NO_ARG, OPT_HELP },
	{ "version", SH_NO_ARG, 'V' }, { 0 },
};

static int
usage_error(struct sh_cmd *c)
{
	return sh_cmd_usage_error(c, 2, "[OPTION]... PATTERNS [FILE]...");
}

static int
parse_context(struct grep *g, const char *s, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < 0 || errno) {
		return sh_cmd_error(g->c, -1, "%s: invalid context length argument", s);
	}
	*out = v;
	return 0;
}

static void
grep_free(struct grep *g)
{
	for (size_t i = 0; i < g->nres && g->mode != MODE_FIXED; i++)
		regfree(&g->res[i]);
	free(g->res);
	free(g->fixed);
	free(g->fixed_len);
	free((char *)g->prefilter);
	free(g->shown);
	free(g->runs);
	free(g->run_off);
	free(g->run_len);
	free(g->buf);
	free(g->lower);
	if (g->ring) {
		for (long i = 0; i < g->before; i++)
			free(g->ring[i].text);
		free(g->ring);
	}
	strv_free(&g->pats, true);
	strv_free(&g->include, false);
	strv_free(&g->exclude, false);
	strv_free(&g->exclude_dir, false);
}

int
sh_cmd_grep(struct sh_cmd *c, int argc, char **argv)
{
	struct grep g = { .c = c, .mode = MODE_BRE, .with_name = -1, .max_count = -1,
			  .label = "(standard input)", .group_sep = "--" };
	g.utf8 = false;
	const char *v = sh_cmd_getenv(c, "LC_ALL");
	if (!v || !*v)
		v = sh_cmd_getenv(c, "LC_CTYPE");
	if (!v || !*v)
		v = sh_cmd_getenv(c, "LANG");
	g.utf8 = v && (strcasestr(v, "utf-8") || strcasestr(v, "utf8"));
	bool have_e = false;
	long ctx_digits = -1;
	int digit_ind = -1, digit_sub = -1;
	long before = -1, after = -1, both = -1;
	struct sh_opt o;
	sh_opt_init(&o, c, argc, argv,
		    "0123456789A:B:C:EFGIPUVZabce:f:hHiLlm:noqRrsvwxyz", grep_longopts);
	int ch, status = 0;
	while ((ch = sh_opt_next(&o)) != -1) {
		switch (ch) {
		case '0': case '1': case '2': case '3': case '4':
		case '5': case '6': case '7': case '8': case '9':
			if (digit_ind == o.ind && digit_sub >= 0 && (o.sub == 0 || o.sub == digit_sub + 1))
				ctx_digits = ctx_digits * 10 + (ch - '0');
			else
				ctx_digits = ch - '0';
			digit_ind = o.ind;
			digit_sub = o.sub;
			both = ctx_digits;
			break;
		case 'A': if (parse_context(&g, o.arg, &after) < 0) goto fail; break;
		case 'B': if (parse_context(&g, o.arg, &before) < 0) goto fail; break;
		case 'C': if (parse_context(&g, o.arg, &both) < 0) goto fail; break;
		case 'E': g.mode = MODE_ERE; break;
		case 'F': g.mode = MODE_FIXED; break;
		case 'G': g.mode = MODE_BRE; break;
		case 'P':
			sh_cmd_error(c, 2, "-P is not supported");
			goto fail;
		case 'U': break;
		case 'V':
			sh_out_printf(c->out_buf, "grep (box-shell)\n");
			sh_opt_done(&o);
			grep_free(&g);
			return sh_cmd_finish(c, 0);
		case 'Z': g.null_name = true; break;
		case 'a': g.binary = BIN_TEXT; break;
		case 'b': g.byte_offset = true; break;
		case 'c': g.count = true; break;
		case 'e':
			if (add_patterns(&g, o.arg, strlen(o.arg)) < 0)
				goto nomem;
			have_e = true;
			break;
		case 'f': {
			int fd;
			int r = sh_cmd_open_input(c, o.arg, &fd);
			if (r < 0) {
				sh_cmd_error(c, 2, "%s: %s", o.arg, strerror(-r));
				goto fail;
			}
			char *d;
			size_t len;
			int e = sh_read_fd_all(fd, c->interrupted, &d, &len);
			if (r)
				close(fd);
			if (e < 0) {
				sh_cmd_error(c, 2, "%s: %s", o.arg, strerror(-e));
				goto fail;
			}
			if (len > 0 && add_patterns(&g, d, len) < 0) {
				free(d);
				goto nomem;
			}
			free(d);
			have_e = true;
			break;
		}
		case 'h': g.with_name = 0; break;
		case 'H': g.with_name = 1; break;
		case 'i': case 'y': g.icase = true; break;
		case OPT_NO_ICASE: g.icase = false; break;
		case 'L': g.list_non = true; g.list = false; break;
		case 'l': g.list = true; g.list_non = false; break;
		case 'm': {
			char *end;
			errno = 0;
			long long m = strtoll(o.arg, &end, 10);
			if (!*o.arg || *end || errno) {
				sh_cmd_error(c, 2, "invalid max count");
				goto fail;
			}
			g.max_count = m < 0 ? -1 : m;
			break;
		}
		case 'n': g.number = true; break;
		case 'o': g.only = true; break;
		case 'q': g.quiet = true; break;
		case 'R': g.recursive = g.deref = true; break;
		case 'r': g.recursive = true; break;
		case 's': g.silent = true; break;
		case 'v': g.invert = true; break;
		case 'w': g.word = true; break;
		case 'x': g.whole_line = true; break;
		case 'z':
			sh_cmd_error(c, 2, "-z is not supported");
			goto fail;
		case OPT_INCLUDE: if (strv_push(&g.include, o.arg) < 0) goto nomem; break;
		case OPT_EXCLUDE: if (strv_push(&g.exclude, o.arg) < 0) goto nomem; break;
		case OPT_EXCLUDE_DIR: if (strv_push(&g.exclude_dir, o.arg) < 0) goto nomem; break;
		case OPT_COLOR:
			if (o.arg && strcmp(o.arg, "never") && strcmp(o.arg, "auto") &&
			    strcmp(o.arg, "none") && strcmp(o.arg, "no") && strcmp(o.arg, "tty") &&
			    strcmp(o.arg, "if-tty")) {
				if (!strcmp(o.arg, "always") || !strcmp(o.arg, "yes") ||
				    !strcmp(o.arg, "force")) {
					sh_cmd_error(c, 2, "--color=%s is not supported", o.arg);
					goto fail;
				}
				sh_cmd_error(c, 2, "invalid argument %s for '--color'",
					     sh_qname(o.arg, true));
				sh_out_printf(c->err_buf, "Valid arguments are:\n  - 'always', 'yes', 'force'\n"
					      "  - 'never', 'no', 'none'\n  - 'auto', 'tty', 'if-tty'\n");
				sh_cmd_usage_error(c, 2, "[OPTION]... PATTERNS [FILE]...");
				goto fail;
			}
			break;
		case OPT_LABEL: g.label = o.arg; break;
		case OPT_LINE_BUF: g.line_buffered = true; break;
		case OPT_BINFILES:
			if (!strcmp(o.arg, "binary"))
				g.binary = BIN_BINARY;
			else if (!strcmp(o.arg, "text"))
				g.binary = BIN_TEXT;
			else if (!strcmp(o.arg, "without-match"))
				g.binary = BIN_WITHOUT_MATCH;
			else {
				sh_cmd_error(c, 2, "unknown binary-files type");
				goto fail;
			}
			break;
		case OPT_NO_GROUP_SEP: g.group_sep = NULL; break;
		case OPT_GROUP_SEP: g.group_sep = o.arg; break;
		case OPT_HELP:
			sh_out_printf(c->out_buf,
				      "Usage: grep [OPTION]... PATTERNS [FILE]...\n"
				      "box-shell's own grep; supported options: -E -F -G -e PAT -f FILE "
				      "-i -y --no-ignore-case -w -x -v -c -l -L -m NUM -o -q -s -b -H -h "
				      "--label -n --line-buffered -Z -A NUM -B NUM -C NUM -NUM -a -I "
				      "--binary-files -r -R --include --exclude --exclude-dir "
				      "--group-separator --no-group-separator --color=never|auto -U\n"
				      "-P, -z and --color=always are not supported.\n");
			sh_opt_done(&o);
			grep_free(&g);
			return sh_cmd_finish(c, 0);
		case 'I': g.binary = BIN_WITHOUT_MATCH; break;
		default:
			usage_error(c);
			goto fail;
		}
	}
	g.context_given = after >= 0 || before >= 0 || both >= 0;
	if (after < 0)
		after = both;
	if (before < 0)
		before = both;
	g.after = after < 0 ? 0 : after;
	g.before = before < 0 ? 0 : before;
	int opi = 0;
	if (!have_e) {
		if (o.n_operands == 0) {
			usage_error(c);
			goto fail;
		}
		if (add_patterns(&g, o.operands[0], strlen(o.operands[0])) < 0)
			goto nomem;
		opi = 1;
	}
	if (g.before) {
		g.ring = calloc((size_t)g.before, sizeof(*g.ring));
		if (!g.ring)
			goto nomem;
	}
	if (compile(&g) < 0)
		goto fail;
	int nfiles = o.n_operands - opi;
	if (g.with_name == 1)
		g.show_name = true;
	else if (g.with_name == -1)
		g.show_name = nfiles > 1;
	if (nfiles == 0) {
		if (g.recursive)
			grep_operand(&g, ".", true);
		else
			grep_operand(&g, "-", false);
	}
	for (int i = opi; i < o.n_operands && !g.stop_all && !sh_cmd_stopped(c); i++) {
		bool saved = g.show_name;
		grep_operand(&g, o.operands[i], false);
		g.show_name = saved;
	}
	if (g.error && !(g.quiet && g.any_selected))
		status = 2;
	else
		status = g.any_selected ? 0 : 1;
	sh_opt_done(&o);
	grep_free(&g);
	return sh_cmd_finish(c, status);
nomem:
	sh_cmd_error(c, 2, "%s", strerror(ENOMEM));
fail:
	sh_opt_done(&o);
	grep_free(&g);
	return sh_cmd_finish(c, 2);
}
