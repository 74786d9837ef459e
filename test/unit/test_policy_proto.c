/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_policy_proto.c — proto/policy.proto through box_ipc_decode (the one
 * decode-and-validate wrapper) and proto/policy_validate.c: round trips of
 * every box-policyd message, and each refusal of the validators.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "ipc.h"
#include "proto/policy_validate.h"
#include "proto/proto_policy.h"
#include "tap.h"

/* Every test allocation, freed at the end (the sanitizer build checks leaks). */
static void *allocs[1024];
static size_t n_allocs;

static void *
zalloc(size_t n)
{
	void *p = calloc(1, n);
	if (!p || n_allocs == ELEMENTSOF(allocs))
		abort();
	allocs[n_allocs++] = p;
	return p;
}

/* Pack M and run it through box_ipc_decode as TYPE; returns its result. */
static int
decode(uint32_t type, const ProtobufCMessage *m)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(n + 1);
	ProtobufCMessage *out = NULL;
	protobuf_c_message_pack(m, buf);
	int r = box_ipc_decode(&box_proto_policy, type, buf, n, &out);
	box_msg_free(out);
	free(buf);
	return r;
}

static Box__PolicyValue *
vstr(const char *s)
{
	Box__PolicyValue *v = zalloc(sizeof(*v));
	box__policy_value__init(v);
	v->kind_case = BOX__POLICY_VALUE__KIND_STR;
	v->str = (char *)s;
	return v;
}

static Box__PolicyField *
fld(const char *name, Box__PolicyValue *v)
{
	Box__PolicyField *f = zalloc(sizeof(*f));
	box__policy_field__init(f);
	f->name = (char *)name;
	f->value = v;
	return f;
}

static void
test_decide_request(void)
{
	Box__DecideRequest m = BOX__DECIDE_REQUEST__INIT;
	Box__PolicyField *in[3];
	in[0] = fld("path", vstr("~/a"));
	in[1] = fld("operation", vstr("read_content"));
	m.action = "fs:read";
	m.input = in;
	m.n_input = 2;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &m.base), 0);
	m.action = "gh_mcp::Action::\"create issue\"";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &m.base), 0);
	static const char *bad_actions[] = { "fs", "FS:read", "fs:read:x", "a::Action::\"t",
					     "a::Action::\"t\"x\"", "::Action::\"t\"", "fs:\x01" };
	for (size_t i = 0; i < ELEMENTSOF(bad_actions); i++) {
		m.action = (char *)bad_actions[i];
		CHECK_INT(decode(BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &m.base), -EINVAL);
	}
	m.action = "fs:read";
	/* Duplicate field names. */
	in[2] = fld("path", vstr("~/b"));
	m.n_input = 3;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &m.base), -EINVAL);
	/* Invalid UTF-8 in a value; an empty name. */
	in[2] = fld("x", vstr("\xc3\x28"));
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &m.base), -EINVAL);
	in[2] = fld("", vstr("y"));
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &m.base), -EINVAL);
	/* Field names: no control character or DEL, valid UTF-8, at most the cap. */
	static const char *bad_names[] = { "a\x01", "a\x7f", "na\nme", "\xc3\x28x", "x\xe2\x82" };
	for (size_t i = 0; i < ELEMENTSOF(bad_names); i++) {
		in[2] = fld(bad_names[i], vstr("y"));
		CHECK_INT(decode(BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &m.base), -EINVAL);
	}
	in[2] = fld("n\xc3\xa9", vstr("y"));
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &m.base), 0);
	char longname[BOX_POLICY_FIELD_NAME_MAX + 2];
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	in[2] = fld(longname, vstr("y"));
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &m.base), -EINVAL);
	longname[BOX_POLICY_FIELD_NAME_MAX] = '\0';
	in[2] = fld(longname, vstr("y"));
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &m.base), 0);
	/* A value with no kind. */
	Box__PolicyValue none = BOX__POLICY_VALUE__INIT;
	in[2] = fld("x", &none);
	CHECK(decode(BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &m.base) < 0);
	/* Nesting deeper than the cap. */
	Box__PolicyValue *v = vstr("leaf");
	for (int d = 0; d < BOX_POLICY_DEPTH_MAX + 2; d++) {
		Box__PolicyValue *s = zalloc(sizeof(*s));
		Box__PolicyValueSet *set = zalloc(sizeof(*set));
		box__policy_value__init(s);
		box__policy_value_set__init(set);
		set->elems = zalloc(sizeof(*set->elems));
		set->elems[0] = v;
		set->n_elems = 1;
		s->kind_case = BOX__POLICY_VALUE__KIND_SET;
		s->set = set;
		v = s;
	}
	in[2] = fld("deep", v);
	/* The IPC layer's own depth cap may refuse it first; the validator does too. */
	CHECK(decode(BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &m.base) < 0);
	CHECK_INT(box_validate_policy_msg(&m.base), -E2BIG);
	/* The UTF-8 checker itself. */
	CHECK(box_valid_utf8("h\xc3\xa9llo \xe2\x80\xae \xf0\x9f\x98\x80", 15));
	CHECK(!box_valid_utf8("\xc0\xaf", 2));         /* overlong */
	CHECK(!box_valid_utf8("\xed\xa0\x80", 3));     /* surrogate */
	CHECK(!box_valid_utf8("\xf4\x90\x80\x80", 4)); /* > U+10FFFF */
	CHECK(!box_valid_utf8("\xe2\x80", 2));         /* cut short */
	/*
	 * The word-at-a-time ASCII path: a NUL, a stray continuation byte or a
	 * cut sequence at every offset of a 24-byte string, and valid text
	 * around each.
	 */
	for (size_t at = 0; at < 24; at++) {
		char buf[32];
		memset(buf, 'a', sizeof(buf));
		CHECK(box_valid_utf8(buf, 24));
		buf[at] = '\0';
		CHECK(!box_valid_utf8(buf, 24));
		buf[at] = (char)0x80;
		CHECK(!box_valid_utf8(buf, 24));
		buf[at] = (char)0xe2;
		CHECK_INT(box_valid_utf8(buf, 24), false);
		if (at + 2 < 24) {
			buf[at + 1] = (char)0x80;
			buf[at + 2] = (char)0xae; /* U+202E, three bytes */
			CHECK(box_valid_utf8(buf, 24));
		}
	}
}

static void
test_decide_reply(void)
{
	Box__DecideReply m = BOX__DECIDE_REPLY__INIT;
	char *rules[] = { "no_rm" };
	m.verdict = BOX__DECISION_VERDICT__VERDICT_DENY;
	m.cause = BOX__DECISION_CAUSE__CAUSE_FORBIDDEN;
	m.rules = rules;
	m.n_rules = 1;
	m.message = "policy denied this operation on 'rm' [policy: no_rm].";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_DECIDE_REPLY, &m.base), 0);
	/* A permit is only ever cause permitted, and the other way round. */
	m.verdict = BOX__DECISION_VERDICT__VERDICT_PERMIT;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_DECIDE_REPLY, &m.base), -EINVAL);
	m.cause = BOX__DECISION_CAUSE__CAUSE_PERMITTED;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_DECIDE_REPLY, &m.base), 0);
	m.verdict = BOX__DECISION_VERDICT__VERDICT_DENY;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_DECIDE_REPLY, &m.base), -EINVAL);
	/* A per-tool refinement no rule matched permits (docs/box-policy.5.md). */
	m.cause = BOX__DECISION_CAUSE__CAUSE_NOT_REFINED;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_DECIDE_REPLY, &m.base), -EINVAL);
	m.verdict = BOX__DECISION_VERDICT__VERDICT_PERMIT;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_DECIDE_REPLY, &m.base), 0);
	m.verdict = BOX__DECISION_VERDICT__VERDICT_DENY;
	m.cause = BOX__DECISION_CAUSE__CAUSE_ERROR;
	rules[0] = "";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_DECIDE_REPLY, &m.base), -EINVAL);
}

/* A batch naming a generation (history_free, >= 1); a stale reply carries no verdict. */
static void
test_decide_batch_history_free(void)
{
	Box__DecideRequest d = BOX__DECIDE_REQUEST__INIT, *dp = &d;
	d.action = "fs:read";
	Box__DecideBatchRequest b = BOX__DECIDE_BATCH_REQUEST__INIT;
	b.requests = &dp;
	b.n_requests = 1;
	b.has_history_free = true;
	b.history_free = 1;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_DECIDE_BATCH_REQUEST, &b.base), 0);
	b.history_free = 0;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_DECIDE_BATCH_REQUEST, &b.base), -EINVAL);

	Box__DecideReply r = BOX__DECIDE_REPLY__INIT, *rp = &r;
	r.verdict = BOX__DECISION_VERDICT__VERDICT_DENY;
	r.cause = BOX__DECISION_CAUSE__CAUSE_FORBIDDEN;
	r.message = "denied";
	Box__DecideBatchReply br = BOX__DECIDE_BATCH_REPLY__INIT;
	br.has_stale = br.stale = true;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_DECIDE_BATCH_REPLY, &br.base), 0);
	br.replies = &rp;
	br.n_replies = 1;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_DECIDE_BATCH_REPLY, &br.base), -EINVAL);
	br.stale = false;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_DECIDE_BATCH_REPLY, &br.base), 0);
}

static Box__PolicyTool *
tool(const char *name, Box__PolicyToolField **fields, size_t n)
{
	Box__PolicyTool *t = zalloc(sizeof(*t));
	box__policy_tool__init(t);
	t->name = (char *)name;
	t->fields = fields;
	t->n_fields = n;
	return t;
}

static Box__PolicyToolField *
tfield(const char *name, const char *type, bool optional)
{
	Box__PolicyToolField *f = zalloc(sizeof(*f));
	box__policy_tool_field__init(f);
	f->name = (char *)name;
	f->type = (char *)type;
	f->optional = optional;
	return f;
}

static void
test_tool_schema(void)
{
	Box__PolicyToolSchema m = BOX__POLICY_TOOL_SCHEMA__INIT;
	Box__PolicyToolField *f[2] = { tfield("a", "Long", false),
				       tfield("opts", "{depth: Long, tags?: Set<String>}", true) };
	Box__PolicyTool *t[2] = { tool("add", f, 2), tool("sub\u00e9", NULL, 0) };
	m.server = "docs";
	m.ns = "docs";
	m.tools = t;
	m.n_tools = 2;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &m.base), 0);
	/* The namespace is normalized: no '-', not "Box". */
	m.ns = "my-docs";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &m.base), -EINVAL);
	m.ns = "Box";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &m.base), -EINVAL);
	m.ns = "docs";
	m.server = "bad name";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &m.base), -EINVAL);
	m.server = "docs";
	/* Tool names: unique, 1..256 bytes of UTF-8. */
	t[1]->name = "add";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &m.base), -EINVAL);
	t[1]->name = "";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &m.base), -EINVAL);
	char longname[258];
	memset(longname, 'x', 257);
	longname[257] = '\0';
	t[1]->name = longname;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &m.base), -EINVAL);
	longname[256] = '\0';
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &m.base), 0);
	t[1]->name = "\xff\xfe";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &m.base), -EINVAL);
	t[1]->name = "sub";
	/* Fields: identifiers, unique; a type expression of 1..4096 bytes. */
	f[1]->name = "a";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &m.base), -EINVAL);
	f[1]->name = "1opts";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &m.base), -EINVAL);
	f[1]->name = "o-pts";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &m.base), -EINVAL);
	f[1]->name = "opts";
	char *big = zalloc(4098);
	memset(big, 'L', 4097);
	f[1]->type = big;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &m.base), -E2BIG);
	f[1]->type = "";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &m.base), -E2BIG);
	f[1]->type = "Long";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &m.base), 0);
	/* 257 fields of one tool; 4097 tools. */
	Box__PolicyToolField **many = zalloc(257 * sizeof(*many));
	char (*names)[8] = zalloc(4097 * 8);
	for (size_t i = 0; i < 257; i++) {
		snprintf(names[i], 8, "f%zu", i);
		many[i] = tfield(names[i], "Long", false);
	}
	t[1]->fields = many;
	t[1]->n_fields = 256;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &m.base), 0);
	t[1]->n_fields = 257;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &m.base), -E2BIG);
	t[1]->n_fields = 0;
	Box__PolicyTool **tools = zalloc(4097 * sizeof(*tools));
	Box__PolicyTool *tarr = zalloc(4097 * sizeof(*tarr));
	for (size_t i = 0; i < 4097; i++) {
		snprintf(names[i], 8, "t%zu", i);
		box__policy_tool__init(&tarr[i]);
		tarr[i].name = names[i];
		tools[i] = &tarr[i];
	}
	m.tools = tools;
	m.n_tools = 4096;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &m.base), 0);
	m.n_tools = 4097;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &m.base), -E2BIG);
	/* A duplicate far apart in a long list. */
	tarr[4095].name = names[3];
	m.n_tools = 4096;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &m.base), -EINVAL);

	Box__PolicyToolSchemaReply r = BOX__POLICY_TOOL_SCHEMA_REPLY__INIT;
	r.ok = 1;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY, &r.base), 0);
	r.ok = 0; /* a refusal names the rule */
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY, &r.base), -EINVAL);
	r.error = "rule big (line 3): ...";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY, &r.base), 0);
	r.ok = 1; /* and an acceptance carries none */
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY, &r.base), -EINVAL);
	r.error = NULL;
	char *w[65];
	for (size_t i = 0; i < 65; i++)
		w[i] = "a warning";
	r.warnings = w;
	r.n_warnings = 64;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY, &r.base), 0);
	r.n_warnings = 65;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY, &r.base), -E2BIG);
	r.n_warnings = 1;
	w[0] = "two\nlines";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY, &r.base), -EINVAL);
}

static void
test_probe(void)
{
	Box__PolicyProbeRequest m = BOX__POLICY_PROBE_REQUEST__INIT;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_PROBE_REQUEST, &m.base), -EINVAL);
	Box__DecideRequest d = BOX__DECIDE_REQUEST__INIT;
	d.action = "mcp:call";
	Box__DecideRequest *reqs[257];
	for (size_t i = 0; i < 257; i++)
		reqs[i] = &d;
	m.requests = reqs;
	m.n_requests = 256;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_PROBE_REQUEST, &m.base), 0);
	m.n_requests = 257;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_PROBE_REQUEST, &m.base), -E2BIG);
	m.n_requests = 1;
	d.action = "docs::Action::\"add\"";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_PROBE_REQUEST, &m.base), 0);
	d.action = "mcp call";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_PROBE_REQUEST, &m.base), -EINVAL);

	Box__PolicyProbeReply r = BOX__POLICY_PROBE_REPLY__INIT;
	Box__DecideReply dr = BOX__DECIDE_REPLY__INIT;
	dr.verdict = BOX__DECISION_VERDICT__VERDICT_PERMIT;
	dr.cause = BOX__DECISION_CAUSE__CAUSE_PERMITTED;
	dr.message = "policy permitted this operation on 'docs/add'.";
	Box__DecideReply *reps[1] = { &dr };
	r.replies = reps;
	r.n_replies = 1;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_PROBE_REPLY, &r.base), 0);
	dr.cause = BOX__DECISION_CAUSE__CAUSE_FORBIDDEN;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_PROBE_REPLY, &r.base), -EINVAL);
}

/* Who may send the new rows, and in which state. */
static void
test_rows_42_45(void)
{
	static const uint32_t peer_types[] = { BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA,
					       BOX__MSG_TYPE__MSG_POLICY_PROBE_REQUEST };
	static const uint32_t reply_types[] = { BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY,
						BOX__MSG_TYPE__MSG_POLICY_PROBE_REPLY };
	for (unsigned i = 0; i < box_proto_policy.n_types; i++) {
		const struct box_ipc_type *t = &box_proto_policy.types[i];
		for (unsigned k = 0; k < 2; k++) {
			if (t->type == peer_types[k]) {
				CHECK(t->senders == BOX_IPC_BIT(BOX_POLICY_ROLE_PEER));
				CHECK(t->states == BOX_IPC_BIT(BOX_POLICY_READY));
			}
			if (t->type == reply_types[k]) {
				CHECK(t->senders == BOX_IPC_BIT(BOX_POLICY_ROLE_POLICYD));
				CHECK(t->states == BOX_IPC_BIT(BOX_POLICY_READY));
			}
		}
		if (t->type == BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA)
			CHECK_INT((long long)t->reasm_cap, (long long)BOX_POLICY_TOOL_SCHEMA_MAX);
	}
}

static void
test_record(void)
{
	Box__RecordRequest m = BOX__RECORD_REQUEST__INIT;
	Box__PolicyField *in[1] = { fld("path", vstr("~/a")) };
	Box__PolicyField *out[1] = { fld("result", vstr("completed")) };
	m.kind = BOX__EVENT_KIND__EVENT_RESPONSE;
	m.action = "fs:write";
	m.decide_id = 7;
	m.input = in;
	m.n_input = 1;
	m.output = out;
	m.n_output = 1;
	/* The input is policyd's copy of Decide 7's: a peer sends none. */
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_RECORD_REQUEST, &m.base), -EINVAL);
	m.n_input = 0;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_RECORD_REQUEST, &m.base), 0);
	m.kind = BOX__EVENT_KIND__EVENT_ERROR; /* an error event has no output */
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_RECORD_REQUEST, &m.base), -EINVAL);
	m.n_output = 0;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_RECORD_REQUEST, &m.base), 0);
	m.kind = BOX__EVENT_KIND__EVENT_REQUEST; /* peers send DecideRequest for those */
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_RECORD_REQUEST, &m.base), -EINVAL);
}

/* RecordBatch: 1..256 records, each a valid RecordRequest. */
static void
test_record_batch(void)
{
	Box__RecordRequest r = BOX__RECORD_REQUEST__INIT, bad = BOX__RECORD_REQUEST__INIT;
	Box__PolicyField *in[1] = { fld("path", vstr("~/a")) };
	Box__PolicyField *out[1] = { fld("result", vstr("descriptor_issued")) };
	r.kind = BOX__EVENT_KIND__EVENT_RESPONSE;
	r.action = "fs:read";
	r.decide_id = 3;
	r.output = out;
	r.n_output = 1;
	bad = r;
	bad.kind = BOX__EVENT_KIND__EVENT_REQUEST;
	Box__RecordRequest with_input = r;
	with_input.input = in;
	with_input.n_input = 1;
	Box__RecordRequest *many[257];
	for (int i = 0; i < 257; i++)
		many[i] = &r;
	Box__RecordBatch b = BOX__RECORD_BATCH__INIT;
	b.records = many;
	b.n_records = 3;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_RECORD_BATCH, &b.base), 0);
	b.n_records = 256;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_RECORD_BATCH, &b.base), 0);
	b.n_records = 257;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_RECORD_BATCH, &b.base), -E2BIG);
	b.n_records = 0;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_RECORD_BATCH, &b.base), -EINVAL);
	many[1] = &bad; /* one bad record refuses the whole message */
	b.n_records = 3;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_RECORD_BATCH, &b.base), -EINVAL);
	many[1] = &with_input;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_RECORD_BATCH, &b.base), -EINVAL);
}

static void
test_init_ready_logfd(void)
{
	Box__PolicyInit m = BOX__POLICY_INIT__INIT;
	char *ns[] = { "gh_mcp" };
	m.box_name = "demo";
	m.box_id = "0123456789ab";
	m.home = "/home/me";
	m.has_policy_text = 1;
	m.policy_text.data = (uint8_t *)"permit (principal, action, resource);";
	m.policy_text.len = strlen((char *)m.policy_text.data);
	m.mcp_namespaces = ns;
	m.n_mcp_namespaces = 1;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_INIT, &m.base), 0);
	m.box_id = "0123456789AB";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_INIT, &m.base), -EINVAL);
	m.box_id = "0123456789ab";
	m.home = "relative/home";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_INIT, &m.base), -EINVAL);
	m.home = "/home/me";
	ns[0] = "Box";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_INIT, &m.base), -EINVAL);
	ns[0] = "a-b";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_INIT, &m.base), -EINVAL);

	Box__PolicyReady r = BOX__POLICY_READY__INIT;
	r.ok = 1;
	r.rules = 3;
	r.temporal_rules = 1;
	r.rules_kept = 1;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_READY, &r.base), 0);
	r.ok = 0; /* a refusal says why */
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_READY, &r.base), -EINVAL);
	r.message = "the history 'policy/history' cannot be used: bad frame checksum at byte 40";
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_READY, &r.base), 0);
	r.rules_kept = 2;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_READY, &r.base), -ERANGE);

	Box__PolicyLogFd l = BOX__POLICY_LOG_FD__INIT;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_LOG_FD, &l.base), -ERANGE);
	l.generation = 1;
	CHECK_INT(decode(BOX__MSG_TYPE__MSG_POLICY_LOG_FD, &l.base), 0);
}

static void
test_history_records(void)
{
	Box__HistoryEpoch e = BOX__HISTORY_EPOCH__INIT;
	ProtobufCBinaryData h[2] = { { 8, (uint8_t *)"12345678" }, { 0, NULL } };
	e.rule_hashes = h;
	e.n_rule_hashes = 1;
	CHECK_INT(box_validate_policy_msg(&e.base), 0);
	e.n_rule_hashes = 2;
	CHECK_INT(box_validate_policy_msg(&e.base), -EINVAL);
	Box__HistoryEvent ev = BOX__HISTORY_EVENT__INIT;
	ev.kind = BOX__EVENT_KIND__EVENT_REQUEST;
	ev.action = "fs:read";
	CHECK_INT(box_validate_policy_msg(&ev.base), 0);
	ev.action = "nope";
	CHECK_INT(box_validate_policy_msg(&ev.base), -EINVAL);
	/* Not one of ours. */
	Box__PolicyValue v = BOX__POLICY_VALUE__INIT;
	CHECK_INT(box_validate_policy_msg(&v.base), -EINVAL);
}

int
main(void)
{
	RUN(test_decide_request);
	RUN(test_decide_reply);
	RUN(test_decide_batch_history_free);
	RUN(test_record);
	RUN(test_record_batch);
	RUN(test_init_ready_logfd);
	RUN(test_history_records);
	RUN(test_tool_schema);
	RUN(test_probe);
	RUN(test_rows_42_45);
	for (size_t i = 0; i < n_allocs; i++)
		free(allocs[i]);
	return tap_done();
}
