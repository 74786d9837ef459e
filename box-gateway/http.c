/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http.c — strict HTTP/1.1 heads, chunked bodies and request targets for
 * box-gateway (http.h; RFC 9110, RFC 9112, RFC 3986). No I/O, no logging.
 *
 * Trusts nothing: requests come from the sandbox, responses from arbitrary
 * servers. Every length is bounded (struct http_limits for heads, fixed caps
 * for chunk lines and trailers) before anything is copied, and anything two
 * HTTP implementations could read two ways (the request-smuggling family:
 * CL with TE, repeated or listed CL, obs-fold, bare LF or CR, whitespace
 * before a colon) is refused rather than repaired. Parsed strings are copies:
 * nothing returned points into the caller's buffer.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "addr.h"
#include "cleanup.h"
#include "encode.h"
#include "http.h"

/* Content-Length above 2^53 is refused: no peer has a reason to send more, and
 * every JSON consumer of the value (decision records) keeps it exact. */
#define HTTP_CL_MAX (UINT64_C(1) << 53)
/* A chunk-size line (size and extensions) and the trailer section. */
#define HTTP_CHUNK_LINE_MAX 4096
#define HTTP_TRAILERS_MAX (16 * 1024)

static void __attribute__((format(printf, 3, 4)))
set_why(char *why, size_t why_len, const char *fmt, ...)
{
	if (!why || why_len == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
}

/* tchar (RFC 9110 §5.6.2). */
static bool
is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* A byte allowed in a field value: VCHAR, obs-text, SP, HTAB — no CTL. */
static bool
is_field_byte(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static bool
is_ows(char c)
{
	return c == ' ' || c == '\t';
}

static bool
span_equals_ci(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && strncasecmp(s, lit, n) == 0;
}

/*
 * Locate the end of a head (the first CRLFCRLF) within max_head bytes. Every
 * LF must follow a CR and every CR precede an LF; an empty first line is
 * refused (no leading CRLF tolerance: strict). Field lines are counted as
 * they complete, so too many fields are -E2BIG before the head ends.
 */
static int
find_head_end(const char *buf, size_t len, const struct http_limits *lim, size_t *head_len,
	      size_t *n_fields, char *why, size_t why_len)
{
	size_t scan = len < lim->max_head ? len : lim->max_head;
	size_t lines = 0;

	for (size_t i = 0; i < scan; i++) {
		if (i > 0 && buf[i - 1] == '\r' && buf[i] != '\n') {
			set_why(why, why_len, "CR not followed by LF at byte %zu", i - 1);
			return -EBADMSG;
		}
		if (buf[i] != '\n')
			continue;
		if (i == 0 || buf[i - 1] != '\r') {
			set_why(why, why_len, "bare LF at byte %zu", i);
			return -EBADMSG;
		}
		if (i == 1) {
			set_why(why, why_len, "bad %s line: empty", "first");
			return -EBADMSG;
		}
		if (i >= 3 && buf[i - 2] == '\n') {
			*head_len = i + 1;
			*n_fields = lines - 1;
			return 0;
		}
		lines++;
		if (lines - 1 > lim->max_headers) {
			set_why(why, why_len, "more than %zu header fields", lim->max_headers);
			return -E2BIG;
		}
	}
	if (len >= lim->max_head) {
		set_why(why, why_len, "head longer than %zu bytes", lim->max_head);
		return -E2BIG;
	}
	return -EAGAIN;
}

/* What the fields say about framing and the connection. */
struct field_facts {
	bool has_cl, has_te, has_host, has_upgrade;
	bool conn_close, conn_keep_alive, conn_upgrade;
	bool expect_continue;
	uint64_t cl;
};

static int
parse_content_length(const char *v, uint64_t *out, char *why, size_t why_len)
{
	uint64_t n = 0;
	if (!*v) {
		set_why(why, why_len, "empty Content-Length");
		return -EBADMSG;
	}
	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9') {
			set_why(why, why_len, "bad Content-Length (digits only, one value)");
			return -EBADMSG;
		}
		n = n * 10 + (uint64_t)(*p - '0');
		if (n > HTTP_CL_MAX) {
			set_why(why, why_len, "Content-Length above 2^53");
			return -EBADMSG;
		}
	}
	*out = n;
	return 0;
}

/* Connection: #connection-option, each a token; empty list elements are allowed. */
static int
parse_connection(const char *v, struct field_facts *f, char *why, size_t why_len)
{
	const char *p = v;
	while (*p) {
		while (*p == ',' || is_ows(*p))
			p++;
		const char *start = p;
		while (*p && is_tchar((unsigned char)*p))
			p++;
		size_t n = (size_t)(p - start);
		while (is_ows(*p))
			p++;
		if (*p && *p != ',') {
			set_why(why, why_len, "bad Connection field");
			return -EBADMSG;
		}
		if (span_equals_ci(start, n, "close"))
			f->conn_close = true;
		else if (span_equals_ci(start, n, "keep-alive"))
			f->conn_keep_alive = true;
		else if (span_equals_ci(start, n, "upgrade"))
			f->conn_upgrade = true;
	}
	return 0;
}

static int
note_field(const struct http_header *h, bool is_request, struct field_facts *f, char *why,
	   size_t why_len)
{
	if (strcasecmp(h->name, "content-length") == 0) {
		if (f->has_cl) {
			set_why(why, why_len, "more than one Content-Length");
			return -EBADMSG;
		}
		f->has_cl = true;
		return parse_content_length(h->value, &f->cl, why, why_len);
	}
	if (strcasecmp(h->name, "transfer-encoding") == 0) {
		if (f->has_te) {
			set_why(why, why_len, "more than one Transfer-Encoding");
			return -EBADMSG;
		}
		f->has_te = true;
		if (strcasecmp(h->value, "chunked") != 0) {
			set_why(why, why_len, "Transfer-Encoding other than \"chunked\"");
			return -EBADMSG;
		}
		return 0;
	}
	if (strcasecmp(h->name, "connection") == 0)
		return parse_connection(h->value, f, why, why_len);
	if (strcasecmp(h->name, "upgrade") == 0) {
		f->has_upgrade = true;
		return 0;
	}
	if (!is_request)
		return 0;
	if (strcasecmp(h->name, "host") == 0) {
		if (f->has_host) {
			set_why(why, why_len, "more than one Host");
			return -EBADMSG;
		}
		f->has_host = true;
		return 0;
	}
	if (strcasecmp(h->name, "expect") == 0) {
		if (strcasecmp(h->value, "100-continue") != 0) {
			set_why(why, why_len, "Expect other than \"100-continue\"");
			return -EBADMSG;
		}
		f->expect_continue = true;
		return 0;
	}
	return 0;
}

static void
free_headers(struct http_header *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(h[i].name);
		free(h[i].value);
	}
	free(h);
}

/*
 * The field lines of a head: buf[start, end) where end points at the final
 * empty line's CR; lines are CRLF-terminated (find_head_end checked every LF).
 */
static int
parse_fields(const char *buf, size_t start, size_t end, size_t n_fields, bool is_request,
	     struct http_header **out, size_t *n_out, struct field_facts *facts, char *why,
	     size_t why_len)
{
	struct http_header *h = calloc(n_fields ? n_fields : 1, sizeof(*h));
	size_t n = 0;
	int r = 0;

	if (!h)
		return -ENOMEM;
	for (size_t pos = start; pos < end && r == 0;) {
		const char *line = buf + pos;
		const char *eol = memchr(line, '\r', end - pos);
		size_t line_len = (size_t)(eol - line);
		size_t i = 0;

		if (n >= n_fields) {
			r = -EBADMSG; /* cannot happen: find_head_end counted */
			set_why(why, why_len, "field count mismatch");
			break;
		}
		if (is_ows(line[0])) {
			set_why(why, why_len, "obs-fold (a field line starting with whitespace)");
			r = -EBADMSG;
			break;
		}
		while (i < line_len && is_tchar((unsigned char)line[i]))
			i++;
		if (i == line_len || line[i] != ':') {
			set_why(why, why_len, "%s in field %zu",
				i < line_len && is_ows(line[i]) ? "whitespace before colon"
								: "bad field name",
				n + 1);
			r = -EBADMSG;
			break;
		}
		if (i == 0) {
			set_why(why, why_len, "empty field name in field %zu", n + 1);
			r = -EBADMSG;
			break;
		}
		size_t name_len = i++;
		while (i < line_len && is_ows(line[i]))
			i++;
		size_t v_end = line_len;
		while (v_end > i && is_ows(line[v_end - 1]))
			v_end--;
		for (size_t k = i; k < v_end; k++) {
			if (!is_field_byte((unsigned char)line[k])) {
				set_why(why, why_len, "control byte in the value of field %zu",
					n + 1);
				r = -EBADMSG;
				break;
			}
		}
		if (r < 0)
			break;
		h[n].name = strndup(line, name_len);
		h[n].value = strndup(line + i, v_end - i);
		n++;
		if (!h[n - 1].name || !h[n - 1].value) {
			r = -ENOMEM;
			break;
		}
		r = note_field(&h[n - 1], is_request, facts, why, why_len);
		pos += line_len + 2;
	}
	if (r < 0) {
		free_headers(h, n);
		return r;
	}
	*out = h;
	*n_out = n;
	return 0;
}

/* "HTTP/1.0" or "HTTP/1.1" exactly. */
static int
parse_version(const char *s, size_t n, unsigned *minor)
{
	if (n != 8 || memcmp(s, "HTTP/1.", 7) != 0 || (s[7] != '0' && s[7] != '1'))
		return -EBADMSG;
	*minor = (unsigned)(s[7] - '0');
	return 0;
}

static int
parse_request_line(const char *line, size_t n, struct http_request *out, char *why, size_t why_len)
{
	size_t i = 0;
	while (i < n && is_tchar((unsigned char)line[i]))
		i++;
	if (i == 0 || i == n || line[i] != ' ') {
		set_why(why, why_len, "bad request line (method)");
		return -EBADMSG;
	}
	size_t m_len = i++;
	size_t t_start = i;
	/* Visible ASCII only: a raw non-ASCII or control byte would give a second spelling of
	 * a path that policy compares percent-encoded. */
	while (i < n && line[i] > 0x20 && line[i] < 0x7f)
		i++;
	if (i == t_start || i == n || line[i] != ' ') {
		set_why(why, why_len, "bad request line (target)");
		return -EBADMSG;
	}
	size_t t_len = i - t_start;
	i++;
	if (parse_version(line + i, n - i, &out->minor) < 0) {
		set_why(why, why_len, "bad request line (version: HTTP/1.0 or HTTP/1.1 only)");
		return -EBADMSG;
	}
	out->method = strndup(line, m_len);
	out->target = strndup(line + t_start, t_len);
	if (!out->method || !out->target)
		return -ENOMEM;
	return 0;
}

int
http_head_end(const char *buf, size_t len, size_t max_head, size_t *scanned, size_t *head_len)
{
	size_t limit = len < max_head ? len : max_head;
	size_t from = *scanned > 3 ? *scanned - 3 : 0; /* a CRLFCRLF may straddle the reads */

	if (from < limit) {
		const char *end = memmem(buf + from, limit - from, "\r\n\r\n", 4);
		if (end) {
			*head_len = (size_t)(end - buf) + 4;
			*scanned = *head_len;
			return 1;
		}
	}
	if (limit > *scanned)
		*scanned = limit;
	return len >= max_head ? -E2BIG : 0;
}

void
http_request_clear(struct http_request *r)
{
	if (!r)
		return;
	free(r->method);
	free(r->target);
	free_headers(r->headers, r->n_headers);
	memset(r, 0, sizeof(*r));
}

void
http_response_clear(struct http_response *r)
{
	if (!r)
		return;
	free(r->reason);
	free_headers(r->headers, r->n_headers);
	memset(r, 0, sizeof(*r));
}

int
http_parse_request(const char *buf, size_t len, const struct http_limits *lim,
		   struct http_request *out, char *why, size_t why_len)
{
	struct field_facts f = {0};
	size_t head_len = 0, n_fields = 0;
	int r;

	memset(out, 0, sizeof(*out));
	set_why(why, why_len, "%s", "");
	r = find_head_end(buf, len, lim, &head_len, &n_fields, why, why_len);
	if (r < 0)
		return r;
	const char *eol = memchr(buf, '\r', head_len);
	size_t line_len = (size_t)(eol - buf);
	r = parse_request_line(buf, line_len, out, why, why_len);
	if (r == 0)
		r = parse_fields(buf, line_len + 2, head_len - 2, n_fields, true, &out->headers,
				 &out->n_headers, &f, why, why_len);
	if (r == 0 && f.has_te && f.has_cl) {
		set_why(why, why_len, "both Content-Length and Transfer-Encoding");
		r = -EBADMSG;
	}
	if (r == 0 && f.has_te && out->minor == 0) {
		set_why(why, why_len, "Transfer-Encoding in an HTTP/1.0 request");
		r = -EBADMSG;
	}
	if (r < 0) {
		http_request_clear(out);
		return r;
	}
	if (f.has_te) {
		out->framing = HTTP_BODY_CHUNKED;
	} else if (f.has_cl) {
		out->framing = HTTP_BODY_LENGTH;
		out->content_length = f.cl;
	} else {
		out->framing = HTTP_BODY_NONE;
	}
	if (out->minor == 1)
		out->keep_alive = !f.conn_close;
	else
		out->keep_alive = f.conn_keep_alive && !f.conn_close;
	/* RFC 9110 §10.1.1 and §7.8: an HTTP/1.0 request's Expect and Upgrade are ignored. */
	out->expect_continue = out->minor == 1 && f.expect_continue;
	out->upgrade = out->minor == 1 && f.conn_upgrade && f.has_upgrade;
	out->head_len = head_len;
	return 0;
}

static int
parse_status_line(const char *line, size_t n, struct http_response *out, char *why, size_t why_len)
{
	if (n < 12 || parse_version(line, 8, &out->minor) < 0 || line[8] != ' ') {
		set_why(why, why_len, "bad status line (version: HTTP/1.0 or HTTP/1.1 only)");
		return -EBADMSG;
	}
	const char *st = line + 9;
	if (st[0] < '1' || st[0] > '5' || st[1] < '0' || st[1] > '9' || st[2] < '0' ||
	    st[2] > '9') {
		set_why(why, why_len, "bad status line (status code)");
		return -EBADMSG;
	}
	out->status = (unsigned)((st[0] - '0') * 100 + (st[1] - '0') * 10 + (st[2] - '0'));
	size_t i = 12;
	if (i < n) {
		if (line[i] != ' ') {
			set_why(why, why_len, "bad status line (status code)");
			return -EBADMSG;
		}
		i++;
	}
	for (size_t k = i; k < n; k++) {
		if (!is_field_byte((unsigned char)line[k])) {
			set_why(why, why_len, "bad status line (control byte in reason)");
			return -EBADMSG;
		}
	}
	out->reason = strndup(line + i, n - i);
	return out->reason ? 0 : -ENOMEM;
}

int
http_parse_response(const char *buf, size_t len, const struct http_limits *lim,
		    const char *request_method, struct http_response *out, char *why,
		    size_t why_len)
{
	struct field_facts f = {0};
	size_t head_len = 0, n_fields = 0;
	int r;

	memset(out, 0, sizeof(*out));
	set_why(why, why_len, "%s", "");
	r = find_head_end(buf, len, lim, &head_len, &n_fields, why, why_len);
	if (r < 0)
		return r;
	const char *eol = memchr(buf, '\r', head_len);
	size_t line_len = (size_t)(eol - buf);
	r = parse_status_line(buf, line_len, out, why, why_len);
	if (r == 0)
		r = parse_fields(buf, line_len + 2, head_len - 2, n_fields, false, &out->headers,
				 &out->n_headers, &f, why, why_len);
	if (r == 0 && f.has_te && f.has_cl) {
		set_why(why, why_len, "both Content-Length and Transfer-Encoding");
		r = -EBADMSG;
	}
	if (r == 0 && f.has_te && out->minor == 0) {
		set_why(why, why_len, "Transfer-Encoding in an HTTP/1.0 response");
		r = -EBADMSG;
	}
	if (r < 0) {
		http_response_clear(out);
		return r;
	}
	bool is_head = request_method && strcmp(request_method, "HEAD") == 0;
	bool is_connect_ok =
	    request_method && strcmp(request_method, "CONNECT") == 0 && out->status / 100 == 2;
	if (out->minor == 1)
		out->keep_alive = !f.conn_close;
	else
		out->keep_alive = f.conn_keep_alive && !f.conn_close;
	if (is_head || is_connect_ok || out->status / 100 == 1 || out->status == 204 ||
	    out->status == 304) {
		out->framing = HTTP_BODY_NONE;
	} else if (f.has_te) {
		out->framing = HTTP_BODY_CHUNKED;
	} else if (f.has_cl) {
		out->framing = HTTP_BODY_LENGTH;
		out->content_length = f.cl;
	} else {
		out->framing = HTTP_BODY_EOF;
		out->keep_alive = false;
	}
	out->head_len = head_len;
	return 0;
}

const struct http_header *
http_find_header(const struct http_header *h, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (h[i].name && strcasecmp(h[i].name, name) == 0)
			return &h[i];
	return NULL;
}

bool
http_is_hop_by_hop(const char *name, const char *connection)
{
	static const struct {
		const char *name;
		size_t len;
	} fixed[] = {
#define F(s) { s, sizeof(s) - 1 }
	    F("connection"),	     F("keep-alive"),	      F("proxy-connection"),
	    F("proxy-authorization"), F("proxy-authenticate"), F("te"),
	    F("trailer"),	     F("transfer-encoding"), F("upgrade"),
#undef F
	};
	size_t name_len = strlen(name);
	/* (a length first: every header of every message passes here) */
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (fixed[i].len == name_len && strcasecmp(name, fixed[i].name) == 0)
			return true;
	if (!connection)
		return false;
	for (const char *p = connection; *p;) {
		while (*p == ',' || is_ows(*p))
			p++;
		const char *start = p;
		while (*p && *p != ',')
			p++;
		const char *end = p;
		while (end > start && is_ows(end[-1]))
			end--;
		if ((size_t)(end - start) == name_len && name_len > 0 &&
		    strncasecmp(start, name, name_len) == 0)
			return true;
	}
	return false;
}

/* ---- chunked transfer coding (RFC 9112 §7.1) ---- */

enum {
	CH_SIZE_START = 0,
	CH_SIZE,
	CH_EXT_NAME_START,
	CH_EXT_NAME,
	CH_EXT_VALUE_START,
	CH_EXT_TOKEN,
	CH_EXT_QUOTED,
	CH_EXT_QUOTED_ESCAPE,
	CH_EXT_AFTER_QUOTED,
	CH_SIZE_LF,
	CH_DATA,
	CH_DATA_CR,
	CH_DATA_LF,
	CH_TRAILER_START,
	CH_TRAILER_NAME,
	CH_TRAILER_VALUE,
	CH_TRAILER_LF,
	CH_FINAL_LF,
	CH_DONE,
	CH_FAILED,
};

void
http_chunked_init(struct http_chunked *c)
{
	memset(c, 0, sizeof(*c));
	c->state = CH_SIZE_START;
}

static bool
is_qdtext(unsigned char c)
{
	return c == '\t' || c == ' ' || c == 0x21 || (c >= 0x23 && c <= 0x5b) ||
	       (c >= 0x5d && c <= 0x7e) || c >= 0x80;
}

/* One byte of a chunk-size line (after the size digits) or of the trailer section. */
static int
chunked_line_byte(struct http_chunked *c, unsigned char b, char *why, size_t why_len)
{
	switch (c->state) {
	case CH_SIZE_START:
	case CH_SIZE: {
		int d = enc_hex_value((char)b);
		if (d >= 0) {
			if (c->line_len >= 16) {
				set_why(why, why_len, "bad chunk size (more than 16 hex digits)");
				return -EBADMSG;
			}
			c->remaining = c->remaining << 4 | (uint64_t)d;
			c->state = CH_SIZE;
			return 0;
		}
		if (c->state == CH_SIZE && b == ';') {
			c->state = CH_EXT_NAME_START;
			return 0;
		}
		if (c->state == CH_SIZE && b == '\r') {
			c->state = CH_SIZE_LF;
			return 0;
		}
		set_why(why, why_len, "bad chunk size");
		return -EBADMSG;
	}
	case CH_EXT_NAME_START:
		if (is_tchar(b)) {
			c->state = CH_EXT_NAME;
			return 0;
		}
		break;
	case CH_EXT_NAME:
	case CH_EXT_TOKEN:
		if (is_tchar(b))
			return 0;
		if (b == '=' && c->state == CH_EXT_NAME) {
			c->state = CH_EXT_VALUE_START;
			return 0;
		}
		if (b == ';') {
			c->state = CH_EXT_NAME_START;
			return 0;
		}
		if (b == '\r') {
			c->state = CH_SIZE_LF;
			return 0;
		}
		break;
	case CH_EXT_VALUE_START:
		if (b == '"') {
			c->state = CH_EXT_QUOTED;
			return 0;
		}
		if (is_tchar(b)) {
			c->state = CH_EXT_TOKEN;
			return 0;
		}
		break;
	case CH_EXT_QUOTED:
		if (b == '"')
			c->state = CH_EXT_AFTER_QUOTED;
		else if (b == '\\')
			c->state = CH_EXT_QUOTED_ESCAPE;
		else if (!is_qdtext(b))
			break;
		return 0;
	case CH_EXT_QUOTED_ESCAPE:
		if (b == '\t' || (b >= 0x20 && b != 0x7f)) {
			c->state = CH_EXT_QUOTED;
			return 0;
		}
		break;
	case CH_EXT_AFTER_QUOTED:
		if (b == ';') {
			c->state = CH_EXT_NAME_START;
			return 0;
		}
		if (b == '\r') {
			c->state = CH_SIZE_LF;
			return 0;
		}
		break;
	default:
		break;
	}
	set_why(why, why_len, "bad chunk extension");
	return -EBADMSG;
}

static int
chunked_trailer_byte(struct http_chunked *c, unsigned char b, char *why, size_t why_len)
{
	if (++c->trailer_bytes > HTTP_TRAILERS_MAX) {
		set_why(why, why_len, "trailer section longer than %d bytes", HTTP_TRAILERS_MAX);
		return -E2BIG;
	}
	switch (c->state) {
	case CH_TRAILER_START:
		if (b == '\r') {
			c->state = CH_FINAL_LF;
			return 0;
		}
		if (is_tchar(b)) {
			c->state = CH_TRAILER_NAME;
			return 0;
		}
		set_why(why, why_len,
			is_ows((char)b) ? "obs-fold in trailer" : "bad trailer field");
		return -EBADMSG;
	case CH_TRAILER_NAME:
		if (is_tchar(b))
			return 0;
		if (b == ':') {
			c->state = CH_TRAILER_VALUE;
			return 0;
		}
		set_why(why, why_len, "bad trailer field name");
		return -EBADMSG;
	case CH_TRAILER_VALUE:
		if (b == '\r') {
			c->state = CH_TRAILER_LF;
			return 0;
		}
		if (is_field_byte(b))
			return 0;
		set_why(why, why_len, "control byte in trailer field");
		return -EBADMSG;
	case CH_TRAILER_LF:
	case CH_FINAL_LF:
		if (b != '\n') {
			set_why(why, why_len, "CR not followed by LF in trailer");
			return -EBADMSG;
		}
		c->state = c->state == CH_FINAL_LF ? CH_DONE : CH_TRAILER_START;
		return 0;
	default:
		set_why(why, why_len, "chunked decoder state");
		return -EBADMSG;
	}
}

int
http_chunked_step(struct http_chunked *c, const uint8_t *in, size_t n, size_t *used,
		  size_t *data_off, size_t *data_len, char *why, size_t why_len)
{
	size_t i = 0;
	int r = 0;

	*used = 0;
	*data_off = 0;
	*data_len = 0;
	if (c->state == CH_DONE)
		return 1;
	if (c->state == CH_FAILED) {
		set_why(why, why_len, "chunked body already refused");
		return -EBADMSG;
	}
	while (i < n && r == 0) {
		unsigned char b = in[i];
		switch (c->state) {
		case CH_DATA: {
			uint64_t span = n - i;
			if (span > c->remaining)
				span = c->remaining;
			*data_off = i;
			*data_len = (size_t)span;
			c->remaining -= span;
			i += (size_t)span;
			if (c->remaining == 0)
				c->state = CH_DATA_CR;
			*used = i;
			return 0;
		}
		case CH_DATA_CR:
		case CH_DATA_LF:
			if (b != (c->state == CH_DATA_CR ? '\r' : '\n')) {
				set_why(why, why_len, "chunk data not followed by CRLF");
				r = -EBADMSG;
				break;
			}
			if (c->state == CH_DATA_CR) {
				c->state = CH_DATA_LF;
			} else {
				c->state = CH_SIZE_START;
				c->line_len = 0;
				c->remaining = 0;
			}
			i++;
			break;
		case CH_SIZE_LF:
			if (b != '\n') {
				set_why(why, why_len, "CR not followed by LF after chunk size");
				r = -EBADMSG;
				break;
			}
			c->line_len = 0;
			c->state = c->remaining ? CH_DATA : CH_TRAILER_START;
			i++;
			break;
		case CH_TRAILER_START:
		case CH_TRAILER_NAME:
		case CH_TRAILER_VALUE:
		case CH_TRAILER_LF:
		case CH_FINAL_LF:
			r = chunked_trailer_byte(c, b, why, why_len);
			if (r == 0)
				i++;
			if (r == 0 && c->state == CH_DONE)
				r = 1;
			break;
		default:
			/* the size line's bytes before its CR are capped */
			if (b != '\r' && c->line_len >= HTTP_CHUNK_LINE_MAX) {
				set_why(why, why_len, "chunk-size line longer than %d bytes",
					HTTP_CHUNK_LINE_MAX);
				r = -E2BIG;
				break;
			}
			r = chunked_line_byte(c, b, why, why_len);
			if (r == 0) {
				c->line_len++;
				i++;
			}
			break;
		}
	}
	if (r < 0)
		c->state = CH_FAILED;
	*used = i;
	return r;
}

/* ---- authorities, absolute-form and the canonical path (docs/box-policy.5.md) ---- */

static int
parse_port(const char *s, size_t n, uint16_t *port)
{
	unsigned v = 0;
	if (n == 0 || n > 5)
		return -EBADMSG;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EBADMSG;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return -EBADMSG;
	*port = (uint16_t)v;
	return 0;
}

/* An authority given as a span (absolute-form stops at '/', '?' or '#'). */
static int
parse_authority_span(const char *s, size_t n, uint16_t default_port, char host_out[HTTP_HOST_MAX],
		     uint16_t *port_out, bool *is_ip)
{
	const char *host;
	size_t host_len;
	const char *rest;
	bool ip = false;

	if (n == 0 || memchr(s, '@', n))
		return -EBADMSG; /* empty, or userinfo: "user@host" is never honoured */
	if (s[0] == '[') {
		const char *close = memchr(s, ']', n);
		if (!close)
			return -EBADMSG;
		host = s + 1;
		host_len = (size_t)(close - host);
		/* an IP-literal is IPv6 (IPvFuture and bracketed IPv4 are refused) */
		if (host_len == 0 || !memchr(host, ':', host_len) || host[0] == 'v' ||
		    host[0] == 'V')
			return -EBADMSG;
		rest = close + 1;
	} else {
		host = s;
		const char *colon = memchr(s, ':', n);
		host_len = colon ? (size_t)(colon - s) : n;
		rest = s + host_len;
		if (colon && memchr(colon + 1, ':', n - host_len - 1))
			return -EBADMSG; /* an IPv6 address outside brackets */
	}
	size_t rest_len = n - (size_t)(rest - s);
	if (rest_len == 0) {
		if (default_port == 0)
			return -EBADMSG;
		*port_out = default_port;
	} else if (rest[0] != ':' || parse_port(rest + 1, rest_len - 1, port_out) < 0) {
		return -EBADMSG;
	}
	if (host_len == 0 || addr_host_spelling(host, host_len, host_out, HTTP_HOST_MAX, &ip) < 0)
		return -EBADMSG;
	if (s[0] == '[' && !ip)
		return -EBADMSG;
	*is_ip = ip;
	return 0;
}

int
http_parse_authority(const char *s, uint16_t default_port, char host_out[HTTP_HOST_MAX],
		     uint16_t *port_out, bool *is_ip)
{
	return parse_authority_span(s, strlen(s), default_port, host_out, port_out, is_ip);
}

int
http_parse_absolute(const char *target, char host_out[HTTP_HOST_MAX], uint16_t *port_out,
		    bool *is_ip, char **origin_form)
{
	*origin_form = NULL;
	if (strncasecmp(target, "https://", 8) == 0)
		return -EPROTONOSUPPORT;
	if (strncasecmp(target, "http://", 7) != 0)
		return -EBADMSG;
	const char *auth = target + 7;
	size_t auth_len = strcspn(auth, "/?#");
	int r = parse_authority_span(auth, auth_len, 80, host_out, port_out, is_ip);
	if (r < 0)
		return r;
	const char *rest = auth + auth_len;
	size_t rest_len = strcspn(rest, "#");
	for (size_t i = 0; i < rest_len; i++)
		if ((unsigned char)rest[i] <= 0x20 || (unsigned char)rest[i] >= 0x7f)
			return -EBADMSG;
	bool need_slash = rest_len == 0 || rest[0] == '?';
	char *o = malloc(rest_len + 2);
	if (!o)
		return -ENOMEM;
	size_t k = 0;
	if (need_slash)
		o[k++] = '/';
	memcpy(o + k, rest, rest_len);
	o[k + rest_len] = '\0';
	*origin_form = o;
	return 0;
}

/*
 * RFC 3986 §5.2.4 on an absolute path: `in` is consumed (it is rewritten as the
 * algorithm says), `out` (at least as large) receives the result.
 */
static void
remove_dot_segments(char *in, char *out)
{
	size_t k = 0;

	while (*in) {
		if (strncmp(in, "../", 3) == 0) {
			in += 3;
		} else if (strncmp(in, "./", 2) == 0) {
			in += 2;
		} else if (strncmp(in, "/./", 3) == 0) {
			in += 2;
		} else if (strcmp(in, "/.") == 0) {
			in[1] = '\0';
		} else if (strncmp(in, "/../", 4) == 0 || strcmp(in, "/..") == 0) {
			if (in[3] == '/')
				in += 3;
			else
				in[1] = '\0';
			while (k > 0 && out[k - 1] != '/')
				k--;
			if (k > 0)
				k--;
		} else if (strcmp(in, ".") == 0 || strcmp(in, "..") == 0) {
			break;
		} else {
			do
				out[k++] = *in++;
			while (*in && *in != '/');
		}
	}
	out[k] = '\0';
}

int
http_canonical_path(const char *origin_form, char **path_out)
{
	*path_out = NULL;
	if (origin_form[0] == '\0') {
		/* an empty path (absolute-form "http://h") is "/" */
		*path_out = strdup("/");
		return *path_out ? 0 : -ENOMEM;
	}
	if (origin_form[0] != '/')
		return -EBADMSG; /* "*", absolute-form and authority-form are not origin-form */
	for (const char *p = origin_form; *p; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f || *p == '#')
			return -EBADMSG;
	size_t n = strcspn(origin_form, "?");
	/* each %XX stays 3 bytes or becomes 1: n + 1 always fits */
	_cleanup_free_ char *decoded = malloc(n + 1);
	char *out = malloc(n + 2);
	if (!decoded || !out) {
		free(out);
		return -ENOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)origin_form[i];
		if (c != '%') {
			decoded[k++] = (char)c;
			continue;
		}
		int hi = i + 2 < n ? enc_hex_value(origin_form[i + 1]) : -1;
		int lo = i + 2 < n ? enc_hex_value(origin_form[i + 2]) : -1;
		if (hi < 0 || lo < 0) {
			free(out);
			return -EBADMSG;
		}
		unsigned char d = (unsigned char)(hi << 4 | lo);
		if (enc_is_unreserved(d)) {
			decoded[k++] = (char)d;
		} else {
			decoded[k++] = '%';
			decoded[k++] = "0123456789ABCDEF"[hi];
			decoded[k++] = "0123456789ABCDEF"[lo];
		}
		i += 2;
	}
	decoded[k] = '\0';
	remove_dot_segments(decoded, out);
	if (out[0] == '\0')
		strcpy(out, "/");
	*path_out = out;
	return 0;
}

/* ---- x-box-reason ------------------------------------------------------------------- */

/* One character of s[0..n) as it goes into a header value: printable ASCII as it is, any
 * other character as \u{X} (a byte that is not UTF-8 as \u{fffd}). Returns its length in s. */
static size_t
reason_char(const char *s, size_t n, char *buf, size_t *bl)
{
	unsigned char c = (unsigned char)s[0];
	if (c >= 0x20 && c < 0x7f) {
		buf[0] = (char)c;
		*bl = 1;
		return 1;
	}
	uint32_t cp = 0xfffd;
	size_t len = c < 0x80 ? 1 : enc_utf8_char((const uint8_t *)s, n, &cp);
	if (c < 0x80)
		cp = c;
	*bl = (size_t)snprintf(buf, 16, "\\u{%x}", (unsigned)cp);
	return len ? len : 1;
}

/* s[0..n) escaped into out; cut with "..." to fit cap - 1 bytes. Returns the length. */
static size_t
reason_escape(const char *s, size_t n, char *out, size_t cap, bool *cut)
{
	size_t total = 0, o = 0;
	char buf[16];
	size_t bl;
	for (size_t i = 0; i < n;) {
		i += reason_char(s + i, n - i, buf, &bl);
		total += bl;
	}
	*cut = total > cap - 1;
	for (size_t i = 0; i < n;) {
		i += reason_char(s + i, n - i, buf, &bl);
		if (o + bl > cap - 1 - (*cut ? 3 : 0))
			break;
		memcpy(out + o, buf, bl);
		o += bl;
	}
	if (*cut) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
	return o;
}

size_t
http_reason_header(const char *msg, char *out, size_t cap)
{
	bool cut;
	size_t n = strlen(msg);
	if (cap < 8) {
		if (cap)
			out[0] = '\0';
		return 0;
	}
	size_t len = reason_escape(msg, n, out, cap, &cut);
	if (!cut)
		return len;
	/* Too long: a decision's message (box-policy(5)) loses its resource, reading as one
	 * without a resource does, so that the rule and its description stay. The resource
	 * ends at the first quote not escaped. */
	static const char denied[] = "policy denied this operation on '";
	if (strncmp(msg, denied, sizeof(denied) - 1) != 0)
		return len;
	const char *on = msg + sizeof(denied) - 6, *q = msg + sizeof(denied) - 1;
	while (*q && *q != '\'') {
		if (*q == '\\' && q[1])
			q++;
		q++;
	}
	if (!*q)
		return len;
	size_t head = (size_t)(on - msg), tail = strlen(q + 1);
	char *shorter = malloc(head + tail + 1);
	if (!shorter)
		return len;
	memcpy(shorter, msg, head);
	memcpy(shorter + head, q + 1, tail + 1);
	len = reason_escape(shorter, head + tail, out, cap, &cut);
	free(shorter);
	return len;
}
