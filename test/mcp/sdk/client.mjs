// SPDX-License-Identifier: Apache-2.0
// client.mjs ALIAS OP... — an MCP client built with the official TypeScript SDK
// (@modelcontextprotocol/sdk: Client over StdioClientTransport), acting as an agent's harness
// for t-mcp-sdk.sh: it spawns ALIAS (/run/box/bin/NAME in a box: box-alias, which hands its
// stdio to box-mcpd) exactly as a harness spawns an MCP server, initializes, then runs each OP
// in order and prints one machine-checkable line per step on stdout:
//   init ok server=NAME/VERSION protocol=P            (or "init error …" and exit 1)
//   list tools=T1,T2,…                                 OP "list" (sorted names)
//   call TOOL ok text=TEXT                             OP "call TOOL JSON-ARGS"
//   call TOOL tool-error text=TEXT                     … the tool answered isError
//   prompts names=P1,…                                 OP "prompts"
//   prompt NAME ok text=TEXT                           OP "prompt NAME JSON-ARGS"
//   resources uris=U1,…                                OP "resources"
//   read URI ok text=TEXT                              OP "read URI"
//   ping ok                                            OP "ping"
//   notify METHOD sent                                 OP "notify METHOD JSON-PARAMS": the SDK's
//                                                      notification() — a frame without an id
//   KIND NAME error code=C message=M                   any step answered with a JSON-RPC error
//                                                      (M: the error's own message, without the
//                                                      SDK's "MCP error C: " prefix)
//   stderr=LINE                                        what the alias (and the server) wrote on
//                                                      stderr, after the steps
// It declares the roots capability and answers roots/list with file:///sdk-root. Texts are
// printed with newlines escaped. Exit 0 once every step ran (a step's error is a line, not a
// failure); 1 when initialize fails; 2 on a usage error.
// Trusts: nothing; it is test code.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";

const [alias, ...ops] = process.argv.slice(2);
if (!alias) {
	console.error("usage: client.mjs ALIAS OP...");
	process.exit(2);
}
const TIMEOUT = 20000; // every request: a broker that never answers fails the step, not the test

const flat = (s) => String(s).replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
const texts = (content) =>
	flat((content ?? []).map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("|"));
const errLine = (what, e) => {
	if (e instanceof McpError) {
		const prefix = `MCP error ${e.code}: `;
		const m = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
		return `${what} error code=${e.code} message=${flat(m)}`;
	}
	return `${what} error code=none message=${flat(e?.message ?? e)}`;
};

const transport = new StdioClientTransport({ command: alias, args: [], stderr: "pipe" });
const stderr = [];
transport.stderr?.on("data", (d) => stderr.push(...String(d).split("\n").filter((l) => l)));
// The client hands the negotiated protocol version to a transport that takes it (the HTTP one
// does; the stdio one does not): take it here to print it.
let protocol = "?";
transport.setProtocolVersion = (v) => {
	protocol = v;
};

const client = new Client(
	{ name: "box-sdk-harness", version: "1.0.0" },
	{ capabilities: { roots: { listChanged: false } } },
);
client.setRequestHandler(ListRootsRequestSchema, async () => ({
	roots: [{ uri: "file:///sdk-root", name: "sdk-root" }],
}));

const out = (l) => process.stdout.write(l + "\n");
const finish = async (code) => {
	await client.close().catch(() => {});
	// Let the alias's last stderr lines arrive (bounded).
	await new Promise((r) => setTimeout(r, 200));
	for (const l of stderr) out(`stderr=${flat(l)}`);
	process.exit(code);
};

try {
	await client.connect(transport, { timeout: TIMEOUT });
	const v = client.getServerVersion();
	out(`init ok server=${v?.name}/${v?.version} protocol=${protocol}`);
} catch (e) {
	out(errLine("init", e));
	await finish(1);
}

for (const op of ops) {
	const sp = op.indexOf(" ");
	const kind = sp < 0 ? op : op.slice(0, sp);
	let rest = sp < 0 ? "" : op.slice(sp + 1);
	let name = rest;
	let args = {};
	if (kind === "call" || kind === "prompt" || kind === "notify") {
		const sp2 = rest.indexOf(" ");
		name = sp2 < 0 ? rest : rest.slice(0, sp2);
		args = sp2 < 0 ? {} : JSON.parse(rest.slice(sp2 + 1));
	}
	const opts = { timeout: TIMEOUT };
	try {
		switch (kind) {
		case "list": {
			const r = await client.listTools(undefined, opts);
			out(`list tools=${r.tools.map((t) => t.name).sort().join(",")}`);
			break;
		}
		case "call": {
			const r = await client.callTool({ name, arguments: args }, undefined, opts);
			out(`call ${name} ${r.isError ? "tool-error" : "ok"} text=${texts(r.content)}`);
			break;
		}
		case "prompts": {
			const r = await client.listPrompts(undefined, opts);
			out(`prompts names=${r.prompts.map((p) => p.name).sort().join(",")}`);
			break;
		}
		case "prompt": {
			const r = await client.getPrompt({ name, arguments: args }, opts);
			out(`prompt ${name} ok text=${texts(r.messages.map((m) => m.content))}`);
			break;
		}
		case "resources": {
			const r = await client.listResources(undefined, opts);
			out(`resources uris=${r.resources.map((x) => x.uri).sort().join(",")}`);
			break;
		}
		case "read": {
			const r = await client.readResource({ uri: name }, opts);
			out(`read ${name} ok text=${flat(r.contents.map((c) => c.text ?? "[blob]").join("|"))}`);
			break;
		}
		case "ping":
			await client.ping(opts);
			out("ping ok");
			break;
		case "notify":
			// Any method: the SDK sends it as JSON-RPC's notification, with no id.
			await client.notification({ method: name, params: args });
			out(`notify ${name} sent`);
			break;
		default:
			console.error(`client.mjs: unknown op ${kind}`);
			await finish(2);
		}
	} catch (e) {
		out(errLine(kind === "ping" ? "ping" : `${kind} ${name}`, e));
	}
}
await finish(0);
