#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-shell-compat.sh — what coding agents' shells do that box-shell must do as bash does, in
# real boxes (as the caller and as boxtest; docs/box-shell.8.md "host programs", box-sh(1)):
#   exec -a NAME / -l / -c: the host program (a [tool.python3]) sees NAME, -NAME, no
#     environment — also inside a function in a pipeline (Claude Code's `grep` function:
#     `exec -a ugrep BINARY …` under `| head`), and a subshell; policy decides the program,
#     never NAME; a bad option is bash's usage error (2);
#   a [tool.NAME] whose command lies in the agent's noexec grants runs as that tool: ./gradlew,
#     node_modules/.bin/jest (a symlink to ../jest/bin/jest.js: the table names the link, box
#     matches the canonical file) by its relative path and through PATH; `test -x` agrees; a
#     workspace script no table names gets 126 with the [tool.NAME] line, a file without an x
#     bit the kernel's "Permission denied";
#   a host program no [tool]/exec entry selects gets 126 and the line to add before any
#     decision (awk → mawk, which the policy does not permit: no shell:spawn is decided);
#   a command not found inside a pipeline is reported on stderr (127);
#   bash -c 'set -u; echo $x' exits 127 as bash 5.2, sh -c 2 as dash; ${x?} ${x:?} likewise.
#   docs/box-policy.5.md's one_push_per_10m, as the manual writes it: the first push runs, the
#     second one is refused.
#   `boxctl run -q`: no daemon's info line on the user's terminal (box-mcpd, box-gateway,
#     box-shell, box-policyd: each gets -q from boxd), with an [mcp] server declared.
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
. test/integration/lib-shell.sh
set -u
# the manual's rule, verbatim (its first line to the end of the rule)
cp test/integration/mcp-test-server.py "$W/mcp-test-server.py" && chmod 644 "$W/mcp-test-server.py"
push_rule=$(awk '/^@id\("one_push_per_10m"\)/ { p = 1 } p { print } p && /};$/ { exit }' docs/box-policy.5.md)
cd "$W"

require_shell_built
boxtest_or_skip "shell compatibility as boxtest" || :
awk_path=$(readlink -f "$(command -v awk)")
py_path=$(readlink -f /usr/bin/python3)

for u in $(shell_users); do
	D=$(user_dir "$u")
	P=$D/proj
	name=e2e-cp-$u
	mkdir -p "$P/node_modules/jest/bin" "$P/node_modules/.bin" "$D/steps"
	printf '#!/bin/sh\necho "gradlew-ran $*"\n' >"$P/gradlew"
	printf '#!/bin/sh\necho "jest-ran $*"\n' >"$P/node_modules/jest/bin/jest.js"
	ln -s ../jest/bin/jest.js "$P/node_modules/.bin/jest"
	printf '#!/bin/sh\necho unlisted-ran\n' >"$P/unlisted.sh"
	printf '#!/bin/sh\necho no-x-bit-ran\n' >"$P/nox.sh"
	chmod 755 "$P/gradlew" "$P/node_modules/jest/bin/jest.js" "$P/unlisted.sh"
	chmod 644 "$P/nox.sh"
	printf 'needle-1\nneedle-2\nhay\n' >"$P/hay.txt"
	# Every action but shell:spawn; spawns only of the tools' programs (so awk's mawk is
	# denied by default: its 126 must name the table to add, not the policy).
	cat >"$D/compat.cedar" <<EOF
@id("all_but_spawn")
permit (principal, action, resource) when { action != Box::Action::"shell:spawn" };

@id("spawn_tools")
permit (principal, action == Box::Action::"shell:spawn", resource)
when { ["$py_path", "$P/gradlew", "$P/node_modules/jest/bin/jest.js"].contains(context.input.program_path) };

@id("no_spawn_as_ugrep") @description("the program decides, not the name")
forbid (principal, action == Box::Action::"shell:spawn", resource)
when { context.input.program == "ugrep" };

$push_rule
EOF
	orig='import sys; print(sys.orig_argv[0])'
	cat >"$D/steps/compat.py" <<EOF
[
 ("exec_a", ["bash", "-c", "exec -a ugrep python3 -c '$orig'"]),
 ("exec_a_attached", ["bash", "-c", "exec -augrep2 python3 -c '$orig'"]),
 ("exec_l", ["bash", "-c", "exec -l python3 -c '$orig'"]),
 ("exec_la", ["bash", "-c", "exec -l -a name python3 -c '$orig'"]),
 ("exec_c", ["bash", "-c", "export E2E_X=1; E2E_Y=2 exec -c python3 -c 'print(repr(open(\"/proc/self/environ\", \"rb\").read()))'"]),
 ("exec_plain", ["bash", "-c", "exec python3 -c '$orig'; echo not-reached"]),
 ("exec_func_pipe", ["bash", "-c", "grep() { exec -a ugrep python3 -c 'import sys\nfor l in open(sys.argv[2]):\n  print(sys.orig_argv[0] + \":\" + l.strip()) if sys.argv[1] in l else None' \"\$@\"; }; grep needle hay.txt | head -1"]),
 ("exec_subshell", ["bash", "-c", "(exec -a sub python3 -c '$orig'); echo after=\$?"]),
 ("exec_bad_option", ["bash", "-c", "exec -x python3; echo after=\$?"]),
 ("exec_a_missing", ["bash", "-c", "exec -a; echo after=\$?"]),
 ("exec_no_command", ["bash", "-c", "exec -a foo 2>/dev/null; echo to-null >&2; echo after=\$?"]),
 ("gradlew", ["bash", "-c", "./gradlew build --offline"]),
 ("push1", ["bash", "-c", "./gradlew push"]),
 ("push2", ["bash", "-c", "./gradlew push --force"]),
 ("gradlew_test_x", ["bash", "-c", "test -x ./gradlew && echo is-x; test -x nox.sh || echo nox-not-x"]),
 ("jest_rel", ["bash", "-c", "node_modules/.bin/jest --ci"]),
 ("jest_path", ["bash", "-c", "PATH=\$PWD/node_modules/.bin:\$PATH; jest --watch=false"]),
 ("jest_type", ["bash", "-c", "PATH=\$PWD/node_modules/.bin:\$PATH; type jest"]),
 ("unlisted", ["bash", "-c", "./unlisted.sh"]),
 ("nox", ["bash", "-c", "./nox.sh"]),
 ("awk", ["bash", "-c", "awk 1 hay.txt"]),
 ("nf_pipe", ["bash", "-c", "e2e-no-such-cmd | head -1; echo rc=\${PIPESTATUS[0]}"]),
 ("nf_mid", ["bash", "-c", "echo x | e2e-no-such-mid | cat"]),
 ("u_bash", ["bash", "-c", "set -u; echo \$e2e_unset; echo not-reached"]),
 ("u_sh", ["sh", "-c", "set -u; echo \$e2e_unset; echo not-reached"]),
 ("q_bash", ["bash", "-c", "echo \${e2e_unset?gone}; echo not-reached"]),
 ("q_sh", ["dash", "-c", "x=; echo \${x:?empty}; echo not-reached"]),
 ("ro_bash", ["bash", "-c", "readonly r=1; r=2; echo not-reached"]),
 ("ro_sh", ["sh", "-c", "readonly r=1; r=2; echo not-reached"]),
]
EOF
	cat >"$D/box.ini" <<EOF
[box]
name = $name
state_dir = $D/state/$name
policy = compat.cedar
timeout = 150s

[agent]
command = $W/agent.py $D/steps/compat.py
workspace = $P

[agent.env]
$(agent_env)

[agent.filesystem]
write = $P
read = $D/steps

[tool.python3]
command = /usr/bin/python3
[tool.python3.filesystem]
read = $P

[tool.gradlew]
command = $P/gradlew
[tool.gradlew.filesystem]
write = $P

[tool.jest]
command = $P/node_modules/.bin/jest
[tool.jest.filesystem]
read = $P

[mcp.echo]
type = stdio
alias = mcp-echo
command = /usr/bin/python3 $W/mcp-test-server.py --name echo
[mcp.echo.filesystem]
read_file = $W/mcp-test-server.py
EOF
	chown -R "$u:" "$D"
	chmod 644 "$D/box.ini" "$D/compat.cedar"
	out=$D/compat.out err=$D/compat.err
	box_run "$u" "$out" "$err" -q -c "$D/box.ini"
	rc=$?
	check "$u: the box runs to its end (rc $rc)" test "$rc" = 0
	check "$u: the agent ran every step" grep -qx "@@ agent done" "$out"
	if [ "$rc" != 0 ]; then head -20 "$err" | sed 's/^/#   /'; fi
	daemon_lines=$(grep -E '^box-(mcpd|gateway|shell|policyd)\[' "$err" | head -3)
	check "$u: -q: no daemon's info line on stderr${daemon_lines:+ ($daemon_lines)}" test -z "$daemon_lines"
	cs() { check_step "$u: $1" "$out" "$2" "${@:3}"; }

	# exec -a / -l / -c
	cs "exec -a ugrep python3: the tool sees argv[0] = ugrep" exec_a out_is "$out" exec_a ugrep
	cs "exec -augrep2 (attached): ugrep2" exec_a_attached out_is "$out" exec_a_attached ugrep2
	cs "exec -l: argv[0] = -python3" exec_l out_is "$out" exec_l -python3
	cs "exec -l -a name: -name" exec_la out_is "$out" exec_la -name
	cs "exec -c: no environment at all (not even what the box composes; the kernel's view)" exec_c \
		out_is "$out" exec_c "b''"
	cs "exec CMD: the name as typed, and the shell ends" exec_plain out_is "$out" exec_plain python3
	cs "Claude Code's grep function (exec -a ugrep … | head -1) finds the match" exec_func_pipe \
		out_is "$out" exec_func_pipe "ugrep:needle-1"
	cs "… with nothing on stderr" exec_func_pipe test -z "$(step_err "$out" exec_func_pipe)"
	cs "(exec -a sub …) in a subshell, the script goes on" exec_subshell \
		out_is "$out" exec_subshell "$(printf 'sub\nafter=0')"
	cs "exec -x: bash's usage error, status 2" exec_bad_option \
		bash -c "[ '$(step_out "$out" exec_bad_option)' = after=2 ] && grep -q 'exec: -x: invalid option' <<<\"\$1\" && grep -q '^exec: usage: exec \[-cl\]' <<<\"\$1\"" _ "$(step_err "$out" exec_bad_option)"
	cs "exec -a without a name: 2" exec_a_missing out_is "$out" exec_a_missing after=2
	cs "exec -a NAME without a command: its redirections stay" exec_no_command \
		bash -c "[ '$(step_out "$out" exec_no_command)' = after=0 ] && [ -z \"\$1\" ]" _ "$(step_err "$out" exec_no_command)"
	dj=$D/state/$name/decisions.jsonl
	check "$u: decisions: the spawn is decided as python3 (program), not as ugrep" \
		python3 - "$dj" "$py_path" <<'PY'
import json, sys
ok = False
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d.get("record") or d.get("action") != "shell:spawn":
        continue
    i = d.get("input", {})
    if i.get("program") == "ugrep":
        sys.exit(1)
    if i.get("program") == "python3" and i.get("command", "").startswith("python3 -c") and d.get("verdict") == "permit":
        ok = True
sys.exit(0 if ok else 1)
PY

	# [tool.NAME] commands inside the agent's noexec grants
	cs "./gradlew runs as [tool.gradlew]" gradlew out_is "$out" gradlew "gradlew-ran build --offline"
	cs "test -x ./gradlew (noexec grant, mode 755): true; a 644 file: false" gradlew_test_x \
		out_is "$out" gradlew_test_x "$(printf 'is-x\nnox-not-x')"
	cs "node_modules/.bin/jest (a symlink) runs as [tool.jest]" jest_rel out_is "$out" jest_rel "jest-ran --ci"
	cs "… and as jest through PATH" jest_path out_is "$out" jest_path "jest-ran --watch=false"
	cs "type jest: a box tool (tool.jest)" jest_type out_has "$out" jest_type "box tool \(tool\.jest\)"
	cs "a workspace script no table names: 126" unlisted rc_is "$out" unlisted 126
	cs "… the message names the [tool.NAME] line to add" unlisted \
		err_has "$out" unlisted "is no box tool: add \[tool\.unlisted\.sh\] with command = \"$P/unlisted\.sh\""
	cs "a file without an x bit: 126 Permission denied" nox \
		bash -c "[ '$(step_rc "$out" nox)' = 126 ] && grep -q 'Permission denied' <<<\"\$1\"" _ "$(step_err "$out" nox)"
	check "$u: … and neither ran" bash -c "! grep -q -- '-ran' <<<\"\$1\"" _ "$(step_out "$out" unlisted; step_out "$out" nox)"

	# the manual's temporal example in a real box
	check "$u: docs/box-policy.5.md's one_push_per_10m was found" grep -q "formerly within 10m" <<<"$push_rule"
	cs "one_push_per_10m: the first push runs" push1 out_is "$out" push1 "gradlew-ran push"
	cs "… the second one, a moment later, is refused (126, its description)" push2 \
		bash -c "[ '$(step_rc "$out" push2)' = 126 ] && grep -q 'one push every ten minutes' <<<\"\$1\"" _ "$(step_err "$out" push2)"

	# a host program no table selects: its 126 before any decision
	cs "awk ($awk_path, no [tool]): 126" awk rc_is "$out" awk 126
	cs "… saying which [tool.NAME] to add, not a policy denial" awk \
		bash -c "grep -qF 'is no box tool: add [tool.${awk_path##*/}] with command = \"$awk_path\"' <<<\"\$1\" && ! grep -qi 'polic' <<<\"\$1\"" _ "$(step_err "$out" awk)"
	check "$u: decisions: neither shell:spawn nor fs:read (exec) of $awk_path was decided" \
		python3 - "$dj" "$awk_path" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    i = d.get("input", {})
    if i.get("program") == "awk" or sys.argv[2] in (i.get("path"), i.get("program_path")):
        sys.exit(1)
PY

	# command not found in a pipeline
	cs "not found as a pipeline's first stage: 127 in PIPESTATUS" nf_pipe out_is "$out" nf_pipe rc=127
	cs "… reported on stderr" nf_pipe err_has "$out" nf_pipe "e2e-no-such-cmd: command not found"
	cs "not found mid-pipeline: reported on stderr" nf_mid err_has "$out" nf_mid "e2e-no-such-mid: command not found"

	# fatal errors: bash -c 127, sh/dash -c 2
	cs "bash -c 'set -u; echo \$x': 127 (bash 5.2)" u_bash \
		bash -c "[ '$(step_rc "$out" u_bash)' = 127 ] && [ -z '$(step_out "$out" u_bash)' ]"
	cs "… saying 'unbound variable'" u_bash err_has "$out" u_bash "e2e_unset: unbound variable"
	cs "sh -c 'set -u; echo \$x': 2 (dash)" u_sh \
		bash -c "[ '$(step_rc "$out" u_sh)' = 2 ] && [ -z '$(step_out "$out" u_sh)' ]"
	cs "bash -c '\${x?gone}': 127" q_bash rc_is "$out" q_bash 127
	cs "dash -c '\${x:?empty}': 2" q_sh rc_is "$out" q_sh 2
	cs "bash -c readonly assignment: 1" ro_bash rc_is "$out" ro_bash 1
	cs "sh -c readonly assignment: 2" ro_sh rc_is "$out" ro_sh 2
	check "$u: nothing of the box is left (box-shell)" no_shell_left
done
tap_done
