/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trampoline.h — box-trampoline's internal interface: one file per concern
 * (credentials and namespaces, id maps, PID 1, network, mount view, Landlock,
 * limits, capabilities, pty, seccomp), driven in order by trampoline.c.
 *
 * Every step either succeeds or calls tramp_fail(), which reports
 * `sandbox setup failed at <step>: <reason>` on fd 4 and exits 1. Nothing is
 * skipped in silence.
 * Trusts: the plan, after box_plan_validate(); nothing from the environment
 * except BOX_TEST_* (which can only make a layer look absent).
 */
#ifndef BOX_TRAMPOLINE_H
#define BOX_TRAMPOLINE_H

#include <stdbool.h>
#include <stdnoreturn.h>
#include <sys/types.h>

#include "idmap.h" /* idmap_write_self: this process's own uid_map, setgroups, gid_map */
#include "plan.pb-c.h"

#define TRAMP_PLAN_FD 3
#define TRAMP_STATUS_FD 4
/*
 * SANDBOX_SHELL: the trampoline's fds TRAMP_PASS_FD_FIRST.. (plan.pass_fds of
 * them) become the workload's fds TRAMP_PASS_FD_TARGET.. at exec. The status
 * fd moves to TRAMP_STATUS_FD_MOVED or above first, out of both ranges.
 */
#define TRAMP_PASS_FD_FIRST 5 /* == BOX_PLAN_PASS_FD_FIRST */
#define TRAMP_PASS_FDS_MAX 3  /* == BOX_PLAN_PASS_FDS_MAX */
#define TRAMP_PASS_FD_TARGET 3
#define TRAMP_STATUS_FD_MOVED (TRAMP_PASS_FD_FIRST + TRAMP_PASS_FDS_MAX)

/* Step names (docs/sandbox.md: the bold words, lowercased). */
#define STEP_PLAN "plan"
#define STEP_CREDENTIALS "credentials"
#define STEP_PID1 "pid 1"
#define STEP_NETWORK "network"
#define STEP_MOUNT "mount view"
#define STEP_LANDLOCK "landlock"
#define STEP_LIMITS "limits"
#define STEP_CAPS "capabilities"
#define STEP_ENV "environment"
#define STEP_FDS "file descriptors"
#define STEP_TERMINAL "terminal"
#define STEP_SECCOMP "seccomp"
#define STEP_SUPERVISE "supervisor"
#define STEP_EXEC "exec"
#define STEP_GATE "start gate"

struct tramp {
	const Box__Plan *plan;
	int status_fd;	   /* fd 4 until closed, else -1 */
	pid_t boxd_pid;	   /* getppid() at start */
	int landlock_abi;  /* 0: absent (or made to look absent) */
	bool seccomp_ok;   /* the kernel offers seccomp filters */
	bool absent_cgroup_v1;
	int parent_pipe;   /* PID 1: read end, EOF when the outer trampoline dies */
	int pty_slave;	   /* PID 1: the workload's terminal, or -1 */
	bool owner_is_root;
	unsigned n_pass;   /* fds TRAMP_PASS_FD_FIRST.. passed through (plan.pass_fds) */
	int shell_alias_fd; /* PID 1: O_PATH of the alias mount.c bound over the shells, or -1 */
	/* memfd.c: the root helper's socket, its pid, and PID 1's gate (read, write end), or -1 */
	int memfd_sock;
	pid_t memfd_helper;
	int memfd_gate[2];
	int start_gate;	   /* plan.start_gate: fd 3, kept until boxd's "go"; else -1 */
	/* plan.supervise: the supervisor's box-policyd channel (fd 5, CLOEXEC), else -1 */
	int supervise_fd;
	/* fd 3 after the plan (and the start gate): PID 1's kernel refusal reports, else -1 */
	int report_fd;
	/* plan.snapshot_root: the box's overlay (a detached mount, CLOEXEC), else -1 */
	int snapshot_fd;
};

/* Report a setup failure on fd 4 (stderr if fd 4 is gone) and _exit(1). */
noreturn void tramp_fail(struct tramp *t, const char *step, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Send one status message (with an optional fd) on fd 4. Negative errno. */
int status_send_fd(int sock, const void *msg, size_t len, int fd);

/* ns.c: layer probes, cgroup join, credential switch, unshare, id maps. */
void layers_probe(struct tramp *t);
void cgroups_join(struct tramp *t);
void credentials_switch(struct tramp *t);
void namespaces_enter(struct tramp *t);

/* trampoline.c: close this process's copies of the passed fds (outer trampoline, PID 1). */
void passed_fds_close(struct tramp *t);

/* pid1.c: fork PID 1; the caller returns only in PID 1. */
void pid1_fork(struct tramp *t);
/* pid1.c: PID 1 checks the outer trampoline is still there. */
void pid1_parent_check(struct tramp *t, const char *step);
/*
 * pid1.c: in PID 1, before the start gate: the seccomp programs built (the CPU
 * they take is not on the way from "go" to the exec). pid1_run does it when not.
 */
void pid1_prepare(struct tramp *t);
/* pid1.c: fork the workload, close fd 4, reap and forward signals; never returns. */
noreturn void pid1_run(struct tramp *t, char **envp);

/*
 * memfd.c: vm.memfd_noexec = 2 for a box not owned by root, by a root
 * trampoline. prepare: before the credential switch, fork the root helper
 * (nothing to do for a root owner, a non-root trampoline or a kernel without
 * the sysctl). child: PID 1 drops the outer trampoline's ends. handoff: the
 * outer trampoline has the helper set it for PID 1's namespace, then opens
 * the gate (a failure fails the start). gate: PID 1 waits for that before
 * it starts the workload.
 */
void memfd_noexec_prepare(struct tramp *t);
void memfd_noexec_child(struct tramp *t);
void memfd_noexec_handoff(struct tramp *t, pid_t pid1);
void memfd_noexec_gate(struct tramp *t);

/* net.c */
void network_setup(struct tramp *t);
/* mount.c */
void mount_view_build(struct tramp *t);
/* landlock.c */
void landlock_apply(struct tramp *t);
/* A rule at PATH on a mount with statvfs flags MNT_FLAGS may grant TRUNCATE, to no effect. */
bool landlock_ineffective_truncate(const char *path, unsigned long mnt_flags);
/* rlimit.c */
void limits_apply(struct tramp *t);
/* caps.c */
void capabilities_drop(struct tramp *t, bool pid1);
/* pty.c */
void terminal_setup(struct tramp *t);
/* Workload side: make the slave the controlling terminal and the fds in mask FDS (bits 0-2). */
int terminal_attach(int slave, uint32_t fds);
/* seccomp.c: box's refusing program (libseccomp's, then personality's) into REFUSE. */
struct kprog;
int seccomp_programs_build(struct kprog *refuse, char *why, size_t why_len);
/* refuse_baked.c: the same program, built at build time (gen/refuse_gen.c). */
int seccomp_programs_baked(struct kprog *refuse);

#endif
