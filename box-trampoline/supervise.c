/* SPDX-License-Identifier: Apache-2.0 */
/*
 * supervise.c — a supervised program (`supervise = fs`, plan.supervise): PID 1
 * decides each file system call of the workload through seccomp user
 * notification (docs/sandbox.md, "Supervised programs").
 *
 * The workload child installs, before box's own filter (which refuses new
 * listeners), one filter that sends the calls below to a listener, with
 * SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (a received call is not restarted by
 * a signal, so a call the supervisor performed is never performed twice), and
 * hands the listener to PID 1 over a socketpair. PID 1 — same mount namespace
 * and Landlock domain as the workload (it can never widen the view), not
 * dumpable, under no filter of the workload's — reads each call's paths from
 * the tracee (process_vm_readv, then SECCOMP_IOCTL_NOTIF_ID_VALID: the memory
 * and /proc links read belong to the thread that made the call), resolves them
 * against the tracee's cwd or dirfd (/proc/TID/cwd, /proc/TID/fd/N),
 * canonicalizes them (symbolic links resolved in PID 1's view), decides them
 * (source "supervisor") and answers:
 *
 *   refused     EACCES (so does a tracee whose memory cannot be read)
 *   performed   opens (the fd injected with SECCOMP_IOCTL_NOTIF_ADDFD and
 *               the tracee's O_CLOEXEC), mkdir, unlink, rmdir, rename, link,
 *               symlink, mknod, truncate, the chmod/chown family, utimensat,
 *               set/remove xattr: done by PID 1 on the canonical path with
 *               openat2(RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS), so the
 *               object decided is the object touched; ELOOP/EXDEV (a link
 *               swapped in since) re-canonicalizes and re-decides, at most 8
 *               times, then EACCES
 *   continued   metadata reads (stat family, access, readlink, get/list
 *               xattr), chdir, exec, connect/bind of an AF_UNIX path and
 *               sendto/sendmsg/sendmmsg to one (do_sockaddr): decided,
 *               then the kernel performs the call
 *               (SECCOMP_USER_NOTIF_FLAG_CONTINUE). The race accepted:
 *               the tracee may swap the path (or rewrite it in its memory)
 *               between the decision and the call; what it reaches then is
 *               only metadata, a cwd, a socket in the view, or a program
 *               bounded by the view, Landlock and box's filter. Each
 *               permit's outcome is recorded before the next decision
 *               (outcomes_send), so temporal rules count what was done.
 *
 * Decided where (docs/box-policy.5.md, "Decisions without a round trip"): PID 1
 * asks box-policyd for the policy in force at start (PolicyLocal, on the channel boxd
 * attached), with its generation page, and decides the calls whose action needs no
 * history (history-free: no temporal rule about it) here, with the same engine
 * (libpolicyclient/policy_local.c), shipping each decision (PolicyShip) before the
 * call takes effect; box-policyd decides it again, logs it and closes the channel on
 * a disagreement. The page is read before each decision (after a reload: what waits
 * ships under its generation, PolicyLocal is asked again). Every other call is asked
 * (Decide) on that channel.
 *
 * Threads: calls that wait together are received together (kernel.c, up to
 * SUP_BATCH_MAX); those of history-free actions are decided together, then
 * performed or continued in turn, their outcomes recorded after the batch: their
 * verdicts and events touch no temporal rule. Here, they are shipped in one
 * PolicyShip; holding no policy (no page), PID 1 asks for them in one
 * DecideBatchRequest naming the generation (box-policyd decides it only while that
 * generation is in force). Every other call goes alone, after the batch, in arrival
 * order, as above.
 *
 * Reads (opens for reading, metadata reads) under the system runtime (/usr,
 * /lib, /lib64, /bin, /sbin) and under /dev and /proc are performed or
 * continued without a policy round trip. A tracee's own landlock_restrict_self
 * is refused (EPERM): the supervisor, which performs its opens, could not
 * honour it. PID 1 runs as the owner with the owner's groups, as the tracee
 * does (it has no capability to change them); a create uses the tracee's
 * umask (/proc/TID/status). Every open is made non-blocking (then blocking
 * again), so that no FIFO can hang the supervisor.
 * Fail closed: the supervisor is PID 1, and its death kills every process of
 * the sandbox. A failed Decide (box-policyd gone, a broken channel) refuses.
 * Trusts: nothing the tracee says (paths are read, resolved and re-checked
 * here); box-policyd's replies after libpolicyclient's matching, and its
 * PolicyLocal (the text it loaded; the page read-only). Deciding here gives PID 1
 * no new power: it performs what it permits itself, within the program's view and
 * Landlock domain, and box-policyd re-decides every shipped verdict.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "cleanup.h"
#include "clock.h"
#include "fdutil.h"
#include "compat/syscalls.h"
#include "policy.pb-c.h"
#include "policy_client.h"
#include "policy_fields.h"
#include "policy_local.h"
#include "supervise.h"

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#define X32_SYSCALL_BIT 0x40000000u
#define SUP_PATH_MAX PATH_MAX
#define SUP_RETRIES 8
#define SUP_LINK_DEPTH 40
/* permits of one call awaiting their outcome: rename's 4 legs, each retry decided again */
#define SUP_PENDING_MAX (4 * (SUP_RETRIES + 1) + 4)
/* notifications received together and decided in one DecideBatchRequest, at most */
#define SUP_BATCH_MAX SUPERVISE_BATCH_MAX

/* The calls the listener gets (x86_64). */
static const int trapped[] = {
	__NR_open, __NR_openat, __NR_creat,
	__NR_mkdir, __NR_mkdirat, __NR_unlink, __NR_unlinkat, __NR_rmdir,
	__NR_rename, __NR_renameat, __NR_renameat2,
	__NR_stat, __NR_lstat, __NR_newfstatat, __NR_statx, __NR_access, __NR_faccessat,
	BOX_NR_faccessat2, __NR_readlink, __NR_readlinkat, __NR_chdir, __NR_statfs,
	__NR_truncate, __NR_chmod, __NR_fchmodat, BOX_NR_fchmodat2, __NR_chown, __NR_lchown,
	__NR_fchownat, __NR_utimensat, __NR_utime, __NR_utimes, __NR_futimesat,
	__NR_link, __NR_linkat, __NR_symlink, __NR_symlinkat, __NR_mknod, __NR_mknodat,
	__NR_setxattr, __NR_lsetxattr, __NR_getxattr, __NR_lgetxattr, __NR_listxattr,
	__NR_llistxattr, __NR_removexattr, __NR_lremovexattr, __NR_inotify_add_watch,
	__NR_execve, __NR_execveat, __NR_connect, __NR_bind, __NR_sendmsg, __NR_sendmmsg,
	/* __NR_sendto: only with a destination address (its 5th argument), tested first */
};

#define N_TRAPPED (sizeof(trapped) / sizeof(trapped[0]))
/* the filter's jumps are 8 bits: from sendto's test over the list to USER_NOTIF */
_Static_assert(N_TRAPPED + 3 < 256, "the trapped list outgrows the filter's jumps");
_Static_assert(6 + 5 + N_TRAPPED + 2 <= SUPERVISE_INSNS_MAX, "SUPERVISE_INSNS_MAX is too small");

size_t
supervise_program(struct sock_filter *f)
{
	/* arch; x32 and other arches allowed here (box's own program kills them first) */
	size_t n = 0;
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	/* landlock_restrict_self: EPERM (the supervisor could not honour it) */
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_landlock_restrict_self,
					      0, 1);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
					      SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
	/*
	 * sendto: to the listener only with a destination address (all 64 bits
	 * of the pointer tested), so send() on a socket costs nothing; the list
	 * starts 4 further on, ALLOW is N_TRAPPED after it and USER_NOTIF one more
	 */
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sendto, 0, 4);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, args[4]));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0,
					      (unsigned char)(N_TRAPPED + 3));
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, args[4]) + 4);
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0,
					      (unsigned char)N_TRAPPED,
					      (unsigned char)(N_TRAPPED + 1));
	/* each trapped number jumps to the USER_NOTIF return after the list */
	for (size_t i = 0; i < N_TRAPPED; i++)
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      (unsigned)trapped[i],
						      (unsigned char)(N_TRAPPED - i), 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
	return n;
}

/* ------------------------------------------------------------------ */

struct sup {
	int listener;
	struct policy_client *pc; /* NULL once broken: every decision refuses */
	const char *home;
	size_t home_len;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	size_t req_size, resp_size;
	pid_t tid; /* the current notification's thread */
	int runtime_fd[5]; /* runtime_dirs, opened O_PATH at start (-1: absent) */
	unsigned long long decided, refused;
	/*
	 * What canonical() last saw of the path it returned: its lstat, when it made one
	 * (FOLLOW) and the object was no symbolic link, so that lstat is its stat too
	 * (open_act reads it instead of a stat of its own). Reset by every canonical().
	 */
	struct stat last_st;
	bool last_st_ok;
	/*
	 * PolicyLocal's answer (local_ask): the generation and the actions (bits of enum act)
	 * that are history-free in it, which calls arriving together may have decided in one
	 * DecideBatchRequest (supervise_handle). hf_gen 0: unknown, nothing is batched.
	 */
	uint64_t hf_gen;
	unsigned hf_mask;
	/*
	 * The same answer's policy text and generation page, when both came: the
	 * qualifying actions are then decided here, with the same engine, and shipped
	 * (decide_here). local.p NULL: every decision is box-policyd's.
	 */
	struct policy_local local;
	struct policy_local_verdict lv;
	/* CLOCK_MONOTONIC when outcomes began to wait for a PolicyShip (0: none waits) */
	int64_t ship_since;
	/* the notifications received together (supervise_handle), each req_size bytes */
	struct seccomp_notif *reqs[SUP_BATCH_MAX];
	/* the current call's permits from box-policyd, each awaiting its outcome (outcomes_send) */
	struct pending {
		int act;
		const char *op;
		char *path; /* as decided (~ spelled) */
	} pend[SUP_PENDING_MAX];
	unsigned n_pend;
};

static bool
id_valid(struct sup *s)
{
	return ioctl(s->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &s->req->id) == 0;
}

/* A NUL-terminated string at ADDR of the tracee into BUF (SUP_PATH_MAX). */
static int
read_string(struct sup *s, unsigned long long addr, char *buf)
{
	size_t got = 0;
	if (!addr)
		return -EFAULT;
	while (got < SUP_PATH_MAX) {
		/* up to the end of the page, so a string ending before an unmapped page reads */
		size_t chunk = 4096 - ((addr + got) & 4095);
		if (chunk > SUP_PATH_MAX - got)
			chunk = SUP_PATH_MAX - got;
		struct iovec l = { .iov_base = buf + got, .iov_len = chunk };
		struct iovec r = { .iov_base = (void *)(uintptr_t)(addr + got), .iov_len = chunk };
		ssize_t n = process_vm_readv(s->tid, &l, 1, &r, 1, 0);
		if (n <= 0)
			return n == 0 ? -EFAULT : (errno == EFAULT ? -EFAULT : -EACCES);
		void *z = memchr(buf + got, '\0', (size_t)n);
		got += (size_t)n;
		if (z)
			return id_valid(s) ? 0 : -ESRCH;
	}
	return -ENAMETOOLONG;
}

/* readlink of /proc/TID/WHAT into a malloc'd absolute path of a live directory. */
static int
proc_dir_link(struct sup *s, const char *what, char **out)
{
	char p[64], buf[SUP_PATH_MAX];
	snprintf(p, sizeof(p), "/proc/%d/%s", (int)s->tid, what);
	ssize_t n = readlink(p, buf, sizeof(buf) - 1);
	if (n < 0)
		return errno == ENOENT ? -EBADF : -EACCES;
	buf[n] = '\0';
	if (!id_valid(s))
		return -ESRCH;
	if (buf[0] != '/')
		return -ENOTDIR; /* a socket, a pipe, an anonymous inode */
	static const char deleted[] = " (deleted)";
	if ((size_t)n >= sizeof(deleted) - 1 &&
	    strcmp(buf + n - (sizeof(deleted) - 1), deleted) == 0)
		return -ENOENT;
	*out = strdup(buf);
	return *out ? 0 : -ENOMEM;
}

/* The absolute path of PATH for the tracee (relative to DIRFD, AT_FDCWD: its cwd). */
static int
absolute(struct sup *s, int dirfd, const char *path, char **out)
{
	if (path[0] == '/') {
		*out = strdup(path);
		return *out ? 0 : -ENOMEM;
	}
	if (path[0] == '\0')
		return -ENOENT; /* AT_EMPTY_PATH is refused by the callers */
	_cleanup_free_ char *base = NULL;
	char what[32];
	if (dirfd == AT_FDCWD)
		snprintf(what, sizeof(what), "cwd");
	else if (dirfd < 0)
		return -EBADF;
	else
		snprintf(what, sizeof(what), "fd/%d", dirfd);
	int r = proc_dir_link(s, what, &base);
	if (r < 0)
		return r;
	if (asprintf(out, "%s/%s", strcmp(base, "/") == 0 ? "" : base, path) < 0)
		return -ENOMEM;
	return 0;
}

/*
 * True when absolute DIR is already its canonical path: spelled without `.`, `..` or an
 * empty component, and a directory reached without following a symbolic link (one
 * openat2, where realpath would readlink each component).
 */
static bool
plain_dir(const char *dir)
{
	for (const char *p = dir; (p = strchr(p, '/')) != NULL; p++) {
		const char *c = p + 1;
		if (*c == '/' || (c[0] == '.' && (c[1] == '/' || c[1] == '\0')) ||
		    (c[0] == '.' && c[1] == '.' && (c[2] == '/' || c[2] == '\0')))
			return false;
	}
	int fd = fd_openat2(AT_FDCWD, dir, O_PATH | O_DIRECTORY, 0,
			    RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * The canonical path of absolute ABS: every directory resolved (realpath in
 * PID 1's view, the tracee's too), the last component too when FOLLOW and it
 * is a symbolic link (a dangling one is resolved through its target, for a
 * create). /proc/self and /proc/thread-self name the tracee's.
 */
static int
canonical(struct sup *s, const char *abs_in, bool follow, int depth, char **out)
{
	_cleanup_free_ char *abs = NULL;
	s->last_st_ok = false;
	if (depth > SUP_LINK_DEPTH)
		return -ELOOP;
	if (strncmp(abs_in, "/proc/self", 10) == 0 &&
	    (abs_in[10] == '/' || abs_in[10] == '\0')) {
		if (asprintf(&abs, "/proc/%d%s", (int)s->tid, abs_in + 10) < 0)
			return -ENOMEM;
	} else if (strncmp(abs_in, "/proc/thread-self", 17) == 0 &&
		   (abs_in[17] == '/' || abs_in[17] == '\0')) {
		if (asprintf(&abs, "/proc/%d/task/%d%s", (int)s->tid, (int)s->tid, abs_in + 17) < 0)
			return -ENOMEM;
	} else if (!(abs = strdup(abs_in)))
		return -ENOMEM;

	size_t len = strlen(abs);
	while (len > 1 && abs[len - 1] == '/')
		abs[--len] = '\0';
	char *slash = strrchr(abs, '/');
	const char *last = slash + 1;
	if (strcmp(abs, "/") == 0 || strcmp(last, ".") == 0 || strcmp(last, "..") == 0) {
		char *r = realpath(abs, NULL);
		if (!r)
			return -errno;
		*out = r;
		return 0;
	}
	_cleanup_free_ char *dir = strndup(abs, slash == abs ? 1 : (size_t)(slash - abs));
	if (!dir)
		return -ENOMEM;
	_cleanup_free_ char *rdir = plain_dir(dir) ? strdup(dir) : realpath(dir, NULL);
	if (!rdir)
		return -errno;
	_cleanup_free_ char *joined = NULL;
	if (asprintf(&joined, "%s/%s", strcmp(rdir, "/") == 0 ? "" : rdir, last) < 0)
		return -ENOMEM;
	struct stat st;
	int lr = follow ? lstat(joined, &st) : -1;
	if (lr < 0 || !S_ISLNK(st.st_mode)) {
		if (lr == 0) {
			s->last_st = st; /* no link: its lstat is its stat (open_act) */
			s->last_st_ok = true;
		}
		*out = TAKE_PTR(joined);
		return 0;
	}
	char target[SUP_PATH_MAX];
	ssize_t n = readlink(joined, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	_cleanup_free_ char *next = NULL;
	if (target[0] == '/')
		next = strdup(target);
	else if (asprintf(&next, "%s/%s", strcmp(rdir, "/") == 0 ? "" : rdir, target) < 0)
		next = NULL;
	if (!next)
		return -ENOMEM;
	return canonical(s, next, true, depth + 1, out);
}

static bool
under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Reads here need no round trip: the system runtime, the box's own /dev and /proc. */
static bool
runtime_path(const char *path)
{
	static const char *const dirs[] = { "/usr", "/lib", "/lib64", "/bin", "/sbin", "/proc" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (under(path, dirs[i]))
			return true;
	return under(path, "/dev") && !under(path, "/dev/shm");
}

/*
 * The system runtime's short way (the calls a program makes most: its interpreter's
 * imports, its libraries). An absolute PATH below one of these directories is resolved
 * beneath the directory itself — openat2 RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS from a
 * directory fd PID 1 opened at start (supervise_start) — with no canonical walk and no
 * decision: whatever that resolution reaches is inside the directory, so its canonical
 * path is a runtime path, a read of which needs no decision (decide). Anything that would
 * leave the directory (`..` above it, an absolute symbolic link, a relative one out of it)
 * fails with EXDEV, a magic link with ELOOP: those, and every other error but the two
 * the long way answers the same (a component missing, one not a directory), take the long
 * way. /proc and /dev are not here: /proc/self names the tracee's, /dev/shm is written.
 * The directories are read-only in every view, so nothing can be swapped in them between
 * this and the kernel's own walk of a continued call.
 */
static const char *const runtime_dirs[] = { "/usr", "/lib", "/lib64", "/bin", "/sbin" };
_Static_assert(sizeof(runtime_dirs) / sizeof(runtime_dirs[0]) ==
		       sizeof(((struct sup *)0)->runtime_fd) / sizeof(int),
	       "one fd per runtime directory");

#define RUNTIME_LONG_WAY INT_MIN /* no fd, no errno */

/* FLAGS: open(2)'s (O_CREAT, O_TRUNC and write access never come here). The fd, -ENOENT
 * or -ENOTDIR, or RUNTIME_LONG_WAY. */
static int
runtime_open(const struct sup *s, const char *path, int flags)
{
	for (size_t i = 0; i < sizeof(runtime_dirs) / sizeof(runtime_dirs[0]); i++) {
		size_t n = strlen(runtime_dirs[i]);
		if (s->runtime_fd[i] < 0 || strncmp(path, runtime_dirs[i], n) != 0 ||
		    path[n] != '/' || path[n + 1] == '\0')
			continue;
		int fd = fd_openat2(s->runtime_fd[i], path + n + 1, flags, 0,
				    RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
		return fd >= 0 || fd == -ENOENT || fd == -ENOTDIR ? fd : RUNTIME_LONG_WAY;
	}
	return RUNTIME_LONG_WAY;
}

enum act { A_READ, A_WRITE, A_DELETE, A_MOVE };
static const char *const act_names[] = { "fs:read", "fs:write", "fs:delete", "fs:move" };

/* PATH as box-policyd gets it: under the owner's home spelled ~/… (*OUT NULL: as is). */
static int
spelled(const struct sup *s, const char *path, char **out)
{
	*out = NULL;
	if (s->home_len > 1 && under(path, s->home) &&
	    asprintf(out, "~%s", path + s->home_len) < 0) {
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

/*
 * What needs no round trip: 0 permitted, -EACCES refused, 1 box-policyd decides.
 * PID 1's own /proc entries: PID 1 performs opens with its own credentials, and to
 * itself its mem, environ and fds are open; the tracee gets none of them, whatever
 * the policy says.
 */
static int
decide_local(const struct sup *s, enum act a, const char *path)
{
	if (under(path, "/proc/1"))
		return -EACCES;
	if (a == A_READ && runtime_path(path))
		return 0;
	return s->pc ? 1 : -EACCES;
}

/* box-policyd's verdict on A/OP of SPELLED: counted, a permit kept for its outcome. */
static int
decided(struct sup *s, enum act a, const char *op, const char *spelled_path, bool permitted,
	bool ok)
{
	s->decided++;
	if (!ok)
		s->refused++;
	/* the client keeps the permit: its outcome names it (outcomes_send) */
	if (permitted && s->n_pend < SUP_PENDING_MAX) {
		char *kept = strdup(spelled_path);
		if (kept)
			s->pend[s->n_pend++] = (struct pending){ .act = a, .op = op, .path = kept };
	}
	return ok ? 0 : -EACCES;
}

/* The channel is broken: every later decision refuses (fail closed). */
static void
pc_broken(struct sup *s)
{
	policy_client_free(s->pc);
	s->pc = NULL;
	s->hf_gen = 0;
	policy_local_drop(&s->local);
}

static bool local_ready(struct sup *s, enum act a);
static int decide_here(struct sup *s, const Box__DecideRequest *rq, bool *permitted, bool *ok);
static bool ship_now(struct sup *s);

/*
 * Decide ACTION/OP of canonical PATH: 0 permitted, -EACCES refused (or no answer).
 * Here when its action qualifies (local_ready), else by box-policyd.
 */
static int
decide(struct sup *s, enum act a, const char *op, const char *path)
{
	int r = decide_local(s, a, path);
	if (r <= 0)
		return r;
	_cleanup_free_ char *sp = NULL;
	if (spelled(s, path, &sp) < 0)
		return -EACCES;
	struct policy_fields f;
	policy_fields_init(&f);
	policy_fields_str(&f, "path", sp ? sp : path);
	policy_fields_str(&f, "operation", op);
	Box__DecideRequest rq = BOX__DECIDE_REQUEST__INIT;
	rq.action = (char *)act_names[a];
	rq.input = f.p;
	rq.n_input = f.n;
	if (local_ready(s, a)) {
		bool permitted = false, ok = false;
		r = decide_here(s, &rq, &permitted, &ok);
		if (r == 0 && ship_now(s)) /* its line before the effect it allows */
			return decided(s, a, op, sp ? sp : path, permitted, ok);
		if (r != -EAGAIN)
			return -EACCES;
	}
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	r = policy_client_call(s->pc, BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &rq.base, &m);
	if (r < 0) {
		pc_broken(s);
		return -EACCES;
	}
	const Box__DecideReply *rep = (const Box__DecideReply *)m.msg;
	/* Read before the reply is freed (box_ipc_msg_done frees what REP points into). */
	bool permitted = policy_client_permitted(rep);
	bool ok = permitted && rep->cause == BOX__DECISION_CAUSE__CAUSE_PERMITTED;
	box_ipc_msg_done(&m);
	return decided(s, a, op, sp ? sp : path, permitted, ok);
}

/*
 * Which of the supervisor's actions are history-free in the generation in force
 * (PolicyLocal; docs/box-policy.5.md, "Decisions without a round trip"). Unknown
 * (hf_gen 0) when it cannot be asked: then nothing is batched.
 */
static void
local_ask(struct sup *s)
{
	s->hf_gen = 0;
	s->hf_mask = 0;
	if (!s->pc)
		return;
	Box__PolicyLocalRequest rq = BOX__POLICY_LOCAL_REQUEST__INIT;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	if (policy_client_call(s->pc, BOX__MSG_TYPE__MSG_POLICY_LOCAL_REQUEST, &rq.base, &m) < 0) {
		pc_broken(s);
		return;
	}
	const Box__PolicyLocal *l = (const Box__PolicyLocal *)m.msg;
	for (size_t i = 0; i < l->n_actions; i++)
		for (unsigned k = 0; k < sizeof(act_names) / sizeof(act_names[0]); k++)
			if (strcmp(l->actions[i], act_names[k]) == 0)
				s->hf_mask |= 1u << k;
	s->hf_gen = l->generation;
	/*
	 * Decided here only with the page (nothing else would say when a reload put
	 * another policy in force) and the text; anything that fails leaves every
	 * decision to box-policyd.
	 */
	char why[256];
	policy_local_drop(&s->local);
	policy_local_verdict_reset(&s->lv);
	if (m.n_fds == 1 && l->has_policy_text &&
	    policy_local_set(&s->local, l, why, sizeof(why)) == 0 &&
	    policy_local_map(&s->local, m.fds[0]) < 0)
		policy_local_drop(&s->local);
	box_ipc_msg_done(&m);
}

/*
 * A may be decided here: its action qualifies in the policy this process holds,
 * and that policy is still in force (after a reload: what waits is shipped under
 * its own generation, and PolicyLocal asked again first).
 */
static bool
local_ready(struct sup *s, enum act a)
{
	if (!s->pc)
		return false;
	if (policy_local_moved(&s->local))
		local_ask(s);
	return policy_local_ok(&s->local, act_names[a]);
}

/*
 * Decide RQ here (local_ready said its action qualifies): the engine box-policyd
 * runs, on the same fields; the decision joins the channel's next PolicyShip, which
 * the caller flushes before any effect it permits (policy_client_ship_decide keeps
 * its permit for the outcome). 0 decided; -EAGAIN the engine failed (ask instead);
 * -EPIPE the channel broke (refuse).
 */
static int
decide_here(struct sup *s, const Box__DecideRequest *rq, bool *permitted, bool *ok)
{
	if (policy_local_decide(&s->local, &s->lv, rq) < 0)
		return -EAGAIN;
	const Box__DecideReply *claim = &s->lv.claim;
	policy_client_ship_generation(s->pc, s->local.generation);
	if (policy_client_ship_decide(s->pc, rq, claim) < 0) {
		pc_broken(s);
		return -EPIPE;
	}
	*permitted = policy_client_permitted(claim);
	*ok = *permitted && claim->cause == BOX__DECISION_CAUSE__CAUSE_PERMITTED;
	return 0;
}

/* What waits for its PolicyShip leaves now (false: the channel broke; refuse). */
static bool
ship_now(struct sup *s)
{
	if (s->pc && policy_client_shipping(s->pc) && policy_client_ship_flush(s->pc) < 0)
		pc_broken(s);
	s->ship_since = 0;
	return s->pc != NULL;
}

enum outcome { OUT_COMPLETED, OUT_DESCRIPTOR, OUT_INDETERMINATE, OUT_FAILED };

/*
 * The outcome of each permit of the current call (docs/box-policy.5.md, Outcomes):
 * a response with output.result completed, descriptor_issued (an open whose fd was
 * injected) or indeterminate (a call the kernel went on to perform, EIO, EINTR), or
 * an error event (refused by a later leg, failed, retried after a swap). One
 * RecordRequest (or RecordBatch), sent before the next Decide, so a temporal rule
 * (a write budget) counts what the program really did.
 */
static void
outcomes_send(struct sup *s, enum outcome k)
{
	static const char *const results[] = { "completed", "descriptor_issued", "indeterminate" };
	unsigned n = s->n_pend;
	if (n && s->pc) {
		struct policy_client_outcome o[SUP_PENDING_MAX];
		Box__PolicyField f[SUP_PENDING_MAX][3], *in[SUP_PENDING_MAX][2], *out[SUP_PENDING_MAX][1];
		Box__PolicyValue v[SUP_PENDING_MAX][3];
		for (unsigned i = 0; i < n; i++) {
			static const char *const names[3] = { "path", "operation", "result" };
			const char *vals[3] = { s->pend[i].path, s->pend[i].op,
						results[k == OUT_FAILED ? OUT_INDETERMINATE : k] };
			for (int j = 0; j < 3; j++) {
				box__policy_field__init(&f[i][j]);
				box__policy_value__init(&v[i][j]);
				f[i][j].name = (char *)names[j];
				f[i][j].value = &v[i][j];
				v[i][j].kind_case = BOX__POLICY_VALUE__KIND_STR;
				v[i][j].str = (char *)vals[j];
			}
			in[i][0] = &f[i][0];
			in[i][1] = &f[i][1];
			out[i][0] = &f[i][2];
			/* decided with {path, operation} (decide): the result only when done */
			o[i] = (struct policy_client_outcome){ .ok = k != OUT_FAILED,
							       .action = act_names[s->pend[i].act],
							       .in = in[i], .n_in = 2,
							       .out = out[i], .n_out = 1 };
		}
		/*
		 * Outcomes of actions decided here feed no temporal rule: they wait for the
		 * next decision's PolicyShip (or supervise_flush: 1 ms idle, the exit). Any
		 * other goes now, with whatever waits before it, as before.
		 */
		bool later = true;
		for (unsigned i = 0; i < n && later; i++)
			later = policy_local_ok(&s->local, act_names[s->pend[i].act]);
		int r = later ? policy_client_record_queued(s->pc, o, n) : -EINVAL;
		if (r == -EINVAL) {
			r = policy_client_record(s->pc, o, n);
			if (r >= 0 && !ship_now(s))
				r = -EPIPE;
		}
		if (r < 0 && s->pc)
			pc_broken(s); /* every later decision refuses (fail closed) */
		if (r >= 0 && later && !s->ship_since)
			s->ship_since = box_now_ns();
	}
	for (unsigned i = 0; i < n; i++)
		free(s->pend[i].path);
	s->n_pend = 0;
}

/* The tracee's umask (/proc/TID/status), or 077 when it cannot be read. */
static mode_t
tracee_umask(struct sup *s)
{
	char p[64], buf[2048];
	snprintf(p, sizeof(p), "/proc/%d/status", (int)s->tid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 077;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 077;
	buf[n] = '\0';
	const char *u = strstr(buf, "\nUmask:");
	if (!u)
		return 077;
	/* "Umask:\t0022\n": exactly four octal digits, then the line's end */
	const char *d = u + 7;
	while (*d == '\t' || *d == ' ')
		d++;
	mode_t m = 0;
	for (int i = 0; i < 4; i++, d++) {
		if (*d < '0' || *d > '7')
			return 077;
		m = (mode_t)(m * 8 + (mode_t)(*d - '0'));
	}
	return *d == '\n' ? (m & 0777) : 077;
}

/* O_CREAT, or O_TMPFILE (two bits, one of them O_DIRECTORY: both must be set). */
static bool
creates(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

static int
open_resolved(const char *path, int flags, mode_t mode)
{
	return fd_openat2(AT_FDCWD, path, flags, mode, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

/* The directory of canonical PATH, opened O_PATH without following links; *LAST in PATH. */
static int
open_parent(const char *path, const char **last)
{
	const char *slash = strrchr(path, '/');
	_cleanup_free_ char *dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));
	if (!dir)
		return -ENOMEM;
	*last = slash + 1;
	return open_resolved(dir, O_PATH | O_DIRECTORY, 0);
}

static bool
retry_error(int r)
{
	return r == -ELOOP || r == -EXDEV;
}

static int
reply(struct sup *s, long long val, int error, unsigned flags)
{
	outcomes_send(s, (flags & SECCOMP_USER_NOTIF_FLAG_CONTINUE) ? OUT_INDETERMINATE :
			 error == 0				      ? OUT_COMPLETED :
			 error == -EIO || error == -EINTR	      ? OUT_INDETERMINATE :
								OUT_FAILED);
	memset(s->resp, 0, s->resp_size);
	s->resp->id = s->req->id;
	s->resp->val = val;
	s->resp->error = error;
	s->resp->flags = flags;
	/* ENOENT: the tracee died or was interrupted meanwhile; nothing to answer */
	(void)ioctl(s->listener, SECCOMP_IOCTL_NOTIF_SEND, s->resp);
	return 0;
}

static int inject(struct sup *s, int fd, int flags);

/*
 * A call up to its decision (prep_call): the open family, performed, and the calls
 * decided then continued (cont_prep). What box-policyd is asked is A, OP of CANON;
 * finish() does the rest with its verdict.
 */
struct prep {
	enum { P_OPEN, P_CONT } kind;
	enum act a;
	const char *op;
	char *canon;
	/* P_OPEN */
	char *abs;
	int flags;
	mode_t mode, um;
	bool follow, writes;
};

static void
prep_free(struct prep *p)
{
	free(p->canon);
	free(p->abs);
	p->canon = p->abs = NULL;
}

/*
 * An open's action and operation on P->canon as it stands (canonical() just made it):
 * a read of a directory is an enumerate. Its stat is canonical()'s lstat when that
 * found no link there (S->last_st), else one stat here; only a read asks.
 */
static void
open_act(const struct sup *s, struct prep *p)
{
	if (p->flags & O_PATH) {
		p->a = A_READ;
		p->op = "read_metadata";
	} else if (p->writes) {
		p->a = A_WRITE;
		p->op = "write_content";
	} else {
		struct stat st;
		bool dir = s->last_st_ok ? S_ISDIR(s->last_st.st_mode) :
					   stat(p->canon, &st) == 0 && S_ISDIR(st.st_mode);
		p->a = A_READ;
		p->op = dir ? "enumerate" : "read_content";
	}
}

/* An open's action as its flags tell (before any path is read). */
static enum act
open_flags_act(int flags)
{
	bool writes = (flags & O_ACCMODE) != O_RDONLY || creates(flags) || (flags & O_TRUNC);
	return (flags & O_PATH) || !writes ? A_READ : A_WRITE;
}

/*
 * open/openat/creat up to its decision: 0 answered (an error, the runtime's short way),
 * 1 P needs box-policyd's verdict on its canonical path (open_finish).
 */
static int
open_prep(struct sup *s, int dirfd, unsigned long long addr, int flags, mode_t mode,
	  struct prep *p)
{
	char path[SUP_PATH_MAX];
	int r = read_string(s, addr, path);
	if (r < 0)
		return reply(s, 0, r == -EFAULT ? -EFAULT : -EACCES, 0);
	*p = (struct prep){ .kind = P_OPEN, .flags = flags, .mode = mode };
	if ((r = absolute(s, dirfd, path, &p->abs)) < 0)
		return reply(s, 0, r == -ESRCH ? -EACCES : r, 0);
	p->follow = !(flags & O_NOFOLLOW) && !((flags & O_CREAT) && (flags & O_EXCL));
	p->writes = (flags & O_ACCMODE) != O_RDONLY || creates(flags) || (flags & O_TRUNC);
	p->um = creates(flags) ? tracee_umask(s) : 0;
	if (!p->writes && path[0] == '/') {
		int fd = runtime_open(s, path, (flags | O_NONBLOCK | O_NOCTTY) & ~O_CLOEXEC);
		if (fd == -ENOENT || fd == -ENOTDIR)
			return reply(s, 0, fd, 0);
		if (fd >= 0)
			return inject(s, fd, flags);
	}
	if ((r = canonical(s, p->abs, p->follow, 0, &p->canon)) < 0)
		return reply(s, 0, r, 0);
	open_act(s, p);
	return 1;
}

/* The open of P, whose first decision was VERDICT: performed, the fd injected. */
static int
open_finish(struct sup *s, struct prep *p, int verdict)
{
	int fd = -ELOOP, r;
	for (int i = 0; i <= SUP_RETRIES; i++) {
		if (i > 0) {
			/* a link swapped in since: canonicalized and decided again */
			free(p->canon);
			p->canon = NULL;
			if ((r = canonical(s, p->abs, p->follow, 0, &p->canon)) < 0)
				return reply(s, 0, r, 0);
			open_act(s, p);
			verdict = decide(s, p->a, p->op, p->canon);
		}
		if (verdict < 0)
			return reply(s, 0, verdict, 0);
		/*
		 * Always non-blocking (a FIFO, or a path swapped for one after the
		 * stat, must not hang the supervisor); inject makes it blocking again
		 * unless the tracee asked for O_NONBLOCK.
		 */
		/* the tracee's umask for a create (PID 1's own is never asked otherwise) */
		bool mk = creates(p->flags);
		mode_t old = mk ? umask(p->um) : 0;
		/* O_NOCTTY: a terminal never becomes PID 1's controlling one */
		fd = open_resolved(p->canon, (p->flags | O_NONBLOCK | O_NOCTTY) & ~O_CLOEXEC,
				   p->mode);
		if (mk)
			umask(old);
		if (!retry_error(fd) || (p->flags & O_NOFOLLOW))
			break;
		outcomes_send(s, OUT_FAILED); /* this attempt's permits: decided again */
		if (i == SUP_RETRIES)
			fd = -EACCES;
	}
	if (fd < 0)
		return reply(s, 0, fd, 0);
	return inject(s, fd, p->flags);
}

/* FD (opened O_NONBLOCK by PID 1) into the tracee as its open's answer, with its flags. */
static int
inject(struct sup *s, int fd, int flags)
{
	if (!(flags & (O_NONBLOCK | O_PATH)) &&
	    fcntl(fd, F_SETFL, flags & ~(O_NONBLOCK | O_ACCMODE)) < 0) {
		close(fd);
		return reply(s, 0, -EIO, 0);
	}
	struct seccomp_notif_addfd add = {
		.id = s->req->id,
		.flags = SECCOMP_ADDFD_FLAG_SEND,
		.srcfd = (unsigned)fd,
		.newfd = 0,
		.newfd_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0,
	};
	/* it answers, or the tracee is gone (then no fd was issued) */
	int k = ioctl(s->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
	close(fd);
	outcomes_send(s, k >= 0 ? OUT_DESCRIPTOR : OUT_FAILED);
	return 0;
}

/* PATH (read from the tracee) at DIRFD resolved: the canonical path in *OUT. */
static int
path_resolve(struct sup *s, int dirfd, const char *path, bool follow, char **out)
{
	_cleanup_free_ char *abs = NULL;
	int r = absolute(s, dirfd, path, &abs);
	if (r < 0)
		return r == -ESRCH ? -EACCES : r;
	return canonical(s, abs, follow, 0, out);
}

/* One path argument resolved: the canonical path in *OUT. */
static int
path_arg(struct sup *s, int dirfd, unsigned long long addr, bool follow, char **out)
{
	char path[SUP_PATH_MAX];
	int r = read_string(s, addr, path);
	if (r < 0)
		return r == -EFAULT ? -EFAULT : -EACCES;
	return path_resolve(s, dirfd, path, follow, out);
}

/* mkdir(at), unlink(at), rmdir, performed in the canonical parent. */
static int
do_dirop(struct sup *s, int dirfd, unsigned long long addr, int nr_kind, mode_t mode)
{
	enum { MKDIR, UNLINK, RMDIR };
	int r = -ELOOP;
	for (int i = 0; i <= SUP_RETRIES; i++) {
		_cleanup_free_ char *canon = NULL;
		if ((r = path_arg(s, dirfd, addr, false, &canon)) < 0)
			return reply(s, 0, r, 0);
		r = nr_kind == MKDIR  ? decide(s, A_WRITE, "create_dir", canon) :
		    nr_kind == UNLINK ? decide(s, A_DELETE, "remove_file", canon) :
					decide(s, A_DELETE, "remove_dir", canon);
		if (r < 0)
			return reply(s, 0, r, 0);
		const char *last;
		int pfd = open_parent(canon, &last);
		if (pfd >= 0) {
			if (nr_kind == MKDIR) {
				mode_t old = umask(tracee_umask(s));
				r = mkdirat(pfd, last, mode) < 0 ? -errno : 0;
				umask(old);
			} else {
				r = unlinkat(pfd, last, nr_kind == RMDIR ? AT_REMOVEDIR : 0) < 0 ? -errno : 0;
			}
			close(pfd);
		} else {
			r = pfd;
		}
		if (!retry_error(r))
			break;
		outcomes_send(s, OUT_FAILED); /* this attempt's permits: decided again */
		if (i == SUP_RETRIES)
			r = -EACCES;
	}
	return reply(s, 0, r, 0);
}

/* rename(at,2): fs:read and fs:move of the source, fs:move (and fs:delete) of the target. */
static int
do_rename(struct sup *s, int odir, unsigned long long oaddr, int ndir, unsigned long long naddr,
	  unsigned flags)
{
	int r = -ELOOP;
	for (int i = 0; i <= SUP_RETRIES; i++) {
		_cleanup_free_ char *from = NULL, *to = NULL;
		if ((r = path_arg(s, odir, oaddr, false, &from)) < 0 ||
		    (r = path_arg(s, ndir, naddr, false, &to)) < 0)
			return reply(s, 0, r, 0);
		struct stat st;
		bool target = lstat(to, &st) == 0;
		if ((r = decide(s, A_READ, "read_content", from)) < 0 ||
		    (r = decide(s, A_MOVE, "rename", from)) < 0 ||
		    (r = decide(s, A_MOVE, "rename", to)) < 0 ||
		    (target && (r = decide(s, A_DELETE,
					   S_ISDIR(st.st_mode) ? "remove_dir" : "remove_file", to)) < 0))
			return reply(s, 0, r, 0);
		const char *lf, *lt;
		int pf = open_parent(from, &lf);
		int pt = pf >= 0 ? open_parent(to, &lt) : -EBADF;
		if (pf < 0 || pt < 0)
			r = pf < 0 ? pf : pt;
		else
			r = syscall(SYS_renameat2, pf, lf, pt, lt, flags) < 0 ? -errno : 0;
		if (pf >= 0)
			close(pf);
		if (pt >= 0)
			close(pt);
		if (!retry_error(r) || r == -EXDEV) /* EXDEV from renameat2 is the tracee's own */
			break;
		outcomes_send(s, OUT_FAILED); /* this attempt's permits: decided again */
		if (i == SUP_RETRIES)
			r = -EACCES;
	}
	return reply(s, 0, r, 0);
}

/*
 * Decided, then the kernel performs it: (dirfd, path) as ACTION/OP, up to its
 * decision: 0 answered, 1 P needs box-policyd's verdict (cont_finish).
 */
static int
cont_prep(struct sup *s, int dirfd, unsigned long long addr, bool follow, enum act a,
	  const char *op, struct prep *p)
{
	*p = (struct prep){ .kind = P_CONT, .a = a, .op = op };
	char path[SUP_PATH_MAX];
	int r = read_string(s, addr, path);
	if (r < 0)
		return reply(s, 0, r == -EFAULT ? -EFAULT : -EACCES, 0);
	if (a == A_READ && path[0] == '/') {
		/* the system runtime's short way (runtime_open): continued undecided */
		int k = runtime_open(s, path, O_PATH | (follow ? 0 : O_NOFOLLOW));
		if (k >= 0)
			close(k);
		if (k != RUNTIME_LONG_WAY)
			return reply(s, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
	}
	r = path_resolve(s, dirfd, path, follow, &p->canon);
	if (r == -ENOENT || r == -ENOTDIR || r == -ENAMETOOLONG || r == -ELOOP) {
		/* nothing there to decide about: the kernel says the same error */
		return reply(s, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
	}
	if (r < 0)
		return reply(s, 0, r, 0);
	return 1;
}

static int
cont_finish(struct sup *s, struct prep *p, int verdict)
{
	(void)p;
	if (verdict < 0)
		return reply(s, 0, verdict, 0);
	return reply(s, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
}

/* P's call, its first decision VERDICT. */
static int
finish(struct sup *s, struct prep *p, int verdict)
{
	return p->kind == P_OPEN ? open_finish(s, p, verdict) : cont_finish(s, p, verdict);
}

/*
 * connect/bind of an AF_UNIX path, and sendto/sendmsg/sendmmsg with one as the
 * destination (ADDR, LEN the tracee's sockaddr): fs:write write_content of the
 * socket file (the kernel asks write permission of a connect and of a datagram
 * sent to a named socket; a bind makes the file), decided, then continued.
 * Another family, an abstract or unnamed address, and a connect or send to
 * box's own sockets under /run/box (the shell and MCP aliases') are continued
 * undecided. The race accepted: the path may be swapped (or the address
 * rewritten in the tracee's memory) between the decision and the call; what
 * the program reaches then is a socket the view let it reach anyway.
 */
static int read_mem(struct sup *s, unsigned long long addr, void *buf, size_t size);

/*
 * The decision of one address: 0 to continue (permitted, or nothing to decide),
 * or the error. With SEEN (sendmmsg's): a socket file already in SEEN is not
 * decided again, a new one is added (at most SUP_PENDING_MAX, then EACCES).
 */
struct seen {
	char *path[SUP_PENDING_MAX];
	unsigned n;
};

static int
sockaddr_decide(struct sup *s, unsigned long long addr, int len, bool binds, struct seen *seen)
{
	struct sockaddr_un sun;
	size_t off = offsetof(struct sockaddr_un, sun_path);
	/* the kernel's own EINVAL (its addrlen is an int: the register's low 32 bits) */
	if (!addr || len <= (int)off || len > (int)sizeof(struct sockaddr_storage))
		return 0;
	if ((size_t)len > sizeof(sun))
		len = (int)sizeof(sun);
	memset(&sun, 0, sizeof(sun));
	int r = read_mem(s, addr, &sun, (size_t)len);
	if (r < 0)
		return r == -EFAULT ? -EFAULT : -EACCES;
	if (sun.sun_family != AF_UNIX || sun.sun_path[0] == '\0')
		return 0;
	char path[sizeof(sun.sun_path) + 1];
	memcpy(path, sun.sun_path, (size_t)len - off);
	path[(size_t)len - off] = '\0';
	_cleanup_free_ char *abs = NULL, *canon = NULL;
	if ((r = absolute(s, AT_FDCWD, path, &abs)) < 0)
		return r == -ESRCH ? -EACCES : r;
	r = canonical(s, abs, !binds, 0, &canon);
	if (r == -ENOENT || r == -ENOTDIR || r == -ENAMETOOLONG || r == -ELOOP)
		return 0; /* the kernel's error */
	if (r < 0)
		return r;
	if (!binds && under(canon, "/run/box"))
		return 0;
	if (seen) {
		for (unsigned i = 0; i < seen->n; i++)
			if (strcmp(seen->path[i], canon) == 0)
				return 0;
		if (seen->n == SUP_PENDING_MAX)
			return -EACCES;
	}
	if ((r = decide(s, A_WRITE, "write_content", canon)) < 0)
		return r;
	if (seen)
		seen->path[seen->n++] = TAKE_PTR(canon);
	return 0;
}

static int
do_sockaddr(struct sup *s, unsigned long long addr, unsigned long long len, bool binds)
{
	int r = sockaddr_decide(s, addr, (int)(uint32_t)len, binds, NULL);
	return r < 0 ? reply(s, 0, r, 0) : reply(s, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
}

/*
 * The destination of one struct msghdr the tracee gave: as the kernel reads it
 * (a NULL msg_name is no address; a longer msg_namelen is cut to a
 * sockaddr_storage, not refused).
 */
static int
msghdr_decide(struct sup *s, const struct msghdr *mh, struct seen *seen)
{
	int len = (int)mh->msg_namelen;
	if (!mh->msg_name || len == 0)
		return 0;
	if (len < 0)
		return 0; /* the kernel's EINVAL */
	if (len > (int)sizeof(struct sockaddr_storage))
		len = (int)sizeof(struct sockaddr_storage);
	return sockaddr_decide(s, (unsigned long long)(uintptr_t)mh->msg_name, len, false, seen);
}

/* sendmsg(fd, MSG, flags): its destination decided, then continued. */
static int
do_sendmsg(struct sup *s, unsigned long long msg)
{
	struct msghdr mh;
	int r = read_mem(s, msg, &mh, sizeof(mh));
	if (r < 0)
		return reply(s, 0, r == -EFAULT ? -EFAULT : -EACCES, 0);
	r = msghdr_decide(s, &mh, NULL);
	return r < 0 ? reply(s, 0, r, 0) : reply(s, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
}

/* The kernel's cap on sendmmsg's vlen (UIO_MAXIOV): more messages are not sent. */
#define SUP_MMSG_MAX 1024

/*
 * sendmmsg(fd, MSGS, VLEN, flags): every message's destination decided (each
 * socket file once); one refused refuses the whole call (the kernel would
 * send the ones before it, and a continued call cannot be cut short). More
 * distinct socket files than the permits one call may hold (SUP_PENDING_MAX,
 * each awaiting its outcome) are refused too.
 */
static int
do_sendmmsg(struct sup *s, unsigned long long msgs, unsigned long long vlen_arg)
{
	unsigned vlen = (unsigned)vlen_arg;
	if (vlen > SUP_MMSG_MAX)
		vlen = SUP_MMSG_MAX;
	if (!vlen)
		return reply(s, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
	_cleanup_free_ struct mmsghdr *v = calloc(vlen, sizeof(*v));
	if (!v)
		return reply(s, 0, -ENOMEM, 0);
	int r = read_mem(s, msgs, v, vlen * sizeof(*v));
	if (r == -EFAULT) {
		/* a short array: the kernel sends the messages it can read; decide those */
		unsigned k = 0;
		while (k < vlen && read_mem(s, msgs + k * sizeof(*v), &v[k], sizeof(*v)) == 0)
			k++;
		if (!k)
			return reply(s, 0, -EFAULT, 0);
		vlen = k;
		r = 0;
	}
	if (r < 0)
		return reply(s, 0, -EACCES, 0);
	struct seen seen = { .n = 0 };
	for (unsigned i = 0; i < vlen && r == 0; i++)
		r = msghdr_decide(s, &v[i].msg_hdr, &seen);
	for (unsigned i = 0; i < seen.n; i++)
		free(seen.path[i]);
	if (r < 0)
		return reply(s, 0, r, 0);
	return reply(s, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
}

/* An AT_EMPTY_PATH call on an fd the tracee holds: that fd was decided when it was opened. */
static bool
empty_path(struct sup *s, unsigned long long addr, unsigned long long atflags)
{
	char c = 1;
	struct iovec l = { .iov_base = &c, .iov_len = 1 };
	struct iovec r = { .iov_base = (void *)(uintptr_t)addr, .iov_len = 1 };
	if (!(atflags & AT_EMPTY_PATH) || !addr)
		return false;
	return process_vm_readv(s->tid, &l, 1, &r, 1, 0) == 1 && c == '\0' && id_valid(s);
}

/* SIZE bytes of the tracee at ADDR (then ID_VALID). */
static int
read_mem(struct sup *s, unsigned long long addr, void *buf, size_t size)
{
	struct iovec l = { .iov_base = buf, .iov_len = size };
	struct iovec r = { .iov_base = (void *)(uintptr_t)addr, .iov_len = size };
	ssize_t n = process_vm_readv(s->tid, &l, 1, &r, 1, 0);
	if (n != (ssize_t)size)
		return n < 0 && errno != EFAULT ? -EACCES : -EFAULT;
	return id_valid(s) ? 0 : -ESRCH;
}

#define XATTR_NAME_LEN 255
#define XATTR_VALUE_LEN 65536

/* A call PID 1 performs on one canonical path (do_perform). */
struct op {
	enum { OP_TRUNCATE, OP_CHMOD, OP_CHOWN, OP_UTIMENS, OP_MKNOD, OP_SETXATTR,
	       OP_REMOVEXATTR } kind;
	bool nofollow;             /* the last component itself, when it is a link */
	unsigned long long n1, n2; /* length; mode; uid, gid; mode, dev; xattr flags */
	struct timespec ts[2];
	bool have_ts;
	char name[SUP_PATH_MAX];   /* the xattr's name */
	void *value;
	size_t size;
};

struct box_xattr_args { /* linux/xattr.h's struct xattr_args (6.13) */
	uint64_t value;
	uint32_t size;
	uint32_t flags;
};

static int
apply(struct sup *s, const char *canon, const struct op *o)
{
	int r;
	if (o->kind == OP_MKNOD) {
		const char *last;
		int pfd = open_parent(canon, &last);
		if (pfd < 0)
			return pfd;
		mode_t old = umask(tracee_umask(s));
		r = mknodat(pfd, last, (mode_t)o->n1, (dev_t)o->n2) < 0 ? -errno : 0;
		umask(old);
		close(pfd);
		return r;
	}
	int fd = o->kind == OP_TRUNCATE ?
			 open_resolved(canon, O_WRONLY | O_NONBLOCK | O_NOCTTY, 0) :
			 open_resolved(canon, O_PATH | (o->nofollow ? O_NOFOLLOW : 0), 0);
	if (fd < 0)
		return fd;
	switch (o->kind) {
	case OP_TRUNCATE: r = ftruncate(fd, (off_t)o->n1); break;
	case OP_CHMOD: r = (int)syscall(BOX_NR_fchmodat2, fd, "", (mode_t)o->n1, AT_EMPTY_PATH); break;
	case OP_CHOWN:
		r = fchownat(fd, "", (uid_t)o->n1, (gid_t)o->n2, AT_EMPTY_PATH);
		break;
	case OP_UTIMENS: r = utimensat(fd, "", o->have_ts ? o->ts : NULL, AT_EMPTY_PATH); break;
	case OP_SETXATTR: {
		struct box_xattr_args x = { .value = (uint64_t)(uintptr_t)o->value,
					    .size = (uint32_t)o->size, .flags = (uint32_t)o->n1 };
		r = (int)syscall(BOX_NR_setxattrat, fd, "", AT_EMPTY_PATH, o->name, &x, sizeof(x));
		break;
	}
	case OP_REMOVEXATTR:
		r = (int)syscall(BOX_NR_removexattrat, fd, "", AT_EMPTY_PATH, o->name);
		break;
	case OP_MKNOD:
	default: r = -1; errno = EINVAL; break;
	}
	r = r < 0 ? -errno : 0;
	close(fd);
	return r;
}

/* (DIRFD, ADDR) resolved (the last link followed when FOLLOW), decided, performed by apply. */
static int
do_perform(struct sup *s, int dirfd, unsigned long long addr, bool follow, enum act a,
	   const char *opname, const struct op *o)
{
	int r = -ELOOP;
	for (int i = 0; i <= SUP_RETRIES; i++) {
		_cleanup_free_ char *canon = NULL;
		if ((r = path_arg(s, dirfd, addr, follow, &canon)) < 0)
			return reply(s, 0, r, 0);
		if ((r = decide(s, a, opname, canon)) < 0)
			return reply(s, 0, r, 0);
		r = apply(s, canon, o);
		if (!retry_error(r))
			break;
		outcomes_send(s, OUT_FAILED); /* this attempt's permits: decided again */
		if (i == SUP_RETRIES)
			r = -EACCES;
	}
	return reply(s, 0, r, 0);
}

/* link(at): fs:read of the source, fs:write of the new name; linked in the canonical parents. */
static int
do_link(struct sup *s, int odir, unsigned long long oaddr, int ndir, unsigned long long naddr,
	bool follow)
{
	int r = -ELOOP;
	for (int i = 0; i <= SUP_RETRIES; i++) {
		_cleanup_free_ char *from = NULL, *to = NULL;
		if ((r = path_arg(s, odir, oaddr, follow, &from)) < 0 ||
		    (r = path_arg(s, ndir, naddr, false, &to)) < 0)
			return reply(s, 0, r, 0);
		if ((r = decide(s, A_READ, "read_content", from)) < 0 ||
		    (r = decide(s, A_WRITE, "write_content", to)) < 0)
			return reply(s, 0, r, 0);
		const char *lf, *lt;
		int pf = open_parent(from, &lf);
		int pt = pf >= 0 ? open_parent(to, &lt) : -EBADF;
		if (pf < 0 || pt < 0)
			r = pf < 0 ? pf : pt;
		else
			r = linkat(pf, lf, pt, lt, 0) < 0 ? -errno : 0;
		if (pf >= 0)
			close(pf);
		if (pt >= 0)
			close(pt);
		if (!retry_error(r) || r == -EXDEV)
			break;
		outcomes_send(s, OUT_FAILED); /* this attempt's permits: decided again */
		if (i == SUP_RETRIES)
			r = -EACCES;
	}
	return reply(s, 0, r, 0);
}

/*
 * symlink(at): fs:read of the target as the link would resolve it (from the
 * link's directory), fs:write (symlink) of the link; made in the canonical
 * parent with the target text as read.
 */
static int
do_symlink(struct sup *s, unsigned long long taddr, int ndir, unsigned long long naddr)
{
	char target[SUP_PATH_MAX];
	int r = read_string(s, taddr, target);
	if (r < 0)
		return reply(s, 0, r == -EFAULT ? -EFAULT : -EACCES, 0);
	if (!target[0])
		return reply(s, 0, -ENOENT, 0);
	for (int i = 0; i <= SUP_RETRIES; i++) {
		_cleanup_free_ char *to = NULL, *tabs = NULL, *tcanon = NULL;
		if ((r = path_arg(s, ndir, naddr, false, &to)) < 0)
			return reply(s, 0, r, 0);
		const char *sl = strrchr(to, '/');
		if (target[0] == '/')
			tabs = strdup(target);
		else if (asprintf(&tabs, "%.*s/%s", (int)(sl - to), to, target) < 0)
			tabs = NULL;
		if (!tabs)
			return reply(s, 0, -ENOMEM, 0);
		/* a dangling target is decided as written */
		if ((r = decide(s, A_READ, "read_content",
				canonical(s, tabs, true, 0, &tcanon) == 0 ? tcanon : tabs)) < 0 ||
		    (r = decide(s, A_WRITE, "symlink", to)) < 0)
			return reply(s, 0, r, 0);
		const char *last;
		int pfd = open_parent(to, &last);
		r = pfd < 0 ? pfd : symlinkat(target, pfd, last) < 0 ? -errno : 0;
		if (pfd >= 0)
			close(pfd);
		if (!retry_error(r))
			break;
		outcomes_send(s, OUT_FAILED); /* this attempt's permits: decided again */
		if (i == SUP_RETRIES)
			r = -EACCES;
	}
	return reply(s, 0, r, 0);
}

/* A history-free action (PolicyLocal): its calls may be decided in one batch. */
static bool
history_free(const struct sup *s, enum act a)
{
	return s->pc && s->hf_gen && (s->hf_mask & (1u << a));
}

/*
 * The open family and the calls decided then continued, up to their decision:
 * -ENOSYS another call (handle), 0 answered, 1 P needs box-policyd's verdict
 * (finish). BATCHING: a call whose action is not history-free is left untouched
 * (-EAGAIN: it goes alone).
 */
static int
prep_call(struct sup *s, struct prep *p, bool batching)
{
	const struct seccomp_data *d = &s->req->data;
	const unsigned long long *a = d->args;
	int dfd = (int)a[0];
	int dir = AT_FDCWD, flags = 0;
	unsigned long long addr = a[0], atflags = 0;
	mode_t mode = 0;
	bool follow = true;
	enum act act = A_READ;
	const char *op = "read_metadata";

	switch (d->nr) {
	case __NR_open: flags = (int)a[1]; mode = (mode_t)a[2]; goto open;
	case __NR_creat: flags = O_CREAT | O_WRONLY | O_TRUNC; mode = (mode_t)a[1]; goto open;
	case __NR_openat:
		dir = dfd;
		addr = a[1];
		flags = (int)a[2];
		mode = (mode_t)a[3];
	open:
		if (batching && !history_free(s, open_flags_act(flags)))
			return -EAGAIN;
		return open_prep(s, dir, addr, flags, mode, p);
	case __NR_stat:
	case __NR_statfs:
	case __NR_access:
	case __NR_getxattr:
	case __NR_listxattr:
		break;
	case __NR_inotify_add_watch: addr = a[1]; break;
	case __NR_lstat:
	case __NR_lgetxattr:
	case __NR_llistxattr: follow = false; break;
	case __NR_newfstatat:
	case __NR_statx:
		/* fstat(fd) through AT_EMPTY_PATH: the fd was decided when it was opened */
		atflags = a[d->nr == __NR_statx ? 2 : 3];
		if (empty_path(s, a[1], atflags))
			return reply(s, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
		dir = dfd;
		addr = a[1];
		follow = !(atflags & AT_SYMLINK_NOFOLLOW);
		break;
	case __NR_faccessat: dir = dfd; addr = a[1]; break;
	case BOX_NR_faccessat2:
		dir = dfd;
		addr = a[1];
		follow = !(a[3] & AT_SYMLINK_NOFOLLOW);
		break;
	case __NR_readlink: follow = false; op = "read_link"; break;
	case __NR_readlinkat: dir = dfd; addr = a[1]; follow = false; op = "read_link"; break;
	case __NR_chdir: op = "change_dir"; break;
	case __NR_execve: op = "exec"; break;
	case __NR_execveat:
		if (empty_path(s, a[1], a[4]))
			return reply(s, 0, -EPERM, 0); /* box's filter refuses it too */
		dir = dfd;
		addr = a[1];
		follow = !(a[4] & AT_SYMLINK_NOFOLLOW);
		op = "exec";
		break;
	default:
		return -ENOSYS;
	}
	if (batching && !history_free(s, act))
		return -EAGAIN;
	return cont_prep(s, dir, addr, follow, act, op, p);
}

static int
handle(struct sup *s)
{
	const struct seccomp_data *d = &s->req->data;
	const unsigned long long *a = d->args;
	int dfd = (int)a[0];
	s->tid = (pid_t)s->req->pid;

	struct prep p = { .canon = NULL };
	int k = prep_call(s, &p, false);
	if (k != -ENOSYS) {
		if (k == 1)
			(void)finish(s, &p, decide(s, p.a, p.op, p.canon));
		prep_free(&p);
		return 0;
	}
	switch (d->nr) {
	case __NR_mkdir: return do_dirop(s, AT_FDCWD, a[0], 0, (mode_t)a[1]);
	case __NR_mkdirat: return do_dirop(s, dfd, a[1], 0, (mode_t)a[2]);
	case __NR_unlink: return do_dirop(s, AT_FDCWD, a[0], 1, 0);
	case __NR_rmdir: return do_dirop(s, AT_FDCWD, a[0], 2, 0);
	case __NR_unlinkat:
		if ((int)a[2] & ~AT_REMOVEDIR)
			return reply(s, 0, -EINVAL, 0);
		return do_dirop(s, dfd, a[1], ((int)a[2] & AT_REMOVEDIR) ? 2 : 1, 0);
	case __NR_rename: return do_rename(s, AT_FDCWD, a[0], AT_FDCWD, a[1], 0);
	case __NR_renameat: return do_rename(s, dfd, a[1], (int)a[2], a[3], 0);
	case __NR_renameat2: return do_rename(s, dfd, a[1], (int)a[2], a[3], (unsigned)a[4]);
	case __NR_connect: return do_sockaddr(s, a[1], a[2], false);
	case __NR_bind: return do_sockaddr(s, a[1], a[2], true);
	case __NR_sendto: return do_sockaddr(s, a[4], a[5], false);
	case __NR_sendmsg: return do_sendmsg(s, a[1]);
	case __NR_sendmmsg: return do_sendmmsg(s, a[1], a[2]);
	case __NR_truncate: {
		struct op o = { .kind = OP_TRUNCATE, .n1 = a[1] };
		return do_perform(s, AT_FDCWD, a[0], true, A_WRITE, "write_content", &o);
	}
	case __NR_chmod:
	case __NR_fchmodat:
	case BOX_NR_fchmodat2: {
		bool at = d->nr != __NR_chmod;
		bool nofollow = d->nr == BOX_NR_fchmodat2 && (a[3] & AT_SYMLINK_NOFOLLOW);
		struct op o = { .kind = OP_CHMOD, .nofollow = nofollow, .n1 = at ? a[2] : a[1] };
		if (d->nr == BOX_NR_fchmodat2 && empty_path(s, a[1], a[3]))
			return reply(s, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE); /* fchmod(fd) */
		return do_perform(s, at ? dfd : AT_FDCWD, at ? a[1] : a[0], !nofollow, A_WRITE,
				  "set_permissions", &o);
	}
	case __NR_chown:
	case __NR_lchown: {
		struct op o = { .kind = OP_CHOWN, .nofollow = d->nr == __NR_lchown, .n1 = a[1],
				.n2 = a[2] };
		return do_perform(s, AT_FDCWD, a[0], d->nr == __NR_chown, A_WRITE, "set_permissions",
				  &o);
	}
	case __NR_fchownat: {
		if (empty_path(s, a[1], a[4]))
			return reply(s, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE); /* fchown(fd) */
		bool nofollow = a[4] & AT_SYMLINK_NOFOLLOW;
		struct op o = { .kind = OP_CHOWN, .nofollow = nofollow, .n1 = a[2], .n2 = a[3] };
		return do_perform(s, dfd, a[1], !nofollow, A_WRITE, "set_permissions", &o);
	}
	case __NR_utime:
	case __NR_utimes:
	case __NR_futimesat:
		return reply(s, 0, -ENOSYS, 0); /* glibc uses utimensat */
	case __NR_utimensat: {
		if (!a[1] || empty_path(s, a[1], a[3]))
			return reply(s, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE); /* futimens(fd) */
		bool nofollow = a[3] & AT_SYMLINK_NOFOLLOW;
		struct op o = { .kind = OP_UTIMENS, .nofollow = nofollow };
		if (a[2]) {
			int r = read_mem(s, a[2], o.ts, sizeof(o.ts));
			if (r < 0)
				return reply(s, 0, r == -EFAULT ? -EFAULT : -EACCES, 0);
			o.have_ts = true;
		}
		return do_perform(s, dfd, a[1], !nofollow, A_WRITE, "set_permissions", &o);
	}
	case __NR_setxattr:
	case __NR_lsetxattr:
	case __NR_removexattr:
	case __NR_lremovexattr: {
		bool set = d->nr == __NR_setxattr || d->nr == __NR_lsetxattr;
		bool nofollow = d->nr == __NR_lsetxattr || d->nr == __NR_lremovexattr;
		struct op o = { .kind = set ? OP_SETXATTR : OP_REMOVEXATTR, .nofollow = nofollow };
		int r = read_string(s, a[1], o.name);
		if (r == 0 && strlen(o.name) > XATTR_NAME_LEN)
			r = -ERANGE;
		if (r == 0 && set) {
			if (a[3] > XATTR_VALUE_LEN)
				r = -E2BIG;
			else if ((o.size = (size_t)a[3]) && !(o.value = malloc(o.size)))
				r = -ENOMEM;
			else if (o.size)
				r = read_mem(s, a[2], o.value, o.size);
			o.n1 = a[4];
		}
		if (r < 0) {
			free(o.value);
			return reply(s, 0, r == -ESRCH ? -EACCES : r, 0);
		}
		r = do_perform(s, AT_FDCWD, a[0], !nofollow, A_WRITE, "set_permissions", &o);
		free(o.value);
		return r;
	}
	case __NR_mknod:
	case __NR_mknodat: {
		bool at = d->nr == __NR_mknodat;
		struct op o = { .kind = OP_MKNOD, .n1 = at ? a[2] : a[1], .n2 = at ? a[3] : a[2] };
		return do_perform(s, at ? dfd : AT_FDCWD, at ? a[1] : a[0], false, A_WRITE,
				  "write_content", &o);
	}
	case __NR_link:
	case __NR_linkat: {
		bool at = d->nr == __NR_linkat;
		if (at && ((int)a[4] & AT_EMPTY_PATH))
			return reply(s, 0, -EPERM, 0); /* a link to an open fd: refused */
		return do_link(s, at ? dfd : AT_FDCWD, at ? a[1] : a[0], at ? (int)a[2] : AT_FDCWD,
			       at ? a[3] : a[1], at && ((int)a[4] & AT_SYMLINK_FOLLOW));
	}
	case __NR_symlink:
	case __NR_symlinkat: {
		bool at = d->nr == __NR_symlinkat;
		return do_symlink(s, a[0], at ? (int)a[1] : AT_FDCWD, at ? a[2] : a[1]);
	}
	default:
		return reply(s, 0, -ENOSYS, 0);
	}
}

static struct sup S_sup;

/* Outcomes wait at most this long for the next decision's PolicyShip. */
#define SUP_SHIP_WAIT_NS 1000000

int
supervise_timeout_ms(void)
{
	const struct sup *s = &S_sup;
	if (!s->ship_since)
		return -1;
	int64_t d = s->ship_since + SUP_SHIP_WAIT_NS - box_now_ns();
	return d <= 0 ? 0 : (int)((d + 999999) / 1000000);
}

void
supervise_flush(bool all)
{
	struct sup *s = &S_sup;
	if (s->ship_since && (all || box_now_ns() - s->ship_since >= SUP_SHIP_WAIT_NS))
		(void)ship_now(s);
}

int
supervise_start(int listener, int policyd_fd, const char *home)
{
	struct sup *s = &S_sup;
	struct seccomp_notif_sizes sz;

	s->listener = listener;
	for (size_t i = 0; i < sizeof(runtime_dirs) / sizeof(runtime_dirs[0]); i++)
		s->runtime_fd[i] = open(runtime_dirs[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
	s->home = home && home[0] == '/' && strcmp(home, "/") != 0 ? home : "";
	s->home_len = strlen(s->home);
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
		return -errno;
	s->req_size = sz.seccomp_notif > sizeof(*s->req) ? sz.seccomp_notif : sizeof(*s->req);
	s->resp_size = sz.seccomp_notif_resp > sizeof(*s->resp) ? sz.seccomp_notif_resp :
								    sizeof(*s->resp);
	for (size_t i = 0; i < SUP_BATCH_MAX; i++)
		if (!(s->reqs[i] = calloc(1, s->req_size)))
			return -ENOMEM;
	s->req = s->reqs[0];
	s->resp = calloc(1, s->resp_size);
	if (!s->resp)
		return -ENOMEM;
	policy_local_init(&s->local, act_names, sizeof(act_names) / sizeof(act_names[0]));
	policy_local_verdict_init(&s->lv);
	static const uint32_t replies[] = { BOX__MSG_TYPE__MSG_DECIDE_REPLY,
					    BOX__MSG_TYPE__MSG_DECIDE_BATCH_REPLY,
					    BOX__MSG_TYPE__MSG_POLICY_LOCAL };
	int r = policy_client_new_sync(policyd_fd, replies, 3, &s->pc);
	if (r < 0)
		s->pc = NULL; /* every decision refuses */
	local_ask(s);
	return 0;
}

/*
 * The K calls of B (their notifications S->reqs[IDX[i]]) decided together: here
 * and shipped in one PolicyShip, or, holding no policy, in one DecideBatchRequest
 * naming the generation whose PolicyLocal said each action is history-free; then
 * each performed or continued, its outcome recorded, in turn. A stale answer (a
 * reload came between): PolicyLocal asked again, each decided alone.
 */
static void
batch_decide(struct sup *s, struct prep *b, const unsigned *idx, unsigned k)
{
	char *sp[SUP_BATCH_MAX] = { NULL };
	struct policy_fields f[SUP_BATCH_MAX];
	Box__DecideRequest rq[SUP_BATCH_MAX], *rqp[SUP_BATCH_MAX];
	/* each call's verdict (PERMITTED, OK), or ASKED: it goes alone (decide) */
	bool permitted[SUP_BATCH_MAX], ok[SUP_BATCH_MAX], asked[SUP_BATCH_MAX] = { false };
	bool stale = false, failed = !s->pc;

	for (unsigned i = 0; i < k && !failed; i++) {
		if (spelled(s, b[i].canon, &sp[i]) < 0)
			failed = true;
		policy_fields_init(&f[i]);
		policy_fields_str(&f[i], "path", sp[i] ? sp[i] : b[i].canon);
		policy_fields_str(&f[i], "operation", b[i].op);
		box__decide_request__init(&rq[i]);
		rq[i].action = (char *)act_names[b[i].a];
		rq[i].input = f[i].p;
		rq[i].n_input = f[i].n;
		rqp[i] = &rq[i];
	}
	bool here = !failed;
	for (unsigned i = 0; i < k && here; i++)
		here = local_ready(s, b[i].a);
	if (here) {
		/* decided here, shipped together before any of them takes effect */
		for (unsigned i = 0; i < k; i++) {
			permitted[i] = ok[i] = false;
			asked[i] = s->pc && decide_here(s, &rq[i], &permitted[i], &ok[i]) == -EAGAIN;
		}
		failed = !ship_now(s);
	} else if (!failed) {
		Box__DecideBatchRequest br = BOX__DECIDE_BATCH_REQUEST__INIT;
		br.requests = rqp;
		br.n_requests = k;
		br.has_history_free = true;
		br.history_free = s->hf_gen;
		struct box_ipc_msg m = BOX_IPC_MSG_INIT;
		int r = policy_client_call(s->pc, BOX__MSG_TYPE__MSG_DECIDE_BATCH_REQUEST, &br.base,
					   &m);
		const Box__DecideBatchReply *rep = r < 0 ? NULL : (const Box__DecideBatchReply *)m.msg;
		if (rep && rep->has_stale && rep->stale)
			stale = true;
		else if (!rep || rep->n_replies != k)
			failed = true; /* (a short reply: fail closed) */
		for (unsigned i = 0; rep && !stale && !failed && i < k; i++) {
			permitted[i] = policy_client_permitted(rep->replies[i]);
			ok[i] = permitted[i] &&
				rep->replies[i]->cause == BOX__DECISION_CAUSE__CAUSE_PERMITTED;
		}
		box_ipc_msg_done(&m);
		if (failed)
			pc_broken(s);
	}
	if (stale) {
		local_ask(s);
		for (unsigned i = 0; i < k; i++)
			asked[i] = true;
	}
	for (unsigned i = 0; i < k; i++) {
		s->req = s->reqs[idx[i]];
		s->tid = (pid_t)s->req->pid;
		int v = failed	 ? -EACCES :
			asked[i] ? decide(s, b[i].a, b[i].op, b[i].canon) :
				   decided(s, b[i].a, b[i].op, sp[i] ? sp[i] : b[i].canon,
					   permitted[i], ok[i]);
		(void)finish(s, &b[i], v);
	}
	for (unsigned i = 0; i < k; i++)
		free(sp[i]);
}

void
supervise_handle(const struct seccomp_notif *const *reqs, size_t n, size_t size)
{
	struct sup *s = &S_sup;
	struct prep b[SUP_BATCH_MAX];
	unsigned idx[SUP_BATCH_MAX], alone[SUP_BATCH_MAX], k = 0, n_alone = 0;

	memset(b, 0, sizeof(b));
	if (n > SUP_BATCH_MAX)
		n = SUP_BATCH_MAX; /* (kernel.c receives at most SUP_BATCH_MAX) */
	for (size_t i = 0; i < n; i++) {
		memset(s->reqs[i], 0, s->req_size);
		memcpy(s->reqs[i], reqs[i], size < s->req_size ? size : s->req_size);
	}
	/*
	 * Each history-free call up to its decision (one needing none is answered here);
	 * the others wait, untouched, to go alone after the batch, in arrival order.
	 */
	for (size_t i = 0; i < n; i++) {
		s->req = s->reqs[i];
		s->tid = (pid_t)s->req->pid;
		int r = n > 1 ? prep_call(s, &b[k], true) : -EAGAIN;
		if (r == -EAGAIN || r == -ENOSYS) {
			alone[n_alone++] = (unsigned)i;
			continue;
		}
		if (r != 1) {
			prep_free(&b[k]); /* answered */
			continue;
		}
		int v = decide_local(s, b[k].a, b[k].canon);
		if (v <= 0) {
			(void)finish(s, &b[k], v);
			prep_free(&b[k]);
			continue;
		}
		idx[k++] = (unsigned)i;
	}
	if (k == 1) {
		s->req = s->reqs[idx[0]];
		s->tid = (pid_t)s->req->pid;
		(void)finish(s, &b[0], decide(s, b[0].a, b[0].op, b[0].canon));
	} else if (k > 1) {
		batch_decide(s, b, idx, k);
	}
	for (unsigned i = 0; i < k; i++)
		prep_free(&b[i]);
	for (unsigned i = 0; i < n_alone; i++) {
		s->req = s->reqs[alone[i]];
		(void)handle(s);
	}
	s->req = s->reqs[0];
}
