/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_path.c — path spellings of common/path.c.
 */
#include <errno.h>
#include <stdlib.h>

#include "cleanup.h"
#include "path.h"
#include "tap.h"

static void
test_clean_absolute(void)
{
	CHECK(path_is_clean_absolute("/"));
	CHECK(path_is_clean_absolute("/a/b"));
	CHECK(path_is_clean_absolute("/a/.b/..c"));
	CHECK(!path_is_clean_absolute("a/b"));
	CHECK(!path_is_clean_absolute(""));
	CHECK(!path_is_clean_absolute("/a/"));
	CHECK(!path_is_clean_absolute("/a//b"));
	CHECK(!path_is_clean_absolute("/a/./b"));
	CHECK(!path_is_clean_absolute("/a/../b"));
	CHECK(!path_is_clean_absolute("/a/.."));
	CHECK(!path_is_clean_absolute("/a\nb"));
	CHECK(!path_is_clean_absolute("/a\x7f"));
	CHECK(!path_is_clean_absolute(NULL));
	CHECK(path_has_glob("/a/*.c"));
	CHECK(path_has_glob("/a/[x]"));
	CHECK(!path_has_glob("/a/b"));
}

static void
test_under(void)
{
	CHECK(path_is_under("/a/b", "/a"));
	CHECK(path_is_under("/a", "/a"));
	CHECK(!path_is_under("/ab", "/a"));
	CHECK(path_is_under("/x", "/"));
	CHECK(!path_is_under("/a", "/a/b"));
}

static void
test_join_dirname(void)
{
	_cleanup_free_ char *a = path_join("/", "x");
	_cleanup_free_ char *b = path_join("/a/", "/y");
	_cleanup_free_ char *c = path_join("/a", "");
	CHECK_STR(a, "/x");
	CHECK_STR(b, "/a/y");
	CHECK_STR(c, "/a");
	_cleanup_free_ char *d = NULL, *e = NULL, *f = NULL;
	CHECK_INT(path_dirname("/a/b", &d), 0);
	CHECK_STR(d, "/a");
	CHECK_INT(path_dirname("/a", &e), 0);
	CHECK_STR(e, "/");
	CHECK_INT(path_dirname("a", &f), 0);
	CHECK_STR(f, ".");
	CHECK_STR(path_basename("/a/bc"), "bc");
}

static void
test_home_forms(void)
{
	_cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL, *f = NULL;
	CHECK_INT(path_expand_home("~/p/a.txt", "/home/me", &a), 0);
	CHECK_STR(a, "/home/me/p/a.txt");
	CHECK_INT(path_expand_home("~", "/home/me", &b), 0);
	CHECK_STR(b, "/home/me");
	CHECK_INT(path_expand_home("~root/x", "/home/me", &c), -EINVAL);
	CHECK_INT(path_to_home_form("/home/me/p/a.txt", "/home/me", &c), 0);
	CHECK_STR(c, "~/p/a.txt");
	CHECK_INT(path_to_home_form("/home/me", "/home/me", &d), 0);
	CHECK_STR(d, "~");
	CHECK_INT(path_to_home_form("/home/meow/x", "/home/me", &e), 0);
	CHECK_STR(e, "/home/meow/x");
	CHECK_INT(path_to_home_form("/etc/x", "/", &f), 0);
	CHECK_STR(f, "/etc/x");
}

static void
test_canonicalize(void)
{
	_cleanup_free_ char *a = NULL;
	CHECK_INT(path_canonicalize("/proc/self/..//self/../", &a), 0);
	CHECK_STR(a, "/proc");
	char *b = NULL;
	CHECK_INT(path_canonicalize("/nonexistent-box-path/x", &b), -ENOENT);
	CHECK(b == NULL);
}

/* path_reach: how a sandbox's grants reach a denied path (box.ini(5) "hidden in every view"). */
static void
test_reach(void)
{
	const char *g[] = { "/p", "/q/file", "/r/deep/inner" };
	size_t w = 99;
	CHECK_INT(path_reach("/p/.env", g, 3, &w), PATH_REACH_MASK);
	CHECK_INT(w, 0);
	CHECK_INT(path_reach("/q/file", g, 3, &w), PATH_REACH_EXCEPTION);
	CHECK_INT(w, 1);
	CHECK_INT(path_reach("/r", g, 3, &w), PATH_REACH_INSIDE);
	CHECK_INT(w, 2);
	CHECK_INT(path_reach("/s/x", g, 3, NULL), PATH_REACH_NONE);
	/* Component-wise: /pp is neither inside /p nor around it. */
	CHECK_INT(path_reach("/pp/.env", g, 3, NULL), PATH_REACH_NONE);
	CHECK_INT(path_reach("/q", g, 3, NULL), PATH_REACH_INSIDE);
	/* Naming it exactly wins over a grant that holds it or lies inside it. */
	const char *both[] = { "/r/deep/inner", "/", "/r" };
	CHECK_INT(path_reach("/r", both, 3, &w), PATH_REACH_EXCEPTION);
	CHECK_INT(w, 2);
	/* A grant inside it is refused even when another one holds it. */
	const char *nest[] = { "/", "/r/deep/inner" };
	CHECK_INT(path_reach("/r", nest, 2, &w), PATH_REACH_INSIDE);
	CHECK_INT(w, 1);
	CHECK_INT(path_reach("/r", NULL, 0, NULL), PATH_REACH_NONE);
}

static void
test_system_runtime(void)
{
	CHECK(path_is_system_runtime("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"));
	CHECK(path_is_system_runtime("/lib64/ld-linux-x86-64.so.2"));
	CHECK(path_is_system_runtime("/bin"));
	CHECK(!path_is_system_runtime("/usrx/lib/ld.so"));
	CHECK(!path_is_system_runtime("/home/me/ld.so"));
	CHECK(!path_is_system_runtime("/"));
}

int
main(void)
{
	RUN(test_clean_absolute);
	RUN(test_reach);
	RUN(test_system_runtime);
	RUN(test_under);
	RUN(test_join_dirname);
	RUN(test_home_forms);
	RUN(test_canonicalize);
	return tap_done();
}
