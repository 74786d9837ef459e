/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_landlock.c — which Landlock rules of box-trampoline also grant TRUNCATE
 * (box-trampoline/landlock.c, landlock_ineffective_truncate; docs/sandbox.md).
 *
 * TRUNCATE is added only where it cannot be used: a rule on a read-only mount,
 * never at "/" nor at or above /dev or /proc (devices and proc files below
 * them have rules without TRUNCATE, and a rule's rights reach every mount
 * below it). The kernel side — truncate(2) and O_TRUNC in a read grant still
 * fail with EROFS — is test/escape/escape.sh's write-ro case.
 * Trusts: nothing; it is test code.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "box-trampoline/trampoline.h"
#include "tap.h"
#include "tramp_fail_stub.h"

static const unsigned long ro = ST_RDONLY | ST_NOSUID | ST_NODEV, rw = ST_NOSUID | ST_NODEV;

/* Read-only grants and the system runtime: the walk may end at their rule. */
static void
test_read_only_rules(void)
{
	CHECK(landlock_ineffective_truncate("/usr", ro));
	CHECK(landlock_ineffective_truncate("/home/u/project", ro));
	CHECK(landlock_ineffective_truncate("/home/u/project/notes.txt", ro)); /* read_file */
	CHECK(landlock_ineffective_truncate("/etc/hosts", ro | ST_NOEXEC));
	CHECK(landlock_ineffective_truncate("/devices", ro)); /* only starts like /dev */
	CHECK(landlock_ineffective_truncate("/proceed", ro)); /* only starts like /proc */
	CHECK(landlock_ineffective_truncate("/dev/shm/x", ro)); /* read-only, below /dev */
}

/* A writable mount (TRUNCATE would be real there), a rule at or above /dev or /proc
 * (it reaches device and proc files), or no absolute path: never. */
static void
test_never(void)
{
	CHECK(!landlock_ineffective_truncate("/home/u/project", rw));
	CHECK(!landlock_ineffective_truncate("/usr", 0));
	CHECK(!landlock_ineffective_truncate("/", ro));
	CHECK(!landlock_ineffective_truncate("/dev", ro));
	CHECK(!landlock_ineffective_truncate("/proc", ro));
	CHECK(!landlock_ineffective_truncate("usr", ro));
	CHECK(!landlock_ineffective_truncate("", ro));
	CHECK(!landlock_ineffective_truncate(NULL, ro));
}

int
main(void)
{
	RUN(test_read_only_rules);
	RUN(test_never);
	return tap_done();
}
