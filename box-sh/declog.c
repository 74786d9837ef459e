/* SPDX-License-Identifier: Apache-2.0 */
/*
 * declog.c — decisions.jsonl lines for box-sh (declog.h).
 *
 * Key order (docs/boxctl.1.md): time time_ns box id action resource verdict cause
 * rules message source input, and for outcomes time time_ns box id record
 * action input output source. The pieces (head, strings, numbers, the
 * buffer) are common/jsonl.c's, which box-policyd's writer uses too, so the
 * lines read like box-policyd's.
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
#include "jsonl.h"

#define REPLACE JSONL_UTF8_REPLACE

/* A line begins: the buffer's settings (a handler may read it: signals blocked to move it). */
static size_t
begin(struct shlog *l)
{
	l->j.block_signals = true;
	l->j.first_cap = 64 * 1024;
	return l->j.len;
}

static void
put_fields(struct jsonl *j, const struct shlog_field *f, size_t n)
{
	JSONL_LIT(j, "{");
	for (size_t i = 0; i < n; i++) {
		if (i)
			JSONL_LIT(j, ",");
		/* names are the decider's own identifiers: nothing to escape */
		JSONL_LIT(j, "\"");
		jsonl_put(j, f[i].name, f[i].name_len ? f[i].name_len : strlen(f[i].name));
		JSONL_LIT(j, "\":");
		if (f[i].is_long)
			jsonl_long(j, f[i].num);
		else
			jsonl_str(j, f[i].str, f[i].str ? f[i].len : 0, REPLACE);
	}
	JSONL_LIT(j, "}");
}

/* Keep the line whole or not at all. */
static int
finish(struct shlog *l, size_t start)
{
	JSONL_LIT(&l->j, "}\n");
	int r = jsonl_end(&l->j, start);
	if (r < 0)
		return r;
	/* the line's bytes are in place before a handler can see it counted */
	__atomic_store_n(&l->committed, l->j.len, __ATOMIC_RELEASE);
	return 0;
}

int
shlog_fields(struct shlog *out, const struct shlog_field *f, size_t n)
{
	(void)begin(out);
	out->j.len = 0;
	put_fields(&out->j, f, n);
	return jsonl_end(&out->j, 0);
}

/* Everything of a decision line before its input object. */
static void
put_decision(struct jsonl *j, int64_t time_ns, const char *box, const char *id,
	     const char *action, const char *resource, bool permit, const char *cause,
	     const char *const *rules, size_t n_rules, const char *message)
{
	jsonl_head(j, time_ns, box, id, REPLACE);
	JSONL_LIT(j, ",\"action\":");
	jsonl_cstr(j, action, REPLACE);
	JSONL_LIT(j, ",\"resource\":");
	jsonl_cstr(j, resource, REPLACE);
	if (permit)
		JSONL_LIT(j, ",\"verdict\":\"permit\",\"cause\":");
	else
		JSONL_LIT(j, ",\"verdict\":\"deny\",\"cause\":");
	jsonl_cstr(j, cause, REPLACE);
	JSONL_LIT(j, ",\"rules\":[");
	for (size_t i = 0; i < n_rules; i++) {
		if (i)
			JSONL_LIT(j, ",");
		jsonl_cstr(j, rules[i], REPLACE);
	}
	JSONL_LIT(j, "],\"message\":");
	jsonl_cstr(j, message, REPLACE);
	JSONL_LIT(j, ",\"source\":\"box-shell\",\"input\":");
}

/* Everything of an outcome line before its input object. */
static void
put_outcome(struct jsonl *j, int64_t time_ns, const char *box, const char *id,
	    const char *record, const char *action)
{
	jsonl_head(j, time_ns, box, id, REPLACE);
	JSONL_LIT(j, ",\"record\":");
	jsonl_cstr(j, record, REPLACE);
	JSONL_LIT(j, ",\"action\":");
	jsonl_cstr(j, action, REPLACE);
	JSONL_LIT(j, ",\"input\":");
}

int
shlog_decision_json(struct shlog *l, int64_t time_ns, const char *box, const char *id,
		    const char *action, const char *resource, bool permit, const char *cause,
		    const char *const *rules, size_t n_rules, const char *message,
		    const struct shlog *input)
{
	size_t start = begin(l);
	put_decision(&l->j, time_ns, box, id, action, resource, permit, cause, rules, n_rules,
		     message);
	jsonl_put(&l->j, input->j.buf, input->j.len);
	return finish(l, start);
}

int
shlog_outcome_json(struct shlog *l, int64_t time_ns, const char *box, const char *id,
		   const char *record, const char *action, const struct shlog *input,
		   const struct shlog_field *output, size_t n_output)
{
	size_t start = begin(l);
	put_outcome(&l->j, time_ns, box, id, record, action);
	jsonl_put(&l->j, input->j.buf, input->j.len);
	JSONL_LIT(&l->j, ",\"output\":");
	put_fields(&l->j, output, n_output);
	JSONL_LIT(&l->j, ",\"source\":\"box-shell\"");
	return finish(l, start);
}

int
shlog_decision(struct shlog *l, int64_t time_ns, const char *box, const char *id,
	       const char *action, const char *resource, bool permit, const char *cause,
	       const char *const *rules, size_t n_rules, const char *message,
	       const struct shlog_field *input, size_t n_input)
{
	size_t start = begin(l);
	put_decision(&l->j, time_ns, box, id, action, resource, permit, cause, rules, n_rules,
		     message);
	put_fields(&l->j, input, n_input);
	return finish(l, start);
}

int
shlog_outcome(struct shlog *l, int64_t time_ns, const char *box, const char *id,
	      const char *record, const char *action, const struct shlog_field *input,
	      size_t n_input, const struct shlog_field *output, size_t n_output)
{
	size_t start = begin(l);
	put_outcome(&l->j, time_ns, box, id, record, action);
	put_fields(&l->j, input, n_input);
	JSONL_LIT(&l->j, ",\"output\":");
	put_fields(&l->j, output, n_output);
	JSONL_LIT(&l->j, ",\"source\":\"box-shell\"");
	return finish(l, start);
}

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

int
shlog_flush(struct shlog *l, int fd)
{
	size_t off = 0;
	int r = 0;
	sigset_t old;
	if (l->j.len == 0)
		return 0;
	block_all(&old);
	while (off < l->j.len) {
		ssize_t n = write(fd, l->j.buf + off, l->j.len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;
			break;
		}
		off += (size_t)n;
	}
	l->j.len = 0;
	__atomic_store_n(&l->committed, 0, __ATOMIC_RELEASE);
	restore(&old);
	return r;
}

void
shlog_write_committed(const struct shlog *l, int fd)
{
	size_t n = __atomic_load_n(&l->committed, __ATOMIC_ACQUIRE), off = 0;
	const char *b = l->j.buf;
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
	jsonl_free(&l->j);
	*l = (struct shlog){ 0 };
	restore(&old);
}
