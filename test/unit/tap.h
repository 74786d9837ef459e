/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tap.h — the unit-test harness: TAP-like lines that test/run-tests.sh counts.
 *
 * A test file defines functions `static void test_x(void)` and lists them in
 * main() with RUN(test_x). Each CHECK prints nothing when it holds and one
 * diagnostic line when it fails; each RUN prints "ok - name" or "not ok - name".
 * tap_done() prints the per-file summary and returns the exit status.
 * Trusts: nothing; it is test code.
 */
#ifndef BOX_TAP_H
#define BOX_TAP_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int tap_failed_checks;
static int tap_passed, tap_failed, tap_skipped;
static const char *tap_skip_reason;

#define CHECK(cond)                                                                       \
	do {                                                                              \
		if (!(cond)) {                                                            \
			printf("#   %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			tap_failed_checks++;                                              \
		}                                                                         \
	} while (0)

#define CHECK_INT(a, b)                                                                   \
	do {                                                                              \
		long long tap_a_ = (long long)(a), tap_b_ = (long long)(b);               \
		if (tap_a_ != tap_b_) {                                                   \
			printf("#   %s:%d: %s == %lld, expected %s == %lld\n", __FILE__,      \
			       __LINE__, #a, tap_a_, #b, tap_b_);                         \
			tap_failed_checks++;                                              \
		}                                                                         \
	} while (0)

#define CHECK_STR(a, b)                                                                   \
	do {                                                                              \
		const char *tap_a_ = (a), *tap_b_ = (b);                                  \
		if (!tap_a_ || !tap_b_ || strcmp(tap_a_, tap_b_) != 0) {                  \
			printf("#   %s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__,       \
			       __LINE__, #a, tap_a_ ? tap_a_ : "(null)",                  \
			       tap_b_ ? tap_b_ : "(null)");                               \
			tap_failed_checks++;                                              \
		}                                                                         \
	} while (0)

/* Mark the running test as skipped: only for a host capability that is absent. */
#define SKIP(reason) (tap_skip_reason = (reason))

/* A test that took long says so: the first thing to read when a loaded machine times one out. */
static inline void
tap_report_slow(const char *name, const struct timespec *t0, const struct timespec *t1)
{
	double took = (double)(t1->tv_sec - t0->tv_sec) + (double)(t1->tv_nsec - t0->tv_nsec) / 1e9;
	if (took >= 5.0)
		printf("# %s took %.1f s\n", name, took);
}

#define RUN(fn)                                                                           \
	do {                                                                              \
		const char *tap_only_ = getenv("TAP_ONLY");                               \
		if (tap_only_ && *tap_only_ && strcmp(tap_only_, #fn) != 0)               \
			break;                                                            \
		int tap_before_ = tap_failed_checks;                                      \
		struct timespec tap_t0_, tap_t1_;                                         \
		tap_skip_reason = NULL;                                                   \
		clock_gettime(CLOCK_MONOTONIC, &tap_t0_);                                 \
		fn();                                                                     \
		clock_gettime(CLOCK_MONOTONIC, &tap_t1_);                                 \
		tap_report_slow(#fn, &tap_t0_, &tap_t1_);                                 \
		if (tap_failed_checks != tap_before_) {                                   \
			printf("not ok - %s\n", #fn);                                     \
			tap_failed++;                                                     \
		} else if (tap_skip_reason) {                                             \
			printf("ok - %s # skip %s\n", #fn, tap_skip_reason);              \
			tap_skipped++;                                                    \
		} else {                                                                  \
			printf("ok - %s\n", #fn);                                         \
			tap_passed++;                                                     \
		}                                                                         \
		fflush(stdout);                                                           \
	} while (0)

static inline int
tap_done(void)
{
	printf("# %d passed, %d failed, %d skipped\n", tap_passed, tap_failed, tap_skipped);
	return tap_failed ? 1 : 0;
}

#endif
