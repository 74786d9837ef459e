/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decide.c — box-gateway's side of its box-policyd channel (fd 4,
 * proto/policy.proto, the gateway in role `peer`), on the shared client
 * (libpolicyclient/policy_client.h: ids, matching, permits, Records).
 *
 * Many DecideRequests are in flight at once, each with its own request id, so
 * a slow decision holds up only the connection that asked. A connection that
 * goes away cancels what it asked (its object is the owner); the late reply is
 * then dropped. A Record names the permitted Decide it is the outcome of. The
 * PolicyToolSchemas of remote MCP servers (mcp.c) go the same way. Records and
 * DecideRequests leave at the end of the loop pass, together and in the order made
 * (policy_client_records_later, policy_client_decides_later); a PolicyToolSchema
 * takes what waits with it. Nothing leaves after a request asked later. Losing the
 * channel, or a reply that matches nothing asked, ends the gateway: a
 * decision must never default to permit. This file logs; the client does not.
 *
 * Decisions without a round trip (docs/box-policy.5.md): box-policyd's PolicyLocal
 * (asked for at start, and again when its generation page moves) names which of
 * net:connect and http:request need no history under the policy in force. Those
 * are decided here with that policy (libpolicyclient/policy_local.h) and shipped
 * (PolicyShip), where box-policyd decides each again, logs it and ends the channel
 * on any disagreement. The asker still hears at the end of the loop pass, never
 * inside gw_decide (the callers set their state after it returns), and the ship
 * leaves before that: a decision's line is on its way to box-policyd before the
 * connection or request it permits or refuses goes anywhere.
 * Trusts: policyd's replies, validated by the protocol table and matched by
 * the client; its PolicyLocal and page (policy_local.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "gateway.h"
#include "log.h"
#include "policy_client.h"
#include "policy_local.h"
#include "proto_policy.h"

/* The gateway's actions box-policyd may let it decide in process. */
static const char *const local_names[] = { "net:connect", "http:request" };
static struct policy_local local;
static struct policy_local_verdict local_verdict;
static bool local_asked; /* a PolicyLocalRequest is in flight */

/* A decision made in process, told to its asker at the end of the loop pass. */
struct local_told {
	struct local_told *next;
	gw_decide_fn fn;
	void *owner;
	bool cancelled;
	bool permit;
	Box__DecisionCause cause;
	char message[]; /* a denial's */
};
static struct local_told *told_head, **told_tail = &told_head;
static struct local_told *telling; /* the ones on_told is calling back now */
static struct event *told_ev;

bool
gw_verdict(const ProtobufCMessage *reply, const char **message)
{
	const Box__DecideReply *rep = (const Box__DecideReply *)reply;
	*message = rep->message;
	return policy_client_permitted(rep);
}

int
gw_decide(const char *action, const struct policy_fields *in, gw_decide_fn fn, void *owner)
{
	return gw_decide_fields(action, (Box__PolicyField **)in->p, in->n, fn, owner);
}

/* PolicyLocal: the policy to decide with in process, and the page that says when it changes. */
static void
on_local(void *arg, const ProtobufCMessage *reply)
{
	const Box__PolicyLocal *m = (const Box__PolicyLocal *)reply;
	char why[256];
	(void)arg;
	local_asked = false;
	int fd = policy_client_reply_take_fd(G.policyd);
	if (fd >= 0 && !local.page) {
		int r = policy_local_map(&local, fd);
		if (r < 0)
			log_warn_errno(r, "Cannot map box-policyd's generation page: every "
					  "decision is asked");
	}
	safe_close(fd);
	if (!local.page)
		return; /* (nothing would say when the policy changed) */
	/* (nothing made with the generation before waits: local_ask shipped it) */
	if (policy_client_ship_flush(G.policyd) < 0)
		return;
	if (policy_local_set(&local, m, why, sizeof(why)) < 0) {
		log_warn("%s: every decision is asked", why);
		policy_local_drop(&local);
		return;
	}
	/* (the scratch was made for the policy before) */
	policy_local_verdict_reset(&local_verdict);
	policy_client_ship_generation(G.policyd, local.generation);
	log_debug("Policy generation %llu: %zu of net:connect and http:request decided in "
		  "process", (unsigned long long)local.generation, m->n_actions);
}

/* Ask box-policyd what may be decided in process (what waits to be shipped leaves first). */
static void
local_ask(void)
{
	if (local_asked)
		return;
	Box__PolicyLocalRequest q = BOX__POLICY_LOCAL_REQUEST__INIT;
	int r = policy_client_ask(G.policyd, BOX__MSG_TYPE__MSG_POLICY_LOCAL_REQUEST, &q.base,
				  on_local, NULL, NULL);
	if (r < 0)
		log_warn_errno(r, "Cannot ask box-policyd what the gateway may decide in process");
	else
		local_asked = true;
}

/* The decisions made in process this loop pass: shipped first, then told. */
static void
on_told(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	if (G.policyd && policy_client_ship_flush(G.policyd) < 0)
		return; /* (the channel ended: the gateway is exiting) */
	telling = told_head;
	told_head = NULL;
	told_tail = &told_head;
	while (telling) {
		struct local_told *t = telling;
		telling = t->next;
		if (!t->cancelled) {
			Box__DecideReply rep = BOX__DECIDE_REPLY__INIT;
			rep.verdict = t->permit ? BOX__DECISION_VERDICT__VERDICT_PERMIT
						: BOX__DECISION_VERDICT__VERDICT_DENY;
			rep.cause = t->cause;
			rep.message = t->message;
			t->fn(t->owner, &rep.base);
		}
		free(t);
	}
}

/*
 * Decide ACTION with IN in process and ship it; FN hears at the end of the loop
 * pass. 1: decided; 0: not here (the caller asks box-policyd); negative errno: not
 * decided nor shipped.
 */
static int
local_decide(const char *action, Box__PolicyField **in, size_t n, gw_decide_fn fn, void *owner)
{
	if (policy_local_moved(&local)) {
		/*
		 * A reload: nothing in process until box-policyd says what the new policy
		 * allows. What waits leaves under the old generation; outcomes go as
		 * RecordRequests meanwhile (a ship of the old one would be refused once we ask).
		 */
		policy_local_drop(&local);
		if (policy_client_ship_flush(G.policyd) < 0)
			return -EPIPE;
		policy_client_ship_generation(G.policyd, 0);
		local_ask();
	}
	if (!policy_local_ok(&local, action))
		return 0;
	if (!told_ev && !(told_ev = event_new(G.base, -1, 0, on_told, NULL)))
		return -ENOMEM;
	Box__DecideRequest req = BOX__DECIDE_REQUEST__INIT;
	req.action = (char *)action;
	req.input = in;
	req.n_input = n;
	int r = policy_local_decide(&local, &local_verdict, &req);
	if (r < 0)
		return r;
	const Box__DecideReply *claim = &local_verdict.claim;
	bool permit = policy_client_permitted(claim);
	const char *msg = permit ? "" : policy_local_message(&local_verdict);
	struct local_told *t = malloc(sizeof(*t) + strlen(msg) + 1);
	if (!t)
		return -ENOMEM;
	/* (the ship's event is activated here, before told_ev: it runs first) */
	r = policy_client_ship_decide(G.policyd, &req, claim);
	if (r < 0) {
		free(t);
		return r;
	}
	*t = (struct local_told){ .fn = fn, .owner = owner, .permit = permit,
				  .cause = claim->cause };
	memcpy(t->message, msg, strlen(msg) + 1);
	*told_tail = t;
	told_tail = &t->next;
	event_active(told_ev, EV_TIMEOUT, 1);
	return 1;
}

int
gw_decide_fields(const char *action, Box__PolicyField **in, size_t n, gw_decide_fn fn,
		 void *owner)
{
	if (!G.policyd)
		return -ENOTCONN;
	int r = local_decide(action, in, n, fn, owner);
	if (r > 0)
		return 0;
	/* (nothing was shipped: box-policyd decides it) */
	if (r < 0)
		log_warn_errno(r, "Cannot decide %s in process: asking box-policyd", action);
	if (!G.policyd)
		return -ENOTCONN;
	r = policy_client_decide(G.policyd, action, in, n, fn, owner, owner);
	if (r < 0)
		log_warn_errno(r, "Cannot send a DecideRequest to box-policyd");
	return r;
}

void
gw_decide_cancel(const void *owner)
{
	policy_client_cancel(G.policyd, owner);
	for (struct local_told *t = told_head; t; t = t->next)
		if (t->owner == owner)
			t->cancelled = true;
	for (struct local_told *t = telling; t; t = t->next)
		if (t->owner == owner)
			t->cancelled = true;
}

void
gw_record(bool ok, const char *action, const struct policy_fields *in, const struct policy_fields *out)
{
	if (!G.policyd)
		return;
	struct policy_client_outcome o = {
		.ok = ok, .action = action, .in = (Box__PolicyField *const *)in->p, .n_in = in->n,
		.out = out ? (Box__PolicyField *const *)out->p : NULL, .n_out = out ? out->n : 0,
	};
	int r = policy_client_record(G.policyd, &o, 1);
	/* None: the permit it is the outcome of was forgotten by the bound; nothing to record. */
	if (r == 0)
		log_debug("No permit of %s to record an outcome of", action);
	else if (r < 0)
		log_warn_errno(r, "Cannot send a RecordRequest to box-policyd");
}

int
gw_tool_schema(const Box__PolicyToolSchema *m, gw_decide_fn fn, void *arg)
{
	if (!G.policyd)
		return -ENOTCONN;
	return policy_client_ask(G.policyd, BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &m->base, fn,
				 arg, NULL);
}

static void
on_policyd_end(void *arg, int error, const char *why)
{
	char text[256];
	(void)arg;
	policy_client_end_text(error, why, text, sizeof(text));
	log_err("%s: exiting", text);
	gw_exit(1);
}

/* The Records queued for the end of this loop pass go out first; then the channel closes. */
static void
on_decide_end(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	policy_client_free(G.policyd);
	G.policyd = NULL;
}

void
gw_decide_end(void)
{
	struct timeval soon = { 0, 100 * 1000 };
	if (G.policyd)
		(void)policy_client_ship_flush(G.policyd);
	if (G.policyd && event_base_once(G.base, -1, EV_TIMEOUT, on_decide_end, NULL, &soon) < 0)
		on_decide_end(-1, 0, NULL);
}

int
gw_decide_start(int fd)
{
	/* PolicyToolSchemaReply only when a remote MCP server may make us ask. */
	static const uint32_t types[] = { BOX__MSG_TYPE__MSG_DECIDE_REPLY,
					  BOX__MSG_TYPE__MSG_POLICY_LOCAL,
					  BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY };
	int r = policy_client_new_event(G.base, fd, types, G.n_mcp ? 3 : 2, on_policyd_end, NULL,
					&G.policyd);
	/*
	 * Records ride with the next Decide, or leave at the end of the loop pass: one
	 * sendmmsg (seccomp.c allows it) instead of a sendmsg each, and one wakeup of
	 * box-policyd fewer per request at many connections.
	 */
	if (r == 0) {
		policy_local_init(&local, local_names, sizeof(local_names) / sizeof(local_names[0]));
		policy_local_verdict_init(&local_verdict);
		local_ask();
		policy_client_records_later(G.policyd);
		/*
		 * And so do the Decides of the connections served in one loop pass: with
		 * many connections one sendmmsg carries several, and box-policyd wakes once
		 * for them (each still its own DecideRequest, decided and logged alone).
		 */
		policy_client_decides_later(G.policyd);
	}
	return r;
}
