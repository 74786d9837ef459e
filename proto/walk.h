/* SPDX-License-Identifier: Apache-2.0 */
/*
 * walk.h — the one decode-and-validate walker of every protocol (proto/README.md).
 *
 * box_proto_unpack(): the row's size cap before anything is allocated,
 * protobuf_c_message_unpack() with an allocator capped at
 * BOX_PROTO_DECODE_FACTOR × the input + BOX_PROTO_DECODE_SLACK (a hostile
 * packet cannot make the decoder allocate more), protobuf_c_message_check()
 * (required fields), then box_proto_walk(): at every depth no unknown field,
 * no NULL submessage in a list, and every enum a declared value.
 * box_proto_decode() adds the row's validator. Every table of proto/ names
 * box_proto_decode as its walker; common/ipc.c reaches it only through the
 * table (common/ knows no message).
 * Returns 0 or negative errno: -EMSGSIZE (over the cap or the allocator's
 * budget), -EBADMSG (undecodable, unknown field, bad enum, too deep), -ENOMEM,
 * or the validator's -EINVAL/-ERANGE/-E2BIG. Pure; no logging.
 * Trusts: nothing; the bytes came from a peer.
 */
#ifndef BOX_PROTO_WALK_H
#define BOX_PROTO_WALK_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "ipc.h"

#define BOX_PROTO_MAX_DEPTH 16 /* our messages nest at most 5 deep */
/*
 * protobuf-c turns a few bytes of input into a struct of tens of bytes (a
 * repeated submessage costs a pointer and a struct): allow a linear
 * multiple of the input and no more.
 */
#define BOX_PROTO_DECODE_FACTOR 16u
#define BOX_PROTO_DECODE_SLACK (64u << 10)

/* No unknown field, no NULL list entry, declared enum values, at any depth. */
int box_proto_walk(const ProtobufCMessage *m);
/* Cap, capped unpack, check, walk: *ret owns the tree (box_msg_free). */
/*
 * protobuf_c_message_unpack of D with that capped allocator alone (no other
 * check): 0 and *RET (free it with protobuf_c_message_free_unpacked(m, NULL)),
 * -EMSGSIZE over the budget, -ENOMEM, -EBADMSG. For decoders of peer input
 * that is not an IPC message (proto/otlp_json.c).
 */
int box_proto_unpack_capped(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len,
			    ProtobufCMessage **ret);
int box_proto_unpack(const struct box_ipc_type *t, const uint8_t *buf, size_t len,
		     ProtobufCMessage **ret);
/* box_proto_unpack, then t->validate (when the row has one). */
int box_proto_decode(const struct box_ipc_type *t, const uint8_t *buf, size_t len,
		     ProtobufCMessage **ret);

#endif
