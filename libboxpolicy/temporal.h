/* SPDX-License-Identifier: Apache-2.0 */
/*
 * temporal.h — libboxpolicy's private temporal types: the syntax tree of a
 * `temporal { … }` term, its parser, the load-time checks and the printer
 * the canonical rule hash is computed from.
 *
 * Trusts: nothing; shared declarations only.
 */
#ifndef BOXPOLICY_TEMPORAL_INTERNAL_H
#define BOXPOLICY_TEMPORAL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "boxpolicy_temporal.h"
#include "internal.h"

#define TP_MAX_VARS 64     /* binders in one term (a bound set is a uint64_t) */
#define TP_MAX_DEPTH 64    /* nesting the temporal parser accepts */
#define TP_NS_PER_SEC 1000000000LL

enum tn_kind {
	TN_AND = 0, /* items[0..n) */
	TN_NOT,     /* a */
	TN_SINCE,   /* a since within window b */
	TN_FORMERLY,
	TN_PREVIOUS,
	TN_EXISTS, /* exists (var: type). a */
	TN_TP,     /* tp(var) */
	TN_PRED,   /* an event predicate */
	TN_CMP,    /* l op r */
};

enum tc_op {
	TC_EQ = 0,
	TC_NE,
	TC_LT,
	TC_LE,
	TC_GT,
	TC_GE,
};

enum tt_kind {
	TT_LIT = 0, /* v */
	TT_VAR,     /* var (-1: free, name kept) */
	TT_WILD,    /* `_` or `*` */
	TT_CONTEXT, /* context.path[0].path[1]… */
	TT_PRINCIPAL,
	TT_RESOURCE,
	TT_SET, /* items */
	TT_AGG, /* agg */
};

/* A variable's declared type. */
enum tv_type {
	TV_LONG = 0,
	TV_STRING,
	TV_BOOL,
	TV_TIMEPOINT,
	TV_ENTITY, /* etype */
	TV_OTHER,  /* a type we do not check (Set<…>, decimal, …) */
};

struct tnode;
struct tagg;

struct tterm {
	uint8_t kind;
	uint32_t line, col;
	struct val v;     /* TT_LIT */
	int var;          /* TT_VAR */
	const char *name; /* TT_VAR: spelling */
	size_t n_path;    /* TT_CONTEXT / TT_PRINCIPAL / TT_RESOURCE */
	const char **path;
	size_t n; /* TT_SET */
	struct tterm **items;
	struct tagg *agg;
};

struct tagg {
	bool sum;
	int sum_var; /* -1: free (name in sum_name) */
	const char *sum_name;
	uint32_t line, col;
	size_t n_for;
	int *for_vars;
	struct tnode *body;
};

/* One `field.path: term` of a predicate. */
struct targ {
	uint32_t line, col;
	size_t n_path;
	const char **path; /* path[0]: "input", "output", "callerPrincipal", … */
	struct tterm *t;
};

struct tnode {
	uint8_t kind;
	uint8_t op;        /* TN_CMP: enum tc_op; TN_PRED: enum bp_event_kind */
	uint32_t line, col;
	int64_t window;    /* ns: TN_FORMERLY / TN_PREVIOUS / TN_SINCE */
	const char *wtext; /* the window as written, e.g. "60s" */
	struct tnode *a, *b;
	size_t n;
	struct tnode **items;
	int var; /* TN_EXISTS / TN_TP */
	struct tterm *l, *r; /* TN_CMP */
	/* TN_PRED */
	const char *ns;    /* "Box" (everything before ::Action) */
	const char *etype; /* "Box::Action" */
	const char *aid;   /* "fs:write" */
	const char *kind_name;
	size_t action; /* schema index, SIZE_MAX when unresolved (pending namespace) */
	size_t n_args;
	struct targ *args;
};

struct tvar {
	const char *name;
	uint8_t type; /* enum tv_type */
	const char *etype;
	const char *type_name;
	uint32_t line, col;
};

/* One parsed term. */
struct tprog {
	struct tnode *root;
	size_t n_vars;
	struct tvar vars[TP_MAX_VARS];
	/* derived by tprog_analyze */
	int64_t horizon;  /* ns a decision may look back */
	bool needs_all;   /* needs every event, not only those a predicate names */
};

/*
 * Parse term TERM of rule RULE of P into *ret (nodes in AR). On a syntax
 * error, a diagnostic (file-relative line:col) goes to D and -EINVAL is
 * returned.
 */
int tprog_parse(const struct bp_policy *p, size_t rule, size_t term, struct arena *ar,
		struct tprog *ret, struct bp_diags *d);
/* Apply the acceptance rules to a parsed term; 0 or -EINVAL (diagnostics to D). */
int tprog_check(const struct bp_policy *p, size_t rule, struct tprog *t, struct bp_diags *d);
/* Fill horizon and needs_all. */
void tprog_analyze(struct tprog *t);
/* Append the canonical printing of T to B. */
void tprog_print(const struct tprog *t, struct buf *b);

/* Byte length of a deep copy of V; copy V into *mem (advanced). */
size_t tval_size(const struct val *v);
void tval_copy(struct val *dst, const struct val *src, char **mem);

/*
 * Monitor internals for tests and benchmarks (temporal_monitor.c): turn the
 * incremental aggregates off (every aggregate is then computed by scanning its
 * window); the evaluation work done so far (steps of the evaluator, rows fed,
 * contributions expired), a timing-independent cost measure; the value of the
 * last aggregate a decision computed (false when none was).
 */
void tmon_set_incremental(struct bp_monitor *m, bool on);
uint64_t tmon_work(const struct bp_monitor *m);
bool tmon_last_agg(const struct bp_monitor *m, int64_t *v);

#endif
