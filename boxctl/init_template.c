/* SPDX-License-Identifier: Apache-2.0 */
/*
 * init_template.c — the renderer of `boxctl init`'s templates (the language is in init.h).
 *
 * Trusts: the templates, which are the repository's own files compiled in; values are
 * copied as they are (the caller spells them for box.ini or Cedar).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "init.h"

#define INIT_NEST_MAX 8

int
init_vars_set(struct init_vars *v, const char *name, const char *value)
{
	char *copy = strdup(value ? value : "");

	if (!copy)
		return -ENOMEM;
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->name[i], name) == 0) {
			free(v->value[i]);
			v->value[i] = copy;
			return 0;
		}
	if (v->n == INIT_VARS_MAX) {
		free(copy);
		return -E2BIG;
	}
	v->name[v->n] = name;
	v->value[v->n++] = copy;
	return 0;
}

void
init_vars_clear(struct init_vars *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->value[i]);
	v->n = 0;
}

static const char *
lookup(const struct init_vars *v, const char *name, size_t len)
{
	for (size_t i = 0; i < v->n; i++)
		if (strlen(v->name[i]) == len && memcmp(v->name[i], name, len) == 0)
			return v->value[i];
	return NULL;
}

/* The length of a variable name at p (upper-case letter, then [A-Z0-9_]) followed by '@'. */
static size_t
name_len(const char *p, const char *end)
{
	size_t n = 0;

	if (p >= end || !(*p >= 'A' && *p <= 'Z'))
		return 0;
	while (p + n < end && ((p[n] >= 'A' && p[n] <= 'Z') || (p[n] >= '0' && p[n] <= '9') ||
			       p[n] == '_'))
		n++;
	return p + n < end && p[n] == '@' ? n : 0;
}

static int
fail(char **ret_err, const char *tmpl, unsigned line, const char *what, const char *arg,
     size_t arg_len)
{
	if (asprintf(ret_err, "%s:%u: %s%.*s", tmpl, line, what, (int)arg_len, arg) < 0)
		*ret_err = NULL;
	return -EINVAL;
}

int
init_render(const char *tmpl, const struct init_vars *v, char **ret, char **ret_err)
{
	const char *text = NULL;
	bool keep[INIT_NEST_MAX + 1] = { true };
	size_t depth = 0;
	unsigned lineno = 0;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	_cleanup_fclose_ FILE *out = NULL;

	*ret = NULL;
	*ret_err = NULL;
	for (const struct init_template *t = init_templates; t->name; t++)
		if (strcmp(t->name, tmpl) == 0)
			text = t->text;
	if (!text)
		return fail(ret_err, tmpl, 0, "no such template", "", 0);
	out = open_memstream(&buf, &len);
	if (!out)
		return -errno;

	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		const char *end = nl ? nl : p + strlen(p);
		const char *next = nl ? nl + 1 : end;
		size_t n = (size_t)(end - p);

		lineno++;
		if (n >= 2 && p[0] == '@' && p[1] == '@') {
			if (n > 5 && memcmp(p, "@@if ", 5) == 0) {
				const char *name = p + 5;
				bool negate = *name == '!';
				name += negate;
				size_t nl_len = (size_t)(end - name);
				const char *val = lookup(v, name, nl_len);
				if (!val)
					return fail(ret_err, tmpl, lineno, "unknown variable ", name,
						    nl_len);
				if (depth == INIT_NEST_MAX)
					return fail(ret_err, tmpl, lineno, "@@if nested too deep", "", 0);
				depth++;
				keep[depth] = keep[depth - 1] && ((*val != '\0') != negate);
			} else if (n == 6 && memcmp(p, "@@else", 6) == 0) {
				if (depth == 0)
					return fail(ret_err, tmpl, lineno, "@@else without @@if", "", 0);
				keep[depth] = keep[depth - 1] && !keep[depth];
			} else if (n == 5 && memcmp(p, "@@end", 5) == 0) {
				if (depth == 0)
					return fail(ret_err, tmpl, lineno, "@@end without @@if", "", 0);
				depth--;
			} else {
				return fail(ret_err, tmpl, lineno, "unknown directive ", p, n);
			}
			p = next;
			continue;
		}
		if (!keep[depth]) {
			p = next;
			continue;
		}
		/* A line that is only @NAME@ with an empty value is left out. */
		size_t whole = n > 2 && p[0] == '@' ? name_len(p + 1, end) : 0;
		if (whole && whole + 2 == n) {
			const char *val = lookup(v, p + 1, whole);
			if (!val)
				return fail(ret_err, tmpl, lineno, "unknown variable ", p + 1, whole);
			if (*val == '\0') {
				p = next;
				continue;
			}
		}
		for (const char *q = p; q < end; q++) {
			size_t k = *q == '@' ? name_len(q + 1, end) : 0;
			if (!k) {
				fputc(*q, out);
				continue;
			}
			const char *val = lookup(v, q + 1, k);
			if (!val)
				return fail(ret_err, tmpl, lineno, "unknown variable ", q + 1, k);
			fputs(val, out);
			q += k + 1;
		}
		if (nl)
			fputc('\n', out);
		p = next;
	}
	if (depth != 0)
		return fail(ret_err, tmpl, lineno, "@@if without @@end", "", 0);
	if (fclose(TAKE_PTR(out)) != 0)
		return -ENOMEM;
	*ret = TAKE_PTR(buf);
	return 0;
}
