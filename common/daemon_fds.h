/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon_fds.h — the fd numbers of every channel boxd hands its daemons,
 * one definition for both sides: boxd's spawn table (boxd/daemon.c) places
 * them, the daemons (box-policyd, box-gateway, box-mcpd, box-shell,
 * box-clientd) find them there. One channel has one number everywhere:
 *
 *   3  the daemon's control channel with boxd (every daemon)
 *   4  a daemon's channel to box-policyd (box-gateway, box-mcpd, box-shell)
 *   5  the agent's socket it serves, bound and listening (box-mcpd's
 *      mcp.sock, box-shell's shell.sock)
 *   4  box-clientd: the client's connection (it has no box-policyd)
 *
 * box-policyd is the other end of the channels at 4: it holds one per peer,
 * at POLICYD_FD_GATEWAY, POLICYD_FD_MCPD and POLICYD_FD_SHELL (each may be
 * closed when the box has no such peer).
 * Everything else is closed; 0 and 1 are /dev/null, 2 the daemon's log.
 * Trusts: nothing; numbers only.
 */
#ifndef BOX_DAEMON_FDS_H
#define BOX_DAEMON_FDS_H

#define DAEMON_FD_BOXD 3
#define DAEMON_FD_POLICYD 4
#define DAEMON_FD_LISTEN 5
#define DAEMON_FD_CLIENT 4

#define POLICYD_FD_GATEWAY 4
#define POLICYD_FD_MCPD 5
#define POLICYD_FD_SHELL 6

/*
 * The box's end: boxd closes box-policyd's channel as it tells the peers to end,
 * and box-policyd reads on until every peer's channel has closed too (their last
 * records are in), at most this long — longer than boxd waits for a peer to exit
 * before it kills it (boxd.h), so that what a killed peer sent is still read.
 */
#define POLICYD_PEERS_END_WAIT_MS 4000

/* The most fds a daemon is started with (0-2 and its channels). */
#define DAEMON_FDS_MAX 7

#endif
