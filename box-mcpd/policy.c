/*
 * policy.c — box-mcpd's side of its box-policyd channel (fd 4,
 * proto/policy.proto, box-mcpd in role `peer`; policyd logs it as source
 * box-mcpd).
 *
 * Many requests are in flight at once (DecideRequest, DecideBatchRequest,
 * PolicyToolSchema, PolicyProbeRequest), each with its own request id; a reply is matched by
 * id and by type, so a slow decision holds up only the frame that asked. A
 * session that goes away cancels its entries (pd_cancel_owner); their late
 * replies are then dropped. Records (outcome events) have no reply; each
 * names the permitted Decide it is the outcome of (proto/policy.proto): the
 * permits are kept (policy_permits.h, with box-policyd's bounds) and a
 * Record takes the oldest one of its action and input. A DecideBatch of N
 * takes N ids (its i-th request is named by its id + i). Losing
 * the channel ends box-mcpd (fail closed: a decision never defaults to
 * permit).
 * Trusts: policyd's replies were validated by the protocol table; a reply
 * with an unknown id or of the wrong type is a protocol error (fatal).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mcpd.h"
#include "policy_permits.h"
#include "proto_policy.h"

#define PD_ASKED_MAX 2 /* the Decides of one request kept until its answer (pd_decide_then) */

struct pd_req {
	struct pd_req *next;
	uint64_t id;
	uint32_t reply_type;
	pd_fn fn;
	void *arg;
	const void *owner; /* NULL once cancelled */
	/* its DecideRequests, packed: kept as permits if permitted */
	uint8_t *asked[PD_ASKED_MAX];
	size_t asked_len[PD_ASKED_MAX];
	size_t n_asked;
};

/* The permits without an outcome yet: what pd_record names. */
static struct policy_permits *permits;

/* In flight, oldest first (policyd answers in order: the head is the usual match). */
static struct pd_req *head, **tail = &head;
static uint64_t next_id = 1;

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
	default:
		return 0;
	}
}

static void
req_free(struct pd_req *d)
{
	for (size_t i = 0; i < d->n_asked; i++)
		free(d->asked[i]);
	free(d);
}

/* The Decides of D's request MSG (of TYPE), packed, to keep those permitted. */
static int
req_keep_asked(struct pd_req *d, uint32_t type, const ProtobufCMessage *msg)
{
	Box__DecideRequest *const *reqs = NULL;
	size_t n = 0;
	if (type == BOX__MSG_TYPE__MSG_DECIDE_REQUEST) {
		reqs = (Box__DecideRequest *const *)&msg;
		n = 1;
	} else if (type == BOX__MSG_TYPE__MSG_DECIDE_BATCH_REQUEST) {
		const Box__DecideBatchRequest *b = (const Box__DecideBatchRequest *)msg;
		reqs = b->requests;
		n = b->n_requests;
	}
	if (n > PD_ASKED_MAX)
		return -E2BIG;
	for (size_t i = 0; i < n; i++) {
		d->asked[i] = policy_permits_pack(reqs[i], &d->asked_len[i]);
		if (!d->asked[i])
			return -ENOMEM;
		d->n_asked = i + 1;
	}
	return 0;
}

int
pd_ask(uint32_t type, const ProtobufCMessage *msg, pd_fn fn, void *arg, const void *owner)
{
	if (!M.policyd)
		return -EPIPE;
	struct pd_req *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->id = next_id;
	d->reply_type = reply_type_of(type);
	d->fn = fn;
	d->arg = arg;
	d->owner = owner;
	int r = req_keep_asked(d, type, msg);
	/* A batch's requests are named by its id + i: it takes one id each. */
	next_id += d->n_asked > 1 ? d->n_asked : 1;
	if (r == 0)
		r = box_ipc_event_send(M.policyd, type, d->id, msg, NULL, 0);
	if (r < 0) {
		req_free(d);
		/* The queue is full or the channel is gone: policyd cannot keep up. Fail closed. */
		log_err_errno(r, "Cannot send %s to box-policyd",
			      box_ipc_type_name(&box_proto_policy, type));
		mcpd_exit(1);
		return r;
	}
	*tail = d;
	tail = &d->next;
	return 0;
}

int
pd_decide(const char *action, Box__PolicyField **in, size_t n_in, pd_fn fn, void *arg,
	  const void *owner)
{
	Box__DecideRequest req = BOX__DECIDE_REQUEST__INIT;
	req.action = (char *)action;
	req.n_input = n_in;
	req.input = in;
	return pd_ask(BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &req.base, fn, arg, owner);
}

int
pd_decide_then(const char *action1, Box__PolicyField **in1, size_t n_in1, const char *action2,
	       Box__PolicyField **in2, size_t n_in2, pd_fn fn, void *arg, const void *owner)
{
	Box__DecideRequest req[2] = { BOX__DECIDE_REQUEST__INIT, BOX__DECIDE_REQUEST__INIT };
	Box__DecideRequest *reqs[2] = { &req[0], &req[1] };
	req[0].action = (char *)action1;
	req[0].n_input = n_in1;
	req[0].input = in1;
	req[1].action = (char *)action2;
	req[1].n_input = n_in2;
	req[1].input = in2;
	Box__DecideBatchRequest b = BOX__DECIDE_BATCH_REQUEST__INIT;
	b.requests = reqs;
	b.n_requests = 2;
	b.has_until_deny = 1;
	b.until_deny = 1;
	return pd_ask(BOX__MSG_TYPE__MSG_DECIDE_BATCH_REQUEST, &b.base, fn, arg, owner);
}

void
pd_cancel_owner(const void *owner)
{
	for (struct pd_req *d = head; d; d = d->next)
		if (d->owner == owner)
			d->owner = NULL;
}

void
pd_record(bool ok, const char *action, Box__PolicyField **in, size_t n_in,
	  Box__PolicyField **out, size_t n_out)
{
	uint64_t id;
	if (!M.policyd)
		return;
	/* The permit it is the outcome of; none (forgotten by the bound): nothing to record. */
	int r = policy_permits_take_match(permits, action, in, n_in, &id);
	if (r < 0) {
		log_debug("No permit of %s to record an outcome of", action);
		return;
	}
	Box__RecordRequest rec = BOX__RECORD_REQUEST__INIT;
	rec.kind = ok ? BOX__EVENT_KIND__EVENT_RESPONSE : BOX__EVENT_KIND__EVENT_ERROR;
	rec.action = (char *)action;
	rec.decide_id = id;
	rec.n_output = ok ? n_out : 0;
	rec.output = ok ? out : NULL;
	r = box_ipc_event_send(M.policyd, BOX__MSG_TYPE__MSG_RECORD_REQUEST, 0, &rec.base,
				   NULL, 0);
	if (r < 0) {
		log_err_errno(r, "Cannot send a RecordRequest to box-policyd");
		mcpd_exit(1);
	}
}

static void
on_policyd_msg(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata)
{
	(void)e;
	(void)userdata;
	struct pd_req **pp = &head, *d = NULL;
	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->id == m->request_id) {
			d = *pp;
			break;
		}
	if (!d || d->reply_type != m->type) {
		log_err("box-policyd sent %s for request %llu, which is not in flight",
			box_ipc_type_name(&box_proto_policy, m->type),
			(unsigned long long)m->request_id);
		mcpd_exit(1);
		return;
	}
	*pp = d->next;
	if (tail == &d->next)
		tail = pp;
	/* The permits are kept before fn runs (it may record at once); a cancelled one's never. */
	for (size_t i = 0; d->owner && i < d->n_asked; i++) {
		const Box__DecideReply *rep =
			d->reply_type == BOX__MSG_TYPE__MSG_DECIDE_REPLY
				? (const Box__DecideReply *)m->msg
			: i < ((const Box__DecideBatchReply *)m->msg)->n_replies
				? ((const Box__DecideBatchReply *)m->msg)->replies[i]
				: NULL;
		if (!rep || rep->verdict != BOX__DECISION_VERDICT__VERDICT_PERMIT)
			continue;
		int r = policy_permits_add_packed(permits, d->id + i, d->asked[i], d->asked_len[i]);
		if (r < 0) {
			log_err_errno(r, "Cannot keep a permit");
			req_free(d);
			mcpd_exit(1);
			return;
		}
	}
	if (d->owner)
		d->fn(d->arg, m->msg);
	req_free(d);
}

static void
on_policyd_close(struct box_ipc_event *e, int error, void *userdata)
{
	(void)e;
	(void)userdata;
	if (error == -ECONNRESET)
		log_err("box-policyd closed its channel: exiting");
	else
		log_err_errno(error, "The box-policyd channel failed: exiting");
	M.policyd = box_ipc_event_free(M.policyd);
	mcpd_exit(1);
}

int
pd_start(int fd)
{
	permits = policy_permits_new();
	if (!permits)
		return -ENOMEM;
	M.policyd = box_ipc_event_new(M.base, fd, &box_proto_policy, BOX_POLICY_ROLE_POLICYD,
				      on_policyd_msg, on_policyd_close, NULL);
	if (!M.policyd)
		return -errno;
	/* A peer's channel opens in `ready` (it never sees PolicyInit). */
	int r = box_ipc_chan_set_state(box_ipc_event_chan(M.policyd), BOX_POLICY_READY);
	if (r < 0)
		return r;
	static const uint32_t types[] = { BOX__MSG_TYPE__MSG_DECIDE_REPLY,
					  BOX__MSG_TYPE__MSG_DECIDE_BATCH_REPLY,
					  BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY,
					  BOX__MSG_TYPE__MSG_POLICY_PROBE_REPLY };
	return box_ipc_chan_allow(box_ipc_event_chan(M.policyd), types, 4);
}
