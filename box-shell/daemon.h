/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon.h — the in-box box-shell daemon (docs/design.md,
 * §5; docs/box-shell.8.md "daemon"), shared by its parts:
 *   main.c            start-up and the main process: the event loop, the
 *                     sessions, the relay of spawns to boxd, signals, timeouts
 *   invocation.c      the invocation child: one fresh interpreter per session
 *   decide_policyd.c  decide.h over box-policyd, one channel per process
 *   host_boxd.c       sh->host_run: a permitted host program in a tool
 *                     sandbox, through the main process and boxd
 *   daemon_seccomp.c  the allow-list
 *   zygote.c          the process that forks the spare invocation children
 *
 * Fds of the daemon (boxd arranges them; nothing else is open):
 *   3  the control channel with boxd (proto/shell.proto, box_proto_shell)
 *   4  the listening SOCK_SEQPACKET socket, RUNTIME/shell.sock
 *   5  its box-policyd channel (policyd's fd 6)
 *
 * The session control socket: the main process makes one SOCK_SEQPACKET
 * socketpair per session before it forks the invocation child; every
 * process of the session inherits the child's end. A process sends on it
 * one packet of one byte (the tag) with exactly one fd (SCM_RIGHTS): one end
 * of a socketpair of its own, to become
 *   SHD_CTL_POLICY  its box-policyd channel (main passes it on as
 *                   PolicyChannelAttach)
 *   SHD_CTL_HOST    its channel to main for host programs (box_proto_shell,
 *                   the process in role box-shell, main in role boxd:
 *                   SpawnRequest/SpawnSignal up, SpawnReply/SpawnExit down;
 *                   main renumbers the spawn ids and relays to boxd)
 *   SHD_CTL_EXIT    three bytes (the tag, the status, said) and one fd:
 *                   the invocation child says it is exiting with that
 *                   status, its output written (main sends ShellExit now,
 *                   before the kernel has torn the process down; main checks
 *                   the sender's pid, SCM_CREDENTIALS, and the fd: a
 *                   script's write to the socket carries no fd). said = 1:
 *                   a session the spare took at the door, whose child
 *                   sends ShellExit itself, right after this packet, on the
 *                   connection it kept (main only closes its own copy)
 * and, from a spare only (before it is a session's):
 *   SHD_CTL_KNOCK   one fd: a connection the spare accepted at the door
 *                   (below) whose ShellOpen did not come within
 *                   SHD_KNOCK_MS; main serves it as one it accepted itself
 *   SHD_CTL_TAKEN   two fds, the connection and the alias's stderr: the
 *                   spare accepted it, read its ShellOpen and is its
 *                   session's invocation child from now on; main watches
 *                   the connection (ShellSignal, hang-up), times the
 *                   command and tells the alias its status, as for any
 * Nothing else passes on it; anything else ends the session. The other
 * way, main sends one byte, SHD_CTL_TIMED_OUT, when [box] command_timeout
 * ends the session: a child that finds it there at exit leaves ShellExit
 * to main (status 124). Nothing else reads the socket.
 *
 * The door: fd 5, shell.sock's listening socket (non-blocking), is shared
 * by main, the zygote and the spare. While a spare waits, the spare answers
 * it (poll, accept4) and main does not watch it: a session then starts with
 * one wake-up (the alias's connect wakes the spare) instead of two (main,
 * then the spare). With no spare waiting, main answers it and forks the
 * session's child itself.
 *
 * Trusts: boxd for ShellInit and the fds; nothing from a session beyond
 * what the protocol tables validated.
 */
#ifndef BOX_SHELL_DAEMON_H
#define BOX_SHELL_DAEMON_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "decide.h"
#include "policy.pb-c.h"
#include "shell.pb-c.h"

#include "daemon_fds.h" /* DAEMON_FD_BOXD, DAEMON_FD_POLICYD, DAEMON_FD_LISTEN */

/* A session process keeps its own fds at or above this (scripts redirect 3-9). */
#define SHD_FD_PRIVATE_MIN 100

#define SHD_CTL_POLICY 'P'
#define SHD_CTL_HOST   'H'
#define SHD_CTL_EXIT   'X'
#define SHD_CTL_KNOCK  'K'
#define SHD_CTL_TAKEN  'T'
#define SHD_CTL_TIMED_OUT 't'

/* Sessions served at once (each: a connection, a control socket, its processes). */
#define SHD_SESSIONS_MAX 512
/* Host channels (processes that ran a host program) of one session, at once. */
#define SHD_HOSTS_PER_SESSION 1024
/* Host programs running at once through this daemon (boxd caps it at 256 too). */
#define SHD_SPAWNS_MAX 256
/* How long an accepted connection may take to send ShellOpen. */
#define SHD_OPEN_TIMEOUT_MS 10000
/*
 * How long a spare that accepted a connection waits for its first packet
 * (the alias sends ShellOpen right after connect) before it hands the
 * connection to main, which waits for it instead (SHD_CTL_KNOCK).
 */
#define SHD_KNOCK_MS 50
/* How long a spare reads a ShellOpen that began to come (its fragments): then closed. */
#define SHD_DOOR_READ_MS 1000
/*
 * A session taken at the door whose alias hangs up before its child's exit
 * word came: SIGHUP this much later, unless the exit word comes (the child
 * tells the alias first, then main; the alias may go in between).
 */
#define SHD_HANGUP_WAIT_MS 100
/* After SIGTERM (timeout) or SIGHUP (hangup): SIGKILL this much later. */
#define SHD_KILL_GRACE_MS 2000

/*
 * The signals main handles (libevent: SIGCHLD, SIGTERM, SIGINT) or ignores
 * (SIGPIPE); every other one is at its default in main (loop_prepare), so a
 * session's child resets exactly these.
 */
static const int shd_main_signals[] = { SIGCHLD, SIGTERM, SIGINT, SIGPIPE };

/* The box as ShellInit gave it; set before the first fork, read-only after. */
struct shd_box {
	const Box__ShellInit *init;
	const char *user;     /* the owner's name (USER), or NULL */
};
extern struct shd_box shd_box;

/* One packet TAG + FD on the control socket CTL. Negative errno. */
int shd_ctl_send_fd(int ctl, char tag, int fd);
/* One packet TAG + FD and FD2 (SHD_CTL_TAKEN). Negative errno. */
int shd_ctl_send_fds(int ctl, char tag, int fd, int fd2);
/*
 * main.c: ShellDenied with WHY (made one line in place) as the last word on
 * an alias's connection FD, what the alias sent dropped before and after
 * (closing its fds: a unix socket closed with unread data resets its peer,
 * whose next read would fail before it reaches that word). FD stays open.
 */
void shd_conn_deny(int fd, char *why);
/*
 * attach.c (`boxctl shell`): a new pty of box-shell's own devpts, sized
 * ROWS x COLS (0: left as is): its master and slave, O_CLOEXEC. Negative errno.
 */
int shd_pty_open(unsigned rows, unsigned cols, int *master, int *slave);
/*
 * The holder of a person's session's terminal, forked from main: the slave
 * its controlling terminal, then the alias's side of the session on CONN
 * (ShellOpen; signals as ShellSignal); the status to END_W when it ends.
 */
_Noreturn void shd_holder_run(int conn, int slave, int end_w, const Box__ShellAttach *a);
/* SHD_CTL_EXIT with STATUS (SAID: the alias has it already) on CTL (its fd: CTL itself). */
int shd_ctl_send_exit(int ctl, int status, bool said);

/* decide_policyd.c: FD >= 0: that channel (ready); -1: attach one over CTL_FD now. */
/*
 * Decisions without a round trip (docs/box-policy.5.md): load the policy box-policyd's
 * PolicyLocal sent, once in main before anything forks, and decide its actions in
 * process from then on (decide_policyd.c), while PAGE_FD's generation page (mapped
 * read-only) says the same generation; when it moves, a process asks for the new
 * policy first. No page (-1): nothing is decided in process. 0, or negative errno
 * with WHY filled in.
 */
int shd_local_load(const Box__PolicyLocal *m, int page_fd, char *why, size_t why_len);
int sh_decider_policyd_new(int fd, int ctl_fd, const char *home, struct sh_decider **out);
void sh_decider_policyd_free(struct sh_decider *d);
/*
 * A rehearsal's own decider (a spare rehearses a command with it, invocation.c,
 * so that the session's first request runs on pages already faulted in): the
 * same code as REAL's, with REAL's home, on a channel of its own whose far end
 * holds a permit for each request before it is sent; nothing reaches
 * box-policyd and REAL is not touched. Free with sh_decider_policyd_free.
 * -EBUSY: REAL holds outcomes (they must go first).
 */
int sh_decider_rehearsal_new(const struct sh_decider *real, struct sh_decider **out);

/* host_boxd.c */
struct sh_shell;
struct sh_host_request;
struct shd_host;
struct shd_host *shd_host_new(int ctl_fd);
int shd_host_run(struct sh_shell *sh, const struct sh_host_request *r);
/* sh_host_check_fn: a [tool.NAME] or exec entry selects it (0), else the 126 message. */
int shd_host_check(const char *name, const char *program_path, int argc, char *const *argv);
/*
 * The [tool.NAME] for PROGRAM_PATH with ARGV (argv[0] the command word):
 * same canonical program, fixed arguments a prefix of argv[1..], the longest
 * such prefix. NULL: none.
 */
const Box__ShellTool *shd_tool_match(const char *program_path, int argc, char *const *argv);
/* PROGRAM_PATH lies under (or is) one of the agent's exec entries. */
bool shd_exec_entry_match(const char *program_path);
/* The daemon's host table (libshell/host.h): the own commands, and host
 * programs as box runs them ([tool] or exec entry) for command -v, which and
 * type ("git is a box tool (tool.git)"). main installs it. */
extern const struct sh_host_ops shd_host_ops;

/* invocation.c: the invocation child's whole life (never returns). */
struct shd_invocation {
	const Box__ShellOpen *open;
	int ctl_fd;   /* the session's control socket (child's end) */
	int cwd_fd;   /* O_PATH|O_DIRECTORY of open->cwd; -1: chdir to open->cwd */
	struct sh_decider *decider; /* attached already (the spare), or NULL: attach now */
	int decider_err;            /* the spare's attach failed: this (negative errno) */
	int root_fd;                /* "/" opened already (the spare), or -1 */
};
_Noreturn void shd_invocation_run(const struct shd_invocation *inv);
/*
 * invocation.c: the spare's life (never returns): its box-policyd channel
 * attached over CTL_FD, a rehearsal, then the door (SHD_FD_LISTEN, which it
 * was forked with): the first connection whose ShellOpen comes at once is
 * its session (SHD_CTL_TAKEN), then shd_invocation_run. main closing
 * CTL_FD first: exit 0.
 */
_Noreturn void shd_spare_run(int ctl_fd);
/* invocation.c: in main before its seccomp filter: what each spare maps ahead (/proc/self/maps). */
void shd_prefault_scan(void);

/* zygote.c: the zygote's requests and reports (zygote.c says what they carry). */
#define SHD_ZYG_FORK   'F'
#define SHD_ZYG_EXITED 'E'
/* The zygote's life, on its socket FD with main (never returns). */
_Noreturn void shd_zygote_run(int fd);

/*
 * main.c: a process forked from main (or the zygote) begins: its own
 * process group, CTL at exactly SHD_FD_PRIVATE_MIN, nothing else of
 * its parent's above fd 2 but ALSO_KEEP (-1: none), main's signal handlers
 * back to the defaults, nothing blocked. Returns CTL's new fd (exits 125).
 */
int shd_child_begin(int ctl, int also_keep);

/* daemon_seccomp.c: the allow-list, built (by the build-time generator and the tests) */
#include <seccomp.h>
int shd_seccomp_build(scmp_filter_ctx *ret);
/* daemon_seccomp_baked.c: the same program compiled in, loaded; and its instructions */
struct sock_filter;
int shd_seccomp(void);
const struct sock_filter *shd_seccomp_baked(unsigned short *n);

#endif
