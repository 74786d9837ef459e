/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spawn.c — box-trampoline started (common/spawn.c) with its fds at fixed numbers
 * (docs/sandbox.md): 0-2 the pipe ends boxctl relays (/dev/null for a terminal's
 * fd: the workload puts the box's pty slave there; agent.log for --detach) —
 * for a tool the fds box-shell passed, for box-shell /dev/null and boxd's
 * stderr —, 3 the plan socket (then PID 1's kernel refusal reports: kernel.c), 4 the status socket, 5.. the fds a
 * SANDBOX_SHELL plan passes through (pass_fds), everything else closed, an empty
 * environment (only BOX_TEST_ABSENT / BOX_TEST_LANDLOCK_ABI from boxd's own
 * environment, which can only make a layer look absent). The trampoline is
 * found next to boxd's own executable, else in BOX_LIBEXECDIR (box_paths.h, the
 * install's libexec directory) — never through an environment variable.
 * Trusts: its own executable's directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "box_paths.h"
#include "boxd.h"
#include "cleanup.h"
#include "fdutil.h"
#include "ipc.h"
#include "log.h"
#include "path.h"
#include "plan_validate.h"
#include "spawn.h"

/*
 * A helper program NAME: beside boxd's own executable, else in LIBEXECDIR.
 * Never through the environment: a service boxd must not run what a client
 * names.
 */
int
spawn_find_helper(const struct boxd *d, const char *name, char **ret)
{
	_cleanup_free_ char *p = d->self_dir ? path_join(d->self_dir, name) : NULL;

	if (p && access(p, X_OK) == 0) {
		*ret = TAKE_PTR(p);
		return 0;
	}
	free(p);
	p = path_join(BOX_LIBEXECDIR, name);
	if (!p)
		return -ENOMEM;
	if (access(p, X_OK) < 0)
		return -errno;
	*ret = TAKE_PTR(p);
	return 0;
}

/* Where spawn_find_helper looked for NAME, for the error that says it is missing. */
const char *
spawn_helper_places(const struct boxd *d, const char *name, char *buf, size_t size)
{
	if (d->self_dir)
		snprintf(buf, size, "%s/%s or %s/%s", d->self_dir, name, BOX_LIBEXECDIR, name);
	else
		snprintf(buf, size, "%s/%s", BOX_LIBEXECDIR, name);
	return buf;
}

static int trampoline_start(struct boxd *d, const Box__Plan *plan, const int stdio[3],
			    const int *extra, unsigned n_extra, pid_t *pidp, int *status_fd,
			    int *gate_fd, const struct box *kb, const char *label, int snap_fd);

int
spawn_trampoline(struct boxd *d, struct box *b, const Box__Plan *plan, int supervise_fd,
		 pid_t *pidp, int *status_fd, int *gate_fd)
{
	return trampoline_start(d, plan, b->stdio, supervise_fd >= 0 ? &supervise_fd : NULL,
				supervise_fd >= 0 ? 1 : 0, pidp, status_fd, gate_fd, b, "agent",
				b->snapshot_fd);
}

int
spawn_trampoline_fds(struct boxd *d, const Box__Plan *plan, const int stdio[3],
		     const int *extra, unsigned n_extra, pid_t *pidp, int *status_fd,
		     const struct box *b, const char *label, int snap_fd)
{
	return trampoline_start(d, plan, stdio, extra, n_extra, pidp, status_fd, NULL, b, label,
				snap_fd);
}

/*
 * GATE_FD: with plan->start_gate, our end of fd 3 (the plan's socket) for the "go"
 * (the caller hands it to kernel_watch_start after). Else that end is watched at once
 * for PID 1's kernel refusal reports of sandbox LABEL of box KB (NULL: closed).
 */
static int
trampoline_start(struct boxd *d, const Box__Plan *plan, const int stdio[3], const int *extra,
		 unsigned n_extra, pid_t *pidp, int *status_fd, int *gate_fd, const struct box *kb,
		 const char *label, int snap_fd)
{
	_cleanup_free_ char *tramp = NULL;
	_cleanup_free_ uint8_t *buf = NULL;
	int psock[2] = { -1, -1 }, ssock[2] = { -1, -1 };
	int r;

	r = spawn_find_helper(d, "box-trampoline", &tramp);
	if (r < 0) {
		char where[2 * PATH_MAX];
		return log_err_errno(r, "cannot find box-trampoline (%s)",
				     spawn_helper_places(d, "box-trampoline", where, sizeof(where)));
	}
	size_t len = box__plan__get_packed_size(plan);
	if (len > BOX_PLAN_BYTES_MAX)
		return log_err_errno(E2BIG, "the plan is %zu bytes (at most %u)", len,
				     BOX_PLAN_BYTES_MAX);
	buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	box__plan__pack(plan, buf);

	static char env_absent[300], env_abi[64];
	char *envp[3];
	size_t ne = 0;
	const char *v = getenv("BOX_TEST_ABSENT");
	if (v && strlen(v) < 256) {
		snprintf(env_absent, sizeof(env_absent), "BOX_TEST_ABSENT=%s", v);
		envp[ne++] = env_absent;
	}
	v = getenv("BOX_TEST_LANDLOCK_ABI");
	if (v && strlen(v) < 16) {
		snprintf(env_abi, sizeof(env_abi), "BOX_TEST_LANDLOCK_ABI=%s", v);
		envp[ne++] = env_abi;
	}
	envp[ne] = NULL;

	if ((r = box_ipc_socketpair(psock, false)) < 0 ||
	    (r = box_ipc_socketpair(ssock, false)) < 0) {
		safe_close(psock[0]);
		safe_close(psock[1]);
		return r;
	}
	int sndbuf = BOX_PLAN_BYTES_MAX * 4;
	(void)setsockopt(psock[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));

	int fds[SPAWN_FDS_MAX] = { stdio[0], stdio[1], stdio[2], psock[1], ssock[1] };
	if (n_extra > SPAWN_FDS_MAX - 5) {
		r = -E2BIG;
		goto fail;
	}
	for (unsigned i = 0; i < n_extra; i++)
		fds[5 + i] = extra[i];
	char *argv[] = { (char *)"box-trampoline", NULL };
	struct spawn_req req = { .path = tramp, .argv = argv, .envp = envp, .fds = fds,
				 .n_fds = 5 + n_extra };
	pid_t pid;
	r = spawn_process(&req, &pid);
	if (r < 0)
		goto fail;
	close(psock[1]);
	close(ssock[1]);
	psock[1] = ssock[1] = -1;

	/* A plan with a snapshot_root carries the box's overlay mount (docs/snapshot.md). */
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	union {
		char c[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (plan->snapshot_root && snap_fd >= 0) {
		mh.msg_control = u.c;
		mh.msg_controllen = sizeof(u.c);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &snap_fd, sizeof(int));
	}
	ssize_t n;
	do
		n = sendmsg(psock[0], &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	/* A failed send shows up as the trampoline's "no plan" error on fd 4. */
	if (n != (ssize_t)len)
		log_warn_errno(errno, "sending the plan");
	if (gate_fd && plan->start_gate)
		*gate_fd = psock[0];
	else if (kb)
		(void)kernel_watch_start(kb, psock[0], label); /* taken, closed on failure */
	else
		close(psock[0]);
	*pidp = pid;
	*status_fd = ssock[0];
	return 0;
fail:
	safe_close(psock[0]);
	safe_close(psock[1]);
	safe_close(ssock[0]);
	safe_close(ssock[1]);
	return r;
}
