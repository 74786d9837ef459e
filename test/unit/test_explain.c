/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_explain.c — libboxpolicy's explain API (bp_explain, explain.c, and the
 * monitor's explain hook): for each kind of rule — permit and forbid, when
 * and unless, `like`, `has`, `in`, `||`, `!`, `if`, several clauses, an
 * erroring rule, temporal count / formerly / previous / ::response terms —
 * the outcome, the clause that decided, the sub-expression as written with
 * its line and column, the values read and the events listed; outcomes that
 * agree with bp_decide over a batch of requests; a request that does not fit
 * the schema; a temporal term explained without a history; and that
 * explaining changes no decision (bp_decide before and after agree).
 *
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "boxpolicy.h"
#include "boxpolicy_temporal.h"
#include "tap.h"

#define S 1000000000LL

static struct bp_policy *
load(const char *text)
{
	struct bp_policy *p = NULL;
	struct bp_diags *d = NULL;
	struct bp_load_options o = { .home = "/home/dev" };
	int r = bp_policy_load(text, strlen(text), &o, &p, &d);
	if (r < 0)
		for (size_t i = 0; i < bp_diags_count(d); i++)
			printf("#   load: %s\n", bp_diag_message(d, i, NULL, NULL, NULL));
	bp_diags_free(d);
	return p;
}

static void
fs_req(struct bp_request *r, const char *action, const char *path, const char *op)
{
	bp_request_reset(r);
	bp_request_set_action(r, action);
	bp_request_set_string(r, "path", path, strlen(path));
	bp_request_set_string(r, "operation", op, strlen(op));
}

static void
exec_req(struct bp_request *r, const char *program, const char *arg1, long args)
{
	bp_request_reset(r);
	bp_request_set_action(r, "shell:exec");
	bp_request_set_string(r, "command", program, strlen(program));
	bp_request_set_string(r, "program", program, strlen(program));
	if (arg1)
		bp_request_set_string(r, "arg1", arg1, strlen(arg1));
	bp_request_set_long(r, "arg_count", args);
	bp_request_set_string(r, "cwd", "~", 1);
}

/* The explained rule named NAME, or NULL. */
static const struct bp_explain_rule *
rule_named(const struct bp_explain *x, const char *name)
{
	for (size_t i = 0; i < bp_explain_rule_count(x); i++)
		if (strcmp(bp_explain_rule_at(x, i)->name, name) == 0)
			return bp_explain_rule_at(x, i);
	return NULL;
}

/* The last (deciding) clause of rule NAME. */
static const struct bp_explain_clause *
decider(const struct bp_explain *x, const char *name)
{
	const struct bp_explain_rule *r = rule_named(x, name);
	if (!r || !r->n_clauses)
		return NULL;
	return &r->clauses[r->n_clauses - 1];
}

static const char plain[] =
	"@id(\"read_p\")\n"
	"permit (principal, action == Box::Action::\"fs:read\", resource)\n"
	"when { context.input.path like \"~/p/*\" };\n"
	"@id(\"no_secret\") @description(\"secrets\")\n"
	"forbid (principal, action == Box::Action::\"fs:read\", resource)\n"
	"when { context.input.path like \"~/p/*\" }\n"
	"unless { context.input.operation in [Box::FsReadOperation::\"read_metadata\",\n"
	"                                     Box::FsReadOperation::\"enumerate\"] };\n"
	"@id(\"git_status\")\n"
	"permit (principal, action == Box::Action::\"shell:exec\", resource)\n"
	"when { context.input.program == \"git\" && (context.input has arg1 && context.input.arg1 "
	"== \"status\") };\n"
	"@id(\"ls_or_cat\")\n"
	"permit (principal, action == Box::Action::\"shell:exec\", resource)\n"
	"when { context.input.program == \"ls\" || context.input.program == \"cat\" };\n"
	"@id(\"not_rm\")\n"
	"permit (principal, action == Box::Action::\"shell:exec\", resource)\n"
	"when { !(context.input.program == \"rm\") }\n"
	"when { if context.input.arg_count > 2 then false else context.input.program != \"sh\" };\n"
	"@id(\"ovf\")\n"
	"forbid (principal, action == Box::Action::\"shell:exec\", resource)\n"
	"when { context.input.arg_count * 9223372036854775807 > 1 };\n"
	"@id(\"all_write\")\n"
	"permit (principal, action == Box::Action::\"fs:write\", resource);\n";

static void
test_like_when_unless_in(void)
{
	struct bp_policy *p = load(plain);
	CHECK(p != NULL);
	if (!p)
		return;
	struct bp_request *r = NULL;
	struct bp_decision *d = NULL;
	struct bp_explain *x = NULL;
	CHECK_INT(bp_request_new(p, &r), 0);
	CHECK_INT(bp_decision_new(&d), 0);
	CHECK_INT(bp_explain_new(&x), 0);

	/* a path outside ~/p: the permit's like is false, with the value it read */
	fs_req(r, "fs:read", "~/q/a", "read_content");
	CHECK_INT(bp_decide(p, r, NULL, d), 0);
	CHECK_INT(bp_decision_cause(d), BP_CAUSE_NO_MATCH);
	CHECK_INT(bp_explain(p, r, NULL, x), 0);
	CHECK(bp_explain_problem(x) == NULL);
	CHECK_INT(bp_explain_rule_count(x), 2); /* the two fs:read rules, in file order */
	CHECK_STR(bp_explain_rule_at(x, 0)->name, "read_p");
	CHECK_STR(bp_explain_rule_at(x, 1)->name, "no_secret");
	const struct bp_explain_rule *er = rule_named(x, "read_p");
	CHECK(er && er->outcome == BP_EXPLAIN_NOT_MATCHED && !er->forbid && er->line == 2);
	const struct bp_explain_clause *c = decider(x, "read_p");
	CHECK(c != NULL);
	if (c) {
		CHECK_INT(c->index, 1);
		CHECK(!c->unless);
		CHECK_INT(c->value, BP_EXPLAIN_FALSE);
		CHECK_STR(c->at, "context.input.path like \"~/p/*\"");
		CHECK_INT(c->at_line, 3);
		CHECK_INT(c->at_col, 8);
		CHECK_STR(c->detail, "context.input.path is \"~/q/a\"");
	}
	CHECK_STR(er ? er->text : NULL,
		  "permit read_p (line 2) did not match: when clause 1 was false at "
		  "`context.input.path like \"~/p/*\"` (context.input.path is \"~/q/a\")");

	/* inside ~/p, read_content: the forbid's unless clause is false -> it matched */
	fs_req(r, "fs:read", "~/p/a", "read_content");
	CHECK_INT(bp_decide(p, r, NULL, d), 0);
	CHECK_INT(bp_decision_cause(d), BP_CAUSE_FORBIDDEN);
	CHECK_INT(bp_explain(p, r, NULL, x), 0);
	er = rule_named(x, "no_secret");
	CHECK(er && er->outcome == BP_EXPLAIN_MATCHED && er->forbid && er->n_clauses == 2);
	c = decider(x, "no_secret");
	if (c) {
		CHECK_INT(c->index, 2);
		CHECK(c->unless);
		CHECK_INT(c->value, BP_EXPLAIN_FALSE);
		/* a multi-line expression: whitespace folded, its start line */
		CHECK_STR(c->at, "context.input.operation in [Box::FsReadOperation::\"read_metadata\", "
				 "Box::FsReadOperation::\"enumerate\"]");
		CHECK_INT(c->at_line, 7);
		CHECK_STR(c->detail,
			  "context.input.operation is Box::FsReadOperation::\"read_content\"");
	}
	CHECK(rule_named(x, "read_p")->outcome == BP_EXPLAIN_MATCHED);

	/* enumerate: the unless clause held -> the forbid did not match */
	fs_req(r, "fs:read", "~/p/d", "enumerate");
	CHECK_INT(bp_explain(p, r, NULL, x), 0);
	er = rule_named(x, "no_secret");
	CHECK(er && er->outcome == BP_EXPLAIN_NOT_MATCHED);
	c = decider(x, "no_secret");
	CHECK(c && c->unless && c->value == BP_EXPLAIN_TRUE);
	CHECK(er && strstr(er->text, "unless clause 2 was true at `context.input.operation in [") != NULL);

	/* a rule with no condition */
	fs_req(r, "fs:write", "~/p/a", "write_content");
	CHECK_INT(bp_explain(p, r, NULL, x), 0);
	er = rule_named(x, "all_write");
	CHECK(er && er->outcome == BP_EXPLAIN_MATCHED && er->n_clauses == 0);
	CHECK(er && strstr(er->text, "it has no condition") != NULL);

	bp_explain_free(x);
	bp_decision_free(d);
	bp_request_free(r);
	bp_policy_free(p);
}

static void
test_has_or_not_if_error(void)
{
	struct bp_policy *p = load(plain);
	CHECK(p != NULL);
	if (!p)
		return;
	struct bp_request *r = NULL;
	struct bp_decision *d = NULL;
	struct bp_explain *x = NULL;
	CHECK_INT(bp_request_new(p, &r), 0);
	CHECK_INT(bp_decision_new(&d), 0);
	CHECK_INT(bp_explain_new(&x), 0);

	/* git without arguments: `has` is the false side of the inner && */
	exec_req(r, "git", NULL, 0);
	CHECK_INT(bp_explain(p, r, NULL, x), 0);
	const struct bp_explain_clause *c = decider(x, "git_status");
	CHECK(c && c->value == BP_EXPLAIN_FALSE);
	if (c) {
		CHECK_STR(c->at, "context.input has arg1");
		CHECK(strstr(c->detail, "context.input is {") != NULL);
	}
	/* git log: the comparison after the has */
	exec_req(r, "git", "log", 1);
	CHECK_INT(bp_explain(p, r, NULL, x), 0);
	c = decider(x, "git_status");
	CHECK(c && c->value == BP_EXPLAIN_FALSE);
	if (c) {
		CHECK_STR(c->at, "context.input.arg1 == \"status\"");
		CHECK_STR(c->detail, "context.input.arg1 is \"log\"");
	}
	/* cat: the true side of || decides */
	exec_req(r, "cat", NULL, 0);
	CHECK_INT(bp_explain(p, r, NULL, x), 0);
	c = decider(x, "ls_or_cat");
	CHECK(c && c->value == BP_EXPLAIN_TRUE && rule_named(x, "ls_or_cat")->outcome == BP_EXPLAIN_MATCHED);
	if (c)
		CHECK_STR(c->at, "context.input.program == \"cat\"");
	/* rm: `!` — the clause is false at the comparison, which was true */
	exec_req(r, "rm", NULL, 0);
	CHECK_INT(bp_explain(p, r, NULL, x), 0);
	c = decider(x, "not_rm");
	CHECK(c && c->index == 1 && c->value == BP_EXPLAIN_FALSE && c->at_value == BP_EXPLAIN_TRUE);
	if (c)
		CHECK_STR(c->at, "(context.input.program == \"rm\")"); /* its parentheses as written */
	CHECK(strstr(rule_named(x, "not_rm")->text, "was false at `(context.input.program == \"rm\")`, "
						   "which was true") != NULL);
	/* if: the taken branch */
	exec_req(r, "sh", NULL, 0);
	CHECK_INT(bp_explain(p, r, NULL, x), 0);
	c = decider(x, "not_rm");
	CHECK(c && c->index == 2 && c->value == BP_EXPLAIN_FALSE);
	if (c)
		CHECK_STR(c->at, "context.input.program != \"sh\"");
	/* an erroring rule: the innermost failing node and why */
	exec_req(r, "ls", NULL, 2);
	CHECK_INT(bp_decide(p, r, NULL, d), 0);
	CHECK_INT(bp_decision_cause(d), BP_CAUSE_ERROR);
	CHECK_INT(bp_explain(p, r, NULL, x), 0);
	const struct bp_explain_rule *er = rule_named(x, "ovf");
	CHECK(er && er->outcome == BP_EXPLAIN_ERROR);
	c = decider(x, "ovf");
	CHECK(c && c->value == BP_EXPLAIN_FAILED && c->at_value == BP_EXPLAIN_FAILED);
	if (c) {
		CHECK_STR(c->at, "context.input.arg_count * 9223372036854775807");
		CHECK_STR(c->detail, "integer overflow");
	}
	CHECK(er && strstr(er->text, "could not be evaluated: when clause 1 failed at") != NULL);

	bp_explain_free(x);
	bp_decision_free(d);
	bp_request_free(r);
	bp_policy_free(p);
}

/* Over many requests: the explained outcomes give bp_decide's verdict and rules. */
static void
test_agrees_with_decide(void)
{
	struct bp_policy *p = load(plain);
	CHECK(p != NULL);
	if (!p)
		return;
	struct bp_request *r = NULL;
	struct bp_decision *d = NULL, *d2 = NULL;
	struct bp_explain *x = NULL;
	CHECK_INT(bp_request_new(p, &r), 0);
	CHECK_INT(bp_decision_new(&d), 0);
	CHECK_INT(bp_decision_new(&d2), 0);
	CHECK_INT(bp_explain_new(&x), 0);
	static const char *const progs[] = { "git", "ls", "cat", "rm", "sh", "make" };
	static const char *const args[] = { NULL, "status", "log" };
	static const char *const paths[] = { "~/p/a", "~/q", "~/p", "/etc/passwd" };
	static const char *const ops[] = { "read_content", "enumerate", "read_metadata", "exec" };
	int n = 0, bad = 0;
	for (int k = 0; k < 6 * 3 * 4 + 16; k++) {
		if (k < 72)
			exec_req(r, progs[k % 6], args[(k / 6) % 3], (k / 18) % 4);
		else
			fs_req(r, "fs:read", paths[(k - 72) % 4], ops[((k - 72) / 4) % 4]);
		CHECK_INT(bp_decide(p, r, NULL, d), 0);
		CHECK_INT(bp_explain(p, r, NULL, x), 0);
		CHECK_INT(bp_decide(p, r, NULL, d2), 0); /* explaining changed nothing */
		CHECK_INT(bp_decision_cause(d2), bp_decision_cause(d));
		size_t nf = 0, np = 0, ne = 0;
		for (size_t i = 0; i < bp_explain_rule_count(x); i++) {
			const struct bp_explain_rule *er = bp_explain_rule_at(x, i);
			if (er->outcome == BP_EXPLAIN_ERROR)
				ne++;
			else if (er->outcome == BP_EXPLAIN_MATCHED)
				*(er->forbid ? &nf : &np) += 1;
		}
		enum bp_cause want = ne ? BP_CAUSE_ERROR : nf ? BP_CAUSE_FORBIDDEN
					: np ? BP_CAUSE_PERMITTED : BP_CAUSE_NO_MATCH;
		size_t nrules = ne ? ne : nf ? nf : np;
		if (want != bp_decision_cause(d) || nrules != bp_decision_rule_count(d))
			bad++;
		n++;
	}
	printf("#   %d requests explained, %d disagreements\n", n, bad);
	CHECK_INT(bad, 0);
	bp_explain_free(x);
	bp_decision_free(d);
	bp_decision_free(d2);
	bp_request_free(r);
	bp_policy_free(p);
}

static void
test_problem_and_no_history(void)
{
	struct bp_policy *p = load(
		"@id(\"cap\")\n"
		"forbid (principal, action == Box::Action::\"fs:write\", resource)\n"
		"when temporal { formerly within 10s (Box::Action::\"fs:delete\"::request{ input.path: _ }) };\n"
		"permit (principal, action == Box::Action::\"fs:write\", resource);\n");
	CHECK(p != NULL);
	if (!p)
		return;
	struct bp_request *r = NULL;
	struct bp_explain *x = NULL;
	CHECK_INT(bp_request_new(p, &r), 0);
	CHECK_INT(bp_explain_new(&x), 0);
	/* a request that lacks a required field: no rule is looked at */
	bp_request_reset(r);
	bp_request_set_action(r, "fs:write");
	bp_request_set_string(r, "path", "~/a", 3);
	CHECK_INT(bp_explain(p, r, NULL, x), 0);
	CHECK(bp_explain_problem(x) != NULL);
	CHECK(bp_explain_problem(x) && strstr(bp_explain_problem(x), "operation") != NULL);
	CHECK_INT(bp_explain_rule_count(x), 0);
	/* a temporal term without a hook: an error, and the note says why */
	fs_req(r, "fs:write", "~/a", "write_content");
	CHECK_INT(bp_explain(p, r, NULL, x), 0);
	const struct bp_explain_clause *c = decider(x, "cap");
	CHECK(c && c->value == BP_EXPLAIN_FAILED && c->temporal);
	CHECK(c && c->n_notes == 1 && strstr(c->notes[0], "no history") != NULL);
	CHECK(c && strcmp(c->detail, "no history to evaluate a temporal condition") == 0);
	bp_explain_free(x);
	bp_request_free(r);
	bp_policy_free(p);
}

static const char temporal[] =
	"@id(\"budget\")\n"
	"forbid (principal, action == Box::Action::\"fs:write\", resource)\n"
	"when temporal { count for (p: String). where formerly within 60s (\n"
	"  Box::Action::\"fs:write\"::request{ input.path: p }) > 2 };\n"
	"@id(\"after_delete\")\n"
	"forbid (principal, action == Box::Action::\"fs:write\", resource)\n"
	"when { temporal { formerly within 10s (Box::Action::\"fs:delete\"::response{ input.path: _,"
	" output.result: Box::FsResponseResult::\"completed\" }) } };\n"
	"@id(\"prev\")\n"
	"forbid (principal, action == Box::Action::\"fs:write\", resource)\n"
	"when temporal { previous within 5s (Box::Action::\"fs:read\"::request{ input.path: \"~/s\" }) };\n"
	"@id(\"w\")\n"
	"permit (principal, action == Box::Action::\"fs:write\", resource);\n";

static void
observe(struct bp_monitor *m, struct bp_event *e, enum bp_event_kind k, const char *action,
	const char *path, const char *op, int64_t t)
{
	bp_event_reset(e);
	bp_event_set_kind(e, k);
	bp_event_set_time(e, t);
	fs_req(bp_event_request(e), action, path, op);
	if (k == BP_EVENT_RESPONSE)
		bp_event_set_output_string(e, "result", "completed", 9);
	CHECK_INT(bp_monitor_observe(m, e, NULL), 0);
}

static bool
has_event(const struct bp_explain_clause *c, const char *fields_part, const char *role_part)
{
	for (size_t i = 0; c && i < c->n_events; i++)
		if (strstr(c->events[i].fields, fields_part) && strstr(c->events[i].role, role_part))
			return true;
	return false;
}

static bool
has_note(const struct bp_explain_clause *c, const char *part)
{
	for (size_t i = 0; c && i < c->n_notes; i++)
		if (strstr(c->notes[i], part))
			return true;
	return false;
}

static void
test_temporal_events(void)
{
	struct bp_policy *p = load(temporal);
	CHECK(p != NULL);
	if (!p)
		return;
	struct bp_monitor *m = NULL;
	struct bp_event *e = NULL;
	struct bp_request *r = NULL;
	struct bp_decision *d = NULL;
	struct bp_explain *x = NULL;
	CHECK_INT(bp_monitor_new(p, &m, NULL), 0);
	CHECK_INT(bp_event_new(p, &e), 0);
	CHECK_INT(bp_request_new(p, &r), 0);
	CHECK_INT(bp_decision_new(&d), 0);
	CHECK_INT(bp_explain_new(&x), 0);
	struct bp_temporal_hook hook = bp_monitor_hook(m);
	int64_t t0 = 1000 * S;

	/* two writes, then a third: the budget's count reaches 3 */
	fs_req(r, "fs:write", "~/a", "write_content");
	CHECK_INT(bp_monitor_decide(m, r, t0, d, NULL), 0);
	fs_req(r, "fs:write", "~/b", "write_content");
	CHECK_INT(bp_monitor_decide(m, r, t0 + 1 * S, d, NULL), 0);
	CHECK_INT(bp_decision_verdict(d), BP_PERMIT);
	CHECK_INT(bp_explain(p, r, &hook, x), 0);
	const struct bp_explain_clause *c = decider(x, "budget");
	CHECK(c && c->temporal && c->value == BP_EXPLAIN_FALSE);
	CHECK(has_note(c, "count(…) = 2 > 2: false"));
	CHECK(has_note(c, "held at 2 of the 2 events in the window"));
	CHECK(has_event(c, "path=\"~/a\"", "counted: formerly within 60s: held"));
	CHECK(has_event(c, "path=\"~/b\"", "counted"));

	fs_req(r, "fs:write", "~/c", "write_content");
	CHECK_INT(bp_monitor_decide(m, r, t0 + 2 * S, d, NULL), 0);
	CHECK_INT(bp_decision_cause(d), BP_CAUSE_FORBIDDEN);
	CHECK_INT(bp_explain(p, r, &hook, x), 0);
	const struct bp_explain_rule *er = rule_named(x, "budget");
	CHECK(er && er->outcome == BP_EXPLAIN_MATCHED);
	c = decider(x, "budget");
	CHECK(has_note(c, "count(…) = 3 > 2: true"));
	CHECK(c && c->n_events == 3);
	if (c && c->n_events == 3) {
		CHECK_INT(c->events[0].time_ns, t0 + 2 * S); /* the current request first */
		CHECK_STR(c->events[0].kind, "request");
		CHECK_STR(c->events[0].action, "fs:write");
	}
	/* the ::response condition: no completed delete yet */
	c = decider(x, "after_delete");
	CHECK(c && !c->temporal && c->value == BP_EXPLAIN_FALSE);
	CHECK(has_note(c, "formerly within 10s: held at 0 of the"));
	CHECK(c && strcmp(c->at, "temporal { formerly within 10s (Box::Action::\"fs:delete\"::"
				 "response{ input.path: _, output.result: "
				 "Box::FsResponseResult::\"completed\" }) }") == 0);

	/* a completed delete: the response event satisfies it */
	observe(m, e, BP_EVENT_RESPONSE, "fs:delete", "~/gone", "remove_file", t0 + 3 * S);
	fs_req(r, "fs:write", "~/d", "write_content");
	CHECK_INT(bp_monitor_decide(m, r, t0 + 4 * S, d, NULL), 0);
	CHECK_INT(bp_explain(p, r, &hook, x), 0);
	c = decider(x, "after_delete");
	CHECK(c && c->value == BP_EXPLAIN_TRUE);
	CHECK(has_event(c, "output.result=Box::FsResponseResult::\"completed\"",
			"formerly within 10s: held"));
	bool response_held = false;
	for (size_t i = 0; c && i < c->n_events; i++)
		response_held |= strcmp(c->events[i].kind, "response") == 0 &&
				 strcmp(c->events[i].action, "fs:delete") == 0 &&
				 c->events[i].time_ns == t0 + 3 * S && strstr(c->events[i].role, ": held");
	CHECK(response_held);

	/* previous: the event just before */
	fs_req(r, "fs:read", "~/s", "read_content");
	CHECK_INT(bp_monitor_decide(m, r, t0 + 5 * S, d, NULL), 0);
	fs_req(r, "fs:write", "~/e", "write_content");
	CHECK_INT(bp_monitor_decide(m, r, t0 + 6 * S, d, NULL), 0);
	CHECK_INT(bp_explain(p, r, &hook, x), 0);
	c = decider(x, "prev");
	CHECK(c && c->value == BP_EXPLAIN_TRUE);
	CHECK(has_event(c, "path=\"~/s\"", "previous within 5s: held"));
	CHECK(rule_named(x, "prev") && rule_named(x, "prev")->outcome == BP_EXPLAIN_MATCHED);

	bp_explain_free(x);
	bp_decision_free(d);
	bp_request_free(r);
	bp_event_free(e);
	bp_monitor_free(m);
	bp_policy_free(p);
}

int
main(void)
{
	RUN(test_like_when_unless_in);
	RUN(test_has_or_not_if_error);
	RUN(test_agrees_with_decide);
	RUN(test_problem_and_no_history);
	RUN(test_temporal_events);
	return tap_done();
}
