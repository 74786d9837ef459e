/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_mcpd.c — box-mcpd, the MCP broker, alone (docs/box-mcpd.8.md
 * "The broker's rules"), outside a sandbox (the servers' sandboxes are
 * boxd's part); box-mcpd's own seccomp allow-list is on, as always.
 *
 * The harness plays boxd and box-policyd in one forked "peers" process: it
 * sends McpInit (the servers below, the pins file), answers every
 * McpServerStart by running test/mcp/daemon/fake_server.py on the 3 fds it
 * got (McpServerStarted, McpServerExit when reaped, McpServerStop as
 * SIGKILL), and answers every DecideRequest, DecideBatchRequest (box-mcpd's
 * mcp:call with its refinement, until_deny), PolicyProbeRequest and
 * PolicyToolSchema from a rule table (RULES, re-read at each request, so
 * each test controls every verdict). It logs every policy message it got
 * as one JSON line (policy.log) so tests check what box-mcpd asked, with
 * each value's type. The test itself plays the alias and the harness:
 * McpOpen with 3 pipes, JSON-RPC lines on them, McpClose read back.
 *
 * Rule lines: VERDICT|ACTION|FIELD|VALUE|MESSAGE — VERDICT deny or
 * schemafail (ACTION is then the namespace); FIELD empty matches any
 * request of ACTION; VALUE ">N" compares a Long. First match wins; else
 * permit (cause permitted, or not_refined for a per-tool action).
 * Trusts: nothing; it is test code.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

/* Paths here are short (a mkdtemp under /tmp); a cut one fails the test visibly. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#include "cleanup.h"
#include "ipc.h"
#include "playboxd.h"
#include "pins.h"
#include "proto/policy_permits.h"
#include "proto/proto_mcp.h"
#include "proto/proto_policy.h"
#include "tap.h"

struct env {
	char dir[256], sock[300], rules[300], pollog[300], ctllog[300], pins[300];
	char server_py[PATH_MAX], python[PATH_MAX];
	pid_t mcpd, peers;
};
static struct env E;

/*
 * How long a reply, a status or a log line may take: a cap that only a hang reaches, not a
 * loaded machine running other tests beside this one.
 */
enum { WAIT_MS = 60000 };

static void
msleep(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void
write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	(void)!write(fd, text, strlen(text));
	close(fd);
}

static char *
read_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return strdup("");
	/* Until EOF: /proc files say size 0. */
	size_t cap = 65536, off = 0;
	char *b = malloc(cap + 1);
	ssize_t n;
	while ((n = read(fd, b + off, cap - off)) > 0) {
		off += (size_t)n;
		if (off == cap)
			b = realloc(b, (cap *= 2) + 1);
	}
	b[off] = 0;
	close(fd);
	return b;
}

static void
append_line(const char *path, const char *line)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	(void)!write(fd, line, strlen(line));
	close(fd);
}

/* ---- the servers of McpInit ---------------------------------------------------- */

struct srvdef {
	const char *name, *mode;
	uint64_t max_frame, timeout_ms;
	bool allow_changes;
};

static const struct srvdef servers[] = {
	{ "allowchg", "change", 4u << 20, 60000, true },
	{ "badutf8", "badutf8", 4u << 20, 60000, false },
	{ "bigline", "bigline", 64u << 10, 60000, false },
	{ "chg", "change", 4u << 20, 60000, false },
	{ "exit3", "exit3", 4u << 20, 60000, false },
	{ "failns", "normal", 4u << 20, 60000, false },
	{ "flood", "flood", 16u << 10, 60000, false },
	{ "garbage", "garbage", 4u << 20, 60000, false },
	{ "gated", "denied", 4u << 20, 60000, false },
	{ "nonobj", "nonobj", 4u << 20, 60000, false },
	{ "noid", "noid", 4u << 20, 60000, false },
	{ "nostart", "normal", 4u << 20, 60000, false },
	{ "paged", "paged", 4u << 20, 60000, false },
	{ "pinned", "normal", 4u << 20, 60000, false },
	{ "small", "normal", 1024, 60000, false },
	{ "srv", "normal", 4u << 20, 1500, false },
	{ "wide", "wide", 4u << 20, 60000, false },
};
#define N_SERVERS (sizeof(servers) / sizeof(servers[0]))

static Box__McpServer init_srv[N_SERVERS];
static Box__McpServer *init_srvp[N_SERVERS];
static char *init_argv[N_SERVERS][3];

static void
init_build(Box__McpInit *m)
{
	box__mcp_init__init(m);
	m->box_name = "b-mcpd";
	m->box_id = "0123456789ab";
	m->home = "/nonexistent/home";
	for (size_t i = 0; i < N_SERVERS; i++) {
		Box__McpServer *s = &init_srv[i];
		box__mcp_server__init(s);
		s->name = (char *)servers[i].name;
		s->ns = (char *)servers[i].name;
		s->alias = (char *)servers[i].name;
		s->program_path = E.python;
		init_argv[i][0] = "python3";
		init_argv[i][1] = E.server_py;
		init_argv[i][2] = (char *)servers[i].mode;
		s->argv = init_argv[i];
		s->n_argv = 3;
		s->cwd = E.dir;
		s->max_frame = servers[i].max_frame;
		s->call_timeout_ms = servers[i].timeout_ms;
		s->allow_tool_changes = servers[i].allow_changes;
		init_srvp[i] = s;
	}
	m->servers = init_srvp;
	m->n_servers = N_SERVERS;
}

static const struct srvdef *
srvdef_find(const char *name)
{
	for (size_t i = 0; i < N_SERVERS; i++)
		if (strcmp(servers[i].name, name) == 0)
			return &servers[i];
	return NULL;
}

/* ---- the fake box-policyd ------------------------------------------------------- */

static json_t *
value_json(const Box__PolicyValue *v)
{
	switch (v->kind_case) {
	case BOX__POLICY_VALUE__KIND_STR:
		return json_string(v->str);
	case BOX__POLICY_VALUE__KIND_INTEGER:
		return json_integer(v->integer);
	case BOX__POLICY_VALUE__KIND_BOOLEAN:
		return json_boolean(v->boolean);
	case BOX__POLICY_VALUE__KIND_SET: {
		json_t *a = json_array();
		for (size_t i = 0; i < v->set->n_elems; i++)
			json_array_append_new(a, value_json(v->set->elems[i]));
		return a;
	}
	case BOX__POLICY_VALUE__KIND_RECORD: {
		json_t *o = json_object();
		for (size_t i = 0; i < v->record->n_fields; i++)
			json_object_set_new(o, v->record->fields[i]->name,
					    value_json(v->record->fields[i]->value));
		return o;
	}
	default:
		return json_null();
	}
}

static json_t *
fields_json(Box__PolicyField **f, size_t n)
{
	json_t *o = json_object();
	for (size_t i = 0; i < n; i++)
		json_object_set_new(o, f[i]->name, value_json(f[i]->value));
	return o;
}

static void
pol_log(json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	if (s) {
		size_t n = strlen(s);
		char *l = malloc(n + 2);
		memcpy(l, s, n);
		l[n] = '\n';
		l[n + 1] = 0;
		append_line(E.pollog, l);
		free(l);
		free(s);
	}
	json_decref(o);
}

/* The first rule of VERDICT for ACTION that matches the input: its message, or NULL. */
static char *
rule_match(const char *verdict, const char *action, Box__PolicyField **in, size_t n_in)
{
	char *rules = read_file(E.rules);
	char *res = NULL;
	for (char *line = strtok(rules, "\n"); line && !res; line = strtok(NULL, "\n")) {
		char *parts[5] = { 0 };
		char *p = line;
		for (int i = 0; i < 5 && p; i++) {
			parts[i] = p;
			p = strchr(p, '|');
			if (p && i < 4)
				*p++ = 0;
		}
		if (!parts[4] || strcmp(parts[0], verdict) != 0 || strcmp(parts[1], action) != 0)
			continue;
		bool match = parts[2][0] == 0;
		for (size_t i = 0; !match && i < n_in; i++) {
			if (strcmp(in[i]->name, parts[2]) != 0)
				continue;
			const Box__PolicyValue *v = in[i]->value;
			if (parts[3][0] == '>')
				match = v->kind_case == BOX__POLICY_VALUE__KIND_INTEGER &&
					v->integer > atoll(parts[3] + 1);
			else
				match = v->kind_case == BOX__POLICY_VALUE__KIND_STR &&
					strcmp(v->str, parts[3]) == 0;
		}
		if (match)
			res = strdup(parts[4]);
	}
	free(rules);
	return res;
}

static void
decide_one(const Box__DecideRequest *r, Box__DecideReply *rep, char **msg_out)
{
	box__decide_reply__init(rep);
	char *deny = rule_match("deny", r->action, r->input, r->n_input);
	if (deny) {
		rep->verdict = BOX__DECISION_VERDICT__VERDICT_DENY;
		rep->cause = BOX__DECISION_CAUSE__CAUSE_FORBIDDEN;
		rep->message = deny;
	} else {
		rep->verdict = BOX__DECISION_VERDICT__VERDICT_PERMIT;
		rep->cause = strstr(r->action, "::Action::") ? BOX__DECISION_CAUSE__CAUSE_NOT_REFINED
							     : BOX__DECISION_CAUSE__CAUSE_PERMITTED;
		rep->message = strdup("permitted");
	}
	*msg_out = rep->message;
}

/* The permits without an outcome, as box-policyd keeps them: a Record names one. */
static struct policy_permits *permits;

static void
keep_permit(uint64_t id, const Box__DecideRequest *r, const Box__DecideReply *rep)
{
	if (!permits)
		permits = policy_permits_new();
	if (rep->verdict == BOX__DECISION_VERDICT__VERDICT_PERMIT)
		(void)policy_permits_add(permits, id, r);
}

static void
fake_policyd_msg(struct box_ipc_chan *c, struct box_ipc_msg *m)
{
	switch (m->type) {
	case BOX__MSG_TYPE__MSG_DECIDE_REQUEST: {
		const Box__DecideRequest *r = (const Box__DecideRequest *)m->msg;
		json_t *o = json_pack("{s:s,s:s,s:o}", "type", "decide", "action", r->action,
				      "input", fields_json(r->input, r->n_input));
		pol_log(o);
		Box__DecideReply rep;
		char *msg;
		decide_one(r, &rep, &msg);
		keep_permit(m->request_id, r, &rep);
		(void)box_ipc_chan_send(c, BOX__MSG_TYPE__MSG_DECIDE_REPLY, m->request_id,
					&rep.base, NULL, 0);
		free(msg);
		break;
	}
	case BOX__MSG_TYPE__MSG_DECIDE_BATCH_REQUEST: {
		/* mcp:call and its refinement in one (until_deny: stop at the first denial). */
		const Box__DecideBatchRequest *r = (const Box__DecideBatchRequest *)m->msg;
		Box__DecideBatchReply rep = BOX__DECIDE_BATCH_REPLY__INIT;
		Box__DecideReply *reps = calloc(r->n_requests, sizeof(*reps));
		Box__DecideReply **preps = calloc(r->n_requests, sizeof(*preps));
		char **msgs = calloc(r->n_requests, sizeof(*msgs));
		size_t n = 0;
		while (n < r->n_requests) {
			const Box__DecideRequest *d = r->requests[n];
			pol_log(json_pack("{s:s,s:s,s:o}", "type", "decide", "action", d->action,
					  "input", fields_json(d->input, d->n_input)));
			decide_one(d, &reps[n], &msgs[n]);
			/* the i-th request of a batch is named by its id + i */
			keep_permit(m->request_id + n, d, &reps[n]);
			preps[n] = &reps[n];
			n++;
			if (r->has_until_deny && r->until_deny &&
			    reps[n - 1].verdict == BOX__DECISION_VERDICT__VERDICT_DENY)
				break;
		}
		rep.replies = preps;
		rep.n_replies = n;
		(void)box_ipc_chan_send(c, BOX__MSG_TYPE__MSG_DECIDE_BATCH_REPLY, m->request_id,
					&rep.base, NULL, 0);
		for (size_t i = 0; i < n; i++)
			free(msgs[i]);
		free(msgs);
		free(reps);
		free(preps);
		break;
	}
	case BOX__MSG_TYPE__MSG_POLICY_PROBE_REQUEST: {
		const Box__PolicyProbeRequest *r = (const Box__PolicyProbeRequest *)m->msg;
		Box__PolicyProbeReply rep = BOX__POLICY_PROBE_REPLY__INIT;
		Box__DecideReply *reps = calloc(r->n_requests, sizeof(*reps));
		Box__DecideReply **preps = calloc(r->n_requests, sizeof(*preps));
		char **msgs = calloc(r->n_requests, sizeof(*msgs));
		for (size_t i = 0; i < r->n_requests; i++) {
			const Box__DecideRequest *d = r->requests[i];
			pol_log(json_pack("{s:s,s:s,s:o}", "type", "probe", "action", d->action,
					  "input", fields_json(d->input, d->n_input)));
			decide_one(d, &reps[i], &msgs[i]);
			preps[i] = &reps[i];
		}
		rep.replies = preps;
		rep.n_replies = r->n_requests;
		(void)box_ipc_chan_send(c, BOX__MSG_TYPE__MSG_POLICY_PROBE_REPLY, m->request_id,
					&rep.base, NULL, 0);
		for (size_t i = 0; i < r->n_requests; i++)
			free(msgs[i]);
		free(msgs);
		free(reps);
		free(preps);
		break;
	}
	case BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA: {
		const Box__PolicyToolSchema *r = (const Box__PolicyToolSchema *)m->msg;
		json_t *tools = json_array();
		for (size_t i = 0; i < r->n_tools; i++) {
			json_t *fs = json_array();
			for (size_t j = 0; j < r->tools[i]->n_fields; j++) {
				const Box__PolicyToolField *f = r->tools[i]->fields[j];
				json_array_append_new(fs, json_pack("{s:s,s:s,s:b}", "name", f->name,
								    "type", f->type, "optional",
								    f->optional));
			}
			json_array_append_new(tools, json_pack("{s:s,s:o}", "name",
							       r->tools[i]->name, "fields", fs));
		}
		pol_log(json_pack("{s:s,s:s,s:s,s:o}", "type", "schema", "server", r->server, "ns",
				  r->ns, "tools", tools));
		Box__PolicyToolSchemaReply rep = BOX__POLICY_TOOL_SCHEMA_REPLY__INIT;
		char *fail = rule_match("schemafail", r->ns, NULL, 0);
		rep.ok = fail == NULL;
		rep.error = fail;
		(void)box_ipc_chan_send(c, BOX__MSG_TYPE__MSG_POLICY_TOOL_SCHEMA_REPLY, m->request_id,
					&rep.base, NULL, 0);
		free(fail);
		break;
	}
	case BOX__MSG_TYPE__MSG_RECORD_REQUEST: {
		/* The Decide it names gives the input (a bad one is logged as such). */
		const Box__RecordRequest *r = (const Box__RecordRequest *)m->msg;
		Box__DecideRequest *d = NULL;
		bool named = permits && policy_permits_take(permits, r->decide_id, &d) == 0 &&
			     strcmp(d->action, r->action) == 0;
		pol_log(json_pack("{s:s,s:s,s:s,s:o,s:o}", "type", named ? "record" : "bad_record",
				  "kind",
				  r->kind == BOX__EVENT_KIND__EVENT_RESPONSE ? "response" : "error",
				  "action", r->action,
				  "input", d ? fields_json(d->input, d->n_input) : json_object(),
				  "output", fields_json(r->output, r->n_output)));
		if (d)
			box__decide_request__free_unpacked(d, NULL);
		break;
	}
	default:
		break;
	}
}

/* ---- the fake boxd -------------------------------------------------------------- */

struct fake_server {
	uint64_t id;
	pid_t pid;
};

static void
ctl_log(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	append_line(E.ctllog, line);
}

static void
fake_start(struct box_ipc_chan *c, struct box_ipc_msg *m, struct fake_server *sv, size_t *n_sv)
{
	const Box__McpServerStart *r = (const Box__McpServerStart *)m->msg;
	ctl_log("start %llu %s\n", (unsigned long long)r->start_id, r->server);
	Box__McpServerStarted rep = BOX__MCP_SERVER_STARTED__INIT;
	rep.start_id = r->start_id;
	const struct srvdef *d = srvdef_find(r->server);
	if (!d || strcmp(r->server, "nostart") == 0) {
		rep.ok = false;
		rep.error = "box: the fake boxd cannot start nostart";
		(void)box_ipc_chan_send(c, BOX__MSG_TYPE__MSG_MCP_SERVER_STARTED, 0, &rep.base, NULL,
					0);
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		int src[3];
		for (int i = 0; i < 3; i++)
			src[i] = fcntl(m->fds[i], F_DUPFD_CLOEXEC, 20);
		for (int i = 0; i < 3; i++)
			dup2(src[i], i);
		signal(SIGPIPE, SIG_DFL);
		char *argv[] = { "python3", E.server_py, (char *)d->mode, NULL };
		char *envp[] = { "PATH=/usr/bin:/bin", NULL };
		if (chdir(E.dir) < 0)
			_exit(124);
		execve(E.python, argv, envp);
		_exit(127);
	}
	rep.ok = pid > 0;
	if (pid <= 0)
		rep.error = "fork failed";
	if (pid > 0 && *n_sv < 1024)
		sv[(*n_sv)++] = (struct fake_server){ r->start_id, pid };
	(void)box_ipc_chan_send(c, BOX__MSG_TYPE__MSG_MCP_SERVER_STARTED, 0, &rep.base, NULL, 0);
}

static _Noreturn void
fake_peers(int ctl, int pol, int pins_fd)
{
	signal(SIGPIPE, SIG_IGN);
	struct box_ipc_chan *cc = box_ipc_chan_new(ctl, &box_proto_mcpctl, BOX_MCPCTL_ROLE_MCPD);
	struct box_ipc_chan *pc = box_ipc_chan_new(pol, &box_proto_policy, BOX_POLICY_ROLE_PEER);
	box_ipc_chan_set_state(pc, BOX_POLICY_READY);
	Box__McpInit init;
	init_build(&init);
	int r = box_ipc_chan_send(cc, BOX__MSG_TYPE__MSG_MCP_INIT, 1, &init.base, &pins_fd, 1);
	if (r < 0)
		ctl_log("cannot send McpInit: %d\n", r);
	close(pins_fd);
	static struct fake_server sv[1024];
	size_t n_sv = 0;
	for (;;) {
		struct pollfd p[2] = { { ctl, POLLIN, 0 }, { pol, POLLIN, 0 } };
		(void)poll(p, 2, 20);
		for (int k = 0; k < 2; k++) {
			if (!p[k].revents)
				continue;
			struct box_ipc_msg m = BOX_IPC_MSG_INIT;
			int rr = box_ipc_recv(k == 0 ? cc : pc, &m);
			if (rr == 1) {
				if (k == 1) {
					fake_policyd_msg(pc, &m);
				} else if (m.type == BOX__MSG_TYPE__MSG_MCP_READY) {
					const Box__McpReady *rd = (const Box__McpReady *)m.msg;
					ctl_log("ready %s\n", rd->ok ? "ok" : rd->error);
				} else if (m.type == BOX__MSG_TYPE__MSG_MCP_SERVER_START) {
					fake_start(cc, &m, sv, &n_sv);
				} else if (m.type == BOX__MSG_TYPE__MSG_MCP_SERVER_STOP) {
					uint64_t id = ((const Box__McpServerStop *)m.msg)->start_id;
					ctl_log("stop %llu\n", (unsigned long long)id);
					for (size_t i = 0; i < n_sv; i++)
						if (sv[i].id == id)
							kill(sv[i].pid, SIGKILL);
				}
			} else if (rr < 0 && rr != -EAGAIN) {
				ctl_log("channel %d ended: %d\n", k, rr);
				for (size_t i = 0; i < n_sv; i++)
					kill(sv[i].pid, SIGKILL);
				_exit(0);
			}
			box_ipc_msg_done(&m);
		}
		int st;
		pid_t pid;
		while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
			for (size_t i = 0; i < n_sv; i++)
				if (sv[i].pid == pid) {
					Box__McpServerExit x = BOX__MCP_SERVER_EXIT__INIT;
					x.start_id = sv[i].id;
					x.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
					ctl_log("exit %llu %d\n", (unsigned long long)x.start_id,
						x.status);
					(void)box_ipc_chan_send(cc, BOX__MSG_TYPE__MSG_MCP_SERVER_EXIT, 0,
								&x.base, NULL, 0);
					sv[i] = sv[--n_sv];
					break;
				}
	}
}

/* ---- start and stop ------------------------------------------------------------- */

static const char *
mcpd_binary(void)
{
	static char path[600];
	const char *b = getenv("BOX_BIN");
	(void)snprintf(path, sizeof(path), "%s/box-mcpd", b ? b : "build/bin");
	return path;
}

static bool
wait_for_line(const char *path, const char *text, int ms)
{
	for (int i = 0; i < ms / 10; i++) {
		char *s = read_file(path);
		bool found = strstr(s, text) != NULL;
		free(s);
		if (found)
			return true;
		msleep(10);
	}
	return false;
}

/* box-mcpd with fd 3 the control channel, 4 the policy channel, 5 the listener. */
static int pins_open_flags = O_RDWR | O_APPEND;

static bool
mcpd_start(void)
{
	int ctl[2], pol[2];
	if (box_ipc_socketpair(ctl, false) < 0 || box_ipc_socketpair(pol, false) < 0)
		return false;
	int l = pb_listen(E.sock, 512);
	if (l < 0)
		return false;
	int pins_fd = open(E.pins, pins_open_flags | O_CREAT | O_CLOEXEC, 0600);
	if (pins_fd < 0)
		return false;
	E.peers = fork();
	if (E.peers == 0) {
		close(ctl[1]);
		close(pol[1]);
		close(l);
		fake_peers(ctl[0], pol[0], pins_fd);
	}
	close(pins_fd);
	char errlog[400];
	(void)snprintf(errlog, sizeof(errlog), "%s/mcpd.log", E.dir);
	int theirs[3] = { ctl[1], pol[1], l };
	struct pb_spawn sp = { .binary = mcpd_binary(), .argv0 = "box-mcpd", .fds = theirs,
			       .n_fds = 3, .stderr_path = errlog };
	E.mcpd = pb_spawn(&sp);
	close(ctl[0]);
	close(ctl[1]);
	close(pol[0]);
	close(pol[1]);
	close(l);
	if (!wait_for_line(E.ctllog, "ready ", WAIT_MS))
		return false;
	return wait_for_line(E.ctllog, "ready ok", 10);
}

static int
mcpd_stop(void)
{
	int st = -1;
	if (E.mcpd > 0) {
		kill(E.mcpd, SIGTERM);
		waitpid(E.mcpd, &st, 0);
		E.mcpd = 0;
	}
	if (E.peers > 0) {
		kill(E.peers, SIGKILL);
		waitpid(E.peers, NULL, 0);
		E.peers = 0;
	}
	return st;
}

/* ---- the alias and the harness -------------------------------------------------- */

struct client {
	int sock;
	struct box_ipc_chan *chan;
	int in_w, out_r, err_r; /* the harness's stdin (we write), stdout, stderr (we read) */
	char buf[1 << 20];
	size_t len;
};

static bool
client_open(struct client *c, const char *alias)
{
	memset(c, 0, sizeof(*c));
	c->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	(void)snprintf(a.sun_path, sizeof(a.sun_path), "%s", E.sock);
	if (c->sock < 0 || connect(c->sock, (struct sockaddr *)&a, sizeof(a)) < 0)
		return false;
	int in[2], out[2], err[2];
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
		return false;
	c->chan = box_ipc_chan_new(c->sock, &box_proto_mcpsession, BOX_MCPSESSION_ROLE_MCPD);
	Box__McpOpen o = BOX__MCP_OPEN__INIT;
	o.alias = (char *)alias;
	o.cwd = E.dir;
	char *args[] = { "--ignored" };
	o.args = args;
	o.n_args = 1;
	int fds[3] = { in[0], out[1], err[1] };
	int r = box_ipc_chan_send(c->chan, BOX__MSG_TYPE__MSG_MCP_OPEN, 0, &o.base, fds, 3);
	close(in[0]);
	close(out[1]);
	close(err[1]);
	c->in_w = in[1];
	c->out_r = out[0];
	c->err_r = err[0];
	fcntl(c->out_r, F_SETFL, O_NONBLOCK);
	return r == 0;
}

static void
client_send(struct client *c, const char *line)
{
	size_t n = strlen(line);
	(void)!write(c->in_w, line, n);
	if (n == 0 || line[n - 1] != '\n')
		(void)!write(c->in_w, "\n", 1);
}

/* The next line the harness reads, parsed; NULL at EOF or after MS. */
static json_t *
client_reply(struct client *c, int ms)
{
	for (int waited = 0;;) {
		char *nl = memchr(c->buf, '\n', c->len);
		if (nl) {
			size_t l = (size_t)(nl - c->buf);
			json_error_t je;
			json_t *j = json_loadb(c->buf, l, 0, &je);
			memmove(c->buf, nl + 1, c->len - l - 1);
			c->len -= l + 1;
			if (!j)
				j = json_string("(not JSON)");
			return j;
		}
		struct pollfd p = { c->out_r, POLLIN, 0 };
		if (poll(&p, 1, 20) == 0) {
			waited += 20;
			if (waited >= ms)
				return NULL;
			continue;
		}
		ssize_t n = read(c->out_r, c->buf + c->len, sizeof(c->buf) - c->len - 1);
		if (n <= 0) {
			if (n < 0 && errno == EAGAIN)
				continue;
			return NULL;
		}
		c->len += (size_t)n;
	}
}

static json_t *
rpc(struct client *c, const char *line)
{
	client_send(c, line);
	return client_reply(c, WAIT_MS);
}

/* McpClose: its status (-1 when the connection closed without it). */
static int
client_close_status(struct client *c, char *msg, size_t size, int ms)
{
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	if (!c->chan)
		return -2; /* client_open failed */
	int r = box_ipc_recv_wait(c->chan, &m, ms);
	int st = -1;
	if (msg)
		msg[0] = 0;
	if (r == 1 || (r >= 0 && m.msg)) {
		const Box__McpClose *cl = (const Box__McpClose *)m.msg;
		st = cl->status;
		if (msg && cl->message)
			(void)snprintf(msg, size, "%s", cl->message);
	}
	box_ipc_msg_done(&m);
	return st;
}

static void
client_free(struct client *c)
{
	if (c->chan)
		box_ipc_chan_free(c->chan);
	safe_close(c->sock);
	safe_close(c->in_w);
	safe_close(c->out_r);
	safe_close(c->err_r);
	c->chan = NULL;
	c->sock = c->in_w = c->out_r = c->err_r = -1;
}

/* Harness EOF; the server exits; McpClose's status. */
static int
client_end(struct client *c, char *msg, size_t size)
{
	c->in_w = safe_close(c->in_w);
	return client_close_status(c, msg, size, WAIT_MS);
}

static long long
err_code(const json_t *j)
{
	return json_integer_value(json_object_get(json_object_get(j, "error"), "code"));
}

static const char *
err_msg(const json_t *j)
{
	const char *s = json_string_value(json_object_get(json_object_get(j, "error"), "message"));
	return s ? s : "";
}

static bool
has_result(const json_t *j)
{
	return json_object_get(j, "result") != NULL;
}

/* ---- what policyd was asked -------------------------------------------------------- */

static size_t pol_mark;

static void
pol_reset(void)
{
	struct stat st;
	pol_mark = stat(E.pollog, &st) == 0 ? (size_t)st.st_size : 0;
}

/* The policy messages since pol_reset() matching TYPE and ACTION (and NEEDLE in the line). */
static json_t *
pol_find(const char *type, const char *action, const char *needle)
{
	char *all = read_file(E.pollog);
	json_t *found = NULL;
	size_t len = strlen(all);
	for (char *line = strtok(all + (pol_mark < len ? pol_mark : len), "\n"); line;
	     line = strtok(NULL, "\n")) {
		if (needle && !strstr(line, needle))
			continue;
		json_error_t je;
		json_t *j = json_loads(line, 0, &je);
		if (!j)
			continue;
		const char *t = json_string_value(json_object_get(j, "type"));
		const char *a = json_string_value(json_object_get(j, "action"));
		if (t && strcmp(t, type) == 0 && (!action || (a && strcmp(a, action) == 0))) {
			json_decref(found);
			found = j;
		} else {
			json_decref(j);
		}
	}
	free(all);
	return found;
}

static int
pol_count(const char *type, const char *action, const char *needle)
{
	char *all = read_file(E.pollog);
	int n = 0;
	size_t len = strlen(all);
	char pat[300];
	(void)snprintf(pat, sizeof(pat), "\"type\":\"%s\"", type);
	for (char *line = strtok(all + (pol_mark < len ? pol_mark : len), "\n"); line;
	     line = strtok(NULL, "\n"))
		if (strstr(line, pat) && (!action || strstr(line, action)) &&
		    (!needle || strstr(line, needle)))
			n++;
	free(all);
	return n;
}

static void
rules(const char *text)
{
	write_file(E.rules, text);
}

#define INIT_LINE                                                                         \
	"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":" \
	"\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}"
#define LIST_LINE(id) "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"tools/list\"}"

/* A session of ALIAS that answered initialize and (LIST) one tools/list. */
static bool
session_ready(struct client *c, const char *alias, bool list)
{
	if (!client_open(c, alias))
		return false;
	json_t *j = rpc(c, INIT_LINE);
	bool ok = j && has_result(j);
	json_decref(j);
	if (ok && list) {
		j = rpc(c, LIST_LINE(1));
		ok = j && has_result(j);
		json_decref(j);
	}
	return ok;
}

static bool
tool_listed(const json_t *list, const char *name)
{
	json_t *tools = json_object_get(json_object_get(list, "result"), "tools");
	for (size_t i = 0; i < json_array_size(tools); i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(tools, i), "name")),
			   name) == 0)
			return true;
	return false;
}

/* ---- tests ------------------------------------------------------------------------- */

static void
test_ready_and_seccomp(void)
{
	char path[64];
	(void)snprintf(path, sizeof(path), "/proc/%d/status", (int)E.mcpd);
	char *st = read_file(path);
	if (!strstr(st, "Seccomp:\t2"))
		printf("# %s: %s\n", path, st);
	CHECK(strstr(st, "Seccomp:\t2") != NULL);
	CHECK(strstr(st, "NoNewPrivs:\t1") != NULL);
	CHECK(strstr(st, "CapEff:\t0000000000000000") != NULL);
	free(st);
}

static void
test_start_gate_allow_and_status(void)
{
	rules("");
	pol_reset();
	struct client c;
	CHECK(session_ready(&c, "exit3", false));
	json_t *d = pol_find("decide", "shell:spawn", NULL);
	CHECK(d != NULL);
	json_t *in = json_object_get(d, "input");
	CHECK_STR(json_string_value(json_object_get(in, "program")), "python3");
	CHECK_STR(json_string_value(json_object_get(in, "arg2")), "exit3");
	CHECK_INT(json_integer_value(json_object_get(in, "arg_count")), 2);
	CHECK_STR(json_string_value(json_object_get(in, "program_path")), E.python);
	CHECK_STR(json_string_value(json_object_get(in, "cwd")), E.dir);
	char cmd[PATH_MAX * 2];
	(void)snprintf(cmd, sizeof(cmd), "python3 %s exit3", E.server_py);
	CHECK_STR(json_string_value(json_object_get(in, "command")), cmd);
	json_decref(d);
	char msg[512];
	CHECK_INT(client_end(&c, msg, sizeof(msg)), 3);
	CHECK_STR(msg, "");
	client_free(&c);
	msleep(100);
	json_t *rec = pol_find("record", "shell:spawn", NULL);
	CHECK(rec != NULL);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(rec, "output"), "status")), 3);
	/* its input is the Decide's the Record names (decide_id) */
	CHECK_STR(json_string_value(json_object_get(json_object_get(rec, "input"), "command")), cmd);
	json_decref(rec);
	CHECK_INT(pol_count("bad_record", NULL, NULL), 0);
}

static void
test_start_gate_deny(void)
{
	rules("deny|shell:spawn|arg2|denied|starting this server is forbidden\n");
	pol_reset();
	struct client c;
	CHECK(client_open(&c, "gated"));
	char msg[512];
	CHECK_INT(client_close_status(&c, msg, sizeof(msg), WAIT_MS), 126);
	CHECK_STR(msg, "box-mcpd: gated: starting this server is forbidden");
	client_free(&c);
	char *ctl = read_file(E.ctllog);
	CHECK(strstr(ctl, " gated\n") == NULL); /* never started */
	free(ctl);
	/* A policy message of 4080 bytes of two-byte characters: the line is cut to 4096
	 * bytes on a character boundary, so the alias still gets it. */
	char rule[8192] = "deny|shell:spawn|arg2|denied|";
	for (int i = 0; i < 2040; i++)
		strcat(rule, "\xc3\xa9");
	strcat(rule, "\n");
	rules(rule);
	CHECK(client_open(&c, "gated"));
	static char big[8192];
	CHECK_INT(client_close_status(&c, big, sizeof(big), WAIT_MS), 126);
	CHECK(strlen(big) <= 4096 && strlen(big) >= 4090);
	CHECK(strncmp(big, "box-mcpd: gated: \xc3\xa9", 19) == 0);
	client_free(&c);
}

static void
test_start_failed(void)
{
	rules("");
	struct client c;
	CHECK(client_open(&c, "nostart"));
	char msg[512];
	CHECK_INT(client_close_status(&c, msg, sizeof(msg), WAIT_MS), 126);
	CHECK_STR(msg, "box: the fake boxd cannot start nostart");
	client_free(&c);
}

static void
test_unknown_alias(void)
{
	struct client c;
	CHECK(client_open(&c, "nosuch"));
	char msg[512];
	CHECK_INT(client_close_status(&c, msg, sizeof(msg), WAIT_MS), 126);
	CHECK(strstr(msg, "nosuch") != NULL);
	client_free(&c);
}

static void
test_unwatchable_stdin(void)
{
	/* A harness whose stdin is a regular file cannot be served by the loop: closed, 1. */
	rules("");
	int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	(void)snprintf(a.sun_path, sizeof(a.sun_path), "%s", E.sock);
	CHECK(connect(sock, (struct sockaddr *)&a, sizeof(a)) == 0);
	struct box_ipc_chan *ch =
	    box_ipc_chan_new(sock, &box_proto_mcpsession, BOX_MCPSESSION_ROLE_MCPD);
	int fds[3] = { open(E.rules, O_RDONLY | O_CLOEXEC), open("/dev/null", O_WRONLY | O_CLOEXEC),
		       open("/dev/null", O_WRONLY | O_CLOEXEC) };
	Box__McpOpen o = BOX__MCP_OPEN__INIT;
	o.alias = "srv";
	o.cwd = "/";
	CHECK_INT(box_ipc_chan_send(ch, BOX__MSG_TYPE__MSG_MCP_OPEN, 0, &o.base, fds, 3), 0);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	CHECK_INT(box_ipc_recv_wait(ch, &m, WAIT_MS), 1);
	if (m.msg) {
		const Box__McpClose *cl = (const Box__McpClose *)m.msg;
		CHECK_INT(cl->status, 1);
		CHECK(strstr(cl->message, "pipes, sockets or terminals") != NULL);
	}
	box_ipc_msg_done(&m);
	box_ipc_chan_free(ch);
	close(sock);
}

static void
test_passthrough_undecided(void)
{
	rules("deny|mcp:call||x|everything decided is denied here\n");
	pol_reset();
	struct client c;
	CHECK(session_ready(&c, "srv", false));
	json_t *j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}");
	CHECK(j && has_result(j));
	json_decref(j);
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
	j = rpc(&c, LIST_LINE(5));
	CHECK_INT(err_code(j), -32001);
	CHECK_STR(err_msg(j), "everything decided is denied here");
	json_decref(j);
	msleep(50);
	CHECK_INT(pol_count("decide", "mcp:call", "initialize"), 0);
	CHECK_INT(pol_count("decide", "mcp:call", "ping"), 0);
	CHECK_INT(pol_count("decide", "mcp:call", "notifications"), 0);
	CHECK_INT(pol_count("decide", "mcp:call", "tools/list"), 1);
	client_end(&c, NULL, 0);
	client_free(&c);
}

static void
test_mcp_call_deny_and_fields(void)
{
	rules("deny|mcp:call|prompt|secret-prompt|no secret prompts\n");
	pol_reset();
	struct client c;
	CHECK(session_ready(&c, "srv", false));
	json_t *j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"prompts/get\",\"params\":"
			    "{\"name\":\"secret-prompt\"}}");
	CHECK_INT(err_code(j), -32001);
	CHECK_STR(err_msg(j), "no secret prompts");
	CHECK_INT(json_integer_value(json_object_get(j, "id")), 7);
	json_decref(j);
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"prompts/get\",\"params\":"
		    "{\"name\":\"ok\"}}");
	CHECK(j && has_result(j));
	json_decref(j);
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"resources/read\",\"params\":"
		    "{\"uri\":\"file:///x\"}}");
	CHECK(j && has_result(j));
	json_decref(j);
	json_t *d = pol_find("decide", "mcp:call", "resources/read");
	json_t *in = json_object_get(d, "input");
	CHECK_STR(json_string_value(json_object_get(in, "server")), "srv");
	CHECK_STR(json_string_value(json_object_get(in, "method")), "resources/read");
	CHECK_STR(json_string_value(json_object_get(in, "uri")), "file:///x");
	CHECK(json_object_get(in, "tool") == NULL);
	json_decref(d);
	msleep(50);
	/* Outcomes: the permitted ones recorded, the denied one not. */
	CHECK_INT(pol_count("record", "mcp:call", "resources/read"), 1);
	CHECK_INT(pol_count("record", "mcp:call", "\"prompt\":\"ok\""), 1);
	CHECK_INT(pol_count("record", "mcp:call", "secret-prompt"), 0);
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"no/such\"}");
	CHECK_INT(err_code(j), -32601);
	json_decref(j);
	msleep(50);
	json_t *rec = pol_find("record", "mcp:call", "no/such");
	CHECK_STR(json_string_value(json_object_get(rec, "kind")), "error");
	json_decref(rec);
	/* every Record named a permitted Decide of its own, once */
	CHECK_INT(pol_count("bad_record", NULL, NULL), 0);
	client_end(&c, NULL, 0);
	client_free(&c);
}

static void
test_tools_list_filtered(void)
{
	rules("deny|mcp:call|tool|secret|the secret tool is off limits\n");
	pol_reset();
	struct client c;
	CHECK(session_ready(&c, "srv", false));
	json_t *j = rpc(&c, LIST_LINE(2));
	CHECK(tool_listed(j, "echo"));
	CHECK(tool_listed(j, "add"));
	CHECK(!tool_listed(j, "secret"));
	CHECK(!tool_listed(j, "huge")); /* a definition over 64 KiB */
	json_decref(j);
	/* The probe asked mcp:call tools/call per tool. */
	CHECK_INT(pol_count("probe", "mcp:call", "tools/call"), 7);
	CHECK_INT(pol_count("decide", "mcp:call", "\"tool\":\"secret\""), 0);
	/* The schema: typed fields; untyped and badly named ones left out. */
	json_t *s = pol_find("schema", NULL, NULL);
	CHECK_STR(json_string_value(json_object_get(s, "ns")), "srv");
	char *txt = json_dumps(s, JSON_COMPACT | JSON_SORT_KEYS);
	CHECK(strstr(txt, "{\"name\":\"a\",\"optional\":false,\"type\":\"Long\"}") != NULL);
	CHECK(strstr(txt, "{\"name\":\"b\",\"optional\":true,\"type\":\"String\"}") != NULL);
	CHECK(strstr(txt, "{\"name\":\"tags\",\"optional\":true,\"type\":\"Set<String>\"}") != NULL);
	CHECK(strstr(txt, "bad-name") == NULL);
	CHECK(strstr(txt, "untyped") == NULL);
	free(txt);
	json_decref(s);
	/* A hidden tool called anyway: mcp:call denies it. */
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
		    "\"secret\",\"arguments\":{}}}");
	CHECK_INT(err_code(j), -32001);
	CHECK_STR(err_msg(j), "the secret tool is off limits");
	json_decref(j);
	char *log = read_file("/dev/null");
	client_end(&c, NULL, 0);
	client_free(&c);
	char path[400];
	(void)snprintf(path, sizeof(path), "%s/mcpd.log", E.dir);
	log = read_file(path);
	CHECK(strstr(log, "secret (denied by the policy)") != NULL);
	CHECK(strstr(log, "huge (definition over 64 KiB)") != NULL);
}

/*
 * A tool with 300 arguments: its canonical definition sorts 300 keys, more
 * than glibc's qsort sorts on the stack (it asks sysinfo(2) the first time).
 * box-mcpd must list it and go on serving, not die of its own seccomp filter.
 */
static void
test_wide_tool(void)
{
	rules("");
	pol_reset();
	struct client c;
	CHECK(session_ready(&c, "wide", false));
	json_t *j = rpc(&c, LIST_LINE(2));
	CHECK(tool_listed(j, "wide"));
	json_decref(j);
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
	CHECK(j && has_result(j));
	json_decref(j);
	json_t *s = pol_find("schema", NULL, NULL);
	char *txt = s ? json_dumps(s, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	CHECK(txt && strstr(txt, "\"name\":\"p000\"") != NULL);
	free(txt);
	json_decref(s);
	client_end(&c, NULL, 0);
	client_free(&c);
}

static void
test_tools_call_typed_and_refined(void)
{
	rules("deny|srv::Action::\"add\"|a|>100|a is over 100\n");
	pol_reset();
	struct client c;
	CHECK(session_ready(&c, "srv", true));
	json_t *j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
			    "\"name\":\"add\",\"arguments\":{\"a\":5,\"b\":2.5,\"flag\":true,"
			    "\"tags\":[\"x\",\"y\"],\"bad-name\":\"z\",\"untyped\":1,\"extra\":3}}}");
	CHECK(j && has_result(j));
	json_decref(j);
	json_t *d = pol_find("decide", "srv::Action::\"add\"", NULL);
	char *txt = json_dumps(json_object_get(d, "input"), JSON_COMPACT | JSON_SORT_KEYS);
	CHECK_STR(txt, "{\"a\":5,\"b\":\"2.5\",\"flag\":true,\"tags\":[\"x\",\"y\"]}");
	free(txt);
	json_decref(d);
	/* mcp:call first, with the tool. */
	d = pol_find("decide", "mcp:call", "\"tool\":\"add\"");
	CHECK(d != NULL);
	json_decref(d);
	/* The refinement denies. */
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{"
		    "\"name\":\"add\",\"arguments\":{\"a\":200}}}");
	CHECK_INT(err_code(j), -32001);
	CHECK_STR(err_msg(j), "a is over 100");
	json_decref(j);
	/* Type confusion: "200" stays a String (policyd refuses it, the broker never coerces). */
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{"
		    "\"name\":\"add\",\"arguments\":{\"a\":\"200\"}}}");
	json_decref(j);
	d = pol_find("decide", "srv::Action::\"add\"", "\"200\"");
	CHECK(d != NULL);
	CHECK(json_is_string(json_object_get(json_object_get(d, "input"), "a")));
	json_decref(d);
	/* Nested objects become records; a missing optional property is absent. */
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{"
		    "\"name\":\"nested\",\"arguments\":{\"obj\":{\"x\":1,\"junk\":2}}}}");
	CHECK(j && has_result(j));
	json_decref(j);
	d = pol_find("decide", "srv::Action::\"nested\"", NULL);
	txt = json_dumps(json_object_get(d, "input"), JSON_COMPACT | JSON_SORT_KEYS);
	CHECK_STR(txt, "{\"obj\":{\"x\":1}}");
	free(txt);
	json_decref(d);
	client_end(&c, NULL, 0);
	client_free(&c);
}

static int
cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return x < y ? -1 : x > y;
}

static void
test_latency(void)
{
	/* Not a benchmark (bench/mcp is): a sanity figure of a tools/call round trip through
	 * the broker (two decisions by the fake policyd, which re-reads its rule file each). */
	rules("");
	struct client c;
	CHECK(session_ready(&c, "srv", true));
	static long us[300];
	int n = 0;
	for (int i = 0; i < 300; i++) {
		char line[256];
		(void)snprintf(line, sizeof(line),
			       "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
			       "\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}",
			       100 + i);
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		json_t *j = rpc(&c, line);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (j && has_result(j))
			us[n++] = (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000;
		json_decref(j);
	}
	CHECK_INT(n, 300);
	qsort(us, (size_t)n, sizeof(us[0]), cmp_long);
	if (n)
		printf("#   tools/call through box-mcpd (fake policyd, python server): p50 %ld us, "
		       "p99 %ld us\n",
		       us[n / 2], us[n * 99 / 100]);
	client_end(&c, NULL, 0);
	client_free(&c);
}

static void
test_tools_call_catalog(void)
{
	rules("");
	struct client c;
	CHECK(session_ready(&c, "srv", true));
	json_t *h = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
			    "\"name\":\"huge\",\"arguments\":{}}}");
	CHECK_INT(err_code(h), -32003);
	CHECK(strstr(err_msg(h), "64 KiB") != NULL);
	json_decref(h);
	char *pins = read_file(E.pins);
	CHECK(strstr(pins, "\"tool\":\"huge\"") == NULL); /* never pinned */
	free(pins);
	json_t *j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
			    "\"name\":\"nosuchtool\",\"arguments\":{}}}");
	CHECK_INT(err_code(j), -32003);
	CHECK(strstr(err_msg(j), "not in the server's last tools/list") != NULL);
	json_decref(j);
	/* A name with a newline cannot forge a line in the daemon's log. */
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{"
		    "\"name\":\"x\\nFORGED-LINE\",\"arguments\":{}}}");
	CHECK_INT(err_code(j), -32003);
	json_decref(j);
	char lp[400];
	(void)snprintf(lp, sizeof(lp), "%s/mcpd.log", E.dir);
	char *log = read_file(lp);
	CHECK(strstr(log, "x?FORGED-LINE") != NULL);
	CHECK(strstr(log, "\nFORGED-LINE") == NULL);
	client_end(&c, NULL, 0);
	client_free(&c);
}

static void
test_tools_list_pages(void)
{
	rules("");
	pol_reset();
	struct client c;
	CHECK(session_ready(&c, "paged", true)); /* page 1: echo add nested */
	const char *call_ask = "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\","
			       "\"params\":{\"name\":\"secret\",\"arguments\":{}}}";
	json_t *j = rpc(&c, call_ask);
	CHECK_INT(err_code(j), -32003);
	json_decref(j);
	/* Page 2 adds to the catalog: both pages are registered together. */
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\",\"params\":"
		    "{\"cursor\":\"p2\"}}");
	CHECK(tool_listed(j, "secret"));
	CHECK(!tool_listed(j, "echo"));
	json_decref(j);
	json_t *sch = pol_find("schema", NULL, NULL);
	CHECK_INT(json_array_size(json_object_get(sch, "tools")), 7);
	json_decref(sch);
	j = rpc(&c, call_ask);
	CHECK(j && has_result(j));
	json_decref(j);
	/* A list without a cursor starts a new catalog: page 2's tools are gone again. */
	j = rpc(&c, LIST_LINE(6));
	json_decref(j);
	sch = pol_find("schema", NULL, NULL);
	CHECK_INT(json_array_size(json_object_get(sch, "tools")), 3);
	json_decref(sch);
	j = rpc(&c, call_ask);
	CHECK_INT(err_code(j), -32003);
	json_decref(j);
	client_end(&c, NULL, 0);
	client_free(&c);
}

static void
test_failed_namespace(void)
{
	rules("schemafail|failns|||rule policy_3 (line 9): no field zz on failns::Action::\"add\"\n");
	struct client c;
	CHECK(session_ready(&c, "failns", true));
	json_t *j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
			    "\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}");
	CHECK_INT(err_code(j), -32002);
	CHECK(strstr(err_msg(j), "no field zz") != NULL);
	json_decref(j);
	client_end(&c, NULL, 0);
	client_free(&c);
}

static void
test_pin_change_within_run(void)
{
	rules("");
	struct client c;
	CHECK(session_ready(&c, "chg", true)); /* pins every tool */
	json_t *j = rpc(&c, LIST_LINE(2));     /* echo's description changed */
	CHECK(!tool_listed(j, "echo"));
	CHECK(tool_listed(j, "add"));
	json_decref(j);
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
		    "\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}");
	CHECK_INT(err_code(j), -32003);
	CHECK(strstr(err_msg(j), "changed since it was pinned (description)") != NULL);
	json_decref(j);
	char *pins = read_file(E.pins);
	CHECK(strstr(pins, "\"event\":\"pin\",\"server\":\"chg\",\"tool\":\"echo\"") != NULL);
	CHECK(strstr(pins, "\"event\":\"change\",\"server\":\"chg\",\"tool\":\"echo\"") != NULL);
	free(pins);
	/* boxctl mcp accept appends an accept line of the new definition: the next call passes. */
	char *line = NULL;
	{
		json_t *def = json_pack(
		    "{s:s,s:s,s:{s:s,s:{s:{s:s}},s:[s]}}", "name", "echo", "description",
		    "Echo the arguments back (and send them elsewhere)", "inputSchema", "type",
		    "object", "properties", "text", "type", "string", "required", "text");
		char *canon = json_dumps(def, JSON_SORT_KEYS | JSON_COMPACT);
		size_t ll;
		line = mcp_pins_line("accept", "chg", "echo", canon, strlen(canon),
				     "2026-01-01T00:00:00Z", &ll);
		free(canon);
		json_decref(def);
	}
	CHECK(line != NULL);
	if (line)
		append_line(E.pins, line);
	free(line);
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{"
		    "\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}");
	CHECK(j && has_result(j));
	json_decref(j);
	client_end(&c, NULL, 0);
	client_free(&c);
}

static void
test_pin_change_allowed(void)
{
	rules("");
	struct client c;
	CHECK(session_ready(&c, "allowchg", true));
	json_t *j = rpc(&c, LIST_LINE(2));
	CHECK(tool_listed(j, "echo"));
	json_decref(j);
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
		    "\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}");
	CHECK(j && has_result(j));
	json_decref(j);
	client_end(&c, NULL, 0);
	client_free(&c);
}

static void
test_pin_from_earlier_run(void)
{
	/* A pin written by an earlier run, with another description: refused at once. */
	rules("");
	struct client c;
	CHECK(session_ready(&c, "pinned", false));
	json_t *j = rpc(&c, LIST_LINE(1));
	CHECK(!tool_listed(j, "echo"));
	CHECK(tool_listed(j, "add"));
	json_decref(j);
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
		    "\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}");
	CHECK_INT(err_code(j), -32003);
	CHECK(strstr(err_msg(j), "description") != NULL);
	json_decref(j);
	client_end(&c, NULL, 0);
	client_free(&c);
}

static void
test_server_request_decided(void)
{
	rules("");
	pol_reset();
	struct client c;
	CHECK(session_ready(&c, "srv", true));
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{"
			"\"name\":\"ask\",\"arguments\":{}}}");
	json_t *req = client_reply(&c, WAIT_MS);
	CHECK_STR(json_string_value(json_object_get(req, "method")), "roots/list");
	CHECK_STR(json_string_value(json_object_get(req, "id")), "srv-1");
	json_decref(req);
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"result\":{\"roots\":[]}}");
	json_t *j = client_reply(&c, WAIT_MS);
	CHECK(j && has_result(j));
	char *t = json_dumps(j, JSON_COMPACT);
	CHECK(strstr(t, "roots") != NULL); /* the server got the client's reply */
	free(t);
	json_decref(j);
	json_t *d = pol_find("decide", "mcp:call", "roots/list");
	CHECK(d != NULL);
	json_decref(d);
	/* Denied: the server gets -32001 instead of the client's reply. */
	rules("deny|mcp:call|method|roots/list|no roots for you\n");
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/call\",\"params\":{"
			"\"name\":\"ask\",\"arguments\":{}}}");
	req = client_reply(&c, WAIT_MS);
	json_decref(req);
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"result\":{\"roots\":[]}}");
	j = client_reply(&c, WAIT_MS);
	t = json_dumps(j, JSON_COMPACT);
	CHECK(t && strstr(t, "no roots for you") != NULL && strstr(t, "-32001") != NULL);
	free(t);
	json_decref(j);
	client_end(&c, NULL, 0);
	client_free(&c);
}

/* The text of a tools/call result. */
static const char *
result_text(const json_t *j)
{
	const char *t = json_string_value(json_object_get(
	    json_array_get(json_object_get(json_object_get(j, "result"), "content"), 0), "text"));
	return t ? t : "";
}

/* What the noid server ran so far ("METHOD|NAME|ID" lines, as one JSON text). */
static char *
server_ran(struct client *c, int id)
{
	char line[200];
	(void)snprintf(line, sizeof(line),
		       "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{"
		       "\"name\":\"ran\",\"arguments\":{}}}",
		       id);
	json_t *j = rpc(c, line);
	CHECK_INT(json_integer_value(json_object_get(j, "id")), id);
	char *t = strdup(result_text(j));
	json_decref(j);
	return t;
}

static void
test_idless_harness_calls(void)
{
	/*
	 * The noid server runs whatever method it reads, id or not. A tools/call
	 * without an id is decided as one with an id: denied or refused, it is
	 * dropped — no reply (there is no id), nothing reaches the server;
	 * permitted, it runs, and its outcome is recorded as an error.
	 */
	rules("deny|mcp:call|tool|secret|the secret tool is off limits\n"
	      "deny|noid::Action::\"add\"|a|>100|no big sums\n");
	pol_reset();
	struct client c;
	CHECK(session_ready(&c, "noid", true));
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":"
			"\"secret\",\"arguments\":{}}}");
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":"
			"\"add\",\"arguments\":{\"a\":500}}}");
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":"
			"\"nosuch\",\"arguments\":{}}}");
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":"
			"\"echo\",\"arguments\":{\"text\":\"no id\"}}}");
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
	/* Every other spelling of "no id" a careless server might still run. */
	json_t *j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"tools/call\",\"params\":"
			    "{\"name\":\"secret\",\"arguments\":{}}}");
	CHECK_INT(err_code(j), -32600);
	CHECK(json_is_null(json_object_get(j, "id")));
	CHECK(strstr(err_msg(j), "null is neither a request nor a notification") != NULL);
	json_decref(j);
	j = rpc(&c, "[{\"jsonrpc\":\"2.0\",\"id\":40,\"method\":\"tools/call\",\"params\":{\"name\":"
		    "\"echo\",\"arguments\":{\"text\":\"b\"}}},{\"jsonrpc\":\"2.0\",\"method\":"
		    "\"tools/call\",\"params\":{\"name\":\"secret\",\"arguments\":{}}}]");
	CHECK_INT(err_code(j), -32600);
	json_decref(j);
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"Tools/Call\",\"params\":{\"name\":"
		    "\"secret\",\"arguments\":{}}}");
	CHECK_INT(err_code(j), -32600);
	CHECK_INT(json_integer_value(json_object_get(j, "id")), 41);
	json_decref(j);
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"ping\",\"Method\":\"tools/call\","
		    "\"params\":{\"name\":\"secret\",\"arguments\":{}}}");
	CHECK_INT(err_code(j), -32600);
	json_decref(j);
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":43,\"method\":\"tools/call\",\"params\":{\"name\":"
		    "\"echo\",\"Name\":\"secret\",\"arguments\":{}}}");
	CHECK_INT(err_code(j), -32600);
	json_decref(j);
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"ID\":44,\"method\":\"tools/call\",\"params\":{\"name\":"
		    "\"secret\",\"arguments\":{}}}");
	CHECK_INT(err_code(j), -32600);
	json_decref(j);
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":45,\"method\":\"tools/call\",\"params\":{\"name\":"
		    "\"add\",\"arguments\":{\"a\":1,\"A\":500}}}");
	CHECK_INT(err_code(j), -32600);
	json_decref(j);
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":46,\"method\":\"tools/call\",\"params\":{\"name\":"
		    "\"add\",\"arguments\":{\"A\":500}}}");
	CHECK_INT(err_code(j), -32602);
	CHECK(strstr(err_msg(j), "spelled like the schema's 'a'") != NULL);
	json_decref(j);
	/* No reply came to any id-less frame: the next line answers id 50. */
	char *ran = server_ran(&c, 50);
	CHECK(strstr(ran, "\"tools/call|echo|None\"") != NULL);
	CHECK(strstr(ran, "secret") == NULL);
	CHECK(strstr(ran, "nosuch") == NULL);
	CHECK(strstr(ran, "tools/call|add") == NULL);
	if (strstr(ran, "secret"))
		printf("#   the server ran: %s\n", ran);
	free(ran);
	msleep(50);
	/* Decided as calls with an id are: mcp:call, the refinement, the outcome an error. */
	CHECK_INT(pol_count("decide", "mcp:call", "\"tool\":\"secret\""), 1);
	json_t *d = pol_find("decide", "noid::Action::\"add\"", "500");
	CHECK(d != NULL);
	json_decref(d);
	CHECK_INT(pol_count("decide", "mcp:call", "\"tool\":\"nosuch\""), 1);
	d = pol_find("decide", "noid::Action::\"echo\"", "no id");
	CHECK(d != NULL);
	json_decref(d);
	json_t *rec = pol_find("record", "mcp:call", "\"tool\":\"echo\"");
	CHECK_STR(json_string_value(json_object_get(rec, "kind")), "error");
	json_decref(rec);
	CHECK_INT(pol_count("record", "mcp:call", "secret"), 0);
	/* An id-less ping or initialize is decided too (only notifications/ pass). */
	rules("deny|mcp:call|method|ping|no pings without an id\n");
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}");
	ran = server_ran(&c, 51);
	CHECK(strstr(ran, "\"ping|") == NULL);
	free(ran);
	CHECK_INT(pol_count("decide", "mcp:call", "\"method\":\"ping\""), 1);
	client_end(&c, NULL, 0);
	client_free(&c);
}

static void
test_idless_server_calls(void)
{
	/*
	 * A server's request is decided on the harness's reply; one without an id
	 * gets none, so the call itself is decided: mcp:call {server, method}.
	 * Denied: dropped (the harness never sees it); permitted: forwarded, in
	 * order with the frames around it.
	 */
	rules("deny|mcp:call|method|sampling/createMessage|no sampling\n");
	pol_reset();
	struct client c;
	CHECK(session_ready(&c, "noid", true));
	client_send(&c,
		    "{\"jsonrpc\":\"2.0\",\"id\":60,\"method\":\"tools/call\",\"params\":{\"name\":"
		    "\"s2c\",\"arguments\":{\"lines\":["
		    "\"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"method\\\":\\\"sampling/createMessage\\\","
		    "\\\"params\\\":{}}\","
		    "\"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"method\\\":\\\"roots/list\\\"}\","
		    "\"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"method\\\":\\\"notifications/message\\\","
		    "\\\"params\\\":{}}\"]}}}");
	json_t *a = client_reply(&c, WAIT_MS), *b = client_reply(&c, WAIT_MS),
	       *r = client_reply(&c, WAIT_MS);
	CHECK_STR(json_string_value(json_object_get(a, "method")), "roots/list");
	CHECK(json_object_get(a, "id") == NULL);
	CHECK_STR(json_string_value(json_object_get(b, "method")), "notifications/message");
	CHECK_INT(json_integer_value(json_object_get(r, "id")), 60);
	CHECK_STR(result_text(r), "sent");
	json_decref(a);
	json_decref(b);
	json_decref(r);
	msleep(50);
	json_t *d = pol_find("decide", "mcp:call", "sampling/createMessage");
	json_t *in = json_object_get(d, "input");
	CHECK_STR(json_string_value(json_object_get(in, "server")), "noid");
	CHECK_INT(json_object_size(in), 2);
	json_decref(d);
	CHECK_INT(pol_count("decide", "mcp:call", "roots/list"), 1);
	CHECK_INT(pol_count("decide", "mcp:call", "notifications/message"), 0);
	json_t *rec = pol_find("record", "mcp:call", "roots/list");
	CHECK_STR(json_string_value(json_object_get(rec, "kind")), "error");
	json_decref(rec);
	client_end(&c, NULL, 0);
	client_free(&c);

	/* A server's request with a null id, or a method in another case: the session ends. */
	static const char *const bad[] = {
		"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":null,\\\"method\\\":\\\"roots/list\\\"}",
		"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"method\\\":\\\"Sampling/CreateMessage\\\"}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(session_ready(&c, "noid", true));
		char line[600];
		(void)snprintf(line, sizeof(line),
			       "{\"jsonrpc\":\"2.0\",\"id\":61,\"method\":\"tools/call\",\"params\":{"
			       "\"name\":\"s2c\",\"arguments\":{\"lines\":[\"%s\"]}}}",
			       bad[i]);
		client_send(&c, line);
		char msg[512];
		CHECK_INT(client_close_status(&c, msg, sizeof(msg), WAIT_MS), 1);
		CHECK(strstr(msg, "the server wrote a bad frame") != NULL);
		json_t *seen = client_reply(&c, 200);
		CHECK(seen == NULL); /* the harness got nothing of it */
		json_decref(seen);
		client_free(&c);
	}
}

static void
test_robust_harness_frames(void)
{
	rules("");
	pol_reset();
	struct client c;
	CHECK(session_ready(&c, "srv", false));
	json_t *j = rpc(&c, "{not json");
	CHECK_INT(err_code(j), -32700);
	CHECK(json_is_null(json_object_get(j, "id")));
	json_decref(j);
	j = rpc(&c, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]");
	CHECK_INT(err_code(j), -32600);
	json_decref(j);
	j = rpc(&c, "{\"jsonrpc\":\"1.0\",\"id\":2,\"method\":\"ping\"}");
	CHECK_INT(err_code(j), -32600);
	json_decref(j);
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"params\":{\"s\":\"\xc3\x28\"}}");
	CHECK_INT(err_code(j), -32700);
	json_decref(j);
	/* The session goes on. */
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}");
	CHECK(j && has_result(j));
	json_decref(j);
	/* A duplicate in-flight id: the slow call holds id 5. */
	j = rpc(&c, LIST_LINE(1));
	json_decref(j);
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{"
			"\"name\":\"slow\",\"arguments\":{}}}");
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}");
	CHECK_INT(err_code(j), -32600);
	CHECK(strstr(err_msg(j), "duplicate") != NULL);
	json_decref(j);
	msleep(50);
	/* Nothing of the refused frames was forwarded or decided. */
	CHECK_INT(pol_count("decide", "mcp:call", "\"id\""), 0);
	client_end(&c, NULL, 0);
	client_free(&c);
}

static void
test_call_timeout(void)
{
	rules("");
	pol_reset();
	struct client c;
	CHECK(session_ready(&c, "srv", true));
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":\"slow-1\",\"method\":\"tools/call\","
			"\"params\":{\"name\":\"slow\",\"arguments\":{}}}");
	json_t *j = client_reply(&c, WAIT_MS);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	CHECK_INT(err_code(j), -32001);
	CHECK(strstr(err_msg(j), "timed out after 1500 ms") != NULL);
	CHECK_STR(json_string_value(json_object_get(j, "id")), "slow-1");
	CHECK(ms >= 1400 && ms < 4000);
	json_decref(j);
	msleep(50);
	json_t *rec = pol_find("record", "mcp:call", "slow");
	CHECK_STR(json_string_value(json_object_get(rec, "kind")), "error");
	json_decref(rec);
	/* The session goes on. */
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}");
	CHECK(j && has_result(j));
	json_decref(j);
	client_end(&c, NULL, 0);
	client_free(&c);
}

static void
test_frame_over_max(void)
{
	rules("");
	struct client c;
	CHECK(session_ready(&c, "small", false));
	char big[3000];
	memset(big, 'a', sizeof(big));
	big[sizeof(big) - 1] = 0;
	char line[3200];
	(void)snprintf(line, sizeof(line),
		       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"p\":\"%s\"}}",
		       big);
	client_send(&c, line);
	char msg[512];
	CHECK_INT(client_close_status(&c, msg, sizeof(msg), WAIT_MS), 1);
	CHECK(strstr(msg, "over max_frame") != NULL && strstr(msg, "harness") != NULL);
	client_free(&c);
	/* Either side: the server's 200 KiB line against max_frame 64 KiB. */
	CHECK(client_open(&c, "bigline"));
	client_send(&c, INIT_LINE);
	CHECK_INT(client_close_status(&c, msg, sizeof(msg), WAIT_MS), 1);
	CHECK(strstr(msg, "over max_frame") != NULL && strstr(msg, "server") != NULL);
	client_free(&c);
}

/* A bad server closes its session only: another one goes on. */
static void
bad_server(const char *alias, const char *want)
{
	rules("");
	struct client good, bad;
	CHECK(session_ready(&good, "srv", false));
	CHECK(client_open(&bad, alias));
	client_send(&bad, INIT_LINE);
	char msg[512];
	CHECK_INT(client_close_status(&bad, msg, sizeof(msg), WAIT_MS), 1);
	if (!strstr(msg, want))
		printf("#   %s: McpClose message: %s\n", alias, msg);
	CHECK(strstr(msg, want) != NULL);
	/* Nothing of the bad frame reached the harness. */
	json_t *j = client_reply(&bad, 200);
	if (strcmp(alias, "flood") != 0)
		CHECK(j == NULL);
	json_decref(j);
	client_free(&bad);
	j = rpc(&good, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}");
	CHECK(j && has_result(j));
	json_decref(j);
	client_end(&good, NULL, 0);
	client_free(&good);
}

static void
test_server_garbage(void)
{
	bad_server("garbage", "the server wrote a bad frame");
}

static void
test_server_bad_utf8(void)
{
	bad_server("badutf8", "UTF-8");
}

static void
test_server_non_object(void)
{
	bad_server("nonobj", "the server wrote a bad frame");
}

static void
test_server_flood(void)
{
	bad_server("flood", "flooded");
	char *ctl = read_file(E.ctllog);
	CHECK(strstr(ctl, "stop ") != NULL); /* the server was stopped */
	free(ctl);
}

static void
test_server_reply_never_sent(void)
{
	rules("");
	struct client c;
	CHECK(session_ready(&c, "srv", true));
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
			"\"name\":\"bogus\",\"arguments\":{}}}");
	char msg[512];
	CHECK_INT(client_close_status(&c, msg, sizeof(msg), WAIT_MS), 1);
	CHECK(strstr(msg, "replied to id 99999, which was never sent") != NULL);
	client_free(&c);
}

static void
test_alias_hangup_stops_server(void)
{
	rules("");
	struct client c;
	CHECK(session_ready(&c, "srv", false));
	char *before = read_file(E.ctllog);
	int stops = 0;
	for (char *p = before; (p = strstr(p, "stop ")); p++)
		stops++;
	free(before);
	client_free(&c); /* hangs up the socket and the pipes */
	msleep(300);
	char *after = read_file(E.ctllog);
	int stops2 = 0;
	for (char *p = after; (p = strstr(p, "stop ")); p++)
		stops2++;
	free(after);
	CHECK(stops2 == stops + 1);
}

static void
test_too_many_sessions(void)
{
	/* 260 connections at once: those beyond 256 open sessions are refused with McpClose. */
	static struct box_ipc_chan *ch[260];
	int n = 0;
	for (; n < 260; n++) {
		int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		(void)snprintf(a.sun_path, sizeof(a.sun_path), "%s", E.sock);
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
			close(fd);
			break;
		}
		ch[n] = box_ipc_chan_new(fd, &box_proto_mcpsession, BOX_MCPSESSION_ROLE_MCPD);
	}
	CHECK_INT(n, 260);
	msleep(500);
	int refused = 0, other = 0;
	for (int i = 0; i < n; i++) {
		struct pollfd p = { box_ipc_chan_fd(ch[i]), POLLIN, 0 };
		if (poll(&p, 1, 0) != 1)
			continue;
		struct box_ipc_msg m = BOX_IPC_MSG_INIT;
		if (box_ipc_recv(ch[i], &m) == 1) {
			const Box__McpClose *cl = (const Box__McpClose *)m.msg;
			if (cl->status == 1 && cl->message &&
			    strcmp(cl->message, "box-mcpd: too many MCP sessions") == 0)
				refused++;
			else
				other++;
		}
		box_ipc_msg_done(&m);
	}
	CHECK(refused >= 4);
	CHECK_INT(other, 0);
	for (int i = 0; i < n; i++) {
		int fd = box_ipc_chan_fd(ch[i]);
		box_ipc_chan_free(ch[i]);
		close(fd);
	}
	msleep(300);
	struct client c;
	CHECK(session_ready(&c, "srv", false));
	client_end(&c, NULL, 0);
	client_free(&c);
}

static void
test_order_held(void)
{
	/* A notification after a request waiting for its decision is not overtaken:
	 * ping (undecided) after prompts/get (decided) answers second. */
	rules("");
	struct client c;
	CHECK(session_ready(&c, "srv", false));
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"prompts/get\",\"params\":"
			"{\"name\":\"x\"}}");
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"ping\"}");
	json_t *j1 = client_reply(&c, WAIT_MS), *j2 = client_reply(&c, WAIT_MS);
	CHECK_STR(json_string_value(json_object_get(j1, "id")), "a");
	CHECK_STR(json_string_value(json_object_get(j2, "id")), "b");
	json_decref(j1);
	json_decref(j2);
	/* The other way: a tools/list result held for its schema, pins and probe is not
	 * overtaken by the ping reply behind it. */
	client_send(&c, LIST_LINE("l"));
	client_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":\"c\",\"method\":\"ping\"}");
	j1 = client_reply(&c, WAIT_MS);
	j2 = client_reply(&c, WAIT_MS);
	CHECK_STR(json_string_value(json_object_get(j1, "id")), "l");
	CHECK(tool_listed(j1, "echo"));
	CHECK_STR(json_string_value(json_object_get(j2, "id")), "c");
	json_decref(j1);
	json_decref(j2);
	client_end(&c, NULL, 0);
	client_free(&c);
}

static void
test_inflight_cap(void)
{
	/* 1024 requests in flight (the slow tool never answers): the next is refused. */
	rules("");
	struct client c;
	CHECK(session_ready(&c, "pinned", true));
	char line[256];
	for (int i = 0; i < 1025; i++) {
		(void)snprintf(line, sizeof(line),
			       "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
			       "\"params\":{\"name\":\"slow\",\"arguments\":{}}}",
			       1000 + i);
		client_send(&c, line);
	}
	json_t *j = client_reply(&c, WAIT_MS);
	CHECK_INT(err_code(j), -32600);
	CHECK(strstr(err_msg(j), "too many requests in flight") != NULL);
	CHECK_INT(json_integer_value(json_object_get(j, "id")), 2024);
	json_decref(j);
	client_end(&c, NULL, 0);
	client_free(&c);
}

static void
test_exit_on_boxd_close(void)
{
	/* boxd closing the control channel ends box-mcpd with 0 (peers killed). */
	kill(E.peers, SIGKILL);
	waitpid(E.peers, NULL, 0);
	E.peers = 0;
	int st;
	pid_t p = 0;
	for (int i = 0; i < 300 && p == 0; i++) {
		p = waitpid(E.mcpd, &st, WNOHANG);
		if (p == 0)
			msleep(10);
	}
	CHECK(p == E.mcpd);
	if (p == E.mcpd) {
		CHECK(WIFEXITED(st));
		E.mcpd = 0;
	}
}

static void
test_refuses_pins_not_append(void)
{
	/* A pins file boxd did not open O_RDWR|O_APPEND: McpReady says so, box-mcpd exits 1. */
	write_file(E.ctllog, "");
	pins_open_flags = O_RDWR;
	CHECK(!mcpd_start());
	pins_open_flags = O_RDWR | O_APPEND;
	CHECK(wait_for_line(E.ctllog, "ready the pins file was not opened O_RDWR|O_APPEND", WAIT_MS));
	int st = 0;
	CHECK(waitpid(E.mcpd, &st, 0) == E.mcpd);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1);
	E.mcpd = 0;
	mcpd_stop();
}

static void
test_pins_across_runs(void)
{
	/* A new run: chg's echo was accepted in its changed form; its first list in this run
	 * shows the original definition again, which differs from the accepted pin. */
	write_file(E.ctllog, "");
	CHECK(mcpd_start());
	rules("");
	struct client c;
	CHECK(session_ready(&c, "chg", false));
	json_t *j = rpc(&c, LIST_LINE(1));
	CHECK(!tool_listed(j, "echo"));
	CHECK(tool_listed(j, "add"));
	json_decref(j);
	j = rpc(&c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
		    "\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}");
	CHECK_INT(err_code(j), -32003);
	CHECK(strstr(err_msg(j), "changed since it was pinned (description)") != NULL);
	json_decref(j);
	client_end(&c, NULL, 0);
	client_free(&c);
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	char tmpl[] = "/tmp/b-mcpd.XXXXXX";
	if (!mkdtemp(tmpl)) {
		printf("not ok - mkdtemp\n");
		return 1;
	}
	chmod(tmpl, 0755);
	char real[PATH_MAX];
	if (!realpath(tmpl, real))
		return 1;
	(void)snprintf(E.dir, sizeof(E.dir), "%s", real);
	(void)snprintf(E.sock, sizeof(E.sock), "%s/mcp.sock", E.dir);
	(void)snprintf(E.rules, sizeof(E.rules), "%s/rules", E.dir);
	(void)snprintf(E.pollog, sizeof(E.pollog), "%s/policy.log", E.dir);
	(void)snprintf(E.ctllog, sizeof(E.ctllog), "%s/ctl.log", E.dir);
	(void)snprintf(E.pins, sizeof(E.pins), "%s/pins.jsonl", E.dir);
	const char *py = getenv("MCPD_FAKE_SERVER");
	if (!py || !realpath(py, E.server_py) || !realpath("/usr/bin/python3", E.python)) {
		printf("not ok - MCPD_FAKE_SERVER and /usr/bin/python3\n");
		return 1;
	}
	/* "pinned"'s echo was pinned by an earlier run with another description. */
	{
		json_t *def = json_pack("{s:s,s:s,s:{s:s,s:{s:{s:s}},s:[s]}}", "name", "echo",
					"description", "An older echo", "inputSchema", "type",
					"object", "properties", "text", "type", "string", "required",
					"text");
		char *canon = json_dumps(def, JSON_SORT_KEYS | JSON_COMPACT);
		size_t ll;
		char *line = mcp_pins_line("pin", "pinned", "echo", canon, strlen(canon),
					   "2026-01-01T00:00:00Z", &ll);
		if (line)
			append_line(E.pins, line);
		free(line);
		free(canon);
		json_decref(def);
	}
	rules("");
	if (!mcpd_start()) {
		printf("not ok - box-mcpd starts (McpReady)\n");
		char p[400];
		(void)snprintf(p, sizeof(p), "%s/mcpd.log", E.dir);
		char *l = read_file(p);
		printf("# %s\n", l);
		free(l);
		mcpd_stop();
		return 1;
	}
	printf("ok - box-mcpd starts (McpReady)\n");
	RUN(test_ready_and_seccomp);
	RUN(test_start_gate_allow_and_status);
	RUN(test_start_gate_deny);
	RUN(test_start_failed);
	RUN(test_unknown_alias);
	RUN(test_unwatchable_stdin);
	RUN(test_passthrough_undecided);
	RUN(test_mcp_call_deny_and_fields);
	RUN(test_tools_list_filtered);
	RUN(test_tools_call_typed_and_refined);
	RUN(test_tools_call_catalog);
	RUN(test_latency);
	RUN(test_tools_list_pages);
	RUN(test_failed_namespace);
	RUN(test_pin_change_within_run);
	RUN(test_pin_change_allowed);
	RUN(test_pin_from_earlier_run);
	RUN(test_server_request_decided);
	RUN(test_idless_harness_calls);
	RUN(test_idless_server_calls);
	RUN(test_robust_harness_frames);
	RUN(test_call_timeout);
	RUN(test_frame_over_max);
	RUN(test_server_garbage);
	RUN(test_server_bad_utf8);
	RUN(test_server_non_object);
	RUN(test_server_flood);
	RUN(test_server_reply_never_sent);
	RUN(test_alias_hangup_stops_server);
	RUN(test_order_held);
	RUN(test_inflight_cap);
	RUN(test_too_many_sessions);
	RUN(test_exit_on_boxd_close);
	RUN(test_refuses_pins_not_append);
	RUN(test_pins_across_runs);
	RUN(test_wide_tool);
	mcpd_stop();
	if (getenv("MCPD_TEST_KEEP")) {
		printf("# kept %s\n", E.dir);
	} else {
		char cmd[400];
		(void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", E.dir);
		(void)!system(cmd);
	}
	return tap_done();
}
