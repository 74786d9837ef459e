/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ask.h — a person's answers to decisions a box holds for them (ask.c; docs/boxctl.1.md
 * `boxctl approve`), for every front end that asks a person: `boxctl approve|deny` and a
 * terminal prompt.
 */
#ifndef BOXCTL_ASK_H
#define BOXCTL_ASK_H

#include <stdint.h>
#include <stdio.h>

/*
 * The answer "always" to decision ASK_ID held by box BOX: the policy file the box runs is
 * edited so that the policy itself permits requests equal to it — an `unless { … }` on each
 * @ask forbid that held it, or a `permit` when no permit matched ([box] ask = default) —
 * checked, written atomically as the caller (the file's owner when root calls), put in force
 * (`boxctl policy reload`, only if the box still runs the text the edit was made from), and
 * then the held decision is permitted. The change is printed to OUT as a unified diff;
 * errors go to stderr. When the file cannot be edited, nothing changes and the decision
 * stays held. Returns a BOXCTL_EXIT_* code (commands.h).
 */
int ask_always(const char *box, uint64_t ask_id, FILE *out);

#endif
