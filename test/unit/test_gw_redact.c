/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_gw_redact.c — box-gateway/encode.c and redact.c: the encodings (known
 * vectors), the spellings of a secret (vectors computed independently with
 * Python's base64, urllib.parse.quote and json modules), base64 at every
 * alignment (a property: the redacted span covers every character that
 * depends on the secret alone), every spelling redacted at every split point
 * of every feed, a property test of the streaming redactor against a naive
 * one-shot leftmost-longest replacement over random splits, near misses left
 * alone, the "never delayed" property, header values, and throughput printed
 * as TAP comments (never asserted: a shared machine and the sanitizer build
 * would make a bound flaky).
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>

#include "encode.h"
#include "gw_redact_ref.h"
#include "redact.h"
#include "tap.h"

#define RED "[REDACTED]"
#define RED_LEN 10

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}

static struct cred_spellings *
spell(const void *secret, size_t len)
{
	struct cred_spellings *sp = NULL;
	if (cred_spellings_new(secret, len, &sp) < 0 || !sp)
		abort();
	return sp;
}

static bool
has_spelling(const struct cred_spellings *sp, const char *s)
{
	size_t n = strlen(s);
	for (size_t k = 0; k < sp->n; k++)
		if (sp->len[k] == n && memcmp(sp->pat[k], s, n) == 0)
			return true;
	return false;
}

/* The whole stream through a redactor: fed at the given cut points (sorted, within n). */
static struct evbuffer *
run_cuts(const struct cred_spellings *sp, const uint8_t *in, size_t n, const size_t *cuts,
	 size_t n_cuts, uint64_t *redactions)
{
	struct cred_redactor r;
	struct evbuffer *out = evbuffer_new();
	if (!out || cred_redactor_init(&r, sp) < 0)
		abort();
	size_t prev = 0;
	for (size_t i = 0; i <= n_cuts; i++) {
		size_t cut = i < n_cuts ? cuts[i] : n;
		CHECK_INT(cred_redactor_feed(&r, in + prev, cut - prev, out), 0);
		CHECK(r.n_held < sp->max_len);
		prev = cut;
	}
	CHECK_INT(cred_redactor_finish(&r, out), 0);
	CHECK_INT(r.n_held, 0);
	if (redactions)
		*redactions = r.redactions;
	cred_redactor_clear(&r);
	return out;
}

static bool
buf_is(struct evbuffer *b, const void *want, size_t n)
{
	return evbuffer_get_length(b) == n &&
	       (n == 0 || memcmp(evbuffer_pullup(b, -1), want, n) == 0);
}

/* ---- encode.c ------------------------------------------------------------------------ */

static void
test_encodings(void)
{
	size_t n;
	char *s, *j;
	const uint8_t x[] = {0xfb, 0xff, 0xbf, 'a'};
	s = enc_b64(x, 4, ENC_B64_STD, true, &n);
	CHECK_STR(s, "+/+/YQ==");
	CHECK_INT(n, 8);
	free(s);
	s = enc_b64(x, 4, ENC_B64_URL, false, &n);
	CHECK_STR(s, "-_-_YQ");
	CHECK_INT(n, 6);
	free(s);
	s = enc_b64((const uint8_t *)"", 0, ENC_B64_STD, true, &n);
	CHECK_STR(s, "");
	free(s);
	s = enc_b64_decode("dXNlcjpwdw==", &n);
	CHECK_STR(s, "user:pw");
	free(s);
	CHECK(enc_b64_decode("dXNlcjpwdw", &n) == NULL);
	CHECK(enc_b64_decode("dXNl-jpwdw==", &n) == NULL);
	CHECK(enc_b64_decode("dX=lcjpw", &n) == NULL);
	s = enc_pct((const uint8_t *)"a b/~\xff", 6, true, &n);
	CHECK_STR(s, "a%20b%2F~%FF");
	free(s);
	s = enc_pct((const uint8_t *)"a b/~\xff", 6, false, &n);
	CHECK_STR(s, "a%20b%2f~%ff");
	free(s);
	s = enc_pct_decode("a%2fb%zz%4", 10, &n);
	CHECK_STR(s, "a/b%zz%4");
	free(s);

	const char *in = "q\"\\/\x01\n<&>\xc3\xa9\xf0\x9f\x94\x91";
	struct {
		unsigned flags;
		const char *want;
	} v[] = {
	    {0, "q\\\"\\\\/\\u0001\\n<&>\xc3\xa9\xf0\x9f\x94\x91"},
	    {ENC_JSON_SLASH, "q\\\"\\\\\\/\\u0001\\n<&>\xc3\xa9\xf0\x9f\x94\x91"},
	    {ENC_JSON_ASCII, "q\\\"\\\\/\\u0001\\n<&>\\u00e9\\ud83d\\udd11"},
	    {ENC_JSON_HTML, "q\\\"\\\\/\\u0001\\n\\u003c\\u0026\\u003e\xc3\xa9\xf0\x9f\x94\x91"},
	    {ENC_JSON_ASCII | ENC_JSON_UPPER, "q\\\"\\\\/\\u0001\\n<&>\\u00E9\\uD83D\\uDD11"},
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		CHECK_INT(enc_json((const uint8_t *)in, strlen(in), v[i].flags, &j, &n), 0);
		CHECK_STR(j, v[i].want);
		CHECK_INT(n, strlen(v[i].want));
		free(j);
	}
	/* not UTF-8: no \u spelling; raw bytes as they are otherwise */
	CHECK_INT(enc_json((const uint8_t *)"a\xff", 2, ENC_JSON_ASCII, &j, &n), -EILSEQ);
	CHECK_INT(enc_json((const uint8_t *)"\xed\xa0\x80", 3, ENC_JSON_ASCII, &j, &n), -EILSEQ);
	CHECK_INT(enc_json((const uint8_t *)"\xc0\xaf", 2, ENC_JSON_ASCII, &j, &n), -EILSEQ);
	CHECK_INT(enc_json((const uint8_t *)"a\xff", 2, 0, &j, &n), 0);
	CHECK_STR(j, "a\xff");
	free(j);
}

/* ---- the spellings --------------------------------------------------------------------- */

/* Python: base64.b64encode / urlsafe_b64encode, the stable slices of base64(a * b"\0" +
 * secret), urllib.parse.quote(safe="-._~") and its lower-case twin, json.dumps with and
 * without ensure_ascii, '/' as '\/', <>& as \u00XX, \u hex upper-cased; then dropping
 * duplicates and everything but the secret shorter than 8. */
static const char *const vec_mixed[] = {
    "p@ss/w+rd&<\xc3\xa9>\"\x09~",
    "p%40ss%2Fw%2Brd%26%3C%C3%A9%3E%22%09~",
    "p%40ss%2fw%2brd%26%3c%c3%a9%3e%22%09~",
    "p@ss/w+rd&<\xc3\xa9>\\\"\\t~",
    "p@ss\\/w+rd&<\xc3\xa9>\\\"\\t~",
    "p@ss/w+rd&<\\u00e9>\\\"\\t~",
    "p@ss\\/w+rd&<\\u00e9>\\\"\\t~",
    "p@ss/w+rd\\u0026\\u003c\xc3\xa9\\u003e\\\"\\t~",
    "p@ss\\/w+rd\\u0026\\u003c\xc3\xa9\\u003e\\\"\\t~",
    "p@ss/w+rd\\u0026\\u003c\\u00e9\\u003e\\\"\\t~",
    "p@ss\\/w+rd\\u0026\\u003c\\u00e9\\u003e\\\"\\t~",
    "p@ss/w+rd&<\\u00E9>\\\"\\t~",
    "p@ss\\/w+rd&<\\u00E9>\\\"\\t~",
    "p@ss/w+rd\\u0026\\u003C\xc3\xa9\\u003E\\\"\\t~",
    "p@ss\\/w+rd\\u0026\\u003C\xc3\xa9\\u003E\\\"\\t~",
    "p@ss/w+rd\\u0026\\u003C\\u00E9\\u003E\\\"\\t~",
    "p@ss\\/w+rd\\u0026\\u003C\\u00E9\\u003E\\\"\\t~",
    "cEBzcy93K3JkJjzDqT4iCX4=",
    "cEBzcy93K3JkJjzDqT4iCX4%3D",
    "cEBzcy93K3JkJjzDqT4iCX4%3d",
    "cEBzcy93K3JkJjzDqT4iCX",
    "BAc3MvdytyZCY8w6k+Igl+",
    "BAc3MvdytyZCY8w6k%2BIgl%2B",
    "BAc3MvdytyZCY8w6k%2bIgl%2b",
    "wQHNzL3crcmQmPMOpPiIJf",
    "BAc3MvdytyZCY8w6k-Igl-",
};

static const char *const vec_emoji[] = {
    "key/\xf0\x9f\x94\x91+more",  "key%2F%F0%9F%94%91%2Bmore",
    "key%2f%f0%9f%94%91%2bmore",  "key\\/\xf0\x9f\x94\x91+more",
    "key/\\ud83d\\udd11+more",	  "key\\/\\ud83d\\udd11+more",
    "key/\\uD83D\\uDD11+more",	  "key\\/\\uD83D\\uDD11+more",
    "a2V5L/CflJErbW9yZQ==",	  "a2V5L%2FCflJErbW9yZQ%3D%3D",
    "a2V5L%2fCflJErbW9yZQ%3d%3d", "a2V5L\\/CflJErbW9yZQ==",
    "a2V5L/CflJErbW9yZ",	  "a2V5L%2FCflJErbW9yZ",
    "a2V5L%2fCflJErbW9yZ",	  "a2V5L\\/CflJErbW9yZ",
    "tleS/wn5SRK21vcm",		  "tleS%2Fwn5SRK21vcm",
    "tleS%2fwn5SRK21vcm",	  "tleS\\/wn5SRK21vcm",
    "rZXkv8J+UkSttb3Jl",	  "rZXkv8J%2BUkSttb3Jl",
    "rZXkv8J%2bUkSttb3Jl",	  "a2V5L_CflJErbW9yZQ==",
    "a2V5L_CflJErbW9yZQ%3D%3D",	  "a2V5L_CflJErbW9yZQ%3d%3d",
    "a2V5L_CflJErbW9yZ",	  "tleS_wn5SRK21vcm",
    "rZXkv8J-UkSttb3Jl",
};

static const char *const vec_not_utf8[] = {
    "raw\xff"
    "byte/sec",
    "raw%FFbyte%2Fsec",
    "raw%ffbyte%2fsec",
    "raw\xff"
    "byte\\/sec",
    "cmF3/2J5dGUvc2Vj",
    "cmF3%2F2J5dGUvc2Vj",
    "cmF3%2f2J5dGUvc2Vj",
    "cmF3\\/2J5dGUvc2Vj",
    "Jhd/9ieXRlL3NlY",
    "Jhd%2F9ieXRlL3NlY",
    "Jhd%2f9ieXRlL3NlY",
    "Jhd\\/9ieXRlL3NlY",
    "yYXf/Ynl0ZS9zZW",
    "yYXf%2FYnl0ZS9zZW",
    "yYXf%2fYnl0ZS9zZW",
    "yYXf\\/Ynl0ZS9zZW",
    "cmF3_2J5dGUvc2Vj",
    "Jhd_9ieXRlL3NlY",
    "yYXf_Ynl0ZS9zZW",
};

static void
check_vectors(const char *const *want, size_t n)
{
	struct cred_spellings *sp = spell(want[0], strlen(want[0]));
	CHECK_INT(sp->n, n);
	for (size_t i = 0; i < n; i++)
		if (!has_spelling(sp, want[i])) {
			printf("#   missing spelling %zu: %s\n", i, want[i]);
			CHECK(false);
		}
	size_t min = SIZE_MAX, max = 0;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(want[i]);
		min = l < min ? l : min;
		max = l > max ? l : max;
	}
	CHECK_INT(sp->min_len, min);
	CHECK_INT(sp->max_len, max);
	cred_spellings_free(sp);
}

static void
test_spelling_vectors(void)
{
	check_vectors(vec_mixed, sizeof(vec_mixed) / sizeof(vec_mixed[0]));
	check_vectors(vec_emoji, sizeof(vec_emoji) / sizeof(vec_emoji[0]));
	check_vectors(vec_not_utf8, sizeof(vec_not_utf8) / sizeof(vec_not_utf8[0]));

	/* a plain key: every encoding of it is itself, and its base64 has no '+' or '/': the
	 * padded token with '=' as it is and percent-encoded, the three stable parts */
	struct cred_spellings *sp = spell("sk-ant-0123456789abcdef", 23);
	CHECK_INT(sp->n, 1 + 3 + 3);
	CHECK(has_spelling(sp, "c2stYW50LTAxMjM0NTY3ODlhYmNkZWY="));
	CHECK(has_spelling(sp, "c2stYW50LTAxMjM0NTY3ODlhYmNkZW"));
	cred_spellings_free(sp);

	/* short secrets: the secret itself always; encodings only from 8 bytes on */
	sp = spell("ab", 2);
	CHECK_INT(sp->n, 1);
	CHECK_INT(sp->min_len, 2);
	cred_spellings_free(sp);
	sp = spell("abcdef", 6); /* YWJjZGVm (8) and its URL twin, the rest shorter */
	CHECK(has_spelling(sp, "abcdef") && has_spelling(sp, "YWJjZGVm"));
	for (size_t k = 0; k < sp->n; k++)
		CHECK(sp->len[k] >= 8 || (sp->len[k] == 6 && memcmp(sp->pat[k], "abcdef", 6) == 0));
	cred_spellings_free(sp);
	sp = spell("a", 1); /* "a", and "YQ==" percent-encoded is 8 bytes long */
	CHECK_INT(sp->n, 3);
	CHECK(has_spelling(sp, "a") && has_spelling(sp, "YQ%3D%3D") &&
	      has_spelling(sp, "YQ%3d%3d"));
	CHECK_INT(sp->block, 1);
	cred_spellings_free(sp);

	CHECK_INT(cred_spellings_new((const uint8_t *)"", 0, &sp), -EINVAL);
	CHECK(sp == NULL);
	struct cred_redactor r;
	CHECK_INT(cred_redactor_init(&r, NULL), -EINVAL);
}

/*
 * Base64 of filler + secret + filler at every offset mod 3, both alphabets,
 * padded or not: the one redaction covers every character whose 6 bits all
 * come from the secret (computed here from that definition alone).
 */
static void
test_base64_alignments(void)
{
	int misses = 0;
	for (int round = 0; round < 3000; round++) {
		uint8_t secret[48], text[64];
		size_t L = 7 + rng() % 40, pre = rng() % 8, post = rng() % 8;
		for (size_t i = 0; i < L; i++)
			secret[i] = (uint8_t)rng();
		for (size_t i = 0; i < pre; i++)
			text[i] = (uint8_t)rng();
		memcpy(text + pre, secret, L);
		for (size_t i = 0; i < post; i++)
			text[pre + L + i] = (uint8_t)rng();
		struct cred_spellings *sp = spell(secret, L);
		enum enc_b64_alphabet al = rng() % 2 ? ENC_B64_URL : ENC_B64_STD;
		size_t en;
		char *e = enc_b64(text, pre + L + post, al, rng() % 2, &en);
		/* characters [first, end) depend on the secret alone */
		size_t first = SIZE_MAX, end = 0;
		for (size_t j = 0; 6 * j + 6 <= 8 * (pre + L + post); j++)
			if (6 * j >= 8 * pre && 6 * j + 6 <= 8 * (pre + L)) {
				first = first == SIZE_MAX ? j : first;
				end = j + 1;
			}
		char *v = strdup(e);
		size_t count = cred_redact_string(&v, sp);
		const char *at = strstr(v, RED);
		bool good = count == 1 && at && (size_t)(at - v) <= first &&
			    strlen(at + RED_LEN) <= en - end && strstr(at + RED_LEN, RED) == NULL;
		/* and the stream redactor, fed in two pieces, agrees */
		size_t cut = rng() % (en + 1);
		struct evbuffer *o = run_cuts(sp, (const uint8_t *)e, en, &cut, 1, NULL);
		good = good && buf_is(o, v, strlen(v));
		if (!good && misses++ < 3)
			printf("#   L %zu pre %zu post %zu: %s -> %s (stable [%zu, %zu))\n", L, pre,
			       post, e, v, first, end);
		CHECK(good);
		evbuffer_free(o);
		free(v);
		free(e);
		cred_spellings_free(sp);
	}
}

/* Secrets with every kind of byte the spellings treat differently, and two plain ones. */
static const char *const test_secrets[] = {"p@ss/w+rd&<\xc3\xa9>\"\t~", "key/\xf0\x9f\x94\x91+more",
					   "alice:s3cr3t/pa+ss", "sk-ant-api03-abcdefghijklmnop"};

/* Every spelling, alone and all together, cut at every point (one and two cuts). */
static void
test_every_split(void)
{
	for (size_t si = 0; si < sizeof(test_secrets) / sizeof(test_secrets[0]); si++) {
		struct cred_spellings *sp = spell(test_secrets[si], strlen(test_secrets[si]));
		/* all of them in one text, each between two bytes that start no spelling */
		struct evbuffer *all = evbuffer_new(), *want = evbuffer_new();
		for (size_t k = 0; k < sp->n; k++) {
			evbuffer_add(all, "( ", 2);
			evbuffer_add(all, sp->pat[k], sp->len[k]);
			evbuffer_add(all, " )", 2);
			evbuffer_add(want, "( " RED " )", 4 + RED_LEN);
		}
		size_t n = evbuffer_get_length(all), wn = evbuffer_get_length(want);
		const uint8_t *in = evbuffer_pullup(all, -1), *w = evbuffer_pullup(want, -1);
		char *v = malloc(n + 1);
		memcpy(v, in, n);
		v[n] = '\0';
		CHECK_INT(cred_redact_string(&v, sp), sp->n);
		CHECK(strlen(v) == wn && memcmp(v, w, wn) == 0);
		free(v);
		int bad = 0;
		for (size_t cut = 0; cut <= n; cut++) {
			uint64_t count;
			struct evbuffer *o = run_cuts(sp, in, n, &cut, 1, &count);
			if ((!buf_is(o, w, wn) || count != sp->n) && bad++ < 3)
				printf("#   secret %zu: cut at %zu differs\n", si, cut);
			evbuffer_free(o);
		}
		CHECK_INT(bad, 0);
		/* one byte at a time */
		size_t *cuts = malloc(n * sizeof(*cuts));
		for (size_t i = 0; i < n; i++)
			cuts[i] = i;
		struct evbuffer *o = run_cuts(sp, in, n, cuts, n, NULL);
		CHECK(buf_is(o, w, wn));
		evbuffer_free(o);
		free(cuts);
		/* each spelling with every pair of cuts inside and around it */
		for (size_t k = 0; k < sp->n; k++) {
			uint8_t one[256];
			size_t on = 0;
			memcpy(one, "x=", 2);
			memcpy(one + 2, sp->pat[k], sp->len[k]);
			memcpy(one + 2 + sp->len[k], ";\n", 2);
			on = sp->len[k] + 4;
			for (size_t a = 0; a <= on; a++)
				for (size_t b = a; b <= on; b++) {
					size_t c2[2] = {a, b};
					o = run_cuts(sp, one, on, c2, 2, NULL);
					if (!buf_is(o, "x=" RED ";\n", RED_LEN + 4) && bad++ < 3)
						printf("#   spelling %zu cut %zu,%zu differs\n", k,
						       a, b);
					evbuffer_free(o);
				}
		}
		CHECK_INT(bad, 0);
		evbuffer_free(all);
		evbuffer_free(want);
		cred_spellings_free(sp);
	}
}

/* Random streams built from the spellings' own bytes, fed in random pieces, against the
 * naive reference; short secrets (the secret itself only) included. */
static void
test_redactor_property(void)
{
	static const char *const secrets[] = {
	    "aaab", "abab", "a", "ab", "abcabd", "xyzzy/secret+40-bytes", "p@ss/w+rd&<\xc3\xa9>\""};
	static uint8_t in[1200], want[12000];
	int mismatches = 0;
	for (int round = 0; round < 2000; round++) {
		const char *s = secrets[round % (sizeof(secrets) / sizeof(secrets[0]))];
		struct cred_spellings *sp = spell(s, strlen(s));
		size_t n = rng() % sizeof(in);
		for (size_t i = 0; i < n;) {
			size_t pick = rng() % sp->n, pl = sp->len[pick];
			const uint8_t *p = sp->pat[pick];
			uint32_t c = rng() % 10;
			if (c < 2 && i + pl <= n) {
				memcpy(in + i, p, pl);
				i += pl;
			} else if (c < 4) {
				size_t k = 1 + rng() % pl;
				if (k > n - i)
					k = n - i;
				memcpy(in + i, p, k);
				i += k;
			} else if (c < 9) {
				in[i++] = p[rng() % pl];
			} else {
				in[i++] = (uint8_t)rng();
			}
		}
		size_t expect_count, wn = reference_redact(sp, in, n, want, &expect_count);
		for (int mode = 0; mode < 3; mode++) {
			size_t cuts[2 * sizeof(in)], nc = 0;
			for (size_t i = 0; i < n;) {
				size_t k = mode == 0   ? 1
					   : mode == 1 ? 1 + rng() % 7
						       : 1 + rng() % (n - i);
				i += k;
				if (i < n)
					cuts[nc++] = i;
				if (rng() % 8 == 0 && i < n)
					cuts[nc++] = i; /* an empty feed */
			}
			uint64_t count;
			struct evbuffer *o = run_cuts(sp, in, n, cuts, nc, &count);
			if (!buf_is(o, want, wn) || count != expect_count) {
				if (mismatches++ < 3)
					printf("#   secret %s n %zu mode %d: %zu bytes, want %zu\n",
					       s, n, mode, evbuffer_get_length(o), wn);
				CHECK(false);
			}
			evbuffer_free(o);
		}
		cred_spellings_free(sp);
	}
	/* the overlap case spelled out: "aaaab" with secret "aaab" */
	struct cred_spellings *sp = spell("aaab", 4);
	size_t cuts[] = {1, 2, 3, 4, 5};
	uint64_t count;
	struct evbuffer *o = run_cuts(sp, (const uint8_t *)"aaaab!", 6, cuts, 5, &count);
	CHECK(buf_is(o, "a" RED "!", RED_LEN + 2));
	CHECK_INT(count, 1);
	evbuffer_free(o);
	cred_spellings_free(sp);
}

/* Compared with the reference, and nothing redacted where the reference finds nothing. */
static void
check_like_reference(const struct cred_spellings *sp, const uint8_t *t, size_t n, size_t cut,
		     bool want_none)
{
	uint8_t want[2600];
	size_t count, wn = reference_redact(sp, t, n, want, &count);
	uint64_t rc;
	struct evbuffer *o = run_cuts(sp, t, n, &cut, 1, &rc);
	CHECK(buf_is(o, want, wn));
	CHECK_INT(rc, count);
	if (want_none)
		CHECK(count == 0 && buf_is(o, t, n));
	evbuffer_free(o);
}

/* One byte changed, or the last byte missing: no false positive. */
static void
test_near_misses(void)
{
	for (size_t si = 0; si < sizeof(test_secrets) / sizeof(test_secrets[0]); si++) {
		struct cred_spellings *sp = spell(test_secrets[si], strlen(test_secrets[si]));
		for (size_t k = 0; k < sp->n; k++) {
			uint8_t orig[256], t[256];
			size_t l = sp->len[k], n = l + 4;
			memcpy(orig, "v: ", 3);
			memcpy(orig + 3, sp->pat[k], l);
			orig[3 + l] = '\n';
			/* the middle byte changed: no other spelling fits in either half */
			memcpy(t, orig, n);
			t[3 + l / 2] = t[3 + l / 2] == '#' ? '$' : '#';
			check_like_reference(sp, t, n, 3 + l / 2 + 1, true);
			/* each byte changed in turn: what is left may hold a shorter spelling (the
			 * padded token without its '=' is the stable part), as the reference says
			 */
			for (size_t j = 0; j < l; j++) {
				memcpy(t, orig, n);
				t[3 + j] = t[3 + j] == '#' ? '$' : '#';
				check_like_reference(sp, t, n, 3 + j, false);
			}
			/* the last byte missing at the end of the stream: held, then let go */
			check_like_reference(sp, orig, 3 + l - 1, 3 + l / 2,
					     sp->pat[k] == sp->pat[0]);
		}
		cred_spellings_free(sp);
	}
	/* mixed hex case is another text */
	struct cred_spellings *sp = spell("a/b+c/d+e/f", 11);
	char *v = strdup("a%2Fb%2bc%2Fd%2Be%2Ff");
	CHECK_INT(cred_redact_string(&v, sp), 0);
	free(v);
	cred_spellings_free(sp);
}

#define SECRET "sk-real-SECRET-value-7f3a9c"

static void
test_redactor_never_delayed(void)
{
	struct cred_spellings *sp = spell(SECRET, strlen(SECRET));
	struct cred_redactor r;
	struct evbuffer *out = evbuffer_new();
	CHECK_INT(cred_redactor_init(&r, sp), 0);

	/* an SSE event that cannot start a spelling: all of it out at once */
	const char *ev = "event: delta\ndata: {\"text\":\"hello\"}\n\n";
	CHECK_INT(cred_redactor_feed(&r, ev, strlen(ev), out), 0);
	CHECK_INT(evbuffer_get_length(out), strlen(ev));
	CHECK_INT(r.n_held, 0);

	/* ends with "sk-re": exactly those 5 bytes held, the rest out */
	evbuffer_drain(out, evbuffer_get_length(out));
	CHECK_INT(cred_redactor_feed(&r, "data: sk-re", 11, out), 0);
	CHECK_INT(evbuffer_get_length(out), 6);
	CHECK_INT(r.n_held, 5);
	/* one byte that breaks the prefix: everything out */
	CHECK_INT(cred_redactor_feed(&r, "x\n\n", 3, out), 0);
	CHECK_INT(evbuffer_get_length(out), 14);
	CHECK_INT(r.n_held, 0);
	CHECK(memcmp(evbuffer_pullup(out, -1), "data: sk-rex\n\n", 14) == 0);

	/* a held prefix, then the rest of the secret, then an event's end */
	evbuffer_drain(out, evbuffer_get_length(out));
	CHECK_INT(cred_redactor_feed(&r, "k=" SECRET, 2 + 10, out), 0);
	CHECK_INT(cred_redactor_feed(&r, SECRET + 10, strlen(SECRET) - 10, out), 0);
	CHECK_INT(cred_redactor_feed(&r, "\n\n", 2, out), 0);
	CHECK_INT(r.n_held, 0);
	CHECK(buf_is(out, "k=" RED "\n\n", RED_LEN + 4));

	/* the Basic token: held until its padding decides between it and the shorter
	 * stable part; either way nothing of it goes out */
	cred_redactor_clear(&r);
	cred_spellings_free(sp);
	sp = spell("user:pw-0123456789", 18); /* dXNlcjpwdy0wMTIzNDU2Nzg5 */
	CHECK_INT(cred_redactor_init(&r, sp), 0);
	evbuffer_drain(out, evbuffer_get_length(out));
	CHECK_INT(cred_redactor_feed(&r, "Basic dXNlcjpwdy0wMTIzNDU2Nzg5\r\n", 32, out), 0);
	CHECK(buf_is(out, "Basic " RED "\r\n", RED_LEN + 8));
	cred_redactor_clear(&r);
	cred_spellings_free(sp);

	/* random property: what is held is at most the longest suffix of the data so far
	 * that is a proper prefix of a spelling */
	sp = spell("abcab/x", 7);
	CHECK_INT(cred_redactor_init(&r, sp), 0);
	uint8_t all[4096];
	size_t total = 0;
	evbuffer_drain(out, evbuffer_get_length(out));
	while (total < sizeof(all) - 8) {
		size_t k = 1 + rng() % 7;
		for (size_t i = 0; i < k; i++)
			all[total + i] = (uint8_t)("abc/x"[rng() % 5]);
		CHECK_INT(cred_redactor_feed(&r, all + total, k, out), 0);
		total += k;
		size_t longest = 0;
		for (size_t s = 0; s < sp->n; s++)
			for (size_t j = 1; j < sp->len[s] && j <= total; j++)
				if (memcmp(all + total - j, sp->pat[s], j) == 0 && j > longest)
					longest = j;
		CHECK(r.n_held <= longest);
	}
	cred_redactor_clear(&r);
	cred_spellings_free(sp);
	evbuffer_free(out);
}

static void
test_redact_string(void)
{
	struct cred_spellings *sp = spell(SECRET, strlen(SECRET));
	char *v = strdup("token " SECRET " and " SECRET SECRET "!");
	CHECK_INT(cred_redact_string(&v, sp), 3);
	CHECK_STR(v, "token " RED " and " RED RED "!");
	CHECK_INT(cred_redact_string(&v, sp), 0);
	CHECK_STR(v, "token " RED " and " RED RED "!");
	free(v);
	cred_spellings_free(sp);

	/* a Basic echo, its query twin and a JSON echo in header values */
	sp = spell("alice:s3cr3t/pa+ss", 18);
	v = strdup("Basic YWxpY2U6czNjcjN0L3BhK3Nz");
	CHECK_INT(cred_redact_string(&v, sp), 1);
	CHECK_STR(v, "Basic " RED);
	free(v);
	v = strdup("q=alice%3As3cr3t%2Fpa%2Bss&x=alice%3as3cr3t%2fpa%2bss");
	CHECK_INT(cred_redact_string(&v, sp), 2);
	CHECK_STR(v, "q=" RED "&x=" RED);
	free(v);
	v = strdup("{\"auth\":\"alice:s3cr3t\\/pa+ss\"}");
	CHECK_INT(cred_redact_string(&v, sp), 1);
	CHECK_STR(v, "{\"auth\":\"" RED "\"}");
	free(v);
	cred_spellings_free(sp);

	sp = spell("b", 1);
	v = strdup("ab");
	CHECK_INT(cred_redact_string(&v, sp), 1);
	CHECK_STR(v, "a" RED);
	free(v);
	cred_spellings_free(sp);
}

static double
now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* GB/s of feeding data in 16 KiB chunks, rounds times; checks the redaction count. */
static double
throughput(const struct cred_spellings *sp, const uint8_t *data, size_t chunk, size_t n_chunks,
	   size_t rounds, uint64_t want)
{
	struct cred_redactor r;
	struct evbuffer *out = evbuffer_new();
	CHECK_INT(cred_redactor_init(&r, sp), 0);
	double t0 = now_s();
	for (size_t k = 0; k < rounds; k++)
		for (size_t c = 0; c < n_chunks; c++) {
			CHECK_INT(cred_redactor_feed(&r, data + c * chunk, chunk, out), 0);
			evbuffer_drain(out, evbuffer_get_length(out));
		}
	double dt = now_s() - t0;
	CHECK_INT(cred_redactor_finish(&r, out), 0);
	CHECK_INT(r.redactions, want);
	cred_redactor_clear(&r);
	evbuffer_free(out);
	return (double)(chunk * n_chunks * rounds) / dt / 1e9;
}

static void
test_redactor_throughput(void)
{
	const char *secret = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0";
	size_t sl = strlen(secret), chunk = 16384, n_chunks = 64, rounds = 128;
	struct cred_spellings *sp = spell(secret, sl);
	uint8_t *data = malloc(chunk * n_chunks);
	static const char text[] = "data: {\"type\":\"content_block_delta\",\"delta\":{\"text\":"
				   "\"the quick brown fox sk-ant jumps\"}}\n\n";
	for (size_t i = 0; i < chunk * n_chunks; i++)
		data[i] = (uint8_t)text[i % (sizeof(text) - 1)];
	size_t embedded = 0;
	for (size_t c = 0; c < n_chunks; c += 4) {
		/* across a chunk boundary, and inside a chunk */
		memcpy(data + c * chunk + chunk - 20, secret, sl);
		memcpy(data + c * chunk + 1000, secret, sl);
		embedded += 2;
	}
	printf("# %zu spellings, %zu to %zu bytes\n", sp->n, sp->min_len, sp->max_len);
	printf("# redactor, SSE text with the secret now and then: %.2f GB/s\n",
	       throughput(sp, data, chunk, n_chunks, rounds, embedded * rounds));
	/* base64 text: the alphabet of the base64 spellings */
	static const char b64[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (size_t i = 0; i < chunk * n_chunks; i++)
		data[i] = (uint8_t)(i % 77 == 76 ? '\n' : b64[rng() % 64]);
	printf("# redactor, random base64 text: %.2f GB/s\n",
	       throughput(sp, data, chunk, n_chunks, rounds, 0));
	/* adversarial: the secret's first 39 bytes over and over, never completed */
	for (size_t i = 0; i < chunk * n_chunks; i++)
		data[i] = (uint8_t)(i % sl == sl - 1 ? 'X' : secret[i % sl]);
	printf("# redactor, near-miss data (39 of 40 bytes repeated): %.2f GB/s\n",
	       throughput(sp, data, chunk, n_chunks, rounds / 4, 0));
	cred_spellings_free(sp);
	free(data);
}

int
main(void)
{
	RUN(test_encodings);
	RUN(test_spelling_vectors);
	RUN(test_base64_alignments);
	RUN(test_every_split);
	RUN(test_redactor_property);
	RUN(test_near_misses);
	RUN(test_redactor_never_delayed);
	RUN(test_redact_string);
	RUN(test_redactor_throughput);
	return tap_done();
}
