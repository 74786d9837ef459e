/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hosts.c — the hosts(5) text of GatewayInit.hosts_file (docs/box.ini.5.md
 * [gateway] hosts_file), parsed once at start (gateway.h).
 *
 * A line: optional blanks, an IPv4 or IPv6 address (inet_pton forms only,
 * no zone index), then one or more names, each a valid host spelling
 * (addr_host_spelling; a numeric "name" is refused: it would shadow an
 * address); '#' starts a comment anywhere. Blank lines are skipped. A bad
 * line is an error naming its number, so a typo does not silently send a
 * name to public DNS. Caps: 65536 entries, names as addr_host_spelling
 * allows (253 bytes).
 * Trusts: nothing (the owner wrote it, boxctl read it; the fuzz target
 * feeds it anything).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "addr.h"
#include "gateway.h"

#define HOSTS_ENTRIES_MAX 65536u

struct hosts_entry {
	char *name;
	struct sockaddr_storage addr;
};

struct gw_hosts {
	struct hosts_entry *e;
	size_t n, cap;
};

void
gw_hosts_free(struct gw_hosts *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n; i++)
		free(h->e[i].name);
	free(h->e);
	free(h);
}

static int
parse_addr(const char *s, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, s, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		return 0;
	}
	return -EINVAL;
}

static int
add(struct gw_hosts *h, const char *name, const struct sockaddr_storage *ss)
{
	if (h->n >= HOSTS_ENTRIES_MAX)
		return -E2BIG;
	if (h->n == h->cap) {
		size_t nc = h->cap ? h->cap * 2 : 16;
		struct hosts_entry *ne = realloc(h->e, nc * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		h->e = ne;
		h->cap = nc;
	}
	h->e[h->n].name = strdup(name);
	if (!h->e[h->n].name)
		return -ENOMEM;
	h->e[h->n].addr = *ss;
	h->n++;
	return 0;
}

static bool
blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* One line (no '\n'), without its comment. */
static int
parse_line(struct gw_hosts *h, const char *line, size_t len, unsigned lineno, char *why,
	   size_t why_len)
{
	const char *hash = memchr(line, '#', len);
	if (hash)
		len = (size_t)(hash - line);
	size_t i = 0, words = 0;
	struct sockaddr_storage ss;

	while (i < len) {
		while (i < len && blank(line[i]))
			i++;
		if (i == len)
			break;
		size_t start = i;
		while (i < len && !blank(line[i]))
			i++;
		size_t wl = i - start;
		char word[300];
		if (wl >= sizeof(word)) {
			(void)snprintf(why, why_len,
				       "hosts file line %u: a word longer than 299 bytes", lineno);
			return -EINVAL;
		}
		memcpy(word, line + start, wl);
		word[wl] = '\0';
		if (memchr(word, '\0', wl)) {
			(void)snprintf(why, why_len, "hosts file line %u: a NUL byte", lineno);
			return -EINVAL;
		}
		if (words == 0) {
			if (parse_addr(word, &ss) < 0) {
				(void)snprintf(why, why_len,
					       "hosts file line %u: '%.64s' is not an IP address",
					       lineno, word);
				return -EINVAL;
			}
		} else {
			char spelled[256];
			bool is_ip = false;
			if (addr_host_spelling(word, wl, spelled, sizeof(spelled), &is_ip) < 0 ||
			    is_ip) {
				(void)snprintf(why, why_len,
					       "hosts file line %u: '%.64s' is not a host name",
					       lineno, word);
				return -EINVAL;
			}
			int r = add(h, spelled, &ss);
			if (r < 0) {
				(void)snprintf(why, why_len, "hosts file line %u: %s", lineno,
					       r == -E2BIG ? "more than 65536 names"
							   : "out of memory");
				return r;
			}
		}
		words++;
	}
	if (words == 1) {
		(void)snprintf(why, why_len, "hosts file line %u: an address without a name",
			       lineno);
		return -EINVAL;
	}
	return 0;
}

int
gw_hosts_parse(const char *text, size_t len, struct gw_hosts **out, char *why, size_t why_len)
{
	struct gw_hosts *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	unsigned lineno = 0;
	size_t off = 0;
	while (off < len) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t ll = nl ? (size_t)(nl - (text + off)) : len - off;
		lineno++;
		int r = parse_line(h, text + off, ll, lineno, why, why_len);
		if (r < 0) {
			gw_hosts_free(h);
			return r;
		}
		off += ll + (nl ? 1 : 0);
	}
	*out = h;
	return 0;
}

size_t
gw_hosts_lookup(const struct gw_hosts *h, const char *name, uint16_t port,
		struct sockaddr_storage *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; h && i < h->n && n < max; i++) {
		if (strcmp(h->e[i].name, name) != 0)
			continue;
		out[n] = h->e[i].addr;
		if (out[n].ss_family == AF_INET)
			((struct sockaddr_in *)&out[n])->sin_port = htons(port);
		else
			((struct sockaddr_in6 *)&out[n])->sin6_port = htons(port);
		n++;
	}
	return n;
}
