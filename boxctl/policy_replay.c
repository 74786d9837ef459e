/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_replay.c — `boxctl policy replay [--home DIR] [--json] POLICY NAME|ID|LOG...`
 * (docs/boxctl.1.md, docs/box-policy.5.md): re-decide every request of a box's decision log
 * under a candidate policy and print what would change.
 *
 * Inputs, in order: for a NAME or ID, that box's decisions.jsonl.1 then
 * decisions.jsonl, found as `boxctl log` finds them (boxlog.h); an argument
 * holding '/' or '.' (box names hold neither), or "-", is a log file. One
 * temporal monitor, starting empty, sees the whole timeline: each decision
 * line is observed, then decided (bp_monitor_decide) at its time_ns (older
 * lines: `time`, milliseconds), each outcome line ("record":"response" |
 * "error") is observed as an outcome event at its time — as box-policyd did
 * when the box ran, so temporal rules (budgets, `::response` conditions)
 * replay over the same events. A line whose verdict differs prints
 *
 *     TIME ACTION RESOURCE old → new RULE
 *
 * (RULE: the new decision's first determining rule, `+N` when more did, `-`
 * for none), then one summary line `N decisions, K now denied, M now
 * permitted, J unchanged` (`, S whose schema is gone` when S > 0). A request
 * for an MCP tool the schema no longer has (or whose arguments no longer
 * fit it) is printed as `old → schema gone (WHY)`: it cannot be re-decided.
 * `{"schema":…}` lines (policy eval's format) in a log file declare MCP
 * tools. --json: one JSON object per changed decision, then the summary as
 * one object. Exit 0: nothing changes; 3: something does; 2: a line was
 * refused (each is reported as `boxctl: FILE:LINE: MESSAGE`, replay goes
 * on, so a corrupt log never passes as "unchanged"); 1: a log cannot be read.
 *
 * Speed: a log line is ~400 bytes and jansson needs 8.5-10 µs for one, more
 * than deciding it; lines are parsed here by a small JSON reader that
 * decodes strings in place and feeds the input fields straight into the
 * request (no tree), and the file is read in 1 MiB blocks, so memory stays
 * flat whatever the log's length (the monitor keeps only what the
 * candidate's windows need).
 *
 * Runs as the calling user on that user's files. Trusts nothing it reads:
 * every line is checked (JSON syntax, UTF-8, integer ranges, nesting depth,
 * a 1 MiB line cap) and a line of another box (its "box" differs from the
 * one asked for, or from the first line's) is refused; strings from the log
 * are escaped before they reach a terminal.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "boxlog.h"
#include "boxpolicy.h"
#include "boxpolicy_temporal.h"
#include "commands.h"
#include "policy_history.h"
#include "policy_replay.h"
#include "proto/validate.h"
#include "termsafe.h"

#define REPLAY_LINE_MAX (1u << 20)
#define REPLAY_BLOCK (1u << 20)
#define REPLAY_DEPTH_MAX 32
#define REPLAY_EXIT_CHANGED 3

/* ---- a lean JSON reader over one mutable line --------------------------------------- */

struct jr {
	char *p, *end, *start;
	char err[160];
};

static bool
jr_fail(struct jr *c, const char *what)
{
	if (!c->err[0])
		(void)snprintf(c->err, sizeof(c->err), "not JSON: %s at column %zu", what,
			       (size_t)(c->p - c->start) + 1);
	return false;
}

static inline void
jr_ws(struct jr *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n'))
		c->p++;
}

static inline bool
jr_eat(struct jr *c, char ch)
{
	jr_ws(c);
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return true;
	}
	return false;
}

static int
hex4(const char *p)
{
	int v = 0;
	for (int i = 0; i < 4; i++) {
		char h = p[i];
		v <<= 4;
		if (h >= '0' && h <= '9')
			v |= h - '0';
		else if (h >= 'a' && h <= 'f')
			v |= h - 'a' + 10;
		else if (h >= 'A' && h <= 'F')
			v |= h - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/* Whether the N bytes at S are valid UTF-8 (no overlongs, no surrogates). */
static bool
valid_utf8(const unsigned char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned c = s[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t k;
		unsigned min;
		if (c >= 0xc2 && c <= 0xdf)
			k = 1, min = 0x80;
		else if (c >= 0xe0 && c <= 0xef)
			k = 2, min = 0x800;
		else if (c >= 0xf0 && c <= 0xf4)
			k = 3, min = 0x10000;
		else
			return false;
		if (n - i <= k)
			return false;
		unsigned v = c & (0x3f >> k);
		for (size_t j = 1; j <= k; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return false;
			v = v << 6 | (s[i + j] & 0x3f);
		}
		if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
			return false;
		i += k + 1;
	}
	return true;
}

/*
 * A string at c->p (the opening quote): decoded in place, NUL-terminated;
 * *s and *n the text. SKIP: check it without changing the line.
 */
static bool
jr_string(struct jr *c, char **s, size_t *n, bool skip)
{
	jr_ws(c);
	if (c->p >= c->end || *c->p != '"')
		return jr_fail(c, "expected a string");
	char *r = ++c->p, *w = r, *out = r;
	bool high = false;
	for (;;) {
		/* The run without escapes: most strings are one. */
		char *q = r;
		while (q < c->end && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20) {
			high |= (unsigned char)*q >= 0x80;
			q++;
		}
		if (!skip && w != r)
			memmove(w, r, (size_t)(q - r));
		w += q - r;
		r = q;
		if (r >= c->end) {
			c->p = r;
			return jr_fail(c, "unterminated string");
		}
		if (*r == '"')
			break;
		if ((unsigned char)*r < 0x20) {
			c->p = r;
			return jr_fail(c, "a control character in a string");
		}
		/* An escape. */
		if (r + 1 >= c->end) {
			c->p = r;
			return jr_fail(c, "unterminated string");
		}
		char e = r[1], dec;
		r += 2;
		switch (e) {
		case '"': dec = '"'; break;
		case '\\': dec = '\\'; break;
		case '/': dec = '/'; break;
		case 'b': dec = '\b'; break;
		case 'f': dec = '\f'; break;
		case 'n': dec = '\n'; break;
		case 'r': dec = '\r'; break;
		case 't': dec = '\t'; break;
		case 'u': {
			int u = c->end - r >= 4 ? hex4(r) : -1;
			if (u < 0) {
				c->p = r;
				return jr_fail(c, "a bad \\u escape");
			}
			r += 4;
			unsigned cp = (unsigned)u;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				int lo = c->end - r >= 6 && r[0] == '\\' && r[1] == 'u' ? hex4(r + 2) : -1;
				if (lo < 0xdc00 || lo > 0xdfff) {
					c->p = r;
					return jr_fail(c, "a lone surrogate in a \\u escape");
				}
				r += 6;
				cp = 0x10000 + ((cp - 0xd800) << 10) + ((unsigned)lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp <= 0xdfff) {
				c->p = r;
				return jr_fail(c, "a lone surrogate in a \\u escape");
			}
			/* UTF-8 is never longer than the escape it came from. */
			char u8[4];
			size_t k;
			if (cp < 0x80) {
				u8[0] = (char)cp;
				k = 1;
			} else if (cp < 0x800) {
				u8[0] = (char)(0xc0 | cp >> 6);
				u8[1] = (char)(0x80 | (cp & 0x3f));
				k = 2;
			} else if (cp < 0x10000) {
				u8[0] = (char)(0xe0 | cp >> 12);
				u8[1] = (char)(0x80 | (cp >> 6 & 0x3f));
				u8[2] = (char)(0x80 | (cp & 0x3f));
				k = 3;
			} else {
				u8[0] = (char)(0xf0 | cp >> 18);
				u8[1] = (char)(0x80 | (cp >> 12 & 0x3f));
				u8[2] = (char)(0x80 | (cp >> 6 & 0x3f));
				u8[3] = (char)(0x80 | (cp & 0x3f));
				k = 4;
			}
			if (!skip)
				memcpy(w, u8, k);
			w += k;
			continue;
		}
		default:
			c->p = r - 1;
			return jr_fail(c, "an unknown escape");
		}
		if (!skip)
			*w = dec;
		w++;
	}
	/* r is at the closing quote, w <= r: the NUL goes where the text ends. */
	size_t len = (size_t)(w - out);
	/* Raw bytes >= 0x80 must be UTF-8 (escapes decode to valid UTF-8; skipping checks the raw text). */
	if (high && !valid_utf8((const unsigned char *)out, skip ? (size_t)(r - out) : len)) {
		c->p = r;
		return jr_fail(c, "a string that is not UTF-8");
	}
	c->p = r + 1;
	if (!skip) {
		*w = '\0';
		*s = out;
		*n = len;
	}
	return true;
}

/* A number: an integer in *v (NUM_INT), or one that is not: NUM_REAL (a fraction or an
 * exponent, skipped) or NUM_BIG (beyond 64 bits). */
enum num_kind { NUM_INT, NUM_REAL, NUM_BIG };

static bool
jr_number(struct jr *c, int64_t *v, enum num_kind *kind)
{
	jr_ws(c);
	char *p = c->p;
	bool neg = false;
	uint64_t u = 0;
	if (p < c->end && *p == '-') {
		neg = true;
		p++;
	}
	if (p >= c->end || *p < '0' || *p > '9')
		return jr_fail(c, "expected a value");
	if (*p == '0' && p + 1 < c->end && p[1] >= '0' && p[1] <= '9')
		return jr_fail(c, "a number with a leading zero");
	bool overflow = false;
	for (; p < c->end && *p >= '0' && *p <= '9'; p++) {
		if (u > (UINT64_MAX - 9) / 10)
			overflow = true;
		u = u * 10 + (uint64_t)(*p - '0');
	}
	*kind = NUM_INT;
	if (p < c->end && (*p == '.' || *p == 'e' || *p == 'E')) {
		*kind = NUM_REAL;
		if (*p == '.') {
			p++;
			if (p >= c->end || *p < '0' || *p > '9') {
				c->p = p;
				return jr_fail(c, "a bad number");
			}
			while (p < c->end && *p >= '0' && *p <= '9')
				p++;
		}
		if (p < c->end && (*p == 'e' || *p == 'E')) {
			p++;
			if (p < c->end && (*p == '+' || *p == '-'))
				p++;
			if (p >= c->end || *p < '0' || *p > '9') {
				c->p = p;
				return jr_fail(c, "a bad number");
			}
			while (p < c->end && *p >= '0' && *p <= '9')
				p++;
		}
		c->p = p;
		return true;
	}
	if (overflow || u > (uint64_t)INT64_MAX + (neg ? 1 : 0)) {
		*kind = NUM_BIG; /* out of an integer's range: the caller refuses it */
		c->p = p;
		return true;
	}
	*v = neg ? (int64_t)(0 - u) : (int64_t)u;
	c->p = p;
	return true;
}

static bool
jr_literal(struct jr *c, const char *lit, size_t n)
{
	if ((size_t)(c->end - c->p) < n || memcmp(c->p, lit, n) != 0)
		return jr_fail(c, "expected a value");
	c->p += n;
	return true;
}

/* Check any value without changing the line. */
static bool
jr_skip(struct jr *c, int depth)
{
	jr_ws(c);
	if (depth > REPLAY_DEPTH_MAX)
		return jr_fail(c, "nested too deeply");
	if (c->p >= c->end)
		return jr_fail(c, "expected a value");
	switch (*c->p) {
	case '"': return jr_string(c, NULL, NULL, true);
	case 't': return jr_literal(c, "true", 4);
	case 'f': return jr_literal(c, "false", 5);
	case 'n': return jr_literal(c, "null", 4);
	case '[':
		c->p++;
		if (jr_eat(c, ']'))
			return true;
		do {
			if (!jr_skip(c, depth + 1))
				return false;
		} while (jr_eat(c, ','));
		return jr_eat(c, ']') || jr_fail(c, "expected ',' or ']'");
	case '{':
		c->p++;
		if (jr_eat(c, '}'))
			return true;
		do {
			if (!jr_string(c, NULL, NULL, true))
				return false;
			if (!jr_eat(c, ':'))
				return jr_fail(c, "expected ':'");
			if (!jr_skip(c, depth + 1))
				return false;
		} while (jr_eat(c, ','));
		return jr_eat(c, '}') || jr_fail(c, "expected ',' or '}'");
	default: {
		int64_t v;
		enum num_kind k;
		return jr_number(c, &v, &k);
	}
	}
}

/* ---- values into a request ---------------------------------------------------------- */

/* A value for a set or record (MCP tool arguments); NULL with c->err set. */
static struct bp_value *
jr_bp_value(struct jr *c, struct bp_request *r, int depth)
{
	jr_ws(c);
	if (depth > REPLAY_DEPTH_MAX) {
		jr_fail(c, "nested too deeply");
		return NULL;
	}
	if (c->p >= c->end) {
		jr_fail(c, "expected a value");
		return NULL;
	}
	struct bp_value *v = NULL;
	char *s;
	size_t n;
	switch (*c->p) {
	case '"':
		if (!jr_string(c, &s, &n, false))
			return NULL;
		v = bp_value_string(r, s, n);
		break;
	case 't':
	case 'f': {
		bool t = *c->p == 't';
		if (!jr_literal(c, t ? "true" : "false", t ? 4 : 5))
			return NULL;
		v = bp_value_bool(r, t);
		break;
	}
	case 'n': jr_fail(c, "null is not a value"); return NULL;
	case '[':
		c->p++;
		v = bp_value_set(r);
		if (jr_eat(c, ']'))
			break;
		do {
			struct bp_value *e = jr_bp_value(c, r, depth + 1);
			if (!e)
				return NULL;
			if (!v || bp_value_set_add(r, v, e) < 0) {
				jr_fail(c, "a set element the request cannot hold");
				return NULL;
			}
		} while (jr_eat(c, ','));
		if (!jr_eat(c, ']')) {
			jr_fail(c, "expected ',' or ']'");
			return NULL;
		}
		break;
	case '{':
		c->p++;
		v = bp_value_record(r);
		if (jr_eat(c, '}'))
			break;
		do {
			if (!jr_string(c, &s, &n, false))
				return NULL;
			if (!jr_eat(c, ':')) {
				jr_fail(c, "expected ':'");
				return NULL;
			}
			struct bp_value *e = jr_bp_value(c, r, depth + 1);
			if (!e)
				return NULL;
			if (!v || bp_value_record_put(r, v, s, e) < 0) {
				jr_fail(c, "a record field the request cannot hold");
				return NULL;
			}
		} while (jr_eat(c, ','));
		if (!jr_eat(c, '}')) {
			jr_fail(c, "expected ',' or '}'");
			return NULL;
		}
		break;
	default: {
		int64_t x;
		enum num_kind k;
		if (!jr_number(c, &x, &k))
			return NULL;
		if (k != NUM_INT) {
			(void)snprintf(c->err, sizeof(c->err), "%s",
				       k == NUM_BIG ? "a number beyond 64 bits" : "numbers must be integers");
			return NULL;
		}
		v = bp_value_long(r, x);
		break;
	}
	}
	if (!v)
		(void)snprintf(c->err, sizeof(c->err), "out of memory");
	return v;
}

/*
 * The "input" object at c->p into R (its action set). A field the request
 * refuses sets *field_problem (the request's reason) and parsing goes on.
 */
static bool
jr_input(struct jr *c, struct bp_request *r, const char **field_problem)
{
	if (!jr_eat(c, '{'))
		return jr_fail(c, "\"input\" must be an object");
	if (jr_eat(c, '}'))
		return true;
	do {
		char *name, *s;
		size_t nlen, n;
		if (!jr_string(c, &name, &nlen, false))
			return false;
		if (!jr_eat(c, ':'))
			return jr_fail(c, "expected ':'");
		jr_ws(c);
		if (c->p >= c->end)
			return jr_fail(c, "expected a value");
		int x;
		char ch = *c->p;
		if (ch == '"') {
			if (!jr_string(c, &s, &n, false))
				return false;
			x = bp_request_set_string(r, name, s, n);
		} else if (ch == 't' || ch == 'f') {
			if (!jr_literal(c, ch == 't' ? "true" : "false", ch == 't' ? 4 : 5))
				return false;
			x = bp_request_set_bool(r, name, ch == 't');
		} else if (ch == '[' || ch == '{' || ch == 'n') {
			struct bp_value *v = jr_bp_value(c, r, 1);
			if (!v)
				return false;
			x = bp_request_set_value(r, name, v);
		} else {
			int64_t v;
			enum num_kind k;
			if (!jr_number(c, &v, &k))
				return false;
			if (k != NUM_INT) {
				(void)snprintf(c->err, sizeof(c->err), "field \"%.60s\": %s", name,
					       k == NUM_BIG ? "a number beyond 64 bits"
							    : "numbers must be integers");
				return false;
			}
			x = bp_request_set_long(r, name, v);
		}
		if (x < 0 && !*field_problem)
			*field_problem = bp_request_problem(r) ?: "a field that does not fit";
	} while (jr_eat(c, ','));
	return jr_eat(c, '}') || jr_fail(c, "expected ',' or '}'");
}

/* An outcome's "output" object into EV (strings and integers: status, result). */
static bool
jr_output(struct jr *c, struct bp_event *ev)
{
	if (!jr_eat(c, '{'))
		return jr_fail(c, "\"output\" must be an object");
	if (jr_eat(c, '}'))
		return true;
	do {
		char *name, *s;
		size_t nlen, n;
		if (!jr_string(c, &name, &nlen, false))
			return false;
		if (!jr_eat(c, ':'))
			return jr_fail(c, "expected ':'");
		jr_ws(c);
		int x;
		if (c->p < c->end && *c->p == '"') {
			if (!jr_string(c, &s, &n, false))
				return false;
			x = bp_event_set_output_string(ev, name, s, n);
		} else {
			int64_t v;
			enum num_kind k;
			if (!jr_number(c, &v, &k))
				return false;
			x = k != NUM_INT ? -EINVAL : bp_event_set_output_long(ev, name, v);
		}
		if (x < 0) {
			(void)snprintf(c->err, sizeof(c->err), "output field \"%.60s\" is not valid",
				       name);
			return false;
		}
	} while (jr_eat(c, ','));
	return jr_eat(c, '}') || jr_fail(c, "expected ',' or '}'");
}

/* ---- the replay --------------------------------------------------------------------- */

struct replay {
	struct bp_policy *policy;
	struct bp_schema *schema;
	struct bp_monitor *mon;
	struct bp_request *req;
	struct bp_event *ev;
	struct bp_decision *dec;
	bool json;
	char box[80];       /* the box the log belongs to ("" until known) */
	const char *run_id; /* only that run's lines (asked by ID); NULL: all */
	bool box_fixed;     /* asked by name: lines of another box are refused */
	unsigned long decisions, now_denied, now_permitted, unchanged, schema_gone, refused;
	char *copy;         /* a schema line's original text (for jansson) */
	size_t copy_cap;
	char **tools;       /* the MCP tool actions schema lines declared, NS::Action::"tool" */
	size_t n_tools;
};

/* Whether a schema line declared ACTION (a tool action): else its schema is gone. */
static bool
tool_declared(const struct replay *st, const char *action)
{
	for (size_t i = 0; i < st->n_tools; i++)
		if (strcmp(st->tools[i], action) == 0)
			return true;
	return false;
}

static int
declare_tool(struct replay *st, const char *ns, const char *tool)
{
	char *a = NULL;
	if (asprintf(&a, "%s::Action::\"%s\"", ns, tool) < 0)
		return -ENOMEM;
	if (tool_declared(st, a)) {
		free(a);
		return 0;
	}
	char **v = realloc(st->tools, (st->n_tools + 1) * sizeof(*v));
	if (!v) {
		free(a);
		return -ENOMEM;
	}
	st->tools = v;
	st->tools[st->n_tools++] = a;
	return 0;
}

/* What one log line holds (pointers into the line, decoded in place). */
struct logline {
	char *time, *box, *id, *action, *resource, *verdict, *record, *cause;
	size_t resource_len;
	int64_t time_ns;
	bool have_time_ns;
	char *input, *output; /* where those objects start (when met before "action") */
	char *rules;          /* the raw rules array (valid JSON: checked) */
	size_t rules_len;
};

static bool
is_tool_action(const char *a)
{
	return strstr(a, "::Action::\"") != NULL;
}

static void
print_time(FILE *out, const struct logline *l)
{
	if (l->time) {
		put_safe(out, l->time);
		return;
	}
	struct tm tm;
	time_t s = (time_t)(l->time_ns / 1000000000LL);
	int64_t ns = l->time_ns % 1000000000LL;
	if (ns < 0) {
		ns += 1000000000LL;
		s--;
	}
	if (!gmtime_r(&s, &tm)) {
		fputs("-", out);
		return;
	}
	fprintf(out, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ns / 1000000));
}

/* A changed decision: the text line or the JSON object. GONE: why it could not be re-decided. */
static void
print_change(struct replay *st, const char *file, unsigned lineno, const struct logline *l,
	     const char *gone)
{
	FILE *out = stdout;
	bool permit = bp_decision_verdict(st->dec) == BP_PERMIT;
	if (st->json) {
		json_t *o = json_object();
		json_t *old_rules = l->rules ? json_loadb(l->rules, l->rules_len, 0, NULL) : NULL;
		json_object_set_new(o, "time", json_string(l->time ? l->time : ""));
		json_object_set_new(o, "time_ns", json_integer(l->time_ns));
		json_object_set_new(o, "action", json_string(l->action));
		json_object_set_new(o, "resource",
				    json_stringn(l->resource ? l->resource : "", l->resource_len));
		json_t *old = json_object();
		json_object_set_new(old, "verdict", json_string(l->verdict));
		if (l->cause)
			json_object_set_new(old, "cause", json_string(l->cause));
		json_object_set_new(old, "rules", old_rules ? old_rules : json_array());
		json_object_set_new(o, "old", old);
		if (gone) {
			json_object_set_new(o, "schema_gone", json_string(gone));
		} else {
			json_t *rules = json_array();
			for (size_t i = 0; i < bp_decision_rule_count(st->dec); i++)
				json_array_append_new(rules,
						      json_string(bp_decision_rule_name(st->dec, i)));
			json_t *nw = json_object();
			json_object_set_new(nw, "verdict",
					    json_string(bp_verdict_str(bp_decision_verdict(st->dec))));
			json_object_set_new(nw, "cause",
					    json_string(bp_cause_str(bp_decision_cause(st->dec))));
			json_object_set_new(nw, "rules", rules);
			json_object_set_new(nw, "message", json_string(bp_decision_message(st->dec)));
			json_object_set_new(o, "new", nw);
		}
		json_object_set_new(o, "file", json_string(file));
		json_object_set_new(o, "line", json_integer(lineno));
		char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
		if (s)
			fprintf(out, "%s\n", s);
		free(s);
		json_decref(o);
		return;
	}
	print_time(out, l);
	fputc(' ', out);
	put_safe(out, l->action);
	fputc(' ', out);
	if (l->resource && l->resource_len)
		put_safe_n(out, l->resource, l->resource_len);
	else
		fputc('-', out);
	fputc(' ', out);
	put_safe(out, l->verdict);
	fputs(" \xe2\x86\x92 ", out); /* → */
	if (gone) {
		fputs("schema gone (", out);
		put_safe(out, gone);
		fputs(")\n", out);
		return;
	}
	fputs(permit ? "permit " : "deny ", out);
	size_t n = bp_decision_rule_count(st->dec);
	if (n == 0)
		fputc('-', out);
	else
		put_safe(out, bp_decision_rule_name(st->dec, 0));
	if (n > 1)
		fprintf(out, "+%zu", n - 1);
	fputc('\n', out);
}

/* "boxctl: FILE:LINE: PREFIXWHAT" on stderr; the line counts as refused. */
static void
refuse(struct replay *st, const char *file, unsigned lineno, const char *prefix, const char *what)
{
	fprintf(stderr, "boxctl: %s:%u: %s%s\n", file, lineno, prefix, what);
	st->refused++;
}

/* Bind the request, event and decision to the (new) policy. 0 or -ENOMEM. */
static int
bind_policy(struct replay *st)
{
	bp_request_free(st->req);
	bp_event_free(st->ev);
	st->req = NULL;
	st->ev = NULL;
	const struct bp_policy *p = bp_monitor_policy(st->mon);
	if (bp_request_new(p, &st->req) < 0 || bp_event_new(p, &st->ev) < 0)
		return -ENOMEM;
	return 0;
}

/*
 * A schema line ({"schema":"NS","actions":{"tool":{"a":"Long","opt?":"String"}}}):
 * declare the tools, re-validate the candidate against the schema, move the
 * monitor's events over. NULL, or why not (in MSG).
 */
static const char *
schema_line(struct replay *st, const char *text, char *msg, size_t len)
{
	json_error_t je;
	json_t *obj = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	json_t *ns = json_object_get(obj, "schema"), *actions = json_object_get(obj, "actions");
	const char *err = NULL;
	if (!json_is_string(ns) || !json_is_object(actions)) {
		err = "a schema line needs \"schema\" (a string) and \"actions\" (an object)";
	} else if (bp_schema_add_namespace(st->schema, json_string_value(ns)) < 0) {
		err = "invalid schema namespace";
	} else {
		const char *tool, *fname;
		json_t *fields, *type;
		json_object_foreach(actions, tool, fields) {
			int r = json_is_object(fields)
					? bp_schema_add_action(st->schema, json_string_value(ns), tool)
					: -EINVAL;
			if ((r < 0 && r != -EEXIST) ||
			    declare_tool(st, json_string_value(ns), tool) < 0) {
				err = "each action of a schema line maps field names to types";
				break;
			}
			json_object_foreach(fields, fname, type) {
				char name[256];
				size_t n = strlen(fname);
				bool opt = n > 0 && fname[n - 1] == '?';
				if (!json_is_string(type) || n - opt >= sizeof(name)) {
					err = "a field type must be a string";
					break;
				}
				memcpy(name, fname, n - opt);
				name[n - opt] = 0;
				r = bp_schema_add_field(st->schema, json_string_value(ns), tool, name,
							json_string_value(type), opt);
				if (r < 0 && r != -EEXIST) {
					err = "invalid field type (Long, String, Bool, Set<T>, "
					      "{a: T, b?: T})";
					break;
				}
			}
			if (err)
				break;
		}
	}
	json_decref(obj);
	if (err)
		return err;
	struct bp_policy *np = NULL;
	struct bp_diags *d = NULL;
	int r = bp_policy_reload(st->policy, st->schema, &np, &d);
	if (r < 0) {
		const char *m = bp_diag_message(d, 0, NULL, NULL, NULL);
		(void)snprintf(msg, len, "the schema does not fit the policy: %s",
			       m ? m : strerror(-r));
		bp_diags_free(d);
		return msg;
	}
	bp_diags_free(d);
	struct bp_monitor *nm = NULL;
	r = bp_monitor_migrate(st->mon, np, &nm, NULL); /* frees the old monitor on success */
	if (r < 0) {
		bp_policy_free(np);
		return "cannot move the history to the new schema";
	}
	st->mon = nm;
	bp_policy_free(st->policy);
	st->policy = np;
	return bind_policy(st) < 0 ? "out of memory" : NULL;
}

enum key {
	K_OTHER, K_TIME, K_TIME_NS, K_BOX, K_ID, K_ACTION, K_RESOURCE, K_VERDICT, K_CAUSE,
	K_RULES, K_RECORD, K_INPUT, K_OUTPUT, K_SCHEMA, K_SEAL,
};

static enum key
key_of(const char *k, size_t n)
{
	switch (n) {
	case 2: return memcmp(k, "id", 2) == 0 ? K_ID : K_OTHER;
	case 3: return memcmp(k, "box", 3) == 0 ? K_BOX : K_OTHER;
	case 4:
		return memcmp(k, "time", 4) == 0 ? K_TIME
		     : memcmp(k, "seal", 4) == 0 ? K_SEAL : K_OTHER;
	case 5:
		return memcmp(k, "input", 5) == 0 ? K_INPUT
		     : memcmp(k, "cause", 5) == 0 ? K_CAUSE
		     : memcmp(k, "rules", 5) == 0 ? K_RULES : K_OTHER;
	case 6:
		return memcmp(k, "action", 6) == 0 ? K_ACTION
		     : memcmp(k, "record", 6) == 0 ? K_RECORD
		     : memcmp(k, "output", 6) == 0 ? K_OUTPUT
		     : memcmp(k, "schema", 6) == 0 ? K_SCHEMA : K_OTHER;
	case 7:
		return memcmp(k, "time_ns", 7) == 0 ? K_TIME_NS
		     : memcmp(k, "verdict", 7) == 0 ? K_VERDICT : K_OTHER;
	case 8: return memcmp(k, "resource", 8) == 0 ? K_RESOURCE : K_OTHER;
	default: return K_OTHER;
	}
}

/*
 * One line (NUL-terminated, LEN bytes, modified). TRUNCATED: the file ended
 * without its newline. Every refusal is reported here.
 */
static void
replay_line(struct replay *st, const char *file, unsigned lineno, char *line, size_t len,
	    bool truncated)
{
	struct jr c = { .p = line, .end = line + len, .start = line };
	struct logline l = { 0 };
	const char *field_problem = NULL;
	bool action_set = false, input_done = false, output_done = false;
	unsigned seen = 0;
	bool copied = false; /* st->copy holds this line's text */
	enum bp_event_kind kind = BP_EVENT_REQUEST;
	char msg[300];

	/*
	 * A control line (a policy reload): no decision to replay; the replay decides
	 * every line with the one policy it was given. Quotes inside a JSON string are
	 * escaped, so this text is only ever the key and its value.
	 */
	if (memmem(line, len, "\"control\":\"policy.reload\"", 25))
		return;
	/* A schema line is rare: jansson reads those, from a copy of the text. */
	if (memmem(line, len, "\"schema\"", 8)) {
		if (len + 1 > st->copy_cap) {
			char *n = realloc(st->copy, len + 1);
			if (!n) {
				refuse(st, file, lineno, "", "out of memory");
				return;
			}
			st->copy = n;
			st->copy_cap = len + 1;
		}
		memcpy(st->copy, line, len + 1);
		copied = true;
	}
	if (!jr_eat(&c, '{')) {
		jr_fail(&c, "expected an object");
		goto bad;
	}
	if (!jr_eat(&c, '}')) {
		do {
			char *k;
			size_t kn;
			if (!jr_string(&c, &k, &kn, false))
				goto bad;
			if (!jr_eat(&c, ':')) {
				jr_fail(&c, "expected ':'");
				goto bad;
			}
			enum key key = key_of(k, kn);
			if (key != K_OTHER) {
				if (seen & (1u << key)) {
					(void)snprintf(c.err, sizeof(c.err), "\"%s\" appears twice", k);
					goto bad;
				}
				seen |= 1u << key;
			}
			char **str = NULL;
			size_t n;
			switch (key) {
			case K_TIME: str = &l.time; break;
			case K_BOX: str = &l.box; break;
			case K_ID: str = &l.id; break;
			case K_ACTION: str = &l.action; break;
			case K_VERDICT: str = &l.verdict; break;
			case K_CAUSE: str = &l.cause; break;
			case K_RECORD: str = &l.record; break;
			case K_RESOURCE:
				if (!jr_string(&c, &l.resource, &l.resource_len, false))
					goto bad;
				continue;
			case K_TIME_NS: {
				enum num_kind nk;
				if (!jr_number(&c, &l.time_ns, &nk))
					goto bad;
				if (nk != NUM_INT) {
					(void)snprintf(c.err, sizeof(c.err), "%s",
						       nk == NUM_BIG ? "\"time_ns\" is out of range"
								    : "\"time_ns\" must be an integer");
					goto bad;
				}
				l.have_time_ns = true;
				continue;
			}
			case K_RULES: {
				jr_ws(&c);
				char *s0 = c.p;
				if (c.p >= c.end || *c.p != '[') {
					jr_fail(&c, "\"rules\" must be an array");
					goto bad;
				}
				if (!jr_skip(&c, 1))
					goto bad;
				l.rules = s0;
				l.rules_len = (size_t)(c.p - s0);
				continue;
			}
			case K_INPUT:
			case K_OUTPUT:
				jr_ws(&c);
				if (!action_set) {
					/* before "action": read it once the action is known */
					char **at = key == K_INPUT ? &l.input : &l.output;
					*at = c.p;
					if (!jr_skip(&c, 1))
						goto bad;
					continue;
				}
				if (key == K_INPUT) {
					if (!jr_input(&c, l.record ? bp_event_request(st->ev) : st->req,
						      &field_problem))
						goto bad;
					input_done = true;
				} else {
					if (!l.record) {
						if (!jr_skip(&c, 1))
							goto bad;
						continue;
					}
					if (kind == BP_EVENT_ERROR) {
						(void)snprintf(c.err, sizeof(c.err),
							       "an error event has no \"output\"");
						goto bad;
					}
					if (!jr_output(&c, st->ev))
						goto bad;
					output_done = true;
				}
				continue;
			case K_SCHEMA:
				if (!copied) {
					/* "schema" spelled with escapes: not what a schema line looks like */
					(void)snprintf(c.err, sizeof(c.err), "%s",
						       "a schema line's \"schema\" key must be written plainly");
					goto bad;
				}
				{
					const char *why = schema_line(st, st->copy, msg, sizeof(msg));
					if (why)
						refuse(st, file, lineno, "", why);
				}
				return;
			case K_SEAL: /* the end of a run (docs/boxctl.1.md "The chain") */
			case K_OTHER:
			default:
				if (!jr_skip(&c, 1))
					goto bad;
				continue;
			}
			/* a string-valued key */
			if (!jr_string(&c, str, &n, false))
				goto bad;
			if (key == K_RECORD) {
				if (action_set || bp_event_kind_parse(l.record, &kind) < 0 ||
				    kind == BP_EVENT_REQUEST) {
					(void)snprintf(c.err, sizeof(c.err), "%s",
						       action_set
							       ? "\"record\" must come before \"action\""
							       : "\"record\" must be \"response\" or "
								 "\"error\"");
					goto bad;
				}
			}
			if (key == K_ACTION) {
				/* From here on the input fields go straight into the request. */
				action_set = true;
				int r;
				if (l.record) {
					bp_event_reset(st->ev);
					bp_event_set_kind(st->ev, kind);
					r = bp_request_set_action(bp_event_request(st->ev), l.action);
				} else {
					bp_request_reset(st->req);
					r = bp_request_set_action(st->req, l.action);
				}
				if (is_tool_action(l.action) && (r == -ENOENT || !tool_declared(st, l.action))) {
					/* Tools come from schema lines: one never declared is gone. */
					field_problem = "no schema line declares this tool";
				} else if (r < 0) {
					(void)snprintf(c.err, sizeof(c.err), "unknown action \"%.100s\"",
						       l.action);
					goto bad;
				}
			}
		} while (jr_eat(&c, ','));
		if (!jr_eat(&c, '}')) {
			jr_fail(&c, "expected ',' or '}'");
			goto bad;
		}
	}
	jr_ws(&c);
	if (c.p != c.end) {
		jr_fail(&c, "text after the object");
		goto bad;
	}
	/* A seal line (docs/boxctl.1.md "The chain") is no event: nothing to replay. */
	if (!l.action && (seen & (1u << K_SEAL)))
		return;
	if (!l.action) {
		(void)snprintf(c.err, sizeof(c.err), "no \"action\": not a decision line");
		goto bad;
	}
	if (!l.record && !l.verdict) {
		(void)snprintf(c.err, sizeof(c.err), "no \"verdict\": not a decision line");
		goto bad;
	}
	bool old_permit = l.verdict && strcmp(l.verdict, "permit") == 0;
	if (!l.record && !old_permit && strcmp(l.verdict, "deny") != 0) {
		(void)snprintf(c.err, sizeof(c.err), "\"verdict\" must be \"permit\" or \"deny\"");
		goto bad;
	}
	/*
	 * Which box: one box per replay; lines of other runs are skipped when
	 * asked by ID. box-sh standalone writes "box":"" (no box): not checked.
	 */
	if (l.box && l.box[0]) {
		if (!st->box[0]) {
			(void)snprintf(st->box, sizeof(st->box), "%s", l.box);
		} else if (strcmp(st->box, l.box) != 0) {
			(void)snprintf(msg, sizeof(msg), "a line of box '%.64s'%s%.16s%s in a log "
				       "of box '%.64s' (one box per replay)",
				       l.box, l.id ? " (run " : "", l.id ? l.id : "", l.id ? ")" : "",
				       st->box);
			refuse(st, file, lineno, "", msg);
			return;
		}
	}
	if (st->run_id && (!l.id || strcmp(l.id, st->run_id) != 0))
		return;
	if (!l.have_time_ns) {
		if (!l.time || ph_rfc3339_to_ns(l.time, &l.time_ns) < 0) {
			(void)snprintf(c.err, sizeof(c.err), "%s",
				       l.time ? "\"time\" is not an RFC 3339 time"
					      : "no \"time_ns\" or \"time\"");
			goto bad;
		}
	}
	/* "input"/"output" that came before "action": their turn now. */
	struct bp_request *target = l.record ? bp_event_request(st->ev) : st->req;
	if (l.input && !input_done) {
		struct jr c2 = { .p = l.input, .end = line + len, .start = line };
		if (!jr_input(&c2, target, &field_problem)) {
			memcpy(c.err, c2.err, sizeof(c.err));
			goto bad;
		}
	}
	if (l.record && l.output && !output_done) {
		if (kind == BP_EVENT_ERROR) {
			(void)snprintf(c.err, sizeof(c.err), "an error event has no \"output\"");
			goto bad;
		}
		struct jr c2 = { .p = l.output, .end = line + len, .start = line };
		if (!jr_output(&c2, st->ev)) {
			memcpy(c.err, c2.err, sizeof(c.err));
			goto bad;
		}
	}
	bool tool = is_tool_action(l.action);
	if (l.record) {
		bp_event_set_time(st->ev, l.time_ns);
		const char *problem = field_problem ? field_problem : bp_event_problem(st->ev);
		if (problem) {
			if (tool)
				return; /* its tool is gone: no rule can see it (as policyd's replay) */
			refuse(st, file, lineno, "an outcome that does not fit the schema: ",
			       problem);
			return;
		}
		if (bp_monitor_observe(st->mon, st->ev, NULL) < 0)
			refuse(st, file, lineno, "", "the event cannot be recorded");
		return;
	}
	st->decisions++;
	if (tool && !field_problem)
		field_problem = bp_request_problem(st->req);
	if (field_problem && tool) {
		/* The tool is not listed any more, or its arguments no longer fit its schema. */
		st->schema_gone++;
		print_change(st, file, lineno, &l, field_problem);
		return;
	}
	if (field_problem) {
		/* A fixed action's field the request refused: the line is not what policyd wrote. */
		refuse(st, file, lineno, "", field_problem);
		st->decisions--;
		return;
	}
	int r = bp_monitor_decide(st->mon, st->req, l.time_ns, st->dec, NULL);
	if (r < 0 && r != -EINVAL) {
		refuse(st, file, lineno, "", "the request cannot be recorded (out of memory)");
		return;
	}
	bool now_permit = bp_decision_verdict(st->dec) == BP_PERMIT;
	if (now_permit == old_permit) {
		st->unchanged++;
		return;
	}
	if (now_permit)
		st->now_permitted++;
	else
		st->now_denied++;
	print_change(st, file, lineno, &l, NULL);
	return;
bad:
	if (truncated)
		refuse(st, file, lineno, "truncated last line (the file ends without its newline): ",
		       c.err[0] ? c.err : "not JSON");
	else
		refuse(st, file, lineno, "", c.err[0] ? c.err : "not JSON");
}

/* Every line of FD (FILE names it in messages), streamed in blocks. */
static int
replay_fd(struct replay *st, int fd, const char *file)
{
	size_t cap = REPLAY_BLOCK + 1, have = 0;
	char *buf = malloc(cap);
	unsigned lineno = 0;
	bool skipping = false; /* inside a line longer than the cap */
	int r = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(fd, buf + have, cap - 1 - have);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		have += (size_t)n;
		char *p = buf, *end = buf + have;
		for (;;) {
			char *nl = memchr(p, '\n', (size_t)(end - p));
			if (!nl)
				break;
			*nl = '\0';
			if (skipping) {
				skipping = false; /* the rest of an over-long line, already refused */
			} else {
				lineno++;
				size_t len = (size_t)(nl - p);
				if (len > REPLAY_LINE_MAX)
					refuse(st, file, lineno, "", "line too long (over 1 MiB)");
				else if (strspn(p, " \t\r") != len)
					replay_line(st, file, lineno, p, len, false);
			}
			p = nl + 1;
		}
		have = (size_t)(end - p);
		memmove(buf, p, have);
		if (have >= cap - 1) {
			/* No newline in a whole block: a line over the cap. */
			if (!skipping) {
				lineno++;
				refuse(st, file, lineno, "", "line too long (over 1 MiB)");
			}
			skipping = true;
			have = 0;
		}
	}
	if (r == 0 && have > 0 && !skipping) {
		buf[have] = '\0';
		lineno++;
		if (strspn(buf, " \t\r") != have)
			replay_line(st, file, lineno, buf, have, true);
	}
	free(buf);
	return r;
}

static const char *
default_home(void)
{
	struct passwd *pw = getpwuid(getuid());
	if (pw && pw->pw_dir && pw->pw_dir[0] == '/')
		return pw->pw_dir;
	const char *h = getenv("HOME");
	return h && h[0] == '/' ? h : NULL;
}

static char *
read_policy(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (n == cap) {
			if (cap > BP_MAX_POLICY_BYTES) {
				free(buf);
				buf = NULL;
				errno = EFBIG;
				break;
			}
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		size_t k = fread(buf + n, 1, cap - n, f);
		n += k;
		if (k == 0) {
			if (ferror(f)) {
				free(buf);
				buf = NULL;
				errno = EIO;
			}
			break;
		}
	}
	fclose(f);
	*len = n;
	return buf;
}

static bool
is_log_path(const char *a)
{
	return strcmp(a, "-") == 0 || strchr(a, '/') || strchr(a, '.');
}

static int
usage(FILE *f)
{
	fprintf(f, "usage: boxctl policy replay [--home DIR] [--json] POLICY NAME|ID|LOG...\n");
	return f == stdout ? BOXCTL_EXIT_OK : BOXCTL_EXIT_USAGE;
}

int
cmd_policy_replay(int argc, char **argv)
{
	const char *home = NULL, *file = NULL;
	struct replay st = { 0 };
	const char **logs = calloc((size_t)argc + 1, sizeof(*logs));
	size_t n_logs = 0;
	int rc = BOXCTL_EXIT_FAILURE;

	if (!logs)
		return BOXCTL_EXIT_FAILURE;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			free(logs);
			return usage(stdout);
		}
		if (strcmp(argv[i], "--home") == 0 && i + 1 < argc)
			home = argv[++i];
		else if (strcmp(argv[i], "--json") == 0)
			st.json = true;
		else if (argv[i][0] == '-' && argv[i][1] != 0) {
			free(logs);
			return usage(stderr);
		} else if (!file)
			file = argv[i];
		else
			logs[n_logs++] = argv[i];
	}
	if (!file || n_logs == 0) {
		free(logs);
		return usage(stderr);
	}
	for (size_t i = 0; i < n_logs; i++) {
		if (!is_log_path(logs[i]) && !box_valid_name(logs[i]) && !box_valid_box_id(logs[i])) {
			fprintf(stderr, "boxctl: error: '%s' is neither a box name, a box id nor a "
					"log file (a path holds '/' or '.')\n", logs[i]);
			free(logs);
			return BOXCTL_EXIT_USAGE;
		}
	}
	if (!home)
		home = default_home();

	size_t len;
	char *text = read_policy(file, &len);
	if (!text) {
		fprintf(stderr, "boxctl: error: %s: %s\n", file, strerror(errno));
		free(logs);
		return BOXCTL_EXIT_FAILURE;
	}
	if (bp_schema_new(&st.schema) < 0 || bp_decision_new(&st.dec) < 0)
		goto out;
	struct bp_load_options o = {
		.home = home, .schema = st.schema, .allow_unknown_namespaces = true
	};
	struct bp_diags *d = NULL;
	int r = bp_policy_load(text, len, &o, &st.policy, &d);
	if (r == 0)
		r = bp_monitor_new(st.policy, &st.mon, &d);
	for (size_t i = 0; i < bp_diags_count(d); i++) {
		enum bp_severity sev;
		unsigned line, col;
		const char *m = bp_diag_message(d, i, &sev, &line, &col);
		fprintf(stderr, "boxctl: %s:%u:%u: %s: %s\n", file, line, col,
			sev == BP_ERROR ? "error" : "warning", m);
	}
	bp_diags_free(d);
	if (r == -EINVAL) {
		rc = BOXCTL_EXIT_USAGE;
		goto out;
	}
	if (r < 0 || bind_policy(&st) < 0) {
		fprintf(stderr, "boxctl: error: %s: %s\n", file, strerror(r < 0 ? -r : ENOMEM));
		goto out;
	}
	static char outbuf[1 << 16];
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));

	for (size_t i = 0; i < n_logs; i++) {
		const char *what = logs[i];
		if (is_log_path(what)) {
			int fd = strcmp(what, "-") == 0 ? 0 : open(what, O_RDONLY | O_CLOEXEC | O_NOCTTY);
			if (fd < 0) {
				fprintf(stderr, "boxctl: error: %s: %s\n", what, strerror(errno));
				goto out;
			}
			st.run_id = NULL;
			r = replay_fd(&st, fd, strcmp(what, "-") == 0 ? "stdin" : what);
			if (fd > 0)
				close(fd);
			if (r < 0) {
				fprintf(stderr, "boxctl: error: %s: %s\n", what, strerror(-r));
				goto out;
			}
			continue;
		}
		struct boxlog_files lf;
		char *err = NULL;
		r = boxlog_open(what, &lf, &err);
		if (r < 0) {
			if (r == -ENOENT)
				fprintf(stderr, "boxctl: error: no decisions of a box '%s' (no boxd runs "
						"it and no state dir of this user holds its log)\n",
					what);
			else
				fprintf(stderr, "boxctl: error: %s: %s\n", what,
					err ? err : strerror(-r));
			free(err);
			goto out;
		}
		/* Asked by name: that box's lines only, whatever came first. */
		if (box_valid_name(what) && !lf.run_id[0] && !st.box[0])
			(void)snprintf(st.box, sizeof(st.box), "%s", what);
		st.run_id = lf.run_id[0] ? lf.run_id : NULL;
		for (int k = 0; k < 2 && r >= 0; k++)
			if (lf.fd[k] >= 0 && (r = replay_fd(&st, lf.fd[k], lf.path[k])) < 0)
				fprintf(stderr, "boxctl: error: %s: %s\n", lf.path[k], strerror(-r));
		st.run_id = NULL;
		boxlog_close(&lf);
		if (r < 0)
			goto out;
	}

	if (st.json) {
		printf("{\"decisions\":%lu,\"now_denied\":%lu,\"now_permitted\":%lu,\"unchanged\":%lu,"
		       "\"schema_gone\":%lu,\"refused_lines\":%lu}\n",
		       st.decisions, st.now_denied, st.now_permitted, st.unchanged, st.schema_gone,
		       st.refused);
	} else {
		printf("%lu decision%s, %lu now denied, %lu now permitted, %lu unchanged",
		       st.decisions, st.decisions == 1 ? "" : "s", st.now_denied, st.now_permitted,
		       st.unchanged);
		if (st.schema_gone)
			printf(", %lu whose schema is gone", st.schema_gone);
		putchar('\n');
	}
	fflush(stdout);
	if (st.refused) {
		fprintf(stderr, "boxctl: error: %lu line%s refused (see above); the replay is "
				"incomplete\n",
			st.refused, st.refused == 1 ? "" : "s");
		rc = BOXCTL_EXIT_USAGE;
	} else {
		rc = st.now_denied || st.now_permitted || st.schema_gone ? REPLAY_EXIT_CHANGED
									   : BOXCTL_EXIT_OK;
	}
out:
	fflush(stdout);
	free(text);
	free(logs);
	free(st.copy);
	for (size_t i = 0; i < st.n_tools; i++)
		free(st.tools[i]);
	free(st.tools);
	bp_event_free(st.ev);
	bp_request_free(st.req);
	bp_monitor_free(st.mon);
	bp_policy_free(st.policy);
	bp_decision_free(st.dec);
	bp_schema_free(st.schema);
	return rc;
}
