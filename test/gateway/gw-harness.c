/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gw-harness.c — box-gateway alone: this program plays boxd (fd 3) and
 * box-policyd (fd 4) so the gateway can be tested and audited by itself.
 *
 *   gw-harness --gateway PATH --policy FILE.dw --init INIT.json --listen SANDBOX
 *              [--listen SANDBOX2 ...] --ready-file F [--decisions OUT.jsonl]
 *              [--decide-delay HOST=MS ...] [--nofile N] [--local]
 *              [--local-policy FILE] [--policyd DIR]
 *
 * It spawns the gateway with the two socketpairs at fds 3/4 (nothing else
 * open; RLIMIT_NOFILE 2*max_connections+256 as boxd sets it; an environment
 * of BOX_TEST_* variables and ASAN_OPTIONS with detect_leaks=0), sends
 * GatewayInit built from INIT.json (keys = gateway.proto field names;
 * "upstream_ca_pem_file" and "hosts_file_path" name files; a credential's
 * "secret" is a string or {"secret_env": "NAME"}; "placement"
 * header|basic_auth|query_param, "inject" placeholder|always; "mcp_servers"
 * entries {name, ns (default: name normalized), host, port, path, max_frame,
 * call_timeout_ms, allow_tool_changes}, whose namespaces the engine declares
 * pending), waits for
 * GatewayReady, then listens on 127.0.0.1:0 once per --listen and passes
 * each as GatewayListener (ids 1, 2, ...). The ready file gets, atomically:
 *   pid PID / ca PATH / listener SANDBOX PORT (one per --listen)
 * A refused start (ok=false) prints "gw-harness: not ready: MESSAGE" on
 * stderr and returns the gateway's status.
 * Decides are answered by evaluating the policy with the engine box-policyd
 * uses (box-policyd/engine.c over libboxpolicy). A PolicyLocalRequest is answered
 * with the policy and, with --local, the gateway's actions that need no history and
 * a generation page (it never moves: no reloads here), so the gateway decides those
 * in process and ships them; without it, with none (every decision is asked). A
 * PolicyShip's decisions are decided again and must agree (else a "bad_ship" line and
 * the channel is shut down, as box-policyd's protocol error); their decide lines say
 * "shipped": true. --local-policy FILE: --local, but PolicyLocal carries FILE's text
 * (a gateway deciding with another policy than this one's: its ships disagree).
 * --policyd DIR: the real box-policyd (test/policyd/harness.h starts it, DIR its state
 * directory: decisions.jsonl, policyd.err) is the gateway's box-policyd instead, with
 * the same policy and namespaces; the ready file then also says "policyd PID", and the
 * harness answers nothing itself (--decisions, --local, --decide-delay and the "owed"
 * and "drop-policyd" commands have no effect).
 * --decide-delay holds the
 * reply to a decision whose input host is HOST for MS ms (replies may then
 * come out of order: the gateway matches request ids). Each Decide and
 * Record is one JSON line of --decisions:
 *   {"kind":"decide","id":N,"action":A,"input":{...},"verdict":"permit"|"deny","message":M}
 *   {"kind":"record","event":"response"|"error","action":A,"input":{...},"output":{...}}
 * (decide lines also carry "cause"; set values are JSON arrays, records objects), and each
 * PolicyToolSchema (answered with the engine's engine_register_tools verdict):
 *   {"kind":"schema","server":S,"ns":NS,"tools":{TOOL:{FIELD:"TYPE" or "TYPE?"}},"ok":B,
 *    "error":E}
 * stdin: "close SANDBOX" sends GatewayListenerClosed for that sandbox's
 * listener; "owed" logs {"kind":"owed","count":N}, the permits no Record named yet (each
 * one box-policyd would keep until its bound); "drop-policyd" shuts the policyd channel down (policyd lost); EOF closes fd 3 (boxd
 * leaving) and waits for the gateway, whose status (exit code, or 128+signal) is the harness's.
 * Trusts: nothing the gateway sends (the protocol tables check it); it is
 * test code.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <jansson.h>

#include "engine.h"
#include "harness.h"
#include "fdutil.h"
#include "policy_permits.h"
#include "ipc.h"
#include "playboxd.h"
#include "proto_gateway.h"
#include "proto_policy.h"

#define MAX_LISTEN 16
#define MAX_DELAY 16

static const char *opt_gateway, *opt_policy, *opt_init, *opt_ready, *opt_decisions;
static const char *listen_sb[MAX_LISTEN];
static int listen_fd[MAX_LISTEN];
static int listen_port[MAX_LISTEN];
static bool listen_open[MAX_LISTEN];
static int n_listen;
static struct {
	char host[256];
	int ms;
} delays[MAX_DELAY];
static int n_delays;
static unsigned long opt_nofile;
static bool opt_local;
static const char *opt_local_policy;
static const char *opt_policyd;
static FILE *declog;
/* PolicyLocal's: the policy text and the MCP namespaces the engine was made with */
static char *policy_text;
static size_t policy_len;
static char **mcp_nss;
static size_t n_mcp_nss;

/*
 * A sanitizer build: the harness keeps the policy engine, the init tree and
 * the JSON until it exits, on purpose (test code, one run); LeakSanitizer
 * would turn that into the harness's status, which must be the gateway's.
 */
const char *__asan_default_options(void);
const char *
__asan_default_options(void)
{
	return "detect_leaks=0";
}

static void
die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "gw-harness: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(99);
}

static int64_t
mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static char *
read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		die("cannot open %s: %s", path, strerror(errno));
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (n + 4096 > cap) {
			cap *= 2;
			buf = realloc(buf, cap);
		}
		size_t k = fread(buf + n, 1, cap - n - 1, f);
		n += k;
		if (k == 0)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* ---- GatewayInit from JSON -------------------------------------------------------- */

static const char *
jstr(json_t *o, const char *k, const char *dflt)
{
	json_t *v = json_object_get(o, k);
	if (!v)
		return dflt;
	if (!json_is_string(v))
		die("init: '%s' must be a string", k);
	return json_string_value(v);
}

static uint64_t
jnum(json_t *o, const char *k, uint64_t dflt)
{
	json_t *v = json_object_get(o, k);
	if (!v)
		return dflt;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		die("init: '%s' must be a non-negative integer", k);
	return (uint64_t)json_integer_value(v);
}

static bool
jbool(json_t *o, const char *k, bool dflt)
{
	json_t *v = json_object_get(o, k);
	if (!v)
		return dflt;
	if (!json_is_boolean(v))
		die("init: '%s' must be a boolean", k);
	return json_is_true(v);
}

static Box__GatewayDestination *
dest_from(json_t *o)
{
	Box__GatewayDestination *d = calloc(1, sizeof(*d));
	box__gateway_destination__init(d);
	d->host = (char *)jstr(o, "host", NULL);
	if (!d->host)
		die("init: a destination needs 'host'");
	d->wildcard = jbool(o, "wildcard", false);
	d->port = (uint32_t)jnum(o, "port", 443);
	d->path_prefix = (char *)jstr(o, "path_prefix", NULL);
	d->spelling = (char *)jstr(o, "spelling", d->host);
	return d;
}

static Box__GatewayDestination **
dests_from(json_t *a, size_t *n)
{
	*n = json_array_size(a);
	Box__GatewayDestination **v = calloc(*n + 1, sizeof(*v));
	for (size_t i = 0; i < *n; i++)
		v[i] = dest_from(json_array_get(a, i));
	return v;
}

static void
build_init(Box__GatewayInit *m, json_t *j)
{
	size_t len;
	box__gateway_init__init(m);
	m->box_name = (char *)jstr(j, "box_name", "gwtest");
	m->box_id = (char *)jstr(j, "box_id", "0123456789ab");
	m->port = (uint32_t)jnum(j, "port", 3128);
	m->connect_timeout_ms = jnum(j, "connect_timeout_ms", 10000);
	m->idle_timeout_ms = jnum(j, "idle_timeout_ms", 300000);
	m->max_connections = jnum(j, "max_connections", 1024);
	m->max_request_body = jnum(j, "max_request_body", 64u << 20);
	const char *ca = jstr(j, "upstream_ca_pem_file", NULL);
	if (ca) {
		m->has_upstream_ca_pem = true;
		m->upstream_ca_pem.data = (uint8_t *)read_file(ca, &len);
		m->upstream_ca_pem.len = len;
	}
	m->resolver = (char *)jstr(j, "resolver", NULL);
	const char *hosts = jstr(j, "hosts_file_path", NULL);
	if (hosts) {
		m->has_hosts_file = true;
		m->hosts_file.data = (uint8_t *)read_file(hosts, &len);
		m->hosts_file.len = len;
	}
	m->allow_host_loopback = jbool(j, "allow_host_loopback", false);
	json_t *pt = json_object_get(j, "passthrough");
	if (pt)
		m->passthrough = dests_from(pt, &m->n_passthrough);
	json_t *cr = json_object_get(j, "credentials");
	m->n_credentials = json_array_size(cr);
	m->credentials = calloc(m->n_credentials + 1, sizeof(*m->credentials));
	for (size_t i = 0; i < m->n_credentials; i++) {
		json_t *c = json_array_get(cr, i);
		Box__GatewayCredential *g = calloc(1, sizeof(*g));
		box__gateway_credential__init(g);
		g->name = (char *)jstr(c, "name", "egress.test");
		g->destinations =
		    dests_from(json_object_get(c, "destinations"), &g->n_destinations);
		json_t *s = json_object_get(c, "secret");
		const char *secret = NULL;
		if (json_is_string(s)) {
			secret = json_string_value(s);
		} else if (json_is_object(s)) {
			const char *env = jstr(s, "secret_env", NULL);
			secret = env ? getenv(env) : NULL;
			if (!secret || !*secret)
				die("init: secret_env %s is unset or empty", env ? env : "?");
		} else {
			die("init: a credential needs 'secret'");
		}
		g->secret.data = (uint8_t *)secret;
		g->secret.len = strlen(secret);
		g->placeholder = (char *)jstr(c, "placeholder", NULL);
		if (!g->placeholder)
			die("init: a credential needs 'placeholder'");
		const char *pl = jstr(c, "placement", "header");
		g->placement = strcmp(pl, "basic_auth") == 0
				   ? BOX__GATEWAY_PLACEMENT__GATEWAY_PLACEMENT_BASIC_AUTH
			       : strcmp(pl, "query_param") == 0
				   ? BOX__GATEWAY_PLACEMENT__GATEWAY_PLACEMENT_QUERY_PARAM
				   : BOX__GATEWAY_PLACEMENT__GATEWAY_PLACEMENT_HEADER;
		g->header = (char *)jstr(c, "header", g->placement == 1 ? "Authorization" : NULL);
		g->prefix = (char *)jstr(c, "prefix", g->placement == 1 ? "Bearer " : NULL);
		g->param = (char *)jstr(c, "param", NULL);
		g->inject = strcmp(jstr(c, "inject", "placeholder"), "always") == 0
				? BOX__GATEWAY_INJECT__GATEWAY_INJECT_ALWAYS
				: BOX__GATEWAY_INJECT__GATEWAY_INJECT_PLACEHOLDER;
		json_t *sb = json_object_get(c, "sandboxes");
		g->n_sandboxes = json_array_size(sb);
		g->sandboxes = calloc(g->n_sandboxes + 1, sizeof(char *));
		for (size_t k = 0; k < g->n_sandboxes; k++)
			g->sandboxes[k] = (char *)json_string_value(json_array_get(sb, k));
		m->credentials[i] = g;
	}
	json_t *ms = json_object_get(j, "mcp_servers");
	m->n_mcp_servers = json_array_size(ms);
	m->mcp_servers = calloc(m->n_mcp_servers + 1, sizeof(*m->mcp_servers));
	for (size_t i = 0; i < m->n_mcp_servers; i++) {
		json_t *o = json_array_get(ms, i);
		Box__GatewayMcpServer *g = calloc(1, sizeof(*g));
		box__gateway_mcp_server__init(g);
		g->name = (char *)jstr(o, "name", "test");
		char *ns = strdup(jstr(o, "ns", g->name));
		if (!json_object_get(o, "ns"))
			for (char *p = ns; *p; p++)
				if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				      (*p >= '0' && *p <= '9') || *p == '_'))
					*p = '_';
		g->ns = ns;
		g->host = (char *)jstr(o, "host", NULL);
		if (!g->host)
			die("init: an mcp server needs 'host'");
		g->port = (uint32_t)jnum(o, "port", 443);
		g->path = (char *)jstr(o, "path", "/");
		g->max_frame = jnum(o, "max_frame", 4u << 20);
		g->call_timeout_ms = jnum(o, "call_timeout_ms", 60000);
		g->allow_tool_changes = jbool(o, "allow_tool_changes", false);
		m->mcp_servers[i] = g;
	}
}

/* ---- the decision log ------------------------------------------------------------ */

static json_t *fields_json(Box__PolicyField *const *f, size_t n);

static json_t *
value_json(const Box__PolicyValue *v)
{
	json_t *jv;
	switch (v->kind_case) {
	case BOX__POLICY_VALUE__KIND_SET:
		jv = json_array();
		for (size_t i = 0; i < v->set->n_elems; i++)
			json_array_append_new(jv, value_json(v->set->elems[i]));
		return jv;
	case BOX__POLICY_VALUE__KIND_RECORD:
		return fields_json(v->record->fields, v->record->n_fields);
	case BOX__POLICY_VALUE__KIND_STR:
		return json_string(v->str);
	case BOX__POLICY_VALUE__KIND_INTEGER:
		return json_integer(v->integer);
	case BOX__POLICY_VALUE__KIND_BOOLEAN:
		return json_boolean(v->boolean);
	case BOX__POLICY_VALUE__KIND__NOT_SET:
	default:
		return json_string("?");
	}
}

static json_t *
fields_json(Box__PolicyField *const *f, size_t n)
{
	json_t *o = json_object();
	for (size_t i = 0; i < n; i++) {
		const Box__PolicyValue *v = f[i]->value;
		json_t *jv;
		switch (v->kind_case) {
		case BOX__POLICY_VALUE__KIND_SET:
		case BOX__POLICY_VALUE__KIND_RECORD:
			jv = value_json(v);
			break;
		case BOX__POLICY_VALUE__KIND_STR:
			jv = json_string(v->str);
			break;
		case BOX__POLICY_VALUE__KIND_INTEGER:
			jv = json_integer(v->integer);
			break;
		case BOX__POLICY_VALUE__KIND_BOOLEAN:
			jv = json_boolean(v->boolean);
			break;
		default:
			jv = json_string("?");
			break;
		}
		json_object_set_new(o, f[i]->name, jv ? jv : json_null());
	}
	return o;
}

static void
log_line(json_t *o)
{
	if (declog) {
		char *s = json_dumps(o, JSON_COMPACT);
		fprintf(declog, "%s\n", s);
		fflush(declog);
		free(s);
	}
	json_decref(o);
}

/* ---- delayed replies ----------------------------------------------------------------- */

struct later {
	int64_t due;
	uint64_t id;
	bool permit;
	int cause;
	char *message;
	struct later *next;
};
static struct later *laters;

static void
send_reply(struct box_ipc_chan *pc, uint64_t id, bool permit, int cause, const char *message)
{
	Box__DecideReply rep = BOX__DECIDE_REPLY__INIT;
	rep.verdict =
	    permit ? BOX__DECISION_VERDICT__VERDICT_PERMIT : BOX__DECISION_VERDICT__VERDICT_DENY;
	rep.cause = (Box__DecisionCause)cause;
	rep.message = (char *)message;
	int r = box_ipc_chan_send(pc, BOX__MSG_TYPE__MSG_DECIDE_REPLY, id, &rep.base, NULL, 0);
	if (r < 0 && r != -EPIPE)
		fprintf(stderr, "gw-harness: cannot send DecideReply: %s\n", strerror(-r));
}

static int
delay_for(const Box__DecideRequest *req)
{
	for (size_t i = 0; i < req->n_input; i++) {
		const Box__PolicyField *f = req->input[i];
		if (strcmp(f->name, "host") != 0 ||
		    f->value->kind_case != BOX__POLICY_VALUE__KIND_STR)
			continue;
		for (int k = 0; k < n_delays; k++)
			if (strcmp(delays[k].host, f->value->str) == 0)
				return delays[k].ms;
	}
	return 0;
}

static void
flush_laters(struct box_ipc_chan *pc, bool all)
{
	int64_t now = mono_ms();
	struct later **pp = &laters;
	while (*pp) {
		struct later *l = *pp;
		if (all || l->due <= now) {
			*pp = l->next;
			send_reply(pc, l->id, l->permit, l->cause, l->message);
			free(l->message);
			free(l);
		} else {
			pp = &l->next;
		}
	}
}

static uint64_t decide_count;
/* The permits without an outcome, as box-policyd keeps them: a Record names one. */
static struct policy_permits *permits;

/*
 * One decision, as box-policyd makes it: decided, logged, its permit kept. ID: its
 * request id. CLAIM: a shipped decision's (PolicyShip) verdict, cause and rules, which
 * must be the policy's (false, logged as "bad_ship", when not); NULL for a Decide.
 */
static bool
decide_one(struct engine *eng, uint64_t id, const Box__DecideRequest *req,
	   const Box__PolicyShipItem *claim, bool *permit_out, int *cause_out,
	   const char **message_out)
{
	struct engine_result res;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int r = engine_decide(eng, req, (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec, &res);
	bool permit = r == 0 && res.permit;
	int cause = r == 0 ? res.cause : BOX__DECISION_CAUSE__CAUSE_ERROR;
	const char *message = r == 0 ? res.message : "harness: the engine failed";
	if (claim) {
		bool same = (claim->verdict == BOX__DECISION_VERDICT__VERDICT_PERMIT) == permit &&
			    (int)claim->cause == cause && r == 0 && claim->n_rules == res.n_rules;
		for (size_t i = 0; same && i < res.n_rules; i++)
			same = strcmp(claim->rules[i], res.rules[i]) == 0;
		if (!same) {
			json_t *o = json_object();
			json_object_set_new(o, "kind", json_string("bad_ship"));
			json_object_set_new(o, "id", json_integer((json_int_t)id));
			json_object_set_new(o, "action", json_string(req->action));
			log_line(o);
			return false;
		}
	}
	decide_count++;
	json_t *o = json_object();
	json_object_set_new(o, "kind", json_string("decide"));
	json_object_set_new(o, "id", json_integer((json_int_t)id));
	json_object_set_new(o, "action", json_string(req->action));
	json_object_set_new(o, "input", fields_json(req->input, req->n_input));
	json_object_set_new(o, "verdict", json_string(permit ? "permit" : "deny"));
	json_object_set_new(o, "cause", json_integer(cause));
	json_object_set_new(o, "message", json_string(message));
	if (claim)
		json_object_set_new(o, "shipped", json_true());
	log_line(o);
	if (!permits)
		permits = policy_permits_new();
	if (permit && policy_permits_outcome_owed(req) &&
	    (!permits || policy_permits_add(permits, id, req) < 0))
		die("cannot keep a permit");
	*permit_out = permit;
	*cause_out = cause;
	*message_out = message;
	return true;
}

static void record_one(struct engine *eng, const Box__RecordRequest *rec);

/*
 * PolicyLocalRequest: with --local, the policy, its generation, which of the gateway's
 * actions need no history, and a page that says the generation (no reload here: it
 * never moves); else no actions and no page (every decision is asked).
 */
static void
answer_local(struct box_ipc_chan *pc, struct engine *eng, const char *text, size_t len,
	     char **nss, size_t n_nss, uint64_t id)
{
	static const char *const names[] = { "net:connect", "http:request" };
	static int page = -1;
	char *acts[2];
	Box__PolicyLocal l = BOX__POLICY_LOCAL__INIT;
	l.generation = engine_generation(eng);
	l.has_policy_text = true;
	l.policy_text.data = (uint8_t *)text;
	l.policy_text.len = len;
	l.home = (char *)"/root";
	l.mcp_namespaces = nss;
	l.n_mcp_namespaces = n_nss;
	l.actions = acts;
	for (size_t i = 0; opt_local && i < 2; i++)
		if (engine_history_free(eng, names[i]) > 0)
			acts[l.n_actions++] = (char *)names[i];
	if (opt_local && page < 0) {
		page = memfd_create("gw-harness-generation", MFD_CLOEXEC);
		uint64_t g = l.generation;
		if (page < 0 || write(page, &g, sizeof(g)) != (ssize_t)sizeof(g))
			die("cannot make the generation page");
	}
	int r = box_ipc_chan_send(pc, BOX__MSG_TYPE__MSG_POLICY_LOCAL, id, &l.base, &page,
				  opt_local ? 1 : 0);
	if (r < 0 && r != -EPIPE)
		fprintf(stderr, "gw-harness: cannot send PolicyLocal: %s\n", strerror(-r));
}

/* PolicyShip: each item as box-policyd takes it; false (the channel ends) on a bad claim. */
static bool
take_ship(struct engine *eng, const Box__PolicyShip *b, uint64_t first)
{
	uint64_t id = first;
	if (b->generation != engine_generation(eng)) {
		json_t *o = json_object();
		json_object_set_new(o, "kind", json_string("bad_ship"));
		json_object_set_new(o, "generation", json_integer((json_int_t)b->generation));
		log_line(o);
		return false;
	}
	for (size_t i = 0; i < b->n_items; i++) {
		const Box__PolicyShipItem *it = b->items[i];
		if (it->record) {
			record_one(eng, it->record);
			continue;
		}
		bool permit;
		int cause;
		const char *message;
		if (!decide_one(eng, id++, it->decide, it, &permit, &cause, &message))
			return false;
	}
	return true;
}

static bool
on_policy_msg(struct box_ipc_chan *pc, struct engine *eng, struct box_ipc_msg *m)
{
	if (m->type == BOX__MSG_TYPE__MSG_POLICY_SHIP)
		return take_ship(eng, (const Box__PolicyShip *)m->msg, m->request_id);
	if (m->type == BOX__MSG_TYPE__MSG_POLICY_LOCAL_REQUEST) {
		answer_local(pc, eng, policy_text, policy_len, mcp_nss, n_mcp_nss, m->request_id);
		return true;
	}
	if (m->type == BOX__MSG_TYPE__MSG_DECIDE_REQUEST) {
		const Box__DecideRequest *req = (const Box__DecideRequest *)m->msg;
		bool permit;
		int cause;
		const char *message;
		(void)decide_one(eng, m->request_id, req, NULL, &permit, &cause, &message);
		int ms = delay_for(req);
		if (ms > 0) {
			struct later *l = calloc(1, sizeof(*l));
			*l = (struct later){.due = mono_ms() + ms,
					    .id = m->request_id,
					    .permit = permit,
					    .cause = cause,
					    .message = strdup(message),
					    .next = laters};
			laters = l;
			return true;
		}
		send_reply(pc, m->request_id, permit, cause, message);
		return true;
	}
	if (m->type == BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA) {
		const Box__PolicyToolSchema *ts = (const Box__PolicyToolSchema *)m->msg;
		struct engine_schema_result sr;
		memset(&sr, 0, sizeof(sr));
		int r = engine_register_tools(eng, ts, &sr);
		Box__PolicyToolSchemaReply rep = BOX__POLICY_TOOL_SCHEMA_REPLY__INIT;
		rep.ok = r == 0 && sr.ok;
		rep.error = rep.ok ? NULL : (char *)(r < 0 ? "harness: the engine failed" : sr.error);
		json_t *o = json_object(), *tools = json_object();
		for (size_t i = 0; i < ts->n_tools; i++) {
			json_t *fo = json_object();
			for (size_t k = 0; k < ts->tools[i]->n_fields; k++) {
				const Box__PolicyToolField *f = ts->tools[i]->fields[k];
				char t[4200];
				snprintf(t, sizeof(t), "%s%s", f->type, f->optional ? "?" : "");
				json_object_set_new(fo, f->name, json_string(t));
			}
			json_object_set_new(tools, ts->tools[i]->name, fo);
		}
		json_object_set_new(o, "kind", json_string("schema"));
		json_object_set_new(o, "server", json_string(ts->server));
		json_object_set_new(o, "ns", json_string(ts->ns));
		json_object_set_new(o, "tools", tools);
		json_object_set_new(o, "ok", json_boolean(rep.ok));
		if (rep.error)
			json_object_set_new(o, "error", json_string(rep.error));
		log_line(o);
		r = box_ipc_chan_send(pc, BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY, m->request_id,
				      &rep.base, NULL, 0);
		if (r < 0 && r != -EPIPE)
			fprintf(stderr, "gw-harness: cannot send PolicyToolSchemaReply: %s\n",
				strerror(-r));
		return true;
	}
	if (m->type == BOX__MSG_TYPE__MSG_RECORD_REQUEST)
		record_one(eng, (const Box__RecordRequest *)m->msg);
	return true;
}

/* An outcome, as box-policyd takes it: it must name a permitted decision not recorded yet. */
static void
record_one(struct engine *eng, const Box__RecordRequest *rec_in)
{
	{
		Box__RecordRequest ev = *rec_in;
		const Box__RecordRequest *rec = &ev;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		/* The event is the Decide's action and input (box-policyd's rule): one it names. */
		Box__DecideRequest *dec = NULL;
		if (!permits || policy_permits_take(permits, rec->decide_id, &dec) < 0 ||
		    strcmp(dec->action, rec->action) != 0) {
			json_t *o = json_object();
			json_object_set_new(o, "kind", json_string("bad_record"));
			json_object_set_new(o, "action", json_string(rec->action));
			json_object_set_new(o, "decide_id", json_integer((json_int_t)rec->decide_id));
			log_line(o);
			if (dec)
				box__decide_request__free_unpacked(dec, NULL);
			return;
		}
		ev.input = dec->input;
		ev.n_input = dec->n_input;
		int64_t rec_t;
		(void)engine_record(eng, rec, (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec, &rec_t);
		json_t *o = json_object();
		json_object_set_new(o, "kind", json_string("record"));
		json_object_set_new(o, "event",
				    json_string(rec->kind == BOX__EVENT_KIND__EVENT_RESPONSE
						    ? "response"
						    : "error"));
		json_object_set_new(o, "action", json_string(rec->action));
		json_object_set_new(o, "input", fields_json(rec->input, rec->n_input));
		json_object_set_new(o, "output", fields_json(rec->output, rec->n_output));
		log_line(o);
		box__decide_request__free_unpacked(dec, NULL);
	}
}

/* ---- listeners and the ready file ------------------------------------------------- */

static int
make_listener(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 4096) < 0)
		die("cannot listen on 127.0.0.1: %s", strerror(errno));
	socklen_t sl = sizeof(a);
	getsockname(fd, (struct sockaddr *)&a, &sl);
	*port = ntohs(a.sin_port);
	return fd;
}

static int
status_of(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 99;
}

/* The gateway's RLIMIT_NOFILE, set in the child before exec (playboxd.h's before_exec). */
struct gw_limits {
	unsigned long nofile;
};

static int
gw_set_limits(void *arg)
{
	const struct gw_limits *l = arg;
	unsigned long nf = l->nofile;
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_max != RLIM_INFINITY && nf > rl.rlim_max)
		nf = rl.rlim_max;
	rl.rlim_cur = nf;
	if (rl.rlim_max < nf)
		rl.rlim_max = nf;
	(void)setrlimit(RLIMIT_NOFILE, &rl);
	return 0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: gw-harness --gateway PATH --policy FILE --init INIT.json "
			"--listen SANDBOX... --ready-file F [--decisions OUT] "
			"[--decide-delay HOST=MS] [--nofile N] [--local] [--local-policy FILE] "
			"[--policyd DIR]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"gateway", 1, NULL, 'g'},
	    {"policy", 1, NULL, 'p'},
	    {"init", 1, NULL, 'i'},
	    {"listen", 1, NULL, 'l'},
	    {"ready-file", 1, NULL, 'r'},
	    {"decisions", 1, NULL, 'd'},
	    {"decide-delay", 1, NULL, 'D'},
	    {"nofile", 1, NULL, 'n'},
	    {"local", 0, NULL, 'L'},
	    {"local-policy", 1, NULL, 'P'},
	    {"policyd", 1, NULL, 'Y'},
	    {NULL, 0, NULL, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0) {
		switch (c) {
		case 'g':
			opt_gateway = optarg;
			break;
		case 'p':
			opt_policy = optarg;
			break;
		case 'i':
			opt_init = optarg;
			break;
		case 'l':
			if (n_listen == MAX_LISTEN)
				die("too many --listen");
			listen_sb[n_listen++] = optarg;
			break;
		case 'r':
			opt_ready = optarg;
			break;
		case 'd':
			opt_decisions = optarg;
			break;
		case 'D': {
			char *eq = strchr(optarg, '=');
			if (!eq || n_delays == MAX_DELAY || (size_t)(eq - optarg) >= 256)
				usage();
			memcpy(delays[n_delays].host, optarg, (size_t)(eq - optarg));
			delays[n_delays].host[eq - optarg] = '\0';
			delays[n_delays].ms = atoi(eq + 1);
			n_delays++;
			break;
		}
		case 'n':
			opt_nofile = strtoul(optarg, NULL, 10);
			break;
		case 'L':
			opt_local = true;
			break;
		case 'P':
			opt_local = true;
			opt_local_policy = optarg;
			break;
		case 'Y':
			opt_policyd = optarg;
			break;
		default:
			usage();
		}
	}
	if (!opt_gateway || !opt_policy || !opt_init || !opt_ready || optind != argc)
		usage();
	signal(SIGPIPE, SIG_IGN);
	if (opt_decisions) {
		declog = fopen(opt_decisions, "a");
		if (!declog)
			die("cannot open %s: %s", opt_decisions, strerror(errno));
	}

	/* The engine policyd uses (no temporal state: a throwaway directory). */
	size_t plen;
	char *ptext = read_file(opt_policy, &plen);
	char tmpl[] = "/tmp/gw-harness.XXXXXX";
	if (!mkdtemp(tmpl))
		die("mkdtemp: %s", strerror(errno));
	int dirfd = open(tmpl, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	json_error_t jerr;
	json_t *ij = json_load_file(opt_init, 0, &jerr);
	if (!ij || !json_is_object(ij))
		die("%s: %s (line %d)", opt_init, jerr.text, jerr.line);
	Box__GatewayInit init;
	build_init(&init, ij);
	char **nss = calloc(init.n_mcp_servers + 1, sizeof(*nss));
	for (size_t i = 0; i < init.n_mcp_servers; i++)
		nss[i] = init.mcp_servers[i]->ns;
	struct engine_opts eo = {.text = ptext,
				 .len = plen,
				 .home = "/root",
				 .mcp_namespaces = nss,
				 .n_mcp_namespaces = init.n_mcp_servers,
				 .sync = ENGINE_SYNC_OFF,
				 .dirfd = dirfd,
				 .now_ns = 0};
	struct engine *eng = NULL;
	char why[1024] = "";
	if (engine_new(&eo, &eng, why, sizeof(why)) < 0)
		die("the policy %s does not load: %s", opt_policy, why);
	policy_text = ptext;
	policy_len = plen;
	if (opt_local_policy)
		policy_text = read_file(opt_local_policy, &policy_len);
	mcp_nss = nss;
	n_mcp_nss = init.n_mcp_servers;

	int bx[2], px[2];
	if (box_ipc_socketpair(bx, false) < 0 || box_ipc_socketpair(px, false) < 0)
		die("socketpair: %s", strerror(errno));
	struct pd pd = {.pid = -1};
	if (opt_policyd) {
		/* The gateway's fd 4 is box-policyd's gateway channel; px is not used. */
		char *text = malloc(plen + 1), err[4200];
		memcpy(text, ptext, plen);
		text[plen] = '\0';
		(void)snprintf(err, sizeof(err), "%s/policyd.err", opt_policyd);
		struct pd_opts po = {.binary = pd_binary(), .state_dir = opt_policyd,
				     .policy = text, .stderr_path = err,
				     .mcp_namespaces = (const char *const *)nss,
				     .n_mcp_namespaces = init.n_mcp_servers,
				     .box_name = "gwtest", .home = "/root"};
		int r0 = pd_start(&po, &pd, NULL);
		if (r0 < 0)
			die("box-policyd did not start: %s (see %s)", strerror(-r0), err);
		close(px[1]);
		px[1] = pd.fd[PD_GATEWAY];
		pd.fd[PD_GATEWAY] = -1;
	}
	int theirs[2] = {bx[1], px[1]};
	struct gw_limits lim = {opt_nofile ? opt_nofile : 2 * init.max_connections + 256};
	/* As boxd: only BOX_TEST_* hooks, and no LeakSanitizer (its ptrace is refused by the
	 * gateway's seccomp filter). */
	struct pb_spawn sp = {.binary = opt_gateway,
			      .argv0 = "box-gateway",
			      .fds = theirs,
			      .n_fds = 2,
			      .boxd_env = true,
			      .before_exec = gw_set_limits,
			      .arg = &lim};
	pid_t pid = pb_spawn(&sp);
	if (pid < 0)
		die("fork: %s", strerror((int)-pid));
	close(bx[1]);
	close(px[1]);
	if (opt_policyd) {
		close(px[0]);
		px[0] = -1;
	}
	struct box_ipc_chan *bc =
	    box_ipc_chan_new(bx[0], &box_proto_gateway, BOX_GATEWAY_ROLE_GATEWAY);
	struct box_ipc_chan *pc =
	    opt_policyd ? NULL : box_ipc_chan_new(px[0], &box_proto_policy, BOX_POLICY_ROLE_PEER);
	if (!bc || (!opt_policyd && (!pc || box_ipc_chan_set_state(pc, BOX_POLICY_READY) < 0)))
		die("cannot set up the channels");
	/* Sent here, not by pb_init: t-gw-mcp.sh looks for this refusal of the sender's checks. */
	int r = box_ipc_chan_send(bc, BOX__MSG_TYPE__MSG_GATEWAY_INIT, 1, &init.base, NULL, 0);
	if (r < 0)
		die("cannot send GatewayInit: %s", strerror(-r));
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	r = pb_ready(bc, BOX__MSG_TYPE__MSG_GATEWAY_READY, 30000, &m);
	int st;
	if (r < 0) {
		fprintf(stderr, "gw-harness: no GatewayReady: %s\n", strerror(-r));
		close(bx[0]);
		waitpid(pid, &st, 0);
		return status_of(st);
	}
	const Box__GatewayReady *ready = (const Box__GatewayReady *)m.msg;
	if (!ready->ok) {
		fprintf(stderr, "gw-harness: not ready: %s\n",
			ready->message ? ready->message : "?");
		close(bx[0]);
		waitpid(pid, &st, 0);
		return status_of(st);
	}
	char capath[4096], tmp[4200];
	(void)snprintf(capath, sizeof(capath), "%s.ca.pem", opt_ready);
	FILE *f = fopen(capath, "w");
	if (!f ||
	    fwrite(ready->ca_cert_pem.data, 1, ready->ca_cert_pem.len, f) !=
		ready->ca_cert_pem.len ||
	    fclose(f) != 0)
		die("cannot write %s", capath);
	box_ipc_msg_done(&m);
	for (int i = 0; i < n_listen; i++) {
		listen_fd[i] = make_listener(&listen_port[i]);
		Box__GatewayListener gl = BOX__GATEWAY_LISTENER__INIT;
		gl.listener_id = (uint32_t)(i + 1);
		gl.sandbox = (char *)listen_sb[i];
		r = box_ipc_chan_send(bc, BOX__MSG_TYPE__MSG_GATEWAY_LISTENER, 0, &gl.base,
				      &listen_fd[i], 1);
		if (r < 0)
			die("cannot send GatewayListener: %s", strerror(-r));
		listen_open[i] = true;
	}
	(void)snprintf(tmp, sizeof(tmp), "%s.tmp", opt_ready);
	f = fopen(tmp, "w");
	if (!f)
		die("cannot write %s", tmp);
	fprintf(f, "pid %d\nca %s\n", (int)pid, capath);
	if (opt_policyd)
		fprintf(f, "policyd %d\n", (int)pd.pid);
	for (int i = 0; i < n_listen; i++)
		fprintf(f, "listener %s %d\n", listen_sb[i], listen_port[i]);
	if (fclose(f) != 0 || rename(tmp, opt_ready) < 0)
		die("cannot write %s", opt_ready);

	char line[512];
	size_t ll = 0;
	bool stdin_open = true, boxd_open = true;
	for (;;) {
		struct pollfd pfd[3] = {
		    {.fd = stdin_open ? 0 : -1, .events = POLLIN},
		    {.fd = px[0], .events = POLLIN},
		    {.fd = boxd_open ? bx[0] : -1, .events = POLLIN},
		};
		int timeout = -1;
		if (laters) {
			int64_t now = mono_ms(), due = INT64_MAX;
			for (struct later *l = laters; l; l = l->next)
				if (l->due < due)
					due = l->due;
			timeout = due > now ? (int)(due - now) : 0;
		}
		int n = poll(pfd, 3, timeout);
		if (n < 0 && errno == EINTR)
			continue;
		flush_laters(pc, false);
		if (pfd[1].revents) {
			r = box_ipc_recv(pc, &m);
			if (r == 1) {
				/* a bad PolicyShip: box-policyd ends the channel (a protocol error) */
				if (!on_policy_msg(pc, eng, &m))
					shutdown(px[0], SHUT_RDWR);
				box_ipc_msg_done(&m);
			} else if (r < 0 && r != -EAGAIN) {
				if (r != -ECONNRESET)
					fprintf(stderr, "gw-harness: policyd channel: %s\n",
						strerror(-r));
				break; /* the gateway is gone */
			}
		}
		if (pfd[2].revents) {
			r = box_ipc_recv(bc, &m);
			if (r == 1) {
				fprintf(stderr, "gw-harness: unexpected %s from the gateway\n",
					box_ipc_type_name(&box_proto_gateway, m.type));
				box_ipc_msg_done(&m);
			} else if (r < 0 && r != -EAGAIN) {
				boxd_open = false;
				break;
			}
		}
		if (pfd[0].revents) {
			ssize_t k = read(0, line + ll, sizeof(line) - 1 - ll);
			if (k <= 0) {
				stdin_open = false;
				break;
			}
			ll += (size_t)k;
			char *nl;
			while ((nl = memchr(line, '\n', ll))) {
				*nl = '\0';
				if (strncmp(line, "close ", 6) == 0) {
					for (int i = 0; i < n_listen; i++) {
						if (!listen_open[i] ||
						    strcmp(listen_sb[i], line + 6) != 0)
							continue;
						Box__GatewayListenerClosed gc =
						    BOX__GATEWAY_LISTENER_CLOSED__INIT;
						gc.listener_id = (uint32_t)(i + 1);
						(void)box_ipc_chan_send(
						    bc, BOX__MSG_TYPE__MSG_GATEWAY_LISTENER_CLOSED,
						    0, &gc.base, NULL, 0);
						listen_open[i] = false;
						close(listen_fd[i]);
					}
				} else if (strcmp(line, "owed") == 0) {
					/* The permits still owed a Record (box-policyd keeps them). */
					json_t *o = json_object();
					json_object_set_new(o, "kind", json_string("owed"));
					json_object_set_new(
					    o, "count",
					    json_integer(permits ? (json_int_t)policy_permits_count(permits)
								 : 0));
					log_line(o);
				} else if (strcmp(line, "drop-policyd") == 0) {
					/* policyd "dies": the gateway must end (exit 1). */
					shutdown(px[0], SHUT_RDWR);
				} else if (line[0]) {
					fprintf(stderr, "gw-harness: unknown command '%s'\n", line);
				}
				size_t used = (size_t)(nl - line) + 1;
				memmove(line, nl + 1, ll - used);
				ll -= used;
			}
			if (ll == sizeof(line) - 1)
				ll = 0;
		}
	}
	/* boxd leaves (or the gateway already did): answer what is held, wait for it. */
	flush_laters(pc, true);
	close(bx[0]);
	box_ipc_chan_free(bc);
	/* Keep serving decisions until the gateway closes its policyd channel. */
	for (; !opt_policyd;) {
		r = box_ipc_recv_wait(pc, &m, 5000);
		if (r == 1) {
			if (!on_policy_msg(pc, eng, &m))
				shutdown(px[0], SHUT_RDWR);
			box_ipc_msg_done(&m);
			continue;
		}
		break;
	}
	if (waitpid(pid, &st, 0) < 0)
		die("waitpid: %s", strerror(errno));
	if (opt_policyd) {
		int ps = pd_stop(&pd);
		if (ps != 0)
			fprintf(stderr, "gw-harness: box-policyd exited %d (see %s/policyd.err)\n",
				ps, opt_policyd);
	}
	return status_of(st);
}
