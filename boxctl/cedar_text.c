/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cedar_text.c — Cedar string literals and comments from untrusted values
 * (cedar_text.h). `"` and `\` are escaped, line breaks, tabs and every other control
 * character are written as escapes (\n \t \r \u{…}), so a literal always ends at its
 * own closing quote and on its own line; libboxpolicy's lexer reads them back to the
 * same bytes. Other bytes (UTF-8, already validated by whoever sent the value) as is.
 * Trusts: nothing about S.
 */
#include "cedar_text.h"

void
cedar_put_lit_body(FILE *out, const char *s, bool like)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		unsigned c = *p;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '*' && like)
			fputs("\\*", out);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c == '\r')
			fputs("\\r", out);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\u{%x}", c);
		else
			fputc((int)c, out);
	}
}

void
cedar_put_lit(FILE *out, const char *s, bool like)
{
	fputc('"', out);
	cedar_put_lit_body(out, s, like);
	fputc('"', out);
}

void
cedar_put_comment(FILE *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p >= 0x20 && *p < 0x7f)
			fputc(*p, out);
		else
			fprintf(out, "\\x%02x", *p);
}
