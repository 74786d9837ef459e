/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_proto_mcp.c — box-mcpd's two protocols (proto/mcp_validate.c,
 * proto/proto_mcp.c): every validator with good and hostile values, and the
 * tables' senders, states and fd counts on real socketpairs.
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc.h"
#include "proto/proto_mcp.h"
#include "proto/text.h"
#include "tap.h"

static char *
rep(char c, size_t n)
{
	char *s = malloc(n + 1);
	if (!s)
		abort();
	memset(s, c, n);
	s[n] = 0;
	return s;
}

/* ---- McpOpen / McpClose --------------------------------------------------------- */

static void
test_open(void)
{
	Box__McpOpen m = BOX__MCP_OPEN__INIT;
	m.alias = "server-fs.v2";
	m.cwd = "/home/me/project";
	CHECK_INT(box_validate_mcp_open(&m), 0);
	static const char *const bad_alias[] = { "", ".", "..", "a/b", "a b", "é",
						 "123456789012345678901234567890123" };
	for (size_t i = 0; i < sizeof bad_alias / sizeof bad_alias[0]; i++) {
		m.alias = (char *)bad_alias[i];
		CHECK_INT(box_validate_mcp_open(&m), -EINVAL);
	}
	m.alias = "..x";
	CHECK_INT(box_validate_mcp_open(&m), 0);
	static const char *const bad_cwd[] = { "", "rel", "/a/../b", "/a/", "//a", "/a/./b" };
	for (size_t i = 0; i < sizeof bad_cwd / sizeof bad_cwd[0]; i++) {
		m.cwd = (char *)bad_cwd[i];
		CHECK_INT(box_validate_mcp_open(&m), -EINVAL);
	}
	m.cwd = "/";
	CHECK_INT(box_validate_mcp_open(&m), 0);
	/* The harness's arguments: up to 4096, each up to 256 KiB. */
	char **args = calloc(BOX_MCP_ARGS_MAX + 1, sizeof(char *));
	for (size_t i = 0; i <= BOX_MCP_ARGS_MAX; i++)
		args[i] = "x";
	m.args = args;
	m.n_args = BOX_MCP_ARGS_MAX;
	CHECK_INT(box_validate_mcp_open(&m), 0);
	m.n_args = BOX_MCP_ARGS_MAX + 1;
	CHECK_INT(box_validate_mcp_open(&m), -E2BIG);
	char *big = rep('a', BOX_MCP_ARG_MAX + 1);
	args[0] = big;
	m.n_args = 1;
	CHECK_INT(box_validate_mcp_open(&m), -EINVAL);
	big[BOX_MCP_ARG_MAX] = 0;
	CHECK_INT(box_validate_mcp_open(&m), 0);
	free(big);
	free(args);
}

static void
test_close(void)
{
	Box__McpClose m = BOX__MCP_CLOSE__INIT;
	m.status = 0;
	CHECK_INT(box_validate_mcp_close(&m), 0);
	m.status = 255;
	m.message = "box-mcpd: srv: the server flooded";
	CHECK_INT(box_validate_mcp_close(&m), 0);
	m.message = "";
	CHECK_INT(box_validate_mcp_close(&m), 0);
	m.status = 256;
	CHECK_INT(box_validate_mcp_close(&m), -ERANGE);
	m.status = -1;
	CHECK_INT(box_validate_mcp_close(&m), -ERANGE);
	m.status = 1;
	m.message = "two\nlines";
	CHECK_INT(box_validate_mcp_close(&m), -EINVAL);
	m.message = "\xff bad UTF-8";
	CHECK_INT(box_validate_mcp_close(&m), -EINVAL);
	char *big = rep('m', BOX_MCP_MESSAGE_MAX + 1);
	m.message = big;
	CHECK_INT(box_validate_mcp_close(&m), -EINVAL);
	big[BOX_MCP_MESSAGE_MAX] = 0;
	CHECK_INT(box_validate_mcp_close(&m), 0);
	free(big);
}

/* ---- McpInit -------------------------------------------------------------------- */

struct init_fx {
	Box__McpInit m;
	Box__McpServer s[2];
	Box__McpServer *sp[2];
	char *argv[2][2];
};

static void
init_fx_init(struct init_fx *f)
{
	box__mcp_init__init(&f->m);
	f->m.box_name = "dev";
	f->m.box_id = "0123456789ab";
	f->m.home = "/home/me";
	static const char *const names[2] = { "docs-v2", "fs" };
	static const char *const aliases[2] = { "docs.v2", "mcp-fs" };
	static const char *const nss[2] = { "docs_v2", "fs" };
	for (int i = 0; i < 2; i++) {
		Box__McpServer *s = &f->s[i];
		box__mcp_server__init(s);
		s->name = (char *)names[i];
		s->ns = (char *)nss[i];
		s->alias = (char *)aliases[i];
		s->program_path = "/usr/bin/node";
		f->argv[i][0] = "node";
		f->argv[i][1] = "server.js";
		s->argv = f->argv[i];
		s->n_argv = 2;
		s->cwd = "/home/me/project";
		s->max_frame = 4u << 20;
		s->call_timeout_ms = 60000;
		f->sp[i] = s;
	}
	f->m.servers = f->sp;
	f->m.n_servers = 2;
}

static int
init_with(void (*tweak)(struct init_fx *))
{
	struct init_fx f;
	init_fx_init(&f);
	tweak(&f);
	return box_validate_mcp_init(&f.m);
}

static void t_none(struct init_fx *f) { (void)f; }
static void t_box_name(struct init_fx *f) { f->m.box_name = "a b"; }
static void t_box_id(struct init_fx *f) { f->m.box_id = "0123456789AB"; }
static void t_home(struct init_fx *f) { f->m.home = "home"; }
static void t_name(struct init_fx *f) { f->s[0].name = "docs.v2"; }
static void t_ns_other(struct init_fx *f) { f->s[0].ns = "docsv2"; }
static void t_ns_box(struct init_fx *f) { f->s[1].name = "Box"; f->s[1].ns = "Box"; }
static void t_ns_digit(struct init_fx *f) { f->s[1].name = "9fs"; f->s[1].ns = "9fs"; }
static void t_ns_keyword(struct init_fx *f) { f->s[1].name = "permit"; f->s[1].ns = "permit"; }
static void t_alias_dot(struct init_fx *f) { f->s[0].alias = ".."; }
static void t_alias_slash(struct init_fx *f) { f->s[0].alias = "bin/x"; }
static void t_program(struct init_fx *f) { f->s[0].program_path = "/usr/bin/../bin/node"; }
static void t_argv_empty(struct init_fx *f) { f->s[0].n_argv = 0; }
static void t_argv0_empty(struct init_fx *f) { f->argv[0][0] = ""; }
static void t_cwd(struct init_fx *f) { f->s[0].cwd = "project"; }
static void t_frame_low(struct init_fx *f) { f->s[0].max_frame = 1023; }
static void t_frame_high(struct init_fx *f) { f->s[0].max_frame = (64ull << 20) + 1; }
static void t_frame_edges(struct init_fx *f) { f->s[0].max_frame = 1024; f->s[1].max_frame = 64ull << 20; }
static void t_timeout_zero(struct init_fx *f) { f->s[0].call_timeout_ms = 0; }
static void t_timeout_high(struct init_fx *f) { f->s[0].call_timeout_ms = BOX_MCP_TIMEOUT_MAX_MS + 1; }
static void t_timeout_edges(struct init_fx *f) { f->s[0].call_timeout_ms = 1; f->s[1].call_timeout_ms = BOX_MCP_TIMEOUT_MAX_MS; }
static void t_dup_name(struct init_fx *f) { f->s[1].name = "docs-v2"; f->s[1].ns = "docs_v2"; }
static void t_dup_ns(struct init_fx *f) { f->s[1].name = "docs_v2"; f->s[1].ns = "docs_v2"; }
static void t_dup_alias(struct init_fx *f) { f->s[1].alias = "docs.v2"; }

static void
test_init(void)
{
	CHECK_INT(init_with(t_none), 0);
	CHECK_INT(init_with(t_box_name), -EINVAL);
	CHECK_INT(init_with(t_box_id), -EINVAL);
	CHECK_INT(init_with(t_home), -EINVAL);
	CHECK_INT(init_with(t_name), -EINVAL);
	CHECK_INT(init_with(t_ns_other), -EINVAL);
	CHECK_INT(init_with(t_ns_box), -EINVAL);
	CHECK_INT(init_with(t_ns_digit), -EINVAL);
	CHECK_INT(init_with(t_ns_keyword), -EINVAL);
	CHECK_INT(init_with(t_alias_dot), -EINVAL);
	CHECK_INT(init_with(t_alias_slash), -EINVAL);
	CHECK_INT(init_with(t_program), -EINVAL);
	CHECK_INT(init_with(t_argv_empty), -EINVAL);
	CHECK_INT(init_with(t_argv0_empty), -EINVAL);
	CHECK_INT(init_with(t_cwd), -EINVAL);
	CHECK_INT(init_with(t_frame_low), -ERANGE);
	CHECK_INT(init_with(t_frame_high), -ERANGE);
	CHECK_INT(init_with(t_frame_edges), 0);
	CHECK_INT(init_with(t_timeout_zero), -ERANGE);
	CHECK_INT(init_with(t_timeout_high), -ERANGE);
	CHECK_INT(init_with(t_timeout_edges), 0);
	CHECK_INT(init_with(t_dup_name), -EINVAL);
	CHECK_INT(init_with(t_dup_ns), -EINVAL);
	CHECK_INT(init_with(t_dup_alias), -EINVAL);
	/* At most 256 servers. */
	struct init_fx f;
	init_fx_init(&f);
	Box__McpServer **many = calloc(BOX_MCP_SERVERS_MAX + 1, sizeof(*many));
	for (size_t i = 0; i <= BOX_MCP_SERVERS_MAX; i++)
		many[i] = &f.s[0];
	f.m.servers = many;
	f.m.n_servers = BOX_MCP_SERVERS_MAX + 1;
	CHECK_INT(box_validate_mcp_init(&f.m), -E2BIG);
	free(many);
}

static void
test_namespace(void)
{
	char ns[BOX_NAME_MAX + 1];
	CHECK(box_mcp_namespace("a-b", ns, sizeof ns));
	CHECK_STR(ns, "a_b");
	CHECK(!box_mcp_namespace("a.b", ns, sizeof ns));
	CHECK(!box_mcp_namespace("", ns, sizeof ns));
}

/* ---- the control channel's small messages ---------------------------------------- */

static void
test_ready_start_started_exit_stop(void)
{
	Box__McpReady r = BOX__MCP_READY__INIT;
	r.ok = true;
	CHECK_INT(box_validate_mcp_ready(&r), 0);
	r.error = "x";
	CHECK_INT(box_validate_mcp_ready(&r), -EINVAL);
	r.ok = false;
	CHECK_INT(box_validate_mcp_ready(&r), 0);
	r.error = NULL;
	CHECK_INT(box_validate_mcp_ready(&r), -EINVAL);

	Box__McpServerStart s = BOX__MCP_SERVER_START__INIT;
	s.start_id = 1;
	s.server = "docs-v2";
	CHECK_INT(box_validate_mcp_server_start(&s), 0);
	s.start_id = 0;
	CHECK_INT(box_validate_mcp_server_start(&s), -EINVAL);
	s.start_id = 2;
	s.server = "../x";
	CHECK_INT(box_validate_mcp_server_start(&s), -EINVAL);

	Box__McpServerStarted st = BOX__MCP_SERVER_STARTED__INIT;
	st.start_id = 1;
	st.ok = true;
	CHECK_INT(box_validate_mcp_server_started(&st), 0);
	st.ok = false;
	CHECK_INT(box_validate_mcp_server_started(&st), -EINVAL);
	st.error = "box: cannot start docs: no such file";
	CHECK_INT(box_validate_mcp_server_started(&st), 0);
	st.error = "line\nbreak";
	CHECK_INT(box_validate_mcp_server_started(&st), -EINVAL);
	st.start_id = 0;
	st.error = "x";
	CHECK_INT(box_validate_mcp_server_started(&st), -EINVAL);

	Box__McpServerExit x = BOX__MCP_SERVER_EXIT__INIT;
	x.start_id = 1;
	x.status = 137;
	CHECK_INT(box_validate_mcp_server_exit(&x), 0);
	x.status = 256;
	CHECK_INT(box_validate_mcp_server_exit(&x), -ERANGE);
	x.status = 0;
	x.start_id = 0;
	CHECK_INT(box_validate_mcp_server_exit(&x), -EINVAL);

	Box__McpServerStop p = BOX__MCP_SERVER_STOP__INIT;
	CHECK_INT(box_validate_mcp_server_stop(&p), -EINVAL);
	p.start_id = 9;
	CHECK_INT(box_validate_mcp_server_stop(&p), 0);
}

/* ---- the tables on socketpairs ---------------------------------------------------- */

struct pair {
	int sv[2];
	struct box_ipc_chan *c[2];
};

static void
pair_open(struct pair *p, const struct box_ipc_protocol *proto, unsigned role0_peer,
	  unsigned role1_peer)
{
	if (box_ipc_socketpair(p->sv, true) < 0)
		abort();
	p->c[0] = box_ipc_chan_new(p->sv[0], proto, role0_peer);
	p->c[1] = box_ipc_chan_new(p->sv[1], proto, role1_peer);
	if (!p->c[0] || !p->c[1])
		abort();
}

static void
pair_close(struct pair *p)
{
	for (int i = 0; i < 2; i++) {
		box_ipc_chan_free(p->c[i]);
		close(p->sv[i]);
	}
}

static int
recv_on(struct pair *p, int i, struct box_ipc_msg *m)
{
	return box_ipc_recv_wait(p->c[i], m, 2000);
}

static void
test_session_table(void)
{
	int fds[3];
	for (int i = 0; i < 3; i++)
		fds[i] = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	struct pair p;
	Box__McpOpen o = BOX__MCP_OPEN__INIT;
	o.alias = "fs";
	o.cwd = "/work";
	Box__McpClose cl = BOX__MCP_CLOSE__INIT;
	cl.status = 126;
	cl.message = "box-mcpd: fs: denied";

	/* [0] the alias's end (peer box-mcpd), [1] box-mcpd's (peer alias). */
	pair_open(&p, &box_proto_mcpsession, BOX_MCPSESSION_ROLE_MCPD, BOX_MCPSESSION_ROLE_ALIAS);
	CHECK_INT(box_ipc_chan_send(p.c[0], BOX__MSG_TYPE__MSG_MCP_OPEN, 0, &o.base, fds, 3), 0);
	CHECK_INT(recv_on(&p, 1, &m), 1);
	CHECK_INT(m.n_fds, 3);
	box_ipc_msg_done(&m);
	CHECK_INT(box_ipc_chan_state(p.c[1]), BOX_MCPSESSION_RUNNING);
	/* A second McpOpen is refused. */
	CHECK_INT(box_ipc_chan_may_send(p.c[0], BOX__MSG_TYPE__MSG_MCP_OPEN), -EPERM);
	CHECK_INT(box_ipc_send(p.sv[0], &box_proto_mcpsession, BOX__MSG_TYPE__MSG_MCP_OPEN, 0,
			       &o.base, fds, 3),
		  0);
	CHECK_INT(recv_on(&p, 1, &m), -EPERM);
	pair_close(&p);

	/* McpClose ends it; nothing after. */
	pair_open(&p, &box_proto_mcpsession, BOX_MCPSESSION_ROLE_MCPD, BOX_MCPSESSION_ROLE_ALIAS);
	CHECK_INT(box_ipc_chan_send(p.c[1], BOX__MSG_TYPE__MSG_MCP_CLOSE, 0, &cl.base, NULL, 0), 0);
	CHECK_INT(recv_on(&p, 0, &m), 1);
	CHECK_INT(((Box__McpClose *)m.msg)->status, 126);
	box_ipc_msg_done(&m);
	CHECK_INT(box_ipc_chan_state(p.c[0]), BOX_MCPSESSION_ENDED);
	CHECK_INT(box_ipc_chan_may_send(p.c[1], BOX__MSG_TYPE__MSG_MCP_CLOSE), -EPERM);
	pair_close(&p);

	/* McpOpen with 2 fds; McpClose from the alias: refused. */
	pair_open(&p, &box_proto_mcpsession, BOX_MCPSESSION_ROLE_MCPD, BOX_MCPSESSION_ROLE_ALIAS);
	CHECK(box_ipc_chan_send(p.c[0], BOX__MSG_TYPE__MSG_MCP_OPEN, 0, &o.base, fds, 2) < 0);
	CHECK_INT(box_ipc_send(p.sv[0], &box_proto_mcpsession, BOX__MSG_TYPE__MSG_MCP_CLOSE, 0,
			       &cl.base, NULL, 0),
		  0);
	CHECK_INT(recv_on(&p, 1, &m), -EPERM);
	pair_close(&p);
	pair_open(&p, &box_proto_mcpsession, BOX_MCPSESSION_ROLE_MCPD, BOX_MCPSESSION_ROLE_ALIAS);
	CHECK_INT(box_ipc_send(p.sv[0], &box_proto_mcpsession, BOX__MSG_TYPE__MSG_MCP_OPEN, 0,
			       &o.base, fds, 2),
		  -EBADMSG);
	pair_close(&p);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
}

static void
test_control_table(void)
{
	int fds[3];
	for (int i = 0; i < 3; i++)
		fds[i] = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	struct pair p;
	struct init_fx f;
	init_fx_init(&f);
	Box__McpServerStart s = BOX__MCP_SERVER_START__INIT;
	s.start_id = 1;
	s.server = "fs";

	/* [0] boxd's end (peer box-mcpd), [1] box-mcpd's (peer boxd). */
	pair_open(&p, &box_proto_mcpctl, BOX_MCPCTL_ROLE_MCPD, BOX_MCPCTL_ROLE_BOXD);
	/* Nothing before McpInit; McpInit needs exactly its 1 fd. */
	CHECK_INT(box_ipc_chan_may_send(p.c[1], BOX__MSG_TYPE__MSG_MCP_SERVER_START), -EPERM);
	CHECK(box_ipc_chan_send(p.c[0], BOX__MSG_TYPE__MSG_MCP_INIT, 1, &f.m.base, NULL, 0) < 0);
	CHECK_INT(box_ipc_chan_send(p.c[0], BOX__MSG_TYPE__MSG_MCP_INIT, 1, &f.m.base, fds, 1), 0);
	CHECK_INT(recv_on(&p, 1, &m), 1);
	CHECK_INT(m.n_fds, 1);
	CHECK_INT(((Box__McpInit *)m.msg)->n_servers, 2);
	box_ipc_msg_done(&m);
	CHECK_INT(box_ipc_chan_state(p.c[1]), BOX_MCPCTL_STARTING);
	CHECK_INT(box_ipc_chan_may_send(p.c[0], BOX__MSG_TYPE__MSG_MCP_INIT), -EPERM);
	/* A refusal does not move the channel to serving. */
	Box__McpReady rd = BOX__MCP_READY__INIT;
	rd.ok = false;
	rd.error = "the pins file is not a regular file";
	CHECK_INT(box_ipc_chan_send(p.c[1], BOX__MSG_TYPE__MSG_MCP_READY, 1, &rd.base, NULL, 0), 0);
	CHECK_INT(recv_on(&p, 0, &m), 1);
	box_ipc_msg_done(&m);
	CHECK_INT(box_ipc_chan_state(p.c[0]), BOX_MCPCTL_STARTING);
	CHECK_INT(box_ipc_chan_may_send(p.c[1], BOX__MSG_TYPE__MSG_MCP_SERVER_START), -EPERM);
	pair_close(&p);

	pair_open(&p, &box_proto_mcpctl, BOX_MCPCTL_ROLE_MCPD, BOX_MCPCTL_ROLE_BOXD);
	CHECK_INT(box_ipc_chan_send(p.c[0], BOX__MSG_TYPE__MSG_MCP_INIT, 1, &f.m.base, fds, 1), 0);
	CHECK_INT(recv_on(&p, 1, &m), 1);
	box_ipc_msg_done(&m);
	rd.ok = true;
	rd.error = NULL;
	CHECK_INT(box_ipc_chan_send(p.c[1], BOX__MSG_TYPE__MSG_MCP_READY, 1, &rd.base, NULL, 0), 0);
	CHECK_INT(recv_on(&p, 0, &m), 1);
	box_ipc_msg_done(&m);
	CHECK_INT(box_ipc_chan_state(p.c[0]), BOX_MCPCTL_SERVING);
	/* Serving: a start with its 3 fds; with 2 it is refused. */
	CHECK_INT(box_ipc_chan_send(p.c[1], BOX__MSG_TYPE__MSG_MCP_SERVER_START, 0, &s.base, fds, 3),
		  0);
	CHECK_INT(recv_on(&p, 0, &m), 1);
	CHECK_INT(m.n_fds, 3);
	box_ipc_msg_done(&m);
	CHECK_INT(box_ipc_send(p.sv[1], &box_proto_mcpctl, BOX__MSG_TYPE__MSG_MCP_SERVER_START, 0,
			       &s.base, fds, 2),
		  -EBADMSG);
	/* boxd answers; it may not ask for a start. */
	Box__McpServerStarted st = BOX__MCP_SERVER_STARTED__INIT;
	st.start_id = 1;
	st.ok = true;
	CHECK_INT(box_ipc_chan_send(p.c[0], BOX__MSG_TYPE__MSG_MCP_SERVER_STARTED, 0, &st.base, NULL,
				    0),
		  0);
	CHECK_INT(recv_on(&p, 1, &m), 1);
	box_ipc_msg_done(&m);
	CHECK_INT(box_ipc_send(p.sv[0], &box_proto_mcpctl, BOX__MSG_TYPE__MSG_MCP_SERVER_START, 0,
			       &s.base, fds, 3),
		  0);
	CHECK_INT(recv_on(&p, 1, &m), -EPERM);
	pair_close(&p);

	/* box-mcpd may not send McpServerExit. */
	pair_open(&p, &box_proto_mcpctl, BOX_MCPCTL_ROLE_MCPD, BOX_MCPCTL_ROLE_BOXD);
	box_ipc_chan_set_state(p.c[0], BOX_MCPCTL_SERVING);
	Box__McpServerExit x = BOX__MCP_SERVER_EXIT__INIT;
	x.start_id = 1;
	CHECK_INT(box_ipc_send(p.sv[1], &box_proto_mcpctl, BOX__MSG_TYPE__MSG_MCP_SERVER_EXIT, 0,
			       &x.base, NULL, 0),
		  0);
	CHECK_INT(recv_on(&p, 0, &m), -EPERM);
	pair_close(&p);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
}

int
main(void)
{
	RUN(test_open);
	RUN(test_close);
	RUN(test_init);
	RUN(test_namespace);
	RUN(test_ready_start_started_exit_stop);
	RUN(test_session_table);
	RUN(test_control_table);
	return tap_done();
}
