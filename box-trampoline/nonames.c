/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nonames.c — box-trampoline is linked static (box-trampoline/module.mk): it is
 * exec'd for every sandbox, and a static exec skips the dynamic loader's mapping
 * and binding of its libraries. It never resolves a name: libevent's evutil.o
 * (pulled in by libpolicyclient's event client, which it does not use) refers to
 * glibc's resolver, whose static form would need glibc's NSS modules at run time.
 * These definitions take those references, so that no resolver is linked in;
 * each fails as a resolver without configuration would.
 * Trusts: nothing.
 */
#include <errno.h>
#include <netdb.h>
#include <stddef.h>

int
getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
	    struct addrinfo **res)
{
	*res = NULL;
	return EAI_FAIL;
}

void
freeaddrinfo(struct addrinfo *res)
{
}

struct servent *
getservbyname(const char *name, const char *proto)
{
	return NULL;
}

struct protoent *
getprotobynumber(int proto)
{
	return NULL;
}
