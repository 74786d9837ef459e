/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stream.c — nonblocking sockets with BoringSSL or plain I/O (stream.h).
 *
 * TLS is driven on the fd itself with SSL_get_error's WANT_READ/WANT_WRITE
 * mapped onto one read and one write event, through a small BIO of our own
 * that reads ahead: BoringSSL asks for a record header and then its body (two
 * read(2) calls per record, and a third that returns EAGAIN); ours reads up to
 * 16 KiB at once into a buffer that exists only while it holds bytes (idle
 * connections keep none), and remembers when the socket was drained so the
 * loop stops without the EAGAIN call. SSL_write is
 * retried with the length of the failed attempt (BoringSSL requires it) and
 * SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER lets the evbuffer's chain move.
 * Reads go straight into space reserved in `in` (no bounce buffer).
 * Trusts: nothing it reads; the owner caps what it keeps.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>

#include "ca.h"
#include "gateway.h"
#include "stream.h"

enum { ST_CONNECTING, ST_HANDSHAKE, ST_OPEN, ST_CLOSED };

static void on_event(evutil_socket_t fd, short what, void *arg);

#define RA_SIZE (16u << 10)

/*
 * One read-ahead buffer kept aside for the next stream that reads: a keep-alive
 * exchange takes and gives one back per read, and a 16 KiB malloc/free pair each time
 * cost more than the read's copy. Idle connections still hold none (single-threaded).
 */
static uint8_t *ra_spare;

static uint8_t *
ra_take(void)
{
	uint8_t *b = ra_spare;
	ra_spare = NULL;
	return b ? b : malloc(RA_SIZE);
}

static void
ra_give(uint8_t *b)
{
	if (!b)
		return;
	if (ra_spare)
		free(b);
	else
		ra_spare = b;
}

/* ---- the read-ahead socket BIO ------------------------------------------------- */

static int
ra_bio_read(BIO *bio, char *out, int len)
{
	struct gw_stream *s = BIO_get_data(bio);
	BIO_clear_retry_flags(bio);
	if (len <= 0)
		return 0;
	if (s->ra_off < s->ra_len) {
		size_t n = s->ra_len - s->ra_off;
		if (n > (size_t)len)
			n = (size_t)len;
		memcpy(out, s->ra + s->ra_off, n);
		s->ra_off += n;
		if (s->ra_off == s->ra_len) {
			ra_give(s->ra);
			s->ra = NULL;
			s->ra_off = s->ra_len = 0;
		}
		return (int)n;
	}
	if (s->sock_drained) {
		/* The last read(2) returned less than asked: nothing more is there now. */
		BIO_set_retry_read(bio);
		return -1;
	}
	if (!s->ra) {
		s->ra = ra_take();
		if (!s->ra)
			return -1;
	}
	ssize_t n = read(s->fd, s->ra, RA_SIZE);
	if (n < 0) {
		ra_give(s->ra);
		s->ra = NULL;
		if (errno == EAGAIN || errno == EINTR) {
			s->sock_drained = true;
			BIO_set_retry_read(bio);
		}
		return -1;
	}
	if (n == 0) {
		ra_give(s->ra);
		s->ra = NULL;
		return 0;
	}
	s->sock_drained = (size_t)n < RA_SIZE;
	s->ra_len = (size_t)n;
	s->ra_off = 0;
	return ra_bio_read(bio, out, len);
}

static int
ra_bio_write(BIO *bio, const char *in, int len)
{
	struct gw_stream *s = BIO_get_data(bio);
	BIO_clear_retry_flags(bio);
	ssize_t n = write(s->fd, in, (size_t)len);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			BIO_set_retry_write(bio);
		return -1;
	}
	return (int)n;
}

static long
ra_bio_ctrl(BIO *bio, int cmd, long larg, void *parg)
{
	(void)bio;
	(void)larg;
	(void)parg;
	return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int
ra_bio_create(BIO *bio)
{
	BIO_set_init(bio, 1);
	return 1;
}

static BIO_METHOD *ra_method;

static BIO *
ra_bio_new(struct gw_stream *s)
{
	if (!ra_method) {
		ra_method = BIO_meth_new(BIO_TYPE_SOCKET, "box-gateway read-ahead");
		if (!ra_method || !BIO_meth_set_read(ra_method, ra_bio_read) ||
		    !BIO_meth_set_write(ra_method, ra_bio_write) ||
		    !BIO_meth_set_ctrl(ra_method, ra_bio_ctrl) ||
		    !BIO_meth_set_create(ra_method, ra_bio_create))
			return NULL;
	}
	BIO *b = BIO_new(ra_method);
	if (b)
		BIO_set_data(b, s);
	return b;
}

/* Bytes TLS holds that the socket will not signal again. */
static bool
tls_buffered(const struct gw_stream *s)
{
	return s->ssl && (SSL_pending(s->ssl) > 0 || s->ra_off < s->ra_len);
}

int64_t
gw_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct gw_stream *
gw_stream_new(struct event_base *base, int fd, const struct gw_stream_ops *ops, void *arg,
	      int64_t *activity)
{
	struct gw_stream *s = calloc(1, sizeof(*s));
	if (!s) {
		close(fd);
		return NULL;
	}
	s->fd = fd;
	s->ops = ops;
	s->arg = arg;
	s->activity = activity;
	s->state = ST_OPEN;
	s->in = evbuffer_new();
	s->out = evbuffer_new();
	s->rev = event_new(base, fd, EV_READ | EV_PERSIST, on_event, s);
	s->wev = event_new(base, fd, EV_WRITE | EV_PERSIST, on_event, s);
	if (!s->in || !s->out || !s->rev || !s->wev) {
		gw_stream_free(s);
		return NULL;
	}
	return s;
}

void
gw_stream_free(struct gw_stream *s)
{
	if (!s)
		return;
	if (s->rev)
		event_free(s->rev);
	if (s->wev)
		event_free(s->wev);
	if (s->ssl)
		SSL_free(s->ssl);
	ra_give(s->ra);
	if (s->in)
		evbuffer_free(s->in);
	if (s->out)
		evbuffer_free(s->out);
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}

static void
touch(struct gw_stream *s)
{
	if (s->activity)
		*s->activity = gw_now_ms();
}

/* The events the stream needs now. */
static void
update_events(struct gw_stream *s)
{
	bool want_r = false, want_w = false;

	switch (s->state) {
	case ST_CONNECTING:
		want_w = true;
		break;
	case ST_HANDSHAKE:
		want_r = !s->read_wants_write;
		want_w = s->read_wants_write;
		break;
	case ST_OPEN:
		if (s->discard) {
			want_r = true;
			break;
		}
		want_r = (s->reading && !s->eof && !s->read_wants_write) || s->write_wants_read;
		want_w = (!s->broken && evbuffer_get_length(s->out) > 0 && !s->write_wants_read) ||
			 s->read_wants_write;
		break;
	default:
		break;
	}
	if (want_r != (event_pending(s->rev, EV_READ, NULL) != 0)) {
		if (want_r)
			event_add(s->rev, NULL);
		else
			event_del(s->rev);
	}
	if (want_w != (event_pending(s->wev, EV_WRITE, NULL) != 0)) {
		if (want_w)
			event_add(s->wev, NULL);
		else
			event_del(s->wev);
	}
}

static void
fail(struct gw_stream *s, int err)
{
	s->eof = true;
	s->broken = true;
	s->state = ST_CLOSED;
	update_events(s);
	s->ops->on_close(s, err, s->arg);
}

void
gw_stream_wait_connect(struct gw_stream *s)
{
	s->state = ST_CONNECTING;
	update_events(s);
}

static void
handshake_step(struct gw_stream *s)
{
	s->read_wants_write = false;
	if (s->check_tls_byte) {
		unsigned char b;
		ssize_t n = recv(s->fd, &b, 1, MSG_PEEK);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			update_events(s);
			return;
		}
		s->check_tls_byte = false;
		if (n <= 0 || b != 0x16) {
			s->state = ST_CLOSED;
			update_events(s);
			s->ops->on_handshake(s, -EPROTO,
					     n == 0 ? "closed before the TLS handshake"
						    : "not a TLS ClientHello inside CONNECT",
					     s->arg);
			return;
		}
	}
	int r = SSL_do_handshake(s->ssl);
	if (r == 1) {
		s->state = ST_OPEN;
		update_events(s);
		s->ops->on_handshake(s, 0, NULL, s->arg);
		/* The peer's first record may have come with its last handshake bytes. */
		if (s->state == ST_OPEN && s->reading && tls_buffered(s))
			event_active(s->rev, EV_READ, 0);
		return;
	}
	int e = SSL_get_error(s->ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		s->read_wants_write = e == SSL_ERROR_WANT_WRITE;
		update_events(s);
		return;
	}
	char why[160];
	unsigned long ec = ERR_peek_last_error();
	if (ec)
		(void)snprintf(why, sizeof(why), "TLS handshake failed: %s",
			       ERR_reason_error_string(ec) ? ERR_reason_error_string(ec) : "error");
	else
		(void)snprintf(why, sizeof(why), "TLS handshake failed (connection closed)");
	long vr = SSL_is_server(s->ssl) ? X509_V_OK : gw_tls_client_verify_result(s->ssl);
	if (vr != X509_V_OK)
		(void)snprintf(why, sizeof(why), "upstream certificate not trusted: %s",
			       X509_verify_cert_error_string(vr));
	ERR_clear_error();
	s->state = ST_CLOSED;
	update_events(s);
	s->ops->on_handshake(s, -EPROTO, why, s->arg);
}

static void
tls_start(struct gw_stream *s, SSL *ssl, bool server)
{
	s->ssl = ssl;
	BIO *bio = ra_bio_new(s);
	if (!bio) {
		s->state = ST_CLOSED;
		s->ops->on_handshake(s, -ENOMEM, "out of memory", s->arg);
		return;
	}
	SSL_set_bio(ssl, bio, bio);
	SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	if (server) {
		SSL_set_accept_state(ssl);
		s->check_tls_byte = true;
	} else {
		SSL_set_connect_state(ssl);
	}
	s->state = ST_HANDSHAKE;
	handshake_step(s);
}

void
gw_stream_tls_accept(struct gw_stream *s, SSL *ssl)
{
	tls_start(s, ssl, true);
}

void
gw_stream_tls_connect(struct gw_stream *s, SSL *ssl)
{
	tls_start(s, ssl, false);
}

/* Read until EAGAIN or the burst; returns bytes read; sets eof / calls fail. */
static size_t
do_read(struct gw_stream *s, int *err)
{
	size_t total = 0;

	*err = 0;
	s->write_wants_read = false;
	while (total < GW_READ_BURST && !s->eof) {
		struct evbuffer_iovec v;
		if (evbuffer_reserve_space(s->in, GW_READ_CHUNK, &v, 1) < 1) {
			*err = -ENOMEM;
			return total;
		}
		ssize_t n;
		size_t want = v.iov_len > GW_READ_CHUNK ? GW_READ_CHUNK : v.iov_len;
		if (s->ssl) {
			if (total > 0 && s->sock_drained && !tls_buffered(s)) {
				v.iov_len = 0;
				evbuffer_commit_space(s->in, &v, 1);
				break;
			}
			int r = SSL_read(s->ssl, v.iov_base, (int)want);
			if (r > 0) {
				n = r;
			} else {
				int e = SSL_get_error(s->ssl, r);
				v.iov_len = 0;
				evbuffer_commit_space(s->in, &v, 1);
				if (e == SSL_ERROR_WANT_READ)
					break;
				if (e == SSL_ERROR_WANT_WRITE) {
					s->read_wants_write = true;
					break;
				}
				if (e == SSL_ERROR_ZERO_RETURN) {
					s->eof = true;
					break;
				}
				/* A TCP EOF without close_notify is an EOF too (HTTP framing
				 * decides whether the message was whole). */
				if (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
					s->eof = true;
					break;
				}
				ERR_clear_error();
				*err = -EPROTO;
				return total;
			}
		} else {
			n = read(s->fd, v.iov_base, want);
			if (n <= 0) {
				v.iov_len = 0;
				evbuffer_commit_space(s->in, &v, 1);
				if (n == 0) {
					s->eof = true;
					break;
				}
				if (errno == EAGAIN || errno == EINTR)
					break;
				*err = -errno;
				return total;
			}
		}
		v.iov_len = (size_t)n;
		evbuffer_commit_space(s->in, &v, 1);
		total += (size_t)n;
		if (!s->ssl && (size_t)n < want)
			break; /* the socket is drained: saves a read returning EAGAIN */
	}
	return total;
}

/* Write from out until EAGAIN or empty. Returns 0, or negative errno. */
static int
do_write(struct gw_stream *s)
{
	s->read_wants_write = false;
	while (evbuffer_get_length(s->out) > 0) {
		if (s->ssl) {
			struct evbuffer_iovec v;
			if (evbuffer_peek(s->out, -1, NULL, &v, 1) < 1)
				break;
			size_t len = v.iov_len;
			if (s->pending_write) {
				/* The retry must not be shorter than the failed attempt. */
				if (len < s->pending_write) {
					(void)evbuffer_pullup(s->out, (ssize_t)s->pending_write);
					(void)evbuffer_peek(s->out, -1, NULL, &v, 1);
				}
				len = s->pending_write;
			} else {
				/* One record for what is queued (a response head and its small
				 * body are two chains): one write(2), not one per chain. */
				size_t total = evbuffer_get_length(s->out);
				if (total <= GW_READ_CHUNK && len < total) {
					/* Small: gathered (a copy of at most 16 KiB). A bulk
					 * transfer's chains go out as they are, no copy. */
					(void)evbuffer_pullup(s->out, (ssize_t)total);
					(void)evbuffer_peek(s->out, -1, NULL, &v, 1);
					len = total;
				} else if (len > GW_READ_CHUNK) {
					len = GW_READ_CHUNK;
				}
			}
			int r = SSL_write(s->ssl, v.iov_base, (int)len);
			if (r > 0) {
				s->pending_write = 0;
				evbuffer_drain(s->out, (size_t)r);
				s->bytes_out += (size_t)r;
				continue;
			}
			int e = SSL_get_error(s->ssl, r);
			s->pending_write = len;
			if (e == SSL_ERROR_WANT_WRITE)
				return 0;
			if (e == SSL_ERROR_WANT_READ) {
				s->write_wants_read = true;
				return 0;
			}
			ERR_clear_error();
			return -EPIPE;
		}
		struct evbuffer_iovec v[8];
		int nv = evbuffer_peek(s->out, -1, NULL, v, 8);
		if (nv > 8)
			nv = 8;
		struct iovec iov[8];
		for (int i = 0; i < nv; i++)
			iov[i] = (struct iovec){v[i].iov_base, v[i].iov_len};
		ssize_t n = writev(s->fd, iov, nv);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			return -errno;
		}
		evbuffer_drain(s->out, (size_t)n);
		s->bytes_out += (size_t)n;
	}
	return 0;
}

void
gw_stream_flush(struct gw_stream *s)
{
	if (s->state != ST_OPEN || s->broken)
		return;
	size_t before = evbuffer_get_length(s->out);
	int r = do_write(s);
	if (r < 0) {
		fail(s, r);
		return;
	}
	if (evbuffer_get_length(s->out) != before)
		touch(s);
	update_events(s);
}

size_t
gw_stream_pending(const struct gw_stream *s)
{
	return evbuffer_get_length(s->out);
}

void
gw_stream_read(struct gw_stream *s, bool on)
{
	if (s->reading == on)
		return;
	s->reading = on;
	update_events(s);
	/* TLS may hold bytes the socket no longer signals. */
	if (on && s->state == ST_OPEN && tls_buffered(s))
		event_active(s->rev, EV_READ, 0);
}

void
gw_stream_linger(struct gw_stream *s)
{
	if (s->state != ST_OPEN)
		return;
	s->discard = true;
	s->reading = false;
	event_del(s->wev);
	event_add(s->rev, NULL);
}

void
gw_stream_kill(struct gw_stream *s)
{
	s->state = ST_CLOSED;
	s->reading = false;
	event_del(s->rev);
	event_del(s->wev);
}

bool
gw_stream_open(const struct gw_stream *s)
{
	return s->state == ST_OPEN;
}

void
gw_stream_shutdown(struct gw_stream *s)
{
	if (s->state != ST_OPEN)
		return;
	if (s->ssl)
		(void)SSL_shutdown(s->ssl);
	ERR_clear_error();
	(void)shutdown(s->fd, SHUT_WR);
}

static void
on_event(evutil_socket_t fd, short what, void *arg)
{
	struct gw_stream *s = arg;

	switch (s->state) {
	case ST_CONNECTING: {
		int soerr = 0;
		socklen_t sl = sizeof(soerr);
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
			soerr = errno;
		s->state = soerr ? ST_CLOSED : ST_OPEN;
		update_events(s);
		touch(s);
		s->ops->on_connected(s, -soerr, s->arg);
		return;
	}
	case ST_HANDSHAKE:
		s->sock_drained = false;
		handshake_step(s);
		return;
	case ST_OPEN:
		break;
	default:
		update_events(s);
		return;
	}

	if ((what & EV_WRITE) || s->write_wants_read) {
		bool was_blocked = s->write_wants_read;
		if ((what & EV_WRITE) || (was_blocked && (what & EV_READ))) {
			s->write_wants_read = false;
			size_t before = evbuffer_get_length(s->out);
			int r = do_write(s);
			if (r < 0) {
				fail(s, r);
				return;
			}
			if (evbuffer_get_length(s->out) != before) {
				touch(s);
				update_events(s);
				s->ops->on_write(s, s->arg);
				if (s->state != ST_OPEN)
					return;
			}
		}
	}
	if (s->discard && (what & EV_READ)) {
		/* Lingering close: what the peer still sends is read and dropped (raw,
		 * even under TLS: our close_notify went out), so our last reply is not
		 * destroyed by a reset. */
		char junk[16384];
		for (;;) {
			ssize_t n = read(s->fd, junk, sizeof(junk));
			if (n > 0) {
				s->discarded += (size_t)n;
				if (s->discarded < GW_LINGER_MAX)
					continue;
			}
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				return;
			s->eof = true;
			s->state = ST_CLOSED;
			update_events(s);
			s->ops->on_close(s, 0, s->arg);
			return;
		}
	}
	if (((what & EV_READ) || s->read_wants_write) && s->reading && !s->eof) {
		int err;
		s->sock_drained = false;
		size_t n = do_read(s, &err);
		s->bytes_in += n;
		if (n)
			touch(s);
		update_events(s);
		if (n) {
			s->ops->on_read(s, s->arg);
			/* The owner may have killed the stream (freed later, never here). */
			if (s->state != ST_OPEN)
				return;
		}
		if (err) {
			fail(s, err);
			return;
		}
		if (s->eof && s->state == ST_OPEN) {
			update_events(s);
			s->ops->on_close(s, 0, s->arg);
			return;
		}
		if (s->reading && tls_buffered(s))
			event_active(s->rev, EV_READ, 0);
	}
	update_events(s);
}
