/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto_gateway.c — the table of the gateway protocol (proto_gateway.h).
 * Every row: type, descriptor, validator (gateway_validate.c), size caps,
 * fds, who sends it, the channel states in which it may pass and the state
 * it leads to. Linked only into boxd and box-gateway.
 * Trusts: nothing; this is data the receiver enforces.
 */
#include <errno.h>

#include "proto_gateway.h"
#include "text.h" /* BOX_TELEMETRY_FILES_MAX */
#include "walk.h"

#define S(x) BOX_IPC_BIT(BOX_GATEWAY_##x)
#define FROM(x) BOX_IPC_BIT(BOX_GATEWAY_ROLE_##x)

static int
init_row(const ProtobufCMessage *m)
{
	return box_validate_gateway_init((const Box__GatewayInit *)m);
}

static int
ready_row(const ProtobufCMessage *m)
{
	return box_validate_gateway_ready((const Box__GatewayReady *)m);
}

static int
listener_row(const ProtobufCMessage *m)
{
	return box_validate_gateway_listener((const Box__GatewayListener *)m);
}

static int
listener_closed_row(const ProtobufCMessage *m)
{
	return box_validate_gateway_listener_closed((const Box__GatewayListenerClosed *)m);
}

/* GatewayInit carries one fd per telemetry file, then the telemetry channel with an otlp target. */
static int
init_fds(const ProtobufCMessage *m, unsigned n_fds)
{
	const Box__GatewayInit *in = (const Box__GatewayInit *)m;
	return n_fds == in->n_telemetry_files + (in->n_telemetry_targets ? 1u : 0u) ? 0 : -EBADMSG;
}

/* A listener message carries exactly its socket. */
static int
one_fd(const ProtobufCMessage *m, unsigned n_fds)
{
	(void)m;
	return n_fds == 1 ? 0 : -EBADMSG;
}

static const struct box_ipc_type gateway_types[] = {
	/* The init carries the upstream CA bundle and the hosts file: fragmented. */
	{ BOX__MSG_TYPE__MSG_GATEWAY_INIT, "GatewayInit", &box__gateway_init__descriptor, init_row,
	  init_fds, BOX_IPC_PAYLOAD_MAX, BOX_TELEMETRY_FILES_MAX + 1, 8u << 20, FROM(BOXD), S(INIT),
	  BOX_GATEWAY_STARTING, NULL },
	{ BOX__MSG_TYPE__MSG_GATEWAY_READY, "GatewayReady", &box__gateway_ready__descriptor,
	  ready_row, NULL, BOX_IPC_PAYLOAD_MAX, 0, 64u << 10, FROM(GATEWAY), S(STARTING),
	  BOX_GATEWAY_SERVING, NULL },
	{ BOX__MSG_TYPE__MSG_GATEWAY_LISTENER, "GatewayListener",
	  &box__gateway_listener__descriptor, listener_row, one_fd, BOX_IPC_PAYLOAD_MAX, 1, 0,
	  FROM(BOXD), S(SERVING), BOX_GATEWAY_SERVING, NULL },
	{ BOX__MSG_TYPE__MSG_GATEWAY_LISTENER_CLOSED, "GatewayListenerClosed",
	  &box__gateway_listener_closed__descriptor, listener_closed_row, NULL,
	  BOX_IPC_PAYLOAD_MAX, 0, 0, FROM(BOXD), S(SERVING), BOX_GATEWAY_SERVING, NULL },
};

static const char *const gateway_roles[BOX_GATEWAY_N_ROLES] = { "boxd", "box-gateway" };
static const char *const gateway_states[BOX_GATEWAY_N_STATES] = { "init", "starting",
								   "serving" };

const struct box_ipc_protocol box_proto_gateway = {
	.name = "gateway",
	.types = gateway_types,
	.n_types = sizeof(gateway_types) / sizeof(gateway_types[0]),
	.role_names = gateway_roles,
	.n_roles = BOX_GATEWAY_N_ROLES,
	.state_names = gateway_states,
	.n_states = BOX_GATEWAY_N_STATES,
	.decode = box_proto_decode,
};
