/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto_policy.h — the policy protocol: boxd, gateway, mcpd, shell <-> box-policyd
 * (policy.proto).
 *
 * The table (proto_policy.c) is the receiver's rules; proto/README.md is the
 * human version. Roles: boxd, box-policyd, and a peer (gateway, mcpd, shell:
 * they ask and record, nothing else). States of one channel:
 *   init     nothing exchanged: only PolicyInit (boxd's channel)
 *   starting PolicyInit passed: only PolicyReady
 *   ready    an ok PolicyReady passed: Decide, Record, PolicyLogFd; from a
 *            peer also PolicyToolSchema and PolicyProbeRequest. A peer's
 *            channel is opened in this state (it never sees PolicyInit).
 * A second PolicyInit, or a DecideRequest before PolicyReady, is a protocol
 * error.
 * Trusts: nothing; this is data.
 */
#ifndef BOX_PROTO_POLICY_H
#define BOX_PROTO_POLICY_H

#include "ipc.h"
#include "policy.pb-c.h"

enum box_policy_role {
	BOX_POLICY_ROLE_BOXD,
	BOX_POLICY_ROLE_POLICYD,
	BOX_POLICY_ROLE_PEER, /* gateway, mcpd, shell */
	BOX_POLICY_N_ROLES,
};

enum box_policy_state {
	BOX_POLICY_INIT,
	BOX_POLICY_STARTING,
	BOX_POLICY_READY,
	BOX_POLICY_N_STATES,
};

/* Channels box-shell may have attached at once (PolicyChannelAttach). */
#define BOX_POLICY_ATTACHED_MAX 4096u

extern const struct box_ipc_protocol box_proto_policy;

#endif
