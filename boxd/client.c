/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client.c — boxd's clients: accept, SO_PEERCRED, the peer's PID
 * namespace, reading requests, dispatching them and sending replies.
 *
 * Every client is identified by SO_PEERCRED: a user sees and controls only
 * its own boxes (owner or caller), root all of them. A shell in a box
 * (`boxctl shell`) is for its owner or root only, not for the caller who
 * started it for another owner. A client whose PID
 * namespace is not boxd's own is refused whatever it asks (one ErrorReply,
 * then disconnected): every box, tool sandbox and MCP sandbox has a PID
 * namespace of its own, so such a client is a process inside a sandbox that
 * reached a boxd socket through a grant (Unix sockets ignore read-only
 * mounts, and Landlock ABI <= 7 does not cover connect). "Not one of my
 * boxes" would not be enough: an embedded boxd knows only its own box.
 * Messages are decoded and validated by box_ipc_decode() before any handler
 * runs; a client that sends garbage is disconnected.
 * Trusts: the kernel's peer credentials and peer pidfd (common/peer.c);
 * nothing a client sends before validation.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boxd.h"
#include "cleanup.h"
#include "fdutil.h"
#include "ipc.h"
#include "log.h"
#include "peer.h"
#include "proto_client.h"
#include "validate.h"

int
client_send(struct client *c, uint32_t type, uint64_t rid, const ProtobufCMessage *m,
	    const int *fds, unsigned n_fds)
{
	if (!c || !c->ipc)
		return -ENOTCONN;
	int r = box_ipc_event_send(c->ipc, type, rid, m, fds, n_fds);
	if (r < 0)
		log_warn_errno(r, "sending %s to pid %d", box_ipc_type_name(&box_proto_client, type),
			       (int)c->cred.pid);
	return r;
}

static void
error_reply(struct client *c, uint64_t rid, int err, const char *msg)
{
	Box__ErrorReply e = BOX__ERROR_REPLY__INIT;
	e.errno_value = err;
	e.message = (char *)msg;
	(void)client_send(c, BOX__MSG_TYPE__MSG_ERROR_REPLY, rid, &e.base, NULL, 0);
}

/* Does client `c` see box `b`? Root all; a user its own (owner or caller). */
static bool
visible(const struct client *c, const struct box *b)
{
	return c->cred.uid == 0 || b->owner.uid == c->cred.uid || b->caller_uid == c->cred.uid;
}

void
client_close(struct client *c)
{
	struct boxd *d = c->d;
	for (struct client **pp = &d->clients; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			d->n_clients--;
			break;
		}
	c->ipc = box_ipc_event_free(c->ipc);
	shell_attach_client_gone(d, c);
	policyd_reload_client_gone(d, c);
	if (c->box) {
		struct box *b = c->box;
		c->box = NULL;
		box_client_gone(b);
	}
	bool was_channel = c->embedded_channel;
	free(c);
	if (d->embedded && was_channel && d->n_boxes == 0)
		boxd_maybe_exit_embedded(d);
}

static void
on_client_close(struct box_ipc_event *e, int error, void *userdata)
{
	struct client *c = userdata;
	if (error != -ECONNRESET)
		log_info("client pid %d: %s", (int)c->cred.pid, strerror(-error));
	client_close(c);
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
		if (b->state == BOX_GONE || !visible(c, b) || !b->id[0] || b->agent.pid <= 0)
			continue;
		Box__BoxInfo *i = &infos[rep.n_boxes];
		box__box_info__init(i);
		i->name = b->name;
		i->box_id = b->id;
		/* A finishing box (its agent gone, policyd flushing) is still stopping. */
		if (b->state == BOX_RUNNING)
			i->state = BOX__BOX_STATE__BOX_STATE_RUNNING;
		else if (b->state == BOX_STOPPING || b->state == BOX_FINISHING)
			i->state = BOX__BOX_STATE__BOX_STATE_STOPPING;
		else
			i->state = BOX__BOX_STATE__BOX_STATE_STARTING;
		i->pid = b->agent.pid;
		i->uptime_s = box_uptime_s(b);
		i->uid = b->owner.uid;
		ptrs[rep.n_boxes++] = i;
	}
	rep.boxes = ptrs;
	(void)client_send(c, BOX__MSG_TYPE__MSG_PS_REPLY, rid, &rep.base, NULL, 0);
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
	char msg[160], id[BOXD_ID_LEN + 1];
	struct box *b = find_one_box(d, c, m->box, &rep.status, msg);

	if (!b) {
		rep.error = msg;
	} else {
		/* A box still starting is gone after box_stop: its id is copied first. */
		rep.status = BOX__REPLY_STATUS__REPLY_OK;
		memcpy(id, b->id, sizeof(id));
		rep.box_id = id;
		log_info("stopping box %s (%s) for uid %u", b->name, b->id, (unsigned)c->cred.uid);
		box_stop(b);
	}
	(void)client_send(c, BOX__MSG_TYPE__MSG_STOP_REPLY, rid, &rep.base, NULL, 0);
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

/*
 * STATE/mcp/pins.jsonl of the running box, through the state dir fd boxd
 * holds for the run, for `boxctl mcp pins|accept` (the caller sees the box:
 * its owner, the user who started it, or root). As open_decision_log: every
 * name opened O_PATH|O_NOFOLLOW relative to the fd before it, checked on
 * the fd — a directory, then a regular file with one link owned by
 * box-mcpd's uid or the owner (what mcpd.c made it) — then opened read-only,
 * or O_WRONLY|O_APPEND for accept, through /proc/self/fd: the inode just
 * checked, never a name the owner can swap meanwhile.
 * Returns 1 with *ret, 0 when there is no pins file, negative errno.
 */
static int
open_pins(const struct box *b, bool accept, int *ret)
{
	uid_t mcpd_uid;
	gid_t mcpd_gid;
	struct stat st;
	char self[32];

	if (b->rc.state_dirfd < 0 || daemon_ids(b->d, DAEMON_MCPD, &mcpd_uid, &mcpd_gid) < 0)
		return 0;
	_cleanup_close_ int dfd = openat(b->rc.state_dirfd, "mcp",
					 O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? 0 : -errno;
	_cleanup_close_ int path_fd = openat(dfd, "pins.jsonl", O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (path_fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(path_fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    (st.st_uid != mcpd_uid && st.st_uid != b->owner.uid))
		return -EPERM;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", path_fd);
	int fd = open(self, (accept ? O_WRONLY | O_APPEND : O_RDONLY) | O_CLOEXEC | O_NOCTTY |
				    O_NONBLOCK);
	if (fd < 0)
		return -errno;
	*ret = fd;
	return 1;
}

static void
handle_mcp_pins(struct boxd *d, struct client *c, uint64_t rid, const Box__McpPinsRequest *m)
{
	Box__McpPinsReply rep = BOX__MCP_PINS_REPLY__INIT;
	char msg[200];
	struct box *b = find_one_box(d, c, m->box, &rep.status, msg);
	int fd = -1;

	if (!b) {
		rep.error = msg;
	} else {
		int r = open_pins(b, m->accept, &fd);
		if (r <= 0) {
			rep.status = BOX__REPLY_STATUS__REPLY_FAILED;
			if (r == 0)
				snprintf(msg, sizeof(msg), "box %.64s has no MCP pins file (no stdio "
							   "[mcp] server)", b->name);
			else
				snprintf(msg, sizeof(msg), "cannot open the MCP pins file of %.64s: %s",
					 b->name, strerror(-r));
			rep.error = msg;
			if (r < 0)
				log_warn("box %s (%s): %s", b->name, b->id, msg);
		} else {
			rep.status = BOX__REPLY_STATUS__REPLY_OK;
			rep.box_id = b->id;
			rep.name = b->name;
			rep.has_running = true;
			rep.running = b->state == BOX_RUNNING;
			if (m->accept)
				log_info("box %s (%s): the MCP pins file handed to uid %u for accept",
					 b->name, b->id, (unsigned)c->cred.uid);
		}
	}
	if (c->ipc) {
		int r = box_ipc_event_send(c->ipc, BOX__MSG_TYPE__MSG_MCP_PINS_REPLY, rid, &rep.base,
					   &fd, fd >= 0 ? 1 : 0);
		if (r < 0)
			log_warn_errno(r, "sending McpPinsReply to pid %d", (int)c->cred.pid);
	}
	safe_close(fd);
}

#define FOREIGN_PEER_MESSAGE \
	"boxd refuses clients from another PID namespace (a process inside a sandbox cannot drive boxd)"

/*
 * `boxctl shell NAME|ID`: a person's interactive session in a running box,
 * for its owner or root only (SO_PEERCRED). The user who started a box for
 * another owner sees it, but a shell in it would be a shell as its owner:
 * refused, as a box of another user is (not found).
 */
static void
handle_attach(struct boxd *d, struct client *c, uint64_t rid, const Box__AttachRequest *m)
{
	Box__AttachReply rep = BOX__ATTACH_REPLY__INIT;
	char msg[160];
	struct box *b = find_one_box(d, c, m->box, &rep.status, msg);

	if (b && c->cred.uid != 0 && c->cred.uid != b->owner.uid) {
		rep.status = BOX__REPLY_STATUS__REPLY_DENIED;
		snprintf(msg, sizeof(msg), "box %.64s runs as another user: only its owner or root "
			 "may open a shell in it", m->box);
		b = NULL;
	}
	if (!b) {
		rep.error = msg;
		(void)client_send(c, BOX__MSG_TYPE__MSG_ATTACH_REPLY, rid, &rep.base, NULL, 0);
		return;
	}
	shell_attach(b, c, rid, m);
}

/*
 * `boxctl policy reload NAME|ID [FILE]`: for the box's owner or root only (SO_PEERCRED),
 * as a shell is: a policy is the owner's to change. boxctl read and checked the file as
 * the caller; box-policyd loads it again and answers (policyd.c). Without a text, the
 * answer names the file the box started with, for boxctl to read.
 */
static void
handle_policy_reload(struct boxd *d, struct client *c, uint64_t rid,
		     const Box__PolicyReloadRequest *m)
{
	Box__PolicyReloadResult rep = BOX__POLICY_RELOAD_RESULT__INIT;
	char msg[256];
	struct box *b = find_one_box(d, c, m->box, &rep.status, msg);

	if (b && c->cred.uid != 0 && c->cred.uid != b->owner.uid) {
		rep.status = BOX__REPLY_STATUS__REPLY_DENIED;
		snprintf(msg, sizeof(msg), "box %.64s runs as another user: only its owner or root "
			 "may reload its policy", m->box);
		b = NULL;
	}
	if (b && !m->has_policy_text) {
		rep.status = BOX__REPLY_STATUS__REPLY_REFUSED;
		rep.box_id = b->id;
		rep.name = b->name;
		if (b->spec->box->policy) {
			rep.policy_file = b->spec->box->policy->path;
			snprintf(msg, sizeof(msg), "no policy text: box %.64s's file is named in "
				 "policy_file", b->name);
		} else {
			snprintf(msg, sizeof(msg), "box %.64s has no policy file: name one", b->name);
		}
		b = NULL;
	}
	if (b) {
		int r = policyd_reload(b, c, rid, m, msg, sizeof(msg));
		if (r == 0)
			return; /* answered when box-policyd has */
		rep.status = r == -EBUSY ? BOX__REPLY_STATUS__REPLY_BUSY
					 : BOX__REPLY_STATUS__REPLY_FAILED;
		rep.box_id = b->id;
		rep.name = b->name;
	}
	rep.error = msg;
	(void)client_send(c, BOX__MSG_TYPE__MSG_POLICY_RELOAD_RESULT, rid, &rep.base, NULL, 0);
}

/*
 * `boxctl approve|deny NAME|ID [ID]`: what waits for a person in the box, or a person's
 * answer to one; the box's owner or root only (SO_PEERCRED), as a reload.
 */
static void
handle_ask(struct boxd *d, struct client *c, uint64_t rid, const Box__AskRequest *m)
{
	Box__AskReply rep = BOX__ASK_REPLY__INIT;
	char msg[256];
	struct box *b = find_one_box(d, c, m->box, &rep.status, msg);

	if (b && c->cred.uid != 0 && c->cred.uid != b->owner.uid) {
		rep.status = BOX__REPLY_STATUS__REPLY_DENIED;
		snprintf(msg, sizeof(msg), "box %.64s runs as another user: only its owner or root "
			 "may answer for it", m->box);
		b = NULL;
	}
	if (b) {
		int r = policyd_ask(b, c, rid, m, msg, sizeof(msg));
		if (r == 0)
			return; /* answered when box-policyd has */
		rep.status = r == -EBUSY ? BOX__REPLY_STATUS__REPLY_BUSY
					 : BOX__REPLY_STATUS__REPLY_FAILED;
		rep.box_id = b->id;
		rep.name = b->name;
	}
	rep.error = msg;
	(void)client_send(c, BOX__MSG_TYPE__MSG_ASK_REPLY, rid, &rep.base, NULL, 0);
}

static void
on_client_msg(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata)
{
	struct client *c = userdata;
	struct boxd *d = c->d;

	if (c->foreign) {
		/* Whatever it asked: one reply saying why, then gone. */
		error_reply(c, m->request_id, EPERM, FOREIGN_PEER_MESSAGE);
		client_close(c);
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
	case BOX__MSG_TYPE__MSG_MCP_PINS_REQUEST:
		handle_mcp_pins(d, c, m->request_id, (const Box__McpPinsRequest *)m->msg);
		return;
	case BOX__MSG_TYPE__MSG_ATTACH_REQUEST:
		handle_attach(d, c, m->request_id, (const Box__AttachRequest *)m->msg);
		return;
	case BOX__MSG_TYPE__MSG_POLICY_RELOAD_REQUEST:
		handle_policy_reload(d, c, m->request_id, (const Box__PolicyReloadRequest *)m->msg);
		return;
	case BOX__MSG_TYPE__MSG_ASK_REQUEST:
		handle_ask(d, c, m->request_id, (const Box__AskRequest *)m->msg);
		return;
	default:
		error_reply(c, m->request_id, ENOSYS, "boxd does not serve this request yet");
		return;
	}
}

struct client *
client_add(struct boxd *d, int fd, bool channel)
{
	static const uint32_t allowed[] = {
		BOX__MSG_TYPE__MSG_RUN_REQUEST, BOX__MSG_TYPE__MSG_RUN_CONTROL,
		BOX__MSG_TYPE__MSG_PS_REQUEST,	BOX__MSG_TYPE__MSG_STOP_REQUEST,
		BOX__MSG_TYPE__MSG_LOG_REQUEST, BOX__MSG_TYPE__MSG_CHECK_REQUEST,
		BOX__MSG_TYPE__MSG_MCP_PINS_REQUEST, BOX__MSG_TYPE__MSG_ATTACH_REQUEST,
		BOX__MSG_TYPE__MSG_POLICY_RELOAD_REQUEST, BOX__MSG_TYPE__MSG_ASK_REQUEST,
	};
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
	(void)box_ipc_chan_allow(box_ipc_event_chan(c->ipc), allowed, ELEMENTSOF(allowed));
	c->next = d->clients;
	d->clients = c;
	d->n_clients++;
	return c;
}

void
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
