/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trampoline.c — box-trampoline: builds one sandbox from the plan boxd
 * sends on fd 3, reporting on fd 4 (docs/sandbox.md). Straight-line, in the
 * order of docs/sandbox.md; each step lives in its own file and either succeeds
 * or reports `sandbox setup failed at <step>: <reason>` and exits 1.
 *
 *   plan            fd 3: one packet, capped, no fds, decoded and validated
 *   layers          Landlock / seccomp present when required
 *   credentials     cgroups joined, owner ids, unshare, own id maps
 *   pid 1           fork, no_new_privs; the outer trampoline has vm.memfd_noexec set
 *                   for a box not owned by root (memfd.c), locks down, waits, forwards
 *   network         lo up, gateway listener sent on fd 4
 *   mount view      tmpfs root, binds, /dev, /proc, pivot_root
 *   landlock        rights per path
 *   limits          rlimits
 *   capabilities    none left, no_new_privs
 *   environment     exactly the composed environment
 *   file descriptors only 0, 1, 2 (+ fd 4 and the parent pipe, CLOEXEC); box-shell
 *                   also gets the passed fds 5.. as its fds 3.. (the status fd
 *                   moves out of the way as soon as the plan has come)
 *   terminal        pty master sent on fd 4
 *   start gate      with plan.start_gate: PID 1 waits for boxd's "go" on fd 3
 *                   (fd 3 then stays PID 1's, for its kernel refusal reports)
 *   seccomp, exec   in the workload, then EOF on fd 4
 *
 * Trusts: nothing from its caller but fd 3's plan, and that only after
 * box_plan_validate(). It is not setuid: it runs with its caller's ids
 * (root in service mode, switching to the owner; the owner in embedded mode).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cleanup.h"
#include "fdutil.h"
#include "plan_validate.h"
#include "trampoline.h"

/* One packet from fd 3: the packed plan, with one fd exactly when it has a snapshot_root. */
static Box__Plan *
plan_receive(struct tramp *t)
{
	_cleanup_free_ uint8_t *buf = malloc(BOX_PLAN_BYTES_MAX + 1);
	if (!buf)
		tramp_fail(t, STEP_PLAN, ENOMEM, "out of memory");
	union {
		char c[CMSG_SPACE(sizeof(int) * 8)];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = buf, .iov_len = BOX_PLAN_BYTES_MAX + 1};
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.c, .msg_controllen = sizeof(u.c),
	};
	ssize_t n;
	do
		n = recvmsg(TRAMP_PLAN_FD, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		tramp_fail(t, STEP_PLAN, errno, "reading the plan on fd 3");
	size_t n_fds = 0;
	int snap = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < nfd; i++, n_fds++) {
				int fd;
				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				if (snap < 0)
					snap = fd;
				else
					close(fd);
			}
		}
	}
	if (n_fds > 1 || (mh.msg_flags & MSG_CTRUNC))
		tramp_fail(t, STEP_PLAN, 0, "the plan came with %zu file descriptors", n_fds);
	if ((mh.msg_flags & MSG_TRUNC) || (size_t)n > BOX_PLAN_BYTES_MAX)
		tramp_fail(t, STEP_PLAN, 0, "the plan is larger than %u bytes", BOX_PLAN_BYTES_MAX);
	if (n == 0)
		tramp_fail(t, STEP_PLAN, 0, "no plan on fd 3");

	Box__Plan *p = NULL;
	char why[256];
	int r = box_plan_decode(buf, (size_t)n, &p, why, sizeof(why));
	if (r < 0)
		tramp_fail(t, STEP_PLAN, 0, "%s", why);
	if ((snap >= 0) != (p->snapshot_root != NULL))
		tramp_fail(t, STEP_PLAN, 0, snap >= 0 ? "the plan came with a file descriptor"
						     : "the plan's snapshot came without its mount");
	t->snapshot_fd = snap;
	return p;
}

/* Step 8: exactly the composed environment. */
static char **
environment_build(struct tramp *t)
{
	const Box__Plan *p = t->plan;
	char **envp = calloc(p->n_env + 1, sizeof(char *));
	if (!envp)
		tramp_fail(t, STEP_ENV, ENOMEM, "out of memory");
	for (size_t i = 0; i < p->n_env; i++)
		envp[i] = p->env[i];
	return envp;
}

/*
 * SANDBOX_SHELL's channels (plan.pass_fds): fds 5.. must be open. They stay
 * CLOEXEC until the workload dup2()s them to 3.. right before its exec
 * (pid1.c), so no other process of the box ever holds them without
 * CLOEXEC. The status fd leaves fd 4 first: it would be overwritten by the
 * workload's fd 4 while it still reports on it.
 */
_Static_assert(TRAMP_PASS_FD_FIRST == BOX_PLAN_PASS_FD_FIRST &&
		       TRAMP_PASS_FDS_MAX == BOX_PLAN_PASS_FDS_MAX,
	       "plan_validate.h and trampoline.h agree on pass_fds");

static void
passed_fds_take(struct tramp *t)
{
	t->n_pass = t->plan->pass_fds;
	if (t->plan->supervise) {
		/* a supervised tool: fd 5 is PID 1's box-policyd channel */
		if (!fd_is_seqpacket(BOX_PLAN_SUPERVISE_FD))
			tramp_fail(t, STEP_FDS, EBADF,
				   "fd %d is not a SOCK_SEQPACKET socket (the plan supervises the "
				   "program)", BOX_PLAN_SUPERVISE_FD);
		if (fd_set_cloexec(BOX_PLAN_SUPERVISE_FD, true) < 0)
			tramp_fail(t, STEP_FDS, errno, "FD_CLOEXEC on fd %d", BOX_PLAN_SUPERVISE_FD);
		t->supervise_fd = BOX_PLAN_SUPERVISE_FD;
	}
	if (!t->n_pass)
		return;
	for (unsigned i = 0; i < t->n_pass; i++) {
		int fd = TRAMP_PASS_FD_FIRST + (int)i;
		if (!fd_is_open(fd))
			tramp_fail(t, STEP_FDS, EBADF,
				   "fd %d is not open (the plan passes fds %d-%d to the workload)", fd,
				   TRAMP_PASS_FD_FIRST, TRAMP_PASS_FD_FIRST + (int)t->n_pass - 1);
		if (fd_set_cloexec(fd, true) < 0)
			tramp_fail(t, STEP_FDS, errno, "FD_CLOEXEC on fd %d", fd);
	}
	int moved = fcntl(t->status_fd, F_DUPFD_CLOEXEC, TRAMP_STATUS_FD_MOVED);
	if (moved < 0)
		tramp_fail(t, STEP_FDS, errno, "moving the status fd");
	close(t->status_fd);
	t->status_fd = moved;
}

void
passed_fds_close(struct tramp *t)
{
	for (unsigned i = 0; i < t->n_pass; i++)
		close(TRAMP_PASS_FD_FIRST + (int)i);
}

/*
 * Step 9: only 0, 1, 2 for the workload (and box-shell's passed fds); the
 * status fd and the parent pipe stay (CLOEXEC).
 */
static void
fds_close(struct tramp *t)
{
	int keep[5 + TRAMP_PASS_FDS_MAX] = {t->status_fd, t->parent_pipe, t->start_gate,
					   t->supervise_fd, t->report_fd};
	unsigned n_keep = 5;
	for (unsigned i = 0; i < t->n_pass; i++)
		keep[n_keep++] = TRAMP_PASS_FD_FIRST + (int)i;
	int r = fd_close_all_except(3, keep, n_keep);
	if (r < 0)
		tramp_fail(t, STEP_FDS, -r, "closing inherited file descriptors");
	for (int fd = 0; fd < 3; fd++)
		if (!fd_is_open(fd))
			tramp_fail(t, STEP_FDS, EBADF, "fd %d is not open", fd);
	for (unsigned i = 0; i < n_keep; i++)
		if (keep[i] >= 0 && fd_set_cloexec(keep[i], true) < 0)
			tramp_fail(t, STEP_FDS, errno, "FD_CLOEXEC");
}

/*
 * plan.start_gate: the sandbox is built; PID 1 waits for boxd's one packet
 * "go" on fd 3 (boxd sends it once the daemons the agent needs are ready).
 * EOF (boxd ended the start) or anything else fails here: no workload.
 */
static void
start_gate_wait(struct tramp *t)
{
	char buf[8];
	ssize_t n;

	if (t->start_gate < 0)
		return;
	do
		n = recv(t->start_gate, buf, sizeof(buf), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		tramp_fail(t, STEP_GATE, errno, "waiting for boxd on fd 3");
	if (n != 2 || memcmp(buf, "go", 2) != 0)
		tramp_fail(t, STEP_GATE, 0, "boxd ended the start");
	t->start_gate = -1; /* the fd stays PID 1's report channel (t->report_fd) */
}

int
main(int argc, char **argv)
{
	struct tramp t = {.status_fd = -1, .parent_pipe = -1, .pty_slave = -1, .shell_alias_fd = -1,
			  .memfd_sock = -1, .memfd_gate = {-1, -1}, .start_gate = -1,
			  .supervise_fd = -1, .report_fd = -1, .snapshot_fd = -1};

	(void)argv;
	t.boxd_pid = getppid();
	if (!fd_is_seqpacket(TRAMP_STATUS_FD)) {
		dprintf(2, "box-trampoline: fd 4 is not a SOCK_SEQPACKET socket; "
			   "this program is started by boxd\n");
		return 1;
	}
	t.status_fd = TRAMP_STATUS_FD;
	if (fd_set_cloexec(TRAMP_STATUS_FD, true) < 0)
		tramp_fail(&t, STEP_PLAN, errno, "FD_CLOEXEC on fd 4");
	if (argc > 1)
		tramp_fail(&t, STEP_PLAN, 0, "box-trampoline takes no arguments");
	if (!fd_is_seqpacket(TRAMP_PLAN_FD))
		tramp_fail(&t, STEP_PLAN, 0, "fd 3 is not a SOCK_SEQPACKET socket");
	if (fd_set_cloexec(TRAMP_PLAN_FD, true) < 0)
		tramp_fail(&t, STEP_PLAN, errno, "FD_CLOEXEC on fd 3");

	t.plan = plan_receive(&t);
	if (t.plan->start_gate)
		t.start_gate = TRAMP_PLAN_FD; /* CLOEXEC: the workload never holds it */
	/* then PID 1's channel to boxd for its kernel refusal reports (kernel.c) */
	t.report_fd = TRAMP_PLAN_FD;
	passed_fds_take(&t);

	layers_probe(&t);
	t.owner_is_root = t.plan->owner->uid == 0;

	/* 1. credentials: cgroups with boxd's rights, then the owner, then namespaces. */
	cgroups_join(&t);
	memfd_noexec_prepare(&t); /* a root trampoline's helper, before the ids change */
	credentials_switch(&t);
	namespaces_enter(&t);
	/* After the last credential change (it clears the death signal — measured). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		tramp_fail(&t, STEP_CREDENTIALS, errno, "PR_SET_PDEATHSIG");
	if (getppid() != t.boxd_pid)
		tramp_fail(&t, STEP_CREDENTIALS, 0, "boxd went away");

	/* 2. pid 1: only PID 1 returns. */
	pid1_fork(&t);

	network_setup(&t);	 /* 3 */
	mount_view_build(&t);	 /* 4 */
	landlock_apply(&t);	 /* 5 */
	limits_apply(&t);	 /* 6 */
	capabilities_drop(&t, true); /* 7 */
	char **envp = environment_build(&t); /* 8 */
	memfd_noexec_gate(&t);	 /* vm.memfd_noexec set before the workload exists */
	fds_close(&t);		 /* 9 */
	terminal_setup(&t);	 /* 10 */
	pid1_prepare(&t);	 /* the seccomp programs, built while the gate is shut */
	start_gate_wait(&t);	 /* held until boxd says go */
	pid1_run(&t, envp);	 /* 11: seccomp and exec in the workload */
}
