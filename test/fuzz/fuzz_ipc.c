/*
 * fuzz_ipc.c — the IPC receive path: envelopes, fragments, every message
 * type's decode-and-validate (common/ipc.c, proto/validate.c).
 *
 * Input: a sequence of packets, each a 2-byte little-endian length and that
 * many bytes, fed in order to one channel as a peer would send them (so
 * reassembly state carries over); then the whole input is also decoded
 * directly as the payload of every message type. A decoded tree is packed
 * again and, for specs, redacted, to catch inconsistent trees.
 * Seeds (test/fuzz/corpus/ipc) are real packed messages written by
 * BOX_IPC_WRITE_CORPUS=DIR build/test/unit/test_ipc.
 * Trusts: nothing; the input is arbitrary bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "boxd.pb-c.h"
#include "ipc.h"
#include "proto/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
exercise(struct box_ipc_msg *m)
{
	size_t n = protobuf_c_message_get_packed_size(m->msg);
	uint8_t *b = malloc(n ? n : 1);
	if (b && protobuf_c_message_pack(m->msg, b) != n)
		abort();
	free(b);
	if (m->msg->descriptor == &box__run_request__descriptor)
		box_spec_redact(((Box__RunRequest *)m->msg)->spec);
	box_ipc_msg_done(m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct box_ipc_chan *c = box_ipc_chan_new(-1);
	if (!c)
		return 0;
	size_t off = 0;
	while (size - off >= 2) {
		size_t len = (size_t)data[off] | (size_t)data[off + 1] << 8;
		off += 2;
		if (len > size - off)
			break;
		struct box_ipc_msg m = BOX_IPC_MSG_INIT;
		int r = box_ipc_chan_feed(c, data + off, len, NULL, 0, &m);
		off += len;
		if (r == 1)
			exercise(&m);
		else if (r < 0)
			break;
	}
	box_ipc_chan_free(c);

	for (uint32_t t = BOX__MSG_TYPE__MSG_RUN_REQUEST; t <= BOX__MSG_TYPE__MSG_ERROR_REPLY; t++) {
		struct box_ipc_msg m = BOX_IPC_MSG_INIT;
		if (box_ipc_decode(t, data, size, &m.msg) == 0)
			exercise(&m);
	}
	return 0;
}
