/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto_policy.c — the table of the policy protocol (proto_policy.h). Every
 * row: type, descriptor, validator (policy_validate.c), size caps, fds, who
 * sends it, the channel states in which it may pass and the state it leads
 * to. Linked only into the programs that speak it (boxd, box-policyd;
 * test/layering/symbols.sh checks).
 * Trusts: nothing; this is data the receiver enforces.
 */
#include <errno.h>
#include <stdbool.h>

#include "policy_validate.h"
#include "proto_policy.h"
#include "walk.h"

#define S(x) BOX_IPC_BIT(BOX_POLICY_##x)
#define FROM(x) BOX_IPC_BIT(BOX_POLICY_ROLE_##x)
#define SAME BOX_IPC_STATE_SAME

#define VALIDATOR(fn, Type)                                   \
	static int fn##_row(const ProtobufCMessage *m)        \
	{                                                     \
		return fn((const Type *)m);                   \
	}
VALIDATOR(box_validate_policy_init, Box__PolicyInit)
VALIDATOR(box_validate_policy_ready, Box__PolicyReady)
VALIDATOR(box_validate_decide_request, Box__DecideRequest)
VALIDATOR(box_validate_decide_reply, Box__DecideReply)
VALIDATOR(box_validate_record_request, Box__RecordRequest)
VALIDATOR(box_validate_record_batch, Box__RecordBatch)
VALIDATOR(box_validate_decide_batch_request, Box__DecideBatchRequest)
VALIDATOR(box_validate_decide_batch_reply, Box__DecideBatchReply)
VALIDATOR(box_validate_policy_log_fd, Box__PolicyLogFd)
VALIDATOR(box_validate_policy_log_head, Box__PolicyLogHead)
VALIDATOR(box_validate_policy_tool_schema, Box__PolicyToolSchema)
VALIDATOR(box_validate_policy_tool_schema_reply, Box__PolicyToolSchemaReply)
VALIDATOR(box_validate_policy_probe_request, Box__PolicyProbeRequest)
VALIDATOR(box_validate_policy_probe_reply, Box__PolicyProbeReply)
VALIDATOR(box_validate_policy_local, Box__PolicyLocal)
VALIDATOR(box_validate_policy_ship, Box__PolicyShip)
VALIDATOR(box_validate_policy_reload, Box__PolicyReload)
VALIDATOR(box_validate_policy_ask_list_reply, Box__PolicyAskListReply)
VALIDATOR(box_validate_policy_ask_answer, Box__PolicyAskAnswer)
VALIDATOR(box_validate_policy_ask_answer_reply, Box__PolicyAskAnswerReply)
VALIDATOR(box_validate_policy_kernel_refusal, Box__PolicyKernelRefusal)
VALIDATOR(box_validate_policy_reload_reply, Box__PolicyReloadReply)

/* A refusal (ok = false) leaves the channel starting: policyd exits next. */
static bool
policy_ready_ok(const ProtobufCMessage *m)
{
	return ((const Box__PolicyReady *)m)->ok;
}

/*
 * PolicyInit carries its two state fds and one per telemetry file target: no
 * more (box-policyd checks that exactly these came, and what each is).
 */
static int
policy_init_fds(const ProtobufCMessage *m, unsigned n_fds)
{
	const Box__PolicyInit *in = (const Box__PolicyInit *)m;
	return n_fds <= 2 + in->n_telemetry_include + (in->n_otlp_include ? 1u : 0u) ? 0 : -EBADMSG;
}

static const struct box_ipc_type policy_types[] = {
	/* fds: STATE/policy/ (O_DIRECTORY) and decisions.jsonl (policyd checks both), then
	 * one per telemetry file target. */
	{ BOX__MSG_TYPE__MSG_POLICY_INIT, "PolicyInit", &box__policy_init__descriptor,
	  box_validate_policy_init_row, policy_init_fds, BOX_IPC_PAYLOAD_MAX,
	  2 + BOX_TELEMETRY_FILES_MAX, 5u << 20, FROM(BOXD),
	  S(INIT), BOX_POLICY_STARTING, NULL },
	{ BOX__MSG_TYPE__MSG_POLICY_READY, "PolicyReady", &box__policy_ready__descriptor,
	  box_validate_policy_ready_row, NULL, 8192, 0, 0, FROM(POLICYD), S(STARTING),
	  BOX_POLICY_READY, policy_ready_ok },
	{ BOX__MSG_TYPE__MSG_DECIDE_REQUEST, "DecideRequest", &box__decide_request__descriptor,
	  box_validate_decide_request_row, NULL, BOX_IPC_PAYLOAD_MAX, 0, 1u << 20,
	  FROM(BOXD) | FROM(PEER), S(READY), SAME, NULL },
	{ BOX__MSG_TYPE__MSG_DECIDE_REPLY, "DecideReply", &box__decide_reply__descriptor,
	  box_validate_decide_reply_row, NULL, BOX_IPC_PAYLOAD_MAX, 0, 1u << 20, FROM(POLICYD),
	  S(READY), SAME, NULL },
	{ BOX__MSG_TYPE__MSG_RECORD_REQUEST, "RecordRequest", &box__record_request__descriptor,
	  box_validate_record_request_row, NULL, BOX_IPC_PAYLOAD_MAX, 0, 1u << 20,
	  FROM(BOXD) | FROM(PEER), S(READY), SAME, NULL },
	/* Up to 256 Records (box-shell's file operations of a walk): reassembled up to 8 MiB. */
	{ BOX__MSG_TYPE__MSG_RECORD_BATCH, "RecordBatch", &box__record_batch__descriptor,
	  box_validate_record_batch_row, NULL, BOX_IPC_PAYLOAD_MAX, 0, 8u << 20,
	  FROM(BOXD) | FROM(PEER), S(READY), SAME, NULL },
	/* Up to 256 Decides (box-shell's directory entries): reassembled up to 8 MiB. */
	{ BOX__MSG_TYPE__MSG_DECIDE_BATCH_REQUEST, "DecideBatchRequest",
	  &box__decide_batch_request__descriptor, box_validate_decide_batch_request_row, NULL,
	  BOX_IPC_PAYLOAD_MAX, 0, 8u << 20, FROM(BOXD) | FROM(PEER), S(READY), SAME, NULL },
	{ BOX__MSG_TYPE__MSG_DECIDE_BATCH_REPLY, "DecideBatchReply",
	  &box__decide_batch_reply__descriptor, box_validate_decide_batch_reply_row, NULL,
	  BOX_IPC_PAYLOAD_MAX, 0, 8u << 20, FROM(POLICYD), S(READY), SAME, NULL },
	/*
	 * fd: one more channel of box-shell's (from box-shell only), or a
	 * supervised program's (from boxd: source "supervisor").
	 */
	{ BOX__MSG_TYPE__MSG_POLICY_CHANNEL_ATTACH, "PolicyChannelAttach",
	  &box__policy_channel_attach__descriptor, NULL, NULL, 16, 1, 0, FROM(BOXD) | FROM(PEER), S(READY),
	  SAME, NULL },
	/*
	 * A server's whole tool list (box-mcpd, the gateway): fragmented above
	 * 64 KiB, reassembled up to BOX_POLICY_TOOL_SCHEMA_MAX (4096 tools).
	 */
	{ BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, "PolicyToolSchema",
	  &box__policy_tool_schema__descriptor, box_validate_policy_tool_schema_row, NULL,
	  BOX_IPC_PAYLOAD_MAX, 0, BOX_POLICY_TOOL_SCHEMA_MAX, FROM(PEER), S(READY), SAME, NULL },
	/* ok, or the rule that failed; <= 64 warnings of <= 4 KiB. */
	{ BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY, "PolicyToolSchemaReply",
	  &box__policy_tool_schema_reply__descriptor, box_validate_policy_tool_schema_reply_row,
	  NULL, BOX_IPC_PAYLOAD_MAX, 0, 1u << 20, FROM(POLICYD), S(READY), SAME, NULL },
	/* Up to 256 Decides, not observed (the tools/list filter): as DecideBatch. */
	{ BOX__MSG_TYPE__MSG_POLICY_PROBE_REQUEST, "PolicyProbeRequest",
	  &box__policy_probe_request__descriptor, box_validate_policy_probe_request_row, NULL,
	  BOX_IPC_PAYLOAD_MAX, 0, 8u << 20, FROM(PEER), S(READY), SAME, NULL },
	{ BOX__MSG_TYPE__MSG_POLICY_PROBE_REPLY, "PolicyProbeReply",
	  &box__policy_probe_reply__descriptor, box_validate_policy_probe_reply_row, NULL,
	  BOX_IPC_PAYLOAD_MAX, 0, 8u << 20, FROM(POLICYD), S(READY), SAME, NULL },
	/* box-shell: what it may decide in process (docs/box-policy.5.md). */
	{ BOX__MSG_TYPE__MSG_POLICY_LOCAL_REQUEST, "PolicyLocalRequest",
	  &box__policy_local_request__descriptor, NULL, NULL, 16, 0, 0, FROM(PEER), S(READY),
	  SAME, NULL },
	/* The policy text travels again: fragmented above 64 KiB, as PolicyInit's cap. */
	/* fd (at most one): the generation page, a read-only memfd box-shell checks. */
	{ BOX__MSG_TYPE__MSG_POLICY_LOCAL, "PolicyLocal", &box__policy_local__descriptor,
	  box_validate_policy_local_row, NULL, BOX_IPC_PAYLOAD_MAX, 1, 5u << 20, FROM(POLICYD),
	  S(READY), SAME, NULL },
	/* A new policy text from boxd (`boxctl policy reload`), fragmented as PolicyInit's. */
	{ BOX__MSG_TYPE__MSG_POLICY_RELOAD, "PolicyReload", &box__policy_reload__descriptor,
	  box_validate_policy_reload_row, NULL, BOX_IPC_PAYLOAD_MAX, 0, 5u << 20, FROM(BOXD),
	  S(READY), SAME, NULL },
	/* What waits for a person (@ask), and a person's answer: boxd <-> policyd on fd 3. */
	{ BOX__MSG_TYPE__MSG_POLICY_ASK_LIST, "PolicyAskList", &box__policy_ask_list__descriptor,
	  NULL, NULL, 16, 0, 0, FROM(BOXD), S(READY), SAME, NULL },
	{ BOX__MSG_TYPE__MSG_POLICY_ASK_LIST_REPLY, "PolicyAskListReply",
	  &box__policy_ask_list_reply__descriptor, box_validate_policy_ask_list_reply_row, NULL,
	  BOX_IPC_PAYLOAD_MAX, 0, 8u << 20, FROM(POLICYD), S(READY), SAME, NULL },
	{ BOX__MSG_TYPE__MSG_POLICY_ASK_ANSWER, "PolicyAskAnswer",
	  &box__policy_ask_answer__descriptor, box_validate_policy_ask_answer_row, NULL, 64, 0, 0,
	  FROM(BOXD), S(READY), SAME, NULL },
	/* A sandbox's kernel refusals, for the telemetry targets that include `kernel`. */
	{ BOX__MSG_TYPE__MSG_POLICY_KERNEL_REFUSAL, "PolicyKernelRefusal",
	  &box__policy_kernel_refusal__descriptor, box_validate_policy_kernel_refusal_row, NULL,
	  512, 0, 0, FROM(BOXD), S(READY), SAME, NULL },
	{ BOX__MSG_TYPE__MSG_POLICY_ASK_ANSWER_REPLY, "PolicyAskAnswerReply",
	  &box__policy_ask_answer_reply__descriptor, box_validate_policy_ask_answer_reply_row, NULL,
	  8192, 0, 0, FROM(POLICYD), S(READY), SAME, NULL },
	{ BOX__MSG_TYPE__MSG_POLICY_RELOAD_REPLY, "PolicyReloadReply",
	  &box__policy_reload_reply__descriptor, box_validate_policy_reload_reply_row, NULL, 8192,
	  0, 0, FROM(POLICYD), S(READY), SAME, NULL },
	/*
	 * Up to 256 decisions made in process and outcomes, no reply: as DecideBatch.
	 * Decoded into one arena (box-policyd's handle_ship keeps no part of it).
	 */
	{ BOX__MSG_TYPE__MSG_POLICY_SHIP, "PolicyShip", &box__policy_ship__descriptor,
	  box_validate_policy_ship_row, NULL, BOX_IPC_PAYLOAD_MAX, 0, 8u << 20, FROM(PEER),
	  S(READY), SAME, NULL, true },
	/* fd: the new decisions.jsonl (O_APPEND). */
	{ BOX__MSG_TYPE__MSG_POLICY_LOG_FD, "PolicyLogFd", &box__policy_log_fd__descriptor,
	  box_validate_policy_log_fd_row, NULL, 64, 1, 0, FROM(BOXD), S(READY), SAME, NULL },
	/* The chain's head (after each write of lines, a rotation, the seal): no reply. */
	{ BOX__MSG_TYPE__MSG_POLICY_LOG_HEAD, "PolicyLogHead", &box__policy_log_head__descriptor,
	  box_validate_policy_log_head_row, NULL, 128, 0, 0, FROM(POLICYD), S(READY), SAME, NULL },
};

static const char *const policy_roles[BOX_POLICY_N_ROLES] = { "boxd", "box-policyd", "peer" };
static const char *const policy_states[BOX_POLICY_N_STATES] = { "init", "starting", "ready" };

const struct box_ipc_protocol box_proto_policy = {
	.name = "policy",
	.types = policy_types,
	.n_types = sizeof(policy_types) / sizeof(policy_types[0]),
	.role_names = policy_roles,
	.n_roles = BOX_POLICY_N_ROLES,
	.state_names = policy_states,
	.n_states = BOX_POLICY_N_STATES,
	.decode = box_proto_decode,
};
