/* SPDX-License-Identifier: Apache-2.0 */
/*
 * otlp_json.h — OTLP's two HTTP encodings of proto/otlp.proto's messages,
 * bounded for an agent's input: the OTLP/JSON parser and printer (the
 * proto3 JSON mapping as OTLP specifies it: lowerCamelCase keys — the
 * original snake_case accepted too — 64-bit integers as decimal strings,
 * enums as numbers, traceId / spanId / parentSpanId as hex, other bytes as
 * base64, unknown keys ignored), and the nesting check the binary
 * encoding needs before protobuf-c unpacks it (its recursion has no bound).
 *
 * Works from the descriptors alone, so one parser serves logs, traces and
 * metrics. Every peer-controlled quantity has a cap: the nesting depth
 * (OTLP_NEST_MAX objects and arrays, or embedded messages), and the bytes
 * allocated for one parse (the caller's budget). A parse never
 * half-succeeds: on error nothing is returned.
 *
 * Library code: negative errno (-EBADMSG malformed, -E2BIG over a cap,
 * -ENOMEM), never logs. What is returned is freed with
 * protobuf_c_message_free_unpacked(m, NULL).
 * Trusts: nothing in the input; the descriptors are the build's own.
 */
#ifndef BOX_OTLP_JSON_H
#define BOX_OTLP_JSON_H

#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

#include "otlp.pb-c.h"

/* Nested JSON values (objects, arrays) or embedded messages, at most. */
#define OTLP_NEST_MAX 64

/*
 * TEXT (LEN bytes, not NUL-terminated) as one message of D: 0 and *RET, or
 * -EBADMSG (not JSON, a value of the wrong type or out of its range, a
 * string that is not UTF-8, a known key twice, two members of one oneof,
 * data after the value), -E2BIG (nesting over OTLP_NEST_MAX, or more than
 * ALLOC_MAX bytes allocated), -ENOMEM.
 */
int otlp_json_parse(const ProtobufCMessageDescriptor *d, const char *text, size_t len,
		    size_t alloc_max, ProtobufCMessage **ret);

/*
 * M in OTLP/JSON (no whitespace, fields with their default value left out;
 * a string that is not UTF-8 has each bad byte as U+FFFD; unknown fields
 * have no JSON spelling and are left out): 0 with *OUT (malloc'd,
 * NUL-terminated, *LEN bytes), -E2BIG past MAX bytes, -ENOMEM.
 */
int otlp_json_print(const ProtobufCMessage *m, size_t max, char **out, size_t *len);

/*
 * Is DATA (the binary encoding of a D) nested at most OTLP_NEST_MAX
 * messages deep, with well-formed tags and lengths? 0, -EBADMSG, -E2BIG.
 * Call before protobuf_c_message_unpack.
 */
int otlp_pb_check(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len);
/*
 * DATA (LEN bytes) as the binary encoding of a D: otlp_pb_check, then
 * protobuf-c's decoder with an allocator capped at 16 × LEN + 64 KiB
 * (proto/walk.c). 0 and *RET, -EBADMSG, -E2BIG (nesting or memory), -ENOMEM.
 * Unknown fields are kept.
 */
int otlp_pb_unpack(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len,
		   ProtobufCMessage **ret);

/*
 * Tag every resource of REQ (an ExportLogsServiceRequest,
 * ExportTraceServiceRequest or ExportMetricsServiceRequest; a missing
 * resource is made) as the agent's of box BOX (id ID): every attribute
 * whose key starts with "box." is dropped — the agent may not speak for
 * box — and box.name, box.id and box.source = "agent" are added. 0,
 * -EINVAL (another message), -ENOMEM (REQ is then still whole, possibly
 * with some resources tagged).
 */
int otlp_tag_agent(ProtobufCMessage *req, const char *box, const char *id);

#endif
