/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mcpserver.c — the MCP server of bench/mcp: a small stdio server (newline-delimited JSON-RPC
 * 2.0 on stdin/stdout) written in C so that no interpreter dominates the round trip being
 * measured. The same binary runs outside any box (spawned by mcpclient) and inside one (started
 * by boxd for box-mcpd as [mcp.calc]).
 *
 *   initialize        its protocolVersion echoed (default 2025-06-18), capabilities.tools,
 *                     serverInfo {"name": "bench-mcp", "version": "1"}
 *   ping              {}
 *   tools/list        one tool, "add", with a typed input schema: {a: integer, b: integer},
 *                     both required
 *   tools/call        add: content [{"type": "text", "text": "A+B"}], structuredContent
 *                     {"sum": A+B}; another tool or untyped arguments: isError true (a tool
 *                     error, as MCP reports them), a missing name: -32602
 *   other requests    -32601; notifications (no id) and replies are ignored
 *
 * It reads stdin until EOF and exits 0; a line over 1 MiB or unparsable JSON is answered
 * -32700 (id null) and skipped. Trusts: nothing it reads (its peer is the harness or
 * box-mcpd); it is benchmark code.
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SRV_LINE_MAX (1u << 20)

static const char *tools_json =
    "{\"tools\":[{\"name\":\"add\",\"description\":\"Add two integers.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},"
    "\"b\":{\"type\":\"integer\"}},\"required\":[\"a\",\"b\"]}}]}";

/* write_all: the whole buffer, or exit (the harness went away: nothing left to do). */
static void
write_all(const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(1, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			exit(1);
		p += w;
		n -= (size_t)w;
	}
}

/* reply: {"jsonrpc":"2.0","id":ID,<body>}\n, ID as it came (number, string or null). */
static void reply(json_t *id, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
reply(json_t *id, const char *fmt, ...)
{
	char body[4096], out[8192];
	char *ids = id ? json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(body))
		exit(1);
	n = snprintf(out, sizeof(out), "{\"jsonrpc\":\"2.0\",\"id\":%s,%s}\n", ids ? ids : "null",
		     body);
	free(ids);
	if (n < 0 || (size_t)n >= sizeof(out))
		exit(1);
	write_all(out, (size_t)n);
}

static void
tools_call(json_t *id, json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");
	json_t *a = json_object_get(args, "a"), *b = json_object_get(args, "b");

	if (!name) {
		reply(id, "\"error\":{\"code\":-32602,\"message\":\"tools/call needs a name\"}");
		return;
	}
	if (strcmp(name, "add") != 0 || !json_is_integer(a) || !json_is_integer(b)) {
		reply(id,
		      "\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"add needs integers "
		      "a and b\"}],\"isError\":true}");
		return;
	}
	/* Wrapping, not overflow: the arguments are the peer's. */
	long long sum =
	    (long long)((uint64_t)json_integer_value(a) + (uint64_t)json_integer_value(b));

	reply(id,
	      "\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"%lld\"}],"
	      "\"structuredContent\":{\"sum\":%lld},\"isError\":false}",
	      sum, sum);
}

static void
handle(const char *line, size_t len)
{
	json_error_t err;
	json_t *msg = json_loadb(line, len, JSON_REJECT_DUPLICATES, &err);
	json_t *id, *params;
	const char *method;

	if (!json_is_object(msg)) {
		json_decref(msg);
		reply(NULL, "\"error\":{\"code\":-32700,\"message\":\"parse error\"}");
		return;
	}
	id = json_object_get(msg, "id");
	method = json_string_value(json_object_get(msg, "method"));
	params = json_object_get(msg, "params");
	if (!id || !method) {
		/* A notification or a reply: nothing to answer. */
		json_decref(msg);
		return;
	}
	if (strcmp(method, "initialize") == 0) {
		const char *v = json_string_value(json_object_get(params, "protocolVersion"));
		char vbuf[64];

		/* Echo a sane version only: it goes back into a JSON string unescaped. */
		if (!v || strlen(v) >= sizeof(vbuf) || strspn(v, "0123456789-") != strlen(v))
			v = "2025-06-18";
		snprintf(vbuf, sizeof(vbuf), "%s", v);
		reply(id,
		      "\"result\":{\"protocolVersion\":\"%s\",\"capabilities\":{\"tools\":{}},"
		      "\"serverInfo\":{\"name\":\"bench-mcp\",\"version\":\"1\"}}",
		      vbuf);
	} else if (strcmp(method, "ping") == 0) {
		reply(id, "\"result\":{}");
	} else if (strcmp(method, "tools/list") == 0) {
		reply(id, "\"result\":%s", tools_json);
	} else if (strcmp(method, "tools/call") == 0) {
		tools_call(id, params);
	} else {
		reply(id, "\"error\":{\"code\":-32601,\"message\":\"method not found\"}");
	}
	json_decref(msg);
}

int
main(void)
{
	char *buf = malloc(SRV_LINE_MAX);
	size_t have = 0;
	bool skipping = false; /* inside a line over SRV_LINE_MAX: dropped up to its newline */

	if (!buf)
		return 1;
	for (;;) {
		ssize_t r = read(0, buf + have, SRV_LINE_MAX - have);
		size_t start = 0;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += (size_t)r;
		for (;;) {
			char *nl = memchr(buf + start, '\n', have - start);

			if (!nl)
				break;
			if (!skipping && nl > buf + start)
				handle(buf + start, (size_t)(nl - (buf + start)));
			skipping = false;
			start = (size_t)(nl - buf) + 1;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
		if (have == SRV_LINE_MAX) {
			if (!skipping)
				reply(NULL,
				      "\"error\":{\"code\":-32700,\"message\":\"line too long\"}");
			skipping = true;
			have = 0;
		}
	}
	free(buf);
	return 0;
}
