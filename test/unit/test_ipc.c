/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_ipc.c — box IPC framing, fd passing, reassembly and validators.
 *
 * Every message of proto/boxd.proto makes a round trip over a real
 * SOCK_SEQPACKET socketpair; then hand-built packets try each way a peer can
 * misbehave (oversize, truncated, unknown fields, bad enums, unexpected fds,
 * fragments out of order / over cap / never finished) and must be refused
 * with the documented errno and without leaking a descriptor.
 * Trusts: nothing; it is test code.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "boxd.pb-c.h"
#include "cleanup.h"
#include "envelope.pb-c.h"
#include "ipc.h"
#include "ipc_event.h"
#include "policy.pb-c.h"
#include "proto/proto_client.h"
#include "proto/proto_policy.h"
#include "proto/validate.h"
#include "proto/walk.h"
#include "tap.h"

/* ---- helpers ----------------------------------------------------------- */

/*
 * The framing tests feed any type of the client and policy protocols into
 * one channel: a protocol with every row of both tables (caps, validators,
 * fds as they are) but any sender and any state. The tables' own roles and
 * states are test_protocol_tables' subject.
 */
static struct box_ipc_type all_rows[64];
static const char *const all_roles[] = { "any" };
static const char *const all_states[] = { "any" };
static struct box_ipc_protocol all_proto = {
	.name = "all",
	.types = all_rows,
	.role_names = all_roles,
	.n_roles = 1,
	.state_names = all_states,
	.n_states = 1,
	.decode = box_proto_decode,
};
#define ALL (&all_proto)

static void
all_proto_init(void)
{
	const struct box_ipc_protocol *src[] = { &box_proto_client, &box_proto_policy };
	unsigned n = 0;
	for (size_t k = 0; k < ELEMENTSOF(src); k++)
		for (unsigned i = 0; i < src[k]->n_types && n < ELEMENTSOF(all_rows); i++) {
			all_rows[n] = src[k]->types[i];
			all_rows[n].senders = BOX_IPC_BIT(0);
			all_rows[n].states = BOX_IPC_ANY_STATE;
			all_rows[n].next = BOX_IPC_STATE_SAME;
			n++;
		}
	all_proto.n_types = n;
}

static int
send_all(int fd, uint32_t type, uint64_t request_id, const ProtobufCMessage *msg, const int *fds,
	 unsigned n_fds)
{
	return box_ipc_send(fd, ALL, type, request_id, msg, fds, n_fds);
}

static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static int
raw_send(int fd, const void *buf, size_t len, const int *fds, unsigned n_fds)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	char cbuf[CMSG_SPACE(sizeof(int) * 16)];
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (n_fds) {
		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
	}
	return sendmsg(fd, &mh, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -errno;
}

/* Pack any message into a malloc'd buffer. */
static uint8_t *
pack(const ProtobufCMessage *m, size_t *len)
{
	*len = protobuf_c_message_get_packed_size(m);
	uint8_t *b = malloc(*len ? *len : 1);
	protobuf_c_message_pack(m, b);
	return b;
}

/* An envelope with a whole payload. */
static uint8_t *
env_payload(uint32_t version, uint32_t type, uint64_t rid, const uint8_t *p, size_t plen,
	    size_t *len)
{
	Box__Envelope env;
	box__envelope__init(&env);
	env.version = version;
	env.type = (Box__MsgType)type;
	env.request_id = rid;
	env.body_case = BOX__ENVELOPE__BODY_PAYLOAD;
	env.payload.data = (uint8_t *)p;
	env.payload.len = plen;
	return pack(&env.base, len);
}

static uint8_t *
env_msg(uint32_t type, uint64_t rid, const ProtobufCMessage *m, size_t *len)
{
	size_t plen;
	_cleanup_free_ uint8_t *p = pack(m, &plen);
	return env_payload(BOX_IPC_VERSION, type, rid, p, plen, len);
}

/* An envelope with one fragment. total < 0: no total_len. */
static uint8_t *
env_frag(uint32_t type, uint64_t rid, uint64_t sid, uint32_t seq, bool last, int64_t total,
	 const uint8_t *d, size_t dlen, size_t *len)
{
	Box__Envelope env;
	Box__Fragment f;
	box__envelope__init(&env);
	box__fragment__init(&f);
	env.version = BOX_IPC_VERSION;
	env.type = (Box__MsgType)type;
	env.request_id = rid;
	env.body_case = BOX__ENVELOPE__BODY_FRAGMENT;
	env.fragment = &f;
	f.stream_id = sid;
	f.seq = seq;
	f.last = last;
	if (total >= 0) {
		f.has_total_len = 1;
		f.total_len = (uint64_t)total;
	}
	f.data.data = (uint8_t *)d;
	f.data.len = dlen;
	return pack(&env.base, len);
}

static bool
same_packed(const ProtobufCMessage *a, const ProtobufCMessage *b)
{
	size_t la, lb;
	_cleanup_free_ uint8_t *pa = pack(a, &la);
	_cleanup_free_ uint8_t *pb = pack(b, &lb);
	return la == lb && memcmp(pa, pb, la) == 0;
}

/* ---- a BoxSpec with every section and key -------------------------------- */

static struct {
	Box__BoxSpec spec;
	Box__CfgBox box;
	Box__CfgAgent agent;
	Box__CfgTool tool, *tools[1];
	Box__CfgEgress egress, *egresses[1];
	Box__CfgMcp mcp[2], *mcps[2];
	Box__CfgGateway gw;
	Box__Caller caller;
	Box__CfgEnvVar inherit, *inherits[1];
	Box__CfgStr str[24];
	Box__CfgPath path[24];
	Box__CfgU64 u64[16];
	Box__CfgBool bl[4];
	Box__CfgArgv argv[3];
	Box__CfgEnv env[3];
	Box__CfgEnvVar var[4], *vars_agent[2], *vars_tool[1], *vars_mcp[1];
	Box__CfgFilesystem fs[3];
	Box__CfgNetwork net[2];
	Box__CfgSecret secret[2];
	Box__CfgPath *agent_read[2], *agent_write[1], *agent_rf[1], *agent_wf[1], *agent_exec[1],
		*agent_deny[1], *tool_read[1], *tool_write[1], *mcp_read[1];
	Box__CfgStr *dests[2];
	char *files[2];
	Box__Layer require[5];
	char *argv_agent[3], *argv_tool[2], *argv_mcp[3];
	unsigned n_str, n_path, n_u64, n_bl;
} S;

static Box__CfgStr *
s_str(const char *v, uint32_t line)
{
	Box__CfgStr *s = &S.str[S.n_str++];
	box__cfg_str__init(s);
	s->value = (char *)v;
	s->line = line;
	return s;
}

static Box__CfgPath *
s_path(const char *v, uint32_t line)
{
	Box__CfgPath *p = &S.path[S.n_path++];
	box__cfg_path__init(p);
	p->path = (char *)v;
	p->line = line;
	return p;
}

static Box__CfgU64 *
s_u64(uint64_t v, uint32_t line)
{
	Box__CfgU64 *u = &S.u64[S.n_u64++];
	box__cfg_u64__init(u);
	u->value = v;
	u->line = line;
	return u;
}

static Box__CfgBool *
s_bool(bool v, uint32_t line)
{
	Box__CfgBool *b = &S.bl[S.n_bl++];
	box__cfg_bool__init(b);
	b->value = v;
	b->line = line;
	return b;
}

static uint8_t policy_text[] = "permit(principal, action == Action::\"fs:read\", resource);\n";
static uint8_t secret_bytes[] = "sk-ant-secret-value";

static Box__BoxSpec *
build_spec(void)
{
	memset(&S, 0, sizeof(S));
	Box__BoxSpec *sp = &S.spec;
	box__box_spec__init(sp);
	S.files[0] = "/home/me/project/box.ini";
	S.files[1] = "/home/me/project/policy.dw";
	sp->files = S.files;
	sp->n_files = 2;

	box__cfg_box__init(&S.box);
	S.box.line = 1;
	S.box.name = s_str("demo", 2);
	S.box.policy = s_path("/home/me/project/policy.dw", 3);
	S.box.state_dir = s_path("/home/me/.local/state/box/demo", 4);
	S.require[0] = BOX__LAYER__LAYER_USERNS;
	S.require[1] = BOX__LAYER__LAYER_MOUNTNS;
	S.require[2] = BOX__LAYER__LAYER_NETNS;
	S.require[3] = BOX__LAYER__LAYER_LANDLOCK;
	S.box.require = S.require;
	S.box.n_require = 4;
	S.box.has_require_line = 1;
	S.box.require_line = 5;
	S.box.timeout_ms = s_u64(3600000, 6);
	S.box.has_history_sync = 1;
	S.box.history_sync = BOX__HISTORY_SYNC__HISTORY_SYNC_BATCH;
	S.box.has_history_sync_line = 1;
	S.box.history_sync_line = 7;
	S.box.command_timeout_ms = s_u64(60000, 8);
	sp->box = &S.box;

	box__cfg_agent__init(&S.agent);
	S.agent.line = 10;
	box__cfg_argv__init(&S.argv[0]);
	S.argv_agent[0] = "/usr/bin/python3";
	S.argv_agent[1] = "agent.py";
	S.argv_agent[2] = "--flag with space";
	S.argv[0].argv = S.argv_agent;
	S.argv[0].n_argv = 3;
	S.argv[0].line = 11;
	S.agent.command = &S.argv[0];
	S.agent.workspace = s_path("/home/me/project", 12);
	S.agent.user = s_str("me", 13);
	S.agent.memory_max = s_u64(1ull << 30, 14);
	S.agent.pids_max = s_u64(512, 15);
	S.agent.nofile = s_u64(4096, 16);
	S.agent.nproc = s_u64(256, 17);
	box__cfg_env__init(&S.env[0]);
	S.env[0].line = 20;
	box__cfg_env_var__init(&S.var[0]);
	S.var[0].name = "PATH";
	S.var[0].value = "/usr/bin:/bin";
	S.var[0].line = 21;
	box__cfg_env_var__init(&S.var[1]);
	S.var[1].name = "EDITOR";
	S.var[1].value = "";
	S.var[1].line = 22;
	S.vars_agent[0] = &S.var[0];
	S.vars_agent[1] = &S.var[1];
	S.env[0].vars = S.vars_agent;
	S.env[0].n_vars = 2;
	S.agent.env = &S.env[0];
	box__cfg_filesystem__init(&S.fs[0]);
	S.fs[0].line = 30;
	S.agent_read[0] = s_path("/home/me/project", 31);
	S.agent_read[1] = s_path("/usr/share/doc", 32);
	S.fs[0].read = S.agent_read;
	S.fs[0].n_read = 2;
	S.agent_write[0] = s_path("/home/me/project/out", 33);
	S.fs[0].write = S.agent_write;
	S.fs[0].n_write = 1;
	S.agent_rf[0] = s_path("/etc/hosts", 34);
	S.fs[0].read_file = S.agent_rf;
	S.fs[0].n_read_file = 1;
	S.agent_wf[0] = s_path("/home/me/notes.txt", 35);
	S.fs[0].write_file = S.agent_wf;
	S.fs[0].n_write_file = 1;
	S.agent_exec[0] = s_path("/home/me/project/bin", 36);
	S.fs[0].exec = S.agent_exec;
	S.fs[0].n_exec = 1;
	S.agent_deny[0] = s_path("/home/me/project/.env", 37);
	S.fs[0].deny = S.agent_deny;
	S.fs[0].n_deny = 1;
	S.agent.filesystem = &S.fs[0];
	sp->agent = &S.agent;

	box__cfg_tool__init(&S.tool);
	S.tool.name = "git";
	S.tool.line = 40;
	box__cfg_argv__init(&S.argv[1]);
	S.argv_tool[0] = "git";
	S.argv_tool[1] = "-c";
	S.argv[1].argv = S.argv_tool;
	S.argv[1].n_argv = 2;
	S.argv[1].line = 41;
	S.tool.command = &S.argv[1];
	S.tool.workspace = s_path("/home/me/project", 42);
	box__cfg_env__init(&S.env[1]);
	S.env[1].line = 43;
	box__cfg_env_var__init(&S.var[2]);
	S.var[2].name = "GIT_PAGER";
	S.var[2].value = "cat";
	S.var[2].line = 44;
	S.vars_tool[0] = &S.var[2];
	S.env[1].vars = S.vars_tool;
	S.env[1].n_vars = 1;
	S.tool.env = &S.env[1];
	box__cfg_filesystem__init(&S.fs[1]);
	S.fs[1].line = 45;
	S.tool_read[0] = s_path("/home/me/project", 46);
	S.fs[1].read = S.tool_read;
	S.fs[1].n_read = 1;
	S.tool_write[0] = s_path("/home/me/project/.git", 47);
	S.fs[1].write = S.tool_write;
	S.fs[1].n_write = 1;
	S.tool.filesystem = &S.fs[1];
	box__cfg_network__init(&S.net[0]);
	S.net[0].line = 48;
	S.net[0].contain_egress = s_bool(false, 49);
	S.tool.network = &S.net[0];
	S.tool.nofile = s_u64(1024, 50);
	S.tool.nproc = s_u64(64, 51);
	S.tool.has_supervise = 1;
	S.tool.supervise = BOX__SUPERVISE__SUPERVISE_FS;
	S.tool.has_supervise_line = 1;
	S.tool.supervise_line = 52;
	S.tools[0] = &S.tool;
	sp->tools = S.tools;
	sp->n_tools = 1;

	box__cfg_egress__init(&S.egress);
	S.egress.name = "anthropic";
	S.egress.line = 60;
	S.dests[0] = s_str("api.anthropic.com", 61);
	S.dests[1] = s_str("*.example.com:8443/v1", 62);
	S.egress.destinations = S.dests;
	S.egress.n_destinations = 2;
	box__cfg_secret__init(&S.secret[0]);
	S.secret[0].ref = "env://ANTHROPIC_API_KEY";
	S.secret[0].line = 63;
	S.secret[0].has_secret_value = 1;
	S.secret[0].secret_value.data = secret_bytes;
	S.secret[0].secret_value.len = sizeof(secret_bytes) - 1;
	S.egress.secret = &S.secret[0];
	S.egress.variable = s_str("ANTHROPIC_API_KEY", 64);
	S.egress.has_placement = 1;
	S.egress.placement = BOX__PLACEMENT__PLACEMENT_HEADER;
	S.egress.has_placement_line = 1;
	S.egress.placement_line = 65;
	S.egress.header = s_str("x-api-key", 66);
	S.egress.prefix = s_str("", 67);
	S.egress.has_inject = 1;
	S.egress.inject = BOX__INJECT__INJECT_ALWAYS;
	S.egress.has_inject_line = 1;
	S.egress.inject_line = 68;
	S.egress.placeholder_prefix = s_str("sk-ant-", 69);
	S.egresses[0] = &S.egress;
	sp->egress = S.egresses;
	sp->n_egress = 1;

	box__cfg_mcp__init(&S.mcp[0]);
	S.mcp[0].name = "files";
	S.mcp[0].line = 70;
	S.mcp[0].type = BOX__MCP_TYPE__MCP_TYPE_STDIO;
	S.mcp[0].has_type_line = 1;
	S.mcp[0].type_line = 71;
	box__cfg_argv__init(&S.argv[2]);
	S.argv_mcp[0] = "/usr/bin/npx";
	S.argv_mcp[1] = "-y";
	S.argv_mcp[2] = "@modelcontextprotocol/server-filesystem";
	S.argv[2].argv = S.argv_mcp;
	S.argv[2].n_argv = 3;
	S.argv[2].line = 72;
	S.mcp[0].command = &S.argv[2];
	S.mcp[0].alias = s_str("fs-server", 73);
	box__cfg_env__init(&S.env[2]);
	S.env[2].line = 74;
	box__cfg_env_var__init(&S.var[3]);
	S.var[3].name = "NODE_ENV";
	S.var[3].value = "production";
	S.var[3].line = 75;
	S.vars_mcp[0] = &S.var[3];
	S.env[2].vars = S.vars_mcp;
	S.env[2].n_vars = 1;
	S.mcp[0].env = &S.env[2];
	box__cfg_filesystem__init(&S.fs[2]);
	S.fs[2].line = 76;
	S.mcp_read[0] = s_path("/home/me/docs", 77);
	S.fs[2].read = S.mcp_read;
	S.fs[2].n_read = 1;
	S.mcp[0].filesystem = &S.fs[2];
	box__cfg_network__init(&S.net[1]);
	S.net[1].line = 78;
	S.mcp[0].network = &S.net[1];
	S.mcp[0].allow_tool_changes = s_bool(true, 79);
	S.mcp[0].max_frame = s_u64(4u << 20, 80);

	box__cfg_mcp__init(&S.mcp[1]);
	S.mcp[1].name = "remote";
	S.mcp[1].line = 85;
	S.mcp[1].type = BOX__MCP_TYPE__MCP_TYPE_HTTP;
	S.mcp[1].url = s_str("https://mcp.example.com/v1", 86);
	box__cfg_secret__init(&S.secret[1]);
	S.secret[1].ref = "file:///home/me/.mcp-token";
	S.secret[1].line = 87;
	S.secret[1].has_secret_value = 1;
	S.secret[1].secret_value.data = secret_bytes;
	S.secret[1].secret_value.len = 4;
	S.mcp[1].secret = &S.secret[1];
	S.mcp[1].has_placement = 1;
	S.mcp[1].placement = BOX__PLACEMENT__PLACEMENT_BASIC_AUTH;
	S.mcp[1].has_placement_line = 1;
	S.mcp[1].placement_line = 88;
	S.mcps[0] = &S.mcp[0];
	S.mcps[1] = &S.mcp[1];
	sp->mcp = S.mcps;
	sp->n_mcp = 2;

	box__cfg_gateway__init(&S.gw);
	S.gw.line = 90;
	S.gw.port = s_u64(3128, 91);
	S.gw.connect_timeout_ms = s_u64(10000, 92);
	S.gw.idle_timeout_ms = s_u64(300000, 93);
	S.gw.max_connections = s_u64(1024, 94);
	S.gw.max_request_body = s_u64(64u << 20, 95);
	S.gw.upstream_ca = s_path("/home/me/ca.pem", 96);
	S.gw.has_upstream_ca_pem = 1;
	S.gw.upstream_ca_pem.data = (uint8_t *)"-----BEGIN CERTIFICATE-----\n";
	S.gw.upstream_ca_pem.len = 28;
	S.gw.resolver = s_str("127.0.0.1:5353", 97);
	S.gw.hosts_file = s_path("/home/me/hosts", 98);
	S.gw.has_hosts_file_text = 1;
	S.gw.hosts_file_text.data = (uint8_t *)"127.0.0.1 api.test\n";
	S.gw.hosts_file_text.len = 19;
	S.gw.allow_host_loopback = s_bool(true, 99);
	sp->gateway = &S.gw;

	sp->has_policy_text = 1;
	sp->policy_text.data = policy_text;
	sp->policy_text.len = sizeof(policy_text) - 1;

	box__caller__init(&S.caller);
	S.caller.cwd = "/home/me/project";
	S.caller.path = "/usr/local/bin:/usr/bin:/bin";
	box__cfg_env_var__init(&S.inherit);
	S.inherit.name = "TERM";
	S.inherit.value = "xterm-256color";
	S.inherit.line = 0;
	S.inherits[0] = &S.inherit;
	S.caller.inherit = S.inherits;
	S.caller.n_inherit = 1;
	sp->caller = &S.caller;
	return sp;
}

/* Send on sv[0], receive on sv[1]; returns box_ipc_recv_wait's result. */
static int
send_recv(int sv[2], uint32_t type, uint64_t rid, const ProtobufCMessage *m, const int *fds,
	  unsigned n_fds, struct box_ipc_msg *out)
{
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *c = box_ipc_chan_new(sv[1], ALL, 0);
	int r = send_all(sv[0], type, rid, m, fds, n_fds);
	if (r < 0)
		return r;
	return box_ipc_recv_wait(c, out, 1000);
}

/* Feed one raw packet on a fresh channel (no socket). */
static int
feed1(const uint8_t *pkt, size_t len, struct box_ipc_msg *out)
{
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *c = box_ipc_chan_new(-1, ALL, 0);
	return box_ipc_chan_feed(c, pkt, len, NULL, 0, out);
}

/* ---- round trips ------------------------------------------------------- */

static void
check_roundtrip(uint32_t type, const ProtobufCMessage *m, const int *fds, unsigned n_fds)
{
	int sv[2];
	struct box_ipc_msg got = BOX_IPC_MSG_INIT;
	CHECK_INT(box_ipc_socketpair(sv, true), 0);
	int r = send_recv(sv, type, 4242, m, fds, n_fds, &got);
	CHECK_INT(r, 1);
	if (r == 1) {
		CHECK_INT(got.type, type);
		CHECK_INT(got.request_id, 4242);
		CHECK(got.msg && got.msg->descriptor == m->descriptor);
		CHECK(same_packed(m, got.msg));
		CHECK_INT(got.n_fds, n_fds);
		for (unsigned i = 0; i < got.n_fds; i++) {
			struct stat a, b;
			CHECK(fstat(fds[i], &a) == 0 && fstat(got.fds[i], &b) == 0);
			CHECK(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
			CHECK(fcntl(got.fds[i], F_GETFD) & FD_CLOEXEC);
		}
	}
	box_ipc_msg_done(&got);
	close(sv[0]);
	close(sv[1]);
}

static void
test_roundtrip_spec_requests(void)
{
	int p[2];
	CHECK_INT(pipe2(p, O_CLOEXEC), 0);
	int fds[3] = { p[0], p[1], p[1] };

	Box__RunRequest run;
	box__run_request__init(&run);
	run.spec = build_spec();
	static char *extra[] = { "--model", "x" };
	run.extra_args = extra;
	run.n_extra_args = 2;
	run.n_stdio_fds = 3;
	run.has_n_stdio_fds = 1;
	CHECK_INT(box_validate_run_request(&run), 0);
	check_roundtrip(BOX__MSG_TYPE__MSG_RUN_REQUEST, &run.base, fds, 3);
	/* stdin a terminal (the pty slave), stdout and stderr pipes: two fds. */
	run.has_stdio_tty = 1;
	run.stdio_tty = 1;
	run.n_stdio_fds = 2;
	run.has_rows = run.has_cols = 1;
	run.rows = 50;
	run.cols = 200;
	CHECK_INT(box_validate_run_request(&run), 0);
	check_roundtrip(BOX__MSG_TYPE__MSG_RUN_REQUEST, &run.base, fds + 1, 2);
	/* All three terminals: no fd at all. */
	run.stdio_tty = 7;
	run.n_stdio_fds = 0;
	CHECK_INT(box_validate_run_request(&run), 0);
	check_roundtrip(BOX__MSG_TYPE__MSG_RUN_REQUEST, &run.base, NULL, 0);
	/* A dry run carries no stream and cannot be detached. */
	run.has_dry_run = run.dry_run = 1;
	CHECK_INT(box_validate_run_request(&run), -EINVAL); /* the three terminals */
	run.has_stdio_tty = run.stdio_tty = 0;
	run.has_rows = run.has_cols = 0;
	CHECK_INT(box_validate_run_request(&run), 0);
	check_roundtrip(BOX__MSG_TYPE__MSG_RUN_REQUEST, &run.base, NULL, 0);
	run.n_stdio_fds = 3;
	CHECK_INT(box_validate_run_request(&run), -EINVAL);
	run.n_stdio_fds = 0;
	run.has_detach = run.detach = 1;
	CHECK_INT(box_validate_run_request(&run), -EINVAL);
	run.has_detach = run.detach = 0;
	run.has_dry_run = run.dry_run = 0;
	run.n_stdio_fds = 3;

	/* RunReply OK with the pty master (one fd); the disclosure before the spawn. */
	Box__RunReply ptyrep;
	box__run_reply__init(&ptyrep);
	ptyrep.status = BOX__REPLY_STATUS__REPLY_OK;
	ptyrep.box_id = "0123456789ab";
	ptyrep.has_pid = 1;
	ptyrep.pid = 7;
	ptyrep.has_pty = ptyrep.pty = 1;
	CHECK_INT(box_validate_run_reply(&ptyrep), 0);
	check_roundtrip(BOX__MSG_TYPE__MSG_RUN_REPLY, &ptyrep.base, fds, 1);
	/* A dry run's OK has no agent: no pid, no pty; OK without a pid is not a start. */
	Box__RunReply dry;
	box__run_reply__init(&dry);
	dry.status = BOX__REPLY_STATUS__REPLY_OK;
	dry.box_id = "0123456789ab";
	CHECK_INT(box_validate_run_reply(&dry), -EINVAL);
	dry.has_dry_run = dry.dry_run = 1;
	CHECK_INT(box_validate_run_reply(&dry), 0);
	check_roundtrip(BOX__MSG_TYPE__MSG_RUN_REPLY, &dry.base, NULL, 0);
	dry.has_pid = 1;
	dry.pid = 7;
	CHECK_INT(box_validate_run_reply(&dry), -EINVAL);
	dry.has_pid = 0;
	dry.has_pty = dry.pty = 1;
	CHECK_INT(box_validate_run_reply(&dry), -EINVAL);
	dry.has_pty = dry.pty = 0;
	dry.status = BOX__REPLY_STATUS__REPLY_FAILED;
	CHECK_INT(box_validate_run_reply(&dry), -EINVAL);
	dry.status = BOX__REPLY_STATUS__REPLY_OK;
	/* --timings: a few named steps, each no earlier than the one before. */
	Box__StartStep steps[BOX_TIMELINE_MAX + 1], *timeline[BOX_TIMELINE_MAX + 1];
	for (size_t i = 0; i <= BOX_TIMELINE_MAX; i++) {
		box__start_step__init(&steps[i]);
		steps[i].step = "box-policyd ready";
		steps[i].usec = 1000 + i;
		timeline[i] = &steps[i];
	}
	dry.timeline = timeline;
	dry.n_timeline = 3;
	CHECK_INT(box_validate_run_reply(&dry), 0);
	check_roundtrip(BOX__MSG_TYPE__MSG_RUN_REPLY, &dry.base, NULL, 0);
	dry.n_timeline = BOX_TIMELINE_MAX + 1;
	CHECK_INT(box_validate_run_reply(&dry), -E2BIG);
	dry.n_timeline = 3;
	steps[2].usec = 5; /* before the step ahead of it */
	CHECK_INT(box_validate_run_reply(&dry), -EINVAL);
	steps[2].usec = 1002;
	steps[1].step = "";
	CHECK_INT(box_validate_run_reply(&dry), -EINVAL);
	steps[1].step = "a\nforged line";
	CHECK_INT(box_validate_run_reply(&dry), -EINVAL);
	steps[1].step = "a step name longer than sixty-four bytes is not one boxd would send..";
	CHECK_INT(box_validate_run_reply(&dry), -E2BIG);
	dry.n_timeline = 0;
	dry.timeline = NULL;
	Box__RunStarting starting;
	box__run_starting__init(&starting);
	static char *lines[] = { "box a, id 0123456789ab", "  read        /x" };
	starting.disclosure = lines;
	starting.n_disclosure = 2;
	CHECK_INT(box_validate_run_starting(&starting), 0);
	check_roundtrip(BOX__MSG_TYPE__MSG_RUN_STARTING, &starting.base, NULL, 0);

	Box__CheckRequest chk;
	box__check_request__init(&chk);
	chk.spec = build_spec();
	check_roundtrip(BOX__MSG_TYPE__MSG_CHECK_REQUEST, &chk.base, NULL, 0);
	close(p[0]);
	close(p[1]);
}

static void
test_roundtrip_replies(void)
{
	Box__Problem pr;
	box__problem__init(&pr);
	pr.severity = BOX__PROBLEM__SEVERITY__SEVERITY_ERROR;
	pr.has_file = pr.has_line = 1;
	pr.file = 0;
	pr.line = 33;
	pr.section = "agent.filesystem";
	pr.key = "write";
	pr.message = "/home/me/project/out does not exist";
	Box__Problem *prs[] = { &pr };
	static char *disc[] = { "demo 0123456789ab", "  read        /home/me/project" };

	Box__RunReply rr;
	box__run_reply__init(&rr);
	rr.status = BOX__REPLY_STATUS__REPLY_OK;
	rr.box_id = "0123456789ab";
	rr.has_pid = 1;
	rr.pid = 1234;
	rr.problems = prs;
	rr.n_problems = 1;
	rr.disclosure = disc;
	rr.n_disclosure = 2;
	rr.state_dir = "/var/lib/box/1000/demo";
	check_roundtrip(BOX__MSG_TYPE__MSG_RUN_REPLY, &rr.base, NULL, 0);

	Box__RunExit ex;
	box__run_exit__init(&ex);
	ex.box_id = "0123456789ab";
	ex.has_signal = 1;
	ex.signal = 9;
	check_roundtrip(BOX__MSG_TYPE__MSG_RUN_EXIT, &ex.base, NULL, 0);

	Box__RunControl ctl;
	box__run_control__init(&ctl);
	ctl.box_id = "0123456789ab";
	ctl.signal = SIGINT;
	check_roundtrip(BOX__MSG_TYPE__MSG_RUN_CONTROL, &ctl.base, NULL, 0);

	Box__PsRequest ps;
	box__ps_request__init(&ps);
	check_roundtrip(BOX__MSG_TYPE__MSG_PS_REQUEST, &ps.base, NULL, 0);
	ps.has_all = ps.all = 1;
	check_roundtrip(BOX__MSG_TYPE__MSG_PS_REQUEST, &ps.base, NULL, 0);

	Box__BoxInfo bi;
	box__box_info__init(&bi);
	bi.name = "demo";
	bi.box_id = "0123456789ab";
	bi.state = BOX__BOX_STATE__BOX_STATE_RUNNING;
	bi.pid = 77;
	bi.uptime_s = 12;
	bi.uid = 1000;
	Box__BoxInfo *bis[] = { &bi, &bi };
	Box__PsReply psr;
	box__ps_reply__init(&psr);
	psr.boxes = bis;
	psr.n_boxes = 2;
	check_roundtrip(BOX__MSG_TYPE__MSG_PS_REPLY, &psr.base, NULL, 0);

	Box__StopRequest st;
	box__stop_request__init(&st);
	st.box = "demo";
	check_roundtrip(BOX__MSG_TYPE__MSG_STOP_REQUEST, &st.base, NULL, 0);
	Box__StopReply str;
	box__stop_reply__init(&str);
	str.status = BOX__REPLY_STATUS__REPLY_NOT_FOUND;
	str.error = "no box 'demo'";
	check_roundtrip(BOX__MSG_TYPE__MSG_STOP_REPLY, &str.base, NULL, 0);

	Box__LogRequest lg;
	box__log_request__init(&lg);
	lg.box = "0123456789ab";
	lg.has_follow = lg.follow = 1;
	check_roundtrip(BOX__MSG_TYPE__MSG_LOG_REQUEST, &lg.base, NULL, 0);

	int p[2];
	CHECK_INT(pipe2(p, O_CLOEXEC), 0);
	Box__LogReply lr;
	box__log_reply__init(&lr);
	lr.status = BOX__REPLY_STATUS__REPLY_OK;
	lr.box_id = "0123456789ab";
	lr.name = "demo";
	lr.has_has_current = lr.has_current = 1;
	lr.has_has_previous = lr.has_previous = 1;
	check_roundtrip(BOX__MSG_TYPE__MSG_LOG_REPLY, &lr.base, p, 2);

	/* `boxctl mcp pins|accept` (94/95): the pins file's fd with an OK reply. */
	Box__McpPinsRequest mq;
	box__mcp_pins_request__init(&mq);
	mq.box = "demo";
	mq.has_accept = mq.accept = 1;
	check_roundtrip(BOX__MSG_TYPE__MSG_MCP_PINS_REQUEST, &mq.base, NULL, 0);
	Box__McpPinsReply mr;
	box__mcp_pins_reply__init(&mr);
	mr.status = BOX__REPLY_STATUS__REPLY_OK;
	mr.box_id = "0123456789ab";
	mr.name = "demo";
	mr.has_running = mr.running = 1;
	check_roundtrip(BOX__MSG_TYPE__MSG_MCP_PINS_REPLY, &mr.base, p, 1);
	mr.status = BOX__REPLY_STATUS__REPLY_NOT_FOUND;
	mr.box_id = mr.name = NULL;
	mr.error = "no box named demo";
	check_roundtrip(BOX__MSG_TYPE__MSG_MCP_PINS_REPLY, &mr.base, NULL, 0);
	/* `boxctl shell` (98/99): the pty master and the end pipe with an OK reply. */
	Box__AttachRequest aq;
	box__attach_request__init(&aq);
	aq.box = "demo";
	aq.has_rows = aq.has_cols = 1;
	aq.rows = 24;
	aq.cols = 80;
	aq.term = "xterm-256color";
	check_roundtrip(BOX__MSG_TYPE__MSG_ATTACH_REQUEST, &aq.base, NULL, 0);
	Box__AttachReply ar;
	box__attach_reply__init(&ar);
	ar.status = BOX__REPLY_STATUS__REPLY_OK;
	ar.box_id = "0123456789ab";
	ar.name = "demo";
	check_roundtrip(BOX__MSG_TYPE__MSG_ATTACH_REPLY, &ar.base, p, 2);
	ar.status = BOX__REPLY_STATUS__REPLY_NOT_FOUND;
	ar.box_id = ar.name = NULL;
	ar.error = "no box named demo";
	check_roundtrip(BOX__MSG_TYPE__MSG_ATTACH_REPLY, &ar.base, NULL, 0);
	close(p[0]);
	close(p[1]);

	Box__CheckReply cr;
	box__check_reply__init(&cr);
	cr.status = BOX__REPLY_STATUS__REPLY_REFUSED;
	cr.problems = prs;
	cr.n_problems = 1;
	check_roundtrip(BOX__MSG_TYPE__MSG_CHECK_REPLY, &cr.base, NULL, 0);

	Box__ErrorReply er;
	box__error_reply__init(&er);
	er.errno_value = EPERM;
	er.message = "not allowed";
	check_roundtrip(BOX__MSG_TYPE__MSG_ERROR_REPLY, &er.base, NULL, 0);
}

/* Over 1 MiB: fragments through a real socket, sender in a child. */
static void
test_fragmentation_roundtrip(void)
{
	size_t big = (3u << 20) + 12345;
	uint8_t *text = malloc(big);
	for (size_t i = 0; i < big; i++)
		text[i] = (uint8_t)('a' + i % 23);
	Box__RunRequest run;
	box__run_request__init(&run);
	run.spec = build_spec();
	run.spec->policy_text.data = text;
	run.spec->policy_text.len = big;
	run.has_n_stdio_fds = 1;
	run.n_stdio_fds = 3;
	int p[2];
	CHECK_INT(pipe2(p, O_CLOEXEC), 0);
	int fds[3] = { p[0], p[1], p[0] };

	int sv[2];
	CHECK_INT(box_ipc_socketpair(sv, false), 0);
	int before = count_fds();
	pid_t pid = fork();
	if (pid == 0) {
		close(sv[1]);
		_exit(send_all(sv[0], BOX__MSG_TYPE__MSG_RUN_REQUEST, 7, &run.base, fds, 3) ==
				      0
			      ? 0
			      : 1);
	}
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *c = box_ipc_chan_new(sv[1], ALL, 0);
	struct box_ipc_msg got = BOX_IPC_MSG_INIT;
	int r = box_ipc_recv_wait(c, &got, 10000);
	CHECK_INT(r, 1);
	int st = -1;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (r == 1) {
		const Box__RunRequest *g = (const Box__RunRequest *)got.msg;
		CHECK_INT(got.request_id, 7);
		CHECK_INT(g->spec->policy_text.len, big);
		CHECK(memcmp(g->spec->policy_text.data, text, big) == 0);
		CHECK(same_packed(&run.base, got.msg));
		CHECK_INT(got.n_fds, 3);
		CHECK_INT(box_ipc_chan_open_streams(c), 0);
	}
	box_ipc_msg_done(&got);
	CHECK_INT(count_fds(), before);
	close(sv[0]);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
	free(text);
}

/* ---- packets a peer should not send ------------------------------------ */

static void
test_oversize_packets(void)
{
	int sv[2];
	CHECK_INT(box_ipc_socketpair(sv, true), 0);
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *c = box_ipc_chan_new(sv[1], ALL, 0);
	struct box_ipc_msg got = BOX_IPC_MSG_INIT;
	uint8_t *junk = calloc(1, 100000);

	/* One byte over the limit: fits the receive buffer, refused by size. */
	CHECK_INT(raw_send(sv[0], junk, BOX_IPC_MAX + 1, NULL, 0), 0);
	CHECK_INT(box_ipc_recv(c, &got), -EMSGSIZE);
	/* Far over: the kernel truncates (MSG_TRUNC). */
	CHECK_INT(raw_send(sv[0], junk, 100000, NULL, 0), 0);
	CHECK_INT(box_ipc_recv(c, &got), -EMSGSIZE);
	free(junk);

	/* A payload over the type's single-packet cap. */
	uint8_t payload[300];
	memset(payload, 0, sizeof(payload));
	size_t len;
	_cleanup_free_ uint8_t *pkt = env_payload(BOX_IPC_VERSION, BOX__MSG_TYPE__MSG_STOP_REQUEST,
						  1, payload, sizeof(payload), &len);
	CHECK_INT(feed1(pkt, len, &got), -EMSGSIZE);

	/* The sender refuses what the receiver would. */
	static char name[BOX_NAME_MAX + 1];
	memset(name, 'a', BOX_NAME_MAX);
	Box__StopRequest st;
	box__stop_request__init(&st);
	st.box = name;
	CHECK_INT(send_all(sv[0], BOX__MSG_TYPE__MSG_STOP_REQUEST, 1, &st.base, NULL, 0), 0);
	CHECK_INT(box_ipc_recv(c, &got), 1);
	box_ipc_msg_done(&got);
	Box__ErrorReply er;
	box__error_reply__init(&er);
	er.errno_value = 1;
	er.message = calloc(1, 9000);
	memset(er.message, 'x', 8999);
	CHECK_INT(send_all(sv[0], BOX__MSG_TYPE__MSG_ERROR_REPLY, 1, &er.base, NULL, 0),
		  -E2BIG);
	free(er.message);
	close(sv[0]);
	close(sv[1]);
}

static void
test_unexpected_fds(void)
{
	int sv[2], p[2];
	CHECK_INT(box_ipc_socketpair(sv, true), 0);
	CHECK_INT(pipe2(p, O_CLOEXEC), 0);
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *c = box_ipc_chan_new(sv[1], ALL, 0);
	struct box_ipc_msg got = BOX_IPC_MSG_INIT;
	int before = count_fds();

	Box__PsRequest ps;
	box__ps_request__init(&ps);
	size_t len;
	_cleanup_free_ uint8_t *pkt = env_msg(BOX__MSG_TYPE__MSG_PS_REQUEST, 1, &ps.base, &len);

	/* A type that carries no fd. */
	CHECK_INT(raw_send(sv[0], pkt, len, p, 1), 0);
	CHECK_INT(box_ipc_recv(c, &got), -EBADMSG);
	CHECK_INT(count_fds(), before);

	/* More fds than any message may carry: MSG_CTRUNC, all closed. */
	int many[12];
	for (int i = 0; i < 12; i++)
		many[i] = p[0];
	CHECK_INT(raw_send(sv[0], pkt, len, many, 12), 0);
	CHECK_INT(box_ipc_recv(c, &got), -EBADMSG);
	CHECK_INT(count_fds(), before);

	/* LogReply says one fd, three arrive. */
	Box__LogReply lr;
	box__log_reply__init(&lr);
	lr.status = BOX__REPLY_STATUS__REPLY_OK;
	lr.box_id = "0123456789ab";
	lr.name = "demo";
	lr.has_has_current = lr.has_current = 1;
	_cleanup_free_ uint8_t *lpkt = env_msg(BOX__MSG_TYPE__MSG_LOG_REPLY, 1, &lr.base, &len);
	int three[3] = { p[0], p[1], p[0] };
	CHECK_INT(raw_send(sv[0], lpkt, len, three, 3), 0);
	CHECK_INT(box_ipc_recv(c, &got), -EBADMSG);
	CHECK_INT(count_fds(), before);
	/* Two arrive (within the type's cap) but the message declares one. */
	CHECK_INT(raw_send(sv[0], lpkt, len, three, 2), 0);
	CHECK_INT(box_ipc_recv(c, &got), -EBADMSG);
	CHECK_INT(count_fds(), before);
	/* Exactly one: accepted. */
	CHECK_INT(raw_send(sv[0], lpkt, len, three, 1), 0);
	CHECK_INT(box_ipc_recv(c, &got), 1);
	CHECK_INT(got.n_fds, 1);
	CHECK_INT(count_fds(), before + 1);
	box_ipc_msg_done(&got);
	CHECK_INT(count_fds(), before);

	/* A garbage packet with an fd: the fd is closed too. */
	CHECK_INT(raw_send(sv[0], "\xff\xff\xff", 3, p, 1), 0);
	CHECK_INT(box_ipc_recv(c, &got), -EBADMSG);
	CHECK_INT(count_fds(), before);

	/* The sender refuses fds on a type without them. */
	CHECK_INT(send_all(sv[0], BOX__MSG_TYPE__MSG_PS_REQUEST, 1, &ps.base, p, 1), -EBADMSG);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}

static void
test_truncated_packets(void)
{
	Box__RunReply rr;
	box__run_reply__init(&rr);
	rr.status = BOX__REPLY_STATUS__REPLY_FAILED;
	rr.error = "could not start the box: no user namespaces";
	size_t len;
	_cleanup_free_ uint8_t *pkt = env_msg(BOX__MSG_TYPE__MSG_RUN_REPLY, 9, &rr.base, &len);
	struct box_ipc_msg got = BOX_IPC_MSG_INIT;

	CHECK_INT(feed1(pkt, len, &got), 1);
	box_ipc_msg_done(&got);
	int accepted = 0;
	for (size_t n = 0; n < len; n++) {
		_cleanup_free_ uint8_t *cut = malloc(n ? n : 1);
		memcpy(cut, pkt, n);
		int r = feed1(cut, n, &got);
		if (r == 1) {
			accepted++;
			box_ipc_msg_done(&got);
		}
		CHECK(r < 0);
	}
	CHECK_INT(accepted, 0);

	/* A payload cut short inside a valid envelope. */
	size_t plen;
	_cleanup_free_ uint8_t *p = pack(&rr.base, &plen);
	_cleanup_free_ uint8_t *e = env_payload(BOX_IPC_VERSION, BOX__MSG_TYPE__MSG_RUN_REPLY, 1, p,
						plen - 3, &len);
	CHECK_INT(feed1(e, len, &got), -EBADMSG);
	/* An envelope with no body at all. */
	Box__Envelope env;
	box__envelope__init(&env);
	env.version = BOX_IPC_VERSION;
	env.type = BOX__MSG_TYPE__MSG_PS_REQUEST;
	_cleanup_free_ uint8_t *nb = pack(&env.base, &len);
	CHECK_INT(feed1(nb, len, &got), -EBADMSG);
}

static void
test_unknown_fields(void)
{
	struct box_ipc_msg got = BOX_IPC_MSG_INIT;
	Box__PsRequest ps;
	box__ps_request__init(&ps);
	size_t len;
	uint8_t *pkt = env_msg(BOX__MSG_TYPE__MSG_PS_REQUEST, 1, &ps.base, &len);

	/* Field 15 (varint) appended to the envelope. */
	uint8_t *ext = malloc(len + 2);
	memcpy(ext, pkt, len);
	ext[len] = (15 << 3) | 0;
	ext[len + 1] = 1;
	CHECK_INT(feed1(ext, len + 2, &got), -EBADMSG);
	free(ext);
	free(pkt);

	/* Field 9 in the payload. */
	uint8_t payload[] = { 0x08, 0x01, (9 << 3) | 0, 0x05 };
	pkt = env_payload(BOX_IPC_VERSION, BOX__MSG_TYPE__MSG_PS_REQUEST, 1, payload,
			  sizeof(payload), &len);
	CHECK_INT(feed1(pkt, len, &got), -EBADMSG);
	free(pkt);
	/* Without it the same payload is fine. */
	pkt = env_payload(BOX_IPC_VERSION, BOX__MSG_TYPE__MSG_PS_REQUEST, 1, payload, 2, &len);
	CHECK_INT(feed1(pkt, len, &got), 1);
	box_ipc_msg_done(&got);
	free(pkt);

	/* An unknown field deep inside the spec (agent.filesystem). */
	Box__CheckRequest chk;
	box__check_request__init(&chk);
	chk.spec = build_spec();
	uint8_t blob[] = { 'h', 'i' };
	ProtobufCMessageUnknownField uf = {
		.tag = 99, .wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED, .len = 2, .data = blob
	};
	chk.spec->agent->filesystem->base.n_unknown_fields = 1;
	chk.spec->agent->filesystem->base.unknown_fields = &uf;
	pkt = env_msg(BOX__MSG_TYPE__MSG_CHECK_REQUEST, 1, &chk.base, &len);
	CHECK_INT(feed1(pkt, len, &got), -EBADMSG);
	free(pkt);
	chk.spec->agent->filesystem->base.n_unknown_fields = 0;
	pkt = env_msg(BOX__MSG_TYPE__MSG_CHECK_REQUEST, 1, &chk.base, &len);
	CHECK_INT(feed1(pkt, len, &got), 1);
	box_ipc_msg_done(&got);
	free(pkt);
}

static void
test_bad_enums_and_types(void)
{
	struct box_ipc_msg got = BOX_IPC_MSG_INIT;
	size_t len;
	uint8_t *pkt;

	Box__RunReply rr;
	box__run_reply__init(&rr);
	rr.status = (Box__ReplyStatus)99;
	rr.error = "x";
	pkt = env_msg(BOX__MSG_TYPE__MSG_RUN_REPLY, 1, &rr.base, &len);
	CHECK_INT(feed1(pkt, len, &got), -EBADMSG);
	free(pkt);

	/* A repeated enum (box.require) with an undeclared layer. */
	Box__CheckRequest chk;
	box__check_request__init(&chk);
	chk.spec = build_spec();
	S.require[3] = (Box__Layer)42;
	pkt = env_msg(BOX__MSG_TYPE__MSG_CHECK_REQUEST, 1, &chk.base, &len);
	CHECK_INT(feed1(pkt, len, &got), -EBADMSG);
	free(pkt);
	/* A nested enum (Problem.severity). */
	Box__Problem pr;
	box__problem__init(&pr);
	pr.severity = (Box__Problem__Severity)7;
	pr.message = "m";
	Box__Problem *prs[] = { &pr };
	Box__CheckReply cr;
	box__check_reply__init(&cr);
	cr.status = BOX__REPLY_STATUS__REPLY_REFUSED;
	cr.problems = prs;
	cr.n_problems = 1;
	pkt = env_msg(BOX__MSG_TYPE__MSG_CHECK_REPLY, 1, &cr.base, &len);
	CHECK_INT(feed1(pkt, len, &got), -EBADMSG);
	free(pkt);

	/* Envelope types: undeclared, declared but unknown to this build, invalid. */
	Box__PsRequest ps;
	box__ps_request__init(&ps);
	uint32_t types[] = { 1000, BOX__MSG_TYPE__MSG_PLAN, BOX__MSG_TYPE__MSG_INVALID };
	for (size_t i = 0; i < ELEMENTSOF(types); i++) {
		pkt = env_msg(types[i], 1, &ps.base, &len);
		CHECK_INT(feed1(pkt, len, &got), -EBADMSG);
		free(pkt);
	}
	/* Another protocol version. */
	size_t plen;
	_cleanup_free_ uint8_t *p = pack(&ps.base, &plen);
	pkt = env_payload(2, BOX__MSG_TYPE__MSG_PS_REQUEST, 1, p, plen, &len);
	CHECK_INT(feed1(pkt, len, &got), -EPROTONOSUPPORT);
	free(pkt);
	/* A PsRequest payload sent as a StopRequest lacks the required field. */
	pkt = env_msg(BOX__MSG_TYPE__MSG_STOP_REQUEST, 1, &ps.base, &len);
	CHECK_INT(feed1(pkt, len, &got), -EBADMSG);
	free(pkt);
	CHECK_STR(box_ipc_type_name(ALL, BOX__MSG_TYPE__MSG_RUN_REQUEST), "RunRequest");
	CHECK_STR(box_ipc_type_name(ALL, 1000), "?");
}

/* ---- the single-packet envelope fast paths ----------------------------- */

struct captured {
	uint8_t buf[4096];
	size_t len;
	unsigned packets;
};

static int
capture(void *userdata, const uint8_t *pkt, size_t len, const int *fds, unsigned n_fds)
{
	struct captured *c = userdata;
	if (len > sizeof(c->buf))
		return -EMSGSIZE;
	memcpy(c->buf, pkt, len);
	c->len = len;
	c->packets++;
	return 0;
}

/*
 * The same envelope with its fields in another order (payload first): valid
 * protobuf, but not what box_ipc_pack writes, so it takes protobuf-c's path.
 */
static uint8_t *
env_reordered(uint32_t version, uint32_t type, uint64_t rid, const uint8_t *p, size_t plen,
	      size_t *len)
{
	size_t n;
	_cleanup_free_ uint8_t *canon = env_payload(version, type, rid, p, plen, &n);
	/* The canonical packet ends with the payload field: tag, length, bytes. */
	size_t lenlen = 1;
	for (size_t v = plen; v >= 0x80; v >>= 7)
		lenlen++;
	size_t tail = 1 + lenlen + plen, head = n - tail;
	uint8_t *o = malloc(n);
	memcpy(o, canon + head, tail);
	memcpy(o + tail, canon, head);
	*len = n;
	return o;
}

/* Feed PKT and the reordered twin of the same envelope; both must end alike. */
static void
check_twins(uint32_t version, uint32_t type, uint64_t rid, const ProtobufCMessage *m,
	    const uint32_t *allow, unsigned n_allow, int want)
{
	size_t plen, n1, n2;
	_cleanup_free_ uint8_t *p = pack(m, &plen);
	_cleanup_free_ uint8_t *canon = env_payload(version, type, rid, p, plen, &n1);
	_cleanup_free_ uint8_t *twin = env_reordered(version, type, rid, p, plen, &n2);
	struct box_ipc_msg a = BOX_IPC_MSG_INIT, b = BOX_IPC_MSG_INIT;
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *ca = box_ipc_chan_new(-1, ALL, 0);
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *cb = box_ipc_chan_new(-1, ALL, 0);
	if (n_allow) {
		CHECK_INT(box_ipc_chan_allow(ca, allow, n_allow), 0);
		CHECK_INT(box_ipc_chan_allow(cb, allow, n_allow), 0);
	}
	int ra = box_ipc_chan_feed(ca, canon, n1, NULL, 0, &a);
	int rb = box_ipc_chan_feed(cb, twin, n2, NULL, 0, &b);
	CHECK_INT(ra, want);
	CHECK_INT(rb, want);
	if (ra == 1 && rb == 1) {
		CHECK_INT(a.type, b.type);
		CHECK(a.request_id == rid && b.request_id == rid);
		CHECK(same_packed(a.msg, m) && same_packed(b.msg, m));
	}
	box_ipc_msg_done(&a);
	box_ipc_msg_done(&b);
}

static void
test_envelope_fast_paths(void)
{
	Box__StopRequest st;
	box__stop_request__init(&st);
	st.box = "demo";
	static const uint64_t rids[] = { 0, 1, 127, 128, 16383, 16384, 1ULL << 32, UINT64_MAX };

	/* box_ipc_pack writes byte for byte what protobuf-c makes of the envelope. */
	for (size_t i = 0; i < ELEMENTSOF(rids); i++) {
		struct captured c = { .len = 0 };
		CHECK_INT(box_ipc_pack(ALL, BOX__MSG_TYPE__MSG_STOP_REQUEST, rids[i], &st.base, NULL, 0,
				       capture, &c),
			  0);
		size_t n;
		_cleanup_free_ uint8_t *want =
			env_msg(BOX__MSG_TYPE__MSG_STOP_REQUEST, rids[i], &st.base, &n);
		CHECK(c.packets == 1 && c.len == n && memcmp(c.buf, want, n) == 0);
	}
	/* A payload whose length takes a two-byte varint, and an empty payload. */
	char path[200];
	memset(path, 'p', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	Box__PolicyValue val = BOX__POLICY_VALUE__INIT;
	val.kind_case = BOX__POLICY_VALUE__KIND_STR;
	val.str = path;
	Box__PolicyField fld = BOX__POLICY_FIELD__INIT;
	fld.name = "path";
	fld.value = &val;
	Box__PolicyField *flds[] = { &fld };
	Box__DecideRequest dr = BOX__DECIDE_REQUEST__INIT;
	dr.action = "fs:read";
	dr.input = flds;
	dr.n_input = 1;
	struct captured big = { .len = 0 };
	CHECK_INT(box_ipc_pack(ALL, BOX__MSG_TYPE__MSG_DECIDE_REQUEST, 7, &dr.base, NULL, 0, capture,
			       &big),
		  0);
	size_t nbig;
	_cleanup_free_ uint8_t *wbig = env_msg(BOX__MSG_TYPE__MSG_DECIDE_REQUEST, 7, &dr.base, &nbig);
	CHECK(big.len == nbig && nbig > 200 && memcmp(big.buf, wbig, nbig) == 0);
	check_twins(BOX_IPC_VERSION, BOX__MSG_TYPE__MSG_DECIDE_REQUEST, 7, &dr.base, NULL, 0, 1);
	Box__PsRequest ps;
	box__ps_request__init(&ps);
	struct captured empty = { .len = 0 };
	CHECK_INT(box_ipc_pack(ALL, BOX__MSG_TYPE__MSG_PS_REQUEST, 9, &ps.base, NULL, 0, capture, &empty),
		  0);
	size_t nempty;
	_cleanup_free_ uint8_t *wempty = env_msg(BOX__MSG_TYPE__MSG_PS_REQUEST, 9, &ps.base, &nempty);
	CHECK(empty.len == nempty && memcmp(empty.buf, wempty, nempty) == 0);

	/* Read in place or through protobuf-c, every envelope ends the same way. */
	st.box = "demo";
	uint32_t only_ps[] = { BOX__MSG_TYPE__MSG_PS_REQUEST };
	for (size_t i = 0; i < ELEMENTSOF(rids); i++)
		check_twins(BOX_IPC_VERSION, BOX__MSG_TYPE__MSG_STOP_REQUEST, rids[i], &st.base,
			    NULL, 0, 1);
	check_twins(BOX_IPC_VERSION, BOX__MSG_TYPE__MSG_PS_REQUEST, 3, &ps.base, NULL, 0, 1);
	check_twins(2, BOX__MSG_TYPE__MSG_STOP_REQUEST, 1, &st.base, NULL, 0, -EPROTONOSUPPORT);
	check_twins(BOX_IPC_VERSION, 1000, 1, &st.base, NULL, 0, -EBADMSG);
	check_twins(BOX_IPC_VERSION, BOX__MSG_TYPE__MSG_INVALID, 1, &st.base, NULL, 0, -EBADMSG);
	check_twins(BOX_IPC_VERSION, BOX__MSG_TYPE__MSG_STOP_REQUEST, 1, &st.base, only_ps, 1,
		    -EPERM);
	/* A PsRequest sent as a StopRequest lacks the required field either way. */
	check_twins(BOX_IPC_VERSION, BOX__MSG_TYPE__MSG_STOP_REQUEST, 1, &ps.base, NULL, 0,
		    -EBADMSG);

	/* A varint padded to two bytes (0x81 0x00 for 1) is valid protobuf: slow path, same. */
	size_t n;
	_cleanup_free_ uint8_t *canon = env_msg(BOX__MSG_TYPE__MSG_STOP_REQUEST, 5, &st.base, &n);
	_cleanup_free_ uint8_t *padded = malloc(n + 1);
	padded[0] = canon[0];
	padded[1] = 0x81;
	padded[2] = 0x00;
	memcpy(padded + 3, canon + 2, n - 2);
	struct box_ipc_msg got = BOX_IPC_MSG_INIT;
	CHECK_INT(feed1(padded, n + 1, &got), 1);
	CHECK(got.request_id == 5 && got.type == BOX__MSG_TYPE__MSG_STOP_REQUEST);
	box_ipc_msg_done(&got);
	/* A payload length that runs past the packet, or stops short of it. */
	canon[n - (1 + strlen("demo")) - 1 - 1] += 1; /* the outer length of the payload */
	CHECK(feed1(canon, n, &got) < 0);
	canon[n - (1 + strlen("demo")) - 1 - 1] -= 2;
	CHECK(feed1(canon, n, &got) < 0);
}

static void
test_channel_allow_list(void)
{
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *c = box_ipc_chan_new(-1, ALL, 0);
	struct box_ipc_msg got = BOX_IPC_MSG_INIT;
	uint32_t allowed[] = { BOX__MSG_TYPE__MSG_STOP_REQUEST };
	CHECK_INT(box_ipc_chan_allow(c, allowed, 1), 0);
	Box__PsRequest ps;
	box__ps_request__init(&ps);
	size_t len;
	_cleanup_free_ uint8_t *pkt = env_msg(BOX__MSG_TYPE__MSG_PS_REQUEST, 1, &ps.base, &len);
	CHECK_INT(box_ipc_chan_feed(c, pkt, len, NULL, 0, &got), -EPERM);
	Box__StopRequest st;
	box__stop_request__init(&st);
	st.box = "demo";
	_cleanup_free_ uint8_t *sp = env_msg(BOX__MSG_TYPE__MSG_STOP_REQUEST, 1, &st.base, &len);
	CHECK_INT(box_ipc_chan_feed(c, sp, len, NULL, 0, &got), 1);
	box_ipc_msg_done(&got);
}

static int64_t
mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A blocking fd waits in recvmsg under SO_RCVTIMEO: the timeout, then forever. */
static void
test_recv_wait_blocking(void)
{
	int sv[2];
	CHECK_INT(box_ipc_socketpair(sv, false), 0);
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *c = box_ipc_chan_new(sv[1], ALL, 0);
	struct box_ipc_msg got = BOX_IPC_MSG_INIT;
	int64_t t0 = mono_ms();
	CHECK_INT(box_ipc_recv_wait(c, &got, 60), -ETIMEDOUT);
	int64_t took = mono_ms() - t0;
	CHECK(took >= 50 && took < 2000);
	/* Then no timeout at all (-1): a message sent a little later still arrives. */
	pid_t pid = fork();
	if (pid == 0) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		Box__StopRequest st;
		box__stop_request__init(&st);
		st.box = "demo";
		_exit(send_all(sv[0], BOX__MSG_TYPE__MSG_STOP_REQUEST, 3, &st.base, NULL, 0) ? 1
												: 0);
	}
	CHECK_INT(box_ipc_recv_wait(c, &got, -1), 1);
	CHECK_INT(got.request_id, 3);
	box_ipc_msg_done(&got);
	int status = -1;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* And the peer's close ends the wait. */
	close(sv[0]);
	CHECK_INT(box_ipc_recv_wait(c, &got, 5000), -ECONNRESET);
	close(sv[1]);
}

static void
test_peer_close(void)
{
	int sv[2];
	CHECK_INT(box_ipc_socketpair(sv, true), 0);
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *c = box_ipc_chan_new(sv[1], ALL, 0);
	struct box_ipc_msg got = BOX_IPC_MSG_INIT;
	CHECK_INT(box_ipc_recv(c, &got), -EAGAIN);
	CHECK_INT(box_ipc_recv_wait(c, &got, 20), -ETIMEDOUT);
	close(sv[0]);
	CHECK_INT(box_ipc_recv(c, &got), -ECONNRESET);
	close(sv[1]);

	/*
	 * A peer that sends its last word and closes with ours unread resets us: its word is
	 * still read first, then the reset (the kernel reports the reset before the packet).
	 */
	CHECK_INT(box_ipc_socketpair(sv, false), 0);
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *c2 = box_ipc_chan_new(sv[1], ALL, 0);
	Box__StopRequest st;
	box__stop_request__init(&st);
	st.box = "demo";
	CHECK_INT(send_all(sv[0], BOX__MSG_TYPE__MSG_STOP_REQUEST, 7, &st.base, NULL, 0), 0);
	CHECK_INT(send_all(sv[1], BOX__MSG_TYPE__MSG_STOP_REQUEST, 8, &st.base, NULL, 0), 0);
	close(sv[0]);
	CHECK_INT(box_ipc_recv(c2, &got), 1);
	CHECK_INT(got.request_id, 7);
	box_ipc_msg_done(&got);
	CHECK_INT(box_ipc_recv(c2, &got), -ECONNRESET);
	close(sv[1]);

	struct ucred uc;
	CHECK_INT(box_ipc_socketpair(sv, false), 0);
	CHECK_INT(box_ipc_peercred(sv[0], &uc), 0);
	CHECK_INT(uc.pid, getpid());
	CHECK_INT(uc.uid, getuid());
	CHECK(fcntl(sv[0], F_GETFD) & FD_CLOEXEC);
	close(sv[0]);
	close(sv[1]);
}

/* ---- reassembly -------------------------------------------------------- */

/* A packed CheckReply with `n` disclosure lines, used as a fragmented body. */
static uint8_t *
big_check_reply(unsigned n, size_t *len)
{
	Box__CheckReply cr;
	box__check_reply__init(&cr);
	cr.status = BOX__REPLY_STATUS__REPLY_OK;
	char **lines = calloc(n, sizeof(char *));
	for (unsigned i = 0; i < n; i++)
		lines[i] = "  read        /home/me/project/some/longer/path/for/volume";
	cr.disclosure = lines;
	cr.n_disclosure = n;
	uint8_t *b = pack(&cr.base, len);
	free(lines);
	return b;
}

static int
feed_frag(struct box_ipc_chan *c, uint64_t rid, uint64_t sid, uint32_t seq, bool last,
	  int64_t total, const uint8_t *d, size_t dlen, struct box_ipc_msg *got)
{
	size_t len;
	_cleanup_free_ uint8_t *pkt = env_frag(BOX__MSG_TYPE__MSG_CHECK_REPLY, rid, sid, seq, last,
					       total, d, dlen, &len);
	return box_ipc_chan_feed(c, pkt, len, NULL, 0, got);
}

static void
test_reassembly_in_order_and_interleaved(void)
{
	size_t blen;
	_cleanup_free_ uint8_t *body = big_check_reply(3000, &blen);
	struct box_ipc_msg got = BOX_IPC_MSG_INIT;
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *c = box_ipc_chan_new(-1, ALL, 0);
	CHECK(blen > 2 * 60000);

	/* Two streams interleaved, chunks of 60000; both complete. */
	size_t off1 = 0, off2 = 0;
	uint32_t seq1 = 0, seq2 = 0;
	int done = 0;
	while (off1 < blen || off2 < blen) {
		if (off1 < blen) {
			size_t n = blen - off1 < 60000 ? blen - off1 : 60000;
			int r = feed_frag(c, 1, 11, seq1, off1 + n == blen,
					  seq1 == 0 ? (int64_t)blen : -1, body + off1, n, &got);
			CHECK(r >= 0);
			if (r == 1) {
				CHECK_INT(got.request_id, 1);
				done++;
				box_ipc_msg_done(&got);
			}
			off1 += n;
			seq1++;
		}
		if (off2 < blen) {
			size_t n = blen - off2 < 50000 ? blen - off2 : 50000;
			int r = feed_frag(c, 2, 22, seq2, off2 + n == blen,
					  seq2 == 0 ? (int64_t)blen : -1, body + off2, n, &got);
			CHECK(r >= 0);
			if (r == 1) {
				CHECK_INT(got.request_id, 2);
				CHECK_INT(((Box__CheckReply *)got.msg)->n_disclosure, 3000);
				done++;
				box_ipc_msg_done(&got);
			}
			off2 += n;
			seq2++;
		}
	}
	CHECK_INT(done, 2);
	CHECK_INT(box_ipc_chan_open_streams(c), 0);
}

static void
test_reassembly_refusals(void)
{
	size_t blen;
	_cleanup_free_ uint8_t *body = big_check_reply(3000, &blen);
	struct box_ipc_msg got = BOX_IPC_MSG_INIT;
	struct box_ipc_chan *c;

	/* Out of order: seq 2 after seq 0. */
	c = box_ipc_chan_new(-1, ALL, 0);
	CHECK_INT(feed_frag(c, 1, 5, 0, false, (int64_t)blen, body, 1000, &got), 0);
	CHECK_INT(feed_frag(c, 1, 5, 2, false, -1, body + 1000, 1000, &got), -EBADMSG);
	c = box_ipc_chan_free(c);
	/* A stream that does not start at seq 0. */
	c = box_ipc_chan_new(-1, ALL, 0);
	CHECK_INT(feed_frag(c, 1, 5, 1, false, (int64_t)blen, body, 1000, &got), -EBADMSG);
	c = box_ipc_chan_free(c);
	/* seq 0 without its total length, and a later fragment repeating it. */
	c = box_ipc_chan_new(-1, ALL, 0);
	CHECK_INT(feed_frag(c, 1, 5, 0, false, -1, body, 1000, &got), -EBADMSG);
	c = box_ipc_chan_free(c);
	c = box_ipc_chan_new(-1, ALL, 0);
	CHECK_INT(feed_frag(c, 1, 5, 0, false, (int64_t)blen, body, 1000, &got), 0);
	CHECK_INT(feed_frag(c, 1, 5, 1, false, (int64_t)blen, body, 1000, &got), -EBADMSG);
	c = box_ipc_chan_free(c);
	/* The same stream restarted (seq 0 again) while open. */
	c = box_ipc_chan_new(-1, ALL, 0);
	CHECK_INT(feed_frag(c, 1, 5, 0, false, (int64_t)blen, body, 1000, &got), 0);
	CHECK_INT(feed_frag(c, 1, 5, 0, false, (int64_t)blen, body, 1000, &got), -EBADMSG);
	c = box_ipc_chan_free(c);
	/* A stream id switching request id or type midway. */
	c = box_ipc_chan_new(-1, ALL, 0);
	CHECK_INT(feed_frag(c, 1, 5, 0, false, (int64_t)blen, body, 1000, &got), 0);
	CHECK_INT(feed_frag(c, 2, 5, 1, false, -1, body + 1000, 1000, &got), -EBADMSG);
	c = box_ipc_chan_free(c);
	/* Over the type's cap, declared up front: refused before allocation. */
	c = box_ipc_chan_new(-1, ALL, 0);
	CHECK_INT(feed_frag(c, 1, 5, 0, false, (int64_t)(16u << 20) + 1, body, 1000, &got),
		  -EMSGSIZE);
	CHECK_INT(feed_frag(c, 1, 6, 0, false, INT64_MAX, body, 1000, &got), -EMSGSIZE);
	c = box_ipc_chan_free(c);
	/* More data than declared. */
	c = box_ipc_chan_new(-1, ALL, 0);
	CHECK_INT(feed_frag(c, 1, 5, 0, false, 1500, body, 1000, &got), 0);
	CHECK_INT(feed_frag(c, 1, 5, 1, false, -1, body + 1000, 1000, &got), -EMSGSIZE);
	c = box_ipc_chan_free(c);
	/* Last fragment before the declared length: missing data. */
	c = box_ipc_chan_new(-1, ALL, 0);
	CHECK_INT(feed_frag(c, 1, 5, 0, false, 3000, body, 1000, &got), 0);
	CHECK_INT(feed_frag(c, 1, 5, 1, true, -1, body + 1000, 1000, &got), -EBADMSG);
	c = box_ipc_chan_free(c);
	/* Empty non-last fragments cannot spin a stream forever. */
	c = box_ipc_chan_new(-1, ALL, 0);
	CHECK_INT(feed_frag(c, 1, 5, 0, false, 3000, body, 0, &got), -EBADMSG);
	c = box_ipc_chan_free(c);
	/* Stream id 0 is not a stream. */
	c = box_ipc_chan_new(-1, ALL, 0);
	CHECK_INT(feed_frag(c, 1, 0, 0, true, 10, body, 10, &got), -EBADMSG);
	c = box_ipc_chan_free(c);
	/* Too many open streams. */
	c = box_ipc_chan_new(-1, ALL, 0);
	for (uint64_t s = 1; s <= BOX_IPC_MAX_STREAMS; s++)
		CHECK_INT(feed_frag(c, 1, s, 0, false, (int64_t)blen, body, 1000, &got), 0);
	CHECK_INT(box_ipc_chan_open_streams(c), BOX_IPC_MAX_STREAMS);
	CHECK_INT(feed_frag(c, 1, 99, 0, false, (int64_t)blen, body, 1000, &got), -ENOBUFS);
	c = box_ipc_chan_free(c);
	/* Several streams at the type's cap at once. */
	c = box_ipc_chan_new(-1, ALL, 0);
	for (uint64_t s = 1; s <= 3; s++) {
		size_t len;
		_cleanup_free_ uint8_t *pkt = env_frag(BOX__MSG_TYPE__MSG_RUN_REPLY, 1, s, 0, false,
						       16u << 20, body, 1000, &len);
		int r = box_ipc_chan_feed(c, pkt, len, NULL, 0, &got);
		CHECK_INT(r, 0); /* 3 x 16 MiB stays inside BOX_IPC_REASM_BUDGET */
	}
	c = box_ipc_chan_free(c);
	/* A type that is never fragmented. */
	c = box_ipc_chan_new(-1, ALL, 0);
	{
		size_t len;
		_cleanup_free_ uint8_t *pkt = env_frag(BOX__MSG_TYPE__MSG_STOP_REQUEST, 1, 5, 0, true,
						       4, body, 4, &len);
		CHECK_INT(box_ipc_chan_feed(c, pkt, len, NULL, 0, &got), -EBADMSG);
	}
	c = box_ipc_chan_free(c);
	/* A finished stream whose bytes are not a valid message. */
	c = box_ipc_chan_new(-1, ALL, 0);
	CHECK_INT(feed_frag(c, 1, 5, 0, true, 4, (const uint8_t *)"\xff\xff\xff\xff", 4, &got),
		  -EBADMSG);
	CHECK_INT(box_ipc_chan_open_streams(c), 0);
	c = box_ipc_chan_free(c);
}

/* fds ride on the last fragment only; a peer that closes mid-stream is an error. */
static void
test_reassembly_fds_and_missing_last(void)
{
	int sv[2], p[2];
	CHECK_INT(box_ipc_socketpair(sv, true), 0);
	CHECK_INT(pipe2(p, O_CLOEXEC), 0);
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *c = box_ipc_chan_new(sv[1], ALL, 0);
	struct box_ipc_msg got = BOX_IPC_MSG_INIT;
	int before = count_fds();
	size_t blen, len;
	_cleanup_free_ uint8_t *body = big_check_reply(100, &blen);

	_cleanup_free_ uint8_t *f0 = env_frag(BOX__MSG_TYPE__MSG_RUN_REQUEST, 1, 5, 0, false, 5000,
					      body, 1000, &len);
	CHECK_INT(raw_send(sv[0], f0, len, p, 1), 0);
	CHECK_INT(box_ipc_recv(c, &got), -EBADMSG);
	CHECK_INT(count_fds(), before);
	close(sv[0]);
	close(sv[1]);

	/* Missing last: the stream is open when the peer goes away. */
	CHECK_INT(box_ipc_socketpair(sv, true), 0);
	struct box_ipc_chan *c2 = box_ipc_chan_new(sv[1], ALL, 0);
	_cleanup_free_ uint8_t *g0 = env_frag(BOX__MSG_TYPE__MSG_CHECK_REPLY, 1, 5, 0, false,
					      (int64_t)blen, body, 1000, &len);
	CHECK_INT(raw_send(sv[0], g0, len, NULL, 0), 0);
	CHECK_INT(box_ipc_recv(c2, &got), 0);
	CHECK_INT(box_ipc_chan_open_streams(c2), 1);
	close(sv[0]);
	CHECK_INT(box_ipc_recv(c2, &got), -EPROTO);
	box_ipc_chan_free(c2);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
}

/* ---- decode caps and validators ---------------------------------------- */

/* Many minimal tools: protobuf-c would allocate far more than the input. */
static void
test_decode_memory_cap(void)
{
	/* CfgTool{name:"", line:0, command:{line:0}} = 0a00 1000 1a02 1000 */
	static const uint8_t tool[] = { 0x22, 0x08, 0x0a, 0x00, 0x10, 0x00,
					0x1a, 0x02, 0x10, 0x00 };
	/* A valid spec first: protobuf-c checks required fields before it
	 * allocates the repeated arrays. */
	size_t base_len;
	_cleanup_free_ uint8_t *base = pack(&build_spec()->base, &base_len);
	size_t n = 5000, slen = base_len + n * sizeof(tool);
	uint8_t *spec = malloc(slen);
	memcpy(spec, base, base_len);
	for (size_t i = 0; i < n; i++)
		memcpy(spec + base_len + i * sizeof(tool), tool, sizeof(tool));
	/* CheckRequest{spec: …}: tag 0x0a + varint length. */
	uint8_t *req = malloc(slen + 8);
	size_t k = 0;
	req[k++] = 0x0a;
	for (size_t v = slen; ; v >>= 7) {
		req[k++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		if (v <= 0x7f)
			break;
	}
	memcpy(req + k, spec, slen);
	ProtobufCMessage *m = NULL;
	CHECK_INT(box_ipc_decode(ALL, BOX__MSG_TYPE__MSG_CHECK_REQUEST, req, k + slen, &m), -EMSGSIZE);
	CHECK(m == NULL);
	/* Over the type's cap before anything is decoded. */
	CHECK_INT(box_ipc_decode(ALL, BOX__MSG_TYPE__MSG_STOP_REQUEST, req, 257, &m), -EMSGSIZE);
	free(req);
	free(spec);
}

typedef void (*mutate_fn)(Box__BoxSpec *sp);

static void m_ok(Box__BoxSpec *sp) { (void)sp; }
static void m_relative_path(Box__BoxSpec *sp) { sp->agent->filesystem->read[0]->path = "home/me"; }
static void m_dotdot(Box__BoxSpec *sp) { sp->agent->filesystem->read[0]->path = "/home/me/../x"; }
static void m_trailing(Box__BoxSpec *sp) { sp->agent->filesystem->deny[0]->path = "/home/me/"; }
static void m_glob(Box__BoxSpec *sp) { sp->agent->workspace->path = "/home/*"; }
static void m_bad_name(Box__BoxSpec *sp) { sp->box->name->value = "de mo"; }
static void m_long_name(Box__BoxSpec *sp) { sp->box->name->value = "abcdefghijklmnopqrstuvwxyz0123456"; }
static void m_no_userns(Box__BoxSpec *sp) { S.require[0] = BOX__LAYER__LAYER_SECCOMP; (void)sp; }
static void m_dup_layer(Box__BoxSpec *sp) { S.require[3] = BOX__LAYER__LAYER_NETNS; (void)sp; }
static void m_line0(Box__BoxSpec *sp) { sp->agent->command->line = 0; }
static void m_file_idx(Box__BoxSpec *sp) { sp->agent->workspace->has_file = 1; sp->agent->workspace->file = 2; }
static void m_argv0_rel(Box__BoxSpec *sp) { sp->agent->command->argv[0] = "bin/agent"; }
static void m_argv_empty(Box__BoxSpec *sp) { sp->agent->command->n_argv = 0; }
static void m_env_name(Box__BoxSpec *sp) { sp->agent->env->vars[0]->name = "1PATH"; }
static void m_env_dup(Box__BoxSpec *sp) { sp->agent->env->vars[1]->name = "PATH"; }
static void m_tool_exec(Box__BoxSpec *sp) { sp->tools[0]->filesystem->exec = S.agent_exec; sp->tools[0]->filesystem->n_exec = 1; }
static void m_pids(Box__BoxSpec *sp) { sp->agent->pids_max->value = 0; }
static void m_port(Box__BoxSpec *sp) { sp->gateway->port->value = 70000; }
static void m_secret_ref(Box__BoxSpec *sp) { sp->egress[0]->secret->ref = "vault://x"; }
static void m_file_secret_novar(Box__BoxSpec *sp) { sp->egress[0]->secret->ref = "file:///home/me/k"; sp->egress[0]->variable = NULL; }
static void m_query_noparam(Box__BoxSpec *sp) { sp->egress[0]->placement = BOX__PLACEMENT__PLACEMENT_QUERY_PARAM; }
static void m_header_token(Box__BoxSpec *sp) { sp->egress[0]->header->value = "x api key"; }
static void m_no_dest(Box__BoxSpec *sp) { sp->egress[0]->n_destinations = 0; }
static void m_policy_no_text(Box__BoxSpec *sp) { sp->has_policy_text = 0; }
static void m_mcp_http_cmd(Box__BoxSpec *sp) { sp->mcp[1]->command = sp->mcp[0]->command; }
static void m_mcp_url(Box__BoxSpec *sp) { sp->mcp[1]->url->value = "http://mcp.example.com"; }
static void m_mcp_alias(Box__BoxSpec *sp) { sp->mcp[0]->alias->value = ".."; }
static void m_mcp_frame(Box__BoxSpec *sp) { sp->mcp[0]->max_frame->value = (64ull << 20) + 1; }
static void m_dup_tool(Box__BoxSpec *sp) { sp->mcp[1]->name = "files"; }
static void m_ca_no_pem(Box__BoxSpec *sp) { sp->gateway->has_upstream_ca_pem = 0; }
static void m_caller_env(Box__BoxSpec *sp) { sp->caller->inherit[0]->name = "LD_PRELOAD"; }
static void m_caller_cwd(Box__BoxSpec *sp) { sp->caller->cwd = "."; }
static void m_no_files(Box__BoxSpec *sp) { sp->n_files = 0; }
static void m_ctl_char(Box__BoxSpec *sp) { sp->egress[0]->destinations[0]->value = "api\n.x"; }

static void
test_spec_validators(void)
{
	static const struct {
		const char *name;
		mutate_fn fn;
		int want;
	} cases[] = {
		{ "ok", m_ok, 0 },
		{ "relative path", m_relative_path, -EINVAL },
		{ "dotdot", m_dotdot, -EINVAL },
		{ "trailing slash", m_trailing, -EINVAL },
		{ "glob", m_glob, -EINVAL },
		{ "bad name", m_bad_name, -EINVAL },
		{ "long name", m_long_name, -E2BIG },
		{ "require without userns", m_no_userns, -EINVAL },
		{ "duplicate layer", m_dup_layer, -EINVAL },
		{ "line 0", m_line0, -ERANGE },
		{ "file index", m_file_idx, -ERANGE },
		{ "argv0 relative", m_argv0_rel, -EINVAL },
		{ "argv empty", m_argv_empty, -EINVAL },
		{ "env name", m_env_name, -EINVAL },
		{ "env duplicate", m_env_dup, -EINVAL },
		{ "tool exec list", m_tool_exec, -EINVAL },
		{ "pids_max 0", m_pids, -ERANGE },
		{ "port", m_port, -ERANGE },
		{ "secret ref", m_secret_ref, -EINVAL },
		{ "file secret without variable", m_file_secret_novar, -EINVAL },
		{ "query_param without param", m_query_noparam, -EINVAL },
		{ "header token", m_header_token, -EINVAL },
		{ "no destinations", m_no_dest, -EINVAL },
		{ "policy without text", m_policy_no_text, -EINVAL },
		{ "http mcp with command", m_mcp_http_cmd, -EINVAL },
		{ "mcp url not https", m_mcp_url, -EINVAL },
		{ "mcp alias ..", m_mcp_alias, -EINVAL },
		{ "mcp max_frame", m_mcp_frame, -ERANGE },
		{ "duplicate mcp name", m_dup_tool, -EINVAL },
		{ "upstream_ca without pem", m_ca_no_pem, -EINVAL },
		{ "caller inherit", m_caller_env, -EINVAL },
		{ "caller cwd", m_caller_cwd, -EINVAL },
		{ "no files", m_no_files, -EINVAL },
		{ "control char", m_ctl_char, -EINVAL },
	};
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		Box__CheckRequest chk;
		box__check_request__init(&chk);
		chk.spec = build_spec();
		cases[i].fn(chk.spec);
		size_t plen;
		_cleanup_free_ uint8_t *p = pack(&chk.base, &plen);
		ProtobufCMessage *m = NULL;
		int r = box_ipc_decode(ALL, BOX__MSG_TYPE__MSG_CHECK_REQUEST, p, plen, &m);
		if (r != cases[i].want)
			printf("#   case '%s': %d, expected %d\n", cases[i].name, r, cases[i].want);
		CHECK_INT(r, cases[i].want);
		box_msg_free(m);
	}
}

static void
test_reply_validators(void)
{
	Box__RunExit ex;
	box__run_exit__init(&ex);
	ex.box_id = "0123456789ab";
	CHECK_INT(box_validate_run_exit(&ex), -EINVAL); /* neither status nor signal */
	ex.has_exit_status = 1;
	ex.exit_status = 256;
	CHECK_INT(box_validate_run_exit(&ex), -ERANGE);
	ex.exit_status = 3;
	CHECK_INT(box_validate_run_exit(&ex), 0);
	ex.has_signal = 1;
	ex.signal = 9;
	CHECK_INT(box_validate_run_exit(&ex), -EINVAL); /* both */
	ex.box_id = "0123456789AB";
	CHECK_INT(box_validate_run_exit(&ex), -EINVAL);
	/* oom_killed: with how the agent ended, never alone (with only an error). */
	ex.box_id = "0123456789ab";
	ex.has_exit_status = 0;
	ex.has_oom_killed = 1;
	ex.oom_killed = 1;
	CHECK_INT(box_validate_run_exit(&ex), 0);
	ex.has_signal = 0;
	ex.error = "box-policyd is gone";
	CHECK_INT(box_validate_run_exit(&ex), -EINVAL);
	ex.oom_killed = 0;
	CHECK_INT(box_validate_run_exit(&ex), 0);
	ex.error = NULL;
	ex.has_oom_killed = 0;

	Box__RunControl ctl;
	box__run_control__init(&ctl);
	ctl.box_id = "0123456789ab";
	ctl.signal = SIGKILL;
	CHECK_INT(box_validate_run_control(&ctl), -EINVAL);
	ctl.signal = SIGHUP;
	CHECK_INT(box_validate_run_control(&ctl), 0);

	Box__RunRequest run;
	box__run_request__init(&run);
	run.spec = build_spec();
	run.has_n_stdio_fds = 1;
	run.n_stdio_fds = 2;
	CHECK_INT(box_validate_run_request(&run), -EINVAL);
	run.n_stdio_fds = 3;
	run.has_stdio_tty = 1;
	run.stdio_tty = 1; /* a terminal and three fds: one too many */
	CHECK_INT(box_validate_run_request(&run), -EINVAL);
	run.stdio_tty = 8; /* only fds 0-2 */
	run.n_stdio_fds = 0;
	CHECK_INT(box_validate_run_request(&run), -EINVAL);
	run.stdio_tty = 0;
	run.has_rows = run.has_cols = 1; /* a window size without a terminal */
	run.rows = 24;
	run.cols = 80;
	run.n_stdio_fds = 3;
	CHECK_INT(box_validate_run_request(&run), -EINVAL);
	run.has_rows = run.has_cols = 0;
	run.has_detach = run.detach = 1;
	CHECK_INT(box_validate_run_request(&run), -EINVAL);
	run.n_stdio_fds = 0;
	run.stdio_tty = 2; /* --detach never gets a terminal */
	CHECK_INT(box_validate_run_request(&run), -EINVAL);
	run.stdio_tty = 0;
	run.n_stdio_fds = 3;

	Box__RunReply rr;
	box__run_reply__init(&rr);
	rr.status = BOX__REPLY_STATUS__REPLY_OK;
	CHECK_INT(box_validate_run_reply(&rr), -EINVAL); /* OK needs id and pid */
	static char *bad_lines[] = { "line\033[2J" };
	rr.status = BOX__REPLY_STATUS__REPLY_REFUSED;
	rr.disclosure = bad_lines;
	rr.n_disclosure = 1;
	CHECK_INT(box_validate_run_reply(&rr), -EINVAL);
	rr.n_disclosure = 0;
	rr.has_pty = rr.pty = 1; /* a pty master only on a started box */
	CHECK_INT(box_validate_run_reply(&rr), -EINVAL);
	rr.status = BOX__REPLY_STATUS__REPLY_OK;
	rr.box_id = "0123456789ab";
	rr.has_pid = 1;
	rr.pid = 5;
	CHECK_INT(box_validate_run_reply(&rr), 0);
	CHECK_INT(box_validate_fd_count(&rr.base, 1), 0);
	CHECK_INT(box_validate_fd_count(&rr.base, 0), -EBADMSG); /* pty says one fd */
	rr.pty = 0;
	CHECK_INT(box_validate_fd_count(&rr.base, 1), -EBADMSG);
	rr.has_pty = 0;
	rr.box_id = NULL;
	rr.has_pid = 0;
	rr.status = BOX__REPLY_STATUS__REPLY_REFUSED;
	Box__RunStarting rs;
	box__run_starting__init(&rs);
	rs.disclosure = bad_lines; /* one line each, no escape sequence */
	rs.n_disclosure = 1;
	CHECK_INT(box_validate_run_starting(&rs), -EINVAL);

	Box__LogReply lr;
	box__log_reply__init(&lr);
	lr.status = BOX__REPLY_STATUS__REPLY_NOT_FOUND;
	lr.has_has_current = lr.has_current = 1;
	CHECK_INT(box_validate_log_reply(&lr), -EINVAL);
	Box__McpPinsRequest mq;
	box__mcp_pins_request__init(&mq);
	mq.box = "../x";
	CHECK_INT(box_validate_mcp_pins_request(&mq), -EINVAL);
	mq.box = "demo";
	CHECK_INT(box_validate_mcp_pins_request(&mq), 0);
	Box__McpPinsReply mr;
	box__mcp_pins_reply__init(&mr);
	mr.status = BOX__REPLY_STATUS__REPLY_OK; /* OK names the box */
	CHECK_INT(box_validate_mcp_pins_reply(&mr), -EINVAL);
	mr.box_id = "0123456789ab";
	mr.name = "demo";
	CHECK_INT(box_validate_mcp_pins_reply(&mr), 0);
	mr.error = "line\nbreak";
	CHECK(box_validate_mcp_pins_reply(&mr) < 0);
	/* OK carries exactly one fd; another status none. */
	mr.error = NULL;
	CHECK_INT(box_validate_fd_count(&mr.base, 0), -EBADMSG);
	CHECK_INT(box_validate_fd_count(&mr.base, 1), 0);
	mr.status = BOX__REPLY_STATUS__REPLY_FAILED;
	CHECK_INT(box_validate_fd_count(&mr.base, 1), -EBADMSG);
	/* AttachRequest: a box name or id, both sizes or neither, a TERM of safe characters. */
	Box__AttachRequest aq;
	box__attach_request__init(&aq);
	aq.box = "../x";
	CHECK_INT(box_validate_attach_request(&aq), -EINVAL);
	aq.box = "0123456789ab";
	CHECK_INT(box_validate_attach_request(&aq), 0);
	aq.has_rows = 1;
	aq.rows = 24;
	CHECK_INT(box_validate_attach_request(&aq), -EINVAL);
	aq.has_cols = 1;
	aq.cols = 70000;
	CHECK_INT(box_validate_attach_request(&aq), -ERANGE);
	aq.cols = 80;
	aq.rows = 0;
	CHECK_INT(box_validate_attach_request(&aq), -ERANGE);
	aq.rows = 24;
	CHECK_INT(box_validate_attach_request(&aq), 0);
	aq.term = "xterm\x1b]0;pwned\x07";
	CHECK_INT(box_validate_attach_request(&aq), -EINVAL);
	aq.term = "";
	CHECK_INT(box_validate_attach_request(&aq), -EINVAL);
	aq.term = "vt100";
	CHECK_INT(box_validate_attach_request(&aq), 0);
	Box__AttachReply ar;
	box__attach_reply__init(&ar);
	ar.status = BOX__REPLY_STATUS__REPLY_OK; /* OK names the box */
	CHECK_INT(box_validate_attach_reply(&ar), -EINVAL);
	ar.box_id = "0123456789ab";
	ar.name = "demo";
	CHECK_INT(box_validate_attach_reply(&ar), 0);
	ar.error = "x"; /* OK with an error */
	CHECK_INT(box_validate_attach_reply(&ar), -EINVAL);
	ar.status = BOX__REPLY_STATUS__REPLY_DENIED;
	CHECK_INT(box_validate_attach_reply(&ar), 0);
	ar.error = NULL; /* a refusal says why */
	CHECK_INT(box_validate_attach_reply(&ar), -EINVAL);
	ar.error = "line\nbreak";
	CHECK(box_validate_attach_reply(&ar) < 0);
	/* OK carries exactly two fds (master, end pipe); another status none. */
	ar.error = "denied";
	CHECK_INT(box_validate_fd_count(&ar.base, 0), 0);
	CHECK_INT(box_validate_fd_count(&ar.base, 2), -EBADMSG);
	ar.status = BOX__REPLY_STATUS__REPLY_OK;
	ar.error = NULL;
	CHECK_INT(box_validate_fd_count(&ar.base, 2), 0);
	CHECK_INT(box_validate_fd_count(&ar.base, 1), -EBADMSG);
	CHECK(box_valid_term("xterm-256color"));
	CHECK(!box_valid_term("x/y"));
	Box__StopRequest st;
	box__stop_request__init(&st);
	st.box = "../x";
	CHECK_INT(box_validate_stop_request(&st), -EINVAL);
	Box__ErrorReply er;
	box__error_reply__init(&er);
	er.errno_value = 0;
	er.message = "x";
	CHECK_INT(box_validate_error_reply(&er), -ERANGE);

	CHECK(box_valid_box_id("0123456789ab"));
	CHECK(!box_valid_box_id("0123456789a"));
	CHECK(box_valid_env_name("_A1"));
	CHECK(!box_valid_env_name("A-B"));
	CHECK(box_valid_path("/"));
	CHECK(!box_valid_path(""));
}

static void
test_redact(void)
{
	Box__BoxSpec *sp = build_spec();
	uint8_t copy[sizeof(secret_bytes)];
	memcpy(copy, secret_bytes, sizeof(copy));
	CHECK(sp->egress[0]->secret->has_secret_value);
	box_spec_redact(sp);
	CHECK(!sp->egress[0]->secret->has_secret_value);
	CHECK(!sp->mcp[1]->secret->has_secret_value);
	CHECK(memcmp(secret_bytes, copy, 4) != 0); /* wiped in place */
	size_t len;
	_cleanup_free_ uint8_t *p = pack(&sp->base, &len);
	CHECK(memmem(p, len, "sk-ant-secret", 13) == NULL);
	CHECK_INT(box_validate_box_spec(sp), 0);
	memcpy(secret_bytes, copy, sizeof(copy));
}


/* ---- libevent glue ----------------------------------------------------- */

struct ev_state {
	struct event_base *base;
	struct box_ipc_event *server, *client;
	int server_msgs, client_msgs, closes;
	int close_error;
	size_t got_policy_len;
	unsigned got_fds;
	bool free_in_callback;
};

static void
server_msg(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata)
{
	struct ev_state *st = userdata;
	st->server_msgs++;
	if (m->type == BOX__MSG_TYPE__MSG_RUN_REQUEST) {
		st->got_policy_len = ((Box__RunRequest *)m->msg)->spec->policy_text.len;
		st->got_fds = m->n_fds;
	}
	if (st->free_in_callback) {
		st->server = box_ipc_event_free(e);
		event_base_loopbreak(st->base);
		return;
	}
	Box__ErrorReply er;
	box__error_reply__init(&er);
	er.errno_value = ENOSYS;
	er.message = "not yet";
	CHECK_INT(box_ipc_event_send(e, BOX__MSG_TYPE__MSG_ERROR_REPLY, m->request_id, &er.base,
				     NULL, 0),
		  0);
}

static void
client_msg(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata)
{
	struct ev_state *st = userdata;
	(void)e;
	st->client_msgs++;
	CHECK_INT(m->type, BOX__MSG_TYPE__MSG_ERROR_REPLY);
	CHECK_INT(m->request_id, 31);
	event_base_loopbreak(st->base);
}

static void
on_close_cb(struct box_ipc_event *e, int error, void *userdata)
{
	struct ev_state *st = userdata;
	st->closes++;
	st->close_error = error;
	if (e == st->server)
		st->server = box_ipc_event_free(e);
	event_base_loopbreak(st->base);
}

static void
test_event_fragmented_exchange(void)
{
	struct ev_state st = { 0 };
	int sv[2];
	int before = count_fds();
	CHECK_INT(box_ipc_socketpair(sv, true), 0);
	st.base = event_base_new();
	st.server = box_ipc_event_new(st.base, sv[1], ALL, 0, server_msg, on_close_cb, &st);
	st.client = box_ipc_event_new(st.base, sv[0], ALL, 0, client_msg, on_close_cb, &st);
	CHECK(st.server && st.client);
	uint32_t allowed[] = { BOX__MSG_TYPE__MSG_RUN_REQUEST };
	CHECK_INT(box_ipc_chan_allow(box_ipc_event_chan(st.server), allowed, 1), 0);

	size_t big = (2u << 20) + 777;
	uint8_t *text = calloc(1, big);
	Box__RunRequest run;
	box__run_request__init(&run);
	run.spec = build_spec();
	run.spec->policy_text.data = text;
	run.spec->policy_text.len = big;
	int p[2];
	CHECK_INT(pipe2(p, O_CLOEXEC), 0);
	int fds[3] = { p[0], p[1], p[1] };
	run.has_n_stdio_fds = 1;
	run.n_stdio_fds = 3;
	CHECK_INT(box_ipc_event_send(st.client, BOX__MSG_TYPE__MSG_RUN_REQUEST, 31, &run.base, fds,
				     3),
		  0);
	/* The socket buffer is far smaller than 2 MiB: most of it is queued. */
	CHECK(box_ipc_event_queued(st.client) > 0);
	free(text);
	close(p[0]);
	close(p[1]);

	event_base_dispatch(st.base);
	CHECK_INT(st.server_msgs, 1);
	CHECK_INT(st.client_msgs, 1);
	CHECK_INT(st.got_policy_len, big);
	CHECK_INT(st.got_fds, 3);
	CHECK_INT(box_ipc_event_queued(st.client), 0);

	/* The server only accepts RunRequest: a PsRequest ends its channel. */
	Box__PsRequest ps;
	box__ps_request__init(&ps);
	CHECK_INT(box_ipc_event_send(st.client, BOX__MSG_TYPE__MSG_PS_REQUEST, 1, &ps.base, NULL,
				     0),
		  0);
	event_base_dispatch(st.base);
	CHECK_INT(st.closes, 1);
	CHECK_INT(st.close_error, -EPERM);
	CHECK(st.server == NULL);

	/* The server is gone: the client sees the close. */
	st.closes = 0;
	event_base_dispatch(st.base);
	CHECK_INT(st.closes, 1);
	CHECK_INT(st.close_error, -ECONNRESET);
	CHECK_INT(box_ipc_event_send(st.client, BOX__MSG_TYPE__MSG_PS_REQUEST, 1, &ps.base, NULL,
				     0),
		  -EPIPE);
	box_ipc_event_free(st.client);
	event_base_free(st.base);
	CHECK_INT(count_fds(), before);
}

static void
test_event_garbage_and_free_in_callback(void)
{
	struct ev_state st = { 0 };
	int sv[2];
	int before = count_fds();
	CHECK_INT(box_ipc_socketpair(sv, true), 0);
	st.base = event_base_new();
	st.server = box_ipc_event_new(st.base, sv[1], ALL, 0, server_msg, on_close_cb, &st);
	CHECK(st.server != NULL);
	CHECK_INT(raw_send(sv[0], "garbage", 7, NULL, 0), 0);
	event_base_dispatch(st.base);
	CHECK_INT(st.closes, 1);
	CHECK_INT(st.close_error, -EBADMSG);
	CHECK(st.server == NULL);
	close(sv[0]);

	/* Free from inside on_msg, with more packets still waiting. */
	CHECK_INT(box_ipc_socketpair(sv, true), 0);
	st = (struct ev_state){ .base = st.base, .free_in_callback = true };
	st.server = box_ipc_event_new(st.base, sv[1], ALL, 0, server_msg, on_close_cb, &st);
	Box__PsRequest ps;
	box__ps_request__init(&ps);
	for (int i = 0; i < 3; i++)
		CHECK_INT(send_all(sv[0], BOX__MSG_TYPE__MSG_PS_REQUEST, (uint64_t)i, &ps.base,
				       NULL, 0),
			  0);
	event_base_dispatch(st.base);
	CHECK_INT(st.server_msgs, 1);
	CHECK(st.server == NULL);
	close(sv[0]);
	event_base_free(st.base);
	CHECK_INT(count_fds(), before);
}

/* A peer that never reads cannot make us buffer without bound. */
static void
test_event_queue_cap(void)
{
	struct ev_state st = { 0 };
	int sv[2];
	CHECK_INT(box_ipc_socketpair(sv, true), 0);
	st.base = event_base_new();
	st.client = box_ipc_event_new(st.base, sv[0], ALL, 0, client_msg, on_close_cb, &st);
	size_t big = 4u << 20;
	uint8_t *text = calloc(1, big);
	Box__CheckRequest chk;
	box__check_request__init(&chk);
	chk.spec = build_spec();
	chk.spec->policy_text.data = text;
	chk.spec->policy_text.len = big;
	int r = 0, sent = 0;
	while (sent < 20 && (r = box_ipc_event_send(st.client, BOX__MSG_TYPE__MSG_CHECK_REQUEST, 1,
						    &chk.base, NULL, 0)) == 0)
		sent++;
	CHECK_INT(r, -ENOBUFS);
	CHECK(sent >= 7 && sent <= 8);
	CHECK(box_ipc_event_queued(st.client) <= BOX_IPC_EVENT_QUEUE_MAX);
	free(text);
	box_ipc_event_free(st.client);
	close(sv[1]);
	event_base_free(st.base);
}

/* Decode every packet waiting on CHAN's socket: their ids go to IDS[*n...], fds counted. */
static void
drain_ids(struct box_ipc_chan *chan, uint64_t *ids, size_t cap, size_t *n, unsigned *fds)
{
	for (;;) {
		struct box_ipc_msg m = BOX_IPC_MSG_INIT;
		int r = box_ipc_recv(chan, &m);
		if (r == -EAGAIN)
			return;
		CHECK_INT(r, 1);
		if (r != 1)
			return;
		if (*n < cap)
			ids[*n] = m.request_id;
		(*n)++;
		*fds += m.n_fds;
		box_ipc_msg_done(&m);
	}
}

/*
 * Sent later: nothing leaves until the end of the loop pass, then all of it in
 * order (fds too); a message sent at once takes what waits before it along,
 * first; more than one sendmmsg holds (200 > 64), and a full socket buffer
 * waits for EV_WRITE without losing or reordering anything.
 */
static void
test_event_send_later(void)
{
	struct ev_state st = { 0 };
	int sv[2];
	int before = count_fds();
	CHECK_INT(box_ipc_socketpair(sv, true), 0);
	st.base = event_base_new();
	st.client = box_ipc_event_new(st.base, sv[0], ALL, 0, client_msg, on_close_cb, &st);
	struct box_ipc_chan *rx = box_ipc_chan_new(sv[1], ALL, 0);
	CHECK(st.client && rx);
	Box__PsRequest ps;
	box__ps_request__init(&ps);
	uint64_t ids[256];
	size_t n = 0;
	unsigned fds = 0;

	int p[2];
	CHECK_INT(pipe2(p, O_CLOEXEC), 0);
	CHECK_INT(box_ipc_event_send_later(st.client, BOX__MSG_TYPE__MSG_PS_REQUEST, 1, &ps.base,
					   NULL, 0), 0);
	Box__RunRequest run;
	box__run_request__init(&run);
	run.spec = build_spec();
	run.has_n_stdio_fds = 1;
	run.n_stdio_fds = 3;
	int three[3] = { p[0], p[1], p[1] };
	CHECK_INT(box_ipc_event_send_later(st.client, BOX__MSG_TYPE__MSG_RUN_REQUEST, 2, &run.base,
					   three, 3), 0);
	CHECK_INT(box_ipc_event_send_later(st.client, BOX__MSG_TYPE__MSG_PS_REQUEST, 3, &ps.base,
					   NULL, 0), 0);
	close(p[0]);
	close(p[1]);
	CHECK(box_ipc_event_queued(st.client) > 0);
	drain_ids(rx, ids, 256, &n, &fds);
	CHECK_INT(n, 0); /* not before the end of the pass */
	CHECK_INT(event_base_loop(st.base, EVLOOP_ONCE | EVLOOP_NONBLOCK), 0);
	drain_ids(rx, ids, 256, &n, &fds);
	CHECK_INT(n, 3);
	CHECK(ids[0] == 1 && ids[1] == 2 && ids[2] == 3);
	CHECK_INT(fds, 3);
	CHECK_INT(box_ipc_event_queued(st.client), 0);

	/* Sent at once behind one sent later: both leave now, in order. */
	n = 0;
	CHECK_INT(box_ipc_event_send_later(st.client, BOX__MSG_TYPE__MSG_PS_REQUEST, 4, &ps.base,
					   NULL, 0), 0);
	CHECK_INT(box_ipc_event_send(st.client, BOX__MSG_TYPE__MSG_PS_REQUEST, 5, &ps.base, NULL,
				     0), 0);
	drain_ids(rx, ids, 256, &n, &fds);
	CHECK_INT(n, 2);
	CHECK(ids[0] == 4 && ids[1] == 5);

	/* 200, read only between passes: every one, in order, whatever the buffer holds. */
	n = 0;
	int bad = 0;
	for (uint64_t i = 0; i < 200; i++)
		bad += box_ipc_event_send_later(st.client, BOX__MSG_TYPE__MSG_PS_REQUEST, 100 + i,
						&ps.base, NULL, 0) != 0;
	CHECK_INT(bad, 0);
	for (int pass = 0; pass < 10000 && n < 200; pass++) {
		CHECK_INT(event_base_loop(st.base, EVLOOP_ONCE | EVLOOP_NONBLOCK), 0);
		drain_ids(rx, ids, 256, &n, &fds);
	}
	CHECK_INT(n, 200);
	for (size_t i = 0; i < 200 && i < n; i++)
		bad += ids[i] != 100 + i;
	CHECK_INT(bad, 0);
	CHECK_INT(box_ipc_event_queued(st.client), 0);

	/* After the peer is gone: -EPIPE once the end is seen, and nothing leaks. */
	box_ipc_chan_free(rx);
	close(sv[1]);
	CHECK_INT(box_ipc_event_send_later(st.client, BOX__MSG_TYPE__MSG_PS_REQUEST, 400, &ps.base,
					   NULL, 0), 0);
	event_base_dispatch(st.base);
	CHECK_INT(st.closes, 1);
	CHECK_INT(box_ipc_event_send_later(st.client, BOX__MSG_TYPE__MSG_PS_REQUEST, 401, &ps.base,
					   NULL, 0), -EPIPE);
	box_ipc_event_free(st.client);
	event_base_free(st.base);
	CHECK_INT(count_fds(), before);
}

/* ---- fuzz corpus: written from real messages, checked on every run ------ */

/* Collect packets as fuzz_ipc records: u16 little-endian length + bytes. */
struct records {
	uint8_t *buf;
	size_t len;
};

static int
record_packet(void *userdata, const uint8_t *pkt, size_t len, const int *fds, unsigned n_fds)
{
	struct records *rec = userdata;
	(void)fds;
	(void)n_fds;
	rec->buf = realloc(rec->buf, rec->len + 2 + len);
	rec->buf[rec->len] = (uint8_t)(len & 0xff);
	rec->buf[rec->len + 1] = (uint8_t)(len >> 8);
	memcpy(rec->buf + rec->len + 2, pkt, len);
	rec->len += 2 + len;
	return 0;
}

static void
record_raw(struct records *rec, const uint8_t *pkt, size_t len)
{
	(void)record_packet(rec, pkt, len, NULL, 0);
}

static void
write_seed(const char *dir, const char *name, struct records *rec)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "we");
	CHECK(f != NULL);
	if (f) {
		CHECK_INT(fwrite(rec->buf, 1, rec->len, f), rec->len);
		fclose(f);
	}
	free(rec->buf);
	rec->buf = NULL;
	rec->len = 0;
}

static void
seed_msg(const char *dir, const char *name, uint32_t type, const ProtobufCMessage *m)
{
	struct records rec = { 0 };
	CHECK_INT(box_ipc_pack(ALL, type, 1, m, NULL, 0, record_packet, &rec), 0);
	write_seed(dir, name, &rec);
}

static void
write_corpus(const char *dir)
{
	Box__RunRequest run;
	box__run_request__init(&run);
	run.spec = build_spec();
	seed_msg(dir, "ok-run-request", BOX__MSG_TYPE__MSG_RUN_REQUEST, &run.base);

	/* A policy over one packet: two fragments. */
	size_t big = 66000;
	uint8_t *text = malloc(big);
	for (size_t i = 0; i < big; i++)
		text[i] = (uint8_t)"permit(principal, action, resource);\n"[i % 37];
	Box__CheckRequest chk;
	box__check_request__init(&chk);
	chk.spec = build_spec();
	chk.spec->policy_text.data = text;
	chk.spec->policy_text.len = big;
	seed_msg(dir, "ok-check-request-fragmented", BOX__MSG_TYPE__MSG_CHECK_REQUEST, &chk.base);

	/* The same fragments, in reverse order. */
	struct records rec = { 0 };
	CHECK_INT(box_ipc_pack(ALL, BOX__MSG_TYPE__MSG_CHECK_REQUEST, 2, &chk.base, NULL, 0,
			       record_packet, &rec),
		  0);
	/* Move the first record (seq 0) to the end. */
	size_t a = 2 + (rec.buf[0] | (size_t)rec.buf[1] << 8);
	uint8_t *sw = malloc(rec.len);
	memcpy(sw, rec.buf + a, rec.len - a);
	memcpy(sw + rec.len - a, rec.buf, a);
	memcpy(rec.buf, sw, rec.len);
	free(sw);
	write_seed(dir, "bad-fragments-out-of-order", &rec);
	free(text);

	Box__RunReply rr;
	box__run_reply__init(&rr);
	rr.status = BOX__REPLY_STATUS__REPLY_OK;
	rr.box_id = "0123456789ab";
	rr.has_pid = 1;
	rr.pid = 4321;
	static char *disc[] = { "demo 0123456789ab", "  read        /home/me/project" };
	rr.disclosure = disc;
	rr.n_disclosure = 2;
	seed_msg(dir, "ok-run-reply", BOX__MSG_TYPE__MSG_RUN_REPLY, &rr.base);

	Box__RunExit ex;
	box__run_exit__init(&ex);
	ex.box_id = "0123456789ab";
	ex.has_exit_status = 1;
	ex.exit_status = 3;
	seed_msg(dir, "ok-run-exit", BOX__MSG_TYPE__MSG_RUN_EXIT, &ex.base);

	Box__RunControl ctl;
	box__run_control__init(&ctl);
	ctl.box_id = "0123456789ab";
	ctl.signal = SIGHUP;
	seed_msg(dir, "ok-run-control", BOX__MSG_TYPE__MSG_RUN_CONTROL, &ctl.base);

	Box__RunStarting rs;
	box__run_starting__init(&rs);
	static char *lines[] = { "box a, id 0123456789ab" };
	rs.disclosure = lines;
	rs.n_disclosure = 1;
	seed_msg(dir, "ok-run-starting", BOX__MSG_TYPE__MSG_RUN_STARTING, &rs.base);

	Box__PsRequest ps;
	box__ps_request__init(&ps);
	ps.has_all = ps.all = 1;
	seed_msg(dir, "ok-ps-request", BOX__MSG_TYPE__MSG_PS_REQUEST, &ps.base);

	Box__BoxInfo bi;
	box__box_info__init(&bi);
	bi.name = "demo";
	bi.box_id = "0123456789ab";
	bi.state = BOX__BOX_STATE__BOX_STATE_STARTING;
	bi.pid = 10;
	bi.uptime_s = 1;
	bi.uid = 1000;
	Box__BoxInfo *bis[] = { &bi };
	Box__PsReply psr;
	box__ps_reply__init(&psr);
	psr.boxes = bis;
	psr.n_boxes = 1;
	seed_msg(dir, "ok-ps-reply", BOX__MSG_TYPE__MSG_PS_REPLY, &psr.base);

	Box__StopRequest st;
	box__stop_request__init(&st);
	st.box = "demo";
	seed_msg(dir, "ok-stop-request", BOX__MSG_TYPE__MSG_STOP_REQUEST, &st.base);
	Box__StopReply str;
	box__stop_reply__init(&str);
	str.status = BOX__REPLY_STATUS__REPLY_OK;
	str.box_id = "0123456789ab";
	seed_msg(dir, "ok-stop-reply", BOX__MSG_TYPE__MSG_STOP_REPLY, &str.base);

	Box__LogRequest lg;
	box__log_request__init(&lg);
	lg.box = "demo";
	seed_msg(dir, "ok-log-request", BOX__MSG_TYPE__MSG_LOG_REQUEST, &lg.base);
	Box__LogReply lr;
	box__log_reply__init(&lr);
	lr.status = BOX__REPLY_STATUS__REPLY_NOT_FOUND;
	lr.error = "no box 'demo'";
	seed_msg(dir, "ok-log-reply", BOX__MSG_TYPE__MSG_LOG_REPLY, &lr.base);

	Box__Problem pr;
	box__problem__init(&pr);
	pr.severity = BOX__PROBLEM__SEVERITY__SEVERITY_WARNING;
	pr.has_line = pr.has_column = 1;
	pr.line = 3;
	pr.column = 7;
	pr.message = "rule 2 is shadowed";
	Box__Problem *prs[] = { &pr };
	Box__CheckReply cr;
	box__check_reply__init(&cr);
	cr.status = BOX__REPLY_STATUS__REPLY_OK;
	cr.problems = prs;
	cr.n_problems = 1;
	seed_msg(dir, "ok-check-reply", BOX__MSG_TYPE__MSG_CHECK_REPLY, &cr.base);

	Box__ErrorReply er;
	box__error_reply__init(&er);
	er.errno_value = EACCES;
	er.message = "permission denied";
	seed_msg(dir, "ok-error-reply", BOX__MSG_TYPE__MSG_ERROR_REPLY, &er.base);

	/* Refusals: unknown field, bad enum, truncated, other version. */
	size_t len, plen;
	uint8_t *pkt = env_msg(BOX__MSG_TYPE__MSG_STOP_REQUEST, 1, &st.base, &len);
	pkt = realloc(pkt, len + 2);
	pkt[len] = (15 << 3);
	pkt[len + 1] = 1;
	record_raw(&rec, pkt, len + 2);
	write_seed(dir, "bad-unknown-field", &rec);
	free(pkt);
	rr.status = (Box__ReplyStatus)77;
	pkt = env_msg(BOX__MSG_TYPE__MSG_RUN_REPLY, 1, &rr.base, &len);
	record_raw(&rec, pkt, len);
	write_seed(dir, "bad-enum", &rec);
	free(pkt);
	run.spec = build_spec(); /* chk shared the static spec */
	pkt = env_msg(BOX__MSG_TYPE__MSG_RUN_REQUEST, 1, &run.base, &len);
	CHECK(len <= 0xffff);
	record_raw(&rec, pkt, len / 2);
	write_seed(dir, "bad-truncated", &rec);
	free(pkt);
	uint8_t *p = pack(&ps.base, &plen);
	pkt = env_payload(2, BOX__MSG_TYPE__MSG_PS_REQUEST, 1, p, plen, &len);
	record_raw(&rec, pkt, len);
	write_seed(dir, "bad-version", &rec);
	free(pkt);
	free(p);
}

/*
 * BOX_IPC_WRITE_CORPUS=DIR regenerates the seeds; every run checks that the
 * committed ok-* seeds still decode and bad-* seeds are still refused.
 */
static void
test_fuzz_corpus(void)
{
	const char *out = getenv("BOX_IPC_WRITE_CORPUS");
	if (out)
		write_corpus(out);

	const char *dir = out ? out : "test/fuzz/corpus/ipc";
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	if (n < 0) {
		SKIP("no corpus directory (run from the source tree)");
		return;
	}
	int seen = 0;
	for (int i = 0; i < n; i++) {
		const char *nm = names[i]->d_name;
		bool ok = strncmp(nm, "ok-", 3) == 0, bad = strncmp(nm, "bad-", 4) == 0;
		if (ok || bad) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", dir, nm);
			FILE *f = fopen(path, "re");
			uint8_t *buf = malloc(1 << 20);
			size_t len = f ? fread(buf, 1, 1 << 20, f) : 0;
			if (f)
				fclose(f);
			struct box_ipc_chan *c = box_ipc_chan_new(-1, ALL, 0);
			int msgs = 0, err = 0;
			for (size_t off = 0; off + 2 <= len && err == 0;) {
				size_t l = buf[off] | (size_t)buf[off + 1] << 8;
				off += 2;
				if (l > len - off) {
					err = -EINVAL;
					break;
				}
				struct box_ipc_msg m = BOX_IPC_MSG_INIT;
				int r = box_ipc_chan_feed(c, buf + off, l, NULL, 0, &m);
				off += l;
				if (r == 1) {
					msgs++;
					box_ipc_msg_done(&m);
				} else if (r < 0) {
					err = r;
				}
			}
			box_ipc_chan_free(c);
			free(buf);
			if (ok && !(msgs == 1 && err == 0))
				printf("#   seed %s: %d messages, error %d\n", nm, msgs, err);
			if (bad && err == 0)
				printf("#   seed %s was accepted\n", nm);
			CHECK(ok ? msgs == 1 && err == 0 : err < 0);
			seen++;
		}
		free(names[i]);
	}
	free(names);
	CHECK(seen >= 10);
}

/* The walker's allocator budget: an input that unpacks to more than 16x its size. */
static void
test_walker_budget(void)
{
	/* An empty PolicyValue is 2 bytes on the wire and ~48 in memory. */
	enum { N = 30000 };
	Box__PolicyValueSet set;
	box__policy_value_set__init(&set);
	Box__PolicyValue *vals = calloc(N, sizeof(*vals));
	Box__PolicyValue **ptrs = calloc(N, sizeof(*ptrs));
	CHECK(vals && ptrs);
	if (!vals || !ptrs) {
		free(vals);
		free(ptrs);
		return;
	}
	for (size_t i = 0; i < N; i++) {
		box__policy_value__init(&vals[i]);
		ptrs[i] = &vals[i];
	}
	set.elems = ptrs;
	set.n_elems = N;
	size_t len;
	_cleanup_free_ uint8_t *buf = pack(&set.base, &len);
	const struct box_ipc_type row = {
		.name = "PolicyValueSet",
		.desc = &box__policy_value_set__descriptor,
		.max_size = 1u << 20,
	};
	ProtobufCMessage *m = NULL;
	CHECK_INT(box_proto_unpack(&row, buf, len, &m), -EMSGSIZE);
	CHECK(m == NULL);
	/* A thirtieth fits the budget (the slack); the row's cap still comes first. */
	set.n_elems = N / 30;
	size_t small_len;
	_cleanup_free_ uint8_t *small = pack(&set.base, &small_len);
	CHECK_INT(box_proto_unpack(&row, small, small_len, &m), 0);
	box_msg_free(m);
	m = NULL;
	const struct box_ipc_type tiny = { .desc = &box__policy_value_set__descriptor,
					   .max_size = 16 };
	CHECK_INT(box_proto_unpack(&tiny, small, small_len, &m), -EMSGSIZE);
	free(vals);
	free(ptrs);
}

/* ---- the protocol tables: senders and states ----------------------------- */

static void
on_ignore_msg(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata)
{
	(void)e;
	(void)m;
	(void)userdata;
}

/* Feed one hand-built envelope of TYPE carrying M into C; returns the feed's result. */
static int
feed_msg(struct box_ipc_chan *c, uint32_t type, const ProtobufCMessage *m)
{
	size_t len;
	_cleanup_free_ uint8_t *pkt = env_msg(type, 1, m, &len);
	struct box_ipc_msg got = BOX_IPC_MSG_INIT;
	int r = box_ipc_chan_feed(c, pkt, len, NULL, 0, &got);
	box_ipc_msg_done(&got);
	return r;
}

static void
test_protocol_tables(void)
{
	static const char id[] = "0123456789ab";
	Box__RunControl rc;
	box__run_control__init(&rc);
	rc.box_id = (char *)id;
	rc.signal = SIGINT;
	Box__RunReply ok_reply, refused;
	box__run_reply__init(&ok_reply);
	ok_reply.status = BOX__REPLY_STATUS__REPLY_OK;
	ok_reply.box_id = (char *)id;
	ok_reply.has_pid = 1;
	ok_reply.pid = 42;
	box__run_reply__init(&refused);
	refused.status = BOX__REPLY_STATUS__REPLY_REFUSED;
	Box__RunExit ex;
	box__run_exit__init(&ex);
	ex.box_id = (char *)id;
	ex.has_exit_status = 1;
	ex.exit_status = 0;
	Box__PsRequest ps;
	box__ps_request__init(&ps);

	/* boxd's end of a client connection: RunControl only once a box runs. */
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *boxd =
		box_ipc_chan_new(-1, &box_proto_client, BOX_CLIENT_ROLE_CLIENT);
	CHECK(boxd != NULL);
	CHECK_INT(box_ipc_chan_state(boxd), BOX_CLIENT_FRESH);
	CHECK_INT(feed_msg(boxd, BOX__MSG_TYPE__MSG_RUN_CONTROL, &rc.base), -EPERM);
	CHECK_INT(feed_msg(boxd, BOX__MSG_TYPE__MSG_PS_REQUEST, &ps.base), 1);
	/* A client cannot send what boxd sends. */
	CHECK_INT(feed_msg(boxd, BOX__MSG_TYPE__MSG_RUN_REPLY, &ok_reply.base), -EPERM);
	/* A refused start leaves the connection fresh; an OK RunReply makes it running. */
	CHECK_INT(box_ipc_chan_may_send(boxd, BOX__MSG_TYPE__MSG_RUN_EXIT), -EPERM);
	box_ipc_chan_sent(boxd, BOX__MSG_TYPE__MSG_RUN_REPLY, &refused.base);
	CHECK_INT(box_ipc_chan_state(boxd), BOX_CLIENT_FRESH);
	CHECK_INT(box_ipc_chan_may_send(boxd, BOX__MSG_TYPE__MSG_RUN_REPLY), 0);
	box_ipc_chan_sent(boxd, BOX__MSG_TYPE__MSG_RUN_REPLY, &ok_reply.base);
	CHECK_INT(box_ipc_chan_state(boxd), BOX_CLIENT_RUNNING);
	CHECK_INT(feed_msg(boxd, BOX__MSG_TYPE__MSG_RUN_CONTROL, &rc.base), 1);
	/* No second disclosure or RunReply while the box runs. */
	CHECK_INT(box_ipc_chan_may_send(boxd, BOX__MSG_TYPE__MSG_RUN_STARTING), -EPERM);
	CHECK_INT(box_ipc_chan_may_send(boxd, BOX__MSG_TYPE__MSG_RUN_EXIT), 0);
	box_ipc_chan_sent(boxd, BOX__MSG_TYPE__MSG_RUN_EXIT, &ex.base);
	CHECK_INT(box_ipc_chan_state(boxd), BOX_CLIENT_ENDED);
	/* A signal boxctl forwarded before it read RunExit is still no protocol error. */
	CHECK_INT(feed_msg(boxd, BOX__MSG_TYPE__MSG_RUN_CONTROL, &rc.base), 1);
	CHECK_INT(box_ipc_chan_may_send(boxd, BOX__MSG_TYPE__MSG_RUN_EXIT), -EPERM);
	/* A type of another protocol has no row here. */
	Box__PolicyLogFd lf;
	box__policy_log_fd__init(&lf);
	lf.generation = 1;
	CHECK_INT(feed_msg(boxd, BOX__MSG_TYPE__MSG_POLICY_LOG_FD, &lf.base), -EBADMSG);
	CHECK_STR(box_ipc_type_name(&box_proto_client, BOX__MSG_TYPE__MSG_POLICY_LOG_FD), "?");
	CHECK_STR(box_ipc_type_name(&box_proto_policy, BOX__MSG_TYPE__MSG_POLICY_LOG_FD),
		  "PolicyLogFd");

	/* boxctl's end: RunExit only after an OK RunReply, and only once. */
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *ctl =
		box_ipc_chan_new(-1, &box_proto_client, BOX_CLIENT_ROLE_BOXD);
	CHECK_INT(feed_msg(ctl, BOX__MSG_TYPE__MSG_RUN_EXIT, &ex.base), -EPERM);
	ctl = box_ipc_chan_free(ctl);
	ctl = box_ipc_chan_new(-1, &box_proto_client, BOX_CLIENT_ROLE_BOXD);
	CHECK_INT(feed_msg(ctl, BOX__MSG_TYPE__MSG_RUN_REPLY, &refused.base), 1);
	CHECK_INT(box_ipc_chan_state(ctl), BOX_CLIENT_FRESH);
	CHECK_INT(feed_msg(ctl, BOX__MSG_TYPE__MSG_RUN_REPLY, &ok_reply.base), 1);
	CHECK_INT(box_ipc_chan_state(ctl), BOX_CLIENT_RUNNING);
	CHECK_INT(feed_msg(ctl, BOX__MSG_TYPE__MSG_RUN_EXIT, &ex.base), 1);
	CHECK_INT(box_ipc_chan_state(ctl), BOX_CLIENT_ENDED);
	ctl = box_ipc_chan_free(ctl);
	ctl = box_ipc_chan_new(-1, &box_proto_client, BOX_CLIENT_ROLE_BOXD);
	CHECK_INT(feed_msg(ctl, BOX__MSG_TYPE__MSG_RUN_REPLY, &ok_reply.base), 1);
	CHECK_INT(feed_msg(ctl, BOX__MSG_TYPE__MSG_RUN_EXIT, &ex.base), 1);
	CHECK_INT(feed_msg(ctl, BOX__MSG_TYPE__MSG_RUN_EXIT, &ex.base), -EPERM);
	/* boxd does not send requests. */
	CHECK_INT(feed_msg(ctl, BOX__MSG_TYPE__MSG_PS_REQUEST, &ps.base), -EPERM);

	/* box-policyd's end of boxd's channel: PolicyInit once, first; then the rest. */
	Box__DecideRequest dr;
	box__decide_request__init(&dr);
	dr.action = "fs:read";
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *pd =
		box_ipc_chan_new(-1, &box_proto_policy, BOX_POLICY_ROLE_BOXD);
	CHECK_INT(feed_msg(pd, BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &dr.base), -EPERM);
	CHECK_INT(feed_msg(pd, BOX__MSG_TYPE__MSG_POLICY_LOG_FD, &lf.base), -EPERM);
	CHECK_INT(box_ipc_chan_set_state(pd, BOX_POLICY_N_STATES), -EINVAL);
	Box__PolicyInit in;
	box__policy_init__init(&in);
	in.box_name = "demo";
	in.box_id = (char *)id;
	in.home = "/home/u";
	CHECK_INT(feed_msg(pd, BOX__MSG_TYPE__MSG_POLICY_INIT, &in.base), 1);
	CHECK_INT(box_ipc_chan_state(pd), BOX_POLICY_STARTING);
	/* A second PolicyInit is a protocol error (the table's fatal default). */
	CHECK_INT(feed_msg(pd, BOX__MSG_TYPE__MSG_POLICY_INIT, &in.base), -EPERM);
	CHECK_INT(feed_msg(pd, BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &dr.base), -EPERM);
	Box__PolicyReady rdy;
	box__policy_ready__init(&rdy);
	rdy.ok = 1;
	box_ipc_chan_sent(pd, BOX__MSG_TYPE__MSG_POLICY_READY, &rdy.base);
	CHECK_INT(box_ipc_chan_state(pd), BOX_POLICY_READY);
	CHECK_INT(feed_msg(pd, BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &dr.base), 1);
	CHECK_INT(feed_msg(pd, BOX__MSG_TYPE__MSG_POLICY_LOG_FD, &lf.base), 1);
	CHECK_INT(feed_msg(pd, BOX__MSG_TYPE__MSG_POLICY_INIT, &in.base), -EPERM);
	/* A peer (gateway, mcpd, shell) may ask, never rotate the log. */
	_cleanup_(box_ipc_chan_freep) struct box_ipc_chan *peer =
		box_ipc_chan_new(-1, &box_proto_policy, BOX_POLICY_ROLE_PEER);
	CHECK_INT(box_ipc_chan_set_state(peer, BOX_POLICY_READY), 0);
	CHECK_INT(feed_msg(peer, BOX__MSG_TYPE__MSG_DECIDE_REQUEST, &dr.base), 1);
	CHECK_INT(feed_msg(peer, BOX__MSG_TYPE__MSG_POLICY_LOG_FD, &lf.base), -EPERM);
	/* No channel for a role the protocol does not name. */
	CHECK(box_ipc_chan_new(-1, &box_proto_policy, BOX_POLICY_N_ROLES) == NULL);
	CHECK(box_ipc_chan_new(-1, NULL, 0) == NULL);

	/* The libevent glue refuses to send what the state does not allow. */
	int sv[2];
	CHECK_INT(box_ipc_socketpair(sv, true), 0);
	struct event_base *base = event_base_new();
	struct box_ipc_event *e = box_ipc_event_new(base, sv[0], &box_proto_client,
						    BOX_CLIENT_ROLE_CLIENT, on_ignore_msg, NULL, NULL);
	CHECK(e != NULL);
	CHECK_INT(box_ipc_event_send(e, BOX__MSG_TYPE__MSG_RUN_EXIT, 1, &ex.base, NULL, 0), -EPERM);
	CHECK_INT(box_ipc_event_send(e, BOX__MSG_TYPE__MSG_RUN_REPLY, 1, &ok_reply.base, NULL, 0), 0);
	CHECK_INT(box_ipc_chan_state(box_ipc_event_chan(e)), BOX_CLIENT_RUNNING);
	CHECK_INT(box_ipc_event_send(e, BOX__MSG_TYPE__MSG_RUN_EXIT, 1, &ex.base, NULL, 0), 0);
	CHECK_INT(box_ipc_chan_state(box_ipc_event_chan(e)), BOX_CLIENT_ENDED);
	box_ipc_event_free(e);
	event_base_free(base);
	close(sv[1]);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	all_proto_init();
	RUN(test_roundtrip_spec_requests);
	RUN(test_roundtrip_replies);
	RUN(test_fragmentation_roundtrip);
	RUN(test_oversize_packets);
	RUN(test_unexpected_fds);
	RUN(test_truncated_packets);
	RUN(test_unknown_fields);
	RUN(test_bad_enums_and_types);
	RUN(test_channel_allow_list);
	RUN(test_protocol_tables);
	RUN(test_walker_budget);
	RUN(test_peer_close);
	RUN(test_reassembly_in_order_and_interleaved);
	RUN(test_reassembly_refusals);
	RUN(test_reassembly_fds_and_missing_last);
	RUN(test_decode_memory_cap);
	RUN(test_spec_validators);
	RUN(test_reply_validators);
	RUN(test_envelope_fast_paths);
	RUN(test_recv_wait_blocking);
	RUN(test_redact);
	RUN(test_event_fragmented_exchange);
	RUN(test_event_garbage_and_free_in_callback);
	RUN(test_event_queue_cap);
	RUN(test_event_send_later);
	RUN(test_fuzz_corpus);
	return tap_done();
}
