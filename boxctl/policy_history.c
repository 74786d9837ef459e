/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_history.c — temporal replay for `boxctl policy eval` (policy_history.h).
 *
 * A request line becomes a request event at its time through
 * bp_monitor_decide (observe, then decide: the decision is the caller's or
 * dropped); an outcome line becomes a response/error event through
 * bp_monitor_observe. Field values are plain JSON: strings, integers,
 * booleans, arrays for sets, objects for records; enum fields are their id.
 * Trusts: nothing in the input; every line is checked and errors name it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "policy_history.h"

#define PH_LINE_MAX (1u << 20)
#define PH_DEPTH_MAX 32

DEFINE_FREEP(struct bp_decision, bp_decision_free)

/*
 * The text of the top-level "at" number in LINE (jansson keeps a real only
 * as a double, which cannot hold nanoseconds at today's epoch). False when
 * there is none or it is not a plain number.
 */
static bool
raw_at(const char *line, char *buf, size_t len)
{
	int depth = 0;
	const char *p = line;

	while (*p) {
		if (*p == '"') {
			const char *k = ++p;
			while (*p && *p != '"')
				p += (*p == '\\' && p[1]) ? 2 : 1;
			if (!*p)
				return false;
			bool is_at = depth == 1 && p - k == 2 && memcmp(k, "at", 2) == 0;
			p++;
			if (!is_at)
				continue;
			while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
				p++;
			if (*p != ':')
				continue; /* "at" as a value */
			p++;
			while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
				p++;
			size_t n = strspn(p, "-0123456789.eE+");
			if (n == 0 || n >= len)
				return false;
			memcpy(buf, p, n);
			buf[n] = 0;
			return true;
		}
		if (*p == '{' || *p == '[')
			depth++;
		else if (*p == '}' || *p == ']')
			depth--;
		p++;
	}
	return false;
}

int
ph_init(struct ph_state *st, struct bp_monitor *mon)
{
	memset(st, 0, sizeof(*st));
	st->mon = mon;
	int r = bp_request_new(bp_monitor_policy(mon), &st->req);
	if (r < 0)
		return r;
	r = bp_event_new(bp_monitor_policy(mon), &st->ev);
	if (r < 0) {
		bp_request_free(st->req);
		st->req = NULL;
	}
	return r;
}

void
ph_done(struct ph_state *st)
{
	bp_event_free(st->ev);
	bp_request_free(st->req);
	st->ev = NULL;
	st->req = NULL;
}

/* ---- time ------------------------------------------------------------------------ */

/* "123", "123.5", "1700000000.000000001" (at most 9 fraction digits kept exactly). */
int
ph_seconds_to_ns(const char *s, int64_t *ret)
{
	int64_t sec = 0, frac = 0;
	int digits = 0, fd = 0;
	bool neg = false;

	if (*s == '-') {
		neg = true;
		s++;
	}
	for (; *s >= '0' && *s <= '9'; s++, digits++) {
		if (sec > (INT64_MAX / 1000000000LL - 9) / 10)
			return -ERANGE;
		sec = sec * 10 + (*s - '0');
	}
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, fd++)
			if (fd < 9)
				frac = frac * 10 + (*s - '0');
		for (int k = fd; k < 9; k++)
			frac *= 10;
	}
	/* An exponent ("1e9") is refused: write the digits. */
	if (*s != '\0' || digits == 0)
		return -EINVAL;
	int64_t ns = sec * 1000000000LL + frac;
	*ret = neg ? -ns : ns;
	return 0;
}

static int
digits_n(const char **p, int n, int *ret)
{
	int v = 0;
	for (int i = 0; i < n; i++, (*p)++) {
		if (**p < '0' || **p > '9')
			return -EINVAL;
		v = v * 10 + (**p - '0');
	}
	*ret = v;
	return 0;
}

/* YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM). */
int
ph_rfc3339_to_ns(const char *s, int64_t *ret)
{
	struct tm tm = { 0 };
	int y, mo, d, h, mi, se, oh = 0, om = 0;
	int64_t frac = 0;
	int sign = 0;

	if (digits_n(&s, 4, &y) < 0 || *s++ != '-' || digits_n(&s, 2, &mo) < 0 || *s++ != '-' ||
	    digits_n(&s, 2, &d) < 0 || (*s != 'T' && *s != 't' && *s != ' '))
		return -EINVAL;
	s++;
	if (digits_n(&s, 2, &h) < 0 || *s++ != ':' || digits_n(&s, 2, &mi) < 0 || *s++ != ':' ||
	    digits_n(&s, 2, &se) < 0)
		return -EINVAL;
	if (*s == '.') {
		int fd = 0;
		for (s++; *s >= '0' && *s <= '9'; s++, fd++)
			if (fd < 9)
				frac = frac * 10 + (*s - '0');
		if (fd == 0)
			return -EINVAL;
		for (int k = fd; k < 9; k++)
			frac *= 10;
	}
	if (*s == 'Z' || *s == 'z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		sign = *s++ == '+' ? 1 : -1;
		if (digits_n(&s, 2, &oh) < 0 || *s++ != ':' || digits_n(&s, 2, &om) < 0)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (*s || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60 ||
	    oh > 23 || om > 59)
		return -EINVAL;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	time_t t = timegm(&tm);
	if (t == (time_t)-1 && !(y == 1969 && mo == 12 && d == 31))
		return -EINVAL;
	t -= (time_t)sign * (oh * 3600 + om * 60);
	*ret = (int64_t)t * 1000000000LL + frac;
	return 0;
}

int
ph_parse_at(struct ph_state *st, json_t *at, int64_t *ret, const char **err)
{
	int64_t ns;

	if (!at) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
		/* "now" never goes backwards behind an explicit time either. */
		if (st->have_last && ns < st->last_ns)
			ns = st->last_ns;
	} else if (json_is_integer(at)) {
		json_int_t v = json_integer_value(at);
		if (v > INT64_MAX / 1000000000LL || v < INT64_MIN / 1000000000LL) {
			*err = "\"at\" is out of range";
			return -EINVAL;
		}
		ns = (int64_t)v * 1000000000LL;
	} else if (json_is_real(at)) {
		/* Exact from the line's text when we have it, else from the double. */
		char buf[64];
		bool exact = st->line && raw_at(st->line, buf, sizeof(buf)) &&
			     ph_seconds_to_ns(buf, &ns) == 0;
		if (!exact)
			(void)snprintf(buf, sizeof(buf), "%.9f", json_real_value(at));
		if (!exact && ph_seconds_to_ns(buf, &ns) < 0) {
			*err = "\"at\" is out of range";
			return -EINVAL;
		}
	} else if (json_is_string(at)) {
		const char *s = json_string_value(at);
		if (ph_rfc3339_to_ns(s, &ns) < 0 && ph_seconds_to_ns(s, &ns) < 0) {
			*err = "\"at\" must be seconds since the epoch or an RFC 3339 time";
			return -EINVAL;
		}
	} else {
		*err = "\"at\" must be seconds since the epoch or an RFC 3339 time";
		return -EINVAL;
	}
	if (st->have_last && ns < st->last_ns) {
		*err = "\"at\" goes backwards";
		return -EINVAL;
	}
	*ret = ns; /* ph_line commits it once the line is accepted */
	return 0;
}

/* ---- values ------------------------------------------------------------------------ */

static struct bp_value *
to_value(struct bp_request *r, json_t *v, int depth, const char **err)
{
	if (depth > PH_DEPTH_MAX) {
		*err = "value nested too deeply";
		return NULL;
	}
	switch (json_typeof(v)) {
	case JSON_STRING: return bp_value_string(r, json_string_value(v), json_string_length(v));
	case JSON_INTEGER: return bp_value_long(r, (int64_t)json_integer_value(v));
	case JSON_TRUE:
	case JSON_FALSE: return bp_value_bool(r, json_is_true(v));
	case JSON_ARRAY: {
		struct bp_value *s = bp_value_set(r);
		size_t i;
		json_t *e;
		json_array_foreach(v, i, e) {
			struct bp_value *x = to_value(r, e, depth + 1, err);
			if (!s || !x || bp_value_set_add(r, s, x) < 0)
				return NULL;
		}
		return s;
	}
	case JSON_OBJECT: {
		struct bp_value *rec = bp_value_record(r);
		const char *k;
		json_t *e;
		json_object_foreach(v, k, e) {
			struct bp_value *x = to_value(r, e, depth + 1, err);
			if (!rec || !x || bp_value_record_put(r, rec, k, x) < 0)
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

/* Fill R from "action" and "input"; NULL or the reason. */
static const char *
fill(struct bp_request *r, json_t *obj, char *err, size_t err_len)
{
	json_t *action = json_object_get(obj, "action");
	json_t *input = json_object_get(obj, "input");
	const char *k;
	json_t *v;

	if (!json_is_string(action))
		return "\"action\" must be a string";
	if (input && !json_is_object(input))
		return "\"input\" must be an object";
	bp_request_reset(r);
	if (bp_request_set_action(r, json_string_value(action)) < 0)
		return bp_request_problem(r) ?: "unknown action";
	json_object_foreach(input, k, v) {
		const char *verr = NULL;
		int x;
		if (json_is_string(v))
			x = bp_request_set_string(r, k, json_string_value(v), json_string_length(v));
		else if (json_is_integer(v))
			x = bp_request_set_long(r, k, (int64_t)json_integer_value(v));
		else if (json_is_boolean(v))
			x = bp_request_set_bool(r, k, json_is_true(v));
		else {
			struct bp_value *bv = to_value(r, v, 0, &verr);
			x = bv ? bp_request_set_value(r, k, bv) : -EINVAL;
		}
		if (x < 0) {
			if (verr) {
				(void)snprintf(err, err_len, "field \"%.100s\": %s", k, verr);
				return err;
			}
			return bp_request_problem(r) ?: "bad field";
		}
	}
	return NULL;
}

int
ph_line(struct ph_state *st, const char *line, struct bp_decision *decide, char *err,
	size_t err_len)
{
	json_error_t je;
	const char *why = NULL;
	int64_t t;
	int r = -EINVAL;
	/* Before any goto: the cleanup must see NULL on every path. */
	_cleanup_(bp_decision_freep) struct bp_decision *scratch = NULL;

	json_t *obj = json_loads(line, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(obj)) {
		(void)snprintf(err, err_len, "%s", obj ? "not a JSON object" : je.text);
		json_decref(obj);
		return -EINVAL;
	}
	if (json_object_get(obj, "schema")) {
		json_decref(obj);
		return -ENOTSUP;
	}
	st->line = line;
	r = ph_parse_at(st, json_object_get(obj, "at"), &t, &why);
	st->line = NULL;
	if (r < 0)
		goto out;
	r = -EINVAL;
	json_t *record = json_object_get(obj, "record");
	if (record) {
		const char *k = json_string_value(record);
		enum bp_event_kind kind;
		if (!k || bp_event_kind_parse(k, &kind) < 0 || kind == BP_EVENT_REQUEST) {
			why = "\"record\" must be \"response\" or \"error\"";
			goto out;
		}
		bp_event_reset(st->ev);
		bp_event_set_kind(st->ev, kind);
		bp_event_set_time(st->ev, t);
		why = fill(bp_event_request(st->ev), obj, err, err_len);
		if (why)
			goto out;
		json_t *output = json_object_get(obj, "output");
		const char *f;
		json_t *v;
		if (output && (!json_is_object(output) || kind == BP_EVENT_ERROR)) {
			why = kind == BP_EVENT_ERROR ? "an error event has no \"output\""
						     : "\"output\" must be an object";
			goto out;
		}
		json_object_foreach(output, f, v) {
			int x = json_is_integer(v)
					? bp_event_set_output_long(st->ev, f,
								   (int64_t)json_integer_value(v))
				: json_is_string(v)
					? bp_event_set_output_string(st->ev, f, json_string_value(v),
								     json_string_length(v))
					: -EINVAL;
			if (x < 0) {
				(void)snprintf(err, err_len, "output field \"%.100s\" is not valid", f);
				why = err;
				goto out;
			}
		}
		why = bp_event_problem(st->ev);
		if (why)
			goto out;
		r = bp_monitor_observe(st->mon, st->ev, NULL);
		if (r < 0)
			why = "the event cannot be recorded";
		goto out;
	}
	why = fill(st->req, obj, err, err_len);
	if (!why)
		why = bp_request_problem(st->req);
	if (why)
		goto out;
	struct bp_decision *d = decide;
	if (!d) {
		r = bp_decision_new(&scratch);
		if (r < 0) {
			why = "out of memory";
			goto out;
		}
		d = scratch;
	}
	r = bp_monitor_decide(st->mon, st->req, t, d, NULL);
	if (r < 0)
		why = "the request cannot be recorded";
	else
		r = decide ? 1 : 0;
out:
	json_decref(obj);
	if (!why && r >= 0) {
		st->last_ns = t;
		st->have_last = true;
	}
	if (why) {
		if (why != err)
			(void)snprintf(err, err_len, "%s", why);
		return r < 0 ? r : -EINVAL;
	}
	return r;
}

long
ph_replay_file(struct ph_state *st, const char *path)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
	char *line = NULL, err[600];
	size_t cap = 0;
	ssize_t n;
	unsigned lineno = 0;
	long done = 0;

	if (!f)
		return -errno;
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = 0;
		if (strspn(line, " \t\r") == (size_t)n)
			continue;
		int r;
		if ((size_t)n > PH_LINE_MAX) {
			r = -EINVAL;
			(void)snprintf(err, sizeof(err), "line too long");
		} else if (strlen(line) != (size_t)n) {
			r = -EINVAL;
			(void)snprintf(err, sizeof(err), "NUL byte in line");
		} else {
			r = ph_line(st, line, NULL, err, sizeof(err));
			if (r == -ENOTSUP)
				(void)snprintf(err, sizeof(err),
					       "schema lines belong in the input, not the history");
		}
		if (r < 0) {
			fprintf(stderr, "boxctl: %s:%u: %s\n", path, lineno, err);
			st->errors++;
			continue;
		}
		done++;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return done;
}
