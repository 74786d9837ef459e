/*
 * caps.c — step 7: no capability survives into the box.
 *
 * Securebits first (uid 0 gains nothing through execve, locked), then every
 * set and the bounding set emptied and ambient cleared (common/privdrop.c,
 * libcap), PR_SET_NO_NEW_PRIVS, and PID 1 non-dumpable (execve resets that
 * for the workload). Each result is read back.
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
	int r = caps_drop_all();
	if (r < 0)
		tramp_fail(t, STEP_CAPS, -r, "dropping every capability");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		tramp_fail(t, STEP_CAPS, errno, "PR_SET_NO_NEW_PRIVS");
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		tramp_fail(t, STEP_CAPS, 0, "no_new_privs did not stick");
	for (int c = 0; c <= CAP_LAST_CAP; c++) {
		if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) != 0)
			tramp_fail(t, STEP_CAPS, 0, "capability %d is still in the bounding set", c);
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0) > 0)
			tramp_fail(t, STEP_CAPS, 0, "capability %d is still ambient", c);
	}
	if (pid1 && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		tramp_fail(t, STEP_CAPS, errno, "PR_SET_DUMPABLE 0");
}
