/* SPDX-License-Identifier: Apache-2.0 */
/*
 * boxd.h — boxd's internal interface, one file per concern:
 *
 *   boxd.c     main: service mode (--listen PATH or a socket-activated fd) and
 *              embedded mode (--embedded, client channel on fd 3), listening,
 *              signals, the hooks box.c reports through
 *   client.c   clients: accept, SO_PEERCRED, the peer's PID namespace,
 *              dispatch of RunRequest / RunControl / Ps / Stop / Log, replies
 *   box.c      one box's life: checking → policyd → gateway → shell → starting →
 *              running → stopping → finishing → gone, every step an event of
 *              boxd's loop
 *   recheck.c  boxd's side of box-recheck: every path of a request re-checked
 *              as the box owner, by a helper with the owner's uid/gid/groups
 *   runtime.c  BASE/ID runtime dir, mask objects, state dir lock
 *   plan.c     BoxSpec → Plan (view, environment, limits): the agent's,
 *              box-shell's, a tool's; and the disclosure
 *   child.c    the one tracker of every process boxd starts: one reaper,
 *              one kill path (child.h)
 *   daemon.c   the daemon table, daemon_spawn, a per-box daemon's lifecycle
 *   workload.c a tool's or an MCP server's sandbox, spawn to reap
 *   spawn.c    fork+exec of box-trampoline with fds 0-4 (and passed fds 5..) in
 *              place; its status messages on fd 4
 *   clientd.c  service mode: each client connection handed to its own
 *              box-clientd (decodes, validates, re-encodes for root)
 *   policyd.c  box-policyd: start (PolicyInit/PolicyReady), watch, rotate
 *              decisions.jsonl, stop
 *   gateway.c  box-gateway: start (GatewayInit/GatewayReady, the CA files),
 *              listeners, watch, stop
 *   shell.c    box-shell: start through the trampoline (ShellInit/ShellReady),
 *              watch, stop; its SpawnRequests: re-check (toolmatch.c), a
 *              tool sandbox each, SpawnReply / SpawnExit / SpawnSignal
 *   toolmatch.c  a SpawnRequest against the box's own [tool.NAME] tables
 *              and exec entries (pure: unit-tested alone)
 *   cgroup.c   pids_max / memory_max (docs/sandbox.md)
 *
 * Trusts: the root part handles only messages that box_ipc_decode() has
 * decoded and validated (proto/validate.c) — in service mode decoded from
 * box-clientd's canonical re-encoding, never a client's bytes — and, from
 * box-recheck, a validated RecheckReply; every path a user names is opened by a
 * process running as that user, never by root.
 */
#ifndef BOXD_BOXD_H
#define BOXD_BOXD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <event2/event.h>

#include "boxd.pb-c.h"
#include "child.h"
#include "daemon.h"
#include "daemon_fds.h"
#include "workload.h"
#include "ipc_event.h"
#include "plan.pb-c.h"
#include "proto/validate.h" /* BOX_TIMELINE_MAX */
#include "shell.pb-c.h"
#include "proto/recheck_shared.h"

/* A sanitizer build: the helpers boxd starts get ASAN_OPTIONS=detect_leaks=0. */
#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
#define BOXD_ASAN 1
#else
#define BOXD_ASAN 0
#endif

#define BOXD_ID_LEN 12
#define BOXD_KILL_GRACE_MS 2000       /* SIGTERM → SIGKILL (stop, timeout) */
#define BOXD_RECHECK_TIMEOUT_MS 20000 /* box-recheck: spawn → RecheckReply */
#define BOXD_CLIENTS_MAX 256
#define BOXD_FOREIGN_LOG_MAX 32 /* refusals of other PID namespaces logged */
#define BOXD_BOXES_MAX 1024
#define BOXD_GROUPS_MAX 256
#define BOXD_POLICYD_READY_TIMEOUT_MS 20000 /* PolicyInit → PolicyReady */
/* fd 3 closed → policyd gone, else SIGKILL: its peers' ends first (common/daemon_fds.h) */
#define BOXD_POLICYD_EXIT_WAIT_MS (POLICYD_PEERS_END_WAIT_MS + 3000)
#define BOXD_CGROUP_RMDIR_EVERY_MS 10       /* a busy cgroup: the next rmdir after */
#define BOXD_CGROUP_RMDIR_TRIES 100         /* ... this many times (1 s), then left */
#define BOXD_DECISIONS_ROTATE_BYTES (64ull << 20)
#define BOXD_GATEWAY_READY_TIMEOUT_MS 20000 /* GatewayInit → GatewayReady */
#define BOXD_GATEWAY_EXIT_WAIT_MS 3000      /* fd 3 closed → gateway gone, else SIGKILL */
#define BOXD_GATEWAY_DEFAULT_PORT 3128      /* docs/box.ini.5.md [gateway] port */
#define BOXD_OTLP_PORT 4318                 /* docs/box.ini.5.md [telemetry.NAME]: the agent's receiver */
#define BOXD_SHELL_READY_TIMEOUT_MS 20000   /* box-shell spawned → ShellReady */
#define BOXD_SHELL_EXIT_WAIT_MS 3000        /* fd 3 closed → box-shell gone, else SIGKILL */
#define BOXD_SPAWNS_MAX 256                 /* live tool sandboxes per box */
#define BOXD_ATTACHES_MAX 16                /* `boxctl shell` requests in flight per box */
#define BOXD_MCPD_READY_TIMEOUT_MS 20000    /* McpInit → McpReady */
#define BOXD_MCPD_EXIT_WAIT_MS 3000         /* fd 3 closed → box-mcpd gone, else SIGKILL */
#define BOXD_MCP_SERVERS_MAX 256            /* live MCP server sandboxes per box */
/* box-policyd reads on past boxd's wait for each peer, so that what a killed peer sent is read */
_Static_assert(POLICYD_PEERS_END_WAIT_MS > BOXD_SHELL_EXIT_WAIT_MS &&
		       POLICYD_PEERS_END_WAIT_MS > BOXD_GATEWAY_EXIT_WAIT_MS &&
		       POLICYD_PEERS_END_WAIT_MS > BOXD_MCPD_EXIT_WAIT_MS,
	       "box-policyd would end before boxd gives up on a peer");

struct box;
struct client;
struct boxd;

/*
 * What box.c reports to the rest of boxd (set by boxd.c): box.c never calls
 * into boxd.c or client.c itself.
 */
struct box_hooks {
	/* Send a message (with fds) to a client; -ENOTCONN without one. */
	int (*client_send)(struct client *c, uint32_t type, uint64_t rid,
			   const ProtobufCMessage *m, const int *fds, unsigned n_fds);
	/*
	 * A box ended and its client was told: an embedded boxd exits, and so
	 * does a service boxd told to stop once its last box is gone.
	 */
	void (*box_gone)(struct boxd *d);
	/* Listen on an embedded box's BASE/ID/boxd.sock (ps, stop). */
	int (*listen_embedded)(struct boxd *d, const char *path);
};

struct boxd {
	const struct box_hooks *hooks;
	struct event_base *base;
	bool embedded;
	bool root;              /* euid 0 */
	char *self_dir;         /* directory of /proc/self/exe */
	char *runtime_base;     /* BASE (docs/boxctl.1.md) */
	char *service_path;     /* --listen PATH (unlinked at exit), or NULL */
	int listen_fd;
	struct event *listen_ev;
	int sig_fd;             /* signalfd of the blocked signals (boxd.c) */
	struct event *sig_ev;
	struct event *reap_ev;  /* SIGCHLD: reap after this turn's other events */
	struct child *children; /* every process boxd started and still tracks (child.c) */
	struct box *boxes;      /* list */
	unsigned n_boxes;
	struct client *clients; /* list */
	unsigned n_clients;
	bool quitting;
	int self_pidns_fd;      /* /proc/self/ns/pid, for peer_pidns_same() */
	bool peer_proc_only;    /* BOX_TEST_NO_PEERPIDFD: the /proc fallback only */
	unsigned n_foreign_refused;
};

struct client {
	struct boxd *d;
	struct client *next;
	struct box_ipc_event *ipc;
	struct ucred cred;
	struct box *box;        /* the box this client runs (attached) */
	bool embedded_channel;  /* fd 3 of an embedded boxd */
	bool foreign;           /* in another PID namespace: refused (boxd.c) */
};

enum box_state {
	BOX_CHECKING,       /* box-recheck runs (RecheckReply awaited) */
	/*
	 * Its daemons spawned together, the agent's sandbox built behind its start
	 * gate; the ready messages of the daemons that gate the agent awaited
	 */
	BOX_DAEMONS,
	BOX_STARTING,       /* the gate opened: the agent's exec (fd 4 EOF) awaited */
	BOX_RUNNING,
	BOX_STOPPING,
	BOX_FINISHING,      /* torn down: policyd's exit, then the cgroups' removal awaited */
	BOX_GONE,
};

struct box_owner_id {
	uid_t uid;
	gid_t gid;
	gid_t groups[BOXD_GROUPS_MAX];
	size_t n_groups;
	char *name;
	char *home;
	char *shell;
};

/* What box-recheck found (recheck.c). */
struct recheck_result {
	char *argv0;              /* the agent's program as resolved (not canonical) */
	char *program;            /* canonical */
	char **interpreters;      /* canonical #! chain, outermost first */
	size_t n_interpreters;
	/* canonical ELF loaders (PT_INTERP) of the program, its #! chain and exec entries, and box's own */
	char **loaders;
	size_t n_loaders;
	char **deny_dirs;         /* deny entries (and masked files) that are directories */
	size_t n_deny_dirs;
	/* docs/box.ini.5.md masks inside broader grants (credential stores, box's own dirs), as found */
	char **masks;
	bool *mask_is_dir;
	char **mask_via;          /* NULL, or the path behind a symlink each mask is for */
	size_t n_masks;
	/* the socket scan of the grants: up to RECHECK_SOCKETS_SHOWN paths, the total, a cut */
	char **sockets;
	size_t n_sockets;
	size_t sockets_total;
	char *scan_cut;           /* NULL, or why the scan stopped ("entries", "time") */
	char **tool_names;        /* [tool.NAME] tables box-recheck resolved ... */
	char **tool_programs;     /* ... and the canonical program of each */
	size_t n_tools;
	char **mcp_names;         /* stdio [mcp.NAME] servers box-recheck resolved ... */
	char **mcp_programs;      /* ... and the canonical program of each */
	size_t n_mcp;
	char *workspace;          /* the agent's cwd */
	char *state_dir;
	int state_dirfd;          /* O_DIRECTORY, opened as the owner */
	int lock_fd;              /* STATE/lock, opened as the owner */
	int log_fd;               /* STATE/agent.log (detach), or -1 */
	int policy_dirfd;         /* STATE/policy/ (O_PATH), created 0700 as the owner */
	int decisions_fd;         /* STATE/decisions.jsonl (O_APPEND), opened as the owner */
	int ca_fd;                /* STATE/ca.pem (O_WRONLY|O_CREAT|O_NOFOLLOW), opened as the owner */
	/*
	 * [telemetry.NAME] kind = file targets, in the spec's order: how many the
	 * reply must carry (set before it is parsed), and the files (O_APPEND,
	 * regular, opened as the owner) once taken.
	 */
	unsigned telemetry_want;
	int telemetry_fds[BOX_TELEMETRY_FILES_MAX];
	size_t n_telemetry_fds;
	Box__Problem **problems;  /* refusals (owned) */
	size_t n_problems;
};

/* An [egress] binding's placeholder, in `variable` of every contained sandbox's environment. */
struct gateway_placeholder {
	char *variable;
	char *value;
};

struct box {
	struct boxd *d;
	struct box *next;
	char id[BOXD_ID_LEN + 1];
	char *name;
	enum box_state state;
	uid_t caller_uid;
	struct box_owner_id owner;
	struct child agent;       /* the agent's outer trampoline (child.h's tracker) */
	struct timespec started;  /* CLOCK_MONOTONIC */
	bool detach, quiet;
	bool dry_run;             /* boxctl run --dry-run: everything but the agent */
	bool timings;             /* boxctl run --timings: the timeline goes in RunReply */
	struct box_step {         /* the start's timeline (box_mark), sent when timings */
		const char *step; /* a string literal */
		uint64_t usec;    /* CLOCK_MONOTONIC */
	} timeline[BOX_TIMELINE_MAX];
	size_t n_timeline;
	uint32_t stdio_tty;       /* RunRequest.stdio_tty: the caller's fds that are terminals */
	uint64_t request_id;      /* of the RunRequest, echoed in replies */
	struct client *client;    /* attached client, or NULL */

	ProtobufCMessage *req_msg; /* the validated RunRequest (owned) */
	Box__RunRequest *req;
	Box__BoxSpec *spec;       /* req->spec */
	char **extra_args;
	size_t n_extra_args;
	struct recheck_result rc;

	char *runtime_dir;        /* BASE/ID */
	int stdio[3];             /* boxctl's pipe ends (or /dev/null, agent.log) */
	struct status_watch status; /* the agent's trampoline's fd 4, until EOF */
	char *setup_error;        /* "sandbox setup failed at STEP: REASON" */
	bool exec_failed;

	char *cgroups[2];
	size_t n_cgroups;
	bool nproc_fallback;      /* pids_max enforced by RLIMIT_NPROC */
	uint32_t policy_rules;    /* rules box-policyd loaded (its PolicyReady), for the disclosure */
	/* kernel.c: the kinds of kernel refusal reported (sandbox, syscall, errno hashed), capped */
	uint64_t kernel_kinds[256];
	unsigned n_kernel_kinds;
	unsigned long kernel_over; /* reports of kinds past the cap, dropped */

	int pty_master;           /* from fd 4 until RunReply OK hands it to boxctl */
	char **disclosure;        /* start-up disclosure lines */
	size_t n_disclosure;

	struct event *timeout_ev; /* [box] timeout */
	struct event *kill_ev;    /* SIGKILL after the grace period */
	bool timed_out;
	const char *stopped;      /* boxd stopped it on its own: why (RunExit.stopped), static */
	bool reaped;              /* the agent's trampoline was: wait_status is the box's */
	int wait_status;
	struct event *reap_delay_ev; /* BOX_TEST_AGENT_REAP_DELAY_MS (box.c) */
	int reap_delay_status;
	bool oom_killed;          /* read when reaped, before the cgroups go */

	/* The end (BOX_FINISHING): what box_finished() sends once the teardown is done. */
	void (*on_finished)(struct box *b);
	Box__ReplyStatus end_status; /* start failed: RunReply status ... */
	bool has_end_error;
	char end_error[1200];     /* ... and its error text */
	struct event *cgroup_timer; /* the next rmdir of a busy cgroup */
	unsigned cgroup_tries;

	char *sock_path;          /* embedded: BASE/ID/boxd.sock */
	bool locked;              /* the run lock is ours (runtime_lock) */

	/*
	 * Each helper's and daemon's own state, behind its module's handle
	 * (made with the box, freed with it): box-recheck (recheck.c),
	 * box-policyd (policyd.c), box-gateway (gateway.c), box-shell and its
	 * tools (shell.c), box-mcpd and its MCP servers (mcpd.c).
	 */
	/* [box] snapshot = workspace (snapshot.c): the overlay's detached mount, its root */
	int snapshot_fd;
	char *snapshot_root;
	int snapshot_upper_fd;     /* O_PATH of STATE/snapshot/upper, for snapshot_max */
	struct event *snapshot_ev; /* snapshot_max: the periodic size check */

	struct recheck *recheck;
	struct policyd *policyd;
	struct gateway *gateway;
	struct shell *shell;
	struct mcpd *mcpd;
	/* Each started daemon's lifecycle (daemon.c), in daemon_table's order; NULL: none. */
	struct box_daemon *daemons[DAEMON__N];

	/* What the sandboxes are made of (plan.c), shared by the modules that start them */
	int ca_runtime_fd;        /* RUNTIME/ca.pem (boxd's, 0644), until the box is freed */
	char spawn_failure[600];  /* the first confined daemon's failed spawn (daemon.c), or "" */
	bool gateway_serving;     /* box-gateway spawned (it gates the agent): plans route through it */
	struct gateway_placeholder *placeholders;
	size_t n_placeholders;
	uint32_t agent_listener_id; /* the agent's listener at the gateway, or 0 */
	/* The parallel start (box.c): bit N, daemon_table[N] sent its ready message */
	unsigned daemons_ready;
	int gate_fd;              /* the agent's start gate (its trampoline's fd 3) until "go", or -1 */
	int supervise_fd;         /* [agent] supervise: PID 1's policyd channel, attached at "go", or -1 */
	bool reply_deferred;      /* --timings: RunReply waits for the daemons still starting */
	bool agent_started;       /* the agent exec'd (box_started) */
	uint32_t agent_otlp_listener_id; /* the agent's OTLP receiver listener, or 0 */
	char *alias_exe;          /* box-alias beside boxd: copied to RUNTIME/bin */
	int shell_listen_fd;      /* RUNTIME/shell.sock (listening): box-shell's fd 5 until spawned */
	int mcp_listen_fd;        /* RUNTIME/mcp.sock (listening): box-mcpd's fd 5 until spawned */
	Box__Plan *agent_plan;    /* built before box-shell starts (its view), spawned after ready */
	unsigned n_masks_made;    /* mask objects made in RUNTIME/masks: the next one's index */
	Box__Plan **tool_plans;   /* per spec->tools[i], made at its first spawn (masks once) */
	Box__Plan *exec_plan;     /* the agent's exec entries' tool sandbox, likewise (host python3 masked) */
	Box__Plan *python_plan;   /* the host python3's: the agent's grants, supervised (SpawnRequest.python) */
	char *host_python;        /* no [tool.python3]: realpath of /usr/bin/python3 (ShellInit), or NULL */
	char *host_python_file;   /* realpath of /usr/bin/python3 whatever the tables, or NULL (none) */
	char **tool_prog;         /* parallel to spec->tools: rc.tool_programs' (not owned) */
	Box__Plan **mcp_plans;    /* per spec->mcp[i], made at its first start (masks once) */
};

/* ---- client.c ---- */
/* Send a message (with fds) to a client; logs a failure. */
int client_send(struct client *c, uint32_t type, uint64_t rid, const ProtobufCMessage *m,
		const int *fds, unsigned n_fds);
/* Take a connected socket (fd, owned) as a client; `channel`: an embedded boxd's fd 3. */
struct client *client_add(struct boxd *d, int fd, bool channel);
void client_close(struct client *c);
/* The listening socket's event: accept one client. */
void on_accept(evutil_socket_t lfd, short what, void *arg);
/* An embedded boxd with no box left leaves its loop. */
void boxd_maybe_exit_embedded(struct boxd *d);

/* ---- box.c ---- */
/* Handle a RunRequest: takes the message and fds (stdio) on success or failure. */
void box_run(struct boxd *d, struct client *c, uint64_t rid, Box__RunRequest *req, int *fds,
	     unsigned n_fds);
void box_control(struct box *b, const Box__RunControl *m);
/* SIGTERM the agent, SIGKILL after the grace period (stop, timeout). */
void box_stop(struct box *b);
/* SIGKILL everything now (client gone). */
void box_kill(struct box *b);
/* The agent's trampoline was reaped (its wait status is the box's). */
bool box_agent_reaped(const struct box *b);
/*
 * The agent's PID 1 is gone (its report channel closed, kernel.c): its sandbox is being
 * torn down and its trampoline is reaped in a moment. box-shell and (without an otlp
 * target) box-gateway, when ready, end now, beside that teardown.
 */
void box_agent_pid1_gone(struct box *b);
/* The agent has exec'd (fd 4 EOF): a daemon's start that fails now stops a running box. */
bool box_agent_started(const struct box *b);
/* The attached client went away (a start not detached is abandoned). */
void box_client_gone(struct box *b);
/* The start's events: box-recheck answered (r < 0: it could not), box-policyd is ready. */
/* A step of the start ended now (STEP: a string literal); kept for RunReply.timeline. */
void box_mark(struct box *b, const char *step);
void box_recheck_done(struct box *b, int r);
void box_policyd_ready(struct box *b, int r, const char *err);
/* box-gateway is ready (r 0: the CA files are written), or why not. */
void box_gateway_ready(struct box *b, int r, const char *err);
/* The end's event: box-gateway has exited (or was killed). */
void box_gateway_finished(struct box *b);
/* box-shell is ready (r 0), or why not (a refusal: its ShellReady ok = false). */
void box_shell_ready(struct box *b, int r, const char *err);
/* The end's event: box-shell has exited (or was killed). */
void box_shell_finished(struct box *b);
/* The end's events: box-policyd has exited (or was killed), the cgroups are gone. */
void box_policyd_finished(struct box *b);
void box_cgroups_removed(struct box *b);
void box_free(struct box *b);
uint64_t box_uptime_s(const struct box *b);

/* box-mcpd is ready (r 0), or why not (a refusal: its McpReady ok = false). */
void box_mcpd_ready(struct box *b, int r, const char *err);
/* The end's event: box-mcpd has exited (or was killed). */
void box_mcpd_finished(struct box *b);

/* ---- mcpd.c ---- */
/* Spawn box-mcpd, prepare STATE/mcp/pins.jsonl, send McpInit; McpReady follows as an event. */
int mcpd_start(struct boxd *d, struct box *b, char **err);
/* The box ends: servers killed, channel closed; true while its exit is awaited. */
bool mcpd_finish(struct box *b);
/* The module's handle (b->mcpd), made with the box; freeing it kills what still runs (servers too). */
int mcpd_new(struct box *b);
void mcpd_free(struct box *b);

/* ---- recheck.c ---- */
/*
 * Start box-recheck for the box (owner resolved, id chosen): it re-checks
 * every path of the spec as the owner, creates the state dir and opens its
 * files. Its reply fills b->rc and calls box_recheck_done(). <0: not started.
 */
int recheck_start(struct box *b, const char *exe, const char *state_dir);
/* Stop waiting for it (killed when still running); idempotent. */
void recheck_stop(struct box *b);
/* The spare box-recheck, spawned ahead of the next start (boxd's start); stopped at its end. */
void recheck_spare_start(struct boxd *d);
void recheck_spare_stop(void);
/* The module's handle (b->recheck), made with the box and freed with it. */
int recheck_new(struct box *b);
void recheck_free(struct box *b);
void recheck_result_clear(struct recheck_result *res);

/* ---- spares.c ---- */
/*
 * The next spare of a service boxd (box-recheck's, box-clientd's, the daemon
 * pair's): SPAWN(d) runs MS after spare_timer_arm, once the start (or client)
 * that took the last one no longer shares the CPU with it. Nothing in an
 * embedded boxd (one box only). The timer is made once and kept until
 * spare_timer_stop.
 */
struct spare_timer {
	struct event *ev;
	struct boxd *d;
	void (*spawn)(struct boxd *d);
};
void spare_timer_arm(struct spare_timer *t, struct boxd *d, void (*spawn)(struct boxd *d),
		     unsigned ms);
void spare_timer_stop(struct spare_timer *t);
/*
 * A service boxd's spare box-policyd and box-gateway: a connected pair spawned
 * ahead (confined, exec'd, waiting for its init), taken by the next box whose
 * spawns they would equal. Started at boxd's start, again after each take.
 */
void spares_start(struct boxd *d);
void spares_stop(void);
/* A spare given to a box: its pid (now the box's to track), boxd's end of its fd 3, its exec pipe. */
struct spare_taken {
	pid_t pid;
	int ctl;
	int exec_fd; /* -1: its exec is known to have succeeded */
};
/*
 * The pair's box-policyd for B, when the pair fits B and is alive: true with
 * *t and PEER_FD[] (boxd's ends of its box-shell and box-mcpd channels; its
 * box-gateway channel is the pair's gateway's, which B takes next).
 */
bool spares_take_policyd(struct box *b, struct spare_taken *t, int peer_fd[DAEMON__N]);
/* The pair's box-gateway, for the box that took its box-policyd (in the same loop turn). */
bool spares_take_gateway(struct box *b, struct spare_taken *t);
/* B is freed: a gateway it reserved and never took is killed. */
void spares_box_gone(struct box *b);

/* ---- runtime.c ---- */
/* The runtime base for this boxd (verified or created 0700, owner and mode checked). */
int runtime_base_prepare(bool service, char **ret);
/* Create BASE/ID with tmp, var_tmp, dev_shm, home, masks (owned by the owner). */
int runtime_dir_create(const struct boxd *d, struct box *b);
/* Create one mask object for `path` (a dir when is_dir); returns its path. */
int runtime_mask_create(const struct boxd *d, struct box *b, unsigned idx, bool is_dir,
			char **ret);
/*
 * In BASE/ID (dir, still boxd's): bin/ (box-alias from b->alias_exe and the
 * relative symlinks sh bash zsh python3 python) and shell.sock, bound and
 * listening (b->shell_listen_fd), the owner's when chown_owner, 0600.
 * Called by runtime_dir_create when b->alias_exe is set.
 */
int runtime_shell_files(struct box *b, int dir, bool chown_owner);
/* Remove BASE/ID and everything in it (the owner's files as the owner). */
void runtime_dir_remove(const struct boxd *d, struct box *b);
/* Take the run lock; -EBUSY with *running_id (13 bytes) when held. */
int runtime_lock(struct box *b, char running_id[BOXD_ID_LEN + 1]);
void runtime_unlock(struct box *b);
/* 12 lowercase hex digits from getrandom. */
int runtime_new_id(char id[BOXD_ID_LEN + 1]);

/* ---- plan.c ---- */
/*
 * Build the agent's plan. On a refusal returns -EINVAL with problems added
 * to b->rc; other negative errno: the box cannot start (*err set).
 */
/*
 * ownpaths.c: box's own directories (a grant inside one is refused; inside a
 * grant they are masked), the places of sockets no grant may contain, and
 * the owner's credential stores (masked inside a broader grant);
 * own_paths_maskable() is proto/recheck_shared.c's.
 */
struct own_path {
	char *path;
	const char *what;
};
struct own_paths {
	struct own_path own[6], sockets[8], stores[8];
	size_t n_own, n_sockets, n_stores;
};
int own_paths_build(const struct box *b, const char *state_dir, struct own_paths *o);
void own_paths_clear(struct own_paths *o);

int plan_build(struct boxd *d, struct box *b, Box__Plan **ret, char **err);
void plan_free(Box__Plan *p);

/* ---- snapshot.c ---- */
/* [box] snapshot: the overlay made (b->snapshot_fd), or negative errno with *err. */
int snapshot_start(struct box *b, char **err);
/*
 * box-shell's SANDBOX_SHELL plan from the agent's (its view, Landlock
 * rights and shared runtime dirs; no /run/box, no gateway): argv and
 * workload_bin = exe (then LEVEL_ARG, daemon_stderr's, unless NULL), pass_fds 3.
 * *err on failure.
 */
int plan_shell(const struct box *b, const Box__Plan *agent, const char *exe,
	       const char *level_arg, Box__Plan **ret, char **err);
/* The agent's plan gets /run/box/bin, /run/box/shell.sock, the alias over the shells. */
int plan_agent_shell(const struct box *b, Box__Plan *agent);
/*
 * A tool sandbox for a re-checked SpawnRequest: tool_idx into spec->tools,
 * or -1 for an agent exec entry. The base plan per table is made once
 * (b->tool_plans, b->exec_plan: masks); each spawn gets a copy with its
 * argv (program_path first; the request's argv[0] as the name the program
 * sees), environment (none with clear_env) and workspace. *err on failure.
 */
int plan_tool(struct boxd *d, struct box *b, int tool_idx, const Box__SpawnRequest *rq,
	      Box__Plan **ret, char **err);
/* Does the box have a stdio [mcp] server (then box-mcpd serves it)? */
bool mcpd_wanted(const Box__BoxSpec *s);
/* The canonical program of spec->mcp[i] (box-recheck's "mcp.NAME" record), or NULL. */
const char *mcpd_program(const struct box *b, size_t i);
/*
 * An MCP server's sandbox (SANDBOX_TOOL): spec->mcp[mcp_idx]'s grants, env
 * and network, its canonical program and configured arguments; no
 * /run/box/bin, no alias sockets; CA and gateway only when contained.
 */
int plan_mcp_server(struct boxd *d, struct box *b, size_t mcp_idx, Box__Plan **ret, char **err);
/* spec->mcp[i]'s cwd: the agent's workspace when its grants hold it, else the owner's home. */
const char *plan_mcp_cwd(const struct box *b, size_t mcp_idx);
/* The agent's PATH ([agent.env] PATH, else the default), without /run/box/bin. */
const char *plan_agent_path(const struct box *b);
/* The agent's environment as the agent gets it (a `boxctl shell` session starts from it):
 * *ENV, *N allocated, freed with plan_env_free. */
int plan_agent_env(struct box *b, char ***env, size_t *n);
void plan_env_free(char **env, size_t n);
/* The start-up disclosure lines (no "box: " prefix). */
int plan_disclosure(const struct box *b, const Box__Plan *p, char ***lines, size_t *n);
/* The owner's credential store (".aws") that PATH is or lies inside, or NULL. */
const char *plan_credential_store_of(const struct box *b, const char *path);

/* ---- spawn.c ---- */
/* Find box-trampoline: next to boxd, else BOX_LIBEXECDIR. */
int spawn_find_helper(const struct boxd *d, const char *name, char **ret);
/* "SELF_DIR/NAME or LIBEXECDIR/NAME" into buf: where spawn_find_helper looked. */
const char *spawn_helper_places(const struct boxd *d, const char *name, char *buf, size_t size);
/*
 * fork+exec the trampoline; sends the plan; returns the status socket and,
 * for a plan with start_gate, *gate_fd: the plan's socket, on which one
 * packet "go" lets the workload start (its close ends the start).
 * SUPERVISE_FD (the caller's; -1: none) becomes the trampoline's fd 5 (plan.supervise).
 */
int spawn_trampoline(struct boxd *d, struct box *b, const Box__Plan *plan, int supervise_fd,
		     pid_t *pid, int *status_fd, int *gate_fd);
/*
 * The same with the workload's stdio (3 fds) and up to 3 fds more at the
 * trampoline's fds 5.. (a SANDBOX_SHELL plan's pass_fds). The caller keeps its fds.
 */
int spawn_trampoline_fds(struct boxd *d, const Box__Plan *plan, const int stdio[3],
			 const int *extra, unsigned n_extra, pid_t *pid, int *status_fd,
			 const struct box *b, const char *label, int snap_fd);

/* ---- kernel.c ---- */
/*
 * Watch FD (taken), boxd's end of a sandbox's plan socket, for PID 1's kernel
 * refusal reports: each to STATE/kernel.jsonl and, through box-policyd, to the
 * telemetry targets that include `kernel`. SANDBOX names it ("agent",
 * "tool.NAME", "mcp.NAME", "box-shell"). Negative errno (the fd closed).
 */
int kernel_watch_start(const struct box *b, int fd, const char *sandbox);
/* The same for the agent's PID 1 ("agent"); its end also calls box_agent_pid1_gone. */
int kernel_watch_agent(const struct box *b, int fd);
/* The box of ID that is not gone, or NULL. */
struct box *box_find_id(struct boxd *d, const char *id);

/* ---- clientd.c ---- */
/* Service mode: box-clientd and a user to run it as exist (checked at start-up). */
int client_child_check(const struct boxd *d);
/*
 * Service mode: hand the accepted client socket *fd (SO_PEERCRED and the
 * PID namespace already taken from it) to a new box-clientd and replace *fd
 * by boxd's end of the socketpair with it. Embedded: nothing (0). Negative
 * errno (logged): *fd is still the caller's.
 */
int client_child_start(struct boxd *d, const struct ucred *cred, int *fd);
/* Service mode: the spare box-clientd, spawned ahead of the next client; stopped at boxd's end. */
void client_spare_start(struct boxd *d);
void client_spare_stop(void);

/* ---- policyd.c ---- */
/*
 * Start box-policyd for a box (the run lock held, b->rc's policy fds open)
 * and queue PolicyInit; PolicyReady (or its refusal, exit or the timeout)
 * comes as box_policyd_ready(). <0 with *err: not started; the caller then
 * tears the box down (policyd_stop).
 */
int policyd_start(struct boxd *d, struct box *b, char **err);
/* policyd's channel hung up already: stop the box for that (true), else false. */
bool policyd_check_gone(struct box *b);
/* A supervised program's box-policyd channel: FD (stays the caller's) attached as boxd's kind. */
int policyd_attach_supervisor(struct box *b, int fd);
/* A sandbox's kernel refusal report to box-policyd's telemetry (include `kernel`). */
void policyd_kernel_refusal(struct box *b, const char *sandbox, const char *syscall_name,
			    uint32_t err, uint32_t count, bool first);
/*
 * The box ends: close its channel (policyd flushes its decision lines, syncs
 * the history and exits). Returns true when there is an exit to wait for:
 * its reap or, after BOXD_POLICYD_EXIT_WAIT_MS, a SIGKILL
 * then calls box_policyd_finished(). False: no policyd (left) to wait for.
 */
bool policyd_finish(struct box *b);
/*
 * `boxctl policy reload`: M's text goes to the box's box-policyd (PolicyReload, for C's
 * uid); its answer goes to C as PolicyReloadResult under RID. <0 with ERR: not sent.
 */
int policyd_reload(struct box *b, struct client *c, uint64_t rid, const Box__PolicyReloadRequest *m,
		   char *err, size_t err_len);
/*
 * `boxctl approve|deny`: list what waits for a person in the box (M without ask_id) or
 * hand on an answer for C's uid; the reply goes to C as AskReply under RID.
 */
int policyd_ask(struct box *b, struct client *c, uint64_t rid, const Box__AskRequest *m, char *err,
		size_t err_len);
/* C is gone: a reload answer for it is dropped. */
void policyd_reload_client_gone(struct boxd *d, struct client *c);
/* The module's handle (b->policyd), made with the box; freeing it kills what still runs. */
int policyd_new(struct box *b);
void policyd_free(struct box *b);
/*
 * policyd's end of PEER's channel (box-gateway, box-shell, box-mcpd), taken
 * by that peer's start (the caller closes it); -1 when there is none.
 */
int policyd_take_peer(struct box *b, enum daemon_id peer);
/*
 * The gateway's end of the telemetry channel (proto/telemetry.proto) policyd_start
 * made for a box with a [telemetry.NAME] kind = otlp target, taken by gateway.c's
 * start (the caller closes it); -1 when there is none.
 */
int policyd_take_telemetry(struct box *b);

/* ---- gateway.c ---- */
/* [gateway] port (docs/box.ini.5.md default 3128). */
static inline uint16_t
gateway_port(const struct box *b)
{
	const Box__CfgGateway *g = b->spec->gateway;
	return g && g->port ? (uint16_t)g->port->value : BOXD_GATEWAY_DEFAULT_PORT;
}
/*
 * The agent's OTLP/HTTP receiver port inside its sandbox (docs/box.ini.5.md
 * [telemetry.NAME]): 4318, OTLP/HTTP's own (4319 when [gateway] port is 4318);
 * 0 when no target takes the agent's telemetry. (plan.c)
 */
uint16_t otlp_port(const struct box *b);
/* The gateway's RLIMIT_NOFILE, soft and hard: 2 × max_connections (default 1024) + 256. */
#define BOXD_GATEWAY_DEFAULT_MAX_CONNECTIONS 1024
static inline uint64_t
gateway_nofile(const struct box *b)
{
	const Box__CfgGateway *g = b->spec->gateway;
	return 2 * (g && g->max_connections ? g->max_connections->value
					    : BOXD_GATEWAY_DEFAULT_MAX_CONNECTIONS) + 256;
}
/* … with the default max_connections (a spare's: spares.c). */
static inline uint64_t
gateway_nofile_default(void)
{
	return 2 * BOXD_GATEWAY_DEFAULT_MAX_CONNECTIONS + 256;
}
/* Can this boxd give the gateway its file limit? <0 with *err: the box cannot start. */
int gateway_nofile_check(const struct box *b, char **err);
/*
 * Start box-gateway (policyd ready, b->gateway_policyd_fd open) and queue
 * GatewayInit; GatewayReady (or its refusal, exit or the timeout) comes as
 * box_gateway_ready(). <0 with *err: not started; with *bad_line set, a
 * config entry (*bad_key) it cannot take (a refusal). The caller tears down.
 */
int gateway_start(struct boxd *d, struct box *b, uint32_t *bad_line, const char **bad_key,
		  char **err);
/* A sandbox's listener (fd taken) to the gateway, tagged with its sandbox; *id for the close. */
int gateway_listener_add(struct box *b, const char *sandbox, int fd, uint32_t *id);
/* The same for a sandbox's OTLP receiver listener (GatewayListener.otlp). */
int gateway_otlp_listener_add(struct box *b, const char *sandbox, int fd, uint32_t *id);
/* That sandbox ended. */
void gateway_listener_closed(struct box *b, uint32_t id);
/*
 * The box ends: close the channel (the gateway exits). True when there is
 * an exit to wait for (reap or, after BOXD_GATEWAY_EXIT_WAIT_MS, SIGKILL):
 * then box_gateway_finished() follows.
 */
bool gateway_finish(struct box *b);
/* The module's handle (b->gateway), made with the box; freeing it kills what still runs. */
int gateway_new(struct box *b);
void gateway_free(struct box *b);

/* ---- shell.c ---- */
/*
 * Start box-shell (gateway ready, b->agent_plan built, RUNTIME/shell.sock
 * listening, policyd's fd 6 open) through the trampoline and queue
 * ShellInit; ShellReady (or its refusal, exit or the timeout) comes as
 * box_shell_ready(). <0 with *err: not started; the caller tears down.
 */
int shell_start(struct boxd *d, struct box *b, char **err);
/*
 * The box ends: every tool sandbox killed, box-shell's channel closed. True
 * when there is an exit to wait for (its reap or, after
 * BOXD_SHELL_EXIT_WAIT_MS, SIGKILL): then box_shell_finished() follows.
 */
bool shell_finish(struct box *b);
/* The module's handle (b->shell), made with the box; freeing it kills what still runs (tools too). */
int shell_new(struct box *b);
void shell_free(struct box *b);
/*
 * `boxctl shell` (AttachRequest from C, whom the caller checked is the box's
 * owner or root): ShellAttach to box-shell; AttachReply once it answers.
 */
void shell_attach(struct box *b, struct client *c, uint64_t rid, const Box__AttachRequest *m);
/* C is gone: its requests in flight are answered to nobody (the fds closed). */
void shell_attach_client_gone(struct boxd *d, struct client *c);

/* ---- toolmatch.c ---- */
/*
 * Re-check a SpawnRequest against the box's own config (docs/box.ini.5.md
 * [tool.NAME]): with `tool` named, that table exists, its canonical
 * program (programs[i], as box-recheck resolved spec->tools[i]) is
 * program_path, its fixed arguments are a prefix of argv[1..], and no other
 * table matches with more fixed arguments; without, no table matches at
 * all and program_path lies under one of the agent's exec entries. 0 with
 * *tool_idx (into spec->tools, or -1 for an exec entry); -EPERM with the
 * reason in msg.
 */
int tool_match(const Box__BoxSpec *s, char *const *programs, const char *tool,
	       const char *program_path, char *const *argv, size_t argc, int *tool_idx,
	       char *msg, size_t msg_len);
/*
 * Re-check a SpawnRequest for the host python3 (python = true): the config
 * has no [tool.python3] and no table runs program_path, which is HOST_PYTHON
 * (boxd's realpath of /usr/bin/python3; NULL: none). 0, or -EPERM with msg.
 */
int python_match(const Box__BoxSpec *s, char *const *programs, const char *host_python,
		 const char *program_path, char *msg, size_t msg_len);

/* ---- cgroup.c ---- */
/*
 * Set up pids_max / memory_max for the box: cgroup dirs into b->cgroups,
 * or the RLIMIT_NPROC fallback (b->nproc_fallback). -EOPNOTSUPP with *why
 * when this host offers no mechanism.
 */
int cgroup_setup(struct boxd *d, struct box *b, bool has_pids, uint64_t pids_max,
		 bool has_mem, uint64_t memory_max, const char **why);
/*
 * Remove the box's cgroups, killing what is left in them. Returns true when
 * one is still busy: a timer retries every BOXD_CGROUP_RMDIR_EVERY_MS (up
 * to BOXD_CGROUP_RMDIR_TRIES times, then it is left behind with a warning)
 * and calls box_cgroups_removed() at the end. False: nothing left.
 */
bool cgroup_cleanup(struct box *b);
/* Did the box's memory cgroup OOM-kill a process (before cgroup_cleanup)? */
bool cgroup_oom_killed(const struct box *b);

#endif
