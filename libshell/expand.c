/* SPDX-License-Identifier: Apache-2.0 */
/*
 * expand.c — word expansion, in bash's order: brace
 * expansion, tilde, parameter / command / arithmetic expansion (left to
 * right), IFS field splitting, pathname expansion, quote removal.
 *
 * A word is expanded into a buffer of characters, each with flags: quoted
 * (no splitting, no globbing), an unquoted expansion's result (split on
 * IFS), or plain source text; zero-width marks keep a quoted empty string a
 * field and separate "$@"'s fields. Splitting and globbing then read the
 * flags, so no re-quoting round trip is needed.
 *
 * Trusts: nothing in the words or variable values. One word's expansion is
 * capped at SH_MAX_EXPANSION bytes and a command's fields at SH_MAX_FIELDS
 * (brace sequences included); past a cap the expansion fails with an error.
 */
#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sh.h"

enum { FQ = 1, FX = 2, FB = 4, FM = 8 };
enum mode { M_FIELDS, M_STR, M_HEREDOC };

/* Up to XB_INLINE bytes a word's expansion stays in the context itself (no
 * allocation: a loop expands a few short words per command). */
#define XB_INLINE 256

struct xb {
	char *c;
	unsigned char *f;
	size_t n, cap;
	char ic[XB_INLINE];
	unsigned char iflags[XB_INLINE];
};

struct xctx {
	struct sh_shell *sh;
	struct xb b;
	enum mode mode;
	bool err;
	bool at_empty;   /* "$@" with no parameters inside the current quotes */
	bool litx;       /* inside an unquoted ${x-word}: the word's text splits */
	bool brace_dq;   /* the word of "${x-word}": a '"' in it quotes again (bash) */
	bool bs_any;     /* inside such a "…" again: a '\\' quotes any character (bash) */
	bool assign;
	bool assign_word; /* a NAME=VALUE word of a command (bash, not posix): tilde after '=' and ':' */
};

static void
xb_grow(struct xctx *x, size_t need)
{
	/* b.n <= b.cap <= SH_MAX_EXPANSION: compared without a sum that could wrap */
	if (need <= x->b.cap - x->b.n)
		return;
	if (need > SH_MAX_EXPANSION - x->b.n) {
		if (!x->err)
			sh_err(x->sh, "expansion too large (max %u bytes)", SH_MAX_EXPANSION);
		x->err = true;
		return;
	}
	if (x->b.cap == 0 && need <= XB_INLINE) {
		x->b.c = x->b.ic;
		x->b.f = x->b.iflags;
		x->b.cap = XB_INLINE;
		return;
	}
	size_t c = x->b.cap ? x->b.cap * 2 : 64;
	while (c < x->b.n + need)
		c *= 2;
	if (x->b.c == x->b.ic) {
		char *nc = xmalloc(c);
		unsigned char *nf = xmalloc(c);
		memcpy(nc, x->b.c, x->b.n);
		memcpy(nf, x->b.f, x->b.n);
		x->b.c = nc;
		x->b.f = nf;
	} else {
		x->b.c = xrealloc(x->b.c, c);
		x->b.f = xrealloc(x->b.f, c);
	}
	x->b.cap = c;
}

static void
xb_free(struct xctx *x)
{
	if (x->b.c != x->b.ic) {
		free(x->b.c);
		free(x->b.f);
	}
	x->b.c = NULL;
	x->b.f = NULL;
	x->b.n = x->b.cap = 0;
}

static void
xadd(struct xctx *x, const char *s, size_t n, unsigned char fl)
{
	if (x->err)
		return;
	xb_grow(x, n + 1);
	if (x->err)
		return;
	memcpy(x->b.c + x->b.n, s, n);
	memset(x->b.f + x->b.n, fl, n);
	x->b.n += n;
}

static void
xmark(struct xctx *x, unsigned char fl)
{
	xadd(x, "", 1, fl);
}

/*
 * The expansion as one malloc'd string: the zero-width marks dropped (a
 * field break written as ' ' when FB_SPACE), each quoted character found in
 * ESC preceded by '\\'. Sized first, then filled: one allocation.
 */
static char *
xb_string(const struct xctx *x, bool fb_space, const char *esc)
{
	const char *c = x->b.c;
	const unsigned char *f = x->b.f;
	size_t len = 0;
	for (size_t i = 0; i < x->b.n; i++) {
		if (f[i] & (FB | FM)) {
			len += (f[i] & FB) && fb_space;
			continue;
		}
		len += 1 + (esc && (f[i] & FQ) && strchr(esc, c[i]));
	}
	char *o = xmalloc(len + 1), *p = o;
	for (size_t i = 0; i < x->b.n; i++) {
		if (f[i] & (FB | FM)) {
			if ((f[i] & FB) && fb_space)
				*p++ = ' ';
			continue;
		}
		if (esc && (f[i] & FQ) && strchr(esc, c[i]))
			*p++ = '\\';
		*p++ = c[i];
	}
	*p = 0;
	return o;
}

/* ---- scanning helpers (the parser validated the text) ---- */

static size_t
skip_sq(const char *s, size_t i, size_t n)
{
	for (i++; i < n && s[i] != '\''; i++)
		;
	return i < n ? i + 1 : n;
}

static size_t
skip_dsq(const char *s, size_t i, size_t n)
{
	for (i++; i < n && s[i] != '\''; i++)
		if (s[i] == '\\')
			i++;
	return i < n ? i + 1 : n;
}

/* i at '`': the index of its closing '`', or N when there is none. */
static size_t
bq_close(const char *s, size_t i, size_t n)
{
	for (i++; i < n && s[i] != '`'; i++)
		if (s[i] == '\\')
			i++;
	return i < n ? i : n;
}

static size_t
skip_bq(const char *s, size_t i, size_t n)
{
	size_t c = bq_close(s, i, n);
	return c < n ? c + 1 : n;
}

static size_t skip_dollar(struct sh_shell *sh, const char *s, size_t i, size_t n);
static size_t skip_dollar_in(struct sh_shell *sh, const char *s, size_t i, size_t n, bool dq);

static size_t
skip_dq(struct sh_shell *sh, const char *s, size_t i, size_t n)
{
	for (i++; i < n; i++) {
		if (s[i] == '\\') {
			i++;
			continue;
		}
		if (s[i] == '"')
			return i + 1;
		if (s[i] == '`')
			i = skip_bq(s, i, n) - 1;
		else if (s[i] == '$' && i + 1 < n && (s[i + 1] == '(' || s[i + 1] == '{'))
			i = skip_dollar_in(sh, s, i, n, true) - 1;
	}
	return n;
}

/*
 * The length of a construct's body: it opened at I with OPEN bytes, and a
 * skip_* function ended it at E, just past its closing byte CLOSE when it is
 * terminated (always so below N). Text the parser did not check (a cut
 * word, a value) may end inside the construct: its body then runs to N.
 * Never more than N - I - OPEN, never negative.
 */
static size_t
body_len(const char *s, size_t i, size_t open, size_t e, size_t n, char close)
{
	size_t start = i + open;
	if (e <= start)
		return 0;
	bool closed = e < n || s[e - 1] == close;
	return e - start - (closed ? 1 : 0);
}

/* i at '$' followed by '(' or '{'; returns the index after the construct. */
static size_t
skip_dollar(struct sh_shell *sh, const char *s, size_t i, size_t n)
{
	return skip_dollar_in(sh, s, i, n, false);
}

/* DQ: the construct is inside "…" (posix mode: a '\'' in ${…} is then plain, bash) */
static size_t
skip_dollar_in(struct sh_shell *sh, const char *s, size_t i, size_t n, bool dq)
{
	if (s[i + 1] == '{') {
		bool sq_plain = dq && sh->opt_posix;
		for (size_t j = i + 2; j < n; j++) {
			char c = s[j];
			if (c == '\\') {
				j++;
				continue;
			}
			if (c == '}')
				return j + 1;
			if (c == '\'' && !sq_plain)
				j = skip_sq(s, j, n) - 1;
			else if (c == '"')
				j = skip_dq(sh, s, j, n) - 1;
			else if (c == '`')
				j = skip_bq(s, j, n) - 1;
			else if (c == '$' && j + 1 < n && (s[j + 1] == '(' || s[j + 1] == '{'))
				j = skip_dollar(sh, s, j, n) - 1;
		}
		return n;
	}
	if (i + 2 < n && s[i + 2] == '(') {
		int d = 0;
		for (size_t j = i + 3; j < n; j++) {
			if (s[j] == '(')
				d++;
			else if (s[j] == ')') {
				if (d == 0) {
					if (j + 1 < n && s[j + 1] == ')')
						return j + 2;
					break;
				}
				d--;
			}
		}
	}
	long e = parse_cmdsub_end(sh, s + i, n - i);
	if (e < 0)
		return n;
	return i + (size_t)e;
}

/* ---- values ---- */

static const char *
ifs_of(struct sh_shell *sh)
{
	const char *v = var_value(sh, "IFS");
	return v ? v : " \t\n";
}

struct pval {
	bool set;
	bool list;      /* from @ or * (array or positional) */
	bool star;      /* joined with IFS[0] in quotes */
	char **v;       /* list items (borrowed) */
	size_t n;
	const char *s;  /* scalar (borrowed) */
	char *own;      /* owned scalar */
	char **ownv;    /* owned list */
};

static void
pval_free(struct pval *p)
{
	free(p->own);
	if (p->ownv) {
		for (size_t i = 0; i < p->n; i++)
			free(p->ownv[i]);
		free(p->ownv);
	}
}

/*
 * A value borrowed from the variable table (or the positional parameters)
 * becomes the pval's own: an operator's word is expanded after the value
 * was read, and that expansion may assign the very variable (${x/$((x=1))/y},
 * ${x:${x:=5}}), which frees what was borrowed.
 */
static void
pval_own(struct pval *p)
{
	if (p->s && p->s != p->own) {
		char *c = xstrdup(p->s);
		free(p->own);
		p->own = c;
		p->s = c;
	}
	if (p->v && p->v != p->ownv) {
		char **c = xmalloc((p->n + 1) * sizeof(char *));
		for (size_t i = 0; i < p->n; i++)
			c[i] = xstrdup(p->v[i]);
		c[p->n] = NULL;
		p->ownv = c;
		p->v = c;
	}
}

static char numbuf[64];

static bool
get_special(struct sh_shell *sh, const char *name, size_t n, struct pval *pv)
{
	if (n == 1) {
		switch (name[0]) {
		case '?':
			snprintf(numbuf, sizeof numbuf, "%d", sh->status);
			pv->own = xstrdup(numbuf);
			pv->s = pv->own;
			pv->set = true;
			return true;
		case '#':
			snprintf(numbuf, sizeof numbuf, "%d", sh->argc);
			pv->own = xstrdup(numbuf);
			pv->s = pv->own;
			pv->set = true;
			return true;
		case '$':
			snprintf(numbuf, sizeof numbuf, "%ld", (long)sh->rootpid);
			pv->own = xstrdup(numbuf);
			pv->s = pv->own;
			pv->set = true;
			return true;
		case '!':
			if (sh->lastbg <= 0)
				return true;
			snprintf(numbuf, sizeof numbuf, "%ld", (long)sh->lastbg);
			pv->own = xstrdup(numbuf);
			pv->s = pv->own;
			pv->set = true;
			return true;
		case '-': {
			struct sbuf b = {0};
			if (sh->opt_a)
				sb_addc(&b, 'a');
			if (sh->opt_e)
				sb_addc(&b, 'e');
			if (sh->opt_f)
				sb_addc(&b, 'f');
			sb_addc(&b, 'h');
			if (sh->opt_n)
				sb_addc(&b, 'n');
			if (sh->opt_u)
				sb_addc(&b, 'u');
			if (sh->opt_v)
				sb_addc(&b, 'v');
			if (sh->opt_x)
				sb_addc(&b, 'x');
			sb_addc(&b, 'B');
			if (sh->opt_C)
				sb_addc(&b, 'C');
			pv->own = sb_take(&b);
			pv->s = pv->own;
			pv->set = true;
			return true;
		}
		case '@':
		case '*':
			pv->list = true;
			pv->star = name[0] == '*';
			pv->v = sh->argv;
			pv->n = (size_t)sh->argc;
			pv->set = sh->argc > 0;
			return true;
		case '0':
			pv->s = sh->arg0;
			pv->set = true;
			return true;
		default:
			break;
		}
	}
	if (isdigit((unsigned char)name[0])) {
		long k = 0;
		for (size_t d = 0; d < n && d < 9; d++)
			k = k * 10 + (name[d] - '0');
		if (k >= 1 && k <= sh->argc) {
			pv->s = sh->argv[k - 1];
			pv->set = true;
		}
		if (k == 0) {
			pv->s = sh->arg0;
			pv->set = true;
		}
		return true;
	}
	return false;
}

static bool
is_special_name(const char *s, size_t n)
{
	if (n == 1 && strchr("?#$!-@*0123456789", s[0]))
		return true;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return n > 0;
}

static char *expand_sub(struct sh_shell *sh, const char *s, size_t n, enum mode m, bool dq,
			bool *err);

/* Value of NAME or NAME[SUB]; sub = NULL when absent. */
static int
get_param(struct sh_shell *sh, const char *name, size_t n, const char *sub, size_t subn,
	  struct pval *pv)
{
	memset(pv, 0, sizeof *pv);
	if (n == 8 && memcmp(name, "FUNCNAME", 8) == 0)
		funcname_sync(sh);
	if (!sub) {
		if (get_special(sh, name, n, pv))
			return 0;
		char tmp[256];
		if (n >= sizeof tmp)
			return 0;
		memcpy(tmp, name, n);
		tmp[n] = 0;
		const char *v = var_value(sh, tmp);
		if (v) {
			pv->s = v;
			pv->set = true;
		}
		return 0;
	}
	struct var *v = var_getn(sh, name, n);
	if (subn == 1 && (sub[0] == '@' || sub[0] == '*')) {
		pv->list = true;
		pv->star = sub[0] == '*';
		if (!v)
			return 0;
		size_t c = var_array_count(v);
		pv->ownv = xmalloc((c + 1) * sizeof(char *));
		size_t k = 0;
		if (v->flags & V_ASSOC) {
			struct strv vals = {0};
			var_elems(v, NULL, &vals);
			for (size_t i = 0; i < vals.n && k < c; i++)
				pv->ownv[k++] = vals.v[i];
			free(vals.v);
		} else if (v->flags & V_ARRAY) {
			for (size_t i = 0; i < v->narr; i++)
				if (v->arr[i])
					pv->ownv[k++] = xstrdup(v->arr[i]);
		} else if (v->val)
			pv->ownv[k++] = xstrdup(v->val);
		pv->n = k;
		pv->v = pv->ownv;
		pv->set = k > 0;
		return 0;
	}
	bool err = false;
	char *idxs = expand_sub(sh, sub, subn, M_STR, false, &err);
	if (err) {
		free(idxs);
		return -1;
	}
	if (v && (v->flags & V_ASSOC)) {
		/* the key is a string; the value stays the array's (pv->s) */
		const char *val = assoc_get(v, idxs);
		free(idxs);
		if (val) {
			pv->s = val;
			pv->set = true;
		}
		return 0;
	}
	intmax_t idx;
	if (arith_eval(sh, idxs, &idx) < 0) {
		free(idxs);
		return -1;
	}
	free(idxs);
	if (!v)
		return 0;
	if (!(v->flags & V_ARRAY)) {
		if (idx == 0 && v->val) {
			pv->s = v->val;
			pv->set = true;
		}
		return 0;
	}
	if (idx < 0)
		idx += (intmax_t)v->narr;
	if (idx >= 0 && (size_t)idx < v->narr && v->arr[idx]) {
		pv->s = v->arr[idx];
		pv->set = true;
	}
	return 0;
}

/* ---- ANSI-C quoting ---- */

static size_t
utf8_put(char *o, unsigned long cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

size_t
ansi_escape(const char *s, size_t n, char *o, size_t *on, bool echo_mode)
{
	*on = 1;
	if (n == 0) {
		o[0] = '\\';
		return 0;
	}
	char c = s[0];
	switch (c) {
	case 'a': o[0] = '\a'; return 1;
	case 'b': o[0] = '\b'; return 1;
	case 'e':
	case 'E': o[0] = 27; return 1;
	case 'f': o[0] = '\f'; return 1;
	case 'n': o[0] = '\n'; return 1;
	case 'r': o[0] = '\r'; return 1;
	case 't': o[0] = '\t'; return 1;
	case 'v': o[0] = '\v'; return 1;
	case '\\': o[0] = '\\'; return 1;
	case '\'':
	case '"':
	case '?':
		if (echo_mode) {
			/* echo -e and %b know no \' \" \? (bash): kept as written */
			o[0] = '\\';
			o[1] = c;
			*on = 2;
			return 1;
		}
		o[0] = c;
		return 1;
	case 'x': {
		size_t i = 1;
		unsigned v = 0;
		while (i < n && i < 3 && isxdigit((unsigned char)s[i])) {
			v = v * 16 + (unsigned)(isdigit((unsigned char)s[i]) ? s[i] - '0'
									  : (tolower(s[i]) - 'a' + 10));
			i++;
		}
		if (i == 1) {
			o[0] = '\\';
			o[1] = 'x';
			*on = 2;
			return 1;
		}
		o[0] = (char)v;
		return i;
	}
	case 'u':
	case 'U': {
		size_t max = c == 'u' ? 5 : 9, i = 1;
		unsigned long v = 0;
		while (i < n && i < max && isxdigit((unsigned char)s[i])) {
			v = v * 16 + (unsigned long)(isdigit((unsigned char)s[i])
							 ? s[i] - '0'
							 : (tolower(s[i]) - 'a' + 10));
			i++;
		}
		if (i == 1) {
			o[0] = '\\';
			o[1] = c;
			*on = 2;
			return 1;
		}
		if (v >= 0x80 && sh_current && !sh_utf8_locale(sh_current)) {
			/* no conversion outside UTF-8: bash prints the escape */
			*on = (size_t)snprintf(o, SH_ESCAPE_MAX, c == 'u' ? "\\u%04lX" : "\\U%08lX", v);
			return i;
		}
		*on = utf8_put(o, v);
		return i;
	}
	case 'c':
		if (echo_mode) {
			*on = 0;
			return (size_t)-1;
		}
		if (n > 1) {
			/* bash's TOCTRL; $'\c\\' takes the escaped backslash whole (POSIX) */
			o[0] = s[1] == '?' ? 0x7f : (char)(toupper((unsigned char)s[1]) & 0x1f);
			return s[1] == '\\' && n > 2 && s[2] == '\\' ? 3 : 2;
		}
		o[0] = '\\';
		o[1] = 'c';
		*on = 2;
		return 1;
	default:
		if (c >= '0' && c <= '7') {
			size_t i = 0, max = 3;
			if (echo_mode && c == '0') {
				i = 1;
				max = 4;
			}
			unsigned v = 0;
			while (i < n && i < max && s[i] >= '0' && s[i] <= '7') {
				v = v * 8 + (unsigned)(s[i] - '0');
				i++;
			}
			o[0] = (char)v;
			return i;
		}
		o[0] = '\\';
		o[1] = c;
		*on = 2;
		return 1;
	}
}

static void
add_ansi(struct xctx *x, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 2 < n && s[i + 1] == 'x' && s[i + 2] == '{') {
			/* $'\x{HHH…}' (bash, after ksh93): every hex digit up to a
			 * '}', the value's low byte */
			size_t j = i + 3;
			unsigned v = 0;
			while (j < n && isxdigit((unsigned char)s[j])) {
				v = v * 16 + (unsigned)(isdigit((unsigned char)s[j])
							    ? s[j] - '0'
							    : (tolower((unsigned char)s[j]) - 'a' + 10));
				v &= 0xfff;
				j++;
			}
			if (j < n && s[j] == '}')
				j++;
			char b = (char)(v & 0xff);
			xadd(x, &b, 1, FQ);
			i = j - 1;
		} else if (s[i] == '\\' && i + 1 < n) {
			char o[SH_ESCAPE_MAX];
			size_t on;
			size_t used = ansi_escape(s + i + 1, n - i - 1, o, &on, false);
			if (on == 1 && o[0] == 0)
				return; /* a NUL ends the $'…' (bash: $'a\0b'c is ac) */
			xadd(x, o, on, FQ);
			i += used;
		} else
			xadd(x, s + i, 1, FQ);
	}
}

/* ---- parameter expansion ---- */

static char *ansi_expand(const char *s);

static void
emit_str(struct xctx *x, const char *s, size_t n, bool dq)
{
	xadd(x, s, n, dq ? FQ : (x->mode == M_FIELDS ? FX : 0));
}

static void
emit_pval(struct xctx *x, struct pval *pv, bool dq)
{
	if (!pv->list) {
		if (pv->s)
			emit_str(x, pv->s, strlen(pv->s), dq);
		return;
	}
	if (pv->n == 0) {
		if (dq && !pv->star)
			x->at_empty = true;
		return;
	}
	if ((dq && pv->star) || x->mode != M_FIELDS) {
		const char *ifs = ifs_of(x->sh);
		char sep[2] = {pv->star ? ifs[0] : ' ', 0};
		for (size_t i = 0; i < pv->n; i++) {
			if (i > 0 && sep[0])
				emit_str(x, sep, 1, dq);
			emit_str(x, pv->v[i], strlen(pv->v[i]), dq);
		}
		return;
	}
	for (size_t i = 0; i < pv->n; i++) {
		if (i > 0)
			xmark(x, FB);
		if (dq)
			xmark(x, FM);
		emit_str(x, pv->v[i], strlen(pv->v[i]), dq);
	}
}

static char *
case_conv(const char *s, const char *pat, int how)
{
	/* how: 1 ^ (first upper), 2 ^^, 3 , , 4 ,, ; pat NULL = all chars */
	char *r = xstrdup(s);
	for (size_t i = 0; r[i]; i++) {
		if (how == 1 || how == 3) {
			if (i > 0)
				break;
		}
		char one[2] = {r[i], 0};
		if (pat && *pat && !pat_match(pat, one))
			continue;
		r[i] = (char)(how <= 2 ? toupper((unsigned char)r[i]) : tolower((unsigned char)r[i]));
	}
	return r;
}

static char *
do_replace(const char *s, const char *pat, const char *rep, int kind)
{
	/* kind 0: first, 1: all, 2: prefix (#), 3: suffix (%) */
	struct sbuf b = {0};
	if (kind == 2) {
		long m = pat_prefix(pat, s, true);
		if (m < 0)
			return xstrdup(s);
		sb_adds(&b, rep);
		sb_adds(&b, s + m);
		return sb_take(&b);
	}
	if (kind == 3) {
		long m = pat_suffix(pat, s, true);
		if (m < 0)
			return xstrdup(s);
		sb_addn(&b, s, (size_t)m);
		sb_adds(&b, rep);
		return sb_take(&b);
	}
	if (!*pat)
		return xstrdup(s);
	return pat_replace(pat, s, rep, kind == 1);
}

/* Find the end of a sub-word inside ${...} at depth, stopping at an
 * unquoted `stop` char; returns index. */
static size_t
find_unquoted(struct sh_shell *sh, const char *s, size_t i, size_t n, char stop)
{
	for (; i < n; i++) {
		char c = s[i];
		if (c == '\\') {
			i++;
			continue;
		}
		if (c == stop)
			return i;
		if (c == '$' && i + 1 < n && s[i + 1] == '\'')
			i = skip_dsq(s, i + 1, n) - 1; /* $'…': a \' inside stays inside */
		else if (c == '\'')
			i = skip_sq(s, i, n) - 1;
		else if (c == '"')
			i = skip_dq(sh, s, i, n) - 1;
		else if (c == '`')
			i = skip_bq(s, i, n) - 1;
		else if (c == '$' && i + 1 < n && (s[i + 1] == '(' || s[i + 1] == '{'))
			i = skip_dollar(sh, s, i, n) - 1;
	}
	return n;
}

static void expand_into(struct xctx *x, const char *s, size_t n, bool dq);
static void expand_param_word(struct xctx *x, const char *w, size_t wn, bool dq);
static size_t tilde_prefix(struct xctx *x, const char *s, size_t n, size_t i);

/* expand_into after a leading unquoted tilde prefix: the word of ${x-~/w}, ${x=~} (not in
 * "…"), the pattern and the replacement of ${x#~} ${x/~/~} (their callers pass dq false:
 * expanded in "…" too), as bash. */
static void
expand_tilde_into(struct xctx *x, const char *s, size_t n, bool dq)
{
	if (!dq && n > 0 && s[0] == '~') {
		size_t j = tilde_prefix(x, s, n, 0);
		s += j;
		n -= j;
	}
	expand_into(x, s, n, dq);
}

static char *
expand_sub(struct sh_shell *sh, const char *s, size_t n, enum mode m, bool dq, bool *err)
{
	struct xctx x = {.sh = sh, .mode = m};
	expand_into(&x, s, n, dq);
	if (x.err)
		*err = true;
	char *r = xb_string(&x, false, NULL);
	xb_free(&x);
	return r;
}

/* The replacement of ${x/p/r}: a tilde prefix expands (bash, in "…" too). */
static char *
expand_rep_sub(struct sh_shell *sh, const char *s, size_t n, bool *err)
{
	struct xctx x = {.sh = sh, .mode = M_STR};
	expand_tilde_into(&x, s, n, false);
	if (x.err)
		*err = true;
	char *r = xb_string(&x, false, NULL);
	xb_free(&x);
	return r;
}

/* A pattern operand: quoted chars escaped. */
static char *
expand_pattern_sub(struct sh_shell *sh, const char *s, size_t n, bool *err)
{
	struct xctx x = {.sh = sh, .mode = M_STR};
	expand_tilde_into(&x, s, n, false);
	if (x.err)
		*err = true;
	char *r = xb_string(&x, false, PAT_SPECIAL);
	xb_free(&x);
	return r;
}

/* An expansion error (a bad substitution, an arithmetic error): bash, outside
 * posix mode, skips the rest of the top-level command and the script goes on
 * (exec.c); in posix mode and as dash it is fatal. */
static void
expand_error_jump(struct sh_shell *sh)
{
	if (sh->jump != J_NONE)
		return;
	if (!sh->opt_posix && !sh->dash_errors && !sh->interactive) {
		sh->status = 1;
		sh->jump = J_TOP;
	} else
		sh_fatal(sh, SH_FATAL_ERROR);
}

static void
bad_subst(struct xctx *x, const char *s, size_t n)
{
	sh_err(x->sh, "${%.*s}: bad substitution", (int)n, s);
	x->err = true;
	expand_error_jump(x->sh);
}

static void
expand_brace_param(struct xctx *x, const char *s, size_t n, bool dq)
{
	/* s: the text between ${ and } */
	struct sh_shell *sh = x->sh;
	size_t i = 0;
	if (sh_stack_exhausted(sh)) {
		x->err = true;
		return;
	}
	bool length = false, indirect = false;
	if (n == 0) {
		bad_subst(x, s, n);
		return;
	}
	if (s[0] == '#' && n > 1 && !(n == 1) &&
	    !(s[1] == '-' || s[1] == '=' || s[1] == '?' || s[1] == '+' || s[1] == ':' ||
	      s[1] == '%' || s[1] == '#' || s[1] == '/') ) {
		length = true;
		i = 1;
	} else if (s[0] == '#' && n == 2 && strchr("?#$!-@*", s[1])) {
		/* ${#?} ${##} ${#-}: the length of that special parameter */
		length = true;
		i = 1;
	} else if (s[0] == '#' && n == 2 && strchr(":/%=+", s[1])) {
		/* ${#:} ${#/} ${#%} ${#=} ${#+}: bash's bad substitution */
		bad_subst(x, s, n);
		return;
	} else if (s[0] == '!' && n > 2 && strchr("-+=:", s[1])) {
		/* ${!-w} ${!:-w} ${!+w} ${!:1}: $! with an operator, no indirection (bash) */
	} else if (s[0] == '!' && n > 1) {
		indirect = true;
		i = 1;
	}
	size_t ns = i;
	if (i < n && (isalpha((unsigned char)s[i]) || s[i] == '_')) {
		while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_'))
			i++;
	} else if (i < n && isdigit((unsigned char)s[i])) {
		while (i < n && isdigit((unsigned char)s[i]))
			i++;
	} else if (i < n && strchr("?#$!-@*", s[i])) {
		i++;
	} else {
		bad_subst(x, s, n);
		return;
	}
	size_t nl = i - ns;
	const char *name = s + ns;
	const char *sub = NULL;
	size_t subn = 0;
	if (i < n && s[i] == '[') {
		size_t j = find_unquoted(sh, s, i + 1, n, ']');
		if (j >= n) {
			bad_subst(x, s, n);
			return;
		}
		sub = s + i + 1;
		subn = j - i - 1;
		i = j + 1;
	}
	if (indirect) {
		if (i == n && (sub && subn == 1 && (sub[0] == '@' || sub[0] == '*'))) {
			/* ${!a[@]}: the indices */
			struct var *v = var_getn(sh, name, nl);
			struct pval pv = {0};
			pv.list = true;
			pv.star = sub[0] == '*';
			size_t c = v ? var_array_count(v) : 0;
			pv.ownv = xmalloc((c + 1) * sizeof(char *));
			if (v && (v->flags & V_ASSOC)) {
				struct strv keys = {0};
				var_elems(v, &keys, NULL);
				for (size_t k = 0; k < keys.n && pv.n < c; k++)
					pv.ownv[pv.n++] = keys.v[k];
				free(keys.v);
			} else if (v && (v->flags & V_ARRAY)) {
				for (size_t k = 0; k < v->narr; k++)
					if (v->arr[k]) {
						char b[32];
						snprintf(b, sizeof b, "%zu", k);
						pv.ownv[pv.n++] = xstrdup(b);
					}
			} else if (v && v->val)
				pv.ownv[pv.n++] = xstrdup("0");
			pv.v = pv.ownv;
			pv.set = pv.n > 0;
			emit_pval(x, &pv, dq);
			pval_free(&pv);
			return;
		}
		if (i == n - 1 && (s[i] == '*' || s[i] == '@') && !sub) {
			/* ${!prefix*}: variable names */
			struct pval pv = {0};
			pv.list = true;
			pv.star = s[i] == '*';
			struct strv names = {0};
			for (int h = 0; h < 256; h++)
				for (struct var *v = sh->vars[h]; v; v = v->next)
					if (strncmp(v->name, name, nl) == 0)
						strv_add(&names, xstrdup(v->name));
			for (size_t a = 1; a < names.n; a++)
				for (size_t b = a; b > 0 && strcmp(names.v[b - 1], names.v[b]) > 0; b--) {
					char *t = names.v[b];
					names.v[b] = names.v[b - 1];
					names.v[b - 1] = t;
				}
			pv.ownv = names.v;
			pv.v = names.v;
			pv.n = names.n;
			if (!pv.ownv)
				pv.ownv = xmalloc(sizeof(char *));
			emit_pval(x, &pv, dq);
			pval_free(&pv);
			return;
		}
	}
	struct pval pv;
	if (get_param(sh, name, nl, sub, subn, &pv) < 0) {
		x->err = true;
		return;
	}
	if (indirect) {
		const char *target = pv.s;
		char *t = target ? xstrdup(target) : NULL;
		pval_free(&pv);
		memset(&pv, 0, sizeof pv);
		if (t) {
			char *br = strchr(t, '[');
			size_t tl = br ? (size_t)(br - t) : strlen(t);
			if (!is_name(t, tl) && !is_special_name(t, tl)) {
				sh_err(sh, "%s: invalid indirect expansion", t);
				free(t);
				x->err = true;
				return;
			}
			const char *tsub = NULL;
			size_t tsubn = 0;
			if (br) {
				char *cl = strrchr(br, ']');
				tsub = br + 1;
				tsubn = cl ? (size_t)(cl - br - 1) : strlen(br + 1);
			}
			int r = get_param(sh, t, tl, tsub, tsubn, &pv);
			if (pv.s && !pv.own) {
				pv.own = xstrdup(pv.s);
				pv.s = pv.own;
			}
			free(t);
			if (r < 0) {
				x->err = true;
				return;
			}
		}
	}
	char namebuf[300];
	snprintf(namebuf, sizeof namebuf, "%.*s", (int)nl, name);
	if (length) {
		if (i != n) {
			bad_subst(x, s, n);
			pval_free(&pv);
			return;
		}
		char b[32];
		if (pv.list)
			snprintf(b, sizeof b, "%zu", pv.n);
		else {
			/* characters, not bytes, in a UTF-8 locale */
			size_t c = 0;
			bool u8 = sh_utf8_locale(sh);
			for (const unsigned char *q = (const unsigned char *)(pv.s ? pv.s : ""); *q; q++)
				if (!u8 || (*q & 0xc0) != 0x80)
					c++;
			snprintf(b, sizeof b, "%zu", c);
			if (!pv.set && sh->opt_u && !is_special_name(name, nl)) {
				sh_err(sh, "%s: unbound variable", namebuf);
				x->err = true;
				sh_fatal(sh, SH_FATAL_UNSET);
				pval_free(&pv);
				return;
			}
		}
		emit_str(x, b, strlen(b), dq);
		pval_free(&pv);
		return;
	}
	if (i == n) {
		/* bash >= 4.4: "$@" and "${a[@]}" of an unset array are no error */
		if (!pv.set && sh->opt_u && !pv.list && !(nl == 1 && name[0] == '!')) {
			if (sub)
				sh_err(sh, "%.*s: unbound variable", (int)n, s);
			else
				sh_err(sh, "%s: unbound variable", namebuf);
			x->err = true;
			sh_fatal(sh, SH_FATAL_UNSET);
			pval_free(&pv);
			return;
		}
		emit_pval(x, &pv, dq);
		pval_free(&pv);
		return;
	}
	/* operators: their words are expanded before the value is used */
	pval_own(&pv);
	const char *op = s + i;
	size_t rest = n - i;
	bool colon = op[0] == ':';
	char o = colon && rest > 1 ? op[1] : op[0];
	if (colon && rest > 1 && strchr("-=?+", op[1])) {
		i += 2;
	} else if (!colon && strchr("-=?+", o)) {
		i += 1;
	} else if (colon) {
		/* ${x:off:len} */
		const char *w = s + i + 1;
		size_t wn = n - i - 1;
		size_t c2 = find_unquoted(sh, w, 0, wn, ':');
		bool err = false;
		char *offs = expand_sub(sh, w, c2, M_STR, false, &err);
		char *lens = c2 < wn ? expand_sub(sh, w + c2 + 1, wn - c2 - 1, M_STR, false, &err)
				     : NULL;
		intmax_t off = 0, len = 0;
		/* an error in the offset or length names the parameter (bash: "x: %: …") */
		const char *who0 = sh->arith_who;
		char *who = xstrndup(name, nl);
		sh->arith_who = who;
		bool aerr = err || arith_eval(sh, offs, &off) < 0 ||
			    (lens && arith_eval(sh, lens, &len) < 0);
		sh->arith_who = who0;
		free(who);
		if (aerr) {
			free(offs);
			free(lens);
			pval_free(&pv);
			x->err = true;
			expand_error_jump(sh);
			return;
		}
		free(offs);
		if (pv.list) {
			/* positional: ${@:1} starts at $1 (offset 0 is $0) */
			struct pval sl = {0};
			sl.list = true;
			sl.star = pv.star;
			char **items = pv.v;
			size_t cnt = pv.n;
			bool positional = !sub;
			struct strv tmpv = {0};
			if (positional) {
				strv_add(&tmpv, xstrdup(sh->arg0));
				for (size_t k = 0; k < pv.n; k++)
					strv_add(&tmpv, xstrdup(pv.v[k]));
				items = tmpv.v;
				cnt = tmpv.n;
			}
			if (off < 0)
				off += (intmax_t)cnt - (positional ? 0 : 0);
			if (off < 0)
				off = (intmax_t)cnt;
			if (positional && off == 0 && false)
				off = 1;
			size_t st = (size_t)off > cnt ? cnt : (size_t)off;
			size_t en = cnt;
			if (lens) {
				if (len < 0) {
					free(lens);
					sh_err(sh, "%jd: substring expression < 0", len);
					x->err = true;
					strv_free(&tmpv);
					pval_free(&pv);
					return;
				}
				en = st + (size_t)len > cnt ? cnt : st + (size_t)len;
			}
			sl.ownv = xmalloc((en - st + 1) * sizeof(char *));
			for (size_t k = st; k < en; k++)
				sl.ownv[sl.n++] = xstrdup(items[k]);
			sl.v = sl.ownv;
			emit_pval(x, &sl, dq);
			pval_free(&sl);
			strv_free(&tmpv);
			free(lens);
			pval_free(&pv);
			return;
		}
		const char *v = pv.s ? pv.s : "";
		intmax_t vl = (intmax_t)strlen(v);
		if (off < 0)
			off += vl;
		if (off < 0 || off > vl) {
			free(lens);
			pval_free(&pv);
			return;
		}
		intmax_t take = vl - off;
		if (lens) {
			if (len < 0) {
				len += vl - off;
				if (len < 0) {
					sh_err(sh, "%s: substring expression < 0", lens);
					free(lens);
					x->err = true;
					pval_free(&pv);
					return;
				}
			}
			if (len < take)
				take = len;
		}
		free(lens);
		emit_str(x, v + off, (size_t)take, dq);
		pval_free(&pv);
		return;
	} else if (o == '#' || o == '%') {
		bool longest = rest > 1 && op[1] == o;
		i += longest ? 2 : 1;
		bool err = false;
		char *pat = expand_pattern_sub(sh, s + i, n - i, &err);
		if (err) {
			free(pat);
			pval_free(&pv);
			x->err = true;
			return;
		}
		struct pval r = {0};
		size_t cnt = pv.list ? pv.n : 1;
		r.list = pv.list;
		r.star = pv.star;
		r.ownv = xmalloc((cnt + 1) * sizeof(char *));
		for (size_t k = 0; k < cnt; k++) {
			const char *v = pv.list ? pv.v[k] : (pv.s ? pv.s : "");
			char *res;
			if (o == '#') {
				long m = pat_prefix(pat, v, longest);
				res = xstrdup(m < 0 ? v : v + m);
			} else {
				long m = pat_suffix(pat, v, longest);
				res = m < 0 ? xstrdup(v) : xstrndup(v, (size_t)m);
			}
			r.ownv[r.n++] = res;
		}
		r.v = r.ownv;
		if (!r.list)
			r.s = r.ownv[0];
		if (pv.set || pv.list)
			emit_pval(x, &r, dq);
		pval_free(&r);
		free(pat);
		pval_free(&pv);
		return;
	} else if (o == '/') {
		int kind = 0;
		i++;
		if (i < n && s[i] == '/') {
			kind = 1;
			i++;
		} else if (i < n && s[i] == '#') {
			kind = 2;
			i++;
		} else if (i < n && s[i] == '%') {
			kind = 3;
			i++;
		}
		/* ${x///p/r}: a pattern's first '/' is the pattern's (bash) */
		size_t sl = find_unquoted(sh, s, kind == 1 && i < n && s[i] == '/' ? i + 1 : i, n, '/');
		bool err = false;
		char *pat = expand_pattern_sub(sh, s + i, sl - i, &err);
		char *rep = sl < n ? expand_rep_sub(sh, s + sl + 1, n - sl - 1, &err) : xstrdup("");
		if (err) {
			free(pat);
			free(rep);
			pval_free(&pv);
			x->err = true;
			return;
		}
		struct pval r = {0};
		size_t cnt = pv.list ? pv.n : 1;
		r.list = pv.list;
		r.star = pv.star;
		r.ownv = xmalloc((cnt + 1) * sizeof(char *));
		for (size_t k = 0; k < cnt; k++) {
			const char *v = pv.list ? pv.v[k] : (pv.s ? pv.s : "");
			r.ownv[r.n++] = do_replace(v, pat, rep, kind);
		}
		r.v = r.ownv;
		if (!r.list)
			r.s = r.ownv[0];
		if (pv.set || pv.list)
			emit_pval(x, &r, dq);
		pval_free(&r);
		free(pat);
		free(rep);
		pval_free(&pv);
		return;
	} else if (o == '^' || o == ',') {
		bool all = rest > 1 && op[1] == o;
		i += all ? 2 : 1;
		bool err = false;
		char *pat = expand_pattern_sub(sh, s + i, n - i, &err);
		int how = o == '^' ? (all ? 2 : 1) : (all ? 4 : 3);
		struct pval r = {0};
		size_t cnt = pv.list ? pv.n : 1;
		r.list = pv.list;
		r.star = pv.star;
		r.ownv = xmalloc((cnt + 1) * sizeof(char *));
		for (size_t k = 0; k < cnt; k++) {
			const char *v = pv.list ? pv.v[k] : (pv.s ? pv.s : "");
			r.ownv[r.n++] = case_conv(v, *pat ? pat : NULL, how);
		}
		r.v = r.ownv;
		if (!r.list)
			r.s = r.ownv[0];
		if (pv.set || pv.list)
			emit_pval(x, &r, dq);
		pval_free(&r);
		free(pat);
		pval_free(&pv);
		return;
	} else if (o == '@' && rest == 2 && strchr("QEPAaUuLK", op[1])) {
		struct var *var = is_special_name(name, nl) ? NULL : var_getn(sh, name, nl);
		char *res = NULL;
		if (op[1] == 'A' || op[1] == 'a' || (op[1] == 'K' && var && pv.list)) {
			/* the variable, not its values */
			if (op[1] == 'a') {
				char attrs[8] = "";
				if (var)
					var_attr_letters(var, attrs);
				res = xstrdup(attrs);
			} else if (op[1] == 'A') {
				if (var && pv.set)
					res = var_decl_text(var, true);
				else
					res = xstrdup("");
			} else {
				/* ${a[@]@K}: key "value" pairs */
				struct strv ks = {0}, vs = {0};
				var_elems(var, &ks, &vs);
				struct sbuf b = {0};
				for (size_t k = 0; k < ks.n; k++) {
					if (k && !(var->flags & V_ASSOC))
						sb_addc(&b, ' ');
					sb_adds(&b, ks.v[k]);
					sb_addc(&b, ' ');
					/* bash: "value" as declare -p writes it */
					sb_addc(&b, '"');
					for (const char *p = vs.v[k]; *p; p++) {
						if (strchr("\"\\$`", *p))
							sb_addc(&b, '\\');
						sb_addc(&b, *p);
					}
					sb_addc(&b, '"');
					if (var->flags & V_ASSOC)
						sb_addc(&b, ' ');
				}
				strv_free(&ks);
				strv_free(&vs);
				res = sb_take(&b);
			}
			if (pv.set || pv.list || (op[1] == 'a' && var))
				emit_str(x, res, strlen(res), dq);
			free(res);
			pval_free(&pv);
			return;
		}
		/* each value on its own */
		struct pval r = {0};
		size_t cnt = pv.list ? pv.n : 1;
		r.list = pv.list;
		r.star = pv.star;
		r.ownv = xmalloc((cnt + 1) * sizeof(char *));
		for (size_t k = 0; k < cnt; k++) {
			const char *v = pv.list ? pv.v[k] : (pv.s ? pv.s : "");
			switch (op[1]) {
			case 'Q':
			case 'K': res = bash_quote(v); break;
			case 'E': res = ansi_expand(v); break;
			case 'U': res = case_conv(v, NULL, 2); break;
			case 'L': res = case_conv(v, NULL, 4); break;
			case 'u': res = case_conv(v, NULL, 1); break;
			default: res = xstrdup(v); break;
			}
			r.ownv[r.n++] = res;
		}
		r.v = r.ownv;
		if (!r.list)
			r.s = r.ownv[0];
		if (pv.set || pv.list)
			emit_pval(x, &r, dq);
		pval_free(&r);
		pval_free(&pv);
		return;
	} else {
		bad_subst(x, s, n);
		pval_free(&pv);
		return;
	}
	/* - = ? + with word s[i..n) */
	bool isnull = !pv.set || (colon && (pv.list ? pv.n == 0 || (pv.n == 1 && !*pv.v[0])
						    : !pv.s || !*pv.s));
	if (pv.list && colon && pv.n > 1)
		isnull = false;
	const char *w = s + i;
	size_t wn = n - i;
	switch (o) {
	case '-':
		if (isnull)
			expand_param_word(x, w, wn, dq);
		else
			emit_pval(x, &pv, dq);
		break;
	case '+':
		if (!isnull)
			expand_param_word(x, w, wn, dq);
		break;
	case '=':
		if (isnull) {
			if (pv.list || is_special_name(name, nl)) {
				sh_err(sh, "$%s: cannot assign in this way", namebuf);
				x->err = true;
				break;
			}
			bool err = false;
			struct xctx xw = {.sh = sh, .mode = M_STR};
			expand_tilde_into(&xw, w, wn, dq);
			if (xw.err)
				err = true;
			char *val = xb_string(&xw, false, NULL);
			xb_free(&xw);
			if (err) {
				free(val);
				x->err = true;
				break;
			}
			int r;
			if (sub) {
				bool e2 = false;
				char *is = expand_sub(sh, sub, subn, M_STR, false, &e2);
				intmax_t idx = 0;
				if (e2 || arith_eval(sh, is, &idx) < 0 || idx < 0)
					r = -1;
				else
					r = var_set_elem(sh, namebuf, (size_t)idx, val);
				free(is);
			} else
				r = var_set(sh, namebuf, val, 0);
			if (r < 0)
				x->err = true;
			else
				emit_str(x, val, strlen(val), dq);
			free(val);
		} else
			emit_pval(x, &pv, dq);
		break;
	case '?':
		if (isnull) {
			bool err = false;
			char *msg = expand_sub(sh, w, wn, M_STR, dq, &err);
			if (wn == 0)
				sh_err(sh, "%s: %s", namebuf,
				       colon ? "parameter null or not set" : "parameter not set");
			else
				sh_err(sh, "%s: %s", namebuf, msg);
			free(msg);
			x->err = true;
			sh_fatal(sh, SH_FATAL_UNSET);
		} else
			emit_pval(x, &pv, dq);
		break;
	default:
		break;
	}
	pval_free(&pv);
}

static void
expand_simple_param(struct xctx *x, const char *name, size_t nl, bool dq)
{
	struct pval pv;
	get_param(x->sh, name, nl, NULL, 0, &pv);
	if (!pv.set && x->sh->opt_u && !(nl == 1 && (name[0] == '@' || name[0] == '*')) &&
	    !(nl == 1 && name[0] == '!')) {
		/* bash names a positional parameter $N here (${N}: N) */
		sh_err(x->sh, "%s%.*s: unbound variable",
		       isdigit((unsigned char)name[0]) ? "$" : "", (int)nl, name);
		x->err = true;
		sh_fatal(x->sh, SH_FATAL_UNSET);
		pval_free(&pv);
		return;
	}
	emit_pval(x, &pv, dq);
	pval_free(&pv);
}

static void
emit_cmdsub(struct xctx *x, const char *text, size_t n, bool dq)
{
	char *out = cmdsub_run(x->sh, text, n);
	if (!out) {
		x->err = true;
		return;
	}
	emit_str(x, out, strlen(out), dq);
	free(out);
}

/* V in decimal into B (>= 21 bytes, NUL-terminated); returns its length. */
static size_t
fmt_intmax(char *b, intmax_t v)
{
	char t[24], *e = t + sizeof t, *o = e;
	uintmax_t u = v < 0 ? (uintmax_t)0 - (uintmax_t)v : (uintmax_t)v;
	do
		*--o = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		*--o = '-';
	size_t n = (size_t)(e - o);
	memcpy(b, o, n);
	b[n] = 0;
	return n;
}

static void
expand_arith(struct xctx *x, const char *e, size_t n, bool dq)
{
	bool err = false;
	char small[128];
	char *s;
	/* Text without quoting or expansions expands to itself (the common
	 * $((i+1))): no expansion pass, no allocation. */
	bool plain = n < sizeof small;
	for (size_t i = 0; plain && i < n; i++)
		if (e[i] == '$' || e[i] == '`' || e[i] == '\'' || e[i] == '"' || e[i] == '\\')
			plain = false;
	if (plain) {
		memcpy(small, e, n);
		small[n] = 0;
		s = small;
	} else {
		s = expand_sub(x->sh, e, n, M_STR, false, &err);
	}
	if (err) {
		free(s);
		x->err = true;
		return;
	}
	intmax_t v;
	int r = arith_eval(x->sh, s, &v);
	if (s != small)
		free(s);
	if (r < 0) {
		x->err = true;
		if (x->sh->jump == J_NONE && x->sh->arith_readonly && !x->sh->opt_posix &&
		    !x->sh->interactive) {
			/* bash: a readonly variable assigned skips the rest of the
			 * top-level command (exec.c), the script goes on */
			x->sh->status = 1;
			x->sh->jump = J_TOP;
		} else if (x->sh->jump != J_EXIT) /* arith_eval's own: an unset variable */
			expand_error_jump(x->sh);
		return;
	}
	char b[32];
	size_t bn = fmt_intmax(b, v);
	emit_str(x, b, bn, dq);
}

/* i at '$'; returns index after the expansion */
static size_t
expand_dollar(struct xctx *x, const char *s, size_t i, size_t n, bool dq)
{
	if (i + 1 >= n) {
		xadd(x, "$", 1, dq ? FQ : 0);
		return i + 1;
	}
	char c = s[i + 1];
	if (c == '{') {
		size_t e = skip_dollar_in(x->sh, s, i, n, dq);
		expand_brace_param(x, s + i + 2, body_len(s, i, 2, e, n, '}'), dq);
		return e;
	}
	if (c == '(') {
		size_t e = skip_dollar(x->sh, s, i, n);
		if (i + 2 < n && s[i + 2] == '(' && e >= 2 && s[e - 1] == ')' && s[e - 2] == ')') {
			/* was it arithmetic? skip_dollar returns j+2 for "))" */
			size_t k = i + 3;
			int d = 0;
			size_t j = k;
			bool arith = false;
			for (; j < n; j++) {
				if (s[j] == '(')
					d++;
				else if (s[j] == ')') {
					if (d == 0) {
						arith = j + 1 < n && s[j + 1] == ')' && j + 2 == e;
						break;
					}
					d--;
				}
			}
			if (arith) {
				expand_arith(x, s + k, j - k, dq);
				return e;
			}
		}
		if (e >= n && parse_cmdsub_end(x->sh, s + i, n - i) < 0) {
			/* unterminated (a here-document's body: the parser never saw it):
			 * bash's message, its line counted from the line after the
			 * command's, and the expansion fails */
			int line = x->sh->lineno + 1;
			for (size_t k = i; k < n; k++)
				line += s[k] == '\n';
			sh_errline_in(x->sh, "command substitution", line,
				      "unexpected EOF while looking for matching `)'");
			x->err = true;
			return e;
		}
		emit_cmdsub(x, s + i + 2, body_len(s, i, 2, e, n, ')'), dq);
		return e;
	}
	if (c == '\'' && (!dq || (x->brace_dq && !x->sh->opt_posix)) && x->mode != M_HEREDOC) {
		/* $'…'; in "${x-word}" too (bash, not in POSIX mode) */
		size_t e = skip_dsq(s, i + 1, n);
		add_ansi(x, s + i + 2, body_len(s, i, 2, e, n, '\''));
		xmark(x, FM);
		return e;
	}
	if (isalpha((unsigned char)c) || c == '_') {
		size_t j = i + 1;
		while (j < n && (isalnum((unsigned char)s[j]) || s[j] == '_'))
			j++;
		expand_simple_param(x, s + i + 1, j - i - 1, dq);
		return j;
	}
	if (isdigit((unsigned char)c) || strchr("?#$!-@*", c)) {
		expand_simple_param(x, s + i + 1, 1, dq);
		return i + 2;
	}
	xadd(x, "$", 1, dq ? FQ : 0);
	return i + 1;
}

static void
expand_backquote(struct xctx *x, const char *s, size_t n, bool dq)
{
	/* s: between the backquotes; \\ \` \$ (and \" in dq) lose the backslash,
	 * and a backslash-newline goes, even inside quotes there (bash) */
	struct sbuf b = {0};
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\n') {
			i++;
			continue;
		}
		if (s[i] == '\\' && i + 1 < n &&
		    (s[i + 1] == '\\' || s[i + 1] == '`' || s[i + 1] == '$' ||
		     (dq && s[i + 1] == '"'))) {
			sb_addc(&b, s[i + 1]);
			i++;
		} else
			sb_addc(&b, s[i]);
	}
	emit_cmdsub(x, b.s ? b.s : "", b.len, dq);
	sb_free(&b);
}

/* Whether expand_into treats C as more than a plain character. */
static inline bool
special_in(const struct xctx *x, char c, bool dq)
{
	switch (c) {
	case '\\':
	case '`':
	case '$':
		return true;
	case '\'':
		return !dq && x->mode != M_HEREDOC;
	case '"':
		return (!dq || x->brace_dq) && x->mode != M_HEREDOC;
	case '<':
	case '>':
		return !dq && x->mode == M_FIELDS; /* <(…) >(…) in a word */
	default:
		return false;
	}
}

static void
expand_into(struct xctx *x, const char *s, size_t n, bool dq)
{
	for (size_t i = 0; i < n && !x->err;) {
		char c = s[i];
		if (!dq && (c == '<' || c == '>') && i + 2 < n && s[i + 1] == '(' &&
		    !x->sh->dash_errors && x->mode != M_HEREDOC && (i == 0 || x->mode == M_FIELDS)) {
			/* <(…) >(…): /dev/fd/N of the pipe's end (exec.c); at a value's start
			 * (x=<(…)) or anywhere in a command's word (--in=<(…)), not in a
			 * here-doc or an arithmetic text */
			size_t e = skip_dollar(x->sh, s, i, n);
			int fd = procsub_open(x->sh, s + i + 2, body_len(s, i, 2, e, n, ')'), c == '>');
			if (fd < 0) {
				x->err = true;
				return;
			}
			char path[32];
			int pl = snprintf(path, sizeof path, "/dev/fd/%d", fd);
			xadd(x, path, (size_t)pl, FQ);
			i = e;
			continue;
		}
		if (c == '\\') {
			if (i + 1 >= n) {
				xadd(x, "\\", 1, dq ? FQ : 0);
				i++;
				continue;
			}
			char nx = s[i + 1];
			if (x->mode == M_HEREDOC && !dq) {
				if (nx == '$' || nx == '`' || nx == '\\') {
					xadd(x, &nx, 1, FQ);
				} else if (nx == '\n') {
				} else {
					xadd(x, s + i, 2, FQ);
				}
				i += 2;
				continue;
			}
			if (dq) {
				if ((x->bs_any && nx != '\n') || (x->brace_dq && nx == '}'))
					xadd(x, &nx, 1, FQ); /* "${x+\}}" is "}" (bash) */
				else if (nx == '$' || nx == '`' || nx == '"' || nx == '\\')
					xadd(x, &nx, 1, FQ);
				else if (nx == '\n') {
				} else
					xadd(x, s + i, 2, FQ);
				i += 2;
				continue;
			}
			if (nx != '\n')
				xadd(x, &nx, 1, FQ);
			i += 2;
			continue;
		}
		if (c == '\'' && !dq && x->mode != M_HEREDOC) {
			size_t e = skip_sq(s, i, n);
			xmark(x, FM);
			xadd(x, s + i + 1, body_len(s, i, 1, e, n, '\''), FQ);
			i = e;
			continue;
		}
		if (c == '"' && (!dq || x->brace_dq) && x->mode != M_HEREDOC) {
			size_t e = skip_dq(x->sh, s, i, n);
			size_t mpos = x->b.n;
			bool save = x->at_empty, save_bdq = x->brace_dq, save_any = x->bs_any;
			x->at_empty = false;
			x->brace_dq = false;
			x->bs_any = dq;
			xmark(x, FM);
			size_t after = x->b.n;
			expand_into(x, s + i + 1, body_len(s, i, 1, e, n, '"'), true);
			x->brace_dq = save_bdq;
			x->bs_any = save_any;
			if (x->at_empty && x->b.n == after && !x->err) {
				/* "$@" with no parameters: no field */
				x->b.n = mpos;
			}
			x->at_empty = save;
			i = e;
			continue;
		}
		if (c == '`') {
			size_t cl = bq_close(s, i, n);
			if (cl == n) {
				/* Only in text the parser did not check (a brace
				 * sequence's '`'): bash keeps a last lone '`' and
				 * refuses one with text after it. */
				if (i + 1 == n) {
					xadd(x, "`", 1, dq ? FQ : 0);
					i = n;
					continue;
				}
				sh_err(x->sh, "bad substitution: no closing \"`\" in %.*s", (int)(n - i),
				       s + i);
				x->err = true;
				x->sh->jump = J_EXIT;
				x->sh->jump_n = 1;
				return;
			}
			expand_backquote(x, s + i + 1, cl - i - 1, dq);
			i = cl + 1;
			continue;
		}
		if (c == '$') {
			i = expand_dollar(x, s, i, n, dq);
			continue;
		}
		/* a run of plain characters at once */
		size_t j = i + 1;
		while (j < n && !special_in(x, s[j], dq))
			j++;
		xadd(x, s + i, j - i, dq ? FQ : (x->litx && x->mode == M_FIELDS ? FX : 0));
		i = j;
	}
}

static void
expand_param_word(struct xctx *x, const char *w, size_t wn, bool dq)
{
	bool save = x->litx, save_bdq = x->brace_dq, save_any = x->bs_any;
	if (!dq)
		x->litx = true;
	else
		x->brace_dq = true;
	x->bs_any = false;
	expand_tilde_into(x, w, wn, dq);
	x->litx = save;
	x->brace_dq = save_bdq;
	x->bs_any = save_any;
}

/* ---- tilde ---- */

static size_t
tilde_prefix(struct xctx *x, const char *s, size_t n, size_t i)
{
	/* s[i] == '~'; expands when the prefix has no quotes; returns new i */
	size_t j = i + 1;
	while (j < n && s[j] != '/' && !(x->assign && s[j] == ':')) {
		if (strchr("'\"\\$`", s[j]))
			return i;
		j++;
	}
	const char *user = s + i + 1;
	size_t ul = j - i - 1;
	const char *home = NULL;
	char *own = NULL;
	if (ul == 0) {
		home = var_value(x->sh, "HOME");
		if (!home)
			home = x->sh->home;
		if (!home) {
			struct passwd *pw = getpwuid(getuid());
			home = pw ? pw->pw_dir : NULL;
		}
	} else if (ul == 1 && user[0] == '+') {
		home = var_value(x->sh, "PWD");
	} else if (ul == 1 && user[0] == '-') {
		home = var_value(x->sh, "OLDPWD");
	} else {
		own = xstrndup(user, ul);
		struct passwd *pw = getpwnam(own);
		free(own);
		own = NULL;
		home = pw ? pw->pw_dir : NULL;
	}
	if (!home)
		return i;
	xadd(x, home, strlen(home), FQ);
	return j;
}

static size_t assign_prefix(const char *s);

/* Expand one raw word into x (tilde + the rest). */
static void
expand_word_raw(struct xctx *x, const char *s, size_t n)
{
	size_t i = 0;
	if (n > 0 && s[0] == '~' && x->mode != M_HEREDOC) {
		size_t j = tilde_prefix(x, s, n, 0);
		if (j == 0) {
			xadd(x, "~", 1, 0);
			j = 1;
		}
		i = j;
	}
	size_t ak;
	bool asg = x->assign;
	if (x->assign_word && !x->assign && (ak = assign_prefix(s)) > 0) {
		/* bash (not in posix mode): `echo foo=bar:~` expands the tilde after
		 * the '=' and each ':' as in an assignment; splitting and globbing
		 * stay as for any word */
		expand_into(x, s, ak, false);
		i = ak;
		asg = x->assign = true;
		if (i < n && s[i] == '~') {
			size_t j = tilde_prefix(x, s, n, i);
			if (j == i) {
				xadd(x, "~", 1, 0);
				j = i + 1;
			}
			i = j;
		}
	}
	if (asg) {
		/*
		 * An assignment's value (the caller passes the text after NAME=,
		 * whose leading '~' was handled above): a tilde prefix also after
		 * each unquoted ':'. A '=' in the value is plain text (bash:
		 * x=a=~/b keeps its '~'), and a construct is never cut in two.
		 */
		size_t st = i;
		for (size_t k = st; k < n; k++) {
			char c = s[k];
			if (c == '\\') {
				k++;
				continue;
			}
			if (c == '\'')
				k = skip_sq(s, k, n) - 1;
			else if (c == '$' && k + 1 < n && s[k + 1] == '\'')
				k = skip_dsq(s, k + 1, n) - 1;
			else if (c == '"')
				k = skip_dq(x->sh, s, k, n) - 1;
			else if (c == '`')
				k = skip_bq(s, k, n) - 1;
			else if (c == '$' && k + 1 < n && (s[k + 1] == '(' || s[k + 1] == '{'))
				k = skip_dollar(x->sh, s, k, n) - 1;
			else if (c == ':' && k + 1 < n && s[k + 1] == '~') {
				expand_into(x, s + st, k + 1 - st, false);
				size_t j = tilde_prefix(x, s, n, k + 1);
				if (j == k + 1) {
					xadd(x, "~", 1, 0);
					j = k + 2;
				}
				st = j;
				k = j - 1;
			}
		}
		expand_into(x, s + st, n - st, false);
		return;
	}
	expand_into(x, s + i, n - i, false);
}

/* ---- brace expansion ---- */

/*
 * Brace expansion works on the word's source text, left to right: each
 * brace expression multiplies the words built so far by its items (a comma
 * list's items, themselves brace-expanded, or a sequence), and the text
 * after it is read once, never together with an item (bash: a generated '\'
 * or '`' does not quote what follows it for brace expansion). Sequential
 * expressions are a loop; only nested ones recurse, at most
 * SH_MAX_PARSE_DEPTH deep. The words are capped at SH_MAX_FIELDS and their
 * bytes at SH_MAX_EXPANSION.
 */
struct bword {
	struct sbuf b;
	bool gen_bs; /* ends with a '\' that a sequence generated */
};

struct bwords {
	struct bword *v;
	size_t n, cap;
	size_t bytes;
};

enum brace_err { BRACE_OK, BRACE_TOO_MANY, BRACE_TOO_LARGE, BRACE_TOO_DEEP };

static void
bwords_free(struct bwords *l)
{
	for (size_t i = 0; i < l->n; i++)
		sb_free(&l->v[i].b);
	free(l->v);
	*l = (struct bwords){0};
}

static enum brace_err
bwords_add(struct bwords *l, const char *s, size_t n, bool gen_bs)
{
	if (l->n >= SH_MAX_FIELDS)
		return BRACE_TOO_MANY;
	if (n > SH_MAX_EXPANSION - l->bytes)
		return BRACE_TOO_LARGE;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 8;
		l->v = xrealloc(l->v, l->cap * sizeof *l->v);
	}
	struct bword *w = &l->v[l->n++];
	*w = (struct bword){.gen_bs = gen_bs};
	sb_addn(&w->b, s, n);
	l->bytes += n;
	return BRACE_OK;
}

/* Every word of L followed by each word of ITEMS, in order, into L. */
static enum brace_err
bwords_product(struct bwords *l, const struct bwords *items)
{
	if (items->n == 1 && !items->v[0].b.len && !items->v[0].gen_bs)
		return BRACE_OK;
	if (items->n && l->n > SH_MAX_FIELDS / items->n)
		return BRACE_TOO_MANY;
	struct bwords r = {0};
	enum brace_err e = BRACE_OK;
	for (size_t i = 0; i < l->n && e == BRACE_OK; i++) {
		for (size_t k = 0; k < items->n && e == BRACE_OK; k++) {
			const struct bword *a = &l->v[i], *b = &items->v[k];
			if (b->b.len > SIZE_MAX - a->b.len) {
				e = BRACE_TOO_LARGE;
				break;
			}
			e = bwords_add(&r, a->b.s, a->b.len, a->gen_bs);
			if (e != BRACE_OK)
				break;
			struct bword *w = &r.v[r.n - 1];
			if (b->b.len > SH_MAX_EXPANSION - r.bytes) {
				e = BRACE_TOO_LARGE;
				break;
			}
			sb_addn(&w->b, b->b.s, b->b.len);
			r.bytes += b->b.len;
			if (b->b.len)
				w->gen_bs = b->gen_bs;
		}
	}
	if (e != BRACE_OK) {
		bwords_free(&r);
		return e;
	}
	bwords_free(l);
	*l = r;
	return BRACE_OK;
}

/* Appends S (N bytes of source text) to every word of L. */
static enum brace_err
bwords_append(struct bwords *l, const char *s, size_t n)
{
	if (!n)
		return BRACE_OK;
	if (l->n && n > (SH_MAX_EXPANSION - l->bytes) / l->n)
		return BRACE_TOO_LARGE;
	for (size_t i = 0; i < l->n; i++) {
		sb_addn(&l->v[i].b, s, n);
		l->v[i].gen_bs = false;
	}
	l->bytes += n * l->n;
	return BRACE_OK;
}

static size_t skip_quoted(struct sh_shell *sh, const char *w, size_t i, size_t n);

/* w[i] is the '$' of "${": the index after the '}' that closes it when
 * the braces inside are counted, as bash's brace expansion counts them
 * ({${x:-{c,d}},e} has two items); N when none does. */
static size_t
skip_dollar_brace_nested(struct sh_shell *sh, const char *w, size_t i, size_t n)
{
	int d = 1;
	for (size_t j = i + 2; j < n; j++) {
		size_t q = skip_quoted(sh, w, j, n);
		if (q != j) {
			j = q - 1;
			continue;
		}
		if (w[j] == '{')
			d++;
		else if (w[j] == '}' && --d == 0)
			return j + 1;
	}
	return n;
}

/* w[i] opens a quoted or substituted construct (\x '…' "…" `…` $'…' $(…)
 * ${…}): the index after it; else i. Brace expansion sees no brace or
 * comma inside one. */
static size_t
skip_quoted(struct sh_shell *sh, const char *w, size_t i, size_t n)
{
	switch (w[i]) {
	case '\\':
		return i + 2 <= n ? i + 2 : n;
	case '\'':
		return skip_sq(w, i, n);
	case '"':
		return skip_dq(sh, w, i, n);
	case '`':
		return skip_bq(w, i, n);
	case '$':
		if (i + 1 < n && w[i + 1] == '{')
			return skip_dollar_brace_nested(sh, w, i, n);
		if (i + 1 < n && w[i + 1] == '(')
			return skip_dollar(sh, w, i, n);
		if (i + 1 < n && w[i + 1] == '\'')
			return skip_dsq(w, i + 1, n);
		return i;
	default:
		return i;
	}
}

/* A sequence {A..B[..STEP]} (the text between the braces, INNER): its items
 * into ITEMS; false when INNER is not one (then the braces are text). */
static bool
brace_sequence(const char *inner, size_t len, struct bwords *items, enum brace_err *err)
{
	char buf[256];
	if (len >= sizeof buf)
		return false;
	memcpy(buf, inner, len);
	buf[len] = 0;
	char *dd = strstr(buf, "..");
	if (!dd)
		return false;
	*dd = 0;
	char *a = buf, *b = dd + 2, *stp = strstr(b, "..");
	if (stp) {
		*stp = 0;
		stp += 2;
	}
	char *e1, *e2, *e3 = NULL;
	errno = 0;
	long long x1 = strtoll(a, &e1, 10), x2 = strtoll(b, &e2, 10);
	long long step = stp ? strtoll(stp, &e3, 10) : 1;
	if (errno == ERANGE)
		return false; /* bash: out of range, the braces stay text */
	bool step_ok = !stp || (*stp && !*e3);
	bool numeric = *a && *b && !*e1 && !*e2 && step_ok;
	bool alpha = strlen(a) == 1 && strlen(b) == 1 && isalpha((unsigned char)a[0]) &&
		     isalpha((unsigned char)b[0]) && step_ok;
	if (!numeric && !alpha)
		return false;
	if (alpha) {
		x1 = (unsigned char)a[0];
		x2 = (unsigned char)b[0];
	}
	/* the step's sign is ignored, 0 is 1 (bash); in unsigned arithmetic:
	 * the ends may be LLONG_MIN and LLONG_MAX */
	unsigned long long ustep = step == 0 ? 1 : step < 0 ? 0ULL - (unsigned long long)step
							   : (unsigned long long)step;
	bool up = x1 <= x2;
	unsigned long long span = up ? (unsigned long long)x2 - (unsigned long long)x1
				     : (unsigned long long)x1 - (unsigned long long)x2;
	unsigned long long count = span / ustep + 1;
	if (count > SH_MAX_FIELDS) {
		*err = BRACE_TOO_MANY;
		return true;
	}
	int width = 0;
	if (numeric) {
		const char *aa = a[0] == '-' ? a + 1 : a;
		const char *bb = b[0] == '-' ? b + 1 : b;
		if ((aa[0] == '0' && aa[1]) || (bb[0] == '0' && bb[1])) {
			width = (int)strlen(a);
			if ((int)strlen(b) > width)
				width = (int)strlen(b);
		}
	}
	for (unsigned long long k = 0; k < count; k++) {
		unsigned long long d = k * ustep; /* <= span: no wrap */
		long long v = (long long)(up ? (unsigned long long)x1 + d : (unsigned long long)x1 - d);
		char num[64];
		int nn;
		if (alpha)
			nn = snprintf(num, sizeof num, "%c", (char)v);
		else
			nn = snprintf(num, sizeof num, "%0*lld", width, v);
		*err = bwords_add(items, num, (size_t)nn, alpha && v == '\\');
		if (*err != BRACE_OK)
			return true;
	}
	return true;
}

static enum brace_err brace_words(struct sh_shell *sh, const char *w, size_t n, unsigned depth,
				  struct bwords *out);

/* The brace expression w[i..j] (w[i] == '{', w[j] == '}'): its items into
 * ITEMS; false when it is none (no top-level ',' and no sequence). */
static bool
brace_items(struct sh_shell *sh, const char *w, size_t i, size_t j, unsigned depth,
	    struct bwords *items, enum brace_err *err)
{
	bool comma = false;
	int d = 0;
	for (size_t k = i; k < j && !comma; k++) {
		size_t q = skip_quoted(sh, w, k, j);
		if (q != k) {
			k = q - 1;
			continue;
		}
		if (w[k] == '{')
			d++;
		else if (w[k] == '}')
			d--;
		else if (w[k] == ',' && d == 1)
			comma = true;
	}
	if (!comma)
		return brace_sequence(w + i + 1, j - i - 1, items, err);
	size_t st = i + 1;
	d = 0;
	for (size_t k = i + 1; k <= j; k++) {
		size_t q = k < j ? skip_quoted(sh, w, k, j) : k;
		if (q != k) {
			k = q - 1;
			continue;
		}
		if (k < j && w[k] == '{')
			d++;
		else if (k < j && w[k] == '}')
			d--;
		else if (k == j || (w[k] == ',' && d == 0)) {
			struct bwords one = {0};
			*err = brace_words(sh, w + st, k - st, depth + 1, &one);
			for (size_t m = 0; m < one.n && *err == BRACE_OK; m++)
				*err = bwords_add(items, one.v[m].b.s ? one.v[m].b.s : "",
						  one.v[m].b.len, one.v[m].gen_bs);
			bwords_free(&one);
			if (*err != BRACE_OK)
				return true;
			st = k + 1;
		}
	}
	return true;
}

/* The brace expansion of w[0..n) into OUT (which it starts). */
static enum brace_err
brace_words(struct sh_shell *sh, const char *w, size_t n, unsigned depth, struct bwords *out)
{
	if (depth > SH_MAX_PARSE_DEPTH || sh_stack_low())
		return BRACE_TOO_DEEP;
	enum brace_err e = bwords_add(out, "", 0, false);
	size_t lit = 0; /* start of the text not yet appended */
	for (size_t i = 0; i < n && e == BRACE_OK; i++) {
		size_t q = skip_quoted(sh, w, i, n);
		if (q != i) {
			i = q - 1;
			continue;
		}
		if (w[i] != '{')
			continue;
		/* the matching '}' */
		int d = 0;
		size_t j = i;
		for (; j < n; j++) {
			size_t qq = skip_quoted(sh, w, j, n);
			if (qq != j) {
				j = qq - 1;
				continue;
			}
			if (w[j] == '{')
				d++;
			else if (w[j] == '}' && --d == 0)
				break;
		}
		if (j >= n)
			continue; /* unmatched: text, and the scan goes on inside (bash) */
		struct bwords items = {0};
		if (!brace_items(sh, w, i, j, depth, &items, &e)) {
			bwords_free(&items);
			continue; /* not an expression: braces inside it may be */
		}
		if (e == BRACE_OK)
			e = bwords_append(out, w + lit, i - lit);
		if (e == BRACE_OK)
			e = bwords_product(out, &items);
		bwords_free(&items);
		lit = j + 1;
		i = j;
	}
	if (e == BRACE_OK)
		e = bwords_append(out, w + lit, n - lit);
	return e;
}

static int
brace_expand(struct sh_shell *sh, const char *w, struct strv *out)
{
	struct bwords l = {0};
	enum brace_err e = brace_words(sh, w, strlen(w), 0, &l);
	for (size_t i = 0; i < l.n && e == BRACE_OK; i++) {
		/* a generated '\' that ends the word is removed as a quote
		 * would be (bash), leaving an empty word: written as '' */
		if (l.v[i].gen_bs) {
			l.v[i].b.len--;
			sb_adds(&l.v[i].b, "''");
		}
		strv_add(out, l.v[i].b.s ? sb_take(&l.v[i].b) : xstrdup(""));
	}
	bwords_free(&l);
	switch (e) {
	case BRACE_OK:
		return 0;
	case BRACE_TOO_MANY:
		sh_err(sh, "too many words (max %u)", SH_MAX_FIELDS);
		break;
	case BRACE_TOO_LARGE:
		sh_err(sh, "brace expansion too large (max %u bytes)", SH_MAX_EXPANSION);
		break;
	case BRACE_TOO_DEEP:
		sh_err(sh, "brace expansion: nesting too deep (max %u)", SH_MAX_PARSE_DEPTH);
		break;
	default:
		break;
	}
	strv_free(out);
	return -1;
}

static bool
may_have_brace(const char *s)
{
	const char *o = strchr(s, '{');
	return o && strchr(o, '}');
}

/* ---- splitting and globbing ---- */

/*
 * The field being built: its characters and their flags in scratch space
 * sized once for the whole expansion (a field is never longer), so adding
 * a character is two stores; a finished field is copied out with one
 * allocation. `glob`: it holds an unquoted * ? or [ (only then are the
 * flags read again, to build the pattern).
 */
struct field {
	char *s;
	unsigned char *f;
	size_t n;
	bool have;
	bool glob;
};

/* Append S (N bytes, flags F or all FLAG when F is NULL) as one field to
 * OUT, globbed when it holds an unquoted pattern character. */
static void
push_field(struct sh_shell *sh, const char *s, const unsigned char *f, unsigned char flag,
	   size_t n, bool glob, struct strv *out, bool *toomany)
{
	if (out->n >= SH_MAX_FIELDS) {
		*toomany = true;
		return;
	}
	if (glob && !sh->opt_f) {
		struct sbuf pat = {0};
		for (size_t i = 0; i < n; i++) {
			char c = s[i];
			unsigned char fl = f ? f[i] : flag;
			/* (a backslash an unquoted expansion gave quotes the next character,
			 * as bash 5.2: v='\*' globs a literal '*') */
			if ((fl & FQ) && strchr(PAT_SPECIAL, c))
				sb_addc(&pat, '\\');
			sb_addc(&pat, c);
		}
		size_t before = out->n;
		bool meta = pat_has_meta(pat.s);
		if (meta)
			glob_expand(sh, pat.s, out);
		sb_free(&pat);
		if (out->n > before || (meta && sh->nullglob))
			return;
	}
	strv_add(out, xstrndup(s, n));
}

static void
field_push(struct sh_shell *sh, struct field *fd, struct strv *out, bool *toomany)
{
	push_field(sh, fd->s, fd->f, 0, fd->n, fd->glob, out, toomany);
	fd->n = 0;
	fd->have = false;
	fd->glob = false;
}

static inline bool
glob_char(char c)
{
	return c == '*' || c == '?' || c == '[' ||
	       ((c == '@' || c == '+' || c == '!') && sh_current && sh_current->extglob);
}

static void
split_fields(struct sh_shell *sh, struct xctx *x, struct strv *out, bool *toomany)
{
	const char *ifs = NULL; /* looked up at the first character an expansion produced */
	char sbuf[XB_INLINE];
	unsigned char fbuf[XB_INLINE];
	struct field fd = {.s = sbuf, .f = fbuf};
	if (x->b.n > XB_INLINE) {
		fd.s = xmalloc(x->b.n);
		fd.f = xmalloc(x->b.n);
	}
	bool after_ws = false; /* a whitespace delimiter just ended a field */
	for (size_t i = 0; i < x->b.n; i++) {
		unsigned char f = x->b.f[i];
		char c = x->b.c[i];
		if (f & FB) {
			if (fd.have)
				field_push(sh, &fd, out, toomany);
			after_ws = false;
			if (*toomany)
				break;
			continue;
		}
		if (f & FM) {
			fd.have = true;
			continue;
		}
		if ((f & FX) && c) {
			if (!ifs)
				ifs = ifs_of(sh);
			if (strchr(ifs, c)) {
				bool ws = c == ' ' || c == '\t' || c == '\n';
				if (ws) {
					if (fd.have) {
						field_push(sh, &fd, out, toomany);
						after_ws = true;
					}
				} else {
					if (fd.have || !after_ws)
						field_push(sh, &fd, out, toomany);
					after_ws = false;
					/* skip following IFS whitespace */
					while (i + 1 < x->b.n && (x->b.f[i + 1] & FX) &&
					       (x->b.c[i + 1] == ' ' || x->b.c[i + 1] == '\t' ||
						x->b.c[i + 1] == '\n') &&
					       strchr(ifs, x->b.c[i + 1]))
						i++;
					after_ws = false;
				}
				if (*toomany)
					break;
				continue;
			}
		}
		after_ws = false;
		fd.s[fd.n] = c;
		fd.f[fd.n++] = f;
		if (!(f & FQ) && glob_char(c))
			fd.glob = true;
		fd.have = true;
	}
	if (fd.have && !*toomany)
		field_push(sh, &fd, out, toomany);
	if (fd.s != sbuf) {
		free(fd.s);
		free(fd.f);
	}
}

/*
 * A word of plain text only (no quoting, no expansion, no brace, no tilde):
 * itself one field (globbed if it holds * ? [), without building an
 * expansion. Returns false when the word needs the full path.
 */
static bool
literal_word(struct sh_shell *sh, const char *w, struct strv *out, bool *toomany)
{
	if (w[0] == '~' || w[0] == 0)
		return false;
	bool glob = false;
	size_t n = 0;
	for (;; n++) {
		char c = w[n];
		if (c == 0)
			break;
		if (c == '$' || c == '`' || c == '\'' || c == '"' || c == '\\' || c == '{' || c == '~')
			return false;
		if ((c == '<' || c == '>') && w[n + 1] == '(')
			return false; /* a process substitution (expand_into) */
		if (glob_char(c))
			glob = true;
	}
	push_field(sh, w, NULL, 0, n, glob, out, toomany);
	return true;
}

/* NAME= or NAME+= at the start of s: its length (0: none) */
static size_t
assign_prefix(const char *s)
{
	size_t i = 0;
	if (!isalpha((unsigned char)s[0]) && s[0] != '_')
		return 0;
	while (isalnum((unsigned char)s[i]) || s[i] == '_')
		i++;
	if (s[i] == '+')
		i++;
	return s[i] == '=' ? i + 1 : 0;
}

/* bash's declaration commands: their NAME=VALUE arguments are assignments */
static bool
declaration_command(const char *s)
{
	return !strcmp(s, "export") || !strcmp(s, "readonly") || !strcmp(s, "declare") ||
	       !strcmp(s, "typeset") || !strcmp(s, "local");
}

int
expand_words(struct sh_shell *sh, struct word *w, struct strv *out)
{
	bool toomany = false;
	size_t first = out->n;
	for (; w; w = w->next) {
		size_t ak;
		if (out->n > first && declaration_command(out->v[first]) &&
		    (ak = assign_prefix(w->s)) > 0 && w->s[ak] != '(') {
			/* `export P=$x:~/bin`: expanded as an assignment's value (tilde
			 * after '=' and ':', no splitting, no globbing), as bash */
			char *v = expand_str(sh, w->s + ak, true);
			if (!v)
				return -1;
			if (out->n >= SH_MAX_FIELDS) {
				free(v);
				toomany = true;
				break;
			}
			struct sbuf b = {0};
			sb_addn(&b, w->s, ak);
			sb_adds(&b, v);
			free(v);
			strv_add(out, sb_take(&b));
			continue;
		}
		if (literal_word(sh, w->s, out, &toomany)) {
			if (toomany)
				break;
			continue;
		}
		struct strv braced = {0};
		char *one[2] = {w->s, NULL};
		bool has_brace = may_have_brace(w->s);
		if (has_brace) {
			if (brace_expand(sh, w->s, &braced) < 0)
				return -1;
		} else
			braced = (struct strv){.v = one, .n = 1};
		for (size_t k = 0; k < braced.n && !toomany; k++) {
			struct xctx x = {.sh = sh, .mode = M_FIELDS, .assign_word = !sh->opt_posix};
			expand_word_raw(&x, braced.v[k], strlen(braced.v[k]));
			if (x.err) {
				xb_free(&x);
				if (has_brace)
					strv_free(&braced);
				return -1;
			}
			split_fields(sh, &x, out, &toomany);
			xb_free(&x);
		}
		if (has_brace)
			strv_free(&braced);
		if (toomany)
			break;
	}
	if (toomany) {
		sh_err(sh, "too many words (max %u)", SH_MAX_FIELDS);
		return -1;
	}
	return 0;
}

static char *
expand_to_str(struct sh_shell *sh, const char *raw, enum mode m, bool assign, bool pattern)
{
	struct xctx x = {.sh = sh, .mode = m, .assign = assign};
	if (m == M_HEREDOC)
		expand_into(&x, raw, strlen(raw), false);
	else
		expand_word_raw(&x, raw, strlen(raw));
	if (x.err) {
		xb_free(&x);
		return NULL;
	}
	char *r = xb_string(&x, !pattern, pattern ? PAT_SPECIAL : NULL);
	xb_free(&x);
	return r;
}

char *
expand_str(struct sh_shell *sh, const char *raw, bool assign)
{
	return expand_to_str(sh, raw, M_STR, assign, false);
}

char *
expand_pat(struct sh_shell *sh, const char *raw)
{
	return expand_to_str(sh, raw, M_STR, false, true);
}

/*
 * The right side of =~ as an ERE: a quoted character matches itself — a '\\'
 * before the ERE's special ones, except inside a bracket expression, where a
 * backslash is itself a member: there it stands as it is (bash: [[ x =~ ["."] ]]
 * is [.]). Only unquoted '[' and ']' open and close a bracket expression.
 */
static char *
xb_regex(const struct xctx *x)
{
	static const char esc[] = ".[]()*+?{}|^$\\";
	const char *c = x->b.c;
	const unsigned char *f = x->b.f;
	struct sbuf b = {0};
	bool in = false;   /* inside [ ] */
	size_t first = 0;  /* output length where a leading ']' is a member */
	for (size_t i = 0; i < x->b.n; i++) {
		if (f[i] & (FB | FM))
			continue;
		bool q = f[i] & FQ;
		char ch = c[i];
		if (!in) {
			if (q && strchr(esc, ch))
				sb_addc(&b, '\\');
			sb_addc(&b, ch);
			if (!q && ch == '[') {
				in = true;
				first = b.len;
				/* [^ : the ']' after it is still a member */
				if (i + 1 < x->b.n && c[i + 1] == '^' && !(f[i + 1] & (FB | FM | FQ))) {
					sb_addc(&b, '^');
					i++;
					first = b.len;
				}
			}
			continue;
		}
		if (!q && ch == '[' && i + 1 < x->b.n && strchr(":=.", c[i + 1]) &&
		    !(f[i + 1] & FQ)) {
			/* [:class:] [=e=] [.c.]: to its closing pair */
			char d = c[i + 1];
			size_t j = i + 2;
			while (j + 1 < x->b.n && !(c[j] == d && c[j + 1] == ']'))
				j++;
			if (j + 1 < x->b.n) {
				for (size_t k = i; k <= j + 1; k++)
					if (!(f[k] & (FB | FM)))
						sb_addc(&b, c[k]);
				i = j + 1;
				continue;
			}
		}
		sb_addc(&b, ch);
		if (!q && ch == ']' && b.len - 1 != first)
			in = false;
	}
	return sb_take(&b);
}

char *
expand_re(struct sh_shell *sh, const char *raw)
{
	struct xctx x = {.sh = sh, .mode = M_STR};
	expand_word_raw(&x, raw, strlen(raw));
	if (x.err) {
		xb_free(&x);
		return NULL;
	}
	char *r = xb_regex(&x);
	xb_free(&x);
	return r;
}

char *
expand_heredoc(struct sh_shell *sh, const char *body)
{
	return expand_to_str(sh, body, M_HEREDOC, false, false);
}

char *
bash_quote(const char *s)
{
	bool ctl = false;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			ctl = true;
	struct sbuf b = {0};
	if (!ctl) {
		sb_addc(&b, '\'');
		for (const char *p = s; *p; p++) {
			if (*p == '\'')
				sb_adds(&b, "'\\''");
			else
				sb_addc(&b, *p);
		}
		sb_addc(&b, '\'');
		return sb_take(&b);
	}
	sb_adds(&b, "$'");
	for (const char *p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;
		const char *e = NULL;
		switch (c) {
		case '\a': e = "\\a"; break;
		case '\b': e = "\\b"; break;
		case 27: e = "\\E"; break;
		case '\f': e = "\\f"; break;
		case '\n': e = "\\n"; break;
		case '\r': e = "\\r"; break;
		case '\t': e = "\\t"; break;
		case '\v': e = "\\v"; break;
		case '\\': e = "\\\\"; break;
		case '\'': e = "\\'"; break;
		default: break;
		}
		if (e)
			sb_adds(&b, e);
		else if (c < 0x20 || c == 0x7f) {
			char o[8];
			snprintf(o, sizeof o, "\\%03o", c);
			sb_adds(&b, o);
		} else
			sb_addc(&b, (char)c);
	}
	sb_addc(&b, '\'');
	return sb_take(&b);
}

/* S with its backslash escapes expanded as in $'…' (${x@E}); malloc'd */
static char *
ansi_expand(const char *s)
{
	struct sbuf b = {0};
	size_t n = strlen(s);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n) {
			char o[SH_ESCAPE_MAX];
			size_t on;
			i += ansi_escape(s + i + 1, n - i - 1, o, &on, false);
			sb_addn(&b, o, on);
		} else
			sb_addc(&b, s[i]);
	}
	return sb_take(&b);
}

char *
shell_quote(const char *s)
{
	bool plain = *s != 0;
	for (const char *p = s; *p; p++)
		if (!(isalnum((unsigned char)*p) || strchr("_-./=:,+@%^", *p)))
			plain = false;
	if (plain)
		return xstrdup(s);
	struct sbuf b = {0};
	sb_addc(&b, '\'');
	for (const char *p = s; *p; p++) {
		if (*p == '\'')
			sb_adds(&b, "'\\''");
		else
			sb_addc(&b, *p);
	}
	sb_addc(&b, '\'');
	return sb_take(&b);
}
