/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_permits.h — the permitted Decides of one policy channel that have no
 * outcome yet (proto/policy.proto: RecordRequest.decide_id).
 *
 * box-policyd keeps one set per channel: a Record must name one of them, and
 * its event takes the action and input from that copy, never from the Record.
 * A daemon that asks (box-gateway, box-mcpd, box-shell) keeps one for its own
 * channel, to find the id its Record names from the action and input it
 * decided (policy_permits_take_match: the oldest such permit).
 *
 * Bounds: at most BOX_POLICY_PERMITS_MAX permits and BOX_POLICY_PERMIT_BYTES_MAX
 * bytes of packed DecideRequests per set; keeping one more forgets the oldest
 * (a permit its peer never records, such as a walk's entry a command never
 * opened, must not stop a long-running peer, and the newest permits are those
 * whose outcomes are still to come). The highest id forgotten is kept: a
 * Record naming it or a lower id that is not kept is stale (-ESTALE), told
 * apart from an id that was never a permit (-ENOENT), because the ids of one
 * channel's Decides increase (policy_permits_next refuses any other).
 *
 * Pure: negative errno, no logging. Not thread-safe.
 * Trusts: nothing in the ids; the DecideRequests the caller keeps were
 * validated (or built) by it.
 */
#ifndef BOX_POLICY_PERMITS_H
#define BOX_POLICY_PERMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.pb-c.h"

#define BOX_POLICY_PERMITS_MAX 16384u
#define BOX_POLICY_PERMIT_BYTES_MAX (4u << 20)

struct policy_permits;

/*
 * Whether a permitted REQ will have an outcome (a Record naming it), so is kept at all: every
 * one but a per-address net:connect (an input field "ip"), one of the decisions box-gateway
 * asks for each address of a connection whose outcome is its net:connect {host, port}'s
 * (docs/box-policy.5.md, *Outcomes*). Both ends of a channel ask this, so neither keeps what
 * no Record will name.
 */
bool policy_permits_outcome_owed(const Box__DecideRequest *req);

/* An empty set (NULL: out of memory). */
struct policy_permits *policy_permits_new(void);
void policy_permits_free(struct policy_permits *s);

/*
 * A Decide named FIRST is coming, with N requests (a batch: FIRST .. FIRST+N-1).
 * 0, or -EPROTO: FIRST is not above every id an earlier Decide of the channel
 * had, or the range wraps.
 */
int policy_permits_next(struct policy_permits *s, uint64_t first, size_t n);

/*
 * Keep REQ (a copy: packed) as the permit ID, forgetting the oldest ones while
 * the set is over its bounds. 0, -ENOMEM, -EEXIST (ID is kept already).
 */
int policy_permits_add(struct policy_permits *s, uint64_t id, const Box__DecideRequest *req);

/*
 * A peer that keeps what it asked until the answer comes: REQ packed
 * (malloc'd; *len its size; NULL: out of memory), then, once permitted,
 * policy_permits_add_packed (which copies it).
 */
uint8_t *policy_permits_pack(const Box__DecideRequest *req, size_t *len);
/*
 * The same with the request already packed (DATA, LEN bytes: a DecideRequest whose
 * action is ACTION, which the caller packed itself): copied, never unpacked.
 */
int policy_permits_add_bytes(struct policy_permits *s, uint64_t id, const char *action,
			     const uint8_t *data, size_t len);
int policy_permits_add_packed(struct policy_permits *s, uint64_t id, const uint8_t *data,
			      size_t len);

/*
 * Permit ID: 0 when kept (*action, may be NULL: its action, valid while it is
 * kept); -ESTALE: not kept but at or below the highest id forgotten;
 * -ENOENT: never a permit of this set, or recorded already.
 */
int policy_permits_find(struct policy_permits *s, uint64_t id, const char **action);

/*
 * Take permit ID out of the set: *out is its DecideRequest (free with
 * box__decide_request__free_unpacked(*out, NULL)). Errors as
 * policy_permits_find, and -ENOMEM (the permit stays kept then).
 */
int policy_permits_take(struct policy_permits *s, uint64_t id, Box__DecideRequest **out);

/*
 * Take permit ID out of the set without unpacking it: for a caller that still
 * holds the DecideRequest it kept (box-policyd, a PolicyShip's record of a
 * decision of the same ship). Errors as policy_permits_find.
 */
int policy_permits_drop(struct policy_permits *s, uint64_t id);

/*
 * Take the oldest kept permit whose action is ACTION and whose input is exactly
 * IN (N fields, the same names, values and order as decided): *id its id.
 * 0, -ENOENT (none), -ENOMEM.
 */
int policy_permits_take_match(struct policy_permits *s, const char *action,
			      Box__PolicyField *const *in, size_t n, uint64_t *id);

/*
 * policy_permits_take_match for a caller that knows permit ID was decided with the
 * input it is recording (its action ACTION): takes the oldest kept permit equal to
 * that one (ID itself, or an older twin), without packing the input again: *id its id.
 * 0, -ENOENT (ID is not kept, or its action is not ACTION), -ENOMEM.
 */
int policy_permits_take_like(struct policy_permits *s, uint64_t like, const char *action,
			     uint64_t *id);

/* Permits kept, and the bytes of their packed Decides. */
size_t policy_permits_count(const struct policy_permits *s);
size_t policy_permits_bytes(const struct policy_permits *s);

#endif
