/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config_print.c — the normalized box.ini that `boxctl check` prints (docs/boxctl.1.md).
 *
 * Canonical INI: sections in a fixed order ([box], [agent], [agent.env],
 * [agent.filesystem], tools, egress, mcp, telemetry, [gateway]; families sorted by
 * name), every key with its effective value (defaults included, a key
 * whose default is "none" left out), one list entry per line, ~ expanded,
 * sizes in bytes, durations in ms, `command` re-quoted only where a word
 * needs it, secrets by reference only. The output is itself a valid box.ini
 * that loads to the same configuration. What box adds is shown as comments:
 * implicit exec grants (the command file and its #! chain), the agent's
 * execve rule, the policy's mask, and in each tool's and server's
 * filesystem section the agent's deny entries its grants hold (masked there)
 * or name exactly (its exceptions, path_reach).
 * Trusts: the struct (built by config_parse.c and config_rules.c).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmdline.h"
#include "config.h"
#include "config_internal.h"
#include "log.h"
#include "parse.h"
#include "path.h"

#define WRAP_COLUMN 150

struct out {
	FILE *f;
	bool section_open;
	const char *pending; /* header printed before the first key */
	char header[128];
};

/* The next section: FAMILY, or FAMILY.NAME followed by SUB (".env", ...). */
static void
begin(struct out *o, const char *family, const char *name, const char *sub)
{
	snprintf(o->header, sizeof(o->header), "%s%s%s%s", family, name ? "." : "",
		 name ? name : "", sub ? sub : "");
	o->pending = o->header;
}

/* Print the pending header once, before the section's first key. */
static void
head(struct out *o)
{
	if (!o->pending)
		return;
	if (o->section_open)
		fputc('\n', o->f);
	fprintf(o->f, "[%s]\n", o->pending);
	o->pending = NULL;
	o->section_open = true;
}

static void
kv(struct out *o, const char *key, const char *value)
{
	head(o);
	fprintf(o->f, "%s = %s\n", key, value);
}

static void
kv_u64(struct out *o, const char *key, const struct box_u64 *v, bool always)
{
	char buf[32];
	if (!v->set && !always)
		return;
	snprintf(buf, sizeof(buf), "%" PRIu64, v->value);
	kv(o, key, buf);
}

static void
kv_ms(struct out *o, const char *key, const struct box_u64 *v, bool always)
{
	char buf[32];
	if (!v->set && !always)
		return;
	format_duration_ms(v->value, buf);
	kv(o, key, buf);
}

static void
kv_bool(struct out *o, const char *key, bool v)
{
	kv(o, key, v ? "true" : "false");
}

/* A word at the start of a continuation line must not read as a key, header or comment. */
static bool
risky_at_line_start(const char *w)
{
	if (*w == '[' || *w == '#' || *w == ';')
		return true;
	if (!(isalpha((unsigned char)*w) || *w == '_'))
		return false;
	return strchr(w, '=') != NULL;
}

static void
print_command(struct out *o, const struct box_command *cmd)
{
	size_t col;
	head(o);
	fputs("command =", o->f);
	col = strlen("command =");
	for (size_t i = 0; i < cmd->argc; i++) {
		char *w = cmdline_quote(cmd->argv[i]);
		if (!w)
			fatalx("out of memory");
		bool wrap = i > 0 && col + 1 + strlen(w) > WRAP_COLUMN;
		if (wrap) {
			fputs("\n ", o->f);
			col = 1;
			if (risky_at_line_start(cmd->argv[i]) && w[0] != '"') {
				fprintf(o->f, " \"%s\"", w);
				col += strlen(w) + 3;
				free(w);
				continue;
			}
		}
		fprintf(o->f, " %s", w);
		col += 1 + strlen(w);
		free(w);
	}
	fputc('\n', o->f);
	if (cmd->program)
		fprintf(o->f, "; exec (implicit): %s\n", cmd->program);
	for (size_t i = 0; i < cmd->n_interpreters; i++)
		fprintf(o->f, "; exec (implicit, #!): %s\n", cmd->interpreters[i]);
}

static const char *const fs_keys[BOX_FS_KIND_COUNT] = { "read", "write", "read_file",
							"write_file", "exec", "deny" };

static void
print_env(struct out *o, const struct box_env *env)
{
	for (size_t i = 0; i < env->n; i++)
		kv(o, env->v[i].name, env->v[i].value);
}

static void
print_fs(struct out *o, const struct box_filesystem *fs)
{
	for (int k = 0; k < BOX_FS_KIND_COUNT; k++)
		for (size_t i = 0; i < fs->lists[k].n; i++)
			kv(o, fs_keys[k], fs->lists[k].v[i].path);
}

/*
 * The agent's deny entries as a tool's or server's view has them (comments;
 * the section's own keys stay as written): masked there, or its exception.
 */
static void
print_agent_denies(struct out *o, const struct box_config *cfg, const struct box_filesystem *fs)
{
	const struct box_grant_list *d = &cfg->agent.proc.fs.lists[BOX_FS_DENY];
	size_t n;
	const char **grants = fs_grant_paths(fs, &n);

	for (size_t i = 0; i < d->n; i++) {
		bool own = false;
		for (size_t k = 0; k < fs->lists[BOX_FS_DENY].n; k++)
			own |= path_is_under(d->v[i].path, fs->lists[BOX_FS_DENY].v[k].path);
		enum path_reach r = own ? PATH_REACH_NONE : path_reach(d->v[i].path, grants, n, NULL);
		if (r == PATH_REACH_MASK) {
			head(o);
			fprintf(o->f, "; deny (implicit: the agent's deny): %s\n", d->v[i].path);
		} else if (r == PATH_REACH_EXCEPTION) {
			head(o);
			fprintf(o->f, "; exception to agent deny: %s (named here)\n", d->v[i].path);
		}
	}
	free(grants);
}

/*
 * The policy where the agent's grants reach it: masked, or shown read-only
 * (box.ini itself is shown read-only wherever a grant holds it; its own path
 * is left out, so that the output loads to itself from anywhere).
 */
static void
print_policy_file(struct out *o, const struct box_config *cfg)
{
	const char *policy = cfg->box.policy.path;
	size_t n;
	const char **grants = fs_grant_paths(&cfg->agent.proc.fs, &n);
	bool reached = false;

	for (size_t k = 0; policy && k < n; k++)
		reached |= path_is_under(policy, grants[k]);
	if (reached) {
		head(o);
		fprintf(o->f, "; policy (%s): %s\n",
			cfg->box.show_policy.value ? "shown read-only" : "masked", policy);
	}
	free(grants);
}

static void
print_quoted_value(struct out *o, const char *key, const char *v)
{
	head(o);
	fprintf(o->f, "%s = \"%s\"\n", key, v);
}

static void
print_dest(struct out *o, const char *key, const struct box_destination *d)
{
	head(o);
	fprintf(o->f, "%s = %s%s:%u%s\n", key, d->wildcard ? "*." : "", d->host, (unsigned)d->port,
		d->path_prefix ? d->path_prefix : "");
}

static void
print_placement(struct out *o, int placement, const struct box_str *header,
		const struct box_str *prefix)
{
	static const char *const names[] = { "header", "basic_auth", "query_param" };
	kv(o, "placement", names[placement]);
	if (placement == BOX_PLACEMENT_HEADER) {
		if (header->value)
			kv(o, "header", header->value);
		if (prefix->value)
			print_quoted_value(o, "prefix", prefix->value);
	}
}

int
box_config_print(FILE *f, const struct box_config *cfg)
{
	static const char *const layers[] = { "userns", "mountns", "netns", "landlock", "seccomp" };
	static const char *const hs[] = { "auto", "always", "batch", "off" };
	struct out o = { .f = f };
	char buf[128];

	/* [box] */
	begin(&o, "box", NULL, NULL);
	if (cfg->box.name.value)
		kv(&o, "name", cfg->box.name.value);
	if (cfg->box.policy.path)
		kv(&o, "policy", cfg->box.policy.path);
	if (cfg->box.state_dir.value)
		kv(&o, "state_dir", cfg->box.state_dir.value);
	buf[0] = '\0';
	for (int i = 0; i < 5; i++)
		if (cfg->box.require.value & (1U << i)) {
			if (buf[0])
				strcat(buf, " ");
			strcat(buf, layers[i]);
		}
	kv(&o, "require", buf);
	kv_ms(&o, "timeout", &cfg->box.timeout_ms, false);
	if (cfg->box.history_sync.value != BOX_HISTORY_SYNC_AUTO)
		kv(&o, "history_sync", hs[cfg->box.history_sync.value]);
	kv_ms(&o, "command_timeout", &cfg->box.command_timeout_ms, false);
	kv_ms(&o, "ask_timeout", &cfg->box.ask_timeout_ms, false);
	if (cfg->box.ask.set)
		kv(&o, "ask", cfg->box.ask.value == BOX_ASK_DEFAULT ? "default" : "none");
	kv_bool(&o, "show_policy", cfg->box.show_policy.value);
	if (cfg->box.snapshot.set && cfg->box.snapshot.value == 1)
		kv(&o, "snapshot", "workspace");
	kv_u64(&o, "snapshot_max", &cfg->box.snapshot_max, false);

	/* [agent] */
	const struct box_agent *a = &cfg->agent;
	begin(&o, "agent", NULL, NULL);
	if (a->person_shell) {
		head(&o);
		fprintf(o.f, "; command: none: a person's interactive box shell (%s, inside the box: "
			     "box's shell alias)\n",
			a->proc.command.argc ? a->proc.command.argv[0] : "bash");
	} else if (a->proc.command.argc)
		print_command(&o, &a->proc.command);
	if (a->proc.workspace.value)
		kv(&o, "workspace", a->proc.workspace.value);
	if (a->user.name)
		kv(&o, "user", a->user.name);
	kv_u64(&o, "memory_max", &a->memory_max, false);
	kv_u64(&o, "pids_max", &a->pids_max, false);
	kv_u64(&o, "nofile", &a->proc.nofile, false);
	kv_u64(&o, "nproc", &a->proc.nproc, false);
	kv_bool(&o, "exec_system", a->exec_system.value);
	if (!a->exec_system.value)
		fprintf(o.f, "; execve: only the program, its #! interpreters, the exec entries, box's "
			     "aliases and the ELF loader (Landlock)\n");
	kv(&o, "supervise", a->supervise.value == BOX_SUPERVISE_FS ? "fs" : "none");
	begin(&o, "agent.env", NULL, NULL);
	print_env(&o, &a->proc.env);
	begin(&o, "agent.filesystem", NULL, NULL);
	print_fs(&o, &a->proc.fs);
	print_policy_file(&o, cfg);

	for (size_t i = 0; i < cfg->n_tools; i++) {
		const struct box_tool *t = &cfg->tools[i];
		begin(&o, "tool", t->name, NULL);
		if (t->proc.command.argc)
			print_command(&o, &t->proc.command);
		if (t->proc.workspace.value)
			kv(&o, "workspace", t->proc.workspace.value);
		kv_u64(&o, "nofile", &t->proc.nofile, false);
		kv_u64(&o, "nproc", &t->proc.nproc, false);
		kv(&o, "supervise", t->supervise.value == BOX_SUPERVISE_FS ? "fs" : "none");
		begin(&o, "tool", t->name, ".env");
		print_env(&o, &t->proc.env);
		begin(&o, "tool", t->name, ".filesystem");
		print_fs(&o, &t->proc.fs);
		print_agent_denies(&o, cfg, &t->proc.fs);
		begin(&o, "tool", t->name, ".network");
		kv_bool(&o, "contain_egress", t->proc.contain_egress.value);
	}

	for (size_t i = 0; i < cfg->n_egress; i++) {
		const struct box_egress *e = &cfg->egress[i];
		static const char *const inject[] = { "placeholder", "always" };
		begin(&o, "egress", e->name, NULL);
		for (size_t j = 0; j < e->n_dest; j++)
			print_dest(&o, "destinations", &e->dest[j]);
		if (e->secret.ref)
			kv(&o, "secret", e->secret.ref);
		if (e->variable.value)
			kv(&o, "variable", e->variable.value);
		print_placement(&o, e->placement.value, &e->header, &e->prefix);
		if (e->param.value)
			kv(&o, "param", e->param.value);
		kv(&o, "inject", inject[e->inject.value]);
		if (e->placeholder_prefix.value)
			kv(&o, "placeholder_prefix", e->placeholder_prefix.value);
		if (e->n_sandboxes) {
			/* Unset (every sandbox) is left out, as a default of "none" is. */
			head(&o);
			fprintf(o.f, "sandboxes =");
			for (size_t j = 0; j < e->n_sandboxes; j++)
				fprintf(o.f, " %s", e->sandboxes[j]);
			fprintf(o.f, "\n");
		}
	}

	for (size_t i = 0; i < cfg->n_mcp; i++) {
		const struct box_mcp *m = &cfg->mcp[i];
		bool stdio = m->type.value == BOX_MCP_STDIO;
		begin(&o, "mcp", m->name, NULL);
		kv(&o, "type", stdio ? "stdio" : "http");
		if (stdio && m->proc.command.argc)
			print_command(&o, &m->proc.command);
		if (stdio && m->alias.value)
			kv(&o, "alias", m->alias.value);
		if (stdio)
			kv(&o, "supervise", m->supervise.value == BOX_SUPERVISE_FS ? "fs" : "none");
		kv_bool(&o, "allow_tool_changes", m->allow_tool_changes.value);
		kv_u64(&o, "max_frame", &m->max_frame, true);
		kv_ms(&o, "call_timeout", &m->call_timeout_ms, true);
		if (!stdio) {
			if (m->url.value)
				kv(&o, "url", m->url.value);
			if (m->secret.ref) {
				kv(&o, "secret", m->secret.ref);
				print_placement(&o, m->placement.value, &m->header, &m->prefix);
			}
			continue;
		}
		begin(&o, "mcp", m->name, ".env");
		print_env(&o, &m->proc.env);
		begin(&o, "mcp", m->name, ".filesystem");
		print_fs(&o, &m->proc.fs);
		print_agent_denies(&o, cfg, &m->proc.fs);
		begin(&o, "mcp", m->name, ".network");
		kv_bool(&o, "contain_egress", m->proc.contain_egress.value);
	}

	for (size_t i = 0; i < cfg->n_telemetry; i++) {
		const struct box_telemetry *t = &cfg->telemetry[i];
		bool otlp = t->kind.value == BOX_TELEMETRY_OTLP;
		begin(&o, "telemetry", t->name, NULL);
		kv(&o, "kind", otlp ? "otlp" : "file");
		if (t->destination.value)
			kv(&o, "destination", t->destination.value);
		head(&o);
		fprintf(o.f, "include =");
		for (int b = 0; box_telemetry_include_names[b]; b++)
			if (t->include.value & (1u << b))
				fprintf(o.f, " %s", box_telemetry_include_names[b]);
		fprintf(o.f, "\n");
		if (!otlp)
			continue;
		kv(&o, "protocol", t->protocol.value == BOX_TELEMETRY_JSON ? "http/json" :
									      "http/protobuf");
		if (t->secret.ref) {
			kv(&o, "secret", t->secret.ref);
			print_placement(&o, t->placement.value, &t->header, &t->prefix);
		}
	}

	const struct box_gateway *g = &cfg->gateway;
	begin(&o, "gateway", NULL, NULL);
	kv_u64(&o, "port", &g->port, true);
	kv_ms(&o, "connect_timeout", &g->connect_timeout_ms, true);
	kv_ms(&o, "idle_timeout", &g->idle_timeout_ms, true);
	kv_u64(&o, "max_connections", &g->max_connections, true);
	kv_u64(&o, "max_request_body", &g->max_request_body, true);
	if (g->upstream_ca.path)
		kv(&o, "upstream_ca", g->upstream_ca.path);
	if (g->resolver.value)
		kv(&o, "resolver", g->resolver.value);
	if (g->hosts_file.path)
		kv(&o, "hosts_file", g->hosts_file.path);
	kv_bool(&o, "allow_host_loopback", g->allow_host_loopback.value);
	for (size_t i = 0; i < g->n_passthrough; i++)
		print_dest(&o, "passthrough", &g->passthrough[i]);
	return ferror(f) ? -EIO : 0;
}
