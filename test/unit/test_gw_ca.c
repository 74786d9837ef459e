/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_gw_ca.c — box-gateway/ca.c: the per-box CA's fields, leaves for
 * names and IP literals (verified in-process and by the openssl CLI), the
 * bounded leaf cache, the server and upstream TLS contexts over a
 * socketpair (ALPN, SNI, hostname/IP checks, versions, resumption), strict
 * parsing of the extra trust bundle; and two measurements printed as TAP
 * comments: the time to make a leaf and the heap an idle connection keeps.
 * Trusts: nothing; it is test code. Temp files go to a mkdtemp directory.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/ec_key.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "ca.h"
#include "tap.h"

#if defined(__SANITIZE_ADDRESS__)
#define GW_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GW_UNDER_ASAN 1
#endif
#endif

static char tmpdir[64];

static X509 *
pem_to_x509(const char *pem)
{
	BIO *bio = BIO_new_mem_buf(pem, -1);
	X509 *x = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;

	BIO_free(bio);
	return x;
}

static bool
ext_critical(X509 *x, int nid)
{
	int idx = X509_get_ext_by_NID(x, nid, -1);

	return idx >= 0 && X509_EXTENSION_get_critical(X509_get_ext(x, idx));
}

static bool
ext_present(X509 *x, int nid)
{
	return X509_get_ext_by_NID(x, nid, -1) >= 0;
}

static bool
name_entry_is(X509_NAME *name, int nid, const char *want)
{
	char buf[256];
	int n = X509_NAME_get_text_by_NID(name, nid, buf, sizeof(buf));

	if (!want)
		return n < 0;
	return n >= 0 && strcmp(buf, want) == 0;
}

/* |t - (now + offset)| <= 120 s */
static bool
time_near(const ASN1_TIME *t, long offset)
{
	time_t lo = time(NULL) + offset - 120, hi = lo + 240;

	return X509_cmp_time(t, &lo) > 0 && X509_cmp_time(t, &hi) < 0;
}

/* 1 when both certificates carry the same public key. */
static int
same_key(X509 *a, X509 *b)
{
	EVP_PKEY *ka = X509_get_pubkey(a), *kb = X509_get_pubkey(b);
	int r = ka && kb ? EVP_PKEY_cmp(ka, kb) : -2;

	EVP_PKEY_free(ka);
	EVP_PKEY_free(kb);
	return r;
}

static int
key_type(X509 *x)
{
	EVP_PKEY *k = X509_get_pubkey(x);
	int id = k ? EVP_PKEY_id(k) : -1;

	EVP_PKEY_free(k);
	return id;
}

/* The leaf gw_ca_use_leaf installs, read back from an SSL before its
 * handshake (configuration is shed only after one). */
static X509 *
leaf_of(struct gw_ca *ca, const char *host, bool is_ip, int *rc_out)
{
	SSL *ssl = SSL_new(gw_ca_server_ctx(ca));
	X509 *leaf = NULL;
	int rc = ssl ? gw_ca_use_leaf(ca, ssl, host, is_ip) : -ENOMEM;

	if (rc == 0) {
		leaf = SSL_get_certificate(ssl);
		if (leaf)
			X509_up_ref(leaf);
	}
	SSL_free(ssl);
	if (rc_out)
		*rc_out = rc;
	return leaf;
}

/* X509_verify_cert against a store holding only the CA, as a TLS server
 * certificate for host (name or IP). */
static int
verify_leaf(X509 *ca_cert, X509 *leaf, const char *host, bool is_ip)
{
	X509_STORE *store = X509_STORE_new();
	X509_STORE_CTX *sctx = X509_STORE_CTX_new();
	int result = -1;

	if (!store || !sctx || !X509_STORE_add_cert(store, ca_cert) ||
	    !X509_STORE_CTX_init(sctx, store, leaf, NULL))
		goto out;
	X509_STORE_CTX_set_purpose(sctx, X509_PURPOSE_SSL_SERVER);
	if (is_ip)
		X509_VERIFY_PARAM_set1_ip_asc(X509_STORE_CTX_get0_param(sctx), host);
	else
		X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(sctx), host,
					    strlen(host));
	if (X509_verify_cert(sctx) == 1)
		result = X509_V_OK;
	else
		result = X509_STORE_CTX_get_error(sctx);
out:
	X509_STORE_CTX_free(sctx);
	X509_STORE_free(store);
	ERR_clear_error();
	return result;
}

/* The leaf's single SAN: dNSName host, or iPAddress host. */
static bool
san_is(X509 *leaf, const char *host, bool is_ip)
{
	GENERAL_NAMES *gens = X509_get_ext_d2i(leaf, NID_subject_alt_name, NULL, NULL);
	bool ok = false;

	if (!gens)
		return false;
	if (sk_GENERAL_NAME_num(gens) == 1) {
		GENERAL_NAME *gen = sk_GENERAL_NAME_value(gens, 0);
		if (is_ip && gen->type == GEN_IPADD) {
			uint8_t want[16];
			int len = strchr(host, ':') ? 16 : 4;
			ok = inet_pton(len == 16 ? AF_INET6 : AF_INET, host, want) == 1 &&
			     ASN1_STRING_length(gen->d.iPAddress) == len &&
			     memcmp(ASN1_STRING_get0_data(gen->d.iPAddress), want, len) == 0;
		} else if (!is_ip && gen->type == GEN_DNS) {
			ok = ASN1_STRING_length(gen->d.dNSName) == (int)strlen(host) &&
			     memcmp(ASN1_STRING_get0_data(gen->d.dNSName), host, strlen(host)) ==
				     0;
		}
	}
	GENERAL_NAMES_free(gens);
	return ok;
}

static void
test_ca_fields(void)
{
	struct gw_ca *ca = NULL, *other = NULL;
	X509 *x, *y;
	EVP_PKEY *pub;
	BIGNUM *serial;

	CHECK_INT(gw_ca_new_named("gwca-box1", 8, &ca), 0);
	CHECK_INT(gw_ca_new(8, &other), 0);
	if (!ca || !other)
		goto out;
	CHECK(strstr(gw_ca_cert_pem(ca), "-----BEGIN CERTIFICATE-----") != NULL);
	CHECK(strstr(gw_ca_cert_pem(ca), "PRIVATE KEY") == NULL);
	x = pem_to_x509(gw_ca_cert_pem(ca));
	y = pem_to_x509(gw_ca_cert_pem(other));
	CHECK(x != NULL && y != NULL);
	if (!x || !y)
		goto out;
	CHECK_INT(X509_get_version(x), X509_VERSION_3);
	/* basicConstraints critical CA:TRUE pathlen:0 */
	CHECK(X509_check_ca(x) == 1);
	CHECK(ext_critical(x, NID_basic_constraints));
	CHECK_INT(X509_get_pathlen(x), 0);
	/* keyUsage critical keyCertSign + cRLSign + digitalSignature, nothing else */
	CHECK(ext_critical(x, NID_key_usage));
	CHECK_INT(X509_get_key_usage(x), KU_KEY_CERT_SIGN | KU_CRL_SIGN | KU_DIGITAL_SIGNATURE);
	CHECK(X509_get0_subject_key_id(x) != NULL);
	CHECK(ext_present(x, NID_subject_key_identifier) &&
	      !ext_critical(x, NID_subject_key_identifier));
	/* ECDSA P-256, self-signed */
	pub = X509_get_pubkey(x);
	CHECK(pub && EVP_PKEY_id(pub) == EVP_PKEY_EC);
	CHECK(pub && EC_GROUP_get_curve_name(EC_KEY_get0_group(EVP_PKEY_get0_EC_KEY(pub))) ==
			     NID_X9_62_prime256v1);
	CHECK(pub && X509_verify(x, pub) == 1);
	EVP_PKEY_free(pub);
	CHECK(X509_get_signature_nid(x) == NID_ecdsa_with_SHA256);
	CHECK(name_entry_is(X509_get_subject_name(x), NID_commonName, "box egress CA"));
	CHECK(name_entry_is(X509_get_subject_name(x), NID_organizationalUnitName, "gwca-box1"));
	CHECK(name_entry_is(X509_get_subject_name(y), NID_organizationalUnitName, NULL));
	CHECK(X509_NAME_cmp(X509_get_subject_name(x), X509_get_issuer_name(x)) == 0);
	/* validity now-1h .. now+30d */
	CHECK(time_near(X509_get0_notBefore(x), -3600));
	CHECK(time_near(X509_get0_notAfter(x), 30L * 86400));
	/* positive serial of at most 128 bits, different per CA; fresh keys */
	serial = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL);
	CHECK(serial && !BN_is_negative(serial) && !BN_is_zero(serial) &&
	      BN_num_bits(serial) <= 128);
	BN_free(serial);
	CHECK(ASN1_INTEGER_cmp(X509_get0_serialNumber(x), X509_get0_serialNumber(y)) != 0);
	CHECK(same_key(x, y) == 0);
	X509_free(x);
	X509_free(y);

	/* bad arguments */
	{
		struct gw_ca *bad = (struct gw_ca *)1;
		CHECK_INT(gw_ca_new(0, &bad), -EINVAL);
		CHECK(bad == NULL);
		CHECK_INT(gw_ca_new_named("bad name", 8, &bad), -EINVAL);
		CHECK_INT(gw_ca_new_named("", 8, &bad), -EINVAL);
	}
out:
	gw_ca_free(ca);
	gw_ca_free(other);
}

static void
check_leaf(struct gw_ca *ca, X509 *ca_cert, const char *host, bool is_ip)
{
	int rc;
	X509 *leaf = leaf_of(ca, host, is_ip, &rc);
	bool has_cn = strlen(host) <= 64;

	CHECK_INT(rc, 0);
	CHECK(leaf != NULL);
	if (!leaf)
		return;
	CHECK_INT(verify_leaf(ca_cert, leaf, host, is_ip), X509_V_OK);
	CHECK(san_is(leaf, host, is_ip));
	CHECK(ext_critical(leaf, NID_subject_alt_name) == !has_cn);
	CHECK(name_entry_is(X509_get_subject_name(leaf), NID_commonName, has_cn ? host : NULL));
	CHECK(X509_NAME_cmp(X509_get_issuer_name(leaf), X509_get_subject_name(ca_cert)) == 0);
	CHECK(X509_check_ca(leaf) == 0);
	CHECK_INT(X509_get_key_usage(leaf), KU_DIGITAL_SIGNATURE);
	CHECK(ext_critical(leaf, NID_key_usage));
	CHECK_INT(X509_get_extended_key_usage(leaf), XKU_SSL_SERVER);
	CHECK(X509_get0_authority_key_id(leaf) &&
	      ASN1_OCTET_STRING_cmp(X509_get0_authority_key_id(leaf),
				    X509_get0_subject_key_id(ca_cert)) == 0);
	CHECK(key_type(leaf) == EVP_PKEY_EC);
	CHECK(same_key(leaf, ca_cert) == 0);
	CHECK(time_near(X509_get0_notBefore(leaf), -3600));
	CHECK(time_near(X509_get0_notAfter(leaf), 30L * 86400));
	/* a different name or address does not verify */
	CHECK(verify_leaf(ca_cert, leaf, is_ip ? (strchr(host, ':') ? "::2" : "10.9.9.9")
					       : "other.box.test",
			  is_ip) != X509_V_OK);
	X509_free(leaf);
}

static void
test_leaves_verify(void)
{
	struct gw_ca *ca = NULL, *other = NULL;
	X509 *ca_cert, *leaf;
	char longhost[101];
	int rc;

	CHECK_INT(gw_ca_new(16, &ca), 0);
	CHECK_INT(gw_ca_new(16, &other), 0);
	if (!ca || !other)
		goto out;
	ca_cert = pem_to_x509(gw_ca_cert_pem(ca));
	check_leaf(ca, ca_cert, "a.box.test", false);
	check_leaf(ca, ca_cert, "127.0.0.1", true);
	check_leaf(ca, ca_cert, "2001:db8::1", true);
	check_leaf(ca, ca_cert, "::1", true);
	/* longer than ub-common-name: SAN only, critical */
	memset(longhost, 'x', sizeof(longhost) - 1);
	longhost[sizeof(longhost) - 1] = '\0';
	memcpy(longhost + 91, ".box.test", 9);
	check_leaf(ca, ca_cert, longhost, false);

	/* one leaf key per CA, shared by every host */
	{
		X509 *a = leaf_of(ca, "a.box.test", false, NULL);
		X509 *b = leaf_of(ca, "b.box.test", false, NULL);
		X509 *c = leaf_of(other, "a.box.test", false, NULL);
		CHECK(a && b && c);
		if (a && b && c) {
			CHECK(same_key(a, b) == 1);
			CHECK(same_key(a, c) == 0);
			CHECK(ASN1_INTEGER_cmp(X509_get0_serialNumber(a),
					       X509_get0_serialNumber(b)) != 0);
			/* another box's leaf does not verify against this CA */
			CHECK(verify_leaf(ca_cert, c, "a.box.test", false) != X509_V_OK);
		}
		X509_free(a);
		X509_free(b);
		X509_free(c);
	}

	/* bad hosts */
	leaf = leaf_of(ca, "", false, &rc);
	CHECK_INT(rc, -EINVAL);
	leaf = leaf_of(ca, "a b.test", false, &rc);
	CHECK_INT(rc, -EINVAL);
	leaf = leaf_of(ca, "a.box.test", true, &rc);
	CHECK_INT(rc, -EINVAL);
	leaf = leaf_of(ca, "1.2.3", true, &rc); /* only the dotted-quad spelling */
	CHECK_INT(rc, -EINVAL);
	{
		char huge[300];
		memset(huge, 'a', sizeof(huge) - 1);
		huge[sizeof(huge) - 1] = '\0';
		leaf = leaf_of(ca, huge, false, &rc);
		CHECK_INT(rc, -EINVAL);
	}
	CHECK(leaf == NULL);
	X509_free(ca_cert);
out:
	gw_ca_free(ca);
	gw_ca_free(other);
}

/* --- the openssl CLI --- */

static int
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -errno;
}

static int
write_x509(const char *path, X509 *x)
{
	FILE *f = fopen(path, "we");
	int ok;

	if (!f)
		return -errno;
	ok = PEM_write_X509(f, x);
	return (fclose(f) == 0 && ok) ? 0 : -EIO;
}

/* Run `openssl verify ...`; returns its exit status; its output goes to a
 * file printed as comments when want_ok does not match. */
static int
openssl_verify(const char *ca_path, const char *leaf_path, const char *check_flag,
	       const char *check_value, bool want_ok)
{
	char out_path[128];
	pid_t pid;
	int status;

	snprintf(out_path, sizeof(out_path), "%s/openssl.out", tmpdir);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execlp("openssl", "openssl", "verify", "-x509_strict", "-purpose", "sslserver",
		       "-CAfile", ca_path, check_flag, check_value, leaf_path, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
	if ((status == 0) != want_ok) {
		FILE *f = fopen(out_path, "re");
		char line[512];
		while (f && fgets(line, sizeof(line), f))
			printf("#   openssl: %s", line);
		if (f)
			fclose(f);
	}
	return status;
}

static bool
have_openssl_cli(void)
{
	return system("openssl version >/dev/null 2>&1") == 0;
}

static void
test_openssl_cli_verifies(void)
{
	static const struct {
		const char *host;
		bool is_ip;
		const char *wrong;
	} cases[] = {
		{ "a.box.test", false, "b.box.test" },
		{ "127.0.0.1", true, "127.0.0.2" },
		{ "2001:db8::1", true, "2001:db8::2" },
	};
	struct gw_ca *ca = NULL, *other = NULL;
	char ca_path[128], other_path[128], leaf_path[128];

	if (!have_openssl_cli()) {
		SKIP("the openssl command is not installed");
		return;
	}
	CHECK_INT(gw_ca_new(4, &ca), 0);
	CHECK_INT(gw_ca_new(4, &other), 0);
	if (!ca || !other)
		goto out;
	snprintf(ca_path, sizeof(ca_path), "%s/ca.pem", tmpdir);
	snprintf(other_path, sizeof(other_path), "%s/other-ca.pem", tmpdir);
	snprintf(leaf_path, sizeof(leaf_path), "%s/leaf.pem", tmpdir);
	CHECK_INT(write_file(ca_path, gw_ca_cert_pem(ca)), 0);
	CHECK_INT(write_file(other_path, gw_ca_cert_pem(other)), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *flag = cases[i].is_ip ? "-verify_ip" : "-verify_hostname";
		X509 *leaf = leaf_of(ca, cases[i].host, cases[i].is_ip, NULL);
		CHECK(leaf != NULL);
		if (!leaf)
			continue;
		CHECK_INT(write_x509(leaf_path, leaf), 0);
		CHECK_INT(openssl_verify(ca_path, leaf_path, flag, cases[i].host, true), 0);
		/* not vacuous: the wrong CA or the wrong name fails */
		CHECK(openssl_verify(other_path, leaf_path, flag, cases[i].host, false) != 0);
		CHECK(openssl_verify(ca_path, leaf_path, flag, cases[i].wrong, false) != 0);
		X509_free(leaf);
	}
	unlink(leaf_path);
	unlink(other_path);
	unlink(ca_path);
	{
		char out_path[128];
		snprintf(out_path, sizeof(out_path), "%s/openssl.out", tmpdir);
		unlink(out_path);
	}
out:
	gw_ca_free(ca);
	gw_ca_free(other);
}

/* --- handshakes over a socketpair --- */

struct tls_pair {
	int fds[2];
	SSL *server, *client;
};

static void
pair_free(struct tls_pair *p)
{
	SSL_free(p->server);
	SSL_free(p->client);
	if (p->fds[0] >= 0)
		close(p->fds[0]);
	if (p->fds[1] >= 0)
		close(p->fds[1]);
	p->server = p->client = NULL;
	p->fds[0] = p->fds[1] = -1;
}

/* Server on fds[0] with the leaf for server_host; client on fds[1]
 * prepared for client_host. */
static int
pair_new(struct tls_pair *p, struct gw_ca *ca, SSL_CTX *client_ctx, const char *server_host,
	 bool server_is_ip, const char *client_host, bool client_is_ip)
{
	p->server = p->client = NULL;
	p->fds[0] = p->fds[1] = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, p->fds) < 0)
		return -errno;
	p->server = SSL_new(gw_ca_server_ctx(ca));
	p->client = SSL_new(client_ctx);
	if (!p->server || !p->client)
		return -ENOMEM;
	if (gw_ca_use_leaf(ca, p->server, server_host, server_is_ip) < 0 ||
	    gw_tls_client_prepare(p->client, client_host, client_is_ip) < 0)
		return -EINVAL;
	SSL_set_fd(p->server, p->fds[0]);
	SSL_set_fd(p->client, p->fds[1]);
	SSL_set_accept_state(p->server);
	SSL_set_connect_state(p->client);
	return 0;
}

/* Step both handshakes until both finish (0) or one fails (-1). */
static int
pair_handshake(struct tls_pair *p)
{
	bool server_done = false, client_done = false;

	for (int i = 0; i < 64 && !(server_done && client_done); i++) {
		if (!client_done) {
			int r = SSL_do_handshake(p->client);
			if (r == 1)
				client_done = true;
			else if (SSL_get_error(p->client, r) != SSL_ERROR_WANT_READ)
				return -1;
		}
		if (!server_done) {
			int r = SSL_do_handshake(p->server);
			if (r == 1)
				server_done = true;
			else if (SSL_get_error(p->server, r) != SSL_ERROR_WANT_READ)
				return -1;
		}
	}
	return server_done && client_done ? 0 : -1;
}

/* Read exactly len bytes from `from`, stepping `other` (for post-handshake
 * messages) in between. */
static int
pair_read(SSL *from, char *buf, size_t len)
{
	size_t got = 0;

	for (int i = 0; i < 64 && got < len; i++) {
		int r = SSL_read(from, buf + got, (int)(len - got));
		if (r > 0)
			got += (size_t)r;
		else if (SSL_get_error(from, r) != SSL_ERROR_WANT_READ)
			return -1;
	}
	return got == len ? 0 : -1;
}

/* One request and one response, as an HTTP/1.1 exchange would; leaves
 * both sides idle with nothing buffered. */
static int
pair_exchange(struct tls_pair *p)
{
	static const char req[] = "GET / HTTP/1.1\r\nHost: a.box.test\r\n\r\n";
	static const char resp[] = "HTTP/1.1 204 No Content\r\n\r\n";
	char buf[128];

	if (SSL_write(p->client, req, sizeof(req) - 1) != (int)sizeof(req) - 1 ||
	    pair_read(p->server, buf, sizeof(req) - 1) < 0 ||
	    memcmp(buf, req, sizeof(req) - 1) != 0 ||
	    SSL_write(p->server, resp, sizeof(resp) - 1) != (int)sizeof(resp) - 1 ||
	    pair_read(p->client, buf, sizeof(resp) - 1) < 0 ||
	    memcmp(buf, resp, sizeof(resp) - 1) != 0)
		return -1;
	return 0;
}

static bool
alpn_is(SSL *ssl, const char *want)
{
	const uint8_t *proto;
	unsigned len;

	SSL_get0_alpn_selected(ssl, &proto, &len);
	if (!want)
		return len == 0;
	return len == strlen(want) && memcmp(proto, want, len) == 0;
}

static SSL_CTX *
client_ctx_trusting(struct gw_ca *ca)
{
	const char *pem = gw_ca_cert_pem(ca);
	SSL_CTX *ctx = NULL;
	char why[256];
	int rc = gw_tls_client_ctx_new(pem, strlen(pem), &ctx, why, sizeof(why));

	if (rc < 0)
		printf("#   gw_tls_client_ctx_new: %d %s\n", rc, why);
	return ctx;
}

static bool
have_system_roots(void)
{
	return access(GW_SYSTEM_ROOTS, R_OK) == 0;
}

static void
test_handshake_name(void)
{
	struct gw_ca *ca = NULL;
	SSL_CTX *cctx = NULL;
	struct tls_pair p = { .fds = { -1, -1 } };

	if (!have_system_roots()) {
		SKIP(GW_SYSTEM_ROOTS " is absent (ca-certificates not installed)");
		return;
	}
	CHECK_INT(gw_ca_new(8, &ca), 0);
	cctx = ca ? client_ctx_trusting(ca) : NULL;
	CHECK(cctx != NULL);
	if (!cctx)
		goto out;
	CHECK_INT(pair_new(&p, ca, cctx, "a.box.test", false, "a.box.test", false), 0);
	CHECK_INT(pair_handshake(&p), 0);
	CHECK_INT(gw_tls_client_verify_result(p.client), X509_V_OK);
	CHECK(alpn_is(p.server, "http/1.1"));
	CHECK(alpn_is(p.client, "http/1.1"));
	CHECK_STR(SSL_get_servername(p.server, TLSEXT_NAMETYPE_host_name), "a.box.test");
	CHECK_INT(SSL_version(p.client), TLS1_3_VERSION);
	CHECK_INT(pair_exchange(&p), 0);
	/* the SNI is still readable once the handshake config is shed */
	CHECK_STR(SSL_get_servername(p.server, TLSEXT_NAMETYPE_host_name), "a.box.test");
	/* the client saw the chain [leaf, CA] */
	{
		const STACK_OF(CRYPTO_BUFFER) *chain = SSL_get0_peer_certificates(p.client);
		CHECK(chain && sk_CRYPTO_BUFFER_num(chain) == 2);
	}
	pair_free(&p);

	/* the wrong name fails verification */
	CHECK_INT(pair_new(&p, ca, cctx, "a.box.test", false, "b.box.test", false), 0);
	CHECK_INT(pair_handshake(&p), -1);
	CHECK_INT(gw_tls_client_verify_result(p.client), X509_V_ERR_HOSTNAME_MISMATCH);
	ERR_clear_error();
	pair_free(&p);

	/* a client offering only h2 gets no ALPN, and still connects */
	CHECK_INT(pair_new(&p, ca, cctx, "a.box.test", false, "a.box.test", false), 0);
	CHECK_INT(SSL_set_alpn_protos(p.client, (const uint8_t *)"\x02h2", 3), 0);
	CHECK_INT(pair_handshake(&p), 0);
	CHECK(alpn_is(p.server, NULL));
	CHECK(alpn_is(p.client, NULL));
	pair_free(&p);

	/* h2 and http/1.1 offered: http/1.1 chosen */
	CHECK_INT(pair_new(&p, ca, cctx, "a.box.test", false, "a.box.test", false), 0);
	CHECK_INT(SSL_set_alpn_protos(p.client, (const uint8_t *)"\x02h2\x08http/1.1", 12), 0);
	CHECK_INT(pair_handshake(&p), 0);
	CHECK(alpn_is(p.server, "http/1.1"));
	pair_free(&p);

	/* TLS 1.2 works; TLS 1.1 is refused */
	CHECK_INT(pair_new(&p, ca, cctx, "a.box.test", false, "a.box.test", false), 0);
	SSL_set_max_proto_version(p.client, TLS1_2_VERSION);
	CHECK_INT(pair_handshake(&p), 0);
	CHECK_INT(SSL_version(p.server), TLS1_2_VERSION);
	CHECK(alpn_is(p.server, "http/1.1"));
	CHECK_INT(pair_exchange(&p), 0);
	pair_free(&p);
	CHECK_INT(pair_new(&p, ca, cctx, "a.box.test", false, "a.box.test", false), 0);
	SSL_set_min_proto_version(p.client, TLS1_1_VERSION);
	SSL_set_max_proto_version(p.client, TLS1_1_VERSION);
	CHECK_INT(pair_handshake(&p), -1);
	ERR_clear_error();
	pair_free(&p);
out:
	pair_free(&p);
	SSL_CTX_free(cctx);
	gw_ca_free(ca);
}

/* Roots whose parse was deferred are parsed by the first verification: the CA only there. */
static void
test_handshake_deferred(void)
{
	struct gw_ca *ca = NULL;
	SSL_CTX *cctx = NULL;
	struct tls_pair p = { .fds = { -1, -1 } };
	char path[128], why[256];

	CHECK_INT(gw_ca_new(2, &ca), 0);
	if (!ca)
		return;
	snprintf(path, sizeof(path), "%s/deferred-roots.crt", tmpdir);
	CHECK_INT(write_file(path, gw_ca_cert_pem(ca)), 0);
	CHECK_INT(gw_tls_client_ctx_new_deferred(path, NULL, 0, &cctx, why, sizeof(why)), 0);
	unlink(path);
	if (!cctx)
		goto out;
	CHECK_INT(pair_new(&p, ca, cctx, "a.box.test", false, "a.box.test", false), 0);
	CHECK_INT(pair_handshake(&p), 0);
	CHECK_INT(gw_tls_client_verify_result(p.client), X509_V_OK);
	pair_free(&p);
	SSL_CTX_free(cctx);
	cctx = NULL;
	/* deferred roots that do not parse: no upstream connection is even prepared */
	CHECK_INT(write_file(path, "no certificate here\n"), 0);
	CHECK_INT(gw_tls_client_ctx_new_deferred(path, gw_ca_cert_pem(ca),
						 strlen(gw_ca_cert_pem(ca)), &cctx, why, sizeof(why)),
		  0);
	unlink(path);
	if (!cctx)
		goto out;
	CHECK_INT(pair_new(&p, ca, cctx, "a.box.test", false, "a.box.test", false), -EINVAL);
	ERR_clear_error();
out:
	pair_free(&p);
	SSL_CTX_free(cctx);
	gw_ca_free(ca);
}

static void
test_handshake_ip(void)
{
	static const char *const hosts[][2] = {
		{ "127.0.0.1", "127.0.0.2" },
		{ "::1", "::2" },
	};
	struct gw_ca *ca = NULL;
	SSL_CTX *cctx = NULL;
	struct tls_pair p = { .fds = { -1, -1 } };

	if (!have_system_roots()) {
		SKIP(GW_SYSTEM_ROOTS " is absent (ca-certificates not installed)");
		return;
	}
	CHECK_INT(gw_ca_new(8, &ca), 0);
	cctx = ca ? client_ctx_trusting(ca) : NULL;
	CHECK(cctx != NULL);
	if (!cctx)
		goto out;
	for (size_t i = 0; i < 2; i++) {
		CHECK_INT(pair_new(&p, ca, cctx, hosts[i][0], true, hosts[i][0], true), 0);
		CHECK_INT(pair_handshake(&p), 0);
		CHECK_INT(gw_tls_client_verify_result(p.client), X509_V_OK);
		/* no SNI for an address */
		CHECK(SSL_get_servername(p.server, TLSEXT_NAMETYPE_host_name) == NULL);
		CHECK(alpn_is(p.server, "http/1.1"));
		pair_free(&p);
		CHECK_INT(pair_new(&p, ca, cctx, hosts[i][0], true, hosts[i][1], true), 0);
		CHECK_INT(pair_handshake(&p), -1);
		CHECK_INT(gw_tls_client_verify_result(p.client), X509_V_ERR_IP_ADDRESS_MISMATCH);
		ERR_clear_error();
		pair_free(&p);
	}
	/* a name check does not accept an IP leaf and vice versa */
	CHECK_INT(pair_new(&p, ca, cctx, "a.box.test", false, "127.0.0.1", true), 0);
	CHECK_INT(pair_handshake(&p), -1);
	ERR_clear_error();
	pair_free(&p);
	{
		SSL *c = SSL_new(cctx);
		CHECK_INT(gw_tls_client_prepare(c, "not an ip", true), -EINVAL);
		CHECK_INT(gw_tls_client_prepare(c, "bad host!", false), -EINVAL);
		SSL_free(c);
	}
out:
	pair_free(&p);
	SSL_CTX_free(cctx);
	gw_ca_free(ca);
}

/* The system roots alone do not trust a box CA. */
static void
test_system_roots_alone_refuse(void)
{
	struct gw_ca *ca = NULL;
	SSL_CTX *cctx = NULL;
	struct tls_pair p = { .fds = { -1, -1 } };
	char why[256];

	if (!have_system_roots()) {
		SKIP(GW_SYSTEM_ROOTS " is absent (ca-certificates not installed)");
		return;
	}
	CHECK_INT(gw_ca_new(8, &ca), 0);
	CHECK_INT(gw_tls_client_ctx_new(NULL, 0, &cctx, why, sizeof(why)), 0);
	if (!ca || !cctx)
		goto out;
	CHECK(gw_tls_client_store(cctx) &&
	      sk_X509_OBJECT_num(X509_STORE_get0_objects(gw_tls_client_store(cctx))) > 50);
	CHECK_INT(pair_new(&p, ca, cctx, "a.box.test", false, "a.box.test", false), 0);
	CHECK_INT(pair_handshake(&p), -1);
	/* the chain ends in the box CA, which no system root vouches for */
	CHECK_INT(gw_tls_client_verify_result(p.client), X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN);
	ERR_clear_error();
out:
	pair_free(&p);
	SSL_CTX_free(cctx);
	gw_ca_free(ca);
}

static SSL_SESSION *saved_session;

static int
save_session(SSL *ssl, SSL_SESSION *session)
{
	if (saved_session)
		SSL_SESSION_free(saved_session);
	saved_session = session; /* takes the reference */
	return 1;
}

/* Stateless tickets: a second connection resumes (both TLS versions),
 * and the server reads the new SNI. */
static void
test_resumption(void)
{
	static const uint16_t versions[] = { TLS1_3_VERSION, TLS1_2_VERSION };
	struct gw_ca *ca = NULL;
	SSL_CTX *cctx = NULL;
	struct tls_pair p = { .fds = { -1, -1 } };

	if (!have_system_roots()) {
		SKIP(GW_SYSTEM_ROOTS " is absent (ca-certificates not installed)");
		return;
	}
	CHECK_INT(gw_ca_new(8, &ca), 0);
	cctx = ca ? client_ctx_trusting(ca) : NULL;
	if (!cctx)
		goto out;
	SSL_CTX_set_session_cache_mode(cctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
	SSL_CTX_sess_set_new_cb(cctx, save_session);
	for (size_t i = 0; i < 2; i++) {
		SSL_CTX_set_max_proto_version(cctx, versions[i]);
		CHECK_INT(pair_new(&p, ca, cctx, "a.box.test", false, "a.box.test", false), 0);
		CHECK_INT(pair_handshake(&p), 0);
		CHECK_INT(pair_exchange(&p), 0);
		CHECK(!SSL_session_reused(p.client));
		pair_free(&p);
		CHECK(saved_session != NULL);
		CHECK_INT(pair_new(&p, ca, cctx, "a.box.test", false, "a.box.test", false), 0);
		if (saved_session)
			SSL_set_session(p.client, saved_session);
		CHECK_INT(pair_handshake(&p), 0);
		CHECK(SSL_session_reused(p.client));
		CHECK(SSL_session_reused(p.server));
		CHECK_STR(SSL_get_servername(p.server, TLSEXT_NAMETYPE_host_name), "a.box.test");
		CHECK(alpn_is(p.server, "http/1.1"));
		CHECK_INT(pair_exchange(&p), 0);
		pair_free(&p);
		SSL_SESSION_free(saved_session);
		saved_session = NULL;
	}
out:
	pair_free(&p);
	SSL_CTX_free(cctx);
	gw_ca_free(ca);
}

/* --- the upstream verifier against chains the CA would never make --- */

static EVP_PKEY *
test_key(void)
{
	EC_KEY *ec = EC_KEY_new_by_curve_name(NID_X9_62_prime256v1);
	EVP_PKEY *k = EVP_PKEY_new();

	EC_KEY_generate_key(ec);
	EVP_PKEY_assign_EC_KEY(k, ec);
	return k;
}

/* A certificate for key, signed by issuer_key (self-signed when issuer is
 * NULL), with the extensions given as openssl config strings. */
static X509 *
test_cert(const char *cn, EVP_PKEY *key, X509 *issuer, EVP_PKEY *issuer_key, long from,
	  long to, const char *bc, const char *eku, const char *san)
{
	X509 *x = X509_new();
	X509V3_CTX v3;
	const struct {
		int nid;
		const char *value;
	} exts[] = {
		{ NID_basic_constraints, bc },
		{ NID_ext_key_usage, eku },
		{ NID_subject_alt_name, san },
	};
	uint8_t serial = (uint8_t)(rand() | 1);

	X509_set_version(x, X509_VERSION_3);
	ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
	X509_NAME_add_entry_by_NID(X509_get_subject_name(x), NID_commonName, MBSTRING_UTF8,
				   (const uint8_t *)cn, -1, -1, 0);
	X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer)
				       : X509_get_subject_name(x));
	X509_gmtime_adj(X509_getm_notBefore(x), from);
	X509_gmtime_adj(X509_getm_notAfter(x), to);
	X509_set_pubkey(x, key);
	X509V3_set_ctx(&v3, issuer ? issuer : x, x, NULL, NULL, 0);
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		if (!exts[i].value)
			continue;
		X509_EXTENSION *e = X509V3_EXT_nconf_nid(NULL, &v3, exts[i].nid, exts[i].value);
		CHECK(e != NULL);
		if (e)
			X509_add_ext(x, e, -1);
		X509_EXTENSION_free(e);
	}
	CHECK(X509_sign(x, issuer_key, EVP_sha256()) > 0);
	return x;
}

static CRYPTO_BUFFER *
test_buffer(X509 *x)
{
	uint8_t *der = NULL;
	int len = i2d_X509(x, &der);
	CRYPTO_BUFFER *b = CRYPTO_BUFFER_new(der, (size_t)len, NULL);

	OPENSSL_free(der);
	return b;
}

/* A handshake where the server presents chain[0..n) with key; the client
 * trusts root and is prepared for host. Returns the verify result. */
static long
handshake_chain(X509 *root, X509 **chain, size_t n, EVP_PKEY *key, const char *host,
		bool *ok)
{
	struct gw_ca *ca = NULL;
	SSL_CTX *cctx = NULL;
	struct tls_pair p = { .fds = { -1, -1 } };
	CRYPTO_BUFFER *bufs[4];
	long result = -1;
	BIO *bio = BIO_new(BIO_s_mem());
	const uint8_t *data;
	size_t len;
	char why[256];

	*ok = false;
	PEM_write_bio_X509(bio, root);
	BIO_mem_contents(bio, &data, &len);
	CHECK_INT(gw_ca_new(2, &ca), 0);
	CHECK_INT(gw_tls_client_ctx_new_roots(NULL, (const char *)data, len, &cctx, why,
					      sizeof(why)),
		  0);
	if (!ca || !cctx)
		goto out;
	CHECK_INT(pair_new(&p, ca, cctx, "placeholder.box.test", false, host, false), 0);
	for (size_t i = 0; i < n; i++)
		bufs[i] = test_buffer(chain[i]);
	CHECK(SSL_set_chain_and_key(p.server, bufs, n, key, NULL) == 1);
	for (size_t i = 0; i < n; i++)
		CRYPTO_BUFFER_free(bufs[i]);
	*ok = pair_handshake(&p) == 0;
	result = gw_tls_client_verify_result(p.client);
	ERR_clear_error();
out:
	pair_free(&p);
	SSL_CTX_free(cctx);
	gw_ca_free(ca);
	BIO_free(bio);
	return result;
}

static void
test_upstream_verifier(void)
{
	EVP_PKEY *root_key = test_key(), *mid_key = test_key(), *leaf_key = test_key();
	X509 *root = test_cert("gwca test root", root_key, NULL, root_key, -3600, 86400,
			       "critical,CA:TRUE", NULL, NULL);
	X509 *mid = test_cert("gwca test intermediate", mid_key, root, root_key, -3600, 86400,
			      "critical,CA:TRUE", NULL, NULL);
	X509 *not_ca = test_cert("gwca not a CA", mid_key, root, root_key, -3600, 86400,
				 "critical,CA:FALSE", "serverAuth", "DNS:mid.box.test");
	X509 *good, *chain[3];
	bool ok;

	/* a normal chain root -> intermediate -> leaf verifies */
	good = test_cert("u.box.test", leaf_key, mid, mid_key, -3600, 86400, "CA:FALSE",
			 "serverAuth", "DNS:u.box.test");
	chain[0] = good;
	chain[1] = mid;
	CHECK_INT(handshake_chain(root, chain, 2, leaf_key, "u.box.test", &ok), X509_V_OK);
	CHECK(ok);
	/* a wildcard matches one label */
	X509_free(good);
	good = test_cert("*.box.test", leaf_key, mid, mid_key, -3600, 86400, "CA:FALSE",
			 "serverAuth", "DNS:*.box.test");
	chain[0] = good;
	CHECK_INT(handshake_chain(root, chain, 2, leaf_key, "w.box.test", &ok), X509_V_OK);
	CHECK(ok);
	CHECK_INT(handshake_chain(root, chain, 2, leaf_key, "a.w.box.test", &ok),
		  X509_V_ERR_HOSTNAME_MISMATCH);
	CHECK(!ok);
	X509_free(good);
	/* the missing intermediate */
	good = test_cert("u.box.test", leaf_key, mid, mid_key, -3600, 86400, "CA:FALSE",
			 "serverAuth", "DNS:u.box.test");
	chain[0] = good;
	CHECK_INT(handshake_chain(root, chain, 1, leaf_key, "u.box.test", &ok),
		  X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
	CHECK(!ok);
	X509_free(good);
	/* a CA:FALSE certificate acting as an intermediate */
	good = test_cert("u.box.test", leaf_key, not_ca, mid_key, -3600, 86400, "CA:FALSE",
			 "serverAuth", "DNS:u.box.test");
	chain[0] = good;
	chain[1] = not_ca;
	CHECK_INT(handshake_chain(root, chain, 2, leaf_key, "u.box.test", &ok),
		  X509_V_ERR_INVALID_CA);
	CHECK(!ok);
	X509_free(good);
	/* a client-auth-only leaf is not a server certificate */
	good = test_cert("u.box.test", leaf_key, mid, mid_key, -3600, 86400, "CA:FALSE",
			 "clientAuth", "DNS:u.box.test");
	chain[0] = good;
	chain[1] = mid;
	CHECK_INT(handshake_chain(root, chain, 2, leaf_key, "u.box.test", &ok),
		  X509_V_ERR_INVALID_PURPOSE);
	CHECK(!ok);
	X509_free(good);
	/* expired */
	good = test_cert("u.box.test", leaf_key, mid, mid_key, -7200, -3600, "CA:FALSE",
			 "serverAuth", "DNS:u.box.test");
	chain[0] = good;
	CHECK_INT(handshake_chain(root, chain, 2, leaf_key, "u.box.test", &ok),
		  X509_V_ERR_CERT_HAS_EXPIRED);
	CHECK(!ok);
	X509_free(good);
	/* the name only in the CN: no fallback */
	good = test_cert("u.box.test", leaf_key, mid, mid_key, -3600, 86400, "CA:FALSE",
			 "serverAuth", NULL);
	chain[0] = good;
	CHECK_INT(handshake_chain(root, chain, 2, leaf_key, "u.box.test", &ok),
		  X509_V_ERR_HOSTNAME_MISMATCH);
	CHECK(!ok);
	X509_free(good);

	X509_free(not_ca);
	X509_free(mid);
	X509_free(root);
	EVP_PKEY_free(leaf_key);
	EVP_PKEY_free(mid_key);
	EVP_PKEY_free(root_key);
}

/* An upstream SSL never prepared, or prepared wrongly, fails closed. */
static void
test_upstream_unprepared(void)
{
	struct gw_ca *ca = NULL;
	SSL_CTX *cctx = NULL;
	struct tls_pair p = { .fds = { -1, -1 } };
	const char *pem;
	char why[256];

	CHECK_INT(gw_ca_new(2, &ca), 0);
	if (!ca)
		return;
	pem = gw_ca_cert_pem(ca);
	CHECK_INT(gw_tls_client_ctx_new_roots(NULL, pem, strlen(pem), &cctx, why, sizeof(why)),
		  0);
	if (!cctx)
		goto out;
	CHECK_INT(pair_new(&p, ca, cctx, "a.box.test", false, "a.box.test", false), 0);
	/* a second prepare is refused */
	CHECK_INT(gw_tls_client_prepare(p.client, "b.box.test", false), -EINVAL);
	pair_free(&p);
	/* a server-side SSL is not an upstream one */
	{
		SSL *s = SSL_new(gw_ca_server_ctx(ca));
		CHECK_INT(gw_tls_client_prepare(s, "a.box.test", false), -EINVAL);
		SSL_free(s);
	}
	/* never prepared: the handshake fails */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, p.fds) == 0) {
		p.server = SSL_new(gw_ca_server_ctx(ca));
		p.client = SSL_new(cctx);
		CHECK_INT(gw_ca_use_leaf(ca, p.server, "a.box.test", false), 0);
		SSL_set_fd(p.server, p.fds[0]);
		SSL_set_fd(p.client, p.fds[1]);
		SSL_set_accept_state(p.server);
		SSL_set_connect_state(p.client);
		CHECK_INT(pair_handshake(&p), -1);
		CHECK_INT(gw_tls_client_verify_result(p.client),
			  X509_V_ERR_APPLICATION_VERIFICATION);
		ERR_clear_error();
	}
out:
	pair_free(&p);
	SSL_CTX_free(cctx);
	gw_ca_free(ca);
}

/* --- the cache --- */

static void
use_host(struct gw_ca *ca, const char *host)
{
	SSL *ssl = SSL_new(gw_ca_server_ctx(ca));

	CHECK_INT(gw_ca_use_leaf(ca, ssl, host, false), 0);
	SSL_free(ssl);
}

static void
test_cache_bound(void)
{
	struct gw_ca *ca = NULL;
	struct gw_ca_stats st;
	char host[32];

	CHECK_INT(gw_ca_new(3, &ca), 0);
	if (!ca)
		return;
	/* max + 1 hosts: the first is evicted and re-made */
	for (int i = 0; i < 4; i++) {
		snprintf(host, sizeof(host), "h%d.box.test", i);
		use_host(ca, host);
	}
	gw_ca_stats(ca, &st);
	CHECK_INT(st.leaves_made, 4);
	CHECK_INT(st.leaves_cached, 3);
	CHECK_INT(st.leaves_evicted, 1);
	use_host(ca, "h0.box.test");
	gw_ca_stats(ca, &st);
	CHECK_INT(st.leaves_made, 5);
	CHECK_INT(st.leaf_hits, 0);
	/* now cached: h2 h3 h0 (h1 evicted); a hit moves h2 to the front */
	use_host(ca, "h2.box.test");
	use_host(ca, "h0.box.test");
	gw_ca_stats(ca, &st);
	CHECK_INT(st.leaves_made, 5);
	CHECK_INT(st.leaf_hits, 2);
	/* h3 is now the least recently used: a new host evicts it, not h2 */
	use_host(ca, "h4.box.test");
	use_host(ca, "h2.box.test");
	gw_ca_stats(ca, &st);
	CHECK_INT(st.leaves_made, 6);
	CHECK_INT(st.leaf_hits, 3);
	use_host(ca, "h3.box.test");
	gw_ca_stats(ca, &st);
	CHECK_INT(st.leaves_made, 7);
	CHECK_INT(st.leaves_cached, 3);
	/* a name and the same text as an IP are different entries */
	{
		SSL *ssl = SSL_new(gw_ca_server_ctx(ca));
		CHECK_INT(gw_ca_use_leaf(ca, ssl, "127.0.0.1", true), 0);
		CHECK_INT(gw_ca_use_leaf(ca, ssl, "127.0.0.1", true), 0);
		SSL_free(ssl);
		gw_ca_stats(ca, &st);
		CHECK_INT(st.leaves_made, 8);
		CHECK_INT(st.leaf_hits, 4);
	}
	gw_ca_free(ca);
}

/* A leaf evicted from the cache while an SSL holds it stays valid. */
static void
test_evicted_leaf_still_served(void)
{
	struct gw_ca *ca = NULL;
	SSL_CTX *cctx = NULL;
	struct tls_pair p = { .fds = { -1, -1 } };
	struct gw_ca_stats st;

	if (!have_system_roots()) {
		SKIP(GW_SYSTEM_ROOTS " is absent (ca-certificates not installed)");
		return;
	}
	CHECK_INT(gw_ca_new(1, &ca), 0);
	cctx = ca ? client_ctx_trusting(ca) : NULL;
	if (!cctx)
		goto out;
	CHECK_INT(pair_new(&p, ca, cctx, "a.box.test", false, "a.box.test", false), 0);
	use_host(ca, "b.box.test");
	use_host(ca, "c.box.test");
	gw_ca_stats(ca, &st);
	CHECK_INT(st.leaves_evicted, 2);
	CHECK_INT(pair_handshake(&p), 0);
	CHECK_INT(gw_tls_client_verify_result(p.client), X509_V_OK);
out:
	pair_free(&p);
	SSL_CTX_free(cctx);
	gw_ca_free(ca);
}

/* --- the extra bundle and the roots file --- */

static void
test_extra_bundle_strict(void)
{
	static const char bad_block[] = "-----BEGIN CERTIFICATE-----\n"
					"AAAAAAAA\n"
					"-----END CERTIFICATE-----\n";
	static const char key_only[] = "-----BEGIN PRIVATE KEY-----\n"
				       "AAAAAAAA\n"
				       "-----END PRIVATE KEY-----\n";
	struct gw_ca *ca = NULL;
	SSL_CTX *ctx = NULL;
	char why[256], path[128], *two = NULL;
	const char *pem;

	CHECK_INT(gw_ca_new(2, &ca), 0);
	if (!ca)
		return;
	pem = gw_ca_cert_pem(ca);

	/* no system roots, so these need no ca-certificates */
	CHECK_INT(gw_tls_client_ctx_new_roots(NULL, "", 0, &ctx, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "upstream_ca") && strstr(why, "no PEM certificate"));
	CHECK(ctx == NULL);
	CHECK_INT(gw_tls_client_ctx_new_roots(NULL, "garbage\n", 8, &ctx, why, sizeof(why)),
		  -EINVAL);
	CHECK(strstr(why, "no PEM certificate") != NULL);
	CHECK_INT(gw_tls_client_ctx_new_roots(NULL, key_only, strlen(key_only), &ctx, why,
					      sizeof(why)),
		  -EINVAL);
	CHECK_INT(gw_tls_client_ctx_new_roots(NULL, bad_block, strlen(bad_block), &ctx, why,
					      sizeof(why)),
		  -EINVAL);
	CHECK(strstr(why, "certificate 1 does not parse") != NULL);
	/* a good certificate followed by a broken one is still refused */
	two = malloc(strlen(pem) + sizeof(bad_block));
	strcpy(two, pem);
	strcat(two, bad_block);
	CHECK_INT(gw_tls_client_ctx_new_roots(NULL, two, strlen(two), &ctx, why, sizeof(why)),
		  -EINVAL);
	CHECK(strstr(why, "certificate 2 does not parse") != NULL);
	/* the same certificate twice, with text around it, is fine */
	free(two);
	two = malloc(2 * strlen(pem) + 32);
	sprintf(two, "# comment\n%s%s", pem, pem);
	CHECK_INT(gw_tls_client_ctx_new_roots(NULL, two, strlen(two), &ctx, why, sizeof(why)),
		  0);
	SSL_CTX_free(ctx);
	ctx = NULL;
	/* the length is honoured: a prefix without the END line does not parse */
	CHECK_INT(gw_tls_client_ctx_new_roots(NULL, pem, strlen(pem) - 30, &ctx, why,
					      sizeof(why)),
		  -EINVAL);

	/* a missing roots file is an error naming it */
	CHECK_INT(gw_tls_client_ctx_new_roots("/nonexistent/gwca-roots.crt", pem, strlen(pem),
					      &ctx, why, sizeof(why)),
		  -ENOENT);
	CHECK(strstr(why, "/nonexistent/gwca-roots.crt") != NULL);
	/* a directory, or a file without certificates */
	CHECK_INT(gw_tls_client_ctx_new_roots(tmpdir, pem, strlen(pem), &ctx, why, sizeof(why)),
		  -EINVAL);
	CHECK(strstr(why, tmpdir) != NULL);
	snprintf(path, sizeof(path), "%s/empty-roots.crt", tmpdir);
	CHECK_INT(write_file(path, ""), 0);
	CHECK_INT(gw_tls_client_ctx_new_roots(path, pem, strlen(pem), &ctx, why, sizeof(why)),
		  -EINVAL);
	CHECK(strstr(why, path) && strstr(why, "no PEM certificate"));
	/* a roots file holding the CA is read */
	CHECK_INT(write_file(path, pem), 0);
	CHECK_INT(gw_tls_client_ctx_new_roots(path, NULL, 0, &ctx, why, sizeof(why)), 0);
	SSL_CTX_free(ctx);
	ctx = NULL;
	/* deferred: read now, parsed by gw_tls_client_roots_load (once: then a no-op) */
	CHECK_INT(gw_tls_client_ctx_new_deferred(path, NULL, 0, &ctx, why, sizeof(why)), 0);
	unlink(path); /* (read already) */
	CHECK_INT(gw_tls_client_roots_load(ctx, why, sizeof(why)), 0);
	CHECK(ctx && gw_tls_client_store(ctx) != NULL);
	CHECK_INT(gw_tls_client_roots_load(ctx, why, sizeof(why)), 0);
	SSL_CTX_free(ctx);
	ctx = NULL;
	/* a deferred bundle without certificates: read fine, its parse fails, and stays failed */
	CHECK_INT(write_file(path, "# nothing\n"), 0);
	CHECK_INT(gw_tls_client_ctx_new_deferred(path, pem, strlen(pem), &ctx, why, sizeof(why)),
		  0);
	CHECK(ctx && gw_tls_client_store(ctx) == NULL);
	why[0] = '\0';
	CHECK_INT(gw_tls_client_roots_load(ctx, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, path) && strstr(why, "no PEM certificate"));
	CHECK_INT(gw_tls_client_roots_load(ctx, NULL, 0), -EINVAL);
	SSL_CTX_free(ctx);
	ctx = NULL;
	/* a missing file is still an error at once */
	CHECK_INT(gw_tls_client_ctx_new_deferred("/nonexistent/gwca-roots.crt", NULL, 0, &ctx, why,
						 sizeof(why)),
		  -ENOENT);
	unlink(path);

	/* through the default entry point (system roots) */
	if (have_system_roots()) {
		CHECK_INT(gw_tls_client_ctx_new("", 0, &ctx, why, sizeof(why)), -EINVAL);
		CHECK_INT(gw_tls_client_ctx_new("junk", 4, &ctx, why, sizeof(why)), -EINVAL);
		CHECK_INT(gw_tls_client_ctx_new(pem, strlen(pem), &ctx, why, sizeof(why)), 0);
		SSL_CTX_free(ctx);
	}
	free(two);
	gw_ca_free(ca);
	CHECK_INT(ERR_peek_error(), 0); /* nothing left on the error queue */
}

/* --- measurements --- */

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void
test_measure_leaf_time(void)
{
	enum { N = 300 };
	struct gw_ca *ca = NULL;
	struct gw_ca_stats st;
	SSL *ssl;
	char host[32];
	double t0, made_us, hit_us;

	CHECK_INT(gw_ca_new(N, &ca), 0);
	if (!ca)
		return;
	ssl = SSL_new(gw_ca_server_ctx(ca));
	t0 = now_us();
	for (int i = 0; i < N; i++) {
		snprintf(host, sizeof(host), "m%d.box.test", i);
		CHECK_INT(gw_ca_use_leaf(ca, ssl, host, false), 0);
	}
	made_us = (now_us() - t0) / N;
	t0 = now_us();
	for (int i = 0; i < N; i++) {
		snprintf(host, sizeof(host), "m%d.box.test", i);
		CHECK_INT(gw_ca_use_leaf(ca, ssl, host, false), 0);
	}
	hit_us = (now_us() - t0) / N;
	gw_ca_stats(ca, &st);
	CHECK_INT(st.leaves_made, N);
	CHECK_INT(st.leaf_hits, N);
	printf("# leaf: %.1f us to make and install (mean of %d), %.2f us from the cache\n",
	       made_us, N, hit_us);
	SSL_free(ssl);
	gw_ca_free(ca);
}

/* CPU of one intercepted handshake, both sides in this process (the
 * gateway runs the server side; the client side stands in for the agent's
 * TLS stack): full, and resumed from a ticket. */
static void
test_measure_handshake_time(void)
{
	enum { N = 50 };
	struct gw_ca *ca = NULL;
	SSL_CTX *cctx = NULL;
	struct tls_pair p = { .fds = { -1, -1 } };
	double t0, full_us, resumed_us;

	if (!have_system_roots()) {
		SKIP(GW_SYSTEM_ROOTS " is absent (ca-certificates not installed)");
		return;
	}
	CHECK_INT(gw_ca_new(8, &ca), 0);
	cctx = ca ? client_ctx_trusting(ca) : NULL;
	if (!cctx)
		goto out;
	SSL_CTX_set_session_cache_mode(cctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
	SSL_CTX_sess_set_new_cb(cctx, save_session);
	t0 = now_us();
	for (int i = 0; i < N; i++) {
		CHECK_INT(pair_new(&p, ca, cctx, "a.box.test", false, "a.box.test", false), 0);
		CHECK_INT(pair_handshake(&p), 0);
		pair_free(&p);
	}
	full_us = (now_us() - t0) / N;
	/* one exchange so the client reads its ticket */
	CHECK_INT(pair_new(&p, ca, cctx, "a.box.test", false, "a.box.test", false), 0);
	CHECK_INT(pair_handshake(&p), 0);
	CHECK_INT(pair_exchange(&p), 0);
	pair_free(&p);
	CHECK(saved_session != NULL);
	if (!saved_session)
		goto out;
	{
		SSL_SESSION *ticket = saved_session;
		saved_session = NULL;
		t0 = now_us();
		for (int i = 0; i < N; i++) {
			CHECK_INT(pair_new(&p, ca, cctx, "a.box.test", false, "a.box.test", false),
				  0);
			SSL_set_session(p.client, ticket);
			CHECK_INT(pair_handshake(&p), 0);
			CHECK(SSL_session_reused(p.server));
			pair_free(&p);
		}
		resumed_us = (now_us() - t0) / N;
		SSL_SESSION_free(ticket);
	}
	printf("# TLS 1.3 handshake, both sides in-process: full %.0f us, resumed %.0f us "
	       "(mean of %d)\n",
	       full_us, resumed_us, N);
out:
	SSL_SESSION_free(saved_session);
	saved_session = NULL;
	pair_free(&p);
	SSL_CTX_free(cctx);
	gw_ca_free(ca);
}

static size_t
heap_in_use(void)
{
	return mallinfo2().uordblks;
}

/* Heap an idle connection keeps after the handshake and one exchange:
 * the drop in glibc's in-use bytes when each SSL is freed. */
static void
test_measure_idle_memory(void)
{
	enum { N = 20 };
	struct gw_ca *ca = NULL;
	SSL_CTX *cctx = NULL;
	struct tls_pair p[N];
	size_t before, after_server, after_client;
	int made = 0;

	if (!have_system_roots()) {
		SKIP(GW_SYSTEM_ROOTS " is absent (ca-certificates not installed)");
		return;
	}
	CHECK_INT(gw_ca_new(8, &ca), 0);
	cctx = ca ? client_ctx_trusting(ca) : NULL;
	if (!cctx)
		goto out;
	for (made = 0; made < N; made++) {
		CHECK_INT(pair_new(&p[made], ca, cctx, "a.box.test", false, "a.box.test", false),
			  0);
		CHECK_INT(pair_handshake(&p[made]), 0);
		CHECK_INT(pair_exchange(&p[made]), 0);
	}
	before = heap_in_use();
	for (int i = 0; i < N; i++) {
		SSL_free(p[i].server);
		p[i].server = NULL;
	}
	after_server = heap_in_use();
	for (int i = 0; i < N; i++) {
		SSL_free(p[i].client);
		p[i].client = NULL;
	}
	after_client = heap_in_use();
#ifdef GW_UNDER_ASAN
	/* ASan's allocator keeps no glibc arena statistics */
	(void)before;
	(void)after_server;
	(void)after_client;
	printf("# idle connection heap: not measured under AddressSanitizer\n");
#else
	printf("# idle TLS 1.3 connection after one exchange: server SSL %zu bytes, "
	       "upstream-side client SSL %zu bytes (mean of %d)\n",
	       (before - after_server) / N, (after_server - after_client) / N, N);
	/* Both legs far inside the 40 KiB per intercepted connection budget;
	 * the bound also catches a return of per-connection X509 objects on
	 * the upstream side (~5 KiB per certificate). */
	CHECK((before - after_client) / N < 12 * 1024);
#endif
out:
	for (int i = 0; i < made; i++)
		pair_free(&p[i]);
	SSL_CTX_free(cctx);
	gw_ca_free(ca);
}

int
main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/gwca-test-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_ca_fields);
	RUN(test_leaves_verify);
	RUN(test_openssl_cli_verifies);
	RUN(test_handshake_name);
	RUN(test_handshake_deferred);
	RUN(test_handshake_ip);
	RUN(test_system_roots_alone_refuse);
	RUN(test_resumption);
	RUN(test_upstream_verifier);
	RUN(test_upstream_unprepared);
	RUN(test_cache_bound);
	RUN(test_evicted_leaf_still_served);
	RUN(test_extra_bundle_strict);
	RUN(test_measure_leaf_time);
	RUN(test_measure_handshake_time);
	RUN(test_measure_idle_memory);
	rmdir(tmpdir);
	return tap_done();
}
