/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_sh_parse.c — box-shell's lexer and parser on arbitrary bytes
 * (libshell/parse.c, with vars.c for aliases and arith.c it pulls in; no
 * execution, no decisions).
 *
 * Each input is parsed twice, with alias expansion off and then on (an
 * alias "ll" is defined so the splicing path runs), with parse_all(): the
 * whole text as a script. Properties: no crash, no leak, bounded stack (the
 * parser caps nesting at SH_MAX_PARSE_DEPTH); a text that parsed once parses
 * again to the same number of commands (the parser keeps no state between
 * scripts). Messages (syntax errors) are counted, not printed.
 * Trusts: nothing; input is arbitrary bytes.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libshell/sh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned long messages;

/* The interpreter's message functions (exec.c is not linked: no execution). */
void
sh_err(struct sh_shell *sh, const char *fmt, ...)
{
	(void)sh;
	(void)fmt;
	messages++;
}

void
sh_errline(struct sh_shell *sh, int line, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	(void)sh;
	(void)line;
	messages++;
}

void
sh_errline_in(struct sh_shell *sh, const char *in, int line, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	(void)sh;
	(void)in;
	(void)line;
	messages++;
}

static size_t
count(struct node *n)
{
	if (!n)
		return 0;
	return n->type == N_LIST ? n->u.p.n : 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The callers refuse NUL bytes before parsing: so does this target. */
	if (memchr(data, 0, size))
		return 0;
	struct sh_shell *sh = sh_new(NULL, NULL, "fuzz", 0, NULL);
	alias_set(sh, "ll", "echo listing ");
	for (int pass = 0; pass < 2; pass++) {
		sh->expand_aliases = pass == 1;
		struct node *a = NULL, *b = NULL;
		int ra = parse_all(sh, (const char *)data, size, 1, &a);
		int rb = parse_all(sh, (const char *)data, size, 1, &b);
		if (ra != rb || (ra == 0 && count(a) != count(b)))
			abort();
		node_free(a);
		node_free(b);
	}
	sh_free(sh);
	return 0;
}
