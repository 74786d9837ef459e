#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run.sh — differential test against Cedar itself: installs
# @cedar-policy/cedar-wasm into $BOX_BUILD/cedar-wasm with npm (once), then runs
# diff.mjs over DIFF_COUNT random policy sets (default 200; `make diff-long`
# and `make fuzz` run 5000). An unreachable registry is a failure, not a skip.
# Trusts: nothing; it is test code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
build=$(cd "${BOX_BUILD:-build}" && pwd)
boxctl=$build/bin/boxctl
[ -n "${BOX_BIN:-}" ] && boxctl=$(cd "$BOX_BIN" && pwd)/boxctl
version=4.13.0
prefix=$build/cedar-wasm
module=$prefix/node_modules/@cedar-policy/cedar-wasm/nodejs/cedar_wasm.js

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	not_ok "differential: node and npm are required (make deps)"
	tap_done
	exit 1
fi
if [ ! -f "$module" ] || ! grep -q "\"version\": \"$version\"" \
	"$prefix/node_modules/@cedar-policy/cedar-wasm/package.json" 2>/dev/null; then
	mkdir -p "$prefix"
	if npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
		"@cedar-policy/cedar-wasm@$version" >"$prefix/install.log" 2>&1 && [ -f "$module" ]; then
		ok "differential: installed @cedar-policy/cedar-wasm@$version"
	else
		not_ok "differential: npm install @cedar-policy/cedar-wasm@$version failed"
		sed 's/^/#   /' "$prefix/install.log" | tail -20
		tap_done
		exit 1
	fi
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node "$here/diff.mjs" "$module" "$boxctl" "${DIFF_COUNT:-200}" "${DIFF_SEED:-$(date +%s)}" "$work"
tap_done
