/* SPDX-License-Identifier: Apache-2.0 */
/*
 * eval.c — the evaluator: `like`, short-circuit evaluation with overflow as
 * an error, and the Box decision rule (deny by default, forbid overrides, any
 * evaluation error denies). The values' parsers and equality are value.c's.
 *
 * Trusts: a policy that passed validation (but evaluates defensively: every
 * type mismatch is an error, never undefined behaviour); request values are
 * arbitrary. Evaluation is read-only on the policy and the request; scratch
 * memory belongs to the caller's struct bp_decision.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A == B for N bytes; short runs (most of a pattern's) without calling memcmp. */
static inline bool
same_bytes(const char *a, const char *b, size_t n)
{
	if (n > 16)
		return memcmp(a, b, n) == 0;
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* The first LEN-byte run R in S (N bytes), or NULL: short runs by their first byte. */
static const char *
find_run(const char *s, size_t n, const char *r, size_t len)
{
	if (len > 16)
		return memmem(s, n, r, len);
	const char *end = s + n - len + 1;
	for (const char *q = s; q < end; q++) {
		q = memchr(q, r[0], (size_t)(end - q));
		if (!q)
			return NULL;
		if (same_bytes(q + 1, r + 1, len - 1))
			return q;
	}
	return NULL;
}

bool
like_match(const struct pattern *p, const char *s, size_t n)
{
	if (p->n_runs == 1)
		return val_str_eq(p->runs[0], p->lens[0], s, n);
	size_t first = p->lens[0], last = p->lens[p->n_runs - 1];
	if (first + last > n || !same_bytes(s, p->runs[0], first) ||
	    !same_bytes(s + n - last, p->runs[p->n_runs - 1], last))
		return false;
	size_t pos = first, end = n - last;
	for (size_t r = 1; r + 1 < p->n_runs; r++) {
		size_t len = p->lens[r];
		if (len == 0)
			continue;
		if (end - pos < len)
			return false;
		const char *hit = find_run(s + pos, end - pos, p->runs[r], len);
		if (!hit)
			return false;
		pos = (size_t)(hit - s) + len;
	}
	return true;
}

/* ---- evaluation ---- */

struct ev {
	const struct bp_policy *p;
	const struct bp_request *req;
	const struct bp_temporal_hook *hook;
	size_t rule;
	struct arena *scratch;
	int depth;
};

#define EV_ERR (-1)

static int ev(struct ev *x, const struct expr *e, struct val *out);

static int
ev_bool(struct ev *x, const struct expr *e, bool *b)
{
	struct val v;
	if (ev(x, e, &v) < 0 || v.t != V_BOOL)
		return EV_ERR;
	*b = v.u.b;
	return 0;
}

static int
ev_long(struct ev *x, const struct expr *e, int64_t *l)
{
	struct val v;
	if (ev(x, e, &v) < 0 || v.t != V_LONG)
		return EV_ERR;
	*l = v.u.l;
	return 0;
}

static const struct val *
rec_get(const struct val *rec, uint32_t atom, const char *name)
{
	for (uint32_t i = 0; i < rec->len; i++) {
		const struct rec_ent *re = &rec->u.rec[i];
		if (re->atom == atom && atom != UINT32_MAX)
			return &re->v;
		if (re->atom == UINT32_MAX && strcmp(re->name, name) == 0)
			return &re->v;
	}
	return NULL;
}

static bool
ip_in_range(const struct val *a, const struct val *r)
{
	if (a->ip_v6 != r->ip_v6 || r->ip_prefix > a->ip_prefix)
		return false;
	unsigned bits = r->ip_prefix;
	unsigned full = bits / 8, rem = bits % 8;
	unsigned off = a->ip_v6 ? 0 : 0;
	if (memcmp(a->u.ip + off, r->u.ip + off, full) != 0)
		return false;
	if (rem) {
		uint8_t mask = (uint8_t)(0xFF << (8 - rem));
		if ((a->u.ip[full] & mask) != (r->u.ip[full] & mask))
			return false;
	}
	return true;
}

static int
ev_method(struct ev *x, const struct expr *e, struct val *out)
{
	struct val recv, arg;
	if (ev(x, e->a, &recv) < 0)
		return EV_ERR;
	if (e->n && ev(x, e->items[0], &arg) < 0)
		return EV_ERR;
	out->t = V_BOOL;
	switch (e->fn) {
	case M_CONTAINS:
		if (recv.t != V_SET)
			return EV_ERR;
		out->u.b = val_set_has(&recv, &arg);
		return 0;
	case M_CONTAINS_ALL:
		if (recv.t != V_SET || arg.t != V_SET)
			return EV_ERR;
		out->u.b = true;
		for (uint32_t i = 0; i < arg.len && out->u.b; i++)
			out->u.b = val_set_has(&recv, &arg.u.items[i]);
		return 0;
	case M_CONTAINS_ANY:
		if (recv.t != V_SET || arg.t != V_SET)
			return EV_ERR;
		out->u.b = false;
		for (uint32_t i = 0; i < arg.len && !out->u.b; i++)
			out->u.b = val_set_has(&recv, &arg.u.items[i]);
		return 0;
	case M_IS_EMPTY:
		if (recv.t != V_SET)
			return EV_ERR;
		out->u.b = recv.len == 0;
		return 0;
	case M_IS_IPV4:
	case M_IS_IPV6:
		if (recv.t != V_IP)
			return EV_ERR;
		out->u.b = e->fn == M_IS_IPV6 ? recv.ip_v6 : !recv.ip_v6;
		return 0;
	case M_IS_LOOPBACK:
	case M_IS_MULTICAST: {
		if (recv.t != V_IP)
			return EV_ERR;
		struct val range;
		memset(&range, 0, sizeof(range));
		range.t = V_IP;
		range.ip_v6 = recv.ip_v6;
		if (e->fn == M_IS_LOOPBACK) {
			if (recv.ip_v6) {
				range.u.ip[15] = 1;
				range.ip_prefix = 128;
			} else {
				range.u.ip[0] = 127;
				range.ip_prefix = 8;
			}
		} else {
			if (recv.ip_v6) {
				range.u.ip[0] = 0xff;
				range.ip_prefix = 8;
			} else {
				range.u.ip[0] = 224;
				range.ip_prefix = 4;
			}
		}
		out->u.b = ip_in_range(&recv, &range);
		return 0;
	}
	case M_IS_IN_RANGE:
		if (recv.t != V_IP || arg.t != V_IP)
			return EV_ERR;
		out->u.b = ip_in_range(&recv, &arg);
		return 0;
	case M_LESS_THAN:
	case M_LESS_THAN_OR_EQUAL:
	case M_GREATER_THAN:
	case M_GREATER_THAN_OR_EQUAL:
		if (recv.t != V_DEC || arg.t != V_DEC)
			return EV_ERR;
		out->u.b = e->fn == M_LESS_THAN		 ? recv.u.l < arg.u.l
			   : e->fn == M_LESS_THAN_OR_EQUAL ? recv.u.l <= arg.u.l
			   : e->fn == M_GREATER_THAN	 ? recv.u.l > arg.u.l
							 : recv.u.l >= arg.u.l;
		return 0;
	case M_OFFSET:
		if (recv.t != V_DATETIME || arg.t != V_DURATION)
			return EV_ERR;
		out->t = V_DATETIME;
		return __builtin_add_overflow(recv.u.l, arg.u.l, &out->u.l) ? EV_ERR : 0;
	case M_DURATION_SINCE:
		if (recv.t != V_DATETIME || arg.t != V_DATETIME)
			return EV_ERR;
		out->t = V_DURATION;
		return __builtin_sub_overflow(recv.u.l, arg.u.l, &out->u.l) ? EV_ERR : 0;
	case M_TO_DATE:
	case M_TO_TIME: {
		if (recv.t != V_DATETIME)
			return EV_ERR;
		const int64_t day = 86400000;
		int64_t rem = recv.u.l % day;
		if (rem < 0)
			rem += day;
		if (e->fn == M_TO_DATE) {
			out->t = V_DATETIME;
			out->u.l = recv.u.l - rem;
		} else {
			out->t = V_DURATION;
			out->u.l = rem;
		}
		return 0;
	}
	case M_TO_MILLISECONDS:
	case M_TO_SECONDS:
	case M_TO_MINUTES:
	case M_TO_HOURS:
	case M_TO_DAYS: {
		if (recv.t != V_DURATION)
			return EV_ERR;
		static const int64_t div[] = { 1, 1000, 60000, 3600000, 86400000 };
		out->t = V_LONG;
		out->u.l = recv.u.l / div[e->fn - M_TO_MILLISECONDS];
		return 0;
	}
	default:
		return EV_ERR;
	}
}

static int
ev_inner(struct ev *x, const struct expr *e, struct val *out)
{
	struct val l, r;
	bool b;
	int64_t a1, a2;
	switch (e->kind) {
	case EX_LIT:
		*out = e->v;
		return 0;
	case EX_VAR:
		memset(out, 0, sizeof(*out));
		switch (e->var) {
		case VAR_PRINCIPAL:
			out->t = V_ENT;
			out->u.e.etype = x->p->t_agent;
			out->u.e.id = "self";
			out->len = 4;
			return 0;
		case VAR_RESOURCE:
			out->t = V_ENT;
			out->u.e.etype = x->p->t_resource;
			out->u.e.id = "unused";
			out->len = 6;
			return 0;
		case VAR_ACTION: {
			const struct s_action *a = &x->p->schema.actions[x->req->action];
			out->t = V_ENT;
			out->u.e.etype = a->etype;
			out->u.e.id = a->id;
			out->len = (uint32_t)strlen(a->id);
			return 0;
		}
		default:
			*out = x->req->context;
			return 0;
		}
	case EX_ATTR: {
		/* fast path: context.input.NAME */
		const struct expr *in = e->a;
		if (in->kind == EX_ATTR && in->atom == x->p->atom_input && in->a->kind == EX_VAR &&
		    in->a->var == VAR_CONTEXT) {
			const struct val *v = request_field(x->req, e->atom);
			if (!v)
				return EV_ERR;
			*out = *v;
			return 0;
		}
		if (ev(x, e->a, &l) < 0 || l.t != V_REC)
			return EV_ERR;
		const struct val *v = rec_get(&l, e->atom, e->name);
		if (!v)
			return EV_ERR;
		*out = *v;
		return 0;
	}
	case EX_HAS:
		if (ev(x, e->a, &l) < 0)
			return EV_ERR;
		out->t = V_BOOL;
		if (l.t == V_ENT) {
			out->u.b = false;
			return 0;
		}
		if (l.t != V_REC)
			return EV_ERR;
		out->u.b = rec_get(&l, e->atom, e->name) != NULL;
		return 0;
	case EX_LIKE:
		if (ev(x, e->a, &l) < 0 || l.t != V_STR)
			return EV_ERR;
		out->t = V_BOOL;
		out->u.b = like_match(e->pat, l.u.s, l.len);
		return 0;
	case EX_IS:
		if (ev(x, e->a, &l) < 0 || l.t != V_ENT)
			return EV_ERR;
		out->t = V_BOOL;
		out->u.b = strcmp(l.u.e.etype, e->name) == 0;
		if (out->u.b && e->b) {
			if (ev(x, e->b, &r) < 0)
				return EV_ERR;
			if (r.t == V_ENT)
				out->u.b = val_eq(&l, &r);
			else if (r.t == V_SET)
				out->u.b = val_set_has(&r, &l);
			else
				return EV_ERR;
		}
		return 0;
	case EX_NOT:
		if (ev_bool(x, e->a, &b) < 0)
			return EV_ERR;
		out->t = V_BOOL;
		out->u.b = !b;
		return 0;
	case EX_NEG:
		if (ev_long(x, e->a, &a1) < 0 || a1 == INT64_MIN)
			return EV_ERR;
		out->t = V_LONG;
		out->u.l = -a1;
		return 0;
	case EX_AND:
		if (ev_bool(x, e->a, &b) < 0)
			return EV_ERR;
		out->t = V_BOOL;
		if (!b) {
			out->u.b = false;
			return 0;
		}
		if (ev_bool(x, e->b, &b) < 0)
			return EV_ERR;
		out->u.b = b;
		return 0;
	case EX_OR:
		if (ev_bool(x, e->a, &b) < 0)
			return EV_ERR;
		out->t = V_BOOL;
		if (b) {
			out->u.b = true;
			return 0;
		}
		if (ev_bool(x, e->b, &b) < 0)
			return EV_ERR;
		out->u.b = b;
		return 0;
	case EX_IF:
		if (ev_bool(x, e->a, &b) < 0)
			return EV_ERR;
		return ev(x, b ? e->b : e->c, out);
	case EX_EQ:
	case EX_NE:
		if (ev(x, e->a, &l) < 0 || ev(x, e->b, &r) < 0)
			return EV_ERR;
		out->t = V_BOOL;
		out->u.b = val_eq(&l, &r) == (e->kind == EX_EQ);
		return 0;
	case EX_LT:
	case EX_LE:
	case EX_GT:
	case EX_GE:
		if (ev(x, e->a, &l) < 0 || ev(x, e->b, &r) < 0)
			return EV_ERR;
		if (l.t != r.t || (l.t != V_LONG && l.t != V_DATETIME && l.t != V_DURATION))
			return EV_ERR;
		out->t = V_BOOL;
		out->u.b = e->kind == EX_LT ? l.u.l < r.u.l : e->kind == EX_LE ? l.u.l <= r.u.l :
			   e->kind == EX_GT ? l.u.l > r.u.l : l.u.l >= r.u.l;
		return 0;
	case EX_IN:
		if (ev(x, e->a, &l) < 0 || l.t != V_ENT || ev(x, e->b, &r) < 0)
			return EV_ERR;
		out->t = V_BOOL;
		if (r.t == V_ENT) {
			out->u.b = val_eq(&l, &r);
			return 0;
		}
		if (r.t != V_SET)
			return EV_ERR;
		out->u.b = false;
		for (uint32_t i = 0; i < r.len; i++) {
			if (r.u.items[i].t != V_ENT)
				return EV_ERR;
			if (val_eq(&l, &r.u.items[i]))
				out->u.b = true;
		}
		return 0;
	case EX_ADD:
	case EX_SUB:
	case EX_MUL: {
		if (ev_long(x, e->a, &a1) < 0 || ev_long(x, e->b, &a2) < 0)
			return EV_ERR;
		out->t = V_LONG;
		bool over = e->kind == EX_ADD	? __builtin_add_overflow(a1, a2, &out->u.l)
			    : e->kind == EX_SUB ? __builtin_sub_overflow(a1, a2, &out->u.l)
						: __builtin_mul_overflow(a1, a2, &out->u.l);
		return over ? EV_ERR : 0;
	}
	case EX_SET: {
		struct val *items = arena_alloc(x->scratch, (e->n ? e->n : 1) * sizeof(*items));
		if (!items)
			return EV_ERR;
		for (size_t i = 0; i < e->n; i++)
			if (ev(x, e->items[i], &items[i]) < 0)
				return EV_ERR;
		memset(out, 0, sizeof(*out));
		out->t = V_SET;
		out->len = (uint32_t)e->n;
		out->u.items = items;
		return 0;
	}
	case EX_RECORD: {
		struct rec_ent *ents = arena_alloc(x->scratch, (e->n ? e->n : 1) * sizeof(*ents));
		if (!ents)
			return EV_ERR;
		for (size_t i = 0; i < e->n; i++) {
			ents[i].name = e->keys[i];
			ents[i].atom = e->key_atoms[i];
			if (ev(x, e->items[i], &ents[i].v) < 0)
				return EV_ERR;
		}
		memset(out, 0, sizeof(*out));
		out->t = V_REC;
		out->len = (uint32_t)e->n;
		out->u.rec = ents;
		return 0;
	}
	case EX_CALL: {
		if (ev(x, e->items[0], &l) < 0 || l.t != V_STR)
			return EV_ERR;
		memset(out, 0, sizeof(*out));
		switch (e->fn) {
		case FN_IP: return parse_ip(l.u.s, l.len, out) ? 0 : EV_ERR;
		case FN_DECIMAL: out->t = V_DEC; return parse_decimal(l.u.s, l.len, &out->u.l) ? 0 : EV_ERR;
		case FN_DATETIME:
			out->t = V_DATETIME;
			return parse_datetime(l.u.s, l.len, &out->u.l) ? 0 : EV_ERR;
		case FN_DURATION:
			out->t = V_DURATION;
			return parse_duration(l.u.s, l.len, &out->u.l) ? 0 : EV_ERR;
		default: return EV_ERR;
		}
	}
	case EX_METHOD:
		return ev_method(x, e, out);
	case EX_TEMPORAL: {
		if (!x->hook || !x->hook->eval)
			return EV_ERR;
		bool res = false;
		if (x->hook->eval(x->hook->ctx, x->p, x->rule, e->temporal, x->req, &res) < 0)
			return EV_ERR;
		out->t = V_BOOL;
		out->u.b = res;
		return 0;
	}
	default:
		return EV_ERR;
	}
}

static int
ev(struct ev *x, const struct expr *e, struct val *out)
{
	if (++x->depth > BP_MAX_DEPTH * 2) {
		x->depth--;
		return EV_ERR;
	}
	int r = ev_inner(x, e, out);
	x->depth--;
	return r;
}

/*
 * A compiled condition's truth (struct cnode, index.c) at node I: 1, 0 or
 * EV_ERR, exactly as ev_bool on the AST it came from, counting depth per
 * node as ev does.
 */
static int
run(struct ev *x, const struct cnode *c, uint32_t i)
{
	if (++x->depth > BP_MAX_DEPTH * 2) {
		x->depth--;
		return EV_ERR;
	}
	const struct cnode *n = &c[i];
	const struct val *v;
	int r;
	switch (n->op) {
	case C_AND:
		r = run(x, c, i + 1);
		if (r == 1)
			r = run(x, c, n->right);
		break;
	case C_OR:
		r = run(x, c, i + 1);
		if (r == 0)
			r = run(x, c, n->right);
		break;
	case C_NOT:
		r = run(x, c, i + 1);
		if (r >= 0)
			r = !r;
		break;
	/* the evaluator would visit context.input (and context) below these: as deep */
	case C_HAS:
		r = x->depth + 2 > BP_MAX_DEPTH * 2 ? EV_ERR
						    : request_field(x->req, n->fatom) != NULL;
		break;
	case C_LIKE:
		v = request_field(x->req, n->fatom);
		r = v && v->t == V_STR && x->depth + 1 <= BP_MAX_DEPTH * 2
			    ? like_match(n->arg, v->u.s, v->len)
			    : EV_ERR;
		break;
	case C_EQ:
		v = request_field(x->req, n->fatom);
		r = v && x->depth + 1 <= BP_MAX_DEPTH * 2 ? val_eq(v, n->arg) : EV_ERR;
		break;
	default: {
		bool b;
		x->depth--;
		return ev_bool(x, n->arg, &b) < 0 ? EV_ERR : b;
	}
	}
	x->depth--;
	return r;
}

int
eval_expr(const struct bp_policy *p, const struct bp_request *req,
	  const struct bp_temporal_hook *hook, size_t rule, struct arena *scratch,
	  const struct expr *e, struct val *out)
{
	struct ev x = { .p = p, .req = req, .hook = hook, .rule = rule, .scratch = scratch };
	return ev(&x, e, out) < 0 ? -1 : 0;
}

/* ---- deciding ---- */

static int
grow_work(struct bp_decision *d, size_t n)
{
	if (n <= d->cap_work)
		return 0;
	size_t cap = d->cap_work ? d->cap_work : 64;
	while (cap < n)
		cap *= 2;
	size_t *f = realloc(d->forbids, cap * sizeof(*f));
	if (!f)
		return -ENOMEM;
	d->forbids = f;
	size_t *p = realloc(d->permits, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	d->permits = p;
	size_t *e = realloc(d->errors, cap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	d->errors = e;
	size_t *r = realloc(d->rules, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	d->rules = r;
	uint32_t *c = realloc(d->cand, cap * sizeof(*c));
	if (!c)
		return -ENOMEM;
	d->cand = c;
	uint64_t *m = realloc(d->marks, (cap / 64 + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	d->marks = m;
	d->cap_work = cap;
	d->cap_rules = cap;
	return 0;
}

/* Merge sorted A (N) and sorted B (M) into OUT, dropping repeats; returns the count. */
static size_t
merge_sorted(const uint32_t *a, size_t n, const uint32_t *b, size_t m, uint32_t *out)
{
	size_t i = 0, j = 0, k = 0;
	while (i < n || j < m) {
		uint32_t x = j >= m || (i < n && a[i] <= b[j]) ? a[i++] : b[j++];
		if (k == 0 || out[k - 1] != x)
			out[k++] = x;
	}
	return k;
}

#define MAX_LISTS 32
#define SMALL_HITS 32

/*
 * The rules REQ must evaluate, in file order, into D->cand (index.c): the
 * action's always-evaluated rules and, per indexed field, the rules filed
 * under the request's value. Returns their count.
 */
static size_t
candidates(const struct bp_policy *p, const struct bp_request *req, struct bp_decision *d)
{
	const struct ix_action *ia = &p->ix[req->action];
	const uint32_t *lists[MAX_LISTS];
	uint32_t counts[MAX_LISTS];
	uint32_t hits[SMALL_HITS];
	size_t nh = 0;
	bool marking = false;
	size_t words = p->n_rules / 64 + 1;
	for (uint32_t fi = 0; fi < ia->n_fields; fi++) {
		const struct ix_field *f = &ia->fields[fi];
		size_t nl = index_lookup(f, request_field(req, f->atom), lists, counts, MAX_LISTS);
		for (size_t l = 0; l < nl; l++) {
			if (!marking && nh + counts[l] <= SMALL_HITS) {
				memcpy(hits + nh, lists[l], counts[l] * sizeof(*hits));
				nh += counts[l];
				continue;
			}
			if (!marking) {
				marking = true;
				memset(d->marks, 0, words * sizeof(*d->marks));
				for (size_t h = 0; h < nh; h++)
					d->marks[hits[h] / 64] |= 1ULL << (hits[h] % 64);
			}
			for (uint32_t h = 0; h < counts[l]; h++)
				d->marks[lists[l][h] / 64] |= 1ULL << (lists[l][h] % 64);
		}
	}
	if (marking) {
		for (uint32_t h = 0; h < ia->n_always; h++)
			d->marks[ia->always[h] / 64] |= 1ULL << (ia->always[h] % 64);
		size_t n = 0;
		for (size_t w = 0; w < words; w++)
			for (uint64_t bits = d->marks[w]; bits; bits &= bits - 1)
				d->cand[n++] = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(bits));
		return n;
	}
	/* a few hits: sort them (insertion), then merge with the always list */
	for (size_t i = 1; i < nh; i++) {
		uint32_t x = hits[i];
		size_t j = i;
		for (; j > 0 && hits[j - 1] > x; j--)
			hits[j] = hits[j - 1];
		hits[j] = x;
	}
	return merge_sorted(ia->always, ia->n_always, hits, nh, d->cand);
}

static bool
missing_required(const struct bp_policy *p, const struct bp_request *req)
{
	if (p->ix && req->fields_action == req->action && p->ix[req->action].required_in_mask)
		return (p->ix[req->action].required & ~req->present) != 0;
	const struct rtype *in = &p->schema.actions[req->action].input;
	for (size_t i = 0; i < in->n; i++)
		if (!in->attrs[i].optional && !request_field(req, in->attrs[i].atom))
			return true;
	return false;
}

int
bp_decide(const struct bp_policy *p, const struct bp_request *req,
	  const struct bp_temporal_hook *hook, struct bp_decision *d)
{
	if (!p || !req || !d || req->p != p)
		return -EINVAL;
	int r = grow_work(d, p->n_rules + 1);
	if (r < 0)
		return r;
	d->p = p;
	d->n_rules = 0;
	d->n_evaluated = 0;
	d->verdict = BP_DENY;
	arena_reset(&d->scratch);
	if (req->action == SIZE_MAX || req->problem[0] || req->action_pending ||
	    missing_required(p, req)) {
		d->cause = BP_CAUSE_ERROR;
		return format_message(p, req, d);
	}
	size_t nf = 0, np = 0, ne = 0;
	size_t n;
	const size_t *all = NULL;
	const uint32_t *cand = NULL;
	/* the index reads fields by atom: only when every field is the action's own */
	if (p->ix && (req->n_fields == 0 || req->fields_action == req->action)) {
		n = candidates(p, req, d);
		cand = d->cand;
	} else {
		all = p->by_action[req->action];
		n = p->n_by_action[req->action];
	}
	d->n_evaluated = n;
	struct ev x = { .p = p, .req = req, .hook = hook, .scratch = &d->scratch };
	for (size_t k = 0; k < n; k++) {
		size_t i = cand ? cand[k] : all[k];
		bool has_cond, forbid;
		if (p->code) {
			has_cond = p->code[i].at != UINT32_MAX;
			forbid = p->code[i].forbid;
		} else {
			has_cond = p->rules[i].cond != NULL;
			forbid = p->rules[i].forbid;
		}
		if (has_cond) {
			x.rule = i;
			x.depth = 0;
			int t;
			if (p->code) {
				t = run(&x, p->prog, p->code[i].at);
			} else {
				bool b;
				t = ev_bool(&x, p->rules[i].cond, &b) < 0 ? EV_ERR : b;
			}
			if (t < 0) {
				d->errors[ne++] = i;
				continue;
			}
			if (!t)
				continue;
		}
		if (forbid)
			d->forbids[nf++] = i;
		else
			d->permits[np++] = i;
	}
	const size_t *src;
	if (ne) {
		d->cause = BP_CAUSE_ERROR;
		src = d->errors;
		d->n_rules = ne;
	} else if (nf) {
		d->cause = BP_CAUSE_FORBIDDEN;
		src = d->forbids;
		d->n_rules = nf;
	} else if (np) {
		d->cause = BP_CAUSE_PERMITTED;
		d->verdict = BP_PERMIT;
		src = d->permits;
		d->n_rules = np;
	} else if (strcmp(p->schema.actions[req->action].ns, "Box") != 0) {
		/* A per-tool action refines a permitted mcp:call: nothing matched, it stands. */
		d->cause = BP_CAUSE_NOT_REFINED;
		d->verdict = BP_PERMIT;
		src = NULL;
	} else {
		d->cause = BP_CAUSE_NO_MATCH;
		src = NULL;
	}
	if (src)
		memcpy(d->rules, src, d->n_rules * sizeof(*src));
	if (d->skip_permit_message && d->cause == BP_CAUSE_PERMITTED) {
		d->msg[0] = 0;
		return 0;
	}
	return format_message(p, req, d);
}

int
bp_decision_new(struct bp_decision **ret)
{
	struct bp_decision *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->scratch.cap = 64u << 20;
	*ret = d;
	return 0;
}

void
bp_decision_free(struct bp_decision *d)
{
	if (!d)
		return;
	free(d->rules);
	free(d->forbids);
	free(d->permits);
	free(d->errors);
	free(d->cand);
	free(d->marks);
	arena_free(&d->scratch);
	free(d);
}

enum bp_verdict
bp_decision_verdict(const struct bp_decision *d)
{
	return d->verdict;
}

enum bp_cause
bp_decision_cause(const struct bp_decision *d)
{
	return d->cause;
}

size_t
bp_decision_rule_count(const struct bp_decision *d)
{
	return d->n_rules;
}

size_t
bp_decision_rule_index(const struct bp_decision *d, size_t i)
{
	return i < d->n_rules ? d->rules[i] : SIZE_MAX;
}

const char *
bp_decision_rule_name(const struct bp_decision *d, size_t i)
{
	return i < d->n_rules ? d->p->rules[d->rules[i]].name : NULL;
}

const char *
bp_decision_message(const struct bp_decision *d)
{
	return d->msg;
}

void
bp_decision_skip_permit_message(struct bp_decision *d, bool skip)
{
	d->skip_permit_message = skip;
}

size_t
bp_decision_rules_evaluated(const struct bp_decision *d)
{
	return d->n_evaluated;
}

const char *
bp_verdict_str(enum bp_verdict v)
{
	return v == BP_PERMIT ? "permit" : "deny";
}

const char *
bp_cause_str(enum bp_cause c)
{
	switch (c) {
	case BP_CAUSE_PERMITTED: return "permitted";
	case BP_CAUSE_FORBIDDEN: return "forbidden";
	case BP_CAUSE_NO_MATCH: return "no_match";
	case BP_CAUSE_ERROR: return "error";
	case BP_CAUSE_NOT_REFINED: return "not_refined";
	default: return "error";
	}
}
