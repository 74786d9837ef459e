/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_policy.c — libFuzzer target for the policy parser and validator: the
 * input is a policy text, loaded with an owner home and an MCP tool schema;
 * when it loads, a few requests are decided (evaluator and message paths).
 * Trusts: nothing; the input is arbitrary bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "boxpolicy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
decide_some(const struct bp_policy *p)
{
	struct bp_request *r = NULL;
	struct bp_decision *d = NULL;
	if (bp_request_new(p, &r) < 0 || bp_decision_new(&d) < 0)
		goto out;
	static const char *const paths[] = { "~/project/a", "/tmp/x", "", "/\xff\n'\"" };
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		bp_request_reset(r);
		bp_request_set_action(r, "fs:read");
		bp_request_set_string(r, "path", paths[i], strlen(paths[i]));
		bp_request_set_string(r, "operation", "read_content", 12);
		(void)bp_decide(p, r, NULL, d);
		(void)bp_decision_message(d);
	}
	bp_request_reset(r);
	bp_request_set_action(r, "net:connect");
	bp_request_set_string(r, "host", "h", 1);
	bp_request_set_long(r, "port", INT64_MAX);
	bp_request_set_string(r, "ip", "10.0.0.1", 8);
	(void)bp_decide(p, r, NULL, d);
	bp_request_reset(r);
	bp_request_set_action(r, "shell:spawn");
	bp_request_set_string(r, "command", "git push", 8);
	bp_request_set_string(r, "program", "git", 3);
	bp_request_set_string(r, "program_path", "/usr/bin/git", 12);
	bp_request_set_string(r, "cwd", "~", 1);
	bp_request_set_long(r, "arg_count", 1);
	bp_request_set_string(r, "arg1", "push", 4);
	struct bp_value *set = bp_value_set(r);
	bp_value_set_add(r, set, bp_value_string(r, "~/.aws", 6));
	bp_request_set_value(r, "credential_reads", set);
	(void)bp_decide(p, r, NULL, d);
	bp_request_reset(r);
	bp_request_set_action(r, "demo_mcp::Action::\"search\"");
	bp_request_set_string(r, "query", "cats", 4);
	bp_request_set_long(r, "limit", -1);
	(void)bp_decide(p, r, NULL, d);
out:
	bp_decision_free(d);
	bp_request_free(r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bp_schema *s = NULL;
	if (bp_schema_new(&s) < 0)
		return 0;
	bp_schema_add_action(s, "demo_mcp", "search");
	bp_schema_add_field(s, "demo_mcp", "search", "query", "String", false);
	bp_schema_add_field(s, "demo_mcp", "search", "limit", "Long", false);
	bp_schema_add_field(s, "demo_mcp", "search", "opts", "{depth: Long, tags?: Set<String>}", true);
	bp_schema_add_pending(s, "later");
	struct bp_load_options o = { .home = "/home/dev", .schema = s,
				     .allow_unknown_namespaces = size % 2 == 0 };
	struct bp_policy *p = NULL;
	struct bp_diags *d = NULL;
	int r = bp_policy_load((const char *)data, size, &o, &p, &d);
	for (size_t i = 0; i < bp_diags_count(d); i++)
		(void)bp_diag_message(d, i, NULL, NULL, NULL);
	bp_diags_free(d);
	if (r == 0) {
		decide_some(p);
		for (size_t i = 0; i < bp_policy_rule_count(p); i++)
			(void)bp_policy_rule_name(p, i);
		struct bp_policy *p2 = NULL;
		if (bp_policy_reload(p, s, &p2, NULL) == 0)
			bp_policy_free(p2);
	}
	bp_policy_free(p);
	bp_schema_free(s);
	return 0;
}
