/* SPDX-License-Identifier: Apache-2.0 */
/*
 * boxpolicy_temporal.h — temporal conditions and the incremental monitor
 * (docs/box-policy.5.md; docs/box-policy.5.md).
 *
 * HOW IT FITS TOGETHER
 *
 *   A policy is loaded with bp_policy_load (boxpolicy.h). Each `temporal { … }`
 *   term of a rule is compiled by bp_monitor_new into a small program; the
 *   monitor keeps, per rule, only the events that rule's terms can look at
 *   (events whose action and kind one of its predicates names, or every event
 *   for rules using `previous`, `since` or a body that can hold at any event),
 *   and drops events older than that rule's horizon (the sum of nested
 *   windows, at most 24h per window). Memory is bounded by windows × event
 *   rate, never by the box's lifetime.
 *
 *   Deciding is observe-then-decide:
 *
 *     t = bp_monitor_stamp(mon, now_ns);       // the time the event will get
 *     ... write the request event (time t) to the durable history ...
 *     bp_monitor_decide(mon, req, t, dec);     // observe req as a request event
 *                                              // at t, then bp_decide through
 *                                              // the monitor's temporal hook
 *     ... later, the component that acted reports the outcome:
 *     bp_event_reset(ev); bp_event_set_kind(ev, BP_EVENT_RESPONSE);
 *     bp_event_set_time(ev, bp_monitor_stamp(mon, now_ns));
 *     bp_request_set_action(bp_event_request(ev), "fs:write");
 *     bp_request_set_string(bp_event_request(ev), "path", ...);
 *     bp_event_set_output_string(ev, "result", "completed", 9);
 *     bp_monitor_observe(mon, ev);
 *
 *   Time is nanoseconds from the decider's clock. It never goes backwards: an
 *   event whose time is not after the last observed event's gets last + 1 ns
 *   (bp_monitor_stamp returns exactly that value, so a caller that writes the
 *   stamped time to its history replays identical times). A window test is
 *   closed: an event exactly W old is inside.
 *
 *   Restarts: bp_policy_rule_hash(p, i) is a 64-bit hash of rule i's printed
 *   syntax tree (effect, scope, conditions, temporal terms; comments,
 *   whitespace and annotations excluded), stable across builds and runs. A
 *   daemon stores, with its history, the set of rule hashes installed when each
 *   event was appended; on restart it builds a fresh monitor and replays every
 *   stored event with bp_monitor_observe_for_rules(mon, ev, hashes, n), which
 *   delivers the event only to rules whose hash is in that set. An unchanged
 *   rule so recovers its state; a new or edited rule starts empty.
 *
 *   A policy with no temporal term needs no monitor (bp_decide with a NULL
 *   hook suffices); bp_monitor_rules_temporal() tells.
 *
 * Pure library code: no I/O, no logging, no clock reads. A monitor is not
 * thread-safe; serialize calls on one monitor (box-policyd owns one). Every
 * function returns 0 or a negative errno.
 *
 * Trusts: nothing; events and policy text are hostile input (sizes capped).
 */
#ifndef BOXPOLICY_TEMPORAL_H
#define BOXPOLICY_TEMPORAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "boxpolicy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Caps. */
#define BP_MONITOR_MAX_EVENTS (1u << 24) /* events one rule may retain; more: -E2BIG */
#define BP_MAX_WINDOW_NS (86400LL * 1000000000LL)

/* ---- load-time checks ---- */

/*
 * Check every temporal term of P against the acceptance rules (closed
 * variables, range restriction, producers before consumers, aggregates only as
 * comparison operands, tp-dependence, leaf field paths, declared events,
 * windows ≤ 24h). Returns 0 when all pass, -EINVAL otherwise; diagnostics are
 * appended to *diags (allocated when *diags is NULL) with line:col relative to
 * the policy file. Called by bp_policy_load once wired; callable on its own.
 */
int bp_policy_check_temporal(const struct bp_policy *p, struct bp_diags **diags);

/* True when any rule of P has a temporal term. */
bool bp_policy_has_temporal(const struct bp_policy *p);

/* ---- canonical rule identity ---- */

/* The 64-bit hash of rule I's printed syntax tree (0 for a bad index). */
uint64_t bp_policy_rule_hash(const struct bp_policy *p, size_t i);
/* Rule I's printed syntax tree (malloc'd, NUL-terminated; free it). */
int bp_policy_rule_canonical(const struct bp_policy *p, size_t i, char **text);

/* ---- events ---- */

enum bp_event_kind {
	BP_EVENT_REQUEST = 0,
	BP_EVENT_RESPONSE = 1,
	BP_EVENT_ERROR = 2,
};

struct bp_event;

int bp_event_new(const struct bp_policy *p, struct bp_event **ret);
void bp_event_free(struct bp_event *e);
/* Clear for reuse: kind request, time 0, no action, no fields. */
void bp_event_reset(struct bp_event *e);
void bp_event_set_kind(struct bp_event *e, enum bp_event_kind k);
void bp_event_set_time(struct bp_event *e, int64_t time_ns);
/*
 * The event's action and input fields, set through the bp_request API
 * (bp_request_set_action, _set_string/_long/_bool/_value, bp_value_*).
 */
struct bp_request *bp_event_request(struct bp_event *e);
/* Output fields (response events): "status" (Long), "result" (enum id, e.g. "completed"). */
int bp_event_set_output_long(struct bp_event *e, const char *field, int64_t v);
int bp_event_set_output_string(struct bp_event *e, const char *field, const char *s, size_t len);
/* Why the event does not fit the schema (NULL if it does); such events are refused. */
const char *bp_event_problem(struct bp_event *e);
/* "request", "response", "error"; bp_event_kind_parse returns -EINVAL for others. */
const char *bp_event_kind_str(enum bp_event_kind k);
int bp_event_kind_parse(const char *s, enum bp_event_kind *ret);

/* ---- the monitor ---- */

struct bp_monitor;

/*
 * A monitor for P (which must outlive it). -EINVAL when a temporal term does
 * not pass bp_policy_check_temporal (diags as there, when not NULL).
 */
int bp_monitor_new(const struct bp_policy *p, struct bp_monitor **ret, struct bp_diags **diags);
void bp_monitor_free(struct bp_monitor *m);
const struct bp_policy *bp_monitor_policy(const struct bp_monitor *m);

/*
 * Whether decisions of the fixed action ACTION (a Box::Action id, "shell:exec") are
 * free of history: no rule whose scope admits ACTION has a temporal term, and no
 * temporal rule keeps ACTION's events (none of its predicates names ACTION, and none
 * of its terms needs every event: `previous`, `since`, a `formerly` whose body can
 * hold without a predicate). Such an action is decided the same by bp_decide with no
 * hook at any moment, and where its events fall in the history changes no decision,
 * so another process may decide it with the same policy and report it afterwards
 * (docs/box-policy.5.md, "Decisions without a round trip"). M: the monitor of P, or
 * NULL when P has no temporal rule (then every action qualifies). 1 yes, 0 no,
 * -ENOENT for an action P's schema does not know, -EINVAL for a monitor of another
 * policy or a NULL one where P has temporal rules.
 */
int bp_history_free(const struct bp_policy *p, const struct bp_monitor *m, const char *action);

/* The time the next event gets when offered NOW_NS: max(NOW_NS, last + 1). */
int64_t bp_monitor_stamp(const struct bp_monitor *m, int64_t now_ns);
/* The time of the last observed event (INT64_MIN before the first). */
int64_t bp_monitor_last_time(const struct bp_monitor *m);

/*
 * Append E to every rule's state (E's time is clamped as bp_monitor_stamp
 * does; *time_ret, when not NULL, receives the time used). -EINVAL for an
 * event with a problem; -E2BIG when a rule would retain more than
 * BP_MONITOR_MAX_EVENTS; -ENOMEM.
 */
int bp_monitor_observe(struct bp_monitor *m, const struct bp_event *e, int64_t *time_ret);
/* Replay: like bp_monitor_observe, but only rules whose hash is among HASHES[0..N) see E. */
int bp_monitor_observe_for_rules(struct bp_monitor *m, const struct bp_event *e,
				 const uint64_t *hashes, size_t n, int64_t *time_ret);

/*
 * Observe, then decide: REQ (bound to the monitor's policy) is appended as a
 * request event at TIME_NS (clamped; *time_ret gets the time used), then
 * decided by bp_decide through the monitor's hook into D. A request that
 * does not fit the schema is not appended (it is denied, cause error). When
 * the append fails the request is denied with cause error and the errno is
 * returned (D is still filled in).
 */
int bp_monitor_decide(struct bp_monitor *m, const struct bp_request *req, int64_t time_ns,
		      struct bp_decision *d, int64_t *time_ret);

/*
 * Probe: decide REQ at TIME_NS (clamped as bp_monitor_stamp does) exactly as
 * bp_monitor_decide would — temporal terms see REQ as the current request
 * event — but leave the monitor as it was: no event is appended, the clock
 * and the last event stay, no retained event is pruned and no aggregate
 * moves (the terms are evaluated by scanning the retained events, which
 * gives the values the incremental aggregates would). D as for
 * bp_monitor_decide; a request that does not fit the schema is denied,
 * cause error. -ENOMEM when the event cannot be built (D then denies).
 */
int bp_monitor_probe(struct bp_monitor *m, const struct bp_request *req, int64_t time_ns,
		     struct bp_decision *d);

/*
 * Move OLD's state to a new monitor for policy NP (bp_policy_reload after an
 * MCP schema arrived, or a policy edit while running): each rule of NP whose
 * hash equals a rule of OLD takes that rule's retained events; others start
 * empty. The clock and the last event carry over. OLD is freed on success
 * (and left intact on failure); OLD's policy must still be alive during the call.
 */
int bp_monitor_migrate(struct bp_monitor *old, const struct bp_policy *np, struct bp_monitor **ret,
		       struct bp_diags **diags);

/*
 * The hook bp_decide uses to evaluate temporal terms at the last observed
 * event, for callers that observe the request event themselves.
 */
struct bp_temporal_hook bp_monitor_hook(struct bp_monitor *m);

/* Introspection (tests, benchmarks): events retained by rule I, and bytes held by the monitor. */
size_t bp_monitor_rule_events(const struct bp_monitor *m, size_t i);
size_t bp_monitor_memory(const struct bp_monitor *m);

#ifdef __cplusplus
}
#endif

#endif
