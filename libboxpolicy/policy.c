/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy.c — loading a policy set (lex, parse, validate, index rules by
 * action), its accessors, and building requests against it.
 *
 * Trusts: nothing; the text and every request value are checked. A loaded
 * policy is never written again, so concurrent bp_decide calls are safe.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boxpolicy_temporal.h"
#include "internal.h"

static int
intern_rtype(struct bp_policy *p, struct rtype *rt, int depth);

static int
intern_type(struct bp_policy *p, struct type *t, int depth)
{
	if (depth > 32)
		return -EINVAL;
	if (t->k == TY_SET && t->elem)
		return intern_type(p, (struct type *)t->elem, depth + 1);
	if (t->k == TY_RECORD && t->rec)
		return intern_rtype(p, (struct rtype *)t->rec, depth + 1);
	return 0;
}

static int
intern_rtype(struct bp_policy *p, struct rtype *rt, int depth)
{
	for (size_t i = 0; i < rt->n; i++) {
		rt->attrs[i].atom = atom_intern(&p->atoms, &p->ar, rt->attrs[i].name,
						strlen(rt->attrs[i].name));
		if (rt->attrs[i].atom == UINT32_MAX)
			return -ENOMEM;
		int r = intern_type(p, &rt->attrs[i].ty, depth);
		if (r < 0)
			return r;
	}
	return 0;
}

static bool
scope_names_action(const struct scope *sc, const struct s_action *a)
{
	switch (sc->kind) {
	case SC_ANY: return true;
	case SC_EQ:
	case SC_IN:
		return strcmp(sc->e.etype, a->etype) == 0 && strcmp(sc->e.id, a->id) == 0;
	case SC_IN_SET:
		for (size_t i = 0; i < sc->n; i++)
			if (strcmp(sc->set[i].etype, a->etype) == 0 && strcmp(sc->set[i].id, a->id) == 0)
				return true;
		return false;
	default: return false;
	}
}

static int
build_index(struct bp_policy *p)
{
	size_t na = p->schema.n_actions;
	p->by_action = calloc(na ? na : 1, sizeof(*p->by_action));
	p->n_by_action = calloc(na ? na : 1, sizeof(*p->n_by_action));
	if (!p->by_action || !p->n_by_action)
		return -ENOMEM;
	for (size_t a = 0; a < na; a++) {
		size_t *list = malloc((p->n_rules ? p->n_rules : 1) * sizeof(*list));
		if (!list)
			return -ENOMEM;
		size_t n = 0;
		for (size_t i = 0; i < p->n_rules; i++) {
			const struct rule *r = &p->rules[i];
			if (r->never || r->pending || !r->name || !r->name[0])
				continue;
			if (scope_names_action(&r->action, &p->schema.actions[a]))
				list[n++] = i;
		}
		p->by_action[a] = list;
		p->n_by_action[a] = n;
	}
	return 0;
}

static int
cmp_diag(const void *a, const void *b)
{
	const struct diag *x = a, *y = b;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->msg < y->msg ? -1 : x->msg > y->msg; /* insertion order is not kept by qsort */
}

static void
sort_diags(struct bp_diags *d)
{
	/* stable by (line, col): insertion sort keeps the order of equal positions */
	for (size_t i = 1; i < d->n; i++) {
		struct diag x = d->d[i];
		size_t j = i;
		while (j > 0 && (d->d[j - 1].line > x.line ||
				 (d->d[j - 1].line == x.line && d->d[j - 1].col > x.col))) {
			d->d[j] = d->d[j - 1];
			j--;
		}
		d->d[j] = x;
	}
	(void)cmp_diag;
}

void
bp_policy_free(struct bp_policy *p)
{
	if (!p)
		return;
	if (p->by_action)
		for (size_t a = 0; a < p->schema.n_actions; a++)
			free(p->by_action[a]);
	free(p->by_action);
	free(p->n_by_action);
	free(p->rules);
	free(p->atoms.names);
	free(p->atoms.hash_slots);
	free(p->text);
	free(p->home);
	schema_fini(&p->schema);
	arena_free(&p->ar);
	free(p);
}

static int
load(const char *text, size_t len, const char *home, const struct bp_schema *schema,
     bool allow_unknown, bool no_index, struct bp_policy **ret, struct bp_diags *d)
{
	*ret = NULL;
	if (len > BP_MAX_POLICY_BYTES)
		return -E2BIG;
	struct bp_policy *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	int r = -ENOMEM;
	p->text = malloc(len + 1);
	if (!p->text)
		goto fail;
	memcpy(p->text, text, len);
	p->text[len] = 0;
	p->text_len = len;
	if (home && !(p->home = strdup(home)))
		goto fail;
	p->allow_unknown_ns = allow_unknown;
	r = schema_copy(schema, &p->schema);
	if (r < 0)
		goto fail;
	r = -ENOMEM;
	p->atom_input = atom_intern(&p->atoms, &p->ar, "input", 5);
	if (p->atom_input == UINT32_MAX || atom_intern(&p->atoms, &p->ar, "output", 6) == UINT32_MAX)
		goto fail;
	uint32_t a1 = atom_intern(&p->atoms, &p->ar, "Box::Agent", 10);
	uint32_t a2 = atom_intern(&p->atoms, &p->ar, "Box::Resource", 13);
	if (a1 == UINT32_MAX || a2 == UINT32_MAX)
		goto fail;
	p->t_agent = p->atoms.names[a1];
	p->t_resource = p->atoms.names[a2];
	for (size_t i = 0; i < LF_COUNT; i++) {
		const char *name = label_field_names[i];
		p->label_atom[i] = atom_intern(&p->atoms, &p->ar, name, strlen(name));
		if (p->label_atom[i] == UINT32_MAX)
			goto fail;
	}
	for (size_t i = 0; i < p->schema.n_actions; i++) {
		r = intern_rtype(p, &p->schema.actions[i].input, 0);
		if (r < 0)
			goto fail;
		r = intern_rtype(p, &p->schema.actions[i].output, 0);
		if (r < 0)
			goto fail;
	}

	struct lexer_result lr;
	r = lex(p->text, len, &lr);
	if (r < 0)
		goto fail;
	struct parse_ctx pc = {
		.ar = &p->ar, .atoms = &p->atoms, .diags = d, .src = p->text,
		.toks = lr.toks, .n_toks = lr.n,
	};
	/* an unterminated string swallows the rest of the text: report only that */
	int pr = lr.err ? 0 : parse_policies(&pc);
	free(lr.toks);
	p->rules = pc.rules;
	p->n_rules = pc.n_rules;
	if (pr == -ENOMEM || pc.oom) {
		r = -ENOMEM;
		goto fail;
	}
	if (lr.err)
		diag_add(d, BP_ERROR, lr.err_line, lr.err_col, "%s", lr.err_msg);
	/* validate what parsed, so one run names every problem */
	size_t parse_errors = d->n_err;
	r = validate_policy(p, d);
	if (!parse_errors && r >= 0) {
		/* The temporal acceptance rules (temporal_check.c) add to the same diags. */
		struct bp_diags *td = d;
		int tr = bp_policy_check_temporal(p, &td);
		if (tr == -ENOMEM) {
			r = tr;
			goto fail;
		}
	}
	sort_diags(d);
	if (parse_errors || r < 0 || d->n_err) {
		r = -EINVAL;
		goto fail;
	}
	r = build_index(p);
	if (r == 0 && !no_index)
		r = index_build(p);
	if (r < 0)
		goto fail;
	*ret = p;
	return 0;
fail:
	bp_policy_free(p);
	return r;
}

int
bp_policy_load(const char *text, size_t len, const struct bp_load_options *opts,
	       struct bp_policy **ret, struct bp_diags **diags)
{
	struct bp_diags *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	int r = load(text ? text : "", text ? len : 0, opts ? opts->home : NULL,
		     opts ? opts->schema : NULL, opts ? opts->allow_unknown_namespaces : false,
		     opts ? opts->no_rule_index : false, ret, d);
	if (diags)
		*diags = d;
	else
		bp_diags_free(d);
	return r;
}

int
bp_policy_reload(const struct bp_policy *p, const struct bp_schema *schema,
		 struct bp_policy **ret, struct bp_diags **diags)
{
	struct bp_load_options o = {
		.home = p->home, .schema = schema, .allow_unknown_namespaces = p->allow_unknown_ns,
		.no_rule_index = !p->ix,
	};
	return bp_policy_load(p->text, p->text_len, &o, ret, diags);
}

int
bp_policy_check_text(const char *text, size_t len, const char *home, size_t *rules,
		     struct bp_diags **diags)
{
	struct bp_load_options o = { .home = home, .allow_unknown_namespaces = true };
	struct bp_policy *p = NULL;
	int r = bp_policy_load(text, len, &o, &p, diags);
	if (rules)
		*rules = p ? p->n_rules : 0;
	bp_policy_free(p);
	return r;
}

size_t
bp_policy_rule_count(const struct bp_policy *p)
{
	return p ? p->n_rules : 0;
}

const char *
bp_policy_rule_name(const struct bp_policy *p, size_t i)
{
	return p && i < p->n_rules ? p->rules[i].name : NULL;
}

bool
bp_policy_rule_is_forbid(const struct bp_policy *p, size_t i)
{
	return p && i < p->n_rules && p->rules[i].forbid;
}

const char *
bp_policy_rule_annotation(const struct bp_policy *p, size_t i, const char *key)
{
	if (!p || i >= p->n_rules)
		return NULL;
	for (size_t k = 0; k < p->rules[i].n_annot; k++)
		if (strcmp(p->rules[i].annot[k].key, key) == 0)
			return p->rules[i].annot[k].value;
	return NULL;
}

int
bp_policy_rule_span(const struct bp_policy *p, size_t i, size_t *start, size_t *end)
{
	if (!p || i >= p->n_rules || p->rules[i].text_end <= p->rules[i].text_start)
		return -ENOENT;
	*start = p->rules[i].text_start;
	*end = p->rules[i].text_end;
	return 0;
}

size_t
bp_policy_temporal_count(const struct bp_policy *p, size_t rule)
{
	return p && rule < p->n_rules ? p->rules[rule].n_temporal : 0;
}

/* ---- requests ---- */

int
bp_request_new(const struct bp_policy *p, struct bp_request **ret)
{
	if (!p)
		return -EINVAL;
	struct bp_request *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->p = p;
	r->action = SIZE_MAX;
	r->fields_action = MIXED_ACTIONS;
	r->ar.cap = BP_MAX_REQ_BYTES;
	*ret = r;
	return 0;
}

void
bp_request_free(struct bp_request *r)
{
	if (!r)
		return;
	free(r->fields);
	arena_free(&r->ar);
	free(r);
}

static void
sync_context(struct bp_request *r)
{
	r->ctx_ent.name = "input";
	r->ctx_ent.atom = r->p->atom_input;
	memset(&r->ctx_ent.v, 0, sizeof(r->ctx_ent.v));
	r->ctx_ent.v.t = V_REC;
	r->ctx_ent.v.len = (uint32_t)r->n_fields;
	r->ctx_ent.v.u.rec = r->fields;
	memset(&r->context, 0, sizeof(r->context));
	r->context.t = V_REC;
	r->context.len = 1;
	r->context.u.rec = &r->ctx_ent;
}

void
bp_request_reset(struct bp_request *r)
{
	r->action = SIZE_MAX;
	r->action_pending = false;
	r->pending_name = NULL;
	r->pending_failed = NULL;
	r->n_fields = 0;
	r->fields_action = MIXED_ACTIONS;
	r->present = 0;
	r->resource = NULL;
	r->resource_len = 0;
	r->resource_set = false;
	r->n_puts = 0;
	r->problem[0] = 0;
	arena_reset(&r->ar);
	sync_context(r);
}

static void __attribute__((format(printf, 2, 3))) problem(struct bp_request *r, const char *fmt, ...);

const char *
bp_request_problem(struct bp_request *r)
{
	if (!r->problem[0] && r->action == SIZE_MAX && !r->action_pending)
		problem(r, "no action");
	if (!r->problem[0] && r->action != SIZE_MAX && !r->action_pending) {
		const struct rtype *in = &r->p->schema.actions[r->action].input;
		for (size_t i = 0; i < in->n; i++)
			if (!in->attrs[i].optional && !request_field(r, in->attrs[i].atom)) {
				problem(r, "required field \"%s\" is missing", in->attrs[i].name);
				break;
			}
	}
	return r->problem[0] ? r->problem : NULL;
}

static void __attribute__((format(printf, 2, 3)))
problem(struct bp_request *r, const char *fmt, ...)
{
	if (r->problem[0])
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->problem, sizeof(r->problem), fmt, ap);
	va_end(ap);
}

int
bp_request_set_action(struct bp_request *r, const char *action)
{
	const struct bp_schema *s = &r->p->schema;
	const char *sep = strstr(action, "::Action::\"");
	size_t idx;
	r->action_pending = false;
	r->pending_failed = NULL;
	if (!sep) {
		size_t h = r->action_hint;
		if (h < s->n_actions && strcmp(s->actions[h].id, action) == 0 &&
		    strcmp(s->actions[h].etype, "Box::Action") == 0) {
			r->action = h;
			return 0;
		}
		if (schema_find_action(s, "Box::Action", action, &idx)) {
			r->action = idx;
			r->action_hint = idx;
			return 0;
		}
		bool fresh = !r->problem[0];
		problem(r, "unknown action \"%.100s\"", action);
		if (fresh)
			suggest_action(r->problem, sizeof(r->problem), s, "Box::Action", action);
		return -ENOENT;
	}
	size_t nslen = (size_t)(sep - action);
	const char *tool = sep + 11;
	size_t tlen = strlen(tool);
	if (nslen == 0 || nslen > 256 || tlen < 1 || tool[tlen - 1] != '"') {
		problem(r, "malformed action \"%.100s\"", action);
		return -EINVAL;
	}
	char etype[300];
	snprintf(etype, sizeof(etype), "%.*s::Action", (int)nslen, action);
	char *id = arena_strndup(&r->ar, tool, tlen - 1);
	if (!id)
		return -ENOMEM;
	if (schema_find_action(s, etype, id, &idx)) {
		r->action = idx;
		return 0;
	}
	char ns[260];
	snprintf(ns, sizeof(ns), "%.*s", (int)nslen, action);
	bool pending = false;
	if ((schema_ns_known(s, ns, &pending) && pending) ||
	    (!schema_ns_known(s, ns, NULL) && r->p->allow_unknown_ns)) {
		size_t n = nslen + 1 + strlen(id) + 1;
		char *name = arena_alloc(&r->ar, n);
		if (!name)
			return -ENOMEM;
		snprintf(name, n, "%s/%s", ns, id);
		r->action_pending = true;
		r->pending_name = name;
		r->pending_failed = schema_ns_failed(s, ns);
		return 0;
	}
	problem(r, "unknown action %.200s", action);
	return -ENOENT;
}

static bool
val_fits(const struct val *v, const struct type *t, int depth)
{
	if (depth > 32)
		return false;
	switch (t->k) {
	case TY_LONG: return v->t == V_LONG;
	case TY_STRING: return v->t == V_STR;
	case TY_BOOL: return v->t == V_BOOL;
	case TY_ENTITY: return v->t == V_ENT && strcmp(v->u.e.etype, t->etype) == 0;
	case TY_SET:
		if (v->t != V_SET)
			return false;
		for (uint32_t i = 0; i < v->len; i++)
			if (!val_fits(&v->u.items[i], t->elem, depth + 1))
				return false;
		return true;
	case TY_RECORD:
		if (v->t != V_REC)
			return false;
		for (uint32_t i = 0; i < v->len; i++) {
			const struct rattr *a = NULL;
			for (size_t k = 0; k < t->rec->n && !a; k++)
				if (strcmp(t->rec->attrs[k].name, v->u.rec[i].name) == 0)
					a = &t->rec->attrs[k];
			if (!a || !val_fits(&v->u.rec[i].v, &a->ty, depth + 1))
				return false;
		}
		for (size_t k = 0; k < t->rec->n; k++) {
			bool found = false;
			for (uint32_t i = 0; i < v->len && !found; i++)
				found = strcmp(t->rec->attrs[k].name, v->u.rec[i].name) == 0;
			if (!found && !t->rec->attrs[k].optional)
				return false;
		}
		return true;
	default: return false;
	}
}

static const struct rattr *
input_attr(struct bp_request *r, const char *field)
{
	if (r->action == SIZE_MAX)
		return NULL;
	const struct rtype *in = &r->p->schema.actions[r->action].input;
	size_t k = r->n_puts++;
	bool hinted = k < sizeof(r->attr_hint) / sizeof(r->attr_hint[0]);
	if (hinted) {
		size_t h = r->attr_hint[k];
		if (h < in->n && strcmp(in->attrs[h].name, field) == 0)
			return &in->attrs[h];
	}
	for (size_t i = 0; i < in->n; i++)
		if (strcmp(in->attrs[i].name, field) == 0) {
			if (hinted && i <= UINT16_MAX)
				r->attr_hint[k] = (uint16_t)i;
			return &in->attrs[i];
		}
	return NULL;
}

static int
put_field(struct bp_request *r, const char *field, const struct val *v)
{
	if (r->action_pending)
		return 0; /* nothing to check against yet; the decision is `error` anyway */
	if (r->action == SIZE_MAX) {
		problem(r, "a field before the action");
		return -EINVAL;
	}
	const struct rattr *a = input_attr(r, field);
	if (!a) {
		bool fresh = !r->problem[0];
		const struct s_action *act = &r->p->schema.actions[r->action];
		problem(r, "unknown field \"%.100s\" for action %s", field, act->id);
		if (fresh)
			suggest_names(r->problem, sizeof(r->problem), field, act->input.attrs,
				      act->input.n, name_at_attrs, "fields");
		return -ENOENT;
	}
	struct val conv = *v;
	if (a->ty.k == TY_ENTITY && v->t == V_STR) {
		/* enum fields are given by id */
		bool ok = false;
		const struct s_enum *en = NULL;
		for (size_t i = 0; i < r->p->schema.n_enums && !ok; i++)
			if (strcmp(r->p->schema.enums[i].etype, a->ty.etype) == 0) {
				en = &r->p->schema.enums[i];
				for (size_t j = 0; j < en->n && !ok; j++)
					ok = strlen(en->ids[j]) == v->len &&
					     memcmp(en->ids[j], v->u.s, v->len) == 0;
			}
		if (!ok) {
			bool fresh = !r->problem[0];
			problem(r, "\"%.*s\" is not a valid %s", (int)(v->len > 100 ? 100 : v->len),
				v->u.s, a->ty.etype);
			if (fresh && en) {
				char word[80];
				snprintf(word, sizeof(word), "%.*s",
					 (int)(v->len > 70 ? 70 : v->len), v->u.s);
				suggest_enum(r->problem, sizeof(r->problem), en, word);
			}
			return -EINVAL;
		}
		conv.t = V_ENT;
		conv.u.e.etype = a->ty.etype;
		conv.u.e.id = v->u.s;
	}
	bool fits = (a->ty.k == TY_STRING && conv.t == V_STR) ||
		    (a->ty.k == TY_LONG && conv.t == V_LONG) || val_fits(&conv, &a->ty, 0);
	if (!fits) {
		problem(r, "field \"%s\" has the wrong type", a->name);
		return -EINVAL;
	}
	if (r->n_fields == 0) {
		r->fields_action = r->action;
		r->present = 0;
	} else if (r->fields_action != r->action) {
		r->fields_action = MIXED_ACTIONS;
	}
	size_t ai = (size_t)(a - r->p->schema.actions[r->action].input.attrs);
	if (ai < 64)
		r->present |= 1ULL << ai;
	for (size_t i = 0; i < r->n_fields; i++)
		if (r->fields[i].atom == a->atom) {
			r->fields[i].v = conv;
			return 0;
		}
	if (r->n_fields == r->cap_fields) {
		size_t cap = r->cap_fields ? r->cap_fields * 2 : 8;
		if (cap > 4096)
			return -E2BIG;
		struct rec_ent *nf = realloc(r->fields, cap * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		r->fields = nf;
		r->cap_fields = cap;
	}
	r->fields[r->n_fields++] = (struct rec_ent){ .name = a->name, .atom = a->atom, .v = conv };
	sync_context(r);
	return 0;
}

int
bp_request_set_string(struct bp_request *r, const char *field, const char *s, size_t len)
{
	if (len > UINT32_MAX)
		return -E2BIG;
	char *copy = arena_strndup(&r->ar, s, len);
	if (!copy)
		return -ENOMEM;
	struct val v = { .t = V_STR, .len = (uint32_t)len, .u.s = copy };
	return put_field(r, field, &v);
}

int
bp_request_set_long(struct bp_request *r, const char *field, int64_t x)
{
	struct val v = { .t = V_LONG, .u.l = x };
	return put_field(r, field, &v);
}

int
bp_request_set_bool(struct bp_request *r, const char *field, bool b)
{
	struct val v = { .t = V_BOOL, .u.b = b };
	return put_field(r, field, &v);
}

int
bp_request_set_value(struct bp_request *r, const char *field, struct bp_value *v)
{
	if (!v)
		return -ENOMEM;
	return put_field(r, field, &v->v);
}

int
bp_request_set_resource(struct bp_request *r, const char *label, size_t len)
{
	char *copy = arena_strndup(&r->ar, label, len);
	if (!copy)
		return -ENOMEM;
	r->resource = copy;
	r->resource_len = len;
	r->resource_set = true;
	return 0;
}

static struct bp_value *
new_value(struct bp_request *r)
{
	return arena_alloc(&r->ar, sizeof(struct bp_value));
}

struct bp_value *
bp_value_long(struct bp_request *r, int64_t x)
{
	struct bp_value *v = new_value(r);
	if (v) {
		v->v.t = V_LONG;
		v->v.u.l = x;
	}
	return v;
}

struct bp_value *
bp_value_bool(struct bp_request *r, bool b)
{
	struct bp_value *v = new_value(r);
	if (v) {
		v->v.t = V_BOOL;
		v->v.u.b = b;
	}
	return v;
}

struct bp_value *
bp_value_string(struct bp_request *r, const char *s, size_t len)
{
	struct bp_value *v = new_value(r);
	char *copy = arena_strndup(&r->ar, s, len);
	if (!v || !copy || len > UINT32_MAX)
		return NULL;
	v->v.t = V_STR;
	v->v.u.s = copy;
	v->v.len = (uint32_t)len;
	return v;
}

struct bp_value *
bp_value_set(struct bp_request *r)
{
	struct bp_value *v = new_value(r);
	if (v)
		v->v.t = V_SET;
	return v;
}

struct bp_value *
bp_value_record(struct bp_request *r)
{
	struct bp_value *v = new_value(r);
	if (v)
		v->v.t = V_REC;
	return v;
}

int
bp_value_set_add(struct bp_request *r, struct bp_value *set, struct bp_value *elem)
{
	if (!set || !elem || set->v.t != V_SET)
		return -EINVAL;
	if (set->v.len == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 4;
		if (cap > 1u << 20)
			return -E2BIG;
		struct val *items = arena_alloc(&r->ar, cap * sizeof(*items));
		if (!items)
			return -ENOMEM;
		if (set->v.len)
			memcpy(items, set->v.u.items, set->v.len * sizeof(*items));
		set->v.u.items = items;
		set->cap = cap;
	}
	((struct val *)set->v.u.items)[set->v.len++] = elem->v;
	return 0;
}

int
bp_value_record_put(struct bp_request *r, struct bp_value *rec, const char *key,
		    struct bp_value *v)
{
	if (!rec || !v || rec->v.t != V_REC)
		return -EINVAL;
	for (uint32_t i = 0; i < rec->v.len; i++)
		if (strcmp(rec->v.u.rec[i].name, key) == 0)
			return -EEXIST;
	if (rec->v.len == rec->cap) {
		size_t cap = rec->cap ? rec->cap * 2 : 4;
		if (cap > 1u << 16)
			return -E2BIG;
		struct rec_ent *ents = arena_alloc(&r->ar, cap * sizeof(*ents));
		if (!ents)
			return -ENOMEM;
		if (rec->v.len)
			memcpy(ents, rec->v.u.rec, rec->v.len * sizeof(*ents));
		rec->v.u.rec = ents;
		rec->cap = cap;
	}
	size_t klen = strlen(key);
	uint32_t atom = atom_find(&r->p->atoms, key, klen);
	const char *name = atom != UINT32_MAX ? r->p->atoms.names[atom]
					      : arena_strndup(&r->ar, key, klen);
	if (!name)
		return -ENOMEM;
	((struct rec_ent *)rec->v.u.rec)[rec->v.len++] =
		(struct rec_ent){ .name = name, .atom = atom, .v = v->v };
	return 0;
}
