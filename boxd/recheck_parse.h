/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recheck_parse.h — a validated RecheckReply into boxd's struct
 * recheck_result (boxd.h): the typed "KIND PATH" records, the problems and
 * the state fds. Pure: no event loop, no spawn, no logging, so the fuzz
 * target (test/fuzz/fuzz_recheck_reply.c) and the unit tests link it alone.
 * Trusts: nothing of the reply beyond what box_ipc_decode() validated
 * (box_validate_recheck_reply): every record is re-checked here.
 */
#ifndef BOX_BOXD_RECHECK_PARSE_H
#define BOX_BOXD_RECHECK_PARSE_H

#include <stdbool.h>

#include "boxd.h"
#include "ipc.h"
#include "recheck.pb-c.h"

/*
 * Fill `res` (cleared: recheck_result_clear, all fds -1) from `rep`, taking
 * the state files from m->fds (4, or 5 with `detach`; none with problems).
 * 0 also for a refusal (res->n_problems > 0, no fds taken). Negative errno
 * (-EBADMSG: a bad record, -EPROTO: fds or records missing, -ENOMEM) leaves
 * what was taken so far in `res`: the caller clears it.
 */
int recheck_parse_reply(struct recheck_result *res, const Box__RecheckReply *rep,
			struct box_ipc_msg *m, bool detach);

#endif
