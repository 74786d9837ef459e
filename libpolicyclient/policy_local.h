/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_local.h — decisions without a round trip, a peer's side (docs/box-policy.5.md,
 * proto/policy.proto: PolicyLocal). box-policyd sends a peer the policy in force, its
 * generation, the peer's actions that need no history in it, and a read-only page that
 * says the generation in force. The peer decides those actions here with the same
 * engine (libboxpolicy) on the same fields, and ships each decision in a PolicyShip
 * (policy_client.h), where box-policyd decides it again and logs it; a decision it
 * does not agree with ends the channel. box-shell, box-gateway and a supervised
 * program's PID 1 (box-trampoline/supervise.c) use it.
 * Library code: negative errno, never logs.
 * Trusts: box-policyd's PolicyLocal (validated by the protocol table; the text is the
 * one box-policyd loaded) and its page (read-only here: a changed page can only make
 * this peer ask again, never decide with another policy).
 */
#ifndef BOX_POLICY_LOCAL_H
#define BOX_POLICY_LOCAL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.pb-c.h"

/* The actions one peer may decide in process, at most. */
#define POLICY_LOCAL_NAMES_MAX 8

struct bp_schema;
struct bp_policy;
struct bp_request;
struct bp_decision;

struct policy_local {
	struct bp_schema *schema;
	struct bp_policy *p; /* NULL: nothing is decided in process */
	uint64_t generation;
	/* box-policyd's generation page, mapped read-only (NULL: none, nothing in process) */
	const uint64_t *page;
	const char *const *names; /* the peer's actions that may qualify */
	size_t n_names;
	bool qualifies[POLICY_LOCAL_NAMES_MAX];
};

/* L decides nothing until policy_local_set and policy_local_map; NAMES outlive it. */
void policy_local_init(struct policy_local *l, const char *const *names, size_t n_names);
/*
 * Load M's policy as the one decided in process (replacing any earlier one) and which of
 * the names qualify. On failure L is unchanged and WHY says what failed.
 */
int policy_local_set(struct policy_local *l, const Box__PolicyLocal *m, char *why,
		     size_t why_len);
/* Map PAGE_FD (PolicyLocal's fd; the caller keeps and closes it). */
int policy_local_map(struct policy_local *l, int page_fd);
/* The policy goes: nothing is decided in process from here on (the page stays). */
void policy_local_drop(struct policy_local *l);
void policy_local_free(struct policy_local *l);

/* ACTION may be decided in process now: a policy, a page, and one that qualifies. */
bool policy_local_ok(const struct policy_local *l, const char *action);

/* The page no longer says L's generation: a reload put another policy in force. */
static inline bool
policy_local_moved(const struct policy_local *l)
{
	return l->p && l->page && __atomic_load_n(l->page, __ATOMIC_ACQUIRE) != l->generation;
}

/*
 * One decision made in process: the claim a PolicyShip carries (verdict, cause, the
 * determining rules; message ""), and the scratch it was made with. A permit's message
 * is never made (nobody shows it); a denial's is policy_local_message's.
 */
struct policy_local_verdict {
	Box__DecideReply claim;
	struct bp_request *req; /* made for one policy: policy_local_verdict_reset after a change */
	struct bp_decision *dec;
	char **rules;
	char *stack[16];
};

void policy_local_verdict_init(struct policy_local_verdict *v);
/* Decide REQ with L's policy into V (claim.rules valid until the next call or _free). */
int policy_local_decide(const struct policy_local *l, struct policy_local_verdict *v,
			const Box__DecideRequest *req);
const char *policy_local_message(const struct policy_local_verdict *v);
/* The request scratch goes (the policy changed); the decision's stays. */
void policy_local_verdict_reset(struct policy_local_verdict *v);
void policy_local_verdict_free(struct policy_local_verdict *v);
#endif
