/* SPDX-License-Identifier: Apache-2.0 */
/*
 * addr.c — the `host` and `ip` spellings a policy compares, and the addresses
 * refused before policy (addr.h; docs/box-policy.5.md). Pure: no I/O, no DNS.
 *
 * Trusts nothing: hosts come from the sandbox (CONNECT, Host, absolute-form)
 * and addresses from a resolver the sandbox may steer. The point of the
 * spellings is that one address has one spelling: every numeric form a C
 * resolver would accept (inet_aton(3), so what getaddrinfo would connect to)
 * becomes the dotted quad, and an IPv6 address that carries an IPv4 one is
 * spelled as that IPv4, so neither `host ==` nor `ip ==` rules nor the
 * refused-before-policy list can be dodged by writing an address differently.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "addr.h"

#define ADDR_NAME_MAX 253
#define ADDR_LABEL_MAX 63

/* The IPv4 address an IPv6 address embeds (docs/box-policy.5.md: mapped, compatible, 6to4,
 * Teredo), in network order; false when it embeds none. */
static bool
embedded_ipv4(const struct in6_addr *a6, struct in_addr *a4)
{
	const uint8_t *b = a6->s6_addr;
	static const uint8_t zero[12];
	uint32_t v;

	if (memcmp(b, zero, 10) == 0 && b[10] == 0xff && b[11] == 0xff) {
		memcpy(&a4->s_addr, b + 12, 4); /* ::ffff:a.b.c.d */
		return true;
	}
	if (memcmp(b, zero, 12) == 0) {
		/* ::a.b.c.d, but :: and ::1 are IPv6's own unspecified and loopback */
		memcpy(&v, b + 12, 4);
		if (ntohl(v) <= 1)
			return false;
		a4->s_addr = v;
		return true;
	}
	if (b[0] == 0x20 && b[1] == 0x02) {
		memcpy(&a4->s_addr, b + 2, 4); /* 6to4 2002:AABB:CCDD::/48 */
		return true;
	}
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0) {
		memcpy(&v, b + 12, 4); /* Teredo: the client's address, inverted */
		a4->s_addr = v ^ 0xffffffffu;
		return true;
	}
	return false;
}

static int
spell_ipv4(const struct in_addr *a4, char *out, size_t out_len)
{
	char buf[INET_ADDRSTRLEN];
	if (!inet_ntop(AF_INET, a4, buf, sizeof(buf)))
		return -errno;
	if (strlen(buf) >= out_len)
		return -ENOSPC;
	strcpy(out, buf);
	return 0;
}

static int
spell_ipv6(const struct in6_addr *a6, char *out, size_t out_len)
{
	struct in_addr a4;
	char buf[INET6_ADDRSTRLEN];

	if (embedded_ipv4(a6, &a4))
		return spell_ipv4(&a4, out, out_len);
	/* glibc's inet_ntop writes RFC 5952 (lowercase, the first longest run of two or
	 * more zero groups as "::"); the dotted tails it uses are unwrapped above. */
	if (!inet_ntop(AF_INET6, a6, buf, sizeof(buf)))
		return -errno;
	if (strlen(buf) >= out_len)
		return -ENOSPC;
	strcpy(out, buf);
	return 0;
}

int
addr_ip_spelling(const struct sockaddr *sa, char *out, size_t out_len)
{
	if (!sa || out_len == 0)
		return -EINVAL;
	if (sa->sa_family == AF_INET)
		return spell_ipv4(&((const struct sockaddr_in *)(const void *)sa)->sin_addr, out,
				  out_len);
	if (sa->sa_family == AF_INET6)
		return spell_ipv6(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, out,
				  out_len);
	return -EAFNOSUPPORT;
}

static bool
is_numeric_form_byte(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == 'x' || c == '.';
}

static bool
is_label_byte(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

int
addr_host_spelling(const char *in, size_t len, char *out, size_t out_len, bool *is_ip)
{
	char buf[ADDR_NAME_MAX + 2];

	*is_ip = false;
	if (len == 0 || memchr(in, '\0', len) || out_len == 0)
		return -EINVAL;
	if (in[0] == '[') {
		if (len < 3 || in[len - 1] != ']')
			return -EINVAL;
		in++;
		len -= 2;
		if (!memchr(in, ':', len))
			return -EINVAL; /* brackets hold IPv6 only */
	}
	if (memchr(in, ':', len)) {
		/* IPv6 literal; inet_pton refuses zone ids ("%eth0") and anything else */
		struct in6_addr a6;
		if (len >= INET6_ADDRSTRLEN)
			return -EINVAL;
		memcpy(buf, in, len);
		buf[len] = '\0';
		if (inet_pton(AF_INET6, buf, &a6) != 1)
			return -EINVAL;
		*is_ip = true;
		return spell_ipv6(&a6, out, out_len);
	}
	if (in[len - 1] == '.')
		len--; /* one trailing dot: the root */
	if (len == 0 || len > ADDR_NAME_MAX)
		return -EINVAL;
	bool numeric_form = true, every_label_numeric = true, label_start = true;
	for (size_t i = 0; i < len; i++) {
		char c = in[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		buf[i] = c;
		if (!is_numeric_form_byte(c))
			numeric_form = false;
		if (label_start && !(c >= '0' && c <= '9'))
			every_label_numeric = false;
		label_start = c == '.';
	}
	buf[len] = '\0';
	if (numeric_form) {
		/* Only digits, hex letters, x and dots: whatever inet_aton accepts is what a
		 * resolver would connect to, so it is that address. */
		struct in_addr a4;
		if (inet_aton(buf, &a4) != 0) {
			*is_ip = true;
			return spell_ipv4(&a4, out, out_len);
		}
		if (every_label_numeric)
			return -EINVAL; /* "1.2.3.4.5", "08.0.0.1", "1e5": numeric yet no address */
	}
	size_t label_len = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || buf[i] == '.') {
			if (label_len == 0 || label_len > ADDR_LABEL_MAX)
				return -EINVAL;
			label_len = 0;
			continue;
		}
		if (!is_label_byte(buf[i]))
			return -EINVAL;
		label_len++;
	}
	if (len >= out_len)
		return -ENOSPC;
	memcpy(out, buf, len + 1);
	return 0;
}

static const char *
refused_ipv4(struct in_addr a4)
{
	uint32_t v = ntohl(a4.s_addr);
	if ((v >> 24) == 127)
		return "loopback";
	if ((v >> 24) == 0)
		return "unspecified";
	if ((v >> 16) == 0xa9fe)
		return "link-local";
	return NULL;
}

const char *
addr_refused_before_policy(const struct sockaddr *sa)
{
	/* fail closed: only an IPv4 or IPv6 address can be judged (and dialed) */
	if (!sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
		return "not an IP address";
	if (sa->sa_family == AF_INET)
		return refused_ipv4(((const struct sockaddr_in *)(const void *)sa)->sin_addr);
	const struct in6_addr *a6 = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
	struct in_addr a4;
	static const struct in6_addr metadata = {
	    {{0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54}}};
	if (embedded_ipv4(a6, &a4))
		return refused_ipv4(a4);
	if (IN6_IS_ADDR_LOOPBACK(a6))
		return "loopback";
	if (IN6_IS_ADDR_UNSPECIFIED(a6))
		return "unspecified";
	if (IN6_IS_ADDR_LINKLOCAL(a6))
		return "link-local";
	if (memcmp(a6, &metadata, sizeof(metadata)) == 0)
		return "cloud metadata";
	return NULL;
}
