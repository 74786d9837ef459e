/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parser.c — recursive-descent parser for the Cedar policy grammar (cedar
 * 4.x, with Dogwood's `temporal { … }` and `guardrails { … }`) into the AST of
 * internal.h. Errors carry line:column and what was expected; after an error
 * the parser skips to the next `;` and goes on, so every broken rule is named.
 *
 * Trusts: nothing; the token stream comes from arbitrary text. Nesting depth
 * is capped at BP_MAX_DEPTH.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const struct token *
peek(struct parse_ctx *pc)
{
	return &pc->toks[pc->pos];
}

static const struct token *
peek2(struct parse_ctx *pc)
{
	return pc->pos + 1 < pc->n_toks ? &pc->toks[pc->pos + 1] : &pc->toks[pc->n_toks - 1];
}

static const struct token *
next(struct parse_ctx *pc)
{
	const struct token *t = &pc->toks[pc->pos];
	if (t->k != T_EOF)
		pc->pos++;
	return t;
}

static bool
is_kw(const struct token *t, const char *kw)
{
	size_t n = strlen(kw);
	return t->k == T_IDENT && t->len == n && memcmp(t->p, kw, n) == 0;
}

static void
describe(const struct token *t, char *buf, size_t size)
{
	if (t->k == T_IDENT || t->k == T_INT || t->k == T_STRING || t->k == T_OTHER) {
		unsigned n = t->len > 40 ? 40 : t->len;
		snprintf(buf, size, "`%.*s%s`", (int)n, t->p, t->len > 40 ? "…" : "");
	} else {
		snprintf(buf, size, "%s", tok_kind_name(t->k));
	}
}

/* Report a syntax error at token T; the caller then unwinds with NULL/false. */
static void __attribute__((format(printf, 3, 4)))
err_at(struct parse_ctx *pc, const struct token *t, const char *fmt, ...)
{
	if (pc->failed)
		return;
	pc->failed = true;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diag_add(pc->diags, BP_ERROR, t->line, t->col, "%s", msg);
}

static void
err_expected(struct parse_ctx *pc, const char *what)
{
	const struct token *t = peek(pc);
	char found[80];
	describe(t, found, sizeof(found));
	if (pc->failed)
		return;
	pc->failed = true;
	if (t->k == T_EOF)
		diag_add(pc->diags, BP_ERROR, t->line, t->col, "unexpected end of input; expected %s",
			 what);
	else
		diag_add(pc->diags, BP_ERROR, t->line, t->col, "unexpected %s; expected %s", found,
			 what);
}

static bool
expect(struct parse_ctx *pc, enum tok_kind k, const char *what)
{
	if (peek(pc)->k == k) {
		next(pc);
		return true;
	}
	err_expected(pc, what);
	return false;
}

static void *
palloc(struct parse_ctx *pc, size_t n)
{
	void *p = arena_alloc(pc->ar, n);
	if (!p && !pc->failed) {
		pc->oom = true;
		pc->failed = true;
	}
	return p;
}

static struct expr *
new_expr(struct parse_ctx *pc, enum ex_kind k, const struct token *at)
{
	struct expr *e = palloc(pc, sizeof(*e));
	if (!e)
		return NULL;
	e->kind = (uint8_t)k;
	e->line = at->line;
	e->col = at->col;
	/* the span: the token, up to what was consumed before the node was made */
	e->off = (uint32_t)(at->p - pc->src);
	e->end = (uint32_t)(at->p + at->len - pc->src);
	if (pc->pos > 0) {
		const struct token *prev = &pc->toks[pc->pos - 1];
		uint32_t pend = (uint32_t)(prev->p + prev->len - pc->src);
		if (pend > e->end && prev->p >= at->p)
			e->end = pend;
	}
	return e;
}

/* E's span ends at the last consumed token (after a node's closing `)`, `]`, `}`). */
static void
end_here(struct parse_ctx *pc, struct expr *e)
{
	const struct token *prev = &pc->toks[pc->pos - 1];
	uint32_t pend = (uint32_t)(prev->p + prev->len - pc->src);
	if (e && pend > e->end)
		e->end = pend;
}

/* Widen every node's span to hold its operands' (binary nodes start at their left side). */
static void
fix_spans(struct expr *e, int depth)
{
	if (!e || depth > BP_MAX_DEPTH * 2)
		return;
	struct expr *kids[3] = { e->a, e->b, e->c };
	for (int i = 0; i < 3; i++)
		if (kids[i]) {
			fix_spans(kids[i], depth + 1);
			if (kids[i]->off < e->off)
				e->off = kids[i]->off;
			if (kids[i]->end > e->end)
				e->end = kids[i]->end;
		}
	if (e->kind != EX_TEMPORAL)
		for (size_t i = 0; i < e->n && e->items; i++) {
			fix_spans(e->items[i], depth + 1);
			if (e->items[i]->off < e->off)
				e->off = e->items[i]->off;
			if (e->items[i]->end > e->end)
				e->end = e->items[i]->end;
		}
}

static const char *
intern_tok(struct parse_ctx *pc, const struct token *t, uint32_t *atom)
{
	uint32_t a = atom_intern(pc->atoms, pc->ar, t->p, t->len);
	if (a == UINT32_MAX) {
		pc->oom = pc->failed = true;
		return NULL;
	}
	if (atom)
		*atom = a;
	return pc->atoms->names[a];
}

static const char *
intern_str(struct parse_ctx *pc, const char *s, size_t n, uint32_t *atom)
{
	uint32_t a = atom_intern(pc->atoms, pc->ar, s, n);
	if (a == UINT32_MAX) {
		pc->oom = pc->failed = true;
		return NULL;
	}
	if (atom)
		*atom = a;
	return pc->atoms->names[a];
}

static bool
string_value(struct parse_ctx *pc, const struct token *t, char **out, size_t *len)
{
	const char *err = NULL;
	if (!unescape_string(t, pc->ar, out, len, &err)) {
		err_at(pc, t, "%s", err);
		return false;
	}
	return true;
}

/*
 * A path `A::B::C` (identifiers joined by ::), stopping before `::` that is
 * followed by a string or `{`. Returns the interned joined path.
 */
static const char *
parse_path(struct parse_ctx *pc, size_t *n_parts)
{
	char buf[1024];
	size_t len = 0, parts = 0;
	for (;;) {
		const struct token *t = peek(pc);
		if (t->k != T_IDENT) {
			err_expected(pc, "an identifier");
			return NULL;
		}
		if (len + t->len + 2 >= sizeof(buf)) {
			err_at(pc, t, "a name path is too long");
			return NULL;
		}
		if (parts) {
			buf[len++] = ':';
			buf[len++] = ':';
		}
		memcpy(buf + len, t->p, t->len);
		len += t->len;
		parts++;
		next(pc);
		if (peek(pc)->k == T_COLONCOLON && peek2(pc)->k == T_IDENT) {
			next(pc);
			continue;
		}
		break;
	}
	*n_parts = parts;
	return intern_str(pc, buf, len, NULL);
}

/* ENTITY := PATH :: STRING */
static bool
parse_entity(struct parse_ctx *pc, struct entity_ref *e)
{
	const struct token *start = peek(pc);
	size_t parts;
	e->line = start->line;
	e->col = start->col;
	if (start->k != T_IDENT) {
		err_expected(pc, "an entity, e.g. `Box::Action::\"fs:read\"`");
		return false;
	}
	const char *type = parse_path(pc, &parts);
	if (!type)
		return false;
	if (peek(pc)->k != T_COLONCOLON || peek2(pc)->k != T_STRING) {
		if (peek(pc)->k == T_COLONCOLON && peek2(pc)->k == T_LBRACE) {
			err_at(pc, peek2(pc),
			       "entity initializer syntax `Type::{ … }` is not supported");
			return false;
		}
		err_expected(pc, "`::` and a quoted entity id, e.g. `Box::Action::\"fs:read\"`");
		return false;
	}
	next(pc);
	const struct token *s = next(pc);
	char *id;
	size_t idlen;
	if (!string_value(pc, s, &id, &idlen))
		return false;
	e->etype = type;
	e->id = intern_str(pc, id, idlen, NULL);
	return e->id != NULL;
}

static struct expr *parse_expr(struct parse_ctx *pc);

static const struct {
	const char *name;
	enum fn_kind fn;
	int arity; /* receiver excluded */
} methods[] = {
	{ "contains", M_CONTAINS, 1 },
	{ "containsAll", M_CONTAINS_ALL, 1 },
	{ "containsAny", M_CONTAINS_ANY, 1 },
	{ "isEmpty", M_IS_EMPTY, 0 },
	{ "isIpv4", M_IS_IPV4, 0 },
	{ "isIpv6", M_IS_IPV6, 0 },
	{ "isLoopback", M_IS_LOOPBACK, 0 },
	{ "isMulticast", M_IS_MULTICAST, 0 },
	{ "isInRange", M_IS_IN_RANGE, 1 },
	{ "lessThan", M_LESS_THAN, 1 },
	{ "lessThanOrEqual", M_LESS_THAN_OR_EQUAL, 1 },
	{ "greaterThan", M_GREATER_THAN, 1 },
	{ "greaterThanOrEqual", M_GREATER_THAN_OR_EQUAL, 1 },
	{ "offset", M_OFFSET, 1 },
	{ "durationSince", M_DURATION_SINCE, 1 },
	{ "toDate", M_TO_DATE, 0 },
	{ "toTime", M_TO_TIME, 0 },
	{ "toMilliseconds", M_TO_MILLISECONDS, 0 },
	{ "toSeconds", M_TO_SECONDS, 0 },
	{ "toMinutes", M_TO_MINUTES, 0 },
	{ "toHours", M_TO_HOURS, 0 },
	{ "toDays", M_TO_DAYS, 0 },
	{ "getTag", M_GET_TAG, 1 },
	{ "hasTag", M_HAS_TAG, 1 },
};

static const struct {
	const char *name;
	enum fn_kind fn;
} functions[] = {
	{ "ip", FN_IP },
	{ "decimal", FN_DECIMAL },
	{ "datetime", FN_DATETIME },
	{ "duration", FN_DURATION },
};

/* `(` [expr {, expr}] `)` — the `(` is the current token. */
static bool
parse_args(struct parse_ctx *pc, struct expr ***items, size_t *n)
{
	next(pc);
	struct expr *tmp[16];
	size_t k = 0;
	if (peek(pc)->k != T_RPAREN) {
		for (;;) {
			struct expr *e = parse_expr(pc);
			if (!e)
				return false;
			if (k == 16) {
				err_at(pc, peek(pc), "too many arguments");
				return false;
			}
			tmp[k++] = e;
			if (peek(pc)->k == T_COMMA) {
				next(pc);
				continue;
			}
			break;
		}
	}
	if (!expect(pc, T_RPAREN, "`,` or `)` to end the arguments"))
		return false;
	*items = palloc(pc, (k ? k : 1) * sizeof(**items));
	if (!*items)
		return false;
	memcpy(*items, tmp, k * sizeof(*tmp));
	*n = k;
	return true;
}

static bool
capture_temporal(struct parse_ctx *pc, struct rule *r, uint32_t *index)
{
	/* current token is `{` */
	const struct token *open = next(pc);
	int depth = 1;
	const struct token *t;
	for (;;) {
		t = peek(pc);
		if (t->k == T_EOF) {
			err_expected(pc, "`}` to close the temporal condition");
			return false;
		}
		if (t->k == T_LBRACE)
			depth++;
		else if (t->k == T_RBRACE && --depth == 0)
			break;
		/* the window test of docs/box-policy.5.md: at most 24h */
		if (is_kw(t, "within")) {
			const struct token *num = peek2(pc);
			if (num->k == T_INT && pc->pos + 2 < pc->n_toks) {
				const struct token *unit = &pc->toks[pc->pos + 2];
				uint64_t mul = 0;
				if (is_kw(unit, "s"))
					mul = 1;
				else if (is_kw(unit, "m"))
					mul = 60;
				else if (is_kw(unit, "h"))
					mul = 3600;
				else if (is_kw(unit, "d"))
					mul = 86400;
				if (mul && unit->p == num->p + num->len &&
				    (num->ioverflow || num->ival > 86400 / mul)) {
					char w[64];
					snprintf(w, sizeof(w), "%.*s%.*s", (int)(num->len > 20 ? 20 : num->len),
						 num->p, (int)unit->len, unit->p);
					if (!pc->failed) {
						pc->failed = true;
						diag_add(pc->diags, BP_ERROR, num->line, num->col,
							 "temporal window `%s` exceeds the maximum allowed "
							 "window `24h`; shorten this window to at most `24h`",
							 w);
					}
					return false;
				}
			}
		}
		next(pc);
	}
	const char *start = open->p + 1;
	size_t len = (size_t)(t->p - start);
	next(pc);
	struct temporal_term *nt = palloc(pc, (r->n_temporal + 1) * sizeof(*nt));
	if (!nt)
		return false;
	if (r->n_temporal)
		memcpy(nt, r->temporal, r->n_temporal * sizeof(*nt));
	nt[r->n_temporal] = (struct temporal_term){
		.text = start, .len = len, .line = open->line, .col = open->col + 1
	};
	r->temporal = nt;
	*index = (uint32_t)r->n_temporal++;
	return true;
}

static struct rule *cur_rule(struct parse_ctx *pc);

static struct expr *
parse_primary(struct parse_ctx *pc)
{
	const struct token *t = peek(pc);
	struct expr *e;
	switch (t->k) {
	case T_INT:
		if (t->ioverflow || t->ival > (uint64_t)INT64_MAX) {
			char lit[40];
			snprintf(lit, sizeof(lit), "%.*s", (int)(t->len > 30 ? 30 : t->len), t->p);
			err_at(pc, t, "integer literal `%s` is out of range", lit);
			return NULL;
		}
		next(pc);
		e = new_expr(pc, EX_LIT, t);
		if (e) {
			e->v.t = V_LONG;
			e->v.u.l = (int64_t)t->ival;
		}
		return e;
	case T_STRING: {
		char *s;
		size_t len;
		next(pc);
		if (!string_value(pc, t, &s, &len))
			return NULL;
		e = new_expr(pc, EX_LIT, t);
		if (e) {
			e->v.t = V_STR;
			e->v.u.s = s;
			e->v.len = (uint32_t)len;
		}
		return e;
	}
	case T_LPAREN:
		next(pc);
		e = parse_expr(pc);
		if (!e || !expect(pc, T_RPAREN, "`)`"))
			return NULL;
		/* the parentheses belong to the span: `(a || b) && c` prints whole */
		fix_spans(e, 0);
		e->off = (uint32_t)(t->p - pc->src);
		end_here(pc, e);
		return e;
	case T_LBRACKET: {
		next(pc);
		struct expr **items = NULL;
		size_t n = 0, cap = 0;
		while (peek(pc)->k != T_RBRACKET) {
			struct expr *it = parse_expr(pc);
			if (!it)
				return NULL;
			if (n == cap) {
				cap = cap ? cap * 2 : 4;
				struct expr **ni = palloc(pc, cap * sizeof(*ni));
				if (!ni)
					return NULL;
				if (n)
					memcpy(ni, items, n * sizeof(*ni));
				items = ni;
			}
			items[n++] = it;
			if (peek(pc)->k == T_COMMA) {
				next(pc);
				continue;
			}
			if (peek(pc)->k != T_RBRACKET) {
				err_expected(pc, "`,` or `]`");
				return NULL;
			}
		}
		next(pc);
		e = new_expr(pc, EX_SET, t);
		if (e) {
			e->items = items;
			e->n = n;
		}
		return e;
	}
	case T_LBRACE: {
		next(pc);
		e = new_expr(pc, EX_RECORD, t);
		if (!e)
			return NULL;
		size_t cap = 0;
		while (peek(pc)->k != T_RBRACE) {
			const struct token *k = next(pc);
			const char *key;
			uint32_t atom;
			if (k->k == T_IDENT) {
				key = intern_tok(pc, k, &atom);
			} else if (k->k == T_STRING) {
				char *s;
				size_t len;
				if (!string_value(pc, k, &s, &len))
					return NULL;
				key = intern_str(pc, s, len, &atom);
			} else {
				pc->pos--;
				err_expected(pc, "a record key (an identifier or a string)");
				return NULL;
			}
			if (!key)
				return NULL;
			for (size_t i = 0; i < e->n; i++)
				if (e->key_atoms[i] == atom) {
					err_at(pc, k, "duplicate key `%s` in a record literal", key);
					return NULL;
				}
			if (!expect(pc, T_COLON, "`:` after the record key"))
				return NULL;
			struct expr *v = parse_expr(pc);
			if (!v)
				return NULL;
			if (e->n == cap) {
				cap = cap ? cap * 2 : 4;
				struct expr **ni = palloc(pc, cap * sizeof(*ni));
				const char **nk = palloc(pc, cap * sizeof(*nk));
				uint32_t *na = palloc(pc, cap * sizeof(*na));
				if (!ni || !nk || !na)
					return NULL;
				if (e->n) {
					memcpy(ni, e->items, e->n * sizeof(*ni));
					memcpy(nk, e->keys, e->n * sizeof(*nk));
					memcpy(na, e->key_atoms, e->n * sizeof(*na));
				}
				e->items = ni;
				e->keys = nk;
				e->key_atoms = na;
			}
			e->items[e->n] = v;
			e->keys[e->n] = key;
			e->key_atoms[e->n] = atom;
			e->n++;
			if (peek(pc)->k == T_COMMA) {
				next(pc);
				continue;
			}
			if (peek(pc)->k != T_RBRACE) {
				err_expected(pc, "`,` or `}`");
				return NULL;
			}
		}
		next(pc);
		end_here(pc, e);
		return e;
	}
	case T_QUESTION: {
		next(pc);
		const struct token *n = next(pc);
		if (is_kw(n, "principal") || is_kw(n, "resource")) {
			err_at(pc, t,
			       "template slots (`?principal`, `?resource`) are only valid in the "
			       "scope; this policy is not static");
			return NULL;
		}
		pc->pos--;
		err_expected(pc, "`principal` or `resource` after `?`");
		return NULL;
	}
	case T_DOLLAR:
		err_at(pc, t, "`$` variables belong to macros (`def`), which are not supported");
		return NULL;
	case T_IDENT:
		break;
	default:
		err_expected(pc, "an expression");
		return NULL;
	}

	/* identifiers */
	if (is_kw(t, "true") || is_kw(t, "false")) {
		next(pc);
		e = new_expr(pc, EX_LIT, t);
		if (e) {
			e->v.t = V_BOOL;
			e->v.u.b = is_kw(t, "true");
		}
		return e;
	}
	if (is_kw(t, "temporal") && peek2(pc)->k == T_LBRACE) {
		next(pc);
		uint32_t idx;
		if (!capture_temporal(pc, cur_rule(pc), &idx))
			return NULL;
		e = new_expr(pc, EX_TEMPORAL, t);
		if (e)
			e->temporal = idx;
		return e;
	}
	if (is_kw(t, "if") || is_kw(t, "then") || is_kw(t, "else") || is_kw(t, "in") ||
	    is_kw(t, "like") || is_kw(t, "has") || is_kw(t, "is")) {
		err_expected(pc, "an expression");
		return NULL;
	}
	size_t save = pc->pos;
	size_t parts;
	const char *path = parse_path(pc, &parts);
	if (!path)
		return NULL;
	const struct token *after = peek(pc);
	if (after->k == T_COLONCOLON) {
		pc->pos = save;
		struct entity_ref ref;
		if (!parse_entity(pc, &ref))
			return NULL;
		e = new_expr(pc, EX_LIT, t);
		if (e) {
			e->v.t = V_ENT;
			e->v.u.e.etype = ref.etype;
			e->v.u.e.id = ref.id;
			e->v.len = (uint32_t)strlen(ref.id);
		}
		return e;
	}
	if (after->k == T_LPAREN) {
		if (parts > 1) {
			err_at(pc, t,
			       "`%s(…)` calls an information provider; information providers are not "
			       "enabled in this build",
			       path);
			return NULL;
		}
		for (size_t i = 0; i < sizeof(functions) / sizeof(functions[0]); i++)
			if (strcmp(path, functions[i].name) == 0) {
				e = new_expr(pc, EX_CALL, t);
				if (!e || !parse_args(pc, &e->items, &e->n))
					return NULL;
				end_here(pc, e);
				e->fn = (uint8_t)functions[i].fn;
				if (e->n != 1) {
					err_at(pc, t, "`%s` takes exactly one argument", path);
					return NULL;
				}
				return e;
			}
		err_at(pc, t,
		       "`%s(…)` is not an extension function; macro calls are not supported "
		       "(only `ip`, `decimal`, `datetime` and `duration` can be called)",
		       path);
		return NULL;
	}
	if (parts > 1) {
		pc->pos = save;
		err_at(pc, t, "`%s` is not a valid expression; an entity needs `::\"id\"`", path);
		return NULL;
	}
	e = new_expr(pc, EX_VAR, t);
	if (!e)
		return NULL;
	if (strcmp(path, "principal") == 0)
		e->var = VAR_PRINCIPAL;
	else if (strcmp(path, "action") == 0)
		e->var = VAR_ACTION;
	else if (strcmp(path, "resource") == 0)
		e->var = VAR_RESOURCE;
	else if (strcmp(path, "context") == 0)
		e->var = VAR_CONTEXT;
	else {
		err_at(pc, t, "`%s` is not a valid variable", path);
		return NULL;
	}
	return e;
}

static struct expr *
parse_member(struct parse_ctx *pc)
{
	struct expr *e = parse_primary(pc);
	while (e) {
		const struct token *t = peek(pc);
		if (t->k == T_DOT) {
			next(pc);
			const struct token *id = peek(pc);
			if (id->k != T_IDENT) {
				err_expected(pc, "an attribute or method name after `.`");
				return NULL;
			}
			next(pc);
			if (peek(pc)->k == T_LPAREN) {
				char name[64];
				snprintf(name, sizeof(name), "%.*s", (int)(id->len > 60 ? 60 : id->len),
					 id->p);
				size_t m = 0;
				while (m < sizeof(methods) / sizeof(methods[0]) &&
				       strcmp(methods[m].name, name) != 0)
					m++;
				if (m == sizeof(methods) / sizeof(methods[0])) {
					err_at(pc, id, "unknown method `%s`", name);
					return NULL;
				}
				struct expr *call = new_expr(pc, EX_METHOD, id);
				if (!call || !parse_args(pc, &call->items, &call->n))
					return NULL;
				end_here(pc, call);
				call->fn = (uint8_t)methods[m].fn;
				call->a = e;
				if ((int)call->n != methods[m].arity) {
					err_at(pc, id,
					       methods[m].arity ? "`%s` takes exactly one argument"
								: "`%s` takes no arguments",
					       name);
					return NULL;
				}
				e = call;
				continue;
			}
			struct expr *a = new_expr(pc, EX_ATTR, id);
			if (!a)
				return NULL;
			a->a = e;
			a->name = intern_tok(pc, id, &a->atom);
			if (!a->name)
				return NULL;
			e = a;
		} else if (t->k == T_LBRACKET) {
			next(pc);
			const struct token *s = peek(pc);
			if (s->k != T_STRING) {
				err_at(pc, s,
				       "index access requires a string-literal key, e.g. "
				       "`record[\"field\"]`");
				return NULL;
			}
			next(pc);
			char *key;
			size_t len;
			if (!string_value(pc, s, &key, &len))
				return NULL;
			if (!expect(pc, T_RBRACKET, "`]`"))
				return NULL;
			struct expr *a = new_expr(pc, EX_ATTR, s);
			if (!a)
				return NULL;
			a->a = e;
			a->name = intern_str(pc, key, len, &a->atom);
			if (!a->name)
				return NULL;
			e = a;
		} else if (t->k == T_LPAREN && e->kind == EX_ATTR) {
			err_at(pc, t, "unexpected call: only extension functions and methods can be "
				      "called");
			return NULL;
		} else {
			break;
		}
	}
	return e;
}

static struct expr *
parse_unary(struct parse_ctx *pc)
{
	const struct token *t = peek(pc);
	if (t->k == T_NOT || t->k == T_MINUS) {
		enum tok_kind k = t->k;
		size_t count = 0;
		while (peek(pc)->k == k) {
			next(pc);
			count++;
		}
		if (count > 4) {
			err_at(pc, t, "too many unary operators in a row (at most four)");
			return NULL;
		}
		const struct token *op = peek(pc);
		if (op->k == T_NOT || op->k == T_MINUS) {
			err_at(pc, op, "mixing `!` and `-` in one run of unary operators is not "
				       "valid; use parentheses");
			return NULL;
		}
		struct expr *e;
		if (k == T_MINUS && op->k == T_INT) {
			/* fold one minus into the literal: -9223372036854775808 is legal */
			if (op->ioverflow || op->ival > (uint64_t)INT64_MAX + 1) {
				char lit[40];
				snprintf(lit, sizeof(lit), "-%.*s", (int)(op->len > 30 ? 30 : op->len),
					 op->p);
				err_at(pc, op, "integer literal `%s` is out of range", lit);
				return NULL;
			}
			next(pc);
			e = new_expr(pc, EX_LIT, t);
			if (!e)
				return NULL;
			e->v.t = V_LONG;
			e->v.u.l = op->ival == (uint64_t)INT64_MAX + 1 ? INT64_MIN
								       : -(int64_t)op->ival;
			count--;
			/* a literal may still be followed by members, e.g. (-1).foo: no */
		} else {
			e = parse_member(pc);
		}
		while (e && count--) {
			struct expr *u = new_expr(pc, k == T_NOT ? EX_NOT : EX_NEG, t);
			if (!u)
				return NULL;
			u->a = e;
			e = u;
		}
		return e;
	}
	return parse_member(pc);
}

/*
 * One left-associative step: the operator token T was just consumed; parse
 * its right operand with OPERAND and make the KIND node over LEFT and it.
 */
static struct expr *
binary_node(struct parse_ctx *pc, enum ex_kind kind, const struct token *t, struct expr *left,
	    struct expr *(*operand)(struct parse_ctx *))
{
	struct expr *right = operand(pc);
	if (!right)
		return NULL;
	struct expr *x = new_expr(pc, kind, t);
	if (!x)
		return NULL;
	x->a = left;
	x->b = right;
	return x;
}

static struct expr *
parse_mult(struct parse_ctx *pc)
{
	struct expr *e = parse_unary(pc);
	while (e) {
		const struct token *t = peek(pc);
		if (t->k == T_SLASH || t->k == T_PERCENT) {
			err_at(pc, t, "`%s` is not a supported operator", t->k == T_SLASH ? "/" : "%");
			return NULL;
		}
		if (t->k != T_STAR)
			break;
		next(pc);
		e = binary_node(pc, EX_MUL, t, e, parse_unary);
	}
	return e;
}

static struct expr *
parse_add(struct parse_ctx *pc)
{
	struct expr *e = parse_mult(pc);
	while (e) {
		const struct token *t = peek(pc);
		if (t->k != T_PLUS && t->k != T_MINUS)
			break;
		next(pc);
		e = binary_node(pc, t->k == T_PLUS ? EX_ADD : EX_SUB, t, e, parse_mult);
	}
	return e;
}

static bool
build_pattern(struct parse_ctx *pc, const struct token *t, struct pattern **ret)
{
	struct pattern *p = palloc(pc, sizeof(*p));
	const char *s = t->p + 1;
	size_t n = t->len - 2;
	if (!p)
		return false;
	p->text = s;
	p->text_len = (uint32_t)n;
	/* count wildcards for sizing */
	size_t stars = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\') {
			i++;
			continue;
		}
		if (s[i] == '*')
			stars++;
	}
	p->runs = palloc(pc, (stars + 1) * sizeof(*p->runs));
	p->lens = palloc(pc, (stars + 1) * sizeof(*p->lens));
	char *cur = palloc(pc, n + 1);
	if (!p->runs || !p->lens || !cur)
		return false;
	size_t k = 0, run_start = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '*') {
			p->runs[p->n_runs] = cur + run_start;
			p->lens[p->n_runs] = (uint32_t)(k - run_start);
			p->n_runs++;
			run_start = k;
			continue;
		}
		if (c != '\\') {
			cur[k++] = c;
			continue;
		}
		if (i + 1 < n && s[i + 1] == '*') {
			cur[k++] = '*';
			i++;
			continue;
		}
		/* decode one ordinary escape through the string decoder */
		size_t j = i + 1;
		if (j < n && s[j] == 'u') {
			while (j < n && s[j] != '}')
				j++;
		}
		struct token sub = { .k = T_STRING };
		char tmp[24];
		size_t elen = j - i + 1;
		if (elen + 2 > sizeof(tmp) || j >= n) {
			err_at(pc, t, "invalid escape sequence in a pattern");
			return false;
		}
		tmp[0] = '"';
		memcpy(tmp + 1, s + i, elen);
		tmp[elen + 1] = '"';
		sub.p = tmp;
		sub.len = (uint32_t)(elen + 2);
		char *dec;
		size_t dlen;
		const char *err;
		if (!unescape_string(&sub, pc->ar, &dec, &dlen, &err)) {
			err_at(pc, t, "%s", err);
			return false;
		}
		memcpy(cur + k, dec, dlen);
		k += dlen;
		i = j;
	}
	p->runs[p->n_runs] = cur + run_start;
	p->lens[p->n_runs] = (uint32_t)(k - run_start);
	p->n_runs++;
	*ret = p;
	return true;
}

static struct expr *
parse_relation(struct parse_ctx *pc)
{
	struct expr *e = parse_add(pc);
	if (!e)
		return NULL;
	const struct token *t = peek(pc);
	if (is_kw(t, "has")) {
		next(pc);
		/* `e has a.b.c` is `e has a && e.a has b && e.a.b has c` */
		struct expr *result = NULL, *base = e;
		for (;;) {
			const struct token *k = next(pc);
			const char *name;
			uint32_t atom;
			if (k->k == T_IDENT) {
				name = intern_tok(pc, k, &atom);
			} else if (k->k == T_STRING) {
				char *s;
				size_t len;
				if (!string_value(pc, k, &s, &len))
					return NULL;
				name = intern_str(pc, s, len, &atom);
			} else {
				pc->pos--;
				err_expected(pc, "an attribute name or a string after `has`");
				return NULL;
			}
			if (!name)
				return NULL;
			struct expr *h = new_expr(pc, EX_HAS, t);
			if (!h)
				return NULL;
			h->a = base;
			h->name = name;
			h->atom = atom;
			if (result) {
				struct expr *and = new_expr(pc, EX_AND, t);
				if (!and)
					return NULL;
				and->a = result;
				and->b = h;
				result = and;
			} else {
				result = h;
			}
			if (k->k == T_IDENT && peek(pc)->k == T_DOT && peek2(pc)->k == T_IDENT) {
				next(pc);
				struct expr *acc = new_expr(pc, EX_ATTR, k);
				if (!acc)
					return NULL;
				acc->a = base;
				acc->name = name;
				acc->atom = atom;
				base = acc;
				continue;
			}
			break;
		}
		return result;
	}
	if (is_kw(t, "like")) {
		next(pc);
		const struct token *s = peek(pc);
		if (s->k != T_STRING) {
			err_at(pc, s, "`like` needs a string-literal pattern");
			return NULL;
		}
		next(pc);
		struct expr *l = new_expr(pc, EX_LIKE, t);
		if (!l || !build_pattern(pc, s, &l->pat))
			return NULL;
		l->a = e;
		return l;
	}
	if (is_kw(t, "is")) {
		next(pc);
		size_t parts;
		if (peek(pc)->k != T_IDENT) {
			err_expected(pc, "an entity type after `is`");
			return NULL;
		}
		const char *type = parse_path(pc, &parts);
		if (!type)
			return NULL;
		struct expr *is = new_expr(pc, EX_IS, t);
		if (!is)
			return NULL;
		is->a = e;
		is->name = type;
		if (is_kw(peek(pc), "in")) {
			next(pc);
			is->b = parse_add(pc);
			if (!is->b)
				return NULL;
		}
		return is;
	}
	enum ex_kind k;
	switch (t->k) {
	case T_EQ: k = EX_EQ; break;
	case T_NE: k = EX_NE; break;
	case T_LT: k = EX_LT; break;
	case T_LE: k = EX_LE; break;
	case T_GT: k = EX_GT; break;
	case T_GE: k = EX_GE; break;
	case T_IDENT:
		if (is_kw(t, "in")) {
			k = EX_IN;
			break;
		}
		return e;
	case T_ASSIGN:
		err_at(pc, t, "`=` is not a valid operator; did you mean `==`?");
		return NULL;
	default:
		return e;
	}
	next(pc);
	struct expr *r = parse_add(pc);
	if (!r)
		return NULL;
	struct expr *c = new_expr(pc, k, t);
	if (!c)
		return NULL;
	c->a = e;
	c->b = r;
	const struct token *again = peek(pc);
	if (again->k == T_EQ || again->k == T_NE || again->k == T_LT || again->k == T_LE ||
	    again->k == T_GT || again->k == T_GE || is_kw(again, "in")) {
		err_at(pc, again, "comparisons cannot be chained; use parentheses");
		return NULL;
	}
	return c;
}

static struct expr *
parse_and(struct parse_ctx *pc)
{
	struct expr *e = parse_relation(pc);
	while (e && peek(pc)->k == T_AND) {
		const struct token *t = next(pc);
		e = binary_node(pc, EX_AND, t, e, parse_relation);
	}
	return e;
}

static struct expr *
parse_or(struct parse_ctx *pc)
{
	struct expr *e = parse_and(pc);
	while (e && peek(pc)->k == T_OR) {
		const struct token *t = next(pc);
		e = binary_node(pc, EX_OR, t, e, parse_and);
	}
	return e;
}

static struct expr *
parse_expr(struct parse_ctx *pc)
{
	if (++pc->depth > BP_MAX_DEPTH) {
		err_at(pc, peek(pc), "expression nested too deeply");
		pc->depth--;
		return NULL;
	}
	const struct token *t = peek(pc);
	struct expr *e;
	if (is_kw(t, "if")) {
		next(pc);
		e = new_expr(pc, EX_IF, t);
		if (e && (e->a = parse_expr(pc)) &&
		    (is_kw(peek(pc), "then") ? (next(pc), true)
					     : (err_expected(pc, "`then`"), false)) &&
		    (e->b = parse_expr(pc)) &&
		    (is_kw(peek(pc), "else") ? (next(pc), true)
					     : (err_expected(pc, "`else`"), false)) &&
		    (e->c = parse_expr(pc))) {
			/* parsed */
		} else {
			e = NULL;
		}
	} else {
		e = parse_or(pc);
	}
	pc->depth--;
	return e;
}

static struct rule *
cur_rule(struct parse_ctx *pc)
{
	return &pc->rules[pc->n_rules];
}

/* One scope element; VAR is 0 principal, 1 action, 2 resource. */
static bool
parse_scope_elem(struct parse_ctx *pc, int var, struct scope *sc)
{
	const char *names[] = { "principal", "action", "resource" };
	const struct token *t = peek(pc);
	sc->line = t->line;
	sc->col = t->col;
	if (t->k == T_COMMA || t->k == T_RPAREN) {
		sc->kind = SC_ANY;
		return true;
	}
	if (t->k == T_COLON) {
		err_at(pc, t, "the `%s : Type` scope form is not supported; use `principal is Type`",
		       names[var]);
		return false;
	}
	if (t->k == T_ASSIGN) {
		err_at(pc, t, "`=` is not a valid operator in this scope; did you mean `==`?");
		return false;
	}
	if (is_kw(t, "is")) {
		if (var == 1) {
			err_at(pc, t, "`action is Type` is not valid in the action scope");
			return false;
		}
		next(pc);
		size_t parts;
		if (peek(pc)->k != T_IDENT) {
			err_expected(pc, "an entity type after `is`");
			return false;
		}
		sc->is_type = parse_path(pc, &parts);
		if (!sc->is_type)
			return false;
		sc->kind = SC_IS;
		const struct token *o = peek(pc);
		if (is_kw(o, "in")) {
			next(pc);
			sc->kind = SC_IS_IN;
			if (peek(pc)->k == T_QUESTION) {
				next(pc);
				next(pc);
				sc->slot = true;
				return true;
			}
			return parse_entity(pc, &sc->e);
		}
		if (o->k == T_EQ) {
			err_at(pc, o, "`is Type == …` is not valid; only `is Type in …` is allowed");
			return false;
		}
		return true;
	}
	bool in = is_kw(t, "in");
	if (t->k != T_EQ && !in) {
		char found[80];
		describe(t, found, sizeof(found));
		err_at(pc, t, "scope only allows `==` or `in`, found %s", found);
		return false;
	}
	next(pc);
	if (peek(pc)->k == T_QUESTION) {
		const struct token *q = next(pc);
		const struct token *n = next(pc);
		if (var == 1 || !is_kw(n, names[var])) {
			err_at(pc, q, "template slot `?%s` is not valid here",
			       var == 1 ? "action" : names[var]);
			return false;
		}
		sc->kind = in ? SC_IN : SC_EQ;
		sc->slot = true;
		return true;
	}
	if (in && peek(pc)->k == T_LBRACKET) {
		if (var != 1) {
			err_at(pc, peek(pc), "`%s in [ … ]` is only valid for `action`", names[var]);
			return false;
		}
		next(pc);
		size_t cap = 0;
		while (peek(pc)->k != T_RBRACKET) {
			if (sc->n == cap) {
				cap = cap ? cap * 2 : 4;
				struct entity_ref *ns = palloc(pc, cap * sizeof(*ns));
				if (!ns)
					return false;
				if (sc->n)
					memcpy(ns, sc->set, sc->n * sizeof(*ns));
				sc->set = ns;
			}
			if (!parse_entity(pc, &sc->set[sc->n]))
				return false;
			sc->n++;
			if (peek(pc)->k == T_COMMA) {
				next(pc);
				continue;
			}
			if (peek(pc)->k != T_RBRACKET) {
				err_expected(pc, "`,` or `]`");
				return false;
			}
		}
		next(pc);
		sc->kind = SC_IN_SET;
		return true;
	}
	sc->kind = in ? SC_IN : SC_EQ;
	return parse_entity(pc, &sc->e);
}

static bool
parse_scope(struct parse_ctx *pc, struct rule *r)
{
	bool seen[3] = { false, false, false };
	struct scope *dst[3] = { &r->principal, &r->action, &r->resource };
	if (!expect(pc, T_LPAREN, "`(` to open the scope"))
		return false;
	while (peek(pc)->k != T_RPAREN) {
		const struct token *t = peek(pc);
		int var = -1;
		if (is_kw(t, "principal"))
			var = 0;
		else if (is_kw(t, "action"))
			var = 1;
		else if (is_kw(t, "resource"))
			var = 2;
		if (var < 0) {
			char found[80];
			describe(t, found, sizeof(found));
			if (seen[0] && seen[1] && seen[2])
				err_at(pc, t, "this policy has an extra element in the scope: %s",
				       found);
			else
				err_at(pc, t,
				       "unexpected scope variable %s; expected `principal`, `action`, "
				       "or `resource`",
				       found);
			return false;
		}
		if (seen[var]) {
			err_at(pc, t, "duplicate `%s` in scope", t->p[0] == 'p' ? "principal"
								: t->p[0] == 'a' ? "action"
										 : "resource");
			return false;
		}
		seen[var] = true;
		next(pc);
		if (!parse_scope_elem(pc, var, dst[var]))
			return false;
		if (peek(pc)->k == T_COMMA) {
			next(pc);
			continue;
		}
		if (peek(pc)->k != T_RPAREN) {
			err_expected(pc, "`,` or `)`");
			return false;
		}
	}
	next(pc);
	return true;
}

static bool
parse_annotation(struct parse_ctx *pc, struct rule *r, size_t *cap)
{
	const struct token *at = next(pc); /* @ */
	const struct token *k = peek(pc);
	if (k->k != T_IDENT) {
		err_expected(pc, "an annotation name after `@`");
		return false;
	}
	next(pc);
	const char *key = intern_tok(pc, k, NULL);
	if (!key)
		return false;
	char *value = "";
	if (peek(pc)->k == T_LPAREN) {
		next(pc);
		const struct token *s = peek(pc);
		if (s->k != T_STRING) {
			err_expected(pc, "a string as the annotation value");
			return false;
		}
		next(pc);
		size_t len;
		if (!string_value(pc, s, &value, &len))
			return false;
		if (!expect(pc, T_RPAREN, "`)` to close the annotation"))
			return false;
	}
	for (size_t i = 0; i < r->n_annot; i++)
		if (r->annot[i].key == key) {
			err_at(pc, at, "duplicate annotation `@%s` on one policy", key);
			return false;
		}
	if (r->n_annot == *cap) {
		*cap = *cap ? *cap * 2 : 4;
		struct annotation *na = palloc(pc, *cap * sizeof(*na));
		if (!na)
			return false;
		if (r->n_annot)
			memcpy(na, r->annot, r->n_annot * sizeof(*na));
		r->annot = na;
	}
	r->annot[r->n_annot++] = (struct annotation){
		.key = key, .value = value, .line = at->line, .col = at->col
	};
	return true;
}

static bool
is_blank(const char *s)
{
	for (; *s; s++)
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r' && *s != '\f' && *s != '\v')
			return false;
	return true;
}

static bool
is_lit_bool(const struct expr *e, bool v)
{
	return e->kind == EX_LIT && e->v.t == V_BOOL && e->v.u.b == v;
}

static bool
parse_policy(struct parse_ctx *pc, struct rule *r, size_t index)
{
	size_t annot_cap = 0;
	r->text_start = (uint32_t)(peek(pc)->p - pc->src);
	while (peek(pc)->k == T_AT)
		if (!parse_annotation(pc, r, &annot_cap))
			return false;
	const struct token *eff = peek(pc);
	r->line = eff->line;
	r->col = eff->col;
	if (is_kw(eff, "permit")) {
		r->forbid = false;
	} else if (is_kw(eff, "forbid")) {
		r->forbid = true;
	} else {
		char found[80];
		describe(eff, found, sizeof(found));
		if (eff->k == T_IDENT)
			err_at(pc, eff, "policy effect must be `permit` or `forbid`, found %s", found);
		else
			err_expected(pc, "`permit` or `forbid`");
		return false;
	}
	next(pc);
	if (!parse_scope(pc, r))
		return false;
	r->vacuous = true;
	for (;;) {
		const struct token *t = peek(pc);
		if (t->k == T_SEMI) {
			r->text_end = (uint32_t)(t->p - pc->src) + 1;
			next(pc);
			break;
		}
		if (t->k == T_IDENT && !is_kw(t, "when") && !is_kw(t, "unless") &&
		    peek2(pc)->k == T_LBRACE) {
			char found[80];
			describe(t, found, sizeof(found));
			err_at(pc, t, "condition keyword must be `when` or `unless`, found %s", found);
			return false;
		}
		if (!is_kw(t, "when") && !is_kw(t, "unless")) {
			err_expected(pc, "`;` to end the policy, or `when`/`unless` to add a condition");
			return false;
		}
		bool unless = is_kw(t, "unless");
		next(pc);
		struct expr *c;
		const struct token *k = peek(pc);
		if (is_kw(k, "temporal")) {
			next(pc);
			if (peek(pc)->k != T_LBRACE) {
				err_expected(pc, "`{` after `temporal`");
				return false;
			}
			uint32_t idx;
			if (!capture_temporal(pc, r, &idx))
				return false;
			c = new_expr(pc, EX_TEMPORAL, k);
			if (!c)
				return false;
			c->temporal = idx;
		} else {
			if (is_kw(k, "guardrails"))
				next(pc);
			if (!expect(pc, T_LBRACE, "`{` to open the condition"))
				return false;
			c = parse_expr(pc);
			if (!c)
				return false;
			if (!expect(pc, T_RBRACE, "`}` to close the condition"))
				return false;
		}
		r->has_clause = true;
		if (!(unless ? is_lit_bool(c, false) : is_lit_bool(c, true)))
			r->vacuous = false;
		fix_spans(c, 0);
		struct clause *ncl = palloc(pc, (r->n_clauses + 1) * sizeof(*ncl));
		if (!ncl)
			return false;
		if (r->n_clauses)
			memcpy(ncl, r->clauses, r->n_clauses * sizeof(*ncl));
		ncl[r->n_clauses++] = (struct clause){
			.e = c, .unless = unless, .temporal = c->kind == EX_TEMPORAL && is_kw(k, "temporal"),
			.line = t->line, .col = t->col
		};
		r->clauses = ncl;
		if (unless) {
			struct expr *n = new_expr(pc, EX_NOT, t);
			if (!n)
				return false;
			n->a = c;
			c = n;
		}
		if (r->cond) {
			struct expr *a = new_expr(pc, EX_AND, t);
			if (!a)
				return false;
			a->a = r->cond;
			a->b = c;
			c = a;
		}
		r->cond = c;
	}
	for (size_t i = 0; i < r->n_annot; i++) {
		if (strcmp(r->annot[i].key, "id") == 0 && !is_blank(r->annot[i].value))
			r->id = r->annot[i].value;
		else if (strcmp(r->annot[i].key, "description") == 0 &&
			 !is_blank(r->annot[i].value))
			r->desc = r->annot[i].value;
	}
	if (r->id) {
		r->name = r->id;
	} else {
		char name[32];
		snprintf(name, sizeof(name), "policy_%zu", index);
		r->name = arena_strndup(pc->ar, name, strlen(name));
		if (!r->name) {
			pc->oom = pc->failed = true;
			return false;
		}
	}
	return true;
}

/* After an error: skip to the token after the next `;` outside braces. */
static void
recover(struct parse_ctx *pc)
{
	int depth = 0;
	for (;;) {
		const struct token *t = peek(pc);
		if (t->k == T_EOF)
			return;
		next(pc);
		if (t->k == T_LBRACE || t->k == T_LPAREN || t->k == T_LBRACKET)
			depth++;
		else if ((t->k == T_RBRACE || t->k == T_RPAREN || t->k == T_RBRACKET) && depth > 0)
			depth--;
		else if (t->k == T_SEMI && depth == 0)
			return;
	}
}

int
parse_policies(struct parse_ctx *pc)
{
	bool any_error = false;
	while (peek(pc)->k != T_EOF) {
		if (pc->oom)
			return -ENOMEM;
		if (is_kw(peek(pc), "def")) {
			const struct token *t = peek(pc);
			diag_add(pc->diags, BP_ERROR, t->line, t->col,
				 "macro definitions (`def`) are not supported");
			any_error = true;
			recover(pc);
			continue;
		}
		if (pc->n_rules == pc->cap_rules) {
			size_t cap = pc->cap_rules ? pc->cap_rules * 2 : 16;
			struct rule *nr = realloc(pc->rules, cap * sizeof(*nr));
			if (!nr)
				return -ENOMEM;
			pc->rules = nr;
			pc->cap_rules = cap;
		}
		struct rule *r = &pc->rules[pc->n_rules];
		memset(r, 0, sizeof(*r));
		pc->failed = false;
		pc->depth = 0;
		if (parse_policy(pc, r, pc->n_rules)) {
			pc->n_rules++;
		} else {
			if (pc->oom)
				return -ENOMEM;
			any_error = true;
			recover(pc);
			/* keep the slot count in file order: a broken rule still has a number */
			memset(r, 0, sizeof(*r));
			r->name = "";
			pc->n_rules++;
		}
	}
	return any_error ? -EINVAL : 0;
}
