/*
 * decide.c — box-gateway's side of its box-policyd channel (fd 4,
 * proto/policy.proto, the gateway in role `peer`).
 *
 * Many DecideRequests are in flight at once, each with its own request id;
 * a reply is matched by id (policyd answers in order, the harness may not),
 * so a slow decision holds up only the connection that asked. A connection
 * that goes away cancels its entry; the late reply is then dropped. Records
 * (outcome events) have no reply; each names the permitted Decide it is the
 * outcome of (proto/policy.proto): the permits are kept (policy_permits.h,
 * with box-policyd's bounds) and a Record takes the oldest one of its action
 * and input. PolicyToolSchemas (mcp.c) are matched the
 * same way to their PolicyToolSchemaReply. Losing the channel ends the gateway
 * (main.c's close callback): a decision must never default to permit.
 * Trusts: policyd's replies were validated by the protocol table; a reply
 * with an unknown id is a protocol error.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gateway.h"
#include "ipc_event.h"
#include "log.h"
#include "policy_permits.h"
#include "proto_policy.h"

struct gw_decide {
	uint64_t id;
	gw_decide_fn fn;
	void *arg;
	uint8_t *asked; /* the DecideRequest, packed: kept if permitted */
	size_t asked_len;
	struct gw_decide *next;
};

/* The permits without an outcome yet: what gw_record names. */
static struct policy_permits *permits;

/* In flight, oldest first (replies come in order: the head is the usual match). */
static struct gw_decide *head, **tail = &head;
static size_t in_flight;
static uint64_t next_id = 1;

struct gw_decide *
gw_decide(const char *action, const struct policy_fields *in, gw_decide_fn fn, void *arg)
{
	return gw_decide_fields(action, (Box__PolicyField **)in->p, in->n, fn, arg);
}

struct gw_decide *
gw_decide_fields(const char *action, Box__PolicyField **in, size_t n, gw_decide_fn fn,
		 void *arg)
{
	if (!G.policyd)
		return NULL;
	struct gw_decide *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	Box__DecideRequest req = BOX__DECIDE_REQUEST__INIT;
	req.action = (char *)action;
	req.n_input = n;
	req.input = in;
	d->id = next_id++;
	d->fn = fn;
	d->arg = arg;
	d->asked = policy_permits_pack(&req, &d->asked_len);
	int r = d->asked ? box_ipc_event_send(G.policyd, BOX__MSG_TYPE__MSG_DECIDE_REQUEST, d->id,
					      &req.base, NULL, 0)
			 : -ENOMEM;
	if (r < 0) {
		log_warn_errno(r, "Cannot send a DecideRequest to box-policyd");
		free(d->asked);
		free(d);
		return NULL;
	}
	*tail = d;
	tail = &d->next;
	in_flight++;
	return d;
}

void
gw_decide_cancel(struct gw_decide *d)
{
	if (d)
		d->fn = NULL;
}

size_t
gw_decides_in_flight(void)
{
	return in_flight;
}

void
gw_record(bool ok, const char *action, const struct policy_fields *in, const struct policy_fields *out)
{
	uint64_t id;
	if (!G.policyd)
		return;
	/* The permit it is the outcome of; none (forgotten by the bound): nothing to record. */
	int r = policy_permits_take_match(permits, action, (Box__PolicyField *const *)in->p, in->n,
					  &id);
	if (r < 0) {
		log_debug("No permit of %s to record an outcome of", action);
		return;
	}
	Box__RecordRequest rec = BOX__RECORD_REQUEST__INIT;
	rec.kind = ok ? BOX__EVENT_KIND__EVENT_RESPONSE : BOX__EVENT_KIND__EVENT_ERROR;
	rec.action = (char *)action;
	rec.decide_id = id;
	if (out) {
		rec.n_output = out->n;
		rec.output = (Box__PolicyField **)out->p;
	}
	r = box_ipc_event_send(G.policyd, BOX__MSG_TYPE__MSG_RECORD_REQUEST, 0, &rec.base, NULL, 0);
	if (r < 0)
		log_warn_errno(r, "Cannot send a RecordRequest to box-policyd");
}

/* PolicyToolSchemas in flight (remote MCP servers' tools/list results). */
struct gw_schema {
	uint64_t id;
	gw_schema_fn fn;
	void *arg;
	struct gw_schema *next;
};
static struct gw_schema *schemas;

int
gw_tool_schema(const Box__PolicyToolSchema *m, gw_schema_fn fn, void *arg)
{
	if (!G.policyd)
		return -ENOTCONN;
	struct gw_schema *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->id = next_id++;
	q->fn = fn;
	q->arg = arg;
	int r = box_ipc_event_send(G.policyd, BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, q->id,
				   &m->base, NULL, 0);
	if (r < 0) {
		free(q);
		return r;
	}
	/* At the end: replies come in order. */
	struct gw_schema **pp = &schemas;
	while (*pp)
		pp = &(*pp)->next;
	*pp = q;
	return 0;
}

static void
on_schema_reply(struct box_ipc_msg *m)
{
	struct gw_schema **pp = &schemas, *q = NULL;
	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->id == m->request_id) {
			q = *pp;
			break;
		}
	if (!q) {
		log_err("box-policyd answered tool schema %llu, which is not in flight",
			(unsigned long long)m->request_id);
		gw_exit(1);
		return;
	}
	*pp = q->next;
	const Box__PolicyToolSchemaReply *rep = (const Box__PolicyToolSchemaReply *)m->msg;
	q->fn(q->arg, rep->ok, rep->error);
	free(q);
}

static void
on_policyd_msg(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata)
{
	(void)e;
	(void)userdata;
	if (m->type == BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY) {
		on_schema_reply(m);
		return;
	}
	if (m->type != BOX__MSG_TYPE__MSG_DECIDE_REPLY) {
		log_err("box-policyd sent %s, expected DecideReply",
			box_ipc_type_name(&box_proto_policy, m->type));
		gw_exit(1);
		return;
	}
	struct gw_decide **pp = &head, *d = NULL;
	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->id == m->request_id) {
			d = *pp;
			break;
		}
	if (!d) {
		log_err("box-policyd answered request %llu, which is not in flight",
			(unsigned long long)m->request_id);
		gw_exit(1);
		return;
	}
	*pp = d->next;
	if (tail == &d->next)
		tail = pp;
	in_flight--;
	const Box__DecideReply *rep = (const Box__DecideReply *)m->msg;
	bool permit = rep->verdict == BOX__DECISION_VERDICT__VERDICT_PERMIT;
	/* Kept before fn runs (it may record the outcome at once); a cancelled one never is. */
	int r = permit && d->fn ? policy_permits_add_packed(permits, d->id, d->asked, d->asked_len)
				: 0;
	if (r < 0) {
		log_err_errno(r, "Cannot keep a permit");
		free(d->asked);
		free(d);
		gw_exit(1);
		return;
	}
	if (d->fn)
		d->fn(d->arg, permit, rep->message);
	free(d->asked);
	free(d);
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
	gw_exit(1);
}

int
gw_decide_start(int fd)
{
	permits = policy_permits_new();
	if (!permits)
		return -ENOMEM;
	G.policyd = box_ipc_event_new(G.base, fd, &box_proto_policy, BOX_POLICY_ROLE_POLICYD,
				      on_policyd_msg, on_policyd_close, NULL);
	if (!G.policyd)
		return -errno;
	/* A peer's channel opens in `ready` (it never sees PolicyInit). */
	int r = box_ipc_chan_set_state(box_ipc_event_chan(G.policyd), BOX_POLICY_READY);
	if (r < 0)
		return r;
	/* PolicyToolSchemaReply only when a remote MCP server may make us ask. */
	static const uint32_t types[] = {BOX__MSG_TYPE__MSG_DECIDE_REPLY,
					 BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY};
	return box_ipc_chan_allow(box_ipc_event_chan(G.policyd), types, G.n_mcp ? 2 : 1);
}
