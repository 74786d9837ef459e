/* SPDX-License-Identifier: Apache-2.0 */
/*
 * index.c — the rule index bp_decide walks instead of every rule whose scope
 * names the action: per action, the rules that must always be evaluated,
 * and the rules whose condition starts with a literal test on one
 * context.input field, filed under that test's literals.
 *
 * A rule is skipped only when evaluating it would give `false` without an
 * error, so a decision (verdict, cause, its rules and their order, the
 * temporal hook's calls) is the same with the index as without it. The
 * condition's conjuncts are read in evaluation order (bp_decide's `&&` is
 * short-circuit, left to right):
 *   - leading conjuncts that cannot error are passed over: `true`, an
 *     action test against literals (`action == A`, `action in [A, B]`),
 *     `context.input has F` (F noted as guarded), and `||`, `&&`, `!` of
 *     those. Each is decided here per action where it can be: an action
 *     test, and `has F` for an action without a field F (bp_decide uses the
 *     index only when every field of the request was set under its action),
 *     so a rule false for an action is no candidate of it;
 *   - the first other conjunct is the key test when it is one of
 *     `context.input.F == LIT` (either side), `[LIT, …].contains(
 *     context.input.F)`, `context.input.F like "P"` with a literal start
 *     (an exact string without a wildcard, else the prefix before the
 *     first `*`), or an `||` of such tests on the same F. With F present,
 *     none of these errors and each is false unless F's value is one of
 *     the literals (or starts with a prefix); a `like` errors on a value
 *     that is not a string, so such a field's rules are all evaluated then.
 *     With F absent the test errors, so the rule is evaluated, unless a
 *     leading `has F` made it false first.
 *   - any other rule (no condition, an `unless` or temporal clause first,
 *     a key the index cannot read) goes to the always-evaluated list.
 * The lists keep file order; bp_decide merges a request's candidates back
 * into file order before evaluating them.
 *
 * It also compiles every rule's condition (struct cnode in internal.h) into
 * one array, so bp_decide reads a rule's nodes side by side instead of
 * walking the parse tree, whose nodes are large and scattered.
 *
 * Trusts: a policy that passed validation; builds read-only tables in the
 * policy's arena (concurrent bp_decide calls only read them).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- hashing a key or a request value (the same function both ways) ---- */

static uint64_t
hash_bytes(uint64_t h, const void *p, size_t n)
{
	/* eight bytes at a time, multiply and fold (the same function both ways) */
	const unsigned char *s = p;
	const uint64_t k = 0x9e3779b97f4a7c15ULL;
	for (; n >= 8; s += 8, n -= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * k;
		h ^= h >> 29;
	}
	uint64_t w = (uint64_t)n << 56;
	for (size_t i = 0; i < n; i++)
		w |= (uint64_t)s[i] << (8 * i);
	h = (h ^ w) * k;
	return h ^ (h >> 32);
}

uint64_t
index_hash(const struct val *v, bool prefix, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ ((uint64_t)v->t << 8) ^ (prefix ? 1 : 0);
	switch (v->t) {
	case V_STR: return hash_bytes(h, v->u.s, len);
	case V_LONG: return hash_bytes(h, &v->u.l, sizeof(v->u.l));
	case V_BOOL: return h ^ (v->u.b ? 0x9e3779b97f4a7c15ULL : 0);
	case V_ENT:
		/* the id alone: entity types compare by name (val_eq), not by pointer */
		return hash_bytes(h, v->u.e.id, v->len);
	default: return h;
	}
}

/* ---- reading a condition ---- */

static bool
is_context_input(const struct bp_policy *p, const struct expr *e)
{
	return e && e->kind == EX_ATTR && e->atom == p->atom_input && e->a &&
	       e->a->kind == EX_VAR && e->a->var == VAR_CONTEXT;
}

/* context.input.F: F's atom, else UINT32_MAX */
static uint32_t
input_field(const struct bp_policy *p, const struct expr *e)
{
	if (e && e->kind == EX_ATTR && e->atom != UINT32_MAX && is_context_input(p, e->a))
		return e->atom;
	return UINT32_MAX;
}

static bool
key_literal(const struct expr *e)
{
	return e && e->kind == EX_LIT &&
	       (e->v.t == V_STR || e->v.t == V_LONG || e->v.t == V_BOOL || e->v.t == V_ENT);
}

struct key {
	struct val v;
	bool prefix;
};

struct keyset {
	uint32_t atom; /* UINT32_MAX until the first test names it */
	bool str_only; /* a key from `like`: a value that is not a string errors */
	size_t n, cap;
	struct key *k;
	bool oom;
};

static bool
add_key(struct keyset *ks, uint32_t atom, const struct val *v, bool prefix)
{
	if (ks->atom != UINT32_MAX && ks->atom != atom)
		return false;
	ks->atom = atom;
	if (ks->n == ks->cap) {
		size_t cap = ks->cap ? ks->cap * 2 : 8;
		struct key *k = realloc(ks->k, cap * sizeof(*k));
		if (!k) {
			ks->oom = true;
			return false;
		}
		ks->k = k;
		ks->cap = cap;
	}
	ks->k[ks->n++] = (struct key){ .v = *v, .prefix = prefix };
	return true;
}

/* E is a key test (see the top of the file): its literals into KS. */
static bool
key_test(const struct bp_policy *p, const struct expr *e, struct keyset *ks, int depth)
{
	if (!e || depth > BP_MAX_DEPTH)
		return false;
	uint32_t f;
	switch (e->kind) {
	case EX_EQ:
		if ((f = input_field(p, e->a)) != UINT32_MAX && key_literal(e->b))
			return add_key(ks, f, &e->b->v, false);
		if ((f = input_field(p, e->b)) != UINT32_MAX && key_literal(e->a))
			return add_key(ks, f, &e->a->v, false);
		return false;
	case EX_LIKE: {
		const struct pattern *pat = e->pat;
		if ((f = input_field(p, e->a)) == UINT32_MAX || !pat || pat->n_runs == 0)
			return false;
		struct val v = { .t = V_STR, .len = pat->lens[0], .u.s = pat->runs[0] };
		if (pat->n_runs > 1 && pat->lens[0] == 0)
			return false; /* a leading `*`: no literal start */
		ks->str_only = true;
		return add_key(ks, f, &v, pat->n_runs > 1);
	}
	case EX_METHOD:
		if (e->fn != M_CONTAINS || e->n != 1 || !e->a || e->a->kind != EX_SET ||
		    (f = input_field(p, e->items[0])) == UINT32_MAX)
			return false;
		for (size_t i = 0; i < e->a->n; i++)
			if (!key_literal(e->a->items[i]))
				return false;
		for (size_t i = 0; i < e->a->n; i++)
			if (!add_key(ks, f, &e->a->items[i]->v, false))
				return false;
		return e->a->n > 0;
	case EX_OR:
		return key_test(p, e->a, ks, depth + 1) && key_test(p, e->b, ks, depth + 1);
	default: return false;
	}
}

/* The conjuncts of COND in evaluation order (the && tree's leaves, left to right). */
static size_t
conjuncts(const struct expr *e, const struct expr **out, size_t cap, size_t n, int depth)
{
	if (!e || n >= cap)
		return n;
	if (e->kind == EX_AND && depth < BP_MAX_DEPTH) {
		n = conjuncts(e->a, out, cap, n, depth + 1);
		return conjuncts(e->b, out, cap, n, depth + 1);
	}
	out[n++] = e;
	return n;
}

enum pass { PASS_OVER, PASS_FALSE, PASS_STOP };

static bool
is_action_var(const struct expr *e)
{
	return e && e->kind == EX_VAR && e->var == VAR_ACTION;
}

static bool
action_has_field(const struct s_action *action, uint32_t atom)
{
	for (size_t i = 0; i < action->input.n; i++)
		if (action->input.attrs[i].atom == atom)
			return true;
	return false;
}

/*
 * E, for a request of ACTION: PASS_OVER when it cannot error (noting a
 * `has` into GUARD), PASS_FALSE when it is false without an error, else
 * PASS_STOP. bp_decide uses the index only for a request whose every field
 * was set under its action (checked against that action's fields), so
 * `context.input has F` is false when the action has no field F.
 */
static enum pass
pass_over(const struct bp_policy *p, const struct expr *e, const struct s_action *action,
	  uint32_t *guard, size_t *n_guard, size_t cap_guard, int depth)
{
	if (!e || depth > BP_MAX_DEPTH)
		return PASS_STOP;
	struct val act = { .t = V_ENT, .u.e = { .etype = action->etype, .id = action->id },
			   .len = (uint32_t)strlen(action->id) };
	if (e->kind == EX_LIT && e->v.t == V_BOOL)
		return e->v.u.b ? PASS_OVER : PASS_FALSE;
	if (e->kind == EX_EQ) {
		const struct expr *lit = is_action_var(e->a) ? e->b : is_action_var(e->b) ? e->a : NULL;
		if (!lit || lit->kind != EX_LIT || lit->v.t != V_ENT)
			return PASS_STOP;
		return val_eq(&act, &lit->v) ? PASS_OVER : PASS_FALSE;
	}
	if (e->kind == EX_IN && is_action_var(e->a) && e->b) {
		if (e->b->kind == EX_LIT && e->b->v.t == V_ENT)
			return val_eq(&act, &e->b->v) ? PASS_OVER : PASS_FALSE;
		if (e->b->kind != EX_SET)
			return PASS_STOP;
		bool any = false;
		for (size_t i = 0; i < e->b->n; i++) {
			const struct expr *it = e->b->items[i];
			if (!it || it->kind != EX_LIT || it->v.t != V_ENT)
				return PASS_STOP;
			any = any || val_eq(&act, &it->v);
		}
		return any ? PASS_OVER : PASS_FALSE;
	}
	if (e->kind == EX_HAS && is_context_input(p, e->a)) {
		if (e->atom == UINT32_MAX || !action_has_field(action, e->atom))
			return PASS_FALSE;
		if (*n_guard < cap_guard)
			guard[(*n_guard)++] = e->atom;
		return PASS_OVER;
	}
	if (e->kind == EX_AND) {
		/* false when its left is; when its left cannot error, also when its right is */
		enum pass l = pass_over(p, e->a, action, guard, n_guard, cap_guard, depth + 1);
		if (l != PASS_OVER)
			return l;
		return pass_over(p, e->b, action, guard, n_guard, cap_guard, depth + 1);
	}
	if (e->kind == EX_OR) {
		/* guards inside an `||` guard nothing after it: none noted */
		uint32_t g[1];
		size_t ng = 0;
		enum pass l = pass_over(p, e->a, action, g, &ng, 0, depth + 1);
		if (l == PASS_STOP)
			return PASS_STOP;
		enum pass r = pass_over(p, e->b, action, g, &ng, 0, depth + 1);
		if (l == PASS_FALSE)
			return r; /* the `||` is its right side */
		return r == PASS_STOP ? PASS_STOP : PASS_OVER;
	}
	if (e->kind == EX_NOT) {
		/* `unless`: the negation of what cannot error cannot error */
		uint32_t g[1];
		size_t ng = 0;
		return pass_over(p, e->a, action, g, &ng, 0, depth + 1) == PASS_STOP ? PASS_STOP
										     : PASS_OVER;
	}
	return PASS_STOP;
}

/* ---- building ---- */

struct pending_key { /* one (rule, key) of one field while building */
	struct key k;
	uint32_t rule;
	uint64_t h;
	size_t len;
};

struct pending_field {
	uint32_t atom;
	bool str_only;
	size_t n_keys, cap_keys;
	struct pending_key *keys;
	size_t n_rules, n_absent;
	uint32_t *rules, *absent; /* file order; malloc'd with room for every rule */
};

static int
cmp_pending_key(const void *a, const void *b)
{
	const struct pending_key *x = a, *y = b;
	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	if (x->k.prefix != y->k.prefix)
		return x->k.prefix ? 1 : -1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	/* equal hashes: group equal keys together (then by rule: file order) */
	int c = 0;
	if (x->k.v.t != y->k.v.t)
		c = x->k.v.t < y->k.v.t ? -1 : 1;
	else if (!val_eq(&x->k.v, &y->k.v)) {
		if (x->k.v.t == V_STR || x->k.v.t == V_ENT)
			c = memcmp(x->k.v.t == V_STR ? x->k.v.u.s : x->k.v.u.e.id,
				   y->k.v.t == V_STR ? y->k.v.u.s : y->k.v.u.e.id, x->len);
		if (!c && x->k.v.t == V_ENT)
			c = strcmp(x->k.v.u.e.etype, y->k.v.u.e.etype);
		if (!c && x->k.v.t == V_LONG)
			c = x->k.v.u.l < y->k.v.u.l ? -1 : 1;
		if (!c && x->k.v.t == V_BOOL)
			c = x->k.v.u.b < y->k.v.u.b ? -1 : 1;
	}
	if (c)
		return c;
	return x->rule < y->rule ? -1 : x->rule > y->rule;
}

static bool
same_key(const struct pending_key *x, const struct pending_key *y)
{
	return x->h == y->h && x->k.prefix == y->k.prefix && x->len == y->len &&
	       val_eq(&x->k.v, &y->k.v);
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int
finish_field(struct bp_policy *p, struct pending_field *pf, struct ix_field *f)
{
	f->atom = pf->atom;
	f->str_only = pf->str_only;
	f->n_all = (uint32_t)pf->n_rules;
	f->n_absent = (uint32_t)pf->n_absent;
	f->all = arena_alloc(&p->ar, (pf->n_rules + 1) * sizeof(*f->all));
	f->absent = arena_alloc(&p->ar, (pf->n_absent + 1) * sizeof(*f->absent));
	if (!f->all || !f->absent)
		return -ENOMEM;
	memcpy((uint32_t *)f->all, pf->rules, pf->n_rules * sizeof(*f->all));
	memcpy((uint32_t *)f->absent, pf->absent, pf->n_absent * sizeof(*f->absent));

	if (bp_msort(pf->keys, pf->n_keys, sizeof(*pf->keys), cmp_pending_key) < 0)
		return -ENOMEM;
	size_t n_distinct = 0, n_plens = 0;
	uint32_t *plens = malloc((pf->n_keys + 1) * sizeof(*plens));
	if (!plens)
		return -ENOMEM;
	for (size_t i = 0; i < pf->n_keys; i++) {
		if (i == 0 || !same_key(&pf->keys[i - 1], &pf->keys[i]))
			n_distinct++;
		if (pf->keys[i].k.prefix)
			plens[n_plens++] = (uint32_t)pf->keys[i].len;
	}
	if (bp_msort(plens, n_plens, sizeof(*plens), cmp_u32) < 0) {
		free(plens);
		return -ENOMEM;
	}
	size_t u = 0;
	for (size_t i = 0; i < n_plens; i++)
		if (u == 0 || plens[u - 1] != plens[i])
			plens[u++] = plens[i];
	f->n_plens = (uint32_t)u;
	f->plens = arena_alloc(&p->ar, (u + 1) * sizeof(*f->plens));
	if (!f->plens) {
		free(plens);
		return -ENOMEM;
	}
	memcpy((uint32_t *)f->plens, plens, u * sizeof(*plens));
	free(plens);

	size_t slots = 4;
	while (slots < n_distinct * 2)
		slots *= 2;
	f->mask = (uint32_t)(slots - 1);
	f->slots = arena_alloc(&p->ar, slots * sizeof(*f->slots));
	uint32_t *rules = arena_alloc(&p->ar, (pf->n_keys + 1) * sizeof(*rules));
	if (!f->slots || !rules)
		return -ENOMEM;
	for (size_t i = 0; i < pf->n_keys;) {
		size_t j = i, n = 0;
		uint32_t *start = rules;
		for (; j < pf->n_keys && same_key(&pf->keys[i], &pf->keys[j]); j++)
			if (n == 0 || start[n - 1] != pf->keys[j].rule) /* `F == "a" || F == "a"` */
				start[n++] = pf->keys[j].rule;
		rules += n;
		size_t s = pf->keys[i].h & f->mask;
		while (f->slots[s].rules)
			s = (s + 1) & f->mask;
		f->slots[s] = (struct ix_slot){ .h = pf->keys[i].h, .key = pf->keys[i].k.v,
						.prefix = pf->keys[i].k.prefix,
						.len = (uint32_t)pf->keys[i].len,
						.n = (uint32_t)n, .rules = start };
		i = j;
	}
	return 0;
}

static struct pending_field *
field_of(struct pending_field **fields, size_t *n, uint32_t atom, size_t n_rules)
{
	for (size_t i = 0; i < *n; i++)
		if ((*fields)[i].atom == atom)
			return &(*fields)[i];
	struct pending_field *nf = realloc(*fields, (*n + 1) * sizeof(*nf));
	if (!nf)
		return NULL;
	*fields = nf;
	struct pending_field *f = &nf[(*n)++];
	memset(f, 0, sizeof(*f));
	f->atom = atom;
	f->rules = malloc((n_rules + 1) * sizeof(*f->rules));
	f->absent = malloc((n_rules + 1) * sizeof(*f->absent));
	if (!f->rules || !f->absent)
		return NULL;
	return f;
}

static void
free_fields(struct pending_field *fields, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(fields[i].keys);
		free(fields[i].rules);
		free(fields[i].absent);
	}
	free(fields);
}

#define MAX_CONJ 64
#define MAX_GUARD 16

/* Index action A's candidate rules (p->by_action[A], file order) into IA. */
static int
index_action(struct bp_policy *p, size_t a, struct ix_action *ia)
{
	const size_t *cand = p->by_action[a];
	size_t n = p->n_by_action[a];
	const struct s_action *act = &p->schema.actions[a];
	uint32_t *always = arena_alloc(&p->ar, (n + 1) * sizeof(*always));
	if (!always)
		return -ENOMEM;
	ia->required_in_mask = true;
	for (size_t i = 0; i < act->input.n; i++) {
		if (act->input.attrs[i].optional)
			continue;
		if (i < 64)
			ia->required |= 1ULL << i;
		else
			ia->required_in_mask = false;
	}
	struct pending_field *fields = NULL;
	size_t n_fields = 0;
	struct keyset ks = { 0 };
	int r = 0;
	for (size_t c = 0; c < n; c++) {
		uint32_t i = (uint32_t)cand[c];
		const struct rule *rule = &p->rules[i];
		const struct expr *conj[MAX_CONJ];
		size_t nc = rule->cond ? conjuncts(rule->cond, conj, MAX_CONJ, 0, 0) : 0;
		uint32_t guard[MAX_GUARD];
		size_t n_guard = 0, k = 0;
		enum pass ps = PASS_OVER;
		for (; k < nc; k++) {
			ps = pass_over(p, conj[k], act, guard, &n_guard, MAX_GUARD, 0);
			if (ps != PASS_OVER)
				break;
		}
		if (ps == PASS_FALSE)
			continue; /* false for this action, without an error */
		ks.atom = UINT32_MAX;
		ks.str_only = false;
		ks.n = 0;
		/* a conjunct list cut at MAX_CONJ is still read from its start: fine */
		if (k >= nc || !key_test(p, conj[k], &ks, 0)) {
			if (ks.oom) {
				r = -ENOMEM;
				break;
			}
			always[ia->n_always++] = i;
			continue;
		}
		struct pending_field *f = field_of(&fields, &n_fields, ks.atom, n);
		if (!f) {
			r = -ENOMEM;
			break;
		}
		f->str_only |= ks.str_only;
		f->rules[f->n_rules++] = i;
		bool guarded = false;
		for (size_t g = 0; g < n_guard; g++)
			guarded |= guard[g] == ks.atom;
		if (!guarded)
			f->absent[f->n_absent++] = i;
		if (f->n_keys + ks.n > f->cap_keys) {
			size_t cap = f->cap_keys ? f->cap_keys : 8;
			while (cap < f->n_keys + ks.n)
				cap *= 2;
			struct pending_key *nk = realloc(f->keys, cap * sizeof(*nk));
			if (!nk) {
				r = -ENOMEM;
				break;
			}
			f->keys = nk;
			f->cap_keys = cap;
		}
		for (size_t j = 0; j < ks.n; j++) {
			uint8_t t = ks.k[j].v.t;
			size_t len = t == V_STR || t == V_ENT ? ks.k[j].v.len : 0;
			f->keys[f->n_keys++] = (struct pending_key){
				.k = ks.k[j], .rule = i, .len = len,
				.h = index_hash(&ks.k[j].v, ks.k[j].prefix, len),
			};
		}
	}
	free(ks.k);
	ia->always = always;
	if (r == 0 && n_fields) {
		ia->fields = arena_alloc(&p->ar, n_fields * sizeof(*ia->fields));
		if (!ia->fields)
			r = -ENOMEM;
		for (size_t i = 0; r == 0 && i < n_fields; i++)
			r = finish_field(p, &fields[i], &ia->fields[i]);
		if (r == 0)
			ia->n_fields = (uint32_t)n_fields;
	}
	free_fields(fields, n_fields);
	return r;
}

/* ---- compiling conditions (struct cnode) ---- */

struct prog {
	struct cnode *c;
	size_t n, cap;
	bool oom;
};

static uint32_t
emit(struct prog *pg, uint8_t op, uint32_t fatom, const void *arg)
{
	if (pg->n == pg->cap) {
		size_t cap = pg->cap ? pg->cap * 2 : 256;
		struct cnode *c = cap < UINT32_MAX ? realloc(pg->c, cap * sizeof(*c)) : NULL;
		if (!c) {
			pg->oom = true;
			return 0;
		}
		pg->c = c;
		pg->cap = cap;
	}
	pg->c[pg->n] = (struct cnode){ .op = op, .fatom = fatom, .arg = arg };
	return (uint32_t)pg->n++;
}

/* A pattern in one block (the struct, its runs and their bytes), near the program. */
static const struct pattern *
copy_pattern(struct bp_policy *p, const struct pattern *src)
{
	size_t bytes = 0;
	for (size_t i = 0; i < src->n_runs; i++)
		bytes += src->lens[i];
	size_t n = src->n_runs ? src->n_runs : 1;
	char *blk = arena_alloc(&p->ar, sizeof(struct pattern) + n * sizeof(char *) +
						 n * sizeof(uint32_t) + bytes + 1);
	if (!blk)
		return NULL;
	struct pattern *d = (struct pattern *)blk;
	*d = *src;
	d->runs = (const char **)(blk + sizeof(*d));
	d->lens = (uint32_t *)(blk + sizeof(*d) + n * sizeof(char *));
	char *chars = (char *)d->lens + n * sizeof(uint32_t);
	for (size_t i = 0; i < src->n_runs; i++) {
		memcpy(chars, src->runs[i], src->lens[i]);
		d->runs[i] = chars;
		d->lens[i] = src->lens[i];
		chars += src->lens[i];
	}
	return d;
}

/*
 * Compile E into PG. Each node stands for one AST node, so bp_decide counts
 * evaluation depth as the evaluator does; a subtree past the bound is one
 * C_GENERAL node (evaluated from the AST: the same result).
 */
static void
compile(struct bp_policy *p, struct prog *pg, const struct expr *e, int depth)
{
	uint32_t f;
	const struct expr *lit;
	if (depth > 4 * BP_MAX_DEPTH)
		goto general;
	switch (e->kind) {
	case EX_AND:
	case EX_OR: {
		uint32_t at = emit(pg, e->kind == EX_AND ? C_AND : C_OR, 0, NULL);
		compile(p, pg, e->a, depth + 1);
		uint32_t right = (uint32_t)pg->n;
		compile(p, pg, e->b, depth + 1);
		if (!pg->oom)
			pg->c[at].right = right;
		return;
	}
	case EX_NOT:
		emit(pg, C_NOT, 0, NULL);
		compile(p, pg, e->a, depth + 1);
		return;
	case EX_HAS:
		if (e->atom == UINT32_MAX || !is_context_input(p, e->a))
			goto general;
		emit(pg, C_HAS, e->atom, NULL);
		return;
	case EX_LIKE: {
		if (!e->pat || (f = input_field(p, e->a)) == UINT32_MAX)
			goto general;
		const struct pattern *pat = copy_pattern(p, e->pat);
		if (!pat) {
			pg->oom = true;
			return;
		}
		emit(pg, C_LIKE, f, pat);
		return;
	}
	case EX_EQ: {
		if ((f = input_field(p, e->a)) != UINT32_MAX && e->b && e->b->kind == EX_LIT)
			lit = e->b;
		else if ((f = input_field(p, e->b)) != UINT32_MAX && e->a && e->a->kind == EX_LIT)
			lit = e->a;
		else
			goto general;
		struct val *v = arena_alloc(&p->ar, sizeof(*v));
		if (!v) {
			pg->oom = true;
			return;
		}
		*v = lit->v;
		emit(pg, C_EQ, f, v);
		return;
	}
	default: break;
	}
general:
	emit(pg, C_GENERAL, 0, e);
}

static int
compile_rules(struct bp_policy *p)
{
	p->code = arena_alloc(&p->ar, (p->n_rules + 1) * sizeof(*p->code));
	if (!p->code)
		return -ENOMEM;
	struct prog pg = { 0 };
	for (size_t i = 0; i < p->n_rules && !pg.oom; i++) {
		p->code[i].at = p->rules[i].cond ? (uint32_t)pg.n : UINT32_MAX;
		p->code[i].forbid = p->rules[i].forbid;
		if (p->rules[i].cond)
			compile(p, &pg, p->rules[i].cond, 0);
	}
	if (!pg.oom) {
		p->prog = arena_alloc(&p->ar, (pg.n + 1) * sizeof(*p->prog));
		if (p->prog && pg.n)
			memcpy(p->prog, pg.c, pg.n * sizeof(*p->prog));
	}
	free(pg.c);
	return pg.oom || !p->prog ? -ENOMEM : 0;
}

int
index_build(struct bp_policy *p)
{
	int r = compile_rules(p);
	if (r < 0)
		return r;
	size_t na = p->schema.n_actions;
	p->ix = arena_alloc(&p->ar, (na ? na : 1) * sizeof(*p->ix));
	if (!p->ix)
		return -ENOMEM;
	for (size_t a = 0; a < na; a++) {
		r = index_action(p, a, &p->ix[a]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- looking a request up ---- */

static const struct ix_slot *
lookup(const struct ix_field *f, const struct val *v, bool prefix, size_t len)
{
	uint64_t h = index_hash(v, prefix, len);
	for (size_t s = h & f->mask;; s = (s + 1) & f->mask) {
		const struct ix_slot *sl = &f->slots[s];
		if (!sl->rules)
			return NULL;
		if (sl->h != h || sl->prefix != prefix || sl->len != len || sl->key.t != v->t)
			continue;
		if (v->t == V_STR ? memcmp(sl->key.u.s, v->u.s, len) == 0 : val_eq(&sl->key, v))
			return sl;
	}
}

size_t
index_lookup(const struct ix_field *f, const struct val *v, const uint32_t **lists,
	     uint32_t *counts, size_t cap)
{
	size_t n = 0;
	if (!v) {
		if (f->n_absent) {
			lists[n] = f->absent;
			counts[n++] = f->n_absent;
		}
		return n;
	}
	if (f->str_only && v->t != V_STR) {
		lists[n] = f->all;
		counts[n++] = f->n_all;
		return n;
	}
	const struct ix_slot *sl = lookup(f, v, false, v->t == V_STR || v->t == V_ENT ? v->len : 0);
	if (sl) {
		lists[n] = sl->rules;
		counts[n++] = sl->n;
	}
	if (v->t != V_STR)
		return n;
	for (size_t i = 0; i < f->n_plens && f->plens[i] <= v->len; i++) {
		if (n == cap) { /* more prefixes hit than room: evaluate the field's every rule */
			lists[0] = f->all;
			counts[0] = f->n_all;
			return 1;
		}
		sl = lookup(f, v, true, f->plens[i]);
		if (sl) {
			lists[n] = sl->rules;
			counts[n++] = sl->n;
		}
	}
	return n;
}
