/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recheck_shared.h — what boxd and box-recheck both need of a recheck:
 * the refusal records (box.ini:LINE [SECTION] KEY: MESSAGE), which paths
 * inside a grant are masked, and the limits of a RecheckReply's records.
 * Library code: NULL (out of memory) or a value, never logs.
 * Trusts: the decoded, validated spec sections it is given.
 */
#ifndef BOX_RECHECK_SHARED_H
#define BOX_RECHECK_SHARED_H

#include <stdbool.h>
#include <stdint.h>

#include "boxd.pb-c.h"
#include "text.h" /* BOX_TELEMETRY_FILES_MAX */

#define RECHECK_SOCKETS_SHOWN 20 /* reachable sockets named in the disclosure */
#define RECHECK_MASKS_MAX 32     /* docs/box.ini.5.md masks inside grants (stores, own dirs) */
#define RECHECK_LOADERS_MAX 8    /* ELF loaders of the agent's executables (box.ini(5) exec_system) */
/* state dir, lock, policy/, decisions.jsonl, ca.pem, agent.log, the telemetry files */
#define RECHECK_FDS_MAX (6 + BOX_TELEMETRY_FILES_MAX)

/* A refusal naming box.ini, LINE, [SECTION] KEY; control characters become '?'. */
Box__Problem *problem_new(uint32_t line, const char *section, const char *key, const char *fmt,
			  ...) __attribute__((format(printf, 4, 5)));
void problem_free(Box__Problem *p);
/*
 * The box's state dir as the owner would use it ([box] state_dir, LINE):
 * ST its stat when it exists (then it must be the owner's and not writable
 * by others), else CREATE_ERR: 0 when the owner can create it, or the
 * errno that stops it. NULL: no refusal. box-recheck (which creates it as
 * the owner) and boxctl check (which asks whether the owner could) both
 * refuse through this one function.
 */
struct stat;
Box__Problem *state_dir_problem(uint32_t line, const char *path, const struct stat *st,
				int create_err, unsigned owner_uid, const char *owner);
/* Is `p` a grant entry itself, strictly inside one, and outside every deny entry? */
bool own_paths_maskable(const Box__CfgFilesystem *fs, const char *p);

#endif
