/* SPDX-License-Identifier: Apache-2.0 */
/*
 * validate.h — one hand-written validator per IPC message of proto/boxd.proto.
 *
 * The client protocol's table (proto_client.c) names them per row, and
 * box_ipc_decode() (common/ipc.h) runs them after it checked required fields,
 * unknown fields and that every enum holds a declared value; these check
 * meaning: ranges, string lengths and charsets, absolute clean paths,
 * counts, and combinations (a query_param placement needs a param…).
 * They check shape only — boxd still re-checks paths with the caller's
 * rights. Returns 0, or -EINVAL (bad value), -ERANGE (number out of range),
 * -E2BIG (too many entries or too long). Pure; no logging.
 * Trusts: nothing; the message came from a peer.
 */
#ifndef BOX_VALIDATE_H
#define BOX_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

#include "boxd.pb-c.h"
#include "text.h"
#include "recheck.pb-c.h"

/* Limits shared by boxctl (which refuses earlier, with a line) and boxd. */
/* BOX_NAME_MAX, BOX_ID_LEN, BOX_STR_MAX: text.h. */
#define BOX_ARGV_MAX 1024          /* words of one command */
#define BOX_TIMELINE_MAX 32        /* steps of RunReply.timeline */
#define BOX_TIMELINE_STEP_MAX 64   /* bytes of a step's name */
#define BOX_ARGV_BYTES_MAX (128u << 10)
#define BOX_ENV_MAX 1024           /* variables of one env section */
#define BOX_ENV_VALUE_MAX (32u << 10)
#define BOX_FS_LIST_MAX 1024       /* entries of one filesystem list */
#define BOX_SECTIONS_MAX 256       /* tools, egress, mcp each */
#define BOX_TELEMETRY_TARGETS_MAX 16 /* [telemetry.NAME] sections */
#define BOX_FILE_SECRETS_MAX 16    /* file:// secrets of one box (each a mask candidate) */
#define BOX_DESTINATIONS_MAX 256
#define BOX_SPEC_FILES_MAX 16
#define BOX_SECRET_MAX (64u << 10)
#define BOX_PEM_MAX (1u << 20)     /* upstream_ca, hosts_file contents */
#define BOX_MCP_FRAME_MAX (64ull << 20)
/* [mcp.NAME] call_timeout (docs/box.ini.5.md): default 60 s, at most 366 days. */
/* [mcp.NAME] max_frame default (docs/box.ini.5.md). */
#define BOX_MCP_FRAME_DEFAULT (4ull << 20)
#define BOX_MCP_CALL_TIMEOUT_DEFAULT_MS (60ull * 1000)
#define BOX_MCP_CALL_TIMEOUT_MAX_MS (366ull * 86400 * 1000)
#define BOX_LINE_MAX 100000000u    /* a 1-based source line */
#define BOX_LIST_REPLY_MAX 4096    /* problems, disclosure lines, ps entries */
#define BOX_ASK_FIELDS_MAX 16      /* AskEntry.fields: the fields of a held request shown */
#define BOX_ASK_FIELD_TEXT_MAX 512 /* bytes of one AskField.value (boxd cuts it) */

/*
 * Does a message of this kind agree with the number of fds that came with
 * it (RunRequest: n_stdio_fds; LogReply: has_current + has_previous;
 * other types: 0)? -EBADMSG when not.
 */
int box_validate_fd_count(const ProtobufCMessage *m, unsigned n_fds);

/* box_valid_name, box_valid_box_id, box_valid_env_name, box_valid_path: text.h. */

int box_validate_box_spec(const Box__BoxSpec *m);
int box_validate_run_request(const Box__RunRequest *m);
int box_validate_run_reply(const Box__RunReply *m);
int box_validate_run_exit(const Box__RunExit *m);
int box_validate_run_control(const Box__RunControl *m);
int box_validate_run_starting(const Box__RunStarting *m);
int box_validate_ps_request(const Box__PsRequest *m);
int box_validate_ps_reply(const Box__PsReply *m);
int box_validate_stop_request(const Box__StopRequest *m);
int box_validate_stop_reply(const Box__StopReply *m);
int box_validate_log_request(const Box__LogRequest *m);
int box_validate_log_reply(const Box__LogReply *m);
/* McpPinsRequest/Reply (94/95): a box name or id; OK names the box and carries 1 fd. */
int box_validate_mcp_pins_request(const Box__McpPinsRequest *m);
int box_validate_mcp_pins_reply(const Box__McpPinsReply *m);
int box_validate_attach_request(const Box__AttachRequest *m);
int box_validate_attach_reply(const Box__AttachReply *m);
int box_validate_policy_reload_request(const Box__PolicyReloadRequest *m);
int box_validate_ask_request(const Box__AskRequest *m);
int box_validate_ask_reply(const Box__AskReply *m);
int box_validate_policy_reload_result(const Box__PolicyReloadResult *m);
int box_validate_check_request(const Box__CheckRequest *m);
int box_validate_check_reply(const Box__CheckReply *m);
/* box-recheck (recheck.proto). */
int box_validate_recheck_request(const Box__RecheckRequest *m);
int box_validate_recheck_reply(const Box__RecheckReply *m);
int box_validate_error_reply(const Box__ErrorReply *m);

/*
 * Wipe every secret_value in a spec in place (explicit_bzero) and mark it
 * absent, for a spec about to be printed or packed for anyone but the
 * gateway. The buffers stay allocated and are freed with the tree. boxd
 * copies the values it hands to the gateway before calling this.
 */
void box_spec_redact(Box__BoxSpec *m);

#endif
