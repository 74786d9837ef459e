/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dns.c — resolving a permitted host once, asynchronously (docs/box-policy.5.md;
 * docs/box.ini.5.md [gateway] resolver, hosts_file).
 *
 * Order: an address literal needs no lookup; then the GatewayInit hosts
 * file (every address of the name, in file order); then evdns (A and AAAA,
 * from libevent_extra) against `resolver` or /etc/resolv.conf, read once
 * before the seccomp filter. The caller pins what comes back: it is never
 * resolved again for that connection. At most GW_ADDRS_MAX addresses.
 * Trusts: nothing a resolver answers (the caller checks every address
 * before dialing it).
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <event2/dns.h>
#include <event2/util.h>

#include "gateway.h"

struct gw_resolve {
	struct evdns_getaddrinfo_request *req;
	gw_resolve_fn fn;
	void *arg;
	uint16_t port;
	bool cancelled;
};

int
gw_dns_init(const char *resolver, const uint8_t *hosts, size_t hosts_len, char *why, size_t why_len)
{
	if (hosts && hosts_len) {
		int r = gw_hosts_parse((const char *)hosts, hosts_len, &G.hosts, why, why_len);
		if (r < 0)
			return r;
	}
	G.dns = evdns_base_new(G.base, 0);
	if (!G.dns) {
		(void)snprintf(why, why_len, "cannot create the resolver");
		return -ENOMEM;
	}
	if (resolver && *resolver) {
		struct sockaddr_storage ss;
		int sl = sizeof(ss);
		if (evutil_parse_sockaddr_port(resolver, (struct sockaddr *)&ss, &sl) < 0 ||
		    evdns_base_nameserver_sockaddr_add(G.dns, (struct sockaddr *)&ss,
						       (ev_socklen_t)sl, 0) < 0) {
			(void)snprintf(why, why_len, "resolver '%s' is not IP:PORT", resolver);
			return -EINVAL;
		}
	} else {
		int r = evdns_base_resolv_conf_parse(G.dns, DNS_OPTIONS_ALL, "/etc/resolv.conf");
		if (r != 0 || evdns_base_count_nameservers(G.dns) == 0) {
			/* A host without DNS still serves literals and the hosts file. */
			(void)snprintf(why, why_len, "no nameserver in /etc/resolv.conf");
		}
	}
	(void)evdns_base_set_option(G.dns, "randomize-case:", "0");
	(void)evdns_base_set_option(G.dns, "attempts:", "2");
	return 0;
}

static void
set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

static int
literal(const char *host, uint16_t port, struct gw_addrs *out)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
	} else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
	} else {
		return -EINVAL;
	}
	set_port(&ss, port);
	out->n = 1;
	out->a[0] = ss;
	return 1;
}

static void
on_addrinfo(int result, struct evutil_addrinfo *res, void *arg)
{
	struct gw_resolve *r = arg;
	struct gw_addrs addrs = {.n = 0};
	const char *err = NULL;

	if (result == 0) {
		for (struct evutil_addrinfo *ai = res; ai && addrs.n < GW_ADDRS_MAX;
		     ai = ai->ai_next) {
			if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
			    ai->ai_addrlen > sizeof(addrs.a[0]))
				continue;
			memset(&addrs.a[addrs.n], 0, sizeof(addrs.a[0]));
			memcpy(&addrs.a[addrs.n], ai->ai_addr, ai->ai_addrlen);
			set_port(&addrs.a[addrs.n], r->port);
			addrs.n++;
		}
		if (addrs.n == 0)
			err = "no address";
	} else if (result == EVUTIL_EAI_NONAME || result == EVUTIL_EAI_NODATA) {
		err = "no such host";
	} else if (result == EVUTIL_EAI_CANCEL) {
		err = "cancelled";
	} else {
		err = "name resolution failed";
	}
	if (res)
		evutil_freeaddrinfo(res);
	if (!r->cancelled)
		r->fn(r->arg, err, &addrs);
	free(r);
}

int
gw_resolve(const char *host, bool is_ip, uint16_t port, struct gw_addrs *out, gw_resolve_fn fn,
	   void *arg, struct gw_resolve **handle)
{
	*handle = NULL;
	if (is_ip)
		return literal(host, port, out);
	if (G.hosts) {
		size_t n = gw_hosts_lookup(G.hosts, host, port, out->a, GW_ADDRS_MAX);
		if (n) {
			out->n = n;
			return 1;
		}
	}
	struct gw_resolve *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fn = fn;
	r->arg = arg;
	r->port = port;
	struct evutil_addrinfo hints;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	hints.ai_flags = EVUTIL_AI_NUMERICSERV;
	/* The callback may run before this returns (a cached or local answer): then
	 * r is freed and the caller learns the result through fn. */
	*handle = r;
	struct evdns_getaddrinfo_request *req =
	    evdns_getaddrinfo(G.dns, host, "1", &hints, on_addrinfo, r);
	if (!req) {
		*handle = NULL;
		return 0;
	}
	r->req = req;
	return 0;
}

void
gw_resolve_cancel(struct gw_resolve *r)
{
	if (!r)
		return;
	r->cancelled = true;
	if (r->req)
		evdns_getaddrinfo_cancel(r->req);
}
