/*
 * ca.h — box-gateway's per-box TLS authority and its TLS contexts
 * (DESIGN.md §3; issue 11 item 1).
 *
 * A fresh ECDSA P-256 CA is made at start; its key never leaves this
 * process's memory (only the certificate PEM goes to boxd). Per-host leaf
 * certificates (SAN = the DNS name, or an IP SAN for an address literal),
 * signed by it, come from a bounded cache. The upstream context verifies
 * servers against the system roots (/etc/ssl/certs/ca-certificates.crt,
 * loaded explicitly: BoringSSL has no default store) plus upstream_ca, with
 * SNI and hostname checks (SSL_set1_host); ALPN http/1.1 on both sides.
 *
 * Trusts: nothing from peers; `host` strings are addr_host_spelling output.
 * Returns negative errno; nothing here logs.
 */
#ifndef BOX_GATEWAY_CA_H
#define BOX_GATEWAY_CA_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/ssl.h>

struct gw_ca;

/* leaf_cache_max: leaves kept (least recently used evicted), >= 1. */
int gw_ca_new(size_t leaf_cache_max, struct gw_ca **out);
void gw_ca_free(struct gw_ca *ca);
/* The CA certificate as PEM (NUL-terminated, owned by ca). */
const char *gw_ca_cert_pem(const struct gw_ca *ca);

/* The server-side context for intercepted connections (TLS 1.2+, ALPN
 * http/1.1 only). Owned by ca. */
SSL_CTX *gw_ca_server_ctx(struct gw_ca *ca);
/* Install the leaf for `host` (made or taken from the cache) and its chain
 * [leaf, CA] on ssl, before the handshake. */
int gw_ca_use_leaf(struct gw_ca *ca, SSL *ssl, const char *host, bool is_ip);

/* The upstream context: system roots + the extra PEM bundle (may be NULL).
 * -EINVAL when the bundle holds no certificate (why says so). */
int gw_tls_client_ctx_new(const char *extra_pem, size_t extra_len, SSL_CTX **out,
			  char *why, size_t why_len);
/* Prepare an upstream SSL for host: SNI (names only), SSL_set1_host or the
 * IP check, ALPN http/1.1. */
int gw_tls_client_prepare(SSL *ssl, const char *host, bool is_ip);

#endif
