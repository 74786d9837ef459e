/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace.c — box-temporal-trace: the temporal conformance driver.
 *
 *   box-temporal-trace [--home DIR] POLICY TRACE.jsonl   decide a trace
 *   box-temporal-trace [--home DIR] --check POLICY       load-time checks only
 *
 * A trace holds docs/box-policy.5.md `policy eval` lines: requests
 * {"action":…,"input":{…},"at":SECONDS} and outcomes
 * {"record":"response"|"error","action":…,"input":{…},"output":{…},"at":…}.
 * Requests go through bp_monitor_decide (observe, then decide); outcomes
 * through bp_monitor_observe. One JSON line per request, in the format of
 * `boxctl policy eval`. `at` is seconds (fractions allowed, exact to the ns for
 * values below 4e6) and defaults to the last time + 1 ns. Load errors print as
 * `NAME:LINE:COL: error: MESSAGE` on stderr; exit 2 when the policy does not load.
 *
 * Trusts: nothing; it is test code reading test files.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boxpolicy.h"
#include "boxpolicy_temporal.h"

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rbe");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (!buf)
			break;
		size_t k = fread(buf + n, 1, cap - n, f);
		n += k;
		if (k == 0)
			break;
		if (n == cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	*len = n;
	return buf;
}

static const char *
base(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static void
print_diags(const char *name, const struct bp_diags *d)
{
	for (size_t i = 0; d && i < bp_diags_count(d); i++) {
		enum bp_severity sev;
		unsigned line, col;
		const char *m = bp_diag_message(d, i, &sev, &line, &col);
		fprintf(stderr, "%s:%u:%u: %s: %s\n", name, line, col,
			sev == BP_ERROR ? "error" : "warning", m);
	}
}

static struct bp_value *
to_value(struct bp_request *req, json_t *v, int depth)
{
	if (depth > 32)
		return NULL;
	switch (json_typeof(v)) {
	case JSON_STRING: return bp_value_string(req, json_string_value(v), json_string_length(v));
	case JSON_INTEGER: return bp_value_long(req, (int64_t)json_integer_value(v));
	case JSON_TRUE:
	case JSON_FALSE: return bp_value_bool(req, json_is_true(v));
	case JSON_ARRAY: {
		struct bp_value *set = bp_value_set(req);
		size_t i;
		json_t *it;
		json_array_foreach(v, i, it) {
			struct bp_value *e = to_value(req, it, depth + 1);
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
			struct bp_value *e = to_value(req, it, depth + 1);
			if (!e || bp_value_record_put(req, rec, k, e) < 0)
				return NULL;
		}
		return rec;
	}
	default: return NULL;
	}
}

static int
fill(struct bp_request *req, const char *action, json_t *input)
{
	if (bp_request_set_action(req, action) < 0)
		return -1;
	const char *k;
	json_t *v;
	json_object_foreach(input, k, v) {
		int r;
		switch (json_typeof(v)) {
		case JSON_STRING:
			r = bp_request_set_string(req, k, json_string_value(v), json_string_length(v));
			break;
		case JSON_INTEGER: r = bp_request_set_long(req, k, (int64_t)json_integer_value(v)); break;
		case JSON_TRUE:
		case JSON_FALSE: r = bp_request_set_bool(req, k, json_is_true(v)); break;
		default: r = bp_request_set_value(req, k, to_value(req, v, 0)); break;
		}
		if (r < 0)
			return -1;
	}
	return 0;
}

static void
err_line(unsigned n, const char *msg)
{
	printf("{\"error\":\"line %u: %s\"}\n", n, msg);
}

int
main(int argc, char **argv)
{
	const char *home = "/home/dev", *policy = NULL, *trace = NULL;
	bool check = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--home") == 0 && i + 1 < argc)
			home = argv[++i];
		else if (strcmp(argv[i], "--check") == 0)
			check = true;
		else if (!policy)
			policy = argv[i];
		else if (!trace)
			trace = argv[i];
	}
	if (!policy || (!check && !trace)) {
		fprintf(stderr, "usage: box-temporal-trace [--home DIR] POLICY TRACE | --check POLICY\n");
		return 64;
	}
	size_t len;
	char *text = slurp(policy, &len);
	if (!text) {
		fprintf(stderr, "%s: %s\n", policy, strerror(errno));
		return 1;
	}
	struct bp_load_options opts = { .home = home };
	struct bp_policy *p = NULL;
	struct bp_diags *d = NULL;
	int r = bp_policy_load(text, len, &opts, &p, &d);
	if (r == 0) {
		bp_diags_free(d);
		d = NULL;
		r = bp_policy_check_temporal(p, &d);
	}
	print_diags(base(policy), d);
	bp_diags_free(d);
	free(text);
	if (r < 0) {
		bp_policy_free(p);
		return 2;
	}
	if (check) {
		bp_policy_free(p);
		return 0;
	}
	struct bp_monitor *m = NULL;
	if (bp_monitor_new(p, &m, NULL) < 0) {
		fprintf(stderr, "monitor: cannot compile\n");
		return 1;
	}
	FILE *f = fopen(trace, "re");
	if (!f) {
		fprintf(stderr, "%s: %s\n", trace, strerror(errno));
		return 1;
	}
	struct bp_request *req;
	struct bp_event *ev;
	struct bp_decision *dec;
	if (bp_request_new(p, &req) < 0 || bp_event_new(p, &ev) < 0 || bp_decision_new(&dec) < 0)
		return 1;
	char *line = NULL;
	size_t cap = 0;
	unsigned n = 0;
	int64_t last = 0;
	while (getline(&line, &cap, f) > 0) {
		n++;
		if (line[0] == '\n' || line[0] == 0)
			continue;
		json_error_t je;
		json_t *o = json_loads(line, 0, &je);
		if (!json_is_object(o)) {
			err_line(n, "not a JSON object");
			json_decref(o);
			continue;
		}
		json_t *at = json_object_get(o, "at");
		int64_t t = last + 1;
		if (json_is_integer(at))
			t = (int64_t)json_integer_value(at) * 1000000000LL;
		else if (json_is_real(at))
			t = (int64_t)llround(json_real_value(at) * 1e9);
		last = t;
		const char *action = json_string_value(json_object_get(o, "action"));
		json_t *input = json_object_get(o, "input");
		json_t *record = json_object_get(o, "record");
		if (!action || !json_is_object(input)) {
			err_line(n, "needs \"action\" and \"input\"");
			json_decref(o);
			continue;
		}
		if (record) {
			enum bp_event_kind k;
			bp_event_reset(ev);
			if (!json_is_string(record) || bp_event_kind_parse(json_string_value(record), &k) < 0 ||
			    k == BP_EVENT_REQUEST) {
				err_line(n, "\"record\" must be \"response\" or \"error\"");
				json_decref(o);
				continue;
			}
			bp_event_set_kind(ev, k);
			bp_event_set_time(ev, t);
			fill(bp_event_request(ev), action, input);
			json_t *out = json_object_get(o, "output");
			const char *key;
			json_t *v;
			json_object_foreach(out, key, v) {
				if (json_is_integer(v))
					bp_event_set_output_long(ev, key, (int64_t)json_integer_value(v));
				else if (json_is_string(v))
					bp_event_set_output_string(ev, key, json_string_value(v),
								   json_string_length(v));
			}
			const char *prob = bp_event_problem(ev);
			if (prob)
				err_line(n, prob);
			else if ((r = bp_monitor_observe(m, ev, NULL)) < 0)
				err_line(n, strerror(-r));
			json_decref(o);
			continue;
		}
		bp_request_reset(req);
		fill(req, action, input);
		r = bp_monitor_decide(m, req, t, dec, NULL);
		json_t *rules = json_array();
		for (size_t i = 0; i < bp_decision_rule_count(dec); i++)
			json_array_append_new(rules, json_string(bp_decision_rule_name(dec, i)));
		json_t *res = json_pack("{s:s,s:s,s:o,s:s}", "verdict",
					bp_verdict_str(bp_decision_verdict(dec)), "cause",
					bp_cause_str(bp_decision_cause(dec)), "rules", rules, "message",
					bp_decision_message(dec));
		char *s = json_dumps(res, JSON_COMPACT | JSON_PRESERVE_ORDER);
		printf("%s\n", s ? s : "{}");
		free(s);
		json_decref(res);
		json_decref(o);
	}
	free(line);
	fclose(f);
	bp_decision_free(dec);
	bp_event_free(ev);
	bp_request_free(req);
	bp_monitor_free(m);
	bp_policy_free(p);
	return 0;
}
