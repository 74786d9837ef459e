/* SPDX-License-Identifier: Apache-2.0 */
/*
 * redact.c — the spellings of a secret and their removal from what a bound
 * destination sends back (redact.h; docs/box-gateway.8.md, "Redaction").
 *
 * Trusts: the secret it is built from. Nothing in the data it scans: every
 * position is examined at most once per feed plus once per held byte, and
 * what is held is bounded by the longest spelling.
 *
 * Why these spellings: they are exactly the forms in which the gateway sent
 * the secret (as it is in a header, base64 in a Basic token, percent-encoded
 * in a query) and the forms an echoing server writes them back in (the
 * percent-encoding in the other hex case, a JSON string's escapes, the secret
 * base64-encoded inside a longer text at any offset). A server that wanted to
 * leak the secret could always choose another encoding: box.ini(5) trusts a
 * bound destination with the secret, and redaction only keeps an echo from
 * reaching the sandbox.
 *
 * The matcher is one pass of Wu-Manber over all spellings: a window of
 * min_len bytes, a shift table indexed by the window's last two bytes (how
 * far the window may move before a spelling could start in it), and a check
 * of the spellings only where the shift is 0. Every spelling being long
 * (min_len >= CRED_SPELLING_MIN unless the secret itself is shorter), a
 * window usually moves min_len - 1 bytes at a time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "encode.h"
#include "redact.h"

#define CRED_REDACTED_LEN (sizeof(CRED_REDACTED) - 1)
/* The shift table: 4 KiB, so that it stays in L1 (the window's next position waits on it). */
#define SHIFT_SIZE 4096u

/* A 2-byte block's slot; blocks that share one get the smaller shift, which is safe. */
static inline size_t
block2(const uint8_t *w)
{
	return ((size_t)w[0] << 4 ^ w[1]) & (SHIFT_SIZE - 1);
}

/* ---- building the spellings ----------------------------------------------------- */

struct builder {
	uint8_t **p;
	size_t *len;
	size_t n, cap;
	int err;
};

static void
add(struct builder *b, const uint8_t *s, size_t n, bool is_secret)
{
	if (b->err || n == 0 || (!is_secret && n < CRED_SPELLING_MIN))
		return;
	for (size_t i = 0; i < b->n; i++)
		if (b->len[i] == n && memcmp(b->p[i], s, n) == 0)
			return;
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 32;
		uint8_t **p = realloc(b->p, cap * sizeof(*p));
		if (p)
			b->p = p;
		size_t *len = p ? realloc(b->len, cap * sizeof(*len)) : NULL;
		if (!p || !len) {
			b->err = -ENOMEM;
			return;
		}
		b->len = len;
		b->cap = cap;
	}
	uint8_t *copy = malloc(n);
	if (!copy) {
		b->err = -ENOMEM;
		return;
	}
	memcpy(copy, s, n);
	b->p[b->n] = copy;
	b->len[b->n++] = n;
}

static void
free_secret(void *p, size_t n)
{
	if (p) {
		explicit_bzero(p, n);
		free(p);
	}
}

/* base as it is, percent-encoded and JSON-escaped. */
static void
add_forms(struct builder *b, const uint8_t *base, size_t n, bool is_secret)
{
	add(b, base, n, is_secret);
	for (int upper = 0; upper < 2; upper++) {
		size_t en;
		char *e = enc_pct(base, n, upper, &en);
		if (!e) {
			b->err = -ENOMEM;
			return;
		}
		add(b, (const uint8_t *)e, en, false);
		free_secret(e, en);
	}
	for (unsigned flags = 0; flags < ENC_JSON_FLAGS; flags++) {
		char *e;
		size_t en;
		int r = enc_json(base, n, flags, &e, &en);
		if (r == -EILSEQ)
			continue; /* not UTF-8: no encoder writes it as \u escapes */
		if (r < 0) {
			b->err = r;
			return;
		}
		add(b, (const uint8_t *)e, en, false);
		free_secret(e, en);
	}
}

/* The base64 spellings for one alphabet: the padded encoding of the secret, and the part
 * that depends on the secret alone when a filler bytes precede it (a = 0, 1, 2). */
static void
add_base64(struct builder *b, const uint8_t *secret, size_t len, enum enc_b64_alphabet al)
{
	size_t en;
	char *e = enc_b64(secret, len, al, true, &en);
	if (!e) {
		b->err = -ENOMEM;
		return;
	}
	add_forms(b, (const uint8_t *)e, en, false);
	free_secret(e, en);
	uint8_t *t = calloc(len + 2, 1);
	if (!t) {
		b->err = -ENOMEM;
		return;
	}
	for (size_t a = 0; a < 3 && !b->err; a++) {
		memcpy(t + a, secret, len);
		e = enc_b64(t, a + len, al, false, &en);
		if (!e) {
			b->err = -ENOMEM;
			break;
		}
		/* character j holds bits [6j, 6j + 6); the secret's are [8a, 8(a + len)) */
		size_t from = (8 * a + 5) / 6, to = 8 * (a + len) / 6;
		if (to > from)
			add_forms(b, (const uint8_t *)e + from, to - from, false);
		free_secret(e, en);
		memset(t, 0, a + 1);
	}
	free_secret(t, len + 2);
}

void
cred_spellings_free(struct cred_spellings *sp)
{
	if (!sp)
		return;
	free_secret(sp->bytes, sp->bytes_len);
	free_secret(sp->shift, SHIFT_SIZE);
	free(sp->pat);
	free(sp->len);
	explicit_bzero(sp, sizeof(*sp));
	free(sp);
}

static int
spellings_index(struct cred_spellings *sp)
{
	size_t m = sp->min_len, B = m >= 2 ? 2 : 1;
	sp->block = (unsigned)B;
	sp->shift = malloc(SHIFT_SIZE);
	if (!sp->shift)
		return -ENOMEM;
	size_t def = m - B + 1;
	memset(sp->shift, def > 255 ? 255 : (int)def, SHIFT_SIZE);
	for (size_t k = 0; k < sp->n; k++) {
		const uint8_t *s = sp->pat[k];
		sp->first[s[0] >> 3] |= (uint8_t)(1u << (s[0] & 7));
		/* a block at offset j of a spelling's first m bytes: the window may move at most
		 * m - B - j past a window that ends in it */
		for (size_t j = 0; j + B <= m; j++) {
			size_t idx = B == 2 ? block2(s + j) : s[j];
			size_t sh = m - B - j;
			if (sh < sp->shift[idx])
				sp->shift[idx] = (uint8_t)sh;
		}
	}
	return 0;
}

int
cred_spellings_new(const uint8_t *secret, size_t len, struct cred_spellings **out)
{
	struct builder b = {0};
	struct cred_spellings *sp = NULL;
	int r;

	*out = NULL;
	if (!secret || len == 0)
		return -EINVAL;
	add_forms(&b, secret, len, true);
	add_base64(&b, secret, len, ENC_B64_STD);
	add_base64(&b, secret, len, ENC_B64_URL);
	if ((r = b.err) < 0)
		goto out;
	r = -ENOMEM;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		goto out;
	sp->n = b.n;
	for (size_t k = 0; k < b.n; k++)
		sp->bytes_len += b.len[k];
	sp->bytes = malloc(sp->bytes_len);
	sp->pat = calloc(b.n, sizeof(*sp->pat));
	sp->len = calloc(b.n, sizeof(*sp->len));
	if (!sp->bytes || !sp->pat || !sp->len)
		goto out;
	sp->min_len = SIZE_MAX;
	for (size_t k = 0, o = 0; k < b.n; k++) {
		memcpy(sp->bytes + o, b.p[k], b.len[k]);
		sp->pat[k] = sp->bytes + o;
		sp->len[k] = b.len[k];
		o += b.len[k];
		if (b.len[k] < sp->min_len)
			sp->min_len = b.len[k];
		if (b.len[k] > sp->max_len)
			sp->max_len = b.len[k];
	}
	if ((r = spellings_index(sp)) < 0)
		goto out;
	*out = sp;
	sp = NULL;
	r = 0;
out:
	for (size_t k = 0; k < b.n; k++)
		free_secret(b.p[k], b.len[k]);
	free(b.p);
	free(b.len);
	cred_spellings_free(sp);
	return r;
}

/* ---- matching --------------------------------------------------------------------- */

enum scan_ev { SCAN_NONE, SCAN_MATCH, SCAN_PARTIAL };

/*
 * What starts at buf[p] (buf holds n bytes): the longest whole spelling
 * (*mlen), or, unless at_end, SCAN_PARTIAL when buf ends inside some spelling
 * it matches so far — that one may still complete, and it would be longer
 * than any whole match here, so nothing at p is decided yet.
 */
static enum scan_ev
at_pos(const struct cred_spellings *sp, const uint8_t *buf, size_t n, size_t p, bool at_end,
       size_t *mlen)
{
	size_t avail = n - p, best = 0;
	for (size_t k = 0; k < sp->n; k++) {
		const uint8_t *s = sp->pat[k];
		size_t l = sp->len[k];
		if (s[0] != buf[p])
			continue;
		if (l <= avail) {
			if (l > best && memcmp(buf + p, s, l) == 0)
				best = l;
		} else if (!at_end && memcmp(buf + p, s, avail) == 0) {
			return SCAN_PARTIAL;
		}
	}
	if (!best)
		return SCAN_NONE;
	*mlen = best;
	return SCAN_MATCH;
}

/* The first start position in [from, limit) where at_pos decides something. */
static enum scan_ev
scan(const struct cred_spellings *sp, const uint8_t *buf, size_t n, size_t from, size_t limit,
     bool at_end, size_t *at, size_t *mlen)
{
	const size_t m = sp->min_len;
	const uint8_t *shift = sp->shift;
	size_t p = from;
	if (limit > n)
		limit = n;
	/* Windows that fit. A position the shift skips cannot start a spelling, whole or
	 * partial: the window's last block would sit in that spelling's first m bytes at an
	 * offset where no spelling has it. */
	while (p < limit && n - p >= m) {
		size_t s = sp->block == 2 ? shift[block2(buf + p + m - 2)] : shift[buf[p]];
		if (s) {
			p += s;
			continue;
		}
		enum scan_ev e = at_pos(sp, buf, n, p, at_end, mlen);
		if (e != SCAN_NONE) {
			*at = p;
			return e;
		}
		p++;
	}
	/* The last m - 1 positions: too short for any whole spelling, a partial at most. */
	if (!at_end)
		for (; p < limit; p++) {
			if (!(sp->first[buf[p] >> 3] & (1u << (buf[p] & 7))))
				continue;
			if (at_pos(sp, buf, n, p, false, mlen) == SCAN_PARTIAL) {
				*at = p;
				return SCAN_PARTIAL;
			}
		}
	return SCAN_NONE;
}

/* ---- the streaming redactor -------------------------------------------------------- */

int
cred_redactor_init(struct cred_redactor *r, const struct cred_spellings *sp)
{
	memset(r, 0, sizeof(*r));
	if (!sp || sp->n == 0)
		return -EINVAL;
	/* held < max_len bytes; the boundary scan appends < max_len more */
	r->held = malloc(2 * sp->max_len);
	if (!r->held)
		return -ENOMEM;
	r->sp = sp;
	return 0;
}

static int
emit(struct evbuffer *out, const uint8_t *p, size_t n)
{
	if (n == 0)
		return 0;
	return evbuffer_add(out, p, n) == 0 ? 0 : -ENOMEM;
}

/*
 * Redacts buf[*done..) from position pos on, up to start positions < limit:
 * bytes before each match and CRED_REDACTED go out, *done moves past each
 * match. Returns SCAN_PARTIAL with *at where a spelling may still start
 * (buf[*done..*at) out), SCAN_NONE when nothing more starts before limit.
 */
static int
redact_run(struct cred_redactor *r, const uint8_t *buf, size_t n, size_t limit, bool at_end,
	   size_t *done, size_t *at, struct evbuffer *out)
{
	size_t pos = *done, ml = 0;
	for (;;) {
		enum scan_ev e = scan(r->sp, buf, n, pos, limit, at_end, at, &ml);
		if (e == SCAN_NONE)
			return SCAN_NONE;
		int rc = emit(out, buf + *done, *at - *done);
		if (rc < 0)
			return rc;
		if (e == SCAN_PARTIAL) {
			*done = *at;
			return SCAN_PARTIAL;
		}
		if ((rc = emit(out, (const uint8_t *)CRED_REDACTED, CRED_REDACTED_LEN)) < 0)
			return rc;
		r->redactions++;
		pos = *done = *at + ml;
	}
}

/*
 * The held bytes are the stream's suffix from the first position where a
 * spelling may still start. First they are scanned again with up to
 * max_len - 1 new bytes behind them (every spelling starting in them then
 * fits, unless those were all the new bytes), then the new bytes alone.
 */
int
cred_redactor_feed(struct cred_redactor *r, const void *in_, size_t n, struct evbuffer *out)
{
	const uint8_t *in = in_;
	const size_t max = r->sp ? r->sp->max_len : 0;
	size_t i = 0, at = 0;
	int rc;

	if (!r->held)
		return -EINVAL;
	if (n == 0)
		return 0;
	if (r->n_held > 0) {
		size_t h = r->n_held, t = n < max - 1 ? n : max - 1, end = h + t, done = 0;
		bool whole = t == n;
		memcpy(r->held + h, in, t);
		r->n_held = 0;
		rc = redact_run(r, r->held, end, whole ? end : h, false, &done, &at, out);
		if (rc < 0)
			return rc;
		if (rc == SCAN_PARTIAL) {
			/* only when whole: a spelling starting before h ends within h + max - 1 */
			if (!whole || end - at >= max)
				return -EINVAL;
			memmove(r->held, r->held + at, end - at);
			r->n_held = end - at;
			return 0;
		}
		if (whole)
			return emit(out, r->held + done, end - done);
		if (done < h && (rc = emit(out, r->held + done, h - done)) < 0)
			return rc;
		i = done > h ? done - h : 0;
	}
	rc = redact_run(r, in, n, n, false, &i, &at, out);
	if (rc < 0)
		return rc;
	if (rc == SCAN_PARTIAL) {
		/* a partial is shorter than the spelling it may become */
		if (n - at >= max)
			return -EINVAL;
		memcpy(r->held, in + at, n - at);
		r->n_held = n - at;
		return 0;
	}
	return emit(out, in + i, n - i);
}

int
cred_redactor_finish(struct cred_redactor *r, struct evbuffer *out)
{
	if (!r->held || r->n_held == 0)
		return 0;
	size_t n = r->n_held, done = 0, at = 0;
	int rc = redact_run(r, r->held, n, n, true, &done, &at, out);
	if (rc < 0)
		return rc;
	r->n_held = 0;
	return emit(out, r->held + done, n - done);
}

void
cred_redactor_clear(struct cred_redactor *r)
{
	if (r->held)
		free_secret(r->held, 2 * r->sp->max_len);
	memset(r, 0, sizeof(*r));
}

size_t
cred_redact_string(char **value, const struct cred_spellings *sp)
{
	if (!value || !*value || !sp || sp->n == 0)
		return 0;
	char *s = *value;
	const uint8_t *u = (const uint8_t *)s;
	size_t n = strlen(s), count = 0, removed = 0, pos = 0, at, ml;
	while (scan(sp, u, n, pos, n, true, &at, &ml) == SCAN_MATCH) {
		count++;
		removed += ml;
		pos = at + ml;
	}
	if (count == 0)
		return 0;
	char *o = malloc(n - removed + count * CRED_REDACTED_LEN + 1);
	size_t w = 0;
	pos = 0;
	while (scan(sp, u, n, pos, n, true, &at, &ml) == SCAN_MATCH) {
		if (!o) {
			/* no memory for the longer form: blank each match in place */
			memset(s + at, '*', ml);
		} else {
			memcpy(o + w, s + pos, at - pos);
			w += at - pos;
			memcpy(o + w, CRED_REDACTED, CRED_REDACTED_LEN);
			w += CRED_REDACTED_LEN;
		}
		pos = at + ml;
	}
	if (!o)
		return count;
	memcpy(o + w, s + pos, n - pos);
	w += n - pos;
	o[w] = '\0';
	free_secret(s, n);
	*value = o;
	return count;
}
