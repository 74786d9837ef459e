/* SPDX-License-Identifier: Apache-2.0 */
/*
 * plan.c — a validated BoxSpec (+ the owner's recheck) → the agent's Plan
 * (proto/plan.proto), and the start-up disclosure (docs/boxctl.1.md).
 *
 * View: the [agent.filesystem] lists as they are; each deny entry, the policy
 * file (when a grant reaches it, unless [box] show_policy shows it read-only),
 * and the credential stores, box's own directories and file:// secrets the
 * owner's recheck found strictly inside a grant (docs/box.ini.5.md; disclosed as
 * "masked (WHY): PATH") covered by a mode-0000 mask made in the runtime dir;
 * box.ini bound read-only over itself; an implicit exec entry for the
 * resolved program, each #! interpreter and the ELF loaders the recheck found
 * — with [agent] exec_system = false (plan.exec_system) the only files the
 * agent may execve, beside /run/box/bin and the shell alias. Every sandbox of
 * the box gets the agent's deny entries where its grants hold them (tools,
 * MCP servers, exec entries, box-shell: "hidden in every view"; a grant naming
 * one exactly is its disclosed exception, one inside one is refused,
 * path_reach). Environment (docs/box.ini.5.md [agent.env], docs/boxctl.1.md
 * "The agent's view"): the section's variables, HOME (the owner's passwd
 * home) and PATH defaults, TERM LANG TZ from the caller, USER, PWD,
 * BOX_NAME, BOX_ID; once box-gateway serves the box (GatewayReady), the
 * proxy variables (both cases, NO_PROXY, NODE_USE_ENV_PROXY), /run/box/ca.pem
 * in every trust variable of docs/boxctl.1.md, and each [egress] placeholder in its
 * variable — the plan then mounts RUNTIME/ca.pem at /run/box/ca.pem and asks
 * for the listener on 127.0.0.1:<port>; /run/box/bin first on PATH when the
 * box has a shell (b->alias_exe), and plan_agent_shell adds /run/box/bin,
 * shell.sock and the alias over the shells. No MCP variables yet ("a box that
 * has no gateway or MCP server yet gets no variables pointing at them").
 * Limits per docs/sandbox.md. plan_shell derives box-shell's SANDBOX_SHELL plan
 * from the agent's; plan_tool makes a tool sandbox per SpawnRequest (a base
 * plan per table, made once: its masks) with the composed environment and the
 * workspace rule of docs/box.ini.5.md [tool.NAME]; the disclosure lists each tool as
 * box-shell serves it.
 * Trusts: the spec after box_ipc_decode() validated it; the recheck result
 * (paths the owner could reach; a mask it reports is made only where a grant
 * contains it). Re-checks what is cheap to re-check here: reserved variable
 * names, grants inside box's own directories or around the places of boxd's
 * and the session's sockets (ownpaths.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boxd.h"
#include "cleanup.h"
#include "envnames.h"
#include "hostprobe.h"
#include "log.h"
#include "path.h"
#include "plan_validate.h"
#include "spec_check.h"

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"


/* ------------------------------------------------------------------ */
/* small builders (everything malloc'd: box__plan__free_unpacked frees) */

struct strv {
	char **v;
	size_t n, cap;
	bool oom;
};

static void
strv_add(struct strv *s, char *str)
{
	if (!str) {
		s->oom = true;
		return;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		char **nv = realloc(s->v, cap * sizeof(char *));
		if (!nv) {
			free(str);
			s->oom = true;
			return;
		}
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n++] = str;
}

static char *
fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *
fmt(const char *f, ...)
{
	char *s;
	va_list ap;
	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

struct viewv {
	Box__ViewEntry **v;
	size_t n, cap;
};

static int
view_add(struct viewv *w, const char *path, Box__ViewKind kind, char *mask)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 16;
		Box__ViewEntry **nv = realloc(w->v, cap * sizeof(*nv));
		if (!nv) {
			free(mask);
			return -ENOMEM;
		}
		w->v = nv;
		w->cap = cap;
	}
	Box__ViewEntry *e = calloc(1, sizeof(*e));
	if (!e) {
		free(mask);
		return -ENOMEM;
	}
	box__view_entry__init(e);
	e->path = strdup(path);
	e->kind = kind;
	e->mask = mask;
	w->v[w->n++] = e;
	return e->path ? 0 : -ENOMEM;
}

static bool
is_deny_dir(const struct box *b, const char *path)
{
	for (size_t i = 0; i < b->rc.n_deny_dirs; i++)
		if (strcmp(b->rc.deny_dirs[i], path) == 0)
			return true;
	return false;
}

/* Is `p` inside a grant (not a deny) of fs? */
static bool
granted(const Box__CfgFilesystem *fs, const char *p)
{
	struct box_spec_fs_list l[BOX_SPEC_FS_LISTS];

	if (!fs)
		return false;
	box_spec_fs_lists(fs, l);
	for (size_t k = 0; k < BOX_SPEC_FS_LISTS - 1; k++)
		for (size_t i = 0; i < l[k].n; i++)
			if (path_is_under(p, l[k].v[i]->path))
				return true;
	return false;
}

static bool
exec_covers(const Box__CfgFilesystem *fs, const char *p)
{
	for (size_t i = 0; fs && i < fs->n_exec; i++)
		if (path_is_under(p, fs->exec[i]->path))
			return true;
	return false;
}

/* Is `p` at or inside one of fs's deny entries? */
static bool
under_deny(const Box__CfgFilesystem *fs, const char *p)
{
	for (size_t i = 0; fs && i < fs->n_deny; i++)
		if (path_is_under(p, fs->deny[i]->path))
			return true;
	return false;
}

/* The grant paths of fs (every list but deny), for path_reach; NULL: out of memory. */
static const char **
grant_paths(const Box__CfgFilesystem *fs, size_t *n)
{
	struct box_spec_fs_list l[BOX_SPEC_FS_LISTS];
	size_t total = 0;

	*n = 0;
	if (fs) {
		box_spec_fs_lists(fs, l);
		for (size_t k = 0; k < BOX_SPEC_FS_LISTS - 1; k++)
			total += l[k].n;
	}
	const char **v = calloc(total ? total : 1, sizeof(*v));
	for (size_t k = 0; v && fs && k < BOX_SPEC_FS_LISTS - 1; k++)
		for (size_t i = 0; i < l[k].n; i++)
			v[(*n)++] = l[k].v[i]->path;
	return v;
}

/*
 * How a sandbox with grants fs reaches the agent's deny entry `denied`
 * (path_reach): an entry of fs's own deny list, or a path inside one, is
 * hidden there already (PATH_REACH_NONE).
 */
static enum path_reach
agent_deny_reach(const Box__CfgFilesystem *fs, const char *denied, size_t *which)
{
	size_t n;
	_cleanup_free_ const char **grants = grant_paths(fs, &n);

	if (!grants || under_deny(fs, denied))
		return PATH_REACH_NONE;
	return path_reach(denied, grants, n, which);
}

/* Is `p` strictly inside one of the docs/box.ini.5.md masks a view of fs gets (rc.masks, re-checked)? */
static bool
under_auto_mask_fs(const struct box *b, const Box__CfgFilesystem *fs, const char *p)
{
	for (size_t i = 0; i < b->rc.n_masks; i++)
		if (strcmp(p, b->rc.masks[i]) != 0 && path_is_under(p, b->rc.masks[i]) &&
		    own_paths_maskable(fs, b->rc.masks[i]))
			return true;
	return false;
}

static bool
home_manageable(const char *home)
{
	return strcmp(home, "/") != 0 && !path_is_under(home, "/tmp") &&
	       !path_is_under(home, "/var/tmp") && !path_is_under("/tmp", home) &&
	       !path_is_under(home, "/proc") && !path_is_under(home, "/dev") &&
	       !path_is_under(home, "/run/box");
}

static void
add_problem(struct box *b, Box__Problem *p)
{
	if (!p)
		return;
	Box__Problem **nv = realloc(b->rc.problems, (b->rc.n_problems + 1) * sizeof(*nv));
	if (!nv) {
		problem_free(p);
		return;
	}
	b->rc.problems = nv;
	nv[b->rc.n_problems++] = p;
}

/*
 * docs/box.ini.5.md: a grant inside one of box's own directories, or containing the
 * place of a socket that drives boxd or the user's session, is refused.
 */
static bool
own_paths_refuse(struct box *b, const struct own_paths *own, const Box__CfgPath *e,
		 const char *key)
{
	for (size_t i = 0; i < own->n_own; i++)
		if (path_is_under(e->path, own->own[i].path)) {
			add_problem(b, problem_new(e->line, "agent.filesystem", key,
						   "%s %s %s %s; a box's state and runtime dirs are never granted (inside a broader grant they are masked)",
						   e->path,
						   strcmp(e->path, own->own[i].path) == 0 ? "is" :
											"lies inside",
						   own->own[i].what, own->own[i].path));
			return true;
		}
	for (size_t i = 0; i < own->n_stores; i++)
		if (strcmp(e->path, own->stores[i].path) != 0 &&
		    path_is_under(e->path, own->stores[i].path)) {
			add_problem(b, problem_new(e->line, "agent.filesystem", key,
						   "%s lies inside the credential store %s, which may be granted only by naming it exactly",
						   e->path, own->stores[i].path));
			return true;
		}
	for (size_t i = 0; i < own->n_sockets; i++)
		if (path_is_under(own->sockets[i].path, e->path)) {
			add_problem(b, problem_new(e->line, "agent.filesystem", key,
						   "%s %s %s (%s): the box could connect to its sockets and act outside its sandbox; name something beside it",
						   e->path,
						   strcmp(e->path, own->sockets[i].path) == 0 ? "is" :
												"contains",
						   own->sockets[i].path, own->sockets[i].what));
			return true;
		}
	return false;
}

/* The list key of the grant entry of fs at `path` ("read", ...). */
static const char *
grant_key(const Box__CfgFilesystem *fs, const char *path, uint32_t *line)
{
	struct box_spec_fs_list l[BOX_SPEC_FS_LISTS];

	box_spec_fs_lists(fs, l);
	for (size_t k = 0; k < BOX_SPEC_FS_LISTS - 1; k++)
		for (size_t i = 0; i < l[k].n; i++)
			if (strcmp(l[k].v[i]->path, path) == 0) {
				*line = l[k].v[i]->line;
				return l[k].key;
			}
	*line = 0;
	return "read";
}

/* docs/box.ini.5.md: a tool's or server's grant inside one of the agent's deny entries is refused. */
static void
agent_deny_refuse(struct box *b, const Box__CfgFilesystem *fs, const char *sec)
{
	const Box__CfgFilesystem *afs = b->spec->agent->filesystem;
	size_t n;

	if (!fs || !afs)
		return;
	_cleanup_free_ const char **grants = grant_paths(fs, &n);
	for (size_t i = 0; grants && i < afs->n_deny; i++) {
		size_t which;
		if (agent_deny_reach(fs, afs->deny[i]->path, &which) != PATH_REACH_INSIDE)
			continue;
		uint32_t line;
		const char *key = grant_key(fs, grants[which], &line);
		add_problem(b, problem_new(line, sec, key,
					   "%s lies inside the agent's deny entry %s (line %u), which holds in every sandbox; name %s itself to make it this section's exception",
					   grants[which], afs->deny[i]->path, afs->deny[i]->line,
					   afs->deny[i]->path));
	}
}

static void
add_problem_cb(void *arg, Box__Problem *p)
{
	add_problem(arg, p);
}

/*
 * Cheap re-checks of the request that need no file system access: the
 * spec's own refusals (proto/spec_check.c, the function boxctl check calls
 * too), then what only this boxd knows: the box's runtime dir, box's own
 * directories and sockets.
 */
static void
plan_recheck(struct box *b)
{
	const Box__BoxSpec *s = b->spec;
	const Box__CfgFilesystem *fs = s->agent->filesystem;
	const char *state = b->rc.state_dir;
	const char *rt = b->runtime_dir;

	if (box_spec_problems(s, add_problem_cb, b) < 0)
		add_problem(b, problem_new(0, NULL, NULL, "out of memory"));
	for (size_t i = 0; i < s->n_tools; i++) {
		char sec[64];
		snprintf(sec, sizeof(sec), "tool.%s.filesystem", s->tools[i]->name);
		agent_deny_refuse(b, s->tools[i]->filesystem, sec);
	}
	for (size_t i = 0; i < s->n_mcp; i++) {
		char sec[64];
		snprintf(sec, sizeof(sec), "mcp.%s.filesystem", s->mcp[i]->name);
		agent_deny_refuse(b, s->mcp[i]->filesystem, sec);
	}
	if (!fs)
		return;
	struct box_spec_fs_list lists[BOX_SPEC_FS_LISTS];
	box_spec_fs_lists(fs, lists);
	struct own_paths own;
	if (own_paths_build(b, state, &own) < 0) {
		add_problem(b, problem_new(0, NULL, NULL, "out of memory"));
		return;
	}
	for (size_t l = 0; l < BOX_SPEC_FS_LISTS; l++)
		for (size_t i = 0; i < lists[l].n; i++) {
			const Box__CfgPath *e = lists[l].v[i];
			if (box_spec_grant_refused(e->path))
				; /* box_spec_problems said so */
			else if (rt && path_is_under(e->path, rt))
				add_problem(b, problem_new(e->line, "agent.filesystem", lists[l].key,
							   "%s reaches the box runtime dir %s",
							   e->path, rt));
			else if (lists[l].v != fs->deny)
				(void)own_paths_refuse(b, &own, e, lists[l].key);
		}
	own_paths_clear(&own);
}

static bool
requires(const Box__CfgBox *box, Box__Layer layer)
{
	if (box->n_require == 0)
		return true; /* the default: every layer */
	for (size_t i = 0; i < box->n_require; i++)
		if (box->require[i] == layer)
			return true;
	return false;
}

/* The trust variables (envnames.h), all pointing at the box CA. */
static const char *const ca_variables[] = { BOX_ENV_CA_VARIABLES };

/*
 * What a sandbox the gateway serves sees (docs/boxctl.1.md "The agent's view"):
 * nothing until GatewayReady, so a box without a gateway gets no variable
 * pointing at one.
 */
uint16_t
otlp_port(const struct box *b)
{
	if (!box_spec_agent_telemetry(b->spec))
		return 0;
	return gateway_port(b) == BOXD_OTLP_PORT ? BOXD_OTLP_PORT + 1 : BOXD_OTLP_PORT;
}

static void
gateway_env(const struct box *b, struct strv *env)
{
	static const char *const proxies[] = { BOX_ENV_PROXY_VARIABLES };
	static const char *const no_proxies[] = { BOX_ENV_NO_PROXY_VARIABLES };
	if (!b->gateway_serving)
		return;
	for (size_t i = 0; i < ELEMENTSOF(proxies); i++)
		strv_add(env, fmt("%s=http://127.0.0.1:%u", proxies[i], (unsigned)gateway_port(b)));
	for (size_t i = 0; i < ELEMENTSOF(no_proxies); i++)
		strv_add(env, fmt("%s=localhost,127.0.0.1,::1", no_proxies[i]));
	strv_add(env, fmt("NODE_USE_ENV_PROXY=1"));
	for (size_t i = 0; i < ELEMENTSOF(ca_variables); i++)
		strv_add(env, fmt("%s=/run/box/ca.pem", ca_variables[i]));
	for (size_t i = 0; i < b->n_placeholders; i++)
		strv_add(env, fmt("%s=%s", b->placeholders[i].variable, b->placeholders[i].value));
}

static int
build_env(struct box *b, const char *workspace, struct strv *env)
{
	const Box__BoxSpec *s = b->spec;
	const Box__CfgEnv *e = s->agent->env;
	bool have_home = false, have_path = false, have[3] = { false, false, false };
	static const char *const inherited[] = { "TERM", "LANG", "TZ" };

	for (size_t i = 0; e && i < e->n_vars; i++) {
		const char *n = e->vars[i]->name;
		have_home |= strcmp(n, "HOME") == 0;
		have_path |= strcmp(n, "PATH") == 0;
		for (size_t k = 0; k < 3; k++)
			have[k] |= strcmp(n, inherited[k]) == 0;
		/* docs/boxctl.1.md: /run/box/bin first on the agent's PATH (when box-shell serves the box). */
		if (strcmp(n, "PATH") == 0 && b->alias_exe)
			strv_add(env, fmt("PATH=/run/box/bin:%s", e->vars[i]->value));
		else
			strv_add(env, fmt("%s=%s", n, e->vars[i]->value));
	}
	if (!have_home)
		strv_add(env, fmt("HOME=%s", b->owner.home));
	if (!have_path)
		strv_add(env, fmt("PATH=%s%s", b->alias_exe ? "/run/box/bin:" : "", DEFAULT_PATH));
	for (size_t i = 0; i < s->caller->n_inherit; i++) {
		const Box__CfgEnvVar *v = s->caller->inherit[i];
		for (size_t k = 0; k < 3; k++)
			if (strcmp(v->name, inherited[k]) == 0 && !have[k])
				strv_add(env, fmt("%s=%s", v->name, v->value));
	}
	strv_add(env, fmt("USER=%s", b->owner.name));
	strv_add(env, fmt("PWD=%s", workspace));
	strv_add(env, fmt("BOX_NAME=%s", b->name));
	strv_add(env, fmt("BOX_ID=%s", b->id));
	gateway_env(b, env);
	if (b->gateway_serving && otlp_port(b)) {
		/* docs/box.ini.5.md [telemetry.NAME]: the receiver box-gateway serves in the view */
		static const char *const signals[] = { "TRACES", "LOGS", "METRICS" };
		static const char *const paths[] = { "traces", "logs", "metrics" };
		unsigned port = otlp_port(b);
		strv_add(env, fmt("OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:%u", port));
		strv_add(env, fmt("OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"));
		for (size_t i = 0; i < 3; i++) {
			strv_add(env, fmt("OTEL_EXPORTER_OTLP_%s_ENDPOINT=http://127.0.0.1:%u/v1/%s",
					  signals[i], port, paths[i]));
			strv_add(env, fmt("OTEL_EXPORTER_OTLP_%s_PROTOCOL=http/protobuf", signals[i]));
		}
	}
#if BOXD_ASAN
	/* A sanitizer build's shell alias runs here, under the box's seccomp filter. */
	if (b->alias_exe)
		strv_add(env, fmt("ASAN_OPTIONS=detect_leaks=0"));
#endif
	return env->oom ? -ENOMEM : 0;
}

void
plan_free(Box__Plan *p)
{
	if (p)
		box__plan__free_unpacked(p, NULL);
}

/* The plan with its owner (ids, groups, home, shell) and an empty runtime section. */
static int
plan_new(const struct box *b, Box__Plan **ret)
{
	Box__Plan *p = calloc(1, sizeof(*p));
	Box__Owner *o = calloc(1, sizeof(*o));
	Box__RuntimeDirs *rt = calloc(1, sizeof(*rt));

	if (!p || !o || !rt) {
		free(p);
		free(o);
		free(rt);
		return -ENOMEM;
	}
	box__plan__init(p);
	box__owner__init(o);
	box__runtime_dirs__init(rt);
	p->owner = o;
	p->runtime = rt;
	p->kind = BOX__SANDBOX_KIND__SANDBOX_AGENT;
	p->contain_egress = true;
	*ret = p; /* plan_free frees whatever is set below */

	o->uid = b->owner.uid;
	o->gid = b->owner.gid;
	o->groups = calloc(b->owner.n_groups ? b->owner.n_groups : 1, sizeof(uint32_t));
	if (!o->groups)
		return -ENOMEM;
	for (size_t i = 0; i < b->owner.n_groups; i++)
		o->groups[o->n_groups++] = b->owner.groups[i];
	o->name = strdup(b->owner.name);
	o->home = strdup(b->owner.home);
	o->shell = strdup(b->owner.shell && b->owner.shell[0] == '/' ? b->owner.shell : "/bin/sh");
	if (b->snapshot_root && !(p->snapshot_root = strdup(b->snapshot_root)))
		return -ENOMEM;
	return o->name && o->home && o->shell ? 0 : -ENOMEM;
}

/* The view: grants as listed (the same path in read and write is a read-write grant). */
static int
view_grants(const Box__CfgFilesystem *fs, struct viewv *view)
{
	struct {
		Box__CfgPath **v;
		size_t n;
		Box__ViewKind kind;
	} lists[] = {
		{ fs->read, fs->n_read, BOX__VIEW_KIND__VIEW_READ },
		{ fs->write, fs->n_write, BOX__VIEW_KIND__VIEW_WRITE },
		{ fs->read_file, fs->n_read_file, BOX__VIEW_KIND__VIEW_READ_FILE },
		{ fs->write_file, fs->n_write_file, BOX__VIEW_KIND__VIEW_WRITE_FILE },
		{ fs->exec, fs->n_exec, BOX__VIEW_KIND__VIEW_EXEC },
	};
	for (size_t l = 0; l < ELEMENTSOF(lists); l++)
		for (size_t i = 0; i < lists[l].n; i++) {
			const char *path = lists[l].v[i]->path;
			if (lists[l].kind == BOX__VIEW_KIND__VIEW_READ) {
				bool rw = false;
				for (size_t k = 0; k < fs->n_write; k++)
					rw |= strcmp(fs->write[k]->path, path) == 0;
				if (rw)
					continue;
			}
			if (view_add(view, path, lists[l].kind, NULL) < 0)
				return -ENOMEM;
		}
	return 0;
}

/* A deny entry at `path` with a fresh mask object (a directory when is_dir). */
static int
view_mask(struct boxd *d, struct box *b, struct viewv *view, unsigned *n_masks,
	  const char *path, bool is_dir)
{
	char *mask = NULL;
	int r = runtime_mask_create(d, b, (*n_masks)++, is_dir, &mask);

	if (r < 0)
		return r;
	return view_add(view, path, BOX__VIEW_KIND__VIEW_DENY, mask) < 0 ? -ENOMEM : 0;
}

/*
 * docs/box.ini.5.md: credential stores and box's own directories strictly inside
 * a grant, as the owner's recheck found them (a symlink there: its target).
 * Re-checked here: only a path inside a grant, outside every deny, is masked.
 */
static int
view_auto_masks(struct boxd *d, struct box *b, const Box__CfgFilesystem *fs,
		struct viewv *view, unsigned *n_masks)
{
	for (size_t i = 0; i < b->rc.n_masks; i++) {
		const char *m = b->rc.masks[i];
		bool dup = false;
		for (size_t k = 0; k < view->n; k++)
			dup |= view->v[k]->kind == BOX__VIEW_KIND__VIEW_DENY &&
			       strcmp(view->v[k]->path, m) == 0;
		if (dup || !own_paths_maskable(fs, m))
			continue;
		int r = view_mask(d, b, view, n_masks, m, b->rc.mask_is_dir[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

static int
view_denies(struct boxd *d, struct box *b, const Box__CfgFilesystem *fs, struct viewv *view,
	    unsigned *n_masks)
{
	for (size_t i = 0; i < fs->n_deny; i++) {
		const char *path = fs->deny[i]->path;
		if (under_auto_mask_fs(b, fs, path))
			continue; /* inside a mask already: its mount point would not exist */
		int r = view_mask(d, b, view, n_masks, path, is_deny_dir(b, path));
		if (r < 0)
			return r;
	}
	return 0;
}

/* Is `p` at or inside a mask the view has already (nothing can be mounted inside one)? */
static bool
under_view_mask(const struct viewv *view, const char *p)
{
	for (size_t i = 0; i < view->n; i++)
		if (view->v[i]->kind == BOX__VIEW_KIND__VIEW_DENY && path_is_under(p, view->v[i]->path))
			return true;
	return false;
}

/* Is the policy shown read-only instead of masked ([box] show_policy)? */
static bool
policy_shown(const Box__BoxSpec *s)
{
	return s->box->show_policy && s->box->show_policy->value;
}

/*
 * box.ini (files[0]) and the policy (files[1]) where a grant reaches them:
 * box.ini shown read-only (a read-only bind over itself: it holds no secret
 * value, and git reads it like any file); the policy masked, or shown
 * read-only with [box] show_policy = true (box.ini(5)).
 */
static int
view_config_files(struct boxd *d, struct box *b, const Box__CfgFilesystem *fs,
		  struct viewv *view, unsigned *n_masks)
{
	const Box__BoxSpec *s = b->spec;

	for (size_t i = 0; i < s->n_files && i < 2; i++) {
		const char *f = s->files[i];
		if (!granted(fs, f) || under_deny(fs, f) || under_auto_mask_fs(b, fs, f) ||
		    under_view_mask(view, f))
			continue;
		bool shown = i == 0 || policy_shown(s);
		int r = shown ? view_add(view, f, BOX__VIEW_KIND__VIEW_READ_FILE, NULL) :
				view_mask(d, b, view, n_masks, f, false);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * box.ini(5) "hidden in every view": each of the agent's deny entries that
 * a grant of fs (a tool's, a server's) holds gets a mask in that view too,
 * unless a mask of box's covers it already. An entry fs names exactly is its
 * exception (disclosed); one with a grant inside it was refused (plan_recheck).
 */
static int
view_agent_denies(struct boxd *d, struct box *b, const Box__CfgFilesystem *fs,
		  struct viewv *view, unsigned *n_masks)
{
	const Box__CfgFilesystem *afs = b->spec->agent->filesystem;

	for (size_t i = 0; afs && i < afs->n_deny; i++) {
		const char *path = afs->deny[i]->path;
		if (agent_deny_reach(fs, path, NULL) != PATH_REACH_MASK ||
		    under_auto_mask_fs(b, fs, path) || under_view_mask(view, path))
			continue;
		int r = view_mask(d, b, view, n_masks, path, is_deny_dir(b, path));
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Implicit exec entries: the program, each #! interpreter and the ELF
 * loaders box-recheck found (box.ini(5) exec_system: Landlock EXECUTE on
 * exactly these, the exec entries and box's aliases).
 */
static int
view_implicit_exec(const struct box *b, const Box__CfgFilesystem *fs, struct viewv *view)
{
	const char *impl[1 + 8 + RECHECK_LOADERS_MAX];
	size_t ni = 0;

	impl[ni++] = b->rc.program;
	for (size_t i = 0; i < b->rc.n_interpreters && ni < 1 + 8; i++)
		impl[ni++] = b->rc.interpreters[i];
	for (size_t i = 0; i < b->rc.n_loaders && i < RECHECK_LOADERS_MAX; i++)
		impl[ni++] = b->rc.loaders[i];
	for (size_t i = 0; i < ni; i++) {
		bool dup = exec_covers(fs, impl[i]);
		for (size_t k = 0; k < i; k++)
			dup |= strcmp(impl[k], impl[i]) == 0;
		if (!dup && view_add(view, impl[i], BOX__VIEW_KIND__VIEW_EXEC, NULL) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int
plan_view(struct boxd *d, struct box *b, Box__Plan *p)
{
	const Box__CfgFilesystem *fs = b->spec->agent->filesystem;
	struct viewv view = { 0 };
	unsigned *n_masks = &b->n_masks_made;
	int r = 0;

	if (fs && ((r = view_grants(fs, &view)) < 0 ||
		   (r = view_auto_masks(d, b, fs, &view, n_masks)) < 0 ||
		   (r = view_denies(d, b, fs, &view, n_masks)) < 0))
		goto out;
	if ((r = view_config_files(d, b, fs, &view, n_masks)) < 0 ||
	    (r = view_implicit_exec(b, fs, &view)) < 0)
		goto out;
	p->view = TAKE_PTR(view.v);
	p->n_view = view.n;
	view.n = 0; /* the plan owns them now (plan_free on failure) */
out:
	for (size_t i = 0; i < view.n; i++)
		box__view_entry__free_unpacked(view.v[i], NULL);
	free(view.v);
	return r;
}

/* BASE/ID and its tmp, var_tmp, dev_shm (and home when not granted); the workspace. */
static int
plan_runtime(const struct box *b, Box__Plan *p)
{
	const Box__CfgFilesystem *fs = b->spec->agent->filesystem;
	Box__RuntimeDirs *rt = p->runtime;

	rt->dir = strdup(b->runtime_dir);
	rt->tmp = path_join(b->runtime_dir, "tmp");
	rt->var_tmp = path_join(b->runtime_dir, "var_tmp");
	rt->dev_shm = path_join(b->runtime_dir, "dev_shm");
	if (!rt->dir || !rt->tmp || !rt->var_tmp || !rt->dev_shm)
		return -ENOMEM;
	if (!granted(fs, b->owner.home) && home_manageable(b->owner.home)) {
		rt->home = path_join(b->runtime_dir, "home");
		if (!rt->home)
			return -ENOMEM;
	}
	if (b->gateway_serving) {
		/* The CA at /run/box/ca.pem; the listener the gateway serves. */
		rt->ca_pem = path_join(b->runtime_dir, "ca.pem");
		if (!rt->ca_pem)
			return -ENOMEM;
		p->has_gateway_port = 1;
		p->gateway_port = gateway_port(b);
		if (otlp_port(b)) {
			p->has_otlp_port = 1;
			p->otlp_port = otlp_port(b);
		}
	}
	p->workspace = strdup(b->rc.workspace);
	return p->workspace ? 0 : -ENOMEM;
}

static void
strv_free(struct strv *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->v[i]);
	free(v->v);
}

int
plan_agent_env(struct box *b, char ***env, size_t *n)
{
	struct strv v = { 0 };
	if (build_env(b, b->rc.workspace, &v) < 0) {
		strv_free(&v);
		return -ENOMEM;
	}
	*env = v.v;
	*n = v.n;
	return 0;
}

void
plan_env_free(char **env, size_t n)
{
	struct strv v = { .v = env, .n = n };
	strv_free(&v);
}

/* argv: the program as resolved, the command's words, boxctl's extra args; the environment. */
static int
plan_command(struct box *b, Box__Plan *p)
{
	const Box__CfgArgv *cmd = b->spec->agent->command;
	struct strv argv = { 0 }, env = { 0 };

	strv_add(&argv, strdup(b->rc.argv0));
	for (size_t i = 1; i < cmd->n_argv; i++)
		strv_add(&argv, strdup(cmd->argv[i]));
	for (size_t i = 0; i < b->n_extra_args; i++)
		strv_add(&argv, strdup(b->extra_args[i]));
	if (argv.oom || build_env(b, p->workspace, &env) < 0) {
		strv_free(&argv);
		strv_free(&env);
		return -ENOMEM;
	}
	p->argv = argv.v;
	p->n_argv = argv.n;
	p->env = env.v;
	p->n_env = env.n;
	return 0;
}

/*
 * rlimits (the sandbox's own nofile / nproc), pids_max / memory_max and the
 * box's cgroups (box-wide: the agent, box-shell and every tool join them).
 */
static int
plan_limits_of(const struct box *b, Box__Plan *p, const Box__CfgU64 *nofile,
	       const Box__CfgU64 *nproc)
{
	const Box__CfgAgent *a = b->spec->agent;

	if (!nofile && !nproc && !a->pids_max && !a->memory_max)
		return 0;
	Box__Limits *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	box__limits__init(l);
	p->limits = l;
	if (nofile) {
		l->has_nofile = 1;
		l->nofile = nofile->value < 16 ? 16 : nofile->value;
	}
	if (nproc) {
		l->has_nproc = 1;
		l->nproc = nproc->value;
	}
	if (a->pids_max) {
		l->has_pids_max = 1;
		l->pids_max = a->pids_max->value;
		if (b->nproc_fallback && (!l->has_nproc || l->nproc > l->pids_max)) {
			l->has_nproc = 1;
			l->nproc = l->pids_max;
		}
	}
	if (a->memory_max) {
		l->has_memory_max = 1;
		l->memory_max = a->memory_max->value;
	}
	l->cgroups = calloc(b->n_cgroups ? b->n_cgroups : 1, sizeof(char *));
	if (!l->cgroups)
		return -ENOMEM;
	for (size_t i = 0; i < b->n_cgroups; i++)
		if (!(l->cgroups[l->n_cgroups++] = strdup(b->cgroups[i])))
			return -ENOMEM;
	return 0;
}

static int
plan_limits(const struct box *b, Box__Plan *p)
{
	return plan_limits_of(b, p, b->spec->agent->nofile, b->spec->agent->nproc);
}

/* [agent] exec_system (default false): every system program executable. */
static bool
agent_exec_system(const Box__CfgAgent *a)
{
	return a->exec_system && a->exec_system->value;
}

/* Required layers, and the fds that are the caller's terminal (they get the box's pty slave). */
static void
plan_layers_and_pty(const struct box *b, Box__Plan *p)
{
	p->require_landlock = requires(b->spec->box, BOX__LAYER__LAYER_LANDLOCK);
	p->require_seccomp = requires(b->spec->box, BOX__LAYER__LAYER_SECCOMP);
	if (!b->stdio_tty)
		return;
	p->has_pty_fds = 1;
	p->pty_fds = b->stdio_tty;
	if (b->req->has_rows && b->req->has_cols) {
		p->has_pty_rows = p->has_pty_cols = 1;
		p->pty_rows = b->req->rows;
		p->pty_cols = b->req->cols;
	}
}

int
plan_build(struct boxd *d, struct box *b, Box__Plan **ret, char **err)
{
	Box__Plan *p = NULL;
	char why[256];
	int r;

	*err = NULL;
	plan_recheck(b);
	if (b->rc.n_problems)
		return -EINVAL;
	if ((r = plan_new(b, &p)) < 0 || (r = plan_view(d, b, p)) < 0 ||
	    (r = plan_runtime(b, p)) < 0 || (r = plan_command(b, p)) < 0 ||
	    (r = plan_limits(b, p)) < 0)
		goto fail;
	plan_layers_and_pty(b, p);
	p->has_exec_system = 1;
	p->exec_system = agent_exec_system(b->spec->agent);
	/* [agent] supervise = fs: PID 1 decides the agent's own file system calls (start_trampoline) */
	if (b->spec->agent->has_supervise &&
	    b->spec->agent->supervise == BOX__SUPERVISE__SUPERVISE_FS) {
		p->has_supervise = 1;
		p->supervise = true;
	}
	if ((r = box_plan_validate(p, why, sizeof(why))) < 0) {
		*err = fmt("the sandbox plan is invalid: %s", why);
		goto fail;
	}
	*ret = p;
	return 0;
fail:
	plan_free(p);
	if (!*err)
		*err = fmt("cannot build the sandbox plan: %s", strerror(-r));
	return r < 0 ? r : -EIO;
}

/* ------------------------------------------------------------------ */
/* box-shell's plan, the agent's shell parts, tool sandboxes            */

const char *
plan_agent_path(const struct box *b)
{
	const Box__CfgEnv *e = b->spec->agent->env;
	for (size_t i = 0; e && i < e->n_vars; i++)
		if (strcmp(e->vars[i]->name, "PATH") == 0)
			return e->vars[i]->value;
	return DEFAULT_PATH;
}

/* A deep copy through the wire format (the plan's own free releases it). */
static int
plan_copy(const Box__Plan *src, Box__Plan **ret)
{
	size_t len = box__plan__get_packed_size(src);
	_cleanup_free_ uint8_t *buf = malloc(len ? len : 1);

	if (!buf)
		return -ENOMEM;
	box__plan__pack(src, buf);
	*ret = box__plan__unpack(NULL, len, buf);
	return *ret ? 0 : -ENOMEM;
}

static void
strv_take(struct strv *v, char ***dst, size_t *n)
{
	*dst = v->v;
	*n = v->n;
	v->v = NULL;
	v->n = v->cap = 0;
}

#define SHELL_TEST_ENV_PREFIX "BOX_TEST_SHELL_"

int
plan_shell(const struct box *b, const Box__Plan *agent, const char *exe, const char *level_arg,
	   Box__Plan **ret, char **err)
{
	extern char **environ;
	Box__Plan *p = NULL;
	struct strv argv = { 0 }, env = { 0 };
	char why[256];
	int r;

	*err = NULL;
	if ((r = plan_copy(agent, &p)) < 0)
		goto fail;
	p->kind = BOX__SANDBOX_KIND__SANDBOX_SHELL;
	p->contain_egress = true;
	/* box-shell never execs: its own binary (workload_bin) and the loader are all it runs. */
	p->has_exec_system = 1;
	p->exec_system = false;
	p->has_gateway_port = 0;
	p->gateway_port = 0;
	p->has_otlp_port = 0;
	p->otlp_port = 0;
	/* box-shell decides its own file operations; [agent] supervise is the agent's alone */
	p->has_supervise = 0;
	p->supervise = false;
	p->has_pty_fds = p->has_pty_rows = p->has_pty_cols = 0;
	p->pty_fds = p->pty_rows = p->pty_cols = 0;
	/* No /run/box: no aliases, no sockets, no CA (box-shell reaches no network). */
	free(p->runtime->ca_pem);
	free(p->runtime->run_box_bin);
	free(p->runtime->shell_sock);
	free(p->runtime->mcp_sock);
	free(p->runtime->shell_alias);
	p->runtime->ca_pem = p->runtime->run_box_bin = p->runtime->shell_sock = NULL;
	p->runtime->mcp_sock = p->runtime->shell_alias = NULL;
	/* The box-wide limits hold for box-shell too; the agent's own rlimits do not. */
	if (p->limits) {
		p->limits->has_nofile = 0;
		if (!(p->limits->has_pids_max && p->limits->n_cgroups == 0))
			p->limits->has_nproc = 0;
	}
	for (size_t i = 0; i < p->n_argv; i++)
		free(p->argv[i]);
	free(p->argv);
	for (size_t i = 0; i < p->n_env; i++)
		free(p->env[i]);
	free(p->env);
	p->argv = p->env = NULL;
	p->n_argv = p->n_env = 0;
	strv_add(&argv, strdup(exe));
	if (level_arg)
		strv_add(&argv, strdup(level_arg)); /* its log level: daemon_stderr */
	/* Its own environment is box's, not the agent's: each invocation brings the caller's. */
	strv_add(&env, fmt("HOME=%s", b->owner.home));
	strv_add(&env, fmt("PATH=%s", DEFAULT_PATH));
	strv_add(&env, fmt("USER=%s", b->owner.name));
	strv_add(&env, fmt("BOX_NAME=%s", b->name));
	strv_add(&env, fmt("BOX_ID=%s", b->id));
	/* Test hooks boxd itself was given (bounded); they can only slow a step. */
	for (char **e = environ; e && *e && env.n < 16; e++)
		if (strncmp(*e, SHELL_TEST_ENV_PREFIX, strlen(SHELL_TEST_ENV_PREFIX)) == 0 &&
		    strlen(*e) < 256 && strchr(*e, '='))
			strv_add(&env, strdup(*e));
#if BOXD_ASAN
	strv_add(&env, fmt("ASAN_OPTIONS=detect_leaks=0"));
#endif
	if (argv.oom || env.oom) {
		r = -ENOMEM;
		goto fail;
	}
	strv_take(&argv, &p->argv, &p->n_argv);
	strv_take(&env, &p->env, &p->n_env);
	free(p->workload_bin);
	if (!(p->workload_bin = strdup(exe))) {
		r = -ENOMEM;
		goto fail;
	}
	p->has_pass_fds = 1;
	p->pass_fds = 3;
	if ((r = box_plan_validate(p, why, sizeof(why))) < 0) {
		*err = fmt("box-shell's sandbox plan is invalid: %s", why);
		goto fail;
	}
	*ret = p;
	return 0;
fail:
	strv_free(&argv);
	strv_free(&env);
	plan_free(p);
	if (!*err)
		*err = fmt("cannot build box-shell's sandbox plan: %s", strerror(-r));
	return r < 0 ? r : -EIO;
}

int
plan_agent_shell(const struct box *b, Box__Plan *p)
{
	Box__RuntimeDirs *rt = p->runtime;

	rt->run_box_bin = path_join(b->runtime_dir, "bin");
	rt->shell_sock = path_join(b->runtime_dir, "shell.sock");
	rt->shell_alias = path_join(b->runtime_dir, "bin/box-alias");
	/* The MCP aliases' socket: the agent's alone (box-shell, tools, servers never get it). */
	if (mcpd_wanted(b->spec) && !(rt->mcp_sock = path_join(b->runtime_dir, "mcp.sock")))
		return -ENOMEM;
	return rt->run_box_bin && rt->shell_sock && rt->shell_alias ? 0 : -ENOMEM;
}

/* Does a contained tool reach the gateway (docs/box.ini.5.md contain_egress, default true)? */
static bool
tool_contained(const Box__CfgTool *t)
{
	return !(t && t->network && t->network->contain_egress &&
		 !t->network->contain_egress->value);
}

/*
 * The base plan of a table (tool_idx), or of the agent's exec entries (-1):
 * the table's grants (exec-capable: the trampoline's tool kind), its masks,
 * an implicit exec entry for its program, private tmp (no runtime dirs),
 * the gateway's CA and listener when contained; argv, env and workspace are
 * per spawn.
 */
static int sandbox_base_plan(struct boxd *d, struct box *b, const Box__CfgFilesystem *fs,
			     const char *program, bool contained, const Box__CfgU64 *nofile,
			     const Box__CfgU64 *nproc, const char *masked, Box__Plan **ret);

/*
 * The agent's exec entries' sandbox (tool_idx -1, not PYTHON) masks the host
 * python3 (docs/sandbox.md, "The python aliases"): its programs run
 * unsupervised with the agent's grants, and the host python3 with those grants
 * runs only supervised (PYTHON: the same grants, its own base plan); so no
 * exec entry's program reaches it (`env python3`, a #! line, the ELF loader).
 */
static int
tool_base_plan(struct boxd *d, struct box *b, int tool_idx, bool python, Box__Plan **ret)
{
	const Box__CfgTool *t = tool_idx >= 0 ? b->spec->tools[tool_idx] : NULL;

	return sandbox_base_plan(d, b, t ? t->filesystem : b->spec->agent->filesystem,
				 t ? b->tool_prog[tool_idx] : NULL, tool_contained(t),
				 t ? t->nofile : b->spec->agent->nofile,
				 t ? t->nproc : b->spec->agent->nproc,
				 !t && !python ? b->host_python_file : NULL, ret);
}

/*
 * A SANDBOX_TOOL base plan: grants FS (exec-capable), their masks, PROGRAM's
 * implicit exec grant, the CA and the gateway port when CONTAINED and the
 * gateway serves; tool_base_plan's and plan_mcp_server's.
 */
static int
sandbox_base_plan(struct boxd *d, struct box *b, const Box__CfgFilesystem *fs,
		  const char *program, bool contained, const Box__CfgU64 *nofile,
		  const Box__CfgU64 *nproc, const char *masked, Box__Plan **ret)
{
	struct viewv view = { 0 };
	Box__Plan *p = NULL;
	int r;

	if ((r = plan_new(b, &p)) < 0)
		goto fail;
	p->kind = BOX__SANDBOX_KIND__SANDBOX_TOOL;
	p->contain_egress = contained;
	p->has_exec_system = 1;
	p->exec_system = true;
	if (fs && ((r = view_grants(fs, &view)) < 0 ||
		   (r = view_auto_masks(d, b, fs, &view, &b->n_masks_made)) < 0 ||
		   (r = view_denies(d, b, fs, &view, &b->n_masks_made)) < 0 ||
		   (r = view_agent_denies(d, b, fs, &view, &b->n_masks_made)) < 0))
		goto fail;
	if ((r = view_config_files(d, b, fs, &view, &b->n_masks_made)) < 0)
		goto fail;
	/* Its command file gets an implicit exec grant (docs/box.ini.5.md), unless a grant holds it. */
	if (program && !granted(fs, program) &&
	    (r = view_add(&view, program, BOX__VIEW_KIND__VIEW_EXEC, NULL)) < 0)
		goto fail;
	/* MASKED (a file): a grant or exec entry of that very file dropped, a mask over it */
	if (masked && !under_view_mask(&view, masked)) {
		size_t k = 0;
		for (size_t i = 0; i < view.n; i++) {
			if (strcmp(view.v[i]->path, masked) == 0)
				box__view_entry__free_unpacked(view.v[i], NULL);
			else
				view.v[k++] = view.v[i];
		}
		view.n = k;
		if ((r = view_mask(d, b, &view, &b->n_masks_made, masked, false)) < 0)
			goto fail;
	}
	p->view = TAKE_PTR(view.v);
	p->n_view = view.n;
	view.n = 0;
	Box__RuntimeDirs *rt = p->runtime;
	if (!(rt->dir = strdup(b->runtime_dir))) {
		r = -ENOMEM;
		goto fail;
	}
	if (p->contain_egress && b->gateway_serving) {
		if (!(rt->ca_pem = path_join(b->runtime_dir, "ca.pem"))) {
			r = -ENOMEM;
			goto fail;
		}
		p->has_gateway_port = 1;
		p->gateway_port = gateway_port(b);
	}
	if ((r = plan_limits_of(b, p, nofile, nproc)) < 0)
		goto fail;
	p->require_landlock = requires(b->spec->box, BOX__LAYER__LAYER_LANDLOCK);
	p->require_seccomp = requires(b->spec->box, BOX__LAYER__LAYER_SECCOMP);
	*ret = p;
	return 0;
fail:
	for (size_t i = 0; i < view.n; i++)
		box__view_entry__free_unpacked(view.v[i], NULL);
	free(view.v);
	plan_free(p);
	return r;
}

/* Add NAME=value, replacing an earlier NAME (the plan's environment names each once). */
static void
env_set(struct strv *env, char *entry)
{
	if (!entry) {
		env->oom = true;
		return;
	}
	size_t nl = strcspn(entry, "=");
	for (size_t i = 0; i < env->n; i++)
		if (strncmp(env->v[i], entry, nl + 1) == 0) {
			free(env->v[i]);
			env->v[i] = entry;
			return;
		}
	strv_add(env, entry);
}

/*
 * A tool's environment (docs/design.md, docs/box.ini.5.md [tool.NAME.env]): the
 * section's variables (the agent's for an exec entry), HOME and PATH
 * defaults (no /run/box/bin), TERM LANG TZ from the caller; then the
 * variables this invocation assigned, minus the reserved names and the
 * [egress] variables; then what box sets: USER, PWD, BOX_NAME, BOX_ID, and
 * for a contained tool the proxy, CA and placeholder variables.
 */
static int
tool_env(struct box *b, const Box__CfgEnv *e, bool contained, char *const *req_env,
	 size_t n_req, const char *workspace, struct strv *env)
{
	const Box__BoxSpec *s = b->spec;
	static const char *const inherited[] = { "TERM", "LANG", "TZ" };

	env_set(env, fmt("HOME=%s", b->owner.home));
	env_set(env, fmt("PATH=%s", DEFAULT_PATH));
	for (size_t i = 0; i < s->caller->n_inherit; i++) {
		const Box__CfgEnvVar *v = s->caller->inherit[i];
		for (size_t k = 0; k < 3; k++)
			if (strcmp(v->name, inherited[k]) == 0)
				env_set(env, fmt("%s=%s", v->name, v->value));
	}
	for (size_t i = 0; e && i < e->n_vars; i++)
		env_set(env, fmt("%s=%s", e->vars[i]->name, e->vars[i]->value));
	for (size_t i = 0; i < n_req; i++) {
		const char *eq = strchr(req_env[i], '=');
		if (!eq || eq == req_env[i])
			continue; /* the validator's shape; re-checked */
		_cleanup_free_ char *name = strndup(req_env[i], (size_t)(eq - req_env[i]));
		if (!name)
			return -ENOMEM;
		if (box_env_reserved(name) || box_spec_egress_variable(s, name))
			continue;
		env_set(env, strdup(req_env[i]));
	}
	env_set(env, fmt("USER=%s", b->owner.name));
	env_set(env, fmt("PWD=%s", workspace));
	env_set(env, fmt("BOX_NAME=%s", b->name));
	env_set(env, fmt("BOX_ID=%s", b->id));
	if (contained) {
		struct strv gw = { 0 };
		gateway_env(b, &gw);
		for (size_t i = 0; i < gw.n; i++)
			env_set(env, TAKE_PTR(gw.v[i]));
		env->oom |= gw.oom;
		free(gw.v);
	}
	return env->oom ? -ENOMEM : 0;
}

int
plan_tool(struct boxd *d, struct box *b, int tool_idx, const Box__SpawnRequest *rq,
	  Box__Plan **ret, char **err)
{
	const char *cwd = rq->cwd;
	const Box__CfgTool *t = tool_idx >= 0 ? b->spec->tools[tool_idx] : NULL;
	const Box__CfgFilesystem *fs = t ? t->filesystem : b->spec->agent->filesystem;
	Box__Plan **base = tool_idx >= 0 ? &b->tool_plans[tool_idx] :
			   rq->python	 ? &b->python_plan :
					   &b->exec_plan;
	Box__Plan *p = NULL;
	struct strv av = { 0 }, env = { 0 };
	char why[256];
	int r;

	*err = NULL;
	if (!*base && (r = tool_base_plan(d, b, tool_idx, rq->python, base)) < 0)
		goto fail;
	if ((r = plan_copy(*base, &p)) < 0)
		goto fail;
	/* docs/box.ini.5.md: the table's workspace; else the shell's cwd when its grants hold it. */
	const char *ws = t && t->workspace ? t->workspace->path :
			 granted(fs, cwd)	   ? cwd :
						     b->rc.workspace;
	free(p->workspace);
	if (!(p->workspace = strdup(ws))) {
		r = -ENOMEM;
		goto fail;
	}
	/*
	 * argv[0]: the canonical program (the trampoline execs argv[0]), then the
	 * arguments; the name the program sees is the request's argv[0] (as typed,
	 * or exec -a NAME): a name only, boxd matched the program by its path.
	 */
	strv_add(&av, strdup(rq->program_path));
	for (size_t i = 1; i < rq->n_argv; i++)
		strv_add(&av, strdup(rq->argv[i]));
	const Box__CfgEnv *cfg_env = t ? t->env : b->spec->agent->env;
	if (av.oom || (!rq->clear_env && (r = tool_env(b, cfg_env, p->contain_egress, rq->env,
						       rq->n_env, ws, &env)) < 0)) {
		r = -ENOMEM;
		goto fail;
	}
	free(p->argv0);
	if (strcmp(rq->argv[0], rq->program_path) == 0)
		p->argv0 = NULL;
	else if (!(p->argv0 = strdup(rq->argv[0]))) {
		r = -ENOMEM;
		goto fail;
	}
	strv_take(&av, &p->argv, &p->n_argv);
	strv_take(&env, &p->env, &p->n_env);
	/*
	 * supervise = fs: PID 1 decides each file system call (workload_start passes
	 * its channel); the host python3 of the python aliases always (docs/sandbox.md).
	 */
	if ((t && t->has_supervise && t->supervise == BOX__SUPERVISE__SUPERVISE_FS) ||
	    (!t && rq->python)) {
		p->has_supervise = 1;
		p->supervise = true;
	}
	if ((r = box_plan_validate(p, why, sizeof(why))) < 0) {
		*err = fmt("the tool's sandbox plan is invalid: %s", why);
		goto fail;
	}
	*ret = p;
	return 0;
fail:
	strv_free(&av);
	strv_free(&env);
	plan_free(p);
	if (!*err)
		*err = fmt("cannot build the tool's sandbox plan: %s", strerror(-r));
	return r < 0 ? r : -EIO;
}

bool
mcpd_wanted(const Box__BoxSpec *s)
{
	for (size_t i = 0; i < s->n_mcp; i++)
		if (s->mcp[i]->type == BOX__MCP_TYPE__MCP_TYPE_STDIO)
			return true;
	return false;
}

const char *
mcpd_program(const struct box *b, size_t i)
{
	for (size_t k = 0; k < b->rc.n_mcp; k++)
		if (strcmp(b->rc.mcp_names[k], b->spec->mcp[i]->name) == 0)
			return b->rc.mcp_programs[k];
	return NULL;
}

/* Does a stdio [mcp.NAME] reach the gateway (contain_egress, default true)? */
static bool
mcp_contained(const Box__CfgMcp *m)
{
	return !(m->network && m->network->contain_egress && !m->network->contain_egress->value);
}

const char *
plan_mcp_cwd(const struct box *b, size_t mcp_idx)
{
	const Box__CfgMcp *m = b->spec->mcp[mcp_idx];
	return b->rc.workspace && granted(m->filesystem, b->rc.workspace) ? b->rc.workspace :
									      b->owner.home;
}

int
plan_mcp_server(struct boxd *d, struct box *b, size_t mcp_idx, Box__Plan **ret, char **err)
{
	const Box__CfgMcp *m = b->spec->mcp[mcp_idx];
	const char *program = mcpd_program(b, mcp_idx);
	Box__Plan *p = NULL;
	struct strv av = { 0 }, env = { 0 };
	char why[256];
	int r;

	*err = NULL;
	if (m->type != BOX__MCP_TYPE__MCP_TYPE_STDIO || !program) {
		*err = fmt("[mcp.%s] has no program box-recheck resolved", m->name);
		return -EINVAL;
	}
	if (!b->mcp_plans && !(b->mcp_plans = calloc(b->spec->n_mcp, sizeof(*b->mcp_plans))))
		return -ENOMEM;
	Box__Plan **base = &b->mcp_plans[mcp_idx];
	/* Its own grants only: never the agent's, never /run/box/bin or a socket of box's. */
	if (!*base && (r = sandbox_base_plan(d, b, m->filesystem, program, mcp_contained(m), NULL,
					     NULL, NULL, base)) < 0)
		goto fail;
	if ((r = plan_copy(*base, &p)) < 0)
		goto fail;
	const char *ws = plan_mcp_cwd(b, mcp_idx);
	free(p->workspace);
	if (!(p->workspace = strdup(ws))) {
		r = -ENOMEM;
		goto fail;
	}
	/* argv[0]: the canonical program (the trampoline execs it); the configured arguments. */
	strv_add(&av, strdup(program));
	for (size_t i = 1; i < m->command->n_argv; i++)
		strv_add(&av, strdup(m->command->argv[i]));
	if (av.oom || (r = tool_env(b, m->env, p->contain_egress, NULL, 0, ws, &env)) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	strv_take(&av, &p->argv, &p->n_argv);
	strv_take(&env, &p->env, &p->n_env);
	/* supervise = fs: PID 1 decides each file system call (workload_start passes its channel) */
	if (m->has_supervise && m->supervise == BOX__SUPERVISE__SUPERVISE_FS) {
		p->has_supervise = 1;
		p->supervise = true;
	}
	if ((r = box_plan_validate(p, why, sizeof(why))) < 0) {
		*err = fmt("the MCP server's sandbox plan is invalid: %s", why);
		goto fail;
	}
	*ret = p;
	return 0;
fail:
	strv_free(&av);
	strv_free(&env);
	plan_free(p);
	if (!*err)
		*err = fmt("cannot build the MCP server's sandbox plan: %s", strerror(-r));
	return r < 0 ? r : -EIO;
}

/* ------------------------------------------------------------------ */
/* disclosure                                                          */

static const char *
view_kind_name(Box__ViewKind k)
{
	switch (k) {
	case BOX__VIEW_KIND__VIEW_READ:
		return "read";
	case BOX__VIEW_KIND__VIEW_WRITE:
		return "write";
	case BOX__VIEW_KIND__VIEW_READ_FILE:
		return "read_file";
	case BOX__VIEW_KIND__VIEW_WRITE_FILE:
		return "write_file";
	case BOX__VIEW_KIND__VIEW_EXEC:
		return "exec";
	case BOX__VIEW_KIND__VIEW_DENY:
		return "deny";
	case BOX__VIEW_KIND__VIEW_INVALID:
	case _BOX__VIEW_KIND_IS_INT_SIZE:
	default:
		return "?";
	}
}

static const char *const credential_stores[] = { ".ssh",    ".aws",  ".gnupg",	      ".netrc",
						 ".docker", ".kube", ".config/gcloud" };

const char *
plan_credential_store_of(const struct box *b, const char *path)
{
	size_t hl = strlen(b->owner.home);
	if (strncmp(path, b->owner.home, hl) != 0 || path[hl] != '/')
		return NULL;
	for (size_t i = 0; i < ELEMENTSOF(credential_stores); i++) {
		size_t sl = strlen(credential_stores[i]);
		const char *rel = path + hl + 1;
		if (strncmp(rel, credential_stores[i], sl) == 0 && (rel[sl] == '\0' || rel[sl] == '/'))
			return credential_stores[i];
	}
	return NULL;
}

static bool
is_credential_store(const struct box *b, const char *path)
{
	for (size_t i = 0; i < ELEMENTSOF(credential_stores); i++) {
		_cleanup_free_ char *p = path_join(b->owner.home, credential_stores[i]);
		if (p && strcmp(p, path) == 0)
			return true;
	}
	return false;
}

/*
 * `policy: FILE (N rules)` — N as box-policyd reported it in PolicyReady —
 * and which daemons decide today: box-gateway (connections, HTTP requests)
 * and box-shell (every shell command the agent runs through the aliases);
 * and box-mcpd (every start of and request to a stdio [mcp] server) when
 * the box has one.
 */
static void
disclose_policy(const struct box *b, struct strv *out)
{
	const Box__BoxSpec *s = b->spec;
	if (s->box->policy)
		strv_add(out, fmt("policy: %s (%u rule%s)", s->box->policy->path, b->policy_rules,
				  b->policy_rules == 1 ? "" : "s"));
	else
		strv_add(out, fmt("policy: none (every decided action is denied)"));
	strv_add(out, fmt("decided by policy: every connection and HTTP request (net:connect, "
			  "http:request by box-gateway); every command run through the shell "
			  "aliases (shell:exec, fs:*, shell:spawn by box-shell)%s",
			  mcpd_wanted(s) ? "; every start of and request to a stdio MCP server "
					   "(shell:spawn, mcp:call by box-mcpd)" : ""));
}

/*
 * " (NAME resolved on PATH=…)" when [agent] command names a bare program:
 * the PATH recheck.c resolved it on (the agent's env PATH, else the
 * default; never the caller's). NULL for an absolute path.
 */
static char *
disclose_resolution(const Box__CfgAgent *a)
{
	const char *w0 = a->command->argv[0], *path = DEFAULT_PATH;
	if (strchr(w0, '/'))
		return NULL;
	if (a->env)
		for (size_t i = 0; i < a->env->n_vars; i++)
			if (strcmp(a->env->vars[i]->name, "PATH") == 0)
				path = a->env->vars[i]->value;
	return fmt(" (%s resolved on PATH=%s)", w0, path);
}

/*
 * "  (read-only, noexec)": the mount flags box-trampoline gives an agent
 * grant (mount.c collect()): grants are noexec; an exec entry is exec and
 * keeps the read-only or read-write state of the innermost grant holding it.
 */
static void
mount_flags(const Box__Plan *p, const Box__ViewEntry *e, char *buf, size_t len)
{
	bool rw;
	switch (e->kind) {
	case BOX__VIEW_KIND__VIEW_READ:
	case BOX__VIEW_KIND__VIEW_READ_FILE:
		snprintf(buf, len, "  (read-only, noexec)");
		return;
	case BOX__VIEW_KIND__VIEW_WRITE:
	case BOX__VIEW_KIND__VIEW_WRITE_FILE:
		snprintf(buf, len, "  (read-write, noexec)");
		return;
	case BOX__VIEW_KIND__VIEW_EXEC: {
		const Box__ViewEntry *best = NULL;
		for (size_t i = 0; i < p->n_view; i++) {
			const Box__ViewEntry *g = p->view[i];
			if (g->kind == BOX__VIEW_KIND__VIEW_EXEC || g->kind == BOX__VIEW_KIND__VIEW_DENY ||
			    !path_is_under(e->path, g->path))
				continue;
			if (!best || strlen(g->path) > strlen(best->path) ||
			    (strlen(g->path) == strlen(best->path) &&
			     (g->kind == BOX__VIEW_KIND__VIEW_WRITE ||
			      g->kind == BOX__VIEW_KIND__VIEW_WRITE_FILE)))
				best = g;
		}
		rw = best && (best->kind == BOX__VIEW_KIND__VIEW_WRITE ||
			      best->kind == BOX__VIEW_KIND__VIEW_WRITE_FILE);
		snprintf(buf, len, "  (%s, exec)", rw ? "read-write" : "read-only");
		return;
	}
	case BOX__VIEW_KIND__VIEW_DENY:
	case BOX__VIEW_KIND__VIEW_INVALID:
	case _BOX__VIEW_KIND_IS_INT_SIZE:
	default:
		buf[0] = '\0';
		return;
	}
}

/*
 * Each [tool.NAME], as box-shell serves it: its program (canonical, as
 * box-recheck resolved it) and fixed arguments, every grant (exec-capable),
 * its workspace rule and network; [mcp] sections: box-mcpd, which would
 * serve them, is not built, so each is shown as inactive.
 */
static char *join_argv(char **v, size_t n);

/*
 * The agent's deny entries in the view of a sandbox with grants fs: each
 * masked there, as a deny line of its listing; each fs names exactly, as an
 * exception line (the warning is disclose_deny_exceptions').
 */
static void
disclose_agent_denies(const struct box *b, const Box__CfgFilesystem *fs, struct strv *out)
{
	const Box__CfgFilesystem *afs = b->spec->agent->filesystem;

	for (size_t i = 0; afs && i < afs->n_deny; i++) {
		const char *path = afs->deny[i]->path;
		enum path_reach r = agent_deny_reach(fs, path, NULL);
		if (r == PATH_REACH_MASK && !under_auto_mask_fs(b, fs, path))
			strv_add(out, fmt("  %-11s %s  (masked: the agent's deny)", "deny", path));
		else if (r == PATH_REACH_EXCEPTION)
			strv_add(out, fmt("  %-11s %s  (exception to agent deny: named here)",
					  "exception", path));
	}
}

/* Warnings (quiet too): each agent deny entry a tool or server names exactly, and where. */
static void
disclose_deny_exceptions(const struct box *b, struct strv *out)
{
	const Box__BoxSpec *s = b->spec;
	const Box__CfgFilesystem *afs = s->agent->filesystem;

	for (size_t i = 0; afs && i < afs->n_deny; i++) {
		const char *path = afs->deny[i]->path;
		uint32_t line;
		for (size_t k = 0; k < s->n_tools; k++)
			if (agent_deny_reach(s->tools[k]->filesystem, path, NULL) ==
			    PATH_REACH_EXCEPTION)
				strv_add(out, fmt("warning: exception to agent deny: %s is visible to "
						  "tool.%s (its %s entry names it)",
						  path, s->tools[k]->name,
						  grant_key(s->tools[k]->filesystem, path, &line)));
		for (size_t k = 0; k < s->n_mcp; k++)
			if (s->mcp[k]->type == BOX__MCP_TYPE__MCP_TYPE_STDIO &&
			    agent_deny_reach(s->mcp[k]->filesystem, path, NULL) ==
				    PATH_REACH_EXCEPTION)
				strv_add(out, fmt("warning: exception to agent deny: %s is visible to "
						  "mcp.%s (its %s entry names it)",
						  path, s->mcp[k]->name,
						  grant_key(s->mcp[k]->filesystem, path, &line)));
	}
}

static void
disclose_tools(const struct box *b, struct strv *out)
{
	const Box__BoxSpec *s = b->spec;

	for (size_t i = 0; i < s->n_tools; i++) {
		const Box__CfgTool *t = s->tools[i];
		const Box__CfgFilesystem *fs = t->filesystem;
		const char *prog = b->tool_prog && b->tool_prog[i] ? b->tool_prog[i] :
								     t->command->argv[0];
		_cleanup_free_ char *args = join_argv(t->command->argv + 1, t->command->n_argv - 1);
		strv_add(out, fmt("tool %s: %s%s%s (after a shell:spawn permit, in its own "
				  "sandbox)",
				  t->name, prog, t->command->n_argv > 1 ? " " : "",
				  t->command->n_argv > 1 && args ? args : ""));
		struct {
			Box__CfgPath **v;
			size_t n;
			const char *key, *flags;
		} lists[] = {
			{ fs ? fs->read : NULL, fs ? fs->n_read : 0, "read", "  (read-only, exec)" },
			{ fs ? fs->write : NULL, fs ? fs->n_write : 0, "write", "  (read-write, exec)" },
			{ fs ? fs->read_file : NULL, fs ? fs->n_read_file : 0, "read_file",
			  "  (read-only, exec)" },
			{ fs ? fs->write_file : NULL, fs ? fs->n_write_file : 0, "write_file",
			  "  (read-write, exec)" },
			{ fs ? fs->deny : NULL, fs ? fs->n_deny : 0, "deny", "  (masked)" },
		};
		for (size_t l = 0; l < ELEMENTSOF(lists); l++)
			for (size_t k = 0; k < lists[l].n; k++)
				strv_add(out, fmt("  %-11s %s%s", lists[l].key, lists[l].v[k]->path,
						  lists[l].flags));
		disclose_agent_denies(b, fs, out);
		if (!granted(fs, prog))
			strv_add(out, fmt("  %-11s %s  (implicit: the tool's program)", "exec", prog));
		if (t->workspace)
			strv_add(out, fmt("  %-11s %s", "workspace", t->workspace->path));
		else
			strv_add(out, fmt("  %-11s the shell's cwd when a grant above holds it, else "
					  "%s",
					  "workspace", b->rc.workspace ? b->rc.workspace : "?"));
		if (!tool_contained(t))
			strv_add(out, fmt("  %-11s the host network (contain_egress = false: no "
					  "gateway, no decision, no credential injection)",
					  "network"));
		else if (b->gateway_serving)
			strv_add(out, fmt("  %-11s proxy 127.0.0.1:%u (box-gateway, as "
					  "tool.%s); no other route out",
					  "network", (unsigned)gateway_port(b), t->name));
		else
			strv_add(out, fmt("  %-11s none (loopback only)", "network"));
		if (t->has_supervise && t->supervise == BOX__SUPERVISE__SUPERVISE_FS)
			strv_add(out, fmt("  %-11s fs: each file system call of the tool is decided by "
					  "policy (fs:*, source supervisor) before it happens",
					  "supervise"));
		strv_add(out, fmt("  %-11s /tmp /var/tmp /dev/shm and HOME (tmpfs); environment: "
				  "[tool.%s.env] and what the invocation assigned",
				  "private", t->name));
	}
	for (size_t i = 0; i < s->n_mcp; i++) {
		const Box__CfgMcp *m = s->mcp[i];
		if (m->type != BOX__MCP_TYPE__MCP_TYPE_STDIO) {
			/* A remote server is box-gateway's: it decides every JSON-RPC request. */
			if (m->url)
				strv_add(out, fmt("mcp %s: %s (remote, through box-gateway: http:request, "
						  "then mcp:call on every JSON-RPC request, initialize "
						  "included, and the per-tool rules on tools/call)",
						  m->name, m->url->value));
			continue;
		}
		const Box__CfgFilesystem *fs = m->filesystem;
		const char *prog = mcpd_program(b, i);
		if (!prog)
			prog = m->command->argv[0];
		const char *alias = m->alias ? m->alias->value : path_basename(m->command->argv[0]);
		_cleanup_free_ char *args = join_argv(m->command->argv + 1, m->command->n_argv - 1);
		strv_add(out, fmt("mcp %s: /run/box/bin/%s runs %s%s%s (box-mcpd: after a shell:spawn "
				  "permit, in its own sandbox; every request decided)",
				  m->name, alias, prog, m->command->n_argv > 1 ? " " : "",
				  m->command->n_argv > 1 && args ? args : ""));
		struct {
			Box__CfgPath **v;
			size_t n;
			const char *key, *flags;
		} lists[] = {
			{ fs ? fs->read : NULL, fs ? fs->n_read : 0, "read", "  (read-only, exec)" },
			{ fs ? fs->write : NULL, fs ? fs->n_write : 0, "write", "  (read-write, exec)" },
			{ fs ? fs->read_file : NULL, fs ? fs->n_read_file : 0, "read_file",
			  "  (read-only, exec)" },
			{ fs ? fs->write_file : NULL, fs ? fs->n_write_file : 0, "write_file",
			  "  (read-write, exec)" },
			{ fs ? fs->deny : NULL, fs ? fs->n_deny : 0, "deny", "  (masked)" },
		};
		for (size_t l = 0; l < ELEMENTSOF(lists); l++)
			for (size_t k = 0; k < lists[l].n; k++)
				strv_add(out, fmt("  %-11s %s%s", lists[l].key, lists[l].v[k]->path,
						  lists[l].flags));
		disclose_agent_denies(b, fs, out);
		if (!granted(fs, prog))
			strv_add(out, fmt("  %-11s %s  (implicit: the server's program)", "exec",
					  prog));
		strv_add(out, fmt("  %-11s %s", "workspace", plan_mcp_cwd(b, i)));
		if (!mcp_contained(m))
			strv_add(out, fmt("  %-11s the host network (contain_egress = false: no "
					  "gateway, no decision, no credential injection)",
					  "network"));
		else if (b->gateway_serving)
			strv_add(out, fmt("  %-11s proxy 127.0.0.1:%u (box-gateway, as mcp.%s); no "
					  "other route out",
					  "network", (unsigned)gateway_port(b), m->name));
		else
			strv_add(out, fmt("  %-11s none (loopback only)", "network"));
	}
}

/* "header x-api-key" / "basic_auth" / "query param key": where the secret goes. */
static char *
placement_text(bool has, Box__Placement pl, const Box__CfgStr *header, const Box__CfgStr *param)
{
	if (has && pl == BOX__PLACEMENT__PLACEMENT_BASIC_AUTH)
		return fmt("basic_auth (Authorization: Basic)");
	if (has && pl == BOX__PLACEMENT__PLACEMENT_QUERY_PARAM)
		return fmt("query param %s", param ? param->value : "?");
	return fmt("header %s", header ? header->value : "Authorization");
}

/*
 * The network: the gateway's port, each [egress] binding (destinations,
 * placement, sandboxes; never a secret or a placeholder), each
 * passthrough. Without a gateway (none serves the box): no route out.
 */
static void
disclose_network(const struct box *b, struct strv *out)
{
	const Box__BoxSpec *s = b->spec;
	const Box__CfgGateway *g = s->gateway;
	bool creds = false;

	if (!b->gateway_serving) {
		strv_add(out, fmt("  %-11s none (no gateway: no route out, loopback only)",
				  "network"));
		return;
	}
	strv_add(out, fmt("  %-11s proxy 127.0.0.1:%u (box-gateway; HTTP/1.1 only — HTTP/2 and "
			  "gRPC clients fall back through the proxy); no other route out",
			  "network", (unsigned)gateway_port(b)));
	strv_add(out, fmt("  %-11s /run/box/ca.pem (the box CA, in SSL_CERT_FILE and the other "
			  "trust variables); HTTPS is intercepted",
			  "network"));
	strv_add(out, fmt("  %-11s npm, pip, cargo, git, curl, Go, Python and node 22.21+ use the "
			  "proxy and the box CA as they are; node 18 and 20 do not use the proxy "
			  "(fetch, https): a node program there needs an agent of its own",
			  "network"));
	for (size_t i = 0; i < s->n_egress; i++) {
		const Box__CfgEgress *e = s->egress[i];
		_cleanup_free_ char *where = placement_text(e->has_placement, e->placement,
							    e->header, e->param);
		_cleanup_free_ char *who = NULL;
		size_t len = 1;
		for (size_t k = 0; k < e->n_sandboxes; k++)
			len += strlen(e->sandboxes[k]) + 2;
		if (e->n_sandboxes && (who = calloc(1, len)))
			for (size_t k = 0; k < e->n_sandboxes; k++) {
				if (k)
					strcat(who, ", ");
				strcat(who, e->sandboxes[k]);
			}
		for (size_t k = 0; k < e->n_destinations; k++)
			strv_add(out, fmt("  %-11s %s: %s%s, for %s ([egress.%s], in $%s)", "egress",
					  e->destinations[k]->value, where ? where : "?",
					  e->has_inject && e->inject == BOX__INJECT__INJECT_ALWAYS ?
						  " (always)" : "",
					  who ? who : "every sandbox", e->name,
					  e->variable ? e->variable->value : e->secret->ref + 6));
		creds = true;
	}
	for (size_t i = 0; i < s->n_mcp; i++)
		if (s->mcp[i]->type == BOX__MCP_TYPE__MCP_TYPE_HTTP && s->mcp[i]->secret) {
			_cleanup_free_ char *where = placement_text(s->mcp[i]->has_placement,
								    s->mcp[i]->placement,
								    s->mcp[i]->header, NULL);
			strv_add(out, fmt("  %-11s %s: %s ([mcp.%s])", "egress",
					  s->mcp[i]->url->value + 8, where ? where : "?",
					  s->mcp[i]->name));
			creds = true;
		}
	if (creds)
		strv_add(out, fmt("  %-11s WebSocket (Upgrade) frames to a credentialed destination "
				  "are relayed unredacted",
				  "egress"));
	for (size_t i = 0; g && i < g->n_passthrough; i++)
		strv_add(out, fmt("  %-11s %s (plain TCP after net:connect: no interception, no "
				  "http:request, no credentials)",
				  "passthrough", g->passthrough[i]->value));
}

/* Each [telemetry.NAME] target: where box-gateway sends what (docs/box.ini.5.md). */
static void
disclose_telemetry(const struct box *b, struct strv *out)
{
	static const char *const names[] = { "deny", "permit", "control", "kernel", "agent" };
	const Box__BoxSpec *s = b->spec;

	for (size_t i = 0; i < s->n_telemetry; i++) {
		const Box__CfgTelemetry *t = s->telemetry[i];
		char what[64] = "";
		for (size_t k = 0; k < 5; k++)
			if (t->include & (1u << k)) {
				if (*what)
					strcat(what, " ");
				strcat(what, names[k]);
			}
		if (t->kind == BOX__TELEMETRY_KIND__TELEMETRY_KIND_FILE)
			strv_add(out, fmt("  %-11s %s: OTLP-JSON lines to %s (%s; opened as %s)",
					  "telemetry", t->name, t->destination->value, what,
					  b->owner.name));
		else
			strv_add(out, fmt("  %-11s %s: OTLP %s to %s (%s)%s", "telemetry", t->name,
					  t->has_protocol && t->protocol ==
						  BOX__TELEMETRY_PROTOCOL__TELEMETRY_PROTOCOL_JSON ?
						  "http/json" : "http/protobuf",
					  t->destination->value, what,
					  t->secret ? ", with its credential" : ""));
	}
	if (b->gateway_serving && otlp_port(b))
		strv_add(out, fmt("  %-11s the agent's OpenTelemetry: an OTLP/HTTP receiver on "
				  "127.0.0.1:%u (box-gateway; OTEL_EXPORTER_OTLP_ENDPOINT and the "
				  "per-signal variables), its resources tagged box.source = agent",
				  "telemetry", (unsigned)otlp_port(b)));
}

/* ---- disclosure of docs/box.ini.5.md masks and of the socket scan ---- */

/* Why box masked `path` (one of rc.masks), or NULL: not one of those masks. */
static const char *
auto_mask_reason(const struct box *b, const char *path, const char **via)
{
	const char *name = NULL;
	for (size_t i = 0; i < b->rc.n_masks && !name; i++)
		if (strcmp(b->rc.masks[i], path) == 0) {
			name = b->rc.mask_via[i] ? b->rc.mask_via[i] : path;
			if (via)
				*via = b->rc.mask_via[i];
		}
	if (!name)
		return NULL;
	if (is_credential_store(b, name))
		return "credential store";
	for (size_t i = 0; i < b->spec->n_egress + b->spec->n_mcp; i++) {
		const Box__CfgSecret *sec = i < b->spec->n_egress ?
						    b->spec->egress[i]->secret :
						    b->spec->mcp[i - b->spec->n_egress]->secret;
		if (sec && strncmp(sec->ref, "file://", 7) == 0 && strcmp(sec->ref + 7, name) == 0)
			return "a file:// secret";
	}
	if (b->rc.state_dir && strcmp(name, b->rc.state_dir) == 0)
		return "this box's state dir";
	if (strcmp(name, b->d->runtime_base) == 0)
		return "the box runtime base";
	return "box's state dirs";
}

/* Warnings (quiet too): reachable sockets, a cut scan. Then, unless quiet, the masks. */
static void
disclose_masks_and_sockets(const struct box *b, const Box__Plan *p, struct strv *out, bool quiet)
{
	size_t total = b->rc.sockets_total > b->rc.n_sockets ? b->rc.sockets_total :
							       b->rc.n_sockets;
	for (size_t i = 0; i < b->rc.n_sockets; i++)
		strv_add(out, fmt("warning: reachable unix socket in a grant: %s", b->rc.sockets[i]));
	if (total > b->rc.n_sockets)
		strv_add(out, fmt("warning: and %zu more reachable unix sockets in the grants",
				  total - b->rc.n_sockets));
	if (b->rc.scan_cut)
		strv_add(out, fmt("warning: the socket scan stopped after %s: sockets beyond it "
				  "were not checked (boxd refuses clients from inside a sandbox "
				  "either way)",
				  strcmp(b->rc.scan_cut, "time") == 0 ? "2 s" : "100000 entries"));
	if (quiet)
		return;
	for (size_t i = 0; i < p->n_view; i++) {
		const char *via = NULL;
		const char *why = p->view[i]->kind == BOX__VIEW_KIND__VIEW_DENY ?
					  auto_mask_reason(b, p->view[i]->path, &via) :
					  NULL;
		if (why && via)
			strv_add(out, fmt("masked (%s): %s (the target of %s)", why,
					  p->view[i]->path, via));
		else if (why)
			strv_add(out, fmt("masked (%s): %s", why, p->view[i]->path));
	}
}

/* argv joined with spaces, words with blanks quoted. */
static char *
join_argv(char **v, size_t n)
{
	size_t len = 1;
	for (size_t i = 0; i < n; i++)
		len += strlen(v[i]) + 3;
	char *s = malloc(len);
	if (!s)
		return NULL;
	char *q = s;
	for (size_t i = 0; i < n; i++) {
		bool quote = v[i][0] == '\0' || strpbrk(v[i], " \t\"'") != NULL;
		q += sprintf(q, "%s%s%s%s", i ? " " : "", quote ? "'" : "", v[i], quote ? "'" : "");
	}
	return s;
}

/*
 * A policy masked inside the agent's grants: git there cannot read it
 * (box.ini(5) [box] show_policy says what each git command does with it).
 */
static void
disclose_hidden_policy(const struct box *b, const Box__Plan *p, struct strv *out)
{
	const Box__BoxSpec *s = b->spec;

	for (size_t i = 0; s->n_files > 1 && i < p->n_view; i++)
		if (p->view[i]->kind == BOX__VIEW_KIND__VIEW_DENY &&
		    strcmp(p->view[i]->path, s->files[1]) == 0)
			strv_add(out, fmt("warning: the policy %s is hidden (masked) inside a grant: git "
					  "cannot read it there, so `git add -A`, `git diff` and `git "
					  "stash` fail on it; keep it outside the grants, have git skip "
					  "it (.gitignore, git update-index --skip-worktree), or set "
					  "[box] show_policy = true",
					  s->files[1]));
}

int
plan_disclosure(const struct box *b, const Box__Plan *p, char ***lines, size_t *n)
{
	const Box__BoxSpec *s = b->spec;
	struct strv out = { 0 };
	bool q = b->quiet;
	_cleanup_free_ char *cmd = NULL, *how = NULL;

	if (!q)
		strv_add(&out, fmt("box %s, id %s, owner %s", b->name, b->id, b->owner.name));
	if (!p->require_landlock)
		strv_add(&out, fmt("warning: [box] require leaves out landlock: no Landlock layer "
				   "is enforced when this kernel lacks it"));
	if (!p->require_seccomp)
		strv_add(&out, fmt("warning: [box] require leaves out seccomp: no seccomp filter "
				   "is enforced when this kernel lacks it"));
	for (size_t i = 0; i < p->n_view; i++)
		if (p->view[i]->kind != BOX__VIEW_KIND__VIEW_DENY &&
		    is_credential_store(b, p->view[i]->path))
			strv_add(&out, fmt("warning: credential store granted: %s (%s)",
					   p->view[i]->path, view_kind_name(p->view[i]->kind)));
	disclose_deny_exceptions(b, &out);
	disclose_hidden_policy(b, p, &out);
	for (size_t i = 0; i < s->n_tools; i++)
		if (!tool_contained(s->tools[i]))
			strv_add(&out, fmt("warning: tool %s shares the host network "
					   "(contain_egress = false): no gateway, no decision, no "
					   "credential injection",
					   s->tools[i]->name));
	/* mount.c (a root owner's PID 1) or memfd.c (a root trampoline's helper) set it. */
	if (!hostprobe_memfd_noexec())
		strv_add(&out, fmt("warning: this kernel has no vm.memfd_noexec (Linux 6.3): a memfd "
				   "the agent writes can be run through /proc/self/fd/N (Landlock "
				   "does not restrict memfds)"));
	else if (b->owner.uid != 0 && !b->d->root)
		strv_add(&out, fmt("warning: vm.memfd_noexec cannot be set for a box not owned by "
				   "root by a boxd that is not root: a memfd the agent writes can be "
				   "run through /proc/self/fd/N (Landlock does not restrict memfds)"));
	if (b->nproc_fallback)
		/* Measured: in the box's own user namespace the count is of the box's processes. */
		strv_add(&out, fmt("warning: pids_max is enforced with RLIMIT_NPROC (no cgroup pids "
				   "controller for this boxd), set in the box's user namespace: it "
				   "counts the processes of %s inside the box, not those on the host",
				   b->owner.name));
	disclose_masks_and_sockets(b, p, &out, q);
	if (q)
		goto done;

	disclose_policy(b, &out);
	cmd = join_argv(p->argv, p->n_argv);
	how = disclose_resolution(s->agent);
	if (s->agent->has_person_shell && s->agent->person_shell)
		/* No [agent] command: the program is bash, which in the box is the alias. */
		strv_add(&out, fmt("agent: a person's interactive box shell (%s: box's shell alias; "
				   "its commands decided as an agent's, logged as a person's)",
				   cmd ? cmd : "?"));
	else
		strv_add(&out, fmt("agent: %s%s", cmd ? cmd : "?", how ? how : ""));
	if (b->snapshot_root)
		strv_add(&out, fmt("snapshot: every sandbox writes %s into %s/snapshot/upper; the "
				   "host tree is untouched until boxctl apply %s (boxctl diff, "
				   "boxctl discard)",
				   b->snapshot_root, b->rc.state_dir, b->name));
	for (size_t i = 0; i < p->n_view; i++) {
		const Box__ViewEntry *e = p->view[i];
		const char *note = "";
		char flags[40] = "";
		mount_flags(p, e, flags, sizeof(flags));
		char nb[96];
		if (e->kind == BOX__VIEW_KIND__VIEW_EXEC && e->path && b->rc.program &&
		    strcmp(e->path, b->rc.program) == 0)
			note = "  (implicit: the agent's program)";
		else if (e->kind == BOX__VIEW_KIND__VIEW_EXEC) {
			for (size_t k = 0; k < b->rc.n_loaders; k++)
				if (strcmp(e->path, b->rc.loaders[k]) == 0)
					note = "  (implicit: ELF loader)";
			for (size_t k = 0; k < b->rc.n_interpreters; k++)
				if (strcmp(e->path, b->rc.interpreters[k]) == 0)
					note = "  (implicit: #! interpreter)";
		} else if (e->kind == BOX__VIEW_KIND__VIEW_READ_FILE && s->n_files > 0 &&
			   strcmp(e->path, s->files[0]) == 0) {
			note = "  (box.ini: shown read-only)";
		} else if (e->kind == BOX__VIEW_KIND__VIEW_READ_FILE && s->n_files > 1 &&
			   strcmp(e->path, s->files[1]) == 0) {
			note = "  (policy file: shown read-only, [box] show_policy = true)";
		} else if (e->kind == BOX__VIEW_KIND__VIEW_DENY) {
			if (s->n_files > 1 && strcmp(e->path, s->files[1]) == 0)
				note = "  (policy file: masked)";
			else if (auto_mask_reason(b, e->path, NULL)) {
				snprintf(nb, sizeof(nb), "  (masked: %s)",
					 auto_mask_reason(b, e->path, NULL));
				note = nb;
			} else
				note = "  (masked)";
		}
		strv_add(&out, fmt("  %-11s %s%s%s", view_kind_name(e->kind), e->path, flags, note));
	}
	strv_add(&out, fmt("  %-11s %s", "workspace", p->workspace));
	if (p->supervise)
		strv_add(&out, fmt("  %-11s fs: each file system call of the agent itself is decided "
				   "by policy (fs:*, source supervisor) before it happens",
				   "supervise"));
	if (!p->exec_system)
		strv_add(&out, fmt("  %-11s only the exec entries above and box's aliases may be "
				   "started with execve (Landlock; [agent] exec_system = false); "
				   "not a boundary: the ELF loader runs any readable program, and "
				   "an interpreter does what it likes itself",
				   "execute"));
	if (p->runtime->shell_sock)
		strv_add(&out, fmt("  %-11s /run/box/bin/{sh,bash,zsh,python3,python} first on PATH, "
				   "and over sh bash zsh dash rbash in /bin and /usr/bin: the shell "
				   "alias -> box-shell (/run/box/shell.sock); box-shell runs as %s in "
				   "this view",
				   "shell", b->owner.name));
	bool python_tool = false;
	for (size_t i = 0; i < b->spec->n_tools; i++)
		python_tool |= strcmp(b->spec->tools[i]->name, "python3") == 0;
	if (p->runtime->shell_sock && !python_tool)
		strv_add(&out, fmt("  %-11s python3 and python (no [tool.python3]): the host python3 "
				   "(/usr/bin/python3) in a sandbox of the agent's grants, supervised: "
				   "each of its file system calls is decided by policy (fs:*, source "
				   "supervisor), an exec entry holding it or not; masked in the exec "
				   "entries' own sandbox",
				   "python"));
	if (p->runtime->mcp_sock)
		strv_add(&out, fmt("  %-11s /run/box/bin/ALIAS for each stdio [mcp] server -> "
				   "box-mcpd (/run/box/mcp.sock); box-mcpd runs outside this view (no network), "
				   "each server in its own sandbox",
				   "mcp"));
	disclose_tools(b, &out);
	strv_add(&out, fmt("box adds:"));
	strv_add(&out, fmt("  %-11s /usr /lib /lib64 /bin /sbin (read-only, %s)", "system",
			   p->exec_system ? "exec" :
					    "mapped exec for shared libraries; execve only of "
					    "the exec entries above"));
	strv_add(&out, fmt("  %-11s /etc: ld.so.*, nsswitch.conf, hosts, ssl, ca-certificates, "
			   "localtime, ...; generated passwd and group",
			   "system"));
	strv_add(&out, fmt("  %-11s /tmp /var/tmp /dev/shm -> %s/{tmp,var_tmp,dev_shm} "
			   "(read-write, noexec)",
			   "write", b->runtime_dir));
	if (p->runtime->home)
		strv_add(&out, fmt("  %-11s %s -> %s (ungranted HOME: empty, removed at exit)",
				   "write", b->owner.home, p->runtime->home));
	strv_add(&out, fmt("  %-11s /proc (this box's processes; /proc/sys read-only), /dev "
			   "(null zero full random urandom tty, pts, shm)",
			   "private"));
	disclose_network(b, &out);
	disclose_telemetry(b, &out);
	if (p->limits) {
		const Box__Limits *l = p->limits;
		char buf[256] = "";
		size_t o = 0;
		if (l->has_pids_max)
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, " pids_max=%llu (%s)",
					      (unsigned long long)l->pids_max,
					      b->nproc_fallback ? "RLIMIT_NPROC" : "cgroup");
		if (l->has_memory_max && o < sizeof(buf))
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, " memory_max=%llu",
					      (unsigned long long)l->memory_max);
		if (l->has_nofile && o < sizeof(buf))
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, " nofile=%llu",
					      (unsigned long long)l->nofile);
		if (l->has_nproc && !b->nproc_fallback && o < sizeof(buf))
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, " nproc=%llu",
					      (unsigned long long)l->nproc);
		strv_add(&out, fmt("  %-11s%s", "limits", buf));
	}
	strv_add(&out, fmt("  %-11s %s", "state", b->rc.state_dir));
done:
	if (out.oom) {
		for (size_t i = 0; i < out.n; i++)
			free(out.v[i]);
		free(out.v);
		return -ENOMEM;
	}
	*lines = out.v;
	*n = out.n;
	return 0;
}
