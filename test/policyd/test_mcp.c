/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_mcp.c — box-policyd's MCP side end to end (rows 42-45 of the policy
 * protocol), started the way boxd starts it (harness.c): a namespace is
 * pending until its PolicyToolSchema (its calls deny, cause error, the
 * message names the pending schema); a schema that checks makes its actions
 * refinements (permit with cause not_refined when no rule matched, a forbid
 * or an evaluation error denies: type confusion "200" for a Long, a missing
 * required argument, an overflow), nested record fields and Set fields; a
 * schema the policy does not type-check against is answered ok=false naming
 * the rule and its line and fails the namespace (its calls deny, the message
 * says so) until a later schema replaces it; temporal budgets keep their
 * state across the re-validation; a probe decides as a Decide would (a
 * budget at N+1 denies) but moves no budget, writes no history event and
 * no decision line; protocol errors (a namespace not in PolicyInit, a
 * duplicate tool, too many tools, a schema from box-shell) are fatal.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "tap.h"

static const char *bin;
static char *state;

/* Refinement rules on docs::*, and mcp:call itself permitted for docs. */
static const char *refine_policy =
	"@id(\"docs_ok\")\n"
	"permit (principal, action == Box::Action::\"mcp:call\", resource)\n"
	"when { context.input.server == \"docs\" };\n"
	"@id(\"big_add\") @description(\"additions over 100 need a human\")\n"
	"forbid (principal, action == docs::Action::\"add\", resource)\n"
	"when { context.input.a > 100 };\n"
	"@id(\"deep\")\n"
	"forbid (principal, action == docs::Action::\"fetch\", resource)\n"
	"when { context.input.opts.depth > 3 };\n"
	"@id(\"tagged\")\n"
	"forbid (principal, action == docs::Action::\"fetch\", resource)\n"
	"when { context.input has tags && context.input.tags.contains(\"secret\") };\n"
	"@id(\"readme_ok\")\n"
	"permit (principal, action == docs::Action::\"read\", resource)\n"
	"when { context.input.name == \"README\" };\n"
	"forbid (principal, action == docs::Action::\"mul\", resource)\n"
	"when { context.input.a * context.input.b > 10 };\n"
	"// the other server's rule: pending, no warning in docs' registration\n"
	"forbid (principal, action == gh_mcp::Action::\"x\", resource);\n";

static const char *docs_tools =
	"{\"add\":{\"a\":\"Long\",\"b\":\"Long\"},"
	"\"fetch\":{\"opts\":\"{depth: Long, follow?: Bool}\",\"tags?\":\"Set<String>\"},"
	"\"read\":{\"name\":\"String\"},"
	"\"mul\":{\"a\":\"Long\",\"b\":\"Long\"}}";

static const char *const two_ns[] = { "docs", "gh_mcp" };

#define ADD(a) "{\"action\":\"docs::Action::\\\"add\\\"\",\"input\":{\"a\":" a ",\"b\":1}}"
#define FETCH(in) "{\"action\":\"docs::Action::\\\"fetch\\\"\",\"input\":" in "}"
#define READ(n) "{\"action\":\"docs::Action::\\\"read\\\"\",\"input\":{\"name\":\"" n "\"}}"
#define CALL(server, tool)                                                                    \
	"{\"action\":\"mcp:call\",\"input\":{\"server\":\"" server "\",\"method\":\"tools/call\"," \
	"\"tool\":\"" tool "\"}}"

static void
fresh_state(void)
{
	if (state) {
		pd_rmtree(state);
		free(state);
	}
	state = pd_tmpdir("policyd-mcp");
}

static struct pd_opts
opts(const char *policy, const char *clock)
{
	static char errpath[4096];
	(void)snprintf(errpath, sizeof(errpath), "%s/stderr", state);
	return (struct pd_opts){ .binary = bin, .state_dir = state, .policy = policy,
				 .test_clock = clock, .stderr_path = errpath,
				 .mcp_namespaces = two_ns, .n_mcp_namespaces = 2 };
}

static char *
slurp(const char *rel)
{
	char path[4096];
	(void)snprintf(path, sizeof(path), "%s/%s", state, rel);
	FILE *f = fopen(path, "re");
	if (!f)
		return strdup("");
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int c;
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(f);
	fclose(m);
	/* the decision log as the tests compare it: chain checked, suffixes and seals off */
	if (strncmp(rel, "decisions.jsonl", 15) == 0)
		CHECK(pd_unchain_log(&buf));
	return buf;
}

static size_t
count_lines(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static long long
file_size(const char *rel)
{
	char path[4096];
	struct stat st;
	(void)snprintf(path, sizeof(path), "%s/%s", state, rel);
	return stat(path, &st) < 0 ? -1 : (long long)st.st_size;
}

/*
 * Decide LINE as PEER; check verdict and cause, and that the message holds
 * WANT_MSG (NULL: any).
 */
static bool
decide(struct pd *pd, int peer, const char *line, bool permit, int cause, const char *want_msg)
{
	Box__DecideReply *rep = NULL;
	int r = pd_send_line(pd, peer, line, &rep);
	if (r < 0) {
		printf("#   send %s: %s\n", line, strerror(-r));
		return false;
	}
	bool ok = (rep->verdict == BOX__DECISION_VERDICT__VERDICT_PERMIT) == permit &&
		  (int)rep->cause == cause && (!want_msg || strstr(rep->message, want_msg));
	if (!ok)
		printf("#   %s -> verdict %d cause %d: %s\n", line, rep->verdict, rep->cause,
		       rep->message);
	box_msg_free(&rep->base);
	return ok;
}

static bool
register_ok(struct pd *pd, const char *server, const char *ns, const char *tools)
{
	Box__PolicyToolSchemaReply *rep = NULL;
	int r = pd_send_tool_schema(pd, PD_MCPD, server, ns, tools, &rep);
	if (r < 0) {
		printf("#   tool schema: %s\n", strerror(-r));
		return false;
	}
	bool ok = rep->ok && !rep->error;
	if (!ok)
		printf("#   tool schema refused: %s\n", rep->error ? rep->error : "(no error)");
	box_msg_free(&rep->base);
	return ok;
}

/* ---- registration and refinement -------------------------------------------------- */

static void
test_pending_then_refined(void)
{
	struct pd pd;
	fresh_state();
	struct pd_opts o = opts(refine_policy, NULL);
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	/* Before any tools/list: denied, cause error, naming the pending schema. */
	CHECK(decide(&pd, PD_MCPD, ADD("5"), false, BOX__DECISION_CAUSE__CAUSE_ERROR,
		     "policy denied this operation on 'docs/add' [policy-pending]: The tool schema "
		     "of this MCP server is not known yet (no tools/list seen)."));
	/* mcp:call itself is an ordinary action. */
	CHECK(decide(&pd, PD_MCPD, CALL("docs", "add"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED,
		     "policy permitted this operation on 'docs/add'."));
	CHECK(decide(&pd, PD_MCPD, CALL("other", "add"), false,
		     BOX__DECISION_CAUSE__CAUSE_NO_MATCH, "[default-deny]"));

	CHECK(register_ok(&pd, "docs", "docs", docs_tools));
	/* No matching rule: the permitted mcp:call stands (not_refined). */
	CHECK(decide(&pd, PD_MCPD, ADD("5"), true, BOX__DECISION_CAUSE__CAUSE_NOT_REFINED,
		     "policy permitted this operation on 'docs/add'."));
	CHECK(decide(&pd, PD_MCPD, ADD("101"), false, BOX__DECISION_CAUSE__CAUSE_FORBIDDEN,
		     "policy denied this operation on 'docs/add' [policy: big_add]: additions "
		     "over 100 need a human."));
	/* Type confusion is refused, never coerced; a missing required argument too. */
	CHECK(decide(&pd, PD_MCPD, ADD("\"200\""), false, BOX__DECISION_CAUSE__CAUSE_ERROR,
		     "because the request could not be evaluated."));
	CHECK(decide(&pd, PD_MCPD, "{\"action\":\"docs::Action::\\\"add\\\"\",\"input\":{\"b\":1}}",
		     false, BOX__DECISION_CAUSE__CAUSE_ERROR, NULL));
	/* An argument not in the schema. */
	CHECK(decide(&pd, PD_MCPD, "{\"action\":\"docs::Action::\\\"add\\\"\",\"input\":{\"a\":1,"
				   "\"b\":1,\"c\":1}}",
		     false, BOX__DECISION_CAUSE__CAUSE_ERROR, NULL));
	/* A nested record field; an optional Set with its has guard. */
	CHECK(decide(&pd, PD_MCPD, FETCH("{\"opts\":{\"depth\":2}}"), true,
		     BOX__DECISION_CAUSE__CAUSE_NOT_REFINED, NULL));
	CHECK(decide(&pd, PD_MCPD, FETCH("{\"opts\":{\"depth\":4,\"follow\":true}}"), false,
		     BOX__DECISION_CAUSE__CAUSE_FORBIDDEN, "[policy: deep]"));
	CHECK(decide(&pd, PD_MCPD, FETCH("{\"opts\":{\"depth\":1},\"tags\":[\"a\",\"secret\"]}"),
		     false, BOX__DECISION_CAUSE__CAUSE_FORBIDDEN, "[policy: tagged]"));
	CHECK(decide(&pd, PD_MCPD, FETCH("{\"opts\":{\"depth\":1},\"tags\":[\"a\"]}"), true,
		     BOX__DECISION_CAUSE__CAUSE_NOT_REFINED, NULL));
	CHECK(decide(&pd, PD_MCPD, FETCH("{\"opts\":{\"depth\":\"1\"}}"), false,
		     BOX__DECISION_CAUSE__CAUSE_ERROR, NULL));
	/* A matching permit: cause permitted. */
	CHECK(decide(&pd, PD_MCPD, READ("README"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED,
		     "policy permitted this operation on 'docs/read'."));
	CHECK(decide(&pd, PD_MCPD, READ("LICENSE"), true, BOX__DECISION_CAUSE__CAUSE_NOT_REFINED,
		     NULL));
	/* An evaluation error (overflow) denies, naming the rule. */
	CHECK(decide(&pd, PD_MCPD,
		     "{\"action\":\"docs::Action::\\\"mul\\\"\",\"input\":{\"a\":9223372036854775807,"
		     "\"b\":2}}",
		     false, BOX__DECISION_CAUSE__CAUSE_ERROR, NULL));
	/* A tool the list did not have; the other namespace stays pending. */
	CHECK(decide(&pd, PD_MCPD, "{\"action\":\"docs::Action::\\\"nope\\\"\",\"input\":{}}", false,
		     BOX__DECISION_CAUSE__CAUSE_ERROR, NULL));
	CHECK(decide(&pd, PD_GATEWAY, "{\"action\":\"gh_mcp::Action::\\\"x\\\"\",\"input\":{}}",
		     false, BOX__DECISION_CAUSE__CAUSE_ERROR, "not known yet"));
	CHECK_INT(pd_stop(&pd), 0);

	/* The decision log: not_refined lines are permits. */
	char *log = slurp("decisions.jsonl");
	CHECK(strstr(log, "\"action\":\"docs::Action::\\\"add\\\"\",\"resource\":\"docs/add\","
			  "\"verdict\":\"permit\",\"cause\":\"not_refined\"") != NULL);
	if (!strstr(log, "\"cause\":\"not_refined\""))
		printf("# log: %s\n", log);
	free(log);
	/* One stderr line for the registration. */
	char *err = slurp("stderr");
	CHECK(strstr(err, "[mcp.docs] (namespace docs): 4 of 4 tools registered; the policy "
			  "checks against them (0 warnings)") != NULL);
	free(err);
}

static void
test_failed_then_replaced(void)
{
	struct pd pd;
	fresh_state();
	struct pd_opts o = opts(refine_policy, NULL);
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	/* `a` is a String: `context.input.a > 100` cannot type-check. */
	Box__PolicyToolSchemaReply *rep = NULL;
	CHECK_INT(pd_send_tool_schema(&pd, PD_MCPD, "docs", "docs",
				      "{\"add\":{\"a\":\"String\",\"b\":\"Long\"},"
				      "\"fetch\":{\"opts\":\"{depth: Long}\"},"
				      "\"read\":{\"name\":\"String\"},"
				      "\"mul\":{\"a\":\"Long\",\"b\":\"Long\"}}",
				      &rep),
		  0);
	if (rep) {
		CHECK(!rep->ok);
		CHECK(rep->error && strstr(rep->error, "big_add") && strstr(rep->error, "line 6:"));
		if (rep->error)
			printf("# error: %s\n", rep->error);
		box_msg_free(&rep->base);
	}
	CHECK(decide(&pd, PD_MCPD, ADD("5"), false, BOX__DECISION_CAUSE__CAUSE_ERROR,
		     "policy denied this operation on 'docs/add' [policy-failed]: The tool schema "
		     "of [mcp.docs] failed the policy check (line 6:22: @id(\"big_add\"): `>` needs Long "
		     "operands, found String)."));
	CHECK(decide(&pd, PD_MCPD, READ("README"), false, BOX__DECISION_CAUSE__CAUSE_ERROR,
		     "failed the policy check"));
	/* mcp:call is not touched. */
	CHECK(decide(&pd, PD_MCPD, CALL("docs", "add"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED,
		     NULL));
	/* A later schema replaces it and is checked again. */
	CHECK(register_ok(&pd, "docs", "docs", docs_tools));
	CHECK(decide(&pd, PD_MCPD, ADD("5"), true, BOX__DECISION_CAUSE__CAUSE_NOT_REFINED, NULL));
	CHECK(decide(&pd, PD_MCPD, ADD("500"), false, BOX__DECISION_CAUSE__CAUSE_FORBIDDEN, NULL));
	/* And a checked one is replaced by a failing one: a missing argument a rule reads. */
	CHECK_INT(pd_send_tool_schema(&pd, PD_MCPD, "docs", "docs",
				      "{\"add\":{\"b\":\"Long\"},"
				      "\"fetch\":{\"opts\":\"{depth: Long}\"},"
				      "\"read\":{\"name\":\"String\"},"
				      "\"mul\":{\"a\":\"Long\",\"b\":\"Long\"}}",
				      &rep),
		  0);
	if (rep) {
		CHECK(!rep->ok && rep->error && strstr(rep->error, "big_add"));
		box_msg_free(&rep->base);
	}
	CHECK(decide(&pd, PD_MCPD, ADD("5"), false, BOX__DECISION_CAUSE__CAUSE_ERROR,
		     "failed the policy check"));
	/* An optional argument read without a has guard does not check either. */
	CHECK_INT(pd_send_tool_schema(&pd, PD_MCPD, "docs", "docs",
				      "{\"add\":{\"a\":\"Long\",\"b\":\"Long\"},"
				      "\"fetch\":{\"opts?\":\"{depth: Long}\"},"
				      "\"read\":{\"name\":\"String\"},"
				      "\"mul\":{\"a\":\"Long\",\"b\":\"Long\"}}",
				      &rep),
		  0);
	if (rep) {
		CHECK(!rep->ok && rep->error && strstr(rep->error, "deep"));
		if (rep->error)
			printf("# error: %s\n", rep->error);
		box_msg_free(&rep->base);
	}
	/* A tool name no rule can spell: a warning, the rest registers. */
	CHECK_INT(pd_send_tool_schema(&pd, PD_MCPD, "docs", "docs",
				      "{\"add\":{\"a\":\"Long\",\"b\":\"Long\"},"
				      "\"fetch\":{\"opts\":\"{depth: Long}\"},"
				      "\"read\":{\"name\":\"String\"},"
				      "\"mul\":{\"a\":\"Long\",\"b\":\"Long\"},\"we\\\"ird\":{}}",
				      &rep),
		  0);
	if (rep) {
		CHECK(rep->ok && !rep->error);
		CHECK_INT(rep->n_warnings, 1);
		if (rep->n_warnings == 1)
			CHECK(strstr(rep->warnings[0], "tool 'we\"ird'") != NULL);
		box_msg_free(&rep->base);
	}
	CHECK(decide(&pd, PD_MCPD, ADD("5"), true, BOX__DECISION_CAUSE__CAUSE_NOT_REFINED, NULL));
	CHECK_INT(pd_stop(&pd), 0);
	char *err = slurp("stderr");
	CHECK(strstr(err, "[mcp.docs] (namespace docs): the tool schema failed the policy check: "
			  "line 6:22: @id(\"big_add\")") != NULL);
	CHECK(strstr(err, "[mcp.docs] (namespace docs): 4 of 5 tools registered") != NULL);
	free(err);
}

/* ---- temporal state across the re-validation, and the probe ------------------------- */

/* Forbid the 4th mcp:call request within 60 s (the current one counts), and a tool budget. */
static const char *budget_policy =
	"@id(\"docs_ok\")\n"
	"permit (principal, action == Box::Action::\"mcp:call\", resource);\n"
	"@id(\"call_budget\")\n"
	"forbid (principal, action == Box::Action::\"mcp:call\", resource)\n"
	"when temporal {\n"
	"    exists (total: Long). (\n"
	"        (count for (t: Timepoint). where (\n"
	"            formerly within 60s (\n"
	"                Box::Action::\"mcp:call\"::request{ input.server: _ } && tp(t)\n"
	"            )\n"
	"        )) == total\n"
	"        && total >= 4\n"
	"    )\n"
	"};\n"
	"@id(\"add_budget\")\n"
	"forbid (principal, action == docs::Action::\"add\", resource)\n"
	"when temporal {\n"
	"    exists (total: Long). (\n"
	"        (count for (t: Timepoint). where (\n"
	"            formerly within 60s (\n"
	"                docs::Action::\"add\"::request{ input.a: _ } && tp(t)\n"
	"            )\n"
	"        )) == total\n"
	"        && total >= 3\n"
	"    )\n"
	"};\n";

static bool
probe_all(struct pd *pd, const char *const *lines, size_t n, bool permit, int cause)
{
	Box__PolicyProbeReply *rep = NULL;
	int r = pd_send_probe(pd, PD_MCPD, lines, n, &rep);
	if (r < 0) {
		printf("#   probe: %s\n", strerror(-r));
		return false;
	}
	bool ok = rep->n_replies == n;
	for (size_t i = 0; ok && i < n; i++) {
		const Box__DecideReply *d = rep->replies[i];
		ok = (d->verdict == BOX__DECISION_VERDICT__VERDICT_PERMIT) == permit &&
		     (int)d->cause == cause;
		if (!ok)
			printf("#   probe %zu: verdict %d cause %d: %s\n", i, d->verdict, d->cause,
			       d->message);
	}
	box_msg_free(&rep->base);
	return ok;
}

static void
test_budget_survives_registration_and_probes(void)
{
	struct pd pd;
	fresh_state();
	struct pd_opts o = opts(budget_policy, "1700000000000000000,1000000");
	Box__PolicyReady *ready = NULL;
	CHECK_INT(pd_start(&o, &pd, &ready), 0);
	if (!ready)
		return;
	CHECK(ready->ok);
	CHECK_INT(ready->temporal_rules, 2);
	box_msg_free(&ready->base);
	/* Two calls: the budget is at 2 of 3 allowed. */
	CHECK(decide(&pd, PD_MCPD, CALL("docs", "add"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED,
		     NULL));
	CHECK(decide(&pd, PD_MCPD, CALL("docs", "add"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED,
		     NULL));
	/* The re-validation keeps the call budget's events. */
	CHECK(register_ok(&pd, "docs", "docs", "{\"add\":{\"a\":\"Long\",\"b\":\"Long\"}}"));
	long long hist = file_size("policy/history");
	/* Probes see the current event (the 3rd: permitted) and count nothing. */
	const char *calls[8];
	for (int i = 0; i < 8; i++)
		calls[i] = CALL("docs", "add");
	for (int k = 0; k < 3; k++)
		CHECK(probe_all(&pd, calls, 8, true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	CHECK_INT(file_size("policy/history"), hist);
	/* A real decision: the 3rd, permitted (24 probes moved nothing). */
	CHECK(decide(&pd, PD_MCPD, CALL("docs", "add"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED,
		     NULL));
	/* Now a probe of the 4th answers what a Decide of it does: the budget denies. */
	CHECK(probe_all(&pd, calls, 2, false, BOX__DECISION_CAUSE__CAUSE_FORBIDDEN));
	CHECK(decide(&pd, PD_MCPD, CALL("docs", "add"), false, BOX__DECISION_CAUSE__CAUSE_FORBIDDEN,
		     "[policy: call_budget]"));

	/* A budget on the tool itself: 2 refinements pass, the 3rd is forbidden. */
	const char *adds[4] = { ADD("1"), ADD("1"), ADD("1"), ADD("1") };
	CHECK(decide(&pd, PD_MCPD, ADD("1"), true, BOX__DECISION_CAUSE__CAUSE_NOT_REFINED, NULL));
	CHECK(probe_all(&pd, adds, 4, true, BOX__DECISION_CAUSE__CAUSE_NOT_REFINED));
	CHECK(decide(&pd, PD_MCPD, ADD("1"), true, BOX__DECISION_CAUSE__CAUSE_NOT_REFINED, NULL));
	/* Re-registering (the same tools again) keeps the tool budget too. */
	CHECK(register_ok(&pd, "docs", "docs", "{\"add\":{\"a\":\"Long\",\"b\":\"Long\"}}"));
	CHECK(probe_all(&pd, adds, 1, false, BOX__DECISION_CAUSE__CAUSE_FORBIDDEN));
	CHECK(decide(&pd, PD_MCPD, ADD("1"), false, BOX__DECISION_CAUSE__CAUSE_FORBIDDEN,
		     "[policy: add_budget]"));
	CHECK_INT(pd_stop(&pd), 0);

	/* Only the real decisions are in the log: 4 mcp:call, 3 adds. */
	char *log = slurp("decisions.jsonl");
	CHECK_INT(count_lines(log), 7);
	free(log);
}

/* Mixed probes answer in order; none is logged; probes need no temporal rule. */
static void
test_probe_in_order(void)
{
	struct pd pd;
	fresh_state();
	struct pd_opts o = opts(refine_policy, NULL);
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	CHECK(register_ok(&pd, "docs", "docs", docs_tools));
	const char *lines[] = { CALL("docs", "add"), CALL("other", "add"), ADD("5"), ADD("101"),
				ADD("\"200\""), READ("README") };
	Box__PolicyProbeReply *rep = NULL;
	CHECK_INT(pd_send_probe(&pd, PD_GATEWAY, lines, 6, &rep), 0);
	if (rep) {
		static const int causes[] = {
			BOX__DECISION_CAUSE__CAUSE_PERMITTED, BOX__DECISION_CAUSE__CAUSE_NO_MATCH,
			BOX__DECISION_CAUSE__CAUSE_NOT_REFINED, BOX__DECISION_CAUSE__CAUSE_FORBIDDEN,
			BOX__DECISION_CAUSE__CAUSE_ERROR, BOX__DECISION_CAUSE__CAUSE_PERMITTED,
		};
		CHECK_INT(rep->n_replies, 6);
		for (size_t i = 0; i < rep->n_replies && i < 6; i++)
			CHECK_INT(rep->replies[i]->cause, causes[i]);
		if (rep->n_replies >= 4)
			CHECK_STR(rep->replies[3]->message,
				  "policy denied this operation on 'docs/add' [policy: big_add]: "
				  "additions over 100 need a human.");
		box_msg_free(&rep->base);
	}
	CHECK_INT(pd_stop(&pd), 0);
	char *log = slurp("decisions.jsonl");
	CHECK_STR(log, "");
	free(log);
}

/* A tool list far above one 64 KiB packet: fragmented, reassembled, registered. */
static void
test_big_schema(void)
{
	struct pd pd;
	fresh_state();
	struct pd_opts o = opts(refine_policy, NULL);
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	char *json = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&json, &len);
	fputs("{\"x\":{}", f);
	for (int i = 0; i < 4000; i++)
		fprintf(f, ",\"tool_with_a_long_name_%04d\":{\"first_argument\":\"Long\","
			   "\"second_argument?\":\"{depth: Long, tags?: Set<String>}\"}",
			i);
	fputs("}", f);
	fclose(f);
	CHECK(len > 256 * 1024);
	Box__PolicyToolSchemaReply *rep = NULL;
	CHECK_INT(pd_send_tool_schema(&pd, PD_GATEWAY, "gh-mcp", "gh_mcp", json, &rep), 0);
	free(json);
	if (rep) {
		CHECK(rep->ok);
		box_msg_free(&rep->base);
	}
	CHECK(decide(&pd, PD_GATEWAY,
		     "{\"action\":\"gh_mcp::Action::\\\"tool_with_a_long_name_3999\\\"\","
		     "\"input\":{\"first_argument\":1}}",
		     true, BOX__DECISION_CAUSE__CAUSE_NOT_REFINED, "'gh_mcp/tool_with_a_long_name_3999'"));
	CHECK(decide(&pd, PD_GATEWAY, "{\"action\":\"gh_mcp::Action::\\\"x\\\"\",\"input\":{}}",
		     false, BOX__DECISION_CAUSE__CAUSE_FORBIDDEN, NULL));
	CHECK_INT(pd_stop(&pd), 0);
	char *err = slurp("stderr");
	CHECK(strstr(err, "[mcp.gh-mcp] (namespace gh_mcp): 4001 of 4001 tools registered") != NULL);
	free(err);
}

/* ---- protocol errors ------------------------------------------------------------------ */

/* Send M (packed, unchecked) as TYPE from PEER; policyd must exit 1 with WANT on stderr. */
static void
expect_fatal(const ProtobufCMessage *m, uint32_t type, int peer, const char *want)
{
	struct pd pd;
	fresh_state();
	struct pd_opts o = opts(refine_policy, NULL);
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(n ? n : 1);
	protobuf_c_message_pack(m, buf);
	CHECK_INT(pd_send_raw(&pd, peer, type, buf, n), 0);
	free(buf);
	int status = 0;
	CHECK_INT(waitpid(pd.pid, &status, 0), pd.pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	pd.pid = -1;
	pd_stop(&pd);
	char *err = slurp("stderr");
	CHECK(strstr(err, want) != NULL);
	if (!strstr(err, want))
		printf("# stderr: %s\n", err);
	free(err);
}

static void
test_protocol_errors(void)
{
	Box__PolicyToolSchema *m = NULL;
	/* A namespace PolicyInit did not declare. */
	CHECK_INT(pd_tool_schema("docs", "nothere", "{\"add\":{\"a\":\"Long\"}}", &m), 0);
	expect_fatal(&m->base, BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, PD_MCPD,
		     "the tool schema of namespace 'nothere' ([mcp.docs]), which is not one of "
		     "the box's MCP namespaces");
	pd_tool_schema_free(m);
	/* A duplicate tool name (the validator). */
	CHECK_INT(pd_tool_schema("docs", "docs", "{\"add\":{},\"sub\":{}}", &m), 0);
	free(m->tools[1]->name);
	m->tools[1]->name = strdup("add");
	expect_fatal(&m->base, BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, PD_MCPD,
		     "Protocol error from mcpd");
	pd_tool_schema_free(m);
	/* An invalid namespace spelling. */
	CHECK_INT(pd_tool_schema("docs", "my-docs", "{\"add\":{}}", &m), 0);
	expect_fatal(&m->base, BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, PD_MCPD,
		     "Protocol error from mcpd");
	pd_tool_schema_free(m);
	/* Too many tools (4097). */
	CHECK_INT(pd_tool_schema("docs", "docs", "{}", &m), 0);
	m->tools = realloc(m->tools, 4097 * sizeof(*m->tools));
	for (size_t i = 0; i < 4097; i++) {
		Box__PolicyTool *t = calloc(1, sizeof(*t));
		box__policy_tool__init(t);
		char name[16];
		(void)snprintf(name, sizeof(name), "t%zu", i);
		t->name = strdup(name);
		m->tools[m->n_tools++] = t;
	}
	expect_fatal(&m->base, BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, PD_MCPD,
		     "Protocol error from mcpd");
	pd_tool_schema_free(m);
	/* A type expression over 4096 bytes. */
	CHECK_INT(pd_tool_schema("docs", "docs", "{\"add\":{\"a\":\"Long\"}}", &m), 0);
	free(m->tools[0]->fields[0]->type);
	m->tools[0]->fields[0]->type = malloc(4098);
	memset(m->tools[0]->fields[0]->type, 'L', 4097);
	m->tools[0]->fields[0]->type[4097] = '\0';
	expect_fatal(&m->base, BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, PD_MCPD,
		     "Protocol error from mcpd");
	pd_tool_schema_free(m);
	/* box-shell does not speak MCP; boxd may not send it at all (the table). */
	CHECK_INT(pd_tool_schema("docs", "docs", "{\"add\":{\"a\":\"Long\"}}", &m), 0);
	expect_fatal(&m->base, BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, PD_SHELL,
		     "shell: it sent PolicyToolSchema (only box-mcpd and the gateway do)");
	expect_fatal(&m->base, BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, PD_BOXD,
		     "Protocol error from boxd");
	pd_tool_schema_free(m);
	/* A probe of 257 requests. */
	Box__PolicyProbeRequest pr = BOX__POLICY_PROBE_REQUEST__INIT;
	Box__DecideRequest d = BOX__DECIDE_REQUEST__INIT;
	Box__DecideRequest *reqs[257];
	d.action = "mcp:call";
	for (size_t i = 0; i < 257; i++)
		reqs[i] = &d;
	pr.requests = reqs;
	pr.n_requests = 257;
	expect_fatal(&pr.base, BOX__MSG_TYPE__MSG_POLICY_PROBE_REQUEST, PD_MCPD,
		     "Protocol error from mcpd");
}

int
main(void)
{
	bin = pd_binary();
	if (access(bin, X_OK) < 0) {
		printf("not ok - box-policyd not found at %s\n", bin);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	RUN(test_pending_then_refined);
	RUN(test_failed_then_replaced);
	RUN(test_budget_survives_registration_and_probes);
	RUN(test_probe_in_order);
	RUN(test_big_schema);
	RUN(test_protocol_errors);
	if (state) {
		pd_rmtree(state);
		free(state);
	}
	return tap_done();
}
