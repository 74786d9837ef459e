/* SPDX-License-Identifier: Apache-2.0 */
/*
 * state.c — box-gateway's one shared state (gateway.h) and the way out of
 * its loop. A leaf: every other file may use it, it uses none of them.
 * Trusts: nothing.
 */
#include <event2/event.h>

#include "gateway.h"

struct gw_state G = {.exit_code = 0};

void
gw_exit(int code)
{
	/* The first failure decides: a later orderly close does not hide it. */
	if (code > G.exit_code)
		G.exit_code = code;
	if (G.base)
		event_base_loopexit(G.base, NULL);
}
