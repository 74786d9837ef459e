/* SPDX-License-Identifier: Apache-2.0 */
/*
 * declog.h — one line of STATE/decisions.jsonl per decision and one per
 * recorded outcome (docs/boxctl.1.md "Decision log"), written with a single write() on the O_APPEND fd boxd
 * passes, so concurrent readers (boxctl log -f) never see half a line.
 * Trusts: its inputs were validated (UTF-8, caps) by the IPC layer.
 */
#ifndef BOX_POLICYD_DECLOG_H
#define BOX_POLICYD_DECLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.pb-c.h"

struct declog_entry {
	int64_t time_ns;
	const char *box, *id;
	const char *action, *resource;
	bool permit;
	const char *cause; /* permitted forbidden no_match error */
	const char *const *rules;
	size_t n_rules;
	const char *message;
	const char *source; /* box-shell box-gateway box-mcpd supervisor */
	const char *session; /* "person" (a person's box shell), or NULL: no key */
	Box__PolicyField *const *input;
	size_t n_input;
	/*
	 * A person's answer to a decision held for them (@ask): source is "person", ASKER
	 * the peer that asked (key "asker") and UID who answered (key "uid"); else NULL.
	 */
	const char *asker;
	uint32_t uid;
	/*
	 * Not NULL: declog_append sets INPUT_SPAN[0] to where the line's "input" object
	 * begins (from the line's start) and INPUT_SPAN[1] to its length.
	 */
	size_t *input_span;
};

/* A recorded outcome (RecordRequest): record "response" (with output) or "error". */
struct declog_outcome {
	int64_t time_ns;
	const char *box, *id;
	bool error;
	const char *action;
	const char *source;
	const char *session; /* as declog_entry's */
	Box__PolicyField *const *input;
	size_t n_input;
	Box__PolicyField *const *output; /* response only */
	size_t n_output;
	/*
	 * Not NULL: the "input" object as it was written for the same fields before
	 * (INPUT_JSON_LEN bytes, a decision line's INPUT_SPAN), taken as is.
	 */
	const char *input_json;
	size_t input_json_len;
};

/*
 * A control line: `boxctl policy reload` put generation GENERATION in force (ok), or
 * refused the text (error says where and what; generation is the one still in force).
 */
struct declog_reload {
	int64_t time_ns;
	const char *box, *id;
	bool ok;
	uint64_t generation;
	const char *file; /* the file boxctl read, or NULL */
	uint32_t uid;     /* who asked */
	size_t rules, temporal_rules, rules_kept;
	const char *error; /* !ok */
};

/*
 * The chain (common/logchain.h): seq and SHA-256 of the last line written (seq 0
 * and all zeros before the first line ever: genesis).
 */
struct declog_chain {
	uint64_t seq;
	uint8_t head[32];
};

/* Before the seccomp filter: jansson seeds its hash function from /dev/urandom once. */
void declog_init(void);
/* Input fields F[0..N) as the JSON object a line's "input" holds (malloc'd), or NULL. */
char *declog_input_json(Box__PolicyField *const *f, size_t n);
/* The JSON line with its "\n" (malloc'd). NULL on failure (errno set). */
char *declog_format(const struct declog_entry *e, size_t *ret_len);
/*
 * Append E's line (NUL-terminated, not counted) to the growing *BUF of *LEN
 * bytes in *CAP: 0, or -ENOMEM / -EINVAL (a string that is not UTF-8) with
 * *LEN unchanged — never a partial line. *BUF and *CAP may change either way.
 */
int declog_append(const struct declog_entry *e, char **buf, size_t *len, size_t *cap);
/* The same for an outcome line. */
int declog_append_outcome(const struct declog_outcome *o, char **buf, size_t *len, size_t *cap);
/* The same for a reload's control line. */
int declog_append_reload(const struct declog_reload *c, char **buf, size_t *len, size_t *cap);
/*
 * Chain the line at (*BUF)[START..*LEN), which ends with "}\n": it then ends with
 * ,"seq":N,"prev":"HEX"}\n (N = C's seq + 1, HEX = C's head) and C becomes its
 * seq and SHA-256 (of its bytes without the newline). 0, or -ENOMEM with the line
 * removed (*LEN = START) and C unchanged; -EINVAL: not a line there.
 */
int declog_chain(struct declog_chain *c, char **buf, size_t *len, size_t *cap, size_t start);
/*
 * The seal line at the end of a run (docs/boxctl.1.md "The chain"):
 * {"time":…,"time_ns":…,"box":…,"id":…,"seal":"end","lines":LINES}\n, to be chained
 * as every other line. LINES: the lines this run wrote before it.
 */
int declog_append_seal(int64_t time_ns, const char *box, const char *id, uint64_t lines,
		       char **buf, size_t *len, size_t *cap);
/* Format and write one line to FD. Negative errno on failure. */
int declog_write(int fd, const struct declog_entry *e);

#endif
