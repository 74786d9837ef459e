/* SPDX-License-Identifier: Apache-2.0 */
/*
 * host.c — the interpreter's side of what passes between it and the program
 * that runs it: the installed host-operations table (host.h) and the
 * per-process hints the interpreter gives the decision back end (decide.h).
 * Trusts: the program's table.
 */
#include <stddef.h>

#include "decide.h"
#include "host.h"

static const struct sh_host_ops host_none = { 0 };
static const struct sh_host_ops *host = &host_none;

int sh_decider_stage_buffered;
int sh_decider_write_through;

void
sh_host_set(const struct sh_host_ops *ops)
{
	host = ops ? ops : &host_none;
}

const struct sh_host_ops *
sh_host_get(void)
{
	return host;
}
