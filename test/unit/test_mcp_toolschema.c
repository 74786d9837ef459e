/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_mcp_toolschema.c — box-mcpd/toolschema.c: tools/list results into a
 * catalog (pages, refused entries, caps, canonical definitions), docs/box-policy.5.md
 * §2 typing of every schema form (each type expression is then registered
 * with libboxpolicy's bp_schema_add_field, as policyd will), and tools/call
 * arguments into PolicyFields (JSON types preserved: type confusion reaches
 * policyd; every input passes proto's box_validate_policy_fields).
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "box-mcpd/toolschema.h"
#include "boxpolicy.h"
#include "proto/policy_validate.h"
#include "tap.h"

static json_t *
J(const char *text)
{
	json_error_t e;
	json_t *v = json_loads(text, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &e);
	if (!v)
		printf("#   bad test JSON: %s: %s\n", e.text, text);
	return v;
}

/* A catalog holding the tools of RESULT (JSON text). */
static struct mcp_catalog *
catalog_of(const char *result)
{
	struct mcp_catalog *c;
	size_t first, count;
	const char *why;
	json_t *r = J(result);
	if (mcp_catalog_new(&c) < 0)
		return NULL;
	if (mcp_catalog_add_page(c, r, &first, &count, &why) < 0)
		printf("#   add_page: %s\n", why);
	json_decref(r);
	return c;
}

static const Box__PolicyToolField *
field(const struct mcp_tool *t, const char *name)
{
	for (size_t i = 0; t && i < t->ptool.n_fields; i++)
		if (strcmp(t->ptool.fields[i]->name, name) == 0)
			return t->ptool.fields[i];
	return NULL;
}

#define CHECK_FIELD(tool, name, want_type, want_optional)                              \
	do {                                                                           \
		const Box__PolicyToolField *f_ = field(tool, name);                    \
		CHECK(f_ != NULL);                                                     \
		if (f_) {                                                              \
			CHECK_STR(f_->type, want_type);                                \
			CHECK_INT(f_->optional, want_optional);                        \
		}                                                                      \
	} while (0)

/* Every field of every usable tool registers with libboxpolicy. */
static void
check_registers(const struct mcp_catalog *c)
{
	struct bp_schema *s;
	Box__PolicyTool **tools;
	size_t n;
	CHECK_INT(bp_schema_new(&s), 0);
	CHECK_INT(bp_schema_add_namespace(s, "srv"), 0);
	CHECK_INT(mcp_catalog_policy_tools(c, &tools, &n), 0);
	for (size_t i = 0; i < n; i++) {
		CHECK_INT(bp_schema_add_action(s, "srv", tools[i]->name), 0);
		for (size_t k = 0; k < tools[i]->n_fields; k++) {
			int r = bp_schema_add_field(s, "srv", tools[i]->name,
						    tools[i]->fields[k]->name,
						    tools[i]->fields[k]->type,
						    tools[i]->fields[k]->optional);
			CHECK_INT(r, 0);
			if (r)
				printf("#   %s: %s\n", tools[i]->fields[k]->name,
				       tools[i]->fields[k]->type);
		}
	}
	free(tools);
	bp_schema_free(s);
}

static const char forms[] =
	"{\"tools\":[{\"name\":\"forms\",\"inputSchema\":{\"type\":\"object\",\"properties\":{"
	"\"a\":{\"type\":\"integer\"},"
	"\"b\":{\"type\":\"number\"},"
	"\"c\":{\"type\":\"string\",\"description\":\"text\"},"
	"\"d\":{\"type\":\"boolean\"},"
	"\"e\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
	"\"f\":{\"type\":\"array\",\"items\":{\"type\":\"integer\"}},"
	"\"g\":{\"type\":\"array\"},"
	"\"h\":{\"type\":\"array\",\"items\":{}},"
	"\"i\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"integer\"},"
	"\"y\":{\"type\":\"string\"},\"z\":{\"type\":[\"string\",\"null\"]}},\"required\":[\"x\"]},"
	"\"j\":{\"type\":\"object\"},"
	"\"k\":{\"type\":[\"string\",\"null\"]},"
	"\"l\":{\"type\":\"null\"},"
	"\"m\":{\"description\":\"no type\"},"
	"\"bad-name\":{\"type\":\"string\"},"
	"\"1x\":{\"type\":\"string\"},"
	"\"\":{\"type\":\"string\"},"
	"\"_ok9\":{\"type\":\"string\"},"
	"\"n\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
	"\"p\":{\"type\":\"array\",\"items\":{\"type\":\"number\"}}}}},"
	"\"o\":{\"type\":\"object\",\"properties\":{}},"
	"\"q\":{\"$ref\":\"#/defs/x\"},"
	"\"r\":{\"type\":\"array\",\"items\":[{\"type\":\"string\"}]}"
	"},\"required\":[\"a\",\"c\",\"i\",\"k\"]}}]}";

static void
test_typing_forms(void)
{
	struct mcp_catalog *c = catalog_of(forms);
	const struct mcp_tool *t = mcp_catalog_find(c, "forms");
	CHECK(t != NULL);
	CHECK(t && t->refused == NULL);
	CHECK_FIELD(t, "a", "Long", false);
	CHECK_FIELD(t, "b", "String", true);
	CHECK_FIELD(t, "c", "String", false);
	CHECK_FIELD(t, "d", "Bool", true);
	CHECK_FIELD(t, "e", "Set<String>", true);
	CHECK_FIELD(t, "f", "Set<Long>", true);
	CHECK_FIELD(t, "i", "{x: Long, y?: String}", false);
	CHECK_FIELD(t, "_ok9", "String", true);
	CHECK_FIELD(t, "n", "Set<{p?: Set<String>}>", true);
	CHECK_FIELD(t, "o", "{}", true);
	/* left out: no items, untyped items, object without properties, type
	 * lists, null, no type, bad names, $ref, tuple items */
	const char *out[] = { "g", "h", "j", "k", "l", "m", "bad-name", "1x", "", "q", "r" };
	for (size_t i = 0; i < sizeof(out) / sizeof(*out); i++)
		CHECK(field(t, out[i]) == NULL);
	CHECK_INT(t ? t->ptool.n_fields : 0, 10);
	/* schema order is kept */
	CHECK_STR(t ? t->ptool.fields[0]->name : NULL, "a");
	CHECK_STR(t ? t->ptool.fields[9]->name : NULL, "o");
	check_registers(c);
	mcp_catalog_free(c);
}

static void
test_schema_type_direct(void)
{
	struct {
		const char *schema, *type;
	} cases[] = {
		{ "{\"type\":\"integer\"}", "Long" },
		{ "{\"type\":\"number\"}", "String" },
		{ "{\"type\":\"string\",\"enum\":[\"a\"]}", "String" },
		{ "{\"type\":\"boolean\"}", "Bool" },
		{ "{\"type\":\"array\",\"items\":{\"type\":\"boolean\"}}", "Set<Bool>" },
		{ "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},"
		  "\"b\":{\"type\":\"object\",\"properties\":{\"c\":{\"type\":\"string\"}},"
		  "\"required\":[\"c\"]}},\"required\":[\"b\"]}",
		  "{a?: Long, b: {c: String}}" },
		{ "{\"type\":\"object\",\"properties\":{\"a\":{}}}", "{}" },
		{ "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}},"
		  "\"required\":\"a\"}",
		  "{a?: Long}" },
		{ "{\"type\":\"null\"}", NULL },
		{ "{\"type\":[\"integer\"]}", NULL },
		{ "{\"type\":\"float\"}", NULL },
		{ "{}", NULL },
		{ "true", NULL },
		{ "{\"type\":\"array\",\"items\":{\"type\":\"array\"}}", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		json_t *s = J(cases[i].schema);
		char *t = mcp_schema_type(s);
		if (cases[i].type)
			CHECK_STR(t, cases[i].type);
		else
			CHECK(t == NULL);
		free(t);
		json_decref(s);
	}
}

/* K nested arrays around an integer. */
static json_t *
nested_arrays(int k)
{
	json_t *s = json_pack("{s:s}", "type", "integer");
	for (int i = 0; i < k; i++)
		s = json_pack("{s:s, s:o}", "type", "array", "items", s);
	return s;
}

static void
test_type_depth(void)
{
	/* a field's value: 8 levels of sets/records at most (BOX_POLICY_DEPTH_MAX) */
	json_t *s8 = nested_arrays(8), *s9 = nested_arrays(9);
	char *t8 = mcp_schema_type(s8), *t9 = mcp_schema_type(s9);
	CHECK_STR(t8, "Set<Set<Set<Set<Set<Set<Set<Set<Long>>>>>>>>");
	CHECK(t9 == NULL);
	struct bp_schema *bs;
	CHECK_INT(bp_schema_new(&bs), 0);
	CHECK_INT(bp_schema_add_action(bs, "srv", "t"), 0);
	CHECK_INT(bp_schema_add_field(bs, "srv", "t", "deep", t8, false), 0);
	bp_schema_free(bs);
	free(t8);
	free(t9);

	/* as a tool's field: the 9-deep one is left out, the 8-deep one kept */
	json_t *result = json_pack("{s:[{s:s, s:{s:s, s:{s:O, s:O}}}]}", "tools", "name", "deep",
				   "inputSchema", "type", "object", "properties", "ok", s8, "no",
				   s9);
	struct mcp_catalog *c;
	size_t first, count;
	const char *why;
	CHECK_INT(mcp_catalog_new(&c), 0);
	CHECK_INT(mcp_catalog_add_page(c, result, &first, &count, &why), 0);
	const struct mcp_tool *t = mcp_catalog_find(c, "deep");
	CHECK(field(t, "ok") != NULL);
	CHECK(field(t, "no") == NULL);

	/* its argument 8 deep passes the validator; 9 deep is refused */
	json_t *arg8 = json_integer(1);
	for (int i = 0; i < 8; i++)
		arg8 = json_pack("[o]", arg8);
	json_t *args = json_pack("{s:O}", "ok", arg8);
	struct mcp_args a;
	char err[256];
	CHECK_INT(mcp_args_build(t, args, &a, err, sizeof(err)), 0);
	CHECK_INT(a.n_fields, 1);
	CHECK_INT(box_validate_policy_fields(a.fields, a.n_fields, 0), 0);
	mcp_args_free(&a);
	json_decref(args);
	args = json_pack("{s:[O]}", "ok", arg8);
	CHECK_INT(mcp_args_build(t, args, &a, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "argument ok[0]") && strstr(err, "nested deeper than 8 levels"));
	mcp_args_free(&a);
	json_decref(args);
	json_decref(arg8);
	json_decref(result);
	json_decref(s8);
	json_decref(s9);
	mcp_catalog_free(c);
}

static void
test_field_caps(void)
{
	/* 300 typed properties: the first 256 are fields */
	json_t *props = json_object();
	char name[200];
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "f%03d", i);
		json_object_set_new(props, name, json_pack("{s:s}", "type", "integer"));
	}
	/* a record whose type text is over 4096 bytes is left out */
	json_t *big = json_object();
	for (int i = 0; i < 60; i++) {
		memset(name, 'x', 100);
		snprintf(name + 100, sizeof(name) - 100, "%d", i);
		json_object_set_new(big, name, json_pack("{s:s}", "type", "string"));
	}
	json_t *schema = json_pack("{s:s, s:o}", "type", "object", "properties", props);
	json_t *result = json_pack("{s:[{s:s, s:o}, {s:s, s:{s:s, s:{s:{s:s, s:o}, s:{s:s}}}}]}",
				   "tools", "name", "wide", "inputSchema", schema, "name", "big",
				   "inputSchema", "type", "object", "properties", "rec", "type",
				   "object", "properties", big, "small", "type", "boolean");
	struct mcp_catalog *c;
	size_t first, count;
	const char *why;
	CHECK_INT(mcp_catalog_new(&c), 0);
	CHECK_INT(mcp_catalog_add_page(c, result, &first, &count, &why), 0);
	const struct mcp_tool *w = mcp_catalog_find(c, "wide");
	CHECK_INT(w ? w->ptool.n_fields : 0, 256);
	CHECK(field(w, "f255") != NULL);
	CHECK(field(w, "f256") == NULL);
	const struct mcp_tool *b = mcp_catalog_find(c, "big");
	CHECK(field(b, "rec") == NULL);
	CHECK_FIELD(b, "small", "Bool", true);
	check_registers(c);

	/* the wide tool's arguments: 256 fields at most, validator-clean */
	json_t *args = json_object();
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "f%03d", i);
		json_object_set_new(args, name, json_integer(i));
	}
	struct mcp_args a;
	char err[256];
	CHECK_INT(mcp_args_build(w, args, &a, err, sizeof(err)), 0);
	CHECK_INT(a.n_fields, 256);
	CHECK_INT(box_validate_policy_fields(a.fields, a.n_fields, 0), 0);
	mcp_args_free(&a);
	json_decref(args);
	json_decref(result);
	mcp_catalog_free(c);
}

static void
test_catalog_pages(void)
{
	struct mcp_catalog *c;
	size_t first, count;
	const char *why;
	json_t *p1 = J("{\"tools\":[{\"name\":\"add\"},{\"name\":\"echo\"}],\"nextCursor\":\"2\"}");
	json_t *p2 = J("{\"tools\":[{\"name\":\"mul\"},{\"name\":\"add\",\"description\":\"again\"}]}");
	CHECK_INT(mcp_catalog_new(&c), 0);
	CHECK_INT(mcp_catalog_add_page(c, p1, &first, &count, &why), 0);
	CHECK_INT(first, 0);
	CHECK_INT(count, 2);
	CHECK_INT(mcp_catalog_add_page(c, p2, &first, &count, &why), 0);
	CHECK_INT(first, 2);
	CHECK_INT(count, 2);
	CHECK_INT(mcp_catalog_count(c), 4);
	CHECK_STR(mcp_catalog_tool(c, 2)->name, "mul");
	CHECK_STR(mcp_catalog_tool(c, 3)->refused, "duplicate name");
	CHECK(mcp_catalog_tool(c, 4) == NULL);
	/* the first "add" is the one found */
	const struct mcp_tool *add = mcp_catalog_find(c, "add");
	CHECK(add == mcp_catalog_tool(c, 0));
	CHECK_STR(add->canon, "{\"name\":\"add\"}");
	CHECK(mcp_catalog_find(c, "nope") == NULL);
	Box__PolicyTool **tools;
	size_t n;
	CHECK_INT(mcp_catalog_policy_tools(c, &tools, &n), 0);
	CHECK_INT(n, 3);
	CHECK_STR(tools[0]->name, "add");
	CHECK_STR(tools[1]->name, "echo");
	CHECK_STR(tools[2]->name, "mul");
	free(tools);
	/* a new list forgets the old tools */
	mcp_catalog_clear(c);
	CHECK_INT(mcp_catalog_count(c), 0);
	CHECK(mcp_catalog_find(c, "add") == NULL);
	CHECK_INT(mcp_catalog_add_page(c, p2, &first, &count, &why), 0);
	CHECK_INT(first, 0);
	CHECK(mcp_catalog_find(c, "add") && !mcp_catalog_find(c, "add")->refused);
	CHECK(mcp_catalog_find(c, "echo") == NULL);
	json_decref(p1);
	json_decref(p2);
	mcp_catalog_free(c);
}

static void
test_refused_entries(void)
{
	char *desc = malloc(70000);
	memset(desc, 'd', 69999);
	desc[69999] = 0;
	json_t *r = J("{\"tools\":[5,{\"description\":\"x\"},{\"name\":5},{\"name\":\"\"},"
		      "{\"name\":\"a\\\"b\"},{\"name\":\"a\\\\b\"},{\"name\":\"a\\nb\"},"
		      "{\"name\":\"ok\"}]}");
	json_t *tools = json_object_get(r, "tools");
	char longname[300];
	memset(longname, 'n', 257);
	longname[257] = 0;
	json_array_append_new(tools, json_pack("{s:s}", "name", longname));
	longname[256] = 0;
	json_array_append_new(tools, json_pack("{s:s}", "name", longname));
	json_array_append_new(tools, json_pack("{s:s, s:s}", "name", "huge", "description", desc));
	free(desc);

	struct mcp_catalog *c;
	size_t first, count;
	const char *why;
	CHECK_INT(mcp_catalog_new(&c), 0);
	CHECK_INT(mcp_catalog_add_page(c, r, &first, &count, &why), 0);
	CHECK_INT(count, 11);
	CHECK_STR(mcp_catalog_tool(c, 0)->refused, "not an object");
	CHECK_STR(mcp_catalog_tool(c, 1)->refused, "no string name");
	CHECK_STR(mcp_catalog_tool(c, 2)->refused, "no string name");
	CHECK_STR(mcp_catalog_tool(c, 3)->refused, "empty name");
	for (int i = 4; i <= 6; i++)
		CHECK_STR(mcp_catalog_tool(c, i)->refused,
			  "name has a quote, a backslash or a control character");
	CHECK(mcp_catalog_tool(c, 7)->refused == NULL);
	CHECK_STR(mcp_catalog_tool(c, 8)->refused, "name longer than 256 bytes");
	CHECK(mcp_catalog_tool(c, 9)->refused == NULL); /* 256 bytes */
	const struct mcp_tool *huge = mcp_catalog_tool(c, 10);
	CHECK(huge->too_big);
	CHECK_STR(huge->refused, "definition over 64 KiB");
	CHECK(huge->canon == NULL);
	CHECK(mcp_catalog_find(c, "huge") == NULL);
	Box__PolicyTool **pt;
	size_t n;
	CHECK_INT(mcp_catalog_policy_tools(c, &pt, &n), 0);
	CHECK_INT(n, 2);
	free(pt);
	check_registers(c);
	json_decref(r);
	mcp_catalog_free(c);
}

static void
test_canonical(void)
{
	struct mcp_catalog *c = catalog_of(
		"{\"tools\":[{\"title\":\"T\",\"name\":\"t\",\"inputSchema\":{\"type\":\"object\","
		"\"properties\":{\"b\":{\"type\":\"string\"},\"a\":{\"type\":\"integer\"}}},"
		"\"description\":\"d é\",\"annotations\":{\"readOnlyHint\":true},"
		"\"outputSchema\":{}},{\"name\":\"bare\"},{\"name\":\"nulls\",\"description\":null}]}");
	const struct mcp_tool *t = mcp_catalog_find(c, "t");
	CHECK_STR(t->canon, "{\"description\":\"d é\",\"inputSchema\":{\"properties\":{\"a\":"
			    "{\"type\":\"integer\"},\"b\":{\"type\":\"string\"}},\"type\":\"object\"},"
			    "\"name\":\"t\"}");
	CHECK_INT(t->canon_len, strlen(t->canon));
	CHECK(!t->too_big);
	CHECK_STR(mcp_catalog_find(c, "bare")->canon, "{\"name\":\"bare\"}");
	CHECK_STR(mcp_catalog_find(c, "nulls")->canon, "{\"description\":null,\"name\":\"nulls\"}");
	/* the schema's field order is the server's, not the sorted one */
	CHECK_STR(t->ptool.fields[0]->name, "b");
	mcp_catalog_free(c);
}

static void
test_catalog_limits(void)
{
	struct mcp_catalog *c;
	size_t first, count;
	const char *why;
	json_t *r = json_pack("{s:[]}", "tools");
	json_t *tools = json_object_get(r, "tools");
	char name[32];
	for (int i = 0; i < MCP_TOOLS_MAX; i++) {
		snprintf(name, sizeof(name), "t%d", i);
		json_array_append_new(tools, json_pack("{s:s, s:{s:s, s:{s:{s:s}}}}", "name", name,
						       "inputSchema", "type", "object", "properties",
						       "a", "type", "integer"));
	}
	CHECK_INT(mcp_catalog_new(&c), 0);
	CHECK_INT(mcp_catalog_add_page(c, r, &first, &count, &why), 0);
	CHECK_INT(count, MCP_TOOLS_MAX);
	CHECK(mcp_catalog_find(c, "t4095") != NULL);
	CHECK(mcp_catalog_find(c, "t17") == mcp_catalog_tool(c, 17));
	json_t *one = J("{\"tools\":[{\"name\":\"extra\"}]}");
	CHECK_INT(mcp_catalog_add_page(c, one, &first, &count, &why), -E2BIG);
	CHECK_STR(why, "more than 4096 tools");
	CHECK_INT(mcp_catalog_count(c), MCP_TOOLS_MAX);
	mcp_catalog_clear(c);
	json_array_append_new(tools, json_pack("{s:s}", "name", "one-too-many"));
	CHECK_INT(mcp_catalog_add_page(c, r, &first, &count, &why), -E2BIG);
	CHECK_INT(mcp_catalog_count(c), 0);

	/* not a tools/list result */
	json_t *bad[] = { J("[]"), J("{}"), J("{\"tools\":{}}"), J("{\"tools\":null}") };
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		CHECK_INT(mcp_catalog_add_page(c, bad[i], &first, &count, &why), -EINVAL);
		CHECK(why && strstr(why, "\"tools\" array"));
		json_decref(bad[i]);
	}
	json_decref(one);
	json_decref(r);
	mcp_catalog_free(c);
}

/* ---- arguments ---- */

static const char calc[] =
	"{\"tools\":[{\"name\":\"calc\",\"inputSchema\":{\"type\":\"object\",\"properties\":{"
	"\"a\":{\"type\":\"integer\"},\"n\":{\"type\":\"number\"},\"s\":{\"type\":\"string\"},"
	"\"b\":{\"type\":\"boolean\"},\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
	"\"opt\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"integer\"},"
	"\"y\":{\"type\":\"string\"},\"u\":{}}},"
	"\"list\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":"
	"{\"k\":{\"type\":\"integer\"}}}},"
	"\"nums\":{\"type\":\"array\",\"items\":{\"type\":\"number\"}},"
	"\"untyped\":{}},\"required\":[\"a\"]}}]}";

struct argcase {
	struct mcp_catalog *c;
	struct mcp_args a;
	char err[256];
	int r;
};

static int
build(struct argcase *ac, const char *args)
{
	json_t *v = args ? J(args) : NULL;
	ac->c = catalog_of(calc);
	ac->r = mcp_args_build(mcp_catalog_find(ac->c, "calc"), v, &ac->a, ac->err, sizeof(ac->err));
	json_decref(v);
	if (ac->r == 0)
		CHECK_INT(box_validate_policy_fields(ac->a.fields, ac->a.n_fields, 0), 0);
	return ac->r;
}

static void
done(struct argcase *ac)
{
	mcp_args_free(&ac->a);
	mcp_catalog_free(ac->c);
}

static const Box__PolicyValue *
arg(const struct mcp_args *a, const char *name)
{
	for (size_t i = 0; i < a->n_fields; i++)
		if (strcmp(a->fields[i]->name, name) == 0)
			return a->fields[i]->value;
	return NULL;
}

static const Box__PolicyValue *
rec_field(const Box__PolicyValue *v, const char *name)
{
	if (!v || v->kind_case != BOX__POLICY_VALUE__KIND_RECORD)
		return NULL;
	for (size_t i = 0; i < v->record->n_fields; i++)
		if (strcmp(v->record->fields[i]->name, name) == 0)
			return v->record->fields[i]->value;
	return NULL;
}

static bool
is_str(const Box__PolicyValue *v, const char *s)
{
	bool ok = v && v->kind_case == BOX__POLICY_VALUE__KIND_STR && strcmp(v->str, s) == 0;
	if (!ok)
		printf("#   expected str \"%s\", got kind %d \"%s\"\n", s, v ? (int)v->kind_case : -1,
		       v && v->kind_case == BOX__POLICY_VALUE__KIND_STR ? v->str : "");
	return ok;
}

static bool
is_int(const Box__PolicyValue *v, long long i)
{
	return v && v->kind_case == BOX__POLICY_VALUE__KIND_INTEGER && v->integer == i;
}

static void
test_args_typed(void)
{
	struct argcase ac = { 0 };
	CHECK_INT(build(&ac, "{\"a\":5,\"n\":2.5,\"s\":\"hi\",\"b\":true,\"tags\":[\"x\",\"y\"],"
			     "\"opt\":{\"x\":1,\"y\":\"z\",\"u\":7,\"extra\":1},"
			     "\"list\":[{\"k\":1,\"z\":2},{\"k\":2}],\"nums\":[1,0.5],"
			     "\"untyped\":3,\"unknown\":4}"),
		  0);
	CHECK(is_int(arg(&ac.a, "a"), 5));
	CHECK(is_str(arg(&ac.a, "n"), "2.5"));
	CHECK(is_str(arg(&ac.a, "s"), "hi"));
	const Box__PolicyValue *b = arg(&ac.a, "b");
	CHECK(b && b->kind_case == BOX__POLICY_VALUE__KIND_BOOLEAN && b->boolean);
	const Box__PolicyValue *tags = arg(&ac.a, "tags");
	CHECK(tags && tags->kind_case == BOX__POLICY_VALUE__KIND_SET && tags->set->n_elems == 2);
	CHECK(tags && is_str(tags->set->elems[1], "y"));
	/* a record passes only its typed properties */
	const Box__PolicyValue *opt = arg(&ac.a, "opt");
	CHECK(opt && opt->kind_case == BOX__POLICY_VALUE__KIND_RECORD && opt->record->n_fields == 2);
	CHECK(is_int(rec_field(opt, "x"), 1));
	CHECK(is_str(rec_field(opt, "y"), "z"));
	CHECK(rec_field(opt, "u") == NULL && rec_field(opt, "extra") == NULL);
	const Box__PolicyValue *list = arg(&ac.a, "list");
	CHECK(list && list->set->n_elems == 2);
	CHECK(list && list->set->elems[0]->record->n_fields == 1);
	CHECK(list && is_int(rec_field(list->set->elems[0], "k"), 1));
	const Box__PolicyValue *nums = arg(&ac.a, "nums");
	CHECK(nums && is_str(nums->set->elems[0], "1") && is_str(nums->set->elems[1], "0.5"));
	/* untyped fields and unknown arguments are not passed */
	CHECK(arg(&ac.a, "untyped") == NULL);
	CHECK(arg(&ac.a, "unknown") == NULL);
	CHECK_INT(ac.a.n_fields, 8);
	/* the schema's field order */
	CHECK_STR(ac.a.fields[0]->name, "a");
	CHECK_STR(ac.a.fields[7]->name, "nums");
	done(&ac);
}

static void
test_args_type_confusion(void)
{
	/* "200" for a Long field stays a String: policyd's schema check refuses it */
	struct argcase ac = { 0 };
	CHECK_INT(build(&ac, "{\"a\":\"200\",\"s\":200,\"b\":\"true\",\"tags\":\"x\",\"opt\":\"x\"}"),
		  0);
	CHECK(is_str(arg(&ac.a, "a"), "200"));
	CHECK(is_int(arg(&ac.a, "s"), 200));
	CHECK(is_str(arg(&ac.a, "b"), "true"));
	CHECK(is_str(arg(&ac.a, "tags"), "x"));
	CHECK(is_str(arg(&ac.a, "opt"), "x"));
	done(&ac);

	/* shapes are kept too: an array for a Long, an object for a String */
	CHECK_INT(build(&ac, "{\"a\":[1,\"2\"],\"s\":{\"k\":1,\"bad-key\":2,\"n\":null},"
			     "\"tags\":[1,true],\"opt\":{\"x\":\"1\"},\"list\":[{\"k\":\"1\"},5]}"),
		  0);
	const Box__PolicyValue *a = arg(&ac.a, "a");
	CHECK(a && a->kind_case == BOX__POLICY_VALUE__KIND_SET && is_int(a->set->elems[0], 1) &&
	      is_str(a->set->elems[1], "2"));
	const Box__PolicyValue *s = arg(&ac.a, "s");
	CHECK(s && s->kind_case == BOX__POLICY_VALUE__KIND_RECORD && s->record->n_fields == 1 &&
	      is_int(rec_field(s, "k"), 1));
	const Box__PolicyValue *tags = arg(&ac.a, "tags");
	CHECK(tags && is_int(tags->set->elems[0], 1) &&
	      tags->set->elems[1]->kind_case == BOX__POLICY_VALUE__KIND_BOOLEAN);
	CHECK(is_str(rec_field(arg(&ac.a, "opt"), "x"), "1"));
	const Box__PolicyValue *list = arg(&ac.a, "list");
	CHECK(list && is_str(rec_field(list->set->elems[0], "k"), "1") &&
	      is_int(list->set->elems[1], 5));
	done(&ac);

	/* a real for a Long field is its text (a String: refused by policyd) */
	CHECK_INT(build(&ac, "{\"a\":1.5}"), 0);
	CHECK(is_str(arg(&ac.a, "a"), "1.5"));
	done(&ac);
}

static void
test_args_refused_confusions(void)
{
	/*
	 * No PolicyValue can say "a string where a number was due" (number
	 * fields are Strings) nor "a real where a string was due": refused here.
	 */
	struct argcase ac = { 0 };
	CHECK_INT(build(&ac, "{\"n\":\"2.5\"}"), -EINVAL);
	CHECK_STR(ac.err, "argument n: a string for a number field");
	done(&ac);
	CHECK_INT(build(&ac, "{\"n\":true}"), -EINVAL);
	CHECK_STR(ac.err, "argument n: a boolean for a number field");
	done(&ac);
	CHECK_INT(build(&ac, "{\"s\":2.5}"), -EINVAL);
	CHECK_STR(ac.err, "argument s: a number for a string field");
	done(&ac);
	CHECK_INT(build(&ac, "{\"tags\":[\"a\",1.5]}"), -EINVAL);
	CHECK_STR(ac.err, "argument tags[1]: a number for a string field");
	done(&ac);
	CHECK_INT(build(&ac, "{\"nums\":[1,\"2\"]}"), -EINVAL);
	CHECK_STR(ac.err, "argument nums[1]: a string for a number field");
	done(&ac);
	CHECK_INT(build(&ac, "{\"opt\":{\"y\":0.5}}"), -EINVAL);
	CHECK_STR(ac.err, "argument opt.y: a number for a string field");
	done(&ac);
}

static void
test_args_case_variants(void)
{
	/*
	 * A server whose JSON decoder folds keys (Go's encoding/json) reads "S"
	 * or "\u017f" (long s) as the property "s": the broker, which types by
	 * exact name, would decide without it. Refused, at every depth; a key
	 * that is no property in any case, or an untyped one, is not.
	 */
	struct argcase ac = { 0 };
	CHECK_INT(build(&ac, "{\"a\":1,\"S\":\"x\"}"), -EINVAL);
	CHECK_STR(ac.err, "argument S: spelled like the schema's 's' but for letter case");
	done(&ac);
	CHECK_INT(build(&ac, "{\"a\":1,\"\u017f\":\"x\"}"), -EINVAL);
	CHECK_STR(ac.err, "argument \xc5\xbf: spelled like the schema's 's' but for letter case");
	done(&ac);
	CHECK_INT(build(&ac, "{\"a\":1,\"opt\":{\"x\":1,\"Y\":\"z\"}}"), -EINVAL);
	CHECK_STR(ac.err, "argument opt.Y: spelled like the schema's 'y' but for letter case");
	done(&ac);
	CHECK_INT(build(&ac, "{\"a\":1,\"list\":[{\"K\":1}]}"), -EINVAL);
	CHECK_STR(ac.err, "argument list[0].K: spelled like the schema's 'k' but for letter case");
	done(&ac);
	CHECK_INT(build(&ac, "{\"a\":1,\"Untyped\":1,\"zz\":2,\"opt\":{\"U\":1}}"), 0);
	done(&ac);
}

static void
test_args_numbers(void)
{
	struct {
		const char *json, *text;
	} cases[] = {
		{ "5", "5" },
		{ "-7", "-7" },
		{ "5.0", "5" },
		{ "-0.0", "0" },
		{ "0.1", "0.1" },
		{ "2.5e-3", "0.0025" },
		{ "1e300", "1e+300" },
		{ "1e16", "1e+16" },
		{ "9007199254740992.0", "9007199254740992" },
		{ "123456789012", "123456789012" },
		{ "9223372036854775807", "9223372036854775807" },
		{ "0.30000000000000004", "0.30000000000000004" },
		{ "3.141592653589793", "3.141592653589793" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char args[128];
		struct argcase ac = { 0 };
		snprintf(args, sizeof(args), "{\"n\":%s}", cases[i].json);
		CHECK_INT(build(&ac, args), 0);
		CHECK(is_str(arg(&ac.a, "n"), cases[i].text));
		done(&ac);
	}
}

static void
test_args_null_and_absent(void)
{
	struct argcase ac = { 0 };
	/* null counts as absent; a missing required field is policyd's to deny */
	CHECK_INT(build(&ac, "{\"a\":null,\"opt\":{\"x\":null,\"y\":\"v\"}}"), 0);
	CHECK(arg(&ac.a, "a") == NULL);
	CHECK(rec_field(arg(&ac.a, "opt"), "x") == NULL);
	CHECK(is_str(rec_field(arg(&ac.a, "opt"), "y"), "v"));
	CHECK_INT(ac.a.n_fields, 1);
	done(&ac);
	CHECK_INT(build(&ac, "{}"), 0);
	CHECK_INT(ac.a.n_fields, 0);
	done(&ac);
	CHECK_INT(build(&ac, NULL), 0);
	CHECK_INT(ac.a.n_fields, 0);
	done(&ac);
	CHECK_INT(build(&ac, "null"), 0);
	CHECK_INT(ac.a.n_fields, 0);
	done(&ac);
	/* null inside an array has no meaning a set can carry */
	CHECK_INT(build(&ac, "{\"tags\":[\"x\",null]}"), -EINVAL);
	CHECK_STR(ac.err, "argument tags[1]: null in an array");
	done(&ac);
	CHECK_INT(build(&ac, "[1]"), -EINVAL);
	CHECK_STR(ac.err, "arguments must be an object");
	done(&ac);
	CHECK_INT(build(&ac, "\"x\""), -EINVAL);
	done(&ac);
}

static void
test_args_caps(void)
{
	struct argcase ac = { 0 };
	/* a set of 4097 elements */
	json_t *big = json_array();
	for (int i = 0; i < 4097; i++)
		json_array_append_new(big, json_string("t"));
	json_t *args = json_pack("{s:o}", "tags", big);
	char *text = json_dumps(args, JSON_COMPACT);
	CHECK_INT(build(&ac, text), -EINVAL);
	CHECK_STR(ac.err, "argument tags: an array of more than 4096 elements");
	done(&ac);
	free(text);
	json_array_remove(big, 0);
	text = json_dumps(args, JSON_COMPACT);
	CHECK_INT(build(&ac, text), 0);
	CHECK_INT(arg(&ac.a, "tags")->set->n_elems, 4096);
	done(&ac);
	free(text);
	json_decref(args);

	/* a string over 256 KiB */
	char *s = malloc((256u << 10) + 2);
	memset(s, 's', (256u << 10) + 1);
	s[(256u << 10) + 1] = 0;
	args = json_pack("{s:s}", "s", s);
	text = json_dumps(args, JSON_COMPACT);
	CHECK_INT(build(&ac, text), -EINVAL);
	CHECK_STR(ac.err, "argument s: a string over 256 KiB");
	done(&ac);
	free(text);
	json_decref(args);
	s[256u << 10] = 0;
	args = json_pack("{s:s}", "s", s);
	text = json_dumps(args, JSON_COMPACT);
	CHECK_INT(build(&ac, text), 0);
	done(&ac);
	free(text);
	json_decref(args);
	free(s);

	/* a deep value under a mismatched (untyped-shape) field: 8 levels pass, 9 do not */
	char deep[256] = "{\"s\":";
	for (int i = 0; i < 9; i++)
		strcat(deep, "{\"a\":");
	strcat(deep, "1");
	for (int i = 0; i < 10; i++)
		strcat(deep, "}");
	CHECK_INT(build(&ac, deep), -EINVAL);
	CHECK_STR(ac.err, "argument s.a.a.a.a.a.a.a.a: nested deeper than 8 levels");
	done(&ac);
	memmove(deep + 5, deep + 10, strlen(deep + 10) + 1); /* one level less */
	deep[strlen(deep) - 1] = 0;
	CHECK_INT(build(&ac, deep), 0);
	CHECK(arg(&ac.a, "s") && arg(&ac.a, "s")->kind_case == BOX__POLICY_VALUE__KIND_RECORD);
	done(&ac);
}

static void
test_tool_without_schema(void)
{
	struct mcp_catalog *c = catalog_of("{\"tools\":[{\"name\":\"none\"},{\"name\":\"str\","
					   "\"inputSchema\":{\"type\":\"string\"}}]}");
	struct mcp_args a;
	char err[64];
	json_t *args = J("{\"a\":1}");
	const struct mcp_tool *t = mcp_catalog_find(c, "none");
	CHECK_INT(t->ptool.n_fields, 0);
	CHECK_INT(mcp_args_build(t, args, &a, err, sizeof(err)), 0);
	CHECK_INT(a.n_fields, 0);
	mcp_args_free(&a);
	CHECK_INT(mcp_catalog_find(c, "str")->ptool.n_fields, 0);
	json_decref(args);
	mcp_catalog_free(c);
}

int
main(void)
{
	RUN(test_typing_forms);
	RUN(test_schema_type_direct);
	RUN(test_type_depth);
	RUN(test_field_caps);
	RUN(test_catalog_pages);
	RUN(test_refused_entries);
	RUN(test_canonical);
	RUN(test_catalog_limits);
	RUN(test_args_typed);
	RUN(test_args_type_confusion);
	RUN(test_args_refused_confusions);
	RUN(test_args_case_variants);
	RUN(test_args_numbers);
	RUN(test_args_null_and_absent);
	RUN(test_args_caps);
	RUN(test_tool_without_schema);
	return tap_done();
}
