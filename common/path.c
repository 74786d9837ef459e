/* SPDX-License-Identifier: Apache-2.0 */
/*
 * path.c — path spellings: clean absolute checks, nesting, `~/` forms.
 *
 * Trusts: nothing; every input may come from a user or a peer.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "path.h"

bool
path_is_clean_absolute(const char *p)
{
	if (!p || p[0] != '/')
		return false;
	size_t len = strlen(p);
	if (len >= BOX_PATH_MAX)
		return false;
	if (len == 1)
		return true;
	if (p[len - 1] == '/')
		return false;
	for (const char *c = p; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return false;
	/* Walk components: none empty, ".", or "..". */
	const char *s = p + 1;
	for (;;) {
		const char *e = strchr(s, '/');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		if (!e)
			break;
		s = e + 1;
	}
	return true;
}

bool
path_has_glob(const char *p)
{
	return strpbrk(p, "*?[]") != NULL;
}

bool
path_is_under(const char *child, const char *parent)
{
	size_t n = strlen(parent);
	if (n == 1 && parent[0] == '/')
		return child[0] == '/';
	if (strncmp(child, parent, n) != 0)
		return false;
	return child[n] == '\0' || child[n] == '/';
}

char *
path_join(const char *a, const char *b)
{
	size_t la = strlen(a), lb;
	while (la > 1 && a[la - 1] == '/')
		la--;
	while (*b == '/')
		b++;
	lb = strlen(b);
	char *r = malloc(la + 1 + lb + 1);
	if (!r)
		return NULL;
	memcpy(r, a, la);
	size_t o = la;
	if (lb) {
		if (!(la == 1 && a[0] == '/'))
			r[o++] = '/';
		memcpy(r + o, b, lb);
		o += lb;
	}
	r[o] = '\0';
	return r;
}

int
path_expand_home(const char *p, const char *home, char **ret)
{
	char *r;
	if (p[0] == '~') {
		if (p[1] != '\0' && p[1] != '/')
			return -EINVAL; /* ~user is not supported */
		if (!home || home[0] != '/')
			return -EINVAL;
		r = p[1] ? path_join(home, p + 2) : strdup(home);
		/* "~/" alone becomes home + "/" trailing: keep it visible as such. */
		if (r && p[1] == '/' && p[2] == '\0') {
			free(r);
			size_t n = strlen(home);
			r = malloc(n + 2);
			if (r) {
				memcpy(r, home, n);
				memcpy(r + n, "/", 2);
			}
		}
	} else
		r = strdup(p);
	if (!r)
		return -ENOMEM;
	*ret = r;
	return 0;
}

int
path_to_home_form(const char *p, const char *home, char **ret)
{
	char *r;
	size_t n = home ? strlen(home) : 0;
	/* A home of "/" would make every path "~/..."; treat it as no home. */
	if (n > 1 && path_is_under(p, home)) {
		if (p[n] == '\0')
			r = strdup("~");
		else {
			r = malloc(1 + strlen(p + n) + 1);
			if (r) {
				r[0] = '~';
				strcpy(r + 1, p + n);
			}
		}
	} else
		r = strdup(p);
	if (!r)
		return -ENOMEM;
	*ret = r;
	return 0;
}

int
path_canonicalize(const char *p, char **ret)
{
	char *r = realpath(p, NULL);
	if (!r)
		return -errno;
	*ret = r;
	return 0;
}

const char *
path_basename(const char *p)
{
	const char *s = strrchr(p, '/');
	return s && s[1] ? s + 1 : p;
}

int
path_dirname(const char *p, char **ret)
{
	const char *s = strrchr(p, '/');
	char *r;
	if (!s)
		r = strdup(".");
	else if (s == p)
		r = strdup("/");
	else
		r = strndup(p, (size_t)(s - p));
	if (!r)
		return -ENOMEM;
	*ret = r;
	return 0;
}

const char *const path_system_runtime[5] = { "/usr", "/lib", "/lib64", "/bin", "/sbin" };

bool
path_is_system_runtime(const char *p)
{
	for (size_t i = 0; i < 5; i++)
		if (path_is_under(p, path_system_runtime[i]))
			return true;
	return false;
}

enum path_reach
path_reach(const char *denied, const char *const *grants, size_t n, size_t *which)
{
	enum path_reach r = PATH_REACH_NONE;
	size_t w = 0;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(grants[i], denied) == 0) {
			r = PATH_REACH_EXCEPTION; /* named exactly: the user's explicit choice */
			w = i;
			break;
		}
		if (path_is_under(grants[i], denied) && r != PATH_REACH_INSIDE) {
			r = PATH_REACH_INSIDE;
			w = i;
		} else if (path_is_under(denied, grants[i]) && r == PATH_REACH_NONE) {
			r = PATH_REACH_MASK;
			w = i;
		}
	}
	if (which)
		*which = w;
	return r;
}
