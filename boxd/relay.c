/*
 * relay.c — the box's pty master ↔ the caller's terminal (SANDBOX.md §10).
 *
 * At a terminal the agent's stdio is the slave of the sandbox's own devpts;
 * boxd holds the master and relays bytes to and from the terminal fds
 * boxctl passed (re-opened, so that O_NONBLOCK stays private to boxd). No
 * fd of the caller's terminal ever enters the sandbox. Each direction has
 * one bounded buffer: a side that stops reading stalls its peer, never
 * boxd.
 * Trusts: nothing in the bytes; they are copied, never interpreted.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boxd.h"
#include "cleanup.h"
#include "fdutil.h"

#define RELAY_BUF 16384

struct pipe_dir {
	int from, to;
	struct event *rd, *wr;
	char buf[RELAY_BUF];
	size_t len, off;
	bool eof;
};

struct relay {
	struct pipe_dir in;  /* terminal → master */
	struct pipe_dir out; /* master → terminal */
};

static void
dir_update(struct pipe_dir *p)
{
	if (p->rd) {
		if (!p->eof && p->len == 0)
			event_add(p->rd, NULL);
		else
			event_del(p->rd);
	}
	if (p->wr) {
		if (p->len > p->off)
			event_add(p->wr, NULL);
		else
			event_del(p->wr);
	}
}

static void
on_read(evutil_socket_t fd, short what, void *arg)
{
	struct pipe_dir *p = arg;
	ssize_t n = read(fd, p->buf, sizeof(p->buf));
	if (n > 0) {
		p->len = (size_t)n;
		p->off = 0;
	} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		p->eof = true; /* EIO on the master: the slave side closed */
	}
	dir_update(p);
}

static void
on_write(evutil_socket_t fd, short what, void *arg)
{
	struct pipe_dir *p = arg;
	ssize_t n = write(fd, p->buf + p->off, p->len - p->off);
	if (n > 0) {
		p->off += (size_t)n;
		if (p->off == p->len)
			p->len = p->off = 0;
	} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
		/* The reader is gone: drop what is left and stop reading. */
		p->len = p->off = 0;
		p->eof = true;
	}
	dir_update(p);
}

static int
dir_init(struct event_base *base, struct pipe_dir *p, int from, int to)
{
	p->from = from;
	p->to = to;
	if (from < 0 || to < 0) {
		p->eof = true;
		return 0;
	}
	p->rd = event_new(base, from, EV_READ | EV_PERSIST, on_read, p);
	p->wr = event_new(base, to, EV_WRITE | EV_PERSIST, on_write, p);
	if (!p->rd || !p->wr)
		return -ENOMEM;
	dir_update(p);
	return 0;
}

struct relay *
relay_new(struct event_base *base, int master, int in_fd, int out_fd)
{
	struct relay *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->in.from = r->in.to = r->out.from = r->out.to = -1;
	if (fd_set_nonblock(master, true) < 0 ||
	    (in_fd >= 0 && fd_set_nonblock(in_fd, true) < 0) ||
	    (out_fd >= 0 && fd_set_nonblock(out_fd, true) < 0) ||
	    dir_init(base, &r->in, in_fd, master) < 0 ||
	    dir_init(base, &r->out, master, out_fd) < 0) {
		relay_free(r);
		return NULL;
	}
	return r;
}

void
relay_flush(struct relay *r)
{
	struct pipe_dir *p = &r->out;
	/* Whatever the master still holds, then the buffer, for at most ~200 ms. */
	for (int rounds = 0; rounds < 64 && p->to >= 0; rounds++) {
		if (p->len == 0) {
			if (p->eof)
				break;
			ssize_t n = read(p->from, p->buf, sizeof(p->buf));
			if (n <= 0)
				break;
			p->len = (size_t)n;
			p->off = 0;
		}
		struct pollfd pfd = { .fd = p->to, .events = POLLOUT };
		if (poll(&pfd, 1, 200) <= 0)
			break;
		ssize_t n = write(p->to, p->buf + p->off, p->len - p->off);
		if (n <= 0)
			break;
		p->off += (size_t)n;
		if (p->off == p->len)
			p->len = p->off = 0;
	}
}

void
relay_free(struct relay *r)
{
	if (!r)
		return;
	struct pipe_dir *dirs[2] = { &r->in, &r->out };
	for (int i = 0; i < 2; i++) {
		if (dirs[i]->rd)
			event_free(dirs[i]->rd);
		if (dirs[i]->wr)
			event_free(dirs[i]->wr);
	}
	/* The master belongs to the box; the terminal fds to the relay. */
	safe_close(r->in.from);
	safe_close(r->out.to);
	free(r);
}
