/* SPDX-License-Identifier: Apache-2.0 */
/*
 * otlp_json.c — OTLP/JSON parser and printer, binary nesting check (otlp_json.h).
 *
 * The parser is recursive descent straight into protobuf-c structures laid
 * out by the descriptors (field offsets, quantifier offsets for repeated
 * counts and oneof cases); its recursion is bounded by OTLP_NEST_MAX, every
 * allocation is charged to the caller's budget before it is made. Numbers
 * follow JSON's grammar exactly; an integer field takes a number without
 * fraction or exponent, or a string holding one (the proto3 JSON mapping),
 * in its type's range. Strings are checked as UTF-8 (escapes included:
 * surrogates must pair; \u0000 is refused, a C string cannot hold it).
 * Trusts: nothing in the input.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "otlp_json.h"
#include "parse.h"
#include "walk.h" /* box_proto_unpack_capped */

/* ------------------------------------------------------------------ */
/* shared                                                              */

/* OTLP/JSON writes these bytes fields as hex, every other one as base64. */
static bool
hex_field(const ProtobufCFieldDescriptor *f)
{
	return strcmp(f->name, "trace_id") == 0 || strcmp(f->name, "span_id") == 0 ||
	       strcmp(f->name, "parent_span_id") == 0;
}

/* KEY (N bytes) names F: its proto name, or its lowerCamelCase JSON name. */
static bool
key_is(const ProtobufCFieldDescriptor *f, const char *key, size_t n)
{
	const char *p = f->name;
	size_t i = 0;

	if (strlen(p) == n && memcmp(p, key, n) == 0)
		return true;
	for (; *p; p++) {
		char c = *p;
		if (c == '_' && p[1]) {
			p++;
			c = (*p >= 'a' && *p <= 'z') ? (char)(*p - 'a' + 'A') : *p;
		}
		if (i >= n || key[i] != c)
			return false;
		i++;
	}
	return i == n;
}

static size_t
scalar_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
	case PROTOBUF_C_TYPE_ENUM:
		return 4;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_STRING:
		return sizeof(char *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(ProtobufCMessage *);
	default:
		return 0;
	}
}

/* ------------------------------------------------------------------ */
/* parser                                                              */

struct jp {
	const char *s;
	size_t n, i;
	size_t budget; /* bytes that may still be allocated */
	unsigned depth;
};

static void *
jp_alloc(struct jp *p, size_t n, int *r)
{
	if (n > p->budget) {
		*r = -E2BIG;
		return NULL;
	}
	void *v = calloc(1, n ? n : 1);
	if (!v) {
		*r = -ENOMEM;
		return NULL;
	}
	p->budget -= n;
	return v;
}

static void
ws(struct jp *p)
{
	while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' ||
			       p->s[p->i] == '\r'))
		p->i++;
}

static bool
lit(struct jp *p, const char *w)
{
	size_t l = strlen(w);
	if (p->n - p->i < l || memcmp(p->s + p->i, w, l) != 0)
		return false;
	p->i += l;
	return true;
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int
u4(struct jp *p, unsigned *v)
{
	if (p->n - p->i < 4)
		return -EBADMSG;
	*v = 0;
	for (int k = 0; k < 4; k++) {
		int h = hexval(p->s[p->i++]);
		if (h < 0)
			return -EBADMSG;
		*v = *v << 4 | (unsigned)h;
	}
	return 0;
}

/* Length of the UTF-8 sequence at S (at most N bytes), or 0 when it is not one. */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t l;
	unsigned min;

	if (c < 0x80)
		return 1;
	if ((c & 0xe0) == 0xc0)
		l = 2, min = 0x80, c &= 0x1f;
	else if ((c & 0xf0) == 0xe0)
		l = 3, min = 0x800, c &= 0x0f;
	else if ((c & 0xf8) == 0xf0)
		l = 4, min = 0x10000, c &= 0x07;
	else
		return 0;
	if (n < l)
		return 0;
	for (size_t k = 1; k < l; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[k] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return l;
}

static void
put_utf8(char *o, size_t *k, unsigned c)
{
	if (c < 0x80)
		o[(*k)++] = (char)c;
	else if (c < 0x800) {
		o[(*k)++] = (char)(0xc0 | c >> 6);
		o[(*k)++] = (char)(0x80 | (c & 0x3f));
	} else if (c < 0x10000) {
		o[(*k)++] = (char)(0xe0 | c >> 12);
		o[(*k)++] = (char)(0x80 | ((c >> 6) & 0x3f));
		o[(*k)++] = (char)(0x80 | (c & 0x3f));
	} else {
		o[(*k)++] = (char)(0xf0 | c >> 18);
		o[(*k)++] = (char)(0x80 | ((c >> 12) & 0x3f));
		o[(*k)++] = (char)(0x80 | ((c >> 6) & 0x3f));
		o[(*k)++] = (char)(0x80 | (c & 0x3f));
	}
}

/*
 * A JSON string at p->i (the opening quote) into *OUT (malloc'd, NUL-ended,
 * *LEN bytes; OUT NULL: checked and skipped). Its decoded length never
 * exceeds its spelling's, so that is what is charged.
 */
static int
string(struct jp *p, char **out, size_t *len)
{
	size_t start, k = 0;
	char *o = NULL;
	int r = 0;

	if (p->i >= p->n || p->s[p->i] != '"')
		return -EBADMSG;
	start = ++p->i;
	/* find the end first: the allocation is that long at most */
	size_t e = start;
	while (e < p->n && p->s[e] != '"') {
		if (p->s[e] == '\\')
			e++;
		e++;
	}
	if (e >= p->n)
		return -EBADMSG;
	if (out && !(o = jp_alloc(p, e - start + 1, &r)))
		return r;
	while (p->i < e) {
		unsigned char c = (unsigned char)p->s[p->i];
		if (c < 0x20)
			goto bad;
		if (c != '\\') {
			size_t l = utf8_len((const unsigned char *)p->s + p->i, e - p->i);
			if (!l)
				goto bad;
			if (o)
				memcpy(o + k, p->s + p->i, l);
			k += l;
			p->i += l;
			continue;
		}
		p->i++;
		char x = p->s[p->i++];
		unsigned cp;
		switch (x) {
		case '"': cp = '"'; break;
		case '\\': cp = '\\'; break;
		case '/': cp = '/'; break;
		case 'b': cp = '\b'; break;
		case 'f': cp = '\f'; break;
		case 'n': cp = '\n'; break;
		case 'r': cp = '\r'; break;
		case 't': cp = '\t'; break;
		case 'u':
			if (u4(p, &cp) < 0 || cp == 0)
				goto bad;
			if (cp >= 0xdc00 && cp <= 0xdfff)
				goto bad;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				unsigned lo;
				if (p->n - p->i < 2 || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u')
					goto bad;
				p->i += 2;
				if (u4(p, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
					goto bad;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			break;
		default:
			goto bad;
		}
		if (o)
			put_utf8(o, &k, cp);
		else
			k += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
	}
	p->i = e + 1;
	if (o)
		o[k] = '\0';
	if (out)
		*out = o;
	if (len)
		*len = k;
	return 0;
bad:
	free(o);
	return -EBADMSG;
}

/* A JSON number's token at p->i (JSON's grammar exactly); *INTEGRAL: no fraction, no exponent. */
static int
number_token(struct jp *p, size_t *start, size_t *end, bool *integral)
{
	size_t i = p->i;
	*start = i;
	*integral = true;
	if (i < p->n && p->s[i] == '-')
		i++;
	if (i >= p->n || p->s[i] < '0' || p->s[i] > '9')
		return -EBADMSG;
	if (p->s[i] == '0')
		i++;
	else
		while (i < p->n && p->s[i] >= '0' && p->s[i] <= '9')
			i++;
	if (i < p->n && p->s[i] == '.') {
		*integral = false;
		i++;
		if (i >= p->n || p->s[i] < '0' || p->s[i] > '9')
			return -EBADMSG;
		while (i < p->n && p->s[i] >= '0' && p->s[i] <= '9')
			i++;
	}
	if (i < p->n && (p->s[i] == 'e' || p->s[i] == 'E')) {
		*integral = false;
		i++;
		if (i < p->n && (p->s[i] == '+' || p->s[i] == '-'))
			i++;
		if (i >= p->n || p->s[i] < '0' || p->s[i] > '9')
			return -EBADMSG;
		while (i < p->n && p->s[i] >= '0' && p->s[i] <= '9')
			i++;
	}
	*end = i;
	p->i = i;
	return 0;
}

static int skip_value(struct jp *p);

static int
skip_container(struct jp *p, char close)
{
	bool first = true;

	if (++p->depth > OTLP_NEST_MAX)
		return -E2BIG;
	p->i++;
	for (;;) {
		ws(p);
		if (p->i < p->n && p->s[p->i] == close && first) {
			p->i++;
			break;
		}
		if (close == '}') {
			int r = string(p, NULL, NULL);
			if (r < 0)
				return r;
			ws(p);
			if (p->i >= p->n || p->s[p->i++] != ':')
				return -EBADMSG;
		}
		int r = skip_value(p);
		if (r < 0)
			return r;
		ws(p);
		first = false;
		if (p->i < p->n && p->s[p->i] == ',') {
			p->i++;
			continue;
		}
		if (p->i < p->n && p->s[p->i] == close) {
			p->i++;
			break;
		}
		return -EBADMSG;
	}
	p->depth--;
	return 0;
}

/* Any JSON value (an unknown key's), checked and skipped. */
static int
skip_value(struct jp *p)
{
	size_t a, b;
	bool integral;

	ws(p);
	if (p->i >= p->n)
		return -EBADMSG;
	switch (p->s[p->i]) {
	case '{': return skip_container(p, '}');
	case '[': return skip_container(p, ']');
	case '"': return string(p, NULL, NULL);
	case 't': return lit(p, "true") ? 0 : -EBADMSG;
	case 'f': return lit(p, "false") ? 0 : -EBADMSG;
	case 'n': return lit(p, "null") ? 0 : -EBADMSG;
	default: return number_token(p, &a, &b, &integral);
	}
}

/*
 * An integer for a field of type T: a number token without fraction or
 * exponent, or a string holding one, within T's range. *U gets the bits.
 */
static int
integer(struct jp *p, ProtobufCType t, uint64_t *u)
{
	char buf[32];
	size_t a, b;
	bool integral, quoted = p->i < p->n && p->s[p->i] == '"';

	if (quoted)
		p->i++;
	if (number_token(p, &a, &b, &integral) < 0 || !integral)
		return -EBADMSG;
	if (quoted) {
		if (p->i >= p->n || p->s[p->i] != '"')
			return -EBADMSG;
		p->i++;
	}
	if (b - a >= sizeof(buf))
		return -EBADMSG;
	memcpy(buf, p->s + a, b - a);
	buf[b - a] = '\0';
	errno = 0;
	switch (t) {
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64: {
		if (buf[0] == '-')
			return -EBADMSG;
		uint64_t v;
		if (parse_u64(buf, UINT64_MAX, &v) < 0)
			return -EBADMSG;
		if ((t == PROTOBUF_C_TYPE_UINT32 || t == PROTOBUF_C_TYPE_FIXED32) && v > UINT32_MAX)
			return -EBADMSG;
		*u = v;
		return 0;
	}
	default: {
		int64_t v;
		if (parse_i64(buf, &v) < 0)
			return -EBADMSG;
		if ((t == PROTOBUF_C_TYPE_INT32 || t == PROTOBUF_C_TYPE_SINT32 ||
		     t == PROTOBUF_C_TYPE_SFIXED32 || t == PROTOBUF_C_TYPE_ENUM) &&
		    (v < INT32_MIN || v > INT32_MAX))
			return -EBADMSG;
		*u = (uint64_t)v;
		return 0;
	}
	}
}

static int
floating(struct jp *p, double *d)
{
	char buf[64];
	size_t a, b;
	bool integral;

	if (p->i < p->n && p->s[p->i] == '"') {
		if (lit(p, "\"NaN\"")) {
			*d = NAN;
			return 0;
		}
		if (lit(p, "\"Infinity\"")) {
			*d = INFINITY;
			return 0;
		}
		if (lit(p, "\"-Infinity\"")) {
			*d = -INFINITY;
			return 0;
		}
		p->i++;
		if (number_token(p, &a, &b, &integral) < 0 || p->i >= p->n || p->s[p->i] != '"')
			return -EBADMSG;
		p->i++;
	} else if (number_token(p, &a, &b, &integral) < 0)
		return -EBADMSG;
	if (b - a >= sizeof(buf))
		return -EBADMSG;
	memcpy(buf, p->s + a, b - a);
	buf[b - a] = '\0';
	*d = strtod(buf, NULL);
	if (isinf(*d))
		return -EBADMSG; /* a finite spelling out of range */
	return 0;
}

static int
b64val(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

/* A bytes field's string: hex (HEX) or base64 (either alphabet, padding optional). */
static int
bytes_value(struct jp *p, bool hex, ProtobufCBinaryData *out)
{
	char *s = NULL;
	size_t n, k = 0;
	int r = string(p, &s, &n);
	uint8_t *o = NULL;

	if (r < 0)
		return r;
	if (hex) {
		if (n % 2)
			goto bad;
		if (n && !(o = jp_alloc(p, n / 2, &r)))
			goto fail;
		for (size_t i = 0; i < n; i += 2) {
			int h = hexval(s[i]), l = hexval(s[i + 1]);
			if (h < 0 || l < 0)
				goto bad;
			o[k++] = (uint8_t)(h << 4 | l);
		}
	} else {
		while (n && s[n - 1] == '=')
			n--;
		if (n % 4 == 1)
			goto bad;
		if (n && !(o = jp_alloc(p, n * 3 / 4 + 1, &r)))
			goto fail;
		uint32_t acc = 0;
		int bits = 0;
		for (size_t i = 0; i < n; i++) {
			int v = b64val(s[i]);
			if (v < 0)
				goto bad;
			acc = acc << 6 | (uint32_t)v;
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				o[k++] = (uint8_t)(acc >> bits);
			}
		}
	}
	free(s);
	out->data = o;
	out->len = k;
	return 0;
bad:
	r = -EBADMSG;
fail:
	free(s);
	free(o);
	return r;
}

static int message(struct jp *p, const ProtobufCMessageDescriptor *d, ProtobufCMessage **ret);

/* One value of field F into DST (an element: a repeated field's slot, or the field itself). */
static int
value(struct jp *p, const ProtobufCFieldDescriptor *f, void *dst)
{
	uint64_t u;
	double d;
	int r;

	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		if ((r = integer(p, f->type, &u)) < 0)
			return r;
		*(uint32_t *)dst = (uint32_t)u;
		return 0;
	case PROTOBUF_C_TYPE_ENUM: {
		if (p->i < p->n && p->s[p->i] == '"') {
			/* a name of the enum, as the proto3 JSON mapping also allows */
			char *name = NULL;
			if ((r = string(p, &name, NULL)) < 0)
				return r;
			const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value_by_name(
				(const ProtobufCEnumDescriptor *)f->descriptor, name);
			free(name);
			if (!ev)
				return -EBADMSG;
			*(int32_t *)dst = ev->value;
			return 0;
		}
		if ((r = integer(p, f->type, &u)) < 0)
			return r;
		*(int32_t *)dst = (int32_t)u;
		return 0;
	}
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		if ((r = integer(p, f->type, &u)) < 0)
			return r;
		*(uint64_t *)dst = u;
		return 0;
	case PROTOBUF_C_TYPE_FLOAT:
		if ((r = floating(p, &d)) < 0)
			return r;
		*(float *)dst = (float)d;
		return 0;
	case PROTOBUF_C_TYPE_DOUBLE:
		if ((r = floating(p, &d)) < 0)
			return r;
		*(double *)dst = d;
		return 0;
	case PROTOBUF_C_TYPE_BOOL:
		if (lit(p, "true"))
			*(protobuf_c_boolean *)dst = 1;
		else if (lit(p, "false"))
			*(protobuf_c_boolean *)dst = 0;
		else
			return -EBADMSG;
		return 0;
	case PROTOBUF_C_TYPE_STRING:
		return string(p, (char **)dst, NULL);
	case PROTOBUF_C_TYPE_BYTES:
		return bytes_value(p, hex_field(f), (ProtobufCBinaryData *)dst);
	case PROTOBUF_C_TYPE_MESSAGE:
		return message(p, (const ProtobufCMessageDescriptor *)f->descriptor,
			       (ProtobufCMessage **)dst);
	default:
		return -EBADMSG;
	}
}

/* A repeated field's JSON array, each element appended (the array grows by doubling). */
static int
repeated(struct jp *p, const ProtobufCFieldDescriptor *f, ProtobufCMessage *m)
{
	size_t *count = (size_t *)((char *)m + f->quantifier_offset);
	void **arr = (void **)((char *)m + f->offset);
	size_t esz = scalar_size(f->type), cap = 0;
	int r;

	if (p->i >= p->n || p->s[p->i] != '[')
		return -EBADMSG;
	if (++p->depth > OTLP_NEST_MAX)
		return -E2BIG;
	p->i++;
	ws(p);
	if (p->i < p->n && p->s[p->i] == ']') {
		p->i++;
		p->depth--;
		return 0;
	}
	for (;;) {
		if (*count == cap) {
			size_t ncap = cap ? cap * 2 : 4;
			if ((ncap - cap) * esz > p->budget)
				return -E2BIG;
			void *na = realloc(*arr, ncap * esz);
			if (!na)
				return -ENOMEM;
			p->budget -= (ncap - cap) * esz;
			memset((char *)na + cap * esz, 0, (ncap - cap) * esz);
			*arr = na;
			cap = ncap;
		}
		ws(p);
		if (p->i >= p->n)
			return -EBADMSG;
		if ((r = value(p, f, (char *)*arr + *count * esz)) < 0)
			return r;
		(*count)++;
		ws(p);
		if (p->i < p->n && p->s[p->i] == ',') {
			p->i++;
			continue;
		}
		if (p->i < p->n && p->s[p->i] == ']') {
			p->i++;
			break;
		}
		return -EBADMSG;
	}
	p->depth--;
	return 0;
}

static int
message(struct jp *p, const ProtobufCMessageDescriptor *d, ProtobufCMessage **ret)
{
	int r = 0;
	uint64_t seen[4] = { 0 }; /* fields by index (OTLP messages have fewer than 256) */
	ProtobufCMessage *m;

	if (d->n_fields > 256)
		return -EINVAL;
	ws(p);
	if (p->i >= p->n || p->s[p->i] != '{')
		return -EBADMSG;
	if (++p->depth > OTLP_NEST_MAX)
		return -E2BIG;
	if (!(m = jp_alloc(p, d->sizeof_message, &r)))
		return r;
	d->message_init(m);
	p->i++;
	ws(p);
	if (p->i < p->n && p->s[p->i] == '}') {
		p->i++;
		goto done;
	}
	for (;;) {
		char *key = NULL;
		size_t kl;
		ws(p);
		/* keys are short; the spelling is charged like any string */
		if ((r = string(p, &key, &kl)) < 0)
			goto fail;
		ws(p);
		if (p->i >= p->n || p->s[p->i++] != ':') {
			free(key);
			r = -EBADMSG;
			goto fail;
		}
		ws(p);
		const ProtobufCFieldDescriptor *f = NULL;
		size_t fi = 0;
		for (fi = 0; fi < d->n_fields; fi++)
			if (key_is(&d->fields[fi], key, kl)) {
				f = &d->fields[fi];
				break;
			}
		free(key);
		if (!f) {
			if ((r = skip_value(p)) < 0) /* OTLP: unknown keys are ignored */
				goto fail;
		} else if (seen[fi / 64] & (1ull << (fi % 64))) {
			r = -EBADMSG;
			goto fail;
		} else if (lit(p, "null")) {
			seen[fi / 64] |= 1ull << (fi % 64); /* null: the default */
		} else {
			seen[fi / 64] |= 1ull << (fi % 64);
			if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
				uint32_t *cs = (uint32_t *)((char *)m + f->quantifier_offset);
				if (*cs) {
					r = -EBADMSG; /* a second member of one oneof */
					goto fail;
				}
				if ((r = value(p, f, (char *)m + f->offset)) < 0)
					goto fail;
				*cs = f->id;
			} else if (f->label == PROTOBUF_C_LABEL_REPEATED) {
				if ((r = repeated(p, f, m)) < 0)
					goto fail;
			} else {
				if (f->type == PROTOBUF_C_TYPE_STRING) {
					/* the default points at protobuf-c's empty string: not ours */
					*(char **)((char *)m + f->offset) = NULL;
				}
				if ((r = value(p, f, (char *)m + f->offset)) < 0) {
					if (f->type == PROTOBUF_C_TYPE_STRING)
						*(char **)((char *)m + f->offset) =
							(char *)f->default_value;
					goto fail;
				}
			}
		}
		ws(p);
		if (p->i < p->n && p->s[p->i] == ',') {
			p->i++;
			continue;
		}
		if (p->i < p->n && p->s[p->i] == '}') {
			p->i++;
			break;
		}
		r = -EBADMSG;
		goto fail;
	}
done:
	p->depth--;
	*ret = m;
	return 0;
fail:
	protobuf_c_message_free_unpacked(m, NULL);
	return r;
}

int
otlp_json_parse(const ProtobufCMessageDescriptor *d, const char *text, size_t len,
		size_t alloc_max, ProtobufCMessage **ret)
{
	struct jp p = { .s = text, .n = len, .budget = alloc_max };
	ProtobufCMessage *m = NULL;

	/* a UTF-8 byte-order mark is not JSON (RFC 8259 lets a parser refuse it) */
	int r = message(&p, d, &m);
	if (r < 0)
		return r;
	ws(&p);
	if (p.i != p.n) {
		protobuf_c_message_free_unpacked(m, NULL);
		return -EBADMSG;
	}
	*ret = m;
	return 0;
}

/* ------------------------------------------------------------------ */
/* printer                                                             */

struct jw {
	char *buf;
	size_t len, cap, max;
	int err;
};

static void
w_put(struct jw *w, const char *s, size_t n)
{
	if (w->err)
		return;
	if (n > w->max - w->len) {
		w->err = -E2BIG;
		return;
	}
	if (w->len + n + 1 > w->cap) {
		size_t nc = w->cap ? w->cap : 256;
		while (nc < w->len + n + 1)
			nc *= 2;
		char *nb = realloc(w->buf, nc);
		if (!nb) {
			w->err = -ENOMEM;
			return;
		}
		w->buf = nb;
		w->cap = nc;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

static void
w_lit(struct jw *w, const char *s)
{
	w_put(w, s, strlen(s));
}

static void
w_fmt(struct jw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
w_fmt(struct jw *w, const char *fmt, ...)
{
	char b[64];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(b)) {
		w->err = w->err ? w->err : -EINVAL;
		return;
	}
	w_put(w, b, (size_t)n);
}

/* S (N bytes) as a JSON string; a byte that is not UTF-8 becomes U+FFFD. */
static void
w_str(struct jw *w, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	w_lit(w, "\"");
	for (size_t i = 0; i < n && !w->err;) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };
			w_put(w, e, 2);
			i++;
		} else if (c < 0x20) {
			char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			w_put(w, e, 6);
			i++;
		} else {
			size_t l = utf8_len((const unsigned char *)s + i, n - i);
			if (!l) {
				w_lit(w, "\\ufffd");
				i++;
			} else {
				w_put(w, s + i, l);
				i += l;
			}
		}
	}
	w_lit(w, "\"");
}

static void
w_bytes(struct jw *w, const ProtobufCBinaryData *b, bool hex)
{
	static const char hx[] = "0123456789abcdef";
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	w_lit(w, "\"");
	if (hex) {
		for (size_t i = 0; i < b->len && !w->err; i++) {
			char e[2] = { hx[b->data[i] >> 4], hx[b->data[i] & 15] };
			w_put(w, e, 2);
		}
	} else {
		for (size_t i = 0; i < b->len && !w->err; i += 3) {
			uint32_t v = (uint32_t)b->data[i] << 16;
			size_t k = b->len - i;
			if (k > 1)
				v |= (uint32_t)b->data[i + 1] << 8;
			if (k > 2)
				v |= b->data[i + 2];
			char e[4] = { b64[v >> 18], b64[(v >> 12) & 63], k > 1 ? b64[(v >> 6) & 63] : '=',
				      k > 2 ? b64[v & 63] : '=' };
			w_put(w, e, 4);
		}
	}
	w_lit(w, "\"");
}

static void
w_double(struct jw *w, double d)
{
	if (isnan(d))
		w_lit(w, "\"NaN\"");
	else if (isinf(d))
		w_lit(w, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
	else
		w_fmt(w, "%.17g", d);
}

static void w_message(struct jw *w, const ProtobufCMessage *m, unsigned depth);

static void
w_value(struct jw *w, const ProtobufCFieldDescriptor *f, const void *v, unsigned depth)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_ENUM:
		w_fmt(w, "%d", *(const int32_t *)v);
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		w_fmt(w, "%u", *(const uint32_t *)v);
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		w_fmt(w, "\"%lld\"", (long long)*(const int64_t *)v);
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		w_fmt(w, "\"%llu\"", (unsigned long long)*(const uint64_t *)v);
		break;
	case PROTOBUF_C_TYPE_FLOAT:
		w_double(w, *(const float *)v);
		break;
	case PROTOBUF_C_TYPE_DOUBLE:
		w_double(w, *(const double *)v);
		break;
	case PROTOBUF_C_TYPE_BOOL:
		w_lit(w, *(const protobuf_c_boolean *)v ? "true" : "false");
		break;
	case PROTOBUF_C_TYPE_STRING: {
		const char *s = *(char *const *)v;
		w_str(w, s ? s : "", s ? strlen(s) : 0);
		break;
	}
	case PROTOBUF_C_TYPE_BYTES:
		w_bytes(w, (const ProtobufCBinaryData *)v, hex_field(f));
		break;
	case PROTOBUF_C_TYPE_MESSAGE: {
		const ProtobufCMessage *sub = *(ProtobufCMessage *const *)v;
		if (sub)
			w_message(w, sub, depth + 1);
		else
			w_lit(w, "{}");
		break;
	}
	default:
		w->err = -EINVAL;
		break;
	}
}

/* A proto3 field without presence holds its default: left out. */
static bool
is_default(const ProtobufCFieldDescriptor *f, const void *v)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_STRING: {
		const char *s = *(char *const *)v;
		return !s || !*s;
	}
	case PROTOBUF_C_TYPE_BYTES:
		return ((const ProtobufCBinaryData *)v)->len == 0;
	case PROTOBUF_C_TYPE_MESSAGE:
		return *(ProtobufCMessage *const *)v == NULL;
	case PROTOBUF_C_TYPE_BOOL:
		return !*(const protobuf_c_boolean *)v;
	case PROTOBUF_C_TYPE_FLOAT:
		return *(const float *)v == 0 && !signbit(*(const float *)v);
	case PROTOBUF_C_TYPE_DOUBLE:
		return *(const double *)v == 0 && !signbit(*(const double *)v);
	default:
		return scalar_size(f->type) == 8 ? *(const uint64_t *)v == 0 :
						   *(const uint32_t *)v == 0;
	}
}

static void
w_key(struct jw *w, const ProtobufCFieldDescriptor *f, bool *first)
{
	char k[128];
	size_t n = 0;
	for (const char *p = f->name; *p && n + 1 < sizeof(k); p++) {
		if (*p == '_' && p[1]) {
			p++;
			k[n++] = (*p >= 'a' && *p <= 'z') ? (char)(*p - 'a' + 'A') : *p;
		} else
			k[n++] = *p;
	}
	if (!*first)
		w_lit(w, ",");
	*first = false;
	w_lit(w, "\"");
	w_put(w, k, n);
	w_lit(w, "\":");
}

static void
w_message(struct jw *w, const ProtobufCMessage *m, unsigned depth)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	bool first = true;

	if (depth > OTLP_NEST_MAX) {
		w->err = -E2BIG;
		return;
	}
	w_lit(w, "{");
	for (size_t i = 0; i < d->n_fields && !w->err; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char *at = (const char *)m + f->offset;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)((const char *)m + f->quantifier_offset);
			if (!n)
				continue;
			size_t esz = scalar_size(f->type);
			const char *arr = *(char *const *)at;
			w_key(w, f, &first);
			w_lit(w, "[");
			for (size_t k = 0; k < n && !w->err; k++) {
				if (k)
					w_lit(w, ",");
				w_value(w, f, arr + k * esz, depth);
			}
			w_lit(w, "]");
			continue;
		}
		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
			if (*(const uint32_t *)((const char *)m + f->quantifier_offset) != f->id)
				continue;
		} else if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset) {
			if (!*(const protobuf_c_boolean *)((const char *)m + f->quantifier_offset))
				continue;
		} else if (is_default(f, at))
			continue;
		w_key(w, f, &first);
		w_value(w, f, at, depth);
	}
	w_lit(w, "}");
}

int
otlp_json_print(const ProtobufCMessage *m, size_t max, char **out, size_t *len)
{
	struct jw w = { .max = max };

	w_message(&w, m, 0);
	if (w.err) {
		free(w.buf);
		return w.err;
	}
	*out = w.buf;
	*len = w.len;
	return 0;
}

/* ------------------------------------------------------------------ */
/* the binary encoding's nesting                                       */

static int
varint(const uint8_t *d, size_t n, size_t *i, uint64_t *v)
{
	*v = 0;
	for (unsigned s = 0; s < 64; s += 7) {
		if (*i >= n)
			return -EBADMSG;
		uint8_t b = d[(*i)++];
		*v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return 0;
	}
	return -EBADMSG;
}

static int
pb_walk(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t n, unsigned depth)
{
	size_t i = 0;

	if (depth > OTLP_NEST_MAX)
		return -E2BIG;
	while (i < n) {
		uint64_t tag, v;
		int r = varint(data, n, &i, &tag);
		if (r < 0)
			return r;
		uint32_t id = (uint32_t)(tag >> 3);
		if (tag >> 3 == 0 || tag >> 3 > 0x1fffffff)
			return -EBADMSG;
		switch (tag & 7) {
		case 0:
			if ((r = varint(data, n, &i, &v)) < 0)
				return r;
			break;
		case 1:
			if (n - i < 8)
				return -EBADMSG;
			i += 8;
			break;
		case 5:
			if (n - i < 4)
				return -EBADMSG;
			i += 4;
			break;
		case 2: {
			if ((r = varint(data, n, &i, &v)) < 0)
				return r;
			if (v > n - i)
				return -EBADMSG;
			const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(d, id);
			if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
			    (r = pb_walk((const ProtobufCMessageDescriptor *)f->descriptor, data + i,
					 (size_t)v, depth + 1)) < 0)
				return r;
			i += (size_t)v;
			break;
		}
		default:
			/* groups (3, 4) are not proto3's; protobuf-c would refuse them too */
			return -EBADMSG;
		}
	}
	return 0;
}

int
otlp_pb_check(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len)
{
	return pb_walk(d, data, len, 0);
}

int
otlp_pb_unpack(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len,
	       ProtobufCMessage **ret)
{
	int r = otlp_pb_check(d, data, len);
	if (r < 0)
		return r;
	r = box_proto_unpack_capped(d, data, len, ret);
	return r == -EMSGSIZE ? -E2BIG : r;
}
