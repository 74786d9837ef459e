/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon_seccomp_baked.c — box-shell's allow-list (daemon_seccomp.c) as
 * libseccomp compiled it at build time (gen/shd_seccomp_gen.c; the header is
 * generated in the build dir), loaded without a compile at box-shell's start.
 * test_daemon_filters holds it equal to what shd_seccomp_build() makes.
 * Trusts: nothing.
 */
#include <linux/filter.h>

#include "daemon.h"
#include "seccomp_allow.h"
#include "shd_seccomp_prog.h"

int
shd_seccomp(void)
{
	return seccomp_allow_load_prog(shd_seccomp_prog,
				       (unsigned short)(sizeof(shd_seccomp_prog) / sizeof(*shd_seccomp_prog)));
}

const struct sock_filter *
shd_seccomp_baked(unsigned short *n)
{
	*n = (unsigned short)(sizeof(shd_seccomp_prog) / sizeof(*shd_seccomp_prog));
	return shd_seccomp_prog;
}
