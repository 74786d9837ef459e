/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipc_event.h — box IPC on a libevent loop, for the daemons (docs/design.md).
 *
 * One persistent EV_READ event per SOCK_SEQPACKET socket reads packets with
 * box_ipc_recv() (never a bufferevent: it would lose packet boundaries and
 * cannot carry fds) and calls `on_msg` for every complete, validated
 * message. Replies go out through a bounded per-socket queue flushed on
 * EV_WRITE, so a peer that stops reading cannot block the daemon: when the
 * queue is over BOX_IPC_EVENT_QUEUE_MAX, box_ipc_event_send() fails with
 * -ENOBUFS and the caller drops the peer.
 *
 * `on_close` is called once, with the reason, when the channel ends: the
 * peer closed (-ECONNRESET, or -EPROTO mid-stream), a protocol error (any
 * other negative errno from ipc.h), or a write failure. The events are
 * already removed; the callback decides (fatal for internal peers,
 * box_ipc_event_free for external clients). It is safe to call
 * box_ipc_event_free from inside either callback.
 * Library code: never logs.
 * Trusts: nothing from the peer.
 */
#ifndef BOX_IPC_EVENT_H
#define BOX_IPC_EVENT_H

#include <event2/event.h>

#include "ipc.h"

/* Bytes of packets waiting to be written on one socket. */
#define BOX_IPC_EVENT_QUEUE_MAX (32u << 20)
/*
 * Packets read per wakeup: one whole message, or at most this many
 * fragments of one, before yielding to other events (the read event is
 * level-triggered: it fires again while packets wait).
 */
#define BOX_IPC_EVENT_BURST 32

struct box_ipc_event;

/*
 * A complete message. The callback may keep the tree (set m->msg = NULL
 * after taking it) and fds (TAKE_FD(m->fds[i])); the rest is freed and
 * closed after it returns.
 */
typedef void (*box_ipc_msg_fn)(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata);
/* The channel ended; `error` is negative errno (see above). */
typedef void (*box_ipc_close_fn)(struct box_ipc_event *e, int error, void *userdata);

/*
 * Watch `fd` (a SOCK_SEQPACKET socket; made non-blocking here), speaking
 * `proto` with a peer in `peer_role` (box_ipc_chan_new). Takes ownership of
 * fd: box_ipc_event_free closes it. NULL with errno on failure (fd is then
 * still the caller's).
 */
struct box_ipc_event *box_ipc_event_new(struct event_base *base, int fd,
					const struct box_ipc_protocol *proto, unsigned peer_role,
					box_ipc_msg_fn on_msg, box_ipc_close_fn on_close,
					void *userdata);
/* Stop, drop the queue, close the fd. NULL-tolerant; returns NULL. */
struct box_ipc_event *box_ipc_event_free(struct box_ipc_event *e);
static inline void
box_ipc_event_freep(struct box_ipc_event **e)
{
	*e = box_ipc_event_free(*e);
}

/*
 * Deliver now what the peer already sent (at most MAX messages, each to on_msg; an end to
 * on_close), as the loop would later: for a caller that learns of the peer's exit on
 * another fd first, so that what it said before it ended is not lost. E may be freed by
 * the callbacks (as in the loop). Returns the number of messages delivered.
 */
int box_ipc_event_drain(struct box_ipc_event *e, unsigned max);

/* The channel, e.g. for box_ipc_chan_allow() or box_ipc_chan_set_state(). */
struct box_ipc_chan *box_ipc_event_chan(struct box_ipc_event *e);
int box_ipc_event_fd(const struct box_ipc_event *e);
/* The peer's credentials (SO_PEERCRED). */
int box_ipc_event_peercred(const struct box_ipc_event *e, struct ucred *ret);

/*
 * Queue a message (fragmented if needed) and start writing; once queued the
 * channel's state moves as the row says. The fds are duplicated (CLOEXEC)
 * and stay the caller's. Returns 0 when queued, -ENOBUFS when the queue is
 * full, -EPIPE after the channel ended, -EPERM for a type the channel's state
 * does not allow, or a packing error from box_ipc_pack (-EMSGSIZE, -EBADMSG,
 * -EINVAL…).
 */
int box_ipc_event_send(struct box_ipc_event *e, uint32_t type, uint64_t request_id,
		       const ProtobufCMessage *msg, const int *fds, unsigned n_fds);
/*
 * The same, but written at the end of this loop pass (after the events already
 * active) or with the next box_ipc_event_send, whichever comes first, together
 * with whatever else was queued by then: one sendmmsg for all of them. Order is
 * kept: a message sent later never overtakes one sent before it, nor is it
 * overtaken. For messages that need no answer (box-gateway's Records). Once used
 * on a channel, that channel writes two or more waiting packets with sendmmsg:
 * the owner's seccomp list must allow it. Errors as box_ipc_event_send; a write
 * failure at the end of the pass ends the channel (on_close).
 */
int box_ipc_event_send_later(struct box_ipc_event *e, uint32_t type, uint64_t request_id,
			     const ProtobufCMessage *msg, const int *fds, unsigned n_fds);
/*
 * Send a message packed by the caller: BODY (LEN bytes, at most BOX_IPC_PAYLOAD_MAX:
 * one packet, no fds) with BOX_IPC_HEADER_MAX bytes of room before it, where the
 * header is written. Now, behind what is queued (as box_ipc_event_send). For a
 * message built up in place (libpolicyclient's PolicyShip) of a type whose state move
 * does not read the message. Errors as
 * box_ipc_event_send, and -EMSGSIZE when LEN is over one packet.
 */
int box_ipc_event_send_body(struct box_ipc_event *e, uint32_t type, uint64_t request_id,
			    uint8_t *body, size_t len);
/* Bytes waiting in the write queue. */
size_t box_ipc_event_queued(const struct box_ipc_event *e);

#endif
