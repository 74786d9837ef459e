/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workload.h — one sandbox a per-box daemon asked boxd for: a host program
 * box-shell starts (a tool, SpawnRequest) or an MCP server box-mcpd starts
 * (McpServerStart). The daemon's module (shell.c, mcpd.c) re-checks the
 * request against boxd's own config and builds the plan; this code holds
 * what the two share:
 *
 *   workload_start    the trampoline spawned with the plan and the three
 *                     stdio fds the daemon sent; its fd 4 watched
 *   (fd 4)            a contained sandbox's listener handed to the gateway
 *                     under gateway_tag; a SetupError answers the start
 *                     (ops->started ok = false, once); fd 4's clean EOF
 *                     means the program exec'd (ops->started ok = true)
 *   (reaped)          the outer trampoline was reaped (child.c's reaper): the
 *                     start answered if it was not yet, then ops->exited with
 *                     the status as a shell reports it (N, 128+signal), then
 *                     ops->gone (the owner unlinks and frees it)
 *   workload_kill     a signal to the outer trampoline through child.c's one
 *                     kill path (SIGKILL: PID 1 follows, and with it the
 *                     sandbox's PID namespace)
 *   workload_release  what it holds freed, its gateway listener closed
 *
 * Trusts: the trampoline's status messages after spawn_status_read()'s
 * decoding; a sandbox gets one listener, on the gateway's port, and no pty:
 * anything else kills it.
 */
#ifndef BOXD_WORKLOAD_H
#define BOXD_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>

#include "child.h"
#include "plan.pb-c.h"
#include "status.h"

struct box;
struct workload;

struct workload_ops {
	const char *what; /* "tool", "server": in messages ("cannot execute the tool: …") */
	enum child_kind kind; /* CHILD_TOOL, CHILD_MCP_SERVER */
	/* The start's outcome, once: ok, or why not (one line). */
	void (*started)(struct workload *w, bool ok, const char *error);
	/* Reaped after a start that succeeded: N, or 128+N for signal N (126: neither). */
	void (*exited)(struct workload *w, int status);
	/* Reaped and answered: the owner forgets it (may free it). */
	void (*gone)(struct workload *w);
};

struct workload {
	const struct workload_ops *ops;
	struct box *b;
	uint64_t id;              /* the asking daemon's (spawn id, start id) */
	struct child child;       /* the outer trampoline (child.h's tracker) */
	struct status_watch status; /* the trampoline's fd 4 until EOF */
	char *gateway_tag;        /* the listener's tag at the gateway ("tool.NAME", "mcp.NAME") */
	char *setup_error;        /* the trampoline's SetupError, as the daemon is told */
	bool replied;             /* the start answered (ok or not) */
	bool started;             /* answered ok: an exit follows the reap */
	uint32_t listener_id;     /* at the gateway, or 0 */
};

/* The tool_spawn or mcp_server_run whose member `w` W is. */
#define WORKLOAD_OF(W, TYPE) ((TYPE *)(void *)((char *)(W) - offsetof(TYPE, w)))

/* A workload not started yet; TAG (may be NULL: out of memory) is taken. */
void workload_init(struct workload *w, const struct workload_ops *ops, struct box *b,
		   uint64_t id, char *tag);
/* Spawn the trampoline (PLAN, the daemon's FDS as its 0-2) and watch it; negative errno. */
int workload_start(struct workload *w, const Box__Plan *plan, const int fds[3]);
/* SIG to the outer trampoline (SIGKILL ends the sandbox); nothing once reaped. */
void workload_kill(struct workload *w, int sig);
/* SIGKILL and forget (the box ends): no answer, no exit, no gone. */
void workload_stop(struct workload *w);
/* What it holds freed (a trampoline still running: SIGKILL, forgotten), its listener closed. */
void workload_release(struct workload *w);
/* "status N", "killed by signal N" from a trampoline's wait status (it reports 128+N). */
void workload_status_text(int status, char *buf, size_t len);

#endif
