/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shell.c — `boxctl shell NAME|ID` (docs/boxctl.1.md): an interactive box
 * shell in a running box, a person's session.
 *
 * Asks the boxd that runs the box (the service, else this user's embedded
 * boxds, as `stop` does) with AttachRequest: the terminal's size and TERM.
 * boxd lets only the box's owner or root in (SO_PEERCRED) and has the box's
 * box-shell open a pty of its own devpts and serve an interactive session
 * on it — decided by the box's policy as the agent's commands are, logged as
 * a person's session ("session": "person" in decisions.jsonl). AttachReply
 * carries the pty's master and the read end of the session's end pipe.
 * boxctl relays the master to its terminal exactly as `boxctl run` relays
 * the box's pty (relay.c: raw mode, so Ctrl-C is a byte the box's line
 * discipline turns into the session's SIGINT; the window size on SIGWINCH)
 * until the end pipe gives the shell's status (one byte) or EOF: then what
 * the pty still holds is shown and boxctl exits with that status. `exit`
 * ends the session, never the box. The terminal going away, or SIGHUP,
 * SIGTERM or SIGINT reaching boxctl, closes the master: the session is hung
 * up (SIGHUP, then SIGKILL) and boxctl exits 129 (128+1).
 * Exit: the shell's status; 1 with `boxctl: error: …` when no box has that
 * name, it is another user's, it has no box shell serving, or the session
 * ended without a status (the box stopped); 2 for usage, or no terminal.
 * Trusts: boxd's reply only after box_ipc_decode() validated it (fd count
 * included); nothing in the relayed bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "client.h"
#include "commands.h"
#include "proto/validate.h"
#include "relay.h"

#define SHELL_REPLY_TIMEOUT_MS 30000 /* boxd asks box-shell: a fork and a pty */
#define SHELL_DRAIN_IDLE_MS 2000     /* after the end: a pty a background job holds open */
#define SHELL_DRAIN_MAX_MS 5000      /* … and one it keeps writing to */

struct attached {
	int master, end;
	char name[40], id[16];
};

/* 1: attached (A filled); 0: not this boxd's box; negative: an error to report (*ERR). */
static int
attach_one(const char *path, const Box__AttachRequest *req, struct attached *a, char **err)
{
	_cleanup_close_ int fd = client_connect(path);
	if (fd < 0)
		return 0;
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;
	int r = client_call(fd, BOX__MSG_TYPE__MSG_ATTACH_REQUEST, &req->base,
			    BOX__MSG_TYPE__MSG_ATTACH_REPLY, &m, err, SHELL_REPLY_TIMEOUT_MS);
	if (r < 0)
		return r == -EREMOTEIO || r == -ETIMEDOUT ? r : 0;
	const Box__AttachReply *rep = (const Box__AttachReply *)m.msg;
	if (rep->status == BOX__REPLY_STATUS__REPLY_NOT_FOUND) {
		box_ipc_msg_done(&m);
		return 0;
	}
	if (rep->status != BOX__REPLY_STATUS__REPLY_OK) {
		*err = strdup(rep->error);
		box_ipc_msg_done(&m);
		return -EPERM;
	}
	/* The validator saw 2 fds with OK. */
	a->master = TAKE_FD(m.fds[0]);
	a->end = TAKE_FD(m.fds[1]);
	snprintf(a->name, sizeof(a->name), "%s", rep->name);
	snprintf(a->id, sizeof(a->id), "%s", rep->box_id);
	box_ipc_msg_done(&m);
	return 1;
}

static int
attach(const Box__AttachRequest *req, struct attached *a, char **err)
{
	int r = attach_one(client_service_path(), req, a, err);
	char **socks = NULL;
	if (r == 0 && client_embedded_sockets(&socks) == 0) {
		for (size_t i = 0; socks[i]; i++) {
			if (r == 0)
				r = attach_one(socks[i], req, a, err);
			free(socks[i]);
		}
	}
	free(socks);
	return r;
}

/*
 * The session ended: what the pty still holds, to EOF, SHELL_DRAIN_IDLE_MS of
 * silence, or SHELL_DRAIN_MAX_MS in all (a background job the session left
 * may keep writing to it: boxctl does not wait for that).
 */
static void
drain_screen(struct stream *screen)
{
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!screen->done && !screen->hangup) {
		struct pollfd p;
		if (!stream_poll(screen, &p))
			return;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long spent = (long)(now.tv_sec - t0.tv_sec) * 1000 +
			     (now.tv_nsec - t0.tv_nsec) / 1000000;
		if (spent >= SHELL_DRAIN_MAX_MS)
			return;
		long left = SHELL_DRAIN_MAX_MS - spent;
		int k = poll(&p, 1, (int)(screen->polled_out || left < SHELL_DRAIN_IDLE_MS
						  ? left
						  : SHELL_DRAIN_IDLE_MS));
		if (k < 0 && errno != EINTR)
			return;
		if (k == 0 && !screen->polled_out)
			return;
		if (k > 0)
			stream_ready(screen, p.revents);
	}
}

/*
 * The relay until the end pipe speaks. Returns the shell's status, -1 for an
 * end without one, or 128+N when boxctl leaves (the terminal or signal N).
 */
static int
relay(const struct attached *a, int sfd, unsigned tty_mask)
{
	int term_fd, ws_fd;
	unsigned rows, cols;
	(void)relay_term_fds(tty_mask, &term_fd, &ws_fd, &rows, &cols);
	struct stream keys, screen;
	relay_pty_start(&keys, &screen, 0, a->master, term_fd, ws_fd);
	for (;;) {
		struct pollfd p[5] = { { .fd = a->end, .events = POLLIN },
				       { .fd = sfd, .events = POLLIN },
				       { .fd = term_fd, .events = 0 } };
		unsigned n = 3, ik = 0, is = 0;
		if (stream_poll(&keys, &p[n]))
			ik = n++;
		if (stream_poll(&screen, &p[n]))
			is = n++;
		if (poll(p, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 128 + SIGHUP;
		}
		if (ik)
			stream_ready(&keys, p[ik].revents);
		if (is)
			stream_ready(&screen, p[is].revents);
		if (keys.hangup || screen.hangup || (p[2].revents & (POLLHUP | POLLERR | POLLNVAL)))
			return 128 + SIGHUP; /* the terminal went away */
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGWINCH)
					relay_winsize(ws_fd, a->master);
				else
					return 128 + (int)si.ssi_signo;
			}
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			unsigned char status;
			ssize_t k = read(a->end, &status, 1);
			drain_screen(&screen);
			stream_stop(&keys);
			stream_stop(&screen);
			return k == 1 ? status : -1;
		}
		if (screen.done) {
			/* Every slave closed (the box stopped): wait for the end pipe's word. */
			unsigned char status;
			ssize_t k = read(a->end, &status, 1);
			return k == 1 ? status : -1;
		}
	}
}

int
cmd_shell(int argc, char **argv)
{
	const char *box = client_box_operand(argc, argv, "shell");
	if (!box)
		return BOXCTL_EXIT_USAGE;
	unsigned tty_mask = 0;
	for (int i = 0; i < 3; i++)
		if (isatty(i) == 1)
			tty_mask |= 1u << i;
	int term_fd, ws_fd;
	unsigned rows = 0, cols = 0;
	bool sized = relay_term_fds(tty_mask, &term_fd, &ws_fd, &rows, &cols);
	if (!(tty_mask & 1) || term_fd < 0) {
		fprintf(stderr, "boxctl: error: boxctl shell needs a terminal on stdin and stdout "
				"(an interactive box shell); run a command with `boxctl run`\n");
		return BOXCTL_EXIT_USAGE;
	}

	Box__AttachRequest req = BOX__ATTACH_REQUEST__INIT;
	req.box = (char *)box;
	req.has_rows = req.has_cols = sized;
	req.rows = rows;
	req.cols = cols;
	const char *term = getenv("TERM");
	if (term && box_valid_term(term))
		req.term = (char *)term;

	/* Signals by a signalfd from here on: SIGWINCH resizes, the others end the relay. */
	_cleanup_close_ int sfd = relay_signalfd();
	if (sfd < 0) {
		fprintf(stderr, "boxctl: error: signalfd: %s\n", strerror(-sfd));
		return BOXCTL_EXIT_FAILURE;
	}
	signal(SIGPIPE, SIG_IGN);

	struct attached a = { .master = -1, .end = -1 };
	char *err = NULL;
	int r = attach(&req, &a, &err);
	if (r <= 0) {
		if (r == 0)
			fprintf(stderr, "boxctl: error: no box named %s is running\n", box);
		else
			fprintf(stderr, "boxctl: error: shell %s: %s\n", box,
				err ? err : strerror(-r));
		free(err);
		return BOXCTL_EXIT_FAILURE;
	}
	fprintf(stderr, "box: a shell in box %s (%s), a person's session: its commands are "
		"decided by the box's policy; `exit` ends it, the box keeps running\n",
		a.name, a.id);
	int status = relay(&a, sfd, tty_mask);
	relay_tty_restore();
	close(a.master);
	close(a.end);
	if (status < 0) {
		fprintf(stderr, "boxctl: error: the shell in box %s ended without a status (the box "
			"stopped, or its box-shell went away)\n", a.name);
		return BOXCTL_EXIT_FAILURE;
	}
	return status;
}
