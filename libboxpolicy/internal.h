/* SPDX-License-Identifier: Apache-2.0 */
/*
 * internal.h — libboxpolicy's private types: arena, tokens, values, AST,
 * schema, policy, request, decision.
 *
 * Trusts: nothing; shared declarations only.
 */
#ifndef BOXPOLICY_INTERNAL_H
#define BOXPOLICY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "boxpolicy.h"

#define BP_MAX_DEPTH 128     /* expression nesting the parser and typechecker accept */
#define BP_MAX_TOKENS (4u << 20)
#define BP_MAX_REQ_BYTES (8u << 20)

/* ---- arena: bump allocator, freed as a whole ---- */

struct arena_chunk;
struct arena {
	struct arena_chunk *head;
	size_t total;
	size_t cap; /* 0 = unlimited */
};

void *arena_alloc(struct arena *a, size_t n); /* zeroed; NULL on ENOMEM or cap */
char *arena_strndup(struct arena *a, const char *s, size_t n);
void arena_reset(struct arena *a); /* keep the first chunk */
void arena_free(struct arena *a);
/* A stable merge sort (sort.c): 0, -ENOMEM, -EOVERFLOW. Never qsort: glibc's calls sysinfo(2). */
int bp_msort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* ---- growable buffer ---- */

struct buf {
	char *p;
	size_t len, cap;
	bool oom;
};
void buf_put(struct buf *b, const char *s, size_t n);
void buf_puts(struct buf *b, const char *s);
void buf_putc(struct buf *b, char c);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_free(struct buf *b);

/* ---- tokens ---- */

enum tok_kind {
	T_EOF = 0,
	T_IDENT,
	T_INT,
	T_STRING,
	T_LPAREN,
	T_RPAREN,
	T_LBRACKET,
	T_RBRACKET,
	T_LBRACE,
	T_RBRACE,
	T_COMMA,
	T_SEMI,
	T_DOT,
	T_COLON,
	T_COLONCOLON,
	T_AT,
	T_EQ,
	T_NE,
	T_LT,
	T_LE,
	T_GT,
	T_GE,
	T_AND,
	T_OR,
	T_NOT,
	T_PLUS,
	T_MINUS,
	T_STAR,
	T_SLASH,
	T_PERCENT,
	T_ASSIGN,
	T_QUESTION,
	T_DOLLAR,
	T_OTHER, /* a character no token starts with */
};

struct token {
	enum tok_kind k;
	uint32_t line, col;
	const char *p; /* source text (for T_STRING: including the quotes) */
	uint32_t len;
	uint64_t ival;  /* T_INT value (saturating) */
	bool ioverflow; /* T_INT above UINT64 range */
};

struct lexer_result {
	struct token *toks;
	size_t n;
	/* first lexical error, if any */
	bool err;
	uint32_t err_line, err_col;
	const char *err_msg;
};

int lex(const char *text, size_t len, struct lexer_result *out); /* toks malloc'd */
const char *tok_kind_name(enum tok_kind k);

/* ---- values ---- */

enum val_type {
	V_NONE = 0,
	V_BOOL,
	V_LONG,
	V_STR,
	V_ENT,
	V_SET,
	V_REC,
	V_IP,
	V_DEC,
	V_DATETIME,
	V_DURATION,
};

struct rec_ent;
struct val {
	uint8_t t;
	uint8_t ip_v6;     /* V_IP: 1 for IPv6 */
	uint8_t ip_prefix; /* V_IP: prefix length */
	uint32_t len;      /* V_STR: bytes; V_ENT: id bytes; V_SET/V_REC: entries */
	union {
		bool b;
		int64_t l; /* V_LONG, V_DEC (x10^4), V_DATETIME (ms), V_DURATION (ms) */
		const char *s;
		const struct val *items;
		const struct rec_ent *rec;
		struct {
			const char *etype; /* interned type path, e.g. "Box::Action" */
			const char *id;
		} e;
		uint8_t ip[16];
	} u;
};

struct rec_ent {
	const char *name; /* interned in the policy when known; else request memory */
	uint32_t atom;    /* policy atom, or UINT32_MAX */
	struct val v;
};

/* ---- types (the validator) ---- */

enum ty_kind {
	TY_NEVER = 0,
	TY_TRUE,
	TY_FALSE,
	TY_BOOL,
	TY_LONG,
	TY_STRING,
	TY_SET,
	TY_RECORD,
	TY_ENTITY,
	TY_IP,
	TY_DEC,
	TY_DATETIME,
	TY_DURATION,
	TY_EMPTYSET, /* element type unknown: [] */
};

struct rtype;
struct type {
	uint8_t k;
	const struct type *elem;  /* TY_SET */
	const struct rtype *rec;  /* TY_RECORD */
	const char *etype;        /* TY_ENTITY: interned type path */
};

struct rattr {
	const char *name;
	uint32_t atom;
	bool optional;
	struct type ty;
};

struct rtype {
	size_t n;
	struct rattr *attrs;
};

/* ---- schema ---- */

struct s_action {
	const char *ns;    /* "Box" or the MCP namespace */
	const char *id;    /* "fs:read" or the tool name */
	const char *etype; /* "Box::Action" / "NS::Action" */
	struct rtype input;
	struct rtype output;
	bool has_output;
	int label; /* resource label kind (enum label_kind) */
};

struct s_enum {
	const char *etype; /* "Box::FsReadOperation" */
	size_t n;
	const char **ids;
};

struct bp_schema {
	struct arena ar;
	size_t n_actions, cap_actions;
	struct s_action *actions;
	size_t n_enums;
	struct s_enum *enums;
	size_t n_ns, cap_ns;
	char **ns;      /* declared MCP namespaces */
	bool *ns_pending;
	char **ns_failed; /* NULL, or why its tool schema failed the policy check */
};

enum label_kind {
	LABEL_PATH = 0,
	LABEL_HOSTPORT,
	LABEL_HTTP,
	LABEL_PROGRAM,
	LABEL_PROGRAM_PATH,
	LABEL_MCP,
	LABEL_TOOL,
	LABEL_NONE,
};

int schema_init_fixed(struct bp_schema *s);
int schema_copy(const struct bp_schema *src, struct bp_schema *dst);
int schema_parse_type(struct arena *ar, const char *text, struct type *ret);
const struct s_action *schema_find_action(const struct bp_schema *s, const char *etype_ns,
					  const char *id, size_t *index);
bool schema_ns_known(const struct bp_schema *s, const char *ns, bool *pending);
/* Why namespace NS failed its policy check (bp_schema_add_failed), or NULL. */
const char *schema_ns_failed(const struct bp_schema *s, const char *ns);
void schema_fini(struct bp_schema *s);

/* ---- suggest.c: "did you mean" for names the schema does not know ---- */

typedef const char *(*name_at_fn)(const void *set, size_t i); /* NULL: skip entry i */
size_t name_distance(const char *a, const char *b); /* OSA edit distance; SIZE_MAX if too long */
const char *nearest_name(const char *word, const void *set, size_t n, name_at_fn at);
/* Append "; did you mean `X`? valid WHAT: a, b, …" (or "; valid WHAT: …") to the string in BUF. */
void suggest_names(char *buf, size_t size, const char *word, const void *set, size_t n,
		   name_at_fn at, const char *valid_what);
const char *name_at_strings(const void *set, size_t i); /* set: const char *const[] */
const char *name_at_attrs(const void *set, size_t i);   /* set: struct rattr[] */
/* The tail for an unknown action ID of entity type ETYPE (nothing when ETYPE has none). */
void suggest_action(char *buf, size_t size, const struct bp_schema *s, const char *etype,
		    const char *id);
void suggest_enum(char *buf, size_t size, const struct s_enum *e, const char *id);
void suggest_entity_type(char *buf, size_t size, const struct bp_schema *s, const char *etype);

/* ---- AST ---- */

enum ex_kind {
	EX_LIT = 0,
	EX_VAR,
	EX_SLOT,
	EX_ATTR,
	EX_HAS,
	EX_LIKE,
	EX_IS,
	EX_NOT,
	EX_NEG,
	EX_AND,
	EX_OR,
	EX_IF,
	EX_EQ,
	EX_NE,
	EX_LT,
	EX_LE,
	EX_GT,
	EX_GE,
	EX_IN,
	EX_ADD,
	EX_SUB,
	EX_MUL,
	EX_SET,
	EX_RECORD,
	EX_CALL,
	EX_METHOD,
	EX_TEMPORAL,
	EX_INPUT, /* context.input.NAME, resolved for speed */
};

enum var_kind {
	VAR_PRINCIPAL = 0,
	VAR_ACTION,
	VAR_RESOURCE,
	VAR_CONTEXT,
};

enum fn_kind {
	FN_IP = 0,
	FN_DECIMAL,
	FN_DATETIME,
	FN_DURATION,
	/* methods */
	M_CONTAINS,
	M_CONTAINS_ALL,
	M_CONTAINS_ANY,
	M_IS_EMPTY,
	M_IS_IPV4,
	M_IS_IPV6,
	M_IS_LOOPBACK,
	M_IS_MULTICAST,
	M_IS_IN_RANGE,
	M_LESS_THAN,
	M_LESS_THAN_OR_EQUAL,
	M_GREATER_THAN,
	M_GREATER_THAN_OR_EQUAL,
	M_OFFSET,
	M_DURATION_SINCE,
	M_TO_DATE,
	M_TO_TIME,
	M_TO_MILLISECONDS,
	M_TO_SECONDS,
	M_TO_MINUTES,
	M_TO_HOURS,
	M_TO_DAYS,
	M_GET_TAG,
	M_HAS_TAG,
	FN_COUNT,
};

struct pattern {
	size_t n_runs; /* literal runs; n_runs - 1 wildcards between them */
	const char **runs;
	uint32_t *lens;
	const char *text; /* source spelling, for the spelling checks */
	uint32_t text_len;
};

struct expr {
	uint8_t kind;
	uint8_t var; /* EX_VAR / EX_SLOT */
	uint8_t fn;  /* EX_CALL / EX_METHOD */
	uint32_t line, col;
	struct expr *a, *b, *c;
	size_t n; /* EX_SET / EX_RECORD / EX_CALL / EX_METHOD args */
	struct expr **items;
	const char **keys; /* EX_RECORD */
	uint32_t *key_atoms;
	const char *name; /* EX_ATTR / EX_HAS / EX_INPUT attribute; EX_IS type */
	uint32_t atom;
	struct val v;        /* EX_LIT */
	struct pattern *pat; /* EX_LIKE */
	uint32_t temporal;   /* EX_TEMPORAL index in the rule */
	uint32_t off, end;   /* source span [off, end) in the policy text (explain.c) */
};

enum scope_kind {
	SC_ANY = 0,
	SC_EQ,
	SC_IN,
	SC_IN_SET,
	SC_IS,
	SC_IS_IN,
};

struct entity_ref {
	const char *etype;
	const char *id;
	uint32_t line, col;
};

struct scope {
	uint8_t kind;
	bool slot;           /* ?principal / ?resource */
	struct entity_ref e; /* SC_EQ / SC_IN / SC_IS_IN */
	const char *is_type; /* SC_IS / SC_IS_IN */
	size_t n;            /* SC_IN_SET */
	struct entity_ref *set;
	uint32_t line, col;
};

struct annotation {
	const char *key;
	const char *value;
	uint32_t line, col;
};

/* One `when`/`unless` clause as written (explain.c); the rule's cond is their && chain. */
struct clause {
	struct expr *e; /* the clause's expression (an unless clause: before its negation) */
	bool unless;
	bool temporal; /* `when temporal { … }` */
	uint32_t line, col;
};

struct temporal_term {
	const char *text;
	size_t len;
	uint32_t line, col;
};

struct rule {
	bool forbid;
	uint32_t line, col;
	uint32_t n_clauses; /* in the padding: bp_decide's stride over rules stays small */
	uint32_t text_start, text_end; /* its bytes in the text: first annotation .. past `;` */
	size_t n_annot;
	struct annotation *annot;
	const char *id;   /* non-blank @id or NULL */
	const char *desc; /* non-blank @description or NULL */
	const char *name; /* id or policy_N */
	struct scope principal, action, resource;
	struct expr *cond; /* NULL: true */
	struct clause *clauses; /* n_clauses of them (explain.c) */
	bool has_clause;   /* any when/unless (a vacuous one included) */
	bool vacuous;      /* every clause is `when {true}` / `unless {false}` */
	size_t n_temporal;
	struct temporal_term *temporal;
	bool pending; /* names an MCP namespace whose schema is not known */
	bool never;   /* principal/resource scope can never match */
};

/* ---- atoms: names interned in the policy ---- */

struct atoms {
	size_t n, cap;
	const char **names;
	uint32_t *hash_slots; /* open addressing, index+1 */
	size_t n_slots;
};

uint32_t atom_intern(struct atoms *t, struct arena *ar, const char *s, size_t n);
uint32_t atom_find(const struct atoms *t, const char *s, size_t n);

/* ---- the rule index (index.c) ---- */

struct ix_slot {
	uint64_t h;
	struct val key;
	bool prefix;	 /* key is a `like` prefix, else an exact value */
	uint32_t len;	 /* key bytes (strings, entity ids) */
	uint32_t n;	 /* rules, file order */
	const uint32_t *rules; /* NULL: an empty slot */
};

struct ix_field {
	uint32_t atom; /* context.input.ATOM */
	bool str_only; /* a `like` key: a value that is not a string errors, evaluate all */
	uint32_t n_all, n_absent, n_plens, mask;
	const uint32_t *all;    /* every rule keyed on the field, file order */
	const uint32_t *absent; /* those evaluated when the field is absent (no `has` guard) */
	const uint32_t *plens;  /* distinct prefix-key lengths, ascending */
	struct ix_slot *slots;  /* mask + 1 of them, open addressing */
};

#define MIXED_ACTIONS (SIZE_MAX - 1)

/*
 * A rule's condition compiled for bp_decide (index.c): its &&, ||, ! and
 * the shapes read without building values, in prefix order in one array
 * per policy (a condition's nodes side by side, not scattered over the
 * parse arena); anything else is one C_GENERAL node evaluated from the AST.
 */
enum cnode_op {
	C_GENERAL = 0, /* arg: the struct expr, through the evaluator */
	C_AND,	       /* operands at i + 1 and right */
	C_OR,
	C_NOT,	       /* operand at i + 1 */
	C_HAS,	       /* context.input has F */
	C_LIKE,	       /* context.input.F like P; arg: a copy of the pattern */
	C_EQ,	       /* context.input.F == literal (either side); arg: a copy of the literal */
};

struct cnode {
	uint8_t op;
	uint32_t fatom;
	uint32_t right;
	const void *arg;
};

struct rule_code { /* what bp_decide reads of a rule, 8 bytes instead of struct rule's */
	uint32_t at; /* its condition in prog, or UINT32_MAX: none (true) */
	bool forbid;
};

struct ix_action {
	uint64_t required;    /* the action's required input attributes (the first 64) */
	bool required_in_mask; /* none beyond the first 64 */
	uint32_t n_always, n_fields;
	const uint32_t *always; /* rules evaluated for every request, file order */
	struct ix_field *fields;
};

struct bp_policy;
int index_build(struct bp_policy *p);
uint64_t index_hash(const struct val *v, bool prefix, size_t len);
/* The rule lists of F a request value V (NULL: absent) must evaluate; at most CAP. */
size_t index_lookup(const struct ix_field *f, const struct val *v, const uint32_t **lists,
		    uint32_t *counts, size_t cap);

/* ---- policy ---- */

enum label_field {
	LF_PATH = 0,
	LF_HOST,
	LF_PORT,
	LF_PROGRAM,
	LF_PROGRAM_PATH,
	LF_SERVER,
	LF_TOOL,
	LF_PROMPT,
	LF_URI,
	LF_METHOD,
	LF_COUNT,
};
extern const char *const label_field_names[LF_COUNT];

struct bp_policy {
	struct arena ar;
	struct bp_schema schema;
	struct atoms atoms;
	char *text; /* the source, for bp_policy_reload */
	size_t text_len;
	char *home;
	bool allow_unknown_ns;
	size_t n_rules;
	struct rule *rules;
	/* per schema action: candidate rules in file order */
	size_t **by_action;
	size_t *n_by_action;
	/* per schema action: the rule index (index.c); NULL when loaded with no_rule_index */
	struct ix_action *ix;
	/* with the index: each rule's compiled condition starts at prog[code[rule].at] */
	struct cnode *prog;
	struct rule_code *code;
	/* interned strings evaluation compares by pointer */
	const char *t_agent, *t_resource;
	uint32_t atom_input;
	/* the fields a decision message's resource label reads (message.c), by atom */
	uint32_t label_atom[LF_COUNT];
};

/* ---- diagnostics ---- */

struct diag {
	enum bp_severity sev;
	unsigned line, col;
	char *msg;
};

struct bp_diags {
	size_t n, cap;
	struct diag *d;
	size_t n_err, n_warn;
};

void diag_add(struct bp_diags *d, enum bp_severity sev, unsigned line, unsigned col,
	      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* ---- parser ---- */

struct parse_ctx {
	struct arena *ar;
	struct atoms *atoms;
	struct bp_diags *diags;
	const char *src;
	struct token *toks;
	size_t n_toks, pos;
	int depth;
	size_t n_rules, cap_rules;
	struct rule *rules;
	bool failed;
	bool oom;
};

int parse_policies(struct parse_ctx *pc);
bool unescape_string(const struct token *t, struct arena *ar, char **out, size_t *out_len,
		     const char **err);

/* ---- validation ---- */

int validate_policy(struct bp_policy *p, struct bp_diags *d);
void rule_label(const struct rule *r, size_t index, char *buf, size_t size);

/* ---- values / extensions (value.c: a leaf, calls nothing else here) ---- */

bool parse_ip(const char *s, size_t n, struct val *ret);
bool parse_decimal(const char *s, size_t n, int64_t *ret);
bool parse_datetime(const char *s, size_t n, int64_t *ret);
bool parse_duration(const char *s, size_t n, int64_t *ret);
bool val_eq(const struct val *a, const struct val *b);
bool val_str_eq(const char *a, size_t an, const char *b, size_t bn);
/* The set value SET holds an element equal to X. */
bool val_set_has(const struct val *set, const struct val *x);

/* ---- evaluation (eval.c) ---- */

bool like_match(const struct pattern *p, const char *s, size_t n);
/* Evaluate E of rule RULE for REQ exactly as bp_decide does (explain.c): 0, or -1 on an error. */
int eval_expr(const struct bp_policy *p, const struct bp_request *req,
	      const struct bp_temporal_hook *hook, size_t rule, struct arena *scratch,
	      const struct expr *e, struct val *out);

/* ---- explain.c: what the monitor's explain hook adds (temporal_monitor.c) ---- */

/* A note about the temporal term being explained (printf-style). */
void explain_note(struct bp_explain *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An event behind it: FIELDS its input/output text, ROLE how it took part. */
void explain_event(struct bp_explain *x, int64_t time_ns, const char *kind, const char *action,
		   const char *fields, const char *role);
/* Print V for an explanation (strings quoted and escaped, at most about MAX bytes). */
void explain_put_val(struct buf *b, const struct val *v, size_t max);

/* ---- request / decision ---- */

struct bp_value {
	struct val v;
	size_t cap; /* sets / records under construction */
};

struct bp_request {
	const struct bp_policy *p;
	struct arena ar;
	size_t action; /* index into p->schema.actions, or SIZE_MAX */
	bool action_pending;
	char *pending_name;
	const char *pending_failed; /* the namespace failed (bp_schema_add_failed): why */
	struct rec_ent *fields;
	size_t n_fields, cap_fields;
	struct val context; /* {input: ...}, built at decide time */
	struct rec_ent ctx_ent;
	const char *resource;
	size_t resource_len;
	bool resource_set;
	/* lookups a caller repeats request after request (a shell decides every
	 * `[` of a loop), tried first and checked with one comparison: the last
	 * plain action's index, and the input attribute of the i-th field set */
	size_t action_hint;
	size_t n_puts;
	/* the action every field was set under (MIXED_ACTIONS if not one), and
	 * which of its input attributes (the first 64) are set: bp_decide's
	 * required-field check and rule index trust the fields only then */
	size_t fields_action;
	uint64_t present;
	uint16_t attr_hint[16];
	char problem[640]; /* the message and its suggestion tail (suggest.c) */
};

struct bp_decision {
	enum bp_verdict verdict;
	enum bp_cause cause;
	size_t n_rules, cap_rules;
	size_t *rules;
	const struct bp_policy *p;
	struct arena scratch;
	char msg[BP_MAX_MESSAGE + 1];
	/* work lists */
	size_t *forbids, *permits, *errors;
	size_t cap_work;
	uint32_t *cand;	  /* the index's candidates, file order (cap_work) */
	uint64_t *marks;  /* candidates as bits, when many lists hit (cap_work / 64 + 1 words) */
	size_t n_evaluated; /* rules the last decision evaluated */
	bool skip_permit_message; /* bp_decision_skip_permit_message */
};

int format_message(const struct bp_policy *p, const struct bp_request *req,
		   struct bp_decision *d);
/* request_field.c (a leaf): the value of context.input's field ATOM, or NULL. */
const struct val *request_field(const struct bp_request *r, uint32_t atom);

/* UTF-8 encoding of one code point into O (4 bytes of room); returns its length. */
size_t bp_utf8_put(char *o, uint32_t cp);

#endif
