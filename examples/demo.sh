#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# demo.sh — the demo box: generate box.ini from the template (grants must be
# absolute existing paths), validate it, and run the demo agent in a real box:
# two file reads (one denied), an allowed and a denied HTTPS request through
# box-gateway to a loopback server the demo starts (and stops at the end),
# three commands through the box's shell (a shell command, one the policy
# refuses, and git as a [tool.git] host program), an MCP server driven through
# its alias (box-mcpd: one permitted tools/call, two denied), then `boxctl log`
# with the decisions.
# Parts that later issues add say "not yet" instead of failing.
set -euo pipefail
BOX_BIN=${BOX_BIN:-build/bin}
BOX_BIN=$(cd "$BOX_BIN" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/box-demo-XXXXXX)
srv_pid=
cleanup() {
	if [ -n "$srv_pid" ]; then
		kill "$srv_pid" 2>/dev/null || true
		wait "$srv_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
servers=$here/../test/servers

mkdir -p "$work/project/out"
echo "hello from the project" >"$work/project/README.txt"
echo "SECRET=do-not-read" >"$work/project/.env"
cp "$here/policy.dw" "$work/policy.dw"
cp "$here/agent.py" "$work/agent.py"
cp "$here/notes_server.py" "$work/notes_server.py"
chmod 0755 "$work/agent.py"
sed -e "s|@WORK@|$work|g" "$here/box.ini.in" >"$work/box.ini"
# For the HTTPS part: a throwaway test CA (the box trusts it upstream through
# [gateway] upstream_ca; its server certificate names both hosts) and a hosts
# file naming the loopback server.
"$servers/mkca.sh" "$work/ca" api.demo.test other.demo.test
chmod 644 "$work/ca/ca.pem"
printf '127.0.0.1 api.demo.test other.demo.test\n' >"$work/hosts"

echo "== boxctl check -c box.ini"
"$BOX_BIN/boxctl" check -c "$work/box.ini"

if "$BOX_BIN/boxctl" policy check "$work/policy.dw" >/dev/null 2>&1; then
	echo "== boxctl policy eval (offline decisions)"
	printf '%s\n' \
		'{"action":"fs:read","input":{"path":"~/project/README.txt","operation":"read_content"}}' \
		'{"action":"shell:exec","input":{"command":"rm -rf /","program":"rm","arg1":"-rf","arg2":"/","arg_count":2,"cwd":"~"}}' |
		"$BOX_BIN/boxctl" policy eval --home "$work" "$work/policy.dw"
else
	echo "== boxctl policy eval: not yet (the policy engine is another issue)"
fi

if [ -x "$BOX_BIN/boxd" ] && [ -x "$BOX_BIN/box-gateway" ]; then
	# The loopback HTTPS server the agent reaches through box-gateway.
	python3 "$servers/httpd.py" --tls "$work/ca/server.pem" "$work/ca/server.key" \
		--port-file "$work/port" --log "$work/httpd.log" 2>"$work/httpd.err" &
	srv_pid=$!
	for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
	port=$(cat "$work/port")
	echo "== boxctl run (the agent reads one granted file, fails to read a denied one;"
	echo "   GETs https://api.demo.test:$port/echo (allowed), then /admin there and"
	echo "   https://other.demo.test:$port/echo (both denied); then runs bash -c with a"
	echo "   shell command (allowed), rm -rf out (refused) and git --version ([tool.git]);"
	echo "   then the MCP server notes: read_note (allowed), delete_note (a forbidden tool)"
	echo "   and read_note of the secret note (a rule on the tool's argument))"
	# No service: boxctl starts an embedded boxd for this one box; its state dir is
	# in the demo's directory ($XDG_STATE_HOME/box/demo), so the log is this run's.
	(cd "$work" && XDG_STATE_HOME="$work/state" BOX_SOCKET="$work/no-service.sock" \
		"$BOX_BIN/boxctl" run -c "$work/box.ini" -- "https://api.demo.test:$port/echo" \
		"https://api.demo.test:$port/admin" "https://other.demo.test:$port/echo")
	echo "== boxctl log demo (the gateway's decisions: the permitted GET, the denied ones;"
	echo "   box-shell's: the shell command and the files it read, the refused rm -rf, git's"
	echo "   exec check and its shell:spawn; box-mcpd's: the notes server's shell:spawn, each"
	echo "   mcp:call and the per-tool refinements of read_note)"
	(cd "$work" && XDG_STATE_HOME="$work/state" BOX_SOCKET="$work/no-service.sock" \
		"$BOX_BIN/boxctl" log demo)
else
	echo "== boxctl run: not yet (boxd, the sandbox and box-gateway are other issues)"
fi
