/* SPDX-License-Identifier: Apache-2.0 */
/*
 * otlplog.c — box's records in OTLP/JSON (otlplog.h).
 *
 * The OTLP/JSON encoding of the OpenTelemetry protocol (opentelemetry-proto's
 * logs.proto, common.proto): lowerCamelCase keys, 64-bit integers as decimal
 * strings, enums as numbers, AnyValue as {"stringValue": …} and the like.
 * A decision's attributes are box.action, box.resource, box.verdict,
 * box.cause, box.rules (comma-separated), box.source, box.session (when
 * set), box.decision.seq and box.input.NAME for each input field (sets as
 * arrayValue, records as kvlistValue) — the fields the peers send, never a
 * secret or a body (they send none; docs/box.ini.5.md). Severity: WARN (13)
 * for a deny, INFO (9) for a permit or a control event.
 * Built with common/jsonl.c's pieces, as decisions.jsonl's lines are.
 * Trusts: strings are UTF-8 (proto/policy_validate.c); one that is not
 * drops the record whole (jsonl_end).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "otlplog.h"

#define STRICT JSONL_UTF8_STRICT

/* "NAME":"DECIMAL" — OTLP/JSON writes 64-bit integers as strings. */
static void
u64_str(struct jsonl *j, const char *key_lit, int64_t v)
{
	jsonl_put(j, key_lit, strlen(key_lit));
	JSONL_LIT(j, "\"");
	jsonl_long(j, v);
	JSONL_LIT(j, "\"");
}

static void
attr_begin(struct jsonl *j, bool *first, const char *key)
{
	if (!*first)
		JSONL_LIT(j, ",");
	*first = false;
	JSONL_LIT(j, "{\"key\":");
	jsonl_cstr(j, key, STRICT);
	JSONL_LIT(j, ",\"value\":");
}

static void
attr_str(struct jsonl *j, bool *first, const char *key, const char *value)
{
	if (!value)
		return;
	attr_begin(j, first, key);
	JSONL_LIT(j, "{\"stringValue\":");
	jsonl_cstr(j, value, STRICT);
	JSONL_LIT(j, "}}");
}

static void
attr_int(struct jsonl *j, bool *first, const char *key, int64_t v)
{
	attr_begin(j, first, key);
	JSONL_LIT(j, "{\"intValue\":\"");
	jsonl_long(j, v);
	JSONL_LIT(j, "\"}}");
}

/* Nesting is bounded by the policy protocol's validator (proto/policy_validate.c). */
static void
any_value(struct jsonl *j, const Box__PolicyValue *v)
{
	if (!v) {
		j->bad = true;
		return;
	}
	switch (v->kind_case) {
	case BOX__POLICY_VALUE__KIND_STR:
		JSONL_LIT(j, "{\"stringValue\":");
		jsonl_cstr(j, v->str, STRICT);
		JSONL_LIT(j, "}");
		break;
	case BOX__POLICY_VALUE__KIND_INTEGER:
		JSONL_LIT(j, "{\"intValue\":\"");
		jsonl_long(j, v->integer);
		JSONL_LIT(j, "\"}");
		break;
	case BOX__POLICY_VALUE__KIND_BOOLEAN:
		if (v->boolean)
			JSONL_LIT(j, "{\"boolValue\":true}");
		else
			JSONL_LIT(j, "{\"boolValue\":false}");
		break;
	case BOX__POLICY_VALUE__KIND_SET:
		JSONL_LIT(j, "{\"arrayValue\":{\"values\":[");
		for (size_t i = 0; v->set && i < v->set->n_elems && !j->bad; i++) {
			if (i)
				JSONL_LIT(j, ",");
			any_value(j, v->set->elems[i]);
		}
		JSONL_LIT(j, "]}}");
		break;
	case BOX__POLICY_VALUE__KIND_RECORD: {
		JSONL_LIT(j, "{\"kvlistValue\":{\"values\":[");
		bool first = true;
		for (size_t i = 0; v->record && i < v->record->n_fields && !j->bad; i++) {
			attr_begin(j, &first, v->record->fields[i]->name);
			any_value(j, v->record->fields[i]->value);
			JSONL_LIT(j, "}");
		}
		JSONL_LIT(j, "]}}");
		break;
	}
	case BOX__POLICY_VALUE__KIND__NOT_SET:
	case _BOX__POLICY_VALUE__KIND__CASE_IS_INT_SIZE:
	default:
		j->bad = true;
		break;
	}
}

/* The common head of a record: times, severity; then the caller's body and attributes. */
static size_t
record_begin(struct otlplog_batch *b, int64_t time_ns, bool warn)
{
	struct jsonl *j = &b->j;
	size_t start = j->len;

	if (b->n)
		JSONL_LIT(j, ",");
	u64_str(j, "{\"timeUnixNano\":", time_ns);
	u64_str(j, ",\"observedTimeUnixNano\":", time_ns);
	if (warn)
		JSONL_LIT(j, ",\"severityNumber\":13,\"severityText\":\"WARN\"");
	else
		JSONL_LIT(j, ",\"severityNumber\":9,\"severityText\":\"INFO\"");
	return start;
}

static int
record_end(struct otlplog_batch *b, size_t start, const char *event)
{
	struct jsonl *j = &b->j;

	JSONL_LIT(j, "],\"eventName\":");
	jsonl_cstr(j, event, STRICT);
	JSONL_LIT(j, "}");
	int r = jsonl_end(j, start);
	if (r == 0)
		b->n++;
	return r;
}

int
otlplog_decision(struct otlplog_batch *b, const struct declog_entry *e, uint64_t seq)
{
	struct jsonl *j = &b->j;
	size_t start = record_begin(b, e->time_ns, !e->permit);
	bool first = true;

	if (e->message) {
		JSONL_LIT(j, ",\"body\":{\"stringValue\":");
		jsonl_cstr(j, e->message, STRICT);
		JSONL_LIT(j, "}");
	}
	JSONL_LIT(j, ",\"attributes\":[");
	attr_str(j, &first, "box.action", e->action);
	attr_str(j, &first, "box.resource", e->resource);
	attr_str(j, &first, "box.verdict", e->permit ? "permit" : "deny");
	attr_str(j, &first, "box.cause", e->cause);
	if (e->n_rules) {
		attr_begin(j, &first, "box.rules");
		JSONL_LIT(j, "{\"stringValue\":\"");
		for (size_t i = 0; i < e->n_rules; i++) {
			if (i)
				JSONL_LIT(j, ",");
			/* the inside of a JSON string: the quotes of jsonl_cstr's result dropped */
			size_t at = j->len;
			jsonl_cstr(j, e->rules[i], STRICT);
			if (!j->bad && j->len >= at + 2) {
				memmove(j->buf + at, j->buf + at + 1, j->len - at - 2);
				j->len -= 2;
			}
		}
		JSONL_LIT(j, "\"}}");
	}
	attr_str(j, &first, "box.source", e->source);
	attr_str(j, &first, "box.session", e->session);
	attr_int(j, &first, "box.decision.seq", (int64_t)seq);
	for (size_t i = 0; i < e->n_input && !j->bad; i++) {
		const Box__PolicyField *f = e->input[i];
		if (!f || !f->name) {
			j->bad = true;
			break;
		}
		char key[300];
		(void)snprintf(key, sizeof(key), "box.input.%s", f->name);
		attr_begin(j, &first, key);
		any_value(j, f->value);
		JSONL_LIT(j, "}");
	}
	return record_end(b, start, "box.policy.decision");
}

int
otlplog_control(struct otlplog_batch *b, int64_t time_ns, const char *event,
		const char *message, const char *const *keys, const char *const *values,
		size_t n_attrs)
{
	struct jsonl *j = &b->j;
	size_t start = record_begin(b, time_ns, false);
	bool first = true;

	if (message) {
		JSONL_LIT(j, ",\"body\":{\"stringValue\":");
		jsonl_cstr(j, message, STRICT);
		JSONL_LIT(j, "}");
	}
	JSONL_LIT(j, ",\"attributes\":[");
	attr_str(j, &first, "box.control.event", event);
	for (size_t i = 0; i < n_attrs; i++)
		attr_str(j, &first, keys[i], values[i]);
	return record_end(b, start, "box.control");
}

int
otlplog_kernel(struct otlplog_batch *b, int64_t time_ns, const char *const *keys,
	       const char *const *values, size_t n_attrs)
{
	struct jsonl *j = &b->j;
	size_t start = record_begin(b, time_ns, true);
	bool first = true;

	JSONL_LIT(j, ",\"body\":{\"stringValue\":\"the sandbox refused a system call\"}");
	JSONL_LIT(j, ",\"attributes\":[");
	for (size_t i = 0; i < n_attrs; i++)
		attr_str(j, &first, keys[i], values[i]);
	return record_end(b, start, "box.kernel.refusal");
}

int
otlplog_line(struct otlplog_batch *b, const char *box, const char *id, char **out, size_t *len)
{
	struct jsonl *l = &b->line;
	bool first = true;

	if (!b->n)
		return -ENODATA;
	l->len = 0;
	l->bad = false;
	JSONL_LIT(l, "{\"resourceLogs\":[{\"resource\":{\"attributes\":[");
	attr_str(l, &first, "box.name", box);
	attr_str(l, &first, "box.id", id);
	attr_str(l, &first, "service.name", "box");
	JSONL_LIT(l, "]},\"scopeLogs\":[{\"scope\":{\"name\":\"box\"},\"logRecords\":[");
	jsonl_put(l, b->j.buf, b->j.len);
	JSONL_LIT(l, "]}]}]}\n");
	int r = jsonl_end(l, 0);
	b->j.len = 0;
	b->n = 0;
	if (r < 0)
		return r;
	*out = l->buf;
	*len = l->len;
	return 0;
}

void
otlplog_batch_free(struct otlplog_batch *b)
{
	jsonl_free(&b->j);
	jsonl_free(&b->line);
	b->n = 0;
}
