/* SPDX-License-Identifier: Apache-2.0 */
/*
 * playboxd.h — the one harness that plays boxd for a per-box daemon under test
 * (box-policyd, box-gateway, box-mcpd, box-shell): start the daemon as boxd starts it
 * (its channels at fds 3, 4, ... in order, every other fd closed, stderr to a file,
 * boxd's environment), make a box's listening socket, and send the daemon's Init then
 * wait for its Ready. Used by test/policyd/harness.c, test/gateway/gw-harness.c,
 * test/mcp/daemon/test_mcpd.c and test/shell/daemon/test_shelld.c.
 * Trusts: nothing; it is test code.
 */
#ifndef BOX_TEST_PLAYBOXD_H
#define BOX_TEST_PLAYBOXD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc.h"

struct pb_spawn {
	const char *binary;       /* the program */
	const char *argv0;        /* its argv[0] (NULL: "box-daemon") */
	const int *fds;           /* placed at 3, 4, ... in this order */
	unsigned n_fds;
	const char *stderr_path;  /* appended to (created 0600); NULL: this process's stderr */
	/*
	 * boxd's environment: only BOX_TEST_* hooks and UBSAN_OPTIONS of ours; false: all of
	 * ours. Either way ASAN_OPTIONS gets detect_leaks=0 (LeakSanitizer's ptrace is refused
	 * under a daemon's seccomp filter).
	 */
	bool boxd_env;
	const char *const *env;   /* then: "NAME=VALUE" sets, "NAME" unsets; NULL-terminated */
	/* In the child, the fds in place, just before exec (rlimits, a filter); non-zero: exit 125. */
	int (*before_exec)(void *arg);
	void *arg;
};

/* Fork and exec S; the pid, or negative errno. The caller closes its copies of S->fds. */
pid_t pb_spawn(const struct pb_spawn *s);

/*
 * Send INIT (message INIT_TYPE, request id 1, with N_FDS fds) on C, then pb_ready. The
 * send's own error (a message the sender-side checks refuse) is returned as it is.
 */
int pb_init(struct box_ipc_chan *c, uint32_t init_type, const ProtobufCMessage *init,
	    const int *fds, unsigned n_fds, uint32_t ready_type, int timeout_ms,
	    struct box_ipc_msg *m);
/*
 * Wait up to TIMEOUT_MS for the daemon's answer to its Init into *M (box_ipc_msg_done it):
 * 0 when it is READY_TYPE, -EBADMSG when another message came, negative errno when none did.
 */
int pb_ready(struct box_ipc_chan *c, uint32_t ready_type, int timeout_ms, struct box_ipc_msg *m);

/* A box's listening SOCK_SEQPACKET socket at PATH (an old one removed), CLOEXEC; or -errno. */
int pb_listen(const char *path, int backlog);

#endif
