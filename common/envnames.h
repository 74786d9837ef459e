/*
 * envnames.h — the environment box sets in a contained sandbox itself, in one place: the
 * gateway's variables (boxd/plan.c sets them), the names a box.ini [*.env] section may not
 * set (boxctl/config_parse.c) and box-shell leaves out of an invocation's environment
 * (box-shell/invocation.c), as box.ini(5) lists them. Names starting LD_, PYTHON and BOX_
 * are reserved too (each user checks the prefixes itself).
 * Trusts: nothing; constants.
 */
#ifndef BOX_ENVNAMES_H
#define BOX_ENVNAMES_H

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

/* Every name reserved exactly. */
#define BOX_ENV_RESERVED_NAMES                                                            \
	BOX_ENV_CA_VARIABLES, BOX_ENV_PROXY_VARIABLES, BOX_ENV_NO_PROXY_VARIABLES,        \
		"ALL_PROXY", "all_proxy", "SSL_CERT_DIR", "NODE_USE_ENV_PROXY", "PWD",   \
		"USER", "NODE_OPTIONS", "BASH_ENV", "ENV", "PERL5LIB", "PERL5OPT",        \
		"RUBYOPT", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "GCONV_PATH", "LOCPATH"

#endif
