/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_attach.c — box-policyd's attached box-shell channels
 * (PolicyChannelAttach, proto/policy.proto): box-shell hands policyd one end
 * of a new socketpair over its channel (fd 6) or over one it attached
 * before; each is one more box-shell channel (ready, source "box-shell").
 * Checked: decisions on attached and nested channels, logged as box-shell;
 * an attach from the gateway is fatal, and so is one from boxd asking for a
 * person's channel; boxd's attach is a supervised program's channel (fs:*,
 * source "supervisor"; another action drops that channel only); an attached channel closing is
 * normal, the fd-6 channel closing leaves the attached ones working; garbage
 * on an attached channel drops that channel only, and so does an action
 * box-shell does not raise or a Record of no permit of its own; a
 * non-SEQPACKET fd is refused; at most BOX_POLICY_ATTACHED_MAX at a time;
 * a person's channel (PolicyChannelAttach.person, `boxctl shell`): asked for
 * on fd 6, inherited by the channels attached from it, logged with
 * "session":"person" while the others are not; an agent's channel asking for
 * one is dropped.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "fdutil.h"
#include "harness.h"
#include "tap.h"

static const char *policy =
	"permit (principal, action == Box::Action::\"shell:exec\", resource)\n"
	"when { context.input.program == \"echo\" };\n";

static char *dir;

static int
start(struct pd *pd)
{
	static char err[600];
	dir = pd_tmpdir("attach");
	(void)snprintf(err, sizeof(err), "%s/policyd.err", dir);
	struct pd_opts o = { .binary = pd_binary(), .state_dir = dir, .policy = policy,
			     .stderr_path = err, .box_name = "att", .box_id = "00000000000a" };
	return pd_start(&o, pd, NULL);
}

static void
finish(struct pd *pd)
{
	pd_kill(pd);
	if (getenv("ATT_KEEP"))
		printf("# kept %s\n", dir);
	else
		pd_rmtree(dir);
	free(dir);
	dir = NULL;
}

/* PolicyChannelAttach with FD on socket S (PERSON: a person's channel). */
static int
attach_as(int s, int fd, bool person)
{
	Box__PolicyChannelAttach a = BOX__POLICY_CHANNEL_ATTACH__INIT;
	a.has_person = person;
	a.person = person;
	return box_ipc_send(s, &box_proto_policy, BOX__MSG_TYPE__MSG_POLICY_CHANNEL_ATTACH, 0,
			    &a.base, &fd, 1);
}

static int
attach_on(int s, int fd)
{
	return attach_as(s, fd, false);
}

/* A new attached channel over S: our end, or -1. */
static int
new_channel_as(int s, bool person)
{
	return pd_attach_new(s, person);
}

static int
new_channel(int s)
{
	return new_channel_as(s, false);
}

/* shell:exec of PROGRAM on channel FD: 1 permit, 0 deny, negative errno. */
static int
decide_on(int fd, const char *program)
{
	Box__PolicyField f[4];
	Box__PolicyValue v[4];
	Box__PolicyField *p[4];
	const char *names[4] = { "command", "program", "arg_count", "cwd" };
	for (int i = 0; i < 4; i++) {
		box__policy_field__init(&f[i]);
		box__policy_value__init(&v[i]);
		f[i].name = (char *)names[i];
		f[i].value = &v[i];
		p[i] = &f[i];
		v[i].kind_case = BOX__POLICY_VALUE__KIND_STR;
		v[i].str = (char *)(i == 3 ? "/" : program);
	}
	v[2].kind_case = BOX__POLICY_VALUE__KIND_INTEGER;
	v[2].integer = 0;
	Box__DecideRequest req = BOX__DECIDE_REQUEST__INIT;
	req.action = (char *)"shell:exec";
	req.input = p;
	req.n_input = 4;
	/* The Decide ids of a channel increase (one counter serves every channel here). */
	static uint64_t next_id = 1;
	uint64_t id = next_id++;
	int r = box_ipc_send(fd, &box_proto_policy, BOX__MSG_TYPE__MSG_DECIDE_REQUEST, id, &req.base,
			     NULL, 0);
	if (r < 0)
		return r;
	struct box_ipc_chan *c = box_ipc_chan_new(fd, &box_proto_policy, BOX_POLICY_ROLE_POLICYD);
	box_ipc_chan_set_state(c, BOX_POLICY_READY);
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	r = box_ipc_recv_wait(c, &m, 5000);
	if (r >= 0) {
		r = m.type == BOX__MSG_TYPE__MSG_DECIDE_REPLY && m.request_id == id
			    ? ((Box__DecideReply *)m.msg)->verdict ==
				      BOX__DECISION_VERDICT__VERDICT_PERMIT
			    : -EBADMSG;
	}
	box_ipc_msg_done(&m);
	box_ipc_chan_free(c);
	return r;
}

/* The other end of FD closed within MS. */
static bool
closed_within(int fd, int ms)
{
	struct pollfd pf = { fd, POLLIN, 0 };
	if (poll(&pf, 1, ms) != 1)
		return false;
	char b[8];
	return recv(fd, b, sizeof(b), MSG_DONTWAIT) == 0;
}

static void
test_attached_decides_as_box_shell(void)
{
	struct pd pd;
	CHECK_INT(start(&pd), 0);
	int a = new_channel(pd.fd[PD_SHELL]);
	CHECK(a >= 0);
	CHECK_INT(decide_on(a, "echo"), 1);
	CHECK_INT(decide_on(a, "rm"), 0);
	/* One attached from the attached one. */
	int b = new_channel(a);
	CHECK(b >= 0);
	CHECK_INT(decide_on(b, "echo"), 1);
	/* Both keep working, and the original channel too. */
	CHECK_INT(decide_on(a, "echo"), 1);
	CHECK_INT(pd_send_line(&pd, PD_SHELL,
			       "{\"action\":\"shell:exec\",\"input\":{\"command\":\"echo\","
			       "\"program\":\"echo\",\"arg_count\":0,\"cwd\":\"/\"}}",
			       NULL),
		  0);
	close(a);
	close(b);
	CHECK_INT(pd_stop(&pd), 0);
	char path[600];
	(void)snprintf(path, sizeof(path), "%s/decisions.jsonl", dir);
	char *log = NULL;
	unsigned long len = 0;
	CHECK_INT(fd_read_file(AT_FDCWD, path, 1 << 20, &log, &len), 0);
	int n = 0;
	for (char *s = log; s && (s = strstr(s, "\"source\":\"box-shell\"")); s++)
		n++;
	CHECK_INT(n, 5);
	CHECK(log && strstr(log, "\"verdict\":\"deny\"") != NULL);
	free(log);
	finish(&pd);
}

/* The log's lines holding NEEDLE (and, when AND is set, AND too). */
static int
count_lines(const char *log, const char *needle, const char *and)
{
	int n = 0;
	for (const char *l = log; l && *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		char *line = strndup(l, len);
		if (line && strstr(line, needle) && (!and || strstr(line, and)))
			n++;
		free(line);
		l = e ? e + 1 : NULL;
	}
	return n;
}

/*
 * `boxctl shell`: a person's channel, asked for on fd 6, and one attached
 * from it, are logged as the person's; an agent's channel beside them is
 * not; an agent's channel asking for a person's one is dropped.
 */
static void
test_person_channels(void)
{
	struct pd pd;
	CHECK_INT(start(&pd), 0);
	int agent = new_channel(pd.fd[PD_SHELL]);
	int person = new_channel_as(pd.fd[PD_SHELL], true);
	CHECK(agent >= 0 && person >= 0);
	int child = new_channel(person); /* a person's process's subprocess: the person's too */
	CHECK(child >= 0);
	CHECK_INT(decide_on(agent, "echo"), 1);
	CHECK_INT(decide_on(person, "echo"), 1);
	CHECK_INT(decide_on(child, "rm"), 0);
	/* An agent's channel asking for a person's one: dropped, the new fd refused. */
	int sv[2];
	CHECK_INT(box_ipc_socketpair(sv, false), 0);
	CHECK_INT(attach_as(agent, sv[1], true), 0);
	close(sv[1]);
	CHECK(closed_within(agent, 5000));
	CHECK(closed_within(sv[0], 5000));
	close(sv[0]);
	CHECK_INT(pd_exited_within(&pd, 100), -1);
	CHECK_INT(decide_on(person, "echo"), 1);
	close(agent);
	close(person);
	close(child);
	CHECK_INT(pd_stop(&pd), 0);
	char path[600];
	(void)snprintf(path, sizeof(path), "%s/decisions.jsonl", dir);
	char *log = NULL;
	unsigned long len = 0;
	CHECK_INT(fd_read_file(AT_FDCWD, path, 1 << 20, &log, &len), 0);
	CHECK_INT(count_lines(log, "\"source\":\"box-shell\"", NULL), 4);
	CHECK_INT(count_lines(log, "\"session\":\"person\"", NULL), 3);
	CHECK_INT(count_lines(log, "\"session\":\"person\"", "\"verdict\":\"deny\""), 1);
	free(log);
	(void)snprintf(path, sizeof(path), "%s/policyd.err", dir);
	char *err = NULL;
	CHECK_INT(fd_read_file(AT_FDCWD, path, 1 << 20, &err, &len), 0);
	CHECK(err && strstr(err, "asked for a person's channel from an agent's channel") != NULL);
	free(err);
	finish(&pd);
}

static void
test_attach_from_other_peer_is_fatal(void)
{
	struct pd pd;
	CHECK_INT(start(&pd), 0);
	int sv[2];
	CHECK_INT(box_ipc_socketpair(sv, false), 0);
	CHECK_INT(attach_on(pd.fd[PD_GATEWAY], sv[1]), 0);
	CHECK_INT(pd_exited_within(&pd, 5000), 1);
	close(sv[0]);
	close(sv[1]);
	finish(&pd);
	/* boxd may attach a supervised program's channel, never a person's. */
	CHECK_INT(start(&pd), 0);
	CHECK_INT(box_ipc_socketpair(sv, false), 0);
	CHECK_INT(attach_as(pd.fd[PD_BOXD], sv[1], true), 0);
	CHECK_INT(pd_exited_within(&pd, 5000), 1);
	close(sv[0]);
	close(sv[1]);
	finish(&pd);
}

/* fs:read (read_content) of PATH on channel FD: 1 permit, 0 deny, negative errno. */
static int
decide_fs_on(int fd, const char *path)
{
	Box__PolicyField f[2];
	Box__PolicyValue v[2];
	Box__PolicyField *p[2];
	const char *names[2] = { "path", "operation" };
	const char *vals[2] = { path, "read_content" };
	for (int i = 0; i < 2; i++) {
		box__policy_field__init(&f[i]);
		box__policy_value__init(&v[i]);
		f[i].name = (char *)names[i];
		f[i].value = &v[i];
		p[i] = &f[i];
		v[i].kind_case = BOX__POLICY_VALUE__KIND_STR;
		v[i].str = (char *)vals[i];
	}
	Box__DecideRequest req = BOX__DECIDE_REQUEST__INIT;
	req.action = (char *)"fs:read";
	req.input = p;
	req.n_input = 2;
	/* ids increase per channel (one counter for every channel here) */
	static uint64_t next_id = 1u << 20;
	uint64_t id = next_id++;
	int r = box_ipc_send(fd, &box_proto_policy, BOX__MSG_TYPE__MSG_DECIDE_REQUEST, id, &req.base,
			     NULL, 0);
	if (r < 0)
		return r;
	struct box_ipc_chan *c = box_ipc_chan_new(fd, &box_proto_policy, BOX_POLICY_ROLE_POLICYD);
	box_ipc_chan_set_state(c, BOX_POLICY_READY);
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	r = box_ipc_recv_wait(c, &m, 5000);
	if (r >= 0)
		r = m.type == BOX__MSG_TYPE__MSG_DECIDE_REPLY && m.request_id == id
			    ? ((Box__DecideReply *)m.msg)->verdict ==
				      BOX__DECISION_VERDICT__VERDICT_PERMIT
			    : -EBADMSG;
	box_ipc_msg_done(&m);
	box_ipc_chan_free(c);
	return r;
}

/*
 * A supervised program's channel (boxd attaches it, box-trampoline's PID 1
 * asks on it): fs:* decided and logged with source "supervisor"; an action
 * a supervisor does not raise drops that channel only.
 */
static void
test_supervisor_channel(void)
{
	struct pd pd;
	static const char *fs_policy =
		"permit (principal, action == Box::Action::\"fs:read\", resource)\n"
		"unless { context.input.path like \"*.env\" };\n";
	static char err[600];
	dir = pd_tmpdir("attach");
	(void)snprintf(err, sizeof(err), "%s/policyd.err", dir);
	struct pd_opts o = { .binary = pd_binary(), .state_dir = dir, .policy = fs_policy,
			     .stderr_path = err, .box_name = "att", .box_id = "00000000000b" };
	CHECK_INT(pd_start(&o, &pd, NULL), 0);
	int a = new_channel(pd.fd[PD_BOXD]);
	CHECK(a >= 0);
	CHECK_INT(decide_fs_on(a, "/p/a.txt"), 1);
	CHECK_INT(decide_fs_on(a, "/p/.env"), 0);
	/* shell:exec is box-shell's (and its id is lower): this channel is dropped, the rest goes on */
	CHECK(decide_on(a, "echo") < 0 || closed_within(a, 5000));
	CHECK_INT(pd_exited_within(&pd, 100), -1);
	int b = new_channel(pd.fd[PD_BOXD]);
	CHECK_INT(decide_fs_on(b, "/p/b.txt"), 1);
	close(a);
	close(b);
	CHECK_INT(pd_stop(&pd), 0);
	char path[600];
	(void)snprintf(path, sizeof(path), "%s/decisions.jsonl", dir);
	char *log = NULL;
	unsigned long len = 0;
	CHECK_INT(fd_read_file(AT_FDCWD, path, 1 << 20, &log, &len), 0);
	CHECK_INT(count_lines(log, "\"source\":\"supervisor\"", NULL), 3);
	CHECK_INT(count_lines(log, "\"source\":\"supervisor\"", "\"verdict\":\"deny\""), 1);
	free(log);
	finish(&pd);
}

static void
test_closing_and_garbage(void)
{
	struct pd pd;
	CHECK_INT(start(&pd), 0);
	int a = new_channel(pd.fd[PD_SHELL]);
	int b = new_channel(pd.fd[PD_SHELL]);
	int c = new_channel(pd.fd[PD_SHELL]);
	CHECK(a >= 0 && b >= 0 && c >= 0);
	CHECK_INT(decide_on(a, "echo"), 1);
	/* An attached channel closing: normal. */
	close(a);
	CHECK_INT(decide_on(b, "echo"), 1);
	/* Garbage on an attached channel: that one is dropped, policyd serves on. */
	CHECK((ssize_t)send(b, "garbage", 7, 0) == 7);
	CHECK(closed_within(b, 5000));
	close(b);
	CHECK_INT(pd_exited_within(&pd, 100), -1);
	CHECK_INT(decide_on(c, "echo"), 1);
	/* A pipe is no channel: refused (closed), nothing else changes. */
	int p[2];
	CHECK_INT(pipe2(p, O_CLOEXEC), 0);
	CHECK_INT(attach_on(pd.fd[PD_SHELL], p[1]), 0);
	close(p[1]);
	char x;
	struct pollfd pf = { p[0], POLLIN, 0 };
	CHECK(poll(&pf, 1, 5000) == 1 && read(p[0], &x, 1) == 0);
	close(p[0]);
	CHECK_INT(decide_on(c, "echo"), 1);
	/* The shell channel (fd 6) closing: as before; the attached ones work on. */
	box_ipc_chan_freep(&pd.chan[PD_SHELL]);
	pd.fd[PD_SHELL] = safe_close(pd.fd[PD_SHELL]);
	CHECK_INT(pd_exited_within(&pd, 100), -1);
	CHECK_INT(decide_on(c, "echo"), 1);
	close(c);
	CHECK_INT(pd_stop(&pd), 0);
	finish(&pd);
}

/*
 * An attached channel that asks about an action box-shell does not raise,
 * or records an outcome of no permit of its own, is dropped (the agent's
 * script could reach such a channel: it costs that process its decisions,
 * not the box its policy); the others serve on.
 */
static void
test_attached_refusals(void)
{
	struct pd pd;
	CHECK_INT(start(&pd), 0);
	int a = new_channel(pd.fd[PD_SHELL]);
	int b = new_channel(pd.fd[PD_SHELL]);
	int c = new_channel(pd.fd[PD_SHELL]);
	CHECK(a >= 0 && b >= 0 && c >= 0);
	/* net:connect is box-gateway's */
	Box__DecideRequest req = BOX__DECIDE_REQUEST__INIT;
	req.action = (char *)"net:connect";
	CHECK_INT(pd_fields_from_json("{\"host\":\"h.test\",\"port\":443}", &req.input,
				      &req.n_input),
		  0);
	CHECK_INT(box_ipc_send(a, &box_proto_policy, BOX__MSG_TYPE__MSG_DECIDE_REQUEST, 1000,
			       &req.base, NULL, 0),
		  0);
	pd_fields_free(req.input, req.n_input);
	CHECK(closed_within(a, 5000));
	/* a Record naming a Decide this channel never had */
	CHECK_INT(decide_on(b, "echo"), 1);
	Box__RecordRequest rec = BOX__RECORD_REQUEST__INIT;
	rec.kind = BOX__EVENT_KIND__EVENT_ERROR;
	rec.action = (char *)"shell:exec";
	rec.decide_id = 999999;
	CHECK_INT(box_ipc_send(b, &box_proto_policy, BOX__MSG_TYPE__MSG_RECORD_REQUEST, 0, &rec.base,
			       NULL, 0),
		  0);
	CHECK(closed_within(b, 5000));
	CHECK_INT(pd_exited_within(&pd, 100), -1);
	CHECK_INT(decide_on(c, "echo"), 1);
	close(a);
	close(b);
	close(c);
	CHECK_INT(pd_stop(&pd), 0);
	char path[600];
	(void)snprintf(path, sizeof(path), "%s/policyd.err", dir);
	char *err = NULL;
	unsigned long len = 0;
	CHECK_INT(fd_read_file(AT_FDCWD, path, 1 << 20, &err, &len), 0);
	CHECK(err && strstr(err, "An attached box-shell channel sent a DecideRequest for "
				 "net:connect, which box-shell does not raise") != NULL);
	CHECK(err && strstr(err, "An attached box-shell channel recorded an outcome of Decide "
				 "999999") != NULL);
	free(err);
	(void)snprintf(path, sizeof(path), "%s/decisions.jsonl", dir);
	char *log = NULL;
	CHECK_INT(fd_read_file(AT_FDCWD, path, 1 << 20, &log, &len), 0);
	CHECK(log && !strstr(log, "net:connect") && !strstr(log, "\"record\""));
	free(log);
	finish(&pd);
}

static void
test_cap(void)
{
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	rlim_t want = BOX_POLICY_ATTACHED_MAX + 256;
	if (rl.rlim_max < want) {
		SKIP("RLIMIT_NOFILE hard limit below 4352 (4096 attached channels need the fds)");
		return;
	}
	rl.rlim_cur = want;
	setrlimit(RLIMIT_NOFILE, &rl);
	struct pd pd;
	CHECK_INT(start(&pd), 0);
	static int ch[BOX_POLICY_ATTACHED_MAX];
	int made = 0;
	for (unsigned i = 0; i < BOX_POLICY_ATTACHED_MAX; i++) {
		ch[i] = new_channel(pd.fd[PD_SHELL]);
		if (ch[i] >= 0)
			made++;
	}
	CHECK_INT(made, BOX_POLICY_ATTACHED_MAX);
	CHECK_INT(decide_on(ch[BOX_POLICY_ATTACHED_MAX - 1], "echo"), 1);
	/* One more: refused, its end closed by policyd. */
	int extra = new_channel(pd.fd[PD_SHELL]);
	CHECK(extra >= 0);
	CHECK(closed_within(extra, 5000));
	close(extra);
	/* One closes: room for one again. */
	close(ch[0]);
	CHECK_INT(decide_on(ch[1], "echo"), 1); /* policyd has seen the close by now */
	struct timespec ts = { 0, 100000000 };
	nanosleep(&ts, NULL);
	extra = new_channel(pd.fd[PD_SHELL]);
	CHECK_INT(decide_on(extra, "echo"), 1);
	close(extra);
	for (unsigned i = 1; i < BOX_POLICY_ATTACHED_MAX; i++)
		close(ch[i]);
	CHECK_INT(pd_stop(&pd), 0);
	finish(&pd);
	rl.rlim_cur = 1024;
	setrlimit(RLIMIT_NOFILE, &rl);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	RUN(test_attached_decides_as_box_shell);
	RUN(test_attached_refusals);
	RUN(test_person_channels);
	RUN(test_attach_from_other_peer_is_fatal);
	RUN(test_supervisor_channel);
	RUN(test_closing_and_garbage);
	RUN(test_cap);
	return tap_done();
}
