/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_otlp_json.c — proto/otlp_json.c and proto/otlp_tag.c: OTLP/JSON as an
 * OpenTelemetry SDK sends it parses into proto/otlp.proto's messages and
 * prints back the same; ids as hex, 64-bit integers as strings, snake_case
 * keys accepted, unknown keys ignored; malformed bodies, values out of range,
 * bad UTF-8, duplicate keys, two oneof members, nesting past the cap and an
 * allocation past the budget are refused; the binary encoding round-trips
 * through protobuf-c with unknown fields kept, and its nesting is checked
 * before unpacking; re-tagging drops the agent's box.* and adds box's own.
 * Trusts: nothing; test code.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "otlp_json.h"
#include "tap.h"

#define BUDGET (1u << 20)

/* A span as the OpenTelemetry JS SDK's OTLP/JSON exporter writes it. */
static const char span_json[] =
	"{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
	"\"value\":{\"stringValue\":\"agent\"}},{\"key\":\"box.name\",\"value\":{\"stringValue\":"
	"\"forged\"}}],\"droppedAttributesCount\":0},\"scopeSpans\":[{\"scope\":{\"name\":\"t\","
	"\"version\":\"1\"},\"spans\":[{\"traceId\":\"0af7651916cd43dd8448eb211c80319c\","
	"\"spanId\":\"b7ad6b7169203331\",\"name\":\"tool-call\",\"kind\":1,"
	"\"startTimeUnixNano\":\"1700000000000000000\",\"endTimeUnixNano\":1700000000500000000,"
	"\"attributes\":[{\"key\":\"n\",\"value\":{\"intValue\":\"42\"}},{\"key\":\"d\","
	"\"value\":{\"doubleValue\":1.5}},{\"key\":\"b\",\"value\":{\"boolValue\":true}}],"
	"\"status\":{\"code\":2,\"message\":\"caf\\u00e9\"},\"unknownNewField\":[1,{\"x\":null}]}]}]}]}";

static ProtobufCMessage *
parse(const ProtobufCMessageDescriptor *d, const char *s, int *r)
{
	ProtobufCMessage *m = NULL;
	*r = otlp_json_parse(d, s, strlen(s), BUDGET, &m);
	return m;
}

static void
test_span_parses(void)
{
	int r;
	ProtobufCMessage *m = parse(&box__otlp__export_trace_service_request__descriptor, span_json, &r);
	CHECK_INT(r, 0);
	if (!m)
		return;
	Box__Otlp__ExportTraceServiceRequest *q = (Box__Otlp__ExportTraceServiceRequest *)m;
	CHECK_INT(q->n_resource_spans, 1);
	Box__Otlp__Span *s = q->resource_spans[0]->scope_spans[0]->spans[0];
	CHECK_STR(s->name, "tool-call");
	CHECK_INT(s->trace_id.len, 16);
	CHECK_INT(s->trace_id.data[0], 0x0a);
	CHECK_INT(s->span_id.len, 8);
	CHECK(s->start_time_unix_nano == 1700000000000000000ull);
	CHECK(s->end_time_unix_nano == 1700000000500000000ull);
	CHECK_INT(s->kind, 1);
	CHECK_INT(s->n_attributes, 3);
	CHECK(s->attributes[0]->value->value_case == BOX__OTLP__ANY_VALUE__VALUE_INT_VALUE);
	CHECK(s->attributes[0]->value->int_value == 42);
	CHECK(s->attributes[1]->value->double_value == 1.5);
	CHECK(s->attributes[2]->value->bool_value);
	CHECK_STR(s->status->message, "caf\xc3\xa9");
	protobuf_c_message_free_unpacked(m, NULL);
}

/* print(parse(x)) is a fixed point, and its ids are hex, its 64-bit numbers strings. */
static void
test_print_round_trip(void)
{
	int r;
	ProtobufCMessage *m = parse(&box__otlp__export_trace_service_request__descriptor, span_json, &r);
	char *a = NULL, *b = NULL;
	size_t al = 0, bl = 0;

	CHECK_INT(r, 0);
	if (!m)
		return;
	CHECK_INT(otlp_json_print(m, 1 << 20, &a, &al), 0);
	protobuf_c_message_free_unpacked(m, NULL);
	if (!a)
		return;
	CHECK(strstr(a, "\"traceId\":\"0af7651916cd43dd8448eb211c80319c\"") != NULL);
	CHECK(strstr(a, "\"endTimeUnixNano\":\"1700000000500000000\"") != NULL);
	CHECK(strstr(a, "\"intValue\":\"42\"") != NULL);
	CHECK(strstr(a, "\"message\":\"caf\xc3\xa9\"") != NULL);
	CHECK(strstr(a, "unknownNewField") == NULL);
	CHECK(strstr(a, "droppedAttributesCount") == NULL); /* a default is left out */
	m = parse(&box__otlp__export_trace_service_request__descriptor, a, &r);
	CHECK_INT(r, 0);
	if (m) {
		CHECK_INT(otlp_json_print(m, 1 << 20, &b, &bl), 0);
		CHECK(b && al == bl && memcmp(a, b, al) == 0);
		protobuf_c_message_free_unpacked(m, NULL);
	}
	/* the printer's cap */
	char *c = NULL;
	size_t cl;
	Box__Otlp__ExportTraceServiceRequest empty = BOX__OTLP__EXPORT_TRACE_SERVICE_REQUEST__INIT;
	CHECK_INT(otlp_json_print(&empty.base, 1, &c, &cl), -E2BIG);
	free(a);
	free(b);
}

static void
test_snake_case_and_enum_names(void)
{
	int r;
	ProtobufCMessage *m = parse(&box__otlp__export_logs_service_request__descriptor,
				    "{\"resource_logs\":[{\"scope_logs\":[{\"log_records\":[{"
				    "\"severity_number\":\"SEVERITY_NUMBER_WARN\",\"body\":{"
				    "\"stringValue\":\"x\"},\"event_name\":\"e\"}]}]}]}",
				    &r);
	CHECK_INT(r, 0);
	if (!m)
		return;
	Box__Otlp__LogRecord *l = ((Box__Otlp__ExportLogsServiceRequest *)m)
					  ->resource_logs[0]->scope_logs[0]->log_records[0];
	CHECK_INT(l->severity_number, 13);
	CHECK_STR(l->event_name, "e");
	protobuf_c_message_free_unpacked(m, NULL);
}

static void
test_refusals(void)
{
	static const struct {
		const char *json;
		int r;
	} cases[] = {
		{ "", -EBADMSG },
		{ "[]", -EBADMSG },
		{ "{\"resourceLogs\":[}", -EBADMSG },
		{ "{\"resourceLogs\":[]} x", -EBADMSG },
		{ "{\"resourceLogs\":[],\"resourceLogs\":[]}", -EBADMSG },
		{ "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"timeUnixNano\":\"-1\"}]}]}]}",
		  -EBADMSG },
		{ "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"flags\":4294967296}]}]}]}",
		  -EBADMSG },
		{ "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"flags\":1.5}]}]}]}",
		  -EBADMSG },
		{ "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"traceId\":\"xyz\"}]}]}]}",
		  -EBADMSG },
		{ "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"eventName\":\"a\\u0000\"}]}]}]}",
		  -EBADMSG },
		{ "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"eventName\":\"\\ud800\"}]}]}]}",
		  -EBADMSG },
		{ "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"eventName\":\"\xff\"}]}]}]}",
		  -EBADMSG },
		{ "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"body\":{\"stringValue\":\"a\","
		  "\"intValue\":\"1\"}}]}]}]}",
		  -EBADMSG },
		{ "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"eventName\":01}]}]}]}",
		  -EBADMSG },
		{ "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"severityNumber\":true}]}]}]}",
		  -EBADMSG },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r;
		ProtobufCMessage *m =
			parse(&box__otlp__export_logs_service_request__descriptor, cases[i].json, &r);
		if (r != cases[i].r)
			printf("# case %zu: %d\n", i, r);
		CHECK_INT(r, cases[i].r);
		CHECK(m == NULL);
	}
}

/* Nesting past OTLP_NEST_MAX (AnyValue in AnyValue), and an unknown key's deep value. */
static void
test_nesting_cap(void)
{
	char *s = malloc(64 * 200 + 256);
	size_t n = 0;
	int r;
	ProtobufCMessage *m = NULL;

	if (!s)
		return;
	n += (size_t)sprintf(s + n, "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"body\":");
	for (int i = 0; i < 100; i++)
		n += (size_t)sprintf(s + n, "{\"arrayValue\":{\"values\":[");
	n += (size_t)sprintf(s + n, "{}");
	for (int i = 0; i < 100; i++)
		n += (size_t)sprintf(s + n, "]}}");
	n += (size_t)sprintf(s + n, "}]}]}]}");
	CHECK_INT(otlp_json_parse(&box__otlp__export_logs_service_request__descriptor, s, n, BUDGET,
				  &m),
		  -E2BIG);
	n = (size_t)sprintf(s, "{\"x\":");
	for (int i = 0; i < 100; i++)
		s[n++] = '[';
	for (int i = 0; i < 100; i++)
		s[n++] = ']';
	s[n++] = '}';
	CHECK_INT(otlp_json_parse(&box__otlp__export_logs_service_request__descriptor, s, n, BUDGET,
				  &m),
		  -E2BIG);
	/* 20 levels are fine */
	n = (size_t)sprintf(s, "{\"x\":");
	for (int i = 0; i < 20; i++)
		s[n++] = '[';
	for (int i = 0; i < 20; i++)
		s[n++] = ']';
	s[n++] = '}';
	r = otlp_json_parse(&box__otlp__export_logs_service_request__descriptor, s, n, BUDGET, &m);
	CHECK_INT(r, 0);
	if (r == 0)
		protobuf_c_message_free_unpacked(m, NULL);
	free(s);
}

/* Many small objects: the allocation budget ends the parse, not memory. */
static void
test_budget(void)
{
	size_t k = 20000, n = 0;
	char *s = malloc(k * 40 + 128);
	ProtobufCMessage *m = NULL;

	if (!s)
		return;
	n += (size_t)sprintf(s + n, "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[");
	for (size_t i = 0; i < k; i++)
		n += (size_t)sprintf(s + n, "%s{}", i ? "," : "");
	n += (size_t)sprintf(s + n, "]}]}]}");
	CHECK_INT(otlp_json_parse(&box__otlp__export_logs_service_request__descriptor, s, n, 64 << 10,
				  &m),
		  -E2BIG);
	int r = otlp_json_parse(&box__otlp__export_logs_service_request__descriptor, s, n, 64 << 20,
				&m);
	CHECK_INT(r, 0);
	if (r == 0) {
		CHECK_INT(((Box__Otlp__ExportLogsServiceRequest *)m)
				  ->resource_logs[0]->scope_logs[0]->n_log_records,
			  k);
		protobuf_c_message_free_unpacked(m, NULL);
	}
	free(s);
}

/* Binary: packed, checked, unpacked, packed again — unknown fields kept. */
static void
test_binary(void)
{
	int r;
	ProtobufCMessage *m = parse(&box__otlp__export_trace_service_request__descriptor, span_json, &r);
	if (!m)
		return;
	size_t len = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(len + 16);
	if (!buf)
		return;
	protobuf_c_message_pack(m, buf);
	protobuf_c_message_free_unpacked(m, NULL);
	/* an unknown field (number 99, varint 7) appended to the request */
	buf[len] = (uint8_t)(99 << 3 & 0xff) | 0x80;
	buf[len + 1] = 99 >> 4;
	buf[len + 2] = 7;
	size_t l2 = len + 3;
	CHECK_INT(otlp_pb_check(&box__otlp__export_trace_service_request__descriptor, buf, l2), 0);
	m = protobuf_c_message_unpack(&box__otlp__export_trace_service_request__descriptor, NULL, l2,
				      buf);
	CHECK(m != NULL);
	if (m) {
		CHECK_INT(m->n_unknown_fields, 1);
		CHECK_INT(protobuf_c_message_get_packed_size(m), l2);
		protobuf_c_message_free_unpacked(m, NULL);
	}
	/* a truncated length */
	CHECK_INT(otlp_pb_check(&box__otlp__export_trace_service_request__descriptor, buf, len - 1),
		  -EBADMSG);
	free(buf);

	/* 100 nested AnyValue.array_value.values: refused before protobuf-c recurses */
	/* built inside out: AnyValue = 0x2a len ArrayValue; ArrayValue = 0x0a len AnyValue */
	uint8_t tmp[1024];
	size_t tl = 0;
	for (int i = 0; i < 100 && tl + 4 < sizeof(tmp) / 2; i++) {
		/* wrap tmp in ArrayValue(values=1) then AnyValue(array_value=5) */
		memmove(tmp + 4, tmp, tl);
		tmp[0] = 0x2a;
		tmp[1] = (uint8_t)(tl + 2);
		tmp[2] = 0x0a;
		tmp[3] = (uint8_t)tl;
		tl += 4;
		if (tl > 120)
			break;
	}
	/* 31 levels of each (one-byte lengths): within the cap */
	CHECK_INT(otlp_pb_check(&box__otlp__any_value__descriptor, tmp, tl), 0);
	/* 70 levels of each (two-byte lengths past 127): over it */
	uint8_t big[4096];
	size_t bl = 0;
	for (int i = 0; i < 70; i++) {
		uint8_t h[8];
		size_t hl = 0;
		size_t inner = bl;
		/* ArrayValue.values (field 1, type 2) around the AnyValue so far */
		h[hl++] = 0x0a;
		if (inner < 128)
			h[hl++] = (uint8_t)inner;
		else {
			h[hl++] = (uint8_t)(inner | 0x80);
			h[hl++] = (uint8_t)(inner >> 7);
		}
		memmove(big + hl, big, bl);
		memcpy(big, h, hl);
		bl += hl;
		/* AnyValue.array_value (field 5, type 2) around it */
		hl = 0;
		inner = bl;
		h[hl++] = 0x2a;
		if (inner < 128)
			h[hl++] = (uint8_t)inner;
		else {
			h[hl++] = (uint8_t)(inner | 0x80);
			h[hl++] = (uint8_t)(inner >> 7);
		}
		memmove(big + hl, big, bl);
		memcpy(big, h, hl);
		bl += hl;
	}
	CHECK_INT(otlp_pb_check(&box__otlp__any_value__descriptor, big, bl), -E2BIG);
	m = NULL;
	CHECK_INT(otlp_pb_unpack(&box__otlp__any_value__descriptor, big, bl, &m), -E2BIG);
	CHECK(m == NULL);

	/* 100000 empty ResourceLogs (2 bytes each): the decoder's memory budget ends it */
	size_t k = 100000;
	uint8_t *many = malloc(2 * k);
	if (!many)
		return;
	for (size_t i = 0; i < k; i++) {
		many[2 * i] = 0x0a;
		many[2 * i + 1] = 0;
	}
	CHECK_INT(otlp_pb_unpack(&box__otlp__export_logs_service_request__descriptor, many, 2 * k,
				 &m),
		  -E2BIG);
	/* 100 of them decode */
	CHECK_INT(otlp_pb_unpack(&box__otlp__export_logs_service_request__descriptor, many, 200, &m),
		  0);
	if (m) {
		CHECK_INT(((Box__Otlp__ExportLogsServiceRequest *)m)->n_resource_logs, 100);
		protobuf_c_message_free_unpacked(m, NULL);
	}
	free(many);
}

static const char *
attr(const Box__Otlp__Resource *res, const char *key)
{
	for (size_t i = 0; i < res->n_attributes; i++)
		if (strcmp(res->attributes[i]->key, key) == 0)
			return res->attributes[i]->value->string_value;
	return NULL;
}

static void
test_tag_agent(void)
{
	int r;
	ProtobufCMessage *m = parse(&box__otlp__export_trace_service_request__descriptor, span_json, &r);
	if (!m)
		return;
	CHECK_INT(otlp_tag_agent(m, "demo", "0123456789ab"), 0);
	const Box__Otlp__Resource *res =
		((Box__Otlp__ExportTraceServiceRequest *)m)->resource_spans[0]->resource;
	CHECK_INT(res->n_attributes, 4);
	CHECK_STR(attr(res, "service.name"), "agent");
	CHECK_STR(attr(res, "box.name"), "demo"); /* the forged one is gone */
	CHECK_STR(attr(res, "box.id"), "0123456789ab");
	CHECK_STR(attr(res, "box.source"), "agent");
	protobuf_c_message_free_unpacked(m, NULL);
	/* a resource the agent left out is made */
	m = parse(&box__otlp__export_metrics_service_request__descriptor,
		  "{\"resourceMetrics\":[{\"scopeMetrics\":[]}]}", &r);
	CHECK_INT(r, 0);
	if (!m)
		return;
	CHECK_INT(otlp_tag_agent(m, "demo", "0123456789ab"), 0);
	res = ((Box__Otlp__ExportMetricsServiceRequest *)m)->resource_metrics[0]->resource;
	CHECK(res && res->n_attributes == 3);
	CHECK_INT(otlp_tag_agent(&res->attributes[0]->base, "x", "y"), -EINVAL);
	protobuf_c_message_free_unpacked(m, NULL);
}

int
main(void)
{
	RUN(test_span_parses);
	RUN(test_print_round_trip);
	RUN(test_snake_case_and_enum_names);
	RUN(test_refusals);
	RUN(test_nesting_cap);
	RUN(test_budget);
	RUN(test_binary);
	RUN(test_tag_agent);
	return tap_done();
}
