/*
 * test_policy.c — libboxpolicy's C API: load errors with line:col, decide,
 * request problems, the MCP schema extension (pending → reload), and many
 * threads deciding on one immutable policy.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "boxpolicy.h"
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
	RUN(test_threads);
	return tap_done();
}
