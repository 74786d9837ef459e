/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_policy_client — libpolicyclient/policy_client.c against a socketpair peer
 * that plays box-policyd: it reads what the client sends with the policy protocol's
 * own table (role peer) and answers with real replies, errors, a reply of the wrong
 * id or type, too many replies, an oversize packet, or a closed socket.
 * Blocking mode: the peer answers ahead (policy_client_next_id), the client's call
 * then sends and reads. Event mode: a libevent loop, run until the callbacks came.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "ipc.h"
#include "policy_client.h"
#include "proto/proto_policy.h"
#include "tap.h"

static const uint32_t decide_types[] = { BOX__MSG_TYPE__MSG_DECIDE_REPLY,
					 BOX__MSG_TYPE__MSG_DECIDE_BATCH_REPLY };
static const uint32_t all_types[] = { BOX__MSG_TYPE__MSG_DECIDE_REPLY,
				      BOX__MSG_TYPE__MSG_DECIDE_BATCH_REPLY,
				      BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY,
				      BOX__MSG_TYPE__MSG_POLICY_PROBE_REPLY };

/* ---- the peer: box-policyd's side ------------------------------------------------ */

struct peer {
	int fd;                   /* box-policyd's end */
	struct box_ipc_chan *chan; /* what it reads: from a `peer`, in `ready` */
};

static int
peer_new(struct peer *p, int *client_fd)
{
	int sv[2];
	if (box_ipc_socketpair(sv, false) < 0)
		return -errno;
	p->fd = sv[0];
	*client_fd = sv[1];
	p->chan = box_ipc_chan_new(p->fd, &box_proto_policy, BOX_POLICY_ROLE_PEER);
	if (!p->chan || box_ipc_chan_set_state(p->chan, BOX_POLICY_READY) < 0)
		return -ENOMEM;
	return 0;
}

static void
peer_close(struct peer *p)
{
	p->chan = box_ipc_chan_free(p->chan);
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
}

/* One message the client sent (waits; the cap only a hang reaches). */
static int
peer_recv(struct peer *p, struct box_ipc_msg *m)
{
	int r = box_ipc_recv_wait(p->chan, m, 60000);
	return r == 1 ? 0 : r < 0 ? r : -EIO;
}

/* Nothing waits to be read. */
static bool
peer_idle(struct peer *p)
{
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	int r = box_ipc_recv(p->chan, &m);
	box_ipc_msg_done(&m);
	return r == -EAGAIN;
}

static void
reply_init(Box__DecideReply *rep, bool permit)
{
	static char *rules[] = { "policy_0" };
	box__decide_reply__init(rep);
	rep->verdict = permit ? BOX__DECISION_VERDICT__VERDICT_PERMIT
			      : BOX__DECISION_VERDICT__VERDICT_DENY;
	rep->cause = permit ? BOX__DECISION_CAUSE__CAUSE_PERMITTED
			    : BOX__DECISION_CAUSE__CAUSE_NO_MATCH;
	rep->rules = permit ? rules : NULL;
	rep->n_rules = permit ? 1 : 0;
	rep->message = permit ? "policy policy_0 permits it" : "no policy permits it";
}

static int
peer_decide_reply(struct peer *p, uint64_t id, bool permit)
{
	Box__DecideReply rep;
	reply_init(&rep, permit);
	return box_ipc_send(p->fd, &box_proto_policy, BOX__MSG_TYPE__MSG_DECIDE_REPLY, id,
			    &rep.base, NULL, 0);
}

/* A DecideBatchReply of N replies to the batch ID, PERMIT[i] each. */
static int
peer_batch_reply(struct peer *p, uint64_t id, const bool *permit, size_t n)
{
	Box__DecideReply reps[8], *rp[8];
	for (size_t i = 0; i < n; i++) {
		reply_init(&reps[i], permit[i]);
		rp[i] = &reps[i];
	}
	Box__DecideBatchReply b = BOX__DECIDE_BATCH_REPLY__INIT;
	b.replies = rp;
	b.n_replies = n;
	return box_ipc_send(p->fd, &box_proto_policy, BOX__MSG_TYPE__MSG_DECIDE_BATCH_REPLY, id,
			    &b.base, NULL, 0);
}

/* ---- the requests ------------------------------------------------------------------ */

struct input {
	Box__PolicyField f;
	Box__PolicyValue v;
	Box__PolicyField *p[1];
};

static void
input_init(struct input *in, const char *path)
{
	box__policy_field__init(&in->f);
	box__policy_value__init(&in->v);
	in->f.name = "path";
	in->f.value = &in->v;
	in->v.kind_case = BOX__POLICY_VALUE__KIND_STR;
	in->v.str = (char *)path;
	in->p[0] = &in->f;
}

static void
decide_init(Box__DecideRequest *req, struct input *in, const char *path)
{
	input_init(in, path);
	box__decide_request__init(req);
	req->action = "fs:read";
	req->input = in->p;
	req->n_input = 1;
}

static int
call_decide(struct policy_client *c, const char *path, struct box_ipc_msg *m)
{
	struct input in;
	Box__DecideRequest req;
	decide_init(&req, &in, path);
	return policy_client_call(c, BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &req.base, m);
}

static int
record(struct policy_client *c, bool ok, const char *path)
{
	struct input in, out;
	input_init(&in, path);
	input_init(&out, "done");
	out.f.name = "result";
	struct policy_client_outcome o = { .ok = ok, .action = "fs:read", .in = in.p, .n_in = 1,
					   .out = out.p, .n_out = 1 };
	return policy_client_record(c, &o, 1);
}

/* ---- blocking mode --------------------------------------------------------------- */

static void
test_sync_decide_and_record(void)
{
	struct peer p;
	int cfd;
	struct policy_client *c = NULL;
	CHECK_INT(peer_new(&p, &cfd), 0);
	CHECK_INT(policy_client_new_sync(cfd, decide_types, 2, &c), 0);
	if (!c)
		return;
	CHECK_INT(policy_client_next_id(c), 1);

	/* A permit: kept, and the request went out as asked. */
	CHECK_INT(peer_decide_reply(&p, 1, true), 0);
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	CHECK_INT(call_decide(c, "/a", &m), 0);
	CHECK_INT(m.type, BOX__MSG_TYPE__MSG_DECIDE_REPLY);
	CHECK(policy_client_permitted((const Box__DecideReply *)m.msg));
	box_ipc_msg_done(&m);
	CHECK_INT(policy_client_permits(c), 1);
	CHECK_INT(peer_recv(&p, &m), 0);
	CHECK_INT(m.type, BOX__MSG_TYPE__MSG_DECIDE_REQUEST);
	CHECK_INT(m.request_id, 1);
	CHECK_STR(((const Box__DecideRequest *)m.msg)->input[0]->value->str, "/a");
	box_ipc_msg_done(&m);

	/* A denial: no permit. */
	CHECK_INT(peer_decide_reply(&p, 2, false), 0);
	CHECK_INT(call_decide(c, "/b", &m), 0);
	CHECK(!policy_client_permitted((const Box__DecideReply *)m.msg));
	box_ipc_msg_done(&m);
	CHECK_INT(policy_client_permits(c), 1);
	CHECK_INT(peer_recv(&p, &m), 0);
	box_ipc_msg_done(&m);

	/* The outcome of /a names permit 1, with its output; a second one has no permit. */
	CHECK_INT(record(c, true, "/a"), 1);
	CHECK_INT(peer_recv(&p, &m), 0);
	CHECK_INT(m.type, BOX__MSG_TYPE__MSG_RECORD_REQUEST);
	const Box__RecordRequest *rec = (const Box__RecordRequest *)m.msg;
	CHECK_INT(rec->decide_id, 1);
	CHECK_INT(rec->kind, BOX__EVENT_KIND__EVENT_RESPONSE);
	CHECK_INT(rec->n_output, 1);
	box_ipc_msg_done(&m);
	CHECK_INT(record(c, true, "/a"), 0);
	CHECK_INT(record(c, false, "/b"), 0); /* denied: never a permit */
	CHECK(peer_idle(&p));
	CHECK_INT(policy_client_permits(c), 0);

	policy_client_free(c);
	peer_close(&p);
}

static void
test_sync_batch_and_record_batch(void)
{
	struct peer p;
	int cfd;
	struct policy_client *c = NULL;
	CHECK_INT(peer_new(&p, &cfd), 0);
	CHECK_INT(policy_client_new_sync(cfd, decide_types, 2, &c), 0);
	if (!c)
		return;
	struct input in[3];
	Box__DecideRequest reqs[3], *rp[3];
	const char *paths[3] = { "/x", "/y", "/z" };
	for (int i = 0; i < 3; i++) {
		decide_init(&reqs[i], &in[i], paths[i]);
		rp[i] = &reqs[i];
	}
	Box__DecideBatchRequest b = BOX__DECIDE_BATCH_REQUEST__INIT;
	b.requests = rp;
	b.n_requests = 3;
	const bool verdicts[3] = { true, false, true };
	CHECK_INT(peer_batch_reply(&p, 1, verdicts, 3), 0);
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	CHECK_INT(policy_client_call(c, BOX__MSG_TYPE__MSG_DECIDE_BATCH_REQUEST, &b.base, &m), 0);
	box_ipc_msg_done(&m);
	/* A batch of 3 took ids 1..3; /x (1) and /z (3) are permits. */
	CHECK_INT(policy_client_next_id(c), 4);
	CHECK_INT(policy_client_permits(c), 2);
	CHECK_INT(peer_recv(&p, &m), 0);
	CHECK_INT(m.type, BOX__MSG_TYPE__MSG_DECIDE_BATCH_REQUEST);
	CHECK_INT(m.request_id, 1);
	box_ipc_msg_done(&m);

	/* Three outcomes, /y without a permit: one RecordBatch of two, in order. */
	struct policy_client_outcome o[3];
	for (int i = 0; i < 3; i++)
		o[i] = (struct policy_client_outcome){ .ok = i != 2, .action = "fs:read",
						       .in = in[i].p, .n_in = 1 };
	o[0].out = in[1].p; /* (any field: the output goes only with ok) */
	o[0].n_out = 1;
	o[2].out = in[1].p;
	o[2].n_out = 1;
	CHECK_INT(policy_client_record(c, o, 3), 2);
	CHECK_INT(peer_recv(&p, &m), 0);
	CHECK_INT(m.type, BOX__MSG_TYPE__MSG_RECORD_BATCH);
	const Box__RecordBatch *rb = (const Box__RecordBatch *)m.msg;
	CHECK_INT(rb->n_records, 2);
	if (rb->n_records == 2) {
		CHECK_INT(rb->records[0]->decide_id, 1);
		CHECK_INT(rb->records[0]->n_output, 1);
		CHECK_INT(rb->records[1]->decide_id, 3);
		CHECK_INT(rb->records[1]->kind, BOX__EVENT_KIND__EVENT_ERROR);
		CHECK_INT(rb->records[1]->n_output, 0);
	}
	box_ipc_msg_done(&m);
	CHECK_INT(policy_client_record(c, o, POLICY_CLIENT_RECORDS_MAX + 1), -E2BIG);

	/* More replies than requests: a protocol error, and the client is broken. */
	const bool four[4] = { true, true, true, true };
	CHECK_INT(peer_batch_reply(&p, 4, four, 4), 0);
	CHECK_INT(policy_client_call(c, BOX__MSG_TYPE__MSG_DECIDE_BATCH_REQUEST, &b.base, &m),
		  -EBADMSG);
	CHECK(m.msg == NULL);
	CHECK_INT(call_decide(c, "/a", &m), -EPIPE);

	policy_client_free(c);
	peer_close(&p);
}

/* A reply to another id, of another type, oversize, or none: each an error, then -EPIPE. */
static void
test_sync_errors(void)
{
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	for (int k = 0; k < 5; k++) {
		struct peer p;
		int cfd;
		struct policy_client *c = NULL;
		CHECK_INT(peer_new(&p, &cfd), 0);
		CHECK_INT(policy_client_new_sync(cfd, decide_types, 2, &c), 0);
		if (!c)
			return;
		int want = 0;
		if (k == 0) { /* the wrong id */
			CHECK_INT(peer_decide_reply(&p, 7, true), 0);
			want = -EBADMSG;
		} else if (k == 1) { /* a batch reply to a Decide */
			const bool v[1] = { true };
			CHECK_INT(peer_batch_reply(&p, 1, v, 1), 0);
			want = -EBADMSG;
		} else if (k == 2) { /* a packet over BOX_IPC_MAX */
			size_t len = BOX_IPC_MAX + 100;
			char *big = calloc(1, len);
			CHECK(big && send(p.fd, big, len, 0) == (ssize_t)len);
			free(big);
			want = -EMSGSIZE;
		} else if (k == 3) { /* a reply this client does not accept */
			Box__PolicyProbeReply pr = BOX__POLICY_PROBE_REPLY__INIT;
			CHECK_INT(box_ipc_send(p.fd, &box_proto_policy,
					       BOX__MSG_TYPE__MSG_POLICY_PROBE_REPLY, 1, &pr.base,
					       NULL, 0),
				  0);
			want = -EPERM;
		} else { /* box-policyd is gone */
			peer_close(&p);
			want = -EPIPE;
		}
		int r = call_decide(c, "/a", &m);
		if (k == 4)
			CHECK(r == -EPIPE || r == -ECONNRESET);
		else
			CHECK_INT(r, want);
		CHECK(m.msg == NULL);
		CHECK_INT(policy_client_permits(c), 0);
		CHECK_INT(call_decide(c, "/a", &m), -EPIPE);
		CHECK_INT(record(c, true, "/a"), -EPIPE);
		policy_client_free(c);
		peer_close(&p);
	}
}

static bool
fd_closed(int fd)
{
	return fcntl(fd, F_GETFD) < 0 && errno == EBADF;
}

static void
test_bad_use(void)
{
	struct policy_client *c = NULL;
	int sv[2];
	/* No reply type, or too many: refused, the fd closed either way. */
	CHECK_INT(box_ipc_socketpair(sv, false), 0);
	close(sv[0]);
	CHECK_INT(policy_client_new_sync(sv[1], all_types, 0, &c), -EINVAL);
	CHECK(fd_closed(sv[1]));
	CHECK_INT(box_ipc_socketpair(sv, false), 0);
	close(sv[0]);
	CHECK_INT(policy_client_new_sync(sv[1], all_types, POLICY_CLIENT_REPLY_TYPES_MAX + 1, &c),
		  -EINVAL);
	CHECK(fd_closed(sv[1]));
	CHECK_INT(box_ipc_socketpair(sv, false), 0);
	close(sv[0]);
	CHECK_INT(policy_client_new_sync(sv[1], all_types, 4, &c), 0);
	if (!c)
		return;
	/* A RecordRequest has no reply: not a request to call or ask. */
	Box__RecordRequest rec = BOX__RECORD_REQUEST__INIT;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	CHECK_INT(policy_client_call(c, BOX__MSG_TYPE__MSG_RECORD_REQUEST, &rec.base, &m), -EINVAL);
	/* The event-mode calls on a blocking client. */
	CHECK_INT(policy_client_ask(c, BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &rec.base, NULL, NULL,
				    NULL),
		  -EINVAL);
	policy_client_cancel(c, NULL);
	policy_client_free(c);
	policy_client_free(NULL);
}

/* ---- event mode -------------------------------------------------------------------- */

struct seen {
	int calls;
	uint32_t last_type;
	bool permit;
	int ended;
	int error;
	char why[200];
};

static void
on_reply(void *arg, const ProtobufCMessage *reply)
{
	struct seen *s = arg;
	s->calls++;
	s->last_type = reply->descriptor == &box__decide_reply__descriptor
			       ? BOX__MSG_TYPE__MSG_DECIDE_REPLY
			       : BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY;
	if (reply->descriptor == &box__decide_reply__descriptor)
		s->permit = policy_client_permitted((const Box__DecideReply *)reply);
}

static void
on_end(void *arg, int error, const char *why)
{
	struct seen *s = arg;
	s->ended++;
	s->error = error;
	snprintf(s->why, sizeof(s->why), "%s", why);
}

/* Run the loop until *COUNTER reaches N (each turn waits for an event). */
static void
loop_until(struct event_base *base, const int *counter, int n)
{
	for (int i = 0; i < 1000 && *counter < n; i++)
		event_base_loop(base, EVLOOP_ONCE);
}

/* Let queued requests go out (the client writes on EV_WRITE). */
static void
flush(struct event_base *base)
{
	for (int i = 0; i < 4; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
}

static void
test_event_match_and_cancel(void)
{
	struct event_base *base = event_base_new();
	struct peer p;
	int cfd;
	struct policy_client *c = NULL;
	struct seen end = { 0 }, a = { 0 }, b = { 0 }, sch = { 0 };
	CHECK_INT(peer_new(&p, &cfd), 0);
	CHECK_INT(policy_client_new_event(base, cfd, all_types, 4, on_end, &end, &c), 0);
	if (!c)
		return;
	struct input in;
	Box__DecideRequest req;
	decide_init(&req, &in, "/owned-by-a");
	CHECK_INT(policy_client_ask(c, BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &req.base, on_reply, &a,
				    &a),
		  0);
	req.input[0]->value->str = "/owned-by-b";
	CHECK_INT(policy_client_ask(c, BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &req.base, on_reply, &b,
				    &b),
		  0);
	Box__PolicyToolSchema ts = BOX__POLICY_TOOL_SCHEMA__INIT;
	ts.server = "srv";
	ts.ns = "Srv";
	CHECK_INT(policy_client_ask(c, BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA, &ts.base, on_reply,
				    &sch, NULL),
		  0);
	CHECK_INT(policy_client_in_flight(c), 3);
	flush(base);
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	for (uint64_t id = 1; id <= 3; id++) {
		CHECK_INT(peer_recv(&p, &m), 0);
		CHECK_INT(m.request_id, id);
		box_ipc_msg_done(&m);
	}
	/* A went away; the replies come out of order (matched by id). */
	policy_client_cancel(c, &a);
	Box__PolicyToolSchemaReply tr = BOX__POLICY_TOOL_SCHEMA_REPLY__INIT;
	tr.ok = true;
	CHECK_INT(box_ipc_send(p.fd, &box_proto_policy, BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY,
			       3, &tr.base, NULL, 0),
		  0);
	CHECK_INT(peer_decide_reply(&p, 2, true), 0);
	CHECK_INT(peer_decide_reply(&p, 1, true), 0);
	loop_until(base, &b.calls, 1);
	flush(base);
	CHECK_INT(a.calls, 0);
	CHECK_INT(b.calls, 1);
	CHECK(b.permit);
	CHECK_INT(sch.calls, 1);
	CHECK_INT(sch.last_type, BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY);
	CHECK_INT(policy_client_in_flight(c), 0);
	/* Only b's permit is kept: a's outcome will never come. */
	CHECK_INT(policy_client_permits(c), 1);
	CHECK_INT(record(c, true, "/owned-by-a"), 0);
	CHECK_INT(record(c, true, "/owned-by-b"), 1);
	flush(base);
	CHECK_INT(peer_recv(&p, &m), 0);
	CHECK_INT(((const Box__RecordRequest *)m.msg)->decide_id, 2);
	box_ipc_msg_done(&m);
	CHECK_INT(end.ended, 0);

	/* A reply to a request no longer in flight: the channel ends, named. */
	CHECK_INT(peer_decide_reply(&p, 2, true), 0);
	loop_until(base, &end.ended, 1);
	CHECK_INT(end.ended, 1);
	CHECK_INT(end.error, -EBADMSG);
	CHECK(strstr(end.why, "DecideReply for request 2") != NULL);
	CHECK_INT(policy_client_decide(c, "fs:read", req.input, 1, on_reply, &b, &b), -EPIPE);
	CHECK_INT(record(c, true, "/owned-by-b"), -EPIPE);
	policy_client_free(c);
	peer_close(&p);
	event_base_free(base);
}

/*
 * Decides and Records sent later (box-gateway's way): nothing leaves while the loop
 * pass goes on; at its end everything asked in it leaves in the order asked, each
 * Decide its own DecideRequest with its own id, and each reply reaches its asker.
 */
static void
test_event_decides_later(void)
{
	struct event_base *base = event_base_new();
	struct peer p;
	int cfd;
	struct policy_client *c = NULL;
	struct seen end = { 0 }, a = { 0 }, b = { 0 };
	CHECK_INT(peer_new(&p, &cfd), 0);
	CHECK_INT(policy_client_new_event(base, cfd, decide_types, 2, on_end, &end, &c), 0);
	if (!c)
		return;
	policy_client_records_later(c);
	policy_client_decides_later(c);
	struct input in;
	Box__DecideRequest req;
	decide_init(&req, &in, "/a");
	CHECK_INT(policy_client_decide(c, "fs:read", req.input, 1, on_reply, &a, &a), 0);
	CHECK(peer_idle(&p));
	req.input[0]->value->str = "/b";
	CHECK_INT(policy_client_decide(c, "fs:read", req.input, 1, on_reply, &b, &b), 0);
	CHECK(peer_idle(&p));
	CHECK_INT(policy_client_in_flight(c), 2);
	flush(base);
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	const char *paths[] = { "/a", "/b" };
	for (uint64_t id = 1; id <= 2; id++) {
		CHECK_INT(peer_recv(&p, &m), 0);
		CHECK_INT(m.type, BOX__MSG_TYPE__MSG_DECIDE_REQUEST);
		CHECK_INT(m.request_id, id);
		const Box__DecideRequest *got = (const Box__DecideRequest *)m.msg;
		CHECK(got && got->n_input == 1 &&
		      strcmp(got->input[0]->value->str, paths[id - 1]) == 0);
		box_ipc_msg_done(&m);
	}
	CHECK(peer_idle(&p));
	CHECK_INT(peer_decide_reply(&p, 1, true), 0);
	CHECK_INT(peer_decide_reply(&p, 2, false), 0);
	loop_until(base, &b.calls, 1);
	CHECK_INT(a.calls, 1);
	CHECK(a.permit);
	CHECK_INT(b.calls, 1);
	CHECK(!b.permit);
	/* A Record and then a Decide asked in one pass leave in that order. */
	CHECK_INT(record(c, true, "/a"), 1);
	req.input[0]->value->str = "/c";
	CHECK_INT(policy_client_decide(c, "fs:read", req.input, 1, on_reply, &b, &b), 0);
	CHECK(peer_idle(&p));
	flush(base);
	CHECK_INT(peer_recv(&p, &m), 0);
	CHECK_INT(m.type, BOX__MSG_TYPE__MSG_RECORD_REQUEST);
	CHECK_INT(((const Box__RecordRequest *)m.msg)->decide_id, 1);
	box_ipc_msg_done(&m);
	CHECK_INT(peer_recv(&p, &m), 0);
	CHECK_INT(m.type, BOX__MSG_TYPE__MSG_DECIDE_REQUEST);
	CHECK_INT(m.request_id, 3);
	box_ipc_msg_done(&m);
	CHECK_INT(end.ended, 0);
	policy_client_free(c);
	peer_close(&p);
	event_base_free(base);
}

/* The wrong type for an id, a closed peer, an oversize packet: each ends the channel once. */
static void
test_event_errors(void)
{
	for (int k = 0; k < 3; k++) {
		struct event_base *base = event_base_new();
		struct peer p;
		int cfd;
		struct policy_client *c = NULL;
		struct seen end = { 0 }, a = { 0 };
		CHECK_INT(peer_new(&p, &cfd), 0);
		CHECK_INT(policy_client_new_event(base, cfd, all_types, 4, on_end, &end, &c), 0);
		if (!c)
			return;
		struct input in;
		Box__DecideRequest req;
		decide_init(&req, &in, "/a");
		CHECK_INT(policy_client_decide(c, req.action, req.input, 1, on_reply, &a, &a), 0);
		flush(base);
		struct box_ipc_msg m = BOX_IPC_MSG_INIT;
		CHECK_INT(peer_recv(&p, &m), 0);
		box_ipc_msg_done(&m);
		int want;
		if (k == 0) {
			const bool v[1] = { true };
			CHECK_INT(peer_batch_reply(&p, 1, v, 1), 0);
			want = -EBADMSG;
		} else if (k == 1) {
			peer_close(&p);
			want = -ECONNRESET;
		} else {
			size_t len = BOX_IPC_MAX + 1;
			char *big = calloc(1, len);
			CHECK(big && send(p.fd, big, len, 0) == (ssize_t)len);
			free(big);
			want = -EMSGSIZE;
		}
		loop_until(base, &end.ended, 1);
		CHECK_INT(end.ended, 1);
		CHECK_INT(end.error, want);
		char text[256];
		policy_client_end_text(end.error, end.why, text, sizeof(text));
		if (k == 0) {
			CHECK(strstr(end.why, "asked for another reply") != NULL);
			CHECK(strstr(text, "box-policyd sent DecideBatchReply for request 1") == text);
		} else if (k == 1) {
			CHECK_STR(text, "box-policyd closed its channel");
		} else {
			CHECK(strstr(text, "the box-policyd channel failed: ") == text);
		}
		CHECK_INT(a.calls, 0);
		CHECK_INT(policy_client_permits(c), 0);
		CHECK_INT(policy_client_decide(c, req.action, req.input, 1, on_reply, &a, &a), -EPIPE);
		flush(base);
		CHECK_INT(end.ended, 1);
		policy_client_free(c);
		peer_close(&p);
		event_base_free(base);
	}
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	RUN(test_sync_decide_and_record);
	RUN(test_sync_batch_and_record_batch);
	RUN(test_sync_errors);
	RUN(test_bad_use);
	RUN(test_event_match_and_cancel);
	RUN(test_event_decides_later);
	RUN(test_event_errors);
	return tap_done();
}
