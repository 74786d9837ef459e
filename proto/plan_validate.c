/* SPDX-License-Identifier: Apache-2.0 */
/*
 * plan_validate.c — the hand-written validator of plan.proto.
 *
 * Checks shape only (the trampoline then opens every path without following
 * symlinks, as the owner, inside its own mount namespace). Decoding
 * (box_plan_decode, box_status_decode) is proto_plan.c's, through the one
 * walker (walk.h). Pure; no logging.
 * Trusts: nothing; every byte came from a peer.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "path.h"
#include "plan_validate.h"
#include "walk.h"

static int __attribute__((format(printf, 4, 5)))
fail(char *why, size_t why_len, int err, const char *fmt, ...)
{
	if (why && why_len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return err;
}

static bool
is_path(const char *p)
{
	return p && strlen(p) < BOX_PATH_MAX && path_is_clean_absolute(p);
}

static bool
is_name_char(char c, bool first)
{
	if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_')
		return true;
	return !first && c >= '0' && c <= '9';
}

static bool
is_user_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 32)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!is_name_char(c, false) && c != '-' && c != '.')
			return false;
	}
	return s[0] != '-';
}

static bool
is_hostname(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!is_name_char(c, false) && c != '-' && c != '.')
			return false;
	}
	return true;
}

/* Paths the view builds itself; a grant there would collide with them. */
static bool
is_reserved_view_path(const char *p)
{
	static const char *const roots[] = {"/proc", "/dev", "/run/box"};
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (path_is_under(p, roots[i]))
			return true;
	return false;
}

/* Does `a` reach `b`: equal, inside, or containing it? */
static bool
paths_overlap(const char *a, const char *b)
{
	return path_is_under(a, b) || path_is_under(b, a);
}

static int
check_view(const Box__Plan *p, char *why, size_t why_len)
{
	const Box__RuntimeDirs *rt = p->runtime;

	if (p->n_view > BOX_PLAN_VIEW_MAX)
		return fail(why, why_len, -E2BIG, "view: %zu entries (max %u)", p->n_view,
			    BOX_PLAN_VIEW_MAX);
	for (size_t i = 0; i < p->n_view; i++) {
		const Box__ViewEntry *e = p->view[i];
		if (!is_path(e->path) || strcmp(e->path, "/") == 0)
			return fail(why, why_len, -EINVAL, "view[%zu]: path is not absolute and clean",
				    i);
		if (is_reserved_view_path(e->path))
			return fail(why, why_len, -EINVAL, "view[%zu]: %s is built by the sandbox", i,
				    e->path);
		if (paths_overlap(e->path, rt->dir))
			return fail(why, why_len, -EINVAL, "view[%zu]: %s reaches the runtime dir", i,
				    e->path);
		if (e->kind == BOX__VIEW_KIND__VIEW_DENY) {
			if (!is_path(e->mask) || !path_is_under(e->mask, rt->dir) ||
			    strcmp(e->mask, rt->dir) == 0)
				return fail(why, why_len, -EINVAL,
					    "view[%zu]: a deny entry needs a mask in the runtime dir", i);
		} else {
			if (e->mask)
				return fail(why, why_len, -EINVAL, "view[%zu]: mask on a grant", i);
			if (e->kind < BOX__VIEW_KIND__VIEW_READ || e->kind > BOX__VIEW_KIND__VIEW_EXEC)
				return fail(why, why_len, -EINVAL, "view[%zu]: bad kind", i);
			/* Box-managed directories are never granted as a whole. */
			if ((rt->tmp && path_is_under("/tmp", e->path)) ||
			    (rt->var_tmp && path_is_under("/var/tmp", e->path)) ||
			    (rt->home && path_is_under(p->owner->home, e->path)))
				return fail(why, why_len, -EINVAL,
					    "view[%zu]: %s contains a box-managed directory", i,
					    e->path);
		}
		for (size_t j = 0; j < i; j++) {
			const Box__ViewEntry *o = p->view[j];
			if (strcmp(o->path, e->path) != 0)
				continue;
			/* The same path twice: only a grant plus its exec entry. */
			bool one_exec = (o->kind == BOX__VIEW_KIND__VIEW_EXEC) !=
					(e->kind == BOX__VIEW_KIND__VIEW_EXEC);
			bool no_deny = o->kind != BOX__VIEW_KIND__VIEW_DENY &&
				       e->kind != BOX__VIEW_KIND__VIEW_DENY;
			if (!one_exec || !no_deny)
				return fail(why, why_len, -EINVAL, "view[%zu]: %s listed twice", i,
					    e->path);
		}
	}
	return 0;
}

static int
check_runtime(const Box__Plan *p, char *why, size_t why_len)
{
	const Box__RuntimeDirs *rt = p->runtime;
	const struct {
		const char *name, *val;
		bool in_dir;
	} dirs[] = {
		{"tmp", rt->tmp, true},
		{"var_tmp", rt->var_tmp, true},
		{"dev_shm", rt->dev_shm, true},
		{"home", rt->home, true},
		{"run_box_bin", rt->run_box_bin, false},
		{"shell_sock", rt->shell_sock, false},
		{"mcp_sock", rt->mcp_sock, false},
		{"ca_pem", rt->ca_pem, false},
		{"shell_alias", rt->shell_alias, false},
	};

	if (!is_path(rt->dir) || strcmp(rt->dir, "/") == 0)
		return fail(why, why_len, -EINVAL, "runtime.dir is not absolute and clean");
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (!dirs[i].val)
			continue;
		if (!is_path(dirs[i].val))
			return fail(why, why_len, -EINVAL, "runtime.%s is not absolute and clean",
				    dirs[i].name);
		if (dirs[i].in_dir &&
		    (!path_is_under(dirs[i].val, rt->dir) || strcmp(dirs[i].val, rt->dir) == 0))
			return fail(why, why_len, -EINVAL, "runtime.%s is not in runtime.dir",
				    dirs[i].name);
	}
	bool agent = p->kind == BOX__SANDBOX_KIND__SANDBOX_AGENT;
	bool shell = p->kind == BOX__SANDBOX_KIND__SANDBOX_SHELL;
	if (!agent && (rt->run_box_bin || rt->shell_sock || rt->mcp_sock || rt->shell_alias))
		return fail(why, why_len, -EINVAL, "runtime: /run/box/bin and sockets are for the agent");
	/* box-shell reaches nothing through the gateway: no /run/box at all. */
	if (shell && rt->ca_pem)
		return fail(why, why_len, -EINVAL, "runtime.ca_pem: box-shell has no /run/box");
	if (!p->contain_egress && rt->ca_pem)
		return fail(why, why_len, -EINVAL, "runtime.ca_pem without contain_egress");
	if (agent && !(rt->tmp && rt->var_tmp && rt->dev_shm))
		return fail(why, why_len, -EINVAL, "runtime: the agent needs tmp, var_tmp and dev_shm");
	if (shell && !(rt->tmp && rt->var_tmp && rt->dev_shm))
		return fail(why, why_len, -EINVAL,
			    "runtime: box-shell needs the agent's tmp, var_tmp and dev_shm");
	return 0;
}

/*
 * SANDBOX_SHELL (box-shell, docs/design.md): the agent's view and rights, its
 * own network namespace with only lo, the workload binary bound in from its
 * host path, up to three channels passed through. pass_fds and workload_bin
 * mean nothing for the other kinds and are refused there.
 */
static int
check_shell(const Box__Plan *p, char *why, size_t why_len)
{
	bool shell = p->kind == BOX__SANDBOX_KIND__SANDBOX_SHELL;

	if (p->pass_fds > BOX_PLAN_PASS_FDS_MAX)
		return fail(why, why_len, -ERANGE, "pass_fds: %u (max %u)", p->pass_fds,
			    BOX_PLAN_PASS_FDS_MAX);
	if (!shell && p->pass_fds)
		return fail(why, why_len, -EINVAL, "pass_fds: for a box-shell plan only");
	if (p->start_gate && p->kind != BOX__SANDBOX_KIND__SANDBOX_AGENT)
		return fail(why, why_len, -EINVAL, "start_gate: for an agent's plan only");
	if (!shell && p->workload_bin)
		return fail(why, why_len, -EINVAL, "workload_bin: for a box-shell plan only");
	if (p->supervise && p->kind != BOX__SANDBOX_KIND__SANDBOX_TOOL &&
	    p->kind != BOX__SANDBOX_KIND__SANDBOX_AGENT)
		return fail(why, why_len, -EINVAL, "supervise: for an agent's or a tool's plan only");
	if (p->snapshot_root && (!is_path(p->snapshot_root) || strcmp(p->snapshot_root, "/") == 0))
		return fail(why, why_len, -EINVAL, "snapshot_root is not absolute and clean");
	if (!shell)
		return 0;

	const char *bin = p->workload_bin;
	if (!bin)
		return fail(why, why_len, -EINVAL, "workload_bin: a box-shell plan needs it");
	if (!is_path(bin) || strcmp(bin, "/") == 0)
		return fail(why, why_len, -EINVAL, "workload_bin is not absolute and clean");
	if (is_reserved_view_path(bin))
		return fail(why, why_len, -EINVAL, "workload_bin: %s is built by the sandbox", bin);
	if (paths_overlap(bin, p->runtime->dir))
		return fail(why, why_len, -EINVAL, "workload_bin: %s reaches the runtime dir", bin);
	if (strcmp(p->argv[0], bin) != 0)
		return fail(why, why_len, -EINVAL, "argv[0] is not workload_bin (%s)", bin);
	for (size_t i = 0; i < p->n_view; i++)
		if (p->view[i]->kind == BOX__VIEW_KIND__VIEW_DENY &&
		    path_is_under(bin, p->view[i]->path))
			return fail(why, why_len, -EINVAL, "workload_bin: %s is masked by view[%zu]",
				    bin, i);
	if (p->has_gateway_port)
		return fail(why, why_len, -EINVAL, "gateway_port: box-shell has no gateway listener");
	if (p->pty_fds)
		return fail(why, why_len, -EINVAL, "pty_fds: box-shell gets no terminal");
	return 0;
}

static int
check_limits(const Box__Limits *l, char *why, size_t why_len)
{
	if (!l)
		return 0;
	if (l->has_nofile && (l->nofile < 16 || l->nofile > BOX_PLAN_NOFILE_MAX))
		return fail(why, why_len, -ERANGE, "limits.nofile out of range (16..%u)",
			    BOX_PLAN_NOFILE_MAX);
	if (l->has_nproc && (l->nproc < 1 || l->nproc > BOX_PLAN_NPROC_MAX))
		return fail(why, why_len, -ERANGE, "limits.nproc out of range (1..%u)",
			    BOX_PLAN_NPROC_MAX);
	if (l->has_pids_max && (l->pids_max < 1 || l->pids_max > BOX_PLAN_NPROC_MAX))
		return fail(why, why_len, -ERANGE, "limits.pids_max out of range");
	if (l->has_memory_max && (l->memory_max < (1u << 20) || l->memory_max > (1ull << 50)))
		return fail(why, why_len, -ERANGE, "limits.memory_max out of range");
	if (l->n_cgroups > BOX_PLAN_CGROUPS_MAX)
		return fail(why, why_len, -E2BIG, "limits.cgroups: too many");
	for (size_t i = 0; i < l->n_cgroups; i++)
		if (!is_path(l->cgroups[i]) || !path_is_under(l->cgroups[i], "/sys/fs/cgroup") ||
		    strcmp(l->cgroups[i], "/sys/fs/cgroup") == 0)
			return fail(why, why_len, -EINVAL,
				    "limits.cgroups[%zu] is not a directory under /sys/fs/cgroup", i);
	if ((l->has_pids_max || l->has_memory_max) && l->n_cgroups == 0 &&
	    !(l->has_pids_max && l->has_nproc && !l->has_memory_max))
		return fail(why, why_len, -EINVAL,
			    "limits: pids_max/memory_max need a cgroup (or pids_max an nproc)");
	return 0;
}

static int
check_env(const Box__Plan *p, char *why, size_t why_len)
{
	if (p->n_env > BOX_PLAN_ENV_MAX)
		return fail(why, why_len, -E2BIG, "env: too many variables");
	for (size_t i = 0; i < p->n_env; i++) {
		const char *e = p->env[i];
		const char *eq = strchr(e, '=');
		if (!eq || eq == e)
			return fail(why, why_len, -EINVAL, "env[%zu]: not NAME=value", i);
		for (const char *c = e; c < eq; c++)
			if (!is_name_char(*c, c == e))
				return fail(why, why_len, -EINVAL, "env[%zu]: bad variable name", i);
		size_t nlen = (size_t)(eq - e);
		for (size_t j = 0; j < i; j++)
			if (strncmp(p->env[j], e, nlen + 1) == 0)
				return fail(why, why_len, -EINVAL, "env[%zu]: %.*s set twice", i,
					    (int)nlen, e);
	}
	return 0;
}

int
box_plan_validate(const Box__Plan *p, char *why, size_t why_len)
{
	int r;

	if (!p || !p->owner || !p->runtime || !p->workspace)
		return fail(why, why_len, -EINVAL, "plan: a required field is missing");
	r = box_proto_walk(&p->base);
	if (r < 0)
		return fail(why, why_len, r, "plan: unknown field or enum value");
	if (p->kind != BOX__SANDBOX_KIND__SANDBOX_AGENT && p->kind != BOX__SANDBOX_KIND__SANDBOX_TOOL &&
	    p->kind != BOX__SANDBOX_KIND__SANDBOX_SHELL)
		return fail(why, why_len, -EINVAL, "kind: not agent, tool or shell");

	const Box__Owner *o = p->owner;
	if (o->uid == (uint32_t)-1 || o->gid == (uint32_t)-1)
		return fail(why, why_len, -ERANGE, "owner: uid/gid -1");
	if (o->n_groups > BOX_PLAN_GROUPS_MAX)
		return fail(why, why_len, -E2BIG, "owner.groups: too many");
	for (size_t i = 0; i < o->n_groups; i++)
		if (o->groups[i] == (uint32_t)-1)
			return fail(why, why_len, -ERANGE, "owner.groups[%zu]: -1", i);
	if (!is_user_name(o->name))
		return fail(why, why_len, -EINVAL, "owner.name: not a user name");
	if (!is_path(o->home))
		return fail(why, why_len, -EINVAL, "owner.home is not absolute and clean");
	if (!is_path(o->shell))
		return fail(why, why_len, -EINVAL, "owner.shell is not absolute and clean");

	if (!p->contain_egress && p->kind != BOX__SANDBOX_KIND__SANDBOX_TOOL)
		return fail(why, why_len, -EINVAL, "contain_egress = false is for tools only");
	if (!p->exec_system && p->kind == BOX__SANDBOX_KIND__SANDBOX_TOOL)
		return fail(why, why_len, -EINVAL, "exec_system = false: a tool runs host programs");
	if (p->has_gateway_port && (p->gateway_port < 1 || p->gateway_port > 65535))
		return fail(why, why_len, -ERANGE, "gateway_port out of range");
	if (p->has_gateway_port && !p->contain_egress)
		return fail(why, why_len, -EINVAL, "gateway_port without contain_egress");
	if (p->has_otlp_port && (p->otlp_port < 1 || p->otlp_port > 65535 || !p->has_gateway_port ||
				 p->otlp_port == p->gateway_port))
		return fail(why, why_len, -EINVAL,
			    "otlp_port: out of range, without gateway_port, or the same port");
	if (p->hostname && !is_hostname(p->hostname))
		return fail(why, why_len, -EINVAL, "hostname: bad characters or length");
	if (p->pty_fds > 7)
		return fail(why, why_len, -EINVAL, "pty_fds: only fds 0-2 may get the pty");
	if (p->has_pty_rows != p->has_pty_cols)
		return fail(why, why_len, -EINVAL, "pty_rows and pty_cols go together");
	if (p->has_pty_rows && !p->pty_fds)
		return fail(why, why_len, -EINVAL, "pty_rows without a pty");
	if (p->has_pty_rows &&
	    (p->pty_rows < 1 || p->pty_rows > 65535 || p->pty_cols < 1 || p->pty_cols > 65535))
		return fail(why, why_len, -ERANGE, "pty_rows/pty_cols out of range");

	r = check_runtime(p, why, why_len);
	if (r < 0)
		return r;
	if (p->runtime->home && strcmp(p->runtime->home, "/") != 0 &&
	    (strcmp(o->home, "/") == 0 || is_reserved_view_path(o->home) ||
	     path_is_under("/tmp", o->home) || path_is_under(o->home, "/tmp") ||
	     path_is_under(o->home, "/var/tmp")))
		return fail(why, why_len, -EINVAL, "runtime.home: the owner's home cannot be managed");
	r = check_view(p, why, why_len);
	if (r < 0)
		return r;

	if (!is_path(p->workspace) || is_reserved_view_path(p->workspace))
		return fail(why, why_len, -EINVAL, "workspace is not absolute and clean");
	if (p->n_argv < 1 || p->n_argv > BOX_PLAN_ARGV_MAX)
		return fail(why, why_len, -E2BIG, "argv: 1..%u words", BOX_PLAN_ARGV_MAX);
	if (!is_path(p->argv[0]))
		return fail(why, why_len, -EINVAL, "argv[0] is not an absolute clean path");
	if (p->argv0 && p->kind != BOX__SANDBOX_KIND__SANDBOX_TOOL)
		return fail(why, why_len, -EINVAL, "argv0: a tool's only");
	r = check_shell(p, why, why_len);
	if (r < 0)
		return r;
	r = check_env(p, why, why_len);
	if (r < 0)
		return r;
	return check_limits(p->limits, why, why_len);
}

static const char *const steps[] = {
	"plan",         "credentials", "pid 1",		   "network", "mount view",
	"landlock",     "limits",      "capabilities",	   "environment",
	"file descriptors", "terminal", "seccomp",	   "exec",
};

int
box_plan_step_is_known(const char *step)
{
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (strcmp(step, steps[i]) == 0)
			return 1;
	return 0;
}

int
box_status_validate(const Box__TrampolineStatus *s, char *why, size_t why_len)
{
	int r = box_proto_walk(&s->base);
	if (r < 0)
		return fail(why, why_len, r, "status: unknown field");
	switch (s->msg_case) {
	case BOX__TRAMPOLINE_STATUS__MSG_LISTENER:
		if (s->listener->port < 1 || s->listener->port > 65535)
			return fail(why, why_len, -ERANGE, "status: listener port out of range");
		return 0;
	case BOX__TRAMPOLINE_STATUS__MSG_PTY:
		return 0;
	case BOX__TRAMPOLINE_STATUS__MSG_ERROR:
		if (!box_plan_step_is_known(s->error->step) ||
		    strlen(s->error->reason) > BOX_PLAN_REASON_MAX)
			return fail(why, why_len, -EINVAL, "status: bad error step or reason");
		return 0;
	case BOX__TRAMPOLINE_STATUS__MSG__NOT_SET:
	default:
		return fail(why, why_len, -EINVAL, "status: empty");
	}
}
