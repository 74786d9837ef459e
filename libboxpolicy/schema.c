/* SPDX-License-Identifier: Apache-2.0 */
/*
 * schema.c — the action vocabulary: the fixed Box actions of docs/box-policy.5.md
 * and the MCP tool namespaces added at run time.
 *
 * Trusts: nothing; namespace, tool and field names and type texts come from
 * MCP servers and are checked here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct fixed_field {
	const char *name;
	int type; /* TY_* ; TY_ENTITY uses etype; TY_SET is Set<String> */
	const char *etype;
	bool optional;
};

#define F_END { NULL, 0, NULL, false }

static const struct fixed_field fs_read[] = {
	{ "path", TY_STRING, NULL, false },
	{ "operation", TY_ENTITY, "Box::FsReadOperation", false },
	F_END,
};
static const struct fixed_field fs_write[] = {
	{ "path", TY_STRING, NULL, false },
	{ "operation", TY_ENTITY, "Box::FsWriteOperation", false },
	F_END,
};
static const struct fixed_field fs_delete[] = {
	{ "path", TY_STRING, NULL, false },
	{ "operation", TY_ENTITY, "Box::FsDeleteOperation", false },
	F_END,
};
static const struct fixed_field fs_move[] = {
	{ "path", TY_STRING, NULL, false },
	{ "operation", TY_ENTITY, "Box::FsMoveOperation", false },
	F_END,
};
static const struct fixed_field fs_other[] = {
	{ "path", TY_STRING, NULL, false },
	{ "operation", TY_ENTITY, "Box::FsOtherOperation", false },
	F_END,
};
static const struct fixed_field net_connect[] = {
	{ "host", TY_STRING, NULL, false },
	{ "ip", TY_STRING, NULL, true },
	{ "port", TY_LONG, NULL, false },
	F_END,
};
static const struct fixed_field http_request[] = {
	{ "host", TY_STRING, NULL, false },
	{ "port", TY_LONG, NULL, false },
	{ "method", TY_STRING, NULL, false },
	{ "path", TY_STRING, NULL, false },
	{ "body_bytes", TY_LONG, NULL, false },
	{ "intercepted", TY_BOOL, NULL, false },
	F_END,
};
static const struct fixed_field shell_exec[] = {
	{ "command", TY_STRING, NULL, false },
	{ "program", TY_STRING, NULL, false },
	{ "arg1", TY_STRING, NULL, true },
	{ "arg2", TY_STRING, NULL, true },
	{ "arg_count", TY_LONG, NULL, false },
	{ "cwd", TY_STRING, NULL, false },
	F_END,
};
static const struct fixed_field shell_spawn[] = {
	{ "command", TY_STRING, NULL, false },
	{ "program", TY_STRING, NULL, false },
	{ "program_path", TY_STRING, NULL, false },
	{ "credential_reads", TY_SET, NULL, true },
	{ "arg1", TY_STRING, NULL, true },
	{ "arg2", TY_STRING, NULL, true },
	{ "arg_count", TY_LONG, NULL, false },
	{ "cwd", TY_STRING, NULL, false },
	F_END,
};
static const struct fixed_field mcp_call[] = {
	{ "server", TY_STRING, NULL, false },
	{ "method", TY_STRING, NULL, false },
	{ "tool", TY_STRING, NULL, true },
	{ "prompt", TY_STRING, NULL, true },
	{ "uri", TY_STRING, NULL, true },
	F_END,
};
static const struct fixed_field out_fs[] = {
	{ "result", TY_ENTITY, "Box::FsResponseResult", false },
	F_END,
};
static const struct fixed_field out_status[] = {
	{ "status", TY_LONG, NULL, false },
	F_END,
};

static const struct {
	const char *id;
	const struct fixed_field *input, *output;
	enum label_kind label;
} fixed_actions[] = {
	{ "fs:read", fs_read, out_fs, LABEL_PATH },
	{ "fs:write", fs_write, out_fs, LABEL_PATH },
	{ "fs:delete", fs_delete, out_fs, LABEL_PATH },
	{ "fs:move", fs_move, out_fs, LABEL_PATH },
	{ "fs:other", fs_other, out_fs, LABEL_PATH },
	{ "net:connect", net_connect, NULL, LABEL_HOSTPORT },
	{ "http:request", http_request, out_status, LABEL_HTTP },
	{ "shell:exec", shell_exec, out_status, LABEL_PROGRAM },
	{ "shell:spawn", shell_spawn, out_status, LABEL_PROGRAM_PATH },
	{ "mcp:call", mcp_call, NULL, LABEL_MCP },
};

static const char *const read_ops[] = { "read_content", "read_metadata", "enumerate",
					"read_link", "change_dir", "exec" };
static const char *const write_ops[] = { "write_content", "create_dir", "set_permissions",
					 "symlink" };
static const char *const delete_ops[] = { "remove_file", "remove_dir" };
static const char *const move_ops[] = { "rename" };
static const char *const other_ops[] = { "other" };
static const char *const results[] = { "completed", "descriptor_issued", "indeterminate" };

#define ENUM(t, a) { t, sizeof(a) / sizeof(a[0]), a }
static const struct {
	const char *etype;
	size_t n;
	const char *const *ids;
} fixed_enums[] = {
	ENUM("Box::FsReadOperation", read_ops),   ENUM("Box::FsWriteOperation", write_ops),
	ENUM("Box::FsDeleteOperation", delete_ops), ENUM("Box::FsMoveOperation", move_ops),
	ENUM("Box::FsOtherOperation", other_ops), ENUM("Box::FsResponseResult", results),
};

static const struct type string_type = { .k = TY_STRING };

static int
build_rtype(struct arena *ar, const struct fixed_field *f, struct rtype *rt)
{
	size_t n = 0;
	while (f[n].name)
		n++;
	rt->attrs = arena_alloc(ar, (n ? n : 1) * sizeof(*rt->attrs));
	if (!rt->attrs)
		return -ENOMEM;
	rt->n = n;
	for (size_t i = 0; i < n; i++) {
		struct rattr *a = &rt->attrs[i];
		a->name = f[i].name;
		a->optional = f[i].optional;
		a->ty.k = (uint8_t)f[i].type;
		a->ty.etype = f[i].etype;
		if (f[i].type == TY_SET)
			a->ty.elem = &string_type;
	}
	return 0;
}

static int
add_action(struct bp_schema *s, struct s_action **ret)
{
	if (s->n_actions == s->cap_actions) {
		size_t cap = s->cap_actions ? s->cap_actions * 2 : 16;
		if (cap > 1u << 20)
			return -E2BIG;
		struct s_action *na = realloc(s->actions, cap * sizeof(*na));
		if (!na)
			return -ENOMEM;
		s->actions = na;
		s->cap_actions = cap;
	}
	*ret = &s->actions[s->n_actions++];
	memset(*ret, 0, sizeof(**ret));
	return 0;
}

int
schema_init_fixed(struct bp_schema *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < sizeof(fixed_actions) / sizeof(fixed_actions[0]); i++) {
		struct s_action *a;
		int r = add_action(s, &a);
		if (r < 0)
			return r;
		a->ns = "Box";
		a->id = fixed_actions[i].id;
		a->etype = "Box::Action";
		a->label = fixed_actions[i].label;
		r = build_rtype(&s->ar, fixed_actions[i].input, &a->input);
		if (r < 0)
			return r;
		if (fixed_actions[i].output) {
			a->has_output = true;
			r = build_rtype(&s->ar, fixed_actions[i].output, &a->output);
			if (r < 0)
				return r;
		}
	}
	s->n_enums = sizeof(fixed_enums) / sizeof(fixed_enums[0]);
	s->enums = arena_alloc(&s->ar, s->n_enums * sizeof(*s->enums));
	if (!s->enums)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_enums; i++) {
		s->enums[i].etype = fixed_enums[i].etype;
		s->enums[i].n = fixed_enums[i].n;
		s->enums[i].ids = (const char **)fixed_enums[i].ids;
	}
	return 0;
}

void
schema_fini(struct bp_schema *s)
{
	free(s->actions);
	for (size_t i = 0; i < s->n_ns; i++)
		free(s->ns[i]);
	free(s->ns);
	free(s->ns_pending);
	for (size_t i = 0; s->ns_failed && i < s->n_ns; i++)
		free(s->ns_failed[i]);
	free(s->ns_failed);
	arena_free(&s->ar);
	memset(s, 0, sizeof(*s));
}

int
bp_schema_new(struct bp_schema **ret)
{
	struct bp_schema *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	int r = schema_init_fixed(s);
	if (r < 0) {
		schema_fini(s);
		free(s);
		return r;
	}
	*ret = s;
	return 0;
}

void
bp_schema_free(struct bp_schema *s)
{
	if (!s)
		return;
	schema_fini(s);
	free(s);
}

static bool
valid_ident(const char *s)
{
	if (!s || !*s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' ||
		      (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

bool
schema_ns_known(const struct bp_schema *s, const char *ns, bool *pending)
{
	for (size_t i = 0; i < s->n_ns; i++)
		if (strcmp(s->ns[i], ns) == 0) {
			if (pending)
				*pending = s->ns_pending[i];
			return true;
		}
	return false;
}

const char *
schema_ns_failed(const struct bp_schema *s, const char *ns)
{
	for (size_t i = 0; i < s->n_ns; i++)
		if (strcmp(s->ns[i], ns) == 0)
			return s->ns_failed[i];
	return NULL;
}

static int
declare_ns(struct bp_schema *s, const char *ns, bool pending)
{
	if (!valid_ident(ns) || strcmp(ns, "Box") == 0 || strlen(ns) > 256)
		return -EINVAL;
	for (size_t i = 0; i < s->n_ns; i++)
		if (strcmp(s->ns[i], ns) == 0) {
			if (!pending) {
				/* Its tools are declared: no longer pending, nor failed. */
				s->ns_pending[i] = false;
				free(s->ns_failed[i]);
				s->ns_failed[i] = NULL;
			}
			return 0;
		}
	if (s->n_ns == s->cap_ns) {
		size_t cap = s->cap_ns ? s->cap_ns * 2 : 8;
		if (cap > 4096)
			return -E2BIG;
		char **nn = realloc(s->ns, cap * sizeof(*nn));
		if (!nn)
			return -ENOMEM;
		s->ns = nn;
		bool *np = realloc(s->ns_pending, cap * sizeof(*np));
		if (!np)
			return -ENOMEM;
		s->ns_pending = np;
		char **nf = realloc(s->ns_failed, cap * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		s->ns_failed = nf;
		s->cap_ns = cap;
	}
	s->ns[s->n_ns] = strdup(ns);
	if (!s->ns[s->n_ns])
		return -ENOMEM;
	s->ns_pending[s->n_ns] = pending;
	s->ns_failed[s->n_ns] = NULL;
	s->n_ns++;
	return 0;
}

int
bp_schema_add_namespace(struct bp_schema *s, const char *ns)
{
	return declare_ns(s, ns, false);
}

int
bp_schema_add_pending(struct bp_schema *s, const char *ns)
{
	return declare_ns(s, ns, true);
}

/* Longest DETAIL kept: the message it goes into is cut at BP_MAX_MESSAGE anyway. */
#define FAILED_DETAIL_MAX 2048

int
bp_schema_add_failed(struct bp_schema *s, const char *ns, const char *server,
		     const char *detail)
{
	if (!s || !server || !detail)
		return -EINVAL;
	for (size_t i = 0; i < s->n_actions; i++)
		if (strcmp(s->actions[i].ns, ns) == 0)
			return -EEXIST; /* its tools are declared: it cannot also have failed */
	int r = declare_ns(s, ns, true);
	if (r < 0)
		return r;
	char *why = NULL;
	if (asprintf(&why, "The tool schema of [mcp.%.64s] failed the policy check (%.*s)",
		     server, FAILED_DETAIL_MAX, detail) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_ns; i++)
		if (strcmp(s->ns[i], ns) == 0) {
			free(s->ns_failed[i]);
			s->ns_failed[i] = why;
			return 0;
		}
	free(why);
	return -ENOENT;
}

const struct s_action *
schema_find_action(const struct bp_schema *s, const char *etype, const char *id, size_t *index)
{
	for (size_t i = 0; i < s->n_actions; i++)
		if (strcmp(s->actions[i].id, id) == 0 && strcmp(s->actions[i].etype, etype) == 0) {
			if (index)
				*index = i;
			return &s->actions[i];
		}
	return NULL;
}

int
bp_schema_add_action(struct bp_schema *s, const char *ns, const char *tool)
{
	if (!tool || !*tool || strlen(tool) > 1024)
		return -EINVAL;
	int r = declare_ns(s, ns, false);
	if (r < 0)
		return r;
	char etype[300];
	snprintf(etype, sizeof(etype), "%s::Action", ns);
	if (schema_find_action(s, etype, tool, NULL))
		return -EEXIST;
	struct s_action *a;
	r = add_action(s, &a);
	if (r < 0)
		return r;
	a->ns = arena_strndup(&s->ar, ns, strlen(ns));
	a->id = arena_strndup(&s->ar, tool, strlen(tool));
	a->etype = arena_strndup(&s->ar, etype, strlen(etype));
	a->label = LABEL_TOOL;
	if (!a->ns || !a->id || !a->etype) {
		s->n_actions--;
		return -ENOMEM;
	}
	return 0;
}

/* Type expressions: Long | String | Bool | Set<T> | { name[?]: T, ... } */
static const char *
skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static const char *
parse_type_at(struct arena *ar, const char *p, struct type *t, int depth)
{
	if (depth > 16)
		return NULL;
	p = skip_ws(p);
	memset(t, 0, sizeof(*t));
	if (strncmp(p, "Long", 4) == 0) {
		t->k = TY_LONG;
		return p + 4;
	}
	if (strncmp(p, "String", 6) == 0) {
		t->k = TY_STRING;
		return p + 6;
	}
	if (strncmp(p, "Bool", 4) == 0) {
		t->k = TY_BOOL;
		return p + 4;
	}
	if (strncmp(p, "Set<", 4) == 0) {
		struct type *elem = arena_alloc(ar, sizeof(*elem));
		if (!elem)
			return NULL;
		p = parse_type_at(ar, p + 4, elem, depth + 1);
		if (!p)
			return NULL;
		p = skip_ws(p);
		if (*p != '>')
			return NULL;
		t->k = TY_SET;
		t->elem = elem;
		return p + 1;
	}
	if (*p == '{') {
		struct rtype *rt = arena_alloc(ar, sizeof(*rt));
		size_t cap = 0;
		if (!rt)
			return NULL;
		p = skip_ws(p + 1);
		while (*p != '}') {
			const char *ns = p;
			while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
			       (*p >= '0' && *p <= '9'))
				p++;
			if (p == ns)
				return NULL;
			size_t nlen = (size_t)(p - ns);
			bool opt = false;
			if (*p == '?') {
				opt = true;
				p++;
			}
			p = skip_ws(p);
			if (*p != ':')
				return NULL;
			if (rt->n == cap) {
				cap = cap ? cap * 2 : 4;
				struct rattr *na = arena_alloc(ar, cap * sizeof(*na));
				if (!na)
					return NULL;
				if (rt->n)
					memcpy(na, rt->attrs, rt->n * sizeof(*na));
				rt->attrs = na;
			}
			struct rattr *a = &rt->attrs[rt->n];
			a->name = arena_strndup(ar, ns, nlen);
			a->optional = opt;
			if (!a->name)
				return NULL;
			for (size_t i = 0; i < rt->n; i++)
				if (strcmp(rt->attrs[i].name, a->name) == 0)
					return NULL;
			p = parse_type_at(ar, p + 1, &a->ty, depth + 1);
			if (!p)
				return NULL;
			rt->n++;
			p = skip_ws(p);
			if (*p == ',')
				p = skip_ws(p + 1);
			else if (*p != '}')
				return NULL;
		}
		t->k = TY_RECORD;
		t->rec = rt;
		return p + 1;
	}
	return NULL;
}

int
schema_parse_type(struct arena *ar, const char *text, struct type *ret)
{
	const char *end = parse_type_at(ar, text, ret, 0);
	if (!end || *skip_ws(end))
		return -EINVAL;
	return 0;
}

int
bp_schema_add_field(struct bp_schema *s, const char *ns, const char *tool, const char *name,
		    const char *type, bool optional)
{
	char etype[300];
	size_t index;
	if (!name || !*name || strlen(name) > 1024 || !type)
		return -EINVAL;
	snprintf(etype, sizeof(etype), "%s::Action", ns);
	if (!schema_find_action(s, etype, tool, &index))
		return -ENOENT;
	struct s_action *a = &s->actions[index];
	for (size_t i = 0; i < a->input.n; i++)
		if (strcmp(a->input.attrs[i].name, name) == 0)
			return -EEXIST;
	struct type t;
	int r = schema_parse_type(&s->ar, type, &t);
	if (r < 0)
		return r;
	struct rattr *na = arena_alloc(&s->ar, (a->input.n + 1) * sizeof(*na));
	if (!na)
		return -ENOMEM;
	if (a->input.n)
		memcpy(na, a->input.attrs, a->input.n * sizeof(*na));
	na[a->input.n] = (struct rattr){
		.name = arena_strndup(&s->ar, name, strlen(name)), .optional = optional, .ty = t
	};
	if (!na[a->input.n].name)
		return -ENOMEM;
	a->input.attrs = na;
	a->input.n++;
	return 0;
}

/* Deep-copy: the policy keeps its own schema, so callers may free theirs. */
static int
copy_type(struct arena *ar, const struct type *src, struct type *dst);

static int
copy_rtype(struct arena *ar, const struct rtype *src, struct rtype *dst)
{
	dst->n = src->n;
	dst->attrs = arena_alloc(ar, (src->n ? src->n : 1) * sizeof(*dst->attrs));
	if (!dst->attrs)
		return -ENOMEM;
	for (size_t i = 0; i < src->n; i++) {
		dst->attrs[i].optional = src->attrs[i].optional;
		dst->attrs[i].name = arena_strndup(ar, src->attrs[i].name, strlen(src->attrs[i].name));
		if (!dst->attrs[i].name)
			return -ENOMEM;
		int r = copy_type(ar, &src->attrs[i].ty, &dst->attrs[i].ty);
		if (r < 0)
			return r;
	}
	return 0;
}

static int
copy_type(struct arena *ar, const struct type *src, struct type *dst)
{
	*dst = *src;
	if (src->elem) {
		struct type *e = arena_alloc(ar, sizeof(*e));
		if (!e)
			return -ENOMEM;
		int r = copy_type(ar, src->elem, e);
		if (r < 0)
			return r;
		dst->elem = e;
	}
	if (src->rec) {
		struct rtype *rt = arena_alloc(ar, sizeof(*rt));
		if (!rt)
			return -ENOMEM;
		int r = copy_rtype(ar, src->rec, rt);
		if (r < 0)
			return r;
		dst->rec = rt;
	}
	return 0;
}

int
schema_copy(const struct bp_schema *src, struct bp_schema *dst)
{
	int r = schema_init_fixed(dst);
	if (r < 0 || !src)
		return r;
	for (size_t i = 0; i < src->n_ns; i++) {
		r = declare_ns(dst, src->ns[i], src->ns_pending[i]);
		if (r < 0)
			return r;
		if (src->ns_failed[i]) {
			dst->ns_failed[dst->n_ns - 1] = strdup(src->ns_failed[i]);
			if (!dst->ns_failed[dst->n_ns - 1])
				return -ENOMEM;
		}
	}
	for (size_t i = 0; i < src->n_actions; i++) {
		const struct s_action *a = &src->actions[i];
		if (strcmp(a->ns, "Box") == 0)
			continue;
		r = bp_schema_add_action(dst, a->ns, a->id);
		if (r < 0)
			return r;
		struct s_action *d = &dst->actions[dst->n_actions - 1];
		r = copy_rtype(&dst->ar, &a->input, &d->input);
		if (r < 0)
			return r;
	}
	return 0;
}

int
bp_schema_box_field(const struct bp_schema *s, const char *action, const char *field,
		    bool *optional, const char **entity_type)
{
	const struct s_action *a = schema_find_action(s, "Box::Action", action, NULL);
	if (!a)
		return -ENOENT;
	for (size_t i = 0; i < a->input.n; i++)
		if (strcmp(a->input.attrs[i].name, field) == 0) {
			*optional = a->input.attrs[i].optional;
			*entity_type = a->input.attrs[i].ty.k == TY_ENTITY ? a->input.attrs[i].ty.etype
									   : NULL;
			return 0;
		}
	return -ENOENT;
}
