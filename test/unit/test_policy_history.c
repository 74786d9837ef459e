/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_policy_history.c — `boxctl policy eval --history` replay
 * (boxctl/policy_history.c): exact times (decimal seconds and RFC 3339 to
 * the nanosecond), the write budget of reference §9 Ex. 4 replayed from a
 * history file and decided at the window edges, and refused lines.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boxctl/policy_history.h"
#include "tap.h"

static const char *budget =
	"@id(\"project_write\")\n"
	"permit (principal, action == Box::Action::\"fs:write\", resource);\n"
	"@id(\"write_budget\")\n"
	"@description(\"Write budget reached.\")\n"
	"forbid (principal, action == Box::Action::\"fs:write\", resource)\n"
	"when temporal {\n"
	"    exists (total: Long). (\n"
	"        (count for (t: Timepoint). where (\n"
	"            formerly within 60s (\n"
	"                Box::Action::\"fs:write\"::response{ input.path: _, input.operation: "
	"Box::FsWriteOperation::\"write_content\" } && tp(t)\n"
	"            )\n"
	"        )) == total\n"
	"        && total >= 6\n"
	"    )\n"
	"};\n";

static void
test_times(void)
{
	int64_t ns = 0;
	CHECK_INT(ph_seconds_to_ns("1700000060.000000001", &ns), 0);
	CHECK_INT(ns, 1700000060000000001LL);
	CHECK_INT(ph_seconds_to_ns("60", &ns), 0);
	CHECK_INT(ns, 60000000000LL);
	CHECK_INT(ph_seconds_to_ns("1.5", &ns), 0);
	CHECK_INT(ns, 1500000000LL);
	CHECK_INT(ph_seconds_to_ns("0.1234567891", &ns), 0);
	CHECK_INT(ns, 123456789LL);
	CHECK(ph_seconds_to_ns("1e9", &ns) < 0);
	CHECK(ph_seconds_to_ns("", &ns) < 0);
	CHECK(ph_seconds_to_ns("12x", &ns) < 0);
	CHECK_INT(ph_rfc3339_to_ns("2023-11-14T22:13:20Z", &ns), 0);
	CHECK_INT(ns, 1700000000000000000LL);
	CHECK_INT(ph_rfc3339_to_ns("2023-11-14T22:13:20.000000001Z", &ns), 0);
	CHECK_INT(ns, 1700000000000000001LL);
	CHECK_INT(ph_rfc3339_to_ns("2023-11-14T23:13:20.5+01:00", &ns), 0);
	CHECK_INT(ns, 1700000000500000000LL);
	CHECK(ph_rfc3339_to_ns("2023-11-14 22:13:20", &ns) < 0);
	CHECK(ph_rfc3339_to_ns("2023-13-14T22:13:20Z", &ns) < 0);
}

static struct bp_policy *
load(const char *text)
{
	struct bp_policy *p = NULL;
	struct bp_load_options o = { .home = "/home/u" };
	if (bp_policy_load(text, strlen(text), &o, &p, NULL) < 0)
		return NULL;
	return p;
}

/* Decide one input line; returns "permit"/"deny" or an error text. */
static const char *
eval(struct ph_state *st, struct bp_decision *d, const char *line)
{
	static char err[600];
	int r = ph_line(st, line, d, err, sizeof(err));
	if (r < 0)
		return err;
	return bp_verdict_str(bp_decision_verdict(d));
}

#define WRITE_AT(T)                                                                         \
	"{\"action\":\"fs:write\",\"input\":{\"path\":\"~/project/g\",\"operation\":"       \
	"\"write_content\"},\"at\":" T "}"

static void
test_write_budget_replay(void)
{
	struct bp_policy *p = load(budget);
	struct bp_monitor *mon = NULL;
	struct bp_decision *d = NULL;
	struct ph_state st;
	char path[] = "/tmp/box-test-ph-XXXXXX";

	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_INT(bp_monitor_new(p, &mon, NULL), 0);
	CHECK_INT(bp_decision_new(&d), 0);
	if (!mon || !d)
		return;
	CHECK_INT(ph_init(&st, mon), 0);

	/* Six writes at T0+0..5 s, each followed by its response 0.5 s later; one bad line. */
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	for (int i = 0; i < 6; i++) {
		fprintf(f,
			"{\"action\":\"fs:write\",\"input\":{\"path\":\"~/project/f%d\","
			"\"operation\":\"write_content\"},\"at\":170000000%d}\n",
			i, i);
		fprintf(f,
			"{\"record\":\"response\",\"action\":\"fs:write\",\"input\":{\"path\":"
			"\"~/project/f%d\",\"operation\":\"write_content\"},\"output\":{\"result\":"
			"\"completed\"},\"at\":\"2023-11-14T22:13:2%d.500Z\"}\n",
			i, i);
	}
	fprintf(f, "{\"record\":\"sideways\",\"action\":\"fs:write\",\"input\":{}}\n\n");
	fclose(f);
	CHECK_INT(ph_replay_file(&st, path), 12);
	CHECK_INT(st.errors, 1);
	unlink(path);

	/* t=10: the budget is spent (count 6). */
	CHECK_STR(eval(&st, d, WRITE_AT("1700000010")), "deny");
	CHECK_INT(bp_decision_cause(d), BP_CAUSE_FORBIDDEN);
	/* t=60.5: the response at t=0.5 is exactly 60 s old: still inside. */
	CHECK_STR(eval(&st, d, WRITE_AT("1700000060.5")), "deny");
	/* one nanosecond later it has left the window: count 5. */
	CHECK_STR(eval(&st, d, WRITE_AT("1700000060.500000001")), "permit");
	/* Time must not go backwards. */
	CHECK(strstr(eval(&st, d, WRITE_AT("1700000059")), "backwards") != NULL);
	/* A denied request recorded no response: still 5 at t=61. */
	CHECK_STR(eval(&st, d, WRITE_AT("1700000061")), "permit");
	/* Schema lines are the caller's. */
	char err[100];
	CHECK_INT(ph_line(&st, "{\"schema\":\"x\",\"actions\":{}}", d, err, sizeof(err)), -ENOTSUP);
	CHECK(ph_line(&st, "[1]", d, err, sizeof(err)) < 0);
	CHECK(ph_line(&st, "{\"action\":\"fs:nope\",\"input\":{}}", d, err, sizeof(err)) < 0);
	CHECK(ph_line(&st,
		      "{\"record\":\"error\",\"action\":\"fs:write\",\"input\":{\"path\":\"~/a\","
		      "\"operation\":\"write_content\"},\"output\":{\"result\":\"completed\"}}",
		      d, err, sizeof(err)) < 0);
	CHECK(strstr(err, "no \"output\"") != NULL);
	CHECK_INT(ph_replay_file(&st, "/nonexistent/file"), -ENOENT);

	ph_done(&st);
	bp_decision_free(d);
	bp_monitor_free(mon);
	bp_policy_free(p);
}

int
main(void)
{
	RUN(test_times);
	RUN(test_write_budget_replay);
	return tap_done();
}
