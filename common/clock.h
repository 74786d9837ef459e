/* SPDX-License-Identifier: Apache-2.0 */
/*
 * clock.h — the monotonic clock in milliseconds, for deadlines (poll
 * timeouts, drains), and in nanoseconds, for short waits and budgets. One
 * definition for common/, the libraries and the daemons.
 * Trusts: nothing.
 */
#ifndef BOX_CLOCK_H
#define BOX_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t
box_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline int64_t
box_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#endif
