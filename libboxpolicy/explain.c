/* SPDX-License-Identifier: Apache-2.0 */
/*
 * explain.c — why a request was decided as it was (boxpolicy.h, bp_explain;
 * `boxctl policy eval --explain`): for every rule whose scope names the
 * request's action, its outcome, the clauses it evaluated and, per clause,
 * the sub-expression that decided, as written in the policy, with the values
 * it read or the reason it failed; temporal terms add what the monitor's
 * explain hook reports (the events that satisfied or failed them).
 *
 * How the deciding sub-expression is found: a clause's expression is
 * re-evaluated top-down with the evaluator bp_decide uses (eval_expr), and
 * the walk follows the operand that fixed the value — the false side of a
 * false `&&`, the true side of a true `||`, the operand of `!`, the taken
 * branch of `if`; a leaf (a comparison, `like`, `has`, `in`, a method, a
 * temporal term) is the decider. An error is followed, in evaluation order,
 * to the innermost node that failed while its operands did not.
 *
 * Pure library code: no I/O, no logging; bp_decide is not touched, so a
 * decision that is not explained costs nothing more. Memory is the
 * explanation's own arena (capped), reset by each bp_explain.
 *
 * Trusts: a loaded policy (its AST and source text) and the caller's request
 * and hook; values from the request are escaped when printed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define X_MAX_AT 300        /* bytes of a sub-expression's source shown */
#define X_MAX_VALUE 200     /* bytes of one printed value */
#define X_MAX_NOTES 64      /* per clause */
#define X_MAX_EVENTS 64     /* per clause */
#define X_ARENA_CAP (32u << 20)

struct bp_explain {
	struct arena ar;     /* everything returned */
	struct arena scratch; /* evaluation */
	const struct bp_policy *p;
	const struct bp_request *req;
	const struct bp_temporal_hook *hook;
	size_t rule;
	size_t n_rules;
	struct bp_explain_rule *rules;
	const char *problem;
	/* the clause being explained: what the temporal hook adds */
	size_t n_notes;
	const char *notes[X_MAX_NOTES];
	size_t n_events;
	struct bp_explain_event events[X_MAX_EVENTS];
	size_t events_dropped;
	bool oom;
};

int
bp_explain_new(struct bp_explain **ret)
{
	struct bp_explain *x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->ar.cap = X_ARENA_CAP;
	x->scratch.cap = 64u << 20;
	*ret = x;
	return 0;
}

void
bp_explain_free(struct bp_explain *x)
{
	if (!x)
		return;
	arena_free(&x->ar);
	arena_free(&x->scratch);
	free(x);
}

static const char *
xstrdup(struct bp_explain *x, const char *s, size_t n)
{
	char *c = arena_strndup(&x->ar, s, n);
	if (!c) {
		x->oom = true;
		return "";
	}
	return c;
}

static const char *
buf_take(struct bp_explain *x, struct buf *b)
{
	if (b->oom)
		x->oom = true;
	const char *s = b->p ? xstrdup(x, b->p, b->len) : "";
	buf_free(b);
	return s;
}

/* ---- printing values ---- */

static void
put_str(struct buf *b, const char *s, size_t n, size_t max)
{
	buf_putc(b, '"');
	for (size_t i = 0; i < n; i++) {
		if (b->len > max) {
			buf_puts(b, "...");
			break;
		}
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			buf_printf(b, "\\%c", c);
		else if (c == '\n')
			buf_puts(b, "\\n");
		else if (c == '\t')
			buf_puts(b, "\\t");
		else if (c < 0x20 || c == 0x7f)
			buf_printf(b, "\\u{%x}", c);
		else
			buf_putc(b, (char)c);
	}
	buf_putc(b, '"');
}

static void
put_val(struct buf *b, const struct val *v, size_t max, int depth)
{
	if (b->len > max || depth > 8) {
		buf_puts(b, "...");
		return;
	}
	switch (v->t) {
	case V_BOOL: buf_puts(b, v->u.b ? "true" : "false"); break;
	case V_LONG: buf_printf(b, "%" PRId64, v->u.l); break;
	case V_STR: put_str(b, v->u.s, v->len, max); break;
	case V_ENT:
		buf_printf(b, "%s::", v->u.e.etype);
		put_str(b, v->u.e.id, v->len, max);
		break;
	case V_SET:
	case V_REC:
		buf_putc(b, v->t == V_SET ? '[' : '{');
		for (uint32_t i = 0; i < v->len; i++) {
			if (b->len > max) {
				buf_puts(b, ", ...");
				break;
			}
			if (i)
				buf_puts(b, ", ");
			if (v->t == V_REC) {
				buf_printf(b, "%s: ", v->u.rec[i].name);
				put_val(b, &v->u.rec[i].v, max, depth + 1);
			} else {
				put_val(b, &v->u.items[i], max, depth + 1);
			}
		}
		buf_putc(b, v->t == V_SET ? ']' : '}');
		break;
	case V_IP:
		if (v->ip_v6) {
			buf_puts(b, "ip(\"");
			for (int i = 0; i < 16; i += 2)
				buf_printf(b, "%s%x", i ? ":" : "", (v->u.ip[i] << 8) | v->u.ip[i + 1]);
			buf_printf(b, "/%u\")", v->ip_prefix);
		} else {
			buf_printf(b, "ip(\"%u.%u.%u.%u/%u\")", v->u.ip[0], v->u.ip[1], v->u.ip[2],
				   v->u.ip[3], v->ip_prefix);
		}
		break;
	case V_DEC: {
		int64_t l = v->u.l;
		uint64_t mag = l < 0 ? (uint64_t)0 - (uint64_t)l : (uint64_t)l;
		buf_printf(b, "decimal(\"%s%" PRIu64 ".%04" PRIu64 "\")", l < 0 ? "-" : "",
			   mag / 10000, mag % 10000);
		break;
	}
	case V_DATETIME: buf_printf(b, "datetime(%" PRId64 " ms)", v->u.l); break;
	case V_DURATION: buf_printf(b, "duration(%" PRId64 " ms)", v->u.l); break;
	default: buf_puts(b, "?"); break;
	}
}

void
explain_put_val(struct buf *b, const struct val *v, size_t max)
{
	put_val(b, v, b->len + max, 0);
}

/* ---- what the temporal hook adds ---- */

void
explain_note(struct bp_explain *x, const char *fmt, ...)
{
	if (x->n_notes >= X_MAX_NOTES)
		return;
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	x->notes[x->n_notes++] = xstrdup(x, line, strlen(line));
}

void
explain_event(struct bp_explain *x, int64_t time_ns, const char *kind, const char *action,
	      const char *fields, const char *role)
{
	if (x->n_events >= X_MAX_EVENTS) {
		x->events_dropped++;
		return;
	}
	x->events[x->n_events++] = (struct bp_explain_event){
		.time_ns = time_ns,
		.kind = xstrdup(x, kind, strlen(kind)),
		.action = xstrdup(x, action, strlen(action)),
		.fields = xstrdup(x, fields, strlen(fields)),
		.role = xstrdup(x, role, strlen(role)),
	};
}

/* ---- the source of a sub-expression ---- */

/* E's text as written, whitespace runs folded to one space, cut at X_MAX_AT bytes. */
static const char *
source_of(struct bp_explain *x, const struct expr *e, unsigned *line, unsigned *col)
{
	const char *text = x->p->text;
	size_t off = e->off, end = e->end;
	if (end > x->p->text_len || off >= end) {
		*line = e->line;
		*col = e->col;
		return "";
	}
	unsigned l = 1, c = 1;
	for (size_t i = 0; i < off; i++) {
		if (text[i] == '\n') {
			l++;
			c = 1;
		} else {
			c++;
		}
	}
	*line = l;
	*col = c;
	struct buf b = { 0 };
	bool space = false;
	for (size_t i = off; i < end; i++) {
		char ch = text[i];
		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
			space = true;
			continue;
		}
		if (space && b.len)
			buf_putc(&b, ' ');
		space = false;
		if (b.len >= X_MAX_AT) {
			buf_puts(&b, "...");
			break;
		}
		buf_putc(&b, ch);
	}
	return buf_take(x, &b);
}

/* ---- evaluation ---- */

static enum bp_explain_value
value_of(struct bp_explain *x, const struct expr *e, struct val *out)
{
	struct val v;
	if (eval_expr(x->p, x->req, x->hook, x->rule, &x->scratch, e, &v) < 0)
		return BP_EXPLAIN_FAILED;
	if (out)
		*out = v;
	if (v.t != V_BOOL)
		return out ? BP_EXPLAIN_TRUE : BP_EXPLAIN_FAILED; /* a value, not a condition */
	return v.u.b ? BP_EXPLAIN_TRUE : BP_EXPLAIN_FALSE;
}

static bool
fails(struct bp_explain *x, const struct expr *e)
{
	struct val v;
	return eval_expr(x->p, x->req, x->hook, x->rule, &x->scratch, e, &v) < 0;
}

struct decider {
	const struct expr *e;
	enum bp_explain_value v;
	const char *why; /* an error: the reason */
};

/* Does E read the request, the scope variables or the history (is it more than a constant)? */
static bool
varies(const struct expr *e, int depth)
{
	if (!e || depth > BP_MAX_DEPTH * 2)
		return false;
	if (e->kind == EX_VAR || e->kind == EX_SLOT || e->kind == EX_TEMPORAL ||
	    e->kind == EX_INPUT)
		return true;
	if (varies(e->a, depth + 1) || varies(e->b, depth + 1) || varies(e->c, depth + 1))
		return true;
	for (size_t i = 0; e->items && i < e->n; i++)
		if (varies(e->items[i], depth + 1))
			return true;
	return false;
}

static const char *
error_reason(struct bp_explain *x, const struct expr *e)
{
	struct val v;
	switch (e->kind) {
	case EX_ATTR:
	case EX_HAS:
		if (value_of(x, e->a, &v) != BP_EXPLAIN_FAILED && v.t == V_REC) {
			char msg[300];
			bool input = e->a->kind == EX_ATTR && e->a->atom == x->p->atom_input;
			snprintf(msg, sizeof(msg), input ? "the request has no field `%s`"
							 : "the record has no attribute `%s`",
				 e->name ? e->name : "?");
			return xstrdup(x, msg, strlen(msg));
		}
		return "not a record";
	case EX_ADD:
	case EX_SUB:
	case EX_MUL:
	case EX_NEG: {
		struct val l, r;
		bool longs = value_of(x, e->a, &l) != BP_EXPLAIN_FAILED && l.t == V_LONG &&
			     (!e->b || (value_of(x, e->b, &r) != BP_EXPLAIN_FAILED && r.t == V_LONG));
		return longs ? "integer overflow" : "an operand is not a Long";
	}
	case EX_TEMPORAL:
		return x->hook && x->hook->eval ? "the temporal condition could not be evaluated"
						: "no history to evaluate a temporal condition";
	case EX_CALL: return "the argument is not valid for this function";
	case EX_LIKE: return "`like` needs a String";
	case EX_LT:
	case EX_LE:
	case EX_GT:
	case EX_GE: return "the operands cannot be ordered (not both Long)";
	case EX_IN: return "`in` needs an entity on its left and an entity or set of entities on its right";
	default: return "the operands do not fit the operator";
	}
}

/* The innermost failing node, in evaluation order. */
static struct decider
error_origin(struct bp_explain *x, const struct expr *e, int depth)
{
	struct decider d = { .e = e, .v = BP_EXPLAIN_FAILED };
	if (depth > BP_MAX_DEPTH * 2) {
		d.why = "the expression is nested too deeply";
		return d;
	}
	struct val v;
	switch (e->kind) {
	case EX_AND:
	case EX_OR:
		if (fails(x, e->a))
			return error_origin(x, e->a, depth + 1);
		if (value_of(x, e->a, &v) != BP_EXPLAIN_FAILED && v.t == V_BOOL &&
		    v.u.b == (e->kind == EX_AND) && fails(x, e->b))
			return error_origin(x, e->b, depth + 1);
		break;
	case EX_IF:
		if (fails(x, e->a))
			return error_origin(x, e->a, depth + 1);
		if (value_of(x, e->a, &v) != BP_EXPLAIN_FAILED && v.t == V_BOOL) {
			const struct expr *br = v.u.b ? e->b : e->c;
			if (fails(x, br))
				return error_origin(x, br, depth + 1);
		}
		break;
	case EX_TEMPORAL: break;
	default: {
		const struct expr *kids[3] = { e->a, e->b, e->c };
		for (int i = 0; i < 3; i++)
			if (kids[i] && fails(x, kids[i]))
				return error_origin(x, kids[i], depth + 1);
		for (size_t i = 0; e->items && i < e->n; i++)
			if (fails(x, e->items[i]))
				return error_origin(x, e->items[i], depth + 1);
		break;
	}
	}
	d.why = error_reason(x, e);
	return d;
}

static struct decider
find_decider(struct bp_explain *x, const struct expr *e, int depth)
{
	struct decider d = { .e = e };
	if (depth > BP_MAX_DEPTH * 2) {
		d.v = BP_EXPLAIN_FAILED;
		d.why = "the expression is nested too deeply";
		return d;
	}
	struct val v;
	enum bp_explain_value va, vb;
	switch (e->kind) {
	case EX_AND:
	case EX_OR: {
		enum bp_explain_value stop = e->kind == EX_AND ? BP_EXPLAIN_FALSE : BP_EXPLAIN_TRUE;
		va = value_of(x, e->a, NULL);
		if (va == BP_EXPLAIN_FAILED || va == stop)
			return find_decider(x, e->a, depth + 1);
		vb = value_of(x, e->b, NULL);
		if (vb == BP_EXPLAIN_FAILED || vb == stop)
			return find_decider(x, e->b, depth + 1);
		d.v = vb; /* both sides agree: the whole */
		return d;
	}
	case EX_NOT:
		if (value_of(x, e->a, NULL) == BP_EXPLAIN_FAILED)
			return error_origin(x, e->a, depth + 1);
		return find_decider(x, e->a, depth + 1);
	case EX_IF:
		va = value_of(x, e->a, NULL);
		if (va == BP_EXPLAIN_FAILED)
			return find_decider(x, e->a, depth + 1);
		return find_decider(x, va == BP_EXPLAIN_TRUE ? e->b : e->c, depth + 1);
	default:
		d.v = value_of(x, e, &v);
		if (d.v == BP_EXPLAIN_FAILED)
			return error_origin(x, e, depth + 1);
		if (v.t != V_BOOL) {
			d.v = BP_EXPLAIN_FAILED;
			d.why = "not a Bool";
		}
		return d;
	}
}

/* "X is V" for each operand of E that reads the request. */
static const char *
operand_values(struct bp_explain *x, const struct expr *e)
{
	struct buf b = { 0 };
	const struct expr *ops[3 + 8];
	size_t n = 0;
	if (e->a)
		ops[n++] = e->a;
	if (e->b)
		ops[n++] = e->b;
	if (e->c)
		ops[n++] = e->c;
	for (size_t i = 0; e->items && e->kind != EX_TEMPORAL && i < e->n && n < 11; i++)
		ops[n++] = e->items[i];
	for (size_t i = 0; i < n; i++) {
		struct val v;
		if (!varies(ops[i], 0) || ops[i]->kind == EX_TEMPORAL)
			continue;
		if (value_of(x, ops[i], &v) == BP_EXPLAIN_FAILED)
			continue;
		unsigned l, c;
		const char *src = source_of(x, ops[i], &l, &c);
		if (b.len)
			buf_puts(&b, "; ");
		buf_printf(&b, "%s is ", src);
		explain_put_val(&b, &v, X_MAX_VALUE);
	}
	return buf_take(x, &b);
}

/* Every temporal term under E, explained through the hook. */
static void
explain_temporal(struct bp_explain *x, const struct expr *e, int depth)
{
	if (!e || depth > BP_MAX_DEPTH * 2)
		return;
	if (e->kind == EX_TEMPORAL) {
		if (x->hook && x->hook->explain) {
			int r = x->hook->explain(x->hook->ctx, x->p, x->rule, e->temporal, x->req, x);
			if (r < 0)
				explain_note(x, "temporal term %u: its history cannot be explained (%s)",
					     e->temporal + 1, strerror(-r));
		} else {
			explain_note(x, "temporal term %u: no history was given", e->temporal + 1);
		}
		return;
	}
	explain_temporal(x, e->a, depth + 1);
	explain_temporal(x, e->b, depth + 1);
	explain_temporal(x, e->c, depth + 1);
	for (size_t i = 0; e->items && i < e->n; i++)
		explain_temporal(x, e->items[i], depth + 1);
}

static void
explain_clause(struct bp_explain *x, const struct clause *cl, unsigned index,
	       struct bp_explain_clause *out)
{
	x->n_notes = x->n_events = x->events_dropped = 0;
	arena_reset(&x->scratch);
	out->index = index;
	out->unless = cl->unless;
	out->temporal = cl->temporal;
	out->value = value_of(x, cl->e, NULL);
	struct decider d = find_decider(x, cl->e, 0);
	out->at = source_of(x, d.e, &out->at_line, &out->at_col);
	out->at_value = d.v;
	out->detail = d.why ? d.why : d.e->kind == EX_TEMPORAL ? "" : operand_values(x, d.e);
	explain_temporal(x, d.e, 0);
	if (x->events_dropped)
		explain_note(x, "%zu more events not listed", x->events_dropped);
	out->n_notes = x->n_notes;
	if (x->n_notes) {
		const char **notes = arena_alloc(&x->ar, x->n_notes * sizeof(*notes));
		if (notes)
			memcpy(notes, x->notes, x->n_notes * sizeof(*notes));
		else
			out->n_notes = 0, x->oom = true;
		out->notes = notes;
	}
	out->n_events = x->n_events;
	if (x->n_events) {
		struct bp_explain_event *ev = arena_alloc(&x->ar, x->n_events * sizeof(*ev));
		if (ev)
			memcpy(ev, x->events, x->n_events * sizeof(*ev));
		else
			out->n_events = 0, x->oom = true;
		out->events = ev;
	}
}

static const char *
value_word(enum bp_explain_value v)
{
	return v == BP_EXPLAIN_TRUE ? "true" : v == BP_EXPLAIN_FALSE ? "false" : "an error";
}

static const char *
rule_sentence(struct bp_explain *x, const struct rule *r, const struct bp_explain_rule *er)
{
	struct buf b = { 0 };
	buf_printf(&b, "%s %s (line %u) %s", r->forbid ? "forbid" : "permit", r->name, r->line,
		   er->outcome == BP_EXPLAIN_MATCHED	   ? "matched"
		   : er->outcome == BP_EXPLAIN_NOT_MATCHED ? "did not match"
							   : "could not be evaluated");
	if (!er->n_clauses) {
		buf_puts(&b, ": it has no condition (its scope names the action)");
		return buf_take(x, &b);
	}
	const struct bp_explain_clause *c = &er->clauses[er->n_clauses - 1];
	const char *kind = c->unless ? "unless" : "when";
	buf_puts(&b, ": ");
	if (er->outcome == BP_EXPLAIN_MATCHED && er->n_clauses > 1)
		buf_printf(&b, "all %zu clauses held; the last, ", er->n_clauses);
	if (c->value == BP_EXPLAIN_FAILED) {
		buf_printf(&b, "%s clause %u failed at `%s` (%s)", kind, c->index, c->at,
			   c->detail);
		return buf_take(x, &b);
	}
	buf_printf(&b, "%s clause %u was %s at `%s`", kind, c->index, value_word(c->value), c->at);
	if (c->at_value != c->value)
		buf_printf(&b, ", which was %s", value_word(c->at_value));
	if (c->detail && c->detail[0])
		buf_printf(&b, " (%s)", c->detail);
	return buf_take(x, &b);
}

int
bp_explain(const struct bp_policy *p, const struct bp_request *req,
	   const struct bp_temporal_hook *hook, struct bp_explain *x)
{
	if (!p || !req || !x || req->p != p)
		return -EINVAL;
	arena_reset(&x->ar);
	x->p = p;
	x->req = req;
	x->hook = hook;
	x->n_rules = 0;
	x->rules = NULL;
	x->problem = NULL;
	x->oom = false;
	if (req->action == SIZE_MAX || req->action_pending || req->problem[0]) {
		x->problem = req->problem[0] ? req->problem
					     : "the request's action is not in the schema";
		return 0;
	}
	const struct rtype *in = &p->schema.actions[req->action].input;
	for (size_t i = 0; i < in->n; i++)
		if (!in->attrs[i].optional && !request_field(req, in->attrs[i].atom)) {
			char msg[300];
			snprintf(msg, sizeof(msg), "the request lacks the required field `%s`",
				 in->attrs[i].name);
			x->problem = xstrdup(x, msg, strlen(msg));
			return x->oom ? -ENOMEM : 0;
		}
	const size_t *cand = p->by_action[req->action];
	size_t n = p->n_by_action[req->action];
	x->rules = arena_alloc(&x->ar, (n ? n : 1) * sizeof(*x->rules));
	if (!x->rules)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		size_t i = cand[k];
		const struct rule *r = &p->rules[i];
		struct bp_explain_rule *er = &x->rules[x->n_rules++];
		memset(er, 0, sizeof(*er));
		er->index = i;
		er->name = r->name;
		er->forbid = r->forbid;
		er->line = r->line;
		er->col = r->col;
		er->outcome = BP_EXPLAIN_MATCHED;
		x->rule = i;
		struct bp_explain_clause *cls =
			arena_alloc(&x->ar, (r->n_clauses ? r->n_clauses : 1) * sizeof(*cls));
		if (!cls)
			return -ENOMEM;
		er->clauses = cls;
		for (size_t c = 0; c < r->n_clauses; c++) {
			struct bp_explain_clause *out = &cls[er->n_clauses++];
			memset(out, 0, sizeof(*out));
			explain_clause(x, &r->clauses[c], (unsigned)c + 1, out);
			if (out->value == BP_EXPLAIN_FAILED) {
				er->outcome = BP_EXPLAIN_ERROR;
				break;
			}
			bool held = (out->value == BP_EXPLAIN_TRUE) != r->clauses[c].unless;
			if (!held) {
				er->outcome = BP_EXPLAIN_NOT_MATCHED;
				break;
			}
		}
		er->text = rule_sentence(x, r, er);
	}
	arena_reset(&x->scratch);
	return x->oom ? -ENOMEM : 0;
}

const char *
bp_explain_problem(const struct bp_explain *x)
{
	return x->problem;
}

size_t
bp_explain_rule_count(const struct bp_explain *x)
{
	return x->n_rules;
}

const struct bp_explain_rule *
bp_explain_rule_at(const struct bp_explain *x, size_t i)
{
	return i < x->n_rules ? &x->rules[i] : NULL;
}

const char *
bp_explain_outcome_str(enum bp_explain_outcome o)
{
	switch (o) {
	case BP_EXPLAIN_MATCHED: return "matched";
	case BP_EXPLAIN_NOT_MATCHED: return "not_matched";
	case BP_EXPLAIN_ERROR: return "error";
	default: return "error";
	}
}

const char *
bp_explain_value_str(enum bp_explain_value v)
{
	switch (v) {
	case BP_EXPLAIN_TRUE: return "true";
	case BP_EXPLAIN_FALSE: return "false";
	case BP_EXPLAIN_FAILED: return "error";
	default: return "error";
	}
}
