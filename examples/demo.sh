#!/usr/bin/env bash
# demo.sh — the demo box: generate box.ini from the template (grants must be
# absolute existing paths), validate it, and run the demo agent in a real box.
# Parts that later issues add say "not yet" instead of failing.
set -euo pipefail
BOX_BIN=${BOX_BIN:-build/bin}
BOX_BIN=$(cd "$BOX_BIN" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/box-demo-XXXXXX)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/project/out"
echo "hello from the project" >"$work/project/README.txt"
echo "SECRET=do-not-read" >"$work/project/.env"
cp "$here/policy.dw" "$work/policy.dw"
cp "$here/agent.py" "$work/agent.py"
chmod 0755 "$work/agent.py"
sed -e "s|@WORK@|$work|g" "$here/box.ini.in" >"$work/box.ini"

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

if [ -x "$BOX_BIN/boxd" ]; then
	echo "== boxctl run (the agent reads one granted file, fails to read a denied one)"
	# No service: boxctl starts an embedded boxd for this one box.
	(cd "$work" && BOX_SOCKET="$work/no-service.sock" "$BOX_BIN/boxctl" run -c "$work/box.ini")
else
	echo "== boxctl run: not yet (boxd and the sandbox are another issue)"
fi
