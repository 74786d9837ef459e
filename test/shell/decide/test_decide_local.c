/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_decide_local.c — box-sh's in-process back end (box-sh/decide_local.c):
 * policy load errors, the fields and spellings of fs:*, shell:exec and
 * shell:spawn requests (docs/box-policy.5.md), messages (§5), temporal rules
 * decided observe-then-decide (§1, §4), batches decided as one by one, and
 * the decisions.jsonl lines (docs/boxctl.1.md) including outcomes, times and a
 * forked child's lines.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "decide.h"
#include "decide_local.h"
#include "tap.h"

static char dir[64];

static struct sh_decider *
make(const char *policy, int fd)
{
	struct sh_decider *d = NULL;
	char why[512] = "";
	int r = sh_decider_local_new(policy, strlen(policy), "t.dw", "/home/u", fd, &d, why,
				     sizeof(why));
	if (r < 0)
		printf("#   load failed: %s\n", why);
	return d;
}

static int
log_fd(const char *name, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", dir, name);
	return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
}

/* The lines of FILE as JSON objects (at most 64). */
static size_t
read_lines(const char *path, json_t **out, size_t max)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0, n = 0;
	if (!f)
		return 0;
	while (n < max && getline(&line, &cap, f) > 0) {
		json_error_t je;
		out[n] = json_loads(line, 0, &je);
		if (!out[n])
			printf("#   bad JSON line: %s (%s)\n", line, je.text);
		n++;
	}
	free(line);
	fclose(f);
	return n;
}

static const char *
jstr(json_t *o, const char *path1, const char *path2)
{
	json_t *v = json_object_get(o, path1);
	if (path2)
		v = json_object_get(v, path2);
	return json_string_value(v);
}

static void
test_load_error(void)
{
	struct sh_decider *d = NULL;
	char why[512] = "";
	const char *bad = "permit (principal, action == Box::Action::\"fs:nope\", resource);";
	CHECK(sh_decider_local_new(bad, strlen(bad), "bad.dw", "/home/u", -1, &d, why,
				   sizeof(why)) < 0);
	CHECK(d == NULL);
	CHECK(strncmp(why, "bad.dw:1:", 9) == 0);
	printf("# %s\n", why);
}

static void
test_fs_spelling_and_messages(void)
{
	struct sh_decider *d = make(
		"@id(\"read_home\") permit (principal, action == Box::Action::\"fs:read\", resource)\n"
		"  when { context.input.path like \"~/*\" || context.input.path == \"~\" };\n"
		"@id(\"no_aws\") @description(\"never the AWS keys\")\n"
		"forbid (principal, action, resource) when { context.input has path &&\n"
		"  context.input.path like \"~/.aws*\" };\n",
		-1);
	struct sh_verdict v;
	CHECK(d != NULL);
	if (!d)
		return;
	struct sh_fs_request r = { SH_FS_READ, SH_OP_READ_CONTENT, "/home/u/p/a.txt" };
	CHECK_INT(sh_decide_fs(d, &r, &v), 0);
	CHECK(v.permit && v.message == NULL);
	r.path = "/home/u";
	CHECK_INT(sh_decide_fs(d, &r, &v), 0);
	CHECK(v.permit);
	r.path = "/home/ux/a";
	CHECK_INT(sh_decide_fs(d, &r, &v), 0);
	CHECK(!v.permit);
	CHECK_STR(v.message, "policy denied this operation on '/home/ux/a' [default-deny]: No "
			     "permit policy matched this request.");
	sh_verdict_clear(&v);
	r.path = "/home/u/.aws/credentials";
	CHECK_INT(sh_decide_fs(d, &r, &v), 0);
	CHECK(!v.permit);
	CHECK_STR(v.message, "policy denied this operation on '~/.aws/credentials' [policy: "
			     "no_aws]: never the AWS keys.");
	sh_verdict_clear(&v);
	r.action = SH_FS_WRITE;
	r.op = SH_OP_WRITE_CONTENT;
	r.path = "/home/u/p/a.txt";
	CHECK_INT(sh_decide_fs(d, &r, &v), 0);
	CHECK(!v.permit);
	sh_verdict_clear(&v);
	CHECK_STR(sh_decider_home(d), "/home/u");
	sh_decider_local_free(d);
}

static void
test_exec_fields(void)
{
	struct sh_decider *d = make(
		"permit (principal, action == Box::Action::\"shell:exec\", resource);\n"
		"@id(\"no_rm_rf\") forbid (principal, action == Box::Action::\"shell:exec\", resource)\n"
		"  when { context.input.program == \"rm\" && context.input has arg1 &&\n"
		"         context.input.arg1 == \"-rf\" };\n"
		"@id(\"cmdline\") forbid (principal, action == Box::Action::\"shell:exec\", resource)\n"
		"  when { context.input.command == \"echo a b\" && context.input.arg_count == 2 &&\n"
		"         context.input.cwd == \"~/proj\" };\n"
		"permit (principal, action == Box::Action::\"shell:spawn\", resource)\n"
		"  when { context.input.program_path == \"~/bin/tool\" };\n",
		-1);
	struct sh_verdict v;
	CHECK(d != NULL);
	if (!d)
		return;
	char *rm_args[] = { "-rf", "x" };
	struct sh_exec_request e = { "rm", rm_args, 2, "/home/u" };
	CHECK_INT(sh_decide_exec(d, &e, &v), 0);
	CHECK(!v.permit);
	CHECK_STR(v.message, "policy denied this operation on 'rm' [policy: no_rm_rf].");
	sh_verdict_clear(&v);
	e.n_args = 0; /* no arg1: the guard makes the forbid not match */
	CHECK_INT(sh_decide_exec(d, &e, &v), 0);
	CHECK(v.permit);
	char *echo_args[] = { "a", "b" };
	struct sh_exec_request e2 = { "echo", echo_args, 2, "/home/u/proj" };
	CHECK_INT(sh_decide_exec(d, &e2, &v), 0);
	CHECK(!v.permit);
	sh_verdict_clear(&v);
	e2.cwd = "/elsewhere";
	CHECK_INT(sh_decide_exec(d, &e2, &v), 0);
	CHECK(v.permit);
	struct sh_exec_request e3 = { "tool", NULL, 0, "/home/u" };
	CHECK_INT(sh_decide_spawn(d, &e3, "/home/u/bin/tool", &v), 0);
	CHECK(v.permit);
	CHECK_INT(sh_decide_spawn(d, &e3, "/usr/bin/tool", &v), 0);
	CHECK(!v.permit);
	CHECK_STR(v.message, "policy denied this operation on '/usr/bin/tool' [default-deny]: "
			     "No permit policy matched this request.");
	sh_verdict_clear(&v);
	sh_decider_local_free(d);
}

/* At most 3 writes a minute: the 4th attempt is denied (it counts itself). */
static const char budget[] =
	"@id(\"all\") permit (principal, action, resource);\n"
	"@id(\"budget\") forbid (principal, action == Box::Action::\"fs:write\", resource)\n"
	"when temporal {\n"
	"  exists (total: Long). (\n"
	"    (count for (t: Timepoint). where (\n"
	"      formerly within 60s (Box::Action::\"fs:write\"::request{ input.path: _ } && tp(t))\n"
	"    )) == total && total > 3)\n"
	"};\n";

static void
test_temporal(void)
{
	struct sh_decider *d = make(budget, -1);
	struct sh_verdict v;
	CHECK(d != NULL);
	if (!d)
		return;
	struct sh_fs_request w = { SH_FS_WRITE, SH_OP_WRITE_CONTENT, "/home/u/f" };
	for (int i = 0; i < 3; i++) {
		CHECK_INT(sh_decide_fs(d, &w, &v), 0);
		CHECK(v.permit);
		CHECK_INT(sh_record_fs(d, &w, false, SH_FS_COMPLETED, 0), 0);
	}
	struct sh_fs_request rd = { SH_FS_READ, SH_OP_READ_CONTENT, "/home/u/f" };
	CHECK_INT(sh_decide_fs(d, &rd, &v), 0);
	CHECK(v.permit);
	CHECK_INT(sh_decide_fs(d, &w, &v), 0);
	CHECK(!v.permit);
	CHECK_STR(v.message, "policy denied this operation on '~/f' [policy: budget].");
	sh_verdict_clear(&v);
	/* the denied attempt is an event too: still denied */
	CHECK_INT(sh_decide_fs(d, &w, &v), 0);
	CHECK(!v.permit);
	sh_verdict_clear(&v);
	sh_decider_local_free(d);
}

static void
test_log_lines(void)
{
	char path[128];
	int fd = log_fd("log1.jsonl", path, sizeof(path));
	struct sh_decider *d = make(budget, fd);
	struct sh_verdict v;
	CHECK(d != NULL);
	if (!d)
		return;
	char *args[] = { "-n", "x\ty", "z" };
	struct sh_exec_request e = { "grep", args, 3, "/home/u/p" };
	CHECK_INT(sh_decide_exec(d, &e, &v), 0);
	CHECK_INT(sh_record_exec(d, &e, 1), 0);
	struct sh_fs_request w = { SH_FS_WRITE, SH_OP_WRITE_CONTENT, "/home/u/bad\xff" };
	CHECK_INT(sh_decide_fs(d, &w, &v), 0);
	CHECK_INT(sh_record_fs(d, &w, true, SH_FS_COMPLETED, 0), 0);
	sh_decider_local_free(d); /* flushes */
	close(fd);

	json_t *l[64] = { 0 };
	size_t n = read_lines(path, l, 64);
	CHECK_INT(n, 4);
	if (n == 4) {
		char *s = json_dumps(l[0], JSON_COMPACT | JSON_PRESERVE_ORDER);
		/* the key order of docs/boxctl.1.md */
		const char *t = strstr(s, "\"time_ns\":");
		CHECK(strncmp(s, "{\"time\":\"", 9) == 0 && t != NULL);
		CHECK(strstr(s, ",\"box\":\"\",\"id\":\"\",\"action\":\"shell:exec\",\"resource\":"
				"\"grep\",\"verdict\":\"permit\",\"cause\":\"permitted\",\"rules\":"
				"[\"all\"],\"message\":\"policy permitted this operation on "
				"'grep'.\",\"source\":\"box-shell\",\"input\":{\"command\":\"grep "
				"-n x\\ty z\",\"program\":\"grep\",\"arg1\":\"-n\",\"arg2\":\"x\\ty\","
				"\"arg_count\":3,\"cwd\":\"~/p\"}}") != NULL);
		free(s);
		s = json_dumps(l[1], JSON_COMPACT | JSON_PRESERVE_ORDER);
		CHECK(strstr(s, "\"record\":\"response\",\"action\":\"shell:exec\",\"input\":{"
				"\"command\"") != NULL);
		CHECK(strstr(s, "\"output\":{\"status\":1},\"source\":\"box-shell\"}") != NULL);
		free(s);
		CHECK_STR(jstr(l[2], "input", "path"), "~/bad\xef\xbf\xbd");
		CHECK_STR(jstr(l[2], "resource", NULL), "~/bad\xef\xbf\xbd");
		CHECK_STR(jstr(l[3], "record", NULL), "error");
		CHECK(json_object_size(json_object_get(l[3], "output")) == 0);
		/* time_ns strictly increasing, and "time" is its millisecond */
		for (size_t i = 1; i < n; i++)
			CHECK(json_integer_value(json_object_get(l[i], "time_ns")) >
			      json_integer_value(json_object_get(l[i - 1], "time_ns")));
		json_int_t ns = json_integer_value(json_object_get(l[0], "time_ns"));
		time_t sec = (time_t)(ns / 1000000000);
		struct tm tm;
		gmtime_r(&sec, &tm);
		char want[160];
		snprintf(want, sizeof(want), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec, (int)(ns / 1000000 % 1000));
		CHECK_STR(jstr(l[0], "time", NULL), want);
	}
	for (size_t i = 0; i < n; i++)
		json_decref(l[i]);
}

/* Everything of a line but its times. */
static char *
untimed(json_t *o)
{
	json_t *c = json_deep_copy(o);
	json_object_del(c, "time");
	json_object_del(c, "time_ns");
	char *s = json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(c);
	return s;
}

static void
test_batch_as_one_by_one(void)
{
	char p1[128], p2[128];
	int fd1 = log_fd("batch.jsonl", p1, sizeof(p1)), fd2 = log_fd("single.jsonl", p2,
								     sizeof(p2));
	struct sh_decider *a = make(budget, fd1), *b = make(budget, fd2);
	CHECK(a && b);
	if (!a || !b)
		return;
	struct sh_fs_request rq[6];
	const char *paths[] = { "/home/u/1", "/home/u/2", "/x/3", "/home/u/4", "/home/u/5",
				"/home/u/6" };
	for (int i = 0; i < 6; i++)
		rq[i] = (struct sh_fs_request){ i == 2 ? SH_FS_READ : SH_FS_WRITE,
						i == 2 ? SH_OP_READ_METADATA : SH_OP_WRITE_CONTENT,
						paths[i] };
	struct sh_verdict va[6], vb[6];
	CHECK_INT(sh_decide_fs_batch(a, rq, 6, va), 0);
	for (int i = 0; i < 6; i++)
		CHECK_INT(sh_decide_fs(b, &rq[i], &vb[i]), 0);
	for (int i = 0; i < 6; i++) {
		CHECK_INT(va[i].permit, vb[i].permit);
		CHECK(!va[i].message == !vb[i].message);
		if (va[i].message && vb[i].message)
			CHECK_STR(va[i].message, vb[i].message);
		sh_verdict_clear(&va[i]);
		sh_verdict_clear(&vb[i]);
	}
	struct sh_verdict big[SH_DECIDE_BATCH_MAX + 1];
	struct sh_fs_request many[SH_DECIDE_BATCH_MAX + 1];
	for (int i = 0; i <= SH_DECIDE_BATCH_MAX; i++)
		many[i] = rq[0];
	CHECK_INT(sh_decide_fs_batch(a, many, SH_DECIDE_BATCH_MAX + 1, big), -E2BIG);
	sh_decider_local_free(a);
	sh_decider_local_free(b);
	close(fd1);
	close(fd2);
	json_t *la[16] = { 0 }, *lb[16] = { 0 };
	size_t na = read_lines(p1, la, 16), nb = read_lines(p2, lb, 16);
	CHECK_INT(na, 6);
	CHECK_INT(nb, 6);
	for (size_t i = 0; i < na && i < nb; i++) {
		char *x = untimed(la[i]), *y = untimed(lb[i]);
		CHECK_STR(x, y);
		free(x);
		free(y);
	}
	/* the 4th write (5th request) is the first over the budget, in both */
	CHECK_STR(jstr(la[4], "verdict", NULL), "deny");
	CHECK_STR(jstr(la[3], "verdict", NULL), "permit");
	for (size_t i = 0; i < na; i++)
		json_decref(la[i]);
	for (size_t i = 0; i < nb; i++)
		json_decref(lb[i]);
}

static void
test_fork_child_lines(void)
{
	char path[128];
	int fd = log_fd("fork.jsonl", path, sizeof(path));
	struct sh_decider *d = make("permit (principal, action, resource);", fd);
	struct sh_verdict v;
	CHECK(d != NULL);
	if (!d)
		return;
	struct sh_fs_request r = { SH_FS_READ, SH_OP_READ_CONTENT, "/parent" };
	CHECK_INT(sh_decide_fs(d, &r, &v), 0);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		struct sh_fs_request c = { SH_FS_READ, SH_OP_READ_CONTENT, "/child" };
		struct sh_verdict cv;
		(void)sh_decide_fs(d, &c, &cv);
		_exit(0); /* as a pipeline stage leaves: no flush, no atexit */
	}
	int st;
	waitpid(pid, &st, 0);
	sh_decider_local_free(d);
	close(fd);
	json_t *l[8] = { 0 };
	size_t n = read_lines(path, l, 8);
	CHECK_INT(n, 2);
	int parents = 0, children = 0;
	for (size_t i = 0; i < n; i++) {
		const char *p = jstr(l[i], "input", "path");
		parents += p && strcmp(p, "/parent") == 0;
		children += p && strcmp(p, "/child") == 0;
		json_decref(l[i]);
	}
	CHECK_INT(parents, 1);
	CHECK_INT(children, 1);
	/* the parent's line was written before the fork: the file keeps the order */
	read_lines(path, l, 8);
	CHECK_STR(jstr(l[0], "input", "path"), "/parent");
	json_decref(l[0]);
	json_decref(l[1]);
}

/* The same addresses with new contents (a loop's next `[`): each line shows its own. */
static void
test_reused_buffers(void)
{
	char path[128];
	int fd = log_fd("reuse.jsonl", path, sizeof(path));
	struct sh_decider *d = make("permit (principal, action, resource);", fd);
	CHECK(d != NULL);
	if (!d)
		return;
	char arg[16];
	char *args[] = { arg, "-lt", "3", "]" };
	struct sh_exec_request e = { "[", args, 4, "/home/u" };
	for (int i = 0; i < 3; i++) {
		struct sh_verdict v;
		snprintf(arg, sizeof(arg), "%d", i);
		CHECK_INT(sh_decide_exec(d, &e, &v), 0);
		CHECK_INT(sh_record_exec(d, &e, 0), 0);
	}
	sh_decider_local_free(d);
	close(fd);
	json_t *l[8] = { 0 };
	size_t n = read_lines(path, l, 8);
	CHECK_INT(n, 6);
	for (size_t i = 0; i < n; i++) {
		char want[32];
		snprintf(want, sizeof(want), "[ %zu -lt 3 ]", i / 2);
		CHECK_STR(jstr(l[i], "input", "command"), want);
		json_decref(l[i]);
	}
}

/* The cost of one logged decision + outcome (a `[` of a loop): printed, loosely bounded. */
static void
test_cost(void)
{
	char path[128];
	int fd = log_fd("cost.jsonl", path, sizeof(path));
	struct sh_decider *d = make("permit (principal, action, resource);", fd);
	CHECK(d != NULL);
	if (!d)
		return;
	char *args[] = { "1", "-lt", "100000", "]" };
	struct sh_exec_request e = { "[", args, 4, "/home/u/p" };
	/* CPU time, not wall time: the machine running `make check` may be busy */
	struct timespec t0, t1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	for (int i = 0; i < 100000; i++) {
		struct sh_verdict v;
		(void)sh_decide_exec(d, &e, &v);
		(void)sh_record_exec(d, &e, 0);
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	sh_decider_local_free(d);
	close(fd);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("# 100000 shell:exec decisions + outcomes, logged: %.3f s of CPU\n", s);
#ifndef __SANITIZE_ADDRESS__
	/* bash runs the whole loop in 0.73 s: the decisions alone must fit */
	CHECK(s < 0.73);
#endif
	unlink(path);
}

int
main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/shdecide-local-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	RUN(test_load_error);
	RUN(test_fs_spelling_and_messages);
	RUN(test_exec_fields);
	RUN(test_temporal);
	RUN(test_log_lines);
	RUN(test_batch_as_one_by_one);
	RUN(test_fork_child_lines);
	RUN(test_reused_buffers);
	RUN(test_cost);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# cleanup failed\n");
	return tap_done();
}
