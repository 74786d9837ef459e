/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recheck.c — boxd's side of box-recheck: every path of a box start,
 * re-checked as the box owner, without blocking the event loop.
 *
 * recheck_start() exec's box-recheck (the caller found it: beside boxd's own
 * executable, else BOX_LIBEXECDIR) with fd 3 = our end of a SOCK_SEQPACKET
 * socketpair and an environment of nothing but the BOX_TEST_* hooks that
 * slow a step, queues one RecheckRequest (the [box], [agent] and caller
 * sections of the spec, the owner's ids, the state dir, box's own paths
 * and boxd's sockets: ownpaths.c) and returns. The RecheckReply arrives as
 * an event: its records ("KIND PATH") and problems go into b->rc, its fds
 * (the state dir, lock, policy/, decisions.jsonl, agent.log — opened as the
 * owner) too, and box_recheck_done() takes the start on. A helper that
 * closes its channel without a reply, sends garbage or takes longer than
 * BOXD_RECHECK_TIMEOUT_MS fails the start. BOX_TEST_RECHECK_STALL_MS (with
 * BOX_TEST_RECHECK_STALL_NAME: only the box of that name) is passed on to
 * the helper, which sleeps that long before its first check: it slows the
 * step and changes nothing it checks. A spare helper waits ahead of the next
 * start (spare_take below), so that no start waits for its exec.
 * Its records are parsed by recheck_parse.c (linked alone by the fuzz
 * target and the unit tests).
 * Trusts: the reply only after box_ipc_decode() validated it, and
 * re-validates every record path (recheck_parse.c); the helper runs with the owner's rights
 * only, so whatever it reports the owner could reach itself.
 */
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boxd.h"
#include "cleanup.h"
#include "fdutil.h"
#include "ipc.h"
#include "log.h"
#include "proto_recheck.h"

/* The box's box-recheck (b->recheck): its process, channel, timer, and the state dir asked for. */
struct recheck {
	struct child child;
	struct box_ipc_event *ev;
	struct event *timer;
	char *state_dir;          /* until the reply moves it to rc.state_dir */
};

int
recheck_new(struct box *b)
{
	return (b->recheck = calloc(1, sizeof(*b->recheck))) ? 0 : -ENOMEM;
}

void
recheck_free(struct box *b)
{
	if (!b->recheck)
		return;
	recheck_stop(b);
	free(b->recheck);
	b->recheck = NULL;
}
#include "recheck_parse.h"
#include "spawn.h"
#include "validate.h"


static int
take_reply(struct box *b, const Box__RecheckReply *rep, struct box_ipc_msg *m)
{
	int r = recheck_parse_reply(&b->rc, rep, m, b->detach);

	if (r < 0)
		return r;
	b->rc.state_dir = TAKE_PTR(b->recheck->state_dir);
	return 0;
}

/* ------------------------------------------------------------------ */
/* the helper's events                                                 */

/* Stop listening to the helper (it exits after its reply; killed otherwise). */
void
recheck_stop(struct box *b)
{
	struct recheck *rk = b->recheck;

	if (!rk)
		return;
	rk->ev = box_ipc_event_free(rk->ev);
	if (rk->timer) {
		event_free(rk->timer);
		rk->timer = NULL;
	}
	/* Not reaped yet (child.c's tracker says so), so the pid is still the helper's. */
	child_stop(&rk->child);
	free(rk->state_dir);
	rk->state_dir = NULL;
}

static void
recheck_finish(struct box *b, int r)
{
	recheck_stop(b);
	box_recheck_done(b, r);
}

static void
on_recheck_msg(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata)
{
	struct box *b = userdata;

	recheck_finish(b, take_reply(b, (const Box__RecheckReply *)m->msg, m));
}

static void
on_recheck_close(struct box_ipc_event *e, int error, void *userdata)
{
	struct box *b = userdata;

	/* Closed without a reply: it failed (its own messages say why). */
	recheck_finish(b, error == -ECONNRESET ? -EPROTO : error);
}

static void
on_recheck_timeout(evutil_socket_t fd, short what, void *arg)
{
	recheck_finish(arg, -ETIMEDOUT);
}

/* Reaped (child.c): its reply, or the closed channel, has told (or will tell) how it went. */
static void
on_recheck_reaped(struct child *c, int status)
{
}

/* ------------------------------------------------------------------ */
/* start                                                               */

/*
 * The helper's environment: nothing of ours but the hooks that slow a step
 * (BOX_TEST_RECHECK_STALL_MS only for the box BOX_TEST_RECHECK_STALL_NAME
 * names, when set).
 */
static size_t
recheck_env(const char *box_name, char env[3][96], char *envp[4])
{
	const char *scan = getenv("BOX_TEST_SCAN_DELAY_MS");
	const char *stall = getenv("BOX_TEST_RECHECK_STALL_MS");
	const char *stall_name = getenv("BOX_TEST_RECHECK_STALL_NAME");
	size_t n = 0;

	if (scan && strlen(scan) < 16) {
		snprintf(env[n], sizeof(env[n]), "BOX_TEST_SCAN_DELAY_MS=%s", scan);
		envp[n] = env[n];
		n++;
	}
	if (stall && strlen(stall) < 16 && box_name &&
	    (!stall_name || strcmp(stall_name, box_name) == 0)) {
		snprintf(env[n], sizeof(env[n]), "BOX_TEST_RECHECK_STALL_MS=%s", stall);
		envp[n] = env[n];
		n++;
	}
#if BOXD_ASAN
	/* LeakSanitizer cannot stop the world of a process that is not dumpable. */
	snprintf(env[n], sizeof(env[n]), "ASAN_OPTIONS=detect_leaks=0");
	envp[n] = env[n];
	n++;
#endif
	envp[n] = NULL;
	return n;
}

/* box-recheck spawned for the box named BOX_NAME (NULL: the spare); its pid and our end. */
static int
helper_spawn(const char *exe, const char *box_name, pid_t *pid, int *sock)
{
	_cleanup_close_ int nullfd = -1;
	char env[3][96];
	char *envp[4];
	int sv[2];
	int r;

	nullfd = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (nullfd < 0)
		return -errno;
	recheck_env(box_name, env, envp);
	if ((r = box_ipc_socketpair(sv, false)) < 0)
		return r;
	int errfd = fd_is_open(STDERR_FILENO) ? STDERR_FILENO : nullfd;
	int fds[4] = { nullfd, nullfd, errfd, sv[1] };
	char *argv[] = { (char *)"box-recheck", NULL };
	struct spawn_req req = { .path = exe, .argv = argv, .envp = envp, .fds = fds, .n_fds = 4 };
	r = spawn_process(&req, pid);
	close(sv[1]);
	if (r < 0) {
		close(sv[0]);
		return r;
	}
	*sock = sv[0];
	return 0;
}

/*
 * The spare: one box-recheck spawned ahead — at boxd's start, and in a
 * service boxd again shortly after a box took it — waiting on its channel,
 * so that a start does not wait for the helper's exec. It knows nothing of
 * any box until the RecheckRequest: spawned as boxd, with the environment a
 * fresh one gets, it switches to the owner the request names, as a fresh one
 * does. None while BOX_TEST_RECHECK_STALL_MS is set (that hook names a box).
 * One boxd per process: the spare is this file's.
 */
#define RECHECK_SPARE_AFTER_MS 50 /* after a box took it: that start's CPU is not shared */
static struct {
	struct child child;
	int sock;
	struct spare_timer later;
} spare = { .sock = -1 };

static void
on_spare_reaped(struct child *c, int status)
{
	spare.sock = safe_close(spare.sock); /* the next start spawns its own */
}

static void
spare_spawn(struct boxd *d)
{
	_cleanup_free_ char *exe = NULL;
	pid_t pid = 0;

	if (spare.sock >= 0 || d->quitting || getenv("BOX_TEST_RECHECK_STALL_MS") ||
	    spawn_find_helper(d, "box-recheck", &exe) < 0 ||
	    helper_spawn(exe, NULL, &pid, &spare.sock) < 0)
		return; /* no spare: each start spawns its helper, as without one */
	child_init(&spare.child, CHILD_RECHECK, NULL, on_spare_reaped, NULL);
	child_track(d, &spare.child, pid);
}

void
recheck_spare_start(struct boxd *d)
{
	spare_spawn(d);
}

void
recheck_spare_stop(void)
{
	spare_timer_stop(&spare.later);
	child_stop(&spare.child);
	spare.sock = safe_close(spare.sock);
}

/* The spare for box B, when one waits and is alive: B's helper from now on. */
static bool
spare_take(struct box *b, int *sock)
{
	if (spare.sock < 0)
		return false;
	struct pollfd p = { .fd = spare.sock, .events = POLLIN };
	if (!child_running(&spare.child) || poll(&p, 1, 0) != 0) {
		/* It went (or said something unasked): not one to trust with a box. */
		recheck_spare_stop();
		return false;
	}
	pid_t pid = spare.child.pid;
	child_forget(&spare.child); /* not reaped: the pid stays its own, now B's */
	child_init(&b->recheck->child, CHILD_RECHECK, b, on_recheck_reaped, b);
	child_track(b->d, &b->recheck->child, pid);
	*sock = spare.sock;
	spare.sock = -1;
	return true;
}

/* A service boxd's next spare, once this start's CPU is not shared (embedded: one box only). */
static void
spare_later(struct boxd *d)
{
	spare_timer_arm(&spare.later, d, spare_spawn, RECHECK_SPARE_AFTER_MS);
}

static int
recheck_spawn(struct box *b, const char *exe, int *sock)
{
	pid_t pid = 0;
	bool took = spare_take(b, sock);

	spare_later(b->d); /* taken, or none was there (it died): the next one */
	if (took)
		return 0;
	int r = helper_spawn(exe, b->name, &pid, sock);
	if (r < 0)
		return r;
	child_init(&b->recheck->child, CHILD_RECHECK, b, on_recheck_reaped, b);
	child_track(b->d, &b->recheck->child, pid);
	return 0;
}

/* The RecheckRequest: the spec sections the checks read, the owner, box's own paths. */
static int
recheck_send(struct box *b, const char *state_dir)
{
	struct own_paths own;
	char *cands[ELEMENTSOF(own.own) + ELEMENTSOF(own.stores) + BOX_FILE_SECRETS_MAX];
	char *socks[ELEMENTSOF(own.sockets)];
	uint32_t groups[BOXD_GROUPS_MAX];
	size_t nc = 0, ns = 0;
	int r = own_paths_build(b, state_dir, &own);

	if (r < 0)
		return r;
	for (size_t i = 0; i < own.n_own; i++)
		cands[nc++] = own.own[i].path;
	for (size_t i = 0; i < own.n_stores; i++)
		cands[nc++] = own.stores[i].path;
	/* file:// secrets: masked in every view whose grants hold them (docs/box.ini.5.md). */
	const Box__BoxSpec *s = b->spec;
	size_t n_secrets = 0;
	for (size_t i = 0; i < s->n_egress + s->n_mcp; i++) {
		const Box__CfgSecret *sec = i < s->n_egress ? s->egress[i]->secret :
							      s->mcp[i - s->n_egress]->secret;
		if (!sec || strncmp(sec->ref, "file://", 7) != 0)
			continue;
		if (++n_secrets > BOX_FILE_SECRETS_MAX) {
			own_paths_clear(&own);
			return -E2BIG;
		}
		cands[nc++] = sec->ref + 7;
	}
	for (size_t i = 0; i < own.n_sockets; i++)
		socks[ns++] = own.sockets[i].path;
	for (size_t i = 0; i < b->owner.n_groups; i++)
		groups[i] = b->owner.groups[i];

	Box__RecheckOwner o = BOX__RECHECK_OWNER__INIT;
	o.uid = b->owner.uid;
	o.gid = b->owner.gid;
	o.groups = groups;
	o.n_groups = b->owner.n_groups;
	o.name = b->owner.name;
	Box__RecheckRequest q = BOX__RECHECK_REQUEST__INIT;
	q.box = b->spec->box;
	q.agent = b->spec->agent;
	q.caller = b->spec->caller;
	q.owner = &o;
	q.state_dir = (char *)state_dir;
	q.detach = b->detach;
	q.mask_candidates = cands;
	q.n_mask_candidates = nc;
	q.boxd_sockets = socks;
	q.n_boxd_sockets = ns;
	q.tools = b->spec->tools;
	q.n_tools = b->spec->n_tools;
	/* The stdio [mcp] servers (an http one has no program nor grants here). */
	Box__CfgMcp *stdio_mcp[BOX_SECTIONS_MAX];
	for (size_t i = 0; i < b->spec->n_mcp && q.n_mcp < BOX_SECTIONS_MAX; i++)
		if (b->spec->mcp[i]->type == BOX__MCP_TYPE__MCP_TYPE_STDIO)
			stdio_mcp[q.n_mcp++] = b->spec->mcp[i];
	q.mcp = stdio_mcp;
	/* The telemetry files, opened as the owner; their fds follow the state files. */
	Box__CfgTelemetry *tel_files[BOX_TELEMETRY_FILES_MAX];
	for (size_t i = 0; i < b->spec->n_telemetry; i++)
		if (b->spec->telemetry[i]->kind == BOX__TELEMETRY_KIND__TELEMETRY_KIND_FILE &&
		    q.n_telemetry < BOX_TELEMETRY_FILES_MAX)
			tel_files[q.n_telemetry++] = b->spec->telemetry[i];
	q.telemetry = tel_files;
	b->rc.telemetry_want = (unsigned)q.n_telemetry;
	r = box_ipc_event_send(b->recheck->ev, BOX__MSG_TYPE__MSG_RECHECK_REQUEST, 1, &q.base, NULL,
			       0);
	own_paths_clear(&own);
	return r;
}

int
recheck_start(struct box *b, const char *exe, const char *state_dir)
{
	static const uint32_t allowed = BOX__MSG_TYPE__MSG_RECHECK_REPLY;
	struct timeval tv = { BOXD_RECHECK_TIMEOUT_MS / 1000, 0 };
	int sock = -1;
	int r;

	struct recheck *rk = b->recheck;

	if (!(rk->state_dir = strdup(state_dir)))
		return -ENOMEM;
	if ((r = recheck_spawn(b, exe, &sock)) < 0)
		return r;
	rk->ev = box_ipc_event_new(b->d->base, sock, &box_proto_recheck, BOX_RECHECK_ROLE_RECHECK,
				   on_recheck_msg, on_recheck_close, b);
	if (!rk->ev) {
		close(sock);
		return -ENOMEM;
	}
	(void)box_ipc_chan_allow(box_ipc_event_chan(rk->ev), &allowed, 1);
	rk->timer = evtimer_new(b->d->base, on_recheck_timeout, b);
	if (!rk->timer || evtimer_add(rk->timer, &tv) < 0)
		return -ENOMEM;
	return recheck_send(b, state_dir);
}
