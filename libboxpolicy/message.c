/* SPDX-License-Identifier: Apache-2.0 */
/*
 * message.c — the decision message of docs/box-policy.5.md, byte-exact: resource
 * label per action, escaping of the resource (Rust char::escape_debug) and of
 * rule ids and descriptions, forbids sorted by rule id, 1024-byte resource
 * and 4096-byte message caps.
 *
 * Trusts: nothing about the strings (request values may hold any bytes,
 * including invalid UTF-8, which is shown as U+FFFD).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct out {
	char *p;
	size_t len, cap; /* cap excludes the NUL */
	bool full;
};

static void
put(struct out *o, const char *s, size_t n)
{
	if (o->len + n > o->cap) {
		o->full = true;
		n = o->cap - o->len;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
	o->p[o->len] = 0;
}

static void
puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* Decode one UTF-8 scalar; invalid sequences yield U+FFFD and consume one byte. */
static size_t
utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t v;
	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if ((c & 0xE0) == 0xC0) {
		len = 2;
		v = c & 0x1F;
	} else if ((c & 0xF0) == 0xE0) {
		len = 3;
		v = c & 0x0F;
	} else if ((c & 0xF8) == 0xF0) {
		len = 4;
		v = c & 0x07;
	} else {
		*cp = 0xFFFD;
		return 1;
	}
	if (len > n) {
		*cp = 0xFFFD;
		return 1;
	}
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80) {
			*cp = 0xFFFD;
			return 1;
		}
		v = (v << 6) | (s[i] & 0x3F);
	}
	if ((len == 2 && v < 0x80) || (len == 3 && v < 0x800) || (len == 4 && v < 0x10000) ||
	    v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
		*cp = 0xFFFD;
		return 1;
	}
	*cp = v;
	return len;
}


/* Rust's char::is_printable false, or a grapheme extender (approximated). */
static bool
needs_unicode_escape(uint32_t cp)
{
	if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0xAD)
		return true;
	if (cp >= 0x300 && cp <= 0x36F) /* combining diacritical marks */
		return true;
	if (cp == 0x61C || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) ||
	    (cp >= 0x2060 && cp <= 0x206F) || cp == 0xFEFF || (cp >= 0xFFF9 && cp <= 0xFFFB) ||
	    cp == 0xFFFE || cp == 0xFFFF)
		return true;
	if ((cp >= 0xE000 && cp <= 0xF8FF) || cp >= 0xF0000 || (cp >= 0xE0000 && cp <= 0xE0FFF))
		return true;
	return false;
}

/* One character's escape_debug (debug=true) or escape_default text into buf. */
static size_t
escape_char(uint32_t cp, bool debug, char *buf)
{
	switch (cp) {
	case '\t': memcpy(buf, "\\t", 2); return 2;
	case '\r': memcpy(buf, "\\r", 2); return 2;
	case '\n': memcpy(buf, "\\n", 2); return 2;
	case '\\': memcpy(buf, "\\\\", 2); return 2;
	case '\'': memcpy(buf, "\\'", 2); return 2;
	case '"': memcpy(buf, "\\\"", 2); return 2;
	case 0:
		if (debug) {
			memcpy(buf, "\\0", 2);
			return 2;
		}
		break;
	default:
		break;
	}
	return (size_t)snprintf(buf, 16, "\\u{%x}", cp);
}

static bool
plain_byte(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '\\' && c != '\'' && c != '"';
}

/* How many bytes from S on need no escape: eight at a time while none of them does. */
static size_t
plain_run(const char *s, size_t n)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = ones * 0x80;
	size_t j = 0;
	for (; j + 8 <= n; j += 8) {
		uint64_t x;
		memcpy(&x, s + j, 8);
		/* a byte below 0x20 or from 0x80 up, or equal to 0x7f, `\\`, `'` or `"` */
		uint64_t bad = ((x - ones * 0x20) & ~x) | x;
		const uint64_t eq[] = { x ^ (ones * 0x7f), x ^ (ones * '\\'), x ^ (ones * '\''),
					x ^ (ones * '"') };
		for (size_t k = 0; k < 4; k++)
			bad |= (eq[k] - ones) & ~eq[k];
		if (bad & highs)
			break;
	}
	while (j < n && plain_byte((unsigned char)s[j]))
		j++;
	return j;
}

/* ESC_Q of the resource into o, at most 1024 bytes of escaped text, then "...". */
static void
put_resource(struct out *o, const char *s, size_t n)
{
	size_t used = 0;
	for (size_t i = 0; i < n;) {
		/* a run of printable ASCII needing no escape, at once */
		size_t j = i + plain_run(s + i, n - i);
		if (j > i) {
			size_t m = j - i;
			if (used + m > 1024) {
				/* as one character at a time: up to 1024 bytes, then "..." */
				put(o, s + i, 1024 - used);
				puts_(o, "...");
				return;
			}
			put(o, s + i, m);
			used += m;
			i = j;
			continue;
		}
		uint32_t cp;
		size_t len = utf8_next((const unsigned char *)s + i, n - i, &cp);
		char buf[16];
		size_t bl;
		if (cp == '\t' || cp == '\r' || cp == '\n' || cp == '\\' || cp == '\'' || cp == '"' ||
		    needs_unicode_escape(cp))
			bl = escape_char(cp, true, buf);
		else
			bl = bp_utf8_put(buf, cp);
		if (used + bl > 1024) {
			puts_(o, "...");
			return;
		}
		put(o, buf, bl);
		used += bl;
		i += len;
	}
}

/* ESC_A: escape only control characters, `\` and the bidi/format characters. */
static void
put_annotation(struct out *o, const char *s)
{
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t len = utf8_next((const unsigned char *)s + i, n - i, &cp);
		char buf[16];
		size_t bl;
		if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == '\\' || cp == 0x61C ||
		    cp == 0x200E || cp == 0x200F || (cp >= 0x2028 && cp <= 0x202E) ||
		    (cp >= 0x2066 && cp <= 0x2069))
			bl = escape_char(cp, false, buf);
		else
			bl = bp_utf8_put(buf, cp);
		put(o, buf, bl);
		i += len;
	}
}

const char *const label_field_names[LF_COUNT] = {
	[LF_PATH] = "path", [LF_HOST] = "host", [LF_PORT] = "port", [LF_PROGRAM] = "program",
	[LF_PROGRAM_PATH] = "program_path", [LF_SERVER] = "server", [LF_TOOL] = "tool",
	[LF_PROMPT] = "prompt", [LF_URI] = "uri", [LF_METHOD] = "method",
};

static const struct val *
field(const struct bp_request *r, enum label_field f)
{
	return request_field(r, r->p->label_atom[f]);
}

/*
 * A resource label being built. Only its first LABEL_KEEP bytes can show:
 * put_resource writes at least one byte per input byte and stops at 1024,
 * so a longer label is cut here (no allocation) and still ends in "...".
 */
#define LABEL_KEEP 1100
struct label {
	char p[LABEL_KEEP];
	size_t len;
};

static void
label_put(struct label *l, const char *s, size_t n)
{
	if (n > LABEL_KEEP - l->len)
		n = LABEL_KEEP - l->len;
	memcpy(l->p + l->len, s, n);
	l->len += n;
}

static void
put_str_field(struct label *b, const struct bp_request *r, enum label_field f)
{
	const struct val *v = field(r, f);
	if (v && v->t == V_STR)
		label_put(b, v->u.s, v->len);
}

static void
put_port(struct label *b, const struct bp_request *r)
{
	const struct val *v = field(r, LF_PORT);
	if (!v || v->t != V_LONG)
		return;
	char digits[24];
	size_t n = sizeof(digits);
	uint64_t u = v->u.l < 0 ? -(uint64_t)v->u.l : (uint64_t)v->u.l;
	do
		digits[--n] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v->u.l < 0)
		digits[--n] = '-';
	digits[--n] = ':';
	label_put(b, digits + n, sizeof(digits) - n);
}

static void
resource_label(const struct bp_request *req, struct label *b)
{
	if (req->resource_set) {
		label_put(b, req->resource, req->resource_len);
		return;
	}
	if (req->action_pending && req->pending_name) {
		label_put(b, req->pending_name, strlen(req->pending_name));
		return;
	}
	if (req->action == SIZE_MAX)
		return;
	const struct s_action *a = &req->p->schema.actions[req->action];
	switch (a->label) {
	case LABEL_PATH: put_str_field(b, req, LF_PATH); break;
	case LABEL_HOSTPORT:
		put_str_field(b, req, LF_HOST);
		put_port(b, req);
		break;
	case LABEL_HTTP:
		put_str_field(b, req, LF_HOST);
		put_port(b, req);
		put_str_field(b, req, LF_PATH);
		break;
	case LABEL_PROGRAM: put_str_field(b, req, LF_PROGRAM); break;
	case LABEL_PROGRAM_PATH: put_str_field(b, req, LF_PROGRAM_PATH); break;
	case LABEL_MCP: {
		put_str_field(b, req, LF_SERVER);
		label_put(b, "/", 1);
		static const enum label_field alts[] = { LF_TOOL, LF_PROMPT, LF_URI, LF_METHOD };
		for (size_t i = 0; i < 4; i++) {
			const struct val *v = field(req, alts[i]);
			if (v && v->t == V_STR) {
				label_put(b, v->u.s, v->len);
				break;
			}
		}
		break;
	}
	case LABEL_TOOL:
		label_put(b, a->ns, strlen(a->ns));
		label_put(b, "/", 1);
		label_put(b, a->id, strlen(a->id));
		break;
	default: break;
	}
}

static int
cmp_rule_name(const struct bp_policy *p, size_t x, size_t y)
{
	int c = strcmp(p->rules[x].name, p->rules[y].name);
	if (c)
		return c;
	return x < y ? -1 : x > y;
}

/*
 * Sort the N rule indices of V by name (then index) with TMP (N entries) as
 * scratch: a bottom-up merge sort. Not qsort_r: glibc's calls sysinfo(2) for
 * arrays over 1 KiB (a decision with more than 128 forbids), which
 * box-policyd's seccomp allow-list kills.
 */
static void
sort_rules(const struct bp_policy *p, size_t *v, size_t *tmp, size_t n)
{
	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				tmp[k++] = cmp_rule_name(p, v[i], v[j]) <= 0 ? v[i++] : v[j++];
			while (i < mid)
				tmp[k++] = v[i++];
			while (j < hi)
				tmp[k++] = v[j++];
		}
		memcpy(v, tmp, n * sizeof(*v));
	}
}

int
format_message(const struct bp_policy *p, const struct bp_request *req, struct bp_decision *d)
{
	/* written in place: a message over BP_MAX_MESSAGE bytes fills it (o.full), then is cut */
	struct out o = { .p = d->msg, .cap = BP_MAX_MESSAGE };
	d->msg[0] = 0;
	struct label label;
	label.len = 0;
	const char *lp;
	size_t ll;
	/* a label that is one string field is used where it is (no copy) */
	const struct val *one = NULL;
	if (!req->resource_set && !req->action_pending && req->action != SIZE_MAX) {
		switch (req->p->schema.actions[req->action].label) {
		case LABEL_PATH: one = field(req, LF_PATH); break;
		case LABEL_PROGRAM: one = field(req, LF_PROGRAM); break;
		case LABEL_PROGRAM_PATH: one = field(req, LF_PROGRAM_PATH); break;
		default: break;
		}
		if (one && one->t != V_STR)
			one = NULL;
	}
	if (one) {
		lp = one->u.s;
		ll = one->len;
	} else {
		resource_label(req, &label);
		lp = label.p;
		ll = label.len;
	}
	puts_(&o, d->verdict == BP_PERMIT ? "policy permitted this operation"
					  : "policy denied this operation");
	if (ll > 0) {
		puts_(&o, " on '");
		put_resource(&o, lp, ll);
		puts_(&o, "'");
	}
	switch (d->cause) {
	case BP_CAUSE_PERMITTED:
	case BP_CAUSE_NOT_REFINED: puts_(&o, "."); break;
	case BP_CAUSE_NO_MATCH:
		puts_(&o, " [default-deny]: No permit policy matched this request.");
		break;
	case BP_CAUSE_ERROR:
		if (req->action_pending && req->pending_failed) {
			puts_(&o, " [policy-failed]: ");
			put_annotation(&o, req->pending_failed);
			puts_(&o, ".");
		} else if (req->action_pending) {
			puts_(&o, " [policy-pending]: The tool schema of this MCP server is not "
				  "known yet (no tools/list seen).");
		} else {
			puts_(&o, " because the request could not be evaluated.");
		}
		break;
	case BP_CAUSE_FORBIDDEN:
	default: {
		size_t n = d->n_rules;
		size_t stack[128];
		size_t *order = n <= 64 ? stack : malloc(2 * n * sizeof(*order));
		if (!order)
			return -ENOMEM;
		memcpy(order, d->rules, n * sizeof(*order));
		sort_rules(p, order, order + n, n);
		for (size_t i = 0; i < n && !o.full; i++) {
			const struct rule *r = &p->rules[order[i]];
			puts_(&o, i == 0 ? " [policy: " : "; [policy: ");
			put_annotation(&o, r->name);
			puts_(&o, "]");
			if (r->desc) {
				puts_(&o, ": ");
				put_annotation(&o, r->desc);
			}
		}
		if (order != stack)
			free(order);
		char last = o.len ? o.p[o.len - 1] : 0;
		if (last != '.' && last != '!' && last != '?')
			puts_(&o, ".");
		break;
	}
	}
	/* whole message: at most 4096 bytes (4093 + "...") on a character boundary */
	if (o.len > BP_MAX_MESSAGE || o.full) {
		size_t cut = BP_MAX_MESSAGE - 3;
		while (cut > 0 && ((unsigned char)o.p[cut] & 0xC0) == 0x80)
			cut--;
		memcpy(d->msg + cut, "...", 4);
	}
	return 0;
}
