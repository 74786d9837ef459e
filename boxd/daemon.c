/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon.c — the daemons boxd starts, declared once (daemon_table), their
 * start (daemon_spawn) and a per-box daemon's lifecycle (daemon.h):
 * channel, ready wait, loss, exit wait. Every step after the spawn is an
 * event of boxd's loop; nothing here blocks.
 * Trusts: the channel's messages only after box_ipc_decode() and the
 * protocol table (ipc_event.c); the daemon's module checks their meaning;
 * the password database for the daemon user's ids; boxd's own environment
 * for the test hooks (only the names the table lists, bounded).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "boxd.h"
#include "cleanup.h"
#include "confine.h"
#include "daemon.h"
#include "fdutil.h"
#include "ipc.h"
#include "log.h"
#include "parse.h"
#include "proto_gateway.h"
#include "proto_mcp.h"
#include "proto_policy.h"
#include "proto_shell.h"
#include "spawn.h"
#include "testhook.h"

extern char **environ;

/* ------------------------------------------------------------------ */
/* the table: every daemon boxd starts                                  */

static const struct daemon_env_hook policyd_env[] = {
	/* the test clock (box-policyd/main.c), and a slower exit for one named box */
	{ "BOX_TEST_CLOCK", false, sizeof("BOX_TEST_CLOCK=") - 1 + 64, NULL },
	{ "BOX_TEST_POLICYD_EXIT_DELAY_MS", false, sizeof("BOX_TEST_POLICYD_EXIT_DELAY_MS=") - 1 + 16,
	  "BOX_TEST_POLICYD_EXIT_DELAY_NAME" },
	/* no generation page, as on a kernel without the seal: every decision is asked */
	{ "BOX_TEST_POLICYD_NO_GEN_PAGE", false, sizeof("BOX_TEST_POLICYD_NO_GEN_PAGE=") - 1 + 4,
	  NULL },
	{ NULL, false, 0, NULL },
};

static const struct daemon_env_hook gateway_env[] = {
	{ "BOX_TEST_GATEWAY_", true, 256, NULL },
	{ NULL, false, 0, NULL },
};

/* The stand-in box-mcpd of t-mcp-boxd-ctl.sh reads its mode here (the real one reads none). */
static const struct daemon_env_hook mcpd_env[] = {
	{ "BOX_TEST_MCPD_", true, 256, NULL },
	{ NULL, false, 0, NULL },
};

/*
 * Start order: box-policyd (every other daemon's decisions), then at once
 * box-gateway, box-shell, box-mcpd (only with a stdio [mcp]) and the agent's
 * trampoline, which builds the sandbox and waits at its gate until every
 * daemon that gates_agent is ready (box.c): box-policyd (the policy is
 * loaded: nothing of the agent runs under a policy that may not load),
 * box-gateway (the CA in the agent's view is written) and box-mcpd (its
 * refusals are the box's own configuration: its pins file, its servers —
 * refused before the agent runs, as a box.ini error is). box-shell serves
 * shell.sock, bound by boxd before its spawn, so what the agent sends it waits
 * in the socket until it serves; if it fails to start after the agent
 * started, the box is stopped all the same, with the message a failed start
 * has (daemon_ready). The end goes the
 * other way, policyd last (the others' last Records reach it).
 */
const struct daemon_desc daemon_table[DAEMON__N] = {
	[DAEMON_POLICYD] = {
		.name = "box-policyd",
		.user = DAEMON_USER_SERVICE,
		.service_user = "box-policy",
		.log = DAEMON_LOG_BOX,
		.confined = true,
		.fds = DAEMON_FD(DAEMON_FD_BOXD),
		.fds_optional = DAEMON_FD(POLICYD_FD_GATEWAY) | DAEMON_FD(POLICYD_FD_MCPD) |
				DAEMON_FD(POLICYD_FD_SHELL),
		.env = policyd_env,
		.gates_agent = true,
		.ready_name = "PolicyReady",
		.lost_suffix = " (no policy, no box)",
		.proto = &box_proto_policy,
		.peer_role = BOX_POLICY_ROLE_POLICYD,
		.ready_timeout_ms = BOXD_POLICYD_READY_TIMEOUT_MS,
		.exit_wait_ms = BOXD_POLICYD_EXIT_WAIT_MS,
		.half_close = true,
	},
	[DAEMON_GATEWAY] = {
		.name = "box-gateway",
		.user = DAEMON_USER_SERVICE,
		.service_user = "box-gateway",
		.log = DAEMON_LOG_BOX,
		.confined = true,
		.net_files = true,
		.fds = DAEMON_FD(DAEMON_FD_BOXD) | DAEMON_FD(DAEMON_FD_POLICYD),
		.env = gateway_env,
		.gates_agent = true,
		.ready_name = "GatewayReady",
		.proto = &box_proto_gateway,
		.peer_role = BOX_GATEWAY_ROLE_GATEWAY,
		.ready_timeout_ms = BOXD_GATEWAY_READY_TIMEOUT_MS,
		.exit_wait_ms = BOXD_GATEWAY_EXIT_WAIT_MS,
	},
	[DAEMON_SHELL] = {
		.name = "box-shell",
		.trampoline = true,
		.user = DAEMON_USER_OWNER,
		.log = DAEMON_LOG_BOX,
		.fds = DAEMON_FD(DAEMON_FD_BOXD) | DAEMON_FD(DAEMON_FD_POLICYD) |
		       DAEMON_FD(DAEMON_FD_LISTEN),
		.ready_name = "ShellReady",
		.lost_suffix = " (no shell, no box)",
		.proto = &box_proto_shell,
		.peer_role = BOX_SHELL_ROLE_SHELL,
		.ready_timeout_ms = BOXD_SHELL_READY_TIMEOUT_MS,
		.exit_wait_ms = BOXD_SHELL_EXIT_WAIT_MS,
		.unready_step = "box-shell not ready when the box ended (killed)",
	},
	[DAEMON_MCPD] = {
		.name = "box-mcpd",
		.user = DAEMON_USER_SERVICE,
		.service_user = "box-mcp",
		.log = DAEMON_LOG_BOX,
		.confined = true,
		.fds = DAEMON_FD(DAEMON_FD_BOXD) | DAEMON_FD(DAEMON_FD_POLICYD) |
		       DAEMON_FD(DAEMON_FD_LISTEN),
		.env = mcpd_env,
		.ready_name = "McpReady",
		.gates_agent = true,
		.proto = &box_proto_mcpctl,
		.peer_role = BOX_MCPCTL_ROLE_MCPD,
		.ready_timeout_ms = BOXD_MCPD_READY_TIMEOUT_MS,
		.exit_wait_ms = BOXD_MCPD_EXIT_WAIT_MS,
	},
	/* One per client connection of a root service boxd (clientd.c); no box, no ready message. */
	[DAEMON_CLIENTD] = {
		.name = "box-clientd",
		.user = DAEMON_USER_SERVICE,
		.log = DAEMON_LOG_BOXD,
		.fds = DAEMON_FD(DAEMON_FD_BOXD) | DAEMON_FD(DAEMON_FD_CLIENT),
	},
};

int
daemon_ids(const struct boxd *d, enum daemon_id id, uid_t *uid, gid_t *gid)
{
	if (daemon_table[id].user != DAEMON_USER_SERVICE)
		return -EINVAL;
	if (d->embedded || !d->root) {
		*uid = geteuid();
		*gid = getegid();
		return 0;
	}
	/*
	 * packaging/sysusers.d/box.conf: the daemon's own user (so that box-gateway's uid can
	 * neither signal box-policyd nor write what box-policyd owns), else the shared
	 * box-daemon, else nobody; never root.
	 */
	const char *names[3] = { daemon_table[id].service_user, "box-daemon", "nobody" };
	for (size_t i = 0; i < 3; i++) {
		const struct passwd *pw = names[i] ? getpwnam(names[i]) : NULL;
		if (!pw)
			continue;
		if (pw->pw_uid == 0 || pw->pw_gid == 0)
			return -ESRCH;
		*uid = pw->pw_uid;
		*gid = pw->pw_gid;
		return 0;
	}
	return -ESRCH;
}

bool
daemon_uid_earlier(const struct boxd *d, enum daemon_id id, uid_t uid)
{
	uid_t now;
	gid_t gid;
	if (daemon_ids(d, id, &now, &gid) == 0 && uid == now)
		return true;
	/* Before the daemon had a user of its own, it ran as the shared box-daemon. */
	const struct passwd *pw = d->embedded || !d->root ? NULL : getpwnam("box-daemon");
	return pw && pw->pw_uid != 0 && uid == pw->pw_uid;
}

/* The hooks of boxd's own environment the entry lists (bounded), then the sanitizer's. */
static void
env_build(const struct daemon_desc *dd, const struct box *b,
	  char *envp[DAEMON_ENV_HOOKS_MAX + 2])
{
	size_t n = 0;

	for (const struct daemon_env_hook *h = dd->env; h && h->name; h++) {
		if (h->only_box) {
			const char *only = getenv(h->only_box);
			if (only && (!b || strcmp(only, b->name) != 0))
				continue;
		}
		size_t nl = strlen(h->name);
		for (char **e = environ; e && *e && n < DAEMON_ENV_HOOKS_MAX; e++)
			if (strncmp(*e, h->name, nl) == 0 && (h->prefix || (*e)[nl] == '=') &&
			    strlen(*e) < h->entry_max)
				envp[n++] = *e;
	}
#if BOXD_ASAN
	/* LeakSanitizer cannot stop the world under the daemon's seccomp filter. */
	envp[n++] = (char *)"ASAN_OPTIONS=detect_leaks=0";
#endif
	envp[n] = NULL;
}

bool
daemon_env_boxless(const struct box *b, enum daemon_id id)
{
	char *with[DAEMON_ENV_HOOKS_MAX + 2], *without[DAEMON_ENV_HOOKS_MAX + 2];
	size_t i;

	env_build(&daemon_table[id], b, with);
	env_build(&daemon_table[id], NULL, without);
	for (i = 0; with[i] && without[i]; i++)
		if (with[i] != without[i])
			return false;
	return !with[i] && !without[i];
}

struct child_setup_args {
	uint64_t nofile;
	uid_t uid;
	gid_t gid;
	bool confined;              /* confine_enter(&confine) first (a cloned child) */
	struct confine_req confine;
};

/*
 * In the child, between fork and execve: its file limit, soft and hard
 * (raising the hard one needs root, so first), then its ids: a root boxd
 * empties the bounding set and switches them (no supplementary groups, gid, uid, each real = effective =
 * saved), and either way they are read back and uid 0 proven not
 * regainable. A confined daemon (daemon_desc.confined) first gets its
 * minimal root in its own namespaces (confine.c), before the switch, while
 * a root boxd's child may still mount. The daemon starts as what it runs as
 * and only locks itself down further (common/privdrop.c in its own main.c).
 * Only syscalls here.
 */
static int
child_setup(void *userdata)
{
	const struct child_setup_args *a = userdata;
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (a->nofile) {
		struct rlimit rl = { (rlim_t)a->nofile, (rlim_t)a->nofile };
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			return -errno;
	}
	int r;
	if (a->confined && (r = confine_enter(&a->confine)) < 0)
		return r;
	bool root = geteuid() == 0;
	/* The bounding set while root may (CAP_SETPCAP): nothing the daemon could regain. */
	for (int cap = 0; root && cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return -errno;
	if (root && (setgroups(0, NULL) < 0 || setresgid(a->gid, a->gid, a->gid) < 0 ||
		     setresuid(a->uid, a->uid, a->uid) < 0))
		return -errno;
	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
		return -errno;
	if (ru != a->uid || eu != a->uid || su != a->uid || rg != a->gid || eg != a->gid ||
	    sg != a->gid || (root && getgroups(0, NULL) != 0))
		return -EPERM;
	if (a->uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
		return -EPERM;
	return 0;
}

int
daemon_spawn(struct boxd *d, const struct box *b, enum daemon_id id,
	     const struct daemon_spawn_args *args, pid_t *pid, int *ctl, int *status_fd, char **err)
{
	const struct daemon_desc *dd = &daemon_table[id];
	_cleanup_free_ char *exe = NULL;
	_cleanup_close_ int nullfd = -1;
	struct child_setup_args cs = { .nofile = args->nofile };
	int sv[2] = { -1, -1 };
	int r;

	if ((r = spawn_find_helper(d, dd->name, &exe)) < 0) {
		char where[2 * PATH_MAX];
		seterr(err, "cannot find %s (%s): %s", dd->name,
		       spawn_helper_places(d, dd->name, where, sizeof(where)), strerror(-r));
		return r;
	}
	if (dd->user == DAEMON_USER_SERVICE &&
	    (r = daemon_ids(d, id, &cs.uid, &cs.gid)) < 0) {
		seterr(err, "no user to run %s as (%s%sbox-daemon or nobody)", dd->name,
		       dd->service_user ? dd->service_user : "", dd->service_user ? ", " : "");
		return r;
	}
	for (int fd = DAEMON_FD_BOXD + 1; fd < DAEMON_FDS_MAX; fd++)
		if ((dd->fds & DAEMON_FD(fd)) && args->fds[fd] < 0) {
			seterr(err, "%s's fd %d is not open", dd->name, fd);
			return -EBADF;
		}
	if ((nullfd = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY)) < 0) {
		r = -errno;
		seterr(err, "cannot open /dev/null: %s", strerror(-r));
		return r;
	}
	/* Its stderr and log level: the box's rule (daemon_stderr), or boxd's own stderr. */
	const char *level_arg = NULL;
	int errfd = dd->log == DAEMON_LOG_BOX && b ? daemon_stderr(b, nullfd, &level_arg) :
		    fd_is_open(STDERR_FILENO)     ? STDERR_FILENO :
						    nullfd;
	if ((r = box_ipc_socketpair(sv, false)) < 0) {
		seterr(err, "cannot make %s's channel: %s", dd->name, strerror(-r));
		return r;
	}
	if (dd->trampoline) {
		Box__Plan *plan = NULL;
		if ((r = args->plan(b, exe, level_arg, &plan, err)) >= 0) {
			int stdio[3] = { nullfd, nullfd, errfd };
			int pass[3] = { sv[1], args->fds[DAEMON_FD_BOXD + 1],
					args->fds[DAEMON_FD_BOXD + 2] };
			r = spawn_trampoline_fds(d, plan, stdio, pass, 3, pid, status_fd, b,
						 dd->name, b ? b->snapshot_fd : -1);
			plan_free(plan);
			if (r < 0)
				seterr(err, "cannot start %s's trampoline: %s", dd->name,
				       strerror(-r));
		}
	} else {
		char *envp[DAEMON_ENV_HOOKS_MAX + 2];
		const char *argv[8] = { dd->name };
		size_t na = 1;
		if (level_arg)
			argv[na++] = level_arg;
		for (size_t i = 0; args->args && args->args[i] && na < 7; i++)
			argv[na++] = args->args[i];
		env_build(dd, b, envp);
		int fds[DAEMON_FDS_MAX] = { nullfd, nullfd, errfd, sv[1] };
		unsigned n_fds = DAEMON_FD_BOXD + 1;
		for (int fd = DAEMON_FD_BOXD + 1; fd < DAEMON_FDS_MAX; fd++) {
			fds[fd] = (dd->fds | dd->fds_optional) & DAEMON_FD(fd) ? args->fds[fd] : -1;
			if (fds[fd] >= 0)
				n_fds = (unsigned)fd + 1;
		}
		struct spawn_req req = { .path = exe, .argv = (char *const *)argv, .envp = envp,
					 .fds = fds, .n_fds = n_fds, .setup = child_setup,
					 .userdata = &cs };
		if (dd->user != DAEMON_USER_SERVICE)
			req.setup = NULL;
		if (dd->confined && req.setup) {
			bool userns = geteuid() != 0;
			cs.confined = true;
			cs.confine = (struct confine_req){ .exe = exe, .net_files = dd->net_files,
							   .userns = userns, .uid = cs.uid,
							   .gid = cs.gid };
			/* BOX_TEST_DAEMON_NS_ABSENT: the child finds them refused, as clone would. */
			cs.confine.refuse = getenv("BOX_TEST_DAEMON_NS_ABSENT") != NULL;
			req.clone_flags = CONFINE_CLONE_FLAGS(userns);
			/*
			 * Its namespaces and minimal root are built in the child: boxd goes on
			 * meanwhile (the next daemon, the agent's sandbox) and learns how it
			 * went from exec_fd (confined_start_failed) or its ready message.
			 */
			struct box_daemon *dm = b ? b->daemons[id] : NULL;
			if (args->exec_fd)
				req.exec_fd = args->exec_fd;
			else if (dm && dm->exec_fd < 0)
				req.exec_fd = &dm->exec_fd;
		}
		r = spawn_process(&req, pid);
		if (r < 0 && cs.confined)
			seterr(err, "cannot start %s in its own mount, PID and IPC namespaces with a "
				    "minimal root (the box does not start without them): %s",
			       exe, strerror(-r));
		else if (r < 0)
			seterr(err, "cannot start %s: %s", exe, strerror(-r));
	}
	close(sv[1]);
	if (r < 0) {
		close(sv[0]);
		return r;
	}
	*ctl = sv[0];
	return 0;
}

/* ------------------------------------------------------------------ */
/* a per-box daemon's lifecycle                                         */

void
daemon_init(struct box_daemon *dm, const struct box_daemon_ops *ops, struct box *b)
{
	memset(dm, 0, sizeof(*dm));
	dm->ops = ops;
	dm->desc = &daemon_table[ops->id];
	dm->b = b;
	dm->exec_fd = -1;
	b->daemons[ops->id] = dm;
}

const char *
daemons_error(const struct box *b, bool lost_only)
{
	for (int id = 0; id < DAEMON__N; id++) {
		const struct box_daemon *dm = b->daemons[id];
		if (dm && dm->error && (dm->lost || !lost_only))
			return dm->error;
	}
	return NULL;
}

bool
daemons_exiting(const struct box *b)
{
	for (int id = 0; id < DAEMON__N; id++)
		if (b->daemons[id] && b->daemons[id]->exit_timer)
			return true;
	return false;
}

void
seterr(char **err, const char *fmt, ...)
{
	va_list ap;

	if (!err || *err)
		return;
	va_start(ap, fmt);
	if (vasprintf(err, fmt, ap) < 0)
		*err = NULL;
	va_end(ap);
}

bool
daemon_running(const struct box_daemon *dm)
{
	return child_running(&dm->child);
}

int
daemon_stderr(const struct box *b, int nullfd, const char **level_arg)
{
	*level_arg = !b->d->embedded || getenv("BOXD_DEBUG") ? NULL : b->quiet ? "-q" : "-n";
	if (b->d->embedded && b->detach && b->rc.log_fd >= 0)
		return b->rc.log_fd;
	return fd_is_open(STDERR_FILENO) ? STDERR_FILENO : nullfd;
}

static void
ready_wait_end(struct box_daemon *dm)
{
	dm->starting = false;
	if (dm->ready_timer) {
		event_free(dm->ready_timer);
		dm->ready_timer = NULL;
	}
	if (dm->ready_delay) {
		event_free(dm->ready_delay);
		dm->ready_delay = NULL;
	}
}

static void ready_outcome(struct box_daemon *dm, int r, const char *msg);

static void
on_ready_delayed(evutil_socket_t fd, short what, void *arg)
{
	struct box_daemon *dm = arg;
	ready_outcome(dm, 0, "");
}

/*
 * The test hook BOX_TEST_READY_DELAY_MS (at most 60 s): boxd acts on the
 * ready message of the daemon BOX_TEST_READY_DELAY_DAEMON names ("box-shell")
 * that much later, only for the box BOX_TEST_READY_DELAY_NAME names when set.
 * It only slows a step: the daemon may die meanwhile (its start then fails),
 * which is how the tests show that a daemon failing to start after the agent
 * started still stops the box. True: the ready message waits for the timer.
 */
static bool
ready_delayed(struct box_daemon *dm)
{
	const char *who = getenv("BOX_TEST_READY_DELAY_DAEMON");
	const char *only = getenv("BOX_TEST_READY_DELAY_NAME");
	uint64_t v;

	if (!who || strcmp(who, dm->desc->name) != 0 || dm->ready_delay ||
	    (only && strcmp(only, dm->b->name) != 0))
		return false;
	if (box_test_ms("BOX_TEST_READY_DELAY_MS", 60000, &v) < 0 || v == 0)
		return false;
	struct timeval tv = { (time_t)(v / 1000), (suseconds_t)((v % 1000) * 1000) };
	dm->ready_delay = evtimer_new(dm->b->d->base, on_ready_delayed, dm);
	if (!dm->ready_delay || evtimer_add(dm->ready_delay, &tv) < 0) {
		if (dm->ready_delay)
			event_free(dm->ready_delay);
		dm->ready_delay = NULL;
		return false;
	}
	/* It did answer in time: only the hold is left (its exit still fails the start). */
	if (dm->ready_timer) {
		event_free(dm->ready_timer);
		dm->ready_timer = NULL;
	}
	return true;
}

void
daemon_ready(struct box_daemon *dm, int r, const char *fmt, ...)
{
	char msg[1200] = "";

	if (!dm->starting || (r >= 0 && dm->ready_delay))
		return;
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
	}
	if (r >= 0 && ready_delayed(dm))
		return;
	ready_outcome(dm, r, msg);
}

static void
ready_outcome(struct box_daemon *dm, int r, const char *msg)
{
	ready_wait_end(dm);
	dm->exec_fd = safe_close(dm->exec_fd); /* ready (it exec'd) or failed: no longer asked */
	if (r >= 0)
		log_info("box %s (%s): %s (pid %d) ready", dm->b->name, dm->b->id, dm->desc->name,
			 (int)dm->child.pid);
	if (r < 0 && box_agent_started(dm->b)) {
		/*
		 * The agent runs already (this daemon does not gate it): fail closed,
		 * as a loss; RunExit says what a failed start would have said.
		 */
		struct box *b = dm->b;
		dm->lost = true;
		dm->lost_starting = true;
		free(dm->error);
		dm->error = strdup(msg);
		log_err("box %s (%s): %s; stopping the box", b->name, b->id, msg);
		return box_kill(b);
	}
	dm->ops->ready(dm->b, r < 0 ? r : 0, r < 0 ? msg : NULL);
}

static void
set_error(struct box_daemon *dm, const char *why)
{
	free(dm->error);
	if (asprintf(&dm->error, "%s exited (%s): the box was stopped%s", dm->desc->name, why,
		     dm->desc->lost_suffix ? dm->desc->lost_suffix : "") < 0)
		dm->error = NULL;
}

void
daemon_lost(struct box_daemon *dm, const char *why)
{
	struct box *b = dm->b;

	if (dm->closing || dm->lost)
		return;
	/* A daemon that lost its policyd exits: report the cause, not the echo. */
	if (dm->ops->id != DAEMON_POLICYD && policyd_check_gone(b))
		return;
	dm->lost = true;
	log_err("box %s (%s): %s exited (%s); stopping the box", b->name, b->id, dm->desc->name,
		why);
	set_error(dm, why);
	if ((b->state == BOX_DAEMONS || b->state == BOX_STARTING) && !b->setup_error && dm->error)
		b->setup_error = strdup(dm->error);
	box_kill(b);
}

/*
 * A confined daemon whose spawn did not wait for its exec: did its setup or
 * exec fail? Then its start fails with that (true), as a waited spawn's
 * would have. Asked when its channel closes or it is reaped while starting,
 * before any other reason is taken; once it is ready the pipe is dropped.
 */
static void spawn_failure_text(const struct box_daemon *dm, int r, char *buf, size_t len);
static const char *spawn_failure_first(struct box *b, const struct box_daemon *known,
				       int known_r, char *buf, size_t len);

static bool
confined_start_failed(struct box_daemon *dm)
{
	char msg[600];

	if (dm->exec_fd < 0)
		return false;
	int r = spawn_exec_result(dm->exec_fd);
	if (r == -EAGAIN)
		return false;
	dm->exec_fd = safe_close(dm->exec_fd);
	if (r >= 0)
		return false;
	/* Each confined daemon's fails alike: the first one's (table order) is the reason. */
	daemon_ready(dm, r, "%s", spawn_failure_first(dm->b, dm, r, msg, sizeof(msg)));
	return true;
}

static void
spawn_failure_text(const struct box_daemon *dm, int r, char *buf, size_t len)
{
	snprintf(buf, len,
		 "cannot start %s in its own mount, PID and IPC namespaces with a minimal root "
		 "(the box does not start without them): %s",
		 dm->desc->name, strerror(-r));
}

/* daemons_spawn_failure, where KNOWN (when not NULL) failed with KNOWN_R already. */
static const char *
spawn_failure_first(struct box *b, const struct box_daemon *known, int known_r, char *buf,
		    size_t len)
{
	/* Found once, it stays the reason: the others' failures came after it. */
	if (b->spawn_failure[0]) {
		snprintf(buf, len, "%s", b->spawn_failure);
		return buf;
	}
	for (int id = 0; id < DAEMON__N; id++) {
		struct box_daemon *dm = b->daemons[id];
		if (dm && dm == known) {
			spawn_failure_text(dm, known_r, b->spawn_failure, sizeof(b->spawn_failure));
			snprintf(buf, len, "%s", b->spawn_failure);
			return buf;
		}
		if (!dm || dm->exec_fd < 0)
			continue;
		/* Its child is in its setup or exec, which end either way: wait for the word. */
		struct pollfd p = { .fd = dm->exec_fd, .events = POLLIN };
		int k;
		do
			k = poll(&p, 1, SPAWN_RESULT_WAIT_MS);
		while (k < 0 && errno == EINTR);
		int r = spawn_exec_result(dm->exec_fd);
		if (r == -EAGAIN)
			continue; /* still not known after the wait: its ready timer decides */
		dm->exec_fd = safe_close(dm->exec_fd);
		if (r < 0) {
			spawn_failure_text(dm, r, b->spawn_failure, sizeof(b->spawn_failure));
			snprintf(buf, len, "%s", b->spawn_failure);
			return buf;
		}
	}
	return NULL;
}

const char *
daemons_spawn_failure(struct box *b, char *buf, size_t len)
{
	return spawn_failure_first(b, NULL, 0, buf, len);
}

static void
on_msg(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata)
{
	struct box_daemon *dm = userdata;
	dm->ops->on_msg(dm, m);
}

static void
on_close(struct box_ipc_event *e, int error, void *userdata)
{
	struct box_daemon *dm = userdata;
	char why[160];

	dm->ev = box_ipc_event_free(dm->ev);
	if (dm->ops->closing)
		dm->ops->closing(dm);
	if (dm->starting) {
		/* Its sandbox's setup may have said why before the channel went. */
		if (confined_start_failed(dm))
			return;
		if (dm->ops->start_failed && dm->ops->start_failed(dm))
			return;
		if (error == -ECONNRESET || error == -EPROTO)
			return daemon_ready(dm, error, "%s exited before it was ready (see its "
						       "messages above)", dm->desc->name);
		return daemon_ready(dm, error, "%s sent garbage instead of %s: %s", dm->desc->name,
				    dm->desc->ready_name, strerror(-error));
	}
	if (error == -ECONNRESET)
		snprintf(why, sizeof(why), "its channel closed");
	else
		snprintf(why, sizeof(why), "after it sent garbage: %s", strerror(-error));
	daemon_lost(dm, why);
}

static void
on_ready_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct box_daemon *dm = arg;
	daemon_ready(dm, -ETIMEDOUT, "%s did not get ready within %u s", dm->desc->name,
		     dm->desc->ready_timeout_ms / 1000);
}

int
daemon_watch(struct box_daemon *dm, pid_t pid, int fd, char **err)
{
	struct timeval tv = { dm->desc->ready_timeout_ms / 1000,
			      (dm->desc->ready_timeout_ms % 1000) * 1000 };

	daemon_track(dm, pid);
	dm->ev = box_ipc_event_new(dm->b->d->base, fd, dm->desc->proto, dm->desc->peer_role, on_msg,
				   on_close, dm);
	if (!dm->ev) {
		close(fd);
		if (asprintf(err, "cannot watch %s's channel", dm->desc->name) < 0)
			*err = NULL;
		return -ENOMEM;
	}
	dm->ready_timer = evtimer_new(dm->b->d->base, on_ready_timeout, dm);
	if (!dm->ready_timer || evtimer_add(dm->ready_timer, &tv) < 0) {
		if (asprintf(err, "cannot arm %s's ready timer", dm->desc->name) < 0)
			*err = NULL;
		return -ENOMEM;
	}
	dm->starting = true;
	return 0;
}

/*
 * The test hook BOX_TEST_DAEMON_INIT_DELAY_MS (boxd's own environment; at most
 * 2 s): boxd waits this long before it sends a daemon its init message, so
 * that a daemon whose start fails at once is gone by then (t-run). It only
 * slows a step.
 */
void
daemon_init_delay(void)
{
	uint64_t ms;

	if (box_test_ms("BOX_TEST_DAEMON_INIT_DELAY_MS", 2000, &ms) == 0 && ms > 0)
		box_sleep_ms(ms);
}

int
daemon_send_request(struct box_daemon *dm, uint32_t type, uint64_t request_id,
		    const ProtobufCMessage *m, const int *fds, unsigned n_fds)
{
	if (!dm->ev)
		return -ENOTCONN;
	int r = box_ipc_event_send(dm->ev, type, request_id, m, fds, n_fds);
	/*
	 * Gone while starting (its trampoline's sandbox setup, or its confinement,
	 * failed and it exited): its channel's close, read next, says why
	 * (start_failed, the trampoline's status, the exec pipe), not this EPIPE.
	 */
	if (r == -EPIPE && dm->starting)
		return 0;
	return r;
}

int
daemon_send(struct box_daemon *dm, uint32_t type, const ProtobufCMessage *m, const int *fds,
	    unsigned n_fds)
{
	return daemon_send_request(dm, type, 0, m, fds, n_fds);
}

static void
exit_wait_end(struct box_daemon *dm)
{
	if (!dm->exit_timer)
		return;
	event_free(dm->exit_timer);
	dm->exit_timer = NULL;
	dm->ops->finished(dm->b);
}

/* Its process exited (child.c's reaper; untracked already). */
static void
on_reaped(struct child *c, int status)
{
	struct box_daemon *dm = c->arg;
	struct box *b = dm->b;
	char why[96];

	workload_status_text(status, why, sizeof(why));
	/*
	 * Its end can be seen before what it said last on its channel (another fd: the loop
	 * picks either first): its ready message — a refusal with its reason — counts first.
	 */
	if (dm->starting && dm->ev)
		(void)box_ipc_event_drain(dm->ev, 16);
	if (dm->starting && confined_start_failed(dm)) {
		/* its start's reason is kept */
	} else if (dm->starting) {
		if (!(dm->ops->start_failed && dm->ops->start_failed(dm)))
			daemon_ready(dm, -ECHILD, "%s exited before it was ready (%s)", dm->desc->name,
				     why);
	} else if (!dm->closing && !box_agent_reaped(b)) {
		if (dm->lost_starting) {
			/*
			 * Its channel went first, before it was ready: the start's words, now with
			 * how — unless it said why itself (a ready message refusing the box).
			 */
			if (!dm->error || strstr(dm->error, "exited before it was ready")) {
				free(dm->error);
				if (asprintf(&dm->error, "%s exited before it was ready (%s)",
					     dm->desc->name, why) < 0)
					dm->error = NULL;
			}
		} else if (dm->lost)
			set_error(dm, why); /* the channel went first: now we know how */
		else
			daemon_lost(dm, why);
	} else if (dm->lost && dm->error && strstr(dm->error, "(its channel closed)")) {
		set_error(dm, why); /* lost, then torn down: the reap says how it ended */
	}
	exit_wait_end(dm);
}

void
daemon_track(struct box_daemon *dm, pid_t pid)
{
	if (child_running(&dm->child) && dm->child.pid == pid)
		return;
	child_init(&dm->child, CHILD_DAEMON, dm->b, on_reaped, dm);
	child_track(dm->b->d, &dm->child, pid);
}

static void
channel_close(struct box_daemon *dm)
{
	bool had = dm->ev != NULL;

	dm->closing = true;
	ready_wait_end(dm);
	dm->ev = box_ipc_event_free(dm->ev);
	if (had && dm->ops->closing)
		dm->ops->closing(dm);
}

static void
on_exit_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct box_daemon *dm = arg;

	log_warn("box %s (%s): %s (pid %d) did not exit within %u s; killing it", dm->b->name,
		 dm->b->id, dm->desc->name, (int)dm->child.pid, dm->desc->exit_wait_ms / 1000);
	child_stop(&dm->child); /* not waited for: the reaper drops its exit */
	exit_wait_end(dm);
}

bool
daemon_finish(struct box_daemon *dm)
{
	struct timeval tv = { dm->desc->exit_wait_ms / 1000, (dm->desc->exit_wait_ms % 1000) * 1000 };

	if (!dm->ops)
		return false;
	/*
	 * One that never said it was ready has served nothing: box-shell and box-mcpd
	 * say it before they watch their listener (a ready already on the channel
	 * counts: read first). Ending the box before that, it is killed, not waited
	 * for: its start could only end in its exit. box-policyd (half_close) always
	 * ends by its own flush.
	 */
	bool may_kill = !dm->desc->half_close;
	if (may_kill && dm->starting && dm->ev)
		(void)box_ipc_event_drain(dm->ev, 16);
	bool unready = may_kill && dm->starting && !dm->ready_delay;
	if (dm->desc->half_close && dm->ev && child_running(&dm->child)) {
		/* It sees its end close and may still answer (half_close): read until it exits. */
		dm->closing = true;
		ready_wait_end(dm);
		if (shutdown(box_ipc_event_fd(dm->ev), SHUT_WR) < 0)
			channel_close(dm);
	} else {
		channel_close(dm);
	}
	if (unready && child_kill(&dm->child, SIGKILL) == 0) { /* its reap ends the wait below */
		log_info("box %s (%s): %s (pid %d) was not ready yet: killed, not waited for",
			 dm->b->name, dm->b->id, dm->desc->name, (int)dm->child.pid);
		if (dm->desc->unready_step)
			box_mark(dm->b, dm->desc->unready_step);
	}
	if (!child_running(&dm->child) || dm->exit_timer)
		return dm->exit_timer != NULL;
	dm->exit_timer = evtimer_new(dm->b->d->base, on_exit_timeout, dm);
	if (!dm->exit_timer || evtimer_add(dm->exit_timer, &tv) < 0) {
		if (dm->exit_timer)
			event_free(dm->exit_timer);
		dm->exit_timer = NULL;
		child_stop(&dm->child);
		return false;
	}
	return true;
}

void
daemon_stop(struct box_daemon *dm)
{
	if (!dm->ops)
		return;
	channel_close(dm);
	dm->exec_fd = safe_close(dm->exec_fd);
	if (dm->exit_timer) {
		event_free(dm->exit_timer);
		dm->exit_timer = NULL;
	}
	child_stop(&dm->child);
	free(dm->error);
	dm->error = NULL;
	if (dm->b->daemons[dm->ops->id] == dm)
		dm->b->daemons[dm->ops->id] = NULL;
}
