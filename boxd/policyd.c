/*
 * policyd.c — boxd's side of box-policyd, the per-box policy daemon
 * (DESIGN.md §2, §4; box-policyd/README.md).
 *
 * For every box, before its trampoline: fork+exec box-policyd (found next
 * to boxd's own executable, else in BOX_LIBEXECDIR, never through the
 * environment) with fd 3 = our end of a SOCK_SEQPACKET socketpair, fd 4 =
 * one end of another, whose other end becomes box-gateway's fd 4 (kept in
 * b->gateway_policyd_fd until gateway.c spawns it), fd 5 = one end of a
 * further one when the box has a stdio [mcp] (its other end becomes
 * box-mcpd's fd 4, kept in b->mcpd_policyd_fd until mcpd.c spawns it; else
 * closed: nothing would speak on it),
 * fd 6 = one end of a third, whose other end becomes box-shell's fd 5 (kept
 * in b->shell_policyd_fd until shell.c spawns it), stdin and stdout /dev/null,
 * stderr boxd's (agent.log for a detached embedded box), and an
 * environment of nothing but the test hooks boxd's own has: BOX_TEST_CLOCK,
 * and BOX_TEST_POLICYD_EXIT_DELAY_MS (only for the box that
 * BOX_TEST_POLICYD_EXIT_DELAY_NAME names, when set; it slows policyd's
 * exit after its final flush). Its
 * ids: an embedded boxd's own; a service boxd's daemon user (box-daemon,
 * else nobody). Then PolicyInit with the STATE/policy/ dir fd and the
 * decisions.jsonl fd that box-recheck opened as the owner; PolicyReady
 * arrives as an event (box_policyd_ready(): the box start goes on), or a
 * refusal (a corrupt history…) refuses the box with policyd's message, or
 * BOXD_POLICYD_READY_TIMEOUT_MS pass and the start fails — boxd's loop never
 * waits for it. While the box runs, policyd going away stops the box
 * (fail closed: "box-policyd exited (…): the box was stopped (no policy,
 * no box)"). A one-second timer rotates decisions.jsonl at 64 MiB. When the
 * box ends, closing fd 3 ends policyd (it writes its decision lines and
 * syncs the history first); the box finishes when its exit is reaped (an
 * event: RunExit follows that final flush), or after
 * BOXD_POLICYD_EXIT_WAIT_MS with a SIGKILL. The channel, the ready wait,
 * the loss and the exit wait are daemon.c's, as for every per-box daemon.
 * Trusts: nothing policyd sends beyond box_ipc_decode()'s validation; the
 * fds from box-recheck only after fstat checks here.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "boxd.h"
#include "cleanup.h"
#include "fdutil.h"
#include "ipc.h"
#include "log.h"
#include "path.h"
#include "policy.pb-c.h"
#include "policy_validate.h"
#include "proto_policy.h"
#include "spawn.h"

#define POLICYD_FD 3
#define POLICYD_GATEWAY_FD 4 /* box-policyd's peer channel for box-gateway */
#define POLICYD_MCPD_FD 5    /* box-policyd's peer channel for box-mcpd */
#define POLICYD_SHELL_FD 6   /* box-policyd's peer channel for box-shell */
#define DECISIONS_FILE "decisions.jsonl"
#define DECISIONS_OLD "decisions.jsonl.1"

/* The ids policyd (and box-mcpd) run as: ours (embedded), else the daemon user. */
int
policyd_ids(const struct boxd *d, uid_t *uid, gid_t *gid)
{
	if (d->embedded || !d->root) {
		*uid = geteuid();
		*gid = getegid();
		return 0;
	}
	const struct passwd *pw = getpwnam("box-daemon");
	if (!pw)
		pw = getpwnam("nobody");
	if (!pw || pw->pw_uid == 0)
		return -ESRCH;
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

/*
 * Make the STATE/policy/ fd box-recheck opened as the owner (O_PATH, the
 * owner may not be able to read a dir that policyd's uid owns) into the
 * directory fd policyd gets: owned by policyd's uid, 0700.
 *
 * Why root may fchown it: box-recheck opened "policy" with openat() relative
 * to the state dir fd and O_NOFOLLOW, so the fd is a directory entry of the
 * owner's own state dir (never a symlink's target), and it is an fd, so no
 * rename or symlink swap after the open can redirect the fchown. We only
 * take it over when it is the owner's (created by box-recheck, 0700 by its
 * umask) or already policyd's uid (an earlier run): a directory of anyone
 * else (say root's, renamed into the state dir by the owner) is refused,
 * so the owner cannot make us hand a foreign directory to the daemon user.
 * The reopen goes through "." of that fd: no name the owner controls.
 * Race: the owner can rename or swap STATE/policy at any time; none of that
 * reaches this fd. What the owner left inside before its first run (a
 * symlink, a hard link to a file of its own) stays there: box-policyd opens
 * every name in it with O_NOFOLLOW and O_EXCL for new files, and a hard link
 * can only be to a file the owner may write anyway (fs.protected_hardlinks).
 */
static int
policy_dir_prepare(struct box *b, uid_t uid, gid_t gid, int *ret, char **err)
{
	struct stat st;
	int pfd = b->rc.policy_dirfd;

	if (fstat(pfd, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode)) {
		seterr(err, "%s/policy is not a directory", b->rc.state_dir);
		return -ENOTDIR;
	}
	if (st.st_uid != b->owner.uid && st.st_uid != uid) {
		seterr(err, "%s/policy is owned by uid %u, neither the box owner nor box-policyd",
			       b->rc.state_dir, (unsigned)st.st_uid);
		return -EPERM;
	}
	if (st.st_uid != uid || st.st_gid != gid) {
		if (fchownat(pfd, "", uid, gid, AT_EMPTY_PATH) < 0) {
			int r = -errno;
			seterr(err, "cannot give %s/policy to box-policyd (uid %u): %s",
				       b->rc.state_dir, (unsigned)uid, strerror(-r));
			return r;
		}
	}
	int fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int r = -errno;
		seterr(err, "cannot open %s/policy: %s", b->rc.state_dir, strerror(-r));
		return r;
	}
	if (fchmod(fd, 0700) < 0) {
		int r = -errno;
		close(fd);
		seterr(err, "cannot chmod %s/policy: %s", b->rc.state_dir, strerror(-r));
		return r;
	}
	*ret = fd;
	return 0;
}

/* ------------------------------------------------------------------ */
/* while the box runs: losing policyd is daemon.c's (daemon_lost)      */

/*
 * Has policyd's channel already hung up? When policyd dies, its gateway loses
 * its policyd channel and exits too, and boxd may see the gateway go first:
 * the box was stopped for want of a policy, and that is what to report.
 */
bool
policyd_check_gone(struct box *b)
{
	struct box_daemon *dm = &b->policyd;

	if (!dm->ev || dm->closing || dm->lost)
		return dm->lost;
	struct pollfd pfd = { .fd = box_ipc_event_fd(dm->ev), .events = POLLRDHUP };
	if (poll(&pfd, 1, 0) <= 0 || !(pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)))
		return false;
	daemon_lost(dm, "its channel closed");
	return true;
}

static void on_rotate_timer(evutil_socket_t fd, short what, void *arg);

/* PolicyReady: the start goes on (rotation armed), or policyd's refusal ends it. */
static void
ready_message(struct box_daemon *dm, const Box__PolicyReady *rep)
{
	struct box *b = dm->b;
	struct timeval tv = { 1, 0 };

	if (!rep->ok)
		return daemon_ready(dm, -EPERM, "%s",
				    rep->message && *rep->message ? rep->message :
								    "box-policyd refused to start");
	b->policy_rules = rep->rules;
	log_info("box %s (%s): box-policyd pid %d: %u rules, %u temporal, %llu history events",
		 b->name, b->id, (int)dm->pid, rep->rules, rep->temporal_rules,
		 (unsigned long long)rep->history_events);
	b->rotate_ev = event_new(b->d->base, -1, EV_PERSIST, on_rotate_timer, b);
	if (!b->rotate_ev || event_add(b->rotate_ev, &tv) < 0)
		return daemon_ready(dm, -ENOMEM, "cannot arm the " DECISIONS_FILE
						 " rotation timer");
	daemon_ready(dm, 0, NULL);
}

static void
on_policyd_msg(struct box_daemon *dm, struct box_ipc_msg *m)
{
	/* The policy table allows PolicyReady only in `starting`, then DecideReply in `ready`. */
	if (m->type == BOX__MSG_TYPE__MSG_POLICY_READY && dm->starting)
		ready_message(dm, (const Box__PolicyReady *)m->msg);
}

/* Its channel goes (lost, finish, stop): nothing left to hand a new log fd to. */
static void
on_policyd_closing(struct box_daemon *dm)
{
	struct box *b = dm->b;

	if (b->rotate_ev) {
		event_free(b->rotate_ev);
		b->rotate_ev = NULL;
	}
}

static const struct box_daemon_ops policyd_ops = {
	.name = "box-policyd",
	.ready_name = "PolicyReady",
	.lost_suffix = " (no policy, no box)",
	.proto = &box_proto_policy,
	.peer_role = BOX_POLICY_ROLE_POLICYD,
	.ready_timeout_ms = BOXD_POLICYD_READY_TIMEOUT_MS,
	.exit_wait_ms = BOXD_POLICYD_EXIT_WAIT_MS,
	.on_msg = on_policyd_msg,
	.ready = box_policyd_ready,
	.finished = box_policyd_finished,
	.closing = on_policyd_closing,
};

/* Rename decisions.jsonl to .1, make a new one, hand it to policyd. */
static int
decisions_rotate(struct box *b)
{
	int dfd = b->rc.state_dirfd;

	/*
	 * As root this works in the owner's directory by *at() names only:
	 * renameat moves directory entries (a symlink planted there is moved,
	 * never followed), and O_CREAT|O_EXCL|O_NOFOLLOW makes a new file or
	 * fails — no existing file, link or symlink is ever opened. The new
	 * file then goes to the owner with fchown on its fd.
	 */
	if (renameat(dfd, DECISIONS_FILE, dfd, DECISIONS_OLD) < 0 && errno != ENOENT)
		return -errno;
	int fd = openat(dfd, DECISIONS_FILE,
			O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
			0600);
	if (fd < 0)
		return -errno;
	if (b->d->root && fchown(fd, b->owner.uid, b->owner.gid) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	Box__PolicyLogFd m = BOX__POLICY_LOG_FD__INIT;
	m.generation = ++b->decisions_generation;
	int r = daemon_send(&b->policyd, BOX__MSG_TYPE__MSG_POLICY_LOG_FD, &m.base, &fd, 1);
	if (r < 0) {
		close(fd);
		return r;
	}
	safe_close(b->rc.decisions_fd);
	b->rc.decisions_fd = fd;
	return 0;
}

static void
on_rotate_timer(evutil_socket_t fd, short what, void *arg)
{
	struct box *b = arg;
	struct stat st;

	if (!b->policyd.ev || b->rc.decisions_fd < 0 || fstat(b->rc.decisions_fd, &st) < 0)
		return;
	if ((uint64_t)st.st_size < BOXD_DECISIONS_ROTATE_BYTES)
		return;
	int r = decisions_rotate(b);
	if (r < 0)
		log_warn_errno(r, "box %s (%s): cannot rotate %s/%s", b->name, b->id,
			       b->rc.state_dir, DECISIONS_FILE);
	else
		log_info("box %s (%s): rotated %s", b->name, b->id, DECISIONS_FILE);
}

/* ------------------------------------------------------------------ */
/* start                                                               */

static int
send_init(struct box *b, int dirfd, char **err)
{
	const Box__BoxSpec *s = b->spec;
	Box__PolicyInit in = BOX__POLICY_INIT__INIT;
	char *ns[BOX_POLICY_NAMESPACES_MAX];
	size_t n_ns = 0;
	int r;

	in.box_name = b->name;
	in.box_id = b->id;
	in.home = b->owner.home;
	if (s->has_policy_text) {
		in.has_policy_text = 1;
		in.policy_text = s->policy_text;
	}
	if (s->box->policy)
		in.policy_file = s->box->policy->path;
	/* No key: policyd resolves it (always with a temporal rule, else nothing is written). */
	if (s->box->has_history_sync) {
		in.has_history_sync = 1;
		in.history_sync = s->box->history_sync;
	}
	/* [mcp.NAME] → namespace NAME with every other character than [A-Za-z0-9_] as '_'. */
	for (size_t i = 0; i < s->n_mcp && n_ns < BOX_POLICY_NAMESPACES_MAX; i++) {
		char *v = strdup(s->mcp[i]->name);
		if (!v) {
			r = -ENOMEM;
			goto out;
		}
		for (char *p = v; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			      (*p >= '0' && *p <= '9') || *p == '_'))
				*p = '_';
		ns[n_ns++] = v;
	}
	in.mcp_namespaces = ns;
	in.n_mcp_namespaces = n_ns;
	if (s->agent && s->agent->has_person_shell && s->agent->person_shell) {
		in.has_person_session = 1;
		in.person_session = 1;
	}
	int fds[2] = { dirfd, b->rc.decisions_fd };
	r = box_ipc_event_send(b->policyd.ev, BOX__MSG_TYPE__MSG_POLICY_INIT, 1, &in.base, fds, 2);
	if (r < 0)
		seterr(err, "cannot send PolicyInit to box-policyd: %s", strerror(-r));
out:
	for (size_t i = 0; i < n_ns; i++)
		free(ns[i]);
	return r;
}

int
policyd_start(struct boxd *d, struct box *b, char **err)
{
	_cleanup_free_ char *exe = NULL;
	_cleanup_close_ int dirfd = -1, nullfd = -1;
	uid_t uid;
	gid_t gid;
	int sv[2] = { -1, -1 };
	int r;

	*err = NULL;
	daemon_init(&b->policyd, &policyd_ops, b);
	r = spawn_find_helper(d, "box-policyd", &exe);
	if (r < 0) {
		seterr(err, "cannot find box-policyd: %s", strerror(-r));
		return r;
	}
	r = policyd_ids(d, &uid, &gid);
	if (r < 0) {
		seterr(err, "no user to run box-policyd as (box-daemon or nobody)");
		return r;
	}
	if (b->rc.policy_dirfd < 0 || b->rc.decisions_fd < 0) {
		seterr(err, "the state dir's policy/ and %s are not open", DECISIONS_FILE);
		return -EBADF;
	}
	r = policy_dir_prepare(b, uid, gid, &dirfd, err);
	if (r < 0) {
		if (!*err)
			seterr(err, "cannot prepare %s/policy: %s", b->rc.state_dir,
				       strerror(-r));
		return r;
	}
	nullfd = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (nullfd < 0)
		return -errno;
	/* A detached embedded box's boxd writes to agent.log; so does its policyd. */
	const char *level_arg;
	int errfd = daemon_stderr(b, nullfd, &level_arg);

	/* Its environment: nothing of a user's; the test hooks only if boxd was given them. */
	char env_clock[96], env_delay[96];
	char *envp[4];
	size_t ne = 0;
	const char *v = getenv("BOX_TEST_CLOCK");
	if (v && strlen(v) < 64) {
		snprintf(env_clock, sizeof(env_clock), "BOX_TEST_CLOCK=%s", v);
		envp[ne++] = env_clock;
	}
	const char *delay = getenv("BOX_TEST_POLICYD_EXIT_DELAY_MS");
	const char *delay_name = getenv("BOX_TEST_POLICYD_EXIT_DELAY_NAME");
	if (delay && strlen(delay) < 16 && (!delay_name || strcmp(delay_name, b->name) == 0)) {
		snprintf(env_delay, sizeof(env_delay), "BOX_TEST_POLICYD_EXIT_DELAY_MS=%s", delay);
		envp[ne++] = env_delay;
	}
#if BOXD_ASAN
	/* LeakSanitizer cannot stop the world under policyd's seccomp filter. */
	envp[ne++] = (char *)"ASAN_OPTIONS=detect_leaks=0";
#endif
	envp[ne] = NULL;
	char uid_s[16], gid_s[16];
	snprintf(uid_s, sizeof(uid_s), "%u", (unsigned)uid);
	snprintf(gid_s, sizeof(gid_s), "%u", (unsigned)gid);
	char *argv[] = { (char *)"box-policyd", (char *)"-u", uid_s, (char *)"-g", gid_s,
			 (char *)level_arg, NULL };

	int gw[2] = { -1, -1 }, sh[2] = { -1, -1 }, mc[2] = { -1, -1 };
	r = box_ipc_socketpair(sv, false);
	if (r < 0)
		return r;
	r = box_ipc_socketpair(gw, false);
	if (r >= 0 && (r = box_ipc_socketpair(sh, false)) < 0) {
		close(gw[0]);
		close(gw[1]);
	}
	if (r >= 0 && mcpd_wanted(b->spec) && (r = box_ipc_socketpair(mc, false)) < 0) {
		close(gw[0]);
		close(gw[1]);
		close(sh[0]);
		close(sh[1]);
	}
	if (r < 0) {
		close(sv[0]);
		close(sv[1]);
		return r;
	}
	int fds[7] = { nullfd, nullfd, errfd, sv[1], gw[1], mc[1], sh[1] };
	struct spawn_req req = { .path = exe, .argv = argv, .envp = envp, .fds = fds,
				 .n_fds = POLICYD_SHELL_FD + 1 };
	pid_t pid = 0;
	r = spawn_process(&req, &pid);
	close(sv[1]);
	close(gw[1]);
	close(sh[1]);
	safe_close(mc[1]);
	safe_close(b->mcpd_policyd_fd);
	b->mcpd_policyd_fd = mc[0];
	safe_close(b->gateway_policyd_fd);
	b->gateway_policyd_fd = gw[0];
	safe_close(b->shell_policyd_fd);
	b->shell_policyd_fd = sh[0];
	if (r < 0) {
		close(sv[0]);
		seterr(err, "cannot start %s: %s", exe, strerror(-r));
		return r;
	}
	if ((r = daemon_watch(&b->policyd, pid, sv[0], err)) < 0)
		return r;
	return send_init(b, dirfd, err);
}

/* ------------------------------------------------------------------ */
/* the end: closing fd 3 ends policyd (it flushes and syncs first)     */

bool
policyd_reaped(struct box *b, pid_t pid, int status)
{
	return b->policyd.ops && daemon_reaped(&b->policyd, pid, status);
}

bool
policyd_finish(struct box *b)
{
	return b->policyd.ops && daemon_finish(&b->policyd);
}

void
policyd_stop(struct box *b)
{
	daemon_stop(&b->policyd);
	if (b->rotate_ev) {
		event_free(b->rotate_ev);
		b->rotate_ev = NULL;
	}
}
