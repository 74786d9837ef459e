/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_declog.c — box-policyd's decision-line writer against jansson.
 *
 * declog.c writes decisions.jsonl lines by hand (it is on the Decide path);
 * the contract is jansson's compact, order-preserving output. For many random
 * entries (strings with quotes, backslashes, control characters, DEL,
 * multi-byte UTF-8; nested sets and records; long and negative integers) the
 * line must parse with jansson, re-dump to the very same bytes, and carry the
 * entry's values. A string that is not valid UTF-8 must fail the whole line.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "box-policyd/declog.h"
#include "jsonl.h"
#include "cleanup.h"
#include "rnd_policy.h"
#include "tap.h"


static void
test_matches_jansson(void)
{
	declog_init();
	for (int iter = 0; iter < 2000; iter++) {
		char *strs[6];
		for (int i = 0; i < 6; i++)
			strs[i] = rnd_string(12);
		const char *rules[3] = { strs[3], "policy_0", "no_rm_rf" };
		size_t n_input = rnd(5);
		Box__PolicyField **input = calloc(n_input + 1, sizeof(*input));
		for (size_t i = 0; i < n_input; i++) {
			input[i] = calloc(1, sizeof(**input));
			box__policy_field__init(input[i]);
			input[i]->name = calloc(1, 32);
			snprintf(input[i]->name, 32, "%s%zu", rnd(2) ? "path" : "arg", i);
			input[i]->value = rnd_value(0);
		}
		struct declog_entry e = {
			.time_ns = (int64_t)rnd(2000000000) * 1000000000LL + rnd(1000000000),
			.box = "demo",
			.id = "0123456789ab",
			.action = strs[0],
			.resource = strs[1],
			.permit = rnd(2),
			.cause = rnd(2) ? "permitted" : "no_match",
			.rules = rules,
			.n_rules = rnd(4),
			.message = strs[2],
			.source = "box-shell",
			.input = input,
			.n_input = n_input,
		};
		size_t len = 0;
		char *line = declog_format(&e, &len);
		CHECK(line != NULL);
		if (!line)
			break;
		CHECK(len > 0 && line[len - 1] == '\n');
		json_error_t err;
		json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &err);
		CHECK(o != NULL);
		if (o) {
			char *again = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
			CHECK(again && strlen(again) == len - 1 && memcmp(again, line, len - 1) == 0);
			if (again && (strlen(again) != len - 1 || memcmp(again, line, len - 1)))
				printf("#   declog: %.*s#   jansson: %s\n", (int)len, line, again);
			CHECK_STR(json_string_value(json_object_get(o, "action")), e.action);
			CHECK_STR(json_string_value(json_object_get(o, "resource")), e.resource);
			CHECK_STR(json_string_value(json_object_get(o, "message")), e.message);
			CHECK_STR(json_string_value(json_object_get(o, "verdict")),
				  e.permit ? "permit" : "deny");
			CHECK_INT(json_array_size(json_object_get(o, "rules")), e.n_rules);
			CHECK_INT(json_object_size(json_object_get(o, "input")), n_input);
			free(again);
			json_decref(o);
		}
		free(line);
		for (size_t i = 0; i < n_input; i++) {
			free(input[i]->name);
			free(input[i]);
		}
		free(input);
		pool_free(); /* the strings and the values */
		if (tap_failed_checks)
			break;
	}
}

static void
test_invalid_utf8_refused(void)
{
	const char *rules[1] = { "r" };
	struct declog_entry e = {
		.time_ns = 1,
		.box = "demo",
		.id = "0123456789ab",
		.action = "fs:read",
		.resource = "bad \xff\xfe byte",
		.cause = "no_match",
		.rules = rules,
		.message = "m",
		.source = "box-shell",
	};
	size_t len;
	char *line = declog_format(&e, &len);
	CHECK(line == NULL);
	free(line);
}

/* Lines go after what the buffer holds; a failed one leaves no trace. */
static void
test_append(void)
{
	const char *rules[1] = { "r" };
	struct declog_entry e = {
		.time_ns = 1,
		.box = "demo",
		.id = "0123456789ab",
		.action = "fs:read",
		.resource = "~/p/\xc3\xa9t\xc3\xa9 with a long tail \xe2\x82\xac",
		.cause = "no_match",
		.rules = rules,
		.n_rules = 1,
		.message = "m",
		.source = "box-shell",
	};
	char *buf = NULL;
	size_t len = 0, cap = 0, one;
	_cleanup_free_ char *line = declog_format(&e, &one);
	CHECK(line != NULL);
	CHECK_INT(declog_append(&e, &buf, &len, &cap), 0);
	CHECK_INT(declog_append(&e, &buf, &len, &cap), 0);
	CHECK(len == 2 * one && memcmp(buf, line, one) == 0 && memcmp(buf + one, line, one) == 0);
	/* Invalid UTF-8 after 30 valid bytes of ASCII (the word-at-a-time path). */
	e.resource = "~/0123456789abcdefghij/klmnopq\xc3(";
	CHECK_INT(declog_append(&e, &buf, &len, &cap), -EINVAL);
	CHECK(len == 2 * one && buf[len] == '\0');
	e.resource = "~/p/a.txt";
	CHECK_INT(declog_append(&e, &buf, &len, &cap), 0);
	CHECK(len > 2 * one && strstr(buf + 2 * one, "\"~/p/a.txt\"") != NULL);
	free(buf);
}

static void
test_time(void)
{
	char buf[32];
	jsonl_time(1764469184123456789LL, buf, sizeof(buf));
	CHECK_STR(buf, "2025-11-30T02:19:44.123Z");
	/* The same second again (the cached part), then the next one and back. */
	jsonl_time(1764469184999000000LL, buf, sizeof(buf));
	CHECK_STR(buf, "2025-11-30T02:19:44.999Z");
	jsonl_time(1764469185000000000LL, buf, sizeof(buf));
	CHECK_STR(buf, "2025-11-30T02:19:45.000Z");
	jsonl_time(1764469184001000000LL, buf, sizeof(buf));
	CHECK_STR(buf, "2025-11-30T02:19:44.001Z");
	jsonl_time(0, buf, sizeof(buf));
	CHECK_STR(buf, "1970-01-01T00:00:00.000Z");
	jsonl_time(-1, buf, sizeof(buf));
	CHECK_STR(buf, "1969-12-31T23:59:59.999Z");
}

/* An outcome line: docs/boxctl.1.md's keys in order, jansson's bytes; an error has no output. */
static void
test_outcome(void)
{
	Box__PolicyValue path = BOX__POLICY_VALUE__INIT, result = BOX__POLICY_VALUE__INIT;
	path.kind_case = BOX__POLICY_VALUE__KIND_STR;
	path.str = "~/p/\"a\"\n";
	result.kind_case = BOX__POLICY_VALUE__KIND_STR;
	result.str = "completed";
	Box__PolicyField f_path = BOX__POLICY_FIELD__INIT, f_result = BOX__POLICY_FIELD__INIT;
	f_path.name = "path";
	f_path.value = &path;
	f_result.name = "result";
	f_result.value = &result;
	Box__PolicyField *in[] = { &f_path }, *out[] = { &f_result };
	struct declog_outcome o = {
		.time_ns = 1764469184123456789LL, .box = "demo", .id = "0123456789ab",
		.action = "fs:write", .source = "box-shell", .input = in, .n_input = 1,
		.output = out, .n_output = 1,
	};
	char *buf = NULL;
	size_t len = 0, cap = 0;
	CHECK_INT(declog_append_outcome(&o, &buf, &len, &cap), 0);
	CHECK_STR(buf, "{\"time\":\"2025-11-30T02:19:44.123Z\",\"time_ns\":1764469184123456789,"
		       "\"box\":\"demo\",\"id\":\"0123456789ab\",\"record\":\"response\","
		       "\"action\":\"fs:write\",\"input\":{\"path\":\"~/p/\\\"a\\\"\\n\"},"
		       "\"output\":{\"result\":\"completed\"},\"source\":\"box-shell\"}\n");
	size_t one = len;
	o.error = true;
	CHECK_INT(declog_append_outcome(&o, &buf, &len, &cap), 0);
	CHECK_STR(buf + one, "{\"time\":\"2025-11-30T02:19:44.123Z\",\"time_ns\":1764469184123456789,"
			     "\"box\":\"demo\",\"id\":\"0123456789ab\",\"record\":\"error\","
			     "\"action\":\"fs:write\",\"input\":{\"path\":\"~/p/\\\"a\\\"\\n\"},"
			     "\"source\":\"box-shell\"}\n");
	/* A person's box shell: "session" after "source", on outcomes as on decisions. */
	size_t two = len;
	o.error = false;
	o.session = "person";
	CHECK_INT(declog_append_outcome(&o, &buf, &len, &cap), 0);
	CHECK(strstr(buf + two, ",\"source\":\"box-shell\",\"session\":\"person\"}\n") != NULL);
	struct declog_entry e = {
		.time_ns = 1764469184123456789LL, .box = "demo", .id = "0123456789ab",
		.action = "shell:exec", .resource = "rmdir", .permit = false, .cause = "forbidden",
		.message = "m", .source = "box-shell", .session = "person", .input = in, .n_input = 1,
	};
	size_t three = len;
	CHECK_INT(declog_append(&e, &buf, &len, &cap), 0);
	CHECK(strstr(buf + three, "\"source\":\"box-shell\",\"session\":\"person\",\"input\":") !=
	      NULL);
	json_error_t err;
	json_t *j = json_loadb(buf, one, JSON_REJECT_DUPLICATES, &err);
	char *again = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	CHECK(again && strlen(again) == one - 1 && memcmp(again, buf, one - 1) == 0);
	free(again);
	json_decref(j);
	free(buf);
}

int
main(void)
{
	RUN(test_matches_jansson);
	RUN(test_invalid_utf8_refused);
	RUN(test_append);
	RUN(test_time);
	RUN(test_outcome);
	return tap_done();
}
