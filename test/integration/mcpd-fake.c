/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mcpd-fake.c — a stand-in for box-mcpd that plays only boxd's side of the
 * MCP control protocol (proto/mcp.proto, table mcpctl), for tests of boxd
 * alone (t-mcp-boxd-ctl.sh; never installed: the other MCP tests run the
 * real daemon). boxd starts it as box-mcpd: fd 3 = boxd, fd 4 = its
 * box-policyd channel, fd 5 = the mcp.sock listener, confined to a minimal
 * read-only root (docs/boxd.8.md): no file of the test's is there, so what
 * to do comes in BOX_TEST_MCPD_FAKE_MODE (boxd passes box-mcpd its
 * BOX_TEST_MCPD_* variables) and every fact goes to its stderr, one a line,
 * prefixed "mcpdfake: ". The mode:
 *   refuse MESSAGE  McpReady ok = false with MESSAGE
 *   serve SERVER    McpReady ok, then, one fact a line:
 *                   McpServerStart of "nosuch" (refused by boxd's re-check),
 *                   of SERVER on two pipes (the server's stdin gets a line,
 *                   its stdout is read to EOF, then its McpServerExit), of
 *                   SERVER again stopped at once with McpServerStop (its
 *                   exit), then "done"
 * Either way it first writes what McpInit said and what the pins fd is, and
 * it exits when boxd closes fd 3.
 * Trusts: boxd; it is test code.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipc.h"
#include "proto_mcp.h"

static struct box_ipc_chan *ctl;

/* One fact: "KEY=TEXT N". */
static void
fact(const char *key, const char *text, long n)
{
	fprintf(stderr, "mcpdfake: %s=%s %ld\n", key, text, n);
}

/* The next control message of TYPE (others are logged and skipped). */
static int
wait_for(uint32_t type, struct box_ipc_msg *m)
{
	for (;;) {
		int r = box_ipc_recv_wait(ctl, m, 20000);
		if (r < 0)
			return r;
		if (m->type == type)
			return 0;
		fact("unexpected", "type", (long)m->type);
		box_ipc_msg_done(m);
	}
}

/* McpServerStart ID SERVER with FDS; logs McpServerStarted. Returns its ok. */
static bool
start(uint64_t id, const char *server, const int fds[3])
{
	Box__McpServerStart s = BOX__MCP_SERVER_START__INIT;
	s.start_id = id;
	s.server = (char *)server;
	int r = box_ipc_chan_send(ctl, BOX__MSG_TYPE__MSG_MCP_SERVER_START, 0, &s.base, fds, 3);
	if (r < 0) {
		fact("send-start", strerror(-r), (long)id);
		return false;
	}
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	if (wait_for(BOX__MSG_TYPE__MSG_MCP_SERVER_STARTED, &m) < 0) {
		fact("started", "none", (long)id);
		return false;
	}
	const Box__McpServerStarted *st = (const Box__McpServerStarted *)m.msg;
	bool ok = st->ok;
	fprintf(stderr, "mcpdfake: started %llu ok=%d error=%s\n", (unsigned long long)st->start_id, ok,
		st->error ? st->error : "");
	box_ipc_msg_done(&m);
	return ok;
}

static void
wait_exit(void)
{
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	if (wait_for(BOX__MSG_TYPE__MSG_MCP_SERVER_EXIT, &m) < 0) {
		fact("exit", "none", 0);
		return;
	}
	const Box__McpServerExit *x = (const Box__McpServerExit *)m.msg;
	fprintf(stderr, "mcpdfake: exit %llu status=%d\n", (unsigned long long)x->start_id, x->status);
	box_ipc_msg_done(&m);
}

static void
record_init(const Box__McpInit *in, int pins_fd)
{
	FILE *f = stderr; /* unbuffered: one write a call, one line each */
	fprintf(f, "mcpdfake: box=%s\n", in->box_name);
	fprintf(f, "mcpdfake: home=%s\n", in->home);
	fprintf(f, "mcpdfake: servers=%zu\n", in->n_servers);
	for (size_t i = 0; i < in->n_servers; i++) {
		const Box__McpServer *s = in->servers[i];
		fprintf(f, "mcpdfake: server=%s ns=%s alias=%s program=%s cwd=%s max_frame=%llu "
			   "call_timeout_ms=%llu allow=%d\n",
			s->name, s->ns, s->alias, s->program_path, s->cwd,
			(unsigned long long)s->max_frame, (unsigned long long)s->call_timeout_ms,
			s->allow_tool_changes);
		for (size_t k = 0; k < s->n_argv; k++)
			fprintf(f, "mcpdfake: argv %s %zu=%s\n", s->name, k, s->argv[k]);
	}
	struct stat st;
	int fl = fcntl(pins_fd, F_GETFL);
	if (fstat(pins_fd, &st) == 0 && fl >= 0)
		fprintf(f, "mcpdfake: pins regular=%d uid=%u mode=%o rdwr=%d append=%d me=%u\n",
			S_ISREG(st.st_mode), (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
			(fl & O_ACCMODE) == O_RDWR, !!(fl & O_APPEND), (unsigned)geteuid());
}

int
main(void)
{
	char mode[1024];
	const char *m0 = getenv("BOX_TEST_MCPD_FAKE_MODE");
	if (!m0 || strlen(m0) >= sizeof(mode))
		return 1;
	strcpy(mode, m0);

	ctl = box_ipc_chan_new(3, &box_proto_mcpctl, BOX_MCPCTL_ROLE_BOXD);
	if (!ctl)
		return 1;
	struct box_ipc_msg im = BOX_IPC_MSG_INIT;
	if (box_ipc_recv_wait(ctl, &im, 20000) < 0)
		return 1;
	record_init((const Box__McpInit *)im.msg, im.fds[0]);
	Box__McpReady rep = BOX__MCP_READY__INIT;
	if (strncmp(mode, "refuse ", 7) == 0) {
		rep.ok = false;
		rep.error = mode + 7;
		box_ipc_chan_send(ctl, BOX__MSG_TYPE__MSG_MCP_READY, 0, &rep.base, NULL, 0);
	} else {
		rep.ok = true;
		if (box_ipc_chan_send(ctl, BOX__MSG_TYPE__MSG_MCP_READY, 0, &rep.base, NULL, 0) < 0)
			return 1;
		const char *server = strncmp(mode, "serve ", 6) == 0 ? mode + 6 : "?";
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		int nulls[3] = { null, null, null };
		start(1, "nosuch", nulls);
		int in[2], out[2];
		if (pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0) {
			int fds[3] = { in[0], out[1], null };
			bool ok = start(2, server, fds);
			close(in[0]);
			close(out[1]);
			if (ok) {
				if (write(in[1], "through-the-server\n", 19) < 0)
					fact("write", strerror(errno), 0);
				close(in[1]);
				char buf[256];
				size_t got = 0;
				ssize_t k;
				while (got < sizeof(buf) - 1 &&
				       (k = read(out[0], buf + got, sizeof(buf) - 1 - got)) > 0)
					got += (size_t)k;
				buf[got] = '\0';
				buf[strcspn(buf, "\n")] = '\0';
				fact("output", buf, (long)got);
				wait_exit();
			}
			close(out[0]);
		}
		if (pipe2(in, O_CLOEXEC) == 0) {
			int fds[3] = { in[0], null, null };
			if (start(3, server, fds)) {
				Box__McpServerStop stop = BOX__MCP_SERVER_STOP__INIT;
				stop.start_id = 3;
				box_ipc_chan_send(ctl, BOX__MSG_TYPE__MSG_MCP_SERVER_STOP, 0, &stop.base,
						  NULL, 0);
				wait_exit();
			}
			close(in[0]);
			close(in[1]);
		}
		fprintf(stderr, "mcpdfake: done\n");
	}
	/* Until boxd closes the channel (the box ends). */
	for (;;) {
		struct box_ipc_msg m = BOX_IPC_MSG_INIT;
		int r = box_ipc_recv_wait(ctl, &m, -1);
		if (r < 0)
			return 0;
		box_ipc_msg_done(&m);
	}
}
