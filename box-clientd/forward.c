/* SPDX-License-Identifier: Apache-2.0 */
/*
 * forward.c — box-clientd's whole judgement of a client packet: decode and
 * validate it exactly as boxd did before box-clientd existed (the same
 * box_ipc_chan_feed(), the same proto/validate.c validators, unknown fields
 * refused), then pack the validated tree again for boxd. Root boxd so
 * decodes only what box_ipc_pack() wrote: a canonical encoding made by box's
 * own code from a tree that already passed every check, never the client's
 * bytes.
 * No system call but close() of fds the feed refuses: the fuzz target
 * (test/fuzz/fuzz_clientd.c) runs this file as it is.
 * Trusts: nothing in the packet.
 */
#include <errno.h>

#include "clientd.h"
#include "proto_client.h"

/*
 * What a client may send: boxd's client channel allows the same list, and
 * checks it again on what arrives from here.
 */
static const uint32_t client_types[] = {
	BOX__MSG_TYPE__MSG_RUN_REQUEST, BOX__MSG_TYPE__MSG_RUN_CONTROL,
	BOX__MSG_TYPE__MSG_PS_REQUEST,	BOX__MSG_TYPE__MSG_STOP_REQUEST,
	BOX__MSG_TYPE__MSG_LOG_REQUEST, BOX__MSG_TYPE__MSG_CHECK_REQUEST,
	BOX__MSG_TYPE__MSG_MCP_PINS_REQUEST, BOX__MSG_TYPE__MSG_ATTACH_REQUEST,
	BOX__MSG_TYPE__MSG_POLICY_RELOAD_REQUEST, BOX__MSG_TYPE__MSG_ASK_REQUEST,
};

struct box_ipc_chan *
clientd_chan_new(int fd)
{
	struct box_ipc_chan *c = box_ipc_chan_new(fd, &box_proto_client, BOX_CLIENT_ROLE_CLIENT);
	if (!c)
		return NULL;
	/* boxd's replies pass by unread: boxd keeps the conversation's states. */
	box_ipc_chan_stateless(c);
	if (box_ipc_chan_allow(c, client_types, sizeof(client_types) / sizeof(*client_types)) < 0)
		c = box_ipc_chan_free(c);
	return c;
}

int
clientd_forward(struct box_ipc_chan *chan, const uint8_t *pkt, size_t len, int *fds,
		unsigned n_fds, box_ipc_emit_fn emit, void *userdata)
{
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	int r = box_ipc_chan_feed(chan, pkt, len, fds, n_fds, &m);
	if (r <= 0)
		return r;
	/* box_ipc_pack() validates once more what it packs, as every sender does. */
	r = box_ipc_pack(&box_proto_client, m.type, m.request_id, m.msg, m.fds, m.n_fds, emit,
			 userdata);
	box_ipc_msg_done(&m);
	return r < 0 ? r : 1;
}
