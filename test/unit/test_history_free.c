/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_history_free.c — bp_history_free (libboxpolicy): which actions need no history
 * (docs/box-policy.5.md, "Decisions without a round trip"): none of their rules is
 * temporal and no temporal rule keeps their events; `previous`, `since` and a `formerly`
 * without a predicate keep every event.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "boxpolicy.h"
#include "boxpolicy_temporal.h"
#include "tap.h"

/* What bp_history_free says of ACTION under TEXT (-1000: the policy did not load). */
static int
free_of(const char *text, const char *action)
{
	struct bp_policy *p = NULL;
	struct bp_monitor *m = NULL;
	if (bp_policy_load(text, strlen(text), NULL, &p, NULL) < 0)
		return -1000;
	if (bp_policy_has_temporal(p) && bp_monitor_new(p, &m, NULL) < 0) {
		bp_policy_free(p);
		return -1000;
	}
	int r = bp_history_free(p, m, action);
	bp_monitor_free(m);
	bp_policy_free(p);
	return r;
}

#define WRITE_CAP                                                                          \
	"forbid (principal, action == Box::Action::\"fs:write\", resource) when temporal {"   \
	" (count for (t: Timepoint). where formerly within 1h"                                 \
	" (Box::Action::\"fs:write\"::request{} && tp(t))) > 2 };\n"
#define PERMIT_ALL "permit (principal, action, resource);\n"

static void
test_plain(void)
{
	const char *p = PERMIT_ALL;
	CHECK_INT(free_of(p, "shell:exec"), 1);
	CHECK_INT(free_of(p, "fs:write"), 1);
	CHECK_INT(free_of(p, "no:such"), -ENOENT);
}

static void
test_own_budget(void)
{
	const char *p = PERMIT_ALL WRITE_CAP;
	CHECK_INT(free_of(p, "fs:write"), 0); /* its rule is temporal */
	CHECK_INT(free_of(p, "shell:exec"), 1);
	CHECK_INT(free_of(p, "fs:read"), 1);
}

static void
test_read_events(void)
{
	/* A rule of fs:delete reading fs:read's responses: fs:read's events matter. */
	const char *p = PERMIT_ALL
		"forbid (principal, action == Box::Action::\"fs:delete\", resource) when temporal {"
		" formerly within 1m Box::Action::\"fs:read\"::response{} };\n";
	CHECK_INT(free_of(p, "fs:read"), 0);
	CHECK_INT(free_of(p, "fs:delete"), 0);
	CHECK_INT(free_of(p, "shell:exec"), 1);
}

static void
test_every_event(void)
{
	const char *prev = PERMIT_ALL
		"forbid (principal, action == Box::Action::\"fs:delete\", resource) when temporal {"
		" previous within 1m Box::Action::\"fs:read\"::request{} };\n";
	CHECK_INT(free_of(prev, "shell:exec"), 0);
	const char *tp = PERMIT_ALL
		"forbid (principal, action == Box::Action::\"fs:delete\", resource) when temporal {"
		" (count for (t: Timepoint). where formerly within 1m tp(t)) > 100 };\n";
	CHECK_INT(free_of(tp, "shell:exec"), 0);
	/* A temporal rule whose scope admits every action. */
	const char *any = PERMIT_ALL "forbid (principal, action, resource) when temporal {"
				     " formerly within 1m Box::Action::\"fs:read\"::request{} };\n";
	CHECK_INT(free_of(any, "shell:exec"), 0);
}

static void
test_bad_arguments(void)
{
	struct bp_policy *p = NULL;
	const char *t = PERMIT_ALL WRITE_CAP;
	CHECK_INT(bp_policy_load(t, strlen(t), NULL, &p, NULL), 0);
	/* A temporal policy without its monitor cannot tell. */
	CHECK_INT(bp_history_free(p, NULL, "shell:exec"), -EINVAL);
	CHECK_INT(bp_history_free(NULL, NULL, "shell:exec"), -EINVAL);
	bp_policy_free(p);
}

int
main(void)
{
	RUN(test_plain);
	RUN(test_own_budget);
	RUN(test_read_events);
	RUN(test_every_event);
	RUN(test_bad_arguments);
	return tap_done();
}
