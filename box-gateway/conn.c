/* SPDX-License-Identifier: Apache-2.0 */
/*
 * conn.c — one client connection of box-gateway: the proxy protocol, the
 * decisions in docs/box-policy.5.md's order, and the relay (README.md has the
 * state machine).
 *
 * Phases of a connection:
 *   HEAD      waiting for a request head (the first, or the next keep-alive one)
 *   ESTAB     net:connect {host, port} -> resolve once -> per address: refused
 *             before policy? -> net:connect {host, port, ip} -> dial; the first
 *             address that connects is pinned
 *   TLS       200 sent to CONNECT; the client's TLS handshake with our leaf
 *   BODYIN    a chunked request body buffered (up to max_request_body) to count it
 *   MCPBODY   a POST to a remote MCP server's url: its body buffered (up to
 *             max_frame) after http:request, then decided by mcp.c (DECIDE)
 *   DECIDE    http:request in flight
 *   UPCONN    re-dial of the pinned address / upstream TLS handshake
 *   EXCHANGE  request forwarded (its body streamed), response relayed
 *   RELAY     raw bytes both ways (passthrough tunnel, or after a 101)
 *   CLOSING   our last reply is flushed, then the connection is closed
 * Modes: PROXY (plain HTTP proxy requests), TLS (inside an intercepted CONNECT),
 * RAW (passthrough). Every request is decided on its own; pipelined requests
 * wait in the input buffer (at most GW_PIPELINE_MAX bytes, then reading stops)
 * and are answered in order, one at a time.
 *
 * Memory: a stream is freed only from the reaper (never inside one of its own
 * callbacks); a connection is torn down by conn_destroy, which kills both
 * streams first.
 * Trusts: nothing from the client or upstream; every head is parsed by
 * http.c under the fixed caps; policyd's verdicts.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "addr.h"
#include "ca.h"
#include "cred.h"
#include "gateway.h"
#include "http.h"
#include "log.h"
#include "stream.h"

enum phase {
	P_HEAD,
	P_ESTAB,
	P_TLS,
	P_BODYIN,
	P_MCPBODY,
	P_DECIDE,
	P_UPCONN,
	P_EXCHANGE,
	P_RELAY,
	P_CLOSING
};
enum mode { M_PROXY, M_TLS, M_RAW };
enum rstate { R_NONE, R_HEAD, R_LEN, R_CHUNKED, R_EOF };

struct gw_conn {
	struct gw_listener *lst;
	struct gw_conn *next, *prev;
	struct gw_conn *grave;
	struct gw_stream *cli, *up;
	struct event *timer;
	enum phase phase;
	enum mode mode;
	bool dead;
	bool cli_eof;
	int64_t activity;
	int64_t head_start;
	size_t head_scanned; /* http_head_end's progress on the head being read */
	int64_t dial_deadline;
	int64_t linger_until; /* CLOSING: the lingering close ends by then */

	/* The destination: the CONNECT's, or the current plain request's. */
	char host[HTTP_HOST_MAX];
	uint16_t port;
	bool is_ip;
	bool is_connect;
	/* What `up` is connected to (plain mode reuses it for the same host:port). */
	char up_host[HTTP_HOST_MAX];
	uint16_t up_port;
	bool up_tls;
	bool up_used; /* `up` already carried a whole exchange (keep-alive) */
	bool retried; /* this request was resent once on a fresh connection */
	bool have_pin;
	struct sockaddr_storage pin;

	/* ESTAB */
	struct gw_addrs *addrs;
	size_t addr_i;
	unsigned dial_failures, refusals;
	bool dial_timed_out;
	bool host_permitted; /* its net:connect {host, port} permitted, its record still owed */
	char last_err[96];
	char *refuse_msg;
	bool decide; /* a Decide in flight (its owner: this) */
	struct gw_resolve *resolve;

	/* The request being served. */
	bool have_req;
	struct http_request req;
	char *origin;
	char *path;
	const struct cred_binding *cred;
	uint64_t body_left;
	uint64_t body_bytes;
	struct http_chunked ch;
	struct evbuffer *body;
	bool body_whole; /* the whole body is in `body` (a remote MCP request) */
	/* A request to a remote MCP server's url (mcp.c); NULL for every other. */
	const struct gw_mcp_server *mcp_srv;
	struct gw_mcp_call *mcp;
	int64_t mcp_deadline; /* a forwarded POST's call_timeout, until its response head */

	/* Its response. */
	enum rstate rstate;
	struct http_response resp;
	bool have_resp;
	uint64_t resp_left;
	struct http_chunked rch;
	bool chunk_out; /* re-framed as chunked to the client */
	bool eof_out;	/* delimited by our close */
	bool head_sent; /* a response head went to the client */
	bool client_keep;
	bool up_reusable;
	unsigned status;
	uint64_t delivered;
	bool redacting;
	struct cred_redactor red;
};

static struct gw_conn *graveyard;
static struct event *reaper;

static void process_head(struct gw_conn *c);
static void mcp_request(struct gw_conn *c);
static void try_addr(struct gw_conn *c);
static void send_request(struct gw_conn *c);
static void up_prepare(struct gw_conn *c);
static void cli_read_update(struct gw_conn *c);
static void up_read_update(struct gw_conn *c);
static void on_cli_read(struct gw_stream *s, void *arg);
static void on_cli_write(struct gw_stream *s, void *arg);
static void on_cli_close(struct gw_stream *s, int err, void *arg);
static void on_cli_handshake(struct gw_stream *s, int err, const char *why, void *arg);
static void on_up_read(struct gw_stream *s, void *arg);
static void on_up_write(struct gw_stream *s, void *arg);
static void on_up_close(struct gw_stream *s, int err, void *arg);
static void on_up_connected(struct gw_stream *s, int err, void *arg);
static void on_up_handshake(struct gw_stream *s, int err, const char *why, void *arg);

static const struct gw_stream_ops cli_ops = {
    .on_read = on_cli_read,
    .on_write = on_cli_write,
    .on_close = on_cli_close,
    .on_handshake = on_cli_handshake,
};
static const struct gw_stream_ops up_ops = {
    .on_read = on_up_read,
    .on_write = on_up_write,
    .on_close = on_up_close,
    .on_connected = on_up_connected,
    .on_handshake = on_up_handshake,
};

/* ---- lifetime ---------------------------------------------------------------- */

static void
on_reap(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	while (graveyard) {
		struct gw_conn *c = graveyard;
		graveyard = c->grave;
		gw_stream_free(c->cli);
		gw_stream_free(c->up);
		free(c);
	}
}

static void
req_reset(struct gw_conn *c)
{
	if (c->have_req)
		http_request_clear(&c->req);
	if (c->have_resp)
		http_response_clear(&c->resp);
	c->have_req = c->have_resp = false;
	free(c->origin);
	free(c->path);
	c->origin = c->path = NULL;
	c->cred = NULL;
	c->body_left = c->body_bytes = 0;
	if (c->body) {
		evbuffer_free(c->body);
		c->body = NULL;
	}
	c->body_whole = false;
	if (c->mcp) {
		gw_mcp_call_free(c->mcp);
		c->mcp = NULL;
	}
	c->mcp_srv = NULL;
	c->mcp_deadline = 0;
	c->rstate = R_NONE;
	c->resp_left = 0;
	c->chunk_out = c->eof_out = c->head_sent = false;
	c->status = 0;
	c->delivered = 0;
	if (c->redacting)
		cred_redactor_clear(&c->red);
	c->redacting = false;
	c->retried = false;
}

static void host_record(struct gw_conn *c, bool ok);

static void
conn_destroy(struct gw_conn *c)
{
	if (c->dead)
		return;
	c->dead = true;
	gw_stream_kill(c->cli);
	if (c->up)
		gw_stream_kill(c->up);
	gw_decide_cancel(c);
	c->decide = false;
	gw_resolve_cancel(c->resolve);
	c->resolve = NULL;
	if (c->timer)
		event_free(c->timer);
	c->timer = NULL;
	/* Gone while connecting: what was permitted did not happen. */
	host_record(c, false);
	req_reset(c);
	free(c->addrs);
	c->addrs = NULL;
	free(c->refuse_msg);
	c->refuse_msg = NULL;
	if (c->prev)
		c->prev->next = c->next;
	else if (c->lst)
		c->lst->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	G.n_conns--;
	c->grave = graveyard;
	graveyard = c;
	event_active(reaper, EV_TIMEOUT, 0);
}

/* Drop the upstream connection (freed by the reaper with the conn, or now if idle). */
static void
up_drop(struct gw_conn *c)
{
	if (!c->up)
		return;
	gw_stream_kill(c->up);
	/* Freed later: we may be inside one of its callbacks. */
	struct gw_conn *holder = calloc(1, sizeof(*holder));
	if (holder) {
		holder->up = c->up;
		holder->dead = true;
		holder->grave = graveyard;
		graveyard = holder;
		event_active(reaper, EV_TIMEOUT, 0);
	}
	c->up = NULL;
	c->up_tls = false;
	c->up_used = false;
	c->up_host[0] = '\0';
}

/* ---- timers ------------------------------------------------------------------ */

static uint64_t
head_timeout(void)
{
	return G.idle_timeout_ms < GW_HEAD_TIMEOUT_MS ? G.idle_timeout_ms : GW_HEAD_TIMEOUT_MS;
}

static void
arm_timer(struct gw_conn *c)
{
	int64_t now = gw_now_ms();
	int64_t due = c->activity + (int64_t)G.idle_timeout_ms;
	if (c->head_start && c->phase == P_HEAD && c->head_start + (int64_t)head_timeout() < due)
		due = c->head_start + (int64_t)head_timeout();
	if (c->dial_deadline && c->dial_deadline < due)
		due = c->dial_deadline;
	if (c->linger_until && c->linger_until < due)
		due = c->linger_until;
	if (c->mcp_deadline && c->mcp_deadline < due)
		due = c->mcp_deadline;
	int64_t wait = due - now + 10; /* the coarse clock's granularity */
	if (wait < 10)
		wait = 10;
	struct timeval tv = {.tv_sec = wait / 1000, .tv_usec = (wait % 1000) * 1000};
	event_add(c->timer, &tv);
}

static void reply(struct gw_conn *c, unsigned status, const char *reason, const char *body,
		  bool refused, bool close_after);
static void fail_upstream(struct gw_conn *c, unsigned status, const char *why);
static void mcp_timed_out(struct gw_conn *c);

/*
 * The outcome of the host decision (net:connect {host, port}): connected, or not — every
 * permitted one gets one (an address refused, the name unresolved, the client gone while
 * connecting), or box-policyd and the channel's client would keep its permit until their
 * bound forgot it. The per-address decisions have none (proto/policy_permits.h).
 */
static void
host_record(struct gw_conn *c, bool ok)
{
	if (!c->host_permitted)
		return;
	c->host_permitted = false;
	struct policy_fields fs;
	policy_fields_init(&fs);
	policy_fields_str(&fs, "host", c->host);
	policy_fields_long(&fs, "port", c->port);
	gw_record(ok, "net:connect", &fs, NULL);
}

static void
on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct gw_conn *c = arg;
	int64_t now = gw_now_ms();
	(void)fd;
	(void)what;

	if (c->linger_until && now >= c->linger_until) {
		conn_destroy(c);
		return;
	}
	if (c->dial_deadline && now >= c->dial_deadline) {
		c->dial_deadline = 0;
		if (c->phase == P_UPCONN) {
			fail_upstream(c, 504, "upstream connect timed out");
			if (!c->dead)
				arm_timer(c);
			return;
		}
		c->dial_timed_out = true;
		c->dial_failures++;
		(void)snprintf(c->last_err, sizeof(c->last_err), "timed out");
		up_drop(c);
		c->addr_i++;
		try_addr(c);
		if (!c->dead)
			arm_timer(c);
		return;
	}
	if (c->mcp_deadline && now >= c->mcp_deadline) {
		c->mcp_deadline = 0;
		if ((c->phase == P_EXCHANGE || c->phase == P_UPCONN) && !c->head_sent) {
			mcp_timed_out(c);
			return;
		}
	}
	if (c->phase == P_HEAD && c->head_start && now - c->head_start >= (int64_t)head_timeout()) {
		log_debug("closing a connection whose request head took over %llu ms",
			  (unsigned long long)head_timeout());
		conn_destroy(c);
		return;
	}
	if (now - c->activity >= (int64_t)G.idle_timeout_ms) {
		if ((c->phase == P_EXCHANGE || c->phase == P_UPCONN) && !c->head_sent) {
			fail_upstream(c, 504, "upstream did not answer in time");
			if (!c->dead)
				arm_timer(c);
			return;
		}
		conn_destroy(c);
		return;
	}
	arm_timer(c);
}

/* ---- gateway-made replies ------------------------------------------------------ */

static const char *
reason_of(unsigned status)
{
	switch (status) {
	case 200:
		return "Connection Established";
	case 400:
		return "Bad Request";
	case 403:
		return "Forbidden";
	case 413:
		return "Content Too Large";
	case 421:
		return "Misdirected Request";
	case 500:
		return "Internal Server Error";
	case 502:
		return "Bad Gateway";
	case 504:
		return "Gateway Timeout";
	default:
		return "Error";
	}
}

/* Our last bytes are out: half-close, then drop what the client still sends for a while. */
static void
linger(struct gw_conn *c)
{
	if (!gw_stream_open(c->cli) || c->cli_eof) {
		gw_stream_shutdown(c->cli);
		conn_destroy(c);
		return;
	}
	gw_stream_shutdown(c->cli);
	gw_stream_linger(c->cli);
	c->linger_until = gw_now_ms() + GW_LINGER_MS;
	arm_timer(c);
}

static void
closing(struct gw_conn *c)
{
	c->phase = P_CLOSING;
	gw_stream_read(c->cli, false);
	if (c->up)
		up_drop(c);
	gw_stream_flush(c->cli);
	if (c->dead)
		return;
	if (gw_stream_pending(c->cli) == 0 || !gw_stream_open(c->cli))
		linger(c);
}

static void next_request(struct gw_conn *c);

/*
 * A response the gateway makes: Content-Length always; Connection: close
 * when the connection cannot continue. `refused`: a policy (or
 * before-policy) refusal, marked x-box-egress: refused, and x-box-reason:
 * the body (the decision's message, naming the rule and its description)
 * made safe for a header (http_reason_header: printable ASCII, bounded).
 */
static void
reply_typed(struct gw_conn *c, unsigned status, const char *reason, const char *ctype,
	    const char *body, bool refused, bool close_after)
{
	size_t bl = body ? strlen(body) : 0;
	char why[HTTP_REASON_MAX];
	if (!c->client_keep && c->have_req)
		close_after = true;
	if (c->have_req && !c->req.keep_alive)
		close_after = true;
	if (refused)
		(void)http_reason_header(body ? body : "refused", why, sizeof(why));
	evbuffer_add_printf(c->cli->out,
			    "HTTP/1.1 %u %s\r\nContent-Type: %s\r\n"
			    "Content-Length: %zu\r\n%s%s%s%s\r\n",
			    status, reason ? reason : reason_of(status), ctype, bl,
			    refused ? "x-box-egress: refused\r\nx-box-reason: " : "",
			    refused ? why : "", refused ? "\r\n" : "",
			    close_after ? "Connection: close\r\n" : "");
	if (bl)
		evbuffer_add(c->cli->out, body, bl);
	if (close_after) {
		req_reset(c);
		closing(c);
		return;
	}
	gw_stream_flush(c->cli);
	if (c->dead)
		return;
	next_request(c);
}

static void
reply(struct gw_conn *c, unsigned status, const char *reason, const char *body, bool refused,
      bool close_after)
{
	reply_typed(c, status, reason, "text/plain; charset=utf-8", body, refused, close_after);
}

static void
bad_request(struct gw_conn *c, const char *why)
{
	char body[256];
	(void)snprintf(body, sizeof(body), "box-gateway: bad request: %s", why);
	log_debug("400: %s", why);
	reply(c, 400, NULL, body, false, true);
}

/* The request's body has not been read: the connection cannot go on after a refusal. */
static bool
body_unread(const struct gw_conn *c)
{
	return c->have_req && c->req.framing != HTTP_BODY_NONE && c->phase != P_EXCHANGE &&
	       !(c->req.framing == HTTP_BODY_CHUNKED && c->body) && !c->body_whole;
}

static void
refuse(struct gw_conn *c, const char *message)
{
	reply(c, 403, NULL, message, true, c->is_connect || body_unread(c) || c->mode == M_RAW);
}

/* ---- records --------------------------------------------------------------------- */

static void
http_fields(struct gw_conn *c, struct policy_fields *fs, uint64_t body_bytes)
{
	policy_fields_init(fs);
	policy_fields_str(fs, "host", c->host);
	policy_fields_long(fs, "port", c->port);
	policy_fields_str(fs, "method", c->req.method);
	policy_fields_str(fs, "path", c->path ? c->path : "/");
	policy_fields_long(fs, "body_bytes", (int64_t)body_bytes);
	policy_fields_bool(fs, "intercepted", c->mode == M_TLS);
}

static void
record_http(struct gw_conn *c, bool ok)
{
	struct policy_fields in, out;
	/* The input it was decided with: the Record names that permit (gw_record). */
	http_fields(c, &in, c->body_bytes);
	policy_fields_init(&out);
	if (ok)
		policy_fields_long(&out, "status", c->status);
	gw_record(ok, "http:request", &in, ok ? &out : NULL);
}

/* An upstream failure before (504/502) or after a response head started (close). */
static void
fail_upstream(struct gw_conn *c, unsigned status, const char *why)
{
	log_debug("%s:%u: %s", c->host, c->port, why);
	if (c->have_req && c->phase != P_RELAY)
		record_http(c, false);
	up_drop(c);
	if (c->head_sent) {
		req_reset(c);
		closing(c);
		return;
	}
	char body[640];
	(void)snprintf(body, sizeof(body), "box-gateway: %s:%u: %s", c->host, c->port, why);
	reply(c, status, NULL, body, false, !c->have_req || c->req.framing != HTTP_BODY_NONE);
}

/* ---- reading policy ------------------------------------------------------------------ */

/* Complete request heads waiting behind the one being served (pipelining). */
static bool
pipeline_full(struct evbuffer *in)
{
	struct evbuffer_ptr p;
	unsigned heads = 0;
	if (evbuffer_get_length(in) >= GW_PIPELINE_MAX)
		return true;
	if (evbuffer_ptr_set(in, &p, 0, EVBUFFER_PTR_SET) < 0)
		return false;
	for (;;) {
		p = evbuffer_search(in, "\r\n\r\n", 4, &p);
		if (p.pos < 0)
			return false;
		if (++heads >= GW_PIPELINE_HEADS)
			return true;
		if (evbuffer_ptr_set(in, &p, 4, EVBUFFER_PTR_ADD) < 0)
			return false;
	}
}

static void
cli_read_update(struct gw_conn *c)
{
	if (c->dead || !gw_stream_open(c->cli))
		return;
	bool on = true;
	size_t have = evbuffer_get_length(c->cli->in);
	switch (c->phase) {
	case P_CLOSING:
	case P_TLS:
		on = false;
		break;
	case P_HEAD:
		on = have <= GW_HEAD_MAX;
		break;
	case P_BODYIN:
	case P_MCPBODY:
		on = true;
		break;
	case P_RELAY:
		on = !c->up || gw_stream_pending(c->up) < GW_HIGH_WATER;
		break;
	case P_EXCHANGE:
		if (c->body_left > 0)
			on = c->up && gw_stream_pending(c->up) < GW_HIGH_WATER;
		else
			on = !pipeline_full(c->cli->in);
		break;
	default:
		on = !pipeline_full(c->cli->in);
		break;
	}
	if (c->cli_eof)
		on = false;
	gw_stream_read(c->cli, on);
}

static void
up_read_update(struct gw_conn *c)
{
	if (c->dead || !c->up || !gw_stream_open(c->up))
		return;
	gw_stream_read(c->up, gw_stream_pending(c->cli) < GW_HIGH_WATER);
}

/* ---- the request ------------------------------------------------------------------------ */

static void
next_request(struct gw_conn *c)
{
	req_reset(c);
	if (c->cli_eof && evbuffer_get_length(c->cli->in) == 0) {
		closing(c);
		return;
	}
	c->phase = P_HEAD;
	c->head_start = 0;
	c->head_scanned = 0;
	cli_read_update(c);
	up_read_update(c);
	if (evbuffer_get_length(c->cli->in) > 0)
		process_head(c);
}

/* ---- remote MCP servers (mcp.c decides, this moves the bytes) ------------------------------- */

static void
forward(struct gw_conn *c)
{
	if (c->up && gw_stream_open(c->up) && (c->mode != M_TLS || c->up_tls)) {
		send_request(c);
		return;
	}
	up_prepare(c);
}

static void
on_mcp_verdict(void *arg, enum gw_mcp_verdict v)
{
	struct gw_conn *c = arg;
	if (v == GW_MCP_ANSWER) {
		const char *body;
		unsigned st = gw_mcp_answer(c->mcp, &body);
		reply_typed(c, st, NULL, "application/json", body, false, st >= 500);
		return;
	}
	size_t rl = 0;
	const char *rb = gw_mcp_replacement(c->mcp, &rl);
	if (rb) {
		evbuffer_drain(c->body, evbuffer_get_length(c->body));
		evbuffer_add(c->body, rb, rl);
	}
	c->body_bytes = c->body ? evbuffer_get_length(c->body) : 0;
	forward(c);
}

/* The server did not answer a POST within its call_timeout: -32001, upstream dropped. */
static void
mcp_timed_out(struct gw_conn *c)
{
	const char *body;
	record_http(c, false);
	up_drop(c);
	gw_mcp_timed_out(c->mcp);
	unsigned st = gw_mcp_answer(c->mcp, &body);
	reply_typed(c, st, NULL, "application/json", body, false, false);
}

/* The whole POSTed message is in c->body: mcp.c decides it. */
static void
mcp_body_whole(struct gw_conn *c)
{
	c->body_whole = true;
	c->phase = P_DECIDE;
	cli_read_update(c);
	size_t len = c->body ? evbuffer_get_length(c->body) : 0;
	const char *p = len ? (const char *)evbuffer_pullup(c->body, -1) : "";
	enum gw_mcp_verdict v = gw_mcp_decide(c->mcp, p ? p : "", p ? len : 0);
	if (v != GW_MCP_PENDING)
		on_mcp_verdict(c, v);
}

static void
pump_mcp_body(struct gw_conn *c)
{
	size_t got = evbuffer_get_length(c->body);
	size_t want = (size_t)c->req.content_length - got;
	size_t have = evbuffer_get_length(c->cli->in);
	size_t n = have < want ? have : want;
	if (n)
		evbuffer_remove_buffer(c->cli->in, c->body, n);
	if (evbuffer_get_length(c->body) == c->req.content_length) {
		mcp_body_whole(c);
		return;
	}
	cli_read_update(c);
}

/*
 * http:request permitted a request to a remote MCP server's url. A POST's
 * body (one JSON-RPC message, at most max_frame: larger is 413 with a
 * JSON-RPC error body, before any mcp:call) is read whole and decided; any
 * other method (a GET's event stream, a DELETE) goes on, its replies parsed.
 */
static void
mcp_request(struct gw_conn *c)
{
	c->mcp = gw_mcp_call_new(c->mcp_srv, on_mcp_verdict, c);
	if (!c->mcp) {
		reply(c, 500, NULL, "box-gateway: out of memory", false, true);
		return;
	}
	if (strcmp(c->req.method, "POST") != 0) {
		if (c->req.expect_continue && c->req.framing == HTTP_BODY_LENGTH) {
			evbuffer_add(c->cli->out, "HTTP/1.1 100 Continue\r\n\r\n", 25);
			gw_stream_flush(c->cli);
			if (c->dead)
				return;
		}
		forward(c);
		return;
	}
	uint64_t max = gw_mcp_max_frame(c->mcp_srv);
	uint64_t size = 0;
	if (c->req.framing == HTTP_BODY_LENGTH)
		size = c->req.content_length;
	else if (c->req.framing == HTTP_BODY_CHUNKED)
		size = c->body_bytes; /* already buffered (BODYIN) */
	if (size > max) {
		char m[200], *body = NULL;
		(void)snprintf(m, sizeof(m),
			       "box-gateway: the JSON-RPC message (%llu bytes) exceeds [mcp.%s] "
			       "max_frame (%llu bytes)",
			       (unsigned long long)size, gw_mcp_name(c->mcp_srv),
			       (unsigned long long)max);
		if (asprintf(&body,
			     "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,"
			     "\"message\":\"%s\"}}",
			     m) < 0)
			body = NULL;
		reply_typed(c, 413, NULL, "application/json", body ? body : "", false,
			    body_unread(c));
		free(body);
		return;
	}
	if (c->req.framing == HTTP_BODY_LENGTH) {
		if (c->req.expect_continue) {
			evbuffer_add(c->cli->out, "HTTP/1.1 100 Continue\r\n\r\n", 25);
			gw_stream_flush(c->cli);
			if (c->dead)
				return;
		}
		c->body = evbuffer_new();
		if (!c->body) {
			reply(c, 500, NULL, "box-gateway: out of memory", false, true);
			return;
		}
		c->phase = P_MCPBODY;
		pump_mcp_body(c);
		return;
	}
	mcp_body_whole(c);
}

static void
on_http_decided(void *arg, const ProtobufCMessage *verdict)
{
	const char *message;
	bool permit = gw_verdict(verdict, &message);
	struct gw_conn *c = arg;
	c->decide = false;
	if (!permit) {
		refuse(c, message);
		return;
	}
	if (c->mcp_srv) {
		mcp_request(c);
		return;
	}
	if (c->req.expect_continue && c->req.framing == HTTP_BODY_LENGTH) {
		/* Decided first; now the client may send the body. */
		evbuffer_add(c->cli->out, "HTTP/1.1 100 Continue\r\n\r\n", 25);
		gw_stream_flush(c->cli);
		if (c->dead)
			return;
	}
	if (c->up && gw_stream_open(c->up) && (c->mode != M_TLS || c->up_tls)) {
		send_request(c);
		return;
	}
	up_prepare(c);
}

static void
decide_http(struct gw_conn *c)
{
	struct policy_fields fs;
	http_fields(c, &fs, c->body_bytes);
	c->phase = P_DECIDE;
	cli_read_update(c);
	c->decide = gw_decide("http:request", &fs, on_http_decided, c) == 0;
	if (!c->decide)
		refuse(c, "box-gateway: the decision could not be asked (box-policyd unreachable)");
}

/* The chunked body, decoded into c->body, up to max_request_body. */
static void
pump_chunked(struct gw_conn *c)
{
	while (evbuffer_get_length(c->cli->in) > 0) {
		struct evbuffer_iovec v;
		if (evbuffer_peek(c->cli->in, -1, NULL, &v, 1) < 1)
			break;
		size_t used = 0, off = 0, dl = 0;
		char why[128] = "";
		int r = http_chunked_step(&c->ch, v.iov_base, v.iov_len, &used, &off, &dl, why,
					  sizeof(why));
		if (r < 0) {
			bad_request(c, why[0] ? why : "bad chunked body");
			return;
		}
		if (dl) {
			if (c->body_bytes + dl > G.max_request_body) {
				reply(c, 413, NULL,
				      "box-gateway: the chunked request body exceeds "
				      "[gateway] max_request_body",
				      false, true);
				return;
			}
			evbuffer_add(c->body, (const char *)v.iov_base + off, dl);
			c->body_bytes += dl;
		}
		evbuffer_drain(c->cli->in, used);
		if (r == 1) {
			decide_http(c);
			return;
		}
		if (used == 0)
			break;
	}
	cli_read_update(c);
}

static bool
host_matches(const struct gw_conn *c, const char *value)
{
	char h[HTTP_HOST_MAX];
	uint16_t p = 0;
	bool ip = false;
	if (http_parse_authority(value, c->port, h, &p, &ip) < 0)
		return false;
	return strcmp(h, c->host) == 0 && p == c->port;
}

/* Checks common to plain and intercepted requests, then the body and the decision. */
static void
request_checks(struct gw_conn *c)
{
	if (!c->path && http_canonical_path(c->origin, &c->path) < 0) {
		bad_request(c, "the request path is not valid");
		return;
	}
	if (c->req.framing == HTTP_BODY_LENGTH && c->req.content_length > G.max_request_body) {
		reply(c, 413, NULL,
		      "box-gateway: the request body exceeds [gateway] max_request_body", false,
		      true);
		return;
	}
	if (c->mode == M_TLS) {
		const char *sandbox = c->lst->sandbox;
		const struct cred_binding *ph =
		    cred_find_placeholder(G.creds, G.n_creds, &c->req, c->origin);
		if (ph && !cred_applies_to_sandbox(ph, sandbox)) {
			char msg[640];
			(void)snprintf(msg, sizeof(msg),
				       "box-gateway: the placeholder of %s is not for sandbox %s",
				       ph->name, sandbox);
			refuse(c, msg);
			return;
		}
		const struct cred_binding *b =
		    cred_find(G.creds, G.n_creds, c->host, c->port, c->path);
		if (b) {
			char why[256] = "";
			int r = cred_apply(b, sandbox, &c->req, &c->origin, why, sizeof(why));
			if (r == -EACCES) {
				char msg[320];
				(void)snprintf(msg, sizeof(msg), "box-gateway: %s",
					       why[0] ? why : "credential refused");
				refuse(c, msg);
				return;
			}
			if (r < 0) {
				reply(c, 500, NULL, "box-gateway: out of memory", false, true);
				return;
			}
			if (r == 0)
				c->cred = b;
		}
	}
	if (G.n_mcp && c->mode == M_TLS)
		c->mcp_srv = gw_mcp_match(c->host, c->port, c->path);
	if (c->req.framing == HTTP_BODY_CHUNKED) {
		c->body = evbuffer_new();
		if (!c->body) {
			reply(c, 500, NULL, "box-gateway: out of memory", false, true);
			return;
		}
		http_chunked_init(&c->ch);
		c->phase = P_BODYIN;
		if (c->req.expect_continue) {
			/* The size is the decision's input: the body must come first. */
			evbuffer_add(c->cli->out, "HTTP/1.1 100 Continue\r\n\r\n", 25);
			gw_stream_flush(c->cli);
			if (c->dead)
				return;
		}
		pump_chunked(c);
		return;
	}
	c->body_bytes = c->req.framing == HTTP_BODY_LENGTH ? c->req.content_length : 0;
	decide_http(c);
}

/* ---- establishing the upstream connection (ESTAB) ------------------------------------------ */

static void
estab_done(struct gw_conn *c)
{
	free(c->addrs);
	c->addrs = NULL;
	(void)snprintf(c->up_host, sizeof(c->up_host), "%s", c->host);
	c->up_port = c->port;
	host_record(c, true);

	if (!c->is_connect) {
		request_checks(c);
		return;
	}
	bool passthrough = false;
	for (size_t i = 0; i < G.n_passthrough; i++)
		if (cred_dest_match(&G.passthrough[i], c->host, c->port, NULL))
			passthrough = true;
	if (evbuffer_get_length(c->cli->in) > 0 && !passthrough) {
		/* Bytes sent before our 200 would be lost under TLS: refuse them. */
		bad_request(c, "data sent before the tunnel was established");
		return;
	}
	evbuffer_add_printf(c->cli->out, "HTTP/1.1 200 Connection Established\r\n\r\n");
	gw_stream_flush(c->cli);
	if (c->dead)
		return;
	req_reset(c);
	if (passthrough) {
		c->mode = M_RAW;
		c->phase = P_RELAY;
		evbuffer_add_buffer(c->up->out, c->cli->in);
		gw_stream_flush(c->up);
		if (c->dead)
			return;
		cli_read_update(c);
		up_read_update(c);
		return;
	}
	if (gw_stream_pending(c->cli) > 0) {
		conn_destroy(c);
		return;
	}
	c->phase = P_TLS;
	cli_read_update(c);
	up_read_update(c);
	SSL *ssl = SSL_new(gw_ca_server_ctx(G.ca));
	if (!ssl || gw_ca_use_leaf(G.ca, ssl, c->host, c->is_ip) < 0) {
		if (ssl)
			SSL_free(ssl);
		log_warn("Cannot make a certificate for %s", c->host);
		conn_destroy(c);
		return;
	}
	gw_stream_tls_accept(c->cli, ssl);
}

static void
estab_fail(struct gw_conn *c)
{
	char body[640];

	free(c->addrs);
	c->addrs = NULL;
	host_record(c, false);
	if (c->dial_failures == 0 && c->refusals > 0) {
		/* Every address was refused (before policy, or by policy): a refusal. */
		char *m = c->refuse_msg;
		c->refuse_msg = NULL;
		refuse(c, m ? m : "box-gateway: every address was refused");
		free(m);
		return;
	}
	(void)snprintf(body, sizeof(body), "box-gateway: cannot connect to %s:%u: %s", c->host,
		       c->port, c->last_err[0] ? c->last_err : "no address");
	/* The last attempt timing out is a timeout (504); anything else a 502. */
	bool timeout = c->dial_timed_out && strcmp(c->last_err, "timed out") == 0;
	reply(c, timeout ? 504 : 502, NULL, body, false, c->is_connect || body_unread(c));
}

static void
dial(struct gw_conn *c, const struct sockaddr_storage *ss)
{
	socklen_t sl =
	    ss->ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0) {
		(void)snprintf(c->last_err, sizeof(c->last_err), "%s", strerror(errno));
		c->dial_failures++;
		c->addr_i++;
		try_addr(c);
		return;
	}
	int one = 1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	int r = connect(fd, (const struct sockaddr *)ss, sl);
	if (r < 0 && errno != EINPROGRESS) {
		(void)snprintf(c->last_err, sizeof(c->last_err), "%s", strerror(errno));
		close(fd);
		c->dial_failures++;
		c->addr_i++;
		try_addr(c);
		return;
	}
	c->up = gw_stream_new(G.base, fd, &up_ops, c, &c->activity);
	if (!c->up) {
		(void)snprintf(c->last_err, sizeof(c->last_err), "out of memory");
		c->dial_failures++;
		c->addr_i++;
		try_addr(c);
		return;
	}
	c->pin = *ss;
	c->dial_deadline = gw_now_ms() + (int64_t)G.connect_timeout_ms;
	arm_timer(c);
	gw_stream_wait_connect(c->up);
}

static void
on_up_connected(struct gw_stream *s, int err, void *arg)
{
	struct gw_conn *c = arg;
	(void)s;
	c->dial_deadline = 0;
	if (err) {
		(void)snprintf(c->last_err, sizeof(c->last_err), "%s", strerror(-err));
		c->dial_failures++;
		up_drop(c);
		if (c->phase == P_UPCONN) {
			fail_upstream(c, 502, c->last_err);
			return;
		}
		c->addr_i++;
		try_addr(c);
		return;
	}
	c->have_pin = true;
	if (c->phase == P_UPCONN) {
		up_prepare(c);
		return;
	}
	estab_done(c);
}

static void
on_ip_decided(void *arg, const ProtobufCMessage *verdict)
{
	const char *message;
	bool permit = gw_verdict(verdict, &message);
	struct gw_conn *c = arg;
	c->decide = false;
	if (!permit) {
		c->refusals++;
		free(c->refuse_msg);
		c->refuse_msg = strdup(message);
		c->addr_i++;
		try_addr(c);
		return;
	}
	dial(c, &c->addrs->a[c->addr_i]);
}

static void
try_addr(struct gw_conn *c)
{
	if (c->dead)
		return;
	while (c->addrs && c->addr_i < c->addrs->n) {
		const struct sockaddr_storage *ss = &c->addrs->a[c->addr_i];
		char ip[ADDR_IP_MAX];
		if (addr_ip_spelling((const struct sockaddr *)ss, ip, sizeof(ip)) < 0) {
			c->addr_i++;
			continue;
		}
		const char *why = G.allow_host_loopback
				      ? NULL
				      : addr_refused_before_policy((const struct sockaddr *)ss);
		if (why) {
			char msg[1024];
			(void)snprintf(msg, sizeof(msg),
				       "box-gateway refused %s (%s) for '%s:%u' before policy "
				       "([gateway] allow_host_loopback = false)",
				       ip, why, c->host, c->port);
			c->refusals++;
			free(c->refuse_msg);
			c->refuse_msg = strdup(msg);
			c->addr_i++;
			continue;
		}
		struct policy_fields fs;
		policy_fields_init(&fs);
		policy_fields_str(&fs, "host", c->host);
		policy_fields_long(&fs, "port", c->port);
		policy_fields_str(&fs, "ip", ip);
		c->decide = gw_decide("net:connect", &fs, on_ip_decided, c) == 0;
		if (!c->decide) {
			refuse(c, "box-gateway: the decision could not be asked");
			return;
		}
		return;
	}
	estab_fail(c);
}

static void
on_resolved(void *arg, const char *err, const struct gw_addrs *addrs)
{
	struct gw_conn *c = arg;
	c->resolve = NULL;
	if (err) {
		char body[640];
		(void)snprintf(body, sizeof(body), "box-gateway: cannot resolve %s: %s", c->host,
			       err);
		reply(c, 502, NULL, body, false, c->is_connect || body_unread(c));
		return;
	}
	c->addrs = malloc(sizeof(*c->addrs));
	if (!c->addrs) {
		conn_destroy(c);
		return;
	}
	*c->addrs = *addrs;
	c->addr_i = 0;
	try_addr(c);
}

static void
on_host_decided(void *arg, const ProtobufCMessage *verdict)
{
	const char *message;
	bool permit = gw_verdict(verdict, &message);
	struct gw_conn *c = arg;
	c->decide = false;
	if (!permit) {
		refuse(c, message);
		return;
	}
	c->host_permitted = true;
	struct gw_addrs now;
	struct gw_resolve *h = NULL;
	int r = gw_resolve(c->host, c->is_ip, c->port, &now, on_resolved, c, &h);
	if (r < 0) {
		host_record(c, false);
		reply(c, 502, NULL, "box-gateway: cannot resolve the host", false, true);
		return;
	}
	if (r == 1) {
		on_resolved(c, NULL, &now);
		return;
	}
	if (!c->dead && h && c->phase == P_ESTAB && !c->addrs)
		c->resolve = h;
}

static void
start_estab(struct gw_conn *c)
{
	up_drop(c);
	c->have_pin = false;
	c->phase = P_ESTAB;
	c->addr_i = 0;
	c->dial_failures = c->refusals = 0;
	c->dial_timed_out = false;
	c->last_err[0] = '\0';
	free(c->refuse_msg);
	c->refuse_msg = NULL;
	cli_read_update(c);
	struct policy_fields fs;
	policy_fields_init(&fs);
	policy_fields_str(&fs, "host", c->host);
	policy_fields_long(&fs, "port", c->port);
	/* Before any DNS query: a denied host is never looked up. */
	c->decide = gw_decide("net:connect", &fs, on_host_decided, c) == 0;
	if (!c->decide)
		refuse(c, "box-gateway: the decision could not be asked");
}

/* ---- the upstream leg of a permitted request (UPCONN) -------------------------------------- */

static void
up_prepare(struct gw_conn *c)
{
	c->phase = P_UPCONN;
	cli_read_update(c);
	if (!c->up || !gw_stream_open(c->up)) {
		up_drop(c);
		if (!c->have_pin) {
			fail_upstream(c, 502, "no upstream address");
			return;
		}
		/* Keep-alive: the server closed; the pinned address again, no new lookup. */
		struct sockaddr_storage pin = c->pin;
		int fd =
		    socket(pin.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
		socklen_t sl = pin.ss_family == AF_INET ? sizeof(struct sockaddr_in)
							: sizeof(struct sockaddr_in6);
		if (fd < 0 ||
		    (connect(fd, (struct sockaddr *)&pin, sl) < 0 && errno != EINPROGRESS)) {
			char why[96];
			(void)snprintf(why, sizeof(why), "cannot connect: %s", strerror(errno));
			if (fd >= 0)
				close(fd);
			fail_upstream(c, 502, why);
			return;
		}
		int one = 1;
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c->up = gw_stream_new(G.base, fd, &up_ops, c, &c->activity);
		if (!c->up) {
			fail_upstream(c, 502, "out of memory");
			return;
		}
		(void)snprintf(c->up_host, sizeof(c->up_host), "%s", c->host);
		c->up_port = c->port;
		c->dial_deadline = gw_now_ms() + (int64_t)G.connect_timeout_ms;
		arm_timer(c);
		gw_stream_wait_connect(c->up);
		return;
	}
	if (c->mode == M_TLS && !c->up_tls) {
		SSL *ssl = SSL_new(G.client_ctx);
		if (!ssl || gw_tls_client_prepare(ssl, c->host, c->is_ip) < 0) {
			if (ssl)
				SSL_free(ssl);
			fail_upstream(c, 502, "cannot set up TLS");
			return;
		}
		c->dial_deadline = gw_now_ms() + (int64_t)G.connect_timeout_ms;
		arm_timer(c);
		gw_stream_tls_connect(c->up, ssl);
		return;
	}
	send_request(c);
}

static void
on_up_handshake(struct gw_stream *s, int err, const char *why, void *arg)
{
	struct gw_conn *c = arg;
	(void)s;
	c->dial_deadline = 0;
	if (err) {
		fail_upstream(c, 502, why ? why : "TLS handshake failed");
		return;
	}
	c->up_tls = true;
	send_request(c);
}

/* ---- forwarding (EXCHANGE) ------------------------------------------------------------ */

static void
pump_request_body(struct gw_conn *c)
{
	if (c->body_left == 0 || !c->up)
		return;
	size_t have = evbuffer_get_length(c->cli->in);
	size_t n = have < c->body_left ? have : (size_t)c->body_left;
	if (n) {
		evbuffer_remove_buffer(c->cli->in, c->up->out, n);
		c->body_left -= n;
		gw_stream_flush(c->up);
		if (c->dead)
			return;
	}
	cli_read_update(c);
}

/* V in decimal at OUT (at least 5 bytes), unterminated: its length. */
static size_t
u16_text(char *out, unsigned v)
{
	char t[5];
	size_t n = 0;
	do
		t[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < sizeof(t));
	for (size_t i = 0; i < n; i++)
		out[i] = t[n - 1 - i];
	return n;
}

/* "NAME: VALUE\r\n" (no printf: a head's fields are copied once per exchange). */
static void
add_field(struct evbuffer *o, const char *name, const char *value)
{
	size_t nl = strlen(name), vl = strlen(value);
	char line[512];
	if (nl + vl + 4 > sizeof(line)) {
		evbuffer_add(o, name, nl);
		evbuffer_add(o, ": ", 2);
		evbuffer_add(o, value, vl);
		evbuffer_add(o, "\r\n", 2);
		return;
	}
	memcpy(line, name, nl);
	memcpy(line + nl, ": ", 2);
	memcpy(line + nl + 2, value, vl);
	memcpy(line + nl + 2 + vl, "\r\n", 2);
	evbuffer_add(o, line, nl + vl + 4);
}

static void
add_host_field(struct gw_conn *c, struct evbuffer *out)
{
	uint16_t dflt = c->mode == M_TLS ? 443 : 80;
	bool v6 = strchr(c->host, ':') != NULL;
	char port[8] = "";
	if (c->port != dflt)
		port[u16_text(port, c->port)] = 0;
	evbuffer_add(out, v6 ? "Host: [" : "Host: ", v6 ? 7 : 6);
	evbuffer_add(out, c->host, strlen(c->host));
	if (v6)
		evbuffer_add(out, "]", 1);
	if (port[0]) {
		evbuffer_add(out, ":", 1);
		evbuffer_add(out, port, strlen(port));
	}
	evbuffer_add(out, "\r\n", 2);
}

static void
send_request(struct gw_conn *c)
{
	struct evbuffer *o = c->up->out;
	const struct http_header *ch =
	    http_find_header(c->req.headers, c->req.n_headers, "Connection");
	const char *conn_v = ch ? ch->value : NULL;

	c->phase = P_EXCHANGE;
	evbuffer_add(o, c->req.method, strlen(c->req.method));
	evbuffer_add(o, " ", 1);
	evbuffer_add(o, c->origin, strlen(c->origin));
	evbuffer_add(o, " HTTP/1.1\r\n", 11);
	add_host_field(c, o);
	for (size_t i = 0; i < c->req.n_headers; i++) {
		const struct http_header *h = &c->req.headers[i];
		if (http_is_hop_by_hop(h->name, conn_v) || strcasecmp(h->name, "Host") == 0 ||
		    strcasecmp(h->name, "Expect") == 0 ||
		    strcasecmp(h->name, "Content-Length") == 0 ||
		    (c->mcp && strcasecmp(h->name, "Accept-Encoding") == 0))
			continue;
		add_field(o, h->name, h->value);
	}
	/* A remote MCP server's replies are read as they pass (mcp.c): uncompressed. */
	if (c->mcp)
		evbuffer_add_printf(o, "Accept-Encoding: identity\r\n");
	if (c->req.upgrade) {
		const struct http_header *u =
		    http_find_header(c->req.headers, c->req.n_headers, "Upgrade");
		if (u)
			evbuffer_add_printf(o, "Connection: upgrade\r\nUpgrade: %s\r\n", u->value);
	}
	if (c->req.framing == HTTP_BODY_LENGTH || c->req.framing == HTTP_BODY_CHUNKED)
		evbuffer_add_printf(o, "Content-Length: %llu\r\n",
				    (unsigned long long)c->body_bytes);
	evbuffer_add(o, "\r\n", 2);
	if (c->body) {
		/* buffered: a chunked body, or a remote MCP request's message */
		evbuffer_add_buffer(o, c->body);
	} else if (c->req.framing == HTTP_BODY_LENGTH) {
		c->body_left = c->req.content_length;
	}
	c->rstate = R_HEAD;
	c->client_keep = c->req.keep_alive && !c->cli_eof;
	if (c->mcp && strcmp(c->req.method, "POST") == 0) {
		c->mcp_deadline = gw_now_ms() + (int64_t)gw_mcp_call_timeout_ms(c->mcp);
		arm_timer(c);
	}
	if (c->cred) {
		c->redacting = cred_redactor_init(&c->red, c->cred->spellings) == 0;
		if (!c->redacting) {
			fail_upstream(c, 502, "out of memory");
			return;
		}
	}
	gw_stream_flush(c->up);
	if (c->dead)
		return;
	pump_request_body(c);
	if (c->dead)
		return;
	up_read_update(c);
	cli_read_update(c);
	if (c->up && evbuffer_get_length(c->up->in) > 0)
		on_up_read(c->up, c);
}

/* Body bytes of the response, n from up->in, to the client (re-framed, redacted). */
static void
deliver(struct gw_conn *c, size_t n)
{
	struct evbuffer *o = c->cli->out;
	if (!n)
		return;
	if (c->mcp && gw_mcp_response_data(c->mcp, c->up->in, n) < 0) {
		/* A reply over max_frame, or a server message mcp.c refuses: cut before
		 * these bytes go out (the client sees a truncated response). */
		record_http(c, false);
		conn_destroy(c);
		return;
	}
	c->delivered += n;
	if (c->redacting) {
		struct evbuffer *tmp = evbuffer_new();
		if (!tmp) {
			conn_destroy(c);
			return;
		}
		size_t left = n;
		while (left) {
			struct evbuffer_iovec v;
			if (evbuffer_peek(c->up->in, -1, NULL, &v, 1) < 1)
				break;
			size_t k = v.iov_len < left ? v.iov_len : left;
			if (cred_redactor_feed(&c->red, v.iov_base, k, tmp) < 0) {
				/* never pass on what could not be redacted */
				evbuffer_free(tmp);
				record_http(c, false);
				conn_destroy(c);
				return;
			}
			evbuffer_drain(c->up->in, k);
			left -= k;
		}
		size_t tl = evbuffer_get_length(tmp);
		if (tl) {
			if (c->chunk_out)
				evbuffer_add_printf(o, "%zx\r\n", tl);
			evbuffer_add_buffer(o, tmp);
			if (c->chunk_out)
				evbuffer_add(o, "\r\n", 2);
		}
		evbuffer_free(tmp);
		return;
	}
	if (c->chunk_out)
		evbuffer_add_printf(o, "%zx\r\n", n);
	evbuffer_remove_buffer(c->up->in, o, n);
	if (c->chunk_out)
		evbuffer_add(o, "\r\n", 2);
}

static void
response_done(struct gw_conn *c)
{
	struct evbuffer *o = c->cli->out;
	if (c->redacting) {
		struct evbuffer *tmp = evbuffer_new();
		if (!tmp || cred_redactor_finish(&c->red, tmp) < 0) {
			if (tmp)
				evbuffer_free(tmp);
			record_http(c, false);
			conn_destroy(c);
			return;
		}
		size_t tl = evbuffer_get_length(tmp);
		if (tl && c->chunk_out)
			evbuffer_add_printf(o, "%zx\r\n", tl);
		evbuffer_add_buffer(o, tmp);
		if (tl && c->chunk_out)
			evbuffer_add(o, "\r\n", 2);
		evbuffer_free(tmp);
	}
	if (c->chunk_out)
		evbuffer_add(o, "0\r\n\r\n", 5);
	if (c->mcp)
		gw_mcp_response_end(c->mcp);
	record_http(c, true);
	bool keep = c->client_keep && !c->eof_out;
	if (!c->up_reusable || (c->up && evbuffer_get_length(c->up->in) > 0))
		up_drop(c);
	else
		c->up_used = true;
	if (!keep) {
		req_reset(c);
		closing(c);
		return;
	}
	gw_stream_flush(c->cli);
	if (c->dead)
		return;
	next_request(c);
}

static bool
identity_encoding(const struct http_response *r)
{
	for (size_t i = 0; i < r->n_headers; i++)
		if (strcasecmp(r->headers[i].name, "Content-Encoding") == 0 &&
		    r->headers[i].value[0] && strcasecmp(r->headers[i].value, "identity") != 0)
			return false;
	return true;
}

static void
write_response_head(struct gw_conn *c, bool upgrade)
{
	struct evbuffer *o = c->cli->out;
	struct http_response *r = &c->resp;
	const struct http_header *ch = http_find_header(r->headers, r->n_headers, "Connection");
	const char *conn_v = ch ? ch->value : NULL;
	bool keep_cl =
	    r->framing == HTTP_BODY_NONE || (r->framing == HTTP_BODY_LENGTH && !c->redacting);

	if (c->redacting && r->reason)
		(void)cred_redact_string(&r->reason, c->cred->spellings);
	char st[16] = "HTTP/1.1 ";
	size_t stl = 9 + u16_text(st + 9, r->status % 1000);
	st[stl++] = ' ';
	evbuffer_add(o, st, stl);
	if (r->reason)
		evbuffer_add(o, r->reason, strlen(r->reason));
	evbuffer_add(o, "\r\n", 2);
	for (size_t i = 0; i < r->n_headers; i++) {
		struct http_header *h = &r->headers[i];
		if (!upgrade && http_is_hop_by_hop(h->name, conn_v))
			continue;
		if (upgrade && (strcasecmp(h->name, "Connection") == 0 ||
				strcasecmp(h->name, "Upgrade") == 0)) {
			add_field(o, h->name, h->value);
			continue;
		}
		if (upgrade && http_is_hop_by_hop(h->name, conn_v))
			continue;
		if (!keep_cl && strcasecmp(h->name, "Content-Length") == 0)
			continue;
		if (c->redacting)
			(void)cred_redact_string(&h->value, c->cred->spellings);
		add_field(o, h->name, h->value);
	}
	if (r->status >= 200 && !upgrade) {
		if (c->chunk_out)
			evbuffer_add(o, "Transfer-Encoding: chunked\r\n", 28);
		if (!c->client_keep || c->eof_out)
			evbuffer_add(o, "Connection: close\r\n", 19);
	}
	evbuffer_add(o, "\r\n", 2);
}

static void
relay_start(struct gw_conn *c)
{
	c->phase = P_RELAY;
	if (evbuffer_get_length(c->up->in))
		evbuffer_add_buffer(c->cli->out, c->up->in);
	if (evbuffer_get_length(c->cli->in))
		evbuffer_add_buffer(c->up->out, c->cli->in);
	record_http(c, true);
	req_reset(c);
	c->phase = P_RELAY;
	gw_stream_flush(c->cli);
	if (c->dead)
		return;
	gw_stream_flush(c->up);
	if (c->dead)
		return;
	cli_read_update(c);
	up_read_update(c);
}

static void
response_head(struct gw_conn *c)
{
	size_t have = evbuffer_get_length(c->up->in);
	size_t n = have < GW_HEAD_MAX + 8 ? have : GW_HEAD_MAX + 8;
	const char *buf = (const char *)evbuffer_pullup(c->up->in, (ssize_t)n);
	char why[128] = "";
	if (c->have_resp) {
		http_response_clear(&c->resp);
		c->have_resp = false;
	}
	int r = http_parse_response(buf, n, &G.lim, c->req.method, &c->resp, why, sizeof(why));
	if (r == -EAGAIN) {
		if (have > GW_HEAD_MAX)
			fail_upstream(c, 502, "the response head is too large");
		return;
	}
	if (r < 0) {
		char m[200];
		(void)snprintf(m, sizeof(m), "malformed response from upstream (%s)", why);
		fail_upstream(c, 502, m);
		return;
	}
	c->have_resp = true;
	evbuffer_drain(c->up->in, c->resp.head_len);
	struct http_response *resp = &c->resp;
	c->status = resp->status;
	if (c->mcp && resp->status >= 200) {
		c->mcp_deadline = 0;
		const struct http_header *ct =
		    http_find_header(resp->headers, resp->n_headers, "Content-Type");
		const struct http_header *ce =
		    http_find_header(resp->headers, resp->n_headers, "Content-Encoding");
		gw_mcp_response_head(c->mcp, resp->status, ct ? ct->value : NULL,
				     ce ? ce->value : NULL);
	}
	if (resp->status == 101) {
		if (!c->req.upgrade) {
			fail_upstream(c, 502, "101 Switching Protocols without an Upgrade request");
			return;
		}
		write_response_head(c, true);
		c->head_sent = true;
		relay_start(c);
		return;
	}
	if (resp->status < 200) {
		/* 100 is ours to send (we handled Expect); 102/103 go through. */
		if (resp->status != 100) {
			write_response_head(c, false);
			gw_stream_flush(c->cli);
		}
		http_response_clear(&c->resp);
		c->have_resp = false;
		if (!c->dead && evbuffer_get_length(c->up->in))
			response_head(c);
		return;
	}
	bool has_body = resp->framing != HTTP_BODY_NONE &&
			!(resp->framing == HTTP_BODY_LENGTH && resp->content_length == 0);
	if (c->cred && has_body && !identity_encoding(resp)) {
		fail_upstream(c, 502,
			      "response blocked: a compressed reply to a credentialed "
			      "request cannot be redacted");
		return;
	}
	c->up_reusable = resp->keep_alive && resp->framing != HTTP_BODY_EOF;
	bool client11 = c->req.minor >= 1;
	switch (resp->framing) {
	case HTTP_BODY_NONE:
		break;
	case HTTP_BODY_LENGTH:
		if (c->redacting) {
			c->chunk_out = client11;
			c->eof_out = !client11;
		}
		break;
	case HTTP_BODY_CHUNKED:
	case HTTP_BODY_EOF:
	default:
		c->chunk_out = client11;
		c->eof_out = !client11;
		break;
	}
	write_response_head(c, false);
	c->head_sent = true;
	switch (resp->framing) {
	case HTTP_BODY_NONE:
		c->rstate = R_NONE;
		break;
	case HTTP_BODY_LENGTH:
		c->rstate = R_LEN;
		c->resp_left = resp->content_length;
		break;
	case HTTP_BODY_CHUNKED:
		c->rstate = R_CHUNKED;
		http_chunked_init(&c->rch);
		break;
	case HTTP_BODY_EOF:
	default:
		c->rstate = R_EOF;
		break;
	}
	if (c->rstate == R_NONE || (c->rstate == R_LEN && c->resp_left == 0)) {
		c->rstate = R_NONE;
		response_done(c);
		return;
	}
}

static void
response_body(struct gw_conn *c)
{
	switch (c->rstate) {
	case R_LEN: {
		size_t have = evbuffer_get_length(c->up->in);
		size_t n = have < c->resp_left ? have : (size_t)c->resp_left;
		deliver(c, n);
		if (c->dead)
			return;
		c->resp_left -= n;
		if (c->resp_left == 0) {
			c->rstate = R_NONE;
			response_done(c);
		}
		return;
	}
	case R_CHUNKED:
		while (evbuffer_get_length(c->up->in) > 0) {
			struct evbuffer_iovec v;
			if (evbuffer_peek(c->up->in, -1, NULL, &v, 1) < 1)
				break;
			size_t used = 0, off = 0, dl = 0;
			char why[128] = "";
			int r = http_chunked_step(&c->rch, v.iov_base, v.iov_len, &used, &off, &dl,
						  why, sizeof(why));
			if (r < 0) {
				fail_upstream(c, 502, "malformed chunked response");
				return;
			}
			if (dl) {
				evbuffer_drain(c->up->in, off);
				deliver(c, dl);
				if (c->dead)
					return;
				evbuffer_drain(c->up->in, used - off - dl);
			} else {
				evbuffer_drain(c->up->in, used);
			}
			if (r == 1) {
				c->rstate = R_NONE;
				response_done(c);
				return;
			}
			if (used == 0)
				break;
		}
		return;
	case R_EOF:
		deliver(c, evbuffer_get_length(c->up->in));
		return;
	default:
		return;
	}
}

static void
on_up_read(struct gw_stream *s, void *arg)
{
	struct gw_conn *c = arg;
	(void)s;
	if (c->dead)
		return;
	if (c->phase == P_RELAY) {
		evbuffer_add_buffer(c->cli->out, c->up->in);
		gw_stream_flush(c->cli);
		if (!c->dead)
			up_read_update(c);
		return;
	}
	if (c->phase != P_EXCHANGE || c->rstate == R_NONE) {
		/* Bytes from upstream with no request outstanding: it cannot be reused. */
		evbuffer_drain(c->up->in, evbuffer_get_length(c->up->in));
		up_drop(c);
		return;
	}
	if (c->rstate == R_HEAD)
		response_head(c);
	if (c->dead || c->phase != P_EXCHANGE || !c->up)
		return;
	if (c->rstate != R_HEAD && c->rstate != R_NONE)
		response_body(c);
	if (c->dead)
		return;
	gw_stream_flush(c->cli);
	if (!c->dead)
		up_read_update(c);
}

static void
on_up_write(struct gw_stream *s, void *arg)
{
	struct gw_conn *c = arg;
	if (c->dead)
		return;
	if (gw_stream_pending(s) < GW_LOW_WATER) {
		if (c->phase == P_EXCHANGE)
			pump_request_body(c);
		if (!c->dead)
			cli_read_update(c);
	}
}

static void
on_up_close(struct gw_stream *s, int err, void *arg)
{
	struct gw_conn *c = arg;
	(void)s;
	if (c->dead)
		return;
	if (c->phase == P_RELAY) {
		/* Upstream ended: pass what remains, then close the client. */
		if (evbuffer_get_length(c->up->in))
			evbuffer_add_buffer(c->cli->out, c->up->in);
		closing(c);
		return;
	}
	if (c->phase == P_EXCHANGE && c->rstate == R_EOF && err == 0) {
		deliver(c, evbuffer_get_length(c->up->in));
		if (c->dead)
			return;
		c->up_reusable = false;
		c->rstate = R_NONE;
		response_done(c);
		return;
	}
	if (c->phase == P_EXCHANGE && c->rstate == R_HEAD && err == 0 &&
	    evbuffer_get_length(c->up->in) > 0) {
		response_head(c);
		if (c->dead || c->rstate != R_HEAD)
			return;
	}
	if (c->phase == P_EXCHANGE && c->rstate == R_HEAD && c->up_used && !c->retried &&
	    c->req.framing == HTTP_BODY_NONE && evbuffer_get_length(c->up->in) == 0) {
		/* A kept-alive connection the server closed as we reused it: the request
		 * (no body) is sent once more on a fresh connection to the pinned address. */
		up_drop(c);
		c->retried = true;
		if (c->redacting)
			cred_redactor_clear(&c->red);
		c->redacting = false;
		up_prepare(c);
		return;
	}
	if (c->phase == P_EXCHANGE || c->phase == P_UPCONN) {
		fail_upstream(c, 502,
			      err ? "the upstream connection failed"
				  : "upstream closed the connection");
		return;
	}
	/* Idle keep-alive connection closed by the server. */
	up_drop(c);
}

/* ---- the client side ------------------------------------------------------------------- */

static void
handle_request(struct gw_conn *c)
{
	struct http_request *q = &c->req;
	c->client_keep = q->keep_alive;
	if (c->mode == M_PROXY) {
		if (strcmp(q->method, "CONNECT") == 0) {
			if (q->framing != HTTP_BODY_NONE) {
				bad_request(c, "a CONNECT with a body");
				return;
			}
			if (http_parse_authority(q->target, 0, c->host, &c->port, &c->is_ip) < 0) {
				bad_request(c, "CONNECT needs host:port");
				return;
			}
			c->is_connect = true;
			start_estab(c);
			return;
		}
		char host[HTTP_HOST_MAX];
		uint16_t port = 0;
		bool is_ip = false;
		if (http_parse_absolute(q->target, host, &port, &is_ip, &c->origin) < 0) {
			bad_request(c, q->target[0] == '/'
					   ? "a proxy request needs an absolute http:// URL "
					     "(https: use CONNECT)"
					   : "the request target is not an absolute http:// URL "
					     "(https: use CONNECT)");
			return;
		}
		if (http_canonical_path(c->origin, &c->path) < 0) {
			bad_request(c, "the request path is not valid");
			return;
		}
		if (cred_host_bound(G.creds, G.n_creds, host, port)) {
			char msg[400];
			(void)snprintf(
			    msg, sizeof(msg),
			    "box-gateway: a plaintext request to credentialed destination "
			    "'%s:%u' is refused (use https)",
			    host, port);
			refuse(c, msg);
			return;
		}
		bool same = c->up && gw_stream_open(c->up) && strcmp(host, c->up_host) == 0 &&
			    port == c->up_port;
		memcpy(c->host, host, sizeof(c->host));
		c->port = port;
		c->is_ip = is_ip;
		if (same) {
			request_checks(c);
			return;
		}
		if (c->req.framing == HTTP_BODY_LENGTH &&
		    c->req.content_length > G.max_request_body) {
			reply(c, 413, NULL,
			      "box-gateway: the request body exceeds [gateway] max_request_body",
			      false, true);
			return;
		}
		start_estab(c);
		return;
	}
	/* Inside an intercepted tunnel: origin-form, Host naming the CONNECT host. */
	if (q->target[0] != '/') {
		bad_request(c, "inside a tunnel the request target must be origin-form");
		return;
	}
	if (strcmp(q->method, "CONNECT") == 0) {
		bad_request(c, "CONNECT inside a tunnel");
		return;
	}
	const struct http_header *h = http_find_header(q->headers, q->n_headers, "Host");
	if (h && !host_matches(c, h->value)) {
		char msg[1024];
		(void)snprintf(msg, sizeof(msg),
			       "box-gateway: Host '%.200s' does not name the CONNECT host '%s:%u'",
			       h->value, c->host, c->port);
		reply(c, 421, NULL, msg, false, true);
		return;
	}
	if (!h && q->minor >= 1) {
		bad_request(c, "an HTTP/1.1 request without Host");
		return;
	}
	c->origin = strdup(q->target);
	if (!c->origin) {
		conn_destroy(c);
		return;
	}
	request_checks(c);
}

static void
process_head(struct gw_conn *c)
{
	size_t have = evbuffer_get_length(c->cli->in);
	if (!have)
		return;
	if (!c->head_start) {
		c->head_start = gw_now_ms();
		arm_timer(c);
	}
	size_t n = have < GW_HEAD_MAX + 8 ? have : GW_HEAD_MAX + 8;
	const char *buf = (const char *)evbuffer_pullup(c->cli->in, (ssize_t)n);
	char why[160] = "";
	size_t hl = 0;
	/* Only the new bytes are scanned for the head's end: a head sent a byte at a
	 * time costs O(n), and is parsed once, whole. */
	int e = http_head_end(buf, n, GW_HEAD_MAX, &c->head_scanned, &hl);
	if (e == -E2BIG) {
		bad_request(c, "the request head is too large");
		return;
	}
	int r = e == 1 ? http_parse_request(buf, n, &G.lim, &c->req, why, sizeof(why)) : -EAGAIN;
	if (r == -EAGAIN) {
		if (have > GW_HEAD_MAX)
			bad_request(c, "the request head is too large");
		else if (c->cli_eof)
			conn_destroy(c);
		else
			cli_read_update(c);
		return;
	}
	if (r == -E2BIG) {
		bad_request(c, why[0] ? why : "the request head is too large");
		return;
	}
	if (r < 0) {
		bad_request(c, why[0] ? why : "malformed request");
		return;
	}
	c->have_req = true;
	c->head_start = 0;
	c->head_scanned = 0;
	evbuffer_drain(c->cli->in, c->req.head_len);
	c->is_connect = false;
	handle_request(c);
}

static void
on_cli_read(struct gw_stream *s, void *arg)
{
	struct gw_conn *c = arg;
	(void)s;
	if (c->dead)
		return;
	switch (c->phase) {
	case P_HEAD:
		process_head(c);
		return;
	case P_BODYIN:
		pump_chunked(c);
		return;
	case P_MCPBODY:
		pump_mcp_body(c);
		return;
	case P_EXCHANGE:
		if (c->body_left)
			pump_request_body(c);
		else
			cli_read_update(c);
		return;
	case P_RELAY:
		if (c->up) {
			evbuffer_add_buffer(c->up->out, c->cli->in);
			gw_stream_flush(c->up);
		}
		if (!c->dead)
			cli_read_update(c);
		return;
	default:
		cli_read_update(c);
		return;
	}
}

static void
on_cli_write(struct gw_stream *s, void *arg)
{
	struct gw_conn *c = arg;
	if (c->dead)
		return;
	if (c->phase == P_CLOSING) {
		if (gw_stream_pending(s) == 0 && !c->linger_until)
			linger(c);
		return;
	}
	if (gw_stream_pending(s) < GW_LOW_WATER)
		up_read_update(c);
}

static void
on_cli_close(struct gw_stream *s, int err, void *arg)
{
	struct gw_conn *c = arg;
	(void)s;
	if (c->dead)
		return;
	if (err < 0 || c->phase == P_CLOSING) {
		conn_destroy(c);
		return;
	}
	c->cli_eof = true;
	switch (c->phase) {
	case P_HEAD:
		if (evbuffer_get_length(c->cli->in) == 0)
			conn_destroy(c);
		else
			process_head(c);
		return;
	case P_RELAY:
		if (c->up) {
			gw_stream_flush(c->up);
			gw_stream_shutdown(c->up);
		}
		return;
	case P_BODYIN:
	case P_MCPBODY:
		conn_destroy(c);
		return;
	case P_EXCHANGE:
		if (c->body_left) {
			conn_destroy(c);
			return;
		}
		c->client_keep = false;
		return;
	default:
		/* A half-closed client still gets the answer to what it sent. */
		c->client_keep = false;
		return;
	}
}

static void
on_cli_handshake(struct gw_stream *s, int err, const char *why, void *arg)
{
	struct gw_conn *c = arg;
	if (c->dead)
		return;
	if (err) {
		log_debug("client TLS for %s: %s", c->host, why ? why : "failed");
		conn_destroy(c);
		return;
	}
	c->mode = M_TLS;
	const char *sni = SSL_get_servername(s->ssl, TLSEXT_NAMETYPE_host_name);
	if (sni) {
		char spelled[HTTP_HOST_MAX];
		bool ip = false;
		if (addr_host_spelling(sni, strlen(sni), spelled, sizeof(spelled), &ip) < 0 ||
		    strcmp(spelled, c->host) != 0) {
			char msg[1024];
			(void)snprintf(msg, sizeof(msg),
				       "box-gateway: TLS server name '%.200s' does not name the "
				       "CONNECT host '%s'",
				       sni, c->host);
			c->phase = P_HEAD;
			reply(c, 421, NULL, msg, false, true);
			return;
		}
	}
	next_request(c);
}

/* ---- accept ----------------------------------------------------------------------------- */

void
gw_conn_accept(struct gw_listener *l, int fd)
{
	if (!reaper) {
		reaper = event_new(G.base, -1, 0, on_reap, NULL);
		if (!reaper) {
			close(fd);
			return;
		}
	}
	if (G.n_conns >= G.max_connections) {
		/* Over [gateway] max_connections: accepted and closed at once. */
		if (G.refused_over_limit++ % 1000 == 0)
			log_warn("%llu connections: over max_connections, closing new ones "
				 "(%llu so far)",
				 (unsigned long long)G.n_conns,
				 (unsigned long long)G.refused_over_limit);
		close(fd);
		return;
	}
	struct gw_conn *c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	int one = 1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->lst = l;
	c->activity = gw_now_ms();
	c->cli = gw_stream_new(G.base, fd, &cli_ops, c, &c->activity);
	c->timer = evtimer_new(G.base, on_timer, c);
	if (!c->cli || !c->timer) {
		gw_stream_free(c->cli);
		if (c->timer)
			event_free(c->timer);
		free(c);
		return;
	}
	c->next = l->conns;
	if (l->conns)
		l->conns->prev = c;
	l->conns = c;
	G.n_conns++;
	c->phase = P_HEAD;
	arm_timer(c);
	gw_stream_read(c->cli, true);
}

void
gw_conns_close_listener(struct gw_listener *l)
{
	while (l->conns)
		conn_destroy(l->conns);
}
