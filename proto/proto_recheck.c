/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto_recheck.c — the table of the recheck protocol (proto_recheck.h).
 * Every row: type, descriptor, validator (validate.c: the request's sections
 * are checked as a BoxSpec's are), size caps, fds, who sends it, the channel
 * states in which it may pass and the state it leads to. Linked only into
 * boxd and box-recheck.
 * Trusts: nothing; this is data the receiver enforces.
 */
#include <errno.h>

#include "proto_recheck.h"
#include "recheck_shared.h"
#include "validate.h"
#include "walk.h"

#define S(x) BOX_IPC_BIT(BOX_RECHECK_##x)
#define FROM(x) BOX_IPC_BIT(BOX_RECHECK_ROLE_##x)

static int
recheck_request_row(const ProtobufCMessage *m)
{
	return box_validate_recheck_request((const Box__RecheckRequest *)m);
}

static int
recheck_reply_row(const ProtobufCMessage *m)
{
	return box_validate_recheck_reply((const Box__RecheckReply *)m);
}

/* The reply says how many fds it carries (0: refused; 5 or 6: the state files). */
static int
recheck_reply_fds(const ProtobufCMessage *m, unsigned n_fds)
{
	return n_fds == ((const Box__RecheckReply *)m)->n_fds ? 0 : -EBADMSG;
}

static const struct box_ipc_type recheck_types[] = {
	{ BOX__MSG_TYPE__MSG_RECHECK_REQUEST, "RecheckRequest", &box__recheck_request__descriptor,
	  recheck_request_row, NULL, BOX_IPC_PAYLOAD_MAX, 0, 8u << 20, FROM(BOXD), S(ASKED),
	  BOX_RECHECK_CHECKING, NULL },
	/* fds: the state dir, the lock, STATE/policy/, decisions.jsonl, ca.pem, agent.log, the
	 * telemetry files (as the owner). */
	{ BOX__MSG_TYPE__MSG_RECHECK_REPLY, "RecheckReply", &box__recheck_reply__descriptor,
	  recheck_reply_row, recheck_reply_fds, BOX_IPC_PAYLOAD_MAX, RECHECK_FDS_MAX, 16u << 20,
	  FROM(RECHECK),
	  S(CHECKING), BOX_RECHECK_DONE, NULL },
};

static const char *const recheck_roles[BOX_RECHECK_N_ROLES] = { "boxd", "box-recheck" };
static const char *const recheck_states[BOX_RECHECK_N_STATES] = { "asked", "checking", "done" };

const struct box_ipc_protocol box_proto_recheck = {
	.name = "recheck",
	.types = recheck_types,
	.n_types = sizeof(recheck_types) / sizeof(recheck_types[0]),
	.role_names = recheck_roles,
	.n_roles = BOX_RECHECK_N_ROLES,
	.state_names = recheck_states,
	.n_states = BOX_RECHECK_N_STATES,
	.decode = box_proto_decode,
};
