/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pbarena.h — a protobuf-c allocator whose decoded tree is freed at once
 * (pbarena.c): for a message type whose receivers never keep or free a part of
 * the tree apart from the whole (proto/walk.c decodes the rows that say so,
 * box_ipc_type.arena, with it; box_msg_free frees such a tree).
 * Returns negative errno; never logs.
 */
#ifndef BOX_PBARENA_H
#define BOX_PBARENA_H

#include <stdbool.h>
#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

struct pb_arena;

/*
 * An arena handing out at most CAP bytes in all, and the allocator to unpack with
 * (*alloc). 0 or -ENOMEM.
 */
int pb_arena_new(size_t cap, struct pb_arena **out, ProtobufCAllocator *alloc);
/*
 * M, unpacked with the arena's allocator, becomes the arena's tree (freed by
 * pb_arena_free_tree(M) from now on). 0; -EMSGSIZE (the cap was hit), -ENOMEM,
 * -EINVAL (M is not the arena's first allocation): the caller frees the arena.
 */
int pb_arena_adopt(struct pb_arena *a, const ProtobufCMessage *m);
/* The arena and everything it handed out. NULL-tolerant. */
void pb_arena_free(struct pb_arena *a);
/* The tree pb_arena_adopt made M: all of it. NULL-tolerant; anything else aborts. */
void pb_arena_free_tree(ProtobufCMessage *m);

/*
 * The message types decoded into arenas in this process (at most 8): box_msg_free
 * frees a tree of such a type with pb_arena_free_tree. Marked by the decoder before
 * the first such tree exists.
 */
void pb_arena_mark(const ProtobufCMessageDescriptor *d);
bool pb_arena_marked(const ProtobufCMessageDescriptor *d);

#endif
