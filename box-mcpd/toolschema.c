/* SPDX-License-Identifier: Apache-2.0 */
/*
 * toolschema.c — tool catalog, canonical definitions, docs/box-policy.5.md typing of
 * input schemas and of tools/call arguments (toolschema.h). Pure: no I/O,
 * no logging.
 *
 * Trusts: nothing. Definitions come from the server, arguments from the
 * harness. One function (classify) decides whether a schema is typed and
 * how, and both the type expressions sent to policyd and the argument
 * conversion follow it, so a field policyd knows is exactly a field whose
 * argument is passed. Every count and depth is capped to what
 * proto/policy_validate.c accepts; an argument keeps its JSON type, and
 * where no PolicyValue can carry the JSON type faithfully (a string for a
 * number field, a real for a string field) the call is refused here.
 */
#include "box-mcpd/toolschema.h"
#include "box-mcpd/jsonrpc.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIELD_NAME_MAX 128    /* BOX_POLICY_FIELD_NAME_MAX */
#define SET_MAX 4096          /* BOX_POLICY_SET_MAX */
#define STR_MAX (256u << 10)  /* BOX_POLICY_STR_MAX */

/* ---- small pool: every allocation of one mcp_args, freed at once ---- */

#define POOL_CHUNK 4096

struct pool_block {
	struct pool_block *next;
	size_t used, size;
	max_align_t data[];
};

struct pool {
	struct pool_block *head;
};

/* Zeroed, aligned memory from a bump chunk (one malloc for a typical call). */
static void *
pool_alloc(struct pool *p, size_t size)
{
	const size_t align = sizeof(max_align_t);
	size = (size + align - 1) / align * align;
	struct pool_block *b = p->head;
	if (!b || b->size - b->used < size) {
		size_t cap = size > POOL_CHUNK ? size : POOL_CHUNK;
		b = calloc(1, sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->size = cap;
		b->next = p->head;
		p->head = b;
	}
	void *r = (char *)b->data + b->used;
	b->used += size;
	return r;
}

static char *
pool_strdup(struct pool *p, const char *s)
{
	size_t n = strlen(s);
	char *d = pool_alloc(p, n + 1);
	if (d)
		memcpy(d, s, n + 1);
	return d;
}

static void
pool_free(struct pool *p)
{
	while (p && p->head) {
		struct pool_block *b = p->head;
		p->head = b->next;
		free(b);
	}
}

/* ---- typing ---- */

enum kind { K_NONE, K_LONG, K_NUMBER, K_STRING, K_BOOL, K_SET, K_RECORD };

static bool
field_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > FIELD_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
		if (!alpha && (i == 0 || c < '0' || c > '9'))
			return false;
	}
	return true;
}

/*
 * What SCHEMA types a value at DEPTH as (0: an input field). Scalars up to
 * MCP_TYPE_DEPTH_MAX; a set or record only below it (its members are one
 * level deeper).
 */
static enum kind
classify(const json_t *schema, unsigned depth)
{
	if (!json_is_object(schema) || depth > MCP_TYPE_DEPTH_MAX)
		return K_NONE;
	const char *t = json_string_value(json_object_get(schema, "type"));
	if (!t)
		return K_NONE;
	if (strcmp(t, "integer") == 0)
		return K_LONG;
	if (strcmp(t, "number") == 0)
		return K_NUMBER;
	if (strcmp(t, "string") == 0)
		return K_STRING;
	if (strcmp(t, "boolean") == 0)
		return K_BOOL;
	if (depth >= MCP_TYPE_DEPTH_MAX)
		return K_NONE;
	if (strcmp(t, "array") == 0)
		return classify(json_object_get(schema, "items"), depth + 1) != K_NONE ? K_SET :
											 K_NONE;
	if (strcmp(t, "object") == 0)
		return json_is_object(json_object_get(schema, "properties")) ? K_RECORD : K_NONE;
	return K_NONE;
}

static bool
is_required(const json_t *schema, const char *name)
{
	const json_t *req = json_object_get(schema, "required");
	size_t i;
	json_t *v;

	if (!json_is_array(req))
		return false;
	json_array_foreach (req, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), name) == 0)
			return true;
	return false;
}

/*
 * Iterate the typed properties of record schema SCHEMA whose members are at
 * CHILD_DEPTH: the first MCP_TOOL_FIELDS_MAX with a valid name and a type
 * there, in the schema's order. Returns the next one (PI zeroed to start)
 * and its schema in *SUB, or NULL at the end.
 */
struct prop_iter {
	void *it;
	size_t taken;
	bool done;
};

static const char *
next_prop(const json_t *schema, unsigned child_depth, struct prop_iter *pi, json_t **sub)
{
	json_t *props = json_object_get(schema, "properties");
	if (!json_is_object(props) || pi->done)
		return NULL;
	pi->it = pi->it ? json_object_iter_next(props, pi->it) : json_object_iter(props);
	for (; pi->it && pi->taken < MCP_TOOL_FIELDS_MAX; pi->it = json_object_iter_next(props, pi->it)) {
		const char *key = json_object_iter_key(pi->it);
		json_t *s = json_object_iter_value(pi->it);
		if (field_name_ok(key) && classify(s, child_depth) != K_NONE) {
			pi->taken++;
			*sub = s;
			return key;
		}
	}
	pi->done = true;
	return NULL;
}

struct buf {
	char *p;
	size_t n, cap, max;
	bool over;
};

static void
buf_add(struct buf *b, const char *s)
{
	size_t n = strlen(s);
	if (b->over)
		return;
	if (b->n + n + 1 > b->max) {
		b->over = true;
		return;
	}
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->n + n + 1)
			cap *= 2;
		char *np = realloc(b->p, cap);
		if (!np) {
			b->over = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n + 1);
	b->n += n;
}

static void
type_text(const json_t *schema, unsigned depth, struct buf *b)
{
	switch (classify(schema, depth)) {
	case K_LONG:
		buf_add(b, "Long");
		return;
	case K_NUMBER:
	case K_STRING:
		buf_add(b, "String");
		return;
	case K_BOOL:
		buf_add(b, "Bool");
		return;
	case K_SET:
		buf_add(b, "Set<");
		type_text(json_object_get(schema, "items"), depth + 1, b);
		buf_add(b, ">");
		return;
	case K_RECORD: {
		struct prop_iter pi = { 0 };
		json_t *sub;
		const char *key;
		bool first = true;
		buf_add(b, "{");
		while ((key = next_prop(schema, depth + 1, &pi, &sub))) {
			buf_add(b, first ? "" : ", ");
			buf_add(b, key);
			buf_add(b, is_required(schema, key) ? ": " : "?: ");
			type_text(sub, depth + 1, b);
			first = false;
		}
		buf_add(b, "}");
		return;
	}
	case K_NONE:
	default:
		b->over = true; /* not reached: callers classify first */
		return;
	}
}

char *
mcp_schema_type(const json_t *schema)
{
	struct buf b = { .max = MCP_TYPE_TEXT_MAX + 1 };
	if (classify(schema, 0) == K_NONE)
		return NULL;
	type_text(schema, 0, &b);
	if (b.over) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

/* ---- the catalog ---- */

struct mcp_catalog {
	struct mcp_tool *tools;
	size_t n, cap;
	/* open addressing over usable tools' names: index + 1, 0 = empty */
	uint32_t *slots;
	size_t n_slots;
};

#define SLOTS (MCP_TOOLS_MAX * 2)

static uint32_t
name_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

int
mcp_catalog_new(struct mcp_catalog **ret)
{
	struct mcp_catalog *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->slots = calloc(SLOTS, sizeof(*c->slots));
	if (!c->slots) {
		free(c);
		return -ENOMEM;
	}
	c->n_slots = SLOTS;
	*ret = c;
	return 0;
}

static void
tool_free(struct mcp_tool *t)
{
	for (size_t i = 0; i < t->ptool.n_fields; i++) {
		free(t->ptool.fields[i]->name);
		free(t->ptool.fields[i]->type);
		free(t->ptool.fields[i]);
	}
	free(t->ptool.fields);
	free(t->name);
	free(t->canon);
	if (t->input_schema)
		json_decref(t->input_schema);
	memset(t, 0, sizeof(*t));
}

void
mcp_catalog_clear(struct mcp_catalog *c)
{
	for (size_t i = 0; i < c->n; i++)
		tool_free(&c->tools[i]);
	c->n = 0;
	memset(c->slots, 0, c->n_slots * sizeof(*c->slots));
}

void
mcp_catalog_free(struct mcp_catalog *c)
{
	if (!c)
		return;
	mcp_catalog_clear(c);
	free(c->tools);
	free(c->slots);
	free(c);
}

size_t
mcp_catalog_count(const struct mcp_catalog *c)
{
	return c->n;
}

const struct mcp_tool *
mcp_catalog_tool(const struct mcp_catalog *c, size_t i)
{
	return i < c->n ? &c->tools[i] : NULL;
}

const struct mcp_tool *
mcp_catalog_find(const struct mcp_catalog *c, const char *name)
{
	if (!name)
		return NULL;
	for (uint32_t h = name_hash(name) % c->n_slots;; h = (h + 1) % c->n_slots) {
		uint32_t s = c->slots[h];
		if (s == 0)
			return NULL;
		if (strcmp(c->tools[s - 1].name, name) == 0)
			return &c->tools[s - 1];
	}
}

static void
slot_insert(struct mcp_catalog *c, size_t index)
{
	uint32_t h = name_hash(c->tools[index].name) % c->n_slots;
	while (c->slots[h])
		h = (h + 1) % c->n_slots;
	c->slots[h] = (uint32_t)index + 1;
}

/*
 * A tool name policyd can carry in NS::Action::"NAME": 1..256 bytes, no
 * quote, backslash or control character (jansson already checked UTF-8).
 */
static const char *
tool_name_problem(const json_t *name)
{
	if (!json_is_string(name))
		return "no string name";
	size_t n = json_string_length(name);
	const char *s = json_string_value(name);
	if (n == 0)
		return "empty name";
	if (n > MCP_TOOL_NAME_MAX)
		return "name longer than 256 bytes";
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch < 0x20 || ch == 0x7f || ch == '"' || ch == '\\')
			return "name has a quote, a backslash or a control character";
	}
	return NULL;
}

static int
canonical(const json_t *def, char **canon, size_t *len)
{
	json_t *o = json_object();
	const char *keys[] = { "name", "description", "inputSchema" };
	int r = -ENOMEM;

	if (!o)
		return -ENOMEM;
	for (size_t i = 0; i < 3; i++) {
		json_t *v = json_object_get(def, keys[i]);
		if (v && json_object_set(o, keys[i], v) < 0)
			goto out;
	}
	*canon = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);
	if (!*canon)
		goto out;
	*len = strlen(*canon);
	r = 0;
out:
	json_decref(o);
	return r;
}

/* The input fields of a tool whose inputSchema is SCHEMA. */
static int
tool_fields(struct mcp_tool *t, const json_t *schema)
{
	struct prop_iter pi = { 0 };
	json_t *sub;
	const char *key;

	t->ptool.fields = NULL;
	t->ptool.n_fields = 0;
	if (classify(schema, 0) != K_RECORD)
		return 0;
	t->ptool.fields = calloc(MCP_TOOL_FIELDS_MAX, sizeof(*t->ptool.fields));
	if (!t->ptool.fields)
		return -ENOMEM;
	/* The input record's members are the fields, at depth 0. */
	while ((key = next_prop(schema, 0, &pi, &sub))) {
		char *type = mcp_schema_type(sub);
		if (!type)
			continue; /* over MCP_TYPE_TEXT_MAX (or out of memory): left out */
		Box__PolicyToolField *f = malloc(sizeof(*f));
		char *name = strdup(key);
		if (!f || !name) {
			free(f);
			free(name);
			free(type);
			return -ENOMEM;
		}
		box__policy_tool_field__init(f);
		f->name = name;
		f->type = type;
		f->optional = !is_required(schema, key);
		t->ptool.fields[t->ptool.n_fields++] = f;
	}
	return 0;
}

static int
tool_init(struct mcp_catalog *c, struct mcp_tool *t, const json_t *def)
{
	int r;

	memset(t, 0, sizeof(*t));
	box__policy_tool__init(&t->ptool);
	if (!json_is_object(def)) {
		t->refused = "not an object";
		return 0;
	}
	json_t *name = json_object_get(def, "name");
	t->refused = tool_name_problem(name);
	if (t->refused)
		return 0;
	t->name = strdup(json_string_value(name));
	if (!t->name)
		return -ENOMEM;
	if (mcp_catalog_find(c, t->name)) {
		t->refused = "duplicate name";
		return 0;
	}
	t->ptool.name = t->name;
	r = canonical(def, &t->canon, &t->canon_len);
	if (r < 0)
		return r;
	if (t->canon_len > MCP_TOOL_DEF_MAX) {
		free(t->canon);
		t->canon = NULL;
		t->canon_len = 0;
		t->too_big = true;
		t->refused = "definition over 64 KiB";
		return 0;
	}
	json_t *schema = json_object_get(def, "inputSchema");
	if (schema)
		t->input_schema = json_incref(schema);
	return tool_fields(t, schema);
}

int
mcp_catalog_add_page(struct mcp_catalog *c, const json_t *result, size_t *first,
		     size_t *count, const char **why)
{
	json_t *tools = json_object_get(result, "tools");
	size_t i;
	json_t *def;

	*first = c->n;
	*count = 0;
	*why = NULL;
	if (!json_is_object(result) || !json_is_array(tools)) {
		*why = "a tools/list result must be an object with a \"tools\" array";
		return -EINVAL;
	}
	if (json_array_size(tools) > MCP_TOOLS_MAX - c->n) {
		*why = "more than 4096 tools";
		return -E2BIG;
	}
	if (c->n + json_array_size(tools) > c->cap) {
		size_t cap = c->n + json_array_size(tools);
		struct mcp_tool *nt = realloc(c->tools, cap * sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		c->tools = nt;
		c->cap = cap;
	}
	json_array_foreach (tools, i, def) {
		struct mcp_tool *t = &c->tools[c->n];
		int r = tool_init(c, t, def);
		c->n++;
		(*count)++;
		if (r < 0) {
			*why = "out of memory";
			return r;
		}
		if (!t->refused)
			slot_insert(c, c->n - 1);
	}
	return 0;
}

int
mcp_catalog_policy_tools(const struct mcp_catalog *c, Box__PolicyTool ***tools, size_t *n)
{
	*tools = calloc(c->n ? c->n : 1, sizeof(**tools));
	*n = 0;
	if (!*tools)
		return -ENOMEM;
	for (size_t i = 0; i < c->n; i++)
		if (!c->tools[i].refused)
			(*tools)[(*n)++] = &c->tools[i].ptool;
	return 0;
}

/* ---- arguments ---- */

struct conv {
	struct pool *pool;
	char *err;
	size_t errlen;
	char path[512]; /* where we are, for messages: "a.b[3]" */
};

static int fail(struct conv *cv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
fail(struct conv *cv, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (cv->err && cv->errlen)
		snprintf(cv->err, cv->errlen, "argument %s: %s", cv->path, what);
	return -EINVAL;
}

static const char *
json_kind_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
	default:
		return "null";
	}
}

/* A number's decimal text: integers "%lld", else the shortest text that reads back. */
static void
number_text(const json_t *v, char out[40])
{
	if (json_is_integer(v)) {
		snprintf(out, 40, "%lld", (long long)json_integer_value(v));
		return;
	}
	double d = json_real_value(v);
	if (d == trunc(d) && fabs(d) <= 9007199254740992.0) {
		snprintf(out, 40, "%lld", (long long)d);
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(out, 40, "%.*g", prec, d);
		if (strtod(out, NULL) == d)
			return;
	}
}

static Box__PolicyValue *
new_value(struct conv *cv)
{
	Box__PolicyValue *v = pool_alloc(cv->pool, sizeof(*v));
	if (v)
		box__policy_value__init(v);
	return v;
}

static int convert(struct conv *cv, const json_t *schema, enum kind k, const json_t *val,
		   unsigned depth, Box__PolicyValue **out);

/* Append ".NAME" / "[I]" to the message path; returns the old length. */
static size_t path_push(struct conv *cv, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static size_t
path_push(struct conv *cv, const char *fmt, ...)
{
	size_t old = strlen(cv->path);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cv->path + old, sizeof(cv->path) - old, fmt, ap);
	va_end(ap);
	return old;
}

static int
set_str(struct conv *cv, Box__PolicyValue *v, const char *s, size_t len)
{
	if (len > STR_MAX)
		return fail(cv, "a string over 256 KiB");
	v->kind_case = BOX__POLICY_VALUE__KIND_STR;
	v->str = pool_strdup(cv->pool, s);
	return v->str ? 0 : -ENOMEM;
}

/*
 * A member of object VAL spelled like one of record SCHEMA's typed properties
 * (at CHILD_DEPTH) but for letter case: refused, since a server that folds
 * keys (Go's encoding/json) reads it as that property, and the broker would
 * decide without it. One fold per member (the properties folded into a hash
 * first), so a frame of many members costs no more than its size.
 */
static int
case_variants(struct conv *cv, const json_t *schema, unsigned child_depth, const json_t *val)
{
	json_t *folded = json_object(), *sub, *a;
	struct prop_iter pi = { 0 };
	const char *prop, *key;
	int r = 0;

	if (!folded)
		return -ENOMEM;
	while ((prop = next_prop(schema, child_depth, &pi, &sub)) && r == 0) {
		char *f = mcp_key_fold(prop);
		if (!f || json_object_set_new(folded, f, json_string(prop)) < 0)
			r = -ENOMEM;
		free(f);
	}
	json_t *props = json_object_get(schema, "properties");
	json_object_foreach ((json_t *)val, key, a) {
		if (r != 0)
			break;
		if (json_object_get(props, key))
			continue;
		char *f = mcp_key_fold(key);
		if (!f) {
			r = -ENOMEM;
			break;
		}
		const char *like = json_string_value(json_object_get(folded, f));
		free(f);
		if (like) {
			size_t old = path_push(cv, "%s%s", cv->path[0] ? "." : "", key);
			r = fail(cv, "spelled like the schema's '%s' but for letter case", like);
			cv->path[old] = 0;
		}
	}
	json_decref(folded);
	return r;
}

/*
 * Record fields out of object VAL: with SCHEMA (a record schema at DEPTH),
 * its typed properties; with SCHEMA NULL (no type to follow), every member
 * with a valid field name, up to MCP_TOOL_FIELDS_MAX.
 */
static int
convert_fields(struct conv *cv, const json_t *schema, const json_t *val, unsigned depth,
	       Box__PolicyField ***fields, size_t *n)
{
	size_t most = json_object_size(val);
	if (most > MCP_TOOL_FIELDS_MAX)
		most = MCP_TOOL_FIELDS_MAX;
	*fields = pool_alloc(cv->pool, (most ? most : 1) * sizeof(**fields));
	*n = 0;
	if (!*fields)
		return -ENOMEM;
	if (schema) {
		struct prop_iter pi = { 0 };
		json_t *sub;
		const char *key;
		int cr = case_variants(cv, schema, depth + 1, val);
		if (cr < 0)
			return cr;
		while ((key = next_prop(schema, depth + 1, &pi, &sub))) {
			json_t *a = json_object_get(val, key);
			if (!a || json_is_null(a))
				continue; /* absent */
			Box__PolicyValue *pv;
			size_t old = path_push(cv, "%s%s", cv->path[0] ? "." : "", key);
			int r = convert(cv, sub, classify(sub, depth + 1), a, depth + 1, &pv);
			cv->path[old] = 0;
			if (r < 0)
				return r;
			Box__PolicyField *f = pool_alloc(cv->pool, sizeof(*f));
			if (!f)
				return -ENOMEM;
			box__policy_field__init(f);
			f->name = pool_strdup(cv->pool, key);
			if (!f->name)
				return -ENOMEM;
			f->value = pv;
			(*fields)[(*n)++] = f;
		}
		return 0;
	}
	const char *key;
	json_t *a;
	json_object_foreach ((json_t *)val, key, a) {
		if (*n == most || !field_name_ok(key) || json_is_null(a))
			continue;
		Box__PolicyValue *pv;
		size_t old = path_push(cv, "%s%s", cv->path[0] ? "." : "", key);
		int r = convert(cv, NULL, K_NONE, a, depth + 1, &pv);
		cv->path[old] = 0;
		if (r < 0)
			return r;
		Box__PolicyField *f = pool_alloc(cv->pool, sizeof(*f));
		if (!f)
			return -ENOMEM;
		box__policy_field__init(f);
		f->name = pool_strdup(cv->pool, key);
		if (!f->name)
			return -ENOMEM;
		f->value = pv;
		(*fields)[(*n)++] = f;
	}
	return 0;
}

/*
 * VAL (not null) as a PolicyValue at DEPTH, following kind K of SCHEMA when
 * VAL's JSON type fits it, else keeping VAL's own shape (K_NONE: untyped)
 * so that policyd sees the mismatch.
 */
static int
convert(struct conv *cv, const json_t *schema, enum kind k, const json_t *val, unsigned depth,
	Box__PolicyValue **out)
{
	Box__PolicyValue *v = new_value(cv);
	char num[40];

	if (!v)
		return -ENOMEM;
	*out = v;
	if (depth > MCP_TYPE_DEPTH_MAX)
		return fail(cv, "nested deeper than %d levels", MCP_TYPE_DEPTH_MAX);
	/* A number field: policyd sees the number's decimal text, so nothing else may pass. */
	if (k == K_NUMBER) {
		if (!json_is_number(val))
			return fail(cv, "%s for a number field", json_kind_name(val));
		number_text(val, num);
		return set_str(cv, v, num, strlen(num));
	}
	switch (json_typeof(val)) {
	case JSON_STRING:
		return set_str(cv, v, json_string_value(val), json_string_length(val));
	case JSON_INTEGER:
		v->kind_case = BOX__POLICY_VALUE__KIND_INTEGER;
		v->integer = json_integer_value(val);
		return 0;
	case JSON_REAL:
		/* No PolicyValue is a real: its text, unless a String field would take it. */
		if (k == K_STRING)
			return fail(cv, "a number for a string field");
		number_text(val, num);
		return set_str(cv, v, num, strlen(num));
	case JSON_TRUE:
	case JSON_FALSE:
		v->kind_case = BOX__POLICY_VALUE__KIND_BOOLEAN;
		v->boolean = json_is_true(val);
		return 0;
	case JSON_ARRAY: {
		size_t n = json_array_size(val);
		if (depth >= MCP_TYPE_DEPTH_MAX)
			return fail(cv, "nested deeper than %d levels", MCP_TYPE_DEPTH_MAX);
		if (n > SET_MAX)
			return fail(cv, "an array of more than %d elements", SET_MAX);
		const json_t *items = k == K_SET ? json_object_get(schema, "items") : NULL;
		enum kind ik = items ? classify(items, depth + 1) : K_NONE;
		Box__PolicyValueSet *set = pool_alloc(cv->pool, sizeof(*set));
		if (!set)
			return -ENOMEM;
		box__policy_value_set__init(set);
		set->elems = pool_alloc(cv->pool, (n ? n : 1) * sizeof(*set->elems));
		if (!set->elems)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			const json_t *e = json_array_get(val, i);
			size_t old = path_push(cv, "[%zu]", i);
			int r = json_is_null(e) ? fail(cv, "null in an array") :
						  convert(cv, items, ik, e, depth + 1, &set->elems[i]);
			cv->path[old] = 0;
			if (r < 0)
				return r;
			set->n_elems++;
		}
		v->kind_case = BOX__POLICY_VALUE__KIND_SET;
		v->set = set;
		return 0;
	}
	case JSON_OBJECT: {
		if (depth >= MCP_TYPE_DEPTH_MAX)
			return fail(cv, "nested deeper than %d levels", MCP_TYPE_DEPTH_MAX);
		Box__PolicyValueRecord *rec = pool_alloc(cv->pool, sizeof(*rec));
		if (!rec)
			return -ENOMEM;
		box__policy_value_record__init(rec);
		int r = convert_fields(cv, k == K_RECORD ? schema : NULL, val, depth, &rec->fields,
				       &rec->n_fields);
		if (r < 0)
			return r;
		v->kind_case = BOX__POLICY_VALUE__KIND_RECORD;
		v->record = rec;
		return 0;
	}
	case JSON_NULL:
	default:
		return fail(cv, "null");
	}
}

int
mcp_args_build(const struct mcp_tool *tool, const json_t *arguments, struct mcp_args *out,
	       char *err, size_t errlen)
{
	struct pool *pool = calloc(1, sizeof(*pool));
	struct conv cv = { .pool = pool, .err = err, .errlen = errlen };

	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = 0;
	if (!pool)
		return -ENOMEM;
	out->pool = pool;
	if (arguments && !json_is_null(arguments) && !json_is_object(arguments)) {
		if (err && errlen)
			snprintf(err, errlen, "arguments must be an object");
		return -EINVAL;
	}
	if (tool->ptool.n_fields == 0 || !json_is_object(arguments))
		return 0;
	out->fields = pool_alloc(pool, tool->ptool.n_fields * sizeof(*out->fields));
	if (!out->fields)
		return -ENOMEM;
	json_t *props = json_object_get(tool->input_schema, "properties");
	int r = case_variants(&cv, tool->input_schema, 0, arguments);
	if (r < 0)
		return r;
	/* Exactly the fields policyd was told about, typed the same way. */
	for (size_t i = 0; i < tool->ptool.n_fields; i++) {
		const char *name = tool->ptool.fields[i]->name;
		const json_t *sub = json_object_get(props, name);
		const json_t *a = json_object_get(arguments, name);
		if (!a || json_is_null(a))
			continue;
		snprintf(cv.path, sizeof(cv.path), "%s", name);
		Box__PolicyValue *pv;
		r = convert(&cv, sub, classify(sub, 0), a, 0, &pv);
		if (r < 0)
			return r;
		Box__PolicyField *f = pool_alloc(pool, sizeof(*f));
		if (!f)
			return -ENOMEM;
		box__policy_field__init(f);
		f->name = pool_strdup(pool, name);
		if (!f->name)
			return -ENOMEM;
		f->value = pv;
		out->fields[out->n_fields++] = f;
	}
	return 0;
}

void
mcp_args_free(struct mcp_args *a)
{
	if (!a)
		return;
	pool_free(a->pool);
	free(a->pool);
	memset(a, 0, sizeof(*a));
}
