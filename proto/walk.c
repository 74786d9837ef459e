/* SPDX-License-Identifier: Apache-2.0 */
/*
 * walk.c — the decode-and-validate walker of every protocol table (walk.h).
 *
 * One walker for the enveloped protocols (through common/ipc.c's tables) and
 * the bare packets of the trampoline (plan_validate.c): the cap is checked
 * before the allocator runs, and the allocator itself has a budget, so no
 * input makes the decoder allocate more than a fixed multiple of its size.
 * Trusts: nothing; every byte came from a peer. Never logs.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "pbarena.h"
#include "walk.h"

struct cap_alloc {
	size_t used, cap;
	bool hit, oom;
};

static void *
cap_alloc_fn(void *userdata, size_t size)
{
	struct cap_alloc *a = userdata;
	if (size > a->cap - a->used) {
		a->hit = true;
		return NULL;
	}
	void *p = malloc(size ? size : 1);
	if (!p) {
		a->oom = true;
		return NULL;
	}
	a->used += size;
	return p;
}

static void
cap_free_fn(void *userdata, void *p)
{
	(void)userdata;
	free(p);
}

int
box_proto_unpack_capped(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len,
			ProtobufCMessage **ret)
{
	struct cap_alloc ca = { .cap = BOX_PROTO_DECODE_FACTOR * len + BOX_PROTO_DECODE_SLACK };
	ProtobufCAllocator alloc = { cap_alloc_fn, cap_free_fn, &ca };
	ProtobufCMessage *m = protobuf_c_message_unpack(d, &alloc, len, buf ? buf : (const uint8_t *)"");

	if (!m)
		return ca.hit ? -EMSGSIZE : ca.oom ? -ENOMEM : -EBADMSG;
	*ret = m;
	return 0;
}

/*
 * Every submessage: no unknown field; every enum a declared value. The
 * generated code accepts any number in an enum field, and protobuf-c keeps
 * unknown fields to re-emit them; both are refused on every channel.
 */
static int
walk(const ProtobufCMessage *m, unsigned depth)
{
	if (depth > BOX_PROTO_MAX_DEPTH)
		return -EBADMSG;
	if (m->n_unknown_fields != 0)
		return -EBADMSG;

	const ProtobufCMessageDescriptor *d = m->descriptor;
	const uint8_t *base = (const uint8_t *)m;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (f->type != PROTOBUF_C_TYPE_MESSAGE && f->type != PROTOBUF_C_TYPE_ENUM)
			continue;

		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)(base + f->quantifier_offset);
			const void *arr = *(void *const *)(base + f->offset);
			for (size_t k = 0; k < n; k++) {
				if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
					const ProtobufCMessage *sub =
						((ProtobufCMessage *const *)arr)[k];
					int r = sub ? walk(sub, depth + 1) : -EBADMSG;
					if (r < 0)
						return r;
				} else if (!protobuf_c_enum_descriptor_get_value(
						   f->descriptor, ((const int *)arr)[k])) {
					return -EBADMSG;
				}
			}
			continue;
		}

		bool present;
		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
			present = *(const uint32_t *)(base + f->quantifier_offset) == f->id;
		else if (f->type == PROTOBUF_C_TYPE_MESSAGE)
			present = true; /* NULL pointer = absent */
		else if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset)
			present = *(const protobuf_c_boolean *)(base + f->quantifier_offset);
		else
			present = true;
		if (!present)
			continue;

		if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
			const ProtobufCMessage *sub = *(ProtobufCMessage *const *)(base + f->offset);
			if (sub) {
				int r = walk(sub, depth + 1);
				if (r < 0)
					return r;
			}
		} else if (!protobuf_c_enum_descriptor_get_value(f->descriptor,
								 *(const int *)(base + f->offset))) {
			return -EBADMSG;
		}
	}
	return 0;
}

int
box_proto_walk(const ProtobufCMessage *m)
{
	return m ? walk(m, 0) : -EBADMSG;
}

int
box_proto_unpack(const struct box_ipc_type *t, const uint8_t *buf, size_t len,
		 ProtobufCMessage **ret)
{
	if (!t || !t->desc)
		return -EBADMSG;
	uint64_t cap = t->reasm_cap > t->max_size ? t->reasm_cap : t->max_size;
	if (len > cap)
		return -EMSGSIZE;
	if (len > 0 && !buf)
		return -EINVAL;

	ProtobufCMessage *m = NULL;
	int k = box_proto_unpack_capped(t->desc, buf, len, &m);
	if (k < 0)
		return k;
	if (!protobuf_c_message_check(m)) {
		protobuf_c_message_free_unpacked(m, NULL);
		return -EBADMSG;
	}
	int r = walk(m, 0);
	if (r < 0) {
		protobuf_c_message_free_unpacked(m, NULL);
		return r;
	}
	*ret = m;
	return 0;
}

/*
 * box_proto_unpack into an arena (t->arena): the same cap on the input and on what
 * the decoder may allocate, the same checks; the tree is freed by box_msg_free.
 */
static int
unpack_arena(const struct box_ipc_type *t, const uint8_t *buf, size_t len, ProtobufCMessage **ret)
{
	uint64_t cap = t->reasm_cap > t->max_size ? t->reasm_cap : t->max_size;
	if (len > cap)
		return -EMSGSIZE;
	if (len > 0 && !buf)
		return -EINVAL;
	struct pb_arena *a;
	ProtobufCAllocator alloc;
	int r = pb_arena_new(BOX_PROTO_DECODE_FACTOR * len + BOX_PROTO_DECODE_SLACK, &a, &alloc);
	if (r < 0)
		return r;
	pb_arena_mark(t->desc); /* (before the first such tree exists) */
	ProtobufCMessage *m =
		protobuf_c_message_unpack(t->desc, &alloc, len, buf ? buf : (const uint8_t *)"");
	r = pb_arena_adopt(a, m);
	if (r < 0) {
		pb_arena_free(a);
		return m || r != -EINVAL ? r : -EBADMSG;
	}
	if (!protobuf_c_message_check(m) || walk(m, 0) < 0) {
		pb_arena_free_tree(m);
		return -EBADMSG;
	}
	*ret = m;
	return 0;
}

int
box_proto_decode(const struct box_ipc_type *t, const uint8_t *buf, size_t len,
		 ProtobufCMessage **ret)
{
	ProtobufCMessage *m = NULL;
	int r = t && t->desc && t->arena ? unpack_arena(t, buf, len, &m)
					 : box_proto_unpack(t, buf, len, &m);
	if (r < 0)
		return r;
	if (t->validate) {
		r = t->validate(m);
		if (r < 0) {
			box_msg_free(m);
			return r;
		}
	}
	*ret = m;
	return 0;
}
