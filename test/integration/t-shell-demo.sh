#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-shell-demo.sh — `make demo`'s shell part (examples/demo.sh): the agent's
# `bash -c` runs a shell command through box-shell (its output, exit 0), a command the demo
# policy refuses (rm -rf: 126 with the rule's message, nothing deleted) and git as the
# [tool.git] host program; `boxctl log demo` shows each of their decisions (source box-shell:
# shell:exec of the commands, fs:read of the file, the refused rm with no_rm_rf, git's exec
# check and its shell:spawn), and the disclosure shows the tool. Its MCP part: the
# agent drives the alias /run/box/bin/notes as a harness would — initialize, a
# tools/list from which box-mcpd hid the forbidden tool, a permitted tools/call answered by the
# server, a forbidden tool and a call the per-tool argument rule denies (-32001 with each rule's
# message) — and `boxctl log demo` shows the server's shell:spawn, each mcp:call and the
# refinements of read_note. (t-gw-demo.sh checks the gateway part of the same script.)
# Trusts: nothing; test code. Packets only to 127.0.0.1.
# Serial: both demo tests run examples/demo.sh, whose box is named "demo"; `boxctl log demo`
# asks a running box of that name first, so the other demo's box, running beside it, would
# answer (its lines, not this run's).
# box-test: serial
. test/lib.sh
set -u

out=$(mktemp /tmp/box-t-shdemo.XXXXXX)
trap 'rm -f "$out"' EXIT
BOX_BIN=$BOX_BIN timeout -k 5 300 examples/demo.sh >"$out" 2>&1
rc=$?
check "demo.sh exits 0 (rc $rc)" test "$rc" = 0
check "demo: a shell command through box-shell: exit 0 and its output" \
	bash -c "grep -qx \"agent: bash -c 'grep -c project README.txt | wc -l' -> exit 0\" '$out' &&
		grep -A1 \"bash -c 'grep -c project\" '$out' | grep -qx 'agent:     1'"
check "demo: rm -rf refused by the policy: exit 126" \
	grep -qx "agent: bash -c 'rm -rf out' -> exit 126" "$out"
check "demo: … with the rule's message" \
	grep -q "^agent:     box-shell: .*policy denied this operation on 'rm' \[policy: no_rm_rf\]: recursive deletes are not allowed" "$out"
check "demo: git --version as [tool.git]: exit 0, git's output" \
	bash -c "grep -qx \"agent: bash -c 'git --version' -> exit 0\" '$out' && grep -qE '^agent:     git version [0-9]' '$out'"
check "demo: the disclosure lists the tool" grep -q "^box: tool git: /usr/bin/git" "$out"
log() { grep -qE "^[0-9T:.-]+Z $1\$" "$out"; }
check "demo: boxctl log: shell:exec grep permitted (shell_commands)" log "permit shell:exec grep shell_commands"
check "demo: boxctl log: shell:exec wc permitted" log "permit shell:exec wc shell_commands"
check "demo: boxctl log: fs:read of README.txt by the shell command" \
	log "permit fs:read /tmp/box-demo-[A-Za-z0-9]+/project/README.txt read_project"
check "demo: boxctl log: the refused rm (no_rm_rf)" log "deny shell:exec rm no_rm_rf"
check "demo: boxctl log: git's exec check" log "permit fs:read /usr/bin/git exec_git"
check "demo: boxctl log: git's shell:spawn" log "permit shell:spawn /usr/bin/git git"
check "demo: … and out/ is still there (rm never ran)" \
	grep -qx "agent: out/ is still there after the refused rm -rf: True" "$out"
mcp() { grep -qxF "agent: MCP notes: $1" "$out"; }
check "demo: MCP: initialize through the alias is answered by the server" mcp "initialize -> server notes-demo"
check "demo: MCP: tools/list shows read_note only (box-mcpd hid delete_note)" mcp "tools/list -> read_note"
check "demo: … and box-mcpd says why" \
	grep -q "box-mcpd\[[0-9]*\]: .*notes: tools/list: 2 tools, 1 hidden: delete_note (denied by the policy)" "$out"
check "demo: MCP: a permitted tools/call is answered by the server" \
	mcp 'tools/call read_note {"name": "todo"} -> ship the MCP demo'
check "demo: MCP: a forbidden tool is denied: -32001 with no_note_deletes's message" \
	mcp "tools/call delete_note {\"name\": \"todo\"} -> error -32001: policy denied this operation on 'notes/delete_note' [policy: no_note_deletes]: the agent may read notes, not delete them."
check "demo: MCP: the rule on read_note's argument denies the secret note: -32001" \
	mcp "tools/call read_note {\"name\": \"secret\"} -> error -32001: policy denied this operation on 'notes/read_note' [policy: secret_note]: the secret note stays secret."
check "demo: MCP: the server exits 0 when the agent closes its stdin" mcp "the server exited with status 0"
check "demo: the disclosure lists the MCP server" \
	grep -q "^box: mcp notes: /run/box/bin/notes runs /usr/bin/python3[.0-9]* /tmp/box-demo-[A-Za-z0-9]*/notes_server.py" "$out"
check "demo: boxctl log: the server's shell:spawn (notes_server)" \
	log "permit shell:spawn /usr/bin/python3[.0-9]* notes_server"
check "demo: boxctl log: mcp:call tools/list permitted" log "permit mcp:call notes/tools/list notes_calls"
check "demo: boxctl log: mcp:call read_note permitted (notes_calls)" log "permit mcp:call notes/read_note notes_calls"
check "demo: boxctl log: … and its refinement, no tool rule matched (permitted)" \
	log 'permit notes::Action::"read_note" notes/read_note -'
check "demo: boxctl log: mcp:call delete_note denied (no_note_deletes)" \
	log "deny mcp:call notes/delete_note no_note_deletes"
check "demo: boxctl log: the refinement of read_note secret denied (secret_note)" \
	log 'deny notes::Action::"read_note" notes/read_note secret_note'
[ "$_tap_fail" -gt 0 ] && sed 's/^/#   /' "$out"
tap_done
