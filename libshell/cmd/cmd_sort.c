/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_sort.c — box-shell's own sort, GNU sort's C-locale
 * ordering: -b -d -f -g -h -n -V -r keys (-k POS1[,POS2] with per-key
 * modifiers), -t, -s, -u, -c/-C, -o (written after all input was read, so
 * it may name an input), -z; a stable merge sort whose last resort is the
 * bytes of the whole line (unless -s or -u), as GNU's.
 * Trusts: nothing in the input or the arguments.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "cmd_text.h"
#include "cmdutil.h"

struct key {
	size_t sf, sc;          /* start field (1-based), char (1-based, 0 = 1) */
	size_t ef, ec;          /* end field (0 = end of line), char (0 = end of field) */
	bool skip_start, skip_end; /* -b for start / end */
	bool numeric, general, human, version, fold, reverse, dict, nonprint;
	bool has_mods;
};

struct line {
	const char *p;
	size_t len;
};

struct sorter {
	struct key *keys;
	size_t nkeys;
	struct key global;
	int tab;                /* -1: blank-separated */
	bool stable, unique;
};

static bool
is_blank(unsigned char ch)
{
	return ch == ' ' || ch == '\t';
}

/* The [b, e) of a key in a line. */
static void
key_span(const struct sorter *s, const struct key *k, const struct line *l, size_t *b, size_t *e)
{
	const char *p = l->p, *end = l->p + l->len;
	const char *ptr = p;
	/* start */
	for (size_t f = 1; f < k->sf && ptr < end; f++) {
		if (s->tab >= 0) {
			const char *t = memchr(ptr, s->tab, (size_t)(end - ptr));
			ptr = t ? t + 1 : end;
		} else {
			while (ptr < end && is_blank((unsigned char)*ptr))
				ptr++;
			while (ptr < end && !is_blank((unsigned char)*ptr))
				ptr++;
		}
	}
	if (k->skip_start)
		while (ptr < end && is_blank((unsigned char)*ptr))
			ptr++;
	size_t sc = k->sc ? k->sc - 1 : 0;
	ptr = (size_t)(end - ptr) > sc ? ptr + sc : end;
	/* end */
	const char *eptr = end;
	if (k->ef) {
		eptr = p;
		for (size_t f = 1; f < k->ef && eptr < end; f++) {
			if (s->tab >= 0) {
				const char *t = memchr(eptr, s->tab, (size_t)(end - eptr));
				eptr = t ? t + 1 : end;
			} else {
				while (eptr < end && is_blank((unsigned char)*eptr))
					eptr++;
				while (eptr < end && !is_blank((unsigned char)*eptr))
					eptr++;
			}
		}
		if (k->ec == 0) {
			/* to the end of field ef */
			if (s->tab >= 0) {
				const char *t = memchr(eptr, s->tab, (size_t)(end - eptr));
				eptr = t ? t : end;
			} else {
				while (eptr < end && is_blank((unsigned char)*eptr))
					eptr++;
				while (eptr < end && !is_blank((unsigned char)*eptr))
					eptr++;
			}
		} else {
			if (k->skip_end)
				while (eptr < end && is_blank((unsigned char)*eptr))
					eptr++;
			eptr = (size_t)(end - eptr) > k->ec ? eptr + k->ec : end;
		}
	}
	if (eptr < ptr)
		eptr = ptr;
	*b = (size_t)(ptr - p);
	*e = (size_t)(eptr - p);
}

/* Compare two decimal numbers as GNU's -n does (no thousands separator). */
static int
numcmp(const char *a, size_t an, const char *b, size_t bn)
{
	size_t i = 0, j = 0;
	while (i < an && is_blank((unsigned char)a[i]))
		i++;
	while (j < bn && is_blank((unsigned char)b[j]))
		j++;
	bool na = i < an && a[i] == '-', nb = j < bn && b[j] == '-';
	if (na)
		i++;
	if (nb)
		j++;
	/* integer parts without leading zeros */
	while (i < an && a[i] == '0')
		i++;
	while (j < bn && b[j] == '0')
		j++;
	size_t ai = i, bi = j;
	while (i < an && isdigit((unsigned char)a[i]))
		i++;
	while (j < bn && isdigit((unsigned char)b[j]))
		j++;
	size_t al = i - ai, bl = j - bi;
	/* fractions */
	size_t af = i, bf = j, afl = 0, bfl = 0;
	if (i < an && a[i] == '.') {
		af = ++i;
		while (i < an && isdigit((unsigned char)a[i]))
			i++;
		afl = i - af;
	}
	if (j < bn && b[j] == '.') {
		bf = ++j;
		while (j < bn && isdigit((unsigned char)b[j]))
			j++;
		bfl = j - bf;
	}
	while (afl > 0 && a[af + afl - 1] == '0')
		afl--;
	while (bfl > 0 && b[bf + bfl - 1] == '0')
		bfl--;
	bool za = al == 0 && afl == 0, zb = bl == 0 && bfl == 0;
	if (za)
		na = false;
	if (zb)
		nb = false;
	if (na != nb)
		return na ? -1 : 1;
	int sign = na ? -1 : 1;
	if (al != bl)
		return al < bl ? -sign : sign;
	int c = memcmp(a + ai, b + bi, al);
	if (c)
		return c < 0 ? -sign : sign;
	size_t fl = afl < bfl ? afl : bfl;
	c = memcmp(a + af, b + bf, fl);
	if (c)
		return c < 0 ? -sign : sign;
	if (afl != bfl)
		return afl < bfl ? -sign : sign;
	return 0;
}

static int
human_rank(const char *p, size_t n)
{
	size_t i = 0;
	while (i < n && is_blank((unsigned char)p[i]))
		i++;
	if (i < n && p[i] == '-')
		i++;
	while (i < n && (isdigit((unsigned char)p[i]) || p[i] == '.'))
		i++;
	if (i >= n)
		return 0;
	const char *units = "KMGTPEZYRQ";
	char u = p[i] == 'k' ? 'K' : p[i];
	const char *f = strchr(units, u);
	return f && u ? (int)(f - units) + 1 : 0;
}

static int
humancmp(const char *a, size_t an, const char *b, size_t bn)
{
	/* sign first, then the unit, then the number */
	size_t i = 0, j = 0;
	while (i < an && is_blank((unsigned char)a[i]))
		i++;
	while (j < bn && is_blank((unsigned char)b[j]))
		j++;
	bool na = i < an && a[i] == '-', nb = j < bn && b[j] == '-';
	int sa = na ? -1 : 1, sb = nb ? -1 : 1;
	int c0 = numcmp(a, an, "0", 1), c1 = numcmp(b, bn, "0", 1);
	if (c0 == 0)
		sa = 0;
	if (c1 == 0)
		sb = 0;
	if (sa != sb)
		return sa < sb ? -1 : 1;
	int ra = human_rank(a, an), rb = human_rank(b, bn);
	if (ra != rb)
		return (ra < rb ? -1 : 1) * (sa < 0 ? -1 : 1);
	return numcmp(a, an, b, bn);
}

static int
gencmp(const char *a, size_t an, const char *b, size_t bn)
{
	char ta[128], tb[128];
	size_t la = an < sizeof(ta) - 1 ? an : sizeof(ta) - 1;
	size_t lb = bn < sizeof(tb) - 1 ? bn : sizeof(tb) - 1;
	memcpy(ta, a, la);
	ta[la] = 0;
	memcpy(tb, b, lb);
	tb[lb] = 0;
	char *ea, *eb;
	long double x = strtold(ta, &ea), y = strtold(tb, &eb);
	bool va = ea != ta, vb = eb != tb;
	if (!va || !vb)
		return va == vb ? 0 : va ? 1 : -1;
	bool nx = x != x, ny = y != y;
	if (nx || ny)
		return nx == ny ? 0 : nx ? -1 : 1;
	return x < y ? -1 : x > y ? 1 : 0;
}

/* Debian version order of characters: ~ before the end, letters before
 * the rest (gnulib's filevercmp). */
static int
ver_order(const char *s, size_t n, size_t i)
{
	if (i >= n)
		return 0;
	unsigned char c = (unsigned char)s[i];
	if (isdigit(c))
		return 0;
	if (isalpha(c))
		return c;
	if (c == '~')
		return -1;
	return (int)c + 256;
}

static int
verrevcmp(const char *a, size_t an, const char *b, size_t bn)
{
	size_t i = 0, j = 0;
	while (i < an || j < bn) {
		int first_diff = 0;
		while ((i < an && !isdigit((unsigned char)a[i])) ||
		       (j < bn && !isdigit((unsigned char)b[j]))) {
			int ac = ver_order(a, an, i), bc = ver_order(b, bn, j);
			if (ac != bc)
				return ac - bc;
			i++;
			j++;
		}
		while (i < an && a[i] == '0')
			i++;
		while (j < bn && b[j] == '0')
			j++;
		while (i < an && isdigit((unsigned char)a[i]) && j < bn &&
		       isdigit((unsigned char)b[j])) {
			if (!first_diff)
				first_diff = a[i] - b[j];
			i++;
			j++;
		}
		if (i < an && isdigit((unsigned char)a[i]))
			return 1;
		if (j < bn && isdigit((unsigned char)b[j]))
			return -1;
		if (first_diff)
			return first_diff;
	}
	return 0;
}

/* The length of s without its file suffixes ((\.[A-Za-z~][A-Za-z0-9~]*)*$). */
static size_t
file_prefix_len(const char *s, size_t n)
{
	/* Strip trailing ".suffix" runs, each a letter or '~' then [A-Za-z0-9~]*. */
	size_t e = n;
	for (;;) {
		size_t k = e;
		while (k > 0 && (isalnum((unsigned char)s[k - 1]) || s[k - 1] == '~'))
			k--;
		if (k == 0 || s[k - 1] != '.' || k == e ||
		    !(isalpha((unsigned char)s[k]) || s[k] == '~'))
			break;
		e = k - 1;
	}
	return e;
}

static int
filevercmp_n(const char *a, size_t an, const char *b, size_t bn)
{
	if (an == bn && memcmp(a, b, an) == 0)
		return 0;
	if (an == 0)
		return -1;
	if (bn == 0)
		return 1;
	bool adot = an == 1 && a[0] == '.', bdot = bn == 1 && b[0] == '.';
	if (adot || bdot)
		return adot ? -1 : 1;
	bool add = an == 2 && a[0] == '.' && a[1] == '.', bdd = bn == 2 && b[0] == '.' && b[1] == '.';
	if (add || bdd)
		return add ? -1 : 1;
	bool ah = a[0] == '.', bh = b[0] == '.';
	if (ah != bh)
		return ah ? -1 : 1;
	if (ah) {
		a++, an--, b++, bn--;
	}
	size_t ap = file_prefix_len(a, an), bp = file_prefix_len(b, bn);
	int r = (ap == bp && memcmp(a, b, ap) == 0) ? 0 : verrevcmp(a, ap, b, bp);
	return r ? r : verrevcmp(a, an, b, bn);
}

static int
textcmp(const struct key *k, const char *a, size_t an, const char *b, size_t bn)
{
	if (!k->fold && !k->dict && !k->nonprint) {
		size_t n = an < bn ? an : bn;
		int c = memcmp(a, b, n);
		if (c)
			return c;
		return an < bn ? -1 : an > bn ? 1 : 0;
	}
	size_t i = 0, j = 0;
	for (;;) {
		while (i < an && ((k->dict && !(isalnum((unsigned char)a[i]) || is_blank((unsigned char)a[i]))) ||
				  (k->nonprint && !isprint((unsigned char)a[i]))))
			i++;
		while (j < bn && ((k->dict && !(isalnum((unsigned char)b[j]) || is_blank((unsigned char)b[j]))) ||
				  (k->nonprint && !isprint((unsigned char)b[j]))))
			j++;
		if (i >= an || j >= bn)
			return (i < an) - (j < bn);
		unsigned char x = (unsigned char)a[i], y = (unsigned char)b[j];
		if (k->fold) {
			x = (unsigned char)toupper(x);
			y = (unsigned char)toupper(y);
		}
		if (x != y)
			return x < y ? -1 : 1;
		i++;
		j++;
	}
}

static int
key_compare(const struct key *k, const char *a, size_t an, const char *b, size_t bn)
{
	int r;
	if (k->numeric)
		r = numcmp(a, an, b, bn);
	else if (k->human)
		r = humancmp(a, an, b, bn);
	else if (k->general)
		r = gencmp(a, an, b, bn);
	else if (k->version)
		r = filevercmp_n(a, an, b, bn);
	else
		r = textcmp(k, a, an, b, bn);
	return k->reverse ? -r : r;
}

static int
compare(const struct sorter *s, const struct line *a, const struct line *b)
{
	if (s->nkeys == 0) {
		const struct key *k = &s->global;
		size_t ab = 0, bb = 0;
		if (k->skip_start) {
			while (ab < a->len && is_blank((unsigned char)a->p[ab]))
				ab++;
			while (bb < b->len && is_blank((unsigned char)b->p[bb]))
				bb++;
		}
		int r = key_compare(k, a->p + ab, a->len - ab, b->p + bb, b->len - bb);
		if (r || s->stable || s->unique)
			return r;
	} else {
		for (size_t i = 0; i < s->nkeys; i++) {
			size_t ab, ae, bb, be;
			key_span(s, &s->keys[i], a, &ab, &ae);
			key_span(s, &s->keys[i], b, &bb, &be);
			int r = key_compare(&s->keys[i], a->p + ab, ae - ab, b->p + bb, be - bb);
			if (r)
				return r;
		}
		if (s->stable || s->unique)
			return 0;
	}
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->p, b->p, n);
	if (!c)
		c = a->len < b->len ? -1 : a->len > b->len ? 1 : 0;
	return s->global.reverse ? -c : c;
}

static void
merge_sort(const struct sorter *s, struct line *v, struct line *tmp, size_t n)
{
	if (n < 2)
		return;
	if (n <= 8) {
		for (size_t i = 1; i < n; i++) {
			struct line x = v[i];
			size_t j = i;
			while (j > 0 && compare(s, &v[j - 1], &x) > 0) {
				v[j] = v[j - 1];
				j--;
			}
			v[j] = x;
		}
		return;
	}
	size_t h = n / 2;
	merge_sort(s, v, tmp, h);
	merge_sort(s, v + h, tmp, n - h);
	if (compare(s, &v[h - 1], &v[h]) <= 0)
		return;
	memcpy(tmp, v, h * sizeof(*v));
	size_t i = 0, j = h, k = 0;
	while (i < h && j < n)
		v[k++] = compare(s, &v[j], &tmp[i]) < 0 ? v[j++] : tmp[i++];
	while (i < h)
		v[k++] = tmp[i++];
}

/* -k F[.C][OPTS][,F[.C][OPTS]] */
static bool
parse_key(const char *spec, struct key *k)
{
	const char *p = spec;
	char *end;
	*k = (struct key){ 0 };
	errno = 0;
	unsigned long v = strtoul(p, &end, 10);
	if (end == p || v == 0 || errno)
		return false;
	k->sf = v;
	p = end;
	if (*p == '.') {
		v = strtoul(p + 1, &end, 10);
		if (end == p + 1 || v == 0)
			return false;
		k->sc = v;
		p = end;
	}
	for (; *p && *p != ','; p++) {
		switch (*p) {
		case 'b': k->skip_start = true; break;
		case 'd': k->dict = true; break;
		case 'f': k->fold = true; break;
		case 'g': k->general = true; break;
		case 'h': k->human = true; break;
		case 'i': k->nonprint = true; break;
		case 'n': k->numeric = true; break;
		case 'r': k->reverse = true; break;
		case 'V': k->version = true; break;
		default: return false;
		}
		k->has_mods = true;
	}
	if (*p == ',') {
		p++;
		v = strtoul(p, &end, 10);
		if (end == p || v == 0)
			return false;
		k->ef = v;
		p = end;
		if (*p == '.') {
			v = strtoul(p + 1, &end, 10);
			if (end == p + 1)
				return false;
			k->ec = v;
			p = end;
		}
		for (; *p; p++) {
			switch (*p) {
			case 'b': k->skip_end = true; break;
			case 'd': k->dict = true; break;
			case 'f': k->fold = true; break;
			case 'g': k->general = true; break;
			case 'h': k->human = true; break;
			case 'i': k->nonprint = true; break;
			case 'n': k->numeric = true; break;
			case 'r': k->reverse = true; break;
			case 'V': k->version = true; break;
			default: return false;
			}
			k->has_mods = true;
		}
	}
	return true;
}

int
sh_cmd_sort(struct sh_cmd *c, int argc, char **argv)
{
	static const struct sh_longopt lo[] = {
		{ "ignore-leading-blanks", SH_NO_ARG, 'b' }, { "dictionary-order", SH_NO_ARG, 'd' },
		{ "ignore-case", SH_NO_ARG, 'f' }, { "general-numeric-sort", SH_NO_ARG, 'g' },
		{ "human-numeric-sort", SH_NO_ARG, 'h' }, { "ignore-nonprinting", SH_NO_ARG, 'i' },
		{ "numeric-sort", SH_NO_ARG, 'n' }, { "reverse", SH_NO_ARG, 'r' },
		{ "version-sort", SH_NO_ARG, 'V' }, { "check", SH_OPT_ARG, 'c' },
		{ "key", SH_REQ_ARG, 'k' }, { "output", SH_REQ_ARG, 'o' },
		{ "stable", SH_NO_ARG, 's' }, { "field-separator", SH_REQ_ARG, 't' },
		{ "unique", SH_NO_ARG, 'u' }, { "zero-terminated", SH_NO_ARG, 'z' },
		{ "buffer-size", SH_REQ_ARG, 'S' }, { "parallel", SH_REQ_ARG, 'P' },
		{ "temporary-directory", SH_REQ_ARG, 'T' }, { "help", SH_NO_ARG, 'H' }, { 0 },
	};
	struct sorter s = { .tab = -1 };
	const char *output = NULL;
	int check = 0; /* 1 -c, 2 -C */
	char sep = '\n';
	struct key *keys = NULL;
	size_t nkeys = 0;
	int status = 0;
	struct sh_opt g;
	sh_opt_init(&g, c, argc, argv, "bcCdfghik:mMno:rsS:t:T:uVzR", lo);
	int o;
	while ((o = sh_opt_next(&g)) != -1) {
		switch (o) {
		case 'b': s.global.skip_start = s.global.skip_end = true; break;
		case 'd': s.global.dict = true; break;
		case 'f': s.global.fold = true; break;
		case 'g': s.global.general = true; break;
		case 'h': s.global.human = true; break;
		case 'i': s.global.nonprint = true; break;
		case 'n': s.global.numeric = true; break;
		case 'r': s.global.reverse = true; break;
		case 'V': s.global.version = true; break;
		case 'c': check = 1; break;
		case 'C': check = 2; break;
		case 'm': break;
		case 'S': case 'T': case 'P': break;
		case 'M': case 'R':
			sh_cmd_error(c, 2, "-%c is not supported", o);
			goto fail;
		case 'k': {
			struct key *nk = realloc(keys, (nkeys + 1) * sizeof(*nk));
			if (!nk)
				goto fail;
			keys = nk;
			if (g.arg[0] == '0' && (g.arg[1] == '\0' || g.arg[1] == ',' || g.arg[1] == '.')) {
				sh_cmd_error(c, 2, "field number is zero: invalid field specification %s",
					     sh_qname(g.arg, true));
				goto fail;
			}
			if (!(g.arg[0] >= '0' && g.arg[0] <= '9')) {
				sh_cmd_error(c, 2, "invalid number at field start: invalid count at "
					     "start of %s", sh_qname(g.arg, true));
				goto fail;
			}
			if (!parse_key(g.arg, &keys[nkeys])) {
				sh_cmd_error(c, 2, "invalid key specification %s", sh_qname(g.arg, true));
				goto fail;
			}
			nkeys++;
			break;
		}
		case 'o': output = g.arg; break;
		case 's': s.stable = true; break;
		case 't':
			if (strlen(g.arg) != 1) {
				if (!strcmp(g.arg, "\\0"))
					s.tab = '\0';
				else {
					sh_cmd_error(c, 2, "multi-character tab %s", sh_qname(g.arg, true));
					goto fail;
				}
			} else {
				if (s.tab >= 0 && s.tab != (unsigned char)g.arg[0]) {
					sh_cmd_error(c, 2, "incompatible tabs");
					goto fail;
				}
				s.tab = (unsigned char)g.arg[0];
			}
			break;
		case 'u': s.unique = true; break;
		case 'z': sep = '\0'; break;
		case 'H':
			sh_out_printf(c->out_buf,
				      "Usage: sort [OPTION]... [FILE]...\nbox-shell's own sort; supported "
				      "options: -b -d -f -g -h -i -n -r -V -k POS1[,POS2] -t SEP -s -u -c -C "
				      "-o FILE -z -m -S -T --parallel\n");
			sh_opt_done(&g);
			free(keys);
			return sh_cmd_finish(c, 0);
		default:
			sh_cmd_usage_error(c, 2, NULL);
			goto fail;
		}
	}
	/* Keys without modifiers inherit the global ones. */
	for (size_t i = 0; i < nkeys; i++) {
		if (!keys[i].has_mods) {
			bool sb = keys[i].skip_start, se = keys[i].skip_end;
			size_t sf = keys[i].sf, sc = keys[i].sc, ef = keys[i].ef, ec = keys[i].ec;
			keys[i] = s.global;
			keys[i].sf = sf, keys[i].sc = sc, keys[i].ef = ef, keys[i].ec = ec;
			keys[i].skip_start |= sb;
			keys[i].skip_end |= se;
		}
	}
	s.keys = keys;
	s.nkeys = nkeys;
	char *dash[] = { "-" };
	char **files = g.n_operands ? g.operands : dash;
	int nfiles = g.n_operands ? g.n_operands : 1;
	if (check && nfiles > 1) {
		sh_cmd_error(c, 2, "extra operand %s not allowed with -%c", sh_qname(files[1], true),
			     check == 1 ? 'c' : 'C');
		goto fail;
	}
	/* Read everything. */
	char **datas = calloc((size_t)nfiles, sizeof(char *));
	size_t *lens = calloc((size_t)nfiles, sizeof(size_t));
	struct line *lines = NULL;
	size_t nl = 0, capl = 0;
	status = 2; /* until all input was read */
	if (!datas || !lens)
		goto fail_free;
	for (int i = 0; i < nfiles; i++) {
		int fd;
		int r = sh_cmd_open_input(c, files[i], &fd);
		if (r < 0) {
			sh_cmd_error(c, 2, "cannot read: %s: %s", sh_qname(files[i], false), strerror(-r));
			status = 2;
			goto fail_free;
		}
		int e = sh_read_fd_all(fd, c->interrupted, &datas[i], &lens[i]);
		if (r)
			close(fd);
		if (e < 0) {
			if (e != -EINTR)
				sh_cmd_error(c, 2, "read failed: %s: %s", sh_qname(files[i], false),
					     strerror(-e));
			status = 2;
			goto fail_free;
		}
		const char *p = datas[i], *end = datas[i] + lens[i];
		while (p < end) {
			const char *q = memchr(p, sep, (size_t)(end - p));
			size_t len = q ? (size_t)(q - p) : (size_t)(end - p);
			if (nl == capl) {
				size_t nc = capl ? capl * 2 : 1024;
				struct line *nv = realloc(lines, nc * sizeof(*nv));
				if (!nv)
					goto fail_free;
				lines = nv;
				capl = nc;
			}
			lines[nl++] = (struct line){ p, len };
			p = q ? q + 1 : end;
		}
	}
	status = 0;
	if (check) {
		for (size_t i = 1; i < nl; i++) {
			int r = compare(&s, &lines[i - 1], &lines[i]);
			if (r > 0 || (s.unique && r == 0)) {
				if (check == 1)
					sh_cmd_error(c, 1, "%s:%zu: disorder: %.*s", files[0], i + 1,
						     (int)lines[i].len, lines[i].p);
				status = 1;
				break;
			}
		}
		goto done;
	}
	struct line *tmp = malloc((nl / 2 + 1) * sizeof(*tmp));
	if (!tmp)
		goto fail_free;
	merge_sort(&s, lines, tmp, nl);
	free(tmp);
	struct sh_out fout, *out = c->out_buf;
	int ofd = -1;
	if (output) {
		ofd = sh_fs_open(c->fs, output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (ofd < 0) {
			sh_cmd_error(c, 2, "open failed: %s: %s", output, strerror(-ofd));
			status = 2;
			goto fail_free;
		}
		sh_out_init(&fout, ofd);
		out = &fout;
	}
	for (size_t i = 0; i < nl && !sh_cmd_stopped(c); i++) {
		if (s.unique && i > 0 && compare(&s, &lines[i - 1], &lines[i]) == 0)
			continue;
		sh_out_write(out, lines[i].p, lines[i].len);
		sh_out_write(out, &sep, 1);
	}
	if (output) {
		if (sh_out_release(&fout) < 0) {
			sh_cmd_error(c, 2, "write failed: %s: %s", output, strerror(-fout.error));
			status = 2;
		}
		close(ofd);
	}
done:
fail_free:
	if (datas)
		for (int i = 0; i < nfiles; i++)
			free(datas[i]);
	free(datas);
	free(lens);
	free(lines);
	free(keys);
	sh_opt_done(&g);
	return sh_cmd_finish(c, status);
fail:
	free(keys);
	sh_opt_done(&g);
	return sh_cmd_finish(c, 2);
}
