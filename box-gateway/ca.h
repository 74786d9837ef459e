/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ca.h — box-gateway's per-box TLS authority and its TLS contexts
 * (docs/design.md).
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
#include <stdint.h>

#include <openssl/ssl.h>

struct gw_ca;

/* leaf_cache_max: leaves kept (least recently used evicted), >= 1.
 * The CA is valid from 1 hour before now (clock skew) to 30 days after;
 * leaves never outlive it (a gateway running longer must be restarted).
 * -EINVAL for a zero cache size, -ENOMEM when BoringSSL fails. */
int gw_ca_new(size_t leaf_cache_max, struct gw_ca **out);
/* The same, with the box's name as the subject's OU (so a user can tell the
 * CAs of two boxes apart in a trust store). box_name: 1-64 bytes of
 * [A-Za-z0-9._-], else -EINVAL; NULL = no OU (gw_ca_new). */
int gw_ca_new_named(const char *box_name, size_t leaf_cache_max, struct gw_ca **out);
void gw_ca_free(struct gw_ca *ca);
/* The CA certificate as PEM (NUL-terminated, owned by ca). */
const char *gw_ca_cert_pem(const struct gw_ca *ca);

/* The server-side context for intercepted connections (TLS 1.2+, ALPN
 * http/1.1 only: a client offering ALPN without http/1.1 gets no ALPN, not
 * an alert). Stateless session tickets (one per TLS 1.3 handshake, keys
 * random per process), no server-side session cache. Owned by ca.
 * The client's SNI, during and after the handshake:
 * SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name) (NULL when none). */
SSL_CTX *gw_ca_server_ctx(struct gw_ca *ca);
/* Install the leaf for `host` (made or taken from the cache) and its chain
 * [leaf, CA] on ssl (from gw_ca_server_ctx), before the handshake. The
 * certificates and key are shared references, not copies. Also turns on
 * SSL_set_shed_handshake_config: the handshake configuration is freed
 * once the handshake is done (SSL_get_certificate etc. then return NULL).
 * host: a DNS name (1-253 bytes of [A-Za-z0-9._-]) or, with is_ip, a
 * dotted IPv4 or IPv6 literal; else -EINVAL. */
int gw_ca_use_leaf(struct gw_ca *ca, SSL *ssl, const char *host, bool is_ip);

/* Counters for tests and the daemon's statistics. */
struct gw_ca_stats {
	uint64_t leaves_made;   /* leaf certificates signed */
	uint64_t leaf_hits;     /* gw_ca_use_leaf served from the cache */
	uint64_t leaves_evicted;
	size_t leaves_cached;
};
void gw_ca_stats(const struct gw_ca *ca, struct gw_ca_stats *out);

/* The upstream context (TLS 1.2+, ALPN http/1.1, peer verification
 * required): trust = the system roots (GW_SYSTEM_ROOTS, read explicitly;
 * missing or empty is an error naming the file) + the extra PEM bundle
 * (NULL = none; else it must hold >= 1 certificate and every CERTIFICATE
 * block must parse, else -EINVAL). why (may be NULL) gets a one-line
 * reason on failure.
 * Built on TLS_with_buffers_method (no per-connection X509 objects; the
 * server's certificates are shared DER buffers) with our own verifier, so:
 * SSL_get_peer_certificate/SSL_get_peer_cert_chain return NULL (use
 * SSL_get0_peer_certificates), SSL_get_verify_result says only
 * X509_V_ERR_APPLICATION_VERIFICATION: use gw_tls_client_verify_result. */
#define GW_SYSTEM_ROOTS "/etc/ssl/certs/ca-certificates.crt"
int gw_tls_client_ctx_new(const char *extra_pem, size_t extra_len, SSL_CTX **out,
			  char *why, size_t why_len);
/* The same with another system roots file (tests; a distribution with the
 * bundle elsewhere). roots_file NULL = no system roots at all. */
int gw_tls_client_ctx_new_roots(const char *roots_file, const char *extra_pem,
				size_t extra_len, SSL_CTX **out, char *why, size_t why_len);
/*
 * The same with the system roots file read now but parsed later (the daemon's
 * start: reading needs the file before the seccomp filter, parsing ~150
 * certificates does not and is not on the way to GatewayReady). extra_pem is parsed
 * now. The roots are parsed by gw_tls_client_roots_load: the daemon calls it once
 * it is ready, and every upstream verification and gw_tls_client_store call it
 * first, so nothing is ever verified against a store without them. 0, or the
 * first error of the parse (why says what; every verification then fails).
 */
int gw_tls_client_ctx_new_deferred(const char *roots_file, const char *extra_pem,
				   size_t extra_len, SSL_CTX **out, char *why, size_t why_len);
int gw_tls_client_roots_load(SSL_CTX *ctx, char *why, size_t why_len);
/* Prepare an upstream SSL (from that context) for host, once, before the
 * handshake: for a name, SNI + a SAN dNSName check (no CN fallback); for an
 * IP literal (is_ip), no SNI and an iPAddress SAN check. An SSL never
 * prepared fails verification. ALPN http/1.1 comes from the context. Turns
 * on configuration shedding (as gw_ca_use_leaf). -EINVAL for a host that
 * is not a name/IP literal, an SSL from another context, a second call. */
int gw_tls_client_prepare(SSL *ssl, const char *host, bool is_ip);
/* Why the upstream certificate was refused: an X509_V_ERR_* code for
 * X509_verify_cert_error_string (e.g. X509_V_ERR_HOSTNAME_MISMATCH);
 * X509_V_OK when verification passed or has not run (a handshake that
 * failed for another reason). */
long gw_tls_client_verify_result(const SSL *ssl);
/* The context's trust store (owned by ctx; NULL for another context, or when its
 * deferred system roots do not parse), with the system roots in it. */
X509_STORE *gw_tls_client_store(SSL_CTX *ctx);

#endif
