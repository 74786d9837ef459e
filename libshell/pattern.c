/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pattern.c — shell patterns: `* ? [...]` with ranges,
 * `[!...]`/`[^...]` and `[:class:]`, a backslash quoting the next character;
 * used by case, [[ == ]], ${x#p} ${x%p} ${x/p/r} and pathname expansion;
 * with shopt extglob (and always in [[ ]]) also ?(…) *(…) +(…) @(…) !(…).
 * Globbing enumerates each directory through sh_fs_opendir, so every
 * directory read is an fs:read enumerate decision (fsops.h); a denied or
 * unreadable directory simply matches nothing, as in bash. No `**`.
 *
 * Trusts: nothing in patterns or names. Matching is iterative with one
 * backtrack point per '*', so it is O(n*m) at worst, never exponential;
 * prefix, suffix and replacement searches are one NFA pass each, O(n*m).
 * An extglob pattern is matched by backtracking over its groups with a step
 * budget (PAT_EXT_STEPS): past it the pattern matches nothing, never a hang.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sh.h"

/* POSIX's names of collating symbols (the C locale's), for [.NAME.] */
static const struct {
	const char *name;
	unsigned char c;
} collsyms[] = {
	{"NUL", 0}, {"alert", 7}, {"backspace", 8}, {"tab", 9}, {"newline", 10},
	{"vertical-tab", 11}, {"form-feed", 12}, {"carriage-return", 13}, {"ESC", 27},
	{"space", ' '}, {"exclamation-mark", '!'}, {"quotation-mark", '"'},
	{"number-sign", '#'}, {"dollar-sign", '$'}, {"percent-sign", '%'}, {"ampersand", '&'},
	{"apostrophe", '\''}, {"left-parenthesis", '('}, {"right-parenthesis", ')'},
	{"asterisk", '*'}, {"plus-sign", '+'}, {"comma", ','}, {"hyphen", '-'},
	{"hyphen-minus", '-'}, {"period", '.'}, {"full-stop", '.'}, {"slash", '/'},
	{"solidus", '/'}, {"zero", '0'}, {"one", '1'}, {"two", '2'}, {"three", '3'},
	{"four", '4'}, {"five", '5'}, {"six", '6'}, {"seven", '7'}, {"eight", '8'},
	{"nine", '9'}, {"colon", ':'}, {"semicolon", ';'}, {"less-than-sign", '<'},
	{"equals-sign", '='}, {"greater-than-sign", '>'}, {"question-mark", '?'},
	{"commercial-at", '@'}, {"left-square-bracket", '['}, {"backslash", '\\'},
	{"reverse-solidus", '\\'}, {"right-square-bracket", ']'}, {"circumflex", '^'},
	{"circumflex-accent", '^'}, {"underscore", '_'}, {"low-line", '_'},
	{"grave-accent", '`'}, {"left-brace", '{'}, {"left-curly-bracket", '{'},
	{"vertical-line", '|'}, {"right-brace", '}'}, {"right-curly-bracket", '}'},
	{"tilde", '~'}, {"DEL", 127},
};

/*
 * One element of a bracket expression at *pp, moved past it: a character
 * (a '\\' quoting the next), a collating symbol [.c.] or [.NAME.], or an
 * equivalence class [=c=] (in the C locale the character itself). -1: a
 * symbol that names no character (it matches nothing).
 */
static int
bracket_elem(const char **pp)
{
	const char *p = *pp;
	if (p[0] == '[' && (p[1] == '.' || p[1] == '=') && p[2]) {
		char close[3] = {p[1], ']', 0};
		const char *q = p + 2;
		const char *e = strstr(q + 1, close);
		if (e) {
			size_t n = (size_t)(e - q);
			*pp = e + 2;
			if (n == 1)
				return (unsigned char)*q;
			if (p[1] == '.')
				for (size_t i = 0; i < sizeof collsyms / sizeof collsyms[0]; i++)
					if (strlen(collsyms[i].name) == n && !memcmp(collsyms[i].name, q, n))
						return collsyms[i].c;
			return -1;
		}
	}
	int c = (unsigned char)*p;
	if (c == '\\' && p[1]) {
		p++;
		c = (unsigned char)*p;
	}
	*pp = p + 1;
	return c;
}

/* Match a bracket expression at p (after '['); sets *end past ']'. -1: not a
 * bracket expression (treat '[' literally). */
static int
match_bracket(const char *p, unsigned char c, const char **end)
{
	bool neg = false;
	if (*p == '!' || *p == '^') {
		neg = true;
		p++;
	}
	bool ok = false;
	bool first = true;
	while (*p && (first || *p != ']')) {
		first = false;
		if (p[0] == '[' && p[1] == ':') {
			const char *q = strstr(p + 2, ":]");
			if (q) {
				size_t n = (size_t)(q - (p + 2));
				const char *cl = p + 2;
				int m = 0;
#define CL(name, fn) else if (n == sizeof(name) - 1 && memcmp(cl, name, n) == 0) m = fn(c) != 0;
				if (0) {
				}
				CL("alpha", isalpha)
				CL("digit", isdigit)
				CL("alnum", isalnum)
				CL("upper", isupper)
				CL("lower", islower)
				CL("space", isspace)
				CL("blank", isblank)
				CL("punct", ispunct)
				CL("print", isprint)
				CL("graph", isgraph)
				CL("cntrl", iscntrl)
				CL("xdigit", isxdigit)
				CL("ascii", isascii)
#undef CL
				if (m)
					ok = true;
				p = q + 2;
				continue;
			}
		}
		int lo = bracket_elem(&p);
		int hi = lo;
		if (p[0] == '-' && p[1] && p[1] != ']') {
			p++;
			hi = bracket_elem(&p);
		}
		/* an invalid collating symbol as an end of a range: the range
		 * matches nothing (bash) */
		if (lo >= 0 && hi >= 0 && c >= lo && c <= hi)
			ok = true;
	}
	if (*p != ']')
		return -1;
	*end = p + 1;
	return ok != neg;
}

static bool pat_match_plain(const char *p, const char *s);

/* ---- extglob ---- */

#define PAT_EXT_STEPS (1L << 22)

bool
pat_extglob(void)
{
	return sh_current && (sh_current->extglob || sh_current->in_dbrack > 0);
}

/* P at '(' of a group: its matching ')', or NULL. */
static const char *
ext_close(const char *p)
{
	int depth = 0;
	for (; *p; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			continue;
		}
		if (*p == '[') {
			const char *e;
			if (match_bracket(p + 1, 0, &e) >= 0) {
				p = e - 1;
				continue;
			}
		}
		if (*p == '(')
			depth++;
		else if (*p == ')' && --depth == 0)
			return p;
	}
	return NULL;
}

static bool
is_ext_start(const char *p)
{
	return (*p == '?' || *p == '*' || *p == '+' || *p == '@' || *p == '!') && p[1] == '(' &&
	       ext_close(p + 1);
}

/* Whether P holds an extglob group (and extglob is on). */
static bool
has_ext(const char *p)
{
	if (!pat_extglob())
		return false;
	for (; *p; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			continue;
		}
		if (is_ext_start(p))
			return true;
	}
	return false;
}

struct xm {
	long budget;
};

static bool xm_match(struct xm *m, const char *p, const char *pe, const char *s, const char *se);

/* Whether one of the alternatives in [a, ae) (split at top-level '|')
 * matches [s, se) whole. */
static bool
xm_alts(struct xm *m, const char *a, const char *ae, const char *s, const char *se)
{
	const char *st = a;
	int depth = 0;
	for (const char *p = a; m->budget >= 0; p++) {
		if (p == ae || (*p == '|' && depth == 0)) {
			if (xm_match(m, st, p, s, se))
				return true;
			if (p == ae)
				return false;
			st = p + 1;
			continue;
		}
		if (*p == '\\' && p + 1 < ae)
			p++;
		else if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
	}
	return false;
}

/* Whether the group OP(a…ae) matches [s, se) whole. */
static bool
xm_group(struct xm *m, char op, const char *a, const char *ae, const char *s, const char *se)
{
	if (--m->budget < 0)
		return false;
	switch (op) {
	case '@': return xm_alts(m, a, ae, s, se);
	case '?': return s == se || xm_alts(m, a, ae, s, se);
	case '!': return !xm_alts(m, a, ae, s, se);
	case '*':
		if (s == se)
			return true;
		/* fall through */
	case '+':
		/* one alternative's match, then the group again (a non-empty first
		 * part: an empty one would not advance) */
		for (const char *k = se; k > s && m->budget >= 0; k--)
			if (xm_alts(m, a, ae, s, k) &&
			    (k == se || xm_group(m, '*', a, ae, k, se)))
				return true;
		return false;
	default: return false;
	}
}

static bool
xm_match(struct xm *m, const char *p, const char *pe, const char *s, const char *se)
{
	while (p < pe) {
		if (--m->budget < 0)
			return false;
		if (is_ext_start(p)) {
			const char *cl = ext_close(p + 1);
			if (cl && cl < pe) {
				for (const char *k = se;; k--) {
					if (xm_group(m, *p, p + 2, cl, s, k) && xm_match(m, cl + 1, pe, k, se))
						return true;
					if (k == s || m->budget < 0)
						return false;
				}
			}
		}
		if (*p == '*') {
			while (p < pe && *p == '*' && !is_ext_start(p))
				p++;
			if (p == pe)
				return true;
			for (const char *k = s; k <= se && m->budget >= 0; k++)
				if (xm_match(m, p, pe, k, se))
					return true;
			return false;
		}
		if (s == se)
			return false;
		if (*p == '?') {
			p++;
			s++;
			continue;
		}
		if (*p == '[') {
			const char *e;
			int r = match_bracket(p + 1, (unsigned char)*s, &e);
			if (r == 1 && e <= pe) {
				p = e;
				s++;
				continue;
			}
			if (r == 0)
				return false;
		}
		if (*p == '\\' && p + 1 < pe)
			p++;
		if (*p != *s)
			return false;
		p++;
		s++;
	}
	return s == se;
}

static bool
ext_match_n(struct xm *m, const char *p, const char *s, size_t n)
{
	return m->budget >= 0 && xm_match(m, p, p + strlen(p), s, s + n);
}

bool
pat_match(const char *p, const char *s)
{
	if (has_ext(p)) {
		struct xm m = {.budget = PAT_EXT_STEPS};
		return ext_match_n(&m, p, s, strlen(s));
	}
	return pat_match_plain(p, s);
}

static bool
pat_match_plain(const char *p, const char *s)
{
	const char *star_p = NULL, *star_s = NULL;
	for (;;) {
		if (*p == '*') {
			while (*p == '*')
				p++;
			if (!*p)
				return true;
			star_p = p;
			star_s = s;
			continue;
		}
		if (*s) {
			if (*p == '?') {
				p++;
				s++;
				continue;
			}
			if (*p == '[') {
				const char *e;
				int m = match_bracket(p + 1, (unsigned char)*s, &e);
				if (m == 1) {
					p = e;
					s++;
					continue;
				}
				if (m == -1 && *s == '[') {
					p++;
					s++;
					continue;
				}
			} else if (*p == '\\' && p[1]) {
				if (p[1] == *s) {
					p += 2;
					s++;
					continue;
				}
			} else if (*p && *p == *s) {
				p++;
				s++;
				continue;
			}
		} else if (!*p) {
			return true;
		}
		if (star_p && *star_s) {
			p = star_p;
			s = ++star_s;
			continue;
		}
		return false;
	}
}

/*
 * Prefix, suffix and leftmost-longest searches run the pattern as an NFA
 * over its tokens (a character, '?', a bracket expression, '*'), all the
 * candidate lengths at once: O(n*m) for one search where trying each
 * length with pat_match would be O(n^2*m) (a longest prefix of a long
 * value) or worse (replacing each match of a leading star pattern). The
 * tokens mean exactly what pat_match reads.
 */
enum ptok_kind { PT_CHAR, PT_ANY, PT_CLASS, PT_STAR };
struct ptok {
	enum ptok_kind kind;
	unsigned char c;   /* PT_CHAR */
	const char *cls;   /* PT_CLASS: after its '[' */
};

struct pnfa {
	struct ptok *t;
	size_t n;
	/* per state 0..n: the smallest start of a thread there, or -1 */
	long *cur, *nxt;
};

static void
pnfa_compile(struct pnfa *a, const char *p, bool reverse)
{
	size_t cap = strlen(p) + 1;
	a->t = xmalloc(cap * sizeof *a->t);
	a->n = 0;
	while (*p) {
		struct ptok k = {.kind = PT_CHAR};
		const char *e;
		if (*p == '*') {
			while (*p == '*')
				p++;
			k.kind = PT_STAR;
		} else if (*p == '?') {
			k.kind = PT_ANY;
			p++;
		} else if (*p == '[' && match_bracket(p + 1, 0, &e) >= 0) {
			k.kind = PT_CLASS;
			k.cls = p + 1;
			p = e;
		} else if (*p == '\\' && p[1]) {
			k.c = (unsigned char)p[1];
			p += 2;
		} else {
			k.c = (unsigned char)*p++;
		}
		a->t[a->n++] = k;
	}
	if (reverse)
		for (size_t i = 0; i < a->n / 2; i++) {
			struct ptok x = a->t[i];
			a->t[i] = a->t[a->n - 1 - i];
			a->t[a->n - 1 - i] = x;
		}
	a->cur = xmalloc((a->n + 1) * sizeof(long));
	a->nxt = xmalloc((a->n + 1) * sizeof(long));
}

static void
pnfa_free(struct pnfa *a)
{
	free(a->t);
	free(a->cur);
	free(a->nxt);
}

static bool
ptok_match(const struct ptok *k, unsigned char c)
{
	const char *e;
	switch (k->kind) {
	case PT_CHAR: return k->c == c;
	case PT_ANY: return true;
	case PT_CLASS: return match_bracket(k->cls, c, &e) == 1;
	case PT_STAR: return true;
	default: return false;
	}
}

/* A thread of start ST enters state K (and what '*' reaches from there). */
static void
pnfa_enter(const struct pnfa *a, long *set, size_t k, long st)
{
	for (;;) {
		if (set[k] >= 0 && set[k] <= st)
			return;
		set[k] = st;
		if (k == a->n || a->t[k].kind != PT_STAR)
			return;
		k++;
	}
}

/*
 * The leftmost-longest match of the pattern in S[0..n) (character I is
 * S[I], or S[n-1-I] when REVERSE) starting at FROM or later (ANCHORED: at
 * FROM only): its start in *st and end in *en; false when none.
 */
static bool
pnfa_search(struct pnfa *a, const char *s, size_t n, bool reverse, size_t from, bool anchored,
	    size_t *st, size_t *en)
{
	for (size_t k = 0; k <= a->n; k++)
		a->cur[k] = -1;
	long best = -1;
	size_t best_end = 0;
	for (size_t i = from;; i++) {
		if (best < 0 && (!anchored || i == from))
			pnfa_enter(a, a->cur, 0, (long)i);
		/* a match ends here: the smaller start wins, then the longer */
		long acc = a->cur[a->n];
		if (acc >= 0 && (best < 0 || acc <= best)) {
			best = acc;
			best_end = i;
		}
		bool alive = false;
		for (size_t k = 0; k <= a->n; k++)
			if (a->cur[k] >= 0 && (best < 0 || a->cur[k] <= best) && k < a->n)
				alive = true;
		if (i >= n || !alive)
			break;
		unsigned char c = (unsigned char)(reverse ? s[n - 1 - i] : s[i]);
		for (size_t k = 0; k <= a->n; k++)
			a->nxt[k] = -1;
		for (size_t k = 0; k < a->n; k++) {
			long t = a->cur[k];
			if (t < 0 || (best >= 0 && t > best) || !ptok_match(&a->t[k], c))
				continue;
			/* '*' consumes and stays; the others move on */
			pnfa_enter(a, a->nxt, a->t[k].kind == PT_STAR ? k : k + 1, t);
		}
		long *sw = a->cur;
		a->cur = a->nxt;
		a->nxt = sw;
	}
	if (best < 0)
		return false;
	*st = (size_t)best;
	*en = best_end;
	return true;
}

/* The shortest match at S[0..): its length, or -1. */
static long
pnfa_shortest(struct pnfa *a, const char *s, size_t n, bool reverse)
{
	for (size_t k = 0; k <= a->n; k++)
		a->cur[k] = -1;
	pnfa_enter(a, a->cur, 0, 0);
	for (size_t i = 0;; i++) {
		if (a->cur[a->n] >= 0)
			return (long)i;
		if (i >= n)
			return -1;
		unsigned char c = (unsigned char)(reverse ? s[n - 1 - i] : s[i]);
		bool alive = false;
		for (size_t k = 0; k <= a->n; k++)
			a->nxt[k] = -1;
		for (size_t k = 0; k < a->n; k++)
			if (a->cur[k] >= 0 && ptok_match(&a->t[k], c)) {
				pnfa_enter(a, a->nxt, a->t[k].kind == PT_STAR ? k : k + 1, 0);
				alive = true;
			}
		if (!alive)
			return -1;
		long *sw = a->cur;
		a->cur = a->nxt;
		a->nxt = sw;
	}
}

/* The length of the matching prefix (SUFFIX: of the reversed string, with
 * the pattern reversed), or -1. */
static long
pat_affix(const char *pat, const char *s, bool longest, bool suffix)
{
	size_t n = strlen(s);
	if (has_ext(pat)) {
		/* each length in turn, all within one step budget */
		struct xm m = {.budget = PAT_EXT_STEPS};
		for (size_t k = 0; k <= n && m.budget >= 0; k++) {
			size_t l = longest ? n - k : k;
			if (suffix ? ext_match_n(&m, pat, s + n - l, l) : ext_match_n(&m, pat, s, l))
				return (long)l;
		}
		return -1;
	}
	struct pnfa a;
	pnfa_compile(&a, pat, suffix);
	long r;
	if (longest) {
		size_t st, en;
		r = pnfa_search(&a, s, n, suffix, 0, true, &st, &en) ? (long)en : -1;
	} else {
		r = pnfa_shortest(&a, s, n, suffix);
	}
	pnfa_free(&a);
	return r;
}

long
pat_prefix(const char *pat, const char *s, bool longest)
{
	return pat_affix(pat, s, longest, false);
}

/* Returns the start index of the matching suffix. */
long
pat_suffix(const char *pat, const char *s, bool longest)
{
	long l = pat_affix(pat, s, longest, true);
	return l < 0 ? -1 : (long)strlen(s) - l;
}

/* Replaces the first (ALL: every) non-empty leftmost-longest match. */
char *
pat_replace(const char *pat, const char *s, const char *rep, bool all)
{
	size_t n = strlen(s);
	if (has_ext(pat)) {
		/* leftmost, then longest, non-empty match at each position */
		struct sbuf b = {0};
		struct xm m = {.budget = PAT_EXT_STEPS};
		size_t i = 0;
		while (i < n) {
			size_t l = 0;
			for (size_t k = n - i; k > 0 && m.budget >= 0; k--)
				if (ext_match_n(&m, pat, s + i, k)) {
					l = k;
					break;
				}
			if (l == 0) {
				sb_addc(&b, s[i++]);
				continue;
			}
			sb_adds(&b, rep);
			i += l;
			if (!all)
				break;
		}
		if (i < n)
			sb_adds(&b, s + i);
		return sb_take(&b);
	}
	struct pnfa a;
	pnfa_compile(&a, pat, false);
	struct sbuf b = {0};
	size_t i = 0;
	while (i <= n) {
		size_t st, en;
		if (!pnfa_search(&a, s, n, false, i, false, &st, &en))
			break;
		if (en == st) {
			/* an empty match replaces nothing (bash), but in an empty
			 * string: look again one on */
			if (n == 0)
				sb_adds(&b, rep);
			if (st >= n)
				break;
			sb_addn(&b, s + i, st + 1 - i);
			i = st + 1;
			continue;
		}
		sb_addn(&b, s + i, st - i);
		sb_adds(&b, rep);
		i = en;
		if (!all)
			break;
	}
	if (i < n)
		sb_adds(&b, s + i);
	pnfa_free(&a);
	return sb_take(&b);
}

bool
pat_has_meta(const char *p)
{
	if (has_ext(p))
		return true;
	for (; *p; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			continue;
		}
		if (*p == '*' || *p == '?')
			return true;
		if (*p == '[') {
			const char *e;
			if (match_bracket(p + 1, 'a', &e) >= 0)
				return true;
		}
	}
	return false;
}

void
pat_unescape(char *s)
{
	char *d = s;
	for (; *s; s++) {
		if (*s == '\\' && s[1])
			s++;
		*d++ = *s;
	}
	*d = 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Expand directory `dir` (as typed, "" = cwd) with the remaining pattern
 * components in comps[ci..]. */
static int
glob_dir(struct sh_shell *sh, const char *dir, char **comps, size_t nc, size_t ci,
	 struct strv *out)
{
	const char *comp = comps[ci];
	bool last = ci + 1 == nc;
	if (sh_stack_low())
		return 0; /* one level per component: a path of 30000 matches nothing */
	if (!pat_has_meta(comp)) {
		char *lit = xstrdup(comp);
		pat_unescape(lit);
		struct sbuf p = {0};
		sb_adds(&p, dir);
		if (p.len && p.s[p.len - 1] != '/')
			sb_addc(&p, '/');
		sb_adds(&p, lit);
		free(lit);
		if (last) {
			struct stat st;
			if (sh_fs_stat(&sh->fs, p.s, &st, false) == 0)
				strv_add(out, sb_take(&p));
			else
				sb_free(&p);
			return 0;
		}
		glob_dir(sh, p.s, comps, nc, ci + 1, out);
		sb_free(&p);
		return 0;
	}
	DIR *d = sh_fs_opendir(&sh->fs, *dir ? dir : ".");
	if (!d)
		return 0;
	struct strv names = {0};
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *nm = de->d_name;
		if (nm[0] == '.' && comp[0] != '.' && !(comp[0] == '\\' && comp[1] == '.') &&
		    !sh->dotglob)
			continue;
		if (strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0) {
			if (comp[0] != '.')
				continue;
		}
		if (!pat_match(comp, nm))
			continue;
		if (!last && de->d_type != DT_DIR && de->d_type != DT_LNK && de->d_type != DT_UNKNOWN)
			continue;
		strv_add(&names, xstrdup(nm));
		if (names.n > SH_MAX_FIELDS)
			break;
	}
	closedir(d);
	if (names.n > 1)
		qsort(names.v, names.n, sizeof(char *), cmp_str);
	for (size_t i = 0; i < names.n; i++) {
		struct sbuf p = {0};
		sb_adds(&p, dir);
		if (p.len && p.s[p.len - 1] != '/')
			sb_addc(&p, '/');
		sb_adds(&p, names.v[i]);
		if (last)
			strv_add(out, sb_take(&p));
		else {
			glob_dir(sh, p.s, comps, nc, ci + 1, out);
			sb_free(&p);
		}
		if (out->n > SH_MAX_FIELDS)
			break;
	}
	strv_free(&names);
	return 0;
}

int
glob_expand(struct sh_shell *sh, const char *pat, struct strv *out)
{
	size_t before = out->n;
	sh_update_fs(sh, "glob");
	char *copy = xstrdup(pat);
	char *comps[256];
	size_t nc = 0;
	char *s = copy;
	const char *root = "";
	if (*s == '/') {
		root = "/";
		while (*s == '/')
			s++;
	}
	char *start = s;
	for (;; s++) {
		if (*s == '/' || !*s) {
			bool end = !*s;
			*s = 0;
			if (*start) {
				if (nc == 256) {
					free(copy);
					return 0;
				}
				comps[nc++] = start;
			}
			if (end)
				break;
			start = s + 1;
		}
	}
	bool trailing = strlen(pat) > 1 && pat[strlen(pat) - 1] == '/';
	if (nc > 0)
		glob_dir(sh, root, comps, nc, 0, out);
	if (trailing) {
		/* a pattern ending in a slash matches directories only, spelled with it */
		size_t w = before;
		for (size_t i = before; i < out->n; i++) {
			struct stat st;
			if (sh_fs_stat(&sh->fs, out->v[i], &st, true) == 0 && S_ISDIR(st.st_mode)) {
				size_t l = strlen(out->v[i]);
				out->v[i] = xrealloc(out->v[i], l + 2);
				strcpy(out->v[i] + l, "/");
				out->v[w++] = out->v[i];
			} else
				free(out->v[i]);
		}
		out->n = w;
	}
	free(copy);
	return (int)(out->n - before);
}
