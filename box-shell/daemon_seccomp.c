/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon_seccomp.c — box-shell's own allow-list (HACKING.md convention 3),
 * installed after the privilege drop and ShellInit, before ShellReady, so
 * every session and every process it forks runs under it (inherited across
 * fork), on top of the box's own filter the trampoline installed.
 *
 * box-shell is a whole shell without exec: files (open, stat, read, write,
 * directories, links, renames, modes, times), processes (fork through
 * clone without namespace flags, wait, kill, process groups), pipes and
 * AF_UNIX socketpairs with fd passing, terminals (a few ioctls; the pty of
 * `boxctl shell` and setsid for the process that holds it), the clock
 * and signals. Never: execve/execveat (a host program runs in a tool
 * sandbox through boxd), a socket of its own (socketpair is enough;
 * socket() answers EACCES, so NSS falls back from nscd to the files),
 * ptrace, mount, namespaces (clone flags checked; clone3, whose flags a
 * filter cannot see, answers ENOSYS so glibc falls back to clone), bpf,
 * keyctl, personality, TIOCSTI (ioctl requests are listed). Anything else
 * kills the process. The sanitizer runtime's own calls are added by
 * common/seccomp_allow.c in sanitizer builds only.
 * The program takes no input, so libseccomp compiles it once, at build time
 * (gen/shd_seccomp_gen.c prints it; daemon_seccomp_baked.c loads it): box-shell's
 * start does not pay for the compile (about 0.8 ms). test_daemon_filters holds
 * the two equal.
 * Trusts: nothing.
 */
#include <errno.h>
#include <sys/syscall.h>
#include <sched.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <termios.h>

#include <seccomp.h>

#include "daemon.h"
#include "seccomp_allow.h"

static const int allowed[] = {
	/* files */
	SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev), SCMP_SYS(pread64),
	SCMP_SYS(pwrite64), SCMP_SYS(lseek), SCMP_SYS(openat), SCMP_SYS(openat2), SCMP_SYS(close),
	SCMP_SYS(close_range), SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(statx),
	SCMP_SYS(fstatfs), SCMP_SYS(statfs), SCMP_SYS(getdents64), SCMP_SYS(readlinkat),
	SCMP_SYS(faccessat), SCMP_SYS(faccessat2), SCMP_SYS(access), SCMP_SYS(mkdirat),
	SCMP_SYS(unlinkat), SCMP_SYS(renameat), SCMP_SYS(renameat2), SCMP_SYS(linkat),
	SCMP_SYS(symlinkat), SCMP_SYS(fchmodat), SCMP_SYS(fchmod), SCMP_SYS(fchownat),
	SCMP_SYS(fchown), SCMP_SYS(utimensat), SCMP_SYS(mknodat), SCMP_SYS(ftruncate),
	SCMP_SYS(fsync), SCMP_SYS(fdatasync), SCMP_SYS(fadvise64), SCMP_SYS(copy_file_range),
	SCMP_SYS(sendfile), SCMP_SYS(memfd_create), SCMP_SYS(fcntl), SCMP_SYS(dup),
	SCMP_SYS(dup2), SCMP_SYS(dup3), SCMP_SYS(pipe2), SCMP_SYS(chdir), SCMP_SYS(fchdir),
	SCMP_SYS(getcwd), SCMP_SYS(umask), SCMP_SYS(flock), SCMP_SYS(readlink), SCMP_SYS(stat),
	SCMP_SYS(lstat), SCMP_SYS(open), SCMP_SYS(creat), SCMP_SYS(mkdir), SCMP_SYS(rmdir),
	SCMP_SYS(unlink), SCMP_SYS(rename), SCMP_SYS(link), SCMP_SYS(symlink), SCMP_SYS(chmod),
	SCMP_SYS(chown), SCMP_SYS(lchown), SCMP_SYS(getdents), SCMP_SYS(getxattr),
	SCMP_SYS(lgetxattr), SCMP_SYS(fgetxattr), SCMP_SYS(listxattr), SCMP_SYS(llistxattr),
	SCMP_SYS(flistxattr), SCMP_SYS(setxattr), SCMP_SYS(lsetxattr), SCMP_SYS(fsetxattr),
	SCMP_SYS(removexattr), SCMP_SYS(lremovexattr), SCMP_SYS(fremovexattr),
	/* processes and signals */
	SCMP_SYS(wait4), SCMP_SYS(waitid), SCMP_SYS(kill), SCMP_SYS(tgkill), SCMP_SYS(setpgid),
	SCMP_SYS(getpgid), SCMP_SYS(getpgrp), SCMP_SYS(getsid), SCMP_SYS(getpid),
	SCMP_SYS(getppid), SCMP_SYS(gettid), SCMP_SYS(getuid), SCMP_SYS(geteuid),
	SCMP_SYS(getgid), SCMP_SYS(getegid), SCMP_SYS(getgroups), SCMP_SYS(getresuid),
	SCMP_SYS(getresgid), SCMP_SYS(rt_sigaction), SCMP_SYS(rt_sigprocmask),
	SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigsuspend), SCMP_SYS(rt_sigtimedwait),
	SCMP_SYS(sigaltstack), SCMP_SYS(pidfd_open), SCMP_SYS(set_robust_list),
	SCMP_SYS(set_tid_address), SCMP_SYS(rseq), SCMP_SYS(exit), SCMP_SYS(exit_group),
	SCMP_SYS(restart_syscall), SCMP_SYS(getrusage), SCMP_SYS(times), SCMP_SYS(prlimit64),
	SCMP_SYS(getrlimit), SCMP_SYS(setrlimit), SCMP_SYS(getpriority), SCMP_SYS(setpriority),
	SCMP_SYS(sched_getaffinity), SCMP_SYS(sched_yield), SCMP_SYS(uname), SCMP_SYS(sysinfo),
	SCMP_SYS(setsid), /* `boxctl shell`: the terminal's holder leads a session (attach.c) */
	/* memory, time */
	SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(mprotect), SCMP_SYS(brk),
	SCMP_SYS(madvise), SCMP_SYS(futex), SCMP_SYS(getrandom), SCMP_SYS(clock_gettime),
	SCMP_SYS(clock_getres), SCMP_SYS(gettimeofday), SCMP_SYS(time), SCMP_SYS(nanosleep),
	SCMP_SYS(clock_nanosleep), SCMP_SYS(alarm), SCMP_SYS(setitimer), SCMP_SYS(getitimer),
	/* the channels: socketpairs with fd passing, the listener, the loop */
	SCMP_SYS(socketpair), SCMP_SYS(sendmsg), SCMP_SYS(recvmsg), SCMP_SYS(sendto),
	SCMP_SYS(recvfrom), SCMP_SYS(accept4), SCMP_SYS(shutdown), SCMP_SYS(getsockopt),
	SCMP_SYS(setsockopt), SCMP_SYS(getsockname), SCMP_SYS(getpeername), SCMP_SYS(poll),
	SCMP_SYS(ppoll), SCMP_SYS(select), SCMP_SYS(pselect6), SCMP_SYS(epoll_create1),
	SCMP_SYS(epoll_wait), SCMP_SYS(epoll_pwait), SCMP_SYS(epoll_ctl), SCMP_SYS(eventfd2),
	/* the held directories' watches (libshell/fsops.c): only ever counted, never read */
	SCMP_SYS(inotify_init1), SCMP_SYS(inotify_add_watch),
};

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

/*
 * The terminal requests a shell makes (no TIOCSTI: nothing is typed into a
 * terminal), and those of `boxctl shell`'s pty (attach.c): unlock it, size it,
 * open its slave through the master, make the slave the holder's terminal.
 */
static const unsigned long ioctls[] = {
	TCGETS,	     TCSETS,	  TCSETSW,     TCSETSF,	    TIOCGWINSZ, TIOCGPGRP, FIONREAD,
	FIONBIO,     FIOCLEX,	  FIONCLEX,    TIOCSPTLCK,  TIOCSWINSZ, TIOCGPTPEER, TIOCSCTTY,
};

#ifdef __NR_fchmodat2
#define SHD_NR_fchmodat2 __NR_fchmodat2
#elif defined(__x86_64__)
#define SHD_NR_fchmodat2 452
#else
#define SHD_NR_fchmodat2 __SNR_fchmodat2
#endif

#define NS_FLAGS                                                                     \
	(CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |  \
	 CLONE_NEWUTS | CLONE_NEWCGROUP | CLONE_NEWTIME)

int
shd_seccomp_build(scmp_filter_ctx *ret)
{
	scmp_filter_ctx ctx;
	int r = seccomp_allow_new(allowed, sizeof(allowed) / sizeof(allowed[0]), &ctx);
	if (r < 0)
		return r;
	for (size_t i = 0; r == 0 && i < sizeof(ioctls) / sizeof(*ioctls); i++) {
		/* Spelled out: libseccomp's SCMP_A1() leaves datum_b to clang's -Wextra. */
		const struct scmp_arg_cmp a1 = { .arg = 1, .op = SCMP_CMP_MASKED_EQ,
						 .datum_a = 0xffffffffu,
						 .datum_b = (scmp_datum_t)ioctls[i] };
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, &a1);
	}
	if (r == 0) {
		const struct scmp_arg_cmp a0 = { .arg = 0, .op = SCMP_CMP_MASKED_EQ,
						 .datum_a = NS_FLAGS, .datum_b = 0 };
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1, &a0);
	}
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	/* chmod(1) on a kernel with fchmodat2 (6.6): glibc tries it first (libseccomp may not name it). */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SHD_NR_fchmodat2, 0);
	/*
	 * No network of its own: socket() fails (EACCES) instead of killing, so
	 * that NSS (ls -l, id) falls back from nscd's socket to the files.
	 */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 0);
	if (r < 0) {
		seccomp_release(ctx);
		return r;
	}
	*ret = ctx;
	return 0;
}
