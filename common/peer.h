/* SPDX-License-Identifier: Apache-2.0 */
/*
 * peer.h — is a Unix socket's peer in our own PID namespace?
 *
 * boxd serves only processes of its own PID namespace: every box, tool
 * sandbox and MCP sandbox has a PID namespace of its own, so a client in
 * another one is a process inside some sandbox (it reached the socket
 * through a grant), and it must not drive boxd. Library code: negative
 * errno, never logs.
 * Trusts: the kernel's peer pidfd and /proc (see peer.c for the fallback's race).
 */
#ifndef BOX_PEER_H
#define BOX_PEER_H

#include <stdbool.h>

/* How peer_pidns_same() found the peer's namespace. */
enum peer_method {
	PEER_METHOD_PIDFD, /* SO_PEERPIDFD + PIDFD_GET_PID_NAMESPACE */
	PEER_METHOD_PROC,  /* SO_PEERCRED pid + /proc/PID/ns/pid */
};

/* Our own PID namespace: an O_CLOEXEC fd of /proc/self/ns/pid (>= 0), or negative errno. */
int peer_pidns_open_self(void);

/*
 * 1 when the peer of socket `sockfd` is in the PID namespace `self_ns_fd`
 * refers to, 0 when it is in another one, negative errno when it cannot be
 * told (the caller refuses the peer then too). `force_proc` skips the pidfd
 * way (to test the fallback). *method (may be NULL) says which way answered.
 */
int peer_pidns_same(int sockfd, int self_ns_fd, bool force_proc, enum peer_method *method);

#endif
