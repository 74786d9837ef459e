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
 *
 * An otlp target's batch (otlplog_batch.pb) holds the same records in the
 * binary protobuf encoding instead (opentelemetry-proto's wire format,
 * proto/otlp.proto's numbers), written straight into the batch's buffer:
 * each record a ScopeLogs.log_records field (a LogRecord), behind room kept
 * at the front for the ExportLogsServiceRequest, ResourceLogs and ScopeLogs
 * heads otlplog_request writes there once the records' length is known —
 * the bytes protobuf-c packs from the OTLP/JSON of the same records
 * (fields in number order, a oneof member always, a proto3 scalar left out
 * when 0; test/unit/test_otlplog.c compares them), sent to box-gateway with
 * no copy made and no allocation per record. A submessage's length is
 * written after its content: room for the likely varint is kept and the
 * content moved when the length takes more or fewer bytes.
 * Trusts: strings are UTF-8 (proto/policy_validate.c); one that is not
 * drops the record whole (jsonl_end; the binary encoding checks each
 * string with box_valid_utf8 for the same).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "otlplog.h"
#include "text.h" /* box_valid_utf8 */

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

/* attr_str with a literal KEY (ASCII, nothing to escape): its head is one copy. */
#define ATTR_LIT(j, first, key, value)                                                       \
	attr_lit((j), (first), "{\"key\":\"" key "\",\"value\":{\"stringValue\":",              \
		 sizeof("{\"key\":\"" key "\",\"value\":{\"stringValue\":") - 1, (value))

static void
attr_lit(struct jsonl *j, bool *first, const char *head, size_t head_len, const char *value)
{
	if (!value)
		return;
	if (!*first)
		JSONL_LIT(j, ",");
	*first = false;
	jsonl_put(j, head, head_len);
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

/* ---- the binary encoding (an otlp target's batch) ------------------------------------- */

/* The front of a binary batch, kept for otlplog_request's heads (box.name is <= 32 bytes). */
#define PB_HEAD_ROOM 256u

/* Wire types and the tags written (field << 3 | wire type). */
#define PB_LEN 2u
#define PB_TAG(field, wt) ((uint8_t)((field) << 3 | (wt)))

static inline bool
pb_room(struct jsonl *j, size_t n)
{
	return (!j->bad && n <= j->cap - j->len) || jsonl_room(j, n);
}

static inline size_t
pb_vsize(uint64_t v)
{
	size_t k = 1;
	while (v >= 0x80) {
		v >>= 7;
		k++;
	}
	return k;
}

/* V as a varint at O (room made): past it. */
static inline uint8_t *
pb_vput(uint8_t *o, uint64_t v)
{
	while (v >= 0x80) {
		*o++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*o++ = (uint8_t)v;
	return o;
}

static inline uint8_t *
pb_at(struct jsonl *j)
{
	return (uint8_t *)j->buf + j->len;
}

/* TAG and a varint V. */
static void
pb_varint(struct jsonl *j, uint8_t tag, uint64_t v)
{
	if (!pb_room(j, 11))
		return;
	uint8_t *o = pb_at(j);
	*o++ = tag;
	o = pb_vput(o, v);
	j->len = (size_t)((char *)o - j->buf);
}

/* TAG and a fixed64 V (little-endian). */
static void
pb_fixed64(struct jsonl *j, uint8_t tag, uint64_t v)
{
	if (!pb_room(j, 9))
		return;
	uint8_t *o = pb_at(j);
	*o++ = tag;
	for (int i = 0; i < 8; i++)
		*o++ = (uint8_t)(v >> (8 * i));
	j->len += 9;
}

/* TAG and S (N bytes) as a length-delimited field; S was checked. */
static void
pb_bytes(struct jsonl *j, uint8_t tag, const char *s, size_t n)
{
	if (!pb_room(j, 11 + n))
		return;
	uint8_t *o = pb_at(j);
	*o++ = tag;
	o = pb_vput(o, n);
	memcpy(o, s, n);
	j->len = (size_t)((char *)o - j->buf) + n;
}

/*
 * Is S (N bytes, no NUL among them: strlen's) UTF-8? Else the record is bad (as
 * jsonl_str's JSONL_UTF8_STRICT). ASCII, nearly every string, is told here.
 */
static inline bool
pb_utf8(struct jsonl *j, const char *s, size_t n)
{
	uint64_t high = 0;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		high |= w;
	}
	for (; i < n; i++)
		high |= (unsigned char)s[i];
	if (!(high & 0x8080808080808080ULL) || box_valid_utf8(s, n))
		return true;
	j->bad = true;
	return false;
}

/*
 * A submessage as field TAG begins: its tag, and RESERVE bytes for its length
 * (pb_end). The length's offset, for pb_end.
 */
static size_t
pb_begin(struct jsonl *j, uint8_t tag, size_t reserve)
{
	if (!pb_room(j, 1 + reserve))
		return j->len;
	j->buf[j->len] = (char)tag;
	size_t at = j->len + 1;
	j->len = at + reserve;
	return at;
}

/* The submessage whose length is at AT (RESERVE bytes kept) ends here. */
static void
pb_end(struct jsonl *j, size_t at, size_t reserve)
{
	if (j->bad)
		return;
	size_t n = j->len - at - reserve, k = pb_vsize(n);
	if (k > reserve && !pb_room(j, k - reserve))
		return;
	if (k != reserve)
		memmove(j->buf + at + k, j->buf + at + reserve, n);
	(void)pb_vput((uint8_t *)j->buf + at, n);
	j->len = at + k + n;
}

/*
 * A KeyValue with a string value as field TAG: KEY (KL bytes, the caller's
 * own) = VALUE (VL bytes, checked here). Inlined: a literal key's copy is a
 * few moves.
 */
static inline __attribute__((always_inline)) void
pb_kv_str(struct jsonl *j, uint8_t tag, const char *key, size_t kl, const char *value, size_t vl)
{
	if (!pb_utf8(j, value, vl))
		return;
	size_t any = 1 + pb_vsize(vl) + vl;
	size_t kv = (kl ? 1 + pb_vsize(kl) + kl : 0) + 1 + pb_vsize(any) + any;
	if (!pb_room(j, 1 + pb_vsize(kv) + kv))
		return;
	uint8_t *o = pb_at(j);
	*o++ = tag;
	o = pb_vput(o, kv);
	if (kl) { /* KeyValue.key: a proto3 string, left out when empty */
		*o++ = PB_TAG(1, PB_LEN);
		o = pb_vput(o, kl);
		memcpy(o, key, kl);
		o += kl;
	}
	*o++ = PB_TAG(2, PB_LEN); /* KeyValue.value */
	o = pb_vput(o, any);
	*o++ = PB_TAG(1, PB_LEN); /* AnyValue.string_value */
	o = pb_vput(o, vl);
	memcpy(o, value, vl);
	j->len = (size_t)((char *)o - j->buf) + vl;
}

/* The same with a literal key; a NULL value is left out (as attr_str does). */
#define PB_KV_LIT(j, tag, lit, value)                                                        \
	do {                                                                                 \
		const char *v_ = (value);                                                    \
		if (v_)                                                                      \
			pb_kv_str((j), (tag), (lit), sizeof(lit) - 1, v_, strlen(v_));       \
	} while (0)

/* A LogRecord.attributes KeyValue with an integer value: KEY (a literal's) = V. */
static void
pb_kv_int(struct jsonl *j, const char *key, size_t kl, int64_t v)
{
	size_t any = 1 + pb_vsize((uint64_t)v);
	size_t kv = 1 + pb_vsize(kl) + kl + 1 + 1 + any;
	if (!pb_room(j, 1 + pb_vsize(kv) + kv))
		return;
	uint8_t *o = pb_at(j);
	*o++ = PB_TAG(6, PB_LEN);
	o = pb_vput(o, kv);
	*o++ = PB_TAG(1, PB_LEN);
	o = pb_vput(o, kl);
	memcpy(o, key, kl);
	o += kl;
	*o++ = PB_TAG(2, PB_LEN);
	*o++ = (uint8_t)any; /* < 128 */
	*o++ = PB_TAG(3, 0); /* AnyValue.int_value */
	o = pb_vput(o, (uint64_t)v);
	j->len = (size_t)((char *)o - j->buf);
}

/* The fields of an AnyValue holding V (the caller wrote its tag and length). */
static void
pb_any(struct jsonl *j, const Box__PolicyValue *v)
{
	if (!v) {
		j->bad = true;
		return;
	}
	switch (v->kind_case) {
	case BOX__POLICY_VALUE__KIND_STR: {
		size_t n = v->str ? strlen(v->str) : 0;
		if (pb_utf8(j, v->str ? v->str : "", n))
			pb_bytes(j, PB_TAG(1, PB_LEN), v->str, n);
		break;
	}
	case BOX__POLICY_VALUE__KIND_INTEGER:
		pb_varint(j, PB_TAG(3, 0), (uint64_t)v->integer);
		break;
	case BOX__POLICY_VALUE__KIND_BOOLEAN:
		pb_varint(j, PB_TAG(2, 0), v->boolean ? 1 : 0);
		break;
	case BOX__POLICY_VALUE__KIND_SET: {
		size_t at = pb_begin(j, PB_TAG(5, PB_LEN), 1); /* AnyValue.array_value */
		for (size_t i = 0; v->set && i < v->set->n_elems && !j->bad; i++) {
			size_t e = pb_begin(j, PB_TAG(1, PB_LEN), 1); /* ArrayValue.values */
			pb_any(j, v->set->elems[i]);
			pb_end(j, e, 1);
		}
		pb_end(j, at, 1);
		break;
	}
	case BOX__POLICY_VALUE__KIND_RECORD: {
		size_t at = pb_begin(j, PB_TAG(6, PB_LEN), 1); /* AnyValue.kvlist_value */
		for (size_t i = 0; v->record && i < v->record->n_fields && !j->bad; i++) {
			const Box__PolicyField *f = v->record->fields[i];
			size_t n = f && f->name ? strlen(f->name) : 0;
			if (!f || !f->name || !pb_utf8(j, f->name, n)) {
				j->bad = true;
				break;
			}
			size_t kv = pb_begin(j, PB_TAG(1, PB_LEN), 1); /* KeyValueList.values */
			if (n) /* (an empty key is left out, as protobuf-c does) */
				pb_bytes(j, PB_TAG(1, PB_LEN), f->name, n);
			size_t any = pb_begin(j, PB_TAG(2, PB_LEN), 1);
			pb_any(j, f->value);
			pb_end(j, any, 1);
			pb_end(j, kv, 1);
		}
		pb_end(j, at, 1);
		break;
	}
	case BOX__POLICY_VALUE__KIND__NOT_SET:
	case _BOX__POLICY_VALUE__KIND__CASE_IS_INT_SIZE:
	default:
		j->bad = true;
		break;
	}
}

/* A LogRecord.body holding the string S (checked here). */
static void
pb_body(struct jsonl *j, const char *s)
{
	size_t n = strlen(s);
	if (!pb_utf8(j, s, n) || !pb_room(j, 1 + 10 + 1 + 10 + n))
		return;
	uint8_t *o = pb_at(j);
	*o++ = PB_TAG(5, PB_LEN);
	o = pb_vput(o, 1 + pb_vsize(n) + n);
	*o++ = PB_TAG(1, PB_LEN);
	o = pb_vput(o, n);
	memcpy(o, s, n);
	j->len = (size_t)((char *)o - j->buf) + n;
}

/* Where a LogRecord's length goes: 2 bytes, a record of 128 bytes to 16 KiB. */
#define PB_RECORD_RESERVE 2u

/* A LogRecord begins (ScopeLogs.log_records): its times, severity. Its start. */
static size_t
pb_record_begin(struct otlplog_batch *b, int64_t time_ns, bool warn, size_t *len_at)
{
	struct jsonl *j = &b->j;

	if (j->len < PB_HEAD_ROOM) { /* an empty batch: the heads' room first */
		if (pb_room(j, PB_HEAD_ROOM))
			j->len = PB_HEAD_ROOM;
	}
	size_t start = j->len;
	*len_at = pb_begin(j, PB_TAG(2, PB_LEN), PB_RECORD_RESERVE);
	if (time_ns)
		pb_fixed64(j, PB_TAG(1, 1), (uint64_t)time_ns); /* time_unix_nano */
	if (pb_room(j, 8)) {
		uint8_t *o = pb_at(j);
		*o++ = PB_TAG(2, 0); /* severity_number */
		*o++ = warn ? 13 : 9;
		*o++ = PB_TAG(3, PB_LEN); /* severity_text */
		*o++ = 4;
		memcpy(o, warn ? "WARN" : "INFO", 4);
		j->len += 8;
	}
	return start;
}

static int
pb_record_end(struct otlplog_batch *b, size_t start, size_t len_at, int64_t time_ns,
	      const char *event_lit, size_t event_len)
{
	struct jsonl *j = &b->j;

	if (time_ns)
		pb_fixed64(j, PB_TAG(11, 1), (uint64_t)time_ns); /* observed_time_unix_nano */
	if (event_len)
		pb_bytes(j, PB_TAG(12, PB_LEN), event_lit, event_len); /* event_name */
	pb_end(j, len_at, PB_RECORD_RESERVE);
	int r = jsonl_end(j, start);
	if (r == 0)
		b->n++;
	return r;
}

#define PB_ATTR(j, lit, value) PB_KV_LIT((j), PB_TAG(6, PB_LEN), lit, (value))

static int
pb_decision(struct otlplog_batch *b, const struct declog_entry *e, uint64_t seq)
{
	static const char event[] = "box.policy.decision";
	struct jsonl *j = &b->j;
	size_t len_at, start = pb_record_begin(b, e->time_ns, !e->permit, &len_at);

	if (e->message)
		pb_body(j, e->message);
	PB_ATTR(j, "box.action", e->action);
	PB_ATTR(j, "box.resource", e->resource);
	PB_ATTR(j, "box.verdict", e->permit ? "permit" : "deny");
	PB_ATTR(j, "box.cause", e->cause);
	if (e->n_rules) {
		/* "box.rules": the rule ids, comma-separated, in one string */
		static const char key[] = "box.rules";
		size_t vl = e->n_rules - 1;
		for (size_t i = 0; i < e->n_rules; i++) {
			size_t n = strlen(e->rules[i]);
			if (!pb_utf8(j, e->rules[i], n))
				break;
			vl += n;
		}
		size_t any = 1 + pb_vsize(vl) + vl;
		size_t kv = 1 + 1 + sizeof(key) - 1 + 1 + pb_vsize(any) + any;
		if (pb_room(j, 1 + pb_vsize(kv) + kv)) {
			uint8_t *o = pb_at(j);
			*o++ = PB_TAG(6, PB_LEN);
			o = pb_vput(o, kv);
			*o++ = PB_TAG(1, PB_LEN);
			*o++ = sizeof(key) - 1;
			memcpy(o, key, sizeof(key) - 1);
			o += sizeof(key) - 1;
			*o++ = PB_TAG(2, PB_LEN);
			o = pb_vput(o, any);
			*o++ = PB_TAG(1, PB_LEN);
			o = pb_vput(o, vl);
			for (size_t i = 0; i < e->n_rules; i++) {
				size_t n = strlen(e->rules[i]);
				if (i)
					*o++ = ',';
				memcpy(o, e->rules[i], n);
				o += n;
			}
			j->len = (size_t)((char *)o - j->buf);
		}
	}
	PB_ATTR(j, "box.source", e->source);
	PB_ATTR(j, "box.session", e->session);
	pb_kv_int(j, "box.decision.seq", sizeof("box.decision.seq") - 1, (int64_t)seq);
	for (size_t i = 0; i < e->n_input && !j->bad; i++) {
		static const char prefix[] = "box.input.";
		const Box__PolicyField *f = e->input[i];
		size_t n = f && f->name ? strlen(f->name) : 0;
		if (!f || !f->name || !pb_utf8(j, f->name, n)) {
			j->bad = true;
			break;
		}
		size_t kv = pb_begin(j, PB_TAG(6, PB_LEN), 1);
		size_t kl = sizeof(prefix) - 1 + n;
		if (pb_room(j, 1 + 2 + kl)) {
			uint8_t *o = pb_at(j);
			*o++ = PB_TAG(1, PB_LEN);
			o = pb_vput(o, kl);
			memcpy(o, prefix, sizeof(prefix) - 1);
			memcpy(o + sizeof(prefix) - 1, f->name, n);
			j->len = (size_t)((char *)o - j->buf) + kl;
		}
		size_t any = pb_begin(j, PB_TAG(2, PB_LEN), 1);
		pb_any(j, f->value);
		pb_end(j, any, 1);
		pb_end(j, kv, 1);
	}
	return pb_record_end(b, start, len_at, e->time_ns, event, sizeof(event) - 1);
}

/* KEYS[i] = VALUES[i] as LogRecord attributes (a NULL value left out). */
static void
pb_attrs(struct jsonl *j, const char *const *keys, const char *const *values, size_t n_attrs)
{
	for (size_t i = 0; i < n_attrs && !j->bad; i++) {
		if (!values[i])
			continue;
		size_t kl = strlen(keys[i]);
		if (pb_utf8(j, keys[i], kl))
			pb_kv_str(j, PB_TAG(6, PB_LEN), keys[i], kl, values[i], strlen(values[i]));
	}
}

static int
pb_control(struct otlplog_batch *b, int64_t time_ns, const char *event, const char *message,
	   const char *const *keys, const char *const *values, size_t n_attrs)
{
	static const char name[] = "box.control";
	struct jsonl *j = &b->j;
	size_t len_at, start = pb_record_begin(b, time_ns, false, &len_at);

	if (message)
		pb_body(j, message);
	PB_ATTR(j, "box.control.event", event);
	pb_attrs(j, keys, values, n_attrs);
	return pb_record_end(b, start, len_at, time_ns, name, sizeof(name) - 1);
}

static int
pb_kernel(struct otlplog_batch *b, int64_t time_ns, const char *const *keys,
	  const char *const *values, size_t n_attrs)
{
	static const char name[] = "box.kernel.refusal";
	struct jsonl *j = &b->j;
	size_t len_at, start = pb_record_begin(b, time_ns, true, &len_at);

	pb_body(j, "the sandbox refused a system call");
	pb_attrs(j, keys, values, n_attrs);
	return pb_record_end(b, start, len_at, time_ns, name, sizeof(name) - 1);
}

int
otlplog_request(struct otlplog_batch *b, const char *box, const char *id, uint8_t **out,
		size_t *len)
{
	static const uint8_t scope[] = { PB_TAG(1, PB_LEN), 5, PB_TAG(1, PB_LEN), 3, 'b', 'o', 'x' };
	struct jsonl *res = &b->line, *j = &b->j;

	if (!b->pb)
		return -EINVAL;
	if (!b->n)
		return -ENODATA;
	/* Resource.attributes, as otlplog_line's */
	res->len = 0;
	res->bad = false;
	PB_KV_LIT(res, PB_TAG(1, PB_LEN), "box.name", box);
	PB_KV_LIT(res, PB_TAG(1, PB_LEN), "box.id", id);
	PB_KV_LIT(res, PB_TAG(1, PB_LEN), "service.name", "box");
	int r = jsonl_end(res, 0);
	if (r < 0) {
		j->len = 0;
		b->n = 0;
		return r;
	}
	size_t records = j->len - PB_HEAD_ROOM;
	size_t sl = sizeof(scope) + records;                     /* ScopeLogs */
	size_t resource = 1 + pb_vsize(res->len) + res->len;     /* ResourceLogs.resource */
	size_t rl = resource + 1 + pb_vsize(sl) + sl;            /* ResourceLogs */
	size_t head = 1 + pb_vsize(rl) + resource + 1 + pb_vsize(sl) + sizeof(scope);
	if (head > PB_HEAD_ROOM) {
		/* (a box name within BOX_NAME_MAX never gets here) */
		if (!pb_room(j, head)) {
			(void)jsonl_end(j, 0);
			b->n = 0;
			return -ENOMEM;
		}
		memmove(j->buf + head, j->buf + PB_HEAD_ROOM, records);
		j->len = head + records;
	}
	size_t off = j->len - records - head;
	uint8_t *o = (uint8_t *)j->buf + off;
	*o++ = PB_TAG(1, PB_LEN); /* ExportLogsServiceRequest.resource_logs */
	o = pb_vput(o, rl);
	*o++ = PB_TAG(1, PB_LEN); /* ResourceLogs.resource */
	o = pb_vput(o, res->len);
	memcpy(o, res->buf, res->len);
	o += res->len;
	*o++ = PB_TAG(2, PB_LEN); /* ResourceLogs.scope_logs */
	o = pb_vput(o, sl);
	memcpy(o, scope, sizeof(scope)); /* ScopeLogs.scope {name: "box"} */
	*out = (uint8_t *)j->buf + off;
	*len = j->len - off;
	j->len = 0;
	b->n = 0;
	return 0;
}

size_t
otlplog_batch_bytes(const struct otlplog_batch *b)
{
	return b->pb && b->j.len >= PB_HEAD_ROOM ? b->j.len - PB_HEAD_ROOM : b->j.len;
}

/* ---- the entry points ---------------------------------------------------------------- */

int
otlplog_decision(struct otlplog_batch *b, const struct declog_entry *e, uint64_t seq)
{
	if (b->pb)
		return pb_decision(b, e, seq);
	struct jsonl *j = &b->j;
	size_t start = record_begin(b, e->time_ns, !e->permit);
	bool first = true;

	if (e->message) {
		JSONL_LIT(j, ",\"body\":{\"stringValue\":");
		jsonl_cstr(j, e->message, STRICT);
		JSONL_LIT(j, "}");
	}
	JSONL_LIT(j, ",\"attributes\":[");
	ATTR_LIT(j, &first, "box.action", e->action);
	ATTR_LIT(j, &first, "box.resource", e->resource);
	ATTR_LIT(j, &first, "box.verdict", e->permit ? "permit" : "deny");
	ATTR_LIT(j, &first, "box.cause", e->cause);
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
	ATTR_LIT(j, &first, "box.source", e->source);
	ATTR_LIT(j, &first, "box.session", e->session);
	attr_int(j, &first, "box.decision.seq", (int64_t)seq);
	for (size_t i = 0; i < e->n_input && !j->bad; i++) {
		const Box__PolicyField *f = e->input[i];
		if (!f || !f->name) {
			j->bad = true;
			break;
		}
		/* "box.input." NAME, cut at 299 bytes (a name is at most 128: policy_validate.h) */
		char key[300];
		size_t n = strnlen(f->name, sizeof(key) - sizeof("box.input."));
		memcpy(key, "box.input.", sizeof("box.input.") - 1);
		memcpy(key + sizeof("box.input.") - 1, f->name, n);
		key[sizeof("box.input.") - 1 + n] = '\0';
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
	if (b->pb)
		return pb_control(b, time_ns, event, message, keys, values, n_attrs);
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
	if (b->pb)
		return pb_kernel(b, time_ns, keys, values, n_attrs);
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

	if (b->pb)
		return -EINVAL;
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
