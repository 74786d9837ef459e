/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_ask.c — decisions held for a person (docs/box-policy.5.md, "Asking a person"),
 * box-policyd end to end, started the way boxd starts it (harness.c): a Decide forbidden
 * by @ask rules alone is not answered while a later Decide on the same channel is (out of
 * order); boxd's PolicyAskList shows it; a person's PolicyAskAnswer permits it once (a
 * decision line with source "person", the asker and the uid; an equal request later is held
 * again) or for the box (an equal request later is answered at once, a different one held
 * again); a deny answer; no answer within ask_timeout is a deny; a request also forbidden by
 * a rule without @ask is denied at once; an answer for a decision that does not wait is
 * refused. [box] ask = default (PolicyInit.ask_default): a request no permit matches is held
 * (by_default, no rules, its input as JSON), one a forbid without @ask forbids is not; the
 * listing names the policy in force (its SHA-256 and file), and a PolicyReload with expect_sha256 is refused
 * when the text in force is another (nothing changes) and put in force when it is that one.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "logchain.h"
#include "tap.h"

static const char *bin;
static char *state;

static const char *policy =
	"permit (principal, action, resource);\n"
	"@id(\"ask_net\") @ask @description(\"a person decides ask.test\")\n"
	"forbid (principal, action == Box::Action::\"net:connect\", resource)\n"
	"when { context.input.host like \"*ask.test\" };\n"
	"@id(\"never_443\")\n"
	"forbid (principal, action == Box::Action::\"net:connect\", resource)\n"
	"when { context.input.host == \"no.ask.test\" };\n";

static void
fresh_state(void)
{
	if (state) {
		pd_rmtree(state);
		free(state);
	}
	state = pd_tmpdir("policyd-ask");
}

static struct pd_opts
opts(uint32_t timeout_ms)
{
	static char errpath[4096];
	(void)snprintf(errpath, sizeof(errpath), "%s/stderr", state);
	return (struct pd_opts){ .binary = bin, .state_dir = state, .policy = policy,
				 .stderr_path = errpath, .ask_timeout_ms = timeout_ms };
}

static char *
slurp(const char *rel)
{
	char path[4096];
	(void)snprintf(path, sizeof(path), "%s/%s", state, rel);
	FILE *f = fopen(path, "re");
	if (!f)
		return strdup("");
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int c;
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(f);
	fclose(m);
	return buf;
}

/* Send a net:connect to HOST from the gateway without waiting; its request id. */
static uint64_t
connect_to(struct pd *pd, const char *host)
{
	char json[256];
	Box__PolicyField **f = NULL;
	size_t n = 0;
	uint64_t id = 0;
	(void)snprintf(json, sizeof(json), "{\"host\":\"%s\",\"port\":443}", host);
	if (pd_fields_from_json(json, &f, &n) < 0)
		return 0;
	Box__DecideRequest req = BOX__DECIDE_REQUEST__INIT;
	req.action = (char *)"net:connect";
	req.input = f;
	req.n_input = n;
	if (pd_send_decide(pd, PD_GATEWAY, &req, &id) < 0)
		id = 0;
	pd_fields_free(f, n);
	return id;
}

/* The next reply on the gateway's channel: its id and verdict (-1: none came). */
static int
next_reply(struct pd *pd, uint64_t *id, char *msg, size_t len)
{
	Box__DecideReply *rep = NULL;
	if (pd_wait_reply(pd, PD_GATEWAY, &rep, id, 20000) < 0)
		return -1;
	int permit = rep->verdict == BOX__DECISION_VERDICT__VERDICT_PERMIT;
	if (msg)
		(void)snprintf(msg, len, "%s", rep->message);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	return permit;
}

/* boxd's PolicyAskList: the ids waiting (at most 8) into IDS; their count, or -1. */
static int
ask_list(struct pd *pd, uint64_t *ids, char *first_rule, size_t len)
{
	Box__PolicyAskList l = BOX__POLICY_ASK_LIST__INIT;
	uint64_t rid = pd->next_id++;
	if (box_ipc_send(pd->fd[PD_BOXD], &box_proto_policy, BOX__MSG_TYPE__MSG_POLICY_ASK_LIST,
			 rid, &l.base, NULL, 0) < 0)
		return -1;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	if (pd_recv(pd, PD_BOXD, &m, 20000) <= 0)
		return -1;
	if (m.type != BOX__MSG_TYPE__MSG_POLICY_ASK_LIST_REPLY || m.request_id != rid) {
		box_ipc_msg_done(&m);
		return -1;
	}
	const Box__PolicyAskListReply *rep = (const Box__PolicyAskListReply *)m.msg;
	int n = (int)rep->n_asks;
	for (size_t i = 0; i < rep->n_asks && i < 8; i++)
		ids[i] = rep->asks[i]->ask_id;
	if (first_rule && n > 0)
		(void)snprintf(first_rule, len, "%s %s %s", rep->asks[0]->action,
			       rep->asks[0]->resource, rep->asks[0]->rules[0]);
	box_ipc_msg_done(&m);
	return n;
}

/*
 * The list once it holds N (a Decide on the gateway's channel and the list on boxd's are
 * read in no set order): N, or the last count seen after a generous wait.
 */
static int
wait_asks(struct pd *pd, int n, uint64_t *ids)
{
	int got = -1;
	for (int i = 0; i < 2000 && (got = ask_list(pd, ids, NULL, 0)) != n; i++) {
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	return got;
}

/* boxd's PolicyAskAnswer: 1 ok, 0 refused, -1 no reply. */
static int
ask_answer(struct pd *pd, uint64_t ask_id, bool permit, bool for_box, uint32_t uid)
{
	Box__PolicyAskAnswer a = BOX__POLICY_ASK_ANSWER__INIT;
	a.ask_id = ask_id;
	a.permit = permit;
	a.has_for_box = true;
	a.for_box = for_box;
	a.uid = uid;
	uint64_t rid = pd->next_id++;
	if (box_ipc_send(pd->fd[PD_BOXD], &box_proto_policy, BOX__MSG_TYPE__MSG_POLICY_ASK_ANSWER,
			 rid, &a.base, NULL, 0) < 0)
		return -1;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	if (pd_recv(pd, PD_BOXD, &m, 20000) <= 0)
		return -1;
	int r = m.type == BOX__MSG_TYPE__MSG_POLICY_ASK_ANSWER_REPLY && m.request_id == rid
			? ((const Box__PolicyAskAnswerReply *)m.msg)->ok
			: -1;
	box_ipc_msg_done(&m);
	return r;
}

static void
test_held_out_of_order_then_once(void)
{
	struct pd pd;
	uint64_t ids[8], got;
	char what[256] = "", msg[512];

	fresh_state();
	struct pd_opts o = opts(600000);
	CHECK(pd_start(&o, &pd, NULL) == 0);
	uint64_t held = connect_to(&pd, "a.ask.test");
	uint64_t other = connect_to(&pd, "free.example");
	CHECK(held && other);
	/* The later request on the same channel is answered while the first waits. */
	CHECK_INT(next_reply(&pd, &got, NULL, 0), 1);
	CHECK(got == other);
	CHECK_INT(ask_list(&pd, ids, what, sizeof(what)), 1);
	CHECK_STR(what, "net:connect a.ask.test:443 ask_net");
	CHECK_INT(ask_answer(&pd, ids[0], true, false, 4242), 1);
	CHECK_INT(next_reply(&pd, &got, msg, sizeof(msg)), 1);
	CHECK(got == held);
	CHECK(strstr(msg, "a person (uid 4242) permitted it") != NULL);
	CHECK_INT(ask_list(&pd, ids, NULL, 0), 0);
	/* Once: an equal request later is held again; a deny answer denies it. */
	held = connect_to(&pd, "a.ask.test");
	CHECK_INT(wait_asks(&pd, 1, ids), 1);
	CHECK_INT(ask_answer(&pd, ids[0], false, false, 4243), 1);
	CHECK_INT(next_reply(&pd, &got, msg, sizeof(msg)), 0);
	CHECK(got == held);
	CHECK(strstr(msg, "a person (uid 4243) denied it") != NULL);
	/* An answer for what no longer waits is refused. */
	CHECK_INT(ask_answer(&pd, ids[0], true, false, 4242), 0);
	/* Also forbidden by a rule without @ask: denied at once, nothing held. */
	connect_to(&pd, "no.ask.test");
	CHECK_INT(next_reply(&pd, &got, NULL, 0), 0);
	CHECK_INT(ask_list(&pd, ids, NULL, 0), 0);
	CHECK_INT(pd_stop(&pd), 0);
	char *log = slurp("decisions.jsonl");
	CHECK(strstr(log, "\"verdict\":\"permit\",\"cause\":\"permitted\",\"rules\":[\"ask_net\"]") !=
	      NULL);
	CHECK(strstr(log, "\"source\":\"person\",\"asker\":\"box-gateway\",\"uid\":4242") != NULL);
	CHECK(strstr(log, "\"source\":\"person\",\"asker\":\"box-gateway\",\"uid\":4243") != NULL);
	free(log);
}

static void
test_for_box(void)
{
	struct pd pd;
	uint64_t ids[8], got;

	fresh_state();
	struct pd_opts o = opts(600000);
	CHECK(pd_start(&o, &pd, NULL) == 0);
	uint64_t held = connect_to(&pd, "b.ask.test");
	CHECK_INT(wait_asks(&pd, 1, ids), 1);
	CHECK_INT(ask_answer(&pd, ids[0], true, true, 7), 1);
	CHECK_INT(next_reply(&pd, &got, NULL, 0), 1);
	CHECK(got == held);
	/* The same request again: answered at once by the kept answer. */
	uint64_t again = connect_to(&pd, "b.ask.test");
	CHECK_INT(next_reply(&pd, &got, NULL, 0), 1);
	CHECK(got == again);
	/* Another host: held again. */
	connect_to(&pd, "c.ask.test");
	CHECK_INT(wait_asks(&pd, 1, ids), 1);
	CHECK_INT(pd_stop(&pd), 0);
}

static void
test_timeout_denies(void)
{
	struct pd pd;
	uint64_t ids[8], got;
	char msg[512];

	fresh_state();
	struct pd_opts o = opts(1000);
	CHECK(pd_start(&o, &pd, NULL) == 0);
	uint64_t held = connect_to(&pd, "t.ask.test");
	/* No answer: the timer denies it (the wait is bounded by the harness's 20 s only). */
	CHECK_INT(next_reply(&pd, &got, msg, sizeof(msg)), 0);
	CHECK(got == held);
	CHECK(strstr(msg, "no one answered within 1 s") != NULL);
	CHECK_INT(ask_list(&pd, ids, NULL, 0), 0);
	CHECK_INT(pd_stop(&pd), 0);
	char *log = slurp("decisions.jsonl");
	CHECK(strstr(log, "no one answered") != NULL && strstr(log, "\"source\":\"box-gateway\""));
	free(log);
}

/* boxd's PolicyReload of TEXT from FILE, only if the text in force hashes to EXPECT: ok 1, 0. */
static int
reload_if(struct pd *pd, const char *text, const char *file, const uint8_t *expect,
	  char *msg, size_t len)
{
	Box__PolicyReload rl = BOX__POLICY_RELOAD__INIT;
	rl.has_policy_text = true;
	rl.policy_text.data = (uint8_t *)text;
	rl.policy_text.len = strlen(text);
	rl.policy_file = (char *)file;
	rl.uid = 1000;
	rl.has_expect_sha256 = true;
	rl.expect_sha256.data = (uint8_t *)expect;
	rl.expect_sha256.len = LOGCHAIN_HASH_LEN;
	uint64_t rid = pd->next_id++;
	if (box_ipc_send(pd->fd[PD_BOXD], &box_proto_policy, BOX__MSG_TYPE__MSG_POLICY_RELOAD, rid,
			 &rl.base, NULL, 0) < 0)
		return -1;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	if (pd_recv(pd, PD_BOXD, &m, 20000) <= 0)
		return -1;
	int r = -1;
	if (m.type == BOX__MSG_TYPE__MSG_POLICY_RELOAD_REPLY && m.request_id == rid) {
		const Box__PolicyReloadReply *rep = (const Box__PolicyReloadReply *)m.msg;
		r = rep->ok;
		(void)snprintf(msg, len, "%s", rep->message ? rep->message : "");
	}
	box_ipc_msg_done(&m);
	return r;
}

/* The listing's policy: its file and whether its SHA-256 is that of TEXT; the first entry. */
static char first_input[256];

static int
list_policy(struct pd *pd, const char *text, char *file, size_t len, bool *by_default,
	    size_t *n_rules)
{
	Box__PolicyAskList l = BOX__POLICY_ASK_LIST__INIT;
	uint64_t rid = pd->next_id++;
	if (box_ipc_send(pd->fd[PD_BOXD], &box_proto_policy, BOX__MSG_TYPE__MSG_POLICY_ASK_LIST,
			 rid, &l.base, NULL, 0) < 0)
		return -1;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	if (pd_recv(pd, PD_BOXD, &m, 20000) <= 0)
		return -1;
	int r = -1;
	if (m.type == BOX__MSG_TYPE__MSG_POLICY_ASK_LIST_REPLY && m.request_id == rid) {
		const Box__PolicyAskListReply *rep = (const Box__PolicyAskListReply *)m.msg;
		uint8_t h[LOGCHAIN_HASH_LEN];
		logchain_sha256(text, strlen(text), h);
		r = rep->has_policy_sha256 && rep->policy_sha256.len == sizeof(h) &&
		    memcmp(rep->policy_sha256.data, h, sizeof(h)) == 0;
		(void)snprintf(file, len, "%s", rep->policy_file ? rep->policy_file : "-");
		if (rep->n_asks) {
			*by_default = rep->asks[0]->by_default;
			*n_rules = rep->asks[0]->n_rules;
			(void)snprintf(first_input, sizeof(first_input), "%s",
				       rep->asks[0]->input_json ? rep->asks[0]->input_json : "-");
		}
	}
	box_ipc_msg_done(&m);
	return r;
}

static const char *policy_narrow =
	"permit (principal, action == Box::Action::\"net:connect\", resource)\n"
	"when { context.input.host == \"ok.example\" };\n"
	"@id(\"no_bad\")\n"
	"forbid (principal, action == Box::Action::\"net:connect\", resource)\n"
	"when { context.input.host == \"bad.example\" };\n";

static void
test_ask_default_and_policy_hash(void)
{
	struct pd pd;
	uint64_t ids[8], got;
	char file[4096], msg[512];
	bool by_default = false;
	size_t n_rules = 99;

	fresh_state();
	struct pd_opts o = opts(600000);
	o.policy = policy_narrow;
	o.ask_default = true;
	o.policy_file = "/home/user/p/box.policy";
	CHECK(pd_start(&o, &pd, NULL) == 0);
	/* Permitted: at once. Forbidden by a rule without @ask: at once, not held. */
	connect_to(&pd, "ok.example");
	CHECK_INT(next_reply(&pd, &got, NULL, 0), 1);
	connect_to(&pd, "bad.example");
	CHECK_INT(next_reply(&pd, &got, NULL, 0), 0);
	CHECK_INT(ask_list(&pd, ids, NULL, 0), 0);
	/* No permit matches: held, by default, no rules; the listing names the policy. */
	uint64_t held = connect_to(&pd, "new.example");
	CHECK_INT(wait_asks(&pd, 1, ids), 1);
	CHECK_INT(list_policy(&pd, policy_narrow, file, sizeof(file), &by_default, &n_rules), 1);
	CHECK_STR(file, "/home/user/p/box.policy");
	CHECK(by_default && n_rules == 0);
	/* its input as the decision log writes it, for boxctl (which speaks no policy protocol) */
	CHECK_STR(first_input, "{\"host\":\"new.example\",\"port\":443}");
	/* A reload made from another text than the one in force: refused, nothing changes. */
	uint8_t wrong[LOGCHAIN_HASH_LEN], right[LOGCHAIN_HASH_LEN];
	logchain_sha256("something else", 14, wrong);
	logchain_sha256(policy_narrow, strlen(policy_narrow), right);
	const char *wider = "permit (principal, action, resource);\n";
	CHECK_INT(reload_if(&pd, wider, "/home/user/p/other.policy", wrong, msg, sizeof(msg)), 0);
	CHECK(strstr(msg, "no longer the text this edit was made from") != NULL);
	CHECK_INT(list_policy(&pd, policy_narrow, file, sizeof(file), &by_default, &n_rules), 1);
	CHECK_STR(file, "/home/user/p/box.policy");
	/* From the text in force: in force; the listing names the new text and file. */
	CHECK_INT(reload_if(&pd, wider, "/home/user/p/other.policy", right, msg, sizeof(msg)), 1);
	CHECK_INT(list_policy(&pd, wider, file, sizeof(file), &by_default, &n_rules), 1);
	CHECK_STR(file, "/home/user/p/other.policy");
	/* The held one is still held (decided under the old policy) until answered. */
	CHECK_INT(ask_answer(&pd, ids[0], true, false, 1000), 1);
	CHECK_INT(next_reply(&pd, &got, NULL, 0), 1);
	CHECK(got == held);
	/* Equal requests now permitted by the policy itself. */
	connect_to(&pd, "new.example");
	CHECK_INT(next_reply(&pd, &got, NULL, 0), 1);
	CHECK_INT(pd_stop(&pd), 0);
	char *log = slurp("decisions.jsonl");
	CHECK(strstr(log, "\"verdict\":\"permit\",\"cause\":\"permitted\",\"rules\":[]") != NULL);
	CHECK(strstr(log, "\"source\":\"person\",\"asker\":\"box-gateway\",\"uid\":1000") != NULL);
	free(log);
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
	RUN(test_held_out_of_order_then_once);
	RUN(test_for_box);
	RUN(test_timeout_denies);
	RUN(test_ask_default_and_policy_hash);
	if (state) {
		pd_rmtree(state);
		free(state);
	}
	return tap_done();
}
