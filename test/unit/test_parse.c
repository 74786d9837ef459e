/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_parse.c — the checked parsers of common/parse.c, and common/testhook.c's reading of a
 * BOX_TEST_*_MS hook.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parse.h"
#include "tap.h"
#include "testhook.h"

static void
test_u64(void)
{
	uint64_t v = 7;
	CHECK_INT(parse_u64("0", 10, &v), 0);
	CHECK_INT(v, 0);
	CHECK_INT(parse_u64("18446744073709551615", UINT64_MAX, &v), 0);
	CHECK(v == UINT64_MAX);
	v = 7;
	CHECK_INT(parse_u64("18446744073709551616", UINT64_MAX, &v), -ERANGE);
	CHECK_INT(parse_u64("11", 10, &v), -ERANGE);
	CHECK_INT(parse_u64("", 10, &v), -EINVAL);
	CHECK_INT(parse_u64(" 1", 10, &v), -EINVAL);
	CHECK_INT(parse_u64("1 ", 10, &v), -EINVAL);
	CHECK_INT(parse_u64("+1", 10, &v), -EINVAL);
	CHECK_INT(parse_u64("-1", 10, &v), -EINVAL);
	CHECK_INT(parse_u64("0x10", 100, &v), -EINVAL);
	CHECK_INT(v, 7); /* output untouched on failure */
}

static void
test_i64(void)
{
	int64_t v;
	CHECK_INT(parse_i64("-9223372036854775808", &v), 0);
	CHECK(v == INT64_MIN);
	CHECK_INT(parse_i64("9223372036854775807", &v), 0);
	CHECK(v == INT64_MAX);
	CHECK_INT(parse_i64("9223372036854775808", &v), -ERANGE);
	CHECK_INT(parse_i64("-9223372036854775809", &v), -ERANGE);
	CHECK_INT(parse_i64("-", &v), -EINVAL);
	CHECK_INT(parse_i64("--1", &v), -EINVAL);
}

static void
test_bool(void)
{
	bool b = false;
	CHECK_INT(parse_bool("true", &b), 0);
	CHECK(b);
	CHECK_INT(parse_bool("false", &b), 0);
	CHECK(!b);
	CHECK_INT(parse_bool("yes", &b), -EINVAL);
	CHECK_INT(parse_bool("True", &b), -EINVAL);
	CHECK_INT(parse_bool("1", &b), -EINVAL);
}

static void
test_duration(void)
{
	uint64_t ms;
	CHECK_INT(parse_duration_ms("10s", &ms), 0);
	CHECK_INT(ms, 10000);
	CHECK_INT(parse_duration_ms("250ms", &ms), 0);
	CHECK_INT(ms, 250);
	CHECK_INT(parse_duration_ms("5m", &ms), 0);
	CHECK_INT(ms, 300000);
	CHECK_INT(parse_duration_ms("2h", &ms), 0);
	CHECK_INT(ms, 7200000);
	CHECK_INT(parse_duration_ms("10", &ms), -EINVAL); /* unit required */
	CHECK_INT(parse_duration_ms("10 s", &ms), -EINVAL);
	CHECK_INT(parse_duration_ms("1.5s", &ms), -EINVAL);
	CHECK_INT(parse_duration_ms("10d", &ms), -EINVAL);
	CHECK_INT(parse_duration_ms("s", &ms), -EINVAL);
	CHECK_INT(parse_duration_ms("18446744073709551615h", &ms), -ERANGE);
	char buf[32];
	format_duration_ms(1500, buf);
	CHECK_STR(buf, "1500ms");
}

static void
test_size(void)
{
	uint64_t b;
	CHECK_INT(parse_size("4M", &b), 0);
	CHECK_INT(b, 4 << 20);
	CHECK_INT(parse_size("1K", &b), 0);
	CHECK_INT(b, 1024);
	CHECK_INT(parse_size("3G", &b), 0);
	CHECK(b == 3ULL << 30);
	CHECK_INT(parse_size("12345", &b), 0);
	CHECK_INT(b, 12345);
	CHECK_INT(parse_size("4m", &b), -EINVAL);
	CHECK_INT(parse_size("4MB", &b), -EINVAL);
	CHECK_INT(parse_size("4T", &b), -EINVAL);
	CHECK_INT(parse_size("17179869184G", &b), -ERANGE);
}

static void
test_port_count(void)
{
	uint16_t p;
	uint64_t c;
	CHECK_INT(parse_port("1", &p), 0);
	CHECK_INT(p, 1);
	CHECK_INT(parse_port("65535", &p), 0);
	CHECK_INT(p, 65535);
	CHECK_INT(parse_port("0", &p), -ERANGE);
	CHECK_INT(parse_port("65536", &p), -ERANGE);
	CHECK_INT(parse_count("1", 100, &c), 0);
	CHECK_INT(parse_count("0", 100, &c), -ERANGE);
	CHECK_INT(parse_count("101", 100, &c), -ERANGE);
}

static void
test_list_has_word(void)
{
	CHECK(list_has_word("landlock,seccomp", "seccomp"));
	CHECK(list_has_word("rw,nosuid,pids", "pids"));
	CHECK(list_has_word("pids", "pids"));
	CHECK(!list_has_word("rw,nosuid,pidsx", "pids"));
	CHECK(!list_has_word("xpids,memory2", "pids"));
	CHECK(!list_has_word("cgroup-v1", "cgroup"));
	CHECK(!list_has_word("", "pids"));
	CHECK(!list_has_word(NULL, "pids"));
	CHECK(list_has_word("a,,b", "b"));
}

/* The items one by one, as the trampoline checks BOX_TEST_ABSENT's words. */
static void
test_list_next_word(void)
{
	const char *p = "landlock,,cgroup-v1,", *w;
	size_t l;
	CHECK(list_next_word(&p, &w, &l));
	CHECK(l == 8 && strncmp(w, "landlock", l) == 0);
	CHECK(list_next_word(&p, &w, &l));
	CHECK_INT(l, 0);
	CHECK(list_next_word(&p, &w, &l));
	CHECK(l == 9 && strncmp(w, "cgroup-v1", l) == 0);
	CHECK(!list_next_word(&p, &w, &l));
	CHECK(p == NULL);
	CHECK(!list_next_word(&p, &w, &l));
	p = "";
	CHECK(!list_next_word(&p, &w, &l));
	p = NULL;
	CHECK(!list_next_word(&p, &w, &l));
}

/* BOX_TEST_*_MS hooks: unset and empty are 0, digits up to the bound, anything else refused. */
static void
test_hook_ms(void)
{
	uint64_t ms = 7;
	unsetenv("BOX_TEST_UNIT_HOOK_MS");
	CHECK_INT(box_test_ms("BOX_TEST_UNIT_HOOK_MS", 100, &ms), 0);
	CHECK_INT(ms, 0);
	static const struct { const char *v; int r; uint64_t ms; } cases[] = {
		{ "", 0, 0 }, { "0", 0, 0 }, { "100", 0, 100 }, { "101", -ERANGE, 0 },
		{ "5ms", -EINVAL, 0 }, { "-1", -EINVAL, 0 }, { " 5", -EINVAL, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ms = 7;
		setenv("BOX_TEST_UNIT_HOOK_MS", cases[i].v, 1);
		CHECK_INT(box_test_ms("BOX_TEST_UNIT_HOOK_MS", 100, &ms), cases[i].r);
		CHECK_INT(ms, cases[i].ms);
	}
	unsetenv("BOX_TEST_UNIT_HOOK_MS");
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	box_sleep_ms(20);
	clock_gettime(CLOCK_MONOTONIC, &b);
	CHECK((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec) >= 20000000LL);
}

int
main(void)
{
	RUN(test_u64);
	RUN(test_i64);
	RUN(test_bool);
	RUN(test_duration);
	RUN(test_size);
	RUN(test_port_count);
	RUN(test_list_has_word);
	RUN(test_list_next_word);
	RUN(test_hook_ms);
	return tap_done();
}
