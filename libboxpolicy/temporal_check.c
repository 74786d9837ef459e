/* SPDX-License-Identifier: Apache-2.0 */
/*
 * temporal_check.c — the load-time acceptance rules for temporal terms
 * (docs/box-policy.5.md): declared events and leaf field paths,
 * consistent types, closed variables, range restriction, producers before
 * consumers, aggregates only as comparison operands, tp-dependence, windows
 * ≤ 24h (the parser). Also the analysis the monitor needs (horizon, whether a
 * rule needs every event).
 *
 * Trusts: the parsed tree (temporal_parse.c bounds its size and depth); the
 * policy's schema.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "temporal.h"

struct tcheck {
	const struct bp_policy *p;
	const struct rule *r;
	struct tprog *t;
	struct bp_diags *d;
	char label[160];
	bool failed;
};

static void __attribute__((format(printf, 4, 5)))
cerr(struct tcheck *c, uint32_t line, uint32_t col, const char *fmt, ...)
{
	if (c->failed)
		return; /* one error per term: later ones are usually consequences */
	c->failed = true;
	char msg[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diag_add(c->d, BP_ERROR, line, col, "%s: temporal: %s", c->label, msg);
}

static uint64_t
bit(int var)
{
	return var >= 0 && var < TP_MAX_VARS ? 1ULL << var : 0;
}

static const char *
var_name(const struct tcheck *c, int var)
{
	return var >= 0 ? c->t->vars[var].name : "?";
}

/* the lowest variable of SET, for messages */
static int
first_var(uint64_t set)
{
	for (int i = 0; i < TP_MAX_VARS; i++)
		if (set & (1ULL << i))
			return i;
	return -1;
}

/* ---- types ---- */

static const char *
type_name(const struct type *ty, char *buf, size_t size)
{
	switch (ty->k) {
	case TY_LONG: return "Long";
	case TY_STRING: return "String";
	case TY_BOOL:
	case TY_TRUE:
	case TY_FALSE: return "Bool";
	case TY_SET: return "Set";
	case TY_RECORD: return "Record";
	case TY_ENTITY: snprintf(buf, size, "%s", ty->etype); return buf;
	case TY_IP: return "ipaddr";
	case TY_DEC: return "decimal";
	default: return "a value";
	}
}

static const char *
val_type_name(const struct val *v)
{
	switch (v->t) {
	case V_LONG: return "Long";
	case V_STR: return "String";
	case V_BOOL: return "Bool";
	case V_ENT: return v->u.e.etype;
	case V_SET: return "Set";
	case V_REC: return "Record";
	case V_DEC: return "decimal";
	default: return "a value";
	}
}

static bool
is_bool(const struct type *ty)
{
	return ty->k == TY_BOOL || ty->k == TY_TRUE || ty->k == TY_FALSE;
}

static bool
val_fits_type(const struct val *v, const struct type *ty)
{
	switch (v->t) {
	case V_LONG: return ty->k == TY_LONG;
	case V_STR: return ty->k == TY_STRING;
	case V_BOOL: return is_bool(ty);
	case V_ENT: return ty->k == TY_ENTITY && strcmp(ty->etype, v->u.e.etype) == 0;
	case V_SET: return ty->k == TY_SET || ty->k == TY_EMPTYSET;
	case V_DEC: return ty->k == TY_STRING || ty->k == TY_DEC;
	default: return true;
	}
}

static bool
var_fits_type(const struct tvar *v, const struct type *ty)
{
	switch (v->type) {
	case TV_LONG: return ty->k == TY_LONG;
	case TV_STRING: return ty->k == TY_STRING;
	case TV_BOOL: return is_bool(ty);
	case TV_ENTITY: return ty->k == TY_ENTITY && strcmp(ty->etype, v->etype) == 0;
	case TV_TIMEPOINT: return false;
	default: return true;
	}
}

static const struct rattr *
rtype_find(const struct rtype *rt, const char *name)
{
	for (size_t i = 0; rt && i < rt->n; i++)
		if (strcmp(rt->attrs[i].name, name) == 0)
			return &rt->attrs[i];
	return NULL;
}

/* Walk PATH[from..n) through record type RT; NULL when a step is missing. */
static const struct type *
walk_path(const struct rtype *rt, const char **path, size_t from, size_t n, size_t *bad)
{
	const struct type *ty = NULL;
	for (size_t i = from; i < n; i++) {
		const struct rattr *a = rtype_find(rt, path[i]);
		if (!a) {
			*bad = i;
			return NULL;
		}
		ty = &a->ty;
		if (i + 1 < n) {
			if (ty->k != TY_RECORD) {
				*bad = i + 1;
				return NULL;
			}
			rt = ty->rec;
		}
	}
	return ty;
}

static void
path_text(const char **path, size_t n, char *buf, size_t size)
{
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; i < n && o + 1 < size; i++)
		o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? "." : "", path[i]);
}

/* ---- the rule's actions (for context.input.X) ---- */

static bool
scope_has_action(const struct bp_policy *p, const struct rule *r, size_t idx)
{
	const struct s_action *a = &p->schema.actions[idx];
	const struct scope *s = &r->action;
	switch (s->kind) {
	case SC_ANY: return true;
	case SC_EQ:
	case SC_IN:
		return s->e.etype && s->e.id && strcmp(s->e.etype, a->etype) == 0 &&
		       strcmp(s->e.id, a->id) == 0;
	case SC_IN_SET:
		for (size_t i = 0; i < s->n; i++)
			if (s->set[i].etype && s->set[i].id && strcmp(s->set[i].etype, a->etype) == 0 &&
			    strcmp(s->set[i].id, a->id) == 0)
				return true;
		return false;
	default: return true;
	}
}

/* ---- schema pass: events, field paths, types, free variables ---- */

static void check_node_schema(struct tcheck *c, struct tnode *n, bool in_cmp);

static bool
check_entity(struct tcheck *c, const struct tterm *x)
{
	const char *et = x->v.u.e.etype;
	const struct bp_schema *s = &c->p->schema;
	for (size_t i = 0; i < s->n_enums; i++)
		if (strcmp(s->enums[i].etype, et) == 0) {
			for (size_t j = 0; j < s->enums[i].n; j++)
				if (strlen(s->enums[i].ids[j]) == x->v.len &&
				    memcmp(s->enums[i].ids[j], x->v.u.e.id, x->v.len) == 0)
					return true;
			char word[80], tail[600] = "";
			snprintf(word, sizeof(word), "%.*s", (int)(x->v.len > 70 ? 70 : x->v.len),
				 x->v.u.e.id);
			suggest_enum(tail, sizeof(tail), &s->enums[i], word);
			cerr(c, x->line, x->col,
			     "entity `%s::\"%.*s\"` is of an enumerated entity type, but `\"%.*s\"` is "
			     "not declared as a valid eid%s",
			     et, (int)(x->v.len > 60 ? 60 : x->v.len), x->v.u.e.id,
			     (int)(x->v.len > 60 ? 60 : x->v.len), x->v.u.e.id, tail);
			return false;
		}
	if (strcmp(et, "Box::Agent") == 0 || strcmp(et, "Box::Resource") == 0)
		return true;
	size_t n = strlen(et);
	if (n > 8 && strcmp(et + n - 8, "::Action") == 0)
		return true;
	char tail[600] = "";
	suggest_entity_type(tail, sizeof(tail), s, et);
	cerr(c, x->line, x->col, "unknown entity type `%s`%s", et, tail);
	return false;
}

/* Check term X; EXPECT (may be NULL) is the type it must fit. */
static void
check_term(struct tcheck *c, struct tterm *x, const struct type *expect, bool in_cmp,
	   const char *what)
{
	char tb[160];
	switch (x->kind) {
	case TT_LIT:
		if (x->v.t == V_ENT && !check_entity(c, x))
			return;
		if (expect && !val_fits_type(&x->v, expect))
			cerr(c, x->line, x->col, "%s: the types %s and %s are not compatible", what,
			     type_name(expect, tb, sizeof(tb)), val_type_name(&x->v));
		return;
	case TT_VAR:
		if (x->var < 0) {
			cerr(c, x->line, x->col,
			     "variable `%s` is free in this temporal condition; bind it with `exists "
			     "(%s: T).` or a `for` list, or write `_` for any value",
			     x->name, x->name);
			return;
		}
		if (expect && !var_fits_type(&c->t->vars[x->var], expect))
			cerr(c, x->line, x->col,
			     "%s: variable `%s` is declared %s, but the field is %s", what,
			     c->t->vars[x->var].name, c->t->vars[x->var].type_name,
			     type_name(expect, tb, sizeof(tb)));
		return;
	case TT_WILD: return;
	case TT_CONTEXT: {
		if (strcmp(x->path[0], "input") != 0 || x->n_path < 2) {
			cerr(c, x->line, x->col,
			     "`context.%s` is not a request field; write `context.input.FIELD`",
			     x->path[0]);
			return;
		}
		const struct bp_schema *s = &c->p->schema;
		for (size_t i = 0; i < s->n_actions; i++) {
			if (!scope_has_action(c->p, c->r, i))
				continue;
			size_t bad = 0;
			const struct type *ty = walk_path(&s->actions[i].input, x->path, 1, x->n_path,
							  &bad);
			char pt[256];
			path_text(x->path, x->n_path, pt, sizeof(pt));
			if (!ty) {
				cerr(c, x->line, x->col,
				     "`context.%s` is not a field of %s::\"%s\", which this rule applies "
				     "to",
				     pt, s->actions[i].etype, s->actions[i].id);
				return;
			}
			if (expect && ty->k != expect->k && expect->k != TY_NEVER) {
				char tb2[160];
				cerr(c, x->line, x->col, "%s: the types %s and %s are not compatible",
				     what, type_name(expect, tb, sizeof(tb)),
				     type_name(ty, tb2, sizeof(tb2)));
				return;
			}
		}
		return;
	}
	case TT_PRINCIPAL:
	case TT_RESOURCE:
		if (x->n_path)
			cerr(c, x->line, x->col, "`%s.%s`: Box entities have no attributes",
			     x->kind == TT_PRINCIPAL ? "principal" : "resource", x->path[0]);
		return;
	case TT_SET:
		for (size_t i = 0; i < x->n && !c->failed; i++)
			check_term(c, x->items[i], NULL, false, what);
		return;
	case TT_AGG: {
		struct tagg *a = x->agg;
		if (!in_cmp) {
			cerr(c, x->line, x->col,
			     "an aggregate can only be an operand of a comparison, e.g. `(count for "
			     "(t: Timepoint). where …) >= 3`");
			return;
		}
		if (a->sum) {
			if (a->sum_var < 0) {
				cerr(c, a->line, a->col,
				     "`sum %s`: the summed variable must be in the `for` list",
				     a->sum_name);
				return;
			}
			if (c->t->vars[a->sum_var].type != TV_LONG) {
				cerr(c, a->line, a->col, "`sum %s`: the summed variable must be Long",
				     a->sum_name);
				return;
			}
		}
		if (expect && expect->k != TY_LONG) {
			cerr(c, x->line, x->col, "%s: an aggregate is Long, compared with %s", what,
			     type_name(expect, tb, sizeof(tb)));
			return;
		}
		check_node_schema(c, a->body, false);
		return;
	}
	default: return;
	}
}

static void
check_pred(struct tcheck *c, struct tnode *n)
{
	const struct bp_schema *s = &c->p->schema;
	char ev[300];
	snprintf(ev, sizeof(ev), "%s::\"%s\"::%s", n->etype, n->aid, n->kind_name);
	size_t elen = strlen(n->etype);
	bool action_type = elen > 8 && strcmp(n->etype + elen - 8, "::Action") == 0;
	if (n->op == 0xff) {
		cerr(c, n->line, n->col,
		     "predicate `%s` does not name a declared event (no event kind `%s` derived for "
		     "action `%s`; the kinds are request, response and error)",
		     ev, n->kind_name, n->aid);
		return;
	}
	size_t idx = SIZE_MAX;
	if (!action_type || !schema_find_action(s, n->etype, n->aid, &idx)) {
		bool pending = false;
		bool known = action_type && schema_ns_known(s, n->ns, &pending);
		if (action_type && strcmp(n->ns, "Box") != 0 &&
		    ((known && pending) || (!known && c->p->allow_unknown_ns))) {
			n->action = SIZE_MAX; /* typed when the tool schema arrives */
			for (size_t i = 0; i < n->n_args && !c->failed; i++)
				check_term(c, n->args[i].t, NULL, false, "predicate field");
			return;
		}
		char tail[600] = "";
		if (action_type)
			suggest_action(tail, sizeof(tail), s, n->etype, n->aid);
		cerr(c, n->line, n->col,
		     "predicate `%s` does not name a declared event (no event kind `%s` derived for "
		     "action `%s`)%s",
		     ev, n->kind_name, n->aid, tail);
		return;
	}
	n->action = idx;
	const struct s_action *a = &s->actions[idx];
	static const struct type agent_ty = { .k = TY_ENTITY, .etype = "Box::Agent" };
	static const struct type resource_ty = { .k = TY_ENTITY, .etype = "Box::Resource" };
	for (size_t i = 0; i < n->n_args && !c->failed; i++) {
		struct targ *g = &n->args[i];
		char pt[256];
		path_text(g->path, g->n_path, pt, sizeof(pt));
		const struct type *ty = NULL;
		const char *head = g->path[0];
		if (strcmp(head, "input") == 0 || strcmp(head, "output") == 0) {
			bool out = head[0] == 'o';
			if (out && (n->op != BP_EVENT_RESPONSE || !a->has_output)) {
				cerr(c, g->line, g->col,
				     "`%s` is not a field of `%s` events%s", pt, ev,
				     n->op != BP_EVENT_RESPONSE ? " (only response events carry output)"
								: "");
				return;
			}
			if (g->n_path == 1) {
				cerr(c, g->line, g->col,
				     "field path `%s` names a group, not a field; name a leaf such as "
				     "`%s.%s`",
				     pt, head,
				     out ? (a->output.n ? a->output.attrs[0].name : "status")
					 : (a->input.n ? a->input.attrs[0].name : "path"));
				return;
			}
			size_t bad = 0;
			ty = walk_path(out ? &a->output : &a->input, g->path, 1, g->n_path, &bad);
			if (!ty) {
				char tail[600] = "";
				const struct rtype *top = out ? &a->output : &a->input;
				if (bad == 1)
					suggest_names(tail, sizeof(tail), g->path[1], top->attrs, top->n,
						      name_at_attrs,
						      out ? "output fields of this event"
							  : "input fields of this event");
				cerr(c, g->line, g->col, "attribute `%s` is not a field of event `%s`%s",
				     pt, ev, tail);
				return;
			}
			if (ty->k == TY_RECORD) {
				cerr(c, g->line, g->col,
				     "field path `%s` names a group, not a field; name one of its leaves",
				     pt);
				return;
			}
		} else if (strcmp(head, "callerPrincipal") == 0 ||
			   strcmp(head, "callerResource") == 0) {
			if (g->n_path != 1) {
				cerr(c, g->line, g->col, "attribute `%s` is not a field of event `%s`", pt,
				     ev);
				return;
			}
			ty = head[6] == 'P' ? &agent_ty : &resource_ty;
		} else if (strcmp(head, "requestId") == 0) {
			cerr(c, g->line, g->col,
			     "`requestId` is not recorded by this engine; match on the input fields "
			     "instead");
			return;
		} else {
			cerr(c, g->line, g->col,
			     "attribute `%s` is not a field of event `%s` (fields are input.…, output.… "
			     "and callerPrincipal, callerResource)",
			     pt, ev);
			return;
		}
		char what[600];
		snprintf(what, sizeof(what), "field `%s` of `%s`", pt, ev);
		check_term(c, g->t, ty, false, what);
	}
}

static bool
term_type(struct tcheck *c, const struct tterm *x, const char **name)
{
	/* a static type name for ordering checks; false when unknown */
	switch (x->kind) {
	case TT_LIT: *name = val_type_name(&x->v); return true;
	case TT_AGG: *name = "Long"; return true;
	case TT_VAR:
		if (x->var < 0)
			return false;
		switch (c->t->vars[x->var].type) {
		case TV_LONG: *name = "Long"; return true;
		case TV_TIMEPOINT: *name = "Timepoint"; return true;
		case TV_OTHER: return false;
		default: *name = c->t->vars[x->var].type_name; return true;
		}
	case TT_SET: *name = "Set"; return true;
	default: return false;
	}
}

static void
check_node_schema(struct tcheck *c, struct tnode *n, bool unused)
{
	(void)unused;
	if (c->failed)
		return;
	switch (n->kind) {
	case TN_AND:
		for (size_t i = 0; i < n->n; i++)
			check_node_schema(c, n->items[i], false);
		return;
	case TN_NOT:
	case TN_FORMERLY:
	case TN_PREVIOUS:
	case TN_EXISTS: check_node_schema(c, n->a, false); return;
	case TN_SINCE:
		check_node_schema(c, n->a, false);
		check_node_schema(c, n->b, false);
		return;
	case TN_TP:
		if (c->t->vars[n->var].type != TV_TIMEPOINT)
			cerr(c, n->line, n->col, "`tp(%s)` needs `%s` declared as Timepoint, not %s",
			     var_name(c, n->var), var_name(c, n->var), c->t->vars[n->var].type_name);
		return;
	case TN_PRED: check_pred(c, n); return;
	case TN_CMP: {
		static const char *const ops[] = { "==", "!=", "<", "<=", ">", ">=" };
		char what[32];
		snprintf(what, sizeof(what), "`%s`", ops[n->op % 6]);
		check_term(c, n->l, NULL, true, what);
		check_term(c, n->r, NULL, true, what);
		if (c->failed)
			return;
		if (n->op >= TC_LT) {
			const char *tn;
			const struct tterm *side[2] = { n->l, n->r };
			for (int i = 0; i < 2; i++)
				if (term_type(c, side[i], &tn) && strcmp(tn, "Long") != 0 &&
				    strcmp(tn, "Timepoint") != 0) {
					cerr(c, side[i]->line, side[i]->col,
					     "%s compares Long values, found %s", what, tn);
					return;
				}
		}
		return;
	}
	default: return;
	}
}

/* ---- variables: positive binding, free variables ---- */

static uint64_t node_free(const struct tnode *n);

static uint64_t
term_vars(const struct tterm *x)
{
	switch (x->kind) {
	case TT_VAR: return bit(x->var);
	case TT_SET: {
		uint64_t s = 0;
		for (size_t i = 0; i < x->n; i++)
			s |= term_vars(x->items[i]);
		return s;
	}
	case TT_AGG: {
		uint64_t own = 0;
		for (size_t i = 0; i < x->agg->n_for; i++)
			own |= bit(x->agg->for_vars[i]);
		return node_free(x->agg->body) & ~own;
	}
	default: return 0;
	}
}

/* variables NODE mentions that no binder inside it declares */
static uint64_t
node_free(const struct tnode *n)
{
	uint64_t s = 0;
	switch (n->kind) {
	case TN_AND:
		for (size_t i = 0; i < n->n; i++)
			s |= node_free(n->items[i]);
		return s;
	case TN_NOT:
	case TN_FORMERLY:
	case TN_PREVIOUS: return node_free(n->a);
	case TN_SINCE: return node_free(n->a) | node_free(n->b);
	case TN_EXISTS: return node_free(n->a) & ~bit(n->var);
	case TN_TP: return bit(n->var);
	case TN_PRED:
		for (size_t i = 0; i < n->n_args; i++)
			s |= term_vars(n->args[i].t);
		return s;
	case TN_CMP: return term_vars(n->l) | term_vars(n->r);
	default: return 0;
	}
}

/* variables NODE restricts through a positive atom */
static uint64_t
node_pos(const struct tnode *n)
{
	uint64_t s = 0;
	switch (n->kind) {
	case TN_AND:
		for (size_t i = 0; i < n->n; i++)
			s |= node_pos(n->items[i]);
		return s;
	case TN_NOT: return 0;
	case TN_FORMERLY:
	case TN_PREVIOUS: return node_pos(n->a);
	case TN_SINCE: return node_pos(n->b);
	case TN_EXISTS: return node_pos(n->a) & ~bit(n->var);
	case TN_TP: return bit(n->var);
	case TN_PRED:
		for (size_t i = 0; i < n->n_args; i++)
			if (n->args[i].t->kind == TT_VAR)
				s |= bit(n->args[i].t->var);
		return s;
	case TN_CMP:
		if (n->op != TC_EQ)
			return 0;
		if (n->l->kind == TT_VAR)
			s |= bit(n->l->var);
		if (n->r->kind == TT_VAR)
			s |= bit(n->r->var);
		return s;
	default: return 0;
	}
}

static void check_range_node(struct tcheck *c, const struct tnode *n);

static void
check_range_term(struct tcheck *c, const struct tterm *x)
{
	if (x->kind == TT_SET)
		for (size_t i = 0; i < x->n; i++)
			check_range_term(c, x->items[i]);
	if (x->kind != TT_AGG)
		return;
	const struct tagg *a = x->agg;
	uint64_t pos = node_pos(a->body);
	for (size_t i = 0; i < a->n_for && !c->failed; i++)
		if (!(pos & bit(a->for_vars[i]))) {
			const struct tvar *v = &c->t->vars[a->for_vars[i]];
			cerr(c, v->line, v->col,
			     "variable `%s` of the `for` list is not restricted by a positive atom of "
			     "the `where` body (an event predicate field, `tp(%s)` or `%s == …`); "
			     "negation and the left side of `since` restrict nothing",
			     v->name, v->name, v->name);
		}
	check_range_node(c, a->body);
}

static void
check_range_node(struct tcheck *c, const struct tnode *n)
{
	if (c->failed)
		return;
	switch (n->kind) {
	case TN_AND:
		for (size_t i = 0; i < n->n; i++)
			check_range_node(c, n->items[i]);
		return;
	case TN_NOT:
	case TN_FORMERLY:
	case TN_PREVIOUS: check_range_node(c, n->a); return;
	case TN_SINCE:
		check_range_node(c, n->a);
		check_range_node(c, n->b);
		return;
	case TN_EXISTS:
		if (!(node_pos(n->a) & bit(n->var))) {
			const struct tvar *v = &c->t->vars[n->var];
			cerr(c, v->line, v->col,
			     "variable `%s` is not restricted by a positive atom (an event predicate "
			     "field, `tp(%s)` or `%s == …`); negation and the left side of `since` "
			     "restrict nothing",
			     v->name, v->name, v->name);
			return;
		}
		check_range_node(c, n->a);
		return;
	case TN_PRED:
		for (size_t i = 0; i < n->n_args; i++)
			check_range_term(c, n->args[i].t);
		return;
	case TN_CMP:
		check_range_term(c, n->l);
		check_range_term(c, n->r);
		return;
	default: return;
	}
}

/* ---- producers before consumers ---- */

static uint64_t check_order(struct tcheck *c, const struct tnode *n, uint64_t bound);

static void
order_term(struct tcheck *c, const struct tterm *x, uint64_t bound)
{
	if (x->kind == TT_SET)
		for (size_t i = 0; i < x->n; i++)
			order_term(c, x->items[i], bound);
	if (x->kind != TT_AGG)
		return;
	uint64_t own = 0;
	for (size_t i = 0; i < x->agg->n_for; i++)
		own |= bit(x->agg->for_vars[i]);
	uint64_t corr = term_vars(x);
	if (corr & ~bound) {
		int v = first_var(corr & ~bound);
		cerr(c, x->line, x->col,
		     "the aggregate uses `%s`, which no conjunct to its left binds; bind it first",
		     var_name(c, v));
		return;
	}
	check_order(c, x->agg->body, bound & ~own);
}

static uint64_t
check_order(struct tcheck *c, const struct tnode *n, uint64_t bound)
{
	if (c->failed)
		return bound;
	switch (n->kind) {
	case TN_AND:
		for (size_t i = 0; i < n->n; i++)
			bound = check_order(c, n->items[i], bound);
		return bound;
	case TN_NOT: {
		uint64_t fv = node_free(n->a);
		if (fv & ~bound) {
			cerr(c, n->line, n->col,
			     "the negation uses `%s` before a conjunct to its left binds it; move it "
			     "after the conjunct that binds `%s`",
			     var_name(c, first_var(fv & ~bound)), var_name(c, first_var(fv & ~bound)));
			return bound;
		}
		check_order(c, n->a, bound);
		return bound;
	}
	case TN_FORMERLY:
	case TN_PREVIOUS: return check_order(c, n->a, bound);
	case TN_SINCE: {
		uint64_t br = check_order(c, n->b, bound);
		uint64_t fv = node_free(n->a);
		if (fv & ~br) {
			int v = first_var(fv & ~br);
			cerr(c, n->line, n->col,
			     "the left side of `since` uses `%s`, which neither an earlier conjunct nor "
			     "the right side binds",
			     var_name(c, v));
			return br;
		}
		check_order(c, n->a, br);
		return br;
	}
	case TN_EXISTS: return check_order(c, n->a, bound & ~bit(n->var));
	case TN_TP: return bound | bit(n->var);
	case TN_PRED:
		for (size_t i = 0; i < n->n_args; i++) {
			const struct tterm *t = n->args[i].t;
			if (t->kind == TT_VAR)
				bound |= bit(t->var);
			else if (t->kind == TT_SET && (term_vars(t) & ~bound)) {
				cerr(c, t->line, t->col,
				     "the set uses `%s` before a conjunct to its left binds it",
				     var_name(c, first_var(term_vars(t) & ~bound)));
				return bound;
			}
		}
		return bound;
	case TN_CMP: {
		order_term(c, n->l, bound);
		order_term(c, n->r, bound);
		if (c->failed)
			return bound;
		uint64_t lv = term_vars(n->l), rv = term_vars(n->r);
		if (n->op == TC_EQ) {
			if (n->l->kind == TT_VAR && !(lv & bound) && !(rv & ~bound))
				return bound | lv;
			if (n->r->kind == TT_VAR && !(rv & bound) && !(lv & ~bound))
				return bound | rv;
		}
		uint64_t un = (lv | rv) & ~bound;
		if (un) {
			static const char *const ops[] = { "==", "!=", "<", "<=", ">", ">=" };
			cerr(c, n->line, n->col,
			     "the comparison `%s` uses `%s` before a conjunct to its left binds it; "
			     "move it after the conjunct that binds `%s`",
			     ops[n->op % 6], var_name(c, first_var(un)), var_name(c, first_var(un)));
		}
		return bound;
	}
	default: return bound;
	}
}

/* ---- tp-dependence ---- */

static bool node_has_event(const struct tnode *n);

static bool
term_has_event(const struct tterm *x)
{
	if (x->kind == TT_AGG)
		return node_has_event(x->agg->body);
	if (x->kind == TT_SET)
		for (size_t i = 0; i < x->n; i++)
			if (term_has_event(x->items[i]))
				return true;
	return false;
}

static bool
node_has_event(const struct tnode *n)
{
	switch (n->kind) {
	case TN_AND:
		for (size_t i = 0; i < n->n; i++)
			if (node_has_event(n->items[i]))
				return true;
		return false;
	case TN_NOT:
	case TN_FORMERLY:
	case TN_PREVIOUS:
	case TN_EXISTS: return node_has_event(n->a);
	case TN_SINCE: return node_has_event(n->a) || node_has_event(n->b);
	case TN_TP:
	case TN_PRED: return true;
	case TN_CMP: return term_has_event(n->l) || term_has_event(n->r);
	default: return false;
	}
}

static void
need_event(struct tcheck *c, const struct tnode *n, const char *what)
{
	if (!c->failed && !node_has_event(n))
		cerr(c, n->line, n->col,
		     "%s does not vary with the current timepoint; it monitors nothing (give it an "
		     "event predicate or `tp(…)`)",
		     what);
}

static void check_dep(struct tcheck *c, const struct tnode *n);

static void
check_dep_term(struct tcheck *c, const struct tterm *x)
{
	if (x->kind == TT_AGG) {
		need_event(c, x->agg->body, "the `where` body of this aggregate");
		check_dep(c, x->agg->body);
	}
}

static void
check_dep(struct tcheck *c, const struct tnode *n)
{
	if (c->failed)
		return;
	switch (n->kind) {
	case TN_AND:
		for (size_t i = 0; i < n->n; i++)
			check_dep(c, n->items[i]);
		return;
	case TN_NOT: check_dep(c, n->a); return;
	case TN_FORMERLY:
	case TN_PREVIOUS:
		need_event(c, n->a, n->kind == TN_FORMERLY ? "the body of `formerly`"
							   : "the body of `previous`");
		check_dep(c, n->a);
		return;
	case TN_SINCE:
		need_event(c, n->a, "the left side of `since`");
		need_event(c, n->b, "the right side of `since`");
		check_dep(c, n->a);
		check_dep(c, n->b);
		return;
	case TN_EXISTS:
		need_event(c, n->a, "the body of `exists`");
		check_dep(c, n->a);
		return;
	case TN_CMP:
		check_dep_term(c, n->l);
		check_dep_term(c, n->r);
		return;
	default: return;
	}
}

int
tprog_check(const struct bp_policy *p, size_t rule, struct tprog *t, struct bp_diags *d)
{
	struct tcheck c = { .p = p, .r = &p->rules[rule], .t = t, .d = d };
	rule_label(c.r, rule, c.label, sizeof(c.label));
	check_node_schema(&c, t->root, false);
	if (!c.failed) {
		check_dep(&c, t->root);
		/* each top-level conjunct must monitor something */
		if (t->root->kind == TN_AND)
			for (size_t i = 0; i < t->root->n; i++)
				need_event(&c, t->root->items[i], "this conjunct");
		else
			need_event(&c, t->root, "this condition");
	}
	if (!c.failed)
		check_range_node(&c, t->root);
	if (!c.failed)
		check_order(&c, t->root, 0);
	return c.failed ? -EINVAL : 0;
}

/* ---- analysis ---- */

static int64_t node_horizon(const struct tnode *n);

static int64_t
term_horizon(const struct tterm *x)
{
	int64_t h = 0;
	if (x->kind == TT_AGG)
		return node_horizon(x->agg->body);
	if (x->kind == TT_SET)
		for (size_t i = 0; i < x->n; i++) {
			int64_t k = term_horizon(x->items[i]);
			h = k > h ? k : h;
		}
	return h;
}

static int64_t
max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int64_t
node_horizon(const struct tnode *n)
{
	int64_t h = 0;
	switch (n->kind) {
	case TN_AND:
		for (size_t i = 0; i < n->n; i++)
			h = max64(h, node_horizon(n->items[i]));
		return h;
	case TN_NOT:
	case TN_EXISTS: return node_horizon(n->a);
	case TN_FORMERLY:
	case TN_PREVIOUS: return n->window + node_horizon(n->a);
	case TN_SINCE: return n->window + max64(node_horizon(n->a), node_horizon(n->b));
	case TN_CMP: return max64(term_horizon(n->l), term_horizon(n->r));
	default: return 0;
	}
}

/* Can N hold only at an event one of its predicates matches? */
static bool
node_strict(const struct tnode *n)
{
	switch (n->kind) {
	case TN_PRED: return true;
	case TN_AND:
		for (size_t i = 0; i < n->n; i++)
			if (node_strict(n->items[i]))
				return true;
		return false;
	case TN_EXISTS: return node_strict(n->a);
	default: return false;
	}
}

static bool node_needs_all(const struct tnode *n);

static bool
term_needs_all(const struct tterm *x)
{
	if (x->kind == TT_AGG)
		return node_needs_all(x->agg->body);
	if (x->kind == TT_SET)
		for (size_t i = 0; i < x->n; i++)
			if (term_needs_all(x->items[i]))
				return true;
	return false;
}

static bool
node_needs_all(const struct tnode *n)
{
	switch (n->kind) {
	case TN_AND:
		for (size_t i = 0; i < n->n; i++)
			if (node_needs_all(n->items[i]))
				return true;
		return false;
	case TN_NOT:
	case TN_EXISTS: return node_needs_all(n->a);
	case TN_FORMERLY: return !node_strict(n->a) || node_needs_all(n->a);
	case TN_PREVIOUS:
	case TN_SINCE: return true;
	case TN_CMP: return term_needs_all(n->l) || term_needs_all(n->r);
	default: return false;
	}
}

void
tprog_analyze(struct tprog *t)
{
	t->horizon = node_horizon(t->root);
	t->needs_all = node_needs_all(t->root);
}

/* ---- public ---- */

bool
bp_policy_has_temporal(const struct bp_policy *p)
{
	for (size_t i = 0; p && i < p->n_rules; i++)
		if (p->rules[i].n_temporal)
			return true;
	return false;
}

int
bp_policy_check_temporal(const struct bp_policy *p, struct bp_diags **diags)
{
	if (!p)
		return -EINVAL;
	struct bp_diags *d = diags ? *diags : NULL;
	if (diags && !d) {
		d = calloc(1, sizeof(*d));
		if (!d)
			return -ENOMEM;
		*diags = d;
	}
	struct arena ar = { .cap = 64u << 20 };
	int ret = 0;
	for (size_t i = 0; i < p->n_rules; i++)
		for (size_t k = 0; k < p->rules[i].n_temporal; k++) {
			struct tprog t;
			int r = tprog_parse(p, i, k, &ar, &t, d);
			if (r == 0)
				r = tprog_check(p, i, &t, d);
			if (r == -ENOMEM) {
				arena_free(&ar);
				return r;
			}
			if (r < 0)
				ret = -EINVAL;
			arena_reset(&ar);
		}
	arena_free(&ar);
	return ret;
}
