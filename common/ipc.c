/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipc.c — box IPC framing: envelopes over SOCK_SEQPACKET, fragments, fds,
 * and the one decode-and-validate wrapper (docs/design.md, ipc.h).
 *
 * Receive path: recvmsg(MSG_CMSG_CLOEXEC) into a BOX_IPC_MAX+1 buffer, so a
 * packet that is exactly one byte too long is seen; MSG_TRUNC/MSG_CTRUNC and
 * any control message other than SCM_RIGHTS are protocol errors. The
 * envelope is read by hand when it is canonical, else decoded like any
 * message by the protocol's walker; then the protocol's row for the type
 * (the caller's table, proto/proto_*.c) says what it may do: who may send it,
 * in which states of the channel, its largest single-packet size, how many
 * fds it may carry, and the cap of a reassembled message. This file names no
 * message of any protocol. Fragments must arrive in order, with seq 0
 * declaring the total length, which is checked against the cap and the
 * channel's budget before the reassembly buffer is allocated.
 * Received fds are owned from the moment recvmsg returns: every error path
 * closes them.
 * Trusts: nothing from the peer. Never logs.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "clock.h"
#include "ipc.h"
#include "pbarena.h"

/* The envelope itself, decoded by the protocol's walker when not canonical. */
static const struct box_ipc_type envelope_row = {
	.type = BOX__MSG_TYPE__MSG_INVALID,
	.name = "Envelope",
	.desc = &box__envelope__descriptor,
	.max_size = BOX_IPC_MAX,
};

const struct box_ipc_type *
box_ipc_type_lookup(const struct box_ipc_protocol *p, uint32_t type)
{
	if (!p)
		return NULL;
	for (unsigned i = 0; i < p->n_types; i++)
		if (p->types[i].type == type && p->types[i].desc)
			return &p->types[i];
	return NULL;
}

const char *
box_ipc_type_name(const struct box_ipc_protocol *p, uint32_t type)
{
	const struct box_ipc_type *t = box_ipc_type_lookup(p, type);
	return t ? t->name : "?";
}

/* ---- decode ------------------------------------------------------------ */

void
box_msg_free(ProtobufCMessage *m)
{
	if (!m)
		return;
	/* A type the decoder puts in an arena (box_ipc_type.arena) goes with its arena. */
	if (pb_arena_marked(m->descriptor)) {
		pb_arena_free_tree(m);
		return;
	}
	/* Our allocator is malloc/free, the same as protobuf-c's default. */
	protobuf_c_message_free_unpacked(m, NULL);
}

int
box_ipc_decode(const struct box_ipc_protocol *p, uint32_t type, const uint8_t *buf, size_t len,
	       ProtobufCMessage **ret)
{
	const struct box_ipc_type *t = box_ipc_type_lookup(p, type);
	if (!t || !p->decode)
		return -EBADMSG;
	return p->decode(t, buf, len, ret);
}

void
box_ipc_msg_done(struct box_ipc_msg *m)
{
	if (!m)
		return;
	box_msg_free(m->msg);
	m->msg = NULL;
	for (unsigned i = 0; i < m->n_fds && i < BOX_IPC_MAX_FDS; i++)
		m->fds[i] = safe_close(m->fds[i]);
	m->n_fds = 0;
}

/* ---- send -------------------------------------------------------------- */

static uint64_t ipc_next_stream_id;

/* Small messages are packed on the stack: no allocation on the hot path. */
#define IPC_PACK_STACK 2048u

/*
 * Pack one envelope into pkt (`room` bytes), or into a heap buffer when it
 * does not fit, and hand it to emit.
 */
/* ---- the envelope of one packet, by hand ------------------------------------ */

/* Wire tags of Envelope's fields: (number << 3) | wire type. */
enum {
	ENV_TAG_VERSION = (1 << 3) | 0,
	ENV_TAG_TYPE = (2 << 3) | 0,
	ENV_TAG_REQUEST_ID = (3 << 3) | 0,
	ENV_TAG_PAYLOAD = (4 << 3) | 2,
};
/* Room for the header: four tags, three varints of up to 10 bytes, one length. */
#define ENV_HEADER_MAX (4 + 3 * 10 + 10)

static size_t
put_varint(uint8_t *o, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		o[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	o[n++] = (uint8_t)v;
	return n;
}

/* The Envelope fields before a single payload of LEN bytes; returns their size. */
static size_t
envelope_header(uint8_t o[static ENV_HEADER_MAX], uint32_t type, uint64_t request_id,
		size_t len)
{
	size_t n = 0;
	o[n++] = ENV_TAG_VERSION;
	n += put_varint(o + n, BOX_IPC_VERSION);
	o[n++] = ENV_TAG_TYPE;
	n += put_varint(o + n, type);
	o[n++] = ENV_TAG_REQUEST_ID;
	n += put_varint(o + n, request_id);
	o[n++] = ENV_TAG_PAYLOAD;
	n += put_varint(o + n, len);
	return n;
}

size_t
box_ipc_header(uint8_t o[BOX_IPC_HEADER_MAX], uint32_t type, uint64_t request_id, size_t len)
{
	_Static_assert(BOX_IPC_HEADER_MAX >= ENV_HEADER_MAX, "room for an envelope's header");
	return envelope_header(o, type, request_id, len);
}

/*
 * A varint of at most MAX_BYTES in its shortest form; anything else (longer,
 * padded with 0x80 0x00, running off the end) is left to protobuf-c.
 */
static bool
get_varint(const uint8_t **p, const uint8_t *end, unsigned max_bytes, uint64_t *ret)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < max_bytes && *p + i < end; i++) {
		uint8_t b = (*p)[i];
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			if (b == 0 && i > 0)
				return false;
			*p += i + 1;
			*ret = v;
			return true;
		}
	}
	return false;
}

/*
 * The fast way in: a packet that is exactly what envelope_header() writes
 * (version, type, request_id, payload, in that order, nothing else) is read
 * in place, without decoding a copy of its payload. Anything else returns
 * false and goes through the protocol's walker and every check there, so
 * this path accepts nothing the slow one would refuse: the three required
 * fields are there, no field is unknown or repeated, and the type is looked
 * up in the table of declared types afterwards either way.
 */
static bool
envelope_fast(const uint8_t *p, size_t len, uint32_t *version, uint32_t *type,
	      uint64_t *request_id, const uint8_t **payload, size_t *payload_len)
{
	const uint8_t *end = p + len;
	uint64_t v, t, id, n;

	if (len < 8 || *p++ != ENV_TAG_VERSION || !get_varint(&p, end, 5, &v) || v > UINT32_MAX ||
	    p >= end || *p++ != ENV_TAG_TYPE || !get_varint(&p, end, 5, &t) || t > INT32_MAX ||
	    p >= end || *p++ != ENV_TAG_REQUEST_ID || !get_varint(&p, end, 10, &id) ||
	    p >= end || *p++ != ENV_TAG_PAYLOAD || !get_varint(&p, end, 5, &n) ||
	    n != (uint64_t)(end - p))
		return false;
	*version = (uint32_t)v;
	*type = (uint32_t)t;
	*request_id = id;
	*payload = p;
	*payload_len = (size_t)n;
	return true;
}

static int
emit_envelope(const Box__Envelope *env, uint8_t *pkt, size_t room, const int *fds,
	      unsigned n_fds, box_ipc_emit_fn emit, void *userdata)
{
	size_t n = protobuf_c_message_get_packed_size(&env->base);
	if (n > BOX_IPC_MAX || n == 0)
		return -EMSGSIZE;
	_cleanup_free_ uint8_t *heap = NULL;
	if (n > room) {
		heap = malloc(n);
		if (!heap)
			return -ENOMEM;
		pkt = heap;
	}
	if (protobuf_c_message_pack(&env->base, pkt) != n)
		return -EIO;
	return emit(userdata, pkt, n, fds, n_fds);
}

int
box_ipc_pack(const struct box_ipc_protocol *p, uint32_t type, uint64_t request_id,
	     const ProtobufCMessage *msg, const int *fds, unsigned n_fds, box_ipc_emit_fn emit,
	     void *userdata)
{
	const struct box_ipc_type *t = box_ipc_type_lookup(p, type);
	int r;

	if (!t || !t->desc || !msg || msg->descriptor != t->desc || !emit)
		return -EINVAL;
	if (n_fds > t->max_fds || n_fds > BOX_IPC_MAX_FDS || (n_fds > 0 && !fds))
		return -EBADMSG;
	/* Refuse here what the receiver would refuse there. */
	if (!protobuf_c_message_check(msg))
		return -EINVAL;
	if (t->validate) {
		r = t->validate(msg);
		if (r < 0)
			return r;
	}
	if (t->fd_count) {
		r = t->fd_count(msg, n_fds);
		if (r < 0)
			return r;
	}

	size_t len = protobuf_c_message_get_packed_size(msg);
	bool single = len <= t->max_size;
	if (!single && (t->reasm_cap == 0 || len > t->reasm_cap))
		return -EMSGSIZE;

	uint8_t body_stack[IPC_PACK_STACK], pkt_stack[IPC_PACK_STACK];
	if (single) {
		/*
		 * The usual case: one packet. Write the envelope's fields by hand
		 * and pack the message straight after them: the bytes protobuf-c
		 * would make (fields in number order, the enum as a varint), with
		 * one pass over the message instead of two and no copy.
		 */
		size_t h = envelope_header(pkt_stack, type, request_id, len);
		if (len <= sizeof(pkt_stack) - h) {
			if (protobuf_c_message_pack(msg, pkt_stack + h) != len)
				return -EIO;
			return emit(userdata, pkt_stack, h + len, fds, n_fds);
		}
	}
	_cleanup_free_ uint8_t *body_heap = NULL;
	uint8_t *body = body_stack;
	if (len > sizeof(body_stack)) {
		body = body_heap = malloc(len);
		if (!body)
			return -ENOMEM;
	}
	if (protobuf_c_message_pack(msg, body) != len)
		return -EIO;

	Box__Envelope env;
	box__envelope__init(&env);
	env.version = BOX_IPC_VERSION;
	env.type = (Box__MsgType)type;
	env.request_id = request_id;

	if (single) {
		env.body_case = BOX__ENVELOPE__BODY_PAYLOAD;
		env.payload.data = body;
		env.payload.len = len;
		return emit_envelope(&env, pkt_stack, sizeof(pkt_stack), fds, n_fds, emit,
				     userdata);
	}

	_cleanup_free_ uint8_t *pkt = malloc(BOX_IPC_MAX);
	if (!pkt)
		return -ENOMEM;
	Box__Fragment frag;
	box__fragment__init(&frag);
	frag.stream_id = __atomic_add_fetch(&ipc_next_stream_id, 1, __ATOMIC_RELAXED);
	env.body_case = BOX__ENVELOPE__BODY_FRAGMENT;
	env.fragment = &frag;
	for (size_t off = 0;;) {
		size_t chunk = len - off < BOX_IPC_PAYLOAD_MAX ? len - off : BOX_IPC_PAYLOAD_MAX;
		frag.last = off + chunk == len;
		frag.has_total_len = frag.seq == 0;
		frag.total_len = frag.seq == 0 ? len : 0;
		frag.data.data = body + off;
		frag.data.len = chunk;
		r = emit_envelope(&env, pkt, BOX_IPC_MAX, frag.last ? fds : NULL,
				  frag.last ? n_fds : 0, emit, userdata);
		if (r < 0)
			return r;
		off += chunk;
		if (frag.last)
			return 0;
		frag.seq++;
	}
}

int
box_ipc_send_packet(int fd, const uint8_t *pkt, size_t len, const int *fds, unsigned n_fds,
		    int timeout_ms)
{
	struct iovec iov = { .iov_base = (void *)pkt, .iov_len = len };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * BOX_IPC_MAX_FDS)];
	} cm;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (len == 0 || len > BOX_IPC_MAX)
		return -EMSGSIZE;
	if (n_fds > BOX_IPC_MAX_FDS)
		return -EBADMSG;
	if (n_fds > 0) {
		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
	}

	for (;;) {
		ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n >= 0)
			return (size_t)n == len ? 0 : -EIO;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		if (timeout_ms == 0)
			return -EAGAIN;
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		int pr = poll(&p, 1, timeout_ms);
		if (pr == 0)
			return -ETIMEDOUT;
		if (pr < 0 && errno != EINTR)
			return -errno;
	}
}

static int
send_packet(void *userdata, const uint8_t *pkt, size_t len, const int *fds, unsigned n_fds)
{
	return box_ipc_send_packet(*(const int *)userdata, pkt, len, fds, n_fds,
				   BOX_IPC_SEND_TIMEOUT_MS);
}

int
box_ipc_send(int fd, const struct box_ipc_protocol *p, uint32_t type, uint64_t request_id,
	     const ProtobufCMessage *msg, const int *fds, unsigned n_fds)
{
	if (fd < 0)
		return -EBADF;
	return box_ipc_pack(p, type, request_id, msg, fds, n_fds, send_packet, &fd);
}

/* ---- receive ----------------------------------------------------------- */

struct ipc_stream {
	bool used;
	uint64_t id;
	uint32_t type;
	uint64_t request_id;
	uint32_t next_seq;
	uint64_t total, got;
	uint8_t *buf;
};

struct box_ipc_chan {
	int fd;
	const struct box_ipc_protocol *proto;
	unsigned peer_role;
	unsigned state;
	uint8_t *pkt; /* BOX_IPC_MAX + 1 */
	struct ipc_stream streams[BOX_IPC_MAX_STREAMS];
	uint64_t budget_used;
	uint32_t *allowed;
	unsigned n_allowed;
	bool restricted;
	bool stateless; /* a one-way relay's channel: states are the endpoint's to keep */
	bool waits; /* the last box_ipc_recv_wait found nothing at first: poll first */
	/*
	 * Blocking receive (box_ipc_recv_wait on a blocking fd): one recvmsg
	 * bounded by SO_RCVTIMEO instead of poll + recvmsg. -1: not known yet.
	 */
	int blocking;
	int rcvtimeo_ms; /* what SO_RCVTIMEO is set to; -1: never set */
};

struct box_ipc_chan *
box_ipc_chan_new(int fd, const struct box_ipc_protocol *p, unsigned peer_role)
{
	if (!p || !p->decode || peer_role >= p->n_roles || peer_role >= BOX_IPC_ROLES_MAX ||
	    p->n_states == 0 || p->n_states > BOX_IPC_STATES_MAX) {
		errno = EINVAL;
		return NULL;
	}
	struct box_ipc_chan *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->proto = p;
	c->peer_role = peer_role;
	c->pkt = malloc(BOX_IPC_MAX + 1);
	if (!c->pkt) {
		free(c);
		return NULL;
	}
	c->fd = fd;
	c->blocking = -1;
	c->rcvtimeo_ms = -1;
	return c;
}

static void
stream_release(struct box_ipc_chan *c, struct ipc_stream *s)
{
	free(s->buf);
	c->budget_used -= s->total;
	memset(s, 0, sizeof(*s));
}

struct box_ipc_chan *
box_ipc_chan_free(struct box_ipc_chan *c)
{
	if (!c)
		return NULL;
	for (unsigned i = 0; i < BOX_IPC_MAX_STREAMS; i++)
		if (c->streams[i].used)
			stream_release(c, &c->streams[i]);
	free(c->allowed);
	free(c->pkt);
	free(c);
	return NULL;
}

int
box_ipc_chan_fd(const struct box_ipc_chan *c)
{
	return c->fd;
}

const struct box_ipc_protocol *
box_ipc_chan_protocol(const struct box_ipc_chan *c)
{
	return c->proto;
}

unsigned
box_ipc_chan_state(const struct box_ipc_chan *c)
{
	return c->state;
}

int
box_ipc_chan_set_state(struct box_ipc_chan *c, unsigned state)
{
	if (state >= c->proto->n_states)
		return -EINVAL;
	c->state = state;
	return 0;
}

/* The row's state move, once a message of it passed (either way). */
static void
chan_move(struct box_ipc_chan *c, const struct box_ipc_type *t, const ProtobufCMessage *m)
{
	if (c->stateless)
		return;
	if (t->next == BOX_IPC_STATE_SAME || (unsigned)t->next >= c->proto->n_states)
		return;
	if (t->moves && !t->moves(m))
		return;
	c->state = (unsigned)t->next;
}

void
box_ipc_chan_stateless(struct box_ipc_chan *c)
{
	c->stateless = true;
}

int
box_ipc_chan_may_send(const struct box_ipc_chan *c, uint32_t type)
{
	const struct box_ipc_type *t = box_ipc_type_lookup(c->proto, type);
	if (!t || !(t->states & BOX_IPC_BIT(c->state)))
		return -EPERM;
	return 0;
}

void
box_ipc_chan_sent(struct box_ipc_chan *c, uint32_t type, const ProtobufCMessage *msg)
{
	const struct box_ipc_type *t = box_ipc_type_lookup(c->proto, type);
	if (t)
		chan_move(c, t, msg);
}

int
box_ipc_chan_send(struct box_ipc_chan *c, uint32_t type, uint64_t request_id,
		  const ProtobufCMessage *msg, const int *fds, unsigned n_fds)
{
	int r = box_ipc_chan_may_send(c, type);
	if (r < 0)
		return r;
	r = box_ipc_send(c->fd, c->proto, type, request_id, msg, fds, n_fds);
	if (r < 0)
		return r;
	box_ipc_chan_sent(c, type, msg);
	return 0;
}

int
box_ipc_chan_allow(struct box_ipc_chan *c, const uint32_t *types, unsigned n)
{
	uint32_t *copy = NULL;
	if (n > 0) {
		copy = calloc(n, sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		memcpy(copy, types, n * sizeof(*copy));
	}
	free(c->allowed);
	c->allowed = copy;
	c->n_allowed = n;
	c->restricted = true;
	return 0;
}

unsigned
box_ipc_chan_open_streams(const struct box_ipc_chan *c)
{
	unsigned n = 0;
	for (unsigned i = 0; i < BOX_IPC_MAX_STREAMS; i++)
		n += c->streams[i].used;
	return n;
}

/* The table's sender and state, then the exchange's allow list. */
static bool
chan_allows(const struct box_ipc_chan *c, const struct box_ipc_type *t, uint32_t type)
{
	if (!(t->senders & BOX_IPC_BIT(c->peer_role)))
		return false;
	if (!c->stateless && !(t->states & BOX_IPC_BIT(c->state)))
		return false;
	if (!c->restricted)
		return true;
	for (unsigned i = 0; i < c->n_allowed; i++)
		if (c->allowed[i] == type)
			return true;
	return false;
}

static void
close_fds(int *fds, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		fds[i] = safe_close(fds[i]);
}

/*
 * A complete message: check the state again (a message sent since its first
 * fragment may have moved it), decode it, match its fds, move the state and
 * hand both out.
 */
static int
deliver(struct box_ipc_chan *c, const struct box_ipc_type *t, uint64_t request_id,
	const uint8_t *buf, size_t len, int *fds, unsigned n_fds, struct box_ipc_msg *ret)
{
	if (!c->stateless && !(t->states & BOX_IPC_BIT(c->state)))
		return -EPERM;
	ProtobufCMessage *m = NULL;
	int r = c->proto->decode(t, buf, len, &m);
	if (r < 0)
		return r;
	if (t->fd_count) {
		r = t->fd_count(m, n_fds);
		if (r < 0) {
			box_msg_free(m);
			return r;
		}
	}
	chan_move(c, t, m);
	ret->type = t->type;
	ret->request_id = request_id;
	ret->msg = m;
	for (unsigned i = 0; i < BOX_IPC_MAX_FDS; i++)
		ret->fds[i] = i < n_fds ? TAKE_FD(fds[i]) : -1;
	ret->n_fds = n_fds;
	return 1;
}

static int
feed_fragment(struct box_ipc_chan *c, const struct box_ipc_type *t, const Box__Envelope *env,
	      int *fds, unsigned n_fds, struct box_ipc_msg *ret)
{
	const Box__Fragment *f = env->fragment;
	struct ipc_stream *s = NULL;

	if (t->reasm_cap == 0 || f->stream_id == 0)
		return -EBADMSG;
	if (n_fds > 0 && !f->last)
		return -EBADMSG; /* fds ride on the last packet only */
	for (unsigned i = 0; i < BOX_IPC_MAX_STREAMS; i++)
		if (c->streams[i].used && c->streams[i].id == f->stream_id)
			s = &c->streams[i];

	if (!s) {
		/* A new stream must start at seq 0 and declare its length. */
		if (f->seq != 0 || !f->has_total_len)
			return -EBADMSG;
		if (f->total_len > t->reasm_cap)
			return -EMSGSIZE;
		if (f->total_len > BOX_IPC_REASM_BUDGET - c->budget_used)
			return -ENOBUFS;
		for (unsigned i = 0; i < BOX_IPC_MAX_STREAMS && !s; i++)
			if (!c->streams[i].used)
				s = &c->streams[i];
		if (!s)
			return -ENOBUFS;
		uint8_t *buf = malloc(f->total_len ? f->total_len : 1);
		if (!buf)
			return -ENOMEM;
		*s = (struct ipc_stream){
			.used = true,
			.id = f->stream_id,
			.type = env->type,
			.request_id = env->request_id,
			.total = f->total_len,
			.buf = buf,
		};
		c->budget_used += f->total_len;
	} else if (f->seq != s->next_seq || f->has_total_len || (uint32_t)env->type != s->type ||
		   env->request_id != s->request_id) {
		return -EBADMSG;
	}

	if (f->data.len > s->total - s->got)
		return -EMSGSIZE;
	if (f->data.len == 0 && !f->last)
		return -EBADMSG; /* every fragment but the last moves the stream on */
	if (f->data.len > 0)
		memcpy(s->buf + s->got, f->data.data, f->data.len);
	s->got += f->data.len;
	s->next_seq++;
	if (!f->last)
		return 0;
	if (s->got != s->total)
		return -EBADMSG;

	int r = deliver(c, t, s->request_id, s->buf, s->total, fds, n_fds, ret);
	stream_release(c, s);
	return r;
}

int
box_ipc_chan_feed(struct box_ipc_chan *c, const uint8_t *pkt, size_t len, int *fds,
		  unsigned n_fds, struct box_ipc_msg *ret)
{
	ProtobufCMessage *em = NULL;
	const struct box_ipc_type *t;
	int r;

	if (n_fds > BOX_IPC_MAX_FDS) {
		r = -EBADMSG;
		goto out;
	}
	if (len > BOX_IPC_MAX) {
		r = -EMSGSIZE;
		goto out;
	}
	if (len == 0) {
		r = -EBADMSG;
		goto out;
	}
	uint32_t version, type;
	uint64_t request_id;
	const uint8_t *payload;
	size_t payload_len;
	if (envelope_fast(pkt, len, &version, &type, &request_id, &payload, &payload_len)) {
		/* The same checks as below, in the same order, for a single payload. */
		t = box_ipc_type_lookup(c->proto, type);
		if (version != BOX_IPC_VERSION)
			r = -EPROTONOSUPPORT;
		else if (!t)
			r = -EBADMSG;
		else if (!chan_allows(c, t, type))
			r = -EPERM;
		else if (n_fds > t->max_fds)
			r = -EBADMSG;
		else if (payload_len > t->max_size)
			r = -EMSGSIZE;
		else
			r = deliver(c, t, request_id, payload, payload_len, fds, n_fds, ret);
		goto out;
	}
	r = c->proto->decode(&envelope_row, pkt, len, &em);
	if (r < 0)
		goto out;
	const Box__Envelope *env = (const Box__Envelope *)em;
	if (env->version != BOX_IPC_VERSION) {
		r = -EPROTONOSUPPORT;
		goto out;
	}
	t = box_ipc_type_lookup(c->proto, env->type);
	if (!t) {
		r = -EBADMSG;
		goto out;
	}
	if (!chan_allows(c, t, env->type)) {
		r = -EPERM;
		goto out;
	}
	if (n_fds > t->max_fds) {
		r = -EBADMSG;
		goto out;
	}
	switch (env->body_case) {
	case BOX__ENVELOPE__BODY_PAYLOAD:
		if (env->payload.len > t->max_size)
			r = -EMSGSIZE;
		else
			r = deliver(c, t, env->request_id, env->payload.data, env->payload.len,
				    fds, n_fds, ret);
		break;
	case BOX__ENVELOPE__BODY_FRAGMENT:
		r = feed_fragment(c, t, env, fds, n_fds, ret);
		break;
	case BOX__ENVELOPE__BODY__NOT_SET:
	default:
		r = -EBADMSG;
		break;
	}
out:
	box_msg_free(em);
	/* Whatever was not handed out in *ret is closed here. */
	if (fds)
		close_fds(fds, n_fds < BOX_IPC_MAX_FDS ? n_fds : BOX_IPC_MAX_FDS);
	return r;
}

/* One recvmsg with FLAGS (MSG_DONTWAIT or not), then the feed. */
static int
recv_packet(struct box_ipc_chan *c, struct box_ipc_msg *ret, int flags)
{
	struct iovec iov = { .iov_base = c->pkt, .iov_len = BOX_IPC_MAX + 1 };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * BOX_IPC_MAX_FDS)];
	} cm;
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cm.buf,
		.msg_controllen = sizeof(cm.buf),
	};
	int fds[BOX_IPC_MAX_FDS];
	unsigned n_fds = 0;
	bool bad_cmsg = false;

	ssize_t n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC | flags);
	/*
	 * A peer that closed with a packet of ours unread resets us, and the kernel reports
	 * that before the packets it sent first (the error is cleared once reported): those
	 * are read now — a refusal's last word, e.g. box-shell's ShellDenied to a ShellOpen
	 * that came after it drained. With nothing queued the reset stands.
	 */
	if (n < 0 && errno == ECONNRESET) {
		mh.msg_controllen = sizeof(cm.buf);
		mh.msg_flags = 0;
		n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n <= 0) {
			errno = ECONNRESET;
			n = -1;
		}
	}
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return -EAGAIN;
		return -errno;
	}

	/* Take ownership of every fd that arrived before judging anything. */
	for (struct cmsghdr *h = CMSG_FIRSTHDR(&mh); h; h = CMSG_NXTHDR(&mh, h)) {
		if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) {
			size_t k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			const uint8_t *data = CMSG_DATA(h);
			for (size_t i = 0; i < k; i++) {
				int fd;
				memcpy(&fd, data + i * sizeof(int), sizeof(int));
				if (n_fds < BOX_IPC_MAX_FDS)
					fds[n_fds++] = fd;
				else {
					(void)safe_close(fd);
					bad_cmsg = true;
				}
			}
		} else {
			bad_cmsg = true;
		}
	}

	int r = 0;
	if (mh.msg_flags & MSG_TRUNC)
		r = -EMSGSIZE;
	else if (mh.msg_flags & MSG_CTRUNC)
		r = -EBADMSG; /* more fds than any message may carry */
	else if (bad_cmsg)
		r = -EBADMSG;
	else if (n == 0)
		/* SEQPACKET: 0 is the peer's close (we never send empty packets). */
		r = box_ipc_chan_open_streams(c) > 0 ? -EPROTO : -ECONNRESET;
	if (r < 0) {
		close_fds(fds, n_fds);
		return r;
	}
	return box_ipc_chan_feed(c, c->pkt, (size_t)n, fds, n_fds, ret);
}

int
box_ipc_recv(struct box_ipc_chan *c, struct box_ipc_msg *ret)
{
	return recv_packet(c, ret, MSG_DONTWAIT);
}

/*
 * Make the next blocking recvmsg give up after MS (0: never). The value is
 * cached: a synchronous peer asks with the same timeout every time, so the
 * setsockopt is paid once, not per message.
 */
static int
set_rcvtimeo(struct box_ipc_chan *c, int ms)
{
	if (c->rcvtimeo_ms == ms)
		return 0;
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };
	if (setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	c->rcvtimeo_ms = ms;
	return 0;
}

/*
 * A blocking fd: recvmsg itself waits, bounded by SO_RCVTIMEO, so a reply
 * costs one system call. The timeout is re-armed with what is left whenever a
 * fragment or a signal cut the wait short.
 */
static int
recv_wait_blocking(struct box_ipc_chan *c, struct box_ipc_msg *ret, int timeout_ms)
{
	int64_t deadline = timeout_ms >= 0 ? box_now_ms() + timeout_ms : -1;
	int wait = timeout_ms < 0 ? 0 : timeout_ms;

	for (;;) {
		if (wait == 0 && deadline >= 0)
			return -ETIMEDOUT;
		int r = set_rcvtimeo(c, wait);
		if (r < 0)
			return r;
		r = recv_packet(c, ret, 0);
		if (r == 1 || (r < 0 && r != -EAGAIN && r != -EINTR))
			return r;
		if (deadline >= 0) {
			int64_t left = deadline - box_now_ms();
			if (left <= 0)
				return -ETIMEDOUT;
			/* A fragment or a signal: wait no longer than the caller said. */
			if (left < wait)
				wait = (int)left;
		}
	}
}

int
box_ipc_recv_wait(struct box_ipc_chan *c, struct box_ipc_msg *ret, int timeout_ms)
{
	if (c->blocking < 0) {
		int fl = fcntl(c->fd, F_GETFL);
		if (fl < 0)
			return -errno;
		c->blocking = !(fl & O_NONBLOCK);
	}
	if (c->blocking && timeout_ms != 0 && timeout_ms <= INT32_MAX / 2)
		return recv_wait_blocking(c, ret, timeout_ms);

	int64_t deadline = timeout_ms >= 0 ? box_now_ms() + timeout_ms : -1;
	/*
	 * A peer that had to wait for its last message (a reply) most likely
	 * waits again: poll before the first recvmsg rather than after one
	 * that only says EAGAIN.
	 */
	bool try_recv = !c->waits || timeout_ms == 0;

	for (;;) {
		if (try_recv) {
			int r = box_ipc_recv(c, ret);
			if (r == 1)
				return 1;
			if (r == 0 || r == -EINTR)
				continue;
			if (r != -EAGAIN)
				return r;
			c->waits = true;
		}
		try_recv = true;

		int wait = -1;
		if (deadline >= 0) {
			int64_t left = deadline - box_now_ms();
			if (left <= 0)
				return -ETIMEDOUT;
			wait = left > 1000000 ? 1000000 : (int)left;
		}
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		int pr = poll(&p, 1, wait);
		if (pr < 0 && errno != EINTR)
			return -errno;
	}
}

/* ---- sockets ----------------------------------------------------------- */

int
box_ipc_socketpair(int sv[2], bool nonblock)
{
	int type = SOCK_SEQPACKET | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0);
	if (socketpair(AF_UNIX, type, 0, sv) < 0)
		return -errno;
	return 0;
}

int
box_ipc_peercred(int fd, struct ucred *ret)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0)
		return -errno;
	if (len != sizeof(uc))
		return -EIO;
	*ret = uc;
	return 0;
}
