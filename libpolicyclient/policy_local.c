/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_local.c — decisions without a round trip, a peer's side (policy_local.h).
 * Library code: negative errno, never logs.
 * Trusts: box-policyd's PolicyLocal and page (policy_local.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <boxpolicy.h>
#include <boxpolicy_proto.h>

#include "policy_local.h"

_Static_assert((int)BP_CAUSE_NOT_REFINED == (int)BOX__DECISION_CAUSE__CAUSE_NOT_REFINED &&
		       (int)BP_CAUSE_ERROR == (int)BOX__DECISION_CAUSE__CAUSE_ERROR &&
		       (int)BP_CAUSE_NO_MATCH == (int)BOX__DECISION_CAUSE__CAUSE_NO_MATCH &&
		       (int)BP_CAUSE_FORBIDDEN == (int)BOX__DECISION_CAUSE__CAUSE_FORBIDDEN &&
		       (int)BP_CAUSE_PERMITTED == (int)BOX__DECISION_CAUSE__CAUSE_PERMITTED,
	       "libboxpolicy's causes are policy.proto's");

void
policy_local_init(struct policy_local *l, const char *const *names, size_t n_names)
{
	memset(l, 0, sizeof(*l));
	l->names = names;
	l->n_names = n_names < POLICY_LOCAL_NAMES_MAX ? n_names : POLICY_LOCAL_NAMES_MAX;
}

int
policy_local_set(struct policy_local *l, const Box__PolicyLocal *m, char *why, size_t why_len)
{
	struct bp_load_options lo = { 0 };
	struct bp_schema *schema = NULL;
	struct bp_policy *p = NULL;
	int r = bp_schema_new(&schema);
	for (size_t i = 0; r == 0 && i < m->n_mcp_namespaces; i++)
		r = bp_schema_add_pending(schema, m->mcp_namespaces[i]);
	if (r < 0) {
		bp_schema_free(schema);
		(void)snprintf(why, why_len, "cannot declare the MCP namespaces: %s", strerror(-r));
		return r;
	}
	lo.home = m->home;
	lo.schema = schema;
	r = bp_policy_load(m->has_policy_text ? (const char *)m->policy_text.data : "",
			   m->has_policy_text ? m->policy_text.len : 0, &lo, &p, NULL);
	if (r < 0) {
		bp_schema_free(schema);
		/* box-policyd loaded this text with the same engine: it cannot differ */
		(void)snprintf(why, why_len, "the policy box-policyd sent does not load: %s",
			       strerror(-r));
		return r;
	}
	bp_policy_free(l->p);
	bp_schema_free(l->schema);
	l->p = p;
	l->schema = schema;
	l->generation = m->generation;
	for (size_t k = 0; k < l->n_names; k++) {
		l->qualifies[k] = false;
		for (size_t i = 0; i < m->n_actions; i++)
			if (strcmp(m->actions[i], l->names[k]) == 0)
				l->qualifies[k] = true;
	}
	return 0;
}

int
policy_local_map(struct policy_local *l, int page_fd)
{
	if (page_fd < 0)
		return -EBADF;
	void *pg = mmap(NULL, sizeof(uint64_t), PROT_READ, MAP_SHARED, page_fd, 0);
	if (pg == MAP_FAILED)
		return -errno;
	if (l->page)
		(void)munmap((void *)l->page, sizeof(uint64_t));
	l->page = pg;
	return 0;
}

void
policy_local_drop(struct policy_local *l)
{
	bp_policy_free(l->p);
	bp_schema_free(l->schema);
	l->p = NULL;
	l->schema = NULL;
}

void
policy_local_free(struct policy_local *l)
{
	policy_local_drop(l);
	if (l->page)
		(void)munmap((void *)l->page, sizeof(uint64_t));
	l->page = NULL;
}

bool
policy_local_ok(const struct policy_local *l, const char *action)
{
	if (!l->p || !l->page)
		return false;
	for (size_t k = 0; k < l->n_names; k++)
		if (strcmp(action, l->names[k]) == 0)
			return l->qualifies[k];
	return false;
}

void
policy_local_verdict_init(struct policy_local_verdict *v)
{
	memset(v, 0, sizeof(*v));
	box__decide_reply__init(&v->claim);
}

static void
rules_free(struct policy_local_verdict *v)
{
	if (v->rules != v->stack)
		free(v->rules);
	v->rules = NULL;
}

int
policy_local_decide(const struct policy_local *l, struct policy_local_verdict *v,
		    const Box__DecideRequest *req)
{
	if (!l->p)
		return -EINVAL;
	if (!v->req && bp_request_new(l->p, &v->req) < 0)
		return -ENOMEM;
	if (!v->dec) {
		if (bp_decision_new(&v->dec) < 0)
			return -ENOMEM;
		/* (a permit's message is never shown nor shipped: only a denial's is kept) */
		bp_decision_skip_permit_message(v->dec, true);
	}
	rules_free(v);
	bp_request_reset(v->req);
	int r = bp_request_fill_proto(v->req, req->action, req->input, req->n_input);
	if (r == 0)
		r = bp_decide(l->p, v->req, NULL, v->dec);
	if (r < 0)
		return r;
	size_t n = bp_decision_rule_count(v->dec);
	v->rules = n <= sizeof(v->stack) / sizeof(v->stack[0]) ? v->stack : calloc(n, sizeof(char *));
	if (!v->rules)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v->rules[i] = (char *)bp_decision_rule_name(v->dec, i);
	box__decide_reply__init(&v->claim);
	v->claim.verdict = bp_decision_verdict(v->dec) == BP_PERMIT
				   ? BOX__DECISION_VERDICT__VERDICT_PERMIT
				   : BOX__DECISION_VERDICT__VERDICT_DENY;
	v->claim.cause = (Box__DecisionCause)bp_decision_cause(v->dec);
	v->claim.rules = v->rules;
	v->claim.n_rules = n;
	v->claim.message = (char *)"";
	return 0;
}

const char *
policy_local_message(const struct policy_local_verdict *v)
{
	return v->dec ? bp_decision_message(v->dec) : "";
}

void
policy_local_verdict_reset(struct policy_local_verdict *v)
{
	bp_request_free(v->req);
	v->req = NULL;
}

void
policy_local_verdict_free(struct policy_local_verdict *v)
{
	rules_free(v);
	bp_request_free(v->req);
	bp_decision_free(v->dec);
	policy_local_verdict_init(v);
}
