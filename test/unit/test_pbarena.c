/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_pbarena.c — common/pbarena.c through the one row that uses it (PolicyShip,
 * box_ipc_type.arena): a ship of 256 decisions bigger than one chunk decodes whole
 * (every field as sent) and box_msg_free frees it (the sanitizer build checks the
 * leaks); one the row's validator refuses (no item), and bytes that do not parse,
 * are refused with their arena freed; an arena's cap is a hard budget; another type
 * is still decoded with malloc and freed by protobuf-c.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc.h"
#include "pbarena.h"
#include "proto/proto_policy.h"
#include "tap.h"

#define N 256

static uint8_t *
pack(const ProtobufCMessage *m, size_t *n)
{
	*n = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(*n + 1);
	if (!buf)
		abort();
	protobuf_c_message_pack(m, buf);
	return buf;
}

static void
test_ship_decoded(void)
{
	static Box__PolicyShipItem it[N], *p[N];
	static Box__DecideRequest d[N];
	static Box__PolicyField f[N];
	static Box__PolicyValue v[N];
	static Box__PolicyField *fp[N];
	static char cmd[N][32];
	static char *rules[1] = { (char *)"policy_0" };
	for (int i = 0; i < N; i++) {
		(void)snprintf(cmd[i], sizeof(cmd[i]), "[ %d -lt 100000 ]", i);
		box__policy_value__init(&v[i]);
		v[i].kind_case = BOX__POLICY_VALUE__KIND_STR;
		v[i].str = cmd[i];
		box__policy_field__init(&f[i]);
		f[i].name = (char *)"command";
		f[i].value = &v[i];
		fp[i] = &f[i];
		box__decide_request__init(&d[i]);
		d[i].action = (char *)"shell:exec";
		d[i].input = &fp[i];
		d[i].n_input = 1;
		box__policy_ship_item__init(&it[i]);
		it[i].decide = &d[i];
		it[i].has_verdict = it[i].has_cause = true;
		it[i].verdict = BOX__DECISION_VERDICT__VERDICT_PERMIT;
		it[i].cause = BOX__DECISION_CAUSE__CAUSE_PERMITTED;
		it[i].rules = rules;
		it[i].n_rules = 1;
		p[i] = &it[i];
	}
	Box__PolicyShip s = BOX__POLICY_SHIP__INIT;
	s.generation = 7;
	s.items = p;
	s.n_items = N;
	size_t n;
	uint8_t *buf = pack(&s.base, &n);
	ProtobufCMessage *out = NULL;
	CHECK_INT(box_ipc_decode(&box_proto_policy, BOX__MSG_TYPE__MSG_POLICY_SHIP, buf, n, &out), 0);
	const Box__PolicyShip *got = (const Box__PolicyShip *)out;
	int bad = 0;
	for (int i = 0; got && i < N; i++)
		bad += !got->items[i]->decide || got->items[i]->decide->n_input != 1 ||
		       strcmp(got->items[i]->decide->input[0]->value->str, cmd[i]) != 0 ||
		       got->items[i]->n_rules != 1 ||
		       strcmp(got->items[i]->rules[0], "policy_0") != 0;
	CHECK(got && got->generation == 7 && got->n_items == N);
	CHECK_INT(bad, 0);
	CHECK(pb_arena_marked(&box__policy_ship__descriptor));
	box_msg_free(out);
	/* cut short: does not parse; nothing is kept */
	out = NULL;
	CHECK(box_ipc_decode(&box_proto_policy, BOX__MSG_TYPE__MSG_POLICY_SHIP, buf, n - 3,
			     &out) < 0);
	CHECK(out == NULL);
	free(buf);
	/* no item: the row's validator refuses it after the decode */
	s.n_items = 0;
	buf = pack(&s.base, &n);
	CHECK_INT(box_ipc_decode(&box_proto_policy, BOX__MSG_TYPE__MSG_POLICY_SHIP, buf, n, &out),
		  -EINVAL);
	CHECK(out == NULL);
	free(buf);
}

/* The cap is a budget: what would pass it fails, and the arena still frees. */
static void
test_cap(void)
{
	struct pb_arena *a = NULL;
	ProtobufCAllocator alloc;
	CHECK_INT(pb_arena_new(64, &a, &alloc), 0);
	if (!a)
		return;
	void *x = alloc.alloc(alloc.allocator_data, 48);
	void *y = alloc.alloc(alloc.allocator_data, 32); /* 48 -> 48, then 32 over 64 */
	CHECK(x != NULL && y == NULL);
	CHECK_INT(pb_arena_adopt(a, x), -EMSGSIZE);
	pb_arena_free(a);
	/* the top message first, then a big allocation in a chunk of its own */
	CHECK_INT(pb_arena_new(1u << 20, &a, &alloc), 0);
	uint8_t *top = alloc.alloc(alloc.allocator_data, 40);
	uint8_t *big = alloc.alloc(alloc.allocator_data, 100000);
	CHECK(top != NULL && big != NULL);
	if (big)
		memset(big, 0xa5, 100000);
	CHECK_INT(pb_arena_adopt(a, (ProtobufCMessage *)(void *)big), -EINVAL); /* not the first */
	CHECK_INT(pb_arena_adopt(a, (ProtobufCMessage *)(void *)top), 0);
	pb_arena_free_tree((ProtobufCMessage *)(void *)top);
	pb_arena_free(NULL);
	pb_arena_free_tree(NULL);
}

/* Another row: malloc'd as ever (not marked), freed by box_msg_free. */
static void
test_other_type(void)
{
	Box__DecideRequest d = BOX__DECIDE_REQUEST__INIT;
	d.action = (char *)"fs:read";
	size_t n;
	uint8_t *buf = pack(&d.base, &n);
	ProtobufCMessage *out = NULL;
	CHECK_INT(box_ipc_decode(&box_proto_policy, BOX__MSG_TYPE__MSG_DECIDE_REQUEST, buf, n, &out),
		  0);
	CHECK(!pb_arena_marked(&box__decide_request__descriptor));
	box_msg_free(out);
	free(buf);
}

int
main(void)
{
	RUN(test_ship_decoded);
	RUN(test_cap);
	RUN(test_other_type);
	return tap_done();
}
