/* SPDX-License-Identifier: Apache-2.0 */
/*
 * envnames.h — the environment variable names box reserves (docs/box.ini.5.md
 * [agent.env]): what box sets itself in a contained sandbox (the gateway's
 * proxy and CA variables, which boxd/plan.c sets, PWD, USER, BOX_*), and the
 * interpreter hooks that would run code before a program's own (LD_*,
 * PYTHON*, NODE_OPTIONS, BASH_ENV …). One list for boxctl (a config naming
 * one is refused), boxd (re-checked before a plan; a tool's assigned
 * variables filtered) and box-shell (the alias's environment filtered).
 * Library code: pure, never logs.
 */
#ifndef BOX_ENVNAMES_H
#define BOX_ENVNAMES_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The variables that make a client trust the box CA (/run/box/ca.pem) wherever a user's own
 * configuration could point it elsewhere: the environment wins over npm's npmrc (cafile),
 * pip's pip.conf (cert) and cargo's config (http.cainfo).
 */
#define BOX_ENV_CA_VARIABLES                                                              \
	"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",   \
		"AWS_CA_BUNDLE", "GIT_SSL_CAINFO", "npm_config_cafile", "PIP_CERT",       \
		"CARGO_HTTP_CAINFO"

/* The variables that name the gateway's proxy (http://127.0.0.1:PORT), likewise. */
#define BOX_ENV_PROXY_VARIABLES                                                           \
	"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "npm_config_proxy",     \
		"npm_config_https_proxy", "PIP_PROXY", "CARGO_HTTP_PROXY"

/* The variables that keep loopback off the proxy (localhost,127.0.0.1,::1). */
#define BOX_ENV_NO_PROXY_VARIABLES "NO_PROXY", "no_proxy", "npm_config_noproxy"

/* Every name reserved exactly (box_env_reserved adds the prefixes LD_, PYTHON, BOX_). */
#define BOX_ENV_RESERVED_NAMES                                                            \
	BOX_ENV_CA_VARIABLES, BOX_ENV_PROXY_VARIABLES, BOX_ENV_NO_PROXY_VARIABLES,        \
		"ALL_PROXY", "all_proxy", "SSL_CERT_DIR", "NODE_USE_ENV_PROXY", "PWD",   \
		"USER", "NODE_OPTIONS", "BASH_ENV", "ENV", "PERL5LIB", "PERL5OPT",        \
		"RUBYOPT", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "GCONV_PATH", "LOCPATH"

/* Is the variable NAME (its first LEN bytes) reserved? */
bool box_env_reserved_n(const char *name, size_t len);
/* The same for a NUL-terminated name. */
bool box_env_reserved(const char *name);

#endif
