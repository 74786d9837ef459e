/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_shell.c — box-shell's two protocols on the receive path (proto/
 * proto_shell.c, proto/shell_validate.c): the session (alias <-> box-shell)
 * and the control channel (boxd <-> box-shell).
 *
 * Input: one byte that picks the channels' starting state (so that every
 * state's rows are reachable without the fds ShellOpen needs), then a
 * sequence of packets, each a 2-byte little-endian length and that many
 * bytes, fed in order to a channel of each protocol and each peer role (so
 * reassembly state carries over); then the input after the first byte is
 * also decoded directly as the payload of every type of both protocols. A
 * decoded tree is packed again to catch inconsistent trees.
 * Seeds (test/fuzz/corpus/shell) are real packets written by
 * BOX_SHELL_WRITE_CORPUS=DIR build/test/unit/test_shell_validate.
 * Trusts: nothing; the input is arbitrary bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipc.h"
#include "proto/proto_shell.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
exercise(struct box_ipc_msg *m)
{
	size_t n = protobuf_c_message_get_packed_size(m->msg);
	uint8_t *b = malloc(n ? n : 1);
	if (b && protobuf_c_message_pack(m->msg, b) != n)
		abort();
	free(b);
	box_ipc_msg_done(m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	static const struct box_ipc_protocol *const protos[] = { &box_proto_session,
								  &box_proto_shell };
	for (size_t k = 0; k < sizeof(protos) / sizeof(protos[0]); k++) {
		for (unsigned role = 0; role < protos[k]->n_roles; role++) {
			struct box_ipc_chan *c = box_ipc_chan_new(-1, protos[k], role);
			if (!c)
				return 0;
			if (box_ipc_chan_set_state(c, data[0] % protos[k]->n_states) < 0)
				abort();
			size_t off = 1;
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
		for (unsigned i = 0; i < protos[k]->n_types; i++) {
			struct box_ipc_msg m = BOX_IPC_MSG_INIT;
			if (box_ipc_decode(protos[k], protos[k]->types[i].type, data + 1, size - 1,
					   &m.msg) == 0)
				exercise(&m);
		}
	}
	return 0;
}
