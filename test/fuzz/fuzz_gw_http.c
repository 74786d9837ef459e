/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_gw_http.c — box-gateway's HTTP parsing (http.c) and host spelling
 * (addr.c) on arbitrary bytes.
 *
 * The input goes, whole, to each of: http_parse_request and
 * http_parse_response (two sets of limits; byte 0 picks the request method a
 * response answers), the chunked decoder, http_canonical_path,
 * http_parse_authority, http_parse_absolute and addr_host_spelling.
 * Properties (abort() on violation):
 * - a parse returns 0, -EAGAIN, -E2BIG or -EBADMSG; a refusal leaves *out
 *   empty; an accepted head respects the limits, its method is a token, its
 *   values carry no control byte and no outer whitespace, the prefix one
 *   byte shorter is -EAGAIN, and the head re-serialized from the parsed
 *   fields parses to the same fields and framing; http_head_end agrees
 *   with the parse (and with itself fed in pieces);
 * - the chunked decoder gives the same result, the same consumed length and
 *   the same data whole, byte by byte, and split at the offset byte 0 names;
 *   a call never stalls (consumes nothing) on non-empty input;
 * - canonical(canonical(p)) == canonical(p), the result starts with '/' and
 *   has no dot segment and no lowercase or unreserved escape;
 * - addr_host_spelling(addr_host_spelling(h)) == addr_host_spelling(h), with
 *   the same is_ip; authorities give spelled hosts.
 * Seeds: test/fuzz/corpus/gw_http (heads, chunked bodies, paths, hosts).
 * Trusts: nothing; the input is arbitrary bytes.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "box-gateway/addr.h"
#include "box-gateway/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(cond)                                                                              \
	do {                                                                                       \
		if (!(cond))                                                                       \
			abort();                                                                   \
	} while (0)

static bool
is_ows(char c)
{
	return c == ' ' || c == '\t';
}

static void
check_headers(const struct http_header *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		REQUIRE(h[i].name && h[i].value && h[i].name[0]);
		size_t vl = strlen(h[i].value);
		if (vl)
			REQUIRE(!is_ows(h[i].value[0]) && !is_ows(h[i].value[vl - 1]));
		for (const char *p = h[i].value; *p; p++)
			REQUIRE(*p == '\t' || ((unsigned char)*p >= 0x20 && *p != 0x7f));
		for (const char *p = h[i].name; *p; p++)
			REQUIRE((unsigned char)*p > 0x20 && (unsigned char)*p < 0x7f && *p != ':');
	}
}

static bool
valid_rc(int rc)
{
	return rc == 0 || rc == -EAGAIN || rc == -E2BIG || rc == -EBADMSG;
}

/* Serialize fields after a start line; the caller frees. */
static char *
serialize(const char *start_line, const struct http_header *h, size_t n, size_t *len)
{
	size_t cap = strlen(start_line) + 4; /* CRLF, final CRLF; +1 for the NUL below */
	for (size_t i = 0; i < n; i++)
		cap += strlen(h[i].name) + strlen(h[i].value) + 4;
	char *s = malloc(cap + 1);
	REQUIRE(s);
	size_t k = (size_t)sprintf(s, "%s\r\n", start_line);
	for (size_t i = 0; i < n; i++)
		k += (size_t)sprintf(s + k, "%s: %s\r\n", h[i].name, h[i].value);
	k += (size_t)sprintf(s + k, "\r\n");
	*len = k;
	return s;
}

static void
same_headers(const struct http_header *a, size_t na, const struct http_header *b, size_t nb)
{
	REQUIRE(na == nb);
	for (size_t i = 0; i < na; i++)
		REQUIRE(strcmp(a[i].name, b[i].name) == 0 && strcmp(a[i].value, b[i].value) == 0);
}

static void
check_canonical(const char *origin)
{
	char *p = NULL, *q = NULL;
	int rc = http_canonical_path(origin, &p);
	REQUIRE(rc == 0 || rc == -EBADMSG);
	if (rc < 0) {
		REQUIRE(p == NULL);
		return;
	}
	REQUIRE(p && p[0] == '/');
	REQUIRE(!strstr(p, "/./") && !strstr(p, "/../"));
	size_t n = strlen(p);
	REQUIRE(!(n >= 2 && strcmp(p + n - 2, "/.") == 0));
	REQUIRE(!(n >= 3 && strcmp(p + n - 3, "/..") == 0));
	REQUIRE(!strchr(p, '?') && !strchr(p, '#'));
	for (const char *e = strchr(p, '%'); e; e = strchr(e + 1, '%')) {
		REQUIRE(e[1] && e[2]);
		for (int k = 1; k <= 2; k++)
			REQUIRE((e[k] >= '0' && e[k] <= '9') || (e[k] >= 'A' && e[k] <= 'F'));
	}
	REQUIRE(http_canonical_path(p, &q) == 0);
	REQUIRE(strcmp(p, q) == 0);
	free(p);
	free(q);
}

static void
check_request(const char *buf, size_t len, const struct http_limits *lim)
{
	struct http_request r, r2;
	char why[128];
	int rc = http_parse_request(buf, len, lim, &r, why, sizeof(why));
	REQUIRE(valid_rc(rc));
	/* the cheap completeness test agrees, fed whole or in 7-byte pieces */
	size_t scanned = 0, end = 0, scanned7 = 0, end7 = 0;
	int he = http_head_end(buf, len, lim->max_head, &scanned, &end), he7 = 0;
	for (size_t n = 0; he7 == 0 && n < len;) {
		n = len - n > 7 ? n + 7 : len;
		he7 = http_head_end(buf, n, lim->max_head, &scanned7, &end7);
	}
	REQUIRE(he == he7);
	if (he == 1)
		REQUIRE(end == end7);
	if (rc == 0)
		REQUIRE(he == 1 && end == r.head_len);
	if (rc == -EAGAIN)
		REQUIRE(he == 0);
	if (rc < 0) {
		REQUIRE(!r.method && !r.target && !r.headers && !r.n_headers && !r.head_len);
		return;
	}
	REQUIRE(r.head_len >= 4 && r.head_len <= len && r.head_len <= lim->max_head);
	REQUIRE(memcmp(buf + r.head_len - 4, "\r\n\r\n", 4) == 0);
	REQUIRE(r.n_headers <= lim->max_headers && r.minor <= 1);
	REQUIRE(r.method[0] && r.target[0]);
	check_headers(r.headers, r.n_headers);
	REQUIRE(r.framing == HTTP_BODY_NONE || r.framing == HTTP_BODY_LENGTH ||
		r.framing == HTTP_BODY_CHUNKED);
	REQUIRE(http_parse_request(buf, r.head_len - 1, lim, &r2, why, sizeof(why)) == -EAGAIN);

	/* re-serialized, it parses to the same thing */
	char line[HTTP_HOST_MAX * 40];
	if (strlen(r.method) + strlen(r.target) + 16 < sizeof(line)) {
		snprintf(line, sizeof(line), "%s %s HTTP/1.%u", r.method, r.target, r.minor);
		size_t n;
		char *s = serialize(line, r.headers, r.n_headers, &n);
		struct http_limits big = {.max_head = n, .max_headers = r.n_headers};
		REQUIRE(http_parse_request(s, n, &big, &r2, why, sizeof(why)) == 0);
		REQUIRE(strcmp(r.method, r2.method) == 0 && strcmp(r.target, r2.target) == 0);
		same_headers(r.headers, r.n_headers, r2.headers, r2.n_headers);
		REQUIRE(r.framing == r2.framing && r.content_length == r2.content_length &&
			r.keep_alive == r2.keep_alive && r.upgrade == r2.upgrade &&
			r.expect_continue == r2.expect_continue);
		http_request_clear(&r2);
		free(s);
	}
	if (r.target[0] == '/')
		check_canonical(r.target);
	char host[HTTP_HOST_MAX];
	uint16_t port;
	bool ip;
	char *origin = NULL;
	if (http_parse_absolute(r.target, host, &port, &ip, &origin) == 0) {
		REQUIRE(origin && origin[0] == '/' && port != 0);
		check_canonical(origin);
	}
	free(origin);
	http_request_clear(&r);
	REQUIRE(!r.method && !r.headers);
}

static void
check_response(const char *buf, size_t len, const struct http_limits *lim, const char *method)
{
	struct http_response r, r2;
	char why[128];
	int rc = http_parse_response(buf, len, lim, method, &r, why, sizeof(why));
	REQUIRE(valid_rc(rc));
	if (rc < 0) {
		REQUIRE(!r.reason && !r.headers && !r.n_headers && !r.head_len && !r.status);
		return;
	}
	REQUIRE(r.head_len >= 4 && r.head_len <= len && r.head_len <= lim->max_head);
	REQUIRE(r.status >= 100 && r.status <= 599 && r.minor <= 1 && r.reason);
	REQUIRE(r.n_headers <= lim->max_headers);
	check_headers(r.headers, r.n_headers);
	if (r.framing == HTTP_BODY_EOF)
		REQUIRE(!r.keep_alive);
	if (r.status < 200 || r.status == 204 || r.status == 304 ||
	    (method && strcmp(method, "HEAD") == 0))
		REQUIRE(r.framing == HTTP_BODY_NONE);
	REQUIRE(http_parse_response(buf, r.head_len - 1, lim, method, &r2, why, sizeof(why)) ==
		-EAGAIN);
	char line[64];
	if (strlen(r.reason) < 32) {
		snprintf(line, sizeof(line), "HTTP/1.%u %03u %s", r.minor, r.status, r.reason);
		size_t n;
		char *s = serialize(line, r.headers, r.n_headers, &n);
		struct http_limits big = {.max_head = n, .max_headers = r.n_headers};
		REQUIRE(http_parse_response(s, n, &big, method, &r2, why, sizeof(why)) == 0);
		REQUIRE(r.status == r2.status && strcmp(r.reason, r2.reason) == 0);
		same_headers(r.headers, r.n_headers, r2.headers, r2.n_headers);
		REQUIRE(r.framing == r2.framing && r.content_length == r2.content_length &&
			r.keep_alive == r2.keep_alive);
		http_response_clear(&r2);
		free(s);
	}
	http_response_clear(&r);
}

struct chunk_run {
	int rc;
	size_t consumed;
	size_t data_len;
	uint64_t data_sum; /* a position-weighted checksum of the data */
};

/* Feed [0, cut) until consumed or refused, then the rest, `step` bytes at most per call. */
static void
run_chunked(const uint8_t *in, size_t n, size_t cut, size_t step, struct chunk_run *out)
{
	struct http_chunked c;
	size_t pos = 0;
	char why[128];
	http_chunked_init(&c);
	memset(out, 0, sizeof(*out));
	for (int piece = 0; piece < 2 && out->rc == 0; piece++) {
		size_t end = piece == 0 ? cut : n;
		while (pos < end && out->rc == 0) {
			size_t avail = end - pos;
			if (step && avail > step)
				avail = step;
			size_t used = 99, off = 99, len = 99;
			int rc = http_chunked_step(&c, in + pos, avail, &used, &off, &len, why,
						   sizeof(why));
			REQUIRE(rc == 0 || rc == 1 || rc == -EBADMSG || rc == -E2BIG);
			REQUIRE(used <= avail);
			REQUIRE(len == 0 || off + len <= used);
			for (size_t k = 0; k < len; k++) {
				out->data_sum = out->data_sum * 31 + in[pos + off + k];
			}
			out->data_len += len;
			pos += used;
			out->rc = rc;
			if (rc == 0)
				REQUIRE(used > 0);
		}
	}
	out->consumed = pos;
}

static void
check_chunked(const uint8_t *in, size_t n, size_t cut)
{
	struct chunk_run whole, bytes, split;
	run_chunked(in, n, n, 0, &whole);
	run_chunked(in, n, n, 1, &bytes);
	run_chunked(in, n, cut, 0, &split);
	REQUIRE(whole.rc == bytes.rc && whole.rc == split.rc);
	REQUIRE(whole.data_len == bytes.data_len && whole.data_len == split.data_len);
	REQUIRE(whole.data_sum == bytes.data_sum && whole.data_sum == split.data_sum);
	REQUIRE(whole.consumed == bytes.consumed && whole.consumed == split.consumed);
}

static void
check_host(const char *s, size_t n)
{
	char a[HTTP_HOST_MAX], b[HTTP_HOST_MAX];
	bool ip1, ip2;
	int rc = addr_host_spelling(s, n, a, sizeof(a), &ip1);
	REQUIRE(rc == 0 || rc == -EINVAL || rc == -ENOSPC);
	if (rc < 0)
		return;
	for (const char *p = a; *p; p++)
		REQUIRE(!(*p >= 'A' && *p <= 'Z'));
	REQUIRE(a[0] && a[strlen(a) - 1] != '.');
	REQUIRE(addr_host_spelling(a, strlen(a), b, sizeof(b), &ip2) == 0);
	REQUIRE(strcmp(a, b) == 0 && ip1 == ip2);
}

static void
check_authority(const char *s)
{
	char host[HTTP_HOST_MAX], again[HTTP_HOST_MAX];
	uint16_t port = 0;
	bool ip, ip2;
	int rc = http_parse_authority(s, 443, host, &port, &ip);
	REQUIRE(rc == 0 || rc == -EBADMSG);
	if (rc < 0)
		return;
	REQUIRE(port != 0);
	REQUIRE(addr_host_spelling(host, strlen(host), again, sizeof(again), &ip2) == 0);
	REQUIRE(strcmp(host, again) == 0 && ip == ip2);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct http_limits wide = {.max_head = 65536, .max_headers = 1000};
	static const struct http_limits narrow = {.max_head = 64, .max_headers = 3};
	static const char *const methods[] = {"GET", "HEAD", "CONNECT", "POST", NULL};
	const char *buf = (const char *)data;

	check_request(buf, size, &wide);
	check_request(buf, size, &narrow);
	const char *method = methods[size ? data[0] % 5 : 0];
	check_response(buf, size, &wide, method);
	check_response(buf, size, &narrow, method);
	check_chunked(data, size, size ? data[0] % (size + 1) : 0);
	if (size > 1)
		check_chunked(data + 1, size - 1, data[0] % size);

	/* the string functions take NUL-terminated text: the input up to its first NUL */
	char *s = malloc(size + 1);
	REQUIRE(s);
	memcpy(s, data, size);
	s[size] = '\0';
	check_canonical(s);
	check_host(buf, size);
	check_host(s, strlen(s));
	check_authority(s);
	char host[HTTP_HOST_MAX];
	uint16_t port;
	bool ip;
	char *origin = NULL;
	int rc = http_parse_absolute(s, host, &port, &ip, &origin);
	REQUIRE(rc == 0 || rc == -EBADMSG || rc == -EPROTONOSUPPORT);
	if (rc == 0)
		check_canonical(origin);
	else
		REQUIRE(origin == NULL);
	free(origin);
	free(s);
	return 0;
}
