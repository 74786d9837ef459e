/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gateway.h — box-gateway's shared state and the interfaces between its
 * files (box-gateway/README.md has the whole picture).
 *
 *   main.c      start-up (one named step a line), the boxd channel, listeners
 *   decide.c    the policyd channel: Decides in flight by request id, Records
 *   dns.c       resolution: IP literals, the hosts file, then evdns
 *   hosts.c     the hosts(5) text of GatewayInit (parsed once, before seccomp)
 *   stream.c    one nonblocking socket, plain or BoringSSL, with evbuffers
 *   conn.c      one client connection: the proxy protocol and the exchange
 *   mcp.c       remote MCP servers: JSON-RPC requests decided, replies parsed
 *   otlp.c      the agent's OTLP/HTTP receiver, relayed to the telemetry targets
 *   export.c    the otlp telemetry targets: box-policyd's records and the agent's, exported
 *   seccomp.c   the allow-list
 *   state.c     G and gw_exit (a leaf)
 *
 * Single-threaded: everything runs on G.base.
 * Trusts: boxd for GatewayInit (validated by proto/gateway_validate.c);
 * nothing from the sandbox, upstream servers or resolvers.
 */
#ifndef BOX_GATEWAY_GATEWAY_H
#define BOX_GATEWAY_GATEWAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <event2/event.h>
#include <openssl/ssl.h>

#include "cred.h"
#include "http.h"
#include "redact.h"
#include "gateway.pb-c.h"
#include "policy.pb-c.h"
#include "policy_client.h"
#include "policy_fields.h"

#include "daemon_fds.h" /* DAEMON_FD_BOXD, DAEMON_FD_POLICYD */
#include "text.h"        /* BOX_TELEMETRY_FILES_MAX */

/* Fixed caps (README.md "Limits"). */
#define GW_HEAD_MAX (64u << 10)	    /* request or response head */
#define GW_HEADERS_MAX 100u	    /* field lines in a head */
#define GW_HEAD_TIMEOUT_MS 30000u   /* a head must complete within this (or idle_timeout) */
#define GW_PIPELINE_MAX (64u << 10) /* bytes read ahead of the request being served */
#define GW_PIPELINE_HEADS 16u	    /* requests queued behind the one being served */
#define GW_HIGH_WATER (256u << 10)  /* stop reading the other side above this */
#define GW_LOW_WATER (64u << 10)    /* and resume below this */
#define GW_READ_CHUNK (16u << 10)   /* one read(2)/SSL_read */
#define GW_READ_BURST (64u << 10)   /* bytes read per wakeup before yielding */
#define GW_LINGER_MS 2000	    /* lingering close after our last reply */
#define GW_ADDRS_MAX 16u	    /* resolved addresses tried per host */
#define GW_LEAF_CACHE 256u	    /* leaf certificates kept */

struct gw_listener;
struct gw_conn;

struct gw_hosts;

struct gw_state {
	struct event_base *base;
	/* GatewayInit */
	char box_name[64];
	char box_id[16];
	uint32_t proxy_port;
	uint64_t connect_timeout_ms, idle_timeout_ms, max_connections, max_request_body;
	bool allow_host_loopback;
	struct cred_dest *passthrough;
	size_t n_passthrough;
	struct cred_binding *creds;
	size_t n_creds;
	struct http_limits lim;
	size_t n_mcp; /* http [mcp.NAME] servers (mcp.c holds them) */
	/* GatewayInit's telemetry files (the agent's OTLP records go there, otlp.c) */
	int tel_fds[BOX_TELEMETRY_FILES_MAX];
	const char *tel_names[BOX_TELEMETRY_FILES_MAX];
	size_t n_tel;
	/* made at start */
	struct gw_ca *ca;
	SSL_CTX *client_ctx;
	struct evdns_base *dns;
	struct gw_hosts *hosts;
	/* running */
	struct box_ipc_event *boxd;
	struct policy_client *policyd;
	struct gw_listener *listeners;
	uint64_t n_conns;
	uint64_t refused_over_limit;
	int exit_code;
};

extern struct gw_state G;

/* state.c: end the loop with this status (the highest asked for wins). */
void gw_exit(int code);

/* ---- main.c: listeners ----------------------------------------------------- */

struct gw_listener {
	uint32_t id;
	char sandbox[48];
	int fd;
	struct event *ev;
	struct gw_conn *conns; /* list (conn.c links them) */
	bool otlp;             /* the sandbox's OTLP receiver (otlp.c), not its proxy */
	struct gw_listener *next;
};

/* ---- decide.c -------------------------------------------------------------- */

/* A DecideRequest/RecordRequest input under construction (no allocation). */
/* A request's fields: struct policy_fields (proto/policy_fields.h). */

/*
 * A reply from box-policyd (DecideReply; PolicyToolSchemaReply for gw_tool_schema),
 * valid during the call: libpolicyclient/policy_client.h.
 */
typedef policy_client_reply_fn gw_decide_fn;
/* A DecideReply's verdict, and its message (valid during the callback). */
bool gw_verdict(const ProtobufCMessage *reply, const char **message);
/*
 * Send a DecideRequest; fn(owner, reply) is called once with the reply, unless
 * gw_decide_cancel(owner) comes first. Negative errno when it could not be sent
 * (logged; the caller denies).
 */
int gw_decide(const char *action, const struct policy_fields *in, gw_decide_fn fn, void *owner);
/* The same with a built input (MCP tool arguments: nested values). */
int gw_decide_fields(const char *action, Box__PolicyField **in, size_t n, gw_decide_fn fn,
		     void *owner);
/* PolicyToolSchema; fn gets PolicyToolSchemaReply (ok, error). Negative errno: not sent. */
int gw_tool_schema(const Box__PolicyToolSchema *m, gw_decide_fn fn, void *arg);
/* The asker is gone: none of its callbacks will be called. */
void gw_decide_cancel(const void *owner);
void gw_record(bool ok, const char *action, const struct policy_fields *in,
	       const struct policy_fields *out);
int gw_decide_start(int fd);
/* The box ends but the gateway stays to export (export.c): the policyd channel closes soon. */
void gw_decide_end(void);

/* ---- dns.c ----------------------------------------------------------------- */

struct gw_addrs {
	size_t n;
	struct sockaddr_storage a[GW_ADDRS_MAX];
};
/* err: 0, or a short reason ("no such host"). */
typedef void (*gw_resolve_fn)(void *arg, const char *err, const struct gw_addrs *addrs);
struct gw_resolve;
/* The resolver(s): `resolver` "IP:PORT"/"[IP6]:PORT", or NULL for /etc/resolv.conf. */
int gw_dns_init(const char *resolver, const uint8_t *hosts, size_t hosts_len, char *why,
		size_t why_len);
/*
 * Resolve host (addr_host_spelling) once. Returns 1 with *out filled at
 * once (an address literal or a hosts-file name), 0 when fn will be called
 * later (*handle set), negative errno on failure.
 */
int gw_resolve(const char *host, bool is_ip, uint16_t port, struct gw_addrs *out, gw_resolve_fn fn,
	       void *arg, struct gw_resolve **handle);
void gw_resolve_cancel(struct gw_resolve *r);

/* ---- hosts.c --------------------------------------------------------------- */

/*
 * Parse hosts(5) text: "ADDRESS NAME [ALIAS...]" per line, '#' comments.
 * Names are kept as addr_host_spelling gives them; a malformed line is an
 * error naming it (why). Caps: 1 MiB of text (the validator's), 65536 entries.
 */
int gw_hosts_parse(const char *text, size_t len, struct gw_hosts **out, char *why, size_t why_len);
void gw_hosts_free(struct gw_hosts *h);
/* Every address for name, in file order, port set; returns how many (<= max). */
size_t gw_hosts_lookup(const struct gw_hosts *h, const char *name, uint16_t port,
		       struct sockaddr_storage *out, size_t max);

/* ---- conn.c ---------------------------------------------------------------- */

void gw_conn_accept(struct gw_listener *l, int fd);
void gw_conns_close_listener(struct gw_listener *l);

/* ---- otlp.c: the agent's OTLP/HTTP receiver --------------------------------- */

void gw_otlp_accept(struct gw_listener *l, int fd);
void gw_otlp_close_listener(struct gw_listener *l);

/* ---- export.c: the [telemetry.NAME] kind = otlp targets ------------------------- */

enum gw_signal { GW_SIGNAL_LOGS, GW_SIGNAL_TRACES, GW_SIGNAL_METRICS };
/*
 * The targets of GatewayInit, and the telemetry channel from box-policyd
 * (CHAN_FD, taken; -1 without a target). 0, or negative errno with WHY.
 */
int gw_export_init(const Box__GatewayInit *in, int chan_fd, char *why, size_t why_len);
/* Does the box have an otlp target? */
bool gw_export_targets(void);
/*
 * The box ends: export what is queued at once and what box-policyd still
 * sends, then leave the loop (gw_exit(0)) once the telemetry channel ended and
 * nothing is queued, or after GW_EXPORT_END_MS (boxd's kill comes at 3 s).
 */
void gw_export_finish(void);
#define GW_EXPORT_END_MS 2500
/* The agent's request M (re-tagged; RECORDS in it) to each otlp target that takes it. */
void gw_export_relay(const ProtobufCMessage *m, enum gw_signal sig, size_t records);
/* At exit: what each target exported, refused, dropped, and what is still queued. */
void gw_export_summary(void);

/* ---- mcp.c: remote MCP servers ------------------------------------------------ */

struct gw_mcp_server;
struct gw_mcp_call;
enum gw_mcp_verdict {
	GW_MCP_PENDING, /* fn will be called with FORWARD or ANSWER */
	GW_MCP_FORWARD, /* send it upstream (gw_mcp_replacement: maybe another body) */
	GW_MCP_ANSWER,  /* answer the client with gw_mcp_answer, send nothing upstream */
};
typedef void (*gw_mcp_fn)(void *arg, enum gw_mcp_verdict v);
/* The servers of GatewayInit (pointing into it). */
int gw_mcp_init(const Box__GatewayInit *in, char *why, size_t why_len);
/* The server whose url is https://host:port + path (canonical), or NULL. */
const struct gw_mcp_server *gw_mcp_match(const char *host, uint16_t port, const char *path);
uint64_t gw_mcp_max_frame(const struct gw_mcp_server *s);
const char *gw_mcp_name(const struct gw_mcp_server *s);
/* One exchange with the server's url (a POST's message, or a GET's stream). */
struct gw_mcp_call *gw_mcp_call_new(const struct gw_mcp_server *s, gw_mcp_fn fn, void *arg);
uint64_t gw_mcp_call_timeout_ms(const struct gw_mcp_call *c);
/* Decide the POSTed body: FORWARD/ANSWER now, or PENDING (fn later, never from here). */
enum gw_mcp_verdict gw_mcp_decide(struct gw_mcp_call *c, const char *body, size_t len);
/* ANSWER: the HTTP status; *body the JSON-RPC error (valid while c lives). */
unsigned gw_mcp_answer(const struct gw_mcp_call *c, const char **body);
/* The forwarded request had no response head within call_timeout: the answer is -32001. */
void gw_mcp_timed_out(struct gw_mcp_call *c);
/* FORWARD: the body to send instead (a refused reply to the server), or NULL. */
const char *gw_mcp_replacement(const struct gw_mcp_call *c, size_t *len);
/* The response: its head (its Content-Type and Content-Encoding values, or
 * NULL), n body bytes at the start of `from` (copied, not drained; negative:
 * over max_frame, or a server message mcp.c refuses — close before they reach
 * the client), its end. */
void gw_mcp_response_head(struct gw_mcp_call *c, unsigned status, const char *content_type,
			  const char *content_encoding);
int gw_mcp_response_data(struct gw_mcp_call *c, struct evbuffer *from, size_t n);
void gw_mcp_response_end(struct gw_mcp_call *c);
/* A forwarded request whose reply never came records mcp:call error here. */
void gw_mcp_call_free(struct gw_mcp_call *c);

/* ---- seccomp.c ------------------------------------------------------------- */

int gw_seccomp(void);

#endif
