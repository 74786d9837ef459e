/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_gw_http.c — box-gateway/http.c: request and response heads (the strict
 * grammar and every request-smuggling refusal of docs/box-gateway.8.md), the caps,
 * incremental parsing, ownership of parsed strings, hop-by-hop fields, the
 * chunked decoder (split at every byte boundary), authorities, absolute-form
 * targets, the canonical path of docs/box-policy.5.md, and the x-box-reason value of a
 * refusal (no control or non-ASCII byte, bounded, the rule kept).
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "box-gateway/http.h"
#include "tap.h"

static const struct http_limits lim = {.max_head = 8192, .max_headers = 100};
static char why[256];

static int
req(const char *s, struct http_request *r)
{
	why[0] = '\0';
	return http_parse_request(s, strlen(s), &lim, r, why, sizeof(why));
}

/* A request must be refused with `err` and leave *out empty. */
static int
req_err(const char *s)
{
	struct http_request r;
	int rc = req(s, &r);
	if (r.method || r.target || r.headers || r.n_headers || r.head_len) {
		printf("#   refused request left fields set: %s\n", s);
		rc = 1000;
	}
	if (rc == -EBADMSG && why[0] == '\0') {
		printf("#   no reason for: %s\n", s);
		rc = 1001;
	}
	http_request_clear(&r);
	return rc;
}

static int
resp(const char *s, const char *method, struct http_response *r)
{
	why[0] = '\0';
	return http_parse_response(s, strlen(s), &lim, method, r, why, sizeof(why));
}

static int
resp_err(const char *s, const char *method)
{
	struct http_response r;
	int rc = resp(s, method, &r);
	if (r.reason || r.headers || r.n_headers || r.head_len || r.status) {
		printf("#   refused response left fields set: %s\n", s);
		rc = 1000;
	}
	http_response_clear(&r);
	return rc;
}

static void
test_request_basic(void)
{
	struct http_request r;
	const char *s = "GET /a?b HTTP/1.1\r\nHost: example.com\r\nX-A:  v 1 \t\r\nX-Empty:\r\n"
			"X-Tab:\tin\tside\t\r\nX-Bin: caf\xc3\xa9\r\n\r\nBODY";
	CHECK_INT(req(s, &r), 0);
	CHECK_STR(r.method, "GET");
	CHECK_STR(r.target, "/a?b");
	CHECK_INT(r.minor, 1);
	CHECK_INT(r.n_headers, 5);
	CHECK_STR(r.headers[0].name, "Host");
	CHECK_STR(r.headers[0].value, "example.com");
	CHECK_STR(r.headers[1].name, "X-A");
	CHECK_STR(r.headers[1].value, "v 1");
	CHECK_STR(r.headers[2].value, "");
	CHECK_STR(r.headers[3].value, "in\tside");
	CHECK_STR(r.headers[4].value, "caf\xc3\xa9");
	CHECK_INT(r.framing, HTTP_BODY_NONE);
	CHECK(r.keep_alive);
	CHECK(!r.expect_continue);
	CHECK(!r.upgrade);
	CHECK_INT(r.head_len, strlen(s) - 4);
	CHECK(http_find_header(r.headers, r.n_headers, "HOST") == &r.headers[0]);
	CHECK(http_find_header(r.headers, r.n_headers, "x-a") == &r.headers[1]);
	CHECK(http_find_header(r.headers, r.n_headers, "X-Missing") == NULL);
	http_request_clear(&r);
	CHECK(r.method == NULL && r.headers == NULL && r.n_headers == 0);
	http_request_clear(&r); /* twice is harmless */

	CHECK_INT(req("CONNECT example.com:443 HTTP/1.1\r\n\r\n", &r), 0);
	CHECK_STR(r.target, "example.com:443");
	CHECK_INT(r.n_headers, 0);
	http_request_clear(&r);
	CHECK_INT(req("M-SEARCH * HTTP/1.0\r\nA:b\r\n\r\n", &r), 0);
	CHECK_STR(r.method, "M-SEARCH");
	CHECK_INT(r.minor, 0);
	CHECK(!r.keep_alive);
	http_request_clear(&r);
}

static void
test_request_line_strict(void)
{
	static const char *const bad[] = {
	    "GET  / HTTP/1.1\r\n\r\n",
	    "GET /  HTTP/1.1\r\n\r\n",
	    " GET / HTTP/1.1\r\n\r\n",
	    "GET / HTTP/1.1 \r\n\r\n",
	    "GET\t/ HTTP/1.1\r\n\r\n",
	    "GET /\tHTTP/1.1\r\n\r\n",
	    "GET / HTTP/1.2\r\n\r\n",
	    "GET / HTTP/2.0\r\n\r\n",
	    "GET / HTTP/1.10\r\n\r\n",
	    "GET / HTTP/1.\r\n\r\n",
	    "GET / http/1.1\r\n\r\n",
	    "GET / HTTP/0.9\r\n\r\n",
	    "GET /\r\n\r\n",
	    "GET\r\n\r\n",
	    "/ HTTP/1.1\r\n\r\n",
	    "G@T / HTTP/1.1\r\n\r\n",
	    "G(T / HTTP/1.1\r\n\r\n",
	    "GET /a\x01 HTTP/1.1\r\n\r\n",
	    "GET /a\x7f HTTP/1.1\r\n\r\n",
	    "GET /caf\xc3\xa9 HTTP/1.1\r\n\r\n",
	    "\r\nGET / HTTP/1.1\r\n\r\n",
	    "GET / HTTP/1.1\rX\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = req_err(bad[i]);
		if (rc != -EBADMSG)
			printf("#   accepted or wrong error (%d): %s\n", rc, bad[i]);
		CHECK_INT(rc, -EBADMSG);
	}
	/* a NUL in the request line (strlen would stop there, so pass the length) */
	struct http_request r;
	static const char nul[] = "GET /a\0b HTTP/1.1\r\n\r\n";
	CHECK_INT(http_parse_request(nul, sizeof(nul) - 1, &lim, &r, why, sizeof(why)), -EBADMSG);
	CHECK(strstr(why, "request line") != NULL);
	CHECK_INT(req_err("GET  / HTTP/1.1\r\n\r\n"), -EBADMSG);
	CHECK(strstr(why, "bad request line") != NULL);
}

static void
test_bare_lf(void)
{
	CHECK_INT(req_err("GET / HTTP/1.1\nHost: a\r\n\r\n"), -EBADMSG);
	CHECK(strstr(why, "bare LF") != NULL);
	CHECK_INT(req_err("GET / HTTP/1.1\r\nHost: a\n\r\n"), -EBADMSG);
	CHECK_INT(req_err("GET / HTTP/1.1\r\nHost: a\r\n\n"), -EBADMSG);
	CHECK_INT(req_err("GET / HTTP/1.1\r\nX: a\nb\r\n\r\n"), -EBADMSG);
	CHECK_INT(req_err("GET / HTTP/1.1\n\n"), -EBADMSG);
	/* refused as soon as seen, before the head is complete */
	CHECK_INT(req_err("GET / HTTP/1.1\nHost"), -EBADMSG);
	CHECK_INT(req_err("GET / HTTP/1.1\r\nX: a\rb\r\n\r\n"), -EBADMSG);
	CHECK_INT(resp_err("HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n", "GET"), -EBADMSG);
	CHECK_INT(resp_err("HTTP/1.1 200 OK\r\nContent-Length: 0\n\r\n", "GET"), -EBADMSG);
}

static void
test_fields_strict(void)
{
	static const char *const bad[] = {
	    "GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",  /* obs-fold SP */
	    "GET / HTTP/1.1\r\nHost: a\r\n\tfolded\r\n\r\n", /* obs-fold HTAB */
	    "GET / HTTP/1.1\r\n Host: a\r\n\r\n",	     /* first field folded */
	    "GET / HTTP/1.1\r\nHost : a\r\n\r\n",	     /* SP before colon */
	    "GET / HTTP/1.1\r\nHost\t: a\r\n\r\n",	     /* HTAB before colon */
	    "GET / HTTP/1.1\r\n: a\r\n\r\n",		     /* empty name */
	    "GET / HTTP/1.1\r\nHo(st: a\r\n\r\n",	     /* non-token name */
	    "GET / HTTP/1.1\r\nHost a\r\n\r\n",		     /* no colon */
	    "GET / HTTP/1.1\r\nX: a\x01z\r\n\r\n",	     /* CTL */
	    "GET / HTTP/1.1\r\nX: a\x7fz\r\n\r\n",	     /* DEL */
	    "GET / HTTP/1.1\r\nX: a\x1b[0m\r\n\r\n",	     /* ESC */
	    "GET / HTTP/1.1\r\nX\x80: a\r\n\r\n",	     /* non-ASCII name */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = req_err(bad[i]);
		if (rc != -EBADMSG)
			printf("#   accepted or wrong error (%d): %s\n", rc, bad[i]);
		CHECK_INT(rc, -EBADMSG);
	}
	CHECK_INT(req_err("GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n"), -EBADMSG);
	CHECK(strstr(why, "obs-fold") != NULL);
	CHECK_INT(req_err("GET / HTTP/1.1\r\nHost : a\r\n\r\n"), -EBADMSG);
	CHECK(strstr(why, "whitespace before colon") != NULL);

	struct http_request r;
	static const char nul[] = "GET / HTTP/1.1\r\nX: a\0b\r\n\r\n";
	CHECK_INT(http_parse_request(nul, sizeof(nul) - 1, &lim, &r, why, sizeof(why)), -EBADMSG);
	CHECK(strstr(why, "control byte") != NULL);
	CHECK(r.headers == NULL);
	/* the same rules for responses */
	CHECK_INT(resp_err("HTTP/1.1 200 OK\r\nA: b\r\n c\r\nContent-Length: 0\r\n\r\n", "GET"),
		  -EBADMSG);
	CHECK_INT(resp_err("HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n", "GET"), -EBADMSG);
	CHECK_INT(resp_err("HTTP/1.1 200 OK\r\nX: \x01\r\nContent-Length: 0\r\n\r\n", "GET"),
		  -EBADMSG);
}

static void
test_content_length(void)
{
	struct http_request r;
	CHECK_INT(req("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", &r), 0);
	CHECK_INT(r.framing, HTTP_BODY_LENGTH);
	CHECK_INT(r.content_length, 5);
	http_request_clear(&r);
	CHECK_INT(req("POST / HTTP/1.1\r\ncontent-length:  0 \r\n\r\n", &r), 0);
	CHECK_INT(r.framing, HTTP_BODY_LENGTH);
	CHECK_INT(r.content_length, 0);
	http_request_clear(&r);
	CHECK_INT(req("POST / HTTP/1.1\r\nContent-Length: 9007199254740992\r\n\r\n", &r), 0);
	CHECK(r.content_length == UINT64_C(9007199254740992));
	http_request_clear(&r);

	static const char *const bad[] = {
	    "5,5",
	    "5, 5",
	    "5,",
	    ",5",
	    "+5",
	    "-1",
	    "0x5",
	    "5 5",
	    "",
	    "5.0",
	    "1e3",
	    "9007199254740993",
	    "99999999999999999999999999",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char buf[256];
		snprintf(buf, sizeof(buf), "POST / HTTP/1.1\r\nContent-Length: %s\r\n\r\n", bad[i]);
		int rc = req_err(buf);
		if (rc != -EBADMSG)
			printf("#   Content-Length \"%s\": %d\n", bad[i], rc);
		CHECK_INT(rc, -EBADMSG);
		snprintf(buf, sizeof(buf), "HTTP/1.1 200 OK\r\nContent-Length: %s\r\n\r\n", bad[i]);
		CHECK_INT(resp_err(buf, "GET"), -EBADMSG);
	}
	/* duplicates, even equal, even with the name spelled differently */
	CHECK_INT(req_err("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n"),
		  -EBADMSG);
	CHECK(strstr(why, "Content-Length") != NULL);
	CHECK_INT(req_err("POST / HTTP/1.1\r\nContent-Length: 5\r\ncontent-LENGTH: 6\r\n\r\n"),
		  -EBADMSG);
	CHECK_INT(
	    resp_err("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", "GET"),
	    -EBADMSG);
}

static void
test_transfer_encoding(void)
{
	struct http_request r;
	CHECK_INT(req("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", &r), 0);
	CHECK_INT(r.framing, HTTP_BODY_CHUNKED);
	http_request_clear(&r);
	CHECK_INT(req("POST / HTTP/1.1\r\ntransfer-encoding: ChUnKeD \r\n\r\n", &r), 0);
	CHECK_INT(r.framing, HTTP_BODY_CHUNKED);
	http_request_clear(&r);

	static const char *const bad_te[] = {
	    "gzip, chunked", "chunked, chunked", "identity",	"chunked;q=1", "",
	    "chunked,",	     "xchunked",	 "\"chunked\"",
	};
	for (size_t i = 0; i < sizeof(bad_te) / sizeof(bad_te[0]); i++) {
		char buf[256];
		snprintf(buf, sizeof(buf), "POST / HTTP/1.1\r\nTransfer-Encoding: %s\r\n\r\n",
			 bad_te[i]);
		int rc = req_err(buf);
		if (rc != -EBADMSG)
			printf("#   Transfer-Encoding \"%s\": %d\n", bad_te[i], rc);
		CHECK_INT(rc, -EBADMSG);
	}
	CHECK_INT(req_err("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
			  "Transfer-Encoding: chunked\r\n\r\n"),
		  -EBADMSG);
	/* CL + TE, both orders (the classic smuggling pair) */
	CHECK_INT(req_err("POST / HTTP/1.1\r\nContent-Length: 4\r\n"
			  "Transfer-Encoding: chunked\r\n\r\n"),
		  -EBADMSG);
	CHECK(strstr(why, "Content-Length and Transfer-Encoding") != NULL);
	CHECK_INT(req_err("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
			  "Content-Length: 4\r\n\r\n"),
		  -EBADMSG);
	/* TE on HTTP/1.0 */
	CHECK_INT(req_err("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"), -EBADMSG);
	CHECK(strstr(why, "HTTP/1.0") != NULL);
}

static void
test_host_expect(void)
{
	struct http_request r;
	CHECK_INT(req_err("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n"), -EBADMSG);
	CHECK(strstr(why, "Host") != NULL);
	CHECK_INT(req_err("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n"), -EBADMSG);

	CHECK_INT(req("PUT / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n", &r),
		  0);
	CHECK(r.expect_continue);
	http_request_clear(&r);
	CHECK_INT(req("PUT / HTTP/1.1\r\nexpect: 100-CONTINUE\r\n\r\n", &r), 0);
	CHECK(r.expect_continue);
	http_request_clear(&r);
	/* HTTP/1.0: the expectation is ignored (RFC 9110 §10.1.1) */
	CHECK_INT(req("PUT / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n", &r), 0);
	CHECK(!r.expect_continue);
	http_request_clear(&r);
	CHECK_INT(req_err("PUT / HTTP/1.1\r\nExpect: 200-ok\r\n\r\n"), -EBADMSG);
	CHECK(strstr(why, "Expect") != NULL);
	CHECK_INT(req_err("PUT / HTTP/1.1\r\nExpect: 100-continue, foo\r\n\r\n"), -EBADMSG);
	CHECK_INT(req_err("PUT / HTTP/1.1\r\nExpect:\r\n\r\n"), -EBADMSG);
}

static void
test_keep_alive_upgrade(void)
{
	static const struct {
		const char *head;
		bool keep_alive, upgrade;
	} cases[] = {
	    {"GET / HTTP/1.1\r\n\r\n", true, false},
	    {"GET / HTTP/1.1\r\nConnection: close\r\n\r\n", false, false},
	    {"GET / HTTP/1.1\r\nConnection: CLOSE\r\n\r\n", false, false},
	    {"GET / HTTP/1.1\r\nConnection: foo, Close\r\n\r\n", false, false},
	    {"GET / HTTP/1.1\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n", false, false},
	    {"GET / HTTP/1.1\r\nConnection: ,,keep-alive,\r\n\r\n", true, false},
	    {"GET / HTTP/1.1\r\nConnection: closed\r\n\r\n", true, false},
	    {"GET / HTTP/1.0\r\n\r\n", false, false},
	    {"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true, false},
	    {"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true, false},
	    {"GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", false, false},
	    {"GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", true, true},
	    {"GET / HTTP/1.1\r\nConnection: keep-alive, upgrade\r\nUpgrade: h2c\r\n\r\n", true,
	     true},
	    {"GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n", true, false},
	    {"GET / HTTP/1.1\r\nConnection: upgrade\r\n\r\n", true, false},
	    {"GET / HTTP/1.0\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n", false, false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct http_request r;
		CHECK_INT(req(cases[i].head, &r), 0);
		if (r.keep_alive != cases[i].keep_alive || r.upgrade != cases[i].upgrade)
			printf("#   case %zu: keep_alive %d upgrade %d\n", i, r.keep_alive,
			       r.upgrade);
		CHECK(r.keep_alive == cases[i].keep_alive);
		CHECK(r.upgrade == cases[i].upgrade);
		http_request_clear(&r);
	}
	CHECK_INT(req_err("GET / HTTP/1.1\r\nConnection: close;x\r\n\r\n"), -EBADMSG);
	CHECK_INT(req_err("GET / HTTP/1.1\r\nConnection: keep alive\r\n\r\n"), -EBADMSG);
}

/* n fields of "X-N: v" */
static char *
head_with_fields(size_t n, size_t pad)
{
	size_t cap = 64 + n * 24 + pad;
	char *s = malloc(cap);
	size_t k = (size_t)snprintf(s, cap, "GET / HTTP/1.1\r\n");
	for (size_t i = 0; i < n; i++)
		k += (size_t)snprintf(s + k, cap - k, "X-%zu: v\r\n", i);
	if (pad) {
		k += (size_t)snprintf(s + k, cap - k, "X-Pad: ");
		memset(s + k, 'p', pad);
		k += pad;
		k += (size_t)snprintf(s + k, cap - k, "\r\n");
	}
	snprintf(s + k, cap - k, "\r\n");
	return s;
}

static void
test_caps(void)
{
	struct http_limits small = {.max_head = 200, .max_headers = 4};
	struct http_request r;
	char *s;

	/* exactly max_headers fields: fine; one more: -E2BIG, complete or not */
	s = head_with_fields(4, 0);
	CHECK_INT(http_parse_request(s, strlen(s), &small, &r, why, sizeof(why)), 0);
	CHECK_INT(r.n_headers, 4);
	http_request_clear(&r);
	free(s);
	s = head_with_fields(5, 0);
	CHECK_INT(http_parse_request(s, strlen(s), &small, &r, why, sizeof(why)), -E2BIG);
	CHECK(strstr(why, "header fields") != NULL);
	CHECK(r.headers == NULL && r.method == NULL);
	CHECK_INT(http_parse_request(s, strlen(s) - 2, &small, &r, why, sizeof(why)), -E2BIG);
	free(s);
	struct http_response rs;
	const char *many = "HTTP/1.1 200 OK\r\nA: 1\r\nA: 2\r\nA: 3\r\nA: 4\r\nA: 5\r\n";
	CHECK_INT(http_parse_response(many, strlen(many), &small, "GET", &rs, why, sizeof(why)),
		  -E2BIG);

	/* a head of exactly max_head bytes: fine; one byte more: -E2BIG */
	s = head_with_fields(0, 1);
	size_t base = strlen(s) - 1;
	free(s);
	s = head_with_fields(0, 200 - base);
	CHECK_INT(strlen(s), 200);
	CHECK_INT(http_parse_request(s, strlen(s), &small, &r, why, sizeof(why)), 0);
	CHECK_INT(r.head_len, 200);
	http_request_clear(&r);
	free(s);
	s = head_with_fields(0, 201 - base);
	CHECK_INT(http_parse_request(s, strlen(s), &small, &r, why, sizeof(why)), -E2BIG);
	CHECK(strstr(why, "head longer") != NULL);
	/* incomplete but already too long */
	CHECK_INT(http_parse_request(s, 200, &small, &r, why, sizeof(why)), -E2BIG);
	CHECK_INT(http_parse_request(s, 199, &small, &r, why, sizeof(why)), -EAGAIN);
	CHECK_INT(http_parse_response(s, 200, &small, "GET", &rs, why, sizeof(why)), -E2BIG);
	free(s);
	/* a long line with no CRLF at all */
	char flood[300];
	memset(flood, 'A', sizeof(flood));
	CHECK_INT(http_parse_request(flood, sizeof(flood), &small, &r, why, sizeof(why)), -E2BIG);
}

static void
test_incremental(void)
{
	const char *s = "POST /upload?x=1 HTTP/1.1\r\nHost: example.com:8080\r\n"
			"Content-Length: 11\r\nConnection: keep-alive\r\n\r\nhello world";
	size_t head = strlen(s) - 11;
	for (size_t n = 0; n <= strlen(s); n++) {
		struct http_request r;
		int rc = http_parse_request(s, n, &lim, &r, why, sizeof(why));
		if (n < head) {
			if (rc != -EAGAIN)
				printf("#   prefix %zu: %d (%s)\n", n, rc, why);
			CHECK_INT(rc, -EAGAIN);
			CHECK(r.method == NULL && r.headers == NULL);
		} else {
			CHECK_INT(rc, 0);
			CHECK_INT(r.head_len, head);
			CHECK_INT(r.content_length, 11);
		}
		http_request_clear(&r);
	}
	const char *rs = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
			 "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n";
	size_t rhead = strlen(rs) - 10;
	for (size_t n = 0; n <= strlen(rs); n++) {
		struct http_response r;
		int rc = http_parse_response(rs, n, &lim, "GET", &r, why, sizeof(why));
		CHECK_INT(rc, n < rhead ? -EAGAIN : 0);
		if (rc == 0)
			CHECK_INT(r.framing, HTTP_BODY_CHUNKED);
		http_response_clear(&r);
	}
}

static void
test_head_end(void)
{
	const char *s = "GET / HTTP/1.1\r\nHost: a\r\nX: \r\n\r\nbody\r\n\r\n";
	size_t head = (size_t)(strstr(s, "body") - s);
	size_t scanned = 0, head_len = 0;
	int rc = 0;
	/* byte by byte: found exactly when the last LF of the head arrives */
	for (size_t n = 0; n <= strlen(s) && rc == 0; n++) {
		rc = http_head_end(s, n, 8192, &scanned, &head_len);
		CHECK_INT(rc, n < head ? 0 : 1);
		CHECK(scanned <= n);
	}
	CHECK_INT(head_len, head);
	/* in two pieces with the CRLFCRLF split across them */
	for (size_t cut = head - 4; cut < head; cut++) {
		scanned = 0;
		CHECK_INT(http_head_end(s, cut, 8192, &scanned, &head_len), 0);
		CHECK_INT(http_head_end(s, strlen(s), 8192, &scanned, &head_len), 1);
		CHECK_INT(head_len, head);
	}
	/* the cap: a head of exactly max_head is found, one byte more is -E2BIG */
	scanned = 0;
	CHECK_INT(http_head_end(s, strlen(s), head, &scanned, &head_len), 1);
	scanned = 0;
	CHECK_INT(http_head_end(s, strlen(s), head - 1, &scanned, &head_len), -E2BIG);
	scanned = 0;
	CHECK_INT(http_head_end(s, head - 2, head - 1, &scanned, &head_len), 0);
	CHECK_INT(http_head_end(s, head - 1, head - 1, &scanned, &head_len), -E2BIG);
}

static void
test_ownership(void)
{
	/* nothing points into the input: parse from a heap copy, wipe and free it */
	const char *s = "GET /p HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer x\r\n\r\n";
	size_t n = strlen(s);
	char *copy = malloc(n);
	memcpy(copy, s, n);
	struct http_request r;
	CHECK_INT(http_parse_request(copy, n, &lim, &r, why, sizeof(why)), 0);
	const char *strs[] = {r.method,		  r.target,	     r.headers[0].name,
			      r.headers[0].value, r.headers[1].name, r.headers[1].value};
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		CHECK(strs[i] < copy || strs[i] >= copy + n);
	memset(copy, 'Z', n);
	free(copy);
	CHECK_STR(r.method, "GET");
	CHECK_STR(r.headers[1].value, "Bearer x");
	/* the contract cred.c relies on: replace a value, append a header, clear frees all */
	free(r.headers[1].value);
	r.headers[1].value = strdup("Bearer secret");
	struct http_header *h = realloc(r.headers, (r.n_headers + 1) * sizeof(*h));
	CHECK(h != NULL);
	r.headers = h;
	r.headers[r.n_headers].name = strdup("X-Added");
	r.headers[r.n_headers].value = strdup("1");
	r.n_headers++;
	CHECK_STR(http_find_header(r.headers, r.n_headers, "x-added")->value, "1");
	http_request_clear(&r); /* the sanitizer build checks that nothing leaks */

	struct http_response rs;
	CHECK_INT(resp("HTTP/1.1 200 OK\r\nSet-Cookie: a\r\n\r\n", "GET", &rs), 0);
	free(rs.headers[0].value);
	rs.headers[0].value = strdup("b");
	http_response_clear(&rs);
	CHECK(rs.reason == NULL && rs.headers == NULL);
}

static void
test_status_line(void)
{
	struct http_response r;
	CHECK_INT(resp("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", "GET", &r), 0);
	CHECK_INT(r.status, 404);
	CHECK_STR(r.reason, "Not Found");
	CHECK_INT(r.minor, 1);
	http_response_clear(&r);
	CHECK_INT(resp("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", "GET", &r), 0);
	CHECK_INT(r.status, 200);
	CHECK_STR(r.reason, "");
	http_response_clear(&r);
	CHECK_INT(resp("HTTP/1.0 200 \r\nContent-Length: 0\r\n\r\n", "GET", &r), 0);
	CHECK_STR(r.reason, "");
	CHECK_INT(r.minor, 0);
	http_response_clear(&r);
	CHECK_INT(resp("HTTP/1.1 599 odd\treason \xff\r\n\r\n", "GET", &r), 0);
	CHECK_STR(r.reason, "odd\treason \xff");
	http_response_clear(&r);

	static const char *const bad[] = {
	    "HTTP/1.1 20 OK\r\n\r\n",	"HTTP/1.1 2000 OK\r\n\r\n",    "HTTP/1.1 099 x\r\n\r\n",
	    "HTTP/1.1 600 x\r\n\r\n",	"HTTP/1.2 200 OK\r\n\r\n",     "HTTP/2 200\r\n\r\n",
	    "HTTP/1.1  200 OK\r\n\r\n", "HTTP/1.1 200\tOK\r\n\r\n",    "HTTP/1.1 2x0 OK\r\n\r\n",
	    "http/1.1 200 OK\r\n\r\n",	"HTTP/1.1 200 O\x01K\r\n\r\n", " HTTP/1.1 200 OK\r\n\r\n",
	    "HTTP/1.1\r\n\r\n",		"ICY 200 OK\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = resp_err(bad[i], "GET");
		if (rc != -EBADMSG)
			printf("#   accepted or wrong error (%d): %s\n", rc, bad[i]);
		CHECK_INT(rc, -EBADMSG);
	}
}

static void
test_response_framing(void)
{
	static const struct {
		const char *head, *method;
		enum http_framing framing;
		uint64_t cl;
		bool keep_alive;
	} cases[] = {
	    {"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n", "GET", HTTP_BODY_LENGTH, 12, true},
	    {"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n", "HEAD", HTTP_BODY_NONE, 0, true},
	    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "HEAD", HTTP_BODY_NONE, 0,
	     true},
	    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "GET", HTTP_BODY_CHUNKED, 0,
	     true},
	    {"HTTP/1.1 200 OK\r\n\r\n", "GET", HTTP_BODY_EOF, 0, false},
	    {"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n", "GET", HTTP_BODY_EOF, 0, false},
	    {"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\n", "GET",
	     HTTP_BODY_LENGTH, 1, true},
	    {"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\n", "GET", HTTP_BODY_LENGTH, 1, false},
	    {"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\n", "GET",
	     HTTP_BODY_LENGTH, 1, false},
	    {"HTTP/1.1 100 Continue\r\n\r\n", "POST", HTTP_BODY_NONE, 0, true},
	    {"HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket"
	     "\r\n\r\n",
	     "GET", HTTP_BODY_NONE, 0, true},
	    {"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n", "GET", HTTP_BODY_NONE, 0, true},
	    {"HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n", "GET", HTTP_BODY_NONE, 0,
	     true},
	    {"HTTP/1.1 304 Not Modified\r\nContent-Length: 7\r\n\r\n", "GET", HTTP_BODY_NONE, 0,
	     true},
	    {"HTTP/1.1 200 Connection established\r\n\r\n", "CONNECT", HTTP_BODY_NONE, 0, true},
	    {"HTTP/1.1 407 Proxy\r\nContent-Length: 2\r\n\r\n", "CONNECT", HTTP_BODY_LENGTH, 2,
	     true},
	    {"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", NULL, HTTP_BODY_LENGTH, 3, true},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct http_response r;
		CHECK_INT(resp(cases[i].head, cases[i].method, &r), 0);
		if (r.framing != cases[i].framing || r.keep_alive != cases[i].keep_alive)
			printf("#   case %zu: framing %d keep_alive %d\n", i, r.framing,
			       r.keep_alive);
		CHECK_INT(r.framing, cases[i].framing);
		CHECK(r.content_length == cases[i].cl);
		CHECK(r.keep_alive == cases[i].keep_alive);
		http_response_clear(&r);
	}
	CHECK_INT(resp_err("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked"
			   "\r\n\r\n",
			   "GET"),
		  -EBADMSG);
	/* CL+TE is refused even where the status means no body */
	CHECK_INT(resp_err("HTTP/1.1 204 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked"
			   "\r\n\r\n",
			   "GET"),
		  -EBADMSG);
	CHECK_INT(resp_err("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "GET"),
		  -EBADMSG);
	CHECK_INT(resp_err("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "GET"),
		  -EBADMSG);
	/* a response's Host and Expect fields mean nothing: not refused */
	struct http_response r;
	CHECK_INT(resp("HTTP/1.1 200 OK\r\nHost: a\r\nHost: b\r\nExpect: x\r\n"
		       "Content-Length: 0\r\n\r\n",
		       "GET", &r),
		  0);
	http_response_clear(&r);
}

static void
test_hop_by_hop(void)
{
	static const char *const hop[] = {
	    "Connection",
	    "keep-alive",
	    "Proxy-Connection",
	    "PROXY-AUTHORIZATION",
	    "Proxy-Authenticate",
	    "TE",
	    "Trailer",
	    "Transfer-Encoding",
	    "Upgrade",
	};
	for (size_t i = 0; i < sizeof(hop) / sizeof(hop[0]); i++)
		CHECK(http_is_hop_by_hop(hop[i], NULL));
	CHECK(!http_is_hop_by_hop("Host", NULL));
	CHECK(!http_is_hop_by_hop("Authorization", NULL));
	CHECK(!http_is_hop_by_hop("Trailers", NULL));
	CHECK(!http_is_hop_by_hop("X-Foo", NULL));
	CHECK(http_is_hop_by_hop("X-Foo", "close, x-foo"));
	CHECK(http_is_hop_by_hop("x-foo", " X-Foo \t"));
	CHECK(http_is_hop_by_hop("X-Bar", "X-Foo,X-Bar"));
	CHECK(!http_is_hop_by_hop("X-Foo", "close, x-foobar"));
	CHECK(!http_is_hop_by_hop("X-Foo", "x-fo"));
	CHECK(!http_is_hop_by_hop("Host", ""));
	CHECK(!http_is_hop_by_hop("Host", ",,"));
}

/* ---- chunked ---- */

struct decoded {
	int rc;
	size_t consumed;
	size_t data_len;
	char data[8192];
};

/* Decode `in` handing the decoder at most `step` bytes at a time (0: all at once). */
static void
decode(const char *in, size_t n, size_t step, struct decoded *d)
{
	struct http_chunked c;
	size_t pos = 0;
	http_chunked_init(&c);
	memset(d, 0, sizeof(*d));
	while (pos < n) {
		size_t avail = step && n - pos > step ? step : n - pos;
		size_t used, off, len;
		d->rc = http_chunked_step(&c, (const uint8_t *)in + pos, avail, &used, &off, &len,
					  why, sizeof(why));
		if (len) {
			if (off + len > used || d->data_len + len > sizeof(d->data)) {
				d->rc = 999;
				return;
			}
			memcpy(d->data + d->data_len, in + pos + off, len);
			d->data_len += len;
		}
		pos += used;
		if (d->rc != 0)
			break;
		if (used == 0) {
			d->rc = 998; /* no progress on a non-empty input */
			break;
		}
	}
	d->consumed = pos;
}

static int
decode_rc(const char *in)
{
	struct decoded d;
	decode(in, strlen(in), 0, &d);
	return d.rc;
}

static void
test_chunked_basic(void)
{
	struct decoded d;
	const char *body = "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\nNEXT";
	decode(body, strlen(body), 0, &d);
	CHECK_INT(d.rc, 1);
	CHECK_INT(d.consumed, strlen(body) - 4);
	CHECK_INT(d.data_len, 11);
	CHECK(memcmp(d.data, "hello world", 11) == 0);
	/* uppercase and leading-zero sizes, 16 digits */
	body = "A\r\n0123456789\r\n000000000000000A\r\nabcdefghij\r\n0000\r\n\r\n";
	decode(body, strlen(body), 0, &d);
	CHECK_INT(d.rc, 1);
	CHECK_INT(d.data_len, 20);
	/* the largest size parses (the caller's body cap stops it) */
	struct http_chunked c;
	size_t used, off, len;
	http_chunked_init(&c);
	const char *huge = "ffffffffffffffff\r\nxy";
	CHECK_INT(http_chunked_step(&c, (const uint8_t *)huge, strlen(huge), &used, &off, &len, why,
				    sizeof(why)),
		  0);
	CHECK(c.remaining == UINT64_MAX || len > 0);
	/* one data span per call; after the end nothing more is consumed */
	http_chunked_init(&c);
	const char *two = "1\r\na\r\n1\r\nb\r\n0\r\n\r\n";
	CHECK_INT(http_chunked_step(&c, (const uint8_t *)two, strlen(two), &used, &off, &len, why,
				    sizeof(why)),
		  0);
	CHECK_INT(off, 3);
	CHECK_INT(len, 1);
	CHECK_INT(used, 4);
	size_t total = used;
	while (total < strlen(two)) {
		int rc = http_chunked_step(&c, (const uint8_t *)two + total, strlen(two) - total,
					   &used, &off, &len, why, sizeof(why));
		total += used;
		if (rc != 0) {
			CHECK_INT(rc, 1);
			break;
		}
	}
	CHECK_INT(total, strlen(two));
	CHECK_INT(
	    http_chunked_step(&c, (const uint8_t *)"x", 1, &used, &off, &len, why, sizeof(why)), 1);
	CHECK_INT(used, 0);
}

static void
test_chunked_bad_sizes(void)
{
	static const char *const bad[] = {
	    "-1\r\nx\r\n0\r\n\r\n",
	    "0x10\r\n0123456789abcdef\r\n0\r\n\r\n",
	    " 5\r\nhello\r\n0\r\n\r\n",
	    "5 \r\nhello\r\n0\r\n\r\n",
	    "5\t\r\nhello\r\n0\r\n\r\n",
	    "+5\r\nhello\r\n0\r\n\r\n",
	    "00000000000000005\r\nhello\r\n0\r\n\r\n", /* 17 hex digits */
	    "10000000000000000\r\n",		       /* overflow */
	    "g\r\n",
	    "5g\r\nhello\r\n0\r\n\r\n",
	    "\r\n",
	    ";ext\r\n0\r\n\r\n",
	    "5\nhello\r\n0\r\n\r\n",	     /* bare LF after the size */
	    "5\r\rhello\r\n0\r\n\r\n",	     /* CR CR */
	    "5\r\nhello\n0\r\n\r\n",	     /* bare LF after the data */
	    "5\r\nhelloX\r\n0\r\n\r\n",	     /* data longer than its size */
	    "5\r\nhello\r\n0\n\r\n",	     /* bare LF after the last chunk */
	    "5\r\nhello\r\n0\r\n\n",	     /* bare LF as the final line */
	    "5\r\nhello\r\n0\r\nX: y\n\r\n", /* bare LF in a trailer */
	    "5\r\nhello\r\n0\r\n\rX",	     /* CR without LF at the end */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = decode_rc(bad[i]);
		if (rc != -EBADMSG)
			printf("#   case %zu: %d\n", i, rc);
		CHECK_INT(rc, -EBADMSG);
	}
	CHECK_INT(decode_rc("0x10\r\n"), -EBADMSG);
	CHECK(strstr(why, "chunk size") != NULL);
	CHECK_INT(decode_rc("00000000000000005\r\n"), -EBADMSG);
	CHECK(strstr(why, "16 hex digits") != NULL);
	/* a refused decoder stays refused */
	struct http_chunked c;
	size_t used, off, len;
	http_chunked_init(&c);
	CHECK_INT(
	    http_chunked_step(&c, (const uint8_t *)"g", 1, &used, &off, &len, why, sizeof(why)),
	    -EBADMSG);
	CHECK_INT(
	    http_chunked_step(&c, (const uint8_t *)"5\r\n", 3, &used, &off, &len, why, sizeof(why)),
	    -EBADMSG);
}

static void
test_chunked_extensions(void)
{
	static const char *const good[] = {
	    "1;a\r\nx\r\n0\r\n\r\n",
	    "1;a=b\r\nx\r\n0\r\n\r\n",
	    "1;a=b;c;d=e\r\nx\r\n0\r\n\r\n",
	    "1;a=\"quoted; value\"\r\nx\r\n0\r\n\r\n",
	    "1;a=\"q\\\"x\\\\\"\r\nx\r\n0\r\n\r\n",
	    "1;a=\"\"\r\nx\r\n0\r\n\r\n",
	    "0;last=1\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		int rc = decode_rc(good[i]);
		if (rc != 1)
			printf("#   good case %zu: %d (%s)\n", i, rc, why);
		CHECK_INT(rc, 1);
	}
	static const char *const bad[] = {
	    "1; a\r\nx\r\n0\r\n\r\n",	      "1 ;a\r\nx\r\n0\r\n\r\n",
	    "1;a =b\r\nx\r\n0\r\n\r\n",	      "1;a= b\r\nx\r\n0\r\n\r\n",
	    "1;=b\r\nx\r\n0\r\n\r\n",	      "1;a=\r\nx\r\n0\r\n\r\n",
	    "1;\r\nx\r\n0\r\n\r\n",	      "1;a=b c\r\nx\r\n0\r\n\r\n",
	    "1;a=\"x\r\nx\r\n0\r\n\r\n",      "1;a=\"x\"y\r\nx\r\n0\r\n\r\n",
	    "1;a=\"\x01\"\r\nx\r\n0\r\n\r\n", "1;a\x01\r\nx\r\n0\r\n\r\n",
	    "1;a=b\nx\r\n0\r\n\r\n",	      "1;a=\"x\\\x7f\"\r\nx\r\n0\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = decode_rc(bad[i]);
		if (rc != -EBADMSG)
			printf("#   bad case %zu: %d\n", i, rc);
		CHECK_INT(rc, -EBADMSG);
	}
	/* the size line is capped at 4096 bytes: -E2BIG, also when fed byte by byte */
	char line[5000];
	size_t k = (size_t)snprintf(line, sizeof(line), "1;a=");
	memset(line + k, 'v', 4096 - k);
	memcpy(line + 4096, "\r\nx\r\n0\r\n\r\n", 11);
	struct decoded d;
	decode(line, strlen(line), 0, &d);
	CHECK_INT(d.rc, 1); /* exactly 4096 bytes before the CRLF */
	memset(line + k, 'v', 4097 - k);
	memcpy(line + 4097, "\r\nx\r\n0\r\n\r\n", 11);
	decode(line, strlen(line), 0, &d);
	CHECK_INT(d.rc, -E2BIG);
	CHECK(strstr(why, "chunk-size line") != NULL);
	decode(line, strlen(line), 1, &d);
	CHECK_INT(d.rc, -E2BIG);
}

static void
test_chunked_trailers(void)
{
	struct decoded d;
	const char *body = "3\r\nabc\r\n0\r\nX-Checksum: 1234\r\nX-Other:\t v \r\n\r\n";
	decode(body, strlen(body), 0, &d);
	CHECK_INT(d.rc, 1);
	CHECK_INT(d.data_len, 3); /* trailers are consumed, not data */
	CHECK_INT(d.consumed, strlen(body));
	CHECK_INT(decode_rc("0\r\nX: a\r\n folded\r\n\r\n"), -EBADMSG);
	CHECK(strstr(why, "obs-fold") != NULL);
	CHECK_INT(decode_rc("0\r\nX : a\r\n\r\n"), -EBADMSG);
	CHECK_INT(decode_rc("0\r\nX: a\x01\r\n\r\n"), -EBADMSG);
	CHECK_INT(decode_rc("0\r\n: a\r\n\r\n"), -EBADMSG);
	CHECK_INT(decode_rc("0\r\nXa\r\n\r\n"), -EBADMSG);

	/* 16 KiB of trailer section is the cap */
	static char big[20000];
	size_t k = (size_t)snprintf(big, sizeof(big), "0\r\n");
	size_t start = k;
	while (k - start + 104 <= 16384 - 2) {
		k += (size_t)snprintf(big + k, sizeof(big) - k, "X-T: ");
		memset(big + k, 'v', 97);
		k += 97;
		big[k++] = '\r';
		big[k++] = '\n';
	}
	size_t fill = 16384 - 2 - (k - start);
	if (fill >= 5) {
		memcpy(big + k, "Y: ", 3);
		memset(big + k + 3, 'w', fill - 5);
		k += fill - 2;
		big[k++] = '\r';
		big[k++] = '\n';
	}
	memcpy(big + k, "\r\n", 3);
	CHECK_INT(k + 2 - start, 16384);
	decode(big, strlen(big), 0, &d);
	CHECK_INT(d.rc, 1);
	/* one byte more */
	memmove(big + start + 1, big + start, k + 3 - start);
	big[start] = 'Z';
	decode(big, strlen(big), 0, &d);
	CHECK_INT(d.rc, -E2BIG);
	CHECK(strstr(why, "trailer") != NULL);
}

/* The same body decoded whole, byte by byte, and split in two at every offset. */
static void
test_chunked_every_split(void)
{
	const char *body = "4;name=\"v;\\\"x\"\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks."
			   "\r\n0;end\r\nTrailer-A: 1\r\n\r\n";
	const char *expect = "Wikipedia in\r\n\r\nchunks.";
	size_t n = strlen(body);
	struct decoded whole, part;
	decode(body, n, 0, &whole);
	CHECK_INT(whole.rc, 1);
	CHECK_INT(whole.consumed, n);
	CHECK_INT(whole.data_len, strlen(expect));
	CHECK(memcmp(whole.data, expect, strlen(expect)) == 0);
	for (size_t step = 1; step <= 7; step++) {
		decode(body, n, step, &part);
		CHECK_INT(part.rc, 1);
		CHECK_INT(part.consumed, n);
		CHECK(part.data_len == whole.data_len &&
		      memcmp(part.data, whole.data, whole.data_len) == 0);
	}
	for (size_t cut = 0; cut <= n; cut++) {
		struct http_chunked c;
		size_t used, off, len, got = 0, pos = 0;
		char out[64];
		int rc = 0;
		http_chunked_init(&c);
		/* feed [0, cut) until consumed, then [cut, n) */
		for (int piece = 0; piece < 2 && rc == 0; piece++) {
			size_t end = piece == 0 ? cut : n;
			while (pos < end && rc == 0) {
				rc = http_chunked_step(&c, (const uint8_t *)body + pos, end - pos,
						       &used, &off, &len, why, sizeof(why));
				if (len && got + len <= sizeof(out)) {
					memcpy(out + got, body + pos + off, len);
					got += len;
				}
				pos += used;
				if (rc == 0 && used == 0)
					rc = 998;
			}
		}
		if (rc != 1 || got != strlen(expect) || memcmp(out, expect, got) != 0)
			printf("#   split at %zu: rc %d, %zu bytes\n", cut, rc, got);
		CHECK_INT(rc, 1);
		CHECK_INT(pos, n);
	}
	/* errors agree too, whatever the split */
	const char *bad = "5\r\nhello\r\n5 \r\nworld\r\n0\r\n\r\n";
	for (size_t step = 0; step <= 5; step++) {
		decode(bad, strlen(bad), step, &part);
		CHECK_INT(part.rc, -EBADMSG);
		CHECK_INT(part.data_len, 5);
	}
}

/* ---- authorities, absolute-form, canonical path ---- */

static void
test_authority(void)
{
	static const struct {
		const char *in;
		uint16_t default_port;
		const char *host;
		uint16_t port;
		bool is_ip;
	} good[] = {
	    {"example.com:443", 0, "example.com", 443, false},
	    {"Example.COM.:8080", 0, "example.com", 8080, false},
	    {"example.com", 80, "example.com", 80, false},
	    {"example.com:1", 80, "example.com", 1, false},
	    {"example.com:65535", 80, "example.com", 65535, false},
	    {"example.com:080", 80, "example.com", 80, false},
	    {"[::1]:443", 0, "::1", 443, true},
	    {"[2001:DB8::1]", 80, "2001:db8::1", 80, true},
	    {"[::ffff:127.0.0.1]:80", 0, "127.0.0.1", 80, true},
	    {"[::ffff:a9fe:a9fe]:80", 0, "169.254.169.254", 80, true},
	    {"2852039166:443", 0, "169.254.169.254", 443, true},
	    {"0xa9.0xfe.0xa9.0xfe:80", 0, "169.254.169.254", 80, true},
	    {"0177.0.0.1:22", 0, "127.0.0.1", 22, true},
	    {"127.1", 80, "127.0.0.1", 80, true},
	    {"1.2.3.4.example:80", 0, "1.2.3.4.example", 80, false},
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char host[HTTP_HOST_MAX] = "";
		uint16_t port = 0;
		bool ip = !good[i].is_ip;
		int rc = http_parse_authority(good[i].in, good[i].default_port, host, &port, &ip);
		if (rc != 0 || strcmp(host, good[i].host) != 0)
			printf("#   %s: %d \"%s\"\n", good[i].in, rc, host);
		CHECK_INT(rc, 0);
		CHECK_STR(host, good[i].host);
		CHECK_INT(port, good[i].port);
		CHECK(ip == good[i].is_ip);
	}
	static const struct {
		const char *in;
		uint16_t default_port;
	} bad[] = {
	    {"example.com", 0}, /* CONNECT: port required */
	    {"example.com:", 80},
	    {"example.com:0", 80},
	    {"example.com:65536", 80},
	    {"example.com:+80", 80},
	    {"example.com:-1", 80},
	    {"example.com:8o", 80},
	    {"example.com:000080", 80},
	    {"example.com: 80", 80},
	    {"user@example.com:443", 0},
	    {"user:pw@example.com", 80},
	    {"@example.com", 80},
	    {":443", 0},
	    {"", 80},
	    {"::1:443", 0},
	    {"[::1]443", 0},
	    {"[::1", 80},
	    {"[]:80", 80},
	    {"[1.2.3.4]:80", 0},
	    {"[example.com]:80", 0},
	    {"[fe80::1%25eth0]:80", 0},
	    {"[fe80::1%eth0]:80", 0},
	    {"[v1.x]:80", 0},
	    {"exa mple.com:80", 0},
	    {"exam%70le.com", 80},
	    {"caf\xc3\xa9.com", 80},
	    {"1.2.3.4.5:80", 0},
	    {"a..b:80", 0},
	    {"example.com:80:80", 0},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char host[HTTP_HOST_MAX];
		uint16_t port;
		bool ip;
		int rc = http_parse_authority(bad[i].in, bad[i].default_port, host, &port, &ip);
		if (rc != -EBADMSG)
			printf("#   accepted or wrong error (%d): %s\n", rc, bad[i].in);
		CHECK_INT(rc, -EBADMSG);
	}
}

static void
test_absolute(void)
{
	static const struct {
		const char *in, *host;
		uint16_t port;
		const char *origin;
	} good[] = {
	    {"http://Example.COM/a?b#frag", "example.com", 80, "/a?b"},
	    {"HTTP://example.com", "example.com", 80, "/"},
	    {"http://example.com?q=1", "example.com", 80, "/?q=1"},
	    {"http://example.com#f", "example.com", 80, "/"},
	    {"http://example.com:8080/p/../q", "example.com", 8080, "/p/../q"},
	    {"http://[::1]:81/", "::1", 81, "/"},
	    {"http://2130706433/x", "127.0.0.1", 80, "/x"},
	    {"http://example.com/%2e%2e/a?x#y?z", "example.com", 80, "/%2e%2e/a?x"},
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char host[HTTP_HOST_MAX] = "";
		uint16_t port = 0;
		bool ip;
		char *origin = NULL;
		int rc = http_parse_absolute(good[i].in, host, &port, &ip, &origin);
		CHECK_INT(rc, 0);
		CHECK_STR(host, good[i].host);
		CHECK_INT(port, good[i].port);
		CHECK_STR(origin, good[i].origin);
		free(origin);
	}
	static const struct {
		const char *in;
		int rc;
	} bad[] = {
	    {"https://example.com/", -EPROTONOSUPPORT},
	    {"HTTPS://example.com:443", -EPROTONOSUPPORT},
	    {"ftp://example.com/", -EBADMSG},
	    {"ws://example.com/", -EBADMSG},
	    {"http:/example.com/", -EBADMSG},
	    {"http://user@example.com/", -EBADMSG},
	    {"http://user:pw@example.com/", -EBADMSG},
	    {"http:///path", -EBADMSG},
	    {"http://", -EBADMSG},
	    {"http://example.com:0/", -EBADMSG},
	    {"http://example.com/a b", -EBADMSG},
	    {"http://example.com/a\x01", -EBADMSG},
	    {"/origin/form", -EBADMSG},
	    {"example.com:443", -EBADMSG},
	    {"*", -EBADMSG},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char host[HTTP_HOST_MAX];
		uint16_t port;
		bool ip;
		char *origin = (char *)"unset";
		int rc = http_parse_absolute(bad[i].in, host, &port, &ip, &origin);
		if (rc != bad[i].rc)
			printf("#   %s: %d\n", bad[i].in, rc);
		CHECK_INT(rc, bad[i].rc);
		CHECK(origin == NULL);
	}
}

static void
test_canonical_path(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"/", "/"},
	    {"", "/"},
	    {"/a/b", "/a/b"},
	    {"/a/b/", "/a/b/"}, /* a trailing slash is kept: another resource */
	    {"/a//b", "/a//b"}, /* empty segments are kept (RFC 3986) */
	    {"//a", "//a"},
	    {"/a/./b", "/a/b"},
	    {"/./a", "/a"},
	    {"/a/.", "/a/"},
	    {"/a/../b", "/b"},
	    {"/a/b/..", "/a/"},
	    {"/a/..", "/"},
	    {"/..", "/"},
	    {"/../a", "/a"},
	    {"/../../../etc/passwd", "/etc/passwd"},
	    {"/a/b/c/./../../g", "/a/g"},
	    {"/mid/content=5/../6", "/mid/6"},
	    {"/a//../b", "/a/b"},
	    {"/...", "/..."},
	    {"/a/..b/.c/", "/a/..b/.c/"},
	    {"/%41%42c", "/ABc"},
	    {"/%7e/%7E", "/~/~"},
	    {"/%2D%2e%5F%5f%30", "/-.__0"},
	    {"/a%2Fb", "/a%2Fb"},
	    {"/a%2fb", "/a%2Fb"},
	    {"/%2F", "/%2F"},
	    {"/%2e", "/"},
	    {"/%2E%2E", "/"},
	    {"/a/%2e%2e/b", "/b"},
	    {"/a/%2E%2e/b", "/b"},
	    {"/a/.%2e/b", "/b"},
	    {"/a/%2e./b", "/b"},
	    {"/a/%2e/b", "/a/b"},
	    {"/a/%2e%2e%2fb", "/a/..%2Fb"}, /* an escaped slash never makes a segment */
	    {"/%00", "/%00"},		    /* not unreserved: kept as %00 */
	    {"/%3a%3A%c3%a9", "/%3A%3A%C3%A9"},
	    {"/%20x", "/%20x"},
	    {"/a?b/../c", "/a"},
	    {"/a?", "/a"},
	    {"/?q=%zz", "/"},
	    {"/a/b?x=/../../", "/a/b"},
	    {"/;params=1/x", "/;params=1/x"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *expect = cases[i].out;
		char *p = NULL;
		int rc = http_canonical_path(cases[i].in, &p);
		if (rc != 0 || !p || strcmp(p, expect) != 0)
			printf("#   \"%s\" -> %d \"%s\", expected \"%s\"\n", cases[i].in, rc,
			       p ? p : "", expect);
		CHECK_INT(rc, 0);
		CHECK_STR(p, expect);
		/* idempotent */
		char *q = NULL;
		CHECK_INT(http_canonical_path(p ? p : "/", &q), 0);
		CHECK_STR(q, p);
		free(p);
		free(q);
	}
	static const char *const bad[] = {
	    "*",    "a/b",   "http://x/", "/%",	    "/%4",    "/a%2",	      "/%zz",	 "/%g0",
	    "/%0g", "/%4?x", "/a b",	  "/a\x01", "/a\x7f", "/caf\xc3\xa9", "/a#frag", "/a\t",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *p = (char *)"unset";
		int rc = http_canonical_path(bad[i], &p);
		if (rc != -EBADMSG)
			printf("#   accepted or wrong error (%d): %s\n", rc, bad[i]);
		CHECK_INT(rc, -EBADMSG);
		CHECK(p == NULL);
	}
}

/* Every byte of a header value is printable ASCII. */
static bool
header_safe(const char *v)
{
	for (const unsigned char *p = (const unsigned char *)v; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			return false;
	return true;
}

static void
test_reason_header(void)
{
	char out[HTTP_REASON_MAX];
	const char *m = "policy denied this operation on 'api.x.test:443/echo/secret' "
			"[policy: no_secret]: no secrets here.";
	CHECK_INT(http_reason_header(m, out, sizeof(out)), strlen(m));
	CHECK_STR(out, m);

	/* CR, LF, other controls, DEL, non-ASCII and a byte that is not UTF-8 */
	CHECK_INT(
	    http_reason_header("a\r\nx-evil: 1\tb\x7f\xc3\xa9\xe2\x80\xae\xff!", out, sizeof(out)),
	    55);
	CHECK_STR(out, "a\\u{d}\\u{a}x-evil: 1\\u{9}b\\u{7f}\\u{e9}\\u{202e}\\u{fffd}!");
	CHECK(header_safe(out));

	/* too long: the resource goes first, the rule and description stay */
	char big[4200];
	int n = snprintf(big, sizeof(big), "policy denied this operation on '");
	for (int i = 0; i < 1000; i++)
		big[n++] = i % 50 == 0 ? '\'' : 'r'; /* (escaped in a real message: \') */
	n += snprintf(big + n, sizeof(big) - (size_t)n, "' [policy: r1]: one; [policy: r2]: two.");
	memmove(big + 34, big + 33, (size_t)n - 33 + 1); /* a "\'" at the resource's start */
	big[33] = '\\';
	for (int i = 34; i < 33 + 1000; i++)
		if (big[i] == '\'' && big[i - 1] != '\\')
			big[i] = 'r';
	size_t len = http_reason_header(big, out, sizeof(out));
	CHECK_STR(out, "policy denied this operation [policy: r1]: one; [policy: r2]: two.");
	CHECK_INT(len, strlen(out));

	/* and when that is not enough, cut at HTTP_REASON_MAX - 1 with "..." */
	n = snprintf(big, sizeof(big), "policy denied this operation on 'x' [policy: r]: ");
	while (n < 3000)
		big[n++] = (char)0xe9; /* not UTF-8 alone: \u{fffd} each, 8 bytes */
	big[n] = '\0';
	len = http_reason_header(big, out, sizeof(out));
	CHECK(len <= HTTP_REASON_MAX - 1 && len == strlen(out));
	CHECK(len >= HTTP_REASON_MAX - 12);
	CHECK(strncmp(out, "policy denied this operation [policy: r]: \\u{fffd}", 50) == 0);
	CHECK(strcmp(out + len - 3, "...") == 0);
	CHECK(header_safe(out));

	/* the gateway's own reasons have no resource: just cut */
	memset(big, 'g', 2000);
	big[2000] = '\0';
	len = http_reason_header(big, out, sizeof(out));
	CHECK_INT(len, HTTP_REASON_MAX - 1);
	CHECK(strcmp(out + len - 3, "...") == 0);
	CHECK_INT(http_reason_header("x", out, 4), 0);
}

int
main(void)
{
	RUN(test_request_basic);
	RUN(test_request_line_strict);
	RUN(test_bare_lf);
	RUN(test_fields_strict);
	RUN(test_content_length);
	RUN(test_transfer_encoding);
	RUN(test_host_expect);
	RUN(test_keep_alive_upgrade);
	RUN(test_caps);
	RUN(test_incremental);
	RUN(test_head_end);
	RUN(test_ownership);
	RUN(test_status_line);
	RUN(test_response_framing);
	RUN(test_hop_by_hop);
	RUN(test_chunked_basic);
	RUN(test_chunked_bad_sizes);
	RUN(test_chunked_extensions);
	RUN(test_chunked_trailers);
	RUN(test_chunked_every_split);
	RUN(test_authority);
	RUN(test_absolute);
	RUN(test_canonical_path);
	RUN(test_reason_header);
	return tap_done();
}
