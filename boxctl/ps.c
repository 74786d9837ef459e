/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ps.c — `boxctl ps`: the boxes of this user (all boxes for root, from the
 * service), from the service boxd and from every embedded boxd of this
 * user (BASE/ID/boxd.sock). A header line, then one tab-separated line per
 * box: NAME ID STATE PID UPTIME (docs/boxctl.1.md).
 * Trusts: replies only after box_ipc_decode() validated them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "client.h"
#include "commands.h"

static const char *
state_name(Box__BoxState s)
{
	switch (s) {
	case BOX__BOX_STATE__BOX_STATE_STARTING:
		return "starting";
	case BOX__BOX_STATE__BOX_STATE_RUNNING:
		return "running";
	case BOX__BOX_STATE__BOX_STATE_STOPPING:
		return "stopping";
	case _BOX__BOX_STATE_IS_INT_SIZE:
	default:
		return "?";
	}
}

/*
 * Is error R of a boxd that is simply not there — no socket, or nobody
 * listening on it? An embedded boxd may also end (its box did) between the
 * listing of its socket and our question: its connection reset or closed.
 * Anything else (a timeout, a garbled reply, a socket we may not use) is a
 * boxd that is there and did not answer: an error, said.
 */
static bool
boxd_gone(int r, bool embedded)
{
	if (r == -ENOENT || r == -ECONNREFUSED)
		return true;
	return embedded && (r == -ECONNRESET || r == -EPIPE || r == -ENOTCONN);
}

/* Ask one boxd; print its boxes not printed yet. Returns 0, or negative errno (said). */
static int
ps_one(const char *path, bool embedded, char ***seen, size_t *n_seen)
{
	_cleanup_close_ int fd = client_connect(path);
	if (fd < 0) {
		if (!boxd_gone(fd, embedded))
			fprintf(stderr, "boxctl: error: cannot reach boxd at %s: %s\n", path,
				strerror(-fd));
		return fd;
	}
	Box__PsRequest req = BOX__PS_REQUEST__INIT;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	_cleanup_free_ char *err = NULL;
	int r = client_call(fd, BOX__MSG_TYPE__MSG_PS_REQUEST, &req.base,
			    BOX__MSG_TYPE__MSG_PS_REPLY, &m, &err, 5000);
	if (r == -EREMOTEIO) {
		/* A boxd answered with a refusal (say, of a client inside a sandbox): say so. */
		fprintf(stderr, "boxctl: error: boxd at %s: %s\n", path, err ? err : "refused");
		return r;
	}
	if (r < 0) {
		if (!boxd_gone(r, embedded))
			fprintf(stderr, "boxctl: error: boxd at %s did not answer: %s\n", path,
				strerror(-r));
		return r;
	}
	const Box__PsReply *rep = (const Box__PsReply *)m.msg;
	for (size_t i = 0; i < rep->n_boxes; i++) {
		const Box__BoxInfo *b = rep->boxes[i];
		bool dup = false;
		for (size_t k = 0; k < *n_seen; k++)
			dup |= strcmp((*seen)[k], b->box_id) == 0;
		if (dup)
			continue;
		char **nv = realloc(*seen, (*n_seen + 1) * sizeof(char *));
		if (nv) {
			*seen = nv;
			if ((nv[*n_seen] = strdup(b->box_id)))
				(*n_seen)++;
		}
		printf("%s\t%s\t%s\t%d\t%llu\n", b->name, b->box_id, state_name(b->state), b->pid,
		       (unsigned long long)b->uptime_s);
	}
	box_ipc_msg_done(&m);
	return 0;
}

int
cmd_ps(int argc, char **argv)
{
	char **seen = NULL, **socks = NULL;
	size_t n_seen = 0;
	bool failed = false;
	int r;

	if (argc > 1) {
		fprintf(stderr, "usage: boxctl ps\n");
		return BOXCTL_EXIT_USAGE;
	}
	printf("NAME\tID\tSTATE\tPID\tUPTIME\n");
	/* A boxd that is not there is no error; one that refuses us or does not answer is. */
	r = ps_one(client_service_path(), false, &seen, &n_seen);
	failed |= r < 0 && !boxd_gone(r, false);
	if (client_embedded_sockets(&socks) == 0)
		for (size_t i = 0; socks[i]; i++) {
			r = ps_one(socks[i], true, &seen, &n_seen);
			failed |= r < 0 && !boxd_gone(r, true);
			free(socks[i]);
		}
	free(socks);
	for (size_t i = 0; i < n_seen; i++)
		free(seen[i]);
	free(seen);
	return fflush(stdout) == 0 && !failed ? BOXCTL_EXIT_OK : BOXCTL_EXIT_FAILURE;
}
