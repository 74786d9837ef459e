/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_gw_addr.c — box-gateway/addr.c: the `host` spelling (every inet_aton
 * form of an IPv4 address, IPv6 literals, names), the `ip` spelling (IPv4 in
 * mapped/compatible/6to4/Teredo IPv6 unwrapped, RFC 5952 otherwise) and the
 * addresses refused before policy, also when embedded (docs/box-policy.5.md).
 * Trusts: nothing; it is test code.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

#include "box-gateway/addr.h"
#include "tap.h"

static int
host(const char *in, char *out, bool *is_ip)
{
	return addr_host_spelling(in, strlen(in), out, 256, is_ip);
}

static void
test_host_numeric_forms(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"169.254.169.254", "169.254.169.254"},
	    {"2852039166", "169.254.169.254"},
	    {"0xa9.0xfe.0xa9.0xfe", "169.254.169.254"},
	    {"0XA9.0XFE.0XA9.0XFE", "169.254.169.254"},
	    {"0xA9FEA9FE", "169.254.169.254"},
	    {"0251.0376.0251.0376", "169.254.169.254"},
	    {"169.254.43518", "169.254.169.254"},
	    {"169.16689662", "169.254.169.254"},
	    {"127.1", "127.0.0.1"},
	    {"127.0.1", "127.0.0.1"},
	    {"0177.0.0.1", "127.0.0.1"},
	    {"0x7f000001", "127.0.0.1"},
	    {"017700000001", "127.0.0.1"},
	    {"2130706433", "127.0.0.1"},
	    {"127.0.0.1.", "127.0.0.1"},
	    {"0", "0.0.0.0"},
	    {"0.0.0.0", "0.0.0.0"},
	    {"[::1]", "::1"},
	    {"::1", "::1"},
	    {"[::]", "::"},
	    {"[::ffff:127.0.0.1]", "127.0.0.1"},
	    {"::FFFF:7F00:1", "127.0.0.1"},
	    {"[::ffff:a9fe:a9fe]", "169.254.169.254"},
	    {"[::127.0.0.1]", "127.0.0.1"},
	    {"[2002:7f00:1::]", "127.0.0.1"},
	    {"[2001:0:4136:e378:8000:63bf:3fff:fdd2]", "192.0.2.45"},
	    {"[2001:DB8:0:0:1:0:0:1]", "2001:db8::1:0:0:1"},
	    {"fd00:ec2::254", "fd00:ec2::254"},
	    {"[FD00:0EC2:0000:0000:0000:0000:0000:0254]", "fd00:ec2::254"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[256] = "";
		bool ip = false;
		int rc = host(cases[i].in, out, &ip);
		if (rc != 0 || strcmp(out, cases[i].out) != 0)
			printf("#   \"%s\" -> %d \"%s\"\n", cases[i].in, rc, out);
		CHECK_INT(rc, 0);
		CHECK_STR(out, cases[i].out);
		CHECK(ip);
	}
}

static void
test_host_names(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"example.com", "example.com"},
	    {"Example.COM", "example.com"},
	    {"example.com.", "example.com"},
	    {"API.Example.com.", "api.example.com"},
	    {"xn--bcher-kva.example", "xn--bcher-kva.example"},
	    {"_dmarc.example", "_dmarc.example"},
	    {"localhost", "localhost"},
	    {"1.2.3.4.example", "1.2.3.4.example"},
	    {"cafe", "cafe"},
	    {"dead.beef", "dead.beef"},
	    {"cafe.1", "cafe.1"},
	    {"0x1g", "0x1g"},
	    {"1e100.net", "1e100.net"},
	    {"a-b.c-d", "a-b.c-d"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[256] = "";
		bool ip = true;
		int rc = host(cases[i].in, out, &ip);
		if (rc != 0 || strcmp(out, cases[i].out) != 0)
			printf("#   \"%s\" -> %d \"%s\"\n", cases[i].in, rc, out);
		CHECK_INT(rc, 0);
		CHECK_STR(out, cases[i].out);
		CHECK(!ip);
	}
	/* label and name lengths: 63 and 253 are the limits (a trailing dot is extra) */
	char name[300], out[256];
	bool ip;
	memset(name, 'a', 63);
	strcpy(name + 63, ".example");
	CHECK_INT(host(name, out, &ip), 0);
	memset(name, 'a', 64);
	strcpy(name + 64, ".example");
	CHECK_INT(host(name, out, &ip), -EINVAL);
	size_t k = 0;
	while (k + 4 <= 252) {
		memcpy(name + k, "abc.", 4);
		k += 4;
	}
	name[k++] = 'z';
	name[k] = '\0';
	CHECK_INT(k, 253);
	CHECK_INT(host(name, out, &ip), 0);
	name[k] = '.';
	name[k + 1] = '\0';
	CHECK_INT(host(name, out, &ip), 0);
	CHECK_INT(strlen(out), 253);
	name[k] = 'z';
	name[k + 1] = '\0';
	CHECK_INT(host(name, out, &ip), -EINVAL);
	/* out too small */
	CHECK_INT(addr_host_spelling("example.com", 11, out, 11, &ip), -ENOSPC);
	CHECK_INT(addr_host_spelling("example.com", 11, out, 12, &ip), 0);
	CHECK_INT(addr_host_spelling("::1", 3, out, 3, &ip), -ENOSPC);
	/* the length is honoured (no NUL needed) */
	CHECK_INT(addr_host_spelling("example.comXYZ", 11, out, sizeof(out), &ip), 0);
	CHECK_STR(out, "example.com");
}

static void
test_host_refused(void)
{
	static const char *const bad[] = {
	    "",
	    ".",
	    "..",
	    "a..b",
	    ".a",
	    "a.b..",
	    "a b",
	    "a\tb",
	    "caf\xc3\xa9.example",
	    "exa%6dple.com",
	    "a/b",
	    "a@b",
	    "a:b",
	    "example.com:80",
	    "1.2.3.4.5",
	    "999.1.1.1",
	    "256.0.0.1",
	    "08.0.0.1",
	    "1.2.3.08",
	    "4294967296",
	    "0x100000000",
	    "1e5",
	    "1.2.3.4e",
	    "[fe80::1%eth0]",
	    "fe80::1%eth0",
	    "fe80::1%25eth0",
	    "[1.2.3.4]",
	    "[example.com]",
	    "[]",
	    "[::1",
	    "::1]",
	    "[::1]:80",
	    "1::2::3",
	    "::ffff:1.2.3",
	    "127.0.0.1 ",
	    " 127.0.0.1",
	    "127.0.0.1\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char out[256];
		bool ip;
		int rc = host(bad[i], out, &ip);
		if (rc != -EINVAL)
			printf("#   accepted or wrong error (%d): \"%s\" -> \"%s\"\n", rc, bad[i],
			       rc == 0 ? out : "");
		CHECK_INT(rc, -EINVAL);
	}
	char out[256];
	bool ip;
	CHECK_INT(addr_host_spelling("a\0b", 3, out, sizeof(out), &ip), -EINVAL);
	CHECK_INT(addr_host_spelling("127.0.0.1\0x", 11, out, sizeof(out), &ip), -EINVAL);
}

static void
test_host_idempotent(void)
{
	static const char *const in[] = {
	    "2852039166", "Example.COM.",	"[::ffff:127.0.0.1]", "[2001:DB8::1]",
	    "0177.1",	  "[2002:c000:204::1]", "fd00:ec2::254",      "1.2.3.4.example",
	};
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		char a[256], b[256];
		bool ip1, ip2;
		CHECK_INT(host(in[i], a, &ip1), 0);
		CHECK_INT(host(a, b, &ip2), 0);
		CHECK_STR(b, a);
		CHECK(ip1 == ip2);
	}
}

static struct sockaddr_storage ss;

static const struct sockaddr *
sa_of(const char *text)
{
	memset(&ss, 0, sizeof(ss));
	if (strchr(text, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		if (inet_pton(AF_INET6, text, &s6->sin6_addr) != 1)
			printf("#   bad test address %s\n", text);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		if (inet_pton(AF_INET, text, &s4->sin_addr) != 1)
			printf("#   bad test address %s\n", text);
	}
	return (const struct sockaddr *)&ss;
}

static void
test_ip_spelling(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"10.0.0.1", "10.0.0.1"},
	    {"255.255.255.255", "255.255.255.255"},
	    {"::1", "::1"},
	    {"::", "::"},
	    {"2001:DB8::1", "2001:db8::1"},
	    {"2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"},    /* first longest run */
	    {"2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"}, /* one zero group stays */
	    {"2001:0db8:0000:0000:0000:ff00:0042:8329", "2001:db8::ff00:42:8329"},
	    {"fe80::1", "fe80::1"},
	    {"::ffff:1.2.3.4", "1.2.3.4"}, /* mapped */
	    {"::ffff:0:0", "0.0.0.0"},
	    {"::1.2.3.4", "1.2.3.4"}, /* compatible */
	    {"::2", "0.0.0.2"},
	    {"2002:c000:0204::1", "192.0.2.4"}, /* 6to4 */
	    {"2002:7f00:1:ffff::1", "127.0.0.1"},
	    {"2001:0000:4136:e378:8000:63bf:3fff:fdd2", "192.0.2.45"}, /* Teredo */
	    {"2001::ffff:ffff", "0.0.0.0"},
	    {"2001:db8::3fff:fdd2", "2001:db8::3fff:fdd2"}, /* not Teredo */
	    {"2001:1::1", "2001:1::1"},
	    {"::ffff:0:1.2.3.4", "::ffff:0:102:304"}, /* SIIT: not embedded */
	    {"64:ff9b::7f00:1", "64:ff9b::7f00:1"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[ADDR_IP_MAX] = "";
		int rc = addr_ip_spelling(sa_of(cases[i].in), out, sizeof(out));
		if (rc != 0 || strcmp(out, cases[i].out) != 0)
			printf("#   %s -> %d \"%s\"\n", cases[i].in, rc, out);
		CHECK_INT(rc, 0);
		CHECK_STR(out, cases[i].out);
	}
	char out[ADDR_IP_MAX];
	CHECK_INT(addr_ip_spelling(sa_of("10.0.0.1"), out, 8), -ENOSPC);
	CHECK_INT(addr_ip_spelling(sa_of("10.0.0.1"), out, 9), 0);
	CHECK_INT(addr_ip_spelling(sa_of("2001:db8::1"), out, 4), -ENOSPC);
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	CHECK_INT(addr_ip_spelling((const struct sockaddr *)&un, out, sizeof(out)), -EAFNOSUPPORT);
	CHECK_INT(addr_ip_spelling(NULL, out, sizeof(out)), -EINVAL);
}

static void
test_refused_before_policy(void)
{
	static const struct {
		const char *in, *why;
	} cases[] = {
	    {"127.0.0.1", "loopback"},
	    {"127.255.255.254", "loopback"},
	    {"0.0.0.0", "unspecified"},
	    {"0.1.2.3", "unspecified"},
	    {"169.254.169.254", "link-local"},
	    {"169.254.0.1", "link-local"},
	    {"::1", "loopback"},
	    {"::", "unspecified"},
	    {"fe80::1", "link-local"},
	    {"febf:ffff::1", "link-local"},
	    {"fd00:ec2::254", "cloud metadata"},
	    /* embedded in IPv6 */
	    {"::ffff:127.0.0.1", "loopback"},
	    {"::ffff:0.0.0.0", "unspecified"},
	    {"::ffff:169.254.169.254", "link-local"},
	    {"::127.0.0.1", "loopback"},
	    {"::2", "unspecified"},
	    {"2002:7f00:1::", "loopback"},
	    {"2002:a9fe:a9fe::1", "link-local"},
	    {"2001:0:1:2:3:4:80ff:fefe", "loopback"}, /* Teredo of 127.0.0.1 */
	    {"2001::5601:5601", "link-local"},	      /* Teredo of 169.254.169.254 */
	    {"2001::ffff:ffff", "unspecified"},	      /* Teredo of 0.0.0.0 */
	    /* allowed */
	    {"10.0.0.1", NULL},
	    {"1.1.1.1", NULL},
	    {"128.0.0.1", NULL},
	    {"126.255.255.255", NULL},
	    {"1.0.0.0", NULL},
	    {"169.253.255.255", NULL},
	    {"169.255.0.0", NULL},
	    {"fec0::1", NULL},
	    {"fe7f::1", NULL},
	    {"fd00:ec2::253", NULL},
	    {"fd00:ec2::1:254", NULL},
	    {"2001:db8::1", NULL},
	    {"::ffff:8.8.8.8", NULL},
	    {"2002:0808:0808::", NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *why = addr_refused_before_policy(sa_of(cases[i].in));
		if ((why == NULL) != (cases[i].why == NULL) ||
		    (why && strcmp(why, cases[i].why) != 0))
			printf("#   %s -> %s, expected %s\n", cases[i].in, why ? why : "NULL",
			       cases[i].why ? cases[i].why : "NULL");
		CHECK((why == NULL) == (cases[i].why == NULL));
		if (why && cases[i].why)
			CHECK_STR(why, cases[i].why);
	}
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	CHECK_STR(addr_refused_before_policy((const struct sockaddr *)&un), "not an IP address");
	CHECK_STR(addr_refused_before_policy(NULL), "not an IP address");
}

int
main(void)
{
	RUN(test_host_numeric_forms);
	RUN(test_host_names);
	RUN(test_host_refused);
	RUN(test_host_idempotent);
	RUN(test_ip_spelling);
	RUN(test_refused_before_policy);
	return tap_done();
}
