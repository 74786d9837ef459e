/* SPDX-License-Identifier: Apache-2.0 */
/*
 * relay.h — boxctl's byte relay between its own fds and the box's pipes and
 * pty master (docs/sandbox.md). See relay.c.
 */
#ifndef BOXCTL_RELAY_H
#define BOXCTL_RELAY_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

#define RELAY_BUF (64u << 10) /* per buffered stream: the whole of boxctl's memory for it */

/*
 * What the agent's own bytes set on the caller's terminal that boxctl's prompt (prompt.c)
 * must put back after it drew on the terminal: the alternate screen (DEC private modes 47,
 * 1047, 1049) and the cursor's visibility (25), as the last `CSI ? … h/l` the relayed
 * bytes held set them (RIS, `ESC c`, clears both). A parser across reads; nothing else of
 * the bytes is looked at, and the bytes are relayed unchanged.
 */
struct term_modes {
	bool alt;           /* the terminal shows its alternate screen */
	bool cursor_hidden;
	/* the parser */
	unsigned char st;   /* 0 text, 1 after ESC, 2 CSI, 3 a string (OSC, DCS…), 4 ESC in it */
	bool priv;          /* CSI ? */
	unsigned n;         /* parameters seen */
	unsigned cur;       /* the parameter being read */
	unsigned params[8]; /* the first 8 */
};

/* Watch N relayed bytes at BUF. */
void term_modes_feed(struct term_modes *m, const char *buf, size_t n);

/* One direction: bytes from `from` to `to`, until EOF of `from`. */
struct stream {
	const char *name;
	int from, to;
	bool own_from, own_to; /* boxctl's pipe ends / the master: closed when done */
	bool close_to_at_eof;  /* the stdin pipe: the agent sees EOF */
	bool splice;           /* try splice(2) (one side is a pipe); off after EINVAL */
	bool wait_out;         /* splice found `to` full: wait for POLLOUT */
	bool tty_from, tty_to; /* the caller's terminal: its trouble is a hang-up */
	bool done;             /* nothing more moves (EOF, or a side failed) */
	bool hangup;           /* the caller's terminal went away (read 0/EIO, write EIO, HUP) */
	char *buf;             /* buffered mode: RELAY_BUF bytes, allocated on first use */
	size_t len, off;
	bool polled_out;       /* the last stream_poll asked for `to` (POLLOUT) */
	bool paused;           /* read nothing more (what it holds still goes out): prompt.c */
	struct term_modes *modes; /* the screen stream: what it read is watched (term_modes_feed) */
};

void stream_init(struct stream *s, const char *name, int from, int to);
/* The pollfd entries this stream needs now (0, 1); `p` has room for one. */
unsigned stream_poll(struct stream *s, struct pollfd *p);
/* Act on the revents of the entry stream_poll gave (idle: revents 0 is fine). */
void stream_ready(struct stream *s, short revents);
/* Stop now: close what the stream owns, drop what it holds. */
void stream_stop(struct stream *s);
/* Nothing buffered and `from` at EOF: finish (close `to` when it should). */
bool stream_finished(const struct stream *s);
/* Bytes read and not yet written out. */
bool stream_holds(const struct stream *s);

/*
 * The caller's terminal and a box's pty master (`boxctl run` at a terminal,
 * `boxctl shell`): shared so both relay it the same way.
 */
/* fd 0 in raw mode (Ctrl-C travels as a byte); restored by relay_tty_restore and at exit. */
/* SIGINT, SIGTERM, SIGHUP and SIGWINCH blocked, and a signalfd (CLOEXEC, non-blocking) that
 * reads them; -errno. A relay forwards them to the box rather than dying of them. */
int relay_signalfd(void);
void relay_tty_raw(void);
void relay_tty_restore(void);
/*
 * Of fds 0-2 (bit N of TTY_MASK: fd N is a terminal): *TERM_FD where the
 * pty's output goes (stdout's terminal, else stderr's, else stdin's if
 * writable; -1: none), *WS_FD the one the window size is read from (-1:
 * none). True with *ROWS and *COLS when the size is known.
 */
bool relay_term_fds(unsigned tty_mask, int *term_fd, int *ws_fd, unsigned *rows, unsigned *cols);
/* The window size of WS_FD onto MASTER (at the start, on SIGWINCH). */
void relay_winsize(int ws_fd, int master);
/*
 * Make the box's terminal programs redraw: one column less, then WS_FD's size again, on
 * MASTER — each change makes the kernel send SIGWINCH to the pty's foreground process
 * group (the agent, or the full-screen program it runs), which reads the size it ends at.
 */
void relay_redraw(int ws_fd, int master);
/*
 * The two pty streams: KEYS from IN_FD (the terminal on fd 0, or -1) to the
 * master, SCREEN from the master to TERM_FD; the master made non-blocking,
 * fd 0 raw when it is IN_FD, the window size set from WS_FD.
 */
void relay_pty_start(struct stream *keys, struct stream *screen, int in_fd, int master,
		     int term_fd, int ws_fd);

#endif
