/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_fields.c — a request's fields on the stack (policy_fields.h).
 * Trusts: its callers.
 */
#include <stdlib.h>

#include "policy_fields.h"

void
policy_fields_init(struct policy_fields *fs)
{
	fs->n = 0;
}

static Box__PolicyValue *
field_add(struct policy_fields *fs, const char *name)
{
	if (fs->n >= POLICY_FIELDS_MAX)
		abort(); /* a programming error: no action has more fields */
	size_t i = fs->n++;
	box__policy_field__init(&fs->f[i]);
	box__policy_value__init(&fs->v[i]);
	fs->f[i].name = (char *)name;
	fs->f[i].value = &fs->v[i];
	fs->p[i] = &fs->f[i];
	return &fs->v[i];
}

void
policy_fields_str(struct policy_fields *fs, const char *name, const char *v)
{
	Box__PolicyValue *pv = field_add(fs, name);
	pv->kind_case = BOX__POLICY_VALUE__KIND_STR;
	pv->str = (char *)v;
}

void
policy_fields_long(struct policy_fields *fs, const char *name, int64_t v)
{
	Box__PolicyValue *pv = field_add(fs, name);
	pv->kind_case = BOX__POLICY_VALUE__KIND_INTEGER;
	pv->integer = v;
}

void
policy_fields_bool(struct policy_fields *fs, const char *name, bool v)
{
	Box__PolicyValue *pv = field_add(fs, name);
	pv->kind_case = BOX__POLICY_VALUE__KIND_BOOLEAN;
	pv->boolean = v;
}

void
policy_fields_set(struct policy_fields *fs, const char *name, Box__PolicyValueSet *set)
{
	Box__PolicyValue *pv = field_add(fs, name);
	pv->kind_case = BOX__POLICY_VALUE__KIND_SET;
	pv->set = set;
}
