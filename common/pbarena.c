/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pbarena.c — a protobuf-c allocator whose whole tree is freed at once (pbarena.h).
 *
 * Decoding a message with many small fields (a PolicyShip of 256 decisions) makes
 * thousands of small allocations that are all freed together when the message is
 * done: malloc and free of each, and the walk of protobuf_c_message_free_unpacked,
 * cost box-policyd more than deciding them. Here they are carved out of a few large
 * chunks (the first one holds the arena's header, right before the first allocation,
 * which is the top message: protobuf_c_message_unpack allocates it first), so the
 * tree goes with one free per chunk. The top message must fit the first chunk's
 * 16 KiB (every generated message's struct does); pb_arena_adopt checks it.
 * The budget is the caller's: at most `cap` bytes handed out in all (the caps of
 * proto/walk.h), checked before each chunk is made.
 * Trusts: nothing; the sizes come from the decoder. Never logs.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pbarena.h"

#define ARENA_MAGIC 0x62786172656e6131ULL /* "bxarena1" */
#define ARENA_ALIGN 16u
#define ARENA_CHUNK (16u << 10)

struct chunk {
	struct chunk *next;
	size_t used, size;
	_Alignas(ARENA_ALIGN) unsigned char data[];
};

struct pb_arena {
	uint64_t magic;
	struct chunk *chunks; /* the newest first; the last holds this header */
	size_t handed, cap;
	bool hit, oom;
	void *first; /* the first allocation: the top message */
};

/* The header's room at the start of the first chunk, aligned. */
#define HDR_ROOM ((sizeof(struct pb_arena) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1))

static void *
arena_alloc(void *userdata, size_t size)
{
	struct pb_arena *a = userdata;
	size_t need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (need < size || need > a->cap - a->handed) {
		a->hit = true;
		return NULL;
	}
	struct chunk *c = a->chunks;
	if (!c || c->size - c->used < need) {
		size_t sz = need > ARENA_CHUNK ? need : ARENA_CHUNK;
		c = malloc(sizeof(*c) + sz);
		if (!c) {
			a->oom = true;
			return NULL;
		}
		c->size = sz;
		c->used = 0;
		c->next = a->chunks;
		a->chunks = c;
	}
	void *p = c->data + c->used;
	c->used += need;
	a->handed += need;
	if (!a->first)
		a->first = p;
	return p;
}

static void
arena_free_fn(void *userdata, void *p)
{
	/* (everything goes with the arena) */
}

int
pb_arena_new(size_t cap, struct pb_arena **out, ProtobufCAllocator *alloc)
{
	struct chunk *c = malloc(sizeof(*c) + ARENA_CHUNK);
	if (!c)
		return -ENOMEM;
	c->next = NULL;
	c->size = ARENA_CHUNK;
	c->used = HDR_ROOM;
	struct pb_arena *a = (struct pb_arena *)(void *)c->data;
	*a = (struct pb_arena){ .magic = ARENA_MAGIC, .chunks = c, .cap = cap };
	*alloc = (ProtobufCAllocator){ arena_alloc, arena_free_fn, a };
	*out = a;
	return 0;
}

int
pb_arena_adopt(struct pb_arena *a, const ProtobufCMessage *m)
{
	if (a->hit)
		return -EMSGSIZE;
	if (a->oom)
		return -ENOMEM;
	/* the top message right after the header in the first chunk: pb_arena_of finds it */
	struct chunk *first = a->chunks;
	while (first->next)
		first = first->next;
	if (!m || (const void *)m != a->first || a->first != first->data + HDR_ROOM)
		return -EINVAL;
	return 0;
}

static struct pb_arena *
arena_of(const ProtobufCMessage *m)
{
	return (struct pb_arena *)(void *)((unsigned char *)(uintptr_t)m - HDR_ROOM);
}

void
pb_arena_free(struct pb_arena *a)
{
	if (!a)
		return;
	a->magic = 0;
	for (struct chunk *c = a->chunks, *n; c; c = n) {
		n = c->next;
		free(c); /* (the header's own chunk last) */
	}
}

void
pb_arena_free_tree(ProtobufCMessage *m)
{
	if (!m)
		return;
	struct pb_arena *a = arena_of(m);
	if (a->magic != ARENA_MAGIC)
		abort(); /* not an arena's tree: a caller's bug, never a peer's */
	pb_arena_free(a);
}

static const ProtobufCMessageDescriptor *marked[8];
static unsigned n_marked;

void
pb_arena_mark(const ProtobufCMessageDescriptor *d)
{
	if (pb_arena_marked(d))
		return;
	if (n_marked == sizeof(marked) / sizeof(marked[0]))
		abort(); /* a table with more arena rows than this: a build's bug */
	marked[n_marked++] = d;
}

bool
pb_arena_marked(const ProtobufCMessageDescriptor *d)
{
	for (unsigned i = 0; i < n_marked; i++)
		if (marked[i] == d)
			return true;
	return false;
}
