/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto_client.h — the client protocol: boxctl <-> boxd (boxd.proto).
 *
 * The table (proto_client.c) is the receiver's rules for every type on a
 * client connection; proto/README.md is the human version. Roles: the
 * client (boxctl) and boxd. States of one connection:
 *   fresh   no box started on it yet (or the last start was refused)
 *   running an OK RunReply went out: the box runs, RunControl is accepted
 *   ended   its RunExit went out
 * Trusts: nothing; this is data.
 */
#ifndef BOX_PROTO_CLIENT_H
#define BOX_PROTO_CLIENT_H

#include "boxd.pb-c.h"
#include "ipc.h"

enum box_client_role {
	BOX_CLIENT_ROLE_CLIENT, /* boxctl, or anything that connects to boxd's socket */
	BOX_CLIENT_ROLE_BOXD,
	BOX_CLIENT_N_ROLES,
};

enum box_client_state {
	BOX_CLIENT_FRESH,
	BOX_CLIENT_RUNNING,
	BOX_CLIENT_ENDED,
	BOX_CLIENT_N_STATES,
};

extern const struct box_ipc_protocol box_proto_client;

#endif
