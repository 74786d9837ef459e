/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto_mcp.h — box-mcpd's protocols (mcp.proto):
 *   box_proto_mcpsession  an MCP alias <-> box-mcpd, one connection to
 *                         RUNTIME/mcp.sock per invocation
 *   box_proto_mcpctl      boxd <-> box-mcpd on box-mcpd's fd 3
 *
 * The tables (proto_mcp.c) are the receiver's rules; proto/README.md is the
 * human version.
 * Session roles: alias, box-mcpd. States:
 *   open     nothing exchanged: only McpOpen (the alias, once, 3 fds)
 *   running  the session carries JSON-RPC on the passed fds; McpClose
 *            (box-mcpd, once) ends it
 *   ended    nothing more may pass
 * Control roles: boxd, box-mcpd. States:
 *   init     only McpInit (boxd, once, 1 fd: the pins file)
 *   starting only McpReady (box-mcpd, once; ok = false leaves it here, the
 *            daemon exits next)
 *   serving  McpServerStart (3 fds) / McpServerStop (box-mcpd),
 *            McpServerStarted / McpServerExit (boxd), any number
 * Trusts: nothing; this is data.
 */
#ifndef BOX_PROTO_MCP_H
#define BOX_PROTO_MCP_H

#include "ipc.h"
#include "mcp.pb-c.h"

enum box_mcpsession_role {
	BOX_MCPSESSION_ROLE_ALIAS,
	BOX_MCPSESSION_ROLE_MCPD,
	BOX_MCPSESSION_N_ROLES,
};

enum box_mcpsession_state {
	BOX_MCPSESSION_OPEN,
	BOX_MCPSESSION_RUNNING,
	BOX_MCPSESSION_ENDED,
	BOX_MCPSESSION_N_STATES,
};

enum box_mcpctl_role {
	BOX_MCPCTL_ROLE_BOXD,
	BOX_MCPCTL_ROLE_MCPD,
	BOX_MCPCTL_N_ROLES,
};

enum box_mcpctl_state {
	BOX_MCPCTL_INIT,
	BOX_MCPCTL_STARTING,
	BOX_MCPCTL_SERVING,
	BOX_MCPCTL_N_STATES,
};

/* Caps the validators enforce (docs/box-mcpd.8.md names them). */
#define BOX_MCP_ALIAS_MAX      32u          /* an alias name: 1-32 of [A-Za-z0-9._-] */
#define BOX_MCP_ARG_MAX        (256u << 10) /* one argv / args entry */
#define BOX_MCP_ARGS_MAX       4096u        /* argv / args entries */
#define BOX_MCP_SERVERS_MAX    256u         /* stdio [mcp.NAME] tables */
#define BOX_MCP_MESSAGE_MAX    4096u        /* McpClose.message, McpReady.error, Started.error */
#define BOX_MCP_REASM_MAX      (4u << 20)   /* a whole McpOpen / McpInit (reassembled) */
#define BOX_MCP_MAX_FRAME_MIN  1024ull      /* [mcp.NAME] max_frame: 1 KiB .. 64 MiB */
#define BOX_MCP_MAX_FRAME_MAX  (64ull << 20)
/* call_timeout: 1 ms .. 366 days (as long as any duration of docs/box.ini.5.md). */
#define BOX_MCP_TIMEOUT_MAX_MS (366ull * 24 * 3600 * 1000)

extern const struct box_ipc_protocol box_proto_mcpsession;
extern const struct box_ipc_protocol box_proto_mcpctl;

/* An alias name: 1-32 of [A-Za-z0-9._-], not "." nor "..". */
bool box_valid_mcp_alias(const char *s);
/* The policy namespace of server `name` (docs/box-policy.5.md): every char outside
 * [A-Za-z0-9_] replaced by '_'. ns must hold BOX_NAME_MAX + 1 bytes; false
 * when name is not a valid server name. */
bool box_mcp_namespace(const char *name, char *ns, size_t size);

int box_validate_mcp_open(const Box__McpOpen *m);
int box_validate_mcp_close(const Box__McpClose *m);
int box_validate_mcp_init(const Box__McpInit *m);
int box_validate_mcp_ready(const Box__McpReady *m);
int box_validate_mcp_server_start(const Box__McpServerStart *m);
int box_validate_mcp_server_started(const Box__McpServerStarted *m);
int box_validate_mcp_server_exit(const Box__McpServerExit *m);
int box_validate_mcp_server_stop(const Box__McpServerStop *m);

#endif
