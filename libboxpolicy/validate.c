/* SPDX-License-Identifier: Apache-2.0 */
/*
 * validate.c — strict validation of a parsed policy set against the action
 * schema (Cedar's strict typechecker, per action environment) and Box's own
 * load checks: duplicate @id, fs:other-only rules, caps written as permits,
 * ~/ and trailing-slash spellings (docs/box-policy.5.md).
 *
 * Trusts: the AST from parser.c (well formed); nothing about its content.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct cap {
	const struct expr *base;
	uint32_t atom;
	const struct cap *next;
};

struct tc {
	struct bp_policy *p;
	struct arena tmp;
	const struct s_action *env;
	struct type ctx_type;
	const struct rule *rule;
	size_t rule_index;
	/* first error */
	bool err;
	unsigned line, col;
	char msg[1200]; /* room for the suggestion tail (suggest.c) */
	bool pending;
	int depth;
};

static const struct type T_NEVER = { .k = TY_NEVER };

void
rule_label(const struct rule *r, size_t index, char *buf, size_t size)
{
	if (r->id)
		snprintf(buf, size, "@id(\"%s\")", r->id);
	else
		snprintf(buf, size, "rule %zu", index + 1);
}

/* The reference's longer label: rule @id("x") (rule N) / the permit rule with no @id (rule N) */
static void
rule_label_long(const struct rule *r, size_t index, char *buf, size_t size)
{
	if (r->id)
		snprintf(buf, size, "rule @id(\"%s\") (rule %zu)", r->id, index + 1);
	else
		snprintf(buf, size, "the %s rule with no @id (rule %zu)", r->forbid ? "forbid" : "permit",
			 index + 1);
}

static void __attribute__((format(printf, 3, 4)))
tc_error(struct tc *t, const struct expr *at, const char *fmt, ...)
{
	if (t->err)
		return;
	t->err = true;
	t->line = at ? at->line : t->rule->line;
	t->col = at ? at->col : t->rule->col;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof(t->msg), fmt, ap);
	va_end(ap);
}

/* "unknown entity type" with the nearest known type and the list (suggest.c). */
static void
tc_unknown_type(struct tc *t, const struct expr *at, const char *etype)
{
	bool fresh = !t->err;
	tc_error(t, at, "unknown entity type `%s`", etype);
	if (fresh)
		suggest_entity_type(t->msg, sizeof(t->msg), &t->p->schema, etype);
}

static const char *
type_name(const struct type *ty, char *buf, size_t size)
{
	switch (ty->k) {
	case TY_NEVER: return "Never";
	case TY_TRUE:
	case TY_FALSE:
	case TY_BOOL: return "Bool";
	case TY_LONG: return "Long";
	case TY_STRING: return "String";
	case TY_SET: {
		char inner[64];
		snprintf(buf, size, "Set<%s>", ty->elem ? type_name(ty->elem, inner, sizeof(inner))
							: "?");
		return buf;
	}
	case TY_EMPTYSET: return "Set";
	case TY_RECORD: return "Record";
	case TY_ENTITY: snprintf(buf, size, "%s", ty->etype); return buf;
	case TY_IP: return "ipaddr";
	case TY_DEC: return "decimal";
	case TY_DATETIME: return "datetime";
	case TY_DURATION: return "duration";
	default: return "?";
	}
}

static bool
is_boolish(const struct type *ty)
{
	return ty->k == TY_TRUE || ty->k == TY_FALSE || ty->k == TY_BOOL || ty->k == TY_NEVER;
}

/* Render a variable/attribute path (context.input.arg1) for messages. */
static bool
render_path(const struct expr *e, char *buf, size_t size)
{
	if (e->kind == EX_VAR) {
		const char *v[] = { "principal", "action", "resource", "context" };
		snprintf(buf, size, "%s", v[e->var]);
		return true;
	}
	if (e->kind == EX_ATTR) {
		char inner[256];
		if (!render_path(e->a, inner, sizeof(inner)))
			return false;
		int n = snprintf(buf, size, "%s.%s", inner, e->name);
		return n >= 0 && (size_t)n < size;
	}
	return false;
}

static bool
path_eq(const struct expr *a, const struct expr *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == EX_VAR)
		return a->var == b->var;
	if (a->kind == EX_ATTR)
		return a->atom == b->atom && path_eq(a->a, b->a);
	return false;
}

static bool
has_cap(const struct cap *c, const struct expr *base, uint32_t atom)
{
	for (; c; c = c->next)
		if (c->atom == atom && path_eq(c->base, base))
			return true;
	return false;
}

static const struct cap *
cap_union(struct tc *t, const struct cap *a, const struct cap *b)
{
	const struct cap *r = b;
	for (; a; a = a->next) {
		if (has_cap(r, a->base, a->atom))
			continue;
		struct cap *n = arena_alloc(&t->tmp, sizeof(*n));
		if (!n)
			return r;
		*n = (struct cap){ .base = a->base, .atom = a->atom, .next = r };
		r = n;
	}
	return r;
}

static const struct cap *
cap_inter(struct tc *t, const struct cap *a, const struct cap *b)
{
	const struct cap *r = NULL;
	for (; a; a = a->next) {
		if (!has_cap(b, a->base, a->atom) || has_cap(r, a->base, a->atom))
			continue;
		struct cap *n = arena_alloc(&t->tmp, sizeof(*n));
		if (!n)
			return r;
		*n = (struct cap){ .base = a->base, .atom = a->atom, .next = r };
		r = n;
	}
	return r;
}

static bool entity_type_known(struct tc *t, const char *etype);

/* The least upper bound of two types (strict); false when there is none. */
static bool
ty_lub(const struct type *a, const struct type *b, bool for_eq, struct type *out,
       struct arena *ar)
{
	if (a->k == TY_NEVER) {
		*out = *b;
		return true;
	}
	if (b->k == TY_NEVER) {
		*out = *a;
		return true;
	}
	if (is_boolish(a) && is_boolish(b)) {
		out->k = a->k == b->k ? a->k : TY_BOOL;
		return true;
	}
	if ((a->k == TY_SET || a->k == TY_EMPTYSET) && (b->k == TY_SET || b->k == TY_EMPTYSET)) {
		if (a->k == TY_EMPTYSET) {
			*out = *b;
			return true;
		}
		if (b->k == TY_EMPTYSET) {
			*out = *a;
			return true;
		}
		struct type *e = arena_alloc(ar, sizeof(*e));
		if (!e || !ty_lub(a->elem, b->elem, false, e, ar))
			return false;
		*out = (struct type){ .k = TY_SET, .elem = e };
		return true;
	}
	if (a->k != b->k)
		return false;
	if (a->k == TY_ENTITY) {
		if (for_eq || strcmp(a->etype, b->etype) == 0) {
			*out = *a;
			return true;
		}
		return false;
	}
	if (a->k == TY_RECORD) {
		if (a->rec->n != b->rec->n)
			return false;
		struct rtype *rt = arena_alloc(ar, sizeof(*rt));
		if (!rt)
			return false;
		rt->n = a->rec->n;
		rt->attrs = arena_alloc(ar, (rt->n ? rt->n : 1) * sizeof(*rt->attrs));
		if (!rt->attrs)
			return false;
		for (size_t i = 0; i < a->rec->n; i++) {
			const struct rattr *x = &a->rec->attrs[i];
			const struct rattr *y = NULL;
			for (size_t j = 0; j < b->rec->n; j++)
				if (b->rec->attrs[j].atom == x->atom)
					y = &b->rec->attrs[j];
			if (!y || x->optional != y->optional)
				return false;
			rt->attrs[i] = *x;
			if (!ty_lub(&x->ty, &y->ty, false, &rt->attrs[i].ty, ar))
				return false;
		}
		*out = (struct type){ .k = TY_RECORD, .rec = rt };
		return true;
	}
	*out = *a;
	return true;
}

struct tres {
	struct type ty;
	const struct cap *caps; /* hold when the expression is true */
	/* a statically known entity (literal, or `action` in this environment) */
	const char *k_etype, *k_id;
};

static bool tc_expr(struct tc *t, const struct expr *e, const struct cap *caps,
		    struct tres *out);

static bool
expect_bool(struct tc *t, const struct expr *e, const struct tres *r, const char *what)
{
	if (is_boolish(&r->ty))
		return true;
	char b[128];
	tc_error(t, e, "%s needs a Bool operand, found %s", what, type_name(&r->ty, b, sizeof(b)));
	return false;
}

static bool
expect_kind(struct tc *t, const struct expr *e, const struct tres *r, int kind, const char *what,
	    const char *want)
{
	if (r->ty.k == kind || r->ty.k == TY_NEVER)
		return true;
	char b[128];
	tc_error(t, e, "%s needs %s, found %s", what, want, type_name(&r->ty, b, sizeof(b)));
	return false;
}

static bool
check_entity_literal(struct tc *t, const struct expr *at, const char *etype, const char *id)
{
	const struct bp_schema *s = &t->p->schema;
	size_t n = strlen(etype);
	if (n > 8 && strcmp(etype + n - 8, "::Action") == 0) {
		if (schema_find_action(s, etype, id, NULL))
			return true;
		char ns[300];
		snprintf(ns, sizeof(ns), "%.*s", (int)(n - 8), etype);
		bool pending = false;
		if (strcmp(ns, "Box") != 0 &&
		    ((schema_ns_known(s, ns, &pending) && pending) ||
		     (!schema_ns_known(s, ns, NULL) && t->p->allow_unknown_ns))) {
			t->pending = true;
			return true;
		}
		bool fresh = !t->err;
		tc_error(t, at, "unknown action `%s::\"%s\"`", etype, id);
		if (fresh)
			suggest_action(t->msg, sizeof(t->msg), s, etype, id);
		return false;
	}
	for (size_t i = 0; i < s->n_enums; i++)
		if (strcmp(s->enums[i].etype, etype) == 0) {
			for (size_t j = 0; j < s->enums[i].n; j++)
				if (strcmp(s->enums[i].ids[j], id) == 0)
					return true;
			bool fresh = !t->err;
			tc_error(t, at,
				 "entity `%s::\"%s\"` is of an enumerated entity type, but `\"%s\"` is "
				 "not declared as a valid eid",
				 etype, id, id);
			if (fresh)
				suggest_enum(t->msg, sizeof(t->msg), &s->enums[i], id);
			return false;
		}
	if (strcmp(etype, "Box::Agent") == 0 || strcmp(etype, "Box::Resource") == 0)
		return true;
	tc_unknown_type(t, at, etype);
	return false;
}

static bool
entity_type_known(struct tc *t, const char *etype)
{
	const struct bp_schema *s = &t->p->schema;
	if (strcmp(etype, "Box::Agent") == 0 || strcmp(etype, "Box::Resource") == 0 ||
	    strcmp(etype, "Box::Action") == 0)
		return true;
	for (size_t i = 0; i < s->n_enums; i++)
		if (strcmp(s->enums[i].etype, etype) == 0)
			return true;
	size_t n = strlen(etype);
	if (n > 8 && strcmp(etype + n - 8, "::Action") == 0) {
		char ns[300];
		snprintf(ns, sizeof(ns), "%.*s", (int)(n - 8), etype);
		return schema_ns_known(s, ns, NULL);
	}
	return false;
}

static const struct rattr *
find_attr(const struct rtype *rt, uint32_t atom)
{
	for (size_t i = 0; i < rt->n; i++)
		if (rt->attrs[i].atom == atom)
			return &rt->attrs[i];
	return NULL;
}

static void
set_known(struct tres *r, const char *etype, const char *id)
{
	r->k_etype = etype;
	r->k_id = id;
}

static bool
tc_eq(struct tc *t, const struct expr *e, const struct cap *caps, struct tres *out)
{
	struct tres l, r;
	if (!tc_expr(t, e->a, caps, &l) || !tc_expr(t, e->b, caps, &r))
		return false;
	struct type lub;
	bool both_lit = e->a->kind == EX_LIT && e->b->kind == EX_LIT;
	if (both_lit) {
		/* two literals: statically true or false, whatever their types (as Cedar) */
		bool eq = val_eq(&e->a->v, &e->b->v);
		out->ty.k = (uint8_t)((eq == (e->kind == EX_EQ)) ? TY_TRUE : TY_FALSE);
		return true;
	}
	if (!ty_lub(&l.ty, &r.ty, true, &lub, &t->tmp)) {
		char b1[128], b2[128];
		tc_error(t, e, "the types %s and %s are not compatible",
			 type_name(&l.ty, b1, sizeof(b1)), type_name(&r.ty, b2, sizeof(b2)));
		return false;
	}
	int k = TY_BOOL;
	if (l.k_etype && r.k_etype)
		k = (l.k_etype == r.k_etype || strcmp(l.k_etype, r.k_etype) == 0) &&
				    strcmp(l.k_id, r.k_id) == 0
			    ? TY_TRUE
			    : TY_FALSE;
	else if (l.ty.k == TY_ENTITY && r.ty.k == TY_ENTITY && strcmp(l.ty.etype, r.ty.etype) != 0)
		k = TY_FALSE;
	else if (e->a->kind == EX_LIT && e->b->kind == EX_LIT && e->a->v.t != V_ENT &&
		 e->a->v.t != V_SET && e->a->v.t != V_REC)
		k = val_eq(&e->a->v, &e->b->v) ? TY_TRUE : TY_FALSE;
	if (e->kind == EX_NE && k != TY_BOOL)
		k = k == TY_TRUE ? TY_FALSE : TY_TRUE;
	out->ty.k = (uint8_t)k;
	return true;
}

static bool
tc_in(struct tc *t, const struct expr *e, const struct cap *caps, struct tres *out)
{
	struct tres l, r;
	if (!tc_expr(t, e->a, caps, &l) || !tc_expr(t, e->b, caps, &r))
		return false;
	if (!expect_kind(t, e->a, &l, TY_ENTITY, "`in`", "an entity on its left"))
		return false;
	const char *rtype = NULL;
	if (r.ty.k == TY_ENTITY) {
		rtype = r.ty.etype;
	} else if (r.ty.k == TY_SET && r.ty.elem->k == TY_ENTITY) {
		rtype = r.ty.elem->etype;
	} else if (r.ty.k != TY_NEVER && r.ty.k != TY_EMPTYSET) {
		char b[128];
		tc_error(t, e->b, "`in` needs an entity or a set of entities on its right, found %s",
			 type_name(&r.ty, b, sizeof(b)));
		return false;
	}
	out->ty.k = TY_BOOL;
	if (l.ty.k == TY_ENTITY && rtype && strcmp(l.ty.etype, rtype) != 0)
		out->ty.k = TY_FALSE;
	else if (l.k_etype && r.k_etype)
		out->ty.k = strcmp(l.k_etype, r.k_etype) == 0 && strcmp(l.k_id, r.k_id) == 0
				    ? TY_TRUE
				    : TY_FALSE;
	else if (l.k_etype && e->b->kind == EX_SET) {
		/* a known entity in a literal set of entities: statically decided */
		bool all_lit = true, found = false;
		for (size_t i = 0; i < e->b->n; i++) {
			const struct expr *it = e->b->items[i];
			if (it->kind != EX_LIT || it->v.t != V_ENT) {
				all_lit = false;
				break;
			}
			if (strcmp(it->v.u.e.etype, l.k_etype) == 0 && strcmp(it->v.u.e.id, l.k_id) == 0)
				found = true;
		}
		if (all_lit)
			out->ty.k = found ? TY_TRUE : TY_FALSE;
	}
	return true;
}

static bool
tc_method(struct tc *t, const struct expr *e, const struct cap *caps, struct tres *out)
{
	struct tres recv, arg;
	if (!tc_expr(t, e->a, caps, &recv))
		return false;
	if (e->n && !tc_expr(t, e->items[0], caps, &arg))
		return false;
	char b1[128], b2[128];
	switch (e->fn) {
	case M_CONTAINS:
		if (recv.ty.k == TY_EMPTYSET || recv.ty.k == TY_NEVER) {
			out->ty.k = TY_BOOL;
			return true;
		}
		if (!expect_kind(t, e->a, &recv, TY_SET, "`contains`", "a set"))
			return false;
		{
			struct type lub;
			if (!ty_lub(recv.ty.elem, &arg.ty, true, &lub, &t->tmp)) {
				tc_error(t, e, "the types %s and %s are not compatible",
					 type_name(recv.ty.elem, b1, sizeof(b1)),
					 type_name(&arg.ty, b2, sizeof(b2)));
				return false;
			}
		}
		out->ty.k = TY_BOOL;
		return true;
	case M_CONTAINS_ALL:
	case M_CONTAINS_ANY: {
		const char *m = e->fn == M_CONTAINS_ALL ? "`containsAll`" : "`containsAny`";
		if (recv.ty.k != TY_EMPTYSET &&
		    !expect_kind(t, e->a, &recv, TY_SET, m, "a set"))
			return false;
		if (arg.ty.k != TY_EMPTYSET &&
		    !expect_kind(t, e->items[0], &arg, TY_SET, m, "a set argument"))
			return false;
		struct type lub;
		if (!ty_lub(&recv.ty, &arg.ty, true, &lub, &t->tmp)) {
			tc_error(t, e, "the types %s and %s are not compatible",
				 type_name(&recv.ty, b1, sizeof(b1)), type_name(&arg.ty, b2, sizeof(b2)));
			return false;
		}
		out->ty.k = TY_BOOL;
		return true;
	}
	case M_IS_EMPTY:
		if (recv.ty.k != TY_EMPTYSET && !expect_kind(t, e->a, &recv, TY_SET, "`isEmpty`",
							     "a set"))
			return false;
		out->ty.k = TY_BOOL;
		return true;
	case M_IS_IPV4:
	case M_IS_IPV6:
	case M_IS_LOOPBACK:
	case M_IS_MULTICAST:
		if (!expect_kind(t, e->a, &recv, TY_IP, "this method", "an ipaddr"))
			return false;
		out->ty.k = TY_BOOL;
		return true;
	case M_IS_IN_RANGE:
		if (!expect_kind(t, e->a, &recv, TY_IP, "`isInRange`", "an ipaddr") ||
		    !expect_kind(t, e->items[0], &arg, TY_IP, "`isInRange`", "an ipaddr argument"))
			return false;
		out->ty.k = TY_BOOL;
		return true;
	case M_LESS_THAN:
	case M_LESS_THAN_OR_EQUAL:
	case M_GREATER_THAN:
	case M_GREATER_THAN_OR_EQUAL:
		if (!expect_kind(t, e->a, &recv, TY_DEC, "a decimal comparison", "a decimal") ||
		    !expect_kind(t, e->items[0], &arg, TY_DEC, "a decimal comparison",
				 "a decimal argument"))
			return false;
		out->ty.k = TY_BOOL;
		return true;
	case M_OFFSET:
		if (!expect_kind(t, e->a, &recv, TY_DATETIME, "`offset`", "a datetime") ||
		    !expect_kind(t, e->items[0], &arg, TY_DURATION, "`offset`", "a duration"))
			return false;
		out->ty.k = TY_DATETIME;
		return true;
	case M_DURATION_SINCE:
		if (!expect_kind(t, e->a, &recv, TY_DATETIME, "`durationSince`", "a datetime") ||
		    !expect_kind(t, e->items[0], &arg, TY_DATETIME, "`durationSince`", "a datetime"))
			return false;
		out->ty.k = TY_DURATION;
		return true;
	case M_TO_DATE:
	case M_TO_TIME:
		if (!expect_kind(t, e->a, &recv, TY_DATETIME, "this method", "a datetime"))
			return false;
		out->ty.k = e->fn == M_TO_DATE ? TY_DATETIME : TY_DURATION;
		return true;
	case M_TO_MILLISECONDS:
	case M_TO_SECONDS:
	case M_TO_MINUTES:
	case M_TO_HOURS:
	case M_TO_DAYS:
		if (!expect_kind(t, e->a, &recv, TY_DURATION, "this method", "a duration"))
			return false;
		out->ty.k = TY_LONG;
		return true;
	case M_GET_TAG:
	case M_HAS_TAG:
	default:
		tc_error(t, e, "entities of this schema have no tags");
		return false;
	}
}

static bool
tc_expr_inner(struct tc *t, const struct expr *e, const struct cap *caps, struct tres *out)
{
	char b1[128], b2[256];
	struct tres l, r;
	memset(out, 0, sizeof(*out));
	switch (e->kind) {
	case EX_LIT:
		switch (e->v.t) {
		case V_BOOL: out->ty.k = e->v.u.b ? TY_TRUE : TY_FALSE; return true;
		case V_LONG: out->ty.k = TY_LONG; return true;
		case V_STR: out->ty.k = TY_STRING; return true;
		case V_ENT:
			if (!check_entity_literal(t, e, e->v.u.e.etype, e->v.u.e.id))
				return false;
			out->ty.k = TY_ENTITY;
			out->ty.etype = e->v.u.e.etype;
			set_known(out, e->v.u.e.etype, e->v.u.e.id);
			return true;
		default:
			out->ty.k = TY_NEVER;
			return true;
		}
	case EX_VAR:
		switch (e->var) {
		case VAR_PRINCIPAL:
			out->ty = (struct type){ .k = TY_ENTITY, .etype = t->p->t_agent };
			return true;
		case VAR_RESOURCE:
			out->ty = (struct type){ .k = TY_ENTITY, .etype = t->p->t_resource };
			return true;
		case VAR_ACTION:
			out->ty = (struct type){ .k = TY_ENTITY, .etype = t->env->etype };
			set_known(out, t->env->etype, t->env->id);
			return true;
		default:
			out->ty = t->ctx_type;
			return true;
		}
	case EX_SLOT:
		tc_error(t, e, "template slots are not supported");
		return false;
	case EX_ATTR: {
		if (!tc_expr(t, e->a, caps, &l))
			return false;
		if (l.ty.k == TY_NEVER) {
			out->ty.k = TY_NEVER;
			return true;
		}
		if (l.ty.k == TY_ENTITY) {
			tc_error(t, e, "attribute `%s` not found: entities of type %s have no attributes",
				 e->name, l.ty.etype);
			return false;
		}
		if (l.ty.k != TY_RECORD) {
			tc_error(t, e, "`.%s` needs a record or an entity, found %s", e->name,
				 type_name(&l.ty, b1, sizeof(b1)));
			return false;
		}
		const struct rattr *a = find_attr(l.ty.rec, e->atom);
		bool named = render_path(e, b2, sizeof(b2));
		if (!a) {
			bool fresh = !t->err;
			if (named)
				tc_error(t, e, "unknown field `%s` for %s::\"%s\"", b2, t->env->etype,
					 t->env->id);
			else
				tc_error(t, e, "attribute `%s` not found in the record", e->name);
			if (fresh) {
				char what[200];
				if (named)
					snprintf(what, sizeof(what), "fields of %s::\"%s\"",
						 t->env->etype, t->env->id);
				else
					snprintf(what, sizeof(what), "fields of this record");
				suggest_names(t->msg, sizeof(t->msg), e->name, l.ty.rec->attrs,
					      l.ty.rec->n, name_at_attrs, what);
			}
			return false;
		}
		if (a->optional && !has_cap(caps, e->a, e->atom)) {
			if (named)
				tc_error(t, e,
					 "unable to guarantee safety of access to optional attribute "
					 "`%s` for %s::\"%s\"; guard it with `%.*s has %s &&`",
					 b2, t->env->etype, t->env->id,
					 (int)(strlen(b2) - strlen(e->name) - 1), b2, e->name);
			else
				tc_error(t, e,
					 "unable to guarantee safety of access to optional attribute "
					 "`%s`",
					 e->name);
			return false;
		}
		out->ty = a->ty;
		return true;
	}
	case EX_HAS: {
		if (!tc_expr(t, e->a, caps, &l))
			return false;
		if (l.ty.k == TY_NEVER) {
			out->ty.k = TY_BOOL;
			return true;
		}
		if (l.ty.k == TY_ENTITY) {
			out->ty.k = TY_FALSE;
			return true;
		}
		if (l.ty.k != TY_RECORD) {
			tc_error(t, e, "`has` needs a record or an entity, found %s",
				 type_name(&l.ty, b1, sizeof(b1)));
			return false;
		}
		const struct rattr *a = find_attr(l.ty.rec, e->atom);
		if (!a) {
			out->ty.k = TY_FALSE;
		} else if (!a->optional || has_cap(caps, e->a, e->atom)) {
			out->ty.k = TY_TRUE;
		} else {
			out->ty.k = TY_BOOL;
			struct cap *c = arena_alloc(&t->tmp, sizeof(*c));
			if (c) {
				*c = (struct cap){ .base = e->a, .atom = e->atom };
				out->caps = c;
			}
		}
		return true;
	}
	case EX_LIKE:
		if (!tc_expr(t, e->a, caps, &l) ||
		    !expect_kind(t, e->a, &l, TY_STRING, "`like`", "a String"))
			return false;
		out->ty.k = TY_BOOL;
		return true;
	case EX_IS:
		if (!tc_expr(t, e->a, caps, &l))
			return false;
		if (!entity_type_known(t, e->name)) {
			tc_unknown_type(t, e, e->name);
			return false;
		}
		if (!expect_kind(t, e->a, &l, TY_ENTITY, "`is`", "an entity"))
			return false;
		out->ty.k = l.ty.k == TY_ENTITY && strcmp(l.ty.etype, e->name) != 0 ? TY_FALSE
										  : TY_TRUE;
		if (e->b) {
			struct expr fake = *e;
			fake.kind = EX_IN;
			struct tres in;
			if (!tc_in(t, &fake, caps, &in))
				return false;
			if (out->ty.k == TY_TRUE)
				out->ty.k = in.ty.k;
		}
		return true;
	case EX_NOT:
		if (!tc_expr(t, e->a, caps, &l) || !expect_bool(t, e->a, &l, "`!`"))
			return false;
		out->ty.k = l.ty.k == TY_TRUE ? TY_FALSE : l.ty.k == TY_FALSE ? TY_TRUE : TY_BOOL;
		return true;
	case EX_NEG:
		if (!tc_expr(t, e->a, caps, &l) ||
		    !expect_kind(t, e->a, &l, TY_LONG, "unary `-`", "a Long"))
			return false;
		out->ty.k = TY_LONG;
		return true;
	case EX_AND:
		if (!tc_expr(t, e->a, caps, &l) || !expect_bool(t, e->a, &l, "`&&`"))
			return false;
		if (l.ty.k == TY_FALSE) {
			out->ty.k = TY_FALSE;
			return true;
		}
		if (!tc_expr(t, e->b, cap_union(t, l.caps, caps), &r) ||
		    !expect_bool(t, e->b, &r, "`&&`"))
			return false;
		if (r.ty.k == TY_FALSE)
			out->ty.k = TY_FALSE;
		else if (l.ty.k == TY_TRUE && r.ty.k == TY_TRUE)
			out->ty.k = TY_TRUE;
		else
			out->ty.k = TY_BOOL;
		out->caps = cap_union(t, l.caps, r.caps);
		return true;
	case EX_OR:
		if (!tc_expr(t, e->a, caps, &l) || !expect_bool(t, e->a, &l, "`||`"))
			return false;
		if (l.ty.k == TY_TRUE) {
			out->ty.k = TY_TRUE;
			out->caps = l.caps;
			return true;
		}
		if (!tc_expr(t, e->b, caps, &r) || !expect_bool(t, e->b, &r, "`||`"))
			return false;
		if (l.ty.k == TY_FALSE) {
			*out = r;
			return true;
		}
		if (r.ty.k == TY_TRUE)
			out->ty.k = TY_TRUE;
		else
			out->ty.k = TY_BOOL;
		out->caps = r.ty.k == TY_FALSE ? l.caps : cap_inter(t, l.caps, r.caps);
		return true;
	case EX_IF: {
		struct tres c;
		if (!tc_expr(t, e->a, caps, &c) || !expect_bool(t, e->a, &c, "`if`"))
			return false;
		if (c.ty.k == TY_TRUE)
			return tc_expr(t, e->b, cap_union(t, c.caps, caps), out);
		if (c.ty.k == TY_FALSE)
			return tc_expr(t, e->c, caps, out);
		if (!tc_expr(t, e->b, cap_union(t, c.caps, caps), &l) ||
		    !tc_expr(t, e->c, caps, &r))
			return false;
		if (!ty_lub(&l.ty, &r.ty, false, &out->ty, &t->tmp)) {
			tc_error(t, e, "the types %s and %s are not compatible",
				 type_name(&l.ty, b1, sizeof(b1)), type_name(&r.ty, b2, sizeof(b2)));
			return false;
		}
		out->caps = cap_inter(t, cap_union(t, c.caps, l.caps), r.caps);
		return true;
	}
	case EX_EQ:
	case EX_NE:
		return tc_eq(t, e, caps, out);
	case EX_LT:
	case EX_LE:
	case EX_GT:
	case EX_GE: {
		if (!tc_expr(t, e->a, caps, &l) || !tc_expr(t, e->b, caps, &r))
			return false;
		bool ok = (l.ty.k == TY_LONG || l.ty.k == TY_NEVER) &&
			  (r.ty.k == TY_LONG || r.ty.k == TY_NEVER);
		ok = ok || (l.ty.k == TY_DATETIME && r.ty.k == TY_DATETIME) ||
		     (l.ty.k == TY_DURATION && r.ty.k == TY_DURATION);
		if (!ok) {
			const char *op = e->kind == EX_LT ? "<" : e->kind == EX_LE ? "<=" :
					 e->kind == EX_GT ? ">" : ">=";
			const struct tres *bad = l.ty.k != TY_LONG ? &l : &r;
			tc_error(t, bad == &l ? e->a : e->b, "`%s` needs Long operands, found %s", op,
				 type_name(&bad->ty, b1, sizeof(b1)));
			return false;
		}
		out->ty.k = TY_BOOL;
		return true;
	}
	case EX_IN:
		return tc_in(t, e, caps, out);
	case EX_ADD:
	case EX_SUB:
	case EX_MUL: {
		const char *op = e->kind == EX_ADD ? "`+`" : e->kind == EX_SUB ? "`-`" : "`*`";
		if (!tc_expr(t, e->a, caps, &l) || !expect_kind(t, e->a, &l, TY_LONG, op, "Long operands") ||
		    !tc_expr(t, e->b, caps, &r) || !expect_kind(t, e->b, &r, TY_LONG, op, "Long operands"))
			return false;
		out->ty.k = TY_LONG;
		return true;
	}
	case EX_SET: {
		if (e->n == 0) {
			tc_error(t, e, "empty set literals are not allowed in strict validation");
			return false;
		}
		struct type acc = T_NEVER;
		for (size_t i = 0; i < e->n; i++) {
			struct tres it;
			if (!tc_expr(t, e->items[i], caps, &it))
				return false;
			struct type nacc;
			if (!ty_lub(&acc, &it.ty, false, &nacc, &t->tmp)) {
				tc_error(t, e->items[i], "the types %s and %s are not compatible",
					 type_name(&acc, b1, sizeof(b1)), type_name(&it.ty, b2, sizeof(b2)));
				return false;
			}
			acc = nacc;
		}
		if (is_boolish(&acc))
			acc.k = TY_BOOL;
		struct type *elem = arena_alloc(&t->tmp, sizeof(*elem));
		if (!elem)
			return false;
		*elem = acc;
		out->ty = (struct type){ .k = TY_SET, .elem = elem };
		return true;
	}
	case EX_RECORD: {
		struct rtype *rt = arena_alloc(&t->tmp, sizeof(*rt));
		if (!rt)
			return false;
		rt->n = e->n;
		rt->attrs = arena_alloc(&t->tmp, (e->n ? e->n : 1) * sizeof(*rt->attrs));
		if (!rt->attrs)
			return false;
		for (size_t i = 0; i < e->n; i++) {
			struct tres it;
			if (!tc_expr(t, e->items[i], caps, &it))
				return false;
			rt->attrs[i].name = e->keys[i];
			rt->attrs[i].atom = e->key_atoms[i];
			rt->attrs[i].ty = it.ty;
			if (is_boolish(&it.ty))
				rt->attrs[i].ty.k = TY_BOOL;
		}
		out->ty = (struct type){ .k = TY_RECORD, .rec = rt };
		return true;
	}
	case EX_CALL: {
		const struct expr *arg = e->items[0];
		const char *names[] = { "ip", "decimal", "datetime", "duration" };
		const char *fname = names[e->fn];
		if (arg->kind != EX_LIT || arg->v.t != V_STR) {
			if (!tc_expr(t, arg, caps, &l))
				return false;
			if (l.ty.k != TY_STRING) {
				tc_error(t, arg, "`%s` needs a String argument, found %s", fname,
					 type_name(&l.ty, b1, sizeof(b1)));
				return false;
			}
			tc_error(t, e,
				 "`%s(…)` must be applied to a string literal in strict validation",
				 fname);
			return false;
		}
		struct val v;
		int64_t x;
		bool ok = e->fn == FN_IP	   ? parse_ip(arg->v.u.s, arg->v.len, &v)
			  : e->fn == FN_DECIMAL  ? parse_decimal(arg->v.u.s, arg->v.len, &x)
			  : e->fn == FN_DATETIME ? parse_datetime(arg->v.u.s, arg->v.len, &x)
						 : parse_duration(arg->v.u.s, arg->v.len, &x);
		if (!ok) {
			tc_error(t, arg, "`%s(\"%.*s\")` is not a valid %s", fname,
				 (int)(arg->v.len > 80 ? 80 : arg->v.len), arg->v.u.s,
				 e->fn == FN_IP ? "ip address" : fname);
			return false;
		}
		out->ty.k = e->fn == FN_IP ? TY_IP : e->fn == FN_DECIMAL ? TY_DEC :
			    e->fn == FN_DATETIME ? TY_DATETIME : TY_DURATION;
		return true;
	}
	case EX_METHOD:
		return tc_method(t, e, caps, out);
	case EX_TEMPORAL:
		out->ty.k = TY_BOOL;
		return true;
	default:
		tc_error(t, e, "unsupported expression");
		return false;
	}
}

static bool
tc_expr(struct tc *t, const struct expr *e, const struct cap *caps, struct tres *out)
{
	if (t->err)
		return false;
	if (++t->depth > BP_MAX_DEPTH * 2) {
		tc_error(t, e, "expression nested too deeply");
		return false;
	}
	bool ok = tc_expr_inner(t, e, caps, out);
	t->depth--;
	return ok && !t->err;
}

/* Every entity literal and `is` type of an expression, branches typing skips included. */
static bool
check_literals(struct tc *t, const struct expr *e, int depth)
{
	if (!e || depth > BP_MAX_DEPTH * 2)
		return true;
	if (e->kind == EX_LIT && e->v.t == V_ENT &&
	    !check_entity_literal(t, e, e->v.u.e.etype, e->v.u.e.id))
		return false;
	if (e->kind == EX_IS && !entity_type_known(t, e->name)) {
		tc_unknown_type(t, e, e->name);
		return false;
	}
	if (!check_literals(t, e->a, depth + 1) || !check_literals(t, e->b, depth + 1) ||
	    !check_literals(t, e->c, depth + 1))
		return false;
	for (size_t i = 0; i < e->n && e->items; i++)
		if (!check_literals(t, e->items[i], depth + 1))
			return false;
	return true;
}

/* ---- scope ---- */

static bool
scope_entity_ok(struct tc *t, const struct entity_ref *e, const char *want_type)
{
	struct expr at = { .line = e->line, .col = e->col };
	if (!check_entity_literal(t, &at, e->etype, e->id))
		return false;
	(void)want_type;
	return true;
}

/* Whether the principal (or resource) scope can hold for TYPE::"ID"; validates it. */
static bool
scope_check_pr(struct tc *t, const struct scope *sc, const char *type, const char *id,
	       bool *applies, bool *matches)
{
	*applies = true;
	*matches = true;
	if (sc->slot) {
		struct expr at = { .line = sc->line, .col = sc->col };
		tc_error(t, &at, "template slots are not supported; the policy is not static");
		return false;
	}
	switch (sc->kind) {
	case SC_ANY:
		return true;
	case SC_EQ:
	case SC_IN:
		if (!scope_entity_ok(t, &sc->e, type))
			return false;
		*applies = strcmp(sc->e.etype, type) == 0;
		*matches = *applies && strcmp(sc->e.id, id) == 0;
		return true;
	case SC_IS:
	case SC_IS_IN:
		if (!entity_type_known(t, sc->is_type)) {
			struct expr at = { .line = sc->line, .col = sc->col };
			tc_unknown_type(t, &at, sc->is_type);
			return false;
		}
		*applies = strcmp(sc->is_type, type) == 0;
		*matches = *applies;
		if (sc->kind == SC_IS_IN) {
			if (!scope_entity_ok(t, &sc->e, type))
				return false;
			*applies = *applies && strcmp(sc->e.etype, type) == 0;
			*matches = *applies && strcmp(sc->e.id, id) == 0;
		}
		return true;
	default:
		return true;
	}
}

static void
build_ctx_type(struct tc *t, const struct s_action *a)
{
	struct rtype *ctx = arena_alloc(&t->tmp, sizeof(*ctx));
	struct rattr *attrs = arena_alloc(&t->tmp, 2 * sizeof(*attrs));
	struct rtype *in = arena_alloc(&t->tmp, sizeof(*in));
	if (!ctx || !attrs || !in) {
		t->ctx_type.k = TY_NEVER;
		return;
	}
	*in = a->input;
	attrs[0] = (struct rattr){ .name = "input", .atom = t->p->atom_input,
				   .ty = { .k = TY_RECORD, .rec = in } };
	ctx->attrs = attrs;
	ctx->n = 1;
	if (a->has_output) {
		struct rtype *out = arena_alloc(&t->tmp, sizeof(*out));
		if (out) {
			*out = a->output;
			attrs[1] = (struct rattr){ .name = "output",
						   .atom = atom_find(&t->p->atoms, "output", 6),
						   .optional = true,
						   .ty = { .k = TY_RECORD, .rec = out } };
			ctx->n = 2;
		}
	}
	t->ctx_type = (struct type){ .k = TY_RECORD, .rec = ctx };
}

/* Mark which schema actions a rule's action scope names; false on a validation error. */
static bool
action_scope(struct tc *t, const struct rule *r, bool *mask)
{
	const struct bp_schema *s = &t->p->schema;
	if (r->action.kind == SC_ANY) {
		for (size_t i = 0; i < s->n_actions; i++)
			mask[i] = true;
		return true;
	}
	const struct entity_ref *refs = r->action.kind == SC_IN_SET ? r->action.set : &r->action.e;
	size_t n = r->action.kind == SC_IN_SET ? r->action.n : 1;
	for (size_t i = 0; i < n; i++) {
		struct expr at = { .line = refs[i].line, .col = refs[i].col };
		size_t idx;
		if (schema_find_action(s, refs[i].etype, refs[i].id, &idx)) {
			mask[idx] = true;
			continue;
		}
		if (!check_entity_literal(t, &at, refs[i].etype, refs[i].id))
			return false;
		if (!t->pending) {
			tc_error(t, &at, "`%s::\"%s\"` is not an action", refs[i].etype, refs[i].id);
			return false;
		}
	}
	return true;
}

static void
report(struct tc *t, struct bp_diags *d, const struct rule *r, size_t index)
{
	char label[300];
	rule_label(r, index, label, sizeof(label));
	diag_add(d, BP_ERROR, t->line, t->col, "%s: %s", label, t->msg);
}

/* Typecheck one rule in every environment its scope admits. */
static void
validate_rule(struct tc *t, struct rule *r, size_t index, struct bp_diags *d)
{
	const struct bp_schema *s = &t->p->schema;
	bool *mask = calloc(s->n_actions ? s->n_actions : 1, sizeof(*mask));
	if (!mask)
		return;
	t->rule = r;
	t->rule_index = index;
	t->err = false;
	t->pending = false;
	if (!action_scope(t, r, mask)) {
		report(t, d, r, index);
		free(mask);
		return;
	}
	bool p_applies, p_match, r_applies, r_match;
	if (!scope_check_pr(t, &r->principal, "Box::Agent", "self", &p_applies, &p_match) ||
	    !scope_check_pr(t, &r->resource, "Box::Resource", "unused", &r_applies, &r_match)) {
		report(t, d, r, index);
		free(mask);
		return;
	}
	r->never = !p_match || !r_match;
	if (!check_literals(t, r->cond, 0)) {
		report(t, d, r, index);
		free(mask);
		return;
	}
	size_t envs = 0;
	for (size_t i = 0; i < s->n_actions; i++)
		if (mask[i])
			envs++;
	if (t->pending) {
		/* the rule waits for its MCP server's tool schema */
		r->pending = true;
		free(mask);
		return;
	}
	if (!p_applies || !r_applies) {
		/* a principal or resource the requests never carry: valid, never matches */
		r->never = true;
		free(mask);
		return;
	}
	if (envs == 0) {
		struct expr at = { .line = r->line, .col = r->col };
		tc_error(t, &at, "unable to find an applicable action given the policy scope "
				 "constraints");
		report(t, d, r, index);
		free(mask);
		return;
	}
	for (size_t i = 0; i < s->n_actions && !t->err; i++) {
		if (!mask[i])
			continue;
		t->env = &s->actions[i];
		build_ctx_type(t, t->env);
		if (r->cond) {
			struct tres res;
			if (tc_expr(t, r->cond, NULL, &res) && !is_boolish(&res.ty)) {
				char b[128];
				tc_error(t, r->cond, "a condition must be Bool, found %s",
					 type_name(&res.ty, b, sizeof(b)));
			}
		}
		arena_reset(&t->tmp);
		if (t->pending) {
			r->pending = true;
			t->err = false;
			break;
		}
	}
	if (t->err)
		report(t, d, r, index);
	free(mask);
}

/* ---- Box checks ---- */

static void
check_duplicate_ids(struct bp_policy *p, struct bp_diags *d)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct rule *r = &p->rules[i];
		if (!r->id)
			continue;
		bool earlier = false;
		for (size_t j = 0; j < i && !earlier; j++)
			earlier = p->rules[j].id && strcmp(p->rules[j].id, r->id) == 0;
		if (earlier)
			continue;
		struct buf b = { 0 };
		size_t count = 0;
		const struct rule *second = NULL;
		for (size_t j = i; j < p->n_rules; j++)
			if (p->rules[j].id && strcmp(p->rules[j].id, r->id) == 0) {
				buf_printf(&b, "%s%zu", count ? ", " : "", j + 1);
				if (count == 1)
					second = &p->rules[j];
				count++;
			}
		if (count > 1 && b.p)
			diag_add(d, BP_ERROR, second->line, second->col,
				 "@id(\"%s\") is on rules %s; a denial and a telemetry record name a "
				 "rule by its @id, so give each rule its own @id",
				 r->id, b.p);
		buf_free(&b);
	}
}

static bool
is_fs_other(const struct entity_ref *e)
{
	return strcmp(e->etype, "Box::Action") == 0 && strcmp(e->id, "fs:other") == 0;
}

static void
check_fs_other(struct bp_policy *p, struct bp_diags *d)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct rule *r = &p->rules[i];
		bool only = false;
		if (r->action.kind == SC_EQ || r->action.kind == SC_IN)
			only = is_fs_other(&r->action.e);
		else if (r->action.kind == SC_IN_SET && r->action.n > 0) {
			only = true;
			for (size_t k = 0; k < r->action.n; k++)
				only = only && is_fs_other(&r->action.set[k]);
		}
		if (!only)
			continue;
		char label[300];
		rule_label_long(r, i, label, sizeof(label));
		diag_add(d, BP_ERROR, r->action.line, r->action.col,
			 "%s names only the reserved action \"fs:other\"; no operation raises it, so "
			 "the rule cannot match; name fs:read, fs:write, fs:delete, or fs:move, alone "
			 "or beside fs:other",
			 label);
	}
}

static bool
scope_eq(const struct scope *a, const struct scope *b)
{
	if (a->kind != b->kind || a->slot != b->slot)
		return false;
	switch (a->kind) {
	case SC_ANY: return true;
	case SC_EQ:
	case SC_IN:
		return strcmp(a->e.etype, b->e.etype) == 0 && strcmp(a->e.id, b->e.id) == 0;
	case SC_IS: return strcmp(a->is_type, b->is_type) == 0;
	case SC_IS_IN:
		return strcmp(a->is_type, b->is_type) == 0 && strcmp(a->e.etype, b->e.etype) == 0 &&
		       strcmp(a->e.id, b->e.id) == 0;
	case SC_IN_SET:
		if (a->n != b->n)
			return false;
		for (size_t i = 0; i < a->n; i++)
			if (strcmp(a->set[i].etype, b->set[i].etype) != 0 ||
			    strcmp(a->set[i].id, b->set[i].id) != 0)
				return false;
		return true;
	default: return false;
	}
}

static bool
action_set_covers(const struct scope *other, const struct scope *budget)
{
	if (other->kind == SC_ANY)
		return true;
	if (budget->kind == SC_ANY)
		return false;
	const struct entity_ref *br = budget->kind == SC_IN_SET ? budget->set : &budget->e;
	size_t bn = budget->kind == SC_IN_SET ? budget->n : 1;
	const struct entity_ref *orf = other->kind == SC_IN_SET ? other->set : &other->e;
	size_t on = other->kind == SC_IN_SET ? other->n : 1;
	for (size_t i = 0; i < bn; i++) {
		bool found = false;
		for (size_t j = 0; j < on && !found; j++)
			found = strcmp(br[i].etype, orf[j].etype) == 0 && strcmp(br[i].id, orf[j].id) == 0;
		if (!found)
			return false;
	}
	return true;
}

static void
check_caps(struct bp_policy *p, struct bp_diags *d)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct rule *b = &p->rules[i];
		if (b->forbid || b->n_temporal == 0)
			continue;
		for (size_t j = 0; j < p->n_rules; j++) {
			const struct rule *o = &p->rules[j];
			if (j == i || o->forbid || o->n_temporal > 0)
				continue;
			if (o->principal.kind != SC_ANY && !scope_eq(&o->principal, &b->principal))
				continue;
			if (!action_set_covers(&o->action, &b->action))
				continue;
			int cover; /* 1 covers, 0 undecided */
			if (o->resource.kind == SC_ANY || scope_eq(&o->resource, &b->resource))
				cover = 1;
			else if (o->resource.kind == SC_EQ && b->resource.kind == SC_EQ)
				continue; /* different == : disjoint */
			else
				cover = 0;
			bool unconditioned = !o->has_clause || o->vacuous;
			char lb[300], lo[300];
			rule_label_long(b, i, lb, sizeof(lb));
			rule_label_long(o, j, lo, sizeof(lo));
			if (unconditioned && cover)
				diag_add(d, BP_ERROR, b->line, b->col,
					 "%s carries a temporal clause beside %s, which permits the same "
					 "action with no condition; a permit cannot narrow another permit, "
					 "so write the cap as a forbid",
					 lb, lo);
			else
				diag_add(d, BP_WARNING, b->line, b->col,
					 "%s carries a temporal clause beside %s, which also permits that "
					 "action; the budget is inert for every request the other rule "
					 "admits, so write a cap as a forbid",
					 lb, lo);
		}
	}
}

/* ---- spelling ---- */

enum family {
	FAM_FS,
	FAM_SHELL,
	FAM_UNSCOPED,
	FAM_SKIP,
};

static enum family
rule_family(const struct rule *r)
{
	if (r->action.kind == SC_ANY)
		return FAM_UNSCOPED;
	const struct entity_ref *refs = r->action.kind == SC_IN_SET ? r->action.set : &r->action.e;
	size_t n = r->action.kind == SC_IN_SET ? r->action.n : 1;
	bool all_fs = n > 0, all_shell = n > 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(refs[i].etype, "Box::Action") != 0)
			return FAM_SKIP;
		all_fs = all_fs && strncmp(refs[i].id, "fs:", 3) == 0;
		all_shell = all_shell && strncmp(refs[i].id, "shell:", 6) == 0;
	}
	return all_fs ? FAM_FS : all_shell ? FAM_SHELL : FAM_UNSCOPED;
}

struct spell {
	struct bp_policy *p;
	struct bp_diags *d;
	const struct rule *r;
	size_t index;
	enum family fam;
	const char *home;
	size_t home_len;
};

/* `context.input.X` → X, else NULL */
static const char *
input_field(const struct bp_policy *p, const struct expr *e)
{
	if (e->kind == EX_ATTR && e->a->kind == EX_ATTR && e->a->atom == p->atom_input &&
	    e->a->a->kind == EX_VAR && e->a->a->var == VAR_CONTEXT)
		return e->name;
	return NULL;
}

static bool
names_home(const struct spell *s, const char *lit, size_t n)
{
	return s->home_len > 1 && n >= s->home_len && memcmp(lit, s->home, s->home_len) == 0 &&
	       (n == s->home_len || lit[s->home_len] == '/' || lit[s->home_len] == '*');
}

static void
spell_literal(struct spell *s, const char *field, const char *lit, size_t n, bool pattern,
	      const struct expr *at)
{
	char label[300];
	if (s->r->id)
		snprintf(label, sizeof(label), "@id(\"%s\")", s->r->id);
	else
		snprintf(label, sizeof(label), "%zu", s->index + 1);
	const char *kind = pattern ? "the pattern " : "";
	bool is_path = strcmp(field, "path") == 0 || strcmp(field, "program_path") == 0;
	int ln = (int)(n > 1000 ? 1000 : n);
	if (is_path && names_home(s, lit, n)) {
		diag_add(s->d, BP_ERROR, at->line, at->col,
			 "rule %s compares context.input.%s with %s\"%.*s\", and a path under the "
			 "operator home is spelled ~/…; write \"~%.*s\"",
			 label, field, kind, ln, lit, (int)(n - s->home_len), lit + s->home_len);
		return;
	}
	if (is_path && n > 1 && lit[n - 1] == '/' &&
	    ((s->fam == FAM_FS && strcmp(field, "path") == 0) ||
	     (s->fam == FAM_SHELL && strcmp(field, "program_path") == 0))) {
		diag_add(s->d, BP_ERROR, at->line, at->col,
			 "rule %s compares context.input.%s with %s\"%.*s\", and a directory is "
			 "spelled without a trailing slash; write \"%.*s\"",
			 label, field, kind, ln, lit, ln - 1, lit);
		return;
	}
	if (strcmp(field, "program") == 0 && memchr(lit, '/', n)) {
		diag_add(s->d, BP_WARNING, at->line, at->col,
			 "rule %s compares context.input.program with %s\"%.*s\", which matches only "
			 "a first word spelled that way; compare context.input.program_path to match "
			 "the resolved binary",
			 label, kind, ln, lit);
		return;
	}
	if (pattern && is_path && s->home_len > 1) {
		/* the home as a whole component after the first element */
		for (size_t i = 1; i + s->home_len <= n; i++) {
			if ((lit[i - 1] == '*' || lit[i - 1] == '/') &&
			    memcmp(lit + i, s->home, s->home_len) == 0 &&
			    (i + s->home_len == n || lit[i + s->home_len] == '/' ||
			     lit[i + s->home_len] == '*')) {
				diag_add(s->d, BP_WARNING, at->line, at->col,
					 "rule %s compares context.input.%s with the pattern \"%.*s\", "
					 "which names the operator home after a wildcard; a path under "
					 "the operator home is spelled ~/…, so the pattern may match "
					 "nothing",
					 label, field, ln, lit);
				return;
			}
		}
	}
}

static void
spell_walk(struct spell *s, const struct expr *e, int depth)
{
	if (!e || depth > BP_MAX_DEPTH * 2)
		return;
	const char *f;
	if ((e->kind == EX_EQ || e->kind == EX_NE) && e->a && e->b) {
		const struct expr *lit = NULL;
		if ((f = input_field(s->p, e->a)) && e->b->kind == EX_LIT && e->b->v.t == V_STR)
			lit = e->b;
		else if ((f = input_field(s->p, e->b)) && e->a->kind == EX_LIT && e->a->v.t == V_STR)
			lit = e->a;
		if (lit && (!strcmp(f, "path") || !strcmp(f, "program_path") || !strcmp(f, "program")))
			spell_literal(s, f, lit->v.u.s, lit->v.len, false, lit);
	}
	if (e->kind == EX_LIKE && (f = input_field(s->p, e->a)) &&
	    (!strcmp(f, "path") || !strcmp(f, "program_path") || !strcmp(f, "program"))) {
		/* the pattern as written (escapes kept: `\*` is still a star to the reader) */
		spell_literal(s, f, e->pat->text, e->pat->text_len, true, e);
	}
	if (e->kind == EX_METHOD && e->fn == M_CONTAINS && e->a->kind == EX_SET &&
	    (f = input_field(s->p, e->items[0])) &&
	    (!strcmp(f, "path") || !strcmp(f, "program_path") || !strcmp(f, "program"))) {
		for (size_t i = 0; i < e->a->n; i++) {
			const struct expr *it = e->a->items[i];
			if (it->kind == EX_LIT && it->v.t == V_STR)
				spell_literal(s, f, it->v.u.s, it->v.len, false, it);
		}
	}
	spell_walk(s, e->a, depth + 1);
	spell_walk(s, e->b, depth + 1);
	spell_walk(s, e->c, depth + 1);
	if (e->kind != EX_RECORD || e->items)
		for (size_t i = 0; i < e->n && e->items; i++)
			spell_walk(s, e->items[i], depth + 1);
}

static void
check_spelling(struct bp_policy *p, struct bp_diags *d)
{
	struct spell s = { .p = p, .d = d };
	if (p->home) {
		s.home = p->home;
		s.home_len = strlen(p->home);
		while (s.home_len > 1 && s.home[s.home_len - 1] == '/')
			s.home_len--;
	}
	for (size_t i = 0; i < p->n_rules; i++) {
		s.r = &p->rules[i];
		s.index = i;
		s.fam = rule_family(s.r);
		if (s.fam == FAM_SKIP)
			continue;
		spell_walk(&s, s.r->cond, 0);
	}
}

/*
 * A principal or resource scope that admits the one entity every request
 * carries (docs/box-policy.5.md: the principal is always Box::Agent::"self", the
 * resource Box::Resource::"unused").
 */
static bool
scope_admits_all(const struct scope *sc, const char *etype, const char *id)
{
	if (sc->slot)
		return false;
	switch (sc->kind) {
	case SC_ANY: return true;
	case SC_EQ:
	case SC_IN: return strcmp(sc->e.etype, etype) == 0 && strcmp(sc->e.id, id) == 0;
	case SC_IS: return strcmp(sc->is_type, etype) == 0;
	default: return false;
	}
}

/*
 * A permit with no scope and no condition (or only `when { true }` /
 * `unless { false }`) turns deny-by-default off: everything box decides is
 * permitted unless a forbid matches. Legal, so a warning, not an error.
 */
static void
check_permit_all(const struct bp_policy *p, struct bp_diags *d)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct rule *r = &p->rules[i];
		if (r->forbid || r->action.kind != SC_ANY || (r->has_clause && !r->vacuous) ||
		    r->n_temporal > 0 ||
		    !scope_admits_all(&r->principal, "Box::Agent", "self") ||
		    !scope_admits_all(&r->resource, "Box::Resource", "unused"))
			continue;
		char label[300];
		rule_label(r, i, label, sizeof(label));
		diag_add(d, BP_WARNING, r->line, r->col,
			 "%s permits every action on every resource; only a forbid can deny "
			 "anything, so name the actions it should permit",
			 label);
	}
}

int
validate_policy(struct bp_policy *p, struct bp_diags *d)
{
	struct tc t = { .p = p };
	size_t before = d->n_err;
	for (size_t i = 0; i < p->n_rules; i++) {
		struct rule *r = &p->rules[i];
		validate_rule(&t, r, i, d);
		if (r->pending) {
			char label[300];
			rule_label(r, i, label, sizeof(label));
			diag_add(d, BP_WARNING, r->line, r->col,
				 "%s: names an MCP tool whose server has not listed its tools; the rule "
				 "is type-checked when the tool schema arrives",
				 label);
		}
	}
	arena_free(&t.tmp);
	check_duplicate_ids(p, d);
	check_fs_other(p, d);
	check_caps(p, d);
	check_spelling(p, d);
	if (d->n_err == 0)
		check_permit_all(p, d); /* advice for a policy that loads; noise beside errors */
	return d->n_err > before ? -EINVAL : 0;
}
