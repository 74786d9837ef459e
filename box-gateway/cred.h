/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cred.h — credential bindings ([egress.NAME], http [mcp.NAME]) and
 * passthrough matching for box-gateway (docs/box.ini.5.md [egress.NAME], [gateway]
 * passthrough). No I/O, nothing here logs.
 *
 * Trusts: the bindings (boxd built them from a validated config); nothing
 * in a request or response (the sandbox and upstream are untrusted). A
 * secret never appears in a `why` text, and a request that cannot be
 * rewritten exactly is refused, never forwarded half-rewritten.
 */
#ifndef BOX_GATEWAY_CRED_H
#define BOX_GATEWAY_CRED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http.h"

struct cred_spellings;

struct cred_dest {
	char *host;          /* lowercase; for a wildcard the domain after "*." */
	bool wildcard;       /* subdomains only: "*.x.com" matches a.x.com, not x.com */
	uint16_t port;
	char *path_prefix;   /* NULL, or "/a/b": matches /a/b and /a/b/..., not /a/bc */
};

enum cred_placement { CRED_HEADER = 1, CRED_BASIC_AUTH = 2, CRED_QUERY_PARAM = 3 };
enum cred_inject { CRED_INJECT_PLACEHOLDER = 1, CRED_INJECT_ALWAYS = 2 };

struct cred_binding {
	char *name;                  /* "egress.NAME": for messages */
	struct cred_dest *dest;
	size_t n_dest;
	uint8_t *secret;             /* never logged */
	size_t secret_len;
	char *placeholder;
	enum cred_placement placement;
	char *header;                /* CRED_HEADER */
	char *prefix;                /* CRED_HEADER, may be "" */
	char *param;                 /* CRED_QUERY_PARAM */
	enum cred_inject inject;
	char **sandboxes;            /* NULL/0: every sandbox */
	size_t n_sandboxes;
	struct cred_spellings *spellings; /* what replies are redacted of (redact.h) */
};

/* host/port as addr_host_spelling gives them; path: canonical, or NULL to
 * match on host and port alone (CONNECT time, passthrough). */
bool cred_dest_match(const struct cred_dest *d, const char *host, uint16_t port,
		     const char *path);
/* The binding whose destinations match, or NULL (destinations never overlap). */
const struct cred_binding *cred_find(const struct cred_binding *b, size_t n, const char *host,
				     uint16_t port, const char *path);
/* Any binding has a destination on host:port (a plaintext request there is refused). */
bool cred_host_bound(const struct cred_binding *b, size_t n, const char *host, uint16_t port);
bool cred_applies_to_sandbox(const struct cred_binding *b, const char *sandbox);

/*
 * Rewrite one intercepted request for binding b, in place: the placeholder at
 * the placement becomes the secret (header: "<prefix><placeholder>";
 * basic_auth: the password half of "Basic base64(user:placeholder)" — the
 * whole "user:password" secret replaces the pair; query_param:
 * "<param>=<placeholder>" in *origin_form), or, for inject = always, the
 * secret is set whatever the request carried. Also sets
 * "Accept-Encoding: identity" (every other Accept-Encoding removed). sandbox:
 * the listener's sandbox; a binding scoped to other sandboxes refuses a
 * request carrying its placeholder.
 * Returns 0 (rewritten: the reply must be identity-encoded and redacted),
 * CRED_NOT_APPLIED (the binding excludes this sandbox and the request does
 * not carry the placeholder: forwarded untouched, not credentialed — also for
 * inject = always), -EACCES (refused: why is the 403 body's reason, with
 * neither the secret nor the placeholder in it), -ENOMEM (the request is left
 * as it was; refuse it).
 *
 * The details (cred.c's header has the reasons):
 * - header: the value must be exactly prefix + placeholder, the prefix
 *   compared case-insensitively ("bearer " = "Bearer "); it becomes the
 *   configured prefix + secret. A secret with a control byte is refused.
 * - basic_auth: "Basic" (any case) + base64 of "user:placeholder" (any user
 *   without ':'); the value becomes "Basic " + base64(secret).
 * - query_param: names and values compared percent-decoded; the value
 *   becomes the secret with every byte outside unreserved percent-encoded;
 *   every other byte of *origin_form is kept. inject = always appends the
 *   parameter when absent. The caller sends *origin_form upstream, never
 *   req->target, which is left as sent, placeholder and all, so that logging it
 *   never logs the secret (origin_form NULL: req->target is the origin-form
 *   and is rewritten).
 * - inject = placeholder: refused when the placeholder is not at the
 *   placement, when it is also anywhere else in the head (origin-form, another
 *   header, the user of Basic; also percent-encoded), or when the placement
 *   header / parameter occurs twice. inject = always: the placement is
 *   overwritten (duplicates removed), a placeholder elsewhere is sent as is.
 */
#define CRED_NOT_APPLIED 1
int cred_apply(const struct cred_binding *b, const char *sandbox, struct http_request *req,
	       char **origin_form, char *why, size_t why_len);
/* The request carries some binding's placeholder anywhere in its head (a
 * request from a sandbox the binding excludes, or to another host): in
 * req->target, origin_form (may be NULL), a header name or value, also
 * percent-decoded and inside a "Basic" base64 value. */
const struct cred_binding *cred_find_placeholder(const struct cred_binding *b, size_t n,
						 const struct http_request *req,
						 const char *origin_form);

#endif
