#!/usr/bin/env bash
# t-shell-demo.sh — `make demo`'s shell part (examples/demo.sh, issue 13 item 8): the agent's
# `bash -c` runs a shell command through box-shell (its output, exit 0), a command the demo
# policy refuses (rm -rf: 126 with the rule's message, nothing deleted) and git as the
# [tool.git] host program; `boxctl log demo` shows each of their decisions (source box-shell:
# shell:exec of the commands, fs:read of the file, the refused rm with no_rm_rf, git's exec
# check and its shell:spawn), and the disclosure shows the tool. (t-gw-demo.sh checks the
# gateway part of the same script.)
# Trusts: nothing; test code. Packets only to 127.0.0.1.
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
[ "$_tap_fail" -gt 0 ] && sed 's/^/#   /' "$out"
tap_done
