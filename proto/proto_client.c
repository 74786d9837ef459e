/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto_client.c — the table of the client protocol (proto_client.h):
 * boxctl <-> boxd. Every row: type, descriptor, validator (validate.c),
 * fd rule, size caps, who sends it, the connection states in which it may
 * pass and the state it leads to. Linked only into the programs that speak
 * it (boxctl, boxd; test/layering/symbols.sh checks).
 * Trusts: nothing; this is data the receiver enforces.
 */
#include <stdbool.h>

#include "proto_client.h"
#include "validate.h"
#include "walk.h"

#define ANY BOX_IPC_ANY_STATE
#define S(x) BOX_IPC_BIT(BOX_CLIENT_##x)
#define FROM_CLIENT BOX_IPC_BIT(BOX_CLIENT_ROLE_CLIENT)
#define FROM_BOXD BOX_IPC_BIT(BOX_CLIENT_ROLE_BOXD)
#define SAME BOX_IPC_STATE_SAME

#define VALIDATOR(fn, Type)                                   \
	static int fn##_row(const ProtobufCMessage *m)        \
	{                                                     \
		return fn((const Type *)m);                   \
	}
VALIDATOR(box_validate_run_request, Box__RunRequest)
VALIDATOR(box_validate_run_reply, Box__RunReply)
VALIDATOR(box_validate_run_exit, Box__RunExit)
VALIDATOR(box_validate_run_control, Box__RunControl)
VALIDATOR(box_validate_run_starting, Box__RunStarting)
VALIDATOR(box_validate_ps_request, Box__PsRequest)
VALIDATOR(box_validate_ps_reply, Box__PsReply)
VALIDATOR(box_validate_stop_request, Box__StopRequest)
VALIDATOR(box_validate_stop_reply, Box__StopReply)
VALIDATOR(box_validate_log_request, Box__LogRequest)
VALIDATOR(box_validate_log_reply, Box__LogReply)
VALIDATOR(box_validate_check_request, Box__CheckRequest)
VALIDATOR(box_validate_check_reply, Box__CheckReply)
VALIDATOR(box_validate_error_reply, Box__ErrorReply)
VALIDATOR(box_validate_mcp_pins_request, Box__McpPinsRequest)
VALIDATOR(box_validate_mcp_pins_reply, Box__McpPinsReply)
VALIDATOR(box_validate_attach_request, Box__AttachRequest)
VALIDATOR(box_validate_attach_reply, Box__AttachReply)
VALIDATOR(box_validate_policy_reload_request, Box__PolicyReloadRequest)
VALIDATOR(box_validate_policy_reload_result, Box__PolicyReloadResult)
VALIDATOR(box_validate_ask_request, Box__AskRequest)
VALIDATOR(box_validate_ask_reply, Box__AskReply)

/* Only a started box makes the connection `running`; a refusal leaves it as it was. */
static bool
run_reply_started(const ProtobufCMessage *m)
{
	return ((const Box__RunReply *)m)->status == BOX__REPLY_STATUS__REPLY_OK;
}

static const struct box_ipc_type client_types[] = {
	/*
	 * RunRequest in any state: boxd answers a second one on a connection
	 * whose box still runs with ErrorReply EBUSY, and a connection whose
	 * box ended may start another.
	 */
	{ BOX__MSG_TYPE__MSG_RUN_REQUEST, "RunRequest", &box__run_request__descriptor,
	  box_validate_run_request_row, box_validate_fd_count, BOX_IPC_PAYLOAD_MAX, 3, 8u << 20,
	  FROM_CLIENT, ANY, SAME, NULL },
	/* The disclosure of a start in progress: never while a box runs on the connection. */
	{ BOX__MSG_TYPE__MSG_RUN_STARTING, "RunStarting", &box__run_starting__descriptor,
	  box_validate_run_starting_row, NULL, BOX_IPC_PAYLOAD_MAX, 0, 16u << 20, FROM_BOXD,
	  S(FRESH) | S(ENDED), SAME, NULL },
	{ BOX__MSG_TYPE__MSG_RUN_REPLY, "RunReply", &box__run_reply__descriptor,
	  box_validate_run_reply_row, box_validate_fd_count, BOX_IPC_PAYLOAD_MAX, 1, 16u << 20,
	  FROM_BOXD, S(FRESH) | S(ENDED), BOX_CLIENT_RUNNING, run_reply_started },
	{ BOX__MSG_TYPE__MSG_RUN_EXIT, "RunExit", &box__run_exit__descriptor,
	  box_validate_run_exit_row, NULL, 8192, 0, 0, FROM_BOXD, S(RUNNING), BOX_CLIENT_ENDED,
	  NULL },
	/*
	 * A signal for the running box. `ended` too: boxctl may forward one
	 * before it has read the RunExit already on its way; boxd drops it.
	 */
	{ BOX__MSG_TYPE__MSG_RUN_CONTROL, "RunControl", &box__run_control__descriptor,
	  box_validate_run_control_row, NULL, 256, 0, 0, FROM_CLIENT, S(RUNNING) | S(ENDED), SAME,
	  NULL },
	{ BOX__MSG_TYPE__MSG_PS_REQUEST, "PsRequest", &box__ps_request__descriptor,
	  box_validate_ps_request_row, NULL, 64, 0, 0, FROM_CLIENT, ANY, SAME, NULL },
	{ BOX__MSG_TYPE__MSG_PS_REPLY, "PsReply", &box__ps_reply__descriptor,
	  box_validate_ps_reply_row, NULL, BOX_IPC_PAYLOAD_MAX, 0, 1u << 20, FROM_BOXD, ANY, SAME,
	  NULL },
	{ BOX__MSG_TYPE__MSG_STOP_REQUEST, "StopRequest", &box__stop_request__descriptor,
	  box_validate_stop_request_row, NULL, 256, 0, 0, FROM_CLIENT, ANY, SAME, NULL },
	{ BOX__MSG_TYPE__MSG_STOP_REPLY, "StopReply", &box__stop_reply__descriptor,
	  box_validate_stop_reply_row, NULL, 8192, 0, 0, FROM_BOXD, ANY, SAME, NULL },
	{ BOX__MSG_TYPE__MSG_LOG_REQUEST, "LogRequest", &box__log_request__descriptor,
	  box_validate_log_request_row, NULL, 256, 0, 0, FROM_CLIENT, ANY, SAME, NULL },
	{ BOX__MSG_TYPE__MSG_LOG_REPLY, "LogReply", &box__log_reply__descriptor,
	  box_validate_log_reply_row, box_validate_fd_count, 8192, 2, 0, FROM_BOXD, ANY, SAME,
	  NULL },
	{ BOX__MSG_TYPE__MSG_CHECK_REQUEST, "CheckRequest", &box__check_request__descriptor,
	  box_validate_check_request_row, NULL, BOX_IPC_PAYLOAD_MAX, 0, 8u << 20, FROM_CLIENT, ANY,
	  SAME, NULL },
	{ BOX__MSG_TYPE__MSG_CHECK_REPLY, "CheckReply", &box__check_reply__descriptor,
	  box_validate_check_reply_row, NULL, BOX_IPC_PAYLOAD_MAX, 0, 16u << 20, FROM_BOXD, ANY,
	  SAME, NULL },
	/* `boxctl mcp pins|accept`: the pins file of a running box, 1 fd when OK. */
	{ BOX__MSG_TYPE__MSG_MCP_PINS_REQUEST, "McpPinsRequest", &box__mcp_pins_request__descriptor,
	  box_validate_mcp_pins_request_row, NULL, 256, 0, 0, FROM_CLIENT, ANY, SAME, NULL },
	{ BOX__MSG_TYPE__MSG_MCP_PINS_REPLY, "McpPinsReply", &box__mcp_pins_reply__descriptor,
	  box_validate_mcp_pins_reply_row, box_validate_fd_count, 8192, 1, 0, FROM_BOXD, ANY, SAME,
	  NULL },
	/* `boxctl shell`: a person's session in a running box, 2 fds when OK. */
	{ BOX__MSG_TYPE__MSG_ATTACH_REQUEST, "AttachRequest", &box__attach_request__descriptor,
	  box_validate_attach_request_row, NULL, 256, 0, 0, FROM_CLIENT, ANY, SAME, NULL },
	{ BOX__MSG_TYPE__MSG_ATTACH_REPLY, "AttachReply", &box__attach_reply__descriptor,
	  box_validate_attach_reply_row, box_validate_fd_count, 8192, 2, 0, FROM_BOXD, ANY, SAME,
	  NULL },
	/* The policy text travels in fragments (as BoxSpec's, up to BOX_POLICY_TEXT_MAX). */
	{ BOX__MSG_TYPE__MSG_POLICY_RELOAD_REQUEST, "PolicyReloadRequest",
	  &box__policy_reload_request__descriptor, box_validate_policy_reload_request_row, NULL,
	  BOX_IPC_PAYLOAD_MAX, 0, 5u << 20, FROM_CLIENT, ANY, SAME, NULL },
	{ BOX__MSG_TYPE__MSG_POLICY_RELOAD_RESULT, "PolicyReloadResult",
	  &box__policy_reload_result__descriptor, box_validate_policy_reload_result_row, NULL,
	  8192, 0, 0, FROM_BOXD, ANY, SAME, NULL },
	{ BOX__MSG_TYPE__MSG_ASK_REQUEST, "AskRequest", &box__ask_request__descriptor,
	  box_validate_ask_request_row, NULL, 256, 0, 0, FROM_CLIENT, ANY, SAME, NULL },
	{ BOX__MSG_TYPE__MSG_ASK_REPLY, "AskReply", &box__ask_reply__descriptor,
	  box_validate_ask_reply_row, NULL, BOX_IPC_PAYLOAD_MAX, 0, 2u << 20, FROM_BOXD, ANY, SAME,
	  NULL },
	{ BOX__MSG_TYPE__MSG_ERROR_REPLY, "ErrorReply", &box__error_reply__descriptor,
	  box_validate_error_reply_row, NULL, 8192, 0, 0, FROM_BOXD, ANY, SAME, NULL },
};

static const char *const client_roles[BOX_CLIENT_N_ROLES] = { "client", "boxd" };
static const char *const client_states[BOX_CLIENT_N_STATES] = { "fresh", "running", "ended" };

const struct box_ipc_protocol box_proto_client = {
	.name = "client",
	.types = client_types,
	.n_types = sizeof(client_types) / sizeof(client_types[0]),
	.role_names = client_roles,
	.n_roles = BOX_CLIENT_N_ROLES,
	.state_names = client_states,
	.n_states = BOX_CLIENT_N_STATES,
	.decode = box_proto_decode,
};
