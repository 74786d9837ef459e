/* SPDX-License-Identifier: Apache-2.0 */
/*
 * box.c — one box's life: checking → daemons → starting → running →
 * stopping → finishing → gone. Every step that waits for another process
 * is an event of boxd's loop, so boxd answers its other clients meanwhile:
 *
 *   RunRequest   owner resolved (the caller, or [agent] user for root),
 *                id and state dir chosen, box-recheck spawned
 *                (recheck.c)                                     → checking
 *   RecheckReply refusals are REPLY_REFUSED (exit 2); run lock taken (a
 *                second run: REPLY_BUSY), stdio checked, runtime dir and
 *                masks made, limits set up, box-policyd spawned and sent
 *                PolicyInit (policyd.c); at once box-gateway spawned (fd 4:
 *                policyd's fd 4's other end) and sent GatewayInit
 *                (gateway.c), the agent's plan built (proxy, CA and
 *                placeholder variables, /run/box/bin, shell.sock, the alias
 *                over the shells), box-shell spawned through the trampoline
 *                with a plan of the agent's view and sent ShellInit
 *                (shell.c), box-mcpd (a stdio [mcp], mcpd.c), and the
 *                agent's trampoline with plan.start_gate: it builds the
 *                sandbox and waits on fd 3                        → daemons
 *                Every socket a daemon serves was bound before its spawn:
 *                what a peer sends waits there, never for readiness.
 *   *Ready       each daemon's ready message, in any order; GatewayReady
 *                writes the CA to RUNTIME/ca.pem and STATE/ca.pem. Once
 *                every daemon that gates_agent (daemon.c: box-policyd,
 *                box-gateway, box-mcpd) is ready: the agent's listener to the gateway,
 *                the disclosure to boxctl (RunStarting; in RunReply for
 *                --detach), "go" at the gate                     → starting
 *                A daemon that gates nothing may be ready after the agent
 *                started; its failure then stops the box (daemon.c, as a
 *                loss); --timings holds RunReply until every one is ready.
 *   listener     the trampoline's listener fd (fd 4) goes to the gateway
 *                (GatewayListener "agent"; gateway.c holds it until the
 *                gateway serves);
 *                GatewayListenerClosed when the agent's sandbox ends
 *   fd 4 EOF     the agent exec'd: RunReply OK (with the box's pty
 *                master when boxctl is at a terminal: boxctl relays it,
 *                boxd keeps no copy)                             → running
 *   fd 4 error   "sandbox setup failed at STEP: REASON": RunReply FAILED
 *   stop/timeout SIGTERM to the trampoline (forwarded to PID 1 and the
 *                agent), SIGKILL after 2 s                       → stopping
 *                (before the trampoline: the start ends, RunReply FAILED)
 *   client gone  (not detached) SIGKILL: PID 1 dies, the kernel kills the
 *                whole PID namespace — nothing outlives the box (before the
 *                trampoline: the start ends)
 *   a daemon     SIGKILL (fail closed); RunExit carries the error, boxctl
 *   gone, or one exits 1 (before the agent started: the held trampoline is
 *   failing to    killed, RunReply FAILED with the error)
 *   start late
 *   reaped       box_teardown(): box-recheck stopped, fd 4 closed, every
 *                tool sandbox SIGKILLed, box-shell's and box-gateway's
 *                channels closed (each exits; its exit reaped, or SIGKILL
 *                after 3 s), then box-policyd's (it flushes its
 *                decision lines, syncs the history, exits)      → finishing
 *   (a start that fails, from any state before running, also goes there)
 *   policyd      its exit reaped, or SIGKILL after 3 s (then not waited
 *   exit         for): the box's cgroups removed, a busy one retried every
 *                10 ms for up to 1 s (its members SIGKILLed)
 *   cgroups gone runtime dir removed, run lock released, then RunExit
 *                (status, 128+N, timed_out) — or the failed start's
 *                RunReply — and box_end()                        → gone
 * Every way out of every state goes through box_teardown() (box-recheck,
 * box-policyd, cgroups, runtime dir, run lock: each undone only if done)
 * and box_end() (free, and the box_gone hook). A finishing box is
 * "stopping" in ps; stop, signals and a client that goes away change
 * nothing of its end (the last only means nobody is told).
 * stdio: boxd never holds a fd of the caller's own. It gets, for each of
 * boxctl's fds 0-2 that is not a terminal, the box-side end of a pipe that
 * boxctl relays (checked here to be an anonymous pipe open the right way),
 * and /dev/null stands in for a terminal's fd until the workload puts the
 * pty slave there (docs/sandbox.md).
 * Trusts: the RunRequest only after box_ipc_decode() validated it; status
 * messages from the trampoline only after box_status_decode(); every path
 * only through box-recheck, running as the owner.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boxd.h"
#include "spec_check.h"
#include "cleanup.h"
#include "fdutil.h"
#include "ipc.h"
#include "log.h"
#include "parse.h"
#include "path.h"
#include "plan_validate.h"
#include "testhook.h"
#include "validate.h"

uint64_t
box_uptime_s(const struct box *b)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > b->started.tv_sec ? (uint64_t)(now.tv_sec - b->started.tv_sec) : 0;
}

/* ------------------------------------------------------------------ */
/* replies                                                             */

void
box_mark(struct box *b, const char *step)
{
	struct timespec now;
	if (b->n_timeline >= BOX_TIMELINE_MAX || clock_gettime(CLOCK_MONOTONIC, &now) < 0)
		return;
	b->timeline[b->n_timeline].step = step;
	b->timeline[b->n_timeline].usec = (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
	b->n_timeline++;
}

static void box_reply_started(struct box *b);
static void start_daemons(struct box *b);

static void
reply_run(struct box *b, Box__ReplyStatus status, const char *error, char **disclosure,
	  size_t n_disclosure)
{
	Box__RunReply r = BOX__RUN_REPLY__INIT;
	Box__StartStep steps[BOX_TIMELINE_MAX], *timeline[BOX_TIMELINE_MAX];
	r.status = status;
	if (b->id[0]) {
		r.box_id = b->id;
	}
	if (status == BOX__REPLY_STATUS__REPLY_OK && b->dry_run) {
		r.has_dry_run = r.dry_run = 1;
		r.state_dir = b->rc.state_dir;
	} else if (status == BOX__REPLY_STATUS__REPLY_OK) {
		r.has_pid = 1;
		r.pid = b->agent.pid;
		r.state_dir = b->rc.state_dir;
	}
	r.problems = b->rc.problems;
	r.n_problems = b->rc.n_problems;
	r.disclosure = disclosure;
	r.n_disclosure = n_disclosure;
	r.error = (char *)error;
	if (status == BOX__REPLY_STATUS__REPLY_OK && b->pty_master >= 0)
		r.has_pty = r.pty = 1;
	if (status == BOX__REPLY_STATUS__REPLY_OK && b->timings) {
		for (size_t i = 0; i < b->n_timeline; i++) {
			box__start_step__init(&steps[i]);
			steps[i].step = (char *)b->timeline[i].step;
			steps[i].usec = b->timeline[i].usec;
			timeline[i] = &steps[i];
		}
		r.timeline = timeline;
		r.n_timeline = b->n_timeline;
	}
	/* With a pty, the master goes to boxctl, which relays it; boxd keeps no copy. */
	if (b->client)
		(void)b->d->hooks->client_send(b->client, BOX__MSG_TYPE__MSG_RUN_REPLY, b->request_id,
					       &r.base, &b->pty_master, r.pty ? 1 : 0);
	b->pty_master = safe_close(b->pty_master);
}

/* ------------------------------------------------------------------ */
/* owner and state dir                                                 */

static int
owner_resolve(struct box *b, const struct passwd *pw)
{
	struct box_owner_id *o = &b->owner;
	o->uid = pw->pw_uid;
	o->gid = pw->pw_gid;
	o->name = strdup(pw->pw_name);
	o->home = strdup(pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : "/");
	o->shell = strdup(pw->pw_shell && pw->pw_shell[0] == '/' ? pw->pw_shell : "/bin/sh");
	if (!o->name || !o->home || !o->shell)
		return -ENOMEM;
	/* A home that is not a clean absolute path cannot be placed in the view. */
	if (!path_is_clean_absolute(o->home)) {
		free(o->home);
		o->home = strdup("/");
		if (!o->home)
			return -ENOMEM;
	}
	int n = BOXD_GROUPS_MAX;
	gid_t groups[BOXD_GROUPS_MAX];
	if (getgrouplist(o->name, o->gid, groups, &n) < 0)
		n = 0;
	if (geteuid() != 0) {
		/* An unprivileged boxd cannot change groups: the trampoline keeps ours. */
		n = getgroups(BOXD_GROUPS_MAX, groups);
		if (n < 0)
			n = 0;
	}
	for (int i = 0; i < n; i++)
		o->groups[o->n_groups++] = groups[i];
	return 0;
}

/*
 * dfd/name: a directory (created `mode` when missing), handed to uid:gid when
 * `chown_it`, else required to be ours and not writable by group or others.
 * Race: dfd is a root-owned directory nobody else can write (/var/lib, or
 * /var/lib/box after this check), so the entry cannot be swapped; it is
 * still looked at and changed only through an O_PATH|O_NOFOLLOW fd.
 */
static int
mkdir_owned_at(int dfd, const char *name, mode_t mode, uid_t uid, gid_t gid, bool chown_it)
{
	if (mkdirat(dfd, name, mode) < 0 && errno != EEXIST)
		return -errno;
	_cleanup_close_ int fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (!chown_it)
		return st.st_uid == geteuid() && !(st.st_mode & 022) ? 0 : -EPERM;
	if (st.st_uid != uid && fchownat(fd, "", uid, gid, AT_EMPTY_PATH) < 0)
		return -errno;
	return 0;
}

/*
 * The state dir of this run; for the service default, /var/lib/box/UID is
 * made here (root's /var/lib/box, 0755, must not be writable by others;
 * UID is the owner's). Everything below that — NAME, its lock, policy/,
 * decisions.jsonl, agent.log — is created and opened by box-recheck, as the
 * owner, and boxd works on those fds only (policyd.c, runtime.c).
 */
static int
state_dir_choose(struct box *b, char **ret)
{
	const Box__CfgBox *box = b->spec->box;
	if (box->state_dir)
		return (*ret = strdup(box->state_dir->path)) ? 0 : -ENOMEM;
	if (!b->d->embedded) {
		int r;
		_cleanup_close_ int lib = open("/var/lib", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (lib < 0)
			return -errno;
		if ((r = mkdir_owned_at(lib, "box", 0755, 0, 0, false)) < 0)
			return r;
		_cleanup_close_ int bx = openat(lib, "box", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (bx < 0)
			return -errno;
		char uid[16];
		snprintf(uid, sizeof(uid), "%u", (unsigned)b->owner.uid);
		if ((r = mkdir_owned_at(bx, uid, 0700, b->owner.uid, b->owner.gid, true)) < 0)
			return r;
		return asprintf(ret, "/var/lib/box/%s/%s", uid, b->name) < 0 ? -ENOMEM : 0;
	}
	const char *xdg = getenv("XDG_STATE_HOME");
	if (xdg && path_is_clean_absolute(xdg) && b->owner.uid == b->caller_uid)
		return asprintf(ret, "%s/box/%s", xdg, b->name) < 0 ? -ENOMEM : 0;
	if (strcmp(b->owner.home, "/") == 0)
		return asprintf(ret, "/.local/state/box/%s", b->name) < 0 ? -ENOMEM : 0;
	return asprintf(ret, "%s/.local/state/box/%s", b->owner.home, b->name) < 0 ? -ENOMEM : 0;
}

/* ------------------------------------------------------------------ */
/* the end of a box                                                    */

/*
 * The one teardown, from any state (each piece is undone only if it was
 * done: recheck_stop, policyd_finish, cgroup_cleanup, runtime_dir_remove
 * and runtime_unlock check for themselves). What waits for nothing goes
 * now; then the box is BOX_FINISHING, a chain of events of boxd's loop:
 * box-policyd's exit (its final flush, box_policyd_finished), the cgroups'
 * removal (box_cgroups_removed), then the runtime dir and the run lock
 * before ON_FINISHED tells the client (RunExit or RunReply) and box_end().
 * So the client hears of the end only once policyd has flushed its
 * decision lines and the name can be run again, as when this was one call.
 */
static void daemons_finished(struct box *b);

static void
box_teardown(struct box *b, void (*on_finished)(struct box *b))
{
	b->state = BOX_FINISHING;
	b->on_finished = on_finished;
	recheck_stop(b);
	/* A start abandoned with the agent's sandbox held at its gate: it dies unstarted. */
	child_stop(&b->agent);
	b->gate_fd = safe_close(b->gate_fd);
	b->pty_master = safe_close(b->pty_master);
	status_watch_close(&b->status);
	if (b->timeout_ev)
		event_del(b->timeout_ev);
	if (b->kill_ev)
		event_del(b->kill_ev);
	/*
	 * All end together: box-shell (its tools killed first), the gateway, box-mcpd,
	 * and policyd, which reads on until each of their channels has closed, so that
	 * their last Records reach it before its flush (POLICYD_PEERS_END_WAIT_MS);
	 * with an otlp target its own last records then go out through the gateway,
	 * which exports them before it exits. Their reaps or exit timers come back
	 * through box_{shell,gateway,mcpd,policyd}_finished().
	 */
	(void)mcpd_finish(b);
	(void)shell_finish(b);
	(void)gateway_finish(b);
	daemons_finished(b);
}

/* One of the daemons exited (or was killed): the box goes on once all have. */
static void
daemons_finished(struct box *b)
{
	if (b->state != BOX_FINISHING)
		return;
	if (policyd_finish(b) || daemons_exiting(b))
		return; /* the last of their reaps or exit timers comes back here */
	box_policyd_finished(b);
}

void
box_shell_finished(struct box *b)
{
	daemons_finished(b);
}

void
box_gateway_finished(struct box *b)
{
	daemons_finished(b);
}

void
box_mcpd_finished(struct box *b)
{
	daemons_finished(b);
}

void
box_policyd_finished(struct box *b)
{
	if (b->state != BOX_FINISHING)
		return;
	if (daemons_exiting(b))
		return; /* another one is on its way out: its exit comes back (daemons_finished) */
	if (cgroup_cleanup(b))
		return; /* the rmdir timer: box_cgroups_removed() */
	box_cgroups_removed(b);
}

/* Torn down and told: the box is gone. */
static void
box_end(struct box *b)
{
	struct boxd *d = b->d;

	b->state = BOX_GONE;
	box_free(b);
	d->hooks->box_gone(d);
}

void
box_cgroups_removed(struct box *b)
{
	if (b->state != BOX_FINISHING)
		return;
	runtime_unlock(b);
	/*
	 * The reply, then the runtime dir (BASE/ID, this box's alone): boxctl ends while
	 * it goes, and no other client is answered before it is gone (one loop turn).
	 */
	if (b->on_finished)
		b->on_finished(b);
	runtime_dir_remove(b->d, b);
	box_end(b);
}

/* The end of a start that failed: its RunReply (status and error kept by start_fail). */
static void
finished_start_failed(struct box *b)
{
	reply_run(b, b->end_status, b->has_end_error ? b->end_error : NULL, NULL, 0);
}

/* A start that cannot go on, at any state before running: tear down, reply, gone. */
static void
start_fail(struct box *b, Box__ReplyStatus status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void
start_fail(struct box *b, Box__ReplyStatus status, const char *fmt, ...)
{
	char spawn_err[600];

	b->end_status = status;
	b->has_end_error = fmt != NULL;
	if (fmt && daemons_spawn_failure(b, spawn_err, sizeof(spawn_err))) {
		/* A confined daemon that could not start: the cause of what failed after it. */
		snprintf(b->end_error, sizeof(b->end_error), "%s", spawn_err);
	} else if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(b->end_error, sizeof(b->end_error), fmt, ap);
		va_end(ap);
		for (char *c = b->end_error; *c; c++)
			if ((unsigned char)*c < 0x20)
				*c = '?';
	}
	box_teardown(b, finished_start_failed);
}

/* A refusal with one problem (box.ini:LINE [SECTION] KEY). */
static void
start_refuse(struct box *b, uint32_t line, const char *section, const char *key,
	     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void
start_refuse(struct box *b, uint32_t line, const char *section, const char *key,
	     const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	b->rc.problems = calloc(1, sizeof(*b->rc.problems));
	if (b->rc.problems && (b->rc.problems[0] = problem_new(line, section, key, "%s", msg)))
		b->rc.n_problems = 1;
	start_fail(b, BOX__REPLY_STATUS__REPLY_REFUSED, NULL);
}

void
box_free(struct box *b)
{
	if (!b)
		return;
	struct boxd *d = b->d;
	for (struct box **pp = &d->boxes; *pp; pp = &(*pp)->next)
		if (*pp == b) {
			*pp = b->next;
			d->n_boxes--;
			break;
		}
	if (b->client && b->client->box == b)
		b->client->box = NULL;
	recheck_free(b);
	mcpd_free(b);
	shell_free(b);
	spares_box_gone(b);
	gateway_free(b);
	policyd_free(b);
	/* The agent's trampoline, and anything a module left tracked, dies with the box. */
	child_stop_box(d, b);
	plan_free(b->agent_plan);
	safe_close(b->gate_fd);
	safe_close(b->supervise_fd);
	safe_close(b->snapshot_fd);
	safe_close(b->snapshot_upper_fd);
	if (b->snapshot_ev)
		event_free(b->snapshot_ev);
	free(b->snapshot_root);
	free(b->alias_exe);
	status_watch_close(&b->status);
	if (b->timeout_ev)
		event_free(b->timeout_ev);
	if (b->kill_ev)
		event_free(b->kill_ev);
	if (b->reap_delay_ev)
		event_free(b->reap_delay_ev);
	if (b->cgroup_timer)
		event_free(b->cgroup_timer);
	safe_close(b->pty_master);
	for (size_t i = 0; i < b->n_disclosure; i++)
		free(b->disclosure[i]);
	free(b->disclosure);
	for (int i = 0; i < 3; i++)
		safe_close(b->stdio[i]);
	recheck_result_clear(&b->rc);
	for (size_t i = 0; i < b->n_cgroups; i++)
		free(b->cgroups[i]);
	if (b->sock_path) {
		(void)unlink(b->sock_path);
		free(b->sock_path);
	}
	free(b->runtime_dir);
	free(b->setup_error);
	free(b->name);
	free(b->owner.name);
	free(b->owner.home);
	free(b->owner.shell);
	box_msg_free(b->req_msg);
	free(b);
}

/* The end of a box whose agent ran: RunExit (status, 128+N, timed_out, the OOM kill). */
static void
finished_exit(struct box *b)
{
	Box__RunExit x = BOX__RUN_EXIT__INIT;
	int status = b->wait_status;

	if (b->reply_deferred) {
		/* --timings, a daemon never got ready: the started agent's reply, then its end */
		b->reply_deferred = false;
		box_reply_started(b);
	}
	x.box_id = b->id;
	const char *lost = daemons_error(b, true);
	if (lost) {
		/* Stopped for want of a policy, a gateway, a shell or box-mcpd (fail closed): an
		 * error, not the agent's status. */
		x.error = (char *)lost;
	} else if (WIFEXITED(status)) {
		x.has_exit_status = 1;
		x.exit_status = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		x.has_signal = 1;
		x.signal = WTERMSIG(status);
	}
	x.has_timed_out = 1;
	x.timed_out = b->timed_out;
	x.stopped = (char *)b->stopped;
	if (b->oom_killed && (x.has_exit_status || x.has_signal)) {
		x.has_oom_killed = 1;
		x.oom_killed = 1;
	}
	if (b->client)
		(void)b->d->hooks->client_send(b->client, BOX__MSG_TYPE__MSG_RUN_EXIT, b->request_id,
					       &x.base, NULL, 0);
	log_info("box %s (%s) ended: %s %d%s%s%s", b->name, b->id,
		 WIFEXITED(status) ? "status" : "signal",
		 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
		 b->timed_out ? " (timed out)" : "", b->stopped ? ": " : "",
		 b->stopped ? b->stopped : "");
}

bool
box_agent_reaped(const struct box *b)
{
	return b->reaped;
}

/* The gateway's listeners in the agent's sandbox (HTTP, OTLP) are closed, once. */
static void
agent_listeners_close(struct box *b)
{
	gateway_listener_closed(b, b->agent_listener_id);
	b->agent_listener_id = 0;
	gateway_listener_closed(b, b->agent_otlp_listener_id);
	b->agent_otlp_listener_id = 0;
}

/*
 * The agent's PID 1 exited: every process of the agent's sandbox is being
 * killed by the kernel, and the namespaces' teardown (milliseconds here)
 * comes before its trampoline's reap. box-shell (its tools with it) and
 * box-gateway are no longer needed by anything of the agent: they end now,
 * beside that teardown, instead of after the reap (box_teardown then finds
 * them gone or going). With --timings not one still starting (its ready
 * message is a line of the timeline); else a starting one ends as the
 * teardown would end it (its channel closed: no loss). Not box-mcpd (its servers run in sandboxes
 * of their own), and not box-gateway when an otlp target's records go out
 * through it: box-policyd's last ones (box.stopped) come after the reap.
 * box-policyd always waits for the reap (box_teardown), so the supervised
 * agent's last records and every daemon's reach it before its flush.
 */
void
box_agent_pid1_gone(struct box *b)
{
	if (b->state != BOX_RUNNING && b->state != BOX_STOPPING)
		return;
	if (b->daemons[DAEMON_SHELL] && (!b->timings || (b->daemons_ready & (1u << DAEMON_SHELL))))
		(void)shell_finish(b);
	if (b->daemons[DAEMON_GATEWAY] &&
	    (!b->timings || (b->daemons_ready & (1u << DAEMON_GATEWAY))) &&
	    !box_spec_otlp_targets(b->spec)) {
		/* The agent's listeners go first, as at the reap (the gateway's protocol). */
		agent_listeners_close(b);
		(void)gateway_finish(b);
	}
}

static void agent_reaped(struct box *b, int status);

static void
on_reap_delayed(evutil_socket_t fd, short what, void *arg)
{
	struct box *b = arg;
	(void)fd;
	(void)what;
	if (b->state == BOX_FINISHING || b->state == BOX_GONE) {
		b->reaped = true; /* torn down meanwhile (a daemon lost): the status is kept */
		b->wait_status = b->reap_delay_status;
		return;
	}
	agent_reaped(b, b->reap_delay_status);
}

/*
 * The test hook BOX_TEST_AGENT_REAP_DELAY_MS (boxd's own environment; at most
 * 2 s): boxd acts on the agent's reap that much later, so that what the
 * agent's early end started (box_agent_pid1_gone: box-shell's exit) is done
 * before the teardown, as on a loaded machine. It only slows a step. True: the
 * reap waits for the timer.
 */
static bool
reap_delayed(struct box *b, int status)
{
	uint64_t ms;

	if (b->reap_delay_ev || box_test_ms("BOX_TEST_AGENT_REAP_DELAY_MS", 2000, &ms) < 0 ||
	    ms == 0)
		return false;
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)((ms % 1000) * 1000) };
	b->reap_delay_ev = evtimer_new(b->d->base, on_reap_delayed, b);
	if (!b->reap_delay_ev || evtimer_add(b->reap_delay_ev, &tv) < 0)
		return false;
	b->reap_delay_status = status;
	return true;
}

/* The agent's trampoline was reaped (child.c's reaper): the box ends. */
static void
on_agent_reaped(struct child *c, int status)
{
	struct box *b = c->arg;

	if (!reap_delayed(b, status))
		agent_reaped(b, status);
}

static void
agent_reaped(struct box *b, int status)
{
	b->reaped = true;
	b->wait_status = status;
	/* The agent's sandbox ended: its listener goes (the gateway's channel follows). */
	agent_listeners_close(b);
	if (b->state == BOX_STARTING || b->state == BOX_DAEMONS)
		(void)status_watch_drain(&b->status); /* what the trampoline still has on fd 4 */

	if (b->state == BOX_STARTING || b->state == BOX_DAEMONS || b->setup_error) {
		b->end_status = BOX__REPLY_STATUS__REPLY_FAILED;
		b->has_end_error = true;
		if (b->setup_error)
			snprintf(b->end_error, sizeof(b->end_error), "%s", b->setup_error);
		else if (WIFSIGNALED(status))
			snprintf(b->end_error, sizeof(b->end_error),
				 "box-trampoline was killed by signal %d before the agent started",
				 WTERMSIG(status));
		else
			snprintf(b->end_error, sizeof(b->end_error),
				 "box-trampoline exited with status %d before the agent started",
				 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		box_teardown(b, finished_start_failed);
	} else {
		b->oom_killed = cgroup_oom_killed(b); /* read before the teardown removes the cgroup */
		box_teardown(b, finished_exit);
	}
}

/* ------------------------------------------------------------------ */
/* signals                                                             */

static void
on_kill_timer(evutil_socket_t fd, short what, void *arg)
{
	struct box *b = arg;
	box_kill(b);
}

void
box_kill(struct box *b)
{
	/* No trampoline of the agent yet (or a dry run): a lost daemon ends the start now. */
	if (b->state == BOX_DAEMONS && !child_running(&b->agent))
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED, "%s",
				  daemons_error(b, false) ? daemons_error(b, false) :
						     "the box was stopped before it started");
	if (!child_running(&b->agent) || b->state == BOX_FINISHING)
		return;
	b->state = BOX_STOPPING;
	/* The outer trampoline dies; PID 1 sees its pipe close and takes the namespace down. */
	(void)child_kill(&b->agent, SIGKILL);
}

void
box_stop(struct box *b)
{
	if (b->state == BOX_CHECKING || b->state == BOX_DAEMONS)
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED,
				  "the box was stopped before it started");
	if (!child_running(&b->agent) || b->state == BOX_STOPPING || b->state == BOX_FINISHING)
		return;
	b->state = BOX_STOPPING;
	(void)child_kill(&b->agent, SIGTERM);
	if (!b->kill_ev)
		b->kill_ev = evtimer_new(b->d->base, on_kill_timer, b);
	struct timeval tv = { BOXD_KILL_GRACE_MS / 1000, (BOXD_KILL_GRACE_MS % 1000) * 1000 };
	if (b->kill_ev)
		evtimer_add(b->kill_ev, &tv);
	else
		box_kill(b);
}

static void
on_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct box *b = arg;
	log_notice("box %s (%s) timed out", b->name, b->id);
	b->timed_out = true;
	box_stop(b);
}

void
box_control(struct box *b, const Box__RunControl *m)
{
	if (m->signal == SIGINT || m->signal == SIGTERM || m->signal == SIGHUP)
		(void)child_kill(&b->agent, m->signal); /* the outer trampoline forwards it to PID 1 */
}

void
box_client_gone(struct box *b)
{
	b->client = NULL;
	if (b->state == BOX_FINISHING)
		return; /* it ends anyway; nobody is told */
	if (!b->detach && (b->state == BOX_CHECKING || b->state == BOX_DAEMONS)) {
		log_info("box %s: client gone, abandoning the start", b->name);
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED, NULL);
	}
	if (!b->detach && !b->reaped) {
		log_info("box %s (%s): client gone, killing the box", b->name, b->id);
		box_kill(b);
	}
}

/* ------------------------------------------------------------------ */
/* fd 4                                                                */

static void reply_if_deferred(struct box *b);
static bool daemons_all_ready(const struct box *b, bool gating);

static void
box_started(struct box *b)
{
	b->state = BOX_RUNNING;
	b->agent_started = true;
	box_mark(b, "agent started");
	log_info("box %s (%s) running, trampoline pid %d", b->name, b->id, (int)b->agent.pid);
	/*
	 * --timings: the timeline names every step, so the reply waits for the daemons' last
	 * (or for the box's end, when it comes first: box-shell's step then says it was killed).
	 */
	if (b->timings && !daemons_all_ready(b, false)) {
		b->reply_deferred = true;
		return;
	}
	box_reply_started(b);
}

/* RunReply OK for a box whose agent started (--detach: the client goes now). */
static void
box_reply_started(struct box *b)
{
	if (b->detach) {
		reply_run(b, BOX__REPLY_STATUS__REPLY_OK, NULL, b->disclosure, b->n_disclosure);
		/*
		 * The client goes away now; the box keeps running. An embedded
		 * boxd stops writing to the caller's stderr (a pipe there would
		 * keep the caller's reader waiting): its own messages go to
		 * agent.log from now on.
		 */
		if (b->d->embedded && b->rc.log_fd >= 0)
			(void)dup2(b->rc.log_fd, STDERR_FILENO);
		if (b->client)
			b->client->box = NULL;
		b->client = NULL;
	} else {
		reply_run(b, BOX__REPLY_STATUS__REPLY_OK, NULL, NULL, 0);
	}
}

/* What the agent's trampoline says before the exec: its listener, its pty, a setup error. */
static bool
on_status(void *arg, const Box__TrampolineStatus *s, int *fdp)
{
	struct box *b = arg;
	int fd = TAKE_FD(*fdp);

	switch (s->msg_case) {
	case BOX__TRAMPOLINE_STATUS__MSG_LISTENER: {
		/* The agent's in-namespace proxy listener: the gateway serves it. One per sandbox. */
		int r;
		if (fd >= 0 && !b->agent_otlp_listener_id && otlp_port(b) &&
		    s->listener->port == otlp_port(b)) {
			/* ... and its OTLP receiver's, when a telemetry target takes the agent's */
			if ((r = gateway_otlp_listener_add(b, "agent", fd,
							   &b->agent_otlp_listener_id)) < 0) {
				if (!b->setup_error &&
				    asprintf(&b->setup_error, "cannot hand the agent's OTLP listener to "
							      "box-gateway: %s", strerror(-r)) < 0)
					b->setup_error = NULL;
				box_kill(b);
			}
			break;
		}
		if (fd < 0 || b->agent_listener_id || s->listener->port != gateway_port(b)) {
			safe_close(fd);
			if (!b->setup_error &&
			    asprintf(&b->setup_error, "box-trampoline sent an unexpected listener") < 0)
				b->setup_error = NULL;
			box_kill(b);
			break;
		}
		if ((r = gateway_listener_add(b, "agent", fd, &b->agent_listener_id)) < 0) {
			if (!b->setup_error &&
			    asprintf(&b->setup_error, "cannot hand the agent's listener to box-gateway: %s",
				     strerror(-r)) < 0)
				b->setup_error = NULL;
			box_kill(b);
		}
		break;
	}
	case BOX__TRAMPOLINE_STATUS__MSG_PTY:
		/* Held until RunReply OK hands it to boxctl (the trampoline set its size). */
		if (fd < 0 || b->pty_master >= 0 || !b->stdio_tty) {
			safe_close(fd);
			break;
		}
		b->pty_master = fd;
		break;
	case BOX__TRAMPOLINE_STATUS__MSG_ERROR:
		safe_close(fd);
		if (!b->setup_error) {
			if (strcmp(s->error->step, "exec") == 0) {
				if (asprintf(&b->setup_error, "cannot execute the agent: %s",
					     s->error->reason) < 0)
					b->setup_error = NULL;
				b->exec_failed = true;
			} else if (asprintf(&b->setup_error, "sandbox setup failed at %s: %s",
					    s->error->step, s->error->reason) < 0)
				b->setup_error = NULL;
		}
		break;
	case BOX__TRAMPOLINE_STATUS__MSG__NOT_SET:
	default:
		safe_close(fd);
		break;
	}
	return false;
}

/* fd 4 ended: at EOF the agent exec'd (the box runs); a bad message or read kills it. */
static bool
on_status_end(void *arg, int error, const char *why)
{
	struct box *b = arg;

	if (error < 0) {
		if (!b->setup_error &&
		    asprintf(&b->setup_error, error == -EBADMSG
						      ? "box-trampoline sent a bad status message: %s"
						      : "reading box-trampoline's status: %s",
			     why) < 0)
			b->setup_error = NULL;
		box_kill(b);
		return true;
	}
	if (!b->setup_error && b->state == BOX_STARTING)
		box_started(b);
	return false;
}

/* ------------------------------------------------------------------ */
/* start                                                               */

static int
open_null(int flags)
{
	return open("/dev/null", flags | O_CLOEXEC | O_NOCTTY);
}

/*
 * Is FD the box-side end of an anonymous pipe (same pipefs as one we make),
 * open read-only for stdin and write-only for stdout/stderr? boxctl sends
 * nothing else: a file, a socket or a terminal of the caller's must not
 * reach the agent (docs/sandbox.md).
 */
static bool
stdio_is_pipe_end(int fd, int n)
{
	struct stat st, ours;
	int p[2];
	if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode))
		return false;
	if (pipe2(p, O_CLOEXEC) < 0)
		return false;
	int k = fstat(p[0], &ours);
	close(p[0]);
	close(p[1]);
	if (k < 0 || st.st_dev != ours.st_dev)
		return false; /* a named FIFO of the host's filesystem */
	int fl = fcntl(fd, F_GETFL);
	return fl >= 0 && (fl & O_ACCMODE) == (n == 0 ? O_RDONLY : O_WRONLY);
}

/* The disclosure goes to boxctl before the trampoline starts (boxctl prints it). */
static void
disclose_to_client(struct box *b)
{
	Box__RunStarting m = BOX__RUN_STARTING__INIT;
	m.disclosure = b->disclosure;
	m.n_disclosure = b->n_disclosure;
	if (b->client)
		(void)b->d->hooks->client_send(b->client, BOX__MSG_TYPE__MSG_RUN_STARTING,
					       b->request_id, &m.base, NULL, 0);
}

/* ---- RunRequest → checking ---------------------------------------- */

/* The box of a RunRequest (takes the message and fds), listed; NULL when out of memory. */
static struct box *
box_new(struct boxd *d, struct client *c, uint64_t rid, Box__RunRequest *req, int *fds,
	unsigned n_fds)
{
	struct box *b = calloc(1, sizeof(*b));

	if (!b) {
		box_msg_free(&req->base);
		for (unsigned i = 0; i < n_fds; i++)
			safe_close(fds[i]);
		return NULL;
	}
	b->d = d;
	b->state = BOX_CHECKING;
	b->req_msg = &req->base;
	b->req = req;
	b->spec = req->spec;
	b->extra_args = req->extra_args;
	b->n_extra_args = req->n_extra_args;
	child_init(&b->agent, CHILD_AGENT, b, on_agent_reaped, b);
	status_watch_init(&b->status);
	b->pty_master = -1;
	b->ca_runtime_fd = b->shell_listen_fd = b->mcp_listen_fd = -1;
	b->gate_fd = -1;
	b->supervise_fd = -1;
	b->snapshot_fd = b->snapshot_upper_fd = -1;
	b->stdio[0] = b->stdio[1] = b->stdio[2] = -1;
	b->rc.state_dirfd = b->rc.lock_fd = b->rc.log_fd = -1;
	b->rc.policy_dirfd = b->rc.decisions_fd = b->rc.ca_fd = -1;
	b->request_id = rid;
	b->client = c;
	b->caller_uid = c->cred.uid;
	b->detach = req->detach;
	b->quiet = req->quiet;
	b->dry_run = req->dry_run;
	b->timings = req->timings;
	b->stdio_tty = req->stdio_tty;
	/* The pipe ends, in fd order, skipping the fds that are terminals (validated counts). */
	for (unsigned i = 0, k = 0; i < 3; i++)
		if (!(b->stdio_tty & (1u << i)) && k < n_fds)
			b->stdio[i] = fds[k++];
	b->name = strdup(req->spec->box->name->value);
	b->next = d->boxes;
	d->boxes = b;
	d->n_boxes++;
	c->box = b;
	clock_gettime(CLOCK_MONOTONIC, &b->started);
	box_mark(b, "request received");
	return b;
}

/* Each start step returns 0, or -1 when it failed the start (the box is gone then). */
static int
start_admit(struct box *b)
{
	/* Each module's handle (its own state), made with the box. */
	if (!b->name || recheck_new(b) < 0 || policyd_new(b) < 0 || gateway_new(b) < 0 ||
	    shell_new(b) < 0 || mcpd_new(b) < 0)
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED, "out of memory"), -1;
	if (b->d->n_boxes > BOXD_BOXES_MAX)
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED, "too many boxes"), -1;
	return 0;
}

/* The owner's passwd entry: [agent] user (root only, or the caller itself), else the caller. */
static int
start_owner_entry(struct box *b, struct passwd **ret)
{
	const Box__CfgStr *user = b->spec->agent->user;
	uid_t caller = b->caller_uid;
	struct passwd *pw;

	if (!user) {
		if (!(pw = getpwuid(caller)))
			return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED,
					  "uid %u has no passwd entry", (unsigned)caller), -1;
		*ret = pw;
		return 0;
	}
	if (!(pw = getpwnam(user->value)))
		return start_refuse(b, user->line, "agent", "user", "no such user: %s", user->value),
		       -1;
	if (pw->pw_uid != caller && caller != 0)
		return start_refuse(b, user->line, "agent", "user", "only root may name another user"),
		       -1;
	if (!b->d->root && pw->pw_uid != geteuid())
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED,
				  "an unprivileged boxd cannot run a box as %s", pw->pw_name), -1;
	*ret = pw;
	return 0;
}

static int
start_owner(struct box *b)
{
	struct passwd *pw;
	int r;

	if (start_owner_entry(b, &pw) < 0)
		return -1;
	if (owner_resolve(b, pw) < 0)
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED, "out of memory"), -1;
	if (!b->d->root && b->owner.gid != getegid())
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED,
				  "an unprivileged boxd runs boxes with its own group only"), -1;
	if ((r = runtime_new_id(b->id)) < 0)
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED, "getrandom: %s",
				  strerror(-r)), -1;
	return 0;
}

/* Every path, as the owner: box-recheck answers with an event (box_recheck_done). */
static int
start_recheck(struct box *b)
{
	_cleanup_free_ char *state_dir = NULL;
	int r;

	if ((r = state_dir_choose(b, &state_dir)) < 0)
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED,
				  "cannot prepare the state dir (/var/lib/box/%u): %s",
				  (unsigned)b->owner.uid, strerror(-r)), -1;
	_cleanup_free_ char *exe = NULL;
	if ((r = spawn_find_helper(b->d, "box-recheck", &exe)) < 0) {
		char where[2 * PATH_MAX];
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED,
				  "cannot re-check the request as %s: cannot find box-recheck (%s): %s",
				  b->owner.name,
				  spawn_helper_places(b->d, "box-recheck", where, sizeof(where)),
				  strerror(-r)), -1;
	}
	if ((r = recheck_start(b, exe, state_dir)) < 0)
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED,
				  "cannot re-check the request as %s (%s): %s", b->owner.name, exe,
				  strerror(-r)), -1;
	return 0;
}

static int start_runtime_dir(struct box *b);

void
box_run(struct boxd *d, struct client *c, uint64_t rid, Box__RunRequest *req, int *fds,
	unsigned n_fds)
{
	struct box *b = box_new(d, c, rid, req, fds, n_fds);

	if (!b || start_admit(b) < 0 || start_owner(b) < 0 || start_recheck(b) < 0)
		return;
	log_debug("box %s (%s): re-checking as %s", b->name, b->id, b->owner.name);
	/*
	 * The runtime dir needs only the owner and the spec: made while box-recheck
	 * works (a start it refuses removes it, as any failed start's teardown does).
	 */
	if (start_runtime_dir(b) < 0)
		return;
	box_mark(b, "runtime dir made (beside the re-check)");
}

/* ---- RecheckReply → policyd ---------------------------------------- */

static int
start_lock(struct box *b)
{
	char running[BOXD_ID_LEN + 1];
	int r = runtime_lock(b, running);

	if (r == -EBUSY) {
		b->id[0] = '\0';
		return start_fail(b, BOX__REPLY_STATUS__REPLY_BUSY,
				  "box %s is already running (id %s)", b->name, running), -1;
	}
	if (r < 0)
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED, "run lock: %s", strerror(-r)),
		       -1;
	return 0;
}

/*
 * stdio: boxctl's pipes, or /dev/null + agent.log (detach). A terminal's
 * fd (and every fd when none came) is /dev/null here; the workload puts
 * the box's pty slave on the terminal's fds.
 */
static int
start_stdio(struct box *b)
{
	if (b->detach) {
		b->stdio[0] = open_null(O_RDONLY);
		b->stdio[1] = fd_dup_cloexec(b->rc.log_fd, 3);
		b->stdio[2] = fd_dup_cloexec(b->rc.log_fd, 3);
	} else {
		for (int i = 0; i < 3; i++) {
			if (b->stdio[i] >= 0 && !stdio_is_pipe_end(b->stdio[i], i))
				return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED,
						  "boxctl sent fd %d that is not a pipe", i), -1;
			if (b->stdio[i] < 0)
				b->stdio[i] = open_null(i == 0 ? O_RDONLY : O_WRONLY);
		}
	}
	for (int i = 0; i < 3; i++)
		if (b->stdio[i] < 0)
			return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED,
					  "cannot set up the agent's stdio"), -1;
	return 0;
}

static int
start_runtime_dir(struct box *b)
{
	/* The shell alias goes into RUNTIME/bin (runtime_dir_create): no alias, no box. */
	int r = spawn_find_helper(b->d, "box-alias", &b->alias_exe);

	if (r < 0) {
		char where[2 * PATH_MAX];
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED, "cannot find box-alias (%s): %s",
				  spawn_helper_places(b->d, "box-alias", where, sizeof(where)),
				  strerror(-r)), -1;
	}
	r = runtime_dir_create(b->d, b);

	if (r < 0)
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED,
				  "cannot create the runtime dir: %s", strerror(-r)), -1;
	if (b->d->embedded) {
		_cleanup_free_ char *sock = path_join(b->runtime_dir, "boxd.sock");
		if (sock && b->d->hooks->listen_embedded(b->d, sock) == 0)
			b->sock_path = TAKE_PTR(sock);
	}
	return 0;
}

/* pids_max / memory_max; a host without a mechanism refuses the key that needs it. */
static int
start_limits(struct box *b)
{
	const Box__CfgAgent *a = b->spec->agent;
	const char *why = NULL;
	int r = cgroup_setup(b->d, b, a->pids_max != NULL, a->pids_max ? a->pids_max->value : 0,
			     a->memory_max != NULL, a->memory_max ? a->memory_max->value : 0, &why);

	if (r >= 0)
		return 0;
	if (r != -EOPNOTSUPP)
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED, "%s: %s", why, strerror(-r)),
		       -1;
	const Box__CfgU64 *v = a->memory_max && strncmp(why, "memory", 6) == 0 ? a->memory_max :
										   a->pids_max;
	if (!v)
		return start_fail(b, BOX__REPLY_STATUS__REPLY_REFUSED, NULL), -1;
	return start_refuse(b, v->line, "agent", v == a->memory_max ? "memory_max" : "pids_max",
			    "%s", why),
	       -1;
}

/*
 * The gateway's file limit (2 × max_connections + 256) before anything is
 * spawned: above what this boxd may give, the box is refused, naming the key.
 */
static int
start_gateway_limits(struct box *b)
{
	_cleanup_free_ char *err = NULL;
	const Box__CfgGateway *g = b->spec->gateway;

	if (gateway_nofile_check(b, &err) >= 0)
		return 0;
	if (g && g->max_connections)
		return start_refuse(b, g->max_connections->line, "gateway", "max_connections", "%s",
				    err ? err : "too many connections for this boxd"),
		       -1;
	return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED, "%s",
			  err ? err : "box-gateway's file limit"), -1;
}

/* The policy daemon, before anything of the agent runs: no policy, no box. */
static int
start_policyd(struct box *b)
{
	_cleanup_free_ char *err = NULL;

	if (policyd_start(b->d, b, &err) < 0)
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED, "%s",
				  err ? err : "cannot start box-policyd"), -1;
	return 0;
}

void
box_recheck_done(struct box *b, int r)
{
	if (r < 0)
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED,
				  "cannot re-check the request as %s: %s", b->owner.name,
				  strerror(-r));
	if (b->rc.n_problems)
		return start_fail(b, BOX__REPLY_STATUS__REPLY_REFUSED, NULL);
	box_mark(b, "re-checked as the owner");
	if (start_lock(b) < 0 || start_gateway_limits(b) < 0 || start_stdio(b) < 0 ||
	    start_limits(b) < 0)
		return;
	_cleanup_free_ char *snap_err = NULL;
	if ((r = snapshot_start(b, &snap_err)) < 0)
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED, "%s",
				  snap_err ? snap_err : strerror(-r));
	box_mark(b, "run lock, stdio and limits");
	if (start_policyd(b) < 0)
		return; /* box-policyd's step is marked there: spawned, or taken from the spares */
	b->state = BOX_DAEMONS;
	start_daemons(b);
}

/* ---- the daemons together → the gate opens → starting ---------------- */

static int
start_plan(struct box *b, Box__Plan **plan)
{
	_cleanup_free_ char *err = NULL;
	int r = plan_build(b->d, b, plan, &err);

	if (r == -EINVAL && b->rc.n_problems)
		return start_fail(b, BOX__REPLY_STATUS__REPLY_REFUSED, NULL), -1;
	if (r < 0)
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED, "%s", err ? err : "plan"), -1;
	if (plan_agent_shell(b, *plan) < 0)
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED, "out of memory"), -1;
	return 0;
}

/* The agent's trampoline: it builds the sandbox, then waits at its start gate (b->gate_fd). */
static int
start_trampoline(struct box *b, Box__Plan *plan)
{
	pid_t pid = 0;
	int r;

	plan->has_start_gate = 1;
	plan->start_gate = 1;
	/*
	 * [agent] supervise = fs: PID 1's box-policyd channel is the trampoline's
	 * fd 5; boxd's end is attached to box-policyd at the start gate, once
	 * box-policyd is ready (start_release), before the agent can ask.
	 */
	int sv[2] = { -1, -1 };
	if (plan->supervise && (r = box_ipc_socketpair(sv, false)) < 0) {
		for (int i = 0; i < 3; i++)
			b->stdio[i] = safe_close(b->stdio[i]);
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED,
				  "cannot make the agent's supervisor channel: %s", strerror(-r)), -1;
	}
	b->supervise_fd = sv[0];
	r = spawn_trampoline(b->d, b, plan, sv[1], &pid, &b->status.fd, &b->gate_fd);
	/* Sent. box-shell's plan, made from this one next, has no gate (plan_validate). */
	plan->has_start_gate = 0;
	plan->start_gate = 0;
	safe_close(sv[1]);
	for (int i = 0; i < 3; i++)
		b->stdio[i] = safe_close(b->stdio[i]);
	if (r < 0)
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED,
				  "cannot start box-trampoline: %s", strerror(-r)), -1;
	child_track(b->d, &b->agent, pid);
	return 0;
}

/* fd 4 and [box] timeout; the trampoline runs, so a failure here kills it (reaped: gone). */
static void
start_watch(struct box *b)
{
	const Box__CfgU64 *timeout = b->spec->box->timeout_ms;

	if (status_watch_start(&b->status, b->d->base, b->status.fd, on_status, on_status_end, b) <
	    0)
		return box_kill(b);
	if (timeout) {
		uint64_t ms = timeout->value;
		struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)((ms % 1000) * 1000) };
		b->timeout_ev = evtimer_new(b->d->base, on_timeout, b);
		if (b->timeout_ev)
			evtimer_add(b->timeout_ev, &tv);
	}
	log_info("box %s (%s) starting for %s, trampoline pid %d", b->name, b->id, b->owner.name,
		 (int)b->agent.pid);
}

/*
 * A start that cannot go on, with MSG: when the agent's trampoline runs
 * (held at its gate, or on its way to the exec) it is killed and its reap
 * ends the start with MSG (on_agent_reaped); else the start ends now.
 */
static void
start_abort(struct box *b, const char *msg)
{
	char spawn_err[600];
	if (daemons_spawn_failure(b, spawn_err, sizeof(spawn_err)))
		msg = spawn_err; /* a confined daemon that could not start: the cause */
	if (child_running(&b->agent)) {
		if (!b->setup_error)
			b->setup_error = strdup(msg);
		return box_kill(b);
	}
	start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED, "%s", msg);
}

/*
 * After box-policyd's spawn, everything else at once: box-gateway, the
 * agent's plan, the agent's trampoline (it builds the sandbox while the
 * others start and waits at its gate), box-shell (its view is the agent's),
 * box-mcpd (a stdio [mcp] only). A confined daemon's namespaces and root are
 * built in its own child while boxd goes on (daemon.c, exec_fd). Each
 * daemon's listening socket was made and bound by boxd before (policyd's peer socketpairs, shell.sock,
 * mcp.sock; the agent's proxy listener comes from its trampoline and waits
 * here until the gateway serves), so a peer's connection waits in the
 * backlog, never for a readiness message. Their ready messages come as
 * events, in any order (box_*_ready below).
 */
static void
start_daemons(struct box *b)
{
	_cleanup_free_ char *err = NULL;
	uint32_t line;
	const char *key;
	int r = gateway_start(b->d, b, &line, &key, &err);

	if (r == -EINVAL && line)
		/* boxctl checked these entries; one that still does not parse is a failure. */
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED, "box.ini:%u: %s: %s", line, key,
				  err ? err : "box-gateway cannot take this entry");
	if (r < 0)
		return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED, "%s",
				  err ? err : "cannot start box-gateway");
	/* The agent's plan first: box-shell's view is the agent's (its masks made once). */
	if (start_plan(b, &b->agent_plan) < 0)
		return;
	box_mark(b, "agent's plan built");
	/*
	 * The agent's sandbox takes longest to build: its trampoline goes before
	 * box-shell and box-mcpd, which start beside it. From here a failure kills it
	 * at its gate (start_abort); its reap ends the start with the message.
	 */
	if (!b->dry_run) {
		if (start_trampoline(b, b->agent_plan) < 0)
			return;
		box_mark(b, "box-trampoline spawned");
		start_watch(b);
	}
	if (shell_start(b->d, b, &err) < 0)
		return start_abort(b, err ? err : "cannot start box-shell");
	box_mark(b, "box-shell spawned");
	if (mcpd_wanted(b->spec)) {
		/* A stdio [mcp]: box-mcpd serves mcp.sock (bound here: a connection waits for it). */
		if (mcpd_start(b->d, b, &err) < 0)
			return start_abort(b, err ? err : "cannot start box-mcpd");
		box_mark(b, "box-mcpd spawned");
	}
}

/* A dry run is over: boxctl gets RunReply OK with the disclosure, once the box is gone. */
static void
finished_dry_run(struct box *b)
{
	reply_run(b, BOX__REPLY_STATUS__REPLY_OK, NULL, b->disclosure, b->n_disclosure);
}

/* Has every daemon of B (GATING: every one that gates the agent) sent its ready message? */
static bool
daemons_all_ready(const struct box *b, bool gating)
{
	for (int id = 0; id < DAEMON__N; id++) {
		const struct box_daemon *dm = b->daemons[id];
		if (dm && (!gating || dm->desc->gates_agent) && !(b->daemons_ready & (1u << id)))
			return false;
	}
	return true;
}

/*
 * The daemons that gate the agent are ready (box-policyd has loaded the
 * policy, box-gateway serves and its CA is written, box-mcpd serves): the
 * disclosure (it names the rules policyd loaded), then "go" at the gate — the agent starts once its sandbox is
 * built. The others may still be starting: their sockets hold what comes.
 */
static void
start_release(struct box *b)
{
	Box__Plan *plan;
	int r;

	if (b->state != BOX_DAEMONS || !daemons_all_ready(b, true))
		return;
	if (b->dry_run) {
		/* The same disclosure a real start prints, from the same plan; no agent. */
		if (!daemons_all_ready(b, false))
			return;
		plan = TAKE_PTR(b->agent_plan);
		r = plan_disclosure(b, plan, &b->disclosure, &b->n_disclosure);
		plan_free(plan);
		if (r < 0)
			return start_fail(b, BOX__REPLY_STATUS__REPLY_FAILED,
					  "cannot write the disclosure: %s", strerror(-r));
		box_mark(b, "disclosure written (dry run)");
		log_info("box %s (%s): dry run done, tearing down", b->name, b->id);
		return box_teardown(b, finished_dry_run);
	}
	if (b->gate_fd < 0)
		return; /* its trampoline is not spawned yet */
	/* The disclosure, before the agent starts. */
	plan = TAKE_PTR(b->agent_plan);
	if (plan && plan_disclosure(b, plan, &b->disclosure, &b->n_disclosure) == 0 && !b->detach)
		disclose_to_client(b);
	plan_free(plan);
	if (b->supervise_fd >= 0) {
		r = policyd_attach_supervisor(b, b->supervise_fd);
		b->supervise_fd = safe_close(b->supervise_fd);
		if (r < 0)
			return start_abort(b, "cannot attach the agent's supervisor to box-policyd");
	}
	ssize_t n;
	do
		n = send(b->gate_fd, "go", 2, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	/* then the agent's PID 1 reports its kernel refusals on it (kernel.c) */
	if (n == 2)
		(void)kernel_watch_agent(b, TAKE_FD(b->gate_fd));
	b->gate_fd = safe_close(b->gate_fd);
	if (n != 2) {
		/* It went because its setup failed, most likely: what it said on fd 4 counts first. */
		(void)status_watch_drain(&b->status);
		return start_abort(b, "box-trampoline went away at its start gate");
	}
	box_mark(b, "agent released (its start gate opened)");
	b->state = BOX_STARTING;
}

/* --timings: the RunReply that waited for the daemons still starting after the agent. */
static void
reply_if_deferred(struct box *b)
{
	if (!b->reply_deferred || !daemons_all_ready(b, false))
		return;
	b->reply_deferred = false;
	box_reply_started(b);
}

/*
 * Daemon ID's ready message (r 0, STEP its timeline step) or why its start
 * failed (ERR, else FALLBACK). Before the agent has started the start
 * fails; after it daemon.c treats the failure as a loss (daemon_ready).
 */
static void
daemon_ready_step(struct box *b, enum daemon_id id, int r, const char *err,
		  const char *fallback, const char *step)
{
	if (b->state == BOX_FINISHING || b->state == BOX_GONE)
		return;
	if (r < 0)
		return start_abort(b, err ? err : fallback);
	b->daemons_ready |= 1u << id;
	box_mark(b, step);
	start_release(b);
	reply_if_deferred(b);
}

void
box_policyd_ready(struct box *b, int r, const char *err)
{
	daemon_ready_step(b, DAEMON_POLICYD, r, err, "cannot start box-policyd",
			  "box-policyd ready");
}

void
box_gateway_ready(struct box *b, int r, const char *err)
{
	daemon_ready_step(b, DAEMON_GATEWAY, r, err, "cannot start box-gateway",
			  "box-gateway ready");
}

void
box_shell_ready(struct box *b, int r, const char *err)
{
	daemon_ready_step(b, DAEMON_SHELL, r, err, "cannot start box-shell", "box-shell ready");
}

void
box_mcpd_ready(struct box *b, int r, const char *err)
{
	daemon_ready_step(b, DAEMON_MCPD, r, err, "cannot start box-mcpd", "box-mcpd ready");
}

bool
box_agent_started(const struct box *b)
{
	return b->agent_started;
}
