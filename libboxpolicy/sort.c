/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sort.c — a stable merge sort for the library's load-time tables (the rule
 * index's keys and prefix lengths). Not qsort: glibc's calls sysinfo(2) for
 * arrays over 1 KiB to size its buffer, and box-policyd's seccomp allow-list
 * kills a process that asks (SIGSYS) — so a policy with enough indexed rules
 * killed box-policyd at start. Scratch is one malloc of the array's size.
 * Trusts: its callers (library-internal); no I/O, no logging.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int
bp_msort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n < 2)
		return 0;
	if (size == 0 || n > SIZE_MAX / size)
		return -EOVERFLOW;
	char *a = base, *tmp = malloc(n * size);
	if (!tmp)
		return -ENOMEM;
	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n;
			size_t hi = mid + w < n ? mid + w : n;
			size_t i = lo, j = mid, k = lo;
			/* equal elements: the left run's first, so the sort is stable */
			while (i < mid && j < hi) {
				const char *src = cmp(a + j * size, a + i * size) < 0 ? a + j++ * size :
											   a + i++ * size;
				memcpy(tmp + k++ * size, src, size);
			}
			memcpy(tmp + k * size, a + i * size, (mid - i) * size);
			k += mid - i;
			memcpy(tmp + k * size, a + j * size, (hi - j) * size);
		}
		memcpy(a, tmp, n * size);
	}
	free(tmp);
	return 0;
}
