/* SPDX-License-Identifier: Apache-2.0 */
/*
 * playboxd.c — start a per-box daemon as boxd does (boxd/daemon.c): fork, its
 * channels moved to fds 3.. without CLOEXEC, every other fd above 2 closed, stderr to
 * the test's file, boxd's environment; then Init and the wait for Ready. See
 * playboxd.h.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fdutil.h"
#include "playboxd.h"

enum { PB_MAX_FDS = 16, PB_MAX_ENV = 128 };

/*
 * The child's environment into OUT (PB_MAX_ENV slots): boxd's or ours, ASAN_OPTIONS with
 * detect_leaks=0 either way, then the edits of S->env.
 */
static void
child_env(const struct pb_spawn *s, char **out)
{
	extern char **environ;
	static char asan[512];
	size_t n = 0;
	const char *ao = getenv("ASAN_OPTIONS");
	(void)snprintf(asan, sizeof(asan), "ASAN_OPTIONS=%s%sdetect_leaks=0", ao ? ao : "",
		       ao && *ao ? ":" : "");
	out[n++] = asan;
	for (char **e = environ; *e && n < PB_MAX_ENV - 32; e++) {
		if (strncmp(*e, "ASAN_OPTIONS=", 13) == 0)
			continue;
		if (!s->boxd_env || strncmp(*e, "BOX_TEST_", 9) == 0 ||
		    strncmp(*e, "UBSAN_OPTIONS=", 14) == 0)
			out[n++] = *e;
	}
	out[n] = NULL;
	for (const char *const *ed = s->env; ed && *ed && n < PB_MAX_ENV - 1; ed++) {
		size_t klen = strcspn(*ed, "=");
		/* drop the name's old value, then add the new one (if any) */
		size_t j = 0;
		for (size_t i = 0; i < n; i++)
			if (!(strncmp(out[i], *ed, klen) == 0 && out[i][klen] == '='))
				out[j++] = out[i];
		n = j;
		if ((*ed)[klen] == '=')
			out[n++] = (char *)*ed;
		out[n] = NULL;
	}
}

pid_t
pb_spawn(const struct pb_spawn *s)
{
	if (s->n_fds > PB_MAX_FDS)
		return -E2BIG;
	char *envp[PB_MAX_ENV];
	child_env(s, envp); /* before the fork: nothing to allocate in the child */
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0)
		return pid;
	int dst[PB_MAX_FDS];
	for (unsigned i = 0; i < s->n_fds; i++)
		dst[i] = 3 + (int)i;
	if (s->stderr_path) {
		int e = open(s->stderr_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (e < 0 || dup2(e, 2) < 0)
			_exit(126);
	}
	if (fd_move_to(s->fds, dst, s->n_fds) < 0 ||
	    fd_close_all_except(3, dst, s->n_fds) < 0)
		_exit(126);
	if (s->before_exec && s->before_exec(s->arg) != 0)
		_exit(125);
	char *argv[] = { (char *)(s->argv0 ? s->argv0 : "box-daemon"), NULL };
	execve(s->binary, argv, envp);
	_exit(127);
}

int
pb_init(struct box_ipc_chan *c, uint32_t init_type, const ProtobufCMessage *init,
	const int *fds, unsigned n_fds, uint32_t ready_type, int timeout_ms,
	struct box_ipc_msg *m)
{
	int r = box_ipc_chan_send(c, init_type, 1, init, fds, n_fds);
	if (r < 0)
		return r;
	return pb_ready(c, ready_type, timeout_ms, m);
}

int
pb_ready(struct box_ipc_chan *c, uint32_t ready_type, int timeout_ms, struct box_ipc_msg *m)
{
	int r = box_ipc_recv_wait(c, m, timeout_ms);
	if (r < 0)
		return r;
	return m->type == ready_type ? 0 : -EBADMSG;
}

int
pb_listen(const char *path, int backlog)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	memcpy(a.sun_path, path, strlen(path) + 1);
	(void)unlink(path);
	int l = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (l < 0)
		return -errno;
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, backlog) < 0) {
		int e = -errno;
		close(l);
		return e;
	}
	return l;
}
