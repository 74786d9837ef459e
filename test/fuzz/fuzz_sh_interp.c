/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_sh_interp.c — box-shell's interpreter on arbitrary scripts: parse,
 * expansion (brace, tilde, parameter, arithmetic, command substitution,
 * splitting, patterns), the builtins (printf, read, getopts, declare, set,
 * trap, …), functions, pipelines and subshells, redirections, here-docs.
 *
 * Each input is one script (at most FUZZ_SCRIPT_MAX bytes) run by a fresh
 * shell with exec_text, then its EXIT trap, then sh_free: no crash, no
 * sanitizer report, no leak, no hang. The host is sh_host_stub.c (a
 * decider that refuses every host program, an in-memory file system).
 *
 * Bounds, so that a timeout means a hang of the interpreter, not a script
 * that loops (which is legitimate bash):
 *  - a step budget (sh->step_limit, FUZZ_STEPS nodes per process): past it
 *    the script ends with 124;
 *  - at most FUZZ_FORKS forks per input, counted across the processes the
 *    input makes (a shared counter): past them fork fails with EAGAIN;
 *    every child dies with its parent (PR_SET_PDEATHSIG) and what is left
 *    at the end of the input is killed and reaped (the harness is a child
 *    subreaper);
 *  - the interpreter's own caps (nesting and call depth 1000, values,
 *    expansions, fields), on the stack it was given (8 MiB as a rule, the
 *    programs' own: deeper recursion than the caps allow is a bug);
 *  - fds 0-2 are /dev/null during the input (no output is kept).
 *
 * The process stays the fuzzer's: linked with --wrap (fuzz_sh_interp.mk),
 * during an input fork is budgeted; execve aborts (a host program would
 * run despite its refusal: a bug); kill reaches only the input's own
 * children, or the process itself for a signal the input trapped, never
 * with a crash signal; signal/sigaction leave the sanitizers' and
 * libFuzzer's signals (SEGV BUS ILL FPE ABRT TRAP SYS ALRM VTALRM PROF
 * XCPU) alone and the others are restored after the input; chdir fails.
 * waitpid aborts the harness when a child died of a crash signal (a
 * sanitizer report in a child aborts it: abort_on_error); close and dup2
 * leave the fds open at the start of the input (the harness's, libFuzzer's)
 * alone. Files the input left open are closed after it; umask, fds 0-2 and
 * the signal dispositions are restored.
 *
 * libFuzzer: run with -close_fd_mask=3 (make fuzz does) so that its own
 * messages survive the input's fds. Otherwise (and in the replay,
 * fuzz-main.c) the harness points the sanitizers' reports at the original
 * stderr itself.
 * Trusts: nothing; the input is arbitrary bytes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libshell/sh.h"
#include "sh_host_stub.h"

#define FUZZ_SCRIPT_MAX (64 << 10)
#define FUZZ_STEPS      5000
#define FUZZ_FORKS      8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The sanitizers' hooks, present in sanitizer builds only. */
void __sanitizer_set_report_fd(void *fd) __attribute__((weak));
const char *__asan_default_options(void);

const char *
__asan_default_options(void)
{
	/* a report in a forked child aborts it, so its parent sees SIGABRT */
	return "abort_on_error=1:allow_user_segv_handler=0";
}

pid_t __real_fork(void);
pid_t __wrap_fork(void);
pid_t __real_waitpid(pid_t pid, int *status, int options);
pid_t __wrap_waitpid(pid_t pid, int *status, int options);
int __wrap_execve(const char *path, char *const argv[], char *const envp[]);
int __real_kill(pid_t pid, int sig);
int __wrap_kill(pid_t pid, int sig);
int __real_sigaction(int sig, const struct sigaction *sa, struct sigaction *old);
int __wrap_sigaction(int sig, const struct sigaction *sa, struct sigaction *old);
sighandler_t __real_signal(int sig, sighandler_t h);
sighandler_t __wrap_signal(int sig, sighandler_t h);
int __wrap_chdir(const char *path);
int __real_close(int fd);
int __wrap_close(int fd);
int __real_dup2(int from, int to);
int __wrap_dup2(int from, int to);

/* Shared by every process of one input. */
struct fuzz_shared {
	atomic_int forks;
};

static struct fuzz_shared *shared;
static bool in_input;        /* an input runs (in this process or its parent) */
static pid_t harness_pid;    /* the process that runs the inputs */
static int devnull = -1;
static int saved_std[3] = {-1, -1, -1};
static struct sigaction saved_sig[NSIG];
static bool touched_sig[NSIG];
/* The fds (from 3 on, of the first 1024) open when the input started: the
 * harness's and libFuzzer's; the input may not close or replace them. */
static uint64_t protected_fds[16];

static bool
protected_fd(int fd)
{
	return in_input && fd >= 3 && fd < 1024 && (protected_fds[fd / 64] >> (fd % 64) & 1);
}

static _Noreturn void
harness_abort(const char *why, long n)
{
	char b[200];
	int l = snprintf(b, sizeof b, "fuzz_sh_interp: %s (%ld)\n", why, n);
	int fd = saved_std[2] >= 0 ? saved_std[2] : 2;
	(void)!write(fd, b, (size_t)l);
	abort();
}

static bool
crash_signal(int sig)
{
	switch (sig) {
	case SIGSEGV:
	case SIGBUS:
	case SIGILL:
	case SIGFPE:
	case SIGABRT:
	case SIGTRAP:
	case SIGSYS:
		return true;
	default:
		return false;
	}
}

/* The signals the sanitizers and libFuzzer own: never changed by a script. */
static bool
engine_signal(int sig)
{
	return crash_signal(sig) || sig == SIGALRM || sig == SIGVTALRM || sig == SIGPROF ||
	       sig == SIGXCPU;
}

/* ---- the process's operations during an input ---- */

pid_t
__wrap_fork(void)
{
	if (!in_input)
		return __real_fork();
	if (atomic_fetch_add(&shared->forks, 1) >= FUZZ_FORKS) {
		errno = EAGAIN;
		return -1;
	}
	pid_t parent = getpid();
	/* no signal reaches the child before its handlers are its own */
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	pid_t pid = __real_fork();
	int e = errno;
	if (pid == 0) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(125);
		/* libFuzzer's handlers (SIGINT, SIGTERM, SIGUSR1…) are not a
		 * subshell's: the defaults, unless the input set its own */
		for (int s = 1; s < NSIG; s++)
			if (!touched_sig[s] && !engine_signal(s) && saved_sig[s].sa_handler != SIG_DFL &&
			    saved_sig[s].sa_handler != SIG_IGN)
				__real_signal(s, SIG_DFL);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return pid;
}

pid_t
__wrap_waitpid(pid_t pid, int *status, int options)
{
	int st = 0;
	pid_t r = __real_waitpid(pid, &st, options);
	if (status)
		*status = st;
	if (in_input && r > 0 && WIFSIGNALED(st) && crash_signal(WTERMSIG(st)))
		harness_abort("a child of the interpreter died of a crash signal", WTERMSIG(st));
	return r;
}

int
__wrap_execve(const char *path, char *const argv[], char *const envp[])
{
	(void)argv;
	(void)envp;
	if (in_input)
		harness_abort(path ? path : "execve", 0);
	errno = EACCES;
	return -1;
}

/* Whether PID is a child of this process (its own, not yet reaped). */
static bool
own_child(pid_t pid)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(p, "re");
	if (!f)
		return false;
	int ppid = -1;
	char state;
	/* pid (comm) state ppid: comm may hold ')' — read after the last one */
	char line[512];
	bool ok = fgets(line, sizeof line, f) != NULL;
	fclose(f);
	char *rp = ok ? strrchr(line, ')') : NULL;
	if (!rp || sscanf(rp + 1, " %c %d", &state, &ppid) != 2)
		return false;
	return ppid == getpid();
}

int
__wrap_kill(pid_t pid, int sig)
{
	if (!in_input)
		return __real_kill(pid, sig);
	bool allowed = false;
	if (sig < 0 || sig >= NSIG || engine_signal(sig)) {
		allowed = false;
	} else if (pid == getpid()) {
		/* itself: only a signal the input caught or ignores (trap), never
		 * one at its default or at libFuzzer's handler (SIGINT ends it) */
		struct sigaction cur;
		allowed = sig == 0 || (touched_sig[sig] && __real_sigaction(sig, NULL, &cur) == 0 &&
				       cur.sa_handler != SIG_DFL);
	} else if (pid > 0) {
		allowed = own_child(pid);
	} else if (pid < -1) {
		allowed = own_child(-pid); /* the group a child leads (timeout) */
	}
	if (!allowed) {
		errno = EPERM;
		return -1;
	}
	return __real_kill(pid, sig);
}

int
__wrap_sigaction(int sig, const struct sigaction *sa, struct sigaction *old)
{
	if (in_input && sa && sig > 0 && sig < NSIG) {
		if (engine_signal(sig))
			return __real_sigaction(sig, NULL, old);
		touched_sig[sig] = true;
	}
	return __real_sigaction(sig, sa, old);
}

sighandler_t
__wrap_signal(int sig, sighandler_t h)
{
	if (in_input && sig > 0 && sig < NSIG) {
		if (engine_signal(sig)) {
			struct sigaction cur;
			return __real_sigaction(sig, NULL, &cur) == 0 ? cur.sa_handler : SIG_ERR;
		}
		touched_sig[sig] = true;
	}
	return __real_signal(sig, h);
}

int
__wrap_close(int fd)
{
	if (protected_fd(fd))
		return 0; /* as if it were closed: the harness keeps it */
	return __real_close(fd);
}

int
__wrap_dup2(int from, int to)
{
	if (protected_fd(to)) {
		errno = EBADF;
		return -1;
	}
	return __real_dup2(from, to);
}

int
__wrap_chdir(const char *path)
{
	(void)path;
	errno = EACCES;
	return -1;
}

/* ---- set-up and clean-up ---- */

static void
harness_init(void)
{
	harness_pid = getpid();
	shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
		      0);
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (shared == MAP_FAILED || devnull < 0)
		harness_abort("set-up failed", errno);
	for (int i = 0; i < 3; i++)
		saved_std[i] = fcntl(i, F_DUPFD_CLOEXEC, 100);
	/* the sanitizers' reports go to the original stderr, unless libFuzzer
	 * (-close_fd_mask=2) already took it aside and left /dev/null here */
	struct stat s2, sn;
	bool err_is_null = fstat(2, &s2) == 0 && fstat(devnull, &sn) == 0 &&
			   S_ISCHR(s2.st_mode) && s2.st_rdev == sn.st_rdev;
	if (!err_is_null && __sanitizer_set_report_fd && saved_std[2] >= 0)
		__sanitizer_set_report_fd((void *)(intptr_t)saved_std[2]);
	/* what is left of an input's processes comes back here to be reaped */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* a write to a pipe nobody reads is EPIPE here, never the fuzzer's death */
	__real_signal(SIGPIPE, SIG_IGN);
	for (int s = 1; s < NSIG; s++)
		(void)__real_sigaction(s, NULL, &saved_sig[s]);
}

/* The fds open now, as a bitmap of the first 1024. */
static void
open_fds(uint64_t map[16])
{
	memset(map, 0, 16 * sizeof map[0]);
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return;
	int self = dirfd(d);
	for (struct dirent *e; (e = readdir(d));) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		if (*end || fd < 0 || fd >= 1024 || fd == self)
			continue;
		map[fd / 64] |= 1ULL << (fd % 64);
	}
	closedir(d);
}

/* Kill what is left of the input's processes and reap them all. */
static void
reap_all(void)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
	for (;;) {
		FILE *f = fopen(path, "re");
		int n = 0, pid;
		while (f && fscanf(f, "%d", &pid) == 1) {
			__real_kill(pid, SIGKILL); /* our own, unreaped: the pid is ours */
			n++;
		}
		if (f)
			fclose(f);
		if (n == 0)
			break;
		int st;
		while (__real_waitpid(-1, &st, 0) > 0 || errno == EINTR)
			;
	}
	int st;
	while (__real_waitpid(-1, &st, WNOHANG) > 0)
		;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_SCRIPT_MAX)
		return -1;
	if (!shared)
		harness_init();
	uint64_t after[16];
	open_fds(protected_fds);
	mode_t mask = umask(022);
	umask(mask);
	for (int i = 0; i < 3; i++)
		dup2(devnull, i);
	atomic_store(&shared->forks, 0);
	memset(touched_sig, 0, sizeof touched_sig);

	static char *const envp[] = {"PATH=/usr/bin:/bin", "HOME=" FUZZ_HOME, "LC_ALL=C",
				     "TERM=dumb", NULL};
	static char *const args[] = {"a1", "a 2", NULL};
	in_input = true;
	struct sh_shell *sh = sh_new(fuzz_host_decider(), envp, "fuzz", 2, (char **)args);
	sh_current = sh;
	sh->cwd = xstrdup(FUZZ_CWD);
	sh->home = xstrdup(FUZZ_HOME);
	var_set(sh, "PWD", FUZZ_CWD, V_EXPORT);
	sh->step_limit = FUZZ_STEPS;
	sh_update_fs(sh, "fuzz");
	(void)exec_text(sh, (const char *)data, size, 1, NULL);
	if (getpid() != harness_pid)
		harness_abort("a forked child returned into the harness", (long)getpid());
	sh->jump = J_NONE;
	sh_run_exit_trap(sh);
	if (getpid() != harness_pid)
		harness_abort("a forked child returned from the EXIT trap", (long)getpid());
	bi_flush();
	reap_all();
	sh_free(sh);
	sh_current = NULL;
	in_input = false;

	fuzz_host_reset();
	open_fds(after);
	for (int fd = 3; fd < 1024; fd++)
		if ((after[fd / 64] & ~protected_fds[fd / 64]) & (1ULL << (fd % 64)))
			close(fd);
	for (int s = 1; s < NSIG; s++)
		if (touched_sig[s])
			(void)__real_sigaction(s, &saved_sig[s], NULL);
	umask(mask);
	for (int i = 0; i < 3; i++)
		dup2(saved_std[i], i);
	return 0;
}
