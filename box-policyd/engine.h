/* SPDX-License-Identifier: Apache-2.0 */
/*
 * engine.h — box-policyd's deciding core: the loaded policy, the temporal
 * monitor and the durable history, tied together (docs/box-policy.5.md).
 *
 * Observe, then decide: a Decide appends the request event to the history
 * (when the policy has a temporal rule) before it is evaluated, and a
 * history that cannot be written makes the decision a deny. Records append
 * outcome events. With no temporal rule nothing is written at all.
 * MCP tool schemas (docs/box-policy.5.md): each namespace of PolicyInit is
 * pending until its PolicyToolSchema; then the policy is re-validated with
 * the tools (bp_policy_reload) and the monitor migrated (unchanged rules,
 * i.e. all of them, keep their retained events: budgets do not reset). A
 * schema the policy does not type-check against marks the namespace failed.
 * A probe decides as if observed, through bp_monitor_probe: nothing is
 * written and the monitor does not move.
 * The engine never reads a clock: callers pass the time (ns since the epoch).
 * Trusts: requests were validated by proto/policy_validate.c; the history
 * file is re-checked record by record.
 */
#ifndef BOX_POLICYD_ENGINE_H
#define BOX_POLICYD_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.pb-c.h"

enum engine_sync {
	ENGINE_SYNC_OFF = 0,
	ENGINE_SYNC_ALWAYS,
	ENGINE_SYNC_BATCH,
};

struct engine_opts {
	const char *text; /* NULL: no policy, every decision denies */
	size_t len;
	const char *home;
	char *const *mcp_namespaces;
	size_t n_mcp_namespaces;
	int sync; /* -1: default (always when temporal), else enum engine_sync */
	int dirfd; /* STATE/policy/ (borrowed) */
	int64_t now_ns;
};

/* What Decide answers (owned by the engine until the next decide). */
struct engine_result {
	bool permit;
	int cause;          /* Box__DecisionCause */
	const char **rules; /* n_rules names */
	size_t n_rules;
	const char *message;
	const char *resource; /* the unescaped resource label, for the decision log */
	int64_t time_ns;      /* the event's time */
	bool wait_sync;       /* batch mode: the reply waits for engine_sync() */
	bool ask;             /* forbidden, and every determining rule is a forbid with @ask */
	int history_error;    /* < 0: the history could not be written (a deny) */
};

struct engine_stats {
	size_t rules, temporal_rules, rules_kept;
	uint64_t history_events, skipped_events;
	uint64_t dropped_bytes;
	bool temporal;
	enum engine_sync sync;
};

struct engine;

/*
 * Load the policy, and with temporal rules recover the history and replay it
 * into the rules it belongs to. On a refusal (policy does not load, history
 * corrupt or unreadable) returns negative errno with `why` filled in.
 */
int engine_new(const struct engine_opts *o, struct engine **ret, char *why, size_t why_len);
struct engine *engine_free(struct engine *e);
void engine_stats(const struct engine *e, struct engine_stats *ret);

/*
 * Probe: decide M at NOW_NS as engine_decide would (a temporal condition
 * sees M as the current event) into RES, but append no history event and
 * move no monitor state or clock. RES->time_ns is the time it was decided at.
 */
int engine_probe(struct engine *e, const Box__DecideRequest *m, int64_t now_ns,
		 struct engine_result *res);

/* What engine_register_tools says (owned by the engine until its next call). */
struct engine_schema_result {
	bool ok;
	const char *error;       /* !ok: the rule (@id or policy_N), its line, what failed */
	const char *const *warnings; /* at most BOX_POLICY_WARNINGS_MAX, each <= 4096 bytes */
	size_t n_warnings;
	size_t tools;            /* tools declared (a name that cannot be an action is not) */
};

/*
 * PolicyToolSchema: the tools of M->server for namespace M->ns replace what
 * an earlier one said; the policy is re-validated and from now on decides
 * M->ns's actions as refinements (ok), or the namespace is failed and its
 * actions deny (cause error) until a later schema checks (!ok). -ENOENT: NS
 * is not one of PolicyInit's namespaces (a protocol error); -ENOMEM.
 */
int engine_register_tools(struct engine *e, const Box__PolicyToolSchema *m,
			  struct engine_schema_result *res);

/* Generations whose policy engine_decide_generation still knows. */
#define ENGINE_GENERATIONS_KEPT 8

struct engine_reload_result {
	bool ok;
	const char *error; /* !ok: line:column and what failed (owned by the engine) */
	uint64_t generation; /* in force after the call */
	size_t rules, temporal_rules, rules_kept;
};

/*
 * Live reload (`boxctl policy reload`): TEXT (LEN bytes; NULL: no policy) is loaded
 * against the schema as it stands (the MCP tools registered so far). A text that does
 * not load changes nothing (!ok, why). One that loads is the next generation, in force
 * at once: with temporal rules before and after, the monitor is migrated (a rule whose
 * parsed text is unchanged keeps its events, bp_monitor_migrate) and a history epoch
 * with the new hashes written, so that a restart replays the same way; a policy that
 * gains its first temporal rule recovers and replays the history as a start does; one
 * that loses its last closes it. The policy of the generation before is kept (up to
 * ENGINE_GENERATIONS_KEPT) for engine_decide_generation. Negative errno: memory.
 */
int engine_reload(struct engine *e, const char *text, size_t len, int64_t now_ns,
		  struct engine_reload_result *res);
/* The generation in force (1 at the start, one more per reload in force). */
uint64_t engine_generation(const struct engine *e);
/*
 * Decide M with the policy of an earlier generation GEN, without a monitor: for
 * decisions box-shell made in process under that generation (their actions needed
 * no history then). Nothing observed. -ENOENT: GEN is not kept.
 */
int engine_decide_generation(struct engine *e, uint64_t gen, const Box__DecideRequest *m,
			     struct engine_result *res);

/* Decide M at NOW_NS into RES (valid until the next call). */
int engine_decide(struct engine *e, const Box__DecideRequest *m, int64_t now_ns,
		  struct engine_result *res);
/*
 * DecideBatch: while deferred, `always` appends each decision's event without
 * its fsync and marks it wait_sync, as `batch` does: the caller's one
 * engine_sync() covers the whole batch before any of its verdicts goes out.
 */
void engine_defer_sync(struct engine *e, bool defer);
/* The history_sync in force (off without a temporal rule's history). */
enum engine_sync engine_sync_mode(const struct engine *e);
/*
 * Append an outcome event at NOW_NS (stamped as a decision is: never before
 * the last event; *TIME_RET gets the time used, also without a temporal rule,
 * for the decision log). -EINVAL when it does not fit the schema (dropped).
 */
int engine_record(struct engine *e, const Box__RecordRequest *m, int64_t now_ns,
		  int64_t *time_ret);
/* Records or batched decisions wait for a sync (history_sync always or batch). */
bool engine_needs_sync(const struct engine *e);
/* fsync the history now; negative errno when it failed (it is then poisoned). */
int engine_sync(struct engine *e);
/* The history's fsyncs so far (0 without a history). */
uint64_t engine_history_syncs(const struct engine *e);
/* Rewrite the history without events older than every rule's horizon, if it is worth it. */
int engine_maybe_compact(struct engine *e, int64_t now_ns, bool force);
/* Tests: make every later history write fail. */
void engine_poison_history(struct engine *e);

/*
 * ACTION's decisions need no history (bp_history_free): box-shell may decide it in
 * process and ship the decision (docs/box-policy.5.md, "Decisions without a round
 * trip"). 1 yes, 0 no, negative errno (an action the schema does not know).
 */
int engine_history_free(const struct engine *e, const char *action);

/* The policy in force has a forbid annotated @ask (docs/box-policy.5.md, "Asking a person"). */
bool engine_has_ask(const struct engine *e);

/* The message of a deny with cause error, from a decision's MESSAGE (same resource). */
int engine_error_message(const char *message, char *buf, size_t len);
/* Resource label of docs/box-policy.5.md for a decision log (malloc'd). */
char *engine_resource_label(const char *action, Box__PolicyField *const *f, size_t n);

#endif
