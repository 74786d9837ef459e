/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_clientd.c — box-clientd's judgement of client packets
 * (box-clientd/forward.c): decode → validate → canonical re-encoding, and
 * what root boxd then does with that re-encoding.
 *
 * Input: a sequence of packets as a client sends them, each a 2-byte
 * little-endian length, one byte whose low two bits are the number of fds
 * that come with the packet (/dev/null duplicates: a RunRequest carries its
 * stdio fds), then the packet. They are fed in order to one client channel
 * (reassembly state carries over) until the first refusal, as box-clientd
 * does. Every message passed on must then hold up on boxd's side:
 *   - its packets, fed to a fresh channel as boxd's would be, give exactly
 *     one message, of the same type and request id with the same fd count,
 *     on the last packet;
 *   - packing that message again gives the same inner bytes, and the same
 *     packet bytes when it fits one packet (fragments differ only in their
 *     stream id): the re-encoding is a fixed point, so what root decodes is
 *     box's canonical form and nothing of the client's choosing.
 * Any breach aborts.
 * Seeds (test/fuzz/corpus/clientd) are real PsRequest, StopRequest,
 * LogRequest, RunRequest (attached and detached), AttachRequest and RunControl packets as
 * boxctl sent them, recorded on a listening socket, plus refusals.
 * Trusts: nothing; the input is arbitrary bytes.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "box-clientd/clientd.h"
#include "ipc.h"
#include "proto/proto_client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_PACKETS_MAX 256u

/* The packets of one re-encoded message (fds: the count only; the fds stay borrowed). */
struct packets {
	uint8_t *data[FUZZ_PACKETS_MAX];
	size_t len[FUZZ_PACKETS_MAX];
	unsigned n_fds[FUZZ_PACKETS_MAX];
	unsigned n;
};

static int
collect(void *userdata, const uint8_t *pkt, size_t len, const int *fds, unsigned n_fds)
{
	struct packets *ps = userdata;
	(void)fds;
	if (ps->n >= FUZZ_PACKETS_MAX)
		abort(); /* 8 MiB caps every message at far fewer packets */
	uint8_t *c = malloc(len ? len : 1);
	if (!c)
		return -1;
	memcpy(c, pkt, len);
	ps->data[ps->n] = c;
	ps->len[ps->n] = len;
	ps->n_fds[ps->n] = n_fds;
	ps->n++;
	return 0;
}

static void
packets_clear(struct packets *ps)
{
	for (unsigned i = 0; i < ps->n; i++)
		free(ps->data[i]);
	ps->n = 0;
}

static int null_fd = -1;

/* Fill fds[0..n) with fresh duplicates of /dev/null (owned by the caller). */
static unsigned
dup_nulls(int *fds, unsigned n)
{
	unsigned k = 0;
	while (k < n) {
		int d = fcntl(null_fd, F_DUPFD_CLOEXEC, 3);
		if (d < 0)
			break;
		fds[k++] = d;
	}
	return k;
}

/* Inner message bytes of a tree (malloc'd), for the fixed-point check. */
static uint8_t *
pack_inner(const ProtobufCMessage *m, size_t *len)
{
	*len = protobuf_c_message_get_packed_size(m);
	uint8_t *b = malloc(*len ? *len : 1);
	if (!b || protobuf_c_message_pack(m, b) != *len)
		abort();
	return b;
}

/* What boxd does with one re-encoded message; aborts on any breach of the contract. */
static void
boxd_side(const struct packets *first)
{
	/* States are not this target's subject (boxd keeps them): both channels are stateless. */
	struct box_ipc_chan *c = box_ipc_chan_new(-1, &box_proto_client, BOX_CLIENT_ROLE_CLIENT);
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	if (!c)
		return;
	box_ipc_chan_stateless(c);
	int got = 0;
	for (unsigned i = 0; i < first->n; i++) {
		int fds[BOX_IPC_MAX_FDS];
		unsigned n = dup_nulls(fds, first->n_fds[i]);
		if (n != first->n_fds[i])
			abort();
		int r = box_ipc_chan_feed(c, first->data[i], first->len[i], fds, n, &m);
		/* Every packet but the last is a stored fragment; the last is the message. */
		if (r != (i + 1 == first->n ? 1 : 0))
			abort();
		got += r;
	}
	if (got != 1 || m.n_fds != first->n_fds[first->n - 1])
		abort();

	struct packets second = { .n = 0 };
	int fds[BOX_IPC_MAX_FDS] = { 0 };
	if (box_ipc_pack(&box_proto_client, m.type, m.request_id, m.msg, m.fds, m.n_fds, collect,
			 &second) < 0)
		abort();
	if (second.n != first->n)
		abort();
	if (first->n == 1 &&
	    (second.len[0] != first->len[0] || memcmp(second.data[0], first->data[0], first->len[0])))
		abort();
	/* The inner bytes: decode the first encoding's payload again on a fresh channel. */
	size_t l1, l2;
	uint8_t *b1 = pack_inner(m.msg, &l1);
	struct box_ipc_chan *c2 = box_ipc_chan_new(-1, &box_proto_client, BOX_CLIENT_ROLE_CLIENT);
	struct box_ipc_msg m2 = BOX_IPC_MSG_INIT;
	if (c2)
		box_ipc_chan_stateless(c2);
	for (unsigned i = 0; c2 && i < second.n; i++) {
		unsigned n = dup_nulls(fds, second.n_fds[i]);
		if (box_ipc_chan_feed(c2, second.data[i], second.len[i], fds, n, &m2) < 0)
			abort();
	}
	if (!m2.msg)
		abort();
	uint8_t *b2 = pack_inner(m2.msg, &l2);
	if (l1 != l2 || memcmp(b1, b2, l1))
		abort();
	free(b1);
	free(b2);
	box_ipc_msg_done(&m2);
	box_ipc_chan_free(c2);
	packets_clear(&second);
	box_ipc_msg_done(&m);
	box_ipc_chan_free(c);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (null_fd < 0)
		null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd < 0)
		return 0;
	struct box_ipc_chan *c = clientd_chan_new(-1);
	if (!c)
		return 0;
	size_t off = 0;
	while (size - off >= 3) {
		size_t len = (size_t)data[off] | (size_t)data[off + 1] << 8;
		unsigned want_fds = data[off + 2] & 3u;
		off += 3;
		if (len > size - off)
			break;
		int fds[BOX_IPC_MAX_FDS];
		unsigned n_fds = dup_nulls(fds, want_fds);
		struct packets out = { .n = 0 };
		int r = clientd_forward(c, data + off, len, fds, n_fds, collect, &out);
		off += len;
		if (r == 1) {
			if (out.n == 0)
				abort();
			boxd_side(&out);
		} else if (out.n != 0) {
			abort(); /* nothing leaves for boxd unless a whole message passed */
		}
		packets_clear(&out);
		if (r < 0)
			break; /* box-clientd drops the client at its first refusal */
	}
	box_ipc_chan_free(c);
	return 0;
}
