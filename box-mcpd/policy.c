/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy.c — box-mcpd's side of its box-policyd channel (fd 4,
 * proto/policy.proto, box-mcpd in role `peer`; policyd logs it as source
 * box-mcpd), on the shared client (libpolicyclient/policy_client.h: ids,
 * matching by id and type, permits, Records).
 *
 * Many requests are in flight at once (DecideRequest, DecideBatchRequest,
 * PolicyToolSchema, PolicyProbeRequest), so a slow decision holds up only the
 * frame that asked. A session that goes away cancels its entries
 * (pd_cancel_owner); their late replies are then dropped. A Record names the
 * permitted Decide it is the outcome of. Fail closed: a request that cannot be
 * sent, a Record that cannot, losing the channel or a reply that matches
 * nothing asked ends box-mcpd (a decision never defaults to permit). This file
 * logs; the client does not.
 * Trusts: policyd's replies, validated by the protocol table and matched by
 * the client.
 */
#include <errno.h>

#include "log.h"
#include "mcpd.h"
#include "policy_client.h"
#include "proto_policy.h"

int
pd_ask(uint32_t type, const ProtobufCMessage *msg, pd_fn fn, void *arg, const void *owner)
{
	if (!M.policyd)
		return -EPIPE;
	int r = policy_client_ask(M.policyd, type, msg, fn, arg, owner);
	if (r < 0) {
		/* The queue is full or the channel is gone: policyd cannot keep up. Fail closed. */
		log_err_errno(r, "Cannot send %s to box-policyd",
			      box_ipc_type_name(&box_proto_policy, type));
		mcpd_exit(1);
	}
	return r;
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
	policy_client_cancel(M.policyd, owner);
}

void
pd_record(bool ok, const char *action, Box__PolicyField **in, size_t n_in,
	  Box__PolicyField **out, size_t n_out)
{
	if (!M.policyd)
		return;
	struct policy_client_outcome o = { .ok = ok, .action = action, .in = in, .n_in = n_in,
					   .out = out, .n_out = n_out };
	int r = policy_client_record(M.policyd, &o, 1);
	/* None: the permit it is the outcome of was forgotten by the bound; nothing to record. */
	if (r == 0)
		log_debug("No permit of %s to record an outcome of", action);
	if (r < 0) {
		log_err_errno(r, "Cannot send a RecordRequest to box-policyd");
		mcpd_exit(1);
	}
}

static void
on_policyd_end(void *arg, int error, const char *why)
{
	char text[256];
	(void)arg;
	policy_client_end_text(error, why, text, sizeof(text));
	log_err("%s: exiting", text);
	policy_client_free(M.policyd); /* (allowed in its end callback) */
	M.policyd = NULL;
	mcpd_exit(1);
}

int
pd_start(int fd)
{
	static const uint32_t types[] = { BOX__MSG_TYPE__MSG_DECIDE_REPLY,
					  BOX__MSG_TYPE__MSG_DECIDE_BATCH_REPLY,
					  BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY,
					  BOX__MSG_TYPE__MSG_POLICY_PROBE_REPLY };
	return policy_client_new_event(M.base, fd, types, 4, on_policyd_end, NULL, &M.policyd);
}
