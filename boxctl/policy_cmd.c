/*
 * policy_cmd.c — `boxctl policy check` and `boxctl policy eval` (POLICY.md
 * §6): validate a policy file, or decide JSON-line requests offline.
 *
 * Runs as the calling user on the user's own files. Trusts nothing it reads:
 * the policy goes through libboxpolicy's loader, every input line is parsed
 * and checked (a malformed line gets an error line, evaluation goes on), and
 * lines and files are capped in size.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "boxpolicy.h"
#include "commands.h"

#define POLICY_FILE_MAX BP_MAX_POLICY_BYTES
#define LINE_MAX_BYTES (1u << 20)

struct eval_state {
	struct bp_policy *policy;
	struct bp_schema *schema;
	struct bp_request *req;
	struct bp_decision *dec;
	const char *home;
	double last_at;
	bool have_at;
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

static int
cmd_policy_check(int argc, char **argv)
{
	const char *home = NULL, *schema_file = NULL, *file = NULL;
	for (int i = 1; i < argc; i++) {
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
	bp_policy_free(p);
	bp_schema_free(schema);
	if (r == -EINVAL)
		return BOXCTL_EXIT_USAGE;
	if (r < 0) {
		fprintf(stderr, "boxctl: error: %s: %s\n", file, strerror(-r));
		return BOXCTL_EXIT_FAILURE;
	}
	return BOXCTL_EXIT_OK;
usage:
	fprintf(stderr, "usage: boxctl policy check [--home DIR] [--schema F] POLICY\n");
	return BOXCTL_EXIT_USAGE;
}

/* RFC 3339 → seconds since the epoch; false when malformed. */
static bool
parse_rfc3339(const char *s, double *ret)
{
	struct tm tm = { 0 };
	const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!p)
		p = strptime(s, "%Y-%m-%dt%H:%M:%S", &tm);
	if (!p)
		return false;
	double frac = 0;
	if (*p == '.') {
		char *end;
		frac = strtod(p, &end);
		if (end == p + 1)
			return false;
		p = end;
	}
	long off = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int hh, mm;
		if (sscanf(p + 1, "%2d:%2d", &hh, &mm) != 2 || strlen(p) != 6)
			return false;
		off = (hh * 3600L + mm * 60L) * (*p == '+' ? 1 : -1);
		p += 6;
	} else {
		return false;
	}
	if (*p)
		return false;
	time_t t = timegm(&tm);
	*ret = (double)t - (double)off + frac;
	return true;
}

static struct bp_value *
json_to_value(struct bp_request *req, json_t *v, int depth, const char **err)
{
	if (depth > 32) {
		*err = "value nested too deeply";
		return NULL;
	}
	switch (json_typeof(v)) {
	case JSON_STRING:
		return bp_value_string(req, json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		return bp_value_long(req, (int64_t)json_integer_value(v));
	case JSON_TRUE:
	case JSON_FALSE:
		return bp_value_bool(req, json_is_true(v));
	case JSON_ARRAY: {
		struct bp_value *set = bp_value_set(req);
		size_t i;
		json_t *it;
		json_array_foreach(v, i, it) {
			struct bp_value *e = json_to_value(req, it, depth + 1, err);
			if (!e || bp_value_set_add(req, set, e) < 0)
				return NULL;
		}
		return set;
	}
	case JSON_OBJECT: {
		struct bp_value *rec = bp_value_record(req);
		const char *k;
		json_t *it;
		json_object_foreach(v, k, it) {
			struct bp_value *e = json_to_value(req, it, depth + 1, err);
			if (!e || bp_value_record_put(req, rec, k, e) < 0)
				return NULL;
		}
		return rec;
	}
	case JSON_REAL:
		*err = "numbers must be integers";
		return NULL;
	case JSON_NULL:
	default:
		*err = "null is not a value";
		return NULL;
	}
}

static void
print_error_line(unsigned lineno, const char *msg)
{
	char buf[600];
	snprintf(buf, sizeof(buf), "line %u: %s", lineno, msg);
	json_t *o = json_pack("{s:s}", "error", buf);
	char *s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	if (s)
		printf("%s\n", s);
	free(s);
	json_decref(o);
}

/* Handle one input line; OUTPUT false for --history replay. */
static void
eval_line(struct eval_state *st, char *line, unsigned lineno, bool output)
{
	char msg[512];
	json_error_t je;
	json_t *obj = json_loads(line, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(obj)) {
		snprintf(msg, sizeof(msg), "%s", obj ? "not a JSON object" : je.text);
		if (output)
			print_error_line(lineno, msg);
		json_decref(obj);
		return;
	}
	const char *err = NULL;
	if (json_object_get(obj, "schema")) {
		if (add_schema_json(st->schema, obj, &err) == 0) {
			struct bp_policy *np = NULL;
			struct bp_diags *d = NULL;
			int r = bp_policy_reload(st->policy, st->schema, &np, &d);
			if (r == 0) {
				bp_request_free(st->req);
				st->req = NULL;
				bp_policy_free(st->policy);
				st->policy = np;
				if (bp_request_new(np, &st->req) < 0)
					err = "out of memory";
			} else {
				const char *m = bp_diag_message(d, 0, NULL, NULL, NULL);
				snprintf(msg, sizeof(msg), "the schema does not fit the policy: %s",
					 m ? m : strerror(-r));
				err = msg;
			}
			bp_diags_free(d);
		}
		if (err && output)
			print_error_line(lineno, err);
		json_decref(obj);
		return;
	}
	json_t *at = json_object_get(obj, "at");
	if (at) {
		double t;
		if (json_is_integer(at))
			t = (double)json_integer_value(at);
		else if (json_is_real(at))
			t = json_real_value(at);
		else if (!json_is_string(at) || !parse_rfc3339(json_string_value(at), &t))
			t = NAN;
		if (isnan(t) || !isfinite(t)) {
			err = "\"at\" must be seconds since the epoch or an RFC 3339 time";
		} else if (st->have_at && t < st->last_at) {
			err = "\"at\" goes backwards";
		} else {
			st->last_at = t;
			st->have_at = true;
		}
	}
	json_t *action = json_object_get(obj, "action");
	json_t *input = json_object_get(obj, "input");
	json_t *record = json_object_get(obj, "record");
	if (!err && !json_is_string(action))
		err = "\"action\" must be a string";
	if (!err && input && !json_is_object(input))
		err = "\"input\" must be an object";
	if (!err && record) {
		/* an outcome line: checked, recorded by the temporal engine (issue 5) */
		const char *k = json_string_value(record);
		if (!k || (strcmp(k, "response") != 0 && strcmp(k, "error") != 0))
			err = "\"record\" must be \"response\" or \"error\"";
		json_decref(obj);
		if (err && output)
			print_error_line(lineno, err);
		return;
	}
	struct bp_request *req = st->req;
	bp_request_reset(req);
	if (!err && bp_request_set_action(req, json_string_value(action)) < 0)
		err = bp_request_problem(req);
	if (!err && input) {
		const char *k;
		json_t *v;
		json_object_foreach(input, k, v) {
			const char *verr = NULL;
			int r;
			if (json_is_string(v))
				r = bp_request_set_string(req, k, json_string_value(v),
							  json_string_length(v));
			else if (json_is_integer(v))
				r = bp_request_set_long(req, k, (int64_t)json_integer_value(v));
			else if (json_is_boolean(v))
				r = bp_request_set_bool(req, k, json_is_true(v));
			else {
				struct bp_value *bv = json_to_value(req, v, 0, &verr);
				r = bv ? bp_request_set_value(req, k, bv) : -EINVAL;
			}
			if (r < 0) {
				if (verr) {
					snprintf(msg, sizeof(msg), "field \"%.100s\": %s", k, verr);
					err = msg;
				} else {
					err = bp_request_problem(req);
				}
				break;
			}
		}
	}
	if (!err)
		err = bp_request_problem(req);
	if (err) {
		if (output)
			print_error_line(lineno, err);
		json_decref(obj);
		return;
	}
	json_decref(obj);
	if (bp_decide(st->policy, req, NULL, st->dec) < 0) {
		if (output)
			print_error_line(lineno, "out of memory");
		return;
	}
	if (!output)
		return;
	json_t *rules = json_array();
	for (size_t i = 0; i < bp_decision_rule_count(st->dec); i++)
		json_array_append_new(rules, json_string(bp_decision_rule_name(st->dec, i)));
	json_t *out = json_pack("{s:s,s:s,s:o,s:s}", "verdict",
				bp_verdict_str(bp_decision_verdict(st->dec)), "cause",
				bp_cause_str(bp_decision_cause(st->dec)), "rules", rules, "message",
				bp_decision_message(st->dec));
	char *s = out ? json_dumps(out, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	if (s)
		printf("%s\n", s);
	else
		print_error_line(lineno, "cannot encode the decision");
	free(s);
	json_decref(out);
}

static int
eval_stream(struct eval_state *st, const char *path, bool output)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
	if (!f) {
		fprintf(stderr, "boxctl: error: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned lineno = 0;
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = 0;
		if ((size_t)n > LINE_MAX_BYTES) {
			if (output)
				print_error_line(lineno, "line too long");
			continue;
		}
		if (strspn(line, " \t\r") == (size_t)n)
			continue;
		if (strlen(line) != (size_t)n) {
			if (output)
				print_error_line(lineno, "NUL byte in line");
			continue;
		}
		eval_line(st, line, lineno, output);
		fflush(stdout);
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return 0;
}

static int
cmd_policy_eval(int argc, char **argv)
{
	const char *home = NULL, *history = NULL, *file = NULL, *input = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--home") == 0 && i + 1 < argc)
			home = argv[++i];
		else if (strcmp(argv[i], "--history") == 0 && i + 1 < argc)
			history = argv[++i];
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
	if (!home)
		home = default_home();

	char *text;
	size_t len;
	int r = read_file(file, &text, &len);
	if (r < 0) {
		fprintf(stderr, "boxctl: error: %s: %s\n", file, strerror(-r));
		return BOXCTL_EXIT_FAILURE;
	}
	struct eval_state st = { .home = home };
	int rc = BOXCTL_EXIT_FAILURE;
	if (bp_schema_new(&st.schema) < 0 || bp_decision_new(&st.dec) < 0)
		goto out;
	struct bp_load_options o = {
		.home = home, .schema = st.schema, .allow_unknown_namespaces = true
	};
	struct bp_diags *d = NULL;
	r = bp_policy_load(text, len, &o, &st.policy, &d);
	print_diags(file, d);
	bp_diags_free(d);
	if (r == -EINVAL) {
		rc = BOXCTL_EXIT_USAGE;
		goto out;
	}
	if (r < 0 || bp_request_new(st.policy, &st.req) < 0) {
		fprintf(stderr, "boxctl: error: %s: %s\n", file, strerror(r < 0 ? -r : ENOMEM));
		goto out;
	}
	if (history && eval_stream(&st, history, false) < 0)
		goto out;
	if (eval_stream(&st, input, true) < 0)
		goto out;
	rc = BOXCTL_EXIT_OK;
out:
	free(text);
	bp_request_free(st.req);
	bp_policy_free(st.policy);
	bp_decision_free(st.dec);
	bp_schema_free(st.schema);
	return rc;
usage:
	fprintf(stderr, "usage: boxctl policy eval [--home DIR] [--history F] POLICY [REQ|-]\n");
	return BOXCTL_EXIT_USAGE;
}

int
cmd_policy(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "check") == 0)
		return cmd_policy_check(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "eval") == 0)
		return cmd_policy_eval(argc - 1, argv + 1);
	fprintf(stderr, "usage: boxctl policy check [--home DIR] [--schema F] POLICY\n"
			"       boxctl policy eval [--home DIR] [--history F] POLICY [REQ|-]\n");
	return BOXCTL_EXIT_USAGE;
}
