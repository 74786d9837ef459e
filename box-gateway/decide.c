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
 * Trusts: policyd's replies, validated by the protocol table and matched by
 * the client.
 */
#include <errno.h>

#include "gateway.h"
#include "log.h"
#include "policy_client.h"
#include "proto_policy.h"

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

int
gw_decide_fields(const char *action, Box__PolicyField **in, size_t n, gw_decide_fn fn,
		 void *owner)
{
	if (!G.policyd)
		return -ENOTCONN;
	int r = policy_client_decide(G.policyd, action, in, n, fn, owner, owner);
	if (r < 0)
		log_warn_errno(r, "Cannot send a DecideRequest to box-policyd");
	return r;
}

void
gw_decide_cancel(const void *owner)
{
	policy_client_cancel(G.policyd, owner);
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
	if (G.policyd && event_base_once(G.base, -1, EV_TIMEOUT, on_decide_end, NULL, &soon) < 0)
		on_decide_end(-1, 0, NULL);
}

int
gw_decide_start(int fd)
{
	/* PolicyToolSchemaReply only when a remote MCP server may make us ask. */
	static const uint32_t types[] = { BOX__MSG_TYPE__MSG_DECIDE_REPLY,
					  BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY };
	int r = policy_client_new_event(G.base, fd, types, G.n_mcp ? 2 : 1, on_policyd_end, NULL,
					&G.policyd);
	/*
	 * Records ride with the next Decide, or leave at the end of the loop pass: one
	 * sendmmsg (seccomp.c allows it) instead of a sendmsg each, and one wakeup of
	 * box-policyd fewer per request at many connections.
	 */
	if (r == 0) {
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
