/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http.h — strict HTTP/1.1 message parsing for box-gateway (no I/O).
 *
 * The gateway parses what the sandbox sends (requests) and what upstream
 * servers send (responses) with these functions only. Both peers are
 * untrusted: every length is capped by struct http_limits, and anything
 * RFC 9112 lets a recipient reject is rejected: CL together
 * with TE, more than one Content-Length (repeated or comma-joined), a
 * Transfer-Encoding other than exactly "chunked", obs-fold, a bare LF, a
 * NUL or other control byte in a field, whitespace before a colon, a bad
 * chunk size. A parse never half-succeeds: on error *out is left empty.
 *
 * Return values: 0 parsed; -EAGAIN the head is not complete yet (and is
 * still under the limits); -E2BIG the head exceeds max_head or max_headers;
 * -EBADMSG malformed (why names what). Every function is pure and
 * thread-safe; nothing here logs.
 *
 * Ownership: every string in struct http_request / http_response (method,
 * target, reason, each header's name and value) and the headers array are
 * separately malloc'd; http_*_clear frees them all (and accepts a cleared or
 * zeroed struct). Other modules (cred.c) may replace a header's value with a
 * new malloc'd string (freeing the old one) or realloc the headers array to
 * append a header whose strings are malloc'd — clear frees those too. The
 * parse functions never keep pointers into the input buffer.
 *
 * Choices where the RFCs leave room (all refusals are -EBADMSG):
 * - no empty line is tolerated before the request line; the request-target is
 *   visible ASCII only (a raw non-ASCII byte would be a second spelling of a
 *   path that policy compares percent-encoded);
 * - a Content-Length of 0 gives HTTP_BODY_LENGTH with content_length 0; more
 *   than 2^53 is refused; leading zeros are fine;
 * - Host (more than one refused) and Expect are request-only rules; a missing
 *   Host is the caller's to judge; HTTP/1.0 Expect and Upgrade are ignored;
 * - a response to CONNECT with a 2xx status has no body (HTTP_BODY_NONE), and
 *   CL with TE is refused whatever the status;
 * - chunk sizes are 1-16 hex digits; a chunk-size line (size + extensions,
 *   no whitespace anywhere) is capped at 4096 bytes before its CRLF, the
 *   trailer section (every byte after the last chunk's line, final CRLF
 *   included) at 16384; trailers are checked like fields and discarded.
 */
#ifndef BOX_GATEWAY_HTTP_H
#define BOX_GATEWAY_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct http_limits {
	size_t max_head;     /* bytes of request/status line + fields + CRLFCRLF */
	size_t max_headers;  /* field lines */
};

struct http_header {
	char *name;          /* as sent (compare case-insensitively) */
	char *value;         /* leading/trailing OWS removed */
};

enum http_framing {
	HTTP_BODY_NONE,      /* no body (request without CL/TE; HEAD/1xx/204/304 replies) */
	HTTP_BODY_LENGTH,    /* content_length bytes */
	HTTP_BODY_CHUNKED,   /* Transfer-Encoding: chunked */
	HTTP_BODY_EOF,       /* response only: until the server closes */
};

struct http_request {
	char *method;        /* token, case-sensitive as sent */
	char *target;        /* request-target as sent */
	unsigned minor;      /* HTTP/1.minor: 0 or 1 */
	struct http_header *headers;
	size_t n_headers;
	enum http_framing framing;
	uint64_t content_length;   /* HTTP_BODY_LENGTH */
	bool keep_alive;           /* version default, then Connection: close/keep-alive */
	bool expect_continue;      /* Expect: 100-continue (any other Expect: -EBADMSG) */
	bool upgrade;              /* Connection names "upgrade" and an Upgrade field exists */
	size_t head_len;           /* bytes of the head, CRLFCRLF included */
};

struct http_response {
	unsigned status;           /* 100-599 */
	char *reason;
	unsigned minor;
	struct http_header *headers;
	size_t n_headers;
	enum http_framing framing; /* from status, the request's method and the fields */
	uint64_t content_length;
	bool keep_alive;
	size_t head_len;
};

int http_parse_request(const char *buf, size_t len, const struct http_limits *lim,
		       struct http_request *out, char *why, size_t why_len);
/* request_method: the method of the request this answers (HEAD has no body). */
int http_parse_response(const char *buf, size_t len, const struct http_limits *lim,
			const char *request_method, struct http_response *out,
			char *why, size_t why_len);
/*
 * Cheap completeness test for a head arriving in pieces: http_parse_* scan
 * from the start each time, so calling them on every read of a slow sender
 * costs O(n^2) up to max_head. The caller keeps *scanned (0 for a new head)
 * between calls; each call looks only at the new bytes. Returns 1 with
 * *head_len (CRLFCRLF included, <= max_head) once the head is complete —
 * then parse it — 0 to wait, -E2BIG when max_head bytes hold no end.
 * (Added by gwhttp; the parse functions' verdicts do not depend on it.)
 */
int http_head_end(const char *buf, size_t len, size_t max_head, size_t *scanned,
		  size_t *head_len);
void http_request_clear(struct http_request *r);
void http_response_clear(struct http_response *r);

/* The first field named `name` (case-insensitive), or NULL. */
const struct http_header *http_find_header(const struct http_header *h, size_t n,
					   const char *name);

/*
 * Hop-by-hop fields (RFC 9110 §7.6.1: Connection and every field it names,
 * Keep-Alive, Proxy-Connection, Proxy-Authorization, Proxy-Authenticate, TE,
 * Trailer, Transfer-Encoding, Upgrade) — true when `name` must not be
 * forwarded. `connection` is the Connection field's value or NULL. Upgrade
 * (and Connection: upgrade) are kept by the caller on a permitted upgrade.
 */
bool http_is_hop_by_hop(const char *name, const char *connection);

/*
 * Chunked transfer decoding, incremental. Feed any number of bytes;
 * the decoder consumes a prefix (*used) and reports at most one span of
 * body data inside that prefix (in + *data_off, *data_len; 0 when none).
 * Returns 1 when the last chunk and its trailer section have been consumed,
 * 0 to go on, -EBADMSG on a bad chunk size, extension or trailer, -E2BIG when
 * a chunk-size line or the trailers exceed their caps (why says which).
 */
struct http_chunked {
	int state;
	uint64_t remaining;        /* data left in the current chunk */
	size_t line_len;           /* bytes of the current size/trailer line */
	size_t trailer_bytes;
};
void http_chunked_init(struct http_chunked *c);
int http_chunked_step(struct http_chunked *c, const uint8_t *in, size_t n, size_t *used,
		      size_t *data_off, size_t *data_len, char *why, size_t why_len);

/*
 * Targets and authorities (the spellings docs/box-policy.5.md gives `host` and
 * `path`). host_out gets addr_host_spelling() of the host (IP literals
 * included), at most HTTP_HOST_MAX bytes with the NUL.
 */
#define HTTP_HOST_MAX 256
/* "host:port" of CONNECT (port required) or of a Host field (port optional:
 * default_port; default_port 0 = required). IPv6 in brackets (no zone id);
 * port 1-65535, 1-5 digits; userinfo ("user@host"), a percent-encoded or
 * otherwise invalid name, an empty port: -EBADMSG. */
int http_parse_authority(const char *s, uint16_t default_port, char host_out[HTTP_HOST_MAX],
			 uint16_t *port_out, bool *is_ip);
/* "http://authority[/path][?query]" (absolute-form, http only; a fragment is
 * dropped); *origin_form gets "/path[?query]" ("/" when empty, "/?q" for
 * "?q"), malloc'd. The scheme is case-insensitive; "https://" is
 * -EPROTONOSUPPORT (the proxy answers 400: https goes through CONNECT), any
 * other scheme or a bad authority -EBADMSG. */
int http_parse_absolute(const char *target, char host_out[HTTP_HOST_MAX], uint16_t *port_out,
			bool *is_ip, char **origin_form);
/* Origin-form "/path[?query]" -> the canonical path of docs/box-policy.5.md (percent-
 * decode unreserved characters only, other escapes' hex uppercased, dot
 * segments removed, query dropped), malloc'd. -EBADMSG: not origin-form, a
 * bad escape, a control byte. Decoding comes first, so "%2e%2e" is removed
 * as ".."; "%2F" stays "%2F" (never a separator) and "%00" stays "%00";
 * empty segments ("//") and a trailing "/" are kept, as RFC 3986 makes them
 * different resources; "" is "/"; '#', SP and bytes outside visible ASCII
 * are refused. canonical(canonical(p)) == canonical(p). */
int http_canonical_path(const char *origin_form, char **path_out);

/*
 * The x-box-reason value of a refusal whose body is msg (a decision's message, or the
 * gateway's own reason): printable ASCII as it is, every other character as \u{X} (hex code
 * point; a byte that is not UTF-8 as \u{fffd}), so no CR, LF or other control byte and no
 * byte above 0x7e reaches the header. At most cap - 1 bytes: a longer value first leaves out
 * the quoted resource (" on '...'", as a message without one reads), then is cut with "...".
 * Returns the length written (cap < 8: nothing).
 */
#define HTTP_REASON_MAX 1024
size_t http_reason_header(const char *msg, char *out, size_t cap);

#endif
