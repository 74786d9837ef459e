/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recheck.h — box-recheck's internal interface: main.c (the straight line:
 * request, owner's ids, checks, reply) and check.c (the checks).
 * Trusts: the RecheckRequest after box_ipc_decode() validated it.
 */
#ifndef BOX_RECHECK_RECHECK_H
#define BOX_RECHECK_RECHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "recheck.pb-c.h"
#include "recheck_shared.h"
#include "treewalk.h"
#include "validate.h"

#define RECHECK_RECORDS_MAX 128
#define RECHECK_CANDIDATES_MAX 32 /* mask candidates (validate.c's RECHECK_PATHS_MAX) */

struct socket_id {
	dev_t dev;
	ino_t ino;
	const char *path;
};

/* A path every view hides (an agent deny entry, a mask) by its identity on the host. */
struct hidden_id {
	dev_t dev;
	ino_t ino;
	const char *path;
};

/* One recheck: what it found so far. */
struct child {
	const char *owner;
	uid_t owner_uid;
	const Box__CfgFilesystem *fs;
	struct box_walk_budget walk;   /* the deny and socket walks, together (docs/box.ini.5.md) */
	struct socket_id boxd_sockets[8];
	size_t n_boxd_sockets;
	char *masks[RECHECK_MASKS_MAX]; /* what this recheck masks (mask records) */
	const char *loaders[RECHECK_LOADERS_MAX]; /* "loader" records sent (into records) */
	size_t n_loaders;
	size_t n_masks;
	const Box__CfgPath *walking;   /* the grant or deny entry being walked */
	const char *walking_key;
	const char *walking_section;   /* "agent.filesystem", "tool.NAME.filesystem", ... */
	const Box__CfgFilesystem *walking_fs; /* the grants of the section being walked */
	struct hidden_id hidden[BOX_FS_LIST_MAX + RECHECK_MASKS_MAX];
	size_t n_hidden;
	unsigned scan_delay_ms;        /* BOX_TEST_SCAN_DELAY_MS: slows the socket scan (tests) */
	size_t sockets_total;
	size_t sockets_named;          /* "socket" records sent, at most RECHECK_SOCKETS_SHOWN */
	Box__Problem *problems[BOX_LIST_REPLY_MAX];
	size_t n_problems;
	char *records[RECHECK_RECORDS_MAX + 2 * BOX_FS_LIST_MAX + BOX_SECTIONS_MAX + RECHECK_LOADERS_MAX];
	size_t n_records;
};

void child_problem(struct child *c, uint32_t line, const char *section, const char *key,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A record "KIND PATH" (exits 3 when out of room or memory). */
void child_record(struct child *c, const char *kind, const char *path);
/* Every [agent.filesystem] entry, as the owner. */
void check_grants(struct child *c);
void check_workspace(struct child *c, const Box__RecheckRequest *s);
/* The agent's program on its PATH, its #! chain and their ELF loaders. */
void check_command(struct child *c, const Box__RecheckRequest *s);
/* The ELF loaders of box's own programs and of the agent's exec entries that are files. */
void check_loaders(struct child *c);
/* mkdir -p with 0700 for what is created. */
int mkdir_p(const char *p);
/* Each [tool.NAME]: its grants, and its program's canonical file ("tool.NAME PATH"). */
void check_tools(struct child *c, const Box__RecheckRequest *s);
void check_mcp(struct child *c, const Box__RecheckRequest *s);
/* The mask records for the candidates that exist inside a grant of fs (the agent's, a tool's). */
void child_masks(struct child *c, char *const *cand, size_t n, const Box__CfgFilesystem *fs);
/*
 * The hard-link walk under denies, the socket scan of the agent's grants,
 * and in every section's grants (the agent's, each tool's and stdio
 * server's) a search for another name — a bind mount on the host — of a path
 * every view hides.
 */
void child_scan(struct child *c, const Box__RecheckRequest *q);

/* seccomp.c: the allow-list, the last start-up step. */
int recheck_seccomp(void);

#endif
