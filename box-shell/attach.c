/* SPDX-License-Identifier: Apache-2.0 */
/*
 * attach.c — `boxctl shell` on box-shell's side (docs/box-shell.8.md "boxctl
 * shell"): the pty of a person's session and the process that holds its
 * terminal.
 *
 * shd_pty_open: the master of a new pty of box-shell's own devpts
 * (/dev/pts/ptmx of its sandbox's view: the trampoline mounted a devpts
 * instance of its own for each sandbox, so the agent, whose view has another,
 * can neither open this pty's slave nor see it), unlocked, sized, and its
 * slave opened through the master (TIOCGPTPEER: no path is looked up for it).
 * Every fd is O_CLOEXEC.
 *
 * shd_holder_run: the terminal's holder, forked from main. It makes the slave
 * its controlling terminal in a session of its own (setsid, TIOCSCTTY), so
 * that what the terminal's line discipline signals — Ctrl-C's SIGINT, the
 * SIGWINCH of boxctl's TIOCSWINSZ, the SIGHUP of boxctl closing the master —
 * reaches it, and is then exactly an alias on that terminal: one ShellOpen
 * (interactive, the slave as fds 0-2, `bash`, the workspace as cwd, the agent's
 * environment with the caller's TERM) on its end of a socketpair whose other end main serves as a
 * session; SIGINT, SIGTERM and SIGWINCH forwarded as ShellSignal; SIGHUP
 * (the terminal went away) closes the connection, which hangs the session up
 * (SIGHUP, SIGKILL 2 s later, as for an alias killed); ShellExit's status is
 * written, one byte, to the end pipe boxctl reads, then it exits; ShellDenied's
 * message is written to the terminal (status 125). SIGQUIT, SIGTSTP, SIGTTIN
 * and SIGTTOU are ignored (as the alias of an interactive session does: a
 * stopped holder could not pass the session's end on).
 * Trusts: main's arguments; box-shell's replies after the session table's
 * validation.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "cleanup.h"
#include "daemon.h"
#include "fdutil.h"
#include "ipc.h"
#include "proto_shell.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

/* The pty's master in *MASTER and its slave in *SLAVE (both O_CLOEXEC). Negative errno. */
int
shd_pty_open(unsigned rows, unsigned cols, int *master, int *slave)
{
	/* The devpts instance's own node: /dev/ptmx is only a symlink to it. */
	_cleanup_close_ int m = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW);
	if (m < 0)
		return -errno;
	int unlock = 0;
	if (ioctl(m, TIOCSPTLCK, &unlock) < 0)
		return -errno;
	if (rows && cols) {
		struct winsize ws = { .ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols };
		if (ioctl(m, TIOCSWINSZ, &ws) < 0)
			return -errno;
	}
	int s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s < 0)
		return -errno;
	*slave = s;
	*master = TAKE_FD(m);
	return 0;
}

static volatile sig_atomic_t pending[NSIG];

static void
on_signal(int sig)
{
	pending[sig] = 1;
}

/* What a person sees when box-shell cannot serve: on the terminal, one line. */
static void
say(int tty, const char *what)
{
	char line[BOX_SHELL_MESSAGE_MAX + 16];
	int n = snprintf(line, sizeof(line), "box-shell: %s\r\n", what);
	if (n > 0)
		(void)!write(tty, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

_Noreturn void
shd_holder_run(int conn, int slave, int end_w, const Box__ShellAttach *a)
{
	int keep[3] = { conn, slave, end_w };
	if (fd_close_all_except(3, keep, 3) < 0)
		_exit(125);
	for (size_t i = 0; i < ELEMENTSOF(shd_main_signals); i++)
		signal(shd_main_signals[i], SIG_DFL);
	static const int ignored[] = { SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE };
	for (size_t i = 0; i < ELEMENTSOF(ignored); i++)
		signal(ignored[i], SIG_IGN);
	static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGWINCH };
	sigset_t block, none;
	sigemptyset(&block);
	sigemptyset(&none);
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ELEMENTSOF(forwarded); i++) {
		sigaddset(&block, forwarded[i]);
		(void)sigaction(forwarded[i], &sa, NULL);
	}
	/* Taken only while waiting (ppoll): never in the middle of a send. */
	sigprocmask(SIG_SETMASK, &block, NULL);

	/* Its own session, the slave its controlling terminal, its group the foreground. */
	if (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0) < 0) {
		say(slave, "cannot make the session's terminal a controlling terminal");
		_exit(125);
	}

	/*
	 * The agent's environment as boxd built it (its [agent.env], HOME, the gateway's
	 * variables), the session's TERM in place of the agent's; main's session filters it
	 * as it filters an alias's (invocation.c). No HOME in it: the owner's.
	 */
	const Box__ShellInit *in = shd_box.init;
	char term_env[80], home_env[4200];
	char **env = calloc(a->n_env + 2, sizeof(char *));
	size_t n_env = 0;
	bool home = false;
	if (!env)
		_exit(125);
	for (size_t i = 0; i < a->n_env; i++) {
		if (a->term && strncmp(a->env[i], "TERM=", 5) == 0)
			continue;
		home |= strncmp(a->env[i], "HOME=", 5) == 0;
		env[n_env++] = a->env[i];
	}
	if (a->term) {
		snprintf(term_env, sizeof(term_env), "TERM=%s", a->term);
		env[n_env++] = term_env;
	}
	if (!home && snprintf(home_env, sizeof(home_env), "HOME=%s", in->home) < (int)sizeof(home_env))
		env[n_env++] = home_env;
	Box__ShellOpen so = BOX__SHELL_OPEN__INIT;
	so.mode = BOX__SHELL_MODE__SHELL_MODE_INTERACTIVE;
	so.arg0 = (char *)"bash";
	so.invoked_as = (char *)"bash";
	so.env = env;
	so.n_env = n_env;
	so.cwd = in->workspace;
	int fds[3] = { slave, slave, slave };
	/* The peer is box-shell: the holder speaks the alias's side (ShellOpen moves it to running). */
	struct box_ipc_chan *chan = box_ipc_chan_new(conn, &box_proto_session,
						     BOX_SESSION_ROLE_SHELL);
	if (!chan || box_ipc_chan_send(chan, BOX__MSG_TYPE__MSG_SHELL_OPEN, 1, &so.base, fds, 3) < 0)
		_exit(125);
	/* The session's processes have the slave now; the holder keeps it as its terminal. */
	for (;;) {
		for (size_t i = 0; i < ELEMENTSOF(forwarded); i++) {
			int sig = forwarded[i];
			if (!pending[sig])
				continue;
			pending[sig] = 0;
			if (sig == SIGHUP)
				_exit(129); /* the terminal is gone: the connection's close hangs up */
			Box__ShellSignal ss = BOX__SHELL_SIGNAL__INIT;
			ss.signal = sig;
			if (box_ipc_chan_send(chan, BOX__MSG_TYPE__MSG_SHELL_SIGNAL, 0, &ss.base, NULL,
					      0) < 0)
				_exit(125);
		}
		struct box_ipc_msg m = BOX_IPC_MSG_INIT;
		int r = box_ipc_recv(chan, &m);
		if (r == 0)
			continue;
		if (r == 1) {
			unsigned char status = 125;
			if (m.type == BOX__MSG_TYPE__MSG_SHELL_EXIT)
				status = (unsigned char)((const Box__ShellExit *)m.msg)->status;
			else
				say(slave, ((const Box__ShellDenied *)m.msg)->message);
			(void)!write(end_w, &status, 1);
			_exit(0);
		}
		if (r != -EAGAIN)
			_exit(125); /* box-shell closed the session, or a broken reply */
		struct pollfd p = { .fd = conn, .events = POLLIN };
		(void)ppoll(&p, 1, NULL, &none);
	}
}
