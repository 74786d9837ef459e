/*
 * jsonrpc.h — one MCP stdio frame (a line of newline-delimited JSON-RPC 2.0):
 * parse and classify it, and build the frames box-mcpd writes itself
 * (error replies). Pure: no I/O, no logging, no clock; the caller gives the
 * bytes of one line (without its '\n') and gets a verdict.
 *
 * Trusts: nothing. The line comes from the harness or from a server, both
 * untrusted: it is checked as UTF-8 (overlongs, surrogates, > U+10FFFF and
 * NUL refused) before jansson sees it, duplicate object keys are refused (a
 * broker and a server must never read two different values out of one frame),
 * and every field the broker decides on is type-checked and capped here.
 * Callers bound the line's length (max_frame) before calling.
 */
#ifndef BOX_MCPD_JSONRPC_H
#define BOX_MCPD_JSONRPC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* JSON-RPC 2.0 and MCP error codes (POLICY.md §5, MCP.md). */
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

enum mcp_kind {
	MCP_REQUEST,      /* method + id: needs a reply */
	MCP_NOTIFICATION, /* method, no id */
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
	 * then id is the json null and id_key "null". NULL for notifications.
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
	const char *method;  /* requests and notifications: NUL-free UTF-8, <= MCP_METHOD_MAX */
	json_t *params;      /* object or array, NULL when absent */
	json_t *result;      /* responses: the result, NULL for an error reply */
	json_t *error;       /* responses: the error object (integer code, string message) */
	bool is_error;       /* a response carrying `error` */
};

/*
 * Parse one frame: LINE holds LEN bytes (no '\n'; a trailing '\r' is
 * tolerated; an empty line is invalid JSON). Returns 0 and fills F, or a negative errno (-EINVAL: refused,
 * -ENOMEM) with *RPC_CODE the JSON-RPC error to answer (MCP_ERR_PARSE or
 * MCP_ERR_INVALID; 0 for -ENOMEM) and *WHY a static message naming what is
 * wrong ("invalid UTF-8", "batches are not supported", "jsonrpc must be
 * \"2.0\"", "id must be a string or an integer", ...). F->id is set when the
 * frame's id could be read even though the frame was refused (reply to it).
 * F is always initialised; call mcp_frame_clear in every case.
 *
 * Rules: a JSON object (an array is a batch: -32600); "jsonrpc": "2.0";
 * "method" a string → request (with "id") or notification (without);
 * no "method" → a response: "id" plus exactly one of "result" / "error"
 * ("error" an object with an integer "code" and a string "message").
 * A request's id is a string (<= MCP_ID_STRING_MAX bytes) or an integer,
 * never null, a real or a boolean; "params", when present, an object or an
 * array. Other members are ignored (and carried as they are).
 */
int mcp_frame_parse(const char *line, size_t len, struct mcp_frame *f, int *rpc_code,
		    const char **why);
void mcp_frame_clear(struct mcp_frame *f);

/*
 * What mcp:call names (POLICY.md §2), NULL when absent: tools/call's
 * params.name, prompts/get's params.name, and params.uri of any method —
 * each only when it is a string within its cap (MCP_NAME_MAX, MCP_URI_MAX).
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
 * UTF-8 check of S[0..LEN): true when valid (no overlong form, no surrogate,
 * nothing above U+10FFFF, no NUL). When invalid and BAD is not NULL, *BAD is
 * the offset of the first byte of the offending sequence.
 */
bool mcp_utf8_valid(const char *s, size_t len, size_t *bad);

#endif
