/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_gw_redact.c — box-gateway's reply redaction (box-gateway/redact.c) on
 * arbitrary bytes: what a bound destination sends back is the one input the
 * redactor scans, split across reads however the network cuts it.
 * Input: byte 0 = the secret's length L (1 + byte % 48, at most what is
 * left), then L bytes of secret, then one byte seeding the feed sizes, then
 * the stream.
 * Properties (abort() on violation): the spellings build; the stream fed in
 * pieces (sizes from the seed, empty feeds included) and fed whole both give
 * exactly the naive reference's output and count (test/unit/gw_redact_ref.h);
 * fewer than max_len bytes are ever held, none after finish; a header value
 * (the stream up to its first NUL) redacts to the reference too.
 * Seeds: test/fuzz/corpus/gw_redact.
 * Trusts: nothing; the input is arbitrary bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "../unit/gw_redact_ref.h"
#include "redact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
feed_all(const struct cred_spellings *sp, const uint8_t *in, size_t n, uint32_t seed,
	 const uint8_t *want, size_t wn, size_t count)
{
	struct cred_redactor r;
	struct evbuffer *out = evbuffer_new();
	if (!out || cred_redactor_init(&r, sp) != 0)
		abort();
	for (size_t i = 0; i < n;) {
		seed = seed * 1103515245u + 12345u;
		size_t k = seed >> 16;
		k = seed & 1 ? k % 5 : k % (n - i + 1); /* small pieces, empty feeds, big ones */
		if (k > n - i)
			k = n - i;
		if (cred_redactor_feed(&r, in + i, k, out) != 0 || r.n_held >= sp->max_len)
			abort();
		i += k;
	}
	if (cred_redactor_finish(&r, out) != 0 || r.n_held != 0 || r.redactions != count)
		abort();
	if (evbuffer_get_length(out) != wn ||
	    (wn && memcmp(evbuffer_pullup(out, -1), want, wn) != 0))
		abort();
	cred_redactor_clear(&r);
	evbuffer_free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3)
		return 0;
	size_t L = 1 + data[0] % 48;
	if (L > size - 2)
		L = size - 2;
	const uint8_t *secret = data + 1, *in = data + 2 + L;
	uint32_t seed = data[1 + L];
	size_t n = size - 2 - L;
	struct cred_spellings *sp = NULL;
	if (cred_spellings_new(secret, L, &sp) != 0 || !sp || sp->n == 0)
		abort();
	uint8_t *want = malloc(10 * n + 1);
	if (!want)
		abort();
	size_t count, wn = reference_redact(sp, in, n, want, &count);
	feed_all(sp, in, n, seed, want, wn, count);
	feed_all(sp, in, n, 0, want, wn, count); /* seed 0: the first piece is everything */

	/* a header value: the stream up to its first NUL */
	size_t vn = strnlen((const char *)in, n);
	char *v = malloc(vn + 1);
	if (!v)
		abort();
	memcpy(v, in, vn);
	v[vn] = '\0';
	wn = reference_redact(sp, in, vn, want, &count);
	if (cred_redact_string(&v, sp) != count || strlen(v) != wn || memcmp(v, want, wn) != 0)
		abort();
	free(v);
	free(want);
	cred_spellings_free(sp);
	return 0;
}
