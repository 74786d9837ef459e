/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mcp.c — remote MCP servers (http [mcp.NAME], docs/box.ini.5.md; docs/box-policy.5.md):
 * what box-gateway decides of a Streamable HTTP exchange
 * with a server's url, after http:request permitted the request.
 *
 * A POST to the url carries one JSON-RPC message (its body, at most
 * max_frame, buffered by conn.c). It is classified by box-mcpd's classifier
 * (box-mcpd/jsonrpc.c: one rule for what is a request, a notification and an
 * id-less call wherever box meets MCP) and decided here:
 *   - a notification (no id, a method under `notifications/`), and `ping`,
 *     `server/discover` and `subscriptions/listen` with an id, pass without a
 *     decision (docs/box-policy.5.md);
 *   - every other request, `initialize` included (over HTTP there is no
 *     start gate to stand in for it), and every other method without an id
 *     (an id-less call: a server dispatching on the method runs it), is
 *     `mcp:call {server, method, tool?, prompt?, uri?}`; an id-less call
 *     refused or denied is answered HTTP 403 (no JSON-RPC reply can name it)
 *     and logged;
 *   - `tools/call` after that permit: the server must not be failed
 *     (-32002), the tool must be in the last tools/list seen and unchanged
 *     since it was first listed unless allow_tool_changes (-32003), then the
 *     refinement `NS::Action::"TOOL"` with the arguments typed from its input
 *     schema (below); policyd evaluates it as a refinement;
 *   - a client's reply to a server->client request (seen in an SSE stream of
 *     this server) is `mcp:call {server, method = that request's}`, a reply
 *     to a server's `ping` passes; denied, the server gets a -32001 error in
 *     its place; a reply to no request the gateway saw is refused (-32600);
 *   - malformed: invalid JSON or UTF-8 -32700, a batch, a non-object, jsonrpc
 *     other than "2.0", an id that is null or not a string or an integer, keys
 *     equal but for letter case, a method in another case than MCP's -32600
 *     (HTTP 400, nothing sent upstream); a name or uri that is there but not
 *     a usable string, or an argument spelled like a typed property but for
 *     letter case, -32602.
 * A denial is answered HTTP 200 with the JSON-RPC error body and nothing is
 * sent upstream. Requests to the url ask for uncompressed replies. The
 * response (application/json, or text/event-stream events, read as clients
 * read them: lines end at CR, LF or CRLF, a leading BOM is dropped) is parsed
 * as it is relayed (a copy: the bytes reach the client unchanged, or not at
 * all): every message in it is classified, and one the gateway refuses — a
 * server's call without an id (it cannot be held for a decision, and MCP's
 * server->client requests carry one), text that looks like JSON but does not
 * load as box loads it, a message the classifier refuses, a compressed body,
 * a type naming both JSON and a stream — cuts the response before the byte
 * that completes it reaches the client (logged). Then
 * the reply to a permitted request records mcp:call response (result) or
 * error (error, or no reply at all); a tools/list result replaces the server's
 * tool catalog (a request with params.cursor adds a page to it) and is sent
 * to policyd as PolicyToolSchema before the client can have read it, so a
 * tools/call that follows is decided against it; until then policyd denies
 * NS actions (the pending schema).
 * Typing (docs/box-policy.5.md, docs/box-mcpd.8.md): integer -> Long, number -> String (decimal
 * text), string -> String, boolean -> Bool, array with typed items -> Set<T>,
 * object with properties -> Record; a property outside `required` is
 * optional; a property without one such type or with a name outside
 * [A-Za-z_][A-Za-z0-9_]* is left out and its argument not passed. Argument
 * values go as their JSON type (type confusion is policyd's to refuse).
 * This is written here rather than reusing box-mcpd's toolschema module,
 * which did not exist as linkable code when the gateway needed it.
 *
 * Which requests: the url's host and port (as the CONNECT spelled them) and
 * its path or any path under it, by whole segments. Another spelling of the
 * server (its address, another name) is an ordinary HTTPS request, decided by
 * http:request alone: a policy keeps http:request to the url's host.
 * Caps: max_frame per message (request body, JSON response body, one SSE
 * event); 4096 tools a catalog, 256 fields a tool, type expressions 4096
 * bytes, nesting 32; 1024 server->client requests remembered per server;
 * 16384 first-seen tool definitions per server.
 * Trusts: nothing from the client or the server (every message is parsed by
 * jansson under the caps, classified by box-mcpd/jsonrpc.c); the server
 * table from GatewayInit (validated);
 * policyd's verdicts. Never logs a body or an argument.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <jansson.h>

#include "box-mcpd/jsonrpc.h"
#include "gateway.h"
#include "log.h"
#include "policy_validate.h"

#define MCP_TOOLS_MAX 4096u
#define MCP_FIELDS_MAX 256u
#define MCP_TYPE_MAX 4096u
#define MCP_DEPTH_MAX 32
#define MCP_SRV_REQS_MAX 1024u
#define MCP_FIRST_DEFS_MAX 16384u

/* JSON-RPC error codes (docs/box-policy.5.md, docs/box-mcpd.8.md). */
#define RPC_PARSE -32700
#define RPC_INVALID -32600
#define RPC_PARAMS -32602
#define RPC_POLICY -32001
#define RPC_FAILED -32002
#define RPC_CATALOG -32003

struct gw_mcp_server {
	const char *name, *ns, *host;
	uint16_t port;
	char *path; /* canonical */
	uint64_t max_frame, call_timeout_ms;
	bool allow_changes;
	json_t *catalog;    /* tool name -> input schema, the last tools/list (NULL: none yet) */
	json_t *first_defs; /* tool name -> {name, description, inputSchema} first listed */
	json_t *changed;    /* tool name -> what changed since ("description", ...) */
	json_t *srv_reqs;   /* id key -> method of a server->client request seen */
	bool failed;        /* policyd refused the last schema */
	char *fail_msg;
};

/* How a response body is read: not at all, one JSON value, an event stream, or refused. */
enum rmode { RM_IGNORE, RM_JSON, RM_SSE, RM_REFUSE };

struct gw_mcp_call {
	struct gw_mcp_server *s;
	gw_mcp_fn fn;
	void *arg;
	bool decide; /* a Decide in flight (its owner: this) */
	struct mcp_frame f; /* the POSTed message, classified (box-mcpd/jsonrpc.h) */
	json_t *id;	    /* f.id: NULL for a notification or an id-less call */
	char *idkey;
	const char *method, *tool, *prompt, *uri; /* borrowed from f */
	const char *reply_to;                     /* a client's reply: the server's method */
	bool refining;
	bool permitted; /* forwarded after a permitted mcp:call: its reply is recorded */
	bool recorded;
	bool is_tools_list, has_cursor;
	unsigned answer_status;
	char *answer, *replacement;
	/* the response */
	enum rmode rmode;
	const char *refuse_why; /* RM_REFUSE: why the body is refused */
	bool over;
	size_t seen;   /* body bytes read so far (a leading BOM is skipped) */
	char *buf;     /* JSON: the body; SSE: the line being read */
	size_t len, cap;
	char *ev;      /* SSE: the event's data */
	size_t evlen, evcap;
	bool sse_cr;   /* SSE: the last line ended with CR (an LF next ends nothing) */
	/* JSON: where the top-level value stands (a scan of the bytes as they come) */
	unsigned jdepth;
	bool jstr, jesc, jdone;
};

static struct gw_mcp_server *servers;
static size_t n_servers;

/* ---- set-up ---------------------------------------------------------------------- */

int
gw_mcp_init(const Box__GatewayInit *in, char *why, size_t why_len)
{
	if (in->n_mcp_servers == 0)
		return 0;
	servers = calloc(in->n_mcp_servers, sizeof(*servers));
	if (!servers)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_mcp_servers; i++) {
		const Box__GatewayMcpServer *m = in->mcp_servers[i];
		struct gw_mcp_server *s = &servers[i];
		s->name = m->name;
		s->ns = m->ns;
		s->host = m->host;
		s->port = (uint16_t)m->port;
		s->max_frame = m->max_frame;
		s->call_timeout_ms = m->call_timeout_ms;
		s->allow_changes = m->allow_tool_changes;
		if (http_canonical_path(m->path, &s->path) < 0) {
			(void)snprintf(why, why_len, "[mcp.%s] url path '%s' is not valid", m->name,
				       m->path);
			return -EINVAL;
		}
		/* Matched by whole segments: "/mcp" covers "/mcp", "/mcp/" and "/mcp/x". */
		size_t pl = strlen(s->path);
		while (pl > 1 && s->path[pl - 1] == '/')
			s->path[--pl] = '\0';
		s->first_defs = json_object();
		s->changed = json_object();
		s->srv_reqs = json_object();
		if (!s->first_defs || !s->changed || !s->srv_reqs)
			return -ENOMEM;
		n_servers++;
	}
	G.n_mcp = n_servers;
	return 0;
}

/*
 * The url's path and everything under it (whole segments): a request to
 * "/mcp/" or "/mcp/x" is the server's too, so another spelling of the url
 * cannot slip past mcp:call. The longest match wins.
 */
const struct gw_mcp_server *
gw_mcp_match(const char *host, uint16_t port, const char *path)
{
	const struct gw_mcp_server *best = NULL;
	size_t best_len = 0;
	for (size_t i = 0; i < n_servers; i++) {
		const struct gw_mcp_server *s = &servers[i];
		if (s->port != port || strcmp(s->host, host) != 0)
			continue;
		size_t pl = strlen(s->path);
		bool under = pl == 1 || (strncmp(path, s->path, pl) == 0 &&
					 (path[pl] == '\0' || path[pl] == '/'));
		if (under && (!best || pl > best_len)) {
			best = s;
			best_len = pl;
		}
	}
	return best;
}

uint64_t
gw_mcp_max_frame(const struct gw_mcp_server *s)
{
	return s->max_frame;
}

const char *
gw_mcp_name(const struct gw_mcp_server *s)
{
	return s->name;
}

uint64_t
gw_mcp_call_timeout_ms(const struct gw_mcp_call *c)
{
	return c->s->call_timeout_ms;
}

/* ---- answers ---------------------------------------------------------------------- */

/* {"jsonrpc":"2.0","id":ID,"error":{"code":C,"message":M}} (id null when unknown). */
static char *
error_body(json_t *id, int code, const char *message)
{
	json_t *o = json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id",
			      id ? id : json_null(), "error", "code", code, "message", message);
	if (!o)
		return NULL;
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

static enum gw_mcp_verdict
answer(struct gw_mcp_call *c, unsigned status, int code, const char *message)
{
	if (c->f.kind == MCP_IDLESS_CALL && c->f.method && status == 200) {
		/*
		 * Refused or denied without an id: no JSON-RPC reply can name it, so
		 * the HTTP status says it (a client's notification() sees an error),
		 * the body is the error with id null, and a line is logged.
		 */
		status = 403;
		log_info("[mcp.%s]: %s without an id refused (%d): HTTP 403, nothing sent upstream "
			 "(no JSON-RPC reply can name it)",
			 c->s->name, c->f.method, code);
	}
	free(c->answer);
	c->answer = error_body(c->id, code, message);
	c->answer_status = status;
	if (!c->answer) {
		/* Out of memory: still an answer, never a forward. */
		c->answer_status = 500;
	}
	return GW_MCP_ANSWER;
}

unsigned
gw_mcp_answer(const struct gw_mcp_call *c, const char **body)
{
	*body = c->answer ? c->answer
			  : "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,"
			    "\"message\":\"box-gateway: out of memory\"}}";
	return c->answer_status;
}

void
gw_mcp_timed_out(struct gw_mcp_call *c)
{
	char m[300];
	(void)snprintf(m, sizeof(m), "box-gateway: [mcp.%s] timed out after %llu ms (call_timeout)",
		       c->s->name, (unsigned long long)c->s->call_timeout_ms);
	(void)answer(c, 200, RPC_POLICY, m);
}

const char *
gw_mcp_replacement(const struct gw_mcp_call *c, size_t *len)
{
	if (!c->replacement)
		return NULL;
	*len = strlen(c->replacement);
	return c->replacement;
}

/* ---- typing (docs/box-policy.5.md) ---------------------------------------------------------- */

static bool
field_name_ok(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

struct sbuf {
	char b[MCP_TYPE_MAX + 1];
	size_t n;
	bool over;
};

static void
sb_add(struct sbuf *sb, const char *s)
{
	size_t l = strlen(s);
	if (sb->over || sb->n + l > MCP_TYPE_MAX) {
		sb->over = true;
		return;
	}
	memcpy(sb->b + sb->n, s, l + 1);
	sb->n += l;
}

static const char *
schema_type(json_t *sch)
{
	json_t *t = json_is_object(sch) ? json_object_get(sch, "type") : NULL;
	return json_is_string(t) ? json_string_value(t) : NULL;
}

static bool
is_required(json_t *sch, const char *name)
{
	json_t *req = json_object_get(sch, "required"), *v;
	size_t i;
	if (!json_is_array(req))
		return false;
	json_array_foreach (req, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), name) == 0)
			return true;
	return false;
}

/* The Cedar type of a JSON schema into sb; false when it has no single such type. */
static bool
type_expr(json_t *sch, struct sbuf *sb, int depth)
{
	const char *t = schema_type(sch);
	if (!t || depth > MCP_DEPTH_MAX)
		return false;
	if (strcmp(t, "integer") == 0) {
		sb_add(sb, "Long");
	} else if (strcmp(t, "number") == 0 || strcmp(t, "string") == 0) {
		sb_add(sb, "String");
	} else if (strcmp(t, "boolean") == 0) {
		sb_add(sb, "Bool");
	} else if (strcmp(t, "array") == 0) {
		size_t mark = sb->n;
		sb_add(sb, "Set<");
		if (!type_expr(json_object_get(sch, "items"), sb, depth + 1)) {
			sb->n = mark;
			sb->b[mark] = '\0';
			return false;
		}
		sb_add(sb, ">");
	} else if (strcmp(t, "object") == 0) {
		json_t *props = json_object_get(sch, "properties"), *p;
		const char *k;
		size_t mark = sb->n, fields = 0;
		if (!json_is_object(props))
			return false;
		sb_add(sb, "{");
		json_object_foreach (props, k, p) {
			if (!field_name_ok(k))
				continue;
			size_t before = sb->n;
			if (fields)
				sb_add(sb, ", ");
			sb_add(sb, k);
			sb_add(sb, is_required(sch, k) ? ": " : "?: ");
			if (!type_expr(p, sb, depth + 1)) {
				sb->n = before;
				sb->b[before] = '\0';
				continue;
			}
			fields++;
		}
		sb_add(sb, "}");
		if (!fields) {
			sb->n = mark;
			sb->b[mark] = '\0';
			return false;
		}
	} else {
		return false;
	}
	return !sb->over;
}

/* number -> its decimal text: an integer value "%lld", else the shortest round trip. */
static char *
number_text(json_t *v)
{
	char buf[64];
	if (json_is_integer(v)) {
		(void)snprintf(buf, sizeof(buf), "%" PRId64, (int64_t)json_integer_value(v));
		return strdup(buf);
	}
	double d = json_real_value(v);
	if (d == floor(d) && fabs(d) < 9.2e18) {
		(void)snprintf(buf, sizeof(buf), "%lld", (long long)d);
		return strdup(buf);
	}
	for (int prec = 1; prec <= 17; prec++) {
		(void)snprintf(buf, sizeof(buf), "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	return strdup(buf);
}

static Box__PolicyValue *value_of(json_t *v, json_t *sch, int depth);

/* The fields of a record: the schema's typed properties the object has. */
static int
fields_of(json_t *obj, json_t *sch, Box__PolicyField ***out, size_t *n_out, int depth)
{
	json_t *props = json_is_object(sch) ? json_object_get(sch, "properties") : NULL, *p;
	const char *k;
	*out = NULL;
	*n_out = 0;
	if (!json_is_object(props) || !json_is_object(obj))
		return 0;
	size_t cap = json_object_size(props);
	Box__PolicyField **fs = calloc(cap ? cap : 1, sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	size_t n = 0;
	json_object_foreach (props, k, p) {
		struct sbuf sb = {.n = 0};
		json_t *a = json_object_get(obj, k);
		if (!a || n >= MCP_FIELDS_MAX || !field_name_ok(k) || !type_expr(p, &sb, depth))
			continue;
		Box__PolicyValue *pv = value_of(a, p, depth + 1);
		if (!pv)
			continue; /* null: not passed (policyd decides a missing required one) */
		Box__PolicyField *f = malloc(sizeof(*f));
		char *name = strdup(k);
		if (!f || !name) {
			free(f);
			free(name);
			box__policy_value__free_unpacked(pv, NULL);
			break;
		}
		box__policy_field__init(f);
		f->name = name;
		f->value = pv;
		fs[n++] = f;
	}
	*out = fs;
	*n_out = n;
	return 0;
}

/* The argument v as a policy value (NULL: not passed). */
static Box__PolicyValue *
value_of(json_t *v, json_t *sch, int depth)
{
	if (!v || json_is_null(v) || depth > MCP_DEPTH_MAX + 1)
		return NULL;
	Box__PolicyValue *pv = malloc(sizeof(*pv));
	if (!pv)
		return NULL;
	box__policy_value__init(pv);
	const char *t = schema_type(sch);
	switch (json_typeof(v)) {
	case JSON_STRING:
		pv->kind_case = BOX__POLICY_VALUE__KIND_STR;
		pv->str = strdup(json_string_value(v));
		break;
	case JSON_INTEGER:
		if (t && strcmp(t, "number") == 0) {
			pv->kind_case = BOX__POLICY_VALUE__KIND_STR;
			pv->str = number_text(v);
		} else {
			pv->kind_case = BOX__POLICY_VALUE__KIND_INTEGER;
			pv->integer = json_integer_value(v);
		}
		break;
	case JSON_REAL:
		pv->kind_case = BOX__POLICY_VALUE__KIND_STR;
		pv->str = number_text(v);
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		pv->kind_case = BOX__POLICY_VALUE__KIND_BOOLEAN;
		pv->boolean = json_is_true(v);
		break;
	case JSON_ARRAY: {
		Box__PolicyValueSet *set = malloc(sizeof(*set));
		size_t n = json_array_size(v), i;
		json_t *e;
		if (!set) {
			free(pv);
			return NULL;
		}
		box__policy_value_set__init(set);
		set->elems = calloc(n ? n : 1, sizeof(*set->elems));
		pv->kind_case = BOX__POLICY_VALUE__KIND_SET;
		pv->set = set;
		if (!set->elems)
			break;
		json_t *items = json_is_object(sch) ? json_object_get(sch, "items") : NULL;
		json_array_foreach (v, i, e) {
			Box__PolicyValue *ev = value_of(e, items, depth + 1);
			if (ev)
				set->elems[set->n_elems++] = ev;
		}
		return pv;
	}
	case JSON_OBJECT: {
		Box__PolicyValueRecord *rec = malloc(sizeof(*rec));
		if (!rec) {
			free(pv);
			return NULL;
		}
		box__policy_value_record__init(rec);
		pv->kind_case = BOX__POLICY_VALUE__KIND_RECORD;
		pv->record = rec;
		(void)fields_of(v, sch, &rec->fields, &rec->n_fields, depth + 1);
		return pv;
	}
	case JSON_NULL:
	default:
		free(pv);
		return NULL;
	}
	if (pv->kind_case == BOX__POLICY_VALUE__KIND_STR && !pv->str) {
		free(pv);
		return NULL;
	}
	return pv;
}

/*
 * A member of the arguments OBJ spelled like a typed property of its schema
 * SCH but for letter case, at any depth (records, sets of records): a server
 * that folds keys (Go's encoding/json) reads it as that property, which the
 * typing passes by exact name only. Its name, or NULL.
 */
static const char *
arg_case_variant(json_t *obj, json_t *sch, int depth)
{
	json_t *props = json_is_object(sch) ? json_object_get(sch, "properties") : NULL, *p, *a;
	const char *k, *key, *bad = NULL;
	if (!json_is_object(props) || depth > MCP_DEPTH_MAX)
		return NULL;
	if (json_is_array(obj)) {
		size_t i;
		json_array_foreach (obj, i, a)
			if ((bad = arg_case_variant(a, sch, depth + 1)))
				return bad;
		return NULL;
	}
	if (!json_is_object(obj))
		return NULL;
	/* The properties folded into a hash: one fold per member, whatever their numbers. */
	json_t *folded = json_object();
	json_object_foreach (props, k, p) {
		char *fp = mcp_key_fold(k);
		if (fp)
			(void)json_object_set_new(folded, fp, json_true());
		free(fp);
	}
	json_object_foreach (obj, key, a) {
		if (json_object_get(props, key))
			continue;
		char *fk = mcp_key_fold(key);
		bool same = fk && json_object_get(folded, fk);
		free(fk);
		if (same) {
			bad = key;
			break;
		}
	}
	json_decref(folded);
	if (bad)
		return bad;
	json_object_foreach (props, k, p) {
		json_t *items = json_object_get(p, "items");
		a = json_object_get(obj, k);
		if (a && (bad = arg_case_variant(a, json_is_array(a) ? items : p, depth + 1)))
			return bad;
	}
	return NULL;
}

static void
fields_free(Box__PolicyField **fs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		box__policy_field__free_unpacked(fs[i], NULL);
	free(fs);
}

/* ---- the tool catalog and its schema --------------------------------------------------- */

static void
on_schema_reply(void *arg, const ProtobufCMessage *reply)
{
	struct gw_mcp_server *s = arg;
	const Box__PolicyToolSchemaReply *rep = (const Box__PolicyToolSchemaReply *)reply;
	bool ok = rep->ok;
	const char *error = rep->error;
	s->failed = !ok;
	free(s->fail_msg);
	s->fail_msg = NULL;
	if (!ok) {
		char m[4200];
		(void)snprintf(m, sizeof(m), "box-gateway: the policy rules for [mcp.%s] do not "
			       "type-check against its tools: %s", s->name, error ? error : "?");
		s->fail_msg = strdup(m);
		log_warn("[mcp.%s]: policyd refused its tool schema: %s", s->name,
			 error ? error : "?");
	}
}

static void
tool_free(Box__PolicyTool *t)
{
	if (t)
		box__policy_tool__free_unpacked(t, NULL);
}

/* PolicyToolSchema of the whole catalog, sent to policyd. */
static void
schema_send(struct gw_mcp_server *s)
{
	Box__PolicyToolSchema m = BOX__POLICY_TOOL_SCHEMA__INIT;
	size_t n = json_object_size(s->catalog), k = 0;
	const char *name;
	json_t *sch;
	Box__PolicyTool **tools = calloc(n ? n : 1, sizeof(*tools));
	if (!tools)
		return;
	json_object_foreach (s->catalog, name, sch) {
		Box__PolicyTool *t = malloc(sizeof(*t));
		if (!t)
			break;
		box__policy_tool__init(t);
		tools[k++] = t;
		t->name = strdup(name);
		json_t *props = json_object_get(sch, "properties"), *p;
		const char *pn;
		size_t np = json_is_object(props) ? json_object_size(props) : 0;
		t->fields = calloc(np ? np : 1, sizeof(*t->fields));
		if (!t->name || !t->fields)
			break;
		if (!np)
			continue;
		json_object_foreach (props, pn, p) {
			struct sbuf sb = {.n = 0};
			if (t->n_fields >= MCP_FIELDS_MAX || !field_name_ok(pn) ||
			    !type_expr(p, &sb, 1))
				continue;
			Box__PolicyToolField *f = malloc(sizeof(*f));
			if (!f)
				break;
			box__policy_tool_field__init(f);
			f->name = strdup(pn);
			f->type = strdup(sb.b);
			f->optional = !is_required(sch, pn);
			t->fields[t->n_fields++] = f;
			if (!f->name || !f->type)
				break;
		}
	}
	m.server = (char *)s->name;
	m.ns = (char *)s->ns;
	m.tools = tools;
	m.n_tools = k;
	if (box_validate_policy_tool_schema(&m) < 0)
		log_warn("[mcp.%s]: its tools/list cannot be described to policy (names, caps): "
			 "its tools stay undecidable", s->name);
	else if (gw_tool_schema(&m, on_schema_reply, s) < 0)
		log_warn("[mcp.%s]: the tool schema could not be sent to box-policyd", s->name);
	for (size_t i = 0; i < k; i++)
		tool_free(tools[i]);
	free(tools);
}

/* A tool name that can be spelled NS::Action::"NAME": no NUL, '"', '\\' or control. */
static bool
tool_name_usable(const char *n, size_t len)
{
	if (strlen(n) != len)
		return false;
	for (const char *p = n; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\')
			return false;
	return true;
}

/* What differs between two {name, description, inputSchema} definitions. */
static const char *
def_change(json_t *a, json_t *b)
{
	bool d = !json_equal(json_object_get(a, "description"), json_object_get(b, "description"));
	bool i = !json_equal(json_object_get(a, "inputSchema"), json_object_get(b, "inputSchema"));
	if (d && i)
		return "description and inputSchema";
	if (d)
		return "description";
	if (i)
		return "inputSchema";
	return NULL;
}

/* A tools/list result: the catalog (replaced, or a page added), pins checked, the schema sent. */
static void
tools_listed(struct gw_mcp_server *s, json_t *tools, bool page)
{
	size_t i;
	json_t *t;
	if (!page || !s->catalog) {
		json_decref(s->catalog);
		s->catalog = json_object();
		if (!s->catalog)
			return;
	}
	json_array_foreach (tools, i, t) {
		json_t *name = json_object_get(t, "name");
		if (!json_is_string(name) || json_string_length(name) < 1 ||
		    json_string_length(name) > 256 || json_object_size(s->catalog) >= MCP_TOOLS_MAX)
			continue;
		const char *n = json_string_value(name);
		if (!tool_name_usable(n, json_string_length(name)))
			continue; /* cannot be an action: not callable through the gateway */
		json_t *sch = json_object_get(t, "inputSchema");
		json_object_set(s->catalog, n, json_is_object(sch) ? sch : json_object());
		json_t *def = json_pack("{s:O,s:O,s:O}", "name", name, "description",
					json_object_get(t, "description")
					    ? json_object_get(t, "description")
					    : json_null(),
					"inputSchema", sch ? sch : json_null());
		if (!def)
			continue;
		json_t *first = json_object_get(s->first_defs, n);
		if (!first) {
			/* Capped: a server inventing names forever stops being compared. */
			if (json_object_size(s->first_defs) < MCP_FIRST_DEFS_MAX)
				json_object_set_new(s->first_defs, n, def);
			else
				json_decref(def);
			continue;
		}
		const char *what = def_change(first, def);
		json_decref(def);
		if (what && !s->allow_changes) {
			if (!json_object_get(s->changed, n))
				log_warn("[mcp.%s]: tool '%s' changed its %s since it was first "
					 "listed: refused (allow_tool_changes = false)",
					 s->name, n, what);
			json_object_set_new(s->changed, n, json_string(what));
		} else {
			json_object_del(s->changed, n);
		}
	}
	schema_send(s);
}

/* ---- deciding a request ------------------------------------------------------------------- */

static void
call_fields(const struct gw_mcp_call *c, struct policy_fields *fs)
{
	policy_fields_init(fs);
	policy_fields_str(fs, "server", c->s->name);
	policy_fields_str(fs, "method", c->reply_to ? c->reply_to : c->method);
	if (c->tool)
		policy_fields_str(fs, "tool", c->tool);
	if (c->prompt)
		policy_fields_str(fs, "prompt", c->prompt);
	if (c->uri)
		policy_fields_str(fs, "uri", c->uri);
}

static void
finish(struct gw_mcp_call *c, enum gw_mcp_verdict v)
{
	c->fn(c->arg, v); /* c may be gone after this */
}

static void
on_refined(void *arg, const ProtobufCMessage *verdict)
{
	const char *message;
	bool permit = gw_verdict(verdict, &message);
	struct gw_mcp_call *c = arg;
	c->decide = false;
	if (!permit) {
		finish(c, answer(c, 200, RPC_POLICY, message));
		return;
	}
	c->permitted = true;
	finish(c, GW_MCP_FORWARD);
}

/* Cedar's string literal for a tool name: " and \ escaped. */
static char *
tool_action(const char *ns, const char *tool)
{
	size_t n = strlen(tool);
	char *esc = malloc(2 * n + 1), *o = esc;
	if (!esc)
		return NULL;
	for (const char *p = tool; *p; p++) {
		if (*p == '"' || *p == '\\')
			*o++ = '\\';
		*o++ = *p;
	}
	*o = '\0';
	char *a = NULL;
	if (asprintf(&a, "%s::Action::\"%s\"", ns, esc) < 0)
		a = NULL;
	free(esc);
	return a;
}

/* tools/call after mcp:call permitted: the catalog, then the refinement. */
static enum gw_mcp_verdict
refine(struct gw_mcp_call *c)
{
	struct gw_mcp_server *s = c->s;
	char m[1024];
	if (!c->tool)
		return answer(c, 200, RPC_PARAMS, "box-gateway: tools/call needs params.name");
	if (s->failed)
		return answer(c, 200, RPC_FAILED,
			      s->fail_msg ? s->fail_msg : "box-gateway: the server's tools failed");
	json_t *sch = NULL;
	if (s->catalog) {
		sch = json_object_get(s->catalog, c->tool);
		if (!sch) {
			(void)snprintf(m, sizeof(m),
				       "box-gateway: tool '%.256s' of [mcp.%s] is not in the "
				       "server's last tools/list",
				       c->tool, s->name);
			return answer(c, 200, RPC_CATALOG, m);
		}
		json_t *what = json_object_get(s->changed, c->tool);
		if (what) {
			(void)snprintf(m, sizeof(m),
				       "box-gateway: tool '%.256s' of [mcp.%s] changed its %s since "
				       "it was first listed (allow_tool_changes = false)",
				       c->tool, s->name, json_string_value(what));
			return answer(c, 200, RPC_CATALOG, m);
		}
	}
	/* No tools/list yet: no arguments are typed; policyd denies (pending schema). */
	json_t *params = c->f.params;
	json_t *args = json_is_object(params) ? json_object_get(params, "arguments") : NULL;
	Box__PolicyField **fs = NULL;
	size_t n = 0;
	const char *variant = sch ? arg_case_variant(args, sch, 1) : NULL;
	if (variant) {
		(void)snprintf(m, sizeof(m),
			       "box-gateway: argument '%.256s' of tool '%.256s' is spelled like a "
			       "property of its schema but for letter case",
			       variant, c->tool);
		return answer(c, 200, RPC_PARAMS, m);
	}
	if (sch && fields_of(args, sch, &fs, &n, 1) < 0)
		return answer(c, 500, RPC_POLICY, "box-gateway: out of memory");
	char *action = tool_action(s->ns, c->tool);
	if (!action) {
		fields_free(fs, n);
		return answer(c, 500, RPC_POLICY, "box-gateway: out of memory");
	}
	/* Checked as policyd will check it: a request it refuses would end the channel. */
	Box__DecideRequest req = BOX__DECIDE_REQUEST__INIT;
	req.action = action;
	req.input = fs;
	req.n_input = n;
	if (box_validate_decide_request(&req) < 0) {
		free(action);
		fields_free(fs, n);
		(void)snprintf(m, sizeof(m),
			       "box-gateway: the arguments of tool '%.256s' are beyond what policy "
			       "can decide (nesting 8, 256 fields, 4096 set elements, 256 KiB a "
			       "string)",
			       c->tool);
		return answer(c, 200, RPC_PARAMS, m);
	}
	c->refining = true;
	c->decide = gw_decide_fields(action, fs, n, on_refined, c) == 0;
	free(action);
	fields_free(fs, n);
	if (!c->decide)
		return answer(c, 200, RPC_POLICY,
			      "box-gateway: the decision could not be asked (box-policyd unreachable)");
	return GW_MCP_PENDING;
}

static void
on_call_decided(void *arg, const ProtobufCMessage *verdict)
{
	const char *message;
	bool permit = gw_verdict(verdict, &message);
	struct gw_mcp_call *c = arg;
	c->decide = false;
	if (!permit) {
		if (c->reply_to) {
			/* The client's reply is refused: the server gets the error instead. */
			c->replacement = error_body(c->id, RPC_POLICY, message);
			if (!c->replacement) {
				finish(c, answer(c, 500, RPC_POLICY, "box-gateway: out of memory"));
				return;
			}
			finish(c, GW_MCP_FORWARD);
			return;
		}
		finish(c, answer(c, 200, RPC_POLICY, message));
		return;
	}
	if (c->method && strcmp(c->method, "tools/call") == 0) {
		enum gw_mcp_verdict v = refine(c);
		if (v != GW_MCP_PENDING)
			finish(c, v);
		return;
	}
	c->permitted = !c->reply_to;
	finish(c, GW_MCP_FORWARD);
}

struct gw_mcp_call *
gw_mcp_call_new(const struct gw_mcp_server *s, gw_mcp_fn fn, void *arg)
{
	struct gw_mcp_call *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->s = (struct gw_mcp_server *)s;
	c->fn = fn;
	c->arg = arg;
	return c;
}

/* The POSTed message's verdict: decided (PENDING), forwarded, or answered. */
enum gw_mcp_verdict
gw_mcp_decide(struct gw_mcp_call *c, const char *body, size_t len)
{
	char m[400];
	int code;
	const char *why;
	/* One classifier for box: box-mcpd/jsonrpc.c (ids, keys, methods, names). */
	int r = mcp_frame_parse(body, len, &c->f, &code, &why);
	c->id = c->f.id;
	if (r == -ENOMEM)
		return answer(c, 500, RPC_INVALID, "box-gateway: out of memory");
	if (r < 0) {
		/* Malformed: 400; a name or uri it cannot decide on: 200 (403 without an id). */
		(void)snprintf(m, sizeof(m), "box-gateway: %s", why);
		return answer(c, code == RPC_PARAMS ? 200 : 400, code, m);
	}
	if (c->id) {
		c->idkey = json_dumps(c->id, JSON_ENCODE_ANY | JSON_COMPACT);
		if (!c->idkey)
			return answer(c, 500, RPC_INVALID, "box-gateway: out of memory");
	}
	switch (c->f.kind) {
	case MCP_NOTIFICATION:
		return GW_MCP_FORWARD;
	case MCP_REQUEST:
	case MCP_IDLESS_CALL:
		c->method = c->f.method;
		/* docs/box-policy.5.md: these pass undecided with an id; over HTTP initialize does not. */
		if (c->f.kind == MCP_REQUEST && (strcmp(c->method, "ping") == 0 ||
						 strcmp(c->method, "server/discover") == 0 ||
						 strcmp(c->method, "subscriptions/listen") == 0))
			return GW_MCP_FORWARD;
		c->tool = mcp_frame_tool(&c->f);
		c->prompt = mcp_frame_prompt(&c->f);
		c->uri = mcp_frame_uri(&c->f);
		c->is_tools_list = strcmp(c->method, "tools/list") == 0;
		c->has_cursor = json_is_object(c->f.params) &&
				json_is_string(json_object_get(c->f.params, "cursor"));
		break;
	case MCP_RESPONSE:
	default: {
		/* A reply (result or error) to a request the server made. */
		json_t *sm = json_object_get(c->s->srv_reqs, c->idkey);
		if (!json_is_string(sm))
			return answer(c, 400, RPC_INVALID,
				      "box-gateway: a reply to no request the server made");
		c->reply_to = strdup(json_string_value(sm));
		json_object_del(c->s->srv_reqs, c->idkey);
		if (!c->reply_to)
			return answer(c, 500, RPC_INVALID, "box-gateway: out of memory");
		if (strcmp(c->reply_to, "ping") == 0)
			return GW_MCP_FORWARD;
		break;
	}
	}
	struct policy_fields fs;
	call_fields(c, &fs);
	Box__DecideRequest req = BOX__DECIDE_REQUEST__INIT;
	req.action = (char *)"mcp:call";
	req.input = fs.p;
	req.n_input = fs.n;
	if (box_validate_decide_request(&req) < 0)
		return answer(c, 200, RPC_PARAMS,
			      "box-gateway: the request's name or uri is beyond what policy can "
			      "decide (256 KiB)");
	c->decide = gw_decide("mcp:call", &fs, on_call_decided, c) == 0;
	if (!c->decide)
		return answer(c, 200, RPC_POLICY,
			      "box-gateway: the decision could not be asked (box-policyd unreachable)");
	return GW_MCP_PENDING;
}

/* ---- the response -------------------------------------------------------------------------- */

static void
record(struct gw_mcp_call *c, bool ok)
{
	if (!c->permitted || c->recorded)
		return;
	c->recorded = true;
	struct policy_fields fs;
	call_fields(c, &fs);
	gw_record(ok, "mcp:call", &fs, NULL);
}

/*
 * One JSON-RPC message from the server (element M of what it sent), by the
 * classifier box-mcpd uses. Returns NULL, or why the response must be cut:
 * a message the gateway cannot read as the client would, or a server's call
 * without an id — a server->client request is decided on the client's reply,
 * and an id-less one has none, while the stream cannot wait for a decision:
 * it is refused (MCP's server->client requests carry an id).
 */
static const char *
server_msg(struct gw_mcp_call *c, json_t *m)
{
	struct mcp_frame f;
	int code;
	const char *why;
	int r = mcp_frame_classify(m, &f, &code, &why);
	const char *cut = NULL;
	if (r == -ENOMEM) {
		cut = "out of memory";
		goto out;
	}
	if (r < 0) {
		cut = why;
		goto out;
	}
	if (f.kind == MCP_IDLESS_CALL) {
		cut = "a request without an id (only notifications/ methods go without one)";
		goto out;
	}
	if (f.kind == MCP_NOTIFICATION)
		goto out;
	char *k = json_dumps(f.id, JSON_ENCODE_ANY | JSON_COMPACT);
	if (!k) {
		cut = "out of memory";
		goto out;
	}
	if (f.kind == MCP_REQUEST) {
		/* A server->client request: its reply will be decided on its method. */
		if (json_object_size(c->s->srv_reqs) >= MCP_SRV_REQS_MAX)
			json_object_clear(c->s->srv_reqs);
		json_object_set_new(c->s->srv_reqs, k, json_string(f.method));
		free(k);
		goto out;
	}
	bool mine = c->idkey && strcmp(k, c->idkey) == 0;
	free(k);
	if (!mine)
		goto out;
	record(c, !f.is_error);
	if (c->is_tools_list && json_is_object(f.result)) {
		json_t *tools = json_object_get(f.result, "tools");
		if (json_is_array(tools))
			tools_listed(c->s, tools, c->has_cursor);
	}
out:
	mcp_frame_clear(&f);
	return cut;
}

/* The first non-whitespace byte of TEXT, or 0. */
static char
first_byte(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (text[i] != ' ' && text[i] != '\t' && text[i] != '\n' && text[i] != '\r')
			return text[i];
	return 0;
}

/*
 * What the server sent in one event or JSON body: a message or a batch.
 * Returns 0, or -EPROTO (logged) when the response must be cut. Text that is
 * not JSON at all (an event a client cannot read as a message either) is
 * passed over; text that looks like JSON but does not load as box loads it
 * (duplicate or case-variant keys, numbers out of range, \u0000, a lone
 * surrogate: what some client's parser might read anyway) is refused.
 */
static int
parse_messages(struct gw_mcp_call *c, const char *text, size_t len)
{
	json_t *j;
	int code;
	const char *why, *cut = NULL;
	char b = first_byte(text, len);
	if (mcp_json_load(text, len, &j, &code, &why) < 0) {
		if (b != '{' && b != '[')
			return 0;
		cut = why;
	} else if (json_is_array(j)) {
		size_t i;
		json_t *e;
		json_array_foreach (j, i, e)
			if ((cut = server_msg(c, e)))
				break;
		if (!cut && json_array_size(j) == 0)
			cut = "an empty batch";
		json_decref(j);
	} else {
		cut = server_msg(c, j);
		json_decref(j);
	}
	if (!cut)
		return 0;
	log_info("[mcp.%s]: the server sent a message the gateway refuses: %s: the response is "
		 "cut before the client can read it",
		 c->s->name, cut);
	return -EPROTO;
}

/* Whether the header value V mentions WORD, in any case. */
static bool
mentions(const char *v, const char *word)
{
	size_t n = strlen(word);
	for (; *v; v++)
		if (strncasecmp(v, word, n) == 0)
			return true;
	return false;
}

void
gw_mcp_response_head(struct gw_mcp_call *c, unsigned status, const char *content_type,
		     const char *content_encoding)
{
	c->rmode = RM_IGNORE;
	c->len = c->evlen = c->seen = 0;
	c->jdepth = 0;
	c->jstr = c->jesc = c->jdone = c->sse_cr = false;
	if (status < 200 || status > 299)
		return; /* an error status: clients read no message out of it */
	/*
	 * Read as the clients read it: the TypeScript SDK takes a type that
	 * contains text/event-stream as a stream, one that contains
	 * application/json as JSON, and its GET stream whatever the type;
	 * Python's takes the type's start. So: a stream when it names
	 * event-stream, JSON when it names json, a stream otherwise; both named
	 * is refused, as is a compressed body (it cannot be read here).
	 */
	const char *ct = content_type ? content_type : "";
	bool sse = mentions(ct, "event-stream"), json = mentions(ct, "json");
	if (content_encoding && content_encoding[0] && strcasecmp(content_encoding, "identity")) {
		c->rmode = RM_REFUSE;
		c->refuse_why = "a compressed body (Content-Encoding), which cannot be read here";
	} else if (sse && json) {
		c->rmode = RM_REFUSE;
		c->refuse_why = "a Content-Type naming both JSON and an event stream";
	} else {
		c->rmode = json ? RM_JSON : RM_SSE;
	}
}

static int
grow(char **b, size_t *cap, size_t need, uint64_t max)
{
	if (need > max)
		return -E2BIG;
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap : 1024;
	while (nc < need)
		nc *= 2;
	if (nc > max)
		nc = (size_t)max;
	char *nb = realloc(*b, nc + 1);
	if (!nb)
		return -ENOMEM;
	*b = nb;
	*cap = nc;
	return 0;
}

/*
 * One SSE line (no line end), as the event stream format reads it: a line
 * starting with ':' is a comment; "data" with or without ':' adds its value
 * (one space after the colon dropped) to the event's data; other fields do
 * not count here; an empty line dispatches the event, whatever its type
 * (stricter than clients, which read only "message" events).
 */
static int
sse_line(struct gw_mcp_call *c, const char *l, size_t n)
{
	if (n == 0) {
		int r = 0;
		if (c->evlen)
			r = parse_messages(c, c->ev, c->evlen);
		c->evlen = 0;
		return r;
	}
	const char *colon = memchr(l, ':', n);
	size_t name = colon ? (size_t)(colon - l) : n;
	if (name != 4 || memcmp(l, "data", 4) != 0)
		return 0; /* a comment, event:, id:, retry:, anything else */
	l += colon ? name + 1 : n;
	n -= colon ? name + 1 : n;
	if (n && *l == ' ') {
		l++;
		n--;
	}
	size_t need = c->evlen + (c->evlen ? 1 : 0) + n;
	int r = grow(&c->ev, &c->evcap, need, c->s->max_frame);
	if (r < 0)
		return r;
	if (c->evlen)
		c->ev[c->evlen++] = '\n';
	memcpy(c->ev + c->evlen, l, n);
	c->evlen += n;
	return 0;
}

/* Stream bytes: lines end at CRLF, LF or CR, as the event stream format says. */
static int
sse_feed(struct gw_mcp_call *c, const char *p, size_t n)
{
	while (n) {
		if (c->sse_cr && *p == '\n') {
			/* the LF of a CRLF split across reads */
			p++;
			n--;
			c->sse_cr = false;
			continue;
		}
		c->sse_cr = false;
		size_t take = 0;
		while (take < n && p[take] != '\n' && p[take] != '\r')
			take++;
		int r = grow(&c->buf, &c->cap, c->len + take, c->s->max_frame);
		if (r < 0)
			return r;
		memcpy(c->buf + c->len, p, take);
		c->len += take;
		if (take == n)
			return 0;
		c->sse_cr = p[take] == '\r';
		r = sse_line(c, c->buf, c->len);
		c->len = 0;
		if (r < 0)
			return r;
		p += take + 1;
		n -= take + 1;
	}
	return 0;
}

/*
 * JSON body bytes: kept (up to max_frame) and scanned for the end of the
 * top-level value, which is parsed the moment its last byte arrives — before
 * that byte reaches the client, so a refused message is cut while the client
 * still holds an incomplete body. Anything but whitespace after it is refused.
 */
static int
json_feed(struct gw_mcp_call *c, const char *p, size_t n)
{
	int r = grow(&c->buf, &c->cap, c->len + n, c->s->max_frame);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		char ch = p[i];
		c->buf[c->len++] = ch;
		if (c->jdone) {
			if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r') {
				log_info("[mcp.%s]: the server sent data after its JSON reply: the "
					 "response is cut",
					 c->s->name);
				return -EPROTO;
			}
			continue;
		}
		if (c->jstr) {
			if (c->jesc)
				c->jesc = false;
			else if (ch == '\\')
				c->jesc = true;
			else if (ch == '"')
				c->jstr = false;
			continue;
		}
		if (ch == '"') {
			c->jstr = true;
		} else if (ch == '{' || ch == '[') {
			c->jdepth++;
		} else if ((ch == '}' || ch == ']') && c->jdepth > 0 && --c->jdepth == 0) {
			c->jdone = true;
			r = parse_messages(c, c->buf, c->len);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

int
gw_mcp_response_data(struct gw_mcp_call *c, struct evbuffer *from, size_t n)
{
	if (c->rmode == RM_IGNORE || c->over || !n)
		return 0;
	if (c->rmode == RM_REFUSE) {
		c->over = true;
		log_info("[mcp.%s]: the server's response is %s: it is cut before the client can "
			 "read it",
			 c->s->name, c->refuse_why);
		return -EPROTO;
	}
	struct evbuffer_ptr pos;
	if (evbuffer_ptr_set(from, &pos, 0, EVBUFFER_PTR_SET) < 0)
		return 0;
	while (n) {
		struct evbuffer_iovec v;
		if (evbuffer_peek(from, (ev_ssize_t)n, &pos, &v, 1) < 1)
			break;
		size_t k = v.iov_len < n ? v.iov_len : n;
		const char *p = v.iov_base;
		size_t skip = 0;
		/* A UTF-8 byte order mark opening a body or a stream: clients drop it. */
		static const char bom[] = "\xef\xbb\xbf";
		while (c->seen < 3 && skip < k) {
			if (p[skip] != bom[c->seen]) {
				c->seen = 3;
				break;
			}
			skip++;
			c->seen++;
		}
		int r = c->rmode == RM_JSON ? json_feed(c, p + skip, k - skip)
					    : sse_feed(c, p + skip, k - skip);
		if (r < 0) {
			c->over = true;
			if (r == -E2BIG)
				log_info("[mcp.%s]: a reply over max_frame (%llu bytes): the "
					 "connection is closed",
					 c->s->name, (unsigned long long)c->s->max_frame);
			return r;
		}
		n -= k;
		if (evbuffer_ptr_set(from, &pos, k, EVBUFFER_PTR_ADD) < 0)
			break;
	}
	return 0;
}

void
gw_mcp_response_end(struct gw_mcp_call *c)
{
	/* Delivered whole: read for the record; too late to refuse anything. */
	if (c->rmode == RM_JSON && !c->over && !c->jdone && c->len)
		(void)parse_messages(c, c->buf, c->len);
	else if (c->rmode == RM_SSE && !c->over) {
		if (c->len)
			(void)sse_line(c, c->buf, c->len);
		(void)sse_line(c, "", 0);
	}
	c->rmode = RM_IGNORE;
	c->len = c->evlen = 0;
}

void
gw_mcp_call_free(struct gw_mcp_call *c)
{
	if (!c)
		return;
	gw_decide_cancel(c);
	record(c, false); /* forwarded, and no reply came (an id-less call never gets one) */
	mcp_frame_clear(&c->f);
	free(c->idkey);
	free((char *)c->reply_to);
	free(c->answer);
	free(c->replacement);
	free(c->buf);
	free(c->ev);
	free(c);
}
