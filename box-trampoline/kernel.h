/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kernel.h — PID 1 serves the workload's listener (kernel.c): kernel refusals
 * answered and reported, supervised calls handed to supervise.c.
 * Trusts: nothing the workload says.
 */
#ifndef BOX_TRAMPOLINE_KERNEL_H
#define BOX_TRAMPOLINE_KERNEL_H

#include <stdbool.h>

#include "kfilter.h"

/* LISTENER and REPORT_FD (or -1) are taken; REFUSE stays PID 1's (the program as built). */
int kernel_start(int listener, int report_fd, const struct kprog *refuse, bool supervised);
/* Receive and answer one notification (the listener is readable). Negative errno. */
int kernel_one(void);
/* poll()'s timeout until the next count is due (-1: none). */
int kernel_timeout_ms(void);
/* Send the counts that are due (ALL: every count, as PID 1 exits). */
void kernel_flush(bool all);

#endif
