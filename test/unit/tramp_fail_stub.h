/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tramp_fail_stub.h — box-trampoline's tramp_fail for a unit test that links one of its
 * files (view.c, landlock.c): a failure there is a test failure, said on one line.
 * Include it once, after tap.h. Trusts: nothing; it is test code.
 */
#ifndef BOX_TRAMP_FAIL_STUB_H
#define BOX_TRAMP_FAIL_STUB_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

noreturn void
tramp_fail(struct tramp *t, const char *step, int err, const char *fmt, ...)
{
	va_list ap;
	(void)t;
	printf("not ok - tramp_fail at %s (%s): ", step, strerror(err));
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	exit(1);
}

#endif
