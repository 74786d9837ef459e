/* SPDX-License-Identifier: Apache-2.0 */
/*
 * refuse_gen.c — box-trampoline's refusing seccomp program (seccomp.c:
 * libseccomp's, then the personality check), built here once at build time
 * and printed as the C array refuse_baked.c compiles in. The program takes
 * no input (not the plan, not the host): built in every sandbox's PID 1, as
 * it was, libseccomp's compiler cost each sandbox about a tenth of its
 * trampoline's CPU. The trampoline links the same libseccomp statically,
 * and test_kfilter checks that the program compiled in is the one
 * libseccomp builds at test time, instruction for instruction.
 * Trusts: nothing (a build tool).
 */
#include <errno.h>
#include <linux/filter.h>
#include <stdio.h>
#include <string.h>

#include "kfilter.h"
#include "trampoline.h"

int
main(void)
{
	static struct kprog p;
	char why[256] = "";
	int r = seccomp_programs_build(&p, why, sizeof(why));

	if (r < 0) {
		fprintf(stderr, "refuse_gen: %s: %s\n", why, strerror(-r));
		return 1;
	}
	printf("/* Generated at build time by box-trampoline/gen/refuse_gen.c from seccomp.c. */\n");
	printf("#define REFUSE_PROG_LEN %zu\n", p.n);
	printf("static const struct sock_filter refuse_prog_baked[REFUSE_PROG_LEN] = {\n");
	for (size_t i = 0; i < p.n; i++)
		printf("\t{ 0x%04x, %u, %u, 0x%08xu },\n", (unsigned)p.f[i].code, (unsigned)p.f[i].jt,
		       (unsigned)p.f[i].jf, (unsigned)p.f[i].k);
	printf("};\n");
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
