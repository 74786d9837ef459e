#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-supervise-mcp.sh — a supervised stdio MCP server ([mcp.NAME] supervise = fs) in real
# boxes, as the caller and as boxtest: the agent is test/integration/mcp-harness.py, the
# server test/integration/mcp-test-server.py, whose grants hold the whole project; its
# readfile tool reads a permitted file, but not the `.env` a forbid names (the open is
# refused by the supervisor: PermissionError), and both decisions are lines of
# decisions.jsonl with source "supervisor". An unsupervised server of the same grants reads
# the `.env` (the control: the grant alone does not stop it).
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
set -u
SRC=$(pwd)
cd "$W" || exit 1

for p in box-mcpd box-shell; do
	if [ ! -x "$BOX_BIN/$p" ]; then
		not_ok "$p is built ($BOX_BIN/$p)"
		tap_done
		exit 1
	fi
done
cp "$SRC/test/integration/mcp-test-server.py" "$SRC/test/integration/mcp-harness.py" "$W/"
chmod 644 "$W/mcp-test-server.py" "$W/mcp-harness.py"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}

users=$(id -un)
boxtest_or_skip "supervised MCP servers as boxtest" && users="$users boxtest"

cat >"$W/pol.cedar" <<'EOF'
@id("all")
permit (principal, action, resource);
@id("no_env")
forbid (principal, action == Box::Action::"fs:read", resource)
when { context.input.path like "*.env" };
EOF
chmod 644 "$W/pol.cedar"

for u in $users; do
	D=$W/$u
	name=e2e-supmcp-$u
	mkdir -p "$D/proj" "$D/ctl" "$D/marks" "$D/state"
	echo proj-content >"$D/proj/p.txt"
	echo SECRET-TOKEN >"$D/proj/.env"
	{
		printf '[box]\nname = %s\npolicy = %s/pol.cedar\nstate_dir = %s/state/%s\n\n' \
			"$name" "$W" "$D" "$name"
		printf '[agent]\ncommand = /usr/bin/python3 %s/mcp-harness.py %s/steps\n' "$W" "$D"
		printf 'workspace = %s/proj\n\n' "$D"
		printf '[agent.filesystem]\nread_file = %s/mcp-harness.py\nread_file = %s/steps\n' "$W" "$D"
		for s in sup plain; do
			printf '\n[mcp.%s]\ntype = stdio\nalias = %s\n' "$s" "$s"
			printf 'command = /usr/bin/python3 %s/mcp-test-server.py --name %s --ctl %s/ctl --marks %s/marks\n' \
				"$W" "$s" "$D" "$D"
			[ "$s" = sup ] && printf 'supervise = fs\n'
			printf '\n[mcp.%s.filesystem]\nread_file = %s/mcp-test-server.py\nread = %s/ctl\nwrite = %s/marks\nread = %s/proj\n' \
				"$s" "$W" "$D" "$D" "$D"
		done
	} >"$D/box.ini"
	cat >"$D/steps" <<EOF
open s sup
init s s_init
list s s_list 1
req s s_ok tools/call {"name": "readfile", "arguments": {"path": "$D/proj/p.txt"}}
req s s_env tools/call {"name": "readfile", "arguments": {"path": "$D/proj/.env"}}
eof s
wait s s_end
open p plain
init p p_init
list p p_list 1
req p p_env tools/call {"name": "readfile", "arguments": {"path": "$D/proj/.env"}}
eof p
wait p p_end
EOF
	chown -R "$u:" "$D"
	chmod 755 "$D"
	as_user "$u" "timeout -k 5 240 '$RB/boxctl' run -c '$D/box.ini'" >"$D/out" 2>"$D/err"
	rc=$?
	check "$u: the box runs to its end (rc $rc)" test "$rc" = 0
	[ "$rc" = 0 ] || sed 's/^/#   /' "$D/err" | head -20
	txt() {
		python3 - "$D/out" "$1" <<'PY'
import json, sys
for l in open(sys.argv[1], errors="replace"):
    tag, _, rest = l.rstrip("\n").partition(" ")
    if tag == sys.argv[2]:
        try:
            print(json.loads(rest)["reply"]["result"]["content"][0]["text"])
        except (ValueError, KeyError, IndexError, TypeError):
            print("unparsed: " + rest[:200])
        break
PY
	}
	v=$(txt s_ok)
	check "$u: the supervised server reads a permitted file ($v)" test "$v" = "content:proj-content"
	v=$(txt s_env)
	check "$u: … not the .env a forbid names ($v)" test "$v" = "error:PermissionError"
	v=$(txt p_env)
	check "$u: the unsupervised server of the same grants reads it (the control: $v)" \
		test "$v" = "content:SECRET-TOKEN"
	dec=$D/state/$name/decisions.jsonl
	for want in "fs:read permit /proj/p.txt" "fs:read deny /proj/.env"; do
		set -- $want
		check "$u: decisions.jsonl: $1 $2 …$3 (source supervisor)" python3 - "$dec" "$1" "$2" "$3" <<'PY'
import json, sys
path, action, verdict, suffix = sys.argv[1:5]
for l in open(path):
    d = json.loads(l)
    if d.get("record") or d.get("source") != "supervisor":
        continue
    if d.get("action") == action and d.get("verdict") == verdict and \
            d.get("input", {}).get("path", "").endswith(suffix):
        sys.exit(0)
sys.exit(1)
PY
	done
done
tap_done
