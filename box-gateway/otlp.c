/* SPDX-License-Identifier: Apache-2.0 */
/*
 * otlp.c — the agent's OTLP/HTTP receiver (docs/box.ini.5.md [telemetry.NAME]):
 * a listener boxd tagged `otlp` (127.0.0.1:4318 in the sandbox) serves
 * POST /v1/traces, /v1/logs and /v1/metrics with a binary protobuf
 * (application/x-protobuf) or OTLP/JSON (application/json) body, one request
 * after another on a connection. Each body is decoded (proto/otlp_json.c:
 * the binary nesting checked before protobuf-c unpacks it, the JSON parsed
 * with an allocation budget), its resources re-tagged as the agent's of this
 * box (proto/otlp_tag.c: no box.* of the agent's survives), and relayed: one
 * OTLP-JSON export request a line, in one write, to each telemetry file
 * GatewayInit carried, and queued for each otlp target that takes the
 * agent's (export.c). The answer is OTLP's: 200 with an empty
 * Export*ServiceResponse in the request's encoding; 400 for a body that does
 * not decode, 404 for another path, 405 for another method, 413 past
 * GW_OTLP_BODY_MAX, 415 for another Content-Type or a Content-Encoding; the
 * connection stays open after a 200, 400 or 404 and closes after the others.
 * Caps: one head GW_HEAD_MAX (http.c's parser), a body GW_OTLP_BODY_MAX
 * (Content-Length checked before reading; a chunked body as it arrives), at
 * most GW_OTLP_CONNS connections, each closed after idle_timeout.
 * Trusts: nothing the agent sends.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cleanup.h"
#include "gateway.h"
#include "log.h"
#include "otlp_json.h"

#define GW_OTLP_BODY_MAX (4u << 20)
#define GW_OTLP_CONNS 64u
#define GW_OTLP_LINE_MAX (64u << 20)

struct otlp_conn {
	int fd;
	struct event *ev;
	struct gw_listener *l;
	char *buf;        /* what was read, not yet served */
	size_t len, cap;
	bool continued;   /* 100 Continue sent for the request being read */
	struct otlp_conn *next;
};

static struct otlp_conn *conns;
static unsigned n_conns;
static uint64_t n_relayed, n_refused;

static void
conn_free(struct otlp_conn *c)
{
	for (struct otlp_conn **pp = &conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (c->ev)
		event_free(c->ev);
	safe_close(c->fd);
	free(c->buf);
	free(c);
	n_conns--;
}

/* A whole answer, written at once (small: the socket buffer holds it). */
static bool
answer(struct otlp_conn *c, unsigned status, const char *reason, const char *type,
       const char *body, size_t body_len, bool close_after)
{
	char head[256];
	int hl = snprintf(head, sizeof(head),
			  "HTTP/1.1 %u %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s\r\n",
			  status, reason, type, body_len, close_after ? "Connection: close\r\n" : "");
	struct iovec iov[2] = { { head, (size_t)hl }, { (void *)body, body_len } };
	ssize_t n = writev(c->fd, iov, body_len ? 2 : 1);
	return n == (ssize_t)((size_t)hl + body_len) && !close_after;
}

static bool
refuse(struct otlp_conn *c, unsigned status, const char *reason, const char *why, bool close_after)
{
	n_refused++;
	log_notice("OTLP receiver (%s): %u %s: %s", c->l->sandbox, status, reason, why);
	return answer(c, status, reason, "text/plain; charset=utf-8", why, strlen(why), close_after);
}

/* The records of an export request: log records, spans or metrics. */
static size_t
records_of(const ProtobufCMessage *m)
{
	size_t n = 0;
	if (m->descriptor == &box__otlp__export_logs_service_request__descriptor) {
		const Box__Otlp__ExportLogsServiceRequest *r = (const void *)m;
		for (size_t i = 0; i < r->n_resource_logs; i++)
			for (size_t j = 0; j < r->resource_logs[i]->n_scope_logs; j++)
				n += r->resource_logs[i]->scope_logs[j]->n_log_records;
	} else if (m->descriptor == &box__otlp__export_trace_service_request__descriptor) {
		const Box__Otlp__ExportTraceServiceRequest *r = (const void *)m;
		for (size_t i = 0; i < r->n_resource_spans; i++)
			for (size_t j = 0; j < r->resource_spans[i]->n_scope_spans; j++)
				n += r->resource_spans[i]->scope_spans[j]->n_spans;
	} else {
		const Box__Otlp__ExportMetricsServiceRequest *r = (const void *)m;
		for (size_t i = 0; i < r->n_resource_metrics; i++)
			for (size_t j = 0; j < r->resource_metrics[i]->n_scope_metrics; j++)
				n += r->resource_metrics[i]->scope_metrics[j]->n_metrics;
	}
	return n ? n : 1;
}

/* The re-tagged request to each otlp target (export.c), and as one OTLP-JSON line to each file. */
static void
relay(ProtobufCMessage *m, enum gw_signal sig)
{
	gw_export_relay(m, sig, records_of(m));
	if (!G.n_tel) {
		n_relayed++;
		return;
	}
	_cleanup_free_ char *line = NULL;
	size_t len;
	int r = otlp_json_print(m, GW_OTLP_LINE_MAX - 1, &line, &len);

	if (r < 0) {
		log_warn_errno(r, "Cannot print an OTLP request of the agent");
		return;
	}
	line[len] = '\n'; /* the NUL's place: printed with room for it */
	for (size_t i = 0; i < G.n_tel; i++) {
		size_t off = 0;
		while (off < len + 1) {
			ssize_t n = write(G.tel_fds[i], line + off, len + 1 - off);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				log_warn_errno(n < 0 ? -errno : -EIO,
					       "Cannot write the agent's telemetry to %s",
					       G.tel_names[i]);
				break;
			}
			off += (size_t)n;
		}
	}
	n_relayed++;
}

/*
 * One request whose head is parsed (REQ) and body complete (BODY, LEN bytes):
 * answered. False: close the connection.
 */
static bool
serve(struct otlp_conn *c, const struct http_request *req, const char *body, size_t len)
{
	static const struct {
		const char *path;
		const ProtobufCMessageDescriptor *d;
		enum gw_signal sig;
	} signals[] = {
		{ "/v1/traces", &box__otlp__export_trace_service_request__descriptor,
		  GW_SIGNAL_TRACES },
		{ "/v1/logs", &box__otlp__export_logs_service_request__descriptor, GW_SIGNAL_LOGS },
		{ "/v1/metrics", &box__otlp__export_metrics_service_request__descriptor,
		  GW_SIGNAL_METRICS },
	};
	const ProtobufCMessageDescriptor *d = NULL;
	enum gw_signal sig = GW_SIGNAL_LOGS;
	size_t pl = strcspn(req->target, "?");

	for (size_t i = 0; i < 3; i++)
		if (strlen(signals[i].path) == pl && memcmp(req->target, signals[i].path, pl) == 0) {
			d = signals[i].d;
			sig = signals[i].sig;
		}
	if (!d)
		return refuse(c, 404, "Not Found", "not an OTLP path: POST /v1/traces, /v1/logs or "
						   "/v1/metrics", false);
	if (strcmp(req->method, "POST") != 0)
		return refuse(c, 405, "Method Not Allowed", "OTLP takes POST", true);
	const struct http_header *ce = http_find_header(req->headers, req->n_headers,
							  "Content-Encoding");
	if (ce && strcasecmp(ce->value, "identity") != 0)
		return refuse(c, 415, "Unsupported Media Type",
			      "no Content-Encoding: box's receiver takes uncompressed bodies", true);
	const struct http_header *ct = http_find_header(req->headers, req->n_headers,
							  "Content-Type");
	size_t tl = ct ? strcspn(ct->value, "; \t") : 0;
	bool json = ct && tl == 16 && strncasecmp(ct->value, "application/json", 16) == 0;
	bool pb = ct && tl == 22 && strncasecmp(ct->value, "application/x-protobuf", 22) == 0;
	if (!json && !pb)
		return refuse(c, 415, "Unsupported Media Type",
			      "Content-Type: application/x-protobuf or application/json", true);

	ProtobufCMessage *m = NULL;
	int r;
	if (json) {
		r = otlp_json_parse(d, body, len, 16 * len + (64u << 10), &m);
	} else {
		r = otlp_pb_unpack(d, (const uint8_t *)body, len, &m);
	}
	if (r < 0)
		return refuse(c, 400, "Bad Request",
			      r == -E2BIG ? "the body is nested or sized beyond the receiver's caps" :
					    "the body is not an OTLP export request",
			      false);
	if ((r = otlp_tag_agent(m, G.box_name, G.box_id)) < 0) {
		protobuf_c_message_free_unpacked(m, NULL);
		return refuse(c, 503, "Service Unavailable", "out of memory", true);
	}
	relay(m, sig);
	protobuf_c_message_free_unpacked(m, NULL);
	/* an empty Export*ServiceResponse: full success */
	return json ? answer(c, 200, "OK", "application/json", "{}", 2, !req->keep_alive) :
		      answer(c, 200, "OK", "application/x-protobuf", "", 0, !req->keep_alive);
}

/*
 * Serve what the buffer holds: 1 served one (call again), 0 wait for more,
 * -1 close.
 */
static int
step(struct otlp_conn *c)
{
	struct http_request req = { 0 };
	char why[128] = "";
	size_t scanned = 0, head_len = 0;
	int r = http_head_end(c->buf, c->len, GW_HEAD_MAX, &scanned, &head_len);

	if (r == 0)
		return 0;
	if (r < 0) {
		refuse(c, 431, "Request Header Fields Too Large", "the head is too large", true);
		return -1;
	}
	r = http_parse_request(c->buf, head_len, &G.lim, &req, why, sizeof(why));
	if (r < 0) {
		refuse(c, 400, "Bad Request", why[0] ? why : "a malformed request head", true);
		return -1;
	}
	int ret = -1;
	size_t used = head_len;
	_cleanup_free_ char *chunked = NULL;
	const char *body = c->buf + head_len;
	size_t blen = 0;
	if (req.framing == HTTP_BODY_LENGTH) {
		if (req.content_length > GW_OTLP_BODY_MAX) {
			refuse(c, 413, "Content Too Large", "the body is over 4 MiB", true);
			goto out;
		}
		if (c->len - head_len < req.content_length) {
			/* Expect: 100-continue — the client waits for this before its body */
			if (req.expect_continue && !c->continued) {
				static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
				c->continued = true;
				if (write(c->fd, cont, sizeof(cont) - 1) != (ssize_t)(sizeof(cont) - 1))
					goto out;
			}
			ret = 0;
			goto out;
		}
		blen = (size_t)req.content_length;
		used += blen;
	} else if (req.framing == HTTP_BODY_CHUNKED) {
		struct http_chunked ch;
		size_t off = head_len;
		http_chunked_init(&ch);
		for (;;) {
			size_t u = 0, doff = 0, dlen = 0;
			int k = http_chunked_step(&ch, (const uint8_t *)c->buf + off, c->len - off, &u,
						  &doff, &dlen, why, sizeof(why));
			if (k < 0) {
				refuse(c, 400, "Bad Request", why[0] ? why : "a bad chunk", true);
				goto out;
			}
			if (dlen) {
				if (blen + dlen > GW_OTLP_BODY_MAX) {
					refuse(c, 413, "Content Too Large", "the body is over 4 MiB", true);
					goto out;
				}
				char *nb = realloc(chunked, blen + dlen + 1);
				if (!nb)
					goto out;
				chunked = nb;
				memcpy(chunked + blen, c->buf + off + doff, dlen);
				blen += dlen;
			}
			off += u;
			if (k == 1)
				break;
			if (u == 0) {
				ret = 0; /* the rest has not arrived */
				goto out;
			}
		}
		body = chunked ? chunked : "";
		used = off;
	}
	c->continued = false;
	ret = serve(c, &req, body, blen) ? 1 : -1;
	memmove(c->buf, c->buf + used, c->len - used);
	c->len -= used;
out:
	http_request_clear(&req);
	return ret;
}

static void
on_read(evutil_socket_t fd, short what, void *arg)
{
	struct otlp_conn *c = arg;

	if (what & EV_TIMEOUT) {
		conn_free(c);
		return;
	}
	size_t room_max = GW_HEAD_MAX + GW_OTLP_BODY_MAX + (64u << 10);
	if (c->cap - c->len < GW_READ_CHUNK) {
		size_t nc = c->cap ? c->cap * 2 : GW_READ_CHUNK * 2;
		if (nc > room_max)
			nc = room_max;
		if (nc <= c->len) {
			/* a chunked body's framing past every cap */
			refuse(c, 413, "Content Too Large", "the request is over the receiver's cap",
			       true);
			conn_free(c);
			return;
		}
		char *nb = realloc(c->buf, nc);
		if (!nb) {
			conn_free(c);
			return;
		}
		c->buf = nb;
		c->cap = nc;
	}
	ssize_t n = read(fd, c->buf + c->len, c->cap - c->len);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_free(c);
		return;
	}
	c->len += (size_t)n;
	int r;
	while ((r = step(c)) == 1)
		;
	if (r < 0)
		conn_free(c);
}

void
gw_otlp_accept(struct gw_listener *l, int fd)
{
	struct otlp_conn *c;
	struct timeval tv = { (time_t)(G.idle_timeout_ms / 1000),
			      (suseconds_t)(G.idle_timeout_ms % 1000) * 1000 };

	if (n_conns >= GW_OTLP_CONNS) {
		log_warn("OTLP receiver (%s): %u connections open; refusing another", l->sandbox,
			 n_conns);
		close(fd);
		return;
	}
	if (!(c = calloc(1, sizeof(*c)))) {
		close(fd);
		return;
	}
	c->fd = fd;
	c->l = l;
	n_conns++;
	c->next = conns;
	conns = c;
	c->ev = event_new(G.base, fd, EV_READ | EV_PERSIST | EV_TIMEOUT, on_read, c);
	if (!c->ev || event_add(c->ev, &tv) < 0)
		conn_free(c);
}

void
gw_otlp_close_listener(struct gw_listener *l)
{
	for (struct otlp_conn *c = conns, *n; c; c = n) {
		n = c->next;
		if (c->l == l)
			conn_free(c);
	}
	if (n_relayed || n_refused)
		log_info("OTLP receiver (%s): %llu requests relayed, %llu refused", l->sandbox,
			 (unsigned long long)n_relayed, (unsigned long long)n_refused);
}
