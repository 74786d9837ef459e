/* SPDX-License-Identifier: Apache-2.0 */
/*
 * clientd.h — box-clientd's fixed fd layout and the pieces main.c, the
 * seccomp filter and the fuzz target share.
 *
 * A root (service-mode) boxd starts one box-clientd per client connection
 * with fork+exec: fd 4 = the client's connection (accepted by boxd, which
 * took SO_PEERCRED and checked the PID namespace on it first), fd 3 = one end
 * of a SOCK_SEQPACKET socketpair whose other end is boxd's channel for that
 * client (common/daemon_fds.h), 0-1 /dev/null, 2 boxd's stderr, nothing else open.
 * Trusts: the fds boxd arranged; nothing that arrives on fd 3.
 */
#ifndef BOX_CLIENTD_H
#define BOX_CLIENTD_H

#include <stddef.h>
#include <stdint.h>

#include "ipc.h"

#include "daemon_fds.h" /* DAEMON_FD_BOXD, DAEMON_FD_CLIENT */

/* Bytes of packets waiting in one direction before that side is read no more. */
#define CLIENTD_QUEUE_MAX (32u << 20)
/* When one side has closed: how long the other gets to take what is queued for it. */
#define CLIENTD_DRAIN_MS 10000

/* Exit statuses boxd tells apart (boxd/clientd.c). */
#define CLIENTD_EXIT_OK 0      /* a side closed; everything queued was passed on */
#define CLIENTD_EXIT_REFUSED 3 /* the client sent what the decoder refused */

/*
 * A channel for the client's side: reassembly state and the allow-list of
 * the types a client may send (the same list boxd's own channel allows).
 * NULL on allocation failure. The fd may be -1 (the fuzz target feeds packets).
 */
struct box_ipc_chan *clientd_chan_new(int fd);

/*
 * One packet from the client: fed to `chan` (reassembly, decode, no unknown
 * field, declared enums, the message validator of proto/validate.c and the
 * fd count), and when that completes a message, the validated tree is packed
 * again by box_ipc_pack() — boxd's canonical encoding, fragmented the same
 * way — and each resulting packet handed to `emit` (its fds on the last).
 * Takes the `n_fds` fds whatever the outcome; emit only borrows them.
 * Returns 1 when a message was passed on, 0 when a fragment was stored,
 * negative errno (ipc.h's codes) when the client is to be dropped.
 */
int clientd_forward(struct box_ipc_chan *chan, const uint8_t *pkt, size_t len, int *fds,
		    unsigned n_fds, box_ipc_emit_fn emit, void *userdata);

/* Install the allow-list (seccomp.c). */
int clientd_seccomp(void);

#endif
