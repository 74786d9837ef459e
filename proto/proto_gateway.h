/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto_gateway.h — the gateway protocol: boxd <-> box-gateway
 * (gateway.proto) on box-gateway's fd 3.
 *
 * The table (proto_gateway.c) is the receiver's rules; proto/README.md is the
 * human version. Roles: boxd, box-gateway. States of the channel:
 *   init     nothing exchanged: only GatewayInit (boxd, once)
 *   starting the init passed: only GatewayReady (the gateway, once)
 *   serving  GatewayListener / GatewayListenerClosed (boxd), any number
 * Trusts: nothing; this is data.
 */
#ifndef BOX_PROTO_GATEWAY_H
#define BOX_PROTO_GATEWAY_H

#include "gateway.pb-c.h"
#include "ipc.h"

enum box_gateway_role {
	BOX_GATEWAY_ROLE_BOXD,
	BOX_GATEWAY_ROLE_GATEWAY,
	BOX_GATEWAY_N_ROLES,
};

enum box_gateway_state {
	BOX_GATEWAY_INIT,
	BOX_GATEWAY_STARTING,
	BOX_GATEWAY_SERVING,
	BOX_GATEWAY_N_STATES,
};

/* Caps the validator enforces (docs/box.ini.5.md [gateway], [egress]). */
#define BOX_GATEWAY_SECRET_MAX      8192u
#define BOX_GATEWAY_PEM_MAX         (4u << 20)
#define BOX_GATEWAY_HOSTS_MAX       (1u << 20)
#define BOX_GATEWAY_CREDENTIALS_MAX 256u
#define BOX_GATEWAY_DESTS_MAX       1024u
#define BOX_GATEWAY_SANDBOX_MAX     (4u + 1u + 32u) /* "tool." + NAME */
#define BOX_GATEWAY_MCP_MAX         256u            /* http [mcp.NAME] servers */
#define BOX_GATEWAY_MCP_FRAME_MAX   (64u << 20)     /* docs/box.ini.5.md [mcp] max_frame */

extern const struct box_ipc_protocol box_proto_gateway;

int box_validate_gateway_init(const Box__GatewayInit *m);
int box_validate_gateway_ready(const Box__GatewayReady *m);
int box_validate_gateway_listener(const Box__GatewayListener *m);
int box_validate_gateway_listener_closed(const Box__GatewayListenerClosed *m);
/* "agent", "tool.NAME" or "mcp.NAME" (NAME as box_valid_name). */
bool box_valid_sandbox_tag(const char *s);

#endif
