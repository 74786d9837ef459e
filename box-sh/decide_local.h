/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decide_local.h — box-sh's in-process back end of decide.h:
 * libboxpolicy evaluates each request, temporal rules included, and a
 * decisions.jsonl line is written per decision when decisions_fd >= 0.
 * Implemented by decide_local.c (helper shdecide); box-sh/main.c codes against
 * exactly these two functions.
 *
 * Trusts: the policy text is the operator's (parsed and validated here; an
 * error fills `why`).
 */
#ifndef BOX_SHELL_DECIDE_LOCAL_H
#define BOX_SHELL_DECIDE_LOCAL_H

#include <stddef.h>

#include "decide.h"

/* policy_text/len: the policy file's contents; policy_path: its name for
 * messages; home: the owner's home ("~" spellings; NULL = $HOME);
 * decisions_fd: where decisions.jsonl lines go (-1: none; not closed here).
 * Returns 0 and *out, or negative errno with a message in why. */
int sh_decider_local_new(const char *policy_text, size_t len, const char *policy_path,
			 const char *home, int decisions_fd, struct sh_decider **out, char *why,
			 size_t why_len);
void sh_decider_local_free(struct sh_decider *d);

#endif
