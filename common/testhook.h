/* SPDX-License-Identifier: Apache-2.0 */
/*
 * testhook.h — the BOX_TEST_*_MS hooks a program reads from its own environment
 * (docs/design.md, "Test hooks": a hook only slows a step or makes a layer look absent).
 *
 * One reading of such a variable for every daemon: unset or empty is no hook (0 ms);
 * anything but decimal digits up to MAX_MS is an error the caller reports its way
 * (a daemon that must not start refuses, one that may go on ignores it).
 * Library code: never logs.
 * Trusts: nothing; the value is the environment's.
 */
#ifndef BOX_TESTHOOK_H
#define BOX_TESTHOOK_H

#include <stdint.h>

/* NAME's value in ms into *MS: 0 (unset or empty: *MS = 0), -EINVAL (not digits),
 * -ERANGE (above MAX_MS). */
int box_test_ms(const char *name, uint64_t max_ms, uint64_t *ms);
/* Sleep MS ms (a signal's EINTR sleeps on for what is left). */
void box_sleep_ms(uint64_t ms);

#endif
