/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_policyd.c — box-policyd end to end, started the way boxd starts it
 * (harness.c): Decide/Record round trips on every peer channel, the exact
 * decisions.jsonl lines, log rotation, refusals, peer close and protocol
 * errors; with temporal rules: history survives restarts, unchanged rules
 * keep their state and edited ones start empty, a torn last record (the
 * file cut at every byte of it) is dropped, a corrupt middle refuses the
 * start with a message, and a history that cannot be written denies;
 * history_sync = batch as a group commit: many Decides in flight on one
 * channel answered in order after the fsync that covers them, one fsync per
 * decision at one in flight, and a bounded group under a flood.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "daemon_fds.h"
#include "harness.h"
#include "proto/policy_permits.h"
#include "proto/policy_validate.h"
#include "tap.h"

static const char *bin;

#define PERMIT_ALL_FS                                                                      \
	"@id(\"fs_ok\")\n"                                                                  \
	"permit (principal, action in [Box::Action::\"fs:write\", Box::Action::\"fs:read\", " \
	"Box::Action::\"fs:delete\"], resource);\n"

static const char *basic_policy =
	PERMIT_ALL_FS
	"@id(\"no_secrets\")\n@description(\"Secrets stay unread.\")\n"
	"forbid (principal, action == Box::Action::\"fs:read\", resource)\n"
	"when { context.input.path like \"~/secret*\" };\n"
	"permit (principal, action == Box::Action::\"shell:exec\", resource)\n"
	"when { context.input.program == \"echo\" };\n";

#define BUDGET(ID, ACTION, EXTRA, N)                                                        \
	"@id(\"" ID "\")\n" EXTRA                                                           \
	"forbid (principal, action == Box::Action::\"" ACTION "\", resource)\n"             \
	"when temporal {\n"                                                                 \
	"    exists (total: Long). (\n"                                                     \
	"        (count for (t: Timepoint). where (\n"                                      \
	"            formerly within 60s (\n"                                               \
	"                Box::Action::\"" ACTION "\"::response{ input.path: _ } && tp(t)\n" \
	"            )\n"                                                                   \
	"        )) == total\n"                                                             \
	"        && total >= " N "\n"                                                       \
	"    )\n"                                                                           \
	"};\n"

static const char *budget_v1 = PERMIT_ALL_FS BUDGET("write_budget", "fs:write", "", "6")
	BUDGET("delete_budget", "fs:delete", "", "6");
/* write_budget: only its description changed; delete_budget: edited. */
static const char *budget_v2 = PERMIT_ALL_FS
	BUDGET("write_budget", "fs:write", "@description(\"Budget reached.\")\n", "6")
	"// a comment does not count\n"
	BUDGET("delete_budget", "fs:delete", "", "7");

#define W(path) "{\"action\":\"fs:write\",\"input\":{\"path\":\"" path "\",\"operation\":\"write_content\"}}"
#define W_DONE(path)                                                                    \
	"{\"record\":\"response\",\"action\":\"fs:write\",\"input\":{\"path\":\"" path     \
	"\",\"operation\":\"write_content\"},\"output\":{\"result\":\"completed\"}}"
#define R(path) "{\"action\":\"fs:read\",\"input\":{\"path\":\"" path "\",\"operation\":\"read_content\"}}"
#define R_DONE(path)                                                                    \
	"{\"record\":\"response\",\"action\":\"fs:read\",\"input\":{\"path\":\"" path     \
	"\",\"operation\":\"read_content\"},\"output\":{\"result\":\"completed\"}}"
#define D(path) "{\"action\":\"fs:delete\",\"input\":{\"path\":\"" path "\",\"operation\":\"remove_file\"}}"
#define D_DONE(path)                                                                    \
	"{\"record\":\"response\",\"action\":\"fs:delete\",\"input\":{\"path\":\"" path    \
	"\",\"operation\":\"remove_file\"},\"output\":{\"result\":\"completed\"}}"

static char *state;
static bool have_monitor = true;

static void
fresh_state(void)
{
	if (state) {
		pd_rmtree(state);
		free(state);
	}
	state = pd_tmpdir("policyd-test");
}

static struct pd_opts
opts(const char *policy, const char *clock)
{
	static char errpath[4096];
	(void)snprintf(errpath, sizeof(errpath), "%s/stderr", state);
	return (struct pd_opts){ .binary = bin, .state_dir = state, .policy = policy,
				 .test_clock = clock, .stderr_path = errpath };
}

/*
 * The decision log's lines as the tests compare them: the chain checked
 * (pd_unchain), then its suffixes and the seal lines left out.
 */
static char *
unchain(const char *rel, char *buf)
{
	if (strncmp(rel, "decisions.jsonl", 15) == 0)
		CHECK(pd_unchain_log(&buf));
	return buf;
}

static char *
slurp(const char *rel)
{
	char path[4096];
	char *buf = NULL;
	size_t len = 0;
	(void)snprintf(path, sizeof(path), "%s/%s", state, rel);
	FILE *f = fopen(path, "re");
	if (!f)
		return strdup("");
	FILE *m = open_memstream(&buf, &len);
	int c;
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(f);
	fclose(m);
	return unchain(rel, buf);
}

/* Decide LINE as PEER; check the verdict ("permit"/"deny") and the cause. */
static bool
decide(struct pd *pd, int peer, const char *line, bool permit, int cause)
{
	Box__DecideReply *rep = NULL;
	int r = pd_send_line(pd, peer, line, &rep);
	if (r < 0) {
		printf("#   send %s: %s\n", line, strerror(-r));
		return false;
	}
	bool ok = (rep->verdict == BOX__DECISION_VERDICT__VERDICT_PERMIT) == permit &&
		  (int)rep->cause == cause;
	if (!ok)
		printf("#   %s -> verdict %d cause %d: %s\n", line, rep->verdict, rep->cause,
		       rep->message);
	box_msg_free(&rep->base);
	return ok;
}

static void
record(struct pd *pd, int peer, const char *line)
{
	CHECK_INT(pd_send_line(pd, peer, line, NULL), 0);
}

/* ---- non-temporal --------------------------------------------------------------- */

static void
test_round_trip(void)
{
	struct pd pd;
	Box__PolicyReady *ready = NULL;
	fresh_state();
	struct pd_opts o = opts(basic_policy, NULL);
	CHECK_INT(pd_start(&o, &pd, &ready), 0);
	if (!ready)
		return;
	CHECK(ready->ok);
	CHECK_INT(ready->rules, 3);
	CHECK_INT(ready->temporal_rules, 0);
	box_msg_free(&ready->base);

	Box__DecideReply *rep = NULL;
	CHECK_INT(pd_send_line(&pd, PD_SHELL,
			       "{\"action\":\"fs:read\",\"input\":{\"path\":\"~/secret.txt\","
			       "\"operation\":\"read_content\"}}",
			       &rep),
		  0);
	if (rep) {
		CHECK_INT(rep->verdict, BOX__DECISION_VERDICT__VERDICT_DENY);
		CHECK_INT(rep->cause, BOX__DECISION_CAUSE__CAUSE_FORBIDDEN);
		CHECK_INT(rep->n_rules, 1);
		if (rep->n_rules == 1)
			CHECK_STR(rep->rules[0], "no_secrets");
		CHECK_STR(rep->message, "policy denied this operation on '~/secret.txt' "
					"[policy: no_secrets]: Secrets stay unread.");
		box_msg_free(&rep->base);
	}
	CHECK(decide(&pd, PD_SHELL,
		     "{\"action\":\"fs:read\",\"input\":{\"path\":\"~/p/a.txt\",\"operation\":"
		     "\"read_content\"}}",
		     true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	/* Every peer channel answers. */
	CHECK(decide(&pd, PD_GATEWAY,
		     "{\"action\":\"net:connect\",\"input\":{\"host\":\"example.com\",\"port\":443}}",
		     false, BOX__DECISION_CAUSE__CAUSE_NO_MATCH));
	CHECK(decide(&pd, PD_MCPD,
		     "{\"action\":\"mcp:call\",\"input\":{\"server\":\"gh\",\"method\":\"tools/call\","
		     "\"tool\":\"x\"}}",
		     false, BOX__DECISION_CAUSE__CAUSE_NO_MATCH));
	CHECK(decide(&pd, PD_SHELL,
		     "{\"action\":\"shell:exec\",\"input\":{\"command\":\"echo hi\",\"program\":\"echo\","
		     "\"arg1\":\"hi\",\"arg_count\":1,\"cwd\":\"~\"}}",
		     true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	/* boxd (source supervisor) for the programs it will supervise: fs:* */
	CHECK(decide(&pd, PD_BOXD,
		     "{\"action\":\"fs:read\",\"input\":{\"path\":\"~/p/b.txt\",\"operation\":"
		     "\"read_content\"}}",
		     true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	/* A request that does not fit the schema: deny, cause error. */
	CHECK(decide(&pd, PD_SHELL, "{\"action\":\"fs:read\",\"input\":{\"path\":\"~/x\"}}", false,
		     BOX__DECISION_CAUSE__CAUSE_ERROR));
	/* Records are accepted (and ignored: no temporal rule). */
	CHECK(decide(&pd, PD_SHELL, W("~/p/a"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	record(&pd, PD_SHELL, W_DONE("~/p/a"));
	CHECK(decide(&pd, PD_SHELL, W("~/p/a"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	CHECK_INT(pd_stop(&pd), 0);
	/* With no temporal rule nothing is written to the history. */
	char path[4096];
	(void)snprintf(path, sizeof(path), "%s/policy/history", state);
	CHECK(access(path, F_OK) < 0);
}

static void
test_pipelined(void)
{
	struct pd pd;
	fresh_state();
	struct pd_opts o = opts(basic_policy, NULL);
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	Box__DecideRequest req = BOX__DECIDE_REQUEST__INIT;
	req.action = "fs:read";
	CHECK_INT(pd_fields_from_json("{\"path\":\"~/a\",\"operation\":\"read_content\"}",
				      &req.input, &req.n_input),
		  0);
	uint64_t ids[50];
	for (int i = 0; i < 50; i++)
		CHECK_INT(pd_send_decide(&pd, PD_SHELL, &req, &ids[i]), 0);
	for (int i = 0; i < 50; i++) {
		Box__DecideReply *rep = NULL;
		uint64_t id = 0;
		CHECK_INT(pd_wait_reply(&pd, PD_SHELL, &rep, &id, 10000), 0);
		CHECK_INT(id, ids[i]);
		if (rep)
			box_msg_free(&rep->base);
	}
	pd_fields_free(req.input, req.n_input);
	CHECK_INT(pd_stop(&pd), 0);
}

static void
test_decision_log_exact(void)
{
	struct pd pd;
	fresh_state();
	/* 2023-11-14T22:13:20.123456789Z, then +1.5 s per event. */
	struct pd_opts o = opts(basic_policy, "1700000000123456789,1500000000");
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	CHECK(decide(&pd, PD_SHELL,
		     "{\"action\":\"fs:read\",\"input\":{\"path\":\"~/secret.txt\",\"operation\":"
		     "\"read_content\"}}",
		     false, BOX__DECISION_CAUSE__CAUSE_FORBIDDEN));
	CHECK(decide(&pd, PD_GATEWAY,
		     "{\"action\":\"http:request\",\"input\":{\"host\":\"api.example.com\",\"port\":443,"
		     "\"method\":\"GET\",\"path\":\"/v1/x\",\"body_bytes\":0,\"intercepted\":true}}",
		     false, BOX__DECISION_CAUSE__CAUSE_NO_MATCH));
	CHECK(decide(&pd, PD_SHELL,
		     "{\"action\":\"shell:exec\",\"input\":{\"command\":\"echo \\\"a'b\\\"\","
		     "\"program\":\"echo\",\"arg1\":\"a'b\",\"arg_count\":1,\"cwd\":\"~/p\"}}",
		     true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	CHECK_INT(pd_stop(&pd), 0);
	_cleanup_free_ char *log = slurp("decisions.jsonl");
	const char *want =
		"{\"time\":\"2023-11-14T22:13:21.623Z\",\"time_ns\":1700000001623456789,\"box\":\"demo\",\"id\":\"0123456789ab\","
		"\"action\":\"fs:read\",\"resource\":\"~/secret.txt\",\"verdict\":\"deny\","
		"\"cause\":\"forbidden\",\"rules\":[\"no_secrets\"],\"message\":\"policy denied this "
		"operation on '~/secret.txt' [policy: no_secrets]: Secrets stay unread.\","
		"\"source\":\"box-shell\",\"input\":{\"path\":\"~/secret.txt\",\"operation\":"
		"\"read_content\"}}\n"
		"{\"time\":\"2023-11-14T22:13:23.123Z\",\"time_ns\":1700000003123456789,\"box\":\"demo\",\"id\":\"0123456789ab\","
		"\"action\":\"http:request\",\"resource\":\"api.example.com:443/v1/x\","
		"\"verdict\":\"deny\",\"cause\":\"no_match\",\"rules\":[],\"message\":\"policy denied "
		"this operation on 'api.example.com:443/v1/x' [default-deny]: No permit policy "
		"matched this request.\",\"source\":\"box-gateway\",\"input\":{\"host\":"
		"\"api.example.com\",\"port\":443,\"method\":\"GET\",\"path\":\"/v1/x\","
		"\"body_bytes\":0,\"intercepted\":true}}\n"
		"{\"time\":\"2023-11-14T22:13:24.623Z\",\"time_ns\":1700000004623456789,\"box\":\"demo\",\"id\":\"0123456789ab\","
		"\"action\":\"shell:exec\",\"resource\":\"echo\",\"verdict\":\"permit\","
		"\"cause\":\"permitted\",\"rules\":[\"policy_2\"],\"message\":\"policy permitted "
		"this operation on 'echo'.\",\"source\":\"box-shell\",\"input\":{\"command\":"
		"\"echo \\\"a'b\\\"\",\"program\":\"echo\",\"arg1\":\"a'b\",\"arg_count\":1,"
		"\"cwd\":\"~/p\"}}\n";
	CHECK_STR(log, want);
}

/*
 * Every recorded outcome is one line (docs/boxctl.1.md): time, time_ns (the time the
 * engine stamped the event with), box, id, record, action, input, output
 * (a response's; none for an error), source — with a temporal policy and
 * without one. Under history_sync = batch the decisions wait for the group
 * commit; an outcome recorded meanwhile waits behind them, so the lines stay
 * in the order of their times (replay re-decides in that order).
 */
static void
test_outcome_lines(void)
{
	static const char *const tag[2] = { "temporal", "plain" };
	for (int k = 0; k < 2; k++) {
		struct pd pd;
		fresh_state();
		struct pd_opts o = opts(k == 0 ? budget_v1 : basic_policy, "1700000000000000000,1000000");
		CHECK_INT(pd_start(&o, &pd, NULL), 0);
		/* Each channel's messages are handled in order: a Decide's reply is a sync point. */
		CHECK(decide(&pd, PD_SHELL, W("~/o/a"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
		CHECK_INT(pd_send_line(&pd, PD_SHELL, W_DONE("~/o/a"), NULL), 0);
		CHECK(decide(&pd, PD_SHELL, W("~/o/b"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
		CHECK_INT(pd_send_line(&pd, PD_SHELL,
				       "{\"record\":\"error\",\"action\":\"fs:write\",\"input\":"
				       "{\"path\":\"~/o/b\",\"operation\":\"write_content\"}}",
				       NULL),
			  0);
		CHECK(decide(&pd, PD_GATEWAY,
			     "{\"action\":\"net:connect\",\"input\":{\"host\":\"h.example\",\"port\":80}}",
			     false, BOX__DECISION_CAUSE__CAUSE_NO_MATCH));
		CHECK_INT(pd_stop(&pd), 0);
		_cleanup_free_ char *log = slurp("decisions.jsonl");
		/* The clock: one reading at start, then one per event, 1 ms apart. */
		const char *want[] = {
			"{\"time\":\"2023-11-14T22:13:20.001Z\",\"time_ns\":1700000000001000000,"
			"\"box\":\"demo\",\"id\":\"0123456789ab\",\"action\":\"fs:write\","
			"\"resource\":\"~/o/a\",\"verdict\":\"permit\"",
			"\n{\"time\":\"2023-11-14T22:13:20.002Z\",\"time_ns\":1700000000002000000,"
			"\"box\":\"demo\",\"id\":\"0123456789ab\",\"record\":\"response\","
			"\"action\":\"fs:write\",\"input\":{\"path\":\"~/o/a\",\"operation\":"
			"\"write_content\"},\"output\":{\"result\":\"completed\"},\"source\":"
			"\"box-shell\"}\n",
			"\n{\"time\":\"2023-11-14T22:13:20.003Z\",\"time_ns\":1700000000003000000,"
			"\"box\":\"demo\",\"id\":\"0123456789ab\",\"action\":\"fs:write\","
			"\"resource\":\"~/o/b\"",
			"\n{\"time\":\"2023-11-14T22:13:20.004Z\",\"time_ns\":1700000000004000000,"
			"\"box\":\"demo\",\"id\":\"0123456789ab\",\"record\":\"error\","
			"\"action\":\"fs:write\",\"input\":{\"path\":\"~/o/b\",\"operation\":"
			"\"write_content\"},\"source\":\"box-shell\"}\n",
			"\n{\"time\":\"2023-11-14T22:13:20.005Z\",\"time_ns\":1700000000005000000,"
			"\"box\":\"demo\",\"id\":\"0123456789ab\",\"action\":\"net:connect\"",
		};
		const char *at = log;
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			const char *p = at ? strstr(at, want[i]) : NULL;
			CHECK(p != NULL);
			if (!p)
				printf("# %s: line %zu missing or out of order in:\n%s", tag[k], i, log);
			at = p ? p + 1 : NULL;
		}
		/* never a body or a secret: the lines hold the actions' input fields only */
		CHECK(strstr(log, "\"body\"") == NULL);
	}
}

/*
 * history_sync = batch: decisions wait for the group fsync (slowed here); an
 * outcome recorded while they wait gets its line after theirs, in time order.
 */
/*
 * RecordBatch (box-shell's outcomes of a walk): each record a line of its
 * own and a history event, in order, exactly as if sent one by one (the
 * temporal budget counts them as it counts single records).
 */
static void
test_record_batch(void)
{
	struct pd pd;
	fresh_state();
	struct pd_opts o = opts(basic_policy, "1700000000000000000,1000000");
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	static const char *const paths[3] = { "~/rb/a", "~/rb/b", "~/rb/c" };
	/* Decided as one batch: its i-th request is named by the batch's id + i. */
	static const char *const asked[3] = {
		"{\"action\":\"fs:read\",\"input\":{\"path\":\"~/rb/a\",\"operation\":\"read_content\"}}",
		"{\"action\":\"fs:read\",\"input\":{\"path\":\"~/rb/b\",\"operation\":\"read_content\"}}",
		"{\"action\":\"fs:read\",\"input\":{\"path\":\"~/rb/c\",\"operation\":\"read_content\"}}",
	};
	CHECK_INT(pd_send_batch(&pd, PD_SHELL, asked, 3, NULL), 0);
	uint64_t first = pd.last_decide_id;
	Box__RecordRequest rec[3], *recp[3];
	Box__PolicyField f[3][3], *out[3][1];
	Box__PolicyValue v[3][3];
	for (int i = 0; i < 3; i++) {
		static const char *const names[3] = { "path", "operation", "result" };
		const char *vals[3] = { paths[i], "read_content", "descriptor_issued" };
		box__record_request__init(&rec[i]);
		for (int k = 0; k < 3; k++) {
			box__policy_field__init(&f[i][k]);
			box__policy_value__init(&v[i][k]);
			f[i][k].name = (char *)names[k];
			f[i][k].value = &v[i][k];
			v[i][k].kind_case = BOX__POLICY_VALUE__KIND_STR;
			v[i][k].str = (char *)vals[k];
		}
		out[i][0] = &f[i][2];
		rec[i].kind = BOX__EVENT_KIND__EVENT_RESPONSE;
		rec[i].action = "fs:read";
		rec[i].decide_id = first + (uint64_t)i;
		rec[i].output = out[i];
		rec[i].n_output = 1;
		recp[i] = &rec[i];
	}
	Box__RecordBatch b = BOX__RECORD_BATCH__INIT;
	b.records = recp;
	b.n_records = 3;
	CHECK_INT(box_ipc_send(pd.fd[PD_SHELL], &box_proto_policy, BOX__MSG_TYPE__MSG_RECORD_BATCH,
			       pd.next_id++, &b.base, NULL, 0),
		  0);
	/* a decision after it on the same channel: its line comes after all three */
	CHECK(decide(&pd, PD_SHELL, W("~/rb/d"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	CHECK_INT(pd_stop(&pd), 0);
	_cleanup_free_ char *log = slurp("decisions.jsonl");
	const char *want[] = {
		"\"record\":\"response\",\"action\":\"fs:read\",\"input\":{\"path\":\"~/rb/a\","
		"\"operation\":\"read_content\"},\"output\":{\"result\":\"descriptor_issued\"},"
		"\"source\":\"box-shell\"}\n",
		"\"record\":\"response\",\"action\":\"fs:read\",\"input\":{\"path\":\"~/rb/b\"",
		"\"record\":\"response\",\"action\":\"fs:read\",\"input\":{\"path\":\"~/rb/c\"",
		"\"action\":\"fs:write\",\"resource\":\"~/rb/d\"",
	};
	const char *at = log;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const char *p = at ? strstr(at, want[i]) : NULL;
		CHECK(p != NULL);
		if (!p)
			printf("# line %zu missing or out of order in:\n%s", i, log);
		at = p ? p + 1 : NULL;
	}
	/* one line each: three record lines, not one */
	int n = 0;
	for (const char *p = strstr(log, "\"record\":"); p; p = strstr(p + 1, "\"record\":"))
		n++;
	CHECK_INT(n, 3);
}

static void
test_outcome_waits_behind_held(void)
{
	struct pd pd;
	fresh_state();
	struct pd_opts o = opts(budget_v1, "1700000000000000000,1000000");
	o.history_sync = "batch";
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	Box__DecideRequest m = BOX__DECIDE_REQUEST__INIT;
	m.action = "fs:write";
	CHECK_INT(pd_fields_from_json("{\"path\":\"~/h/1\",\"operation\":\"write_content\"}",
				      &m.input, &m.n_input),
		  0);
	uint64_t id = 0, got = 0;
	/* An earlier write (on boxd's channel: a supervised program's), answered. */
	CHECK(decide(&pd, PD_BOXD, W("~/h/0"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	/* The decide, then at once the outcome of the earlier write, before any reply. */
	CHECK_INT(pd_send_decide(&pd, PD_SHELL, &m, &id), 0);
	CHECK_INT(pd_send_line(&pd, PD_BOXD, W_DONE("~/h/0"), NULL), 0);
	Box__DecideReply *rep = NULL;
	CHECK_INT(pd_wait_reply(&pd, PD_SHELL, &rep, &got, 20000), 0);
	if (rep)
		box_msg_free(&rep->base);
	pd_fields_free(m.input, m.n_input);
	CHECK_INT(pd_stop(&pd), 0);
	_cleanup_free_ char *log = slurp("decisions.jsonl");
	const char *d = strstr(log, "\"resource\":\"~/h/1\"");
	CHECK(strstr(log, "\"resource\":\"~/h/0\"") < d);
	const char *r = strstr(log, "\"record\":\"response\"");
	CHECK(d && r && d < r);
	/* and the times go up line by line */
	long long prev = 0;
	bool up = true;
	for (const char *p = strstr(log, "\"time_ns\":"); p; p = strstr(p + 1, "\"time_ns\":")) {
		long long t = atoll(p + 10);
		up = up && t > prev;
		prev = t;
	}
	CHECK(up && prev > 0);
}

/*
 * The reply goes out first and the line follows within POLICYD_LOG_FLUSH_MS
 * (one write for every line of that interval): `boxctl log -f` sees it while
 * box-policyd still runs, not only when it exits.
 */
static void
test_decision_log_live(void)
{
	struct pd pd;
	fresh_state();
	struct pd_opts o = opts(basic_policy, NULL);
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	CHECK(decide(&pd, PD_SHELL, W("~/live"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	bool seen = false;
	for (int i = 0; i < 200 && !seen; i++) {
		_cleanup_free_ char *log = slurp("decisions.jsonl");
		seen = strstr(log, "\"~/live\"") != NULL;
		if (!seen)
			(void)usleep(10000);
	}
	CHECK(seen);
	CHECK_INT(pd_stop(&pd), 0);
}

/* systemd stops the whole cgroup with SIGTERM: the buffered lines are written first. */
static void
test_sigterm_flushes(void)
{
	struct pd pd;
	fresh_state();
	struct pd_opts o = opts(basic_policy, NULL);
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	CHECK(decide(&pd, PD_SHELL, W("~/last"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	int status = 0;
	CHECK_INT(kill(pd.pid, SIGTERM), 0);
	CHECK_INT(waitpid(pd.pid, &status, 0), pd.pid);
	pd.pid = -1;
	/* A clean exit, not SIGSYS from the allow-list on the way out. */
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	_cleanup_free_ char *log = slurp("decisions.jsonl");
	CHECK(strstr(log, "\"~/last\"") != NULL);
	pd_kill(&pd);
}

static char *slurp_bin(const char *rel, size_t *len);

static void
test_log_rotation(void)
{
	struct pd pd;
	fresh_state();
	struct pd_opts o = opts(basic_policy, NULL);
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	CHECK(decide(&pd, PD_SHELL, W("~/one"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	/* boxd renames the file to .1 and passes a new one. */
	char a[4096], b[4096];
	(void)snprintf(a, sizeof(a), "%s/decisions.jsonl", state);
	(void)snprintf(b, sizeof(b), "%s/decisions.jsonl.1", state);
	CHECK_INT(rename(a, b), 0);
	int fd = open(a, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	Box__PolicyLogFd m = BOX__POLICY_LOG_FD__INIT;
	m.generation = 1;
	CHECK_INT(box_ipc_send(pd.fd[PD_BOXD], &box_proto_policy, BOX__MSG_TYPE__MSG_POLICY_LOG_FD,
			       99, &m.base, &fd, 1),
		  0);
	close(fd);
	/* On boxd's channel, so policyd has taken the new fd before it decides. */
	CHECK(decide(&pd, PD_BOXD, W("~/two"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	/* the head it had when it took the new fd: the rotation point (the old file's one line) */
	CHECK_INT(pd.log_heads_rotated, 1);
	CHECK(pd.log_head_seq >= 1);
	CHECK_INT(pd_stop_sealed(&pd), 0);
	CHECK_INT(pd.log_heads_sealed, 1);
	CHECK_INT(pd.log_head_seq, 3); /* ~/one, ~/two, the seal */
	_cleanup_free_ char *cur = slurp("decisions.jsonl");
	_cleanup_free_ char *old = slurp("decisions.jsonl.1");
	CHECK(strstr(old, "\"~/one\"") && !strstr(old, "\"~/two\""));
	CHECK(strstr(cur, "\"~/two\"") && !strstr(cur, "\"~/one\""));
	/* one chain across the rotation: the raw files, old then new */
	_cleanup_free_ char *raw_old = NULL, *raw_cur = NULL;
	size_t lo = 0, lc = 0;
	raw_old = slurp_bin("decisions.jsonl.1", &lo);
	raw_cur = slurp_bin("decisions.jsonl", &lc);
	_cleanup_free_ char *both = NULL;
	CHECK(asprintf(&both, "%s%s", raw_old ? raw_old : "", raw_cur ? raw_cur : "") > 0);
	CHECK(pd_unchain_log(&both));
	CHECK(raw_cur && strstr(raw_cur, "\"seal\":\"end\",\"lines\":2,\"seq\":3,"));
}

/*
 * The chain goes on from the head boxd kept (PolicyInit.log_head): the first
 * line follows it; boxd gets a head after the lines are written and the sealed
 * head at the end (the seal line's SHA-256).
 */
static void
test_chain_goes_on(void)
{
	struct pd pd;
	fresh_state();
	struct pd_opts o = opts(basic_policy, NULL);
	o.log_head_seq = 41;
	memset(o.log_head, 0xab, sizeof(o.log_head));
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	CHECK(decide(&pd, PD_SHELL, W("~/c1"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	CHECK(decide(&pd, PD_BOXD, W("~/c2"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	CHECK_INT(pd_stop_sealed(&pd), 0);
	CHECK_INT(pd.log_heads_sealed, 1);
	CHECK_INT(pd.log_head_seq, 44);
	size_t n = 0;
	_cleanup_free_ char *raw = slurp_bin("decisions.jsonl", &n);
	CHECK(raw && strstr(raw, "\"seq\":42,\"prev\":\"abababababababababababababababababababab"
				 "abababababababababababab\"}\n"));
	CHECK(raw && strstr(raw, "\"seal\":\"end\",\"lines\":2,\"seq\":44,"));
	_cleanup_free_ char *copy = raw ? strdup(raw) : NULL;
	CHECK(pd_unchain_log(&copy));
}

static void
test_no_policy(void)
{
	struct pd pd;
	Box__PolicyReady *ready = NULL;
	fresh_state();
	struct pd_opts o = opts(NULL, NULL);
	CHECK_INT(pd_start(&o, &pd, &ready), 0);
	if (ready) {
		CHECK(ready->ok);
		CHECK_INT(ready->rules, 0);
		box_msg_free(&ready->base);
	}
	CHECK(decide(&pd, PD_SHELL, W("~/a"), false, BOX__DECISION_CAUSE__CAUSE_NO_MATCH));
	CHECK_INT(pd_stop(&pd), 0);
}

static void
test_bad_policy_refuses(void)
{
	struct pd pd;
	Box__PolicyReady *ready = NULL;
	fresh_state();
	struct pd_opts o = opts("permit (principal, action == Box::Action::\"fs:nope\", resource);",
				NULL);
	CHECK_INT(pd_start(&o, &pd, &ready), 0);
	if (ready) {
		CHECK(!ready->ok);
		CHECK(ready->message && strstr(ready->message, "does not load"));
		box_msg_free(&ready->base);
	}
	CHECK_INT(pd_stop(&pd), 1);
}

static void
test_peer_close(void)
{
	struct pd pd;
	fresh_state();
	struct pd_opts o = opts(basic_policy, NULL);
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	/* The shell going away does not end policyd... */
	box_ipc_chan_freep(&pd.chan[PD_SHELL]);
	pd.fd[PD_SHELL] = safe_close(pd.fd[PD_SHELL]);
	CHECK(decide(&pd, PD_BOXD, W("~/a"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	/*
	 * ...boxd going away does (exit 0), once the peers still open have said their
	 * last (boxd ends them beside it): the gateway is still answered meanwhile.
	 */
	box_ipc_chan_freep(&pd.chan[PD_BOXD]);
	pd.fd[PD_BOXD] = safe_close(pd.fd[PD_BOXD]);
	CHECK_INT(pd_exited_within(&pd, 200), -1);
	CHECK(decide(&pd, PD_GATEWAY,
		     "{\"action\":\"net:connect\",\"input\":{\"host\":\"after.example\",\"port\":80}}",
		     false, BOX__DECISION_CAUSE__CAUSE_NO_MATCH));
	box_ipc_chan_freep(&pd.chan[PD_GATEWAY]);
	pd.fd[PD_GATEWAY] = safe_close(pd.fd[PD_GATEWAY]);
	CHECK_INT(pd_exited_within(&pd, 200), -1); /* box-mcpd's channel is still open */
	box_ipc_chan_freep(&pd.chan[PD_MCPD]);
	pd.fd[PD_MCPD] = safe_close(pd.fd[PD_MCPD]);
	/* well inside its 4 s bound: the last peer's close ended it */
	CHECK_INT(pd_exited_within(&pd, 3000), 0);
	_cleanup_free_ char *log = slurp("decisions.jsonl");
	CHECK(strstr(log, "\"after.example\"") != NULL);
	pd_stop(&pd);
}

/* boxd gone and a peer that never closes: box-policyd ends anyway, after its bound. */
static void
test_peers_end_bound(void)
{
	struct pd pd;
	fresh_state();
	struct pd_opts o = opts(basic_policy, NULL);
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	CHECK(decide(&pd, PD_SHELL, W("~/kept"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	box_ipc_chan_freep(&pd.chan[PD_BOXD]);
	pd.fd[PD_BOXD] = safe_close(pd.fd[PD_BOXD]);
	CHECK_INT(pd_exited_within(&pd, 20000), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	CHECK(ms >= POLICYD_PEERS_END_WAIT_MS - 50);
	if (ms < POLICYD_PEERS_END_WAIT_MS - 50)
		printf("#   ended %ld ms after boxd's close, before its %d ms bound\n", ms,
		       POLICYD_PEERS_END_WAIT_MS);
	_cleanup_free_ char *log = slurp("decisions.jsonl");
	CHECK(strstr(log, "\"~/kept\"") != NULL);
	pd_stop(&pd);
}

static void
test_protocol_error_is_fatal(void)
{
	struct pd pd;
	fresh_state();
	struct pd_opts o = opts(basic_policy, NULL);
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	CHECK_INT(write(pd.fd[PD_SHELL], "garbage", 7), 7);
	int status = 0;
	CHECK_INT(waitpid(pd.pid, &status, 0), pd.pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	pd.pid = -1;
	pd_stop(&pd);
	/* A type the shell may not send (PolicyLogFd) is fatal too. */
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	Box__PolicyLogFd m = BOX__POLICY_LOG_FD__INIT;
	m.generation = 1;
	int fd = open("/dev/null", O_WRONLY | O_APPEND | O_CLOEXEC);
	CHECK_INT(box_ipc_send(pd.fd[PD_SHELL], &box_proto_policy, BOX__MSG_TYPE__MSG_POLICY_LOG_FD,
			       5, &m.base, &fd, 1),
		  0);
	close(fd);
	CHECK_INT(waitpid(pd.pid, &status, 0), pd.pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	pd.pid = -1;
	pd_stop(&pd);
}

/*
 * 200 forbids match one request: the message lists them sorted by id (the
 * sort must not need a system call the allow-list refuses).
 */
static void
test_many_forbids(void)
{
	struct pd pd;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	for (int i = 199; i >= 0; i--)
		fprintf(f, "@id(\"f%03d\") forbid (principal, action == Box::Action::\"fs:read\", "
			   "resource);\n",
			i);
	fclose(f);
	fresh_state();
	struct pd_opts o = opts(text, NULL);
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	Box__DecideReply *rep = NULL;
	CHECK_INT(pd_send_line(&pd, PD_SHELL,
			       "{\"action\":\"fs:read\",\"input\":{\"path\":\"~/a\","
			       "\"operation\":\"read_content\"}}",
			       &rep),
		  0);
	if (rep) {
		CHECK_INT(rep->cause, BOX__DECISION_CAUSE__CAUSE_FORBIDDEN);
		CHECK_INT(rep->n_rules, 200);
		CHECK(strncmp(rep->message,
			      "policy denied this operation on '~/a' [policy: f000]; [policy: f001]; "
			      "[policy: f002];",
			      80) == 0);
		CHECK(strstr(rep->message, "[policy: f198]; [policy: f199].") != NULL);
		box_msg_free(&rep->base);
	}
	CHECK_INT(pd_stop(&pd), 0);
	free(text);
}

/* ---- temporal ---------------------------------------------------------------------- */

static bool
need_monitor(void)
{
	if (!have_monitor)
		SKIP("box-policyd was built without the temporal monitor");
	return have_monitor;
}

/* Six writes and six deletes with their responses, 1 s apart from T0. */
static void
spend_budgets(struct pd *pd)
{
	for (int i = 0; i < 6; i++) {
		CHECK(decide(pd, PD_SHELL, W("~/p/f"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
		record(pd, PD_SHELL, W_DONE("~/p/f"));
		CHECK(decide(pd, PD_SHELL, D("~/p/g"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
		record(pd, PD_SHELL, D_DONE("~/p/g"));
	}
	CHECK(decide(pd, PD_SHELL, W("~/p/f"), false, BOX__DECISION_CAUSE__CAUSE_FORBIDDEN));
	CHECK(decide(pd, PD_SHELL, D("~/p/g"), false, BOX__DECISION_CAUSE__CAUSE_FORBIDDEN));
}

#define T0 "1700000000000000000"
#define T0_PLUS_30S "1700000030000000000"
#define T0_PLUS_40S "1700000040000000000"
#define T0_PLUS_120S "1700000120000000000"

static void
test_history_survives_restart(void)
{
	struct pd pd;
	Box__PolicyReady *ready = NULL;
	fresh_state();
	struct pd_opts o = opts(budget_v1, T0 ",1000000000");
	CHECK_INT(pd_start(&o, &pd, &ready), 0);
	if (ready && !ready->ok && ready->message && strstr(ready->message, "temporal monitor"))
		have_monitor = false;
	if (ready)
		box_msg_free(&ready->base);
	if (!need_monitor()) {
		pd_stop(&pd);
		return;
	}
	spend_budgets(&pd);
	CHECK_INT(pd_stop(&pd), 0);

	/* 30 s later, same policy: both budgets still spent. */
	o = opts(budget_v1, T0_PLUS_30S ",1000000000");
	ready = NULL;
	CHECK_INT(pd_start(&o, &pd, &ready), 0);
	if (ready) {
		CHECK(ready->ok);
		CHECK_INT(ready->temporal_rules, 2);
		CHECK_INT(ready->rules_kept, 2);
		CHECK_INT(ready->history_events, 26);
		box_msg_free(&ready->base);
	}
	CHECK(decide(&pd, PD_SHELL, W("~/p/f"), false, BOX__DECISION_CAUSE__CAUSE_FORBIDDEN));
	CHECK(decide(&pd, PD_SHELL, D("~/p/g"), false, BOX__DECISION_CAUSE__CAUSE_FORBIDDEN));
	CHECK_INT(pd_stop(&pd), 0);

	/* Two minutes later the window has passed. */
	o = opts(budget_v1, T0_PLUS_120S ",1000000000");
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	CHECK(decide(&pd, PD_SHELL, W("~/p/f"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	CHECK_INT(pd_stop(&pd), 0);
}

static void
test_restart_keeps_unchanged_resets_edited(void)
{
	struct pd pd;
	Box__PolicyReady *ready = NULL;
	if (!need_monitor())
		return;
	fresh_state();
	struct pd_opts o = opts(budget_v1, T0 ",1000000000");
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	spend_budgets(&pd);
	CHECK_INT(pd_stop(&pd), 0);

	/* v2: write_budget only gained a description (kept); delete_budget was edited (reset). */
	o = opts(budget_v2, T0_PLUS_30S ",1000000000");
	CHECK_INT(pd_start(&o, &pd, &ready), 0);
	if (ready) {
		CHECK(ready->ok);
		CHECK_INT(ready->rules_kept, 1);
		box_msg_free(&ready->base);
	}
	Box__DecideReply *rep = NULL;
	CHECK_INT(pd_send_line(&pd, PD_SHELL, W("~/p/f"), &rep), 0);
	if (rep) {
		CHECK_INT(rep->cause, BOX__DECISION_CAUSE__CAUSE_FORBIDDEN);
		CHECK_STR(rep->message, "policy denied this operation on '~/p/f' "
					"[policy: write_budget]: Budget reached.");
		box_msg_free(&rep->base);
	}
	CHECK(decide(&pd, PD_SHELL, D("~/p/g"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	CHECK_INT(pd_stop(&pd), 0);

	/* Back to v1: delete_budget was not live in the last run, so it starts empty again. */
	o = opts(budget_v1, T0_PLUS_40S ",1000000000");
	CHECK_INT(pd_start(&o, &pd, &ready), 0);
	if (ready) {
		CHECK_INT(ready->rules_kept, 1);
		box_msg_free(&ready->base);
	}
	CHECK(decide(&pd, PD_SHELL, W("~/p/f"), false, BOX__DECISION_CAUSE__CAUSE_FORBIDDEN));
	CHECK(decide(&pd, PD_SHELL, D("~/p/g"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	CHECK_INT(pd_stop(&pd), 0);
}

static int
copy_file(const char *from, const char *to, off_t len)
{
	char cmd[16384];
	(void)snprintf(cmd, sizeof(cmd), "cp -f '%s' '%s' && truncate -s %lld '%s'", from, to,
		       (long long)len, to);
	return system(cmd);
}

static void
test_torn_last_record(void)
{
	struct pd pd;
	if (!need_monitor())
		return;
	fresh_state();
	char hist[4096], saved[4096];
	(void)snprintf(hist, sizeof(hist), "%s/policy/history", state);
	(void)snprintf(saved, sizeof(saved), "%s/history.saved", state);

	/* Five writes with responses; remember the size before the last response. */
	struct pd_opts o = opts(budget_v1, T0 ",1000000000");
	o.history_sync = "always";
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	struct stat st;
	off_t before = 0;
	for (int i = 0; i < 5; i++) {
		CHECK(decide(&pd, PD_SHELL, W("~/p/f"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
		if (i == 4) {
			CHECK_INT(stat(hist, &st), 0);
			before = st.st_size;
		}
		record(&pd, PD_SHELL, W_DONE("~/p/f"));
	}
	CHECK_INT(pd_stop(&pd), 0);
	CHECK_INT(stat(hist, &st), 0);
	off_t full = st.st_size;
	CHECK(before > 0 && full > before);
	CHECK_INT(copy_file(hist, saved, full), 0);

	/*
	 * Cut the file at every byte of the last record (the fifth response):
	 * it is dropped, the start succeeds with 4 responses, so a sixth write
	 * plus response is still allowed once and then the budget is spent.
	 */
	unsigned bad = 0;
	for (off_t cut = before; cut < full; cut++) {
		Box__PolicyReady *ready = NULL;
		CHECK_INT(copy_file(saved, hist, cut), 0);
		o = opts(budget_v1, T0_PLUS_30S ",1000000000");
		if (pd_start(&o, &pd, &ready) < 0 || !ready || !ready->ok ||
		    ready->history_events != 9 + (cut == full ? 1 : 0)) {
			printf("#   cut at %lld: %s\n", (long long)cut,
			       ready && ready->message ? ready->message : "no ready");
			bad++;
		}
		if (ready)
			box_msg_free(&ready->base);
		bool ok = decide(&pd, PD_SHELL, W("~/p/f"), true,
				 BOX__DECISION_CAUSE__CAUSE_PERMITTED);
		record(&pd, PD_SHELL, W_DONE("~/p/f"));
		ok = ok && decide(&pd, PD_SHELL, W("~/p/f"), true,
				  BOX__DECISION_CAUSE__CAUSE_PERMITTED);
		record(&pd, PD_SHELL, W_DONE("~/p/f"));
		ok = ok && decide(&pd, PD_SHELL, W("~/p/f"), false,
				  BOX__DECISION_CAUSE__CAUSE_FORBIDDEN);
		if (!ok) {
			printf("#   cut at %lld: wrong decisions after recovery\n", (long long)cut);
			bad++;
		}
		if (pd_stop(&pd) != 0)
			bad++;
	}
	CHECK_INT(bad, 0);
}

static void
test_corrupt_middle_refuses(void)
{
	struct pd pd;
	Box__PolicyReady *ready = NULL;
	if (!need_monitor())
		return;
	fresh_state();
	char hist[4096];
	(void)snprintf(hist, sizeof(hist), "%s/policy/history", state);
	struct pd_opts o = opts(budget_v1, T0 ",1000000000");
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	spend_budgets(&pd);
	CHECK_INT(pd_stop(&pd), 0);
	struct stat st;
	CHECK_INT(stat(hist, &st), 0);
	/* Flip one byte in the middle. */
	int fd = open(hist, O_RDWR | O_CLOEXEC);
	unsigned char b = 0;
	CHECK_INT(pread(fd, &b, 1, st.st_size / 2), 1);
	b ^= 0x5a;
	CHECK_INT(pwrite(fd, &b, 1, st.st_size / 2), 1);
	close(fd);
	CHECK_INT(pd_start(&o, &pd, &ready), 0);
	if (ready) {
		CHECK(!ready->ok);
		CHECK(ready->message && strstr(ready->message, "history") &&
		      strstr(ready->message, "at byte"));
		box_msg_free(&ready->base);
	}
	CHECK_INT(pd_stop(&pd), 1);
	/* The file is left as it was for the operator. */
	struct stat st2;
	CHECK_INT(stat(hist, &st2), 0);
	CHECK_INT(st2.st_size, st.st_size);
	_cleanup_free_ char *err = slurp("stderr");
	CHECK(strstr(err, "Refusing to start") != NULL);
}

static void
test_unwritable_history_denies(void)
{
	struct pd pd;
	if (!need_monitor())
		return;
	fresh_state();
	char hist[4096];
	(void)snprintf(hist, sizeof(hist), "%s/policy/history", state);
	struct pd_opts o = opts(budget_v1, T0 ",1000000000");
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	CHECK(decide(&pd, PD_SHELL, W("~/p/f"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	/* From now on no file of policyd's may grow: the next history append fails. */
	struct stat st;
	CHECK_INT(stat(hist, &st), 0);
	struct rlimit rl = { (rlim_t)st.st_size, (rlim_t)st.st_size };
	CHECK_INT(prlimit(pd.pid, RLIMIT_FSIZE, &rl, NULL), 0);
	Box__DecideReply *rep = NULL;
	CHECK_INT(pd_send_line(&pd, PD_SHELL, W("~/p/f"), &rep), 0);
	if (rep) {
		CHECK_INT(rep->verdict, BOX__DECISION_VERDICT__VERDICT_DENY);
		CHECK_INT(rep->cause, BOX__DECISION_CAUSE__CAUSE_ERROR);
		CHECK_STR(rep->message, "policy denied this operation on '~/p/f' because the "
					"request could not be evaluated.");
		box_msg_free(&rep->base);
	}
	/* And it stays that way, even when the limit is lifted. */
	rl.rlim_cur = rl.rlim_max = RLIM_INFINITY;
	(void)prlimit(pd.pid, RLIMIT_FSIZE, &rl, NULL);
	CHECK(decide(&pd, PD_SHELL, W("~/p/f"), false, BOX__DECISION_CAUSE__CAUSE_ERROR));
	CHECK_INT(pd_stop(&pd), 0);
	/* The file holds only whole records: the next start reads it. */
	Box__PolicyReady *ready = NULL;
	CHECK_INT(pd_start(&o, &pd, &ready), 0);
	if (ready) {
		CHECK(ready->ok);
		CHECK_INT(ready->history_events, 1);
		box_msg_free(&ready->base);
	}
	CHECK_INT(pd_stop(&pd), 0);
}

/*
 * Long enough for the history to be compacted while running (> 1 MiB):
 * 8000 reads with responses 10 ms apart (160 s), then the 6 writes the
 * budget allows; the file keeps only what the 60 s window can still see,
 * and the state after a restart is intact. (A Record names a permit: only a
 * permitted request has an outcome, so the bulk are reads, which no budget
 * denies.)
 */
static void
test_compaction(void)
{
	struct pd pd;
	Box__PolicyReady *ready = NULL;
	if (!need_monitor())
		return;
	fresh_state();
	char hist[4096];
	(void)snprintf(hist, sizeof(hist), "%s/policy/history", state);
	struct pd_opts o = opts(budget_v1, T0 ",10000000");
	o.history_sync = "off";
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	unsigned bad = 0;
	for (int i = 0; i < 8000 + 6; i++) {
		Box__DecideReply *rep = NULL;
		bool w = i >= 8000;
		if (pd_send_line(&pd, PD_SHELL, w ? W("~/p/f") : R("~/p/f"), &rep) < 0)
			bad++;
		else
			box_msg_free(&rep->base);
		if (pd_send_line(&pd, PD_SHELL, w ? W_DONE("~/p/f") : R_DONE("~/p/f"), NULL) < 0)
			bad++;
	}
	CHECK_INT(bad, 0);
	CHECK_INT(pd_stop(&pd), 0);
	struct stat st;
	CHECK_INT(stat(hist, &st), 0);
	/* Uncompacted it would be 16000 events of ~93 bytes (1.5 MB). */
	printf("#   history after 16000 events: %lld bytes\n", (long long)st.st_size);
	CHECK(st.st_size < (1300 << 10));
	/* 30 s after the last event: the window still holds hundreds of responses. */
	o = opts(budget_v1, "1700000190000000000,1000000");
	CHECK_INT(pd_start(&o, &pd, &ready), 0);
	if (ready) {
		CHECK(ready->ok);
		CHECK_INT(ready->rules_kept, 2);
		printf("#   recovered %llu events\n", (unsigned long long)ready->history_events);
		CHECK(ready->history_events > 6000 && ready->history_events < 16000);
		box_msg_free(&ready->base);
	}
	CHECK(decide(&pd, PD_SHELL, W("~/p/f"), false, BOX__DECISION_CAUSE__CAUSE_FORBIDDEN));
	CHECK_INT(pd_stop(&pd), 0);
	/* Long after: nothing left in the window. */
	o = opts(budget_v1, "1700000400000000000,1000000");
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	CHECK(decide(&pd, PD_SHELL, W("~/p/f"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	CHECK_INT(pd_stop(&pd), 0);
}

static void
test_sync_modes(void)
{
	static const char *modes[] = { "always", "batch", "off" };
	if (!need_monitor())
		return;
	for (size_t m = 0; m < ELEMENTSOF(modes); m++) {
		struct pd pd;
		Box__PolicyReady *ready = NULL;
		fresh_state();
		struct pd_opts o = opts(budget_v1, T0 ",1000000000");
		o.history_sync = modes[m];
		CHECK_INT(pd_start(&o, &pd, NULL), 0);
		spend_budgets(&pd);
		CHECK_INT(pd_stop(&pd), 0);
		o = opts(budget_v1, T0_PLUS_30S ",1000000000");
		o.history_sync = modes[m];
		CHECK_INT(pd_start(&o, &pd, &ready), 0);
		if (ready) {
			CHECK_INT(ready->history_events, 26);
			box_msg_free(&ready->base);
		}
		CHECK(decide(&pd, PD_SHELL, W("~/p/f"), false, BOX__DECISION_CAUSE__CAUSE_FORBIDDEN));
		CHECK_INT(pd_stop(&pd), 0);
	}
}

/* ---- the group commit (history_sync = batch) ---------------------------------- */

static int64_t
mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The exit summary in policyd's stderr: "N decisions, M history fsyncs"; -1 if absent. */
static long long
fsyncs_at_exit(long long *decisions)
{
	_cleanup_free_ char *err = slurp("stderr");
	const char *p = strstr(err, " history fsyncs");
	long long d = -1, f = -1;
	if (!p)
		return -1;
	const char *line = p;
	while (line > err && line[-1] != '\n')
		line--;
	const char *colon = strstr(line, ": ");
	while (colon && colon < p) {
		if (sscanf(colon + 2, "%lld decisions, %lld history fsyncs", &d, &f) == 2)
			break;
		colon = strstr(colon + 2, ": ");
	}
	if (decisions)
		*decisions = d;
	return f;
}

/* fs:write of ~/p/NAME as a DecideRequest (free with write_req_free). */
static void
write_req(Box__DecideRequest *req, const char *name, bool fits)
{
	char json[256];
	box__decide_request__init(req);
	req->action = "fs:write";
	if (fits)
		(void)snprintf(json, sizeof(json),
			       "{\"path\":\"~/p/%s\",\"operation\":\"write_content\"}", name);
	else /* no operation: does not fit the schema, so nothing is written for it */
		(void)snprintf(json, sizeof(json), "{\"path\":\"~/p/%s\"}", name);
	if (pd_fields_from_json(json, &req->input, &req->n_input) < 0)
		abort();
}

static void
write_req_free(Box__DecideRequest *req)
{
	pd_fields_free(req->input, req->n_input);
}

static bool
file_has(const char *rel, const char *needle)
{
	char path[4096];
	(void)snprintf(path, sizeof(path), "%s/%s", state, rel);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return false;
	_cleanup_free_ char *buf = malloc((size_t)st.st_size + 1);
	if (!buf || read(fd, buf, (size_t)st.st_size) != st.st_size)
		return false;
	buf[st.st_size] = '\0';
	size_t len = (size_t)st.st_size;
	/* the decision log as the tests spell its lines: without the chain */
	if (strncmp(rel, "decisions.jsonl", 15) == 0) {
		if (!pd_unchain_log(&buf))
			return false;
		len = strlen(buf);
	}
	return memmem(buf, len, needle, strlen(needle)) != NULL;
}

/*
 * 64 Decides in flight on one channel (the gateway's), batch, every fsync
 * slowed by 150 ms: all 64 answered in request order with their ids; the
 * first reply came only after a fsync (>= 150 ms); the 64 shared a few
 * fsyncs (a timer, or one fsync each, could not do it in time); and every
 * event is in the history file when its reply is read.
 */
static void
test_group_commit_in_flight(void)
{
	enum { N = 64, DELAY_MS = 150 };
	struct pd pd;
	if (!need_monitor())
		return;
	fresh_state();
	struct pd_opts o = opts(budget_v1, T0 ",1000000");
	o.history_sync = "batch";
	o.sync_delay_ms = "150";
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	uint64_t ids[N];
	int64_t t0 = mono_ms(), first = -1;
	for (int i = 0; i < N; i++) {
		Box__DecideRequest req;
		char name[32];
		(void)snprintf(name, sizeof(name), "g%02d", i);
		write_req(&req, name, true);
		CHECK_INT(pd_send_decide(&pd, PD_BOXD, &req, &ids[i]), 0);
		write_req_free(&req);
	}
	unsigned bad_id = 0, denied = 0;
	for (int i = 0; i < N; i++) {
		Box__DecideReply *rep = NULL;
		uint64_t id = 0;
		int r = pd_wait_reply(&pd, PD_BOXD, &rep, &id, 20000);
		CHECK_INT(r, 0);
		if (r < 0)
			break;
		if (first < 0)
			first = mono_ms() - t0;
		if (id != ids[i])
			bad_id++;
		if (rep->verdict != BOX__DECISION_VERDICT__VERDICT_PERMIT)
			denied++;
		box_msg_free(&rep->base);
	}
	int64_t all = mono_ms() - t0;
	CHECK_INT(bad_id, 0);
	CHECK_INT(denied, 0);
	printf("#   first reply after %lld ms, all %d after %lld ms\n", (long long)first, N,
	       (long long)all);
	CHECK(first >= DELAY_MS);
	CHECK(all < (int64_t)N * DELAY_MS / 4);
	/* Replies came after their events were written: all 64 are in the file now. */
	unsigned missing = 0;
	for (int i = 0; i < N; i++) {
		char needle[32];
		(void)snprintf(needle, sizeof(needle), "~/p/g%02d", i);
		if (!file_has("policy/history", needle))
			missing++;
	}
	CHECK_INT(missing, 0);
	CHECK_INT(pd_stop(&pd), 0);
	long long decisions = 0, fsyncs = fsyncs_at_exit(&decisions);
	printf("#   %lld decisions, %lld history fsyncs (one is the start's epoch)\n", decisions,
	       fsyncs);
	CHECK_INT(decisions, N);
	CHECK(fsyncs >= 2 && fsyncs <= 1 + 8);
}

/*
 * One Decide in flight at a time: batch is `always` — exactly one fsync per
 * decision, as with always; with 64 in flight always still makes 64.
 */
static void
test_group_commit_one_in_flight(void)
{
	if (!need_monitor())
		return;
	static const char *modes[] = { "batch", "always" };
	for (size_t m = 0; m < ELEMENTSOF(modes); m++) {
		struct pd pd;
		fresh_state();
		struct pd_opts o = opts(budget_v1, T0 ",1000000");
		o.history_sync = modes[m];
		CHECK_INT(pd_start(&o, &pd, NULL), 0);
		for (int i = 0; i < 10; i++)
			CHECK(decide(&pd, PD_BOXD, W("~/p/one"), true,
				     BOX__DECISION_CAUSE__CAUSE_PERMITTED));
		uint64_t ids[64];
		if (m == 1) {
			for (int i = 0; i < 64; i++) {
				Box__DecideRequest req;
				write_req(&req, "many", true);
				CHECK_INT(pd_send_decide(&pd, PD_BOXD, &req, &ids[i]), 0);
				write_req_free(&req);
			}
			for (int i = 0; i < 64; i++) {
				Box__DecideReply *rep = NULL;
				uint64_t id = 0;
				CHECK_INT(pd_wait_reply(&pd, PD_BOXD, &rep, &id, 20000), 0);
				CHECK_INT(id, ids[i]);
				if (rep)
					box_msg_free(&rep->base);
			}
		}
		CHECK_INT(pd_stop(&pd), 0);
		long long fsyncs = fsyncs_at_exit(NULL);
		printf("#   %s: %lld history fsyncs\n", modes[m], fsyncs);
		CHECK_INT(fsyncs, 1 + 10 + (m == 1 ? 64 : 0));
	}
}

/*
 * A peer that sends 2000 Decides before reading any reply, on one channel,
 * every 100th one not fitting the schema (nothing written, answered at once
 * unless replies of its channel are held): all 2000 come back in order,
 * none lost while the replies outgrow the socket buffer; a group never
 * holds more than POLICYD_GROUP_MAX (256) decisions, so there were at least
 * 2000 / 256 group fsyncs.
 */
static void
test_group_commit_flood(void)
{
	enum { N = 2000 };
	struct pd pd;
	if (!need_monitor())
		return;
	fresh_state();
	struct pd_opts o = opts(budget_v1, T0 ",1000000");
	o.history_sync = "batch";
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	static uint64_t ids[N];
	Box__DecideRequest fit, misfit;
	write_req(&fit, "flood", true);
	write_req(&misfit, "flood", false);
	unsigned send_err = 0;
	for (int i = 0; i < N; i++)
		if (pd_send_decide(&pd, PD_BOXD, i % 100 == 50 ? &misfit : &fit, &ids[i]) < 0)
			send_err++;
	CHECK_INT(send_err, 0);
	unsigned bad_id = 0, bad_verdict = 0, got = 0;
	for (int i = 0; i < N; i++) {
		Box__DecideReply *rep = NULL;
		uint64_t id = 0;
		if (pd_wait_reply(&pd, PD_BOXD, &rep, &id, 20000) < 0)
			break;
		got++;
		if (id != ids[i])
			bad_id++;
		bool want_permit = i % 100 != 50;
		if ((rep->verdict == BOX__DECISION_VERDICT__VERDICT_PERMIT) != want_permit ||
		    (!want_permit && rep->cause != BOX__DECISION_CAUSE__CAUSE_ERROR))
			bad_verdict++;
		box_msg_free(&rep->base);
	}
	CHECK_INT(got, N);
	CHECK_INT(bad_id, 0);
	CHECK_INT(bad_verdict, 0);
	write_req_free(&fit);
	write_req_free(&misfit);
	CHECK_INT(pd_stop(&pd), 0);
	long long decisions = 0, fsyncs = fsyncs_at_exit(&decisions);
	printf("#   %lld decisions, %lld history fsyncs\n", decisions, fsyncs);
	CHECK_INT(decisions, N);
	CHECK(fsyncs >= 1 + N / 256);
}

/* ---- DecideBatch ------------------------------------------------- */

/* At most 3 write attempts a minute: a request budget, so a batch's later requests see
 * its earlier ones. */
static const char *req_budget = PERMIT_ALL_FS
	"@id(\"attempts\")\n"
	"forbid (principal, action == Box::Action::\"fs:write\", resource)\n"
	"when temporal {\n"
	"    exists (total: Long). (\n"
	"        (count for (t: Timepoint). where (\n"
	"            formerly within 60s (Box::Action::\"fs:write\"::request{ input.path: _ } && tp(t))\n"
	"        )) == total && total >= 4)\n"
	"};\n"
	"@id(\"no_secrets\")\n@description(\"Secrets stay unread.\")\n"
	"forbid (principal, action == Box::Action::\"fs:read\", resource)\n"
	"when { context.input.path like \"~/secret*\" };\n";

static const char *const batch_lines[] = {
	W("~/p/1"),
	W("~/p/2"),
	/* does not fit the schema (no operation): denied with cause error in its place */
	"{\"action\":\"fs:write\",\"input\":{\"path\":\"~/p/misfit\"}}",
	"{\"action\":\"fs:read\",\"input\":{\"path\":\"~/secret.txt\",\"operation\":\"read_content\"}}",
	W("~/p/3"),
	W("~/p/4"),
	W("~/p/5"),
};
#define N_BATCH_LINES (sizeof(batch_lines) / sizeof(batch_lines[0]))

/* One reply as text: verdict cause [rules] message. */
static char *
reply_text(const Box__DecideReply *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	fprintf(m, "%d %d [", r->verdict, r->cause);
	for (size_t i = 0; i < r->n_rules; i++)
		fprintf(m, "%s%s", i ? "," : "", r->rules[i]);
	fprintf(m, "] %s", r->message);
	fclose(m);
	return buf;
}

struct batch_run {
	char *replies[N_BATCH_LINES];
	char *log, *history;
	size_t history_len;
	long long decisions, fsyncs;
};

static char *
slurp_bin(const char *rel, size_t *len)
{
	char path[4096];
	(void)snprintf(path, sizeof(path), "%s/%s", state, rel);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	*len = 0;
	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	char *buf = malloc((size_t)st.st_size + 1);
	if (buf && read(fd, buf, (size_t)st.st_size) == st.st_size)
		*len = (size_t)st.st_size;
	if (buf)
		buf[*len] = '\0';
	close(fd);
	return buf;
}

/* The lines one by one (BATCHED false) or as one DecideBatch, from a fresh state. */
static void
batch_run(const char *sync, bool batched, struct batch_run *out)
{
	struct pd pd;
	memset(out, 0, sizeof(*out));
	fresh_state();
	struct pd_opts o = opts(req_budget, T0 ",1000000");
	o.history_sync = sync;
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	if (batched) {
		Box__DecideBatchReply *rep = NULL;
		CHECK_INT(pd_send_batch(&pd, PD_SHELL, batch_lines, N_BATCH_LINES, &rep), 0);
		CHECK(rep && rep->n_replies == N_BATCH_LINES);
		for (size_t i = 0; rep && i < rep->n_replies && i < N_BATCH_LINES; i++)
			out->replies[i] = reply_text(rep->replies[i]);
		if (rep)
			box_msg_free(&rep->base);
	} else {
		for (size_t i = 0; i < N_BATCH_LINES; i++) {
			Box__DecideReply *rep = NULL;
			CHECK_INT(pd_send_line(&pd, PD_SHELL, batch_lines[i], &rep), 0);
			if (rep) {
				out->replies[i] = reply_text(rep);
				box_msg_free(&rep->base);
			}
		}
	}
	CHECK_INT(pd_stop(&pd), 0);
	out->log = slurp("decisions.jsonl");
	out->history = slurp_bin("policy/history", &out->history_len);
	out->fsyncs = fsyncs_at_exit(&out->decisions);
}

static void
batch_run_free(struct batch_run *r)
{
	for (size_t i = 0; i < N_BATCH_LINES; i++)
		free(r->replies[i]);
	free(r->log);
	free(r->history);
}

/*
 * A DecideBatch is decided exactly as its requests one by one: the same
 * replies in order, the same decisions.jsonl lines (byte for byte: the test
 * clock gives both runs the same times), the same history file; with
 * history_sync = always one fsync covers the batch (one per event one by
 * one); with batch it joins the group commit (one fsync).
 */
static void
test_decide_batch_as_one_by_one(void)
{
	if (!need_monitor())
		return;
	static const char *modes[] = { "always", "batch" };
	for (size_t m = 0; m < ELEMENTSOF(modes); m++) {
		struct batch_run one, all;
		batch_run(modes[m], false, &one);
		batch_run(modes[m], true, &all);
		for (size_t i = 0; i < N_BATCH_LINES; i++)
			CHECK_STR(all.replies[i], one.replies[i]);
		CHECK(one.replies[0] && strncmp(one.replies[0], "1 0 [fs_ok]", 11) == 0);
		CHECK(one.replies[2] && strncmp(one.replies[2], "0 3 []", 6) == 0);
		CHECK(one.replies[3] && strncmp(one.replies[3], "0 1 [no_secrets]", 16) == 0);
		CHECK(one.replies[4] && strncmp(one.replies[4], "1 0", 3) == 0);   /* 3rd write */
		CHECK(one.replies[5] && strncmp(one.replies[5], "0 1 [attempts]", 14) == 0);
		CHECK(one.replies[6] && strncmp(one.replies[6], "0 1 [attempts]", 14) == 0);
		CHECK_STR(all.log, one.log);
		CHECK(one.log && strlen(one.log) > 0);
		CHECK_INT(all.history_len, one.history_len);
		CHECK(all.history && one.history && all.history_len == one.history_len &&
		      memcmp(all.history, one.history, one.history_len) == 0);
		CHECK_INT(all.decisions, (long long)N_BATCH_LINES);
		CHECK_INT(one.decisions, (long long)N_BATCH_LINES);
		/* 6 events fit (the misfit writes nothing), plus the start's epoch */
		printf("#   %s: one by one %lld history fsyncs, batched %lld\n", modes[m], one.fsyncs,
		       all.fsyncs);
		CHECK_INT(one.fsyncs, 1 + 6);
		CHECK_INT(all.fsyncs, 1 + 1);
		batch_run_free(&one);
		batch_run_free(&all);
	}
}

/* A batch reply keeps its place among the channel's replies (pipelined singles around it). */
static void
test_decide_batch_in_order(void)
{
	struct pd pd;
	fresh_state();
	struct pd_opts o = opts(basic_policy, NULL);
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	Box__DecideRequest req;
	write_req(&req, "before", true);
	uint64_t id1 = 0;
	CHECK_INT(pd_send_decide(&pd, PD_SHELL, &req, &id1), 0);
	write_req_free(&req);
	Box__DecideBatchReply *rep = NULL;
	/* pd_send_batch reads the next reply: it must be the single's first, so read it here */
	Box__DecideReply *single = NULL;
	uint64_t got = 0;
	CHECK_INT(pd_wait_reply(&pd, PD_SHELL, &single, &got, 20000), 0);
	CHECK_INT(got, id1);
	if (single)
		box_msg_free(&single->base);
	static const char *const two[] = { W("~/p/a"), D("~/p/b") };
	CHECK_INT(pd_send_batch(&pd, PD_SHELL, two, 2, &rep), 0);
	CHECK(rep && rep->n_replies == 2 &&
	      rep->replies[0]->verdict == BOX__DECISION_VERDICT__VERDICT_PERMIT &&
	      rep->replies[1]->verdict == BOX__DECISION_VERDICT__VERDICT_PERMIT);
	if (rep)
		box_msg_free(&rep->base);
	CHECK_INT(pd_stop(&pd), 0);
	_cleanup_free_ char *log = slurp("decisions.jsonl");
	CHECK(strstr(log, "\"resource\":\"~/p/a\"") && strstr(log, "\"resource\":\"~/p/b\""));
	CHECK(strstr(log, "\"source\":\"box-shell\""));
}

/*
 * until_deny (box-mcpd's mcp:call with its refinement): the batch ends at its
 * first denial — the reply holds the verdicts up to and including it, and
 * what follows is neither decided nor logged nor in the history, exactly as
 * a sender that stopped there; with no denial, every request is decided.
 */
static void
test_decide_batch_until_deny(void)
{
	if (!need_monitor())
		return;
	static const char *const lines[] = {
		W("~/p/1"),
		"{\"action\":\"fs:read\",\"input\":{\"path\":\"~/secret.txt\",\"operation\":"
		"\"read_content\"}}",
		W("~/p/after-the-denial"),
	};
	for (int pass = 0; pass < 2; pass++) {
		struct pd pd;
		fresh_state();
		struct pd_opts o = opts(req_budget, T0 ",1000000");
		o.history_sync = "always";
		CHECK_INT(pd_start(&o, &pd, NULL), 0);
		Box__DecideBatchReply *rep = NULL;
		if (pass == 0) {
			CHECK_INT(pd_send_batch_until_deny(&pd, PD_SHELL, lines, 3, &rep), 0);
			CHECK(rep && rep->n_replies == 2 &&
			      rep->replies[0]->verdict == BOX__DECISION_VERDICT__VERDICT_PERMIT &&
			      rep->replies[1]->verdict == BOX__DECISION_VERDICT__VERDICT_DENY &&
			      rep->replies[1]->cause == BOX__DECISION_CAUSE__CAUSE_FORBIDDEN);
		} else {
			/* No denial: all of them, as a plain batch. */
			const char *const two[] = { lines[0], lines[2] };
			CHECK_INT(pd_send_batch_until_deny(&pd, PD_SHELL, two, 2, &rep), 0);
			CHECK(rep && rep->n_replies == 2 &&
			      rep->replies[0]->verdict == BOX__DECISION_VERDICT__VERDICT_PERMIT &&
			      rep->replies[1]->verdict == BOX__DECISION_VERDICT__VERDICT_PERMIT);
		}
		if (rep)
			box_msg_free(&rep->base);
		CHECK_INT(pd_stop(&pd), 0);
		_cleanup_free_ char *log = slurp("decisions.jsonl");
		size_t nl = 0;
		for (const char *c = log; c && *c; c++)
			nl += *c == '\n';
		CHECK_INT((long long)nl, 2);
		CHECK(log && strstr(log, "\"resource\":\"~/p/1\""));
		if (pass == 0)
			CHECK(log && strstr(log, "~/secret.txt") && !strstr(log, "after-the-denial"));
		else
			CHECK(log && strstr(log, "after-the-denial") && !strstr(log, "~/secret.txt"));
	}
	/* The same history as the two requests one by one. */
	size_t len_batched = 0, len_single = 0;
	fresh_state();
	{
		struct pd pd;
		struct pd_opts o = opts(req_budget, T0 ",1000000");
		o.history_sync = "always";
		CHECK_INT(pd_start(&o, &pd, NULL), 0);
		CHECK_INT(pd_send_batch_until_deny(&pd, PD_SHELL, lines, 3, NULL), 0);
		CHECK_INT(pd_stop(&pd), 0);
	}
	_cleanup_free_ char *h_batched = slurp_bin("policy/history", &len_batched);
	fresh_state();
	{
		struct pd pd;
		struct pd_opts o = opts(req_budget, T0 ",1000000");
		o.history_sync = "always";
		CHECK_INT(pd_start(&o, &pd, NULL), 0);
		for (size_t i = 0; i < 2; i++)
			CHECK_INT(pd_send_line(&pd, PD_SHELL, lines[i], NULL), 0);
		CHECK_INT(pd_stop(&pd), 0);
	}
	_cleanup_free_ char *h_single = slurp_bin("policy/history", &len_single);
	CHECK(h_batched && h_single && len_batched == len_single && len_single > 0 &&
	      memcmp(h_batched, h_single, len_single) == 0);
}

static int
expect_refused(const void *payload, size_t len)
{
	struct pd pd;
	int status = 0;
	struct pd_opts o = opts(basic_policy, NULL);
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	CHECK_INT(pd_send_raw(&pd, PD_SHELL, BOX__MSG_TYPE__MSG_DECIDE_BATCH_REQUEST, payload, len),
		  0);
	CHECK_INT(waitpid(pd.pid, &status, 0), pd.pid);
	pd.pid = -1;
	pd_stop(&pd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A batch of n fs:write requests, the BAD_AT-th (if < n) with an action no validator takes. */
static uint8_t *
pack_batch(size_t n, size_t bad_at, size_t *len)
{
	Box__DecideBatchRequest b = BOX__DECIDE_BATCH_REQUEST__INIT;
	Box__DecideRequest *reqs = calloc(n ? n : 1, sizeof(*reqs));
	Box__DecideRequest **ptrs = calloc(n ? n : 1, sizeof(*ptrs));
	for (size_t i = 0; i < n; i++) {
		write_req(&reqs[i], "x", true);
		if (i == bad_at)
			reqs[i].action = "not an action";
		ptrs[i] = &reqs[i];
	}
	b.requests = ptrs;
	b.n_requests = n;
	*len = protobuf_c_message_get_packed_size(&b.base);
	uint8_t *buf = malloc(*len ? *len : 1);
	protobuf_c_message_pack(&b.base, buf);
	CHECK_INT(box_validate_decide_batch_request(&b),
		  n == 0 ? -EINVAL : n > BOX_POLICY_BATCH_MAX ? -E2BIG : bad_at < n ? -EINVAL : 0);
	for (size_t i = 0; i < n; i++)
		write_req_free(&reqs[i]);
	free(reqs);
	free(ptrs);
	return buf;
}

/*
 * The validator takes 1 to 256 well-formed requests; a batch of 257, an
 * empty one or one with a malformed request inside is a protocol error
 * (box-policyd exits 1, as for any bad message from an internal peer) and
 * decides nothing.
 */
static void
test_decide_batch_refused(void)
{
	size_t len;
	fresh_state();
	_cleanup_free_ uint8_t *ok = pack_batch(BOX_POLICY_BATCH_MAX, SIZE_MAX, &len);
	_cleanup_free_ uint8_t *big = pack_batch(BOX_POLICY_BATCH_MAX + 1, SIZE_MAX, &len);
	CHECK_INT(expect_refused(big, len), 1);
	CHECK(!file_has("decisions.jsonl", "fs:write"));
	_cleanup_free_ uint8_t *bad = pack_batch(5, 3, &len);
	CHECK_INT(expect_refused(bad, len), 1);
	CHECK(!file_has("decisions.jsonl", "fs:write"));
	_cleanup_free_ uint8_t *empty = pack_batch(0, SIZE_MAX, &len);
	CHECK_INT(expect_refused(empty, len), 1);
	_cleanup_free_ char *err = slurp("stderr");
	CHECK(strstr(err, "Protocol error from shell") != NULL);
}


/* ---- what each peer may decide and record (box-policyd/main.c's table) ------- */

static const char *peers_policy =
	"permit (principal, action, resource);\n"
	"@id(\"no_no\")\n"
	"forbid (principal, action == Box::Action::\"fs:read\", resource)\n"
	"when { context.input.path == \"~/no\" };\n";

#define FS_READ(path)                                                                      \
	"{\"action\":\"fs:read\",\"input\":{\"path\":\"" path "\",\"operation\":\"read_content\"}}"
#define SHELL_EXEC                                                                         \
	"{\"action\":\"shell:exec\",\"input\":{\"command\":\"echo hi\",\"program\":\"echo\","  \
	"\"arg1\":\"hi\",\"arg_count\":1,\"cwd\":\"~\"}}"
#define SHELL_SPAWN                                                                        \
	"{\"action\":\"shell:spawn\",\"input\":{\"command\":\"make test\",\"program\":\"make\"," \
	"\"arg1\":\"test\",\"arg_count\":1,\"cwd\":\"~\",\"program_path\":\"/usr/bin/make\"}}"
#define NET_CONNECT "{\"action\":\"net:connect\",\"input\":{\"host\":\"h.test\",\"port\":443}}"
#define HTTP_REQUEST                                                                       \
	"{\"action\":\"http:request\",\"input\":{\"host\":\"h.test\",\"port\":443,"            \
	"\"method\":\"GET\",\"path\":\"/\",\"body_bytes\":0,\"intercepted\":true}}"
#define MCP_CALL                                                                           \
	"{\"action\":\"mcp:call\",\"input\":{\"server\":\"gh\",\"method\":\"tools/call\","     \
	"\"tool\":\"x\"}}"
#define TOOL_CALL "{\"action\":\"gh::Action::\\\"x\\\"\",\"input\":{}}"

/* Each line's record line (its action and input: a response with no output). */
static char *
as_record(const char *decide_line)
{
	char *r = NULL;
	if (asprintf(&r, "{\"record\":\"response\",%s", decide_line + 1) < 0)
		abort();
	return r;
}

static void
names_peer_refused(struct pd *pd, const char *what, const char *want)
{
	int st = pd_exited_within(pd, 10000);
	if (st != 1)
		printf("#   %s: exit status %d, expected 1\n", what, st);
	CHECK_INT(st, 1);
	pd_stop(pd);
	_cleanup_free_ char *err = slurp("stderr");
	if (!strstr(err, want))
		printf("#   %s: stderr lacks \"%s\":\n%s", what, want, err);
	CHECK(strstr(err, want) != NULL);
}

/*
 * Each peer decides and records its own actions (box-shell shell:* and fs:*,
 * box-gateway net:connect, http:request, mcp:call, box-mcpd mcp:call and
 * shell:spawn, boxd fs:*): permitted, logged with its source, and each
 * record line holds the input of the Decide it names.
 */
static void
test_peer_actions_allowed(void)
{
	static const struct {
		int peer;
		const char *line, *source;
	} ok[] = {
		{ PD_SHELL, FS_READ("~/a"), "box-shell" },   { PD_SHELL, SHELL_EXEC, "box-shell" },
		{ PD_SHELL, SHELL_SPAWN, "box-shell" },      { PD_GATEWAY, NET_CONNECT, "box-gateway" },
		{ PD_GATEWAY, HTTP_REQUEST, "box-gateway" }, { PD_GATEWAY, MCP_CALL, "box-gateway" },
		{ PD_MCPD, MCP_CALL, "box-mcpd" },           { PD_MCPD, SHELL_SPAWN, "box-mcpd" },
		{ PD_BOXD, FS_READ("~/b"), "supervisor" },
	};
	struct pd pd;
	fresh_state();
	struct pd_opts o = opts(peers_policy, NULL);
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		CHECK(decide(&pd, ok[i].peer, ok[i].line, true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
		_cleanup_free_ char *rec = as_record(ok[i].line);
		record(&pd, ok[i].peer, rec);
	}
	/* The gateway and box-mcpd ask about per-tool actions (never recorded). */
	CHECK(decide(&pd, PD_GATEWAY, TOOL_CALL, false, BOX__DECISION_CAUSE__CAUSE_ERROR));
	CHECK(decide(&pd, PD_MCPD, TOOL_CALL, false, BOX__DECISION_CAUSE__CAUSE_ERROR));
	CHECK_INT(pd_stop(&pd), 0);
	_cleanup_free_ char *log = slurp("decisions.jsonl");
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		/* ...,"record":"response","action":A,"input":I,"output":{},"source":S} */
		char want[1024];
		(void)snprintf(want, sizeof(want),
			       "\"record\":\"response\",%.*s,\"output\":{},\"source\":\"%s\"}",
			       (int)(strlen(ok[i].line) - 2), ok[i].line + 1, ok[i].source);
		if (!strstr(log, want))
			printf("#   no record line %s in:\n%s", want, log);
		CHECK(strstr(log, want) != NULL);
	}
}

/* A peer asking about an action it does not raise: a protocol error, nothing decided. */
static void
test_peer_actions_refused(void)
{
	static const struct {
		int peer;
		const char *line, *want;
	} bad[] = {
		{ PD_SHELL, NET_CONNECT,
		  "Protocol error from shell: it sent a DecideRequest for net:connect, which "
		  "box-shell does not raise (it raises shell:* and fs:*)" },
		{ PD_SHELL, HTTP_REQUEST, "for http:request, which box-shell does not raise" },
		{ PD_SHELL, MCP_CALL, "for mcp:call, which box-shell does not raise" },
		{ PD_SHELL, TOOL_CALL, "which box-shell does not raise" },
		{ PD_SHELL, "{\"action\":\"fs:bogus\",\"input\":{}}",
		  "for fs:bogus, which box-shell does not raise" },
		{ PD_GATEWAY, SHELL_EXEC,
		  "Protocol error from gateway: it sent a DecideRequest for shell:exec, which "
		  "box-gateway does not raise (it raises net:connect, http:request, mcp:call and "
		  "per-tool actions)" },
		{ PD_GATEWAY, SHELL_SPAWN, "for shell:spawn, which box-gateway does not raise" },
		{ PD_GATEWAY, FS_READ("~/a"), "for fs:read, which box-gateway does not raise" },
		{ PD_MCPD, HTTP_REQUEST,
		  "Protocol error from mcpd: it sent a DecideRequest for http:request, which "
		  "box-mcpd does not raise (it raises mcp:call, per-tool actions and shell:spawn)" },
		{ PD_MCPD, SHELL_EXEC, "for shell:exec, which box-mcpd does not raise" },
		{ PD_MCPD, NET_CONNECT, "for net:connect, which box-mcpd does not raise" },
		{ PD_BOXD, NET_CONNECT,
		  "Protocol error from boxd: it sent a DecideRequest for net:connect, which "
		  "supervisor does not raise (it raises fs:*)" },
		{ PD_BOXD, SHELL_EXEC, "for shell:exec, which supervisor does not raise" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pd pd;
		fresh_state();
		struct pd_opts o = opts(peers_policy, NULL);
		CHECK_INT(pd_start(&o, &pd, NULL), 0);
		(void)pd_send_line(&pd, bad[i].peer, bad[i].line, NULL);
		names_peer_refused(&pd, bad[i].line, bad[i].want);
		const char *a = strstr(bad[i].line, "\"action\":");
		char needle[96];
		(void)snprintf(needle, sizeof(needle), "%.*s", (int)strcspn(a + 9, ","), a);
		CHECK(!file_has("decisions.jsonl", needle));
	}
	/* A DecideBatch with one foreign request decides none of it. */
	struct pd pd;
	fresh_state();
	struct pd_opts o = opts(peers_policy, NULL);
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	const char *batch[2] = { FS_READ("~/first"), NET_CONNECT };
	(void)pd_send_batch(&pd, PD_SHELL, batch, 2, NULL);
	names_peer_refused(&pd, "batch",
			   "it sent a DecideBatchRequest for net:connect, which box-shell does not "
			   "raise");
	CHECK(!file_has("decisions.jsonl", "~/first"));
	/* A probe of an action the gateway does not raise. */
	fresh_state();
	o = opts(peers_policy, NULL);
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	const char *probe[1] = { SHELL_EXEC };
	(void)pd_send_probe(&pd, PD_GATEWAY, probe, 1, NULL);
	names_peer_refused(&pd, "probe",
			   "it sent a PolicyProbeRequest for shell:exec, which box-gateway does not "
			   "raise");
}

/* Start policyd, decide LINE on the shell channel (the verdict PERMIT): its Decide id. */
static uint64_t
start_and_decide(struct pd *pd, const char *line, bool permit)
{
	fresh_state();
	struct pd_opts o = opts(peers_policy, NULL);
	CHECK_INT(pd_start(&o, pd, NULL), 0);
	CHECK(decide(pd, PD_SHELL, line, permit,
		     permit ? BOX__DECISION_CAUSE__CAUSE_PERMITTED
			    : BOX__DECISION_CAUSE__CAUSE_FORBIDDEN));
	return pd->last_decide_id;
}

/*
 * A Record names a permitted Decide of its channel that has no outcome yet,
 * of the same action: anything else is a protocol error, and nothing is
 * recorded. The event's input is policyd's copy of the Decide's: a Record
 * that carries one is refused.
 */
static void
test_record_refused(void)
{
	struct pd pd;
	uint64_t id;
	/* An id no Decide of this channel had (the next one). */
	id = start_and_decide(&pd, FS_READ("~/a"), true);
	CHECK_INT(pd_send_record(&pd, PD_SHELL, id + 1, "fs:read", false,
				 "{\"result\":\"completed\"}"),
		  0);
	names_peer_refused(&pd, "unknown id",
			   "Protocol error from shell: it recorded an outcome of Decide");
	CHECK(!file_has("decisions.jsonl", "\"record\""));
	/* A denied one. */
	id = start_and_decide(&pd, FS_READ("~/no"), false);
	CHECK_INT(pd_send_record(&pd, PD_SHELL, id, "fs:read", false, "{\"result\":\"completed\"}"),
		  0);
	names_peer_refused(&pd, "denied id",
			   "which is no permit of its channel still without an outcome (unknown, "
			   "denied or recorded already)");
	CHECK(!file_has("decisions.jsonl", "\"record\""));
	/* One recorded already: the first record stands, the second is refused. */
	id = start_and_decide(&pd, FS_READ("~/a"), true);
	CHECK_INT(pd_send_record(&pd, PD_SHELL, id, "fs:read", false, "{\"result\":\"completed\"}"),
		  0);
	CHECK_INT(pd_send_record(&pd, PD_SHELL, id, "fs:read", false, "{\"result\":\"completed\"}"),
		  0);
	names_peer_refused(&pd, "recorded twice", "recorded already");
	_cleanup_free_ char *log = slurp("decisions.jsonl");
	const char *one = strstr(log, "\"record\"");
	CHECK(one && !strstr(one + 1, "\"record\""));
	/* Another action than the Decide's. */
	id = start_and_decide(&pd, FS_READ("~/a"), true);
	CHECK_INT(pd_send_record(&pd, PD_SHELL, id, "fs:write", false, "{\"result\":\"completed\"}"),
		  0);
	names_peer_refused(&pd, "other action",
			   "it recorded an outcome of fs:write for Decide");
	CHECK(!file_has("decisions.jsonl", "\"record\""));
	/* An action the peer does not record (checked before the id). */
	id = start_and_decide(&pd, FS_READ("~/a"), true);
	CHECK_INT(pd_send_record(&pd, PD_SHELL, id, "net:connect", false, NULL), 0);
	names_peer_refused(&pd, "foreign action",
			   "it recorded an outcome of net:connect, which box-shell does not record");
	/* A per-tool action: decided by the gateway, never recorded. */
	fresh_state();
	struct pd_opts o = opts(peers_policy, NULL);
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	CHECK_INT(pd_send_record(&pd, PD_GATEWAY, 1, "gh::Action::\"x\"", false, NULL), 0);
	names_peer_refused(&pd, "tool record", "which box-gateway does not record");
	/* A Record with an input of its own (the validator: a malformed message). */
	id = start_and_decide(&pd, FS_READ("~/a"), true);
	Box__RecordRequest rec = BOX__RECORD_REQUEST__INIT;
	rec.kind = BOX__EVENT_KIND__EVENT_RESPONSE;
	rec.action = "fs:read";
	rec.decide_id = id;
	CHECK_INT(pd_fields_from_json("{\"path\":\"~/forged\",\"operation\":\"read_content\"}",
				      &rec.input, &rec.n_input),
		  0);
	CHECK_INT(box_validate_record_request(&rec), -EINVAL);
	size_t len = protobuf_c_message_get_packed_size(&rec.base);
	_cleanup_free_ uint8_t *buf = malloc(len);
	protobuf_c_message_pack(&rec.base, buf);
	pd_fields_free(rec.input, rec.n_input);
	CHECK_INT(pd_send_raw(&pd, PD_SHELL, BOX__MSG_TYPE__MSG_RECORD_REQUEST, buf, len), 0);
	names_peer_refused(&pd, "record with input", "Protocol error from shell");
	CHECK(!file_has("decisions.jsonl", "~/forged"));
	/* A RecordBatch naming one permit twice records none of it. */
	id = start_and_decide(&pd, FS_READ("~/a"), true);
	Box__RecordRequest r2[2] = { BOX__RECORD_REQUEST__INIT, BOX__RECORD_REQUEST__INIT };
	Box__RecordRequest *rp[2] = { &r2[0], &r2[1] };
	for (int i = 0; i < 2; i++) {
		r2[i].kind = BOX__EVENT_KIND__EVENT_ERROR;
		r2[i].action = "fs:read";
		r2[i].decide_id = id;
	}
	Box__RecordBatch b = BOX__RECORD_BATCH__INIT;
	b.records = rp;
	b.n_records = 2;
	CHECK_INT(box_ipc_send(pd.fd[PD_SHELL], &box_proto_policy, BOX__MSG_TYPE__MSG_RECORD_BATCH,
			       pd.next_id++, &b.base, NULL, 0),
		  0);
	names_peer_refused(&pd, "batch twice", "recorded two outcomes of Decide");
	CHECK(!file_has("decisions.jsonl", "\"record\""));
	/* A Record on another channel than its Decide's. */
	id = start_and_decide(&pd, FS_READ("~/a"), true);
	CHECK_INT(pd_send_record(&pd, PD_BOXD, id, "fs:read", false, "{\"result\":\"completed\"}"),
		  0);
	names_peer_refused(&pd, "other channel", "Protocol error from boxd: it recorded an outcome");
	/* Decide ids that do not increase. */
	id = start_and_decide(&pd, FS_READ("~/a"), true);
	Box__DecideRequest again = BOX__DECIDE_REQUEST__INIT;
	again.action = "fs:read";
	CHECK_INT(pd_fields_from_json("{\"path\":\"~/b\",\"operation\":\"read_content\"}",
				      &again.input, &again.n_input),
		  0);
	CHECK_INT(box_ipc_send(pd.fd[PD_SHELL], &box_proto_policy, BOX__MSG_TYPE__MSG_DECIDE_REQUEST,
			       id, &again.base, NULL, 0),
		  0);
	pd_fields_free(again.input, again.n_input);
	names_peer_refused(&pd, "repeated id",
			   "which is not above the ids of its earlier Decides");
	CHECK(!file_has("decisions.jsonl", "~/b"));
}

/*
 * The event of a Record is the Decide's action and input with the Record's
 * output: a temporal rule sees exactly what was decided.
 */
static void
test_record_takes_the_decide(void)
{
	struct pd pd;
	uint64_t id = start_and_decide(&pd, SHELL_SPAWN, true);
	CHECK_INT(pd_send_record(&pd, PD_SHELL, id, "shell:spawn", false, "{\"status\":2}"), 0);
	CHECK_INT(pd_stop(&pd), 0);
	CHECK(file_has("decisions.jsonl",
		       "\"record\":\"response\",\"action\":\"shell:spawn\",\"input\":{\"command\":"
		       "\"make test\",\"program\":\"make\",\"arg1\":\"test\",\"arg_count\":1,"
		       "\"cwd\":\"~\",\"program_path\":\"/usr/bin/make\"},\"output\":{\"status\":2},"
		       "\"source\":\"box-shell\"}"));
}

/*
 * The bound on a channel's permits without an outcome: BOX_POLICY_PERMITS_MAX
 * (a long-running shell whose walks stop early leaves many): one more forgets
 * the oldest. Deciding goes on; a Record naming a forgotten permit is dropped
 * with a warning (no event, no error); the kept ones record as ever.
 */
static void
test_unrecorded_bound(void)
{
	enum { EXTRA = 8 };
	const size_t n = BOX_POLICY_PERMITS_MAX + EXTRA;
	struct pd pd;
	fresh_state();
	struct pd_opts o = opts(peers_policy, NULL);
	o.history_sync = "off";
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	static char lines[BOX_POLICY_BATCH_MAX][96];
	const char *ptrs[BOX_POLICY_BATCH_MAX];
	uint64_t first = 0, last = 0;
	bool ok = true;
	for (size_t done = 0; ok && done < n;) {
		size_t k = n - done < BOX_POLICY_BATCH_MAX ? n - done : BOX_POLICY_BATCH_MAX;
		for (size_t i = 0; i < k; i++) {
			(void)snprintf(lines[i], sizeof(lines[i]), FS_READ("~/w/%zu"), done + i);
			ptrs[i] = lines[i];
		}
		Box__DecideBatchReply *rep = NULL;
		ok = pd_send_batch(&pd, PD_SHELL, ptrs, k, &rep) == 0 && rep && rep->n_replies == k;
		if (rep)
			box_msg_free(&rep->base);
		if (done == 0)
			first = pd.last_decide_id;
		last = pd.last_decide_id + k - 1;
		done += k;
	}
	CHECK(ok);
	CHECK_INT(last - first + 1, n);
	/* The oldest, forgotten: dropped; policyd serves on. */
	CHECK_INT(pd_send_record(&pd, PD_SHELL, first, "fs:read", false, "{\"result\":\"completed\"}"),
		  0);
	CHECK_INT(pd_send_record(&pd, PD_SHELL, first + EXTRA - 1, "fs:read", false,
				 "{\"result\":\"completed\"}"),
		  0);
	/* The oldest kept, and the newest: recorded. */
	CHECK_INT(pd_send_record(&pd, PD_SHELL, first + EXTRA, "fs:read", false,
				 "{\"result\":\"completed\"}"),
		  0);
	CHECK_INT(pd_send_record(&pd, PD_SHELL, last, "fs:read", false, "{\"result\":\"completed\"}"),
		  0);
	CHECK(decide(&pd, PD_SHELL, FS_READ("~/after"), true, BOX__DECISION_CAUSE__CAUSE_PERMITTED));
	CHECK_INT(pd_stop(&pd), 0);
	char want[128];
	(void)snprintf(want, sizeof(want), "\"record\":\"response\",\"action\":\"fs:read\","
		       "\"input\":{\"path\":\"~/w/%d\"", EXTRA);
	CHECK(file_has("decisions.jsonl", want));
	(void)snprintf(want, sizeof(want), "\"input\":{\"path\":\"~/w/%zu\",\"operation\":"
		       "\"read_content\"},\"output\"", n - 1);
	CHECK(file_has("decisions.jsonl", want));
	CHECK(!file_has("decisions.jsonl", "\"input\":{\"path\":\"~/w/0\",\"operation\":"
					   "\"read_content\"},\"output\""));
	_cleanup_free_ char *err = slurp("stderr");
	CHECK(strstr(err, "which the bound of 16384 permits without an outcome per channel had "
			  "forgotten; dropped") != NULL);
}

int
main(void)
{
	bin = pd_binary();
	if (access(bin, X_OK) < 0) {
		printf("not ok - box-policyd not found at %s\n", bin);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	RUN(test_round_trip);
	RUN(test_pipelined);
	RUN(test_decision_log_exact);
	RUN(test_decision_log_live);
	RUN(test_outcome_lines);
	RUN(test_record_batch);
	RUN(test_outcome_waits_behind_held);
	RUN(test_sigterm_flushes);
	RUN(test_log_rotation);
	RUN(test_chain_goes_on);
	RUN(test_no_policy);
	RUN(test_bad_policy_refuses);
	RUN(test_peer_close);
	RUN(test_peers_end_bound);
	RUN(test_protocol_error_is_fatal);
	RUN(test_many_forbids);
	RUN(test_history_survives_restart);
	RUN(test_restart_keeps_unchanged_resets_edited);
	RUN(test_torn_last_record);
	RUN(test_corrupt_middle_refuses);
	RUN(test_unwritable_history_denies);
	RUN(test_sync_modes);
	RUN(test_group_commit_in_flight);
	RUN(test_group_commit_one_in_flight);
	RUN(test_group_commit_flood);
	RUN(test_compaction);
	RUN(test_decide_batch_as_one_by_one);
	RUN(test_decide_batch_in_order);
	RUN(test_decide_batch_until_deny);
	RUN(test_decide_batch_refused);
	RUN(test_peer_actions_allowed);
	RUN(test_peer_actions_refused);
	RUN(test_record_refused);
	RUN(test_record_takes_the_decide);
	RUN(test_unrecorded_bound);
	if (state) {
		pd_rmtree(state);
		free(state);
	}
	return tap_done();
}
