/* SPDX-License-Identifier: Apache-2.0 */
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
#include "proto/proto_client.h"
#include "proto/proto_policy.h"
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
	/* The same packets into boxd's end (from a client) and boxctl's end (from boxd). */
	for (unsigned role = 0; role < BOX_CLIENT_N_ROLES; role++) {
		struct box_ipc_chan *c = box_ipc_chan_new(-1, &box_proto_client, role);
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
	}

	static const struct box_ipc_protocol *const protos[] = { &box_proto_client,
								  &box_proto_policy };
	for (size_t k = 0; k < sizeof(protos) / sizeof(protos[0]); k++) {
		for (unsigned i = 0; i < protos[k]->n_types; i++) {
			struct box_ipc_msg m = BOX_IPC_MSG_INIT;
			if (box_ipc_decode(protos[k], protos[k]->types[i].type, data, size,
					   &m.msg) == 0)
				exercise(&m);
		}
	}
	return 0;
}
