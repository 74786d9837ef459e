/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spec_check.c — a BoxSpec's own refusals (spec_check.h).
 * Trusts: the validated spec. Pure (malloc aside), never logs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "envnames.h"
#include "path.h"
#include "recheck_shared.h"
#include "spec_check.h"

bool
box_spec_egress_variable(const Box__BoxSpec *s, const char *name)
{
	for (size_t i = 0; i < s->n_egress; i++) {
		const Box__CfgEgress *e = s->egress[i];
		if (e->variable && strcmp(e->variable->value, name) == 0)
			return true;
		if (!e->variable && strncmp(e->secret->ref, "env://", 6) == 0 &&
		    strcmp(e->secret->ref + 6, name) == 0)
			return true;
	}
	return false;
}

bool
box_spec_agent_telemetry(const Box__BoxSpec *s)
{
	for (size_t i = 0; i < s->n_telemetry; i++)
		if (s->telemetry[i]->include & 16u)
			return true;
	return false;
}

size_t
box_spec_otlp_targets(const Box__BoxSpec *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n_telemetry; i++)
		n += s->telemetry[i]->kind == BOX__TELEMETRY_KIND__TELEMETRY_KIND_OTLP;
	return n;
}

bool
box_spec_grant_refused(const char *path)
{
	return strcmp(path, "/") == 0 || path_is_under(path, "/proc") ||
	       path_is_under(path, "/dev") || path_is_under(path, "/run/box");
}

void
box_spec_fs_lists(const Box__CfgFilesystem *fs, struct box_spec_fs_list out[BOX_SPEC_FS_LISTS])
{
	out[0] = (struct box_spec_fs_list){ fs->read, fs->n_read, "read" };
	out[1] = (struct box_spec_fs_list){ fs->write, fs->n_write, "write" };
	out[2] = (struct box_spec_fs_list){ fs->read_file, fs->n_read_file, "read_file" };
	out[3] = (struct box_spec_fs_list){ fs->write_file, fs->n_write_file, "write_file" };
	out[4] = (struct box_spec_fs_list){ fs->exec, fs->n_exec, "exec" };
	out[5] = (struct box_spec_fs_list){ fs->deny, fs->n_deny, "deny" };
}

static int
add(box_spec_problem_fn fn, void *arg, Box__Problem *p)
{
	if (!p)
		return -ENOMEM;
	fn(arg, p);
	return 0;
}

static int
env_problems(const Box__BoxSpec *s, const Box__CfgEnv *e, const char *section,
	     box_spec_problem_fn fn, void *arg)
{
	for (size_t i = 0; e && i < e->n_vars; i++) {
		const Box__CfgEnvVar *v = e->vars[i];
		if ((box_env_reserved(v->name) || box_spec_egress_variable(s, v->name) ||
		     (box_spec_agent_telemetry(s) &&
		      strncmp(v->name, "OTEL_EXPORTER_OTLP_", 19) == 0)) &&
		    add(fn, arg, problem_new(v->line, section, v->name,
					     "%s is reserved: box sets it", v->name)) < 0)
			return -ENOMEM;
	}
	return 0;
}

int
box_spec_problems(const Box__BoxSpec *s, box_spec_problem_fn fn, void *arg)
{
	char sec[64];

	if (env_problems(s, s->agent->env, "agent.env", fn, arg) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_tools; i++) {
		const Box__CfgTool *t = s->tools[i];
		snprintf(sec, sizeof(sec), "tool.%s.env", t->name);
		if (env_problems(s, t->env, sec, fn, arg) < 0)
			return -ENOMEM;
	}
	const Box__CfgFilesystem *fs = s->agent->filesystem;
	if (!fs)
		return 0;
	struct box_spec_fs_list lists[BOX_SPEC_FS_LISTS];
	box_spec_fs_lists(fs, lists);
	for (size_t l = 0; l < BOX_SPEC_FS_LISTS; l++)
		for (size_t i = 0; i < lists[l].n; i++) {
			const Box__CfgPath *e = lists[l].v[i];
			if (!box_spec_grant_refused(e->path))
				continue;
			Box__Problem *p =
				strcmp(e->path, "/") == 0 ?
					problem_new(e->line, "agent.filesystem", lists[l].key,
						    "/ is refused as a whole") :
					problem_new(e->line, "agent.filesystem", lists[l].key,
						    "%s is built by the sandbox itself", e->path);
			if (add(fn, arg, p) < 0)
				return -ENOMEM;
		}
	return 0;
}
