// SPDX-License-Identifier: Apache-2.0
// server.mjs — a stdio MCP server built with the official TypeScript SDK
// (@modelcontextprotocol/sdk: McpServer over StdioServerTransport), for t-mcp-sdk.sh: box-mcpd
// starts it in the server's own sandbox and the SDK's client (client.mjs) or a plain scripted
// client reaches it through the alias. Every input schema is the JSON Schema the SDK derives
// from zod, so the broker's typing (docs/box-mcpd.8.md "Typing") is exercised on what the SDK
// really sends.
//   tools:     add {a: integer, b: integer} → "a+b=SUM"
//              echo {text: string} → the text
//              greet {name: string, greeting?: string} → "GREETING, NAME!" (default "hello")
//              wipe {} → "wiped" (the test's policy forbids it through mcp:call)
//              roots {} → asks the client roots/list (a server→client request) and returns
//                         the URIs, or "roots failed: CODE MESSAGE"
//   prompt:    review {code: string} → one user message "Review this code: CODE"
//   resource:  note://readme (text/plain) → "box sdk note"
// Writes nothing on stdout but the transport's frames; stderr is the harness's.
// Trusts: nothing; it is test code.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "box-sdk-test", version: "1.0.0" });

const text = (t) => ({ content: [{ type: "text", text: t }] });

server.registerTool(
	"add",
	{ description: "Add two integers", inputSchema: { a: z.number().int(), b: z.number().int() } },
	async ({ a, b }) => text(`${a}+${b}=${a + b}`),
);
server.registerTool(
	"echo",
	{ description: "Echo the text back", inputSchema: { text: z.string() } },
	async ({ text: t }) => text(t),
);
server.registerTool(
	"greet",
	{
		description: "Greet someone, optionally with a greeting of your own",
		inputSchema: { name: z.string(), greeting: z.string().optional() },
	},
	async ({ name, greeting }) => text(`${greeting ?? "hello"}, ${name}!`),
);
server.registerTool(
	"wipe",
	{ description: "Wipe everything (the policy forbids it)", inputSchema: {} },
	async () => text("wiped"),
);
server.registerTool(
	"roots",
	{ description: "List the client's roots (asks the client roots/list)", inputSchema: {} },
	async () => {
		try {
			const r = await server.server.listRoots(undefined, { timeout: 20000 });
			return text("roots: " + r.roots.map((x) => x.uri).join(","));
		} catch (e) {
			return text(`roots failed: ${e.code} ${e.message}`);
		}
	},
);

server.registerPrompt(
	"review",
	{ description: "Ask for a code review", argsSchema: { code: z.string() } },
	({ code }) => ({
		messages: [{ role: "user", content: { type: "text", text: `Review this code: ${code}` } }],
	}),
);

server.registerResource(
	"readme",
	"note://readme",
	{ description: "A short note", mimeType: "text/plain" },
	async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "box sdk note" }] }),
);

const transport = new StdioServerTransport();
// The harness closing its end (the broker closes our stdin) ends the server.
transport.onclose = () => process.exit(0);
process.stdin.on("end", () => process.exit(0));
await server.connect(transport);
