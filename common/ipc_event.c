/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipc_event.c — libevent glue for box IPC: a persistent read event that
 * decodes packets into messages, and a bounded write queue (ipc_event.h).
 *
 * Callbacks may free the object: `busy` counts the frames of this file on
 * the stack and `dead` defers the free until the outermost one returns.
 * Trusts: nothing from the peer. Never logs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
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
	struct event *rd, *wr;
	struct box_ipc_chan *chan;
	box_ipc_msg_fn on_msg;
	box_ipc_close_fn on_close;
	void *userdata;
	struct ipc_packet *head, **tail;
	size_t queued;
	unsigned busy;
	bool dead;   /* freed by a callback: free when busy drops to 0 */
	bool closed; /* on_close has run */
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
	queue_drop(e);
	if (e->on_close)
		e->on_close(e, error, e->userdata);
}

/* Write queued packets until the socket is full. 0, or negative errno. */
static int
flush(struct box_ipc_event *e)
{
	while (e->head) {
		struct ipc_packet *p = e->head;
		int r = box_ipc_send_packet(e->fd, p->data, p->len, p->fds, p->n_fds, 0);
		if (r == -EAGAIN) {
			if (event_add(e->wr, NULL) < 0)
				return -ENOMEM;
			return 0;
		}
		if (r < 0)
			return r;
		e->head = p->next;
		if (!e->head)
			e->tail = &e->head;
		e->queued -= p->len;
		packet_free(p);
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

static void
on_read(evutil_socket_t fd, short what, void *arg)
{
	struct box_ipc_event *e = arg;
	(void)fd;
	(void)what;
	e->busy++;
	/*
	 * One message per wakeup: the event is level-triggered, so the loop
	 * comes back at once while packets wait, and a request/reply peer
	 * costs no recvmsg that only says EAGAIN. Fragments of one message
	 * are read in a row, at most BOX_IPC_EVENT_BURST packets per wakeup.
	 */
	for (unsigned n = 0; n < BOX_IPC_EVENT_BURST && !e->dead && !e->closed; n++) {
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
		break;
	}
	if (--e->busy == 0 && e->dead)
		destroy(e);
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

int
box_ipc_event_send(struct box_ipc_event *e, uint32_t type, uint64_t request_id,
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
	struct pending pd = { .tail = &pd.head, .room = BOX_IPC_EVENT_QUEUE_MAX - e->queued };
	r = box_ipc_pack(box_ipc_chan_protocol(e->chan), type, request_id, msg, fds, n_fds,
			 collect, &pd);
	if (r < 0) {
		pending_drop(&pd);
		return r;
	}
	/* Queued whole: the conversation has moved on, whenever the bytes leave. */
	box_ipc_chan_sent(e->chan, type, msg);
	if (pd.first_len > 0) {
		/* One small packet: straight out when nothing waits before it. */
		if (!e->head) {
			r = box_ipc_send_packet(e->fd, pd.first, pd.first_len, pd.first_fds,
						pd.first_n_fds, 0);
			if (r == 0)
				return 0;
			if (r != -EAGAIN)
				return r == -EPIPE || r == -ECONNRESET ? -EPIPE : r;
		}
		r = first_to_heap(&pd);
		if (r < 0) {
			pending_drop(&pd);
			return r;
		}
	}
	*e->tail = pd.head;
	if (pd.head)
		e->tail = pd.tail;
	e->queued += pd.bytes;

	/* Write what fits now; the rest waits for EV_WRITE. */
	r = flush(e);
	if (r < 0)
		return r == -EPIPE || r == -ECONNRESET ? -EPIPE : r;
	return 0;
}
