/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon_start.c — the start-up steps every daemon shares (daemon_start.h).
 * Library code: negative errno, never logs.
 * Trusts: nothing at the fds until checked; the process's own ids.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>

#include "daemon_start.h"
#include "fdutil.h"
#include "log.h"
#include "privdrop.h"

int
daemon_fds_take(const struct daemon_fd_want *want, size_t n, bool *present, size_t *bad)
{
	for (size_t i = 0; i < n; i++) {
		int fd = want[i].fd;
		bool open = fd_is_open(fd);
		if (present)
			present[i] = open;
		if (!open && want[i].kind == DAEMON_FD_CHANNEL_OPTIONAL)
			continue;
		if (!fd_is_seqpacket(fd) ||
		    (want[i].kind == DAEMON_FD_LISTENER && !fd_is_listening(fd))) {
			*bad = i;
			return -EBADF;
		}
		int r = fd_set_cloexec(fd, true);
		if (r < 0) {
			*bad = i;
			return r;
		}
	}
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return -errno;
	return 0;
}

int
daemon_lock_down(uid_t uid, gid_t gid, const char **failed)
{
	struct privdrop pd = { .uid = uid, .gid = gid };
	return privdrop_apply(&pd, failed);
}

int
daemon_args(int argc, char **argv, bool *spare)
{
	*spare = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-w") == 0 && !*spare)
			*spare = true;
		else if (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "-n") == 0)
			log_set_max_level(argv[i][1] == 'q' ? LOG_LEVEL_WARNING : LOG_LEVEL_NOTICE);
		else
			return -EINVAL;
	}
	return 0;
}

void
daemon_spare_taken(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "-w") == 0)
			memset(argv[i], 0, strlen(argv[i]));
}

int
daemon_init_receive(struct box_ipc_chan *chan, struct box_ipc_msg *m, int timeout_ms)
{
	int r = box_ipc_recv_wait(chan, m, timeout_ms < 0 ? -1 : timeout_ms);
	if (r == -ECONNRESET)
		return 0;
	return r < 0 ? r : 1;
}
