/* SPDX-License-Identifier: Apache-2.0 */
/*
 * termsafe.h — printing strings that came from a box (agent-chosen paths,
 * commands, hosts) to a terminal: control characters, DEL, C1 controls and
 * bidi overrides are written as escapes, so a log line cannot rewrite the
 * screen or reorder what the reader sees. Used by `boxctl log` and
 * `boxctl policy replay`.
 * Trusts: nothing in the strings.
 */
#ifndef BOXCTL_TERMSAFE_H
#define BOXCTL_TERMSAFE_H

#include <stddef.h>
#include <stdio.h>

/* Print S (NUL-terminated) to OUT with controls and bidi controls escaped. */
void put_safe(FILE *out, const char *s);
/* The same for N bytes at S (which may hold NULs: each is written as \x00). */
void put_safe_n(FILE *out, const char *s, size_t n);

#endif
