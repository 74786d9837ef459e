/* SPDX-License-Identifier: Apache-2.0 */
/*
 * boxpolicy.h — the Cedar-compatible policy engine (docs/box-policy.5.md).
 *
 * A pure library: no I/O, no logging, no global state. Every function returns
 * 0 or a negative errno. A loaded struct bp_policy is immutable and may be
 * evaluated from many threads at once; each thread uses its own
 * struct bp_request and struct bp_decision (both reusable across calls).
 *
 * Trusts: nothing. Policy text, schema descriptions and request values are
 * treated as hostile input (sizes are capped, recursion is bounded).
 */
#ifndef BOXPOLICY_H
#define BOXPOLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Caps on what a policy text may hold. */
#define BP_MAX_POLICY_BYTES (16u << 20)
#define BP_MAX_MESSAGE 4096

struct bp_schema;   /* action vocabulary: the fixed Box schema + MCP tool namespaces */
struct bp_policy;   /* a loaded, validated, immutable policy set */
struct bp_diags;    /* load errors and warnings */
struct bp_request;  /* one request, built against one policy */
struct bp_decision; /* one verdict with its rules and message */
struct bp_value;    /* a request value under construction (sets, records) */

/* ---- schema (run-time MCP extension, docs/box-policy.5.md/§3) ---- */

/* A new schema holding the fixed Box actions. */
int bp_schema_new(struct bp_schema **ret);
void bp_schema_free(struct bp_schema *s);
/* Declare namespace NS (already normalized, e.g. "demo_mcp"); "Box" is reserved. */
int bp_schema_add_namespace(struct bp_schema *s, const char *ns);
/* Declare action NS::Action::"TOOL" (its namespace is declared if needed). */
int bp_schema_add_action(struct bp_schema *s, const char *ns, const char *tool);
/*
 * Declare field NAME of that action's input with TYPE, a type expression:
 * "Long", "String", "Bool", "Set<T>", or "{a: T, b?: T}" (a record; `?` marks
 * optional attributes). OPTIONAL marks the field itself optional.
 */
int bp_schema_add_field(struct bp_schema *s, const char *ns, const char *tool, const char *name,
			const char *type, bool optional);
/*
 * Field FIELD of the input of Box action ACTION ("fs:read"): 0 with *OPTIONAL and
 * *ENTITY_TYPE (an enumeration's entity type, "Box::FsReadOperation", or NULL for a plain
 * value); -ENOENT: no such action or field.
 */
int bp_schema_box_field(const struct bp_schema *s, const char *action, const char *field,
			bool *optional, const char **entity_type);
/* Mark namespace NS as declared but pending: its tool schema is not known yet. */
int bp_schema_add_pending(struct bp_schema *s, const char *ns);
/*
 * Mark namespace NS as failed: the tool schema of [mcp.SERVER] did not pass
 * the policy check (DETAIL says which rule and why). Its actions are then
 * decided as pending ones are (deny, cause error), with a message naming
 * SERVER and DETAIL. A later bp_schema_add_action/_add_namespace on NS clears it.
 */
int bp_schema_add_failed(struct bp_schema *s, const char *ns, const char *server,
			 const char *detail);

/* ---- loading ---- */

enum bp_severity {
	BP_ERROR = 0,
	BP_WARNING = 1,
};

struct bp_load_options {
	const char *home;               /* owner's home for ~/ spellings; NULL: no home checks */
	const struct bp_schema *schema; /* NULL: the fixed Box schema alone */
	/*
	 * When true, rules naming a namespace that is neither "Box" nor in the
	 * schema are accepted with a warning (pending; `boxctl policy check`
	 * without --schema). When false they are refused as unknown actions,
	 * unless the schema marks the namespace pending.
	 */
	bool allow_unknown_namespaces;
	/*
	 * When true, bp_decide evaluates every rule whose scope names the
	 * request's action instead of the index's candidates (docs/box-policy.5.md,
	 * "Evaluation"): the same decisions, slower. For tests that compare.
	 */
	bool no_rule_index;
};

/*
 * Load TEXT (LEN bytes, need not be NUL-terminated). On success *ret holds the
 * policy and 0 is returned; on a load refusal -EINVAL is returned and *ret is
 * NULL. In both cases, when diags is not NULL, *diags receives every error and
 * warning (free with bp_diags_free). -ENOMEM, -E2BIG as usual.
 */
int bp_policy_load(const char *text, size_t len, const struct bp_load_options *opts,
		   struct bp_policy **ret, struct bp_diags **diags);
void bp_policy_free(struct bp_policy *p);
/* A new policy from the same text, re-validated against SCHEMA (the MCP tool list arrived). */
int bp_policy_reload(const struct bp_policy *p, const struct bp_schema *schema,
		     struct bp_policy **ret, struct bp_diags **diags);

size_t bp_policy_rule_count(const struct bp_policy *p);
/* The rule's name in decisions: its non-blank @id, else "policy_N". */
const char *bp_policy_rule_name(const struct bp_policy *p, size_t i);
bool bp_policy_rule_is_forbid(const struct bp_policy *p, size_t i);
/* Rule I's annotation @KEY: its value ("" for `@KEY` without one), or NULL: none. */
const char *bp_policy_rule_annotation(const struct bp_policy *p, size_t i, const char *key);
/*
 * Rule I's bytes in the text it was loaded from: [*START, *END), from its first annotation
 * (or its effect) to just past its `;`. -ENOENT: no such rule (or one that did not parse).
 */
int bp_policy_rule_span(const struct bp_policy *p, size_t i, size_t *start, size_t *end);
/* Temporal terms: count, and each term's source text between its braces. */
size_t bp_policy_temporal_count(const struct bp_policy *p, size_t rule);
int bp_policy_temporal_source(const struct bp_policy *p, size_t rule, size_t term,
			      const char **text, size_t *len, unsigned *line, unsigned *col);

size_t bp_diags_count(const struct bp_diags *d);
size_t bp_diags_errors(const struct bp_diags *d);
size_t bp_diags_warnings(const struct bp_diags *d);
/* The i-th diagnostic: severity, 1-based line and column (0 when none), message. */
const char *bp_diag_message(const struct bp_diags *d, size_t i, enum bp_severity *severity,
			    unsigned *line, unsigned *col);
void bp_diags_free(struct bp_diags *d);

/*
 * All `boxctl check` needs: load TEXT with the owner's HOME, accepting
 * undeclared MCP namespaces with a warning. Returns 0 (loads; *rules = rule
 * count) or -EINVAL (refused); *diags as for bp_policy_load.
 */
int bp_policy_check_text(const char *text, size_t len, const char *home, size_t *rules,
			 struct bp_diags **diags);

/* ---- requests ---- */

int bp_request_new(const struct bp_policy *p, struct bp_request **ret);
void bp_request_free(struct bp_request *r);
/* Clear for reuse (keeps memory); the request stays bound to its policy. */
void bp_request_reset(struct bp_request *r);
/* "fs:read" ... "mcp:call", or "NS::Action::\"tool\"". -ENOENT: not in the schema. */
int bp_request_set_action(struct bp_request *r, const char *action);
/* Input fields. Strings are copied. Enum fields (operation, output.result) take the id. */
int bp_request_set_string(struct bp_request *r, const char *field, const char *v, size_t len);
int bp_request_set_long(struct bp_request *r, const char *field, int64_t v);
int bp_request_set_bool(struct bp_request *r, const char *field, bool v);
int bp_request_set_value(struct bp_request *r, const char *field, struct bp_value *v);
/* Override the resource label shown in messages (default: docs/box-policy.5.md). */
int bp_request_set_resource(struct bp_request *r, const char *label, size_t len);
/*
 * Why the request does not fit the schema (NULL if it does): an unknown
 * action or field, a mistyped value, a missing required field. bp_decide
 * denies such a request with cause `error`.
 */
const char *bp_request_problem(struct bp_request *r);

/* Values for MCP tool arguments; they live in the request's memory. */
struct bp_value *bp_value_long(struct bp_request *r, int64_t v);
struct bp_value *bp_value_bool(struct bp_request *r, bool v);
struct bp_value *bp_value_string(struct bp_request *r, const char *s, size_t len);
struct bp_value *bp_value_set(struct bp_request *r);
struct bp_value *bp_value_record(struct bp_request *r);
int bp_value_set_add(struct bp_request *r, struct bp_value *set, struct bp_value *elem);
int bp_value_record_put(struct bp_request *r, struct bp_value *rec, const char *key,
			struct bp_value *v);

/* ---- deciding ---- */

enum bp_verdict {
	BP_DENY = 0,
	BP_PERMIT = 1,
};

enum bp_cause {
	BP_CAUSE_PERMITTED = 0,
	BP_CAUSE_FORBIDDEN,
	BP_CAUSE_NO_MATCH,
	BP_CAUSE_ERROR,
	/*
	 * A per-tool MCP action (namespace other than Box) that no rule matched:
	 * a refinement of the mcp:call that already permitted it (docs/box-policy.5.md
	 * §3), so it permits. Every other action that no rule matched is
	 * BP_CAUSE_NO_MATCH (deny).
	 */
	BP_CAUSE_NOT_REFINED,
};

/*
 * The temporal hook: evaluates term TERM of rule RULE for this
 * request; returns 0 and sets *ret, or a negative errno (the rule errors).
 * Without a hook every temporal term errors.
 */
struct bp_explain;
struct bp_temporal_hook {
	int (*eval)(void *ctx, const struct bp_policy *p, size_t rule, size_t term,
		    const struct bp_request *req, bool *ret);
	void *ctx;
	/*
	 * Optional, used by bp_explain only (never by bp_decide): add to X the
	 * notes and events behind term TERM's value (bp_monitor_hook sets it).
	 */
	int (*explain)(void *ctx, const struct bp_policy *p, size_t rule, size_t term,
		       const struct bp_request *req, struct bp_explain *x);
};

int bp_decision_new(struct bp_decision **ret);
void bp_decision_free(struct bp_decision *d);

/*
 * Decide REQ under P into D (which is overwritten). A per-tool action
 * NS::Action::"TOOL" is a refinement: a matching forbid or an evaluation
 * error denies, a matching permit permits (cause permitted), no matching
 * rule permits with cause not_refined.
 */
int bp_decide(const struct bp_policy *p, const struct bp_request *req,
	      const struct bp_temporal_hook *hook, struct bp_decision *d);

enum bp_verdict bp_decision_verdict(const struct bp_decision *d);
enum bp_cause bp_decision_cause(const struct bp_decision *d);
size_t bp_decision_rule_count(const struct bp_decision *d);
/* The i-th determining rule's index and name (file order). */
size_t bp_decision_rule_index(const struct bp_decision *d, size_t i);
const char *bp_decision_rule_name(const struct bp_decision *d, size_t i);
/* The message of docs/box-policy.5.md (NUL-terminated, at most 4096 bytes). */
const char *bp_decision_message(const struct bp_decision *d);
/*
 * From now on a decision into D permitted by a matching permit (cause permitted)
 * gets no message (""): for a caller that shows only a denial's (box-shell's
 * decisions in process, one per file of a walk). Every other decision still gets it.
 */
void bp_decision_skip_permit_message(struct bp_decision *d, bool skip);
/* How many rules the last bp_decide evaluated (the rule index's candidates). */
size_t bp_decision_rules_evaluated(const struct bp_decision *d);

/* ---- explaining a decision (`boxctl policy eval --explain`) ----
 *
 * bp_explain re-evaluates, on the side, every rule whose scope names the
 * request's action, and records for each its outcome, the clauses it
 * evaluated (in order, up to the one that decided) and, per clause, the
 * sub-expression that decided it as written in the policy, the values it
 * compared and, for temporal terms, the events that satisfied or failed the
 * condition. bp_decide is not touched: explaining costs nothing when not
 * asked for. The outcomes agree with bp_decide's for the same request and
 * hook; with a monitor, call it right after bp_monitor_decide (temporal
 * terms are evaluated at the last observed event, the request's).
 * Everything returned lives in X until the next bp_explain or bp_explain_free.
 */
enum bp_explain_outcome {
	BP_EXPLAIN_MATCHED = 0, /* every clause held: the rule applies */
	BP_EXPLAIN_NOT_MATCHED, /* a clause decided against it */
	BP_EXPLAIN_ERROR,       /* a clause could not be evaluated: the request is denied */
};

enum bp_explain_value {
	BP_EXPLAIN_FALSE = 0,
	BP_EXPLAIN_TRUE,
	BP_EXPLAIN_FAILED, /* an evaluation error */
};

struct bp_explain_event {
	int64_t time_ns;
	const char *kind;   /* "request", "response", "error" */
	const char *action; /* "fs:write", "NS::Action::\"tool\"" */
	const char *fields; /* its input and output, e.g. `path="~/p/a" operation=write_content` */
	const char *role;   /* how it took part, e.g. "formerly within 60s: held" */
};

struct bp_explain_clause {
	unsigned index; /* 1-based, in the rule */
	bool unless;
	bool temporal;                  /* `when temporal { … }` / `unless temporal { … }` */
	enum bp_explain_value value;    /* the clause body's value (before `unless` negates it) */
	const char *at;                 /* the sub-expression that decided it, as written */
	unsigned at_line, at_col;       /* where that is in the policy file */
	enum bp_explain_value at_value; /* what that sub-expression evaluated to */
	const char *detail;             /* the values it read, or why it failed; "" when none */
	size_t n_notes;                 /* temporal terms: what each one saw */
	const char *const *notes;
	size_t n_events;                /* temporal terms: the events behind the value */
	const struct bp_explain_event *events;
};

struct bp_explain_rule {
	size_t index;     /* file order, 0-based */
	const char *name; /* @id or policy_N */
	bool forbid;
	unsigned line, col;
	enum bp_explain_outcome outcome;
	size_t n_clauses; /* the clauses evaluated, in order (all of them when it matched) */
	const struct bp_explain_clause *clauses;
	const char *text; /* one sentence: "permit ok (line 3) did not match: when clause 2 …" */
};

int bp_explain_new(struct bp_explain **ret);
void bp_explain_free(struct bp_explain *x);
/* Explain how P decides REQ with HOOK (NULL: no temporal terms) into X (overwritten). */
int bp_explain(const struct bp_policy *p, const struct bp_request *req,
	       const struct bp_temporal_hook *hook, struct bp_explain *x);
/* Why no rule was looked at (the request does not fit the schema), or NULL. */
const char *bp_explain_problem(const struct bp_explain *x);
size_t bp_explain_rule_count(const struct bp_explain *x);
const struct bp_explain_rule *bp_explain_rule_at(const struct bp_explain *x, size_t i);
const char *bp_explain_outcome_str(enum bp_explain_outcome o); /* matched not_matched error */
const char *bp_explain_value_str(enum bp_explain_value v);     /* true false error */

const char *bp_verdict_str(enum bp_verdict v);
const char *bp_cause_str(enum bp_cause c);

#ifdef __cplusplus
}
#endif

#endif
