/* SPDX-License-Identifier: Apache-2.0 */
/*
 * engine.c — policy + temporal monitor + durable history (engine.h).
 *
 * History records (history.c frames them):
 *   EPOCH  a HistoryEpoch: the canonical hashes of the temporal rules live
 *          from here on. Written once per start, before any event.
 *   EVENT  a HistoryEvent: one request/response/error event with its time.
 * On start every event is replayed into the rules whose hash was live when
 * it was appended and stayed live in every later run (the effective set of
 * its epoch = its hashes ∩ every later epoch's), so an unchanged rule keeps
 * its state and a new, edited or removed-then-restored rule starts empty.
 *
 * The file is kept small: events older than the longest horizon of any rule
 * (an upper bound: the sum of every `within` window in the rule's temporal
 * text) are dropped by rewriting the file as [governing epoch, kept tail].
 * Trusts: messages were validated (proto/policy_validate.c); the history is
 * re-validated record by record and a bad one refuses the start.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <boxpolicy.h>
#include <boxpolicy_temporal.h>
#include <boxpolicy_proto.h>

#include "cleanup.h"
#include "engine.h"
#include "history.h"
#include "policy_validate.h"

#define REC_EPOCH 1
#define REC_EVENT 2
#define CKPT_EVERY 256 /* events between two compaction checkpoints */
#define COMPACT_MIN_BYTES (1u << 20)
#define HORIZON_FALLBACK_NS (7LL * 86400 * 1000000000LL)

struct epoch {
	uint64_t offset;
	uint8_t *raw; /* packed HistoryEpoch, as written */
	size_t raw_len;
	uint64_t *hashes;
	size_t n;
	uint64_t *eff; /* effective set (see above) */
	size_t n_eff;
};

struct ckpt {
	int64_t time;
	uint64_t offset;
};

/* One [mcp] namespace of PolicyInit and where its tool schema stands. */
enum ns_state {
	NS_PENDING = 0, /* no PolicyToolSchema yet: its actions deny (cause error) */
	NS_READY,       /* the policy type-checked against TOOLS: refinements */
	NS_FAILED,      /* the last schema did not check: its actions deny (cause error) */
};

struct ns_entry {
	char *ns;
	char *server;                 /* [mcp.NAME] of its last PolicyToolSchema; NULL before */
	enum ns_state state;
	Box__PolicyToolSchema *tools; /* NS_READY: the schema in force (our own copy) */
	char *failed;                 /* NS_FAILED: the rule, its line, what failed */
};

struct engine {
	struct bp_policy *policy;
	struct bp_schema *schema;
	struct bp_request *req;
	struct bp_decision *dec;
	struct bp_monitor *mon;
	struct bp_event *ev;
	struct history *hist;
	bool temporal;
	enum engine_sync sync;
	bool defer_sync; /* a DecideBatch in `always`: one fsync after it */
	uint64_t *hashes; /* current temporal rules' hashes */
	size_t n_hashes;
	int64_t horizon_ns;
	int64_t last_time;

	struct epoch *epochs;
	size_t n_epochs;
	size_t cur_epoch; /* recovery: the epoch the next event belongs to (+1; 0 none) */
	struct ckpt *ckpts;
	size_t n_ckpts, cap_ckpts;
	uint64_t events_since_ckpt;
	uint64_t compacted_size;

	uint8_t *pack; /* scratch for packing records */
	size_t pack_cap;

	const char **rules;
	size_t cap_rules;
	char msg[BP_MAX_MESSAGE + 64];
	char *resource;

	struct ns_entry *nss;
	size_t n_nss;
	/* The last engine_register_tools answer. */
	char *sr_error;
	char *sr_warnings[BOX_POLICY_WARNINGS_MAX];
	size_t n_sr_warnings;

	struct engine_stats st;

	/* What a reload needs of engine_opts (engine_reload). */
	char *home;
	int sync_opt;
	int dirfd;
	uint64_t generation;
	/* The policies of the last ENGINE_GENERATIONS_KEPT generations before this one. */
	struct {
		uint64_t generation;
		struct bp_policy *policy;
		struct bp_schema *schema;
	} old[ENGINE_GENERATIONS_KEPT];
	size_t n_old;
	struct bp_decision *old_dec;
	const char **old_rules;
	size_t cap_old_rules;
};

/* ---- resource label (docs/box-policy.5.md), unescaped, for the decision log ------ */

static const Box__PolicyValue *
field(Box__PolicyField *const *f, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(f[i]->name, name) == 0)
			return f[i]->value;
	return NULL;
}

/* A growing string for the label (no stdio stream: this runs on every decision). */
struct lbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void
lb_put(struct lbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (n + 1 > b->cap - b->len) {
		size_t cap = b->cap ? b->cap : 64;
		while (n + 1 > cap - b->len) {
			if (cap > SIZE_MAX / 2) {
				b->oom = true;
				return;
			}
			cap *= 2;
		}
		char *t = realloc(b->s, cap);
		if (!t) {
			b->oom = true;
			return;
		}
		b->s = t;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void
cat_str(struct lbuf *b, Box__PolicyField *const *f, size_t n, const char *name)
{
	const Box__PolicyValue *v = field(f, n, name);
	if (v && v->kind_case == BOX__POLICY_VALUE__KIND_STR)
		lb_put(b, v->str, strlen(v->str));
}

char *
engine_resource_label(const char *action, Box__PolicyField *const *f, size_t n)
{
	struct lbuf b = { 0 };
	const char *sep = strstr(action, "::Action::\"");

	lb_put(&b, "", 0);
	if (sep) {
		size_t tl = strlen(sep + 11);
		lb_put(&b, action, (size_t)(sep - action));
		lb_put(&b, "/", 1);
		lb_put(&b, sep + 11, tl ? tl - 1 : 0);
	} else if (strncmp(action, "fs:", 3) == 0) {
		cat_str(&b, f, n, "path");
	} else if (strcmp(action, "net:connect") == 0 || strcmp(action, "http:request") == 0) {
		cat_str(&b, f, n, "host");
		const Box__PolicyValue *p = field(f, n, "port");
		if (p && p->kind_case == BOX__POLICY_VALUE__KIND_INTEGER) {
			char num[32];
			int k = snprintf(num, sizeof(num), ":%lld", (long long)p->integer);
			lb_put(&b, num, k > 0 ? (size_t)k : 0);
		}
		if (action[0] == 'h')
			cat_str(&b, f, n, "path");
	} else if (strcmp(action, "shell:exec") == 0) {
		cat_str(&b, f, n, "program");
	} else if (strcmp(action, "shell:spawn") == 0) {
		cat_str(&b, f, n, "program_path");
	} else if (strcmp(action, "mcp:call") == 0) {
		cat_str(&b, f, n, "server");
		lb_put(&b, "/", 1);
		static const char *alts[] = { "tool", "prompt", "uri", "method" };
		for (size_t i = 0; i < ELEMENTSOF(alts); i++) {
			const Box__PolicyValue *v = field(f, n, alts[i]);
			if (v && v->kind_case == BOX__POLICY_VALUE__KIND_STR) {
				lb_put(&b, v->str, strlen(v->str));
				break;
			}
		}
	}
	if (b.oom) {
		free(b.s);
		errno = ENOMEM;
		return NULL;
	}
	return b.s;
}

int
engine_error_message(const char *message, char *buf, size_t len)
{
	static const char on[] = " on '";
	static const char tail[] = " because the request could not be evaluated.";
	const char *p = strstr(message, on);
	size_t res_len = 0;

	/*
	 * The escaped resource of MESSAGE runs from " on '" to the first quote
	 * not escaped (preceded by an even number of backslashes).
	 */
	if (p && (strncmp(message, "policy permitted this operation on '", 36) == 0 ||
		  strncmp(message, "policy denied this operation on '", 33) == 0)) {
		const char *s = p + strlen(on), *q = s;
		for (; *q; q++) {
			if (*q == '\\' && q[1]) {
				q++;
				continue;
			}
			if (*q == '\'')
				break;
		}
		if (*q == '\'')
			res_len = (size_t)(q - s);
		else
			p = NULL;
	} else {
		p = NULL;
	}
	int n = p ? snprintf(buf, len, "policy denied this operation on '%.*s'%s", (int)res_len,
			     p + strlen(on), tail)
		  : snprintf(buf, len, "policy denied this operation%s", tail);
	return n < 0 || (size_t)n >= len ? -ENOBUFS : 0;
}

/* ---- packing records ----------------------------------------------------- */

static int
pack_msg(struct engine *e, const ProtobufCMessage *m, size_t *ret_len)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	if (n + 1 > HISTORY_RECORD_MAX)
		return -E2BIG;
	if (n > e->pack_cap) {
		size_t cap = n < 4096 ? 4096 : n * 2;
		uint8_t *p = realloc(e->pack, cap);
		if (!p)
			return -ENOMEM;
		e->pack = p;
		e->pack_cap = cap;
	}
	*ret_len = protobuf_c_message_pack(m, e->pack);
	return 0;
}

static int
add_ckpt(struct engine *e, int64_t time, uint64_t offset)
{
	if (e->events_since_ckpt++ % CKPT_EVERY != 0)
		return 0;
	if (e->n_ckpts == e->cap_ckpts) {
		size_t cap = e->cap_ckpts ? e->cap_ckpts * 2 : 64;
		struct ckpt *c = realloc(e->ckpts, cap * sizeof(*c));
		if (!c)
			return -ENOMEM;
		e->ckpts = c;
		e->cap_ckpts = cap;
	}
	e->ckpts[e->n_ckpts++] = (struct ckpt){ time, offset };
	return 0;
}

static int
write_event(struct engine *e, Box__EventKind kind, int64_t t, const char *action,
	    Box__PolicyField **in, size_t n_in, Box__PolicyField **out, size_t n_out)
{
	Box__HistoryEvent ev = BOX__HISTORY_EVENT__INIT;
	uint64_t off;
	size_t len;

	ev.time_ns = (uint64_t)t;
	ev.kind = kind;
	ev.action = (char *)action;
	ev.input = in;
	ev.n_input = n_in;
	ev.output = out;
	ev.n_output = n_out;
	int r = pack_msg(e, &ev.base, &len);
	if (r < 0)
		return r;
	r = history_append(e->hist, REC_EVENT, e->pack, len, &off);
	if (r < 0)
		return r;
	return add_ckpt(e, t, off);
}

/* ---- epochs and recovery -------------------------------------------------- */

static void
epochs_free(struct engine *e)
{
	for (size_t i = 0; i < e->n_epochs; i++) {
		free(e->epochs[i].raw);
		free(e->epochs[i].hashes);
		free(e->epochs[i].eff);
	}
	free(e->epochs);
	e->epochs = NULL;
	e->n_epochs = 0;
}

static int
epoch_add(struct engine *e, const uint8_t *data, size_t len, uint64_t offset)
{
	Box__HistoryEpoch *m = box__history_epoch__unpack(NULL, len, data);
	int r = -EBADMSG;

	if (!m)
		return -EBADMSG;
	if (m->base.n_unknown_fields != 0 || box_validate_history_epoch(m) < 0)
		goto out;
	struct epoch *v = realloc(e->epochs, (e->n_epochs + 1) * sizeof(*v));
	if (!v) {
		r = -ENOMEM;
		goto out;
	}
	e->epochs = v;
	struct epoch *ep = &e->epochs[e->n_epochs];
	*ep = (struct epoch){ .offset = offset };
	ep->raw = malloc(len ? len : 1);
	ep->hashes = calloc(m->n_rule_hashes ? m->n_rule_hashes : 1, sizeof(uint64_t));
	ep->eff = calloc(m->n_rule_hashes ? m->n_rule_hashes : 1, sizeof(uint64_t));
	if (!ep->raw || !ep->hashes || !ep->eff) {
		free(ep->raw);
		free(ep->hashes);
		free(ep->eff);
		r = -ENOMEM;
		goto out;
	}
	memcpy(ep->raw, data, len);
	ep->raw_len = len;
	for (size_t i = 0; i < m->n_rule_hashes; i++) {
		uint64_t h = 0;
		if (m->rule_hashes[i].len != 8)
			goto bad;
		for (int k = 0; k < 8; k++)
			h |= (uint64_t)m->rule_hashes[i].data[k] << (8 * k);
		ep->hashes[i] = h;
	}
	ep->n = m->n_rule_hashes;
	e->n_epochs++;
	r = 0;
	goto out;
bad:
	free(ep->raw);
	free(ep->hashes);
	free(ep->eff);
	r = -EBADMSG;
out:
	box__history_epoch__free_unpacked(m, NULL);
	return r;
}

static bool
has_hash(const uint64_t *v, size_t n, uint64_t h)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == h)
			return true;
	return false;
}

/* eff(k) = hashes(k) ∩ eff(k+1); the last epoch's eff is its hashes. */
static void
epochs_effective(struct engine *e)
{
	for (size_t k = e->n_epochs; k-- > 0;) {
		struct epoch *ep = &e->epochs[k];
		ep->n_eff = 0;
		for (size_t i = 0; i < ep->n; i++)
			if (k + 1 == e->n_epochs ||
			    has_hash(e->epochs[k + 1].eff, e->epochs[k + 1].n_eff, ep->hashes[i]))
				ep->eff[ep->n_eff++] = ep->hashes[i];
	}
}

/* Pass 1: epochs only (events are checked in pass 2). */
static int
pass_epochs(uint8_t type, const uint8_t *data, size_t len, uint64_t offset, void *userdata)
{
	struct engine *e = userdata;
	if (type == REC_EPOCH)
		return epoch_add(e, data, len, offset);
	if (type == REC_EVENT) {
		if (e->n_epochs == 0)
			return -EBADMSG; /* an event before any epoch */
		return 0;
	}
	return -EBADMSG;
}

/*
 * Load e->ev with one outcome or request event (a Record now, or a history
 * record on replay). Only -ENOMEM and a bad request fail here; an output
 * field of the wrong shape is left to bp_event_problem(), which callers check.
 */
static int
fill_event(struct engine *e, enum bp_event_kind kind, int64_t time_ns, const char *action,
	   Box__PolicyField *const *input, size_t n_input, Box__PolicyField *const *output,
	   size_t n_output)
{
	bp_event_reset(e->ev);
	bp_event_set_kind(e->ev, kind);
	bp_event_set_time(e->ev, time_ns);
	int r = bp_request_fill_proto(bp_event_request(e->ev), action, input, n_input);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n_output; i++) {
		const Box__PolicyValue *v = output[i]->value;
		if (v->kind_case == BOX__POLICY_VALUE__KIND_INTEGER)
			r = bp_event_set_output_long(e->ev, output[i]->name, v->integer);
		else if (v->kind_case == BOX__POLICY_VALUE__KIND_STR)
			r = bp_event_set_output_string(e->ev, output[i]->name, v->str,
						       strlen(v->str));
		else
			r = -EINVAL;
		if (r == -ENOMEM)
			return r;
	}
	return 0;
}

static int
replay_event(struct engine *e, const uint8_t *data, size_t len, uint64_t offset)
{
	Box__HistoryEvent *m = box__history_event__unpack(NULL, len, data);
	int r = -EBADMSG;

	if (!m)
		return -EBADMSG;
	if (m->base.n_unknown_fields != 0 || box_validate_history_event(m) < 0 ||
	    m->time_ns > INT64_MAX)
		goto out;
	const struct epoch *ep = &e->epochs[e->cur_epoch - 1];
	r = fill_event(e, (enum bp_event_kind)m->kind, (int64_t)m->time_ns, m->action, m->input,
		       m->n_input, m->output, m->n_output);
	if (r < 0)
		goto out;
	r = 0;
	if (bp_event_problem(e->ev)) {
		/* The schema changed since (an MCP server left the config): no rule can see it. */
		e->st.skipped_events++;
		goto out;
	}
	int64_t t;
	r = bp_monitor_observe_for_rules(e->mon, e->ev, ep->eff, ep->n_eff, &t);
	if (r < 0)
		goto out;
	e->st.history_events++;
	r = add_ckpt(e, t, offset);
out:
	box__history_event__free_unpacked(m, NULL);
	return r;
}

/* Pass 2: replay every event into the rules of its epoch's effective set. */
static int
pass_replay(uint8_t type, const uint8_t *data, size_t len, uint64_t offset, void *userdata)
{
	struct engine *e = userdata;
	if (type == REC_EPOCH) {
		e->cur_epoch++;
		return 0;
	}
	return replay_event(e, data, len, offset);
}

/* Upper bound of how far back rule I can look: the sum of its `within` windows. */
static int64_t
rule_horizon(const struct bp_policy *p, size_t i)
{
	int64_t total = 0;
	size_t nt = bp_policy_temporal_count(p, i);
	for (size_t t = 0; t < nt; t++) {
		const char *text;
		size_t len;
		if (bp_policy_temporal_source(p, i, t, &text, &len, NULL, NULL) < 0)
			return HORIZON_FALLBACK_NS;
		for (size_t k = 0; k + 6 < len; k++) {
			if (memcmp(text + k, "within", 6) != 0)
				continue;
			size_t j = k + 6;
			while (j < len && (text[j] == ' ' || text[j] == '\t' || text[j] == '\n' ||
					   text[j] == '\r'))
				j++;
			int64_t n = 0;
			size_t d0 = j;
			while (j < len && text[j] >= '0' && text[j] <= '9' && n < 100000000)
				n = n * 10 + (text[j++] - '0');
			if (j == d0 || j >= len)
				return HORIZON_FALLBACK_NS;
			int64_t unit;
			switch (text[j]) {
			case 's': unit = 1; break;
			case 'm': unit = 60; break;
			case 'h': unit = 3600; break;
			case 'd': unit = 86400; break;
			default: return HORIZON_FALLBACK_NS;
			}
			if (n * unit > 86400)
				n = 86400, unit = 1; /* windows are capped at 24h */
			total += n * unit * 1000000000LL;
		}
	}
	return total + 1000000000LL; /* and a second of slack */
}

static int
write_epoch(struct engine *e, int64_t now)
{
	Box__HistoryEpoch m = BOX__HISTORY_EPOCH__INIT;
	_cleanup_free_ ProtobufCBinaryData *hs = calloc(e->n_hashes ? e->n_hashes : 1, sizeof(*hs));
	_cleanup_free_ uint8_t *bytes = calloc(e->n_hashes ? e->n_hashes : 1, 8);
	size_t len;
	uint64_t off;

	if (!hs || !bytes)
		return -ENOMEM;
	for (size_t i = 0; i < e->n_hashes; i++) {
		for (int k = 0; k < 8; k++)
			bytes[i * 8 + (size_t)k] = (uint8_t)(e->hashes[i] >> (8 * k));
		hs[i].data = bytes + i * 8;
		hs[i].len = 8;
	}
	m.time_ns = (uint64_t)now;
	m.rule_hashes = hs;
	m.n_rule_hashes = e->n_hashes;
	int r = pack_msg(e, &m.base, &len);
	if (r < 0)
		return r;
	r = history_append(e->hist, REC_EPOCH, e->pack, len, &off);
	if (r < 0)
		return r;
	r = epoch_add(e, e->pack, len, off);
	if (r < 0)
		return r;
	epochs_effective(e);
	return history_sync(e->hist);
}

static void
say(char *why, size_t why_len, const char *what, const char *detail)
{
	if (why && why_len)
		(void)snprintf(why, why_len, "%s%s%s", what, detail ? ": " : "",
			       detail ? detail : "");
}

static int
load_policy(struct engine *e, const struct engine_opts *o, char *why, size_t why_len)
{
	struct bp_load_options lo = { .home = o->home };
	struct bp_diags *diags = NULL;
	int r = bp_schema_new(&e->schema);

	if (r < 0)
		return r;
	for (size_t i = 0; i < o->n_mcp_namespaces; i++) {
		r = bp_schema_add_pending(e->schema, o->mcp_namespaces[i]);
		if (r < 0) {
			say(why, why_len, "cannot declare MCP namespace", o->mcp_namespaces[i]);
			return r;
		}
	}
	lo.schema = e->schema;
	r = bp_policy_load(o->text ? o->text : "", o->text ? o->len : 0, &lo, &e->policy, &diags);
	if (r < 0) {
		char line[512] = "";
		for (size_t i = 0; diags && i < bp_diags_count(diags); i++) {
			enum bp_severity sev;
			unsigned ln, col;
			const char *msg = bp_diag_message(diags, i, &sev, &ln, &col);
			if (sev == BP_ERROR) {
				(void)snprintf(line, sizeof(line), "line %u:%u: %s", ln, col, msg);
				break;
			}
		}
		bp_diags_free(diags);
		say(why, why_len, "the policy does not load", line[0] ? line : NULL);
		return r;
	}
	bp_diags_free(diags);
	e->st.rules = bp_policy_rule_count(e->policy);
	for (size_t i = 0; i < e->st.rules; i++)
		if (bp_policy_temporal_count(e->policy, i) > 0)
			e->st.temporal_rules++;
	e->temporal = e->st.temporal_rules > 0;
	r = bp_request_new(e->policy, &e->req);
	if (r < 0)
		return r;
	return bp_decision_new(&e->dec);
}

/* The temporal rules' hashes and the longest horizon, from E's policy. */
static int
rule_hashes(struct engine *e)
{
	free(e->hashes);
	e->n_hashes = 0;
	e->horizon_ns = 0;
	e->hashes = calloc(e->st.rules ? e->st.rules : 1, sizeof(uint64_t));
	if (!e->hashes)
		return -ENOMEM;
	for (size_t i = 0; i < e->st.rules; i++) {
		if (bp_policy_temporal_count(e->policy, i) == 0)
			continue;
		uint64_t h = bp_policy_rule_hash(e->policy, i);
		if (!has_hash(e->hashes, e->n_hashes, h))
			e->hashes[e->n_hashes++] = h;
		int64_t hz = rule_horizon(e->policy, i);
		if (hz > e->horizon_ns)
			e->horizon_ns = hz;
	}
	return 0;
}

/*
 * E's policy has temporal rules and E no monitor yet (a start, or a reload from a
 * policy without any): a monitor, the history recovered and replayed into the rules
 * it belongs to, a new epoch. On failure what it made is freed again (E has no
 * monitor and no history, as before).
 */
static int
temporal_start(struct engine *e, int64_t now_ns, char *why, size_t why_len)
{
	char hwhy[256] = "";
	struct bp_diags *diags = NULL;
	int r = bp_monitor_new(e->policy, &e->mon, &diags);

	bp_diags_free(diags);
	if (r < 0) {
		say(why, why_len, "the temporal rules do not load", NULL);
		goto fail;
	}
	r = bp_event_new(e->policy, &e->ev);
	if (r < 0)
		goto fail;
	r = rule_hashes(e);
	if (r < 0)
		goto fail;
	/* Pass 1 recovers the file (drops a torn tail, refuses corruption) and reads epochs. */
	r = history_open(e->dirfd, HISTORY_FILE, pass_epochs, e, &e->hist, hwhy, sizeof(hwhy));
	if (r < 0) {
		say(why, why_len, "the history 'policy/" HISTORY_FILE "' cannot be used", hwhy);
		goto fail;
	}
	e->st.dropped_bytes = history_dropped_bytes(e->hist);
	epochs_effective(e);
	e->st.rules_kept = 0;
	if (e->n_epochs > 0) {
		const struct epoch *last = &e->epochs[e->n_epochs - 1];
		for (size_t i = 0; i < e->n_hashes; i++)
			if (has_hash(last->eff, last->n_eff, e->hashes[i]))
				e->st.rules_kept++;
	}
	/* Pass 2: replay. */
	{
		struct history *h2 = NULL;
		e->cur_epoch = 0;
		r = history_open(e->dirfd, HISTORY_FILE, pass_replay, e, &h2, hwhy, sizeof(hwhy));
		history_free(h2);
		if (r < 0) {
			say(why, why_len, "the history 'policy/" HISTORY_FILE "' cannot be replayed",
			    hwhy);
			goto fail;
		}
	}
	e->last_time = bp_monitor_last_time(e->mon);
	r = write_epoch(e, now_ns);
	if (r < 0) {
		say(why, why_len, "cannot write the history", strerror(-r));
		goto fail;
	}
	e->compacted_size = history_size(e->hist);
	(void)engine_maybe_compact(e, now_ns, false);
	return 0;
fail:
	bp_event_free(e->ev);
	e->ev = NULL;
	bp_monitor_free(e->mon);
	e->mon = NULL;
	e->hist = history_free(e->hist);
	epochs_free(e);
	free(e->ckpts);
	e->ckpts = NULL;
	e->n_ckpts = e->cap_ckpts = 0;
	e->events_since_ckpt = 0;
	return r;
}

int
engine_new(const struct engine_opts *o, struct engine **ret, char *why, size_t why_len)
{
	struct engine *e = calloc(1, sizeof(*e));
	int r;

	if (!e)
		return -ENOMEM;
	e->last_time = INT64_MIN;
	e->generation = 1;
	e->sync_opt = o->sync;
	e->dirfd = o->dirfd;
	e->home = strdup(o->home ? o->home : "/");
	e->nss = calloc(o->n_mcp_namespaces ? o->n_mcp_namespaces : 1, sizeof(*e->nss));
	if (!e->nss || !e->home) {
		r = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < o->n_mcp_namespaces; i++) {
		e->nss[i].ns = strdup(o->mcp_namespaces[i]);
		if (!e->nss[i].ns) {
			r = -ENOMEM;
			goto fail;
		}
		e->n_nss = i + 1;
	}
	r = load_policy(e, o, why, why_len);
	if (r < 0)
		goto fail;
	e->sync = o->sync >= 0 ? (enum engine_sync)o->sync
		  : e->temporal ? ENGINE_SYNC_ALWAYS
				: ENGINE_SYNC_OFF;
	e->st.temporal = e->temporal;
	e->st.sync = e->sync;
	/* Without a temporal rule nothing is written, nothing is read: the history stays. */
	if (e->temporal) {
		r = temporal_start(e, o->now_ns, why, why_len);
		if (r < 0)
			goto fail;
	}
	*ret = e;
	return 0;
fail:
	engine_free(e);
	return r;
}

struct engine *
engine_free(struct engine *e)
{
	if (!e)
		return NULL;
	bp_event_free(e->ev);
	bp_monitor_free(e->mon);
	bp_decision_free(e->dec);
	bp_request_free(e->req);
	bp_policy_free(e->policy);
	bp_schema_free(e->schema);
	history_free(e->hist);
	epochs_free(e);
	free(e->hashes);
	free(e->ckpts);
	free(e->pack);
	free(e->rules);
	free(e->resource);
	for (size_t i = 0; i < e->n_nss; i++) {
		free(e->nss[i].ns);
		free(e->nss[i].server);
		free(e->nss[i].failed);
		if (e->nss[i].tools)
			box__policy_tool_schema__free_unpacked(e->nss[i].tools, NULL);
	}
	free(e->nss);
	free(e->sr_error);
	for (size_t i = 0; i < e->n_sr_warnings; i++)
		free(e->sr_warnings[i]);
	for (size_t i = 0; i < e->n_old; i++) {
		bp_policy_free(e->old[i].policy);
		bp_schema_free(e->old[i].schema);
	}
	bp_decision_free(e->old_dec);
	free(e->old_rules);
	free(e->home);
	free(e);
	return NULL;
}

void
engine_stats(const struct engine *e, struct engine_stats *ret)
{
	*ret = e->st;
}

/* ---- deciding ------------------------------------------------------------- */

static int64_t
stamp(struct engine *e, int64_t now)
{
	if (e->mon)
		return bp_monitor_stamp(e->mon, now);
	return e->last_time != INT64_MIN && now <= e->last_time ? e->last_time + 1 : now;
}

static int
set_result(struct engine *e, struct engine_result *res, bool error_deny)
{
	size_t n = error_deny ? 0 : bp_decision_rule_count(e->dec);
	if (n > e->cap_rules) {
		const char **v = realloc(e->rules, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		e->rules = v;
		e->cap_rules = n;
	}
	for (size_t i = 0; i < n; i++)
		e->rules[i] = bp_decision_rule_name(e->dec, i);
	res->rules = e->rules;
	res->n_rules = n;
	if (error_deny) {
		if (engine_error_message(bp_decision_message(e->dec), e->msg, sizeof(e->msg)) < 0)
			(void)snprintf(e->msg, sizeof(e->msg), "%s",
				       "policy denied this operation because the request could "
				       "not be evaluated.");
		res->permit = false;
		res->cause = BOX__DECISION_CAUSE__CAUSE_ERROR;
		res->message = e->msg;
		return 0;
	}
	res->permit = bp_decision_verdict(e->dec) == BP_PERMIT;
	switch (bp_decision_cause(e->dec)) {
	case BP_CAUSE_PERMITTED: res->cause = BOX__DECISION_CAUSE__CAUSE_PERMITTED; break;
	case BP_CAUSE_FORBIDDEN: res->cause = BOX__DECISION_CAUSE__CAUSE_FORBIDDEN; break;
	case BP_CAUSE_NO_MATCH: res->cause = BOX__DECISION_CAUSE__CAUSE_NO_MATCH; break;
	case BP_CAUSE_NOT_REFINED: res->cause = BOX__DECISION_CAUSE__CAUSE_NOT_REFINED; break;
	case BP_CAUSE_ERROR:
	default: res->cause = BOX__DECISION_CAUSE__CAUSE_ERROR; break;
	}
	/* Never a permit with another cause (a refinement no rule matched is one). */
	if (res->permit && res->cause != BOX__DECISION_CAUSE__CAUSE_PERMITTED &&
	    res->cause != BOX__DECISION_CAUSE__CAUSE_NOT_REFINED)
		res->permit = false;
	res->message = bp_decision_message(e->dec);
	res->ask = !res->permit && res->cause == BOX__DECISION_CAUSE__CAUSE_FORBIDDEN && n > 0;
	for (size_t i = 0; res->ask && i < n; i++) {
		bool found = false;
		for (size_t k = 0; !found && k < e->st.rules; k++)
			found = bp_policy_rule_is_forbid(e->policy, k) &&
				strcmp(bp_policy_rule_name(e->policy, k), res->rules[i]) == 0 &&
				bp_policy_rule_annotation(e->policy, k, "ask") != NULL;
		res->ask = found;
	}
	return 0;
}

bool
engine_has_ask(const struct engine *e)
{
	for (size_t k = 0; k < e->st.rules; k++)
		if (bp_policy_rule_is_forbid(e->policy, k) &&
		    bp_policy_rule_annotation(e->policy, k, "ask") != NULL)
			return true;
	return false;
}

int
engine_decide(struct engine *e, const Box__DecideRequest *m, int64_t now_ns,
	      struct engine_result *res)
{
	int r;

	*res = (struct engine_result){ 0 };
	free(e->resource);
	e->resource = engine_resource_label(m->action, m->input, m->n_input);
	if (!e->resource)
		return -ENOMEM;
	res->resource = e->resource;
	bp_request_reset(e->req);
	r = bp_request_fill_proto(e->req, m->action, m->input, m->n_input);
	if (r < 0)
		return r;
	int64_t t = stamp(e, now_ns);
	res->time_ns = t;
	if (!e->temporal) {
		e->last_time = t;
		r = bp_decide(e->policy, e->req, NULL, e->dec);
		if (r < 0)
			return r;
		return set_result(e, res, false);
	}
	bool fits = bp_request_problem(e->req) == NULL;
	bool failed = false;
	if (fits) {
		/* Observe: the request event is on disk (batch: written, its fsync to come) first. */
		r = history_failed(e->hist) ? -EIO
					    : write_event(e, BOX__EVENT_KIND__EVENT_REQUEST, t,
							  m->action, m->input, m->n_input, NULL, 0);
		if (r == 0 && e->sync == ENGINE_SYNC_ALWAYS && !e->defer_sync)
			r = history_sync(e->hist);
		if (r < 0) {
			if (r == -ENOMEM || r == -E2BIG)
				history_poison(e->hist); /* the file and the monitor must agree */
			failed = true;
			res->history_error = r;
		}
	}
	if (failed) {
		/* Decide without observing, only to get the resource's spelling. */
		r = bp_decide(e->policy, e->req, NULL, e->dec);
		if (r < 0)
			return r;
		return set_result(e, res, true);
	}
	r = bp_monitor_decide(e->mon, e->req, t, e->dec, NULL);
	if (r < 0 && r != -EINVAL) {
		/* The monitor could not append (memory): it denied with cause error. */
		history_poison(e->hist);
	}
	e->last_time = bp_monitor_last_time(e->mon);
	r = set_result(e, res, false);
	res->wait_sync = fits && (e->sync == ENGINE_SYNC_BATCH ||
				  (e->sync == ENGINE_SYNC_ALWAYS && e->defer_sync));
	return r;
}

int
engine_probe(struct engine *e, const Box__DecideRequest *m, int64_t now_ns,
	     struct engine_result *res)
{
	int r;

	*res = (struct engine_result){ 0 };
	free(e->resource);
	e->resource = engine_resource_label(m->action, m->input, m->n_input);
	if (!e->resource)
		return -ENOMEM;
	res->resource = e->resource;
	bp_request_reset(e->req);
	r = bp_request_fill_proto(e->req, m->action, m->input, m->n_input);
	if (r < 0)
		return r;
	/* The time a Decide now would get; nothing is stamped (e->last_time stays). */
	res->time_ns = stamp(e, now_ns);
	if (!e->temporal) {
		r = bp_decide(e->policy, e->req, NULL, e->dec);
		return r < 0 ? r : set_result(e, res, false);
	}
	if (history_failed(e->hist) && bp_request_problem(e->req) == NULL) {
		/* A Decide now would be denied: its event cannot be written. */
		r = bp_decide(e->policy, e->req, NULL, e->dec);
		return r < 0 ? r : set_result(e, res, true);
	}
	r = bp_monitor_probe(e->mon, e->req, res->time_ns, e->dec);
	if (r < 0 && r != -ENOMEM)
		return r;
	return set_result(e, res, false);
}

/* ---- MCP tool schemas ----------------------------------------------------- */

/* A tool name a rule can spell as NS::Action::"NAME" (box_valid_action's rule). */
static bool
tool_name_usable(const char *s)
{
	for (; *s; s++)
		if (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

/* Cut S at its last whole UTF-8 character (snprintf may have split one). */
static void
utf8_trim(char *s)
{
	size_t n = strlen(s);
	if (box_valid_utf8(s, n))
		return;
	size_t i = n;
	while (i > 0 && n - i < 4 && ((unsigned char)s[i - 1] & 0xC0) == 0x80)
		i--;
	if (i > 0)
		i--; /* the lead byte of the cut character */
	s[i] = '\0';
}

/* Printable, at most BOX_STR_MAX bytes, valid UTF-8: the reply's validator wants that. */
static char *
reply_text(const char *fmt, va_list ap)
{
	char buf[BOX_STR_MAX + 1];
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	utf8_trim(buf);
	if (!buf[0])
		(void)snprintf(buf, sizeof(buf), "%s", "?");
	return strdup(buf);
}

static void __attribute__((format(printf, 2, 3)))
sr_warn(struct engine *e, const char *fmt, ...)
{
	if (e->n_sr_warnings >= BOX_POLICY_WARNINGS_MAX)
		return; /* capped: the first ones say enough */
	va_list ap;
	va_start(ap, fmt);
	char *w = reply_text(fmt, ap);
	va_end(ap);
	if (w)
		e->sr_warnings[e->n_sr_warnings++] = w;
}

static int __attribute__((format(printf, 2, 3)))
sr_fail(struct engine *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(e->sr_error);
	e->sr_error = reply_text(fmt, ap);
	va_end(ap);
	return e->sr_error ? 0 : -ENOMEM;
}

static void
sr_clear(struct engine *e)
{
	free(e->sr_error);
	e->sr_error = NULL;
	for (size_t i = 0; i < e->n_sr_warnings; i++)
		free(e->sr_warnings[i]);
	e->n_sr_warnings = 0;
}

/*
 * Declare M's tools in S under M->ns. Returns the number declared, or a
 * negative errno; *bad is set (and e->sr_error says why) when a type
 * expression does not parse: the schema then fails as a whole.
 */
static int
declare_tools(struct engine *e, struct bp_schema *s, const Box__PolicyToolSchema *m, bool warn,
	      bool *bad)
{
	int r = bp_schema_add_namespace(s, m->ns);
	size_t n = 0;
	if (r < 0)
		return r;
	for (size_t i = 0; i < m->n_tools; i++) {
		const Box__PolicyTool *t = m->tools[i];
		if (!tool_name_usable(t->name)) {
			if (warn)
				sr_warn(e, "[mcp.%s]: tool '%s': its name has a quote, a backslash or "
					   "a control character, so no rule can name it; its calls "
					   "are denied",
					m->server, t->name);
			continue;
		}
		r = bp_schema_add_action(s, m->ns, t->name);
		if (r < 0)
			return r == -ENOMEM ? r : -EINVAL;
		for (size_t k = 0; k < t->n_fields; k++) {
			const Box__PolicyToolField *f = t->fields[k];
			r = bp_schema_add_field(s, m->ns, t->name, f->name, f->type, f->optional);
			if (r == -ENOMEM)
				return r;
			if (r < 0) {
				*bad = true;
				r = sr_fail(e, "[mcp.%s]: tool '%s', argument '%s': the type '%s' "
					       "cannot be declared (%s)",
					    m->server, t->name, f->name, f->type, strerror(-r));
				return r < 0 ? r : 0;
			}
		}
		n++;
	}
	return (int)n;
}

/*
 * The schema of every namespace as it stands, with namespace WHICH taking
 * NEW (its tools) or, when NEW is NULL, FAILED (why it failed).
 */
static int
build_schema(struct engine *e, size_t which, const Box__PolicyToolSchema *new_tools,
	     const char *server, const char *failed, struct bp_schema **ret, bool *bad,
	     size_t *n_tools)
{
	struct bp_schema *s = NULL;
	int r = bp_schema_new(&s);
	if (r < 0)
		return r;
	for (size_t i = 0; r >= 0 && i < e->n_nss; i++) {
		const struct ns_entry *ns = &e->nss[i];
		if (i == which && new_tools) {
			r = declare_tools(e, s, new_tools, true, bad);
			if (r >= 0)
				*n_tools = (size_t)r;
			if (*bad)
				break;
		} else if (i == which) {
			r = bp_schema_add_failed(s, ns->ns, server, failed);
		} else if (ns->state == NS_READY) {
			bool ignored = false;
			r = declare_tools(e, s, ns->tools, false, &ignored);
		} else if (ns->state == NS_FAILED) {
			r = bp_schema_add_failed(s, ns->ns, ns->server, ns->failed);
		} else {
			r = bp_schema_add_pending(s, ns->ns);
		}
	}
	if (r < 0 || *bad) {
		bp_schema_free(s);
		return r < 0 ? r : 0;
	}
	*ret = s;
	return 0;
}

/*
 * Put NP (validated against S) in force: the monitor's state moves to it
 * (every rule's text is unchanged, so every rule keeps its events), and the
 * request and event scratch are rebound. On failure nothing changed.
 */
static int
adopt_policy(struct engine *e, struct bp_policy *np, struct bp_schema *s)
{
	struct bp_request *req = NULL;
	struct bp_event *ev = NULL;
	struct bp_monitor *mon = NULL;
	int r = bp_request_new(np, &req);
	if (r == 0 && e->mon)
		r = bp_event_new(np, &ev);
	if (r == 0 && e->mon) {
		struct bp_diags *diags = NULL;
		r = bp_monitor_migrate(e->mon, np, &mon, &diags);
		bp_diags_free(diags);
	}
	if (r < 0) {
		bp_request_free(req);
		bp_event_free(ev);
		return r;
	}
	if (e->mon) {
		e->mon = mon; /* migrate freed the old one */
		bp_event_free(e->ev);
		e->ev = ev;
	}
	bp_request_free(e->req);
	e->req = req;
	bp_policy_free(e->policy);
	e->policy = np;
	bp_schema_free(e->schema);
	e->schema = s;
	return 0;
}

/* The first error of DIAGS as "line L:C: message" into E's error. */
static int
diag_error(struct engine *e, const struct bp_diags *d, const char *server)
{
	for (size_t i = 0; d && i < bp_diags_count(d); i++) {
		enum bp_severity sev;
		unsigned ln, col;
		const char *msg = bp_diag_message(d, i, &sev, &ln, &col);
		if (sev == BP_ERROR)
			return sr_fail(e, "line %u:%u: %s", ln, col, msg);
	}
	return sr_fail(e, "the policy does not load with the tools of [mcp.%s]", server);
}

static int
copy_schema_msg(const Box__PolicyToolSchema *m, Box__PolicyToolSchema **ret)
{
	size_t n = protobuf_c_message_get_packed_size(&m->base);
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf)
		return -ENOMEM;
	(void)protobuf_c_message_pack(&m->base, buf);
	*ret = box__policy_tool_schema__unpack(NULL, n, buf);
	free(buf);
	return *ret ? 0 : -ENOMEM;
}

int
engine_register_tools(struct engine *e, const Box__PolicyToolSchema *m,
		      struct engine_schema_result *res)
{
	size_t which = SIZE_MAX, n_tools = 0;
	struct bp_schema *s = NULL;
	struct bp_policy *np = NULL;
	struct bp_diags *diags = NULL;
	bool bad = false;
	int r;

	*res = (struct engine_schema_result){ 0 };
	sr_clear(e);
	for (size_t i = 0; i < e->n_nss && which == SIZE_MAX; i++)
		if (strcmp(e->nss[i].ns, m->ns) == 0)
			which = i;
	if (which == SIZE_MAX)
		return -ENOENT;
	struct ns_entry *ns = &e->nss[which];
	r = build_schema(e, which, m, m->server, NULL, &s, &bad, &n_tools);
	if (r < 0)
		return r;
	if (!bad) {
		r = bp_policy_reload(e->policy, s, &np, &diags);
		if (r == -EINVAL) {
			r = diag_error(e, diags, m->server);
			bad = true;
		}
		for (size_t i = 0; !bad && diags && i < bp_diags_count(diags); i++) {
			enum bp_severity sev;
			unsigned ln, col;
			const char *msg = bp_diag_message(diags, i, &sev, &ln, &col);
			/*
			 * The rules of the namespaces still pending (other servers) are
			 * no news to this sender: left out.
			 */
			if (sev == BP_WARNING && !strstr(msg, "has not listed its tools"))
				sr_warn(e, "line %u:%u: %s", ln, col, msg);
		}
		bp_diags_free(diags);
		diags = NULL;
		if (r < 0) {
			bp_schema_free(s);
			return r;
		}
	}
	if (!bad) {
		Box__PolicyToolSchema *copy = NULL;
		r = copy_schema_msg(m, &copy);
		if (r == 0)
			r = adopt_policy(e, np, s);
		if (r < 0) {
			if (copy)
				box__policy_tool_schema__free_unpacked(copy, NULL);
			bp_policy_free(np);
			bp_schema_free(s);
			return r;
		}
		if (ns->tools)
			box__policy_tool_schema__free_unpacked(ns->tools, NULL);
		ns->tools = copy;
		ns->state = NS_READY;
		free(ns->failed);
		ns->failed = NULL;
	} else {
		/* Failed: NS's actions deny, the other namespaces stay as they are. */
		bp_schema_free(s);
		s = NULL;
		if (!e->sr_error)
			return -ENOMEM;
		bool ignored = false;
		r = build_schema(e, which, NULL, m->server, e->sr_error, &s, &ignored, &n_tools);
		if (r == 0)
			r = bp_policy_reload(e->policy, s, &np, &diags);
		bp_diags_free(diags);
		if (r == 0)
			r = adopt_policy(e, np, s);
		if (r < 0) {
			bp_policy_free(np);
			bp_schema_free(s);
			return r == -EINVAL ? -EPROTO : r;
		}
		char *why = strdup(e->sr_error);
		if (!why)
			return -ENOMEM;
		if (ns->tools)
			box__policy_tool_schema__free_unpacked(ns->tools, NULL);
		ns->tools = NULL;
		ns->state = NS_FAILED;
		free(ns->failed);
		ns->failed = why;
		n_tools = 0;
	}
	char *server = strdup(m->server);
	if (!server)
		return -ENOMEM;
	free(ns->server);
	ns->server = server;
	res->ok = ns->state == NS_READY;
	res->error = res->ok ? NULL : e->sr_error;
	res->warnings = (const char *const *)e->sr_warnings;
	res->n_warnings = e->n_sr_warnings;
	res->tools = n_tools;
	return 0;
}

/* ---- live reload ---------------------------------------------------------- */

/* The first error of DIAGS as "line L:C: message" into E's error (or WHAT). */
static int
load_error(struct engine *e, const struct bp_diags *d, const char *what)
{
	for (size_t i = 0; d && i < bp_diags_count(d); i++) {
		enum bp_severity sev;
		unsigned ln, col;
		const char *msg = bp_diag_message(d, i, &sev, &ln, &col);
		if (sev == BP_ERROR)
			return sr_fail(e, "line %u:%u: %s", ln, col, msg);
	}
	return sr_fail(e, "%s", what);
}

/* The monitor, its event scratch and the history go: the new policy has no temporal rule. */
static void
temporal_stop(struct engine *e)
{
	if (e->hist)
		(void)history_sync(e->hist); /* what was appended is kept, as at an exit */
	bp_event_free(e->ev);
	e->ev = NULL;
	bp_monitor_free(e->mon);
	e->mon = NULL;
	e->hist = history_free(e->hist);
	epochs_free(e);
	free(e->ckpts);
	e->ckpts = NULL;
	e->n_ckpts = e->cap_ckpts = 0;
	e->events_since_ckpt = 0;
	free(e->hashes);
	e->hashes = NULL;
	e->n_hashes = 0;
	e->horizon_ns = 0;
}

/* OP and OS (the policy of generation GEN) are kept for engine_decide_generation. */
static void
keep_old(struct engine *e, uint64_t gen, struct bp_policy *op, struct bp_schema *os)
{
	if (e->n_old == ENGINE_GENERATIONS_KEPT) {
		bp_policy_free(e->old[0].policy);
		bp_schema_free(e->old[0].schema);
		memmove(e->old, e->old + 1, (e->n_old - 1) * sizeof(e->old[0]));
		e->n_old--;
	}
	e->old[e->n_old].generation = gen;
	e->old[e->n_old].policy = op;
	e->old[e->n_old].schema = os;
	e->n_old++;
}

int
engine_reload(struct engine *e, const char *text, size_t len, int64_t now_ns,
	      struct engine_reload_result *res)
{
	struct bp_schema *s = NULL;
	struct bp_policy *np = NULL;
	struct bp_diags *diags = NULL;
	struct bp_request *req = NULL;
	bool bad = false;
	size_t n_tools = 0;
	int r;

	*res = (struct engine_reload_result){ .generation = e->generation };
	sr_clear(e);
	/* The schema as it stands: the MCP namespaces' tools that registered are checked. */
	r = build_schema(e, SIZE_MAX, NULL, NULL, NULL, &s, &bad, &n_tools);
	if (r < 0)
		return r;
	if (bad)
		goto refused;
	struct bp_load_options lo = { .home = e->home, .schema = s };
	r = bp_policy_load(text ? text : "", text ? len : 0, &lo, &np, &diags);
	if (r == -ENOMEM) {
		bp_diags_free(diags);
		bp_schema_free(s);
		return r;
	}
	if (r < 0) {
		r = load_error(e, diags, "the policy does not load");
		bp_diags_free(diags);
		bp_schema_free(s);
		if (r < 0)
			return r;
		goto refused;
	}
	bp_diags_free(diags);
	diags = NULL;
	size_t rules = bp_policy_rule_count(np), trules = 0;
	for (size_t i = 0; i < rules; i++)
		if (bp_policy_temporal_count(np, i) > 0)
			trules++;
	r = bp_request_new(np, &req);
	if (r < 0)
		goto fail;
	struct bp_policy *op = e->policy;
	struct bp_schema *os = e->schema;
	size_t kept = 0;
	if (trules > 0 && e->mon) {
		/* As across runs: a rule whose parsed text is unchanged keeps its events. */
		struct bp_event *ev = NULL;
		struct bp_monitor *mon = NULL;
		r = bp_event_new(np, &ev);
		if (r == 0)
			r = bp_monitor_migrate(e->mon, np, &mon, &diags);
		if (r < 0) {
			bp_event_free(ev);
			if (r == -ENOMEM)
				goto fail;
			r = load_error(e, diags, "the temporal rules do not load");
			bp_diags_free(diags);
			bp_request_free(req);
			bp_policy_free(np);
			bp_schema_free(s);
			if (r < 0)
				return r;
			goto refused;
		}
		bp_diags_free(diags);
		e->mon = mon; /* migrate freed the old one */
		bp_event_free(e->ev);
		e->ev = ev;
		uint64_t *old_h = TAKE_PTR(e->hashes);
		size_t n_old_h = e->n_hashes;
		e->policy = np;
		e->schema = s;
		e->st.rules = rules;
		r = rule_hashes(e);
		for (size_t i = 0; r == 0 && i < e->n_hashes; i++)
			if (has_hash(old_h, n_old_h, e->hashes[i]))
				kept++;
		free(old_h);
		if (r < 0)
			history_poison(e->hist); /* no epoch can say which rules are live: deny */
		/* The epoch says which rules the events from here on belong to (a restart replays). */
		else if ((r = write_epoch(e, now_ns)) < 0)
			history_poison(e->hist);
	} else if (trules > 0) {
		/* No monitor yet: recover and replay the history, exactly as a start does. */
		char why[512] = "";
		e->policy = np;
		e->schema = s;
		e->st.rules = rules;
		e->temporal = true;
		r = temporal_start(e, now_ns, why, sizeof(why));
		if (r < 0) {
			e->policy = op;
			e->schema = os;
			e->temporal = false;
			e->st.rules = bp_policy_rule_count(op);
			free(e->hashes);
			e->hashes = NULL;
			e->n_hashes = 0;
			bp_request_free(req);
			bp_policy_free(np);
			bp_schema_free(s);
			if (r == -ENOMEM)
				return r;
			if (sr_fail(e, "%s", why[0] ? why : "the history cannot be used") < 0)
				return -ENOMEM;
			goto refused;
		}
		kept = e->st.rules_kept;
	} else {
		temporal_stop(e);
		e->policy = np;
		e->schema = s;
	}
	bp_request_free(e->req);
	e->req = req;
	keep_old(e, e->generation, op, os);
	e->generation++;
	e->temporal = trules > 0;
	e->st.rules = rules;
	e->st.temporal_rules = trules;
	e->st.rules_kept = kept;
	e->st.temporal = e->temporal;
	e->sync = e->sync_opt >= 0 ? (enum engine_sync)e->sync_opt
		  : e->temporal	   ? ENGINE_SYNC_ALWAYS
				   : ENGINE_SYNC_OFF;
	e->st.sync = e->sync;
	res->ok = true;
	res->generation = e->generation;
	res->rules = rules;
	res->temporal_rules = trules;
	res->rules_kept = kept;
	return 0;
refused:
	res->ok = false;
	res->error = e->sr_error;
	res->generation = e->generation;
	res->rules = e->st.rules;
	res->temporal_rules = e->st.temporal_rules;
	res->rules_kept = e->st.rules_kept;
	return 0;
fail:
	bp_request_free(req);
	bp_policy_free(np);
	bp_schema_free(s);
	return r;
}

uint64_t
engine_generation(const struct engine *e)
{
	return e->generation;
}

int
engine_decide_generation(struct engine *e, uint64_t gen, const Box__DecideRequest *m,
			 struct engine_result *res)
{
	struct bp_policy *p = NULL;
	struct bp_request *req = NULL;

	*res = (struct engine_result){ 0 };
	for (size_t i = 0; i < e->n_old; i++)
		if (e->old[i].generation == gen)
			p = e->old[i].policy;
	if (!p)
		return -ENOENT;
	if (!e->old_dec && bp_decision_new(&e->old_dec) < 0)
		return -ENOMEM;
	int r = bp_request_new(p, &req);
	if (r == 0)
		r = bp_request_fill_proto(req, m->action, m->input, m->n_input);
	if (r == 0)
		r = bp_decide(p, req, NULL, e->old_dec);
	bp_request_free(req);
	if (r < 0)
		return r;
	size_t n = bp_decision_rule_count(e->old_dec);
	if (n > e->cap_old_rules) {
		const char **v = realloc(e->old_rules, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		e->old_rules = v;
		e->cap_old_rules = n;
	}
	for (size_t i = 0; i < n; i++)
		e->old_rules[i] = bp_decision_rule_name(e->old_dec, i);
	res->rules = e->old_rules;
	res->n_rules = n;
	res->permit = bp_decision_verdict(e->old_dec) == BP_PERMIT;
	res->cause = (int)bp_decision_cause(e->old_dec);
	if (res->permit && res->cause != BOX__DECISION_CAUSE__CAUSE_PERMITTED &&
	    res->cause != BOX__DECISION_CAUSE__CAUSE_NOT_REFINED)
		res->permit = false;
	res->message = bp_decision_message(e->old_dec);
	return 0;
}

void
engine_defer_sync(struct engine *e, bool defer)
{
	e->defer_sync = defer;
}

enum engine_sync
engine_sync_mode(const struct engine *e)
{
	return e->hist ? e->sync : ENGINE_SYNC_OFF;
}

int
engine_record(struct engine *e, const Box__RecordRequest *m, int64_t now_ns, int64_t *time_ret)
{
	int r;
	int64_t t = stamp(e, now_ns);

	*time_ret = t;
	if (!e->temporal) {
		/* Nothing is written and no rule looks back; the log line still gets its time. */
		e->last_time = t;
		return 0;
	}
	r = fill_event(e, (enum bp_event_kind)m->kind, t, m->action, m->input, m->n_input,
		       m->output, m->n_output);
	if (r < 0)
		return r;
	if (bp_event_problem(e->ev))
		return -EINVAL;
	if (history_failed(e->hist))
		return -EIO;
	r = write_event(e, m->kind, t, m->action, m->input, m->n_input, m->output, m->n_output);
	if (r < 0) {
		history_poison(e->hist);
		return r;
	}
	r = bp_monitor_observe(e->mon, e->ev, NULL);
	if (r < 0) {
		history_poison(e->hist);
		return r;
	}
	e->last_time = bp_monitor_last_time(e->mon);
	return 0;
}

int
engine_history_free(const struct engine *e, const char *action)
{
	return bp_history_free(e->policy, e->mon, action);
}

bool
engine_needs_sync(const struct engine *e)
{
	return e->hist && e->sync != ENGINE_SYNC_OFF && history_dirty(e->hist);
}

int
engine_sync(struct engine *e)
{
	if (!e->hist)
		return 0;
	return history_sync(e->hist);
}

uint64_t
engine_history_syncs(const struct engine *e)
{
	return e->hist ? history_syncs(e->hist) : 0;
}

void
engine_poison_history(struct engine *e)
{
	if (e->hist)
		history_poison(e->hist);
}

int
engine_maybe_compact(struct engine *e, int64_t now_ns, bool force)
{
	if (!e->hist || history_failed(e->hist) || e->n_ckpts == 0 || e->n_epochs == 0)
		return 0;
	uint64_t size = history_size(e->hist);
	if (!force && (size < COMPACT_MIN_BYTES || size < 2 * e->compacted_size))
		return 0;
	/*
	 * Keep from the last checkpoint at or before the first event inside the
	 * horizon (so nothing inside it is lost); drop everything before.
	 */
	int64_t cutoff = now_ns - e->horizon_ns;
	size_t k = 0;
	for (size_t i = 0; i < e->n_ckpts && e->ckpts[i].time < cutoff; i++)
		k = i;
	if (k == 0) {
		e->compacted_size = size;
		return 0;
	}
	uint64_t keep_from = e->ckpts[k].offset;
	/* The epoch that governs keep_from opens the new file. */
	size_t g = 0;
	for (size_t i = 0; i < e->n_epochs; i++)
		if (e->epochs[i].offset < keep_from)
			g = i;
	struct history_rec head = { REC_EPOCH, e->epochs[g].raw, e->epochs[g].raw_len };
	int r = history_compact(e->hist, &head, 1, keep_from);
	if (r < 0)
		return r;
	/*
	 * New offsets: the file header, then epoch g, then the old bytes from
	 * keep_from. The file header has a fixed size, so take it from the
	 * history itself: new size - (old size - keep_from) - epoch frame.
	 */
	uint64_t epoch_frame = HISTORY_FRAME_HEADER + 1 + e->epochs[g].raw_len;
	uint64_t base = history_size(e->hist) - (size - keep_from);
	uint64_t epoch_off = base - epoch_frame;
	for (size_t i = 0; i < g; i++) {
		free(e->epochs[i].raw);
		free(e->epochs[i].hashes);
		free(e->epochs[i].eff);
	}
	memmove(e->epochs, e->epochs + g, (e->n_epochs - g) * sizeof(*e->epochs));
	e->n_epochs -= g;
	e->epochs[0].offset = epoch_off;
	for (size_t i = 1; i < e->n_epochs; i++)
		e->epochs[i].offset = e->epochs[i].offset - keep_from + base;
	memmove(e->ckpts, e->ckpts + k, (e->n_ckpts - k) * sizeof(*e->ckpts));
	e->n_ckpts -= k;
	for (size_t i = 0; i < e->n_ckpts; i++)
		e->ckpts[i].offset = e->ckpts[i].offset - keep_from + base;
	e->compacted_size = history_size(e->hist);
	return 1;
}
