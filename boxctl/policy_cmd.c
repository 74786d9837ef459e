/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_cmd.c — `boxctl policy check` and `boxctl policy eval` (docs/box-policy.5.md
 * §6): validate a policy file, or decide JSON-line requests offline; and `boxctl policy
 * reload NAME|ID [FILE]` (docs/boxctl.1.md): read and check FILE as the caller, then
 * ask the boxd that runs the box to put it in force (boxd checks who asks, box-policyd
 * loads it again: neither trusts this check).
 *
 * Temporal policies (§4) are decided observe-then-decide through a monitor;
 * `--history F` replays F into it first (see cmd_policy_eval). `--explain`
 * adds, after each decision, bp_explain's account of it (lines "# …", or a
 * field "explain" with --json), computed right after the decision so that
 * temporal terms see the same last event.
 *
 * Runs as the calling user on the user's own files. Trusts nothing it reads:
 * the policy goes through libboxpolicy's loader, every input line is parsed
 * and checked (a malformed line gets an error line, evaluation goes on), and
 * lines and files are capped in size.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "boxpolicy.h"
#include "boxpolicy_temporal.h"
#include "cleanup.h"
#include "client.h"
#include "commands.h"
#include "policy_history.h"
#include "policy_reload.h"
#include "policy_replay.h"

#define POLICY_FILE_MAX BP_MAX_POLICY_BYTES
#define LINE_MAX_BYTES (1u << 20)

struct eval_state {
	struct bp_policy *policy;
	struct bp_schema *schema;
	struct bp_monitor *mon;
	struct ph_state ph; /* the clock and the line parser, bound to mon */
	struct bp_decision *dec;
	const char *home;
	unsigned history_errors;
	struct bp_explain *explain; /* --explain: each decision's explanation */
	bool explain_json;          /* --json: in the decision's line (field "explain") */
};

static int
read_file(const char *path, char **ret, size_t *ret_len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
	if (!f)
		return -errno;
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	int r = 0;
	if (!buf) {
		r = -ENOMEM;
		goto out;
	}
	for (;;) {
		if (len == cap) {
			if (cap >= POLICY_FILE_MAX + 1) {
				r = -EFBIG;
				goto out;
			}
			cap *= 2;
			char *nb = realloc(buf, cap);
			if (!nb) {
				r = -ENOMEM;
				goto out;
			}
			buf = nb;
		}
		size_t n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0) {
			if (ferror(f))
				r = -EIO;
			break;
		}
	}
	if (len > POLICY_FILE_MAX)
		r = -EFBIG;
out:
	if (f != stdin)
		fclose(f);
	if (r < 0) {
		free(buf);
		return r;
	}
	*ret = buf;
	*ret_len = len;
	return 0;
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

static void
print_diags(const char *file, const struct bp_diags *d)
{
	for (size_t i = 0; i < bp_diags_count(d); i++) {
		enum bp_severity sev;
		unsigned line, col;
		const char *msg = bp_diag_message(d, i, &sev, &line, &col);
		fprintf(stderr, "boxctl: %s:%u:%u: %s: %s\n", file, line, col,
			sev == BP_ERROR ? "error" : "warning", msg);
	}
}

/*
 * A schema line: {"schema":"NS","actions":{"tool":{"a":"Long","opt?":"String"}}}.
 * Returns 0, or -EINVAL with *err set.
 */
static int
add_schema_json(struct bp_schema *s, json_t *obj, const char **err)
{
	json_t *ns = json_object_get(obj, "schema");
	json_t *actions = json_object_get(obj, "actions");
	if (!json_is_string(ns) || !json_is_object(actions)) {
		*err = "a schema line needs \"schema\" (a string) and \"actions\" (an object)";
		return -EINVAL;
	}
	if (bp_schema_add_namespace(s, json_string_value(ns)) < 0) {
		*err = "invalid schema namespace";
		return -EINVAL;
	}
	const char *tool;
	json_t *fields;
	json_object_foreach(actions, tool, fields) {
		if (!json_is_object(fields)) {
			*err = "each action of a schema line maps field names to types";
			return -EINVAL;
		}
		int r = bp_schema_add_action(s, json_string_value(ns), tool);
		if (r < 0 && r != -EEXIST) {
			*err = "invalid tool name";
			return -EINVAL;
		}
		const char *fname;
		json_t *type;
		json_object_foreach(fields, fname, type) {
			if (!json_is_string(type)) {
				*err = "a field type must be a string";
				return -EINVAL;
			}
			char name[1100];
			size_t n = strlen(fname);
			bool opt = n > 0 && fname[n - 1] == '?';
			if (n - opt >= sizeof(name)) {
				*err = "field name too long";
				return -EINVAL;
			}
			memcpy(name, fname, n - opt);
			name[n - opt] = 0;
			r = bp_schema_add_field(s, json_string_value(ns), tool, name,
						json_string_value(type), opt);
			if (r < 0 && r != -EEXIST) {
				*err = "invalid field type (Long, String, Bool, Set<T>, {a: T, b?: T})";
				return -EINVAL;
			}
		}
	}
	return 0;
}

static int
load_schema_file(const char *path, struct bp_schema *s)
{
	char *text;
	size_t len;
	int r = read_file(path, &text, &len);
	if (r < 0) {
		fprintf(stderr, "boxctl: error: %s: %s\n", path, strerror(-r));
		return r;
	}
	unsigned lineno = 0;
	char *save = NULL;
	r = 0;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		if (strspn(line, " \t\r") == strlen(line))
			continue;
		json_error_t je;
		json_t *obj = json_loads(line, JSON_REJECT_DUPLICATES, &je);
		const char *err = "not a JSON object";
		if (!json_is_object(obj) || add_schema_json(s, obj, &err) < 0) {
			fprintf(stderr, "boxctl: %s:%u: error: %s\n", path, lineno,
				obj ? err : je.text);
			r = -EINVAL;
		}
		json_decref(obj);
	}
	free(text);
	return r;
}

static bool
is_help(const char *a)
{
	return strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0;
}

static int
cmd_policy_check(int argc, char **argv)
{
	const char *home = NULL, *schema_file = NULL, *file = NULL;
	for (int i = 1; i < argc; i++) {
		if (is_help(argv[i])) {
			printf("usage: boxctl policy check [--home DIR] [--schema F] POLICY\n");
			return BOXCTL_EXIT_OK;
		}
		if (strcmp(argv[i], "--home") == 0 && i + 1 < argc)
			home = argv[++i];
		else if (strcmp(argv[i], "--schema") == 0 && i + 1 < argc)
			schema_file = argv[++i];
		else if (argv[i][0] == '-' && argv[i][1] != 0)
			goto usage;
		else if (!file)
			file = argv[i];
		else
			goto usage;
	}
	if (!file)
		goto usage;
	if (!home)
		home = default_home();

	struct bp_schema *schema = NULL;
	if (bp_schema_new(&schema) < 0) {
		fprintf(stderr, "boxctl: error: out of memory\n");
		return BOXCTL_EXIT_FAILURE;
	}
	if (schema_file && load_schema_file(schema_file, schema) < 0) {
		bp_schema_free(schema);
		return BOXCTL_EXIT_USAGE;
	}
	char *text;
	size_t len;
	int r = read_file(file, &text, &len);
	if (r < 0) {
		fprintf(stderr, "boxctl: error: %s: %s\n", file, strerror(-r));
		bp_schema_free(schema);
		return BOXCTL_EXIT_FAILURE;
	}
	struct bp_load_options o = {
		.home = home, .schema = schema, .allow_unknown_namespaces = true
	};
	struct bp_policy *p = NULL;
	struct bp_diags *d = NULL;
	r = bp_policy_load(text, len, &o, &p, &d);
	free(text);
	print_diags(file, d);
	bp_diags_free(d);
	size_t n_rules = r == 0 ? bp_policy_rule_count(p) : 0;
	bp_policy_free(p);
	bp_schema_free(schema);
	if (r == -EINVAL)
		return BOXCTL_EXIT_USAGE;
	if (r < 0) {
		fprintf(stderr, "boxctl: error: %s: %s\n", file, strerror(-r));
		return BOXCTL_EXIT_FAILURE;
	}
	/* the one line of success (docs/boxctl.1.md): warnings, if any, went to stderr above */
	printf("%zu rule%s loaded\n", n_rules, n_rules == 1 ? "" : "s");
	return BOXCTL_EXIT_OK;
usage:
	fprintf(stderr, "usage: boxctl policy check [--home DIR] [--schema F] POLICY\n");
	return BOXCTL_EXIT_USAGE;
}

static void
print_error_line(unsigned lineno, const char *msg)
{
	char buf[1400];
	snprintf(buf, sizeof(buf), "line %u: %s", lineno, msg);
	json_t *o = json_pack("{s:s}", "error", buf);
	char *s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	if (s)
		printf("%s\n", s);
	free(s);
	json_decref(o);
}

/* An event's time, RFC 3339 UTC with nanoseconds. */
static void
format_ns(int64_t ns, char *buf, size_t size)
{
	time_t secs = (time_t)(ns / 1000000000LL);
	long frac = (long)(ns % 1000000000LL);
	if (frac < 0) {
		frac += 1000000000L;
		secs--;
	}
	struct tm tm;
	if (!gmtime_r(&secs, &tm)) {
		snprintf(buf, size, "%lld ns", (long long)ns);
		return;
	}
	char day[40];
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%09ldZ", day, frac);
}

/* The explanation as JSON (docs/box-policy.5.md, docs/boxctl.1.md "policy eval --explain"). */
static json_t *
explain_json(const struct bp_explain *x)
{
	json_t *o = json_object();
	json_t *rules = json_array();
	if (!o || !rules) {
		json_decref(o);
		json_decref(rules);
		return NULL;
	}
	const char *problem = bp_explain_problem(x);
	json_object_set_new(o, "problem", problem ? json_string(problem) : json_null());
	for (size_t i = 0; i < bp_explain_rule_count(x); i++) {
		const struct bp_explain_rule *r = bp_explain_rule_at(x, i);
		json_t *clauses = json_array();
		for (size_t c = 0; clauses && c < r->n_clauses; c++) {
			const struct bp_explain_clause *cl = &r->clauses[c];
			json_t *notes = json_array(), *events = json_array();
			for (size_t k = 0; notes && k < cl->n_notes; k++)
				json_array_append_new(notes, json_string(cl->notes[k]));
			for (size_t k = 0; events && k < cl->n_events; k++) {
				const struct bp_explain_event *e = &cl->events[k];
				char t[64];
				format_ns(e->time_ns, t, sizeof(t));
				json_array_append_new(events,
						      json_pack("{s:s,s:I,s:s,s:s,s:s,s:s}", "time", t,
								"time_ns", (json_int_t)e->time_ns,
								"kind", e->kind, "action", e->action,
								"fields", e->fields, "role", e->role));
			}
			json_array_append_new(
				clauses,
				json_pack("{s:I,s:s,s:b,s:s,s:s,s:I,s:I,s:s,s:s,s:o,s:o}", "clause",
					  (json_int_t)cl->index, "kind", cl->unless ? "unless" : "when",
					  "temporal", cl->temporal, "value",
					  bp_explain_value_str(cl->value), "at", cl->at, "line",
					  (json_int_t)cl->at_line, "col", (json_int_t)cl->at_col,
					  "at_value", bp_explain_value_str(cl->at_value), "detail",
					  cl->detail ? cl->detail : "", "notes",
					  notes ? notes : json_array(), "events",
					  events ? events : json_array()));
		}
		json_array_append_new(
			rules, json_pack("{s:s,s:s,s:I,s:s,s:s,s:o}", "rule", r->name, "effect",
					 r->forbid ? "forbid" : "permit", "line", (json_int_t)r->line,
					 "outcome", bp_explain_outcome_str(r->outcome), "text", r->text,
					 "clauses", clauses ? clauses : json_array()));
	}
	json_object_set_new(o, "rules", rules);
	return o;
}

/* The explanation as text: lines starting with "# " after the decision's line. */
static void
explain_text(const struct bp_explain *x, const char *action)
{
	const char *problem = bp_explain_problem(x);
	if (problem) {
		printf("# explain: no rule was evaluated: %s\n", problem);
		return;
	}
	if (!bp_explain_rule_count(x))
		printf("# explain: no rule names action %s (denied by default)\n", action);
	for (size_t i = 0; i < bp_explain_rule_count(x); i++) {
		const struct bp_explain_rule *r = bp_explain_rule_at(x, i);
		printf("# explain: %s\n", r->text);
		for (size_t c = 0; c < r->n_clauses; c++) {
			const struct bp_explain_clause *cl = &r->clauses[c];
			if (c + 1 < r->n_clauses || r->n_clauses > 1)
				printf("#   %s clause %u (line %u): %s at `%s`\n",
				       cl->unless ? "unless" : "when", cl->index, cl->at_line,
				       bp_explain_value_str(cl->value), cl->at);
			for (size_t k = 0; k < cl->n_notes; k++)
				printf("#   %s\n", cl->notes[k]);
			for (size_t k = 0; k < cl->n_events; k++) {
				const struct bp_explain_event *e = &cl->events[k];
				char t[64];
				format_ns(e->time_ns, t, sizeof(t));
				printf("#   event %s %s %s %s: %s\n", t, e->kind, e->action, e->fields,
				       e->role);
			}
		}
	}
}

static void
print_decision(unsigned lineno, const struct bp_decision *dec, const struct bp_explain *x,
	       bool x_json, const char *action)
{
	json_t *rules = json_array();
	for (size_t i = 0; rules && i < bp_decision_rule_count(dec); i++)
		json_array_append_new(rules, json_string(bp_decision_rule_name(dec, i)));
	json_t *out = rules ? json_pack("{s:s,s:s,s:o,s:s}", "verdict",
					bp_verdict_str(bp_decision_verdict(dec)), "cause",
					bp_cause_str(bp_decision_cause(dec)), "rules", rules,
					"message", bp_decision_message(dec))
			    : NULL;
	if (out && x && x_json) {
		json_t *xj = explain_json(x);
		if (!xj || json_object_set_new(out, "explain", xj) < 0) {
			json_decref(out);
			out = NULL;
		}
	}
	char *s = out ? json_dumps(out, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	if (s)
		printf("%s\n", s);
	else
		print_error_line(lineno, "cannot encode the decision");
	free(s);
	json_decref(out);
	if (x && !x_json)
		explain_text(x, action);
}

/*
 * A schema line: add it to the schema, re-validate the policy against it and
 * move the monitor's state to the new policy (rules are unchanged, so they
 * keep their events). The clock carries over. NULL, or why not (in MSG).
 */
static const char *
eval_schema_line(struct eval_state *st, const char *line, char *msg, size_t msg_len)
{
	json_error_t je;
	const char *err = NULL;
	json_t *obj = json_loads(line, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(obj) || add_schema_json(st->schema, obj, &err) < 0) {
		json_decref(obj);
		return err ? err : "not a JSON object";
	}
	json_decref(obj);

	struct bp_policy *np = NULL;
	struct bp_diags *d = NULL;
	int r = bp_policy_reload(st->policy, st->schema, &np, &d);
	if (r < 0) {
		const char *m = bp_diag_message(d, 0, NULL, NULL, NULL);
		snprintf(msg, msg_len, "the schema does not fit the policy: %s",
			 m ? m : strerror(-r));
		bp_diags_free(d);
		return msg;
	}
	bp_diags_free(d);
	struct bp_monitor *nm = NULL;
	r = bp_monitor_migrate(st->mon, np, &nm, NULL); /* frees the old monitor on success */
	if (r < 0) {
		bp_policy_free(np);
		snprintf(msg, msg_len, "cannot move the history to the new schema: %s",
			 strerror(-r));
		return msg;
	}
	int64_t last_ns = st->ph.last_ns;
	bool have_last = st->ph.have_last;
	ph_done(&st->ph); /* its request is bound to the old policy */
	st->mon = nm;
	bp_policy_free(st->policy);
	st->policy = np;
	r = ph_init(&st->ph, nm);
	st->ph.last_ns = last_ns;
	st->ph.have_last = have_last;
	if (r < 0)
		return "out of memory";
	return NULL;
}

/*
 * One line of PATH. OUTPUT (the input): a request line prints its decision,
 * a malformed line an error line. Not OUTPUT (--history): nothing is
 * printed; a malformed line is reported on stderr as "boxctl: PATH:N: …"
 * and counted in st->history_errors.
 */
static void
eval_line(struct eval_state *st, const char *path, const char *line, unsigned lineno,
	  bool output)
{
	char msg[1200];
	const char *err = NULL;

	int r = st->ph.req ? ph_line(&st->ph, line, output ? st->dec : NULL, msg, sizeof(msg))
			   : -ENOMEM;
	if (r == 1) {
		bool explained = false;
		char action[256] = "";
		if (st->explain && output) {
			/* right after the decision: temporal terms see the same last event */
			struct bp_temporal_hook hook = bp_monitor_hook(st->mon);
			int rx = bp_explain(st->policy, st->ph.req, &hook, st->explain);
			explained = rx == 0;
			json_t *o = json_loads(line, 0, NULL);
			snprintf(action, sizeof(action), "%s",
				 json_string_value(json_object_get(o, "action")) ?: "?");
			json_decref(o);
			if (rx < 0)
				print_error_line(lineno, "cannot explain the decision (out of memory)");
		}
		print_decision(lineno, st->dec, explained ? st->explain : NULL, st->explain_json,
			       action);
		return;
	}
	if (r == 0)
		return;
	if (r == -ENOTSUP)
		err = eval_schema_line(st, line, msg, sizeof(msg));
	else if (r == -ENOMEM || !st->ph.req)
		err = "out of memory";
	else
		err = msg;
	if (!err)
		return;
	if (output) {
		print_error_line(lineno, err);
	} else {
		fprintf(stderr, "boxctl: %s:%u: %s\n", path, lineno, err);
		st->history_errors++;
	}
}

static int
eval_stream(struct eval_state *st, const char *path, bool output)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
	if (!f) {
		int r = -errno;
		fprintf(stderr, "boxctl: error: %s: %s\n", path, strerror(-r));
		return r;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned lineno = 0;
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = 0;
		const char *err = NULL;
		if ((size_t)n > LINE_MAX_BYTES)
			err = "line too long";
		else if (strspn(line, " \t\r") == (size_t)n)
			continue;
		else if (strlen(line) != (size_t)n)
			err = "NUL byte in line";
		if (!err)
			eval_line(st, path, line, lineno, output);
		else if (output)
			print_error_line(lineno, err);
		else {
			fprintf(stderr, "boxctl: %s:%u: %s\n", path, lineno, err);
			st->history_errors++;
		}
		if (output)
			fflush(stdout);
	}
	int r = ferror(f) ? -EIO : 0;
	free(line);
	if (f != stdin)
		fclose(f);
	if (r < 0)
		fprintf(stderr, "boxctl: error: %s: %s\n", path, strerror(-r));
	return r;
}

/*
 * Every policy is decided through a temporal monitor (bp_monitor_decide:
 * observe the request as an event at its `at`, then decide), so temporal
 * and plain policies share one path and decide exactly as box-policyd does;
 * a policy without temporal terms retains no events. `at` is parsed to the
 * nanosecond (policy_history.c) and must not go backwards across the history
 * and the input.
 *
 * --history F: F's lines (the input format, schema lines included) are
 * replayed before the input, printing nothing. A line of F that is refused
 * is a load refusal, like a policy error: every such line is reported on
 * stderr as "boxctl: F:N: MESSAGE", no input is read and the exit status is
 * 2 (decisions after a silently partial history would be misleading).
 * An F that cannot be read exits 1, as an unreadable input does.
 */
static int
cmd_policy_eval(int argc, char **argv)
{
	const char *home = NULL, *history = NULL, *file = NULL, *input = NULL;
	bool explain = false, json_out = false;
	for (int i = 1; i < argc; i++) {
		if (is_help(argv[i])) {
			printf("usage: boxctl policy eval [--home DIR] [--history F] [--explain [--json]] "
			       "POLICY [REQ|-]\n");
			return BOXCTL_EXIT_OK;
		}
		if (strcmp(argv[i], "--home") == 0 && i + 1 < argc)
			home = argv[++i];
		else if (strcmp(argv[i], "--history") == 0 && i + 1 < argc)
			history = argv[++i];
		else if (strcmp(argv[i], "--explain") == 0)
			explain = true;
		else if (strcmp(argv[i], "--json") == 0)
			json_out = true;
		else if (argv[i][0] == '-' && argv[i][1] != 0)
			goto usage;
		else if (!file)
			file = argv[i];
		else if (!input)
			input = argv[i];
		else
			goto usage;
	}
	if (!file)
		goto usage;
	if (!input)
		input = "-";
	if (history && strcmp(history, "-") == 0 && strcmp(input, "-") == 0) {
		fprintf(stderr, "boxctl: error: --history and the input cannot both be stdin\n");
		return BOXCTL_EXIT_USAGE;
	}
	if (!home)
		home = default_home();

	char *text;
	size_t len;
	int r = read_file(file, &text, &len);
	if (r < 0) {
		fprintf(stderr, "boxctl: error: %s: %s\n", file, strerror(-r));
		return BOXCTL_EXIT_FAILURE;
	}
	struct eval_state st = { .home = home, .explain_json = json_out };
	int rc = BOXCTL_EXIT_FAILURE;
	if (bp_schema_new(&st.schema) < 0 || bp_decision_new(&st.dec) < 0 ||
	    (explain && bp_explain_new(&st.explain) < 0))
		goto out;
	struct bp_load_options o = {
		.home = home, .schema = st.schema, .allow_unknown_namespaces = true
	};
	struct bp_diags *d = NULL;
	r = bp_policy_load(text, len, &o, &st.policy, &d);
	if (r == 0) {
		/* the temporal acceptance rules, reported like any load error */
		r = bp_monitor_new(st.policy, &st.mon, &d);
	}
	print_diags(file, d);
	bp_diags_free(d);
	if (r == -EINVAL) {
		rc = BOXCTL_EXIT_USAGE;
		goto out;
	}
	if (r < 0 || (r = ph_init(&st.ph, st.mon)) < 0) {
		fprintf(stderr, "boxctl: error: %s: %s\n", file, strerror(-r));
		goto out;
	}
	if (history) {
		if (eval_stream(&st, history, false) < 0)
			goto out;
		if (st.history_errors) {
			fprintf(stderr, "boxctl: error: %s: %u line%s refused; nothing decided\n",
				history, st.history_errors, st.history_errors == 1 ? "" : "s");
			rc = BOXCTL_EXIT_USAGE;
			goto out;
		}
	}
	if (eval_stream(&st, input, true) < 0)
		goto out;
	rc = BOXCTL_EXIT_OK;
out:
	free(text);
	ph_done(&st.ph);
	bp_monitor_free(st.mon);
	bp_policy_free(st.policy);
	bp_decision_free(st.dec);
	bp_explain_free(st.explain);
	bp_schema_free(st.schema);
	return rc;
usage:
	fprintf(stderr, "usage: boxctl policy eval [--home DIR] [--history F] [--explain [--json]] "
			"POLICY [REQ|-]\n");
	return BOXCTL_EXIT_USAGE;
}

/*
 * Read FILE as the caller and load it as box-policyd will (MCP namespaces unknown here
 * are allowed: the box's own are checked there). 0 with the text, or an exit code
 * after the error lines (file:line:column).
 */
int
policy_text_check(const char *file, const char *text, size_t len)
{
	struct bp_schema *schema = NULL;
	if (bp_schema_new(&schema) < 0)
		return -ENOMEM;
	struct bp_load_options o = { .home = default_home(), .schema = schema,
				     .allow_unknown_namespaces = true };
	struct bp_policy *p = NULL;
	struct bp_diags *d = NULL;
	int r = bp_policy_load(text, len, &o, &p, &d);
	print_diags(file, d);
	bp_diags_free(d);
	bp_policy_free(p);
	bp_schema_free(schema);
	return r;
}

static int
reload_read(const char *file, char **text, size_t *len)
{
	int r = read_file(file, text, len);
	if (r < 0) {
		fprintf(stderr, "boxctl: error: %s: %s\n", file, strerror(-r));
		return BOXCTL_EXIT_FAILURE;
	}
	r = policy_text_check(file, *text, *len);
	if (r < 0) {
		free(*text);
		fprintf(stderr, "boxctl: error: %s: the policy does not load; the box's policy "
				"stays in force\n", file);
		return r == -EINVAL ? BOXCTL_EXIT_USAGE : BOXCTL_EXIT_FAILURE;
	}
	return 0;
}

/*
 * One boxd (PATH): 1 answered (*RES kept, the caller frees it with box_ipc_msg_done),
 * 0 it runs no such box, negative errno.
 */
static int
reload_ask(const char *path, const char *box, const char *text, size_t len, const char *file,
	   const uint8_t *expect_sha256, struct box_ipc_msg *res, char **err)
{
	_cleanup_close_ int fd = client_connect(path);
	if (fd < 0)
		return 0;
	Box__PolicyReloadRequest q = BOX__POLICY_RELOAD_REQUEST__INIT;
	q.box = (char *)box;
	if (text) {
		q.has_policy_text = true;
		q.policy_text.data = (uint8_t *)text;
		q.policy_text.len = len;
	}
	q.policy_file = (char *)file;
	if (expect_sha256) {
		q.has_expect_sha256 = true;
		q.expect_sha256.data = (uint8_t *)expect_sha256;
		q.expect_sha256.len = 32;
	}
	/* A long history is replayed when a policy gains its first temporal rule. */
	int r = client_call(fd, BOX__MSG_TYPE__MSG_POLICY_RELOAD_REQUEST, &q.base,
			    BOX__MSG_TYPE__MSG_POLICY_RELOAD_RESULT, res, err, 120000);
	if (r < 0)
		return r == -EREMOTEIO ? r : 0;
	if (((const Box__PolicyReloadResult *)res->msg)->status ==
	    BOX__REPLY_STATUS__REPLY_NOT_FOUND) {
		box_ipc_msg_done(res);
		return 0;
	}
	return 1;
}

/* The service's boxd, then this user's embedded ones: the first that runs BOX. */
int
policy_reload_send(const char *box, const char *text, size_t len, const char *file,
		   const uint8_t *expect_sha256, struct box_ipc_msg *res, char **err)
{
	int r = reload_ask(client_service_path(), box, text, len, file, expect_sha256, res, err);
	char **socks = NULL;
	if (r == 0 && client_embedded_sockets(&socks) == 0) {
		for (size_t i = 0; socks[i]; i++) {
			if (r == 0)
				r = reload_ask(socks[i], box, text, len, file, expect_sha256, res,
					       err);
			free(socks[i]);
		}
	}
	free(socks);
	return r;
}

static int
cmd_policy_reload(int argc, char **argv)
{
	static const char usage[] = "usage: boxctl policy reload NAME|ID [FILE]\n";
	const char *box = NULL, *file = NULL;
	for (int i = 1; i < argc; i++) {
		if (is_help(argv[i])) {
			fputs(usage, stdout);
			return BOXCTL_EXIT_OK;
		}
		if (argv[i][0] == '-' && argv[i][1] != 0)
			goto usage;
		if (!box)
			box = argv[i];
		else if (!file)
			file = argv[i];
		else
			goto usage;
	}
	if (!box)
		goto usage;

	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	char *err = NULL, *text = NULL, *abs = NULL;
	size_t len = 0;
	int r, code = BOXCTL_EXIT_FAILURE;
	if (!file) {
		/* Which file the box started with: boxd names it (read here, as the caller). */
		r = policy_reload_send(box, NULL, 0, NULL, NULL, &m, &err);
		if (r <= 0)
			goto failed;
		const Box__PolicyReloadResult *res = (const Box__PolicyReloadResult *)m.msg;
		if (!res->policy_file) {
			fprintf(stderr, "boxctl: error: reload %s: %s\n", box,
				res->error ? res->error : "boxd named no policy file");
			box_ipc_msg_done(&m);
			return BOXCTL_EXIT_FAILURE;
		}
		abs = strdup(res->policy_file);
		box_ipc_msg_done(&m);
		if (!abs)
			goto failed;
	} else {
		abs = realpath(file, NULL);
		if (!abs) {
			fprintf(stderr, "boxctl: error: %s: %s\n", file, strerror(errno));
			return BOXCTL_EXIT_FAILURE;
		}
	}
	code = reload_read(abs, &text, &len);
	if (code != 0) {
		free(abs);
		return code;
	}
	code = BOXCTL_EXIT_FAILURE;
	r = policy_reload_send(box, text, len, abs, NULL, &m, &err);
	free(text);
	if (r <= 0)
		goto failed;
	const Box__PolicyReloadResult *res = (const Box__PolicyReloadResult *)m.msg;
	if (res->status == BOX__REPLY_STATUS__REPLY_OK) {
		printf("box %s: policy generation %llu in force (%s): %u rule%s, %u of %u temporal "
		       "rule%s kept their history\n",
		       res->name ? res->name : box, (unsigned long long)res->generation, abs,
		       res->rules, res->rules == 1 ? "" : "s", res->rules_kept, res->temporal_rules,
		       res->temporal_rules == 1 ? "" : "s");
		code = BOXCTL_EXIT_OK;
	} else {
		fprintf(stderr, "boxctl: error: reload %s: %s\n", box,
			res->error ? res->error : "refused");
		code = res->status == BOX__REPLY_STATUS__REPLY_REFUSED ? BOXCTL_EXIT_USAGE
								       : BOXCTL_EXIT_FAILURE;
	}
	box_ipc_msg_done(&m);
	free(abs);
	return code;
failed:
	if (r == 0)
		fprintf(stderr, "boxctl: error: no box named %s\n", box);
	else
		fprintf(stderr, "boxctl: error: reload %s: %s\n", box, err ? err : strerror(-r));
	free(err);
	free(abs);
	return BOXCTL_EXIT_FAILURE;
usage:
	fputs(usage, stderr);
	return BOXCTL_EXIT_USAGE;
}

int
cmd_policy(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "check") == 0)
		return cmd_policy_check(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "eval") == 0)
		return cmd_policy_eval(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "suggest") == 0)
		return cmd_policy_suggest(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "replay") == 0)
		return cmd_policy_replay(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "reload") == 0)
		return cmd_policy_reload(argc - 1, argv + 1);
	/* Asked for: the usage on stdout, exit 0; anything else is a usage error. */
	bool help = argc >= 2 && is_help(argv[1]);
	fprintf(help ? stdout : stderr,
		"usage: boxctl policy check [--home DIR] [--schema F] POLICY\n"
		"       boxctl policy eval [--home DIR] [--history F] [--explain [--json]] POLICY [REQ|-]\n"
		"       boxctl policy replay [--home DIR] [--json] POLICY NAME|ID|LOG...\n"
		"       boxctl policy suggest NAME|ID|LOG... [--action A] [--since T]\n"
		"       boxctl policy reload NAME|ID [FILE]\n");
	return help ? BOXCTL_EXIT_OK : BOXCTL_EXIT_USAGE;
}
