/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ca.c — box-gateway's per-box certificate authority, its leaf cache and
 * the two TLS contexts (server side for intercepted connections, client
 * side for upstream), with BoringSSL.
 *
 * Trust assumptions:
 * - The CA key is made here from BoringSSL's RNG and never leaves this
 *   process's memory: no file I/O in this file except reading the system
 *   trust roots (a root-owned file) in gw_tls_client_ctx_new. Only the
 *   certificate PEM is handed out.
 * - `host` strings come from the daemon's own parsing (addr_host_spelling);
 *   they are still checked here (charset, length, IP syntax) because they
 *   end up inside certificates.
 * - The extra upstream bundle is operator configuration: it is trusted to
 *   name anchors, but parsed strictly (a CERTIFICATE block that does not
 *   parse is an error, not skipped).
 * - Everything a TLS peer sends is parsed by BoringSSL: the ALPN callback
 *   only walks the length-prefixed list BoringSSL already validated, and
 *   the upstream verifier hands the server's DER certificates to d2i_X509
 *   and X509_verify_cert (the checks BoringSSL's own X509 layer makes).
 * Not thread-safe: the daemon calls it from its one event loop.
 * Returns negative errno; nothing here logs. BoringSSL's error queue is
 * cleared on every failure path so it never leaks into a later
 * SSL_get_error on an unrelated connection.
 */
#include "ca.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/bytestring.h>
#include <openssl/ec_key.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/mem.h>
#include <openssl/nid.h>
#include <openssl/obj.h>
#include <openssl/pem.h>
#include <openssl/pool.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

/* Validity: one hour back absorbs a client's clock running behind ours;
 * 30 days is longer than a box is expected to live between restarts and
 * short enough that a CA copied out of a box stops mattering. */
#define GW_CA_BACKDATE_SEC  (60 * 60)
#define GW_CA_LIFETIME_SEC  (30L * 24 * 60 * 60)
/* A cached leaf closer than this to its notAfter is re-made. */
#define GW_LEAF_RENEW_SEC   (60 * 60)
#define GW_HOST_MAX         253
/* ub-common-name (RFC 5280): a longer host goes only into the SAN. */
#define GW_CN_MAX           64
/* The system bundle is ~200 KiB; anything near this cap is not a bundle. */
#define GW_ROOTS_FILE_MAX   (16 * 1024 * 1024)
#define GW_CA_CN            "box egress CA"
#define GW_ORG              "box"

static const uint8_t gw_alpn_http11[] = "\x08http/1.1";
#define GW_ALPN_HTTP11_LEN (sizeof(gw_alpn_http11) - 1)

struct gw_leaf {
	struct gw_leaf *lru_prev, *lru_next; /* most recently used at the head */
	struct gw_leaf *hash_next;
	uint32_t hash;
	bool is_ip;
	time_t not_after;
	CRYPTO_BUFFER *der; /* the leaf certificate, shared by every SSL using it */
	char host[];
};

struct gw_ca {
	EVP_PKEY *ca_key;
	X509 *ca_cert;
	CRYPTO_BUFFER *ca_der;
	char *ca_pem;
	time_t ca_not_after;
	/* One key for every leaf: making a leaf is then one ECDSA signature,
	 * not a key generation. Leaves are only ever presented to the box's
	 * own clients, which trust this CA alone for them, so sharing the key
	 * across hosts loses nothing a per-host key would protect. */
	EVP_PKEY *leaf_key;
	/* The extensions every leaf carries (basicConstraints, keyUsage, EKU,
	 * AKI), encoded once. */
	X509_EXTENSION *leaf_exts[4];
	SSL_CTX *server_ctx;

	size_t cache_max, cache_len;
	size_t nbuckets; /* a power of two */
	struct gw_leaf **buckets;
	struct gw_leaf *lru_head, *lru_tail;
	struct gw_ca_stats stats;
};

static void
set_why(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	if (!why || why_len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
}

/* Map a BoringSSL failure to an errno and drop its queued errors. */
static int
ssl_fail(int err)
{
	ERR_clear_error();
	return err;
}

static bool
host_name_ok(const char *host, size_t *len_out)
{
	size_t len = strnlen(host, GW_HOST_MAX + 1);

	if (len == 0 || len > GW_HOST_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)host[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_'))
			return false;
	}
	*len_out = len;
	return true;
}

/* An IP literal as this daemon spells it: dotted IPv4 or IPv6 text. */
static int
parse_ip(const char *host, uint8_t out[16], size_t *out_len)
{
	if (strnlen(host, INET6_ADDRSTRLEN) >= INET6_ADDRSTRLEN)
		return -EINVAL;
	if (inet_pton(AF_INET, host, out) == 1) {
		*out_len = 4;
		return 0;
	}
	if (inet_pton(AF_INET6, host, out) == 1) {
		*out_len = 16;
		return 0;
	}
	return -EINVAL;
}

static int
set_random_serial(X509 *x)
{
	uint8_t raw[16];
	BIGNUM *bn = NULL;
	int ok;

	/* 128 random bits, read as a non-negative integer (DER adds a leading
	 * zero octet when the top bit is set); zero is not a valid serial. */
	do {
		RAND_bytes(raw, sizeof(raw));
		bn = BN_bin2bn(raw, sizeof(raw), bn);
		if (!bn)
			return -ENOMEM;
	} while (BN_is_zero(bn));
	ok = BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
	BN_free(bn);
	return ok ? 0 : -ENOMEM;
}

static EVP_PKEY *
new_p256_key(void)
{
	EC_KEY *ec = EC_KEY_new_by_curve_name(NID_X9_62_prime256v1);
	EVP_PKEY *pkey = EVP_PKEY_new();

	if (!ec || !pkey || !EC_KEY_generate_key(ec) || !EVP_PKEY_assign_EC_KEY(pkey, ec)) {
		EC_KEY_free(ec);
		EVP_PKEY_free(pkey);
		return NULL;
	}
	return pkey;
}

/* The DER of x as a shareable buffer. */
static CRYPTO_BUFFER *
x509_to_buffer(X509 *x)
{
	uint8_t *der = NULL;
	int len = i2d_X509(x, &der);
	CRYPTO_BUFFER *buf;

	if (len <= 0)
		return NULL;
	buf = CRYPTO_BUFFER_new(der, (size_t)len, NULL);
	OPENSSL_free(der);
	return buf;
}

static int
add_ext(X509 *x, int nid, int crit, void *value)
{
	X509_EXTENSION *ext = X509V3_EXT_i2d(nid, crit, value);
	int ok = ext && X509_add_ext(x, ext, -1);

	X509_EXTENSION_free(ext);
	return ok ? 0 : -ENOMEM;
}

/* KeyUsage bit numbers (RFC 5280 §4.2.1.3), as masks of our own. */
#define GW_KU_DIGITAL_SIGNATURE (1 << 0)
#define GW_KU_KEY_CERT_SIGN     (1 << 5)
#define GW_KU_CRL_SIGN          (1 << 6)

static ASN1_BIT_STRING *
key_usage(int bits)
{
	ASN1_BIT_STRING *ku = ASN1_BIT_STRING_new();

	if (!ku)
		return NULL;
	for (int bit = 0; bit < 9; bit++) {
		if ((bits & (1 << bit)) && !ASN1_BIT_STRING_set_bit(ku, bit, 1)) {
			ASN1_BIT_STRING_free(ku);
			return NULL;
		}
	}
	return ku;
}

/* subjectKeyIdentifier method 1 of RFC 5280 §4.2.1.2: SHA-1 of the
 * subjectPublicKey bits. */
static ASN1_OCTET_STRING *
key_id_of(X509 *x)
{
	ASN1_BIT_STRING *bits = X509_get0_pubkey_bitstr(x);
	uint8_t md[SHA_DIGEST_LENGTH];
	ASN1_OCTET_STRING *id;

	if (!bits)
		return NULL;
	SHA1(ASN1_STRING_get0_data(bits), (size_t)ASN1_STRING_length(bits), md);
	id = ASN1_OCTET_STRING_new();
	if (id && !ASN1_OCTET_STRING_set(id, md, sizeof(md))) {
		ASN1_OCTET_STRING_free(id);
		id = NULL;
	}
	return id;
}

static int
set_validity(X509 *x, time_t now, time_t not_after)
{
	if (!ASN1_TIME_set(X509_getm_notBefore(x), now - GW_CA_BACKDATE_SEC) ||
	    !ASN1_TIME_set(X509_getm_notAfter(x), not_after))
		return -ENOMEM;
	return 0;
}

static int
name_add(X509_NAME *name, int nid, const char *text)
{
	if (!X509_NAME_add_entry_by_NID(name, nid, MBSTRING_UTF8, (const uint8_t *)text, -1,
					-1, 0))
		return -ENOMEM;
	return 0;
}

/* The self-signed CA: basicConstraints critical CA:TRUE pathlen:0 (it signs
 * leaves only), keyUsage critical keyCertSign+cRLSign+digitalSignature,
 * subject and authority key identifiers. */
static int
make_ca_cert(struct gw_ca *ca, const char *box_name)
{
	time_t now = time(NULL);
	X509 *x = X509_new();
	X509_NAME *name = X509_NAME_new();
	BASIC_CONSTRAINTS *bc = BASIC_CONSTRAINTS_new();
	ASN1_BIT_STRING *ku = key_usage(GW_KU_DIGITAL_SIGNATURE | GW_KU_KEY_CERT_SIGN | GW_KU_CRL_SIGN);
	ASN1_OCTET_STRING *ski = NULL;
	AUTHORITY_KEYID *aki = AUTHORITY_KEYID_new();
	int rc = -ENOMEM;

	if (!x || !name || !bc || !ku || !aki)
		goto out;
	ca->ca_not_after = now + GW_CA_LIFETIME_SEC;
	if (!X509_set_version(x, X509_VERSION_3) || set_random_serial(x) < 0 ||
	    name_add(name, NID_commonName, GW_CA_CN) < 0 ||
	    name_add(name, NID_organizationName, GW_ORG) < 0 ||
	    (box_name && name_add(name, NID_organizationalUnitName, box_name) < 0) ||
	    !X509_set_subject_name(x, name) || !X509_set_issuer_name(x, name) ||
	    set_validity(x, now, ca->ca_not_after) < 0 || !X509_set_pubkey(x, ca->ca_key))
		goto out;
	bc->ca = 0xff;
	bc->pathlen = ASN1_INTEGER_new();
	if (!bc->pathlen || !ASN1_INTEGER_set(bc->pathlen, 0))
		goto out;
	ski = key_id_of(x);
	if (!ski)
		goto out;
	aki->keyid = ASN1_OCTET_STRING_dup(ski);
	if (!aki->keyid)
		goto out;
	if (add_ext(x, NID_basic_constraints, 1, bc) < 0 || add_ext(x, NID_key_usage, 1, ku) < 0 ||
	    add_ext(x, NID_subject_key_identifier, 0, ski) < 0 ||
	    add_ext(x, NID_authority_key_identifier, 0, aki) < 0)
		goto out;
	if (X509_sign(x, ca->ca_key, EVP_sha256()) <= 0)
		goto out;
	ca->ca_cert = x;
	x = NULL;
	rc = 0;
out:
	X509_free(x);
	X509_NAME_free(name);
	BASIC_CONSTRAINTS_free(bc);
	ASN1_BIT_STRING_free(ku);
	ASN1_OCTET_STRING_free(ski);
	AUTHORITY_KEYID_free(aki);
	return rc;
}

/* The extensions shared by every leaf, encoded once: basicConstraints
 * CA:FALSE, keyUsage critical digitalSignature, EKU serverAuth, AKI = the
 * CA's SKI. */
static int
make_leaf_exts(struct gw_ca *ca)
{
	BASIC_CONSTRAINTS *bc = BASIC_CONSTRAINTS_new();
	ASN1_BIT_STRING *ku = key_usage(GW_KU_DIGITAL_SIGNATURE);
	EXTENDED_KEY_USAGE *eku = sk_ASN1_OBJECT_new_null();
	AUTHORITY_KEYID *aki = AUTHORITY_KEYID_new();
	const ASN1_OCTET_STRING *ski = X509_get0_subject_key_id(ca->ca_cert);
	int rc = -ENOMEM;

	if (!bc || !ku || !eku || !aki || !ski)
		goto out;
	if (!sk_ASN1_OBJECT_push(eku, OBJ_nid2obj(NID_server_auth)))
		goto out;
	aki->keyid = ASN1_OCTET_STRING_dup(ski);
	if (!aki->keyid)
		goto out;
	ca->leaf_exts[0] = X509V3_EXT_i2d(NID_basic_constraints, 0, bc);
	ca->leaf_exts[1] = X509V3_EXT_i2d(NID_key_usage, 1, ku);
	ca->leaf_exts[2] = X509V3_EXT_i2d(NID_ext_key_usage, 0, eku);
	ca->leaf_exts[3] = X509V3_EXT_i2d(NID_authority_key_identifier, 0, aki);
	if (ca->leaf_exts[0] && ca->leaf_exts[1] && ca->leaf_exts[2] && ca->leaf_exts[3])
		rc = 0;
out:
	BASIC_CONSTRAINTS_free(bc);
	ASN1_BIT_STRING_free(ku);
	sk_ASN1_OBJECT_free(eku); /* OBJ_nid2obj objects are static */
	AUTHORITY_KEYID_free(aki);
	return rc;
}

/* The subjectAltName: one dNSName, or one iPAddress. */
static int
add_san(X509 *x, const char *host, size_t host_len, bool is_ip, bool critical)
{
	GENERAL_NAMES *gens = sk_GENERAL_NAME_new_null();
	GENERAL_NAME *gen = GENERAL_NAME_new();
	ASN1_STRING *value = NULL;
	uint8_t ip[16];
	size_t ip_len;
	int rc = -ENOMEM;

	if (!gens || !gen)
		goto out;
	if (is_ip) {
		if (parse_ip(host, ip, &ip_len) < 0) {
			rc = -EINVAL;
			goto out;
		}
		value = ASN1_OCTET_STRING_new();
		if (!value || !ASN1_OCTET_STRING_set(value, ip, (int)ip_len))
			goto out;
		GENERAL_NAME_set0_value(gen, GEN_IPADD, value);
	} else {
		value = ASN1_IA5STRING_new();
		if (!value || !ASN1_STRING_set(value, host, (int)host_len))
			goto out;
		GENERAL_NAME_set0_value(gen, GEN_DNS, value);
	}
	value = NULL;
	if (!sk_GENERAL_NAME_push(gens, gen))
		goto out;
	gen = NULL;
	rc = add_ext(x, NID_subject_alt_name, critical, gens);
out:
	ASN1_STRING_free(value);
	GENERAL_NAME_free(gen);
	sk_GENERAL_NAME_pop_free(gens, GENERAL_NAME_free);
	return rc;
}

/* Sign a leaf for host: CN=host (when it fits ub-common-name; otherwise
 * an empty subject and a critical SAN, RFC 5280 §4.2.1.6), SAN, the shared
 * extensions, validity now-1h .. min(now+30d, the CA's notAfter). */
static int
make_leaf_der(struct gw_ca *ca, const char *host, size_t host_len, bool is_ip,
	      CRYPTO_BUFFER **der_out, time_t *not_after_out)
{
	time_t now = time(NULL);
	time_t not_after = now + GW_CA_LIFETIME_SEC;
	X509 *x = X509_new();
	X509_NAME *subject = X509_NAME_new();
	bool has_cn = host_len <= GW_CN_MAX;
	int rc = -ENOMEM;

	if (not_after > ca->ca_not_after)
		not_after = ca->ca_not_after;
	if (!x || !subject)
		goto out;
	if (!X509_set_version(x, X509_VERSION_3) || set_random_serial(x) < 0 ||
	    !X509_set_issuer_name(x, X509_get_subject_name(ca->ca_cert)) ||
	    set_validity(x, now, not_after) < 0 || !X509_set_pubkey(x, ca->leaf_key))
		goto out;
	if (has_cn && name_add(subject, NID_commonName, host) < 0)
		goto out;
	if (!X509_set_subject_name(x, subject))
		goto out;
	rc = add_san(x, host, host_len, is_ip, !has_cn);
	if (rc < 0)
		goto out;
	rc = -ENOMEM;
	for (size_t i = 0; i < sizeof(ca->leaf_exts) / sizeof(ca->leaf_exts[0]); i++)
		if (!X509_add_ext(x, ca->leaf_exts[i], -1))
			goto out;
	if (X509_sign(x, ca->ca_key, EVP_sha256()) <= 0)
		goto out;
	*der_out = x509_to_buffer(x);
	if (!*der_out)
		goto out;
	*not_after_out = not_after;
	rc = 0;
out:
	X509_free(x);
	X509_NAME_free(subject);
	return rc;
}

/* --- the server context --- */

/* Select http/1.1 when offered; otherwise negotiate no protocol rather
 * than fail: a client offering only h2 falls back to HTTP/1.1 without ALPN
 * (the gateway speaks only HTTP/1.1, said in the docs). */
static int
alpn_select(SSL *ssl, const uint8_t **out, uint8_t *out_len, const uint8_t *in,
	    unsigned in_len, void *arg)
{
	CBS list, proto;

	CBS_init(&list, in, in_len);
	while (CBS_len(&list) > 0) {
		if (!CBS_get_u8_length_prefixed(&list, &proto))
			return SSL_TLSEXT_ERR_NOACK;
		if (CBS_len(&proto) == GW_ALPN_HTTP11_LEN - 1 &&
		    memcmp(CBS_data(&proto), gw_alpn_http11 + 1, GW_ALPN_HTTP11_LEN - 1) == 0) {
			*out = CBS_data(&proto);
			*out_len = (uint8_t)CBS_len(&proto);
			return SSL_TLSEXT_ERR_OK;
		}
	}
	return SSL_TLSEXT_ERR_NOACK;
}

static SSL_CTX *
make_server_ctx(void)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

	if (!ctx)
		return NULL;
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION)) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
	/* Resumption by stateless tickets only (BoringSSL makes and rotates
	 * the ticket keys in memory): a returning client (curl, pip, git
	 * reconnect often) skips a signature and the certificate, and nothing
	 * is kept per session on this side. One ticket per TLS 1.3 handshake:
	 * clients keep one per host. */
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_num_tickets(ctx, 1);
	/* SSL_MODE_RELEASE_BUFFERS is 0 in BoringSSL: it always frees its read
	 * and write buffers when they drain, which keeps an idle connection
	 * small (measured in test_gw_ca). */
	return ctx;
}

/* --- the leaf cache --- */

static uint32_t
host_hash(const char *host, size_t len, bool is_ip)
{
	uint32_t h = 2166136261u; /* FNV-1a; the hosts are ours, not a peer's choice of keys */

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)host[i];
		h *= 16777619u;
	}
	return h ^ (is_ip ? 0x9e3779b9u : 0);
}

static void
lru_unlink(struct gw_ca *ca, struct gw_leaf *leaf)
{
	if (leaf->lru_prev)
		leaf->lru_prev->lru_next = leaf->lru_next;
	else
		ca->lru_head = leaf->lru_next;
	if (leaf->lru_next)
		leaf->lru_next->lru_prev = leaf->lru_prev;
	else
		ca->lru_tail = leaf->lru_prev;
	leaf->lru_prev = leaf->lru_next = NULL;
}

static void
lru_push_head(struct gw_ca *ca, struct gw_leaf *leaf)
{
	leaf->lru_prev = NULL;
	leaf->lru_next = ca->lru_head;
	if (ca->lru_head)
		ca->lru_head->lru_prev = leaf;
	ca->lru_head = leaf;
	if (!ca->lru_tail)
		ca->lru_tail = leaf;
}

static void
cache_remove(struct gw_ca *ca, struct gw_leaf *leaf)
{
	struct gw_leaf **pp = &ca->buckets[leaf->hash & (ca->nbuckets - 1)];

	while (*pp && *pp != leaf)
		pp = &(*pp)->hash_next;
	if (*pp)
		*pp = leaf->hash_next;
	lru_unlink(ca, leaf);
	ca->cache_len--;
	/* SSLs still using it hold their own reference. */
	CRYPTO_BUFFER_free(leaf->der);
	free(leaf);
}

static struct gw_leaf *
cache_find(struct gw_ca *ca, const char *host, bool is_ip, uint32_t hash)
{
	for (struct gw_leaf *leaf = ca->buckets[hash & (ca->nbuckets - 1)]; leaf;
	     leaf = leaf->hash_next)
		if (leaf->hash == hash && leaf->is_ip == is_ip && strcmp(leaf->host, host) == 0)
			return leaf;
	return NULL;
}

static int
leaf_get(struct gw_ca *ca, const char *host, bool is_ip, struct gw_leaf **out)
{
	size_t len;
	uint32_t hash;
	struct gw_leaf *leaf;
	int rc;

	if (is_ip) {
		uint8_t ip[16];
		size_t ip_len;
		if (parse_ip(host, ip, &ip_len) < 0)
			return -EINVAL;
		len = strlen(host);
	} else if (!host_name_ok(host, &len)) {
		return -EINVAL;
	}
	hash = host_hash(host, len, is_ip);
	leaf = cache_find(ca, host, is_ip, hash);
	/* Re-made when close to its end, unless the CA ends then too (a new
	 * leaf could not outlive it: signing again would gain nothing). */
	if (leaf && (time(NULL) < leaf->not_after - GW_LEAF_RENEW_SEC ||
		     leaf->not_after >= ca->ca_not_after)) {
		lru_unlink(ca, leaf);
		lru_push_head(ca, leaf);
		ca->stats.leaf_hits++;
		*out = leaf;
		return 0;
	}
	if (leaf)
		cache_remove(ca, leaf);

	leaf = calloc(1, sizeof(*leaf) + len + 1);
	if (!leaf)
		return -ENOMEM;
	rc = make_leaf_der(ca, host, len, is_ip, &leaf->der, &leaf->not_after);
	if (rc < 0) {
		free(leaf);
		return ssl_fail(rc);
	}
	memcpy(leaf->host, host, len + 1);
	leaf->hash = hash;
	leaf->is_ip = is_ip;
	leaf->hash_next = ca->buckets[hash & (ca->nbuckets - 1)];
	ca->buckets[hash & (ca->nbuckets - 1)] = leaf;
	lru_push_head(ca, leaf);
	ca->cache_len++;
	ca->stats.leaves_made++;
	while (ca->cache_len > ca->cache_max) {
		cache_remove(ca, ca->lru_tail);
		ca->stats.leaves_evicted++;
	}
	*out = leaf;
	return 0;
}

/* --- the public API --- */

void
gw_ca_free(struct gw_ca *ca)
{
	if (!ca)
		return;
	while (ca->lru_head)
		cache_remove(ca, ca->lru_head);
	free(ca->buckets);
	SSL_CTX_free(ca->server_ctx);
	for (size_t i = 0; i < sizeof(ca->leaf_exts) / sizeof(ca->leaf_exts[0]); i++)
		X509_EXTENSION_free(ca->leaf_exts[i]);
	EVP_PKEY_free(ca->leaf_key);
	free(ca->ca_pem);
	CRYPTO_BUFFER_free(ca->ca_der);
	X509_free(ca->ca_cert);
	EVP_PKEY_free(ca->ca_key);
	free(ca);
}

static char *
cert_to_pem(X509 *x)
{
	BIO *bio = BIO_new(BIO_s_mem());
	const uint8_t *data;
	size_t len;
	char *pem = NULL;

	if (bio && PEM_write_bio_X509(bio, x) && BIO_mem_contents(bio, &data, &len)) {
		pem = malloc(len + 1);
		if (pem) {
			memcpy(pem, data, len);
			pem[len] = '\0';
		}
	}
	BIO_free(bio);
	return pem;
}

int
gw_ca_new_named(const char *box_name, size_t leaf_cache_max, struct gw_ca **out)
{
	struct gw_ca *ca;
	size_t name_len;
	int rc = -ENOMEM;

	*out = NULL;
	if (leaf_cache_max == 0 || leaf_cache_max > SIZE_MAX / 4)
		return -EINVAL;
	if (box_name && (!host_name_ok(box_name, &name_len) || name_len > GW_CN_MAX))
		return -EINVAL;
	ca = calloc(1, sizeof(*ca));
	if (!ca)
		return -ENOMEM;
	ca->cache_max = leaf_cache_max;
	/* Two buckets per entry at most; the table grows with nothing, so cap
	 * its size for a very large configured maximum (chains then grow). */
	for (ca->nbuckets = 16; ca->nbuckets < 2 * leaf_cache_max && ca->nbuckets < 65536;)
		ca->nbuckets *= 2;
	ca->buckets = calloc(ca->nbuckets, sizeof(*ca->buckets));
	if (!ca->buckets)
		goto fail;
	ca->ca_key = new_p256_key();
	ca->leaf_key = new_p256_key();
	if (!ca->ca_key || !ca->leaf_key)
		goto fail;
	rc = make_ca_cert(ca, box_name);
	if (rc < 0)
		goto fail;
	rc = -ENOMEM;
	ca->ca_der = x509_to_buffer(ca->ca_cert);
	ca->ca_pem = cert_to_pem(ca->ca_cert);
	if (!ca->ca_der || !ca->ca_pem || make_leaf_exts(ca) < 0)
		goto fail;
	ca->server_ctx = make_server_ctx();
	if (!ca->server_ctx)
		goto fail;
	*out = ca;
	return 0;
fail:
	gw_ca_free(ca);
	return ssl_fail(rc);
}

int
gw_ca_new(size_t leaf_cache_max, struct gw_ca **out)
{
	return gw_ca_new_named(NULL, leaf_cache_max, out);
}

const char *
gw_ca_cert_pem(const struct gw_ca *ca)
{
	return ca->ca_pem;
}

SSL_CTX *
gw_ca_server_ctx(struct gw_ca *ca)
{
	return ca->server_ctx;
}

int
gw_ca_use_leaf(struct gw_ca *ca, SSL *ssl, const char *host, bool is_ip)
{
	struct gw_leaf *leaf;
	CRYPTO_BUFFER *chain[2];
	int rc = leaf_get(ca, host, is_ip, &leaf);

	if (rc < 0)
		return rc;
	chain[0] = leaf->der;
	chain[1] = ca->ca_der;
	/* References, not copies: every SSL for this host shares the leaf's
	 * DER, all share the CA's DER and the leaf key. */
	if (!SSL_set_chain_and_key(ssl, chain, 2, ca->leaf_key, NULL))
		return ssl_fail(-ENOMEM);
	SSL_set_shed_handshake_config(ssl, 1);
	return 0;
}

void
gw_ca_stats(const struct gw_ca *ca, struct gw_ca_stats *out)
{
	*out = ca->stats;
	out->leaves_cached = ca->cache_len;
}

/* --- the upstream context --- */

/*
 * The upstream side runs on TLS_with_buffers_method: the same TLS stack as
 * TLS_client_method without BoringSSL's X509 layer, so a connection keeps
 * the server's certificates only as pooled DER buffers. With the X509
 * layer every session holds a parsed X509 per certificate (~5 KiB each,
 * measured: 11.8 KiB per idle connection to a 2-certificate chain, against
 * ~2 KiB here). Verification is ours (verify_upstream): the chain is
 * parsed, checked with X509_verify_cert against the context's store for
 * the "ssl_server" purpose and the prepared name or address, and freed.
 */

/* Upstream certificates are interned in one process-wide pool, so the
 * connections to one server share one copy of each certificate's DER.
 * BoringSSL requires the pool to outlive every SSL_CTX, SSL and session
 * using it: it is never freed. */
static CRYPTO_BUFFER_POOL *upstream_pool;
static int ctx_store_idx = -1;  /* SSL_CTX ex_data: its X509_STORE */
static int ctx_roots_idx = -1;  /* SSL_CTX ex_data: struct pending_roots (deferred) */
static int ssl_target_idx = -1; /* SSL ex_data: struct upstream_target */
static pthread_once_t upstream_once = PTHREAD_ONCE_INIT;

/* What gw_tls_client_prepare asked the server to prove. */
struct upstream_target {
	long verify_result; /* X509_V_OK until a verification fails */
	bool is_ip;
	uint8_t ip[16];
	size_t ip_len;
	size_t host_len;
	char host[];
};

static void
free_ctx_store(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int index, long argl, void *argp)
{
	X509_STORE_free(ptr);
}

static void
free_ssl_target(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int index, long argl, void *argp)
{
	free(ptr);
}

/*
 * The system roots read at start but not parsed yet (gw_tls_client_ctx_new_deferred):
 * parsed into the context's store by gw_tls_client_roots_load, which every upstream
 * verification runs first, so no chain is ever checked against a store without them.
 * A parse that failed stays failed: every later verification fails too.
 */
struct pending_roots {
	char *data; /* NULL once parsed (or failed) */
	size_t len;
	int error;
	char why[256];
	char what[]; /* the file's path (in the reasons) */
};

static void
free_ctx_roots(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int index, long argl, void *argp)
{
	struct pending_roots *p = ptr;
	if (p)
		free(p->data);
	free(p);
}

static void
upstream_init(void)
{
	upstream_pool = CRYPTO_BUFFER_POOL_new();
	ctx_store_idx = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, free_ctx_store);
	ctx_roots_idx = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, free_ctx_roots);
	ssl_target_idx = SSL_get_ex_new_index(0, NULL, NULL, NULL, free_ssl_target);
}

static bool
upstream_ready(void)
{
	pthread_once(&upstream_once, upstream_init);
	return upstream_pool && ctx_store_idx >= 0 && ctx_roots_idx >= 0 && ssl_target_idx >= 0;
}

static int add_pem_bundle(X509_STORE *store, const char *pem, size_t len, const char *what,
			  char *why, size_t why_len);

int
gw_tls_client_roots_load(SSL_CTX *ctx, char *why, size_t why_len)
{
	struct pending_roots *p =
		ctx_roots_idx >= 0 ? SSL_CTX_get_ex_data(ctx, ctx_roots_idx) : NULL;
	if (!p)
		return 0;
	if (p->data) {
		X509_STORE *store = SSL_CTX_get_ex_data(ctx, ctx_store_idx);
		int r = store ? add_pem_bundle(store, p->data, p->len, p->what, p->why,
					       sizeof(p->why))
			      : -EINVAL;
		p->error = r < 0 ? r : 0;
		free(p->data);
		p->data = NULL;
	}
	if (p->error < 0)
		set_why(why, why_len, "%s", p->why[0] ? p->why : strerror(-p->error));
	return p->error;
}

/* The verification BoringSSL's X509 layer would do, on a transient copy.
 * Fails closed: an SSL that was never prepared has nothing to match. */
static int
check_chain(X509_STORE *store, const STACK_OF(CRYPTO_BUFFER) *certs,
	    const struct upstream_target *target)
{
	X509_STORE_CTX *sctx = NULL;
	STACK_OF(X509) *chain = NULL;
	X509 *leaf = NULL;
	X509_VERIFY_PARAM *param;
	int result = X509_V_ERR_UNSPECIFIED;

	if (!store || !target || !certs || sk_CRYPTO_BUFFER_num(certs) == 0)
		return X509_V_ERR_APPLICATION_VERIFICATION;
	chain = sk_X509_new_null();
	sctx = X509_STORE_CTX_new();
	if (!chain || !sctx)
		goto out;
	for (size_t i = 0; i < sk_CRYPTO_BUFFER_num(certs); i++) {
		const CRYPTO_BUFFER *buf = sk_CRYPTO_BUFFER_value(certs, i);
		const uint8_t *der = CRYPTO_BUFFER_data(buf);
		X509 *x = d2i_X509(NULL, &der, (long)CRYPTO_BUFFER_len(buf));
		if (!x || der != CRYPTO_BUFFER_data(buf) + CRYPTO_BUFFER_len(buf) ||
		    !sk_X509_push(chain, x)) {
			X509_free(x);
			goto out;
		}
	}
	leaf = sk_X509_value(chain, 0);
	if (!X509_STORE_CTX_init(sctx, store, leaf, chain) ||
	    !X509_STORE_CTX_set_default(sctx, "ssl_server"))
		goto out;
	param = X509_STORE_CTX_get0_param(sctx);
	if (target->is_ip) {
		if (!X509_VERIFY_PARAM_set1_ip(param, target->ip, target->ip_len))
			goto out;
	} else {
		/* The SAN dNSName must match; the subject CN is never consulted
		 * (as browsers do). */
		X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NEVER_CHECK_SUBJECT);
		if (!X509_VERIFY_PARAM_set1_host(param, target->host, target->host_len))
			goto out;
	}
	if (X509_verify_cert(sctx) == 1)
		result = X509_V_OK;
	else
		result = X509_STORE_CTX_get_error(sctx);
out:
	X509_STORE_CTX_free(sctx);
	sk_X509_pop_free(chain, X509_free);
	ERR_clear_error();
	return result;
}

static enum ssl_verify_result_t
verify_upstream(SSL *ssl, uint8_t *out_alert)
{
	SSL_CTX *ctx = SSL_get_SSL_CTX(ssl);
	X509_STORE *store = SSL_CTX_get_ex_data(ctx, ctx_store_idx);
	struct upstream_target *target = SSL_get_ex_data(ssl, ssl_target_idx);
	/* the system roots first, when their parse was deferred: never a partial store */
	int result = gw_tls_client_roots_load(ctx, NULL, 0) < 0
			     ? X509_V_ERR_UNSPECIFIED
			     : check_chain(store, SSL_get0_peer_certificates(ssl), target);

	if (result == X509_V_OK)
		return ssl_verify_ok;
	if (target)
		target->verify_result = result;
	*out_alert = (uint8_t)SSL_alert_from_verify_result(result);
	return ssl_verify_invalid;
}

long
gw_tls_client_verify_result(const SSL *ssl)
{
	const struct upstream_target *target =
		ssl_target_idx >= 0 ? SSL_get_ex_data(ssl, ssl_target_idx) : NULL;

	return target ? target->verify_result : X509_V_ERR_APPLICATION_VERIFICATION;
}

X509_STORE *
gw_tls_client_store(SSL_CTX *ctx)
{
	if (ctx_store_idx < 0 || gw_tls_client_roots_load(ctx, NULL, 0) < 0)
		return NULL;
	return SSL_CTX_get_ex_data(ctx, ctx_store_idx);
}

/* Add every certificate of a PEM bundle to store. Text outside PEM blocks
 * is ignored (bundles carry comments); a CERTIFICATE block that does not
 * parse is an error. Returns the number added (duplicates count). */
static int
add_pem_bundle(X509_STORE *store, const char *pem, size_t len, const char *what, char *why,
	       size_t why_len)
{
	BIO *bio;
	int count = 0;

	if (len > INT32_MAX) {
		set_why(why, why_len, "%s: too large", what);
		return -EINVAL;
	}
	bio = BIO_new_mem_buf(pem, (ssize_t)len);
	if (!bio)
		return ssl_fail(-ENOMEM);
	ERR_clear_error();
	for (;;) {
		X509 *x = PEM_read_bio_X509(bio, NULL, NULL, NULL);
		uint32_t err;

		if (!x) {
			err = ERR_peek_last_error();
			if (ERR_GET_LIB(err) == ERR_LIB_PEM &&
			    ERR_GET_REASON(err) == PEM_R_NO_START_LINE)
				break; /* no more blocks */
			set_why(why, why_len, "%s: certificate %d does not parse", what,
				count + 1);
			BIO_free(bio);
			return ssl_fail(-EINVAL);
		}
		if (!X509_STORE_add_cert(store, x)) {
			err = ERR_peek_last_error();
			if (!(ERR_GET_LIB(err) == ERR_LIB_X509 &&
			      ERR_GET_REASON(err) == X509_R_CERT_ALREADY_IN_HASH_TABLE)) {
				X509_free(x);
				BIO_free(bio);
				return ssl_fail(-ENOMEM);
			}
		}
		X509_free(x);
		count++;
	}
	BIO_free(bio);
	ERR_clear_error();
	if (count == 0) {
		set_why(why, why_len, "%s: holds no PEM certificate", what);
		return -EINVAL;
	}
	return count;
}

/* Read the system bundle: a regular file, read whole (it is read once at
 * start, before the daemon's seccomp filter). */
static int
read_roots_file(const char *path, char **data_out, size_t *len_out, char *why, size_t why_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	char *data = NULL;
	size_t got = 0;
	int rc;

	if (fd < 0) {
		rc = -errno;
		set_why(why, why_len, "system trust roots %s: %s", path, strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		set_why(why, why_len, "system trust roots %s: %s", path, strerror(-rc));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > GW_ROOTS_FILE_MAX) {
		rc = -EINVAL;
		set_why(why, why_len, "system trust roots %s: not a regular file under %d bytes",
			path, GW_ROOTS_FILE_MAX);
		goto out;
	}
	data = malloc((size_t)st.st_size + 1);
	if (!data) {
		rc = -ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, data + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			set_why(why, why_len, "system trust roots %s: %s", path, strerror(-rc));
			goto out;
		}
		if (n == 0)
			break; /* shrank underneath us: parse what is there */
		got += (size_t)n;
	}
	data[got] = '\0';
	*data_out = data;
	*len_out = got;
	data = NULL;
	rc = 0;
out:
	free(data);
	close(fd);
	return rc;
}

static int ctx_new(const char *roots_file, bool defer, const char *extra_pem,
		   size_t extra_len, SSL_CTX **out, char *why, size_t why_len);

int
gw_tls_client_ctx_new_roots(const char *roots_file, const char *extra_pem, size_t extra_len,
			    SSL_CTX **out, char *why, size_t why_len)
{
	return ctx_new(roots_file, false, extra_pem, extra_len, out, why, why_len);
}

int
gw_tls_client_ctx_new_deferred(const char *roots_file, const char *extra_pem, size_t extra_len,
			       SSL_CTX **out, char *why, size_t why_len)
{
	return ctx_new(roots_file, true, extra_pem, extra_len, out, why, why_len);
}

static int
ctx_new(const char *roots_file, bool defer, const char *extra_pem, size_t extra_len,
	SSL_CTX **out, char *why, size_t why_len)
{
	SSL_CTX *ctx;
	X509_STORE *store;
	int rc;

	*out = NULL;
	set_why(why, why_len, "%s", "");
	if (!upstream_ready())
		return ssl_fail(-ENOMEM);
	ctx = SSL_CTX_new(TLS_with_buffers_method());
	store = X509_STORE_new();
	if (!ctx || !store || !SSL_CTX_set_ex_data(ctx, ctx_store_idx, store)) {
		X509_STORE_free(store);
		SSL_CTX_free(ctx);
		return ssl_fail(-ENOMEM);
	}
	/* the context owns the store from here (free_ctx_store) */
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
	    SSL_CTX_set_alpn_protos(ctx, gw_alpn_http11, GW_ALPN_HTTP11_LEN) != 0) {
		rc = -ENOMEM;
		goto fail;
	}
	SSL_CTX_set_custom_verify(ctx, SSL_VERIFY_PEER, verify_upstream);
	SSL_CTX_set0_buffer_pool(ctx, upstream_pool);
	if (roots_file) {
		char *data = NULL;
		size_t len = 0;
		rc = read_roots_file(roots_file, &data, &len, why, why_len);
		if (rc < 0)
			goto fail;
		if (defer) {
			/* read now (before the caller's filter), parsed by gw_tls_client_roots_load */
			struct pending_roots *p = calloc(1, sizeof(*p) + strlen(roots_file) + 1);
			if (!p || !SSL_CTX_set_ex_data(ctx, ctx_roots_idx, p)) {
				free(p);
				free(data);
				rc = -ENOMEM;
				goto fail;
			}
			p->data = data;
			p->len = len;
			memcpy(p->what, roots_file, strlen(roots_file) + 1);
		} else {
			rc = add_pem_bundle(store, data, len, roots_file, why, why_len);
			free(data);
			if (rc < 0)
				goto fail;
		}
	}
	if (extra_pem) {
		rc = add_pem_bundle(store, extra_pem, extra_len, "upstream_ca", why, why_len);
		if (rc < 0)
			goto fail;
	}
	*out = ctx;
	return 0;
fail:
	SSL_CTX_free(ctx);
	return ssl_fail(rc);
}

int
gw_tls_client_ctx_new(const char *extra_pem, size_t extra_len, SSL_CTX **out, char *why,
		      size_t why_len)
{
	return gw_tls_client_ctx_new_roots(GW_SYSTEM_ROOTS, extra_pem, extra_len, out, why,
					   why_len);
}

int
gw_tls_client_prepare(SSL *ssl, const char *host, bool is_ip)
{
	struct upstream_target *target;
	uint8_t ip[16] = { 0 };
	size_t len, ip_len = 0;

	if (is_ip) {
		/* No SNI for an address (RFC 6066 §3); the peer must prove the
		 * address with an iPAddress SAN. */
		if (parse_ip(host, ip, &ip_len) < 0)
			return -EINVAL;
		len = strlen(host);
	} else if (!host_name_ok(host, &len)) {
		return -EINVAL;
	}
	if (!upstream_ready() || !gw_tls_client_store(SSL_get_SSL_CTX(ssl)) ||
	    SSL_get_ex_data(ssl, ssl_target_idx))
		return -EINVAL; /* not from gw_tls_client_ctx_new, or prepared twice */
	target = calloc(1, sizeof(*target) + len + 1);
	if (!target)
		return -ENOMEM;
	target->verify_result = X509_V_OK;
	target->is_ip = is_ip;
	memcpy(target->ip, ip, ip_len);
	target->ip_len = ip_len;
	target->host_len = len;
	memcpy(target->host, host, len + 1);
	if (!SSL_set_ex_data(ssl, ssl_target_idx, target)) {
		free(target);
		return ssl_fail(-ENOMEM);
	}
	if (!is_ip && !SSL_set_tlsext_host_name(ssl, host))
		return ssl_fail(-ENOMEM);
	SSL_set_shed_handshake_config(ssl, 1);
	return 0;
}
