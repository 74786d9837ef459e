/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cedar_text.h — values written into Cedar policy text (docs/box-policy.5.md,
 * "Expressions"): string literals escaped so that no value, whatever bytes it holds,
 * ends its literal or the rule early, and comments that hold printable ASCII only.
 * For `boxctl policy suggest` and `boxctl approve --always`, which write rules from
 * values an agent chose.
 */
#ifndef BOXCTL_CEDAR_TEXT_H
#define BOXCTL_CEDAR_TEXT_H

#include <stdbool.h>
#include <stdio.h>

/* The body of S in a Cedar string literal; LIKE: in a `like` pattern (a literal star is \*). */
void cedar_put_lit_body(FILE *out, const char *s, bool like);
/* S as a Cedar string literal, quotes included. */
void cedar_put_lit(FILE *out, const char *s, bool like);
/* S in a `//` comment: printable ASCII only, the rest as \xNN (never a line break). */
void cedar_put_comment(FILE *out, const char *s);

#endif
