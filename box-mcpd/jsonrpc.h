/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jsonrpc.h — one MCP stdio frame (a line of newline-delimited JSON-RPC 2.0):
 * parse and classify it, and build the frames box-mcpd writes itself
 * (error replies). Pure: no I/O, no logging, no clock; the caller gives the
 * bytes of one line (without its '\n') and gets a verdict.
 *
 * box-gateway classifies a remote server's JSON-RPC messages with the same
 * functions (mcp_json_load, mcp_frame_classify): one rule for what is a
 * request, a notification and a reply, wherever box meets MCP.
 *
 * Trusts: nothing. The line comes from the harness or from a server, both
 * untrusted: it is checked as UTF-8 (overlongs, surrogates, > U+10FFFF and
 * NUL refused) before jansson sees it, duplicate object keys are refused (a
 * broker and a server must never read two different values out of one frame)
 * — keys that differ only in letter case too, since some servers' JSON
 * decoders match keys case-insensitively (Go's encoding/json) — and every
 * field the broker decides on is type-checked and capped here: a frame whose
 * meaning a server could read differently is refused, never passed with a
 * field left out. Callers bound the line's length (max_frame) before calling.
 */
#ifndef BOX_MCPD_JSONRPC_H
#define BOX_MCPD_JSONRPC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* JSON-RPC 2.0 and MCP error codes (docs/box-policy.5.md, docs/box-mcpd.8.md). */
#define MCP_ERR_PARSE -32700     /* invalid JSON / invalid UTF-8: reply id null */
#define MCP_ERR_INVALID -32600   /* not a valid JSON-RPC 2.0 object (batch, version, id...) */
#define MCP_ERR_NO_METHOD -32601
#define MCP_ERR_PARAMS -32602
#define MCP_ERR_POLICY -32001    /* denied by the policy, or timed out */
#define MCP_ERR_SERVER -32002    /* the server's namespace failed (PolicyToolSchemaReply !ok) */
#define MCP_ERR_CATALOG -32003   /* tool not in the last tools/list, or refused by its pin */

#define MCP_ID_STRING_MAX 256    /* bytes of a string id (longer: -32600) */
#define MCP_ID_KEY_MAX (MCP_ID_STRING_MAX + 3) /* "s:" + id + NUL */
#define MCP_METHOD_MAX 256       /* bytes of a method name (longer: -32600) */
#define MCP_NAME_MAX 256         /* bytes of params.name for tools/call, prompts/get */
#define MCP_URI_MAX 4096         /* bytes of params.uri */

/*
 * JSON-RPC 2.0 calls every frame with a method and no "id" member a
 * notification, but a server that dispatches on the method alone runs it as
 * the request it names. So only MCP's notifications — methods under
 * "notifications/" — are notifications here; any other method without an id
 * is an id-less call, decided as a request is and never answered (there is
 * no id to answer; a refusal can only be logged).
 */
enum mcp_kind {
	MCP_REQUEST,      /* method + id: needs a reply */
	MCP_NOTIFICATION, /* no id, a method under "notifications/": passes undecided */
	MCP_IDLESS_CALL,  /* no id, any other method: decided as a request, never answered */
	MCP_RESPONSE,     /* id + exactly one of result / error */
};

/*
 * A parsed frame. Everything but `root` is borrowed from `root`; release with
 * mcp_frame_clear (also after a failed parse: root may be set).
 */
struct mcp_frame {
	enum mcp_kind kind;
	json_t *root;        /* the whole object (owned) */
	/*
	 * The id: a JSON string or integer (requests, responses). A response's id
	 * may be JSON null (an error reply to a frame the peer could not read);
	 * then id is the json null and id_key "null". NULL for notifications and
	 * id-less calls.
	 * After a failed parse: the id when one could be read, else NULL (reply
	 * with id null).
	 */
	json_t *id;
	/*
	 * Canonical key of the id, to match replies to requests: "s:<string>"
	 * or "n:<integer as %lld>" (so "1" and 1 differ), "null", or "" when
	 * there is no id.
	 */
	char id_key[MCP_ID_KEY_MAX];
	const char *method;  /* requests, notifications, id-less calls: printable ASCII,
			      * no space, <= MCP_METHOD_MAX */
	json_t *params;      /* an object, NULL when absent */
	json_t *result;      /* responses: the result, NULL for an error reply */
	json_t *error;       /* responses: the error object (integer code, string message) */
	bool is_error;       /* a response carrying `error` */
};

/*
 * Load TEXT (LEN bytes) as the JSON of one message (or a batch): strict
 * UTF-8 without NUL, jansson without duplicate keys, then no object anywhere
 * with two keys equal but for letter case (ASCII, and U+017F / U+212A, which
 * Go folds to 's' / 'k'). Returns 0 and *ROOT (owned), or -EINVAL with
 * *RPC_CODE (MCP_ERR_PARSE, MCP_ERR_INVALID for case-duplicates) and *WHY,
 * or -ENOMEM.
 */
int mcp_json_load(const char *text, size_t len, json_t **root, int *rpc_code, const char **why);

/*
 * Classify one loaded message MSG (takes a reference of its own: F->root).
 * Returns 0 and fills F, or -EINVAL with *RPC_CODE (MCP_ERR_INVALID, or
 * MCP_ERR_PARAMS for a field the broker decides on that is present but
 * unusable) and *WHY a static message. F->id is set when the frame's id
 * could be read even though the frame was refused (reply to it). F is
 * always initialised; call mcp_frame_clear in every case.
 *
 * Rules (JSON-RPC 2.0 as MCP narrows it):
 *   - a JSON object with "jsonrpc": "2.0"; no top-level member spelled like
 *     jsonrpc, id, method, params, result or error but for letter case;
 *   - "method" a string of 1 to MCP_METHOD_MAX printable ASCII bytes without
 *     space, not one of MCP's methods (or "notifications/...") in another
 *     letter case;
 *     with "id" → a request: the id a string (<= MCP_ID_STRING_MAX bytes) or
 *       an integer — never null (JSON-RPC's discouraged null id: MCP forbids
 *       it, and servers read it as a request or as a notification), a real,
 *       a boolean, an object or an array;
 *     without "id" → a notification when the method starts with
 *       "notifications/" and names something after it, else an id-less call;
 *   - "params", when present, an object (MCP has no by-position params); in
 *     it no member spelled like name, uri, arguments or cursor but for case;
 *     for a request or an id-less call, params.name of tools/call and
 *     prompts/get, when present, a string of 1 to MCP_NAME_MAX bytes, and
 *     params.uri, when present, a string of 1 to MCP_URI_MAX bytes
 *     (-32602: decided without them, a call could name what the policy
 *     forbids);
 *   - no "method" → a response: "id" plus exactly one of "result" / "error"
 *     ("error" an object with an integer "code" and a string "message"); an
 *     error's id may be null.
 * Other members are ignored (and carried as they are).
 */
int mcp_frame_classify(json_t *msg, struct mcp_frame *f, int *rpc_code, const char **why);

/*
 * One stdio frame: LINE holds LEN bytes (no '\n'; a trailing '\r' is
 * tolerated; an empty line is invalid JSON): mcp_json_load, a batch (a JSON
 * array) refused (-32600 "batches are not supported"), then
 * mcp_frame_classify. Same results.
 */
int mcp_frame_parse(const char *line, size_t len, struct mcp_frame *f, int *rpc_code,
		    const char **why);
void mcp_frame_clear(struct mcp_frame *f);

/*
 * What mcp:call names (docs/box-policy.5.md), NULL when absent: tools/call's
 * params.name, prompts/get's params.name, and params.uri of any method —
 * each only when it is a string within its cap (MCP_NAME_MAX, MCP_URI_MAX;
 * mcp_frame_classify refused a request or id-less call where one is not).
 */
const char *mcp_frame_tool(const struct mcp_frame *f);
const char *mcp_frame_prompt(const struct mcp_frame *f);
const char *mcp_frame_uri(const struct mcp_frame *f);

/*
 * `{"jsonrpc":"2.0","id":ID,"error":{"code":CODE,"message":MESSAGE}}` + "\n",
 * compact; ID NULL → null. MESSAGE need not be valid UTF-8 (invalid bytes
 * become U+FFFD). Returns a malloc'd NUL-terminated buffer and its length
 * (with the newline) in *LEN, or NULL (out of memory).
 */
char *mcp_error_reply(const json_t *id, int code, const char *message, size_t *len);

/* ROOT dumped compact (keys in their order) + "\n"; malloc'd, or NULL. */
char *mcp_frame_dump(const json_t *root, size_t *len);

/*
 * KEY folded as a case-insensitive JSON decoder compares object keys: ASCII
 * capitals lowered, U+017F (long s) as 's', U+212A (Kelvin sign) as 'k' (the
 * only letters Unicode simple folding — Go's encoding/json — maps onto ASCII
 * ones). Malloc'd, or NULL (out of memory).
 */
char *mcp_key_fold(const char *key);

/*
 * UTF-8 check of S[0..LEN): true when valid (no overlong form, no surrogate,
 * nothing above U+10FFFF, no NUL). When invalid and BAD is not NULL, *BAD is
 * the offset of the first byte of the offending sequence.
 */
bool mcp_utf8_valid(const char *s, size_t len, size_t *bad);

#endif
