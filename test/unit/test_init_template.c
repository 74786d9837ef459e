/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_init_template.c — the renderer of `boxctl init`'s templates (boxctl/init.h): values,
 * a line that is only an empty value left out, `@@if`/`@@if !`/`@@else`/`@@end` nested, Cedar's
 * `@id(` left alone, and each template error with its file and line. The real templates are
 * rendered for every agent by test/integration/t-init.sh.
 * Trusts: nothing; test code.
 */
#include <errno.h>
#include <stdlib.h>

#include "../../boxctl/init.h"
#include "tap.h"

const struct init_template init_templates[] = {
	{ "values.in", "name = @NAME@ (@NAME@@SUFFIX@)\n@EMPTY@\n  @EMPTY@ kept\n"
		       "@id(\"x\") a@b @lower@ @@ end\n" },
	{ "cond.in", "a\n@@if YES\nyes\n@@if !NO\nyes-not-no\n@@else\nnever\n@@end\n@@else\n"
		     "never\n@@end\n@@if NO\nnever\n@@else\nelse\n@@end\nz" },
	{ "unknown.in", "x\n@NOPE@\n" },
	{ "unknown-if.in", "@@if NOPE\n@@end\n" },
	{ "unbalanced.in", "@@if YES\n" },
	{ "stray-end.in", "@@end\n" },
	{ "directive.in", "a\n@@include x\n" },
	{ NULL, NULL },
};

static void
vars(struct init_vars *v)
{
	CHECK_INT(init_vars_set(v, "NAME", "box"), 0);
	CHECK_INT(init_vars_set(v, "SUFFIX", "-1"), 0);
	CHECK_INT(init_vars_set(v, "EMPTY", ""), 0);
	CHECK_INT(init_vars_set(v, "YES", "1"), 0);
	CHECK_INT(init_vars_set(v, "NO", NULL), 0);
	CHECK_INT(init_vars_set(v, "NAME", "demo"), 0); /* replaced, not added */
	CHECK_INT(v->n, 5);
}

static void
test_values(void)
{
	struct init_vars v = { 0 };
	char *out = NULL, *err = NULL;
	vars(&v);
	CHECK_INT(init_render("values.in", &v, &out, &err), 0);
	CHECK_STR(out, "name = demo (demo-1)\n   kept\n@id(\"x\") a@b @lower@ @@ end\n");
	free(out);
	init_vars_clear(&v);
}

static void
test_conditions(void)
{
	struct init_vars v = { 0 };
	char *out = NULL, *err = NULL;
	vars(&v);
	CHECK_INT(init_render("cond.in", &v, &out, &err), 0);
	CHECK_STR(out, "a\nyes\nyes-not-no\nelse\nz");
	free(out);
	init_vars_clear(&v);
}

static void
refused(const char *tmpl, const char *want)
{
	struct init_vars v = { 0 };
	char *out = NULL, *err = NULL;
	vars(&v);
	CHECK_INT(init_render(tmpl, &v, &out, &err), -EINVAL);
	CHECK(out == NULL);
	CHECK_STR(err, want);
	free(err);
	init_vars_clear(&v);
}

static void
test_errors(void)
{
	refused("unknown.in", "unknown.in:2: unknown variable NOPE");
	refused("unknown-if.in", "unknown-if.in:1: unknown variable NOPE");
	refused("unbalanced.in", "unbalanced.in:1: @@if without @@end");
	refused("stray-end.in", "stray-end.in:1: @@end without @@if");
	refused("directive.in", "directive.in:2: unknown directive @@include x");
	refused("absent.in", "absent.in:0: no such template");
}

int
main(void)
{
	RUN(test_values);
	RUN(test_conditions);
	RUN(test_errors);
	return tap_done();
}
