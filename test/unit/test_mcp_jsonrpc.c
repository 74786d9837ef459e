/*
 * test_mcp_jsonrpc.c — box-mcpd/jsonrpc.c: one MCP stdio frame parsed and
 * classified (every MCP.md robustness case at the parsing level: invalid
 * JSON, batches, versions, invalid UTF-8 incl. overlongs and surrogates,
 * duplicate keys, ids), what mcp:call names, and the replies box-mcpd
 * writes itself.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
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

	/* params may be an array (JSON-RPC by-position) */
	CHECK_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":[1]}", &f,
			&code, &why),
		  0);
	CHECK(json_is_array(f.params));
	mcp_frame_clear(&f);

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
	CHECK_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"é€\xf0\x9f\x98\x80\\ud83d\\ude00\"}",
			&f, &code, &why),
		  0);
	CHECK_STR(f.method, "é€😀😀");
	mcp_frame_clear(&f);
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
		"params must be an object or an array", "n:1");
	REFUSED("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":null}", MCP_ERR_INVALID,
		"params must be an object or an array", "n:1");
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

	/* not strings, empty, or params an array: nothing named */
	CHECK_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
			"{\"name\":5,\"uri\":[]}}",
			&f, &code, &why),
		  0);
	CHECK(mcp_frame_tool(&f) == NULL);
	CHECK(mcp_frame_uri(&f) == NULL);
	mcp_frame_clear(&f);
	CHECK_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
			"{\"name\":\"\"}}",
			&f, &code, &why),
		  0);
	CHECK(mcp_frame_tool(&f) == NULL);
	mcp_frame_clear(&f);
	CHECK_INT(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":[\"x\"]}",
			&f, &code, &why),
		  0);
	CHECK(mcp_frame_tool(&f) == NULL);
	mcp_frame_clear(&f);

	/* a name over MCP_NAME_MAX is not named */
	char line[700], name[258];
	memset(name, 'n', 257);
	name[257] = 0;
	snprintf(line, sizeof(line),
		 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\"}}",
		 name);
	CHECK_INT(parse(line, &f, &code, &why), 0);
	CHECK(mcp_frame_tool(&f) == NULL);
	mcp_frame_clear(&f);
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
	RUN(test_error_reply);
	RUN(test_dump);
	return tap_done();
}
