/* SPDX-License-Identifier: Apache-2.0 */
/*
 * temporal_monitor.c — the incremental temporal monitor (docs/box-policy.5.md;
 * docs/box-policy.5.md): events, per-rule retained state pruned
 * to each rule's horizon, observe-then-decide, and the evaluator of compiled
 * temporal terms behind bp_decide's temporal hook.
 *
 * State: every observed event is copied once into a reference-counted record;
 * each rule with temporal terms keeps a ring of the records it may still look
 * at — those a predicate of the rule names (action and kind), or every record
 * when the rule uses `previous`, `since` or a body that can hold at any event
 * — and drops records older than the rule's horizon (the sum of nested
 * windows) at every append. Memory is so bounded by windows × event rate.
 *
 * Evaluation follows the reference interpreter: a condition is evaluated at
 * the last observed event (the request being decided); `formerly` scans the
 * retained records in its closed window, `previous` looks at the immediately
 * preceding event, `since` checks its left side at every later event;
 * variables bind left to right (continuation passing, no materialized
 * relations); aggregates deduplicate the projected rows. An aggregate of
 * the common shape `count|sum … for (…). where formerly within W (X)`, X
 * looking at one event only, is instead kept incrementally (struct iagg:
 * distinct rows with multiplicities, expired in FIFO order), so a decision
 * with a full window is O(1), not a scan of it. Work per decision is
 * capped (TM_MAX_STEPS) and so is scratch memory; exceeding either makes the
 * rule error, which denies.
 *
 * Trusts: the policy (loaded and checked); nothing about events or times.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "temporal.h"

#define TM_MAX_STEPS (64u << 20) /* evaluation steps per temporal term and decision */
#define TM_SCRATCH_CAP (64u << 20)
#define TM_MAX_OUTPUTS 8

/* ---- value copies ---- */

static size_t
align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

size_t
tval_size(const struct val *v)
{
	size_t n = 0;
	switch (v->t) {
	case V_STR: return align8((size_t)v->len + 1);
	case V_ENT: return align8((size_t)v->len + 1) + align8(strlen(v->u.e.etype) + 1);
	case V_SET:
		n = align8((size_t)v->len * sizeof(struct val));
		for (uint32_t i = 0; i < v->len; i++)
			n += tval_size(&v->u.items[i]);
		return n;
	case V_REC:
		n = align8((size_t)v->len * sizeof(struct rec_ent));
		for (uint32_t i = 0; i < v->len; i++)
			n += align8(strlen(v->u.rec[i].name) + 1) + tval_size(&v->u.rec[i].v);
		return n;
	default: return 0;
	}
}

static char *
bump(char **mem, size_t n)
{
	char *p = *mem;
	*mem += align8(n);
	return p;
}

void
tval_copy(struct val *dst, const struct val *src, char **mem)
{
	*dst = *src;
	switch (src->t) {
	case V_STR: {
		char *s = bump(mem, (size_t)src->len + 1);
		memcpy(s, src->u.s, src->len);
		s[src->len] = 0;
		dst->u.s = s;
		return;
	}
	case V_ENT: {
		char *s = bump(mem, (size_t)src->len + 1);
		memcpy(s, src->u.e.id, src->len);
		s[src->len] = 0;
		dst->u.e.id = s;
		size_t tl = strlen(src->u.e.etype);
		char *et = bump(mem, tl + 1);
		memcpy(et, src->u.e.etype, tl + 1);
		dst->u.e.etype = et; /* self-contained: the policy may be replaced */
		return;
	}
	case V_SET: {
		struct val *items = (struct val *)bump(mem, (size_t)src->len * sizeof(*items));
		for (uint32_t i = 0; i < src->len; i++)
			tval_copy(&items[i], &src->u.items[i], mem);
		dst->u.items = items;
		return;
	}
	case V_REC: {
		struct rec_ent *ents = (struct rec_ent *)bump(mem, (size_t)src->len * sizeof(*ents));
		for (uint32_t i = 0; i < src->len; i++) {
			size_t nl = strlen(src->u.rec[i].name);
			char *name = bump(mem, nl + 1);
			memcpy(name, src->u.rec[i].name, nl + 1);
			ents[i].name = name;
			ents[i].atom = UINT32_MAX;
			tval_copy(&ents[i].v, &src->u.rec[i].v, mem);
		}
		dst->u.rec = ents;
		return;
	}
	default: return;
	}
}

/* ---- stored events ---- */

struct tevent {
	uint32_t refs;
	uint8_t kind;
	int64_t ts;
	uint64_t seq;
	size_t action; /* schema index; SIZE_MAX: an action whose schema is pending */
	uint32_t n_in, n_out;
	struct rec_ent *in, *out; /* self-contained: names and values copied */
	size_t bytes;
	uint64_t epoch; /* bp_monitor_migrate: the migration that last remapped action */
};

/* ---- events under construction (public) ---- */

struct bp_event {
	const struct bp_policy *p;
	struct bp_request *req;
	uint8_t kind;
	int64_t time;
	size_t n_out;
	struct rec_ent out[TM_MAX_OUTPUTS];
	char problem[160];
};

int
bp_event_new(const struct bp_policy *p, struct bp_event **ret)
{
	if (!p || !ret)
		return -EINVAL;
	struct bp_event *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	int r = bp_request_new(p, &e->req);
	if (r < 0) {
		free(e);
		return r;
	}
	e->p = p;
	*ret = e;
	return 0;
}

void
bp_event_free(struct bp_event *e)
{
	if (!e)
		return;
	bp_request_free(e->req);
	free(e);
}

void
bp_event_reset(struct bp_event *e)
{
	bp_request_reset(e->req);
	e->kind = BP_EVENT_REQUEST;
	e->time = 0;
	e->n_out = 0;
	e->problem[0] = 0;
}

void
bp_event_set_kind(struct bp_event *e, enum bp_event_kind k)
{
	e->kind = (uint8_t)k;
	if (k > BP_EVENT_ERROR && !e->problem[0])
		snprintf(e->problem, sizeof(e->problem), "unknown event kind %d", (int)k);
}

void
bp_event_set_time(struct bp_event *e, int64_t time_ns)
{
	e->time = time_ns;
}

struct bp_request *
bp_event_request(struct bp_event *e)
{
	return e->req;
}

static const struct rattr *
output_attr(struct bp_event *e, const char *field)
{
	if (strncmp(field, "output.", 7) == 0)
		field += 7;
	if (e->req->action == SIZE_MAX) {
		if (!e->problem[0])
			snprintf(e->problem, sizeof(e->problem), "an output field before the action");
		return NULL;
	}
	const struct s_action *a = &e->p->schema.actions[e->req->action];
	for (size_t i = 0; a->has_output && i < a->output.n; i++)
		if (strcmp(a->output.attrs[i].name, field) == 0)
			return &a->output.attrs[i];
	if (!e->problem[0])
		snprintf(e->problem, sizeof(e->problem), "unknown output field \"%.60s\" for action %s",
			 field, a->id);
	return NULL;
}

static int
put_output(struct bp_event *e, const struct rattr *a, const struct val *v)
{
	for (size_t i = 0; i < e->n_out; i++)
		if (strcmp(e->out[i].name, a->name) == 0) {
			e->out[i].v = *v;
			return 0;
		}
	if (e->n_out == TM_MAX_OUTPUTS)
		return -E2BIG;
	e->out[e->n_out++] = (struct rec_ent){ .name = a->name, .atom = a->atom, .v = *v };
	return 0;
}

int
bp_event_set_output_long(struct bp_event *e, const char *field, int64_t v)
{
	if (e->req->action_pending)
		return 0;
	const struct rattr *a = output_attr(e, field);
	if (!a)
		return -ENOENT;
	if (a->ty.k != TY_LONG) {
		if (!e->problem[0])
			snprintf(e->problem, sizeof(e->problem), "output field \"%s\" has the wrong type",
				 a->name);
		return -EINVAL;
	}
	struct val x = { .t = V_LONG, .u.l = v };
	return put_output(e, a, &x);
}

int
bp_event_set_output_string(struct bp_event *e, const char *field, const char *s, size_t len)
{
	if (e->req->action_pending)
		return 0;
	const struct rattr *a = output_attr(e, field);
	if (!a)
		return -ENOENT;
	if (len > UINT32_MAX)
		return -E2BIG;
	struct val x = { .len = (uint32_t)len };
	if (a->ty.k == TY_ENTITY) {
		const struct bp_schema *sc = &e->p->schema;
		for (size_t i = 0; i < sc->n_enums; i++) {
			if (strcmp(sc->enums[i].etype, a->ty.etype) != 0)
				continue;
			for (size_t j = 0; j < sc->enums[i].n; j++)
				if (strlen(sc->enums[i].ids[j]) == len &&
				    memcmp(sc->enums[i].ids[j], s, len) == 0) {
					x.t = V_ENT;
					x.u.e.etype = a->ty.etype;
					x.u.e.id = sc->enums[i].ids[j];
					return put_output(e, a, &x);
				}
		}
		if (!e->problem[0])
			snprintf(e->problem, sizeof(e->problem), "\"%.*s\" is not a valid %s",
				 (int)(len > 60 ? 60 : len), s, a->ty.etype);
		return -EINVAL;
	}
	if (a->ty.k != TY_STRING) {
		if (!e->problem[0])
			snprintf(e->problem, sizeof(e->problem), "output field \"%s\" has the wrong type",
				 a->name);
		return -EINVAL;
	}
	char *copy = arena_strndup(&e->req->ar, s, len);
	if (!copy)
		return -ENOMEM;
	x.t = V_STR;
	x.u.s = copy;
	return put_output(e, a, &x);
}

const char *
bp_event_problem(struct bp_event *e)
{
	if (e->problem[0])
		return e->problem;
	if (e->req->action_pending)
		return NULL;
	const char *p = bp_request_problem(e->req);
	if (p)
		return p;
	if (e->n_out && e->kind != BP_EVENT_RESPONSE) {
		snprintf(e->problem, sizeof(e->problem), "only a response event carries output");
		return e->problem;
	}
	return NULL;
}

const char *
bp_event_kind_str(enum bp_event_kind k)
{
	switch (k) {
	case BP_EVENT_REQUEST: return "request";
	case BP_EVENT_RESPONSE: return "response";
	case BP_EVENT_ERROR: return "error";
	default: return "?";
	}
}

int
bp_event_kind_parse(const char *s, enum bp_event_kind *ret)
{
	if (strcmp(s, "request") == 0)
		*ret = BP_EVENT_REQUEST;
	else if (strcmp(s, "response") == 0)
		*ret = BP_EVENT_RESPONSE;
	else if (strcmp(s, "error") == 0)
		*ret = BP_EVENT_ERROR;
	else
		return -EINVAL;
	return 0;
}

/* ---- the monitor ---- */

/*
 * Incremental aggregates. `count`/`sum … for (vars). where formerly within W
 * (X)` where X only looks at the event it is evaluated at (predicates, tp,
 * comparisons, !, &&, exists; no context, no nested temporal operator or
 * aggregate) yields, at every event, rows that never change. Each such
 * aggregate keeps the multiset of rows of the rule's retained events within W
 * (a hash of distinct rows with their multiplicity, and a FIFO of the
 * contributions so expiry decrements them): a decision at the last event then
 * costs O(1) plus the rows of the current event when the rule does not retain
 * it, instead of a scan of the window. Anything else, or a state that could
 * not be kept (ENOMEM), falls back to the scan.
 */
struct akey {
	struct akey *next;
	uint64_t hash;
	size_t refs;
	size_t bytes;
	struct val row[]; /* width values, deep copies */
};

struct acontrib {
	int64_t ts;
	struct akey *key;
};

struct iagg {
	const struct tagg *a;
	const struct tnode *x; /* the formerly's operand */
	int64_t window;
	uint64_t outer; /* variables X reads besides the `for` ones: must be unbound */
	int sum_col;    /* -1: count */
	bool broken;
	struct akey **buckets; /* nb: a power of two, or 0 */
	size_t nb, n_keys;
	__int128 sum;
	struct acontrib *q; /* FIFO, oldest first */
	size_t qcap, qhead, qn;
	size_t bytes;
};

struct rstate {
	uint64_t hash;
	size_t n_terms;
	struct tprog *terms;
	int64_t horizon;
	bool needs_all;
	uint8_t *rel; /* per schema action: bit k set when a predicate names kind k */
	/* ring of retained events, oldest first */
	struct tevent **ring;
	size_t cap, head, n;
	size_t n_aggs;
	struct iagg *aggs;
};

struct ectx;

struct bp_monitor {
	const struct bp_policy *p;
	struct arena ar; /* compiled terms */
	size_t n_rules;
	struct rstate *rules;
	struct tevent *last;
	bool has_last;
	int64_t last_ts;
	uint64_t seq;
	uint64_t epoch;
	size_t bytes;
	struct arena scratch;
	struct ectx *dx, *fx; /* evaluation contexts: decisions, single events */
	bool no_incremental;  /* tmon_set_incremental(m, false): always scan */
	uint64_t work;        /* evaluation steps and expiries, for tests */
	int64_t last_agg;     /* the value of the last aggregate computed */
	bool has_last_agg;
};

static int aggs_setup(struct bp_monitor *m, struct rstate *rs);
static void aggs_free(struct bp_monitor *m, struct rstate *rs);
static void aggs_prune(struct bp_monitor *m, struct rstate *rs, int64_t now);
static void aggs_feed(struct bp_monitor *m, struct rstate *rs, const struct tevent *e);
static int ectx_setup(struct bp_monitor *m);

static void
ev_unref(struct bp_monitor *m, struct tevent *e)
{
	if (e && --e->refs == 0) {
		m->bytes -= e->bytes;
		free(e);
	}
}

static void
mark_relevant(struct rstate *rs, const struct tnode *n);

static void
mark_term(struct rstate *rs, const struct tterm *x)
{
	if (x->kind == TT_AGG)
		mark_relevant(rs, x->agg->body);
	else if (x->kind == TT_SET)
		for (size_t i = 0; i < x->n; i++)
			mark_term(rs, x->items[i]);
}

static void
mark_relevant(struct rstate *rs, const struct tnode *n)
{
	switch (n->kind) {
	case TN_AND:
		for (size_t i = 0; i < n->n; i++)
			mark_relevant(rs, n->items[i]);
		return;
	case TN_NOT:
	case TN_FORMERLY:
	case TN_PREVIOUS:
	case TN_EXISTS: mark_relevant(rs, n->a); return;
	case TN_SINCE:
		mark_relevant(rs, n->a);
		mark_relevant(rs, n->b);
		return;
	case TN_PRED:
		if (n->action != SIZE_MAX && n->op <= BP_EVENT_ERROR)
			rs->rel[n->action] |= (uint8_t)(1u << n->op);
		return;
	case TN_CMP:
		mark_term(rs, n->l);
		mark_term(rs, n->r);
		return;
	default: return;
	}
}

int
bp_monitor_new(const struct bp_policy *p, struct bp_monitor **ret, struct bp_diags **diags)
{
	if (!p || !ret)
		return -EINVAL;
	*ret = NULL;
	struct bp_monitor *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->p = p;
	m->ar.cap = 256u << 20;
	m->scratch.cap = TM_SCRATCH_CAP;
	m->n_rules = p->n_rules;
	m->rules = calloc(p->n_rules ? p->n_rules : 1, sizeof(*m->rules));
	struct bp_diags *d = diags ? *diags : NULL;
	if (diags && !d) {
		d = calloc(1, sizeof(*d));
		*diags = d;
	}
	if (!m->rules || (diags && !d)) {
		bp_monitor_free(m);
		return -ENOMEM;
	}
	int ret_err = 0;
	for (size_t i = 0; i < p->n_rules; i++) {
		struct rstate *rs = &m->rules[i];
		size_t nt = p->rules[i].n_temporal;
		if (nt == 0)
			continue;
		rs->hash = bp_policy_rule_hash(p, i);
		rs->n_terms = nt;
		rs->terms = arena_alloc(&m->ar, nt * sizeof(*rs->terms));
		rs->rel = arena_alloc(&m->ar, p->schema.n_actions ? p->schema.n_actions : 1);
		if (!rs->terms || !rs->rel) {
			bp_monitor_free(m);
			return -ENOMEM;
		}
		for (size_t k = 0; k < nt; k++) {
			struct tprog *t = &rs->terms[k];
			int r = tprog_parse(p, i, k, &m->ar, t, d);
			if (r == 0)
				r = tprog_check(p, i, t, d);
			if (r == -ENOMEM) {
				bp_monitor_free(m);
				return r;
			}
			if (r < 0) {
				ret_err = -EINVAL;
				continue;
			}
			tprog_analyze(t);
			if (t->horizon > rs->horizon)
				rs->horizon = t->horizon;
			rs->needs_all |= t->needs_all;
			mark_relevant(rs, t->root);
		}
		if (ret_err == 0 && aggs_setup(m, rs) < 0) {
			bp_monitor_free(m);
			return -ENOMEM;
		}
	}
	if (ret_err < 0) {
		bp_monitor_free(m);
		return ret_err;
	}
	if (ectx_setup(m) < 0) {
		bp_monitor_free(m);
		return -ENOMEM;
	}
	m->bytes = sizeof(*m) + m->n_rules * sizeof(*m->rules) + m->ar.total;
	*ret = m;
	return 0;
}

void
bp_monitor_free(struct bp_monitor *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_rules && m->rules; i++) {
		struct rstate *rs = &m->rules[i];
		for (size_t k = 0; k < rs->n; k++)
			ev_unref(m, rs->ring[(rs->head + k) % rs->cap]);
		free(rs->ring);
		aggs_free(m, rs);
	}
	ev_unref(m, m->last);
	free(m->dx);
	free(m->fx);
	free(m->rules);
	arena_free(&m->ar);
	arena_free(&m->scratch);
	free(m);
}

const struct bp_policy *
bp_monitor_policy(const struct bp_monitor *m)
{
	return m->p;
}

int
bp_history_free(const struct bp_policy *p, const struct bp_monitor *m, const char *action)
{
	size_t a;

	if (!p || !action || (m && m->p != p))
		return -EINVAL;
	if (!schema_find_action(&p->schema, "Box::Action", action, &a) || a >= p->schema.n_actions)
		return -ENOENT;
	/* Every rule whose scope admits the action: its decisions read no history. */
	for (size_t c = 0; c < p->n_by_action[a]; c++)
		if (p->rules[p->by_action[a][c]].n_temporal)
			return 0;
	if (!m)
		return bp_policy_has_temporal(p) ? -EINVAL : 1;
	/* No temporal rule keeps its events (the same test bp_monitor_observe makes). */
	for (size_t i = 0; i < m->n_rules; i++) {
		const struct rstate *rs = &m->rules[i];
		if (rs->n_terms && (rs->needs_all || rs->rel[a]))
			return 0;
	}
	return 1;
}

int64_t
bp_monitor_stamp(const struct bp_monitor *m, int64_t now_ns)
{
	if (m->has_last && now_ns <= m->last_ts)
		return m->last_ts == INT64_MAX ? INT64_MAX : m->last_ts + 1;
	return now_ns;
}

int64_t
bp_monitor_last_time(const struct bp_monitor *m)
{
	return m->has_last ? m->last_ts : INT64_MIN;
}

size_t
bp_monitor_rule_events(const struct bp_monitor *m, size_t i)
{
	return i < m->n_rules ? m->rules[i].n : 0;
}

size_t
bp_monitor_memory(const struct bp_monitor *m)
{
	return m->bytes;
}

static struct tevent *
ring_at(const struct rstate *rs, size_t k)
{
	return rs->ring[(rs->head + k) % rs->cap];
}

/* ns between THEN and NOW, saturated */
static int64_t
age(int64_t now, int64_t then)
{
	__int128 d = (__int128)now - then;
	if (d > INT64_MAX)
		return INT64_MAX;
	if (d < INT64_MIN)
		return INT64_MIN;
	return (int64_t)d;
}

static void
prune(struct bp_monitor *m, struct rstate *rs, int64_t now)
{
	while (rs->n && age(now, ring_at(rs, 0)->ts) > rs->horizon) {
		ev_unref(m, ring_at(rs, 0));
		rs->head = (rs->head + 1) % rs->cap;
		rs->n--;
	}
	/* give memory back after a burst */
	if (rs->cap > 64 && rs->n < rs->cap / 8) {
		size_t cap = rs->cap / 2;
		struct tevent **nr = malloc(cap * sizeof(*nr));
		if (nr) {
			for (size_t k = 0; k < rs->n; k++)
				nr[k] = ring_at(rs, k);
			free(rs->ring);
			m->bytes -= (rs->cap - cap) * sizeof(*nr);
			rs->ring = nr;
			rs->cap = cap;
			rs->head = 0;
		}
	}
}

static int
ring_push(struct bp_monitor *m, struct rstate *rs, struct tevent *e)
{
	if (rs->n >= BP_MONITOR_MAX_EVENTS)
		return -E2BIG;
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 16;
		struct tevent **nr = malloc(cap * sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		for (size_t k = 0; k < rs->n; k++)
			nr[k] = ring_at(rs, k);
		free(rs->ring);
		m->bytes += (cap - rs->cap) * sizeof(*nr);
		rs->ring = nr;
		rs->cap = cap;
		rs->head = 0;
	}
	rs->ring[(rs->head + rs->n) % rs->cap] = e;
	rs->n++;
	e->refs++;
	return 0;
}

static struct tevent *
make_event(uint8_t kind, size_t action, const struct rec_ent *in, size_t n_in,
	   const struct rec_ent *out, size_t n_out)
{
	size_t size = align8(sizeof(struct tevent)) + align8((n_in + n_out) * sizeof(struct rec_ent));
	for (size_t i = 0; i < n_in; i++)
		size += tval_size(&in[i].v) + align8(strlen(in[i].name) + 1);
	for (size_t i = 0; i < n_out; i++)
		size += tval_size(&out[i].v) + align8(strlen(out[i].name) + 1);
	struct tevent *e = malloc(size);
	if (!e)
		return NULL;
	memset(e, 0, sizeof(*e));
	char *mem = (char *)e + align8(sizeof(*e));
	e->in = (struct rec_ent *)bump(&mem, (n_in + n_out) * sizeof(struct rec_ent));
	e->out = e->in + n_in;
	for (size_t i = 0; i < n_in + n_out; i++) {
		const struct rec_ent *src = i < n_in ? &in[i] : &out[i - n_in];
		struct rec_ent *dst = &e->in[i];
		size_t nl = strlen(src->name);
		char *name = bump(&mem, nl + 1);
		memcpy(name, src->name, nl + 1);
		dst->name = name;
		dst->atom = UINT32_MAX;
		tval_copy(&dst->v, &src->v, &mem);
	}
	e->n_in = (uint32_t)n_in;
	e->n_out = (uint32_t)n_out;
	e->kind = kind;
	e->action = action;
	e->bytes = size;
	return e;
}

static bool
hash_in(uint64_t h, const uint64_t *hashes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (hashes[i] == h)
			return true;
	return false;
}

/* Append E (its time already stamped) to the rules it concerns; takes E. */
static int
append(struct bp_monitor *m, struct tevent *e, int64_t ts, const uint64_t *hashes, size_t nh,
       bool filter)
{
	e->ts = ts;
	e->seq = ++m->seq;
	e->refs = 1; /* as m->last */
	m->bytes += e->bytes;
	int ret = 0;
	for (size_t i = 0; i < m->n_rules; i++) {
		struct rstate *rs = &m->rules[i];
		if (!rs->n_terms)
			continue;
		prune(m, rs, ts);
		aggs_prune(m, rs, ts);
		if (filter && !hash_in(rs->hash, hashes, nh))
			continue;
		bool want = rs->needs_all ||
			    (e->action != SIZE_MAX && (rs->rel[e->action] & (1u << e->kind)));
		if (want) {
			int r = ring_push(m, rs, e);
			if (r < 0 && ret == 0)
				ret = r;
			if (r == 0)
				aggs_feed(m, rs, e);
		}
	}
	ev_unref(m, m->last);
	m->last = e;
	m->has_last = true;
	m->last_ts = ts;
	return ret;
}

static int
observe(struct bp_monitor *m, const struct bp_event *ce, const uint64_t *hashes, size_t n,
	bool filter, int64_t *time_ret)
{
	struct bp_event *e = (struct bp_event *)ce;
	if (!m || !e || e->p != m->p)
		return -EINVAL;
	if (bp_event_problem(e))
		return -EINVAL;
	const struct bp_request *r = e->req;
	struct tevent *te =
		make_event(e->kind, r->action_pending ? SIZE_MAX : r->action, r->fields,
			   r->action_pending ? 0 : r->n_fields, e->out, e->n_out);
	if (!te)
		return -ENOMEM;
	int64_t ts = bp_monitor_stamp(m, e->time);
	if (time_ret)
		*time_ret = ts;
	return append(m, te, ts, hashes, n, filter);
}

int
bp_monitor_observe(struct bp_monitor *m, const struct bp_event *e, int64_t *time_ret)
{
	return observe(m, e, NULL, 0, false, time_ret);
}

int
bp_monitor_observe_for_rules(struct bp_monitor *m, const struct bp_event *e,
			     const uint64_t *hashes, size_t n, int64_t *time_ret)
{
	return observe(m, e, hashes, n, true, time_ret);
}

/* ---- evaluation ---- */

struct kont {
	int (*fn)(struct ectx *x, const struct kont *k);
	const struct kont *next;
	const void *node;
	size_t i;
	size_t pos, from;
	void *data;
};

struct ectx {
	struct bp_monitor *m;
	const struct rstate *rs;
	struct rstate *wrs; /* the same, writable: its incremental aggregates */
	const struct tprog *t;
	const struct bp_request *req;
	struct val env[TP_MAX_VARS];
	size_t n_log;
	const struct tevent *extra;
	size_t n_view;
	uint64_t steps;
	int depth;
};

static const struct tevent *
view_at(const struct ectx *x, size_t k)
{
	return k < x->n_log ? ring_at(x->rs, k) : x->extra;
}

static int eval(struct ectx *x, const struct tnode *n, size_t pos, const struct kont *k);

static int
k_call(struct ectx *x, const struct kont *k)
{
	return k->fn(x, k);
}

static int
k_stop(struct ectx *x, const struct kont *k)
{
	(void)x;
	(void)k;
	return 1;
}

static const struct val *
rec_get(const struct rec_ent *ents, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(ents[i].name, name) == 0)
			return &ents[i].v;
	return NULL;
}

static const struct val *
walk_val(const struct val *v, const char **path, size_t from, size_t n)
{
	for (size_t i = from; v && i < n; i++) {
		if (v->t != V_REC)
			return NULL;
		v = rec_get(v->u.rec, v->len, path[i]);
	}
	return v;
}

static const struct val agent_val = {
	.t = V_ENT, .len = 4, .u.e = { .etype = "Box::Agent", .id = "self" }
};
static const struct val resource_val = {
	.t = V_ENT, .len = 6, .u.e = { .etype = "Box::Resource", .id = "unused" }
};

static const struct val *
event_field(const struct tevent *e, const struct targ *g)
{
	const char *h = g->path[0];
	if (strcmp(h, "input") == 0) {
		if (g->n_path < 2)
			return NULL;
		return walk_val(rec_get(e->in, e->n_in, g->path[1]), g->path, 2, g->n_path);
	}
	if (strcmp(h, "output") == 0) {
		if (g->n_path < 2)
			return NULL;
		return walk_val(rec_get(e->out, e->n_out, g->path[1]), g->path, 2, g->n_path);
	}
	if (strcmp(h, "callerPrincipal") == 0)
		return &agent_val;
	if (strcmp(h, "callerResource") == 0)
		return &resource_val;
	return NULL;
}

enum { R_VAL = 0, R_UNBOUND, R_NONE, R_WILD };

static int agg_value(struct ectx *x, const struct tagg *a, size_t pos, struct val *out);

/* Resolve term X at POS into *out; returns R_* or a negative errno. */
static int
resolve(struct ectx *x, const struct tterm *t, size_t pos, struct val *out)
{
	switch (t->kind) {
	case TT_LIT: *out = t->v; return R_VAL;
	case TT_VAR:
		if (t->var < 0)
			return R_NONE;
		if (x->env[t->var].t == V_NONE)
			return R_UNBOUND;
		*out = x->env[t->var];
		return R_VAL;
	case TT_WILD: return R_WILD;
	case TT_CONTEXT: {
		const struct val *v = walk_val(&x->req->context, t->path, 0, t->n_path);
		if (!v)
			return R_NONE;
		*out = *v;
		return R_VAL;
	}
	case TT_PRINCIPAL:
	case TT_RESOURCE:
		if (t->n_path)
			return R_NONE;
		*out = t->kind == TT_PRINCIPAL ? agent_val : resource_val;
		return R_VAL;
	case TT_SET: {
		struct val *items = arena_alloc(&x->m->scratch, (t->n ? t->n : 1) * sizeof(*items));
		if (!items)
			return -ENOMEM;
		for (size_t i = 0; i < t->n; i++) {
			int r = resolve(x, t->items[i], pos, &items[i]);
			if (r != R_VAL)
				return r < 0 ? r : R_NONE;
		}
		memset(out, 0, sizeof(*out));
		out->t = V_SET;
		out->len = (uint32_t)t->n;
		out->u.items = items;
		return R_VAL;
	}
	case TT_AGG: {
		int r = agg_value(x, t->agg, pos, out);
		return r < 0 ? r : R_VAL;
	}
	default: return R_NONE;
	}
}

/* predicate: match fields one by one, binding as we go */
static int
pred_args(struct ectx *x, const struct tnode *n, const struct tevent *e, size_t i, size_t pos,
	  const struct kont *k)
{
	for (; i < n->n_args; i++) {
		const struct targ *g = &n->args[i];
		const struct val *fv = event_field(e, g);
		if (!fv)
			return 0; /* an absent field never matches, even `_` */
		struct val tv;
		int r = resolve(x, g->t, pos, &tv);
		if (r < 0)
			return r;
		if (r == R_WILD)
			continue;
		if (r == R_NONE)
			return 0;
		if (r == R_UNBOUND) {
			int var = g->t->var;
			x->env[var] = *fv;
			r = pred_args(x, n, e, i + 1, pos, k);
			x->env[var].t = V_NONE;
			return r;
		}
		if (!val_eq(fv, &tv))
			return 0;
	}
	return k_call(x, k);
}

static int
k_and(struct ectx *x, const struct kont *k)
{
	const struct tnode *n = k->node;
	if (k->i == n->n)
		return k_call(x, k->next);
	struct kont nk = *k;
	nk.i = k->i + 1;
	return eval(x, n->items[k->i], k->pos, &nk);
}

/* since: the right side held at k->from; the left side must hold at every later event */
static int
k_since(struct ectx *x, const struct kont *k)
{
	const struct tnode *n = k->node;
	static const struct kont stop = { .fn = k_stop };
	for (size_t m = k->from + 1; m <= k->pos; m++) {
		int r = eval(x, n->a, m, &stop);
		if (r <= 0)
			return r;
	}
	return k_call(x, k->next);
}

static int
compare(struct ectx *x, const struct tnode *n, size_t pos, const struct kont *k)
{
	struct val l, r;
	int rl = resolve(x, n->l, pos, &l);
	if (rl < 0)
		return rl;
	int rr = resolve(x, n->r, pos, &r);
	if (rr < 0)
		return rr;
	if (n->op == TC_EQ) {
		if (rl == R_UNBOUND && rr == R_VAL) {
			x->env[n->l->var] = r;
			int ret = k_call(x, k);
			x->env[n->l->var].t = V_NONE;
			return ret;
		}
		if (rr == R_UNBOUND && rl == R_VAL) {
			x->env[n->r->var] = l;
			int ret = k_call(x, k);
			x->env[n->r->var].t = V_NONE;
			return ret;
		}
	}
	if (rl != R_VAL || rr != R_VAL)
		return 0; /* unresolved: false */
	bool ok;
	switch (n->op) {
	case TC_EQ: ok = val_eq(&l, &r); break;
	case TC_NE: ok = !val_eq(&l, &r); break;
	default:
		if (l.t != V_LONG || r.t != V_LONG)
			return 0;
		ok = n->op == TC_LT   ? l.u.l < r.u.l
		     : n->op == TC_LE ? l.u.l <= r.u.l
		     : n->op == TC_GT ? l.u.l > r.u.l
				      : l.u.l >= r.u.l;
		break;
	}
	return ok ? k_call(x, k) : 0;
}

static int
eval(struct ectx *x, const struct tnode *n, size_t pos, const struct kont *k)
{
	if (++x->steps > TM_MAX_STEPS)
		return -E2BIG;
	switch (n->kind) {
	case TN_PRED: {
		const struct tevent *e = view_at(x, pos);
		if (!e || n->action == SIZE_MAX || e->action != n->action || e->kind != n->op)
			return 0;
		return pred_args(x, n, e, 0, pos, k);
	}
	case TN_TP: {
		const struct tevent *e = view_at(x, pos);
		struct val v = { .t = V_LONG, .u.l = (int64_t)e->seq };
		if (x->env[n->var].t == V_NONE) {
			x->env[n->var] = v;
			int r = k_call(x, k);
			x->env[n->var].t = V_NONE;
			return r;
		}
		return val_eq(&x->env[n->var], &v) ? k_call(x, k) : 0;
	}
	case TN_AND: {
		struct kont nk = { .fn = k_and, .next = k, .node = n, .i = 1, .pos = pos };
		return eval(x, n->items[0], pos, &nk);
	}
	case TN_NOT: {
		static const struct kont stop = { .fn = k_stop };
		int r = eval(x, n->a, pos, &stop);
		if (r < 0)
			return r;
		return r ? 0 : k_call(x, k);
	}
	case TN_EXISTS: return eval(x, n->a, pos, k);
	case TN_FORMERLY: {
		int64_t now = view_at(x, pos)->ts;
		for (size_t j = pos + 1; j-- > 0;) {
			if (age(now, view_at(x, j)->ts) > n->window)
				break;
			int r = eval(x, n->a, j, k);
			if (r)
				return r;
		}
		return 0;
	}
	case TN_PREVIOUS: {
		if (pos == 0)
			return 0;
		const struct tevent *cur = view_at(x, pos), *prev = view_at(x, pos - 1);
		if (prev->seq + 1 != cur->seq || age(cur->ts, prev->ts) > n->window)
			return 0;
		return eval(x, n->a, pos - 1, k);
	}
	case TN_SINCE: {
		int64_t now = view_at(x, pos)->ts;
		for (size_t j = pos + 1; j-- > 0;) {
			if (age(now, view_at(x, j)->ts) > n->window)
				break;
			struct kont nk = { .fn = k_since, .next = k, .node = n, .pos = pos, .from = j };
			int r = eval(x, n->b, j, &nk);
			if (r)
				return r;
		}
		return 0;
	}
	case TN_CMP: return compare(x, n, pos, k);
	default: return -EINVAL;
	}
}

/* ---- aggregates: deduplicated rows of the `for` variables ---- */

static uint64_t
mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static uint64_t
bytes_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint64_t
val_hash(const struct val *v)
{
	switch (v->t) {
	case V_BOOL: return mix(0x10 + v->u.b);
	case V_LONG:
	case V_DEC:
	case V_DATETIME:
	case V_DURATION: return mix((uint64_t)v->u.l ^ ((uint64_t)v->t << 56));
	case V_STR: return bytes_hash(v->u.s, v->len);
	case V_ENT: return bytes_hash(v->u.e.id, v->len) ^ mix(bytes_hash(v->u.e.etype,
									   strlen(v->u.e.etype)));
	case V_IP: return bytes_hash((const char *)v->u.ip, 16) ^ v->ip_prefix;
	default: return mix(v->t); /* sets and records: equal ones collide, val_eq decides */
	}
}

struct rowset {
	size_t width; /* values per row */
	size_t n, cap; /* cap: slots, a power of two */
	struct val **slots;
	uint64_t *hashes;
	const int *vars;
	int sum_col; /* -1: count */
	__int128 sum;
};

static int
rowset_grow(struct ectx *x, struct rowset *s)
{
	size_t cap = s->cap ? s->cap * 2 : 64;
	struct val **slots = arena_alloc(&x->m->scratch, cap * sizeof(*slots));
	uint64_t *hashes = arena_alloc(&x->m->scratch, cap * sizeof(*hashes));
	if (!slots || !hashes)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++) {
		if (!s->slots[i])
			continue;
		size_t j = s->hashes[i] & (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = s->slots[i];
		hashes[j] = s->hashes[i];
	}
	s->slots = slots;
	s->hashes = hashes;
	s->cap = cap;
	return 0;
}

static int
k_collect(struct ectx *x, const struct kont *k)
{
	struct rowset *s = k->data;
	uint64_t h = 0x9e3779b97f4a7c15ULL;
	for (size_t i = 0; i < s->width; i++) {
		const struct val *v = &x->env[s->vars[i]];
		if (v->t == V_NONE)
			return 0; /* the load check makes this unreachable */
		h = mix(h ^ val_hash(v)) + i;
	}
	if ((s->n + 1) * 2 > s->cap) {
		int r = rowset_grow(x, s);
		if (r < 0)
			return r;
	}
	size_t j = h & (s->cap - 1);
	while (s->slots[j]) {
		if (s->hashes[j] == h) {
			bool same = true;
			for (size_t i = 0; i < s->width && same; i++)
				same = val_eq(&s->slots[j][i], &x->env[s->vars[i]]);
			if (same)
				return 0;
		}
		j = (j + 1) & (s->cap - 1);
	}
	struct val *row = arena_alloc(&x->m->scratch, (s->width ? s->width : 1) * sizeof(*row));
	if (!row)
		return -ENOMEM;
	for (size_t i = 0; i < s->width; i++)
		row[i] = x->env[s->vars[i]];
	s->slots[j] = row;
	s->hashes[j] = h;
	s->n++;
	if (s->sum_col >= 0 && row[s->sum_col].t == V_LONG)
		s->sum += row[s->sum_col].u.l;
	return 0;
}

static int inc_value(struct ectx *x, const struct tagg *a, size_t pos, struct val *out);

static void
set_long(struct ectx *x, struct val *out, bool sum, size_t n, __int128 total)
{
	memset(out, 0, sizeof(*out));
	out->t = V_LONG;
	if (!sum)
		out->u.l = (int64_t)n;
	else
		out->u.l = total > INT64_MAX ? INT64_MAX
			   : total < INT64_MIN ? INT64_MIN
					       : (int64_t)total;
	x->m->last_agg = out->u.l;
	x->m->has_last_agg = true;
}

static int
agg_value(struct ectx *x, const struct tagg *a, size_t pos, struct val *out)
{
	int ri = inc_value(x, a, pos, out);
	if (ri <= 0)
		return ri; /* answered incrementally, or an error */
	struct rowset s = { .width = a->n_for, .vars = a->for_vars, .sum_col = -1 };
	if (a->sum)
		for (size_t i = 0; i < a->n_for; i++)
			if (a->for_vars[i] == a->sum_var)
				s.sum_col = (int)i;
	/* the aggregate's own variables start unbound */
	struct val saved[TP_MAX_VARS];
	for (size_t i = 0; i < a->n_for; i++) {
		saved[i] = x->env[a->for_vars[i]];
		x->env[a->for_vars[i]].t = V_NONE;
	}
	struct kont k = { .fn = k_collect, .data = &s };
	int r = eval(x, a->body, pos, &k);
	for (size_t i = 0; i < a->n_for; i++)
		x->env[a->for_vars[i]] = saved[i];
	if (r < 0)
		return r;
	set_long(x, out, a->sum, s.n, s.sum);
	return 0;
}

/* ---- incremental aggregates (struct iagg above) ---- */

/* Can X be evaluated at one event alone? Collect the variables it reads. */
static bool
term_local(const struct tterm *t, uint64_t *vars)
{
	switch (t->kind) {
	case TT_LIT:
	case TT_WILD:
	case TT_PRINCIPAL:
	case TT_RESOURCE: return true;
	case TT_VAR:
		if (t->var >= 0 && t->var < TP_MAX_VARS)
			*vars |= 1ULL << t->var;
		return true;
	case TT_SET:
		for (size_t i = 0; i < t->n; i++)
			if (!term_local(t->items[i], vars))
				return false;
		return true;
	default: return false; /* context (the request), nested aggregates */
	}
}

static bool
node_local(const struct tnode *n, uint64_t *vars)
{
	switch (n->kind) {
	case TN_AND:
		for (size_t i = 0; i < n->n; i++)
			if (!node_local(n->items[i], vars))
				return false;
		return n->n > 0;
	case TN_EXISTS:
	case TN_TP:
		if (n->var >= 0 && n->var < TP_MAX_VARS)
			*vars |= 1ULL << n->var;
		return n->kind == TN_TP || node_local(n->a, vars);
	case TN_NOT: return node_local(n->a, vars);
	case TN_PRED:
		for (size_t i = 0; i < n->n_args; i++)
			if (!term_local(n->args[i].t, vars))
				return false;
		return true;
	case TN_CMP: return term_local(n->l, vars) && term_local(n->r, vars);
	default: return false; /* formerly, previous, since: other events */
	}
}

static size_t
count_aggs(const struct tnode *n, struct iagg *out, size_t k);

static size_t
count_aggs_term(const struct tterm *t, struct iagg *out, size_t k)
{
	if (t->kind == TT_SET)
		for (size_t i = 0; i < t->n; i++)
			k = count_aggs_term(t->items[i], out, k);
	if (t->kind != TT_AGG)
		return k;
	const struct tagg *a = t->agg;
	const struct tnode *b = a->body;
	uint64_t vars = 0;
	if (b->kind == TN_FORMERLY && node_local(b->a, &vars)) {
		if (out) {
			struct iagg *ia = &out[k];
			memset(ia, 0, sizeof(*ia));
			ia->a = a;
			ia->x = b->a;
			ia->window = b->window;
			ia->sum_col = -1;
			for (size_t i = 0; i < a->n_for; i++) {
				if (a->for_vars[i] >= 0 && a->for_vars[i] < TP_MAX_VARS)
					vars &= ~(1ULL << a->for_vars[i]);
				if (a->sum && a->for_vars[i] == a->sum_var)
					ia->sum_col = (int)i;
			}
			ia->outer = vars;
		}
		k++;
	}
	return count_aggs(b, out, k);
}

static size_t
count_aggs(const struct tnode *n, struct iagg *out, size_t k)
{
	switch (n->kind) {
	case TN_AND:
		for (size_t i = 0; i < n->n; i++)
			k = count_aggs(n->items[i], out, k);
		return k;
	case TN_NOT:
	case TN_FORMERLY:
	case TN_PREVIOUS:
	case TN_EXISTS: return count_aggs(n->a, out, k);
	case TN_SINCE: return count_aggs(n->b, out, count_aggs(n->a, out, k));
	case TN_CMP: return count_aggs_term(n->r, out, count_aggs_term(n->l, out, k));
	default: return k;
	}
}

static int
aggs_setup(struct bp_monitor *m, struct rstate *rs)
{
	size_t n = 0;
	for (size_t t = 0; t < rs->n_terms; t++)
		n = count_aggs(rs->terms[t].root, NULL, n);
	if (!n)
		return 0;
	rs->aggs = arena_alloc(&m->ar, n * sizeof(*rs->aggs));
	if (!rs->aggs)
		return -ENOMEM;
	rs->n_aggs = 0;
	for (size_t t = 0; t < rs->n_terms; t++)
		rs->n_aggs = count_aggs(rs->terms[t].root, rs->aggs, rs->n_aggs);
	return 0;
}

static void
iagg_clear(struct bp_monitor *m, struct iagg *ia)
{
	for (size_t b = 0; b < ia->nb; b++)
		for (struct akey *k = ia->buckets[b], *next; k; k = next) {
			next = k->next;
			free(k);
		}
	free(ia->buckets);
	free(ia->q);
	m->bytes -= ia->bytes;
	ia->bytes = 0;
	ia->buckets = NULL;
	ia->q = NULL;
	ia->nb = ia->n_keys = ia->qcap = ia->qhead = ia->qn = 0;
	ia->sum = 0;
}

static void
aggs_free(struct bp_monitor *m, struct rstate *rs)
{
	for (size_t i = 0; i < rs->n_aggs; i++)
		iagg_clear(m, &rs->aggs[i]);
}

static void
iagg_break(struct bp_monitor *m, struct iagg *ia)
{
	iagg_clear(m, ia);
	ia->broken = true;
}

static int
iagg_rehash(struct bp_monitor *m, struct iagg *ia, size_t nb)
{
	struct akey **b = calloc(nb, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < ia->nb; i++)
		for (struct akey *k = ia->buckets[i], *next; k; k = next) {
			next = k->next;
			k->next = b[k->hash & (nb - 1)];
			b[k->hash & (nb - 1)] = k;
		}
	free(ia->buckets);
	m->bytes += nb * sizeof(*b);
	m->bytes -= ia->nb * sizeof(*b);
	ia->bytes += nb * sizeof(*b);
	ia->bytes -= ia->nb * sizeof(*b);
	ia->buckets = b;
	ia->nb = nb;
	return 0;
}

static uint64_t
row_hash(const struct val *env, const int *vars, size_t width)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL;
	for (size_t i = 0; i < width; i++)
		h = mix(h ^ val_hash(&env[vars[i]])) + i;
	return h;
}

static struct akey *
iagg_find(const struct iagg *ia, const struct val *env, uint64_t h)
{
	if (!ia->nb)
		return NULL;
	for (struct akey *k = ia->buckets[h & (ia->nb - 1)]; k; k = k->next) {
		if (k->hash != h)
			continue;
		bool same = true;
		for (size_t i = 0; i < ia->a->n_for && same; i++)
			same = val_eq(&k->row[i], &env[ia->a->for_vars[i]]);
		if (same)
			return k;
	}
	return NULL;
}

static void
row_add(struct iagg *ia, const struct akey *k, int sign)
{
	if (ia->sum_col >= 0 && k->row[ia->sum_col].t == V_LONG)
		ia->sum += sign * (__int128)k->row[ia->sum_col].u.l;
}

/* the continuation of X at a fed event: count the row in */
static int
k_feed(struct ectx *x, const struct kont *k)
{
	struct iagg *ia = k->data;
	const struct tevent *e = x->extra;
	size_t w = ia->a->n_for;
	for (size_t i = 0; i < w; i++)
		if (x->env[ia->a->for_vars[i]].t == V_NONE)
			return 0; /* the load check makes this unreachable */
	uint64_t h = row_hash(x->env, ia->a->for_vars, w);
	struct akey *key = iagg_find(ia, x->env, h);
	if (!key) {
		size_t size = sizeof(*key) + align8((w ? w : 1) * sizeof(struct val));
		for (size_t i = 0; i < w; i++)
			size += tval_size(&x->env[ia->a->for_vars[i]]);
		if (ia->n_keys + 1 > ia->nb) {
			if (iagg_rehash(x->m, ia, ia->nb ? ia->nb * 2 : 64) < 0)
				return -ENOMEM;
		}
		key = malloc(size);
		if (!key)
			return -ENOMEM;
		memset(key, 0, sizeof(*key));
		char *mem = (char *)key + sizeof(*key) + align8((w ? w : 1) * sizeof(struct val));
		for (size_t i = 0; i < w; i++)
			tval_copy(&key->row[i], &x->env[ia->a->for_vars[i]], &mem);
		key->hash = h;
		key->bytes = size;
		key->next = ia->buckets[h & (ia->nb - 1)];
		ia->buckets[h & (ia->nb - 1)] = key;
		ia->n_keys++;
		ia->bytes += size;
		x->m->bytes += size;
		row_add(ia, key, 1);
	}
	if (ia->qn == ia->qcap) {
		if (ia->qn >= 4u * BP_MONITOR_MAX_EVENTS)
			return -E2BIG;
		size_t cap = ia->qcap ? ia->qcap * 2 : 64;
		struct acontrib *nq = malloc(cap * sizeof(*nq));
		if (!nq)
			return -ENOMEM;
		for (size_t i = 0; i < ia->qn; i++)
			nq[i] = ia->q[(ia->qhead + i) % ia->qcap];
		free(ia->q);
		x->m->bytes += (cap - ia->qcap) * sizeof(*nq);
		ia->bytes += (cap - ia->qcap) * sizeof(*nq);
		ia->q = nq;
		ia->qcap = cap;
		ia->qhead = 0;
	}
	key->refs++;
	ia->q[(ia->qhead + ia->qn) % ia->qcap] = (struct acontrib){ .ts = e->ts, .key = key };
	ia->qn++;
	return 0; /* on: every row of the event counts */
}

static void
key_drop(struct bp_monitor *m, struct iagg *ia, struct akey *key)
{
	if (--key->refs)
		return;
	struct akey **pp = &ia->buckets[key->hash & (ia->nb - 1)];
	while (*pp != key)
		pp = &(*pp)->next;
	*pp = key->next;
	row_add(ia, key, -1);
	ia->n_keys--;
	ia->bytes -= key->bytes;
	m->bytes -= key->bytes;
	free(key);
}

static void
iagg_prune(struct bp_monitor *m, struct iagg *ia, int64_t now)
{
	while (ia->qn && age(now, ia->q[ia->qhead].ts) > ia->window) {
		key_drop(m, ia, ia->q[ia->qhead].key);
		ia->qhead = (ia->qhead + 1) % ia->qcap;
		ia->qn--;
		m->work++;
	}
	/* give memory back after a burst */
	if (ia->qcap > 64 && ia->qn < ia->qcap / 8) {
		size_t cap = ia->qcap / 2;
		struct acontrib *nq = malloc(cap * sizeof(*nq));
		if (nq) {
			for (size_t i = 0; i < ia->qn; i++)
				nq[i] = ia->q[(ia->qhead + i) % ia->qcap];
			free(ia->q);
			m->bytes -= (ia->qcap - cap) * sizeof(*nq);
			ia->bytes -= (ia->qcap - cap) * sizeof(*nq);
			ia->q = nq;
			ia->qcap = cap;
			ia->qhead = 0;
		}
	}
	if (ia->nb > 64 && ia->n_keys < ia->nb / 8)
		(void)iagg_rehash(m, ia, ia->nb / 2); /* on ENOMEM keep the larger table */
}

static void
aggs_prune(struct bp_monitor *m, struct rstate *rs, int64_t now)
{
	for (size_t i = 0; i < rs->n_aggs; i++)
		if (!rs->aggs[i].broken)
			iagg_prune(m, &rs->aggs[i], now);
}

/* evaluation context FX positioned at event E alone */
static void
single_view(struct bp_monitor *m, struct ectx *fx, const struct rstate *rs, const struct tevent *e)
{
	memset(fx->env, 0, sizeof(fx->env));
	fx->m = m;
	fx->rs = rs;
	fx->wrs = NULL;
	fx->t = NULL;
	fx->req = NULL;
	fx->n_log = 0;
	fx->extra = e;
	fx->n_view = 1;
	fx->steps = 0;
	fx->depth = 0;
}

static void
aggs_feed(struct bp_monitor *m, struct rstate *rs, const struct tevent *e)
{
	struct ectx *fx = m->fx;
	for (size_t i = 0; i < rs->n_aggs; i++) {
		struct iagg *ia = &rs->aggs[i];
		if (ia->broken)
			continue;
		single_view(m, fx, rs, e);
		struct kont k = { .fn = k_feed, .data = ia };
		int r = eval(fx, ia->x, 0, &k);
		m->work += fx->steps;
		if (r < 0)
			iagg_break(m, ia);
	}
}

/*
 * The aggregate A at POS from its incremental state: 0 (answered), 1 (not
 * covered: scan), or a negative errno.
 */
static int
inc_value(struct ectx *x, const struct tagg *a, size_t pos, struct val *out)
{
	if (x->m->no_incremental || !x->wrs || pos + 1 != x->n_view)
		return 1;
	struct iagg *ia = NULL;
	for (size_t i = 0; i < x->wrs->n_aggs && !ia; i++)
		if (x->wrs->aggs[i].a == a)
			ia = &x->wrs->aggs[i];
	if (!ia || ia->broken)
		return 1;
	for (int v = 0; v < TP_MAX_VARS; v++)
		if ((ia->outer >> v & 1) && x->env[v].t != V_NONE)
			return 1; /* X depends on a binding made outside the aggregate */
	iagg_prune(x->m, ia, view_at(x, pos)->ts);
	size_t n = ia->n_keys;
	__int128 sum = ia->sum;
	if (x->extra) {
		/* the current event, when the rule does not retain it: its new rows */
		struct ectx *fx = x->m->fx;
		single_view(x->m, fx, x->rs, x->extra);
		struct rowset s = { .width = a->n_for, .vars = a->for_vars, .sum_col = -1 };
		struct kont k = { .fn = k_collect, .data = &s };
		int r = eval(fx, ia->x, 0, &k);
		x->m->work += fx->steps;
		if (r < 0)
			return r;
		for (size_t j = 0; j < s.cap; j++) {
			if (!s.slots[j])
				continue;
			struct val env[TP_MAX_VARS];
			for (size_t i = 0; i < a->n_for; i++)
				env[a->for_vars[i]] = s.slots[j][i];
			if (iagg_find(ia, env, s.hashes[j]))
				continue;
			n++;
			if (ia->sum_col >= 0 && s.slots[j][ia->sum_col].t == V_LONG)
				sum += s.slots[j][ia->sum_col].u.l;
		}
	}
	x->m->work++;
	set_long(x, out, a->sum, n, sum);
	return 0;
}

static int
ectx_setup(struct bp_monitor *m)
{
	m->dx = calloc(1, sizeof(*m->dx));
	m->fx = calloc(1, sizeof(*m->fx));
	return m->dx && m->fx ? 0 : -ENOMEM;
}

void
tmon_set_incremental(struct bp_monitor *m, bool on)
{
	m->no_incremental = !on;
}

uint64_t
tmon_work(const struct bp_monitor *m)
{
	return m->work;
}

bool
tmon_last_agg(const struct bp_monitor *m, int64_t *v)
{
	*v = m->last_agg;
	return m->has_last_agg;
}

/* ---- the hook ---- */

static int
hook_eval(void *ctx, const struct bp_policy *p, size_t rule, size_t term,
	  const struct bp_request *req, bool *ret)
{
	struct bp_monitor *m = ctx;
	if (!m || p != m->p || rule >= m->n_rules || term >= m->rules[rule].n_terms)
		return -EINVAL;
	if (!m->last)
		return -ENODATA; /* nothing observed: the caller skipped observe */
	struct rstate *rs = &m->rules[rule];
	struct ectx *x = m->dx; /* reused: no allocation per decision */
	memset(x->env, 0, sizeof(x->env));
	x->m = m;
	x->rs = rs;
	x->wrs = rs;
	x->t = &rs->terms[term];
	x->req = req;
	x->n_log = rs->n;
	x->extra = rs->n && ring_at(rs, rs->n - 1) == m->last ? NULL : m->last;
	x->n_view = x->n_log + (x->extra ? 1 : 0);
	x->steps = 0;
	x->depth = 0;
	arena_reset(&m->scratch);
	static const struct kont top = { .fn = k_stop };
	int r = eval(x, x->t->root, x->n_view - 1, &top);
	m->work += x->steps;
	arena_reset(&m->scratch);
	if (r < 0)
		return r;
	*ret = r == 1;
	return 0;
}

/* ---- explaining a term (bp_explain through the hook; never on bp_decide's path) ---- */

#define TX_LISTED 8 /* events listed per operator */

/* Variables a node reads or binds (to tell independent conjuncts apart). */
static uint64_t node_vars(const struct tnode *n);

static uint64_t
term_vars(const struct tterm *t)
{
	uint64_t v = 0;
	if (t->kind == TT_VAR && t->var >= 0 && t->var < TP_MAX_VARS)
		v |= 1ULL << t->var;
	for (size_t i = 0; t->kind == TT_SET && i < t->n; i++)
		v |= term_vars(t->items[i]);
	if (t->kind == TT_AGG) {
		v |= node_vars(t->agg->body);
		for (size_t i = 0; i < t->agg->n_for; i++)
			if (t->agg->for_vars[i] >= 0 && t->agg->for_vars[i] < TP_MAX_VARS)
				v &= ~(1ULL << t->agg->for_vars[i]); /* bound inside */
		if (t->agg->sum_var >= 0 && t->agg->sum_var < TP_MAX_VARS)
			v &= ~(1ULL << t->agg->sum_var);
	}
	return v;
}

static uint64_t
node_vars(const struct tnode *n)
{
	uint64_t v = 0;
	switch (n->kind) {
	case TN_AND:
		for (size_t i = 0; i < n->n; i++)
			v |= node_vars(n->items[i]);
		return v;
	case TN_SINCE: return node_vars(n->a) | node_vars(n->b);
	case TN_EXISTS:
		v = node_vars(n->a);
		if (n->var >= 0 && n->var < TP_MAX_VARS)
			v &= ~(1ULL << n->var);
		return v;
	case TN_NOT:
	case TN_FORMERLY:
	case TN_PREVIOUS: return node_vars(n->a);
	case TN_TP: return n->var >= 0 && n->var < TP_MAX_VARS ? 1ULL << n->var : 0;
	case TN_PRED:
		for (size_t i = 0; i < n->n_args; i++)
			v |= term_vars(n->args[i].t);
		return v;
	case TN_CMP: return term_vars(n->l) | term_vars(n->r);
	default: return 0;
	}
}

/* Does N hold at POS (nothing bound outside it)? 1, 0, or a negative errno. */
static int
tx_holds(struct ectx *x, const struct tnode *n, size_t pos)
{
	static const struct kont stop = { .fn = k_stop };
	memset(x->env, 0, sizeof(x->env));
	x->steps = 0;
	arena_reset(&x->m->scratch); /* nothing of an earlier evaluation is still read */
	return eval(x, n, pos, &stop);
}

static void
tx_event(struct bp_monitor *m, struct bp_explain *xp, const struct tevent *e, const char *role)
{
	struct buf b = { 0 };
	for (uint32_t i = 0; i < e->n_in + e->n_out; i++) {
		if (b.len)
			buf_putc(&b, ' ');
		buf_printf(&b, "%s%s=", i >= e->n_in ? "output." : "", e->in[i].name);
		explain_put_val(&b, &e->in[i].v, 200);
	}
	buf_putc(&b, 0);
	const char *action = "?";
	char name[300];
	if (e->action < m->p->schema.n_actions) {
		const struct s_action *a = &m->p->schema.actions[e->action];
		if (strcmp(a->ns, "Box") == 0)
			action = a->id;
		else {
			snprintf(name, sizeof(name), "%s::\"%s\"", a->etype, a->id);
			action = name;
		}
	}
	explain_event(xp, e->ts, bp_event_kind_str((enum bp_event_kind)e->kind), action,
		      b.oom || !b.p ? "" : b.p, role);
	buf_free(&b);
}

static const char *
pred_name(const struct tnode *n, char *buf, size_t size)
{
	snprintf(buf, size, "%s::\"%s\"::%s{…}", n->etype ? n->etype : "?", n->aid ? n->aid : "?",
		 n->kind_name ? n->kind_name : "?");
	return buf;
}

static void tx_node(struct ectx *x, struct bp_explain *xp, const struct tnode *n, size_t pos,
		    int depth);

/* The events in N's window (N a formerly) at which its operand holds: listed as ROLE. */
static void
tx_window(struct ectx *x, struct bp_explain *xp, const struct tnode *n, const struct tnode *body,
	  size_t pos, const char *what, bool list_failed)
{
	int64_t now = view_at(x, pos)->ts;
	size_t examined = 0, held = 0, listed = 0, failed_listed = 0;
	char role[200];
	for (size_t j = pos + 1; j-- > 0;) {
		const struct tevent *e = view_at(x, j);
		if (age(now, e->ts) > n->window)
			break;
		examined++;
		int r = tx_holds(x, body, j);
		if (r < 0) {
			explain_note(xp, "%s: could not be evaluated (%s)", what, strerror(-r));
			return;
		}
		if (r) {
			held++;
			if (listed++ < TX_LISTED) {
				snprintf(role, sizeof(role), "%s: held", what);
				tx_event(x->m, xp, e, role);
			}
		} else if (list_failed && failed_listed++ < 3) {
			snprintf(role, sizeof(role), "%s: did not hold", what);
			tx_event(x->m, xp, e, role);
		}
	}
	explain_note(xp, "%s: held at %zu of the %zu event%s in the window%s", what, held, examined,
		     examined == 1 ? "" : "s",
		     listed > TX_LISTED ? " (the most recent listed)" : "");
}

static void
tx_cmp(struct ectx *x, struct bp_explain *xp, const struct tnode *n, size_t pos, int depth)
{
	static const char *const ops[] = { "==", "!=", "<", "<=", ">", ">=" };
	const struct tterm *sides[2] = { n->l, n->r };
	struct buf b = { 0 };
	bool any_agg = false;
	for (int s = 0; s < 2; s++) {
		const struct tterm *t = sides[s];
		struct val v;
		memset(x->env, 0, sizeof(x->env));
		x->steps = 0;
		int r = resolve(x, t, pos, &v);
		if (s)
			buf_printf(&b, " %s ", n->op < 6 ? ops[n->op] : "?");
		if (t->kind == TT_AGG)
			buf_puts(&b, t->agg->sum ? "sum(…) = " : "count(…) = ");
		if (r == R_VAL)
			explain_put_val(&b, &v, 200);
		else
			buf_puts(&b, r < 0 ? "(error)" : "(unbound)");
		any_agg |= t->kind == TT_AGG;
	}
	buf_putc(&b, 0);
	int h = tx_holds(x, n, pos);
	explain_note(xp, "comparison %s: %s", b.oom || !b.p ? "?" : b.p,
		     h < 0 ? "error" : h ? "true" : "false");
	buf_free(&b);
	if (!any_agg)
		return;
	for (int s = 0; s < 2; s++) {
		const struct tterm *t = sides[s];
		if (t->kind != TT_AGG)
			continue;
		const struct tnode *body = t->agg->body;
		if (body->kind == TN_FORMERLY) {
			char what[160];
			snprintf(what, sizeof(what), "%s: formerly within %s",
				 t->agg->sum ? "summed" : "counted", body->wtext ? body->wtext : "?");
			tx_window(x, xp, body, body->a, pos, what, false);
			explain_note(xp, "(an aggregate counts distinct rows of its `for` variables)");
		} else {
			tx_node(x, xp, body, pos, depth + 1);
		}
	}
}

static void
tx_node(struct ectx *x, struct bp_explain *xp, const struct tnode *n, size_t pos, int depth)
{
	if (depth > TP_MAX_DEPTH)
		return;
	char what[200], pn[200];
	switch (n->kind) {
	case TN_AND: {
		uint64_t seen = 0, shared = 0;
		for (size_t i = 0; i < n->n; i++) {
			uint64_t v = node_vars(n->items[i]);
			shared |= seen & v;
			seen |= v;
		}
		if (shared) {
			int h = tx_holds(x, n, pos);
			explain_note(xp, "a conjunction whose parts share variables: %s as a whole",
				     h < 0 ? "an error" : h ? "held" : "did not hold");
			/* its closed aggregates still say what they counted */
			for (size_t i = 0; i < n->n; i++) {
				const struct tnode *it = n->items[i];
				if (it->kind == TN_CMP &&
				    ((it->l->kind == TT_AGG && !term_vars(it->l)) ||
				     (it->r->kind == TT_AGG && !term_vars(it->r))))
					tx_cmp(x, xp, it, pos, depth);
			}
			return;
		}
		for (size_t i = 0; i < n->n; i++)
			tx_node(x, xp, n->items[i], pos, depth + 1);
		return;
	}
	case TN_NOT: {
		int h = tx_holds(x, n->a, pos);
		explain_note(xp, "negation: its operand %s", h < 0 ? "failed" : h ? "held" : "did not hold");
		tx_node(x, xp, n->a, pos, depth + 1);
		return;
	}
	case TN_EXISTS: tx_node(x, xp, n->a, pos, depth + 1); return;
	case TN_FORMERLY:
		snprintf(what, sizeof(what), "formerly within %s", n->wtext ? n->wtext : "?");
		tx_window(x, xp, n, n->a, pos, what, true);
		return;
	case TN_PREVIOUS: {
		const struct tevent *cur = view_at(x, pos);
		const struct tevent *prev = pos ? view_at(x, pos - 1) : NULL;
		snprintf(what, sizeof(what), "previous within %s", n->wtext ? n->wtext : "?");
		if (!prev || prev->seq + 1 != cur->seq || age(cur->ts, prev->ts) > n->window) {
			explain_note(xp, "%s: no preceding event in the window", what);
			return;
		}
		int h = tx_holds(x, n->a, pos - 1);
		char role[240];
		snprintf(role, sizeof(role), "%s: %s", what, h > 0 ? "held" : "did not hold");
		tx_event(x->m, xp, prev, role);
		explain_note(xp, "%s: %s at the preceding event", what, h < 0 ? "failed" : h ? "held" : "did not hold");
		return;
	}
	case TN_SINCE: {
		int64_t now = view_at(x, pos)->ts;
		snprintf(what, sizeof(what), "since within %s", n->wtext ? n->wtext : "?");
		for (size_t j = pos + 1; j-- > 0;) {
			const struct tevent *e = view_at(x, j);
			if (age(now, e->ts) > n->window)
				break;
			if (tx_holds(x, n->b, j) <= 0)
				continue;
			char role[240];
			snprintf(role, sizeof(role), "%s: the right side held", what);
			tx_event(x->m, xp, e, role);
			for (size_t k = j + 1; k <= pos; k++)
				if (tx_holds(x, n->a, k) <= 0) {
					snprintf(role, sizeof(role), "%s: the left side failed", what);
					tx_event(x->m, xp, view_at(x, k), role);
					explain_note(xp, "%s: the right side held, the left side failed "
							 "after it",
						     what);
					return;
				}
			explain_note(xp, "%s: held (the left side at every event after the right "
					 "side's)",
				     what);
			return;
		}
		explain_note(xp, "%s: the right side held at no event in the window", what);
		return;
	}
	case TN_CMP: tx_cmp(x, xp, n, pos, depth); return;
	case TN_PRED: {
		int h = tx_holds(x, n, pos);
		explain_note(xp, "%s %s the current event", pred_name(n, pn, sizeof(pn)),
			     h > 0 ? "matches" : "does not match");
		return;
	}
	default: return;
	}
}

static int
hook_explain(void *ctx, const struct bp_policy *p, size_t rule, size_t term,
	     const struct bp_request *req, struct bp_explain *xp)
{
	struct bp_monitor *m = ctx;
	if (!m || p != m->p || rule >= m->n_rules || term >= m->rules[rule].n_terms)
		return -EINVAL;
	if (!m->last)
		return -ENODATA;
	bool value;
	int r = hook_eval(ctx, p, rule, term, req, &value);
	if (r < 0)
		return r;
	struct rstate *rs = &m->rules[rule];
	struct ectx *x = m->dx;
	memset(x->env, 0, sizeof(x->env));
	x->m = m;
	x->rs = rs;
	x->wrs = rs;
	x->t = &rs->terms[term];
	x->req = req;
	x->n_log = rs->n;
	x->extra = rs->n && ring_at(rs, rs->n - 1) == m->last ? NULL : m->last;
	x->n_view = x->n_log + (x->extra ? 1 : 0);
	x->depth = 0;
	arena_reset(&m->scratch);
	explain_note(xp, "temporal term %zu was %s at the request (the rule retains %zu event%s)",
		     term + 1, value ? "true" : "false", rs->n, rs->n == 1 ? "" : "s");
	tx_node(x, xp, x->t->root, x->n_view - 1, 0);
	arena_reset(&m->scratch);
	return 0;
}

struct bp_temporal_hook
bp_monitor_hook(struct bp_monitor *m)
{
	return (struct bp_temporal_hook){ .eval = hook_eval, .ctx = m, .explain = hook_explain };
}

int
bp_monitor_decide(struct bp_monitor *m, const struct bp_request *req, int64_t time_ns,
		  struct bp_decision *d, int64_t *time_ret)
{
	if (!m || !req || !d || req->p != m->p)
		return -EINVAL;
	bool gated = req->action == SIZE_MAX || req->problem[0] || req->action_pending;
	if (!gated) {
		const struct rtype *in = &m->p->schema.actions[req->action].input;
		for (size_t i = 0; i < in->n && !gated; i++)
			gated = !in->attrs[i].optional && !request_field(req, in->attrs[i].atom);
	}
	if (gated) /* not appended: bp_decide denies it (cause error) */
		return bp_decide(m->p, req, NULL, d);
	struct tevent *te = make_event(BP_EVENT_REQUEST, req->action, req->fields, req->n_fields,
				       NULL, 0);
	int r = te ? 0 : -ENOMEM;
	if (te) {
		int64_t ts = bp_monitor_stamp(m, time_ns);
		if (time_ret)
			*time_ret = ts;
		r = append(m, te, ts, NULL, 0, false);
	}
	struct bp_temporal_hook hook = bp_monitor_hook(m);
	int rd = bp_decide(m->p, req, &hook, d);
	if (r < 0) {
		/* the history could not take the event: deny, cause error */
		d->verdict = BP_DENY;
		d->cause = BP_CAUSE_ERROR;
		d->n_rules = 0;
		int rf = format_message(m->p, req, d);
		(void)rf;
		return r;
	}
	return rd;
}

int
bp_monitor_probe(struct bp_monitor *m, const struct bp_request *req, int64_t time_ns,
		 struct bp_decision *d)
{
	if (!m || !req || !d || req->p != m->p)
		return -EINVAL;
	bool gated = req->action == SIZE_MAX || req->problem[0] || req->action_pending;
	if (!gated) {
		const struct rtype *in = &m->p->schema.actions[req->action].input;
		for (size_t i = 0; i < in->n && !gated; i++)
			gated = !in->attrs[i].optional && !request_field(req, in->attrs[i].atom);
	}
	if (gated) /* as bp_monitor_decide: bp_decide denies it (cause error) */
		return bp_decide(m->p, req, NULL, d);
	struct tevent *te = make_event(BP_EVENT_REQUEST, req->action, req->fields, req->n_fields,
				       NULL, 0);
	if (!te) {
		int r = bp_decide(m->p, req, NULL, d);
		(void)r;
		d->verdict = BP_DENY;
		d->cause = BP_CAUSE_ERROR;
		d->n_rules = 0;
		(void)format_message(m->p, req, d);
		return -ENOMEM;
	}
	/*
	 * The probe event is the last event for the hook, but in no ring: the
	 * hook then views it as the extra current event of every rule (as it
	 * does for a rule that does not retain the request). Nothing is pruned
	 * and the incremental aggregates are bypassed (their expiry would move).
	 */
	te->ts = bp_monitor_stamp(m, time_ns);
	te->seq = m->seq + 1;
	te->epoch = m->epoch;
	te->refs = 1;
	struct tevent *saved_last = m->last;
	bool saved_has_last = m->has_last, saved_no_inc = m->no_incremental;
	bool saved_has_agg = m->has_last_agg;
	int64_t saved_ts = m->last_ts, saved_agg = m->last_agg;
	m->last = te;
	m->has_last = true;
	m->last_ts = te->ts;
	m->no_incremental = true;
	struct bp_temporal_hook hook = bp_monitor_hook(m);
	int r = bp_decide(m->p, req, &hook, d);
	m->last = saved_last;
	m->has_last = saved_has_last;
	m->last_ts = saved_ts;
	m->no_incremental = saved_no_inc;
	m->last_agg = saved_agg;
	m->has_last_agg = saved_has_agg;
	free(te);
	return r;
}

int
bp_monitor_migrate(struct bp_monitor *old, const struct bp_policy *np, struct bp_monitor **ret,
		   struct bp_diags **diags)
{
	if (!old || !np || !ret)
		return -EINVAL;
	struct bp_monitor *m = NULL;
	int r = bp_monitor_new(np, &m, diags);
	if (r < 0)
		return r;
	/* old action index -> new one, by name */
	const struct bp_schema *os = &old->p->schema;
	size_t *map = calloc(os->n_actions ? os->n_actions : 1, sizeof(*map));
	if (!map) {
		bp_monitor_free(m);
		return -ENOMEM;
	}
	for (size_t i = 0; i < os->n_actions; i++) {
		size_t idx;
		map[i] = schema_find_action(&np->schema, os->actions[i].etype, os->actions[i].id, &idx)
				 ? idx
				 : SIZE_MAX;
	}
	uint64_t epoch = old->epoch + 1;
	for (size_t i = 0; i < m->n_rules; i++) {
		struct rstate *nr = &m->rules[i];
		if (!nr->n_terms)
			continue;
		for (size_t j = 0; j < old->n_rules; j++) {
			struct rstate *orule = &old->rules[j];
			if (!orule->n_terms || orule->hash != nr->hash || !orule->ring)
				continue;
			/* take the unchanged rule's retained events */
			for (size_t k = 0; k < orule->n; k++) {
				struct tevent *e = ring_at(orule, k);
				if (e->epoch != epoch) {
					e->action = e->action < os->n_actions ? map[e->action] : SIZE_MAX;
					e->epoch = epoch;
				}
			}
			nr->ring = orule->ring;
			nr->cap = orule->cap;
			nr->head = orule->head;
			nr->n = orule->n;
			orule->ring = NULL;
			orule->cap = orule->n = orule->head = 0;
			/* rebuild the incremental aggregates from the retained events */
			for (size_t k = 0; k < nr->n; k++)
				aggs_feed(m, nr, ring_at(nr, k));
			if (old->has_last)
				aggs_prune(m, nr, old->last_ts);
			break;
		}
	}
	if (old->last && old->last->epoch != epoch) {
		old->last->action =
			old->last->action < os->n_actions ? map[old->last->action] : SIZE_MAX;
		old->last->epoch = epoch;
	}
	free(map);
	m->last = old->last;
	old->last = NULL;
	m->has_last = old->has_last;
	m->last_ts = old->last_ts;
	m->seq = old->seq;
	m->epoch = epoch;
	m->work += old->work;
	/* bytes: recount what moved (events are shared, count each once) */
	m->bytes = sizeof(*m) + m->n_rules * sizeof(*m->rules) + m->ar.total;
	for (size_t i = 0; i < m->n_rules; i++) {
		m->bytes += m->rules[i].cap * sizeof(struct tevent *);
		for (size_t k = 0; k < m->rules[i].n_aggs; k++)
			m->bytes += m->rules[i].aggs[k].bytes;
	}
	for (size_t i = 0; i < m->n_rules; i++)
		for (size_t k = 0; k < m->rules[i].n; k++) {
			struct tevent *e = ring_at(&m->rules[i], k);
			if (e->epoch != epoch + (1ULL << 63)) {
				m->bytes += e->bytes;
				e->epoch = epoch + (1ULL << 63);
			}
		}
	if (m->last && m->last->epoch != epoch + (1ULL << 63))
		m->bytes += m->last->bytes;
	for (size_t i = 0; i < m->n_rules; i++)
		for (size_t k = 0; k < m->rules[i].n; k++)
			ring_at(&m->rules[i], k)->epoch = epoch;
	if (m->last)
		m->last->epoch = epoch;
	bp_monitor_free(old);
	*ret = m;
	return 0;
}
