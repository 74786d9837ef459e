/* SPDX-License-Identifier: Apache-2.0 */
/*
 * encode.c — base64, percent-encoding and JSON string escaping for box-gateway
 * (encode.h). Pure functions over bytes: no I/O, no logging, no global state.
 * Trusts nothing in its input; every output is sized before it is written.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "encode.h"

static const char b64_std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char b64_url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

char *
enc_b64(const uint8_t *in, size_t n, enum enc_b64_alphabet a, bool pad, size_t *out_n)
{
	const char *al = a == ENC_B64_URL ? b64_url : b64_std;
	char *out = malloc(4 * ((n + 2) / 3) + 1), *o = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < n)
			v |= in[i + 2];
		*o++ = al[(v >> 18) & 63];
		*o++ = al[(v >> 12) & 63];
		if (i + 1 < n)
			*o++ = al[(v >> 6) & 63];
		else if (pad)
			*o++ = '=';
		if (i + 2 < n)
			*o++ = al[v & 63];
		else if (pad)
			*o++ = '=';
	}
	*o = '\0';
	*out_n = (size_t)(o - out);
	return out;
}

static int
b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

char *
enc_b64_decode(const char *in, size_t *out_n)
{
	size_t n = strlen(in);
	if (n == 0 || n % 4 != 0)
		return NULL;
	char *out = malloc(n / 4 * 3 + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n; i += 4) {
		int v[4];
		bool last = i + 4 == n;
		for (int k = 0; k < 4; k++) {
			v[k] = b64_value(in[i + k]);
			if (v[k] < 0 && !(last && k >= 2 && in[i + k] == '='))
				goto bad;
		}
		if (v[2] < 0 && v[3] >= 0)
			goto bad;
		uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12;
		if (v[2] >= 0)
			w |= (uint32_t)v[2] << 6;
		if (v[3] >= 0)
			w |= (uint32_t)v[3];
		out[o++] = (char)(w >> 16);
		if (v[2] >= 0)
			out[o++] = (char)(w >> 8);
		if (v[3] >= 0)
			out[o++] = (char)w;
	}
	out[o] = '\0';
	*out_n = o;
	return out;
bad:
	explicit_bzero(out, o);
	free(out);
	return NULL;
}

int
enc_hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool
enc_is_unreserved(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~';
}

char *
enc_pct(const uint8_t *in, size_t n, bool upper, size_t *out_n)
{
	const char *hex = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char *out = malloc(3 * n + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (enc_is_unreserved(in[i])) {
			out[o++] = (char)in[i];
		} else {
			out[o++] = '%';
			out[o++] = hex[in[i] >> 4];
			out[o++] = hex[in[i] & 15];
		}
	}
	out[o] = '\0';
	*out_n = o;
	return out;
}

char *
enc_pct_decode(const char *s, size_t n, size_t *out_n)
{
	char *out = malloc(n + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		int hi, lo;
		if (s[i] == '%' && i + 2 < n && (hi = enc_hex_value(s[i + 1])) >= 0 &&
		    (lo = enc_hex_value(s[i + 2])) >= 0) {
			out[o++] = (char)(hi << 4 | lo);
			i += 2;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
	*out_n = o;
	return out;
}

size_t
enc_utf8_char(const uint8_t *in, size_t n, uint32_t *cp)
{
	uint8_t b = in[0];
	size_t len;
	uint32_t v, min;
	if (b < 0x80) {
		*cp = b;
		return 1;
	} else if ((b & 0xe0) == 0xc0) {
		len = 2, v = b & 0x1f, min = 0x80;
	} else if ((b & 0xf0) == 0xe0) {
		len = 3, v = b & 0x0f, min = 0x800;
	} else if ((b & 0xf8) == 0xf0) {
		len = 4, v = b & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((in[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (in[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

static size_t
put_u(char *o, uint32_t unit, bool upper)
{
	const char *hex = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	o[0] = '\\';
	o[1] = 'u';
	for (int k = 0; k < 4; k++)
		o[2 + k] = hex[(unit >> (12 - 4 * k)) & 15];
	return 6;
}

int
enc_json(const uint8_t *in, size_t n, unsigned flags, char **out_, size_t *out_n)
{
	bool upper = flags & ENC_JSON_UPPER;
	/* at most 6 bytes of output per input byte (a control byte as \u00XX; a 4-byte
	 * character becomes a 12-byte surrogate pair) */
	char *out = malloc(6 * n + 1);
	if (!out)
		return -ENOMEM;
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		uint8_t c = in[i];
		const char *short_esc = NULL;
		switch (c) {
		case '"':
			short_esc = "\\\"";
			break;
		case '\\':
			short_esc = "\\\\";
			break;
		case '\b':
			short_esc = "\\b";
			break;
		case '\f':
			short_esc = "\\f";
			break;
		case '\n':
			short_esc = "\\n";
			break;
		case '\r':
			short_esc = "\\r";
			break;
		case '\t':
			short_esc = "\\t";
			break;
		case '/':
			short_esc = flags & ENC_JSON_SLASH ? "\\/" : NULL;
			break;
		default:
			break;
		}
		if (short_esc) {
			out[o++] = short_esc[0];
			out[o++] = short_esc[1];
			i++;
		} else if (c < 0x20 ||
			   ((flags & ENC_JSON_HTML) && (c == '<' || c == '>' || c == '&'))) {
			o += put_u(out + o, c, upper);
			i++;
		} else if (c < 0x80 || !(flags & ENC_JSON_ASCII)) {
			out[o++] = (char)c;
			i++;
		} else {
			uint32_t cp;
			size_t len = enc_utf8_char(in + i, n - i, &cp);
			if (len == 0) {
				explicit_bzero(out, o);
				free(out);
				return -EILSEQ;
			}
			if (cp >= 0x10000) {
				cp -= 0x10000;
				o += put_u(out + o, 0xd800 | (cp >> 10), upper);
				o += put_u(out + o, 0xdc00 | (cp & 0x3ff), upper);
			} else {
				o += put_u(out + o, cp, upper);
			}
			i += len;
		}
	}
	out[o] = '\0';
	*out_ = out;
	*out_n = o;
	return 0;
}
