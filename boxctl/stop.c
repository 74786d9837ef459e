/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stop.c — `boxctl stop NAME|ID`: asks the boxd that runs the box (the
 * service, else this user's embedded boxds) to SIGTERM its agent, SIGKILL
 * it after 2 s and tear the box down; waits until the box is gone.
 * Exit 0 when it stopped; 1 with `boxctl: error: …` when no box has that
 * name or id, or it would not go.
 * Trusts: replies only after box_ipc_decode() validated them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "client.h"
#include "commands.h"
#include "proto/validate.h"

/* Is `id` still listed by the boxd at `path`? */
static bool
still_there(const char *path, const char *id)
{
	_cleanup_close_ int fd = client_connect(path);
	if (fd < 0)
		return false;
	Box__PsRequest req = BOX__PS_REQUEST__INIT;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	if (client_call(fd, BOX__MSG_TYPE__MSG_PS_REQUEST, &req.base, BOX__MSG_TYPE__MSG_PS_REPLY,
			&m, NULL, 2000) < 0)
		return false;
	const Box__PsReply *rep = (const Box__PsReply *)m.msg;
	bool found = false;
	for (size_t i = 0; i < rep->n_boxes; i++)
		found |= strcmp(rep->boxes[i]->box_id, id) == 0;
	box_ipc_msg_done(&m);
	return found;
}

/* 1: stopped here; 0: not this boxd's; negative: an error to report. */
static int
stop_one(const char *path, const char *box, char **err)
{
	_cleanup_close_ int fd = client_connect(path);
	if (fd < 0)
		return 0;
	Box__StopRequest req = BOX__STOP_REQUEST__INIT;
	req.box = (char *)box;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	int r = client_call(fd, BOX__MSG_TYPE__MSG_STOP_REQUEST, &req.base,
			    BOX__MSG_TYPE__MSG_STOP_REPLY, &m, err, 5000);
	if (r < 0)
		return r == -EREMOTEIO ? r : 0;
	const Box__StopReply *rep = (const Box__StopReply *)m.msg;
	if (rep->status == BOX__REPLY_STATUS__REPLY_NOT_FOUND) {
		box_ipc_msg_done(&m);
		return 0;
	}
	if (rep->status != BOX__REPLY_STATUS__REPLY_OK) {
		*err = strdup(rep->error ? rep->error : "boxd refused to stop it");
		box_ipc_msg_done(&m);
		return -EPERM;
	}
	char id[16];
	snprintf(id, sizeof(id), "%s", rep->box_id ? rep->box_id : box);
	box_ipc_msg_done(&m);
	/* SIGKILL comes 2 s after SIGTERM; the teardown follows. */
	for (int i = 0; i < 100 && still_there(path, id); i++) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	if (still_there(path, id)) {
		*err = strdup("the box did not stop");
		return -ETIMEDOUT;
	}
	return 1;
}

int
cmd_stop(int argc, char **argv)
{
	const char *box = client_box_operand(argc, argv, "stop");
	if (!box)
		return BOXCTL_EXIT_USAGE;
	char *err = NULL;
	int r = stop_one(client_service_path(), box, &err);
	char **socks = NULL;
	if (r == 0 && client_embedded_sockets(&socks) == 0) {
		for (size_t i = 0; socks[i]; i++) {
			if (r == 0)
				r = stop_one(socks[i], box, &err);
			free(socks[i]);
		}
	}
	free(socks);
	if (r > 0)
		return BOXCTL_EXIT_OK;
	if (r == 0)
		fprintf(stderr, "boxctl: error: no box named %s\n", box);
	else
		fprintf(stderr, "boxctl: error: stop %s: %s\n", box, err ? err : strerror(-r));
	free(err);
	return BOXCTL_EXIT_FAILURE;
}
