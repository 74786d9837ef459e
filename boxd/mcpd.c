/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mcpd.c — boxd's side of box-mcpd, the per-box MCP broker (docs/design.md;
 * proto/mcp.proto's control channel; docs/box-mcpd.8.md), and the MCP server
 * sandboxes it asks for.
 *
 * Only a box with at least one stdio [mcp.NAME] has one. It starts after
 * box-shell is ready and before the agent, through the generic lifecycle of
 * daemon.c: box-mcpd started from its entry in daemon_table (program,
 * log, no arguments, an environment of nothing but ASAN_OPTIONS in a
 * sanitizer build) already running as the ids box-policyd gets — the daemon
 * user of a service boxd (box-daemon, else nobody), boxd's own when
 * embedded; switched in the child before execve and read back
 * (common/privdrop.c), then locked by box-mcpd itself (no capabilities,
 * no_new_privs) — with its fds at common/daemon_fds.h's numbers:
 *   fd 3  our end of the control socketpair (mcpctl, we are boxd)
 *   fd 4  DAEMON_FD_POLICYD: the other end of box-policyd's POLICYD_FD_MCPD
 *   fd 5  DAEMON_FD_LISTEN: RUNTIME/mcp.sock, bound and listening (runtime.c,
 *         through the runtime dir's fd); the agent reaches it at /run/box/mcp.sock
 * Then McpInit from boxd's own config: every stdio server sorted by name
 * with its namespace, alias, canonical program (box-recheck resolved it as
 * the owner), configured argv, cwd (the agent's workspace when the server's
 * grants hold it, else the owner's home), max_frame, call_timeout and
 * allow_tool_changes; and one fd, STATE/mcp/pins.jsonl (below). McpReady
 * ok = false refuses the box with box-mcpd's message; its exit or
 * BOXD_MCPD_READY_TIMEOUT_MS without an answer fail the start. While the box
 * runs, losing box-mcpd stops the box: "box-mcpd exited (…): the box was
 * stopped" in RunExit.
 *
 * The pins file: STATE/mcp/ (0700) and STATE/mcp/pins.jsonl (0600), both
 * box-mcpd's uid's (as STATE/policy/ is box-policyd's), made through the
 * state dir's fd that box-recheck opened as the owner: mkdirat, then openat
 * with O_NOFOLLOW (O_DIRECTORY for the dir; O_RDWR|O_APPEND|O_CREAT for the
 * file), fstat: a directory / a regular file with one link, owned by the
 * owner, box-mcpd's uid or boxd (just made), then given to box-mcpd's uid
 * with fchown on the fd. No name the owner can change is followed: a symlink
 * at either name is refused (ELOOP), and the fd is what box-mcpd gets.
 * (An embedded boxd's box-mcpd is the owner: `boxctl mcp` reads the file of
 * a stopped box as the owner; a service box's needs root or the box running.)
 *
 * McpServerStart (+3 fds: the server's stdin, stdout, stderr; the sandbox's
 * life from spawn to reap is workload.c's, shared with box-shell's tools) is
 * re-checked
 * against boxd's own config: the name must be a stdio [mcp.NAME] of this box
 * — box-mcpd names a server, boxd decides program, arguments, grants and
 * sandbox (plan_mcp_server: SANDBOX_TOOL, the section's grants, env and
 * network; no /run/box/bin, no aliases, no shell.sock or mcp.sock; CA and a
 * gateway listener tagged "mcp.NAME" only when contained); at most
 * BOXD_MCP_SERVERS_MAX live per box. McpServerStarted ok once its
 * trampoline's fd 4 ends (the program exec'd), ok = false with the
 * trampoline's SetupError or boxd's refusal; McpServerExit with the outer
 * trampoline's status when reaped; McpServerStop SIGKILLs the outer
 * trampoline (its PID 1 follows, and with it the server's PID namespace).
 * When the box ends every server is SIGKILLed and box-mcpd's channel closed
 * (it exits) before policyd's, so that its last Records reach policyd.
 * Trusts: nothing box-mcpd sends beyond box_ipc_decode()'s validation and the
 * re-check here; the trampolines' status messages after box_status_decode().
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>

#include "boxd.h"
#include "cleanup.h"
#include "fdutil.h"
#include "ipc.h"
#include "log.h"
#include "path.h"
#include "proto_mcp.h"
#include "spawn.h"
#include "validate.h"

#define MCP_DIR "mcp"
#define PINS_FILE "pins.jsonl"

/* One MCP server sandbox box-mcpd asked for (McpServerStart), until its trampoline is reaped. */
struct mcp_server_run {
	struct workload w;        /* id: box-mcpd's start id; gateway_tag "mcp.NAME" */
	struct mcp_server_run *next;
};

/* The box's box-mcpd (b->mcpd) and the MCP server sandboxes it asked for. */
struct mcpd {
	struct box_daemon dm;     /* its lifecycle (daemon.c) */
	struct mcp_server_run *servers;
	unsigned n_servers;
};

int
mcpd_new(struct box *b)
{
	return (b->mcpd = calloc(1, sizeof(*b->mcpd))) ? 0 : -ENOMEM;
}

/* ---- the server sandboxes ------------------------------------------ */

static void
server_free(struct mcp_server_run *t)
{
	if (!t)
		return;
	workload_release(&t->w);
	free(t);
}

static void
server_unlink(struct box *b, struct mcp_server_run *t)
{
	for (struct mcp_server_run **pp = &b->mcpd->servers; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			b->mcpd->n_servers--;
			return;
		}
}

static struct mcp_server_run *
server_find(struct box *b, uint64_t id)
{
	for (struct mcp_server_run *t = b->mcpd->servers; t; t = t->next)
		if (t->w.id == id)
			return t;
	return NULL;
}

static void
send_started(struct box *b, uint64_t id, bool ok, const char *error)
{
	Box__McpServerStarted m = BOX__MCP_SERVER_STARTED__INIT;
	char msg[BOX_MCP_MESSAGE_MAX];

	m.start_id = id;
	m.ok = ok;
	if (!ok) {
		/* One line, within the protocol's cap. */
		snprintf(msg, sizeof(msg), "%s", error && *error ? error : "cannot start the server");
		for (char *c = msg; *c; c++)
			if ((unsigned char)*c < 0x20)
				*c = ' ';
		m.error = msg;
	}
	int r = daemon_send(&b->mcpd->dm, BOX__MSG_TYPE__MSG_MCP_SERVER_STARTED, &m.base, NULL, 0);
	if (r < 0 && r != -ENOTCONN)
		log_warn_errno(r, "box %s (%s): cannot send McpServerStarted to box-mcpd", b->name,
			       b->id);
}

/* The server's start: McpServerStarted (the alias prints a refusal and exits 126). */
static void
on_server_started(struct workload *w, bool ok, const char *error)
{
	send_started(w->b, w->id, ok, error);
}

/* The server ended after it started: McpServerExit with its status. */
static void
on_server_exited(struct workload *w, int status)
{
	struct box *b = w->b;
	Box__McpServerExit x = BOX__MCP_SERVER_EXIT__INIT;
	x.start_id = w->id;
	x.status = status;
	int r = daemon_send(&b->mcpd->dm, BOX__MSG_TYPE__MSG_MCP_SERVER_EXIT, &x.base, NULL, 0);
	if (r < 0 && r != -ENOTCONN)
		log_warn_errno(r, "box %s (%s): cannot send McpServerExit", b->name, b->id);
}

static void server_gone(struct workload *w);

static const struct workload_ops server_ops = {
	.what = "server",
	.kind = CHILD_MCP_SERVER,
	.started = on_server_started,
	.exited = on_server_exited,
	.gone = server_gone,
};

static void
start_refuse(struct box *b, uint64_t id, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void
start_refuse(struct box *b, uint64_t id, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_notice("box %s (%s): MCP server start %llu refused: %s", b->name, b->id,
		   (unsigned long long)id, msg);
	send_started(b, id, false, msg);
}

/* The stdio [mcp.NAME] of boxd's own config named NAME, or -1. */
static int
server_index(const struct box *b, const char *name)
{
	for (size_t i = 0; i < b->spec->n_mcp; i++)
		if (b->spec->mcp[i]->type == BOX__MCP_TYPE__MCP_TYPE_STDIO &&
		    strcmp(b->spec->mcp[i]->name, name) == 0)
			return (int)i;
	return -1;
}

static void
server_start(struct box *b, const Box__McpServerStart *rq, const int fds[3])
{
	_cleanup_free_ char *err = NULL;
	Box__Plan *plan = NULL;

	if (b->state != BOX_RUNNING && b->state != BOX_STARTING && b->state != BOX_DAEMONS)
		return start_refuse(b, rq->start_id, "the box is stopping");
	if (server_find(b, rq->start_id))
		return start_refuse(b, rq->start_id, "start id %llu is in use",
				    (unsigned long long)rq->start_id);
	if (b->mcpd->n_servers >= BOXD_MCP_SERVERS_MAX)
		return start_refuse(b, rq->start_id,
				    "too many MCP servers running in this box (at most %u)",
				    BOXD_MCP_SERVERS_MAX);
	int idx = server_index(b, rq->server);
	if (idx < 0)
		return start_refuse(b, rq->start_id,
				    "boxd refuses the start: this box has no stdio [mcp.%s]",
				    rq->server);
	if (plan_mcp_server(b->d, b, (size_t)idx, &plan, &err) < 0)
		return start_refuse(b, rq->start_id, "%s", err ? err : "cannot plan the server");

	struct mcp_server_run *t = calloc(1, sizeof(*t));
	if (!t) {
		plan_free(plan);
		return start_refuse(b, rq->start_id, "out of memory");
	}
	char *tag = NULL;
	if (asprintf(&tag, "mcp.%s", b->spec->mcp[idx]->name) < 0)
		tag = NULL;
	workload_init(&t->w, &server_ops, b, rq->start_id, tag);
	int r = workload_start(&t->w, plan, fds);
	plan_free(plan);
	if (r < 0) {
		server_free(t);
		return start_refuse(b, rq->start_id, "cannot start box-trampoline: %s",
				    strerror(-r));
	}
	t->next = b->mcpd->servers;
	b->mcpd->servers = t;
	b->mcpd->n_servers++;
	log_debug("box %s (%s): MCP server %s (start %llu) pid %d", b->name, b->id, rq->server,
		  (unsigned long long)t->w.id, (int)t->w.child.pid);
}

static void
server_stop(struct box *b, const Box__McpServerStop *m)
{
	struct mcp_server_run *t = server_find(b, m->start_id);

	/* The outer trampoline dies; PID 1 sees its pipe close and takes the namespace down. */
	if (t)
		workload_kill(&t->w, SIGKILL);
}

/* A server's trampoline was reaped (McpServerExit or the late refusal sent): it goes. */
static void
server_gone(struct workload *w)
{
	struct mcp_server_run *t = WORKLOAD_OF(w, struct mcp_server_run);

	server_unlink(w->b, t);
	server_free(t);
}

static void
servers_kill_all(struct box *b)
{
	while (b->mcpd->servers) {
		struct mcp_server_run *t = b->mcpd->servers;
		workload_stop(&t->w);
		server_unlink(b, t);
		server_free(t);
	}
}

/* ---- the control channel -------------------------------------------- */

static void
on_mcpd_msg(struct box_daemon *dm, struct box_ipc_msg *m)
{
	struct box *b = dm->b;

	switch (m->type) {
	case BOX__MSG_TYPE__MSG_MCP_READY: {
		const Box__McpReady *rep = (const Box__McpReady *)m->msg;
		if (rep->ok)
			daemon_ready(dm, 0, NULL);
		else
			daemon_ready(dm, -EPERM, "box-mcpd cannot serve the box: %s",
				     rep->error && *rep->error ? rep->error : "(no reason given)");
		break;
	}
	case BOX__MSG_TYPE__MSG_MCP_SERVER_START:
		/* Exactly 3 fds (the table's check); ours until the trampoline has them. */
		server_start(b, (const Box__McpServerStart *)m->msg, m->fds);
		break;
	case BOX__MSG_TYPE__MSG_MCP_SERVER_STOP:
		server_stop(b, (const Box__McpServerStop *)m->msg);
		break;
	default:
		break;
	}
}

static void
on_mcpd_closing(struct box_daemon *dm)
{
	servers_kill_all(dm->b);
}

static const struct box_daemon_ops mcpd_ops = {
	.id = DAEMON_MCPD,
	.on_msg = on_mcpd_msg,
	.ready = box_mcpd_ready,
	.finished = box_mcpd_finished,
	.closing = on_mcpd_closing,
};

/* ---- start ------------------------------------------------------------ */

/*
 * STATE/mcp/pins.jsonl (see the top): the fd box-mcpd gets. Root works in
 * the owner's state dir by *at() names with O_NOFOLLOW only, and takes over
 * nothing that is not the owner's, box-mcpd's or its own (just made): a
 * directory or file of anyone else (say root's, renamed into the state dir
 * by the owner) is refused, so the owner cannot make boxd hand a foreign
 * file to the daemon user. A file with more than one link is refused too
 * (a hard link the owner made to a file elsewhere).
 */
static int
pins_open(struct box *b, uid_t uid, gid_t gid, int *ret, char **err)
{
	int sfd = b->rc.state_dirfd;
	struct stat st;
	uid_t me = geteuid();

	if (sfd < 0) {
		seterr(err, "the state dir is not open");
		return -EBADF;
	}
	if (mkdirat(sfd, MCP_DIR, 0700) < 0 && errno != EEXIST) {
		int r = -errno;
		seterr(err, "cannot create %s/%s: %s", b->rc.state_dir, MCP_DIR, strerror(-r));
		return r;
	}
	_cleanup_close_ int dfd = openat(sfd, MCP_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						       O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st) < 0) {
		int r = -errno;
		seterr(err, "cannot open %s/%s: %s%s", b->rc.state_dir, MCP_DIR, strerror(-r),
		       r == -ELOOP || r == -ENOTDIR ? " (not a directory: a symlink or file is "
						     "refused)" : "");
		return r;
	}
	if (st.st_uid != b->owner.uid && st.st_uid != uid && st.st_uid != me &&
	    !daemon_uid_earlier(b->d, DAEMON_MCPD, st.st_uid)) {
		seterr(err, "%s/%s is owned by uid %u, neither the box owner nor box-mcpd",
		       b->rc.state_dir, MCP_DIR, (unsigned)st.st_uid);
		return -EPERM;
	}
	if (((st.st_uid != uid || st.st_gid != gid) && fchown(dfd, uid, gid) < 0) ||
	    fchmod(dfd, 0700) < 0) {
		int r = -errno;
		seterr(err, "cannot give %s/%s to box-mcpd (uid %u): %s", b->rc.state_dir, MCP_DIR,
		       (unsigned)uid, strerror(-r));
		return r;
	}
	_cleanup_close_ int fd = openat(dfd, PINS_FILE, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW |
							  O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
					0600);
	if (fd < 0) {
		int r = -errno;
		seterr(err, "cannot open %s/%s/%s: %s%s", b->rc.state_dir, MCP_DIR, PINS_FILE,
		       strerror(-r), r == -ELOOP ? " (a symlink is refused)" : "");
		return r;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		seterr(err, "%s/%s/%s is not a regular file with one link", b->rc.state_dir,
		       MCP_DIR, PINS_FILE);
		return -EINVAL;
	}
	if (st.st_uid != b->owner.uid && st.st_uid != uid && st.st_uid != me &&
	    !daemon_uid_earlier(b->d, DAEMON_MCPD, st.st_uid)) {
		seterr(err, "%s/%s/%s is owned by uid %u, neither the box owner nor box-mcpd",
		       b->rc.state_dir, MCP_DIR, PINS_FILE, (unsigned)st.st_uid);
		return -EPERM;
	}
	if (((st.st_uid != uid || st.st_gid != gid) && fchown(fd, uid, gid) < 0) ||
	    fchmod(fd, 0600) < 0 || fd_set_nonblock(fd, false) < 0) {
		int r = -errno;
		seterr(err, "cannot give %s/%s/%s to box-mcpd (uid %u): %s", b->rc.state_dir,
		       MCP_DIR, PINS_FILE, (unsigned)uid, strerror(-r));
		return r;
	}
	*ret = TAKE_FD(fd);
	return 0;
}

static int
cmp_server(const void *a, const void *b)
{
	const Box__McpServer *x = *(Box__McpServer *const *)a, *y = *(Box__McpServer *const *)b;
	return strcmp(x->name, y->name);
}

static int
send_init(struct box *b, int pins_fd, char **err)
{
	const Box__BoxSpec *s = b->spec;
	Box__McpInit in = BOX__MCP_INIT__INIT;
	Box__McpServer *srv = calloc(s->n_mcp ? s->n_mcp : 1, sizeof(*srv));
	Box__McpServer **list = calloc(s->n_mcp ? s->n_mcp : 1, sizeof(*list));
	char (*ns)[BOX_NAME_MAX + 1] = calloc(s->n_mcp ? s->n_mcp : 1, sizeof(*ns));
	int r = -ENOMEM;

	if (!srv || !list || !ns) {
		seterr(err, "out of memory");
		goto out;
	}
	in.box_name = b->name;
	in.box_id = b->id;
	in.home = b->owner.home;
	for (size_t i = 0; i < s->n_mcp; i++) {
		const Box__CfgMcp *m = s->mcp[i];
		if (m->type != BOX__MCP_TYPE__MCP_TYPE_STDIO)
			continue;
		Box__McpServer *v = &srv[in.n_servers];
		box__mcp_server__init(v);
		const char *prog = mcpd_program(b, i);
		if (!prog || !box_mcp_namespace(m->name, ns[in.n_servers], sizeof(ns[0]))) {
			seterr(err, "box-recheck did not resolve [mcp.%s]'s program", m->name);
			r = -EPROTO;
			goto out;
		}
		v->name = m->name;
		v->ns = ns[in.n_servers];
		v->alias = m->alias ? m->alias->value : (char *)path_basename(m->command->argv[0]);
		v->program_path = (char *)prog;
		v->argv = m->command->argv;
		v->n_argv = m->command->n_argv;
		v->cwd = (char *)plan_mcp_cwd(b, i);
		v->max_frame = m->max_frame ? m->max_frame->value : BOX_MCP_FRAME_DEFAULT;
		v->call_timeout_ms = m->call_timeout_ms ? m->call_timeout_ms->value :
							  BOX_MCP_CALL_TIMEOUT_DEFAULT_MS;
		v->allow_tool_changes = m->allow_tool_changes && m->allow_tool_changes->value;
		list[in.n_servers++] = v;
	}
	qsort(list, in.n_servers, sizeof(*list), cmp_server);
	in.servers = list;
	r = box_validate_mcp_init(&in);
	if (r < 0) {
		seterr(err, "boxd's own McpInit does not validate (%s)", strerror(-r));
		goto out;
	}
	daemon_init_delay();
	r = daemon_send(&b->mcpd->dm, BOX__MSG_TYPE__MSG_MCP_INIT, &in.base, &pins_fd, 1);
	if (r < 0)
		seterr(err, "cannot send McpInit to box-mcpd: %s", strerror(-r));
out:
	free(srv);
	free(list);
	free(ns);
	return r;
}

int
mcpd_start(struct boxd *d, struct box *b, char **err)
{
	_cleanup_close_ int pins_fd = -1;
	struct daemon_spawn_args args = { .fds = { -1, -1, -1, -1, -1, -1, -1 } };
	uid_t uid;
	gid_t gid;
	pid_t pid = 0;
	int ctl = -1;
	_cleanup_close_ int policyd_fd = policyd_take_peer(b, DAEMON_MCPD);
	int r;

	*err = NULL;
	daemon_init(&b->mcpd->dm, &mcpd_ops, b);
	if ((r = daemon_ids(d, DAEMON_MCPD, &uid, &gid)) < 0) {
		seterr(err, "no user to run box-mcpd as (box-mcp, box-daemon or nobody)");
		return r;
	}
	if ((r = pins_open(b, uid, gid, &pins_fd, err)) < 0)
		return r;
	args.fds[DAEMON_FD_POLICYD] = policyd_fd;
	args.fds[DAEMON_FD_LISTEN] = b->mcp_listen_fd;
	r = daemon_spawn(d, b, DAEMON_MCPD, &args, &pid, &ctl, NULL, err);
	/* policyd's channel and the listener are box-mcpd's now (or nobody's). */
	policyd_fd = safe_close(policyd_fd);
	b->mcp_listen_fd = safe_close(b->mcp_listen_fd);
	if (r < 0)
		return r;
	if ((r = daemon_watch(&b->mcpd->dm, pid, ctl, err)) < 0)
		return r;
	return send_init(b, pins_fd, err);
}

bool
mcpd_finish(struct box *b)
{
	if (!b->mcpd)
		return false;
	servers_kill_all(b);
	safe_close(policyd_take_peer(b, DAEMON_MCPD));
	b->mcp_listen_fd = safe_close(b->mcp_listen_fd);
	return b->mcpd->dm.ops && daemon_finish(&b->mcpd->dm);
}

void
mcpd_free(struct box *b)
{
	if (b->mcpd) {
		servers_kill_all(b);
		daemon_stop(&b->mcpd->dm);
		free(b->mcpd);
		b->mcpd = NULL;
	}
	safe_close(policyd_take_peer(b, DAEMON_MCPD));
	b->mcp_listen_fd = safe_close(b->mcp_listen_fd);
	for (size_t i = 0; b->mcp_plans && i < b->spec->n_mcp; i++)
		plan_free(b->mcp_plans[i]);
	free(b->mcp_plans);
	b->mcp_plans = NULL;
}
