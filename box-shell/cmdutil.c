/*
 * cmdutil.c — what every own command of box-shell shares (cmd.h): the
 * buffered output (sh_out_*), GNU-style error lines (sh_cmd_error) and the
 * exported environment (sh_cmd_getenv); plus cmdutil.h's reentrant option
 * parser and line reader, so commands never touch getopt's globals (a
 * pipeline stage may run in the shell's own process).
 *
 * sh_out: a 64 KiB buffer allocated on first use (or the caller's buf/cap);
 * the first write error is kept in o->error and every later write returns it
 * at once, so a command whose reader went away (EPIPE) stops producing
 * instead of writing into the void. Nothing here prints on its own.
 * Trusts: nothing in the data written or the environment's contents.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "cmdutil.h"

#define SH_OUT_CAP (64 * 1024)

/* Write all of p to fd, retrying on EINTR and waiting out EAGAIN. */
static int
write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd pfd = { .fd = fd, .events = POLLOUT };
				(void)poll(&pfd, 1, -1);
				continue;
			}
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int
sh_out_flush(struct sh_out *o)
{
	if (o->error)
		return o->error;
	if (o->len == 0)
		return 0;
	int r = write_all(o->fd, o->buf, o->len);
	o->len = 0;
	if (r < 0)
		o->error = r;
	return r;
}

/* Make sure the buffer exists; false when it cannot (then write through). */
static bool
out_ensure_buf(struct sh_out *o)
{
	if (o->buf && o->cap > 0)
		return true;
	o->buf = malloc(SH_OUT_CAP);
	if (!o->buf)
		return false;
	o->cap = SH_OUT_CAP;
	o->len = 0;
	return true;
}

int
sh_out_write(struct sh_out *o, const void *p, size_t n)
{
	if (o->error)
		return o->error;
	if (n == 0)
		return 0;
	if (!out_ensure_buf(o)) {
		int r = write_all(o->fd, p, n);
		if (r < 0)
			o->error = r;
		return r;
	}
	if (o->len + n <= o->cap) {
		memcpy(o->buf + o->len, p, n);
		o->len += n;
		if (o->len == o->cap)
			return sh_out_flush(o);
		return 0;
	}
	int r = sh_out_flush(o);
	if (r < 0)
		return r;
	if (n >= o->cap) {
		r = write_all(o->fd, p, n);
		if (r < 0)
			o->error = r;
		return r;
	}
	memcpy(o->buf, p, n);
	o->len = n;
	return 0;
}

int
sh_out_vprintf(struct sh_out *o, const char *fmt, va_list ap)
{
	if (o->error)
		return o->error;
	char small[512];
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(small, sizeof(small), fmt, aq);
	va_end(aq);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n < sizeof(small))
		return sh_out_write(o, small, (size_t)n);
	char *big = malloc((size_t)n + 1);
	if (!big)
		return -ENOMEM;
	(void)vsnprintf(big, (size_t)n + 1, fmt, ap);
	int r = sh_out_write(o, big, (size_t)n);
	free(big);
	return r;
}

int
sh_out_printf(struct sh_out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = sh_out_vprintf(o, fmt, ap);
	va_end(ap);
	return r;
}

void
sh_out_init(struct sh_out *o, int fd)
{
	*o = (struct sh_out){ .fd = fd };
}

int
sh_out_release(struct sh_out *o)
{
	int r = sh_out_flush(o);
	free(o->buf);
	o->buf = NULL;
	o->cap = o->len = 0;
	return r;
}

const char *
sh_cmd_name(const struct sh_cmd *c)
{
	if (c->fs && c->fs->cmd_name && *c->fs->cmd_name)
		return c->fs->cmd_name;
	return "box-shell";
}

int
sh_cmd_error(struct sh_cmd *c, int status, const char *fmt, ...)
{
	/* Flushed at once: GNU's stderr is unbuffered. */
	va_list ap;
	va_start(ap, fmt);
	(void)sh_out_printf(c->err_buf, "%s: ", sh_cmd_name(c));
	(void)sh_out_vprintf(c->err_buf, fmt, ap);
	(void)sh_out_write(c->err_buf, "\n", 1);
	(void)sh_out_flush(c->err_buf);
	va_end(ap);
	return status;
}

const char *
sh_cmd_getenv(const struct sh_cmd *c, const char *name)
{
	if (!c->envp || !name)
		return NULL;
	size_t n = strlen(name);
	for (char *const *e = c->envp; *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}
