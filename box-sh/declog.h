/* SPDX-License-Identifier: Apache-2.0 */
/*
 * declog.h — box-sh's decisions.jsonl lines (docs/boxctl.1.md "Decision log"):
 * one line per decision and one per recorded outcome, in the key order of
 * docs/boxctl.1.md, with "source":"box-shell", "time" (RFC 3339 UTC, milliseconds)
 * and "time_ns" (the decider's clock, as temporal windows see it).
 *
 * Lines are built with the pieces box-policyd's writer uses too
 * (common/jsonl.h: one growing buffer, jansson's escapes) and written with
 * whole lines only. Strings that are not UTF-8 (file names may hold any
 * byte) have each invalid byte written as U+FFFD, so the line stays JSON.
 * Trusts: nothing in the strings (agent-chosen paths and command lines).
 */
#ifndef BOX_SHELL_DECLOG_H
#define BOX_SHELL_DECLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jsonl.h"

/* One input or output field: a string, or (is_long) an integer. */
struct shlog_field {
	const char *name;   /* an identifier: written without escaping */
	size_t name_len;
	const char *str;
	size_t len;
	int64_t num;
	bool is_long;
};

struct shlog {
	struct jsonl j;     /* the lines (common/jsonl.h); a line that fails is dropped whole */
	/* the whole lines at the start of j.buf: what a signal handler may write
	 * (shlog_write_committed) while a line is being added after them */
	size_t committed;
};

/* A decision line. rules: n_rules names. */
int shlog_decision(struct shlog *l, int64_t time_ns, const char *box, const char *id,
		   const char *action, const char *resource, bool permit, const char *cause,
		   const char *const *rules, size_t n_rules, const char *message,
		   const struct shlog_field *input, size_t n_input);
/* An outcome line: record = "response" or "error"; output may be empty. */
int shlog_outcome(struct shlog *l, int64_t time_ns, const char *box, const char *id,
		  const char *record, const char *action, const struct shlog_field *input,
		  size_t n_input, const struct shlog_field *output, size_t n_output);

/*
 * The same lines with the input object given as JSON built once by
 * shlog_fields() (into a shlog of its own, its whole text): a decision and
 * the outcome of the same request share it. shlog_fields: 0 or -ENOMEM
 * (then OUT is empty).
 */
int shlog_fields(struct shlog *out, const struct shlog_field *f, size_t n);
int shlog_decision_json(struct shlog *l, int64_t time_ns, const char *box, const char *id,
			const char *action, const char *resource, bool permit, const char *cause,
			const char *const *rules, size_t n_rules, const char *message,
			const struct shlog *input);
int shlog_outcome_json(struct shlog *l, int64_t time_ns, const char *box, const char *id,
		       const char *record, const char *action, const struct shlog *input,
		       const struct shlog_field *output, size_t n_output);

/* Write the buffered lines to FD (whole lines; EINTR retried). 0 or -errno.
 * Signals are blocked meanwhile (and while the buffer moves), so a handler
 * calling shlog_write_committed() never writes a line twice or reads a freed
 * buffer. */
int shlog_flush(struct shlog *l, int fd);
/* Async-signal-safe: write the committed lines to FD (a fatal signal's
 * handler, just before the process dies). */
void shlog_write_committed(const struct shlog *l, int fd);
void shlog_done(struct shlog *l);

#endif
