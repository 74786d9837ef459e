/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto_mcp.c — the tables of box-mcpd's two protocols (proto_mcp.h).
 * Every row: type, descriptor, validator (mcp_validate.c), size caps, fds,
 * who sends it, the channel states in which it may pass and the state it
 * leads to. Linked only into the programs that speak them (the alias and
 * box-mcpd: the session; boxd and box-mcpd: the control channel).
 * Trusts: nothing; this is data the receiver enforces.
 */
#include <errno.h>

#include "proto_mcp.h"
#include "walk.h"

#define VALIDATOR(fn, Type)                            \
	static int fn##_row(const ProtobufCMessage *m) \
	{                                              \
		return fn((const Type *)m);            \
	}
VALIDATOR(box_validate_mcp_open, Box__McpOpen)
VALIDATOR(box_validate_mcp_close, Box__McpClose)
VALIDATOR(box_validate_mcp_init, Box__McpInit)
VALIDATOR(box_validate_mcp_ready, Box__McpReady)
VALIDATOR(box_validate_mcp_server_start, Box__McpServerStart)
VALIDATOR(box_validate_mcp_server_started, Box__McpServerStarted)
VALIDATOR(box_validate_mcp_server_exit, Box__McpServerExit)
VALIDATOR(box_validate_mcp_server_stop, Box__McpServerStop)

/* McpOpen and McpServerStart carry exactly stdin, stdout and stderr. */
static int
three_fds(const ProtobufCMessage *m, unsigned n_fds)
{
	(void)m;
	return n_fds == 3 ? 0 : -EBADMSG;
}

/* McpInit carries exactly the pins file. */
static int
one_fd(const ProtobufCMessage *m, unsigned n_fds)
{
	(void)m;
	return n_fds == 1 ? 0 : -EBADMSG;
}

#define SS(x) BOX_IPC_BIT(BOX_MCPSESSION_##x)
#define SFROM(x) BOX_IPC_BIT(BOX_MCPSESSION_ROLE_##x)

static const struct box_ipc_type session_types[] = {
	/* The harness's arguments (ignored, logged) may be long: fragmented. */
	{ BOX__MSG_TYPE__MSG_MCP_OPEN, "McpOpen", &box__mcp_open__descriptor,
	  box_validate_mcp_open_row, three_fds, BOX_IPC_PAYLOAD_MAX, 3, BOX_MCP_REASM_MAX,
	  SFROM(ALIAS), SS(OPEN), BOX_MCPSESSION_RUNNING, NULL },
	{ BOX__MSG_TYPE__MSG_MCP_CLOSE, "McpClose", &box__mcp_close__descriptor,
	  box_validate_mcp_close_row, NULL, 8192, 0, 0, SFROM(MCPD), SS(OPEN) | SS(RUNNING),
	  BOX_MCPSESSION_ENDED, NULL },
};

static const char *const session_roles[BOX_MCPSESSION_N_ROLES] = { "alias", "box-mcpd" };
static const char *const session_states[BOX_MCPSESSION_N_STATES] = { "open", "running",
								     "ended" };

const struct box_ipc_protocol box_proto_mcpsession = {
	.name = "mcpsession",
	.types = session_types,
	.n_types = sizeof(session_types) / sizeof(session_types[0]),
	.role_names = session_roles,
	.n_roles = BOX_MCPSESSION_N_ROLES,
	.state_names = session_states,
	.n_states = BOX_MCPSESSION_N_STATES,
	.decode = box_proto_decode,
};

#define CS(x) BOX_IPC_BIT(BOX_MCPCTL_##x)
#define CFROM(x) BOX_IPC_BIT(BOX_MCPCTL_ROLE_##x)

/* A refusal (ok = false) leaves the channel starting: box-mcpd exits next. */
static bool
mcp_ready_ok(const ProtobufCMessage *m)
{
	return ((const Box__McpReady *)m)->ok;
}

static const struct box_ipc_type ctl_types[] = {
	{ BOX__MSG_TYPE__MSG_MCP_INIT, "McpInit", &box__mcp_init__descriptor,
	  box_validate_mcp_init_row, one_fd, BOX_IPC_PAYLOAD_MAX, 1, BOX_MCP_REASM_MAX,
	  CFROM(BOXD), CS(INIT), BOX_MCPCTL_STARTING, NULL },
	{ BOX__MSG_TYPE__MSG_MCP_READY, "McpReady", &box__mcp_ready__descriptor,
	  box_validate_mcp_ready_row, NULL, 8192, 0, 0, CFROM(MCPD), CS(STARTING),
	  BOX_MCPCTL_SERVING, mcp_ready_ok },
	{ BOX__MSG_TYPE__MSG_MCP_SERVER_START, "McpServerStart", &box__mcp_server_start__descriptor,
	  box_validate_mcp_server_start_row, three_fds, 128, 3, 0, CFROM(MCPD), CS(SERVING),
	  BOX_IPC_STATE_SAME, NULL },
	{ BOX__MSG_TYPE__MSG_MCP_SERVER_STARTED, "McpServerStarted",
	  &box__mcp_server_started__descriptor, box_validate_mcp_server_started_row, NULL, 8192,
	  0, 0, CFROM(BOXD), CS(SERVING), BOX_IPC_STATE_SAME, NULL },
	{ BOX__MSG_TYPE__MSG_MCP_SERVER_EXIT, "McpServerExit", &box__mcp_server_exit__descriptor,
	  box_validate_mcp_server_exit_row, NULL, 64, 0, 0, CFROM(BOXD), CS(SERVING),
	  BOX_IPC_STATE_SAME, NULL },
	{ BOX__MSG_TYPE__MSG_MCP_SERVER_STOP, "McpServerStop", &box__mcp_server_stop__descriptor,
	  box_validate_mcp_server_stop_row, NULL, 64, 0, 0, CFROM(MCPD), CS(SERVING),
	  BOX_IPC_STATE_SAME, NULL },
};

static const char *const ctl_roles[BOX_MCPCTL_N_ROLES] = { "boxd", "box-mcpd" };
static const char *const ctl_states[BOX_MCPCTL_N_STATES] = { "init", "starting", "serving" };

const struct box_ipc_protocol box_proto_mcpctl = {
	.name = "mcpctl",
	.types = ctl_types,
	.n_types = sizeof(ctl_types) / sizeof(ctl_types[0]),
	.role_names = ctl_roles,
	.n_roles = BOX_MCPCTL_N_ROLES,
	.state_names = ctl_states,
	.n_states = BOX_MCPCTL_N_STATES,
	.decode = box_proto_decode,
};
