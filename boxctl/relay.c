/* SPDX-License-Identifier: Apache-2.0 */
/*
 * relay.c — boxctl's byte relay (docs/sandbox.md): its stdin → the agent's
 * stdin pipe, the agent's stdout/stderr pipes → its fds 1/2, and at a
 * terminal the terminal ↔ the box's pty master.
 *
 * One stream per direction, driven by run.c's poll loop. A stream waits on
 * one side at a time — `from` readable when it holds nothing, `to` writable
 * when it holds bytes — so a slow reader stalls its writer (the agent
 * blocks on a full pipe) and memory never grows: at most RELAY_BUF bytes
 * per stream. Where one side is a pipe, splice(2) moves the bytes without
 * copying them through boxctl (SPLICE_F_NONBLOCK keeps the pipe side from
 * blocking); EINVAL (a terminal, an O_APPEND file, /dev/null) falls back to
 * read/write for that stream. A regular file is never spliced into (run.c's
 * stdio_pipes: a splice does not take the file offset's lock that write(2)
 * takes, so it races the daemons writing to the same open file).
 * boxctl never sets O_NONBLOCK on its own fds 0-2: their file descriptions
 * are shared with the shell and with siblings (a make job's output pipe),
 * which would then see EAGAIN. It polls before each read or write instead,
 * and writes a terminal in chunks no larger than what POLLOUT promises room
 * for, so a write does not block for long.
 * The screen stream's bytes are also watched (term_modes_feed) for the two terminal modes
 * boxctl's prompt must put back after it drew (prompt.c); a stream is paused while the
 * prompt holds the terminal.
 * Trusts: nothing in the bytes; they are copied unchanged, and only watched for the modes.
 */
#include <errno.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "cleanup.h"
#include "relay.h"

#define SPLICE_CHUNK (1u << 20) /* one splice call; the pipe's size caps it anyway */
#define TTY_CHUNK 256u          /* WAKEUP_CHARS: a terminal that says POLLOUT takes this */

void
stream_init(struct stream *s, const char *name, int from, int to)
{
	*s = (struct stream){ .name = name, .from = from, .to = to };
	if (from < 0)
		s->done = true;
}

static void
stream_close(struct stream *s)
{
	if (s->own_from)
		s->from = safe_close(s->from);
	if (s->own_to)
		s->to = safe_close(s->to);
	s->own_from = s->own_to = false;
	free(s->buf);
	s->buf = NULL;
	s->len = s->off = 0;
	s->done = true;
}

void
stream_stop(struct stream *s)
{
	stream_close(s);
}

bool
stream_finished(const struct stream *s)
{
	return s->done;
}

bool
stream_holds(const struct stream *s)
{
	return !s->done && s->len > s->off;
}

/* `from` ended: what is buffered still goes out; then `to` is closed when it should be. */
static void
from_eof(struct stream *s)
{
	if (s->own_from)
		s->from = safe_close(s->from);
	s->own_from = false;
	s->from = -1;
	if (s->len == s->off)
		stream_close(s);
}

/* `to` failed (EPIPE, EIO): drop the rest; closing our pipe end tells the agent (EPIPE). */
static void
to_failed(struct stream *s, int err)
{
	if (s->tty_to && (err == EIO || err == 0))
		s->hangup = true;
	stream_close(s);
}

unsigned
stream_poll(struct stream *s, struct pollfd *p)
{
	if (s->done)
		return 0;
	bool out = s->from < 0 || (s->splice ? s->wait_out : s->len > s->off);
	if (s->paused && !out)
		return 0;
	s->polled_out = out;
	if (out && s->to < 0) {
		/* Nobody to write to (a terminal with no writable fd): drop it. */
		s->len = s->off = 0;
		out = s->polled_out = false;
	}
	*p = (struct pollfd){ .fd = out ? s->to : s->from, .events = out ? POLLOUT : POLLIN };
	return 1;
}

static void
do_read(struct stream *s)
{
	if (!s->buf && !(s->buf = malloc(RELAY_BUF))) {
		stream_close(s);
		return;
	}
	ssize_t n = read(s->from, s->buf, RELAY_BUF);
	if (n > 0) {
		if (s->modes)
			term_modes_feed(s->modes, s->buf, (size_t)n);
		s->len = (size_t)n;
		s->off = 0;
		if (s->to < 0)
			s->len = 0; /* nowhere to go */
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	/* 0 or an error. At the terminal (raw mode: no ^D), both mean it hung up. */
	if (s->tty_from)
		s->hangup = true;
	from_eof(s);
}

static void
do_write(struct stream *s)
{
	size_t want = s->len - s->off;
	if (s->tty_to && want > TTY_CHUNK)
		want = TTY_CHUNK;
	ssize_t n = write(s->to, s->buf + s->off, want);
	if (n > 0) {
		s->off += (size_t)n;
		if (s->off == s->len) {
			s->len = s->off = 0;
			if (s->from < 0)
				stream_close(s);
		}
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	to_failed(s, n < 0 ? errno : 0);
}

static void
do_splice(struct stream *s)
{
	ssize_t n = splice(s->from, NULL, s->to, NULL, SPLICE_CHUNK,
			   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
	if (n > 0)
		return;
	if (n == 0) {
		from_eof(s);
		return;
	}
	switch (errno) {
	case EINTR:
		return;
	case EAGAIN:
		s->wait_out = true; /* `from` said it was ready: `to` is full */
		return;
	case EINVAL:
		s->splice = false; /* this pair cannot splice: copy */
		do_read(s);
		return;
	case EPIPE:
		to_failed(s, EPIPE);
		return;
	default:
		/* Either side failed (splice streams never touch the terminal): it ends. */
		to_failed(s, errno);
		return;
	}
}

void
stream_ready(struct stream *s, short revents)
{
	if (s->done || !revents)
		return;
	if (s->polled_out) {
		if ((revents & (POLLERR | POLLHUP)) && !(revents & POLLOUT)) {
			to_failed(s, revents & POLLERR ? EIO : 0);
			return;
		}
		if (s->splice) {
			s->wait_out = false; /* room again: wait for `from` */
			return;
		}
		do_write(s);
		return;
	}
	if (s->tty_from && (revents & (POLLERR | POLLHUP | POLLNVAL)) && !(revents & POLLIN)) {
		s->hangup = true;
		from_eof(s);
		return;
	}
	if (s->splice)
		do_splice(s);
	else
		do_read(s);
}

/* ---- the caller's terminal and a box's pty --------------------------------- */

static struct termios saved_tio;
static bool raw_mode;

void
relay_tty_restore(void)
{
	if (raw_mode) {
		(void)tcsetattr(0, TCSADRAIN, &saved_tio);
		raw_mode = false;
	}
}

void
relay_tty_raw(void)
{
	static bool registered;
	struct termios t;
	if (tcgetattr(0, &saved_tio) < 0)
		return;
	t = saved_tio;
	cfmakeraw(&t);
	if (!registered) {
		atexit(relay_tty_restore);
		registered = true;
	}
	if (tcsetattr(0, TCSADRAIN, &t) == 0)
		raw_mode = true;
}

bool
relay_term_fds(unsigned tty_mask, int *term_fd, int *ws_fd, unsigned *rows, unsigned *cols)
{
	static const int order[3] = { 1, 2, 0 };
	*term_fd = *ws_fd = -1;
	for (int j = 0; j < 3 && *term_fd < 0; j++) {
		int fd = order[j];
		int fl = fcntl(fd, F_GETFL);
		if ((tty_mask & (1u << fd)) && fl >= 0 && (fl & O_ACCMODE) != O_RDONLY)
			*term_fd = fd;
	}
	for (int i = 0; i < 3 && *ws_fd < 0; i++)
		if (tty_mask & (1u << i))
			*ws_fd = i;
	struct winsize ws;
	if (*ws_fd >= 0 && ioctl(*ws_fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
		return true;
	}
	return false;
}

void
relay_winsize(int ws_fd, int master)
{
	struct winsize ws;
	if (master >= 0 && ws_fd >= 0 && ioctl(ws_fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row &&
	    ws.ws_col)
		(void)ioctl(master, TIOCSWINSZ, &ws);
}

void
relay_redraw(int ws_fd, int master)
{
	struct winsize ws, other;
	if (master < 0 || ws_fd < 0 || ioctl(ws_fd, TIOCGWINSZ, &ws) < 0 || !ws.ws_row ||
	    !ws.ws_col)
		return;
	other = ws;
	other.ws_col = ws.ws_col > 1 ? ws.ws_col - 1 : ws.ws_col + 1;
	(void)ioctl(master, TIOCSWINSZ, &other);
	(void)ioctl(master, TIOCSWINSZ, &ws);
}

/* One CSI ? … h/l: the private modes it sets (SET) or resets. */
static void
modes_csi(struct term_modes *m, bool set)
{
	unsigned n = m->n < 8 ? m->n : 8;
	for (unsigned i = 0; i < n; i++) {
		unsigned p = m->params[i];
		if (p == 47 || p == 1047 || p == 1049)
			m->alt = set;
		else if (p == 25)
			m->cursor_hidden = !set;
	}
}

void
term_modes_feed(struct term_modes *m, const char *buf, size_t n)
{
	const unsigned char *p = (const unsigned char *)buf, *end = p + n;
	while (p < end) {
		unsigned c = *p;
		switch (m->st) {
		case 0: {
			/* Text: straight to the next ESC. */
			const unsigned char *e = memchr(p, 0x1b, (size_t)(end - p));
			if (!e)
				return;
			p = e + 1;
			m->st = 1;
			continue;
		}
		case 1:
			m->st = 0;
			if (c == '[') {
				m->st = 2;
				m->priv = false;
				m->n = m->cur = 0;
			} else if (c == ']' || c == 'P' || c == '_' || c == '^' || c == 'X') {
				m->st = 3;
			} else if (c == 'c') {
				m->alt = m->cursor_hidden = false;
			} else if (c == 0x1b) {
				m->st = 1;
			}
			break;
		case 2:
			if (c >= '0' && c <= '9') {
				m->cur = m->cur > 100000 ? m->cur : m->cur * 10 + (c - '0');
			} else if (c == ';') {
				if (m->n < 8)
					m->params[m->n] = m->cur;
				m->n++;
				m->cur = 0;
			} else if (c == '?' && m->n == 0 && m->cur == 0) {
				m->priv = true;
			} else if (c >= 0x40 && c <= 0x7e) {
				if (m->n < 8)
					m->params[m->n] = m->cur;
				m->n++;
				if (m->priv && (c == 'h' || c == 'l'))
					modes_csi(m, c == 'h');
				m->st = 0;
			} else if (c == 0x1b) {
				m->st = 1;
			} else if (c == 0x18 || c == 0x1a) {
				m->st = 0; /* CAN, SUB: the sequence is dropped */
			}
			break;
		case 3:
			if (c == 0x07)
				m->st = 0;
			else if (c == 0x1b)
				m->st = 4;
			break;
		default:
			m->st = c == '\\' ? 0 : c == 0x1b ? 4 : 3;
			break;
		}
		p++;
	}
}

void
relay_pty_start(struct stream *keys, struct stream *screen, int in_fd, int master, int term_fd,
		int ws_fd)
{
	(void)fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
	stream_init(keys, "keys", in_fd, master);
	keys->tty_from = true;
	stream_init(screen, "screen", master, term_fd);
	screen->tty_to = true;
	if (in_fd == 0)
		relay_tty_raw();
	relay_winsize(ws_fd, master);
}

int
relay_signalfd(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGWINCH);
	sigprocmask(SIG_BLOCK, &set, NULL);
	int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -errno : fd;
}
