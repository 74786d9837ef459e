/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_reload.h — the two halves of `boxctl policy reload` (policy_cmd.c), shared with
 * `boxctl approve --always` (ask.c), which puts its edit in force the same way.
 */
#ifndef BOXCTL_POLICY_RELOAD_H
#define BOXCTL_POLICY_RELOAD_H

#include <stddef.h>
#include <stdint.h>

#include "ipc.h"

/*
 * TEXT loaded as box-policyd will load it (the caller's home, MCP namespaces unknown here
 * allowed): 0, or negative errno (-EINVAL: it does not load) after its errors and warnings
 * on stderr, named FILE:LINE:COL.
 */
int policy_text_check(const char *file, const char *text, size_t len);

/*
 * Ask the boxd that runs BOX (the service's, then this user's embedded ones) to put TEXT
 * (LEN bytes, read from FILE) in force; with EXPECT_SHA256 (32 bytes) only if the text in
 * force hashes to it. 1: answered (*RES a PolicyReloadResult, freed with
 * box_ipc_msg_done); 0: no boxd runs BOX; negative errno (*ERR may say why).
 */
int policy_reload_send(const char *box, const char *text, size_t len, const char *file,
		       const uint8_t *expect_sha256, struct box_ipc_msg *res, char **err);

#endif
