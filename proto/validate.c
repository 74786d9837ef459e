/* SPDX-License-Identifier: Apache-2.0 */
/*
 * validate.c — hand-written validators for the boxctl <-> boxd messages.
 *
 * Called by box_ipc_decode() after the generic checks (required fields,
 * unknown fields, declared enum values), so every required pointer is set
 * and every enum is in range here. What remains is meaning: lengths,
 * charsets, ranges, clean absolute paths, counts, uniqueness of section
 * names, combinations of keys, and that each origin (file index, line)
 * points inside the spec. The rules mirror docs/box.ini.5.md; boxctl refuses
 * earlier with better messages, so a refusal here means a broken or hostile
 * client.
 * Trusts: nothing; pure functions over a decoded tree. Never logs.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "path.h"
#include "text.h"
#include "validate.h"
#include "validate_macros.h"

#define DAY_MS (24ull * 3600 * 1000)
#define YEAR_MS (366ull * DAY_MS)

/* What the checks of one spec need to know about the whole spec. */
struct vctx {
	size_t n_files;
};

/* ---- strings ----------------------------------------------------------- */

#define str_len_ok box_text_len_ok
#define no_ctl box_text_no_ctl
#define all_in box_text_all_in

static bool
no_space_or_ctl(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s <= 0x20 || *s == 0x7f)
			return false;
	return true;
}

/* A short text field: 0..max bytes without control characters. */
static int
v_text(const char *s, size_t max)
{
	REQUIRE(str_len_ok(s, 0, max), -E2BIG);
	REQUIRE(no_ctl(s), -EINVAL);
	return 0;
}

/* JSON text (control characters escaped, so none raw but DEL): UTF-8, within MAX bytes. */
static int
v_json_text(const char *s, size_t max)
{
	size_t n = strnlen(s, max + 1);
	REQUIRE(n >= 2 && n <= max, -E2BIG);
	REQUIRE(box_valid_utf8(s, n), -EINVAL);
	for (size_t i = 0; i < n; i++)
		REQUIRE((unsigned char)s[i] >= 0x20, -EINVAL);
	return 0;
}

static int
v_opt_text(const char *s, size_t max)
{
	return s ? v_text(s, max) : 0;
}

/* ---- config values ----------------------------------------------------- */

static int
v_origin(const struct vctx *x, uint32_t line, uint32_t file)
{
	REQUIRE(line >= 1 && line <= BOX_LINE_MAX, -ERANGE);
	REQUIRE(file < x->n_files, -ERANGE);
	return 0;
}

/* A section header line: 0 means the section was absent. */
static int
v_section_line(uint32_t line)
{
	REQUIRE(line <= BOX_LINE_MAX, -ERANGE);
	return 0;
}

static int
v_cfg_str(const struct vctx *x, const Box__CfgStr *v, size_t min, size_t max)
{
	TRY(v_origin(x, v->line, v->file));
	REQUIRE(str_len_ok(v->value, min, max), -E2BIG);
	REQUIRE(no_ctl(v->value), -EINVAL);
	return 0;
}

static int
v_cfg_u64(const struct vctx *x, const Box__CfgU64 *v, uint64_t min, uint64_t max)
{
	if (!v)
		return 0;
	TRY(v_origin(x, v->line, v->file));
	REQUIRE(v->value >= min && v->value <= max, -ERANGE);
	return 0;
}

static int
v_cfg_bool(const struct vctx *x, const Box__CfgBool *v)
{
	return v ? v_origin(x, v->line, v->file) : 0;
}

static int
v_cfg_path(const struct vctx *x, const Box__CfgPath *v)
{
	if (!v)
		return 0;
	TRY(v_origin(x, v->line, v->file));
	REQUIRE(box_valid_path(v->path), -EINVAL);
	return 0;
}

static int
v_cfg_argv(const struct vctx *x, const Box__CfgArgv *v)
{
	TRY(v_origin(x, v->line, v->file));
	REQUIRE(v->n_argv >= 1, -EINVAL);
	REQUIRE(v->n_argv <= BOX_ARGV_MAX, -E2BIG);
	size_t total = 0;
	for (size_t i = 0; i < v->n_argv; i++) {
		REQUIRE(v->argv[i], -EINVAL);
		size_t n = strnlen(v->argv[i], BOX_ARGV_BYTES_MAX + 1);
		total += n + 1;
		REQUIRE(total <= BOX_ARGV_BYTES_MAX, -E2BIG);
	}
	/* argv[0]: an absolute clean path, or a bare name resolved on PATH. */
	const char *a0 = v->argv[0];
	if (a0[0] == '/')
		REQUIRE(box_valid_path(a0), -EINVAL);
	else
		REQUIRE(a0[0] && !strchr(a0, '/') && no_space_or_ctl(a0) &&
				strcmp(a0, ".") != 0 && strcmp(a0, "..") != 0,
			-EINVAL);
	return 0;
}

static int
v_cfg_env(const struct vctx *x, const Box__CfgEnv *v)
{
	if (!v)
		return 0;
	TRY(v_section_line(v->line));
	REQUIRE(v->n_vars <= BOX_ENV_MAX, -E2BIG);
	for (size_t i = 0; i < v->n_vars; i++) {
		const Box__CfgEnvVar *e = v->vars[i];
		TRY(v_origin(x, e->line, e->file));
		REQUIRE(box_valid_env_name(e->name), -EINVAL);
		REQUIRE(str_len_ok(e->value, 0, BOX_ENV_VALUE_MAX), -E2BIG);
		for (size_t j = 0; j < i; j++)
			REQUIRE(strcmp(v->vars[j]->name, e->name) != 0, -EINVAL);
	}
	return 0;
}

static int
v_path_list(const struct vctx *x, Box__CfgPath *const *list, size_t n)
{
	REQUIRE(n <= BOX_FS_LIST_MAX, -E2BIG);
	for (size_t i = 0; i < n; i++)
		TRY(v_cfg_path(x, list[i]));
	return 0;
}

static int
v_cfg_filesystem(const struct vctx *x, const Box__CfgFilesystem *v, bool allow_exec)
{
	if (!v)
		return 0;
	TRY(v_section_line(v->line));
	TRY(v_path_list(x, v->read, v->n_read));
	TRY(v_path_list(x, v->write, v->n_write));
	TRY(v_path_list(x, v->read_file, v->n_read_file));
	TRY(v_path_list(x, v->write_file, v->n_write_file));
	TRY(v_path_list(x, v->deny, v->n_deny));
	REQUIRE(allow_exec || v->n_exec == 0, -EINVAL);
	TRY(v_path_list(x, v->exec, v->n_exec));
	return 0;
}

static int
v_cfg_network(const struct vctx *x, const Box__CfgNetwork *v)
{
	if (!v)
		return 0;
	TRY(v_section_line(v->line));
	return v_cfg_bool(x, v->contain_egress);
}

static int
v_cfg_secret(const struct vctx *x, const Box__CfgSecret *v)
{
	if (!v)
		return 0;
	TRY(v_origin(x, v->line, v->file));
	REQUIRE(str_len_ok(v->ref, 1, BOX_PATH_MAX + 8), -E2BIG);
	if (strncmp(v->ref, "env://", 6) == 0)
		REQUIRE(box_valid_env_name(v->ref + 6), -EINVAL);
	else if (strncmp(v->ref, "file://", 7) == 0)
		REQUIRE(box_valid_path(v->ref + 7), -EINVAL);
	else
		return -EINVAL;
	if (v->has_secret_value)
		REQUIRE(v->secret_value.len >= 1 && v->secret_value.len <= BOX_SECRET_MAX,
			-E2BIG);
	return 0;
}

/* An HTTP header name: an RFC 9110 token. */
static bool
is_token(const char *s)
{
	return s[0] && all_in(s, "!#$%&'*+-.^_`|~");
}

static bool
has_crlf(const char *s)
{
	return strpbrk(s, "\r\n") != NULL;
}

/* ---- sections ---------------------------------------------------------- */

static int
v_cfg_box(const struct vctx *x, const Box__CfgBox *v)
{
	TRY(v_origin(x, v->line, 0));
	TRY(v_cfg_str(x, v->name, 1, BOX_NAME_MAX));
	REQUIRE(box_valid_name(v->name->value), -EINVAL);
	TRY(v_cfg_path(x, v->policy));
	TRY(v_cfg_path(x, v->state_dir));
	REQUIRE(v->n_require <= 5, -E2BIG);
	if (v->n_require > 0) {
		unsigned seen = 0;
		REQUIRE(v->has_require_line, -EINVAL);
		TRY(v_origin(x, v->require_line, 0));
		for (size_t i = 0; i < v->n_require; i++) {
			REQUIRE(v->require[i] >= BOX__LAYER__LAYER_USERNS &&
					v->require[i] <= BOX__LAYER__LAYER_SECCOMP,
				-EINVAL);
			unsigned bit = 1u << (unsigned)v->require[i];
			REQUIRE(!(seen & bit), -EINVAL);
			seen |= bit;
		}
		/* userns, mountns and netns cannot be left out (docs/box.ini.5.md [box]). */
		REQUIRE(seen & (1u << BOX__LAYER__LAYER_USERNS), -EINVAL);
		REQUIRE(seen & (1u << BOX__LAYER__LAYER_MOUNTNS), -EINVAL);
		REQUIRE(seen & (1u << BOX__LAYER__LAYER_NETNS), -EINVAL);
	}
	TRY(v_cfg_u64(x, v->timeout_ms, 1, YEAR_MS));
	if (v->has_history_sync)
		REQUIRE(v->has_history_sync_line && v->history_sync_line >= 1 &&
				v->history_sync_line <= BOX_LINE_MAX,
			-EINVAL);
	TRY(v_cfg_u64(x, v->command_timeout_ms, 1, YEAR_MS));
	TRY(v_cfg_u64(x, v->ask_timeout_ms, 1, 3600ULL * 1000));
	TRY(v_cfg_bool(x, v->show_policy));
	TRY(v_cfg_bool(x, v->ask_default));
	TRY(v_cfg_bool(x, v->snapshot));
	TRY(v_cfg_u64(x, v->snapshot_max, 1, 1ULL << 50));
	return 0;
}

static int
v_user(const struct vctx *x, const Box__CfgStr *v)
{
	if (!v)
		return 0;
	TRY(v_cfg_str(x, v, 1, 32));
	REQUIRE(v->value[0] != '-' && all_in(v->value, "._-"), -EINVAL);
	return 0;
}

static int
v_cfg_agent(const struct vctx *x, const Box__CfgAgent *v)
{
	TRY(v_origin(x, v->line, 0));
	TRY(v_cfg_argv(x, v->command));
	TRY(v_cfg_path(x, v->workspace));
	TRY(v_user(x, v->user));
	TRY(v_cfg_u64(x, v->memory_max, 1, UINT64_MAX));
	TRY(v_cfg_u64(x, v->pids_max, 1, 1u << 22));
	TRY(v_cfg_u64(x, v->nofile, 1, 1u << 30));
	TRY(v_cfg_u64(x, v->nproc, 1, 1u << 22));
	TRY(v_cfg_bool(x, v->exec_system));
	TRY(v_cfg_env(x, v->env));
	TRY(v_cfg_filesystem(x, v->filesystem, true));
	if (v->has_supervise)
		REQUIRE(v->has_supervise_line && v->supervise_line >= 1 &&
				v->supervise_line <= BOX_LINE_MAX,
			-EINVAL);
	return 0;
}

static int
v_cfg_tool(const struct vctx *x, const Box__CfgTool *v)
{
	REQUIRE(box_valid_name(v->name), -EINVAL);
	TRY(v_origin(x, v->line, 0));
	TRY(v_cfg_argv(x, v->command));
	TRY(v_cfg_path(x, v->workspace));
	TRY(v_cfg_env(x, v->env));
	TRY(v_cfg_filesystem(x, v->filesystem, false));
	TRY(v_cfg_network(x, v->network));
	TRY(v_cfg_u64(x, v->nofile, 1, 1u << 30));
	TRY(v_cfg_u64(x, v->nproc, 1, 1u << 22));
	if (v->has_supervise)
		REQUIRE(v->has_supervise_line && v->supervise_line >= 1 &&
				v->supervise_line <= BOX_LINE_MAX,
			-EINVAL);
	return 0;
}

/* header / prefix / param shared by [egress] and http [mcp]. */
static int
v_placement(const struct vctx *x, bool has_placement, Box__Placement placement,
	    bool has_line, uint32_t line, const Box__CfgStr *header, const Box__CfgStr *prefix,
	    const Box__CfgStr *param)
{
	if (has_placement)
		REQUIRE(has_line && line >= 1 && line <= BOX_LINE_MAX, -EINVAL);
	if (header) {
		TRY(v_cfg_str(x, header, 1, 256));
		REQUIRE(is_token(header->value), -EINVAL);
	}
	if (prefix) {
		TRY(v_cfg_str(x, prefix, 0, 256));
		REQUIRE(!has_crlf(prefix->value), -EINVAL);
	}
	if (param) {
		TRY(v_cfg_str(x, param, 1, 256));
		REQUIRE(no_space_or_ctl(param->value) && !strpbrk(param->value, "&=#?"), -EINVAL);
	}
	if (has_placement && placement == BOX__PLACEMENT__PLACEMENT_QUERY_PARAM)
		REQUIRE(param, -EINVAL);
	return 0;
}

static int
v_cfg_egress(const struct vctx *x, const Box__CfgEgress *v)
{
	REQUIRE(box_valid_name(v->name), -EINVAL);
	TRY(v_origin(x, v->line, 0));
	REQUIRE(v->n_destinations >= 1, -EINVAL);
	REQUIRE(v->n_destinations <= BOX_DESTINATIONS_MAX, -E2BIG);
	for (size_t i = 0; i < v->n_destinations; i++) {
		TRY(v_cfg_str(x, v->destinations[i], 1, 512));
		REQUIRE(no_space_or_ctl(v->destinations[i]->value), -EINVAL);
	}
	TRY(v_cfg_secret(x, v->secret));
	if (v->variable) {
		TRY(v_cfg_str(x, v->variable, 1, 255));
		REQUIRE(box_valid_env_name(v->variable->value), -EINVAL);
	} else {
		/* A file:// secret has no name to borrow: variable is required. */
		REQUIRE(strncmp(v->secret->ref, "env://", 6) == 0, -EINVAL);
	}
	TRY(v_placement(x, v->has_placement, v->placement, v->has_placement_line,
			v->placement_line, v->header, v->prefix, v->param));
	if (v->has_inject)
		REQUIRE(v->has_inject_line && v->inject_line >= 1 && v->inject_line <= BOX_LINE_MAX,
			-EINVAL);
	if (v->placeholder_prefix) {
		TRY(v_cfg_str(x, v->placeholder_prefix, 0, 64));
		REQUIRE(all_in(v->placeholder_prefix->value, "_-"), -EINVAL);
	}
	/* sandboxes: agent, tool.NAME, mcp.NAME, each once; a line when any. */
	REQUIRE(v->n_sandboxes <= 2 * BOX_SECTIONS_MAX + 1, -E2BIG);
	REQUIRE(!v->n_sandboxes == !v->has_sandboxes_line, -EINVAL);
	if (v->has_sandboxes_line)
		REQUIRE(v->sandboxes_line >= 1 && v->sandboxes_line <= BOX_LINE_MAX, -EINVAL);
	for (size_t i = 0; i < v->n_sandboxes; i++) {
		const char *t = v->sandboxes[i];
		REQUIRE(strcmp(t, "agent") == 0 ||
				(strncmp(t, "tool.", 5) == 0 && box_valid_name(t + 5)) ||
				(strncmp(t, "mcp.", 4) == 0 && box_valid_name(t + 4)),
			-EINVAL);
		for (size_t j = 0; j < i; j++)
			REQUIRE(strcmp(v->sandboxes[j], t) != 0, -EINVAL);
	}
	return 0;
}

static int
v_cfg_mcp(const struct vctx *x, const Box__CfgMcp *v)
{
	REQUIRE(box_valid_name(v->name), -EINVAL);
	TRY(v_origin(x, v->line, 0));
	if (v->has_type_line)
		TRY(v_origin(x, v->type_line, 0));
	TRY(v_cfg_bool(x, v->allow_tool_changes));
	TRY(v_cfg_u64(x, v->max_frame, 1, BOX_MCP_FRAME_MAX));
	TRY(v_cfg_u64(x, v->call_timeout_ms, 1, BOX_MCP_CALL_TIMEOUT_MAX_MS));
	if (v->type == BOX__MCP_TYPE__MCP_TYPE_STDIO) {
		REQUIRE(v->command && !v->url && !v->secret && !v->has_placement && !v->header &&
				!v->prefix,
			-EINVAL);
		TRY(v_cfg_argv(x, v->command));
		if (v->alias) {
			TRY(v_cfg_str(x, v->alias, 1, BOX_NAME_MAX));
			REQUIRE(all_in(v->alias->value, "._-") && strcmp(v->alias->value, ".") != 0 &&
					strcmp(v->alias->value, "..") != 0,
				-EINVAL);
		}
		TRY(v_cfg_env(x, v->env));
		TRY(v_cfg_filesystem(x, v->filesystem, false));
		TRY(v_cfg_network(x, v->network));
		if (v->has_supervise)
			REQUIRE(v->has_supervise_line && v->supervise_line >= 1 &&
					v->supervise_line <= BOX_LINE_MAX,
				-EINVAL);
	} else {
		REQUIRE(v->url && !v->command && !v->alias && !v->env && !v->filesystem &&
				!v->network && !v->has_supervise,
			-EINVAL);
		TRY(v_cfg_str(x, v->url, 9, 2048));
		REQUIRE(strncmp(v->url->value, "https://", 8) == 0 &&
				no_space_or_ctl(v->url->value),
			-EINVAL);
		TRY(v_cfg_secret(x, v->secret));
		TRY(v_placement(x, v->has_placement, v->placement, v->has_placement_line,
				v->placement_line, v->header, v->prefix, NULL));
		REQUIRE(!(v->has_placement &&
			  v->placement == BOX__PLACEMENT__PLACEMENT_QUERY_PARAM),
			-EINVAL);
	}
	return 0;
}

/* [telemetry.NAME]: a file's absolute path, or an otlp collector's http(s) url. */
static int
v_cfg_telemetry(const struct vctx *x, const Box__CfgTelemetry *v)
{
	REQUIRE(box_valid_name(v->name), -EINVAL);
	TRY(v_origin(x, v->line, 0));
	REQUIRE(v->include >= 1 && v->include <= 31, -EINVAL);
	if (v->has_include_line)
		TRY(v_origin(x, v->include_line, 0));
	if (v->kind == BOX__TELEMETRY_KIND__TELEMETRY_KIND_FILE) {
		TRY(v_cfg_str(x, v->destination, 2, BOX_PATH_MAX - 1));
		REQUIRE(box_valid_path(v->destination->value), -EINVAL);
		REQUIRE(!v->has_protocol && !v->secret && !v->has_placement && !v->header &&
				!v->prefix,
			-EINVAL);
		return 0;
	}
	TRY(v_cfg_str(x, v->destination, 8, 2048));
	REQUIRE((strncmp(v->destination->value, "https://", 8) == 0 ||
		 strncmp(v->destination->value, "http://", 7) == 0) &&
			no_space_or_ctl(v->destination->value),
		-EINVAL);
	if (v->has_protocol)
		TRY(v_origin(x, v->protocol_line, 0));
	TRY(v_cfg_secret(x, v->secret));
	TRY(v_placement(x, v->has_placement, v->placement, v->has_placement_line,
			v->placement_line, v->header, v->prefix, NULL));
	REQUIRE(!(v->has_placement && v->placement == BOX__PLACEMENT__PLACEMENT_QUERY_PARAM),
		-EINVAL);
	return 0;
}

static int
v_cfg_gateway(const struct vctx *x, const Box__CfgGateway *v)
{
	if (!v)
		return 0;
	TRY(v_origin(x, v->line, 0));
	TRY(v_cfg_u64(x, v->port, 1, 65535));
	TRY(v_cfg_u64(x, v->connect_timeout_ms, 1, DAY_MS));
	TRY(v_cfg_u64(x, v->idle_timeout_ms, 1, YEAR_MS));
	TRY(v_cfg_u64(x, v->max_connections, 1, 1u << 20));
	TRY(v_cfg_u64(x, v->max_request_body, 1, 1ull << 40));
	TRY(v_cfg_path(x, v->upstream_ca));
	REQUIRE(!v->upstream_ca == !v->has_upstream_ca_pem, -EINVAL);
	if (v->has_upstream_ca_pem)
		REQUIRE(v->upstream_ca_pem.len <= BOX_PEM_MAX, -E2BIG);
	if (v->resolver) {
		TRY(v_cfg_str(x, v->resolver, 3, 262));
		REQUIRE(no_space_or_ctl(v->resolver->value) && strrchr(v->resolver->value, ':'),
			-EINVAL);
	}
	TRY(v_cfg_path(x, v->hosts_file));
	REQUIRE(!v->hosts_file == !v->has_hosts_file_text, -EINVAL);
	if (v->has_hosts_file_text)
		REQUIRE(v->hosts_file_text.len <= BOX_PEM_MAX, -E2BIG);
	TRY(v_cfg_bool(x, v->allow_host_loopback));
	REQUIRE(v->n_passthrough <= BOX_DESTINATIONS_MAX, -E2BIG);
	for (size_t i = 0; i < v->n_passthrough; i++) {
		TRY(v_cfg_str(x, v->passthrough[i], 3, 512));
		REQUIRE(no_space_or_ctl(v->passthrough[i]->value) &&
				strrchr(v->passthrough[i]->value, ':') &&
				!strchr(v->passthrough[i]->value, '/'),
			-EINVAL);
	}
	return 0;
}

static int
v_caller(const Box__Caller *v)
{
	REQUIRE(box_valid_path(v->cwd), -EINVAL);
	if (v->path)
		TRY(v_text(v->path, BOX_ENV_VALUE_MAX));
	REQUIRE(v->n_inherit <= 3, -E2BIG);
	for (size_t i = 0; i < v->n_inherit; i++) {
		const char *n = v->inherit[i]->name;
		REQUIRE(strcmp(n, "TERM") == 0 || strcmp(n, "LANG") == 0 || strcmp(n, "TZ") == 0,
			-EINVAL);
		for (size_t j = 0; j < i; j++)
			REQUIRE(strcmp(v->inherit[j]->name, n) != 0, -EINVAL);
		TRY(v_text(v->inherit[i]->value, BOX_STR_MAX));
	}
	return 0;
}

/* Section names are unique within their kind. */
#define CHECK_UNIQUE(arr, n)                                                \
	do {                                                                \
		for (size_t i_ = 0; i_ < (n); i_++)                         \
			for (size_t j_ = 0; j_ < i_; j_++)                  \
				REQUIRE(strcmp((arr)[i_]->name, (arr)[j_]->name) != 0, \
					-EINVAL);                           \
	} while (0)

int
box_validate_box_spec(const Box__BoxSpec *m)
{
	struct vctx x = { .n_files = m->n_files };

	REQUIRE(m->n_files >= 1, -EINVAL);
	REQUIRE(m->n_files <= BOX_SPEC_FILES_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_files; i++)
		REQUIRE(box_valid_path(m->files[i]), -EINVAL);
	TRY(v_cfg_box(&x, m->box));
	TRY(v_cfg_agent(&x, m->agent));

	REQUIRE(m->n_tools <= BOX_SECTIONS_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_tools; i++)
		TRY(v_cfg_tool(&x, m->tools[i]));
	CHECK_UNIQUE(m->tools, m->n_tools);

	REQUIRE(m->n_egress <= BOX_SECTIONS_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_egress; i++)
		TRY(v_cfg_egress(&x, m->egress[i]));
	CHECK_UNIQUE(m->egress, m->n_egress);

	REQUIRE(m->n_mcp <= BOX_SECTIONS_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_mcp; i++)
		TRY(v_cfg_mcp(&x, m->mcp[i]));
	CHECK_UNIQUE(m->mcp, m->n_mcp);

	REQUIRE(m->n_telemetry <= BOX_TELEMETRY_TARGETS_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_telemetry; i++)
		TRY(v_cfg_telemetry(&x, m->telemetry[i]));
	CHECK_UNIQUE(m->telemetry, m->n_telemetry);

	TRY(v_cfg_gateway(&x, m->gateway));
	/* The policy's text travels iff the config names a policy. */
	REQUIRE(!m->box->policy == !m->has_policy_text, -EINVAL);
	if (m->has_policy_text)
		REQUIRE(m->policy_text.len <= BOX_POLICY_TEXT_MAX, -E2BIG);
	TRY(v_caller(m->caller));
	return 0;
}

/* ---- requests and replies ---------------------------------------------- */

static int
v_problems(Box__Problem *const *p, size_t n)
{
	REQUIRE(n <= BOX_LIST_REPLY_MAX, -E2BIG);
	for (size_t i = 0; i < n; i++) {
		if (p[i]->has_file)
			REQUIRE(p[i]->file < BOX_SPEC_FILES_MAX, -ERANGE);
		if (p[i]->has_line)
			REQUIRE(p[i]->line <= BOX_LINE_MAX, -ERANGE);
		if (p[i]->has_column)
			REQUIRE(p[i]->column <= BOX_LINE_MAX, -ERANGE);
		TRY(v_opt_text(p[i]->section, 128));
		TRY(v_opt_text(p[i]->key, 128));
		REQUIRE(str_len_ok(p[i]->message, 1, BOX_STR_MAX), -E2BIG);
		REQUIRE(no_ctl(p[i]->message), -EINVAL);
	}
	return 0;
}

static int
v_lines(char *const *l, size_t n)
{
	REQUIRE(n <= BOX_LIST_REPLY_MAX, -E2BIG);
	for (size_t i = 0; i < n; i++) {
		REQUIRE(str_len_ok(l[i], 0, BOX_STR_MAX), -E2BIG);
		/* A disclosure line is one line: no newline, no escape sequences. */
		REQUIRE(no_ctl(l[i]), -EINVAL);
	}
	return 0;
}

static int
v_winsize(bool has_rows, uint32_t rows, bool has_cols, uint32_t cols)
{
	REQUIRE(has_rows == has_cols, -EINVAL);
	if (has_rows)
		REQUIRE(rows >= 1 && rows <= 65535 && cols >= 1 && cols <= 65535, -ERANGE);
	return 0;
}

int
box_validate_run_request(const Box__RunRequest *m)
{
	TRY(box_validate_box_spec(m->spec));
	REQUIRE(m->n_extra_args <= BOX_ARGV_MAX, -E2BIG);
	size_t total = 0;
	for (size_t i = 0; i < m->n_extra_args; i++) {
		total += strnlen(m->extra_args[i], BOX_ARGV_BYTES_MAX + 1) + 1;
		REQUIRE(total <= BOX_ARGV_BYTES_MAX, -E2BIG);
	}
	/*
	 * stdin, stdout, stderr: each is a pipe end (an fd) or a pty slave (a
	 * bit of stdio_tty), or none of them travels (all /dev/null, --detach).
	 */
	REQUIRE(m->stdio_tty <= 7, -EINVAL);
	unsigned ttys = (m->stdio_tty & 1) + ((m->stdio_tty >> 1) & 1) + ((m->stdio_tty >> 2) & 1);
	REQUIRE((m->n_stdio_fds == 0 && ttys == 0) || m->n_stdio_fds + ttys == 3, -EINVAL);
	REQUIRE(!(m->detach && (m->n_stdio_fds != 0 || ttys != 0)), -EINVAL);
	/* A dry run starts no agent: no streams, and nothing to detach from. */
	REQUIRE(!(m->dry_run && (m->detach || m->n_stdio_fds != 0 || ttys != 0)), -EINVAL);
	TRY(v_winsize(m->has_rows, m->rows, m->has_cols, m->cols));
	REQUIRE(!(m->has_rows && ttys == 0), -EINVAL);
	return 0;
}

/* A start's timeline: a few short step names, each ended no earlier than the one before. */
static int
v_timeline(Box__StartStep *const *t, size_t n)
{
	REQUIRE(n <= BOX_TIMELINE_MAX, -E2BIG);
	for (size_t i = 0; i < n; i++) {
		REQUIRE(t[i] && t[i]->step && t[i]->step[0], -EINVAL);
		TRY(v_opt_text(t[i]->step, BOX_TIMELINE_STEP_MAX));
		REQUIRE(i == 0 || t[i]->usec >= t[i - 1]->usec, -EINVAL);
	}
	return 0;
}

int
box_validate_run_reply(const Box__RunReply *m)
{
	REQUIRE(!(m->dry_run && (m->status != BOX__REPLY_STATUS__REPLY_OK || m->has_pid || m->pty)),
		-EINVAL);
	if (m->status == BOX__REPLY_STATUS__REPLY_OK) {
		REQUIRE(box_valid_box_id(m->box_id), -EINVAL);
		/* A started box has its agent's pid; a dry run has none. */
		REQUIRE(m->dry_run || (m->has_pid && m->pid > 0), -EINVAL);
	} else if (m->box_id) {
		REQUIRE(box_valid_box_id(m->box_id), -EINVAL);
	}
	if (m->has_pid)
		REQUIRE(m->pid > 0, -ERANGE);
	TRY(v_problems(m->problems, m->n_problems));
	TRY(v_lines(m->disclosure, m->n_disclosure));
	TRY(v_opt_text(m->error, BOX_STR_MAX));
	TRY(v_timeline(m->timeline, m->n_timeline));
	if (m->state_dir)
		REQUIRE(box_valid_path(m->state_dir), -EINVAL);
	REQUIRE(!(m->pty && m->status != BOX__REPLY_STATUS__REPLY_OK), -EINVAL);
	return 0;
}

int
box_validate_run_starting(const Box__RunStarting *m)
{
	return v_lines(m->disclosure, m->n_disclosure);
}

int
box_validate_run_exit(const Box__RunExit *m)
{
	REQUIRE(box_valid_box_id(m->box_id), -EINVAL);
	if (m->has_exit_status)
		REQUIRE(m->exit_status >= 0 && m->exit_status <= 255, -ERANGE);
	if (m->has_signal)
		REQUIRE(m->signal >= 1 && m->signal < 65, -ERANGE);
	REQUIRE(!(m->has_exit_status && m->has_signal), -EINVAL);
	REQUIRE(m->has_exit_status || m->has_signal || m->error, -EINVAL);
	/* An OOM kill is reported with how the agent ended, never alone. */
	REQUIRE(!(m->has_oom_killed && m->oom_killed) || m->has_exit_status || m->has_signal,
		-EINVAL);
	TRY(v_opt_text(m->error, BOX_STR_MAX));
	return 0;
}

int
box_validate_run_control(const Box__RunControl *m)
{
	REQUIRE(box_valid_box_id(m->box_id), -EINVAL);
	REQUIRE(m->signal == SIGINT || m->signal == SIGTERM || m->signal == SIGHUP ||
			m->signal == SIGQUIT,
		-EINVAL);
	return 0;
}

int
box_validate_ps_request(const Box__PsRequest *m)
{
	(void)m;
	return 0;
}

int
box_validate_ps_reply(const Box__PsReply *m)
{
	REQUIRE(m->n_boxes <= BOX_LIST_REPLY_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_boxes; i++) {
		const Box__BoxInfo *b = m->boxes[i];
		REQUIRE(box_valid_name(b->name), -EINVAL);
		REQUIRE(box_valid_box_id(b->box_id), -EINVAL);
		REQUIRE(b->pid >= 0, -ERANGE);
		REQUIRE(b->uptime_s <= 100ull * 366 * 24 * 3600, -ERANGE);
	}
	return 0;
}

/* NAME or ID: an ID is 12 hex digits, which is also a valid name. */
int
box_validate_stop_request(const Box__StopRequest *m)
{
	REQUIRE(box_valid_name(m->box), -EINVAL);
	return 0;
}

int
box_validate_stop_reply(const Box__StopReply *m)
{
	if (m->box_id)
		REQUIRE(box_valid_box_id(m->box_id), -EINVAL);
	TRY(v_opt_text(m->error, BOX_STR_MAX));
	return 0;
}

int
box_validate_log_request(const Box__LogRequest *m)
{
	REQUIRE(box_valid_name(m->box), -EINVAL);
	return 0;
}

int
box_validate_log_reply(const Box__LogReply *m)
{
	if (m->status == BOX__REPLY_STATUS__REPLY_OK) {
		REQUIRE(box_valid_box_id(m->box_id), -EINVAL);
		REQUIRE(box_valid_name(m->name), -EINVAL);
	} else {
		REQUIRE(!m->has_current && !m->has_previous, -EINVAL);
		if (m->box_id)
			REQUIRE(box_valid_box_id(m->box_id), -EINVAL);
		if (m->name)
			REQUIRE(box_valid_name(m->name), -EINVAL);
	}
	REQUIRE(!(m->has_previous && !m->has_current), -EINVAL);
	TRY(v_opt_text(m->error, BOX_STR_MAX));
	return 0;
}

int
box_validate_mcp_pins_request(const Box__McpPinsRequest *m)
{
	REQUIRE(box_valid_name(m->box), -EINVAL);
	return 0;
}

int
box_validate_mcp_pins_reply(const Box__McpPinsReply *m)
{
	if (m->status == BOX__REPLY_STATUS__REPLY_OK) {
		REQUIRE(box_valid_box_id(m->box_id), -EINVAL);
		REQUIRE(box_valid_name(m->name), -EINVAL);
	} else {
		if (m->box_id)
			REQUIRE(box_valid_box_id(m->box_id), -EINVAL);
		if (m->name)
			REQUIRE(box_valid_name(m->name), -EINVAL);
	}
	TRY(v_opt_text(m->error, BOX_STR_MAX));
	return 0;
}

int
box_validate_attach_request(const Box__AttachRequest *m)
{
	REQUIRE(box_valid_name(m->box), -EINVAL);
	/* The window: both or neither, each a struct winsize field (1-65535). */
	REQUIRE(m->has_rows == m->has_cols, -EINVAL);
	if (m->has_rows)
		REQUIRE(m->rows >= 1 && m->rows <= 65535 && m->cols >= 1 && m->cols <= 65535,
			-ERANGE);
	if (m->term)
		REQUIRE(box_valid_term(m->term), -EINVAL);
	return 0;
}

int
box_validate_attach_reply(const Box__AttachReply *m)
{
	if (m->status == BOX__REPLY_STATUS__REPLY_OK) {
		REQUIRE(box_valid_box_id(m->box_id), -EINVAL);
		REQUIRE(box_valid_name(m->name), -EINVAL);
		REQUIRE(!m->error, -EINVAL);
	} else {
		if (m->box_id)
			REQUIRE(box_valid_box_id(m->box_id), -EINVAL);
		if (m->name)
			REQUIRE(box_valid_name(m->name), -EINVAL);
		REQUIRE(m->error != NULL, -EINVAL);
	}
	TRY(v_opt_text(m->error, BOX_STR_MAX));
	return 0;
}

int
box_validate_policy_reload_request(const Box__PolicyReloadRequest *m)
{
	REQUIRE(box_valid_name(m->box), -EINVAL);
	if (m->has_policy_text)
		REQUIRE(m->policy_text.len <= BOX_POLICY_TEXT_MAX, -E2BIG);
	if (m->policy_file)
		REQUIRE(box_valid_path(m->policy_file), -EINVAL);
	if (m->has_expect_sha256)
		REQUIRE(m->expect_sha256.len == 32, -EINVAL);
	return 0;
}

int
box_validate_policy_reload_result(const Box__PolicyReloadResult *m)
{
	if (m->box_id)
		REQUIRE(box_valid_box_id(m->box_id), -EINVAL);
	if (m->name)
		REQUIRE(box_valid_name(m->name), -EINVAL);
	if (m->policy_file)
		REQUIRE(box_valid_path(m->policy_file), -EINVAL);
	REQUIRE((m->status == BOX__REPLY_STATUS__REPLY_OK) == (m->error == NULL), -EINVAL);
	if (m->status == BOX__REPLY_STATUS__REPLY_OK)
		REQUIRE(m->has_generation && m->generation >= 1 && box_valid_box_id(m->box_id), -EINVAL);
	TRY(v_opt_text(m->error, BOX_STR_MAX));
	return 0;
}

int
box_validate_ask_request(const Box__AskRequest *m)
{
	REQUIRE(box_valid_name(m->box), -EINVAL);
	if (!m->has_ask_id)
		REQUIRE(!m->permit && !m->for_box, -EINVAL);
	else
		REQUIRE(m->ask_id >= 1, -EINVAL);
	return 0;
}

int
box_validate_ask_reply(const Box__AskReply *m)
{
	if (m->box_id)
		REQUIRE(box_valid_box_id(m->box_id), -EINVAL);
	if (m->name)
		REQUIRE(box_valid_name(m->name), -EINVAL);
	REQUIRE((m->status == BOX__REPLY_STATUS__REPLY_OK) == (m->error == NULL), -EINVAL);
	TRY(v_opt_text(m->error, BOX_STR_MAX));
	REQUIRE(m->n_asks <= 64, -E2BIG);
	for (size_t i = 0; i < m->n_asks; i++) {
		const Box__AskEntry *a = m->asks[i];
		REQUIRE(a && a->ask_id >= 1, -EINVAL);
		TRY(v_text(a->action, BOX_STR_MAX));
		TRY(v_text(a->resource, BOX_STR_MAX));
		TRY(v_text(a->message, BOX_STR_MAX));
		TRY(v_text(a->source, 32));
		/* held by [box] ask = default: no rule forbade it; else the @ask rules */
		if (a->by_default)
			REQUIRE(a->n_rules == 0, -EINVAL);
		else
			REQUIRE(a->n_rules >= 1 && a->n_rules <= 64, -EINVAL);
		for (size_t k = 0; k < a->n_rules; k++)
			TRY(v_text(a->rules[k], BOX_STR_MAX));
		if (a->input)
			TRY(v_json_text(a->input, BOX_ASK_INPUT_MAX));
		REQUIRE(a->n_fields <= BOX_ASK_FIELDS_MAX, -E2BIG);
		for (size_t k = 0; k < a->n_fields; k++) {
			REQUIRE(a->fields[k], -EINVAL);
			TRY(v_text(a->fields[k]->name, 128));
			TRY(v_text(a->fields[k]->value, BOX_ASK_FIELD_TEXT_MAX));
			REQUIRE(box_valid_utf8(a->fields[k]->value, strlen(a->fields[k]->value)),
				-EINVAL);
		}
	}
	if (m->has_policy_sha256)
		REQUIRE(m->policy_sha256.len == 32, -EINVAL);
	if (m->policy_file)
		REQUIRE(box_valid_path(m->policy_file), -EINVAL);
	return 0;
}

int
box_validate_check_request(const Box__CheckRequest *m)
{
	return box_validate_box_spec(m->spec);
}

int
box_validate_check_reply(const Box__CheckReply *m)
{
	TRY(v_problems(m->problems, m->n_problems));
	TRY(v_lines(m->disclosure, m->n_disclosure));
	return 0;
}

/* The most groups boxd sends (BOXD_GROUPS_MAX), own paths and sockets (boxd/ownpaths.c). */
#define RECHECK_GROUPS_MAX 256
#define RECHECK_PATHS_MAX 32

static int
v_paths(char *const *v, size_t n, size_t max)
{
	REQUIRE(n <= max, -E2BIG);
	for (size_t i = 0; i < n; i++)
		REQUIRE(box_valid_path(v[i]), -EINVAL);
	return 0;
}

int
box_validate_recheck_request(const Box__RecheckRequest *m)
{
	/* Its sections come from a BoxSpec boxd validated; their origins name any of its files. */
	struct vctx x = { .n_files = BOX_SPEC_FILES_MAX };

	TRY(v_cfg_box(&x, m->box));
	TRY(v_cfg_agent(&x, m->agent));
	TRY(v_caller(m->caller));
	REQUIRE(m->owner->n_groups <= RECHECK_GROUPS_MAX, -E2BIG);
	REQUIRE(str_len_ok(m->owner->name, 1, 256) && no_space_or_ctl(m->owner->name), -EINVAL);
	REQUIRE(box_valid_path(m->state_dir), -EINVAL);
	TRY(v_paths(m->mask_candidates, m->n_mask_candidates, RECHECK_PATHS_MAX));
	TRY(v_paths(m->boxd_sockets, m->n_boxd_sockets, RECHECK_PATHS_MAX));
	REQUIRE(m->n_tools <= BOX_SECTIONS_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_tools; i++)
		TRY(v_cfg_tool(&x, m->tools[i]));
	CHECK_UNIQUE(m->tools, m->n_tools);
	REQUIRE(m->n_mcp <= BOX_SECTIONS_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_mcp; i++) {
		TRY(v_cfg_mcp(&x, m->mcp[i]));
		REQUIRE(m->mcp[i]->type == BOX__MCP_TYPE__MCP_TYPE_STDIO, -EINVAL);
	}
	CHECK_UNIQUE(m->mcp, m->n_mcp);
	REQUIRE(m->n_telemetry <= BOX_TELEMETRY_FILES_MAX, -E2BIG);
	for (size_t i = 0; i < m->n_telemetry; i++) {
		TRY(v_cfg_telemetry(&x, m->telemetry[i]));
		REQUIRE(m->telemetry[i]->kind == BOX__TELEMETRY_KIND__TELEMETRY_KIND_FILE, -EINVAL);
	}
	CHECK_UNIQUE(m->telemetry, m->n_telemetry);
	return 0;
}

int
box_validate_recheck_reply(const Box__RecheckReply *m)
{
	TRY(v_problems(m->problems, m->n_problems));
	TRY(v_lines(m->disclosure, m->n_disclosure));
	REQUIRE(m->n_fds == 0 || (m->n_fds >= 5 && m->n_fds <= 6 + BOX_TELEMETRY_FILES_MAX), -ERANGE);
	REQUIRE(m->n_fds == 0 || m->n_problems == 0, -EINVAL);
	return 0;
}

int
box_validate_error_reply(const Box__ErrorReply *m)
{
	REQUIRE(m->errno_value >= 1 && m->errno_value <= 4095, -ERANGE);
	REQUIRE(str_len_ok(m->message, 1, BOX_STR_MAX), -E2BIG);
	REQUIRE(no_ctl(m->message), -EINVAL);
	return 0;
}

/* ---- fds ------------------------------------------------------------------ */

int
box_validate_fd_count(const ProtobufCMessage *m, unsigned n_fds)
{
	unsigned want;

	if (m->descriptor == &box__run_request__descriptor)
		want = ((const Box__RunRequest *)m)->n_stdio_fds;
	else if (m->descriptor == &box__run_reply__descriptor)
		want = ((const Box__RunReply *)m)->pty ? 1 : 0;
	else if (m->descriptor == &box__log_reply__descriptor)
		want = (unsigned)((const Box__LogReply *)m)->has_current +
		       (unsigned)((const Box__LogReply *)m)->has_previous;
	else if (m->descriptor == &box__mcp_pins_reply__descriptor)
		want = ((const Box__McpPinsReply *)m)->status == BOX__REPLY_STATUS__REPLY_OK;
	else if (m->descriptor == &box__attach_reply__descriptor)
		/* The pty master and the end pipe's read end. */
		want = ((const Box__AttachReply *)m)->status == BOX__REPLY_STATUS__REPLY_OK ? 2 : 0;
	else
		/* Other types: bounded by the IPC table's max_fds alone. */
		return 0;
	return n_fds == want ? 0 : -EBADMSG;
}

/* ---- redaction --------------------------------------------------------- */

static void
redact_secret(Box__CfgSecret *s)
{
	if (!s || !s->has_secret_value)
		return;
	/* Keep the pointer so the tree's owner still frees it; wipe the bytes. */
	if (s->secret_value.data)
		explicit_bzero(s->secret_value.data, s->secret_value.len);
	s->secret_value.len = 0;
	s->has_secret_value = 0;
}

void
box_spec_redact(Box__BoxSpec *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_egress; i++)
		redact_secret(m->egress[i]->secret);
	for (size_t i = 0; i < m->n_mcp; i++)
		redact_secret(m->mcp[i]->secret);
	for (size_t i = 0; i < m->n_telemetry; i++)
		redact_secret(m->telemetry[i]->secret);
}
