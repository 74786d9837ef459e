// SPDX-License-Identifier: Apache-2.0
// supervise-agent.js — a node agent of test/integration/t-supervise-agent.sh, run supervised
// ([agent] supervise = fs) in the project directory: node's own reads and writes (libuv's
// thread pool for the asynchronous ones), each line KEY=VALUE ("ok…" or "error-CODE").
// Trusts: nothing; test code.
'use strict';
const fs = require('fs');

function attempt(key, fn) {
	try {
		const v = fn();
		console.log(`${key}=ok${v === undefined ? '' : ':' + v}`);
	} catch (e) {
		console.log(`${key}=error-${e.code}`);
	}
}

attempt('read_permitted', () => fs.readFileSync('p.txt', 'utf8').trim());
attempt('read_env', () => fs.readFileSync('.env', 'utf8').trim());
attempt('write_permitted', () => fs.writeFileSync('w/node-out.txt', 'node-written'));
attempt('read_back', () => fs.readFileSync('w/node-out.txt', 'utf8'));
attempt('write_refused', () => fs.writeFileSync('ro/node.txt', 'nope'));
attempt('listdir', () => fs.readdirSync('ls').sort().join(','));
fs.promises.readFile('.env', 'utf8').then(
	(v) => console.log('async_read_env=ok:' + v.trim()),
	(e) => console.log('async_read_env=error-' + e.code));
