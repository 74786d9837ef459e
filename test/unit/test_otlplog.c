/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_otlplog.c — box-policyd's OTLP records (box-policyd/otlplog.c) in both
 * encodings: a file target's OTLP-JSON lines and an otlp target's binary
 * ExportLogsServiceRequest, which box-gateway sends on to the collector as it
 * comes. The binary batch must be the very bytes protobuf-c packs from the
 * OTLP/JSON line of the same records (proto/otlp_json.c's parser: what the
 * gateway made of the JSON before), for many random decisions (strings with
 * quotes, control characters and multi-byte UTF-8; nested sets and records;
 * long and negative integers; no message; a zero time), control and kernel
 * records, batches of one to 600 records, records over 16 KiB and under 128
 * bytes, and a box name too long for the room kept for the heads. A string
 * that is not UTF-8 fails its record in both, leaving the batch's others.
 * And a decision's record carries what docs/box.ini.5.md [telemetry.NAME] says.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "box-policyd/otlplog.h"
#include "otlp_json.h"
#include "rnd_policy.h"
#include "tap.h"


/* A random decision (BIG: one input field of ~20 KiB). */
static void
rnd_entry(struct declog_entry *e, bool big)
{
	static const char *causes[] = { "permitted", "forbidden", "no_match", "error" };
	memset(e, 0, sizeof(*e));
	e->time_ns = rnd(8) ? 1765000000000000000LL + (int64_t)rnd(1000000000) : 0;
	e->action = rnd(8) ? "net:connect" : rnd_string(6);
	e->resource = rnd(2) ? rnd_string(8) : "api.example.com";
	e->permit = rnd(2);
	e->cause = causes[rnd(4)];
	size_t n_rules = rnd(4);
	const char **rules = palloc((n_rules + 1) * sizeof(*rules));
	for (size_t i = 0; i < n_rules; i++)
		rules[i] = rnd(2) ? "no_evil" : rnd_string(4);
	e->rules = rules;
	e->n_rules = n_rules;
	e->message = rnd(3) ? rnd_string(10) : NULL;
	e->source = rnd(2) ? "box-gateway" : "box-shell";
	e->session = rnd(4) ? NULL : "person";
	size_t n_input = rnd(5) + (big ? 1 : 0);
	Box__PolicyField **input = palloc((n_input + 1) * sizeof(*input));
	for (size_t i = 0; i < n_input; i++) {
		Box__PolicyField *f = palloc(sizeof(*f));
		box__policy_field__init(f);
		f->name = rnd(2) ? (char *)"host" : rnd_string(3);
		f->value = rnd_value(0);
		input[i] = f;
	}
	if (big) {
		Box__PolicyValue *v = palloc(sizeof(*v));
		box__policy_value__init(v);
		v->kind_case = BOX__POLICY_VALUE__KIND_STR;
		v->str = palloc(20001);
		memset(v->str, 'b', 20000);
		input[n_input - 1]->value = v;
	}
	e->input = input;
	e->n_input = n_input;
}

/* A random record of any kind into both batches; their results must agree. */
static int
add_both(struct otlplog_batch *json, struct otlplog_batch *pb, uint64_t seq)
{
	int kind = (int)rnd(10), rj, rp;
	if (kind < 7 || kind == 9) {
		struct declog_entry e;
		rnd_entry(&e, kind == 9 && rnd(4) == 0);
		rj = otlplog_decision(json, &e, seq);
		rp = otlplog_decision(pb, &e, seq);
	} else if (kind == 7) {
		const char *keys[] = { "box.rules", "box.mcp.server", "box.error" };
		const char *values[] = { rnd_string(3), rnd(2) ? NULL : rnd_string(5), "x" };
		const char *msg = rnd(2) ? rnd_string(6) : NULL;
		size_t n = rnd(4);
		int64_t t = rnd(2) ? 0 : 17;
		/* (the shortest record: no message, no attributes, a short event) */
		rj = otlplog_control(json, t, "a", msg, keys, values, n);
		rp = otlplog_control(pb, t, "a", msg, keys, values, n);
	} else {
		const char *keys[] = { "box.kernel.syscall", "box.kernel.errno", "box.kernel.sandbox",
				       "box.kernel.count", "box.kernel.first" };
		const char *values[] = { "mount", "EPERM", rnd_string(3), "3", "true" };
		rj = otlplog_kernel(json, 1765000000123456789LL, keys, values, 5);
		rp = otlplog_kernel(pb, 1765000000123456789LL, keys, values, 5);
	}
	CHECK_INT(rp, rj);
	return rj;
}

/* JSON's line through the gateway's old way (parse, pack) must be PB's request, byte for byte. */
static bool
same_request(struct otlplog_batch *json, struct otlplog_batch *pb, const char *box, size_t n)
{
	char *line = NULL;
	uint8_t *req = NULL;
	size_t ll = 0, rl = 0;
	CHECK_INT(json->n, n);
	CHECK_INT(pb->n, n);
	CHECK_INT(otlplog_line(json, box, "0123456789ab", &line, &ll), 0);
	CHECK_INT(otlplog_request(pb, box, "0123456789ab", &req, &rl), 0);
	if (!line || !req || ll < 2)
		return false;
	CHECK(line[ll - 1] == '\n');
	ProtobufCMessage *m = NULL;
	int r = otlp_json_parse(&box__otlp__export_logs_service_request__descriptor, line, ll - 1,
				64u << 20, &m);
	CHECK_INT(r, 0);
	if (r < 0)
		return false;
	size_t want = protobuf_c_message_get_packed_size(m);
	uint8_t *packed = malloc(want ? want : 1);
	if (!packed)
		abort();
	protobuf_c_message_pack(m, packed);
	protobuf_c_message_free_unpacked(m, NULL);
	bool same = want == rl && memcmp(packed, req, rl) == 0;
	if (!same)
		printf("# %zu records: the binary request (%zu bytes) differs from the JSON's packed "
		       "(%zu bytes)\n",
		       n, rl, want);
	/* and it decodes as the gateway decodes it */
	ProtobufCMessage *back = NULL;
	CHECK_INT(otlp_pb_unpack(&box__otlp__export_logs_service_request__descriptor, req, rl,
				 &back),
		  0);
	protobuf_c_message_free_unpacked(back, NULL);
	free(packed);
	CHECK_INT(otlplog_request(pb, box, "0123456789ab", &req, &rl), -ENODATA);
	return same;
}

static void
test_binary_is_the_json_packed(void)
{
	struct otlplog_batch json = { 0 }, pb = { .pb = true };
	static const size_t sizes[] = { 1, 2, 7, 64, 600 };
	int differ = 0;
	for (int round = 0; round < 60; round++) {
		size_t want = sizes[round % 5], n = 0;
		for (size_t i = 0; i < want; i++)
			if (add_both(&json, &pb, (uint64_t)round * 1000 + i) == 0)
				n++;
		if (n && !same_request(&json, &pb, round % 2 ? "demo" : "bé\"x", n))
			differ++;
		pool_free();
	}
	CHECK_INT(differ, 0);
	/* the JSON batch's functions refuse the other encoding and the reverse */
	char *line;
	uint8_t *req;
	size_t len;
	struct declog_entry e;
	rnd_entry(&e, false);
	CHECK_INT(otlplog_decision(&pb, &e, 1), 0);
	CHECK_INT(otlplog_line(&pb, "demo", "0123456789ab", &line, &len), -EINVAL);
	CHECK_INT(otlplog_request(&json, "demo", "0123456789ab", &req, &len), -EINVAL);
	pool_free();
	otlplog_batch_free(&json);
	otlplog_batch_free(&pb);
}

/* A box name longer than the room kept for the heads: the records move up, still the same. */
static void
test_long_box_name(void)
{
	struct otlplog_batch json = { 0 }, pb = { .pb = true };
	char name[1001];
	memset(name, 'n', 1000);
	name[1000] = '\0';
	for (int i = 0; i < 5; i++) {
		struct declog_entry e;
		rnd_entry(&e, false);
		CHECK_INT(otlplog_decision(&json, &e, (uint64_t)i), 0);
		CHECK_INT(otlplog_decision(&pb, &e, (uint64_t)i), 0);
	}
	CHECK(same_request(&json, &pb, name, 5));
	/* and the batch goes on as usual afterwards */
	struct declog_entry e;
	rnd_entry(&e, false);
	CHECK_INT(otlplog_decision(&json, &e, 9), 0);
	CHECK_INT(otlplog_decision(&pb, &e, 9), 0);
	CHECK(same_request(&json, &pb, "demo", 1));
	pool_free();
	otlplog_batch_free(&json);
	otlplog_batch_free(&pb);
}

/* A string that is not UTF-8 drops its record whole, in either encoding; the others stay. */
static void
test_not_utf8(void)
{
	struct otlplog_batch json = { 0 }, pb = { .pb = true };
	struct declog_entry e;
	rnd_entry(&e, false);
	CHECK_INT(otlplog_decision(&json, &e, 1), 0);
	CHECK_INT(otlplog_decision(&pb, &e, 1), 0);
	const char *bad[] = { "\xff", "a\xc3", "\xed\xa0\x80", "\xc0\xaf" };
	for (size_t k = 0; k < 4; k++) {
		for (int where = 0; where < 5; where++) {
			struct declog_entry b;
			rnd_entry(&b, false);
			const char *rules[] = { "ok", bad[k] };
			Box__PolicyValue v = BOX__POLICY_VALUE__INIT;
			Box__PolicyField f = BOX__POLICY_FIELD__INIT;
			Box__PolicyField *in[] = { &f };
			v.kind_case = BOX__POLICY_VALUE__KIND_STR;
			v.str = (char *)"fine";
			f.name = (char *)"host";
			f.value = &v;
			switch (where) {
			case 0: b.message = bad[k]; break;
			case 1: b.resource = bad[k]; break;
			case 2: b.rules = rules; b.n_rules = 2; break;
			case 3: v.str = (char *)bad[k]; b.input = in; b.n_input = 1; break;
			default: f.name = (char *)bad[k]; b.input = in; b.n_input = 1; break;
			}
			CHECK_INT(otlplog_decision(&json, &b, 2), -EINVAL);
			CHECK_INT(otlplog_decision(&pb, &b, 2), -EINVAL);
		}
		const char *keys[] = { "box.x" };
		const char *values[] = { bad[k] };
		CHECK_INT(otlplog_control(&json, 5, "policy.loaded", NULL, keys, values, 1), -EINVAL);
		CHECK_INT(otlplog_control(&pb, 5, "policy.loaded", NULL, keys, values, 1), -EINVAL);
	}
	CHECK(same_request(&json, &pb, "demo", 1));
	/* a box name that is not UTF-8 fails the whole request, and empties the batch */
	CHECK_INT(otlplog_decision(&pb, &e, 3), 0);
	uint8_t *req;
	size_t len;
	CHECK_INT(otlplog_request(&pb, "\xff", "0123456789ab", &req, &len), -EINVAL);
	CHECK_INT(pb.n, 0);
	CHECK_INT(otlplog_batch_bytes(&pb), 0);
	pool_free();
	otlplog_batch_free(&json);
	otlplog_batch_free(&pb);
}

static const Box__Otlp__AnyValue *
attr(const Box__Otlp__LogRecord *r, const char *key)
{
	for (size_t i = 0; i < r->n_attributes; i++)
		if (strcmp(r->attributes[i]->key, key) == 0)
			return r->attributes[i]->value;
	return NULL;
}

static const char *
attr_str(const Box__Otlp__LogRecord *r, const char *key)
{
	const Box__Otlp__AnyValue *v = attr(r, key);
	return v && v->value_case == BOX__OTLP__ANY_VALUE__VALUE_STRING_VALUE ? v->string_value
									       : NULL;
}

/* docs/box.ini.5.md [telemetry.NAME]: what a decision's record holds. */
static void
test_decision_record(void)
{
	struct otlplog_batch pb = { .pb = true };
	const char *rules[] = { "no_evil", "policy_1" };
	Box__PolicyValue host = BOX__POLICY_VALUE__INIT, port = BOX__POLICY_VALUE__INIT;
	Box__PolicyField fh = BOX__POLICY_FIELD__INIT, fp = BOX__POLICY_FIELD__INIT;
	Box__PolicyField *in[] = { &fh, &fp };
	host.kind_case = BOX__POLICY_VALUE__KIND_STR;
	host.str = (char *)"evil.example.com";
	port.kind_case = BOX__POLICY_VALUE__KIND_INTEGER;
	port.integer = 443;
	fh.name = (char *)"host";
	fh.value = &host;
	fp.name = (char *)"port";
	fp.value = &port;
	struct declog_entry e = { .time_ns = 1765000000123456789LL,
				  .action = "net:connect",
				  .resource = "evil.example.com:443",
				  .permit = false,
				  .cause = "forbidden",
				  .rules = rules,
				  .n_rules = 2,
				  .message = "no evil",
				  .source = "box-gateway",
				  .input = in,
				  .n_input = 2 };
	CHECK_INT(otlplog_decision(&pb, &e, 42), 0);
	uint8_t *req;
	size_t len;
	CHECK_INT(otlplog_request(&pb, "demo", "0123456789ab", &req, &len), 0);
	ProtobufCMessage *m = NULL;
	CHECK_INT(otlp_pb_unpack(&box__otlp__export_logs_service_request__descriptor, req, len, &m),
		  0);
	const Box__Otlp__ExportLogsServiceRequest *q = (const Box__Otlp__ExportLogsServiceRequest *)m;
	if (!q || q->n_resource_logs != 1 || q->resource_logs[0]->n_scope_logs != 1 ||
	    q->resource_logs[0]->scope_logs[0]->n_log_records != 1) {
		CHECK(!"one resource, one scope, one record");
		protobuf_c_message_free_unpacked(m, NULL);
		otlplog_batch_free(&pb);
		return;
	}
	const Box__Otlp__ResourceLogs *rl = q->resource_logs[0];
	const Box__Otlp__Resource *res = rl->resource;
	CHECK(res && res->n_attributes == 3);
	if (res && res->n_attributes == 3) {
		CHECK_STR(res->attributes[0]->key, "box.name");
		CHECK_STR(res->attributes[0]->value->string_value, "demo");
		CHECK_STR(res->attributes[1]->key, "box.id");
		CHECK_STR(res->attributes[1]->value->string_value, "0123456789ab");
		CHECK_STR(res->attributes[2]->key, "service.name");
	}
	CHECK_STR(rl->scope_logs[0]->scope->name, "box");
	const Box__Otlp__LogRecord *r = rl->scope_logs[0]->log_records[0];
	CHECK_STR(r->event_name, "box.policy.decision");
	CHECK(r->time_unix_nano == 1765000000123456789ULL &&
	      r->observed_time_unix_nano == 1765000000123456789ULL);
	CHECK_INT(r->severity_number, BOX__OTLP__SEVERITY_NUMBER__SEVERITY_NUMBER_WARN);
	CHECK_STR(r->severity_text, "WARN");
	CHECK(r->body && r->body->value_case == BOX__OTLP__ANY_VALUE__VALUE_STRING_VALUE);
	if (r->body)
		CHECK_STR(r->body->string_value, "no evil");
	CHECK_STR(attr_str(r, "box.action"), "net:connect");
	CHECK_STR(attr_str(r, "box.resource"), "evil.example.com:443");
	CHECK_STR(attr_str(r, "box.verdict"), "deny");
	CHECK_STR(attr_str(r, "box.cause"), "forbidden");
	CHECK_STR(attr_str(r, "box.rules"), "no_evil,policy_1");
	CHECK_STR(attr_str(r, "box.source"), "box-gateway");
	CHECK_STR(attr_str(r, "box.input.host"), "evil.example.com");
	const Box__Otlp__AnyValue *v = attr(r, "box.input.port");
	CHECK(v && v->value_case == BOX__OTLP__ANY_VALUE__VALUE_INT_VALUE && v->int_value == 443);
	v = attr(r, "box.decision.seq");
	CHECK(v && v->value_case == BOX__OTLP__ANY_VALUE__VALUE_INT_VALUE && v->int_value == 42);
	CHECK(attr(r, "box.session") == NULL);
	CHECK_INT(r->n_attributes, 9);
	protobuf_c_message_free_unpacked(m, NULL);
	otlplog_batch_free(&pb);
}

int
main(void)
{
	rnd_seed(0x2545f4914f6cdd1dULL);
	RUN(test_binary_is_the_json_packed);
	RUN(test_long_box_name);
	RUN(test_not_utf8);
	RUN(test_decision_record);
	return tap_done();
}
