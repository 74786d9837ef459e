/* SPDX-License-Identifier: Apache-2.0 */
/*
 * session.c — one MCP session: an alias's connection to mcp.sock, the
 * harness's fds 0 and 1 it passed, one server process boxd started on two
 * pipes of ours, and the broker's rules on every frame both ways (docs/box-mcpd.8.md
 * "The broker's rules"; docs/box-policy.5.md; docs/box-mcpd.8.md).
 *
 * Life: McpOpen (the alias, 3 fds) -> the start gate (shell:spawn decided on
 * the configured program; denied: McpClose 126) -> two pipes, McpServerStart
 * (stdin read end, stdout write end, the harness's stderr) ->
 * McpServerStarted (!ok: McpClose 126) -> relaying -> the server's exit
 * (McpServerExit) and its stdout's EOF -> what is buffered for the harness
 * flushed -> McpClose with its status. The harness's EOF closes the server's
 * stdin once everything before it went out; the alias hanging up stops the
 * server (McpServerStop). A reason to close (a frame over max_frame, a
 * server that floods or writes garbage): McpClose 1 naming it, the server
 * stopped, other sessions go on.
 *
 * Frames: newline-delimited JSON-RPC, each parsed by jsonrpc.c. Per
 * direction the frames are held in arrival order: a frame waiting for a
 * decision holds everything after it on its direction (nothing overtakes
 * it); the broker's own error replies to a frame go out at once (they answer
 * that frame and are not part of the peer's stream). No frame reaches the
 * other side without its decision. Buffers: a line up to max_frame (longer:
 * closed), max_frame unread towards the server before reading from the
 * harness pauses, more than max_frame unread towards the harness closes the
 * session (the server floods), MCPD_QUEUE_MAX frames held per direction
 * before reading pauses, MCPD_INFLIGHT_MAX requests in flight.
 *
 * Trusts: nothing from the alias, the harness or the server (every frame is
 * parsed and capped); boxd's start answers; policyd's decisions.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "fdutil.h"
#include "jsonrpc.h"
#include "log.h"
#include "mcpd.h"
#include "pins.h"
#include "proto_mcp.h"
#include "policy_validate.h"
#include "proto_policy.h"
#include "text.h"

enum dir { C2S, S2C }; /* harness -> server, server -> harness */

enum sstate {
	SS_OPENING,  /* waiting for McpOpen */
	SS_GATE,     /* shell:spawn asked */
	SS_STARTING, /* McpServerStart sent */
	SS_RUNNING,  /* relaying */
	SS_ENDING,   /* the server is gone: flushing to the harness, then McpClose */
	SS_DEAD,     /* McpClose sent or the alias gone: freed from the loop */
};

struct ibuf {
	char *buf;
	size_t len, cap;
	bool eof;
};

struct obuf {
	char *buf;
	size_t off, len, cap; /* pending: buf[off..len) */
};

/* A request in flight: the harness's to the server (C2S) or the server's to the harness. */
struct call {
	struct call *next;
	struct session *s;
	char key[MCP_ID_KEY_MAX];
	char *method;
	char *tool, *prompt, *uri; /* what mcp:call named (for its outcome record) */
	bool decided;              /* mcp:call permitted it: its outcome is recorded */
	bool tools_list, cursor;   /* tools/list, with params.cursor */
	bool timed_out;            /* answered -32001 already: the late reply is dropped */
	bool forwarded;            /* went out: only now may a reply match it */
	struct event *timer;
};

struct item;

/* One PolicyProbeRequest of a tools/list filter: which catalog entries it asked about. */
struct probe {
	struct item *it;
	size_t n;
	size_t idx[BOX_POLICY_BATCH_MAX];
};

/* A frame held on its direction until its decisions came. */
struct item {
	struct item *next;
	struct session *s;
	enum dir dir;
	struct mcp_frame f;
	char *line;
	size_t len;
	char *out; /* what goes to the other side when it is its turn ('\n'-terminated), or NULL */
	size_t out_len;
	bool ready;
	unsigned waiting;   /* replies from policyd still to come */
	struct call *call;  /* C2S request: its entry; S2C tools/list reply: the request (owned) */
	struct call *reply_to; /* C2S reply to a server request (owned) */
	struct call *fwd;      /* S2C request: its entry, marked forwarded when it goes out */
	/* tools/list filtering */
	size_t first, count;
	const char **hidden; /* per page entry: why it is hidden, or NULL */
	struct probe *probes;
	size_t n_probes;
	bool failed_ns;
	struct mcp_args args;
};

struct session {
	struct session *next;
	unsigned id;
	enum sstate state;
	struct box_ipc_event *conn;
	struct mcpd_server *srv;
	char *alias;
	int h_in, h_out, h_err;   /* the harness's 0, 1, 2 */
	int s_in, s_out;          /* our ends: the server's stdin (write), stdout (read) */
	struct event *ev_h_in, *ev_h_out, *ev_s_in, *ev_s_out, *timer, *reaper;
	bool watching_h_in, watching_s_out;
	struct ibuf hin, sin;     /* from the harness, from the server */
	struct obuf hout, sout;   /* to the harness, to the server */
	struct item *q[2], **qtail[2];
	size_t qn[2];
	struct call *calls[2];
	size_t ncalls[2], ntomb;
	uint64_t start_id;
	bool started, exited, stop_sent, eof_timer;
	int status;
	/* shell:spawn's input, for its outcome record */
	char *sp_command, *sp_program, *sp_cwd, *sp_path;
	const char *sp_arg1, *sp_arg2;
	long long sp_argc;
};

static struct session *sessions;
static size_t n_sessions;
static unsigned next_session = 1;

static void session_close(struct session *s, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void queue_run(struct session *s, enum dir d);
static void reads_update(struct session *s);
static void obuf_flush(struct session *s, enum dir to);
static void maybe_end(struct session *s);

/*
 * A session's events (its start and end, hidden tools, pin changes, refused
 * and denied calls) at notice level: what the user of an embedded box sees
 * (boxd's -n); the daemon's own start and end stay at info. These lines carry
 * what a harness or a server wrote (tool names, methods, ids): control
 * characters become '?', so a peer cannot forge lines in boxd's log.
 */
static void slog_at(const char *func, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define slog(...) slog_at(__func__, __VA_ARGS__)
static void
slog_at(const char *func, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	for (char *p = line; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	/* The caller's name, not this wrapper's, heads the line. */
	log_internal(LOG_LEVEL_NOTICE, 0, func, "%s", line);
}

size_t
sessions_count(void)
{
	return n_sessions;
}

static const char *
sname(const struct session *s)
{
	return s->srv ? s->srv->cfg->name : "?";
}

/* ---- buffers -------------------------------------------------------------------- */

static bool
obuf_add(struct obuf *b, const char *p, size_t n)
{
	if (b->off > 0 && b->off == b->len)
		b->off = b->len = 0;
	if (b->len + n > b->cap) {
		if (b->off > 0) {
			memmove(b->buf, b->buf + b->off, b->len - b->off);
			b->len -= b->off;
			b->off = 0;
		}
		if (b->len + n > b->cap) {
			size_t cap = b->cap ? b->cap : 4096;
			while (cap < b->len + n)
				cap *= 2;
			char *nb = realloc(b->buf, cap);
			if (!nb)
				return false;
			b->buf = nb;
			b->cap = cap;
		}
	}
	memcpy(b->buf + b->len, p, n);
	b->len += n;
	return true;
}

static size_t
obuf_pending(const struct obuf *b)
{
	return b->len - b->off;
}

/* ---- calls ---------------------------------------------------------------------- */

static void
call_free(struct call *c)
{
	if (!c)
		return;
	if (c->timer)
		event_free(c->timer);
	free(c->method);
	free(c->tool);
	free(c->prompt);
	free(c->uri);
	free(c);
}

/* An entry for frame F's call: its method and id key ("" without an id); NULL: no memory. */
static struct call *
call_new(struct session *s, const struct mcp_frame *f)
{
	struct call *c = calloc(1, sizeof(*c));
	if (!c || !(c->method = strdup(f->method))) {
		free(c);
		return NULL;
	}
	c->s = s;
	(void)snprintf(c->key, sizeof(c->key), "%s", f->id_key);
	return c;
}

static struct call *
call_find(struct session *s, enum dir d, const char *key)
{
	for (struct call *c = s->calls[d]; c; c = c->next)
		if (strcmp(c->key, key) == 0)
			return c;
	return NULL;
}

/* Unlink C from its list (the caller frees or keeps it). */
static void
call_unlink(struct session *s, enum dir d, struct call *c)
{
	for (struct call **pp = &s->calls[d]; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			c->next = NULL;
			if (c->timed_out)
				s->ntomb--;
			else
				s->ncalls[d]--;
			return;
		}
}

/* mcp:call's input (docs/box-policy.5.md): server, method, tool?, prompt?, uri?. */
static void
call_fields(const struct session *s, const struct call *c, struct policy_fields *fs)
{
	policy_fields_init(fs);
	policy_fields_str(fs, "server", s->srv->cfg->name);
	policy_fields_str(fs, "method", c->method);
	if (c->tool)
		policy_fields_str(fs, "tool", c->tool);
	if (c->prompt)
		policy_fields_str(fs, "prompt", c->prompt);
	if (c->uri)
		policy_fields_str(fs, "uri", c->uri);
}

static void
call_record(struct session *s, const struct call *c, bool ok)
{
	if (!c->decided)
		return;
	struct policy_fields fs;
	call_fields(s, c, &fs);
	pd_record(ok, "mcp:call", fs.p, fs.n, NULL, 0);
}

/* ---- replies the broker writes itself -------------------------------------------- */

/* An error reply to the harness (TO = S2C side's output) or to the server. */
static void
say_error(struct session *s, enum dir to, const json_t *id, int code, const char *msg)
{
	size_t n;
	char *r = mcp_error_reply(id, code, msg, &n);
	if (!r || !obuf_add(to == S2C ? &s->hout : &s->sout, r, n)) {
		free(r);
		session_close(s, 1, "out of memory");
		return;
	}
	free(r);
	obuf_flush(s, to);
}

/* ---- items ---------------------------------------------------------------------- */

static void
item_free(struct item *it)
{
	if (!it)
		return;
	mcp_frame_clear(&it->f);
	free(it->line);
	free(it->out);
	free(it->hidden);
	free(it->probes);
	mcp_args_free(&it->args);
	if (it->dir == S2C || it->f.kind == MCP_IDLESS_CALL)
		call_free(it->call); /* a tools/list reply owns its request's entry; an id-less
				      * call's entry is in no list */
	call_free(it->reply_to);
	free(it);
}

static void
item_pass(struct item *it)
{
	it->out = it->line;
	it->out_len = it->len + 1;
	it->line = NULL;
	it->ready = true;
}

static void
item_drop(struct item *it)
{
	it->ready = true;
}

static void
item_enqueue(struct session *s, struct item *it)
{
	*s->qtail[it->dir] = it;
	s->qtail[it->dir] = &it->next;
	s->qn[it->dir]++;
}

/* ---- the call timeout ------------------------------------------------------------ */

static void
on_call_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct call *c = arg;
	struct session *s = c->s;
	if (s->state == SS_DEAD)
		return;
	char msg[512];
	(void)snprintf(msg, sizeof(msg), "box-mcpd: %s: %s timed out after %llu ms", sname(s),
		       c->method, (unsigned long long)s->srv->cfg->call_timeout_ms);
	slog("session %u: %s: %s (id %s) timed out after %llu ms", s->id, sname(s),
		 c->method, c->key, (unsigned long long)s->srv->cfg->call_timeout_ms);
	call_record(s, c, false);
	/* The key is "n:123" or "s:text": the reply's id in its JSON type. */
	json_t *id = c->key[0] == 'n' ? json_integer(strtoll(c->key + 2, NULL, 10))
				      : json_string(c->key + 2);
	s->ncalls[C2S]--;
	s->ntomb++;
	c->timed_out = true;
	say_error(s, S2C, id, MCP_ERR_POLICY, msg);
	json_decref(id);
	/* Tombstones are kept to drop late replies, but not forever. */
	while (s->ntomb > MCPD_INFLIGHT_MAX) {
		struct call *old = NULL;
		for (struct call *x = s->calls[C2S]; x; x = x->next)
			if (x->timed_out)
				old = x; /* the list is newest first: the last one is the oldest */
		if (!old)
			break;
		call_unlink(s, C2S, old);
		call_free(old);
	}
}

/* ---- the queues ----------------------------------------------------------------- */

/* Emit every ready frame at the head of direction D, in order. */
static void
queue_run(struct session *s, enum dir d)
{
	while (s->state != SS_DEAD && s->q[d] && s->q[d]->ready) {
		struct item *it = s->q[d];
		s->q[d] = it->next;
		if (!s->q[d])
			s->qtail[d] = &s->q[d];
		s->qn[d]--;
		if (it->out) {
			struct obuf *ob = d == C2S ? &s->sout : &s->hout;
			if (d == S2C && obuf_pending(ob) > s->srv->cfg->max_frame) {
				item_free(it);
				session_close(s, 1,
					      "the server flooded: more than %llu bytes unread by "
					      "the harness",
					      (unsigned long long)s->srv->cfg->max_frame);
				return;
			}
			if (!obuf_add(ob, it->out, it->out_len)) {
				item_free(it);
				session_close(s, 1, "out of memory");
				return;
			}
			if (it->fwd)
				it->fwd->forwarded = true;
			if (it->f.kind == MCP_IDLESS_CALL && it->call && it->call->decided) {
				/* No reply can come: its outcome is an error, recorded now. */
				slog("session %u: %s: forwarded %s%s%s without an id to the %s (no "
				     "reply can come)",
				     s->id, sname(s), it->call->method, it->call->tool ? " " : "",
				     it->call->tool ? it->call->tool : "",
				     d == C2S ? "server" : "harness");
				call_record(s, it->call, false);
			}
			if (d == C2S && it->call && it->f.kind == MCP_REQUEST && !it->call->timer) {
				struct call *c = it->call;
				c->forwarded = true;
				uint64_t ms = s->srv->cfg->call_timeout_ms;
				struct timeval tv = { .tv_sec = (time_t)(ms / 1000),
						      .tv_usec = (suseconds_t)(ms % 1000) * 1000 };
				c->timer = evtimer_new(M.base, on_call_timeout, c);
				if (!c->timer || evtimer_add(c->timer, &tv) < 0) {
					item_free(it);
					session_close(s, 1, "cannot arm a call timer");
					return;
				}
			}
		}
		item_free(it);
		obuf_flush(s, d);
	}
	if (s->state != SS_DEAD) {
		reads_update(s);
		maybe_end(s);
	}
}

/* ---- decisions on harness -> server frames ---------------------------------------- */

/* What a log line about a refused harness call adds when the call has no id. */
static const char *
noid(const struct item *it)
{
	return it->f.kind == MCP_IDLESS_CALL ? " (it has no id: dropped, no reply can be sent)"
					     : "";
}

/*
 * A harness call refused or denied: nothing goes to the server; the harness
 * gets CODE and MSG — unless the call has no id, which no reply can name
 * (the caller's log line says so).
 */
static void
call_drop(struct session *s, struct item *it, int code, const char *msg)
{
	if (it->f.kind != MCP_IDLESS_CALL)
		say_error(s, S2C, it->f.id, code, msg);
	call_unlink(s, C2S, it->call);
	call_free(it->call);
	it->call = NULL;
	item_drop(it);
}

/* The refinement's verdict: the frame goes to the server, or -32001 to the harness. */
static void
refine_decided(struct session *s, struct item *it, const Box__DecideReply *r)
{
	if (r->verdict == BOX__DECISION_VERDICT__VERDICT_PERMIT) {
		item_pass(it);
		return;
	}
	slog("session %u: %s: tools/call %s denied: %s%s", s->id, sname(s), it->call->tool,
	     r->message, noid(it));
	call_drop(s, it, MCP_ERR_POLICY, r->message);
}

static void
on_refine(void *arg, const ProtobufCMessage *reply)
{
	struct item *it = arg;
	struct session *s = it->s;
	it->waiting--;
	refine_decided(s, it, (const Box__DecideReply *)reply);
	queue_run(s, C2S);
}

/* Refuse a tools/call after mcp:call permitted it: the catalog, the pin or the arguments. */
static void
refuse_call(struct session *s, struct item *it, int code, const char *msg)
{
	slog("session %u: %s: tools/call %s refused (%d): %s%s", s->id, sname(s),
	     it->call->tool ? it->call->tool : "(no name)", code, msg, noid(it));
	call_drop(s, it, code, msg);
}

/*
 * A tools/call's own checks, in the order the refusals take: the catalog (the
 * tool is in the server's last tools/list), the server's tool schema, the pin
 * (re-read when it refuses: an accept appended while the box runs counts at
 * once), a name an action can carry, the arguments typed. 0: *action (malloc'd,
 * NS::Action::"TOOL") and it->args are ready for the refinement; 1: refused,
 * *code and MSG say how; negative errno (out of memory).
 */
static int
tools_call_prepare(struct session *s, struct item *it, char **action, int *code, char *msg,
		   size_t msglen)
{
	struct mcpd_server *srv = s->srv;
	const char *tool = it->call->tool;
	const struct mcp_tool *t = tool ? mcp_catalog_find(srv->catalog, tool) : NULL;
	*action = NULL;
	*code = MCP_ERR_CATALOG;
	for (size_t i = 0; !t && tool && i < mcp_catalog_count(srv->catalog); i++) {
		const struct mcp_tool *x = mcp_catalog_tool(srv->catalog, i);
		if (x->name && strcmp(x->name, tool) == 0 && x->refused) {
			(void)snprintf(msg, msglen, "box-mcpd: %s: tool '%s' is refused: %s",
				       srv->cfg->name, tool, x->refused);
			return 1;
		}
	}
	if (!t) {
		(void)snprintf(msg, msglen,
			       "box-mcpd: %s: tool '%s' is not in the server's last tools/list",
			       srv->cfg->name, tool ? tool : "(no name)");
		return 1;
	}
	if (srv->failed) {
		*code = MCP_ERR_SERVER;
		(void)snprintf(msg, msglen, "box-mcpd: %s: the server's tool schema failed: %s",
			       srv->cfg->name, srv->failed_why ? srv->failed_why : "?");
		return 1;
	}
	struct mcp_pin_verdict v = { 0 };
	int r = mcpd_pins_check(srv, t, &v);
	if (r >= 0 && !v.allowed) {
		/* Only a refusal can be lifted by a later line (an accept): read what came. */
		int rr = mcpd_pins_reread();
		if (rr < 0)
			log_warn_errno(rr, "Cannot re-read the pins file");
		v = (struct mcp_pin_verdict){ 0 };
		r = mcpd_pins_check(srv, t, &v);
	}
	if (r < 0 || !v.allowed) {
		if (r < 0)
			(void)snprintf(msg, msglen, "box-mcpd: %s: tool '%s' cannot be pinned (%s)",
				       srv->cfg->name, tool, strerror(-r));
		else
			(void)snprintf(msg, msglen,
				       "box-mcpd: %s: tool '%s' changed since it was pinned (%s); "
				       "accept it with boxctl mcp accept %s %s %s",
				       srv->cfg->name, tool, v.what ? v.what : "definition",
				       M.init->box_name, srv->cfg->name, tool);
		return 1;
	}
	if (strchr(tool, '"') || strchr(tool, '\\')) {
		(void)snprintf(msg, msglen,
			       "box-mcpd: %s: tool '%s' cannot be named in a policy action",
			       srv->cfg->name, tool);
		return 1;
	}
	const json_t *params = it->f.params;
	const json_t *arguments = json_is_object(params) ? json_object_get(params, "arguments")
							 : NULL;
	char err[512];
	mcp_args_free(&it->args);
	if (mcp_args_build(t, arguments, &it->args, err, sizeof(err)) < 0) {
		*code = MCP_ERR_PARAMS;
		(void)snprintf(msg, msglen, "box-mcpd: %s: %s: %s", srv->cfg->name, tool, err);
		return 1;
	}
	if (asprintf(action, "%s::Action::\"%s\"", srv->cfg->ns, tool) < 0) {
		*action = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* tools/call permitted by mcp:call alone (its checks refused before): refuse, or refine. */
static void
tools_call_check(struct session *s, struct item *it)
{
	char msg[1024], *action;
	int code;
	int r = tools_call_prepare(s, it, &action, &code, msg, sizeof(msg));
	if (r < 0) {
		session_close(s, 1, "out of memory");
		return;
	}
	if (r > 0) {
		refuse_call(s, it, code, msg);
		return;
	}
	it->waiting++;
	(void)pd_decide(action, it->args.fields, it->args.n_fields, on_refine, it, s);
	free(action);
}

/* mcp:call denied a harness request: -32001 with the policy's message, nothing forwarded. */
static void
mcp_call_denied(struct session *s, struct item *it, const Box__DecideReply *r)
{
	slog("session %u: %s: %s%s%s denied: %s%s", s->id, sname(s), it->call->method,
	     it->call->tool ? " " : "", it->call->tool ? it->call->tool : "", r->message,
	     noid(it));
	call_drop(s, it, MCP_ERR_POLICY, r->message);
}

static void
on_mcp_call(void *arg, const ProtobufCMessage *reply)
{
	struct item *it = arg;
	struct session *s = it->s;
	const Box__DecideReply *r = (const Box__DecideReply *)reply;
	it->waiting--;
	bool permit = r->verdict == BOX__DECISION_VERDICT__VERDICT_PERMIT;
	if (it->reply_to) {
		/* The harness's reply to a server's request: denied, the server gets -32001. */
		if (permit) {
			it->reply_to->decided = true;
			call_record(s, it->reply_to, !it->f.is_error);
			item_pass(it);
		} else {
			slog("session %u: %s: the reply to %s denied: %s", s->id, sname(s),
				 it->reply_to->method, r->message);
			size_t n;
			char *e = mcp_error_reply(it->f.id, MCP_ERR_POLICY, r->message, &n);
			if (!e) {
				session_close(s, 1, "out of memory");
				return;
			}
			it->out = e;
			it->out_len = n;
			it->ready = true;
		}
	} else if (!permit) {
		mcp_call_denied(s, it, r);
	} else {
		it->call->decided = true;
		if (strcmp(it->call->method, "tools/call") == 0)
			tools_call_check(s, it);
		else
			item_pass(it);
	}
	if (s->state != SS_DEAD)
		queue_run(s, C2S);
}

/*
 * A tools/call whose own checks passed: mcp:call and its refinement in one
 * round trip (pd_decide_then), the refinement decided only if mcp:call
 * permitted it — the same decisions, events and log lines as one after the
 * other.
 */
static void
on_mcp_call_then(void *arg, const ProtobufCMessage *reply)
{
	struct item *it = arg;
	struct session *s = it->s;
	const Box__DecideBatchReply *b = (const Box__DecideBatchReply *)reply;
	it->waiting--;
	if (b->n_replies < 1 || b->replies[0]->verdict != BOX__DECISION_VERDICT__VERDICT_PERMIT) {
		if (b->n_replies < 1) {
			log_err("box-policyd answered a tools/call's decisions with no verdict");
			mcpd_exit(1);
			return;
		}
		mcp_call_denied(s, it, b->replies[0]);
	} else if (b->n_replies < 2) {
		log_err("box-policyd permitted mcp:call but sent no verdict for its refinement");
		mcpd_exit(1);
		return;
	} else {
		it->call->decided = true;
		refine_decided(s, it, b->replies[1]);
	}
	if (s->state != SS_DEAD)
		queue_run(s, C2S);
}

static bool
passes_undecided(const char *method)
{
	static const char *const pass[] = { "initialize", "ping", "server/discover",
					    "subscriptions/listen" };
	for (size_t i = 0; i < sizeof(pass) / sizeof(pass[0]); i++)
		if (strcmp(method, pass[i]) == 0)
			return true;
	return false;
}

/* An id key ("n:7", "s:abc") as the JSON id it came from, for messages. */
static const char *
id_text(const char *key, char *buf, size_t size)
{
	if (key[0] == 'n' && key[1] == ':')
		return key + 2;
	if (key[0] == 's' && key[1] == ':') {
		(void)snprintf(buf, size, "\"%s\"", key + 2);
		return buf;
	}
	return key;
}

static char *
dup_or_null(const char *p)
{
	return p ? strdup(p) : NULL;
}

/* One line from the harness. */
static void
c2s_frame(struct session *s, char *line, size_t len)
{
	struct item *it = calloc(1, sizeof(*it));
	if (!it) {
		session_close(s, 1, "out of memory");
		return;
	}
	it->s = s;
	it->dir = C2S;
	int code = 0;
	const char *why = NULL;
	if (mcp_frame_parse(line, len, &it->f, &code, &why) < 0) {
		if (code == 0) {
			item_free(it);
			session_close(s, 1, "out of memory");
			return;
		}
		char msg[256];
		(void)snprintf(msg, sizeof(msg), "box-mcpd: %s", why ? why : "invalid frame");
		slog("session %u: %s: refused a frame from the harness (%d): %s", s->id,
			 sname(s), code, why ? why : "?");
		say_error(s, S2C, it->f.id, code, msg);
		item_free(it);
		return;
	}
	it->line = malloc(len + 1);
	if (!it->line) {
		item_free(it);
		session_close(s, 1, "out of memory");
		return;
	}
	memcpy(it->line, line, len);
	it->line[len] = '\n';
	it->len = len;
	struct mcp_frame *f = &it->f;
	switch (f->kind) {
	case MCP_NOTIFICATION:
		item_pass(it);
		break;
	case MCP_REQUEST:
	case MCP_IDLESS_CALL: {
		/* An id-less call is decided as a request is; it is in no list (no reply). */
		bool idless = f->kind == MCP_IDLESS_CALL;
		if (!idless && call_find(s, C2S, f->id_key) &&
		    !call_find(s, C2S, f->id_key)->timed_out) {
			say_error(s, S2C, f->id, MCP_ERR_INVALID,
				  "box-mcpd: duplicate id: a request with this id is in flight");
			item_free(it);
			return;
		}
		if (!idless && s->ncalls[C2S] >= MCPD_INFLIGHT_MAX) {
			say_error(s, S2C, f->id, MCP_ERR_INVALID,
				  "box-mcpd: too many requests in flight (1024)");
			item_free(it);
			return;
		}
		struct call *old = idless ? NULL : call_find(s, C2S, f->id_key);
		if (old) { /* a tombstone: the id is reused */
			call_unlink(s, C2S, old);
			call_free(old);
		}
		struct call *c = call_new(s, f);
		if (!c) {
			item_free(it);
			session_close(s, 1, "out of memory");
			return;
		}
		bool is_call = strcmp(f->method, "tools/call") == 0;
		c->tool = is_call ? dup_or_null(mcp_frame_tool(f)) : NULL;
		c->prompt = dup_or_null(mcp_frame_prompt(f));
		c->uri = dup_or_null(mcp_frame_uri(f));
		if (strcmp(f->method, "tools/list") == 0) {
			c->tools_list = true;
			c->cursor = json_is_object(f->params) &&
				    json_object_get(f->params, "cursor") != NULL;
		}
		it->call = c;
		if (!idless) {
			c->next = s->calls[C2S];
			s->calls[C2S] = c;
			s->ncalls[C2S]++;
		}
		if (!idless && passes_undecided(f->method)) {
			item_pass(it);
		} else {
			struct policy_fields fs;
			call_fields(s, c, &fs);
			it->waiting++;
			item_enqueue(s, it);
			char msg[1024], *action = NULL;
			int refusal, r = is_call ? tools_call_prepare(s, it, &action, &refusal, msg,
								      sizeof(msg))
						 : 1;
			if (r < 0) {
				session_close(s, 1, "out of memory");
				return;
			}
			if (r == 0)
				(void)pd_decide_then("mcp:call", fs.p, fs.n, action, it->args.fields,
						     it->args.n_fields, on_mcp_call_then, it, s);
			else /* refused after mcp:call permits it (tools_call_check), or no tool */
				(void)pd_decide("mcp:call", fs.p, fs.n, on_mcp_call, it, s);
			free(action);
			return;
		}
		break;
	}
	case MCP_RESPONSE: {
		struct call *c = call_find(s, S2C, f->id_key);
		if (!c || !c->forwarded) {
			slog("session %u: %s: dropped the harness's reply to id %s, which the "
				 "server never asked",
				 s->id, sname(s), f->id_key);
			item_free(it);
			return;
		}
		call_unlink(s, S2C, c);
		it->reply_to = c;
		if (strcmp(c->method, "ping") == 0) {
			item_pass(it);
		} else {
			struct policy_fields fs;
			call_fields(s, c, &fs);
			it->waiting++;
			item_enqueue(s, it);
			(void)pd_decide("mcp:call", fs.p, fs.n, on_mcp_call, it, s);
			return;
		}
		break;
	}
	default:
		item_free(it);
		return;
	}
	item_enqueue(s, it);
}

/* ---- server -> harness: the tools/list filter ------------------------------------- */

static void
tools_list_finish(struct session *s, struct item *it)
{
	struct mcpd_server *srv = s->srv;
	json_t *tools = json_object_get(it->f.result, "tools");
	size_t n_hidden = 0;
	char log_line[2048];
	size_t ll = 0;
	log_line[0] = 0;
	for (size_t k = 0; k < it->count; k++) {
		if (!it->hidden[k])
			continue;
		n_hidden++;
		const struct mcp_tool *t = mcp_catalog_tool(srv->catalog, it->first + k);
		int w = snprintf(log_line + ll, sizeof(log_line) - ll, "%s%s (%s)",
				 n_hidden > 1 ? ", " : "", t->name ? t->name : "(unnamed)",
				 it->hidden[k]);
		if (w > 0 && ll + (size_t)w < sizeof(log_line))
			ll += (size_t)w;
	}
	slog("session %u: %s: tools/list: %zu tools, %zu hidden%s%s%s", s->id, srv->cfg->name,
		 it->count, n_hidden, n_hidden ? ": " : "", log_line,
		 it->failed_ns ? " (the tool schema failed: calls answer -32002)" : "");
	if (n_hidden == 0) {
		item_pass(it);
		return;
	}
	/* The result the agent sees: the same frame without the hidden tools. */
	json_t *keep = json_array();
	if (!keep) {
		session_close(s, 1, "out of memory");
		return;
	}
	for (size_t k = 0; k < it->count; k++)
		if (!it->hidden[k])
			json_array_append(keep, json_array_get(tools, k));
	json_object_set_new(it->f.result, "tools", keep);
	size_t n;
	char *out = mcp_frame_dump(it->f.root, &n);
	if (!out) {
		session_close(s, 1, "out of memory");
		return;
	}
	it->out = out;
	it->out_len = n;
	it->ready = true;
}

static void
on_probe(void *arg, const ProtobufCMessage *reply)
{
	struct probe *p = arg;
	struct item *it = p->it;
	struct session *s = it->s;
	const Box__PolicyProbeReply *r = (const Box__PolicyProbeReply *)reply;
	for (size_t i = 0; i < p->n && i < r->n_replies; i++)
		if (r->replies[i]->verdict != BOX__DECISION_VERDICT__VERDICT_PERMIT)
			it->hidden[p->idx[i] - it->first] = "denied by the policy";
	if (r->n_replies != p->n)
		for (size_t i = r->n_replies; i < p->n; i++)
			it->hidden[p->idx[i] - it->first] = "no decision";
	if (--it->waiting == 0) {
		tools_list_finish(s, it);
		if (s->state != SS_DEAD)
			queue_run(s, S2C);
	}
}

static void
tools_list_probe(struct session *s, struct item *it)
{
	struct mcpd_server *srv = s->srv;
	size_t n_ask = 0;
	for (size_t k = 0; k < it->count; k++)
		n_ask += it->hidden[k] == NULL;
	it->n_probes = (n_ask + BOX_POLICY_BATCH_MAX - 1) / BOX_POLICY_BATCH_MAX;
	if (it->n_probes == 0) {
		tools_list_finish(s, it);
		return;
	}
	it->probes = calloc(it->n_probes, sizeof(*it->probes));
	Box__DecideRequest *reqs = calloc(BOX_POLICY_BATCH_MAX, sizeof(*reqs));
	Box__DecideRequest **preqs = calloc(BOX_POLICY_BATCH_MAX, sizeof(*preqs));
	struct policy_fields *fs = calloc(BOX_POLICY_BATCH_MAX, sizeof(*fs));
	if (!it->probes || !reqs || !preqs || !fs) {
		free(reqs);
		free(preqs);
		free(fs);
		session_close(s, 1, "out of memory");
		return;
	}
	size_t k = 0;
	for (size_t p = 0; p < it->n_probes; p++) {
		struct probe *pr = &it->probes[p];
		pr->it = it;
		for (; k < it->count && pr->n < BOX_POLICY_BATCH_MAX; k++) {
			if (it->hidden[k])
				continue;
			const struct mcp_tool *t = mcp_catalog_tool(srv->catalog, it->first + k);
			size_t i = pr->n++;
			pr->idx[i] = it->first + k;
			policy_fields_init(&fs[i]);
			policy_fields_str(&fs[i], "server", srv->cfg->name);
			policy_fields_str(&fs[i], "method", "tools/call");
			policy_fields_str(&fs[i], "tool", t->name);
			box__decide_request__init(&reqs[i]);
			reqs[i].action = "mcp:call";
			reqs[i].input = fs[i].p;
			reqs[i].n_input = fs[i].n;
			preqs[i] = &reqs[i];
		}
		Box__PolicyProbeRequest m = BOX__POLICY_PROBE_REQUEST__INIT;
		m.requests = preqs;
		m.n_requests = pr->n;
		it->waiting++;
		if (pd_ask(BOX__MSG_TYPE__MSG_POLICY_PROBE_REQUEST, &m.base, on_probe, pr, s) < 0)
			break;
	}
	free(reqs);
	free(preqs);
	free(fs);
}

static void
on_tool_schema(void *arg, const ProtobufCMessage *reply)
{
	struct item *it = arg;
	struct session *s = it->s;
	struct mcpd_server *srv = s->srv;
	const Box__PolicyToolSchemaReply *r = (const Box__PolicyToolSchemaReply *)reply;
	it->waiting--;
	free(srv->failed_why);
	srv->failed_why = NULL;
	srv->failed = !r->ok;
	it->failed_ns = !r->ok;
	if (!r->ok) {
		srv->failed_why = strdup(r->error ? r->error : "?");
		log_warn("%s: the tool schema failed: %s", srv->cfg->name,
			 r->error ? r->error : "?");
	}
	for (size_t i = 0; i < r->n_warnings; i++)
		log_warn("%s: tool schema: %s", srv->cfg->name, r->warnings[i]);
	/* The pins: new tools pinned, changed ones refused (and hidden) unless allowed. */
	int rr = mcpd_pins_reread();
	if (rr < 0)
		log_warn_errno(rr, "Cannot re-read the pins file");
	for (size_t k = 0; k < it->count; k++) {
		const struct mcp_tool *t = mcp_catalog_tool(srv->catalog, it->first + k);
		if (t->refused) {
			it->hidden[k] = t->refused;
			continue;
		}
		struct mcp_pin_verdict v = { 0 };
		rr = mcpd_pins_check(srv, t, &v);
		if (rr < 0) {
			it->hidden[k] = "cannot be pinned";
			continue;
		}
		if (v.state == MCP_PIN_CHANGED)
			slog("%s: tool '%s' changed since it was pinned (%s)%s", srv->cfg->name,
		     t->name, v.what ? v.what : "definition",
		     v.allowed ? ": allowed (allow_tool_changes)" : ": refused until boxctl mcp accept");
		if (!v.allowed)
			it->hidden[k] = "changed since it was pinned";
	}
	tools_list_probe(s, it);
	if (s->state != SS_DEAD)
		queue_run(s, S2C);
}

/* A tools/list result: register the catalog with policyd, then pins, then the probe. */
static void
tools_list_start(struct session *s, struct item *it)
{
	struct mcpd_server *srv = s->srv;
	char msg[512];
	if (!it->call->cursor)
		mcp_catalog_clear(srv->catalog);
	const char *why = NULL;
	int r = mcp_catalog_add_page(srv->catalog, it->f.result, &it->first, &it->count, &why);
	if (r < 0) {
		(void)snprintf(msg, sizeof(msg), "box-mcpd: %s: unusable tools/list result: %s",
			       srv->cfg->name,
			       r == -E2BIG ? "more than 4096 tools" : (why ? why : strerror(-r)));
		slog("session %u: %s", s->id, msg + 10);
		free(it->out);
		it->out = mcp_error_reply(it->f.id, MCP_ERR_SERVER, msg, &it->out_len);
		it->ready = true;
		return;
	}
	it->hidden = calloc(it->count ? it->count : 1, sizeof(*it->hidden));
	Box__PolicyTool **tools = NULL;
	size_t n = 0;
	if (!it->hidden || mcp_catalog_policy_tools(srv->catalog, &tools, &n) < 0) {
		session_close(s, 1, "out of memory");
		return;
	}
	Box__PolicyToolSchema m = BOX__POLICY_TOOL_SCHEMA__INIT;
	m.server = (char *)srv->cfg->name;
	m.ns = (char *)srv->cfg->ns;
	m.tools = tools;
	m.n_tools = n;
	it->waiting++;
	(void)pd_ask(BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &m.base, on_tool_schema, it, s);
	free(tools);
}

/* mcp:call on a server's id-less call: forwarded to the harness, or dropped. */
static void
on_server_idless(void *arg, const ProtobufCMessage *reply)
{
	struct item *it = arg;
	struct session *s = it->s;
	const Box__DecideReply *r = (const Box__DecideReply *)reply;
	it->waiting--;
	if (r->verdict == BOX__DECISION_VERDICT__VERDICT_PERMIT) {
		it->call->decided = true;
		item_pass(it);
	} else {
		slog("session %u: %s: the server's %s denied: %s (it has no id: dropped, no reply "
		     "can be sent)",
		     s->id, sname(s), it->call->method, r->message);
		call_free(it->call);
		it->call = NULL;
		item_drop(it);
	}
	queue_run(s, S2C);
}

/* One line from the server. */
static void
s2c_frame(struct session *s, char *line, size_t len)
{
	struct item *it = calloc(1, sizeof(*it));
	if (!it) {
		session_close(s, 1, "out of memory");
		return;
	}
	it->s = s;
	it->dir = S2C;
	int code = 0;
	const char *why = NULL;
	if (mcp_frame_parse(line, len, &it->f, &code, &why) < 0) {
		item_free(it);
		session_close(s, 1, "the server wrote a bad frame: %s", why ? why : "out of memory");
		return;
	}
	it->line = malloc(len + 1);
	if (!it->line) {
		item_free(it);
		session_close(s, 1, "out of memory");
		return;
	}
	memcpy(it->line, line, len);
	it->line[len] = '\n';
	it->len = len;
	struct mcp_frame *f = &it->f;
	switch (f->kind) {
	case MCP_NOTIFICATION:
		item_pass(it);
		break;
	case MCP_REQUEST: {
		/* Forwarded to the harness; its reply is decided (c2s_frame). */
		if (call_find(s, S2C, f->id_key) || s->ncalls[S2C] >= MCPD_INFLIGHT_MAX) {
			say_error(s, C2S, f->id, MCP_ERR_INVALID,
				  s->ncalls[S2C] >= MCPD_INFLIGHT_MAX
				      ? "box-mcpd: too many requests in flight (1024)"
				      : "box-mcpd: duplicate id: a request with this id is in flight");
			item_free(it);
			return;
		}
		struct call *c = call_new(s, f);
		if (!c) {
			item_free(it);
			session_close(s, 1, "out of memory");
			return;
		}
		c->next = s->calls[S2C];
		s->calls[S2C] = c;
		s->ncalls[S2C]++;
		it->fwd = c;
		item_pass(it);
		break;
	}
	case MCP_IDLESS_CALL: {
		/*
		 * A server's request is forwarded and the harness's reply decided;
		 * without an id no reply can come, so the call itself is decided as
		 * that reply would be: mcp:call {server, method}.
		 */
		struct call *c = call_new(s, f);
		if (!c) {
			item_free(it);
			session_close(s, 1, "out of memory");
			return;
		}
		it->call = c;
		struct policy_fields fs;
		call_fields(s, c, &fs);
		it->waiting++;
		item_enqueue(s, it);
		(void)pd_decide("mcp:call", fs.p, fs.n, on_server_idless, it, s);
		return;
	}
	case MCP_RESPONSE: {
		struct call *c = call_find(s, C2S, f->id_key);
		if (!c || !c->forwarded) {
			char idb[MCP_ID_KEY_MAX + 2];
			session_close(s, 1, "the server replied to id %s, which was never sent",
				      id_text(f->id_key, idb, sizeof(idb)));
			item_free(it);
			return;
		}
		call_unlink(s, C2S, c);
		if (c->timed_out) {
			slog("session %u: %s: dropped the late reply to %s (id %s)", s->id,
				 sname(s), c->method, c->key);
			call_free(c);
			item_free(it);
			return;
		}
		if (c->timer) {
			event_free(c->timer);
			c->timer = NULL;
		}
		call_record(s, c, !f->is_error);
		it->call = c; /* owned by the item now */
		if (c->tools_list && !f->is_error && f->result) {
			item_enqueue(s, it);
			tools_list_start(s, it);
			return;
		}
		item_pass(it);
		break;
	}
	default:
		item_free(it);
		return;
	}
	item_enqueue(s, it);
}

/* ---- reading lines ------------------------------------------------------------- */

/*
 * Read what FD has into B and hand each complete line to FN. A line over
 * max_frame closes the session. Returns false when the session is done
 * reading from FD (EOF, error or closed).
 */
static bool
read_lines(struct session *s, int fd, struct ibuf *b, enum dir d)
{
	size_t max = (size_t)s->srv->cfg->max_frame;
	if (b->cap - b->len < MCPD_READ_CHUNK) {
		size_t cap = b->cap ? b->cap * 2 : MCPD_READ_CHUNK * 2;
		if (cap < b->len + MCPD_READ_CHUNK)
			cap = b->len + MCPD_READ_CHUNK;
		char *nb = realloc(b->buf, cap);
		if (!nb) {
			session_close(s, 1, "out of memory");
			return false;
		}
		b->buf = nb;
		b->cap = cap;
	}
	ssize_t n = read(fd, b->buf + b->len, MCPD_READ_CHUNK);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return true;
		n = 0; /* an error reads as the end */
	}
	if (n == 0)
		b->eof = true;
	size_t scan = b->len;
	b->len += (size_t)n;
	size_t start = 0;
	for (;;) {
		char *nl = memchr(b->buf + scan, '\n', b->len - scan);
		size_t end = nl ? (size_t)(nl - b->buf) : b->len;
		if (!nl && !(b->eof && end > start))
			break;
		size_t ll = end - start;
		if (ll > max) {
			session_close(s, 1, "a frame from the %s is over max_frame (%zu bytes)",
				      d == C2S ? "harness" : "server", max);
			return false;
		}
		/* Blank lines carry nothing (a '\r' before '\n' belongs to the frame). */
		bool blank = true;
		for (size_t i = start; i < end && blank; i++)
			blank = b->buf[i] == ' ' || b->buf[i] == '\t' || b->buf[i] == '\r';
		if (!blank) {
			if (d == C2S)
				c2s_frame(s, b->buf + start, ll);
			else
				s2c_frame(s, b->buf + start, ll);
		}
		if (s->state == SS_DEAD)
			return false;
		start = nl ? end + 1 : end;
		scan = start;
		if (!nl)
			break;
	}
	memmove(b->buf, b->buf + start, b->len - start);
	b->len -= start;
	if (b->len > max) {
		session_close(s, 1, "a frame from the %s is over max_frame (%zu bytes)",
			      d == C2S ? "harness" : "server", max);
		return false;
	}
	return !b->eof;
}

static void
on_harness_in(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct session *s = arg;
	bool more = read_lines(s, fd, &s->hin, C2S);
	if (s->state == SS_DEAD)
		return;
	if (!more) {
		event_del(s->ev_h_in);
		s->watching_h_in = false;
	}
	queue_run(s, C2S);
}

static void
on_server_out(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct session *s = arg;
	bool more = read_lines(s, fd, &s->sin, S2C);
	if (s->state == SS_DEAD)
		return;
	if (!more) {
		event_del(s->ev_s_out);
		s->watching_s_out = false;
	}
	queue_run(s, S2C);
}

/* Pause or resume reading each side by what is waiting on the other. */
static void
reads_update(struct session *s)
{
	if (s->state != SS_RUNNING)
		return;
	size_t max = (size_t)s->srv->cfg->max_frame;
	bool want_h = !s->hin.eof && s->s_in >= 0 && obuf_pending(&s->sout) <= max &&
		      obuf_pending(&s->hout) <= max && s->qn[C2S] < MCPD_QUEUE_MAX;
	bool want_s = !s->sin.eof && s->qn[S2C] < MCPD_QUEUE_MAX;
	if (want_h != s->watching_h_in) {
		if (want_h && event_add(s->ev_h_in, NULL) < 0) {
			session_close(s, 1, "cannot watch the harness's stdin");
			return;
		}
		if (!want_h)
			event_del(s->ev_h_in);
		s->watching_h_in = want_h;
	}
	if (want_s != s->watching_s_out) {
		if (want_s && event_add(s->ev_s_out, NULL) < 0) {
			session_close(s, 1, "cannot watch the server's stdout");
			return;
		}
		if (!want_s)
			event_del(s->ev_s_out);
		s->watching_s_out = want_s;
	}
}

/* ---- writing ------------------------------------------------------------------- */

static void
obuf_flush(struct session *s, enum dir to)
{
	struct obuf *b = to == C2S ? &s->sout : &s->hout;
	int fd = to == C2S ? s->s_in : s->h_out;
	struct event *ev = to == C2S ? s->ev_s_in : s->ev_h_out;
	if (fd < 0 || !ev) {
		b->off = b->len = 0;
		return;
	}
	while (obuf_pending(b) > 0) {
		ssize_t n = write(fd, b->buf + b->off, obuf_pending(b));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			event_add(ev, NULL);
			return;
		}
		if (n <= 0) {
			/* The reader is gone: the harness's stdout or the server's stdin closed. */
			b->off = b->len = 0;
			if (to == C2S) {
				event_del(ev);
				s->s_in = safe_close(s->s_in);
			} else {
				event_del(ev);
				s->h_out = safe_close(s->h_out);
			}
			break;
		}
		b->off += (size_t)n;
	}
	b->off = b->len = 0;
	event_del(ev);
	if (s->state != SS_DEAD) {
		reads_update(s);
		maybe_end(s);
	}
}

static void
on_writable(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct session *s = arg;
	/* Which one: both may be ready; flushing an empty one is a no-op. */
	if (obuf_pending(&s->sout))
		obuf_flush(s, C2S);
	if (s->state != SS_DEAD && obuf_pending(&s->hout))
		obuf_flush(s, S2C);
}

/* ---- the end of a session -------------------------------------------------------- */

/*
 * A line the alias prints (McpClose.message, checked by the alias's table):
 * no control character, at most BOX_MCP_MESSAGE_MAX bytes, and valid UTF-8
 * after a cut (snprintf may have split the last character).
 */
static void
msg_fit(char *msg)
{
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	size_t n = strlen(msg);
	if (n > BOX_MCP_MESSAGE_MAX)
		n = BOX_MCP_MESSAGE_MAX;
	while (n > 0 && !box_valid_utf8(msg, n))
		n--;
	msg[n] = 0;
}

static void
on_reap(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct session *s = arg;
	/* A server still running: freed when its McpServerExit came (session_exited). */
	if (s->start_id && !s->exited)
		return;
	/* McpClose queued: free once it is written (or after a while). */
	if (s->conn && box_ipc_event_queued(s->conn) > 0) {
		struct timeval tv = { 0, 50000 };
		evtimer_add(s->reaper, &tv);
		return;
	}
	for (struct session **pp = &sessions; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	n_sessions--;
	if (s->srv)
		s->srv->n_sessions--;
	pd_cancel_owner(s);
	for (int d = 0; d < 2; d++) {
		while (s->q[d]) {
			struct item *it = s->q[d];
			s->q[d] = it->next;
			item_free(it);
		}
		while (s->calls[d]) {
			struct call *c = s->calls[d];
			s->calls[d] = c->next;
			call_free(c);
		}
	}
	struct event *evs[] = { s->ev_h_in, s->ev_h_out, s->ev_s_in, s->ev_s_out, s->timer,
				s->reaper };
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		if (evs[i])
			event_free(evs[i]);
	box_ipc_event_free(s->conn);
	safe_close(s->h_in);
	safe_close(s->h_out);
	safe_close(s->h_err);
	safe_close(s->s_in);
	safe_close(s->s_out);
	free(s->hin.buf);
	free(s->sin.buf);
	free(s->hout.buf);
	free(s->sout.buf);
	free(s->alias);
	free(s->sp_command);
	free(s->sp_program);
	free(s->sp_cwd);
	free(s->sp_path);
	free(s);
}

/* Stop the server if it may run, McpClose, and free from the loop. */
static void
session_end(struct session *s, int status, const char *message)
{
	if (s->state == SS_DEAD)
		return;
	if (s->start_id && !s->exited && !s->stop_sent) {
		mcpd_server_stop(s->start_id);
		s->stop_sent = true;
	}
	s->state = SS_DEAD;
	pd_cancel_owner(s);
	struct event *evs[] = { s->ev_h_in, s->ev_h_out, s->ev_s_in, s->ev_s_out, s->timer };
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		if (evs[i])
			event_del(evs[i]);
	for (int d = 0; d < 2; d++)
		for (struct call *c = s->calls[d]; c; c = c->next)
			if (c->timer)
				event_del(c->timer);
	if (s->conn) {
		Box__McpClose cl = BOX__MCP_CLOSE__INIT;
		cl.status = status;
		cl.message = (char *)(message ? message : "");
		int r = box_ipc_event_send(s->conn, BOX__MSG_TYPE__MSG_MCP_CLOSE, 0, &cl.base, NULL,
					   0);
		if (r < 0)
			log_warn_errno(r, "session %u: cannot send McpClose", s->id);
	}
	slog("session %u: %s: ended (status %d)%s%s", s->id, sname(s), status,
		 message && *message ? ": " : "", message ? message : "");
	struct timeval tv = { 0, 0 };
	evtimer_add(s->reaper, &tv);
}

static void
session_close(struct session *s, int status, const char *fmt, ...)
{
	if (s->state == SS_DEAD)
		return;
	char why[1024], msg[1200];
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	(void)snprintf(msg, sizeof(msg), "box-mcpd: %s: %s", s->alias ? s->alias : sname(s), why);
	msg_fit(msg);
	session_end(s, status, msg);
}

/* The server is gone (its exit and its stdout's EOF): flush to the harness, then McpClose. */
static void
maybe_end(struct session *s)
{
	if (s->state == SS_RUNNING && s->hin.eof && s->s_in >= 0 && !s->q[C2S] &&
	    obuf_pending(&s->sout) == 0) {
		/* The harness is done and everything before its EOF went out. */
		event_del(s->ev_s_in);
		s->s_in = safe_close(s->s_in);
	}
	if (s->state == SS_RUNNING && s->sin.eof && !s->exited && !s->eof_timer) {
		/* Its stdout closed: its exit should follow (else it is stopped). */
		s->eof_timer = true;
		struct timeval tv = { MCPD_EXIT_GRACE_MS / 1000, (MCPD_EXIT_GRACE_MS % 1000) * 1000 };
		evtimer_add(s->timer, &tv);
	}
	if (s->state == SS_RUNNING && s->exited && s->sin.eof)
		s->state = SS_ENDING;
	if (s->state == SS_ENDING && !s->q[S2C] && obuf_pending(&s->hout) == 0)
		session_end(s, s->status, NULL);
}

static void
on_session_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct session *s = arg;
	switch (s->state) {
	case SS_OPENING:
		slog("session %u: no McpOpen within %d ms", s->id, MCPD_OPEN_TIMEOUT_MS);
		s->state = SS_DEAD;
		s->conn = box_ipc_event_free(s->conn);
		{
			struct timeval tv = { 0, 0 };
			evtimer_add(s->reaper, &tv);
		}
		break;
	case SS_RUNNING:
	case SS_ENDING:
		/* The server exited but its stdout stays open (a child kept it), or the reverse. */
		if (s->exited) {
			session_end(s, s->status, NULL);
		} else if (!s->stop_sent) {
			slog("session %u: %s: the server closed its stdout but did not exit: "
				 "stopping it",
				 s->id, sname(s));
			mcpd_server_stop(s->start_id);
			s->stop_sent = true;
		}
		break;
	default:
		break;
	}
}

/* ---- start ---------------------------------------------------------------------- */

static void
spawn_fields(const struct session *s, struct policy_fields *fs)
{
	policy_fields_init(fs);
	policy_fields_str(fs, "command", s->sp_command);
	policy_fields_str(fs, "program", s->sp_program);
	if (s->sp_arg1)
		policy_fields_str(fs, "arg1", s->sp_arg1);
	if (s->sp_arg2)
		policy_fields_str(fs, "arg2", s->sp_arg2);
	policy_fields_long(fs, "arg_count", s->sp_argc);
	policy_fields_str(fs, "cwd", s->sp_cwd);
	policy_fields_str(fs, "program_path", s->sp_path);
}

static void
spawn_record(struct session *s, int status)
{
	struct policy_fields in, out;
	spawn_fields(s, &in);
	policy_fields_init(&out);
	policy_fields_long(&out, "status", status);
	pd_record(true, "shell:spawn", in.p, in.n, out.p, out.n);
}

static void
on_gate(void *arg, const ProtobufCMessage *reply)
{
	struct session *s = arg;
	const Box__DecideReply *r = (const Box__DecideReply *)reply;
	if (r->verdict != BOX__DECISION_VERDICT__VERDICT_PERMIT) {
		char msg[BOX_MCP_MESSAGE_MAX + 1];
		(void)snprintf(msg, sizeof(msg), "box-mcpd: %s: %s", s->alias, r->message);
		msg_fit(msg);
		slog("session %u: %s: start denied: %s", s->id, sname(s), r->message);
		session_end(s, 126, msg);
		return;
	}
	int in[2] = { -1, -1 }, out[2] = { -1, -1 };
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) {
		safe_close(in[0]);
		safe_close(in[1]);
		session_close(s, 126, "cannot make the server's pipes: %s", strerror(errno));
		return;
	}
	s->s_in = in[1];
	s->s_out = out[0];
	int fds[3] = { in[0], out[1], s->h_err };
	s->start_id = mcpd_server_start(s->srv->cfg->name, fds);
	close(in[0]);
	close(out[1]);
	s->h_err = safe_close(s->h_err);
	if (s->start_id == 0)
		return; /* fatal already */
	s->state = SS_STARTING;
}

/* The server process of the session: argv, cwd, program as shell:spawn names them. */
static bool
spawn_prepare(struct session *s)
{
	const Box__McpServer *c = s->srv->cfg;
	size_t n = 0;
	for (size_t i = 0; i < c->n_argv; i++)
		n += strlen(c->argv[i]) + 1;
	s->sp_command = malloc(n + 1);
	if (!s->sp_command)
		return false;
	char *p = s->sp_command;
	for (size_t i = 0; i < c->n_argv; i++) {
		if (i)
			*p++ = ' ';
		size_t l = strlen(c->argv[i]);
		memcpy(p, c->argv[i], l);
		p += l;
	}
	*p = 0;
	const char *base = strrchr(c->argv[0], '/');
	s->sp_program = strdup(base && base[1] ? base + 1 : c->argv[0]);
	s->sp_arg1 = c->n_argv > 1 ? c->argv[1] : NULL;
	s->sp_arg2 = c->n_argv > 2 ? c->argv[2] : NULL;
	s->sp_argc = (long long)c->n_argv - 1;
	s->sp_cwd = mcpd_spell(c->cwd);
	s->sp_path = mcpd_spell(c->program_path);
	return s->sp_program && s->sp_cwd && s->sp_path;
}

/* A harness's fd must be one the loop can watch (a pipe, a socket, a terminal). */
static bool
fd_pollable(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 &&
	       (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode));
}

static void
on_open(struct session *s, struct box_ipc_msg *m)
{
	const Box__McpOpen *o = (const Box__McpOpen *)m->msg;
	evtimer_del(s->timer);
	s->h_in = TAKE_FD(m->fds[0]);
	s->h_out = TAKE_FD(m->fds[1]);
	s->h_err = TAKE_FD(m->fds[2]);
	s->alias = strdup(o->alias);
	if (!s->alias) {
		session_end(s, 1, "box-mcpd: out of memory");
		return;
	}
	for (size_t i = 0; i < M.n_servers; i++)
		if (strcmp(M.servers[i].cfg->alias, o->alias) == 0)
			s->srv = &M.servers[i];
	if (!s->srv) {
		char msg[128];
		(void)snprintf(msg, sizeof(msg), "box-mcpd: no stdio MCP server has the alias %s",
			       o->alias);
		slog("session %u: %s", s->id, msg + 10);
		session_end(s, 126, msg);
		return;
	}
	s->srv->n_sessions++;
	slog("session %u: %s: alias %s run in %s (%zu harness arguments ignored)", s->id,
		 sname(s), o->alias, o->cwd, o->n_args);
	if (!fd_pollable(s->h_in) || !fd_pollable(s->h_out)) {
		session_close(s, 1, "stdin and stdout must be pipes, sockets or terminals");
		return;
	}
	if (fd_set_nonblock(s->h_in, true) < 0 || fd_set_nonblock(s->h_out, true) < 0 ||
	    !spawn_prepare(s)) {
		session_close(s, 1, "cannot set up the session");
		return;
	}
	s->state = SS_GATE;
	struct policy_fields fs;
	spawn_fields(s, &fs);
	(void)pd_decide("shell:spawn", fs.p, fs.n, on_gate, s, s);
}

static void
on_conn_msg(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata)
{
	(void)e;
	struct session *s = userdata;
	if (m->type == BOX__MSG_TYPE__MSG_MCP_OPEN && s->state == SS_OPENING)
		on_open(s, m);
}

static void
on_conn_close(struct box_ipc_event *e, int error, void *userdata)
{
	(void)e;
	struct session *s = userdata;
	s->conn = box_ipc_event_free(s->conn);
	if (s->state == SS_DEAD)
		return;
	if (error != -ECONNRESET)
		slog("session %u: the alias's connection failed: %s", s->id, strerror(-error));
	if (s->state == SS_OPENING) {
		s->state = SS_DEAD;
		struct timeval tv = { 0, 0 };
		evtimer_add(s->reaper, &tv);
		return;
	}
	session_end(s, 1, "the alias hung up");
}

void
session_accept(int fd)
{
	struct session *s = calloc(1, sizeof(*s));
	if (!s) {
		close(fd);
		return;
	}
	s->id = next_session++;
	s->h_in = s->h_out = s->h_err = s->s_in = s->s_out = -1;
	for (int d = 0; d < 2; d++)
		s->qtail[d] = &s->q[d];
	s->timer = evtimer_new(M.base, on_session_timer, s);
	s->reaper = evtimer_new(M.base, on_reap, s);
	s->conn = box_ipc_event_new(M.base, fd, &box_proto_mcpsession, BOX_MCPSESSION_ROLE_ALIAS,
				    on_conn_msg, on_conn_close, s);
	if (!s->timer || !s->reaper || !s->conn) {
		if (!s->conn)
			close(fd);
		if (s->timer)
			event_free(s->timer);
		if (s->reaper)
			event_free(s->reaper);
		box_ipc_event_free(s->conn);
		free(s);
		return;
	}
	s->next = sessions;
	sessions = s;
	n_sessions++;
	struct timeval tv = { MCPD_OPEN_TIMEOUT_MS / 1000, 0 };
	evtimer_add(s->timer, &tv);
}

static struct session *
session_by_start(uint64_t id)
{
	for (struct session *s = sessions; s; s = s->next)
		if (s->start_id == id)
			return s;
	return NULL;
}

bool
session_started(uint64_t start_id, bool ok, const char *error)
{
	struct session *s = session_by_start(start_id);
	if (!s || s->started)
		return false;
	s->started = true;
	if (!ok) {
		s->exited = true; /* nothing runs: no McpServerExit follows */
		spawn_record(s, 126);
		if (s->state == SS_DEAD) {
			struct timeval tv = { 0, 0 };
			evtimer_add(s->reaper, &tv); /* it was only waiting for this */
		} else {
			char msg[BOX_MCP_MESSAGE_MAX + 1];
			(void)snprintf(msg, sizeof(msg), "%s", error ? error : "box-mcpd: cannot start");
			msg_fit(msg);
			slog("session %u: %s: the server did not start: %s", s->id, sname(s),
				 msg);
			session_end(s, 126, msg);
		}
		return true;
	}
	if (s->state != SS_STARTING)
		return true; /* the session ended meanwhile: McpServerStop is on its way */
	s->ev_h_in = event_new(M.base, s->h_in, EV_READ | EV_PERSIST, on_harness_in, s);
	s->ev_h_out = event_new(M.base, s->h_out, EV_WRITE | EV_PERSIST, on_writable, s);
	s->ev_s_in = event_new(M.base, s->s_in, EV_WRITE | EV_PERSIST, on_writable, s);
	s->ev_s_out = event_new(M.base, s->s_out, EV_READ | EV_PERSIST, on_server_out, s);
	if (!s->ev_h_in || !s->ev_h_out || !s->ev_s_in || !s->ev_s_out ||
	    fd_set_nonblock(s->s_in, true) < 0 || fd_set_nonblock(s->s_out, true) < 0) {
		session_close(s, 1, "cannot watch the session's fds");
		return true;
	}
	s->state = SS_RUNNING;
	slog("session %u: %s: server started", s->id, sname(s));
	reads_update(s);
	return true;
}

bool
session_exited(uint64_t start_id, int status)
{
	struct session *s = session_by_start(start_id);
	if (!s || !s->started || s->exited)
		return false;
	s->exited = true;
	s->status = status;
	spawn_record(s, status);
	if (s->state == SS_DEAD) {
		/* Ended: the session was only waiting for this to be freed. */
		struct timeval tv = { 0, 0 };
		evtimer_add(s->reaper, &tv);
		return true;
	}
	slog("session %u: %s: the server exited with status %d", s->id, sname(s), status);
	struct timeval tv = { MCPD_EXIT_GRACE_MS / 1000, (MCPD_EXIT_GRACE_MS % 1000) * 1000 };
	evtimer_add(s->timer, &tv);
	maybe_end(s);
	return true;
}

void
sessions_stop_all(void)
{
	for (struct session *s = sessions; s; s = s->next)
		if (s->start_id && !s->exited && !s->stop_sent) {
			mcpd_server_stop(s->start_id);
			s->stop_sent = true;
		}
}
