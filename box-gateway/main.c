/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c — box-gateway: the per-box HTTP(S) egress proxy (docs/design.md,
 * box-gateway/README.md).
 *
 *   box-gateway  (started by boxd: fd 3 = boxd, fd 4 = its box-policyd channel)
 *
 * boxd starts it through common/spawn.c already running as its target
 * uid/gid with RLIMIT_NOFILE = 2*max_connections+256 and nothing else open.
 * main() is the start-up, one named step a line: the fds -> privilege lock
 * down (no_new_privs, no capabilities: it never needs privilege) -> GatewayInit
 * from boxd (blocking, validated by the protocol table; a service boxd's spare,
 * -w, spawned ahead of its box, waits for it without a limit) -> the
 * settings and bindings taken -> what needs files, before the filter (the
 * event loop, the system roots + upstream_ca, /etc/resolv.conf, the hosts
 * file; the system roots read, not parsed) -> the per-box CA -> GatewayReady (the
 * CA certificate; or ok=false with the reason, then exit 1) -> its seccomp
 * allow-list -> both channels watched -> the event loop (nothing from the agent
 * or boxd is read before the filter is on). The system roots are parsed at the
 * first upstream TLS verification (ca.c, gw_tls_client_roots_load): ~150
 * certificates cost milliseconds of CPU a box that never dials TLS, or its start,
 * should not pay.
 *
 * Serving: GatewayListener gives a listening socket tagged with its sandbox;
 * GatewayListenerClosed stops it and closes its connections. boxd closing
 * its channel ends the gateway (exit 0); losing box-policyd (exit 1) or a
 * protocol error from either (exit 1) too: it never serves undecided.
 * SIGTERM/SIGINT end it (exit 0). Logs go to stderr; never a secret or a body.
 * Environment: only BOX_TEST_* hooks (none read today).
 * Trusts: boxd for the init and the listener fds (re-checked: a listening
 * TCP socket); nothing from policyd beyond its validated replies.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/dns.h>
#include <event2/event.h>
#include <openssl/ssl.h>

#include "ca.h"
#include "cleanup.h"
#include "daemon_start.h"
#include "fdutil.h"
#include "gateway.h"
#include "ipc.h"
#include "ipc_event.h"
#include "log.h"
#include "privdrop.h"
#include "proto_gateway.h"
#include "stream.h"

#define GW_INIT_TIMEOUT_MS 30000
#define GW_ACCEPT_BURST 64

static struct event *stop_signals[2];

/* A refusal to start: GatewayReady ok=false with the reason, then exit 1. */
static noreturn void
start_fail(struct box_ipc_chan *chan, uint64_t rid, const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	for (char *p = why; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	log_err("Refusing to start: %s", why);
	Box__GatewayReady rep = BOX__GATEWAY_READY__INIT;
	rep.ok = false;
	rep.message = why;
	int r = box_ipc_chan_send(chan, BOX__MSG_TYPE__MSG_GATEWAY_READY, rid, &rep.base, NULL, 0);
	if (r < 0)
		log_err_errno(r, "Cannot send GatewayReady");
	exit(1);
}

/* Step 1: fd 3 is boxd's channel, fd 4 policyd's (daemon_fds.h); SIGPIPE is a write error. */
static void
channels_check(void)
{
	static const struct daemon_fd_want want[] = {
		{ DAEMON_FD_BOXD, DAEMON_FD_CHANNEL, "boxd's SOCK_SEQPACKET channel" },
		{ DAEMON_FD_POLICYD, DAEMON_FD_CHANNEL, "box-policyd's SOCK_SEQPACKET channel" },
	};
	size_t bad = 0;
	int r = daemon_fds_take(want, sizeof(want) / sizeof(want[0]), NULL, &bad);
	if (r < 0)
		fatal(r, "fd %d is not %s (started by boxd)", want[bad].fd, want[bad].what);
}

/*
 * Step 3: GatewayInit, the first message (a spare, -w, waits for it without a
 * limit: boxd/spares.c). Returns false if boxd gave up first.
 */
static bool
init_receive(struct box_ipc_chan *chan, struct box_ipc_msg *m, bool spare)
{
	int r = daemon_init_receive(chan, m, spare ? -1 : GW_INIT_TIMEOUT_MS);
	if (r < 0)
		fatal(r, "No valid GatewayInit from boxd");
	return r > 0;
}

static int tel_chan_fd = -1;

/*
 * Step 4b: the telemetry files GatewayInit carried (one per name, the table
 * checked the count): each open for appending, else boxd sent something else.
 */
static void
telemetry_take(struct box_ipc_chan *chan, struct box_ipc_msg *m, const Box__GatewayInit *in)
{
	for (size_t i = 0; i < in->n_telemetry_files && i < BOX_TELEMETRY_FILES_MAX; i++) {
		int fl = fcntl(m->fds[i], F_GETFL);
		if (fl < 0 || !(fl & O_APPEND) || (fl & O_ACCMODE) == O_RDONLY)
			start_fail(chan, m->request_id, "GatewayInit: a telemetry file is not open "
							"for appending");
		G.tel_fds[i] = TAKE_FD(m->fds[i]);
		G.tel_names[i] = in->telemetry_files[i];
		G.n_tel++;
	}
	/* With an otlp target, the telemetry channel from box-policyd follows (export.c). */
	if (in->n_telemetry_targets) {
		int cfd = m->fds[in->n_telemetry_files], type = 0;
		socklen_t tl = sizeof(type);
		if (getsockopt(cfd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_SEQPACKET)
			start_fail(chan, m->request_id,
				   "GatewayInit: the last fd is not the telemetry channel");
		tel_chan_fd = TAKE_FD(m->fds[in->n_telemetry_files]);
	}
}

/* Step 2: the ids it runs as (boxd chose them), then no capabilities, no_new_privs. */
static void
privileges_lock_down(void)
{
	const char *failed = NULL;
	int r = daemon_lock_down(getuid(), getgid(), &failed);
	if (r < 0)
		fatal(r, "Cannot lock down privileges (%s)", failed ? failed : "?");
}

static void
dest_take(struct cred_dest *d, const Box__GatewayDestination *g)
{
	d->host = g->host;
	d->wildcard = g->wildcard;
	d->port = (uint16_t)g->port;
	d->path_prefix = g->path_prefix;
}

/*
 * Step 4: the settings and the bindings. They point into the init message,
 * which lives as long as the process (the secrets are never copied elsewhere).
 */
static void
config_take(struct box_ipc_chan *chan, uint64_t rid, const Box__GatewayInit *in)
{
	(void)snprintf(G.box_name, sizeof(G.box_name), "%s", in->box_name);
	(void)snprintf(G.box_id, sizeof(G.box_id), "%s", in->box_id);
	G.proxy_port = in->port;
	G.connect_timeout_ms = in->connect_timeout_ms;
	G.idle_timeout_ms = in->idle_timeout_ms;
	G.max_connections = in->max_connections;
	G.max_request_body = in->max_request_body;
	G.allow_host_loopback = in->allow_host_loopback;
	G.lim.max_head = GW_HEAD_MAX;
	G.lim.max_headers = GW_HEADERS_MAX;
	if (!G.connect_timeout_ms || !G.idle_timeout_ms || !G.max_connections)
		start_fail(chan, rid, "GatewayInit: a timeout or max_connections is 0");
	G.n_passthrough = in->n_passthrough;
	G.passthrough = calloc(in->n_passthrough + 1, sizeof(*G.passthrough));
	G.n_creds = in->n_credentials;
	G.creds = calloc(in->n_credentials + 1, sizeof(*G.creds));
	if (!G.passthrough || !G.creds)
		start_fail(chan, rid, "out of memory");
	for (size_t i = 0; i < in->n_passthrough; i++)
		dest_take(&G.passthrough[i], in->passthrough[i]);
	for (size_t i = 0; i < in->n_credentials; i++) {
		const Box__GatewayCredential *gc = in->credentials[i];
		struct cred_binding *b = &G.creds[i];
		b->name = gc->name;
		b->n_dest = gc->n_destinations;
		b->dest = calloc(gc->n_destinations + 1, sizeof(*b->dest));
		if (!b->dest)
			start_fail(chan, rid, "out of memory");
		for (size_t j = 0; j < gc->n_destinations; j++)
			dest_take(&b->dest[j], gc->destinations[j]);
		b->secret = gc->secret.data;
		b->secret_len = gc->secret.len;
		b->placeholder = gc->placeholder;
		b->placement = (enum cred_placement)gc->placement;
		b->header = gc->header;
		b->prefix = gc->prefix;
		b->param = gc->param;
		b->inject = (enum cred_inject)gc->inject;
		b->sandboxes = gc->sandboxes;
		b->n_sandboxes = gc->n_sandboxes;
		/* the spellings replies are redacted of, once for every connection */
		int r = cred_spellings_new(b->secret, b->secret_len, &b->spellings);
		if (r < 0)
			start_fail(chan, rid,
				   "[%s]: cannot prepare the redaction of its secret: %s", b->name,
				   strerror(-r));
	}
	char why[512] = "";
	int r = gw_mcp_init(in, why, sizeof(why));
	if (r < 0)
		start_fail(chan, rid, "%s", why[0] ? why : "out of memory");
}

static void
on_stop_signal(evutil_socket_t sig, short what, void *userdata)
{
	(void)what;
	(void)userdata;
	log_info("Signal %d: exiting", (int)sig);
	event_base_loopexit(G.base, NULL);
}

/* Step 5: everything that reads a file or needs a call the filter refuses. */
static void
loop_prepare(struct box_ipc_chan *chan, uint64_t rid, const Box__GatewayInit *in)
{
	char why[512] = "";

	G.base = event_base_new();
	if (!G.base)
		start_fail(chan, rid, "cannot create the event loop");
	tzset();
	static const int sigs[2] = {SIGTERM, SIGINT};
	for (int i = 0; i < 2; i++) {
		stop_signals[i] = evsignal_new(G.base, sigs[i], on_stop_signal, NULL);
		if (!stop_signals[i] || evsignal_add(stop_signals[i], NULL) < 0)
			start_fail(chan, rid, "cannot watch signal %d", sigs[i]);
	}
	/* The system roots are read here and parsed once ready (roots_load). */
	int r = gw_tls_client_ctx_new_deferred(
	    GW_SYSTEM_ROOTS, in->has_upstream_ca_pem ? (const char *)in->upstream_ca_pem.data : NULL,
	    in->has_upstream_ca_pem ? in->upstream_ca_pem.len : 0, &G.client_ctx, why, sizeof(why));
	if (r < 0)
		start_fail(chan, rid, "upstream TLS: %s", why[0] ? why : strerror(-r));
	r = gw_dns_init(in->resolver, in->has_hosts_file ? in->hosts_file.data : NULL,
			in->has_hosts_file ? in->hosts_file.len : 0, why, sizeof(why));
	if (r < 0)
		start_fail(chan, rid, "%s", why[0] ? why : strerror(-r));
	if (why[0])
		log_warn("%s", why);
	why[0] = '\0';
	r = gw_export_init(in, TAKE_FD(tel_chan_fd), why, sizeof(why));
	if (r < 0)
		start_fail(chan, rid, "%s", why[0] ? why : strerror(-r));
}

/* Step 6: the per-box CA (its key stays in this process). */
static void
ca_make(struct box_ipc_chan *chan, uint64_t rid)
{
	int r = gw_ca_new_named(G.box_name, GW_LEAF_CACHE, &G.ca);
	if (r < 0)
		start_fail(chan, rid, "cannot make the box's CA: %s", strerror(-r));
}

/* Step 9: from here on only the allow-list. */
static void
seccomp_enter(void)
{
	int r = gw_seccomp();
	if (r < 0)
		fatal(r, "Cannot install the seccomp filter");
}

/* Step 7: GatewayReady with the CA certificate. */
static void
ready_send(struct box_ipc_chan *chan, uint64_t rid)
{
	Box__GatewayReady rep = BOX__GATEWAY_READY__INIT;
	const char *pem = gw_ca_cert_pem(G.ca);
	rep.ok = true;
	rep.has_ca_cert_pem = true;
	rep.ca_cert_pem.data = (uint8_t *)pem;
	rep.ca_cert_pem.len = strlen(pem);
	int r = box_ipc_chan_send(chan, BOX__MSG_TYPE__MSG_GATEWAY_READY, rid, &rep.base, NULL, 0);
	if (r < 0)
		fatal(r, "Cannot send GatewayReady");
	log_info("box '%s' (%s): serving (%zu credential bindings, %zu passthrough, "
		 "max %llu connections)",
		 G.box_name, G.box_id, G.n_creds, G.n_passthrough,
		 (unsigned long long)G.max_connections);
}

/* ---- listeners ------------------------------------------------------------------ */

static void
on_accept(evutil_socket_t fd, short what, void *arg)
{
	struct gw_listener *l = arg;
	(void)what;
	for (int i = 0; i < GW_ACCEPT_BURST; i++) {
		int c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (c < 0) {
			if (errno == EMFILE || errno == ENFILE)
				log_warn_errno(-errno, "Cannot accept on the %s listener",
					       l->sandbox);
			return;
		}
		if (l->otlp)
			gw_otlp_accept(l, c);
		else
			gw_conn_accept(l, c);
	}
}

static struct gw_listener *
listener_find(uint32_t id, struct gw_listener ***prevp)
{
	struct gw_listener **pp = &G.listeners;
	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->id == id) {
			if (prevp)
				*prevp = pp;
			return *pp;
		}
	return NULL;
}

static void
fatal_loop(int code)
{
	gw_exit(code);
}

static void
listener_add(struct box_ipc_msg *m)
{
	const Box__GatewayListener *gl = (const Box__GatewayListener *)m->msg;
	int fd = m->fds[0];
	int v = 0, dom = 0, type = 0;
	socklen_t l = sizeof(v);
	if (listener_find(gl->listener_id, NULL)) {
		log_err("boxd sent listener %u twice", gl->listener_id);
		fatal_loop(1);
		return;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &l) < 0 || !v ||
	    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &(socklen_t){sizeof(dom)}) < 0 ||
	    (dom != AF_INET && dom != AF_INET6) ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &(socklen_t){sizeof(type)}) < 0 ||
	    type != SOCK_STREAM) {
		log_err("boxd's listener %u (%s) is not a listening TCP socket", gl->listener_id,
			gl->sandbox);
		fatal_loop(1);
		return;
	}
	struct gw_listener *nl = calloc(1, sizeof(*nl));
	if (!nl || fd_set_nonblock(fd, true) < 0) {
		free(nl);
		log_err("Cannot watch listener %u", gl->listener_id);
		fatal_loop(1);
		return;
	}
	nl->id = gl->listener_id;
	nl->otlp = gl->has_otlp && gl->otlp;
	(void)snprintf(nl->sandbox, sizeof(nl->sandbox), "%s", gl->sandbox);
	nl->fd = TAKE_FD(m->fds[0]);
	nl->ev = event_new(G.base, nl->fd, EV_READ | EV_PERSIST, on_accept, nl);
	if (!nl->ev || event_add(nl->ev, NULL) < 0) {
		log_err("Cannot watch listener %u", gl->listener_id);
		fatal_loop(1);
		return;
	}
	nl->next = G.listeners;
	G.listeners = nl;
	log_info("listener %u: sandbox %s%s", nl->id, nl->sandbox,
		 nl->otlp ? " (OTLP receiver)" : "");
}

static void
listener_close(const Box__GatewayListenerClosed *m)
{
	struct gw_listener **pp = NULL;
	struct gw_listener *l = listener_find(m->listener_id, &pp);
	if (!l) {
		log_warn("boxd closed listener %u, which it never sent", m->listener_id);
		return;
	}
	*pp = l->next;
	event_free(l->ev);
	close(l->fd);
	if (l->otlp)
		gw_otlp_close_listener(l);
	else
		gw_conns_close_listener(l);
	log_info("listener %u (%s) closed", l->id, l->sandbox);
	free(l);
}

static void
on_boxd_msg(struct box_ipc_event *e, struct box_ipc_msg *m, void *userdata)
{
	(void)e;
	(void)userdata;
	switch (m->type) {
	case BOX__MSG_TYPE__MSG_GATEWAY_LISTENER:
		listener_add(m);
		return;
	case BOX__MSG_TYPE__MSG_GATEWAY_LISTENER_CLOSED:
		listener_close((const Box__GatewayListenerClosed *)m->msg);
		return;
	default:
		log_err("boxd sent %s", box_ipc_type_name(&box_proto_gateway, m->type));
		fatal_loop(1);
	}
}

static void
on_boxd_close(struct box_ipc_event *e, int error, void *userdata)
{
	(void)e;
	(void)userdata;
	if (error == -ECONNRESET && gw_export_targets()) {
		/*
		 * The box ends; an otlp target still gets what is queued and what
		 * box-policyd sends last (box.stopped): no listener, no connection,
		 * no box-policyd channel from here on (its close tells box-policyd
		 * our Records ended), then out once export.c has sent it all.
		 */
		log_info("boxd closed its channel: exporting the last telemetry, then exiting");
		while (G.listeners) {
			Box__GatewayListenerClosed lc = BOX__GATEWAY_LISTENER_CLOSED__INIT;
			lc.listener_id = G.listeners->id;
			listener_close(&lc);
		}
		gw_decide_end();
		gw_export_finish();
		return;
	}
	if (error == -ECONNRESET) {
		log_info("boxd closed its channel: exiting");
		fatal_loop(0);
		return;
	}
	log_err_errno(error, "The boxd channel failed: exiting");
	fatal_loop(1);
}

/* Step 10: both channels on the loop. */
static void
channels_watch(void)
{
	G.boxd = box_ipc_event_new(G.base, DAEMON_FD_BOXD, &box_proto_gateway, BOX_GATEWAY_ROLE_BOXD,
				   on_boxd_msg, on_boxd_close, NULL);
	if (!G.boxd || box_ipc_chan_set_state(box_ipc_event_chan(G.boxd), BOX_GATEWAY_SERVING) < 0)
		fatal(-errno, "Cannot watch the boxd channel");
	int r = gw_decide_start(DAEMON_FD_POLICYD);
	if (r < 0)
		fatal(r, "Cannot watch the box-policyd channel");
}

int
main(int argc, char **argv)
{
	struct box_ipc_msg m = BOX_IPC_MSG_INIT;

	bool spare;

	log_init("box-gateway", 1);
	if (daemon_args(argc, argv, &spare) < 0) {
		fprintf(stderr, "usage: box-gateway [-n|-q] [-w]  (started by boxd, fds 3-4)\n");
		return 2;
	}
	channels_check();
	privileges_lock_down();
	struct box_ipc_chan *chan =
	    box_ipc_chan_new(DAEMON_FD_BOXD, &box_proto_gateway, BOX_GATEWAY_ROLE_BOXD);
	if (!chan)
		fatal(-ENOMEM, "Cannot allocate the boxd channel");
	if (!init_receive(chan, &m, spare))
		return 0; /* boxd gave up before we started */
	if (spare)
		daemon_spare_taken(argc, argv);
	const Box__GatewayInit *init = (const Box__GatewayInit *)m.msg;
	config_take(chan, m.request_id, init);
	telemetry_take(chan, &m, init);
	loop_prepare(chan, m.request_id, init);
	ca_make(chan, m.request_id);
	ready_send(chan, m.request_id);
	box_ipc_chan_free(chan);
	seccomp_enter();
	channels_watch();
	if (event_base_dispatch(G.base) < 0) /* step 11 */
		fatalx("The event loop failed");
	log_info("exiting (%llu connections open)", (unsigned long long)G.n_conns);
	gw_export_summary();
	/* The init message (with the secrets) dies with the process. */
	return G.exit_code;
}
