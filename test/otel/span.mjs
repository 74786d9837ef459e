// SPDX-License-Identifier: Apache-2.0
// span.mjs — the agent of test/integration/t-telemetry-otlp.sh: the real OpenTelemetry
// JS SDK (test/otel/package.json, pinned) exports one span over OTLP/HTTP protobuf to
// the endpoint its environment names (box gives the agent OTEL_EXPORTER_OTLP_*), then
// prints "node-sdk exported" once the exporter reported success.
// Trusts: nothing; test code.
import { SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";

const exporter = new OTLPTraceExporter();
let result = "no result";
const wrapped = {
	export(spans, done) {
		exporter.export(spans, (r) => {
			result = r.code === 0 ? "exported" : "failed " + (r.error && r.error.message);
			done(r);
		});
	},
	shutdown: () => exporter.shutdown(),
	forceFlush: () => exporter.forceFlush(),
};
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: wrapped })] });
const span = provider.getTracer("box-test").startSpan("node-sdk-span");
span.setAttribute("box.name", "forged-by-node");
span.end();
await provider.forceFlush();
await provider.shutdown();
console.log("node-sdk " + result);
