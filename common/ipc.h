/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipc.h — box IPC: protobuf-c messages over SOCK_SEQPACKET (docs/design.md).
 *
 * One packet is one packed box.Envelope (common/envelope.proto) of at most
 * BOX_IPC_MAX bytes; messages larger than one packet travel as fragments and
 * are reassembled up to a per-type cap. What each type may do is not known
 * here: every call names a protocol (struct box_ipc_protocol, one table per
 * protocol in proto/proto_*.c) whose rows give the descriptor, validator,
 * size caps, fds, the roles that may send it and the channel states in which
 * it may arrive. File descriptors travel by SCM_RIGHTS only on the types the
 * table allows, and only on the last packet of a message. Every received
 * message goes through the table's walker (proto/walk.c): capped allocator,
 * protobuf_c_message_check(), no unknown fields and only declared enum
 * values at any depth, then the row's validator. This file references no
 * message: common/ is a leaf library.
 *
 * Errors are negative errno. On a channel, every error except -EAGAIN and
 * -EINTR is final: the caller closes the channel (internal peers: fatal;
 * external clients: disconnect). The codes say why:
 *   -EMSGSIZE   over a size cap (packet, message, reassembly, decode memory)
 *   -EBADMSG    malformed: truncated, unknown field, bad enum, unexpected fd,
 *               unknown type, fragment out of order, …
 *   -EPERM      a type this channel does not accept: not from the peer's
 *               role, not in the channel's state, or not in box_ipc_chan_allow
 *   -EPROTONOSUPPORT  another protocol version
 *   -ENOBUFS    too many open fragment streams, or over the channel budget
 *   -EINVAL/-ERANGE/-E2BIG  the message validator refused a field
 *   -ECONNRESET the peer closed (between messages); what it sent before closing is read
 *               first, even when its close reset the channel (a packet of ours unread)
 *   -EPROTO     the peer closed in the middle of a fragmented message
 * Library code: never logs.
 * Trusts: nothing that arrives on a socket.
 */
#ifndef BOX_IPC_H
#define BOX_IPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <protobuf-c/protobuf-c.h>

#include "envelope.pb-c.h"

#define BOX_IPC_MAX 65536u     /* bytes in one packet, envelope included */
#define BOX_IPC_VERSION 1u
#define BOX_IPC_MAX_FDS 8u     /* fds one message may carry, whatever its type */
#define BOX_IPC_MAX_STREAMS 4u /* fragmented messages open at once per channel */
/* Sum of the declared lengths of open fragment streams on one channel. */
#define BOX_IPC_REASM_BUDGET (96u << 20)
/* Room left for the envelope around a payload or fragment data. */
#define BOX_IPC_ENVELOPE_ROOM 128u
#define BOX_IPC_PAYLOAD_MAX (BOX_IPC_MAX - BOX_IPC_ENVELOPE_ROOM)
/* box_ipc_send() waits at most this long for a full socket buffer to drain. */
#define BOX_IPC_SEND_TIMEOUT_MS 10000

/*
 * Roles (who sends) and states (where a conversation is) are small numbers a
 * protocol names (proto/proto_*.h); a row lists them as bitmasks.
 */
#define BOX_IPC_ROLES_MAX 8u
#define BOX_IPC_STATES_MAX 16u
#define BOX_IPC_BIT(n) (1u << (n))
#define BOX_IPC_ANY_STATE ((1u << BOX_IPC_STATES_MAX) - 1u)
#define BOX_IPC_STATE_SAME (-1) /* a row's `next`: the state does not change */

/*
 * One row of a protocol table: what a message type is and may do. The
 * receiver enforces every field; the sender checks the same caps, validator
 * and state before anything leaves (box_ipc_pack, box_ipc_chan_send).
 */
struct box_ipc_type {
	uint32_t type;                          /* Box__MsgType */
	const char *name;                       /* "RunRequest" */
	const ProtobufCMessageDescriptor *desc;
	/* Meaning of the decoded tree (proto/ validators); NULL: the walker's checks only. */
	int (*validate)(const ProtobufCMessage *m);
	/* Do the fds that came agree with the message? NULL: any count up to max_fds. */
	int (*fd_count)(const ProtobufCMessage *m, unsigned n_fds);
	uint32_t max_size;  /* largest packed message in one packet (<= BOX_IPC_PAYLOAD_MAX) */
	uint32_t max_fds;   /* 0: an fd on this type is a protocol error */
	uint64_t reasm_cap; /* 0: never fragmented; else the largest reassembled message */
	uint32_t senders;   /* BOX_IPC_BIT(role) of each role that may send it */
	uint32_t states;    /* BOX_IPC_BIT(state) of each state in which it may pass */
	int next;           /* the state once it passed, or BOX_IPC_STATE_SAME */
	/* NULL: it always moves the channel to `next`; else only when this says so. */
	bool (*moves)(const ProtobufCMessage *m);
	/*
	 * Decoded into one arena (common/pbarena.h), freed at once by box_msg_free: for
	 * a many-field message whose receivers never keep or free a part of it apart.
	 */
	bool arena;
};

/*
 * A protocol: its rows, the names of its roles and states (state 0 is where
 * a channel starts), and the walker that decodes and validates a row
 * (box_proto_decode, proto/walk.h). A type without a row, a row whose
 * senders do not include the peer's role, or a state the row does not list
 * is a protocol error: the tables list what is allowed, nothing else is.
 */
struct box_ipc_protocol {
	const char *name; /* "client" */
	const struct box_ipc_type *types;
	unsigned n_types;
	const char *const *role_names;
	unsigned n_roles;
	const char *const *state_names;
	unsigned n_states;
	int (*decode)(const struct box_ipc_type *t, const uint8_t *buf, size_t len,
		      ProtobufCMessage **ret);
};

/* The row for `type` in `p`, or NULL for a type the protocol does not carry. */
const struct box_ipc_type *box_ipc_type_lookup(const struct box_ipc_protocol *p, uint32_t type);
/* "RunRequest", or "?" for a type the protocol does not carry. Never NULL. */
const char *box_ipc_type_name(const struct box_ipc_protocol *p, uint32_t type);

/*
 * One received message. `msg` is owned (free with box_ipc_msg_done); the
 * fds are owned too: take the ones you keep with TAKE_FD(m.fds[i]) and
 * box_ipc_msg_done() closes the rest.
 */
struct box_ipc_msg {
	uint32_t type;
	uint64_t request_id;
	ProtobufCMessage *msg;
	int fds[BOX_IPC_MAX_FDS];
	unsigned n_fds;
};

#define BOX_IPC_MSG_INIT \
	{ .msg = NULL, .n_fds = 0 }

/* Free the message and close every fd not taken (set to -1). Reusable after. */
void box_ipc_msg_done(struct box_ipc_msg *m);

/*
 * Decode and validate `len` bytes as the message of `type` of protocol `p`
 * with the protocol's walker: the size cap is checked before anything is
 * allocated, the unpack allocator is capped, the tree is checked (required
 * fields, no unknown field, declared enum values, at any depth) and
 * validated by the row's validator. On success *ret owns the tree
 * (box_msg_free). *ret is untouched on failure. -EBADMSG: no such row.
 */
int box_ipc_decode(const struct box_ipc_protocol *p, uint32_t type, const uint8_t *buf,
		   size_t len, ProtobufCMessage **ret);

/* Free a tree from box_ipc_decode. NULL-tolerant. */
void box_msg_free(ProtobufCMessage *m);
static inline void
box_msg_freep(ProtobufCMessage **m)
{
	box_msg_free(*m);
	*m = NULL;
}

/*
 * Send `msg` as message `type` with `request_id`, and `n_fds` descriptors
 * (borrowed: still the caller's after the call) on its last packet. The
 * message is fragmented when it does not fit one packet and its type allows
 * it. Checks the same caps as the receiver (-EMSGSIZE, -EBADMSG for fds on a
 * type that carries none, -EINVAL for a msg of the wrong descriptor).
 * Blocks (poll) while the socket buffer is full, at most
 * BOX_IPC_SEND_TIMEOUT_MS per packet (-ETIMEDOUT). -EPIPE: peer gone.
 */
int box_ipc_send(int fd, const struct box_ipc_protocol *p, uint32_t type, uint64_t request_id,
		 const ProtobufCMessage *msg, const int *fds, unsigned n_fds);

/*
 * Pack `msg` into the packets box_ipc_send() would send, calling `emit`
 * for each in order (fds only on the last). Stops at emit's first negative
 * return and returns it. Used by box_ipc_send and the libevent glue's queue.
 */
typedef int (*box_ipc_emit_fn)(void *userdata, const uint8_t *pkt, size_t len, const int *fds,
			       unsigned n_fds);
int box_ipc_pack(const struct box_ipc_protocol *p, uint32_t type, uint64_t request_id,
		 const ProtobufCMessage *msg, const int *fds, unsigned n_fds, box_ipc_emit_fn emit,
		 void *userdata);

/*
 * The envelope's fields before a payload of LEN bytes sent in one packet (what
 * box_ipc_pack writes before a message that fits): into O, their size returned. For a
 * sender that builds a message's bytes itself (libpolicyclient's PolicyShip, one item at
 * a time, LEN <= BOX_IPC_PAYLOAD_MAX); the receiver's table checks them as any message.
 */
#define BOX_IPC_HEADER_MAX 48u
size_t box_ipc_header(uint8_t o[BOX_IPC_HEADER_MAX], uint32_t type, uint64_t request_id,
		      size_t len);

/*
 * Send one packed envelope (from box_ipc_pack) with its fds. Waits up to
 * timeout_ms for room in the socket buffer (0: return -EAGAIN at once).
 */
int box_ipc_send_packet(int fd, const uint8_t *pkt, size_t len, const int *fds, unsigned n_fds,
			int timeout_ms);

/*
 * A channel: the reassembly state and the conversation state of one socket,
 * speaking protocol `p` with a peer in role `peer_role` (one of the
 * protocol's roles; only rows that role sends are accepted). The channel
 * starts in state 0 and moves as the rows say, on every message received
 * and every message sent through it (box_ipc_chan_send, box_ipc_event_send).
 * The channel borrows `fd` (the caller closes it after box_ipc_chan_free)
 * and `p` (a static table). NULL with errno: ENOMEM, EINVAL (no such role).
 */
struct box_ipc_chan;

struct box_ipc_chan *box_ipc_chan_new(int fd, const struct box_ipc_protocol *p,
				      unsigned peer_role);
/* Frees the reassembly buffers. NULL-tolerant; returns NULL. */
struct box_ipc_chan *box_ipc_chan_free(struct box_ipc_chan *c);
static inline void
box_ipc_chan_freep(struct box_ipc_chan **c)
{
	*c = box_ipc_chan_free(*c);
}
int box_ipc_chan_fd(const struct box_ipc_chan *c);
const struct box_ipc_protocol *box_ipc_chan_protocol(const struct box_ipc_chan *c);
/* The conversation's state, and a handover: a second channel on the same
 * socket (a blocking one, then a libevent one) continues where the first
 * one stopped. -EINVAL for a state the protocol does not name. */
unsigned box_ipc_chan_state(const struct box_ipc_chan *c);
int box_ipc_chan_set_state(struct box_ipc_chan *c, unsigned state);
/*
 * A relay that sees one direction only (box-clientd: it decodes what the
 * client sends and passes boxd's replies on unread) cannot follow the
 * conversation: on such a channel every row's sender, size, fds and
 * validator still hold, but states are neither checked nor moved — the
 * endpoint behind the relay (boxd) checks them on its own channel.
 */
void box_ipc_chan_stateless(struct box_ipc_chan *c);
/*
 * Before sending `type` on this channel: -EPERM when the protocol has no such
 * row or the channel's state does not allow it (a local bug, caught before
 * the peer sees it). After sending it: box_ipc_chan_sent() moves the state as
 * the row says.
 */
int box_ipc_chan_may_send(const struct box_ipc_chan *c, uint32_t type);
void box_ipc_chan_sent(struct box_ipc_chan *c, uint32_t type, const ProtobufCMessage *msg);
/* box_ipc_chan_may_send, box_ipc_send on the channel's fd, box_ipc_chan_sent. */
int box_ipc_chan_send(struct box_ipc_chan *c, uint32_t type, uint64_t request_id,
		      const ProtobufCMessage *msg, const int *fds, unsigned n_fds);
/*
 * Narrow further, for one exchange: accept only these types (copied), on
 * top of the table's roles and states; anything else is -EPERM before it is
 * decoded. Without a call the table alone decides.
 */
int box_ipc_chan_allow(struct box_ipc_chan *c, const uint32_t *types, unsigned n);
/* Number of fragment streams begun and not finished. */
unsigned box_ipc_chan_open_streams(const struct box_ipc_chan *c);

/*
 * Process one packet that has already been read (the core of
 * box_ipc_recv, and the fuzz entry point). Takes ownership of the `n_fds`
 * descriptors in `fds` whatever the outcome (they end in *ret or closed).
 * Returns 1 with *ret filled when a message is complete, 0 when a fragment
 * was stored, negative errno on a protocol error.
 */
int box_ipc_chan_feed(struct box_ipc_chan *c, const uint8_t *pkt, size_t len, int *fds,
		      unsigned n_fds, struct box_ipc_msg *ret);

/*
 * Read one packet (recvmsg, MSG_CMSG_CLOEXEC, MSG_DONTWAIT) and feed it.
 * Returns 1 (message in *ret), 0 (fragment stored: call again), -EAGAIN
 * (nothing to read), -ECONNRESET/-EPROTO (peer closed), or an error above.
 */
int box_ipc_recv(struct box_ipc_chan *c, struct box_ipc_msg *ret);
/*
 * Blocking receive for synchronous peers (boxctl, trampoline): waits up to
 * timeout_ms (-1: forever) for a whole message. -ETIMEDOUT when it expires.
 * On a blocking fd the wait is recvmsg itself under SO_RCVTIMEO (the channel
 * owns that option from then on); on an O_NONBLOCK fd it polls.
 */
int box_ipc_recv_wait(struct box_ipc_chan *c, struct box_ipc_msg *ret, int timeout_ms);

/* socketpair(AF_UNIX, SOCK_SEQPACKET|SOCK_CLOEXEC[|SOCK_NONBLOCK]). */
int box_ipc_socketpair(int sv[2], bool nonblock);
/* The peer's pid, uid and gid (SO_PEERCRED). */
int box_ipc_peercred(int fd, struct ucred *ret);

#endif
