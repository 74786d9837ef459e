/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_fields.h — the input (or output) fields of one DecideRequest or
 * RecordRequest, built on the stack: a daemon that asks box-policyd
 * (box-gateway, box-mcpd, box-shell) names each field and its value; the arrays point
 * into the caller's strings, nothing is copied or allocated.
 *
 * The fields of one request are at most POLICY_FIELDS_MAX (docs/box-policy.5.md: the
 * widest action, shell:spawn, has 8); a ninth is a programming error and
 * aborts, never a silently dropped field. Pure; no logging.
 * Trusts: its callers (the names are the actions' own, the values theirs).
 */
#ifndef BOX_POLICY_FIELDS_H
#define BOX_POLICY_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.pb-c.h"

#define POLICY_FIELDS_MAX 8

struct policy_fields {
	Box__PolicyField *p[POLICY_FIELDS_MAX]; /* what DecideRequest.input points at */
	Box__PolicyField f[POLICY_FIELDS_MAX];
	Box__PolicyValue v[POLICY_FIELDS_MAX];
	size_t n;
};

void policy_fields_init(struct policy_fields *fs);
/* NAME and V are borrowed: they must outlive the request's send. */
void policy_fields_str(struct policy_fields *fs, const char *name, const char *v);
void policy_fields_long(struct policy_fields *fs, const char *name, int64_t v);
void policy_fields_bool(struct policy_fields *fs, const char *name, bool v);
/* SET (its elements too) is borrowed, like NAME. */
void policy_fields_set(struct policy_fields *fs, const char *name, Box__PolicyValueSet *set);

#endif
