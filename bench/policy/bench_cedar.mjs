// SPDX-License-Identifier: Apache-2.0
// bench_cedar.mjs — cedar-wasm on the same policy and requests as
// bench_policy: decisions/s and p50/p99 latency. The policy set is parsed
// once (preparsePolicySet + statefulIsAuthorized), Cedar's fastest path.
// Usage: node bench_cedar.mjs CEDAR_WASM_JS POLICY REQUESTS SECONDS
// Prints one line: "decisions_per_s P50_NS P99_NS decisions_per_cpu_s" (the
// last over the process's CPU time, as bench_policy.c). Trusts: nothing.
import fs from 'fs';
const [mod, policyFile, reqFile, secs] = process.argv.slice(2);
const cedar = await import(mod);
const ENUM = { 'fs:read': 'Box::FsReadOperation', 'fs:write': 'Box::FsWriteOperation',
	'fs:delete': 'Box::FsDeleteOperation', 'fs:move': 'Box::FsMoveOperation' };
const r = cedar.preparsePolicySet('bench', { staticPolicies: fs.readFileSync(policyFile, 'utf8') });
if (r.type !== 'success') throw new Error(JSON.stringify(r));
const calls = fs.readFileSync(reqFile, 'utf8').trim().split('\n').map((l) => {
	const j = JSON.parse(l);
	const input = { ...j.input };
	if (ENUM[j.action]) input.operation = { __entity: { type: ENUM[j.action], id: input.operation } };
	return { principal: { type: 'Box::Agent', id: 'self' }, action: { type: 'Box::Action', id: j.action },
		resource: { type: 'Box::Resource', id: 'unused' }, context: { input },
		preparsedPolicySetId: 'bench', entities: [] };
});
for (let i = 0; i < 200; i++) cedar.statefulIsAuthorized(calls[i % calls.length]);
const lat = [];
const end = process.hrtime.bigint() + BigInt(Math.round(Number(secs) * 1e9));
let n = 0;
const c0 = process.cpuUsage();
const t0 = process.hrtime.bigint();
while (process.hrtime.bigint() < end) {
	const a = process.hrtime.bigint();
	const res = cedar.statefulIsAuthorized(calls[n % calls.length]);
	lat.push(Number(process.hrtime.bigint() - a));
	if (res.type !== 'success') throw new Error(JSON.stringify(res));
	n++;
}
const t = Number(process.hrtime.bigint() - t0) / 1e9;
const cu = process.cpuUsage(c0);
const ct = (cu.user + cu.system) / 1e6;
lat.sort((x, y) => x - y);
console.log(`${(n / t).toFixed(0)} ${lat[Math.floor(lat.length * 0.5)]} ${lat[Math.floor(lat.length * 0.99)]} ${(n / ct).toFixed(0)}`);
