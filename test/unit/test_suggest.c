/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_suggest.c — the suggestion tail of libboxpolicy's load errors
 * (suggest.c): the edit distance, the closeness threshold, the exact text of
 * the tail, the bound on a long list; through the loader, that an unknown
 * action, field, enum value or entity type (in a condition and in a temporal
 * predicate) names its nearest valid spelling and lists the valid ones; and
 * the warning for a permit that admits everything.
 *
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boxpolicy.h"
#include "libboxpolicy/internal.h"
#include "tap.h"

static const char *const fs_read_ops[] = { "read_content", "read_metadata", "enumerate",
					   "read_link",    "change_dir",    "exec" };
#define N_OPS (sizeof(fs_read_ops) / sizeof(fs_read_ops[0]))

static void
test_distance(void)
{
	CHECK_INT(name_distance("fs:raed", "fs:read"), 1); /* one transposition */
	CHECK_INT(name_distance("kitten", "sitting"), 3);
	CHECK_INT(name_distance("", "abc"), 3);
	CHECK_INT(name_distance("path", "path"), 0);
	CHECK_INT(name_distance("paht", "path"), 1);
	CHECK_INT(name_distance("ca", "abc"), 3); /* OSA: no edit of a transposed pair */
	char long_word[100];
	memset(long_word, 'a', sizeof(long_word) - 1);
	long_word[sizeof(long_word) - 1] = 0;
	CHECK(name_distance(long_word, "a") == SIZE_MAX);
}

static void
test_threshold(void)
{
	/* a third of the word's length, at least 1, at most 3, below the length */
	CHECK_STR(nearest_name("read_lnik", fs_read_ops, N_OPS, name_at_strings), "read_link");
	CHECK_STR(nearest_name("exce", fs_read_ops, N_OPS, name_at_strings), "exec");
	CHECK(nearest_name("list", fs_read_ops, N_OPS, name_at_strings) == NULL);
	CHECK(nearest_name("exzz", fs_read_ops, N_OPS, name_at_strings) == NULL); /* 2 > 4/3 */
	CHECK_STR(nearest_name("readcontent", fs_read_ops, N_OPS, name_at_strings),
		  "read_content");
	CHECK(nearest_name("rd_cntnt", fs_read_ops, N_OPS, name_at_strings) == NULL);
	static const char *const one[] = { "a", "ip" };
	CHECK(nearest_name("b", one, 2, name_at_strings) == NULL); /* one letter: never */
	CHECK(nearest_name("", one, 2, name_at_strings) == NULL);
	/* a tie goes to the name listed first */
	static const char *const tie[] = { "cat", "car" };
	CHECK_STR(nearest_name("caX", tie, 2, name_at_strings), "cat");
}

static void
test_tail_text(void)
{
	char buf[300] = "unknown thing `exce`";
	suggest_names(buf, sizeof(buf), "exce", fs_read_ops, N_OPS, name_at_strings, "ops");
	CHECK_STR(buf, "unknown thing `exce`; did you mean `exec`? valid ops: read_content, "
		       "read_metadata, enumerate, read_link, change_dir, exec");
	char far[300] = "unknown thing `list`";
	suggest_names(far, sizeof(far), "list", fs_read_ops, N_OPS, name_at_strings, "ops");
	CHECK_STR(far, "unknown thing `list`; valid ops: read_content, read_metadata, "
		       "enumerate, read_link, change_dir, exec");
	/* a small buffer is cut, never overrun */
	char small[24] = "x";
	suggest_names(small, sizeof(small), "exce", fs_read_ops, N_OPS, name_at_strings, "ops");
	CHECK_INT(strlen(small), sizeof(small) - 1);
}

/* The first diagnostic of loading TEXT, or NULL; *errs gets the error count. */
static char *
first_diag(const char *text, const struct bp_schema *schema, size_t *errs, size_t *warns)
{
	struct bp_policy *p = NULL;
	struct bp_diags *d = NULL;
	struct bp_load_options o = { .home = "/home/dev", .schema = schema };
	bp_policy_load(text, strlen(text), &o, &p, &d);
	*errs = bp_diags_errors(d);
	*warns = bp_diags_warnings(d);
	const char *m = bp_diag_message(d, 0, NULL, NULL, NULL);
	char *copy = m ? strdup(m) : NULL;
	bp_diags_free(d);
	bp_policy_free(p);
	return copy;
}

#define VALID_ACTIONS                                                                      \
	"valid actions: fs:read, fs:write, fs:delete, fs:move, fs:other, net:connect, "     \
	"http:request, shell:exec, shell:spawn, mcp:call"

static void
test_load_unknown_action(void)
{
	size_t e, w;
	char *m = first_diag("permit (principal, action == Box::Action::\"fs:raed\", resource);",
			     NULL, &e, &w);
	CHECK_INT(e, 1);
	CHECK_STR(m, "rule 1: unknown action `Box::Action::\"fs:raed\"`; did you mean `fs:read`? "
		  VALID_ACTIONS);
	free(m);
	/* far from every action: no guess, still the list */
	m = first_diag("permit (principal, action == Box::Action::\"tool:invoke\", resource);", NULL,
		       &e, &w);
	CHECK_STR(m, "rule 1: unknown action `Box::Action::\"tool:invoke\"`; " VALID_ACTIONS);
	free(m);
	/* in a temporal predicate */
	m = first_diag("forbid (principal, action == Box::Action::\"fs:read\", resource) when temporal "
		       "{ formerly within 1h Box::Action::\"net:conect\"::request{} };",
		       NULL, &e, &w);
	CHECK(m && strstr(m, "; did you mean `net:connect`? " VALID_ACTIONS));
	free(m);
}

static void
test_load_unknown_field(void)
{
	size_t e, w;
	char *m = first_diag("permit (principal, action == Box::Action::\"shell:exec\", resource) "
			     "when { context.input.comand == \"ls\" };",
			     NULL, &e, &w);
	CHECK_STR(m, "rule 1: unknown field `context.input.comand` for Box::Action::\"shell:exec\"; "
		     "did you mean `command`? valid fields of Box::Action::\"shell:exec\": command, "
		     "program, arg1, arg2, arg_count, cwd");
	free(m);
	m = first_diag("permit (principal, action == Box::Action::\"fs:read\", resource) "
		       "when { context.input.x == \"ls\" };",
		       NULL, &e, &w);
	CHECK_STR(m, "rule 1: unknown field `context.input.x` for Box::Action::\"fs:read\"; "
		     "valid fields of Box::Action::\"fs:read\": path, operation");
	free(m);
	m = first_diag("forbid (principal, action == Box::Action::\"fs:read\", resource) when temporal "
		       "{ formerly within 1h Box::Action::\"fs:read\"::request{ input.paht: _ } };",
		       NULL, &e, &w);
	CHECK(m && strstr(m, "; did you mean `path`? valid input fields of this event: path, "
			     "operation"));
	free(m);
}

static void
test_load_unknown_enum(void)
{
	size_t e, w;
	char *m = first_diag("permit (principal, action == Box::Action::\"fs:read\", resource) when "
			     "{ context.input.operation == Box::FsReadOperation::\"read_lnik\" };",
			     NULL, &e, &w);
	CHECK(m && strstr(m, "is not declared as a valid eid; did you mean `read_link`? valid "
			     "values of Box::FsReadOperation: read_content, read_metadata, "
			     "enumerate, read_link, change_dir, exec"));
	free(m);
	m = first_diag("forbid (principal, action == Box::Action::\"fs:write\", resource) when temporal "
		       "{ formerly within 1h Box::Action::\"fs:write\"::response{ output.result: "
		       "Box::FsResponseResult::\"complete\" } };",
		       NULL, &e, &w);
	CHECK(m && strstr(m, "; did you mean `completed`? valid values of Box::FsResponseResult:"));
	free(m);
}

static void
test_load_unknown_entity_type(void)
{
	size_t e, w;
	char *m = first_diag("permit (principal is Box::Agnet, action, resource);", NULL, &e, &w);
	CHECK_STR(m, "rule 1: unknown entity type `Box::Agnet`; did you mean `Box::Agent`? valid "
		     "entity types: Box::Agent, Box::Resource, Box::Action, Box::FsReadOperation, "
		     "Box::FsWriteOperation, Box::FsDeleteOperation, Box::FsMoveOperation, "
		     "Box::FsOtherOperation, Box::FsResponseResult");
	free(m);
	m = first_diag("forbid (principal, action == Box::Action::\"fs:write\", resource) when temporal "
		       "{ formerly within 1h Box::Action::\"fs:write\"::response{ output.result: "
		       "Box::FsResponseResul::\"completed\" } };",
		       NULL, &e, &w);
	CHECK(m && strstr(m, "unknown entity type `Box::FsResponseResul`; did you mean "
			     "`Box::FsResponseResult`? valid entity types: Box::Agent,"));
	free(m);
}

/* An MCP namespace with many tools: the list stops at its budget. */
static void
test_long_list_bounded(void)
{
	struct bp_schema *s = NULL;
	CHECK_INT(bp_schema_new(&s), 0);
	CHECK_INT(bp_schema_add_namespace(s, "big"), 0);
	for (int i = 0; i < 200; i++) {
		char tool[32];
		snprintf(tool, sizeof(tool), "tool_number_%03d", i);
		CHECK_INT(bp_schema_add_action(s, "big", tool), 0);
	}
	size_t e, w;
	char *m = first_diag("permit (principal, action == big::Action::\"tool_numbr_007\", "
			     "resource);",
			     s, &e, &w);
	CHECK(m && strstr(m, "did you mean `tool_number_007`? valid actions: tool_number_000, "));
	CHECK(m && strlen(m) < 700);
	CHECK(m && strcmp(m + strlen(m) - 5, ", ...") == 0);
	free(m);
	bp_schema_free(s);
}

static void
test_permit_everything(void)
{
	static const char *const warned[] = {
		"permit (principal, action, resource);",
		"permit (principal, action, resource) when { true };",
		"permit (principal, action, resource) unless { false } when { true };",
		"permit (principal == Box::Agent::\"self\", action, resource is Box::Resource);",
	};
	for (size_t i = 0; i < sizeof(warned) / sizeof(warned[0]); i++) {
		size_t e, w;
		char *m = first_diag(warned[i], NULL, &e, &w);
		CHECK_INT(e, 0);
		CHECK_INT(w, 1);
		CHECK_STR(m, "rule 1 permits every action on every resource; only a forbid can deny "
			     "anything, so name the actions it should permit");
		free(m);
	}
	static const char *const quiet[] = {
		"forbid (principal, action, resource);",
		"permit (principal, action == Box::Action::\"fs:read\", resource);",
		"permit (principal, action, resource) when { false };",
		"permit (principal, action, resource) unless { true };",
		"permit (principal, action, resource) when { context has input };",
		"permit (principal == Box::Agent::\"other\", action, resource);",
	};
	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++) {
		size_t e, w;
		char *m = first_diag(quiet[i], NULL, &e, &w);
		CHECK_INT(w, 0);
		if (w)
			printf("#   warned for: %s\n", quiet[i]);
		free(m);
	}
	/* named by @id, and not beside errors */
	size_t e, w;
	char *m = first_diag("@id(\"all\") permit (principal, action, resource);", NULL, &e, &w);
	static const char prefix[] = "@id(\"all\") permits every action on every resource;";
	CHECK(m && strncmp(m, prefix, sizeof(prefix) - 1) == 0);
	free(m);
	m = first_diag("permit (principal, action, resource);\n"
		       "permit (principal, action == Box::Action::\"fs:raed\", resource);",
		       NULL, &e, &w);
	CHECK_INT(e, 1);
	CHECK_INT(w, 0);
	free(m);
}

int
main(void)
{
	RUN(test_distance);
	RUN(test_threshold);
	RUN(test_tail_text);
	RUN(test_load_unknown_action);
	RUN(test_load_unknown_field);
	RUN(test_load_unknown_enum);
	RUN(test_load_unknown_entity_type);
	RUN(test_long_list_bounded);
	RUN(test_permit_everything);
	return tap_done();
}
