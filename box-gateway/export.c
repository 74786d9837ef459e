/* SPDX-License-Identifier: Apache-2.0 */
/*
 * export.c — the [telemetry.NAME] kind = otlp targets (docs/box.ini.5.md):
 * box's own records (box-policyd's TelemetryRecords on the telemetry channel,
 * proto/telemetry.proto) and the agent's relayed OpenTelemetry (otlp.c)
 * exported to each collector over OTLP/HTTP.
 *
 * Per target a queue of export requests, each kept packed in the binary
 * protobuf encoding (concatenated requests of one signal are one request:
 * protobuf merges repeated fields), with its record count. An export goes
 * out 1 s after the first record waiting, or at once at 512 records: the
 * requests of the head's signal, up to 512 records (at least one request),
 * POSTed to BASE/v1/logs, /v1/traces or /v1/metrics as application/x-protobuf
 * or, for http/json, unpacked and printed as OTLP/JSON (proto/otlp_json.c),
 * with the target's credential as [egress] places it (header or basic_auth),
 * on a connection of its own ("Connection: close"). The collector is reached
 * through the gateway's own upstream path — its resolver and hosts file, the
 * upstream TLS context (system roots + upstream_ca, the host name verified),
 * connect_timeout — and never through policy: the operator named it, the
 * agent cannot. A 2xx answer drops what was sent; a 4xx other than 408/429
 * drops it too (the collector refuses it for good; counted, logged); any
 * other answer, a failed connection or no answer within connect_timeout +
 * 10 s keeps it and tries again after 1 s, doubling to 30 s. Memory is bounded:
 * past 8 MiB queued for a target the oldest requests not in flight are dropped
 * and counted; after the next success the target gets a box.control record
 * telemetry.dropped (box.dropped: how many) and a log line says so.
 * box-policyd's records come as one ExportLogsServiceRequest in the binary
 * encoding per TelemetryRecords, decoded here as an agent's binary body is and
 * queued as they came.
 * Trusts: box-policyd's records only as far as the binary decoder's caps
 * (they are decoded as an agent's are); nothing from the collector but its
 * status line.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "addr.h"
#include "ca.h"
#include "cleanup.h"
#include "encode.h"
#include "gateway.h"
#include "ipc_event.h"
#include "log.h"
#include "otlp_json.h"
#include "proto_telemetry.h"
#include "stream.h"
#include "validate.h" /* BOX_TELEMETRY_TARGETS_MAX */

#define EXPORT_QUEUE_MAX (8u << 20)     /* bytes queued per target before drop-oldest */
#define EXPORT_BATCH_RECORDS 512u       /* records per export */
#define EXPORT_DELAY_MS 1000            /* the first record waits at most this long */
#define EXPORT_BACKOFF_MIN_MS 1000
#define EXPORT_BACKOFF_MAX_MS 30000
#define EXPORT_ANSWER_MS 10000          /* beyond connect_timeout, for the answer */
#define EXPORT_REQUEST_MAX (16u << 20)  /* one export's body */

struct export_item {
	enum gw_signal signal;
	uint8_t *pb;
	size_t len;
	size_t records;
	struct export_item *next;
};

struct export_target {
	const Box__GatewayTelemetryTarget *cfg;
	bool is_ip;
	struct export_item *head, *tail;
	size_t bytes, records;
	size_t in_flight;         /* items at the head being sent */
	uint64_t dropped, dropped_reported, refused, sent;
	bool failing;
	int64_t backoff_ms;
	struct event *timer;      /* the batch delay, or the backoff */
	bool timer_armed;
	/* the attempt in progress */
	struct gw_stream *s;
	struct gw_resolve *resolve;
	struct gw_addrs addrs;
	char *request;
	size_t request_len;
	int64_t activity;
	struct event *deadline;
};

static struct export_target targets[BOX_TELEMETRY_TARGETS_MAX];
static size_t n_targets;
static struct box_ipc_event *tel_chan;
static bool finishing;      /* the box ended: export at once, leave when done */
static bool tel_chan_ended; /* box-policyd closed the telemetry channel */
static struct event *end_timer;

static const char *const signal_paths[] = { "/v1/logs", "/v1/traces", "/v1/metrics" };
static const ProtobufCMessageDescriptor *const signal_descs[] = {
	&box__otlp__export_logs_service_request__descriptor,
	&box__otlp__export_trace_service_request__descriptor,
	&box__otlp__export_metrics_service_request__descriptor,
};

static void attempt(struct export_target *t);
static void finish_check(void);

static void
item_free(struct export_item *it)
{
	if (!it)
		return;
	free(it->pb);
	free(it);
}

static void
timer_arm(struct export_target *t, int64_t ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };
	if (evtimer_add(t->timer, &tv) == 0)
		t->timer_armed = true;
}

/* Past the cap: the oldest requests not in flight go, counted. */
static void
trim(struct export_target *t)
{
	while (t->bytes > EXPORT_QUEUE_MAX) {
		struct export_item **pp = &t->head;
		for (size_t i = 0; i < t->in_flight && *pp; i++)
			pp = &(*pp)->next;
		struct export_item *it = *pp;
		if (!it)
			return; /* all of it in flight: the attempt's end frees it */
		*pp = it->next;
		if (t->tail == it) {
			t->tail = t->head;
			while (t->tail && t->tail->next)
				t->tail = t->tail->next;
		}
		t->bytes -= it->len;
		t->records -= it->records;
		t->dropped += it->records;
		item_free(it);
	}
}

/* Queue PB (taken) for target T; the export is scheduled. */
static void
enqueue(struct export_target *t, enum gw_signal sig, uint8_t *pb, size_t len, size_t records)
{
	struct export_item *it = calloc(1, sizeof(*it));
	if (!it) {
		free(pb);
		t->dropped += records;
		return;
	}
	*it = (struct export_item){ .signal = sig, .pb = pb, .len = len, .records = records };
	if (t->tail)
		t->tail->next = it;
	else
		t->head = it;
	t->tail = it;
	t->bytes += len;
	t->records += records;
	trim(t);
	if (t->s || t->resolve || t->failing)
		return; /* an attempt runs, or the backoff timer will start one */
	if (t->records >= EXPORT_BATCH_RECORDS || finishing) {
		if (t->timer_armed)
			evtimer_del(t->timer);
		t->timer_armed = false;
		attempt(t);
	} else if (!t->timer_armed) {
		timer_arm(t, EXPORT_DELAY_MS);
	}
}

static int
pack(const ProtobufCMessage *m, uint8_t **out, size_t *len)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	if (n > EXPORT_REQUEST_MAX)
		return -E2BIG;
	uint8_t *b = malloc(n ? n : 1);
	if (!b)
		return -ENOMEM;
	*len = protobuf_c_message_pack(m, b);
	*out = b;
	return 0;
}

void
gw_export_relay(const ProtobufCMessage *m, enum gw_signal sig, size_t records)
{
	for (size_t i = 0; i < n_targets; i++) {
		if (!(targets[i].cfg->include & 16u))
			continue;
		uint8_t *pb;
		size_t len;
		if (pack(m, &pb, &len) < 0) {
			targets[i].dropped += records;
			continue;
		}
		enqueue(&targets[i], sig, pb, len, records);
	}
}

bool
gw_export_targets(void)
{
	return n_targets > 0;
}

/* ---- one attempt --------------------------------------------------------------- */

static void
stream_free_later(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	gw_stream_free(arg);
}

static void
attempt_end(struct export_target *t)
{
	if (t->resolve) {
		gw_resolve_cancel(t->resolve);
		t->resolve = NULL;
	}
	if (t->s) {
		/* maybe inside one of its callbacks: freed at the next loop pass */
		struct timeval now = { 0, 0 };
		gw_stream_kill(t->s);
		if (event_base_once(G.base, -1, EV_TIMEOUT, stream_free_later, t->s, &now) < 0)
			log_warn("telemetry.%s: a closed connection is kept", t->cfg->name);
		t->s = NULL;
	}
	if (t->deadline)
		evtimer_del(t->deadline);
	if (t->request && t->cfg->has_secret)
		explicit_bzero(t->request, t->request_len); /* its head holds the credential */
	free(t->request);
	t->request = NULL;
}

static void report_dropped(struct export_target *t);

/* The attempt failed (WHY): keep what was sent, try again after the backoff. */
static void
attempt_failed(struct export_target *t, const char *why)
{
	attempt_end(t);
	t->in_flight = 0;
	if (!t->failing)
		log_warn("telemetry.%s: the collector %s:%u cannot take records (%s): retrying",
			 t->cfg->name, t->cfg->host, t->cfg->port, why);
	t->failing = true;
	t->backoff_ms = t->backoff_ms ? t->backoff_ms * 2 : EXPORT_BACKOFF_MIN_MS;
	if (t->backoff_ms > EXPORT_BACKOFF_MAX_MS)
		t->backoff_ms = EXPORT_BACKOFF_MAX_MS;
	if (t->timer_armed)
		evtimer_del(t->timer);
	timer_arm(t, t->backoff_ms);
}

/* The collector answered STATUS: what was sent is done with (taken or refused for good). */
static void
attempt_answered(struct export_target *t, unsigned status)
{
	attempt_end(t);
	if (status == 408 || status == 429 || status < 200 || status >= 500) {
		char why[32];
		(void)snprintf(why, sizeof(why), "HTTP %u", status);
		attempt_failed(t, why);
		return;
	}
	size_t records = 0;
	for (; t->in_flight && t->head; t->in_flight--) {
		struct export_item *it = t->head;
		t->head = it->next;
		if (!t->head)
			t->tail = NULL;
		t->bytes -= it->len;
		t->records -= it->records;
		records += it->records;
		item_free(it);
	}
	t->in_flight = 0;
	if (status >= 300) {
		t->refused += records;
		log_warn("telemetry.%s: the collector refused %zu records (HTTP %u)", t->cfg->name,
			 records, status);
	} else {
		t->sent += records;
	}
	if (t->failing)
		log_notice("telemetry.%s: the collector takes records again", t->cfg->name);
	t->failing = false;
	t->backoff_ms = 0;
	report_dropped(t);
	if (t->timer_armed)
		evtimer_del(t->timer);
	t->timer_armed = false;
	if (t->records >= EXPORT_BATCH_RECORDS || (finishing && t->head))
		attempt(t);
	else if (t->head)
		timer_arm(t, EXPORT_DELAY_MS);
	finish_check();
}

static void
on_read(struct gw_stream *s, void *arg)
{
	struct export_target *t = arg;
	size_t len = evbuffer_get_length(s->in);
	size_t scanned = 0, head_len = 0;
	if (len > GW_HEAD_MAX)
		len = GW_HEAD_MAX;
	const char *buf = (const char *)evbuffer_pullup(s->in, (ev_ssize_t)len);
	int r = buf ? http_head_end(buf, len, GW_HEAD_MAX, &scanned, &head_len) : -ENOMEM;
	if (r == 0)
		return;
	if (r < 0) {
		attempt_failed(t, "an answer head past the cap");
		return;
	}
	struct http_response resp = { 0 };
	char why[128] = "";
	r = http_parse_response(buf, head_len, &G.lim, "POST", &resp, why, sizeof(why));
	unsigned status = resp.status;
	http_response_clear(&resp);
	if (r < 0) {
		attempt_failed(t, why[0] ? why : "a malformed answer");
		return;
	}
	if (status >= 100 && status < 200) {
		evbuffer_drain(s->in, head_len); /* 100 Continue: the real answer follows */
		return;
	}
	attempt_answered(t, status);
}

static void
on_write(struct gw_stream *s, void *arg)
{
	(void)s;
	(void)arg;
}

static void
on_close(struct gw_stream *s, int err, void *arg)
{
	(void)s;
	attempt_failed(arg, err ? strerror(-err) : "closed without an answer");
}

static void
send_request(struct export_target *t)
{
	evbuffer_add(t->s->out, t->request, t->request_len);
	gw_stream_read(t->s, true);
	gw_stream_flush(t->s);
}

static void
on_handshake(struct gw_stream *s, int err, const char *why, void *arg)
{
	struct export_target *t = arg;
	(void)s;
	if (err) {
		attempt_failed(t, why ? why : "the TLS handshake failed");
		return;
	}
	send_request(t);
}

static void
on_connected(struct gw_stream *s, int err, void *arg)
{
	struct export_target *t = arg;
	if (err) {
		attempt_failed(t, strerror(-err));
		return;
	}
	if (!t->cfg->tls) {
		send_request(t);
		return;
	}
	SSL *ssl = SSL_new(G.client_ctx);
	if (!ssl || gw_tls_client_prepare(ssl, t->cfg->host, t->is_ip) < 0) {
		if (ssl)
			SSL_free(ssl);
		attempt_failed(t, "cannot set up TLS");
		return;
	}
	gw_stream_tls_connect(s, ssl);
}

static const struct gw_stream_ops export_ops = {
	.on_read = on_read,
	.on_write = on_write,
	.on_close = on_close,
	.on_connected = on_connected,
	.on_handshake = on_handshake,
};

/* The first address that takes a connection (the rest are for the next attempt). */
static void
on_resolved(void *arg, const char *err, const struct gw_addrs *addrs)
{
	struct export_target *t = arg;
	t->resolve = NULL;
	if (err || !addrs || !addrs->n) {
		attempt_failed(t, err ? err : "no address");
		return;
	}
	const struct sockaddr_storage *ss = &addrs->a[0];
	socklen_t sl = ss->ss_family == AF_INET ? sizeof(struct sockaddr_in) :
						  sizeof(struct sockaddr_in6);
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0) {
		attempt_failed(t, strerror(errno));
		return;
	}
	int one = 1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (const struct sockaddr *)ss, sl) < 0 && errno != EINPROGRESS) {
		int e = errno;
		close(fd);
		attempt_failed(t, strerror(e));
		return;
	}
	t->s = gw_stream_new(G.base, fd, &export_ops, t, &t->activity);
	if (!t->s) {
		attempt_failed(t, "out of memory");
		return;
	}
	gw_stream_wait_connect(t->s);
}

static void
on_deadline(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	attempt_failed(arg, "timed out");
}

/* The head's signal, up to 512 records, as one request body; 0 or negative errno. */
static int
body_build(struct export_target *t, enum gw_signal *sig, uint8_t **out, size_t *len)
{
	size_t n = 0, records = 0, items = 0;
	*sig = t->head->signal;
	for (struct export_item *it = t->head; it && it->signal == *sig; it = it->next) {
		if (items && (records + it->records > EXPORT_BATCH_RECORDS ||
			      n + it->len > EXPORT_REQUEST_MAX))
			break;
		n += it->len;
		records += it->records;
		items++;
	}
	uint8_t *b = malloc(n ? n : 1);
	if (!b)
		return -ENOMEM;
	size_t off = 0;
	struct export_item *it = t->head;
	for (size_t i = 0; i < items; i++, it = it->next) {
		memcpy(b + off, it->pb, it->len);
		off += it->len;
	}
	t->in_flight = items;
	if (!t->cfg->json) {
		*out = b;
		*len = n;
		return 0;
	}
	ProtobufCMessage *m = NULL;
	int r = otlp_pb_unpack(signal_descs[*sig], b, n, &m);
	free(b);
	if (r < 0)
		return r;
	char *text = NULL;
	r = otlp_json_print(m, EXPORT_REQUEST_MAX * 2, &text, len);
	protobuf_c_message_free_unpacked(m, NULL);
	if (r < 0)
		return r;
	*out = (uint8_t *)text;
	return 0;
}

static int
request_build(struct export_target *t)
{
	_cleanup_free_ uint8_t *body = NULL;
	_cleanup_free_ char *auth = NULL, *b64 = NULL;
	enum gw_signal sig;
	size_t blen = 0;
	int r = body_build(t, &sig, &body, &blen);
	if (r < 0)
		return r;
	const Box__GatewayTelemetryTarget *c = t->cfg;
	if (c->has_secret && c->placement == BOX__GATEWAY_PLACEMENT__GATEWAY_PLACEMENT_BASIC_AUTH) {
		if (!(b64 = enc_b64(c->secret.data, c->secret.len, ENC_B64_STD, true, NULL)) ||
		    asprintf(&auth, "Authorization: Basic %s\r\n", b64) < 0)
			return -ENOMEM;
	} else if (c->has_secret) {
		if (asprintf(&auth, "%s: %s%.*s\r\n", c->header, c->prefix ? c->prefix : "",
			     (int)c->secret.len, (const char *)c->secret.data) < 0)
			return -ENOMEM;
	}
	bool v6 = strchr(c->host, ':') != NULL;
	char *head = NULL;
	int hl = asprintf(&head,
			  "POST %s%s HTTP/1.1\r\nHost: %s%s%s:%u\r\nContent-Type: %s\r\n"
			  "Content-Length: %zu\r\nUser-Agent: box-gateway\r\nConnection: close\r\n"
			  "%s\r\n",
			  c->path, signal_paths[sig], v6 ? "[" : "", c->host, v6 ? "]" : "",
			  c->port, c->json ? "application/json" : "application/x-protobuf", blen,
			  auth ? auth : "");
	if (auth)
		explicit_bzero(auth, strlen(auth));
	if (hl < 0)
		return -ENOMEM;
	t->request = malloc((size_t)hl + blen);
	if (!t->request) {
		explicit_bzero(head, (size_t)hl);
		free(head);
		return -ENOMEM;
	}
	memcpy(t->request, head, (size_t)hl);
	memcpy(t->request + hl, body, blen);
	t->request_len = (size_t)hl + blen;
	explicit_bzero(head, (size_t)hl);
	free(head);
	return 0;
}

static void
attempt(struct export_target *t)
{
	if (!t->head || t->s || t->resolve)
		return;
	int r = request_build(t);
	if (r < 0) {
		/* the head cannot become a request (it could not before either): drop it */
		struct export_item *it = t->head;
		t->head = it->next;
		if (!t->head)
			t->tail = NULL;
		t->bytes -= it->len;
		t->records -= it->records;
		t->dropped += it->records;
		t->in_flight = 0;
		log_warn_errno(r, "telemetry.%s: cannot build an export request", t->cfg->name);
		item_free(it);
		if (t->head)
			timer_arm(t, EXPORT_DELAY_MS);
		return;
	}
	struct timeval tv = { (time_t)((G.connect_timeout_ms + EXPORT_ANSWER_MS) / 1000),
			      (suseconds_t)((G.connect_timeout_ms + EXPORT_ANSWER_MS) % 1000) *
				      1000 };
	evtimer_add(t->deadline, &tv);
	struct gw_resolve *h = NULL;
	r = gw_resolve(t->cfg->host, t->is_ip, (uint16_t)t->cfg->port, &t->addrs, on_resolved, t,
		       &h);
	if (r < 0) {
		attempt_failed(t, "cannot resolve the host");
		return;
	}
	if (r == 1) {
		on_resolved(t, NULL, &t->addrs);
		return;
	}
	t->resolve = h;
}

static void
on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct export_target *t = arg;
	(void)fd;
	(void)what;
	t->timer_armed = false;
	attempt(t);
}

/* ---- box's records, from box-policyd --------------------------------------------- */

static void
control_record(struct export_target *t, const char *event, const char *msg, const char *key,
	       int64_t value)
{
	Box__Otlp__AnyValue v_event = BOX__OTLP__ANY_VALUE__INIT, v_num = BOX__OTLP__ANY_VALUE__INIT,
			    v_name = BOX__OTLP__ANY_VALUE__INIT, v_id = BOX__OTLP__ANY_VALUE__INIT,
			    v_svc = BOX__OTLP__ANY_VALUE__INIT, body = BOX__OTLP__ANY_VALUE__INIT;
	Box__Otlp__KeyValue kv_event = BOX__OTLP__KEY_VALUE__INIT,
			    kv_num = BOX__OTLP__KEY_VALUE__INIT, kv_name = BOX__OTLP__KEY_VALUE__INIT,
			    kv_id = BOX__OTLP__KEY_VALUE__INIT, kv_svc = BOX__OTLP__KEY_VALUE__INIT;
	v_event.value_case = BOX__OTLP__ANY_VALUE__VALUE_STRING_VALUE;
	v_event.string_value = (char *)event;
	v_num.value_case = BOX__OTLP__ANY_VALUE__VALUE_INT_VALUE;
	v_num.int_value = value;
	v_name.value_case = BOX__OTLP__ANY_VALUE__VALUE_STRING_VALUE;
	v_name.string_value = G.box_name;
	v_id.value_case = BOX__OTLP__ANY_VALUE__VALUE_STRING_VALUE;
	v_id.string_value = G.box_id;
	v_svc.value_case = BOX__OTLP__ANY_VALUE__VALUE_STRING_VALUE;
	v_svc.string_value = (char *)"box";
	body.value_case = BOX__OTLP__ANY_VALUE__VALUE_STRING_VALUE;
	body.string_value = (char *)msg;
	kv_event.key = (char *)"box.control.event";
	kv_event.value = &v_event;
	kv_num.key = (char *)key;
	kv_num.value = &v_num;
	kv_name.key = (char *)"box.name";
	kv_name.value = &v_name;
	kv_id.key = (char *)"box.id";
	kv_id.value = &v_id;
	kv_svc.key = (char *)"service.name";
	kv_svc.value = &v_svc;
	Box__Otlp__KeyValue *rec_attrs[] = { &kv_event, &kv_num };
	Box__Otlp__KeyValue *res_attrs[] = { &kv_name, &kv_id, &kv_svc };
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	Box__Otlp__LogRecord rec = BOX__OTLP__LOG_RECORD__INIT;
	rec.time_unix_nano = rec.observed_time_unix_nano =
		(uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	rec.severity_number = BOX__OTLP__SEVERITY_NUMBER__SEVERITY_NUMBER_INFO;
	rec.severity_text = (char *)"INFO";
	rec.body = &body;
	rec.attributes = rec_attrs;
	rec.n_attributes = 2;
	rec.event_name = (char *)"box.control";
	Box__Otlp__LogRecord *recs[] = { &rec };
	Box__Otlp__InstrumentationScope scope = BOX__OTLP__INSTRUMENTATION_SCOPE__INIT;
	scope.name = (char *)"box";
	Box__Otlp__ScopeLogs sl = BOX__OTLP__SCOPE_LOGS__INIT;
	sl.scope = &scope;
	sl.log_records = recs;
	sl.n_log_records = 1;
	Box__Otlp__ScopeLogs *sls[] = { &sl };
	Box__Otlp__Resource res = BOX__OTLP__RESOURCE__INIT;
	res.attributes = res_attrs;
	res.n_attributes = 3;
	Box__Otlp__ResourceLogs rl = BOX__OTLP__RESOURCE_LOGS__INIT;
	rl.resource = &res;
	rl.scope_logs = sls;
	rl.n_scope_logs = 1;
	Box__Otlp__ResourceLogs *rls[] = { &rl };
	Box__Otlp__ExportLogsServiceRequest req = BOX__OTLP__EXPORT_LOGS_SERVICE_REQUEST__INIT;
	req.resource_logs = rls;
	req.n_resource_logs = 1;
	uint8_t *pb;
	size_t len;
	if (pack(&req.base, &pb, &len) == 0)
		enqueue(t, GW_SIGNAL_LOGS, pb, len, 1);
}

/* After a success: the records dropped since the last report, said once. */
static void
report_dropped(struct export_target *t)
{
	if (t->dropped == t->dropped_reported)
		return;
	uint64_t n = t->dropped - t->dropped_reported;
	t->dropped_reported = t->dropped;
	log_warn("telemetry.%s: %llu records were dropped while the collector could not take "
		 "them (over 8 MiB queued)",
		 t->cfg->name, (unsigned long long)n);
	if (t->cfg->include & 4u)
		control_record(t, "telemetry.dropped",
			       "records were dropped while the collector could not take them",
			       "box.dropped", (int64_t)n);
}

/* The log records in REQ (an ExportLogsServiceRequest). */
static size_t
log_records(const ProtobufCMessage *req)
{
	const Box__Otlp__ExportLogsServiceRequest *q = (const Box__Otlp__ExportLogsServiceRequest *)req;
	size_t n = 0;
	for (size_t i = 0; i < q->n_resource_logs; i++)
		for (size_t k = 0; k < q->resource_logs[i]->n_scope_logs; k++)
			n += q->resource_logs[i]->scope_logs[k]->n_log_records;
	return n;
}

static void
on_tel_msg(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata)
{
	(void)e;
	(void)userdata;
	const Box__TelemetryRecords *r = (const Box__TelemetryRecords *)m->msg;
	if (r->target >= n_targets) {
		log_err("box-policyd sent records for telemetry target %u of %zu", r->target,
			n_targets);
		return;
	}
	struct export_target *t = &targets[r->target];
	/*
	 * The request is checked as an agent's binary body is (bounded nesting and
	 * memory, every field well-formed) and must hold the records it says; then
	 * its bytes are queued as they came: what the collector gets.
	 */
	ProtobufCMessage *req = NULL;
	int rc = otlp_pb_unpack(&box__otlp__export_logs_service_request__descriptor,
				r->logs.data, r->logs.len, &req);
	if (rc == 0 && log_records(req) != r->records)
		rc = -EBADMSG;
	if (req)
		protobuf_c_message_free_unpacked(req, NULL);
	if (rc < 0) {
		t->dropped += r->records;
		log_warn_errno(rc, "telemetry.%s: box-policyd's records do not decode", t->cfg->name);
		return;
	}
	uint8_t *pb = malloc(r->logs.len);
	if (!pb) {
		t->dropped += r->records;
		return;
	}
	memcpy(pb, r->logs.data, r->logs.len);
	size_t len = r->logs.len;
	enqueue(t, GW_SIGNAL_LOGS, pb, len, r->records);
}

static void
on_tel_close(struct box_ipc_event *e, int error, void *userdata)
{
	(void)e;
	(void)userdata;
	if (error != -ECONNRESET)
		log_warn_errno(error, "The telemetry channel from box-policyd failed");
	tel_chan_ended = true;
	finish_check();
}

/* Finishing: out of the loop once box-policyd's channel ended and every queue is empty. */
static void
finish_check(void)
{
	if (!finishing || (tel_chan && !tel_chan_ended))
		return;
	for (size_t i = 0; i < n_targets; i++)
		if (targets[i].head && !targets[i].failing)
			return; /* a failing collector waits for the end timer, not for ever */
	gw_exit(0);
}

static void
on_end_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	for (size_t i = 0; i < n_targets; i++)
		if (targets[i].records)
			log_warn("telemetry.%s: %zu records not exported when the box ended",
				 targets[i].cfg->name, targets[i].records);
	gw_exit(0);
}

void
gw_export_finish(void)
{
	struct timeval tv = { GW_EXPORT_END_MS / 1000, (GW_EXPORT_END_MS % 1000) * 1000 };
	finishing = true;
	end_timer = evtimer_new(G.base, on_end_timer, NULL);
	if (!end_timer || evtimer_add(end_timer, &tv) < 0) {
		gw_exit(0);
		return;
	}
	for (size_t i = 0; i < n_targets; i++) {
		struct export_target *t = &targets[i];
		if (t->head && !t->failing && !t->s && !t->resolve) {
			if (t->timer_armed)
				evtimer_del(t->timer);
			t->timer_armed = false;
			attempt(t);
		}
	}
	finish_check();
}

int
gw_export_init(const Box__GatewayInit *in, int chan_fd, char *why, size_t why_len)
{
	for (size_t i = 0; i < in->n_telemetry_targets && i < BOX_TELEMETRY_TARGETS_MAX; i++) {
		struct export_target *t = &targets[n_targets];
		char spelled[HTTP_HOST_MAX];
		*t = (struct export_target){ .cfg = in->telemetry_targets[i] };
		if (addr_host_spelling(t->cfg->host, strlen(t->cfg->host), spelled, sizeof(spelled),
				       &t->is_ip) < 0) {
			(void)snprintf(why, why_len, "telemetry.%s: the host %s cannot be used",
				       t->cfg->name, t->cfg->host);
			return -EINVAL;
		}
		t->timer = evtimer_new(G.base, on_timer, t);
		t->deadline = evtimer_new(G.base, on_deadline, t);
		if (!t->timer || !t->deadline) {
			(void)snprintf(why, why_len, "out of memory");
			return -ENOMEM;
		}
		n_targets++;
	}
	if (chan_fd >= 0) {
		tel_chan = box_ipc_event_new(G.base, chan_fd, &box_proto_telemetry,
					     BOX_TELEMETRY_ROLE_POLICYD, on_tel_msg, on_tel_close,
					     NULL);
		if (!tel_chan) {
			(void)snprintf(why, why_len, "cannot watch the telemetry channel");
			return -errno;
		}
	}
	return 0;
}

void
gw_export_summary(void)
{
	for (size_t i = 0; i < n_targets; i++) {
		struct export_target *t = &targets[i];
		log_info("telemetry.%s: %llu records exported, %llu refused, %llu dropped, %zu "
			 "queued",
			 t->cfg->name, (unsigned long long)t->sent, (unsigned long long)t->refused,
			 (unsigned long long)t->dropped, t->records);
	}
}
