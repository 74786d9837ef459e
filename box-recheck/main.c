/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c — box-recheck: one box start's paths, re-checked as the box owner
 * (one role per binary: boxd exec's it for every RunRequest; it is not a
 * fork of boxd's image).
 *
 * A user never grants what it cannot reach itself. Started by boxd (as
 * root for a service boxd) with fd 3 = its channel, it reads one
 * RecheckRequest (proto/recheck.proto), looks up boxd's sockets while it
 * still has boxd's rights, switches to the owner's uid, gid and
 * supplementary groups with privdrop_switch_ids() and locks itself down
 * (privdrop_lock_down: capabilities, no_new_privs, not dumpable) before it
 * touches a single path of the request. Then, as the owner: every grant,
 * the workspace, the agent's program and its #! chain, each [tool.NAME]'s
 * grants and canonical program (check.c); the state
 * dir (created 0700, so it is the owner's) with its run lock, STATE/policy/
 * (created 0700; an O_PATH fd, as a later run finds it owned by
 * box-policyd's uid), STATE/decisions.jsonl (O_APPEND), STATE/ca.pem
 * (O_WRONLY|O_CREAT|O_NOFOLLOW, 0644, not truncated: a second run of a
 * running box must not empty the running one's certificate before boxd
 * finds the lock held — boxd truncates and writes it once the lock is its)
 * and — for --detach — agent.log; the masks and the socket / hard-link scan. It answers with one
 * RecheckReply carrying those fds (SCM_RIGHTS) and exits. An unreachable
 * grant is a refusal in the reply, not a failure of the helper.
 * Start-up ends in its own seccomp allow-list (seccomp.c): from the first
 * check on it can only look at files, make the state dirs, answer and exit.
 * Test hooks (boxd passes them from its own environment; they only slow a
 * step): BOX_TEST_SCAN_DELAY_MS (the socket scan), BOX_TEST_RECHECK_STALL_MS
 * (the whole recheck: after the start-up, before the first check).
 * Trusts: boxd, its parent (the request after box_ipc_decode() validated
 * it); nothing on the file system — every path is looked at with the
 * owner's rights only.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "daemon_fds.h" /* fd 3: its channel with boxd, as every helper's */
#include "fdutil.h"
#include "ipc.h"
#include "log.h"
#include "parse.h"
#include "privdrop.h"
#include "proto_recheck.h"
#include "recheck.h"
#include "recheck_shared.h"
#include "testhook.h"

#define RECHECK_REQUEST_WAIT_MS 20000

/* Exit codes boxd may see (it reports "cannot re-check the request"). */
enum {
	EXIT_NOMEM = 3,
	EXIT_PRIVDROP = 4,
	EXIT_CHANNEL = 5,
};

/* fd 3 must be the SOCK_SEQPACKET boxd gave us. */
static void
check_channel(void)
{
	int type = 0;
	socklen_t l = sizeof(type);

	if (getsockopt(DAEMON_FD_BOXD, SOL_SOCKET, SO_TYPE, &type, &l) < 0 ||
	    type != SOCK_SEQPACKET)
		fatalx("fd 3 is not a SOCK_SEQPACKET socket (boxd starts me)");
	(void)fd_set_cloexec(DAEMON_FD_BOXD, true);
}

static const Box__RecheckRequest *
read_request(struct box_ipc_msg *m)
{
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *chan =
		box_ipc_chan_new(DAEMON_FD_BOXD, &box_proto_recheck, BOX_RECHECK_ROLE_BOXD);
	uint32_t type = BOX__MSG_TYPE__MSG_RECHECK_REQUEST;

	if (!chan || box_ipc_chan_allow(chan, &type, 1) < 0)
		exit(EXIT_NOMEM);
	int r = box_ipc_recv_wait(chan, m, RECHECK_REQUEST_WAIT_MS);
	if (r < 0)
		fatal(r, "reading the RecheckRequest");
	return (const Box__RecheckRequest *)m->msg;
}

/* A BOX_TEST_* delay in milliseconds from our environment (1..max), or 0 (a bad one too). */
static unsigned
test_delay_ms(const char *name, uint64_t max)
{
	uint64_t ms;
	return box_test_ms(name, max, &ms) == 0 ? (unsigned)ms : 0;
}

static void
child_init(struct child *c, const Box__RecheckRequest *q)
{
	c->owner = q->owner->name;
	c->owner_uid = q->owner->uid;
	c->fs = q->agent->filesystem;
	box_walk_budget_init(&c->walk, BOX_WALK_ENTRIES_MAX, BOX_WALK_TIME_MS);
	/* A test hook that only slows a step (HACKING.md): the scan's time bound is then reached. */
	c->scan_delay_ms = test_delay_ms("BOX_TEST_SCAN_DELAY_MS", 999);
}

/*
 * Before the privilege drop: the identities of boxd's sockets. These paths
 * are boxd's own (its --listen path, its environment, /run/box), so following
 * a symlink among them (BOX_SOCKET may name one) is safe here.
 */
static void
stat_boxd_sockets(struct child *c, const Box__RecheckRequest *q)
{
	struct stat st;

	for (size_t i = 0; i < q->n_boxd_sockets && c->n_boxd_sockets < ELEMENTSOF(c->boxd_sockets);
	     i++)
		if (stat(q->boxd_sockets[i], &st) == 0 && S_ISSOCK(st.st_mode))
			c->boxd_sockets[c->n_boxd_sockets++] =
				(struct socket_id){ st.st_dev, st.st_ino, q->boxd_sockets[i] };
}

/*
 * The owner's rights, nothing more: its ids (and, when we are root, its
 * groups), then no capabilities, no_new_privs, not dumpable. A root owner
 * keeps root's capabilities: its recheck reaches what root reaches, as it
 * always did (the owner's rights are the measure).
 */
static void
become_owner(const Box__RecheckRequest *q)
{
	gid_t groups[256];
	const char *failed = NULL;
	int r;

	for (size_t i = 0; i < q->owner->n_groups && i < ELEMENTSOF(groups); i++)
		groups[i] = q->owner->groups[i];
	struct privdrop pd = { .uid = q->owner->uid, .gid = q->owner->gid, .groups = groups,
			       .n_groups = q->owner->n_groups };
	r = privdrop_switch_ids(&pd, &failed);
	if (r < 0) {
		log_err_errno(r, "cannot become the box owner (%s) at %s: %m", q->owner->name,
			      failed ? failed : "?");
		exit(EXIT_PRIVDROP);
	}
	if (q->owner->uid != 0)
		r = privdrop_lock_down(true, &failed);
	else if ((r = privdrop_no_new_privs()) < 0)
		failed = "PR_SET_NO_NEW_PRIVS";
	if (r < 0) {
		log_err_errno(r, "cannot lock down at %s: %m", failed ? failed : "?");
		exit(EXIT_PRIVDROP);
	}
	/* boxd gone: nothing to answer (set after the id change, which clears it). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
		exit(EXIT_PRIVDROP);
	umask(077);
}

static void
install_seccomp(void)
{
	int r = recheck_seccomp();
	if (r < 0) {
		log_err_errno(r, "cannot install the seccomp filter: %m");
		exit(EXIT_PRIVDROP);
	}
}

/* One of the state dir's files, opened as the owner through the dir's fd. */
static int
open_state_file_mode(struct child *c, const Box__RecheckRequest *q, int dirfd, const char *name,
		     int flags, mode_t mode)
{
	uint32_t sline = q->box->state_dir ? q->box->state_dir->line : q->box->line;
	int fd = openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);

	if (fd < 0)
		child_problem(c, sline, "box", "state_dir", "%s/%s: %s", q->state_dir, name,
			      strerror(errno));
	return fd;
}

static int
open_state_file(struct child *c, const Box__RecheckRequest *q, int dirfd, const char *name,
		int flags)
{
	return open_state_file_mode(c, q, dirfd, name, flags, 0600);
}

/* STATE/policy/: created 0700; O_PATH, as a later run finds it owned by box-policyd's uid. */
static int
open_policy_dir(struct child *c, const Box__RecheckRequest *q, int dirfd)
{
	uint32_t sline = q->box->state_dir ? q->box->state_dir->line : q->box->line;
	int fd;

	if (mkdirat(dirfd, "policy", 0700) < 0 && errno != EEXIST) {
		child_problem(c, sline, "box", "state_dir", "cannot create %s/policy: %s",
			      q->state_dir, strerror(errno));
		return -1;
	}
	fd = openat(dirfd, "policy", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		child_problem(c, sline, "box", "state_dir", "%s/policy: %s", q->state_dir,
			      strerror(errno));
	return fd;
}

/* The state dir, the owner's and not writable by others, or -1 with a problem. */
static int
open_state_dir(struct child *c, const Box__RecheckRequest *q)
{
	uint32_t sline = q->box->state_dir ? q->box->state_dir->line : q->box->line;
	struct stat st;
	int r = mkdir_p(q->state_dir);
	Box__Problem *p = NULL;

	if (r < 0) {
		p = state_dir_problem(sline, q->state_dir, NULL, -r, c->owner_uid, c->owner);
	} else {
		_cleanup_close_ int fd =
			open(q->state_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0) {
			child_problem(c, sline, "box", "state_dir", "cannot open %s: %s",
				      q->state_dir, strerror(errno));
			return -1;
		}
		if (!(p = state_dir_problem(sline, q->state_dir, &st, 0, c->owner_uid, c->owner)))
			return TAKE_FD(fd);
	}
	child_problem(c, sline, "box", "state_dir", "%s",
		      p && p->message ? p->message : "out of memory");
	problem_free(p);
	return -1;
}

/*
 * A [telemetry.NAME] kind = file destination, as the owner: appended to,
 * created 0600 when missing, a regular file only (O_NONBLOCK: a FIFO planted
 * there cannot hold the open; it is refused after). As the owner, whatever
 * the path reaches the owner could reach itself.
 */
static int
open_telemetry_file(struct child *c, const Box__CfgTelemetry *t)
{
	_cleanup_free_ char *sec = NULL;
	struct stat st;
	const char *path = t->destination->value;

	if (asprintf(&sec, "telemetry.%s", t->name) < 0)
		sec = NULL;
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOCTTY | O_NONBLOCK | O_CLOEXEC,
		      0600);
	if (fd < 0) {
		child_problem(c, t->destination->line, sec ? sec : "telemetry", "destination",
			      "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		child_problem(c, t->destination->line, sec ? sec : "telemetry", "destination",
			      "%s is not a regular file", path);
		return -1;
	}
	/* Writes block as a regular file's do (O_NONBLOCK only guarded the open). */
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

/*
 * The state dir, lock, policy/, decisions.jsonl, agent.log (detach) into
 * fds[]; returns how many (all of them, or 0).
 */
static unsigned
open_state_files(struct child *c, const Box__RecheckRequest *q, int fds[RECHECK_FDS_MAX])
{
	unsigned n = q->detach ? 6 : 5;

	fds[0] = open_state_dir(c, q);
	if (fds[0] < 0)
		return 0;
	fds[1] = open_state_file(c, q, fds[0], "lock", O_RDWR | O_CREAT | O_NONBLOCK);
	fds[2] = open_policy_dir(c, q, fds[0]);
	fds[3] = open_state_file(c, q, fds[0], "decisions.jsonl",
				 O_WRONLY | O_APPEND | O_CREAT | O_NOCTTY | O_NONBLOCK);
	/* The CA certificate every sandbox trusts, readable by all (it is no secret). */
	fds[4] = open_state_file_mode(c, q, fds[0], "ca.pem",
				      O_WRONLY | O_CREAT | O_NOCTTY | O_NONBLOCK, 0644);
	if (q->detach)
		fds[5] = open_state_file(c, q, fds[0], "agent.log",
					 O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK);
	for (size_t i = 0; i < q->n_telemetry && i < BOX_TELEMETRY_FILES_MAX; i++)
		fds[n + i] = open_telemetry_file(c, q->telemetry[i]);
	for (unsigned i = 0; i < n + q->n_telemetry; i++)
		if (fds[i] < 0)
			return 0;
	return n + (unsigned)q->n_telemetry;
}

/* One RecheckReply; the fds only when there is no refusal. */
static void
send_reply(const struct child *c, const int *fds, unsigned n_fds)
{
	Box__RecheckReply reply = BOX__RECHECK_REPLY__INIT;

	reply.status = c->n_problems ? BOX__REPLY_STATUS__REPLY_REFUSED :
				       BOX__REPLY_STATUS__REPLY_OK;
	reply.problems = (Box__Problem **)c->problems;
	reply.n_problems = c->n_problems;
	reply.disclosure = (char **)c->records;
	reply.n_disclosure = c->n_records;
	reply.n_fds = c->n_problems ? 0 : n_fds;
	int r = box_ipc_send(DAEMON_FD_BOXD, &box_proto_recheck, BOX__MSG_TYPE__MSG_RECHECK_REPLY, 0, &reply.base,
			     fds, reply.n_fds);
	if (r < 0) {
		log_err_errno(r, "sending the RecheckReply: %m");
		exit(EXIT_CHANNEL);
	}
}

int
main(int argc, char **argv)
{
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	struct child c = { 0 };
	int fds[RECHECK_FDS_MAX];
	for (size_t i = 0; i < RECHECK_FDS_MAX; i++)
		fds[i] = -1;

	log_init("box-recheck", 0);
	signal(SIGPIPE, SIG_IGN);
	check_channel();
	const Box__RecheckRequest *q = read_request(&m);
	child_init(&c, q);
	stat_boxd_sockets(&c, q);
	become_owner(q);
	install_seccomp();
	box_sleep_ms(test_delay_ms("BOX_TEST_RECHECK_STALL_MS", 60000));
	check_grants(&c);
	check_workspace(&c, q);
	check_command(&c, q);
	check_loaders(&c);
	check_tools(&c, q);
	check_mcp(&c, q);
	unsigned n_fds = open_state_files(&c, q, fds);
	/* After the state dir exists: masks, then the walks (which skip what is masked). */
	child_masks(&c, q->mask_candidates, q->n_mask_candidates, c.fs);
	for (size_t i = 0; i < q->n_tools; i++)
		child_masks(&c, q->mask_candidates, q->n_mask_candidates, q->tools[i]->filesystem);
	for (size_t i = 0; i < q->n_mcp; i++)
		child_masks(&c, q->mask_candidates, q->n_mask_candidates, q->mcp[i]->filesystem);
	child_scan(&c, q);
	send_reply(&c, fds, n_fds);
	return 0;
}
