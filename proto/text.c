/* SPDX-License-Identifier: Apache-2.0 */
/*
 * text.c — name, id, path and UTF-8 checks shared by every validator
 * (text.h). A leaf of proto/: it calls only common/path.c and libc.
 * Trusts: nothing; pure functions over strings a peer sent. Never logs.
 */
#include <stdint.h>
#include <string.h>

#include "path.h"
#include "text.h"

bool
box_text_len_ok(const char *s, size_t min, size_t max)
{
	if (!s)
		return false;
	size_t n = strnlen(s, max + 1);
	return n >= min && n <= max;
}

bool
box_text_no_ctl(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

bool
box_text_all_in(const char *s, const char *extra)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      (c && strchr(extra, c))))
			return false;
	}
	return true;
}

bool
box_valid_name(const char *s)
{
	return box_text_len_ok(s, 1, BOX_NAME_MAX) && box_text_all_in(s, "_-");
}

bool
box_valid_box_id(const char *s)
{
	if (!s || strlen(s) != BOX_ID_LEN)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

bool
box_valid_env_name(const char *s)
{
	if (!box_text_len_ok(s, 1, 255))
		return false;
	if (s[0] >= '0' && s[0] <= '9')
		return false;
	return box_text_all_in(s, "_");
}

bool
box_valid_term(const char *s)
{
	return box_text_len_ok(s, 1, 64) && box_text_all_in(s, "._+-");
}

bool
box_valid_path(const char *s)
{
	return box_text_len_ok(s, 1, BOX_PATH_MAX - 1) && path_is_clean_absolute(s) &&
	       !path_has_glob(s);
}

bool
box_valid_utf8(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	if (!s)
		return false;
	while (i < len) {
		/*
		 * Eight ASCII bytes at a time (every decision checks each of its
		 * strings): no high bit set and no zero byte in the word.
		 */
		while (len - i >= 8) {
			uint64_t w;
			memcpy(&w, p + i, 8);
			if ((w & 0x8080808080808080ULL) ||
			    ((w - 0x0101010101010101ULL) & ~w & 0x8080808080808080ULL))
				break;
			i += 8;
		}
		if (i >= len)
			break;
		unsigned c = p[i];
		unsigned need;
		uint32_t cp;

		if (c == 0)
			return false;
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			need = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			need = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			need = 3;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (len - i <= need)
			return false;
		for (unsigned k = 1; k <= need; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (p[i + k] & 0x3f);
		}
		/* Overlong forms, surrogates, beyond U+10FFFF. */
		if ((need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += need + 1;
	}
	return true;
}

bool
box_text_utf8_ok(const char *s, size_t min, size_t max)
{
	if (!s)
		return false;
	/* One pass for length and controls; the UTF-8 check only past ASCII. */
	size_t n = 0;
	bool high = false;
	for (; n <= max && s[n]; n++) {
		unsigned char c = (unsigned char)s[n];
		if (c < 0x20 || c == 0x7f)
			return false;
		high |= c >= 0x80;
	}
	if (n < min || n > max)
		return false;
	return !high || box_valid_utf8(s, n);
}

bool
box_text_is_word(const char *s, size_t n, bool lower_only)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || c == '_' ||
			  (!lower_only && ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')));
		if (!ok)
			return false;
	}
	return true;
}
