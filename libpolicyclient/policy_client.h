/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_client.h — a peer's side of its box-policyd channel (proto/policy.proto, the
 * asker in role `peer`): the one client box-gateway, box-mcpd and box-shell share.
 *
 * What it does for them, once:
 *   - opens the channel in `ready` (a peer never sees PolicyInit) and narrows it to the
 *     replies its owner may get (box_ipc_chan_allow);
 *   - numbers the requests: every request takes the next id of the channel, a
 *     DecideBatchRequest of N takes N (its i-th request is named by its id + i), as
 *     box-policyd's permits want (proto/policy_permits.h: a channel's ids increase);
 *   - matches each reply to its request by id and by type: a reply to no request in
 *     flight, of another type than its request's, or a DecideBatchReply with more
 *     replies than requests is a protocol error (-EBADMSG, the channel ends);
 *   - keeps each permitted Decide as a permit (policy_permits.h) before its reply's
 *     callback runs, so that an outcome recorded at once names it;
 *   - turns an outcome into a RecordRequest (a RecordBatch for several) naming the
 *     oldest permit of the same action and input; one with no permit (the bound forgot
 *     it, or it was decided on another channel) is not sent;
 *   - forgets the callbacks of an asker that went away (policy_client_cancel): the late
 *     reply is matched, its permits are not kept, and nothing is called.
 *
 * Two ways to wait. On a libevent loop (policy_client_new_event: box-gateway,
 * box-mcpd) many requests are in flight at once and each reply calls its callback;
 * the channel's end calls the end callback once, with the reason and a text naming
 * what came. Blocking (policy_client_new_sync: box-shell, one request at a time per
 * process) policy_client_call sends a request and waits for its reply, which it hands
 * back; any error there leaves the client broken (every later call fails): the caller
 * drops it and attaches a new channel.
 *
 * Never defaults to permit: every failure is a negative errno, and a reply whose
 * verdict is not PERMIT is no permit. Library code: never logs. Not thread-safe.
 * Trusts: box-policyd's replies only after the protocol table validated them (caps,
 * fields; common/ipc.c); nothing in a reply's id or type until matched here.
 */
#ifndef BOX_POLICY_CLIENT_H
#define BOX_POLICY_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "ipc.h"
#include "policy.pb-c.h"

struct policy_client;

/*
 * A reply (DecideReply, DecideBatchReply, PolicyToolSchemaReply, PolicyProbeReply:
 * the type of the request's reply), valid during the call.
 */
typedef void (*policy_client_reply_fn)(void *arg, const ProtobufCMessage *reply);
/*
 * The channel ended (event mode; called once, the client's event already gone):
 * ERROR is -ECONNRESET (box-policyd closed it), -EBADMSG (a reply that matches no
 * request), -ENOMEM (a permit could not be kept) or a protocol error of ipc.h. WHY
 * names what came ("" when nothing more is known). Every later request fails -EPIPE.
 * The callback may free the client.
 */
typedef void (*policy_client_end_fn)(void *arg, int error, const char *why);

/* What ended the channel (an end callback's ERROR and WHY), as one line for a log. */
void policy_client_end_text(int error, const char *why, char *buf, size_t len);

/* Replies one client may allow (policy_client_new_*'s reply_types). */
#define POLICY_CLIENT_REPLY_TYPES_MAX 4u
/* Outcomes one policy_client_record may send (one RecordBatch). */
#define POLICY_CLIENT_RECORDS_MAX 256u

/*
 * A client on FD (a SOCK_SEQPACKET socket, CLOEXEC; taken: freed with the client, on
 * failure too), accepting only the N reply types REPLY_TYPES (<=
 * POLICY_CLIENT_REPLY_TYPES_MAX, each a reply box-policyd sends a peer). Event mode:
 * watched on BASE (made non-blocking), ON_END called once when the channel ends. 0,
 * -EINVAL, -ENOMEM.
 */
int policy_client_new_event(struct event_base *base, int fd, const uint32_t *reply_types,
			    unsigned n, policy_client_end_fn on_end, void *arg,
			    struct policy_client **out);
int policy_client_new_sync(int fd, const uint32_t *reply_types, unsigned n,
			   struct policy_client **out);
/* Closes the fd; the callbacks of requests in flight are never called. NULL-tolerant. */
void policy_client_free(struct policy_client *c);
/*
 * Event mode: from now on a Record (policy_client_record) leaves at the end of the
 * loop pass it was made in, or with the next request, whichever comes first, together
 * with everything else queued by then (box_ipc_event_send_later: one sendmmsg, which
 * the caller's seccomp list must allow). Nothing overtakes anything: a Record still
 * reaches box-policyd before any request asked after it. Blocking mode: no effect.
 */
void policy_client_records_later(struct policy_client *c);
/*
 * Event mode: from now on a lone DecideRequest (policy_client_decide, or
 * policy_client_ask of one) leaves the same way, at the end of the loop pass or with
 * the next request sent at once: the Decides of the connections served in one pass
 * go out in one sendmmsg, in the order they were asked, ids increasing. The same
 * messages in the same order as when each was sent at once: box-policyd decides and
 * logs each exactly as before (a held @ask decision still holds only its own reply).
 * It waits no longer than the rest of the pass. Blocking mode: no effect.
 */
void policy_client_decides_later(struct policy_client *c);
int policy_client_fd(const struct policy_client *c);
/*
 * The id the next request will take: what a peer that answers ahead of the
 * request (box-shell's rehearsal decider, a test) names its reply with.
 */
uint64_t policy_client_next_id(const struct policy_client *c);
/* Requests sent and not answered (event mode). */
size_t policy_client_in_flight(const struct policy_client *c);
/* Permits kept without an outcome yet. */
size_t policy_client_permits(const struct policy_client *c);

/*
 * Event mode: send MSG as TYPE (DecideRequest, DecideBatchRequest, PolicyToolSchema,
 * PolicyProbeRequest); FN(ARG, reply) once its reply comes, unless OWNER (may be NULL:
 * never cancelled) is cancelled first. 0, -EINVAL (not a request with a reply, a batch
 * over BOX_POLICY_BATCH_MAX), -EPIPE (the channel ended), -ENOMEM, or the send's error
 * (-ENOBUFS: box-policyd does not keep up; -EMSGSIZE…): then FN is never called.
 */
int policy_client_ask(struct policy_client *c, uint32_t type, const ProtobufCMessage *msg,
		      policy_client_reply_fn fn, void *arg, const void *owner);
/* One DecideRequest of ACTION with input IN (N fields). */
int policy_client_decide(struct policy_client *c, const char *action, Box__PolicyField **in,
			 size_t n, policy_client_reply_fn fn, void *arg, const void *owner);
/* Every request of OWNER in flight: its reply will be dropped. OWNER NULL: nothing. */
void policy_client_cancel(struct policy_client *c, const void *owner);

/*
 * Blocking mode: send MSG as TYPE and wait for its reply (EINTR: waits on), which
 * *REPLY then owns (box_ipc_msg_done). Errors as policy_client_ask, and the receive's
 * (-ECONNRESET, -EBADMSG for a reply to anything else, -EMSGSIZE, …); after any error
 * but -EINVAL the client is broken (-EPIPE from then on).
 */
int policy_client_call(struct policy_client *c, uint32_t type, const ProtobufCMessage *msg,
		       struct box_ipc_msg *reply);

/*
 * Decisions made in process (docs/box-policy.5.md, "Decisions without a round
 * trip"; policy_local.h). box-shell, box-gateway and a supervised program's PID 1
 * (box-trampoline/supervise.c) decide the actions box-policyd's
 * PolicyLocal named with the same policy and hand each decision here: it takes
 * the next id, its permit is kept (so an outcome names it as any permit), and it
 * waits, in order with the outcomes recorded after it, for one PolicyShip (no
 * reply) that leaves when 256 items are queued, before any request
 * policy_client_call or policy_client_ask sends, at policy_client_ship_flush, and
 * in event mode at the end of the loop pass in which the first of them was queued
 * (an event activated then: it runs before events activated after it). Outcomes
 * recorded while anything waits queue behind it, and in event mode every outcome
 * recorded while a generation is set goes in the ship. GENERATION: PolicyLocal's, set
 * before the first decision and again, with nothing waiting, when another comes (0:
 * none: policy_client_ship_decide fails -EINVAL, outcomes go as RecordRequests).
 * ship_decide: VERDICT's verdict, cause and rules (its message is not shipped);
 * 0, -EINVAL, -ENOMEM, -EPIPE or a send's error (blocking mode: the client is then
 * broken; event mode: the channel ends, on_end).
 */
void policy_client_ship_generation(struct policy_client *c, uint64_t generation);
int policy_client_ship_decide(struct policy_client *c, const Box__DecideRequest *req,
			      const Box__DecideReply *verdict);
int policy_client_ship_flush(struct policy_client *c);
/* Items waiting for their PolicyShip. */
size_t policy_client_shipping(const struct policy_client *c);

/*
 * Inside a reply callback (event mode): the first fd that came with the reply, now
 * the caller's to close; -1 when none (or outside a callback).
 */
int policy_client_reply_take_fd(struct policy_client *c);

/* A DecideReply's verdict: permitted (verdict PERMIT). */
static inline bool
policy_client_permitted(const Box__DecideReply *r)
{
	return r && r->verdict == BOX__DECISION_VERDICT__VERDICT_PERMIT;
}

/* The outcome of a permitted Decide: decided as ACTION with IN; OUT is sent only when OK. */
struct policy_client_outcome {
	bool ok;
	/* the permit's id when the caller knows it (as policy_client_record_like's LIKE), else
	 * 0: the permit is then found by the action and input */
	uint64_t like;
	const char *action;
	Box__PolicyField *const *in;
	size_t n_in;
	Box__PolicyField *const *out;
	size_t n_out;
};

/*
 * Send the outcomes O[0..N) (N <= POLICY_CLIENT_RECORDS_MAX) in order, those whose
 * permit is kept: one RecordRequest, or one RecordBatch for several. Returns how many
 * were sent (0: none had a permit; nothing was sent), or the send's negative errno.
 */
int policy_client_record(struct policy_client *c, const struct policy_client_outcome *o,
			 size_t n);
/*
 * The same outcomes queued in the PolicyShip being filled (policy_client_ship_generation
 * set), in order, behind what waits there: they leave with its next flush, which is the
 * caller's to make (after the decisions it is about to add: one message for both).
 * Returns how many were queued, -EINVAL with no ship generation, or a send's errno (a
 * full ship leaves on its own).
 */
int policy_client_record_queued(struct policy_client *c, const struct policy_client_outcome *o,
				size_t n);
/*
 * The same for one outcome whose permit the caller knows: permit LIKE was decided
 * with O's action and input (O's IN is not read). It names the oldest kept permit
 * equal to LIKE, exactly the one policy_client_record would find, without packing
 * the input again. 1 sent, 0 LIKE is not kept (nothing sent: policy_client_record
 * then looks for a twin), or the send's negative errno.
 */
int policy_client_record_like(struct policy_client *c, uint64_t like,
			      const struct policy_client_outcome *o);

#endif
