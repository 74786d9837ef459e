/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_ship.c — decisions without a round trip (docs/box-policy.5.md): box-policyd's
 * PolicyLocal names the box-shell actions (to box-shell) and the box-gateway actions
 * (to box-gateway) no temporal rule can touch, and every PolicyShip either sends is
 * decided again and logged exactly as a Decide; a
 * shipped decision that does not agree (verdict, rules), of an action that does not
 * qualify, or of another generation is a protocol error: fd 6 ends the daemon (exit
 * 1), an attached channel is closed, and the forged line is never logged.
 * Trusts: nothing; it is test code (the harness plays boxd and box-shell).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cleanup.h"
#include "fdutil.h"
#include "harness.h"
#include "tap.h"

/* No temporal rule: every action of box-shell's qualifies. */
static const char *plain =
	"@id(\"echo\") permit (principal, action == Box::Action::\"shell:exec\", resource)\n"
	"when { context.input.program == \"echo\" };\n"
	"@id(\"no_rm\") forbid (principal, action == Box::Action::\"shell:exec\", resource)\n"
	"when { context.input.program == \"rm\" };\n";

/* fs:write is read by a temporal rule (its own budget): it goes through box-policyd. */
static const char *budget =
	"@id(\"all\") permit (principal, action in [Box::Action::\"shell:exec\", "
	"Box::Action::\"fs:write\", Box::Action::\"fs:read\"], resource);\n"
	"@id(\"cap\") forbid (principal, action == Box::Action::\"fs:write\", resource)\n"
	"when temporal { (count for (t: Timepoint). where formerly within 1h\n"
	"  (Box::Action::\"fs:write\"::request{} && tp(t))) > 2 };\n";

/* `previous` reads every event: nothing qualifies. */
static const char *previous =
	"@id(\"all\") permit (principal, action, resource)\n"
	"when { context.input has path || context.input has command };\n"
	"@id(\"prev\") forbid (principal, action == Box::Action::\"fs:delete\", resource)\n"
	"when temporal { previous within 1m Box::Action::\"fs:read\"::request{} };\n";

/* http:request is read by a temporal rule (a request budget): only net:connect qualifies. */
static const char *http_budget =
	"@id(\"api\") permit (principal, action in [Box::Action::\"net:connect\", "
	"Box::Action::\"http:request\"], resource) when { context.input.host == \"api.test\" };\n"
	"@id(\"cap\") forbid (principal, action == Box::Action::\"http:request\", resource)\n"
	"when temporal { (count for (t: Timepoint). where formerly within 1h\n"
	"  (Box::Action::\"http:request\"::request{} && tp(t))) > 2 };\n";

/* The gateway's: its requests to one host. */
static const char *http_plain =
	"@id(\"api\") permit (principal, action in [Box::Action::\"net:connect\", "
	"Box::Action::\"http:request\"], resource) when { context.input.host == \"api.test\" };\n";

static char *dir;

static int
start(struct pd *pd, const char *policy)
{
	static char err[600];
	dir = pd_tmpdir("ship");
	(void)snprintf(err, sizeof(err), "%s/policyd.err", dir);
	struct pd_opts o = { .binary = pd_binary(), .state_dir = dir, .policy = policy,
			     .stderr_path = err, .box_name = "ship", .box_id = "00000000000b" };
	return pd_start(&o, pd, NULL);
}

static void
finish(struct pd *pd)
{
	pd_kill(pd);
	if (getenv("SHIP_KEEP"))
		printf("# kept %s\n", dir);
	else
		pd_rmtree(dir);
	free(dir);
	dir = NULL;
}

static char *
slurp(const char *name)
{
	char path[600];
	char *s = NULL;
	unsigned long len = 0;
	(void)snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (fd_read_file(AT_FDCWD, path, 1 << 20, &s, &len) < 0)
		return strdup("");
	return s;
}

/* PolicyLocal on the channel FD (request id ID): the reply, or NULL. */
static Box__PolicyLocal *
ask_local(int fd, uint64_t id)
{
	Box__PolicyLocalRequest q = BOX__POLICY_LOCAL_REQUEST__INIT;
	if (box_ipc_send(fd, &box_proto_policy, BOX__MSG_TYPE__MSG_POLICY_LOCAL_REQUEST, id, &q.base,
			 NULL, 0) < 0)
		return NULL;
	struct box_ipc_chan *c = box_ipc_chan_new(fd, &box_proto_policy, BOX_POLICY_ROLE_POLICYD);
	(void)box_ipc_chan_set_state(c, BOX_POLICY_READY);
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	Box__PolicyLocal *ret = NULL;
	if (box_ipc_recv_wait(c, &m, 10000) > 0 && m.type == BOX__MSG_TYPE__MSG_POLICY_LOCAL &&
	    m.request_id == id) {
		ret = (Box__PolicyLocal *)m.msg;
		m.msg = NULL;
	}
	box_ipc_msg_done(&m);
	box_ipc_chan_free(c);
	return ret;
}

static bool
names(const Box__PolicyLocal *l, const char *action)
{
	for (size_t i = 0; l && i < l->n_actions; i++)
		if (strcmp(l->actions[i], action) == 0)
			return true;
	return false;
}

/* One shell:exec or fs:* request: fields kept in static storage per slot. */
struct req {
	Box__DecideRequest d;
	Box__PolicyField f[4];
	Box__PolicyValue v[4];
	Box__PolicyField *p[4];
};

static void
exec_req(struct req *r, const char *program)
{
	const char *n[4] = { "command", "program", "arg_count", "cwd" };
	box__decide_request__init(&r->d);
	for (int i = 0; i < 4; i++) {
		box__policy_field__init(&r->f[i]);
		box__policy_value__init(&r->v[i]);
		r->f[i].name = (char *)n[i];
		r->f[i].value = &r->v[i];
		r->p[i] = &r->f[i];
		r->v[i].kind_case = BOX__POLICY_VALUE__KIND_STR;
		r->v[i].str = (char *)(i == 3 ? "/" : program);
	}
	r->v[2].kind_case = BOX__POLICY_VALUE__KIND_INTEGER;
	r->v[2].integer = 0;
	r->d.action = (char *)"shell:exec";
	r->d.input = r->p;
	r->d.n_input = 4;
}

static void
fs_req(struct req *r, const char *action, const char *path, const char *op)
{
	const char *n[2] = { "path", "operation" };
	const char *v[2] = { path, op };
	box__decide_request__init(&r->d);
	for (int i = 0; i < 2; i++) {
		box__policy_field__init(&r->f[i]);
		box__policy_value__init(&r->v[i]);
		r->f[i].name = (char *)n[i];
		r->f[i].value = &r->v[i];
		r->p[i] = &r->f[i];
		r->v[i].kind_case = BOX__POLICY_VALUE__KIND_STR;
		r->v[i].str = (char *)v[i];
	}
	r->d.action = (char *)action;
	r->d.input = r->p;
	r->d.n_input = 2;
}

/* A decide item claiming PERMIT (or deny) with CAUSE and RULE (NULL: none). */
static void
claim(Box__PolicyShipItem *it, Box__DecideRequest *d, bool permit, Box__DecisionCause cause,
      char **rule)
{
	box__policy_ship_item__init(it);
	it->decide = d;
	it->has_verdict = it->has_cause = true;
	it->verdict = permit ? BOX__DECISION_VERDICT__VERDICT_PERMIT
			     : BOX__DECISION_VERDICT__VERDICT_DENY;
	it->cause = cause;
	it->rules = rule;
	it->n_rules = rule ? 1 : 0;
}

static int
ship(int fd, uint64_t id, uint64_t gen, Box__PolicyShipItem **items, size_t n)
{
	Box__PolicyShip m = BOX__POLICY_SHIP__INIT;
	m.generation = gen;
	m.items = items;
	m.n_items = n;
	return box_ipc_send(fd, &box_proto_policy, BOX__MSG_TYPE__MSG_POLICY_SHIP, id, &m.base, NULL,
			    0);
}

/* The log holds NEEDLE within 20 s (policyd writes its lines within 10 ms, later when loaded). */
static char *
log_with(const char *needle)
{
	for (int i = 0; i < 400; i++) {
		char *s = slurp("decisions.jsonl");
		if (strstr(s, needle))
			return s;
		free(s);
		usleep(50000);
	}
	return slurp("decisions.jsonl");
}

static void
test_local_actions(void)
{
	struct pd pd;
	CHECK_INT(start(&pd, plain), 0);
	Box__PolicyLocal *l = ask_local(pd.fd[PD_SHELL], pd.next_id++);
	CHECK(l != NULL);
	CHECK(l && l->generation == 1 && l->n_actions == 6 && names(l, "shell:exec") &&
	      names(l, "fs:write") && names(l, "shell:spawn"));
	CHECK(l && l->has_policy_text && l->policy_text.len == strlen(plain) &&
	      memcmp(l->policy_text.data, plain, strlen(plain)) == 0);
	CHECK(l && !names(l, "http:request") && !names(l, "net:connect"));
	box_msg_free(l ? &l->base : NULL);
	/* The gateway is told its own: no rule reads its connections or requests. */
	l = ask_local(pd.fd[PD_GATEWAY], pd.next_id++);
	CHECK(l && l->generation == 1 && l->n_actions == 2 && names(l, "http:request") &&
	      names(l, "net:connect"));
	box_msg_free(l ? &l->base : NULL);
	/* box-mcpd's channel asking is a protocol error: it decides nothing in process. */
	Box__PolicyLocalRequest q = BOX__POLICY_LOCAL_REQUEST__INIT;
	CHECK_INT(box_ipc_send(pd.fd[PD_MCPD], &box_proto_policy,
			       BOX__MSG_TYPE__MSG_POLICY_LOCAL_REQUEST, pd.next_id++, &q.base, NULL,
			       0),
		  0);
	CHECK_INT(pd_exited_within(&pd, 10000), 1);
	finish(&pd);

	CHECK_INT(start(&pd, http_budget), 0);
	l = ask_local(pd.fd[PD_GATEWAY], pd.next_id++);
	CHECK(l && l->n_actions == 1 && names(l, "net:connect") && !names(l, "http:request"));
	box_msg_free(l ? &l->base : NULL);
	CHECK_INT(pd_stop(&pd), 0);
	finish(&pd);

	CHECK_INT(start(&pd, budget), 0);
	l = ask_local(pd.fd[PD_SHELL], pd.next_id++);
	CHECK(l && names(l, "shell:exec") && names(l, "fs:read") && !names(l, "fs:write") &&
	      names(l, "fs:delete"));
	box_msg_free(l ? &l->base : NULL);
	CHECK_INT(pd_stop(&pd), 0);
	finish(&pd);

	CHECK_INT(start(&pd, previous), 0);
	l = ask_local(pd.fd[PD_SHELL], pd.next_id++);
	CHECK(l && l->n_actions == 0);
	box_msg_free(l ? &l->base : NULL);
	CHECK_INT(pd_stop(&pd), 0);
	finish(&pd);
}

/* An outcome item: ACTION's response {status: STATUS}, naming the permit DECIDE_ID. */
struct status_rec {
	Box__RecordRequest rec;
	Box__PolicyField f;
	Box__PolicyValue v;
	Box__PolicyField *p[1];
};

static void
status_record(struct status_rec *r, Box__PolicyShipItem *it, const char *action,
	      uint64_t decide_id, int64_t status)
{
	box__record_request__init(&r->rec);
	box__policy_field__init(&r->f);
	box__policy_value__init(&r->v);
	r->rec.kind = BOX__EVENT_KIND__EVENT_RESPONSE;
	r->rec.action = (char *)action;
	r->rec.decide_id = decide_id;
	r->f.name = (char *)"status";
	r->f.value = &r->v;
	r->v.kind_case = BOX__POLICY_VALUE__KIND_INTEGER;
	r->v.integer = status;
	r->p[0] = &r->f;
	r->rec.output = r->p;
	r->rec.n_output = 1;
	box__policy_ship_item__init(it);
	it->record = &r->rec;
}

/* A true ship: each decision logged as a Decide's, its permit recorded, in order. */
static void
test_ship_logged(void)
{
	struct pd pd;
	struct req a, b;
	char *echo[] = { (char *)"echo" }, *no_rm[] = { (char *)"no_rm" };
	Box__PolicyShipItem it[5], *p[5] = { &it[0], &it[1], &it[2], &it[3], &it[4] };
	Box__RecordRequest rec2 = BOX__RECORD_REQUEST__INIT;
	struct status_rec r;

	CHECK_INT(start(&pd, plain), 0);
	exec_req(&a, "echo");
	exec_req(&b, "rm");
	uint64_t id = pd.next_id;
	pd.next_id += 3;
	claim(&it[0], &a.d, true, BOX__DECISION_CAUSE__CAUSE_PERMITTED, echo);
	status_record(&r, &it[1], "shell:exec", id, 0);
	claim(&it[2], &b.d, false, BOX__DECISION_CAUSE__CAUSE_FORBIDDEN, no_rm);
	/* echo again (id + 2): its outcome in the next ship (the permit's own copy) */
	claim(&it[3], &a.d, true, BOX__DECISION_CAUSE__CAUSE_PERMITTED, echo);
	CHECK_INT(ship(pd.fd[PD_SHELL], id, 1, p, 4), 0);
	rec2 = r.rec;
	rec2.decide_id = id + 2;
	box__policy_ship_item__init(&it[4]);
	it[4].record = &rec2;
	CHECK_INT(ship(pd.fd[PD_SHELL], pd.next_id, 1, &p[4], 1), 0);
	/* A Decide after it is answered: the ship was taken, nothing ended. */
	Box__DecideReply *rep = NULL;
	CHECK_INT(pd_send_line(&pd, PD_SHELL,
			       "{\"action\":\"shell:exec\",\"input\":{\"command\":\"ls\","
			       "\"program\":\"ls\",\"arg_count\":0,\"cwd\":\"/\"}}",
			       &rep),
		  0);
	box_msg_free(rep ? &rep->base : NULL);
	char *log = log_with("\"program\":\"ls\"");
	const char *d1 = strstr(log, "\"program\":\"echo\"");
	const char *r1 = strstr(log, "\"record\":\"response\"");
	const char *d2 = strstr(log, "\"program\":\"rm\"");
	const char *d3 = strstr(log, "\"program\":\"ls\"");
	CHECK(d1 && r1 && d2 && d3 && d1 < r1 && r1 < d2 && d2 < d3);
	/* each outcome line is its decision's input (one of the same ship, one of an earlier) */
	const char *rec_line = "\"record\":\"response\",\"action\":\"shell:exec\",\"input\":"
			       "{\"command\":\"echo\",\"program\":\"echo\",\"arg_count\":0,"
			       "\"cwd\":\"/\"},\"output\":{\"status\":0}";
	const char *o1 = strstr(log, rec_line), *o2 = o1 ? strstr(o1 + 1, rec_line) : NULL;
	CHECK(o1 == r1 && o2 && d2 < o2);
	if (!o2)
		printf("# log: %s\n", log);
	CHECK(strstr(log, "\"rules\":[\"no_rm\"]") != NULL);
	CHECK(strstr(log, "\"source\":\"box-shell\"") != NULL);
	free(log);
	CHECK_INT(pd_stop(&pd), 0);
	finish(&pd);
}

/* SHIP's one item (built by the caller) on fd 6: policyd exits 1 naming WHY; no line. */
static void
refused(const char *policy, Box__PolicyShipItem *it, uint64_t gen, const char *why,
	const char *program)
{
	struct pd pd;
	CHECK_INT(start(&pd, policy), 0);
	uint64_t id = pd.next_id++;
	CHECK_INT(ship(pd.fd[PD_SHELL], id, gen, &it, 1), 0);
	CHECK_INT(pd_exited_within(&pd, 10000), 1);
	char *err = slurp("policyd.err");
	CHECK(strstr(err, "Protocol error from shell") != NULL && strstr(err, why) != NULL);
	if (!strstr(err, why))
		printf("# policyd said: %s\n", err);
	free(err);
	char *log = slurp("decisions.jsonl");
	CHECK(strstr(log, program) == NULL);
	free(log);
	finish(&pd);
}

static void
test_forged_refused(void)
{
	struct req r;
	Box__PolicyShipItem it;
	char *echo[] = { (char *)"echo" }, *other[] = { (char *)"no_rm" };
	char *all[] = { (char *)"all" };

	/* A permit the policy does not give (rm is forbidden). */
	exec_req(&r, "rm");
	claim(&it, &r.d, true, BOX__DECISION_CAUSE__CAUSE_PERMITTED, echo);
	refused(plain, &it, 1, "shipped a permit (cause permitted) of shell:exec where the policy "
			       "says deny", "\"program\":\"rm\"");
	/* The right verdict, other rules. */
	exec_req(&r, "echo");
	claim(&it, &r.d, true, BOX__DECISION_CAUSE__CAUSE_PERMITTED, other);
	refused(plain, &it, 1, "naming other rules", "\"program\":\"echo\"");
	/* A decision of another generation. */
	claim(&it, &r.d, true, BOX__DECISION_CAUSE__CAUSE_PERMITTED, echo);
	refused(plain, &it, 2, "generation 2", "\"program\":\"echo\"");
	/* fs:write is read by a temporal rule: even its true decision is refused. */
	fs_req(&r, "fs:write", "/w/a", "write_content");
	claim(&it, &r.d, true, BOX__DECISION_CAUSE__CAUSE_PERMITTED, all);
	refused(budget, &it, 1, "shipped a decision of fs:write, which needs box-policyd",
		"\"path\":\"/w/a\"");
}

/* One http:request as box-gateway asks it: host, port, method, path, body_bytes, intercepted. */
struct http_req {
	Box__DecideRequest d;
	Box__PolicyField f[6];
	Box__PolicyValue v[6];
	Box__PolicyField *p[6];
};

static void
http_req(struct http_req *r, const char *host, const char *path)
{
	const char *n[6] = { "host", "port", "method", "path", "body_bytes", "intercepted" };
	const char *v[6] = { host, NULL, "GET", path, NULL, NULL };
	box__decide_request__init(&r->d);
	for (int i = 0; i < 6; i++) {
		box__policy_field__init(&r->f[i]);
		box__policy_value__init(&r->v[i]);
		r->f[i].name = (char *)n[i];
		r->f[i].value = &r->v[i];
		r->p[i] = &r->f[i];
		r->v[i].kind_case = BOX__POLICY_VALUE__KIND_STR;
		r->v[i].str = (char *)v[i];
	}
	r->v[1].kind_case = BOX__POLICY_VALUE__KIND_INTEGER;
	r->v[1].integer = 443;
	r->v[4].kind_case = BOX__POLICY_VALUE__KIND_INTEGER;
	r->v[4].integer = 0;
	r->v[5].kind_case = BOX__POLICY_VALUE__KIND_BOOLEAN;
	r->v[5].boolean = true;
	r->d.action = (char *)"http:request";
	r->d.input = r->p;
	r->d.n_input = 6;
}

/*
 * box-gateway's ships: a true one is logged as its Decides would be (source
 * box-gateway) with its outcome; a forged permit, a decision of an action it does not
 * raise, or one a temporal rule reads ends box-policyd (the gateway's channel is one
 * of its own), and the forged line is never logged.
 */
static void
test_gateway_ship(void)
{
	struct pd pd;
	struct http_req a, b;
	struct req e;
	char *api[] = { (char *)"api" };
	Box__PolicyShipItem it[3], *p[3] = { &it[0], &it[1], &it[2] };
	struct status_rec r;

	CHECK_INT(start(&pd, http_plain), 0);
	http_req(&a, "api.test", "/v1/ok");
	http_req(&b, "evil.test", "/v1/denied");
	uint64_t id = pd.next_id;
	pd.next_id += 2;
	claim(&it[0], &a.d, true, BOX__DECISION_CAUSE__CAUSE_PERMITTED, api);
	status_record(&r, &it[1], "http:request", id, 200);
	claim(&it[2], &b.d, false, BOX__DECISION_CAUSE__CAUSE_NO_MATCH, NULL);
	CHECK_INT(ship(pd.fd[PD_GATEWAY], id, 1, p, 3), 0);
	char *log = log_with("/v1/denied");
	const char *d1 = strstr(log, "\"path\":\"/v1/ok\"");
	const char *r1 = strstr(log, "\"record\":\"response\"");
	const char *d2 = strstr(log, "\"path\":\"/v1/denied\"");
	CHECK(d1 && r1 && d2 && d1 < r1 && r1 < d2);
	CHECK(strstr(log, "\"source\":\"box-gateway\"") != NULL);
	CHECK(strstr(log, "\"output\":{\"status\":200}") != NULL);
	if (!(d1 && r1 && d2))
		printf("# log: %s\n", log);
	free(log);
	CHECK_INT(pd_stop(&pd), 0);
	finish(&pd);

	/* A permit of a host the policy does not name. */
	CHECK_INT(start(&pd, http_plain), 0);
	claim(&it[0], &b.d, true, BOX__DECISION_CAUSE__CAUSE_PERMITTED, api);
	CHECK_INT(ship(pd.fd[PD_GATEWAY], pd.next_id++, 1, p, 1), 0);
	CHECK_INT(pd_exited_within(&pd, 10000), 1);
	char *err = slurp("policyd.err");
	CHECK(strstr(err, "Protocol error from gateway") != NULL &&
	      strstr(err, "shipped a permit (cause permitted) of http:request where the policy "
			  "says deny") != NULL);
	if (!strstr(err, "Protocol error from gateway"))
		printf("# policyd said: %s\n", err);
	free(err);
	log = slurp("decisions.jsonl");
	CHECK(strstr(log, "evil.test") == NULL);
	free(log);
	finish(&pd);

	/* A decision of box-shell's. */
	CHECK_INT(start(&pd, plain), 0);
	exec_req(&e, "echo");
	char *echo[] = { (char *)"echo" };
	claim(&it[0], &e.d, true, BOX__DECISION_CAUSE__CAUSE_PERMITTED, echo);
	CHECK_INT(ship(pd.fd[PD_GATEWAY], pd.next_id++, 1, p, 1), 0);
	CHECK_INT(pd_exited_within(&pd, 10000), 1);
	err = slurp("policyd.err");
	CHECK(strstr(err, "Protocol error from gateway") != NULL);
	free(err);
	log = slurp("decisions.jsonl");
	CHECK(strstr(log, "\"program\":\"echo\"") == NULL);
	free(log);
	finish(&pd);

	/* http:request under a request budget: even its true decision is refused. */
	CHECK_INT(start(&pd, http_budget), 0);
	http_req(&a, "api.test", "/v1/budgeted");
	claim(&it[0], &a.d, true, BOX__DECISION_CAUSE__CAUSE_PERMITTED, api);
	CHECK_INT(ship(pd.fd[PD_GATEWAY], pd.next_id++, 1, p, 1), 0);
	CHECK_INT(pd_exited_within(&pd, 10000), 1);
	err = slurp("policyd.err");
	CHECK(strstr(err, "shipped a decision of http:request, which needs box-policyd") != NULL);
	free(err);
	log = slurp("decisions.jsonl");
	CHECK(strstr(log, "/v1/budgeted") == NULL);
	free(log);
	finish(&pd);
}

/* SHIP's N items (first decide id ID) on fd 6: policyd exits 1 naming WHY; LOGGED the lines before. */
static void
refused_n(Box__PolicyShipItem **p, size_t n, size_t n_dec, const char *why, int logged)
{
	struct pd pd;
	CHECK_INT(start(&pd, plain), 0);
	uint64_t id = pd.next_id;
	pd.next_id += n_dec;
	for (size_t i = 0; i < n; i++)
		if (p[i]->record)
			p[i]->record->decide_id += id; /* (given relative to the first) */
	CHECK_INT(ship(pd.fd[PD_SHELL], id, 1, p, n), 0);
	int ex = pd_exited_within(&pd, 10000);
	CHECK_INT(ex, 1);
	if (ex != 1)
		printf("# (%s) policyd did not end\n", why);
	for (size_t i = 0; i < n; i++)
		if (p[i]->record)
			p[i]->record->decide_id -= id;
	char *err = slurp("policyd.err");
	CHECK(strstr(err, "Protocol error from shell") != NULL && strstr(err, why) != NULL);
	if (!strstr(err, why))
		printf("# policyd said: %s\n", err);
	free(err);
	char *log = slurp("decisions.jsonl");
	int lines = 0;
	for (const char *c = log; (c = strchr(c, '\n')); c++)
		lines++;
	/* (and the seal line policyd writes as it ends) */
	CHECK_INT(lines - (strstr(log, "\"seal\"") != NULL), logged);
	if (lines - (strstr(log, "\"seal\"") != NULL) != logged)
		printf("# (%s) log: %s\n", why, log);
	free(log);
	finish(&pd);
}

/*
 * Records of decisions of the same ship (policyd keeps those permits in the ship, not
 * in the channel's set): each permit is taken once, only by a record after it, only
 * for its own action, never a denial's; anything else is refused there as for a
 * permit in the set.
 */
static void
test_ship_records_in_ship(void)
{
	struct req a, b;
	char *echo[] = { (char *)"echo" }, *no_rm[] = { (char *)"no_rm" };
	Box__PolicyShipItem it[4], *p[4] = { &it[0], &it[1], &it[2], &it[3] };
	Box__RecordRequest rec[2] = { BOX__RECORD_REQUEST__INIT, BOX__RECORD_REQUEST__INIT };
	Box__PolicyField of = BOX__POLICY_FIELD__INIT;
	Box__PolicyValue ov = BOX__POLICY_VALUE__INIT;
	Box__PolicyField *op[1] = { &of };

	exec_req(&a, "echo");
	exec_req(&b, "rm");
	of.name = (char *)"status";
	of.value = &ov;
	ov.kind_case = BOX__POLICY_VALUE__KIND_INTEGER;
	for (int i = 0; i < 2; i++) {
		rec[i].kind = BOX__EVENT_KIND__EVENT_RESPONSE;
		rec[i].action = (char *)"shell:exec";
		rec[i].output = op;
		rec[i].n_output = 1;
		box__policy_ship_item__init(&it[1 + i]);
		it[1 + i].record = &rec[i];
	}
	/* echo's permit recorded twice in its ship: the second finds no permit */
	claim(&it[0], &a.d, true, BOX__DECISION_CAUSE__CAUSE_PERMITTED, echo);
	refused_n(p, 3, 1, "which is no permit of its channel still without an outcome", 2);
	/* an outcome of a denial of the same ship */
	claim(&it[0], &b.d, false, BOX__DECISION_CAUSE__CAUSE_FORBIDDEN, no_rm);
	refused_n(p, 2, 1, "which is no permit of its channel still without an outcome", 1);
	/* an outcome before its decision (the record first) */
	box__policy_ship_item__init(&it[0]);
	it[0].record = &rec[0];
	claim(&it[1], &a.d, true, BOX__DECISION_CAUSE__CAUSE_PERMITTED, echo);
	refused_n(p, 2, 1, "which is no permit of its channel still without an outcome", 0);
	box__policy_ship_item__init(&it[1]);
	it[1].record = &rec[1];
	/* an outcome of another action than its permit's */
	claim(&it[0], &a.d, true, BOX__DECISION_CAUSE__CAUSE_PERMITTED, echo);
	rec[1].action = (char *)"fs:read";
	refused_n(p, 2, 1, "recorded an outcome of fs:read for Decide", 1);
	rec[1].action = (char *)"shell:exec";
	/* two permits, their outcomes in turn: all four lines, and the ship goes on */
	claim(&it[0], &a.d, true, BOX__DECISION_CAUSE__CAUSE_PERMITTED, echo);
	claim(&it[1], &a.d, true, BOX__DECISION_CAUSE__CAUSE_PERMITTED, echo);
	box__policy_ship_item__init(&it[2]);
	box__policy_ship_item__init(&it[3]);
	it[2].record = &rec[0];
	it[3].record = &rec[1];
	rec[0].decide_id = 1;
	rec[1].decide_id = 0;
	struct pd pd;
	CHECK_INT(start(&pd, plain), 0);
	uint64_t id = pd.next_id;
	pd.next_id += 2;
	rec[0].decide_id += id;
	rec[1].decide_id += id;
	CHECK_INT(ship(pd.fd[PD_SHELL], id, 1, p, 4), 0);
	/* and a record of one of them again, in a later ship: no permit is left */
	Box__PolicyShipItem *again = &it[2];
	CHECK_INT(ship(pd.fd[PD_SHELL], pd.next_id, 1, &again, 1), 0);
	CHECK_INT(pd_exited_within(&pd, 10000), 1);
	char *err = slurp("policyd.err");
	CHECK(strstr(err, "which is no permit of its channel still without an outcome") != NULL);
	free(err);
	char *log = slurp("decisions.jsonl");
	int outcomes = 0;
	for (const char *c = log; (c = strstr(c, "\"record\":\"response\"")); c++)
		outcomes++;
	CHECK_INT(outcomes, 2);
	free(log);
	finish(&pd);
}

/* A channel boxd attached for a supervised program (PolicyChannelAttach on boxd's channel). */
static int
attach_supervisor(struct pd *pd)
{
	return pd_attach_new(pd->fd[PD_BOXD], false);
}

/* The channel FD was closed by box-policyd (within 10 s). */
static bool
closed_by_policyd(int fd)
{
	struct pollfd pf = { fd, POLLIN, 0 };
	char b[8];
	return poll(&pf, 1, 10000) == 1 && recv(fd, b, sizeof(b), MSG_DONTWAIT) <= 0;
}

/* On an attached channel, a forged ship closes that channel only. */
static void
test_forged_attached(void)
{
	struct pd pd;
	struct req r;
	Box__PolicyShipItem it, *p = &it;
	char *echo[] = { (char *)"echo" };

	CHECK_INT(start(&pd, plain), 0);
	int fd = pd_attach_new(pd.fd[PD_SHELL], false);
	CHECK(fd >= 0);
	exec_req(&r, "rm");
	claim(&it, &r.d, true, BOX__DECISION_CAUSE__CAUSE_PERMITTED, echo);
	CHECK_INT(ship(fd, 1, 1, &p, 1), 0);
	CHECK(closed_by_policyd(fd));
	close(fd);
	CHECK_INT(pd_exited_within(&pd, 200), -1);
	char *log = slurp("decisions.jsonl");
	CHECK(strstr(log, "\"program\":\"rm\"") == NULL);
	free(log);
	CHECK_INT(pd_stop(&pd), 0);
	finish(&pd);
}

/*
 * A DecideBatchRequest naming generation GEN (history_free) of the fs:* requests R[0..N) on
 * the channel FD, first id ID: -1 no reply, else how many permits; *STALE its stale flag.
 */
static int
batch_hf(int fd, uint64_t id, uint64_t gen, struct req *r, size_t n, bool *stale)
{
	Box__DecideRequest *p[4];
	Box__DecideBatchRequest b = BOX__DECIDE_BATCH_REQUEST__INIT;
	for (size_t i = 0; i < n; i++)
		p[i] = &r[i].d;
	b.requests = p;
	b.n_requests = n;
	b.has_history_free = true;
	b.history_free = gen;
	if (box_ipc_send(fd, &box_proto_policy, BOX__MSG_TYPE__MSG_DECIDE_BATCH_REQUEST, id,
			 &b.base, NULL, 0) < 0)
		return -1;
	struct box_ipc_chan *c = box_ipc_chan_new(fd, &box_proto_policy, BOX_POLICY_ROLE_POLICYD);
	(void)box_ipc_chan_set_state(c, BOX_POLICY_READY);
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	int ret = -1;
	if (box_ipc_recv_wait(c, &m, 10000) > 0 &&
	    m.type == BOX__MSG_TYPE__MSG_DECIDE_BATCH_REPLY && m.request_id == id) {
		const Box__DecideBatchReply *rep = (const Box__DecideBatchReply *)m.msg;
		*stale = rep->has_stale && rep->stale;
		ret = 0;
		for (size_t i = 0; i < rep->n_replies; i++)
			ret += rep->replies[i]->verdict == BOX__DECISION_VERDICT__VERDICT_PERMIT;
		if (!*stale && rep->n_replies != n)
			ret = -1;
	}
	box_ipc_msg_done(&m);
	box_ipc_chan_free(c);
	return ret;
}

/* `boxctl policy reload` of TEXT, as boxd sends it: 1 in force, else 0 or -1. */
static int
reload(struct pd *pd, const char *text)
{
	Box__PolicyReload rl = BOX__POLICY_RELOAD__INIT;
	rl.has_policy_text = true;
	rl.policy_text.data = (uint8_t *)text;
	rl.policy_text.len = strlen(text);
	rl.uid = 1000;
	uint64_t rid = pd->next_id++;
	if (box_ipc_send(pd->fd[PD_BOXD], &box_proto_policy, BOX__MSG_TYPE__MSG_POLICY_RELOAD, rid,
			 &rl.base, NULL, 0) < 0)
		return -1;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	int r = -1;
	if (pd_recv(pd, PD_BOXD, &m, 20000) > 0 &&
	    m.type == BOX__MSG_TYPE__MSG_POLICY_RELOAD_REPLY && m.request_id == rid)
		r = ((const Box__PolicyReloadReply *)m.msg)->ok;
	box_ipc_msg_done(&m);
	return r;
}

/*
 * A supervised program's channel (boxd attaches it): PolicyLocal names its qualifying fs:*
 * actions, with the text and the page; a DecideBatchRequest naming that generation is decided and
 * logged; one with an action that does not qualify, or after a reload moved the
 * generation, is stale: nothing decided, no line. Asked again, the new generation batches.
 */
static void
test_supervisor_batch(void)
{
	struct pd pd;
	struct req r[2];
	bool stale = false;

	CHECK_INT(start(&pd, budget), 0);
	int fd = attach_supervisor(&pd);
	CHECK(fd >= 0);
	Box__PolicyLocal *l = ask_local(fd, 1);
	CHECK(l && l->generation == 1 && names(l, "fs:read") && names(l, "fs:delete") &&
	      !names(l, "fs:write") && !names(l, "shell:exec") && l->has_policy_text);
	box_msg_free(l ? &l->base : NULL);
	fs_req(&r[0], "fs:read", "/p/batched-a", "read_content");
	fs_req(&r[1], "fs:read", "/p/batched-b", "read_metadata");
	CHECK_INT(batch_hf(fd, 2, 1, r, 2, &stale), 2);
	CHECK(!stale);
	/* fs:write is read by the budget: never batched as history-free */
	fs_req(&r[1], "fs:write", "/p/stale-write", "write_content");
	CHECK_INT(batch_hf(fd, 10, 1, r, 2, &stale), 0);
	CHECK(stale);
	/* a reload moves the generation: generation 1's batch is stale */
	CHECK_INT(reload(&pd, plain), 1);
	fs_req(&r[0], "fs:read", "/p/stale-read", "read_content");
	CHECK_INT(batch_hf(fd, 20, 1, r, 1, &stale), 0);
	CHECK(stale);
	l = ask_local(fd, 30);
	CHECK(l && l->generation == 2 && names(l, "fs:write"));
	box_msg_free(l ? &l->base : NULL);
	fs_req(&r[0], "fs:write", "/p/gen2-write", "write_content");
	fs_req(&r[1], "fs:read", "/p/gen2-read", "read_content");
	CHECK_INT(batch_hf(fd, 31, 2, r, 2, &stale), 0); /* plain permits no fs:* */
	CHECK(!stale);
	char *log = log_with("gen2-read");
	CHECK(strstr(log, "batched-a") && strstr(log, "batched-b") && strstr(log, "gen2-write"));
	CHECK(!strstr(log, "stale-write") && !strstr(log, "stale-read"));
	free(log);
	close(fd);
	CHECK_INT(pd_stop(&pd), 0);
	finish(&pd);
}

/*
 * A supervised program's decisions made in process (box-trampoline/supervise.c): a true
 * ship is logged with source supervisor; a forged permit, an action the program does not
 * raise (shell:exec) and fs:write under a temporal rule each close that program's channel
 * only (no line), and box-policyd goes on.
 */
static void
test_supervisor_ship(void)
{
	struct pd pd;
	struct req r[2];
	Box__PolicyShipItem it[2], *p[2] = { &it[0], &it[1] };
	char *all[] = { (char *)"all" };

	CHECK_INT(start(&pd, budget), 0);
	int fd = attach_supervisor(&pd);
	CHECK(fd >= 0);
	Box__PolicyLocal *l = ask_local(fd, 1);
	CHECK(l && l->generation == 1 && names(l, "fs:read") && !names(l, "fs:write") &&
	      !names(l, "shell:exec") && l->has_policy_text);
	box_msg_free(l ? &l->base : NULL);
	fs_req(&r[0], "fs:read", "/p/shipped-a", "read_content");
	fs_req(&r[1], "fs:read", "/p/shipped-b", "read_metadata");
	claim(&it[0], &r[0].d, true, BOX__DECISION_CAUSE__CAUSE_PERMITTED, all);
	claim(&it[1], &r[1].d, true, BOX__DECISION_CAUSE__CAUSE_PERMITTED, all);
	CHECK_INT(ship(fd, 2, 1, p, 2), 0);
	char *log = log_with("shipped-b");
	const char *a = strstr(log, "shipped-a"), *b = strstr(log, "shipped-b");
	CHECK(a && b && a < b);
	/* each line's source (the line holding the path) */
	const char *line = a;
	while (line > log && line[-1] != '\n')
		line--;
	CHECK(strstr(line, "\"source\":\"supervisor\"") && strstr(line, "\"source\":\"supervisor\"") < a + 200);
	free(log);

	/* refused: each closes the program's channel, never the box */
	static const struct {
		const char *action, *path;
		bool permit;
	} forged[] = {
		{ "fs:delete", "/p/forged-delete", true }, /* budget permits no fs:delete */
		{ "fs:write", "/p/forged-write", true },   /* read by the budget: not in process */
	};
	for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
		int f2 = attach_supervisor(&pd);
		CHECK(f2 >= 0);
		box_msg_free((l = ask_local(f2, 1)) ? &l->base : NULL);
		fs_req(&r[0], forged[i].action, forged[i].path, "write_content");
		claim(&it[0], &r[0].d, forged[i].permit, BOX__DECISION_CAUSE__CAUSE_PERMITTED, all);
		CHECK_INT(ship(f2, 2, 1, p, 1), 0);
		CHECK(closed_by_policyd(f2));
		close(f2);
	}
	int f3 = attach_supervisor(&pd);
	CHECK(f3 >= 0);
	box_msg_free((l = ask_local(f3, 1)) ? &l->base : NULL);
	exec_req(&r[0], "echo");
	claim(&it[0], &r[0].d, true, BOX__DECISION_CAUSE__CAUSE_PERMITTED, all);
	CHECK_INT(ship(f3, 2, 1, p, 1), 0);
	CHECK(closed_by_policyd(f3));
	close(f3);
	CHECK_INT(pd_exited_within(&pd, 200), -1);
	/* the first channel still decides: a true ship after the refusals is logged */
	fs_req(&r[0], "fs:read", "/p/after-refusals", "read_content");
	claim(&it[0], &r[0].d, true, BOX__DECISION_CAUSE__CAUSE_PERMITTED, all);
	CHECK_INT(ship(fd, 4, 1, p, 1), 0);
	log = log_with("after-refusals");
	CHECK(strstr(log, "after-refusals") != NULL);
	CHECK(!strstr(log, "forged-delete") && !strstr(log, "forged-write") &&
	      !strstr(log, "\"program\":\"echo\""));
	free(log);
	char *err = slurp("policyd.err");
	CHECK(strstr(err, "An attached supervised program's channel") != NULL);
	free(err);
	close(fd);
	CHECK_INT(pd_stop(&pd), 0);
	finish(&pd);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	RUN(test_local_actions);
	RUN(test_ship_logged);
	RUN(test_forged_refused);
	RUN(test_forged_attached);
	RUN(test_ship_records_in_ship);
	RUN(test_supervisor_batch);
	RUN(test_supervisor_ship);
	RUN(test_gateway_ship);
	return tap_done();
}
