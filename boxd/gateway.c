/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gateway.c — boxd's side of box-gateway, the per-box egress proxy
 * (docs/design.md; proto/gateway.proto; docs/box-gateway.8.md).
 *
 * Every box has one (its agent is always a contained sandbox). After
 * box-policyd is ready and before the agent's trampoline: box-gateway
 * started from its entry in daemon_table (daemon.c: program, ids — an
 * embedded boxd's own, a service boxd's daemon user, switched to in the
 * child before the exec; it then locks itself down, box-gateway/main.c —
 * log, the BOX_TEST_GATEWAY_* hooks boxd's own environment has) with fd 3 =
 * our end of its channel (proto_gateway, we are `boxd`), fd 4 =
 * DAEMON_FD_POLICYD, its box-policyd channel (the other end of policyd's
 * POLICYD_FD_GATEWAY, made when policyd was spawned) and RLIMIT_NOFILE soft
 * and hard = 2 × [gateway] max_connections + 256, set in the child before
 * the exec (a root boxd may raise the hard limit up to fs.nr_open, when it
 * holds CAP_SYS_RESOURCE; otherwise, and in an unprivileged boxd, a limit
 * above its own hard limit refuses the box).
 * Then GatewayInit: the [gateway] settings with docs/box.ini.5.md's defaults, the
 * upstream CA and hosts file boxctl read, every [egress.NAME] binding (and
 * each http [mcp.NAME] with a secret, as "mcp.NAME") with its secret, its
 * effective placement/header/prefix/param/inject, its sandboxes and a fresh
 * placeholder: placeholder_prefix + 64 lowercase hex digits from getrandom,
 * made here at every start (an [mcp] secret is injected always: an MCP
 * client has no placeholder variable), and each http [mcp.NAME] as a
 * GatewayMcpServer (url host/port/path, namespace, max_frame, call_timeout,
 * allow_tool_changes) so the gateway decides its JSON-RPC requests.
 * It starts beside box-policyd and box-shell (box.c), and the plans are
 * built for it from its spawn on; it gates the agent (daemon_table): the
 * agent's view holds /run/box/ca.pem, written when GatewayReady comes.
 * GatewayReady arrives as an event (never waited for): its certificate
 * (checked again here: a PEM certificate, no key) is written to
 * RUNTIME/ca.pem (a root-owned 0644 file runtime.c made before BASE/ID
 * became the owner's, written through its fd) and STATE/ca.pem
 * (opened by box-recheck as the owner, written through that fd: root never
 * follows a name in the owner's state dir); ok = false refuses the box with
 * the gateway's message; its exit or BOXD_GATEWAY_READY_TIMEOUT_MS without
 * an answer fails the start.
 * While the box runs: each listener a trampoline sends on fd 4 goes to the
 * gateway (GatewayListener, with its sandbox tag; one that comes while it
 * starts — the agent's, built beside it — is held here, at most
 * GATEWAY_PENDING_MAX, and sent once GatewayReady came), and when that sandbox
 * ends GatewayListenerClosed. Losing the gateway (its channel or its exit)
 * stops the box (fail closed: an egress nobody decides is no egress). At
 * the end fd 3 is closed; the gateway exits, and the end goes on once its
 * exit is reaped, or after BOXD_GATEWAY_EXIT_WAIT_MS with a SIGKILL.
 * Trusts: nothing the gateway sends beyond box_ipc_decode()'s validation
 * and the certificate check here; the spec after box_validate_box_spec(),
 * re-parsing each destination spelling (a bad one refuses the box).
 * The secrets pass through here on their way to the gateway: never logged.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boxd.h"
#include "cleanup.h"
#include "fdutil.h"
#include "gateway.pb-c.h"
#include "ipc.h"
#include "log.h"
#include "parse.h"
#include "proto_gateway.h"
#include "spawn.h"
#include "validate.h"

#define CA_FILE "ca.pem"

/* The box's box-gateway (b->gateway). */
/* A listener that came while the gateway was starting: sent once it serves. */
struct pending_listener {
	uint32_t id;
	char *sandbox;
	int fd;
	bool otlp; /* the agent's OTLP receiver, not its proxy */
};

#define GATEWAY_PENDING_MAX 32

struct gateway {
	struct box_daemon dm;     /* its lifecycle (daemon.c) */
	uint32_t listener_seq;    /* the last GatewayListener id */
	bool serving;             /* GatewayReady came: its protocol takes listeners */
	/* Listeners of sandboxes started beside it (the agent's), until it serves */
	struct pending_listener pending[GATEWAY_PENDING_MAX];
	size_t n_pending;
};

static void
pending_drop(struct gateway *g)
{
	for (size_t i = 0; i < g->n_pending; i++) {
		safe_close(g->pending[i].fd);
		free(g->pending[i].sandbox);
	}
	g->n_pending = 0;
}

static int
listener_send(struct gateway *g, uint32_t id, const char *sandbox, int fd, bool otlp)
{
	Box__GatewayListener m = BOX__GATEWAY_LISTENER__INIT;

	m.listener_id = id;
	m.sandbox = (char *)sandbox;
	m.has_otlp = otlp;
	m.otlp = otlp;
	return daemon_send(&g->dm, BOX__MSG_TYPE__MSG_GATEWAY_LISTENER, &m.base, &fd, 1);
}

int
gateway_new(struct box *b)
{
	return (b->gateway = calloc(1, sizeof(*b->gateway))) ? 0 : -ENOMEM;
}

/* ------------------------------------------------------------------ */
/* the config (docs/box.ini.5.md [gateway], [egress.NAME])                      */

/*
 * A destination as docs/box.ini.5.md spells it: host | host:port | *.domain[:port],
 * then /path-prefix (egress only). The host is lowercased LDH labels or an
 * IPv4 address; the port 443 when not written; a path is whole segments
 * without a trailing '/'. Shape only: boxctl checked the rest, and the
 * gateway validator checks this again.
 */
static int
dest_parse(const char *spelling, bool egress, bool port_required, Box__GatewayDestination **ret)
{
	_cleanup_free_ char *hp = NULL;
	const char *slash = strchr(spelling, '/');
	size_t hl = slash ? (size_t)(slash - spelling) : strlen(spelling);
	uint16_t port = 443;

	if (hl == 0 || hl > 260 || (slash && !egress))
		return -EINVAL;
	hp = strndup(spelling, hl);
	if (!hp)
		return -ENOMEM;
	char *colon = strrchr(hp, ':');
	if (colon) {
		if (parse_port(colon + 1, &port) < 0)
			return -EINVAL;
		*colon = '\0';
	} else if (port_required)
		return -EINVAL;
	char *host = hp;
	bool wildcard = strncmp(host, "*.", 2) == 0;
	if (wildcard)
		host += 2;
	if (!*host || host[strlen(host) - 1] == '.' || strlen(host) > 253)
		return -EINVAL;
	for (char *p = host; *p; p++) {
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '.'))
			return -EINVAL;
	}
	Box__GatewayDestination *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	box__gateway_destination__init(d);
	d->host = strdup(host);
	d->wildcard = wildcard;
	d->port = (uint32_t)port;
	d->spelling = strdup(spelling);
	if (slash) {
		size_t pl = strlen(slash);
		while (pl > 1 && slash[pl - 1] == '/')
			pl--;
		if (pl > 1)
			d->path_prefix = strndup(slash, pl);
	}
	if (!d->host || !d->spelling || (slash && strlen(slash) > 1 && !d->path_prefix)) {
		box__gateway_destination__free_unpacked(d, NULL);
		return -ENOMEM;
	}
	*ret = d;
	return 0;
}

/* placeholder_prefix + 64 lowercase hex digits from getrandom (docs/box.ini.5.md). */
static int
placeholder_new(const char *prefix, char **ret)
{
	uint8_t raw[32];
	static const char hex[] = "0123456789abcdef";
	size_t pl = strlen(prefix);
	char *s;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return -errno;
	s = malloc(pl + 2 * sizeof(raw) + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, prefix, pl);
	for (size_t i = 0; i < sizeof(raw); i++) {
		s[pl + 2 * i] = hex[raw[i] >> 4];
		s[pl + 2 * i + 1] = hex[raw[i] & 15];
	}
	s[pl + 2 * sizeof(raw)] = '\0';
	explicit_bzero(raw, sizeof(raw));
	*ret = s;
	return 0;
}

static Box__GatewayPlacement
placement_of(bool has, Box__Placement p)
{
	if (has && p == BOX__PLACEMENT__PLACEMENT_BASIC_AUTH)
		return BOX__GATEWAY_PLACEMENT__GATEWAY_PLACEMENT_BASIC_AUTH;
	if (has && p == BOX__PLACEMENT__PLACEMENT_QUERY_PARAM)
		return BOX__GATEWAY_PLACEMENT__GATEWAY_PLACEMENT_QUERY_PARAM;
	return BOX__GATEWAY_PLACEMENT__GATEWAY_PLACEMENT_HEADER;
}

/*
 * header / prefix per docs/box.ini.5.md for a header placement: header defaults to
 * Authorization; prefix to "Bearer " on Authorization, else "".
 */
static int
placement_fill(Box__GatewayCredential *c, const Box__CfgStr *header, const Box__CfgStr *prefix,
	       const Box__CfgStr *param)
{
	switch (c->placement) {
	case BOX__GATEWAY_PLACEMENT__GATEWAY_PLACEMENT_HEADER:
		c->header = strdup(header ? header->value : "Authorization");
		if (!c->header)
			return -ENOMEM;
		c->prefix = strdup(prefix ? prefix->value :
				   strcasecmp(c->header, "Authorization") == 0 ? "Bearer " : "");
		return c->prefix ? 0 : -ENOMEM;
	case BOX__GATEWAY_PLACEMENT__GATEWAY_PLACEMENT_QUERY_PARAM:
		if (!param)
			return -EINVAL;
		c->param = strdup(param->value);
		return c->param ? 0 : -ENOMEM;
	case BOX__GATEWAY_PLACEMENT__GATEWAY_PLACEMENT_BASIC_AUTH:
	case _BOX__GATEWAY_PLACEMENT_IS_INT_SIZE:
	default:
		return 0;
	}
}

/* One credential (its secret copied in; freed with explicit_bzero by init_free). */
static int
credential_new(const char *name, Box__CfgStr *const *dests, size_t n_dests,
	       const Box__CfgSecret *secret, bool has_placement, Box__Placement placement,
	       const Box__CfgStr *header, const Box__CfgStr *prefix, const Box__CfgStr *param,
	       bool always, const char *placeholder_prefix, char *const *sandboxes,
	       size_t n_sandboxes, Box__GatewayCredential **ret)
{
	Box__GatewayCredential *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	box__gateway_credential__init(c);
	*ret = c;
	if (!(c->name = strdup(name)))
		return -ENOMEM;
	if (!secret->has_secret_value || secret->secret_value.len == 0)
		return -EINVAL;
	c->secret.data = malloc(secret->secret_value.len);
	if (!c->secret.data)
		return -ENOMEM;
	memcpy(c->secret.data, secret->secret_value.data, secret->secret_value.len);
	c->secret.len = secret->secret_value.len;
	if ((r = placeholder_new(placeholder_prefix, &c->placeholder)) < 0)
		return r;
	c->placement = placement_of(has_placement, placement);
	if ((r = placement_fill(c, header, prefix, param)) < 0)
		return r;
	c->inject = always ? BOX__GATEWAY_INJECT__GATEWAY_INJECT_ALWAYS :
			     BOX__GATEWAY_INJECT__GATEWAY_INJECT_PLACEHOLDER;
	c->destinations = calloc(n_dests ? n_dests : 1, sizeof(*c->destinations));
	if (!c->destinations)
		return -ENOMEM;
	for (size_t i = 0; i < n_dests; i++) {
		if ((r = dest_parse(dests[i]->value, true, false, &c->destinations[i])) < 0)
			return r;
		c->n_destinations++;
	}
	c->sandboxes = calloc(n_sandboxes ? n_sandboxes : 1, sizeof(*c->sandboxes));
	if (!c->sandboxes)
		return -ENOMEM;
	for (size_t i = 0; i < n_sandboxes; i++) {
		if (!(c->sandboxes[i] = strdup(sandboxes[i])))
			return -ENOMEM;
		c->n_sandboxes++;
	}
	return 0;
}

/*
 * One http [mcp.NAME] for the gateway (proto/gateway.proto GatewayMcpServer):
 * the url "https://host[:port]/path" split as dest_parse splits a
 * destination (the path as written, "/" when none), its namespace, and
 * docs/box.ini.5.md's defaults: max_frame 4M, call_timeout 60s.
 */
static int
mcp_server_new(const Box__CfgMcp *m, Box__GatewayMcpServer **ret)
{
	Box__GatewayDestination *d = NULL;
	Box__GatewayMcpServer *g;
	int r;

	if (!m->url || strncmp(m->url->value, "https://", 8) != 0)
		return -EINVAL;
	const char *rest = m->url->value + 8, *slash = strchr(rest, '/');
	_cleanup_free_ char *hostport = slash ? strndup(rest, (size_t)(slash - rest)) : strdup(rest);
	if (!hostport)
		return -ENOMEM;
	if ((r = dest_parse(hostport, false, false, &d)) < 0)
		return r;
	g = calloc(1, sizeof(*g));
	if (!g) {
		box__gateway_destination__free_unpacked(d, NULL);
		return -ENOMEM;
	}
	box__gateway_mcp_server__init(g);
	*ret = g;
	g->name = strdup(m->name);
	g->ns = strdup(m->name);
	g->host = d->host;
	d->host = NULL;
	g->port = d->port;
	box__gateway_destination__free_unpacked(d, NULL);
	g->path = strdup(slash ? slash : "/");
	if (!g->name || !g->ns || !g->host || !g->path)
		return -ENOMEM;
	for (char *p = g->ns; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_'))
			*p = '_';
	g->max_frame = m->max_frame ? m->max_frame->value : 4u << 20;
	g->call_timeout_ms = m->call_timeout_ms ? m->call_timeout_ms->value : 60000;
	g->allow_tool_changes = m->allow_tool_changes && m->allow_tool_changes->value;
	return 0;
}

/* Free an init, wiping the secrets first. */
/*
 * A [telemetry.NAME] kind = otlp target for the gateway (proto/gateway.proto
 * GatewayTelemetryTarget): the collector url "http(s)://host[:port][/path]"
 * (boxctl checked it) split as dest_parse splits a destination — without a
 * port the scheme's, 80 or 443 — the path without its trailing '/', the
 * encoding, and the credential with [egress]'s defaults (placement_fill).
 */
static int
telemetry_target_new(const Box__CfgTelemetry *t, Box__GatewayTelemetryTarget **ret)
{
	Box__GatewayDestination *d = NULL;
	Box__GatewayTelemetryTarget *g = calloc(1, sizeof(*g));
	int r;

	if (!g)
		return -ENOMEM;
	box__gateway_telemetry_target__init(g);
	*ret = g;
	const char *v = t->destination->value, *rest;
	if (strncmp(v, "https://", 8) == 0)
		g->tls = true, rest = v + 8;
	else if (strncmp(v, "http://", 7) == 0)
		rest = v + 7;
	else
		return -EINVAL;
	size_t hl = strcspn(rest, "/");
	_cleanup_free_ char *hostport = NULL;
	if (asprintf(&hostport, "%.*s%s", (int)hl, rest,
		     memchr(rest, ':', hl) ? "" : g->tls ? ":443" : ":80") < 0)
		return -ENOMEM;
	if ((r = dest_parse(hostport, false, true, &d)) < 0)
		return r;
	g->host = d->host;
	d->host = NULL;
	g->port = d->port;
	box__gateway_destination__free_unpacked(d, NULL);
	size_t pl = strlen(rest + hl);
	while (pl && rest[hl + pl - 1] == '/')
		pl--;
	g->name = strdup(t->name);
	g->path = strndup(rest + hl, pl);
	if (!g->name || !g->host || !g->path)
		return -ENOMEM;
	g->json = t->has_protocol &&
		  t->protocol == BOX__TELEMETRY_PROTOCOL__TELEMETRY_PROTOCOL_JSON;
	g->include = t->include;
	if (!t->secret)
		return 0;
	if (!t->secret->has_secret_value || t->secret->secret_value.len == 0)
		return -EINVAL;
	if (!(g->secret.data = malloc(t->secret->secret_value.len)))
		return -ENOMEM;
	memcpy(g->secret.data, t->secret->secret_value.data, t->secret->secret_value.len);
	g->secret.len = t->secret->secret_value.len;
	g->has_secret = 1;
	/* header or basic_auth (boxctl refuses query_param here); placement_fill's defaults */
	Box__GatewayCredential c = BOX__GATEWAY_CREDENTIAL__INIT;
	c.placement = placement_of(t->has_placement, t->placement);
	if (c.placement == BOX__GATEWAY_PLACEMENT__GATEWAY_PLACEMENT_QUERY_PARAM)
		return -EINVAL;
	if ((r = placement_fill(&c, t->header, t->prefix, NULL)) < 0)
		return r;
	g->has_placement = 1;
	g->placement = c.placement;
	g->header = c.header;
	g->prefix = c.prefix;
	return 0;
}

static void
init_free(Box__GatewayInit *in)
{
	if (!in)
		return;
	for (size_t i = 0; i < in->n_telemetry_targets; i++)
		if (in->telemetry_targets[i] && in->telemetry_targets[i]->secret.data)
			explicit_bzero(in->telemetry_targets[i]->secret.data,
				       in->telemetry_targets[i]->secret.len);
	for (size_t i = 0; i < in->n_credentials; i++)
		if (in->credentials[i] && in->credentials[i]->secret.data)
			explicit_bzero(in->credentials[i]->secret.data, in->credentials[i]->secret.len);
	box__gateway_init__free_unpacked(in, NULL);
}

/*
 * The GatewayInit of this box. On a bad entry (a destination that does not
 * parse, a binding without its secret) -EINVAL with *line and *what set.
 */
static int
init_build(struct box *b, Box__GatewayInit **ret, uint32_t *line, const char **what)
{
	const Box__BoxSpec *s = b->spec;
	const Box__CfgGateway *g = s->gateway;
	Box__GatewayInit *in = calloc(1, sizeof(*in));
	int r = -ENOMEM;

	if (!in)
		return -ENOMEM;
	box__gateway_init__init(in);
	*ret = in;
	in->box_name = strdup(b->name);
	in->box_id = strdup(b->id);
	if (!in->box_name || !in->box_id)
		return -ENOMEM;
	in->port = gateway_port(b);
	in->connect_timeout_ms = g && g->connect_timeout_ms ? g->connect_timeout_ms->value : 10000;
	in->idle_timeout_ms = g && g->idle_timeout_ms ? g->idle_timeout_ms->value : 300000;
	in->max_connections = g && g->max_connections ? g->max_connections->value
							  : BOXD_GATEWAY_DEFAULT_MAX_CONNECTIONS;
	in->max_request_body = g && g->max_request_body ? g->max_request_body->value : 64ull << 20;
	in->allow_host_loopback = g && g->allow_host_loopback && g->allow_host_loopback->value;
	if (g && g->has_upstream_ca_pem && g->upstream_ca_pem.len) {
		in->has_upstream_ca_pem = 1;
		in->upstream_ca_pem.data = malloc(g->upstream_ca_pem.len);
		if (!in->upstream_ca_pem.data)
			return -ENOMEM;
		memcpy(in->upstream_ca_pem.data, g->upstream_ca_pem.data, g->upstream_ca_pem.len);
		in->upstream_ca_pem.len = g->upstream_ca_pem.len;
	}
	if (g && g->has_hosts_file_text) {
		in->has_hosts_file = 1;
		in->hosts_file.data = malloc(g->hosts_file_text.len ? g->hosts_file_text.len : 1);
		if (!in->hosts_file.data)
			return -ENOMEM;
		memcpy(in->hosts_file.data, g->hosts_file_text.data, g->hosts_file_text.len);
		in->hosts_file.len = g->hosts_file_text.len;
	}
	if (g && g->resolver && !(in->resolver = strdup(g->resolver->value)))
		return -ENOMEM;
	size_t n_pt = g ? g->n_passthrough : 0;
	in->passthrough = calloc(n_pt ? n_pt : 1, sizeof(*in->passthrough));
	if (!in->passthrough)
		return -ENOMEM;
	for (size_t i = 0; i < n_pt; i++) {
		if ((r = dest_parse(g->passthrough[i]->value, false, true, &in->passthrough[i])) < 0) {
			*line = g->passthrough[i]->line;
			*what = "passthrough";
			return r;
		}
		in->n_passthrough++;
	}
	in->credentials = calloc(s->n_egress + s->n_mcp + 1, sizeof(*in->credentials));
	if (!in->credentials)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_egress; i++) {
		const Box__CfgEgress *e = s->egress[i];
		_cleanup_free_ char *name = NULL;
		if (asprintf(&name, "egress.%s", e->name) < 0)
			return -ENOMEM;
		r = credential_new(name, e->destinations, e->n_destinations, e->secret,
				   e->has_placement, e->placement, e->header, e->prefix, e->param,
				   e->has_inject && e->inject == BOX__INJECT__INJECT_ALWAYS,
				   e->placeholder_prefix ? e->placeholder_prefix->value : "box_",
				   e->sandboxes, e->n_sandboxes, &in->credentials[in->n_credentials]);
		in->n_credentials++;
		if (r < 0) {
			*line = e->line;
			*what = "destinations";
			return r;
		}
	}
	for (size_t i = 0; i < s->n_mcp; i++) {
		const Box__CfgMcp *m = s->mcp[i];
		if (m->type != BOX__MCP_TYPE__MCP_TYPE_HTTP || !m->secret || !m->url)
			continue;
		/* The url's host/port/path is the one destination ("https://" stripped). */
		Box__CfgStr dest = BOX__CFG_STR__INIT;
		Box__CfgStr *dp = &dest;
		_cleanup_free_ char *name = NULL, *spelling = strdup(m->url->value + 8);
		if (!spelling || asprintf(&name, "mcp.%s", m->name) < 0)
			return -ENOMEM;
		/* A url path may end with '/' (docs/box.ini.5.md); the prefix drops it. */
		dest.value = spelling;
		/* inject = always: an MCP client holds no placeholder (docs/box.ini.5.md gives
		 * [mcp] no variable), the gateway sets the secret on every request. */
		r = credential_new(name, &dp, 1, m->secret, m->has_placement, m->placement,
				   m->header, m->prefix, NULL, true, "box_", NULL, 0,
				   &in->credentials[in->n_credentials]);
		in->n_credentials++;
		if (r < 0) {
			*line = m->line;
			*what = "url";
			return r;
		}
	}
	in->telemetry_targets = calloc(s->n_telemetry + 1, sizeof(*in->telemetry_targets));
	if (!in->telemetry_targets)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_telemetry; i++) {
		const Box__CfgTelemetry *t = s->telemetry[i];
		if (t->kind != BOX__TELEMETRY_KIND__TELEMETRY_KIND_OTLP)
			continue;
		r = telemetry_target_new(t, &in->telemetry_targets[in->n_telemetry_targets]);
		in->n_telemetry_targets++;
		if (r < 0) {
			*line = t->line;
			*what = "destination";
			return r;
		}
	}
	in->mcp_servers = calloc(s->n_mcp + 1, sizeof(*in->mcp_servers));
	if (!in->mcp_servers)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_mcp; i++) {
		const Box__CfgMcp *m = s->mcp[i];
		if (m->type != BOX__MCP_TYPE__MCP_TYPE_HTTP)
			continue;
		if ((r = mcp_server_new(m, &in->mcp_servers[in->n_mcp_servers])) < 0) {
			*line = m->line;
			*what = "url";
			return r;
		}
		in->n_mcp_servers++;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* the environment: the placeholders, by variable                       */

/* The [egress] variable of credential i (NULL for an http [mcp]'s). */
static const char *
egress_variable_of(const struct box *b, const char *name)
{
	if (strncmp(name, "egress.", 7) != 0)
		return NULL;
	for (size_t i = 0; i < b->spec->n_egress; i++) {
		const Box__CfgEgress *e = b->spec->egress[i];
		if (strcmp(e->name, name + 7) != 0)
			continue;
		if (e->variable)
			return e->variable->value;
		return strncmp(e->secret->ref, "env://", 6) == 0 ? e->secret->ref + 6 : NULL;
	}
	return NULL;
}

static void
placeholders_free(struct box *b)
{
	for (size_t i = 0; i < b->n_placeholders; i++) {
		free(b->placeholders[i].variable);
		free(b->placeholders[i].value);
	}
	free(b->placeholders);
	b->placeholders = NULL;
	b->n_placeholders = 0;
}

/* Keep each [egress] placeholder with its variable, for every sandbox's environment. */
static int
placeholders_keep(struct box *b, const Box__GatewayInit *in)
{
	b->placeholders = calloc(in->n_credentials + 1, sizeof(*b->placeholders));
	if (!b->placeholders)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_credentials; i++) {
		const char *var = egress_variable_of(b, in->credentials[i]->name);
		if (!var)
			continue;
		struct gateway_placeholder *p = &b->placeholders[b->n_placeholders];
		p->variable = strdup(var);
		p->value = strdup(in->credentials[i]->placeholder);
		if (!p->variable || !p->value) {
			free(p->variable);
			free(p->value);
			return -ENOMEM;
		}
		b->n_placeholders++;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* the CA certificate                                                   */

/* The whole buffer through fd from offset 0, then exactly that size. */
static int
write_all_at0(int fd, const uint8_t *data, size_t len)
{
	size_t off = 0;

	if (ftruncate(fd, 0) < 0)
		return -errno;
	while (off < len) {
		ssize_t n = pwrite(fd, data + off, len - off, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		off += (size_t)n;
	}
	return 0;
}

/*
 * Again here what the validator checked (a certificate, never a key):
 * boxd writes this file where every sandbox reads it.
 */
static bool
ca_pem_ok(const ProtobufCBinaryData *pem)
{
	static const char begin[] = "-----BEGIN CERTIFICATE-----";

	return pem->len >= sizeof(begin) && pem->len <= (64u << 10) &&
	       memcmp(pem->data, begin, sizeof(begin) - 1) == 0 &&
	       !memmem(pem->data, pem->len, "PRIVATE KEY", 11) &&
	       !memchr(pem->data, '\0', pem->len);
}

/*
 * RUNTIME/ca.pem through the fd runtime.c kept (root-owned, 0644, made
 * before BASE/ID was the owner's), STATE/ca.pem through the fd box-recheck
 * opened as the owner (O_NOFOLLOW; 0644 set here through the fd).
 */
static int
ca_write(struct box *b, const ProtobufCBinaryData *pem, char **err)
{
	int r;

	if (b->ca_runtime_fd < 0 || b->rc.ca_fd < 0) {
		seterr(err, "the CA certificate files are not open");
		return -EBADF;
	}
	if ((r = write_all_at0(b->ca_runtime_fd, pem->data, pem->len)) < 0) {
		seterr(err, "cannot write %s/%s: %s", b->runtime_dir, CA_FILE, strerror(-r));
		return r;
	}
	struct stat st;
	if (fstat(b->rc.ca_fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		seterr(err, "%s/%s is not a plain file of its own (link count %lu)",
		       b->rc.state_dir, CA_FILE, (unsigned long)st.st_nlink);
		return -EPERM;
	}
	if ((r = write_all_at0(b->rc.ca_fd, pem->data, pem->len)) < 0 ||
	    (fchmod(b->rc.ca_fd, 0644) < 0 && (r = -errno))) {
		seterr(err, "cannot write %s/%s: %s", b->rc.state_dir, CA_FILE, strerror(-r));
		return r;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* while the box runs: losing the gateway is daemon.c's (daemon_lost)  */

/* GatewayReady: the CA certificate written, the proxy serving; or its refusal. */
static void
ready_message(struct box_daemon *dm, const Box__GatewayReady *rep)
{
	struct box *b = dm->b;
	_cleanup_free_ char *err = NULL;

	if (!rep->ok)
		return daemon_ready(dm, -EPERM, "box-gateway cannot serve the box: %s",
				    rep->message ? rep->message : "(no reason given)");
	if (!rep->has_ca_cert_pem || !ca_pem_ok(&rep->ca_cert_pem))
		return daemon_ready(dm, -EBADMSG, "box-gateway sent a CA certificate that is not a "
						  "PEM certificate alone");
	if (ca_write(b, &rep->ca_cert_pem, &err) < 0)
		return daemon_ready(dm, -EIO, "%s", err ? err : "cannot write the CA certificate");
	/* It serves: the listeners that came meanwhile, in their order. */
	struct gateway *g = b->gateway;
	g->serving = true;
	for (size_t i = 0; i < g->n_pending; i++) {
		int r = listener_send(g, g->pending[i].id, g->pending[i].sandbox, g->pending[i].fd,
				      g->pending[i].otlp);
		if (r < 0) {
			pending_drop(g);
			return daemon_ready(dm, r, "cannot hand a listener to box-gateway: %s",
					    strerror(-r));
		}
	}
	pending_drop(g);
	log_info("box %s (%s): box-gateway pid %d on port %u, %zu placeholder(s)", b->name, b->id,
		 (int)dm->child.pid, (unsigned)gateway_port(b), b->n_placeholders);
	daemon_ready(dm, 0, NULL);
}

static void
on_gateway_msg(struct box_daemon *dm, struct box_ipc_msg *m)
{
	/* The table lets only GatewayReady through, once, in `starting`. */
	if (m->type == BOX__MSG_TYPE__MSG_GATEWAY_READY && dm->starting)
		ready_message(dm, (const Box__GatewayReady *)m->msg);
}

/* Its channel goes (lost, finish, stop): policyd's end for it goes too. */
static void
on_gateway_closing(struct box_daemon *dm)
{
	safe_close(policyd_take_peer(dm->b, DAEMON_GATEWAY));
	pending_drop(dm->b->gateway);
}

static const struct box_daemon_ops gateway_ops = {
	.id = DAEMON_GATEWAY,
	.on_msg = on_gateway_msg,
	.ready = box_gateway_ready,
	.finished = box_gateway_finished,
	.closing = on_gateway_closing,
};

static int
listener_add(struct box *b, const char *sandbox, int fd, uint32_t *id, bool otlp)
{
	struct gateway *g = b->gateway;
	int r;

	if (!g || !g->dm.ev || !b->gateway_serving) {
		safe_close(fd);
		return -ENOTCONN;
	}
	if (!g->serving) {
		/* Its protocol takes a listener once it serves: held until GatewayReady. */
		struct pending_listener *p = &g->pending[g->n_pending];
		if (g->n_pending >= GATEWAY_PENDING_MAX) {
			safe_close(fd);
			return -EAGAIN;
		}
		if (!(p->sandbox = strdup(sandbox))) {
			safe_close(fd);
			return -ENOMEM;
		}
		p->fd = fd;
		p->otlp = otlp;
		p->id = *id = ++g->listener_seq;
		g->n_pending++;
		return 0;
	}
	r = listener_send(g, ++g->listener_seq, sandbox, fd, otlp);
	safe_close(fd); /* the send holds its own copy */
	if (r < 0)
		return r;
	*id = g->listener_seq;
	return 0;
}

int
gateway_listener_add(struct box *b, const char *sandbox, int fd, uint32_t *id)
{
	return listener_add(b, sandbox, fd, id, false);
}

int
gateway_otlp_listener_add(struct box *b, const char *sandbox, int fd, uint32_t *id)
{
	return listener_add(b, sandbox, fd, id, true);
}

void
gateway_listener_closed(struct box *b, uint32_t id)
{
	Box__GatewayListenerClosed m = BOX__GATEWAY_LISTENER_CLOSED__INIT;
	struct gateway *g = b->gateway;

	if (!id || !g || !g->dm.ev || !b->gateway_serving)
		return;
	for (size_t i = 0; i < g->n_pending; i++)
		if (g->pending[i].id == id) {
			/* Never sent: it goes here. */
			safe_close(g->pending[i].fd);
			free(g->pending[i].sandbox);
			g->pending[i] = g->pending[--g->n_pending];
			return;
		}
	if (!g->serving)
		return;
	m.listener_id = id;
	(void)daemon_send(&g->dm, BOX__MSG_TYPE__MSG_GATEWAY_LISTENER_CLOSED, &m.base, NULL, 0);
}

/* ------------------------------------------------------------------ */
/* start                                                               */

/* fs.nr_open: the most a root boxd may give as RLIMIT_NOFILE. */
static uint64_t
nr_open(void)
{
	char buf[32] = "";
	uint64_t v;
	_cleanup_close_ int fd = open("/proc/sys/fs/nr_open", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 1048576; /* the kernel's default */
	buf[strcspn(buf, "\n")] = '\0';
	return parse_u64(buf, UINT64_MAX, &v) == 0 ? v : 1048576;
}

/* Does this process hold CAP_SYS_RESOURCE (raising a hard limit needs it)? */
static bool
has_cap_sys_resource(void)
{
	char line[256];
	uint64_t eff = 0;
	bool found = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "CapEff:", 7) != 0)
			continue;
		/* "CapEff:\t" then 16 hex digits */
		const char *p = line + 7 + strspn(line + 7, " \t");
		size_t k = 0;
		for (; k < 16; k++) {
			char c = p[k];
			int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
			if (d < 0)
				break;
			eff = eff << 4 | (uint64_t)d;
		}
		found = k > 0;
	}
	fclose(f);
	return found && (eff >> 24) & 1; /* CAP_SYS_RESOURCE */
}

int
gateway_nofile_check(const struct box *b, char **err)
{
	uint64_t want = gateway_nofile(b);
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	if (want <= rl.rlim_max)
		return 0;
	if (b->d->root && !has_cap_sys_resource()) {
		seterr(err, "box-gateway needs RLIMIT_NOFILE %llu (2 x max_connections + 256), above "
			    "this boxd's hard limit %llu, and this root boxd lacks CAP_SYS_RESOURCE to "
			    "raise it",
		       (unsigned long long)want, (unsigned long long)rl.rlim_max);
		return -EMFILE;
	}
	if (b->d->root) {
		uint64_t most = nr_open();
		if (want <= most)
			return 0;
		seterr(err, "box-gateway needs RLIMIT_NOFILE %llu (2 x max_connections + 256), above "
			    "fs.nr_open (%llu)",
		       (unsigned long long)want, (unsigned long long)most);
		return -EMFILE;
	}
	seterr(err, "box-gateway needs RLIMIT_NOFILE %llu (2 x max_connections + 256), above this "
		    "unprivileged boxd's hard limit %llu; lower max_connections or raise the limit "
		    "(ulimit -Hn)",
	       (unsigned long long)want, (unsigned long long)rl.rlim_max);
	return -EMFILE;
}

int
gateway_start(struct boxd *d, struct box *b, uint32_t *bad_line, const char **bad_key,
	      char **err)
{
	Box__GatewayInit *in = NULL;
	struct daemon_spawn_args args = { .fds = { -1, -1, -1, -1, -1, -1, -1 },
					  .nofile = gateway_nofile(b) };
	pid_t pid = 0;
	int ctl = -1;
	int r;

	*err = NULL;
	*bad_line = 0;
	*bad_key = NULL;
	_cleanup_close_ int policyd_fd = policyd_take_peer(b, DAEMON_GATEWAY);
	daemon_init(&b->gateway->dm, &gateway_ops, b);
	if ((r = init_build(b, &in, bad_line, bad_key)) < 0) {
		if (r == -EINVAL && *bad_line)
			seterr(err, "a %s entry box-gateway cannot take", *bad_key);
		else
			seterr(err, "cannot prepare box-gateway's configuration: %s", strerror(-r));
		goto out;
	}
	if ((r = placeholders_keep(b, in)) < 0) {
		seterr(err, "out of memory");
		goto out;
	}
	struct spare_taken spare;
	if (spares_take_gateway(b, &spare)) {
		/* The spare's fd 4 is this box's policyd's gateway channel already. */
		pid = spare.pid;
		ctl = spare.ctl;
		b->gateway->dm.exec_fd = spare.exec_fd;
		box_mark(b, "box-gateway taken (spawned ahead)");
	} else {
		if (policyd_fd < 0) {
			seterr(err, "box-policyd's channel for box-gateway is not open");
			r = -EBADF;
			goto out;
		}
		args.fds[DAEMON_FD_POLICYD] = policyd_fd;
		r = daemon_spawn(d, b, DAEMON_GATEWAY, &args, &pid, &ctl, NULL, err);
		/* Its policyd channel is the gateway's now (or nobody's). */
		policyd_fd = safe_close(policyd_fd);
		if (r < 0)
			goto out;
		box_mark(b, "box-gateway spawned");
	}
	if ((r = daemon_watch(&b->gateway->dm, pid, ctl, err)) < 0)
		goto out;
	/*
	 * The telemetry files that take the agent's records (box-recheck opened every
	 * file target, in the spec's order: rc.telemetry_fds[k] is the k-th file target).
	 */
	char *tel_names[BOX_TELEMETRY_FILES_MAX];
	int tel_fds[BOX_TELEMETRY_FILES_MAX];
	size_t n_tel = 0, k = 0;
	for (size_t i = 0; i < b->spec->n_telemetry; i++) {
		const Box__CfgTelemetry *t = b->spec->telemetry[i];
		if (t->kind != BOX__TELEMETRY_KIND__TELEMETRY_KIND_FILE)
			continue;
		if (k >= b->rc.n_telemetry_fds) {
			r = -EBADF;
			seterr(err, "the telemetry file of [telemetry.%s] is not open", t->name);
			goto out;
		}
		if (t->include & 16u) {
			tel_names[n_tel] = t->name;
			tel_fds[n_tel++] = b->rc.telemetry_fds[k];
		}
		k++;
	}
	in->telemetry_files = tel_names;
	in->n_telemetry_files = n_tel;
	/* With an otlp target, the telemetry channel's end after the files (proto/gateway.proto). */
	int init_fds[BOX_TELEMETRY_FILES_MAX + 1];
	memcpy(init_fds, tel_fds, n_tel * sizeof(int));
	unsigned n_fds = (unsigned)n_tel;
	int tel_chan = -1;
	if (in->n_telemetry_targets) {
		if ((tel_chan = policyd_take_telemetry(b)) < 0) {
			r = -EBADF;
			seterr(err, "box-policyd's telemetry channel for box-gateway is not open");
			goto out;
		}
		init_fds[n_fds++] = tel_chan;
	}
	daemon_init_delay();
	r = daemon_send_request(&b->gateway->dm, BOX__MSG_TYPE__MSG_GATEWAY_INIT, 1, &in->base,
				init_fds, n_fds);
	safe_close(tel_chan); /* the gateway's own copy travelled */
	in->telemetry_files = NULL; /* the spec's, not init_free's */
	in->n_telemetry_files = 0;
	if (r < 0)
		seterr(err, "cannot send GatewayInit to box-gateway: %s", strerror(-r));
	else
		b->gateway_serving = true; /* it gates the agent: the plans route through it */
out:
	init_free(in);
	return r;
}

/* ------------------------------------------------------------------ */
/* the end: closing its channel ends the gateway                       */

bool
gateway_finish(struct box *b)
{
	safe_close(policyd_take_peer(b, DAEMON_GATEWAY));
	return b->gateway && b->gateway->dm.ops && daemon_finish(&b->gateway->dm);
}

void
gateway_free(struct box *b)
{
	if (b->gateway) {
		daemon_stop(&b->gateway->dm);
		pending_drop(b->gateway);
		free(b->gateway);
		b->gateway = NULL;
	}
	safe_close(policyd_take_peer(b, DAEMON_GATEWAY));
	placeholders_free(b);
	b->ca_runtime_fd = safe_close(b->ca_runtime_fd);
}
