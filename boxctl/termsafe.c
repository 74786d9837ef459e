/* SPDX-License-Identifier: Apache-2.0 */
/*
 * termsafe.c — escaping box-chosen strings for a terminal (termsafe.h).
 * Trusts: nothing in the strings.
 */
#include <string.h>

#include "termsafe.h"

void
put_safe_n(FILE *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	while (p < end) {
		unsigned c = *p;
		size_t left = (size_t)(end - p);
		if (c < 0x20 || c == 0x7f) {
			fprintf(out, c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\x%02x", c);
			p++;
			continue;
		}
		/* U+0080-U+009F (C2 80-9F), U+061C, U+200E/F, U+202A-202E, U+2066-2069. */
		if (c == 0xc2 && left >= 2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			fprintf(out, "\\u{%x}", p[1]);
			p += 2;
			continue;
		}
		if (c == 0xd8 && left >= 2 && p[1] == 0x9c) {
			fputs("\\u{61c}", out);
			p += 2;
			continue;
		}
		if (c == 0xe2 && left >= 3 && p[1] == 0x80 &&
		    (p[2] == 0x8e || p[2] == 0x8f || (p[2] >= 0xaa && p[2] <= 0xae))) {
			fprintf(out, "\\u{%x}", 0x2000u + p[2] - 0x80u);
			p += 3;
			continue;
		}
		if (c == 0xe2 && left >= 3 && p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9) {
			fprintf(out, "\\u{%x}", 0x2040u + p[2] - 0x80u);
			p += 3;
			continue;
		}
		/* A run of plain bytes in one call. */
		const unsigned char *q = p + 1;
		while (q < end && *q >= 0x20 && *q != 0x7f && *q != 0xc2 && *q != 0xd8 && *q != 0xe2)
			q++;
		fwrite(p, 1, (size_t)(q - p), out);
		p = q;
	}
}

void
put_safe(FILE *out, const char *s)
{
	put_safe_n(out, s, strlen(s));
}
