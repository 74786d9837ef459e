/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jsonl.h — the pieces of a decisions.jsonl line (docs/boxctl.1.md "Decision log"),
 * shared by its two writers: box-policyd's (box-policyd/declog.c, every box's log) and
 * box-sh's (box-sh/declog.c, a standalone shell's own log). Both write the same keys
 * in the same order, and a reader (`boxctl log`, `boxctl policy replay`) takes either.
 *
 * A line is built straight into one growing buffer (a decision is made for every `[`
 * of a loop: no JSON library, no allocation per line): strings escaped byte for byte
 * as jansson's json_dumps writes them (\" \\ \b \f \n \r \t, \u00XX in upper case for
 * the other control characters, everything else raw), integers in decimal, the time
 * as RFC 3339 UTC with milliseconds. A string that is not UTF-8 either fails the line
 * (JSONL_UTF8_STRICT: box-policyd, whose strings the protocol validated) or has each
 * invalid byte written as U+FFFD (JSONL_UTF8_REPLACE: box-sh, whose file names may hold
 * any byte), so the line stays JSON. Once anything fails the buffer is `bad` and adds
 * nothing more; the caller drops the line whole (jsonl_abort).
 *
 * Library code: negative errno, never logs. Not thread-safe (one time cache).
 * Trusts: nothing in the strings; names passed to jsonl_key are the caller's own
 * identifiers (written without escaping).
 */
#ifndef BOX_JSONL_H
#define BOX_JSONL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum jsonl_utf8 { JSONL_UTF8_STRICT, JSONL_UTF8_REPLACE };

struct jsonl {
	char *buf;
	size_t len, cap;
	size_t first_cap;   /* the first allocation (0: 512 bytes) */
	bool block_signals; /* realloc with every signal blocked (a handler reads buf) */
	bool bad;           /* something failed since the line began: it is dropped */
	bool oom;           /* ... and it was memory (else invalid UTF-8 in a strict string) */
};

/* Room for N more bytes (grows). False once bad. jsonl_grow: the growing part. */
bool jsonl_grow(struct jsonl *j, size_t n);

/* (inline: a decision line makes some forty of these calls, each of a few bytes) */
static inline bool
jsonl_room(struct jsonl *j, size_t n)
{
	return (!j->bad && n <= j->cap - j->len) || jsonl_grow(j, n);
}

static inline void
jsonl_put(struct jsonl *j, const char *s, size_t n)
{
	if (jsonl_room(j, n)) {
		__builtin_memcpy(j->buf + j->len, s, n);
		j->len += n;
	}
}
#define JSONL_LIT(j, lit) jsonl_put((j), (lit), sizeof(lit) - 1)
/* S (N bytes; NULL: "") as a JSON string. */
void jsonl_str(struct jsonl *j, const char *s, size_t n, enum jsonl_utf8 mode);
static inline void
jsonl_cstr(struct jsonl *j, const char *s, enum jsonl_utf8 mode)
{
	jsonl_str(j, s, s ? __builtin_strlen(s) : 0, mode);
}
void jsonl_long(struct jsonl *j, int64_t v);
/*
 * The head every line starts with: {"time":"…","time_ns":N,"box":BOX,"id":ID
 * (BOX and ID NULL: "").
 */
void jsonl_head(struct jsonl *j, int64_t time_ns, const char *box, const char *id,
		enum jsonl_utf8 mode);
/*
 * A line that began at START is done: 0 (kept), or -ENOMEM / -EINVAL (invalid UTF-8)
 * with the buffer cut back to START and `bad` cleared for the next line.
 */
int jsonl_end(struct jsonl *j, size_t start);
/* Free the buffer (with signals blocked when block_signals). */
void jsonl_free(struct jsonl *j);

/*
 * "2026-11-30T02:39:44.123Z" (RFC 3339 UTC, milliseconds; floor, so -1 ns is the last
 * millisecond of the day before) into buf (>= 32 bytes).
 */
void jsonl_time(int64_t time_ns, char *buf, size_t len);

#endif
