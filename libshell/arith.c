/* SPDX-License-Identifier: Apache-2.0 */
/*
 * arith.c — shell arithmetic ($((…)), ((…)), let, array indices, integer
 * variables): intmax_t, C precedence, ** , assignments and ++/--, ?: and
 * the comma operator, bases 0x, 0 (octal) and B#N. Errors are bash's:
 * "EXPR: division by 0 (error token is "0")".
 *
 * Trusts: nothing in the expression. A variable's value is evaluated as an
 * expression in turn; that recursion is capped (depth 64) as is the
 * operator nesting (SH_MAX_PARSE_DEPTH).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sh.h"

/* Copies of variables' values an error message points into, freed when
 * the whole evaluation ends. */
struct ax_held {
	struct ax_held *next;
	char *s;
};

struct ax {
	struct sh_shell *sh;
	const char *s, *p;
	bool err;
	bool noeval;    /* inside the untaken side of && || ?: */
	int depth;
	const char *errtok;
	const char *errmsg;
	const char *lastop; /* the last operator read (bash's error token at the end) */
	struct ax_held **held; /* the outermost evaluation's list */
	char unbound[256];     /* the variable of an "unbound variable" error */
};

static int arith_rec_depth;

static intmax_t ax_comma(struct ax *a);
static intmax_t ax_assign(struct ax *a);

static void
ax_fail(struct ax *a, const char *msg, const char *tok)
{
	if (a->err)
		return;
	a->err = true;
	a->errmsg = msg;
	a->errtok = tok;
}

static void
ws(struct ax *a)
{
	while (*a->p == ' ' || *a->p == '\t' || *a->p == '\n' || *a->p == '\r')
		a->p++;
}

/*
 * ++ and -- are increments only next to a name (bash): before one (blanks between
 * allowed) here, after one in ax_primary. Elsewhere "++" is two signs: 0++1 is 0 + +1,
 * (a)+++3 is (a) + + +3.
 */
static bool
name_follows(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	return isalpha((unsigned char)*p) || *p == '_';
}

static bool
eat(struct ax *a, const char *op)
{
	ws(a);
	if (a->p[0] != op[0])
		return false; /* the common case, without strlen/strncmp */
	size_t n = op[1] ? (op[2] ? 3 : 2) : 1;
	if (n > 1 && strncmp(a->p, op, n) != 0)
		return false;
	/* don't take "=" of "==", "<" of "<<" etc. */
	char nx = a->p[n];
	if (n == 1 && (op[0] == '=' ) && nx == '=')
		return false;
	if (n == 1 && strchr("<>&|", op[0]) && (nx == op[0] || nx == '='))
		return false;
	if (n == 1 && strchr("+-*/%^!", op[0]) && nx == '=')
		return false;
	if (n == 1 && (op[0] == '+' || op[0] == '-') && nx == op[0] && name_follows(a->p + 2))
		return false;
	if (n == 1 && op[0] == '*' && nx == '*')
		return false;
	if (n == 2 && (strcmp(op, "<<") == 0 || strcmp(op, ">>") == 0) && nx == '=')
		return false;
	if (n == 2 && strcmp(op, "**") == 0 && nx == '=')
		return false;
	a->lastop = a->p;
	a->p += n;
	return true;
}

static intmax_t
parse_number(struct ax *a, const char *s, const char **end)
{
	const char *p = s;
	intmax_t v = 0;
	int base = 10;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	} else if (p[0] == '0' && isdigit((unsigned char)p[1])) {
		base = 8;
		p++;
	} else {
		const char *q = p;
		while (isdigit((unsigned char)*q))
			q++;
		if (*q == '#') {
			base = atoi(p);
			if (base < 2 || base > 64) {
				ax_fail(a, "invalid arithmetic base", s);
				*end = q;
				return 0;
			}
			p = q + 1;
		}
	}
	const char *digits = p;
	for (;;) {
		int d;
		char c = *p;
		if (isdigit((unsigned char)c))
			d = c - '0';
		else if (c >= 'a' && c <= 'z')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'Z')
			d = base <= 36 ? c - 'A' + 10 : c - 'A' + 36;
		else if (c == '@')
			d = 62;
		else if (c == '_')
			d = 63;
		else
			break;
		if (d >= base) {
			ax_fail(a, "value too great for base", s);
			break;
		}
		v = (intmax_t)((uintmax_t)v * (uintmax_t)base + (uintmax_t)d);
		p++;
	}
	if (p == digits && base != 10)
		ax_fail(a, "invalid number", s);
	*end = p;
	return v;
}

static intmax_t
value_of(struct ax *a, const char *str)
{
	if (!str || !*str)
		return 0;
	const char *e;
	const char *s = str;
	while (*s == ' ' || *s == '\t')
		s++;
	if (isdigit((unsigned char)*s)) {
		intmax_t v = parse_number(a, s, &e);
		while (*e == ' ' || *e == '\t')
			e++;
		if (!*e)
			return v;
	}
	if (arith_rec_depth > 64) {
		ax_fail(a, "expression recursion level exceeded", str);
		return 0;
	}
	arith_rec_depth++;
	intmax_t v = 0;
	/* STR is a variable's value: the expression may assign that variable
	 * (i=i=0; ((i++))) and free it, so it is evaluated from a copy */
	char *own = xstrdup(str);
	struct ax sub = {.sh = a->sh, .s = own, .p = own, .held = a->held};
	v = ax_comma(&sub);
	ws(&sub);
	if (!sub.err && *sub.p)
		ax_fail(&sub, "syntax error in expression", sub.p);
	arith_rec_depth--;
	if (sub.err && !a->err) {
		/* the message points into the copy: it lives until arith_eval ends */
		struct ax_held *h = xmalloc(sizeof *h);
		*h = (struct ax_held){.next = *a->held, .s = own};
		*a->held = h;
		own = NULL;
		a->err = true;
		a->errmsg = sub.errmsg;
		a->errtok = sub.errtok;
		if (sub.s == sub.unbound) {
			memcpy(a->unbound, sub.unbound, sizeof a->unbound);
			a->s = a->unbound;
		} else {
			a->s = sub.s;
		}
	}
	free(own);
	return v;
}

/* An lvalue: name or name[expr]. */
struct lval {
	char name[256];
	bool elem;
	intmax_t idx;
	/* an associative array's element: its key, the text between the brackets */
	const char *key;
	size_t keyn;
};

static bool
parse_lval(struct ax *a, struct lval *lv)
{
	ws(a);
	const char *p = a->p;
	if (!(isalpha((unsigned char)*p) || *p == '_'))
		return false;
	const char *st = p;
	while (isalnum((unsigned char)*p) || *p == '_')
		p++;
	size_t n = (size_t)(p - st);
	if (n >= sizeof lv->name)
		n = sizeof lv->name - 1;
	memcpy(lv->name, st, n);
	lv->name[n] = 0;
	lv->elem = false;
	a->p = p;
	lv->key = NULL;
	struct var *av = *p == '[' ? var_get(a->sh, lv->name) : NULL;
	if (av && (av->flags & V_ASSOC)) {
		/* a[key]: a string up to the matching bracket, not an expression */
		const char *k = p + 1, *e = k;
		int depth = 0;
		for (; *e && (*e != ']' || depth > 0); e++)
			depth += *e == '[' ? 1 : *e == ']' ? -1 : 0;
		if (*e != ']' || e == k) {
			ax_fail(a, "bad array subscript", a->p);
			return true;
		}
		lv->key = k;
		lv->keyn = (size_t)(e - k);
		lv->elem = true;
		a->p = e + 1;
		return true;
	}
	if (*p == '[') {
		a->p = p + 1;
		lv->idx = ax_comma(a);
		ws(a);
		if (*a->p != ']') {
			ax_fail(a, "syntax error: invalid arithmetic operator", a->p);
			return true;
		}
		a->p++;
		lv->elem = true;
	}
	return true;
}

static intmax_t
lval_get(struct ax *a, struct lval *lv)
{
	if (lv->elem && lv->key) {
		char *k = xstrndup(lv->key, lv->keyn);
		struct var *v = var_get(a->sh, lv->name);
		const char *val = v ? assoc_get(v, k) : NULL;
		free(k);
		return value_of(a, val);
	}
	if (lv->elem) {
		struct var *v = var_get(a->sh, lv->name);
		if (!v)
			return 0;
		if (!(v->flags & V_ARRAY))
			return lv->idx == 0 ? value_of(a, v->val) : 0;
		if (lv->idx < 0 || (size_t)lv->idx >= v->narr)
			return 0;
		return value_of(a, v->arr[lv->idx]);
	}
	const char *val = var_value(a->sh, lv->name);
	/* dash: set -u does not reach arithmetic */
	if (!val && a->sh->opt_u && !a->noeval && !a->sh->dash_errors) {
		if (!a->err) {
			ax_fail(a, "unbound variable", NULL);
			snprintf(a->unbound, sizeof a->unbound, "%s", lv->name);
			a->s = a->unbound;
		}
		return 0;
	}
	return value_of(a, val);
}

/* V in decimal into B (>= 21 bytes, NUL-terminated). */
static void
fmt_intmax(char *b, intmax_t v)
{
	char t[24], *e = t + sizeof t, *o = e;
	uintmax_t u = v < 0 ? (uintmax_t)0 - (uintmax_t)v : (uintmax_t)v;
	do
		*--o = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		*--o = '-';
	memcpy(b, o, (size_t)(e - o));
	b[e - o] = 0;
}

static void
lval_set(struct ax *a, struct lval *lv, intmax_t v)
{
	if (a->noeval || a->err)
		return;
	char b[32];
	fmt_intmax(b, v);
	int r;
	if (lv->elem && lv->key) {
		char *k = xstrndup(lv->key, lv->keyn);
		r = assoc_set(a->sh, lv->name, k, b);
		free(k);
	} else if (lv->elem) {
		if (lv->idx < 0) {
			ax_fail(a, "bad array subscript", NULL);
			return;
		}
		r = var_set_elem(a->sh, lv->name, (size_t)lv->idx, b);
	} else
		r = var_set(a->sh, lv->name, b, 0);
	if (r < 0) {
		a->err = true;
		a->errmsg = NULL;
		/* a readonly variable: $(( )) then skips the rest of the top-level
		 * command (expand.c) */
		struct var *rv = var_get(a->sh, lv->name);
		if (rv && (rv->flags & V_READONLY))
			a->sh->arith_readonly = true;
	}
}

static intmax_t
ax_primary(struct ax *a)
{
	ws(a);
	if (sh_stack_exhausted(a->sh)) {
		a->err = true; /* said */
		a->errmsg = NULL;
		return 0;
	}
	if (++a->depth > SH_MAX_PARSE_DEPTH) {
		ax_fail(a, "expression nesting too deep", a->p);
		return 0;
	}
	intmax_t v = 0;
	const char *p = a->p;
	if (*p == '(') {
		a->p++;
		v = ax_comma(a);
		ws(a);
		if (*a->p != ')')
			ax_fail(a, "missing `)'", a->p);
		else
			a->p++;
	} else if ((p[0] == '+' || p[0] == '-') && p[1] == p[0] && name_follows(p + 2)) {
		a->p += 2;
		bool inc = a->p[-1] == '+';
		struct lval lv;
		if (!parse_lval(a, &lv)) {
			ax_fail(a, "syntax error: operand expected", a->p);
		} else {
			v = (intmax_t)((uintmax_t)lval_get(a, &lv) + (inc ? 1 : UINTMAX_MAX));
			lval_set(a, &lv, v);
		}
	} else if (eat(a, "!")) {
		v = !ax_primary(a);
	} else if (eat(a, "~")) {
		v = ~ax_primary(a);
	} else if (eat(a, "-")) {
		v = -(uintmax_t)ax_primary(a);
	} else if (eat(a, "+")) {
		v = ax_primary(a);
	} else if (isdigit((unsigned char)*p)) {
		const char *e;
		v = parse_number(a, p, &e);
		if (isalnum((unsigned char)*e) || *e == '_' || *e == '#') {
			ax_fail(a, "value too great for base", p);
		}
		a->p = e;
	} else if (isalpha((unsigned char)*p) || *p == '_') {
		struct lval lv;
		parse_lval(a, &lv);
		ws(a);
		if (a->p[0] == '+' && a->p[1] == '+') {
			a->p += 2;
			v = lval_get(a, &lv);
			lval_set(a, &lv, (intmax_t)((uintmax_t)v + 1)); /* wraps, as + does */
		} else if (a->p[0] == '-' && a->p[1] == '-') {
			a->p += 2;
			v = lval_get(a, &lv);
			lval_set(a, &lv, (intmax_t)((uintmax_t)v - 1));
		} else
			v = lval_get(a, &lv);
	} else if (*p == '$') {
		/* already expanded normally; a leftover $ is an error */
		ax_fail(a, "syntax error: operand expected", p);
	} else {
		ax_fail(a, "syntax error: operand expected", p);
	}
	a->depth--;
	return v;
}

/*
 * The binary operators, by precedence climbing: one loop reads an operator
 * and its precedence with a switch on its first character (instead of a
 * function and an attempt at every operator per precedence level: $((i+1))
 * is evaluated for each iteration of a loop). The tokens are those the
 * levels used to take: "=" of "==", "<" of "<<" or "<=", "+" of "++" or
 * "+=" and so on are not binary operators here.
 */
enum binop {
	OP_NONE, OP_LOR, OP_LAND, OP_BOR, OP_BXOR, OP_BAND, OP_EQ, OP_NE, OP_LE, OP_GE, OP_LT,
	OP_GT, OP_SHL, OP_SHR, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_POW,
};

/* precedence, higher binds tighter; ** (11) is right-associative */
static const unsigned char binop_prec[] = {
	[OP_NONE] = 0, [OP_LOR] = 1, [OP_LAND] = 2, [OP_BOR] = 3, [OP_BXOR] = 4, [OP_BAND] = 5,
	[OP_EQ] = 6, [OP_NE] = 6, [OP_LE] = 7, [OP_GE] = 7, [OP_LT] = 7, [OP_GT] = 7,
	[OP_SHL] = 8, [OP_SHR] = 8, [OP_ADD] = 9, [OP_SUB] = 9, [OP_MUL] = 10, [OP_DIV] = 10,
	[OP_MOD] = 10, [OP_POW] = 11,
};

#define PREC_POW 11

/* The binary operator at P (blanks skipped by the caller) and its length. */
static enum binop
peek_binop(const char *p, size_t *len)
{
	*len = 1;
	switch (p[0]) {
	case '|':
		if (p[1] == '|')
			return *len = 2, OP_LOR;
		return p[1] == '=' ? OP_NONE : OP_BOR;
	case '&':
		if (p[1] == '&')
			return *len = 2, OP_LAND;
		return p[1] == '=' ? OP_NONE : OP_BAND;
	case '^':
		return p[1] == '=' ? OP_NONE : OP_BXOR;
	case '=':
		return p[1] == '=' ? (*len = 2, OP_EQ) : OP_NONE;
	case '!':
		return p[1] == '=' ? (*len = 2, OP_NE) : OP_NONE;
	case '<':
		if (p[1] == '<')
			return p[2] == '=' ? OP_NONE : (*len = 2, OP_SHL);
		if (p[1] == '=')
			return *len = 2, OP_LE;
		return OP_LT;
	case '>':
		if (p[1] == '>')
			return p[2] == '=' ? OP_NONE : (*len = 2, OP_SHR);
		if (p[1] == '=')
			return *len = 2, OP_GE;
		return OP_GT;
	case '+':
		return p[1] == '=' || (p[1] == '+' && name_follows(p + 2)) ? OP_NONE : OP_ADD;
	case '-':
		return p[1] == '=' || (p[1] == '-' && name_follows(p + 2)) ? OP_NONE : OP_SUB;
	case '*':
		if (p[1] == '*')
			return p[2] == '=' ? OP_NONE : (*len = 2, OP_POW);
		return p[1] == '=' ? OP_NONE : OP_MUL;
	case '/':
		return p[1] == '=' ? OP_NONE : OP_DIV;
	case '%':
		return p[1] == '=' ? OP_NONE : OP_MOD;
	default:
		return OP_NONE;
	}
}

/* Operators of precedence >= MIN after a unary operand. */
static intmax_t
ax_binary(struct ax *a, int min)
{
	intmax_t v = ax_primary(a);
	for (;;) {
		/* after an error parsing goes on without effects (lval_set), as it did */
		ws(a);
		size_t len;
		enum binop op = peek_binop(a->p, &len);
		int prec = binop_prec[op];
		if (op == OP_NONE || prec < min)
			return v;
		a->lastop = a->p;
		a->p += len;
		if (op == OP_LAND || op == OP_LOR) {
			bool save = a->noeval;
			if (op == OP_LAND ? !v : v != 0)
				a->noeval = true;
			intmax_t r = ax_binary(a, prec + 1);
			a->noeval = save;
			v = op == OP_LAND ? (v && r) : (v || r);
			continue;
		}
		if (op == OP_POW) {
			if (++a->depth > SH_MAX_PARSE_DEPTH) {
				ax_fail(a, "expression nesting too deep", a->p);
				return 0;
			}
			intmax_t e = ax_binary(a, PREC_POW); /* right-associative */
			a->depth--;
			if (e < 0) {
				ax_fail(a, "exponent less than 0", a->p);
				v = 0;
				continue;
			}
			/* by squaring: the same product modulo 2^64, in 64 steps at most */
			uintmax_t r = 1, b = (uintmax_t)v;
			for (uintmax_t k = (uintmax_t)e; k; k >>= 1) {
				if (k & 1)
					r *= b;
				b *= b;
			}
			v = (intmax_t)r;
			continue;
		}
		ws(a);
		const char *tok = a->p;
		intmax_t r = ax_binary(a, prec + 1);
		switch (op) {
		case OP_BOR: v |= r; break;
		case OP_BXOR: v ^= r; break;
		case OP_BAND: v &= r; break;
		case OP_EQ: v = v == r; break;
		case OP_NE: v = v != r; break;
		case OP_LE: v = v <= r; break;
		case OP_GE: v = v >= r; break;
		case OP_LT: v = v < r; break;
		case OP_GT: v = v > r; break;
		case OP_SHL: v = (intmax_t)((uintmax_t)v << (r & 63)); break;
		case OP_SHR: v = v >> (r & 63); break;
		case OP_ADD: v = (intmax_t)((uintmax_t)v + (uintmax_t)r); break;
		case OP_SUB: v = (intmax_t)((uintmax_t)v - (uintmax_t)r); break;
		case OP_MUL: v = (intmax_t)((uintmax_t)v * (uintmax_t)r); break;
		case OP_DIV:
		case OP_MOD:
			if (r == 0 && !a->noeval) {
				ax_fail(a, "division by 0", tok);
				v = 0;
				break;
			}
			if (r == 0)
				v = 0;
			else if (r == -1)
				v = op == OP_DIV ? (intmax_t)-(uintmax_t)v : 0;
			else
				v = op == OP_DIV ? v / r : v % r;
			break;
		default: break;
		}
	}
}

static intmax_t
ax_lor(struct ax *a)
{
	return ax_binary(a, 1);
}

/* Counts a level of the recursive descent (?: and assignments nest to the
 * right); false past SH_MAX_PARSE_DEPTH, after failing. */
static bool
ax_enter(struct ax *a)
{
	if (sh_stack_exhausted(a->sh)) {
		a->err = true; /* said */
		a->errmsg = NULL;
		return false;
	}
	if (++a->depth > SH_MAX_PARSE_DEPTH) {
		ax_fail(a, "expression nesting too deep", a->p);
		a->depth--;
		return false;
	}
	return true;
}

/* FN one level deeper. */
static intmax_t
ax_nested(struct ax *a, intmax_t (*fn)(struct ax *))
{
	if (!ax_enter(a))
		return 0;
	intmax_t v = fn(a);
	a->depth--;
	return v;
}

static intmax_t ax_cond_in(struct ax *a);

static intmax_t
ax_cond(struct ax *a)
{
	return ax_nested(a, ax_cond_in);
}

static intmax_t
ax_cond_in(struct ax *a)
{
	intmax_t c = ax_lor(a);
	if (eat(a, "?")) {
		bool save = a->noeval;
		if (!c)
			a->noeval = true;
		intmax_t x = ax_assign(a);
		a->noeval = save;
		if (!eat(a, ":")) {
			ax_fail(a, "expected `:'", a->p);
			return 0;
		}
		if (c)
			a->noeval = true;
		intmax_t y = ax_cond(a);
		a->noeval = save;
		return c ? x : y;
	}
	return c;
}

static intmax_t ax_assign_in(struct ax *a);

static intmax_t
ax_assign(struct ax *a)
{
	return ax_nested(a, ax_assign_in);
}

static intmax_t
ax_assign_in(struct ax *a)
{
	ws(a);
	const char *save = a->p;
	struct lval lv;
	if (parse_lval(a, &lv) && !a->err) {
		ws(a);
		/* "=" (not "=="), OP= for + - * / % & ^ |, "<<=" and ">>=" */
		int i = -1;
		size_t n = 0;
		const char *p = a->p;
		switch (p[0]) {
		case '=': if (p[1] != '=') i = 0, n = 1; break;
		case '+': if (p[1] == '=') i = 1, n = 2; break;
		case '-': if (p[1] == '=') i = 2, n = 2; break;
		case '*': if (p[1] == '=') i = 3, n = 2; break;
		case '/': if (p[1] == '=') i = 4, n = 2; break;
		case '%': if (p[1] == '=') i = 5, n = 2; break;
		case '<': if (p[1] == '<' && p[2] == '=') i = 6, n = 3; break;
		case '>': if (p[1] == '>' && p[2] == '=') i = 7, n = 3; break;
		case '&': if (p[1] == '=') i = 8, n = 2; break;
		case '^': if (p[1] == '=') i = 9, n = 2; break;
		case '|': if (p[1] == '=') i = 10, n = 2; break;
		default: break;
		}
		if (i >= 0) {
			a->p += n;
			intmax_t r = ax_assign(a);
			intmax_t v = r;
			if (i > 0) {
				intmax_t cur = lval_get(a, &lv);
				switch (i) {
				case 1: v = (intmax_t)((uintmax_t)cur + (uintmax_t)r); break;
				case 2: v = (intmax_t)((uintmax_t)cur - (uintmax_t)r); break;
				case 3: v = (intmax_t)((uintmax_t)cur * (uintmax_t)r); break;
				case 4:
				case 5:
					if (r == 0) {
						ax_fail(a, "division by 0", a->p);
						return 0;
					}
					v = r == -1 ? (i == 4 ? (intmax_t)-(uintmax_t)cur : 0)
						    : (i == 4 ? cur / r : cur % r);
					break;
				case 6: v = (intmax_t)((uintmax_t)cur << (r & 63)); break;
				case 7: v = cur >> (r & 63); break;
				case 8: v = cur & r; break;
				case 9: v = cur ^ r; break;
				case 10: v = cur | r; break;
				default: break;
				}
			}
			lval_set(a, &lv, v);
			return v;
		}
	}
	a->p = save;
	a->err = false;
	return ax_cond(a);
}

static intmax_t
ax_comma(struct ax *a)
{
	intmax_t v = ax_assign(a);
	while (!a->err && eat(a, ","))
		v = ax_assign(a);
	return v;
}

int
arith_eval(struct sh_shell *sh, const char *expr, intmax_t *out)
{
	struct ax_held *held = NULL;
	struct ax a = {.sh = sh, .s = expr, .p = expr, .held = &held};
	sh->arith_readonly = false;
	ws(&a);
	intmax_t v = 0;
	if (*a.p)
		v = ax_comma(&a);
	ws(&a);
	if (!a.err && *a.p) {
		/* (an increment before a name where an operator belongs: 0++b) */
		if (*a.p == ')' || *a.p == '(' || isalnum((unsigned char)*a.p) ||
		    ((*a.p == '+' || *a.p == '-') && a.p[1] == *a.p))
			ax_fail(&a, "syntax error in expression", a.p);
		else
			ax_fail(&a, "syntax error: invalid arithmetic operator", a.p);
	}
	if (a.err) {
		if (a.errmsg && a.errmsg[0] == 'u') {
			/* bash ends the shell here, whatever evaluates it (( )), let) */
			sh_err(sh, "%s: unbound variable", a.s);
			sh_fatal(sh, SH_FATAL_UNSET);
		} else if (a.errmsg) {
			/* the expression and the token as bash shows them: leading blanks
			 * dropped, trailing ones kept */
			size_t n = strlen(a.s);
			const char *t = a.errtok ? a.errtok : "";
			while (*t == ' ' || *t == '\t' || *t == '\n')
				t++;
			if (!*t && a.lastop)
				t = a.lastop;
			size_t tn = strlen(t);
			const char *st = a.s;
			while (*st == ' ' || *st == '\t' || *st == '\n') {
				st++;
				n--;
			}
			/* long expressions are cut (a message stays one readable line) */
			const char *more = n > 200 ? "..." : "";
			const char *tmore = tn > 200 ? "..." : "";
			const char *who = sh->arith_who ? sh->arith_who : "";
			sh_err(sh, "%s%s%.*s%s: %s (error token is \"%.*s%s\")", who, *who ? ": " : "",
			       (int)(n > 200 ? 200 : n), st, more, a.errmsg, (int)(tn > 200 ? 200 : tn), t,
			       tmore);
		}
	} else {
		*out = v;
	}
	while (held) {
		struct ax_held *h = held;
		held = h->next;
		free(h->s);
		free(h);
	}
	return a.err ? -1 : 0;
}
