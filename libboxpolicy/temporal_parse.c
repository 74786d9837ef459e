/* SPDX-License-Identifier: Apache-2.0 */
/*
 * temporal_parse.c — parses the text of one `temporal { … }` term (captured
 * by the policy parser) into a syntax tree (temporal.h), following the
 * reference grammar (docs/box-policy.5.md); prints that tree and
 * whole rules canonically for bp_policy_rule_hash.
 *
 * Trusts: nothing; the term text is hostile. Nesting is capped at
 * TP_MAX_DEPTH, binders at TP_MAX_VARS; every position reported is relative to
 * the policy file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "temporal.h"

struct tparse {
	const struct bp_policy *p;
	struct arena *ar;
	struct bp_diags *d;
	const char *label; /* "rule 2" / "@id(\"x\")" */
	struct token *toks;
	size_t n, pos;
	uint32_t line0, col0; /* where the term text starts in the file */
	int depth;
	bool failed;
	struct tprog *prog;
	/* binders in scope, innermost last */
	int scope[TP_MAX_VARS * 2];
	size_t n_scope;
};

static const struct token *
peek(struct tparse *tp)
{
	return &tp->toks[tp->pos];
}

static const struct token *
peek_at(struct tparse *tp, size_t k)
{
	size_t i = tp->pos + k;
	return &tp->toks[i < tp->n ? i : tp->n - 1];
}

static const struct token *
next(struct tparse *tp)
{
	const struct token *t = &tp->toks[tp->pos];
	if (tp->pos + 1 < tp->n)
		tp->pos++;
	return t;
}

static uint32_t
fline(const struct tparse *tp, const struct token *t)
{
	return t->line + tp->line0 - 1;
}

static uint32_t
fcol(const struct tparse *tp, const struct token *t)
{
	return t->line == 1 ? t->col + tp->col0 - 1 : t->col;
}

static void __attribute__((format(printf, 3, 4)))
perr(struct tparse *tp, const struct token *t, const char *fmt, ...)
{
	if (tp->failed)
		return;
	tp->failed = true;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diag_add(tp->d, BP_ERROR, fline(tp, t), fcol(tp, t), "%s: temporal: %s", tp->label, msg);
}

static bool
is_kw(const struct token *t, const char *kw)
{
	return t->k == T_IDENT && strlen(kw) == t->len && memcmp(t->p, kw, t->len) == 0;
}

static void
describe(const struct token *t, char *buf, size_t size)
{
	if (t->k == T_EOF)
		snprintf(buf, size, "the end of the temporal condition");
	else
		snprintf(buf, size, "`%.*s`", (int)(t->len > 40 ? 40 : t->len), t->p);
}

static bool
expect(struct tparse *tp, enum tok_kind k, const char *what)
{
	if (peek(tp)->k == k) {
		next(tp);
		return true;
	}
	char got[64];
	describe(peek(tp), got, sizeof(got));
	perr(tp, peek(tp), "expected %s, found %s", what, got);
	return false;
}

static void *
talloc(struct tparse *tp, size_t n)
{
	void *p = arena_alloc(tp->ar, n);
	if (!p && !tp->failed) {
		tp->failed = true;
		diag_add(tp->d, BP_ERROR, tp->line0, tp->col0, "%s: temporal: out of memory",
			 tp->label);
	}
	return p;
}

static const char *
tok_str(struct tparse *tp, const struct token *t)
{
	char *s = arena_strndup(tp->ar, t->p, t->len);
	if (!s)
		talloc(tp, SIZE_MAX); /* reports */
	return s;
}

static struct tnode *
new_node(struct tparse *tp, enum tn_kind k, const struct token *at)
{
	struct tnode *n = talloc(tp, sizeof(*n));
	if (n) {
		n->kind = (uint8_t)k;
		n->line = fline(tp, at);
		n->col = fcol(tp, at);
		n->var = -1;
		n->action = SIZE_MAX;
	}
	return n;
}

static struct tterm *
new_term(struct tparse *tp, enum tt_kind k, const struct token *at)
{
	struct tterm *t = talloc(tp, sizeof(*t));
	if (t) {
		t->kind = (uint8_t)k;
		t->line = fline(tp, at);
		t->col = fcol(tp, at);
		t->var = -1;
	}
	return t;
}

/* ---- binders ---- */

static int
lookup_var(struct tparse *tp, const struct token *name)
{
	for (size_t i = tp->n_scope; i-- > 0;) {
		const struct tvar *v = &tp->prog->vars[tp->scope[i]];
		if (strlen(v->name) == name->len && memcmp(v->name, name->p, name->len) == 0)
			return tp->scope[i];
	}
	return -1;
}

/* Parse `x: Type` (the parentheses are the caller's) and declare x. */
static int
parse_binder(struct tparse *tp)
{
	const struct token *name = peek(tp);
	if (name->k != T_IDENT || is_kw(name, "_")) {
		char got[64];
		describe(name, got, sizeof(got));
		perr(tp, name, "expected a variable name, found %s", got);
		return -1;
	}
	next(tp);
	if (!expect(tp, T_COLON, "`:` and a type after the variable"))
		return -1;
	const struct token *ty = peek(tp);
	if (ty->k != T_IDENT) {
		perr(tp, ty, "expected a type (Long, String, Bool, Timepoint or an entity type)");
		return -1;
	}
	struct buf b = { 0 };
	buf_put(&b, ty->p, ty->len);
	next(tp);
	while (peek(tp)->k == T_COLONCOLON && peek_at(tp, 1)->k == T_IDENT) {
		next(tp);
		buf_puts(&b, "::");
		buf_put(&b, peek(tp)->p, peek(tp)->len);
		next(tp);
	}
	/* Set<T> and the like: keep the spelling, do not check it */
	if (peek(tp)->k == T_LT) {
		int depth = 0;
		do {
			const struct token *t = next(tp);
			if (t->k == T_LT)
				depth++;
			else if (t->k == T_GT)
				depth--;
			else if (t->k == T_EOF)
				break;
			buf_put(&b, t->p, t->len);
		} while (depth > 0);
	}
	if (b.oom) {
		buf_free(&b);
		talloc(tp, SIZE_MAX);
		return -1;
	}
	if (tp->prog->n_vars >= TP_MAX_VARS || tp->n_scope >= TP_MAX_VARS * 2) {
		buf_free(&b);
		perr(tp, name, "more than %d variables in one temporal condition", TP_MAX_VARS);
		return -1;
	}
	int slot = (int)tp->prog->n_vars++;
	struct tvar *v = &tp->prog->vars[slot];
	v->name = tok_str(tp, name);
	v->type_name = arena_strndup(tp->ar, b.p ? b.p : "", b.len);
	v->line = fline(tp, name);
	v->col = fcol(tp, name);
	buf_free(&b);
	if (!v->name || !v->type_name) {
		talloc(tp, SIZE_MAX);
		return -1;
	}
	const char *tn = v->type_name;
	if (strcmp(tn, "Long") == 0)
		v->type = TV_LONG;
	else if (strcmp(tn, "String") == 0)
		v->type = TV_STRING;
	else if (strcmp(tn, "Bool") == 0)
		v->type = TV_BOOL;
	else if (strcmp(tn, "Timepoint") == 0)
		v->type = TV_TIMEPOINT;
	else if (strstr(tn, "::") && !strchr(tn, '<')) {
		v->type = TV_ENTITY;
		v->etype = tn;
	} else {
		v->type = TV_OTHER;
	}
	return slot;
}

static void
push_scope(struct tparse *tp, int slot)
{
	tp->scope[tp->n_scope++] = slot;
}

/* ---- terms ---- */

static struct tnode *parse_condition(struct tparse *tp);
static struct tagg *parse_agg(struct tparse *tp);

static bool
unescape(struct tparse *tp, const struct token *t, const char **s, uint32_t *len)
{
	char *out;
	size_t n;
	const char *err = NULL;
	if (!unescape_string(t, tp->ar, &out, &n, &err)) {
		perr(tp, t, "%s", err ? err : "invalid string");
		return false;
	}
	if (n > UINT32_MAX) {
		perr(tp, t, "string too long");
		return false;
	}
	*s = out;
	*len = (uint32_t)n;
	return true;
}

/* An entity `A::B::"id"` starting at the current identifier; PRED_OUT set when `::kind` follows. */
static bool
parse_path_string(struct tparse *tp, const char **etype, const char **id, uint32_t *id_len)
{
	struct buf b = { 0 };
	buf_put(&b, peek(tp)->p, peek(tp)->len);
	next(tp);
	while (peek(tp)->k == T_COLONCOLON) {
		next(tp);
		const struct token *t = peek(tp);
		if (t->k == T_STRING) {
			next(tp);
			if (!unescape(tp, t, id, id_len)) {
				buf_free(&b);
				return false;
			}
			*etype = b.oom ? NULL : arena_strndup(tp->ar, b.p, b.len);
			buf_free(&b);
			if (!*etype)
				talloc(tp, SIZE_MAX);
			return *etype != NULL;
		}
		if (t->k != T_IDENT) {
			buf_free(&b);
			expect(tp, T_IDENT, "a name or a string after `::`");
			return false;
		}
		buf_puts(&b, "::");
		buf_put(&b, t->p, t->len);
		next(tp);
	}
	buf_free(&b);
	char got[64];
	describe(peek(tp), got, sizeof(got));
	perr(tp, peek(tp), "expected `::\"id\"` to end an entity, found %s", got);
	return false;
}

static bool
parse_dotted(struct tparse *tp, size_t *n, const char ***path)
{
	const char *tmp[32];
	size_t k = 0;
	while (peek(tp)->k == T_DOT) {
		next(tp);
		const struct token *t = peek(tp);
		if (t->k != T_IDENT) {
			expect(tp, T_IDENT, "a field name after `.`");
			return false;
		}
		if (k == 32) {
			perr(tp, t, "field path too long");
			return false;
		}
		tmp[k++] = tok_str(tp, t);
		next(tp);
	}
	*path = talloc(tp, (k ? k : 1) * sizeof(**path));
	if (!*path)
		return false;
	memcpy(*path, tmp, k * sizeof(*tmp));
	*n = k;
	return !tp->failed;
}

static struct tterm *
parse_term(struct tparse *tp)
{
	const struct token *t = peek(tp);
	struct tterm *r;
	if (++tp->depth > TP_MAX_DEPTH) {
		perr(tp, t, "temporal condition nested too deeply");
		return NULL;
	}
	if (t->k == T_LPAREN && (is_kw(peek_at(tp, 1), "count") || is_kw(peek_at(tp, 1), "sum"))) {
		next(tp);
		r = new_term(tp, TT_AGG, t);
		if (!r || !(r->agg = parse_agg(tp)) || !expect(tp, T_RPAREN, "`)` after the aggregate"))
			return NULL;
	} else if (is_kw(t, "count") || is_kw(t, "sum")) {
		r = new_term(tp, TT_AGG, t);
		if (!r || !(r->agg = parse_agg(tp)))
			return NULL;
	} else if (t->k == T_INT || (t->k == T_MINUS && peek_at(tp, 1)->k == T_INT)) {
		bool neg = t->k == T_MINUS;
		const struct token *num = neg ? peek_at(tp, 1) : t;
		r = new_term(tp, TT_LIT, t);
		if (!r)
			return NULL;
		if (num->ioverflow || num->ival > (uint64_t)INT64_MAX + (neg ? 1 : 0)) {
			perr(tp, num, "integer literal `%s%.*s` is out of range", neg ? "-" : "",
			     (int)(num->len > 30 ? 30 : num->len), num->p);
			return NULL;
		}
		r->v.t = V_LONG;
		r->v.u.l = neg ? (int64_t)(0 - num->ival) : (int64_t)num->ival;
		next(tp);
		if (neg)
			next(tp);
	} else if (t->k == T_STRING) {
		r = new_term(tp, TT_LIT, t);
		next(tp);
		if (!r || !unescape(tp, t, &r->v.u.s, &r->v.len))
			return NULL;
		r->v.t = V_STR;
	} else if (is_kw(t, "true") || is_kw(t, "false")) {
		r = new_term(tp, TT_LIT, t);
		next(tp);
		if (!r)
			return NULL;
		r->v.t = V_BOOL;
		r->v.u.b = is_kw(t, "true");
	} else if (t->k == T_STAR || is_kw(t, "_")) {
		r = new_term(tp, TT_WILD, t);
		next(tp);
	} else if (t->k == T_LBRACKET) {
		next(tp);
		r = new_term(tp, TT_SET, t);
		if (!r)
			return NULL;
		struct tterm *tmp[256];
		size_t k = 0;
		while (peek(tp)->k != T_RBRACKET) {
			if (k == 256) {
				perr(tp, peek(tp), "set literal too long");
				return NULL;
			}
			if (!(tmp[k++] = parse_term(tp)))
				return NULL;
			if (peek(tp)->k != T_COMMA)
				break;
			next(tp);
		}
		if (!expect(tp, T_RBRACKET, "`,` or `]`"))
			return NULL;
		r->items = talloc(tp, (k ? k : 1) * sizeof(*r->items));
		if (!r->items)
			return NULL;
		memcpy(r->items, tmp, k * sizeof(*tmp));
		r->n = k;
	} else if (is_kw(t, "decimal") && peek_at(tp, 1)->k == T_LPAREN) {
		next(tp);
		next(tp);
		const struct token *s = peek(tp);
		r = new_term(tp, TT_LIT, t);
		if (!r || !expect(tp, T_STRING, "a string in `decimal(…)`"))
			return NULL;
		const char *txt;
		uint32_t len;
		if (!unescape(tp, s, &txt, &len))
			return NULL;
		r->v.t = V_DEC;
		if (!parse_decimal(txt, len, &r->v.u.l)) {
			perr(tp, s, "`decimal(\"%.*s\")` is not a valid decimal", (int)(len > 40 ? 40 : len),
			     txt);
			return NULL;
		}
		if (!expect(tp, T_RPAREN, "`)`"))
			return NULL;
	} else if (is_kw(t, "context")) {
		next(tp);
		r = new_term(tp, TT_CONTEXT, t);
		if (!r || !parse_dotted(tp, &r->n_path, &r->path))
			return NULL;
		if (r->n_path == 0) {
			perr(tp, t, "expected a field after `context`, e.g. `context.input.path`");
			return NULL;
		}
	} else if ((is_kw(t, "principal") || is_kw(t, "resource")) &&
		   peek_at(tp, 1)->k != T_COLONCOLON) {
		next(tp);
		r = new_term(tp, is_kw(t, "principal") ? TT_PRINCIPAL : TT_RESOURCE, t);
		if (!r || !parse_dotted(tp, &r->n_path, &r->path))
			return NULL;
	} else if (t->k == T_IDENT && peek_at(tp, 1)->k == T_COLONCOLON) {
		r = new_term(tp, TT_LIT, t);
		if (!r || !parse_path_string(tp, &r->v.u.e.etype, &r->v.u.e.id, &r->v.len))
			return NULL;
		r->v.t = V_ENT;
		if (peek(tp)->k == T_COLONCOLON) {
			perr(tp, peek(tp), "an event predicate is not a value; compare fields instead");
			return NULL;
		}
	} else if (t->k == T_IDENT) {
		if (peek_at(tp, 1)->k == T_LPAREN) {
			perr(tp, t, "`%.*s(…)`: macros and information providers are not supported",
			     (int)(t->len > 40 ? 40 : t->len), t->p);
			return NULL;
		}
		r = new_term(tp, TT_VAR, t);
		next(tp);
		if (!r)
			return NULL;
		r->name = tok_str(tp, t);
		r->var = lookup_var(tp, t);
	} else {
		char got[64];
		describe(t, got, sizeof(got));
		perr(tp, t, "expected a value, a variable, `_` or an aggregate, found %s", got);
		return NULL;
	}
	tp->depth--;
	return tp->failed ? NULL : r;
}

/* count for (x: T), … . where φ  |  sum v for (…). where φ */
static struct tagg *
parse_agg(struct tparse *tp)
{
	const struct token *kw = next(tp);
	struct tagg *a = talloc(tp, sizeof(*a));
	if (!a)
		return NULL;
	a->line = fline(tp, kw);
	a->col = fcol(tp, kw);
	a->sum_var = -1;
	const struct token *sumv = NULL;
	if (is_kw(kw, "sum")) {
		a->sum = true;
		sumv = peek(tp);
		if (sumv->k != T_IDENT || is_kw(sumv, "for")) {
			expect(tp, T_IDENT, "the summed variable after `sum`");
			return NULL;
		}
		a->sum_name = tok_str(tp, sumv);
		next(tp);
	}
	if (!is_kw(peek(tp), "for")) {
		expect(tp, T_EOF, "`for` and the grouping variables");
		return NULL;
	}
	next(tp);
	size_t scope_mark = tp->n_scope;
	int tmp[TP_MAX_VARS];
	size_t k = 0;
	for (;;) {
		if (!expect(tp, T_LPAREN, "`(` to open a variable declaration"))
			return NULL;
		int slot = parse_binder(tp);
		if (slot < 0 || !expect(tp, T_RPAREN, "`)` after the type"))
			return NULL;
		tmp[k++] = slot;
		if (peek(tp)->k != T_COMMA)
			break;
		next(tp);
		if (k == TP_MAX_VARS) {
			perr(tp, peek(tp), "too many grouping variables");
			return NULL;
		}
	}
	for (size_t i = 0; i < k; i++)
		push_scope(tp, tmp[i]);
	if (!expect(tp, T_DOT, "`.` before `where`"))
		return NULL;
	if (!is_kw(peek(tp), "where")) {
		expect(tp, T_EOF, "`where` and the condition");
		return NULL;
	}
	next(tp);
	a->for_vars = talloc(tp, k * sizeof(*a->for_vars));
	if (!a->for_vars)
		return NULL;
	memcpy(a->for_vars, tmp, k * sizeof(*tmp));
	a->n_for = k;
	if (sumv) {
		for (size_t i = 0; i < k; i++)
			if (strcmp(tp->prog->vars[tmp[i]].name, a->sum_name) == 0)
				a->sum_var = tmp[i];
	}
	a->body = parse_condition(tp);
	tp->n_scope = scope_mark;
	return a->body ? a : NULL;
}

/* ---- conditions ---- */

static bool
parse_window(struct tparse *tp, struct tnode *n)
{
	const struct token *w = peek(tp);
	if (!is_kw(w, "within")) {
		perr(tp, w, "expected `within` and a window (e.g. `within 60s`)");
		return false;
	}
	next(tp);
	const struct token *num = peek(tp);
	const struct token *unit = peek_at(tp, 1);
	if (num->k != T_INT || unit->k != T_IDENT || unit->len != 1 ||
	    !strchr("smhd", unit->p[0])) {
		perr(tp, num, "expected a window such as `60s`, `5m`, `1h` or `1d` after `within`");
		return false;
	}
	uint64_t mul = unit->p[0] == 's' ? 1 : unit->p[0] == 'm' ? 60 : unit->p[0] == 'h' ? 3600 : 86400;
	char text[48];
	snprintf(text, sizeof(text), "%.*s%c", (int)(num->len > 30 ? 30 : num->len), num->p,
		 unit->p[0]);
	if (num->ioverflow || num->ival > 86400 / mul || num->ival * mul > 86400) {
		perr(tp, num,
		     "temporal window `%s` exceeds the maximum allowed window `24h`; shorten this "
		     "window to at most `24h`",
		     text);
		return false;
	}
	n->window = (int64_t)(num->ival * mul) * TP_NS_PER_SEC;
	n->wtext = arena_strndup(tp->ar, text, strlen(text));
	next(tp);
	next(tp);
	return n->wtext != NULL;
}

static const char *
kind_ok(const struct token *t)
{
	if (is_kw(t, "request") || is_kw(t, "response") || is_kw(t, "error"))
		return "";
	return NULL;
}

/* A predicate starting at an identifier path: `NS::Action::"id"::kind{…}{…}`. */
static struct tnode *
parse_predicate(struct tparse *tp)
{
	const struct token *start = peek(tp);
	struct tnode *n = new_node(tp, TN_PRED, start);
	if (!n)
		return NULL;
	uint32_t idlen;
	if (!parse_path_string(tp, &n->etype, &n->aid, &idlen))
		return NULL;
	if (!expect(tp, T_COLONCOLON, "`::request`, `::response` or `::error` after the action"))
		return NULL;
	const struct token *kind = peek(tp);
	if (kind->k != T_IDENT) {
		expect(tp, T_IDENT, "an event kind (request, response or error)");
		return NULL;
	}
	n->kind_name = tok_str(tp, kind);
	next(tp);
	n->op = is_kw(kind, "response") ? BP_EVENT_RESPONSE
		: is_kw(kind, "error")  ? BP_EVENT_ERROR
					: BP_EVENT_REQUEST;
	if (!kind_ok(kind))
		n->op = 0xff; /* the checker reports it with the schema message */
	const char *sep = strstr(n->etype, "::Action");
	if (sep && sep[8] == 0)
		n->ns = arena_strndup(tp->ar, n->etype, (size_t)(sep - n->etype));
	else
		n->ns = n->etype;
	if (peek(tp)->k != T_LBRACE) {
		expect(tp, T_LBRACE, "`{` and the event fields after the predicate");
		return NULL;
	}
	struct targ tmp[64];
	size_t k = 0;
	while (peek(tp)->k == T_LBRACE) {
		next(tp);
		while (peek(tp)->k != T_RBRACE) {
			const struct token *f = peek(tp);
			if (f->k != T_IDENT) {
				expect(tp, T_IDENT, "a field path such as `input.path`");
				return NULL;
			}
			if (k == 64) {
				perr(tp, f, "too many fields in one predicate");
				return NULL;
			}
			struct targ *a = &tmp[k++];
			memset(a, 0, sizeof(*a));
			a->line = fline(tp, f);
			a->col = fcol(tp, f);
			const char *first = tok_str(tp, f);
			next(tp);
			size_t nrest;
			const char **rest;
			if (!first || !parse_dotted(tp, &nrest, &rest))
				return NULL;
			a->path = talloc(tp, (nrest + 1) * sizeof(*a->path));
			if (!a->path)
				return NULL;
			a->path[0] = first;
			memcpy(a->path + 1, rest, nrest * sizeof(*rest));
			a->n_path = nrest + 1;
			if (!expect(tp, T_COLON, "`:` after the field path"))
				return NULL;
			if (!(a->t = parse_term(tp)))
				return NULL;
			if (peek(tp)->k != T_COMMA)
				break;
			next(tp);
		}
		if (!expect(tp, T_RBRACE, "`,` or `}` after a predicate field"))
			return NULL;
	}
	n->args = talloc(tp, (k ? k : 1) * sizeof(*n->args));
	if (!n->args)
		return NULL;
	memcpy(n->args, tmp, k * sizeof(*tmp));
	n->n_args = k;
	return n;
}

static bool
cmp_op(const struct token *t, uint8_t *op)
{
	switch (t->k) {
	case T_EQ: *op = TC_EQ; return true;
	case T_NE: *op = TC_NE; return true;
	case T_LT: *op = TC_LT; return true;
	case T_LE: *op = TC_LE; return true;
	case T_GT: *op = TC_GT; return true;
	case T_GE: *op = TC_GE; return true;
	default: return false;
	}
}

static struct tnode *
parse_comparison(struct tparse *tp)
{
	const struct token *start = peek(tp);
	struct tnode *n = new_node(tp, TN_CMP, start);
	if (!n || !(n->l = parse_term(tp)))
		return NULL;
	const struct token *op = peek(tp);
	if (!cmp_op(op, &n->op)) {
		char got[64];
		describe(op, got, sizeof(got));
		perr(tp, op,
		     "expected a comparison operator (`==`, `!=`, `<`, `<=`, `>`, `>=`), found %s",
		     got);
		return NULL;
	}
	n->line = fline(tp, op);
	n->col = fcol(tp, op);
	next(tp);
	if (!(n->r = parse_term(tp)))
		return NULL;
	return n;
}

static bool
starts_predicate(struct tparse *tp)
{
	/* IDENT {:: IDENT} :: STRING :: */
	size_t k = 0;
	if (peek_at(tp, k)->k != T_IDENT)
		return false;
	k++;
	while (peek_at(tp, k)->k == T_COLONCOLON && peek_at(tp, k + 1)->k == T_IDENT)
		k += 2;
	return peek_at(tp, k)->k == T_COLONCOLON && peek_at(tp, k + 1)->k == T_STRING &&
	       peek_at(tp, k + 2)->k == T_COLONCOLON;
}

static struct tnode *parse_atom(struct tparse *tp);

static struct tnode *
parse_tp(struct tparse *tp)
{
	const struct token *t = next(tp);
	struct tnode *n = new_node(tp, TN_TP, t);
	if (!n || !expect(tp, T_LPAREN, "`(` after `tp`"))
		return NULL;
	const struct token *v = peek(tp);
	if (v->k != T_IDENT || is_kw(v, "_")) {
		expect(tp, T_IDENT, "a variable in `tp(…)`");
		return NULL;
	}
	n->var = lookup_var(tp, v);
	if (n->var < 0) {
		perr(tp, v,
		     "variable `%.*s` is free in this temporal condition; bind it with `exists (%.*s: "
		     "Timepoint).` or a `for` list",
		     (int)(v->len > 40 ? 40 : v->len), v->p, (int)(v->len > 40 ? 40 : v->len), v->p);
		return NULL;
	}
	next(tp);
	if (!expect(tp, T_RPAREN, "`)` after the variable"))
		return NULL;
	return n;
}

/* atom ::= "(" condition ")" | tp(x) | predicate | comparison */
static struct tnode *
parse_atom(struct tparse *tp)
{
	const struct token *t = peek(tp);
	if (++tp->depth > TP_MAX_DEPTH) {
		perr(tp, t, "temporal condition nested too deeply");
		return NULL;
	}
	struct tnode *n;
	if (t->k == T_LPAREN && !is_kw(peek_at(tp, 1), "count") && !is_kw(peek_at(tp, 1), "sum")) {
		next(tp);
		n = parse_condition(tp);
		if (!n || !expect(tp, T_RPAREN, "`)` to close the parenthesized condition"))
			return NULL;
	} else if (is_kw(t, "tp") && peek_at(tp, 1)->k == T_LPAREN) {
		n = parse_tp(tp);
	} else if (starts_predicate(tp)) {
		n = parse_predicate(tp);
	} else if (is_kw(t, "formerly") || is_kw(t, "previous") || is_kw(t, "exists") ||
		   t->k == T_NOT) {
		perr(tp, t, "`%.*s` here needs parentheses around it", (int)t->len, t->p);
		return NULL;
	} else {
		n = parse_comparison(tp);
	}
	tp->depth--;
	return n;
}

/* conjunct (without the leading `!`s and the `since` suffix) */
static struct tnode *
parse_conjunct(struct tparse *tp)
{
	const struct token *t = peek(tp);
	if (is_kw(t, "formerly") || is_kw(t, "previous")) {
		next(tp);
		struct tnode *n = new_node(tp, is_kw(t, "formerly") ? TN_FORMERLY : TN_PREVIOUS, t);
		if (!n || !parse_window(tp, n) || !(n->a = parse_atom(tp)))
			return NULL;
		return n;
	}
	if (is_kw(t, "exists") && peek_at(tp, 1)->k == T_LPAREN) {
		next(tp);
		next(tp);
		struct tnode *n = new_node(tp, TN_EXISTS, t);
		if (!n)
			return NULL;
		size_t mark = tp->n_scope;
		int slot = parse_binder(tp);
		if (slot < 0 || !expect(tp, T_RPAREN, "`)` after the type") ||
		    !expect(tp, T_DOT, "`.` after `exists (x: T)`"))
			return NULL;
		n->var = slot;
		push_scope(tp, slot);
		n->a = parse_condition(tp);
		tp->n_scope = mark;
		return n->a ? n : NULL;
	}
	return parse_atom(tp);
}

/* { "!" } conjunct */
static struct tnode *
parse_negated(struct tparse *tp)
{
	const struct token *t = peek(tp);
	if (t->k != T_NOT)
		return parse_conjunct(tp);
	next(tp);
	if (++tp->depth > TP_MAX_DEPTH) {
		perr(tp, t, "temporal condition nested too deeply");
		return NULL;
	}
	struct tnode *n = new_node(tp, TN_NOT, t);
	if (!n || !(n->a = parse_negated(tp)))
		return NULL;
	tp->depth--;
	return n;
}

/* conjunct_or_since ::= { "!" } conjunct [ "since" within atom ] */
static struct tnode *
parse_cos(struct tparse *tp)
{
	struct tnode *n = parse_negated(tp);
	if (!n || !is_kw(peek(tp), "since"))
		return n;
	struct tnode *s = new_node(tp, TN_SINCE, peek(tp));
	next(tp);
	if (!s || !parse_window(tp, s))
		return NULL;
	s->a = n;
	if (!(s->b = parse_atom(tp)))
		return NULL;
	return s;
}

/* condition ::= conjunct_or_since { "&&" conjunct_or_since } */
static struct tnode *
parse_condition(struct tparse *tp)
{
	const struct token *t = peek(tp);
	if (++tp->depth > TP_MAX_DEPTH) {
		perr(tp, t, "temporal condition nested too deeply");
		return NULL;
	}
	struct tnode *tmp[256];
	size_t k = 0;
	for (;;) {
		if (!(tmp[k++] = parse_cos(tp)))
			return NULL;
		if (peek(tp)->k == T_OR) {
			perr(tp, peek(tp),
			     "`||` is not a temporal connective; write one rule per alternative");
			return NULL;
		}
		if (peek(tp)->k != T_AND)
			break;
		next(tp);
		if (k == 256) {
			perr(tp, peek(tp), "too many conjuncts");
			return NULL;
		}
	}
	tp->depth--;
	if (k == 1)
		return tmp[0];
	struct tnode *n = new_node(tp, TN_AND, t);
	if (!n || !(n->items = talloc(tp, k * sizeof(*n->items))))
		return NULL;
	memcpy(n->items, tmp, k * sizeof(*tmp));
	n->n = k;
	return n;
}

int
tprog_parse(const struct bp_policy *p, size_t rule, size_t term, struct arena *ar,
	    struct tprog *ret, struct bp_diags *d)
{
	const char *text;
	size_t len;
	unsigned line, col;
	int r = bp_policy_temporal_source(p, rule, term, &text, &len, &line, &col);
	if (r < 0)
		return r;
	char label[160];
	rule_label(&p->rules[rule], rule, label, sizeof(label));
	memset(ret, 0, sizeof(*ret));
	struct lexer_result lr;
	r = lex(text, len, &lr);
	if (r < 0)
		return r;
	struct tparse tp = {
		.p = p, .ar = ar, .d = d, .label = label, .toks = lr.toks, .n = lr.n,
		.line0 = line ? line : 1, .col0 = col ? col : 1, .prog = ret,
	};
	if (lr.err) {
		diag_add(d, BP_ERROR, lr.err_line + tp.line0 - 1,
			 lr.err_line == 1 ? lr.err_col + tp.col0 - 1 : lr.err_col, "%s: temporal: %s",
			 label, lr.err_msg ? lr.err_msg : "invalid token");
		free(lr.toks);
		return -EINVAL;
	}
	if (lr.n == 0 || lr.toks[0].k == T_EOF) {
		diag_add(d, BP_ERROR, tp.line0, tp.col0, "%s: temporal: the condition is empty",
			 label);
		free(lr.toks);
		return -EINVAL;
	}
	ret->root = parse_condition(&tp);
	if (ret->root && peek(&tp)->k != T_EOF) {
		char got[64];
		describe(peek(&tp), got, sizeof(got));
		perr(&tp, peek(&tp), "expected `&&` or the end of the temporal condition, found %s",
		     got);
	}
	free(lr.toks);
	if (tp.failed || !ret->root)
		return -EINVAL;
	return 0;
}

/* ---- canonical printing ---- */

static void
print_str(struct buf *b, const char *s, size_t n)
{
	buf_putc(b, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			buf_printf(b, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			buf_printf(b, "\\x%02x", c);
		else
			buf_putc(b, (char)c);
	}
	buf_putc(b, '"');
}

static void
print_val(struct buf *b, const struct val *v, int depth)
{
	if (depth > 64) {
		buf_puts(b, "…");
		return;
	}
	switch (v->t) {
	case V_BOOL: buf_puts(b, v->u.b ? "true" : "false"); break;
	case V_LONG: buf_printf(b, "%" PRId64, v->u.l); break;
	case V_STR: print_str(b, v->u.s, v->len); break;
	case V_ENT:
		buf_puts(b, v->u.e.etype);
		buf_puts(b, "::");
		print_str(b, v->u.e.id, v->len);
		break;
	case V_DEC: buf_printf(b, "decimal(%" PRId64 "e-4)", v->u.l); break;
	case V_DATETIME: buf_printf(b, "datetime(%" PRId64 "ms)", v->u.l); break;
	case V_DURATION: buf_printf(b, "duration(%" PRId64 "ms)", v->u.l); break;
	case V_IP:
		buf_puts(b, "ip(");
		for (int i = 0; i < 16; i++)
			buf_printf(b, "%02x", v->u.ip[i]);
		buf_printf(b, "/%u%s)", v->ip_prefix, v->ip_v6 ? ",6" : ",4");
		break;
	case V_SET:
		buf_putc(b, '[');
		for (uint32_t i = 0; i < v->len; i++) {
			if (i)
				buf_putc(b, ',');
			print_val(b, &v->u.items[i], depth + 1);
		}
		buf_putc(b, ']');
		break;
	case V_REC:
		buf_putc(b, '{');
		for (uint32_t i = 0; i < v->len; i++) {
			if (i)
				buf_putc(b, ',');
			print_str(b, v->u.rec[i].name, strlen(v->u.rec[i].name));
			buf_putc(b, ':');
			print_val(b, &v->u.rec[i].v, depth + 1);
		}
		buf_putc(b, '}');
		break;
	default: buf_puts(b, "?"); break;
	}
}

static void print_node(const struct tprog *t, const struct tnode *n, struct buf *b);

static void
print_var(const struct tprog *t, int var, const char *name, struct buf *b)
{
	/* binders print by position, so renaming a variable is an edit only of spelling */
	(void)t;
	if (var < 0)
		buf_printf(b, "free:%s", name ? name : "?");
	else
		buf_printf(b, "v%d", var);
}

static void
print_term(const struct tprog *t, const struct tterm *x, struct buf *b)
{
	switch (x->kind) {
	case TT_LIT: print_val(b, &x->v, 0); break;
	case TT_VAR: print_var(t, x->var, x->name, b); break;
	case TT_WILD: buf_putc(b, '_'); break;
	case TT_CONTEXT:
	case TT_PRINCIPAL:
	case TT_RESOURCE:
		buf_puts(b, x->kind == TT_CONTEXT ? "context" : x->kind == TT_PRINCIPAL ? "principal"
										 : "resource");
		for (size_t i = 0; i < x->n_path; i++)
			buf_printf(b, ".%s", x->path[i]);
		break;
	case TT_SET:
		buf_putc(b, '[');
		for (size_t i = 0; i < x->n; i++) {
			if (i)
				buf_putc(b, ',');
			print_term(t, x->items[i], b);
		}
		buf_putc(b, ']');
		break;
	case TT_AGG: {
		const struct tagg *a = x->agg;
		buf_puts(b, a->sum ? "(sum " : "(count");
		if (a->sum)
			print_var(t, a->sum_var, a->sum_name, b);
		buf_puts(b, " for");
		for (size_t i = 0; i < a->n_for; i++)
			buf_printf(b, " (v%d:%s)", a->for_vars[i], t->vars[a->for_vars[i]].type_name);
		buf_puts(b, " where ");
		print_node(t, a->body, b);
		buf_putc(b, ')');
		break;
	}
	default: buf_puts(b, "?"); break;
	}
}

static const char *const cmp_names[] = { "==", "!=", "<", "<=", ">", ">=" };

static void
print_node(const struct tprog *t, const struct tnode *n, struct buf *b)
{
	switch (n->kind) {
	case TN_AND:
		buf_putc(b, '(');
		for (size_t i = 0; i < n->n; i++) {
			if (i)
				buf_puts(b, " && ");
			print_node(t, n->items[i], b);
		}
		buf_putc(b, ')');
		break;
	case TN_NOT:
		buf_putc(b, '!');
		print_node(t, n->a, b);
		break;
	case TN_SINCE:
		buf_putc(b, '(');
		print_node(t, n->a, b);
		buf_printf(b, " since within %" PRId64 "ns ", n->window);
		print_node(t, n->b, b);
		buf_putc(b, ')');
		break;
	case TN_FORMERLY:
	case TN_PREVIOUS:
		buf_printf(b, "(%s within %" PRId64 "ns ",
			   n->kind == TN_FORMERLY ? "formerly" : "previous", n->window);
		print_node(t, n->a, b);
		buf_putc(b, ')');
		break;
	case TN_EXISTS:
		buf_printf(b, "(exists (v%d:%s). ", n->var, t->vars[n->var].type_name);
		print_node(t, n->a, b);
		buf_putc(b, ')');
		break;
	case TN_TP: buf_printf(b, "tp(v%d)", n->var); break;
	case TN_PRED:
		buf_printf(b, "%s::", n->etype);
		print_str(b, n->aid, strlen(n->aid));
		buf_printf(b, "::%s{", n->kind_name);
		for (size_t i = 0; i < n->n_args; i++) {
			if (i)
				buf_putc(b, ',');
			for (size_t k = 0; k < n->args[i].n_path; k++)
				buf_printf(b, "%s%s", k ? "." : "", n->args[i].path[k]);
			buf_putc(b, ':');
			print_term(t, n->args[i].t, b);
		}
		buf_putc(b, '}');
		break;
	case TN_CMP:
		buf_putc(b, '(');
		print_term(t, n->l, b);
		buf_printf(b, " %s ", n->op < 6 ? cmp_names[n->op] : "?");
		print_term(t, n->r, b);
		buf_putc(b, ')');
		break;
	default: buf_puts(b, "?"); break;
	}
}

void
tprog_print(const struct tprog *t, struct buf *b)
{
	if (t->root)
		print_node(t, t->root, b);
}

/* ---- whole rules ---- */

static const char *const ex_names[] = {
	[EX_LIT] = "lit",     [EX_VAR] = "var",     [EX_SLOT] = "slot",   [EX_ATTR] = "attr",
	[EX_HAS] = "has",     [EX_LIKE] = "like",   [EX_IS] = "is",       [EX_NOT] = "not",
	[EX_NEG] = "neg",     [EX_AND] = "and",     [EX_OR] = "or",       [EX_IF] = "if",
	[EX_EQ] = "eq",       [EX_NE] = "ne",       [EX_LT] = "lt",       [EX_LE] = "le",
	[EX_GT] = "gt",       [EX_GE] = "ge",       [EX_IN] = "in",       [EX_ADD] = "add",
	[EX_SUB] = "sub",     [EX_MUL] = "mul",     [EX_SET] = "set",     [EX_RECORD] = "record",
	[EX_CALL] = "call",   [EX_METHOD] = "method", [EX_TEMPORAL] = "temporal",
	[EX_INPUT] = "input",
};

struct rprint {
	const struct bp_policy *p;
	size_t rule;
	struct buf *b;
	struct arena *ar;
	int depth;
};

static void
print_expr(struct rprint *rp, const struct expr *e)
{
	struct buf *b = rp->b;
	if (!e) {
		buf_putc(b, '-');
		return;
	}
	if (++rp->depth > BP_MAX_DEPTH * 2) {
		buf_puts(b, "…");
		rp->depth--;
		return;
	}
	const char *k = e->kind < sizeof(ex_names) / sizeof(ex_names[0]) ? ex_names[e->kind] : NULL;
	if (k)
		buf_printf(b, "(%s", k);
	else
		buf_printf(b, "(k%u", e->kind);
	switch (e->kind) {
	case EX_LIT:
		buf_putc(b, ' ');
		print_val(b, &e->v, 0);
		break;
	case EX_VAR:
	case EX_SLOT: buf_printf(b, " %u", e->var); break;
	case EX_CALL:
	case EX_METHOD: buf_printf(b, " f%u", e->fn); break;
	case EX_LIKE:
		buf_putc(b, ' ');
		if (e->pat)
			for (size_t i = 0; i < e->pat->n_runs; i++) {
				if (i)
					buf_puts(b, "*");
				for (uint32_t j = 0; j < e->pat->lens[i]; j++) {
					char c = e->pat->runs[i][j];
					if (c == '*' || c == '\\')
						buf_putc(b, '\\');
					buf_putc(b, c);
				}
			}
		break;
	case EX_TEMPORAL: {
		struct tprog t;
		buf_putc(b, ' ');
		if (tprog_parse(rp->p, rp->rule, e->temporal, rp->ar, &t, NULL) == 0)
			tprog_print(&t, b);
		else {
			/* not parseable (a refused policy): hash the raw text */
			const char *text;
			size_t len;
			if (bp_policy_temporal_source(rp->p, rp->rule, e->temporal, &text, &len, NULL,
						      NULL) == 0)
				print_str(b, text, len);
		}
		break;
	}
	default: break;
	}
	if (e->name)
		buf_printf(b, " .%s", e->name);
	if (e->a || e->b || e->c) {
		buf_putc(b, ' ');
		print_expr(rp, e->a);
		if (e->b || e->c) {
			buf_putc(b, ' ');
			print_expr(rp, e->b);
		}
		if (e->c) {
			buf_putc(b, ' ');
			print_expr(rp, e->c);
		}
	}
	if (e->items && e->kind != EX_TEMPORAL)
		for (size_t i = 0; i < e->n; i++) {
			buf_putc(b, ' ');
			if (e->keys && e->keys[i]) {
				print_str(b, e->keys[i], strlen(e->keys[i]));
				buf_putc(b, ':');
			}
			print_expr(rp, e->items[i]);
		}
	buf_putc(b, ')');
	rp->depth--;
}

static void
print_entity(struct buf *b, const struct entity_ref *e)
{
	buf_printf(b, "%s::", e->etype ? e->etype : "?");
	print_str(b, e->id ? e->id : "", e->id ? strlen(e->id) : 0);
}

static void
print_scope(struct buf *b, const char *name, const struct scope *s)
{
	static const char *const kinds[] = { "any", "==", "in", "in[]", "is", "is-in" };
	buf_printf(b, "(%s %s", name, s->kind < 6 ? kinds[s->kind] : "?");
	if (s->slot)
		buf_puts(b, " ?slot");
	if (s->is_type)
		buf_printf(b, " %s", s->is_type);
	if (s->kind == SC_EQ || s->kind == SC_IN || s->kind == SC_IS_IN) {
		buf_putc(b, ' ');
		print_entity(b, &s->e);
	}
	if (s->kind == SC_IN_SET)
		for (size_t i = 0; i < s->n; i++) {
			buf_putc(b, ' ');
			print_entity(b, &s->set[i]);
		}
	buf_putc(b, ')');
}

static int
rule_print(const struct bp_policy *p, size_t i, struct buf *b)
{
	const struct rule *r = &p->rules[i];
	struct arena ar = { .cap = 64u << 20 };
	struct rprint rp = { .p = p, .rule = i, .b = b, .ar = &ar };
	buf_puts(b, r->forbid ? "forbid " : "permit ");
	print_scope(b, "principal", &r->principal);
	print_scope(b, "action", &r->action);
	print_scope(b, "resource", &r->resource);
	buf_puts(b, " when ");
	if (r->cond)
		print_expr(&rp, r->cond);
	else
		buf_puts(b, "true");
	arena_free(&ar);
	return b->oom ? -ENOMEM : 0;
}

int
bp_policy_rule_canonical(const struct bp_policy *p, size_t i, char **text)
{
	if (!p || i >= p->n_rules || !text)
		return -EINVAL;
	struct buf b = { 0 };
	int r = rule_print(p, i, &b);
	buf_putc(&b, 0);
	if (r < 0 || b.oom) {
		buf_free(&b);
		return -ENOMEM;
	}
	*text = b.p;
	return 0;
}

uint64_t
bp_policy_rule_hash(const struct bp_policy *p, size_t i)
{
	char *text = NULL;
	if (bp_policy_rule_canonical(p, i, &text) < 0)
		return 0;
	/* FNV-1a, 64 bit: stable across builds and hosts */
	uint64_t h = 0xcbf29ce484222325ULL;
	for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
		h ^= *s;
		h *= 0x100000001b3ULL;
	}
	free(text);
	return h ? h : 1;
}

/*
 * The source text of a rule's temporal term. Here, beside its only internal
 * user (tprog_parse), rather than in policy.c: policy.c calls the temporal
 * checker, which calls this parser, and a call back into policy.c would close
 * a cycle.
 */
int
bp_policy_temporal_source(const struct bp_policy *p, size_t rule, size_t term, const char **text,
			  size_t *len, unsigned *line, unsigned *col)
{
	if (!p || rule >= p->n_rules || term >= p->rules[rule].n_temporal)
		return -ENOENT;
	const struct temporal_term *t = &p->rules[rule].temporal[term];
	*text = t->text;
	*len = t->len;
	if (line)
		*line = t->line;
	if (col)
		*col = t->col;
	return 0;
}
