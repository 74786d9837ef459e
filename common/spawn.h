/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spawn.h — the one way box starts a process: fork + execve with its
 * channels at fixed fds (HACKING.md convention 2).
 *
 * The child (fork, or clone with req->clone_flags): every signal disposition back to default, then the signal mask
 * cleared; req->fds[i] placed at fd i (0, 1, 2, 3 = parent channel,
 * 4 = status, …; -1 leaves that number closed), every other fd closed
 * (close_range), the optional setup hook (cgroup placement, setsid,
 * rlimits…), then execve(path, argv, envp). A failure of any of those in the
 * child comes back to the parent through a CLOEXEC pipe as an errno, and the
 * child exits 127 (spawn_process reaps it): spawn_process returns the pid
 * only once the new program runs.
 * Library code: negative errno, never logs.
 * Trusts: its caller (the path, argv, envp and fds it names).
 */
#ifndef BOX_SPAWN_H
#define BOX_SPAWN_H

#include <sys/types.h>

#define SPAWN_FDS_MAX 8

struct spawn_req {
	const char *path;          /* absolute: never searched on PATH */
	char *const *argv;
	char *const *envp;
	const int *fds;            /* fds[i] becomes fd i in the child; -1: none there */
	unsigned n_fds;            /* at most SPAWN_FDS_MAX */
	/* In the child, fds in place, before execve: 0 or negative errno (the spawn fails). */
	int (*setup)(void *userdata);
	void *userdata;
	/*
	 * 0: fork. Else the child is made by clone(2) with these flags (CLONE_NEW*: new
	 * namespaces; with CLONE_NEWPID it is PID 1 of its own and *ret_pid its pid here).
	 */
	unsigned long clone_flags;
	/*
	 * NULL: spawn_process waits until the child has exec'd (or failed to) and
	 * returns its error. Else it returns once the child is made, with *exec_fd the
	 * read end of the child's error pipe (CLOEXEC, non-blocking): the child's setup
	 * and exec run beside the caller, who asks spawn_exec_result later. A child
	 * that failed there exits 127 unreaped: the caller's reaper sees it.
	 */
	int *exec_fd;
};

/* Start the process; *ret_pid its pid. -errno of the failing step (fork, dup, setup, exec). */
int spawn_process(const struct spawn_req *req, pid_t *ret_pid);
/*
 * What a child spawned with exec_fd came to, from that fd: 0 it exec'd (the
 * pipe closed empty), -errno its setup or execve failed with that error,
 * -EAGAIN not known yet (still in its setup).
 */
int spawn_exec_result(int exec_fd);

#endif
