/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shd_seccomp_gen.c — box-shell's allow-list (daemon_seccomp.c), built by
 * libseccomp once at build time and printed as the C array
 * daemon_seccomp_baked.c compiles in: no box-shell start runs the compiler.
 * A sanitizer build's generator is built with the same flags, so its program
 * holds the sanitizer runtime's calls as the daemon's would.
 * Trusts: nothing (a build tool).
 */
#include <stdio.h>
#include <string.h>

#include "seccomp_allow.h"

int shd_seccomp_build(scmp_filter_ctx *ret);

int
main(void)
{
	scmp_filter_ctx ctx;
	int r = shd_seccomp_build(&ctx);
	if (r == 0) {
		r = seccomp_allow_print_c(stdout, ctx, "shd_seccomp_prog",
					  "box-shell/gen/shd_seccomp_gen.c from daemon_seccomp.c");
		seccomp_release(ctx);
	}
	if (r < 0)
		fprintf(stderr, "shd_seccomp_gen: %s\n", strerror(-r));
	return r < 0;
}
