/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_validate.h — validators for box-policyd's messages (proto/policy.proto).
 *
 * box_ipc_decode() has already checked required fields, unknown fields and
 * enum values; these check meaning: field names and their uniqueness, value
 * nesting and counts, UTF-8 strings without NUL, action spellings, box names
 * and ids, message lengths, and the combinations (an error event carries no
 * output). The history file's records (HistoryEpoch, HistoryEvent) use the
 * same checks when policyd recovers them. Returns 0, or -EINVAL (bad value),
 * -ERANGE (number out of range), -E2BIG (too many entries or too long).
 * Pure; no logging.
 * Trusts: nothing; the message came from a peer (or from a file on disk).
 */
#ifndef BOX_POLICY_VALIDATE_H
#define BOX_POLICY_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

#include "policy.pb-c.h"
#include "text.h" /* box_valid_utf8 */

#define BOX_POLICY_FIELDS_MAX 256        /* fields of one input/output/record */
#define BOX_POLICY_SET_MAX 4096          /* elements of one set */
#define BOX_POLICY_DEPTH_MAX 8           /* nesting of sets and records */
#define BOX_POLICY_FIELD_NAME_MAX 128
#define BOX_POLICY_STR_MAX (256u << 10)  /* one string value */
#define BOX_POLICY_ACTION_MAX 512        /* "fs:read", NS::Action::"tool" */
#define BOX_POLICY_RULES_MAX 65536       /* rule names in a reply */
#define BOX_POLICY_RULE_NAME_MAX 4096
#define BOX_POLICY_MESSAGE_MAX 4096      /* decision message (docs/box-policy.5.md) */
#define BOX_POLICY_HASHES_MAX 65536      /* rule hashes of one history epoch */
#define BOX_POLICY_HASH_MAX 64           /* bytes of one rule hash */
#define BOX_POLICY_NAMESPACES_MAX 256
#define BOX_POLICY_ASKS_MAX 64           /* decisions held for a person at once (@ask) */
#define BOX_POLICY_BATCH_MAX 256         /* requests of one DecideBatchRequest or probe */
#define BOX_POLICY_TOOLS_MAX 4096        /* tools of one PolicyToolSchema */
#define BOX_POLICY_TOOL_NAME_MAX 256     /* bytes of a tool's name */
#define BOX_POLICY_TOOL_FIELDS_MAX 256   /* arguments of one tool */
#define BOX_POLICY_TYPE_MAX 4096         /* bytes of one type expression */
#define BOX_POLICY_WARNINGS_MAX 64       /* warnings of a PolicyToolSchemaReply */
#define BOX_POLICY_TOOL_SCHEMA_MAX (16u << 20) /* a reassembled PolicyToolSchema */
#define BOX_POLICY_LOCAL_ACTIONS_MAX 64  /* actions of one PolicyLocal */

/* "fs:read"-style (lowercase word ':' lowercase word) or NS::Action::"TOOL". */
bool box_valid_action(const char *s);
/* A field list: names valid and unique, values within the caps. */
int box_validate_policy_fields(Box__PolicyField *const *f, size_t n, unsigned depth);

int box_validate_policy_init(const Box__PolicyInit *m);
int box_validate_policy_ready(const Box__PolicyReady *m);
int box_validate_decide_request(const Box__DecideRequest *m);
int box_validate_decide_reply(const Box__DecideReply *m);
/* A RecordRequest as a peer sends it: RESPONSE or ERROR, no input (policyd has the Decide's). */
int box_validate_record_request(const Box__RecordRequest *m);
/* 1..BOX_POLICY_BATCH_MAX records (-E2BIG above), each as box_validate_record_request. */
int box_validate_record_batch(const Box__RecordBatch *m);
/* 1..BOX_POLICY_BATCH_MAX requests (-E2BIG above), each as box_validate_decide_request. */
int box_validate_decide_batch_request(const Box__DecideBatchRequest *m);
/* At most BOX_POLICY_BATCH_MAX replies, each as box_validate_decide_reply. */
int box_validate_decide_batch_reply(const Box__DecideBatchReply *m);
int box_validate_policy_log_fd(const Box__PolicyLogFd *m);
int box_validate_policy_log_head(const Box__PolicyLogHead *m);
int box_validate_policy_local(const Box__PolicyLocal *m);
int box_validate_policy_reload(const Box__PolicyReload *m);
int box_validate_policy_ask_list_reply(const Box__PolicyAskListReply *m);
int box_validate_policy_ask_answer(const Box__PolicyAskAnswer *m);
int box_validate_policy_ask_answer_reply(const Box__PolicyAskAnswerReply *m);
int box_validate_policy_reload_reply(const Box__PolicyReloadReply *m);
int box_validate_policy_ship(const Box__PolicyShip *m);
int box_validate_policy_kernel_refusal(const Box__PolicyKernelRefusal *m);
/* A normalized MCP namespace: 1..32 of [A-Za-z0-9_], not "Box". */
bool box_valid_policy_namespace(const char *ns);
/*
 * server a [mcp.NAME] name, ns a namespace as above; at most
 * BOX_POLICY_TOOLS_MAX tools with unique names (1..256 bytes of UTF-8
 * without NUL: whether a name can be an action is policyd's to say), each
 * with at most BOX_POLICY_TOOL_FIELDS_MAX unique [A-Za-z_][A-Za-z0-9_]*
 * fields whose type expression has 1..BOX_POLICY_TYPE_MAX bytes.
 */
int box_validate_policy_tool_schema(const Box__PolicyToolSchema *m);
/* ok, or !ok with an error (<= 4096 bytes); <= 64 warnings of <= 4096 bytes. */
int box_validate_policy_tool_schema_reply(const Box__PolicyToolSchemaReply *m);
/* As box_validate_decide_batch_request / _reply. */
int box_validate_policy_probe_request(const Box__PolicyProbeRequest *m);
int box_validate_policy_probe_reply(const Box__PolicyProbeReply *m);
int box_validate_history_epoch(const Box__HistoryEpoch *m);
int box_validate_history_event(const Box__HistoryEvent *m);

/*
 * Dispatch on the descriptor for the messages above; -EINVAL for a
 * descriptor that is not one of them (the history file's records; the
 * wire's rows name their validator in proto_policy.c).
 */
int box_validate_policy_msg(const ProtobufCMessage *m);

#endif
