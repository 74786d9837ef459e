/* SPDX-License-Identifier: Apache-2.0 */
/*
 * redact.h — what box-gateway removes from a credentialed reply: every
 * spelling of a binding's secret that the gateway itself produced or that an
 * echoing server writes back, replaced by "[REDACTED]" in response header
 * values and bodies, also across reads and chunks (docs/box-gateway.8.md,
 * "Redaction"). No I/O, nothing here logs.
 *
 * Trusts: the secret (boxd's, from a validated config). Nothing in what is
 * redacted: upstream writes it, and every buffer is bounded by the longest
 * spelling. Redaction guards against echoes; a bound destination is trusted
 * with the secret and could always send it back in some other form.
 */
#ifndef BOX_GATEWAY_REDACT_H
#define BOX_GATEWAY_REDACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct evbuffer;

#define CRED_REDACTED "[REDACTED]"
/* A spelling other than the secret itself is matched only from this length on: shorter
 * ones would match ordinary text (a secret of 7 bytes or more has every spelling). */
#define CRED_SPELLING_MIN 8

/*
 * The spellings of one secret S (built once per binding, shared by every
 * connection; read-only after cred_spellings_new):
 * - bases: S itself; base64 of S padded (the Basic token), standard and URL-safe
 *   alphabets; and, for each alphabet, the part of the base64 of any text that
 *   holds S at offset 0, 1 or 2 (mod 3) that depends on S alone: characters
 *   [ceil(8a/6), floor(8(a+|S|)/6)) of base64(a filler bytes + S), a = 0, 1, 2;
 * - each base as it is, percent-encoded (every byte outside unreserved, hex
 *   in upper and in lower case), and JSON-escaped each way encode.h's flags
 *   choose ('/' as \/; non-ASCII, or < > &, as \uXXXX; hex in either case).
 * Duplicates are dropped, and every spelling but S shorter than
 * CRED_SPELLING_MIN. Matching is leftmost-longest, one pass with a shift
 * table over 2-byte blocks (Wu-Manber): most windows skip min_len - 1 bytes.
 */
struct cred_spellings {
	size_t n;
	const uint8_t **pat;
	size_t *len;
	uint8_t *bytes; /* every spelling, back to back (zeroed when freed) */
	size_t bytes_len;
	size_t min_len, max_len;
	unsigned block;	   /* 2, or 1 when min_len is 1 */
	uint8_t *shift;	   /* 4096 slots, 2-byte blocks hashed: how far a window may move */
	uint8_t first[32]; /* bitmap of the spellings' first bytes */
};
int cred_spellings_new(const uint8_t *secret, size_t len, struct cred_spellings **out);
void cred_spellings_free(struct cred_spellings *sp);

/*
 * Streaming redaction of a body: every spelling becomes "[REDACTED]", also
 * across feed boundaries. Only a suffix of the data fed so far that may still
 * become a spelling is held back (fewer than max_len bytes), so data that
 * cannot start one (an SSE event's end) is never delayed.
 */
struct cred_redactor {
	const struct cred_spellings *sp;
	uint8_t *held; /* room for 2 * max_len: held, then the boundary scan */
	size_t n_held;
	uint64_t redactions;
};
int cred_redactor_init(struct cred_redactor *r, const struct cred_spellings *sp);
/* The output goes to out as it is decided. 0, or -ENOMEM (out then holds part of the
 * redacted output: the caller must drop the stream, never pass it on unredacted). */
int cred_redactor_feed(struct cred_redactor *r, const void *in, size_t n, struct evbuffer *out);
/* The stream ended: what is held goes out, redacted. */
int cred_redactor_finish(struct cred_redactor *r, struct evbuffer *out);
void cred_redactor_clear(struct cred_redactor *r);

/* Redact a whole header value in place: *value is replaced by a new malloc'd string.
 * Returns the count. Without memory for the new string, each occurrence is overwritten
 * with '*' in place instead. */
size_t cred_redact_string(char **value, const struct cred_spellings *sp);

#endif
