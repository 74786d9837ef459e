/* SPDX-License-Identifier: Apache-2.0 */
/*
 * toolschema.h — an MCP server's tool catalog as box-mcpd sees it: the tools
 * of a tools/list result (pages added up), each with its canonical
 * definition (what pins.c compares) and its per-tool policy action's input
 * schema (docs/box-policy.5.md typing → PolicyTool, sent as PolicyToolSchema); and a
 * tools/call's arguments typed against that schema (→ PolicyField list, the
 * DecideRequest's input). Pure: no I/O, no logging.
 *
 * Trusts: nothing. Tool definitions and arguments come from the server and
 * the harness. Everything is capped (tools, fields, nesting, sizes: below and
 * proto/policy_validate.h); what cannot be typed is left out, never guessed;
 * an argument keeps its JSON type whatever the schema says ("200" for a Long
 * field stays a String) so that policyd's schema check refuses a type
 * confusion instead of the broker coercing it.
 *
 * Typing (docs/box-mcpd.8.md): integer → Long; number → String (the value's decimal
 * text); string → String; boolean → Bool; array with typed `items` →
 * Set<T>; object with `properties` → Record "{a: T, b?: T}" (optional = not
 * in its `required`); anything else (no type, a type list, null, $ref...) or
 * a property whose name is not [A-Za-z_][A-Za-z0-9_]* (<= 128 bytes) is left
 * out, and so is its argument.
 */
#ifndef BOX_MCPD_TOOLSCHEMA_H
#define BOX_MCPD_TOOLSCHEMA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "policy.pb-c.h"

#define MCP_TOOLS_MAX 4096            /* tools of one catalog (all pages) */
#define MCP_TOOL_FIELDS_MAX 256       /* typed fields of one tool / one record */
#define MCP_TOOL_NAME_MAX 256         /* bytes of a tool name */
#define MCP_TOOL_DEF_MAX (64u << 10)  /* canonical definition: larger is not pinned */
#define MCP_TYPE_DEPTH_MAX 8          /* nested Set/Record levels (BOX_POLICY_DEPTH_MAX) */
#define MCP_TYPE_TEXT_MAX 4096        /* bytes of one field's type expression */

struct mcp_tool {
	/*
	 * As listed (UTF-8, 1..MCP_TOOL_NAME_MAX, no quote, backslash or
	 * control character), also for a duplicate or too big entry; NULL when
	 * the entry has no such name (refused).
	 */
	char *name;
	/*
	 * The canonical definition: {"description","inputSchema","name"} (the
	 * members present) dumped with JSON_SORT_KEYS|JSON_COMPACT; NULL when
	 * refused or too_big. canon_len excludes the NUL.
	 */
	char *canon;
	size_t canon_len;
	bool too_big;           /* canonical definition > MCP_TOOL_DEF_MAX: not pinned, refused */
	/*
	 * Non-NULL: why this entry cannot be used (static text: "not an object",
	 * "no string name", "name too long", "duplicate name", "definition over
	 * 64 KiB"); the broker hides it and refuses its calls -32003.
	 */
	const char *refused;
	json_t *input_schema;   /* its inputSchema (own reference), or NULL */
	/* Its policy action's input (in mcp_catalog_policy_tools unless refused). */
	Box__PolicyTool ptool;
};

struct mcp_catalog;

int mcp_catalog_new(struct mcp_catalog **ret);
void mcp_catalog_free(struct mcp_catalog *c);
/* Forget every tool: a tools/list request without params.cursor starts a new catalog. */
void mcp_catalog_clear(struct mcp_catalog *c);

/*
 * Add the tools of one tools/list RESULT object ({"tools":[...], ...}).
 * One entry per element of "tools", in order: entry *FIRST + k is element k
 * (refused entries included, so the caller can filter the same array).
 * Returns 0, or -EINVAL (RESULT is not an object with a "tools" array; *WHY
 * says so) or -E2BIG (the catalog would exceed MCP_TOOLS_MAX; nothing added)
 * or -ENOMEM. A tool name already in the catalog is refused "duplicate name".
 */
int mcp_catalog_add_page(struct mcp_catalog *c, const json_t *result, size_t *first,
			 size_t *count, const char **why);

/*
 * Entries in list order; a pointer returned is valid until the catalog
 * changes (add_page, clear, free): keep names, not pointers, across pages.
 */
size_t mcp_catalog_count(const struct mcp_catalog *c);
const struct mcp_tool *mcp_catalog_tool(const struct mcp_catalog *c, size_t i); /* NULL: i >= count */
/* The usable (not refused) tool named NAME, or NULL. */
const struct mcp_tool *mcp_catalog_find(const struct mcp_catalog *c, const char *name);

/*
 * The PolicyTool list for PolicyToolSchema.tools: every tool that is not
 * refused, in catalog order. *TOOLS is a malloc'd array of pointers into the
 * catalog (free() it; the pointees live until the catalog changes).
 * Returns 0 or -ENOMEM.
 */
int mcp_catalog_policy_tools(const struct mcp_catalog *c, Box__PolicyTool ***tools, size_t *n);

/*
 * A tools/call's input: ARGUMENTS (params.arguments: an object, or NULL when
 * absent) typed by TOOL's schema. Only the schema's fields are passed; an
 * argument keeps its JSON type (string → str, integer → integer, real →
 * its decimal text as str, boolean → boolean, array → set, object →
 * record); a number-typed field gets any JSON number as its decimal text
 * (integers "%lld", integral reals within 2^53 the same, others the
 * shortest text that reads back to the same double). JSON null counts as
 * absent (an optional field is then missing; a missing required field is
 * policyd's to deny). An object for a Record field passes only the record's
 * typed properties.
 */
struct mcp_args {
	Box__PolicyField **fields; /* DecideRequest.input */
	size_t n_fields;
	void *pool;                /* private: the allocations */
};

/*
 * Returns 0, or -EINVAL with ERR (ERRLEN bytes) naming the argument and what
 * is wrong ("argument opt.tags[2]: ..."): arguments not an object, a value
 * nested deeper than MCP_TYPE_DEPTH_MAX, an array over 4096 elements, a
 * string over 256 KiB, null inside an array, the type confusions no
 * PolicyValue can carry (anything but a number for a number field, which
 * policyd sees as a String; a real for a string field), and an argument
 * spelled like a typed property but for letter case (a server decoding keys
 * case-insensitively reads it as that property, which would not be
 * decided), or -ENOMEM. The
 * broker answers -EINVAL with -32602 and forwards nothing. mcp_args_free in
 * every case.
 */
int mcp_args_build(const struct mcp_tool *tool, const json_t *arguments, struct mcp_args *out,
		   char *err, size_t errlen);
void mcp_args_free(struct mcp_args *a);

/* "Long", "String", "Set<{a: Long, b?: String}>"... for SCHEMA, or NULL (left out). */
char *mcp_schema_type(const json_t *schema); /* malloc'd; for tests and messages */

#endif
