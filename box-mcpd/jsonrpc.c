/*
 * jsonrpc.c — parse and classify one MCP stdio frame, build error replies
 * (jsonrpc.h). Pure: no I/O, no logging.
 *
 * Trusts: nothing. Each line comes from the harness or from a server. The
 * bytes are checked as strict UTF-8 here before jansson parses them (so the
 * error names the offending byte), objects with a duplicate key are refused
 * (the broker decides on the value a server would read), NUL is refused
 * (every string the broker hands on is a C string), and each field the
 * broker decides on is type-checked and capped.
 */
#include "box-mcpd/jsonrpc.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at S[0..LEN), or 0 if none starts there. */
static size_t
utf8_seq(const unsigned char *s, size_t len)
{
	unsigned c = s[0];
	size_t need;
	uint32_t cp, min;

	if (c == 0)
		return 0;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
		cp = c & 0x1f;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		cp = c & 0x0f;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		cp = c & 0x07;
		min = 0x10000;
	} else {
		return 0; /* continuation byte, 0xc0/0xc1 (overlong), 0xf5+ */
	}
	if (len < need + 1)
		return 0;
	for (size_t k = 1; k <= need; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[k] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return need + 1;
}

bool
mcp_utf8_valid(const char *s, size_t len, size_t *bad)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		if (p[i] && p[i] < 0x80) {
			i++;
			continue;
		}
		size_t n = utf8_seq(p + i, len - i);
		if (n == 0) {
			if (bad)
				*bad = i;
			return false;
		}
		i += n;
	}
	return true;
}

/* The id's canonical key, or false when ID is not a valid request id. */
static bool
id_key(const json_t *id, char key[MCP_ID_KEY_MAX])
{
	if (json_is_integer(id)) {
		snprintf(key, MCP_ID_KEY_MAX, "n:%lld", (long long)json_integer_value(id));
		return true;
	}
	if (json_is_string(id) && json_string_length(id) <= MCP_ID_STRING_MAX) {
		snprintf(key, MCP_ID_KEY_MAX, "s:%s", json_string_value(id));
		return true;
	}
	return false;
}

void
mcp_frame_clear(struct mcp_frame *f)
{
	if (f->root)
		json_decref(f->root);
	memset(f, 0, sizeof(*f));
}

static int
refuse(int code, const char *msg, int *rpc_code, const char **why)
{
	*rpc_code = code;
	*why = msg;
	return -EINVAL;
}

int
mcp_frame_parse(const char *line, size_t len, struct mcp_frame *f, int *rpc_code,
		const char **why)
{
	json_error_t jerr;
	size_t bad;

	memset(f, 0, sizeof(*f));
	*rpc_code = 0;
	*why = NULL;
	if (len && line[len - 1] == '\r')
		len--;
	if (!mcp_utf8_valid(line, len, &bad))
		return refuse(MCP_ERR_PARSE, bad < len && line[bad] == 0 ?
				  "invalid JSON: NUL byte" : "invalid UTF-8", rpc_code, why);
	f->root = json_loadb(line, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
	if (!f->root) {
		switch (json_error_code(&jerr)) {
		case json_error_out_of_memory:
			*why = "out of memory";
			return -ENOMEM;
		case json_error_duplicate_key:
			return refuse(MCP_ERR_PARSE, "invalid JSON: duplicate object key", rpc_code,
				      why);
		case json_error_null_character:
			return refuse(MCP_ERR_PARSE, "invalid JSON: \\u0000 is not supported",
				      rpc_code, why);
		case json_error_numeric_overflow:
			return refuse(MCP_ERR_PARSE, "invalid JSON: number out of range", rpc_code,
				      why);
		case json_error_invalid_utf8:
			return refuse(MCP_ERR_PARSE, "invalid UTF-8", rpc_code, why);
		default:
			return refuse(MCP_ERR_PARSE, "invalid JSON", rpc_code, why);
		}
	}
	if (json_is_array(f->root))
		return refuse(MCP_ERR_INVALID, "batches are not supported", rpc_code, why);
	if (!json_is_object(f->root))
		return refuse(MCP_ERR_INVALID, "a frame must be a JSON object", rpc_code, why);

	json_t *id = json_object_get(f->root, "id");
	json_t *method = json_object_get(f->root, "method");
	json_t *version = json_object_get(f->root, "jsonrpc");
	/* Remember a readable id first: even a refused request is answered to it. */
	if (id && id_key(id, f->id_key))
		f->id = id;
	else
		f->id_key[0] = 0;
	if (!json_is_string(version) || strcmp(json_string_value(version), "2.0") != 0)
		return refuse(MCP_ERR_INVALID, "jsonrpc must be \"2.0\"", rpc_code, why);

	if (method) {
		if (!json_is_string(method))
			return refuse(MCP_ERR_INVALID, "method must be a string", rpc_code, why);
		if (json_string_length(method) == 0 ||
		    json_string_length(method) > MCP_METHOD_MAX)
			return refuse(MCP_ERR_INVALID, "method must have 1 to 256 bytes", rpc_code,
				      why);
		if (json_object_get(f->root, "result") || json_object_get(f->root, "error"))
			return refuse(MCP_ERR_INVALID, "a request cannot carry result or error",
				      rpc_code, why);
		json_t *params = json_object_get(f->root, "params");
		if (params && !json_is_object(params) && !json_is_array(params))
			return refuse(MCP_ERR_INVALID, "params must be an object or an array",
				      rpc_code, why);
		f->method = json_string_value(method);
		f->params = params;
		if (!id) {
			f->kind = MCP_NOTIFICATION;
			return 0;
		}
		if (!f->id)
			return refuse(MCP_ERR_INVALID,
				      json_is_string(id) ? "id longer than 256 bytes" :
							   "id must be a string or an integer",
				      rpc_code, why);
		f->kind = MCP_REQUEST;
		return 0;
	}

	/* A response. */
	f->kind = MCP_RESPONSE;
	json_t *result = json_object_get(f->root, "result");
	json_t *error = json_object_get(f->root, "error");
	if (!id)
		return refuse(MCP_ERR_INVALID, "a frame needs a method or an id", rpc_code, why);
	if (!result == !error)
		return refuse(MCP_ERR_INVALID, "a response needs exactly one of result and error",
			      rpc_code, why);
	if (error) {
		if (!json_is_object(error) || !json_is_integer(json_object_get(error, "code")) ||
		    !json_is_string(json_object_get(error, "message")))
			return refuse(MCP_ERR_INVALID,
				      "error must be an object with an integer code and a string message",
				      rpc_code, why);
		f->error = error;
		f->is_error = true;
	} else {
		f->result = result;
	}
	if (json_is_null(id) && error) {
		f->id = id;
		snprintf(f->id_key, sizeof(f->id_key), "null");
		return 0;
	}
	if (!f->id)
		return refuse(MCP_ERR_INVALID,
			      json_is_string(id) ? "id longer than 256 bytes" :
						   "id must be a string or an integer",
			      rpc_code, why);
	return 0;
}

/* params.KEY when it is a non-empty string of at most MAX bytes. */
static const char *
param_string(const struct mcp_frame *f, const char *key, size_t max)
{
	if (!json_is_object(f->params))
		return NULL;
	json_t *v = json_object_get(f->params, key);
	if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > max)
		return NULL;
	return json_string_value(v);
}

const char *
mcp_frame_tool(const struct mcp_frame *f)
{
	if (!f->method || strcmp(f->method, "tools/call") != 0)
		return NULL;
	return param_string(f, "name", MCP_NAME_MAX);
}

const char *
mcp_frame_prompt(const struct mcp_frame *f)
{
	if (!f->method || strcmp(f->method, "prompts/get") != 0)
		return NULL;
	return param_string(f, "name", MCP_NAME_MAX);
}

const char *
mcp_frame_uri(const struct mcp_frame *f)
{
	if (!f->method)
		return NULL;
	return param_string(f, "uri", MCP_URI_MAX);
}

char *
mcp_frame_dump(const json_t *root, size_t *len)
{
	char *text = json_dumps(root, JSON_COMPACT | JSON_ENCODE_ANY);
	if (!text)
		return NULL;
	size_t n = strlen(text);
	char *out = realloc(text, n + 2);
	if (!out) {
		free(text);
		return NULL;
	}
	out[n] = '\n';
	out[n + 1] = 0;
	*len = n + 1;
	return out;
}

/* MESSAGE with every invalid UTF-8 sequence replaced by U+FFFD (malloc'd). */
static char *
utf8_sanitize(const char *message)
{
	size_t len = strlen(message);
	char *out = malloc(len * 3 + 1);
	size_t o = 0;
	const unsigned char *p = (const unsigned char *)message;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq(p + i, len - i);
		if (n == 0) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		} else {
			memcpy(out + o, p + i, n);
			o += n;
			i += n;
		}
	}
	out[o] = 0;
	return out;
}

char *
mcp_error_reply(const json_t *id, int code, const char *message, size_t *len)
{
	char *clean = utf8_sanitize(message ? message : "");
	json_t *err = NULL, *root = NULL;
	char *out = NULL;

	if (!clean)
		return NULL;
	err = json_object();
	root = json_object();
	if (!err || !root || json_object_set_new(err, "code", json_integer(code)) < 0 ||
	    json_object_set_new(err, "message", json_string(clean)) < 0 ||
	    json_object_set_new(root, "jsonrpc", json_string("2.0")) < 0 ||
	    json_object_set_new(root, "id", id ? json_deep_copy(id) : json_null()) < 0 ||
	    json_object_set(root, "error", err) < 0)
		goto done;
	out = mcp_frame_dump(root, len);
done:
	json_decref(err);
	json_decref(root);
	free(clean);
	return out;
}
