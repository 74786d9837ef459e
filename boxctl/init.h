/* SPDX-License-Identifier: Apache-2.0 */
/*
 * init.h — `boxctl init`'s templates (boxctl/init/ templates, embedded at build time by
 * boxctl/init/embed.sh) and the small language that renders them.
 *
 * A template is text with two additions:
 *   - `@NAME@` (NAME: an upper-case letter, then upper-case letters, digits, `_`) is
 *     replaced by the variable's value; a line that is nothing but `@NAME@` and whose value
 *     is empty is left out. Any other `@` is text (Cedar's `@id(…)`).
 *   - lines `@@if NAME`, `@@if !NAME`, `@@else`, `@@end` keep or drop the lines between
 *     them: NAME is true when its value is not empty. They nest.
 * A name no variable defines, an unknown `@@` line or an unbalanced `@@if` is an error (a
 * bug in a template: the shell test renders every agent's files).
 * Trusts: the templates (the repository's own text) and the values the caller computed.
 */
#ifndef BOXCTL_INIT_H
#define BOXCTL_INIT_H

#include <stddef.h>

struct init_template {
	const char *name; /* the file's basename, e.g. "box.ini.in" */
	const char *text;
};

/* Generated from the files in boxctl/init/; ends with { NULL, NULL }. */
extern const struct init_template init_templates[];

#define INIT_VARS_MAX 64

struct init_vars {
	const char *name[INIT_VARS_MAX];
	char *value[INIT_VARS_MAX]; /* owned */
	size_t n;
};

/* Set (or replace) NAME to a copy of VALUE (NULL: ""). Negative errno. */
int init_vars_set(struct init_vars *v, const char *name, const char *value);
void init_vars_clear(struct init_vars *v);

/*
 * Render the template named TEMPLATE with V into *ret (caller frees). On a template error
 * returns -EINVAL with a message in *ret_err (caller frees): "TEMPLATE:LINE: what".
 */
int init_render(const char *tmpl, const struct init_vars *v, char **ret, char **ret_err);

#endif
