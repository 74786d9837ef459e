/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mcpd.h — box-mcpd's shared state (main.c: start-up, control channel,
 * listener; session.c: one MCP session and the broker's rules; policy.c:
 * the box-policyd channel; seccomp.c: the allow-list).
 * Trusts: boxd for McpInit (validated by proto/mcp_validate.c); nothing from
 * an alias, a harness or a server.
 */
#ifndef BOX_MCPD_H
#define BOX_MCPD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <jansson.h>

#include "ipc_event.h"
#include "mcp.pb-c.h"
#include "policy.pb-c.h"
#include "policy_client.h"
#include "policy_fields.h"
#include "toolschema.h"

#include "daemon_fds.h" /* DAEMON_FD_BOXD, DAEMON_FD_POLICYD, DAEMON_FD_LISTEN */

#define MCPD_SESSIONS_MAX 256      /* concurrent sessions, all servers */
#define MCPD_INFLIGHT_MAX 1024     /* requests in flight per session, each direction */
#define MCPD_QUEUE_MAX 1024        /* frames held per direction while a decision is pending */
#define MCPD_OPEN_TIMEOUT_MS 10000 /* McpOpen after the connection */
#define MCPD_EXIT_GRACE_MS 2000    /* stdout EOF -> McpServerExit, or exit -> stdout EOF */
#define MCPD_READ_CHUNK (64u << 10)

/* One stdio [mcp.NAME] (McpInit.servers[i]) and what the broker learnt of it. */
struct mcpd_server {
	const Box__McpServer *cfg;
	struct mcp_catalog *catalog; /* the last tools/list seen (pages added up) */
	bool failed;                 /* the last PolicyToolSchemaReply was !ok */
	char *failed_why;
	unsigned n_sessions;
};

struct mcpd {
	struct event_base *base;
	struct box_ipc_event *boxd;
	struct policy_client *policyd;
	Box__McpInit *init;
	struct mcpd_server *servers;
	size_t n_servers;
	int pins_fd;
	struct mcp_pins *pins; /* pins.h: what the pins file says */
	char *pins_rest;       /* an unterminated last line, kept for the next read */
	size_t pins_rest_len;
	int exit_code;
};

extern struct mcpd M;

/* ---- main.c --------------------------------------------------------------- */

/* Log, stop every server, leave the loop with CODE. */
void mcpd_exit(int code);
/* McpServerStart for a session: start id, or 0 when it could not be sent. */
uint64_t mcpd_server_start(const char *server, const int fds[3]);
void mcpd_server_stop(uint64_t start_id);
/* The owner's home written "~" (docs/box-policy.5.md spellings); malloc'd. */
char *mcpd_spell(const char *path);

/* ---- session.c ------------------------------------------------------------ */

struct session;
/* A new connection on mcp.sock (takes fd). */
void session_accept(int fd);
size_t sessions_count(void);
/* boxd's answers, by start id (false: no session has it). */
bool session_started(uint64_t start_id, bool ok, const char *error);
bool session_exited(uint64_t start_id, int status);
/* Every session's server stopped (exit). */
void sessions_stop_all(void);

/* ---- policy.c ------------------------------------------------------------- */

/* A request's fields: struct policy_fields (proto/policy_fields.h). */

/*
 * A reply from box-policyd: DecideReply, DecideBatchReply (pd_decide_then),
 * PolicyToolSchemaReply or PolicyProbeReply (the tree, validated by the
 * table). Never called after pd_cancel_owner(owner).
 */
typedef void (*pd_fn)(void *arg, const ProtobufCMessage *reply);

int pd_start(int fd);
/* Send TYPE (DecideRequest, PolicyToolSchema, PolicyProbeRequest); 0 or negative errno. */
int pd_ask(uint32_t type, const ProtobufCMessage *msg, pd_fn fn, void *arg, const void *owner);
int pd_decide(const char *action, Box__PolicyField **in, size_t n_in, pd_fn fn, void *arg,
	      const void *owner);
/*
 * ACTION1, then ACTION2 only if ACTION1 is permitted, in one round trip (a
 * DecideBatch with until_deny): FN gets the DecideBatchReply, one reply (a
 * denial of ACTION1) or two.
 */
int pd_decide_then(const char *action1, Box__PolicyField **in1, size_t n_in1,
		   const char *action2, Box__PolicyField **in2, size_t n_in2, pd_fn fn, void *arg,
		   const void *owner);
void pd_cancel_owner(const void *owner);
void pd_record(bool ok, const char *action, Box__PolicyField **in, size_t n_in,
	       Box__PolicyField **out, size_t n_out);

/* ---- pinfile.c ----------------------------------------------------------- */

struct mcp_pin_verdict;
/* Feed pins.c what was appended to the pins file since the last read. */
int mcpd_pins_reread(void);
/* Decide tool T's definition against its pin; appends the pin / change line. */
int mcpd_pins_check(const struct mcpd_server *srv, const struct mcp_tool *t,
		    struct mcp_pin_verdict *v);

/* ---- seccomp.c ------------------------------------------------------------ */

int mcpd_seccomp(void);

#endif
