/* SPDX-License-Identifier: Apache-2.0 */
/*
 * declog.c — decisions.jsonl lines (declog.h).
 *
 * Key order is the one of docs/boxctl.1.md: time time_ns box id action resource
 * verdict cause rules message source input for a decision, and time time_ns
 * box id record action input output source for a recorded outcome (what
 * `boxctl policy replay` needs to rebuild the history), and time time_ns box
 * id control ok generation file uid rules temporal_rules rules_kept error
 * source for a control line (`"control":"policy.reload"`). `time_ns` is the
 * event's time as the temporal monitor saw it (`time` has milliseconds
 * only). `input` and `output` hold the action's fields as plain JSON
 * (strings, integers, booleans, arrays for sets, objects for records), in
 * the order the peer sent them: the action's input fields, never a secret
 * or a body (the peers send no such field; the schema has none).
 * The line is written straight into one buffer with common/jsonl.c's pieces
 * (this runs on every decision; box-sh's writer uses them too): byte for byte what jansson's json_dumps(JSON_COMPACT |
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

#include "declog.h"
#include "jsonl.h"
#include "logchain.h"

void
declog_init(void)
{
	json_object_seed(0);
}

#define STRICT JSONL_UTF8_STRICT

static void value_put(struct jsonl *j, const Box__PolicyValue *v);

/*
 * An object in the peer's order. A name given twice keeps the place of its
 * first occurrence and the value of its last (jansson's set-in-place); every
 * value must still be well-formed.
 */
static void
fields_put(struct jsonl *j, Box__PolicyField *const *f, size_t n)
{
	bool first = true;

	JSONL_LIT(j, "{");
	for (size_t i = 0; i < n && !j->bad; i++) {
		if (!f[i] || !f[i]->name) {
			j->bad = true;
			break;
		}
		/* (the first byte before strcmp: this runs for every field of every line) */
		const char *name = f[i]->name;
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = f[k]->name[0] == name[0] && strcmp(f[k]->name, name) == 0;
		size_t last = i;
		for (size_t k = i + 1; !seen && k < n; k++)
			if (f[k] && f[k]->name && f[k]->name[0] == name[0] &&
			    strcmp(f[k]->name, name) == 0)
				last = k;
		if (seen || last != i) {
			/* Emitted already, or replaced: it must still be a value jansson would take. */
			struct jsonl scratch = { 0 };
			value_put(&scratch, f[i]->value);
			jsonl_free(&scratch);
			j->bad = j->bad || scratch.bad;
			j->oom = j->oom || scratch.oom;
			if (seen)
				continue;
		}
		if (!first)
			JSONL_LIT(j, ",");
		first = false;
		jsonl_cstr(j, f[i]->name, STRICT);
		JSONL_LIT(j, ":");
		value_put(j, f[last]->value);
	}
	JSONL_LIT(j, "}");
}

static void
value_put(struct jsonl *j, const Box__PolicyValue *v)
{
	if (!v) {
		j->bad = true;
		return;
	}
	switch (v->kind_case) {
	case BOX__POLICY_VALUE__KIND_STR:
		if (!v->str)
			j->bad = true;
		else
			jsonl_cstr(j, v->str, STRICT);
		break;
	case BOX__POLICY_VALUE__KIND_INTEGER:
		jsonl_long(j, v->integer);
		break;
	case BOX__POLICY_VALUE__KIND_BOOLEAN:
		if (v->boolean)
			JSONL_LIT(j, "true");
		else
			JSONL_LIT(j, "false");
		break;
	case BOX__POLICY_VALUE__KIND_SET:
		if (!v->set) {
			j->bad = true;
			break;
		}
		JSONL_LIT(j, "[");
		for (size_t i = 0; i < v->set->n_elems && !j->bad; i++) {
			if (i > 0)
				JSONL_LIT(j, ",");
			value_put(j, v->set->elems[i]);
		}
		JSONL_LIT(j, "]");
		break;
	case BOX__POLICY_VALUE__KIND_RECORD:
		if (!v->record)
			j->bad = true;
		else
			fields_put(j, v->record->fields, v->record->n_fields);
		break;
	case BOX__POLICY_VALUE__KIND__NOT_SET:
	default: j->bad = true; break;
	}
}

/* ,"source":SOURCE[,"session":SESSION] */
static void
source_put(struct jsonl *j, const char *source, const char *session)
{
	JSONL_LIT(j, ",\"source\":");
	jsonl_cstr(j, source, STRICT);
	if (session) {
		JSONL_LIT(j, ",\"session\":");
		jsonl_cstr(j, session, STRICT);
	}
}

/* NUL-terminate and hand the buffer back; a failed line leaves nothing behind. */
static int
line_done(struct jsonl *j, size_t start, char **buf, size_t *len, size_t *cap)
{
	if (jsonl_room(j, 1))
		j->buf[j->len] = '\0';
	int r = jsonl_end(j, start);
	if (r < 0 && j->buf && j->cap > start)
		j->buf[start] = '\0'; /* nothing of the failed line stays */
	/* The buffer may have moved even when the line failed: hand it back. */
	*buf = j->buf;
	*cap = j->cap;
	*len = j->len;
	return r;
}

/* The closing "}\n", then as line_done. */
static int
line_end(struct jsonl *j, size_t start, char **buf, size_t *len, size_t *cap)
{
	JSONL_LIT(j, "}\n");
	return line_done(j, start, buf, len, cap);
}

char *
declog_input_json(Box__PolicyField *const *f, size_t n)
{
	struct jsonl j = { 0 };
	fields_put(&j, f, n);
	JSONL_LIT(&j, "\0");
	if (j.bad) {
		jsonl_free(&j);
		return NULL;
	}
	return j.buf;
}

int
declog_append(const struct declog_entry *e, char **buf, size_t *len, size_t *cap)
{
	struct jsonl j = { .buf = *buf, .len = *len, .cap = *cap };
	size_t start = *len;

	jsonl_head(&j, e->time_ns, e->box, e->id, STRICT);
	JSONL_LIT(&j, ",\"action\":");
	jsonl_cstr(&j, e->action, STRICT);
	JSONL_LIT(&j, ",\"resource\":");
	jsonl_cstr(&j, e->resource, STRICT);
	if (e->permit)
		JSONL_LIT(&j, ",\"verdict\":\"permit\",\"cause\":");
	else
		JSONL_LIT(&j, ",\"verdict\":\"deny\",\"cause\":");
	jsonl_cstr(&j, e->cause, STRICT);
	JSONL_LIT(&j, ",\"rules\":[");
	for (size_t i = 0; i < e->n_rules; i++) {
		if (i > 0)
			JSONL_LIT(&j, ",");
		jsonl_cstr(&j, e->rules[i], STRICT);
	}
	JSONL_LIT(&j, "],\"message\":");
	jsonl_cstr(&j, e->message, STRICT);
	source_put(&j, e->source, e->session);
	if (e->asker) {
		JSONL_LIT(&j, ",\"asker\":");
		jsonl_cstr(&j, e->asker, STRICT);
		JSONL_LIT(&j, ",\"uid\":");
		jsonl_long(&j, (int64_t)e->uid);
	}
	JSONL_LIT(&j, ",\"input\":");
	size_t at = j.len;
	fields_put(&j, e->input, e->n_input);
	if (e->input_span) {
		e->input_span[0] = at - start;
		e->input_span[1] = j.len - at;
	}
	return line_end(&j, start, buf, len, cap);
}

int
declog_append_outcome(const struct declog_outcome *o, char **buf, size_t *len, size_t *cap)
{
	struct jsonl j = { .buf = *buf, .len = *len, .cap = *cap };
	size_t start = *len;

	jsonl_head(&j, o->time_ns, o->box, o->id, STRICT);
	if (o->error)
		JSONL_LIT(&j, ",\"record\":\"error\",\"action\":");
	else
		JSONL_LIT(&j, ",\"record\":\"response\",\"action\":");
	jsonl_cstr(&j, o->action, STRICT);
	JSONL_LIT(&j, ",\"input\":");
	if (o->input_json)
		jsonl_put(&j, o->input_json, o->input_json_len);
	else
		fields_put(&j, o->input, o->n_input);
	if (!o->error) {
		JSONL_LIT(&j, ",\"output\":");
		fields_put(&j, o->output, o->n_output);
	}
	source_put(&j, o->source, o->session);
	return line_end(&j, start, buf, len, cap);
}

int
declog_chain(struct declog_chain *c, char **buf, size_t *len, size_t *cap, size_t start)
{
	struct jsonl j = { .buf = *buf, .len = *len, .cap = *cap };
	char hex[LOGCHAIN_HEX_LEN + 1];

	if (!j.buf || j.len < start + 3 || memcmp(j.buf + j.len - 2, "}\n", 2) != 0)
		return -EINVAL;
	logchain_hex(c->head, hex);
	j.len -= 2;
	JSONL_LIT(&j, ",\"seq\":");
	jsonl_long(&j, (int64_t)(c->seq + 1));
	JSONL_LIT(&j, ",\"prev\":\"");
	jsonl_put(&j, hex, LOGCHAIN_HEX_LEN);
	JSONL_LIT(&j, "\"}\n");
	int r = line_done(&j, start, buf, len, cap);
	if (r < 0)
		return r;
	logchain_sha256(*buf + start, *len - start - 1, c->head);
	c->seq++;
	return 0;
}

int
declog_append_seal(int64_t time_ns, const char *box, const char *id, uint64_t lines, char **buf,
		   size_t *len, size_t *cap)
{
	struct jsonl j = { .buf = *buf, .len = *len, .cap = *cap };
	size_t start = *len;

	jsonl_head(&j, time_ns, box, id, STRICT);
	JSONL_LIT(&j, ",\"seal\":\"end\",\"lines\":");
	jsonl_long(&j, (int64_t)lines);
	return line_end(&j, start, buf, len, cap);
}

int
declog_append_reload(const struct declog_reload *c, char **buf, size_t *len, size_t *cap)
{
	struct jsonl j = { .buf = *buf, .len = *len, .cap = *cap };
	size_t start = *len;

	jsonl_head(&j, c->time_ns, c->box, c->id, STRICT);
	JSONL_LIT(&j, ",\"control\":\"policy.reload\",\"ok\":");
	if (c->ok)
		JSONL_LIT(&j, "true");
	else
		JSONL_LIT(&j, "false");
	JSONL_LIT(&j, ",\"generation\":");
	jsonl_long(&j, (int64_t)c->generation);
	if (c->file) {
		JSONL_LIT(&j, ",\"file\":");
		jsonl_cstr(&j, c->file, STRICT);
	}
	JSONL_LIT(&j, ",\"uid\":");
	jsonl_long(&j, (int64_t)c->uid);
	JSONL_LIT(&j, ",\"rules\":");
	jsonl_long(&j, (int64_t)c->rules);
	JSONL_LIT(&j, ",\"temporal_rules\":");
	jsonl_long(&j, (int64_t)c->temporal_rules);
	JSONL_LIT(&j, ",\"rules_kept\":");
	jsonl_long(&j, (int64_t)c->rules_kept);
	if (c->error) {
		JSONL_LIT(&j, ",\"error\":");
		jsonl_cstr(&j, c->error, STRICT);
	}
	JSONL_LIT(&j, ",\"source\":\"boxctl\"");
	return line_end(&j, start, buf, len, cap);
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
