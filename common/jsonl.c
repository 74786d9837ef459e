/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jsonl.c — the pieces of a decisions.jsonl line (jsonl.h).
 * Trusts: nothing in the strings: each is escaped, its UTF-8 checked sequence by
 * sequence (overlong forms, surrogates and code points past U+10FFFF are invalid), and
 * the room for its worst case (every byte six) is made before a byte is written.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonl.h"

static void
signals_block(const struct jsonl *j, sigset_t *old)
{
	sigset_t all;
	if (!j->block_signals)
		return;
	sigfillset(&all);
	(void)sigprocmask(SIG_BLOCK, &all, old);
}

static void
signals_restore(const struct jsonl *j, const sigset_t *old)
{
	if (j->block_signals)
		(void)sigprocmask(SIG_SETMASK, old, NULL);
}

static bool
grow(struct jsonl *j, size_t n)
{
	if (j->bad)
		return false;
	size_t cap = j->cap ? j->cap : j->first_cap ? j->first_cap : 512;
	while (n > cap - j->len) {
		if (cap > SIZE_MAX / 4) {
			j->bad = j->oom = true;
			return false;
		}
		cap *= 2;
	}
	sigset_t old;
	signals_block(j, &old);
	char *b = realloc(j->buf, cap);
	if (b) {
		j->buf = b;
		j->cap = cap;
	}
	signals_restore(j, &old);
	if (!b) {
		j->bad = j->oom = true;
		return false;
	}
	return true;
}

bool
jsonl_grow(struct jsonl *j, size_t n)
{
	return grow(j, n);
}

/* Length of the valid UTF-8 sequence at p (n bytes left), 0 when invalid. */
static size_t
utf8_seq(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return n >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if (n < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f))
			return 0; /* overlong, surrogate */
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (n < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 ||
		    (p[3] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f))
			return 0; /* overlong, past U+10FFFF */
		return 4;
	}
	return 0;
}

/*
 * Whether the 8 bytes at P are all printable ASCII other than '"' and '\\' (the
 * has-less-than and has-zero-byte word tricks, exact as tests).
 */
static inline bool
plain8(const char *p)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	uint64_t w;
	memcpy(&w, p, 8);
	uint64_t quote = w ^ (ones * '"'), bslash = w ^ (ones * '\\');
	uint64_t low = (w - ones * 0x20) & ~w;
	uint64_t is_quote = (quote - ones) & ~quote;
	uint64_t is_bslash = (bslash - ones) & ~bslash;
	return ((w | low | is_quote | is_bslash) & highs) == 0;
}

/* 1: a byte written as it is (printable ASCII other than '"' and '\\'). */
static const unsigned char plain_byte[256] = {
#define R16(v) v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v
	R16(0), R16(0),
	/* 0x20-0x2f: '"' is 0x22 */
	1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	R16(1), R16(1),
	/* 0x50-0x5f: '\\' is 0x5c */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
	R16(1), R16(1),
	R16(0), R16(0), R16(0), R16(0), R16(0), R16(0), R16(0), R16(0),
#undef R16
};

void
jsonl_str(struct jsonl *j, const char *s, size_t n, enum jsonl_utf8 mode)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p = (const unsigned char *)s;

	if (!s)
		n = 0;
	/* Worst case: every byte becomes \u00XX (U+FFFD is 3 of the 6). */
	if (n > (SIZE_MAX - 2) / 6) {
		j->bad = j->oom = true;
		return;
	}
	if (!jsonl_room(j, 6 * n + 2))
		return;
	char *o = j->buf + j->len;
	*o++ = '"';
	for (size_t i = 0; i < n;) {
		/* the common case: 8 plain ASCII bytes at a time */
		while (n - i >= 8 && plain8(s + i)) {
			memcpy(o, s + i, 8);
			o += 8;
			i += 8;
		}
		while (i < n && plain_byte[p[i]])
			*o++ = s[i++];
		if (i >= n)
			break;
		unsigned char c = p[i];
		if (c >= 0x80) {
			size_t k = utf8_seq(p + i, n - i);
			if (k == 0 && mode == JSONL_UTF8_STRICT) {
				j->bad = true; /* nothing of it counted: the line is dropped */
				return;
			}
			if (k == 0) {
				*o++ = (char)0xef;
				*o++ = (char)0xbf;
				*o++ = (char)0xbd;
				i++;
			} else {
				memcpy(o, p + i, k);
				o += k;
				i += k;
			}
			continue;
		}
		*o++ = '\\';
		switch (c) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '\b': *o++ = 'b'; break;
		case '\f': *o++ = 'f'; break;
		case '\n': *o++ = 'n'; break;
		case '\r': *o++ = 'r'; break;
		case '\t': *o++ = 't'; break;
		default:
			*o++ = 'u';
			*o++ = '0';
			*o++ = '0';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
		i++;
	}
	*o++ = '"';
	j->len = (size_t)(o - j->buf);
}

void
jsonl_long(struct jsonl *j, int64_t v)
{
	static const char pairs[] = "00010203040506070809101112131415161718192021222324"
				    "25262728293031323334353637383940414243444546474849"
				    "50515253545556575859606162636465666768697071727374"
				    "75767778798081828384858687888990919293949596979899";
	char num[24], *e = num + sizeof(num), *o = e;
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	while (u >= 100) {
		unsigned k = (unsigned)(u % 100) * 2;
		u /= 100;
		*--o = pairs[k + 1];
		*--o = pairs[k];
	}
	if (u >= 10) {
		*--o = pairs[u * 2 + 1];
		*--o = pairs[u * 2];
	} else
		*--o = (char)('0' + u);
	if (v < 0)
		*--o = '-';
	jsonl_put(j, o, (size_t)(e - o));
}

void
jsonl_head(struct jsonl *j, int64_t time_ns, const char *box, const char *id,
	   enum jsonl_utf8 mode)
{
	char t[40];
	jsonl_time(time_ns, t, sizeof(t));
	JSONL_LIT(j, "{\"time\":\"");
	jsonl_put(j, t, strlen(t));
	JSONL_LIT(j, "\",\"time_ns\":");
	jsonl_long(j, time_ns);
	JSONL_LIT(j, ",\"box\":");
	jsonl_cstr(j, box, mode);
	JSONL_LIT(j, ",\"id\":");
	jsonl_cstr(j, id, mode);
}

int
jsonl_end(struct jsonl *j, size_t start)
{
	if (!j->bad)
		return 0;
	int r = j->oom ? -ENOMEM : -EINVAL;
	j->len = start <= j->len ? start : j->len;
	j->bad = j->oom = false;
	return r;
}

void
jsonl_free(struct jsonl *j)
{
	sigset_t old;
	signals_block(j, &old);
	free(j->buf);
	j->buf = NULL;
	j->len = j->cap = 0;
	j->bad = j->oom = false;
	signals_restore(j, &old);
}

/*
 * The "YYYY-MM-DDTHH:MM:SS" of the last second formatted: decisions come many to a
 * second, and gmtime_r costs more than the rest of the stamp. Single-threaded callers.
 */
static struct {
	time_t second;
	bool valid;
	char text[20];
} time_cache;

void
jsonl_time(int64_t time_ns, char *buf, size_t len)
{
	struct tm tm;
	time_t s = (time_t)(time_ns / 1000000000LL);
	int64_t ns = time_ns % 1000000000LL;

	if (ns < 0) { /* floor, not toward zero: -1 ns is 23:59:59.999 the day before */
		ns += 1000000000LL;
		s--;
	}
	int64_t ms = ns / 1000000LL;
	if (time_cache.valid && time_cache.second == s && len >= 25) {
		memcpy(buf, time_cache.text, 19);
		char *o = buf + 19;
		*o++ = '.';
		*o++ = (char)('0' + ms / 100);
		*o++ = (char)('0' + ms / 10 % 10);
		*o++ = (char)('0' + ms % 10);
		*o++ = 'Z';
		*o = '\0';
		return;
	}
	if (!gmtime_r(&s, &tm)) {
		(void)snprintf(buf, len, "1970-01-01T00:00:00.000Z");
		return;
	}
	int year = tm.tm_year + 1900;
	if (year < 0 || year > 9999 || len < 25) {
		(void)snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", year,
			       tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)ms);
		return;
	}
	/* The same text without printf: this runs on every decision. */
	const int parts[] = { year / 100, year % 100, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
			      tm.tm_min, tm.tm_sec };
	static const char seps[] = "\0-" "-T::";
	char *o = buf;
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		if (i > 1)
			*o++ = seps[i - 1];
		*o++ = (char)('0' + parts[i] / 10);
		*o++ = (char)('0' + parts[i] % 10);
	}
	memcpy(time_cache.text, buf, 19);
	time_cache.second = s;
	time_cache.valid = true;
	*o++ = '.';
	*o++ = (char)('0' + ms / 100);
	*o++ = (char)('0' + ms / 10 % 10);
	*o++ = (char)('0' + ms % 10);
	*o++ = 'Z';
	*o = '\0';
}
