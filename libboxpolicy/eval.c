/*
 * eval.c — Cedar values and the evaluator: extension types (ipaddr, decimal,
 * datetime, duration), `like`, equality, short-circuit evaluation with
 * overflow as an error, and the Box decision rule (deny by default, forbid
 * overrides, any evaluation error denies).
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

/* ---- extension parsing ---- */

static bool
parse_v4(const char *s, size_t n, uint8_t out[4])
{
	size_t i = 0;
	for (int part = 0; part < 4; part++) {
		if (part) {
			if (i >= n || s[i] != '.')
				return false;
			i++;
		}
		size_t start = i;
		unsigned v = 0;
		while (i < n && s[i] >= '0' && s[i] <= '9' && i - start < 3) {
			v = v * 10 + (unsigned)(s[i] - '0');
			i++;
		}
		if (i == start || v > 255 || (i - start > 1 && s[start] == '0'))
			return false;
		out[part] = (uint8_t)v;
	}
	return i == n;
}

static int
hexd(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool
parse_v6(const char *s, size_t n, uint8_t out[16])
{
	uint16_t head[8], tail[8];
	size_t nh = 0, nt = 0;
	bool gap = false;
	size_t i = 0;
	if (n >= 2 && s[0] == ':' && s[1] == ':') {
		gap = true;
		i = 2;
		if (i == n) {
			memset(out, 0, 16);
			return true;
		}
	} else if (n >= 1 && s[0] == ':') {
		return false;
	}
	for (;;) {
		/* an embedded IPv4 at the end? */
		size_t j = i;
		while (j < n && s[j] != ':' && s[j] != '.')
			j++;
		if (j < n && s[j] == '.') {
			uint8_t v4[4];
			if (!parse_v4(s + i, n - i, v4))
				return false;
			uint16_t *dst = gap ? tail : head;
			size_t *cnt = gap ? &nt : &nh;
			if (*cnt + 2 > 8)
				return false;
			dst[(*cnt)++] = (uint16_t)(v4[0] << 8 | v4[1]);
			dst[(*cnt)++] = (uint16_t)(v4[2] << 8 | v4[3]);
			i = n;
			break;
		}
		unsigned v = 0;
		size_t start = i;
		while (i < n && hexd(s[i]) >= 0 && i - start < 4) {
			v = v * 16 + (unsigned)hexd(s[i]);
			i++;
		}
		if (i == start)
			return false;
		uint16_t *dst = gap ? tail : head;
		size_t *cnt = gap ? &nt : &nh;
		if (*cnt >= 8)
			return false;
		dst[(*cnt)++] = (uint16_t)v;
		if (i == n)
			break;
		if (s[i] != ':')
			return false;
		i++;
		if (i < n && s[i] == ':') {
			if (gap)
				return false;
			gap = true;
			i++;
			if (i == n)
				break;
		} else if (i == n) {
			return false;
		}
	}
	if (gap ? nh + nt > 7 : nh != 8)
		return false;
	uint16_t words[8] = { 0 };
	memcpy(words, head, nh * sizeof(uint16_t));
	memcpy(words + 8 - nt, tail, nt * sizeof(uint16_t));
	for (int k = 0; k < 8; k++) {
		out[2 * k] = (uint8_t)(words[k] >> 8);
		out[2 * k + 1] = (uint8_t)words[k];
	}
	return true;
}

bool
parse_ip(const char *s, size_t n, struct val *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->t = V_IP;
	const char *slash = memchr(s, '/', n);
	size_t an = slash ? (size_t)(slash - s) : n;
	bool v6 = memchr(s, ':', an) != NULL;
	if (v6) {
		if (!parse_v6(s, an, ret->u.ip))
			return false;
	} else {
		if (!parse_v4(s, an, ret->u.ip))
			return false;
	}
	ret->ip_v6 = v6;
	unsigned max = v6 ? 128 : 32;
	ret->ip_prefix = (uint8_t)max;
	if (slash) {
		const char *p = slash + 1;
		size_t pn = n - an - 1;
		if (pn == 0 || pn > 3 || (pn > 1 && p[0] == '0'))
			return false;
		unsigned v = 0;
		for (size_t i = 0; i < pn; i++) {
			if (p[i] < '0' || p[i] > '9')
				return false;
			v = v * 10 + (unsigned)(p[i] - '0');
		}
		if (v > max)
			return false;
		ret->ip_prefix = (uint8_t)v;
	}
	return true;
}

bool
parse_decimal(const char *s, size_t n, int64_t *ret)
{
	size_t i = 0;
	bool neg = false;
	if (i < n && s[i] == '-') {
		neg = true;
		i++;
	}
	size_t start = i;
	__int128 v = 0;
	while (i < n && s[i] >= '0' && s[i] <= '9') {
		v = v * 10 + (s[i] - '0');
		if (v > (__int128)INT64_MAX * 2)
			return false;
		i++;
	}
	if (i == start || i >= n || s[i] != '.')
		return false;
	i++;
	size_t fstart = i;
	while (i < n && s[i] >= '0' && s[i] <= '9' && i - fstart < 5) {
		v = v * 10 + (s[i] - '0');
		i++;
	}
	size_t digits = i - fstart;
	if (digits == 0 || digits > 4 || i != n)
		return false;
	for (size_t k = digits; k < 4; k++)
		v *= 10;
	if (neg)
		v = -v;
	if (v > INT64_MAX || v < INT64_MIN)
		return false;
	*ret = (int64_t)v;
	return true;
}

static bool
digits(const char *s, size_t n, size_t at, size_t count, int *out)
{
	if (at + count > n)
		return false;
	int v = 0;
	for (size_t i = 0; i < count; i++) {
		if (s[at + i] < '0' || s[at + i] > '9')
			return false;
		v = v * 10 + (s[at + i] - '0');
	}
	*out = v;
	return true;
}

static int64_t
days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	const int64_t era = (y >= 0 ? y : y - 399) / 400;
	const unsigned yoe = (unsigned)(y - era * 400);
	const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

bool
parse_datetime(const char *s, size_t n, int64_t *ret)
{
	int y, mo, d, h = 0, mi = 0, se = 0, ms = 0, oh = 0, om = 0, sign = 0;
	if (!digits(s, n, 0, 4, &y) || n < 10 || s[4] != '-' || !digits(s, n, 5, 2, &mo) ||
	    s[7] != '-' || !digits(s, n, 8, 2, &d))
		return false;
	size_t i = 10;
	if (i < n) {
		if (s[i] != 'T' || !digits(s, n, 11, 2, &h) || n < 19 || s[13] != ':' ||
		    !digits(s, n, 14, 2, &mi) || s[16] != ':' || !digits(s, n, 17, 2, &se))
			return false;
		i = 19;
		if (i < n && s[i] == '.') {
			if (!digits(s, n, 20, 3, &ms))
				return false;
			i = 23;
		}
		if (i >= n)
			return false;
		if (s[i] == 'Z') {
			i++;
		} else if (s[i] == '+' || s[i] == '-') {
			sign = s[i] == '+' ? 1 : -1;
			if (!digits(s, n, i + 1, 2, &oh) || !digits(s, n, i + 3, 2, &om))
				return false;
			if (oh > 23 || om > 59)
				return false;
			i += 5;
		} else {
			return false;
		}
		if (i != n)
			return false;
	}
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || se > 59)
		return false;
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo == 2 && d == 29 && !leap)
		return false;
	int64_t days = days_from_civil(y, (unsigned)mo, (unsigned)d);
	int64_t v = ((days * 24 + h) * 60 + mi) * 60 + se;
	v = v * 1000 + ms;
	v -= (int64_t)sign * ((int64_t)oh * 3600 + (int64_t)om * 60) * 1000;
	*ret = v;
	return true;
}

bool
parse_duration(const char *s, size_t n, int64_t *ret)
{
	size_t i = 0;
	bool neg = false;
	if (i < n && s[i] == '-') {
		neg = true;
		i++;
	}
	static const struct {
		const char *u;
		int64_t ms;
	} units[] = { { "d", 86400000 }, { "h", 3600000 }, { "ms", 1 }, { "m", 60000 }, { "s", 1000 } };
	int order[] = { 0, 1, 3, 4, 2 }; /* d h m s ms */
	int last = -1;
	__int128 total = 0;
	bool any = false;
	while (i < n) {
		size_t start = i;
		__int128 v = 0;
		while (i < n && s[i] >= '0' && s[i] <= '9') {
			v = v * 10 + (s[i] - '0');
			if (v > INT64_MAX)
				return false;
			i++;
		}
		if (i == start)
			return false;
		int u = -1;
		for (int k = 0; k < 5; k++) {
			size_t ul = strlen(units[k].u);
			if (i + ul <= n && memcmp(s + i, units[k].u, ul) == 0 &&
			    !(k == 3 && i + 1 < n && s[i + 1] == 's')) {
				u = k;
				i += ul;
				break;
			}
		}
		if (u < 0)
			return false;
		int pos = 0;
		while (order[pos] != u)
			pos++;
		if (pos <= last)
			return false;
		last = pos;
		total += v * units[u].ms;
		if (total > INT64_MAX)
			return false;
		any = true;
	}
	if (!any)
		return false;
	*ret = neg ? -(int64_t)total : (int64_t)total;
	return true;
}

/* ---- equality, like ---- */

static bool
str_eq(const char *a, size_t an, const char *b, size_t bn)
{
	return an == bn && memcmp(a, b, an) == 0;
}

static bool
set_has(const struct val *set, const struct val *x)
{
	for (uint32_t i = 0; i < set->len; i++)
		if (val_eq(&set->u.items[i], x))
			return true;
	return false;
}

bool
val_eq(const struct val *a, const struct val *b)
{
	if (a->t != b->t)
		return false;
	switch (a->t) {
	case V_BOOL: return a->u.b == b->u.b;
	case V_LONG:
	case V_DEC:
	case V_DATETIME:
	case V_DURATION: return a->u.l == b->u.l;
	case V_STR: return str_eq(a->u.s, a->len, b->u.s, b->len);
	case V_ENT:
		return (a->u.e.etype == b->u.e.etype || strcmp(a->u.e.etype, b->u.e.etype) == 0) &&
		       str_eq(a->u.e.id, a->len, b->u.e.id, b->len);
	case V_IP:
		return a->ip_v6 == b->ip_v6 && a->ip_prefix == b->ip_prefix &&
		       memcmp(a->u.ip, b->u.ip, 16) == 0;
	case V_SET:
		for (uint32_t i = 0; i < a->len; i++)
			if (!set_has(b, &a->u.items[i]))
				return false;
		for (uint32_t i = 0; i < b->len; i++)
			if (!set_has(a, &b->u.items[i]))
				return false;
		return true;
	case V_REC:
		if (a->len != b->len)
			return false;
		for (uint32_t i = 0; i < a->len; i++) {
			bool found = false;
			for (uint32_t j = 0; j < b->len && !found; j++)
				if (strcmp(a->u.rec[i].name, b->u.rec[j].name) == 0) {
					if (!val_eq(&a->u.rec[i].v, &b->u.rec[j].v))
						return false;
					found = true;
				}
			if (!found)
				return false;
		}
		return true;
	default: return false;
	}
}

bool
like_match(const struct pattern *p, const char *s, size_t n)
{
	if (p->n_runs == 1)
		return str_eq(p->runs[0], p->lens[0], s, n);
	size_t first = p->lens[0], last = p->lens[p->n_runs - 1];
	if (first + last > n || memcmp(s, p->runs[0], first) != 0 ||
	    memcmp(s + n - last, p->runs[p->n_runs - 1], last) != 0)
		return false;
	size_t pos = first, end = n - last;
	for (size_t r = 1; r + 1 < p->n_runs; r++) {
		size_t len = p->lens[r];
		if (len == 0)
			continue;
		if (end - pos < len)
			return false;
		const char *hit = memmem(s + pos, end - pos, p->runs[r], len);
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
		out->u.b = set_has(&recv, &arg);
		return 0;
	case M_CONTAINS_ALL:
		if (recv.t != V_SET || arg.t != V_SET)
			return EV_ERR;
		out->u.b = true;
		for (uint32_t i = 0; i < arg.len && out->u.b; i++)
			out->u.b = set_has(&recv, &arg.u.items[i]);
		return 0;
	case M_CONTAINS_ANY:
		if (recv.t != V_SET || arg.t != V_SET)
			return EV_ERR;
		out->u.b = false;
		for (uint32_t i = 0; i < arg.len && !out->u.b; i++)
			out->u.b = set_has(&recv, &arg.u.items[i]);
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
				out->u.b = set_has(&r, &l);
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
	d->cap_work = cap;
	d->cap_rules = cap;
	return 0;
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
	d->verdict = BP_DENY;
	arena_reset(&d->scratch);
	if (req->action == SIZE_MAX || req->problem[0] || req->action_pending) {
		d->cause = BP_CAUSE_ERROR;
		return format_message(p, req, d);
	}
	const struct rtype *in = &p->schema.actions[req->action].input;
	for (size_t i = 0; i < in->n; i++)
		if (!in->attrs[i].optional && !request_field(req, in->attrs[i].atom)) {
			d->cause = BP_CAUSE_ERROR;
			return format_message(p, req, d);
		}
	size_t nf = 0, np = 0, ne = 0;
	const size_t *cand = p->by_action[req->action];
	size_t n = p->n_by_action[req->action];
	struct ev x = { .p = p, .req = req, .hook = hook, .scratch = &d->scratch };
	for (size_t k = 0; k < n; k++) {
		size_t i = cand[k];
		const struct rule *rule = &p->rules[i];
		bool sat = true;
		if (rule->cond) {
			x.rule = i;
			x.depth = 0;
			if (ev_bool(&x, rule->cond, &sat) < 0) {
				d->errors[ne++] = i;
				continue;
			}
		}
		if (!sat)
			continue;
		if (rule->forbid)
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
	} else {
		d->cause = BP_CAUSE_NO_MATCH;
		src = NULL;
	}
	if (src)
		memcpy(d->rules, src, d->n_rules * sizeof(*src));
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
	default: return "error";
	}
}
