/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policyd.h — box-policyd's fixed fd layout and its own internal API.
 *
 * boxd starts box-policyd with fork+exec, one SOCK_SEQPACKET socketpair end
 * per peer at these fd numbers (everything else closed), and sends
 * PolicyInit on the boxd channel first (proto/policy.proto). Fds 4-6 may be
 * absent (closed) when the box has no such peer.
 * Trusts: the fds boxd arranged; nothing that arrives on them.
 */
#ifndef BOX_POLICYD_H
#define BOX_POLICYD_H

#include "daemon_fds.h" /* DAEMON_FD_BOXD, POLICYD_FD_GATEWAY, _MCPD, _SHELL */

#define POLICYD_N_PEERS 4

/*
 * Batch mode (group commit): at most this many decisions wait for one fsync;
 * the next one starts it at once (a peer that never pauses still gets
 * answers, and the held replies stay bounded).
 */
#define POLICYD_GROUP_MAX 256
/* Event priorities: channels and timers at 1 (libevent's default, n/2), the group fsync at 2. */
#define POLICYD_PRIORITIES 3
#define POLICYD_PRIO_GROUP_SYNC 2
#define POLICYD_LOG_FLUSH_MS 10
/* How long boxd has to send PolicyInit. */
#define POLICYD_INIT_TIMEOUT_MS 30000

/* Install the allow-list (seccomp.c); file calls only under DIRFD. */
int policyd_seccomp(int dirfd);

#endif
