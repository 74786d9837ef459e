/*
 * declog.c — decisions.jsonl lines for box-sh (declog.h).
 *
 * Key order (docs/boxctl.1.md): time time_ns box id action resource verdict cause
 * rules message source input, and for outcomes time time_ns box id record
 * action input output source. Escapes as jansson writes them (\" \\ \b \f
 * \n \r \t, \u00XX upper case for other control characters, the rest raw),
 * so the lines read like box-policyd's.
 * Trusts: nothing in the strings; invalid UTF-8 becomes U+FFFD.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "declog.h"

int shlog_stage_buffered;
int shlog_write_through;

/* All signals blocked (OLD: the mask to restore), around what a handler must not see half done. */
static void
block_all(sigset_t *old)
{
	sigset_t all;
	sigfillset(&all);
	(void)sigprocmask(SIG_BLOCK, &all, old);
}

static void
restore(const sigset_t *old)
{
	(void)sigprocmask(SIG_SETMASK, old, NULL);
}

/* The formatted "YYYY-MM-DDTHH:MM:SS" of the last second seen (many decisions share one). */
static struct {
	int64_t second;
	bool valid;
	char text[20];
} time_cache;

void
shlog_time(int64_t time_ns, char *buf, size_t len)
{
	int64_t s = time_ns / 1000000000LL, ns = time_ns % 1000000000LL;
	if (ns < 0) {
		ns += 1000000000LL;
		s--;
	}
	if (len < 25) {
		if (len)
			buf[0] = '\0';
		return;
	}
	if (!time_cache.valid || time_cache.second != s) {
		struct tm tm;
		time_t t = (time_t)s;
		if (!gmtime_r(&t, &tm) || tm.tm_year + 1900 < 0 || tm.tm_year + 1900 > 9999)
			memset(&tm, 0, sizeof(tm)), tm.tm_year = 70, tm.tm_mday = 1;
		/* without printf: every field is in range here */
		const int parts[] = { (tm.tm_year + 1900) / 100, (tm.tm_year + 1900) % 100,
				      tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec };
		static const char seps[] = "\0-" "-T::";
		char *o = time_cache.text;
		for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
			if (i > 1)
				*o++ = seps[i - 1];
			*o++ = (char)('0' + parts[i] / 10 % 10);
			*o++ = (char)('0' + parts[i] % 10);
		}
		*o = '\0';
		time_cache.second = s;
		time_cache.valid = true;
	}
	int ms = (int)(ns / 1000000);
	memcpy(buf, time_cache.text, 19);
	buf[19] = '.';
	buf[20] = (char)('0' + ms / 100);
	buf[21] = (char)('0' + ms / 10 % 10);
	buf[22] = (char)('0' + ms % 10);
	buf[23] = 'Z';
	buf[24] = '\0';
}

static bool grow(struct shlog *l, size_t n);

static inline bool
room(struct shlog *l, size_t n)
{
	return (!l->oom && n <= l->cap - l->len) || grow(l, n);
}

static bool
grow(struct shlog *l, size_t n)
{
	if (l->oom)
		return false;
	size_t cap = l->cap ? l->cap : 64 * 1024;
	while (n > cap - l->len) {
		if (cap > SIZE_MAX / 4) {
			l->oom = true;
			return false;
		}
		cap *= 2;
	}
	sigset_t old;
	block_all(&old);
	char *b = realloc(l->buf, cap);
	if (b) {
		l->buf = b;
		l->cap = cap;
	}
	restore(&old);
	if (!b) {
		l->oom = true;
		return false;
	}
	return true;
}

static inline void
put(struct shlog *l, const char *s, size_t n)
{
	if (room(l, n)) {
		memcpy(l->buf + l->len, s, n);
		l->len += n;
	}
}

#define PUT_LIT(l, lit) put((l), (lit), sizeof(lit) - 1)

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
			return 0;
		return 4;
	}
	return 0;
}

/* Whether the 8 bytes at P are all printable ASCII other than '"' and '\\'. */
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

static void
put_str(struct shlog *l, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p = (const unsigned char *)s;

	if (n > (SIZE_MAX - 2) / 6 || !room(l, 6 * n + 2))
		return;
	char *o = l->buf + l->len;
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
			if (k == 0) {
				/* U+FFFD: 3 bytes, never more than the 6 reserved per input byte */
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
	l->len = (size_t)(o - l->buf);
}

static void
put_cstr(struct shlog *l, const char *s)
{
	put_str(l, s ? s : "", s ? strlen(s) : 0);
}

static void
put_long(struct shlog *l, int64_t v)
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
	put(l, o, (size_t)(e - o));
}

static void
put_fields(struct shlog *l, const struct shlog_field *f, size_t n)
{
	PUT_LIT(l, "{");
	for (size_t i = 0; i < n; i++) {
		if (i)
			PUT_LIT(l, ",");
		/* names are the decider's own identifiers: nothing to escape */
		PUT_LIT(l, "\"");
		put(l, f[i].name, f[i].name_len ? f[i].name_len : strlen(f[i].name));
		PUT_LIT(l, "\":");
		if (f[i].is_long)
			put_long(l, f[i].num);
		else
			put_str(l, f[i].str ? f[i].str : "", f[i].str ? f[i].len : 0);
	}
	PUT_LIT(l, "}");
}

static void
put_head(struct shlog *l, int64_t time_ns, const char *box, const char *id)
{
	char t[32];
	shlog_time(time_ns, t, sizeof(t));
	PUT_LIT(l, "{\"time\":\"");
	put(l, t, strlen(t));
	PUT_LIT(l, "\",\"time_ns\":");
	put_long(l, time_ns);
	if ((!box || !*box) && (!id || !*id)) {
		PUT_LIT(l, ",\"box\":\"\",\"id\":\"\"");
		return;
	}
	PUT_LIT(l, ",\"box\":");
	put_cstr(l, box);
	PUT_LIT(l, ",\"id\":");
	put_cstr(l, id);
}

/* Keep the line whole or not at all. */
static int
finish(struct shlog *l, size_t start)
{
	PUT_LIT(l, "}\n");
	if (l->oom) {
		l->len = start;
		l->oom = false;
		return -ENOMEM;
	}
	/* the line's bytes are in place before a handler can see it counted */
	__atomic_store_n(&l->committed, l->len, __ATOMIC_RELEASE);
	return 0;
}

int
shlog_fields(struct shlog *out, const struct shlog_field *f, size_t n)
{
	out->len = 0;
	out->oom = false;
	put_fields(out, f, n);
	if (out->oom) {
		out->len = 0;
		out->oom = false;
		return -ENOMEM;
	}
	return 0;
}

/* Everything of a decision line before its input object. */
static void
put_decision(struct shlog *l, int64_t time_ns, const char *box, const char *id,
	     const char *action, const char *resource, bool permit, const char *cause,
	     const char *const *rules, size_t n_rules, const char *message)
{
	put_head(l, time_ns, box, id);
	PUT_LIT(l, ",\"action\":");
	put_cstr(l, action);
	PUT_LIT(l, ",\"resource\":");
	put_cstr(l, resource);
	if (permit)
		PUT_LIT(l, ",\"verdict\":\"permit\",\"cause\":");
	else
		PUT_LIT(l, ",\"verdict\":\"deny\",\"cause\":");
	put_cstr(l, cause);
	PUT_LIT(l, ",\"rules\":[");
	for (size_t i = 0; i < n_rules; i++) {
		if (i)
			PUT_LIT(l, ",");
		put_cstr(l, rules[i]);
	}
	PUT_LIT(l, "],\"message\":");
	put_cstr(l, message);
	PUT_LIT(l, ",\"source\":\"box-shell\",\"input\":");
}

int
shlog_decision_json(struct shlog *l, int64_t time_ns, const char *box, const char *id,
		    const char *action, const char *resource, bool permit, const char *cause,
		    const char *const *rules, size_t n_rules, const char *message,
		    const struct shlog *input)
{
	size_t start = l->len;
	put_decision(l, time_ns, box, id, action, resource, permit, cause, rules, n_rules, message);
	put(l, input->buf, input->len);
	return finish(l, start);
}

int
shlog_outcome_json(struct shlog *l, int64_t time_ns, const char *box, const char *id,
		   const char *record, const char *action, const struct shlog *input,
		   const struct shlog_field *output, size_t n_output)
{
	size_t start = l->len;
	put_head(l, time_ns, box, id);
	PUT_LIT(l, ",\"record\":");
	put_cstr(l, record);
	PUT_LIT(l, ",\"action\":");
	put_cstr(l, action);
	PUT_LIT(l, ",\"input\":");
	put(l, input->buf, input->len);
	PUT_LIT(l, ",\"output\":");
	put_fields(l, output, n_output);
	PUT_LIT(l, ",\"source\":\"box-shell\"");
	return finish(l, start);
}

int
shlog_decision(struct shlog *l, int64_t time_ns, const char *box, const char *id,
	       const char *action, const char *resource, bool permit, const char *cause,
	       const char *const *rules, size_t n_rules, const char *message,
	       const struct shlog_field *input, size_t n_input)
{
	size_t start = l->len;
	put_decision(l, time_ns, box, id, action, resource, permit, cause, rules, n_rules, message);
	put_fields(l, input, n_input);
	return finish(l, start);
}

int
shlog_outcome(struct shlog *l, int64_t time_ns, const char *box, const char *id,
	      const char *record, const char *action, const struct shlog_field *input,
	      size_t n_input, const struct shlog_field *output, size_t n_output)
{
	size_t start = l->len;
	put_head(l, time_ns, box, id);
	PUT_LIT(l, ",\"record\":");
	put_cstr(l, record);
	PUT_LIT(l, ",\"action\":");
	put_cstr(l, action);
	PUT_LIT(l, ",\"input\":");
	put_fields(l, input, n_input);
	PUT_LIT(l, ",\"output\":");
	put_fields(l, output, n_output);
	PUT_LIT(l, ",\"source\":\"box-shell\"");
	return finish(l, start);
}

int
shlog_flush(struct shlog *l, int fd)
{
	size_t off = 0;
	int r = 0;
	sigset_t old;
	if (l->len == 0)
		return 0;
	block_all(&old);
	while (off < l->len) {
		ssize_t n = write(fd, l->buf + off, l->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;
			break;
		}
		off += (size_t)n;
	}
	l->len = 0;
	__atomic_store_n(&l->committed, 0, __ATOMIC_RELEASE);
	restore(&old);
	return r;
}

void
shlog_write_committed(const struct shlog *l, int fd)
{
	size_t n = __atomic_load_n(&l->committed, __ATOMIC_ACQUIRE), off = 0;
	const char *b = l->buf;
	while (b && off < n) {
		ssize_t k = write(fd, b + off, n - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		off += (size_t)k;
	}
}

void
shlog_done(struct shlog *l)
{
	sigset_t old;
	block_all(&old);
	free(l->buf);
	*l = (struct shlog){ 0 };
	restore(&old);
}
