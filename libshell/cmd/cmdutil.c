/* SPDX-License-Identifier: Apache-2.0 */
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
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <regex.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>
#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "cmd.h"
#include "cmdutil.h"
#include "decide.h"

#define SH_OUT_CAP (64 * 1024)

void (*sh_decide_before_output)(void);

/* Write all of p to fd, retrying on EINTR and waiting out EAGAIN. */
static int
write_all(int fd, const char *p, size_t n)
{
	if (sh_decide_before_output && n > 0)
		sh_decide_before_output();
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

/* The largest product of nested counted repetitions in SRC: ERE's "(" ")"
 * "{m,n}", BRE's "\\(" "\\)" "\\{m,n\\}"; bracket expressions skipped. */
static unsigned long
regex_repeat_cost(const char *p, bool ere)
{
	enum { MAXD = 256 };
	unsigned long max[MAXD + 1];
	int d = 0;
	max[0] = 1;
	unsigned long last = 1; /* the cost of the atom just read */
	while (*p) {
		bool open = ere ? *p == '(' : (p[0] == '\\' && p[1] == '(');
		bool close = ere ? *p == ')' : (p[0] == '\\' && p[1] == ')');
		bool brace = ere ? *p == '{' : (p[0] == '\\' && p[1] == '{');
		if (open) {
			p += ere ? 1 : 2;
			if (d < MAXD)
				max[++d] = 1;
			last = 1;
			continue;
		}
		if (close) {
			p += ere ? 1 : 2;
			last = max[d];
			if (d > 0)
				d--;
			if (last > max[d])
				max[d] = last;
			continue;
		}
		if (brace) {
			const char *q = p + (ere ? 1 : 2);
			unsigned long m = 0, n = 0;
			bool comma = false;
			while (*q >= '0' && *q <= '9' && m < 100000)
				m = m * 10 + (unsigned long)(*q++ - '0');
			if (*q == ',') {
				comma = true;
				q++;
				while (*q >= '0' && *q <= '9' && n < 100000)
					n = n * 10 + (unsigned long)(*q++ - '0');
			}
			unsigned long k = comma && n ? n : m ? m : 1;
			unsigned long c = last * k;
			if (c > 1UL << 31)
				c = 1UL << 31;
			if (c > max[d])
				max[d] = c;
			last = c;
			p = q;
			continue;
		}
		if (*p == '[') {
			/* a bracket expression: ']' first is a member, [:x:] [.x.] [=x=] nest */
			const char *q = p + 1;
			if (*q == '^')
				q++;
			if (*q == ']')
				q++;
			while (*q && *q != ']') {
				if (q[0] == '[' && (q[1] == ':' || q[1] == '.' || q[1] == '=')) {
					const char *e = strchr(q + 2, q[1]);
					q = e && e[1] == ']' ? e + 2 : q + 1;
				} else {
					q++;
				}
			}
			p = *q ? q + 1 : q;
			last = 1;
			continue;
		}
		p += p[0] == '\\' && p[1] ? 2 : 1;
		last = 1;
	}
	while (d > 0) {
		if (max[d] > max[d - 1])
			max[d - 1] = max[d];
		d--;
	}
	return max[0];
}

int
sh_regcomp(struct re_pattern_buffer *re, const char *src, int cflags)
{
	if (regex_repeat_cost(src, cflags & REG_EXTENDED) > RE_DUP_MAX)
		return REG_ESPACE;
	return regcomp(re, src, cflags);
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

/* ---- options (GNU getopt_long's behaviour, without its globals) ---- */

void
sh_opt_init(struct sh_opt *g, struct sh_cmd *c, int argc, char **argv, const char *shortopts,
	    const struct sh_longopt *longopts)
{
	*g = (struct sh_opt){ .c = c, .argc = argc, .argv = argv, .shortopts = shortopts,
			      .longopts = longopts, .ind = 1 };
	if (*shortopts == '+') {
		g->posix = true;
		g->shortopts++;
	}
	g->operands = calloc((size_t)argc + 1, sizeof(char *));
}

void
sh_opt_done(struct sh_opt *g)
{
	free(g->operands);
	g->operands = NULL;
}

static int
opt_long(struct sh_opt *g, char *arg)
{
	const char *name = arg + 2;
	const char *eq = strchr(name, '=');
	size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
	const struct sh_longopt *found = NULL;
	bool ambiguous = false;
	for (const struct sh_longopt *l = g->longopts; l && l->name; l++) {
		if (strncmp(l->name, name, nlen) != 0)
			continue;
		if (strlen(l->name) == nlen) {
			found = l;
			ambiguous = false;
			break;
		}
		if (!found)
			found = l;
		else if (found->has_arg != l->has_arg || found->val != l->val)
			ambiguous = true;
	}
	struct sh_out *e = g->c->err_buf;
	const char *cmd = sh_cmd_name(g->c);
	if (ambiguous) {
		sh_out_printf(e, "%s: option '%.*s' is ambiguous; possibilities:", cmd,
			      (int)(nlen + 2), arg);
		for (const struct sh_longopt *l = g->longopts; l->name; l++)
			if (strncmp(l->name, name, nlen) == 0)
				sh_out_printf(e, " '--%s'", l->name);
		sh_out_write(e, "\n", 1);
		sh_out_flush(e);
		return '?';
	}
	if (!found) {
		sh_out_printf(e, "%s: unrecognized option '%s'\n", cmd, arg);
		sh_out_flush(e);
		return '?';
	}
	g->longname = found->name;
	g->arg = NULL;
	if (found->has_arg == SH_NO_ARG) {
		if (eq) {
			sh_out_printf(e, "%s: option '--%s' doesn't allow an argument\n", cmd,
				      found->name);
			sh_out_flush(e);
			return '?';
		}
	} else if (eq) {
		g->arg = (char *)eq + 1;
	} else if (found->has_arg == SH_REQ_ARG) {
		if (g->ind >= g->argc) {
			sh_out_printf(e, "%s: option '--%s' requires an argument\n", cmd,
				      found->name);
			sh_out_flush(e);
			return '?';
		}
		g->arg = g->argv[g->ind++];
	}
	return found->val;
}

int
sh_opt_next(struct sh_opt *g)
{
	struct sh_out *e = g->c->err_buf;
	g->longname = NULL;
	if (g->sub) {
		char *arg = g->argv[g->ind - 1];
		char ch = arg[g->sub];
		const char *spec = strchr(g->shortopts, ch);
		g->opt = ch;
		g->arg = NULL;
		if (!spec || ch == ':') {
			g->sub = arg[g->sub + 1] ? g->sub + 1 : 0;
			sh_out_printf(e, "%s: invalid option -- '%c'\n", sh_cmd_name(g->c), ch);
			sh_out_flush(e);
			return '?';
		}
		if (spec[1] == ':') {
			if (arg[g->sub + 1]) {
				g->arg = arg + g->sub + 1;
			} else if (spec[2] != ':') {
				if (g->ind >= g->argc) {
					g->sub = 0;
					sh_out_printf(e, "%s: option requires an argument -- '%c'\n",
						      sh_cmd_name(g->c), ch);
					sh_out_flush(e);
					return '?';
				}
				g->arg = g->argv[g->ind++];
			}
			g->sub = 0;
		} else {
			g->sub = arg[g->sub + 1] ? g->sub + 1 : 0;
		}
		return ch;
	}
	while (g->ind < g->argc) {
		char *arg = g->argv[g->ind];
		if (g->dashdash || arg[0] != '-' || arg[1] == '\0') {
			if (g->posix && !g->dashdash) {
				g->dashdash = true;
				continue;
			}
			g->operands[g->n_operands++] = arg;
			g->ind++;
			continue;
		}
		g->ind++;
		if (arg[1] == '-') {
			if (arg[2] == '\0') {
				g->dashdash = true;
				continue;
			}
			return opt_long(g, arg);
		}
		g->sub = 1;
		return sh_opt_next(g);
	}
	return -1;
}

int
sh_cmd_usage_error(struct sh_cmd *c, int status, const char *usage)
{
	const char *n = sh_cmd_name(c);
	if (usage)
		sh_out_printf(c->err_buf, "Usage: %s %s\n", n, usage);
	sh_out_printf(c->err_buf, "Try '%s --help' for more information.\n", n);
	sh_out_flush(c->err_buf);
	return status;
}

/* ---- input ---- */

#define SH_IN_CHUNK (128 * 1024)

void
sh_in_init(struct sh_in *in, int fd, volatile sig_atomic_t *interrupted)
{
	*in = (struct sh_in){ .fd = fd, .interrupted = interrupted };
}

void
sh_in_release(struct sh_in *in)
{
	free(in->buf);
	in->buf = NULL;
}

/* Read more bytes after `end`; 1 read, 0 EOF, <0 error. */
static int
in_fill(struct sh_in *in)
{
	if (in->eof)
		return 0;
	if (in->start > 0 && in->start == in->end)
		in->start = in->end = 0;
	if (in->cap - in->end < SH_IN_CHUNK / 2 && in->start > 0) {
		memmove(in->buf, in->buf + in->start, in->end - in->start);
		in->end -= in->start;
		in->start = 0;
	}
	if (in->cap - in->end < SH_IN_CHUNK / 2) {
		size_t ncap = in->cap ? in->cap * 2 : SH_IN_CHUNK;
		char *nb = realloc(in->buf, ncap);
		if (!nb)
			return in->error = -ENOMEM;
		in->buf = nb;
		in->cap = ncap;
	}
	for (;;) {
		if (in->interrupted && *in->interrupted)
			return in->error = -EINTR;
		ssize_t r = read(in->fd, in->buf + in->end, in->cap - in->end);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return in->error = -errno;
		}
		if (r == 0) {
			in->eof = true;
			return 0;
		}
		in->end += (size_t)r;
		in->total += (size_t)r;
		return 1;
	}
}

ssize_t
sh_in_getline(struct sh_in *in, char **line)
{
	size_t scanned = 0;
	for (;;) {
		char *nl = in->end > in->start + scanned
				   ? memchr(in->buf + in->start + scanned, '\n',
					    in->end - in->start - scanned)
				   : NULL;
		if (nl) {
			size_t n = (size_t)(nl - (in->buf + in->start)) + 1;
			*line = in->buf + in->start;
			in->start += n;
			return (ssize_t)n;
		}
		scanned = in->end - in->start;
		int r = in_fill(in);
		if (r < 0)
			return r;
		if (r == 0) {
			if (in->end == in->start)
				return 0;
			size_t n = in->end - in->start;
			*line = in->buf + in->start;
			in->start = in->end;
			return (ssize_t)n;
		}
	}
}

ssize_t
sh_in_read(struct sh_in *in, char **data)
{
	if (in->start == in->end) {
		int r = in_fill(in);
		if (r <= 0)
			return r;
	}
	size_t n = in->end - in->start;
	*data = in->buf + in->start;
	in->start = in->end;
	return (ssize_t)n;
}

int
sh_read_fd_all(int fd, volatile sig_atomic_t *interrupted, char **data, size_t *len)
{
	size_t cap = 64 * 1024, n = 0;
	char *b = malloc(cap + 1);
	if (!b)
		return -ENOMEM;
	for (;;) {
		if (interrupted && *interrupted) {
			free(b);
			return -EINTR;
		}
		if (cap - n < 16 * 1024) {
			char *nb = realloc(b, cap * 2 + 1);
			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			free(b);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	b[n] = '\0';
	*data = b;
	*len = n;
	return 0;
}

int
sh_cmd_open_input(struct sh_cmd *c, const char *name, int *fd)
{
	if (strcmp(name, "-") == 0) {
		*fd = c->in;
		return 0;
	}
	int r = sh_fs_open(c->fs, name, O_RDONLY | O_CLOEXEC, 0);
	if (r < 0)
		return r;
	*fd = r;
	return 1;
}

uint64_t
sh_count_newlines(const char *buf, size_t n)
{
	uint64_t k = 0;
	size_t i = 0;
#if defined(__SSE2__) && defined(__x86_64__)
	/* Each byte lane counts its matches (cmpeq gives -1), at most 255 blocks before
	 * the lanes are summed (psadbw), so no lane overflows. */
	const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
	while (n - i >= 16) {
		size_t blocks = (n - i) / 16;
		if (blocks > 255)
			blocks = 255;
		__m128i lanes = zero;
		for (size_t b = 0; b < blocks; b++, i += 16)
			lanes = _mm_sub_epi8(lanes, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(buf + i)), nl));
		__m128i sums = _mm_sad_epu8(lanes, zero);
		k += (uint64_t)_mm_cvtsi128_si64(sums) + (uint64_t)_mm_extract_epi16(sums, 4);
	}
#endif
	for (; i < n; i++)
		k += buf[i] == '\n';
	return k;
}

bool
sh_fd_short_read_is_eof(int fd)
{
	static const unsigned long local[] = {
		0xEF53,     /* ext2/3/4 */
		0x58465342, /* xfs */
		0x9123683E, /* btrfs */
		0xF2F52010, /* f2fs */
		0x01021994, /* tmpfs */
		0x794c7630, /* overlayfs (its reads are the layer's) */
	};
	struct statfs sf;
	if (fstatfs(fd, &sf) < 0)
		return false;
	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		if ((unsigned long)sf.f_type == local[i])
			return true;
	return false;
}

bool
sh_cmd_stopped(const struct sh_cmd *c)
{
	return (c->interrupted && *c->interrupted) || c->out_buf->error;
}

int
sh_cmd_finish(struct sh_cmd *c, int status)
{
	(void)sh_out_flush(c->out_buf);
	if (c->out_buf->error == -EPIPE)
		return 141;
	if (c->out_buf->error) {
		int e = -c->out_buf->error;
		sh_out_printf(c->err_buf, "%s: write error: %s\n", sh_cmd_name(c), strerror(e));
		sh_out_flush(c->err_buf);
		return status ? status : 1;
	}
	if (c->interrupted && *c->interrupted)
		return 130;
	return status;
}

const char *
sh_qname(const char *name, bool always)
{
	static __thread char *ring[8];
	static __thread unsigned next;
	bool need = always || !*name;
	for (const char *p = name; *p && !need; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    ",._+:@%/-=^", *p) && !((unsigned char)*p & 0x80))
			need = true;
	if (!need)
		return name;
	if (strchr(name, '\'') && !strpbrk(name, "$`\\\"!")) {
		char *d = NULL;
		if (asprintf(&d, "\"%s\"", name) < 0)
			return name;
		unsigned k = next++ % 8;
		free(ring[k]);
		ring[k] = d;
		return d;
	}
	size_t n = 3;
	for (const char *p = name; *p; p++)
		n += *p == '\'' ? 4 : 1;
	char *q = malloc(n);
	if (!q)
		return name;
	char *w = q;
	*w++ = '\'';
	for (const char *p = name; *p; p++) {
		if (*p == '\'') {
			memcpy(w, "'\\''", 4);
			w += 4;
		} else {
			*w++ = *p;
		}
	}
	*w++ = '\'';
	*w = '\0';
	unsigned i = next++ % 8;
	free(ring[i]);
	ring[i] = q;
	return q;
}

int
sh_parse_count(const char *s, uint64_t *v)
{
	if (!*s || *s == '-' || *s == ' ')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long n = strtoull(s, &end, 10);
	if (end == s)
		return -EINVAL;
	bool overflow = errno == ERANGE;
	uint64_t mult = 1;
	if (*end) {
		static const char units[] = "bKMGTPEZY";
		const char *u = strchr(units, *end == 'k' ? 'K' : *end);
		if (!u || !*u)
			return -EINVAL;
		if (*u == 'b') {
			mult = 512;
			end++;
		} else {
			int power = (int)(u - units);
			uint64_t base = 1024;
			end++;
			if (*end == 'B') {
				base = 1000;
				end++;
			} else if (*end == 'i' && end[1] == 'B') {
				end += 2;
			}
			for (int i = 0; i < power; i++) {
				if (mult > UINT64_MAX / base) {
					overflow = true;
					break;
				}
				mult *= base;
			}
		}
		if (*end)
			return -EINVAL;
	}
	if (overflow || (mult > 1 && n > UINT64_MAX / mult)) {
		*v = UINT64_MAX;
		return -ERANGE;
	}
	*v = n * mult;
	return 0;
}
