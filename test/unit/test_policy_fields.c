/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_policy_fields.c — proto/policy_fields.c: a request's fields built on
 * the stack, in order, typed, pointing at the caller's strings, and a
 * DecideRequest made of them passes the validator and survives a pack and
 * unpack.
 * Trusts: nothing; test code.
 */
#include <stdlib.h>
#include <string.h>

#include "proto/policy_fields.h"
#include "proto/policy_validate.h"
#include "tap.h"

static void
test_fields_in_order(void)
{
	struct policy_fields fs;
	const char *server = "docs";
	policy_fields_init(&fs);
	policy_fields_str(&fs, "server", server);
	policy_fields_long(&fs, "port", 443);
	policy_fields_bool(&fs, "intercepted", true);
	CHECK_INT((long long)fs.n, 3);
	CHECK_STR(fs.p[0]->name, "server");
	CHECK(fs.p[0]->value->kind_case == BOX__POLICY_VALUE__KIND_STR &&
	      fs.p[0]->value->str == server); /* borrowed, not copied */
	CHECK(fs.p[1]->value->kind_case == BOX__POLICY_VALUE__KIND_INTEGER &&
	      fs.p[1]->value->integer == 443);
	CHECK(fs.p[2]->value->kind_case == BOX__POLICY_VALUE__KIND_BOOLEAN &&
	      fs.p[2]->value->boolean);
	policy_fields_init(&fs);
	CHECK_INT((long long)fs.n, 0);
}

static void
test_request_round_trip(void)
{
	struct policy_fields fs;
	policy_fields_init(&fs);
	policy_fields_str(&fs, "server", "docs");
	policy_fields_str(&fs, "method", "tools/call");
	policy_fields_str(&fs, "tool", "add");
	Box__DecideRequest req = BOX__DECIDE_REQUEST__INIT;
	req.action = (char *)"mcp:call";
	req.input = fs.p;
	req.n_input = fs.n;
	CHECK_INT(box_validate_decide_request(&req), 0);
	size_t len = protobuf_c_message_get_packed_size(&req.base);
	uint8_t *buf = malloc(len);
	protobuf_c_message_pack(&req.base, buf);
	Box__DecideRequest *back = box__decide_request__unpack(NULL, len, buf);
	CHECK(back && back->n_input == 3 && strcmp(back->input[2]->name, "tool") == 0 &&
	      strcmp(back->input[2]->value->str, "add") == 0);
	if (back)
		box__decide_request__free_unpacked(back, NULL);
	free(buf);
}

/* The widest action's eight fields fit. */
static void
test_eight_fit(void)
{
	static const char *const names[] = { "command", "program", "arg1", "arg2", "arg_count",
					      "cwd", "program_path", "credential_reads" };
	struct policy_fields fs;
	policy_fields_init(&fs);
	for (size_t i = 0; i < POLICY_FIELDS_MAX; i++)
		policy_fields_str(&fs, names[i], "x");
	CHECK_INT((long long)fs.n, POLICY_FIELDS_MAX);
	CHECK_STR(fs.p[7]->name, "credential_reads");
}

/* A set (shell:spawn's credential_reads) is borrowed, elements and all. */
static void
test_set_borrowed(void)
{
	Box__PolicyValue e[2], *ep[2] = { &e[0], &e[1] };
	Box__PolicyValueSet set = BOX__POLICY_VALUE_SET__INIT;
	for (int i = 0; i < 2; i++) {
		box__policy_value__init(&e[i]);
		e[i].kind_case = BOX__POLICY_VALUE__KIND_STR;
		e[i].str = (char *)(i ? "~/.npmrc" : "~/.gitconfig");
	}
	set.elems = ep;
	set.n_elems = 2;
	struct policy_fields fs;
	policy_fields_init(&fs);
	policy_fields_str(&fs, "program", "git");
	policy_fields_set(&fs, "credential_reads", &set);
	CHECK_INT((long long)fs.n, 2);
	CHECK(fs.p[1]->value->kind_case == BOX__POLICY_VALUE__KIND_SET &&
	      fs.p[1]->value->set == &set && fs.p[1]->value->set->n_elems == 2);
	Box__DecideRequest req = BOX__DECIDE_REQUEST__INIT;
	req.action = (char *)"shell:spawn";
	req.input = fs.p;
	req.n_input = fs.n;
	CHECK_INT(box_validate_decide_request(&req), 0);
}

int
main(void)
{
	RUN(test_fields_in_order);
	RUN(test_request_round_trip);
	RUN(test_eight_fit);
	RUN(test_set_borrowed);
	return tap_done();
}
