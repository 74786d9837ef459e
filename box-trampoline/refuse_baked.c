/* SPDX-License-Identifier: Apache-2.0 */
/*
 * refuse_baked.c — box's refusing seccomp program as compiled at build time
 * (gen/refuse_gen.c runs seccomp.c's libseccomp build and prints it; the
 * header is generated in the build dir). PID 1 takes it from here instead of
 * running libseccomp's compiler in every sandbox; test_kfilter holds it equal
 * to what libseccomp builds.
 * Trusts: nothing.
 */
#include <linux/filter.h>
#include <stddef.h>

#include "kfilter.h"
#include "refuse_prog.h"
#include "trampoline.h"

int
seccomp_programs_baked(struct kprog *refuse)
{
	refuse->n = 0;
	return kfilter_append(refuse, refuse_prog_baked, REFUSE_PROG_LEN);
}
