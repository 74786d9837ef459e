/* SPDX-License-Identifier: Apache-2.0 */
/*
 * child.c — the one tracker, reaper and kill path of every process boxd
 * starts (child.h). The only code of boxd that calls waitpid, kill or
 * pidfd_send_signal on a process of its own (cgroup.c kills what is left in
 * a box's cgroup, which boxd did not start).
 * Trusts: the kernel's wait status; a sandbox program's pid read from /proc
 * only after a pidfd pins it and its parents are checked again.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boxd.h"
#include "child.h"
#include "cleanup.h"
#include "hostprobe.h"
#include "log.h"
#include "parse.h"

void
child_init(struct child *c, enum child_kind kind, struct box *b, child_reaped_fn fn, void *arg)
{
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->b = b;
	c->reaped = fn;
	c->arg = arg;
}

void
child_track(struct boxd *d, struct child *c, pid_t pid)
{
	if (c->tracked)
		child_forget(c);
	c->d = d;
	c->pid = pid;
	c->tracked = true;
	c->next = d->children;
	if (c->next)
		c->next->pprev = &c->next;
	c->pprev = &d->children;
	d->children = c;
}

void
child_forget(struct child *c)
{
	if (!c->tracked)
		return;
	*c->pprev = c->next;
	if (c->next)
		c->next->pprev = c->pprev;
	c->next = NULL;
	c->pprev = NULL;
	c->tracked = false;
}

int
child_kill(struct child *c, int sig)
{
	if (!c->tracked || c->pid <= 0)
		return -ESRCH;
	return kill(c->pid, sig) < 0 ? -errno : 0;
}

void
child_stop(struct child *c)
{
	(void)child_kill(c, SIGKILL);
	child_forget(c);
}

void
child_stop_box(struct boxd *d, struct box *b)
{
	for (struct child *c = d->children, *next; c; c = next) {
		next = c->next;
		if (c->b == b)
			child_stop(c);
	}
}

/* The program's own pid on the host: PARENT's child, from /proc (checked by the caller). */
static pid_t
child_of(pid_t parent)
{
	char path[64], buf[64] = "";
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)parent, (int)parent);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, " \n")] = '\0';
	uint64_t v;
	return parse_u64(buf, INT32_MAX, &v) == 0 && v > 1 ? (pid_t)v : -1;
}

int
child_signal_program(struct child *c, int sig)
{
	if (!c->tracked || c->pid <= 0)
		return -ESRCH;
	pid_t outer = c->pid;
	pid_t pid1 = child_of(outer);
	pid_t work = pid1 > 0 ? child_of(pid1) : -1;
	if (work <= 0)
		return -ESRCH;
	_cleanup_close_ int pfd = (int)syscall(SYS_pidfd_open, work, 0);
	if (pfd < 0)
		return -errno;
	if (hostprobe_parent_of(work) != pid1 || hostprobe_parent_of(pid1) != outer)
		return -ESRCH;
	return syscall(SYS_pidfd_send_signal, pfd, sig, NULL, 0) < 0 ? -errno : 0;
}

static struct child *
child_find(struct boxd *d, pid_t pid)
{
	for (struct child *c = d->children; c; c = c->next)
		if (c->pid == pid)
			return c;
	return NULL;
}

int
child_wait_sync(pid_t pid)
{
	int ws;
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

void
child_reap_all(struct boxd *d)
{
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);
		if (pid <= 0)
			break;
		struct child *c = child_find(d, pid);
		if (!c)
			continue; /* forgotten after a SIGKILL: nobody waits for it */
		child_forget(c);
		if (c->reaped)
			c->reaped(c, status);
	}
}
