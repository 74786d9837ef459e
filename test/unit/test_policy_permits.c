/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_policy_permits.c — proto/policy_permits.c: a channel's permitted
 * Decides without an outcome (what box-policyd checks a Record against, and
 * what a peer finds the id of its Record in). Checked: ids must increase
 * (batches take one each); a permit is found and taken by id once, with its
 * Decide intact; unknown ids are -ENOENT, those at or below the highest one
 * the bounds forgot -ESTALE; the count and byte bounds forget the oldest
 * first (the newest stays even alone over the bytes); a match by action and
 * exact input takes the oldest; the packed form a peer keeps works alike;
 * a set full of equal permits (one request asked over and over, another
 * among them) keeps forgetting the oldest and still matches the oldest of
 * each, also after permits were taken from the middle of the chains; the
 * content table a first match makes grows with the set. A permit dropped by id
 * (box-policyd holding its Decide) is gone as a taken one; one added from the
 * caller's own packed bytes is kept as any; a take "like" a known permit takes the
 * oldest equal one, that permit or its older twin, and nothing of another action.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/policy_permits.h"
#include "tap.h"

/* A Decide of fs:read PATH (read_content), fields in F/V/P. */
struct req {
	Box__DecideRequest m;
	Box__PolicyField f[2];
	Box__PolicyValue v[2];
	Box__PolicyField *p[2];
};

static void
req_init(struct req *r, const char *action, const char *path, const char *op)
{
	static const char *const names[2] = { "path", "operation" };
	const char *vals[2] = { path, op };
	box__decide_request__init(&r->m);
	for (int i = 0; i < 2; i++) {
		box__policy_field__init(&r->f[i]);
		box__policy_value__init(&r->v[i]);
		r->f[i].name = (char *)names[i];
		r->f[i].value = &r->v[i];
		r->v[i].kind_case = BOX__POLICY_VALUE__KIND_STR;
		r->v[i].str = (char *)vals[i];
		r->p[i] = &r->f[i];
	}
	r->m.action = (char *)action;
	r->m.input = r->p;
	r->m.n_input = 2;
}

static void
test_ids_increase(void)
{
	struct policy_permits *s = policy_permits_new();
	CHECK(s != NULL);
	if (!s)
		return;
	CHECK_INT(policy_permits_next(s, 5, 1), 0);
	CHECK_INT(policy_permits_next(s, 5, 1), -EPROTO); /* repeated */
	CHECK_INT(policy_permits_next(s, 4, 1), -EPROTO); /* lower */
	CHECK_INT(policy_permits_next(s, 6, 3), 0);       /* a batch: 6, 7, 8 */
	CHECK_INT(policy_permits_next(s, 8, 1), -EPROTO); /* its last one */
	CHECK_INT(policy_permits_next(s, 9, 0), -EPROTO); /* no request */
	CHECK_INT(policy_permits_next(s, UINT64_MAX - 1, 3), -EPROTO); /* wraps */
	CHECK_INT(policy_permits_next(s, UINT64_MAX - 1, 2), 0);
	policy_permits_free(s);
}

static void
test_take_by_id(void)
{
	struct policy_permits *s = policy_permits_new();
	struct req a, b;
	req_init(&a, "fs:read", "~/a", "read_content");
	req_init(&b, "fs:write", "~/b", "write_content");
	CHECK_INT(policy_permits_add(s, 10, &a.m), 0);
	CHECK_INT(policy_permits_add(s, 11, &b.m), 0);
	CHECK_INT(policy_permits_add(s, 11, &a.m), -EEXIST);
	CHECK_INT(policy_permits_count(s), 2);
	const char *action = NULL;
	CHECK_INT(policy_permits_find(s, 11, &action), 0);
	CHECK_STR(action, "fs:write");
	CHECK_INT(policy_permits_find(s, 12, NULL), -ENOENT);
	Box__DecideRequest *got = NULL;
	CHECK_INT(policy_permits_take(s, 11, &got), 0);
	CHECK(got && strcmp(got->action, "fs:write") == 0 && got->n_input == 2 &&
	      strcmp(got->input[0]->value->str, "~/b") == 0 &&
	      strcmp(got->input[1]->value->str, "write_content") == 0);
	if (got)
		box__decide_request__free_unpacked(got, NULL);
	/* recorded once: not again */
	CHECK_INT(policy_permits_take(s, 11, &got), -ENOENT);
	CHECK(got == NULL);
	CHECK_INT(policy_permits_count(s), 1);
	policy_permits_free(s);
}

static void
test_count_bound(void)
{
	struct policy_permits *s = policy_permits_new();
	struct req r;
	char path[32];
	for (uint64_t id = 1; id <= BOX_POLICY_PERMITS_MAX + 3; id++) {
		(void)snprintf(path, sizeof(path), "~/f%llu", (unsigned long long)id);
		req_init(&r, "fs:read", path, "read_content");
		CHECK_INT(policy_permits_add(s, id, &r.m), 0);
	}
	CHECK_INT(policy_permits_count(s), BOX_POLICY_PERMITS_MAX);
	/* the three oldest were forgotten: stale, as is any lower id */
	CHECK_INT(policy_permits_find(s, 1, NULL), -ESTALE);
	CHECK_INT(policy_permits_find(s, 3, NULL), -ESTALE);
	CHECK_INT(policy_permits_find(s, 0, NULL), -ESTALE);
	CHECK_INT(policy_permits_find(s, 4, NULL), 0);
	CHECK_INT(policy_permits_find(s, BOX_POLICY_PERMITS_MAX + 3, NULL), 0);
	CHECK_INT(policy_permits_find(s, BOX_POLICY_PERMITS_MAX + 4, NULL), -ENOENT);
	/* taking one makes room: the next add forgets nothing */
	Box__DecideRequest *got = NULL;
	CHECK_INT(policy_permits_take(s, 100, &got), 0);
	box__decide_request__free_unpacked(got, NULL);
	req_init(&r, "fs:read", "~/more", "read_content");
	CHECK_INT(policy_permits_add(s, BOX_POLICY_PERMITS_MAX + 10, &r.m), 0);
	CHECK_INT(policy_permits_find(s, 4, NULL), 0);
	/* recorded already, and above the forgotten ones: unknown */
	CHECK_INT(policy_permits_find(s, 100, NULL), -ENOENT);
	policy_permits_free(s);
}

static void
test_byte_bound(void)
{
	struct policy_permits *s = policy_permits_new();
	/* ~1 MiB paths: four fit in 4 MiB with their framing only just not */
	size_t big = (1u << 20) - 64;
	char *path = malloc(big + 1);
	memset(path, 'x', big);
	path[big] = '\0';
	path[0] = '/';
	struct req r;
	req_init(&r, "fs:read", path, "read_content");
	for (uint64_t id = 1; id <= 6; id++)
		CHECK_INT(policy_permits_add(s, id, &r.m), 0);
	CHECK(policy_permits_bytes(s) <= BOX_POLICY_PERMIT_BYTES_MAX);
	CHECK(policy_permits_count(s) >= 3 && policy_permits_count(s) <= 4);
	CHECK_INT(policy_permits_find(s, 1, NULL), -ESTALE);
	CHECK_INT(policy_permits_find(s, 6, NULL), 0);
	/* one alone over the bound is still kept (the newest always is) */
	char *huge = malloc(BOX_POLICY_PERMIT_BYTES_MAX + 2);
	memset(huge, 'y', BOX_POLICY_PERMIT_BYTES_MAX + 1);
	huge[BOX_POLICY_PERMIT_BYTES_MAX + 1] = '\0';
	req_init(&r, "fs:read", huge, "read_content");
	CHECK_INT(policy_permits_add(s, 7, &r.m), 0);
	CHECK_INT(policy_permits_count(s), 1);
	CHECK_INT(policy_permits_find(s, 7, NULL), 0);
	CHECK_INT(policy_permits_find(s, 6, NULL), -ESTALE);
	free(huge);
	free(path);
	policy_permits_free(s);
}

static void
test_match(void)
{
	struct policy_permits *s = policy_permits_new();
	struct req a1, b, a2, q;
	req_init(&a1, "fs:read", "~/a", "read_content");
	req_init(&b, "fs:read", "~/b", "read_content");
	req_init(&a2, "fs:read", "~/a", "read_content");
	CHECK_INT(policy_permits_add(s, 1, &a1.m), 0);
	CHECK_INT(policy_permits_add(s, 2, &b.m), 0);
	/* the packed form a peer keeps until the answer */
	size_t len = 0;
	uint8_t *packed = policy_permits_pack(&a2.m, &len);
	CHECK(packed != NULL);
	CHECK_INT(policy_permits_add_packed(s, 3, packed, len), 0);
	free(packed);
	const char *action = NULL;
	CHECK_INT(policy_permits_find(s, 3, &action), 0);
	CHECK_STR(action, "fs:read");
	uint64_t id = 0;
	/* another action, operation or path: none */
	req_init(&q, "fs:write", "~/a", "read_content");
	CHECK_INT(policy_permits_take_match(s, q.m.action, q.p, 2, &id), -ENOENT);
	req_init(&q, "fs:read", "~/a", "read_metadata");
	CHECK_INT(policy_permits_take_match(s, q.m.action, q.p, 2, &id), -ENOENT);
	req_init(&q, "fs:read", "~/a", "read_content");
	CHECK_INT(policy_permits_take_match(s, q.m.action, q.p, 1, &id), -ENOENT);
	/* the oldest of the two equal ones first, then the other, then none */
	CHECK_INT(policy_permits_take_match(s, q.m.action, q.p, 2, &id), 0);
	CHECK_INT(id, 1);
	CHECK_INT(policy_permits_take_match(s, q.m.action, q.p, 2, &id), 0);
	CHECK_INT(id, 3);
	CHECK_INT(policy_permits_take_match(s, q.m.action, q.p, 2, &id), -ENOENT);
	CHECK_INT(policy_permits_count(s), 1);
	CHECK_INT(policy_permits_find(s, 2, NULL), 0);
	policy_permits_free(s);
	policy_permits_free(NULL);
}

static bool
take_is(struct policy_permits *s, const struct req *q, uint64_t want)
{
	uint64_t id = 0;
	int r = policy_permits_take_match(s, q->m.action, q->p, 2, &id);
	static unsigned said;
	if ((r != 0 || id != want) && said++ < 3)
		printf("# take_match %s: %d, id %llu (want %llu)\n", q->m.input[0]->value->str, r,
		       (unsigned long long)id, (unsigned long long)want);
	return r == 0 && id == want;
}

static void
test_equal_past_bound(void)
{
	struct policy_permits *s = policy_permits_new();
	struct req a, b;
	req_init(&a, "fs:read", "~/a", "read_content");
	req_init(&b, "fs:read", "~/b", "read_content");
	uint64_t n = BOX_POLICY_PERMITS_MAX + 1000;
	int bad = 0;
	/* ids 1..n: every 7th is ~/b, the rest ~/a (the tables grow on the way) */
	for (uint64_t id = 1; id <= n; id++)
		bad += policy_permits_add(s, id, id % 7 ? &a.m : &b.m) != 0;
	CHECK_INT(bad, 0);
	CHECK_INT(policy_permits_count(s), BOX_POLICY_PERMITS_MAX);
	CHECK_INT(policy_permits_find(s, 1000, NULL), -ESTALE);
	CHECK_INT(policy_permits_find(s, 1001, NULL), 0);
	/* taken by id: the head of ~/a's chain (1002), one in its middle, ~/b's head (1001) */
	Box__DecideRequest *m = NULL;
	CHECK_INT(policy_permits_take(s, 1002, &m), 0);
	box__decide_request__free_unpacked(m, NULL);
	CHECK_INT(policy_permits_take(s, 5000, &m), 0);
	box__decide_request__free_unpacked(m, NULL);
	CHECK_INT(policy_permits_take(s, 1001, &m), 0);
	CHECK(m && strcmp(m->input[0]->value->str, "~/b") == 0);
	box__decide_request__free_unpacked(m, NULL);
	/* the oldest kept of each, in order */
	CHECK(take_is(s, &a, 1003));
	CHECK(take_is(s, &a, 1004));
	CHECK(take_is(s, &b, 1008));
	CHECK(take_is(s, &b, 1015));
	/* seven were taken: eight more fill the set and forget the oldest kept (1005) */
	bad = 0;
	for (uint64_t id = n + 1; id <= n + 8; id++)
		bad += policy_permits_add(s, id, id % 7 ? &a.m : &b.m) != 0;
	CHECK_INT(bad, 0);
	CHECK_INT(policy_permits_count(s), BOX_POLICY_PERMITS_MAX);
	CHECK_INT(policy_permits_find(s, 1005, NULL), -ESTALE);
	CHECK(take_is(s, &a, 1006));
	/* ~/a down to its newest: every one comes out in order, 5000 excepted */
	uint64_t want = 1007, taken = 0;
	bad = 0;
	for (;;) {
		while (want % 7 == 0 || want == 5000)
			want++;
		if (want > n + 8)
			break;
		bad += !take_is(s, &a, want);
		want++;
		taken++;
	}
	CHECK_INT(bad, 0);
	uint64_t id = 0;
	CHECK_INT(policy_permits_take_match(s, a.m.action, a.p, 2, &id), -ENOENT);
	CHECK(taken > 0 && policy_permits_count(s) > 0);
	policy_permits_free(s);
}

/* The content table made by a first match while the set is small, then grown with it. */
static void
test_match_then_grow(void)
{
	struct policy_permits *s = policy_permits_new();
	struct req a, b;
	req_init(&a, "fs:read", "~/a", "read_content");
	req_init(&b, "fs:read", "~/b", "read_content");
	uint64_t id = 0;
	CHECK_INT(policy_permits_add(s, 1, &b.m), 0);
	CHECK_INT(policy_permits_take_match(s, a.m.action, a.p, 2, &id), -ENOENT);
	int bad = 0;
	for (uint64_t i = 2; i <= 200; i++)
		bad += policy_permits_add(s, i, i % 2 ? &b.m : &a.m) != 0;
	CHECK_INT(bad, 0);
	CHECK(take_is(s, &b, 1));
	CHECK(take_is(s, &a, 2));
	CHECK(take_is(s, &b, 3));
	Box__DecideRequest *m = NULL;
	CHECK_INT(policy_permits_take(s, 4, &m), 0);
	box__decide_request__free_unpacked(m, NULL);
	CHECK(take_is(s, &a, 6));
	CHECK_INT(policy_permits_count(s), 195);
	policy_permits_free(s);
}

/* policy_permits_drop, policy_permits_add_bytes and policy_permits_take_like. */
static void
test_drop_and_like(void)
{
	struct policy_permits *s = policy_permits_new();
	struct req a, b;
	req_init(&a, "fs:read", "~/a", "read_content");
	req_init(&b, "fs:read", "~/b", "read_content");
	size_t len = 0;
	uint8_t *packed = policy_permits_pack(&a.m, &len);
	CHECK(packed != NULL);
	CHECK_INT(policy_permits_add_bytes(s, 1, "fs:read", packed, len), 0);
	CHECK_INT(policy_permits_add(s, 2, &b.m), 0);
	CHECK_INT(policy_permits_add(s, 3, &a.m), 0);
	CHECK_INT(policy_permits_add_bytes(s, 4, "fs:read", packed, len), 0);
	CHECK_INT(policy_permits_add_bytes(s, 4, "fs:read", packed, len), -EEXIST);
	free(packed);
	const char *action = NULL;
	CHECK_INT(policy_permits_find(s, 1, &action), 0);
	CHECK_STR(action, "fs:read");
	/* dropped: gone, as a taken one is */
	CHECK_INT(policy_permits_drop(s, 2), 0);
	CHECK_INT(policy_permits_drop(s, 2), -ENOENT);
	CHECK_INT(policy_permits_find(s, 2, NULL), -ENOENT);
	CHECK_INT(policy_permits_drop(s, 99), -ENOENT);
	uint64_t id = 0;
	/* like 4: the oldest equal one (1, packed by the caller), then 3, then 4 itself */
	CHECK_INT(policy_permits_take_like(s, 4, "fs:write", &id), -ENOENT);
	CHECK_INT(policy_permits_take_like(s, 4, "fs:read", &id), 0);
	CHECK_INT(id, 1);
	CHECK_INT(policy_permits_take_like(s, 4, "fs:read", &id), 0);
	CHECK_INT(id, 3);
	CHECK_INT(policy_permits_take_like(s, 4, "fs:read", &id), 0);
	CHECK_INT(id, 4);
	CHECK_INT(policy_permits_take_like(s, 4, "fs:read", &id), -ENOENT);
	CHECK_INT(policy_permits_take_like(s, 2, "fs:read", &id), -ENOENT);
	CHECK_INT(policy_permits_count(s), 0);
	/* a twin added after the content table exists, another content beside it */
	CHECK_INT(policy_permits_add(s, 5, &b.m), 0);
	CHECK_INT(policy_permits_add(s, 6, &a.m), 0);
	CHECK_INT(policy_permits_add(s, 7, &b.m), 0);
	CHECK_INT(policy_permits_take_like(s, 7, "fs:read", &id), 0);
	CHECK_INT(id, 5);
	CHECK(take_is(s, &b, 7));
	CHECK(take_is(s, &a, 6));
	policy_permits_free(s);
}

/* Only a per-address net:connect (an "ip" field) is decided without an outcome. */
static void
test_outcome_owed(void)
{
	struct req r;
	req_init(&r, "fs:read", "/w/a", "read_content");
	CHECK(policy_permits_outcome_owed(&r.m));
	r.m.action = (char *)"net:connect";
	r.f[0].name = (char *)"host";
	r.f[1].name = (char *)"port";
	CHECK(policy_permits_outcome_owed(&r.m)); /* {host, port}: the connection's */
	r.f[1].name = (char *)"ip";
	CHECK(!policy_permits_outcome_owed(&r.m)); /* {host, ip}: one address of it */
	r.m.action = (char *)"http:request";
	CHECK(policy_permits_outcome_owed(&r.m)); /* an "ip" field elsewhere means nothing */
}

int
main(void)
{
	RUN(test_ids_increase);
	RUN(test_take_by_id);
	RUN(test_count_bound);
	RUN(test_byte_bound);
	RUN(test_match);
	RUN(test_equal_past_bound);
	RUN(test_match_then_grow);
	RUN(test_drop_and_like);
	RUN(test_outcome_owed);
	return tap_done();
}
