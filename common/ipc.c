/*
 * ipc.c — box IPC framing: envelopes over SOCK_SEQPACKET, fragments, fds,
 * and the one decode-and-validate wrapper (DESIGN.md §4, ipc.h).
 *
 * Receive path: recvmsg(MSG_CMSG_CLOEXEC) into a BOX_IPC_MAX+1 buffer, so a
 * packet that is exactly one byte too long is seen; MSG_TRUNC/MSG_CTRUNC and
 * any control message other than SCM_RIGHTS are protocol errors. The
 * envelope is decoded like any message (capped allocator, check, no unknown
 * fields, declared enums); then the type table below says what the type may
 * do: its largest single-packet size, how many fds it may carry, and the cap
 * of a reassembled message. Fragments must arrive in order, with seq 0
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

#include "boxd.pb-c.h"
#include "cleanup.h"
#include "ipc.h"
#include "policy.pb-c.h"
#include "recheck.pb-c.h"
#include "proto/validate.h"

/* Nesting of our messages is at most 5; a deeper tree is an error. */
#define IPC_MAX_DEPTH 16
/*
 * Decode memory budget: protobuf-c turns a few bytes of input into a struct
 * of tens of bytes (a repeated submessage costs a pointer and a struct), so
 * allow a linear multiple of the input and no more.
 */
#define IPC_DECODE_FACTOR 16u
#define IPC_DECODE_SLACK (64u << 10)

/*
 * The receiver's rules for every type (convention 4 of
 * reference/c-daemon-anchors.md; proto/README.md is the human version).
 * Which peer may send which type is the daemon's dispatch table
 * (box_ipc_chan_allow); this table says what any peer may make us do.
 */
static const struct box_ipc_type ipc_types[] = {
	{ BOX__MSG_TYPE__MSG_RUN_REQUEST, "RunRequest", &box__run_request__descriptor,
	  BOX_IPC_PAYLOAD_MAX, 3, 8u << 20 },
	{ BOX__MSG_TYPE__MSG_RUN_REPLY, "RunReply", &box__run_reply__descriptor,
	  BOX_IPC_PAYLOAD_MAX, 1, 16u << 20 },
	{ BOX__MSG_TYPE__MSG_RUN_STARTING, "RunStarting", &box__run_starting__descriptor,
	  BOX_IPC_PAYLOAD_MAX, 0, 16u << 20 },
	{ BOX__MSG_TYPE__MSG_RUN_EXIT, "RunExit", &box__run_exit__descriptor, 8192, 0, 0 },
	{ BOX__MSG_TYPE__MSG_RUN_CONTROL, "RunControl", &box__run_control__descriptor, 256, 0,
	  0 },
	{ BOX__MSG_TYPE__MSG_PS_REQUEST, "PsRequest", &box__ps_request__descriptor, 64, 0, 0 },
	{ BOX__MSG_TYPE__MSG_PS_REPLY, "PsReply", &box__ps_reply__descriptor,
	  BOX_IPC_PAYLOAD_MAX, 0, 1u << 20 },
	{ BOX__MSG_TYPE__MSG_STOP_REQUEST, "StopRequest", &box__stop_request__descriptor, 256, 0,
	  0 },
	{ BOX__MSG_TYPE__MSG_STOP_REPLY, "StopReply", &box__stop_reply__descriptor, 8192, 0,
	  0 },
	{ BOX__MSG_TYPE__MSG_LOG_REQUEST, "LogRequest", &box__log_request__descriptor, 256, 0,
	  0 },
	{ BOX__MSG_TYPE__MSG_LOG_REPLY, "LogReply", &box__log_reply__descriptor, 8192, 2, 0 },
	{ BOX__MSG_TYPE__MSG_CHECK_REQUEST, "CheckRequest", &box__check_request__descriptor,
	  BOX_IPC_PAYLOAD_MAX, 0, 8u << 20 },
	{ BOX__MSG_TYPE__MSG_CHECK_REPLY, "CheckReply", &box__check_reply__descriptor,
	  BOX_IPC_PAYLOAD_MAX, 0, 16u << 20 },
	{ BOX__MSG_TYPE__MSG_ERROR_REPLY, "ErrorReply", &box__error_reply__descriptor, 8192, 0,
	  0 },
	/* box-policyd (proto/policy.proto). */
	{ BOX__MSG_TYPE__MSG_POLICY_INIT, "PolicyInit", &box__policy_init__descriptor,
	  BOX_IPC_PAYLOAD_MAX, 2, 5u << 20 },
	{ BOX__MSG_TYPE__MSG_POLICY_READY, "PolicyReady", &box__policy_ready__descriptor, 8192, 0,
	  0 },
	{ BOX__MSG_TYPE__MSG_DECIDE_REQUEST, "DecideRequest", &box__decide_request__descriptor,
	  BOX_IPC_PAYLOAD_MAX, 0, 1u << 20 },
	{ BOX__MSG_TYPE__MSG_DECIDE_REPLY, "DecideReply", &box__decide_reply__descriptor,
	  BOX_IPC_PAYLOAD_MAX, 0, 1u << 20 },
	{ BOX__MSG_TYPE__MSG_RECORD_REQUEST, "RecordRequest", &box__record_request__descriptor,
	  BOX_IPC_PAYLOAD_MAX, 0, 1u << 20 },
	{ BOX__MSG_TYPE__MSG_POLICY_LOG_FD, "PolicyLogFd", &box__policy_log_fd__descriptor, 64, 1,
	  0 },
	/* box-recheck (proto/recheck.proto). */
	{ BOX__MSG_TYPE__MSG_RECHECK_REQUEST, "RecheckRequest", &box__recheck_request__descriptor,
	  BOX_IPC_PAYLOAD_MAX, 0, 8u << 20 },
	{ BOX__MSG_TYPE__MSG_RECHECK_REPLY, "RecheckReply", &box__recheck_reply__descriptor,
	  BOX_IPC_PAYLOAD_MAX, 5, 16u << 20 },
	/*
	 * No row for BOX__MSG_TYPE__MSG_PLAN: the plan travels as one bare
	 * Plan packet on the trampoline's fd 3 (and status on fd 4), decoded by
	 * proto/plan_validate.c, never inside an envelope.
	 */
};

const struct box_ipc_type *
box_ipc_type_lookup(uint32_t type)
{
	for (size_t i = 0; i < ELEMENTSOF(ipc_types); i++)
		if (ipc_types[i].type == type)
			return &ipc_types[i];
	return NULL;
}

const char *
box_ipc_type_name(uint32_t type)
{
	const struct box_ipc_type *t = box_ipc_type_lookup(type);
	return t ? t->name : "?";
}

/* ---- decode ------------------------------------------------------------ */

struct cap_alloc {
	size_t used, cap;
	bool hit, oom;
};

static void *
cap_alloc_fn(void *userdata, size_t size)
{
	struct cap_alloc *a = userdata;
	if (size > a->cap - a->used) {
		a->hit = true;
		return NULL;
	}
	void *p = malloc(size ? size : 1);
	if (!p) {
		a->oom = true;
		return NULL;
	}
	a->used += size;
	return p;
}

static void
cap_free_fn(void *userdata, void *p)
{
	(void)userdata;
	free(p);
}

void
box_msg_free(ProtobufCMessage *m)
{
	/* Our allocator is malloc/free, the same as protobuf-c's default. */
	if (m)
		protobuf_c_message_free_unpacked(m, NULL);
}

/*
 * Every submessage: no unknown field; every enum a declared value. The
 * generated code accepts any number in an enum field, and protobuf-c keeps
 * unknown fields to re-emit them; both are refused on every channel.
 */
static int
walk(const ProtobufCMessage *m, unsigned depth)
{
	if (depth > IPC_MAX_DEPTH)
		return -EBADMSG;
	if (m->n_unknown_fields != 0)
		return -EBADMSG;

	const ProtobufCMessageDescriptor *d = m->descriptor;
	const uint8_t *base = (const uint8_t *)m;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (f->type != PROTOBUF_C_TYPE_MESSAGE && f->type != PROTOBUF_C_TYPE_ENUM)
			continue;

		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)(base + f->quantifier_offset);
			const void *arr = *(void *const *)(base + f->offset);
			for (size_t k = 0; k < n; k++) {
				if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
					const ProtobufCMessage *sub =
						((ProtobufCMessage *const *)arr)[k];
					int r = sub ? walk(sub, depth + 1) : -EBADMSG;
					if (r < 0)
						return r;
				} else if (!protobuf_c_enum_descriptor_get_value(
						   f->descriptor, ((const int *)arr)[k])) {
					return -EBADMSG;
				}
			}
			continue;
		}

		bool present;
		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
			present = *(const uint32_t *)(base + f->quantifier_offset) == f->id;
		else if (f->type == PROTOBUF_C_TYPE_MESSAGE)
			present = true; /* NULL pointer = absent */
		else if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset)
			present = *(const protobuf_c_boolean *)(base + f->quantifier_offset);
		else
			present = true;
		if (!present)
			continue;

		if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
			const ProtobufCMessage *sub = *(ProtobufCMessage *const *)(base + f->offset);
			if (sub) {
				int r = walk(sub, depth + 1);
				if (r < 0)
					return r;
			}
		} else if (!protobuf_c_enum_descriptor_get_value(f->descriptor,
								 *(const int *)(base + f->offset))) {
			return -EBADMSG;
		}
	}
	return 0;
}

/* Unpack with a capped allocator and run the generic checks. */
static int
unpack_checked(const ProtobufCMessageDescriptor *desc, const uint8_t *buf, size_t len,
	       ProtobufCMessage **ret)
{
	struct cap_alloc ca = { .cap = IPC_DECODE_FACTOR * len + IPC_DECODE_SLACK };
	ProtobufCAllocator alloc = { cap_alloc_fn, cap_free_fn, &ca };

	ProtobufCMessage *m = protobuf_c_message_unpack(desc, &alloc, len, buf);
	if (!m)
		return ca.hit ? -EMSGSIZE : ca.oom ? -ENOMEM : -EBADMSG;
	if (!protobuf_c_message_check(m)) {
		box_msg_free(m);
		return -EBADMSG;
	}
	int r = walk(m, 0);
	if (r < 0) {
		box_msg_free(m);
		return r;
	}
	*ret = m;
	return 0;
}

int
box_ipc_decode(uint32_t type, const uint8_t *buf, size_t len, ProtobufCMessage **ret)
{
	const struct box_ipc_type *t = box_ipc_type_lookup(type);
	if (!t || !t->desc)
		return -EBADMSG;
	uint64_t cap = t->reasm_cap > t->max_size ? t->reasm_cap : t->max_size;
	if (len > cap)
		return -EMSGSIZE;
	if (len > 0 && !buf)
		return -EINVAL;

	ProtobufCMessage *m = NULL;
	int r = unpack_checked(t->desc, buf ? buf : (const uint8_t *)"", len, &m);
	if (r < 0)
		return r;
	r = box_validate_msg(m);
	if (r < 0) {
		box_msg_free(m);
		return r;
	}
	*ret = m;
	return 0;
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
 * false and goes through protobuf-c and every check of unpack_checked(), so
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
box_ipc_pack(uint32_t type, uint64_t request_id, const ProtobufCMessage *msg, const int *fds,
	     unsigned n_fds, box_ipc_emit_fn emit, void *userdata)
{
	const struct box_ipc_type *t = box_ipc_type_lookup(type);
	int r;

	if (!t || !t->desc || !msg || msg->descriptor != t->desc || !emit)
		return -EINVAL;
	if (n_fds > t->max_fds || n_fds > BOX_IPC_MAX_FDS || (n_fds > 0 && !fds))
		return -EBADMSG;
	/* Refuse here what the receiver would refuse there. */
	if (!protobuf_c_message_check(msg))
		return -EINVAL;
	r = box_validate_msg(msg);
	if (r < 0)
		return r;
	r = box_validate_fd_count(msg, n_fds);
	if (r < 0)
		return r;

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
box_ipc_send(int fd, uint32_t type, uint64_t request_id, const ProtobufCMessage *msg,
	     const int *fds, unsigned n_fds)
{
	if (fd < 0)
		return -EBADF;
	return box_ipc_pack(type, request_id, msg, fds, n_fds, send_packet, &fd);
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
	uint8_t *pkt; /* BOX_IPC_MAX + 1 */
	struct ipc_stream streams[BOX_IPC_MAX_STREAMS];
	uint64_t budget_used;
	uint32_t *allowed;
	unsigned n_allowed;
	bool restricted;
	bool waits; /* the last box_ipc_recv_wait found nothing at first: poll first */
	/*
	 * Blocking receive (box_ipc_recv_wait on a blocking fd): one recvmsg
	 * bounded by SO_RCVTIMEO instead of poll + recvmsg. -1: not known yet.
	 */
	int blocking;
	int rcvtimeo_ms; /* what SO_RCVTIMEO is set to; -1: never set */
};

struct box_ipc_chan *
box_ipc_chan_new(int fd)
{
	struct box_ipc_chan *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
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

static bool
chan_allows(const struct box_ipc_chan *c, uint32_t type)
{
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

/* A complete message: decode it, match its fds, and hand both out. */
static int
deliver(const struct box_ipc_type *t, uint64_t request_id, const uint8_t *buf, size_t len,
	int *fds, unsigned n_fds, struct box_ipc_msg *ret)
{
	ProtobufCMessage *m = NULL;
	int r = box_ipc_decode(t->type, buf, len, &m);
	if (r < 0)
		return r;
	r = box_validate_fd_count(m, n_fds);
	if (r < 0) {
		box_msg_free(m);
		return r;
	}
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

	int r = deliver(t, s->request_id, s->buf, s->total, fds, n_fds, ret);
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
		t = box_ipc_type_lookup(type);
		if (version != BOX_IPC_VERSION)
			r = -EPROTONOSUPPORT;
		else if (!t || !t->desc)
			r = -EBADMSG;
		else if (!chan_allows(c, type))
			r = -EPERM;
		else if (n_fds > t->max_fds)
			r = -EBADMSG;
		else if (payload_len > t->max_size)
			r = -EMSGSIZE;
		else
			r = deliver(t, request_id, payload, payload_len, fds, n_fds, ret);
		goto out;
	}
	r = unpack_checked(&box__envelope__descriptor, pkt, len, &em);
	if (r < 0)
		goto out;
	const Box__Envelope *env = (const Box__Envelope *)em;
	if (env->version != BOX_IPC_VERSION) {
		r = -EPROTONOSUPPORT;
		goto out;
	}
	t = box_ipc_type_lookup(env->type);
	if (!t || !t->desc) {
		r = -EBADMSG;
		goto out;
	}
	if (!chan_allows(c, env->type)) {
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
			r = deliver(t, env->request_id, env->payload.data, env->payload.len, fds,
				    n_fds, ret);
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

static int64_t
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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
	int64_t deadline = timeout_ms >= 0 ? now_ms() + timeout_ms : -1;
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
			int64_t left = deadline - now_ms();
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

	int64_t deadline = timeout_ms >= 0 ? now_ms() + timeout_ms : -1;
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
			int64_t left = deadline - now_ms();
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
