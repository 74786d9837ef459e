/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spec.c — struct box_config → Box__BoxSpec (see spec.h).
 *
 * Every allocation is malloc'd piece by piece in the shape protobuf-c's
 * free_unpacked expects, so box__box_spec__free_unpacked(spec, NULL) frees
 * the whole tree. Out of memory is fatal (boxctl is a one-shot client).
 * Trusts: the loaded config.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "spec.h"
#include "proto/validate.h"

static void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p)
		fatalx("out of memory");
	return p;
}

static char *
xstrdup(const char *s)
{
	char *p = strdup(s ? s : "");
	if (!p)
		fatalx("out of memory");
	return p;
}

static void *
xmemdup(const void *data, size_t len)
{
	void *p = malloc(len ? len : 1);
	if (!p)
		fatalx("out of memory");
	if (len)
		memcpy(p, data, len);
	return p;
}

static Box__CfgStr *
cfg_str(const char *value, unsigned line)
{
	Box__CfgStr *m = xcalloc(1, sizeof(*m));
	box__cfg_str__init(m);
	m->value = xstrdup(value);
	m->line = line;
	return m;
}

/* A string the file wrote (line > 0); NULL for a default. */
static Box__CfgStr *
opt_str(const struct box_str *s)
{
	return s->value && s->src.line ? cfg_str(s->value, s->src.line) : NULL;
}

static Box__CfgU64 *
opt_u64(const struct box_u64 *v)
{
	if (!v->set || !v->src.line)
		return NULL;
	Box__CfgU64 *m = xcalloc(1, sizeof(*m));
	box__cfg_u64__init(m);
	m->value = v->value;
	m->line = v->src.line;
	return m;
}

static Box__CfgBool *
opt_bool(const struct box_bool *v)
{
	if (!v->set || !v->src.line)
		return NULL;
	Box__CfgBool *m = xcalloc(1, sizeof(*m));
	box__cfg_bool__init(m);
	m->value = v->value;
	m->line = v->src.line;
	return m;
}

static Box__CfgPath *
cfg_path(const char *path, unsigned line)
{
	Box__CfgPath *m = xcalloc(1, sizeof(*m));
	box__cfg_path__init(m);
	m->path = xstrdup(path);
	m->line = line;
	return m;
}

static Box__CfgArgv *
cfg_argv(const struct box_command *c)
{
	Box__CfgArgv *m = xcalloc(1, sizeof(*m));
	box__cfg_argv__init(m);
	m->line = c->src.line;
	m->n_argv = c->argc;
	m->argv = xcalloc(c->argc, sizeof(char *));
	for (size_t i = 0; i < c->argc; i++)
		m->argv[i] = xstrdup(i == 0 && c->written0 ? c->written0 : c->argv[i]);
	return m;
}

static Box__CfgEnv *
cfg_env(const struct box_env *e)
{
	size_t n = 0;
	for (size_t i = 0; i < e->n; i++)
		if (e->v[i].set && e->v[i].src.line)
			n++;
	if (!e->src.line && n == 0)
		return NULL;
	Box__CfgEnv *m = xcalloc(1, sizeof(*m));
	box__cfg_env__init(m);
	m->line = e->src.line;
	m->vars = xcalloc(n, sizeof(*m->vars));
	for (size_t i = 0; i < e->n; i++) {
		const struct box_env_var *v = &e->v[i];
		if (!v->set || !v->src.line)
			continue;
		Box__CfgEnvVar *x = xcalloc(1, sizeof(*x));
		box__cfg_env_var__init(x);
		x->name = xstrdup(v->name);
		x->value = xstrdup(v->value);
		x->line = v->src.line;
		m->vars[m->n_vars++] = x;
	}
	return m;
}

static Box__CfgPath **
path_list(const struct box_grant_list *l, size_t *n)
{
	Box__CfgPath **v = xcalloc(l->n, sizeof(*v));
	for (size_t i = 0; i < l->n; i++)
		v[i] = cfg_path(l->v[i].path, l->v[i].src.line);
	*n = l->n;
	return v;
}

static Box__CfgFilesystem *
cfg_filesystem(const struct box_filesystem *fs, bool allow_exec)
{
	bool any = fs->src.line != 0;
	for (int k = 0; k < BOX_FS_KIND_COUNT; k++)
		any = any || fs->lists[k].n;
	if (!any)
		return NULL;
	Box__CfgFilesystem *m = xcalloc(1, sizeof(*m));
	box__cfg_filesystem__init(m);
	m->line = fs->src.line;
	m->read = path_list(&fs->lists[BOX_FS_READ], &m->n_read);
	m->write = path_list(&fs->lists[BOX_FS_WRITE], &m->n_write);
	m->read_file = path_list(&fs->lists[BOX_FS_READ_FILE], &m->n_read_file);
	m->write_file = path_list(&fs->lists[BOX_FS_WRITE_FILE], &m->n_write_file);
	m->deny = path_list(&fs->lists[BOX_FS_DENY], &m->n_deny);
	if (allow_exec)
		m->exec = path_list(&fs->lists[BOX_FS_EXEC], &m->n_exec);
	return m;
}

static Box__CfgNetwork *
cfg_network(const struct box_process *p)
{
	if (!p->network_src.line)
		return NULL;
	Box__CfgNetwork *m = xcalloc(1, sizeof(*m));
	box__cfg_network__init(m);
	m->line = p->network_src.line;
	m->contain_egress = opt_bool(&p->contain_egress);
	return m;
}

static Box__CfgSecret *
cfg_secret(const struct box_secret *s)
{
	if (s->kind == BOX_SECRET_NONE || !s->ref)
		return NULL;
	Box__CfgSecret *m = xcalloc(1, sizeof(*m));
	box__cfg_secret__init(m);
	m->ref = xstrdup(s->ref);
	m->line = s->src.line;
	if (s->value && s->len) {
		m->has_secret_value = 1;
		m->secret_value.data = xmemdup(s->value, s->len);
		m->secret_value.len = s->len;
	}
	return m;
}

static Box__CfgBox *
cfg_box(const struct box_config *cfg, bool *has_policy)
{
	const struct box_box *b = &cfg->box;
	Box__CfgBox *m = xcalloc(1, sizeof(*m));
	box__cfg_box__init(m);
	m->line = b->src.line;
	m->name = cfg_str(b->name.value, b->name.src.line);
	if (b->policy.path) {
		m->policy = cfg_path(b->policy.path, b->policy.src.line);
		*has_policy = true;
	}
	if (b->state_dir.value && b->state_dir.src.line)
		m->state_dir = cfg_path(b->state_dir.value, b->state_dir.src.line);
	if (b->require.set && b->require.src.line) {
		static const struct {
			uint64_t bit;
			Box__Layer layer;
		} layers[] = {
			{ BOX_LAYER_USERNS, BOX__LAYER__LAYER_USERNS },
			{ BOX_LAYER_MOUNTNS, BOX__LAYER__LAYER_MOUNTNS },
			{ BOX_LAYER_NETNS, BOX__LAYER__LAYER_NETNS },
			{ BOX_LAYER_LANDLOCK, BOX__LAYER__LAYER_LANDLOCK },
			{ BOX_LAYER_SECCOMP, BOX__LAYER__LAYER_SECCOMP },
		};
		m->require = xcalloc(5, sizeof(*m->require));
		for (size_t i = 0; i < 5; i++)
			if (b->require.value & layers[i].bit)
				m->require[m->n_require++] = layers[i].layer;
		m->has_require_line = 1;
		m->require_line = b->require.src.line;
	}
	m->timeout_ms = opt_u64(&b->timeout_ms);
	m->show_policy = opt_bool(&b->show_policy);
	if (b->history_sync.set && b->history_sync.src.line &&
	    b->history_sync.value != BOX_HISTORY_SYNC_AUTO) {
		m->has_history_sync = 1;
		m->history_sync = b->history_sync.value == BOX_HISTORY_SYNC_ALWAYS ?
					  BOX__HISTORY_SYNC__HISTORY_SYNC_ALWAYS :
				  b->history_sync.value == BOX_HISTORY_SYNC_BATCH ?
					  BOX__HISTORY_SYNC__HISTORY_SYNC_BATCH :
					  BOX__HISTORY_SYNC__HISTORY_SYNC_OFF;
		m->has_history_sync_line = 1;
		m->history_sync_line = b->history_sync.src.line;
	}
	m->command_timeout_ms = opt_u64(&b->command_timeout_ms);
	m->ask_timeout_ms = opt_u64(&b->ask_timeout_ms);
	if (b->ask.set && b->ask.src.line) {
		struct box_bool ask = { .value = b->ask.value == BOX_ASK_DEFAULT, .set = true,
					.src = b->ask.src };
		m->ask_default = opt_bool(&ask);
	}
	if (b->snapshot.set && b->snapshot.src.line) {
		struct box_bool sn = { .value = b->snapshot.value == 1, .set = true,
				       .src = b->snapshot.src };
		m->snapshot = opt_bool(&sn);
	}
	m->snapshot_max = opt_u64(&b->snapshot_max);
	return m;
}

static Box__CfgAgent *
cfg_agent(const struct box_config *cfg)
{
	const struct box_agent *a = &cfg->agent;
	Box__CfgAgent *m = xcalloc(1, sizeof(*m));
	box__cfg_agent__init(m);
	m->line = a->src.line;
	m->command = cfg_argv(&a->proc.command);
	if (a->person_shell) {
		m->has_person_shell = 1;
		m->person_shell = 1;
	}
	if (a->proc.workspace.value && a->proc.workspace.src.line)
		m->workspace = cfg_path(a->proc.workspace.value, a->proc.workspace.src.line);
	if (a->user.set && a->user.name && a->user.src.line)
		m->user = cfg_str(a->user.name, a->user.src.line);
	m->memory_max = opt_u64(&a->memory_max);
	m->pids_max = opt_u64(&a->pids_max);
	m->nofile = opt_u64(&a->proc.nofile);
	m->nproc = opt_u64(&a->proc.nproc);
	m->exec_system = opt_bool(&a->exec_system);
	if (a->supervise.set && a->supervise.src.line) {
		m->has_supervise = 1;
		m->supervise = a->supervise.value == BOX_SUPERVISE_FS ? BOX__SUPERVISE__SUPERVISE_FS :
									  BOX__SUPERVISE__SUPERVISE_NONE;
		m->has_supervise_line = 1;
		m->supervise_line = a->supervise.src.line;
	}
	m->env = cfg_env(&a->proc.env);
	m->filesystem = cfg_filesystem(&a->proc.fs, true);
	return m;
}

static Box__CfgTool *
cfg_tool(const struct box_tool *t)
{
	Box__CfgTool *m = xcalloc(1, sizeof(*m));
	box__cfg_tool__init(m);
	m->name = xstrdup(t->name);
	m->line = t->src.line;
	m->command = cfg_argv(&t->proc.command);
	if (t->proc.workspace.value && t->proc.workspace.src.line)
		m->workspace = cfg_path(t->proc.workspace.value, t->proc.workspace.src.line);
	m->env = cfg_env(&t->proc.env);
	m->filesystem = cfg_filesystem(&t->proc.fs, false);
	m->network = cfg_network(&t->proc);
	m->nofile = opt_u64(&t->proc.nofile);
	m->nproc = opt_u64(&t->proc.nproc);
	if (t->supervise.set && t->supervise.src.line) {
		m->has_supervise = 1;
		m->supervise = t->supervise.value == BOX_SUPERVISE_FS ? BOX__SUPERVISE__SUPERVISE_FS :
									  BOX__SUPERVISE__SUPERVISE_NONE;
		m->has_supervise_line = 1;
		m->supervise_line = t->supervise.src.line;
	}
	return m;
}

static Box__Placement
placement_of(int v)
{
	switch (v) {
	case BOX_PLACEMENT_BASIC_AUTH:
		return BOX__PLACEMENT__PLACEMENT_BASIC_AUTH;
	case BOX_PLACEMENT_QUERY_PARAM:
		return BOX__PLACEMENT__PLACEMENT_QUERY_PARAM;
	default:
		return BOX__PLACEMENT__PLACEMENT_HEADER;
	}
}

static Box__CfgEgress *
cfg_egress(const struct box_egress *e)
{
	Box__CfgEgress *m = xcalloc(1, sizeof(*m));
	box__cfg_egress__init(m);
	m->name = xstrdup(e->name);
	m->line = e->src.line;
	m->destinations = xcalloc(e->n_dest, sizeof(*m->destinations));
	for (size_t i = 0; i < e->n_dest; i++)
		m->destinations[m->n_destinations++] =
			cfg_str(e->dest[i].spelling, e->dest[i].src.line);
	m->secret = cfg_secret(&e->secret);
	m->variable = opt_str(&e->variable);
	if (e->placement.set && e->placement.src.line) {
		m->has_placement = 1;
		m->placement = placement_of(e->placement.value);
		m->has_placement_line = 1;
		m->placement_line = e->placement.src.line;
	}
	m->header = opt_str(&e->header);
	m->prefix = opt_str(&e->prefix);
	m->param = opt_str(&e->param);
	if (e->inject.set && e->inject.src.line) {
		m->has_inject = 1;
		m->inject = e->inject.value == BOX_INJECT_ALWAYS ? BOX__INJECT__INJECT_ALWAYS :
								  BOX__INJECT__INJECT_PLACEHOLDER;
		m->has_inject_line = 1;
		m->inject_line = e->inject.src.line;
	}
	m->placeholder_prefix = opt_str(&e->placeholder_prefix);
	if (e->n_sandboxes) {
		m->sandboxes = xcalloc(e->n_sandboxes, sizeof(*m->sandboxes));
		for (size_t i = 0; i < e->n_sandboxes; i++)
			m->sandboxes[m->n_sandboxes++] = xstrdup(e->sandboxes[i]);
		m->has_sandboxes_line = 1;
		m->sandboxes_line = e->sandboxes_src.line;
	}
	return m;
}

static Box__CfgMcp *
cfg_mcp(const struct box_mcp *x)
{
	Box__CfgMcp *m = xcalloc(1, sizeof(*m));
	box__cfg_mcp__init(m);
	m->name = xstrdup(x->name);
	m->line = x->src.line;
	m->type = x->type.value == BOX_MCP_HTTP ? BOX__MCP_TYPE__MCP_TYPE_HTTP :
						  BOX__MCP_TYPE__MCP_TYPE_STDIO;
	if (x->type.src.line) {
		m->has_type_line = 1;
		m->type_line = x->type.src.line;
	}
	m->allow_tool_changes = opt_bool(&x->allow_tool_changes);
	m->max_frame = opt_u64(&x->max_frame);
	m->call_timeout_ms = opt_u64(&x->call_timeout_ms);
	if (x->type.value == BOX_MCP_STDIO) {
		m->command = cfg_argv(&x->proc.command);
		m->alias = opt_str(&x->alias);
		m->env = cfg_env(&x->proc.env);
		m->filesystem = cfg_filesystem(&x->proc.fs, false);
		m->network = cfg_network(&x->proc);
		if (x->supervise.set && x->supervise.src.line) {
			m->has_supervise = 1;
			m->supervise = x->supervise.value == BOX_SUPERVISE_FS ?
					       BOX__SUPERVISE__SUPERVISE_FS :
					       BOX__SUPERVISE__SUPERVISE_NONE;
			m->has_supervise_line = 1;
			m->supervise_line = x->supervise.src.line;
		}
	} else {
		m->url = opt_str(&x->url);
		m->secret = cfg_secret(&x->secret);
		if (x->placement.set && x->placement.src.line) {
			m->has_placement = 1;
			m->placement = placement_of(x->placement.value);
			m->has_placement_line = 1;
			m->placement_line = x->placement.src.line;
		}
		m->header = opt_str(&x->header);
		m->prefix = opt_str(&x->prefix);
	}
	return m;
}

static Box__CfgTelemetry *
cfg_telemetry(const struct box_telemetry *x)
{
	Box__CfgTelemetry *m = xcalloc(1, sizeof(*m));
	box__cfg_telemetry__init(m);
	m->name = xstrdup(x->name);
	m->line = x->src.line;
	m->kind = x->kind.value == BOX_TELEMETRY_OTLP ? BOX__TELEMETRY_KIND__TELEMETRY_KIND_OTLP :
							BOX__TELEMETRY_KIND__TELEMETRY_KIND_FILE;
	m->destination = cfg_str(x->destination.value, x->destination.src.line);
	m->include = (uint32_t)x->include.value;
	if (x->include.set && x->include.src.line) {
		m->has_include_line = 1;
		m->include_line = x->include.src.line;
	}
	if (x->kind.value != BOX_TELEMETRY_OTLP)
		return m;
	if (x->protocol.set && x->protocol.src.line) {
		m->has_protocol = 1;
		m->protocol = x->protocol.value == BOX_TELEMETRY_JSON ?
				      BOX__TELEMETRY_PROTOCOL__TELEMETRY_PROTOCOL_JSON :
				      BOX__TELEMETRY_PROTOCOL__TELEMETRY_PROTOCOL_PROTOBUF;
		m->has_protocol_line = 1;
		m->protocol_line = x->protocol.src.line;
	}
	m->secret = cfg_secret(&x->secret);
	if (x->placement.set && x->placement.src.line) {
		m->has_placement = 1;
		m->placement = placement_of(x->placement.value);
		m->has_placement_line = 1;
		m->placement_line = x->placement.src.line;
	}
	m->header = opt_str(&x->header);
	m->prefix = opt_str(&x->prefix);
	return m;
}

static Box__CfgGateway *
cfg_gateway(const struct box_gateway *g)
{
	if (!g->src.line)
		return NULL;
	Box__CfgGateway *m = xcalloc(1, sizeof(*m));
	box__cfg_gateway__init(m);
	m->line = g->src.line;
	m->port = opt_u64(&g->port);
	m->connect_timeout_ms = opt_u64(&g->connect_timeout_ms);
	m->idle_timeout_ms = opt_u64(&g->idle_timeout_ms);
	m->max_connections = opt_u64(&g->max_connections);
	m->max_request_body = opt_u64(&g->max_request_body);
	if (g->upstream_ca.path) {
		m->upstream_ca = cfg_path(g->upstream_ca.path, g->upstream_ca.src.line);
		m->has_upstream_ca_pem = 1;
		m->upstream_ca_pem.data = xmemdup(g->upstream_ca.data, g->upstream_ca.len);
		m->upstream_ca_pem.len = g->upstream_ca.len;
	}
	m->resolver = opt_str(&g->resolver);
	if (g->hosts_file.path) {
		m->hosts_file = cfg_path(g->hosts_file.path, g->hosts_file.src.line);
		m->has_hosts_file_text = 1;
		m->hosts_file_text.data = xmemdup(g->hosts_file.data, g->hosts_file.len);
		m->hosts_file_text.len = g->hosts_file.len;
	}
	m->allow_host_loopback = opt_bool(&g->allow_host_loopback);
	m->passthrough = xcalloc(g->n_passthrough ? g->n_passthrough : 1, sizeof(*m->passthrough));
	for (size_t i = 0; i < g->n_passthrough; i++)
		m->passthrough[m->n_passthrough++] =
			cfg_str(g->passthrough[i].spelling, g->passthrough[i].src.line);
	return m;
}

static Box__Caller *
cfg_caller(const char *cwd)
{
	static const char *const inherited[] = { "TERM", "LANG", "TZ" };
	Box__Caller *m = xcalloc(1, sizeof(*m));
	box__caller__init(m);
	m->cwd = xstrdup(cwd);
	/* No PATH: the caller's PATH resolves nothing in a box (docs/box.ini.5.md `command`). */
	m->inherit = xcalloc(3, sizeof(*m->inherit));
	for (size_t i = 0; i < 3; i++) {
		const char *v = getenv(inherited[i]);
		if (!v || strlen(v) > 4096)
			continue;
		bool ctl = false;
		for (const char *p = v; *p; p++)
			ctl = ctl || (unsigned char)*p < 0x20 || *p == 0x7f;
		if (ctl)
			continue;
		Box__CfgEnvVar *x = xcalloc(1, sizeof(*x));
		box__cfg_env_var__init(x);
		x->name = xstrdup(inherited[i]);
		x->value = xstrdup(v);
		m->inherit[m->n_inherit++] = x;
	}
	return m;
}

int
box_spec_from_config(const struct box_config *cfg, const char *cwd, Box__BoxSpec **ret)
{
	Box__BoxSpec *s = xcalloc(1, sizeof(*s));
	bool has_policy = false;

	box__box_spec__init(s);
	s->files = xcalloc(2, sizeof(char *));
	s->files[s->n_files++] = xstrdup(cfg->abs_path ? cfg->abs_path : cfg->path);
	s->box = cfg_box(cfg, &has_policy);
	if (has_policy) {
		s->files[s->n_files++] = xstrdup(cfg->box.policy.path);
		s->has_policy_text = 1;
		s->policy_text.data = xmemdup(cfg->box.policy.data, cfg->box.policy.len);
		s->policy_text.len = cfg->box.policy.len;
	}
	s->agent = cfg_agent(cfg);
	s->tools = xcalloc(cfg->n_tools, sizeof(*s->tools));
	for (size_t i = 0; i < cfg->n_tools; i++)
		s->tools[s->n_tools++] = cfg_tool(&cfg->tools[i]);
	s->egress = xcalloc(cfg->n_egress, sizeof(*s->egress));
	for (size_t i = 0; i < cfg->n_egress; i++)
		s->egress[s->n_egress++] = cfg_egress(&cfg->egress[i]);
	s->mcp = xcalloc(cfg->n_mcp, sizeof(*s->mcp));
	for (size_t i = 0; i < cfg->n_mcp; i++)
		s->mcp[s->n_mcp++] = cfg_mcp(&cfg->mcp[i]);
	s->telemetry = xcalloc(cfg->n_telemetry, sizeof(*s->telemetry));
	for (size_t i = 0; i < cfg->n_telemetry; i++)
		s->telemetry[s->n_telemetry++] = cfg_telemetry(&cfg->telemetry[i]);
	s->gateway = cfg_gateway(&cfg->gateway);
	s->caller = cfg_caller(cwd);
	*ret = s;
	return 0;
}

void
box_spec_free(Box__BoxSpec *spec)
{
	if (!spec)
		return;
	box_spec_redact(spec);
	box__box_spec__free_unpacked(spec, NULL);
}
