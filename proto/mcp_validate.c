/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mcp_validate.c — validators for box-mcpd's two protocols (proto_mcp.h).
 * Shape and ranges only: which program a server runs, with which grants, is
 * boxd's business (it re-checks every McpServerStart against its own
 * config); what a JSON-RPC frame means is box-mcpd's.
 * Names follow docs/box.ini.5.md [mcp.NAME]: a server name is 1-32 of [A-Za-z0-9_-]
 * (not "Box", not starting with a digit, not a Cedar keyword: its namespace
 * must be a Cedar identifier), an alias 1-32 of [A-Za-z0-9._-] but not "." or
 * "..", and the namespace must be the server name normalized (docs/box-policy.5.md).
 * Trusts: nothing. Pure; never logs.
 */
#include <errno.h>
#include <string.h>

#include "path.h"
#include "proto_mcp.h"
#include "text.h"
#include "validate_macros.h"

#define PATH_MAX_LEN 4095u

/* Absolute, clean (no "." or ".." component, no "//", no trailing "/"). */
static bool
abs_path_ok(const char *s)
{
	return box_text_len_ok(s, 1, PATH_MAX_LEN) && path_is_clean_absolute(s);
}

/* One line of UTF-8 for a human: 1..4096 bytes, no control character. */
static bool
message_ok(const char *s)
{
	return box_text_utf8_ok(s, 1, BOX_MCP_MESSAGE_MAX);
}

static int
strings_ok(char **v, size_t n, size_t min_n)
{
	REQUIRE(n >= min_n, -EINVAL);
	REQUIRE(n <= BOX_MCP_ARGS_MAX, -E2BIG);
	for (size_t i = 0; i < n; i++)
		REQUIRE(box_text_len_ok(v[i], 0, BOX_MCP_ARG_MAX), -EINVAL);
	return 0;
}

bool
box_valid_mcp_alias(const char *s)
{
	return box_text_len_ok(s, 1, BOX_MCP_ALIAS_MAX) && box_text_all_in(s, "._-") &&
	       strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

bool
box_mcp_namespace(const char *name, char *ns, size_t size)
{
	if (!box_valid_name(name) || size <= strlen(name))
		return false;
	size_t i = 0;
	for (; name[i]; i++)
		ns[i] = name[i] == '-' ? '_' : name[i];
	ns[i] = 0;
	return true;
}

/* A namespace Cedar can parse and policyd accepts (docs/box-policy.5.md). */
static bool
namespace_ok(const char *ns)
{
	static const char *const keywords[] = { "true", "false", "if",     "then",  "else",
						"in",   "like",  "has",    "is",    "permit",
						"forbid", "when", "unless", "__cedar" };
	size_t n = strnlen(ns, BOX_NAME_MAX + 1);
	if (n == 0 || n > BOX_NAME_MAX || !box_text_is_word(ns, n, false))
		return false;
	if (ns[0] >= '0' && ns[0] <= '9')
		return false;
	if (strcmp(ns, "Box") == 0)
		return false;
	for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
		if (strcmp(ns, keywords[i]) == 0)
			return false;
	return true;
}

int
box_validate_mcp_open(const Box__McpOpen *m)
{
	REQUIRE(box_valid_mcp_alias(m->alias), -EINVAL);
	TRY(strings_ok(m->args, m->n_args, 0));
	REQUIRE(abs_path_ok(m->cwd), -EINVAL);
	return 0;
}

int
box_validate_mcp_close(const Box__McpClose *m)
{
	REQUIRE(m->status >= 0 && m->status <= 255, -ERANGE);
	if (m->message)
		REQUIRE(m->message[0] == 0 || message_ok(m->message), -EINVAL);
	return 0;
}

static int
server_ok(const Box__McpServer *s)
{
	char want[BOX_NAME_MAX + 1];
	REQUIRE(box_mcp_namespace(s->name, want, sizeof want), -EINVAL);
	REQUIRE(namespace_ok(s->ns) && strcmp(s->ns, want) == 0, -EINVAL);
	REQUIRE(box_valid_mcp_alias(s->alias), -EINVAL);
	REQUIRE(abs_path_ok(s->program_path), -EINVAL);
	TRY(strings_ok(s->argv, s->n_argv, 1));
	REQUIRE(s->argv[0][0] != 0, -EINVAL);
	REQUIRE(abs_path_ok(s->cwd), -EINVAL);
	REQUIRE(s->max_frame >= BOX_MCP_MAX_FRAME_MIN && s->max_frame <= BOX_MCP_MAX_FRAME_MAX,
		-ERANGE);
	REQUIRE(s->call_timeout_ms >= 1 && s->call_timeout_ms <= BOX_MCP_TIMEOUT_MAX_MS, -ERANGE);
	return 0;
}

int
box_validate_mcp_init(const Box__McpInit *m)
{
	REQUIRE(box_valid_name(m->box_name), -EINVAL);
	REQUIRE(box_valid_box_id(m->box_id), -EINVAL);
	REQUIRE(abs_path_ok(m->home), -EINVAL);
	REQUIRE(m->n_servers <= BOX_MCP_SERVERS_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_servers; i++) {
		const Box__McpServer *s = m->servers[i];
		TRY(server_ok(s));
		/* Unique names, aliases and namespaces (a-b and a_b share one). */
		for (size_t j = 0; j < i; j++) {
			const Box__McpServer *o = m->servers[j];
			REQUIRE(strcmp(o->name, s->name) != 0 && strcmp(o->alias, s->alias) != 0 &&
					strcmp(o->ns, s->ns) != 0,
				-EINVAL);
		}
	}
	return 0;
}

int
box_validate_mcp_ready(const Box__McpReady *m)
{
	if (m->ok)
		REQUIRE(!m->error, -EINVAL);
	else
		REQUIRE(message_ok(m->error), -EINVAL);
	return 0;
}

int
box_validate_mcp_server_start(const Box__McpServerStart *m)
{
	REQUIRE(m->start_id != 0, -EINVAL);
	REQUIRE(box_valid_name(m->server), -EINVAL);
	return 0;
}

int
box_validate_mcp_server_started(const Box__McpServerStarted *m)
{
	REQUIRE(m->start_id != 0, -EINVAL);
	if (m->ok)
		REQUIRE(!m->error, -EINVAL);
	else
		REQUIRE(message_ok(m->error), -EINVAL);
	return 0;
}

int
box_validate_mcp_server_exit(const Box__McpServerExit *m)
{
	REQUIRE(m->start_id != 0, -EINVAL);
	REQUIRE(m->status >= 0 && m->status <= 255, -ERANGE);
	return 0;
}

int
box_validate_mcp_server_stop(const Box__McpServerStop *m)
{
	REQUIRE(m->start_id != 0, -EINVAL);
	return 0;
}
