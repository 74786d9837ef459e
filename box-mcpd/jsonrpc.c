/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jsonrpc.c — parse and classify one MCP stdio frame, build error replies
 * (jsonrpc.h). Pure: no I/O, no logging.
 *
 * Trusts: nothing. Each line comes from the harness or from a server (or,
 * through box-gateway, a remote server's POST body or event). The bytes are
 * checked as strict UTF-8 here before jansson parses them (so the error names
 * the offending byte), objects with a duplicate key are refused — keys equal
 * but for letter case too (the broker decides on the value a server would
 * read, and some servers' decoders fold case) — NUL is refused (every string
 * the broker hands on is a C string), and each field the broker decides on
 * is type-checked and capped: present but unusable refuses the frame.
 */
#include "box-mcpd/jsonrpc.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* ---- keys equal but for letter case ------------------------------------------------ */

/* Whether KEY changes when folded: an ASCII capital or a non-ASCII byte. */
static bool
key_folds(const char *key)
{
	for (const unsigned char *p = (const unsigned char *)key; *p; p++)
		if ((*p >= 'A' && *p <= 'Z') || *p >= 0x80)
			return true;
	return false;
}

char *
mcp_key_fold(const char *key)
{
	size_t n = strlen(key);
	char *out = malloc(n + 1), *o = out;
	const unsigned char *p = (const unsigned char *)key;

	if (!out)
		return NULL;
	while (*p) {
		if (*p >= 'A' && *p <= 'Z') {
			*o++ = (char)(*p++ + ('a' - 'A'));
		} else if (p[0] == 0xc5 && p[1] == 0xbf) {
			*o++ = 's';
			p += 2;
		} else if (p[0] == 0xe2 && p[1] == 0x84 && p[2] == 0xaa) {
			*o++ = 'k';
			p += 3;
		} else {
			*o++ = (char)*p++;
		}
	}
	*o = 0;
	return out;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One object's keys folded and sorted: 1 when two are equal, 0, or -ENOMEM. */
static int
object_fold_dup(json_t *obj)
{
	size_t n = json_object_size(obj), i = 0;
	const char *key;
	json_t *v;
	int r = 0;
	char **keys = calloc(n, sizeof(*keys));

	if (!keys)
		return -ENOMEM;
	json_object_foreach (obj, key, v) {
		if (!(keys[i++] = mcp_key_fold(key))) {
			r = -ENOMEM;
			goto out;
		}
	}
	qsort(keys, n, sizeof(*keys), cmp_str);
	for (i = 1; i < n && r == 0; i++)
		if (strcmp(keys[i - 1], keys[i]) == 0)
			r = 1;
out:
	for (i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
	return r;
}

/*
 * 1 when an object anywhere in V has two keys equal but for case, 0, or
 * -ENOMEM. jansson already refused exact duplicates, so an object whose keys
 * all fold to themselves is skipped without allocating. The depth is
 * jansson's parse depth (JSON_PARSER_MAX_DEPTH).
 */
static int
fold_dups(json_t *v)
{
	const char *key;
	json_t *x;
	size_t i;
	int r;

	if (json_is_object(v)) {
		bool folds = false;
		json_object_foreach (v, key, x)
			folds = folds || key_folds(key);
		if (folds && json_object_size(v) > 1 && (r = object_fold_dup(v)) != 0)
			return r;
		json_object_foreach (v, key, x)
			if ((r = fold_dups(x)) != 0)
				return r;
	} else if (json_is_array(v)) {
		json_array_foreach (v, i, x)
			if ((r = fold_dups(x)) != 0)
				return r;
	}
	return 0;
}

/* A member of OBJ spelled like one of NAMES but for letter case: its name, or NULL. */
static const char *
case_variant(json_t *obj, const char *const *names, size_t n)
{
	const char *key;
	json_t *v;

	json_object_foreach (obj, key, v) {
		if (!key_folds(key))
			continue;
		char *folded = mcp_key_fold(key);
		for (size_t i = 0; folded && i < n; i++)
			if (strcmp(folded, names[i]) == 0) {
				free(folded);
				return key;
			}
		free(folded);
	}
	return NULL;
}

/* ---- methods ------------------------------------------------------------------------ */

/* MCP's methods (2025-06-18 and the tasks of the draft) other than its notifications. */
static const char *const mcp_methods[] = {
	"initialize",	     "ping",		"tools/list",
	"tools/call",	     "prompts/list",	"prompts/get",
	"resources/list",    "resources/read",	"resources/templates/list",
	"resources/subscribe", "resources/unsubscribe", "logging/setLevel",
	"completion/complete", "sampling/createMessage", "roots/list",
	"elicitation/create", "server/discover",	"subscriptions/listen",
	"tasks/get",	     "tasks/list",	"tasks/result",
	"tasks/cancel",
};

#define NOTIFICATIONS "notifications/"

/* NULL when METHOD is acceptable, else why not (static). */
static const char *
method_refusal(const char *method, size_t len)
{
	if (len == 0 || len > MCP_METHOD_MAX)
		return "method must have 1 to 256 bytes";
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)method[i] < 0x21 || (unsigned char)method[i] > 0x7e)
			return "method must be printable ASCII without spaces";
	if (strncasecmp(method, NOTIFICATIONS, strlen(NOTIFICATIONS)) == 0 &&
	    strncmp(method, NOTIFICATIONS, strlen(NOTIFICATIONS)) != 0)
		return "method differs from MCP's notifications/ only in letter case";
	for (size_t i = 0; i < sizeof(mcp_methods) / sizeof(mcp_methods[0]); i++)
		if (strcasecmp(method, mcp_methods[i]) == 0 && strcmp(method, mcp_methods[i]) != 0)
			return "method differs from one of MCP's only in letter case";
	return NULL;
}

/* ---- loading and classifying ---------------------------------------------------------- */

int
mcp_json_load(const char *text, size_t len, json_t **root, int *rpc_code, const char **why)
{
	json_error_t jerr;
	size_t bad;

	*root = NULL;
	*rpc_code = 0;
	*why = NULL;
	if (!mcp_utf8_valid(text, len, &bad))
		return refuse(MCP_ERR_PARSE, bad < len && text[bad] == 0 ?
				  "invalid JSON: NUL byte" : "invalid UTF-8", rpc_code, why);
	json_t *j = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
	if (!j) {
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
	int r = fold_dups(j);
	if (r != 0) {
		json_decref(j);
		if (r < 0) {
			*why = "out of memory";
			return r;
		}
		return refuse(MCP_ERR_INVALID,
			      "ambiguous JSON: two object keys differ only in letter case", rpc_code,
			      why);
	}
	*root = j;
	return 0;
}

/* params.KEY of a decided call: absent, or a string of 1 to MAX bytes. */
static bool
param_usable(const json_t *params, const char *key, size_t max)
{
	json_t *v = json_is_object(params) ? json_object_get(params, key) : NULL;
	return !v || (json_is_string(v) && json_string_length(v) >= 1 &&
		      json_string_length(v) <= max);
}

static const char *const jsonrpc_members[] = { "jsonrpc", "id", "method", "params", "result",
					       "error" };
static const char *const param_members[] = { "name", "uri", "arguments", "cursor" };

int
mcp_frame_classify(json_t *msg, struct mcp_frame *f, int *rpc_code, const char **why)
{
	memset(f, 0, sizeof(*f));
	*rpc_code = 0;
	*why = NULL;
	if (!json_is_object(msg))
		return refuse(MCP_ERR_INVALID,
			      json_is_array(msg) ? "batches are not supported" :
						   "a frame must be a JSON object",
			      rpc_code, why);
	f->root = json_incref(msg);

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
	if (case_variant(f->root, jsonrpc_members,
			 sizeof(jsonrpc_members) / sizeof(jsonrpc_members[0])))
		return refuse(MCP_ERR_INVALID,
			      "a member is spelled like a JSON-RPC member but for letter case",
			      rpc_code, why);

	if (method) {
		if (!json_is_string(method))
			return refuse(MCP_ERR_INVALID, "method must be a string", rpc_code, why);
		const char *no = method_refusal(json_string_value(method),
						json_string_length(method));
		if (no)
			return refuse(MCP_ERR_INVALID, no, rpc_code, why);
		if (json_object_get(f->root, "result") || json_object_get(f->root, "error"))
			return refuse(MCP_ERR_INVALID, "a request cannot carry result or error",
				      rpc_code, why);
		if (id && !f->id)
			return refuse(MCP_ERR_INVALID,
				      json_is_string(id) ? "id longer than 256 bytes" :
				      json_is_null(id)	 ? "id must be a string or an integer "
							   "(null is neither a request nor a "
							   "notification)" :
							   "id must be a string or an integer",
				      rpc_code, why);
		json_t *params = json_object_get(f->root, "params");
		if (params && !json_is_object(params))
			return refuse(MCP_ERR_INVALID, "params must be an object", rpc_code, why);
		f->method = json_string_value(method);
		f->params = params;
		size_t nl = strlen(NOTIFICATIONS);
		if (!id && strncmp(f->method, NOTIFICATIONS, nl) == 0 && f->method[nl]) {
			f->kind = MCP_NOTIFICATION;
			return 0;
		}
		f->kind = id ? MCP_REQUEST : MCP_IDLESS_CALL;
		if (params && case_variant(params, param_members,
					   sizeof(param_members) / sizeof(param_members[0])))
			return refuse(MCP_ERR_PARAMS,
				      "a member of params is spelled like name, uri, arguments or "
				      "cursor but for letter case",
				      rpc_code, why);
		bool named = strcmp(f->method, "tools/call") == 0 ||
			     strcmp(f->method, "prompts/get") == 0;
		if (named && !param_usable(params, "name", MCP_NAME_MAX))
			return refuse(MCP_ERR_PARAMS, "params.name must be a string of 1 to 256 bytes",
				      rpc_code, why);
		if (!param_usable(params, "uri", MCP_URI_MAX))
			return refuse(MCP_ERR_PARAMS, "params.uri must be a string of 1 to 4096 bytes",
				      rpc_code, why);
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

int
mcp_frame_parse(const char *line, size_t len, struct mcp_frame *f, int *rpc_code,
		const char **why)
{
	json_t *root;

	memset(f, 0, sizeof(*f));
	if (len && line[len - 1] == '\r')
		len--;
	int r = mcp_json_load(line, len, &root, rpc_code, why);
	if (r < 0)
		return r;
	r = mcp_frame_classify(root, f, rpc_code, why);
	json_decref(root);
	return r;
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
