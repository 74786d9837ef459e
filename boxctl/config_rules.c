/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config_rules.c — box.ini's section rules (docs/box.ini.5.md): what each key
 * of each section means and accepts, and the cross-section checks.
 *
 * Works on the raw sections config_parse.c made. Whatever needs the host
 * (files as the caller, passwd entries, the kernel) is asked through c->host
 * and, beyond the passwd entries and the current directory, only when the
 * load is not offline; so the rules link and run without config_host.c.
 * The environment is read here: the state and runtime dirs ($XDG_*, $BOX_SOCKET)
 * and env:// secrets (not offline).
 * Trusts: nothing in the file; c->host's answers; the caller's environment.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "cmdline.h"
#include "config_internal.h"
#include "envnames.h"
#include "log.h"
#include "parse.h"
#include "path.h"
#include "proto/validate.h"

static const char *const box_keys[] = { "name", "policy", "state_dir", "require", "timeout",
					"history_sync", "command_timeout", "show_policy", "ask_timeout", "ask", "snapshot",
					"snapshot_max", NULL };
static const char *const agent_keys[] = { "command", "workspace", "user", "memory_max",
					  "pids_max", "nofile", "nproc", "exec_system", "supervise",
					  NULL };
static const char *const tool_keys[] = { "command", "workspace", "nofile", "nproc", "supervise",
					 NULL };
static const char *const egress_keys[] = { "destinations", "secret", "variable", "placement",
					   "header", "prefix", "param", "inject",
					   "placeholder_prefix", "sandboxes", NULL };
static const char *const mcp_keys[] = { "type", "command", "alias", "allow_tool_changes",
					"max_frame", "call_timeout", "url", "secret", "placement",
					"header", "prefix", "supervise", NULL };
/* supervise = (the agent, tools and stdio MCP servers): enum box_supervise. */
static const char *const sup_names[] = { "none", "fs", NULL };
static const char *const telemetry_keys[] = { "kind", "destination", "include", "protocol",
					      "secret", "placement", "header", "prefix", NULL };
static const char *const gateway_keys[] = { "port", "connect_timeout", "idle_timeout",
					    "max_connections", "max_request_body", "upstream_ca",
					    "resolver", "hosts_file", "allow_host_loopback",
					    "passthrough", NULL };
static const char *const agent_fs_keys[] = { "read", "write", "read_file", "write_file", "exec",
					     "deny", NULL };
static const char *const fs_keys[] = { "read", "write", "read_file", "write_file", "deny", NULL };
static const char *const net_keys[] = { "contain_egress", NULL };

static const struct {
	const char *title;
	const char *const *keys;
} key_homes[] = {
	{ "[box]", box_keys },
	{ "[agent]", agent_keys },
	{ "[tool.NAME]", tool_keys },
	{ "[egress.NAME]", egress_keys },
	{ "[mcp.NAME]", mcp_keys },
	{ "[telemetry.NAME]", telemetry_keys },
	{ "[gateway]", gateway_keys },
	{ "[agent.filesystem]", agent_fs_keys },
	{ "[tool.NAME.network]", net_keys },
};

bool
in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (strcmp(*list, s) == 0)
			return true;
	return false;
}

char *
join_list(const char *const *list, const char *sep)
{
	size_t n = 1;
	for (const char *const *l = list; *l; l++)
		n += strlen(*l) + strlen(sep);
	char *r = xmalloc(n);
	r[0] = '\0';
	for (const char *const *l = list; *l; l++) {
		if (l != list)
			strcat(r, sep);
		strcat(r, *l);
	}
	return r;
}

/* Every key not taken is an error that says what the section accepts. */
static void
report_unknown(struct ctx *c, struct raw_section *s, const char *const *accepted, const char *hint)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		struct raw_key *k = &s->keys[i];
		if (k->used)
			continue;
		k->used = true;
		if (hint) {
			err_at(c, k->line, s->name, k->name, "%s", hint);
			continue;
		}
		_cleanup_free_ char *acc = join_list(accepted, " ");
		_cleanup_free_ char *homes = NULL;
		for (size_t h = 0; h < ELEMENTSOF(key_homes); h++) {
			if (key_homes[h].keys == accepted || !in_list(key_homes[h].keys, k->name))
				continue;
			char *n = xasprintf("%s%s%s", homes ? homes : "", homes ? ", " : "",
					    key_homes[h].title);
			free(homes);
			homes = n;
		}
		if (homes)
			err_at(c, k->line, s->name, k->name,
			       "not accepted in this section (it belongs in %s); accepted here: %s", homes,
			       acc);
		else
			err_at(c, k->line, s->name, k->name, "unknown key; accepted: %s", acc);
	}
}


/*
 * Check a path as written (docs/box.ini.5.md spelling rules) and expand ~ against
 * the owner's home. `relative_base`: a relative spelling is joined to it
 * (the policy), else refused. Returns the absolute path or NULL (reported).
 */
static char *
path_from_spelling(struct ctx *c, unsigned line, const char *section, const char *key,
		   const char *sp, const char *relative_base)
{
	if (!*sp) {
		err_at(c, line, section, key, "empty path");
		return NULL;
	}
	for (const char *p = sp; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			err_at(c, line, section, key, "%s contains a control character", q(c, sp));
			return NULL;
		}
	if (path_has_glob(sp)) {
		err_at(c, line, section, key,
		       "%s contains a glob character (* ? [ ]); name one path", q(c, sp));
		return NULL;
	}
	if (sp[0] == '~' && sp[1] != '\0' && sp[1] != '/') {
		err_at(c, line, section, key,
		       "%s: ~user is not accepted; write ~ or ~/… for the box owner's home", q(c, sp));
		return NULL;
	}
	if (sp[0] != '/' && sp[0] != '~' && !relative_base) {
		err_at(c, line, section, key, "%s is not absolute; write /… or ~/…", q(c, sp));
		return NULL;
	}
	/* `..` components */
	for (const char *p = sp; (p = strstr(p, "..")); p += 2)
		if ((p == sp || p[-1] == '/') && (p[2] == '\0' || p[2] == '/')) {
			err_at(c, line, section, key, "%s has a .. component; name the path it means",
			       q(c, sp));
			return NULL;
		}
	size_t n = strlen(sp);
	if (n > 1 && sp[n - 1] == '/') {
		err_at(c, line, section, key, "%s ends with /; write it without", q(c, sp));
		return NULL;
	}
	char *abs = NULL;
	if (sp[0] == '~') {
		if (!c->home) {
			err_at(c, line, section, key, "%s: the box owner has no home to expand ~ to",
			       q(c, sp));
			return NULL;
		}
		if (path_expand_home(sp, c->home, &abs) < 0)
			fatalx("out of memory");
	} else if (sp[0] != '/') {
		abs = path_join(relative_base, sp);
		if (!abs)
			fatalx("out of memory");
	} else
		abs = xstrdup(sp);
	if (strlen(abs) >= BOX_PATH_MAX) {
		err_at(c, line, section, key, "%s is longer than %d bytes", q(c, sp), BOX_PATH_MAX - 1);
		free(abs);
		return NULL;
	}
	return abs;
}

/* A canonical path shown as the user wrote it: in ~ form when they used ~. */
const char *
shown(struct ctx *c, const char *canon, const char *spelling)
{
	char *r;
	if (spelling[0] == '~' && c->home) {
		if (path_to_home_form(canon, c->home, &r) < 0)
			fatalx("out of memory");
	} else
		r = xstrdup(canon);
	return keep(c, r);
}

static const char *const system_roots[] = { "/", "/etc", "/usr", "/proc", "/sys", "/dev",
					    "/run", "/var", "/boot", "/root", "/home", NULL };
static const char *const credential_stores[] = { ".ssh", ".aws", ".gnupg", ".netrc", ".docker",
						 ".kube", ".config/gcloud", NULL };

static const char *const fs_names[BOX_FS_KIND_COUNT] = { "read", "write", "read_file",
							 "write_file", "exec", "deny" };

static void
own_add(struct own_path *v, size_t *n, size_t cap, char *path, const char *what)
{
	if (!path || *n >= cap || !path_is_clean_absolute(path)) {
		free(path);
		return;
	}
	for (size_t i = 0; i < *n; i++)
		if (strcmp(v[i].path, path) == 0) {
			free(path);
			return;
		}
	v[(*n)++] = (struct own_path){ path, what };
}

/*
 * docs/box.ini.5.md [agent.filesystem]: box's own directories — any box's default
 * state dir (the owner's state base, /var/lib/box), the runtime base, this
 * box's state_dir — may not be granted or lie under a grant (inside one they
 * are masked, boxd/plan.c); and no grant may contain a socket that drives
 * boxd or the user's session: the service socket, /run/box, /run/user/UID,
 * $XDG_RUNTIME_DIR (which is /run/user/UID where a session manager set it)
 * and the runtime base itself, which holds every embedded boxd's socket
 * (BASE/ID/boxd.sock; so `read = /tmp` is refused where BASE is /tmp/box-UID,
 * not masked: the plan validator refuses any view entry reaching it too).
 */
void
own_paths_init(struct ctx *c)
{
	struct box_config *cfg = c->cfg;
	const char *xdg_state = getenv("XDG_STATE_HOME");
	const char *xdg_run = getenv("XDG_RUNTIME_DIR");
	const char *sock = getenv("BOX_SOCKET");
	bool self = cfg->agent.user.uid == c->caller;

	if (cfg->box.state_dir.value)
		own_add(c->own, &c->n_own, ELEMENTSOF(c->own), xstrdup(cfg->box.state_dir.value),
			"this box's state dir");
	if (self && xdg_state && xdg_state[0] == '/')
		own_add(c->own, &c->n_own, ELEMENTSOF(c->own), xasprintf("%s/box", xdg_state),
			"box's state dirs");
	if (c->home)
		own_add(c->own, &c->n_own, ELEMENTSOF(c->own),
			path_join(c->home, ".local/state/box"), "box's state dirs");
	own_add(c->own, &c->n_own, ELEMENTSOF(c->own), xstrdup("/var/lib/box"),
		"box's state dirs");
	if (cfg->runtime_base)
		own_add(c->own, &c->n_own, ELEMENTSOF(c->own), xstrdup(cfg->runtime_base),
			"the box runtime base");

	own_add(c->sockets, &c->n_sockets, ELEMENTSOF(c->sockets),
		xstrdup(sock && sock[0] == '/' ? sock : "/run/box/boxd.sock"),
		"boxd's service socket");
	own_add(c->sockets, &c->n_sockets, ELEMENTSOF(c->sockets), xstrdup("/run/box"),
		"boxd's runtime dir");
	own_add(c->sockets, &c->n_sockets, ELEMENTSOF(c->sockets),
		xasprintf("/run/user/%u", (unsigned)cfg->agent.user.uid),
		"the user's runtime dir: session bus, ssh-agent, systemd");
	if (self && xdg_run && xdg_run[0] == '/')
		own_add(c->sockets, &c->n_sockets, ELEMENTSOF(c->sockets), xstrdup(xdg_run),
			"the user's runtime dir: session bus, ssh-agent, systemd");
	if (cfg->runtime_base)
		own_add(c->sockets, &c->n_sockets, ELEMENTSOF(c->sockets),
			xstrdup(cfg->runtime_base), "the box runtime base: embedded boxd sockets");
	for (size_t i = 0; i < c->n_own; i++)
		keep(c, (char *)c->own[i].path);
	for (size_t i = 0; i < c->n_sockets; i++)
		keep(c, (char *)c->sockets[i].path);
}

/* A grant inside one of box's own directories, or around a socket's place: refused. */
static bool
own_paths_check(struct ctx *c, unsigned line, const char *secname, const char *key,
		const char *path, const char *spelling)
{
	for (size_t i = 0; i < c->n_own; i++)
		if (path_is_under(path, c->own[i].path)) {
			err_at(c, line, secname, key,
			       "%s %s %s %s; a box's state and runtime dirs are never granted (inside a broader grant they are masked)",
			       q(c, spelling),
			       strcmp(path, c->own[i].path) == 0 ? "is" : "lies inside",
			       c->own[i].what, c->own[i].path);
			return false;
		}
	for (size_t i = 0; i < c->n_sockets; i++)
		if (path_is_under(c->sockets[i].path, path)) {
			err_at(c, line, secname, key,
			       "%s %s %s (%s): the box could connect to its sockets and act outside its sandbox; name something beside it",
			       q(c, spelling), strcmp(path, c->sockets[i].path) == 0 ? "is" : "contains",
			       c->sockets[i].path, c->sockets[i].what);
			return false;
		}
	return true;
}


/* Check one grant; on success append it to the list. */
static void
grant_add(struct ctx *c, struct raw_section *s, enum box_fs_kind kind, struct raw_value *v,
	  struct box_filesystem *fs)
{
	const char *key = fs_names[kind];
	_cleanup_free_ char *abs = path_from_spelling(c, v->line, s->name, key, v->text, NULL);
	bool store = false, is_dir = false;

	if (!abs)
		return;
	if (in_list(system_roots, abs)) {
		/* Name the directory too when ~ spelled it (`~` is /root for root). */
		bool tilde = strcmp(v->text, abs) != 0;
		err_at(c, v->line, s->name, key,
		       "%s%s%s%s is a system root, refused as a whole; name something inside it "
		       "instead",
		       q(c, v->text), tilde ? " (" : "", tilde ? abs : "", tilde ? ")" : "");
		return;
	}
	for (size_t i = 0; c->home && credential_stores[i]; i++) {
		_cleanup_free_ char *cs = path_join(c->home, credential_stores[i]);
		if (!cs)
			fatalx("out of memory");
		if (strcmp(abs, cs) == 0)
			store = true;
		else if (kind != BOX_FS_DENY && path_is_under(abs, cs)) {
			err_at(c, v->line, s->name, key,
			       "%s lies inside the credential store ~/%s, which may be granted only by naming it exactly",
			       q(c, v->text), credential_stores[i]);
			return;
		}
	}
	if (kind != BOX_FS_DENY && !own_paths_check(c, v->line, s->name, key, abs, v->text))
		return;
	if (!c->opts.offline && !c->host->grant_check(c, s, key, kind, v, abs, &is_dir))
		return;
	struct box_grant_list *l = &fs->lists[kind];
	struct box_grant *g = GROW(l->v, l->n);
	g->path = TAKE_PTR(abs);
	g->spelling = xstrdup(v->text);
	g->is_dir = is_dir;
	g->credential_store = store;
	g->src = src_at(c, v->line);
}

static void
process_fs(struct ctx *c, struct raw_section *s, struct box_filesystem *fs, bool agent)
{
	if (!s)
		return;
	fs->src = src_at(c, s->line);
	for (int kind = 0; kind < BOX_FS_KIND_COUNT; kind++) {
		if (kind == BOX_FS_EXEC && !agent)
			continue;
		if (!take_list(s, fs_names[kind]))
			continue;
		for_each_value(s, fs_names[kind], k, v) grant_add(c, s, (enum box_fs_kind)kind, v, fs);
	}
	if (!agent)
		for (size_t i = 0; i < s->n; i++)
			if (!s->keys[i].used && strcmp(s->keys[i].name, "exec") == 0) {
				s->keys[i].used = true;
				err_at(c, s->keys[i].line, s->name, "exec",
				       "not accepted here: a tool's or MCP server's grants are exec-capable already; accepted: read write read_file write_file deny");
			}
	report_unknown(c, s, agent ? agent_fs_keys : fs_keys, NULL);
}



bool
is_shell_name(const char *base)
{
	static const char *const shells[] = { "sh", "bash", "zsh", "dash", "rbash", NULL };
	return in_list(shells, base);
}

void
add_interpreter(struct box_command *cmd, const char *canon)
{
	for (size_t i = 0; i < cmd->n_interpreters; i++)
		if (strcmp(cmd->interpreters[i], canon) == 0)
			return;
	*GROW(cmd->interpreters, cmd->n_interpreters) = xstrdup(canon);
}

const char *const shell_msg =
	"is replaced by box's shell alias inside the box; run a program, or declare a [tool.NAME]";


/*
 * No [agent] command: the box is a person's interactive shell
 * (docs/boxctl.1.md "run"). The agent is bash, which inside the box is box's
 * shell alias (docs/box-shell.8.md): with a terminal on stdin it asks
 * box-shell for an interactive session, every command line decided as an
 * agent's. The host's bash is named only so that the box has a program to
 * start: it is mounted over by the alias and never runs.
 */
static void
person_shell_command(struct ctx *c, struct raw_section *s, struct box_process *p)
{
	static const char *const shells[] = { "/usr/bin/bash", "/bin/bash", "/usr/bin/sh", "/bin/sh" };
	struct box_command *cmd = &p->command;
	const char *pick = NULL;
	for (size_t i = 0; i < sizeof(shells) / sizeof(*shells) && !pick; i++)
		if (c->opts.offline || access(shells[i], X_OK) == 0)
			pick = shells[i];
	if (!pick) {
		err_at(c, s->line, s->name, "command",
		       "unset (a person's box shell), but the host has no /usr/bin/bash or /bin/sh "
		       "to stand for it; name the agent's program");
		return;
	}
	cmd->src = src_at(c, s->line);
	cmd->argv = xmalloc(2 * sizeof(char *));
	cmd->argv[1] = NULL;
	cmd->argv[0] = xstrdup(pick);
	cmd->argc = 1;
	cmd->written0 = xstrdup(pick);
	if (c->opts.offline || path_canonicalize(pick, &cmd->program) < 0)
		cmd->program = xstrdup(pick);
	c->cfg->agent.person_shell = true;
}

/* Parse `command`, resolve element 0 and its #! chain. */
static void
process_command(struct ctx *c, struct raw_section *s, struct box_process *p, bool agent)
{
	struct box_command *cmd = &p->command;
	struct raw_key *k = take_command(c, s);
	if (!k && agent && s) {
		person_shell_command(c, s, p);
		return;
	}
	if (!k) {
		if (s)
			err_at(c, s->line, s->name, "command", "required key is missing");
		return;
	}
	cmd->src = src_at(c, k->line);
	for (size_t i = 0; i < k->n; i++) {
		const char *e;
		if (cmdline_split(k->values[i].text, &cmd->argv, &cmd->argc, &e) == -EINVAL) {
			err_at(c, k->values[i].line, s->name, "command", "%s: %s", q(c, k->values[i].text),
			       e);
			return;
		}
	}
	if (cmd->argc == 0) {
		err_at(c, k->line, s->name, "command", "empty; name a program");
		return;
	}
	cmd->written0 = xstrdup(cmd->argv[0]);
	const char *w0 = cmd->written0; /* argv[0] is replaced by the resolved path below */
	if (!*w0) {
		err_at(c, k->line, s->name, "command", "element 0 is empty; name a program");
		return;
	}
	if (strncmp(w0, "~/", 2) == 0) {
		/* ~/… is the owner's passwd home; the box is sent the absolute path. */
		if (!c->home) {
			err_at(c, k->line, s->name, "command",
			       "%s: the box owner has no home to expand ~ to", q(c, w0));
			return;
		}
		char *abs = NULL;
		if (path_expand_home(w0, c->home, &abs) < 0)
			fatalx("out of memory");
		free(cmd->written0);
		cmd->written0 = abs;
		w0 = abs;
	}
	if (strchr(w0, '/') && w0[0] != '/') {
		err_at(c, k->line, s->name, "command",
		       "%s is a relative path; write an absolute path, ~/…, or a bare name found on "
		       "PATH",
		       q(c, w0));
		return;
	}
	if (!c->opts.offline)
		c->host->command_resolve(c, s, k, p, agent, w0);
}

static int
env_cmp(const void *a, const void *b)
{
	return strcmp(((const struct box_env_var *)a)->name, ((const struct box_env_var *)b)->name);
}

static void
env_default(struct box_env *env, const char *name, const char *value)
{
	if (!value)
		return;
	for (size_t i = 0; i < env->n; i++)
		if (strcmp(env->v[i].name, name) == 0)
			return;
	struct box_env_var *v = GROW(env->v, env->n);
	memset(v, 0, sizeof(*v));
	v->name = xstrdup(name);
	v->value = xstrdup(value);
}

static bool egress_names_var(struct ctx *c, const char *name, const char **section);

static void
process_env(struct ctx *c, struct raw_section *s, struct box_env *env)
{
	if (s) {
		env->src = src_at(c, s->line);
		for (size_t i = 0; i < s->n; i++) {
			struct raw_key *k = &s->keys[i];
			const char *egress_sec;
			if (k->used)
				continue;
			struct raw_key *first = take_scalar(c, s, k->name);
			if (!first)
				continue;
			if (!valid_env_name(k->name)) {
				err_at(c, k->line, s->name, k->name,
				       "not a valid variable name; accepted: [A-Za-z_][A-Za-z0-9_]*");
				continue;
			}
			if (box_env_reserved(k->name)) {
				err_at(c, k->line, s->name, k->name,
				       "reserved: box sets it (proxy, CA, identity or loader variable)");
				continue;
			}
			if (egress_names_var(c, k->name, &egress_sec)) {
				err_at(c, k->line, s->name, k->name,
				       "reserved: [%s] binds it to a credential placeholder", egress_sec);
				continue;
			}
			if (strcmp(k->name, "HOME") == 0 && !path_is_clean_absolute(val(k))) {
				err_at(c, k->line, s->name, k->name,
				       "%s is not a clean absolute path", q(c, val(k)));
				continue;
			}
			struct box_env_var *v = GROW(env->v, env->n);
			v->name = xstrdup(k->name);
			v->value = xstrdup(val(k));
			v->set = true;
			v->src = src_at(c, k->line);
		}
	}
	env_default(env, "HOME", c->home);
	env_default(env, "PATH", DEFAULT_PATH);
	if (env->n)
		qsort(env->v, env->n, sizeof(env->v[0]), env_cmp);
}

static void
process_workspace(struct ctx *c, struct raw_section *s, struct box_str *dst)
{
	struct raw_key *k = take_scalar(c, s, "workspace");
	if (!k)
		return;
	char *abs = path_from_spelling(c, vline(k), s->name, "workspace", val(k), NULL);
	if (!abs)
		return;
	if (!c->opts.offline && !c->host->is_dir(abs)) {
		err_at(c, vline(k), s->name, "workspace", "%s is not an existing directory",
		       q(c, val(k)));
		free(abs);
		return;
	}
	dst->value = abs;
	dst->src = src_at(c, vline(k));
}

static void
process_network(struct ctx *c, struct raw_section *s, struct box_process *p)
{
	p->contain_egress.value = true;
	if (!s)
		return;
	p->network_src = src_at(c, s->line);
	get_bool(c, s, "contain_egress", &p->contain_egress, true);
	report_unknown(c, s, net_keys, NULL);
}

/* ------------------------------------------------------------------ */
/* sections                                                            */

void
section_empty_check(struct ctx *c, struct raw_section *s)
{
	if (s && s->n == 0)
		err_at(c, s->line, s->name, NULL, "empty section; remove it or give it keys");
}

void
process_owner(struct ctx *c)
{
	struct box_owner *o = &c->cfg->agent.user;
	struct raw_key *k = take_scalar(c, c->agent, "user");
	const struct passwd *pw = c->host->user_by_uid(c, c->caller);

	o->uid = c->caller;
	o->gid = pw ? pw->pw_gid : getgid();
	o->name = xstrdup(pw ? pw->pw_name : "?");
	o->home = pw && pw->pw_dir[0] == '/' ? xstrdup(pw->pw_dir) : NULL;
	c->caller_home = o->home ? xstrdup(o->home) : NULL;
	if (!pw)
		err_at(c, 0, NULL, NULL, "the calling uid %u has no passwd entry", (unsigned)c->caller);
	if (k) {
		const char *name = val(k);
		const struct passwd *u = NULL;
		uint64_t uid;
		if (parse_u64(name, UINT32_MAX - 1, &uid) == 0)
			u = c->host->user_by_uid(c, (uid_t)uid);
		else
			u = c->host->user_by_name(c, name);
		if (!u) {
			err_at(c, vline(k), c->agent->name, "user", "%s: no such user", q(c, name));
		} else if (u->pw_uid != c->caller && c->caller != 0) {
			err_at(c, vline(k), c->agent->name, "user",
			       "%s: only root may name another user", q(c, name));
		} else if (u->pw_dir[0] != '/') {
			err_at(c, vline(k), c->agent->name, "user", "%s has no absolute home directory",
			       q(c, name));
		} else {
			o->uid = u->pw_uid;
			o->gid = u->pw_gid;
			free(o->name);
			free(o->home);
			o->name = xstrdup(u->pw_name);
			o->home = xstrdup(u->pw_dir);
			o->set = true;
			o->src = src_at(c, vline(k));
		}
	}
	c->home = o->home;
}

void
process_box(struct ctx *c)
{
	struct raw_section *s = c->box;
	struct box_box *b = &c->cfg->box;
	static const char *const hs_names[] = { "always", "batch", "off", NULL };

	b->require.value = BOX_LAYER_ALL;
	if (!s) {
		err_at(c, 0, NULL, NULL, "no [box] section; it names the box (name = ...)");
		return;
	}
	b->src = src_at(c, s->line);
	struct raw_key *k = take_scalar(c, s, "name");
	if (!k)
		err_at(c, s->line, s->name, "name", "required key is missing");
	else if (!valid_name(val(k), BOX_NAME_MAX, NULL))
		err_at(c, vline(k), s->name, "name",
		       "%s is not a valid name; accepted: 1-32 characters of A-Za-z0-9_-", q(c, val(k)));
	else {
		b->name.value = xstrdup(val(k));
		b->name.src = src_at(c, vline(k));
	}

	k = take_scalar(c, s, "policy");
	if (k) {
		_cleanup_free_ char *dir = NULL;
		if (c->cfg->abs_path) {
			if (path_dirname(c->cfg->abs_path, &dir) < 0)
				fatalx("out of memory");
		} else
			dir = c->host->cwd();
		b->policy_written = xstrdup(val(k));
		_cleanup_free_ char *abs =
			path_from_spelling(c, vline(k), s->name, "policy", val(k), dir ? dir : "/");
		if (abs && c->opts.offline) {
			b->policy.path = TAKE_PTR(abs);
			b->policy.src = src_at(c, vline(k));
		} else if (abs) {
			_cleanup_free_ char *canon = NULL;
			const char *why = NULL;
			int r = c->host->canonicalize(abs, &canon);
			if (r < 0)
				err_at(c, vline(k), s->name, "policy", "%s: %s", abs, strerror(-r));
			else if (c->host->read_file(c, canon, BOX_POLICY_FILE_MAX, false, &b->policy.data,
						&b->policy.len, &why) < 0)
				err_at(c, vline(k), s->name, "policy", "%s %s", canon, why);
			else {
				b->policy.path = TAKE_PTR(canon);
				b->policy.src = src_at(c, vline(k));
			}
		}
	}

	k = take_scalar(c, s, "state_dir");
	if (k) {
		char *abs = path_from_spelling(c, vline(k), s->name, "state_dir", val(k), NULL);
		if (abs && !path_is_clean_absolute(abs)) {
			err_at(c, vline(k), s->name, "state_dir", "%s is not a clean absolute path",
			       q(c, val(k)));
			free(abs);
		} else if (abs && !c->opts.offline && c->host->exists_not_dir(abs)) {
			err_at(c, vline(k), s->name, "state_dir", "%s exists and is not a directory",
			       q(c, val(k)));
			free(abs);
		} else if (abs) {
			b->state_dir.value = abs;
			b->state_dir.src = src_at(c, vline(k));
		}
	} else if (b->name.value) {
		const char *xdg = getenv("XDG_STATE_HOME");
		if (c->cfg->service)
			b->state_dir.value = xasprintf("/var/lib/box/%u/%s", (unsigned)c->caller,
						       b->name.value);
		else if (xdg && xdg[0] == '/' && c->cfg->agent.user.uid == c->caller)
			b->state_dir.value = xasprintf("%s/box/%s", xdg, b->name.value);
		else if (c->home)
			b->state_dir.value =
				xasprintf("%s/.local/state/box/%s", c->home, b->name.value);
	}

	k = take_scalar(c, s, "require");
	if (k) {
		static const char *const layers[] = { "userns", "mountns", "netns", "landlock",
						      "seccomp", NULL };
		char **words = NULL;
		size_t nw = 0;
		const char *e;
		unsigned mask = 0;
		bool bad = false;
		(void)cmdline_split(val(k), &words, &nw, &e);
		for (size_t i = 0; i < nw; i++) {
			int bit = -1;
			for (int j = 0; layers[j]; j++)
				if (strcmp(layers[j], words[i]) == 0)
					bit = j;
			if (bit < 0) {
				err_at(c, vline(k), s->name, "require",
				       "%s is not a layer; accepted: userns mountns netns landlock seccomp",
				       q(c, words[i]));
				bad = true;
			} else if (mask & (1U << bit)) {
				err_at(c, vline(k), s->name, "require", "%s is listed twice", words[i]);
				bad = true;
			}
			if (bit >= 0)
				mask |= 1U << bit;
		}
		cmdline_free(words);
		for (int j = 0; j < 3; j++)
			if (!(mask & (1U << j))) {
				err_at(c, vline(k), s->name, "require",
				       "must contain %s; box never runs without it", layers[j]);
				bad = true;
			}
		if (!bad) {
			b->require.value = mask;
			b->require.set = true;
			b->require.src = src_at(c, vline(k));
		}
	}
	get_num(c, s, "timeout", NUM_DURATION, UINT32_MAX * 1000ULL, &b->timeout_ms, 0);
	get_num(c, s, "command_timeout", NUM_DURATION, UINT32_MAX * 1000ULL, &b->command_timeout_ms,
		0);
	/* history_sync: AUTO (index 0) is the unset state, not a value to write. */
	if (get_enum(c, s, "history_sync", hs_names, &b->history_sync, -1))
		b->history_sync.value++;
	else
		b->history_sync.value = BOX_HISTORY_SYNC_AUTO;
	get_bool(c, s, "show_policy", &b->show_policy, false);
	/* A decision held for a person (@ask): 1 s to 1 h; the default is box-policyd's 30 s. */
	get_num(c, s, "ask_timeout", NUM_DURATION, 3600ULL * 1000, &b->ask_timeout_ms, 0);
	/* What else is asked: `default`, a request no permit matches (enum box_ask's order). */
	static const char *const ask_names[] = { "none", "default", NULL };
	get_enum(c, s, "ask", ask_names, &b->ask, BOX_ASK_NONE);
	/* snapshot = workspace: the workspace's writes go to an overlay (docs/snapshot.md). */
	static const char *const snap_names[] = { "none", "workspace", NULL };
	get_enum(c, s, "snapshot", snap_names, &b->snapshot, 0);
	get_num(c, s, "snapshot_max", NUM_SIZE, 1ULL << 50, &b->snapshot_max, 0);
	report_unknown(c, s, box_keys, NULL);
}

static bool
parse_ip_port(const char *s, bool need_port, uint16_t *port)
{
	char host[64];
	const char *colon;
	unsigned char buf[16];

	if (s[0] == '[') {
		const char *e = strchr(s, ']');
		if (!e || (size_t)(e - s - 1) >= sizeof(host))
			return false;
		memcpy(host, s + 1, (size_t)(e - s - 1));
		host[e - s - 1] = '\0';
		if (inet_pton(AF_INET6, host, buf) != 1)
			return false;
		colon = e + 1;
	} else {
		colon = strchr(s, ':');
		size_t n = colon ? (size_t)(colon - s) : strlen(s);
		if (n >= sizeof(host))
			return false;
		memcpy(host, s, n);
		host[n] = '\0';
		if (inet_pton(AF_INET, host, buf) != 1)
			return false;
	}
	if (!colon || !*colon)
		return !need_port;
	if (*colon != ':')
		return false;
	return parse_port(colon + 1, port) == 0;
}

static void
get_aux_file(struct ctx *c, struct raw_section *s, const char *key, struct box_file *dst)
{
	struct raw_key *k = take_scalar(c, s, key);
	const char *why;
	if (!k)
		return;
	_cleanup_free_ char *abs = path_from_spelling(c, vline(k), s->name, key, val(k), NULL);
	if (!abs)
		return;
	if (c->opts.offline) {
		dst->path = TAKE_PTR(abs);
		dst->src = src_at(c, vline(k));
		return;
	}
	_cleanup_free_ char *canon = NULL;
	int r = c->host->canonicalize(abs, &canon);
	if (r < 0) {
		err_at(c, vline(k), s->name, key, "%s: %s", q(c, val(k)), strerror(-r));
		return;
	}
	if (c->host->read_file(c, canon, BOX_AUX_FILE_MAX, false, &dst->data, &dst->len, &why) < 0) {
		err_at(c, vline(k), s->name, key, "%s %s", q(c, val(k)), why);
		return;
	}
	dst->path = TAKE_PTR(canon);
	dst->src = src_at(c, vline(k));
}

static const char *parse_destination(const char *s, bool url, struct box_destination *d);
static void dest_free_one(struct box_destination *d);

/*
 * [gateway] passthrough: host:port entries, patterns as [egress]
 * destinations, the port required and no path (a tunnel has no requests).
 * Duplicates are refused here; a destination an [egress] binding covers is
 * refused by egress_cross_check (it needs the bindings).
 */
static void
get_passthrough(struct ctx *c, struct raw_section *s, struct box_gateway *g)
{
	(void)take_list(s, "passthrough");
	for_each_value(s, "passthrough", k, v) {
		struct box_destination d;
		const char *t = v->text, *why;
		const char *colon = strrchr(t, ':');
		if (strchr(t, '/')) {
			err_at(c, v->line, s->name, "passthrough",
			       "%s has a path; a passthrough entry is host:port (a tunnel has no requests)",
			       q(c, t));
			continue;
		}
		if (!colon) {
			err_at(c, v->line, s->name, "passthrough",
			       "%s needs a port; accepted: host:port or *.domain:port", q(c, t));
			continue;
		}
		if ((why = parse_destination(t, false, &d))) {
			err_at(c, v->line, s->name, "passthrough", "%s %s", q(c, t), why);
			continue;
		}
		d.src = src_at(c, v->line);
		bool dup = false;
		for (size_t i = 0; i < g->n_passthrough && !dup; i++) {
			const struct box_destination *o = &g->passthrough[i];
			if (o->port == d.port && o->wildcard == d.wildcard &&
			    strcmp(o->host, d.host) == 0) {
				err_at(c, v->line, s->name, "passthrough",
				       "%s is a duplicate entry (first at line %u)", q(c, t),
				       o->src.line);
				dup = true;
			}
		}
		if (dup) {
			dest_free_one(&d);
			continue;
		}
		*GROW(g->passthrough, g->n_passthrough) = d;
	}
}

void
process_gateway(struct ctx *c)
{
	struct raw_section *s = c->gateway;
	struct box_gateway *g = &c->cfg->gateway;

	g->port.value = 3128;
	g->connect_timeout_ms.value = 10 * 1000;
	g->idle_timeout_ms.value = 300 * 1000;
	g->max_connections.value = 1024;
	g->max_request_body.value = 64ULL << 20;
	if (!s)
		return;
	g->src = src_at(c, s->line);
	get_num(c, s, "port", NUM_PORT, 65535, &g->port, 3128);
	get_num(c, s, "connect_timeout", NUM_DURATION, 3600 * 1000ULL, &g->connect_timeout_ms,
		10 * 1000);
	get_num(c, s, "idle_timeout", NUM_DURATION, 24 * 3600 * 1000ULL, &g->idle_timeout_ms,
		300 * 1000);
	get_num(c, s, "max_connections", NUM_COUNT, 1 << 20, &g->max_connections, 1024);
	get_num(c, s, "max_request_body", NUM_SIZE, 1ULL << 40, &g->max_request_body, 64ULL << 20);
	get_aux_file(c, s, "upstream_ca", &g->upstream_ca);
	if (g->upstream_ca.data && !strstr(g->upstream_ca.data, "-----BEGIN CERTIFICATE-----"))
		err_at(c, g->upstream_ca.src.line, s->name, "upstream_ca",
		       "%s holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
		       g->upstream_ca.path);
	get_aux_file(c, s, "hosts_file", &g->hosts_file);
	struct raw_key *k = take_scalar(c, s, "resolver");
	uint16_t port;
	if (k && !parse_ip_port(val(k), true, &port))
		err_at(c, vline(k), s->name, "resolver",
		       "%s is not accepted; accepted: IPv4:PORT or [IPv6]:PORT", q(c, val(k)));
	else if (k) {
		g->resolver.value = xstrdup(val(k));
		g->resolver.src = src_at(c, vline(k));
	}
	get_bool(c, s, "allow_host_loopback", &g->allow_host_loopback, false);
	get_passthrough(c, s, g);
	report_unknown(c, s, gateway_keys, NULL);
}

/* ------------------------------------------------------------------ */
/* credentials                                                         */

static bool
valid_hostname(const char *h)
{
	size_t n = strlen(h), label = 0;
	unsigned char buf[4];
	if (n == 0 || n > 253)
		return false;
	if (inet_pton(AF_INET, h, buf) == 1)
		return true;
	for (const char *p = h;; p++) {
		if (*p == '.' || *p == '\0') {
			if (label == 0 || label > 63 || p[-1] == '-' || p[-(ptrdiff_t)label] == '-')
				return false;
			label = 0;
			if (!*p)
				break;
			continue;
		}
		if (!isalnum((unsigned char)*p) && *p != '-')
			return false;
		label++;
	}
	return true;
}

/*
 * host[:port][/path] or *.domain[:port][/path]. `url`: the rest of an
 * https:// URL, whose path may be "/" or end with "/" (no wildcard).
 * Returns NULL (ok) or a message.
 */
static void
dest_free_one(struct box_destination *d)
{
	free(d->host);
	free(d->path_prefix);
	free(d->spelling);
	memset(d, 0, sizeof(*d));
}

static const char *
parse_destination(const char *s, bool url, struct box_destination *d)
{
	bool allow_wildcard = !url;
	const char *slash = strchr(s, '/');
	size_t hl = slash ? (size_t)(slash - s) : strlen(s);
	_cleanup_free_ char *hp = xstrndup(s, hl);
	char *colon = strrchr(hp, ':');
	uint16_t port = 443;

	memset(d, 0, sizeof(*d));
	if (colon) {
		if (parse_port(colon + 1, &port) < 0)
			return "has a port outside 1-65535";
		*colon = '\0';
	}
	char *host = hp;
	if (strncmp(host, "*.", 2) == 0) {
		if (!allow_wildcard)
			return "may not be a wildcard";
		d->wildcard = true;
		host += 2;
		if (!strchr(host, '.'))
			return "is too broad: *.domain needs a domain with a dot (e.g. *.example.com)";
	}
	if (strchr(host, '*'))
		return "has a * that is not a leading *. label";
	if (!valid_hostname(host))
		return "is not a host name (letters, digits, - and . labels) or an IPv4 address";
	for (char *p = host; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	if (slash) {
		size_t pl = strlen(slash);
		if (!url && (pl == 1 || slash[pl - 1] == '/'))
			return "has a path that ends with /; write the prefix without it";
		for (const char *p = slash; *p; p++)
			if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f || strchr("?#\"<>\\^`{|}", *p))
				return "has a path with a character outside a URL path";
		if (strstr(slash, "//"))
			return "has an empty path segment";
		for (const char *p = slash; (p = strstr(p, "/.")); p++)
			if (p[2] == '\0' || p[2] == '/' || (p[2] == '.' && (p[3] == '\0' || p[3] == '/')))
				return "has a . or .. path segment";
		while (pl > 1 && slash[pl - 1] == '/')
			pl--;
		if (pl > 1)
			d->path_prefix = xstrndup(slash, pl);
	}
	d->host = xstrdup(host);
	d->port = port;
	d->spelling = xstrdup(s);
	return NULL;
}

static bool
path_prefix_overlap(const char *a, const char *b)
{
	if (!a || !b)
		return true;
	return path_is_under(a, b) || path_is_under(b, a);
}

static bool
host_overlap(const struct box_destination *a, const struct box_destination *b)
{
	if (!a->wildcard && !b->wildcard)
		return strcmp(a->host, b->host) == 0;
	if (a->wildcard && b->wildcard) {
		size_t la = strlen(a->host), lb = strlen(b->host);
		const struct box_destination *lo = la >= lb ? a : b, *hi = la >= lb ? b : a;
		size_t ll = strlen(lo->host), lh = strlen(hi->host);
		return strcmp(lo->host, hi->host) == 0 ||
		       (ll > lh && lo->host[ll - lh - 1] == '.' && strcmp(lo->host + ll - lh, hi->host) == 0);
	}
	const struct box_destination *w = a->wildcard ? a : b, *h = a->wildcard ? b : a;
	size_t lw = strlen(w->host), lh = strlen(h->host);
	return lh > lw && h->host[lh - lw - 1] == '.' && strcmp(h->host + lh - lw, w->host) == 0;
}

static bool
dest_overlap(const struct box_destination *a, const struct box_destination *b)
{
	return a->port == b->port && host_overlap(a, b) &&
	       path_prefix_overlap(a->path_prefix, b->path_prefix);
}

static void
get_secret(struct ctx *c, struct raw_section *s, struct box_secret *sec, bool required)
{
	struct raw_key *k = take_scalar(c, s, "secret");
	if (!k) {
		if (required)
			err_at(c, s->line, s->name, "secret", "required key is missing");
		return;
	}
	const char *v = val(k);
	unsigned line = vline(k);
	if (strncmp(v, "env://", 6) == 0) {
		if (!valid_env_name(v + 6)) {
			err_at(c, line, s->name, "secret",
			       "%s: env://NAME needs a variable name [A-Za-z_][A-Za-z0-9_]*", q(c, v));
			return;
		}
		sec->kind = BOX_SECRET_ENV;
		if (!c->opts.offline) {
			const char *e = getenv(v + 6);
			if (!e || !*e) {
				err_at(c, line, s->name, "secret",
				       "%s is unset or empty in boxctl's environment", v);
				sec->kind = BOX_SECRET_NONE;
				return;
			}
			sec->value = xstrdup(e);
			sec->len = strlen(e);
		}
	} else if (strncmp(v, "file://", 7) == 0) {
		const char *p = v + 7;
		if (p[0] != '/') {
			err_at(c, line, s->name, "secret",
			       "%s: file:// needs an absolute path (file:///path)", q(c, v));
			return;
		}
		_cleanup_free_ char *abs = path_from_spelling(c, line, s->name, "secret", p, NULL);
		if (!abs)
			return;
		if (++c->n_file_secrets > BOX_FILE_SECRETS_MAX) {
			err_at(c, line, s->name, "secret",
			       "%s: at most %d file:// secrets per box (each is masked in every view)",
			       q(c, v), BOX_FILE_SECRETS_MAX);
			return;
		}
		sec->kind = BOX_SECRET_FILE;
		if (!c->opts.offline) {
			const char *why;
			if (c->host->canonicalize(abs, &sec->path) < 0) {
				err_at(c, line, s->name, "secret", "%s cannot be opened: %s", abs,
				       strerror(errno));
				sec->kind = BOX_SECRET_NONE;
				return;
			}
			if (c->host->read_file(c, abs, BOX_SECRET_FILE_MAX, true, &sec->value, &sec->len,
					   &why) < 0) {
				err_at(c, line, s->name, "secret", "%s %s", abs, why);
				sec->kind = BOX_SECRET_NONE;
				return;
			}
			/* One trailing newline is the file's, not the secret's. */
			if (sec->len && sec->value[sec->len - 1] == '\n')
				sec->value[--sec->len] = '\0';
			if (sec->len && sec->value[sec->len - 1] == '\r')
				sec->value[--sec->len] = '\0';
			if (sec->len == 0) {
				err_at(c, line, s->name, "secret", "%s is empty", abs);
				sec->kind = BOX_SECRET_NONE;
				return;
			}
		}
	} else {
		err_at(c, line, s->name, "secret",
		       "%s is not accepted; accepted: env://NAME or file:///absolute/path", q(c, v));
		return;
	}
	for (size_t i = 0; i < sec->len; i++)
		if ((unsigned char)sec->value[i] < 0x20 || sec->value[i] == 0x7f) {
			err_at(c, line, s->name, "secret",
			       "%s holds a control character (value not shown)", v);
			sec->kind = BOX_SECRET_NONE;
			return;
		}
	sec->ref = xstrdup(v);
	sec->src = src_at(c, line);
}

static bool
valid_token(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("!#$%&'*+-.^_`|~", *s))
			return false;
	return true;
}

/* prefix may be written in double quotes to keep blanks: prefix = "Token " */
static bool
unquote_prefix(const char *v, char **ret)
{
	size_t n = strlen(v);
	if (n >= 2 && v[0] == '"' && v[n - 1] == '"')
		*ret = xstrndup(v + 1, n - 2);
	else
		*ret = xstrdup(v);
	for (const char *p = *ret; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '"') {
			free(*ret);
			*ret = NULL;
			return false;
		}
	return true;
}

static const char *const placement_names[] = { "header", "basic_auth", "query_param", NULL };

/* placement, header, prefix: shared by [egress] and http [mcp]. */
static void
get_placement(struct ctx *c, struct raw_section *s, const struct box_secret *sec,
	      struct box_enum *placement, struct box_str *header, struct box_str *prefix,
	      bool allow_query)
{
	static const char *const mcp_placements[] = { "header", "basic_auth", NULL };
	get_enum(c, s, "placement", allow_query ? placement_names : mcp_placements, placement,
		 BOX_PLACEMENT_HEADER);
	struct raw_key *hk = take_scalar(c, s, "header");
	struct raw_key *pk = take_scalar(c, s, "prefix");
	if (placement->set && sec->kind == BOX_SECRET_NONE && !sec->ref && !allow_query)
		err_at(c, placement->src.line, s->name, "placement", "applies only with a secret");
	if (placement->value != BOX_PLACEMENT_HEADER) {
		if (hk)
			err_at(c, hk->line, s->name, "header", "applies only to placement = header");
		if (pk)
			err_at(c, pk->line, s->name, "prefix", "applies only to placement = header");
		if (placement->value == BOX_PLACEMENT_BASIC_AUTH && sec->value &&
		    !memchr(sec->value, ':', sec->len))
			err_at(c, sec->src.line, s->name, "secret",
			       "%s holds no ':'; placement = basic_auth needs user:password (value not shown)",
			       sec->ref);
		return;
	}
	if (hk && !valid_token(val(hk)))
		err_at(c, vline(hk), s->name, "header", "%s is not an HTTP header name", q(c, val(hk)));
	else if (hk) {
		header->value = xstrdup(val(hk));
		header->src = src_at(c, vline(hk));
	}
	if (!header->value && (hk || sec->kind != BOX_SECRET_NONE || sec->ref))
		header->value = xstrdup("Authorization");
	if (pk) {
		if (!unquote_prefix(val(pk), &prefix->value))
			err_at(c, vline(pk), s->name, "prefix",
			       "%s holds a control character or a quote", q(c, val(pk)));
		else
			prefix->src = src_at(c, vline(pk));
	} else if (header->value)
		prefix->value = xstrdup(strcasecmp(header->value, "Authorization") == 0 ? "Bearer " : "");
}

/*
 * [egress.NAME] sandboxes: space-separated agent, tool.NAME, mcp.NAME, no
 * repeats. That each names a section of this config is checked by
 * egress_cross_check, once the tools and servers are read.
 */
static void
get_sandboxes(struct ctx *c, struct raw_section *s, struct box_egress *e)
{
	struct raw_key *k = take_scalar(c, s, "sandboxes");
	char **words = NULL;
	size_t nw = 0;
	const char *why;

	if (!k)
		return;
	if (cmdline_split(val(k), &words, &nw, &why) < 0 || nw == 0) {
		err_at(c, vline(k), s->name, "sandboxes",
		       "%s is not accepted; accepted: space-separated agent, tool.NAME, mcp.NAME",
		       q(c, val(k)));
		cmdline_free(words);
		return;
	}
	e->sandboxes_src = src_at(c, vline(k));
	for (size_t i = 0; i < nw; i++) {
		const char *w = words[i];
		bool ok = strcmp(w, "agent") == 0 ||
			  (strncmp(w, "tool.", 5) == 0 && valid_name(w + 5, BOX_NAME_MAX, NULL)) ||
			  (strncmp(w, "mcp.", 4) == 0 && valid_name(w + 4, BOX_NAME_MAX, NULL));
		bool dup = false;
		for (size_t j = 0; j < e->n_sandboxes; j++)
			dup |= strcmp(e->sandboxes[j], w) == 0;
		if (!ok)
			err_at(c, vline(k), s->name, "sandboxes",
			       "%s is not a sandbox; accepted: agent, tool.NAME, mcp.NAME", q(c, w));
		else if (dup)
			err_at(c, vline(k), s->name, "sandboxes", "%s is listed twice", w);
		else
			*GROW(e->sandboxes, e->n_sandboxes) = xstrdup(w);
	}
	cmdline_free(words);
}

void
process_egress(struct ctx *c, struct group *gr, struct box_egress *e)
{
	struct raw_section *s = gr->main;
	static const char *const inject_names[] = { "placeholder", "always", NULL };

	e->name = xstrdup(gr->name);
	e->src = src_at(c, s->line);
	if (!take_list(s, "destinations"))
		err_at(c, s->line, s->name, "destinations", "required key is missing");
	for_each_value(s, "destinations", k, v) {
		struct box_destination d;
		const char *why = parse_destination(v->text, false, &d);
		if (why) {
			err_at(c, v->line, s->name, "destinations", "%s %s", q(c, v->text), why);
			continue;
		}
		d.src = src_at(c, v->line);
		*GROW(e->dest, e->n_dest) = d;
	}
	get_secret(c, s, &e->secret, true);

	struct raw_key *k = take_scalar(c, s, "variable");
	if (k) {
		if (!valid_env_name(val(k)))
			err_at(c, vline(k), s->name, "variable",
			       "%s is not a valid variable name; accepted: [A-Za-z_][A-Za-z0-9_]*",
			       q(c, val(k)));
		else if (box_env_reserved(val(k)) || strcmp(val(k), "HOME") == 0 ||
			 strcmp(val(k), "PATH") == 0)
			err_at(c, vline(k), s->name, "variable", "%s is reserved: box sets it",
			       q(c, val(k)));
		else {
			e->variable.value = xstrdup(val(k));
			e->variable.src = src_at(c, vline(k));
		}
	} else if (e->secret.ref && e->secret.kind == BOX_SECRET_ENV) {
		const char *name = e->secret.ref + 6;
		if (box_env_reserved(name) || strcmp(name, "HOME") == 0 ||
		    strcmp(name, "PATH") == 0)
			err_at(c, e->secret.src.line, s->name, "secret",
			       "%s would bind the reserved variable %s; set variable", e->secret.ref,
			       name);
		else
			e->variable.value = xstrdup(name);
	} else if (e->secret.kind == BOX_SECRET_FILE || (e->secret.ref && !e->variable.value)) {
		err_at(c, s->line, s->name, "variable", "required with a file:// secret");
	}
	get_placement(c, s, &e->secret, &e->placement, &e->header, &e->prefix, true);
	k = take_scalar(c, s, "param");
	if (e->placement.value == BOX_PLACEMENT_QUERY_PARAM) {
		if (!k)
			err_at(c, e->placement.src.line, s->name, "param",
			       "required with placement = query_param");
		else if (!valid_name(val(k), 64, ".~"))
			err_at(c, vline(k), s->name, "param",
			       "%s is not accepted; accepted: 1-64 characters of A-Za-z0-9._~-",
			       q(c, val(k)));
		else {
			e->param.value = xstrdup(val(k));
			e->param.src = src_at(c, vline(k));
		}
	} else if (k)
		err_at(c, vline(k), s->name, "param", "applies only to placement = query_param");
	get_enum(c, s, "inject", inject_names, &e->inject, BOX_INJECT_PLACEHOLDER);
	k = take_scalar(c, s, "placeholder_prefix");
	if (k && !valid_name(val(k), 32, "."))
		err_at(c, vline(k), s->name, "placeholder_prefix",
		       "%s is not accepted; accepted: 1-32 characters of A-Za-z0-9._-", q(c, val(k)));
	else if (k) {
		e->placeholder_prefix.value = xstrdup(val(k));
		e->placeholder_prefix.src = src_at(c, vline(k));
	} else
		e->placeholder_prefix.value = xstrdup("box_");
	get_sandboxes(c, s, e);
	report_unknown(c, s, egress_keys, NULL);
}

static bool
egress_names_var(struct ctx *c, const char *name, const char **section)
{
	for (size_t i = 0; i < c->cfg->n_egress; i++)
		if (c->cfg->egress[i].variable.value &&
		    strcmp(c->cfg->egress[i].variable.value, name) == 0) {
			*section = c->egress[i].main->name;
			return true;
		}
	return false;
}

/* ------------------------------------------------------------------ */
/* processes                                                           */

void
process_agent(struct ctx *c)
{
	struct box_agent *a = &c->cfg->agent;
	struct raw_section *s = c->agent;

	process_env(c, c->agent_env, &a->proc.env);
	section_empty_check(c, c->agent_env);
	if (!s) {
		err_at(c, 0, NULL, NULL, "no [agent] section; it names the agent's command");
		process_fs(c, c->agent_fs, &a->proc.fs, true);
		return;
	}
	a->src = src_at(c, s->line);
	process_command(c, s, &a->proc, true);
	process_workspace(c, s, &a->proc.workspace);
	if (!a->proc.workspace.value && !c->opts.offline) {
		a->proc.workspace.value = c->host->cwd();
		if (!a->proc.workspace.value)
			err_at(c, s->line, s->name, "workspace",
			       "unset, and the current directory cannot be resolved: %s", strerror(errno));
	}
	get_num(c, s, "memory_max", NUM_SIZE, 1ULL << 50, &a->memory_max, 0);
	get_num(c, s, "pids_max", NUM_COUNT, 1 << 22, &a->pids_max, 0);
	get_num(c, s, "nofile", NUM_COUNT, 1 << 30, &a->proc.nofile, 0);
	get_num(c, s, "nproc", NUM_COUNT, 1 << 22, &a->proc.nproc, 0);
	get_bool(c, s, "exec_system", &a->exec_system, false);
	get_enum(c, s, "supervise", sup_names, &a->supervise, BOX_SUPERVISE_NONE);
	take_scalar(c, s, "user"); /* handled in process_owner */
	report_unknown(c, s, agent_keys, NULL);
	process_fs(c, c->agent_fs, &a->proc.fs, true);
	section_empty_check(c, c->agent_fs);
}

void
process_tool(struct ctx *c, struct group *gr, struct box_tool *t)
{
	struct raw_section *s = gr->main;

	t->name = xstrdup(gr->name);
	t->src = src_at(c, s->line);
	process_env(c, gr->env, &t->proc.env);
	section_empty_check(c, gr->env);
	process_command(c, s, &t->proc, false);
	process_workspace(c, s, &t->proc.workspace);
	get_num(c, s, "nofile", NUM_COUNT, 1 << 30, &t->proc.nofile, 0);
	get_num(c, s, "nproc", NUM_COUNT, 1 << 22, &t->proc.nproc, 0);
	get_enum(c, s, "supervise", sup_names, &t->supervise, BOX_SUPERVISE_NONE);
	report_unknown(c, s, tool_keys, NULL);
	process_fs(c, gr->fs, &t->proc.fs, false);
	section_empty_check(c, gr->fs);
	process_network(c, gr->net, &t->proc);
	section_empty_check(c, gr->net);
}

static const char *const cedar_reserved[] = { "true", "false", "if", "then", "else", "in",
					      "is", "like", "has", NULL };

void
process_mcp(struct ctx *c, struct group *gr, struct box_mcp *m)
{
	static const char *const type_names[] = { "stdio", "http", NULL };
	struct raw_section *s = gr->main;

	m->name = xstrdup(gr->name);
	m->src = src_at(c, s->line);
	m->ns = xstrdup(gr->name);
	for (char *p = m->ns; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			*p = '_';
	if (strcmp(m->ns, "Box") == 0)
		err_at(c, s->line, s->name, NULL, "the name Box is reserved for box's own actions");
	else if (isdigit((unsigned char)m->ns[0]))
		err_at(c, s->line, s->name, NULL,
		       "the name starts with a digit, which a policy namespace may not");
	else if (in_list(cedar_reserved, m->ns) || strncmp(m->ns, "__cedar", 7) == 0)
		err_at(c, s->line, s->name, NULL, "the name %s is a Cedar keyword", m->ns);

	bool written = false;
	for (size_t i = 0; i < s->n; i++)
		written |= strcmp(s->keys[i].name, "type") == 0;
	bool have_type = get_enum(c, s, "type", type_names, &m->type, BOX_MCP_STDIO);
	if (!written)
		err_at(c, s->line, s->name, "type", "required key is missing; accepted: stdio, http");
	get_bool(c, s, "allow_tool_changes", &m->allow_tool_changes, false);
	get_num(c, s, "max_frame", NUM_SIZE, 64ULL << 20, &m->max_frame, 4ULL << 20);
	get_num(c, s, "call_timeout", NUM_DURATION, BOX_MCP_CALL_TIMEOUT_MAX_MS, &m->call_timeout_ms,
		BOX_MCP_CALL_TIMEOUT_DEFAULT_MS);
	m->proc.contain_egress.value = true;
	if (!have_type) {
		/* Unknown type: take every key quietly, the type error says it all. */
		for (size_t i = 0; i < s->n; i++)
			if (in_list(mcp_keys, s->keys[i].name))
				s->keys[i].used = true;
		report_unknown(c, s, mcp_keys, NULL);
		return;
	}
	if (m->type.value == BOX_MCP_STDIO) {
		static const char *const http_only[] = { "url", "secret", "placement", "header",
							 "prefix", NULL };
		/* The shell aliases, and box-alias itself (RUNTIME/bin/box-alias, the links' target). */
		static const char *const reserved_alias[] = { "sh",	 "bash",    "zsh",
							      "dash",	 "python",  "python3",
							      "box-alias", NULL };
		process_env(c, gr->env, &m->proc.env);
		section_empty_check(c, gr->env);
		process_command(c, s, &m->proc, false);
		get_enum(c, s, "supervise", sup_names, &m->supervise, BOX_SUPERVISE_NONE);
		struct raw_key *k = take_scalar(c, s, "alias");
		const char *alias = k ? val(k) :
					m->proc.command.argc ? path_basename(m->proc.command.argv[0]) :
							       NULL;
		if (alias && (!valid_name(alias, 32, ".") || strcmp(alias, ".") == 0 ||
			      strcmp(alias, "..") == 0))
			err_at(c, k ? vline(k) : m->proc.command.src.line, s->name,
			       k ? "alias" : "command",
			       "alias %s is not accepted; accepted: 1-32 characters of A-Za-z0-9._- (not . or ..)%s",
			       q(c, alias), k ? "" : "; set alias");
		else if (alias && in_list(reserved_alias, alias))
			err_at(c, k ? vline(k) : m->proc.command.src.line, s->name,
			       k ? "alias" : "command",
			       "alias %s would replace box's own %s alias; %s", alias, alias,
			       k ? "choose another" : "set alias");
		else if (alias) {
			m->alias.value = xstrdup(alias);
			m->alias.src = src_at(c, k ? vline(k) : 0);
		}
		for (size_t i = 0; i < s->n; i++)
			if (!s->keys[i].used && in_list(http_only, s->keys[i].name)) {
				s->keys[i].used = true;
				err_at(c, s->keys[i].line, s->name, s->keys[i].name,
				       "applies only to type = http");
			}
		report_unknown(c, s, mcp_keys, NULL);
		process_fs(c, gr->fs, &m->proc.fs, false);
		section_empty_check(c, gr->fs);
		process_network(c, gr->net, &m->proc);
		section_empty_check(c, gr->net);
		return;
	}
	/* http */
	static const char *const stdio_only[] = { "command", "alias", "supervise", NULL };
	struct raw_section *subs[] = { gr->env, gr->fs, gr->net };
	for (size_t i = 0; i < ELEMENTSOF(subs); i++)
		if (subs[i])
			err_at(c, subs[i]->line, subs[i]->name, NULL, "applies only to type = stdio");
	struct raw_key *k = take_scalar(c, s, "url");
	if (!k)
		err_at(c, s->line, s->name, "url", "required key is missing for type = http");
	else if (strncmp(val(k), "https://", 8) != 0)
		err_at(c, vline(k), s->name, "url",
		       "%s is not accepted; accepted: https://host[:port]/path", q(c, val(k)));
	else {
		const char *why = parse_destination(val(k) + 8, true, &m->url_dest);
		if (why)
			err_at(c, vline(k), s->name, "url", "%s %s", q(c, val(k)), why);
		else {
			m->url.value = xstrdup(val(k));
			m->url.src = src_at(c, vline(k));
			m->url_dest.src = m->url.src;
		}
	}
	get_secret(c, s, &m->secret, false);
	get_placement(c, s, &m->secret, &m->placement, &m->header, &m->prefix, false);
	for (size_t i = 0; i < s->n; i++)
		if (!s->keys[i].used && in_list(stdio_only, s->keys[i].name)) {
			s->keys[i].used = true;
			err_at(c, s->keys[i].line, s->name, s->keys[i].name,
			       "applies only to type = stdio");
		}
	report_unknown(c, s, mcp_keys, NULL);
}

/* ------------------------------------------------------------------ */
/* [telemetry.NAME]                                                    */

const char *const box_telemetry_include_names[] = { "deny", "permit", "control", "kernel",
						    "agent", NULL };

/* include = any of deny permit control kernel agent, space-separated, each once. */
static void
get_include(struct ctx *c, struct raw_section *s, struct box_u64 *dst)
{
	struct raw_key *k = take_scalar(c, s, "include");
	char **words = NULL;
	size_t nw = 0;
	const char *why;
	uint64_t mask = 0;
	bool bad = false;

	dst->value = BOX_TELEMETRY_ALL;
	if (!k)
		return;
	if (cmdline_split(val(k), &words, &nw, &why) < 0 || nw == 0) {
		err_at(c, vline(k), s->name, "include",
		       "%s is not accepted; accepted: any of deny permit control kernel agent, "
		       "space-separated", q(c, val(k)));
		cmdline_free(words);
		return;
	}
	for (size_t i = 0; i < nw; i++) {
		int bit = -1;
		for (int j = 0; box_telemetry_include_names[j]; j++)
			if (strcmp(words[i], box_telemetry_include_names[j]) == 0)
				bit = j;
		if (bit < 0) {
			err_at(c, vline(k), s->name, "include",
			       "%s is not accepted; accepted: deny, permit, control, kernel, agent",
			       q(c, words[i]));
			bad = true;
		} else if (mask & (1u << bit)) {
			err_at(c, vline(k), s->name, "include", "%s is listed twice", words[i]);
			bad = true;
		} else
			mask |= 1u << bit;
	}
	cmdline_free(words);
	if (bad)
		return;
	dst->value = mask;
	dst->set = true;
	dst->src = src_at(c, vline(k));
}

/* A loopback host: a secret may travel to it over plain http (a collector on this machine). */
static bool
loopback_host(const char *h)
{
	return strcmp(h, "localhost") == 0 || strncmp(h, "127.", 4) == 0;
}

/*
 * [telemetry.NAME]: kind = file (destination a path the owner can write; box
 * opens it as the owner at start) or otlp (destination a collector's base url
 * http(s)://host[:port][/path]; protocol, secret, placement, header, prefix).
 */
void
process_telemetry(struct ctx *c, struct group *gr, struct box_telemetry *t)
{
	static const char *const kind_names[] = { "file", "otlp", NULL };
	static const char *const protocol_names[] = { "http/protobuf", "http/json", NULL };
	static const char *const otlp_only[] = { "protocol", "secret", "placement", "header",
						 "prefix", NULL };
	struct raw_section *s = gr->main;

	t->name = xstrdup(gr->name);
	t->src = src_at(c, s->line);
	bool written = false;
	for (size_t i = 0; i < s->n; i++)
		written |= strcmp(s->keys[i].name, "kind") == 0;
	bool have_kind = get_enum(c, s, "kind", kind_names, &t->kind, BOX_TELEMETRY_FILE);
	if (!written)
		err_at(c, s->line, s->name, "kind", "required key is missing; accepted: file, otlp");
	get_include(c, s, &t->include);
	if (!have_kind) {
		/* Unknown kind: take every key quietly, the kind error says it all. */
		for (size_t i = 0; i < s->n; i++)
			if (in_list(telemetry_keys, s->keys[i].name))
				s->keys[i].used = true;
		return;
	}
	struct raw_key *k = take_scalar(c, s, "destination");
	if (t->kind.value == BOX_TELEMETRY_FILE) {
		if (!k)
			err_at(c, s->line, s->name, "destination",
			       "required key is missing; accepted: the path of a file (/… or ~/…)");
		else {
			char *abs = path_from_spelling(c, vline(k), s->name, "destination", val(k),
						       NULL);
			if (abs && strcmp(abs, "/") == 0) {
				err_at(c, vline(k), s->name, "destination", "%s is not a file",
				       q(c, val(k)));
				free(abs);
			} else if (abs) {
				t->destination.value = abs;
				t->destination.src = src_at(c, vline(k));
			}
		}
		for (size_t i = 0; i < s->n; i++)
			if (!s->keys[i].used && in_list(otlp_only, s->keys[i].name)) {
				s->keys[i].used = true;
				err_at(c, s->keys[i].line, s->name, s->keys[i].name,
				       "applies only to kind = otlp");
			}
		report_unknown(c, s, telemetry_keys, NULL);
		return;
	}
	/* otlp */
	if (!k)
		err_at(c, s->line, s->name, "destination",
		       "required key is missing; accepted: a collector url http(s)://host[:port]");
	else {
		const char *v = val(k), *rest = NULL;
		if (strncmp(v, "https://", 8) == 0)
			rest = v + 8, t->url_https = true;
		else if (strncmp(v, "http://", 7) == 0)
			rest = v + 7;
		const char *why = rest ? parse_destination(rest, true, &t->url_dest) : NULL;
		if (!rest)
			err_at(c, vline(k), s->name, "destination",
			       "%s is not accepted; accepted: a collector url http(s)://host[:port]",
			       q(c, v));
		else if (why)
			err_at(c, vline(k), s->name, "destination", "%s %s", q(c, v), why);
		else {
			/* A url without a port means the scheme's: 80 for http. */
			size_t hl = strcspn(rest, "/");
			if (!t->url_https && !memchr(rest, ':', hl))
				t->url_dest.port = 80;
			t->destination.value = xstrdup(v);
			t->destination.src = src_at(c, vline(k));
			t->url_dest.src = t->destination.src;
		}
	}
	get_enum(c, s, "protocol", protocol_names, &t->protocol, BOX_TELEMETRY_PROTOBUF);
	get_secret(c, s, &t->secret, false);
	get_placement(c, s, &t->secret, &t->placement, &t->header, &t->prefix, false);
	if (t->secret.ref && t->destination.value && !t->url_https &&
	    !loopback_host(t->url_dest.host))
		err_at(c, t->secret.src.line, s->name, "secret",
		       "would travel in plain text to %s; use an https:// destination",
		       t->url_dest.host);
	report_unknown(c, s, telemetry_keys, NULL);
}

/* ------------------------------------------------------------------ */
/* cross-section checks                                                */

void
fs_cross_check(struct ctx *c, const char *secname, struct box_filesystem *fs,
	       const struct masked_file *files, size_t n_files)
{
	for (int kind = 0; kind < BOX_FS_KIND_COUNT; kind++) {
		struct box_grant_list *l = &fs->lists[kind];
		const char *key = fs_names[kind];
		for (size_t j = 0; j < l->n; j++) {
			struct box_grant *g = &l->v[j];
			bool bad = false;
			for (size_t i = 0; i < j && !bad; i++) {
				struct box_grant *o = &l->v[i];
				if (strcmp(o->path, g->path) == 0) {
					err_at(c, g->src.line, secname, key,
					       "%s is a duplicate entry (first at line %u)",
					       q(c, g->spelling), o->src.line);
					bad = true;
				} else if (path_is_under(g->path, o->path) ||
					   path_is_under(o->path, g->path)) {
					bool inner = path_is_under(g->path, o->path);
					err_at(c, g->src.line, secname, key,
					       "%s lies %s %s (line %u); one list may not hold an entry and something inside it",
					       q(c, g->spelling), inner ? "inside" : "around",
					       q(c, o->spelling), o->src.line);
					bad = true;
				}
			}
			if (bad || kind == BOX_FS_DENY)
				continue;
			struct box_grant_list *d = &fs->lists[BOX_FS_DENY];
			for (size_t i = 0; i < d->n && !bad; i++)
				if (path_is_under(g->path, d->v[i].path)) {
					err_at(c, g->src.line, secname, key,
					       "%s lies inside the deny entry %s (line %u)",
					       q(c, g->spelling), q(c, d->v[i].spelling),
					       d->v[i].src.line);
					bad = true;
				}
			for (size_t i = 0; i < n_files && !bad; i++) {
				if (strcmp(g->path, files[i].path) == 0) {
					err_at(c, g->src.line, secname, key,
					       "%s is %s, which is %s",
					       q(c, g->spelling), files[i].what, files[i].how);
					bad = true;
					continue;
				}
				if (kind != BOX_FS_WRITE || !path_is_under(files[i].path, g->path))
					continue;
				_cleanup_free_ char *dir = NULL;
				if (path_dirname(files[i].path, &dir) < 0)
					fatalx("out of memory");
				if (strcmp(dir, g->path) != 0) {
					err_at(c, g->src.line, secname, key,
					       "%s (%s) lies in a subdirectory of this write grant %s; the box could rename that directory and plant a new file for the next run",
					       files[i].path, files[i].what, q(c, g->spelling));
					bad = true;
				}
			}
		}
	}
}

const char **
fs_grant_paths(const struct box_filesystem *fs, size_t *n)
{
	size_t total = 0;
	for (int kind = 0; kind < BOX_FS_KIND_COUNT; kind++)
		if (kind != BOX_FS_DENY)
			total += fs->lists[kind].n;
	const char **v = xmalloc((total ? total : 1) * sizeof(*v));
	*n = 0;
	for (int kind = 0; kind < BOX_FS_KIND_COUNT; kind++)
		for (size_t i = 0; kind != BOX_FS_DENY && i < fs->lists[kind].n; i++)
			v[(*n)++] = fs->lists[kind].v[i].path;
	return v;
}

/*
 * box.ini(5): the agent's deny entries hold in every sandbox. A tool or
 * server may name a denied path exactly (an exception, disclosed); a grant
 * strictly inside one is refused, as a grant inside a credential store is.
 */
void
agent_deny_check(struct ctx *c, const char *secname, const struct box_filesystem *fs)
{
	const struct box_grant_list *d = &c->cfg->agent.proc.fs.lists[BOX_FS_DENY];
	size_t n, which;
	_cleanup_free_ const char **grants = fs_grant_paths(fs, &n);

	for (size_t i = 0; i < d->n; i++) {
		if (path_reach(d->v[i].path, grants, n, &which) != PATH_REACH_INSIDE)
			continue;
		for (int kind = 0; kind < BOX_FS_KIND_COUNT; kind++)
			for (size_t j = 0; kind != BOX_FS_DENY && j < fs->lists[kind].n; j++) {
				const struct box_grant *g = &fs->lists[kind].v[j];
				if (g->path != grants[which])
					continue;
				err_at(c, g->src.line, secname, fs_names[kind],
				       "%s lies inside the agent's deny entry %s (line %u), which holds in every sandbox; name %s itself to make it this section's exception",
				       q(c, g->spelling), q(c, d->v[i].spelling), d->v[i].src.line,
				       q(c, d->v[i].spelling));
			}
	}
}

/*
 * Each [egress.NAME] sandboxes entry names a sandbox of this config that
 * reaches the gateway: the agent, a [tool.NAME] without contain_egress =
 * false, a stdio [mcp.NAME] without it (an http server has no sandbox).
 */
static void
egress_sandboxes_check(struct ctx *c, const struct box_egress *e, const char *secname)
{
	const struct box_config *cfg = c->cfg;
	unsigned line = e->sandboxes_src.line;

	for (size_t i = 0; i < e->n_sandboxes; i++) {
		const char *w = e->sandboxes[i];
		if (strcmp(w, "agent") == 0)
			continue;
		bool tool = strncmp(w, "tool.", 5) == 0;
		const char *name = w + (tool ? 5 : 4);
		const struct box_process *proc = NULL;
		bool http = false;
		if (tool) {
			for (size_t k = 0; k < cfg->n_tools; k++)
				if (strcmp(cfg->tools[k].name, name) == 0)
					proc = &cfg->tools[k].proc;
		} else {
			for (size_t k = 0; k < cfg->n_mcp; k++)
				if (strcmp(cfg->mcp[k].name, name) == 0) {
					proc = &cfg->mcp[k].proc;
					http = cfg->mcp[k].type.value == BOX_MCP_HTTP;
				}
		}
		if (!proc)
			err_at(c, line, secname, "sandboxes", "%s names no section: there is no [%s]",
			       w, w);
		else if (http)
			err_at(c, line, secname, "sandboxes",
			       "%s is a remote (type = http) server: it has no sandbox", w);
		else if (!proc->contain_egress.value)
			err_at(c, line, secname, "sandboxes",
			       "%s has contain_egress = false: it does not reach the gateway", w);
	}
}

void
egress_cross_check(struct ctx *c)
{
	struct box_config *cfg = c->cfg;
	struct dref {
		const struct box_destination *d;
		const char *section;
	} *all = NULL;
	size_t n = 0;

	for (size_t i = 0; i < cfg->n_egress; i++)
		for (size_t j = 0; j < cfg->egress[i].n_dest; j++)
			*GROW(all, n) = (struct dref){ &cfg->egress[i].dest[j], c->egress[i].main->name };
	for (size_t i = 0; i < cfg->n_mcp; i++)
		if (cfg->mcp[i].secret.ref && cfg->mcp[i].url_dest.host)
			*GROW(all, n) = (struct dref){ &cfg->mcp[i].url_dest, c->mcp[i].main->name };
	/* A credentialed destination is always intercepted: never a passthrough too. */
	const struct box_gateway *g = &cfg->gateway;
	for (size_t p = 0; p < g->n_passthrough; p++)
		for (size_t i = 0; i < n; i++) {
			const struct box_destination *pt = &g->passthrough[p], *a = all[i].d;
			struct box_destination host_only = *a;
			host_only.path_prefix = NULL; /* a tunnel carries every path */
			if (!dest_overlap(pt, &host_only))
				continue;
			err_at(c, pt->src.line, "gateway", "passthrough",
			       "%s is covered by %s of [%s] (line %u): a destination with a credential is always intercepted, never a passthrough",
			       q(c, pt->spelling), q(c, a->spelling), all[i].section, a->src.line);
			break;
		}
	for (size_t j = 0; j < n; j++)
		for (size_t i = 0; i < j; i++) {
			const struct box_destination *a = all[i].d, *b = all[j].d;
			if (!dest_overlap(a, b))
				continue;
			bool same = strcmp(all[i].section, all[j].section) == 0;
			const char *key = strncmp(all[j].section, "mcp.", 4) == 0 ? "url" : "destinations";
			if (same && a->wildcard == b->wildcard && strcmp(a->host, b->host) == 0 &&
			    !a->path_prefix == !b->path_prefix &&
			    (!a->path_prefix || strcmp(a->path_prefix, b->path_prefix) == 0))
				err_at(c, b->src.line, all[j].section, key,
				       "%s is a duplicate entry (first at line %u)", q(c, b->spelling),
				       a->src.line);
			else
				err_at(c, b->src.line, all[j].section, key,
				       "%s overlaps %s of [%s] (line %u); one destination has one credential",
				       q(c, b->spelling), q(c, a->spelling), all[i].section, a->src.line);
			break;
		}
	free(all);

	for (size_t j = 0; j < cfg->n_egress; j++)
		egress_sandboxes_check(c, &cfg->egress[j], c->egress[j].main->name);
	for (size_t j = 0; j < cfg->n_egress; j++)
		for (size_t i = 0; i < j; i++) {
			const char *a = cfg->egress[i].variable.value, *b = cfg->egress[j].variable.value;
			if (a && b && strcmp(a, b) == 0) {
				unsigned line = cfg->egress[j].variable.src.line ?
							cfg->egress[j].variable.src.line :
							cfg->egress[j].secret.src.line;
				err_at(c, line, c->egress[j].main->name, "variable",
				       "%s is also the variable of [%s]; each binding needs its own", b,
				       c->egress[i].main->name);
				break;
			}
		}
}

void
mcp_cross_check(struct ctx *c)
{
	struct box_config *cfg = c->cfg;
	for (size_t j = 0; j < cfg->n_mcp; j++)
		for (size_t i = 0; i < j; i++) {
			struct box_mcp *a = &cfg->mcp[i], *b = &cfg->mcp[j];
			if (strcmp(a->ns, b->ns) == 0)
				err_at(c, b->src.line, c->mcp[j].main->name, NULL,
				       "[%s] and [%s] share the policy namespace %s; rename one",
				       c->mcp[i].main->name, c->mcp[j].main->name, a->ns);
			if (a->alias.value && b->alias.value && strcmp(a->alias.value, b->alias.value) == 0)
				err_at(c, b->alias.src.line ? b->alias.src.line : b->src.line,
				       c->mcp[j].main->name, "alias",
				       "[%s] and [%s] both use the alias %s; set alias on one",
				       c->mcp[i].main->name, c->mcp[j].main->name, a->alias.value);
		}
}

void
landlock_check(struct ctx *c, struct box_process *p, const char *secname)
{
	if (p->contain_egress.value || !(c->cfg->box.require.value & BOX_LAYER_LANDLOCK))
		return;
	if (c->landlock_abi >= 6)
		return;
	err_at(c, p->contain_egress.src.line, secname, "contain_egress",
	       "false needs Landlock ABI 6 (this kernel: %d), or [box] require without landlock",
	       c->landlock_abi);
}

void
limits_check(struct ctx *c)
{
	struct box_agent *a = &c->cfg->agent;
	struct box_host_cgroups cg;
	bool boxd_root = geteuid() == 0 || c->cfg->service;

	if (!a->memory_max.set && !a->pids_max.set)
		return;
	if (c->host->cgroups(c->opts.mountinfo, c->opts.cgroup_root_prefix, &cg) < 0)
		memset(&cg, 0, sizeof(cg));
	if (a->memory_max.set && !cg.v2_memory && !(cg.v1_memory && boxd_root))
		err_at(c, a->memory_max.src.line, c->agent->name, "memory_max",
		       "this host offers no mechanism for it: no cgroup v2 memory controller%s",
		       cg.v1_memory ? ", and the v1 memory hierarchy needs a root boxd" :
				      " and no v1 memory hierarchy");
	if (a->pids_max.set && !cg.v2_pids && !(cg.v1_pids && boxd_root) && a->user.uid == 0)
		err_at(c, a->pids_max.src.line, c->agent->name, "pids_max",
		       "this host offers no mechanism for it: no cgroup pids controller a %s boxd can use, and RLIMIT_NPROC does not bind root",
		       boxd_root ? "root" : "user's");
}

