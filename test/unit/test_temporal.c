/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_temporal.c — the incremental temporal monitor's internals: state stays
 * flat over a million events (pruning to the rule's window), the clock never
 * goes backwards, replay through bp_monitor_observe_for_rules reaches only the
 * listed rules, rule hashes ignore comments/whitespace/annotations but not
 * edits, and `previous` / `since` follow the reference semantics.
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
#define MS 1000000LL

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
fs_event(struct bp_event *e, enum bp_event_kind k, const char *action, const char *path,
	 const char *op, int64_t t)
{
	bp_event_reset(e);
	bp_event_set_kind(e, k);
	bp_event_set_time(e, t);
	struct bp_request *r = bp_event_request(e);
	bp_request_set_action(r, action);
	bp_request_set_string(r, "path", path, strlen(path));
	bp_request_set_string(r, "operation", op, strlen(op));
	if (k == BP_EVENT_RESPONSE)
		bp_event_set_output_string(e, "result", "completed", 9);
}

/* decide ACTION on PATH at T; returns the verdict */
static enum bp_verdict
decide(struct bp_monitor *m, struct bp_request *req, struct bp_decision *d, const char *action,
       const char *path, const char *op, int64_t t)
{
	bp_request_reset(req);
	bp_request_set_action(req, action);
	bp_request_set_string(req, "path", path, strlen(path));
	bp_request_set_string(req, "operation", op, strlen(op));
	int r = bp_monitor_decide(m, req, t, d, NULL);
	CHECK_INT(r, 0);
	return bp_decision_verdict(d);
}

static const char budget[] =
	"permit (principal, action == Box::Action::\"fs:write\", resource);\n"
	"@id(\"budget\")\n"
	"forbid (principal, action == Box::Action::\"fs:write\", resource)\n"
	"when temporal { exists (n: Long). ((count for (t: Timepoint). where formerly within 1m (\n"
	"  Box::Action::\"fs:write\"::response{ input.path: _ } && tp(t))) == n && n >= 1000000) };\n";

static void
test_memory_flat(void)
{
	struct bp_policy *p = load(budget);
	CHECK(p != NULL);
	if (!p)
		return;
	struct bp_monitor *m = NULL;
	struct bp_event *e = NULL;
	struct bp_request *req = NULL;
	struct bp_decision *d = NULL;
	CHECK_INT(bp_monitor_new(p, &m, NULL), 0);
	CHECK_INT(bp_event_new(p, &e), 0);
	CHECK_INT(bp_request_new(p, &req), 0);
	CHECK_INT(bp_decision_new(&d), 0);
	size_t at_200k = 0, max_after = 0, min_after = SIZE_MAX;
	for (int64_t i = 0; i < 1000000; i++) {
		fs_event(e, BP_EVENT_RESPONSE, "fs:write", "~/f", "write_content", i * MS);
		if (bp_monitor_observe(m, e, NULL) < 0) {
			CHECK(!"observe failed");
			break;
		}
		if (i == 200000)
			at_200k = bp_monitor_memory(m);
		if (i > 200000) {
			size_t mem = bp_monitor_memory(m);
			max_after = mem > max_after ? mem : max_after;
			min_after = mem < min_after ? mem : min_after;
		}
		/* the window holds exactly 60 s of events: 60,001 with the closed edge */
		if (i >= 60000 && i % 100000 == 0)
			CHECK_INT(bp_monitor_rule_events(m, 1), 60001);
	}
	printf("#   memory: %zu bytes at 200k events, %zu..%zu after, %zu events retained\n",
	       at_200k, min_after, max_after, bp_monitor_rule_events(m, 1));
	CHECK(max_after <= at_200k + at_200k / 50);
	CHECK(max_after < 32u << 20); /* ~320 bytes per retained event */
	/* a decision still sees the whole window: a 1,000,000 budget is not reached */
	CHECK_INT(decide(m, req, d, "fs:write", "~/g", "write_content", 1000000 * MS), BP_PERMIT);
	bp_decision_free(d);
	bp_request_free(req);
	bp_event_free(e);
	bp_monitor_free(m);
	bp_policy_free(p);
}

static const char six[] =
	"permit (principal, action == Box::Action::\"fs:write\", resource);\n"
	"@id(\"six\")\n"
	"forbid (principal, action == Box::Action::\"fs:write\", resource)\n"
	"when temporal { exists (n: Long). ((count for (t: Timepoint). where formerly within 60s (\n"
	"  Box::Action::\"fs:write\"::response{ input.path: _ } && tp(t))) == n && n >= 3) };\n";

static void
test_clock_backwards(void)
{
	struct bp_policy *p = load(six);
	CHECK(p != NULL);
	if (!p)
		return;
	struct bp_monitor *m = NULL;
	struct bp_event *e = NULL;
	struct bp_request *req = NULL;
	struct bp_decision *d = NULL;
	bp_monitor_new(p, &m, NULL);
	bp_event_new(p, &e);
	bp_request_new(p, &req);
	bp_decision_new(&d);
	CHECK_INT(bp_monitor_last_time(m), INT64_MIN);
	CHECK_INT(bp_monitor_stamp(m, 5), 5);
	int64_t t = 0;
	fs_event(e, BP_EVENT_RESPONSE, "fs:write", "~/a", "write_content", 100 * S);
	CHECK_INT(bp_monitor_observe(m, e, &t), 0);
	CHECK_INT(t, 100 * S);
	/* the clock steps back 50 s: the event lands 1 ns after the last one */
	fs_event(e, BP_EVENT_RESPONSE, "fs:write", "~/b", "write_content", 50 * S);
	CHECK_INT(bp_monitor_observe(m, e, &t), 0);
	CHECK_INT(t, 100 * S + 1);
	/* the same time again: 1 ns later still */
	fs_event(e, BP_EVENT_RESPONSE, "fs:write", "~/c", "write_content", 100 * S);
	CHECK_INT(bp_monitor_observe(m, e, &t), 0);
	CHECK_INT(t, 100 * S + 2);
	CHECK_INT(bp_monitor_last_time(m), 100 * S + 2);
	CHECK_INT(bp_monitor_stamp(m, 0), 100 * S + 3);
	CHECK_INT(bp_monitor_stamp(m, 200 * S), 200 * S);
	/* a decision with a stale clock: stamped after, three responses in the window */
	bp_request_reset(req);
	bp_request_set_action(req, "fs:write");
	bp_request_set_string(req, "path", "~/d", 3);
	bp_request_set_string(req, "operation", "write_content", 13);
	CHECK_INT(bp_monitor_decide(m, req, 1 * S, d, &t), 0);
	CHECK_INT(t, 100 * S + 3);
	CHECK_INT(bp_decision_verdict(d), BP_DENY);
	CHECK_STR(bp_decision_rule_name(d, 0), "six");
	/* 60 s after the last response (closed window): still denied; 1 ns later the first left */
	CHECK_INT(decide(m, req, d, "fs:write", "~/d", "write_content", 160 * S), BP_DENY);
	CHECK_INT(decide(m, req, d, "fs:write", "~/d", "write_content", 160 * S + 1), BP_PERMIT);
	bp_decision_free(d);
	bp_request_free(req);
	bp_event_free(e);
	bp_monitor_free(m);
	bp_policy_free(p);
}

static const char two_rules[] =
	"@id(\"a\")\n"
	"forbid (principal, action == Box::Action::\"fs:read\", resource)\n"
	"when temporal { formerly within 1h Box::Action::\"fs:delete\"::request{ input.path: _ } };\n"
	"@id(\"b\")\n"
	"forbid (principal, action == Box::Action::\"fs:read\", resource)\n"
	"when temporal { formerly within 2h Box::Action::\"fs:delete\"::request{ input.path: _ } };\n"
	"permit (principal, action == Box::Action::\"fs:read\", resource);\n";

static void
test_observe_for_rules(void)
{
	struct bp_policy *p = load(two_rules);
	CHECK(p != NULL);
	if (!p)
		return;
	uint64_t ha = bp_policy_rule_hash(p, 0), hb = bp_policy_rule_hash(p, 1);
	CHECK(ha != 0 && hb != 0 && ha != hb);
	struct bp_monitor *m = NULL;
	struct bp_event *e = NULL;
	struct bp_request *req = NULL;
	struct bp_decision *d = NULL;
	bp_monitor_new(p, &m, NULL);
	bp_event_new(p, &e);
	bp_request_new(p, &req);
	bp_decision_new(&d);
	/* a historic delete, recorded when only rule a was installed */
	fs_event(e, BP_EVENT_REQUEST, "fs:delete", "~/x", "remove_file", 10 * S);
	CHECK_INT(bp_monitor_observe_for_rules(m, e, &ha, 1, NULL), 0);
	CHECK_INT(bp_monitor_rule_events(m, 0), 1);
	CHECK_INT(bp_monitor_rule_events(m, 1), 0);
	/* an event irrelevant to both rules is retained by neither */
	fs_event(e, BP_EVENT_REQUEST, "fs:write", "~/x", "write_content", 11 * S);
	uint64_t both[2] = { ha, hb };
	CHECK_INT(bp_monitor_observe_for_rules(m, e, both, 2, NULL), 0);
	CHECK_INT(bp_monitor_rule_events(m, 0), 1);
	CHECK_INT(bp_monitor_rule_events(m, 1), 0);
	/* only a remembers the delete */
	CHECK_INT(decide(m, req, d, "fs:read", "~/y", "read_content", 20 * S), BP_DENY);
	CHECK_INT(bp_decision_rule_count(d), 1);
	CHECK_STR(bp_decision_rule_name(d, 0), "a");
	/* an event for no listed rule reaches none */
	fs_event(e, BP_EVENT_REQUEST, "fs:delete", "~/z", "remove_file", 21 * S);
	uint64_t other = 42;
	CHECK_INT(bp_monitor_observe_for_rules(m, e, &other, 1, NULL), 0);
	CHECK_INT(bp_monitor_rule_events(m, 0), 1);
	CHECK_INT(bp_monitor_rule_events(m, 1), 0);
	/* a live delete reaches both */
	fs_event(e, BP_EVENT_REQUEST, "fs:delete", "~/z", "remove_file", 22 * S);
	CHECK_INT(bp_monitor_observe(m, e, NULL), 0);
	CHECK_INT(bp_monitor_rule_events(m, 0), 2);
	CHECK_INT(bp_monitor_rule_events(m, 1), 1);
	CHECK_INT(decide(m, req, d, "fs:read", "~/y", "read_content", 23 * S), BP_DENY);
	CHECK_INT(bp_decision_rule_count(d), 2);
	/* past rule a's hour, before b's two */
	CHECK_INT(decide(m, req, d, "fs:read", "~/y", "read_content", 22 * S + 3600 * S + 1),
		  BP_DENY);
	CHECK_INT(bp_decision_rule_count(d), 1);
	CHECK_STR(bp_decision_rule_name(d, 0), "b");
	CHECK_INT(bp_monitor_rule_events(m, 0), 0); /* pruned past its window */
	CHECK_INT(decide(m, req, d, "fs:read", "~/y", "read_content", 22 * S + 7200 * S + 1),
		  BP_PERMIT);
	CHECK_INT(bp_monitor_rule_events(m, 1), 0);
	bp_decision_free(d);
	bp_request_free(req);
	bp_event_free(e);
	bp_monitor_free(m);
	bp_policy_free(p);
}

static void
test_rule_hash(void)
{
	const char *a = "permit (principal, action == Box::Action::\"fs:read\", resource)\n"
			"when temporal { formerly within 1h Box::Action::\"fs:write\"::response{ "
			"input.path: context.input.path } };\n";
	const char *b = "// a comment\n@id(\"renamed\") @description(\"edited\")\n"
			"permit(principal,action==Box::Action::\"fs:read\",resource) when temporal {\n"
			"  // inside\n  formerly within 1h\n    Box::Action::\"fs:write\"::response{input.path:"
			"context.input.path}\n};\n";
	const char *c = "permit (principal, action == Box::Action::\"fs:read\", resource)\n"
			"when temporal { formerly within 2h Box::Action::\"fs:write\"::response{ "
			"input.path: context.input.path } };\n";
	char both[1024];
	snprintf(both, sizeof(both), "forbid (principal, action, resource) when { false };\n%s", a);
	struct bp_policy *pa = load(a), *pb = load(b), *pc = load(c), *pd = load(both);
	CHECK(pa && pb && pc && pd);
	if (pa && pb && pc && pd) {
		CHECK(bp_policy_rule_hash(pa, 0) == bp_policy_rule_hash(pb, 0));
		CHECK(bp_policy_rule_hash(pa, 0) != bp_policy_rule_hash(pc, 0));
		CHECK(bp_policy_rule_hash(pa, 0) == bp_policy_rule_hash(pd, 1));
		CHECK(bp_policy_rule_hash(pd, 0) != bp_policy_rule_hash(pd, 1));
		CHECK_INT(bp_policy_rule_hash(pa, 5), 0);
		char *text = NULL;
		CHECK_INT(bp_policy_rule_canonical(pa, 0, &text), 0);
		CHECK(text && strstr(text, "formerly within 3600000000000ns"));
		free(text);
	}
	bp_policy_free(pa);
	bp_policy_free(pb);
	bp_policy_free(pc);
	bp_policy_free(pd);
}

static void
test_previous_since(void)
{
	const char *prev =
		"permit (principal, action == Box::Action::\"fs:read\", resource);\n"
		"forbid (principal, action == Box::Action::\"fs:read\", resource)\n"
		"when temporal { previous within 10s Box::Action::\"fs:read\"::request{ input.path: \"/a\" } };\n";
	const char *since =
		"permit (principal, action == Box::Action::\"fs:read\", resource);\n"
		"permit (principal, action == Box::Action::\"fs:write\", resource)\n"
		"when temporal { !Box::Action::\"fs:delete\"::request{ input.path: _ } since within 1h\n"
		"  Box::Action::\"fs:read\"::request{ input.path: \"/approve\" } };\n";
	struct bp_policy *p = load(prev), *q = load(since);
	CHECK(p && q);
	if (!p || !q) {
		bp_policy_free(p);
		bp_policy_free(q);
		return;
	}
	struct bp_monitor *m = NULL;
	struct bp_request *req = NULL;
	struct bp_decision *d = NULL;
	bp_decision_new(&d);
	bp_monitor_new(p, &m, NULL);
	bp_request_new(p, &req);
	CHECK_INT(decide(m, req, d, "fs:read", "/a", "read_content", 1 * S), BP_PERMIT);
	CHECK_INT(decide(m, req, d, "fs:read", "/b", "read_content", 2 * S), BP_DENY);
	CHECK_INT(decide(m, req, d, "fs:read", "/c", "read_content", 3 * S), BP_PERMIT);
	CHECK_INT(decide(m, req, d, "fs:read", "/a", "read_content", 4 * S), BP_PERMIT);
	/* the preceding event is 10 s old: inside; 10 s + 1 ns: outside */
	CHECK_INT(decide(m, req, d, "fs:read", "/a", "read_content", 14 * S), BP_DENY);
	CHECK_INT(decide(m, req, d, "fs:read", "/a", "read_content", 24 * S + 1), BP_PERMIT);
	bp_request_free(req);
	bp_monitor_free(m);
	bp_monitor_new(q, &m, NULL);
	bp_request_new(q, &req);
	struct bp_event *e = NULL;
	bp_event_new(q, &e);
	CHECK_INT(decide(m, req, d, "fs:write", "/w", "write_content", 1 * S), BP_DENY);
	CHECK_INT(decide(m, req, d, "fs:read", "/approve", "read_content", 2 * S), BP_PERMIT);
	CHECK_INT(decide(m, req, d, "fs:write", "/w", "write_content", 3 * S), BP_PERMIT);
	CHECK_INT(decide(m, req, d, "fs:write", "/w", "write_content", 4 * S), BP_PERMIT);
	fs_event(e, BP_EVENT_REQUEST, "fs:delete", "/x", "remove_file", 5 * S);
	CHECK_INT(bp_monitor_observe(m, e, NULL), 0);
	CHECK_INT(decide(m, req, d, "fs:write", "/w", "write_content", 6 * S), BP_DENY);
	CHECK_INT(decide(m, req, d, "fs:read", "/approve", "read_content", 7 * S), BP_PERMIT);
	CHECK_INT(decide(m, req, d, "fs:write", "/w", "write_content", 8 * S), BP_PERMIT);
	/* the approval is an hour old: still in; then out */
	CHECK_INT(decide(m, req, d, "fs:write", "/w", "write_content", 3607 * S), BP_PERMIT);
	CHECK_INT(decide(m, req, d, "fs:write", "/w", "write_content", 3607 * S + 1), BP_DENY);
	bp_event_free(e);
	bp_request_free(req);
	bp_monitor_free(m);
	bp_decision_free(d);
	bp_policy_free(p);
	bp_policy_free(q);
}

static void
test_event_problems(void)
{
	struct bp_policy *p = load(six);
	CHECK(p != NULL);
	if (!p)
		return;
	struct bp_monitor *m = NULL;
	struct bp_event *e = NULL;
	bp_monitor_new(p, &m, NULL);
	bp_event_new(p, &e);
	/* output on a request event, unknown output field, bad enum id */
	fs_event(e, BP_EVENT_REQUEST, "fs:write", "~/a", "write_content", 1);
	bp_event_set_output_string(e, "result", "completed", 9);
	CHECK(bp_event_problem(e) != NULL);
	CHECK_INT(bp_monitor_observe(m, e, NULL), -EINVAL);
	fs_event(e, BP_EVENT_RESPONSE, "fs:write", "~/a", "write_content", 1);
	CHECK(bp_event_set_output_long(e, "status", 0) < 0);
	CHECK(bp_event_problem(e) != NULL);
	fs_event(e, BP_EVENT_RESPONSE, "fs:write", "~/a", "write_content", 1);
	CHECK(bp_event_set_output_string(e, "result", "done", 4) < 0);
	CHECK(bp_event_problem(e) != NULL);
	fs_event(e, BP_EVENT_RESPONSE, "fs:write", "~/a", "write_content", 1);
	CHECK(bp_event_problem(e) == NULL);
	CHECK_INT(bp_monitor_observe(m, e, NULL), 0);
	enum bp_event_kind k;
	CHECK_INT(bp_event_kind_parse("error", &k), 0);
	CHECK_INT(k, BP_EVENT_ERROR);
	CHECK(bp_event_kind_parse("reply", &k) < 0);
	CHECK_STR(bp_event_kind_str(BP_EVENT_RESPONSE), "response");
	bp_event_free(e);
	bp_monitor_free(m);
	bp_policy_free(p);
}

static void
test_migrate(void)
{
	/* rule b edited (window), rule a unchanged but moved after a new rule */
	const char *edited =
		"permit (principal, action == Box::Action::\"fs:read\", resource);\n"
		"@id(\"b\")\n"
		"forbid (principal, action == Box::Action::\"fs:read\", resource)\n"
		"when temporal { formerly within 3h Box::Action::\"fs:delete\"::request{ input.path: _ } };\n"
		"// rule a, reformatted\n@id(\"a2\") forbid(principal,action==Box::Action::\"fs:read\",resource)\n"
		"when temporal { formerly within 1h Box::Action::\"fs:delete\"::request{ input.path: _ } };\n";
	struct bp_policy *p = load(two_rules), *q = load(edited);
	CHECK(p && q);
	if (!p || !q) {
		bp_policy_free(p);
		bp_policy_free(q);
		return;
	}
	CHECK(bp_policy_rule_hash(p, 0) == bp_policy_rule_hash(q, 2));
	CHECK(bp_policy_rule_hash(p, 1) != bp_policy_rule_hash(q, 1));
	struct bp_monitor *m = NULL, *n = NULL;
	struct bp_event *e = NULL;
	struct bp_request *req = NULL;
	struct bp_decision *d = NULL;
	bp_monitor_new(p, &m, NULL);
	bp_event_new(p, &e);
	bp_decision_new(&d);
	fs_event(e, BP_EVENT_REQUEST, "fs:delete", "~/x", "remove_file", 10 * S);
	CHECK_INT(bp_monitor_observe(m, e, NULL), 0);
	CHECK_INT(bp_monitor_rule_events(m, 0), 1);
	CHECK_INT(bp_monitor_rule_events(m, 1), 1);
	bp_event_free(e);
	CHECK_INT(bp_monitor_migrate(m, q, &n, NULL), 0);
	bp_policy_free(p); /* the events no longer refer to it */
	CHECK_INT(bp_monitor_rule_events(n, 2), 1); /* a, unchanged: keeps its state */
	CHECK_INT(bp_monitor_rule_events(n, 1), 0); /* b, edited: starts empty */
	CHECK_INT(bp_monitor_last_time(n), 10 * S);
	bp_request_new(q, &req);
	CHECK_INT(decide(n, req, d, "fs:read", "~/y", "read_content", 5 * S), BP_DENY);
	CHECK_INT(bp_decision_rule_count(d), 1);
	CHECK_STR(bp_decision_rule_name(d, 0), "a2");
	bp_request_free(req);
	bp_decision_free(d);
	bp_monitor_free(n);
	bp_policy_free(q);
}

int
main(void)
{
	RUN(test_memory_flat);
	RUN(test_clock_backwards);
	RUN(test_observe_for_rules);
	RUN(test_rule_hash);
	RUN(test_previous_since);
	RUN(test_event_problems);
	RUN(test_migrate);
	return tap_done();
}
