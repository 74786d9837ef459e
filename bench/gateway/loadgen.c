/* SPDX-License-Identifier: Apache-2.0 */
/*
 * loadgen.c — the load generator of bench/gateway: HTTP/1.1 over TLS (or plain), directly or
 * through an HTTP proxy with CONNECT, driven by one epoll loop.
 *
 *   loadgen [--proxy 127.0.0.1:PORT] [--cacert CA.pem] [--timeout S] WORKLOAD URL [options]
 *   download URL                      one GET, prints its throughput
 *   gets URL --conns N --requests M   N keep-alive connections share M small GETs (the next
 *                                     request leaves as soon as the previous answer ends);
 *                                     prints requests/s and p50/p99 latency
 *   sse URL [--requests M]            M GETs of an event stream on one connection; prints the
 *                                     time from sending each request to its first complete
 *                                     event ("\n\n"), p50/min/max
 *   idle URL --conns N --hold S       N connections, one GET each, then all held idle S
 *                                     seconds; prints "idle ready conns=N" (flushed) once all
 *                                     are idle, so the caller can read the proxy's RSS
 * Connection set-up (TCP, CONNECT, TLS handshake) is done before any timing starts, at most
 * --parallel (default 256) at a time. Output: one line of key=value per workload on stdout.
 *
 * Trusts: nothing from the peers (response heads capped at 16 KiB, chunk sizes checked); it
 * only ever dials 127.0.0.1 (the URL's host is used for SNI, Host and CONNECT, never resolved),
 * and every loop is bounded by the request count and the --timeout deadline.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#define HEAD_CAP 16384
#define READ_BUF (256 * 1024)
#define MAX_CONNS 100000
#define MAX_REQUESTS 10000000L

enum workload { W_DOWNLOAD, W_GETS, W_SSE, W_IDLE };

enum conn_state {
	ST_NEW,
	ST_CONNECTING,
	ST_PROXY_SEND,
	ST_PROXY_RECV,
	ST_TLS,
	ST_READY, /* set up; waiting for the timed phase */
	ST_SEND,
	ST_RECV,
	ST_IDLE,
	ST_CLOSED,
};

enum body_mode { BODY_NONE, BODY_LENGTH, BODY_CHUNKED, BODY_TO_CLOSE };
enum chunk_state { CH_SIZE, CH_SIZE_LF, CH_DATA, CH_DATA_CR, CH_DATA_LF, CH_TRAILER };

struct conn {
	int fd;
	SSL *ssl;
	enum conn_state st;
	uint32_t events;
	char out[4096];
	size_t out_len, out_off;
	char head[HEAD_CAP];
	size_t head_len;
	int in_body;
	int status;
	enum body_mode body;
	long long body_left;
	enum chunk_state chunk;
	long long chunk_left;
	int trailer_line_len;
	int server_close;
	uint64_t body_bytes;
	uint64_t t_sent;
	int first_event_done;
	char last_byte;
	long requests_done;
};

struct options {
	enum workload workload;
	int tls;
	char host[256];
	int port;
	char path[2048];
	int proxy_port;
	const char *cacert;
	int conns;
	long requests;
	int hold_s;
	int parallel;
	int timeout_s;
};

static struct options opt;
static struct conn *conns;
static int epfd = -1;
static SSL_CTX *ssl_ctx;
static char *read_buf;
static uint64_t deadline_ns;

/* Shared progress of the timed phase. */
static long requests_issued, requests_done;
static double *latencies_ms;
static long latencies_n;
static int conns_set_up, conns_setting_up, next_to_start, conns_idle, conns_closed_idle;

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
die(const char *what)
{
	fprintf(stderr, "loadgen: %s\n", what);
	exit(1);
}

static void
conn_fail(struct conn *c, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[256] = "";

	if (e)
		ERR_error_string_n(e, buf, sizeof(buf));
	fprintf(stderr, "loadgen: connection %ld (state %d): %s%s%s%s%s\n", (long)(c - conns), c->st,
		what, errno ? ": " : "", errno ? strerror(errno) : "", buf[0] ? ": " : "", buf);
	exit(1);
}

static void
set_events(struct conn *c, uint32_t ev)
{
	struct epoll_event e = { .events = ev, .data.ptr = c };

	if (c->events == ev)
		return;
	if (epoll_ctl(epfd, c->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd, &e) < 0)
		conn_fail(c, "epoll_ctl");
	c->events = ev;
}

/* Reads up to n bytes: >0 bytes, 0 at EOF, -1 when it would block (events set). */
static ssize_t
conn_read(struct conn *c, char *buf, size_t n, int use_tls)
{
	if (use_tls) {
		int r = SSL_read(c->ssl, buf, n > INT_MAX ? INT_MAX : (int)n);
		if (r > 0)
			return r;
		int err = SSL_get_error(c->ssl, r);
		if (err == SSL_ERROR_WANT_READ) {
			set_events(c, EPOLLIN);
			return -1;
		}
		if (err == SSL_ERROR_WANT_WRITE) {
			set_events(c, EPOLLOUT);
			return -1;
		}
		if (err == SSL_ERROR_ZERO_RETURN)
			return 0;
		if (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)
			return 0; /* an unclean close */
		conn_fail(c, "TLS read");
	}
	ssize_t r = read(c->fd, buf, n);
	if (r >= 0)
		return r;
	if (errno == EAGAIN) {
		set_events(c, EPOLLIN);
		return -1;
	}
	if (errno == ECONNRESET)
		return 0;
	conn_fail(c, "read");
	return 0;
}

/* Writes c->out from out_off: 1 when all is sent, 0 when it would block. */
static int
conn_flush(struct conn *c, int use_tls)
{
	while (c->out_off < c->out_len) {
		size_t n = c->out_len - c->out_off;
		if (use_tls) {
			int r = SSL_write(c->ssl, c->out + c->out_off, (int)n);
			if (r <= 0) {
				int err = SSL_get_error(c->ssl, r);
				if (err == SSL_ERROR_WANT_WRITE) {
					set_events(c, EPOLLOUT);
					return 0;
				}
				if (err == SSL_ERROR_WANT_READ) {
					set_events(c, EPOLLIN);
					return 0;
				}
				conn_fail(c, "TLS write");
			}
			c->out_off += (size_t)r;
		} else {
			ssize_t r = write(c->fd, c->out + c->out_off, n);
			if (r < 0) {
				if (errno == EAGAIN) {
					set_events(c, EPOLLOUT);
					return 0;
				}
				conn_fail(c, "write");
			}
			c->out_off += (size_t)r;
		}
	}
	return 1;
}

static void
conn_start(struct conn *c)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int one = 1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)(opt.proxy_port ? opt.proxy_port : opt.port));
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		conn_fail(c, "socket");
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->events = 0;
	c->st = ST_CONNECTING;
	conns_setting_up++;
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS)
		conn_fail(c, "connect");
	set_events(c, EPOLLOUT);
}

static void
format_request(struct conn *c)
{
	int n;

	if (opt.tls || !opt.proxy_port)
		n = snprintf(c->out, sizeof(c->out), "GET %s HTTP/1.1\r\nHost: %s:%d\r\nUser-Agent: box-loadgen\r\n\r\n",
			opt.path, opt.host, opt.port);
	else
		n = snprintf(c->out, sizeof(c->out),
			"GET http://%s:%d%s HTTP/1.1\r\nHost: %s:%d\r\nUser-Agent: box-loadgen\r\n\r\n",
			opt.host, opt.port, opt.path, opt.host, opt.port);
	if (n < 0 || (size_t)n >= sizeof(c->out))
		die("request too long");
	c->out_len = (size_t)n;
	c->out_off = 0;
	c->head_len = 0;
	c->in_body = 0;
	c->body_bytes = 0;
	c->first_event_done = 0;
	c->last_byte = 0;
}

static void
send_request(struct conn *c)
{
	format_request(c);
	c->st = ST_SEND;
	c->t_sent = now_ns();
	requests_issued++;
}

static int
header_is(const char *line, size_t len, const char *name, const char **value)
{
	size_t n = strlen(name);

	if (len <= n || strncasecmp(line, name, n) != 0 || line[n] != ':')
		return 0;
	*value = line + n + 1;
	while (**value == ' ' || **value == '\t')
		(*value)++;
	return 1;
}

/* Parses c->head (status line and headers, ending in CRLF CRLF). */
static void
parse_head(struct conn *c, int for_connect)
{
	char *p = c->head, *end = c->head + c->head_len;

	if (c->head_len < 12 || strncmp(p, "HTTP/1.", 7) != 0)
		conn_fail(c, "not an HTTP/1.x response");
	c->status = atoi(p + 9);
	c->body = BODY_TO_CLOSE;
	c->server_close = 0;
	if (for_connect)
		return;
	int has_length = 0;
	for (char *line = memchr(p, '\n', (size_t)(end - p)); line && line + 1 < end;) {
		line++;
		char *eol = memchr(line, '\n', (size_t)(end - line));
		if (!eol)
			break;
		size_t len = (size_t)(eol - line);
		const char *v;
		if (header_is(line, len, "content-length", &v)) {
			c->body_left = strtoll(v, NULL, 10);
			if (c->body_left < 0)
				conn_fail(c, "bad Content-Length");
			has_length = 1;
		} else if (header_is(line, len, "transfer-encoding", &v) && strncasecmp(v, "chunked", 7) == 0) {
			c->body = BODY_CHUNKED;
			c->chunk = CH_SIZE;
			c->chunk_left = 0;
		} else if (header_is(line, len, "connection", &v) && strncasecmp(v, "close", 5) == 0) {
			c->server_close = 1;
		}
		line = eol;
	}
	if (c->body != BODY_CHUNKED && has_length)
		c->body = c->body_left ? BODY_LENGTH : BODY_NONE;
	if (c->status == 204 || c->status == 304 || c->status < 200)
		c->body = BODY_NONE;
}

static void
note_body_data(struct conn *c, const char *data, size_t n)
{
	c->body_bytes += n;
	if (opt.workload != W_SSE || c->first_event_done || n == 0)
		return;
	for (size_t i = 0; i < n; i++) {
		if (data[i] == '\n' && c->last_byte == '\n') {
			c->first_event_done = 1;
			double ms = (double)(now_ns() - c->t_sent) / 1e6;
			if (latencies_n < opt.requests)
				latencies_ms[latencies_n++] = ms;
			return;
		}
		c->last_byte = data[i];
	}
}

/* Feeds body bytes; returns the count consumed and sets *done at the body's end. */
static size_t
feed_body(struct conn *c, const char *data, size_t n, int *done)
{
	size_t i = 0;

	*done = 0;
	switch (c->body) {
	case BODY_NONE:
		*done = 1;
		return 0;
	case BODY_TO_CLOSE:
		note_body_data(c, data, n);
		return n;
	case BODY_LENGTH: {
		size_t take = (size_t)c->body_left < n ? (size_t)c->body_left : n;
		note_body_data(c, data, take);
		c->body_left -= (long long)take;
		*done = c->body_left == 0;
		return take;
	}
	case BODY_CHUNKED:
		while (i < n && !*done) {
			char ch = data[i];
			switch (c->chunk) {
			case CH_SIZE:
				i++;
				if (ch == '\r') {
					c->chunk = CH_SIZE_LF;
				} else if (ch == ';') {
					c->chunk = CH_SIZE_LF; /* an extension: skip to LF */
				} else {
					int d = ch >= '0' && ch <= '9' ? ch - '0'
						: (ch | 0x20) >= 'a' && (ch | 0x20) <= 'f' ? (ch | 0x20) - 'a' + 10
											 : -1;
					if (d < 0 || c->chunk_left > (1LL << 40))
						conn_fail(c, "bad chunk size");
					c->chunk_left = c->chunk_left * 16 + d;
				}
				break;
			case CH_SIZE_LF:
				i++;
				if (ch == '\n') {
					if (c->chunk_left == 0) {
						c->chunk = CH_TRAILER;
						c->trailer_line_len = 0;
					} else {
						c->chunk = CH_DATA;
					}
				}
				break;
			case CH_DATA: {
				size_t take = n - i < (size_t)c->chunk_left ? n - i : (size_t)c->chunk_left;
				note_body_data(c, data + i, take);
				i += take;
				c->chunk_left -= (long long)take;
				if (c->chunk_left == 0)
					c->chunk = CH_DATA_CR;
				break;
			}
			case CH_DATA_CR:
				if (data[i++] != '\r')
					conn_fail(c, "chunk not followed by CRLF");
				c->chunk = CH_DATA_LF;
				break;
			case CH_DATA_LF:
				if (data[i++] != '\n')
					conn_fail(c, "chunk not followed by CRLF");
				c->chunk = CH_SIZE;
				c->chunk_left = 0;
				break;
			case CH_TRAILER:
				i++;
				if (ch == '\n') {
					if (c->trailer_line_len == 0)
						*done = 1;
					c->trailer_line_len = 0;
				} else if (ch != '\r') {
					c->trailer_line_len++;
				}
				break;
			default:
				conn_fail(c, "chunk state");
			}
		}
		return i;
	default:
		conn_fail(c, "body state");
	}
	return n;
}

static void response_done(struct conn *c);

/* Feeds response bytes (head, then body); a response ends in response_done. */
static void
feed_response(struct conn *c, const char *data, size_t n)
{
	while (n > 0 && c->st == ST_RECV) {
		if (!c->in_body) {
			/* Byte by byte up to the blank line keeps the head bounded and exact. */
			while (n > 0 && !c->in_body) {
				if (c->head_len >= HEAD_CAP - 1)
					conn_fail(c, "response head over 16 KiB");
				c->head[c->head_len++] = *data++;
				n--;
				if (c->head_len >= 4 && memcmp(c->head + c->head_len - 4, "\r\n\r\n", 4) == 0) {
					c->head[c->head_len] = 0;
					parse_head(c, 0);
					if (c->status != 200)
						conn_fail(c, "response status is not 200");
					c->in_body = 1;
				}
			}
			if (!c->in_body)
				return;
		}
		int done;
		size_t used = feed_body(c, data, n, &done);
		data += used;
		n -= used;
		if (done)
			response_done(c);
		else if (used == 0 && n > 0)
			conn_fail(c, "body parser stalled");
	}
	if (n > 0)
		conn_fail(c, "bytes after the response");
}

static void
conn_ready(struct conn *c)
{
	c->st = ST_READY;
	conns_setting_up--;
	conns_set_up++;
	set_events(c, EPOLLIN); /* a close by the peer while waiting shows up here */
	if (opt.workload == W_IDLE) {
		send_request(c);
	}
}

static void
handle_connect_ok(struct conn *c)
{
	if (!opt.tls) {
		conn_ready(c);
		return;
	}
	c->ssl = SSL_new(ssl_ctx);
	if (!c->ssl)
		conn_fail(c, "SSL_new");
	SSL_set_fd(c->ssl, c->fd);
	SSL_set_connect_state(c->ssl);
	struct in_addr a4;
	struct in6_addr a6;
	if (inet_pton(AF_INET, opt.host, &a4) == 1 || inet_pton(AF_INET6, opt.host, &a6) == 1) {
		if (!X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), opt.host))
			conn_fail(c, "set1_ip");
	} else {
		SSL_set_tlsext_host_name(c->ssl, opt.host);
		if (!SSL_set1_host(c->ssl, opt.host))
			conn_fail(c, "set1_host");
	}
	static const unsigned char alpn[] = "\x08http/1.1";
	SSL_set_alpn_protos(c->ssl, alpn, sizeof(alpn) - 1);
	c->st = ST_TLS;
}

/* Advances a connection as far as it can go without blocking. */
static void
drive(struct conn *c)
{
	for (;;) {
		switch (c->st) {
		case ST_CONNECTING: {
			int err = 0;
			socklen_t len = sizeof(err);
			getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
			if (err) {
				errno = err;
				conn_fail(c, "connect");
			}
			if (opt.proxy_port && opt.tls) {
				int n = snprintf(c->out, sizeof(c->out), "CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n",
					opt.host, opt.port, opt.host, opt.port);
				c->out_len = (size_t)n;
				c->out_off = 0;
				c->st = ST_PROXY_SEND;
			} else {
				handle_connect_ok(c);
			}
			break;
		}
		case ST_PROXY_SEND:
			if (!conn_flush(c, 0))
				return;
			c->head_len = 0;
			c->st = ST_PROXY_RECV;
			break;
		case ST_PROXY_RECV: {
			char ch;
			ssize_t r = conn_read(c, &ch, 1, 0);
			if (r < 0)
				return;
			if (r == 0)
				conn_fail(c, "proxy closed during CONNECT");
			if (c->head_len >= HEAD_CAP - 1)
				conn_fail(c, "CONNECT response head over 16 KiB");
			c->head[c->head_len++] = ch;
			if (c->head_len >= 4 && memcmp(c->head + c->head_len - 4, "\r\n\r\n", 4) == 0) {
				c->head[c->head_len] = 0;
				parse_head(c, 1);
				if (c->status != 200) {
					fprintf(stderr, "loadgen: CONNECT refused: %.200s\n", c->head);
					exit(1);
				}
				handle_connect_ok(c);
			}
			break;
		}
		case ST_TLS: {
			int r = SSL_do_handshake(c->ssl);
			if (r == 1) {
				conn_ready(c);
				break;
			}
			int err = SSL_get_error(c->ssl, r);
			if (err == SSL_ERROR_WANT_READ) {
				set_events(c, EPOLLIN);
				return;
			}
			if (err == SSL_ERROR_WANT_WRITE) {
				set_events(c, EPOLLOUT);
				return;
			}
			conn_fail(c, "TLS handshake");
			return;
		}
		case ST_READY:
		case ST_IDLE: {
			/* Nothing is expected: anything readable is a close (or a protocol error). */
			ssize_t r = conn_read(c, read_buf, READ_BUF, opt.tls);
			if (r < 0)
				return;
			if (r > 0)
				conn_fail(c, "unexpected bytes on an idle connection");
			if (c->st == ST_READY)
				conn_fail(c, "closed by the peer before the timed phase");
			close(c->fd);
			c->fd = -1;
			c->st = ST_CLOSED;
			conns_closed_idle++;
			return;
		}
		case ST_SEND:
			if (!conn_flush(c, opt.tls))
				return;
			c->st = ST_RECV;
			break;
		case ST_RECV: {
			ssize_t r = conn_read(c, read_buf, READ_BUF, opt.tls);
			if (r < 0)
				return;
			if (r == 0) {
				if (c->in_body && c->body == BODY_TO_CLOSE) {
					c->server_close = 1;
					response_done(c);
					return;
				}
				conn_fail(c, "closed by the peer during a response");
			}
			feed_response(c, read_buf, (size_t)r);
			break;
		}
		case ST_NEW:
		case ST_CLOSED:
		default:
			return;
		}
	}
}

static void
response_done(struct conn *c)
{
	double ms = (double)(now_ns() - c->t_sent) / 1e6;

	c->requests_done++;
	requests_done++;
	if (opt.workload == W_GETS && latencies_n < opt.requests)
		latencies_ms[latencies_n++] = ms;
	if (opt.workload == W_SSE && !c->first_event_done)
		conn_fail(c, "event stream ended without an event");
	if (c->server_close) {
		if (opt.workload != W_DOWNLOAD)
			conn_fail(c, "the server closed a keep-alive connection");
		c->st = ST_CLOSED;
		return;
	}
	if ((opt.workload == W_GETS || opt.workload == W_SSE) && requests_issued < opt.requests) {
		send_request(c);
		return;
	}
	if (opt.workload == W_IDLE) {
		conns_idle++;
		c->st = ST_IDLE;
		set_events(c, EPOLLIN);
		return;
	}
	c->st = ST_READY;
	set_events(c, EPOLLIN);
}

static void
loop_once(int timeout_ms)
{
	struct epoll_event evs[256];

	if (now_ns() > deadline_ns) {
		fprintf(stderr, "loadgen: --timeout %d s passed (%d set up, %ld of %ld requests done)\n",
			opt.timeout_s, conns_set_up, requests_done, opt.requests);
		exit(1);
	}
	int n = epoll_wait(epfd, evs, 256, timeout_ms);
	if (n < 0 && errno != EINTR)
		die("epoll_wait failed");
	for (int i = 0; i < n; i++)
		drive(evs[i].data.ptr);
}

/* Sets up every connection, at most --parallel at once; returns once all are ready. */
static void
set_up_all(void)
{
	while (conns_set_up < opt.conns) {
		while (next_to_start < opt.conns && conns_setting_up < opt.parallel) {
			struct conn *c = &conns[next_to_start++];
			conn_start(c);
			drive(c);
		}
		/* In idle mode each connection's request leaves as soon as it is ready. */
		if (conns_set_up < opt.conns)
			loop_once(100);
	}
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
percentile(double p)
{
	if (latencies_n == 0)
		return 0;
	long i = (long)(p * (double)(latencies_n - 1) + 0.5);
	return latencies_ms[i];
}

static void
parse_url(const char *url)
{
	const char *p;

	if (strncmp(url, "https://", 8) == 0) {
		opt.tls = 1;
		p = url + 8;
	} else if (strncmp(url, "http://", 7) == 0) {
		opt.tls = 0;
		p = url + 7;
	} else {
		die("the URL must start with https:// or http://");
	}
	const char *slash = strchr(p, '/');
	size_t hostport_len = slash ? (size_t)(slash - p) : strlen(p);
	char hostport[300];
	if (hostport_len == 0 || hostport_len >= sizeof(hostport))
		die("bad host in the URL");
	memcpy(hostport, p, hostport_len);
	hostport[hostport_len] = 0;
	char *colon = strrchr(hostport, ':');
	if (!colon || hostport[0] == '[')
		die("the URL needs host:port (no IPv6 literal)");
	*colon = 0;
	char *end;
	long port = strtol(colon + 1, &end, 10);
	if (*end || port < 1 || port > 65535)
		die("bad port in the URL");
	if (strlen(hostport) >= sizeof(opt.host))
		die("host too long");
	strcpy(opt.host, hostport);
	opt.port = (int)port;
	const char *path = slash ? slash : "/";
	if (strlen(path) >= sizeof(opt.path) || strpbrk(path, " \r\n"))
		die("bad path in the URL");
	strcpy(opt.path, path);
}

static long
parse_num(const char *s, long lo, long hi, const char *what)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < lo || v > hi) {
		fprintf(stderr, "loadgen: %s wants a number in %ld..%ld, got '%s'\n", what, lo, hi, s);
		exit(2);
	}
	return v;
}

static void
usage(void)
{
	fprintf(stderr,
		"usage: loadgen [--proxy 127.0.0.1:PORT] [--cacert CA.pem] [--timeout S] [--parallel P]\n"
		"               download URL | gets URL --conns N --requests M | sse URL [--requests M]\n"
		"               | idle URL --conns N --hold S\n");
	exit(2);
}

static void
raise_nofile(int need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		die("getrlimit failed");
	if (rl.rlim_max < (rlim_t)need)
		rl.rlim_max = (rlim_t)need; /* only root may; otherwise fails below */
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
		fprintf(stderr, "loadgen: %d connections need %d descriptors: %s\n", opt.conns, need,
			strerror(errno));
		exit(1);
	}
}

int
main(int argc, char **argv)
{
	int i = 1;
	const char *url = NULL;

	opt.conns = 1;
	opt.requests = 0;
	opt.parallel = 256;
	opt.timeout_s = 300;
	opt.workload = -1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--proxy") == 0 && v) {
			if (strncmp(v, "127.0.0.1:", 10) != 0)
				die("--proxy must be 127.0.0.1:PORT");
			opt.proxy_port = (int)parse_num(v + 10, 1, 65535, "--proxy port");
			i++;
		} else if (strcmp(a, "--cacert") == 0 && v) {
			opt.cacert = v;
			i++;
		} else if (strcmp(a, "--timeout") == 0 && v) {
			opt.timeout_s = (int)parse_num(v, 1, 3600, "--timeout");
			i++;
		} else if (strcmp(a, "--parallel") == 0 && v) {
			opt.parallel = (int)parse_num(v, 1, 10000, "--parallel");
			i++;
		} else if (strcmp(a, "--conns") == 0 && v) {
			opt.conns = (int)parse_num(v, 1, MAX_CONNS, "--conns");
			i++;
		} else if (strcmp(a, "--requests") == 0 && v) {
			opt.requests = parse_num(v, 1, MAX_REQUESTS, "--requests");
			i++;
		} else if (strcmp(a, "--hold") == 0 && v) {
			opt.hold_s = (int)parse_num(v, 0, 3600, "--hold");
			i++;
		} else if ((int)opt.workload == -1 && a[0] != '-') {
			if (strcmp(a, "download") == 0)
				opt.workload = W_DOWNLOAD;
			else if (strcmp(a, "gets") == 0)
				opt.workload = W_GETS;
			else if (strcmp(a, "sse") == 0)
				opt.workload = W_SSE;
			else if (strcmp(a, "idle") == 0)
				opt.workload = W_IDLE;
			else
				usage();
		} else if (!url && a[0] != '-') {
			url = a;
		} else {
			usage();
		}
	}
	if ((int)opt.workload == -1 || !url)
		usage();
	parse_url(url);
	switch (opt.workload) {
	case W_DOWNLOAD:
		opt.conns = 1;
		opt.requests = 1;
		break;
	case W_SSE:
		opt.conns = 1;
		if (!opt.requests)
			opt.requests = 20;
		break;
	case W_GETS:
		if (!opt.requests)
			opt.requests = 10000;
		if (opt.requests < opt.conns)
			die("--requests must be at least --conns");
		break;
	case W_IDLE:
		opt.requests = opt.conns;
		break;
	default:
		usage();
	}
	signal(SIGPIPE, SIG_IGN);
	raise_nofile(opt.conns + 64);

	if (opt.tls) {
		ssl_ctx = SSL_CTX_new(TLS_client_method());
		if (!ssl_ctx)
			die("SSL_CTX_new failed");
		SSL_CTX_set_min_proto_version(ssl_ctx, TLS1_2_VERSION);
		if (!opt.cacert)
			die("https needs --cacert");
		if (!SSL_CTX_load_verify_locations(ssl_ctx, opt.cacert, NULL))
			die("cannot load --cacert");
		SSL_CTX_set_verify(ssl_ctx, SSL_VERIFY_PEER, NULL);
		SSL_CTX_set_mode(ssl_ctx, SSL_MODE_RELEASE_BUFFERS);
	}
	conns = calloc((size_t)opt.conns, sizeof(*conns));
	latencies_ms = calloc((size_t)opt.requests, sizeof(*latencies_ms));
	read_buf = malloc(READ_BUF);
	if (!conns || !latencies_ms || !read_buf)
		die("out of memory");
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		die("epoll_create1 failed");
	deadline_ns = now_ns() + (uint64_t)opt.timeout_s * 1000000000u;

	if (opt.workload == W_IDLE) {
		set_up_all();
		while (conns_idle + conns_closed_idle < opt.conns)
			loop_once(100);
		printf("idle ready conns=%d closed=%d\n", conns_idle, conns_closed_idle);
		fflush(stdout);
		uint64_t until = now_ns() + (uint64_t)opt.hold_s * 1000000000u;
		if (until > deadline_ns)
			deadline_ns = until + 1000000000u;
		while (now_ns() < until)
			loop_once(100);
		printf("idle done conns=%d held_s=%d closed_during_hold=%d\n", opt.conns, opt.hold_s,
			conns_closed_idle);
		return 0;
	}

	set_up_all();
	uint64_t t0 = now_ns();
	for (int k = 0; k < opt.conns && requests_issued < opt.requests; k++) {
		send_request(&conns[k]);
		drive(&conns[k]);
	}
	while (requests_done < opt.requests)
		loop_once(100);
	double secs = (double)(now_ns() - t0) / 1e9;

	switch (opt.workload) {
	case W_DOWNLOAD:
		printf("download bytes=%" PRIu64 " seconds=%.3f MBps=%.1f\n", conns[0].body_bytes, secs,
			(double)conns[0].body_bytes / 1e6 / secs);
		break;
	case W_GETS:
		qsort(latencies_ms, (size_t)latencies_n, sizeof(double), cmp_double);
		printf("gets conns=%d requests=%ld seconds=%.3f rps=%.0f p50_ms=%.3f p99_ms=%.3f\n", opt.conns,
			requests_done, secs, (double)requests_done / secs, percentile(0.5), percentile(0.99));
		break;
	case W_SSE:
		qsort(latencies_ms, (size_t)latencies_n, sizeof(double), cmp_double);
		printf("sse requests=%ld first_event_p50_ms=%.3f min_ms=%.3f max_ms=%.3f\n", requests_done,
			percentile(0.5), latencies_ms[0], latencies_ms[latencies_n - 1]);
		break;
	case W_IDLE:
	default:
		break;
	}
	return 0;
}
