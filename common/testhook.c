/* SPDX-License-Identifier: Apache-2.0 */
/*
 * testhook.c — BOX_TEST_*_MS hooks (testhook.h).
 * Trusts: nothing; the value is the environment's.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "parse.h"
#include "testhook.h"

int
box_test_ms(const char *name, uint64_t max_ms, uint64_t *ms)
{
	const char *v = getenv(name);
	*ms = 0;
	if (!v || !*v)
		return 0;
	uint64_t n;
	int r = parse_u64(v, max_ms, &n);
	if (r < 0)
		return r;
	*ms = n;
	return 0;
}

void
box_sleep_ms(uint64_t ms)
{
	struct timespec ts = { .tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}
