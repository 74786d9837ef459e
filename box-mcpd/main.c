/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c — box-mcpd, the MCP broker (docs/design.md;
 * docs/box-mcpd.8.md).
 *
 *   box-mcpd  (started by boxd: fd 3 = boxd's control channel (mcpctl),
 *             4 = its box-policyd channel (policy, role peer), 5 = the
 *             listening SOCK_SEQPACKET RUNTIME/mcp.sock)
 *
 * main() is the start-up, one named step a line: arguments -> the fds
 * checked -> the ids it runs as, capabilities and no_new_privs dropped
 * (common/privdrop.c) -> McpInit from boxd (blocking, validated by the
 * table) with the pins file -> the pins file read -> what needs files or
 * calls the filter refuses (the event loop, the signals, RLIMIT_NOFILE) ->
 * its seccomp allow-list (seccomp.c) -> McpReady -> the loop.
 *
 * The loop: this file serves the control channel (McpServerStart out,
 * McpServerStarted / McpServerExit back, matched by start id to a session)
 * and the listener (a connection is one session, session.c; at most
 * MCPD_SESSIONS_MAX at once, the next is told McpClose{1, "too many MCP
 * sessions"}). policy.c is the box-policyd channel. boxd closing fd 3 ends
 * box-mcpd (exit 0), box-policyd's channel failing too (exit 1): a broker
 * without policy must not serve. Every server is stopped first.
 * Environment: none read (no BOX_TEST_* hook).
 * Trusts: boxd for McpInit and the fds (their kinds re-checked; the pins
 * file must be a regular file of ours opened O_APPEND); boxd's answers must
 * name a start in flight (else a protocol error, fatal); nothing from an
 * alias, a harness or a server.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "daemon_start.h"
#include "fdutil.h"
#include "ipc.h"
#include "ipc_event.h"
#include "log.h"
#include "mcpd.h"
#include "pins.h"
#include "privdrop.h"
#include "proto_mcp.h"

#define MCPD_INIT_TIMEOUT_MS 30000
#define MCPD_PINS_MAX (256u << 20) /* the pins file read at start (it only grows) */

struct mcpd M = { .pins_fd = -1 };

static struct event *accept_ev, *stop_ev[2];
static uint64_t next_start = 1;

/* ---- the end ------------------------------------------------------------------ */

void
mcpd_exit(int code)
{
	sessions_stop_all();
	M.exit_code = code;
	if (M.base)
		event_base_loopexit(M.base, NULL);
	else
		exit(code);
}

/* ---- spellings ---------------------------------------------------------------- */

char *
mcpd_spell(const char *path)
{
	const char *home = M.init->home;
	size_t hl = strlen(home), n = strlen(path);
	if (hl > 1 && n >= hl && memcmp(path, home, hl) == 0 &&
	    (path[hl] == '\0' || path[hl] == '/')) {
		const char *rest = path + hl;
		size_t l = strlen(rest);
		char *s = malloc(l + 2);
		if (s) {
			s[0] = '~';
			memcpy(s + 1, rest, l + 1);
		}
		return s;
	}
	return strdup(path);
}

/* ---- the control channel ------------------------------------------------------ */

uint64_t
mcpd_server_start(const char *server, const int fds[3])
{
	if (!M.boxd)
		return 0;
	Box__McpServerStart m = BOX__MCP_SERVER_START__INIT;
	m.start_id = next_start++;
	m.server = (char *)server;
	int r = box_ipc_event_send(M.boxd, BOX__MSG_TYPE__MSG_MCP_SERVER_START, 0, &m.base, fds,
				   3);
	if (r < 0) {
		log_err_errno(r, "Cannot send McpServerStart to boxd");
		mcpd_exit(1);
		return 0;
	}
	return m.start_id;
}

void
mcpd_server_stop(uint64_t start_id)
{
	if (!M.boxd || start_id == 0)
		return;
	Box__McpServerStop m = BOX__MCP_SERVER_STOP__INIT;
	m.start_id = start_id;
	int r = box_ipc_event_send(M.boxd, BOX__MSG_TYPE__MSG_MCP_SERVER_STOP, 0, &m.base, NULL, 0);
	if (r < 0) {
		log_err_errno(r, "Cannot send McpServerStop to boxd");
		mcpd_exit(1);
	}
}

static void
on_boxd_msg(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata)
{
	(void)e;
	(void)userdata;
	bool known = false;
	uint64_t id = 0;
	switch (m->type) {
	case BOX__MSG_TYPE__MSG_MCP_SERVER_STARTED: {
		const Box__McpServerStarted *s = (const Box__McpServerStarted *)m->msg;
		id = s->start_id;
		known = session_started(id, s->ok, s->error);
		break;
	}
	case BOX__MSG_TYPE__MSG_MCP_SERVER_EXIT: {
		const Box__McpServerExit *x = (const Box__McpServerExit *)m->msg;
		id = x->start_id;
		known = session_exited(id, x->status);
		break;
	}
	default:
		break;
	}
	if (!known) {
		log_err("boxd sent %s for start %llu, which is not in flight",
			box_ipc_type_name(&box_proto_mcpctl, m->type), (unsigned long long)id);
		mcpd_exit(1);
	}
}

static void
on_boxd_close(struct box_ipc_event *e, int error, void *userdata)
{
	(void)e;
	(void)userdata;
	M.boxd = box_ipc_event_free(M.boxd);
	if (error == -ECONNRESET) {
		log_info("boxd closed the control channel: exiting");
		mcpd_exit(0);
	} else {
		log_err_errno(error, "The boxd channel failed: exiting");
		mcpd_exit(1);
	}
}

/* ---- the listener ------------------------------------------------------------- */

static void
on_accept(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	(void)arg;
	for (int i = 0; i < 16; i++) {
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (c < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				log_warn_errno(-errno, "accept on mcp.sock");
			return;
		}
		if (sessions_count() >= MCPD_SESSIONS_MAX) {
			Box__McpClose cl = BOX__MCP_CLOSE__INIT;
			cl.status = 1;
			cl.message = "box-mcpd: too many MCP sessions";
			(void)box_ipc_send(c, &box_proto_mcpsession, BOX__MSG_TYPE__MSG_MCP_CLOSE, 0,
					   &cl.base, NULL, 0);
			log_warn("Refused a session: %u are open (the most)", MCPD_SESSIONS_MAX);
			close(c);
			continue;
		}
		session_accept(c);
	}
}

static void
on_stop_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	(void)arg;
	log_info("Signal %d: exiting", (int)sig);
	mcpd_exit(0);
}

/* ---- start-up ----------------------------------------------------------------- */

/* A refusal to start: McpReady ok=false with the reason, then exit 1. */
static noreturn void
start_fail(struct box_ipc_chan *chan, uint64_t rid, const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	for (char *p = why; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	log_err("Refusing to start: %s", why);
	Box__McpReady rep = BOX__MCP_READY__INIT;
	rep.ok = false;
	rep.error = why;
	int r = box_ipc_chan_send(chan, BOX__MSG_TYPE__MSG_MCP_READY, rid, &rep.base, NULL, 0);
	if (r < 0)
		log_err_errno(r, "Cannot send McpReady");
	exit(1);
}

/* Step 1: fd 3 boxd's channel, fd 4 box-policyd's, fd 5 the listening mcp.sock. */
static void
channels_check(void)
{
	static const struct daemon_fd_want want[] = {
		{ DAEMON_FD_BOXD, DAEMON_FD_CHANNEL, "boxd's SOCK_SEQPACKET channel" },
		{ DAEMON_FD_POLICYD, DAEMON_FD_CHANNEL, "box-policyd's SOCK_SEQPACKET channel" },
		{ DAEMON_FD_LISTEN, DAEMON_FD_LISTENER, "the listening SOCK_SEQPACKET mcp.sock" },
	};
	size_t bad = 0;
	int r = daemon_fds_take(want, sizeof(want) / sizeof(want[0]), NULL, &bad);
	if (r < 0)
		fatal(r, "fd %d is not %s (started by boxd)", want[bad].fd, want[bad].what);
}

/* Step 2: the ids it runs as (boxd chose them), then no capabilities, no_new_privs. */
static void
privileges_lock_down(void)
{
	const char *failed = NULL;
	int r = daemon_lock_down(getuid(), getgid(), &failed);
	if (r < 0)
		fatal(r, "Cannot lock down privileges (%s)", failed ? failed : "?");
}

/* Step 3: McpInit, the first message, with the pins file. False if boxd gave up first. */
static bool
init_receive(struct box_ipc_chan *chan, struct box_ipc_msg *m)
{
	int r = daemon_init_receive(chan, m, MCPD_INIT_TIMEOUT_MS);
	if (r == 0)
		return false;
	if (r < 0)
		fatal(r, "No valid McpInit from boxd");
	M.init = (Box__McpInit *)m->msg;
	m->msg = NULL; /* lives as long as the process */
	M.pins_fd = TAKE_FD(m->fds[0]);
	return true;
}

/* Step 4: the servers' tables and what the pins file says (a regular file of ours, O_APPEND). */
static void
pins_load(struct box_ipc_chan *chan, uint64_t rid)
{
	M.n_servers = M.init->n_servers;
	M.servers = calloc(M.n_servers ? M.n_servers : 1, sizeof(*M.servers));
	if (!M.servers)
		start_fail(chan, rid, "out of memory");
	for (size_t i = 0; i < M.n_servers; i++) {
		M.servers[i].cfg = M.init->servers[i];
		if (mcp_catalog_new(&M.servers[i].catalog) < 0)
			start_fail(chan, rid, "out of memory");
	}
	struct stat st;
	int fl = fcntl(M.pins_fd, F_GETFL);
	if (fstat(M.pins_fd, &st) < 0 || !S_ISREG(st.st_mode))
		start_fail(chan, rid, "the pins file boxd passed is not a regular file");
	if (st.st_uid != geteuid())
		start_fail(chan, rid, "the pins file is owned by uid %u, not box-mcpd's %u",
			   (unsigned)st.st_uid, (unsigned)geteuid());
	if (fl < 0 || !(fl & O_APPEND) || (fl & O_ACCMODE) != O_RDWR)
		start_fail(chan, rid, "the pins file was not opened O_RDWR|O_APPEND");
	if (fd_set_cloexec(M.pins_fd, true) < 0)
		start_fail(chan, rid, "cannot set CLOEXEC on the pins file");
	if ((uint64_t)st.st_size > MCPD_PINS_MAX)
		start_fail(chan, rid, "the pins file is over %u MiB", MCPD_PINS_MAX >> 20);
	if (mcp_pins_new(&M.pins) < 0)
		start_fail(chan, rid, "out of memory");
	int r = mcpd_pins_reread();
	if (r < 0)
		start_fail(chan, rid, "cannot read the pins file: %s", strerror(-r));
}

/* Step 5: everything that needs a call the filter refuses. */
static void
loop_prepare(struct box_ipc_chan *chan, uint64_t rid)
{
	tzset();
	/* jansson seeds its hash from /dev/urandom on first use: now, while open is allowed. */
	json_object_seed(0);
	/* A session costs about 6 fds: the soft limit up to the hard one. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	M.base = event_base_new();
	if (!M.base)
		start_fail(chan, rid, "cannot create the event loop");
	static const int sigs[2] = { SIGTERM, SIGINT };
	for (int i = 0; i < 2; i++) {
		stop_ev[i] = evsignal_new(M.base, sigs[i], on_stop_signal, NULL);
		if (!stop_ev[i] || evsignal_add(stop_ev[i], NULL) < 0)
			start_fail(chan, rid, "cannot watch signal %d", sigs[i]);
	}
}

/* Step 6: from here on only the allow-list (no exec, no socket, no open). */
static void
seccomp_enter(struct box_ipc_chan *chan, uint64_t rid)
{
	int r = mcpd_seccomp();
	if (r < 0)
		start_fail(chan, rid, "cannot install the seccomp filter: %s", strerror(-r));
}

/* Step 7: McpReady. */
static void
ready_send(struct box_ipc_chan *chan, uint64_t rid)
{
	Box__McpReady rep = BOX__MCP_READY__INIT;
	rep.ok = true;
	int r = box_ipc_chan_send(chan, BOX__MSG_TYPE__MSG_MCP_READY, rid, &rep.base, NULL, 0);
	if (r < 0)
		fatal(r, "Cannot send McpReady");
	log_info("box '%s' (%s): serving %zu stdio MCP servers", M.init->box_name,
		 M.init->box_id, M.n_servers);
}

/* Step 8: the channels and the listener on the loop. */
static void
channels_watch(void)
{
	M.boxd = box_ipc_event_new(M.base, DAEMON_FD_BOXD, &box_proto_mcpctl, BOX_MCPCTL_ROLE_BOXD,
				   on_boxd_msg, on_boxd_close, NULL);
	if (!M.boxd || box_ipc_chan_set_state(box_ipc_event_chan(M.boxd), BOX_MCPCTL_SERVING) < 0)
		fatal(-errno, "Cannot watch the boxd channel");
	int r = pd_start(DAEMON_FD_POLICYD);
	if (r < 0)
		fatal(r, "Cannot watch the box-policyd channel");
	if (fd_set_nonblock(DAEMON_FD_LISTEN, true) < 0)
		fatal(-errno, "Cannot make mcp.sock non-blocking");
	accept_ev = event_new(M.base, DAEMON_FD_LISTEN, EV_READ | EV_PERSIST, on_accept, NULL);
	if (!accept_ev || event_add(accept_ev, NULL) < 0)
		fatalx("Cannot watch mcp.sock");
}

int
main(int argc, char **argv)
{
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;

	log_init("box-mcpd", 1);
	if (log_daemon_args(argc, argv) < 0) {
		fprintf(stderr, "usage: box-mcpd [-n|-q]  (started by boxd, fds 3-5)\n");
		return 2;
	}
	channels_check();
	privileges_lock_down();
	struct box_ipc_chan *chan =
	    box_ipc_chan_new(DAEMON_FD_BOXD, &box_proto_mcpctl, BOX_MCPCTL_ROLE_BOXD);
	if (!chan)
		fatal(-ENOMEM, "Cannot allocate the boxd channel");
	if (!init_receive(chan, &m))
		return 0; /* boxd gave up before we started */
	pins_load(chan, m.request_id);
	loop_prepare(chan, m.request_id);
	seccomp_enter(chan, m.request_id);
	ready_send(chan, m.request_id);
	box_ipc_chan_free(chan);
	box_ipc_msg_done(&m);
	channels_watch();
	if (event_base_dispatch(M.base) < 0)
		fatalx("The event loop failed");
	sessions_stop_all();
	return M.exit_code;
}
