/* SPDX-License-Identifier: Apache-2.0 */
/*
 * caps.c — step 7: no capability survives into the box.
 *
 * Securebits first (uid 0 gains nothing through execve, locked), then every
 * set and the bounding set emptied and ambient cleared (common/privdrop.c,
 * libcap), and PID 1 non-dumpable (execve resets that for the workload). Each
 * result is read back. PR_SET_NO_NEW_PRIVS is already set: PID 1 sets it once,
 * when it is forked (pid1.c), because Landlock (step 5) needs it; here it is
 * only checked. The workload is forked from PID 1 after this step and inherits
 * both.
 * Trusts: nothing.
 */
#include <errno.h>
#include <linux/securebits.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "privdrop.h"
#include "trampoline.h"

void
capabilities_drop(struct tramp *t, bool pid1)
{
	int bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
		   SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED;
	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0)
		tramp_fail(t, STEP_CAPS, errno, "PR_SET_SECUREBITS");
	int r = privdrop_caps_clear();
	if (r < 0)
		tramp_fail(t, STEP_CAPS, -r, "dropping every capability");
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		tramp_fail(t, STEP_CAPS, 0, "no_new_privs is not set");
	for (int c = 0; c <= CAP_LAST_CAP; c++) {
		if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) != 0)
			tramp_fail(t, STEP_CAPS, 0, "capability %d is still in the bounding set", c);
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0) > 0)
			tramp_fail(t, STEP_CAPS, 0, "capability %d is still ambient", c);
	}
	if (pid1 && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		tramp_fail(t, STEP_CAPS, errno, "PR_SET_DUMPABLE 0");
}
