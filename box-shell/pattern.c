/*
 * pattern.c — shell patterns (issue 12 item 1): `* ? [...]` with ranges,
 * `[!...]`/`[^...]` and `[:class:]`, a backslash quoting the next character;
 * used by case, [[ == ]], ${x#p} ${x%p} ${x/p/r} and pathname expansion.
 * Globbing enumerates each directory through sh_fs_opendir, so every
 * directory read is an fs:read enumerate decision (fsops.h); a denied or
 * unreadable directory simply matches nothing, as in bash. No `**`.
 *
 * Trusts: nothing in patterns or names. Matching is iterative with one
 * backtrack point per '*', so it is O(n*m) at worst, never exponential.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sh.h"

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
#undef CL
				if (m)
					ok = true;
				p = q + 2;
				continue;
			}
		}
		unsigned char lo = (unsigned char)*p;
		if (lo == '\\' && p[1]) {
			p++;
			lo = (unsigned char)*p;
		}
		p++;
		unsigned char hi = lo;
		if (p[0] == '-' && p[1] && p[1] != ']') {
			p++;
			hi = (unsigned char)*p;
			if (hi == '\\' && p[1]) {
				p++;
				hi = (unsigned char)*p;
			}
			p++;
		}
		if (c >= lo && c <= hi)
			ok = true;
	}
	if (*p != ']')
		return -1;
	*end = p + 1;
	return ok != neg;
}

bool
pat_match(const char *p, const char *s)
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

long
pat_prefix(const char *pat, const char *s, bool longest)
{
	size_t n = strlen(s);
	char *tmp = xstrdup(s);
	long r = -1;
	if (longest) {
		for (size_t i = n + 1; i-- > 0;) {
			char c = tmp[i];
			tmp[i] = 0;
			bool m = pat_match(pat, tmp);
			tmp[i] = c;
			if (m) {
				r = (long)i;
				break;
			}
		}
	} else {
		for (size_t i = 0; i <= n; i++) {
			char c = tmp[i];
			tmp[i] = 0;
			bool m = pat_match(pat, tmp);
			tmp[i] = c;
			if (m) {
				r = (long)i;
				break;
			}
		}
	}
	free(tmp);
	return r;
}

/* Returns the start index of the matching suffix. */
long
pat_suffix(const char *pat, const char *s, bool longest)
{
	size_t n = strlen(s);
	if (longest) {
		for (size_t i = 0; i <= n; i++)
			if (pat_match(pat, s + i))
				return (long)i;
	} else {
		for (size_t i = n + 1; i-- > 0;)
			if (pat_match(pat, s + i))
				return (long)i;
	}
	return -1;
}

bool
pat_has_meta(const char *p)
{
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
		if (nm[0] == '.' && comp[0] != '.' && !(comp[0] == '\\' && comp[1] == '.'))
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
