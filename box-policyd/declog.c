/*
 * declog.c — decisions.jsonl lines (declog.h), built with jansson.
 *
 * Key order is the one of spec/CLI.md: time box id action resource verdict
 * cause rules message source input. `input` holds the action's input fields
 * as plain JSON (strings, integers, booleans, arrays for sets, objects for
 * records), in the order the peer sent them.
 * Trusts: strings are valid UTF-8 (proto/policy_validate.c checked them);
 * a string jansson still refuses makes the line fail, never a partial line.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "declog.h"

void
declog_init(void)
{
	json_object_seed(0);
}

void
declog_time(int64_t time_ns, char *buf, size_t len)
{
	struct tm tm;
	time_t s = (time_t)(time_ns / 1000000000LL);
	int64_t ms = (time_ns % 1000000000LL) / 1000000LL;

	if (ms < 0) {
		ms += 1000;
		s--;
	}
	if (!gmtime_r(&s, &tm)) {
		(void)snprintf(buf, len, "1970-01-01T00:00:00.000Z");
		return;
	}
	(void)snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
		       tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)ms);
}

static json_t *fields_json(Box__PolicyField *const *f, size_t n);

static json_t *
value_json(const Box__PolicyValue *v)
{
	switch (v->kind_case) {
	case BOX__POLICY_VALUE__KIND_STR: return json_stringn(v->str, strlen(v->str));
	case BOX__POLICY_VALUE__KIND_INTEGER: return json_integer(v->integer);
	case BOX__POLICY_VALUE__KIND_BOOLEAN: return json_boolean(v->boolean);
	case BOX__POLICY_VALUE__KIND_SET: {
		json_t *a = json_array();
		for (size_t i = 0; a && i < v->set->n_elems; i++) {
			json_t *x = value_json(v->set->elems[i]);
			if (!x || json_array_append_new(a, x) < 0) {
				json_decref(a);
				return NULL;
			}
		}
		return a;
	}
	case BOX__POLICY_VALUE__KIND_RECORD:
		return fields_json(v->record->fields, v->record->n_fields);
	case BOX__POLICY_VALUE__KIND__NOT_SET:
	default: return NULL;
	}
}

static json_t *
fields_json(Box__PolicyField *const *f, size_t n)
{
	json_t *o = json_object();
	for (size_t i = 0; o && i < n; i++) {
		json_t *x = value_json(f[i]->value);
		if (!x || json_object_set_new(o, f[i]->name, x) < 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

static int
put(json_t *o, const char *k, json_t *v)
{
	return v ? json_object_set_new(o, k, v) : -1;
}

static json_t *
str(const char *s)
{
	return json_stringn(s ? s : "", s ? strlen(s) : 0);
}

char *
declog_format(const struct declog_entry *e, size_t *ret_len)
{
	char t[40];
	json_t *o = json_object(), *rules = json_array();
	char *line = NULL;
	int bad = !o || !rules;

	declog_time(e->time_ns, t, sizeof(t));
	for (size_t i = 0; !bad && i < e->n_rules; i++)
		bad = json_array_append_new(rules, str(e->rules[i])) < 0;
	if (!bad)
		bad = put(o, "time", json_string(t)) < 0 || put(o, "box", str(e->box)) < 0 ||
		      put(o, "id", str(e->id)) < 0 || put(o, "action", str(e->action)) < 0 ||
		      put(o, "resource", str(e->resource)) < 0 ||
		      put(o, "verdict", json_string(e->permit ? "permit" : "deny")) < 0 ||
		      put(o, "cause", str(e->cause)) < 0;
	if (!bad) {
		bad = json_object_set_new(o, "rules", rules) < 0;
		rules = NULL;
	}
	if (!bad)
		bad = put(o, "message", str(e->message)) < 0 ||
		      put(o, "source", str(e->source)) < 0 ||
		      put(o, "input", fields_json(e->input, e->n_input)) < 0;
	if (!bad)
		line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(rules);
	json_decref(o);
	if (!line) {
		errno = EINVAL;
		return NULL;
	}
	size_t n = strlen(line);
	char *out = realloc(line, n + 2);
	if (!out) {
		free(line);
		errno = ENOMEM;
		return NULL;
	}
	out[n] = '\n';
	out[n + 1] = '\0';
	*ret_len = n + 1;
	return out;
}

int
declog_write(int fd, const struct declog_entry *e)
{
	size_t len;
	char *line = declog_format(e, &len);

	if (!line)
		return -errno;
	ssize_t n;
	do
		n = write(fd, line, len);
	while (n < 0 && errno == EINTR);
	int r = n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
	free(line);
	return r;
}
