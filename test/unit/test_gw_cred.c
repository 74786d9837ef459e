/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_gw_cred.c — box-gateway/cred.c: destination matching, the rewrite of
 * intercepted requests (each placement with the placeholder present, absent,
 * misplaced; inject = always; sandbox scoping; Accept-Encoding), finding a
 * placeholder anywhere in a head (the redaction of replies: test_gw_redact.c).
 *
 * Requests are built by hand the way http.c's parser leaves them: every name,
 * value and the header array malloc'd separately. Every `why` any call
 * returns is checked for the secret and the placeholder.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cred.h"
#include "tap.h"

/* ---- helpers ----------------------------------------------------------- */

#define PH "box_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define SECRET "sk-real-SECRET-value-7f3a9c"

static char *
xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d)
		abort();
	return d;
}

/* A request: method, target, then name/value pairs, NULL-terminated. */
static struct http_request
req_make(const char *method, const char *target, ...)
{
	struct http_request r;
	memset(&r, 0, sizeof(r));
	r.method = xstrdup(method);
	r.target = xstrdup(target);
	r.minor = 1;
	va_list ap;
	va_start(ap, target);
	const char *name;
	while ((name = va_arg(ap, const char *))) {
		const char *value = va_arg(ap, const char *);
		r.headers = realloc(r.headers, (r.n_headers + 1) * sizeof(*r.headers));
		if (!r.headers)
			abort();
		r.headers[r.n_headers].name = xstrdup(name);
		r.headers[r.n_headers].value = xstrdup(value);
		r.n_headers++;
	}
	va_end(ap);
	return r;
}

static void
req_free(struct http_request *r)
{
	for (size_t i = 0; i < r->n_headers; i++) {
		free(r->headers[i].name);
		free(r->headers[i].value);
	}
	free(r->headers);
	free(r->method);
	free(r->target);
	memset(r, 0, sizeof(*r));
}

/* The value of the only header named name; NULL when absent; "(dup)" when twice. */
static const char *
hval(const struct http_request *r, const char *name)
{
	const char *v = NULL;
	for (size_t i = 0; i < r->n_headers; i++)
		if (strcasecmp(r->headers[i].name, name) == 0) {
			if (v)
				return "(dup)";
			v = r->headers[i].value;
		}
	return v;
}

static struct cred_dest dest_api = { "api.example.com", false, 443, NULL };

static struct cred_binding
binding(enum cred_placement placement, enum cred_inject inject)
{
	struct cred_binding b;
	memset(&b, 0, sizeof(b));
	b.name = "egress.api";
	b.dest = &dest_api;
	b.n_dest = 1;
	b.secret = (uint8_t *)SECRET;
	b.secret_len = strlen(SECRET);
	b.placeholder = PH;
	b.placement = placement;
	b.inject = inject;
	if (placement == CRED_HEADER) {
		b.header = "Authorization";
		b.prefix = "Bearer ";
	}
	if (placement == CRED_QUERY_PARAM)
		b.param = "key";
	return b;
}

static int why_checked;

/* cred_apply with origin taken from / written back to *origin; the why is
 * checked for the secret and the placeholder. */
static int
apply(const struct cred_binding *b, const char *sandbox, struct http_request *r, char **origin,
      char *why, size_t why_len)
{
	memset(why, 'x', why_len);
	why[why_len - 1] = '\0';
	int rc = cred_apply(b, sandbox, r, origin, why, why_len);
	if (rc == -EACCES)
		CHECK(why[0] != '\0');
	CHECK(strstr(why, PH) == NULL);
	CHECK(memmem(why, strlen(why), b->secret, b->secret_len) == NULL);
	if (b->placeholder)
		CHECK(strstr(why, b->placeholder) == NULL);
	why_checked++;
	return rc;
}

static char *
b64(const char *s)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(s);
	char *o = calloc(1, 4 * ((n + 2) / 3) + 1), *p = o;
	const uint8_t *u = (const uint8_t *)s;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)u[i] << 16 | (i + 1 < n ? (uint32_t)u[i + 1] << 8 : 0) |
			     (i + 2 < n ? u[i + 2] : 0);
		*p++ = a[v >> 18 & 63];
		*p++ = a[v >> 12 & 63];
		*p++ = i + 1 < n ? a[v >> 6 & 63] : '=';
		*p++ = i + 2 < n ? a[v & 63] : '=';
	}
	return o;
}

static char *
basic(const char *userpass)
{
	char *t = b64(userpass);
	size_t n = strlen(t) + 7;
	char *v = malloc(n);
	snprintf(v, n, "Basic %s", t);
	free(t);
	return v;
}

/* ---- destinations ------------------------------------------------------ */

static void
test_dest_match(void)
{
	struct cred_dest exact = { "api.x.com", false, 443, NULL };
	struct cred_dest wild = { "x.com", true, 443, NULL };
	struct cred_dest path = { "api.x.com", false, 8443, "/v1" };
	struct cred_dest path_slash = { "api.x.com", false, 443, "/v1/" };
	struct cred_dest root = { "api.x.com", false, 443, "/" };

	CHECK(cred_dest_match(&exact, "api.x.com", 443, NULL));
	CHECK(cred_dest_match(&exact, "api.x.com", 443, "/anything"));
	CHECK(!cred_dest_match(&exact, "api.x.com", 444, NULL));
	CHECK(!cred_dest_match(&exact, "x.com", 443, NULL));
	CHECK(!cred_dest_match(&exact, "a.api.x.com", 443, NULL));
	CHECK(!cred_dest_match(&exact, "api.x.co", 443, NULL));
	CHECK(!cred_dest_match(&exact, "api.x.com.evil", 443, NULL));

	CHECK(cred_dest_match(&wild, "a.x.com", 443, NULL));
	CHECK(cred_dest_match(&wild, "a.b.x.com", 443, "/p"));
	CHECK(!cred_dest_match(&wild, "x.com", 443, NULL));
	CHECK(!cred_dest_match(&wild, "ax.com", 443, NULL));
	CHECK(!cred_dest_match(&wild, ".x.com", 443, NULL));
	CHECK(!cred_dest_match(&wild, "a.x.com.evil", 443, NULL));
	CHECK(!cred_dest_match(&wild, "a.x.com", 80, NULL));

	CHECK(cred_dest_match(&path, "api.x.com", 8443, "/v1"));
	CHECK(cred_dest_match(&path, "api.x.com", 8443, "/v1/"));
	CHECK(cred_dest_match(&path, "api.x.com", 8443, "/v1/x/y"));
	CHECK(!cred_dest_match(&path, "api.x.com", 8443, "/v10"));
	CHECK(!cred_dest_match(&path, "api.x.com", 8443, "/v"));
	CHECK(!cred_dest_match(&path, "api.x.com", 8443, "/"));
	CHECK(!cred_dest_match(&path, "api.x.com", 8443, "/x/v1"));
	CHECK(!cred_dest_match(&path, "api.x.com", 443, "/v1"));
	CHECK(cred_dest_match(&path, "api.x.com", 8443, NULL)); /* host and port alone */

	CHECK(cred_dest_match(&path_slash, "api.x.com", 443, "/v1"));
	CHECK(cred_dest_match(&path_slash, "api.x.com", 443, "/v1/a"));
	CHECK(!cred_dest_match(&path_slash, "api.x.com", 443, "/v10"));
	CHECK(cred_dest_match(&root, "api.x.com", 443, "/"));
	CHECK(cred_dest_match(&root, "api.x.com", 443, "/a/b"));
}

static void
test_find_and_bound(void)
{
	struct cred_dest d1[] = { { "a.com", false, 443, "/v1" }, { "b.com", true, 443, NULL } };
	struct cred_dest d2[] = { { "a.com", false, 443, "/v2" } };
	struct cred_binding b[2];
	memset(b, 0, sizeof(b));
	b[0].name = "egress.one";
	b[0].dest = d1;
	b[0].n_dest = 2;
	b[1].name = "egress.two";
	b[1].dest = d2;
	b[1].n_dest = 1;

	CHECK(cred_find(b, 2, "a.com", 443, "/v1/x") == &b[0]);
	CHECK(cred_find(b, 2, "a.com", 443, "/v2") == &b[1]);
	CHECK(cred_find(b, 2, "a.com", 443, "/v3") == NULL);
	CHECK(cred_find(b, 2, "z.b.com", 443, "/") == &b[0]);
	CHECK(cred_find(b, 2, "b.com", 443, "/") == NULL);
	CHECK(cred_find(b, 2, "a.com", 80, "/v1") == NULL);
	/* a binding with only a path prefix still binds the host for plaintext */
	CHECK(cred_host_bound(b, 2, "a.com", 443));
	CHECK(cred_host_bound(&b[1], 1, "a.com", 443));
	CHECK(cred_host_bound(b, 2, "q.b.com", 443));
	CHECK(!cred_host_bound(b, 2, "a.com", 80));
	CHECK(!cred_host_bound(b, 2, "c.com", 443));
	CHECK(!cred_host_bound(b, 0, "a.com", 443));
}

static void
test_applies_to_sandbox(void)
{
	struct cred_binding b = binding(CRED_HEADER, CRED_INJECT_PLACEHOLDER);
	char *sb[] = { "agent", "tool.git" };
	CHECK(cred_applies_to_sandbox(&b, "agent"));
	CHECK(cred_applies_to_sandbox(&b, "mcp.x"));
	b.sandboxes = sb;
	b.n_sandboxes = 2;
	CHECK(cred_applies_to_sandbox(&b, "agent"));
	CHECK(cred_applies_to_sandbox(&b, "tool.git"));
	CHECK(!cred_applies_to_sandbox(&b, "tool.gi"));
	CHECK(!cred_applies_to_sandbox(&b, "mcp.x"));
	CHECK(!cred_applies_to_sandbox(&b, NULL));
}

/* ---- header placement -------------------------------------------------- */

static void
test_header_present(void)
{
	struct cred_binding b = binding(CRED_HEADER, CRED_INJECT_PLACEHOLDER);
	char why[256];
	char *origin = xstrdup("/v1/messages");
	struct http_request r = req_make("POST", "/v1/messages", "Host", "api.example.com",
					 "Authorization", "Bearer " PH, "Content-Type",
					 "application/json", NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), 0);
	CHECK_STR(hval(&r, "Authorization"), "Bearer " SECRET);
	CHECK_STR(hval(&r, "Host"), "api.example.com");
	CHECK_STR(hval(&r, "Content-Type"), "application/json");
	CHECK_STR(hval(&r, "Accept-Encoding"), "identity");
	CHECK_STR(origin, "/v1/messages");
	CHECK_INT(r.n_headers, 4);
	/* the order of the other fields is kept, the placement stays where it was */
	CHECK_STR(r.headers[1].name, "Authorization");
	req_free(&r);

	/* the scheme in another case; the configured prefix is written */
	r = req_make("GET", "/", "authorization", "bEARER " PH, NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), 0);
	CHECK_STR(hval(&r, "Authorization"), "Bearer " SECRET);
	req_free(&r);

	/* a custom header without prefix, its name in another case */
	b.header = "x-api-key";
	b.prefix = "";
	r = req_make("POST", "/", "X-API-KEY", PH, "anthropic-version", "2023-06-01", NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), 0);
	CHECK_STR(hval(&r, "x-api-key"), SECRET);
	CHECK_STR(hval(&r, "anthropic-version"), "2023-06-01");
	req_free(&r);
	free(origin);
}

static void
test_header_refused(void)
{
	struct cred_binding b = binding(CRED_HEADER, CRED_INJECT_PLACEHOLDER);
	char why[256];
	char *origin = xstrdup("/v1/x");
	struct {
		const char *what;
		struct http_request r;
	} cases[] = {
		{ "absent", req_make("GET", "/v1/x", "Host", "api.example.com", NULL) },
		{ "another key", req_make("GET", "/v1/x", "Authorization", "Bearer sk-other", NULL) },
		{ "no prefix", req_make("GET", "/v1/x", "Authorization", PH, NULL) },
		{ "prefix without space", req_make("GET", "/v1/x", "Authorization", "Bearer" PH, NULL) },
		{ "trailing text", req_make("GET", "/v1/x", "Authorization", "Bearer " PH "x", NULL) },
		{ "wrong header", req_make("GET", "/v1/x", "X-Api-Key", PH, NULL) },
		{ "twice", req_make("GET", "/v1/x", "Authorization", "Bearer " PH, "Authorization",
				    "Bearer " PH, NULL) },
		{ "also in another header", req_make("GET", "/v1/x", "Authorization", "Bearer " PH,
						     "X-Debug", "key=" PH, NULL) },
		{ "as a header name", req_make("GET", "/v1/x", "Authorization", "Bearer " PH, PH,
					       "1", NULL) },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct http_request *r = &cases[i].r;
		size_t n = r->n_headers;
		int rc = apply(&b, "agent", r, &origin, why, sizeof(why));
		if (rc != -EACCES)
			printf("#   case %s: rc %d\n", cases[i].what, rc);
		CHECK_INT(rc, -EACCES);
		CHECK(strstr(why, "[egress.api]") != NULL);
		/* refused: untouched */
		CHECK_INT(r->n_headers, n);
		CHECK(hval(r, "Accept-Encoding") == NULL);
		req_free(r);
	}
	/* the placeholder in the path (origin-form) or percent-encoded there */
	free(origin);
	origin = xstrdup("/v1/" PH);
	struct http_request r = req_make("GET", "/v1/" PH, "Authorization", "Bearer " PH, NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), -EACCES);
	CHECK(strstr(why, "outside") != NULL);
	CHECK_STR(hval(&r, "Authorization"), "Bearer " PH);
	req_free(&r);
	free(origin);
	origin = xstrdup("/v1/?q=box%5F0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
			 "abcdef");
	r = req_make("GET", origin, "Authorization", "Bearer " PH, NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), -EACCES);
	req_free(&r);
	/* the missing case names the host and the placement, no secret */
	r = req_make("GET", "/", "Host", "api.example.com", NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), -EACCES);
	CHECK(strstr(why, "api.example.com") != NULL);
	CHECK(strstr(why, "Authorization") != NULL);
	CHECK(strstr(why, "placeholder") != NULL);
	req_free(&r);
	/* a Host field carrying the placeholder is not echoed in the why */
	r = req_make("GET", "/", "Host", "box-" PH, NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), -EACCES);
	req_free(&r);
	/* a Host made of the secret, or of a placeholder that looks like a host
	 * name: the why falls back to a message without either */
	r = req_make("GET", "/", "Host", SECRET, NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), -EACCES);
	CHECK(strstr(why, "[egress.api]") != NULL);
	req_free(&r);
	struct cred_binding b2 = b;
	b2.placeholder = "sk-ant-00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
	r = req_make("GET", "/", "Host", b2.placeholder, "Authorization",
		     "Bearer sk-ant-00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
		     NULL);
	CHECK_INT(apply(&b2, "agent", &r, &origin, why, sizeof(why)), -EACCES);
	CHECK(strstr(why, "[egress.api]") != NULL);
	req_free(&r);
	/* a binding without placeholder or secret refuses */
	b2.placeholder = NULL;
	r = req_make("GET", "/", NULL);
	CHECK_INT(apply(&b2, "agent", &r, &origin, why, sizeof(why)), -EACCES);
	req_free(&r);
	/* a secret that cannot go in a header */
	b.secret = (uint8_t *)"abc\r\nX-Evil: 1";
	b.secret_len = strlen((char *)b.secret);
	r = req_make("GET", "/", "Authorization", "Bearer " PH, NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), -EACCES);
	CHECK_STR(hval(&r, "Authorization"), "Bearer " PH);
	req_free(&r);
	free(origin);
}

/* ---- basic_auth -------------------------------------------------------- */

static void
test_basic_auth(void)
{
	struct cred_binding b = binding(CRED_BASIC_AUTH, CRED_INJECT_PLACEHOLDER);
	char why[256];
	char *origin = xstrdup("/repo.git/info/refs?service=git-upload-pack");
	b.secret = (uint8_t *)"x-access-token:ghp_REALsecret";
	b.secret_len = strlen((char *)b.secret);
	char *want = basic("x-access-token:ghp_REALsecret");

	char *v = basic("x-access-token:" PH);
	struct http_request r = req_make("GET", origin, "Authorization", v, NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), 0);
	CHECK_STR(hval(&r, "Authorization"), want);
	CHECK_STR(origin, "/repo.git/info/refs?service=git-upload-pack");
	req_free(&r);
	free(v);

	/* any user, empty user, scheme in lower case, two spaces */
	v = basic(":" PH);
	r = req_make("GET", origin, "Authorization", v, NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), 0);
	CHECK_STR(hval(&r, "Authorization"), want);
	req_free(&r);
	free(v);
	v = basic("me:" PH);
	memcpy(v, "basic", 5);
	char *v2 = malloc(strlen(v) + 2);
	sprintf(v2, "basic  %s", v + 6);
	r = req_make("GET", origin, "Authorization", v2, NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), 0);
	CHECK_STR(hval(&r, "Authorization"), want);
	req_free(&r);
	free(v);
	free(v2);

	/* refused: absent, placeholder as the user, wrong password, not base64,
	 * bearer instead of basic, no colon */
	const char *bad_pairs[] = { PH ":", PH ":" PH, "me:other", PH };
	for (size_t i = 0; i < sizeof(bad_pairs) / sizeof(bad_pairs[0]); i++) {
		v = basic(bad_pairs[i]);
		r = req_make("GET", origin, "Authorization", v, NULL);
		CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), -EACCES);
		CHECK_STR(hval(&r, "Authorization"), v);
		req_free(&r);
		free(v);
	}
	const char *bad_values[] = { "Basic !!!!", "Basic eA", "Bearer " PH, "Basic" };
	for (size_t i = 0; i < sizeof(bad_values) / sizeof(bad_values[0]); i++) {
		r = req_make("GET", origin, "Authorization", bad_values[i], NULL);
		CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), -EACCES);
		req_free(&r);
	}
	r = req_make("GET", origin, "Host", "github.com", NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), -EACCES);
	CHECK(strstr(why, "Basic") != NULL);
	req_free(&r);

	/* always: set whatever was there */
	b.inject = CRED_INJECT_ALWAYS;
	r = req_make("GET", origin, "Host", "github.com", NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), 0);
	CHECK_STR(hval(&r, "Authorization"), want);
	req_free(&r);
	r = req_make("GET", origin, "Authorization", "Basic Zm9vOmJhcg==", NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), 0);
	CHECK_STR(hval(&r, "Authorization"), want);
	req_free(&r);
	free(want);
	free(origin);
}

/* ---- query_param ------------------------------------------------------- */

static void
test_query_param(void)
{
	struct cred_binding b = binding(CRED_QUERY_PARAM, CRED_INJECT_PLACEHOLDER);
	char why[256];
	/* a secret with bytes that must be encoded */
	b.secret = (uint8_t *)"s/e+c r=t&%~._-Z9";
	b.secret_len = strlen((char *)b.secret);
	const char *enc = "s%2Fe%2Bc%20r%3Dt%26%25~._-Z9";
	char want[512];

	char *origin = xstrdup("/maps/api?a=1&key=" PH "&b=%2f+c&flag&z=");
	struct http_request r = req_make("GET", origin, "Host", "api.example.com", NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), 0);
	snprintf(want, sizeof(want), "/maps/api?a=1&key=%s&b=%%2f+c&flag&z=", enc);
	CHECK_STR(origin, want);
	CHECK_STR(hval(&r, "Accept-Encoding"), "identity");
	CHECK_STR(hval(&r, "Host"), "api.example.com");
	req_free(&r);
	free(origin);

	/* first and last parameter; the placeholder percent-encoded by the client */
	origin = xstrdup("/p?key=" PH);
	r = req_make("GET", origin, NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), 0);
	snprintf(want, sizeof(want), "/p?key=%s", enc);
	CHECK_STR(origin, want);
	req_free(&r);
	free(origin);
	origin = xstrdup("/p?x=%41&k%65y=box%5f0123456789abcdef0123456789abcdef0123456789abcdef01"
			 "23456789abcdef");
	r = req_make("GET", origin, NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), 0);
	snprintf(want, sizeof(want), "/p?x=%%41&k%%65y=%s", enc);
	CHECK_STR(origin, want);
	req_free(&r);
	free(origin);

	/* refused: absent, empty, other value, twice, in another parameter, in a
	 * header, in the path, a parameter whose name only starts with key */
	const char *bad[] = {
		"/p",
		"/p?a=1",
		"/p?key=",
		"/p?key",
		"/p?key=other",
		"/p?keys=" PH,
		"/p?key=" PH "&key=" PH,
		"/p?key=" PH "&other=" PH,
		"/" PH "?key=" PH,
		"/p?key=" PH "x",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		origin = xstrdup(bad[i]);
		r = req_make("GET", origin, NULL);
		int rc = apply(&b, "agent", &r, &origin, why, sizeof(why));
		if (rc != -EACCES)
			printf("#   case %s: rc %d\n", bad[i], rc);
		CHECK_INT(rc, -EACCES);
		CHECK_STR(origin, bad[i]);
		CHECK(strstr(why, "query parameter key") != NULL || strstr(why, "key") != NULL);
		req_free(&r);
		free(origin);
	}
	origin = xstrdup("/p?key=" PH);
	r = req_make("GET", origin, "Referer", "https://x/?key=" PH, NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), -EACCES);
	CHECK(strstr(why, "outside") != NULL);
	req_free(&r);
	free(origin);

	/* always: replace (duplicates dropped), or append */
	b.inject = CRED_INJECT_ALWAYS;
	struct {
		const char *in, *pre, *post; /* want: pre + encoded secret + post */
	} always[] = {
		{ "/p", "/p?key=", "" },
		{ "/p?", "/p?key=", "" },
		{ "/p?a=1", "/p?a=1&key=", "" },
		{ "/p?a=1&", "/p?a=1&key=", "" },
		{ "/p?key=old&a=1", "/p?key=", "&a=1" },
		{ "/p?a=1&key=old&b=2&key=x&c=3", "/p?a=1&key=", "&b=2&c=3" },
		{ "/p?key&a=" PH, "/p?key=", "&a=" PH },
	};
	for (size_t i = 0; i < sizeof(always) / sizeof(always[0]); i++) {
		origin = xstrdup(always[i].in);
		r = req_make("GET", origin, NULL);
		CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), 0);
		snprintf(want, sizeof(want), "%s%s%s", always[i].pre, enc, always[i].post);
		CHECK_STR(origin, want);
		req_free(&r);
		free(origin);
	}
	/* origin_form NULL: req->target is the origin-form */
	r = req_make("GET", "/p?key=" PH, NULL);
	b.inject = CRED_INJECT_PLACEHOLDER;
	memset(why, 0, sizeof(why));
	CHECK_INT(cred_apply(&b, "agent", &r, NULL, why, sizeof(why)), 0);
	snprintf(want, sizeof(want), "/p?key=%s", enc);
	CHECK_STR(r.target, want);
	req_free(&r);
}

/* ---- inject = always, Accept-Encoding, sandboxes ----------------------- */

static void
test_inject_always(void)
{
	struct cred_binding b = binding(CRED_HEADER, CRED_INJECT_ALWAYS);
	char why[256];
	char *origin = xstrdup("/");
	/* absent: added */
	struct http_request r = req_make("GET", "/", "Host", "api.example.com", NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), 0);
	CHECK_STR(hval(&r, "Authorization"), "Bearer " SECRET);
	CHECK_INT(r.n_headers, 3);
	req_free(&r);
	/* another value and duplicates: overwritten, one left */
	r = req_make("GET", "/", "Authorization", "Bearer sk-agent-made-up", "X-A", "1",
		     "authorization", "Basic Zm9vOmJhcg==", NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), 0);
	CHECK_STR(hval(&r, "Authorization"), "Bearer " SECRET);
	CHECK_STR(hval(&r, "X-A"), "1");
	req_free(&r);
	/* the placeholder at the placement: replaced too */
	r = req_make("GET", "/", "Authorization", "Bearer " PH, NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), 0);
	CHECK_STR(hval(&r, "Authorization"), "Bearer " SECRET);
	req_free(&r);
	/* the placeholder elsewhere: sent as it is */
	free(origin);
	origin = xstrdup("/p/" PH);
	r = req_make("GET", origin, "X-Other", PH, NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), 0);
	CHECK_STR(hval(&r, "X-Other"), PH);
	CHECK_STR(hval(&r, "Authorization"), "Bearer " SECRET);
	CHECK_STR(origin, "/p/" PH);
	req_free(&r);
	free(origin);
}

static void
test_accept_encoding(void)
{
	struct cred_binding b = binding(CRED_HEADER, CRED_INJECT_PLACEHOLDER);
	char why[256];
	char *origin = xstrdup("/");
	struct http_request r = req_make("GET", "/", "Accept-Encoding", "gzip, br", "Authorization",
					 "Bearer " PH, "accept-encoding", "zstd", "X-Z", "z", NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), 0);
	CHECK_STR(hval(&r, "Accept-Encoding"), "identity");
	CHECK_INT(r.n_headers, 3);
	CHECK_STR(r.headers[0].name, "Authorization");
	CHECK_STR(r.headers[1].name, "X-Z");
	req_free(&r);
	/* also for inject = always and query placement */
	b = binding(CRED_QUERY_PARAM, CRED_INJECT_ALWAYS);
	r = req_make("GET", "/", "Accept-Encoding", "gzip", NULL);
	CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), 0);
	CHECK_STR(hval(&r, "Accept-Encoding"), "identity");
	req_free(&r);
	free(origin);
}

static void
test_sandbox_scoping(void)
{
	char *sb[] = { "agent" };
	char why[256];
	enum cred_placement pl[] = { CRED_HEADER, CRED_BASIC_AUTH, CRED_QUERY_PARAM };
	char *bv = basic("u:" PH);
	for (size_t k = 0; k < 3; k++) {
		for (int always = 0; always < 2; always++) {
			struct cred_binding b =
				binding(pl[k], always ? CRED_INJECT_ALWAYS : CRED_INJECT_PLACEHOLDER);
			b.sandboxes = sb;
			b.n_sandboxes = 1;
			const char *origin_in = pl[k] == CRED_QUERY_PARAM ? "/p?key=" PH : "/p";
			const char *auth = pl[k] == CRED_BASIC_AUTH ? bv
					   : pl[k] == CRED_HEADER ? "Bearer " PH
								  : "Bearer sk-unrelated";
			char *origin = xstrdup(origin_in);

			/* another sandbox with the placeholder: refused, untouched */
			struct http_request r = req_make("GET", origin_in, "Host", "api.example.com",
							 "Authorization", auth, NULL);
			CHECK_INT(apply(&b, "tool.git", &r, &origin, why, sizeof(why)), -EACCES);
			CHECK(strstr(why, "not bound for sandbox tool.git") != NULL);
			CHECK(strstr(why, "[egress.api]") != NULL);
			CHECK_STR(hval(&r, "Authorization"), auth);
			CHECK(hval(&r, "Accept-Encoding") == NULL);
			CHECK_STR(origin, origin_in);
			/* the bound sandbox: injected */
			CHECK_INT(apply(&b, "agent", &r, &origin, why, sizeof(why)), 0);
			CHECK(strstr(hval(&r, "Authorization"), PH) == NULL);
			CHECK(strstr(origin, PH) == NULL);
			CHECK_STR(hval(&r, "Accept-Encoding"), "identity");
			req_free(&r);
			free(origin);

			/* another sandbox without the placeholder: not applied, untouched
			 * (no injection even for inject = always) */
			origin = xstrdup("/p?a=1");
			r = req_make("GET", "/p?a=1", "Host", "api.example.com", "Accept-Encoding",
				     "gzip", NULL);
			CHECK_INT(apply(&b, "mcp.search", &r, &origin, why, sizeof(why)),
				  CRED_NOT_APPLIED);
			CHECK_INT(r.n_headers, 2);
			CHECK_STR(hval(&r, "Accept-Encoding"), "gzip");
			CHECK(hval(&r, "Authorization") == NULL);
			CHECK_STR(origin, "/p?a=1");
			CHECK_INT(apply(&b, NULL, &r, &origin, why, sizeof(why)), CRED_NOT_APPLIED);
			req_free(&r);
			free(origin);
		}
	}
	free(bv);
}

static void
test_find_placeholder(void)
{
	struct cred_binding b[2];
	b[0] = binding(CRED_HEADER, CRED_INJECT_PLACEHOLDER);
	b[1] = binding(CRED_QUERY_PARAM, CRED_INJECT_PLACEHOLDER);
	b[1].placeholder = "sk-ant-ffff0000ffff0000ffff0000ffff0000ffff0000ffff0000ffff0000ffff0000";
	char *bv = basic("user:sk-ant-ffff0000ffff0000ffff0000ffff0000ffff0000ffff0000ffff0000ffff0000");

	struct http_request r = req_make("GET", "/", "Host", "a", NULL);
	CHECK(cred_find_placeholder(b, 2, &r, "/") == NULL);
	CHECK(cred_find_placeholder(b, 2, &r, NULL) == NULL);
	req_free(&r);
	r = req_make("GET", "/", "X-Key", "pre " PH " post", NULL);
	CHECK(cred_find_placeholder(b, 2, &r, "/") == &b[0]);
	req_free(&r);
	r = req_make("GET", "/", "Authorization", bv, NULL);
	CHECK(cred_find_placeholder(b, 2, &r, "/") == &b[1]);
	req_free(&r);
	r = req_make("GET", "/x?k=" PH, NULL);
	CHECK(cred_find_placeholder(b, 2, &r, NULL) == &b[0]);
	CHECK(cred_find_placeholder(&b[1], 1, &r, NULL) == NULL);
	req_free(&r);
	r = req_make("GET", "http://h/", NULL);
	CHECK(cred_find_placeholder(b, 2, &r, "/x/sk-ant-ffff0000ffff0000ffff0000ffff0000ffff0000"
					      "ffff0000ffff0000%66fff0000") == &b[1]);
	req_free(&r);
	free(bv);
}

/* ---- with http.c's parser ---------------------------------------------- */

/* The head as the gateway would send it upstream: origin + headers. */
static void
serialize(const struct http_request *r, const char *origin, char *out, size_t out_len)
{
	size_t o = (size_t)snprintf(out, out_len, "%s %s HTTP/1.1\r\n", r->method, origin);
	for (size_t i = 0; i < r->n_headers && o < out_len; i++)
		o += (size_t)snprintf(out + o, out_len - o, "%s: %s\r\n", r->headers[i].name,
				      r->headers[i].value);
	if (o < out_len)
		snprintf(out + o, out_len - o, "\r\n");
}

/* Parse, canonicalize, find the binding, rewrite, then let http_request_clear
 * free what cred_apply allocated (the sanitizer build checks the ownership). */
static void
test_with_parser(void)
{
	static const struct http_limits lim = { .max_head = 8192, .max_headers = 100 };
	struct cred_dest d[] = { { "api.example.com", false, 443, "/v1" } };
	struct cred_binding b[2];
	b[0] = binding(CRED_HEADER, CRED_INJECT_PLACEHOLDER);
	b[0].dest = d;
	b[1] = binding(CRED_QUERY_PARAM, CRED_INJECT_PLACEHOLDER);
	b[1].name = "egress.maps";
	b[1].placeholder = "box_ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff";
	struct cred_dest d2[] = { { "maps.example.com", false, 443, NULL } };
	b[1].dest = d2;
	char why[256], out[2048], herr[128];
	const char *raw = "POST /v1/./messages?beta=true HTTP/1.1\r\n"
			  "Host: api.example.com\r\n"
			  "Authorization: Bearer " PH "\r\n"
			  "Accept-Encoding: gzip, deflate\r\n"
			  "Content-Length: 2\r\n\r\n{}";
	struct http_request r;
	memset(&r, 0, sizeof(r));
	CHECK_INT(http_parse_request(raw, strlen(raw), &lim, &r, herr, sizeof(herr)), 0);
	char *path = NULL, *origin = xstrdup(r.target);
	CHECK_INT(http_canonical_path(r.target, &path), 0);
	CHECK_STR(path, "/v1/messages");
	const struct cred_binding *found = cred_find(b, 2, "api.example.com", 443, path);
	CHECK(found == &b[0]);
	CHECK(cred_find(b, 2, "api.example.com", 443, "/v2/messages") == NULL);
	CHECK(cred_host_bound(b, 2, "api.example.com", 443));
	if (found) {
		CHECK_INT(apply(found, "agent", &r, &origin, why, sizeof(why)), 0);
		serialize(&r, origin, out, sizeof(out));
		CHECK_STR(out, "POST /v1/./messages?beta=true HTTP/1.1\r\n"
			       "Host: api.example.com\r\n"
			       "Authorization: Bearer " SECRET "\r\n"
			       "Content-Length: 2\r\n"
			       "Accept-Encoding: identity\r\n\r\n");
	}
	http_request_clear(&r);
	free(path);
	free(origin);

	/* query placement, the always-append path, on a parsed request */
	raw = "GET /maps/api/geocode?address=a%20b&key=box_ffffffffffffffffffffffffffffffffffffffff"
	      "ffffffffffffffffffffffff&z=1 HTTP/1.1\r\nHost: maps.example.com\r\n\r\n";
	memset(&r, 0, sizeof(r));
	CHECK_INT(http_parse_request(raw, strlen(raw), &lim, &r, herr, sizeof(herr)), 0);
	origin = xstrdup(r.target);
	CHECK_INT(apply(&b[1], "agent", &r, &origin, why, sizeof(why)), 0);
	CHECK_STR(origin, "/maps/api/geocode?address=a%20b&key=sk-real-SECRET-value-7f3a9c&z=1");
	/* req->target is left as sent (a caller that logs it never logs the
	 * secret); only *origin_form carries the secret */
	CHECK(strstr(r.target, b[1].placeholder) != NULL);
	CHECK(strstr(r.target, SECRET) == NULL);
	http_request_clear(&r);
	free(origin);
	raw = "GET /v1/x HTTP/1.1\r\nHost: api.example.com\r\nX-Maps: box_fffffffffffffffffff"
	      "fffffffffffffffffffffffffffffffffffffffffffff\r\n\r\n";
	memset(&r, 0, sizeof(r));
	CHECK_INT(http_parse_request(raw, strlen(raw), &lim, &r, herr, sizeof(herr)), 0);
	/* the placeholder of b[1] in a request to b[0]'s host is found */
	CHECK(cred_find_placeholder(b, 2, &r, r.target) == &b[1]);
	http_request_clear(&r);
}

int
main(void)
{
	RUN(test_dest_match);
	RUN(test_find_and_bound);
	RUN(test_applies_to_sandbox);
	RUN(test_header_present);
	RUN(test_header_refused);
	RUN(test_basic_auth);
	RUN(test_query_param);
	RUN(test_inject_always);
	RUN(test_accept_encoding);
	RUN(test_sandbox_scoping);
	RUN(test_find_placeholder);
	RUN(test_with_parser);
	printf("# %d cred_apply calls, no why carried the secret or the placeholder\n",
	       why_checked);
	return tap_done();
}
