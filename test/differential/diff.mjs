// SPDX-License-Identifier: Apache-2.0
// diff.mjs — differential test of libboxpolicy against Cedar itself
// (@cedar-policy/cedar-wasm): random policy sets and requests within our
// dialect, decided by both engines. Checks (1) strict validation accepts and
// refuses the same policy sets (box.cedarschema = docs/box-policy.5.md as a Cedar
// schema), (2) the same verdict and determining rules for every request,
// mapping Cedar's skip-on-error to our deny-on-error (cause `error`, rules =
// the erroring policies). Half the rules open with what the rule index
// (libboxpolicy/index.c) files under a literal — `F == lit`, `[..].contains(F)`,
// `F like "prefix*"`, `||` of those, after `has F` and action tests — and the
// literals are the requests' values, in several cases and Unicode forms.
// Usage: node diff.mjs CEDAR_WASM_JS BOXCTL COUNT SEED WORKDIR
// Trusts: nothing; it is test code. Prints TAP-like lines.
import fs from 'fs';
import path from 'path';
import { spawnSync } from 'child_process';
import { fileURLToPath } from 'url';

const [cedarPath, boxctl, countArg, seedArg, workdir] = process.argv.slice(2);
const cedar = await import(cedarPath);
const here = path.dirname(fileURLToPath(import.meta.url));
const schema = fs.readFileSync(path.join(here, 'box.cedarschema'), 'utf8');
const COUNT = Number(countArg);
let seed = Number(seedArg) >>> 0;

function rnd() { // xorshift32
	seed ^= seed << 13; seed >>>= 0;
	seed ^= seed >>> 17;
	seed ^= seed << 5; seed >>>= 0;
	return seed / 4294967296;
}
const pick = (a) => a[Math.floor(rnd() * a.length)];
const chance = (p) => rnd() < p;

const ENUMS = {
	'Box::FsReadOperation': ['read_content', 'read_metadata', 'enumerate', 'read_link', 'change_dir', 'exec'],
	'Box::FsWriteOperation': ['write_content', 'create_dir', 'set_permissions', 'symlink'],
	'Box::FsDeleteOperation': ['remove_file', 'remove_dir'],
	'Box::FsMoveOperation': ['rename'],
	'Box::FsOtherOperation': ['other'],
};
const S = (opt = false) => ({ t: 'String', opt });
const L = () => ({ t: 'Long', opt: false });
const E = (e) => ({ t: 'Enum', e, opt: false });
const ACTIONS = {
	'fs:read': { path: S(), operation: E('Box::FsReadOperation') },
	'fs:write': { path: S(), operation: E('Box::FsWriteOperation') },
	'fs:delete': { path: S(), operation: E('Box::FsDeleteOperation') },
	'fs:move': { path: S(), operation: E('Box::FsMoveOperation') },
	'fs:other': { path: S(), operation: E('Box::FsOtherOperation') },
	'net:connect': { host: S(), ip: S(true), port: L() },
	'http:request': { host: S(), port: L(), method: S(), path: S(), body_bytes: L(),
		intercepted: { t: 'Bool', opt: false } },
	'shell:exec': { command: S(), program: S(), arg1: S(true), arg2: S(true), arg_count: L(), cwd: S() },
	'shell:spawn': { command: S(), program: S(), program_path: S(), arg1: S(true), arg2: S(true),
		arg_count: L(), cwd: S(), credential_reads: { t: 'Set', opt: true } },
	'mcp:call': { server: S(), method: S(), tool: S(true), prompt: S(true), uri: S(true) },
};
const NAMES = Object.keys(ACTIONS);
const STRS = ['a', 'b', '/tmp/x', '~/p', '~/p/a.txt', 'GET', 'POST', 'rm', '-rf', 'git', 'api.example.com', '', 'x y', 'é', '10.0.0.1',
	'Git', 'GIT', 'e\u0301', 'É'];
const PREFIXES = ['~/p*', '~/p/*', 'g*', 'G*', '/tmp/*', 'a*', 'e*', 'é*', 'api.*', '-*'];
const PATS = ['*', 'a*', '*a', '~/p/*', '/tmp/*', '*x*', 'G*T', '\\*', '**', '~/p', '*.*.*.*', ''];
const LONGS_REQ = [0, 1, -1, 2, 80, 443, 8080, 4503599627370496, -4503599627370496];
const LONGS_POL = ['0', '1', '2', '80', '443', '1000', '9223372036854775807', '4611686018427387904', '3037000500', '(-9223372036854775808)', '(-1)'];
const CREDS = ['~/.aws', '~/.ssh', '~/.config/gcloud'];

const q = (s) => JSON.stringify(s);
const inp = (f) => `context.input.${f}`;

// fields present in every action of the scope (same type), and all fields of any action
function fieldsOf(scope) {
	const all = {};
	for (const a of scope) for (const [f, ty] of Object.entries(ACTIONS[a])) (all[f] ||= []).push([a, ty]);
	return all;
}

function cmpOn(f, ty, invalid) {
	switch (ty.t) {
	case 'String': {
		if (invalid && chance(0.5)) return chance(0.5) ? `${inp(f)} < ${q('a')}` : `${inp(f)} == ${pick(LONGS_POL)}`;
		const k = rnd();
		if (k < 0.35) return `${inp(f)} == ${q(pick(STRS))}`;
		if (k < 0.45) return `${inp(f)} != ${q(pick(STRS))}`;
		if (k < 0.8) return `${inp(f)} like ${q(pick(PATS))}`;
		return `[${q(pick(STRS))}, ${q(pick(STRS))}].contains(${inp(f)})`;
	}
	case 'Long': {
		if (invalid && chance(0.5)) return chance(0.5) ? `${inp(f)} like "1*"` : `${inp(f)} == ${q('1')}`;
		const op = pick(['<', '<=', '>', '>=', '==', '!=']);
		const k = rnd();
		if (k < 0.5) return `${inp(f)} ${op} ${pick(LONGS_POL)}`;
		if (k < 0.7) return `${inp(f)} + ${pick(LONGS_POL)} ${op} ${pick(LONGS_POL)}`;
		if (k < 0.85) return `${inp(f)} * ${pick(LONGS_POL)} ${op} ${pick(LONGS_POL)}`;
		return `-${inp(f)} - ${pick(LONGS_POL)} ${op} ${pick(LONGS_POL)}`;
	}
	case 'Bool':
		if (invalid && chance(0.5)) return `${inp(f)} < 1`;
		return pick([inp(f), `${inp(f)} == true`, `!${inp(f)}`, `${inp(f)} != false`]);
	case 'Enum': {
		const et = chance(0.8) ? ty.e : pick(Object.keys(ENUMS));
		const id = invalid && chance(0.5) ? 'bogus' : pick(ENUMS[et]);
		return `${inp(f)} == ${et}::${q(id)}`;
	}
	case 'Set': {
		const lit = `[${q(pick(CREDS))}, ${q(pick(CREDS))}]`;
		return pick([`${inp(f)}.contains(${q(pick(CREDS))})`, `${inp(f)}.containsAny(${lit})`,
			`${lit}.containsAll(${inp(f)})`, `${inp(f)}.isEmpty()`, `${inp(f)} == ${lit}`]);
	}
	default: throw new Error('type');
	}
}

function atom(scope, st) {
	const all = fieldsOf(scope);
	const names = Object.keys(all);
	const k = rnd();
	if (k < 0.7 && names.length) {
		const f = pick(names);
		const occ = all[f];
		const ty = occ[0][1];
		const sameType = occ.every(([, t]) => t.t === ty.t);
		const inAll = occ.length === scope.length;
		const invalid = st.invalid && chance(0.3);
		const guardNeeded = ty.opt || !inAll || !sameType;
		let c = cmpOn(f, ty, invalid);
		if (guardNeeded && !(st.invalid && chance(0.3)))
			c = `${inp('')}`.slice(0, -1) + ` has ${f} && ${c}`;
		if (!sameType && !st.invalid) // guarded but typed differently across envs: keep to one action
			c = `action == Box::Action::${q(occ[0][0])} && ${c}`;
		return c;
	}
	if (k < 0.75) return pick(['true', 'false']);
	if (k < 0.82) return `action == Box::Action::${q(pick(scope))}`;
	if (k < 0.86) return `action in [Box::Action::${q(pick(scope))}, Box::Action::${q(pick(NAMES))}]`;
	if (k < 0.88) return pick(['principal == Box::Agent::"self"', 'resource == Box::Resource::"unused"', 'principal is Box::Agent']);
	if (k < 0.92) return pick(['ip("10.1.2.3").isInRange(ip("10.0.0.0/8"))', 'ip("::1").isLoopback()', 'ip("224.0.0.1").isMulticast()',
		'decimal("1.2345").lessThan(decimal("1.2346"))', 'decimal("-0.5").greaterThanOrEqual(decimal("0.0"))', 'ip("1.2.3.4").isIpv6()']);
	if (k < 0.95 && st.invalid) return pick([`${inp('nope')} == 1`, 'action == Box::Action::"fs:nope"', '[].isEmpty()', 'ip("300.1.1.1").isIpv4()']);
	if (k < 0.97) return `${inp('')}`.slice(0, -1) + ` has ${pick(['path', 'ip', 'arg1', 'tool', 'nope', 'operation'])}`;
	return `if ${atom(scope, st)} then ${atom(scope, st)} else ${atom(scope, st)}`;
}

// A test the rule index reads as a key: on one field F of the scope, the literals it may equal.
function keyed(scope) {
	const all = fieldsOf(scope);
	const names = Object.keys(all).filter((f) => {
		const occ = all[f];
		return occ.every(([, t]) => t.t === occ[0][1].t && t.e === occ[0][1].e) && ['String', 'Long', 'Bool', 'Enum'].includes(occ[0][1].t);
	});
	if (!names.length) return null;
	const f = pick(names);
	const occ = all[f];
	const ty = occ[0][1];
	const guard = ty.opt || occ.length !== scope.length;
	let t;
	switch (ty.t) {
	case 'String': {
		const k = rnd();
		if (k < 0.3) t = chance(0.5) ? `${inp(f)} == ${q(pick(STRS))}` : `${q(pick(STRS))} == ${inp(f)}`;
		else if (k < 0.5) t = `[${q(pick(STRS))}, ${q(pick(STRS))}].contains(${inp(f)})`;
		else if (k < 0.7) t = `${inp(f)} like ${q(pick(PREFIXES))}`;
		else t = `${inp(f)} == ${q(pick(STRS))} || ${inp(f)} like ${q(pick(PREFIXES))} || ${inp(f)} == ${q(pick(STRS))}`;
		break;
	}
	case 'Long': t = `${inp(f)} == ${pick(['0', '1', '80', '443', '2'])}`; break;
	case 'Bool': t = `${inp(f)} == ${pick(['true', 'false'])}`; break;
	default: t = `${inp(f)} == ${ty.e}::${q(pick(ENUMS[ty.e]))}`; break;
	}
	return guard ? `${inp('')}`.slice(0, -1) + ` has ${f} && (${t})` : t;
}

function expr(scope, st, depth) {
	if (depth <= 0 || chance(0.4)) return atom(scope, st);
	const k = rnd();
	const a = () => `(${expr(scope, st, depth - 1)})`;
	if (k < 0.4) return `${a()} && ${a()}`;
	if (k < 0.7) return `${a()} || ${a()}`;
	if (k < 0.85) return `!${a()}`;
	return `if ${a()} then ${a()} else ${a()}`;
}

function genRule(st) {
	const effect = chance(0.6) ? 'permit' : 'forbid';
	let scope;
	let actionText;
	const k = rnd();
	if (k < 0.6) {
		let a = pick(NAMES);
		if (a === 'fs:other') a = 'fs:read';
		scope = [a];
		actionText = `action == Box::Action::${q(a)}`;
	} else if (k < 0.9) {
		const a = pick(NAMES), b = pick(NAMES);
		scope = a === b ? [a] : [a, b];
		if (scope.length === 1 && a === 'fs:other') scope = ['fs:other', 'fs:read'];
		actionText = `action in [${scope.map((x) => `Box::Action::${q(x)}`).join(', ')}]`;
	} else {
		scope = NAMES;
		actionText = 'action';
	}
	const principal = pick(['principal', 'principal', 'principal == Box::Agent::"self"', 'principal is Box::Agent']);
	const resource = pick(['resource', 'resource', 'resource == Box::Resource::"unused"']);
	let text = `${effect} (${principal}, ${actionText}, ${resource})`;
	const clauses = scope === NAMES ? (chance(0.5) ? 0 : 1) : Math.floor(rnd() * 3);
	const key = !st.invalid && chance(0.5) ? keyed(scope) : null;
	if (key) {
		// an action test first (no target), the key, then maybe more
		let c = key;
		if (scope === NAMES && chance(0.5)) {
			const a = pick(NAMES);
			const k2 = keyed([a]);
			if (k2) c = `${chance(0.5) ? `action == Box::Action::${q(a)}` : `action in [Box::Action::${q(a)}, Box::Action::${q(pick(NAMES))}]`} && ${k2}`;
		}
		if (chance(0.5)) c = `${c} && (${expr(scope, st, 2)})`;
		text += ` when { ${c} }`;
	}
	for (let i = key ? 1 : 0; i < clauses; i++)
		text += ` ${chance(0.75) ? 'when' : 'unless'} { ${expr(scope, st, 3)} }`;
	return text + ';';
}

function genRequest() {
	const action = pick(NAMES);
	const input = {}, cinput = {};
	for (const [f, ty] of Object.entries(ACTIONS[action])) {
		if (ty.opt && chance(0.5)) continue;
		let v, cv;
		switch (ty.t) {
		case 'String': v = cv = pick(STRS); break;
		case 'Long': v = cv = pick(LONGS_REQ); break;
		case 'Bool': v = cv = chance(0.5); break;
		case 'Enum': v = pick(ENUMS[ty.e]); cv = { __entity: { type: ty.e, id: v } }; break;
		case 'Set': v = cv = CREDS.filter(() => chance(0.5)); break;
		default: throw new Error('type');
		}
		input[f] = v;
		cinput[f] = cv;
	}
	return { action, input, context: { input: cinput } };
}

fs.mkdirSync(workdir, { recursive: true });
const causes = {};
let valAgree = 0, valMismatch = 0, decAgree = 0, decMismatch = 0, refused = 0, reported = 0;
function report(msg) {
	if (reported++ < 15) console.log(`# ${msg.split('\n').join('\n#   ')}`);
}
const sorted = (a) => [...a].sort();

for (let n = 0; n < COUNT; n++) {
	const st = { invalid: chance(0.25) };
	const rules = [];
	// sometimes many rules, and the same rule twice: keys shared between rules
	const nr = chance(0.2) ? 5 + Math.floor(rnd() * 8) : 1 + Math.floor(rnd() * 4);
	for (let i = 0; i < nr; i++) rules.push(i > 0 && chance(0.1) ? rules[i - 1] : genRule(st));
	const policies = {};
	rules.forEach((r, i) => { policies[`policy_${i}`] = r; });
	const text = rules.join('\n') + '\n';
	const reqs = [];
	for (let i = 0; i < 8; i++) reqs.push(genRequest());

	const v = cedar.validate({ schema, policies: { staticPolicies: policies }, validationSettings: { mode: 'strict' } });
	if (v.type !== 'success') { report(`cedar validate failed: ${JSON.stringify(v.errors)}\n${text}`); valMismatch++; continue; }
	const cedarOk = v.validationErrors.length === 0;

	const pfile = path.join(workdir, 'p.dw');
	fs.writeFileSync(pfile, text);
	const input = reqs.map((r) => JSON.stringify({ action: r.action, input: r.input })).join('\n') + '\n';
	const res = spawnSync(boxctl, ['policy', 'eval', '--home', '/nonexistent-home', pfile, '-'], { input, encoding: 'utf8' });
	const oursOk = res.status === 0;
	if (res.status !== 0 && res.status !== 2) { report(`boxctl exited ${res.status}: ${res.stderr}\n${text}`); valMismatch++; continue; }
	if (cedarOk !== oursOk) {
		valMismatch++;
		report(`validation differs: cedar ${cedarOk ? 'accepts' : 'refuses'}, ours ${oursOk ? 'accepts' : 'refuses'}\n${text}` +
			`cedar: ${v.validationErrors.map((e) => e.error.message).join('; ')}\nours: ${res.stderr}`);
		continue;
	}
	valAgree++;
	if (!cedarOk) { refused++; continue; }
	const lines = res.stdout.trim().split('\n');
	reqs.forEach((r, i) => {
		const a = cedar.isAuthorized({
			principal: { type: 'Box::Agent', id: 'self' }, action: { type: 'Box::Action', id: r.action },
			resource: { type: 'Box::Resource', id: 'unused' }, context: r.context,
			policies: { staticPolicies: policies }, entities: [],
		});
		if (a.type !== 'success') { decMismatch++; report(`cedar isAuthorized failed: ${JSON.stringify(a.errors)}`); return; }
		const errs = sorted(a.response.diagnostics.errors.map((e) => e.policyId));
		const reason = sorted(a.response.diagnostics.reason);
		let want;
		if (errs.length) want = { verdict: 'deny', cause: 'error', rules: errs };
		else if (a.response.decision === 'allow') want = { verdict: 'permit', cause: 'permitted', rules: reason };
		else if (reason.length) want = { verdict: 'deny', cause: 'forbidden', rules: reason };
		else want = { verdict: 'deny', cause: 'no_match', rules: [] };
		let got;
		try { got = JSON.parse(lines[i]); } catch { got = { error: lines[i] }; }
		const same = got.verdict === want.verdict && got.cause === want.cause &&
			JSON.stringify(sorted(got.rules || [])) === JSON.stringify(want.rules);
		if (same) { decAgree++; causes[want.cause] = (causes[want.cause] || 0) + 1; }
		else {
			decMismatch++;
			report(`decision differs for ${JSON.stringify({ action: r.action, input: r.input })}\n${text}` +
				`cedar: ${JSON.stringify(want)}\nours:  ${lines[i]}`);
		}
	});
}
console.log(`# seed ${seedArg}, ${COUNT} policy sets`);
const line = (ok, msg) => console.log(`${ok ? 'ok' : 'not ok'} - ${msg}`);
line(valMismatch === 0, `differential validation: ${valAgree} policy sets agree with cedar-wasm (${refused} refused by both), ${valMismatch} differ`);
line(decMismatch === 0 && decAgree > 0, `differential decisions: ${decAgree} requests agree with cedar-wasm ${JSON.stringify(causes)}, ${decMismatch} differ`);
line(refused > 0 && refused < valAgree, `differential generator covers accepted and refused policy sets (${valAgree - refused} accepted, ${refused} refused)`);
if (valMismatch || decMismatch) process.exitCode = 1;
