/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_policy_index.c — libboxpolicy's rule index (libboxpolicy/index.c):
 * every policy is loaded twice, with the index and with no_rule_index, and
 * every request must get the same verdict, cause, rules (in order) and
 * message from both. Hand-written cases aim at the index's seams (a keyed
 * field absent from the request, guarded or not; the same attribute spelled
 * two ways; case and Unicode forms that must not match; duplicate keys and
 * rules; `like` prefixes that overlap; `||`; action tests in conditions;
 * `unless` and temporal clauses; rules without a target), then random policy
 * sets of those shapes over random requests. It also checks the index is not
 * vacuous: it evaluates fewer rules than the whole action list. And the
 * decision message's resource escaping, which reads eight bytes at a time.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boxpolicy.h"
#include "boxpolicy_temporal.h"
#include "tap.h"

static bool quiet_load; /* a test that expects some loads to fail */

static struct bp_policy *
load(const char *text, bool no_index)
{
	struct bp_load_options o = { .home = "/home/dev", .no_rule_index = no_index };
	struct bp_policy *p = NULL;
	struct bp_diags *d = NULL;
	if (bp_policy_load(text, strlen(text), &o, &p, &d) < 0 && !quiet_load) {
		for (size_t i = 0; d && i < bp_diags_count(d); i++)
			printf("#   %s\n", bp_diag_message(d, i, NULL, NULL, NULL));
	}
	bp_diags_free(d);
	return p;
}

/* One request as "action|field=value|field=#123|field=?true" (# long, ? bool). */
static int
build(struct bp_request *r, const char *spec)
{
	bp_request_reset(r);
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", spec);
	char *save = NULL;
	char *tok = strtok_r(buf, "|", &save);
	if (!tok)
		return -EINVAL;
	int rc = bp_request_set_action(r, tok);
	while (rc >= 0 && (tok = strtok_r(NULL, "|", &save))) {
		char *eq = strchr(tok, '=');
		if (!eq)
			return -EINVAL;
		*eq = 0;
		const char *v = eq + 1;
		if (v[0] == '#')
			rc = bp_request_set_long(r, tok, strtoll(v + 1, NULL, 10));
		else if (v[0] == '?')
			rc = bp_request_set_bool(r, tok, strcmp(v + 1, "true") == 0);
		else
			rc = bp_request_set_string(r, tok, v, strlen(v));
	}
	return rc;
}

struct pair {
	struct bp_policy *ix, *all;
	struct bp_request *rix, *rall;
	struct bp_decision *dix, *dall;
	size_t evaluated_ix, evaluated_all;
	unsigned decisions, mismatches;
	unsigned permits, forbids, errors, no_match;
};

static bool
pair_open(struct pair *pp, const char *text)
{
	memset(pp, 0, sizeof(*pp));
	pp->ix = load(text, false);
	pp->all = load(text, true);
	if (!pp->ix || !pp->all)
		return false;
	return bp_request_new(pp->ix, &pp->rix) == 0 && bp_request_new(pp->all, &pp->rall) == 0 &&
	       bp_decision_new(&pp->dix) == 0 && bp_decision_new(&pp->dall) == 0;
}

static void
pair_close(struct pair *pp)
{
	bp_decision_free(pp->dix);
	bp_decision_free(pp->dall);
	bp_request_free(pp->rix);
	bp_request_free(pp->rall);
	bp_policy_free(pp->ix);
	bp_policy_free(pp->all);
}

static bool
same(const struct bp_decision *a, const struct bp_decision *b)
{
	if (bp_decision_verdict(a) != bp_decision_verdict(b) ||
	    bp_decision_cause(a) != bp_decision_cause(b) ||
	    bp_decision_rule_count(a) != bp_decision_rule_count(b) ||
	    strcmp(bp_decision_message(a), bp_decision_message(b)) != 0)
		return false;
	for (size_t i = 0; i < bp_decision_rule_count(a); i++)
		if (bp_decision_rule_index(a, i) != bp_decision_rule_index(b, i))
			return false;
	return true;
}

/* Decide SPEC both ways; returns the indexed decision's cause (or -1 on a mismatch). */
static int
both(struct pair *pp, const char *spec, const char *policy_text)
{
	int b1 = build(pp->rix, spec), b2 = build(pp->rall, spec);
	CHECK_INT(b1, b2);
	CHECK_INT(bp_decide(pp->ix, pp->rix, NULL, pp->dix), 0);
	CHECK_INT(bp_decide(pp->all, pp->rall, NULL, pp->dall), 0);
	pp->decisions++;
	pp->evaluated_ix += bp_decision_rules_evaluated(pp->dix);
	pp->evaluated_all += bp_decision_rules_evaluated(pp->dall);
	if (!same(pp->dix, pp->dall)) {
		if (pp->mismatches++ < 5)
			printf("#   %s: indexed %s/%s \"%s\", all rules %s/%s \"%s\"\n#   policy:\n%s",
			       spec, bp_verdict_str(bp_decision_verdict(pp->dix)),
			       bp_cause_str(bp_decision_cause(pp->dix)), bp_decision_message(pp->dix),
			       bp_verdict_str(bp_decision_verdict(pp->dall)),
			       bp_cause_str(bp_decision_cause(pp->dall)),
			       bp_decision_message(pp->dall), policy_text);
		return -1;
	}
	switch (bp_decision_cause(pp->dix)) {
	case BP_CAUSE_PERMITTED: pp->permits++; break;
	case BP_CAUSE_FORBIDDEN: pp->forbids++; break;
	case BP_CAUSE_ERROR: pp->errors++; break;
	default: pp->no_match++; break;
	}
	return (int)bp_decision_cause(pp->dix);
}

/* ---- hand-written seams ---- */

static const char seams[] =
	"@id(\"git\")\n"
	"permit (principal, action == Box::Action::\"shell:exec\", resource)\n"
	"when { context.input.program == \"git\" };\n"
	"@id(\"git_dup\")\n" /* the same key again: both rules found */
	"permit (principal, action == Box::Action::\"shell:exec\", resource)\n"
	"when { \"git\" == context.input.program && context.input.arg_count < 3 };\n"
	"@id(\"force\")\n" /* keyed on an optional field, guarded: absent -> false */
	"forbid (principal, action == Box::Action::\"shell:exec\", resource)\n"
	"when { context.input has arg1 && context.input.arg1 == \"--force\" };\n"
	"@id(\"overflow\")\n" /* keyed, then an error: found when the key matches */
	"forbid (principal, action == Box::Action::\"shell:exec\", resource)\n"
	"when { context.input.program == \"cargo\" && "
	"context.input.arg_count + 9223372036854775807 > 0 };\n"
	"@id(\"guarded\")\n" /* guarded: absent -> false */
	"forbid (principal, action == Box::Action::\"shell:spawn\", resource)\n"
	"when { context.input has arg1 && context.input.arg1 == \"-rf\" };\n"
	"@id(\"spelled\")\n" /* the same attribute through [\"…\"] */
	"permit (principal, action == Box::Action::\"shell:spawn\", resource)\n"
	"when { context.input[\"program\"] == \"make\" };\n"
	"@id(\"unicode\")\n" /* NFC é; a request with e + U+0301 must not match */
	"permit (principal, action == Box::Action::\"fs:read\", resource)\n"
	"when { context.input.path == \"~/caf\\u{e9}\" || context.input.path like \"~/d/*\" || "
	"context.input.path like \"~/d/e*\" || context.input.path == \"~/d/e\" };\n"
	"@id(\"twice\")\n" /* one rule, the same key twice */
	"permit (principal, action == Box::Action::\"fs:read\", resource)\n"
	"when { context.input.path == \"~/t\" || context.input.path == \"~/t\" };\n"
	"@id(\"no_target\")\n" /* no target: candidates of every action, keyed per action */
	"forbid (principal, action, resource)\n"
	"when { context.input has host && context.input.host == \"evil.example\" };\n"
	"@id(\"action_in_cond\")\n"
	"permit (principal, action, resource)\n"
	"when { action in [Box::Action::\"net:connect\", Box::Action::\"http:request\"] && "
	"context.input.host == \"ok.example\" };\n"
	"@id(\"action_eq_cond\")\n"
	"permit (principal, action, resource)\n"
	"when { action == Box::Action::\"mcp:call\" && [\"s1\", \"s2\"].contains(context.input.server) };\n"
	"@id(\"unless_first\")\n" /* not indexable: always evaluated */
	"forbid (principal, action == Box::Action::\"net:connect\", resource)\n"
	"unless { context.input.port == 443 || context.input.port == 80 };\n"
	"@id(\"port\")\n" /* a Long key */
	"permit (principal, action == Box::Action::\"net:connect\", resource)\n"
	"when { context.input.port == 8443 };\n"
	"@id(\"bool\")\n" /* a Bool key */
	"permit (principal, action == Box::Action::\"http:request\", resource)\n"
	"when { context.input.intercepted == false && context.input.method == \"GET\" };\n"
	"@id(\"enum\")\n" /* an entity key */
	"forbid (principal, action == Box::Action::\"fs:write\", resource)\n"
	"when { context.input.operation == Box::FsWriteOperation::\"symlink\" };\n"
	"@id(\"writes\")\n"
	"permit (principal, action == Box::Action::\"fs:write\", resource)\n"
	"when { context.input.path like \"~/w/*\" };\n"
	"@id(\"star_first\")\n" /* a leading `*`: always evaluated */
	"forbid (principal, action == Box::Action::\"fs:write\", resource)\n"
	"when { context.input.path like \"*.lock\" };\n"
	"@id(\"esc\")\n" /* an escaped star is a literal */
	"permit (principal, action == Box::Action::\"fs:delete\", resource)\n"
	"when { context.input.path like \"~/\\*x*\" };\n"
	"@id(\"tool\")\n"
	"permit (principal, action == Box::Action::\"mcp:call\", resource)\n"
	"when { context.input has tool && context.input.tool like \"read*\" };\n";

static void
test_seams(void)
{
	struct pair pp;
	CHECK(pair_open(&pp, seams));
	if (!pp.ix || !pp.all || !pp.dix) {
		pair_close(&pp);
		return;
	}
	struct {
		const char *spec;
		int cause;
	} cases[] = {
		{ "shell:exec|command=git st|program=git|arg_count=#1|cwd=~|arg1=st", BP_CAUSE_PERMITTED },
		{ "shell:exec|command=git st|program=git|arg_count=#5|cwd=~|arg1=st", BP_CAUSE_PERMITTED },
		{ "shell:exec|command=Git|program=Git|arg_count=#0|cwd=~", BP_CAUSE_NO_MATCH },
		{ "shell:exec|command=x|program=cargo|arg_count=#1|cwd=~", BP_CAUSE_ERROR },
		{ "shell:exec|command=x|program=cargo|arg_count=#0|cwd=~", BP_CAUSE_FORBIDDEN },
		{ "shell:exec|command=x|program=Cargo|arg_count=#1|cwd=~", BP_CAUSE_NO_MATCH },
		{ "shell:exec|command=x|program=GIT|arg_count=#1|cwd=~|arg1=--force", BP_CAUSE_FORBIDDEN },
		{ "shell:exec|command=x|program=git|arg_count=#1|cwd=~|arg1=--force", BP_CAUSE_FORBIDDEN },
		{ "shell:spawn|command=x|program=make|program_path=/usr/bin/make|arg_count=#0|cwd=~",
		  BP_CAUSE_PERMITTED },
		{ "shell:spawn|command=x|program=make|program_path=/usr/bin/make|arg_count=#1|cwd=~|arg1=-rf",
		  BP_CAUSE_FORBIDDEN },
		{ "shell:spawn|command=x|program=Make|program_path=/usr/bin/make|arg_count=#0|cwd=~",
		  BP_CAUSE_NO_MATCH },
		{ "fs:read|path=~/caf\xc3\xa9|operation=read_content", BP_CAUSE_PERMITTED },
		{ "fs:read|path=~/cafe\xcc\x81|operation=read_content", BP_CAUSE_NO_MATCH },
		{ "fs:read|path=~/CAF\xc3\x89|operation=read_content", BP_CAUSE_NO_MATCH },
		{ "fs:read|path=~/d/e|operation=read_content", BP_CAUSE_PERMITTED },
		{ "fs:read|path=~/d/ex|operation=read_content", BP_CAUSE_PERMITTED },
		{ "fs:read|path=~/d|operation=read_content", BP_CAUSE_NO_MATCH },
		{ "fs:read|path=~/t|operation=read_content", BP_CAUSE_PERMITTED },
		{ "fs:read|path=~/t/|operation=read_content", BP_CAUSE_NO_MATCH },
		{ "net:connect|host=ok.example|port=#443", BP_CAUSE_PERMITTED },
		{ "net:connect|host=evil.example|port=#443", BP_CAUSE_FORBIDDEN },
		{ "net:connect|host=ok.example|port=#22", BP_CAUSE_FORBIDDEN },
		{ "net:connect|host=x|port=#8443", BP_CAUSE_FORBIDDEN },
		{ "net:connect|host=OK.example|port=#80", BP_CAUSE_NO_MATCH },
		{ "http:request|host=ok.example|port=#443|method=POST|path=/|body_bytes=#0|intercepted=?true",
		  BP_CAUSE_PERMITTED },
		{ "http:request|host=evil.example|port=#443|method=GET|path=/|body_bytes=#0|intercepted=?false",
		  BP_CAUSE_FORBIDDEN },
		{ "http:request|host=x|port=#443|method=GET|path=/|body_bytes=#0|intercepted=?false",
		  BP_CAUSE_PERMITTED },
		{ "http:request|host=x|port=#443|method=GET|path=/|body_bytes=#0|intercepted=?true",
		  BP_CAUSE_NO_MATCH },
		{ "mcp:call|server=s2|method=tools/call", BP_CAUSE_PERMITTED },
		{ "mcp:call|server=s3|method=tools/call|tool=read_file", BP_CAUSE_PERMITTED },
		{ "mcp:call|server=s3|method=tools/call|tool=write_file", BP_CAUSE_NO_MATCH },
		{ "mcp:call|server=s3|method=tools/call", BP_CAUSE_NO_MATCH },
		{ "fs:write|path=~/w/a|operation=symlink", BP_CAUSE_FORBIDDEN },
		{ "fs:write|path=~/w/a|operation=write_content", BP_CAUSE_PERMITTED },
		{ "fs:write|path=~/w/a.lock|operation=write_content", BP_CAUSE_FORBIDDEN },
		{ "fs:delete|path=~/*xy|operation=remove_file", BP_CAUSE_PERMITTED },
		{ "fs:delete|path=~/axy|operation=remove_file", BP_CAUSE_NO_MATCH },
		/* a required field missing: error before any rule */
		{ "fs:delete|path=~/*xy", BP_CAUSE_ERROR },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int c = both(&pp, cases[i].spec, seams);
		if (c != cases[i].cause)
			printf("#   %s: cause %s, expected %s\n", cases[i].spec,
			       c < 0 ? "mismatch" : bp_cause_str((enum bp_cause)c),
			       bp_cause_str((enum bp_cause)cases[i].cause));
		CHECK_INT(c, cases[i].cause);
	}
	CHECK_INT(pp.mismatches, 0);
	/* the index is not vacuous */
	CHECK(pp.evaluated_ix < pp.evaluated_all);
	printf("# seams: %u decisions, %zu rules evaluated with the index, %zu without\n",
	       pp.decisions, pp.evaluated_ix, pp.evaluated_all);
	pair_close(&pp);
}

/* A request whose fields were set under another action is decided without the index. */
static void
test_action_changed(void)
{
	struct pair pp;
	CHECK(pair_open(&pp, seams));
	if (!pp.dix) {
		pair_close(&pp);
		return;
	}
	struct bp_request *r[2] = { pp.rix, pp.rall };
	struct bp_policy *p[2] = { pp.ix, pp.all };
	struct bp_decision *d[2] = { pp.dix, pp.dall };
	for (int k = 0; k < 2; k++) {
		bp_request_reset(r[k]);
		CHECK_INT(bp_request_set_action(r[k], "net:connect"), 0);
		CHECK_INT(bp_request_set_string(r[k], "host", "evil.example", 12), 0);
		CHECK_INT(bp_request_set_long(r[k], "port", 443), 0);
		CHECK_INT(bp_request_set_action(r[k], "http:request"), 0);
		CHECK_INT(bp_decide(p[k], r[k], NULL, d[k]), 0);
	}
	CHECK(same(pp.dix, pp.dall));
	pair_close(&pp);
}

/* Temporal clauses: a keyed rule whose temporal term only runs when the key matched. */
static const char temporal_text[] =
	"@id(\"after_delete\")\n"
	"forbid (principal, action == Box::Action::\"fs:read\", resource)\n"
	"when { context.input.path == \"~/s\" }\n"
	"when temporal { formerly within 10s (Box::Action::\"fs:delete\"::request{ input.path: _ }) };\n"
	"@id(\"first\")\n"
	"forbid (principal, action == Box::Action::\"fs:read\", resource)\n"
	"when temporal { previous within 5s (Box::Action::\"fs:read\"::request{ input.path: \"~/s\" }) }\n"
	"when { context.input.path like \"~/q*\" };\n"
	"@id(\"reads\")\n"
	"permit (principal, action == Box::Action::\"fs:read\", resource)\n"
	"when { context.input.path like \"~/*\" };\n"
	"@id(\"deletes\")\n"
	"permit (principal, action == Box::Action::\"fs:delete\", resource)\n"
	"when { context.input.path == \"~/x\" };\n";

static void
test_temporal(void)
{
	struct pair pp;
	CHECK(pair_open(&pp, temporal_text));
	if (!pp.dix) {
		pair_close(&pp);
		return;
	}
	struct bp_monitor *m[2] = { NULL, NULL };
	CHECK_INT(bp_monitor_new(pp.ix, &m[0], NULL), 0);
	CHECK_INT(bp_monitor_new(pp.all, &m[1], NULL), 0);
	if (!m[0] || !m[1]) {
		bp_monitor_free(m[0]);
		bp_monitor_free(m[1]);
		pair_close(&pp);
		return;
	}
	static const char *const specs[] = {
		"fs:read|path=~/s|operation=read_content",
		"fs:read|path=~/q1|operation=read_content",
		"fs:delete|path=~/x|operation=remove_file",
		"fs:read|path=~/s|operation=read_content",
		"fs:read|path=~/qq|operation=read_content",
		"fs:read|path=~/r|operation=read_content",
		"fs:delete|path=~/y|operation=remove_file",
	};
	unsigned mismatches = 0, forbids = 0;
	int64_t t = 1000000000000LL;
	for (unsigned k = 0; k < 300; k++) {
		t += (k % 5 == 0 ? 7000 : 900) * 1000000LL;
		const char *spec = specs[(k * 7 + k / 3) % (sizeof(specs) / sizeof(specs[0]))];
		CHECK_INT(build(pp.rix, spec), 0);
		CHECK_INT(build(pp.rall, spec), 0);
		CHECK_INT(bp_monitor_decide(m[0], pp.rix, t, pp.dix, NULL), 0);
		CHECK_INT(bp_monitor_decide(m[1], pp.rall, t, pp.dall, NULL), 0);
		if (!same(pp.dix, pp.dall) && mismatches++ < 5)
			printf("#   event %u %s: indexed %s, all rules %s\n", k, spec,
			       bp_decision_message(pp.dix), bp_decision_message(pp.dall));
		forbids += bp_decision_cause(pp.dix) == BP_CAUSE_FORBIDDEN;
	}
	CHECK_INT(mismatches, 0);
	CHECK(forbids > 10 && forbids < 290); /* the temporal rules did fire, not always */
	printf("# temporal: %u of 300 forbidden\n", forbids);
	bp_monitor_free(m[0]);
	bp_monitor_free(m[1]);
	pair_close(&pp);
}

/* ---- random policy sets of the index's shapes ---- */

static uint32_t seed = 0x9e3779b9u;

static uint32_t
rnd(uint32_t n)
{
	seed ^= seed << 13;
	seed ^= seed >> 17;
	seed ^= seed << 5;
	return n ? seed % n : 0;
}

#define PICK(a) (a)[rnd(sizeof(a) / sizeof((a)[0]))]

static const char *const strs[] = { "a", "b", "git", "Git", "~/p", "~/p/a", "~/pa", "",
				    "x\xc3\xa9", "xe\xcc\x81", "h.example", "*" };
static const char *const pats[] = { "a*", "~/p*", "~/p/*", "g*t", "*", "~/p", "x*", "h.*", "\\**" };

/* A condition on string field F (of ACTION's fields) in one of the index's shapes or not. */
static void
cond_on(char *out, size_t size, const char *f, bool optional)
{
	char a[200], b[260];
	/* validation refuses an optional field read without `has` */
	const char *g = optional ? "context.input has " : NULL;
	switch (rnd(8)) {
	case 0: snprintf(a, sizeof(a), "context.input.%s == \"%s\"", f, PICK(strs)); break;
	case 1: snprintf(a, sizeof(a), "\"%s\" == context.input.%s", PICK(strs), f); break;
	case 2: snprintf(a, sizeof(a), "context.input.%s like \"%s\"", f, PICK(pats)); break;
	case 3:
		snprintf(a, sizeof(a), "[\"%s\", \"%s\"].contains(context.input.%s)", PICK(strs),
			 PICK(strs), f);
		break;
	case 4:
		snprintf(a, sizeof(a), "context.input.%s == \"%s\" || context.input.%s like \"%s\"", f,
			 PICK(strs), f, PICK(pats));
		break;
	case 5: snprintf(a, sizeof(a), "context.input.%s != \"%s\"", f, PICK(strs)); break;
	case 6: snprintf(a, sizeof(a), "context.input[\"%s\"] == \"%s\"", f, PICK(strs)); break;
	default: snprintf(a, sizeof(a), "context.input.%s like \"*%s\"", f, PICK(strs)); break;
	}
	if (g) {
		snprintf(b, sizeof(b), "%s%s && (%s)", g, f, a);
		snprintf(out, size, "%s", b);
	} else {
		snprintf(out, size, "%s", a);
	}
}

struct act {
	const char *name;
	const char *fields[3]; /* string fields; a trailing '?' marks an optional one */
	const char *fixed;     /* the request's other required fields */
};

static const struct act acts[] = {
	{ "fs:read", { "path" }, "|operation=read_content" },
	{ "shell:exec", { "program", "arg1?", "command" }, "|arg_count=#1|cwd=~" },
	{ "net:connect", { "host", "ip?" }, "|port=#443" },
	{ "mcp:call", { "server", "tool?", "method" }, "" },
};

static void
gen_rule(char *out, size_t size, unsigned idx)
{
	const struct act *a = &PICK(acts);
	size_t nf = 0;
	while (nf < 3 && a->fields[nf])
		nf++;
	char c1[400], c2[400], f[16];
	const char *fld = a->fields[rnd((uint32_t)nf)];
	if (!fld)
		return;
	snprintf(f, sizeof(f), "%.*s", (int)strcspn(fld, "?"), fld);
	cond_on(c1, sizeof(c1), f, strchr(fld, '?') != NULL);
	fld = a->fields[rnd((uint32_t)nf)];
	if (!fld)
		return;
	snprintf(f, sizeof(f), "%.*s", (int)strcspn(fld, "?"), fld);
	cond_on(c2, sizeof(c2), f, strchr(fld, '?') != NULL);
	const char *effect = rnd(3) ? "permit" : "forbid";
	int n = snprintf(out, size, "@id(\"r%u\")\n%s (principal, ", idx, effect);
	switch (rnd(4)) {
	case 0: /* no target, the action tested in the condition */
		n += snprintf(out + n, size - (size_t)n,
			      "action, resource) when { action == Box::Action::\"%s\" && (%s) }", a->name,
			      c1);
		break;
	case 1:
		n += snprintf(out + n, size - (size_t)n,
			      "action in [Box::Action::\"%s\"], resource) when { %s }", a->name, c1);
		break;
	default:
		n += snprintf(out + n, size - (size_t)n,
			      "action == Box::Action::\"%s\", resource) when { %s }", a->name, c1);
		break;
	}
	switch (rnd(5)) {
	case 0: n += snprintf(out + n, size - (size_t)n, " unless { %s }", c2); break;
	case 1: n += snprintf(out + n, size - (size_t)n, " when { %s }", c2); break;
	case 2: /* an overflow (an error) once the key matched, or not */
		n += snprintf(out + n, size - (size_t)n, " when { 9223372036854775807 + %u > 0 }",
			      rnd(2));
		break;
	default: break;
	}
	snprintf(out + n, size - (size_t)n, ";\n");
}

static void
gen_request(char *out, size_t size)
{
	const struct act *a = &PICK(acts);
	int n = snprintf(out, size, "%s%s", a->name, a->fixed);
	for (size_t i = 0; i < 3 && a->fields[i]; i++) {
		const char *fld = a->fields[i];
		if (!fld)
			break;
		bool optional = strchr(fld, '?') != NULL;
		if (optional && rnd(2))
			continue;
		n += snprintf(out + n, size - (size_t)n, "|%.*s=%s", (int)strcspn(fld, "?"), fld,
			      PICK(strs));
	}
}

static void
test_random(void)
{
	unsigned sets = 0, decisions = 0, mismatches = 0;
	unsigned permits = 0, forbids = 0, errors = 0, no_match = 0;
	size_t ev_ix = 0, ev_all = 0;
	static char text[64 << 10];
	for (unsigned s = 0; s < 300; s++) {
		size_t len = 0;
		unsigned nr = 1 + rnd(24);
		for (unsigned i = 0; i < nr && len + 2048 < sizeof(text); i++) {
			char rule[2048];
			rule[0] = 0;
			gen_rule(rule, sizeof(rule), i);
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s", rule);
		}
		struct pair pp;
		if (!pair_open(&pp, text)) {
			printf("#   set %u did not load:\n%s", s, text);
			CHECK(!"a generated policy set loads");
			pair_close(&pp);
			continue;
		}
		sets++;
		for (unsigned k = 0; k < 40; k++) {
			char spec[512];
			gen_request(spec, sizeof(spec));
			(void)both(&pp, spec, text);
		}
		decisions += pp.decisions;
		mismatches += pp.mismatches;
		permits += pp.permits;
		forbids += pp.forbids;
		errors += pp.errors;
		no_match += pp.no_match;
		ev_ix += pp.evaluated_ix;
		ev_all += pp.evaluated_all;
		pair_close(&pp);
	}
	CHECK_INT(mismatches, 0);
	/* not vacuous: every cause occurs, and the index cut the work */
	CHECK(permits > 0 && forbids > 0 && errors > 0 && no_match > 0);
	CHECK(ev_ix < ev_all);
	printf("# random: %u sets, %u decisions (%u permitted, %u forbidden, %u error, %u "
	       "no_match), %zu rules evaluated with the index, %zu without\n",
	       sets, decisions, permits, forbids, errors, no_match, ev_ix, ev_all);
}

/*
 * The decision message escapes the resource eight bytes at a time
 * (libboxpolicy/message.c): each byte that needs an escape, at every offset
 * around those chunks, is escaped as docs/box-policy.5.md says.
 */
static void
test_message_escapes(void)
{
	struct bp_policy *p = load("permit (principal, action == Box::Action::\"fs:read\", resource)\n"
				   "when { context.input.path == \"never\" };\n",
				   false);
	struct bp_request *r = NULL;
	struct bp_decision *d = NULL;
	CHECK(p && bp_request_new(p, &r) == 0 && bp_decision_new(&d) == 0);
	if (!r || !d) {
		bp_decision_free(d);
		bp_request_free(r);
		bp_policy_free(p);
		return;
	}
	static const struct {
		const char *raw, *esc;
	} specials[] = {
		{ "\t", "\\t" }, { "\r", "\\r" }, { "\n", "\\n" }, { "\\", "\\\\" },
		{ "'", "\\'" }, { "\"", "\\\"" }, { "\x7f", "\\u{7f}" }, { "\x01", "\\u{1}" },
		{ "\xff", "\xef\xbf\xbd" }, { "\xc3\xa9", "\xc3\xa9" }, { " ", " " }, { "~", "~" },
	};
	unsigned bad = 0;
	for (size_t k = 0; k < sizeof(specials) / sizeof(specials[0]); k++)
		for (size_t off = 0; off < 20; off++) {
			char path[64], want[256];
			memset(path, 'a', off);
			snprintf(path + off, sizeof(path) - off, "%sbcdefghijk", specials[k].raw);
			memset(want, 0, sizeof(want));
			snprintf(want, sizeof(want), "policy denied this operation on '%.*s%sbcdefghijk' "
				 "[default-deny]: No permit policy matched this request.", (int)off,
				 "aaaaaaaaaaaaaaaaaaaa", specials[k].esc);
			bp_request_reset(r);
			bp_request_set_action(r, "fs:read");
			bp_request_set_string(r, "path", path, strlen(path));
			bp_request_set_string(r, "operation", "read_content", 12);
			CHECK_INT(bp_decide(p, r, NULL, d), 0);
			if (strcmp(bp_decision_message(d), want) != 0 && bad++ < 5)
				printf("#   got  %s\n#   want %s\n", bp_decision_message(d), want);
		}
	CHECK_INT(bad, 0);
	bp_decision_free(d);
	bp_request_free(r);
	bp_policy_free(p);
}

/*
 * Deep conditions: a rule of many clauses is a deep && chain. Validation
 * refuses nesting past its bound; the deepest conditions it accepts are
 * decided alike by the compiled conditions and the evaluator (which also
 * bounds depth, counted the same way).
 */
static void
test_deep(void)
{
	static const char *const shapes[] = {
		"context.input.path like \"~/*\"", "context.input has path",
		"context.input.path == \"~/a\"", "!(context.input.path == \"x\")",
	};
	unsigned decisions = 0, errors = 0, mismatches = 0, refused = 0;
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
		for (unsigned n = 100; n <= 300; n += 8) {
			size_t cap = 200 + n * 64;
			char *text = malloc(cap);
			if (!text)
				return;
			size_t len = (size_t)snprintf(text, cap,
						      "permit (principal, action == Box::Action::\"fs:read\", resource)");
			for (unsigned i = 0; i < n; i++)
				len += (size_t)snprintf(text + len, cap - len, " when { %s }", shapes[s]);
			snprintf(text + len, cap - len, ";\n");
			struct pair pp;
			quiet_load = true;
			bool loaded = pair_open(&pp, text);
			quiet_load = false;
			if (loaded) {
				int c = both(&pp, "fs:read|path=~/a|operation=read_content", text);
				errors += c == BP_CAUSE_ERROR;
				mismatches += pp.mismatches;
				decisions++;
			} else {
				refused++;
			}
			pair_close(&pp);
			free(text);
		}
	CHECK_INT(mismatches, 0);
	CHECK(decisions > 8 && refused > 8); /* validation's bound falls inside the range tried */
	printf("# deep: %u decided alike (%u errors), %u refused as too deep\n", decisions, errors,
	       refused);
}

int
main(void)
{
	RUN(test_message_escapes);
	RUN(test_seams);
	RUN(test_action_changed);
	RUN(test_temporal);
	RUN(test_random);
	RUN(test_deep);
	return tap_done();
}
