/* SPDX-License-Identifier: Apache-2.0 */
/*
 * addr.h — the spellings of hosts and addresses a policy compares, and the
 * addresses refused before policy (docs/box-policy.5.md; docs/box.ini.5.md [gateway]
 * allow_host_loopback). Pure functions, no I/O, no DNS.
 *
 * Trusts nothing: every input comes from the sandbox (CONNECT, Host) or a
 * resolver.
 */
#ifndef BOX_GATEWAY_ADDR_H
#define BOX_GATEWAY_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define ADDR_IP_MAX 46  /* INET6_ADDRSTRLEN */

/*
 * The `host` spelling: lowercase, no trailing dot. A host that parses as an
 * IPv4 address in any inet_aton(3) form ("2852039166", "0xa9.0xfe.0xa9.0xfe",
 * "127.1", "0177.0.0.1") becomes its dotted quad; an IPv6 literal (with or
 * without brackets) becomes the `ip` spelling (addr_ip_spelling), so a
 * `host ==` rule cannot be bypassed by a numeric spelling. A name is
 * 1-253 bytes of LDH labels (letters, digits, '-', '_', 1-63 bytes each);
 * anything else (non-ASCII: IDN must arrive as punycode) is -EINVAL.
 * *is_ip says whether it was an address.
 *
 * inet_aton is asked only when the whole host is digits, hex letters, 'x'
 * and dots (so "1.2.3.4.example" stays a name and inet_aton's tolerance of
 * trailing junk after a space never applies); such a host whose every label
 * starts with a digit but that inet_aton refuses ("1.2.3.4.5", "08.0.0.1",
 * "999.1.1.1") is -EINVAL, being neither an address nor a sensible name.
 * One trailing dot is removed before anything else ("127.0.0.1." is an
 * address). IPv6 zone ids ("fe80::1%eth0") are -EINVAL; brackets hold IPv6
 * only. -ENOSPC: out_len too small (HTTP_HOST_MAX always fits).
 */
int addr_host_spelling(const char *in, size_t len, char *out, size_t out_len, bool *is_ip);

/*
 * The `ip` spelling of a resolved or literal address: IPv4 dotted; an IPv6
 * that embeds an IPv4 (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, 6to4
 * 2002:AABB:CCDD::/48, Teredo 2001:0::/32 with the client's inverted
 * address) becomes that IPv4; other IPv6 compressed lowercase (RFC 5952).
 */
int addr_ip_spelling(const struct sockaddr *sa, char *out, size_t out_len);

/*
 * Refused before policy unless allow_host_loopback: loopback (127/8, ::1),
 * unspecified (0.0.0.0/8, ::), link-local (169.254/16, fe80::/10) and the
 * IPv6 cloud metadata address fd00:ec2::254 — also when embedded in IPv6 as
 * addr_ip_spelling unwraps it. Returns a short reason ("loopback",
 * "unspecified", "link-local", "cloud metadata"; "not an IP address" for NULL
 * or a family other than AF_INET/AF_INET6) or NULL.
 */
const char *addr_refused_before_policy(const struct sockaddr *sa);

#endif
