/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_mcp.c — box-mcpd's pure library (box-mcpd/jsonrpc.c, toolschema.c,
 * pins.c) fed arbitrary bytes, as the broker meets them: each line a frame
 * from the harness or a server; a response's result a tools/list page;
 * each tools/call request's arguments typed against the catalog; the whole
 * input also read as a pins file.
 *
 * Invariants (a violation traps):
 *   - a refused frame is -EINVAL with -32700, -32600 or -32602 and a reason;
 *     an accepted request has a method and a canonical id key, and the error
 *     reply built for it reads back as an error response with that key;
 *   - a notification has no id and a method under "notifications/"; an
 *     id-less call has no id and any other method; the method of either, and
 *     of a request, is printable ASCII; a tools/call or prompts/get that has
 *     params.name names it (mcp_frame_tool / mcp_frame_prompt), and one with
 *     params.uri names that (mcp_frame_uri) — nothing the broker decides on
 *     is left out of a decision;
 *   - mcp_json_load then mcp_frame_classify (box-gateway's way) agrees with
 *     mcp_frame_parse on every line that is not a batch;
 *   - every field type of a usable tool registers with libboxpolicy
 *     (bp_schema_add_field), every canonical definition is at most 64 KiB;
 *   - arguments that build pass proto's box_validate_policy_fields; refused
 *     ones say why;
 *   - the pins file is consumed whole at final; a NEW verdict's line, read
 *     by a fresh state, makes the same definition SAME there without a
 *     warning; deciding the same definition twice never writes twice.
 * Trusts: nothing; the input is arbitrary bytes.
 */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "box-mcpd/jsonrpc.h"
#include "box-mcpd/pins.h"
#include "box-mcpd/toolschema.h"
#include "boxpolicy.h"
#include "proto/policy_validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NOW "2026-12-01T10:00:00Z"

static bool
starts_notifications(const char *m)
{
	return strncmp(m, "notifications/", 14) == 0 && m[14];
}

static void
check_kinds(const struct mcp_frame *f)
{
	if (f->kind == MCP_RESPONSE) {
		if (f->method || !f->id)
			__builtin_trap();
		return;
	}
	if (!f->method)
		__builtin_trap();
	for (const char *p = f->method; *p; p++)
		if ((unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e)
			__builtin_trap();
	if (f->kind == MCP_NOTIFICATION && (f->id || !starts_notifications(f->method)))
		__builtin_trap();
	if (f->kind == MCP_IDLESS_CALL && (f->id || starts_notifications(f->method)))
		__builtin_trap();
	if (f->kind == MCP_NOTIFICATION)
		return;
	json_t *name = json_is_object(f->params) ? json_object_get(f->params, "name") : NULL;
	json_t *uri = json_is_object(f->params) ? json_object_get(f->params, "uri") : NULL;
	if (name && strcmp(f->method, "tools/call") == 0 && !mcp_frame_tool(f))
		__builtin_trap();
	if (name && strcmp(f->method, "prompts/get") == 0 && !mcp_frame_prompt(f))
		__builtin_trap();
	if (uri && !mcp_frame_uri(f))
		__builtin_trap();
}

/* box-gateway loads, then classifies: the same verdict as the stdio parse. */
static void
check_two_step(const char *line, size_t len, int r, const struct mcp_frame *f)
{
	json_t *root;
	int code;
	const char *why;
	if (len && line[len - 1] == '\r')
		len--;
	int lr = mcp_json_load(line, len, &root, &code, &why);
	if (lr == -ENOMEM)
		return;
	if (lr < 0) {
		if (r == 0)
			__builtin_trap();
		return;
	}
	struct mcp_frame g;
	int cr = mcp_frame_classify(root, &g, &code, &why);
	if (!json_is_array(root) && cr != -ENOMEM &&
	    ((cr == 0) != (r == 0) || (r == 0 && g.kind != f->kind)))
		__builtin_trap();
	mcp_frame_clear(&g);
	json_decref(root);
}

static void
check_frame(struct mcp_catalog *c, const struct mcp_frame *f)
{
	check_kinds(f);
	if (f->kind == MCP_REQUEST) {
		if (!f->method || !f->id ||
		    (strncmp(f->id_key, "s:", 2) != 0 && strncmp(f->id_key, "n:", 2) != 0))
			__builtin_trap();
		size_t len;
		char *reply = mcp_error_reply(f->id, MCP_ERR_POLICY, f->method, &len);
		if (!reply)
			return;
		struct mcp_frame back;
		int code;
		const char *why;
		if (len == 0 || reply[len - 1] != '\n' ||
		    mcp_frame_parse(reply, len - 1, &back, &code, &why) != 0 || !back.is_error ||
		    strcmp(back.id_key, f->id_key) != 0)
			__builtin_trap();
		mcp_frame_clear(&back);
		free(reply);
		const char *tool = mcp_frame_tool(f);
		const struct mcp_tool *t = tool ? mcp_catalog_find(c, tool) : NULL;
		if (t) {
			struct mcp_args a;
			char err[256];
			json_t *args = json_object_get(f->params, "arguments");
			int r = mcp_args_build(t, args, &a, err, sizeof(err));
			if (r == 0 && box_validate_policy_fields(a.fields, a.n_fields, 0) != 0)
				__builtin_trap();
			if (r == -EINVAL && !err[0])
				__builtin_trap();
			mcp_args_free(&a);
		}
	}
	if (f->kind == MCP_RESPONSE && json_is_object(f->result)) {
		size_t first, count;
		const char *why;
		int r = mcp_catalog_add_page(c, f->result, &first, &count, &why);
		if (r == -EINVAL && !why)
			__builtin_trap();
	}
}

static void
check_catalog(const struct mcp_catalog *c, struct mcp_pins *pins)
{
	struct bp_schema *s;
	if (bp_schema_new(&s) < 0)
		return;
	(void)bp_schema_add_namespace(s, "fz");
	for (size_t i = 0; i < mcp_catalog_count(c); i++) {
		const struct mcp_tool *t = mcp_catalog_tool(c, i);
		if (t->refused)
			continue;
		if (!t->canon || t->canon_len > MCP_TOOL_DEF_MAX)
			__builtin_trap();
		if (bp_schema_add_action(s, "fz", t->name) != 0)
			__builtin_trap();
		for (size_t k = 0; k < t->ptool.n_fields; k++)
			if (bp_schema_add_field(s, "fz", t->name, t->ptool.fields[k]->name,
						t->ptool.fields[k]->type,
						t->ptool.fields[k]->optional) != 0)
				__builtin_trap();

		struct mcp_pin_verdict v, v2;
		if (mcp_pins_check(pins, "fz", t->name, t->canon, t->canon_len, false, NOW, &v) != 0)
			continue;
		if (v.state == MCP_PIN_NEW && (!v.line || !v.allowed))
			__builtin_trap();
		if ((v.state == MCP_PIN_SAME || v.state == MCP_PIN_ACCEPTED) && v.line)
			__builtin_trap();
		if (v.state == MCP_PIN_NEW) {
			struct mcp_pins *fresh;
			if (mcp_pins_new(&fresh) == 0) {
				if (mcp_pins_feed(fresh, v.line, v.line_len, false) != (long)v.line_len ||
				    mcp_pins_warning_count(fresh) != 0)
					__builtin_trap();
				if (mcp_pins_check(fresh, "fz", t->name, t->canon, t->canon_len, false,
						   NOW, &v2) == 0 &&
				    (v2.state != MCP_PIN_SAME || v2.line))
					__builtin_trap();
				mcp_pins_free(fresh);
			}
		}
		free(v.line);
		if (mcp_pins_check(pins, "fz", t->name, t->canon, t->canon_len, false, NOW, &v2) == 0) {
			if (v2.state == MCP_PIN_NEW || v2.line)
				__builtin_trap();
		}
	}
	bp_schema_free(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct mcp_catalog *c;
	struct mcp_pins *pins;

	if (mcp_catalog_new(&c) < 0)
		return 0;
	for (size_t pos = 0; pos < size;) {
		const char *nl = memchr(text + pos, '\n', size - pos);
		size_t end = nl ? (size_t)(nl - text) : size;
		struct mcp_frame f;
		int code = 0;
		const char *why = NULL;
		int r = mcp_frame_parse(text + pos, end - pos, &f, &code, &why);
		if (r == -EINVAL && (!why || (code != MCP_ERR_PARSE && code != MCP_ERR_INVALID &&
					      code != MCP_ERR_PARAMS)))
			__builtin_trap();
		if (r != 0 && r != -EINVAL && r != -ENOMEM)
			__builtin_trap();
		if (r == 0)
			check_frame(c, &f);
		check_two_step(text + pos, end - pos, r, &f);
		mcp_frame_clear(&f);
		pos = end + 1;
	}

	if (mcp_pins_new(&pins) == 0) {
		long n = mcp_pins_feed(pins, text, size, true);
		if (n >= 0 && (size_t)n != size)
			__builtin_trap();
		check_catalog(c, pins);
		mcp_pins_free(pins);
	}
	mcp_catalog_free(c);
	return 0;
}
