/*
 * fuzz_mcp.c — box-mcpd's pure library (box-mcpd/jsonrpc.c, toolschema.c,
 * pins.c) fed arbitrary bytes, as the broker meets them: each line a frame
 * from the harness or a server; a response's result a tools/list page;
 * each tools/call request's arguments typed against the catalog; the whole
 * input also read as a pins file.
 *
 * Invariants (a violation traps):
 *   - a refused frame is -EINVAL with -32700 or -32600 and a reason; an
 *     accepted request has a method and a canonical id key, and the error
 *     reply built for it reads back as an error response with that key;
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

static void
check_frame(struct mcp_catalog *c, const struct mcp_frame *f)
{
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
		if (r == -EINVAL && (!why || (code != MCP_ERR_PARSE && code != MCP_ERR_INVALID)))
			__builtin_trap();
		if (r != 0 && r != -EINVAL && r != -ENOMEM)
			__builtin_trap();
		if (r == 0)
			check_frame(c, &f);
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
