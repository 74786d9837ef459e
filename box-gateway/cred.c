/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cred.c — credential bindings for box-gateway: which destination a binding
 * covers and the rewrite of one intercepted request (placeholder -> secret at
 * the configured placement; docs/box.ini.5.md [egress.NAME]). What upstream sends
 * back is redacted by redact.c.
 *
 * Trusts: the bindings (boxd built them from a validated config). Nothing in
 * a request (the sandbox writes it) or a response (upstream writes it). The
 * secret and the placeholder never appear in a `why` text: every message is
 * checked for both before it is returned. A rewrite is prepared completely
 * (every allocation made) before the request is touched, so a request is
 * either rewritten exactly or left as it was.
 *
 * Decisions where docs/box.ini.5.md is silent (docs: the header comment in cred.h):
 * - The header prefix ("Bearer ") and the "Basic" scheme are compared
 *   case-insensitively (HTTP auth schemes are); the rewritten value uses the
 *   configured prefix.
 * - inject = placeholder: the placeholder anywhere in the head other than the
 *   placement (another header, the path, the user half of Basic) is refused,
 *   so a misplaced placeholder is never sent upstream. inject = always: the
 *   placement is overwritten and a placeholder elsewhere is sent unchanged.
 * - Two placement headers (or two query parameters of the name) with
 *   inject = placeholder: refused (a server could read either one).
 * - A sandbox the binding excludes: a request carrying the placeholder is
 *   refused; one without it is forwarded untouched (CRED_NOT_APPLIED), also
 *   for inject = always: the binding does not exist for that sandbox.
 * - A secret with a control byte cannot be put in a header (refused).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cred.h"
#include "encode.h"

/* ---- destinations ------------------------------------------------------ */

bool
cred_dest_match(const struct cred_dest *d, const char *host, uint16_t port, const char *path)
{
	if (!d->host || !host || d->port != port)
		return false;
	if (d->wildcard) {
		size_t hl = strlen(host), dl = strlen(d->host);
		/* strict subdomain: at least one byte of label, then ".domain" */
		if (hl < dl + 2 || host[hl - dl - 1] != '.' || strcmp(host + hl - dl, d->host) != 0)
			return false;
	} else if (strcmp(host, d->host) != 0) {
		return false;
	}
	if (!path || !d->path_prefix)
		return true;
	/* whole segments; a trailing '/' of the prefix is not significant */
	size_t pl = strlen(d->path_prefix);
	while (pl > 0 && d->path_prefix[pl - 1] == '/')
		pl--;
	if (strncmp(path, d->path_prefix, pl) != 0)
		return false;
	return path[pl] == '\0' || path[pl] == '/';
}

const struct cred_binding *
cred_find(const struct cred_binding *b, size_t n, const char *host, uint16_t port,
	  const char *path)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < b[i].n_dest; j++)
			if (cred_dest_match(&b[i].dest[j], host, port, path))
				return &b[i];
	return NULL;
}

bool
cred_host_bound(const struct cred_binding *b, size_t n, const char *host, uint16_t port)
{
	return cred_find(b, n, host, port, NULL) != NULL;
}

bool
cred_applies_to_sandbox(const struct cred_binding *b, const char *sandbox)
{
	if (b->n_sandboxes == 0)
		return true;
	if (!sandbox)
		return false;
	for (size_t i = 0; i < b->n_sandboxes; i++)
		if (b->sandboxes[i] && strcmp(b->sandboxes[i], sandbox) == 0)
			return true;
	return false;
}

/* ---- finding the placeholder ------------------------------------------- */

static bool
mem_has(const void *h, size_t hn, const char *needle)
{
	size_t nn = strlen(needle);
	return nn > 0 && hn >= nn && memmem(h, hn, needle, nn) != NULL;
}

/* "Basic <token68>" with the scheme in any case and one or more spaces:
 * the token, or NULL. */
static const char *
basic_token(const char *value)
{
	if (strncasecmp(value, "Basic", 5) != 0 || value[5] != ' ')
		return NULL;
	const char *t = value + 5;
	while (*t == ' ')
		t++;
	return *t ? t : NULL;
}

/*
 * Whether s carries the placeholder: as it is, percent-decoded, or inside a
 * Basic credential. *err = -ENOMEM when a decode could not be made (the
 * callers then refuse rather than guess).
 */
static bool
str_carries(const char *s, const char *ph, int *err)
{
	if (!s)
		return false;
	size_t n = strlen(s);
	if (mem_has(s, n, ph))
		return true;
	if (memchr(s, '%', n)) {
		size_t dn;
		char *d = enc_pct_decode(s, n, &dn);
		if (!d) {
			*err = -ENOMEM;
			return false;
		}
		bool has = mem_has(d, dn, ph);
		free(d);
		if (has)
			return true;
	}
	const char *tok = basic_token(s);
	if (tok) {
		size_t dn;
		char *d = enc_b64_decode(tok, &dn);
		if (d) {
			bool has = mem_has(d, dn, ph);
			free(d);
			if (has)
				return true;
		}
	}
	return false;
}

/* The head carries the placeholder anywhere: target, origin, any header
 * name or value except header index skip (SIZE_MAX: none). */
static bool
head_carries(const struct http_request *req, bool scan_target, const char *origin,
	     size_t skip, const char *ph, int *err)
{
	if (scan_target && str_carries(req->target, ph, err))
		return true;
	if (str_carries(origin, ph, err))
		return true;
	for (size_t i = 0; i < req->n_headers; i++) {
		if (str_carries(req->headers[i].name, ph, err))
			return true;
		if (i != skip && str_carries(req->headers[i].value, ph, err))
			return true;
	}
	return false;
}

const struct cred_binding *
cred_find_placeholder(const struct cred_binding *b, size_t n, const struct http_request *req,
		      const char *origin_form)
{
	for (size_t i = 0; i < n; i++) {
		int err = 0;
		if (!b[i].placeholder || !b[i].placeholder[0])
			continue;
		if (head_carries(req, true, origin_form, SIZE_MAX, b[i].placeholder, &err) ||
		    err < 0)
			return &b[i]; /* on ENOMEM: say it carries it (the caller refuses) */
	}
	return NULL;
}

/* ---- messages ---------------------------------------------------------- */

/* A host to name in a message: the Host field when it is plainly a host
 * (letters, digits, . - : [ ]), else a neutral phrase. */
static void
describe_host(const struct http_request *req, char *out, size_t out_len)
{
	const char *v = NULL;
	for (size_t i = 0; i < req->n_headers; i++)
		if (req->headers[i].name && strcasecmp(req->headers[i].name, "Host") == 0) {
			v = req->headers[i].value;
			break;
		}
	size_t n = v ? strlen(v) : 0;
	bool plain = n > 0 && n <= 200;
	for (size_t i = 0; plain && i < n; i++) {
		char c = v[i];
		plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9') || c == '.' || c == '-' || c == ':' || c == '[' ||
			c == ']';
	}
	if (plain)
		snprintf(out, out_len, "%s", v);
	else
		snprintf(out, out_len, "this destination");
}

static void
describe_placement(const struct cred_binding *b, char *out, size_t out_len)
{
	switch (b->placement) {
	case CRED_HEADER:
		if (b->prefix && b->prefix[0])
			snprintf(out, out_len, "the %s header, after \"%s\"",
				 b->header ? b->header : "Authorization", b->prefix);
		else
			snprintf(out, out_len, "the %s header",
				 b->header ? b->header : "Authorization");
		break;
	case CRED_BASIC_AUTH:
		snprintf(out, out_len, "the password of the Authorization: Basic credentials");
		break;
	case CRED_QUERY_PARAM:
		snprintf(out, out_len, "the query parameter %s", b->param ? b->param : "?");
		break;
	default:
		snprintf(out, out_len, "its placement");
		break;
	}
}

/* Format why, then make sure neither the secret nor the placeholder is in it. */
static void __attribute__((format(printf, 4, 5)))
set_why(const struct cred_binding *b, char *why, size_t why_len, const char *fmt, ...)
{
	if (!why || why_len == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
	size_t n = strlen(why);
	bool leak = (b->placeholder && mem_has(why, n, b->placeholder)) ||
		    (b->secret && b->secret_len > 0 && n >= b->secret_len &&
		     memmem(why, n, b->secret, b->secret_len) != NULL);
	if (leak)
		snprintf(why, why_len, "[%s] refused the request", b->name ? b->name : "egress");
}

/* ---- the rewrite ------------------------------------------------------- */

/* Everything the commit step installs; all allocated before anything changes. */
struct rewrite {
	size_t placement_idx;     /* header whose value becomes new_value; SIZE_MAX: append */
	char *new_name;           /* for an appended placement header */
	char *new_value;          /* the placement header's new value, or NULL */
	char *new_origin;         /* the new *origin_form, or NULL */
	char *ae_name, *ae_value; /* Accept-Encoding: identity */
	bool *drop;               /* per header: remove it */
};

static void
rewrite_free(struct rewrite *rw)
{
	free(rw->new_name);
	free(rw->new_value);
	if (rw->new_origin) {
		explicit_bzero(rw->new_origin, strlen(rw->new_origin));
		free(rw->new_origin);
	}
	free(rw->ae_name);
	free(rw->ae_value);
	free(rw->drop);
}

static void
free_secret_string(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

static bool
name_is(const struct http_header *h, const char *name)
{
	return h->name && strcasecmp(h->name, name) == 0;
}

/* prefix + secret as a header value; NULL on ENOMEM. */
static char *
join_value(const char *prefix, const uint8_t *secret, size_t len)
{
	size_t pl = strlen(prefix);
	char *v = malloc(pl + len + 1);
	if (!v)
		return NULL;
	memcpy(v, prefix, pl);
	memcpy(v + pl, secret, len);
	v[pl + len] = '\0';
	return v;
}

/* A query parameter's name and value spans inside an origin-form. */
struct qparam {
	size_t start, end;       /* the piece "name[=value]" */
	size_t vstart;           /* start of the value (== end when no '=') */
	bool has_eq;
};

/* Decoded comparison of s[a..b) with want. */
static int
span_equals(const char *s, size_t a, size_t b, const char *want, bool *eq)
{
	size_t dn;
	char *d = enc_pct_decode(s + a, b - a, &dn);
	if (!d)
		return -ENOMEM;
	*eq = dn == strlen(want) && memcmp(d, want, dn) == 0;
	explicit_bzero(d, dn);
	free(d);
	return 0;
}

/*
 * The occurrences of parameter `param` in origin's query: up to cap of them in
 * out, the total count returned (or -ENOMEM).
 */
static int
find_params(const char *origin, const char *param, struct qparam *out, size_t cap)
{
	const char *q = strchr(origin, '?');
	if (!q)
		return 0;
	size_t n = strlen(origin), i = (size_t)(q - origin) + 1;
	int count = 0;
	while (i <= n) {
		size_t e = i;
		while (e < n && origin[e] != '&')
			e++;
		size_t eq = i;
		while (eq < e && origin[eq] != '=')
			eq++;
		bool match;
		int rc = span_equals(origin, i, eq, param, &match);
		if (rc < 0)
			return rc;
		if (match && e > i) {
			if ((size_t)count < cap)
				out[count] = (struct qparam){ i, e, eq < e ? eq + 1 : e, eq < e };
			count++;
		}
		i = e + 1;
	}
	return count;
}

/* origin with the pieces in ps (sorted) replaced: ps[0]'s value becomes repl
 * (NULL: the piece is kept with an empty value), the others removed. */
static char *
splice_params(const char *origin, const struct qparam *ps, size_t np, const char *repl,
	      const char *param)
{
	size_t n = strlen(origin), rl = repl ? strlen(repl) : 0, pl = strlen(param);
	char *out = malloc(n + rl + pl + 3);
	if (!out)
		return NULL;
	size_t o = 0, i = 0;
	for (size_t k = 0; k < np; k++) {
		memcpy(out + o, origin + i, ps[k].start - i);
		o += ps[k].start - i;
		if (k == 0) {
			/* keep the name as the client spelled it */
			memcpy(out + o, origin + ps[k].start, ps[k].vstart - ps[k].start);
			o += ps[k].vstart - ps[k].start;
			if (!ps[k].has_eq)
				out[o++] = '=';
			memcpy(out + o, repl ? repl : "", rl);
			o += rl;
			i = ps[k].end;
		} else {
			/* drop the piece and the '&' before it */
			if (o > 0 && out[o - 1] == '&')
				o--;
			i = ps[k].end;
		}
	}
	memcpy(out + o, origin + i, n - i);
	o += n - i;
	out[o] = '\0';
	return out;
}

/* origin + "?param=value" or "&param=value". */
static char *
append_param(const char *origin, const char *param, const char *value)
{
	size_t n = strlen(origin);
	const char *sep = strchr(origin, '?') ? (n > 0 && (origin[n - 1] == '?' ||
							   origin[n - 1] == '&') ? "" : "&")
					      : "?";
	size_t len = n + strlen(sep) + strlen(param) + 1 + strlen(value) + 1;
	char *out = malloc(len);
	if (!out)
		return NULL;
	snprintf(out, len, "%s%s%s=%s", origin, sep, param, value);
	return out;
}

static bool
secret_fits_header(const struct cred_binding *b)
{
	for (size_t i = 0; i < b->secret_len; i++) {
		uint8_t c = b->secret[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return false;
	}
	return true;
}

/* Install a prepared rewrite; cannot fail. */
static void
rewrite_commit(struct rewrite *rw, struct http_request *req, char **origin_form)
{
	struct http_header *h = req->headers;
	size_t o = 0;
	if (rw->new_value && rw->placement_idx != SIZE_MAX) {
		free_secret_string(h[rw->placement_idx].value);
		h[rw->placement_idx].value = rw->new_value;
		rw->new_value = NULL;
	}
	for (size_t i = 0; i < req->n_headers; i++) {
		if (rw->drop[i]) {
			free(h[i].name);
			free_secret_string(h[i].value);
			continue;
		}
		h[o++] = h[i];
	}
	if (rw->new_value) {
		h[o++] = (struct http_header){ rw->new_name, rw->new_value };
		rw->new_name = rw->new_value = NULL;
	}
	h[o++] = (struct http_header){ rw->ae_name, rw->ae_value };
	rw->ae_name = rw->ae_value = NULL;
	req->n_headers = o;
	if (rw->new_origin) {
		free(*origin_form);
		*origin_form = rw->new_origin;
		rw->new_origin = NULL;
	}
}

int
cred_apply(const struct cred_binding *b, const char *sandbox, struct http_request *req,
	   char **origin_form, char *why, size_t why_len)
{
	const char *ph = b->placeholder ? b->placeholder : "";
	const char *name = b->name ? b->name : "egress";
	char host[208], where[200];
	struct rewrite rw = { .placement_idx = SIZE_MAX };
	int err = 0, rc;

	if (why && why_len)
		why[0] = '\0';
	if (!origin_form)
		origin_form = &req->target;
	if (!ph[0] || !b->secret || b->secret_len == 0) {
		set_why(b, why, why_len, "[%s] has no placeholder or secret", name);
		return -EACCES;
	}
	describe_host(req, host, sizeof(host));
	describe_placement(b, where, sizeof(where));

	bool carries = head_carries(req, true, *origin_form, SIZE_MAX, ph, &err);
	if (err < 0)
		return err;
	if (!cred_applies_to_sandbox(b, sandbox)) {
		if (!carries)
			return CRED_NOT_APPLIED;
		set_why(b, why, why_len,
			"the request to %s carries the credential placeholder of [%s], which is "
			"not bound for sandbox %s",
			host, name, sandbox ? sandbox : "(none)");
		return -EACCES;
	}

	bool always = b->inject == CRED_INJECT_ALWAYS;
	rw.drop = calloc(req->n_headers + 1, sizeof(*rw.drop));
	rw.ae_name = strdup("Accept-Encoding");
	rw.ae_value = strdup("identity");
	if (!rw.drop || !rw.ae_name || !rw.ae_value) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < req->n_headers; i++)
		if (name_is(&req->headers[i], "Accept-Encoding"))
			rw.drop[i] = true;

	if (b->placement == CRED_HEADER || b->placement == CRED_BASIC_AUTH) {
		bool basic = b->placement == CRED_BASIC_AUTH;
		const char *hname = basic ? "Authorization" : b->header ? b->header : "Authorization";
		const char *prefix = basic ? "" : b->prefix ? b->prefix : "";
		size_t pl = strlen(prefix), found = SIZE_MAX, count = 0;
		bool at_placement = false;

		if (!basic && !secret_fits_header(b)) {
			set_why(b, why, why_len,
				"the secret of [%s] cannot be sent in a header (it contains a "
				"control character)",
				name);
			rc = -EACCES;
			goto out;
		}
		for (size_t i = 0; i < req->n_headers; i++) {
			if (!name_is(&req->headers[i], hname))
				continue;
			if (count++ == 0)
				found = i;
			else
				rw.drop[i] = true; /* always: one placement header survives */
		}
		if (found != SIZE_MAX && !always) {
			const char *v = req->headers[found].value ? req->headers[found].value : "";
			if (basic) {
				const char *tok = basic_token(v);
				size_t dn = 0;
				char *d = tok ? enc_b64_decode(tok, &dn) : NULL;
				char *colon = d ? memchr(d, ':', dn) : NULL;
				/* user (no ':') ":" placeholder, and the user is not the placeholder */
				at_placement = colon && strcmp(colon + 1, ph) == 0 &&
					       !mem_has(d, (size_t)(colon - d), ph);
				if (d) {
					explicit_bzero(d, dn);
					free(d);
				}
			} else {
				at_placement = strncasecmp(v, prefix, pl) == 0 &&
					       strcmp(v + pl, ph) == 0;
			}
		}
		if (!always) {
			if (count > 1) {
				set_why(b, why, why_len,
					"the request to %s has more than one %s header; [%s] needs "
					"exactly one",
					host, hname, name);
				rc = -EACCES;
				goto out;
			}
			if (!at_placement) {
				set_why(b, why, why_len,
					"the request to %s does not carry the credential placeholder "
					"of [%s] in %s (inject = placeholder)",
					host, name, where);
				rc = -EACCES;
				goto out;
			}
			if (head_carries(req, false, *origin_form, found, ph, &err) || err < 0) {
				if (err < 0) {
					rc = err;
					goto out;
				}
				set_why(b, why, why_len,
					"the request to %s carries the credential placeholder of [%s] "
					"outside %s",
					host, name, where);
				rc = -EACCES;
				goto out;
			}
		}
		if (basic) {
			size_t tn;
			char *tok = enc_b64(b->secret, b->secret_len, ENC_B64_STD, true, &tn);
			if (tok) {
				rw.new_value = malloc(tn + 7);
				if (rw.new_value)
					snprintf(rw.new_value, tn + 7, "Basic %s", tok);
				free_secret_string(tok);
			}
		} else {
			rw.new_value = join_value(prefix, b->secret, b->secret_len);
		}
		if (!rw.new_value) {
			rc = -ENOMEM;
			goto out;
		}
		if (found != SIZE_MAX) {
			rw.placement_idx = found;
		} else if (!(rw.new_name = strdup(hname))) {
			rc = -ENOMEM;
			goto out;
		}
	} else if (b->placement == CRED_QUERY_PARAM) {
		const char *param = b->param ? b->param : "";
		struct qparam ps[16];
		const char *origin = *origin_form ? *origin_form : "";
		int np = param[0] ? find_params(origin, param, ps, 16) : 0;
		if (np < 0) {
			rc = np;
			goto out;
		}
		if (!param[0] || (always && np > 16)) {
			set_why(b, why, why_len, "[%s] cannot place its secret in this query", name);
			rc = -EACCES;
			goto out;
		}
		if (!always) {
			bool eq = false;
			if (np > 1) {
				set_why(b, why, why_len,
					"the request to %s has the query parameter %s more than once; "
					"[%s] needs exactly one",
					host, param, name);
				rc = -EACCES;
				goto out;
			}
			if (np == 1 && (rc = span_equals(origin, ps[0].vstart, ps[0].end, ph, &eq)) < 0)
				goto out;
			if (!eq) {
				set_why(b, why, why_len,
					"the request to %s does not carry the credential placeholder "
					"of [%s] in %s (inject = placeholder)",
					host, name, where);
				rc = -EACCES;
				goto out;
			}
			/* elsewhere: the origin with that value emptied, and every header */
			char *rest = splice_params(origin, ps, 1, NULL, param);
			if (!rest) {
				rc = -ENOMEM;
				goto out;
			}
			bool elsewhere = head_carries(req, false, rest, SIZE_MAX, ph, &err);
			free(rest);
			if (err < 0) {
				rc = err;
				goto out;
			}
			if (elsewhere) {
				set_why(b, why, why_len,
					"the request to %s carries the credential placeholder of [%s] "
					"outside %s",
					host, name, where);
				rc = -EACCES;
				goto out;
			}
		}
		size_t en;
		char *enc = enc_pct(b->secret, b->secret_len, true, &en);
		if (!enc) {
			rc = -ENOMEM;
			goto out;
		}
		rw.new_origin = np > 0 ? splice_params(origin, ps, (size_t)np, enc, param)
				       : append_param(origin, param, enc);
		free_secret_string(enc);
		if (!rw.new_origin) {
			rc = -ENOMEM;
			goto out;
		}
	} else {
		set_why(b, why, why_len, "[%s] has an unknown placement", name);
		rc = -EACCES;
		goto out;
	}

	/* room for the appended placement header and Accept-Encoding */
	struct http_header *nh = realloc(req->headers, (req->n_headers + 2) * sizeof(*nh));
	if (!nh) {
		rc = -ENOMEM;
		goto out;
	}
	req->headers = nh;
	rewrite_commit(&rw, req, origin_form);
	rc = 0;
out:
	if (rw.new_value) {
		explicit_bzero(rw.new_value, strlen(rw.new_value));
	}
	rewrite_free(&rw);
	return rc;
}
