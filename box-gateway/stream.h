/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stream.h — one nonblocking TCP socket of box-gateway, plain or TLS
 * (BoringSSL driven directly on the fd: no libevent_openssl), with an input
 * and an output evbuffer.
 *
 * Reading fills `in` (at most GW_READ_BURST per wakeup, GW_READ_CHUNK per
 * call) and calls on_read; writing drains `out` as soon as data is queued
 * (gw_stream_flush) and on EV_WRITE, calling on_write after progress so the
 * owner can resume the other side below its low watermark. on_close gets 0
 * for an orderly EOF (TLS close_notify or TCP FIN), negative errno otherwise;
 * the stream then reads nothing more (writes may still be flushed on EOF).
 * Idle memory: two empty evbuffers and two events; BoringSSL releases its
 * record buffers between records.
 * Trusts: nothing it reads.
 */
#ifndef BOX_GATEWAY_STREAM_H
#define BOX_GATEWAY_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <openssl/ssl.h>

struct gw_stream;

struct gw_stream_ops {
	void (*on_read)(struct gw_stream *s, void *arg);
	void (*on_write)(struct gw_stream *s, void *arg);
	void (*on_close)(struct gw_stream *s, int err, void *arg);
	/* connect finished (err 0) or failed; handshake finished or failed */
	void (*on_connected)(struct gw_stream *s, int err, void *arg);
	void (*on_handshake)(struct gw_stream *s, int err, const char *why, void *arg);
};

struct gw_stream {
	int fd;
	SSL *ssl;
	struct event *rev, *wev;
	struct evbuffer *in, *out;
	const struct gw_stream_ops *ops;
	void *arg;
	int64_t *activity; /* owner's last-activity time (ms), updated on I/O */
	unsigned state;
	bool reading; /* the owner wants data */
	bool read_wants_write;
	bool write_wants_read;
	bool eof;	      /* read side ended */
	bool broken;	      /* write side failed */
	bool check_tls_byte;  /* server handshake: the first byte must be a TLS record */
	size_t pending_write; /* SSL_write length to retry with */
	bool discard;	      /* lingering close: input read and dropped */
	bool sock_drained;    /* TLS: the last read(2) returned less than asked */
	uint8_t *ra;	      /* TLS read-ahead (only while it holds bytes) */
	size_t ra_off, ra_len;
	size_t discarded;
	uint64_t bytes_in, bytes_out;
};

/* Take fd (nonblocking, CLOEXEC). NULL on ENOMEM (fd closed). */
struct gw_stream *gw_stream_new(struct event_base *base, int fd, const struct gw_stream_ops *ops,
				void *arg, int64_t *activity);
void gw_stream_free(struct gw_stream *s);
/* A nonblocking connect to sa was started on s->fd: on_connected when it ends. */
void gw_stream_wait_connect(struct gw_stream *s);
/* Start a TLS handshake on the connected socket, taking ssl. */
void gw_stream_tls_accept(struct gw_stream *s, SSL *ssl);
void gw_stream_tls_connect(struct gw_stream *s, SSL *ssl);
void gw_stream_read(struct gw_stream *s, bool on);
/* Write what `out` holds now. */
void gw_stream_flush(struct gw_stream *s);
size_t gw_stream_pending(const struct gw_stream *s);
/* Half-close the write side once out is empty (TLS: close_notify). */
void gw_stream_shutdown(struct gw_stream *s);

/*
 * After gw_stream_shutdown: read and drop what the peer still sends (at most
 * GW_LINGER_MAX bytes), then on_close(0) — so a reply sent before closing
 * with unread input (a 413, a refused upload) is not lost to a TCP reset.
 */
#define GW_LINGER_MAX (1u << 20)
void gw_stream_linger(struct gw_stream *s);
/* No more callbacks: the owner frees the stream later, outside any callback of it. */
void gw_stream_kill(struct gw_stream *s);
bool gw_stream_open(const struct gw_stream *s);

int64_t gw_now_ms(void);

#endif
