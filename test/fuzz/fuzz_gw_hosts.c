/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_gw_hosts.c — box-gateway's hosts(5) parser (box-gateway/hosts.c) on
 * arbitrary bytes: GatewayInit.hosts_file is the one text the gateway parses
 * besides HTTP (fuzz_gw_http).
 * Properties (abort() on violation): a parse returns 0 or a negative errno
 * with a non-empty `why` naming a line; on success every name of every line
 * looks up to at least one address whose family is AF_INET or AF_INET6 and
 * whose port is the one asked for; a second parse of the same text agrees on
 * each lookup.
 * Seeds: test/fuzz/corpus/gw_hosts.
 * Trusts: nothing; the input is arbitrary bytes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "gateway.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gw_hosts *h = NULL, *h2 = NULL;
	char why[256] = "";
	int r = gw_hosts_parse((const char *)data, size, &h, why, sizeof(why));
	if (r < 0) {
		if (!why[0] || strncmp(why, "hosts file line ", 16) != 0)
			abort();
		return 0;
	}
	if (r != 0 || gw_hosts_parse((const char *)data, size, &h2, why, sizeof(why)) != 0)
		abort();
	/* Every word after the first of a line is a name: look each up. */
	size_t off = 0;
	while (off < size) {
		const char *line = (const char *)data + off;
		const char *nl = memchr(line, '\n', size - off);
		size_t ll = nl ? (size_t)(nl - line) : size - off;
		const char *hash = memchr(line, '#', ll);
		size_t l = hash ? (size_t)(hash - line) : ll;
		size_t i = 0, word = 0;
		while (i < l) {
			while (i < l && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
				i++;
			size_t s = i;
			while (i < l && !(line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
				i++;
			if (i > s && word++ > 0) {
				char name[256];
				bool is_ip = false;
				if (addr_host_spelling(line + s, i - s, name, sizeof(name),
						       &is_ip) < 0)
					abort();
				struct sockaddr_storage a[4], b[4];
				size_t n = gw_hosts_lookup(h, name, 8080, a, 4);
				size_t n2 = gw_hosts_lookup(h2, name, 8080, b, 4);
				if (n == 0 || n != n2 || memcmp(a, b, n * sizeof(a[0])) != 0)
					abort();
				for (size_t k = 0; k < n; k++) {
					uint16_t port =
					    a[k].ss_family == AF_INET
						? ((struct sockaddr_in *)&a[k])->sin_port
						: ((struct sockaddr_in6 *)&a[k])->sin6_port;
					if ((a[k].ss_family != AF_INET &&
					     a[k].ss_family != AF_INET6) ||
					    ntohs(port) != 8080)
						abort();
				}
			}
		}
		off += ll + (nl ? 1 : 0);
	}
	gw_hosts_free(h);
	gw_hosts_free(h2);
	return 0;
}
