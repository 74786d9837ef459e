/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmdline.c — split a box.ini `command` value into words; re-quote words for output.
 *
 * See cmdline.h for the syntax. Trusts: nothing; the text is the user's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cmdline.h"

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int
argv_push(char ***argv, size_t *argc, char *w)
{
	char **n = realloc(*argv, (*argc + 2) * sizeof(char *));
	if (!n)
		return -ENOMEM;
	n[(*argc)++] = w;
	n[*argc] = NULL;
	*argv = n;
	return 0;
}

int
cmdline_split(const char *s, char ***argv, size_t *argc, const char **err)
{
	size_t cap = strlen(s) + 1;
	const char *p = s;

	*err = NULL;
	for (;;) {
		while (is_blank(*p))
			p++;
		if (!*p)
			return 0;

		_cleanup_free_ char *w = malloc(cap);
		size_t n = 0;
		char quote = 0;
		if (!w)
			return -ENOMEM;
		for (; *p && (quote || !is_blank(*p)); p++) {
			char c = *p;
			if (quote == '\'') {
				if (c == '\'')
					quote = 0;
				else
					w[n++] = c;
			} else if (c == '\\') {
				if (!p[1]) {
					*err = quote ? "unterminated double quote" :
						       "a backslash at the end escapes nothing";
					return -EINVAL;
				}
				w[n++] = *++p;
			} else if (quote == '"') {
				if (c == '"')
					quote = 0;
				else
					w[n++] = c;
			} else if (c == '"' || c == '\'') {
				quote = c;
			} else {
				w[n++] = c;
			}
		}
		if (quote) {
			*err = quote == '"' ? "unterminated double quote" : "unterminated single quote";
			return -EINVAL;
		}
		w[n] = '\0';
		int r = argv_push(argv, argc, w);
		if (r < 0)
			return r;
		w = NULL; /* owned by the vector now */
	}
}

bool
cmdline_word_needs_quotes(const char *w)
{
	if (!*w || *w == ';')
		return true;
	return strpbrk(w, " \t\"'\\") != NULL;
}

char *
cmdline_quote(const char *w)
{
	if (!cmdline_word_needs_quotes(w))
		return strdup(w);
	size_t len = strlen(w);
	char *r = malloc(2 * len + 3);
	if (!r)
		return NULL;
	size_t n = 0;
	r[n++] = '"';
	for (; *w; w++) {
		if (*w == '"' || *w == '\\' || *w == ';')
			r[n++] = '\\';
		r[n++] = *w;
	}
	r[n++] = '"';
	r[n] = '\0';
	return r;
}

void
cmdline_free(char **argv)
{
	if (!argv)
		return;
	for (char **a = argv; *a; a++)
		free(*a);
	free(argv);
}
