/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gateway_validate.c — validators for the gateway protocol's messages
 * (proto_gateway.h). Shape and ranges only: what a destination or a binding
 * means is the gateway's business (box-gateway/cred.c).
 * Trusts: nothing. Pure; never logs (and never copies a secret anywhere).
 */
#include <errno.h>
#include <string.h>

#include "proto_gateway.h"
#include "text.h"
#include "validate.h" /* BOX_TELEMETRY_TARGETS_MAX */
#include "validate_macros.h"

#define HOST_MAX 253u

/* A destination host: lowercase LDH labels (or an address spelling: digits,
 * dots, colons), no trailing dot. */
static bool
dest_host_ok(const char *s)
{
	if (!box_text_len_ok(s, 1, HOST_MAX))
		return false;
	for (const char *p = s; *p; p++) {
		bool ok = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
			  *p == '_' || *p == '.' || *p == ':';
		if (!ok)
			return false;
	}
	return s[strlen(s) - 1] != '.';
}

static int
destination_ok(const Box__GatewayDestination *d, bool egress)
{
	REQUIRE(d && dest_host_ok(d->host), -EINVAL);
	REQUIRE(d->port >= 1 && d->port <= 65535, -ERANGE);
	if (d->path_prefix) {
		REQUIRE(egress, -EINVAL);
		REQUIRE(box_text_utf8_ok(d->path_prefix, 2, 4096) && d->path_prefix[0] == '/' &&
				d->path_prefix[strlen(d->path_prefix) - 1] != '/',
			-EINVAL);
	}
	REQUIRE(box_text_utf8_ok(d->spelling, 1, 4096), -EINVAL);
	return 0;
}

bool
box_valid_sandbox_tag(const char *s)
{
	if (!s)
		return false;
	if (strcmp(s, "agent") == 0)
		return true;
	if (strncmp(s, "tool.", 5) == 0)
		return box_valid_name(s + 5);
	if (strncmp(s, "mcp.", 4) == 0)
		return box_valid_name(s + 4);
	return false;
}

/* An HTTP token (RFC 9110 tchar), for a header or parameter name. */
static bool
token_ok(const char *s, size_t max)
{
	return box_text_len_ok(s, 1, max) && box_text_all_in(s, "!#$%&'*+-.^_`|~");
}

static bool
secret_ok(ProtobufCBinaryData b)
{
	if (b.len < 1 || b.len > BOX_GATEWAY_SECRET_MAX)
		return false;
	for (size_t i = 0; i < b.len; i++)
		if (b.data[i] == '\0' || b.data[i] == '\r' || b.data[i] == '\n')
			return false;
	return true;
}

/* prefix + 64 lowercase hex digits; the prefix is 1-64 of [A-Za-z0-9._~-]. */
static bool
placeholder_ok(const char *s)
{
	size_t n = s ? strnlen(s, 200) : 0;
	if (n < 65 || n > 128)
		return false;
	for (size_t i = n - 64; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	for (size_t i = 0; i < n - 64; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '~' || c == '-'))
			return false;
	}
	return true;
}

static int
credential_ok(const Box__GatewayCredential *c)
{
	REQUIRE(c, -EINVAL);
	REQUIRE((strncmp(c->name, "egress.", 7) == 0 && box_valid_name(c->name + 7)) ||
			(strncmp(c->name, "mcp.", 4) == 0 && box_valid_name(c->name + 4)),
		-EINVAL);
	REQUIRE(c->n_destinations >= 1 && c->n_destinations <= BOX_GATEWAY_DESTS_MAX, -EINVAL);
	for (size_t i = 0; i < c->n_destinations; i++)
		TRY(destination_ok(c->destinations[i], true));
	REQUIRE(secret_ok(c->secret), -EINVAL);
	REQUIRE(placeholder_ok(c->placeholder), -EINVAL);
	switch (c->placement) {
	case BOX__GATEWAY_PLACEMENT__GATEWAY_PLACEMENT_HEADER:
		REQUIRE(token_ok(c->header, 256) && !c->param, -EINVAL);
		REQUIRE(!c->prefix || (box_text_len_ok(c->prefix, 0, 256) &&
				       box_text_no_ctl(c->prefix)),
			-EINVAL);
		break;
	case BOX__GATEWAY_PLACEMENT__GATEWAY_PLACEMENT_BASIC_AUTH:
		REQUIRE(!c->header && !c->prefix && !c->param, -EINVAL);
		REQUIRE(memchr(c->secret.data, ':', c->secret.len) != NULL, -EINVAL);
		break;
	case BOX__GATEWAY_PLACEMENT__GATEWAY_PLACEMENT_QUERY_PARAM:
		REQUIRE(token_ok(c->param, 256) && !c->header && !c->prefix, -EINVAL);
		break;
	default:
		return -EINVAL;
	}
	for (size_t i = 0; i < c->n_sandboxes; i++) {
		REQUIRE(box_valid_sandbox_tag(c->sandboxes[i]), -EINVAL);
		for (size_t j = 0; j < i; j++)
			REQUIRE(strcmp(c->sandboxes[i], c->sandboxes[j]) != 0, -EINVAL);
	}
	return 0;
}

/* "IP:PORT" or "[IPv6]:PORT": the shape; the gateway parses the address. */
static bool
resolver_ok(const char *s)
{
	if (!box_text_len_ok(s, 3, 64) || !box_text_all_in(s, ".:[]"))
		return false;
	const char *colon = strrchr(s, ':');
	return colon && colon[1] != '\0';
}

/* "/" or "/seg/..." with URL path characters only (boxctl's url rules, again). */
static bool
url_path_ok(const char *s)
{
	if (!box_text_len_ok(s, 1, 4096) || s[0] != '/')
		return false;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f ||
		    strchr("?#\"<>\\^`{|}", *p))
			return false;
	return true;
}

/* The namespace of NAME: every char outside [A-Za-z0-9_] becomes '_' (docs/box-policy.5.md). */
static bool
mcp_ns_ok(const char *name, const char *ns)
{
	size_t n = strlen(name);
	if (strlen(ns) != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9') || c == '_';
		if (ns[i] != (keep ? c : '_'))
			return false;
	}
	return true;
}

static int
mcp_server_ok(const Box__GatewayMcpServer *s)
{
	REQUIRE(s && box_valid_name(s->name) && mcp_ns_ok(s->name, s->ns), -EINVAL);
	REQUIRE(dest_host_ok(s->host) && url_path_ok(s->path), -EINVAL);
	REQUIRE(s->port >= 1 && s->port <= 65535, -ERANGE);
	REQUIRE(s->max_frame >= 1 && s->max_frame <= BOX_GATEWAY_MCP_FRAME_MAX, -ERANGE);
	REQUIRE(s->call_timeout_ms >= 1 && s->call_timeout_ms <= 86400000u, -ERANGE);
	return 0;
}

/* A [telemetry.NAME] kind = otlp target (docs/box.ini.5.md): url parts, encoding, credential. */
static int
telemetry_target_ok(const Box__GatewayTelemetryTarget *t)
{
	REQUIRE(t && box_valid_name(t->name) && dest_host_ok(t->host), -EINVAL);
	REQUIRE(t->port >= 1 && t->port <= 65535, -ERANGE);
	REQUIRE(t->include >= 1 && t->include <= 31, -EINVAL);
	REQUIRE(t->path[0] == '\0' || (url_path_ok(t->path) && t->path[strlen(t->path) - 1] != '/'),
		-EINVAL);
	if (!t->has_secret) {
		REQUIRE(!t->has_placement && !t->header && !t->prefix, -EINVAL);
		return 0;
	}
	REQUIRE(secret_ok(t->secret) && t->has_placement, -EINVAL);
	if (t->placement == BOX__GATEWAY_PLACEMENT__GATEWAY_PLACEMENT_HEADER) {
		REQUIRE(t->header && token_ok(t->header, 256), -EINVAL);
		REQUIRE(!t->prefix || box_text_utf8_ok(t->prefix, 0, 256), -EINVAL);
		for (const char *p = t->prefix; p && *p; p++)
			REQUIRE(*p != '\r' && *p != '\n', -EINVAL);
	} else {
		REQUIRE(t->placement == BOX__GATEWAY_PLACEMENT__GATEWAY_PLACEMENT_BASIC_AUTH &&
				!t->header && !t->prefix,
			-EINVAL);
	}
	return 0;
}

int
box_validate_gateway_init(const Box__GatewayInit *m)
{
	REQUIRE(box_valid_name(m->box_name) && box_valid_box_id(m->box_id), -EINVAL);
	REQUIRE(m->port >= 1 && m->port <= 65535, -ERANGE);
	REQUIRE(m->n_telemetry_files <= BOX_TELEMETRY_FILES_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_telemetry_files; i++)
		REQUIRE(box_valid_name(m->telemetry_files[i]), -EINVAL);
	REQUIRE(m->connect_timeout_ms >= 1 && m->connect_timeout_ms <= 3600000u, -ERANGE);
	REQUIRE(m->idle_timeout_ms >= 1 && m->idle_timeout_ms <= 86400000u, -ERANGE);
	REQUIRE(m->max_connections >= 1 && m->max_connections <= 1000000u, -ERANGE);
	REQUIRE(m->max_request_body >= 1 && m->max_request_body <= (UINT64_C(1) << 40), -ERANGE);
	REQUIRE(!m->has_upstream_ca_pem || (m->upstream_ca_pem.len >= 1 &&
					    m->upstream_ca_pem.len <= BOX_GATEWAY_PEM_MAX),
		-EINVAL);
	REQUIRE(!m->has_hosts_file || m->hosts_file.len <= BOX_GATEWAY_HOSTS_MAX, -EINVAL);
	REQUIRE(!m->resolver || resolver_ok(m->resolver), -EINVAL);
	REQUIRE(m->n_passthrough <= BOX_GATEWAY_DESTS_MAX, -EINVAL);
	for (size_t i = 0; i < m->n_passthrough; i++)
		TRY(destination_ok(m->passthrough[i], false));
	REQUIRE(m->n_credentials <= BOX_GATEWAY_CREDENTIALS_MAX, -EINVAL);
	for (size_t i = 0; i < m->n_credentials; i++) {
		TRY(credential_ok(m->credentials[i]));
		for (size_t j = 0; j < i; j++)
			REQUIRE(strcmp(m->credentials[i]->name, m->credentials[j]->name) != 0 &&
					strcmp(m->credentials[i]->placeholder,
					       m->credentials[j]->placeholder) != 0,
				-EINVAL);
	}
	REQUIRE(m->n_mcp_servers <= BOX_GATEWAY_MCP_MAX, -EINVAL);
	for (size_t i = 0; i < m->n_mcp_servers; i++) {
		TRY(mcp_server_ok(m->mcp_servers[i]));
		for (size_t j = 0; j < i; j++)
			REQUIRE(strcmp(m->mcp_servers[i]->name, m->mcp_servers[j]->name) != 0 &&
					strcmp(m->mcp_servers[i]->ns, m->mcp_servers[j]->ns) != 0,
				-EINVAL);
	}
	REQUIRE(m->n_telemetry_targets <= BOX_TELEMETRY_TARGETS_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_telemetry_targets; i++)
		TRY(telemetry_target_ok(m->telemetry_targets[i]));
	return 0;
}

int
box_validate_gateway_ready(const Box__GatewayReady *m)
{
	if (m->ok) {
		REQUIRE(m->has_ca_cert_pem && m->ca_cert_pem.len >= 64 &&
				m->ca_cert_pem.len <= 64u << 10 && !m->message,
			-EINVAL);
		/* A certificate, never a key (docs/design.md). */
		static const char begin[] = "-----BEGIN CERTIFICATE-----";
		REQUIRE(memcmp(m->ca_cert_pem.data, begin, sizeof(begin) - 1) == 0, -EINVAL);
		REQUIRE(box_valid_utf8((const char *)m->ca_cert_pem.data, m->ca_cert_pem.len) &&
				memmem(m->ca_cert_pem.data, m->ca_cert_pem.len, "PRIVATE", 7) ==
					NULL,
			-EINVAL);
		return 0;
	}
	REQUIRE(!m->has_ca_cert_pem && box_text_utf8_ok(m->message, 1, 4096), -EINVAL);
	return 0;
}

int
box_validate_gateway_listener(const Box__GatewayListener *m)
{
	REQUIRE(m->listener_id >= 1 && box_valid_sandbox_tag(m->sandbox), -EINVAL);
	return 0;
}

int
box_validate_gateway_listener_closed(const Box__GatewayListenerClosed *m)
{
	REQUIRE(m->listener_id >= 1, -EINVAL);
	return 0;
}
