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
 * refused.
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
	if (state) {
		pd_rmtree(state);
		free(state);
	}
	return tap_done();
}
