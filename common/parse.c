/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parse.c — checked number, duration, size, boolean and port parsers.
 *
 * No strtol/atoi: digits are accumulated with explicit overflow checks so
 * "99999999999999999999" is -ERANGE, not a wrapped value, and " 5", "+5",
 * "5 " and "" are -EINVAL.
 * Trusts: nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "parse.h"

/* Parse leading decimal digits; *end points past them. */
static int
parse_digits(const char *s, const char **end, uint64_t *ret)
{
	uint64_t v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*end = p;
	*ret = v;
	return 0;
}

int
parse_u64(const char *s, uint64_t max, uint64_t *ret)
{
	const char *end;
	uint64_t v;
	int r;

	if (!s)
		return -EINVAL;
	r = parse_digits(s, &end, &v);
	if (r < 0)
		return r;
	if (*end)
		return -EINVAL;
	if (v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int
parse_i64(const char *s, int64_t *ret)
{
	int neg = 0;
	uint64_t v;
	int r;

	if (!s)
		return -EINVAL;
	if (*s == '-') {
		neg = 1;
		s++;
	}
	r = parse_u64(s, neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, &v);
	if (r < 0)
		return r;
	*ret = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

int
parse_bool(const char *s, bool *ret)
{
	if (s && strcmp(s, "true") == 0)
		*ret = true;
	else if (s && strcmp(s, "false") == 0)
		*ret = false;
	else
		return -EINVAL;
	return 0;
}

int
parse_duration_ms(const char *s, uint64_t *ret_ms)
{
	const char *end;
	uint64_t v, mult;
	int r;

	if (!s)
		return -EINVAL;
	r = parse_digits(s, &end, &v);
	if (r < 0)
		return r;
	if (strcmp(end, "ms") == 0)
		mult = 1;
	else if (strcmp(end, "s") == 0)
		mult = 1000;
	else if (strcmp(end, "m") == 0)
		mult = 60 * 1000;
	else if (strcmp(end, "h") == 0)
		mult = 3600 * 1000;
	else
		return -EINVAL;
	if (v > UINT64_MAX / mult)
		return -ERANGE;
	*ret_ms = v * mult;
	return 0;
}

int
parse_size(const char *s, uint64_t *ret_bytes)
{
	const char *end;
	uint64_t v, mult;
	int r;

	if (!s)
		return -EINVAL;
	r = parse_digits(s, &end, &v);
	if (r < 0)
		return r;
	if (*end == '\0')
		mult = 1;
	else if (strcmp(end, "K") == 0)
		mult = 1ULL << 10;
	else if (strcmp(end, "M") == 0)
		mult = 1ULL << 20;
	else if (strcmp(end, "G") == 0)
		mult = 1ULL << 30;
	else
		return -EINVAL;
	if (v > UINT64_MAX / mult)
		return -ERANGE;
	*ret_bytes = v * mult;
	return 0;
}

int
parse_port(const char *s, uint16_t *ret)
{
	uint64_t v;
	int r = parse_u64(s, 65535, &v);
	if (r < 0)
		return r;
	if (v == 0)
		return -ERANGE;
	*ret = (uint16_t)v;
	return 0;
}

int
parse_count(const char *s, uint64_t max, uint64_t *ret)
{
	uint64_t v;
	int r = parse_u64(s, max, &v);
	if (r < 0)
		return r;
	if (v == 0)
		return -ERANGE;
	*ret = v;
	return 0;
}

void
format_duration_ms(uint64_t ms, char buf[static 32])
{
	snprintf(buf, 32, "%llums", (unsigned long long)ms);
}

bool
list_next_word(const char **cursor, const char **word, size_t *len)
{
	const char *p = *cursor;
	if (!p || !*p) {
		*cursor = NULL;
		return false;
	}
	const char *end = strchr(p, ',');
	*word = p;
	*len = end ? (size_t)(end - p) : strlen(p);
	*cursor = end ? end + 1 : NULL;
	return true;
}

bool
list_has_word(const char *list, const char *word)
{
	size_t wl = strlen(word), l;
	const char *w;
	for (const char *p = list; list_next_word(&p, &w, &l);)
		if (l == wl && strncmp(w, word, wl) == 0)
			return true;
	return false;
}
