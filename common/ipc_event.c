/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipc_event.c — libevent glue for box IPC: a persistent read event that
 * decodes packets into messages, and a bounded write queue (ipc_event.h).
 *
 * Callbacks may free the object: `busy` counts the frames of this file on
 * the stack and `dead` defers the free until the outermost one returns.
 *
 * Sent later (box_ipc_event_send_later): the message joins the queue and a
 * callback-less event of the loop's default priority is made active; it runs
 * after the events already active in this loop pass, so everything queued by
 * then leaves together, with one sendmmsg, or earlier with the next
 * box_ipc_event_send (which writes the queue in order, its own message last).
 * Only a channel that was ever sent to later uses sendmmsg: its owner's
 * seccomp list allows it (ipc_event.h).
 * Trusts: nothing from the peer. Never logs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cleanup.h"
#include "fdutil.h"
#include "ipc_event.h"

struct ipc_packet {
	struct ipc_packet *next;
	size_t len;
	unsigned n_fds;
	int fds[BOX_IPC_MAX_FDS];
	uint8_t data[];
};

struct box_ipc_event {
	int fd;
	struct event_base *base;
	struct event *rd, *wr;
	struct event *later; /* writes what was sent later, at the end of the loop pass */
	struct box_ipc_chan *chan;
	box_ipc_msg_fn on_msg;
	box_ipc_close_fn on_close;
	void *userdata;
	struct ipc_packet *head, **tail;
	size_t queued;
	unsigned busy;
	bool dead;   /* freed by a callback: free when busy drops to 0 */
	bool closed; /* on_close has run */
	bool mmsg;   /* sent to later once: the queue is written with sendmmsg */
};

static void
packet_free(struct ipc_packet *p)
{
	for (unsigned i = 0; i < p->n_fds; i++)
		(void)safe_close(p->fds[i]);
	free(p);
}

static void
queue_drop(struct box_ipc_event *e)
{
	while (e->head) {
		struct ipc_packet *p = e->head;
		e->head = p->next;
		packet_free(p);
	}
	e->tail = &e->head;
	e->queued = 0;
}

static void
destroy(struct box_ipc_event *e)
{
	if (e->rd)
		event_free(e->rd);
	if (e->wr)
		event_free(e->wr);
	if (e->later)
		event_free(e->later);
	queue_drop(e);
	box_ipc_chan_free(e->chan);
	(void)safe_close(e->fd);
	free(e);
}

struct box_ipc_event *
box_ipc_event_free(struct box_ipc_event *e)
{
	if (!e)
		return NULL;
	if (e->busy > 0) {
		/* Called from inside a callback: stop now, free on the way out. */
		event_del(e->rd);
		event_del(e->wr);
		if (e->later)
			event_del(e->later);
		e->dead = true;
		return NULL;
	}
	destroy(e);
	return NULL;
}

/* End the channel once: remove the events, tell the owner. */
static void
channel_end(struct box_ipc_event *e, int error)
{
	if (e->closed)
		return;
	e->closed = true;
	event_del(e->rd);
	event_del(e->wr);
	if (e->later)
		event_del(e->later);
	queue_drop(e);
	if (e->on_close)
		e->on_close(e, error, e->userdata);
}

/* Packets one sendmmsg writes at most. */
#define MMSG_MAX 64

/*
 * Write the first packets of the queue with one sendmmsg: *sent of them
 * left (0 when the socket is full). 0, or negative errno.
 */
static int
send_some(struct box_ipc_event *e, unsigned *sent)
{
	struct mmsghdr mm[MMSG_MAX];
	struct iovec iov[MMSG_MAX];
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * BOX_IPC_MAX_FDS)];
	} cm[MMSG_MAX];
	unsigned n = 0;

	*sent = 0;
	for (struct ipc_packet *p = e->head; p && n < MMSG_MAX; p = p->next, n++) {
		iov[n] = (struct iovec){ .iov_base = p->data, .iov_len = p->len };
		mm[n] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[n], .msg_iovlen = 1 } };
		if (p->n_fds > 0) {
			memset(&cm[n], 0, sizeof(cm[n]));
			mm[n].msg_hdr.msg_control = cm[n].buf;
			mm[n].msg_hdr.msg_controllen = CMSG_SPACE(sizeof(int) * p->n_fds);
			struct cmsghdr *c = CMSG_FIRSTHDR(&mm[n].msg_hdr);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(sizeof(int) * p->n_fds);
			memcpy(CMSG_DATA(c), p->fds, sizeof(int) * p->n_fds);
		}
	}
	int k;
	do
		k = sendmmsg(e->fd, mm, n, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (k < 0 && errno == EINTR);
	if (k < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	for (int i = 0; i < k; i++)
		if (mm[i].msg_len != iov[i].iov_len)
			return -EIO; /* (a SOCK_SEQPACKET packet leaves whole) */
	*sent = (unsigned)k;
	return 0;
}

/* The first packet of the queue has left. */
static void
queue_pop(struct box_ipc_event *e)
{
	struct ipc_packet *p = e->head;
	e->head = p->next;
	if (!e->head)
		e->tail = &e->head;
	e->queued -= p->len;
	packet_free(p);
}

/* Write queued packets until the socket is full. 0, or negative errno. */
static int
flush(struct box_ipc_event *e)
{
	while (e->head) {
		if (e->mmsg && e->head->next) {
			unsigned sent = 0;
			int r = send_some(e, &sent);
			if (r < 0)
				return r;
			if (sent == 0) {
				if (event_add(e->wr, NULL) < 0)
					return -ENOMEM;
				return 0;
			}
			while (sent-- > 0)
				queue_pop(e);
			continue;
		}
		struct ipc_packet *p = e->head;
		int r = box_ipc_send_packet(e->fd, p->data, p->len, p->fds, p->n_fds, 0);
		if (r == -EAGAIN) {
			if (event_add(e->wr, NULL) < 0)
				return -ENOMEM;
			return 0;
		}
		if (r < 0)
			return r;
		queue_pop(e);
	}
	event_del(e->wr);
	return 0;
}

static void
on_write(evutil_socket_t fd, short what, void *arg)
{
	struct box_ipc_event *e = arg;
	(void)fd;
	(void)what;
	e->busy++;
	int r = flush(e);
	if (r < 0)
		channel_end(e, r == -EPIPE || r == -ECONNRESET ? -ECONNRESET : r);
	if (--e->busy == 0 && e->dead)
		destroy(e);
}

/* The end of the loop pass in which something was sent later: write the queue. */
static void
on_later(evutil_socket_t fd, short what, void *arg)
{
	struct box_ipc_event *e = arg;
	(void)fd;
	(void)what;
	if (e->closed || e->dead)
		return;
	e->busy++;
	int r = flush(e);
	if (r < 0)
		channel_end(e, r == -EPIPE || r == -ECONNRESET ? -ECONNRESET : r);
	if (--e->busy == 0 && e->dead)
		destroy(e);
}

/*
 * Up to MAX_MSGS messages to on_msg (an end to on_close), reading at most
 * MAX_PACKETS packets (fragments count: the bound holds whatever the peer
 * left). E may be freed by the callbacks: it is destroyed here then.
 */
static int
deliver(struct box_ipc_event *e, unsigned max_msgs, unsigned max_packets)
{
	int n = 0;
	e->busy++;
	for (unsigned k = 0; (unsigned)n < max_msgs && k < max_packets && !e->dead && !e->closed;
	     k++) {
		struct box_ipc_msg m = BOX_IPC_MSG_INIT;
		int r = box_ipc_recv(e->chan, &m);
		if (r == -EAGAIN)
			break;
		if (r == 0 || r == -EINTR)
			continue; /* a fragment was stored */
		if (r < 0) {
			channel_end(e, r);
			break;
		}
		e->on_msg(e, &m, e->userdata);
		box_ipc_msg_done(&m);
		n++;
	}
	if (--e->busy == 0 && e->dead)
		destroy(e);
	return n;
}

static void
on_read(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	/*
	 * One message per wakeup: the event is level-triggered, so the loop
	 * comes back at once while packets wait, and a request/reply peer
	 * costs no recvmsg that only says EAGAIN. Fragments of one message
	 * are read in a row, at most BOX_IPC_EVENT_BURST packets per wakeup.
	 */
	(void)deliver(arg, 1, BOX_IPC_EVENT_BURST);
}

int
box_ipc_event_drain(struct box_ipc_event *e, unsigned max)
{
	return e ? deliver(e, max, max * BOX_IPC_EVENT_BURST) : 0;
}

struct box_ipc_event *
box_ipc_event_new(struct event_base *base, int fd, const struct box_ipc_protocol *proto,
		  unsigned peer_role, box_ipc_msg_fn on_msg, box_ipc_close_fn on_close,
		  void *userdata)
{
	if (!base || fd < 0 || !on_msg || !proto) {
		errno = EINVAL;
		return NULL;
	}
	int r = fd_set_nonblock(fd, true);
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	struct box_ipc_event *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->fd = fd;
	e->base = base;
	e->on_msg = on_msg;
	e->on_close = on_close;
	e->userdata = userdata;
	e->tail = &e->head;
	e->chan = box_ipc_chan_new(fd, proto, peer_role);
	if (!e->chan && errno == EINVAL) {
		free(e);
		return NULL;
	}
	e->rd = event_new(base, fd, EV_READ | EV_PERSIST, on_read, e);
	e->wr = event_new(base, fd, EV_WRITE | EV_PERSIST, on_write, e);
	if (!e->chan || !e->rd || !e->wr || event_add(e->rd, NULL) < 0) {
		e->fd = -1; /* still the caller's */
		destroy(e);
		errno = ENOMEM;
		return NULL;
	}
	return e;
}

struct box_ipc_chan *
box_ipc_event_chan(struct box_ipc_event *e)
{
	return e->chan;
}

int
box_ipc_event_fd(const struct box_ipc_event *e)
{
	return e->fd;
}

int
box_ipc_event_peercred(const struct box_ipc_event *e, struct ucred *ret)
{
	return box_ipc_peercred(e->fd, ret);
}

size_t
box_ipc_event_queued(const struct box_ipc_event *e)
{
	return e->queued;
}

/*
 * Packets of one message, collected before they join the queue. The first
 * packet of a small message stays in `first` (no allocation): a one-packet
 * message to an idle socket is sent from there directly.
 */
struct pending {
	struct ipc_packet *head, **tail;
	size_t bytes, room;
	unsigned n;
	size_t first_len;
	unsigned first_n_fds;
	const int *first_fds; /* the caller's, borrowed */
	uint8_t first[2048];
};

static struct ipc_packet *
packet_new(const uint8_t *pkt, size_t len, const int *fds, unsigned n_fds, int *err)
{
	struct ipc_packet *p = malloc(sizeof(*p) + len);
	if (!p) {
		*err = -ENOMEM;
		return NULL;
	}
	p->next = NULL;
	p->len = len;
	p->n_fds = 0;
	memcpy(p->data, pkt, len);
	for (unsigned i = 0; i < n_fds; i++) {
		int d = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
		if (d < 0) {
			*err = -errno;
			packet_free(p);
			return NULL;
		}
		p->fds[p->n_fds++] = d;
	}
	return p;
}

static void
pending_append(struct pending *pd, struct ipc_packet *p)
{
	*pd->tail = p;
	pd->tail = &p->next;
}

/* Move the packet kept in pd->first to the list. */
static int
first_to_heap(struct pending *pd)
{
	int err = 0;
	struct ipc_packet *p =
		packet_new(pd->first, pd->first_len, pd->first_fds, pd->first_n_fds, &err);
	if (!p)
		return err;
	/* The first packet goes before any other. */
	p->next = pd->head;
	if (!pd->head)
		pd->tail = &p->next;
	pd->head = p;
	pd->first_len = 0;
	return 0;
}

static int
collect(void *userdata, const uint8_t *pkt, size_t len, const int *fds, unsigned n_fds)
{
	struct pending *pd = userdata;
	int err = 0;

	if (len > pd->room - pd->bytes)
		return -ENOBUFS;
	if (pd->n == 0 && len <= sizeof(pd->first)) {
		memcpy(pd->first, pkt, len);
		pd->first_len = len;
		pd->first_fds = fds;
		pd->first_n_fds = n_fds;
	} else {
		if (pd->first_len > 0) {
			err = first_to_heap(pd);
			if (err < 0)
				return err;
		}
		struct ipc_packet *p = packet_new(pkt, len, fds, n_fds, &err);
		if (!p)
			return err;
		pending_append(pd, p);
	}
	pd->n++;
	pd->bytes += len;
	return 0;
}

static void
pending_drop(struct pending *pd)
{
	while (pd->head) {
		struct ipc_packet *p = pd->head;
		pd->head = p->next;
		packet_free(p);
	}
}

/* Pack a message into PD, whole or not at all; the channel's state moves. */
static int
pack_whole(struct box_ipc_event *e, struct pending *pd, uint32_t type, uint64_t request_id,
	   const ProtobufCMessage *msg, const int *fds, unsigned n_fds)
{
	if (e->closed || e->dead)
		return -EPIPE;
	if (e->queued >= BOX_IPC_EVENT_QUEUE_MAX)
		return -ENOBUFS;

	/* Only what the channel's state allows (a bug here, not the peer's). */
	int r = box_ipc_chan_may_send(e->chan, type);
	if (r < 0)
		return r;
	/* A message joins the queue whole or not at all. */
	/* (field by field: `first` needs no zeroing) */
	pd->head = NULL;
	pd->tail = &pd->head;
	pd->bytes = 0;
	pd->room = BOX_IPC_EVENT_QUEUE_MAX - e->queued;
	pd->n = 0;
	pd->first_len = 0;
	pd->first_n_fds = 0;
	pd->first_fds = NULL;
	r = box_ipc_pack(box_ipc_chan_protocol(e->chan), type, request_id, msg, fds, n_fds,
			 collect, pd);
	if (r < 0) {
		pending_drop(pd);
		return r;
	}
	/* Queued whole: the conversation has moved on, whenever the bytes leave. */
	box_ipc_chan_sent(e->chan, type, msg);
	return 0;
}

/* Put PD's packets at the end of the queue (the first one moved to the heap). */
static int
enqueue(struct box_ipc_event *e, struct pending *pd)
{
	if (pd->first_len > 0) {
		int r = first_to_heap(pd);
		if (r < 0) {
			pending_drop(pd);
			return r;
		}
	}
	*e->tail = pd->head;
	if (pd->head)
		e->tail = pd->tail;
	e->queued += pd->bytes;
	return 0;
}

int
box_ipc_event_send(struct box_ipc_event *e, uint32_t type, uint64_t request_id,
		   const ProtobufCMessage *msg, const int *fds, unsigned n_fds)
{
	struct pending pd;
	int r = pack_whole(e, &pd, type, request_id, msg, fds, n_fds);
	if (r < 0)
		return r;
	/* One small packet: straight out when nothing waits before it. */
	if (pd.first_len > 0 && !e->head) {
		r = box_ipc_send_packet(e->fd, pd.first, pd.first_len, pd.first_fds,
					pd.first_n_fds, 0);
		if (r == 0)
			return 0;
		if (r != -EAGAIN)
			return r == -EPIPE || r == -ECONNRESET ? -EPIPE : r;
	}
	r = enqueue(e, &pd);
	if (r < 0)
		return r;

	/* Write what fits now; the rest waits for EV_WRITE. */
	r = flush(e);
	if (r < 0)
		return r == -EPIPE || r == -ECONNRESET ? -EPIPE : r;
	return 0;
}

int
box_ipc_event_send_later(struct box_ipc_event *e, uint32_t type, uint64_t request_id,
			 const ProtobufCMessage *msg, const int *fds, unsigned n_fds)
{
	if (!e->later) {
		if (e->closed || e->dead)
			return -EPIPE;
		e->later = event_new(e->base, -1, 0, on_later, e);
		if (!e->later)
			return -ENOMEM;
	}
	struct pending pd;
	int r = pack_whole(e, &pd, type, request_id, msg, fds, n_fds);
	if (r < 0)
		return r;
	r = enqueue(e, &pd);
	if (r < 0)
		return r;
	e->mmsg = true;
	/*
	 * After the events already active in this pass (activating an active
	 * event again changes nothing); a queue waiting for EV_WRITE is written
	 * by that.
	 */
	if (!event_pending(e->wr, EV_WRITE, NULL))
		event_active(e->later, EV_TIMEOUT, 1);
	return 0;
}

int
box_ipc_event_send_body(struct box_ipc_event *e, uint32_t type, uint64_t request_id,
			uint8_t *body, size_t len)
{
	if (e->closed || e->dead)
		return -EPIPE;
	if (e->queued >= BOX_IPC_EVENT_QUEUE_MAX)
		return -ENOBUFS;
	if (len > BOX_IPC_PAYLOAD_MAX)
		return -EMSGSIZE;
	int r = box_ipc_chan_may_send(e->chan, type);
	if (r < 0)
		return r;
	uint8_t h[BOX_IPC_HEADER_MAX];
	size_t hl = box_ipc_header(h, type, request_id, len);
	uint8_t *pkt = body - hl;
	memcpy(pkt, h, hl);
	box_ipc_chan_sent(e->chan, type, NULL);
	if (!e->head) {
		r = box_ipc_send_packet(e->fd, pkt, hl + len, NULL, 0, 0);
		if (r == 0)
			return 0;
		if (r != -EAGAIN)
			return r == -EPIPE || r == -ECONNRESET ? -EPIPE : r;
	}
	int err = 0;
	struct ipc_packet *p = packet_new(pkt, hl + len, NULL, 0, &err);
	if (!p)
		return err;
	*e->tail = p;
	e->tail = &p->next;
	e->queued += p->len;
	r = flush(e);
	if (r < 0)
		return r == -EPIPE || r == -ECONNRESET ? -EPIPE : r;
	return 0;
}
