/*
 * declog.c — decisions.jsonl lines (declog.h).
 *
 * Key order is the one of docs/boxctl.1.md: time time_ns box id action resource
 * verdict cause rules message source input for a decision, and time time_ns
 * box id record action input output source for a recorded outcome (what
 * `boxctl policy replay` needs to rebuild the history). `time_ns` is the
 * event's time as the temporal monitor saw it (`time` has milliseconds
 * only). `input` and `output` hold the action's fields as plain JSON
 * (strings, integers, booleans, arrays for sets, objects for records), in
 * the order the peer sent them: the action's input fields, never a secret
 * or a body (the peers send no such field; the schema has none).
 * The line is written straight into one buffer (this runs on every
 * decision): byte for byte what jansson's json_dumps(JSON_COMPACT |
 * JSON_PRESERVE_ORDER) makes of the same object — the same escapes
 * (\" \\ \b \f \n \r \t, \u00XX in upper case for the other control
 * characters, everything else raw), a repeated field name keeps its first
 * place and its last value (test/policyd/test_policyd.c compares whole lines).
 * Trusts: strings are valid UTF-8 (proto/policy_validate.c checked them);
 * a string that is not still makes the line fail, never a partial line.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cleanup.h"
#include "declog.h"
#include "policy_validate.h"

void
declog_init(void)
{
	json_object_seed(0);
}

/*
 * The "YYYY-MM-DDTHH:MM:SS" of the last second formatted: decisions come
 * many to a second, and gmtime_r costs more than the rest of the stamp.
 * policyd is single-threaded; so is everything else that calls this.
 */
static struct {
	time_t second;
	bool valid;
	char text[20];
} time_cache;

void
declog_time(int64_t time_ns, char *buf, size_t len)
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
	for (size_t i = 0; i < ELEMENTSOF(parts); i++) {
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

/* The line being built; `bad` once anything failed (memory, invalid UTF-8). */
struct sbuf {
	char *s;
	size_t len, cap;
	bool bad, oom;
};

static bool
sb_grow(struct sbuf *b, size_t n)
{
	if (b->bad)
		return false;
	if (n <= b->cap - b->len)
		return true;
	size_t cap = b->cap ? b->cap : 512;
	while (n > cap - b->len) {
		if (cap > SIZE_MAX / 2) {
			b->bad = b->oom = true;
			return false;
		}
		cap *= 2;
	}
	char *t = realloc(b->s, cap);
	if (!t) {
		b->bad = b->oom = true;
		return false;
	}
	b->s = t;
	b->cap = cap;
	return true;
}

static inline bool
sb_room(struct sbuf *b, size_t n)
{
	return (!b->bad && n <= b->cap - b->len) || sb_grow(b, n);
}

static void
sb_put(struct sbuf *b, const char *s, size_t n)
{
	if (sb_room(b, n)) {
		memcpy(b->s + b->len, s, n);
		b->len += n;
	}
}

#define SB_LIT(b, lit) sb_put((b), (lit), sizeof(lit) - 1)

/* Bytes JSON needs escaped: control characters, '"' and '\\'. */
static inline bool
needs_escape(unsigned char c)
{
	return c < 0x20 || c == '"' || c == '\\';
}

/*
 * Whether any of the 8 bytes at P needs an escape: a byte below 0x20, '"' or
 * '\\' (the has-less-than and has-zero-byte word tricks, exact as tests);
 * the word's high bits go to *HIGH.
 */
static inline bool
word_needs_escape(const char *p, uint64_t *high)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	uint64_t w;
	memcpy(&w, p, 8);
	*high |= w & highs;
	uint64_t quote = w ^ (ones * '"'), bslash = w ^ (ones * '\\');
	uint64_t below_space = (w - ones * 0x20) & ~w;
	uint64_t is_quote = (quote - ones) & ~quote;
	uint64_t is_bslash = (bslash - ones) & ~bslash;
	return ((below_space | is_quote | is_bslash) & highs) != 0;
}

/* A JSON string, escaped as jansson does it; NULL is "". */
static void
sb_str(struct sbuf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = s ? strlen(s) : 0;
	uint64_t high = 0; /* any byte >= 0x80 seen: then the UTF-8 check */

	/* Worst case: every byte becomes \u00XX. */
	if (n > (SIZE_MAX - 2) / 6) {
		b->bad = b->oom = true;
		return;
	}
	if (!sb_room(b, 6 * n + 2))
		return;
	char *o = b->s + b->len;
	*o++ = '"';
	for (size_t i = 0; i < n;) {
		/* Copy the run that needs no escape in one go (most strings are one run). */
		size_t run = i;
		while (n - run >= 8 && !word_needs_escape(s + run, &high))
			run += 8;
		while (run < n && !needs_escape((unsigned char)s[run])) {
			high |= (unsigned char)s[run] & 0x80;
			run++;
		}
		memcpy(o, s + i, run - i);
		o += run - i;
		if (run == n)
			break;
		unsigned char c = (unsigned char)s[run];
		i = run + 1;
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
			break;
		}
	}
	*o++ = '"';
	/* strlen found no NUL, so pure ASCII is valid; anything else is checked whole. */
	if (high && !box_valid_utf8(s, n)) {
		b->bad = true;
		return;
	}
	b->len = (size_t)(o - b->s);
}

static void sb_fields(struct sbuf *b, Box__PolicyField *const *f, size_t n);

static void
sb_value(struct sbuf *b, const Box__PolicyValue *v)
{
	char num[32];
	int k;

	if (!v) {
		b->bad = true;
		return;
	}
	switch (v->kind_case) {
	case BOX__POLICY_VALUE__KIND_STR:
		if (!v->str)
			b->bad = true;
		else
			sb_str(b, v->str);
		break;
	case BOX__POLICY_VALUE__KIND_INTEGER:
		k = snprintf(num, sizeof(num), "%lld", (long long)v->integer);
		sb_put(b, num, k > 0 ? (size_t)k : 0);
		break;
	case BOX__POLICY_VALUE__KIND_BOOLEAN:
		if (v->boolean)
			SB_LIT(b, "true");
		else
			SB_LIT(b, "false");
		break;
	case BOX__POLICY_VALUE__KIND_SET:
		if (!v->set) {
			b->bad = true;
			break;
		}
		SB_LIT(b, "[");
		for (size_t i = 0; i < v->set->n_elems && !b->bad; i++) {
			if (i > 0)
				SB_LIT(b, ",");
			sb_value(b, v->set->elems[i]);
		}
		SB_LIT(b, "]");
		break;
	case BOX__POLICY_VALUE__KIND_RECORD:
		if (!v->record)
			b->bad = true;
		else
			sb_fields(b, v->record->fields, v->record->n_fields);
		break;
	case BOX__POLICY_VALUE__KIND__NOT_SET:
	default: b->bad = true; break;
	}
}

/*
 * An object in the peer's order. A name given twice keeps the place of its
 * first occurrence and the value of its last (jansson's set-in-place); every
 * value must still be well-formed.
 */
static void
sb_fields(struct sbuf *b, Box__PolicyField *const *f, size_t n)
{
	bool first = true;

	SB_LIT(b, "{");
	for (size_t i = 0; i < n && !b->bad; i++) {
		if (!f[i] || !f[i]->name) {
			b->bad = true;
			break;
		}
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(f[j]->name, f[i]->name) == 0;
		if (seen) {
			/* Emitted already; it must still be a value jansson would take. */
			struct sbuf scratch = { 0 };
			sb_value(&scratch, f[i]->value);
			free(scratch.s);
			b->bad = b->bad || scratch.bad;
			b->oom = b->oom || scratch.oom;
			continue;
		}
		size_t last = i;
		for (size_t j = i + 1; j < n; j++)
			if (f[j] && f[j]->name && strcmp(f[j]->name, f[i]->name) == 0)
				last = j;
		if (last != i) {
			/* The first value is replaced, but it had to be well-formed. */
			struct sbuf scratch = { 0 };
			sb_value(&scratch, f[i]->value);
			free(scratch.s);
			b->bad = b->bad || scratch.bad;
			b->oom = b->oom || scratch.oom;
		}
		if (!first)
			SB_LIT(b, ",");
		first = false;
		sb_str(b, f[i]->name);
		SB_LIT(b, ":");
		sb_value(b, f[last]->value);
	}
	SB_LIT(b, "}");
}

/* ,"time_ns":N */
static void
sb_time_ns(struct sbuf *b, int64_t time_ns)
{
	char num[48];
	int k = snprintf(num, sizeof(num), ",\"time_ns\":%lld", (long long)time_ns);
	sb_put(b, num, k > 0 ? (size_t)k : 0);
}

/* NUL-terminate, hand the buffer back; a failed line leaves nothing behind. */
static int
sb_finish(struct sbuf *b, char **buf, size_t *len, size_t *cap)
{
	if (sb_room(b, 1))
		b->s[b->len] = '\0';
	/* The buffer may have moved even when the line failed: hand it back. */
	*buf = b->s;
	*cap = b->cap;
	if (b->bad) {
		if (b->s && b->cap > *len)
			b->s[*len] = '\0'; /* nothing of the failed line stays */
		return b->oom ? -ENOMEM : -EINVAL;
	}
	*len = b->len;
	return 0;
}

int
declog_append(const struct declog_entry *e, char **buf, size_t *len, size_t *cap)
{
	struct sbuf b = { .s = *buf, .len = *len, .cap = *cap };
	char t[40];

	declog_time(e->time_ns, t, sizeof(t));
	SB_LIT(&b, "{\"time\":");
	sb_str(&b, t);
	sb_time_ns(&b, e->time_ns);
	SB_LIT(&b, ",\"box\":");
	sb_str(&b, e->box);
	SB_LIT(&b, ",\"id\":");
	sb_str(&b, e->id);
	SB_LIT(&b, ",\"action\":");
	sb_str(&b, e->action);
	SB_LIT(&b, ",\"resource\":");
	sb_str(&b, e->resource);
	if (e->permit)
		SB_LIT(&b, ",\"verdict\":\"permit\",\"cause\":");
	else
		SB_LIT(&b, ",\"verdict\":\"deny\",\"cause\":");
	sb_str(&b, e->cause);
	SB_LIT(&b, ",\"rules\":[");
	for (size_t i = 0; i < e->n_rules; i++) {
		if (i > 0)
			SB_LIT(&b, ",");
		sb_str(&b, e->rules[i]);
	}
	SB_LIT(&b, "],\"message\":");
	sb_str(&b, e->message);
	SB_LIT(&b, ",\"source\":");
	sb_str(&b, e->source);
	if (e->session) {
		SB_LIT(&b, ",\"session\":");
		sb_str(&b, e->session);
	}
	SB_LIT(&b, ",\"input\":");
	sb_fields(&b, e->input, e->n_input);
	SB_LIT(&b, "}\n");
	return sb_finish(&b, buf, len, cap);
}

int
declog_append_outcome(const struct declog_outcome *o, char **buf, size_t *len, size_t *cap)
{
	struct sbuf b = { .s = *buf, .len = *len, .cap = *cap };
	char t[40];

	declog_time(o->time_ns, t, sizeof(t));
	SB_LIT(&b, "{\"time\":");
	sb_str(&b, t);
	sb_time_ns(&b, o->time_ns);
	SB_LIT(&b, ",\"box\":");
	sb_str(&b, o->box);
	SB_LIT(&b, ",\"id\":");
	sb_str(&b, o->id);
	if (o->error)
		SB_LIT(&b, ",\"record\":\"error\",\"action\":");
	else
		SB_LIT(&b, ",\"record\":\"response\",\"action\":");
	sb_str(&b, o->action);
	SB_LIT(&b, ",\"input\":");
	sb_fields(&b, o->input, o->n_input);
	if (!o->error) {
		SB_LIT(&b, ",\"output\":");
		sb_fields(&b, o->output, o->n_output);
	}
	SB_LIT(&b, ",\"source\":");
	sb_str(&b, o->source);
	if (o->session) {
		SB_LIT(&b, ",\"session\":");
		sb_str(&b, o->session);
	}
	SB_LIT(&b, "}\n");
	return sb_finish(&b, buf, len, cap);
}

char *
declog_format(const struct declog_entry *e, size_t *ret_len)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int r = declog_append(e, &buf, &len, &cap);

	if (r < 0) {
		free(buf);
		errno = -r;
		return NULL;
	}
	*ret_len = len;
	return buf;
}

int
declog_write(int fd, const struct declog_entry *e)
{
	size_t len;
	char *line = declog_format(e, &len);

	if (!line)
		return -errno;
	ssize_t n;
	do
		n = write(fd, line, len);
	while (n < 0 && errno == EINTR);
	int r = n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
	free(line);
	return r;
}
