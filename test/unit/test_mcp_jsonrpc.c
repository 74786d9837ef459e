/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_mcp_jsonrpc.c — box-mcpd/jsonrpc.c: one MCP stdio frame parsed and
 * classified (every docs/box-mcpd.8.md robustness case at the parsing level: invalid
 * JSON, batches, versions, invalid UTF-8 incl. overlongs and surrogates,
 * duplicate keys, ids), what mcp:call names, and the replies box-mcpd
 * writes itself; what is a request, a notification and an id-less call
 * (every other spelling of "no id": a null id, a wrong type, duplicate and
 * case-variant keys, methods in another case), and a generated test that
 * reads each frame as servers of several kinds would (exact or
 * case-insensitive keys, first or last duplicate wins, methods trimmed and
 * lowered) and holds the classifier to one rule: a frame it accepts means
 * the same to every one of them.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "box-mcpd/jsonrpc.h"
#include "tap.h"

/* Parse NUL-terminated TEXT; returns the result, fills F, *CODE, *WHY. */
static int
parse(const char *text, struct mcp_frame *f, int *code, const char **why)
{
	return mcp_frame_parse(text, strlen(text), f, code, why);
}

/* TEXT must be refused with CODE; WHY_PART must be in the message. */
static void
check_refused(const char *text, size_t len, int want_code, const char *why_part, const char *want_id)
{
	struct mcp_frame f;
	int code = 0;
	const char *why = NULL;
	int r = mcp_frame_parse(text, len, &f, &code, &why);
	CHECK_INT(r, -EINVAL);
	CHECK_INT(code, want_code);
	CHECK(why && strstr(why, why_part));
	if (why && !strstr(why, why_part))
		printf("#   why: \"%s\", expected \"%s\" (%s)\n", why, why_part, text);
	if (want_id) {
		CHECK(f.id != NULL);
		CHECK_STR(f.id_key, want_id);
	} else {
		CHECK(f.id == NULL);
	}
	mcp_frame_clear(&f);
}

#define REFUSED(text, code, why, id) check_refused(text, sizeof(text) - 1, code, why, id)

static void
test_request(void)
{
	struct mcp_frame f;
	int code;
	const char *why;

	CHECK_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"tools/call\","
			"\"params\":{\"name\":\"add\",\"arguments\":{\"a\":1}}}",
			&f, &code, &why),
		  0);
	CHECK_INT(f.kind, MCP_REQUEST);
	CHECK_STR(f.id_key, "s:abc");
	CHECK_STR(f.method, "tools/call");
	CHECK(json_is_object(f.params));
	CHECK_STR(mcp_frame_tool(&f), "add");
	CHECK(mcp_frame_prompt(&f) == NULL);
	CHECK(mcp_frame_uri(&f) == NULL);
	mcp_frame_clear(&f);

	CHECK_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":-42,\"method\":\"ping\"}\r", &f, &code, &why),
		  0);
	CHECK_INT(f.kind, MCP_REQUEST);
	CHECK_STR(f.id_key, "n:-42");
	CHECK(f.params == NULL);
	mcp_frame_clear(&f);

	/* MCP has no by-position params: an array is refused */
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":[1]}",
		MCP_ERR_INVALID, "params must be an object", "n:1");

	/* a 256-byte string id is fine */
	char line[600];
	char id[257];
	memset(id, 'i', 256);
	id[256] = 0;
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"m\"}", id);
	CHECK_INT(parse(line, &f, &code, &why), 0);
	CHECK(strncmp(f.id_key, "s:iii", 5) == 0 && strlen(f.id_key) == 258);
	mcp_frame_clear(&f);
}

static void
test_id_keys_distinguish_types(void)
{
	struct mcp_frame a, b;
	int code;
	const char *why;
	CHECK_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"method\":\"m\"}", &a, &code, &why), 0);
	CHECK_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}", &b, &code, &why), 0);
	CHECK_STR(a.id_key, "s:1");
	CHECK_STR(b.id_key, "n:1");
	CHECK(strcmp(a.id_key, b.id_key) != 0);
	mcp_frame_clear(&a);
	mcp_frame_clear(&b);
}

static void
test_notification(void)
{
	struct mcp_frame f;
	int code;
	const char *why;
	CHECK_INT(parse("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &f, &code,
			&why),
		  0);
	CHECK_INT(f.kind, MCP_NOTIFICATION);
	CHECK(f.id == NULL);
	CHECK_STR(f.id_key, "");
	CHECK_STR(f.method, "notifications/initialized");
	mcp_frame_clear(&f);
}

static void
test_response(void)
{
	struct mcp_frame f;
	int code;
	const char *why;

	CHECK_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[]}}", &f, &code, &why),
		  0);
	CHECK_INT(f.kind, MCP_RESPONSE);
	CHECK_STR(f.id_key, "n:3");
	CHECK(!f.is_error);
	CHECK(json_is_object(f.result));
	CHECK(f.method == NULL);
	mcp_frame_clear(&f);

	/* result may be any JSON value, null included */
	CHECK_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":null}", &f, &code, &why), 0);
	CHECK_INT(f.kind, MCP_RESPONSE);
	CHECK(json_is_null(f.result));
	mcp_frame_clear(&f);

	CHECK_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"error\":{\"code\":-32601,"
			"\"message\":\"no\"}}",
			&f, &code, &why),
		  0);
	CHECK(f.is_error);
	CHECK(json_is_object(f.error));
	CHECK_STR(f.id_key, "s:x");
	mcp_frame_clear(&f);

	/* an error reply to a frame the peer could not read has id null */
	CHECK_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
			"\"message\":\"parse\"}}",
			&f, &code, &why),
		  0);
	CHECK(f.is_error);
	CHECK(json_is_null(f.id));
	CHECK_STR(f.id_key, "null");
	mcp_frame_clear(&f);

	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":1}", MCP_ERR_INVALID,
		"id must be a string or an integer", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1,\"error\":{\"code\":1,\"message\":\"m\"}}",
		MCP_ERR_INVALID, "exactly one of result and error", "n:1");
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1}", MCP_ERR_INVALID, "exactly one of result and error",
		"n:1");
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"bad\"}", MCP_ERR_INVALID,
		"integer code and a string message", "n:1");
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1.5,\"message\":\"m\"}}",
		MCP_ERR_INVALID, "integer code", "n:1");
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1}}", MCP_ERR_INVALID,
		"string message", "n:1");
	REFUSED("{\"jsonrpc\":\"2.0\",\"result\":1}", MCP_ERR_INVALID, "needs a method or an id",
		NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1.0,\"result\":1}", MCP_ERR_INVALID,
		"id must be a string or an integer", NULL);
}

static void
test_invalid_json(void)
{
	REFUSED("{", MCP_ERR_PARSE, "invalid JSON", NULL);
	REFUSED("", MCP_ERR_PARSE, "invalid JSON", NULL);
	REFUSED("not json", MCP_ERR_PARSE, "invalid JSON", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"} trailing", MCP_ERR_PARSE,
		"invalid JSON", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",}", MCP_ERR_PARSE, "invalid JSON",
		NULL);
	/* a raw control character inside a string is not JSON */
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\tb\"}", MCP_ERR_PARSE, "invalid JSON",
		NULL);
	/* integers beyond 64 bits */
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":99999999999999999999,\"method\":\"m\"}", MCP_ERR_PARSE,
		"number out of range", NULL);
	/* \u0000 would cut every C string the broker hands on */
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\\u0000b\"}", MCP_ERR_PARSE,
		"\\u0000", NULL);
	/* a raw NUL byte */
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\0b\"}", MCP_ERR_PARSE, "NUL byte", NULL);
}

static void
test_batch_refused(void)
{
	REFUSED("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", MCP_ERR_INVALID,
		"batches are not supported", NULL);
	REFUSED("[]", MCP_ERR_INVALID, "batches are not supported", NULL);
	REFUSED("  [1, 2]  ", MCP_ERR_INVALID, "batches are not supported", NULL);
	REFUSED("5", MCP_ERR_INVALID, "must be a JSON object", NULL);
	REFUSED("\"str\"", MCP_ERR_INVALID, "must be a JSON object", NULL);
	REFUSED("null", MCP_ERR_INVALID, "must be a JSON object", NULL);
}

static void
test_version(void)
{
	/* the id is still read, so the -32600 goes to the request's id */
	REFUSED("{\"jsonrpc\":\"1.0\",\"id\":7,\"method\":\"ping\"}", MCP_ERR_INVALID,
		"jsonrpc must be \"2.0\"", "n:7");
	REFUSED("{\"id\":\"q\",\"method\":\"ping\"}", MCP_ERR_INVALID, "jsonrpc must be \"2.0\"",
		"s:q");
	REFUSED("{\"jsonrpc\":2.0,\"id\":1,\"method\":\"ping\"}", MCP_ERR_INVALID,
		"jsonrpc must be \"2.0\"", "n:1");
	REFUSED("{\"jsonrpc\":\"2.0 \",\"method\":\"ping\"}", MCP_ERR_INVALID,
		"jsonrpc must be \"2.0\"", NULL);
	REFUSED("{\"jsonrpc\":\"1.0\",\"id\":1,\"result\":{}}", MCP_ERR_INVALID,
		"jsonrpc must be \"2.0\"", "n:1");
}

static void
test_invalid_utf8(void)
{
	/* overlong '/' (2 and 3 bytes), an overlong NUL */
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xc0\xaf\"}", MCP_ERR_PARSE,
		"invalid UTF-8", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xe0\x80\xaf\"}", MCP_ERR_PARSE,
		"invalid UTF-8", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xc0\x80\"}", MCP_ERR_PARSE,
		"invalid UTF-8", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xf0\x80\x80\xaf\"}", MCP_ERR_PARSE,
		"invalid UTF-8", NULL);
	/* a UTF-16 surrogate encoded as UTF-8 (CESU) */
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xed\xa0\x80\"}", MCP_ERR_PARSE,
		"invalid UTF-8", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xed\xbf\xbf\"}", MCP_ERR_PARSE,
		"invalid UTF-8", NULL);
	/* above U+10FFFF, a lone continuation byte, a cut sequence, 0xff */
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xf4\x90\x80\x80\"}", MCP_ERR_PARSE,
		"invalid UTF-8", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\x80\"}", MCP_ERR_PARSE, "invalid UTF-8",
		NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xe2\x82\"}", MCP_ERR_PARSE,
		"invalid UTF-8", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", MCP_ERR_PARSE, "invalid UTF-8",
		NULL);
	/* a lone surrogate as an escape is invalid too */
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\\ud800\"}", MCP_ERR_PARSE, "invalid",
		NULL);

	/* valid multi-byte text and an escaped surrogate pair pass */
	struct mcp_frame f;
	int code;
	const char *why;
	CHECK_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"t\":"
			"\"é€\xf0\x9f\x98\x80\\ud83d\\ude00\"}}",
			&f, &code, &why),
		  0);
	CHECK_STR(json_string_value(json_object_get(f.params, "t")), "é€😀😀");
	mcp_frame_clear(&f);
	/* ... but not in a method, which is printable ASCII */
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"é\"}", MCP_ERR_INVALID,
		"printable ASCII", "n:1");
}

static void
test_utf8_offsets(void)
{
	size_t bad = 99;
	CHECK(mcp_utf8_valid("abc", 3, &bad));
	CHECK(mcp_utf8_valid("", 0, &bad));
	CHECK(mcp_utf8_valid("\xf4\x8f\xbf\xbf", 4, &bad)); /* U+10FFFF */
	CHECK(mcp_utf8_valid("\xef\xbf\xbf", 3, &bad));     /* U+FFFF */
	CHECK(mcp_utf8_valid("\xed\x9f\xbf", 3, &bad));     /* U+D7FF */
	CHECK(!mcp_utf8_valid("ab\xc1\xbf", 4, &bad));
	CHECK_INT(bad, 2);
	CHECK(!mcp_utf8_valid("é\xed\xa0\x80", 5, &bad));
	CHECK_INT(bad, 2);
	CHECK(!mcp_utf8_valid("abc\xe2\x82", 5, &bad));
	CHECK_INT(bad, 3);
	CHECK(!mcp_utf8_valid("a\0b", 3, &bad));
	CHECK_INT(bad, 1);
}

static void
test_duplicate_keys(void)
{
	/*
	 * jansson keeps the last value of a duplicate key; a server's parser may
	 * keep the first. The broker would decide on a name the server does not
	 * run, so a duplicate anywhere refuses the frame.
	 */
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"method\":\"ping\"}",
		MCP_ERR_PARSE, "duplicate object key", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
		"{\"name\":\"safe\",\"name\":\"rm\"}}",
		MCP_ERR_PARSE, "duplicate object key", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
		"{\"name\":\"t\",\"arguments\":{\"a\":{\"b\":1,\"b\":2}}}}",
		MCP_ERR_PARSE, "duplicate object key", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"m\"}", MCP_ERR_PARSE,
		"duplicate object key", NULL);
}

static void
test_request_ids(void)
{
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", MCP_ERR_INVALID,
		"id must be a string or an integer", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", MCP_ERR_INVALID,
		"id must be a string or an integer", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1e3,\"method\":\"ping\"}", MCP_ERR_INVALID,
		"id must be a string or an integer", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", MCP_ERR_INVALID,
		"id must be a string or an integer", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", MCP_ERR_INVALID,
		"id must be a string or an integer", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}", MCP_ERR_INVALID,
		"id must be a string or an integer", NULL);
	char line[600], id[258];
	memset(id, 'x', 257);
	id[257] = 0;
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"m\"}", id);
	check_refused(line, strlen(line), MCP_ERR_INVALID, "id longer than 256 bytes", NULL);
}

static void
test_method_and_params(void)
{
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", MCP_ERR_INVALID,
		"method must be a string", "n:1");
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}", MCP_ERR_INVALID,
		"method must have 1 to 256 bytes", "n:1");
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":\"x\"}", MCP_ERR_INVALID,
		"params must be an object", "n:1");
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":null}", MCP_ERR_INVALID,
		"params must be an object", "n:1");
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"result\":1}", MCP_ERR_INVALID,
		"cannot carry result or error", "n:1");
	char line[600], m[258];
	memset(m, 'm', 257);
	m[257] = 0;
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"method\":\"%s\"}", m);
	check_refused(line, strlen(line), MCP_ERR_INVALID, "1 to 256 bytes", NULL);
}

static void
test_call_names(void)
{
	struct mcp_frame f;
	int code;
	const char *why;

	CHECK_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\",\"params\":"
			"{\"name\":\"greet\",\"uri\":\"file:///x\"}}",
			&f, &code, &why),
		  0);
	CHECK_STR(mcp_frame_prompt(&f), "greet");
	CHECK(mcp_frame_tool(&f) == NULL);
	CHECK_STR(mcp_frame_uri(&f), "file:///x");
	mcp_frame_clear(&f);

	CHECK_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":"
			"{\"uri\":\"mem://a\"}}",
			&f, &code, &why),
		  0);
	CHECK_STR(mcp_frame_uri(&f), "mem://a");
	CHECK(mcp_frame_tool(&f) == NULL && mcp_frame_prompt(&f) == NULL);
	mcp_frame_clear(&f);

	/*
	 * A name or uri the broker decides on that is there but unusable (not a
	 * string, empty, over its cap) refuses the call: decided without it, the
	 * call could name what the policy forbids (a server may coerce [\"x\"] to
	 * "x", or ignore what follows a long uri's '#').
	 */
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
		"{\"name\":5}}",
		MCP_ERR_PARAMS, "params.name must be a string", "n:1");
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
		"{\"name\":\"\"}}",
		MCP_ERR_PARAMS, "params.name must be a string", "n:1");
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\",\"params\":"
		"{\"name\":[\"leak\"]}}",
		MCP_ERR_PARAMS, "params.name must be a string", "n:1");
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":"
		"{\"uri\":[\"file:///secret\"]}}",
		MCP_ERR_PARAMS, "params.uri must be a string", "n:1");
	REFUSED("{\"jsonrpc\":\"2.0\",\"method\":\"resources/read\",\"params\":{\"uri\":null}}",
		MCP_ERR_PARAMS, "params.uri must be a string", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":[\"x\"]}",
		MCP_ERR_INVALID, "params must be an object", "n:1");
	/* one byte over the caps */
	static const struct {
		const char *method, *key, *why;
		size_t len;
	} over[] = { { "tools/call", "name", "1 to 256 bytes", MCP_NAME_MAX + 1 },
		     { "resources/read", "uri", "1 to 4096 bytes", MCP_URI_MAX + 1 } };
	for (size_t i = 0; i < sizeof(over) / sizeof(over[0]); i++) {
		char line[5000], value[MCP_URI_MAX + 2];
		memset(value, 'v', over[i].len);
		value[over[i].len] = 0;
		snprintf(line, sizeof(line),
			 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\",\"params\":{\"%s\":\"%s\"}}",
			 over[i].method, over[i].key, value);
		check_refused(line, strlen(line), MCP_ERR_PARAMS, over[i].why, "n:1");
	}
	/* a name tools/call and prompts/get do not read is not checked; a notification's uri neither */
	CHECK_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":"
			"{\"name\":5}}",
			&f, &code, &why),
		  0);
	mcp_frame_clear(&f);
	CHECK_INT(parse("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\","
			"\"params\":{\"uri\":5}}",
			&f, &code, &why),
		  0);
	CHECK_INT(f.kind, MCP_NOTIFICATION);
	mcp_frame_clear(&f);
}

static void
test_idless_calls(void)
{
	struct mcp_frame f;
	int code;
	const char *why;

	/* A method without an id is a notification only under notifications/. */
	static const struct {
		const char *text;
		enum mcp_kind kind;
	} cases[] = {
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"rm\"}}",
		  MCP_IDLESS_CALL },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}", MCP_IDLESS_CALL },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"initialize\",\"params\":{}}", MCP_IDLESS_CALL },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"sampling/createMessage\",\"params\":{}}",
		  MCP_IDLESS_CALL },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/\"}", MCP_IDLESS_CALL },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"notificationsX\"}", MCP_IDLESS_CALL },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"x/notifications/y\"}", MCP_IDLESS_CALL },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"no/such\"}", MCP_IDLESS_CALL },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", MCP_NOTIFICATION },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}",
		  MCP_NOTIFICATION },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/call\",\"params\":{\"name\":5}}",
		  MCP_NOTIFICATION },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_INT(parse(cases[i].text, &f, &code, &why), 0);
		CHECK_INT(f.kind, cases[i].kind);
		CHECK(f.id == NULL);
		CHECK_STR(f.id_key, "");
		if (f.kind != cases[i].kind)
			printf("#   %s\n", cases[i].text);
		mcp_frame_clear(&f);
	}
	CHECK_INT(parse(cases[0].text, &f, &code, &why), 0);
	CHECK_STR(mcp_frame_tool(&f), "rm");
	mcp_frame_clear(&f);

	/* With an id a notifications/ method is a request like any other. */
	CHECK_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"notifications/x\"}", &f, &code,
			&why),
		  0);
	CHECK_INT(f.kind, MCP_REQUEST);
	mcp_frame_clear(&f);

	/* An id-less call's name and uri are checked as a request's are. */
	REFUSED("{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":[\"rm\"]}}",
		MCP_ERR_PARAMS, "params.name", NULL);
	/* ... and a response without an id is no frame at all */
	REFUSED("{\"jsonrpc\":\"2.0\",\"result\":{}}", MCP_ERR_INVALID, "needs a method or an id",
		NULL);
}

static void
test_null_and_odd_ids(void)
{
	/*
	 * JSON-RPC reads "id": null as a request (with a discouraged id), some
	 * servers as a notification; MCP forbids it. Refused, as every id that is
	 * not a string or an integer.
	 */
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"tools/call\",\"params\":"
		"{\"name\":\"rm\"}}",
		MCP_ERR_INVALID, "null is neither a request nor a notification", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":false,\"method\":\"tools/call\"}", MCP_ERR_INVALID,
		"id must be a string or an integer", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"tools/call\"}", MCP_ERR_INVALID,
		"id must be a string or an integer", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":[],\"method\":\"tools/call\"}", MCP_ERR_INVALID,
		"id must be a string or an integer", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"tools/call\"}", MCP_ERR_INVALID,
		"id must be a string or an integer", NULL);
	/* two ids, however spelled */
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"\\u0069d\":2,\"method\":\"m\"}", MCP_ERR_PARSE,
		"duplicate object key", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"ID\":2,\"method\":\"m\"}", MCP_ERR_INVALID,
		"differ only in letter case", NULL);
	/* an id spelled in another case alone: a Go server reads it, the broker would not */
	REFUSED("{\"jsonrpc\":\"2.0\",\"Id\":2,\"method\":\"tools/call\"}", MCP_ERR_INVALID,
		"spelled like a JSON-RPC member", NULL);
	/* jsonrpc missing: whatever else the frame says */
	REFUSED("{\"method\":\"tools/call\",\"params\":{\"name\":\"rm\"}}", MCP_ERR_INVALID,
		"jsonrpc must be \"2.0\"", NULL);
	REFUSED("{\"JSONRPC\":\"2.0\",\"method\":\"tools/call\"}", MCP_ERR_INVALID,
		"jsonrpc must be \"2.0\"", NULL);
}

static void
test_case_variants(void)
{
	/* methods that differ from MCP's only in case, or carry spaces */
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"Tools/Call\"}", MCP_ERR_INVALID,
		"only in letter case", "n:1");
	REFUSED("{\"jsonrpc\":\"2.0\",\"method\":\"TOOLS/CALL\"}", MCP_ERR_INVALID,
		"only in letter case", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"method\":\"sampling/createmessage\"}", MCP_ERR_INVALID,
		"only in letter case", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"method\":\"Notifications/initialized\"}", MCP_ERR_INVALID,
		"notifications/ only in letter case", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\" tools/call\"}", MCP_ERR_INVALID,
		"printable ASCII without spaces", "n:1");
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\\n\"}", MCP_ERR_INVALID,
		"printable ASCII without spaces", "n:1");
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\\u00a0\"}", MCP_ERR_INVALID,
		"printable ASCII without spaces", "n:1");
	/* keys equal but for case, anywhere; ASCII and the two letters Go folds onto ASCII */
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"Method\":\"tools/call\"}",
		MCP_ERR_INVALID, "differ only in letter case", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
		"\"Name\":\"rm\"}}",
		MCP_ERR_INVALID, "differ only in letter case", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"t\","
		"\"arguments\":{\"path\":\"/tmp\",\"PATH\":\"/etc\"}}}",
		MCP_ERR_INVALID, "differ only in letter case", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"},"
		"\"param\xc5\xbf\":{\"name\":\"rm\"}}",
		MCP_ERR_INVALID, "differ only in letter case", NULL);
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"k\":1,\"\xe2\x84\xaa\":2}]}}",
		MCP_ERR_INVALID, "differ only in letter case", NULL);
	/* a member of params spelled like one the broker reads but for case */
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\",\"params\":{\"Name\":\"leak\"}}",
		MCP_ERR_PARAMS, "spelled like name, uri", "n:1");
	REFUSED("{\"jsonrpc\":\"2.0\",\"method\":\"resources/read\",\"params\":{\"URI\":\"file:///s\"}}",
		MCP_ERR_PARAMS, "spelled like name, uri", NULL);
	/* ordinary keys in any case pass, and distinct keys that share a prefix */
	struct mcp_frame f;
	int code;
	const char *why;
	CHECK_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
			"\"t\",\"arguments\":{\"Path\":1,\"paths\":2,\"\xc3\xa9\":3,\"\xc3\x89\":4}}}",
			&f, &code, &why),
		  0);
	mcp_frame_clear(&f);
	/* a custom method keeps its case */
	CHECK_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x/DoThing\"}", &f, &code, &why),
		  0);
	CHECK_STR(f.method, "x/DoThing");
	mcp_frame_clear(&f);
}

static void
test_load_and_classify_batch(void)
{
	/* box-gateway reads a server's batch element by element, each by the same rules */
	json_t *root = NULL;
	int code;
	const char *why;
	const char *text = "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}},"
			   "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"},"
			   "{\"jsonrpc\":\"2.0\",\"method\":\"sampling/createMessage\"},"
			   "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"roots/list\"}]";
	CHECK_INT(mcp_json_load(text, strlen(text), &root, &code, &why), 0);
	CHECK(json_is_array(root));
	int want[] = { MCP_RESPONSE, MCP_NOTIFICATION, MCP_IDLESS_CALL, -1 };
	for (size_t i = 0; i < json_array_size(root); i++) {
		struct mcp_frame f;
		int r = mcp_frame_classify(json_array_get(root, i), &f, &code, &why);
		CHECK_INT(r == 0 ? (int)f.kind : -1, want[i]);
		mcp_frame_clear(&f);
	}
	json_decref(root);
	/* the load refuses what a frame's parse refuses, wherever it is in a batch */
	text = "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":1,\"A\":2}}]";
	CHECK_INT(mcp_json_load(text, strlen(text), &root, &code, &why), -EINVAL);
	CHECK_INT(code, MCP_ERR_INVALID);
	CHECK(root == NULL);
	text = "[{\"id\":1,\"id\":2}]";
	CHECK_INT(mcp_json_load(text, strlen(text), &root, &code, &why), -EINVAL);
	CHECK_INT(code, MCP_ERR_PARSE);
	/* a non-object element */
	struct mcp_frame f;
	json_t *n = json_integer(3);
	CHECK_INT(mcp_frame_classify(n, &f, &code, &why), -EINVAL);
	CHECK_STR(why, "a frame must be a JSON object");
	mcp_frame_clear(&f);
	json_decref(n);
}

/*
 * ---- generated frames, read as servers of several kinds would -----------------------
 *
 * Each frame is built from members chosen at random (a fixed seed): spellings
 * of jsonrpc, id, method and params (exact, another case, a \u escape, the
 * long s that Go folds to 's'), values of every type, duplicates, and params
 * with spellings of name. A reader picks a member by its key exactly or
 * case-insensitively (Go's encoding/json), keeping the first or the last of
 * duplicates; a lenient reader also trims and lowers the method before it
 * dispatches. When the classifier accepts a frame, every reader must see
 * the id the classifier saw (or none), the very method it decided on, and,
 * for tools/call and prompts/get, the very name; a notification must be a
 * notifications/ method with no id under any reading.
 */

struct gen_member {
	const char *key_json; /* as written between the quotes */
	const char *key;      /* decoded */
	char val[256];        /* JSON text */
	/* params only: its members (a params object), or is_array */
	struct gen_member *sub;
	size_t n_sub;
	bool is_array;
};

static unsigned long long gen_state = 0x9e3779b97f4a7c15ULL;

static unsigned
gen_rand(unsigned n)
{
	gen_state ^= gen_state << 13;
	gen_state ^= gen_state >> 7;
	gen_state ^= gen_state << 17;
	return (unsigned)(gen_state % n);
}

/* The reference fold (written apart from jsonrpc.c's): ASCII, U+017F, U+212A. */
static void
ref_fold(const char *k, char *out, size_t size)
{
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)k; *p && o + 1 < size;) {
		if (p[0] == 0xc5 && p[1] == 0xbf) {
			out[o++] = 's';
			p += 2;
		} else if (p[0] == 0xe2 && p[1] == 0x84 && p[2] == 0xaa) {
			out[o++] = 'k';
			p += 3;
		} else {
			out[o++] = (char)((*p >= 'A' && *p <= 'Z') ? *p + 32 : *p);
			p++;
		}
	}
	out[o] = 0;
}

enum { READ_EXACT = 1, READ_FOLD = 2, READ_FIRST = 4 };

/* The member a reader of MODE takes for NAME, or NULL. */
static const struct gen_member *
ref_pick(const struct gen_member *m, size_t n, const char *name, int mode)
{
	const struct gen_member *got = NULL;
	for (size_t i = 0; i < n; i++) {
		char f[64];
		ref_fold(m[i].key, f, sizeof(f));
		bool match = (mode & READ_FOLD) ? strcmp(f, name) == 0 : strcmp(m[i].key, name) == 0;
		if (match) {
			got = &m[i];
			if (mode & READ_FIRST)
				break;
		}
	}
	return got;
}

static void
ref_lenient(const char *in, char *out, size_t size)
{
	while (*in == ' ' || *in == '\t' || *in == '\n')
		in++;
	size_t n = 0;
	for (; *in && n + 1 < size; in++)
		out[n++] = (char)((*in >= 'A' && *in <= 'Z') ? *in + 32 : *in);
	while (n && (out[n - 1] == ' ' || out[n - 1] == '\t' || out[n - 1] == '\n'))
		n--;
	out[n] = 0;
}

static bool
ref_known(const char *m)
{
	static const char *const known[] = { "tools/call", "tools/list", "ping", "prompts/get",
					     "sampling/createmessage" };
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(m, known[i]) == 0)
			return true;
	return strncmp(m, "notifications/", 14) == 0;
}

static void
gen_add(struct gen_member *m, size_t *n, const char *key_json, const char *key, const char *val)
{
	m[*n].key_json = key_json;
	m[*n].key = key;
	snprintf(m[*n].val, sizeof(m[*n].val), "%s", val);
	m[*n].sub = NULL;
	m[*n].n_sub = 0;
	m[*n].is_array = false;
	(*n)++;
}

static size_t
gen_emit(char *out, size_t size, const struct gen_member *m, size_t n)
{
	size_t o = 0;
	o += (size_t)snprintf(out + o, size - o, "{");
	for (size_t i = 0; i < n && o < size; i++) {
		o += (size_t)snprintf(out + o, size - o, "%s\"%s\":", i ? "," : "", m[i].key_json);
		if (m[i].sub || m[i].is_array) {
			if (m[i].is_array)
				o += (size_t)snprintf(out + o, size - o, "[\"secret\"]");
			else
				o += gen_emit(out + o, size - o, m[i].sub, m[i].n_sub);
		} else {
			o += (size_t)snprintf(out + o, size - o, "%s", m[i].val);
		}
	}
	if (o < size)
		o += (size_t)snprintf(out + o, size - o, "}");
	return o < size ? o : size - 1;
}

static void
gen_shuffle(struct gen_member *m, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = gen_rand((unsigned)i);
		struct gen_member t = m[i - 1];
		m[i - 1] = m[j];
		m[j] = t;
	}
}

/* The value text of a member as a string, or NULL when it is not a JSON string. */
static const char *
gen_string(const struct gen_member *m, char *buf, size_t size)
{
	if (!m || m->sub || m->is_array)
		return NULL;
	json_error_t e;
	json_t *j = json_loads(m->val, JSON_DECODE_ANY, &e);
	const char *r = NULL;
	if (json_is_string(j)) {
		snprintf(buf, size, "%s", json_string_value(j));
		r = buf;
	}
	json_decref(j);
	return r;
}

static void
test_generated_readers(void)
{
	static const char *const ids[] = { "1", "\"a\"", "null", "true", "1.5", "{}", "[]", "2" };
	static const char *const methods[] = {
		"\"tools/call\"", "\"Tools/Call\"", "\" tools/call\"", "\"tools/call \"", "\"ping\"",
		"\"notifications/initialized\"", "\"Notifications/initialized\"",
		"\"notifications/\"", "\"tools/list\"", "5", "\"TOOLS/CALL\"", "\"tools/call\\t\"",
		"\"prompts/get\"", "\"x/custom\"",
	};
	static const char *const names[] = { "\"secret\"", "\"echo\"", "5", "\"\"", "null" };
	static const struct {
		const char *json, *key;
	} id_keys[] = { { "id", "id" }, { "ID", "ID" }, { "Id", "Id" }, { "\\u0069d", "id" } },
	  method_keys[] = { { "method", "method" }, { "Method", "Method" },
			    { "METHOD", "METHOD" }, { "\\u006dethod", "method" } },
	  params_keys[] = { { "params", "params" }, { "Params", "Params" },
			    { "param\xc5\xbf", "param\xc5\xbf" } },
	  name_keys[] = { { "name", "name" }, { "Name", "Name" }, { "NAME", "NAME" },
			  { "n\\u0061me", "name" } },
	  ver_keys[] = { { "jsonrpc", "jsonrpc" }, { "JSONRPC", "JSONRPC" } };
	static const int modes[] = { READ_EXACT, READ_EXACT | READ_FIRST, READ_FOLD,
				     READ_FOLD | READ_FIRST };
	unsigned accepted[4] = { 0 }, violations = 0, tools_calls = 0;

	for (int round = 0; round < 30000; round++) {
		struct gen_member top[12], sub[2][4];
		size_t nt = 0;
		if (gen_rand(10) < 9) {
			unsigned k = gen_rand(8) == 0;
			gen_add(top, &nt, ver_keys[k].json, ver_keys[k].key,
				gen_rand(12) ? "\"2.0\"" : "\"1.0\"");
		}
		for (unsigned i = 0, n = gen_rand(6) < 3 ? 0 : gen_rand(5) ? 1 : 2; i < n; i++) {
			unsigned k = gen_rand(5) ? 0 : gen_rand(4);
			gen_add(top, &nt, id_keys[k].json, id_keys[k].key,
				ids[gen_rand(3) ? gen_rand(2) : gen_rand(8)]);
		}
		for (unsigned i = 0, n = gen_rand(8) == 0 ? 0 : gen_rand(5) ? 1 : 2; i < n; i++) {
			unsigned k = gen_rand(5) ? 0 : gen_rand(4);
			gen_add(top, &nt, method_keys[k].json, method_keys[k].key,
				methods[gen_rand(3) ? gen_rand(2) * 12 : gen_rand(14)]);
		}
		for (unsigned i = 0, n = gen_rand(4) == 0 ? 0 : gen_rand(6) ? 1 : 2; i < n; i++) {
			unsigned k = gen_rand(6) ? 0 : gen_rand(3);
			gen_add(top, &nt, params_keys[k].json, params_keys[k].key, "");
			struct gen_member *pm = &top[nt - 1];
			if (gen_rand(12) == 0) {
				pm->is_array = true;
				continue;
			}
			pm->sub = sub[i];
			for (unsigned j = 0, nn = gen_rand(6) ? 1 : gen_rand(3); j < nn; j++) {
				unsigned nk = gen_rand(5) ? 0 : gen_rand(4);
				gen_add(sub[i], &pm->n_sub, name_keys[nk].json, name_keys[nk].key,
					names[gen_rand(3) ? gen_rand(2) : gen_rand(5)]);
			}
		}
		if (gen_rand(8) == 0)
			gen_add(top, &nt, "result", "result", "{}");
		gen_shuffle(top, nt);
		char text[4096];
		size_t len = gen_emit(text, sizeof(text), top, nt);

		struct mcp_frame f;
		int code;
		const char *why;
		if (mcp_frame_parse(text, len, &f, &code, &why) != 0) {
			mcp_frame_clear(&f);
			continue;
		}
		accepted[f.kind]++;
		const char *tool = (f.method && (strcmp(f.method, "tools/call") == 0 ||
						 strcmp(f.method, "prompts/get") == 0))
					   ? json_string_value(json_object_get(f.params, "name"))
					   : NULL;
		tools_calls += f.method && strcmp(f.method, "tools/call") == 0;
		bool bad = false;
		for (size_t mi = 0; mi < sizeof(modes) / sizeof(modes[0]); mi++) {
			int mode = modes[mi];
			const struct gen_member *id = ref_pick(top, nt, "id", mode);
			const struct gen_member *me = ref_pick(top, nt, "method", mode);
			const struct gen_member *pa = ref_pick(top, nt, "params", mode);
			char mb[300], nb[300], low[300];
			const char *m = gen_string(me, mb, sizeof(mb));
			/* the id: there exactly when the classifier saw one, the same value */
			bool has_id = f.kind == MCP_REQUEST || f.kind == MCP_RESPONSE;
			if (!id != !has_id)
				bad = true;
			if (id && f.id) {
				json_error_t e;
				json_t *v = json_loads(id->val, JSON_DECODE_ANY, &e);
				bad |= !json_equal(v, f.id);
				json_decref(v);
			}
			/* the method: the very one decided on, by every reader */
			if ((f.method == NULL) != (me == NULL))
				bad = true;
			if (f.method && (!m || strcmp(m, f.method) != 0))
				bad = true;
			if (m) {
				ref_lenient(m, low, sizeof(low));
				if (ref_known(low) && f.method && strcmp(low, f.method) != 0)
					bad = true; /* a lenient server dispatches another method */
			}
			if (f.kind == MCP_NOTIFICATION && strncmp(f.method, "notifications/", 14) != 0)
				bad = true;
			/* the name of tools/call and prompts/get: the very one decided on */
			if (f.method && (strcmp(f.method, "tools/call") == 0 ||
					 strcmp(f.method, "prompts/get") == 0)) {
				const struct gen_member *nm =
				    pa && pa->sub ? ref_pick(pa->sub, pa->n_sub, "name", mode) : NULL;
				const char *n = gen_string(nm, nb, sizeof(nb));
				if ((pa && pa->is_array) || (nm && !n) || (!n) != (!tool) ||
				    (n && strcmp(n, tool) != 0))
					bad = true;
			}
		}
		if (bad) {
			violations++;
			if (violations <= 5)
				printf("#   read differently by a server: %s\n", text);
		}
		mcp_frame_clear(&f);
	}
	CHECK_INT(violations, 0);
	/* the generator reached every kind, and real calls among them */
	CHECK(accepted[MCP_REQUEST] > 1000 && accepted[MCP_NOTIFICATION] > 100 &&
	      accepted[MCP_IDLESS_CALL] > 1000 && accepted[MCP_RESPONSE] > 10 && tools_calls > 500);
	printf("# generated: %u requests, %u notifications, %u id-less calls, %u responses "
	       "accepted (%u tools/call)\n",
	       accepted[MCP_REQUEST], accepted[MCP_NOTIFICATION], accepted[MCP_IDLESS_CALL],
	       accepted[MCP_RESPONSE], tools_calls);
}

static void
test_error_reply(void)
{
	size_t len = 0;
	char *r = mcp_error_reply(NULL, MCP_ERR_PARSE, "invalid JSON", &len);
	CHECK_STR(r, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
		     "\"message\":\"invalid JSON\"}}\n");
	CHECK_INT(len, strlen(r));
	free(r);

	json_t *id = json_string("a\"b");
	r = mcp_error_reply(id, MCP_ERR_POLICY, "denied by rule \"x\"\n(line 3)", &len);
	CHECK_STR(r, "{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"error\":{\"code\":-32001,"
		     "\"message\":\"denied by rule \\\"x\\\"\\n(line 3)\"}}\n");
	/* it reads back as an error response to the same id */
	struct mcp_frame f;
	int code;
	const char *why;
	CHECK_INT(mcp_frame_parse(r, len - 1, &f, &code, &why), 0);
	CHECK_INT(f.kind, MCP_RESPONSE);
	CHECK(f.is_error);
	CHECK_STR(f.id_key, "s:a\"b");
	CHECK_INT(json_integer_value(json_object_get(f.error, "code")), -32001);
	mcp_frame_clear(&f);
	free(r);
	json_decref(id);

	/* invalid UTF-8 in a message becomes U+FFFD, the reply stays valid */
	id = json_integer(9);
	r = mcp_error_reply(id, MCP_ERR_CATALOG, "bad \xff\xc0\xaf end", &len);
	CHECK_STR(r, "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":-32003,"
		     "\"message\":\"bad \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd end\"}}\n");
	CHECK(mcp_utf8_valid(r, len, NULL));
	free(r);
	json_decref(id);
}

static void
test_dump(void)
{
	json_t *o = json_pack("{s:s, s:i, s:{s:[i,s]}}", "jsonrpc", "2.0", "id", 4, "result", "z",
			      1, "é");
	size_t len = 0;
	char *d = mcp_frame_dump(o, &len);
	CHECK_STR(d, "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"z\":[1,\"é\"]}}\n");
	CHECK_INT(len, strlen(d));
	free(d);
	json_decref(o);
}

int
main(void)
{
	RUN(test_request);
	RUN(test_id_keys_distinguish_types);
	RUN(test_notification);
	RUN(test_response);
	RUN(test_invalid_json);
	RUN(test_batch_refused);
	RUN(test_version);
	RUN(test_invalid_utf8);
	RUN(test_utf8_offsets);
	RUN(test_duplicate_keys);
	RUN(test_request_ids);
	RUN(test_method_and_params);
	RUN(test_call_names);
	RUN(test_idless_calls);
	RUN(test_null_and_odd_ids);
	RUN(test_case_variants);
	RUN(test_load_and_classify_batch);
	RUN(test_generated_readers);
	RUN(test_error_reply);
	RUN(test_dump);
	return tap_done();
}
