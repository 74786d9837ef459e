/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_client.c — a peer's side of its box-policyd channel (policy_client.h).
 *
 * Requests in flight are a list, oldest first: box-policyd answers one channel's
 * requests in order, so the head is the usual match and a reply's search is short.
 * A request's DecideRequests are what its permits will be: in event mode they are
 * packed when it is sent (the caller's message is gone when the reply comes), in
 * blocking mode they are borrowed from the caller, who waits.
 * Library code: negative errno, never logs.
 * Trusts: replies only once common/ipc.c and the protocol table validated them (caps,
 * fields, the sender's role, the channel's allow list); their ids and types are
 * matched here before anything is kept or called.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc_event.h"
#include "policy_client.h"
#include "policy_permits.h"
#include "policy_validate.h"
#include "proto_policy.h"

struct asked {
	uint8_t *data; /* a DecideRequest, packed (event mode) */
	size_t len;
	bool owed; /* policy_permits_outcome_owed: kept once permitted */
};

struct pending {
	struct pending *next;
	uint64_t id;
	uint32_t reply_type;
	policy_client_reply_fn fn;
	void *arg;
	const void *owner;
	bool cancelled;
	/* its DecideRequests: packed (asked) or borrowed (blocking mode) */
	size_t n_asked;
	Box__DecideRequest *const *borrowed;
	Box__DecideRequest *one; /* a lone DecideRequest borrowed (borrowed points here) */
	struct asked asked[];
};

struct policy_client {
	struct box_ipc_event *ev; /* event mode: owns the fd */
	struct box_ipc_chan *chan; /* the event's channel, or blocking mode's own */
	int fd;                    /* blocking mode's (owned) */
	bool broken;               /* ended (event mode) or failed (blocking): -EPIPE */
	bool records_later;        /* event mode: Records leave at the end of the loop pass */
	bool decides_later;        /* event mode: so do DecideRequests */
	struct policy_permits *permits;
	uint64_t next_id;
	struct pending *head, **tail;
	size_t in_flight;
	/*
	 * Decisions made in process and outcomes, packed PolicyShipItems in order,
	 * waiting for one PolicyShip (ship_first: its first decision's id). Blocking
	 * mode: sent when the caller flushes; event mode: at the end of the loop pass
	 * (ship_ev), or before anything asked later.
	 */
	uint64_t ship_gen, ship_first;
	size_t ship_n, ship_decides;
	/*
	 * The PolicyShip's bytes as they grow, one packed item (field 2) after another,
	 * behind room for the envelope's header: one packet, packed once, no copy.
	 */
	uint8_t *ship_buf; /* BOX_IPC_HEADER_MAX + BOX_IPC_PAYLOAD_MAX bytes, made at first use */
	size_t ship_len;   /* bytes after the header's room */
	struct event_base *base; /* event mode */
	struct event *ship_ev;    /* event mode: sends the PolicyShip (made at first use) */
	struct box_ipc_msg *delivering; /* event mode: the reply being delivered */
	policy_client_end_fn on_end;
	void *arg;
};

static uint32_t
reply_type_of(uint32_t type)
{
	switch (type) {
	case BOX__MSG_TYPE__MSG_DECIDE_REQUEST:
		return BOX__MSG_TYPE__MSG_DECIDE_REPLY;
	case BOX__MSG_TYPE__MSG_DECIDE_BATCH_REQUEST:
		return BOX__MSG_TYPE__MSG_DECIDE_BATCH_REPLY;
	case BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA:
		return BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY;
	case BOX__MSG_TYPE__MSG_POLICY_PROBE_REQUEST:
		return BOX__MSG_TYPE__MSG_POLICY_PROBE_REPLY;
	case BOX__MSG_TYPE__MSG_POLICY_LOCAL_REQUEST:
		return BOX__MSG_TYPE__MSG_POLICY_LOCAL;
	default:
		return 0;
	}
}

/* The DecideRequests MSG of TYPE carries (*n of them; none for the other requests). */
static Box__DecideRequest *const *
decides_of(uint32_t type, const ProtobufCMessage *const *msg, size_t *n)
{
	*n = 0;
	if (type == BOX__MSG_TYPE__MSG_DECIDE_REQUEST) {
		*n = 1;
		return (Box__DecideRequest *const *)msg;
	}
	if (type == BOX__MSG_TYPE__MSG_DECIDE_BATCH_REQUEST) {
		const Box__DecideBatchRequest *b = (const Box__DecideBatchRequest *)*msg;
		*n = b->n_requests;
		return b->requests;
	}
	return NULL;
}

static void
pending_free(struct pending *p)
{
	if (!p)
		return;
	for (size_t i = 0; !p->borrowed && i < p->n_asked; i++)
		free(p->asked[i].data);
	free(p);
}

/*
 * The permitted Decides of P's reply M, kept as permits (a cancelled request's never:
 * its outcome will not come). -EBADMSG: more replies than P asked.
 */
static int
settle(struct policy_client *c, const struct pending *p, const struct box_ipc_msg *m, char *why,
       size_t why_len)
{
	const Box__DecideReply *const *reps = NULL;
	size_t n = 0;
	if (m->type == BOX__MSG_TYPE__MSG_DECIDE_REPLY) {
		reps = (const Box__DecideReply *const *)&m->msg;
		n = 1;
	} else if (m->type == BOX__MSG_TYPE__MSG_DECIDE_BATCH_REPLY) {
		const Box__DecideBatchReply *b = (const Box__DecideBatchReply *)m->msg;
		reps = (const Box__DecideReply *const *)b->replies;
		n = b->n_replies;
	}
	if (n > p->n_asked) {
		snprintf(why, why_len, "%s of %zu replies to request %llu of %zu",
			 box_ipc_type_name(&box_proto_policy, m->type), n,
			 (unsigned long long)p->id, p->n_asked);
		return -EBADMSG;
	}
	for (size_t i = 0; !p->cancelled && i < n; i++) {
		if (!policy_client_permitted(reps[i]) ||
		    !(p->borrowed ? policy_permits_outcome_owed(p->borrowed[i]) : p->asked[i].owed))
			continue;
		int r = p->borrowed ? policy_permits_add(c->permits, p->id + i, p->borrowed[i])
				    : policy_permits_add_packed(c->permits, p->id + i,
								p->asked[i].data, p->asked[i].len);
		if (r < 0) {
			snprintf(why, why_len, "cannot keep the permit of request %llu",
				 (unsigned long long)(p->id + i));
			return r;
		}
	}
	return 0;
}

/* A request of TYPE: its id taken (a batch takes one per Decide), its Decides kept. */
static int
pending_new(struct policy_client *c, uint32_t type, const ProtobufCMessage *msg, bool borrow,
	    struct pending **out)
{
	size_t n;
	Box__DecideRequest *const *reqs = decides_of(type, &msg, &n);
	if (!reply_type_of(type) || n > BOX_POLICY_BATCH_MAX)
		return -EINVAL;
	struct pending *p = calloc(1, sizeof(*p) + (borrow ? 0 : n) * sizeof(struct asked));
	if (!p)
		return -ENOMEM;
	p->reply_type = reply_type_of(type);
	if (borrow) {
		/* (REQS may point at MSG itself: one Decide is kept here, not in this frame) */
		p->one = n == 1 ? reqs[0] : NULL;
		p->borrowed = n == 1 ? &p->one : reqs;
		p->n_asked = n;
	}
	for (size_t i = 0; !borrow && i < n; i++) {
		p->asked[i].data = policy_permits_pack(reqs[i], &p->asked[i].len);
		p->asked[i].owed = policy_permits_outcome_owed(reqs[i]);
		if (!p->asked[i].data) {
			pending_free(p);
			return -ENOMEM;
		}
		p->n_asked = i + 1;
	}
	p->id = c->next_id;
	c->next_id += n > 1 ? n : 1;
	*out = p;
	return 0;
}

static int
send_msg(struct policy_client *c, uint32_t type, uint64_t id, const ProtobufCMessage *msg)
{
	if (c->ev && ((c->records_later && (type == BOX__MSG_TYPE__MSG_RECORD_REQUEST ||
					    type == BOX__MSG_TYPE__MSG_RECORD_BATCH)) ||
		      (c->decides_later && type == BOX__MSG_TYPE__MSG_DECIDE_REQUEST)))
		return box_ipc_event_send_later(c->ev, type, id, msg, NULL, 0);
	if (c->ev)
		return box_ipc_event_send(c->ev, type, id, msg, NULL, 0);
	return box_ipc_chan_send(c->chan, type, id, msg, NULL, 0);
}

/* ---- event mode ------------------------------------------------------------------ */

static void
end(struct policy_client *c, int error, const char *why)
{
	c->ev = box_ipc_event_free(c->ev); /* (safe inside its callbacks: ipc_event.h) */
	c->chan = NULL;
	c->broken = true;
	if (c->on_end)
		c->on_end(c->arg, error, why);
}

static void
on_msg(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata)
{
	struct policy_client *c = userdata;
	char why[160] = "";
	(void)e;
	struct pending **pp = &c->head, *p = NULL;
	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->id == m->request_id) {
			p = *pp;
			break;
		}
	if (!p || p->reply_type != m->type) {
		snprintf(why, sizeof(why), "%s for request %llu, which %s",
			 box_ipc_type_name(&box_proto_policy, m->type),
			 (unsigned long long)m->request_id,
			 p ? "asked for another reply" : "is not in flight");
		end(c, -EBADMSG, why);
		return;
	}
	*pp = p->next;
	if (c->tail == &p->next)
		c->tail = pp;
	c->in_flight--;
	int r = settle(c, p, m, why, sizeof(why));
	if (r < 0) {
		pending_free(p);
		end(c, r, why);
		return;
	}
	if (!p->cancelled) {
		c->delivering = m;
		p->fn(p->arg, m->msg);
		c->delivering = NULL;
	}
	pending_free(p);
}

int
policy_client_reply_take_fd(struct policy_client *c)
{
	struct box_ipc_msg *m = c->delivering;
	if (!m || m->n_fds == 0 || m->fds[0] < 0)
		return -1;
	int fd = m->fds[0];
	m->fds[0] = -1;
	return fd;
}

static void
on_close(struct box_ipc_event *e, int error, void *userdata)
{
	(void)e;
	end(userdata, error, "");
}

/* ---- both ------------------------------------------------------------------------- */

/* A client for FD, whatever its way of waiting (made by its caller): on failure FD is closed. */
static int
client_new(int fd, const uint32_t *reply_types, unsigned n, struct policy_client **out)
{
	int r = -EINVAL;
	struct policy_client *c = NULL;
	if (n > 0 && n <= POLICY_CLIENT_REPLY_TYPES_MAX && reply_types) {
		r = -ENOMEM;
		c = calloc(1, sizeof(*c));
		if (c && (c->permits = policy_permits_new()))
			r = 0;
	}
	if (r < 0) {
		free(c);
		close(fd);
		return r;
	}
	c->fd = -1;
	c->next_id = 1;
	c->tail = &c->head;
	*out = c;
	return 0;
}

/* A peer's channel opens in `ready` (it never sees PolicyInit); only these replies may come. */
static int
client_ready(struct policy_client *c, const uint32_t *reply_types, unsigned n,
	     struct policy_client **out)
{
	int r = c->chan ? box_ipc_chan_set_state(c->chan, BOX_POLICY_READY) : -ENOMEM;
	if (r == 0)
		r = box_ipc_chan_allow(c->chan, reply_types, n);
	if (r < 0) {
		policy_client_free(c);
		return r;
	}
	*out = c;
	return 0;
}

int
policy_client_new_event(struct event_base *base, int fd, const uint32_t *reply_types,
			unsigned n, policy_client_end_fn on_end, void *arg,
			struct policy_client **out)
{
	struct policy_client *c = NULL;
	int r = client_new(fd, reply_types, n, &c);
	if (r < 0)
		return r;
	c->on_end = on_end;
	c->arg = arg;
	c->base = base;
	c->ev = box_ipc_event_new(base, fd, &box_proto_policy, BOX_POLICY_ROLE_POLICYD, on_msg,
				  on_close, c);
	if (!c->ev) {
		r = -errno;
		close(fd);
		policy_client_free(c);
		return r;
	}
	c->chan = box_ipc_event_chan(c->ev);
	return client_ready(c, reply_types, n, out);
}

int
policy_client_new_sync(int fd, const uint32_t *reply_types, unsigned n,
		       struct policy_client **out)
{
	struct policy_client *c = NULL;
	int r = client_new(fd, reply_types, n, &c);
	if (r < 0)
		return r;
	c->fd = fd;
	c->chan = box_ipc_chan_new(fd, &box_proto_policy, BOX_POLICY_ROLE_POLICYD);
	return client_ready(c, reply_types, n, out);
}

void
policy_client_free(struct policy_client *c)
{
	if (!c)
		return;
	while (c->head) {
		struct pending *p = c->head;
		c->head = p->next;
		pending_free(p);
	}
	if (c->ship_ev)
		event_free(c->ship_ev);
	if (c->ev)
		box_ipc_event_free(c->ev);
	else
		box_ipc_chan_free(c->chan);
	if (c->fd >= 0)
		close(c->fd);
	free(c->ship_buf);
	policy_permits_free(c->permits);
	free(c);
}

void
policy_client_end_text(int error, const char *why, char *buf, size_t len)
{
	if (error == -ECONNRESET)
		snprintf(buf, len, "box-policyd closed its channel");
	else if (why && why[0])
		snprintf(buf, len, "box-policyd sent %s (%s)", why, strerror(-error));
	else
		snprintf(buf, len, "the box-policyd channel failed: %s", strerror(-error));
}

void
policy_client_records_later(struct policy_client *c)
{
	c->records_later = c->ev != NULL;
}

void
policy_client_decides_later(struct policy_client *c)
{
	c->decides_later = c->ev != NULL;
}

int
policy_client_fd(const struct policy_client *c)
{
	return c->ev ? box_ipc_event_fd(c->ev) : c->fd;
}

uint64_t
policy_client_next_id(const struct policy_client *c)
{
	return c->next_id;
}

size_t
policy_client_in_flight(const struct policy_client *c)
{
	return c->in_flight;
}

size_t
policy_client_permits(const struct policy_client *c)
{
	return policy_permits_count(c->permits);
}

int
policy_client_ask(struct policy_client *c, uint32_t type, const ProtobufCMessage *msg,
		  policy_client_reply_fn fn, void *arg, const void *owner)
{
	if (!c->ev || !fn)
		return c->broken ? -EPIPE : -EINVAL;
	/* What was decided in process reaches box-policyd before anything asked now. */
	int r = policy_client_ship_flush(c);
	if (r < 0)
		return r;
	struct pending *p;
	r = pending_new(c, type, msg, false, &p);
	if (r < 0)
		return r;
	p->fn = fn;
	p->arg = arg;
	p->owner = owner;
	r = send_msg(c, type, p->id, msg);
	if (r < 0) {
		pending_free(p);
		return r;
	}
	*c->tail = p;
	c->tail = &p->next;
	c->in_flight++;
	return 0;
}

int
policy_client_decide(struct policy_client *c, const char *action, Box__PolicyField **in,
		     size_t n, policy_client_reply_fn fn, void *arg, const void *owner)
{
	Box__DecideRequest req = BOX__DECIDE_REQUEST__INIT;
	req.action = (char *)action;
	req.n_input = n;
	req.input = in;
	return policy_client_ask(c, BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &req.base, fn, arg, owner);
}

void
policy_client_cancel(struct policy_client *c, const void *owner)
{
	if (!c || !owner)
		return;
	for (struct pending *p = c->head; p; p = p->next)
		if (p->owner == owner)
			p->cancelled = true;
}

int
policy_client_call(struct policy_client *c, uint32_t type, const ProtobufCMessage *msg,
		   struct box_ipc_msg *reply)
{
	if (c->broken)
		return -EPIPE;
	if (c->ev)
		return -EINVAL;
	/* What was decided in process reaches box-policyd before anything asked now. */
	int r = policy_client_ship_flush(c);
	if (r < 0)
		return r;
	struct pending *p;
	r = pending_new(c, type, msg, true, &p);
	if (r < 0)
		return r;
	char why[160];
	r = send_msg(c, type, p->id, msg);
	while (r == 0 && (r = box_ipc_recv_wait(c->chan, reply, -1)) == -EINTR)
		r = 0;
	if (r > 0) {
		r = reply->type == p->reply_type && reply->request_id == p->id
			    ? settle(c, p, reply, why, sizeof(why))
			    : -EBADMSG;
		if (r < 0)
			box_ipc_msg_done(reply);
	}
	pending_free(p);
	if (r < 0) {
		c->broken = true; /* half a conversation: the caller attaches a new channel */
		return r;
	}
	return 0;
}

/* ---- decisions made in process ---------------------------------------------------- */

void
policy_client_ship_generation(struct policy_client *c, uint64_t generation)
{
	c->ship_gen = generation;
}

size_t
policy_client_shipping(const struct policy_client *c)
{
	return c->ship_n;
}

/* V as a protobuf varint at P; its length. */
static size_t
put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	do {
		p[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

/* Room for the generation (field 1) the flush appends: a tag and a varint. */
#define SHIP_TAIL 11u

int
policy_client_ship_flush(struct policy_client *c)
{
	if (c->ship_n == 0)
		return 0;
	if (c->broken || !c->chan)
		return -EPIPE;
	/* Field order does not matter to a decoder: the generation goes last. */
	uint8_t *body = c->ship_buf + BOX_IPC_HEADER_MAX;
	size_t len = c->ship_len;
	body[len++] = (1 << 3) | 0; /* generation, varint */
	len += put_varint(body + len, c->ship_gen);
	int r;
	if (c->ev) {
		r = box_ipc_event_send_body(c->ev, BOX__MSG_TYPE__MSG_POLICY_SHIP, c->ship_first,
					    body, len);
	} else {
		uint8_t h[BOX_IPC_HEADER_MAX];
		size_t hl = box_ipc_header(h, BOX__MSG_TYPE__MSG_POLICY_SHIP, c->ship_first, len);
		memcpy(body - hl, h, hl);
		r = box_ipc_send_packet(c->fd, body - hl, hl + len, NULL, 0,
					BOX_IPC_SEND_TIMEOUT_MS);
	}
	c->ship_n = c->ship_decides = 0;
	c->ship_first = 0; /* (a ship of outcomes alone names no decision) */
	c->ship_len = 0;
	if (r < 0 && c->ev)
		end(c, r, "cannot send a PolicyShip"); /* (the owner ends: fail closed) */
	else if (r < 0)
		c->broken = true; /* a decision made in process that never reached the log */
	return r;
}

static void
on_ship_due(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)policy_client_ship_flush(arg);
}

/* Event mode: the items waiting leave at the end of this loop pass (or earlier). */
static int
ship_schedule(struct policy_client *c)
{
	if (!c->ev)
		return 0;
	if (!c->ship_ev && !(c->ship_ev = event_new(c->base, -1, 0, on_ship_due, c)))
		return -ENOMEM;
	/* (activating an active event again changes nothing) */
	event_active(c->ship_ev, EV_TIMEOUT, 1);
	return 0;
}

/* The varint at P (at most N bytes) in *v: its length, or 0 when it does not end there. */
static size_t
get_varint(const uint8_t *p, size_t n, uint64_t *v)
{
	uint64_t x = 0;
	for (size_t i = 0; i < n && i < 10; i++) {
		x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*v = x;
			return i + 1;
		}
	}
	return 0;
}

/*
 * IT (SIZE bytes packed, small enough for one packet) packed into the ship's
 * buffer after what waits, at *at; it counts only once ship_commit says so (the
 * waiting items are sent first when it would not fit behind them).
 */
static int
ship_place(struct policy_client *c, const Box__PolicyShipItem *it, size_t size, uint8_t **at)
{
	size_t need = 1 + 10 + size;
	if (c->ship_n > 0 && c->ship_len + need + SHIP_TAIL > BOX_IPC_PAYLOAD_MAX) {
		int r = policy_client_ship_flush(c);
		if (r < 0)
			return r;
	}
	if (!c->ship_buf && !(c->ship_buf = malloc(BOX_IPC_HEADER_MAX + BOX_IPC_PAYLOAD_MAX)))
		return -ENOMEM;
	uint8_t *body = c->ship_buf + BOX_IPC_HEADER_MAX;
	size_t o = c->ship_len;
	body[o++] = (2 << 3) | 2; /* items, length-delimited */
	o += put_varint(body + o, size);
	box__policy_ship_item__pack(it, body + o);
	*at = body + o;
	return 0;
}

/* The item ship_place packed (SIZE bytes; ID: a decision's, 0: an outcome's) counts. */
static int
ship_commit(struct policy_client *c, size_t size, uint64_t id)
{
	if (id && c->ship_decides++ == 0)
		c->ship_first = id; /* the PolicyShip's id: its first decision's */
	size_t vl = 1;
	for (size_t v = size; v > 0x7f; v >>= 7)
		vl++;
	c->ship_len += 1 + vl + size; /* (the tag, the length's varint, the item) */
	c->ship_n++;
	return c->ship_n == BOX_POLICY_BATCH_MAX ? policy_client_ship_flush(c) : ship_schedule(c);
}

/*
 * Queue IT (packed now: the caller's strings need not outlive the call), a decision
 * named ID or an outcome (ID 0); sent when the next would not fit one packet or 256
 * wait. An item too big for a packet alone goes as a PolicyShip of its own through
 * the protocol table (fragmented).
 */
static int
ship_push(struct policy_client *c, const Box__PolicyShipItem *it, uint64_t id)
{
	size_t size = box__policy_ship_item__get_packed_size(it);
	size_t need = 1 + 10 + size;
	int r;
	if (need + SHIP_TAIL > BOX_IPC_PAYLOAD_MAX) {
		r = policy_client_ship_flush(c);
		if (r < 0)
			return r;
		Box__PolicyShipItem *one[1] = { (Box__PolicyShipItem *)it };
		Box__PolicyShip m = BOX__POLICY_SHIP__INIT;
		m.generation = c->ship_gen;
		m.items = one;
		m.n_items = 1;
		r = send_msg(c, BOX__MSG_TYPE__MSG_POLICY_SHIP, id, &m.base);
		if (r < 0)
			c->broken = true;
		return r;
	}
	uint8_t *at;
	r = ship_place(c, it, size, &at);
	return r < 0 ? r : ship_commit(c, size, id);
}

int
policy_client_ship_decide(struct policy_client *c, const Box__DecideRequest *req,
			  const Box__DecideReply *verdict)
{
	if (c->ship_gen == 0)
		return -EINVAL;
	if (c->broken || !c->chan)
		return -EPIPE;
	Box__PolicyShipItem it = BOX__POLICY_SHIP_ITEM__INIT;
	it.decide = (Box__DecideRequest *)req;
	it.has_verdict = it.has_cause = true;
	it.verdict = verdict->verdict;
	it.cause = verdict->cause;
	it.rules = verdict->rules;
	it.n_rules = verdict->n_rules;
	uint64_t id = c->next_id++;
	bool keep = policy_client_permitted(verdict) && policy_permits_outcome_owed(req);
	size_t size = box__policy_ship_item__get_packed_size(&it);
	int r;
	if (1 + 10 + size + SHIP_TAIL > BOX_IPC_PAYLOAD_MAX) {
		/* A PolicyShip of its own (ship_push): the permit packed apart. */
		if (keep && (r = policy_permits_add(c->permits, id, req)) < 0)
			return r;
		return ship_push(c, &it, id);
	}
	/*
	 * Packed once, into the ship's buffer: the item's first field is its decide
	 * (field 1, length-delimited), so the permit is those bytes. It is kept before
	 * the item counts, and before the caller acts on it, as a permit from a reply
	 * is (settle); an item whose permit cannot be kept is not shipped.
	 */
	uint8_t *at;
	r = ship_place(c, &it, size, &at);
	if (r < 0)
		return r;
	if (keep) {
		uint64_t len = 0;
		size_t vl = 0;
		if (size >= 2 && at[0] == ((1 << 3) | 2))
			vl = get_varint(at + 1, size - 1, &len);
		if (vl && len <= size - 1 - vl)
			r = policy_permits_add_bytes(c->permits, id, req->action, at + 1 + vl,
						     (size_t)len);
		else
			r = policy_permits_add(c->permits, id, req); /* (protobuf-c packs field 1 first) */
		if (r < 0)
			return r;
	}
	return ship_commit(c, size, id);
}

/*
 * An outcome goes in the PolicyShip: behind decisions made in process that wait (it keeps
 * its place), and in event mode whenever a generation is set — it would leave at the end
 * of the loop pass anyway, and one PolicyShip then carries a pass's decisions and outcomes.
 */
static bool
ship_records(const struct policy_client *c)
{
	return c->ship_n > 0 || (c->ev && c->ship_gen != 0);
}

/* REC's fields from O (the strings borrowed), naming the permit DECIDE_ID. */
static void
record_fill(Box__RecordRequest *rec, const struct policy_client_outcome *o, uint64_t decide_id)
{
	box__record_request__init(rec);
	rec->decide_id = decide_id;
	rec->kind = o->ok ? BOX__EVENT_KIND__EVENT_RESPONSE : BOX__EVENT_KIND__EVENT_ERROR;
	rec->action = (char *)o->action;
	if (o->ok && o->n_out) {
		rec->output = (Box__PolicyField **)o->out;
		rec->n_output = o->n_out;
	}
}

int
policy_client_record_like(struct policy_client *c, uint64_t like,
			  const struct policy_client_outcome *o)
{
	if (c->broken || !c->chan)
		return -EPIPE;
	uint64_t id;
	int r = policy_permits_take_like(c->permits, like, o->action, &id);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	Box__RecordRequest rec;
	record_fill(&rec, o, id);
	if (ship_records(c)) {
		/* Behind the decisions made in process: the outcome keeps its place. */
		Box__PolicyShipItem it = BOX__POLICY_SHIP_ITEM__INIT;
		it.record = &rec;
		r = ship_push(c, &it, 0);
	} else {
		r = send_msg(c, BOX__MSG_TYPE__MSG_RECORD_REQUEST, 0, &rec.base);
	}
	if (r < 0) {
		if (!c->ev)
			c->broken = true;
		return r;
	}
	return 1;
}

static int record_send(struct policy_client *c, const struct policy_client_outcome *o, size_t n,
		       bool queue);

int
policy_client_record(struct policy_client *c, const struct policy_client_outcome *o, size_t n)
{
	return record_send(c, o, n, false);
}

int
policy_client_record_queued(struct policy_client *c, const struct policy_client_outcome *o,
			    size_t n)
{
	if (c->ev || c->ship_gen == 0)
		return -EINVAL;
	return record_send(c, o, n, true);
}

/* policy_client_record (QUEUE false) and policy_client_record_queued (true). */
static int
record_send(struct policy_client *c, const struct policy_client_outcome *o, size_t n, bool queue)
{
	if (n > POLICY_CLIENT_RECORDS_MAX)
		return -E2BIG;
	if (c->broken || !c->chan)
		return -EPIPE;
	if (n == 0)
		return 0;
	Box__RecordRequest one, *recs = n == 1 ? &one : calloc(n, sizeof(*recs));
	Box__RecordRequest **recp = n == 1 ? NULL : calloc(n, sizeof(*recp));
	if (!recs || (n > 1 && !recp)) {
		if (recs != &one)
			free(recs);
		return -ENOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		Box__RecordRequest *rec = &recs[k];
		uint64_t id;
		/*
		 * The permit it is the outcome of: decided with the same action and input —
		 * the oldest equal to LIKE when the caller named one (no packing), else found
		 * by packing the input.
		 */
		int t = o[i].like ? policy_permits_take_like(c->permits, o[i].like, o[i].action, &id)
				  : -ENOENT;
		if (t == -ENOENT)
			t = policy_permits_take_match(c->permits, o[i].action, o[i].in, o[i].n_in,
						      &id);
		if (t < 0)
			continue;
		record_fill(rec, &o[i], id);
		if (recp)
			recp[k] = rec;
		k++;
	}
	int r = 0;
	if (ship_records(c) || queue) {
		/* Behind the decisions made in process: the outcomes keep their place. */
		for (size_t i = 0; r == 0 && i < k; i++) {
			Box__PolicyShipItem it = BOX__POLICY_SHIP_ITEM__INIT;
			it.record = &recs[i];
			r = ship_push(c, &it, 0);
		}
	} else if (k == 1) {
		r = send_msg(c, BOX__MSG_TYPE__MSG_RECORD_REQUEST, 0, &recs[0].base);
	} else if (k > 1) {
		Box__RecordBatch b = BOX__RECORD_BATCH__INIT;
		b.records = recp;
		b.n_records = k;
		r = send_msg(c, BOX__MSG_TYPE__MSG_RECORD_BATCH, 0, &b.base);
	}
	if (recs != &one)
		free(recs);
	free(recp);
	if (r < 0) {
		if (!c->ev)
			c->broken = true;
		return r;
	}
	return (int)k;
}
