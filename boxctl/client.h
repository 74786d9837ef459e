/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client.h — boxctl's side of the boxctl <-> boxd channel.
 *
 * `run`, `ps` and `stop` talk to the service boxd at $BOX_SOCKET, else
 * /run/box/boxd.sock. When none answers, `run` starts an embedded boxd for
 * its one box (a socketpair on the boxd's fd 3; boxd found next to boxctl's
 * own executable, then ../sbin, then BOX_SBINDIR). `ps` and `stop` also
 * reach the embedded boxds of this user at BASE/ID/boxd.sock, where BASE is
 * $XDG_RUNTIME_DIR/box, else /run/box for root, else /tmp/box-UID (a
 * directory of ours that nobody else can write, else it is skipped).
 * Trusts: a reply only after box_ipc_decode() validated it.
 */
#ifndef BOXCTL_CLIENT_H
#define BOXCTL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc.h"
#include "boxd.pb-c.h"
#include "proto/proto_client.h"

/* The service socket's path ($BOX_SOCKET, else /run/box/boxd.sock). */
const char *client_service_path(void);
/* Connect to a boxd socket (SOCK_SEQPACKET). Returns the fd or negative errno. */
int client_connect(const char *path);
/* Start an embedded boxd; returns our end of its fd 3 and its pid. `where` gets the boxd
 * it started, or on -ENOENT every place it looked. */
int client_start_embedded(int *fd, pid_t *pid, char *where, size_t size);
/* BASE for this user (allocated), verified; negative errno when unusable. */
int client_runtime_base(char **ret);
/*
 * The sockets of this user's embedded boxds (BASE/ID/boxd.sock), allocated
 * NULL-terminated vector (free each and the vector).
 */
int client_embedded_sockets(char ***ret);
/*
 * Send `msg` and wait for the reply of type `reply_type` (or an
 * ErrorReply: then -EREMOTEIO and *err_msg set, allocated). Blocks up to
 * timeout_ms (-1: forever).
 */
int client_call(int fd, uint32_t type, const ProtobufCMessage *msg, uint32_t reply_type,
		struct box_ipc_msg *reply, char **err_msg, int timeout_ms);

/*
 * `boxctl CMD NAME|ID`: the one operand, a box name or id. NULL after the
 * usage line or the error on stderr (the caller exits BOXCTL_EXIT_USAGE).
 */
const char *client_box_operand(int argc, char **argv, const char *cmd);

#endif
