/* SPDX-License-Identifier: Apache-2.0 */
/*
 * value.c — Cedar values: the extension types' parsers (ipaddr, decimal,
 * datetime, duration) and equality. A leaf of libboxpolicy: it calls nothing
 * else in the library, so the validator, the evaluator and the temporal code
 * can all use it without calling each other.
 * Trusts: nothing; every input string is arbitrary (length-bounded, not
 * NUL-terminated).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

/* ---- extension parsing ---- */

static bool
parse_v4(const char *s, size_t n, uint8_t out[4])
{
	size_t i = 0;
	for (int part = 0; part < 4; part++) {
		if (part) {
			if (i >= n || s[i] != '.')
				return false;
			i++;
		}
		size_t start = i;
		unsigned v = 0;
		while (i < n && s[i] >= '0' && s[i] <= '9' && i - start < 3) {
			v = v * 10 + (unsigned)(s[i] - '0');
			i++;
		}
		if (i == start || v > 255 || (i - start > 1 && s[start] == '0'))
			return false;
		out[part] = (uint8_t)v;
	}
	return i == n;
}

static int
hexd(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool
parse_v6(const char *s, size_t n, uint8_t out[16])
{
	uint16_t head[8], tail[8];
	size_t nh = 0, nt = 0;
	bool gap = false;
	size_t i = 0;
	if (n >= 2 && s[0] == ':' && s[1] == ':') {
		gap = true;
		i = 2;
		if (i == n) {
			memset(out, 0, 16);
			return true;
		}
	} else if (n >= 1 && s[0] == ':') {
		return false;
	}
	for (;;) {
		/* an embedded IPv4 at the end? */
		size_t j = i;
		while (j < n && s[j] != ':' && s[j] != '.')
			j++;
		if (j < n && s[j] == '.') {
			uint8_t v4[4];
			if (!parse_v4(s + i, n - i, v4))
				return false;
			uint16_t *dst = gap ? tail : head;
			size_t *cnt = gap ? &nt : &nh;
			if (*cnt + 2 > 8)
				return false;
			dst[(*cnt)++] = (uint16_t)(v4[0] << 8 | v4[1]);
			dst[(*cnt)++] = (uint16_t)(v4[2] << 8 | v4[3]);
			i = n;
			break;
		}
		unsigned v = 0;
		size_t start = i;
		while (i < n && hexd(s[i]) >= 0 && i - start < 4) {
			v = v * 16 + (unsigned)hexd(s[i]);
			i++;
		}
		if (i == start)
			return false;
		uint16_t *dst = gap ? tail : head;
		size_t *cnt = gap ? &nt : &nh;
		if (*cnt >= 8)
			return false;
		dst[(*cnt)++] = (uint16_t)v;
		if (i == n)
			break;
		if (s[i] != ':')
			return false;
		i++;
		if (i < n && s[i] == ':') {
			if (gap)
				return false;
			gap = true;
			i++;
			if (i == n)
				break;
		} else if (i == n) {
			return false;
		}
	}
	if (gap ? nh + nt > 7 : nh != 8)
		return false;
	uint16_t words[8] = { 0 };
	memcpy(words, head, nh * sizeof(uint16_t));
	memcpy(words + 8 - nt, tail, nt * sizeof(uint16_t));
	for (int k = 0; k < 8; k++) {
		out[2 * k] = (uint8_t)(words[k] >> 8);
		out[2 * k + 1] = (uint8_t)words[k];
	}
	return true;
}

bool
parse_ip(const char *s, size_t n, struct val *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->t = V_IP;
	const char *slash = memchr(s, '/', n);
	size_t an = slash ? (size_t)(slash - s) : n;
	bool v6 = memchr(s, ':', an) != NULL;
	if (v6) {
		if (!parse_v6(s, an, ret->u.ip))
			return false;
	} else {
		if (!parse_v4(s, an, ret->u.ip))
			return false;
	}
	ret->ip_v6 = v6;
	unsigned max = v6 ? 128 : 32;
	ret->ip_prefix = (uint8_t)max;
	if (slash) {
		const char *p = slash + 1;
		size_t pn = n - an - 1;
		if (pn == 0 || pn > 3 || (pn > 1 && p[0] == '0'))
			return false;
		unsigned v = 0;
		for (size_t i = 0; i < pn; i++) {
			if (p[i] < '0' || p[i] > '9')
				return false;
			v = v * 10 + (unsigned)(p[i] - '0');
		}
		if (v > max)
			return false;
		ret->ip_prefix = (uint8_t)v;
	}
	return true;
}

bool
parse_decimal(const char *s, size_t n, int64_t *ret)
{
	size_t i = 0;
	bool neg = false;
	if (i < n && s[i] == '-') {
		neg = true;
		i++;
	}
	size_t start = i;
	__int128 v = 0;
	while (i < n && s[i] >= '0' && s[i] <= '9') {
		v = v * 10 + (s[i] - '0');
		if (v > (__int128)INT64_MAX * 2)
			return false;
		i++;
	}
	if (i == start || i >= n || s[i] != '.')
		return false;
	i++;
	size_t fstart = i;
	while (i < n && s[i] >= '0' && s[i] <= '9' && i - fstart < 5) {
		v = v * 10 + (s[i] - '0');
		i++;
	}
	size_t digits = i - fstart;
	if (digits == 0 || digits > 4 || i != n)
		return false;
	for (size_t k = digits; k < 4; k++)
		v *= 10;
	if (neg)
		v = -v;
	if (v > INT64_MAX || v < INT64_MIN)
		return false;
	*ret = (int64_t)v;
	return true;
}

static bool
digits(const char *s, size_t n, size_t at, size_t count, int *out)
{
	if (at + count > n)
		return false;
	int v = 0;
	for (size_t i = 0; i < count; i++) {
		if (s[at + i] < '0' || s[at + i] > '9')
			return false;
		v = v * 10 + (s[at + i] - '0');
	}
	*out = v;
	return true;
}

static int64_t
days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	const int64_t era = (y >= 0 ? y : y - 399) / 400;
	const unsigned yoe = (unsigned)(y - era * 400);
	const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

bool
parse_datetime(const char *s, size_t n, int64_t *ret)
{
	int y, mo, d, h = 0, mi = 0, se = 0, ms = 0, oh = 0, om = 0, sign = 0;
	if (!digits(s, n, 0, 4, &y) || n < 10 || s[4] != '-' || !digits(s, n, 5, 2, &mo) ||
	    s[7] != '-' || !digits(s, n, 8, 2, &d))
		return false;
	size_t i = 10;
	if (i < n) {
		if (s[i] != 'T' || !digits(s, n, 11, 2, &h) || n < 19 || s[13] != ':' ||
		    !digits(s, n, 14, 2, &mi) || s[16] != ':' || !digits(s, n, 17, 2, &se))
			return false;
		i = 19;
		if (i < n && s[i] == '.') {
			if (!digits(s, n, 20, 3, &ms))
				return false;
			i = 23;
		}
		if (i >= n)
			return false;
		if (s[i] == 'Z') {
			i++;
		} else if (s[i] == '+' || s[i] == '-') {
			sign = s[i] == '+' ? 1 : -1;
			if (!digits(s, n, i + 1, 2, &oh) || !digits(s, n, i + 3, 2, &om))
				return false;
			if (oh > 23 || om > 59)
				return false;
			i += 5;
		} else {
			return false;
		}
		if (i != n)
			return false;
	}
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || se > 59)
		return false;
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo == 2 && d == 29 && !leap)
		return false;
	int64_t days = days_from_civil(y, (unsigned)mo, (unsigned)d);
	int64_t v = ((days * 24 + h) * 60 + mi) * 60 + se;
	v = v * 1000 + ms;
	v -= (int64_t)sign * ((int64_t)oh * 3600 + (int64_t)om * 60) * 1000;
	*ret = v;
	return true;
}

bool
parse_duration(const char *s, size_t n, int64_t *ret)
{
	size_t i = 0;
	bool neg = false;
	if (i < n && s[i] == '-') {
		neg = true;
		i++;
	}
	static const struct {
		const char *u;
		int64_t ms;
	} units[] = { { "d", 86400000 }, { "h", 3600000 }, { "ms", 1 }, { "m", 60000 }, { "s", 1000 } };
	int order[] = { 0, 1, 3, 4, 2 }; /* d h m s ms */
	int last = -1;
	__int128 total = 0;
	bool any = false;
	while (i < n) {
		size_t start = i;
		__int128 v = 0;
		while (i < n && s[i] >= '0' && s[i] <= '9') {
			v = v * 10 + (s[i] - '0');
			if (v > INT64_MAX)
				return false;
			i++;
		}
		if (i == start)
			return false;
		int u = -1;
		for (int k = 0; k < 5; k++) {
			size_t ul = strlen(units[k].u);
			if (i + ul <= n && memcmp(s + i, units[k].u, ul) == 0 &&
			    !(k == 3 && i + 1 < n && s[i + 1] == 's')) {
				u = k;
				i += ul;
				break;
			}
		}
		if (u < 0)
			return false;
		int pos = 0;
		while (order[pos] != u)
			pos++;
		if (pos <= last)
			return false;
		last = pos;
		total += v * units[u].ms;
		if (total > INT64_MAX)
			return false;
		any = true;
	}
	if (!any)
		return false;
	*ret = neg ? -(int64_t)total : (int64_t)total;
	return true;
}

/* ---- equality, like ---- */

bool
val_str_eq(const char *a, size_t an, const char *b, size_t bn)
{
	return an == bn && memcmp(a, b, an) == 0;
}

bool
val_set_has(const struct val *set, const struct val *x)
{
	for (uint32_t i = 0; i < set->len; i++)
		if (val_eq(&set->u.items[i], x))
			return true;
	return false;
}

bool
val_eq(const struct val *a, const struct val *b)
{
	if (a->t != b->t)
		return false;
	switch (a->t) {
	case V_BOOL: return a->u.b == b->u.b;
	case V_LONG:
	case V_DEC:
	case V_DATETIME:
	case V_DURATION: return a->u.l == b->u.l;
	case V_STR: return val_str_eq(a->u.s, a->len, b->u.s, b->len);
	case V_ENT:
		return (a->u.e.etype == b->u.e.etype || strcmp(a->u.e.etype, b->u.e.etype) == 0) &&
		       val_str_eq(a->u.e.id, a->len, b->u.e.id, b->len);
	case V_IP:
		return a->ip_v6 == b->ip_v6 && a->ip_prefix == b->ip_prefix &&
		       memcmp(a->u.ip, b->u.ip, 16) == 0;
	case V_SET:
		for (uint32_t i = 0; i < a->len; i++)
			if (!val_set_has(b, &a->u.items[i]))
				return false;
		for (uint32_t i = 0; i < b->len; i++)
			if (!val_set_has(a, &b->u.items[i]))
				return false;
		return true;
	case V_REC:
		if (a->len != b->len)
			return false;
		for (uint32_t i = 0; i < a->len; i++) {
			bool found = false;
			for (uint32_t j = 0; j < b->len && !found; j++)
				if (strcmp(a->u.rec[i].name, b->u.rec[j].name) == 0) {
					if (!val_eq(&a->u.rec[i].v, &b->u.rec[j].v))
						return false;
					found = true;
				}
			if (!found)
				return false;
		}
		return true;
	default: return false;
	}
}
