/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_cmdline.c — box.ini `command` splitting and re-quoting (boxctl/cmdline.c).
 *
 * Splitting follows docs/box.ini.5.md; re-quoting must read back to the same words,
 * and must never produce " ;" (inih would cut the line there as a comment).
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "boxctl/cmdline.h"
#include "tap.h"

static char **
split(const char *s, size_t *argc, int *r, const char **err)
{
	char **argv = NULL;
	*argc = 0;
	*r = cmdline_split(s, &argv, argc, err);
	return argv;
}

static void
test_split_basic(void)
{
	size_t n;
	int r;
	const char *e;
	char **v = split("  /usr/bin/prog  -x\t\"a b\" 'c d' e\\ f  ", &n, &r, &e);
	CHECK_INT(r, 0);
	CHECK_INT(n, 5);
	CHECK_STR(v[0], "/usr/bin/prog");
	CHECK_STR(v[1], "-x");
	CHECK_STR(v[2], "a b");
	CHECK_STR(v[3], "c d");
	CHECK_STR(v[4], "e f");
	CHECK(v[5] == NULL);
	cmdline_free(v);
}

static void
test_split_quotes(void)
{
	size_t n;
	int r;
	const char *e;
	/* Backslash escapes inside "…" and outside; literal inside '…'; quotes concatenate. */
	char **v = split("\"q\\\"x\" 'a\\b' it''s \"\" a\"b\"'c' \\'", &n, &r, &e);
	CHECK_INT(r, 0);
	CHECK_INT(n, 6);
	CHECK_STR(v[0], "q\"x");
	CHECK_STR(v[1], "a\\b");
	CHECK_STR(v[2], "its");
	CHECK_STR(v[3], "");
	CHECK_STR(v[4], "abc");
	CHECK_STR(v[5], "'");
	cmdline_free(v);
}

static void
test_split_append(void)
{
	size_t n = 0;
	char **v = NULL;
	const char *e;
	CHECK_INT(cmdline_split("a b", &v, &n, &e), 0);
	CHECK_INT(cmdline_split("c", &v, &n, &e), 0);
	CHECK_INT(cmdline_split("   ", &v, &n, &e), 0);
	CHECK_INT(n, 3);
	CHECK_STR(v[2], "c");
	cmdline_free(v);
}

static void
test_split_errors(void)
{
	static const struct {
		const char *in;
		const char *err;
	} cases[] = {
		{ "a \"b", "unterminated double quote" },
		{ "a 'b", "unterminated single quote" },
		{ "a b\\", "a backslash at the end escapes nothing" },
		{ "\"a\\", "unterminated double quote" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n;
		int r;
		const char *e = NULL;
		char **v = split(cases[i].in, &n, &r, &e);
		CHECK_INT(r, -EINVAL);
		CHECK_STR(e, cases[i].err);
		cmdline_free(v);
	}
}

static void
test_quote(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "plain", "plain" },         { "a b", "\"a b\"" },     { "", "\"\"" },
		{ "it's", "\"it's\"" },       { "q\"", "\"q\\\"\"" },   { "b\\s", "\"b\\\\s\"" },
		{ ";x", "\"\\;x\"" },         { "a;b", "a;b" },         { "a ;b", "\"a \\;b\"" },
		{ "--opt=1", "--opt=1" },     { "tab\there", "\"tab\there\"" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *q = cmdline_quote(cases[i].in);
		CHECK_STR(q, cases[i].out);
		free(q);
	}
}

/* Random words over a hostile alphabet: quote, join, split back. */
static void
test_roundtrip_random(void)
{
	static const char alphabet[] = "ab ;'\"\\\t-=#[]$x";
	unsigned seed = 12345;
	for (int iter = 0; iter < 2000; iter++) {
		char words[4][12];
		size_t nw = 1 + (size_t)(iter % 4);
		char line[256] = "";
		for (size_t w = 0; w < nw; w++) {
			size_t len = (seed = seed * 1103515245 + 12345) % 10;
			for (size_t i = 0; i < len; i++) {
				seed = seed * 1103515245 + 12345;
				words[w][i] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
			}
			words[w][len] = '\0';
			char *q = cmdline_quote(words[w]);
			if (w)
				strcat(line, " ");
			strcat(line, q);
			free(q);
		}
		CHECK(strstr(line, " ;") == NULL && strstr(line, "\t;") == NULL);
		size_t n;
		int r;
		const char *e;
		char **v = split(line, &n, &r, &e);
		CHECK_INT(r, 0);
		CHECK_INT(n, nw);
		for (size_t w = 0; w < nw && w < n; w++)
			CHECK_STR(v[w], words[w]);
		cmdline_free(v);
		if (tap_failed_checks)
			break;
	}
}

int
main(void)
{
	RUN(test_split_basic);
	RUN(test_split_quotes);
	RUN(test_split_append);
	RUN(test_split_errors);
	RUN(test_quote);
	RUN(test_roundtrip_random);
	return tap_done();
}
