/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rnd_policy.h — random policy values for the unit tests that feed a decision's
 * input fields to a writer and check what comes out (test_declog.c, test_otlplog.c):
 * a small xorshift generator (each test seeds it), a pool every value is allocated
 * from and freed with at once, valid UTF-8 strings made of pieces a JSON or protobuf
 * writer must escape or carry, and nested values (sets and records, at most 3 deep).
 * Header-only: each test is its own program.
 * Trusts: nothing; it is test code.
 */
#ifndef BOX_TEST_RND_POLICY_H
#define BOX_TEST_RND_POLICY_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.pb-c.h"

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

static inline void
rnd_seed(uint64_t seed)
{
	rnd_state = seed ? seed : 1;
}

static inline uint32_t
rnd(uint32_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state % n);
}

/* Everything a test allocates, freed at once (pool_free). */
static void *rnd_pool[1 << 16];
static size_t rnd_n_pool;

static inline void *
palloc(size_t n)
{
	void *p = calloc(1, n);
	if (!p || rnd_n_pool >= sizeof(rnd_pool) / sizeof(rnd_pool[0]))
		abort();
	rnd_pool[rnd_n_pool++] = p;
	return p;
}

static inline void
pool_free(void)
{
	while (rnd_n_pool)
		free(rnd_pool[--rnd_n_pool]);
}

/* A random valid UTF-8 string of up to MAX pieces (from the pool). */
static inline char *
rnd_string(size_t max)
{
	static const char *pieces[] = {
		"a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\r", "\b", "\f", "\x01", "\x1f",
		"\x7f", "é", "€", "😀", "\u202e", "~/p", "'", "rm -rf /", "%s", "{", "]", ",",
	};
	size_t n = rnd((uint32_t)max + 1);
	char *s = palloc(n * 16 + 1);
	for (size_t i = 0; i < n; i++)
		strcat(s, pieces[rnd(sizeof(pieces) / sizeof(pieces[0]))]);
	return s;
}

/* A random value, DEPTH levels down (from the pool); a record's field names are unique. */
static inline Box__PolicyValue *
rnd_value(int depth)
{
	Box__PolicyValue *v = palloc(sizeof(*v));
	box__policy_value__init(v);
	switch (depth > 2 ? rnd(3) : rnd(5)) {
	case 0:
		v->kind_case = BOX__POLICY_VALUE__KIND_STR;
		v->str = rnd_string(12);
		break;
	case 1:
		v->kind_case = BOX__POLICY_VALUE__KIND_INTEGER;
		v->integer = rnd(2) ? (int64_t)rnd(100000) - 50000 : (rnd(2) ? INT64_MAX : INT64_MIN);
		break;
	case 2:
		v->kind_case = BOX__POLICY_VALUE__KIND_BOOLEAN;
		v->boolean = rnd(2);
		break;
	case 3: {
		v->kind_case = BOX__POLICY_VALUE__KIND_SET;
		v->set = palloc(sizeof(*v->set));
		box__policy_value_set__init(v->set);
		v->set->n_elems = rnd(4);
		v->set->elems = palloc((v->set->n_elems + 1) * sizeof(*v->set->elems));
		for (size_t i = 0; i < v->set->n_elems; i++)
			v->set->elems[i] = rnd_value(depth + 1);
		break;
	}
	default: {
		v->kind_case = BOX__POLICY_VALUE__KIND_RECORD;
		v->record = palloc(sizeof(*v->record));
		box__policy_value_record__init(v->record);
		v->record->n_fields = rnd(4);
		v->record->fields = palloc((v->record->n_fields + 1) * sizeof(*v->record->fields));
		for (size_t i = 0; i < v->record->n_fields; i++) {
			Box__PolicyField *f = palloc(sizeof(*f));
			box__policy_field__init(f);
			f->name = palloc(32);
			/* unique within the record; half of them need escaping */
			if (rnd(2))
				snprintf(f->name, 32, "f%zu", i);
			else
				snprintf(f->name, 32, "é\"k%zu", i);
			f->value = rnd_value(depth + 1);
			v->record->fields[i] = f;
		}
		break;
	}
	}
	return v;
}

#endif
