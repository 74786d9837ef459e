/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_policy.c — libboxpolicy's C API: load errors with line:col, decide,
 * request problems, the MCP schema extension (pending → reload), per-tool
 * actions as refinements (cause not_refined), a failed namespace's message,
 * the probe (bp_monitor_probe decides as bp_monitor_decide would and moves
 * nothing), and many threads deciding on one immutable policy.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "boxpolicy.h"
#include "boxpolicy_temporal.h"
#include "tap.h"

static const char policy_text[] =
	"@id(\"reads\")\n"
	"permit (principal, action == Box::Action::\"fs:read\", resource)\n"
	"when { context.input.path like \"~/p/*\" };\n"
	"@id(\"no_secret\") @description(\"No.\")\n"
	"forbid (principal, action == Box::Action::\"fs:read\", resource)\n"
	"when { context.input.path like \"*secret*\" };\n"
	"permit (principal, action == demo::Action::\"search\", resource)\n"
	"when { context.input.limit < 10 };\n";

static struct bp_policy *
load(const char *text, const struct bp_schema *s, bool allow_unknown)
{
	struct bp_load_options o = { .home = "/home/dev", .schema = s,
				     .allow_unknown_namespaces = allow_unknown };
	struct bp_policy *p = NULL;
	(void)bp_policy_load(text, strlen(text), &o, &p, NULL);
	return p;
}

static int
decide_path(const struct bp_policy *p, const char *path, enum bp_cause *cause)
{
	struct bp_request *r;
	struct bp_decision *d;
	if (bp_request_new(p, &r) < 0 || bp_decision_new(&d) < 0)
		return -ENOMEM;
	bp_request_set_action(r, "fs:read");
	bp_request_set_string(r, "path", path, strlen(path));
	bp_request_set_string(r, "operation", "read_content", 12);
	int rc = bp_decide(p, r, NULL, d);
	*cause = bp_decision_cause(d);
	bp_decision_free(d);
	bp_request_free(r);
	return rc;
}

static void
test_load_errors(void)
{
	struct bp_diags *d = NULL;
	const char *bad = "permit (principal, action, resource);\n"
			  "permit (principal, action == Box::Action::\"fs:read\", resource)\n"
			  "  when { context.input.paht == \"x\" };\n";
	struct bp_policy *p = NULL;
	CHECK_INT(bp_policy_load(bad, strlen(bad), NULL, &p, &d), -EINVAL);
	CHECK(p == NULL);
	CHECK_INT(bp_diags_errors(d), 1);
	enum bp_severity sev;
	unsigned line, col;
	const char *msg = bp_diag_message(d, 0, &sev, &line, &col);
	CHECK_INT(sev, BP_ERROR);
	CHECK_INT(line, 3);
	CHECK_INT(col, 24); /* the `paht` of context.input.paht */
	CHECK(msg && strstr(msg, "rule 2") && strstr(msg, "paht"));
	bp_diags_free(d);

	size_t rules = 0;
	CHECK_INT(bp_policy_check_text(policy_text, strlen(policy_text), "/home/dev", &rules, &d), 0);
	CHECK_INT(rules, 3);
	CHECK_INT(bp_diags_warnings(d), 1); /* the pending demo namespace */
	bp_diags_free(d);
}

static void
test_decide(void)
{
	struct bp_policy *p = load(policy_text, NULL, true);
	CHECK(p != NULL);
	if (!p)
		return;
	enum bp_cause c;
	CHECK_INT(decide_path(p, "~/p/a", &c), 0);
	CHECK_INT(c, BP_CAUSE_PERMITTED);
	CHECK_INT(decide_path(p, "~/p/secret", &c), 0);
	CHECK_INT(c, BP_CAUSE_FORBIDDEN);
	CHECK_INT(decide_path(p, "/etc", &c), 0);
	CHECK_INT(c, BP_CAUSE_NO_MATCH);

	struct bp_request *r;
	struct bp_decision *d;
	CHECK_INT(bp_request_new(p, &r), 0);
	CHECK_INT(bp_decision_new(&d), 0);
	CHECK_INT(bp_request_set_action(r, "fs:read"), 0);
	CHECK(bp_request_set_string(r, "nope", "x", 1) < 0);
	CHECK(bp_request_problem(r) != NULL);
	CHECK_INT(bp_decide(p, r, NULL, d), 0);
	CHECK_INT(bp_decision_cause(d), BP_CAUSE_ERROR);
	/* the MCP tool: pending until the schema arrives */
	bp_request_reset(r);
	CHECK_INT(bp_request_set_action(r, "demo::Action::\"search\""), 0);
	CHECK_INT(bp_decide(p, r, NULL, d), 0);
	CHECK_INT(bp_decision_cause(d), BP_CAUSE_ERROR);
	CHECK(strstr(bp_decision_message(d), "policy-pending") != NULL);
	bp_request_free(r);

	struct bp_schema *s;
	CHECK_INT(bp_schema_new(&s), 0);
	CHECK_INT(bp_schema_add_action(s, "demo", "search"), 0);
	CHECK_INT(bp_schema_add_field(s, "demo", "search", "limit", "Long", false), 0);
	struct bp_policy *p2 = NULL;
	CHECK_INT(bp_policy_reload(p, s, &p2, NULL), 0);
	bp_schema_free(s);
	if (p2) {
		CHECK_INT(bp_request_new(p2, &r), 0);
		CHECK_INT(bp_request_set_action(r, "demo::Action::\"search\""), 0);
		CHECK_INT(bp_request_set_long(r, "limit", 3), 0);
		CHECK_INT(bp_decide(p2, r, NULL, d), 0);
		CHECK_INT(bp_decision_cause(d), BP_CAUSE_PERMITTED);
		CHECK_STR(bp_decision_rule_name(d, 0), "policy_2");
		CHECK_STR(bp_decision_message(d), "policy permitted this operation on 'demo/search'.");
		bp_request_free(r);
	}
	/* a schema whose types do not fit the rule refuses the reload */
	CHECK_INT(bp_schema_new(&s), 0);
	CHECK_INT(bp_schema_add_action(s, "demo", "search"), 0);
	CHECK_INT(bp_schema_add_field(s, "demo", "search", "limit", "String", false), 0);
	struct bp_policy *p3 = NULL;
	CHECK_INT(bp_policy_reload(p, s, &p3, NULL), -EINVAL);
	bp_schema_free(s);
	bp_policy_free(p2);
	bp_decision_free(d);
	bp_policy_free(p);
}

/* A decision that skips a permit's message: only a permit by a permit rule loses it. */
static void
test_skip_permit_message(void)
{
	struct bp_policy *p = load(policy_text, NULL, true);
	CHECK(p != NULL);
	if (!p)
		return;
	struct bp_request *r;
	struct bp_decision *d;
	CHECK_INT(bp_request_new(p, &r), 0);
	CHECK_INT(bp_decision_new(&d), 0);
	static const char *const paths[] = { "~/p/a", "~/p/secret", "/etc" };
	for (int skip = 0; skip < 2; skip++) {
		bp_decision_skip_permit_message(d, skip);
		for (int i = 0; i < 3; i++) {
			bp_request_reset(r);
			CHECK_INT(bp_request_set_action(r, "fs:read"), 0);
			CHECK_INT(bp_request_set_string(r, "path", paths[i], strlen(paths[i])), 0);
			CHECK_INT(bp_request_set_string(r, "operation", "read_content", 12), 0);
			CHECK_INT(bp_decide(p, r, NULL, d), 0);
			const char *m = bp_decision_message(d);
			if (i == 0 && skip) {
				CHECK_STR(m, "");
			} else {
				CHECK(strstr(m, i == 0 ? "policy permitted" : "policy denied") == m);
				CHECK(strstr(m, paths[i]) != NULL);
			}
		}
	}
	bp_decision_free(d);
	bp_request_free(r);
	bp_policy_free(p);
}

static const char refine_text[] =
	"@id(\"small\")\n"
	"permit (principal, action == demo::Action::\"search\", resource)\n"
	"when { context.input.limit < 10 };\n"
	"@id(\"huge\")\n"
	"forbid (principal, action == demo::Action::\"search\", resource)\n"
	"when { context.input.limit > 100 };\n"
	"forbid (principal, action == demo::Action::\"mul\", resource)\n"
	"when { context.input.a * 2 > 0 };\n";

static enum bp_cause
decide_tool(const struct bp_policy *p, const char *action, const char *field, int64_t v,
	    char *msg, size_t len)
{
	struct bp_request *r = NULL;
	struct bp_decision *d = NULL;
	enum bp_cause c = (enum bp_cause)-1;
	if (bp_request_new(p, &r) == 0 && bp_decision_new(&d) == 0 &&
	    bp_request_set_action(r, action) == 0 && bp_request_set_long(r, field, v) == 0 &&
	    bp_decide(p, r, NULL, d) == 0) {
		c = bp_decision_cause(d);
		/* a permit is permitted or not_refined, never anything else */
		if ((bp_decision_verdict(d) == BP_PERMIT) !=
		    (c == BP_CAUSE_PERMITTED || c == BP_CAUSE_NOT_REFINED))
			c = (enum bp_cause)-2;
		snprintf(msg, len, "%s", bp_decision_message(d));
	}
	bp_decision_free(d);
	bp_request_free(r);
	return c;
}

static void
test_refinement(void)
{
	struct bp_schema *s;
	char msg[BP_MAX_MESSAGE + 1];
	CHECK_INT(bp_schema_new(&s), 0);
	CHECK_INT(bp_schema_add_field(s, "demo", "search", "limit", "Long", false), -ENOENT);
	CHECK_INT(bp_schema_add_action(s, "demo", "search"), 0);
	CHECK_INT(bp_schema_add_field(s, "demo", "search", "limit", "Long", false), 0);
	CHECK_INT(bp_schema_add_action(s, "demo", "mul"), 0);
	CHECK_INT(bp_schema_add_field(s, "demo", "mul", "a", "Long", false), 0);
	/* a namespace with tools cannot also be failed */
	CHECK_INT(bp_schema_add_failed(s, "demo", "demo", "x"), -EEXIST);
	struct bp_policy *p = load(refine_text, s, false);
	bp_schema_free(s);
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_INT(decide_tool(p, "demo::Action::\"search\"", "limit", 3, msg, sizeof(msg)),
		  BP_CAUSE_PERMITTED);
	CHECK_INT(decide_tool(p, "demo::Action::\"search\"", "limit", 500, msg, sizeof(msg)),
		  BP_CAUSE_FORBIDDEN);
	/* nothing matched: the refinement leaves the permitted mcp:call permitted */
	CHECK_INT(decide_tool(p, "demo::Action::\"search\"", "limit", 50, msg, sizeof(msg)),
		  BP_CAUSE_NOT_REFINED);
	CHECK_STR(msg, "policy permitted this operation on 'demo/search'.");
	CHECK_STR(bp_cause_str(BP_CAUSE_NOT_REFINED), "not_refined");
	/* an evaluation error still denies */
	CHECK_INT(decide_tool(p, "demo::Action::\"mul\"", "a", INT64_MAX, msg, sizeof(msg)),
		  BP_CAUSE_ERROR);
	CHECK_INT(decide_tool(p, "demo::Action::\"mul\"", "a", -1, msg, sizeof(msg)),
		  BP_CAUSE_NOT_REFINED);
	/* every Box action still defaults to deny */
	enum bp_cause c;
	CHECK_INT(decide_path(p, "/etc", &c), 0);
	CHECK_INT(c, BP_CAUSE_NO_MATCH);
	bp_policy_free(p);

	/* a failed namespace: its actions deny with the reason */
	CHECK_INT(bp_schema_new(&s), 0);
	CHECK_INT(bp_schema_add_failed(s, "demo", "demo-srv", "line 3:22: @id(\"small\"): bad"), 0);
	p = load(refine_text, s, false);
	CHECK(p != NULL);
	if (p) {
		CHECK_INT(decide_tool(p, "demo::Action::\"search\"", "limit", 3, msg, sizeof(msg)),
			  BP_CAUSE_ERROR);
		CHECK_STR(msg, "policy denied this operation on 'demo/search' [policy-failed]: The "
			       "tool schema of [mcp.demo-srv] failed the policy check (line 3:22: "
			       "@id(\"small\"): bad).");
		bp_policy_free(p);
	}
	/* declaring its tools clears it */
	CHECK_INT(bp_schema_add_action(s, "demo", "search"), 0);
	CHECK_INT(bp_schema_add_field(s, "demo", "search", "limit", "Long", false), 0);
	CHECK_INT(bp_schema_add_action(s, "demo", "mul"), 0);
	CHECK_INT(bp_schema_add_field(s, "demo", "mul", "a", "Long", false), 0);
	p = load(refine_text, s, false);
	bp_schema_free(s);
	CHECK(p != NULL);
	if (p) {
		CHECK_INT(decide_tool(p, "demo::Action::\"search\"", "limit", 3, msg, sizeof(msg)),
			  BP_CAUSE_PERMITTED);
		bp_policy_free(p);
	}
	/* pending: named as such */
	CHECK_INT(bp_schema_new(&s), 0);
	CHECK_INT(bp_schema_add_pending(s, "demo"), 0);
	p = load(refine_text, s, false);
	bp_schema_free(s);
	if (p) {
		CHECK_INT(decide_tool(p, "demo::Action::\"search\"", "limit", 3, msg, sizeof(msg)),
			  BP_CAUSE_ERROR);
		CHECK_STR(msg, "policy denied this operation on 'demo/search' [policy-pending]: The "
			       "tool schema of this MCP server is not known yet (no tools/list seen).");
		bp_policy_free(p);
	}
}

/*
 * A budget (incremental count), a `previous` rule (every event retained)
 * and a refinement budget; the windows expire during the run.
 */
static const char probe_text[] =
	"permit (principal, action, resource);\n"
	"@id(\"writes\")\n"
	"forbid (principal, action == Box::Action::\"fs:write\", resource)\n"
	"when temporal { exists (n: Long). ((count for (t: Timepoint). where (formerly within 10s\n"
	"  (Box::Action::\"fs:write\"::request{ input.path: _ } && tp(t)))) == n && n >= 4) };\n"
	"@id(\"after_delete\")\n"
	"forbid (principal, action == Box::Action::\"fs:read\", resource)\n"
	"when temporal { previous within 5s (Box::Action::\"fs:delete\"::request{ input.path: _ }) };\n"
	"@id(\"adds\")\n"
	"forbid (principal, action == demo::Action::\"add\", resource)\n"
	"when temporal { exists (n: Long). ((count for (t: Timepoint). where (formerly within 8s\n"
	"  (demo::Action::\"add\"::request{ input.a: _ } && tp(t)))) == n && n > 2) };\n";

static int
set_req(struct bp_request *r, unsigned k)
{
	static const char *const paths[] = { "~/a", "~/b", "~/c" };
	const char *path = paths[k % 3];
	bp_request_reset(r);
	switch (k % 4) {
	case 0:
	case 3:
		bp_request_set_action(r, "fs:write");
		bp_request_set_string(r, "operation", "write_content", 13);
		break;
	case 1:
		bp_request_set_action(r, "fs:read");
		bp_request_set_string(r, "operation", "read_content", 12);
		break;
	default:
		if (k % 8 == 2) {
			bp_request_set_action(r, "fs:delete");
			bp_request_set_string(r, "operation", "remove_file", 11);
		} else {
			bp_request_set_action(r, "demo::Action::\"add\"");
			return bp_request_set_long(r, "a", (int64_t)k);
		}
		break;
	}
	return bp_request_set_string(r, "path", path, strlen(path));
}

static void
test_probe(void)
{
	struct bp_schema *s;
	CHECK_INT(bp_schema_new(&s), 0);
	CHECK_INT(bp_schema_add_action(s, "demo", "add"), 0);
	CHECK_INT(bp_schema_add_field(s, "demo", "add", "a", "Long", false), 0);
	struct bp_policy *p = load(probe_text, s, false);
	bp_schema_free(s);
	CHECK(p != NULL);
	if (!p)
		return;
	struct bp_monitor *m = NULL;
	struct bp_request *r = NULL;
	struct bp_decision *dp = NULL, *dd = NULL;
	CHECK_INT(bp_monitor_new(p, &m, NULL), 0);
	CHECK_INT(bp_request_new(p, &r), 0);
	CHECK_INT(bp_decision_new(&dp), 0);
	CHECK_INT(bp_decision_new(&dd), 0);
	if (!m || !r || !dp || !dd)
		return;
	size_t n_rules = bp_policy_rule_count(p);
	unsigned mismatches = 0, moved = 0, denials = 0;
	int64_t t = 1000000000000LL;
	for (unsigned k = 0; k < 400; k++) {
		/* uneven steps: windows fill and expire */
		t += (k % 7 == 0 ? 3000 : 700) * 1000000LL;
		CHECK_INT(set_req(r, k), 0);
		size_t before[8];
		for (size_t i = 0; i < n_rules && i < 8; i++)
			before[i] = bp_monitor_rule_events(m, i);
		int64_t last = bp_monitor_last_time(m);
		size_t mem = bp_monitor_memory(m);
		/* three probes: the same answer each time, nothing moves */
		for (int j = 0; j < 3; j++) {
			CHECK_INT(bp_monitor_probe(m, r, t, dp), 0);
			for (size_t i = 0; i < n_rules && i < 8; i++)
				moved += bp_monitor_rule_events(m, i) != before[i];
			moved += bp_monitor_last_time(m) != last;
			moved += bp_monitor_memory(m) != mem;
		}
		CHECK_INT(bp_monitor_decide(m, r, t, dd, NULL), 0);
		if (bp_decision_verdict(dp) != bp_decision_verdict(dd) ||
		    bp_decision_cause(dp) != bp_decision_cause(dd) ||
		    strcmp(bp_decision_message(dp), bp_decision_message(dd)) != 0) {
			if (mismatches++ < 5)
				printf("#   event %u: probe %s/%s, decide %s/%s\n", k,
				       bp_verdict_str(bp_decision_verdict(dp)),
				       bp_cause_str(bp_decision_cause(dp)),
				       bp_verdict_str(bp_decision_verdict(dd)),
				       bp_cause_str(bp_decision_cause(dd)));
		}
		denials += bp_decision_verdict(dd) == BP_DENY;
	}
	CHECK_INT(mismatches, 0);
	CHECK_INT(moved, 0);
	/* the rules did deny sometimes (the test is not vacuous), not always */
	CHECK(denials > 20 && denials < 380);
	printf("# %u of 400 denied\n", denials);
	/* a request that does not fit the schema: denied, cause error, as bp_monitor_decide */
	bp_request_reset(r);
	CHECK_INT(bp_request_set_action(r, "fs:write"), 0);
	CHECK_INT(bp_monitor_probe(m, r, t, dp), 0);
	CHECK_INT(bp_decision_cause(dp), BP_CAUSE_ERROR);
	bp_decision_free(dp);
	bp_decision_free(dd);
	bp_request_free(r);
	bp_monitor_free(m);
	bp_policy_free(p);
}

struct worker {
	const struct bp_policy *p;
	int mismatches;
};

static void *
work(void *arg)
{
	struct worker *w = arg;
	static const char *const paths[] = { "~/p/a", "~/p/secret", "/etc", "~/p/b/c" };
	static const enum bp_cause want[] = { BP_CAUSE_PERMITTED, BP_CAUSE_FORBIDDEN,
					      BP_CAUSE_NO_MATCH, BP_CAUSE_PERMITTED };
	for (int i = 0; i < 20000; i++) {
		enum bp_cause c;
		if (decide_path(w->p, paths[i % 4], &c) < 0 || c != want[i % 4])
			w->mismatches++;
	}
	return NULL;
}

static void
test_threads(void)
{
	struct bp_policy *p = load(policy_text, NULL, true);
	CHECK(p != NULL);
	if (!p)
		return;
	pthread_t t[4];
	struct worker w[4];
	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){ .p = p };
		CHECK_INT(pthread_create(&t[i], NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		CHECK_INT(w[i].mismatches, 0);
	}
	bp_policy_free(p);
}

int
main(void)
{
	RUN(test_load_errors);
	RUN(test_decide);
	RUN(test_skip_permit_message);
	RUN(test_refinement);
	RUN(test_probe);
	RUN(test_threads);
	return tap_done();
}
