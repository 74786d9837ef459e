/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shell-fake.c — a stand-in for box-shell that plays only boxd's side of the
 * control protocol, for tests of boxd alone (never installed; the box-shell
 * tests run the real daemon). boxd starts it as box-shell, through the
 * trampoline in box-shell's sandbox: fd 3 = boxd, fd 4 = its box-policyd
 * channel, fd 5 = the shell.sock listener (common/daemon_fds.h). It reads ShellInit, answers
 * ShellReady (ok = false with BOX_TEST_SHELL_FAKE_REFUSE as the message;
 * BOX_TEST_SHELL_FAKE_EXIT: it exits instead), then serves one session at a
 * time from the real shell alias: the alias's -c text is a directive, the
 * replies go to the alias's fd 1, and its status is the session's:
 *   info                    what ShellInit said, fds 3-5, every open fd, one fact a line
 *   exit N                  status N
 *   die                     the fake exits 9 at once (box-shell lost)
 *   spawn TOOL|- PROG CWD [NAME=VALUE...] -- ARGV...
 *                           SpawnRequest with the alias's fds 0-2; prints
 *                           "reply ok SANDBOX" or "reply refused: MESSAGE",
 *                           then "exit N" (SpawnExit); status N, or 126
 *   signal SIG TOOL|- PROG CWD -- ARGV...
 *                           the same, then SpawnSignal SIG once started
 *   many N TOOL PROG CWD -- ARGV...
 *                           N SpawnRequests at once; prints "started K refused
 *                           R" (and the last refusal), then SIGKILLs the
 *                           started ones and prints "exits K" once every
 *                           SpawnExit came
 * Trusts: boxd and the alias; it is test code.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon_fds.h"
#include "ipc.h"
#include "proto_shell.h"

static struct box_ipc_chan *ctl;
static Box__ShellInit *init;
static uint64_t next_id = 1;

static void
say(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void
say(int fd, const char *fmt, ...)
{
	char buf[8192];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0 && write(fd, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1) < 0)
		return;
}

static int
sock_type(int fd, int *listening)
{
	int type = 0, acc = 0;
	socklen_t l = sizeof(type);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) < 0)
		return -1;
	l = sizeof(acc);
	if (listening && getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &l) == 0)
		*listening = acc;
	return type;
}

static void
info(int out)
{
	int lst = 0;
	say(out, "box %s %s\n", init->box_name, init->box_id);
	say(out, "home %s\n", init->home);
	say(out, "workspace %s\n", init->workspace);
	say(out, "path %s\n", init->path);
	say(out, "command_timeout_ms %llu\n",
	    init->has_command_timeout_ms ? (unsigned long long)init->command_timeout_ms : 0ull);
	say(out, "python_tool %d\n", (int)init->python_tool);
	for (size_t i = 0; i < init->n_tools; i++) {
		say(out, "tool %s %s", init->tools[i]->name, init->tools[i]->program);
		for (size_t k = 0; k < init->tools[i]->n_fixed_args; k++)
			say(out, " %s", init->tools[i]->fixed_args[k]);
		say(out, "\n");
	}
	for (size_t i = 0; i < init->n_exec_entries; i++)
		say(out, "exec %s\n", init->exec_entries[i]);
	say(out, "fd3 %d\n", sock_type(3, NULL) == SOCK_SEQPACKET);
	say(out, "fd4 %d\n", sock_type(4, NULL) == SOCK_SEQPACKET);
	int t5 = sock_type(5, &lst);
	say(out, "fd5 %d %d\n", t5 == SOCK_SEQPACKET, lst);
	/* Every open fd (the session's own socket is the one above 5). */
	DIR *d = opendir("/proc/self/fd");
	int fds[64], n = 0;
	for (struct dirent *e; d && (e = readdir(d)) && n < 64;)
		if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
			fds[n++] = atoi(e->d_name);
	if (d)
		closedir(d);
	for (int i = 1; i < n; i++)
		for (int k = i; k > 0 && fds[k] < fds[k - 1]; k--) {
			int t = fds[k];
			fds[k] = fds[k - 1];
			fds[k - 1] = t;
		}
	say(out, "fds");
	for (int i = 0; i < n; i++)
		say(out, " %d", fds[i]);
	say(out, "\n");
	say(out, "uid %u\n", (unsigned)getuid());
}

/* One spawn: request, reply, (signal), exit. Returns the session's status. */
static int
spawn(int fds[3], char **w, size_t n, int sig)
{
	Box__SpawnRequest rq = BOX__SPAWN_REQUEST__INIT;
	char *env[64], *argv[256];
	size_t i = 0;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	int status = 126;

	if (n < 4)
		return say(fds[2], "fake: spawn needs TOOL PROG CWD -- ARGV\n"), 2;
	rq.spawn_id = next_id++;
	rq.tool = strcmp(w[0], "-") == 0 ? NULL : w[0];
	rq.program_path = w[1];
	rq.cwd = w[2];
	for (i = 3; i < n && strcmp(w[i], "--") != 0 && rq.n_env < 64; i++)
		env[rq.n_env++] = w[i];
	for (i++; i < n && rq.n_argv < 256; i++)
		argv[rq.n_argv++] = w[i];
	rq.env = env;
	rq.argv = argv;
	if (box_ipc_chan_send(ctl, BOX__MSG_TYPE__MSG_SPAWN_REQUEST, 0, &rq.base, fds, 3) < 0)
		return say(fds[2], "fake: cannot send SpawnRequest\n"), 125;
	for (;;) {
		if (box_ipc_recv_wait(ctl, &m, 60000) != 1)
			return say(fds[1], "boxd went away\n"), 125;
		if (m.type == BOX__MSG_TYPE__MSG_SPAWN_REPLY) {
			const Box__SpawnReply *r = (const Box__SpawnReply *)m.msg;
			if (!r->ok) {
				say(fds[1], "reply refused: %s\n", r->error ? r->error : "");
				box_ipc_msg_done(&m);
				return 126;
			}
			say(fds[1], "reply ok %s\n", r->sandbox ? r->sandbox : "?");
			if (sig) {
				Box__SpawnSignal s = BOX__SPAWN_SIGNAL__INIT;
				s.spawn_id = r->spawn_id;
				s.signal = sig;
				(void)box_ipc_chan_send(ctl, BOX__MSG_TYPE__MSG_SPAWN_SIGNAL, 0, &s.base,
							NULL, 0);
			}
		} else if (m.type == BOX__MSG_TYPE__MSG_SPAWN_EXIT) {
			status = ((const Box__SpawnExit *)m.msg)->status;
			say(fds[1], "exit %d\n", status);
			box_ipc_msg_done(&m);
			return status;
		}
		box_ipc_msg_done(&m);
	}
}

/* N spawns in flight at once (boxd's cap), then all killed through SpawnSignal. */
static int
many(int fds[3], unsigned n, char **w, size_t nw)
{
	Box__SpawnRequest rq = BOX__SPAWN_REQUEST__INIT;
	char *argv[64], last[512] = "";
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	unsigned started = 0, refused = 0, exits = 0;
	uint64_t first = next_id;

	if (nw < 5 || n > 4096)
		return 2;
	rq.tool = w[0];
	rq.program_path = w[1];
	rq.cwd = w[2];
	for (size_t i = 4; i < nw && rq.n_argv < 64; i++)
		argv[rq.n_argv++] = w[i];
	rq.argv = argv;
	for (unsigned i = 0; i < n; i++) {
		rq.spawn_id = next_id++;
		if (box_ipc_chan_send(ctl, BOX__MSG_TYPE__MSG_SPAWN_REQUEST, 0, &rq.base, fds, 3) < 0)
			return 125;
	}
	while (started + refused < n) {
		if (box_ipc_recv_wait(ctl, &m, 120000) != 1)
			return 125;
		if (m.type == BOX__MSG_TYPE__MSG_SPAWN_REPLY) {
			const Box__SpawnReply *r = (const Box__SpawnReply *)m.msg;
			if (r->ok)
				started++;
			else {
				refused++;
				snprintf(last, sizeof(last), "%s", r->error ? r->error : "");
			}
		} else if (m.type == BOX__MSG_TYPE__MSG_SPAWN_EXIT)
			exits++;
		box_ipc_msg_done(&m);
	}
	say(fds[1], "started %u refused %u\n", started, refused);
	if (refused)
		say(fds[1], "refusal: %s\n", last);
	for (uint64_t id = first; id < first + n; id++) {
		Box__SpawnSignal s = BOX__SPAWN_SIGNAL__INIT;
		s.spawn_id = id;
		s.signal = SIGKILL;
		(void)box_ipc_chan_send(ctl, BOX__MSG_TYPE__MSG_SPAWN_SIGNAL, 0, &s.base, NULL, 0);
	}
	while (exits < started) {
		if (box_ipc_recv_wait(ctl, &m, 120000) != 1)
			return 125;
		if (m.type == BOX__MSG_TYPE__MSG_SPAWN_EXIT)
			exits++;
		box_ipc_msg_done(&m);
	}
	say(fds[1], "exits %u\n", exits);
	return 0;
}

static int
run(const char *command, int fds[3])
{
	char *copy = strdup(command ? command : ""), *save = NULL;
	char *w[300];
	size_t n = 0;
	int status = 2;

	for (char *t = strtok_r(copy, " ", &save); t && n < 300; t = strtok_r(NULL, " ", &save))
		w[n++] = t;
	if (n == 0)
		status = 0;
	else if (strcmp(w[0], "info") == 0)
		info(fds[1]), status = 0;
	else if (strcmp(w[0], "exit") == 0 && n == 2)
		status = atoi(w[1]);
	else if (strcmp(w[0], "die") == 0)
		_exit(9);
	else if (strcmp(w[0], "spawn") == 0)
		status = spawn(fds, w + 1, n - 1, 0);
	else if (strcmp(w[0], "signal") == 0 && n > 2)
		status = spawn(fds, w + 2, n - 2, atoi(w[1]));
	else if (strcmp(w[0], "many") == 0 && n > 2)
		status = many(fds, (unsigned)atoi(w[1]), w + 2, n - 2);
	else
		say(fds[2], "fake: unknown directive %s\n", w[0]);
	free(copy);
	return status;
}

int
main(void)
{
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;

	signal(SIGPIPE, SIG_IGN);
	ctl = box_ipc_chan_new(3, &box_proto_shell, BOX_SHELL_ROLE_BOXD);
	if (!ctl || box_ipc_recv_wait(ctl, &m, 10000) != 1 ||
	    m.type != BOX__MSG_TYPE__MSG_SHELL_INIT)
		return 3;
	init = (Box__ShellInit *)m.msg;
	m.msg = NULL;
	if (getenv("BOX_TEST_SHELL_FAKE_EXIT"))
		return 7;
	Box__ShellReady r = BOX__SHELL_READY__INIT;
	const char *refuse = getenv("BOX_TEST_SHELL_FAKE_REFUSE");
	r.ok = !refuse;
	r.error = (char *)refuse;
	if (box_ipc_chan_send(ctl, BOX__MSG_TYPE__MSG_SHELL_READY, 0, &r.base, NULL, 0) < 0)
		return 5;
	if (refuse)
		return 0;
	for (;;) {
		/* boxd closing its channel ends box-shell (as the real one); the listener takes aliases. */
		struct pollfd p[2] = { { .fd = DAEMON_FD_BOXD, .events = POLLIN },
				       { .fd = DAEMON_FD_LISTEN, .events = POLLIN } };
		if (poll(p, 2, -1) < 0)
			continue;
		if (p[0].revents)
			return 0;
		int s = accept4(DAEMON_FD_LISTEN, NULL, NULL, SOCK_CLOEXEC);
		if (s < 0)
			continue;
		struct box_ipc_chan *c = box_ipc_chan_new(s, &box_proto_session, BOX_SESSION_ROLE_ALIAS);
		struct box_ipc_msg o = BOX_IPC_MSG_INIT;
		if (c && box_ipc_recv_wait(c, &o, 10000) == 1 && o.n_fds == 3) {
			const Box__ShellOpen *op = (const Box__ShellOpen *)o.msg;
			Box__ShellExit x = BOX__SHELL_EXIT__INIT;
			x.status = run(op->command, o.fds) & 255;
			(void)box_ipc_chan_send(c, BOX__MSG_TYPE__MSG_SHELL_EXIT, 0, &x.base, NULL, 0);
		}
		box_ipc_msg_done(&o);
		box_ipc_chan_free(c);
		close(s);
	}
}
