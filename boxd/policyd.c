/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policyd.c — boxd's side of box-policyd, the per-box policy daemon
 * (docs/design.md; box-policyd/README.md).
 *
 * For every box, before its trampoline: box-policyd started from its entry
 * in daemon_table (daemon.c: program, ids — an embedded boxd's own, a
 * service boxd's daemon user, switched in the child before execve — log,
 * the test hooks BOX_TEST_CLOCK and BOX_TEST_POLICYD_EXIT_DELAY_MS, the
 * latter only for the box BOX_TEST_POLICYD_EXIT_DELAY_NAME names, when
 * set) with fd 3 = our end of its channel and one end of a SOCK_SEQPACKET
 * socketpair per peer at common/daemon_fds.h's numbers: POLICYD_FD_GATEWAY
 * (the other end kept in the module's handle until gateway.c spawns
 * box-gateway with it at DAEMON_FD_POLICYD), POLICYD_FD_MCPD only when the
 * box has a stdio [mcp] (else closed: nothing would speak on it; the other
 * end kept for box-mcpd), POLICYD_FD_SHELL (the other end kept for box-shell;
 * each taken with policyd_take_peer()). Then PolicyInit with the
 * STATE/policy/ dir fd and the
 * decisions.jsonl fd that box-recheck opened as the owner; PolicyReady
 * arrives as an event (box_policyd_ready(): the box start goes on), or a
 * refusal (a corrupt history…) refuses the box with policyd's message, or
 * BOXD_POLICYD_READY_TIMEOUT_MS pass and the start fails — boxd's loop never
 * waits for it. While the box runs, policyd going away stops the box
 * (fail closed: "box-policyd exited (…): the box was stopped (no policy,
 * no box)"). A one-second timer rotates decisions.jsonl at 64 MiB
 * (BOX_TEST_DECISIONS_ROTATE_BYTES lowers it for tests). The decision log's
 * chain (common/logchain.h): the head kept of the last run goes to policyd in
 * PolicyInit; each PolicyLogHead policyd sends updates it, and it is written
 * (chain_save) within a second, at once after a rotation and at the seal.
 * When the box ends, a half-close of fd 3 ends policyd (it writes its decision
 * lines, syncs the history, writes the seal line and sends its sealed head on
 * its end, which boxd still reads); the box finishes when its exit is reaped (an
 * event: RunExit follows that final flush), or after
 * BOXD_POLICYD_EXIT_WAIT_MS with a SIGKILL. The channel, the ready wait,
 * the loss and the exit wait are daemon.c's, as for every per-box daemon.
 * Trusts: nothing policyd sends beyond box_ipc_decode()'s validation; the
 * fds from box-recheck only after fstat checks here.
 */
#include <dirent.h>
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

#include "askfield.h"
#include "boxd.h"
#include "cleanup.h"
#include "fdutil.h"
#include "ipc.h"
#include "log.h"
#include "logchain.h"
#include "parse.h"
#include "path.h"
#include "policy.pb-c.h"
#include "policy_validate.h"
#include "proto_policy.h"
#include "spawn.h"
#include "spec_check.h"
#include "validate.h" /* BOX_TELEMETRY_TARGETS_MAX */

#define DECISIONS_FILE "decisions.jsonl"
#define DECISIONS_OLD "decisions.jsonl.1"
#define POLICYD_ASK_WAITS 16

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
/*
 * A policy dir box-policyd kept as the shared box-daemon before it had a user of its
 * own: the files that user made in it (its history, never a symlink: only that user
 * could write in the 0700 dir) become box-policyd's, so it reads its history on.
 */
static int
policy_dir_files_take(int dfd, uid_t from, uid_t uid, gid_t gid)
{
	DIR *dir;
	int r = fd_opendir_at(dfd, ".", &dir);
	if (r < 0)
		return r;
	for (struct dirent *e; r == 0 && (e = readdir(dir));) {
		struct stat st;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = -errno;
			break;
		}
		if (!S_ISREG(st.st_mode) || st.st_uid != from)
			continue;
		if (fchownat(dfd, e->d_name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
			r = -errno;
	}
	closedir(dir);
	return r;
}

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
	if (st.st_uid != b->owner.uid && st.st_uid != uid &&
	    !daemon_uid_earlier(b->d, DAEMON_POLICYD, st.st_uid)) {
		seterr(err, "%s/policy is owned by uid %u, neither the box owner nor box-policyd",
			       b->rc.state_dir, (unsigned)st.st_uid);
		return -EPERM;
	}
	bool from_earlier_user = st.st_uid != uid && st.st_uid != b->owner.uid;
	uid_t earlier_uid = st.st_uid;
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
	if (from_earlier_user) {
		int r = policy_dir_files_take(fd, earlier_uid, uid, gid);
		if (r < 0) {
			close(fd);
			seterr(err, "cannot give the files of %s/policy to box-policyd (uid %u): %s",
			       b->rc.state_dir, (unsigned)uid, strerror(-r));
			return r;
		}
	}
	*ret = fd;
	return 0;
}

/* The box's box-policyd (b->policyd). */
struct policyd {
	struct box_daemon dm;     /* its lifecycle (daemon.c) */
	struct event *rotate_ev;  /* decisions.jsonl size check, every second */
	uint32_t decisions_generation;
	/* The decision log chain's record (common/logchain.h): loaded at start, kept up to date */
	struct logchain_record chain;
	bool chain_dirty; /* a newer head than the file holds: written within a second */
	/* policyd's end of each peer's channel until that peer is spawned (-1: taken, none) */
	int peer_fd[DAEMON__N];
	int tel_fd; /* the gateway's end of the telemetry channel, until it starts */
	/* `boxctl policy reload`: one at a time; the client (NULL once gone) waits for its reply */
	bool reload_busy;
	struct client *reload_client;
	uint64_t reload_rid;
	/*
	 * `boxctl approve|deny`: the requests sent to box-policyd (PolicyAskList or
	 * PolicyAskAnswer), answered in order on fd 3; a client gone is NULL.
	 */
	struct ask_wait {
		struct client *c;
		uint64_t rid;
	} ask_waits[POLICYD_ASK_WAITS];
	unsigned n_ask_waits;
};

int
policyd_new(struct box *b)
{
	struct policyd *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (int i = 0; i < DAEMON__N; i++)
		p->peer_fd[i] = -1;
	p->tel_fd = -1;
	b->policyd = p;
	return 0;
}

int
policyd_take_peer(struct box *b, enum daemon_id peer)
{
	return b->policyd ? TAKE_FD(b->policyd->peer_fd[peer]) : -1;
}

int
policyd_take_telemetry(struct box *b)
{
	return b->policyd ? TAKE_FD(b->policyd->tel_fd) : -1;
}

static void
peers_close(struct policyd *p)
{
	for (int i = 0; i < DAEMON__N; i++)
		p->peer_fd[i] = safe_close(p->peer_fd[i]);
	p->tel_fd = safe_close(p->tel_fd);
}

static void
rotate_stop(struct policyd *p)
{
	if (p->rotate_ev) {
		event_free(p->rotate_ev);
		p->rotate_ev = NULL;
	}
}

/* ------------------------------------------------------------------ */
/* the decision log chain's record (common/logchain.h)                 */

/*
 * Where the record of B's chain is kept: a root boxd's in
 * LOGCHAIN_SERVICE_DIR/UID/KEY, root-owned (0640, the owner's group may read,
 * so `boxctl log --verify` as the owner can; nobody but root can write or
 * replace it: the directories are root's, 0755 and 0750); an unprivileged
 * boxd's in the state dir (LOGCHAIN_STATE_FILE), which its owner can write —
 * against the owner that proves nothing (docs/boxctl.1.md "The chain").
 * *RET_DIR: an fd of the directory (O_PATH for the service), *NAME: the file name.
 * Race: /var/lib/box and what is below it are root's (state_dir_choose checked
 * /var/lib/box): no entry can be swapped by anyone else; each step is an *at()
 * call with O_NOFOLLOW relative to the fd before it.
 */
static int
chain_dir(const struct box *b, bool create, int *ret_dir, char name[LOGCHAIN_HEX_LEN + 8])
{
	if (!b->d->root) {
		if (b->rc.state_dirfd < 0)
			return -EBADF;
		*ret_dir = fcntl(b->rc.state_dirfd, F_DUPFD_CLOEXEC, 3);
		(void)snprintf(name, LOGCHAIN_HEX_LEN + 8, "%s", LOGCHAIN_STATE_FILE);
		return *ret_dir < 0 ? -errno : 0;
	}
	char uid[16];
	if (create && mkdir("/var/lib/box", 0755) < 0 && errno != EEXIST)
		return -errno;
	_cleanup_close_ int lib = open("/var/lib/box", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (lib < 0)
		return -errno;
	if (create && mkdirat(lib, "chain", 0755) < 0 && errno != EEXIST)
		return -errno;
	_cleanup_close_ int ch = openat(lib, "chain", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (ch < 0)
		return -errno;
	if (fstat(ch, &st) < 0 || st.st_uid != 0 || (st.st_mode & 022))
		return -EPERM;
	(void)snprintf(uid, sizeof(uid), "%u", (unsigned)b->owner.uid);
	if (create && mkdirat(ch, uid, 0750) < 0 && errno != EEXIST)
		return -errno;
	int fd = openat(ch, uid, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* root's, the owner's group may read: the owner verifies, nobody else writes */
	if (create && (fchown(fd, 0, b->owner.gid) < 0 || fchmod(fd, 0750) < 0)) {
		int r = -errno;
		close(fd);
		return r;
	}
	*ret_dir = fd;
	logchain_key(b->rc.state_dir, name);
	return 0;
}

/* Load B's record: 1, 0 (none: the chain starts at genesis), negative errno. */
static int
chain_load(struct box *b)
{
	_cleanup_close_ int dir = -1;
	char name[LOGCHAIN_HEX_LEN + 8], buf[LOGCHAIN_RECORD_MAX + 1];

	b->policyd->chain = (struct logchain_record){ 0 };
	int r = chain_dir(b, false, &dir, name);
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	_cleanup_close_ int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return -EPERM;
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n < 0)
		return -errno;
	if ((size_t)n > LOGCHAIN_RECORD_MAX)
		return -EFBIG;
	r = logchain_record_parse(buf, (size_t)n, &b->policyd->chain);
	if (r < 0) {
		b->policyd->chain = (struct logchain_record){ 0 };
		return r;
	}
	return 1;
}

/*
 * Write B's record (a new file renamed over the old one); SYNC: fsynced first
 * (at a rotation and at the end; the once-a-second refresh is not).
 */
static int
chain_save(struct box *b, bool sync)
{
	_cleanup_close_ int dir = -1;
	char name[LOGCHAIN_HEX_LEN + 8], tmp[LOGCHAIN_HEX_LEN + 16], buf[LOGCHAIN_RECORD_MAX];

	int len = logchain_record_format(&b->policyd->chain, buf, sizeof(buf));
	if (len < 0)
		return len;
	int r = chain_dir(b, true, &dir, name);
	if (r < 0)
		return r;
	(void)snprintf(tmp, sizeof(tmp), "%s.new", name);
	(void)unlinkat(dir, tmp, 0);
	_cleanup_close_ int fd = openat(dir, tmp,
					O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
					b->d->root ? 0640 : 0600);
	if (fd < 0)
		return -errno;
	if (b->d->root && fchown(fd, 0, b->owner.gid) < 0)
		r = -errno;
	if (r == 0) {
		ssize_t n = write(fd, buf, (size_t)len);
		r = n < 0 ? -errno : n != len ? -EIO : 0;
	}
	if (r == 0 && sync && fsync(fd) < 0)
		r = -errno;
	if (r == 0 && renameat(dir, tmp, dir, name) < 0)
		r = -errno;
	if (r < 0)
		(void)unlinkat(dir, tmp, 0);
	else
		b->policyd->chain_dirty = false;
	return r;
}

static void
chain_save_logged(struct box *b, bool sync)
{
	int r = chain_save(b, sync);
	if (r < 0)
		log_warn_errno(r, "box %s (%s): cannot keep the decision log's head", b->name, b->id);
}

/* PolicyLogHead: a newer head (never an older one), a rotation point, the seal. */
static void
chain_head(struct box *b, const Box__PolicyLogHead *h)
{
	struct logchain_record *c = &b->policyd->chain;
	struct logchain_point p = { .seq = h->seq };

	if (h->seq < c->head.seq || h->head.len != sizeof(p.head))
		return;
	memcpy(p.head, h->head.data, sizeof(p.head));
	c->head = p;
	c->sealed = h->sealed;
	if (h->rotated)
		logchain_record_rotated(c, &p);
	b->policyd->chain_dirty = true;
	if (h->rotated || h->sealed)
		chain_save_logged(b, true);
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
	struct box_daemon *dm = &b->policyd->dm;

	if (!dm->ev || dm->closing || dm->lost)
		return dm->lost;
	struct pollfd pfd = { .fd = box_ipc_event_fd(dm->ev), .events = POLLRDHUP };
	if (poll(&pfd, 1, 0) <= 0 || !(pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)))
		return false;
	/*
	 * What it said before it hung up counts first, as on_reaped reads it: a ready
	 * message refusing the box (a corrupt history) is the start's reason.
	 */
	if (dm->starting)
		(void)box_ipc_event_drain(dm->ev, 16);
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
		 b->name, b->id, (int)dm->child.pid, rep->rules, rep->temporal_rules,
		 (unsigned long long)rep->history_events);
	b->policyd->rotate_ev = event_new(b->d->base, -1, EV_PERSIST, on_rotate_timer, b);
	if (!b->policyd->rotate_ev || event_add(b->policyd->rotate_ev, &tv) < 0)
		return daemon_ready(dm, -ENOMEM, "cannot arm the " DECISIONS_FILE
						 " rotation timer");
	daemon_ready(dm, 0, NULL);
}

/* The answer to the waiting `boxctl policy reload` (its client may be gone). */
static void
reload_answer(struct box *b, const Box__PolicyReloadReply *rep, const char *error)
{
	struct policyd *p = b->policyd;
	Box__PolicyReloadResult res = BOX__POLICY_RELOAD_RESULT__INIT;
	char msg[BOX_STR_MAX + 1];

	if (!p->reload_busy)
		return;
	p->reload_busy = false;
	struct client *c = TAKE_PTR(p->reload_client);
	res.box_id = b->id;
	res.name = b->name;
	if (rep && rep->ok) {
		res.status = BOX__REPLY_STATUS__REPLY_OK;
		res.has_generation = res.has_rules = res.has_rules_kept = true;
		res.has_temporal_rules = true;
		res.generation = rep->generation;
		res.rules = rep->rules;
		res.rules_kept = rep->rules_kept;
		res.temporal_rules = rep->temporal_rules;
		b->policy_rules = rep->rules;
		log_info("box %s (%s): policy generation %llu in force (%u rules, %u of %u temporal "
			 "rules kept their events)",
			 b->name, b->id, (unsigned long long)rep->generation, rep->rules,
			 rep->rules_kept, rep->temporal_rules);
	} else {
		res.status = rep ? BOX__REPLY_STATUS__REPLY_REFUSED : BOX__REPLY_STATUS__REPLY_FAILED;
		snprintf(msg, sizeof(msg), "%s", rep && rep->message ? rep->message : error);
		res.error = msg;
	}
	if (c)
		(void)client_send(c, BOX__MSG_TYPE__MSG_POLICY_RELOAD_RESULT, p->reload_rid,
				  &res.base, NULL, 0);
}

/* box-policyd's answer to the oldest `boxctl approve|deny` (M NULL: it went away). */
static void
ask_answer_client(struct box *b, const struct box_ipc_msg *m)
{
	struct policyd *p = b->policyd;
	Box__AskReply rep = BOX__ASK_REPLY__INIT;
	Box__AskEntry items[BOX_POLICY_ASKS_MAX], *ptrs[BOX_POLICY_ASKS_MAX];
	struct ask_fields *fields = NULL;
	char err[BOX_STR_MAX + 1];

	if (p->n_ask_waits == 0)
		return;
	struct ask_wait w = p->ask_waits[0];
	memmove(p->ask_waits, p->ask_waits + 1, --p->n_ask_waits * sizeof(p->ask_waits[0]));
	rep.box_id = b->id;
	rep.name = b->name;
	if (!m) {
		rep.status = BOX__REPLY_STATUS__REPLY_FAILED;
		rep.error = (char *)"box-policyd went away before it answered";
	} else if (m->type == BOX__MSG_TYPE__MSG_POLICY_ASK_LIST_REPLY) {
		const Box__PolicyAskListReply *l = (const Box__PolicyAskListReply *)m->msg;
		rep.status = BOX__REPLY_STATUS__REPLY_OK;
		/* The fields as text (askfield.c); without memory the listing goes without them. */
		fields = l->n_asks ? calloc(l->n_asks < BOX_POLICY_ASKS_MAX ? l->n_asks :
						   BOX_POLICY_ASKS_MAX, sizeof(*fields)) : NULL;
		for (size_t i = 0; i < l->n_asks && i < BOX_POLICY_ASKS_MAX; i++) {
			const Box__PolicyAsk *a = l->asks[i];
			box__ask_entry__init(&items[i]);
			/* (no control character reaches boxctl: box_validate_ask_reply) */
			for (char *s = a->resource; *s; s++)
				if ((unsigned char)*s < 0x20 || *s == 0x7f)
					*s = '?';
			for (char *s = a->message; *s; s++)
				if ((unsigned char)*s < 0x20 || *s == 0x7f)
					*s = '?';
			items[i].ask_id = a->ask_id;
			items[i].action = a->action;
			items[i].resource = a->resource;
			items[i].rules = a->rules;
			items[i].n_rules = a->n_rules;
			items[i].message = a->message;
			items[i].source = a->source;
			items[i].waited_ms = a->waited_ms;
			items[i].has_by_default = a->by_default;
			items[i].by_default = a->by_default;
			/* The request's fields, for `boxctl approve --always` (JSON: boxctl speaks
			 * no policy protocol). */
			items[i].input = a->input_json;
			if (fields) {
				ask_fields_render(&fields[i], a->input, a->n_input);
				items[i].fields = fields[i].p;
				items[i].n_fields = fields[i].n;
			}
			ptrs[i] = &items[i];
			rep.n_asks = i + 1;
		}
		rep.asks = ptrs;
		rep.has_policy_sha256 = l->has_policy_sha256;
		rep.policy_sha256 = l->policy_sha256;
		rep.policy_file = l->policy_file;
	} else {
		const Box__PolicyAskAnswerReply *a = (const Box__PolicyAskAnswerReply *)m->msg;
		rep.status = a->ok ? BOX__REPLY_STATUS__REPLY_OK : BOX__REPLY_STATUS__REPLY_NOT_FOUND;
		if (!a->ok) {
			snprintf(err, sizeof(err), "%s", a->message);
			rep.error = err;
		}
	}
	if (w.c)
		(void)client_send(w.c, BOX__MSG_TYPE__MSG_ASK_REPLY, w.rid, &rep.base, NULL, 0);
	free(fields);
}

/*
 * A sandbox's kernel refusal report (kernel.c) to box-policyd, for the telemetry
 * targets that include `kernel` (bit 8); nothing when none does, or box-policyd is
 * not serving (not ready yet, or gone: those reports reach kernel.jsonl alone).
 */
void
policyd_kernel_refusal(struct box *b, const char *sandbox, const char *syscall_name,
		       uint32_t err, uint32_t count, bool first)
{
	struct policyd *p = b->policyd;
	const Box__BoxSpec *s = b->spec;
	bool wanted = false;

	for (size_t i = 0; s && i < s->n_telemetry; i++)
		if (s->telemetry[i]->include & 8u)
			wanted = true;
	if (!wanted || !p || !p->dm.ev || p->dm.starting || p->dm.closing)
		return;
	Box__PolicyKernelRefusal m = BOX__POLICY_KERNEL_REFUSAL__INIT;
	m.sandbox = (char *)sandbox;
	m.syscall = (char *)syscall_name;
	m.errno_value = err;
	m.count = count;
	m.has_first = first;
	m.first = first;
	int r = daemon_send(&p->dm, BOX__MSG_TYPE__MSG_POLICY_KERNEL_REFUSAL, &m.base, NULL, 0);
	if (r < 0)
		log_warn_errno(r, "box %s: a kernel refusal report to box-policyd", b->name);
}

int
policyd_ask(struct box *b, struct client *c, uint64_t rid, const Box__AskRequest *m, char *err,
	    size_t err_len)
{
	struct policyd *p = b->policyd;
	int r;

	if (!p || !p->dm.ev || b->state != BOX_RUNNING) {
		snprintf(err, err_len, "box %s is not running", b->name);
		return -ENOTCONN;
	}
	if (p->n_ask_waits >= POLICYD_ASK_WAITS) {
		snprintf(err, err_len, "box %s: too many approve/deny requests at once; try again",
			 b->name);
		return -EBUSY;
	}
	if (m->has_ask_id) {
		Box__PolicyAskAnswer an = BOX__POLICY_ASK_ANSWER__INIT;
		an.ask_id = m->ask_id;
		an.permit = m->permit;
		an.has_for_box = true;
		an.for_box = m->for_box;
		an.uid = (uint32_t)c->cred.uid;
		r = daemon_send(&p->dm, BOX__MSG_TYPE__MSG_POLICY_ASK_ANSWER, &an.base, NULL, 0);
		if (r == 0)
			log_info("box %s (%s): decision %llu %s by uid %u%s", b->name, b->id,
				 (unsigned long long)m->ask_id, m->permit ? "permitted" : "denied",
				 (unsigned)c->cred.uid, m->for_box ? " for the box" : "");
	} else {
		Box__PolicyAskList l = BOX__POLICY_ASK_LIST__INIT;
		r = daemon_send(&p->dm, BOX__MSG_TYPE__MSG_POLICY_ASK_LIST, &l.base, NULL, 0);
	}
	if (r < 0) {
		snprintf(err, err_len, "cannot reach box-policyd: %s", strerror(-r));
		return r;
	}
	p->ask_waits[p->n_ask_waits++] = (struct ask_wait){ c, rid };
	return 0;
}

static void
on_policyd_msg(struct box_daemon *dm, struct box_ipc_msg *m)
{
	/* The policy table allows PolicyReady only in `starting`, then DecideReply in `ready`. */
	if (m->type == BOX__MSG_TYPE__MSG_POLICY_READY && dm->starting)
		ready_message(dm, (const Box__PolicyReady *)m->msg);
	else if (m->type == BOX__MSG_TYPE__MSG_POLICY_RELOAD_REPLY)
		reload_answer(dm->b, (const Box__PolicyReloadReply *)m->msg, NULL);
	else if (m->type == BOX__MSG_TYPE__MSG_POLICY_ASK_LIST_REPLY ||
		 m->type == BOX__MSG_TYPE__MSG_POLICY_ASK_ANSWER_REPLY)
		ask_answer_client(dm->b, m);
	else if (m->type == BOX__MSG_TYPE__MSG_POLICY_LOG_HEAD)
		chain_head(dm->b, (const Box__PolicyLogHead *)m->msg);
}

/*
 * policyd has exited (or was killed): read what it sent last — its sealed head
 * may still wait in the channel when the reap came first — and keep the head.
 */
static void
on_policyd_finished(struct box *b)
{
	struct box_daemon *dm = &b->policyd->dm;

	if (dm->ev) {
		struct box_ipc_chan *c = box_ipc_event_chan(dm->ev);
		/* box_ipc_recv: 1 a message, 0 a fragment stored, negative: nothing more */
		for (int i = 0; i < 64; i++) {
			struct box_ipc_msg m = BOX_IPC_MSG_INIT;
			int r = box_ipc_recv(c, &m);
			if (r < 0)
				break;
			if (r > 0 && m.type == BOX__MSG_TYPE__MSG_POLICY_LOG_HEAD)
				chain_head(b, (const Box__PolicyLogHead *)m.msg);
			box_ipc_msg_done(&m);
		}
	}
	if (b->policyd->chain_dirty)
		chain_save_logged(b, true);
	box_policyd_finished(b);
}

/* Its channel goes (lost, finish, stop): nothing left to hand a new log fd to. */
static void
on_policyd_closing(struct box_daemon *dm)
{
	rotate_stop(dm->b->policyd);
	reload_answer(dm->b, NULL, "box-policyd went away before it answered");
	while (dm->b->policyd->n_ask_waits)
		ask_answer_client(dm->b, NULL);
}

int
policyd_reload(struct box *b, struct client *c, uint64_t rid, const Box__PolicyReloadRequest *m,
	       char *err, size_t err_len)
{
	struct policyd *p = b->policyd;
	Box__PolicyReload rl = BOX__POLICY_RELOAD__INIT;

	if (!p || !p->dm.ev || b->state != BOX_RUNNING) {
		snprintf(err, err_len, "box %s is not running", b->name);
		return -ENOTCONN;
	}
	if (p->reload_busy) {
		snprintf(err, err_len, "box %s: a policy reload is under way; try again", b->name);
		return -EBUSY;
	}
	/* Re-checked here as well as by the validator: text within its cap, a path or none. */
	if (m->has_policy_text && m->policy_text.len > BOX_POLICY_TEXT_MAX) {
		snprintf(err, err_len, "the policy text is larger than %u bytes", BOX_POLICY_TEXT_MAX);
		return -E2BIG;
	}
	rl.has_policy_text = m->has_policy_text;
	rl.policy_text = m->policy_text;
	rl.policy_file = m->policy_file;
	rl.uid = (uint32_t)c->cred.uid;
	rl.has_expect_sha256 = m->has_expect_sha256;
	rl.expect_sha256 = m->expect_sha256;
	int r = daemon_send(&p->dm, BOX__MSG_TYPE__MSG_POLICY_RELOAD, &rl.base, NULL, 0);
	if (r < 0) {
		snprintf(err, err_len, "cannot reach box-policyd: %s", strerror(-r));
		return r;
	}
	p->reload_busy = true;
	p->reload_client = c;
	p->reload_rid = rid;
	log_info("box %s (%s): policy reload asked by uid %u (%s)", b->name, b->id,
		 (unsigned)c->cred.uid, m->policy_file ? m->policy_file : "no file named");
	return 0;
}

void
policyd_reload_client_gone(struct boxd *d, struct client *c)
{
	for (struct box *b = d->boxes; b; b = b->next) {
		if (b->policyd && b->policyd->reload_client == c)
			b->policyd->reload_client = NULL;
		for (unsigned i = 0; b->policyd && i < b->policyd->n_ask_waits; i++)
			if (b->policyd->ask_waits[i].c == c)
				b->policyd->ask_waits[i].c = NULL;
	}
}

static const struct box_daemon_ops policyd_ops = {
	.id = DAEMON_POLICYD,
	.on_msg = on_policyd_msg,
	.ready = box_policyd_ready,
	.finished = on_policyd_finished,
	.closing = on_policyd_closing,
};

/*
 * A supervised program's channel (plan.supervise): FD, one end of a fresh
 * socketpair, goes to box-policyd as a channel of boxd's kind (source
 * "supervisor", fs:* only); the other end is the trampoline's fd 5, which its
 * PID 1 keeps. The fd stays the caller's (duplicated into the queue).
 */
int
policyd_attach_supervisor(struct box *b, int fd)
{
	Box__PolicyChannelAttach m = BOX__POLICY_CHANNEL_ATTACH__INIT;

	if (!b->policyd)
		return -ENOTCONN;
	return daemon_send(&b->policyd->dm, BOX__MSG_TYPE__MSG_POLICY_CHANNEL_ATTACH, &m.base,
			   &fd, 1);
}

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
	m.generation = ++b->policyd->decisions_generation;
	int r = daemon_send(&b->policyd->dm, BOX__MSG_TYPE__MSG_POLICY_LOG_FD, &m.base, &fd, 1);
	if (r < 0) {
		close(fd);
		return r;
	}
	safe_close(b->rc.decisions_fd);
	b->rc.decisions_fd = fd;
	return 0;
}

/*
 * The size decisions.jsonl rotates at: BOXD_DECISIONS_ROTATE_BYTES, or
 * BOX_TEST_DECISIONS_ROTATE_BYTES from boxd's own environment (tests only:
 * 1024 up to the default), so a test sees rotations without 64 MiB of lines.
 */
static uint64_t
rotate_bytes(void)
{
	const char *v = getenv("BOX_TEST_DECISIONS_ROTATE_BYTES");
	uint64_t n;

	if (v && parse_u64(v, BOXD_DECISIONS_ROTATE_BYTES, &n) == 0 && n >= 1024)
		return n;
	return BOXD_DECISIONS_ROTATE_BYTES;
}

static void
on_rotate_timer(evutil_socket_t fd, short what, void *arg)
{
	struct box *b = arg;
	struct stat st;

	if (b->policyd->chain_dirty)
		chain_save_logged(b, false);
	if (!b->policyd->dm.ev || b->rc.decisions_fd < 0 || fstat(b->rc.decisions_fd, &st) < 0)
		return;
	if ((uint64_t)st.st_size < rotate_bytes())
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
send_init(struct box *b, int dirfd, int tel_fd, char **err)
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
	if (s->box->ask_timeout_ms) {
		in.has_ask_timeout_ms = 1;
		in.ask_timeout_ms = (uint32_t)s->box->ask_timeout_ms->value;
	}
	if (s->box->ask_default && s->box->ask_default->value) {
		in.has_ask_default = 1;
		in.ask_default = 1;
	}
	if (s->agent && s->agent->has_person_shell && s->agent->person_shell) {
		in.has_person_session = 1;
		in.person_session = 1;
	}
	/* Then each telemetry file (box-recheck opened them as the owner), in the spec's order. */
	int fds[3 + BOX_TELEMETRY_FILES_MAX] = { dirfd, b->rc.decisions_fd };
	uint32_t include[BOX_TELEMETRY_FILES_MAX];
	size_t n_tel = 0;
	for (size_t i = 0; i < s->n_telemetry; i++) {
		if (s->telemetry[i]->kind != BOX__TELEMETRY_KIND__TELEMETRY_KIND_FILE)
			continue;
		if (n_tel >= b->rc.n_telemetry_fds) {
			r = -EBADF;
			seterr(err, "the telemetry file of [telemetry.%s] is not open",
			       s->telemetry[i]->name);
			goto out;
		}
		/* deny, permit, control and kernel are box-policyd's records (proto/policy.proto) */
		include[n_tel] = s->telemetry[i]->include & 15u;
		fds[2 + n_tel] = b->rc.telemetry_fds[n_tel];
		n_tel++;
	}
	in.telemetry_include = include;
	in.n_telemetry_include = n_tel;
	/* Then the otlp targets' includes and, with any, policyd's end of the telemetry channel. */
	uint32_t otlp_include[BOX_TELEMETRY_TARGETS_MAX];
	size_t n_otlp = 0;
	for (size_t i = 0; i < s->n_telemetry && n_otlp < BOX_TELEMETRY_TARGETS_MAX; i++)
		if (s->telemetry[i]->kind == BOX__TELEMETRY_KIND__TELEMETRY_KIND_OTLP)
			otlp_include[n_otlp++] = s->telemetry[i]->include & 15u;
	unsigned n_fds = 2 + (unsigned)n_tel;
	if (n_otlp) {
		if (tel_fd < 0) {
			r = -EBADF;
			seterr(err, "box-policyd's telemetry channel is not open");
			goto out;
		}
		in.otlp_include = otlp_include;
		in.n_otlp_include = n_otlp;
		fds[n_fds++] = tel_fd;
	}
	/* The chain goes on from the head kept of the last run (else genesis). */
	Box__PolicyLogHead head = BOX__POLICY_LOG_HEAD__INIT;
	int cr = chain_load(b);
	if (cr < 0)
		log_warn_errno(cr, "box %s (%s): the decision log's kept head is unreadable; "
				   "its chain starts again at genesis", b->name, b->id);
	if (cr > 0 && b->policyd->chain.head.seq > 0) {
		head.seq = b->policyd->chain.head.seq;
		head.head.data = b->policyd->chain.head.head;
		head.head.len = sizeof(b->policyd->chain.head.head);
		in.log_head = &head;
	}
	daemon_init_delay();
	r = daemon_send_request(&b->policyd->dm, BOX__MSG_TYPE__MSG_POLICY_INIT, 1, &in.base, fds,
				n_fds);
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
	_cleanup_close_ int dirfd = -1;
	struct daemon_spawn_args args = { .fds = { -1, -1, -1, -1, -1, -1, -1 } };
	int gw[2] = { -1, -1 }, sh[2] = { -1, -1 }, mc[2] = { -1, -1 }, tel[2] = { -1, -1 };
	uid_t uid;
	gid_t gid;
	pid_t pid = 0;
	int ctl = -1;
	int r;

	*err = NULL;
	struct policyd *p = b->policyd;
	daemon_init(&p->dm, &policyd_ops, b);
	if ((r = daemon_ids(d, DAEMON_POLICYD, &uid, &gid)) < 0) {
		seterr(err, "no user to run box-policyd as (box-policy, box-daemon or nobody)");
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
	/* The telemetry channel to box-gateway, with a [telemetry.NAME] kind = otlp target. */
	if (box_spec_otlp_targets(b->spec) && (r = box_ipc_socketpair(tel, false)) < 0) {
		seterr(err, "cannot make box-policyd's telemetry channel: %s", strerror(-r));
		goto out;
	}
	struct spare_taken spare;
	int spare_peers[DAEMON__N];
	if (spares_take_policyd(b, &spare, spare_peers)) {
		/* Spawned ahead with every peer channel; its gateway's is the spare gateway's. */
		pid = spare.pid;
		ctl = spare.ctl;
		p->dm.exec_fd = spare.exec_fd;
		peers_close(p);
		for (int i = 0; i < DAEMON__N; i++)
			p->peer_fd[i] = spare_peers[i];
		if (!mcpd_wanted(b->spec)) /* nothing will speak on it: policyd reads the close */
			p->peer_fd[DAEMON_MCPD] = safe_close(p->peer_fd[DAEMON_MCPD]);
		p->tel_fd = TAKE_FD(tel[0]);
		box_mark(b, "box-policyd taken (spawned ahead)");
	} else {
		/* One channel per peer; box-mcpd's only with a stdio [mcp] (else nothing would speak on it). */
		if ((r = box_ipc_socketpair(gw, false)) < 0 || (r = box_ipc_socketpair(sh, false)) < 0 ||
		    (mcpd_wanted(b->spec) && (r = box_ipc_socketpair(mc, false)) < 0)) {
			seterr(err, "cannot make box-policyd's peer channels: %s", strerror(-r));
			goto out;
		}
		args.fds[POLICYD_FD_GATEWAY] = gw[1];
		args.fds[POLICYD_FD_MCPD] = mc[1];
		args.fds[POLICYD_FD_SHELL] = sh[1];
		r = daemon_spawn(d, b, DAEMON_POLICYD, &args, &pid, &ctl, NULL, err);
		/* The other ends wait here until each peer is spawned (and takes its own). */
		peers_close(p);
		p->peer_fd[DAEMON_GATEWAY] = TAKE_FD(gw[0]);
		p->peer_fd[DAEMON_MCPD] = TAKE_FD(mc[0]);
		p->peer_fd[DAEMON_SHELL] = TAKE_FD(sh[0]);
		p->tel_fd = TAKE_FD(tel[0]);
		if (r < 0)
			goto out;
		box_mark(b, "box-policyd spawned");
	}
	if ((r = daemon_watch(&p->dm, pid, ctl, err)) >= 0)
		r = send_init(b, dirfd, tel[1], err);
out:
	for (int i = 0; i < 2; i++) {
		safe_close(gw[i]);
		safe_close(sh[i]);
		safe_close(mc[i]);
		safe_close(tel[i]);
	}
	return r;
}

/* ------------------------------------------------------------------ */
/* the end: closing fd 3 ends policyd (it flushes and syncs first)     */

bool
policyd_finish(struct box *b)
{
	struct policyd *p = b->policyd;

	if (!p)
		return false;
	peers_close(p); /* a peer that never started: its channel goes first */
	return p->dm.ops && daemon_finish(&p->dm);
}

void
policyd_free(struct box *b)
{
	struct policyd *p = b->policyd;

	if (!p)
		return;
	daemon_stop(&p->dm);
	rotate_stop(p);
	peers_close(p);
	free(p);
	b->policyd = NULL;
}
