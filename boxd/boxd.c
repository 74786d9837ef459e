/*
 * boxd.c — the box daemon: builds sandboxes, spawns, reaps; nothing else.
 *
 *   boxd --listen PATH   service mode: many boxes, clients on a
 *                        SOCK_SEQPACKET socket at PATH (0660, group
 *                        box-clients when it exists), or on fd 3 when
 *                        socket-activated (LISTEN_PID/LISTEN_FDS); READY=1
 *                        to $NOTIFY_SOCKET when it is set
 *   boxd --embedded      one box for the boxctl that started it: the client
 *                        channel is fd 3; also listens on BASE/ID/boxd.sock
 *                        (ps, stop, log); exits when the box has ended
 *
 * Every client is identified by SO_PEERCRED: a user sees and controls only
 * its own boxes (owner or caller), root all of them. A client whose PID
 * namespace is not boxd's own is refused whatever it asks (one ErrorReply,
 * then disconnected): every box, tool sandbox and MCP sandbox has a PID
 * namespace of its own, so such a client is a process inside a sandbox that
 * reached a boxd socket through a grant (Unix sockets ignore read-only
 * mounts, and Landlock ABI <= 7 does not cover connect). "Not one of my
 * boxes" would not be enough: an embedded boxd knows only its own box.
 * Messages are decoded and validated by box_ipc_decode() before any handler
 * runs; a client that sends garbage is disconnected. In service mode root
 * parses no client byte: each connection is handed to its own box-clientd
 * (clientd.c), and what boxd decodes is that child's canonical re-encoding.
 * Trusts: its own executable's directory (helpers), the kernel's peer
 * credentials and peer pidfd (common/peer.c); nothing a client sends before
 * validation.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boxd.h"
#include "cleanup.h"
#include "fdutil.h"
#include "ipc.h"
#include "log.h"
#include "path.h"
#include "peer.h"
#include "proto_client.h"
#include "validate.h"

static struct boxd *the_boxd;

/* ------------------------------------------------------------------ */
/* clients                                                             */

int
boxd_client_send(struct client *c, uint32_t type, uint64_t rid, const ProtobufCMessage *m)
{
	if (!c || !c->ipc)
		return -ENOTCONN;
	int r = box_ipc_event_send(c->ipc, type, rid, m, NULL, 0);
	if (r < 0)
		log_warn_errno(r, "sending %s to pid %d",
			       box_ipc_type_name(&box_proto_client, type), (int)c->cred.pid);
	return r;
}

static void
error_reply(struct client *c, uint64_t rid, int err, const char *msg)
{
	Box__ErrorReply e = BOX__ERROR_REPLY__INIT;
	e.errno_value = err;
	e.message = (char *)msg;
	(void)boxd_client_send(c, BOX__MSG_TYPE__MSG_ERROR_REPLY, rid, &e.base);
}

/* Does client `c` see box `b`? Root all; a user its own (owner or caller). */
static bool
visible(const struct client *c, const struct box *b)
{
	return c->cred.uid == 0 || b->owner.uid == c->cred.uid || b->caller_uid == c->cred.uid;
}

static void
maybe_exit_embedded(struct boxd *d)
{
	if (!d->embedded || d->n_boxes)
		return;
	bool channel = false;
	for (struct client *c = d->clients; c; c = c->next)
		channel |= c->embedded_channel;
	/* Give queued replies a moment to leave, then stop. */
	struct timeval tv = { 0, channel ? 100 * 1000 : 0 };
	d->quitting = true;
	event_base_loopexit(d->base, &tv);
}

void
boxd_box_gone(struct boxd *d, struct box *b)
{
	(void)b;
	maybe_exit_embedded(d);
}

void
boxd_client_close(struct client *c)
{
	struct boxd *d = c->d;
	for (struct client **pp = &d->clients; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			d->n_clients--;
			break;
		}
	c->ipc = box_ipc_event_free(c->ipc);
	if (c->box) {
		struct box *b = c->box;
		c->box = NULL;
		box_client_gone(b);
	}
	bool was_channel = c->embedded_channel;
	free(c);
	if (d->embedded && was_channel && d->n_boxes == 0)
		maybe_exit_embedded(d);
}

static void
on_client_close(struct box_ipc_event *e, int error, void *userdata)
{
	struct client *c = userdata;
	if (error != -ECONNRESET)
		log_info("client pid %d: %s", (int)c->cred.pid, strerror(-error));
	boxd_client_close(c);
}

static struct box *
find_box(struct boxd *d, const struct client *c, const char *name_or_id, bool *ambiguous)
{
	struct box *found = NULL;
	*ambiguous = false;
	for (struct box *b = d->boxes; b; b = b->next) {
		if (b->state == BOX_GONE || !visible(c, b))
			continue;
		if (strcmp(b->id, name_or_id) == 0)
			return b;
		if (b->name && strcmp(b->name, name_or_id) == 0) {
			if (found)
				*ambiguous = true;
			found = b;
		}
	}
	return found;
}

static void
handle_ps(struct boxd *d, struct client *c, uint64_t rid)
{
	Box__PsReply rep = BOX__PS_REPLY__INIT;
	Box__BoxInfo *infos = calloc(d->n_boxes ? d->n_boxes : 1, sizeof(*infos));
	Box__BoxInfo **ptrs = calloc(d->n_boxes ? d->n_boxes : 1, sizeof(*ptrs));
	if (!infos || !ptrs) {
		free(infos);
		free(ptrs);
		error_reply(c, rid, ENOMEM, "out of memory");
		return;
	}
	for (struct box *b = d->boxes; b; b = b->next) {
		if (b->state == BOX_GONE || !visible(c, b) || !b->id[0] || b->pid <= 0)
			continue;
		Box__BoxInfo *i = &infos[rep.n_boxes];
		box__box_info__init(i);
		i->name = b->name;
		i->box_id = b->id;
		i->state = b->state == BOX_RUNNING	? BOX__BOX_STATE__BOX_STATE_RUNNING :
			   b->state == BOX_STOPPING ? BOX__BOX_STATE__BOX_STATE_STOPPING :
						      BOX__BOX_STATE__BOX_STATE_STARTING;
		i->pid = b->pid;
		i->uptime_s = box_uptime_s(b);
		i->uid = b->owner.uid;
		ptrs[rep.n_boxes++] = i;
	}
	rep.boxes = ptrs;
	(void)boxd_client_send(c, BOX__MSG_TYPE__MSG_PS_REPLY, rid, &rep.base);
	free(infos);
	free(ptrs);
}

/*
 * The one box NAME_OR_ID names for C (find_box), or NULL with the reply's
 * status and error text in *STATUS and MSG: not found, or a name that more
 * than one of C's boxes has.
 */
static struct box *
find_one_box(struct boxd *d, struct client *c, const char *name_or_id, Box__ReplyStatus *status,
	     char msg[static 160])
{
	bool ambiguous;
	struct box *b = find_box(d, c, name_or_id, &ambiguous);

	if (!b) {
		*status = BOX__REPLY_STATUS__REPLY_NOT_FOUND;
		snprintf(msg, 160, "no box named %.64s", name_or_id);
	} else if (ambiguous) {
		*status = BOX__REPLY_STATUS__REPLY_FAILED;
		snprintf(msg, 160, "more than one box is named %.64s: give its ID", name_or_id);
		b = NULL;
	}
	return b;
}

static void
handle_stop(struct boxd *d, struct client *c, uint64_t rid, const Box__StopRequest *m)
{
	Box__StopReply rep = BOX__STOP_REPLY__INIT;
	char msg[160];
	struct box *b = find_one_box(d, c, m->box, &rep.status, msg);

	if (!b) {
		rep.error = msg;
	} else {
		rep.status = BOX__REPLY_STATUS__REPLY_OK;
		rep.box_id = b->id;
		log_info("stopping box %s (%s) for uid %u", b->name, b->id, (unsigned)c->cred.uid);
		box_stop(b);
	}
	(void)boxd_client_send(c, BOX__MSG_TYPE__MSG_STOP_REPLY, rid, &rep.base);
}

/*
 * One of the running box's decision logs, read-only, through the state dir
 * fd boxd holds for the run (opened as the owner at start) — so a box with
 * its own [box] state_dir is found by name while it runs. The file is kept
 * only when it is a regular file owned by the box's owner: a name swapped
 * for a symlink (O_NOFOLLOW), a FIFO (O_NONBLOCK, then S_ISREG) or a hard
 * link to someone else's file is refused. The caller sees the box (owner,
 * the user who started it, or root), so this is what the owner could read.
 * Race: the owner can swap the name at any time. The name is opened O_PATH
 * (no open side effect, whatever it is: a FIFO, a device hard-linked onto
 * the same file system), checked on that fd, and only then opened for
 * reading through /proc/self/fd — the inode just checked, not the name.
 * Returns 1 with *ret, 0 when the file does not exist, negative errno.
 */
static int
open_decision_log(const struct box *b, const char *name, int *ret)
{
	if (b->rc.state_dirfd < 0)
		return 0;
	_cleanup_close_ int path_fd = openat(b->rc.state_dirfd, name,
					      O_PATH | O_CLOEXEC | O_NOFOLLOW);
	if (path_fd < 0)
		return errno == ENOENT ? 0 : -errno;
	struct stat st;
	if (fstat(path_fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != b->owner.uid)
		return -EPERM;
	char self[32];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", path_fd);
	int fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	*ret = fd;
	return 1;
}

static void
handle_log(struct boxd *d, struct client *c, uint64_t rid, const Box__LogRequest *m)
{
	Box__LogReply rep = BOX__LOG_REPLY__INIT;
	char msg[160];
	struct box *b = find_one_box(d, c, m->box, &rep.status, msg);
	int fds[2] = { -1, -1 };
	unsigned n_fds = 0;

	if (!b) {
		rep.error = msg;
	} else {
		int r = open_decision_log(b, "decisions.jsonl", &fds[0]);
		if (r > 0)
			r = open_decision_log(b, "decisions.jsonl.1", &fds[1]);
		if (r < 0) {
			safe_close(fds[0]);
			fds[0] = -1;
			rep.status = BOX__REPLY_STATUS__REPLY_FAILED;
			snprintf(msg, sizeof(msg), "cannot open the decision log of %.64s: %s",
				 b->name, strerror(-r));
			rep.error = msg;
			log_warn("box %s (%s): %s", b->name, b->id, msg);
		} else {
			rep.status = BOX__REPLY_STATUS__REPLY_OK;
			rep.box_id = b->id;
			rep.name = b->name;
			/* proto2 optionals: each value has its presence flag (has_has_… for has_…). */
			rep.has_running = true;
			rep.running = b->state == BOX_RUNNING;
			rep.has_has_current = rep.has_has_previous = true;
			rep.has_current = fds[0] >= 0;
			rep.has_previous = fds[0] >= 0 && fds[1] >= 0;
			n_fds = rep.has_current + rep.has_previous;
			if (!rep.has_previous)
				fds[1] = safe_close(fds[1]);
		}
	}
	if (c->ipc) {
		int r = box_ipc_event_send(c->ipc, BOX__MSG_TYPE__MSG_LOG_REPLY, rid, &rep.base, fds,
					   n_fds);
		if (r < 0)
			log_warn_errno(r, "sending LogReply to pid %d", (int)c->cred.pid);
	}
	for (unsigned i = 0; i < 2; i++)
		safe_close(fds[i]);
}

#define FOREIGN_PEER_MESSAGE \
	"boxd refuses clients from another PID namespace (a process inside a sandbox cannot drive boxd)"

static void
on_client_msg(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata)
{
	struct client *c = userdata;
	struct boxd *d = c->d;

	if (c->foreign) {
		/* Whatever it asked: one reply saying why, then gone. */
		error_reply(c, m->request_id, EPERM, FOREIGN_PEER_MESSAGE);
		boxd_client_close(c);
		return;
	}
	switch (m->type) {
	case BOX__MSG_TYPE__MSG_RUN_REQUEST: {
		Box__RunRequest *req = (Box__RunRequest *)m->msg;
		if (c->box || (d->embedded && (!c->embedded_channel || d->n_boxes))) {
			error_reply(c, m->request_id, EBUSY,
				    d->embedded ? "an embedded boxd runs one box" :
						  "this connection already runs a box");
			return;
		}
		if (d->quitting) {
			error_reply(c, m->request_id, ESHUTDOWN, "boxd is shutting down");
			return;
		}
		int fds[3] = { -1, -1, -1 };
		unsigned n = m->n_fds < 3 ? m->n_fds : 3;
		for (unsigned i = 0; i < n; i++)
			fds[i] = TAKE_FD(m->fds[i]);
		m->msg = NULL; /* box_run owns the request now */
		box_run(d, c, m->request_id, req, fds, n);
		return;
	}
	case BOX__MSG_TYPE__MSG_RUN_CONTROL: {
		const Box__RunControl *rc = (const Box__RunControl *)m->msg;
		if (c->box && strcmp(c->box->id, rc->box_id) == 0)
			box_control(c->box, rc);
		return;
	}
	case BOX__MSG_TYPE__MSG_PS_REQUEST:
		handle_ps(d, c, m->request_id);
		return;
	case BOX__MSG_TYPE__MSG_STOP_REQUEST:
		handle_stop(d, c, m->request_id, (const Box__StopRequest *)m->msg);
		return;
	case BOX__MSG_TYPE__MSG_LOG_REQUEST:
		handle_log(d, c, m->request_id, (const Box__LogRequest *)m->msg);
		return;
	default:
		error_reply(c, m->request_id, ENOSYS, "boxd does not serve this request yet");
		return;
	}
}

static struct client *
client_add(struct boxd *d, int fd, bool channel)
{
	struct client *c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return NULL;
	}
	c->d = d;
	c->embedded_channel = channel;
	int r = box_ipc_peercred(fd, &c->cred);
	if (r < 0) {
		log_warn_errno(r, "SO_PEERCRED");
		close(fd);
		free(c);
		return NULL;
	}
	/* Not boxd's PID namespace, or not knowable: refused at its first request. */
	enum peer_method how = PEER_METHOD_PIDFD;
	r = peer_pidns_same(fd, d->self_pidns_fd, d->peer_proc_only, &how);
	if (r <= 0) {
		c->foreign = true;
		/* Each refusal logged once; a sandbox that keeps trying cannot flood the log. */
		if (++d->n_foreign_refused <= BOXD_FOREIGN_LOG_MAX) {
			if (r < 0)
				log_warn_errno(r, "refusing client pid %d uid %u: cannot tell its PID "
						  "namespace (%s): %m",
					       (int)c->cred.pid, (unsigned)c->cred.uid,
					       how == PEER_METHOD_PIDFD ? "SO_PEERPIDFD" :
									  "/proc/PID/ns/pid");
			else
				log_warn("refusing client pid %d uid %u: it is in another PID namespace",
					 (int)c->cred.pid, (unsigned)c->cred.uid);
			if (d->n_foreign_refused == BOXD_FOREIGN_LOG_MAX)
				log_warn("further clients from other PID namespaces are refused "
					 "without a log line");
		}
	}
	/* Service mode: root parses none of the client's bytes; box-clientd does (clientd.c). */
	if (client_child_start(d, &c->cred, &fd) < 0) {
		close(fd);
		free(c);
		return NULL;
	}
	/* The client protocol's table: what a client may send, and when (proto_client.c). */
	c->ipc = box_ipc_event_new(d->base, fd, &box_proto_client, BOX_CLIENT_ROLE_CLIENT,
				   on_client_msg, on_client_close, c);
	if (!c->ipc) {
		close(fd);
		free(c);
		return NULL;
	}
	c->next = d->clients;
	d->clients = c;
	d->n_clients++;
	return c;
}

static void
on_accept(evutil_socket_t lfd, short what, void *arg)
{
	struct boxd *d = arg;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0) {
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			log_warn_errno(errno, "accept");
		return;
	}
	if (d->n_clients >= BOXD_CLIENTS_MAX) {
		log_warn("too many clients; refusing one");
		close(fd);
		return;
	}
	(void)client_add(d, fd, false);
}

/* ------------------------------------------------------------------ */
/* listening                                                           */

static int
listen_add(struct boxd *d, int fd)
{
	struct event *ev = event_new(d->base, fd, EV_READ | EV_PERSIST, on_accept, d);
	if (!ev || event_add(ev, NULL) < 0)
		return -ENOMEM;
	if (d->listen_ev) {
		/* An embedded boxd has one listener: its box's socket. */
		event_free(ev);
		return -EBUSY;
	}
	d->listen_ev = ev;
	d->listen_fd = fd;
	return 0;
}

/*
 * A listening SOCK_SEQPACKET socket at `path`, mode `mode`.
 * Race: the service socket's directory is the administrator's (--listen,
 * /run/box: root's), so the stale-socket probe, unlink and chmod there
 * follow nothing the owner of a box controls. An embedded boxd's
 * BASE/ID/boxd.sock (`owner_dir`) is in the box owner's directory, and in a
 * root boxd that runs a box for another user the owner could swap the name
 * between calls: there only bind() touches the name (it never follows a
 * symlink and fails on any existing entry), and the umask alone gives the
 * mode. BASE/ID itself cannot be replaced: BASE is boxd's.
 */
static int
listen_path(const char *path, mode_t mode, bool owner_dir)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (!owner_dir && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		/* A stale socket: remove it unless something answers there. */
		int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		bool alive = probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0;
		safe_close(probe);
		if (alive) {
			close(fd);
			return -EADDRINUSE;
		}
		(void)unlink(path);
	}
	mode_t old = umask(0777 & ~mode);
	int r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0 || (!owner_dir && chmod(path, mode) < 0) || listen(fd, 64) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

int
boxd_listen_embedded(struct boxd *d, const char *path)
{
	int fd = listen_path(path, 0600, true);
	if (fd < 0)
		return log_warn_errno(fd, "cannot listen on %s", path);
	int r = listen_add(d, fd);
	if (r < 0)
		close(fd);
	return r;
}

/* fd 3 from systemd socket activation, when LISTEN_PID is us. */
static int
socket_activated(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	if (!pid || !fds || strtol(pid, NULL, 10) != (long)getpid() || strtol(fds, NULL, 10) < 1)
		return -1;
	int type = 0, acc = 0;
	socklen_t l = sizeof(type);
	if (getsockopt(3, SOL_SOCKET, SO_TYPE, &type, &l) < 0 || type != SOCK_SEQPACKET)
		return -1;
	l = sizeof(acc);
	if (getsockopt(3, SOL_SOCKET, SO_ACCEPTCONN, &acc, &l) < 0 || !acc)
		return -1;
	(void)fd_set_cloexec(3, true);
	(void)fd_set_nonblock(3, true);
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return 3;
}

static void
sd_notify_ready(void)
{
	const char *p = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (!p || !*p || strlen(p) >= sizeof(sa.sun_path))
		return;
	strcpy(sa.sun_path, p);
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(p));
	if (p[0] == '@')
		sa.sun_path[0] = '\0';
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	(void)sendto(fd, "READY=1", 7, MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
	close(fd);
}

/* ------------------------------------------------------------------ */
/* signals                                                             */

static void
on_sigchld(evutil_socket_t sig, short what, void *arg)
{
	struct boxd *d = arg;
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);
		if (pid <= 0)
			break;
		if (client_child_reaped(d, pid, status))
			continue;
		for (struct box *b = d->boxes; b; b = b->next)
			if (box_reaped(b, pid, status))
				break;
	}
}

static void
on_sigterm(evutil_socket_t sig, short what, void *arg)
{
	struct boxd *d = arg;
	log_notice("signal %d: stopping every box", (int)sig);
	d->quitting = true;
	if (!d->boxes) {
		event_base_loopexit(d->base, NULL);
		return;
	}
	for (struct box *b = d->boxes; b; b = b->next)
		box_stop(b);
	struct timeval tv = { BOXD_KILL_GRACE_MS / 1000 + 3, 0 };
	event_base_loopexit(d->base, &tv);
}

/* ------------------------------------------------------------------ */

static char *
self_dir(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	char *dir = NULL;
	return path_dirname(buf, &dir) < 0 ? NULL : dir;
}

static int
usage(FILE *f)
{
	fprintf(f, "usage: boxd --listen PATH     (service: boxes of many users)\n"
		   "       boxd --embedded        (one box; client channel on fd 3)\n");
	return f == stdout ? 0 : 2;
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "embedded", no_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct boxd d = { .listen_fd = -1, .self_pidns_fd = -1 };
	const char *listen_at = NULL;
	int ch, r;

	log_init("boxd", 0);
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'l':
			listen_at = optarg;
			break;
		case 'e':
			d.embedded = true;
			break;
		case 'h':
			return usage(stdout);
		default:
			return usage(stderr);
		}
	}
	if (optind != argc || (!listen_at && !d.embedded) || (listen_at && d.embedded))
		return usage(stderr);
	if (listen_at && !path_is_clean_absolute(listen_at))
		fatalx("--listen needs an absolute path");
	the_boxd = &d;
	if (d.embedded && !getenv("BOXD_DEBUG"))
		log_set_max_level(LOG_LEVEL_WARNING); /* boxctl shows what the user needs */
	d.root = geteuid() == 0;
	if (!d.embedded && !d.root)
		fatalx("service mode needs root (an ordinary user runs boxes with boxctl run)");
	signal(SIGPIPE, SIG_IGN);
	umask(022);
	d.self_pidns_fd = peer_pidns_open_self();
	if (d.self_pidns_fd < 0)
		fatal(d.self_pidns_fd, "cannot open /proc/self/ns/pid (needed to refuse sandboxed clients)");
	/* A test hook that only makes SO_PEERPIDFD look absent: the fallback still refuses. */
	d.peer_proc_only = getenv("BOX_TEST_NO_PEERPIDFD") != NULL;

	d.self_dir = self_dir();
	if (!d.self_dir)
		fatal(errno, "cannot find my own executable");
	r = runtime_base_prepare(!d.embedded, &d.runtime_base);
	if (r < 0)
		return 1;
	d.base = event_base_new();
	if (!d.base)
		fatalx("event_base_new failed");

	int sigs[4] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP };
	for (int i = 0; i < 4; i++) {
		if (d.embedded && (sigs[i] == SIGINT || sigs[i] == SIGHUP)) {
			signal(sigs[i], SIG_IGN); /* the client forwards what the user meant */
			continue;
		}
		d.sig_ev[i] = evsignal_new(d.base, sigs[i], i == 0 ? on_sigchld : on_sigterm, &d);
		if (!d.sig_ev[i] || event_add(d.sig_ev[i], NULL) < 0)
			fatalx("cannot watch signal %d", sigs[i]);
	}

	if (d.embedded) {
		int type = 0;
		socklen_t l = sizeof(type);
		if (getsockopt(3, SOL_SOCKET, SO_TYPE, &type, &l) < 0 || type != SOCK_SEQPACKET)
			fatalx("--embedded: fd 3 is not a SOCK_SEQPACKET socket (boxctl run starts me)");
		(void)fd_set_cloexec(3, true);
		int fd = fcntl(3, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			fatal(errno, "fd 3");
		close(3);
		if (!client_add(&d, fd, true))
			fatalx("cannot set up the client channel");
	} else {
		if (client_child_check(&d) < 0)
			fatalx("cannot serve clients without box-clientd");
		int fd = socket_activated();
		if (fd < 0) {
			fd = listen_path(listen_at, 0660, false);
			if (fd < 0)
				fatal(fd, "cannot listen on %s", listen_at);
			d.service_path = strdup(listen_at);
			struct group *gr = getgrnam("box-clients");
			if (gr && chown(listen_at, 0, gr->gr_gid) < 0)
				log_warn_errno(errno, "chown %s", listen_at);
		}
		if (listen_add(&d, fd) < 0)
			fatalx("cannot watch the listening socket");
		log_info("listening on %s", d.service_path ? d.service_path : "a socket from systemd");
		sd_notify_ready();
	}

	event_base_dispatch(d.base);

	/* Whatever is left: kill it (nothing outlives boxd's boxes). */
	while (d.boxes) {
		struct box *b = d.boxes;
		if (!b->reaped && b->pid > 0) {
			kill(b->pid, SIGKILL);
			int st;
			if (waitpid(b->pid, &st, 0) == b->pid && box_reaped(b, b->pid, st))
				continue;
		}
		box_free(b);
	}
	while (d.clients)
		boxd_client_close(d.clients);
	if (d.listen_ev)
		event_free(d.listen_ev);
	safe_close(d.listen_fd);
	if (d.service_path)
		(void)unlink(d.service_path);
	for (int i = 0; i < 4; i++)
		if (d.sig_ev[i])
			event_free(d.sig_ev[i]);
	event_base_free(d.base);
	safe_close(d.self_pidns_fd);
	free(d.service_path);
	free(d.runtime_base);
	free(d.self_dir);
	return 0;
}
